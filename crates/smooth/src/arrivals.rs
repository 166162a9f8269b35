//! Flow arrival times of the model (lower-bounds paper, section II) and their reduction
//! modulo the period T (eq. 23).
//!
//! Time is an integer count of ticks; one packet transmission time D (eq. 4) is
//! `ticks_per_packet` ticks. Integer time makes the FIFO arithmetic exact, so the
//! steady state is detected by exact repetition and a packet-level engine that runs on
//! integer nanoseconds can be compared packet by packet (use `ticks_per_packet` = D in ns).
use crate::error::ParamError;
use cclab_rng::Xoshiro256pp;

/// Ticks per packet transmission time used by the batch runs: 2^20, so queue sizes
/// are resolved to about 1e-6 packet and N = 10^6 flows at U = 0.05 still fit in i64.
pub const TICKS_PER_PACKET: i64 = 1 << 20;

/// Distribution ψ of flow inter-arrival times δ_i (paper section II, Fig. 2), all with
/// mean μ = D/U (eq. 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Uniform on [0, 2μ]; variance μ²/3.
    Uniform,
    /// Exponential (Poisson flow arrivals) with mean μ; variance μ².
    Exponential,
    /// Pareto with index `k` > 1 and mean μ (scale x_m = μ(k-1)/k); variance
    /// μ²/(k(k-2)) for k > 2, infinite for 1 < k <= 2.
    Pareto { k: f64 },
}

impl Dist {
    /// Parse a distribution name ("uniform", "exponential", "pareto") with the Pareto index `k`.
    pub fn from_name(name: &str, k: f64) -> Result<Self, ParamError> {
        let d = match name.to_ascii_lowercase().as_str() {
            "uniform" | "uni" => Dist::Uniform,
            "exponential" | "exp" | "poisson" => Dist::Exponential,
            "pareto" | "par" => Dist::Pareto { k },
            _ => {
                return Err(ParamError::new(
                    "dist",
                    format!("unknown distribution {name:?}; expected 'uniform', 'exponential' or 'pareto'"),
                ))
            }
        };
        d.validate()?;
        Ok(d)
    }

    /// Check the parameters: the Pareto index must exceed 1 for the mean μ to exist.
    pub fn validate(&self) -> Result<(), ParamError> {
        if let Dist::Pareto { k } = *self {
            if !(k.is_finite() && k > 1.0) {
                return Err(ParamError::new("k", format!("Pareto index must be finite and > 1 so that the mean exists, got {k}")));
            }
        }
        Ok(())
    }

    /// One inter-arrival time with mean `mean` (any unit).
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256pp, mean: f64) -> f64 {
        match *self {
            Dist::Uniform => 2.0 * mean * rng.uniform(),
            Dist::Exponential => -mean * rng.uniform_pos().ln(),
            // Inverse CDF of Pareto(x_m, k): x_m * u^(-1/k), u in (0, 1]; mean = x_m k/(k-1).
            Dist::Pareto { k } => mean * (k - 1.0) / k * rng.uniform_pos().powf(-1.0 / k),
        }
    }
}

/// Check a utilization U: 0 < U <= 1 (paper section II).
pub fn check_utilization(utilization: f64) -> Result<(), ParamError> {
    if !(utilization > 0.0 && utilization <= 1.0) {
        return Err(ParamError::new("utilization", format!("must be in (0, 1], got {utilization}")));
    }
    Ok(())
}

/// Period T = N D / U (eq. 3) in ticks. At U = 1 it is exactly N D; below, it is rounded
/// but never below N D, so the work of a period never exceeds the period.
pub fn period_ticks(n: usize, utilization: f64, ticks_per_packet: i64) -> Result<i64, ParamError> {
    check_utilization(utilization)?;
    if ticks_per_packet <= 0 {
        return Err(ParamError::new("ticks_per_packet", format!("must be positive, got {ticks_per_packet}")));
    }
    let work = (n as i64)
        .checked_mul(ticks_per_packet)
        .ok_or_else(|| ParamError::new("n", "n * ticks_per_packet overflows 64-bit ticks".to_string()))?;
    if utilization == 1.0 {
        return Ok(work);
    }
    let t = (work as f64 / utilization).round();
    if t >= i64::MAX as f64 / 4.0 {
        return Err(ParamError::new("utilization", "period N D / U overflows 64-bit ticks".to_string()));
    }
    Ok((t as i64).max(work))
}

/// Arrival times t_1 = 0 < t_2 < ... of `n` flows in ticks (eqs. 1 and 7): t_i is the sum
/// of i-1 inter-arrival times of mean D/U (eq. 5), each rounded to a tick. Writes into `out`.
pub fn arrival_ticks_into(
    n: usize,
    dist: Dist,
    utilization: f64,
    ticks_per_packet: i64,
    rng: &mut Xoshiro256pp,
    out: &mut Vec<i64>,
) {
    out.clear();
    out.reserve(n);
    if n == 0 {
        return;
    }
    let mean = ticks_per_packet as f64 / utilization;
    let mut t: i64 = 0;
    out.push(0);
    for _ in 1..n {
        let d = dist.sample(rng, mean).round();
        // Saturate rather than wrap on absurd heavy-tail draws.
        t = t.saturating_add(if d >= i64::MAX as f64 { i64::MAX } else { d as i64 });
        out.push(t);
    }
}

/// Phases τ_i = t_i mod T (eq. 23) of non-decreasing arrival times, in ascending order.
/// The arrival times fall into a few runs of equal ⌊t/T⌋, each already sorted, so the
/// runs are merged rather than sorted.
pub fn reduce_sorted_into(arrivals: &[i64], period: i64, out: &mut Vec<i64>, scratch: &mut Vec<i64>) {
    out.clear();
    out.extend(arrivals.iter().map(|&t| t.rem_euclid(period)));
    let mut starts = vec![0usize];
    for i in 1..arrivals.len() {
        if arrivals[i].div_euclid(period) != arrivals[i - 1].div_euclid(period) {
            starts.push(i);
        }
    }
    if starts.len() == 1 {
        return;
    }
    if starts.len() > 16 {
        out.sort_unstable();
        return;
    }
    starts.push(arrivals.len());
    // Merge run after run into the accumulated prefix.
    for r in 1..starts.len() - 1 {
        let (a_end, b_end) = (starts[r], starts[r + 1]);
        scratch.clear();
        let (mut i, mut j) = (0, a_end);
        while i < a_end && j < b_end {
            if out[i] <= out[j] {
                scratch.push(out[i]);
                i += 1;
            } else {
                scratch.push(out[j]);
                j += 1;
            }
        }
        scratch.extend_from_slice(&out[i..a_end]);
        scratch.extend_from_slice(&out[j..b_end]);
        out[..b_end].copy_from_slice(scratch);
    }
}

/// Phases (eq. 23) of arbitrary arrival times and the FIFO service order: `order[j]` is
/// the flow whose packet is j-th in the period. Equal phases are served in flow order.
pub fn reduce_any(arrivals: &[i64], period: i64) -> (Vec<i64>, Vec<usize>) {
    let phase: Vec<i64> = arrivals.iter().map(|&t| t.rem_euclid(period)).collect();
    let mut order: Vec<usize> = (0..arrivals.len()).collect();
    order.sort_by_key(|&i| (phase[i], i));
    let sorted = order.iter().map(|&i| phase[i]).collect();
    (sorted, order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_mean_var(dist: Dist, n: usize) -> (f64, f64) {
        let mut r = crate::runs::run_stream(11, 0);
        let xs: Vec<f64> = (0..n).map(|_| dist.sample(&mut r, 1.0)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
        (m, v)
    }

    #[test]
    fn moments_match_fig2() {
        // Fig. 2: mean μ, variance μ²/3, μ², μ²/(k(k-2)).
        let n = 400_000;
        let (m, v) = sample_mean_var(Dist::Uniform, n);
        assert!((m - 1.0).abs() < 0.005 && (v - 1.0 / 3.0).abs() < 0.005, "{m} {v}");
        let (m, v) = sample_mean_var(Dist::Exponential, n);
        assert!((m - 1.0).abs() < 0.01 && (v - 1.0).abs() < 0.03, "{m} {v}");
        // k = 4 keeps the sample variance well behaved: μ²/(4*2) = 0.125.
        let (m, v) = sample_mean_var(Dist::Pareto { k: 4.0 }, n);
        assert!((m - 1.0).abs() < 0.005 && (v - 0.125).abs() < 0.01, "{m} {v}");
        // Heavy tail k = 1.8: only the mean is finite.
        let (m, _) = sample_mean_var(Dist::Pareto { k: 1.8 }, n);
        assert!((m - 1.0).abs() < 0.05, "{m}");
    }

    #[test]
    fn bad_parameters_name_the_argument() {
        assert_eq!(Dist::from_name("pareto", 1.0).unwrap_err().arg, "k");
        assert_eq!(Dist::from_name("gamma", 2.0).unwrap_err().arg, "dist");
        assert_eq!(period_ticks(10, 0.0, 1).unwrap_err().arg, "utilization");
        assert_eq!(period_ticks(10, 1.5, 1).unwrap_err().arg, "utilization");
        assert_eq!(period_ticks(10, 1.0, 0).unwrap_err().arg, "ticks_per_packet");
    }

    #[test]
    fn period_is_work_over_utilization() {
        assert_eq!(period_ticks(1000, 1.0, 80_000).unwrap(), 80_000_000);
        assert_eq!(period_ticks(1000, 0.5, 80_000).unwrap(), 160_000_000);
        assert_eq!(period_ticks(3, 0.7, 7).unwrap(), 30);
    }

    #[test]
    fn merge_equals_sort() {
        let mut r = crate::runs::run_stream(5, 0);
        for &(n, period) in &[(50usize, 40i64), (200, 30), (1000, 997), (10, 1)] {
            let mut t = 0i64;
            let arr: Vec<i64> = (0..n)
                .map(|_| {
                    t += (r.next_u64() % 3) as i64;
                    t
                })
                .collect();
            let (mut out, mut scratch) = (Vec::new(), Vec::new());
            reduce_sorted_into(&arr, period, &mut out, &mut scratch);
            let mut expect: Vec<i64> = arr.iter().map(|x| x % period).collect();
            expect.sort();
            assert_eq!(out, expect);
            let (sorted, order) = reduce_any(&arr, period);
            assert_eq!(sorted, expect);
            assert!(order.iter().zip(&sorted).all(|(&i, &p)| arr[i] % period == p));
        }
    }
}
