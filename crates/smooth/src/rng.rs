//! Small deterministic RNG: SplitMix64 (seeding) and xoshiro256++ (draws), with one
//! independent stream per (seed, run) so a run's draws never depend on how many runs
//! precede it or on how runs are split across threads.

/// SplitMix64 (Steele, Lea, Flood 2014); used to expand seeds into xoshiro state.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is `mix(seed + golden gamma)`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }
}

/// The SplitMix64 finaliser: a bijective 64-bit mixing function.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256++ 1.0 (Blackman and Vigna).
#[derive(Clone, Debug)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    /// A generator with an explicit state (must not be all zero).
    pub fn from_state(s: [u64; 4]) -> Self {
        assert!(s.iter().any(|&x| x != 0), "xoshiro256++ state must not be all zero");
        Self { s }
    }

    /// Stream number `stream` of seed `seed`: the state is four SplitMix64 outputs of a
    /// key mixed from both, so streams of one seed (and seeds) are unrelated.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let key = mix64(seed ^ 0x6A09_E667_F3BC_C908) ^ mix64(stream.wrapping_add(0xBB67_AE85_84CA_A73B));
        let mut sm = SplitMix64::new(key);
        let s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        if s.iter().all(|&x| x == 0) {
            return Self::from_state([1, 2, 3, 4]);
        }
        Self { s }
    }

    /// The next 64-bit output.
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

    /// Uniform on [0, 1) with 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1]: safe to take the logarithm or a negative power of.
    #[inline]
    pub fn next_open01(&mut self) -> f64 {
        1.0 - self.next_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_value() {
        // First output of SplitMix64 seeded with 0 (reference implementation by Vigna).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn xoshiro_first_output_by_hand() {
        // rotl(1 + 4, 23) + 1 = 5 * 2^23 + 1.
        let mut r = Xoshiro256pp::from_state([1, 2, 3, 4]);
        assert_eq!(r.next_u64(), 41_943_041);
    }

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map({ let mut r = Xoshiro256pp::stream(7, 3); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = Xoshiro256pp::stream(7, 3); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = Xoshiro256pp::stream(7, 4); move |_| r.next_u64() }).collect();
        let d: Vec<u64> = (0..4).map({ let mut r = Xoshiro256pp::stream(8, 3); move |_| r.next_u64() }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn uniform_mean_and_range() {
        let mut r = Xoshiro256pp::stream(1, 0);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        // Standard error of the mean is sqrt(1/12/n) ~ 6.5e-4; allow 5 of them.
        assert!((sum / n as f64 - 0.5).abs() < 3.3e-3);
    }
}
