//! The retransmission timeout estimator of RFC 6298 §2: SRTT and RTTVAR with
//! gains 1/8 and 1/4, RTO = SRTT + max(G, 4 RTTVAR) within [min_rto, max_rto],
//! doubled on each expiry (rule 5.5). Every RTT sample the machinery takes is
//! used (one per ACK of new data, Karn's rule applied by the caller).
use crate::engine::SimTime;

/// Clock granularity G of RFC 6298 (rule 2.3): 1 ms, in nanoseconds.
const CLOCK_G: f64 = 1e6;

/// Smoothed RTT, its variation and the current RTO.
#[derive(Clone, Copy, Debug)]
pub struct Rfc6298 {
    srtt: f64,
    rttvar: f64,
    has_sample: bool,
    rto: SimTime,
    /// The latest sample R, and the samples taken so far (wrapping), for traces.
    last: SimTime,
    samples: u32,
}

impl Rfc6298 {
    /// Before any sample, the RTO is `initial` (rule 2.1).
    pub fn new(initial: SimTime) -> Self {
        Rfc6298 { srtt: 0.0, rttvar: 0.0, has_sample: false, rto: initial, last: SimTime::ZERO, samples: 0 }
    }

    /// A round-trip sample R (rules 2.2 and 2.3); the RTO lies in [min_rto, max_rto].
    pub fn sample(&mut self, r: SimTime, min_rto: SimTime, max_rto: SimTime) {
        self.last = r;
        self.samples = self.samples.wrapping_add(1);
        let r = r.0 as f64;
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_sample = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = self.srtt + CLOCK_G.max(4.0 * self.rttvar);
        self.rto = SimTime(rto as u64).max(min_rto).min(max_rto);
    }

    /// The timer expired: back off (rule 5.5), at most `max_rto`.
    pub fn back_off(&mut self, max_rto: SimTime) {
        self.rto = self.rto.saturating_mul(2).min(max_rto);
    }

    /// The current retransmission timeout.
    #[inline]
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    /// Smoothed RTT (None before the first sample).
    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then_some(SimTime(self.srtt as u64))
    }

    /// SRTT and RTTVAR in nanoseconds as the estimator keeps them, unrounded
    /// (None before the first sample).
    pub fn smoothed(&self) -> Option<(f64, f64)> {
        self.has_sample.then_some((self.srtt, self.rttvar))
    }

    /// The latest sample, and how many samples were taken (wrapping at 2^32): a
    /// trace sees a new sample when the count moves.
    pub fn latest(&self) -> (SimTime, u32) {
        (self.last, self.samples)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn rfc6298_arithmetic() {
        let mut e = Rfc6298::new(ms(1000));
        assert_eq!((e.rto(), e.srtt()), (ms(1000), None));
        // First sample R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 300 ms.
        e.sample(ms(100), ms(200), ms(60_000));
        assert_eq!((e.rto(), e.srtt()), (ms(300), Some(ms(100))));
        // R' = 50 ms: RTTVAR = 3/4*50 + 1/4*|100-50| = 50, SRTT = 93.75, RTO = 293.75 ms.
        e.sample(ms(50), ms(200), ms(60_000));
        assert_eq!(e.rto(), SimTime(293_750_000));
        // Tiny samples: the minimum RTO binds; backoff doubles up to the maximum.
        e.sample(SimTime(1), ms(200), ms(60_000));
        e.back_off(ms(500));
        assert_eq!(e.rto(), ms(500));
    }
}
