//! The TCP sender/receiver machinery shared by every window-based controller:
//! byte sequence space, ACK clocking, fast retransmit and NewReno fast recovery
//! with partial ACKs (RFC 5681 section 3.2, RFC 6582, "Slow-but-Steady" timer variant
//! or, as an option, "Impatient"), optional limited transmit (RFC 3042),
//! retransmission timeout (RFC 6298: SRTT/RTTVAR, minimum RTO, exponential
//! backoff, Karn's rule), and cumulative ACKs with optional delayed ACKs
//! (RFC 5681 section 4.2). No SACK. Optionally (`TcpParams::handshake`) a
//! connection opens with a SYN / SYN-ACK exchange as in ns-3 (RFC 9293 section
//! 3.5): the SYN is timed from `initial_rto` with backoff, and the SYN-ACK gives
//! the first RTT sample; the sender's final ACK of the handshake is not modelled
//! (its first data segment follows at once). Without it, data flows from the
//! first instant.
//!
//! Both endpoints of one connection live in one `Tcp` value; the simulator moves
//! the packets between them. Timers are deadlines that the simulator turns into
//! events lazily (`rto_deadline`, `delack_deadline`).
use super::cc::{AckEvent, CcState, CongestionControl, Controller};
use crate::engine::SimTime;
use crate::packet::{Packet, ACK, RETX, SYN};
use crate::scenario::TcpParams;

/// Packets a call wants sent, in order.
pub type TcpOutput = Vec<Packet>;

/// Clock granularity G of RFC 6298 (rule 2.3).
const CLOCK_G: f64 = 1e6;

/// One connection: sender state and receiver state.
#[derive(Clone, Debug)]
pub struct Tcp {
    pub uid: u32,
    pub slot: u32,
    /// Bytes to transfer (u64::MAX: a long-lived flow that always has data).
    pub size: u64,
    pub fwd_route: u16,
    pub rev_route: u16,
    // --- sender
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub cc: Controller,
    pub st: CcState,
    dupacks: u32,
    pub in_recovery: bool,
    recover: Option<u64>,
    /// A partial ACK has already restarted the timer in this recovery (RFC 6582 "Impatient").
    partial_ack_seen: bool,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    pub rto: SimTime,
    timed_out_since_ack: bool,
    pub rto_deadline: Option<SimTime>,
    pub rto_event: Option<SimTime>,
    pub retransmits: u32,
    pub timeouts: u32,
    /// The SYN-ACK has arrived (from the start without a handshake); no data before.
    pub established: bool,
    // --- receiver
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    unacked: u32,
    echo_ts: SimTime,
    echo_retx: bool,
    echo_pending: bool,
    pub delack_deadline: Option<SimTime>,
    pub delack_event: Option<SimTime>,
}

impl Tcp {
    /// A connection at sequence 0; `open` starts it.
    pub fn new(uid: u32, slot: u32, size: u64, fwd_route: u16, rev_route: u16, cc: Controller, p: &TcpParams) -> Tcp {
        let mss = p.mss as u64;
        Tcp {
            uid,
            slot,
            size,
            fwd_route,
            rev_route,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cc,
            st: CcState { cwnd: p.initial_window as u64 * mss, ssthresh: u64::MAX, mss },
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_ack_seen: false,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: p.initial_rto,
            timed_out_since_ack: false,
            rto_deadline: None,
            rto_event: None,
            retransmits: 0,
            timeouts: 0,
            established: !p.handshake,
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            echo_ts: SimTime::ZERO,
            echo_retx: false,
            echo_pending: false,
            delack_deadline: None,
            delack_event: None,
        }
    }

    /// The sender has every byte acknowledged.
    #[inline]
    pub fn sender_done(&self) -> bool {
        self.snd_una >= self.size
    }

    /// The receiver holds every byte.
    #[inline]
    pub fn receiver_done(&self) -> bool {
        self.rcv_nxt >= self.size
    }

    #[inline]
    fn seg_len(&self, seq: u64, p: &TcpParams) -> u64 {
        (p.mss as u64).min(self.size - seq)
    }

    fn send_segment(&mut self, seq: u64, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        let len = self.seg_len(seq, p);
        let retx = seq < self.snd_max;
        if retx {
            self.retransmits += 1;
        }
        out.push(Packet {
            slot: self.slot,
            uid: self.uid,
            seq,
            ts: now,
            len: len as u32,
            size: len as u32 + p.header,
            route: self.fwd_route,
            hop: 0,
            flags: if retx { RETX } else { 0 },
        });
        self.snd_max = self.snd_max.max(seq + len);
        // RFC 6298 rule 5.1: start the timer when data is sent and it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// The flow arrives: send a SYN if the connection needs a handshake, data otherwise.
    pub fn open(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        if self.established {
            self.try_send(now, p, out);
        } else {
            self.send_syn(now, false, p, out);
        }
    }

    /// A SYN (header only) on the data route, timed like a segment: RFC 6298
    /// rules 5.1 and 5.6, with `initial_rto` before any sample (rule 2.1).
    fn send_syn(&mut self, now: SimTime, retx: bool, p: &TcpParams, out: &mut TcpOutput) {
        if retx {
            self.retransmits += 1;
        }
        out.push(Packet {
            slot: self.slot,
            uid: self.uid,
            seq: 0,
            ts: now,
            len: 0,
            size: p.header,
            route: self.fwd_route,
            hop: 0,
            flags: SYN | if retx { RETX } else { 0 },
        });
        self.rto_deadline = Some(now + self.rto);
    }

    /// A SYN-ACK reaches the sender: the connection is established and data may
    /// flow (initial window). The SYN-ACK echoes the SYN's send time, so it gives
    /// the first RTT sample (RFC 6298 rule 2.2), unless it answers a resent SYN
    /// (Karn's rule; the backed-off RTO then stays until a data sample, as in ns-3).
    /// A duplicate SYN-ACK, answering an earlier copy of a resent SYN, is ignored.
    pub fn on_synack(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        if self.established {
            return;
        }
        self.established = true;
        self.rto_deadline = None; // the SYN is acknowledged (rule 5.2)
        if pkt.flags & RETX == 0 {
            self.rtt_sample(now - pkt.ts, p);
        }
        self.try_send(now, p, out);
    }

    /// Send new (or, after a timeout, resent) segments while the window allows.
    pub fn try_send(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        while self.snd_nxt < self.size {
            let len = self.seg_len(self.snd_nxt, p);
            // Send window: the smaller of cwnd and the receiver's window (RFC 5681 section 2).
            if self.snd_nxt + len > self.snd_una + self.st.cwnd.min(p.receive_window) {
                break;
            }
            self.send_segment(self.snd_nxt, now, p, out);
            self.snd_nxt += len;
        }
    }

    /// FlightSize for the ssthresh rules (RFC 5681 eq. 4), never more than cwnd.
    ///
    /// After a long NewReno recovery the cumulative ACK can sit at an old hole while
    /// thousands of later segments have been delivered; snd_max - snd_una then
    /// counts data long gone from the network, and halving it would set ssthresh
    /// far above anything the path ever carried. Capping by cwnd (what Linux
    /// halves) keeps the rule's intent: half of what the sender recently had out.
    #[inline]
    fn flight_for_ssthresh(&self) -> u64 {
        (self.snd_max - self.snd_una).min(self.st.cwnd)
    }

    /// RTT sample R (RFC 6298 section 2).
    fn rtt_sample(&mut self, r: SimTime, p: &TcpParams) {
        let r = r.0 as f64;
        if !self.has_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = self.srtt + CLOCK_G.max(4.0 * self.rttvar);
        self.rto = SimTime(rto as u64).max(p.min_rto).min(p.max_rto);
    }

    /// Smoothed RTT in seconds (None before the first sample).
    pub fn srtt_secs(&self) -> Option<f64> {
        self.has_rtt.then(|| self.srtt * 1e-9)
    }

    /// An ACK reaches the sender.
    pub fn on_ack(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        let ack = pkt.seq.min(self.snd_max);
        let mss = self.st.mss;
        if ack > self.snd_una {
            let mut restart_timer = true;
            let acked = ack - self.snd_una;
            let flight = self.snd_max - self.snd_una;
            // Karn's rule: no sample from an ACK echoing a retransmitted segment.
            let rtt = if pkt.flags & RETX == 0 { Some(now - pkt.ts) } else { None };
            if let Some(r) = rtt {
                self.rtt_sample(r, p);
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.timed_out_since_ack = false;
            if self.in_recovery {
                if self.recover.is_some_and(|r| ack >= r) {
                    // Full ACK: leave recovery with cwnd = ssthresh (RFC 6582 step 3, option 2).
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.st.cwnd = self.st.ssthresh.max(mss);
                } else {
                    // Partial ACK (RFC 6582 step 4): retransmit the first unacknowledged
                    // segment, deflate cwnd by the newly acked amount, add back one SMSS.
                    // The "Impatient" variant (section 4) restarts the timer on the first
                    // partial ACK only, so a long recovery ends in a timeout.
                    restart_timer = !(p.impatient && self.partial_ack_seen);
                    self.partial_ack_seen = true;
                    self.send_segment(self.snd_una, now, p, out);
                    let mut cwnd = self.st.cwnd.saturating_sub(acked);
                    if acked >= mss {
                        cwnd += mss;
                    }
                    self.st.cwnd = cwnd.max(mss);
                }
            } else {
                self.dupacks = 0;
                let ev = AckEvent { now, bytes_acked: acked, rtt, flight };
                self.cc.on_ack(&mut self.st, &ev);
            }
            // RFC 6298 rules 5.2 and 5.3.
            if self.snd_una >= self.snd_max {
                self.rto_deadline = None;
            } else if restart_timer {
                // Every ACK of new data restarts the timer, partial ACKs included
                // (RFC 6582's "Slow-but-Steady" variant, as Linux does), unless
                // `impatient` (ns-3's choice) holds it after the first partial ACK.
                self.rto_deadline = Some(now + self.rto);
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                // Each further duplicate ACK: a segment has left the network (RFC 6582 step 3 / RFC 5681).
                self.st.cwnd += mss;
            } else if self.dupacks == p.dupack_threshold && self.recover.is_none_or(|r| ack > r) {
                // Fast retransmit (RFC 5681 section 3.2 steps 2-4; RFC 6582 step 2).
                let flight = self.flight_for_ssthresh();
                self.st.ssthresh = self.cc.on_congestion_event(&self.st, flight);
                self.recover = Some(self.snd_max);
                self.in_recovery = true;
                self.partial_ack_seen = false;
                self.send_segment(self.snd_una, now, p, out);
                self.st.cwnd = self.st.ssthresh + p.dupack_threshold as u64 * mss;
            } else if p.limited_transmit && self.dupacks < p.dupack_threshold && self.snd_nxt == self.snd_max {
                // Limited transmit (RFC 3042 section 2): one previously unsent segment
                // per duplicate ACK, while FlightSize stays within cwnd + dupacks*SMSS
                // (at most cwnd + 2*SMSS) and the receiver's window allows; cwnd is unchanged.
                let seq = self.snd_nxt;
                if seq < self.size {
                    let len = self.seg_len(seq, p);
                    let end = seq + len - self.snd_una;
                    if end <= self.st.cwnd + self.dupacks as u64 * mss && end <= p.receive_window {
                        self.send_segment(seq, now, p, out);
                        self.snd_nxt += len;
                    }
                }
            }
        }
        self.try_send(now, p, out);
    }

    /// The retransmission timer expired (RFC 6298 section 5, RFC 5681 eq. 4).
    pub fn on_rto(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOutput) {
        self.rto_deadline = None;
        if !self.established {
            // The SYN or its SYN-ACK was lost: back off (rule 5.5) and resend the
            // SYN, flagged for Karn's rule. No window to reduce: no data is out.
            self.timeouts += 1;
            self.rto = SimTime(self.rto.0.saturating_mul(2)).min(p.max_rto);
            self.send_syn(now, true, p, out);
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        self.timeouts += 1;
        // ssthresh is reduced once per window of data: not again on a repeated
        // timeout (RFC 5681 section 3.1), nor on a timeout during fast recovery,
        // whose entry already halved it. There cwnd is inflated by the duplicate
        // ACKs and FlightSize counts every segment sent since the first hole,
        // delivered or not; halving either would set ssthresh above anything the
        // path carried (Linux's tcp_enter_loss keeps it likewise).
        let flight = self.flight_for_ssthresh();
        let already_reduced = self.timed_out_since_ack || self.in_recovery;
        self.st.ssthresh = self.cc.on_timeout(&self.st, flight, already_reduced);
        self.timed_out_since_ack = true;
        self.st.cwnd = self.st.mss; // loss window
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(self.snd_max);
        self.snd_nxt = self.snd_una; // go back N
        self.rto = SimTime(self.rto.0.saturating_mul(2)).min(p.max_rto); // rule 5.5
        self.try_send(now, p, out);
    }

    fn send_ack(&mut self, p: &TcpParams, out: &mut TcpOutput) {
        out.push(Packet {
            slot: self.slot,
            uid: self.uid,
            seq: self.rcv_nxt,
            ts: self.echo_ts,
            len: 0,
            size: p.header,
            route: self.rev_route,
            hop: 0,
            flags: ACK | if self.echo_retx { RETX } else { 0 },
        });
        self.unacked = 0;
        self.echo_pending = false;
        self.delack_deadline = None;
    }

    /// A SYN reaches the receiver: answer with a SYN-ACK (header only, on the ACK
    /// route) echoing its send time and retransmission flag, as ACKs echo a
    /// segment's. Every copy of a resent SYN is answered.
    pub fn on_syn(&mut self, pkt: &Packet, p: &TcpParams, out: &mut TcpOutput) {
        out.push(Packet {
            slot: self.slot,
            uid: self.uid,
            seq: 0,
            ts: pkt.ts,
            len: 0,
            size: p.header,
            route: self.rev_route,
            hop: 0,
            flags: SYN | ACK | (pkt.flags & RETX),
        });
    }

    /// A data segment reaches the receiver; returns the bytes newly delivered in order.
    pub fn on_data(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut TcpOutput) -> u64 {
        let (s, e) = (pkt.seq, pkt.seq + pkt.len as u64);
        let before = self.rcv_nxt;
        let mut immediate = !p.delayed_ack;
        if s <= before && !self.echo_pending {
            // Echo the send time of the earliest unacknowledged in-order segment (RFC 7323 section 4.3).
            self.echo_ts = pkt.ts;
            self.echo_retx = pkt.flags & RETX != 0;
            self.echo_pending = true;
        }
        if e <= before {
            immediate = true; // duplicate: acknowledge at once (RFC 5681 section 4.2)
        } else if s <= before {
            self.rcv_nxt = e;
            if !self.ooo.is_empty() {
                immediate = true; // fills (part of) a hole
                let mut k = 0;
                while k < self.ooo.len() && self.ooo[k].0 <= self.rcv_nxt {
                    self.rcv_nxt = self.rcv_nxt.max(self.ooo[k].1);
                    k += 1;
                }
                self.ooo.drain(..k);
            }
            self.unacked += 1;
        } else {
            immediate = true; // out of order: duplicate ACK at once
            let pos = self.ooo.partition_point(|iv| iv.0 < s);
            self.ooo.insert(pos, (s, e));
            // Merge overlapping intervals.
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
            for &(a, b) in &self.ooo {
                match merged.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => merged.push((a, b)),
                }
            }
            self.ooo = merged;
        }
        if immediate || self.unacked >= 2 || self.receiver_done() {
            self.send_ack(p, out);
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + p.delayed_ack_timeout);
        }
        self.rcv_nxt - before
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, p: &TcpParams, out: &mut TcpOutput) {
        self.delack_deadline = None;
        if self.unacked > 0 {
            self.send_ack(p, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::NewReno;

    const MSS: u64 = 1000;

    fn params() -> TcpParams {
        TcpParams {
            mss: MSS as u32,
            header: 40,
            initial_window: 4,
            receive_window: u64::MAX,
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_millis(60_000),
            initial_rto: SimTime::from_millis(1000),
            delayed_ack: false,
            delayed_ack_timeout: SimTime::from_millis(200),
            dupack_threshold: 3,
            handshake: false,
            limited_transmit: false,
            impatient: false,
        }
    }

    fn conn(size: u64) -> Tcp {
        Tcp::new(0, 0, size, 0, 1, Controller::NewReno(NewReno), &params())
    }

    fn ack(seq: u64, ts: SimTime, retx: bool) -> Packet {
        Packet { slot: 0, uid: 0, seq, ts, len: 0, size: 40, route: 1, hop: 0, flags: ACK | if retx { RETX } else { 0 } }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let p = params();
        let mut t = conn(u64::MAX);
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out);
        assert_eq!(out.len(), 4); // initial window
        out.clear();
        t.on_ack(&ack(1000, ms(0), false), ms(100), &p, &mut out);
        // Slow start: +1 MSS per ACK of one MSS, and two segments go out.
        assert_eq!(t.st.cwnd, 5 * MSS);
        assert_eq!(out.len(), 2);
        // Congestion avoidance: +MSS*MSS/cwnd per ACK.
        t.st.ssthresh = 5 * MSS;
        t.on_ack(&ack(2000, ms(0), false), ms(100), &p, &mut out);
        assert_eq!(t.st.cwnd, 5 * MSS + MSS * MSS / (5 * MSS));
    }

    #[test]
    fn rtt_estimator_and_karn() {
        let p = params();
        let mut t = conn(u64::MAX);
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out);
        // First sample R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 300 ms (RFC 6298 2.2).
        t.on_ack(&ack(1000, ms(0), false), ms(100), &p, &mut out);
        assert_eq!(t.rto, ms(300));
        assert_eq!(t.srtt_secs(), Some(0.1));
        // An ACK echoing a retransmission gives no sample (Karn): RTO unchanged.
        t.on_ack(&ack(2000, ms(0), true), ms(900), &p, &mut out);
        assert_eq!(t.rto, ms(300));
        // Second sample R' = 50 ms: RTTVAR = 3/4*50 + 1/4*|100-50| = 50, SRTT = 93.75, RTO = 293.75 ms.
        t.on_ack(&ack(3000, ms(950), false), ms(1000), &p, &mut out);
        assert_eq!(t.rto, SimTime(293_750_000));
    }

    #[test]
    fn fast_retransmit_partial_and_full_ack() {
        let p = params();
        let mut t = conn(u64::MAX);
        t.st.cwnd = 10 * MSS;
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out);
        assert_eq!(out.len(), 10); // segments 0..10 out; 0 and 5 will be lost
        out.clear();
        for _ in 0..2 {
            t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
        }
        assert!(!t.in_recovery && out.is_empty());
        t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
        // Third duplicate: ssthresh = FlightSize/2 = 5 MSS, retransmit segment 0,
        // cwnd = ssthresh + 3 MSS (RFC 5681 3.2 / RFC 6582).
        assert!(t.in_recovery);
        assert_eq!(t.st.ssthresh, 5 * MSS);
        assert_eq!(t.st.cwnd, 8 * MSS);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_ne!(out[0].flags & RETX, 0);
        out.clear();
        // Another duplicate inflates cwnd by one MSS; flight (10) still exceeds it.
        t.on_ack(&ack(0, ms(0), false), ms(51), &p, &mut out);
        assert_eq!(t.st.cwnd, 9 * MSS);
        assert!(out.is_empty());
        // Partial ACK up to the second hole (5000): retransmit it, deflate by the
        // 5 MSS acknowledged and add one back.
        t.on_ack(&ack(5000, ms(50), true), ms(100), &p, &mut out);
        assert!(t.in_recovery);
        assert_eq!(out[0].seq, 5000);
        assert_eq!(t.st.cwnd, 9 * MSS - 5 * MSS + MSS);
        out.clear();
        // Full ACK (covers `recover` = 10000): leave recovery with cwnd = ssthresh.
        t.on_ack(&ack(10_000, ms(100), true), ms(150), &p, &mut out);
        assert!(!t.in_recovery);
        assert_eq!(t.st.cwnd, 5 * MSS);
    }

    #[test]
    fn limited_transmit_sends_one_new_segment_per_early_dupack() {
        let p = TcpParams { limited_transmit: true, ..params() };
        let mut t = conn(u64::MAX);
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out);
        assert_eq!(out.len(), 4); // cwnd = 4 MSS: segments 0..4, segment 0 lost
        out.clear();
        // First and second duplicate ACKs: one new segment each (RFC 3042), cwnd unchanged.
        t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![4 * MSS]);
        t.on_ack(&ack(0, ms(0), false), ms(51), &p, &mut out);
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![4 * MSS, 5 * MSS]);
        assert_eq!(t.st.cwnd, 4 * MSS);
        assert_eq!(out.iter().filter(|s| s.flags & RETX != 0).count(), 0);
        out.clear();
        // Third: fast retransmit. FlightSize for ssthresh is capped by cwnd (4 MSS): ssthresh 2 MSS.
        t.on_ack(&ack(0, ms(0), false), ms(52), &p, &mut out);
        assert!(t.in_recovery);
        assert_eq!(out[0].seq, 0);
        assert_ne!(out[0].flags & RETX, 0);
        assert_eq!(t.st.ssthresh, 2 * MSS);
        // Without the option the early duplicates send nothing.
        let q = params();
        let mut u = conn(u64::MAX);
        let mut o = Vec::new();
        u.try_send(ms(0), &q, &mut o);
        o.clear();
        u.on_ack(&ack(0, ms(0), false), ms(50), &q, &mut o);
        u.on_ack(&ack(0, ms(0), false), ms(51), &q, &mut o);
        assert!(o.is_empty());
        // The receiver's window still binds: with rwnd = 4 MSS nothing new may go out.
        let r = TcpParams { limited_transmit: true, receive_window: 4 * MSS, ..params() };
        let mut v = conn(u64::MAX);
        let mut o = Vec::new();
        v.try_send(ms(0), &r, &mut o);
        o.clear();
        v.on_ack(&ack(0, ms(0), false), ms(50), &r, &mut o);
        assert!(o.is_empty());
    }

    #[test]
    fn impatient_timer_restarts_on_the_first_partial_ack_only() {
        for impatient in [false, true] {
            let p = TcpParams { impatient, ..params() };
            let mut t = conn(u64::MAX);
            t.st.cwnd = 10 * MSS;
            let mut out = Vec::new();
            t.try_send(ms(0), &p, &mut out); // segments 0..10; 0, 3 and 6 lost
            // First sample R = 100 ms: RTO 300 ms.
            for k in 0..3 {
                t.on_ack(&ack(0, ms(0), false), ms(100 + k), &p, &mut out);
            }
            assert!(t.in_recovery);
            t.on_ack(&ack(3000, ms(0), true), ms(200), &p, &mut out); // first partial ACK
            assert_eq!(t.rto_deadline, Some(ms(200) + t.rto));
            t.on_ack(&ack(6000, ms(0), true), ms(300), &p, &mut out); // second partial ACK
            let expect = if impatient { ms(200) + t.rto } else { ms(300) + t.rto };
            assert_eq!(t.rto_deadline, Some(expect), "impatient = {impatient}");
            // A full ACK restarts it in both variants (RFC 6298 rule 5.3).
            t.on_ack(&ack(10_000, ms(0), true), ms(400), &p, &mut out);
            assert!(!t.in_recovery);
        }
    }

    #[test]
    fn timeout_during_recovery_keeps_the_halved_ssthresh() {
        let p = params();
        let mut t = conn(u64::MAX);
        t.st.cwnd = 10 * MSS;
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out); // segments 0..10, 0 lost
        for k in 0..3 {
            t.on_ack(&ack(0, ms(0), false), ms(100 + k), &p, &mut out);
        }
        assert_eq!(t.st.ssthresh, 5 * MSS);
        // Duplicate ACKs inflate cwnd and clock out new data: FlightSize grows too.
        for k in 0..20 {
            t.on_ack(&ack(0, ms(0), false), ms(103 + k), &p, &mut out);
        }
        assert!(t.st.cwnd >= 20 * MSS && t.snd_max - t.snd_una >= 20 * MSS);
        // The timer fires in recovery: ssthresh stays at the value the recovery set.
        t.on_rto(ms(1200), &p, &mut out);
        assert_eq!(t.st.ssthresh, 5 * MSS);
        assert_eq!(t.st.cwnd, MSS);
    }

    #[test]
    fn timeout_backs_off_and_goes_back_n() {
        let p = params();
        let mut t = conn(u64::MAX);
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out);
        assert_eq!(t.rto_deadline, Some(ms(1000))); // initial RTO 1 s
        out.clear();
        t.on_rto(ms(1000), &p, &mut out);
        assert_eq!(t.timeouts, 1);
        assert_eq!(t.st.cwnd, MSS); // loss window
        assert_eq!(t.st.ssthresh, 2 * MSS); // max(FlightSize/2 = 2 MSS, 2 MSS)
        assert_eq!(t.rto, ms(2000)); // doubled (RFC 6298 5.5)
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_eq!(t.rto_deadline, Some(ms(3000)));
        // A second timeout holds ssthresh (RFC 5681) and doubles again.
        out.clear();
        t.on_rto(ms(3000), &p, &mut out);
        assert_eq!(t.st.ssthresh, 2 * MSS);
        assert_eq!(t.rto, ms(4000));
    }

    fn handshake_params() -> TcpParams {
        TcpParams { handshake: true, ..params() }
    }

    fn synack(ts: SimTime, retx: bool) -> Packet {
        let a = ack(0, ts, retx); // SYN-ACK: an ACK of sequence 0 with SYN set
        Packet { flags: SYN | a.flags, ..a }
    }

    #[test]
    fn handshake_opens_with_a_syn_alone() {
        let p = handshake_params();
        let mut t = Tcp::new(0, 0, 100 * MSS, 0, 1, Controller::NewReno(NewReno), &p);
        let mut out = Vec::new();
        t.open(ms(5), &p, &mut out);
        // One header-only SYN on the data route and no data, whatever the window.
        assert_eq!(out.len(), 1);
        let syn = out[0];
        assert_eq!((syn.flags, syn.seq, syn.len, syn.size, syn.route, syn.ts), (SYN, 0, 0, 40, 0, ms(5)));
        assert!(!t.established && t.snd_max == 0);
        assert_eq!(t.rto_deadline, Some(ms(1005))); // initial RTO 1 s (RFC 6298 2.1)
        // Without the option the same call sends the initial window of data.
        let q = params();
        let mut u = Tcp::new(0, 0, 100 * MSS, 0, 1, Controller::NewReno(NewReno), &q);
        out.clear();
        u.open(ms(5), &q, &mut out);
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|d| d.flags == 0 && d.len == MSS as u32));
    }

    #[test]
    fn receiver_answers_every_syn_with_an_echoing_synack() {
        let p = handshake_params();
        let mut t = conn(5000);
        let mut out = Vec::new();
        let syn = Packet { slot: 0, uid: 0, seq: 0, ts: ms(7), len: 0, size: 40, route: 0, hop: 0, flags: SYN };
        t.on_syn(&syn, &p, &mut out);
        assert_eq!(out.len(), 1);
        let sa = out[0];
        assert_eq!((sa.flags, sa.seq, sa.len, sa.size, sa.route, sa.ts), (SYN | ACK, 0, 0, 40, 1, ms(7)));
        // A resent SYN is answered again, its RETX flag echoed (Karn's rule).
        t.on_syn(&Packet { ts: ms(1007), flags: SYN | RETX, ..syn }, &p, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!((out[1].flags, out[1].ts), (SYN | ACK | RETX, ms(1007)));
        assert_eq!(t.rcv_nxt, 0); // no data yet
    }

    #[test]
    fn synack_gives_the_first_rtt_sample_then_data_flows() {
        let p = handshake_params();
        let mut t = Tcp::new(0, 0, u64::MAX, 0, 1, Controller::NewReno(NewReno), &p);
        let mut out = Vec::new();
        t.open(ms(0), &p, &mut out);
        out.clear();
        // R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 300 ms (RFC 6298 2.2),
        // then the initial window goes out, timed with that RTO.
        t.on_synack(&synack(ms(0), false), ms(100), &p, &mut out);
        assert!(t.established);
        assert_eq!(t.rto, ms(300));
        assert_eq!(t.srtt_secs(), Some(0.1));
        assert_eq!(out.len(), 4);
        assert_eq!(out[0].seq, 0);
        assert!(out.iter().all(|d| d.flags == 0));
        assert_eq!(t.rto_deadline, Some(ms(400)));
        assert_eq!((t.timeouts, t.retransmits), (0, 0));
        // A duplicate SYN-ACK changes nothing.
        out.clear();
        t.on_synack(&synack(ms(0), false), ms(150), &p, &mut out);
        assert!(out.is_empty());
        assert_eq!((t.rto, t.rto_deadline, t.snd_nxt), (ms(300), Some(ms(400)), 4 * MSS));
    }

    #[test]
    fn syn_timeout_backs_off_and_karn_skips_the_sample() {
        let p = handshake_params();
        let mut t = Tcp::new(0, 0, u64::MAX, 0, 1, Controller::NewReno(NewReno), &p);
        let mut out = Vec::new();
        t.open(ms(0), &p, &mut out);
        out.clear();
        // First timeout after initial_rto: the SYN is resent, flagged, and the
        // timer doubles (RFC 6298 5.5 and 5.6). Counted as a timeout and a
        // retransmission, as a data timeout and its resent segment are.
        t.on_rto(ms(1000), &p, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].flags, out[0].ts, out[0].len), (SYN | RETX, ms(1000), 0));
        assert_eq!(t.rto, ms(2000));
        assert_eq!(t.rto_deadline, Some(ms(3000)));
        assert_eq!((t.timeouts, t.retransmits), (1, 1));
        out.clear();
        t.on_rto(ms(3000), &p, &mut out);
        assert_eq!((t.rto, t.rto_deadline), (ms(4000), Some(ms(7000))));
        assert_eq!((t.timeouts, t.retransmits), (2, 2));
        // No data was out: the window is untouched.
        assert_eq!((t.st.cwnd, t.st.ssthresh), (4 * MSS, u64::MAX));
        // The SYN-ACK echoes a resent SYN: no sample (Karn), the backed-off RTO
        // stays, and the initial window goes out.
        out.clear();
        t.on_synack(&synack(ms(3000), true), ms(3100), &p, &mut out);
        assert!(t.established);
        assert_eq!(t.srtt_secs(), None);
        assert_eq!(t.rto, ms(4000));
        assert_eq!(out.len(), 4);
        assert_eq!(t.rto_deadline, Some(ms(7100)));
        // The backoff is capped by max_rto.
        let q = TcpParams { max_rto: ms(3000), ..handshake_params() };
        let mut u = Tcp::new(0, 0, u64::MAX, 0, 1, Controller::NewReno(NewReno), &q);
        u.open(ms(0), &q, &mut out);
        u.on_rto(ms(1000), &q, &mut out);
        u.on_rto(ms(3000), &q, &mut out);
        assert_eq!((u.rto, u.rto_deadline), (ms(3000), Some(ms(6000))));
    }

    fn data(seq: u64, len: u32, ts: SimTime) -> Packet {
        Packet { slot: 0, uid: 0, seq, ts, len, size: len + 40, route: 0, hop: 0, flags: 0 }
    }

    #[test]
    fn receiver_acks_out_of_order_at_once_and_jumps_on_repair() {
        let mut p = params();
        p.delayed_ack = true;
        let mut t = conn(5000);
        let mut out = Vec::new();
        assert_eq!(t.on_data(&data(0, 1000, ms(1)), ms(10), &p, &mut out), 1000);
        assert!(out.is_empty() && t.delack_deadline == Some(ms(210))); // delayed
        t.on_data(&data(1000, 1000, ms(2)), ms(11), &p, &mut out);
        assert_eq!(out.len(), 1); // every second segment
        assert_eq!(out[0].seq, 2000);
        assert_eq!(out[0].ts, ms(1)); // echoes the earliest unacknowledged segment
        out.clear();
        t.on_data(&data(3000, 1000, ms(4)), ms(13), &p, &mut out); // hole at 2000
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 2000); // duplicate ACK at once
        out.clear();
        assert_eq!(t.on_data(&data(2000, 1000, ms(3)), ms(14), &p, &mut out), 2000);
        assert_eq!(out[0].seq, 4000); // repair: ACK at once, cumulative jump
        out.clear();
        t.on_data(&data(4000, 1000, ms(5)), ms(15), &p, &mut out);
        assert!(t.receiver_done());
        assert_eq!(out[0].seq, 5000); // the last segment is acknowledged at once
    }
}
