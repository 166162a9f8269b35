//! ns-2.35's `Agent/TFRC` (tcp/tfrc.cc) with ns-default.tcl's defaults, a
//! greedy sender (`SndrType_ 0`): `df_` 0.95, `tcp_tick_` 0.1, `InitRate_` 300
//! bytes/s, `ssmult_` 2, `bval_` 1, `ca_` 1, `minrto_` 0, `rate_init_option_` 2
//! (RFC 3390's initial window), `slow_increase_` 1, `maxHeavyRounds_` 0,
//! `conservative_` 0, `srtt_init_` 0, `rttvar_init_` 12, `rtxcur_init_` 6,
//! `overhead_` 0 (no dithering).
//!
//! It times its own datagrams as ns-2 does (`RateControl::next_send`): every
//! send schedules the next one `size/xrate` later, xrate being the rate scaled
//! by sqrt(mean RTT)/sqrt(last RTT) (`ca_`) or, in slow start after the second
//! round, stepping from the old rate to the new over one RTT (`slow_increase_`);
//! a report in slow start, and every no-feedback expiry, sends one at once.
use super::{p_to_b, DataHeader, SMALLFLOAT, TCP_TICK};
use crate::engine::SimTime;
use crate::transport::state::StateVars;
use crate::transport::rate::feedback::Report;

const DF: f64 = 0.95;
const INIT_RATE: f64 = 300.0;
const SSMULT: f64 = 2.0;
const BVAL: f64 = 1.0;
/// `rttvar_init_` (s). (`rtxcur_init_` 6 s never reaches the equation: tzero is
/// 0 until the first report's `update_rtt`.)
const RTTVAR_INIT: f64 = 12.0;
/// `T_SRTT_BITS`, `T_RTTVAR_BITS`, `rttvar_exp_`.
const SRTT_BITS: i32 = 3;
const RTTVAR_BITS: i32 = 2;
const RTTVAR_EXP: i32 = 2;

/// `rate_change_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    OutOfSlowStart,
    CongAvoid,
    RateDecrease,
}

/// ns-2's TFRC sender (`TfrcAgent`); times in seconds, rates in bytes/s.
#[derive(Clone, Debug)]
pub struct Ns2Sender {
    /// `size_`, bytes.
    size: f64,
    rate: f64,
    oldrate: f64,
    delta: f64,
    phase: Phase,
    urgent: bool,
    /// `rtt_` (the df_ filter), `sqrtrtt_`, `rttcur_` (the last sample).
    rtt: f64,
    sqrtrtt: f64,
    rttcur: f64,
    /// `tzero_`: the equation's RTO, the TCP-like estimate below.
    tzero: f64,
    last_change: f64,
    maxrate: f64,
    ss_maxrate: f64,
    round_id: u32,
    heavyrounds: u32,
    /// The TCP estimator in `tcp_tick_` ticks: `t_srtt_` (×8), `t_rttvar_` (×4).
    t_srtt: i32,
    t_rttvar: i32,
    rcvrate: f64,
    /// The loss event rate and receive rate (bytes/s) of the latest report
    /// (for a trace).
    p: f64,
    x_recv: f64,
    first_report: bool,
    /// When the next datagram leaves, and when the no-feedback timer expires.
    next_send: SimTime,
    nofeedback: SimTime,
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

impl Ns2Sender {
    /// A sender before its `start()`.
    pub fn new() -> Self {
        Ns2Sender {
            size: 1000.0,
            rate: INIT_RATE,
            oldrate: INIT_RATE,
            delta: 0.0,
            phase: Phase::SlowStart,
            urgent: true,
            rtt: 0.0,
            sqrtrtt: 1.0,
            rttcur: 1.0,
            tzero: 0.0,
            last_change: 0.0,
            maxrate: 0.0,
            ss_maxrate: 0.0,
            round_id: 0,
            heavyrounds: 0,
            t_srtt: 0,
            t_rttvar: ((RTTVAR_INIT / TCP_TICK) as i32) << RTTVAR_BITS,
            rcvrate: 0.0,
            p: 0.0,
            x_recv: 0.0,
            first_report: false,
            next_send: SimTime::MAX,
            nofeedback: SimTime::MAX,
        }
    }

    /// `start()` (tfrc.cc:191-224): the first datagram at once, the no-feedback
    /// timer at 2·size/rate.
    pub fn start(&mut self, now: SimTime, packet_bytes: u32) {
        self.size = packet_bytes as f64;
        self.next_send = now;
        self.nofeedback = now + SimTime::from_secs_f64(2.0 * self.size / self.rate);
    }

    /// The sending rate (bytes/s).
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The sending rate, the latest reported loss event rate and the receive
    /// rate it reported, for a trace (the names RFC 5348's sender uses: the
    /// rate is `rate_`, bit/s).
    pub fn observe(&self, vars: &mut StateVars) {
        vars.put("tfrc.x_bps", 8.0 * self.rate);
        vars.put("tfrc.p", self.p);
        if self.first_report {
            vars.put("tfrc.x_recv_bps", 8.0 * self.x_recv);
        }
    }

    /// When the next datagram leaves.
    pub fn next_send(&self) -> SimTime {
        self.next_send
    }

    /// When the no-feedback timer expires.
    pub fn deadline(&self) -> SimTime {
        self.nofeedback
    }

    /// The RTT estimate datagrams carry (`tfrch->rtt`; none before the first report).
    pub fn rtt(&self) -> Option<SimTime> {
        (self.rtt > 0.0).then(|| SimTime::from_secs_f64(self.rtt))
    }

    /// The rest of `hdr_tfrc`: round id, tzero, urgent flag.
    pub fn header(&self) -> DataHeader {
        DataHeader { round_id: self.round_id, tzero_ticks: (self.tzero / TCP_TICK).round() as u32, urgent: self.urgent }
    }

    /// `nextpkt()` after its `sendpkt()` (tfrc.cc:235-280): the next datagram
    /// `size/xrate` later (none while xrate is below SMALLFLOAT).
    pub fn on_sent(&mut self, now: SimTime) {
        let xrate = if self.round_id > 2 && self.phase == Phase::SlowStart && self.oldrate + SMALLFLOAT < self.rate {
            self.oldrate += self.delta;
            self.oldrate
        } else {
            self.rate * self.sqrtrtt / self.rttcur.sqrt()
        };
        self.next_send = if xrate > SMALLFLOAT { now + SimTime::from_secs_f64((self.size / xrate).max(SMALLFLOAT)) } else { SimTime::MAX };
    }

    /// `update_rtt` (tfrc.cc:285-330): the TCP estimator for tzero, in ticks, and
    /// the df_ filters of the RTT and its square root.
    fn update_rtt(&mut self, sample: f64) {
        let t_rtt = ((sample / TCP_TICK + 0.5) as i32).max(1);
        if self.t_srtt != 0 {
            // `register short rtt_delta`.
            let mut d = (t_rtt - (self.t_srtt >> SRTT_BITS)) as i16 as i32;
            self.t_srtt += d;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            d = (d.abs() - (self.t_rttvar >> RTTVAR_BITS)) as i16 as i32;
            self.t_rttvar += d;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = t_rtt << SRTT_BITS;
            self.t_rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        let ticks = ((self.t_rttvar << (RTTVAR_EXP + (SRTT_BITS - RTTVAR_BITS))) + self.t_srtt) >> SRTT_BITS;
        self.tzero = ticks as f64 * TCP_TICK;
        if self.rtt > 0.0 {
            self.rtt = DF * self.rtt + (1.0 - DF) * sample;
            self.sqrtrtt = DF * self.sqrtrtt + (1.0 - DF) * sample.sqrt();
        } else {
            self.rtt = sample;
            self.sqrtrtt = sample.sqrt();
        }
        self.rttcur = sample;
    }

    /// A report (`TfrcAgent::recv`, tfrc.cc:335-420).
    pub fn on_feedback(&mut self, now: SimTime, r: &Report) {
        let t = secs(now);
        let received = r.x_recv / self.size; // packets per second
        self.round_id += 1;
        self.urgent = false;
        if self.round_id > 1 && received > 0.0 {
            self.ss_maxrate = 2.0 * received * self.size;
            self.maxrate = 2.0 * received * self.size;
        } else {
            self.ss_maxrate = 0.0;
            self.maxrate = 0.0;
        }
        self.update_rtt(t - secs(r.echo));
        self.rcvrate = p_to_b(r.p, self.rtt, self.tzero, self.size, BVAL);
        self.p = r.p;
        self.x_recv = r.x_recv;
        self.rearm_nofeedback(now);
        if !self.first_report {
            self.first_report = true;
            self.slowstart(t);
            self.next_send = now;
        } else if self.phase == Phase::SlowStart {
            if r.p > 0.0 {
                self.phase = Phase::OutOfSlowStart;
                self.rate = self.rcvrate;
                self.oldrate = self.rcvrate;
            } else {
                self.slowstart(t);
                self.next_send = now;
            }
        } else if self.rcvrate > self.rate {
            self.increase_rate(t);
        } else {
            self.decrease_rate(t);
        }
    }

    /// No feedback for max(2·rtt, 2·size/rate): halve the rate
    /// (`reduce_rate_on_no_feedback`, tfrc.cc:600-640), mark datagrams urgent,
    /// count a round, send one at once.
    pub fn on_nofeedback(&mut self, now: SimTime) {
        if self.phase != Phase::SlowStart {
            self.phase = Phase::RateDecrease;
        }
        self.rate *= 0.5;
        self.urgent = true;
        self.round_id += 1;
        self.rearm_nofeedback(now);
        self.next_send = now;
    }

    fn rearm_nofeedback(&mut self, now: SimTime) {
        let t = (2.0 * self.rtt).max(2.0 * self.size / self.rate);
        self.nofeedback = now + SimTime::from_secs_f64(t);
    }

    /// RFC 3390's initial window in packets (`rfc3390`, tfrc.cc:425-435).
    fn initial_window(&self) -> f64 {
        if self.size <= 1095.0 {
            4.0
        } else if self.size < 2190.0 {
            3.0
        } else {
            2.0
        }
    }

    /// `slowstart()` (tfrc.cc:455-505): the initial window's rate in the first
    /// rounds, then ssmult_ per RTT up to twice the receive rate. The sender is
    /// never data-limited; ns-2's `lastlimited_` stays 0, which the idleFix_ test
    /// still meets within 1.5 RTT of time 0.
    fn slowstart(&mut self, t: f64) {
        let initrate = self.initial_window() * self.size / self.rtt;
        let recently_limited = 0.0 > t - 1.5 * self.rtt;
        if self.round_id <= 1 || (self.round_id == 2 && self.initial_window() > 1.0) {
            self.raise_to(initrate, t);
        } else if self.ss_maxrate > 0.0 {
            if recently_limited && self.ss_maxrate < initrate {
                self.raise_to(initrate, t);
            } else if self.rate < self.ss_maxrate && t - self.last_change > self.rtt {
                self.oldrate = self.rate;
                self.rate = (SSMULT * self.rate).min(self.ss_maxrate).max(self.size / self.rtt);
                self.delta = (self.rate - self.oldrate) / (self.rate * self.rtt / self.size);
                self.last_change = t;
            } else if self.rate > self.ss_maxrate {
                self.rate = self.ss_maxrate / 2.0;
                self.oldrate = self.rate;
                self.delta = 0.0;
                self.last_change = t;
            }
        } else {
            self.oldrate = self.rate;
            self.rate = self.size / self.rtt;
            self.delta = 0.0;
            self.last_change = t;
        }
    }

    /// The rate at least `floor`, stepped over one RTT from the old one.
    fn raise_to(&mut self, floor: f64, t: f64) {
        self.oldrate = self.rate;
        self.rate = self.rate.max(floor);
        self.delta = (self.rate - self.oldrate) / (self.rate * self.rtt / self.size);
        self.last_change = t;
    }

    /// `increase_rate` (tfrc.cc:510-545): at most one packet per RTT (two after a
    /// long silence), capped by max(maxrate_, one packet per RTT) and the
    /// equation's rate.
    fn increase_rate(&mut self, t: f64) {
        let mult = ((t - self.last_change) / self.rtt).min(2.0);
        self.rate += self.size / self.rtt * mult;
        let recently_limited = 0.0 > t - 1.5 * self.rtt;
        let floor = if recently_limited { self.initial_window() * self.size / self.rtt } else { self.size / self.rtt };
        let maximum = self.maxrate.max(floor).min(self.rcvrate);
        self.rate = self.rate.min(maximum);
        self.phase = Phase::CongAvoid;
        self.last_change = t;
        self.heavyrounds = 0;
    }

    /// `decrease_rate` (tfrc.cc:550-570): straight to the equation's rate, capped by
    /// max(maxrate_, one packet per RTT) once `maxHeavyRounds_` (0) rounds exceed it.
    fn decrease_rate(&mut self, t: f64) {
        self.rate = self.rcvrate;
        let maximum = self.maxrate.max(self.size / self.rtt);
        if self.rate > maximum {
            self.heavyrounds += 1;
        } else {
            self.heavyrounds = 0;
        }
        if self.heavyrounds > 0 {
            self.rate = self.rate.min(maximum);
        }
        self.phase = Phase::RateDecrease;
        self.last_change = t;
    }
}

impl Default for Ns2Sender {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn report(echo_s: f64, x_recv: f64, p: f64) -> Report {
        Report { echo: SimTime::from_secs_f64(echo_s), x_recv, p, rate_bps: 0.0 }
    }

    #[test]
    fn it_starts_at_300_bytes_per_second_and_opens_to_four_packets_per_rtt() {
        let mut s = Ns2Sender::new();
        s.start(SimTime::from_secs(10), 1000);
        assert_eq!(s.next_send(), SimTime::from_secs(10));
        s.on_sent(SimTime::from_secs(10));
        // size/rate = 1000/300 s later; no feedback after twice that.
        assert_eq!(s.next_send(), SimTime::from_secs(10) + SimTime::from_secs_f64(1000.0 / 300.0));
        assert_eq!(s.deadline(), SimTime::from_secs(10) + SimTime::from_secs_f64(2000.0 / 300.0));
        assert_eq!(s.header(), DataHeader { round_id: 0, tzero_ticks: 0, urgent: true });
        // The first report 100 ms later: RTT 0.1 s = 1 tick: t_srtt = 8, t_rttvar = 2,
        // tzero = ((2 << 3) + 8) >> 3 = 3 ticks.
        s.on_feedback(SimTime::from_secs_f64(10.1), &report(10.0, 0.0, 0.0));
        assert!(close(s.rtt, 0.1) && close(s.tzero, 0.3), "{} {}", s.rtt, s.tzero);
        // Slow start's first round: rate = 4 packets per RTT, 40 kB/s; a datagram at once.
        assert!(close(s.rate(), 40_000.0));
        assert_eq!(s.next_send(), SimTime::from_secs_f64(10.1));
        assert_eq!(s.header().round_id, 1);
        assert!(!s.header().urgent);
        // No feedback for max(2·0.1, 2·1000/300) = 6.67 s: the rate before this report's.
        assert_eq!(s.deadline(), SimTime::from_secs_f64(10.1) + SimTime::from_secs_f64(2.0 * s.rtt.max(1000.0 / 300.0)));
    }

    #[test]
    fn slow_start_doubles_per_rtt_up_to_twice_the_receive_rate_and_a_loss_ends_it() {
        let mut s = Ns2Sender::new();
        s.start(SimTime::ZERO, 1000);
        s.on_feedback(SimTime::from_secs_f64(10.1), &report(10.0, 0.0, 0.0));
        s.on_feedback(SimTime::from_secs_f64(10.2), &report(10.1, 40_000.0, 0.0)); // round 2: the initial rate again
        assert!(close(s.rate(), 40_000.0));
        // Round 3, more than an RTT after the last change: ×2, under 2·40 kB/s.
        s.on_feedback(SimTime::from_secs_f64(10.31), &report(10.21, 40_000.0, 0.0));
        assert!(close(s.rate(), 80_000.0));
        // Within an RTT of that change: unchanged.
        s.on_feedback(SimTime::from_secs_f64(10.35), &report(10.25, 45_000.0, 0.0));
        assert!(close(s.rate(), 80_000.0));
        // The rate above twice the receive rate: half of that.
        s.on_feedback(SimTime::from_secs_f64(10.5), &report(10.4, 30_000.0, 0.0));
        assert!(close(s.rate(), 30_000.0));
        // A loss: out of slow start at the equation's rate.
        s.on_feedback(SimTime::from_secs_f64(10.6), &report(10.5, 30_000.0, 0.01));
        let want = p_to_b(0.01, s.rtt, s.tzero, 1000.0, 1.0);
        assert_eq!(s.rate(), want);
        assert_eq!(s.phase, Phase::OutOfSlowStart);
    }

    #[test]
    fn avoidance_adds_a_packet_per_rtt_and_decreases_to_the_equation() {
        let mut s = Ns2Sender::new();
        s.start(SimTime::ZERO, 1000);
        s.on_feedback(SimTime::from_secs_f64(0.1), &report(0.0, 0.0, 0.0));
        s.on_feedback(SimTime::from_secs_f64(0.2), &report(0.1, 40_000.0, 0.001));
        // Out of slow start at the equation's rate for p = 0.001. 0.15 s later a lower
        // p puts the equation above the rate: + size/rtt·min(0.15/rtt, 2), capped by
        // 2·X_recv = 100 kB/s (and the equation).
        let (rate, rtt) = (s.rate(), s.rtt);
        s.on_feedback(SimTime::from_secs_f64(0.35), &report(0.25, 50_000.0, 0.0005));
        let step = 1000.0 / s.rtt * (0.15 / s.rtt).min(2.0);
        assert!(rtt > 0.0);
        assert_eq!(s.rate(), (rate + step).min(100_000.0).min(s.rcvrate));
        assert_eq!(s.phase, Phase::CongAvoid);
        // The equation below the rate: straight to it.
        s.on_feedback(SimTime::from_secs_f64(0.45), &report(0.35, 50_000.0, 0.2));
        assert_eq!(s.rate(), s.rcvrate);
        assert_eq!(s.phase, Phase::RateDecrease);
        // No feedback: half, urgent, a new round, a datagram at once.
        let (rate, round) = (s.rate(), s.round_id);
        s.on_nofeedback(SimTime::from_secs(1));
        assert_eq!((s.rate(), s.round_id, s.urgent, s.next_send()), (rate / 2.0, round + 1, true, SimTime::from_secs(1)));
    }

    #[test]
    fn datagrams_are_spaced_by_the_sqrt_rtt_adjusted_rate() {
        let mut s = Ns2Sender::new();
        s.start(SimTime::ZERO, 1000);
        s.on_feedback(SimTime::from_secs_f64(0.1), &report(0.0, 0.0, 0.0));
        // rtt 0.1, sqrtrtt sqrt(0.1), rttcur 0.1: factor 1; 40 kB/s: 25 ms apart.
        s.on_sent(SimTime::from_secs_f64(0.1));
        assert_eq!(s.next_send(), SimTime::from_secs_f64(0.1) + SimTime::from_secs_f64(0.025));
        // A longer sample (0.2 s): rttcur 0.2, sqrtrtt = 0.95·sqrt(0.1) + 0.05·sqrt(0.2).
        s.on_feedback(SimTime::from_secs_f64(0.4), &report(0.2, 40_000.0, 0.01));
        s.on_sent(SimTime::from_secs_f64(0.4));
        let factor = (0.95 * 0.1f64.sqrt() + 0.05 * 0.2f64.sqrt()) / 0.2f64.sqrt();
        let gap = 1000.0 / (s.rate() * factor);
        assert_eq!(s.next_send(), SimTime::from_secs_f64(0.4) + SimTime::from_secs_f64(gap));
    }
}
