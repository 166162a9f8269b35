//! Flow-size distributions.
use super::files::{num, read_csv, resolve};
use crate::settings::{err, Result, Size, Table};
use cclab_rng::Xoshiro256pp as Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The largest flow a distribution draws: 10^15 bytes (1 PB). Heavy-tailed
/// draws beyond it are cut there; no simulated flow of that size ever finishes.
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000_000;

/// A flow-size distribution, in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    Exponential { mean_bytes: f64 },
    /// Pareto with the given mean and shape a > 1 (scale x_m = mean (a − 1)/a).
    Pareto { mean_bytes: f64, shape: f64 },
    Constant { bytes: f64 },
    /// Piecewise-linear CDF through (size, cdf) points, cdf rising from its first value to 1.
    Empirical { points: Vec<(f64, f64)> },
}

impl SizeDist {
    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Exponential { mean_bytes } | SizeDist::Pareto { mean_bytes, .. } => *mean_bytes,
            SizeDist::Constant { bytes } => *bytes,
            SizeDist::Empirical { points } => {
                // Mass at the first point, then uniform within each segment.
                let mut m = points[0].0 * points[0].1;
                for w in points.windows(2) {
                    m += 0.5 * (w[0].0 + w[1].0) * (w[1].1 - w[0].1);
                }
                m
            }
        }
    }

    /// Draw one flow size in bytes (from 1 to `MAX_FLOW_BYTES`).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match self {
            SizeDist::Exponential { mean_bytes } => rng.exponential(*mean_bytes),
            SizeDist::Pareto { mean_bytes, shape } => {
                // X = x_m U^(-1/a), U uniform on (0, 1].
                let xm = mean_bytes * (shape - 1.0) / shape;
                xm * rng.uniform_pos().powf(-1.0 / shape)
            }
            SizeDist::Constant { bytes } => *bytes,
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
        (x.round() as u64).clamp(1, MAX_FLOW_BYTES)
    }

    /// Read a `size = { dist = ..., ... }` table; files are found from `base_dir`.
    pub fn read(mut t: Table, base_dir: &Path) -> Result<SizeDist> {
        let dist: String = t.req("dist", "the distribution: \"exponential\", \"pareto\", \"constant\" or \"empirical\"")?;
        let d = match dist.as_str() {
            "exponential" => SizeDist::Exponential { mean_bytes: positive_mean(&mut t, &dist)? },
            "pareto" => {
                let mean_bytes = positive_mean(&mut t, &dist)?;
                match t.get::<f64>("shape")? {
                    Some(a) if a > 1.0 => SizeDist::Pareto { mean_bytes, shape: a },
                    Some(a) => return err(t.key_path("shape"), format!("expected a shape above 1 (finite mean), got {a}")),
                    None => return err(t.key_path("shape"), "missing: the pareto distribution needs a shape"),
                }
            }
            "constant" => match t.get::<Size>("value")? {
                Some(v) if v.0 >= 1.0 => SizeDist::Constant { bytes: v.0 },
                Some(v) => return err(t.key_path("value"), format!("expected at least one byte, got {}", v.0)),
                None => return err(t.key_path("value"), "missing: the constant distribution needs a value"),
            },
            "empirical" => {
                let file: String = t.req("file", "the empirical distribution needs a CSV file with columns size, cdf")?;
                let path = resolve(base_dir, &file);
                SizeDist::Empirical { points: read_cdf(&path, &t.key_path("file"))? }
            }
            other => {
                return err(
                    t.key_path("dist"),
                    format!("unknown distribution {other:?}; expected \"exponential\", \"pareto\", \"constant\" or \"empirical\""),
                )
            }
        };
        t.finish(&format!("the {dist} distribution"))?;
        Ok(d)
    }
}

fn positive_mean(t: &mut Table, dist: &str) -> Result<f64> {
    match t.get::<Size>("mean")? {
        Some(m) if m.0 > 0.0 => Ok(m.0),
        Some(m) => err(t.key_path("mean"), format!("expected a positive size, got {} bytes", m.0)),
        None => err(t.key_path("mean"), format!("missing: the {dist} distribution needs a mean")),
    }
}

/// Empirical CDF CSV: `size` (bytes, increasing), `cdf` (non-decreasing, last = 1).
pub fn read_cdf(path: &Path, key: &str) -> Result<Vec<(f64, f64)>> {
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for (line, r) in read_csv(path, key, &["size", "cdf"])? {
        let s = num(&r[0], path, line, "size", key)?;
        let c = num(&r[1], path, line, "cdf", key)?;
        if !(1.0..=MAX_FLOW_BYTES as f64).contains(&s) || !(0.0..=1.0).contains(&c) {
            return err(key, format!("{} line {line}: need 1 <= size <= 10^15 and 0 <= cdf <= 1", path.display()));
        }
        if let Some(&(ps, pc)) = pts.last() {
            if s <= ps || c < pc {
                return err(key, format!("{} line {line}: sizes must increase and cdf must not decrease", path.display()));
            }
        }
        pts.push((s, c));
    }
    match pts.last() {
        Some(&(_, c)) if (c - 1.0).abs() < 1e-9 => Ok(pts),
        _ => err(key, format!("{}: the last cdf value must be 1", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(d: &SizeDist, n: usize) -> f64 {
        let mut r = cclab_rng::stream(3, "sizes");
        (0..n).map(|_| d.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_distribution_means() {
        // Exponential: standard error 3e6/sqrt(2e5) ~ 6.7e3 bytes; 5 sigma band.
        let e = SizeDist::Exponential { mean_bytes: 3e6 };
        assert!((mean_of(&e, 200_000) - 3e6).abs() < 5.0 * 3e6 / (200_000f64).sqrt());
        // Pareto shape 2.5 has finite variance: var = xm^2 a/((a-1)^2 (a-2)).
        let p = SizeDist::Pareto { mean_bytes: 1e5, shape: 2.5 };
        let xm: f64 = 1e5 * 1.5 / 2.5;
        let sd = (xm * xm * 2.5 / (1.5 * 1.5 * 0.5)).sqrt();
        assert!((mean_of(&p, 400_000) - 1e5).abs() < 5.0 * sd / (400_000f64).sqrt());
        // Empirical: uniform on [1000, 3000] -> mean 2000.
        let emp = SizeDist::Empirical { points: vec![(1000.0, 0.0), (3000.0, 1.0)] };
        assert_eq!(emp.mean(), 2000.0);
        assert!((mean_of(&emp, 200_000) - 2000.0).abs() < 5.0 * 577.4 / (200_000f64).sqrt() + 0.5);
    }

    #[test]
    fn heavy_tails_are_cut_below_the_long_lived_marker() {
        // Shape 1.01: U = 2^-53 would give x_m * 2^52.5, beyond 2^64 bytes.
        let p = SizeDist::Pareto { mean_bytes: 3e6, shape: 1.01 };
        let mut r = cclab_rng::stream(1, "sizes");
        assert!((0..200_000).all(|_| p.sample(&mut r) <= MAX_FLOW_BYTES));
    }
}
