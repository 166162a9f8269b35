//! TCP Vegas as ns-2.35's `Agent/TCP/Vegas` runs it (`cc = { variant = "ns2" }`;
//! tcp/tcp-vegas.cc, `VegasTcpAgent::recv`, lines 170-330; defaults
//! `v_alpha_ 1`, `v_beta_ 3`, `v_gamma_ 1`, tcl/lib/ns-default.tcl:1086-1088).
//! This is the U. Arizona code ported to ns-2, closer to the paper than ns-3's
//! and Linux's Vegas, and different from them in each of these rules:
//!
//! * **The round's RTT is the mean** of the fine-grained samples of the round
//!   (`v_sumRTT_ / v_cntRTT_`), not their minimum; without a sample, the time
//!   since the round began. BaseRTT is the smallest sample, and also the round's
//!   RTT whenever at most one packet was sent in the round (`rttLen <= 1`).
//! * **Rates in packets of the sequence**: Actual = packets sent during the
//!   round / RTT (`t_seqno_ − v_begseq_`), Expected = packets outstanding + 1 /
//!   BaseRTT (`t_seqno_ − last_ack_`), and the difference in whole packets,
//!   `int((Expected − Actual)·BaseRTT + 0.5)`.
//! * **A round** ends with the ACK of the first packet sent after it began
//!   (`seqno >= v_begseq_`).
//! * **Slow start every other round** (`v_inc_flag_`): one packet per ACK in
//!   the rounds it grows; leaving it (delta > gamma) takes an eighth off the
//!   window, at least 2, and sets ssthresh to 2.
//! * **Congestion avoidance** decides at the round's end and spreads the
//!   increase over the next round: delta > beta: one packet less; delta <
//!   alpha: 1/cwnd per ACK (the cwnd of the decision); and grows only while the
//!   window is at most 2 packets above what is outstanding.
//! * **Losses**: three duplicate ACKs cut the window by a quarter (to 2 at 3 or
//!   less), and the ACK that ends the (Reno) recovery sets ssthresh to 2, so
//!   Vegas never slow-starts again; a timeout halves ssthresh (`slowdown`).
//!   The fine-grained retransmissions of the paper (`vegas_expire`, on the first
//!   duplicate ACK) are the machinery's business and are not modelled; the
//!   machinery's timeout restarts from 1 packet where ns-2's Vegas sends 2.
//!
//! The window is ns-2's `cwnd_`, a real number of packets; the machinery sends
//! its whole part (ns-2's `window()`).
use super::super::{Ack, Congestion, Window};
use crate::engine::SimTime;
use crate::transport::state::StateVars;

/// ns-2's `windowInit_` (ns-default.tcl:920), which `delay_growth_` applies at
/// the second ACK; the connection starts with one packet (`tcp.initial_window = 1`).
const INITIAL_WINDOW: f64 = 2.0;

/// ns-2's Vegas state (`VegasTcpAgent`, tcp.h:603-650), sequence numbers in packets.
#[derive(Clone, Debug)]
pub struct Ns2Vegas {
    alpha: i64,
    beta: i64,
    gamma: i64,
    /// `cwnd_`, packets.
    cwnd: f64,
    /// What this controller last wrote into the window (bytes): anything else
    /// there was the machinery's (recovery, a timeout) and is taken as cwnd.
    written: u64,
    /// `ssthresh_`, packets (ns-2 starts it at `window_`: none here).
    ssthresh: f64,
    /// `v_baseRTT_`, `v_sumRTT_`, `v_cntRTT_` (s).
    base_rtt: f64,
    sum_rtt: f64,
    cnt_rtt: u32,
    /// `v_begseq_`, `v_begtime_`: the round began when packet `beg_seq` was next to send.
    beg_seq: u64,
    beg_time: f64,
    /// `v_incr_`, `v_inc_flag_`.
    incr: f64,
    inc_flag: bool,
    /// When the connection opened (`firstsent_`) and whether the first ACK has
    /// come (`firstrecv_`).
    first_sent: SimTime,
    started: bool,
    /// The highest packet acknowledged before this ACK (`last_ack_`; None: none).
    prev_ack: Option<u64>,
}

impl Ns2Vegas {
    /// `VegasTcpAgent::reset` with thresholds alpha, beta, gamma (packets).
    pub fn new(alpha: i64, beta: i64, gamma: i64) -> Self {
        Ns2Vegas {
            alpha,
            beta,
            gamma,
            cwnd: 0.0,
            written: 0,
            ssthresh: f64::INFINITY,
            base_rtt: 1e9,
            sum_rtt: 0.0,
            cnt_rtt: 0,
            beg_seq: 0,
            beg_time: 0.0,
            incr: 0.0,
            inc_flag: true,
            first_sent: SimTime::ZERO,
            started: false,
            prev_ack: None,
        }
    }

    /// The connection opens at `now` (ns-2's `firstsent_`; the first round starts here).
    pub fn on_start(&mut self, now: SimTime) {
        self.first_sent = now;
        self.beg_time = now.as_secs_f64();
    }

    /// BaseRTT (before the first sample: none) and the increment per ACK the
    /// last round's decision set (`v_incr_`, packets), for a trace.
    pub fn observe(&self, vars: &mut StateVars) {
        if self.base_rtt < 1e9 {
            vars.put("vegas.base_rtt_s", self.base_rtt);
        }
        vars.put("vegas.increment_packets", self.incr);
    }

    /// `cwnd_` and `ssthresh_` (packets), and BaseRTT (s).
    pub fn state(&self) -> (f64, f64, f64) {
        (self.cwnd, self.ssthresh, self.base_rtt)
    }

    /// The once-per-round decision (tcp-vegas.cc:178-268) at time `now` (s), with
    /// `t_seqno` the next packet to send and `last_ack` the highest acknowledged.
    fn end_round(&mut self, now: f64, t_seqno: u64, last_ack: u64) {
        let rtt = if self.cnt_rtt > 0 { self.sum_rtt / self.cnt_rtt as f64 } else { now - self.beg_time };
        self.sum_rtt = 0.0;
        self.cnt_rtt = 0;
        let rtt_len = t_seqno.saturating_sub(self.beg_seq);
        if rtt > 0.0 {
            if rtt < self.base_rtt || rtt_len <= 1 {
                self.base_rtt = rtt;
            }
            let actual = rtt_len as f64 / rtt;
            let expect = t_seqno.saturating_sub(last_ack) as f64 / self.base_rtt;
            // C's int(): toward zero.
            let delta = ((expect - actual) * self.base_rtt + 0.5) as i64;
            if self.cwnd < self.ssthresh {
                // Slow start: grow every other round.
                self.inc_flag = !self.inc_flag;
                if !self.inc_flag {
                    self.incr = 0.0;
                } else if delta > self.gamma {
                    self.ssthresh = 2.0;
                    self.cwnd = (self.cwnd - self.cwnd / 8.0).max(2.0);
                    self.incr = 0.0;
                } else {
                    self.incr = 1.0;
                }
            } else if delta > self.beta {
                self.cwnd = (self.cwnd - 1.0).max(2.0);
                self.incr = 0.0;
            } else if delta < self.alpha {
                self.incr = 1.0 / self.cwnd;
            } else {
                self.incr = 0.0;
            }
        }
        self.beg_seq = t_seqno;
        self.beg_time = now;
    }

    /// Every ACK (`VegasTcpAgent::recv`): ACKs of new data only; duplicates are
    /// the machinery's recovery.
    pub fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        let now = ack.now.as_secs_f64();
        if !self.started {
            // firstrecv_: BaseRTT starts at the first ACK's time since the first send.
            self.started = true;
            self.base_rtt = now - self.first_sent.as_secs_f64();
        }
        if w.cwnd != self.written {
            self.cwnd = (w.cwnd / w.mss) as f64; // set by the machinery
        }
        if ack.bytes_acked > 0 {
            if ack.in_recovery {
                // The ACK that ends ns-2's Reno-style recovery deflates to the
                // reduced window and sets ssthresh to 2 (tcp-vegas.cc:159-164).
                self.ssthresh = 2.0;
            }
            self.new_ack(ack, w.mss);
        }
        self.written = (self.cwnd as u64).max(1) * w.mss;
        w.cwnd = self.written;
    }

    /// An ACK of new data: the round's end, this ACK's increment, then its sample.
    fn new_ack(&mut self, ack: &Ack, mss: u64) {
        let now = ack.now.as_secs_f64();
        // Packets: the highest acknowledged (`seqno`, `last_ack_`) and the next to send.
        let last_ack = ack.snd_una.div_ceil(mss).saturating_sub(1);
        let t_seqno = ack.snd_nxt.div_ceil(mss);
        if self.prev_ack == Some(0) {
            // `delay_growth_` (Agent/TCP's default, true): one packet until packet 0 is
            // acknowledged, then the initial window, `windowInit_` 2 (tcp-vegas.cc:155-157).
            self.cwnd = INITIAL_WINDOW;
        }
        self.prev_ack = Some(last_ack);
        if last_ack >= self.beg_seq {
            self.end_round(now, t_seqno, last_ack);
        }
        if self.incr == 1.0 && self.cwnd >= self.ssthresh {
            self.incr = 0.0;
        }
        if self.incr > 0.0 && self.cwnd - (t_seqno.saturating_sub(last_ack)) as f64 <= 2.0 {
            self.cwnd += self.incr;
        }
        // The fine-grained sample of the packet acknowledged, sent once (Karn), and
        // not at the connection's first instant: ns-2 records send times relative
        // to it and reads 0 as "none" (`sendTime != 0.`, tcp-vegas.cc:291).
        if let Some(r) = ack.rtt.filter(|&r| ack.now - r != self.first_sent) {
            let r = r.0 as f64 * 1e-9;
            self.sum_rtt += r;
            self.cnt_rtt += 1;
            if r > 0.0 && r < self.base_rtt {
                self.base_rtt = r;
            }
        }
    }

    /// Three duplicate ACKs cut a quarter (`win -= win >> 2`, 2 at 3 or less);
    /// a timeout halves (`slowdown(CLOSE_SSTHRESH_HALF)`, at least 2). Returns
    /// ssthresh in bytes; the machinery sets the window from it.
    pub fn on_congestion(&mut self, w: &Window, event: Congestion) -> u64 {
        let win = (w.cwnd / w.mss).max(1);
        let packets = match event {
            Congestion::Timeout { .. } => {
                self.ssthresh = ((self.cwnd / 2.0).floor()).max(2.0);
                self.ssthresh as u64
            }
            Congestion::Loss | Congestion::Ecn if win <= 3 => 2,
            Congestion::Loss | Congestion::Ecn => win - (win >> 2),
        };
        packets * w.mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// An ACK of new data at `t` s: packets up to `last_ack` acknowledged, `t_seqno`
    /// the next to send, an RTT sample of `rtt` s if any.
    fn ack(t: f64, last_ack: u64, t_seqno: u64, rtt: Option<f64>) -> Ack {
        Ack {
            now: SimTime::from_secs_f64(t),
            bytes_acked: MSS,
            bytes_delivered: MSS,
            rtt: rtt.map(SimTime::from_secs_f64),
            snd_una: (last_ack + 1) * MSS,
            snd_nxt: t_seqno * MSS,
            ..Ack::default()
        }
    }

    /// A Vegas in congestion avoidance (ssthresh 2) with a window of `cwnd`
    /// packets and BaseRTT 100 ms, whose round began at 10 s with packet 100 next
    /// to send, the round's samples `rtts` (s).
    fn in_round(cwnd: f64, rtts: &[f64]) -> (Ns2Vegas, Window) {
        let mut v = Ns2Vegas::new(1, 3, 1);
        v.started = true;
        (v.cwnd, v.ssthresh, v.base_rtt, v.beg_seq, v.beg_time) = (cwnd, 2.0, 0.1, 100, 10.0);
        v.sum_rtt = rtts.iter().sum();
        v.cnt_rtt = rtts.len() as u32;
        let w = Window { cwnd: cwnd as u64 * MSS, ssthresh: 2 * MSS, mss: MSS };
        v.written = w.cwnd;
        (v, w)
    }

    #[test]
    fn the_round_ends_with_the_first_packet_sent_in_it_and_uses_the_mean_rtt() {
        // Packet 99 acknowledged: still the round that began with 100 next to send.
        let (mut v, mut w) = in_round(20.0, &[0.12, 0.125, 0.13]);
        v.on_ack(&mut w, &ack(10.12, 99, 119, Some(0.12)));
        assert_eq!((v.beg_seq, v.cnt_rtt), (100, 4));
        // Packet 100: the round ends. Mean RTT (0.12 + 0.125 + 0.13 + 0.12)/4 =
        // 0.12375 s; 20 packets sent in it: Actual = 20/0.12375 = 161.6; Expected =
        // (120 − 100)/0.1 = 200; delta = int(38.4·0.1 + 0.5) = int(4.34) = 4 > beta:
        // one packet less.
        v.on_ack(&mut w, &ack(10.13, 100, 120, None));
        assert_eq!((v.cwnd, w.cwnd, v.beg_seq, v.cnt_rtt), (19.0, 19 * MSS, 120, 0));
        assert_eq!(v.beg_time, 10.13);
    }

    #[test]
    fn below_alpha_the_increase_is_spread_over_the_next_round() {
        // RTT = BaseRTT: delta = int(0 + 0.5) = 0 < alpha = 1: incr = 1/20 per ACK,
        // starting with the ACK that decided it (20 − (120 − 100) = 0 ≤ 2).
        let (mut v, mut w) = in_round(20.0, &[0.1, 0.1]);
        v.on_ack(&mut w, &ack(10.1, 100, 120, None));
        assert_eq!(v.cwnd, 20.05);
        assert_eq!(w.cwnd, 20 * MSS); // whole packets go out
        for k in 1..=19 {
            v.on_ack(&mut w, &ack(10.1 + k as f64 * 0.001, 100 + k, 120 + k, Some(0.1)));
        }
        assert!((v.cwnd - 21.0).abs() < 1e-9);
        assert_eq!(w.cwnd, 21 * MSS);
        // Not while the window is more than 2 packets above what is outstanding.
        let (mut v, mut w) = in_round(20.0, &[0.1, 0.1]);
        v.on_ack(&mut w, &ack(10.1, 100, 117, None));
        assert_eq!(v.cwnd, 20.0);
        // Hold between alpha and beta: RTT 0.105 s: delta = int(0.952 + 0.5) = 1.
        let (mut v, mut w) = in_round(20.0, &[0.105]);
        v.on_ack(&mut w, &ack(10.1, 100, 120, None));
        assert_eq!((v.cwnd, v.incr), (20.0, 0.0));
    }

    #[test]
    fn slow_start_grows_every_other_round_and_leaves_with_an_eighth_less() {
        let (mut v, mut w) = in_round(16.0, &[0.1]);
        v.ssthresh = f64::INFINITY;
        // The flag turns off: a round without growth.
        v.on_ack(&mut w, &ack(10.1, 100, 116, None));
        assert_eq!((v.cwnd, v.incr, v.inc_flag), (16.0, 0.0, false));
        // The next round: on, delta = 0 ≤ gamma: one packet per ACK.
        v.sum_rtt = 0.1;
        v.cnt_rtt = 1;
        v.on_ack(&mut w, &ack(10.2, 116, 132, None));
        assert_eq!((v.cwnd, v.incr), (17.0, 1.0));
        v.on_ack(&mut w, &ack(10.201, 117, 133, None));
        assert_eq!(v.cwnd, 18.0);
        // An on-round with delta = int((16/0.1 − 16/0.12)·0.1 + 0.5) = int(3.17) = 3
        // > gamma: cwnd = 16 − 16/8 = 14, ssthresh 2.
        let (mut v, mut w) = in_round(16.0, &[0.12]);
        (v.ssthresh, v.inc_flag) = (f64::INFINITY, false);
        v.on_ack(&mut w, &ack(10.12, 100, 116, None));
        assert_eq!((v.cwnd, v.ssthresh, w.cwnd), (14.0, 2.0, 14 * MSS));
    }

    #[test]
    fn losses_cut_a_quarter_recovery_ends_slow_start_and_timeouts_halve() {
        let mut v = Ns2Vegas::new(1, 3, 1);
        let w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(v.on_congestion(&w, Congestion::Loss), 15 * MSS);
        assert_eq!(v.on_congestion(&Window { cwnd: 3 * MSS, ..w }, Congestion::Loss), 2 * MSS);
        v.cwnd = 21.0;
        assert_eq!(v.on_congestion(&w, Congestion::Timeout { repeated: false }), 10 * MSS);
        assert_eq!(v.ssthresh, 10.0);
        // The ACK that ends recovery: the machinery's window (15) is taken, ssthresh 2.
        let (mut v, mut w) = in_round(20.0, &[]);
        v.ssthresh = f64::INFINITY;
        w.cwnd = 15 * MSS;
        let mut a = ack(10.05, 90, 118, None);
        a.in_recovery = true;
        v.on_ack(&mut w, &a);
        assert_eq!((v.cwnd, v.ssthresh), (15.0, 2.0));
    }
}
