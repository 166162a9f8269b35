//! Own pseudo-random numbers: SplitMix64 for seeding, xoshiro256++ for draws.
//!
//! Both are public-domain algorithms by Vigna (and Blackman); implemented from their
//! published definitions so a run depends on nothing but its seed.

/// One SplitMix64 step: advances `state` and returns a well-mixed 64-bit value.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256++ generator; one independent stream per (seed, replication, class).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A stream derived from `seed` and the stream coordinates `a`, `b`
    /// (replication index and class index), so adding a class leaves the others' draws intact.
    pub fn stream(seed: u64, a: u64, b: u64) -> Rng {
        let mut st = seed ^ 0x6A09_E667_F3BC_C909;
        let x = splitmix64(&mut st);
        let mut st =
            x ^ a.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ b.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        let mut s = [0u64; 4];
        for v in s.iter_mut() {
            *v = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// Next raw 64-bit output of xoshiro256++.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on (0, 1] (never 0, so logarithms and negative powers are finite).
    #[inline]
    pub fn open01(&mut self) -> f64 {
        1.0 - ((self.next_u64() >> 11) as f64) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// Exponential variate with the given mean.
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        -self.open01().ln() * mean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let mut a = Rng::stream(7, 0, 0);
        let mut b = Rng::stream(7, 0, 0);
        let mut c = Rng::stream(7, 0, 1);
        let xa: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..5).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn exponential_mean_and_uniform_range() {
        let mut r = Rng::stream(1, 2, 3);
        let n = 400_000;
        let mut s = 0.0;
        let mut s2 = 0.0;
        for _ in 0..n {
            let u = r.open01();
            assert!(u > 0.0 && u <= 1.0);
            let x = r.exp(2.0);
            s += x;
            s2 += x * x;
        }
        let mean = s / n as f64;
        let sd = (s2 / n as f64 - mean * mean).sqrt();
        // Exp(mean 2) has sd 2: the sample mean lies within 4 standard errors of 2.
        assert!(
            (mean - 2.0).abs() < 4.0 * sd / (n as f64).sqrt(),
            "mean {mean}"
        );
        assert!((sd - 2.0).abs() < 0.05, "sd {sd}");
    }
}
