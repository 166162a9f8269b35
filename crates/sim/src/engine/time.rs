//! Simulated time: an integer count of nanoseconds, never a float.
//!
//! Arithmetic saturates instead of wrapping: `SimTime::MAX` means "never", later
//! than the end of any run. Validation keeps every configured time at or below
//! [`SimTime::LONGEST`], so sums of a few configured times never come near the
//! limit; saturation only guards quantities that grow with the run (a link's
//! backlog behind a huge queue at a tiny rate).
use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in (or span of) simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    /// Never: later than any event of any run.
    pub const MAX: SimTime = SimTime(u64::MAX);
    /// The longest time a scenario may configure (10^9 s, about 31.7 years): sums
    /// of up to 18 such times fit in 64 bits.
    pub const LONGEST: SimTime = SimTime(1_000_000_000_000_000_000);

    /// From seconds (rounded to the nearest nanosecond; saturates, NaN and negatives give 0).
    pub fn from_secs_f64(s: f64) -> SimTime {
        if !(s > 0.0) {
            return SimTime(0);
        }
        let ns = (s * 1e9).round();
        if ns >= u64::MAX as f64 {
            SimTime::MAX
        } else {
            SimTime(ns as u64)
        }
    }
    pub const fn from_millis(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self * k`, saturating.
    pub fn saturating_mul(self, k: u64) -> SimTime {
        SimTime(self.0.saturating_mul(k))
    }
}

impl std::ops::Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(o.0))
    }
}

impl std::ops::Sub for SimTime {
    type Output = SimTime;
    /// A span between two instants; the later one must come first (checked in debug builds).
    #[inline]
    fn sub(self, o: SimTime) -> SimTime {
        debug_assert!(self >= o, "negative span {self} - {o}");
        SimTime(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == SimTime::MAX {
            return f.write_str("never");
        }
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_and_never_wraps() {
        assert_eq!(SimTime::MAX + SimTime(1), SimTime::MAX);
        assert_eq!(SimTime::LONGEST.saturating_mul(100), SimTime::MAX);
        assert_eq!(SimTime(5) + SimTime(7), SimTime(12));
        assert_eq!(SimTime::from_secs_f64(f64::NAN), SimTime::ZERO);
        assert_eq!(SimTime::from_secs_f64(1e30), SimTime::MAX);
        assert_eq!(SimTime::from_secs_f64(0.025), SimTime::from_millis(25));
        assert!(SimTime::LONGEST.0.checked_mul(18).is_some());
    }
}
