//! The rate-tracking adaptive limit of the background paper (Courcoubetis, Dimakis,
//! Kanakakis, "Congestion control for background data transfers with minimal delay
//! impact", §IV): "M is calculated adaptively such that the average sending rate
//! matches the arrival load Cρ_b. Both the load and sending rate are estimated using
//! moving averages with sufficiently long memory [...] the latter [M] is increased or
//! decreased such that the sending rate tracks the arrival load estimate."
//!
//! Our concrete form (the paper gives no formula). Every period:
//! * load = bytes of the chunks that arrived / period, averaged over all periods so far
//!   until 1/β have passed, then with weight β (an exogenous quantity: a long memory
//!   costs nothing but the time to fill it);
//! * r1 = bytes delivered by the active chunks / ∫ active dt, the rate one active
//!   chunk obtains, averaged with weight `rate_ewma` (it depends on M, which moves: a
//!   long memory here would make M lag behind the rate it sets);
//! * the rate to track is the load plus the rate that brings the waiting chunks back
//!   to `tau` within `drain` periods (§III-B: "slowly adjusting M such that long
//!   micro-flow queues are maintained"; `tau = 0`: the load alone), weighted as the step
//!   below has fallen;
//! * the sending rate M backlogged chunks obtain is M·r1 (Theorem 7: the limit binds,
//!   the aggregate behaves as M TCP flows), so M moves a fraction s_j of the way to
//!   the limit at which they match, M ← M + s_j·(rate/r1 − M); s_j starts at `step` and
//!   is halved each time the waiting chunks cross `tau`, down to `step_end` (Kesten's
//!   rule on the queue, which integrates the mismatch of rates: the step falls only once
//!   the limit has carried the queue back across its target, so the approach is fast
//!   and, once there, the noise of the estimates moves M less).
//!
//! No capacity enters: the sender knows only what it sent, what arrived and what waits.
use crate::params::RateTrackingParams;
use crate::window::Window;

/// Moving averages between updates.
#[derive(Clone, Debug)]
pub struct RateTracking {
    p: RateTrackingParams,
    load: Option<f64>,
    per_chunk: Option<f64>,
    /// Bytes delivered at the previous update.
    delivered_mark: f64,
    /// Updates done.
    updates: u64,
    /// Bytes and chunks that arrived so far (the mean chunk size).
    arrived_bytes: f64,
    arrivals: f64,
    /// The current step, and the sign of the queue's last distance to `tau`.
    step: f64,
    last_sign: f64,
}

fn ewma(avg: &mut Option<f64>, x: f64, beta: f64) {
    *avg = Some(match *avg {
        None => x,
        Some(a) => a + beta * (x - a),
    });
}

impl RateTracking {
    pub fn new(p: RateTrackingParams) -> Self {
        RateTracking {
            p,
            load: None,
            per_chunk: None,
            delivered_mark: 0.0,
            updates: 0,
            arrived_bytes: 0.0,
            arrivals: 0.0,
            step: p.step,
            last_sign: 0.0,
        }
    }

    /// The moving averages: arriving load and rate per active chunk (bytes/s).
    pub fn averages(&self) -> (Option<f64>, Option<f64>) {
        (self.load, self.per_chunk)
    }

    /// The rate to track (bytes/s): the load, and the queue's return to `tau` chunks
    /// (of the mean size so far) within `drain` periods, weighted as the step has fallen
    /// (s_j / step); never below zero.
    fn tracked(&self, load: f64, waiting: usize) -> f64 {
        if self.p.tau <= 0.0 || self.arrivals <= 0.0 {
            return load;
        }
        let size = self.arrived_bytes / self.arrivals;
        let weight = self.step / self.p.step; // the queue's pull falls with the step
        (load + weight * (waiting as f64 - self.p.tau) * size / (self.p.drain * self.p.period_s)).max(0.0)
    }

    /// The new limit after window `w`, with `waiting` chunks now; `delivered` counts
    /// every byte the chunks have delivered so far (cumulative).
    pub fn update(&mut self, limit: f64, w: &Window, delivered: f64, waiting: usize) -> f64 {
        if w.span <= 0.0 {
            return limit;
        }
        self.updates += 1;
        self.arrived_bytes += w.arrived_bytes;
        self.arrivals += w.arrivals as f64;
        ewma(&mut self.load, w.arrived_bytes / w.span, self.p.ewma.max(1.0 / self.updates as f64));
        if w.active_area > 0.0 {
            ewma(&mut self.per_chunk, (delivered - self.delivered_mark) / w.active_area, self.p.rate_ewma);
        }
        self.delivered_mark = delivered;
        self.cross(waiting as f64 - self.p.tau);
        match (self.load, self.per_chunk) {
            (Some(load), Some(r1)) if r1 > 0.0 => limit + self.step * (self.tracked(load, waiting) / r1 - limit),
            _ => limit,
        }
    }

    /// Halve the step if the queue's distance to `tau`, `e`, changed sign.
    fn cross(&mut self, e: f64) {
        let sign = if e > 0.0 { 1.0 } else if e < 0.0 { -1.0 } else { 0.0 };
        if sign * self.last_sign < 0.0 {
            self.step = (self.step / 2.0).max(self.p.step_end);
        }
        if sign != 0.0 {
            self.last_sign = sign;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> RateTrackingParams {
        RateTrackingParams { ewma: 0.5, rate_ewma: 0.5, step: 0.3, step_end: 0.3, tau: 0.0, ..RateTrackingParams::default() }
    }

    #[test]
    fn the_step_halves_each_time_the_queue_crosses_tau() {
        let mut r = RateTracking::new(RateTrackingParams { step: 1.0, step_end: 0.2, ..p() });
        for (e, step) in [(4.0, 1.0), (2.0, 1.0), (-2.0, 0.5), (0.0, 0.5), (-2.0, 0.5), (2.0, 0.25), (-2.0, 0.2), (2.0, 0.2)] {
            r.cross(e);
            assert_eq!(r.step, step, "after an error of {e}");
        }
    }

    #[test]
    fn moves_towards_the_limit_where_rate_matches_load() {
        let mut r = RateTracking::new(p());
        // 120 s: 60 MB arrived (0.5 MB/s); 2 chunks active all along delivered 48 MB
        // (0.2 MB/s each): 2.5 chunks would carry the load; M = 2 moves 0.3 of the way.
        let w = Window { span: 120.0, active_area: 240.0, arrived_bytes: 60e6, arrivals: 20, ..Window::default() };
        assert!((r.update(2.0, &w, 48e6, 0) - 2.15).abs() < 1e-12);
        // Next window: load 0.3 MB/s, rate 0.3 MB/s per chunk; averages (β = 0.5)
        // 0.4 and 0.25 → target 1.6.
        let w = Window { span: 120.0, active_area: 240.0, arrived_bytes: 36e6, arrivals: 12, ..Window::default() };
        let m = r.update(2.15, &w, 48e6 + 72e6, 0);
        assert!((m - (2.15 + 0.3 * (1.6 - 2.15))).abs() < 1e-12);
    }

    #[test]
    fn the_load_is_the_plain_mean_until_its_memory_fills() {
        // β = 0.25: the first four windows are averaged plainly, then with weight 0.25
        let mut r = RateTracking::new(RateTrackingParams { ewma: 0.25, ..p() });
        let loads = [1.0, 3.0, 2.0, 6.0, 8.0];
        for x in loads {
            let w = Window { span: 1.0, arrived_bytes: x, arrivals: 1, ..Window::default() };
            r.update(1.0, &w, 0.0, 0);
        }
        assert!((r.averages().0.unwrap() - (3.0 + 0.25 * (8.0 - 3.0))).abs() < 1e-12);
    }

    #[test]
    fn a_queue_above_tau_raises_the_tracked_rate_by_its_excess_over_the_drain() {
        // 10 chunks of 3 MB arrived (30 MB in 120 s: 0.25 MB/s); 40 wait against τ = 20:
        // 20 · 3 MB over 10 periods of 120 s is 0.05 MB/s more. One chunk gets 0.1 MB/s:
        // the limit that carries 0.3 MB/s is 3.
        let mut r = RateTracking::new(RateTrackingParams { step: 1.0, step_end: 1.0, tau: 20.0, drain: 10.0, ..p() });
        let w = Window { span: 120.0, active_area: 120.0, arrived_bytes: 30e6, arrivals: 10, ..Window::default() };
        assert!((r.update(1.0, &w, 12e6, 40) - 3.0).abs() < 1e-9);
        // below τ it asks for less (10 chunks short: 0.025 MB/s), and never for a negative rate
        let mut r = RateTracking::new(RateTrackingParams { step: 1.0, step_end: 1.0, tau: 20.0, drain: 10.0, ..p() });
        assert!((r.update(1.0, &w, 12e6, 10) - 2.25).abs() < 1e-9);
        let mut r = RateTracking::new(RateTrackingParams { step: 1.0, step_end: 1.0, tau: 1000.0, drain: 1.0, ..p() });
        assert_eq!(r.update(1.0, &w, 12e6, 0), 0.0);
    }

    #[test]
    fn without_active_time_there_is_no_rate_and_the_limit_holds() {
        let mut r = RateTracking::new(p());
        let w = Window { span: 120.0, arrived_bytes: 1e6, arrivals: 1, ..Window::default() };
        assert_eq!(r.update(3.0, &w, 0.0, 0), 3.0);
        assert_eq!(r.averages(), (Some(1e6 / 120.0), None));
    }
}
