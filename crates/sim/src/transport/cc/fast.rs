//! FAST TCP (Jin, Wei, Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", Infocom 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 14(6), 2006),
//! with the α adaptation of Algorithm 1 of Tang, Wei, Low, Chiang,
//! "Heterogeneous congestion control: efficiency, fairness and design"
//! (`/work/shared/papers/heterogeneous-congestion-control.md`, §II-III, §VII).
//!
//! Where the papers leave a detail open this file follows the ns-2 FAST module
//! (Cui and Andrew, University of Melbourne, v1.1.3, `tcp/tcp-fast.cc` in ns-2.35,
//! defaults in `tcl/lib/ns-default.tcl`), the implementation the heterogeneous
//! paper's ns-2 simulations ran. Every rule below names its source; the
//! deviations are listed in `docs/protocols.md` (FAST TCP).
//!
//! The window is kept in the machinery's bytes; FAST's arithmetic is in packets
//! (`cwnd / mss`), as the papers write it, and α is a number of packets.
use super::{Ack, Congestion, CongestionControl, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::settings::{describe, err, Duration, Read, Result, ScenarioError, Table, Value};
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
/// Largest weight of the RTT average (ToN §III-B estimation: η = min{3/w, 1/4}).
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
    /// delay is below this (ns); 0 turns it off.
    pub mi_threshold_ns: u64,
    /// Halve the window on an ECN-Echo (once per window of data); false ignores marks.
    pub react_to_ecn: bool,
    /// Algorithm 1's α adaptation; `None`: α stays fixed.
    pub adaptation: Option<AdaptationParams>,
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
        }
    }
}

/// A positive, finite number at `key`, at most `max`.
fn positive(t: &mut Table, key: &'static str, what: &str, default: f64, max: f64) -> Result<f64> {
    let v: f64 = t.or(key, default)?;
    if !(v > 0.0 && v <= max) {
        return err(t.key_path(key), format!("expected {what}, got {v}"));
    }
    Ok(v)
}

/// A positive duration at `key`, or `word` (returned as None).
fn duration_or(t: &mut Table, key: &'static str, word: &str, default: Option<SimTime>) -> Result<Option<SimTime>> {
    let path = t.key_path(key);
    let Some(v) = t.raw(key) else { return Ok(default) };
    if v.as_str() == Some(word) {
        return Ok(None);
    }
    let expected = || format!("expected a positive duration like \"20ms\" or \"{word}\", got {}", describe(v));
    match v {
        Value::String(_) => {
            let d = Duration::read(v, &path).map_err(|_| ScenarioError::new(&path, expected()))?;
            if d.0 == SimTime::ZERO {
                return err(path, expected());
            }
            Ok(Some(d.0))
        }
        _ => err(path, expected()),
    }
}

/// A positive duration at `key`.
fn positive_duration(t: &mut Table, key: &'static str, default: Option<SimTime>, what: &str) -> Result<SimTime> {
    let d = match (t.get::<Duration>(key)?, default) {
        (Some(d), _) => d.0,
        (None, Some(d)) => d,
        (None, None) => return err(t.key_path(key), format!("missing: {what}")),
    };
    if d == SimTime::ZERO {
        return err(t.key_path(key), format!("expected a positive duration ({what}), got \"0s\""));
    }
    Ok(d)
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
        t.finish("FAST's adaptation")?;
        Ok(AdaptationParams { w_ns: w.0, interval_ns: interval.0, delta, stop_after_no_loss_ns: stop.map(|s| s.0) })
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
    /// Segments sent in the interval, and how many of them were retransmissions.
    sent: u64,
    retx: u64,
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
        let alpha = positive(&mut t, "alpha", "a positive number of packets", DEFAULT_ALPHA, MAX_ALPHA)?;
        let gamma: f64 = t.or("gamma", DEFAULT_GAMMA)?;
        if !(gamma > 0.0 && gamma <= 1.0) {
            return err(t.key_path("gamma"), format!("expected a number in (0, 1], got {gamma}"));
        }
        let update = duration_or(&mut t, "update_every", "rtt", Some(DEFAULT_UPDATE_INTERVAL))?;
        let mi = t.or("mi_threshold", Duration(DEFAULT_MI_THRESHOLD))?.0;
        let react_to_ecn = t.or("react_to_ecn", false)?;
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
        })
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
            base_rtt: SimTime::MAX,
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
                start: SimTime::ZERO,
                last_loss: None,
                last_target: None,
            }),
        }
    }
}

/// FAST's window update in packets (ToN §III-B eq. for window control; Infocom
/// 2004 §3.3; heterogeneous paper §II eq. (1) with γ):
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
pub fn alpha_target(q: f64, l: f64, w: f64) -> f64 {
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
    pub fn alpha_target(&self) -> Option<f64> {
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

    /// One window update (ToN §III-B): the target from the average RTT; a decrease
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
            // retransmitted / segments sent over the interval.
            let q = a.q_sum / a.q_n as f64;
            let l = a.retx as f64 / a.sent as f64;
            let target = alpha_target(q, l, a.w);
            self.alpha = alpha_step(self.alpha, target, a.delta).min(MAX_ALPHA);
            a.last_target = Some(target);
        }
        a.q_sum = 0.0;
        a.q_n = 0;
        a.sent = 0;
        a.retx = 0;
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
            // baseRTT: the minimum RTT observed so far (ToN §III-B).
            if r < s.base_rtt {
                s.base_rtt = r;
            }
            // Average RTT (ToN §III-B estimation): T ← (1−η)T + η·RTT per sample,
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
            // A loss detected by duplicate ACKs: halve, as Reno (ToN §III-B: FAST
            // "halves its window when packet loss is detected"; ns-2
            // `dupack_action`), then recover; FAST's update waits for the end.
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
}
