//! ns-2's average loss interval (`algo_ 1`, "WALI", tfrc-sink.cc:555-660,
//! 870-911) with `smooth_ 1`, `NumSamples_ -1` (8, plus one with smooth_),
//! `discount_ 1` and `minDiscountRatio_ 0.5`, `ShortIntervals_ 0`.
//!
//! `sample[0]` is the open interval (packets since the latest loss event's
//! first lost packet), `sample[1..]` the closed ones, newest first; `mult[i]`
//! the discount each interval has accumulated.

/// ns-2's `DEFAULT_NUMSAMPLES` (tfrc-sink.h:54), plus one for `smooth_` (init_WALI).
const N: usize = 9;

/// `minDiscountRatio_` (ns-default.tcl:1194).
const MIN_DISCOUNT_RATIO: f64 = 0.5;

/// The loss-interval history.
#[derive(Clone, Debug)]
pub struct Wali {
    sample: [i64; N + 1],
    mult: [f64; N + 1],
    weights: [f64; N + 1],
    /// `sample_count`: closed intervals + 1 (1: no loss event yet).
    sample_count: usize,
    /// `mult_factor_`: the discount of the open interval's current length.
    mult_factor: f64,
    /// `false_sample`: 0 until the history was seeded (adjust_history).
    seeded: bool,
}

impl Default for Wali {
    fn default() -> Self {
        // init_WALI with smooth_: weights 1 for the first N/2 = 4, then
        // 1 − (i − 4)/5: 1, 0.8, 0.6, 0.4, 0.2, 0.
        let mid = N / 2;
        let mut weights = [1.0; N + 1];
        for (i, w) in weights.iter_mut().enumerate().skip(mid) {
            *w = 1.0 - (i - mid) as f64 / (mid as f64 + 1.0);
        }
        Wali { sample: [0; N + 1], mult: [1.0; N + 1], weights, sample_count: 1, mult_factor: 1.0, seeded: false }
    }
}

impl Wali {
    /// One more packet in the open interval; `event`: it starts a new loss event
    /// (est_loss_WALI's loop over the packets since the last estimate).
    pub fn count(&mut self, event: bool) {
        self.sample[0] += 1;
        if event {
            self.sample_count += 1;
            self.sample.copy_within(0..N, 1);
            self.sample[0] = 0;
            // multiply_array then shift_array: the old intervals keep the discount.
            for m in &mut self.mult[1..] {
                *m *= self.mult_factor;
            }
            self.mult.copy_within(0..N, 1);
            self.mult[0] = 1.0;
            self.mult_factor = 1.0;
        }
    }

    /// `adjust_history`: at the first loss event the history becomes one closed
    /// interval of `first` packets and an empty open one.
    pub fn seed(&mut self, first: i64) {
        self.sample[1] = first;
        self.sample[0] = 0;
        self.sample_count += 1;
        self.seeded = true;
    }

    /// `weighted_average1` with `smooth_`: from index `start` to `end` (exclusive),
    /// the open interval weighted by `weights[i + 1]` when included.
    fn average(&self, start: usize, mut end: usize, factor: f64) -> f64 {
        let shift = usize::from(start == 0);
        if start == 0 && end == N + 1 {
            end -= 1;
        }
        let coef = |i: usize| if i == 0 { self.mult[i] } else { factor * self.mult[i] } * self.weights[i + shift];
        let wsum: f64 = (start..end).map(coef).sum();
        (start..end).map(|i| coef(i) * self.sample[i] as f64 / wsum).sum()
    }

    /// `est_loss_WALI`'s estimate after the packets are counted: the loss event
    /// rate (0 before any loss event; 999 for an empty history).
    pub fn loss_rate(&mut self) -> f64 {
        let ds = self.sample_count.min(N + 1);
        if self.sample_count == 1 && !self.seeded {
            return 0.0;
        }
        // History discounting: a long open interval discounts the old ones, at
        // most to minDiscountRatio_.
        if self.sample_count > 1 && self.sample[0] > 0 {
            let ave = self.average(1, ds, 1.0);
            let ratio = 2.0 * ave / self.sample[0] as f64;
            if ratio < 1.0 {
                self.mult_factor = ratio.max(MIN_DISCOUNT_RATIO);
            }
        }
        let with_open = self.average(0, ds, self.mult_factor);
        let closed = self.average(1, ds, self.mult_factor);
        let mean = with_open.max(closed);
        if mean > 0.0 {
            1.0 / mean
        } else {
            999.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_ns2s_smoothed_ones() {
        let w = Wali::default();
        for (got, want) in w.weights.iter().zip([1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2, 0.0]) {
            assert!((got - want).abs() < 1e-15, "{:?}", w.weights);
        }
    }

    /// A history with closed intervals (newest first) and `open` packets since.
    fn history(closed: &[i64], open: i64) -> Wali {
        let mut w = Wali::default();
        w.seed(closed[closed.len() - 1]);
        // Each interval counts its packets up to and including the lost one that
        // ends it (counted, then shifted out).
        for &c in closed.iter().rev().skip(1) {
            for _ in 0..c - 1 {
                w.count(false);
            }
            w.count(true);
        }
        for _ in 0..open {
            w.count(false);
        }
        w
    }

    #[test]
    fn the_average_takes_the_larger_of_with_and_without_the_open_interval() {
        // Closed 100, 80, 120 (newest first), open 50: with the open one, weights
        // 1, 1, 1, 1 over 50, 100, 80, 120: 87.5; without: 100 (weights 1, 1, 1).
        let mut w = history(&[100, 80, 120], 50);
        assert_eq!(w.sample[..4], [50, 100, 80, 120]);
        assert_eq!(w.loss_rate(), 1.0 / 100.0);
        // Open 400 > 2·100: discounting, mult_factor = 2·100/400 = 0.5 (the floor):
        // with the open one (400 + 0.5·300)/(1 + 1.5) = 220; without 100.
        let mut w = history(&[100, 80, 120], 400);
        assert!((w.loss_rate() - 1.0 / 220.0).abs() < 1e-15);
        // Open 250: ratio 200/250 = 0.8: (250 + 0.8·300)/(1 + 2.4) = 144.1.
        let mut w = history(&[100, 80, 120], 250);
        assert!((w.loss_rate() - 3.4 / 490.0).abs() < 1e-15);
    }

    #[test]
    fn a_new_event_keeps_the_old_discount() {
        // After the open interval of 400 was discounted by 0.5, a lost packet (the
        // 401st) closes it: the three old intervals keep the factor 0.5, the new one 1.
        let mut w = history(&[100, 80, 120], 400);
        w.loss_rate();
        w.count(true);
        assert_eq!(w.sample[..5], [0, 401, 100, 80, 120]);
        assert_eq!(w.mult[..5], [1.0, 1.0, 0.5, 0.5, 0.5]);
        // Without the open interval: (401 + 0.5·(100 + 80 + 120))/(1 + 1.5) = 220.4;
        // with it (weights shifted by one, w5 = 0.8): 539/3.4 = 158.5, smaller.
        assert!((w.loss_rate() - 2.5 / 551.0).abs() < 1e-15);
        // Nothing before any loss, and a seeded history reports at once.
        assert_eq!(Wali::default().loss_rate(), 0.0);
        let mut w = Wali::default();
        w.seed(500);
        assert_eq!(w.loss_rate(), 1.0 / 500.0);
    }

    #[test]
    fn ten_intervals_drop_the_oldest_and_the_open_one_uses_the_next_weight() {
        // Nine closed intervals of 10 and an open one of 10: every weight up to
        // w[9] = 0 is used; both averages are 10.
        let mut w = history(&[10; 9], 10);
        assert_eq!(w.sample_count, 10);
        assert!((w.loss_rate() - 0.1).abs() < 1e-15);
    }
}
