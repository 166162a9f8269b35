//! Round-trip time estimates and the retransmission timeout a TCP sender derives
//! from them (`tcp.rtt_estimator`): RFC 6298's, from a sample on every ACK of new
//! data, or ns-2.35's, from one timed segment per window counted in clock ticks.
mod ns2;
mod rfc6298;

pub use ns2::Ns2Ticks;
pub use rfc6298::Rfc6298;

use crate::engine::SimTime;

/// A sender's RTT estimate and retransmission timeout.
#[derive(Clone, Debug)]
pub enum RtoEstimator {
    Rfc6298(Rfc6298),
    /// Boxed: the larger state, only in connections that ask for it.
    Ns2(Box<Ns2Ticks>),
}

impl RtoEstimator {
    /// The current retransmission timeout.
    #[inline]
    pub fn rto(&self) -> SimTime {
        match self {
            RtoEstimator::Rfc6298(e) => e.rto(),
            RtoEstimator::Ns2(e) => e.rto(),
        }
    }

    /// Smoothed RTT (None before the first sample).
    pub fn srtt(&self) -> Option<SimTime> {
        match self {
            RtoEstimator::Rfc6298(e) => e.srtt(),
            RtoEstimator::Ns2(e) => e.srtt(),
        }
    }

    /// SRTT and RTTVAR in nanoseconds as the estimator keeps them (None before
    /// the first sample).
    pub fn smoothed(&self) -> Option<(f64, f64)> {
        match self {
            RtoEstimator::Rfc6298(e) => e.smoothed(),
            RtoEstimator::Ns2(e) => e.smoothed(),
        }
    }

    /// The latest sample, and how many samples were taken (wrapping at 2^32): a
    /// trace sees a new sample when the count moves.
    pub fn latest(&self) -> (SimTime, u32) {
        match self {
            RtoEstimator::Rfc6298(e) => e.latest(),
            RtoEstimator::Ns2(e) => e.latest(),
        }
    }

    /// A segment ending at `end` left the sender; `new_data` if it was sent for the
    /// first time (ns-2 times one such segment at a time).
    #[inline]
    pub fn on_send(&mut self, end: u64, new_data: bool, now: SimTime) {
        if let RtoEstimator::Ns2(e) = self {
            e.on_send(end, new_data, now);
        }
    }

    /// An ACK of new data up to `ack`, with the RTT sample its echo gives (None
    /// when Karn's rule discards it): RFC 6298 takes the sample (its RTO within
    /// `bounds`, min and max), ns-2 its timed segment.
    #[inline]
    pub fn on_ack(&mut self, ack: u64, sample: Option<SimTime>, now: SimTime, bounds: (SimTime, SimTime)) {
        match self {
            RtoEstimator::Rfc6298(e) => {
                if let Some(r) = sample {
                    e.sample(r, bounds.0, bounds.1);
                }
            }
            RtoEstimator::Ns2(e) => e.on_ack(ack, sample, now),
        }
    }

    /// A partial ACK of ns-2 NewReno's recovery: ns-2 takes no sample from it.
    pub fn on_partial_ack(&mut self, ack: u64, sample: Option<SimTime>, now: SimTime, bounds: (SimTime, SimTime)) {
        match self {
            RtoEstimator::Rfc6298(_) => self.on_ack(ack, sample, now, bounds),
            RtoEstimator::Ns2(e) => e.on_partial_ack(ack),
        }
    }

    /// A partial ACK of ns-2 Sack1's recovery: ns-2 only ends the backoff.
    pub fn on_sack1_partial_ack(&mut self, ack: u64, sample: Option<SimTime>, now: SimTime, bounds: (SimTime, SimTime)) {
        match self {
            RtoEstimator::Rfc6298(_) => self.on_ack(ack, sample, now, bounds),
            RtoEstimator::Ns2(e) => e.reset_backoff(),
        }
    }

    /// The timing of a segment is abandoned (ns-2, at a fast retransmit).
    pub fn cancel_timing(&mut self) {
        if let RtoEstimator::Ns2(e) = self {
            e.cancel_timing();
        }
    }

    /// The retransmission timer expired: back off, at most to `max_rto` (and, in
    /// ns-2, abandon the timing).
    pub fn back_off(&mut self, max_rto: SimTime) {
        match self {
            RtoEstimator::Rfc6298(e) => e.back_off(max_rto),
            RtoEstimator::Ns2(e) => {
                e.back_off();
                e.cancel_timing();
            }
        }
    }
}
