//! Exact send offsets at a constant rate: k·8·size/rate rounded half up to the
//! nanosecond, for every k, with additions only.
//!
//! The rate is an f64, hence a dyadic rational m·2^e, so the interval
//! 8·size·10^9/rate ns is a rational num/den with den = m·2^max(e, 0) < 2^53. The
//! offset of packet k is held as q + r/den (0 ≤ r < den) and advanced by the
//! interval's own quotient and remainder: no division per packet, and no rounding
//! error however long the run (a product k·interval in floating point drifts by
//! an ulp and rounds a value within ~10^-4 ns of a half the wrong way, e.g. packet
//! 23,148 of 1500-byte packets at 1,000,003 bit/s, exactly 277,775,166,674.49998 ns).
use crate::engine::SimTime;

/// Offsets k·interval, k = 0, 1, 2, ..., exact to the nanosecond.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    k: u64,
    /// k·interval = q + r/den.
    q: u64,
    r: u64,
    /// interval = step_q + step_r/den; den = 0: no exact form (the f64 `approx` is used).
    step_q: u64,
    step_r: u64,
    den: u64,
    approx: f64,
}

impl Schedule {
    /// The offsets of `packet_bytes`-byte packets at `rate_bps` (None: a rate of 0, never).
    pub fn new(rate_bps: f64, packet_bytes: u32) -> Option<Schedule> {
        if rate_bps.is_nan() || rate_bps <= 0.0 {
            return None;
        }
        let approx = packet_bytes as f64 * 8e9 / rate_bps;
        let mut s = Schedule { k: 0, q: 0, r: 0, step_q: 0, step_r: 0, den: 0, approx };
        if let Some((num, den)) = interval_fraction(rate_bps, packet_bytes) {
            if let Ok(step_q) = u64::try_from(num / den as u128) {
                s.step_q = step_q;
                s.step_r = (num % den as u128) as u64;
                s.den = den;
            }
        }
        Some(s)
    }

    /// The offset of packet k (the packets before it have been counted by `advance`).
    #[inline]
    pub fn offset(&self) -> SimTime {
        if self.den == 0 {
            return approx_offset(self.k, self.approx);
        }
        SimTime(self.q.saturating_add((2 * self.r >= self.den) as u64))
    }

    /// The offset of packet k − 1 (None before the first).
    pub fn previous(&self) -> Option<SimTime> {
        let k = self.k.checked_sub(1)?;
        if self.den == 0 {
            return Some(approx_offset(k, self.approx));
        }
        let (mut q, r) = if self.r >= self.step_r { (self.q, self.r - self.step_r) } else { (self.q.saturating_sub(1), self.r + self.den - self.step_r) };
        q = q.saturating_sub(self.step_q);
        Some(SimTime(q + (2 * r >= self.den) as u64))
    }

    /// Count one more packet.
    #[inline]
    pub fn advance(&mut self) {
        self.k += 1;
        if self.den == 0 {
            return;
        }
        // The carry without a branch: it comes irregularly for a fractional interval.
        let r = self.r + self.step_r;
        let carry = (r >= self.den) as u64;
        self.r = r - carry * self.den;
        self.q = self.q.saturating_add(self.step_q + carry);
    }
}

fn approx_offset(k: u64, interval: f64) -> SimTime {
    let dt = k as f64 * interval;
    if dt < u64::MAX as f64 {
        SimTime(dt.round() as u64)
    } else {
        SimTime::MAX
    }
}

/// 8·size·10^9/rate as num/den exactly, den < 2^53 (None if num overflows 128 bits,
/// for rates below about 10^-15 bit/s, or for a subnormal rate).
fn interval_fraction(rate_bps: f64, packet_bytes: u32) -> Option<(u128, u64)> {
    let bits = rate_bps.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 || biased == 0x7ff {
        return None;
    }
    // rate = m·2^e with m odd (or e = 0).
    let mut m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let mut e = biased - 1075;
    let tz = m.trailing_zeros() as i32;
    m >>= tz;
    e += tz;
    let bits_e9 = packet_bytes as u128 * 8 * 1_000_000_000;
    if e >= 0 {
        // rate ≤ 10^15 < 2^50, so m·2^e fits.
        Some((bits_e9, m.checked_shl(e as u32).filter(|&d| d >> e == m)?))
    } else {
        let shift = (-e) as u32;
        let num = bits_e9.checked_shl(shift).filter(|&n| n >> shift == bits_e9)?;
        Some((num, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// k·8·size·10^9/rate rounded half up, by exact integer arithmetic (whole rates).
    fn exact(k: u64, size: u64, rate: u64) -> u64 {
        let num = k as u128 * size as u128 * 8_000_000_000;
        ((2 * num + rate as u128) / (2 * rate as u128)) as u64
    }

    #[test]
    fn offsets_are_exact_where_floating_point_rounds_the_wrong_way() {
        let mut s = Schedule::new(1_000_003.0, 1500).unwrap();
        for _ in 0..23_148 {
            s.advance();
        }
        assert_eq!(s.offset(), SimTime(277_775_166_674)); // 277,775,166,674.49998
        assert_eq!((23_148.0 * (1500.0 * 8e9 / 1_000_003.0f64)).round(), 277_775_166_675.0);
        assert_eq!(s.previous(), Some(SimTime(exact(23_147, 1500, 1_000_003))));
    }

    #[test]
    fn whole_and_fractional_rates_over_a_million_packets() {
        for &(rate, size) in &[(33_300u64, 200u64), (3_000_000, 1000), (95_000, 950), (999_999_937, 1500), (7, 1)] {
            let mut s = Schedule::new(rate as f64, size as u32).unwrap();
            for k in 0..1_000_000u64 {
                assert_eq!(s.offset().0, exact(k, size, rate), "rate {rate} packet {k}");
                s.advance();
            }
        }
        // A fractional rate, U·C/N = 0.95·10^8/3 bit/s: against the rational of the f64 itself.
        let rate = 0.95e8 / 3.0;
        let (num, den) = interval_fraction(rate, 1000).unwrap();
        let mut s = Schedule::new(rate, 1000).unwrap();
        for k in 0..1_000_000u128 {
            let x = k * num;
            assert_eq!(s.offset().0 as u128, (2 * x + den as u128) / (2 * den as u128));
            s.advance();
        }
        // The f64 value is the rational: num/den equals 8e9·1000/rate to f64 precision.
        assert!(((num as f64 / den as f64) / (8e12 / rate) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn zero_and_extreme_rates() {
        assert!(Schedule::new(0.0, 1500).is_none());
        // 10^15 bit/s: 12 ps apart, offsets still exact.
        let mut s = Schedule::new(1e15, 1500).unwrap();
        for _ in 0..1000 {
            s.advance();
        }
        assert_eq!(s.offset(), SimTime(12));
        s.advance();
        assert_eq!((s.offset(), s.previous()), (SimTime(12), Some(SimTime(12)))); // 12.012 and 12
        // A rate so small that the fraction does not fit: the f64 formula.
        let s = Schedule::new(1e-30, 1500).unwrap();
        assert_eq!(s.den, 0);
        assert_eq!(s.offset(), SimTime::ZERO);
    }
}
