//! The sending side of a connection: segments, the window, loss recovery and the
//! retransmission timer.
use super::{Output, SynTimeout, TcpParams, Tcp, TimeoutSsthresh};
use crate::engine::SimTime;
use crate::net::packet::{CWR, ECE, ECT, RETX, SYN};
use crate::net::Packet;
use crate::transport::cc::{Ack, Congestion, CongestionControl, FastRecovery};

impl Tcp {
    #[inline]
    pub(super) fn seg_len(&self, seq: u64, p: &TcpParams) -> u64 {
        (p.mss as u64).min(self.size - seq)
    }

    pub(super) fn send_segment(&mut self, seq: u64, now: SimTime, p: &TcpParams, out: &mut Output) {
        let len = self.seg_len(seq, p);
        let retx = seq < self.snd_max;
        let mut flags = 0;
        if retx {
            self.retransmits += 1;
            self.retx_high = self.retx_high.max(seq + len);
            flags |= RETX;
        } else {
            if self.cwr_pending {
                // RFC 3168 §6.1.2: CWR on the first new segment after the reduction (never on a retransmission).
                self.cwr_pending = false;
                flags |= CWR;
            }
            // RFC 3168 §6.1.1 and §6.1.5: new data is ECN-capable, a retransmission is not.
            if p.ecn {
                flags |= ECT;
            }
        }
        self.cc.on_sent(now, len, retx);
        self.rtt.on_send(seq + len, !retx, now);
        if let Some(sel) = self.selective.as_deref_mut() {
            sel.board.on_sent(seq, retx);
            if let Some(prr) = sel.prr.as_mut() {
                prr.on_sent(len);
            }
        }
        out.push(Packet {
            seq,
            ts: now,
            owd: 0,
            sack: 0,
            flow: self.ep.flow,
            conn: self.ep.conn,
            len: len as u32,
            // An in-window SYN (`syn_segment`) is a header on the wire.
            size: if seq < self.syn { p.control_bytes() } else { len as u32 + p.header_bytes() },
            route: self.ep.data_route,
            hop: 0,
            flags,
            ce: 0,
        });
        self.snd_max = self.snd_max.max(seq + len);
        // RFC 6298 rule 5.1: start the timer when data is sent and it is not running.
        if !self.rto_timer.is_set() {
            self.rto_timer.set(now + self.rtt.rto());
        }
    }

    /// The flow arrives: send a SYN if the connection needs a handshake, data otherwise.
    pub fn open(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        self.cc.on_start(&mut self.w, now);
        if self.established {
            self.try_send(now, p, out);
        } else {
            self.send_syn(now, false, p, out);
        }
        self.sync_cc_timer();
    }

    /// A SYN (header only) on the data route, timed like a segment: RFC 6298
    /// rules 5.1 and 5.6, with `initial_rto` before any sample (rule 2.1).
    fn send_syn(&mut self, now: SimTime, retx: bool, p: &TcpParams, out: &mut Output) {
        if retx {
            self.retransmits += 1;
        }
        self.rtt.on_send(0, !retx, now);
        out.push(self.control(self.ep.data_route, 0, now, SYN | if retx { RETX } else { 0 }, p));
        self.rto_timer.set(now + self.rtt.rto());
    }

    /// A SYN-ACK reaches the sender: the connection is established and data may
    /// flow (initial window). The SYN-ACK echoes the SYN's send time, so it gives
    /// the first RTT sample (RFC 6298 rule 2.2), unless it answers a resent SYN
    /// (Karn's rule; the backed-off RTO then stays until a data sample, as in ns-3).
    /// A duplicate SYN-ACK, answering an earlier copy of a resent SYN, is ignored.
    pub fn on_synack(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        if self.established {
            return;
        }
        self.established = true;
        self.rto_timer.stop(); // the SYN is acknowledged (rule 5.2)
        self.rtt.on_ack(0, (pkt.flags & RETX == 0).then(|| now - pkt.ts), now, p.rto_bounds());
        self.try_send(now, p, out);
    }

    /// Send new (or, after a timeout, resent) segments while the window allows.
    pub fn try_send(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        if self.ns2.is_some() {
            return self.ns2_send(now, p, out);
        }
        if self.selective.is_some() {
            return self.try_send_selective(now, p, out);
        }
        let window = self.w.cwnd.min(p.rwnd());
        while self.snd_nxt < self.size {
            let len = self.seg_len(self.snd_nxt, p);
            // Send window: the smaller of cwnd and the receiver's window (RFC 5681 §2).
            if self.snd_nxt + len > self.snd_una + window {
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
    pub(super) fn flight_for_ssthresh(&self) -> u64 {
        (self.snd_max - self.snd_una).min(self.w.cwnd)
    }

    /// The controller's deadline becomes the connection's `cc_timer`.
    #[inline]
    pub(super) fn sync_cc_timer(&mut self) {
        match self.cc.deadline() {
            Some(t) => self.cc_timer.set(t),
            None => self.cc_timer.stop(),
        }
    }

    /// What the controller learns from an ACK, before the ACK is processed;
    /// `in_flight` is the data in the network the window limits (FlightSize, or
    /// pipe with SACK).
    pub(super) fn ack_sample(&mut self, pkt: &Packet, now: SimTime, in_flight: u64, p: &TcpParams) -> Ack {
        // ACKs arrive in order (FIFO links), each with the receiver's count of
        // CE marks modulo 256: the difference is exact while fewer than 256 marks
        // separate two ACKs (the receiver acknowledges at least every second segment).
        let ce_marks = pkt.ce.wrapping_sub(self.ce_seen) as u32;
        self.ce_seen = pkt.ce;
        Ack {
            now,
            bytes_acked: 0,
            bytes_delivered: 0,
            rtt: None,
            one_way_delay: Some(pkt.one_way_delay()),
            ts_echo: p.timestamps.then_some(pkt.ts),
            acks_retransmission: pkt.seq > self.snd_una && self.snd_una < self.retx_high,
            ece: pkt.flags & ECE != 0,
            ce_marks,
            in_recovery: self.recovery.active,
            cwnd_limited: in_flight + self.w.mss > self.w.cwnd,
            flight: self.snd_max - self.snd_una,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            byte_counting: self.byte_counting,
            ns2_arithmetic: self.ns2_arithmetic,
        }
    }

    /// The RTT sample an ACK's echo gives: always with timestamps (the echo dates
    /// the segment that triggered the ACK, RFC 7323 §4), otherwise not from an ACK
    /// of a retransmitted segment (Karn's rule, RFC 6298 §3).
    #[inline]
    pub(super) fn echo_sample(pkt: &Packet, now: SimTime, p: &TcpParams) -> Option<SimTime> {
        (p.timestamps || pkt.flags & RETX == 0).then(|| now - pkt.ts)
    }

    /// An ACK of new data: its RTT sample, which the estimator takes too.
    pub(super) fn rtt_sample(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams) -> Option<SimTime> {
        let r = Self::echo_sample(pkt, now, p);
        self.rtt.on_ack(pkt.seq.min(self.snd_max), r, now, p.rto_bounds());
        r
    }

    /// Whether a partial ACK of this recovery restarts the retransmission timer
    /// (RFC 6582 §4: always, or with "Impatient" only the first).
    pub(super) fn partial_ack_restarts_timer(&mut self, p: &TcpParams) -> bool {
        let impatient = p.partial_ack_timer == super::PartialAckTimer::Impatient;
        let restart = !(impatient && self.recovery.partial_ack_seen);
        self.recovery.partial_ack_seen = true;
        restart
    }

    /// The end of every ACK's processing: ECN-Echo, the controller, and the
    /// retransmission timer (`timer`: None for an ACK of no new data, otherwise
    /// whether to restart the timer if data is still outstanding; RFC 6298 rules
    /// 5.2 and 5.3).
    pub(super) fn finish_ack(&mut self, sample: &mut Ack, timer: Option<bool>, now: SimTime) {
        self.react_to_ece(sample);
        self.cc.on_ack(&mut self.w, sample);
        match timer {
            Some(_) if self.snd_una >= self.snd_max => self.rto_timer.stop(),
            Some(true) => self.rto_timer.set(now + self.rtt.rto()),
            _ => {}
        }
    }

    /// An ACK reaches the sender.
    pub fn on_ack(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        if self.ns2.is_some() {
            return self.on_ack_ns2(pkt, now, p, out);
        }
        if self.selective.is_some() {
            return self.on_ack_selective(pkt, now, p, out);
        }
        let ack = pkt.seq.min(self.snd_max);
        let mss = self.w.mss;
        let mut sample = self.ack_sample(pkt, now, self.snd_max - self.snd_una, p);
        if ack > self.snd_una {
            let mut restart_timer = true;
            let acked = ack - self.snd_una;
            sample.rtt = self.rtt_sample(pkt, now, p);
            sample.bytes_acked = acked;
            sample.bytes_delivered = acked;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            sample.snd_una = ack;
            sample.snd_nxt = self.snd_nxt;
            self.timed_out_since_ack = false;
            if self.recovery.active {
                let reno = self.cc.fast_recovery() == FastRecovery::Reno;
                if reno || self.recovery.recover.is_some_and(|r| ack >= r) {
                    // Full ACK: leave recovery with cwnd = ssthresh (RFC 6582 step 3,
                    // option 2); for Reno, any ACK of new data (RFC 5681 §3.2 step 6).
                    self.recovery.active = false;
                    self.recovery.dupacks = 0;
                    self.w.cwnd = self.w.ssthresh.max(mss);
                } else {
                    // Partial ACK (RFC 6582 step 4): retransmit the first unacknowledged
                    // segment, deflate cwnd by the newly acked amount, add back one SMSS.
                    // The "Impatient" variant (§4) restarts the timer on the first
                    // partial ACK only, so a long recovery ends in a timeout.
                    restart_timer = self.partial_ack_restarts_timer(p);
                    self.send_segment(self.snd_una, now, p, out);
                    let mut cwnd = self.w.cwnd.saturating_sub(acked);
                    if acked >= mss {
                        cwnd += mss;
                    }
                    self.w.cwnd = cwnd.max(mss);
                }
            } else {
                self.recovery.dupacks = 0;
            }
            // Every ACK of new data restarts the timer, partial ACKs included
            // (RFC 6582's "Slow-but-Steady" variant, as Linux does), unless
            // `impatient` (ns-3's choice) holds it after the first partial ACK.
            self.finish_ack(&mut sample, Some(restart_timer), now);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_duplicate_ack(ack, &mut sample, now, p, out);
        }
        self.try_send(now, p, out);
        self.sync_cc_timer();
    }

    /// A duplicate ACK (RFC 5681 §2): counted; in recovery it inflates the window, at
    /// the threshold it starts fast retransmit, below it limited transmit may send.
    #[inline]
    fn on_duplicate_ack(&mut self, ack: u64, sample: &mut Ack, now: SimTime, p: &TcpParams, out: &mut Output) {
        let mss = self.w.mss;
        self.recovery.dupacks += 1;
        let dupacks = self.recovery.dupacks;
        if self.recovery.active {
            // Each further duplicate ACK: a segment has left the network (RFC 6582 step 3 / RFC 5681).
            self.w.cwnd += mss;
        } else if dupacks == p.dupack_threshold && self.recovery.recover.is_none_or(|r| ack > r) {
            // Fast retransmit (RFC 5681 §3.2 steps 2-4; RFC 6582 step 2).
            let flight = self.flight_for_ssthresh();
            self.w.ssthresh = self.cc.on_congestion(&self.w, Congestion::Loss, flight);
            self.recovery = super::Recovery { dupacks, active: true, recover: Some(self.snd_max), partial_ack_seen: false };
            self.send_segment(self.snd_una, now, p, out);
            self.w.cwnd = self.w.ssthresh + p.dupack_threshold as u64 * mss;
        } else if p.limited_transmit && dupacks < p.dupack_threshold && self.snd_nxt == self.snd_max {
            // Limited transmit (RFC 3042 §2): one previously unsent segment per
            // duplicate ACK, while FlightSize stays within cwnd + dupacks*SMSS (at
            // most cwnd + 2*SMSS) and the receiver's window allows; cwnd is unchanged.
            let seq = self.snd_nxt;
            if seq < self.size {
                let len = self.seg_len(seq, p);
                let end = seq + len - self.snd_una;
                if end <= self.w.cwnd + dupacks as u64 * mss && end <= p.rwnd() {
                    self.send_segment(seq, now, p, out);
                    self.snd_nxt += len;
                }
            }
        }
        sample.in_recovery = self.recovery.active;
        self.finish_ack(sample, None, now);
    }

    /// ECN-Echo (RFC 3168 §6.1.2): reduce the window at most once per window of data
    /// and outside loss recovery (which reduces it already); CWR on the next new segment.
    fn react_to_ece(&mut self, sample: &mut Ack) {
        if !sample.ece || self.recovery.active || self.snd_una < self.ecn_recover {
            return;
        }
        let ssthresh = self.cc.on_congestion(&self.w, Congestion::Ecn, self.flight_for_ssthresh());
        self.ecn_recover = self.snd_max;
        if ssthresh < self.w.cwnd {
            self.w.ssthresh = ssthresh;
            self.w.cwnd = ssthresh.max(self.w.mss);
            self.cwr_pending = true;
            // The window was just set: the controller only observes this ACK.
            sample.in_recovery = true;
        }
    }

    /// The retransmission timer expired (RFC 6298 §5, RFC 5681 eq. 4).
    pub fn on_rto(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        self.rto_timer.stop();
        if !self.established {
            // The SYN or its SYN-ACK was lost: back off (rule 5.5) and resend the
            // SYN, flagged for Karn's rule. No window to reduce: no data is out
            // (unless ns-2's rule, which treats the SYN as a segment, says otherwise).
            self.timeouts += 1;
            if p.rules.syn_timeout == SynTimeout::Ns2 {
                self.ns2_syn_timeout();
            }
            self.rtt.back_off(p.max_rto);
            self.send_syn(now, true, p, out);
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        self.timeouts += 1;
        if self.ns2.is_some() {
            return self.on_rto_ns2(now, p, out);
        }
        // ssthresh is reduced once per window of data: not again on a repeated
        // timeout (RFC 5681 §3.1), nor on a timeout during fast recovery, whose
        // entry already halved it. There cwnd is inflated by the duplicate ACKs
        // and FlightSize counts every segment sent since the first hole, delivered
        // or not; halving either would set ssthresh above anything the path
        // carried (Linux's tcp_enter_loss keeps it likewise).
        let flight = self.flight_for_ssthresh();
        let repeated = p.rules.timeout_ssthresh == TimeoutSsthresh::Hold && (self.timed_out_since_ack || self.recovery.active);
        self.w.ssthresh = self.cc.on_congestion(&self.w, Congestion::Timeout { repeated }, flight);
        self.timed_out_since_ack = true;
        self.w.cwnd = self.w.mss; // loss window
        self.recovery = super::Recovery { dupacks: 0, active: false, recover: Some(self.snd_max), partial_ack_seen: false };
        if self.selective.is_some() {
            self.on_rto_selective(p);
        } else {
            self.snd_nxt = self.snd_una; // go back N
        }
        self.rtt.back_off(p.max_rto);
        self.try_send(now, p, out);
        self.sync_cc_timer();
    }

    /// The controller's deadline has come.
    pub fn on_cc_deadline(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        self.cc.on_deadline(&mut self.w, now);
        self.try_send(now, p, out);
        self.sync_cc_timer();
    }
}
