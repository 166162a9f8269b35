//! The average queue of RED (S. Floyd and V. Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM ToN 1(4), 1993, §4 and Fig. 2),
//! shared by RED and the linear marking profile.
use crate::engine::SimTime;

/// An exponentially weighted moving average of the queue met by arriving packets,
/// corrected for the time the link was idle.
#[derive(Clone, Debug)]
pub struct Average {
    /// The average, in the unit of the queue it is given (packets or bytes).
    pub value: f64,
    /// w_q, the weight of each new sample.
    weight: f64,
    rate_bps: u64,
    /// 10^9 times the bits of the typical packet whose transmission time measures
    /// idle periods (m = idle_ns · rate_bps / this), and the same in 64 bits if it fits.
    per_packet: u128,
    per_packet_64: Option<u64>,
}

impl Average {
    /// A zero average with weight `weight` on a link of `rate_bps`, measuring idle
    /// time in transmissions of `mean_packet_bytes`.
    pub fn new(weight: f64, rate_bps: u64, mean_packet_bytes: u32) -> Average {
        let per_packet = mean_packet_bytes as u128 * 8 * 1_000_000_000;
        Average { value: 0.0, weight, rate_bps, per_packet, per_packet_64: u64::try_from(per_packet).ok() }
    }

    /// m: how many typical packets the link could have sent while idle for `idle`,
    /// rounded down (Floyd and Jacobson's f(time − q_time) is linear in the idle
    /// time; ns-2 and ns-3 truncate it to an integer).
    pub fn idle_packets(&self, idle: SimTime) -> u64 {
        // The same quotient in 64 bits when it can be (a 128-bit division is slow).
        if let (Some(n), Some(d)) = (idle.0.checked_mul(self.rate_bps), self.per_packet_64) {
            return n / d;
        }
        let m = idle.0 as u128 * self.rate_bps as u128 / self.per_packet;
        m.min(u64::MAX as u128) as u64
    }

    /// A packet arrives to `q` waiting after the link was idle for `idle` (zero if
    /// busy): avg ← (1 − w_q)^(m+1) · avg + w_q · q. With m = 0 this is the EWMA
    /// of Floyd and Jacobson's eq. (§4), avg ← (1 − w_q) avg + w_q q; after an idle
    /// period the average decays as if m packets had found the queue empty
    /// (Fig. 2: avg ← (1 − w_q)^m avg), and the arriving packet is one more such
    /// sample, as ns-2's and ns-3's `Estimator(nQueued, m + 1, ...)` count it.
    #[inline]
    pub fn update(&mut self, q: f64, idle: SimTime) -> f64 {
        let keep = 1.0 - self.weight;
        let decay = match self.idle_packets(idle) {
            0 => keep,
            // By squaring (a few multiplications) where the exponent fits.
            m if m < i32::MAX as u64 => keep.powi(m as i32 + 1),
            m => keep.powf(m as f64 + 1.0),
        };
        self.value = self.value * decay + self.weight * q;
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_is_the_ewma_of_the_samples() {
        // Closed form: from 0, n samples of a constant q give q (1 − (1 − w)^n).
        let mut a = Average::new(0.002, 10_000_000, 1500);
        for _ in 0..1000 {
            a.update(40.0, SimTime::ZERO);
        }
        let want = 40.0 * (1.0 - 0.998f64.powi(1000));
        assert!((a.value - want).abs() < 1e-9 * want, "{} vs {want}", a.value);
        // A ramp q_k = k: avg_n = w Σ_k (1 − w)^(n−k) k, summed directly.
        let (w, n) = (0.05, 300);
        let mut a = Average::new(w, 10_000_000, 1500);
        for k in 1..=n {
            a.update(k as f64, SimTime::ZERO);
        }
        let want: f64 = (1..=n).map(|k| w * (1.0 - w).powi(n - k) * k as f64).sum();
        assert!((a.value - want).abs() < 1e-9 * want, "{} vs {want}", a.value);
        // w = 1: the instantaneous queue.
        let mut a = Average::new(1.0, 10_000_000, 1500);
        a.update(7.0, SimTime::ZERO);
        assert_eq!(a.update(3.0, SimTime::from_millis(5)), 3.0);
    }

    #[test]
    fn idle_time_decays_the_average_as_m_empty_arrivals() {
        // 10 Mbps, 500-byte packets: s = 400 us. An idle period of 10 ms is m = 25
        // packet times, 10.39 ms still 25 (rounded down), 10.4 ms 26.
        let mut a = Average::new(0.01, 10_000_000, 500);
        assert_eq!(a.idle_packets(SimTime::from_millis(10)), 25);
        assert_eq!(a.idle_packets(SimTime(10_399_999)), 25);
        assert_eq!(a.idle_packets(SimTime(10_400_000)), 26);
        assert_eq!(a.idle_packets(SimTime(399_999)), 0);
        a.value = 100.0;
        // The arrival finds the queue empty: 26 factors of 0.99 in all.
        let v = a.update(0.0, SimTime::from_millis(10));
        assert!((v - 100.0 * 0.99f64.powi(26)).abs() < 1e-12, "{v}");
        // An idle time shorter than one packet: the plain EWMA step.
        a.value = 100.0;
        assert!((a.update(2.0, SimTime(1000)) - (99.0 + 0.02)).abs() < 1e-12);
        // Idle for ever: the average is forgotten.
        a.value = 100.0;
        assert_eq!(a.update(0.0, SimTime::LONGEST), 0.0);
        // Quotients past 64 bits: 10^9 s at 1 Pbps in 4 GB packets, and a
        // typical packet whose 10^9 bits·ns overflow 64 bits.
        let huge = Average::new(0.5, 1_000_000_000_000_000, u32::MAX);
        assert_eq!(huge.idle_packets(SimTime::LONGEST), 29_103_830_463_509);
        assert_eq!(huge.idle_packets(SimTime::from_secs(100)), 2_910_383);
        let a = Average::new(1e-12, 1_000_000_000_000, 1);
        assert_eq!(a.idle_packets(SimTime::from_secs(3)), 375_000_000_000);
        // An exponent past 32 bits still decays (1 − 10^-12)^(3.75·10^11 + 1) = e^-0.375.
        let mut a = Average { value: 1.0, ..a };
        assert!((a.update(0.0, SimTime::from_secs(3)) - (-0.375f64).exp()).abs() < 1e-4);
    }
}
