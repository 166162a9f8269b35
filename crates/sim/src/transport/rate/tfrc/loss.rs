//! The loss history of a TFRC receiver: the last n = 8 loss intervals and the
//! loss event rate they give (RFC 5348 §5.3-5.5).
//!
//! An interval is counted in datagrams: a closed interval I_i (i ≥ 1) runs from
//! the first lost datagram of one loss event to the first of the next (§5.3);
//! the open interval I_0 from the first lost datagram of the latest event to the
//! highest datagram received, both included. With k closed intervals (k ≤ 8):
//!
//! ```text
//! I_tot0 = Σ_{i=0}^{k-1} I_i·w_i      I_tot1 = Σ_{i=1}^{k} I_i·w_(i-1)      W_tot = Σ_{i=0}^{k-1} w_i
//! p = W_tot / max(I_tot0, I_tot1)
//! ```
//!
//! with w = 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (§5.4: w_i = 1 for i < n/2, else
//! 2(n − i)/(n + 2)). Before eight intervals exist the sums run over those there
//! are, with the first weights (as Linux's CCID-3 does; §5.4 defines the sums for
//! a full history only). History discounting (§5.5) scales the weights of the old
//! intervals when I_0 grows past twice their mean.
/// n, the number of loss intervals kept (RFC 5348 §5.4).
pub const N: usize = 8;

/// The weights w_0..w_7 of RFC 5348 §5.4.
pub const WEIGHTS: [f64; N] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// The smallest general discount factor DF (RFC 5348 §5.5 recommends 0.25).
pub const DISCOUNT_THRESHOLD: f64 = 0.25;

/// The closed loss intervals, most recent first, and their discount factors.
#[derive(Clone, Debug)]
pub struct LossHistory {
    /// I_1..I_k in `closed[0..k]` (datagrams).
    closed: [f64; N],
    /// DF_1..DF_k, the cumulative discount of each closed interval (§5.5; all 1
    /// without discounting).
    df: [f64; N],
    k: usize,
    discounting: bool,
}

impl LossHistory {
    pub fn new(discounting: bool) -> Self {
        LossHistory { closed: [0.0; N], df: [1.0; N], k: 0, discounting }
    }

    /// No loss event yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// The closed intervals, most recent first.
    pub fn intervals(&self) -> &[f64] {
        &self.closed[..self.k]
    }

    /// The general discount factor DF for an open interval of `i0` datagrams
    /// (§5.5): 2·I_mean/I_0 (at least the threshold) when I_0 > 2·I_mean, I_mean
    /// being the weighted mean of the closed intervals; 1 otherwise, and always 1
    /// without discounting.
    pub fn general_df(&self, i0: f64) -> f64 {
        if !self.discounting || self.k == 0 {
            return 1.0;
        }
        let (mut i_tot, mut w_tot) = (0.0, 0.0);
        for ((&w, &df), &len) in WEIGHTS.iter().zip(&self.df).zip(&self.closed).take(self.k) {
            w_tot += w * df;
            i_tot += len * w * df;
        }
        let i_mean = i_tot / w_tot;
        if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(DISCOUNT_THRESHOLD)
        } else {
            1.0
        }
    }

    /// The loss event rate with an open interval of `i0` datagrams (0 before any
    /// loss event). Without discounting this is §5.4; with it, §5.5:
    ///
    /// ```text
    /// I_tot0 = I_0·w_0 + Σ_{i=1}^{k-1} I_i·w_i·DF_i·DF    W_tot0 = w_0 + Σ_{i=1}^{k-1} w_i·DF_i·DF
    /// I_tot1 = Σ_{i=1}^{k} I_i·w_(i-1)·DF_i               W_tot1 = Σ_{i=1}^{k} w_(i-1)·DF_i
    /// p = min(W_tot0/I_tot0, W_tot1/I_tot1)
    /// ```
    ///
    /// which is §5.4's when every DF is 1.
    pub fn p(&self, i0: f64) -> f64 {
        if self.k == 0 {
            return 0.0;
        }
        let df = self.general_df(i0);
        let (mut i_tot0, mut w_tot0) = (i0 * WEIGHTS[0], WEIGHTS[0]);
        let (mut i_tot1, mut w_tot1) = (0.0, 0.0);
        for i in 0..self.k {
            // closed[i] is I_(i+1).
            if i + 1 < self.k {
                let w = WEIGHTS[i + 1] * self.df[i] * df;
                i_tot0 += self.closed[i] * w;
                w_tot0 += w;
            }
            let w = WEIGHTS[i] * self.df[i];
            i_tot1 += self.closed[i] * w;
            w_tot1 += w;
        }
        (w_tot0 / i_tot0).min(w_tot1 / i_tot1)
    }

    /// A new loss event closes the open interval as an interval of `len`
    /// datagrams; `i0` is the open interval's length as the latest arrival saw it
    /// (it sets the discount folded into the older intervals, §5.5). The oldest
    /// of nine intervals is forgotten.
    pub fn close(&mut self, len: f64, i0: f64) {
        if self.discounting {
            let df = self.general_df(i0);
            for d in &mut self.df[..self.k] {
                *d *= df;
            }
        }
        for i in (1..N).rev() {
            self.closed[i] = self.closed[i - 1];
            self.df[i] = self.df[i - 1];
        }
        self.closed[0] = len;
        self.df[0] = 1.0;
        self.k = (self.k + 1).min(N);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(intervals_oldest_first: &[f64], discounting: bool) -> LossHistory {
        let mut h = LossHistory::new(discounting);
        for &i in intervals_oldest_first {
            h.close(i, 0.0);
        }
        h
    }

    #[test]
    fn weights_follow_the_rfc_formula() {
        for (i, &w) in WEIGHTS.iter().enumerate() {
            let f = if i < N / 2 { 1.0 } else { 2.0 * (N - i) as f64 / (N + 2) as f64 };
            assert!((w - f).abs() < 1e-15, "w_{i}");
        }
    }

    #[test]
    fn average_loss_interval_of_a_full_history() {
        // I_1..I_8 = 100, 80, 120, 90, 60, 110, 100, 70 (most recent first), W_tot = 6.
        // I_tot1 = 100 + 80 + 120 + 90 + 0.8·60 + 0.6·110 + 0.4·100 + 0.2·70 = 558.
        let h = history(&[70.0, 100.0, 110.0, 60.0, 90.0, 120.0, 80.0, 100.0], false);
        assert_eq!(h.intervals(), &[100.0, 80.0, 120.0, 90.0, 60.0, 110.0, 100.0, 70.0]);
        // I_0 = 30: I_tot0 = 30 + 100 + 80 + 120 + 0.8·90 + 0.6·60 + 0.4·110 + 0.2·100 = 502
        // < 558, so I_mean = 558/6 = 93.
        assert!((1.0 / h.p(30.0) - 93.0).abs() < 1e-12);
        // I_0 = 200: I_tot0 = 672 > 558, I_mean = 112.
        assert!((1.0 / h.p(200.0) - 112.0).abs() < 1e-12);
        // I_0 = 86 ties: I_tot0 = 558.
        assert!((1.0 / h.p(86.0) - 93.0).abs() < 1e-12);
        // A ninth interval pushes out the oldest (70): I_1..I_8 = 40, 100, ..., 100.
        let mut h9 = h.clone();
        h9.close(40.0, 0.0);
        // I_tot1 = 40 + 100 + 80 + 120 + 0.8·90 + 0.6·60 + 0.4·110 + 0.2·100 = 512.
        assert!((1.0 / h9.p(1.0) - 512.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn a_short_history_uses_the_first_weights() {
        assert_eq!(LossHistory::new(false).p(50.0), 0.0);
        // One interval of 50: I_tot1 = 50, W_tot = w_0 = 1; I_0 = 20 < 50: p = 1/50.
        let h = history(&[50.0], false);
        assert!((h.p(20.0) - 0.02).abs() < 1e-15);
        assert!((h.p(80.0) - 1.0 / 80.0).abs() < 1e-15);
        // Five intervals 10, 20, 30, 40, 50 (oldest first): W_tot = 1 + 1 + 1 + 1 + 0.8 = 4.8,
        // I_tot1 = 50 + 40 + 30 + 20 + 0.8·10 = 148.
        let h = history(&[10.0, 20.0, 30.0, 40.0, 50.0], false);
        assert!((1.0 / h.p(1.0) - 148.0 / 4.8).abs() < 1e-12);
    }

    #[test]
    fn discounting_weights_a_long_open_interval() {
        let h = history(&[70.0, 100.0, 110.0, 60.0, 90.0, 120.0, 80.0, 100.0], true);
        // No discount while I_0 ≤ 2·I_mean = 186: the same p as without.
        assert_eq!(h.general_df(186.0), 1.0);
        assert!((1.0 / h.p(30.0) - 93.0).abs() < 1e-12);
        // I_0 = 300: DF = 2·93/300 = 0.62; I_tot0 = 300 + 0.62·472 = 592.64,
        // W_tot0 = 1 + 0.62·5 = 4.1; I_tot1/W_tot1 = 93; p = min(4.1/592.64, 1/93).
        assert!((h.general_df(300.0) - 0.62).abs() < 1e-15);
        assert!((h.p(300.0) - 4.1 / 592.64).abs() < 1e-15);
        // DF never falls below the threshold: 2·93/1000 = 0.186 → 0.25.
        assert_eq!(h.general_df(1000.0), DISCOUNT_THRESHOLD);
        // A loss event at I_0 = 300 folds DF = 0.62 into the old intervals' factors:
        // I_1 = 300 (DF_1 = 1), I_2..I_8 = 100, 80, ..., 100 (DF 0.62; 70 forgotten).
        let mut h2 = h.clone();
        h2.close(300.0, 300.0);
        assert_eq!(h2.df[..8], [1.0, 0.62, 0.62, 0.62, 0.62, 0.62, 0.62, 0.62]);
        // I_mean of the closed intervals: (300 + 0.62·(100 + 80 + 120 + 0.8·90 + 0.6·60
        // + 0.4·110 + 0.2·100)) / (1 + 0.62·5) = 592.64/4.1.
        let i_mean = 592.64 / 4.1;
        assert!((h2.general_df(10.0 * i_mean) - 0.25).abs() < 1e-12);
        assert!((h2.general_df(3.0 * i_mean) - 2.0 / 3.0).abs() < 1e-12);
        // Without discounting the same events give the plain weights.
        let mut h3 = history(&[70.0, 100.0, 110.0, 60.0, 90.0, 120.0, 80.0, 100.0], false);
        h3.close(300.0, 300.0);
        assert_eq!(h3.df, [1.0; N]);
    }
}
