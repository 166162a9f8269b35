//! FAST TCP (Jin, Wei, Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", Infocom 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 14(6), 2006),
//! with the α adaptation of Algorithm 1 of Tang, Wei, Low, Chiang,
//! "Heterogeneous congestion control: efficiency, fairness and design"
//! (`../shared/papers/heterogeneous-congestion-control.md`, §II-III, §VII).
//!
//! Where the papers leave a detail open this file follows the ns-2 FAST module
//! (Cui and Andrew, University of Melbourne, v1.1.3, `tcp/tcp-fast.cc` in ns-2.35,
//! defaults in `tcl/lib/ns-default.tcl`), the public ns-2 FAST (the heterogeneous
//! paper ran ns-2 but does not name its module). Every rule below names its source; the
//! deviations are listed in `docs/protocols.md` (FAST TCP).
//!
//! The window is kept in the machinery's bytes; FAST's arithmetic is in packets
//! (`cwnd / mss`), as the papers write it, and α is a number of packets.
use super::{Ack, Congestion, CongestionControl, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::settings::readers::{duration_or, positive_duration, positive_or};
use crate::settings::{err, Duration, Result, Table};
use crate::transport::state::StateVars;
use serde::{Deserialize, Serialize};

/// Default α: 50 packets, the value of every FAST flow in the heterogeneous
/// paper's simulations (§II-A Example 1a, §II-B Example 2a). ns-2's default is 100.
pub const DEFAULT_ALPHA: f64 = 50.0;
/// Default γ = 0.5 (ToN §III window control; ns-2 `gamma_ 0.5`).
pub const DEFAULT_GAMMA: f64 = 0.5;
/// Default window update period: 20 ms (heterogeneous paper §II-A eq. (1) and
/// Algorithm 1 step 2, "every window update interval (20ms by default)").
pub const DEFAULT_UPDATE_INTERVAL: SimTime = SimTime::from_millis(20);
/// Default multiplicative-increase threshold: 0.75 ms of average queueing delay
/// (ns-2 `mi_threshold_ 0.00075`).
pub const DEFAULT_MI_THRESHOLD: SimTime = SimTime(750_000);
/// Default α update interval of Algorithm 1: 2 minutes (§II, Algorithm 1 step 1).
pub const DEFAULT_ADAPT_INTERVAL: SimTime = SimTime::from_secs(120);
/// Default δ of Algorithm 1: 0.1 (§II, "δ is 0.1 by default").
pub const DEFAULT_DELTA: f64 = 0.1;
/// Default time without loss after which α updates stop: 10 s (§VII Experiment 4,
/// "ten seconds by default").
pub const DEFAULT_STOP_AFTER_NO_LOSS: SimTime = SimTime::from_secs(10);
/// Largest α accepted (packets): keeps every window far inside 64 bits.
const MAX_ALPHA: f64 = 1e9;
/// The window never goes below 2 packets by FAST's update (ns-2 `fast_calc_cwnd`:
/// `if (target_cwnd<2) target_cwnd=2`).
const MIN_WINDOW_PACKETS: f64 = 2.0;
/// Largest weight of the RTT average (ToN §III estimation: η = min{3/w, 1/4}).
const MAX_RTT_WEIGHT: f64 = 0.25;

/// FAST TCP's parameters (the canonical configuration's `params`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FastParams {
    /// α: packets each flow keeps queued in equilibrium (the initial α with adaptation).
    pub alpha: f64,
    /// γ ∈ (0, 1]: the update's step towards the target window.
    pub gamma: f64,
    /// Window update period in ns; `None`: once per round trip.
    pub update_interval_ns: Option<u64>,
    /// Multiplicative increase (FAST's slow start) while the average queueing
    /// delay is below this (ns); with 0, only until the first RTT sample.
    pub mi_threshold_ns: u64,
    /// Halve the window on an ECN-Echo (once per window of data); false ignores marks.
    pub react_to_ecn: bool,
    /// Algorithm 1's α adaptation; `None`: α stays fixed.
    pub adaptation: Option<AdaptationParams>,
    /// baseRTT known from the start (ns), as the fluid model assumes the propagation
    /// delay known; RTT samples below it still lower it. `None` (the default, and
    /// FAST as specified): the smallest RTT sample, which overestimates the
    /// propagation delay when the flow starts into a standing queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_rtt_ns: Option<u64>,
}

/// Algorithm 1's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptationParams {
    /// w in ns (the paper's w is in seconds: α* = q/(l·w), q in seconds, l a fraction).
    pub w_ns: u64,
    /// α update interval (ns).
    pub interval_ns: u64,
    /// δ ∈ (0, 1): α moves by at most a factor 1 ± δ per interval.
    pub delta: f64,
    /// α updates stop while no loss was seen for this long (ns); `None`: never stop.
    pub stop_after_no_loss_ns: Option<u64>,
    /// ECN marks count as losses in l (and for the stop rule): the common price of
    /// Theorem 6 where the links mark (Example 2b). Absent from older configurations: true.
    #[serde(default = "yes")]
    pub count_marks: bool,
}

fn yes() -> bool {
    true
}

impl Default for FastParams {
    fn default() -> Self {
        FastParams {
            alpha: DEFAULT_ALPHA,
            gamma: DEFAULT_GAMMA,
            update_interval_ns: Some(DEFAULT_UPDATE_INTERVAL.0),
            mi_threshold_ns: DEFAULT_MI_THRESHOLD.0,
            react_to_ecn: false,
            adaptation: None,
            base_rtt_ns: None,
        }
    }
}




impl AdaptationParams {
    /// `adaptation = { w = "125s", interval = "2min", delta = 0.1, stop_after_no_loss = "10s" }`.
    fn read(mut t: Table) -> Result<AdaptationParams> {
        let w = positive_duration(&mut t, "w", None, "Algorithm 1's w, e.g. \"125s\" (α* = q/(l·w))")?;
        let interval = positive_duration(&mut t, "interval", Some(DEFAULT_ADAPT_INTERVAL), "the α update interval")?;
        let delta: f64 = t.or("delta", DEFAULT_DELTA)?;
        if !(delta > 0.0 && delta < 1.0) {
            return err(t.key_path("delta"), format!("expected a number between 0 and 1 (exclusive), got {delta}"));
        }
        let stop = duration_or(&mut t, "stop_after_no_loss", "never", Some(DEFAULT_STOP_AFTER_NO_LOSS))?;
        let count_marks = t.or("count_marks", true)?;
        t.finish("FAST's adaptation")?;
        Ok(AdaptationParams { w_ns: w.0, interval_ns: interval.0, delta, stop_after_no_loss_ns: stop.map(|s| s.0), count_marks })
    }
}

/// Algorithm 1's running state: the statistics of the current α update interval.
#[derive(Clone, Debug)]
struct Adaptation {
    /// w (seconds).
    w: f64,
    interval: SimTime,
    delta: f64,
    stop_after: Option<SimTime>,
    /// End of the current interval.
    next: SimTime,
    /// Sum of the queueing delays RTT − baseRTT of the interval's RTT samples (s), and their count.
    q_sum: f64,
    q_n: u64,
    /// Segments sent in the interval, how many of them were retransmissions, and
    /// the CE marks the ACKs reported in it (counted only with `count_marks`).
    sent: u64,
    retx: u64,
    marks: u64,
    count_marks: bool,
    /// When the connection started, and when it last retransmitted a segment.
    start: SimTime,
    last_loss: Option<SimTime>,
    /// α* of the last completed interval (None: none yet, or the update was skipped).
    last_target: Option<f64>,
}

/// Windows in force over the last periodic updates, to pair the average RTT with
/// the window its packets were sent with (ns-2 `cwnd_array_` / `old_cwnd`).
const HISTORY: usize = 32;

/// FAST TCP with Algorithm 1's α adaptation. The state lives behind one pointer,
/// so that the controller enum every connection carries stays small.
#[derive(Clone, Debug)]
pub struct Fast {
    s: Box<State>,
}

#[derive(Clone, Debug)]
struct State {
    /// Current α (packets).
    alpha: f64,
    gamma: f64,
    /// Periodic update period; None: once per round trip.
    interval: Option<SimTime>,
    /// Multiplicative-increase threshold on the average queueing delay (ns).
    mi_threshold: f64,
    react_to_ecn: bool,
    /// Minimum RTT seen (ns); SimTime::MAX before the first sample.
    base_rtt: SimTime,
    /// Average RTT (ns, an exponential average); 0 before the first sample.
    avg_rtt: f64,
    /// Next periodic update.
    next_update: SimTime,
    /// Once-per-RTT mode: update when the cumulative ACK reaches this byte.
    rtt_mark: u64,
    /// The machinery is in loss recovery (from the latest ACK or congestion event).
    in_recovery: bool,
    /// Burstiness control: bytes of window increase still to be released, one MSS
    /// every `spacing` ACKs (`acks` counts ACKs since the last release).
    pending: u64,
    spacing: u32,
    acks: u32,
    /// Periodic mode: (time, cwnd) at each of the last HISTORY updates, a ring
    /// (`hist_len` entries, the newest at `hist_head`).
    hist: [(u64, u64); HISTORY],
    hist_head: usize,
    hist_len: usize,
    adapt: Option<Adaptation>,
}

impl WindowProtocol for Fast {
    const NAME: &'static str = "fast";
    type Params = FastParams;

    /// `{ alpha = 50, gamma = 0.5, update_every = "20ms", mi_threshold = "0.75ms",
    /// react_to_ecn = false, adaptation = { w = "125s", ... } }`; every key optional
    /// but `adaptation.w`.
    fn read(mut t: Table) -> Result<FastParams> {
        let alpha = positive_or(&mut t, "alpha", "a positive number of packets", DEFAULT_ALPHA, MAX_ALPHA)?;
        let gamma: f64 = t.or("gamma", DEFAULT_GAMMA)?;
        if !(gamma > 0.0 && gamma <= 1.0) {
            return err(t.key_path("gamma"), format!("expected a number in (0, 1], got {gamma}"));
        }
        let update = duration_or(&mut t, "update_every", "rtt", Some(DEFAULT_UPDATE_INTERVAL))?;
        let mi = t.or("mi_threshold", Duration(DEFAULT_MI_THRESHOLD))?.0;
        let react_to_ecn = t.or("react_to_ecn", false)?;
        let base_rtt = duration_or(&mut t, "base_rtt", "measured", None)?;
        let adaptation = match t.table("adaptation")? {
            Some(a) => Some(AdaptationParams::read(a)?),
            None => None,
        };
        t.finish("the fast controller")?;
        Ok(FastParams {
            alpha,
            gamma,
            update_interval_ns: update.map(|u| u.0),
            mi_threshold_ns: mi.0,
            react_to_ecn,
            adaptation,
            base_rtt_ns: base_rtt.map(|b| b.0),
        })
    }

    fn check(p: &FastParams) -> std::result::Result<(), (&'static str, String)> {
        if !(p.alpha > 0.0 && p.alpha <= MAX_ALPHA) {
            return Err(("alpha", format!("expected a positive number of packets of at most {MAX_ALPHA:e}, got {}", p.alpha)));
        }
        if !(p.gamma > 0.0 && p.gamma <= 1.0) {
            return Err(("gamma", format!("expected a number in (0, 1], got {}", p.gamma)));
        }
        if p.update_interval_ns.is_some_and(|u| u == 0 || u > SimTime::LONGEST.0) {
            return Err(("update_interval_ns", "expected a positive time of at most 1e9 s, or null (once per round trip)".into()));
        }
        if p.mi_threshold_ns > SimTime::LONGEST.0 {
            return Err(("mi_threshold_ns", "expected a time of at most 1e9 s".into()));
        }
        if p.base_rtt_ns.is_some_and(|b| b == 0 || b > SimTime::LONGEST.0) {
            return Err(("base_rtt_ns", "expected a positive time of at most 1e9 s, or null (measured)".into()));
        }
        if let Some(a) = &p.adaptation {
            let time = |ns: u64| ns > 0 && ns <= SimTime::LONGEST.0;
            if !time(a.w_ns) {
                return Err(("adaptation.w_ns", "expected a positive time of at most 1e9 s".into()));
            }
            if !time(a.interval_ns) {
                return Err(("adaptation.interval_ns", "expected a positive time of at most 1e9 s".into()));
            }
            if !(a.delta > 0.0 && a.delta < 1.0) {
                return Err(("adaptation.delta", format!("expected a number between 0 and 1 (exclusive), got {}", a.delta)));
            }
            if a.stop_after_no_loss_ns.is_some_and(|s| !time(s)) {
                return Err(("adaptation.stop_after_no_loss_ns", "expected a positive time of at most 1e9 s, or null (never)".into()));
            }
        }
        Ok(())
    }

    fn new(p: &FastParams) -> Self {
        Fast { s: Box::new(State::new(p)) }
    }
}

impl State {
    fn new(p: &FastParams) -> Self {
        State {
            alpha: p.alpha,
            gamma: p.gamma,
            interval: p.update_interval_ns.map(SimTime),
            mi_threshold: p.mi_threshold_ns as f64,
            react_to_ecn: p.react_to_ecn,
            base_rtt: p.base_rtt_ns.map_or(SimTime::MAX, SimTime),
            avg_rtt: 0.0,
            next_update: SimTime::MAX,
            rtt_mark: 0,
            in_recovery: false,
            pending: 0,
            spacing: 1,
            acks: 0,
            hist: [(0, 0); HISTORY],
            hist_head: 0,
            hist_len: 0,
            adapt: p.adaptation.as_ref().map(|a| Adaptation {
                w: SimTime(a.w_ns).as_secs_f64(),
                interval: SimTime(a.interval_ns),
                delta: a.delta,
                stop_after: a.stop_after_no_loss_ns.map(SimTime),
                next: SimTime::MAX,
                q_sum: 0.0,
                q_n: 0,
                sent: 0,
                retx: 0,
                marks: 0,
                count_marks: a.count_marks,
                start: SimTime::ZERO,
                last_loss: None,
                last_target: None,
            }),
        }
    }
}

/// FAST's window update in packets (ToN §III and Infocom 2004, window control;
/// heterogeneous paper §II eq. (1), with γ):
/// w ← min{2w, (1−γ)w + γ(baseRTT/RTT·w + α)}, floored at 2 packets (ns-2).
///
/// `w` is the current window and `w_sent` the window the packets of the average
/// RTT were sent with (the papers write w for both; ns-2 uses the window at send
/// time in the baseRTT/RTT term, which keeps the loop stable when the update is
/// faster than the RTT). All in packets; the RTTs in any one unit.
pub fn target_window(w: f64, w_sent: f64, base_rtt: f64, avg_rtt: f64, alpha: f64, gamma: f64) -> f64 {
    let t = (1.0 - gamma) * w + gamma * (base_rtt / avg_rtt * w_sent + alpha);
    t.min(2.0 * w).max(MIN_WINDOW_PACKETS)
}

/// α* = q/(l·w) (Algorithm 1 step 1), q the average queueing delay (s), l the loss
/// rate (a fraction), w in seconds; infinite when no loss was seen.
pub fn alpha_star(q: f64, l: f64, w: f64) -> f64 {
    if l > 0.0 {
        q / (l * w)
    } else {
        f64::INFINITY
    }
}

/// Algorithm 1's step: α ← min{(1+δ)α, α*} if α < α*, max{(1−δ)α, α*} if α > α*.
pub fn alpha_step(alpha: f64, target: f64, delta: f64) -> f64 {
    if alpha < target {
        ((1.0 + delta) * alpha).min(target)
    } else if alpha > target {
        ((1.0 - delta) * alpha).max(target)
    } else {
        alpha
    }
}

/// Half the flight, at least two segments (ns-2 `slowdown(CLOSE_SSTHRESH_HALF |
/// CLOSE_CWND_HALF)`, the Reno rule, RFC 5681 eq. 4).
#[inline]
fn halve(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}

impl Fast {
    /// The current α (packets).
    pub fn alpha(&self) -> f64 {
        self.s.alpha
    }

    /// α* of the last α update interval (None before the first, or when the
    /// update was skipped: no samples, or the no-loss stop).
    pub fn alpha_star(&self) -> Option<f64> {
        self.s.adapt.as_ref().and_then(|a| a.last_target)
    }

    /// baseRTT: the minimum RTT seen (None before the first sample).
    pub fn base_rtt(&self) -> Option<SimTime> {
        (self.s.base_rtt != SimTime::MAX).then_some(self.s.base_rtt)
    }

    /// The average RTT FAST uses (None before the first sample).
    pub fn avg_rtt(&self) -> Option<SimTime> {
        (self.s.avg_rtt > 0.0).then(|| SimTime(self.s.avg_rtt.round() as u64))
    }
}

impl State {
    /// Multiplicative increase (FAST's slow start, ns-2 `fast_cc`): before the
    /// first RTT sample, or while the average queueing delay is below the threshold.
    #[inline]
    fn in_mi(&self) -> bool {
        self.avg_rtt == 0.0 || self.avg_rtt - (self.base_rtt.0 as f64) < self.mi_threshold
    }

    /// Record the window in force at `now` (periodic mode).
    fn remember(&mut self, now: SimTime, cwnd: u64) {
        self.hist_head = (self.hist_head + 1) % HISTORY;
        self.hist[self.hist_head] = (now.0, cwnd);
        self.hist_len = (self.hist_len + 1).min(HISTORY);
    }

    /// The window the packets sent at `sent` went out with: the first recorded
    /// window at or after `sent` (each entry is the window of the period it ends),
    /// the oldest if `sent` is older than the history, `current` if newer.
    fn window_at(&self, sent: f64, current: u64) -> u64 {
        let mut found = current;
        for k in 0..self.hist_len {
            let (t, cwnd) = self.hist[(self.hist_head + HISTORY - k) % HISTORY];
            if (t as f64) < sent {
                break;
            }
            found = cwnd;
        }
        found
    }

    /// One window update (ToN §III): the target from the average RTT; a decrease
    /// at once, an increase released one MSS at a time over the next update period
    /// (ToN burstiness control; ns-2 `fast_pace`). `w_sent` is the window the
    /// packets of the average RTT were sent with (the baseRTT/RTT·w term; ns-2
    /// `old_cwnd`).
    fn update_window(&mut self, w: &mut Window, w_sent: u64) {
        self.pending = 0;
        if self.in_recovery || self.in_mi() {
            // Recovery owns the window (ns-2 freezes FAST's update during fast
            // recovery); in MI the window grows per ACK instead (ns-2 `fast_cc`).
            return;
        }
        let mss = w.mss as f64;
        let wp = w.cwnd as f64 / mss;
        let target = target_window(wp, w_sent as f64 / mss, self.base_rtt.0 as f64, self.avg_rtt, self.alpha, self.gamma);
        let bytes = (target * mss).round() as u64;
        if bytes <= w.cwnd {
            w.cwnd = bytes;
            return;
        }
        self.pending = bytes - w.cwnd;
        // ACKs expected before the next update: a window's worth per RTT.
        let acks = match self.interval {
            Some(i) => wp * i.0 as f64 / self.avg_rtt,
            None => wp,
        };
        let steps = self.pending.div_ceil(w.mss) as f64;
        self.spacing = ((acks / steps) as u32).max(1);
        self.acks = 0;
    }

    /// Algorithm 1 step 1 at the end of an α update interval.
    fn adapt_alpha(&mut self, now: SimTime) {
        let Some(a) = self.adapt.as_mut() else { return };
        a.last_target = None;
        let quiet_since = a.last_loss.unwrap_or(a.start);
        // §VII Experiment 4: no α update once the flow has seen no loss for
        // `stop_after` (it resumes with the next loss).
        let stopped = a.stop_after.is_some_and(|s| now.0.saturating_sub(quiet_since.0) >= s.0);
        if !stopped && a.sent > 0 && a.q_n > 0 {
            // q: average queueing delay over the interval (s); l: segments
            // retransmitted (and, with `count_marks`, CE-marked) / segments sent
            // over the interval.
            let q = a.q_sum / a.q_n as f64;
            let l = (a.retx + a.marks) as f64 / a.sent as f64;
            let target = alpha_star(q, l, a.w);
            self.alpha = alpha_step(self.alpha, target, a.delta).min(MAX_ALPHA);
            a.last_target = Some(target);
        }
        a.q_sum = 0.0;
        a.q_n = 0;
        a.sent = 0;
        a.retx = 0;
        a.marks = 0;
    }
}

impl CongestionControl for Fast {
    fn on_start(&mut self, w: &mut Window, now: SimTime) {
        let s = &mut *self.s;
        if let Some(i) = s.interval {
            s.next_update = now + i;
            s.remember(now, w.cwnd);
        }
        if let Some(a) = s.adapt.as_mut() {
            a.start = now;
            a.next = now + a.interval;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        let s = &mut *self.s;
        if let Some(r) = ack.rtt {
            // baseRTT: the minimum RTT observed so far (ToN §III).
            if r < s.base_rtt {
                s.base_rtt = r;
            }
            // Average RTT (ToN §III estimation): T ← (1−η)T + η·RTT per sample,
            // η = min{3/w, 1/4}, w the window in packets.
            let r = r.0 as f64;
            if s.avg_rtt == 0.0 {
                s.avg_rtt = r;
            } else {
                let eta = (3.0 * w.mss as f64 / w.cwnd as f64).min(MAX_RTT_WEIGHT);
                s.avg_rtt += eta * (r - s.avg_rtt);
            }
            if let Some(a) = s.adapt.as_mut() {
                // Algorithm 1's queueing delay: RTT − baseRTT of each sample.
                a.q_sum += (r - s.base_rtt.0 as f64) * 1e-9;
                a.q_n += 1;
            }
        }
        if ack.ce_marks > 0 {
            if let Some(a) = s.adapt.as_mut().filter(|a| a.count_marks) {
                // Algorithm 1 on a marking network: a CE mark is the congestion
                // signal a drop would have been (RFC 3168 §5), the price Reno sees.
                a.marks += ack.ce_marks as u64;
                a.last_loss = Some(ack.now);
            }
        }
        s.in_recovery = ack.in_recovery;
        if ack.in_recovery {
            // Recovery sets the window; FAST's update waits for its end (ns-2).
            s.pending = 0;
            return;
        }
        if ack.bytes_acked == 0 {
            return;
        }
        if s.interval.is_none() && ack.snd_una >= s.rtt_mark {
            // Once per RTT: when the data sent at the last update is acknowledged.
            s.rtt_mark = ack.snd_nxt;
            s.remember(ack.now, w.cwnd);
            let w_sent = s.window_at(ack.now.0 as f64 - s.avg_rtt, w.cwnd);
            s.update_window(w, w_sent);
        }
        if s.in_mi() {
            // Multiplicative increase (ns-2 `fast_cc`, `cwnd_++` per ACK; the
            // Infocom paper's α(w, qdelay) = a·w when qdelay = 0): the window
            // doubles per RTT; the periodic update does nothing meanwhile.
            w.cwnd += ack.bytes_acked.min(w.mss);
            s.pending = 0;
            return;
        }
        if s.pending > 0 {
            s.acks += 1;
            if s.acks >= s.spacing {
                let step = s.pending.min(w.mss);
                w.cwnd += step;
                s.pending -= step;
                s.acks = 0;
            }
        }
    }

    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        let s = &mut *self.s;
        s.pending = 0;
        match event {
            // A loss detected by duplicate ACKs: halve, as Reno (ToN §III: on a
            // loss FAST halves its window, as Reno; ns-2 `dupack_action`), then
            // recover; FAST's update waits for the end.
            Congestion::Loss => {
                s.in_recovery = true;
                halve(flight, w.mss)
            }
            // A timeout: ssthresh halves (ns-2 `timeout`, CLOSE_SSTHRESH_HALF), not
            // again on a repeated one (RFC 5681 §3.1); the machinery restarts from
            // one segment and FAST's own rules regrow the window.
            Congestion::Timeout { repeated } => {
                s.in_recovery = false;
                if repeated {
                    w.ssthresh
                } else {
                    halve(flight, w.mss)
                }
            }
            // ECN: halve (ns-2 `TcpAgent::ecn`) or ignore the mark: FAST's price is
            // queueing delay (heterogeneous paper §II-B Example 2: RED marks, to
            // which only Reno reacts).
            Congestion::Ecn => {
                if s.react_to_ecn {
                    halve(flight, w.mss)
                } else {
                    w.cwnd
                }
            }
        }
    }

    #[inline]
    fn on_sent(&mut self, now: SimTime, _bytes: u64, retransmission: bool) {
        if let Some(a) = self.s.adapt.as_mut() {
            // Algorithm 1's loss rate: a retransmitted segment stands for a lost one.
            a.sent += 1;
            if retransmission {
                a.retx += 1;
                a.last_loss = Some(now);
            }
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        let s = &*self.s;
        let mut d = match s.interval {
            Some(_) => s.next_update,
            None => SimTime::MAX,
        };
        if let Some(a) = &s.adapt {
            d = d.min(a.next);
        }
        (d != SimTime::MAX).then_some(d)
    }

    fn on_deadline(&mut self, w: &mut Window, now: SimTime) {
        let s = &mut *self.s;
        if s.adapt.as_ref().is_some_and(|a| a.next <= now) {
            if let Some(a) = s.adapt.as_mut() {
                a.next = now + a.interval;
            }
            s.adapt_alpha(now);
        }
        if let Some(i) = s.interval {
            if s.next_update <= now {
                s.next_update = now + i;
                // The window of the period that ends now (not while recovery
                // inflates it), then the window the average RTT's packets saw.
                if !s.in_recovery {
                    s.remember(now, w.cwnd);
                }
                let w_sent = s.window_at(now.0 as f64 - s.avg_rtt, w.cwnd);
                s.update_window(w, w_sent);
            }
        }
    }

    /// α (packets), baseRTT and avgRTT (absent before the first RTT sample), the
    /// queue estimate they give, w·(1 − baseRTT/avgRTT) packets (the backlog FAST
    /// steers to α, Jin, Wei and Low 2004, eq. 1), and α* of the last adaptation
    /// interval when α adapts.
    fn observe(&self, w: &Window, _now: SimTime, vars: &mut StateVars) {
        let s = &*self.s;
        vars.put("fast.alpha_packets", s.alpha);
        if let (Some(base), Some(_)) = (self.base_rtt(), self.avg_rtt()) {
            vars.put("fast.base_rtt_s", base.as_secs_f64());
            vars.put("fast.avg_rtt_s", s.avg_rtt * 1e-9);
            let packets = w.cwnd as f64 / w.mss as f64;
            vars.put("fast.queue_packets", packets * (1.0 - base.0 as f64 / s.avg_rtt));
        }
        if let Some(a) = self.alpha_star() {
            vars.put("fast.alpha_star_packets", a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn ack(now: SimTime, bytes: u64, rtt: Option<SimTime>) -> Ack {
        Ack {
            now,
            bytes_acked: bytes,
            bytes_delivered: bytes,
            rtt,
            cwnd_limited: true,
            ..Ack::default()
        }
    }

    fn window(packets: u64) -> Window {
        Window { cwnd: packets * MSS, ssthresh: u64::MAX, mss: MSS }
    }

    fn fast(cc: serde_json::Value) -> Fast {
        Fast::new(&Fast::read(Table::new(&cc, "cc").unwrap()).unwrap())
    }

    /// A controller past its start: base 50 ms, average 60 ms, out of MI.
    fn settled(cc: serde_json::Value, w: &mut Window) -> Fast {
        let mut c = fast(cc);
        c.on_start(w, SimTime::ZERO);
        c.s.base_rtt = ms(50);
        c.s.avg_rtt = ms(60).0 as f64;
        c
    }

    #[test]
    fn window_update_arithmetic() {
        // γ = 0.5, baseRTT/RTT = 50/60: 0.5·100 + 0.5·(100·5/6 + 50) = 116.67.
        let t = target_window(100.0, 100.0, 50.0, 60.0, 50.0, 0.5);
        assert!((t - (50.0 + 0.5 * (100.0 * 5.0 / 6.0 + 50.0))).abs() < 1e-12, "{t}");
        // The 2w cap: 0.5·10 + 0.5·(10 + 50) = 35 > 2·10.
        assert_eq!(target_window(10.0, 10.0, 50.0, 50.0, 50.0, 0.5), 20.0);
        // The equilibrium w = α/(1 − baseRTT/RTT) = 300 is a fixed point, for any γ.
        for g in [0.1, 0.5, 1.0] {
            assert!((target_window(300.0, 300.0, 50.0, 60.0, 50.0, g) - 300.0).abs() < 1e-9);
        }
        // γ = 1 jumps to the target baseRTT/RTT·w + α.
        assert!((target_window(120.0, 120.0, 50.0, 60.0, 50.0, 1.0) - 150.0).abs() < 1e-12);
        // The window the RTT's packets were sent with enters the baseRTT/RTT term only.
        assert_eq!(target_window(100.0, 200.0, 50.0, 100.0, 50.0, 0.5), 50.0 + 0.5 * (100.0 + 50.0));
        // Never below 2 packets (ns-2).
        assert_eq!(target_window(2.0, 2.0, 50.0, 100.0, 0.1, 0.5), 2.0);
    }

    #[test]
    fn a_known_base_rtt_holds_against_larger_samples_and_yields_to_smaller() {
        let mut w = window(100);
        let mut c = fast(json!({"base_rtt": "40ms"}));
        c.on_start(&mut w, SimTime::ZERO);
        c.on_ack(&mut w, &ack(ms(60), MSS, Some(ms(60))));
        assert_eq!(c.base_rtt(), Some(ms(40)));
        c.on_ack(&mut w, &ack(ms(61), MSS, Some(ms(35))));
        assert_eq!(c.base_rtt(), Some(ms(35)));
        assert_eq!(Fast::read(Table::new(&json!({"base_rtt": "120ms"}), "cc").unwrap()).unwrap().base_rtt_ns, Some(120_000_000));
        let e = Fast::read(Table::new(&json!({"base_rtt": "0ms"}), "cc").unwrap()).unwrap_err();
        assert!(e.to_string().contains("cc.base_rtt"), "{e}");
    }

    #[test]
    fn base_rtt_is_the_minimum_and_the_average_weighs_min_3_over_w_and_a_quarter() {
        let mut w = window(100);
        let mut c = fast(json!({}));
        c.on_start(&mut w, SimTime::ZERO);
        assert_eq!((c.base_rtt(), c.avg_rtt()), (None, None));
        c.on_ack(&mut w, &ack(ms(60), MSS, Some(ms(60))));
        assert_eq!((c.base_rtt(), c.avg_rtt()), (Some(ms(60)), Some(ms(60))));
        let w0 = w.cwnd; // (the window grows in MI; the weight uses it as it is)
        c.on_ack(&mut w, &ack(ms(61), MSS, Some(ms(50))));
        let eta = 3.0 * MSS as f64 / w0 as f64;
        let mut avg = 60e6 + eta * (50e6 - 60e6);
        assert_eq!(c.base_rtt(), Some(ms(50)));
        assert!((c.s.avg_rtt - avg).abs() < 1e-6);
        let w1 = w.cwnd;
        c.on_ack(&mut w, &ack(ms(62), MSS, Some(ms(70))));
        avg += 3.0 * MSS as f64 / w1 as f64 * (70e6 - avg);
        assert_eq!(c.base_rtt(), Some(ms(50)));
        assert!((c.s.avg_rtt - avg).abs() < 1e-6);
        // No sample (a duplicate, or Karn's rule): nothing changes.
        c.on_ack(&mut w, &ack(ms(63), 0, None));
        assert!((c.s.avg_rtt - avg).abs() < 1e-6);
        // A small window: the weight is capped at 1/4.
        let mut w = window(4);
        let mut c = fast(json!({}));
        c.on_ack(&mut w, &ack(ms(1), MSS, Some(ms(40))));
        let w0 = w.cwnd;
        c.on_ack(&mut w, &ack(ms(2), MSS, Some(ms(80))));
        assert!(3.0 * MSS as f64 / w0 as f64 > 0.25);
        assert!((c.s.avg_rtt - (40e6 + 0.25 * 40e6)).abs() < 1e-6);
    }

    #[test]
    fn the_update_runs_every_20ms_by_default_and_per_rtt_on_request() {
        let mut w = window(10);
        let mut c = fast(json!({}));
        assert_eq!(c.deadline(), None); // before the connection opens
        c.on_start(&mut w, SimTime::from_secs(1));
        assert_eq!(c.deadline(), Some(SimTime::from_secs(1) + ms(20)));
        c.on_deadline(&mut w, SimTime::from_secs(1) + ms(20));
        assert_eq!(c.deadline(), Some(SimTime::from_secs(1) + ms(40)));
        let mut c = fast(json!({"update_every": "5ms"}));
        c.on_start(&mut w, SimTime::ZERO);
        assert_eq!(c.deadline(), Some(ms(5)));
        // Once per RTT: no timer; with Algorithm 1, its interval's.
        let mut c = fast(json!({"update_every": "rtt"}));
        c.on_start(&mut w, SimTime::ZERO);
        assert_eq!(c.deadline(), None);
        let mut c = fast(json!({"update_every": "rtt", "adaptation": {"w": "125s"}}));
        c.on_start(&mut w, ms(7));
        assert_eq!(c.deadline(), Some(ms(7) + SimTime::from_secs(120)));
        let mut c = fast(json!({"adaptation": {"w": "125s", "interval": "10ms"}}));
        c.on_start(&mut w, SimTime::ZERO);
        assert_eq!(c.deadline(), Some(ms(10)));
    }

    #[test]
    fn a_decrease_applies_at_once_an_increase_one_mss_per_spaced_ack() {
        // 500 packets, baseRTT/RTT = 5/6: 250 + 0.5·(416.67 + 50) = 483.33 packets.
        let mut w = window(500);
        let mut c = settled(json!({}), &mut w);
        c.on_deadline(&mut w, ms(20));
        assert_eq!(w.cwnd, 483_333);
        assert_eq!(c.s.pending, 0);
        // 200 packets: 100 + 0.5·(166.67 + 50) = 208.33: 8,333 bytes to add, in 9
        // steps spread over the 200·20/60 = 66.7 ACKs expected before the next
        // update: one MSS every 7 ACKs.
        let mut w = window(200);
        let mut c = settled(json!({}), &mut w);
        c.on_deadline(&mut w, ms(20));
        assert_eq!((w.cwnd, c.s.pending, c.s.spacing), (200_000, 8_333, 7));
        let rtt = Some(ms(60));
        for k in 1..=63u64 {
            c.s.avg_rtt = 60e6; // hold the average (this test is about the pacing)
            c.on_ack(&mut w, &ack(ms(20) + SimTime(k), MSS, rtt));
            let steps = k / 7;
            assert_eq!(w.cwnd, 200_000 + (steps * MSS).min(8_333), "after {k} ACKs");
        }
        assert_eq!((w.cwnd, c.s.pending), (208_333, 0));
        // Duplicate ACKs do not release the increase.
        let mut w = window(200);
        let mut c = settled(json!({}), &mut w);
        c.on_deadline(&mut w, ms(20));
        for _ in 0..20 {
            c.on_ack(&mut w, &ack(ms(21), 0, None));
        }
        assert_eq!(w.cwnd, 200_000);
    }

    #[test]
    fn the_baserrt_over_rtt_term_uses_the_window_the_packets_were_sent_with() {
        // Windows recorded at each update; the average RTT (60 ms) pairs with the
        // window of the period its packets left in: the entry at t ≥ now − 60 ms.
        let mut w = window(300);
        let mut c = settled(json!({}), &mut w);
        c.on_deadline(&mut w, ms(20)); // 300 is the fixed point: stays
        assert_eq!(w.cwnd, 300_000);
        w.cwnd = 600_000; // (as if the window had doubled since)
        c.s.avg_rtt = 60e6;
        c.on_deadline(&mut w, ms(40)); // sent at −20 ms: the oldest entry, 300
                                       // 0.5·600 + 0.5·(300·5/6 + 50) = 450.
        assert_eq!(w.cwnd, 450_000);
        c.s.avg_rtt = 10e6;
        c.s.base_rtt = ms(5);
        c.on_deadline(&mut w, ms(60)); // sent at 50 ms: the entry recorded now, 450
        assert_eq!(w.cwnd, 450_000 / 2 + (450_000 / 2 + 50_000) / 2);
        assert_eq!(c.s.window_at(0.0, 1), 300_000);
        assert_eq!(c.s.window_at(25e6, 1), 600_000);
        assert_eq!(c.s.window_at(61e6, 1), 1);
    }

    #[test]
    fn multiplicative_increase_until_the_queueing_delay_passes_the_threshold() {
        let mut w = window(10);
        let mut c = fast(json!({}));
        c.on_start(&mut w, SimTime::ZERO);
        // Before any sample: +min(acked, MSS) per ACK (a stretch ACK adds one MSS).
        c.on_ack(&mut w, &ack(ms(1), MSS, None));
        c.on_ack(&mut w, &ack(ms(2), 3 * MSS, None));
        assert_eq!(w.cwnd, 12 * MSS);
        // Queueing delay 0.5 ms < 0.75 ms: still MI, and the update leaves it.
        c.on_ack(&mut w, &ack(ms(3), MSS, Some(ms(50))));
        c.s.avg_rtt = 50.5e6;
        c.on_ack(&mut w, &ack(ms(4), MSS, None));
        assert_eq!(w.cwnd, 14 * MSS);
        c.on_deadline(&mut w, ms(20));
        assert_eq!(w.cwnd, 14 * MSS);
        // 0.75 ms: FAST's update takes over; ACKs no longer add by themselves.
        c.s.avg_rtt = 50.75e6;
        c.on_ack(&mut w, &ack(ms(21), MSS, None));
        assert_eq!(w.cwnd, 14 * MSS);
        c.on_deadline(&mut w, ms(40));
        assert!(w.cwnd + c.s.pending > 14 * MSS);
        // mi_threshold = 0 turns MI off once there is a sample.
        let mut c = fast(json!({"mi_threshold": "0s"}));
        c.on_ack(&mut w, &ack(ms(1), MSS, Some(ms(50))));
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(ms(2), MSS, Some(ms(50))));
        assert_eq!(w.cwnd, before);
    }

    #[test]
    fn loss_halves_recovery_freezes_the_update_timeout_halves_once() {
        let mut w = window(400);
        let mut c = settled(json!({}), &mut w);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 400 * MSS), 200 * MSS);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 3 * MSS), 2 * MSS); // floor
                                                                             // In recovery the machinery owns the window: ACKs and the update leave it.
        w.cwnd = 203 * MSS;
        let mut a = ack(ms(1), MSS, Some(ms(60)));
        a.in_recovery = true;
        c.on_ack(&mut w, &a);
        c.on_deadline(&mut w, ms(20));
        assert_eq!(w.cwnd, 203 * MSS);
        // Out of recovery, the next update moves it again.
        c.on_ack(&mut w, &ack(ms(21), MSS, Some(ms(60))));
        c.on_deadline(&mut w, ms(40));
        assert_ne!(w.cwnd + c.s.pending, 203 * MSS);
        // A timeout halves the flight for ssthresh, not again when repeated.
        w.ssthresh = 150 * MSS;
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: false }, 300 * MSS), 150 * MSS);
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }, 300 * MSS), 150 * MSS);
        assert!(!c.s.in_recovery);
    }

    #[test]
    fn ecn_is_ignored_unless_asked() {
        let w = window(100);
        let mut c = fast(json!({}));
        assert!(c.on_congestion(&w, Congestion::Ecn, 100 * MSS) >= w.cwnd);
        let mut c = fast(json!({"react_to_ecn": true}));
        assert_eq!(c.on_congestion(&w, Congestion::Ecn, 100 * MSS), 50 * MSS);
    }

    #[test]
    fn algorithm1_steps_towards_alpha_star_by_at_most_delta_never_past_it() {
        assert!((alpha_step(50.0, 100.0, 0.1) - 55.0).abs() < 1e-12);
        assert_eq!(alpha_step(50.0, 52.0, 0.1), 52.0);
        assert!((alpha_step(50.0, 10.0, 0.1) - 45.0).abs() < 1e-12);
        assert_eq!(alpha_step(50.0, 48.0, 0.1), 48.0);
        assert!((alpha_step(50.0, f64::INFINITY, 0.1) - 55.0).abs() < 1e-12);
        assert_eq!(alpha_step(50.0, 50.0, 0.1), 50.0);
        assert_eq!(alpha_step(50.0, 0.0, 0.1), 45.0);
        // α* = q/(l·w): 10 ms, 2 losses in 1000, w = 125 s: 0.04 packets.
        assert!((alpha_star(0.010, 0.002, 125.0) - 0.04).abs() < 1e-15);
        assert_eq!(alpha_star(0.010, 0.0, 125.0), f64::INFINITY);
    }

    /// One α interval driven by hand: `retx` of `sent` segments resent (the last at
    /// `last_loss`), RTT samples 50, 60, 70 ms (queueing delays 0, 10, 20 ms: q = 10 ms).
    fn interval(cc: serde_json::Value, sent: u64, retx: u64, last_loss: SimTime) -> Fast {
        let mut w = window(100);
        let mut c = fast(cc);
        c.on_start(&mut w, SimTime::ZERO);
        for k in 0..sent {
            let r = k < retx;
            c.on_sent(if r { last_loss } else { ms(1) }, MSS, r);
        }
        for (k, r) in [50, 60, 70].into_iter().enumerate() {
            c.on_ack(&mut w, &ack(ms(100 + k as u64), MSS, Some(ms(r))));
        }
        let end = SimTime::from_secs(120);
        c.on_deadline(&mut w, end);
        c
    }

    #[test]
    fn algorithm1_alpha_star_from_an_interval_of_samples() {
        let c = interval(json!({"adaptation": {"w": "125s"}}), 1000, 2, SimTime::from_secs(115));
        // q = (0 + 10 + 20)/3 ms, l = 2/1000, w = 125 s: α* = 0.04; α = max(45, 0.04).
        assert!((c.alpha_star().unwrap() - 0.01 / (0.002 * 125.0)).abs() < 1e-12);
        assert!((c.alpha() - 45.0).abs() < 1e-12);
        assert_eq!(c.deadline(), Some(SimTime::from_secs(120) + ms(20)));
        assert_eq!(c.s.adapt.as_ref().unwrap().next, SimTime::from_secs(240));
        // The statistics start again with the next interval.
        let a = c.s.adapt.as_ref().unwrap();
        assert_eq!((a.sent, a.retx, a.q_n), (0, 0, 0));
        // A smaller w: α* = 0.01/(0.002·0.05) = 100: α grows by δ, to 55.
        let c = interval(json!({"adaptation": {"w": "50ms"}}), 1000, 2, SimTime::from_secs(115));
        assert!((c.alpha() - 55.0).abs() < 1e-12);
        // α* = 0.01/(0.002·0.19) = 26.3, between α = 26 and 1.1·α: α lands on α*.
        let c = interval(json!({"alpha": 26, "adaptation": {"w": "190ms"}}), 1000, 2, SimTime::from_secs(115));
        assert!((c.alpha() - 0.01 / (0.002 * 0.19)).abs() < 1e-9, "{}", c.alpha());
        // No loss in the interval: α* is infinite and α grows by δ (when not stopped).
        let c = interval(json!({"adaptation": {"w": "125s", "stop_after_no_loss": "never"}}), 1000, 0, SimTime::ZERO);
        assert_eq!(c.alpha_star(), Some(f64::INFINITY));
        assert!((c.alpha() - 55.0).abs() < 1e-12);
        // Nothing sent: no information, no update.
        let c = interval(json!({"adaptation": {"w": "125s"}}), 0, 0, SimTime::ZERO);
        assert_eq!((c.alpha(), c.alpha_star()), (50.0, None));
    }

    /// Example 2b: the links mark instead of dropping, and the marks are the loss
    /// rate l of α* = q/(l·w). 1000 segments, no retransmission, ACKs reporting
    /// 1 + 3 = 4 marks (the last at 115 s): l = 0.004, q = 10 ms, w = 1 s: α* = 2.5.
    #[test]
    fn algorithm1_counts_ce_marks_as_losses_unless_told_not_to() {
        let marked = |cc: serde_json::Value| {
            let mut w = window(100);
            let mut c = fast(cc);
            c.on_start(&mut w, SimTime::ZERO);
            for _ in 0..1000 {
                c.on_sent(ms(1), MSS, false);
            }
            for (k, r) in [50, 60, 70].into_iter().enumerate() {
                c.on_ack(&mut w, &ack(ms(100 + k as u64), MSS, Some(ms(r))));
            }
            c.on_ack(&mut w, &Ack { ce_marks: 1, ..ack(SimTime::from_secs(100), MSS, None) });
            c.on_ack(&mut w, &Ack { ce_marks: 3, ..ack(SimTime::from_secs(115), MSS, None) });
            c.on_deadline(&mut w, SimTime::from_secs(120));
            c
        };
        let c = marked(json!({"adaptation": {"w": "1s"}}));
        assert!((c.alpha_star().unwrap() - 0.01 / (0.004 * 1.0)).abs() < 1e-12, "{:?}", c.alpha_star());
        assert!((c.alpha() - 45.0).abs() < 1e-12);
        // The mark at 115 s is the last "loss": the 10 s stop rule has not fired.
        let c = marked(json!({"adaptation": {"w": "1s", "stop_after_no_loss": "4s"}}));
        assert_eq!(c.alpha_star(), None);
        // Not counted: no loss at all, so α* is infinite (the stop rule off) ...
        let c = marked(json!({"adaptation": {"w": "1s", "count_marks": false, "stop_after_no_loss": "never"}}));
        assert_eq!(c.alpha_star(), Some(f64::INFINITY));
        // ... or the updates are stopped (never a loss since the start).
        let c = marked(json!({"adaptation": {"w": "1s", "count_marks": false}}));
        assert_eq!(c.alpha_star(), None);
    }

    #[test]
    fn algorithm1_stops_after_10s_without_loss() {
        let cc = json!({"adaptation": {"w": "125s"}});
        // Last loss 11 s before the end of the interval: stopped, α stays.
        let c = interval(cc.clone(), 1000, 2, SimTime::from_secs(109));
        assert_eq!((c.alpha(), c.alpha_star()), (50.0, None));
        // Exactly 10 s: stopped; 9.999 s: updated.
        let c = interval(cc.clone(), 1000, 2, SimTime::from_secs(110));
        assert_eq!(c.alpha(), 50.0);
        let c = interval(cc.clone(), 1000, 2, SimTime::from_secs(110) + ms(1));
        assert!((c.alpha() - 45.0).abs() < 1e-12);
        // Never a loss since the start: stopped (a FAST flow alone never adapts).
        let c = interval(cc.clone(), 1000, 0, SimTime::ZERO);
        assert_eq!((c.alpha(), c.alpha_star()), (50.0, None));
        // A longer quiet period allowed: the same interval updates.
        let c = interval(json!({"adaptation": {"w": "125s", "stop_after_no_loss": "30s"}}), 1000, 2, SimTime::from_secs(95));
        assert!((c.alpha() - 45.0).abs() < 1e-12);
        // Updates resume with the next loss.
        let mut c = interval(cc, 1000, 2, SimTime::from_secs(100));
        assert_eq!(c.alpha(), 50.0);
        let mut w = window(100);
        c.on_sent(SimTime::from_secs(235), MSS, true);
        c.on_sent(SimTime::from_secs(235), MSS, false);
        c.on_ack(&mut w, &ack(SimTime::from_secs(236), MSS, Some(ms(60))));
        c.on_deadline(&mut w, SimTime::from_secs(240));
        assert!((c.alpha() - 45.0).abs() < 1e-12);
    }

    fn read(cc: serde_json::Value) -> std::result::Result<FastParams, String> {
        Fast::read(Table::new(&cc, "traffic[0].cc").unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn parameters_are_typed_validated_and_named() {
        assert_eq!(read(json!({})).unwrap(), FastParams::default());
        let p = read(json!({"alpha": 200, "gamma": 1, "update_every": "rtt", "mi_threshold": "1ms", "react_to_ecn": true,
                            "adaptation": {"w": "1820s", "interval": "1min", "delta": 0.2, "stop_after_no_loss": "never",
                                           "count_marks": false}})).unwrap();
        assert_eq!(
            p,
            FastParams {
                alpha: 200.0,
                gamma: 1.0,
                update_interval_ns: None,
                mi_threshold_ns: 1_000_000,
                react_to_ecn: true,
                adaptation: Some(AdaptationParams {
                    w_ns: 1_820_000_000_000,
                    interval_ns: 60_000_000_000,
                    delta: 0.2,
                    stop_after_no_loss_ns: None,
                    count_marks: false,
                }),
                base_rtt_ns: None,
            }
        );
        let a = read(json!({"adaptation": {"w": "125s"}})).unwrap().adaptation.unwrap();
        assert_eq!((a.interval_ns, a.delta, a.stop_after_no_loss_ns, a.count_marks), (120_000_000_000, 0.1, Some(10_000_000_000), true));
        // A configuration written before `count_marks` existed reads as counting them.
        let old: AdaptationParams =
            serde_json::from_value(json!({"w_ns": 1, "interval_ns": 2, "delta": 0.1, "stop_after_no_loss_ns": null})).unwrap();
        assert!(old.count_marks);
        let bad = |cc: serde_json::Value, want: &str| assert_eq!(read(cc).unwrap_err(), want);
        bad(json!({"alpha": 0}), "traffic[0].cc.alpha: expected a positive number of packets, got 0");
        bad(json!({"alpha": -3}), "traffic[0].cc.alpha: expected a positive number of packets, got -3");
        bad(json!({"alpha": 2e9}), "traffic[0].cc.alpha: expected a positive number of packets of at most 1e9, got 2000000000");
        bad(json!({"alpha": "50"}), "traffic[0].cc.alpha: expected a number, got \"50\"");
        bad(json!({"gamma": 0}), "traffic[0].cc.gamma: expected a number in (0, 1], got 0");
        bad(json!({"gamma": 1.5}), "traffic[0].cc.gamma: expected a number in (0, 1], got 1.5");
        bad(json!({"update_every": "0s"}), "traffic[0].cc.update_every: expected a positive duration like \"20ms\" or \"rtt\", got \"0s\"");
        bad(
            json!({"update_every": "often"}),
            "traffic[0].cc.update_every: expected a positive duration like \"20ms\" or \"rtt\", got \"often\"",
        );
        bad(json!({"update_every": 20}), "traffic[0].cc.update_every: expected a positive duration like \"20ms\" or \"rtt\", got 20");
        bad(json!({"mi_threshold": "1"}), "traffic[0].cc.mi_threshold: expected a duration like \"25ms\", got \"1\"");
        bad(json!({"react_to_ecn": "no"}), "traffic[0].cc.react_to_ecn: expected true or false, got \"no\"");
        bad(json!({"adaptation": true}), "traffic[0].cc.adaptation: expected a table, got true");
        bad(
            json!({"adaptation": {"w": "125s", "count_marks": 1}}),
            "traffic[0].cc.adaptation.count_marks: expected true or false, got 1",
        );
        bad(json!({"adaptation": {}}), "traffic[0].cc.adaptation.w: missing: Algorithm 1's w, e.g. \"125s\" (α* = q/(l·w))");
        bad(
            json!({"adaptation": {"w": "0s"}}),
            "traffic[0].cc.adaptation.w: expected a positive duration (Algorithm 1's w, e.g. \"125s\" (α* = q/(l·w))), got \"0s\"",
        );
        bad(json!({"adaptation": {"w": 125}}), "traffic[0].cc.adaptation.w: expected a duration like \"25ms\", got 125 (write the unit)");
        bad(
            json!({"adaptation": {"w": "125s", "interval": "0s"}}),
            "traffic[0].cc.adaptation.interval: expected a positive duration (the α update interval), got \"0s\"",
        );
        bad(
            json!({"adaptation": {"w": "125s", "delta": 0}}),
            "traffic[0].cc.adaptation.delta: expected a number between 0 and 1 (exclusive), got 0",
        );
        bad(
            json!({"adaptation": {"w": "125s", "stop_after_no_loss": "sometimes"}}),
            "traffic[0].cc.adaptation.stop_after_no_loss: expected a positive duration like \"20ms\" or \"never\", got \"sometimes\"",
        );
        bad(
            json!({"adaptation": {"w": "125s", "stop_after_no_loss": "0s"}}),
            "traffic[0].cc.adaptation.stop_after_no_loss: expected a positive duration like \"20ms\" or \"never\", got \"0s\"",
        );
        bad(
            json!({"adaptation": {"w": "125s", "dleta": 0.1}}),
            "traffic[0].cc.adaptation.dleta: unknown key (did you mean `delta`?); FAST's adaptation takes: w, interval, delta, stop_after_no_loss, count_marks",
        );
        bad(
            json!({"beta": 1}),
            "traffic[0].cc.beta: unknown key; the fast controller takes: alpha, gamma, update_every, mi_threshold, react_to_ecn, base_rtt, adaptation",
        );
    }
}
