//! ns-2.35's retransmission timer (`tcp/tcp.cc`): the round-trip time measured in
//! `tcpTick_` clock ticks on one timed segment per window, kept as integers with
//! 3 and 2 fraction bits, and the RTO as a multiple of the tick.
//!
//! * Timing (`output()`, tcp.cc:778-786; `newack()`, tcp.cc:1390-1402): when no
//!   segment is being timed (`rtt_active_`), the next segment of new data sent
//!   starts the timing (`rtt_seq_`, `rtt_ts_`); the first ACK that covers it gives
//!   the sample and ends the backoff (`t_backoff_ = 1`). Retransmissions are never
//!   timed (Karn), and a timeout or a fast retransmit abandons the timing
//!   (`reset_rtx_timer`, tcp.cc:965-973).
//! * Ticks (`rtt_update`, tcp.cc:565-609): a sample is the number of clock ticks
//!   between send and ACK, the clock ticking every `tcpTick_` from this sender's
//!   `boot_time_` (uniform in one tick, tcp.cc:470), at least 1; with timestamps,
//!   the echoed time rounded to ticks.
//! * Smoothing: `t_srtt_` (8 × srtt) and `t_rttvar_` (4 × rttvar) updated by
//!   shifts (gains 1/8 and 1/4, as RFC 6298), the difference held in a `short`;
//!   the first sample sets srtt = R, rttvar = R/2. `t_rtxcur_` = (srtt + 4 rttvar)
//!   ticks, rounded down to a whole tick.
//! * The timeout (`rtt_timeout`, tcp.cc:529-561, `rfc2988_` true): max(t_rtxcur_,
//!   minrto_) × t_backoff_, at most `maxrto_`, at least two ticks. Before any
//!   sample t_rtxcur_ is `rtxcur_init_`.
//! * Backoff (`rtt_backoff`, tcp.cc:611-627): t_backoff_ doubles while it is below
//!   64 or the timeout is below `maxrto_`; beyond 8, the smoothed RTT is thrown
//!   away (`t_srtt_ = 0`), so that the next sample starts the estimate afresh.
//!
//! Clock arithmetic is in integer nanoseconds, where ns-2 computes in doubles: the
//! tick count is exactly the number of tick boundaries between the send and the ACK.
use crate::engine::SimTime;

/// ns-2's fraction bits of `t_srtt_` (`T_SRTT_BITS`) and `t_rttvar_` (`T_RTTVAR_BITS`).
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
/// `rttvar_exp_`: the RTO adds 2^2 = 4 rttvar.
const RTTVAR_EXP: u32 = 2;

/// The state of ns-2's RTT estimate and retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct Ns2Ticks {
    /// `tcpTick_`, in nanoseconds.
    tick: u64,
    /// `boot_time_`: where in a tick this sender's clock started (in [0, tick)).
    boot: u64,
    /// `t_srtt_`: 8 × the smoothed RTT in ticks (0: no estimate).
    srtt: i32,
    /// `t_rttvar_`: 4 × the RTT variation in ticks.
    rttvar: i32,
    /// `t_backoff_`: the RTO's multiplier.
    backoff: u64,
    /// `t_rtxcur_`: the RTO before backoff and bounds.
    rtxcur: SimTime,
    min_rto: SimTime,
    max_rto: SimTime,
    /// `ts_option_`: samples from the timestamps every ACK echoes.
    timestamps: bool,
    /// `rtt_active_`: the end of the segment being timed (its ACK must reach it)
    /// and when it was sent (`rtt_ts_`).
    timed: Option<(u64, SimTime)>,
    /// The latest sample (`tao`), and the samples taken so far (wrapping), for traces.
    last: SimTime,
    samples: u32,
}

impl Ns2Ticks {
    /// A sender whose clock ticks every `tick` from `boot` (`rtt_init`, tcp.cc:520-527:
    /// `t_srtt_` 0, `t_rtxcur_` = `rtxcur_init_` = `initial`, `t_backoff_` 1).
    pub fn new(tick: SimTime, boot: SimTime, initial: SimTime, min_rto: SimTime, max_rto: SimTime, timestamps: bool) -> Self {
        debug_assert!(tick.0 > 0 && boot.0 < tick.0);
        Ns2Ticks { tick: tick.0, boot: boot.0, srtt: 0, rttvar: 0, backoff: 1, rtxcur: initial, min_rto, max_rto, timestamps, timed: None, last: SimTime::ZERO, samples: 0 }
    }

    /// Set `boot_time_` (in [0, tick)).
    pub fn set_boot(&mut self, boot: SimTime) {
        debug_assert!(boot.0 < self.tick);
        self.boot = boot.0 % self.tick;
    }

    /// A segment [seq, end) was sent; `new_data` if nothing at or beyond `seq` had
    /// been sent before. The first one sent while none is timed is timed.
    pub fn on_send(&mut self, end: u64, new_data: bool, now: SimTime) {
        if new_data && self.timed.is_none() {
            self.timed = Some((end, now));
        }
    }

    /// An ACK of new data up to `ack` (`newack`); `echo` is its timestamp's age
    /// when the connection uses timestamps.
    pub fn on_ack(&mut self, ack: u64, echo: Option<SimTime>, now: SimTime) {
        if self.timestamps {
            if let Some(r) = echo {
                self.update(r, now);
            }
        }
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                self.backoff = 1;
                self.timed = None;
                if !self.timestamps {
                    self.update(now - sent, now);
                }
            }
        }
    }

    /// A partial ACK of NewReno's recovery (`partialnewack`, tcp-newreno.cc:84-87):
    /// it ends the timing and the backoff if it covers the timed segment, without a sample.
    pub fn on_partial_ack(&mut self, ack: u64) {
        if self.timed.is_some_and(|(end, _)| ack >= end) {
            self.timed = None;
            self.backoff = 1;
        }
    }

    /// The timing is abandoned (`rtt_active_ = 0` in `reset_rtx_timer`).
    pub fn cancel_timing(&mut self) {
        self.timed = None;
    }

    /// `t_backoff_ = 1` (Sack1's partial ACKs, tcp-sack1.cc:219, 225).
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
    }

    /// `rtt_update(tao)`: a sample of `tao` taken `now`.
    fn update(&mut self, tao: SimTime, now: SimTime) {
        self.last = tao;
        self.samples = self.samples.wrapping_add(1);
        let ticks = if self.timestamps {
            // int(tao / tcp_tick_ + 0.5)
            (2 * tao.0 + self.tick) / (2 * self.tick)
        } else {
            // The tick boundaries between the send and now: tickoff = fmod(sendtime + boot_time_, tick).
            let tickoff = (now.0 - tao.0 + self.boot) % self.tick;
            (tao.0 + tickoff) / self.tick
        };
        let t_rtt = ticks.clamp(1, i32::MAX as u64) as i32;
        if self.srtt != 0 {
            // ns-2 keeps the difference in a `short`.
            let mut delta = (t_rtt - (self.srtt >> SRTT_BITS)) as i16;
            self.srtt += delta as i32;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = delta.wrapping_neg();
            }
            delta = (delta as i32 - (self.rttvar >> RTTVAR_BITS)) as i16;
            self.rttvar += delta as i32;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            self.srtt = t_rtt << SRTT_BITS;
            self.rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        let rto_ticks = ((self.rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.srtt) >> SRTT_BITS;
        self.rtxcur = SimTime(rto_ticks as u64 * self.tick);
    }

    /// `rtt_timeout()`: the timeout the timer is set to now.
    pub fn rto(&self) -> SimTime {
        // rfc2988_: minrto_ applies before the backoff.
        let base = if self.rtxcur < self.min_rto { self.min_rto } else { self.rtxcur };
        let timeout = base.saturating_mul(self.backoff).min(self.max_rto);
        timeout.max(SimTime(2 * self.tick))
    }

    /// `rtt_backoff()`: the timer expired.
    pub fn back_off(&mut self) {
        if self.backoff < 64 || self.rto() < self.max_rto {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.rttvar += self.srtt >> SRTT_BITS;
            self.srtt = 0;
        }
    }

    /// The smoothed RTT (None before the first sample, or after a backoff beyond 8).
    pub fn srtt(&self) -> Option<SimTime> {
        (self.srtt != 0).then(|| SimTime((self.srtt >> SRTT_BITS) as u64 * self.tick))
    }

    /// The smoothed RTT and its variation in nanoseconds, as the ticks give them
    /// (`t_srtt_` / 8 and `t_rttvar_` / 4 ticks; None as for `srtt`).
    pub fn smoothed(&self) -> Option<(f64, f64)> {
        let tick = self.tick as f64;
        (self.srtt != 0).then(|| (self.srtt as f64 / 8.0 * tick, self.rttvar as f64 / 4.0 * tick))
    }

    /// The latest sample, and how many samples were taken (wrapping at 2^32).
    pub fn latest(&self) -> (SimTime, u32) {
        (self.last, self.samples)
    }

    /// `t_backoff_`.
    pub fn backoff(&self) -> u64 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: SimTime = SimTime::from_millis(10);

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn est(boot_ms: u64) -> Ns2Ticks {
        Ns2Ticks::new(TICK, ms(boot_ms), ms(3000), ms(200), ms(60_000), false)
    }

    /// Time segment [0, 1000) sent at `sent` and acknowledged at `acked`.
    fn sample(e: &mut Ns2Ticks, sent: SimTime, acked: SimTime) {
        e.on_send(1000, true, sent);
        e.on_ack(1000, None, acked);
    }

    #[test]
    fn samples_count_tick_boundaries_from_the_boot_phase() {
        // Clock phase 4 ms: ticks at 6, 16, 26, ... ms. A 25 ms round trip sent at
        // 0 crosses 6 and 16 (2 ticks); sent at 5 ms it crosses 6, 16 and 26 (3).
        let mut a = est(4);
        sample(&mut a, ms(0), ms(25));
        assert_eq!(a.srtt(), Some(ms(20)));
        let mut b = est(4);
        sample(&mut b, ms(5), ms(30));
        assert_eq!(b.srtt(), Some(ms(30)));
        // A round trip shorter than a tick still counts 1.
        let mut c = est(0);
        sample(&mut c, ms(1), ms(3));
        assert_eq!(c.srtt(), Some(ms(10)));
    }

    #[test]
    fn rto_is_srtt_plus_four_rttvar_in_ticks_with_minrto_and_backoff() {
        let mut e = est(0);
        assert_eq!(e.rto(), ms(3000)); // rtxcur_init_
        // First sample 5 ticks: t_srtt_ = 40, t_rttvar_ = 10; rtxcur = (80 + 40) >> 3 = 15 ticks.
        sample(&mut e, ms(0), ms(50));
        assert_eq!((e.srtt, e.rttvar), (40, 10));
        assert_eq!(e.rtxcur, ms(150));
        // 150 ms is below minrto_ (200 ms): the timeout is 200 ms.
        assert_eq!(e.rto(), ms(200));
        // Second sample 13 ticks: delta = 13 - 5 = 8, t_srtt_ = 48; |delta| - (10 >> 2) = 6,
        // t_rttvar_ = 16; rtxcur = (16 << 3 = 128, + 48 = 176) >> 3 = 22 ticks.
        sample(&mut e, ms(1000), ms(1130));
        assert_eq!((e.srtt, e.rttvar), (48, 16));
        assert_eq!(e.rto(), ms(220));
        // Backoff doubles the 220 ms (rfc2988_: minrto_ applies before the multiplier).
        e.back_off();
        assert_eq!((e.backoff(), e.rto()), (2, ms(440)));
        e.back_off();
        e.back_off();
        assert_eq!((e.backoff(), e.rto()), (8, ms(1760)));
        // Beyond 8 the smoothed RTT is thrown away; the timeout keeps its base.
        e.back_off();
        assert_eq!((e.backoff(), e.srtt(), e.rto()), (16, None, ms(3520)));
        // The next sample starts afresh: 7 ticks, srtt 7, rttvar 3.5 -> (56 + 14*8=112) >> 3 = 21 ticks.
        sample(&mut e, ms(2000), ms(2070));
        assert_eq!((e.backoff(), e.srtt(), e.rto()), (1, Some(ms(70)), ms(210)));
    }

    #[test]
    fn backoff_caps_at_maxrto_and_the_floor_is_two_ticks() {
        let mut e = Ns2Ticks::new(TICK, SimTime::ZERO, ms(1000), ms(1), ms(60_000), false);
        for _ in 0..10 {
            e.back_off();
        }
        // 1 s × 64 = 64 s > 60 s: capped, and the multiplier stops at 64.
        assert_eq!((e.backoff(), e.rto()), (64, ms(60_000)));
        // A 1-tick RTT with a 1 ms minrto_: rtxcur = (1 + 4*0.5) = 3 ticks; 2 ticks is the floor.
        let mut f = Ns2Ticks::new(TICK, SimTime::ZERO, ms(1000), ms(1), ms(60_000), false);
        sample(&mut f, ms(0), ms(5));
        assert_eq!(f.rto(), ms(30));
        let g = Ns2Ticks::new(TICK, SimTime::ZERO, ms(5), ms(1), ms(60_000), false);
        assert_eq!(g.rto(), ms(20));
    }

    #[test]
    fn one_timed_segment_at_a_time_and_karn() {
        let mut e = est(0);
        e.on_send(1000, true, ms(0)); // timed
        e.on_send(2000, true, ms(1)); // not: one is being timed
        e.on_ack(1000, None, ms(100)); // covers the timed one: 10 ticks
        assert_eq!(e.srtt(), Some(ms(100)));
        e.on_ack(2000, None, ms(500)); // the second was never timed: no sample
        assert_eq!(e.srtt(), Some(ms(100)));
        // A retransmission is never timed, and a timeout abandons the timing
        // without ending the backoff.
        e.on_send(3000, true, ms(600));
        e.back_off();
        e.cancel_timing();
        e.on_send(3000, false, ms(900));
        e.on_ack(3000, None, ms(950));
        assert_eq!((e.srtt(), e.backoff()), (Some(ms(100)), 2));
        // NewReno's partial ACK ends timing and backoff without a sample.
        e.on_send(4000, true, ms(1000));
        e.on_partial_ack(4000);
        assert_eq!((e.srtt(), e.backoff(), e.timed), (Some(ms(100)), 1, None));
    }

    #[test]
    fn timestamps_sample_every_ack_rounded_to_ticks() {
        let mut e = Ns2Ticks::new(TICK, ms(3), ms(3000), ms(200), ms(60_000), true);
        e.on_ack(1000, Some(ms(44)), ms(100)); // 4.4 ticks -> 4
        assert_eq!(e.srtt(), Some(ms(40)));
        let mut f = Ns2Ticks::new(TICK, ms(3), ms(3000), ms(200), ms(60_000), true);
        f.on_ack(1000, Some(ms(45)), ms(100)); // 4.5 ticks -> 5
        assert_eq!(f.srtt(), Some(ms(50)));
    }
}
