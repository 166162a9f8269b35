//! Traffic: flow-size sampling and the per-class random streams.
use crate::engine::Rng;
use crate::scenario::SizeDist;

impl SizeDist {
    /// Draw one flow size in bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match self {
            SizeDist::Exponential { mean } => rng.exponential(*mean),
            SizeDist::Pareto { mean, shape } => {
                // Pareto with scale x_m = mean (a-1)/a: X = x_m U^(-1/a), U uniform on (0,1].
                let xm = mean * (shape - 1.0) / shape;
                xm * rng.uniform_pos().powf(-1.0 / shape)
            }
            SizeDist::Constant { value } => *value,
            SizeDist::Empirical { points } => {
                // Inverse transform of the piecewise-linear CDF.
                let u = rng.uniform();
                if u <= points[0].1 {
                    points[0].0
                } else {
                    let k = points.partition_point(|pt| pt.1 < u);
                    let (s0, c0) = points[k - 1];
                    let (s1, c1) = points[k];
                    if c1 > c0 {
                        s0 + (s1 - s0) * (u - c0) / (c1 - c0)
                    } else {
                        s1
                    }
                }
            }
        };
        (x.round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(d: &SizeDist, n: usize) -> f64 {
        let mut r = crate::engine::stream(3, "sizes");
        (0..n).map(|_| d.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_distribution_means() {
        // Exponential: standard error 3e6/sqrt(2e5) ~ 6.7e3 bytes; 5 sigma band.
        let e = SizeDist::Exponential { mean: 3e6 };
        assert!((mean_of(&e, 200_000) - 3e6).abs() < 5.0 * 3e6 / (200_000f64).sqrt());
        // Pareto shape 2.5 has finite variance: var = xm^2 a/((a-1)^2 (a-2)).
        let p = SizeDist::Pareto { mean: 1e5, shape: 2.5 };
        let xm: f64 = 1e5 * 1.5 / 2.5;
        let sd = (xm * xm * 2.5 / (1.5 * 1.5 * 0.5)).sqrt();
        assert!((mean_of(&p, 400_000) - 1e5).abs() < 5.0 * sd / (400_000f64).sqrt());
        // Empirical: uniform on [1000, 3000] -> mean 2000.
        let emp = SizeDist::Empirical { points: vec![(1000.0, 0.0), (3000.0, 1.0)] };
        assert_eq!(emp.mean(), 2000.0);
        assert!((mean_of(&emp, 200_000) - 2000.0).abs() < 5.0 * 577.4 / (200_000f64).sqrt() + 0.5);
    }
}
