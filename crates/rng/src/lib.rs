//! The one random-number generator of cclab: xoshiro256++ 1.0 (Blackman and Vigna,
//! 2019) with SplitMix64 (Steele, Lea and Flood, 2014) to expand seeds. Written
//! from the published definitions so the numbers a seed produces never change
//! with a dependency.
//!
//! Every random source of every simulator draws from its own stream,
//! [`stream`]`(seed, key)`, where the key names the source as a path
//! (`"arrivals/short"`, `"flowsim/rep/3/class/1"`, `"smooth/run/17"`). A source's
//! draws depend only on the seed and its own key, so adding a source (a traffic
//! class, a replication, a run) never changes the draws of another, and runs split
//! across threads draw what they would draw alone.

/// The SplitMix64 finaliser: a bijective 64-bit mixing function.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One SplitMix64 step: advances `state` by the golden gamma and returns its mix.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// Four SplitMix64 outputs from `state`: a xoshiro256++ state.
pub fn expand(mut state: u64) -> [u64; 4] {
    [splitmix64(&mut state), splitmix64(&mut state), splitmix64(&mut state), splitmix64(&mut state)]
}

/// The name of a random stream: FNV-1a (64-bit) of its path, built without
/// allocating. `StreamKey::new("rep").num(3)` is the key of the path `"rep/3"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamKey(u64);

impl StreamKey {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// The key of the path `name`.
    pub const fn new(name: &str) -> Self {
        StreamKey(Self::OFFSET).bytes(name.as_bytes())
    }

    const fn bytes(self, b: &[u8]) -> Self {
        let mut h = self.0;
        let mut i = 0;
        while i < b.len() {
            h ^= b[i] as u64;
            h = h.wrapping_mul(Self::PRIME);
            i += 1;
        }
        StreamKey(h)
    }

    /// The key of this path followed by `/` and `part`.
    pub const fn part(self, part: &str) -> Self {
        self.bytes(b"/").bytes(part.as_bytes())
    }

    /// The key of this path followed by `/` and the decimal digits of `n`.
    pub fn num(self, n: u64) -> Self {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut n = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.bytes(b"/").bytes(&digits[i..])
    }
}

impl From<&str> for StreamKey {
    fn from(name: &str) -> Self {
        StreamKey::new(name)
    }
}

/// The stream `key` under `seed`: SplitMix64 expansion of the seed mixed with the
/// key's hash. The one derivation of every stream in cclab.
pub fn stream(seed: u64, key: impl Into<StreamKey>) -> Xoshiro256pp {
    Xoshiro256pp::from_state(expand(seed ^ key.into().0.rotate_left(17)))
}

/// The xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    /// A generator with the given state; the all-zero state (a fixed point) becomes [1, 0, 0, 0].
    pub fn from_state(mut s: [u64; 4]) -> Self {
        if s == [0; 4] {
            s[0] = 1;
        }
        Xoshiro256pp { s }
    }

    /// Next 64 random bits.
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
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1]: safe to take a logarithm or a negative power of.
    #[inline]
    pub fn uniform_pos(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponential with the given mean (inverse transform).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_pos().ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_value() {
        // First output of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut s = 0;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn xoshiro_first_output_by_hand() {
        // rotl(s0 + s3, 23) + s0 = rotl(5, 23) + 1 = 5 * 2^23 + 1.
        let mut r = Xoshiro256pp::from_state([1, 2, 3, 4]);
        assert_eq!(r.next_u64(), 41_943_041);
    }

    #[test]
    fn stream_keys_are_paths() {
        assert_eq!(StreamKey::new("rep").num(3).part("class").num(12), StreamKey::new("rep/3/class/12"));
        assert_eq!(StreamKey::new("a").num(0), StreamKey::new("a/0"));
        assert_eq!(StreamKey::new("a").num(u64::MAX), StreamKey::new("a/18446744073709551615"));
        // FNV-1a reference value: the hash of "a" (Fowler, Noll and Vo's test vectors).
        assert_eq!(StreamKey::new("a").0, 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn streams_depend_on_seed_and_key_only() {
        let draws = |seed, key: &str| -> Vec<u64> {
            let mut r = stream(seed, key);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(draws(7, "x"), draws(7, "x"));
        assert_ne!(draws(7, "x"), draws(7, "y"));
        assert_ne!(draws(7, "x"), draws(8, "x"));
        assert_ne!(draws(7, "run/1"), draws(7, "run/10"));
    }

    #[test]
    fn exponential_and_uniform_moments() {
        // n = 250k draws: standard error of the mean is mean / sqrt(n); 5-sigma bands.
        let mut r = Xoshiro256pp::from_state(expand(1));
        let n = 250_000;
        let m: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 5.0 * 2.0 / (n as f64).sqrt(), "mean {m}");
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 5.0 * (1.0f64 / 12.0).sqrt() / (n as f64).sqrt());
        assert!((0..1000).all(|_| r.uniform_pos() > 0.0));
    }
}
