//! A fractional limit M realised by alternating between ⌊M⌋ and ⌈M⌉ active chunks.
//!
//! FAIRBAT §III: "If w is fractional, then our implementation will alternate opening
//! an integer number of TCP connections equal to the floor and the ceiling of w."
//! The paper does not say when to alternate. Our rule keeps the *time average* of
//! the number of active chunks at M while chunks wait (when the limit binds), by a
//! credit in chunk-seconds, the integral of (active − M) since the first update:
//!
//! * while chunks wait, the credit changes at the rate clamp(active, ⌊M⌋, ⌈M⌉) − M
//!   (up by 1 − frac(M) per second with ⌈M⌉ active, down by frac(M) with ⌊M⌋);
//! * with ⌊M⌋ active and chunks waiting, the next one starts when the credit
//!   reaches 0 (so ⌈M⌉ are active for a fraction frac(M) of the time);
//! * while no chunk waits the limit does not bind and the credit holds still, so
//!   idle time never buys a later burst above ⌈M⌉.
//!
//! Active chunks are never stopped: after M falls, the surplus runs to completion,
//! and time with more than ⌈M⌉ active is counted as ⌈M⌉ (the surplus is not paid
//! back later). An integral M needs no credit: ⌊M⌋ = ⌈M⌉.

/// The credit of the alternation, in chunk-seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Alternation {
    credit: f64,
}

/// ⌊M⌋ and ⌈M⌉ as counts.
#[inline]
pub fn floor_ceil(limit: f64) -> (u32, u32) {
    (limit.floor() as u32, limit.ceil() as u32)
}

impl Alternation {
    /// The credit (positive: more chunk-seconds active than M allows so far).
    pub fn credit(&self) -> f64 {
        self.credit
    }

    /// Let `dt` seconds pass with `active` chunks, limit `limit`, chunks waiting or not.
    pub fn advance(&mut self, dt: f64, active: u32, limit: f64, waiting: bool) {
        if waiting {
            let (lo, hi) = floor_ceil(limit);
            if lo < hi {
                self.credit += (active.clamp(lo, hi) as f64 - limit) * dt;
            }
        }
    }

    /// The credit reached zero (a deadline fired): settle rounding.
    pub fn settle(&mut self) {
        self.credit = self.credit.min(0.0);
    }

    /// May one more chunk start, with `active` running under limit `limit`?
    pub fn allows(&self, active: u32, limit: f64) -> bool {
        let (lo, hi) = floor_ceil(limit);
        active < lo || (active < hi && self.credit <= 0.0)
    }

    /// Seconds until the credit reaches 0 and a waiting chunk may start, if it is
    /// running down now (⌊M⌋ < ⌈M⌉ active... exactly ⌊M⌋ of them, credit positive).
    pub fn until_zero(&self, active: u32, limit: f64) -> Option<f64> {
        let (lo, hi) = floor_ceil(limit);
        (lo < hi && active == lo && self.credit > 0.0).then(|| self.credit / (limit - lo as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_limits_never_use_the_credit() {
        let mut a = Alternation::default();
        a.advance(10.0, 5, 3.0, true);
        assert_eq!(a.credit(), 0.0);
        assert!(a.allows(2, 3.0));
        assert!(!a.allows(3, 3.0));
        assert_eq!(a.until_zero(3, 3.0), None);
    }

    #[test]
    fn credit_rises_at_the_ceiling_and_falls_at_the_floor() {
        // M = 2.25: three active for 3 s adds 0.75·3 = 2.25 chunk-seconds; two active
        // then spend it at 0.25 per second, so the third may start again after 9 s:
        // 3 s of 3 and 9 s of 2 average 2.25.
        let mut a = Alternation::default();
        assert!(a.allows(2, 2.25));
        a.advance(3.0, 3, 2.25, true);
        assert!((a.credit() - 2.25).abs() < 1e-12);
        assert!(!a.allows(2, 2.25));
        let t = a.until_zero(2, 2.25).unwrap();
        assert!((t - 9.0).abs() < 1e-12);
        assert!((3.0 * 3.0 + t * 2.0) / (3.0 + t) - 2.25 < 1e-12);
        a.advance(t, 2, 2.25, true);
        a.settle();
        assert!(a.allows(2, 2.25));
    }

    #[test]
    fn no_waiting_chunk_holds_the_credit() {
        let mut a = Alternation::default();
        a.advance(100.0, 0, 0.4, false);
        a.advance(100.0, 1, 0.4, false);
        assert_eq!(a.credit(), 0.0);
    }

    #[test]
    fn a_surplus_after_a_fall_of_the_limit_counts_as_the_ceiling() {
        let mut a = Alternation::default();
        a.advance(2.0, 7, 2.5, true);
        assert!((a.credit() - 1.0).abs() < 1e-12); // (3 − 2.5)·2, not (7 − 2.5)·2
    }

    #[test]
    fn below_one_the_floor_is_zero_chunks() {
        // M = 0.2: one chunk for 4 s gives 3.2 chunk-seconds; none then for 16 s.
        let mut a = Alternation::default();
        a.advance(4.0, 1, 0.2, true);
        assert!(!a.allows(0, 0.2));
        assert!((a.until_zero(0, 0.2).unwrap() - 16.0).abs() < 1e-9);
    }
}
