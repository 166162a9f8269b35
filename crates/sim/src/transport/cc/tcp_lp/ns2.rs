//! TCP-LP as ns-2.35 ran it (`variant = "ns2"`): Linux 2.6.22.6's `tcp_lp.c`
//! (ns-2.35 tcp/linux/src/tcp_lp.c) inside ns-2's `Agent/TCP/Linux`
//! (tcp/tcp-linux.cc, tcp/linux/ns-linux-*.{c,cc,h}), the TCP-LP of the
//! background-transfer papers ("the implementation provided in ns2").
//!
//! What ns-2's emulation of Linux adds to the module's own rules, each taken
//! here as ns-2 computes it:
//! * **Clocks.** Jiffies are milliseconds (`JIFFY_RATIO` and `HZ` 1000):
//!   `tcp_time_stamp` is the simulator clock truncated to ms (tcp-linux.cc:319);
//!   the timestamps the module reads are the segment's send time (`rcv_tsecr`)
//!   and the ACK's (`rcv_tsval`), each *rounded* to ms (tcp-linux.cc:187-188).
//!   With ns-2's `TCPSink` an ACK leaves when its segment arrives, so TSval is
//!   the echoed send time plus the one-way delay (`Ack::ts_echo` +
//!   `Ack::one_way_delay`).
//! * **Timestamps.** ns-2 fills `rcv_tsval`/`rcv_tsecr` only with the agent's
//!   `timestamps_ true` (cclab `tcp.timestamps = true`, which gives
//!   `Ack::ts_echo`). Without it they stay 0: the remote-HZ estimate never
//!   becomes valid, no delay is ever sampled, the threshold test always passes
//!   and TCP-LP is the agent's Reno (`LinuxReno`), packet for packet.
//! * **Types.** The module's `u32` is ns-2's `unsigned long`
//!   (ns-linux-util.h), 64 bits on amd64: the threshold and the estimator wrap
//!   at 2^64, not 2^32.
//! * **The remote-HZ estimate** (tcp_lp.c:136-177): from two consecutive
//!   samples, `1000·ΔTSval / ΔTSecr` in integers, smoothed with gain 1/64. The
//!   sender's ΔTSecr (send spacing) and the receiver's ΔTSval (arrival
//!   spacing) are 0–2 ms apart, so the ratio is 500, 1000 or 2000 as often as
//!   anything, and the estimate settles near, not at, 1000. The one-way delay
//!   is then `TSval·(1000 / remote_hz) − TSecr` (tcp_lp.c:198-200) in integer
//!   division: the real delay while the estimate is 501–1000, but above 1000
//!   the factor is 0 and the "delay" is TSecr itself, the send time in ms,
//!   which grows without bound; at 334–500 it is TSval + the delay.
//! * **Which ACKs.** `pkts_acked` runs on ACKs of new data only, with a delay
//!   sample when the acknowledged segment has a recorded send time
//!   (tcp-linux.cc:374-382): not when the ACK covers a retransmitted segment,
//!   whichever copy it echoes (the scoreboard's `FLAG_UNSURE_TSTAMP`,
//!   scoreboard1.cc:89), nor when it was sent at time 0.
//! * **Growth.** `tcp_lp_cong_avoid` runs `tcp_reno_cong_avoid` outside the
//!   inference time-out, with ns-2's byte counting ([`LinuxReno`]); the window
//!   is whole packets; the reaction sets `snd_cwnd` to 1 packet or half.
//! * **Congestion.** `tcp_reno_ssthresh`: max(snd_cwnd/2, 2) packets, from the
//!   window (not the flight), on every loss and timeout (`enter_loss` holds
//!   nothing on a repeated timeout), clearing the growth counters; the end of
//!   the agent's Loss state raises the window to ssthresh ([`LossState`]).
use super::super::{Ack, Congestion, Window};
use super::linux_reno::LinuxReno;
use super::loss_state::LossState;
use crate::engine::SimTime;
use crate::transport::state::StateVars;

/// tcp_lp.c's state flags (`enum tcp_lp_state`).
const LP_VALID_RHZ: u64 = 1 << 0;
const LP_VALID_OWD: u64 = 1 << 1;
const LP_WITHIN_THR: u64 = 1 << 3;
const LP_WITHIN_INF: u64 = 1 << 4;

/// `HZ` of ns-2's Linux emulation (ns-linux-c.h) and tcp_lp.c's `LP_RESOL`.
const HZ: u64 = 1000;
const LP_RESOL: u64 = 1000;

const NS_PER_MS: u64 = 1_000_000;

/// `tcp_time_stamp`: the clock in jiffies, truncated (tcp-linux.cc:319).
#[inline]
fn jiffies(t: SimTime) -> u64 {
    t.0 / NS_PER_MS
}

/// A timestamp as `rx_opt` holds it: `round(t · JIFFY_RATIO)` (tcp-linux.cc:187).
#[inline]
fn stamp(t: SimTime) -> u64 {
    (t.0 + NS_PER_MS / 2) / NS_PER_MS
}

/// `struct lp` (tcp_lp.c) with ns-2's LP64 types, and the agent's growth counters.
#[derive(Clone, Debug)]
pub struct Ns2 {
    /// The threshold's percentage (tcp_lp.c's `15`).
    pct: u64,
    /// The inference time-out in round trips (tcp_lp.c's `3 *`).
    rtts: u64,
    flag: u64,
    /// Smoothed one-way delay times 8.
    sowd: u64,
    owd_min: u64,
    owd_max: u64,
    owd_max_rsv: u64,
    remote_hz: u64,
    remote_ref_time: u64,
    local_ref_time: u64,
    last_drop: u64,
    inference: u64,
    growth: LinuxReno,
    loss: LossState,
}

/// What `pr_debug` prints on every call of `tcp_lp_pkts_acked` (tcp_lp.c:295,
/// the "TCP-LP:" lines of Debian's ns2): flags, snd_cwnd, remote_hz, owd_min,
/// owd_max and sowd/8, before the reaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Line {
    pub flag: u64,
    pub cwnd: u64,
    pub remote_hz: u64,
    pub owd_min: u64,
    pub owd_max: u64,
    pub sowd: u64,
}

impl Ns2 {
    /// `tcp_lp_init`, with the threshold's percentage and the time-out's round trips.
    pub fn new(pct: u64, rtts: u64) -> Self {
        Ns2 {
            pct,
            rtts,
            flag: 0,
            sowd: 0,
            owd_min: 0xffff_ffff,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
            growth: LinuxReno::default(),
            loss: LossState::default(),
        }
    }

    /// The state as ns-2's debug line shows it, for window `w`.
    pub fn line(&self, w: &Window) -> Ns2Line {
        Ns2Line {
            flag: self.flag,
            cwnd: w.cwnd / w.mss,
            remote_hz: self.remote_hz,
            owd_min: self.owd_min,
            owd_max: self.owd_max,
            sowd: self.sowd >> 3,
        }
    }

    /// The current inference time-out (ms).
    pub fn inference(&self) -> u64 {
        self.inference
    }

    /// The state for a trace at `now` (absent before the first one-way delay
    /// sample): the remote-HZ estimate and the delays in the units tcp_lp.c
    /// compares (the remote clock's ticks as it reads them: with remote_hz ≥ 1000
    /// the "delay" is the echoed timestamp itself, in ms).
    pub fn observe(&self, now: SimTime, vars: &mut StateVars) {
        if self.sowd == 0 {
            return;
        }
        let threshold = self.owd_min.wrapping_add(self.pct.wrapping_mul(self.owd_max.wrapping_sub(self.owd_min)) / 100);
        vars.put("tcp_lp.remote_hz", self.remote_hz as f64);
        vars.put("tcp_lp.smoothed_owd_ticks", (self.sowd >> 3) as f64);
        vars.put("tcp_lp.owd_min_ticks", self.owd_min as f64);
        vars.put("tcp_lp.owd_max_ticks", self.owd_max as f64);
        vars.put("tcp_lp.threshold_ticks", threshold as f64);
        vars.put("tcp_lp.early_congestion", ((self.sowd >> 3) > threshold) as u8 as f64);
        let left = match self.last_drop {
            0 => 0,
            d => (d + self.inference).saturating_sub(jiffies(now)),
        };
        vars.put("tcp_lp.inference_left_s", left as f64 * 1e-3);
    }

    /// `tcp_lp_remote_hz_estimator` (tcp_lp.c:136-177).
    fn remote_hz_estimate(&mut self, tsval: u64, tsecr: u64) -> u64 {
        let mut rhz = (self.remote_hz << 6) as i64;
        let known = self.remote_ref_time != 0 && self.local_ref_time != 0;
        if known && tsval != self.remote_ref_time && tsecr != self.local_ref_time {
            // Unsigned long arithmetic, then read as s64.
            let num = HZ.wrapping_mul(tsval.wrapping_sub(self.remote_ref_time));
            let mut m = (num / tsecr.wrapping_sub(self.local_ref_time)) as i64;
            m = m.wrapping_abs();
            if rhz > 0 {
                // 63/64 old + 1/64 new.
                m = m.wrapping_sub(rhz >> 6);
                rhz = rhz.wrapping_add(m);
            } else {
                rhz = m.wrapping_shl(6);
            }
        }
        if (rhz >> 6) > 0 {
            self.flag |= LP_VALID_RHZ;
        } else {
            self.flag &= !LP_VALID_RHZ;
        }
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u64
    }

    /// `tcp_lp_owd_calculator` (tcp_lp.c:189-212).
    fn owd(&mut self, tsval: u64, tsecr: u64) -> u64 {
        self.remote_hz = self.remote_hz_estimate(tsval, tsecr);
        let mut owd = 0i64;
        if self.flag & LP_VALID_RHZ != 0 {
            owd = tsval.wrapping_mul(LP_RESOL / self.remote_hz).wrapping_sub(tsecr.wrapping_mul(LP_RESOL / HZ)) as i64;
            owd = owd.wrapping_abs();
        }
        if owd > 0 {
            self.flag |= LP_VALID_OWD;
        } else {
            self.flag &= !LP_VALID_OWD;
        }
        owd as u64
    }

    /// `tcp_lp_rtt_sample` (tcp_lp.c:223-258).
    fn sample(&mut self, tsval: u64, tsecr: u64) {
        let mowd = self.owd(tsval, tsecr) as i64;
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < self.owd_min as i64 {
            self.owd_min = mowd as u64;
        }
        // The maximum forgets the largest sample: owd_max is the runner-up.
        if mowd > self.owd_max as i64 {
            if mowd > self.owd_max_rsv as i64 {
                self.owd_max = if self.owd_max_rsv == 0 { mowd as u64 } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd as u64;
            } else {
                self.owd_max = mowd as u64;
            }
        }
        // sowd = 7/8 sowd + 1/8 owd, kept times 8.
        self.sowd = if self.sowd != 0 { self.sowd.wrapping_add((mowd as u64).wrapping_sub(self.sowd >> 3)) } else { (mowd as u64) << 3 };
    }

    /// `tcp_lp_pkts_acked` (tcp_lp.c:268-321) on an ACK of new data: the sample,
    /// the inference and threshold tests and, past the threshold, the reaction
    /// (the window only outside loss recovery, whose window is the machinery's).
    fn pkts_acked(&mut self, w: &mut Window, ack: &Ack) {
        let now = jiffies(ack.now);
        // rx_opt as time_processing leaves it: zero without timestamps_.
        let (tsval, tsecr) = match ack.ts_echo {
            Some(e) => (stamp(e + ack.one_way_delay.unwrap_or(SimTime::ZERO)), stamp(e)),
            None => (0, 0),
        };
        // `last`, the acknowledged segment's recorded send time, is invalid for an
        // ACK that covers a retransmitted segment (FLAG_UNSURE_TSTAMP,
        // scoreboard1.cc:89) and 0 (invalid too) for a segment sent at time 0.
        if !ack.acks_retransmission && ack.ts_echo != Some(SimTime::ZERO) {
            self.sample(tsval, tsecr);
        }
        if now > tsecr {
            self.inference = self.rtts.wrapping_mul(now - tsecr);
        }
        if self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference {
            self.flag |= LP_WITHIN_INF;
        } else {
            self.flag &= !LP_WITHIN_INF;
        }
        let threshold = self.owd_min.wrapping_add(self.pct.wrapping_mul(self.owd_max.wrapping_sub(self.owd_min)) / 100);
        if self.sowd >> 3 < threshold {
            self.flag |= LP_WITHIN_THR;
            return;
        }
        self.flag &= !LP_WITHIN_THR;
        // The "FIXME" reset of the range, then the window: one packet within
        // the inference time-out, half (at least one) after it.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        if !ack.in_recovery {
            let cwnd = w.cwnd / w.mss;
            let reduced = if self.flag & LP_WITHIN_INF != 0 { 1 } else { (cwnd >> 1).max(1) };
            w.cwnd = reduced * w.mss;
        }
        self.last_drop = now;
    }

    /// One ACK, as tcp-linux.cc's `recv` hands it to the module.
    pub fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if ack.bytes_acked == 0 {
            return; // pkts_acked and cong_avoid run for new data only
        }
        self.growth.count(ack.bytes_acked);
        self.pkts_acked(w, ack);
        // tcp_lp_cong_avoid: Reno's growth outside the inference time-out; none
        // in recovery (tcp_may_raise_cwnd).
        if self.flag & LP_WITHIN_INF == 0 && !ack.in_recovery {
            self.growth.cong_avoid(w, ack.flight.div_ceil(w.mss));
        }
        self.loss.on_ack(w, ack);
    }

    /// `tcp_reno_ssthresh` on a loss or timeout, the counters cleared; a timeout
    /// enters the agent's Loss state.
    pub fn on_congestion(&mut self, w: &Window, event: Congestion) -> u64 {
        self.growth.reset();
        if let Congestion::Timeout { .. } = event {
            self.loss.on_timeout();
        }
        ((w.cwnd / w.mss) >> 1).max(2) * w.mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// An ACK of one new segment at `now` (ns), echoing a send time `sent` (ns) with
    /// a one-way delay `owd` (ns), `flight` segments out before it.
    fn ack(now: u64, sent: Option<u64>, owd: u64, flight: u64) -> Ack {
        Ack {
            now: SimTime(now),
            bytes_acked: MSS,
            bytes_delivered: MSS,
            one_way_delay: Some(SimTime(owd)),
            ts_echo: sent.map(SimTime),
            flight: flight * MSS,
            ..Ack::default()
        }
    }

    const M: u64 = 1_000_000;

    #[test]
    fn clocks_truncate_now_and_round_the_timestamps() {
        assert_eq!(jiffies(SimTime(1_999_999)), 1);
        assert_eq!((stamp(SimTime(1_499_999)), stamp(SimTime(1_500_000))), (1, 2));
    }

    #[test]
    fn remote_hz_estimate_follows_tcp_lp_c() {
        let mut c = Ns2::new(15, 3);
        // The first pair only records the references.
        assert_eq!(c.remote_hz_estimate(150, 100), 0);
        assert_eq!(c.flag & LP_VALID_RHZ, 0);
        // Equal TSval or TSecr: no estimate, references move.
        assert_eq!(c.remote_hz_estimate(150, 101), 0);
        // 1000·(152 − 150)/(102 − 101) = 2000: the first estimate is the ratio.
        assert_eq!(c.remote_hz_estimate(152, 102), 2000);
        assert_ne!(c.flag & LP_VALID_RHZ, 0);
        c.remote_hz = 2000;
        // 1000·1/2 = 500: 2000 + (500 − 2000)/64 in <<6 units: (128000 − 1500)/64 = 1976.
        assert_eq!(c.remote_hz_estimate(153, 104), 1976);
        c.remote_hz = 1976;
        // A TSecr going back (a retransmission's echo is later, an old one earlier):
        // ΔTSecr wraps to ~2^64 and the ratio is 0; the estimate decays by 1/64.
        assert_eq!(c.remote_hz_estimate(154, 103), (1976 * 64 - 1976) / 64);
    }

    #[test]
    fn one_way_delay_is_the_echo_above_1000_hz_and_the_delay_at_or_below() {
        let mut c = Ns2::new(15, 3);
        c.remote_ref_time = 1000;
        c.local_ref_time = 950;
        // Estimate 1000·(1052 − 1000)/(1001 − 950) = 1019: 1000/1019 = 0, the
        // "delay" is TSecr = 1001 ms.
        assert_eq!(c.owd(1052, 1001), 1001);
        assert_eq!(c.remote_hz, 1019);
        // An estimate of 1000 or a little less: the factor is 1, the delay is TSval − TSecr.
        let mut c = Ns2::new(15, 3);
        c.remote_hz = 990;
        c.remote_ref_time = 1000;
        c.local_ref_time = 950;
        // 1000·52/52 = 1000: 990·64 + 10 = 63370, >> 6 = 990.
        assert_eq!(c.owd(1052, 1002), 50);
        assert_eq!(c.remote_hz, 990);
        // 334–500: the factor is 2, the "delay" TSval + (TSval − TSecr).
        let mut c = Ns2::new(15, 3);
        c.remote_hz = 400;
        c.remote_ref_time = 1000;
        c.local_ref_time = 950;
        assert_eq!(c.owd(1052, 1002), 2 * 1052 - 1002);
    }

    #[test]
    fn without_timestamps_it_is_linux_reno_packet_for_packet() {
        let mut lp = Ns2::new(15, 3);
        let mut reno = LinuxReno::default();
        let mut a = Window { cwnd: 2 * MSS, ssthresh: 30 * MSS, mss: MSS };
        let mut b = a;
        for k in 1..2000u64 {
            let x = ack(k * M, None, 50 * M, a.cwnd / MSS);
            lp.on_ack(&mut a, &x);
            reno.count(MSS);
            let flight = b.cwnd / MSS;
            reno.cong_avoid(&mut b, flight);
            assert_eq!(a, b);
            assert_eq!(lp.flag, LP_WITHIN_THR); // no valid rate, no delay
        }
        // Slow start from 2 to 31 in 29 ACKs (cwnd 30 <= ssthresh 30 still grows),
        // then 31 + 32 + ... + 69 = 1950 of the other 1970 ACKs give 39 packets.
        assert_eq!(a.cwnd, 70 * MSS);
    }

    /// ACKs of a flow alone: segment `k` sent at k + 0.2 ms, one way 50.2 ms
    /// (TSval k + 50 ms, TSecr k), the ACK back 50.2 ms later; after `n` ACKs.
    fn steady(n: u64) -> (Ns2, Window) {
        let mut c = Ns2::new(15, 3);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 5 * MSS, mss: MSS };
        for k in 1..=n {
            let sent = k * M + 200_000;
            c.on_ack(&mut w, &ack(sent + 100_400_000, Some(sent), 50_200_000, 30));
        }
        (c, w)
    }

    #[test]
    fn a_steady_path_is_measured_in_whole_milliseconds() {
        let (c, w) = steady(3);
        // ACK 1 records the references; ACK 2 (TSval 52, TSecr 2) estimates
        // 1000·1/1 = 1000 and samples 52 − 2 = 50 ms. The first sample is the
        // whole range (sowd = min = max = threshold), and 50 < 50 is false: an
        // indication at once, the window halved, the range reset to
        // [sowd/8, sowd/4] = [50, 100], last drop at 102 ms.
        let l = c.line(&w);
        assert_eq!((l.remote_hz, l.owd_min, l.owd_max, l.sowd), (1000, 50, 100, 50));
        // Inference = 3·(now − TSecr) = 3·(103 − 3) ms.
        assert_eq!(c.inference(), 300);
        // ACK 3 is within the inference time-out and below the new threshold
        // (50 < 50 + 15·50/100 = 57): no growth; the window stays halved.
        assert_eq!(w.cwnd, 10 * MSS);
        assert_eq!(l.flag, LP_VALID_RHZ | LP_VALID_OWD | LP_WITHIN_THR | LP_WITHIN_INF);
    }

    #[test]
    fn a_delay_jump_reads_as_the_echo_and_floors_the_window_within_the_inference() {
        let (mut c, mut w) = steady(3);
        // Segment 4 meets a 20 ms longer queue: TSval 74, TSecr 4. The estimate
        // takes 1000·21/1: 1000 + (21000 − 1000)/64 = 1312 Hz, above 1000, so the
        // "delay" is TSecr: 4 ms. d_min falls to 4, the threshold to
        // 4 + 15·(100 − 4)/100 = 18, sowd/8 = (400 + 4 − 50)/8 = 44 passes it
        // within the inference time-out (124 − 102 < 3·(124 − 4)): one packet.
        let sent = 4 * M + 200_000;
        c.on_ack(&mut w, &ack(sent + 120_400_000, Some(sent), 70_200_000, 30));
        let l = c.line(&w);
        assert_eq!(l.remote_hz, 1312);
        assert_eq!(w.cwnd, MSS);
        // The range is reset around sowd/8.
        assert_eq!((l.owd_min, l.owd_max, l.sowd), (44, 88, 44));
        assert_eq!(c.inference(), 360);
        assert_eq!(c.last_drop, 124);
    }

    #[test]
    fn after_a_timeout_the_ack_of_all_it_left_outstanding_raises_the_window_to_ssthresh() {
        // Without timestamps (Reno): a timeout at cwnd 12 sets ssthresh to 6 packets;
        // the machinery restarts from one. Packets 10..20 were out.
        let mut lp = Ns2::new(15, 3);
        let w = Window { cwnd: 12 * MSS, ssthresh: u64::MAX, mss: MSS };
        let ssthresh = lp.on_congestion(&w, Congestion::Timeout { repeated: false });
        let mut w = Window { cwnd: MSS, ssthresh, mss: MSS };
        let ack_of = |una: u64, flight: u64, nxt: u64| Ack { snd_una: una * MSS, snd_nxt: nxt * MSS, ..ack(M, None, 0, flight) };
        lp.on_ack(&mut w, &ack_of(11, 10, 12)); // slow start: 1 -> 2
        assert_eq!(w.cwnd, 2 * MSS);
        // The ACK of packet 19 reaches the point (20): cwnd = min(6, 1 in flight + 3) = 4.
        lp.on_ack(&mut w, &ack_of(20, 9, 21));
        assert_eq!(w.cwnd, 4 * MSS);
    }

    #[test]
    fn congestion_halves_the_window_in_packets_and_clears_the_counters() {
        let mut c = Ns2::new(15, 3);
        let w = Window { cwnd: 9 * MSS + 500, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(c.on_congestion(&w, Congestion::Loss), 4 * MSS);
        let w = Window { cwnd: 3 * MSS, ..w };
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }), 2 * MSS);
        // After a timeout (cwnd 1) a second one sets ssthresh to 2, not held.
        let w = Window { cwnd: MSS, ..w };
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }), 2 * MSS);
    }
}
