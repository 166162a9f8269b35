//! FAIRBAT's adaptive limit (Courcoubetis, Dimakis, Kanakakis, "Designing incentive
//! compatible protocols for background data transfers", §III, eq. 2):
//!
//! m(t+1) = m(t) + γ (n(t) − τ),  t = 0, T, 2T, ...
//!
//! n is the queue of waiting chunks, τ a positive target, γ "some sufficiently small
//! coefficient"; the paper starts γ high and decreases it "while convergence is
//! achieved" without saying how. Our schedule, the measurement of n over the period,
//! and the optional trend term are documented in docs/protocols.md (FAIRBAT).
use crate::params::{FairbatParams, QueueMeasure};
use crate::window::Window;

/// The state of eq. (2) between updates.
#[derive(Clone, Debug)]
pub struct Fairbat {
    p: FairbatParams,
    /// Updates done (j).
    updates: u64,
    /// n at the previous update (for the trend term).
    prev_n: Option<f64>,
}

impl Fairbat {
    pub fn new(p: FairbatParams) -> Self {
        Fairbat { p, updates: 0, prev_n: None }
    }

    /// γ_j = max(gain_end, gain_start / (1 + j / gain_updates)).
    pub fn gain(&self, j: u64) -> f64 {
        (self.p.gain_start / (1.0 + j as f64 / self.p.gain_updates)).max(self.p.gain_end)
    }

    /// The queue size n(t) of eq. (2) at the end of window `w`, `waiting` chunks now.
    pub fn queue(&self, w: &Window, waiting: usize) -> f64 {
        match self.p.measure {
            QueueMeasure::Mean if w.span > 0.0 => w.waiting_area / w.span,
            _ => waiting as f64,
        }
    }

    /// The new limit after window `w` (unclamped; the controller clamps it).
    pub fn update(&mut self, limit: f64, w: &Window, waiting: usize) -> f64 {
        let n = self.queue(w, waiting);
        let gamma = self.gain(self.updates);
        let trend = self.prev_n.map_or(0.0, |p| n - p);
        self.prev_n = Some(n);
        self.updates += 1;
        limit + gamma * (n - self.p.tau) + self.p.trend * trend
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FairbatParams {
        FairbatParams { gain_start: 0.01, gain_end: 0.001, gain_updates: 10.0, tau: 50.0, trend: 0.0, ..FairbatParams::default() }
    }

    #[test]
    fn eq2_moves_the_limit_by_gain_times_the_queue_error() {
        let mut f = Fairbat::new(params());
        let w = Window { span: 120.0, waiting_area: 120.0 * 80.0, ..Window::default() };
        // n = 80 (mean over the window), τ = 50, γ_0 = 0.01: m + 0.3.
        assert!((f.update(4.0, &w, 3) - 4.3).abs() < 1e-12);
        // Below target it falls: n = 20 at γ_1 = 0.01/1.1.
        let w = Window { span: 120.0, waiting_area: 120.0 * 20.0, ..Window::default() };
        assert!((f.update(4.0, &w, 0) - (4.0 - 30.0 * 0.01 / 1.1)).abs() < 1e-12);
    }

    #[test]
    fn the_gain_decreases_harmonically_to_its_floor() {
        let f = Fairbat::new(params());
        assert_eq!(f.gain(0), 0.01);
        assert!((f.gain(10) - 0.005).abs() < 1e-15);
        assert!((f.gain(90) - 0.001).abs() < 1e-15);
        assert_eq!(f.gain(1_000_000), 0.001);
    }

    #[test]
    fn sample_measure_takes_the_queue_at_the_update() {
        let mut f = Fairbat::new(FairbatParams { measure: QueueMeasure::Sample, ..params() });
        let w = Window { span: 120.0, waiting_area: 0.0, ..Window::default() };
        assert!((f.update(2.0, &w, 150) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_trend_term_adds_the_change_of_the_queue() {
        let mut f = Fairbat::new(FairbatParams { trend: 0.02, gain_start: 0.01, gain_end: 0.01, ..params() });
        let w = |n: f64| Window { span: 1.0, waiting_area: n, ..Window::default() };
        assert!((f.update(1.0, &w(50.0), 0) - 1.0).abs() < 1e-12); // no previous n: no trend
        assert!((f.update(1.0, &w(60.0), 0) - (1.0 + 0.1 + 0.2)).abs() < 1e-12);
    }
}
