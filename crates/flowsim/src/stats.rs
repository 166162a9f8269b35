//! Confidence intervals over independent replications.

/// 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95% interval).
///
/// Exact table values for df ≤ 30; beyond, the Cornish–Fisher expansion around the
/// normal quantile (error below 1e-4 for df > 30).
pub fn t975(df: u32) -> f64 {
    const T: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if (df as usize) <= T.len() {
        return T[df as usize - 1];
    }
    let z: f64 = 1.959963984540054;
    let n = df as f64;
    let z3 = z * z * z;
    let z5 = z3 * z * z;
    z + (z3 + z) / (4.0 * n) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
}

/// Mean and 95% confidence half-width of independent samples (NaN samples are skipped).
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let m = v.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (m, f64::NAN);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    (m, t975(n as u32 - 1) * (var / n as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert!((t975(1) - 12.7062).abs() < 1e-3);
        assert!((t975(10) - 2.2281).abs() < 1e-3);
        // Table value t_{0.975,40} = 2.0211, t_{0.975,120} = 1.9799.
        assert!((t975(40) - 2.0211).abs() < 2e-4);
        assert!((t975(120) - 1.9799).abs() < 2e-4);
    }

    #[test]
    fn mean_ci_of_known_samples() {
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, f64::NAN]);
        assert_eq!(m, 2.0);
        // s = 1, n = 3: half-width t_{.975,2}/sqrt(3).
        assert!((h - 4.302653 / 3f64.sqrt()).abs() < 1e-9);
    }
}
