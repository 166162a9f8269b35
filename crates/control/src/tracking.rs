//! The rate-tracking adaptive limit of the background paper (Courcoubetis, Dimakis,
//! Kanakakis, "Congestion control for background data transfers with minimal delay
//! impact", §IV): "M is calculated adaptively such that the average sending rate
//! matches the arrival load Cρ_b. Both the load and sending rate are estimated using
//! moving averages with sufficiently long memory [...] the latter [M] is increased or
//! decreased such that the sending rate tracks the arrival load estimate."
//!
//! Our concrete form (the paper gives no formula). Every period:
//! * load = bytes of the chunks that arrived / period;
//! * r1 = bytes delivered by the active chunks / ∫ active dt, the rate one active
//!   chunk obtains; the sending rate M backlogged chunks would obtain is M·r1
//!   (Theorem 7: the limit binds, the aggregate behaves as M TCP flows);
//! * both go into exponential moving averages of weight β per period;
//! * M moves a fraction `step` of the way to the limit at which they match,
//!   M ← M + step·(load/r1 − M).
//!
//! No capacity enters: the sender knows only what it sent and what arrived.
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
}

fn ewma(avg: &mut Option<f64>, x: f64, beta: f64) {
    *avg = Some(match *avg {
        None => x,
        Some(a) => a + beta * (x - a),
    });
}

impl RateTracking {
    pub fn new(p: RateTrackingParams) -> Self {
        RateTracking { p, load: None, per_chunk: None, delivered_mark: 0.0 }
    }

    /// The moving averages: arriving load and rate per active chunk (bytes/s).
    pub fn averages(&self) -> (Option<f64>, Option<f64>) {
        (self.load, self.per_chunk)
    }

    /// The new limit after window `w`; `delivered` counts every byte the chunks
    /// have delivered so far (cumulative).
    pub fn update(&mut self, limit: f64, w: &Window, delivered: f64) -> f64 {
        if w.span <= 0.0 {
            return limit;
        }
        ewma(&mut self.load, w.arrived_bytes / w.span, self.p.ewma);
        if w.active_area > 0.0 {
            ewma(&mut self.per_chunk, (delivered - self.delivered_mark) / w.active_area, self.p.ewma);
        }
        self.delivered_mark = delivered;
        match (self.load, self.per_chunk) {
            (Some(load), Some(r1)) if r1 > 0.0 => limit + self.p.step * (load / r1 - limit),
            _ => limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> RateTrackingParams {
        RateTrackingParams { ewma: 0.5, step: 0.3, ..RateTrackingParams::default() }
    }

    #[test]
    fn moves_towards_the_limit_where_rate_matches_load() {
        let mut r = RateTracking::new(p());
        // 120 s: 60 MB arrived (0.5 MB/s); 2 chunks active all along delivered 48 MB
        // (0.2 MB/s each): 2.5 chunks would carry the load; M = 2 moves 0.3 of the way.
        let w = Window { span: 120.0, active_area: 240.0, arrived_bytes: 60e6, ..Window::default() };
        assert!((r.update(2.0, &w, 48e6) - 2.15).abs() < 1e-12);
        // Next window: load 0.3 MB/s, rate 0.3 MB/s per chunk; averages (β = 0.5)
        // 0.4 and 0.25 → target 1.6.
        let w = Window { span: 120.0, active_area: 240.0, arrived_bytes: 36e6, ..Window::default() };
        let m = r.update(2.15, &w, 48e6 + 72e6);
        assert!((m - (2.15 + 0.3 * (1.6 - 2.15))).abs() < 1e-12);
    }

    #[test]
    fn without_active_time_there_is_no_rate_and_the_limit_holds() {
        let mut r = RateTracking::new(p());
        let w = Window { span: 120.0, arrived_bytes: 1e6, ..Window::default() };
        assert_eq!(r.update(3.0, &w, 0.0), 3.0);
        assert_eq!(r.averages(), (Some(1e6 / 120.0), None));
    }
}
