//! FAIRBAT's adaptive limit (Courcoubetis, Dimakis, Kanakakis, "Designing incentive
//! compatible protocols for background data transfers", §III, eq. 2):
//!
//! m(t+1) = m(t) + γ (n(t) − τ),  t = 0, T, 2T, ...
//!
//! n is the queue of waiting chunks, τ a positive target, γ "some sufficiently small
//! coefficient"; the paper starts γ high and decreases it "while convergence is
//! achieved" without saying how. Our schedule (halved at each crossing of τ, or
//! harmonic), the units of γ (relative to the arrivals of a period, or absolute), the
//! measurement of n over the period, and the trend term are documented in
//! docs/protocols.md (FAIRBAT).
use crate::params::{FairbatParams, GainScale, GainSchedule, QueueMeasure};
use crate::window::Window;

/// The state of eq. (2) between updates.
#[derive(Clone, Debug)]
pub struct Fairbat {
    p: FairbatParams,
    /// Updates done (j).
    updates: u64,
    /// n at the previous update (for the sign schedule).
    prev_n: Option<f64>,
    /// Chunks held (waiting and active) at the previous update (for the trend term).
    prev_held: Option<f64>,
    /// The gain of the sign schedule (halved at each crossing of τ).
    gamma: f64,
    /// Chunks that arrived over all the periods so far (for the relative gain).
    arrived: f64,
}

impl Fairbat {
    pub fn new(p: FairbatParams) -> Self {
        Fairbat { p, updates: 0, prev_n: None, prev_held: None, gamma: p.gain_start, arrived: 0.0 }
    }

    /// The harmonic schedule: γ_j = max(gain_end, gain_start / (1 + j / gain_updates)).
    pub fn gain(&self, j: u64) -> f64 {
        (self.p.gain_start / (1.0 + j as f64 / self.p.gain_updates)).max(self.p.gain_end)
    }

    /// The gain of this update, for a queue error `e` (the sign schedule halves it when
    /// the error changes sign from the previous update's).
    fn next_gain(&mut self, e: f64) -> f64 {
        match self.p.gain_schedule {
            GainSchedule::Harmonic => self.gain(self.updates),
            GainSchedule::Sign => {
                let prev = self.prev_n.map(|n| n - self.p.tau);
                if prev.is_some_and(|pe| pe * e < 0.0) {
                    self.gamma = (self.gamma / 2.0).max(self.p.gain_end);
                }
                self.gamma
            }
        }
    }

    /// How much the limit moves per unit of γ·(n − τ) + trend·Δn: 1 (eq. 2 as printed), or
    /// m/Â with Â the chunks arriving per period so far (at least one).
    fn scale(&self, limit: f64) -> f64 {
        match self.p.gain_scale {
            GainScale::None => 1.0,
            GainScale::Arrivals => limit / (self.arrived / self.updates.max(1) as f64).max(1.0),
        }
    }

    /// The queue size n(t) of eq. (2) at the end of window `w`, `waiting` chunks now.
    pub fn queue(&self, w: &Window, waiting: usize) -> f64 {
        match self.p.measure {
            QueueMeasure::Mean if w.span > 0.0 => w.waiting_area / w.span,
            _ => waiting as f64,
        }
    }

    /// The chunks the sender holds, waiting and active, measured as n is.
    fn held(&self, w: &Window, waiting: usize, active: u32) -> f64 {
        match self.p.measure {
            QueueMeasure::Mean if w.span > 0.0 => (w.waiting_area + w.active_area) / w.span,
            _ => waiting as f64 + active as f64,
        }
    }

    /// The new limit after window `w` (unclamped; the controller clamps it), `waiting`
    /// and `active` chunks now. The trend term reads the change of the chunks held,
    /// arrivals less completions: the rate mismatch T(λ − r(m)) it stands for. (The
    /// change of the waiting queue alone also counts the chunks a higher limit admitted,
    /// which fed each move of m back into the next, reversed and amplified by
    /// m·trend/Â: a limit cycle once m·trend exceeded the arrivals per period.)
    pub fn update(&mut self, limit: f64, w: &Window, waiting: usize, active: u32) -> f64 {
        let n = self.queue(w, waiting);
        let e = n - self.p.tau;
        let gamma = self.next_gain(e);
        let held = self.held(w, waiting, active);
        let trend = self.prev_held.map_or(0.0, |p| held - p);
        self.prev_n = Some(n);
        self.prev_held = Some(held);
        self.updates += 1;
        self.arrived += w.arrivals as f64;
        // the trend term falls with the gain (the whole update "gradually decreasing"), as
        // its square root: the loop's damping ratio, trend/(2√γ) in the linear model
        // (docs/protocols.md), stays what it was at the start
        let kappa = self.p.trend * (gamma / self.p.gain_start).sqrt();
        limit + self.scale(limit) * (gamma * e + kappa * trend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FairbatParams {
        FairbatParams {
            gain_start: 0.01,
            gain_end: 0.001,
            gain_updates: 10.0,
            tau: 50.0,
            trend: 0.0,
            gain_scale: GainScale::None,
            gain_schedule: GainSchedule::Harmonic,
            ..FairbatParams::default()
        }
    }

    #[test]
    fn eq2_moves_the_limit_by_gain_times_the_queue_error() {
        let mut f = Fairbat::new(params());
        let w = Window { span: 120.0, waiting_area: 120.0 * 80.0, ..Window::default() };
        // n = 80 (mean over the window), τ = 50, γ_0 = 0.01: m + 0.3.
        assert!((f.update(4.0, &w, 3, 0) - 4.3).abs() < 1e-12);
        // Below target it falls: n = 20 at γ_1 = 0.01/1.1.
        let w = Window { span: 120.0, waiting_area: 120.0 * 20.0, ..Window::default() };
        assert!((f.update(4.0, &w, 0, 0) - (4.0 - 30.0 * 0.01 / 1.1)).abs() < 1e-12);
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
        assert!((f.update(2.0, &w, 150, 0) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_sign_schedule_halves_the_gain_at_each_crossing_of_tau() {
        let mut f = Fairbat::new(FairbatParams { gain_schedule: GainSchedule::Sign, ..params() });
        let w = |n: f64| Window { span: 1.0, waiting_area: n, ..Window::default() };
        // above τ = 50 twice at γ = 0.01, then below (halved: 0.005), below again (kept),
        // above (halved: 0.0025), and never under gain_end = 0.001
        assert!((f.update(1.0, &w(60.0), 0, 0) - 1.1).abs() < 1e-12);
        assert!((f.update(1.0, &w(70.0), 0, 0) - 1.2).abs() < 1e-12);
        assert!((f.update(1.0, &w(40.0), 0, 0) - (1.0 - 0.05)).abs() < 1e-12);
        assert!((f.update(1.0, &w(30.0), 0, 0) - (1.0 - 0.1)).abs() < 1e-12);
        assert!((f.update(1.0, &w(60.0), 0, 0) - (1.0 + 0.025)).abs() < 1e-12);
        for k in 0..20 {
            f.update(1.0, &w(if k % 2 == 0 { 40.0 } else { 60.0 }), 0, 0);
        }
        assert_eq!(f.gamma, 0.001);
    }

    #[test]
    fn the_relative_gain_moves_the_limit_by_m_over_the_arrivals_per_period() {
        let mut f = Fairbat::new(FairbatParams { gain_scale: GainScale::Arrivals, ..params() });
        // 20 arrivals a period, m = 4: an error of +30 chunks at γ = 0.01 moves m by
        // 4/20 · 0.3 = 0.06; with 10 a period since (mean 15), by 4/15 · 0.01 · 30
        let w = Window { span: 120.0, waiting_area: 120.0 * 80.0, arrivals: 20, ..Window::default() };
        assert!((f.update(4.0, &w, 0, 0) - 4.06).abs() < 1e-12);
        let w = Window { span: 120.0, waiting_area: 120.0 * 80.0, arrivals: 10, ..Window::default() };
        let gamma = 0.01 / 1.1;
        assert!((f.update(4.0, &w, 0, 0) - (4.0 + 4.0 / 15.0 * gamma * 30.0)).abs() < 1e-12);
    }

    #[test]
    fn chunks_admitted_are_no_trend() {
        // 20 chunks moved from waiting to active between the updates: the chunks held did
        // not change, so only the queue term moves m (γ·(40 − 50)), not the trend term
        let mut f = Fairbat::new(FairbatParams { trend: 0.02, gain_start: 0.01, gain_end: 0.01, ..params() });
        let w = |n: f64, a: f64| Window { span: 1.0, waiting_area: n, active_area: a, ..Window::default() };
        f.update(1.0, &w(60.0, 10.0), 0, 0);
        assert!((f.update(1.0, &w(40.0, 30.0), 0, 0) - (1.0 - 0.1)).abs() < 1e-12);
    }

    #[test]
    fn the_trend_term_adds_the_change_of_the_queue() {
        let mut f = Fairbat::new(FairbatParams { trend: 0.02, gain_start: 0.01, gain_end: 0.01, ..params() });
        // (the gain stays at gain_start: the trend term keeps its weight)
        let w = |n: f64| Window { span: 1.0, waiting_area: n, ..Window::default() };
        assert!((f.update(1.0, &w(50.0), 0, 0) - 1.0).abs() < 1e-12); // no previous n: no trend
        assert!((f.update(1.0, &w(60.0), 0, 0) - (1.0 + 0.1 + 0.2)).abs() < 1e-12);
    }
}
