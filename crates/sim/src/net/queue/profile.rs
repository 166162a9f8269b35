//! The profile RED and the linear profile share: a buffer, an average queue (its unit,
//! its weight, the typical packet its idle time counts) and a signal probability that
//! rises from `min_th` to `max_th` of the average, reaching `max_p` there. Each
//! discipline writes these keys first in its canonical form, then its own.
use super::{fit, Arrival, Average, Unit, Verdict};
use serde::{Deserialize, Serialize};

/// The parameters RED and the linear profile share (flattened into theirs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The buffer: a packet that does not fit is dropped.
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// What the average and the thresholds count.
    pub unit: Unit,
    /// The thresholds of the average queue.
    pub min_th: f64,
    pub max_th: f64,
    /// The probability at max_th.
    pub max_p: f64,
    /// w_q, the weight of a sample in the average (1: the instantaneous queue).
    pub weight: f64,
    /// The typical packet: idle time is counted in its transmissions (and RED's byte
    /// mode scales by it).
    pub mean_packet_bytes: u32,
}

impl Profile {
    /// The first parameter out of range (its canonical key), and why.
    pub fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let (min_th, max_th) = (self.min_th, self.max_th);
        if !(min_th.is_finite() && min_th >= 0.0) {
            return Err(("min_th", format!("expected a queue size of at least 0, got {min_th}")));
        }
        if !(max_th.is_finite() && max_th > min_th) {
            return Err(("max_th", format!("must be above min_th ({min_th}), got {max_th}")));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(("max_p", format!("expected a number in (0, 1], got {}", self.max_p)));
        }
        if !(self.weight > 0.0 && self.weight <= 1.0) {
            return Err(("weight", format!("expected a number in (0, 1], got {}", self.weight)));
        }
        // (A scenario's `mean_packet_size` is refused when read; this is the
        // canonical configuration's key.)
        if self.mean_packet_bytes == 0 {
            return Err(("mean_packet_bytes", "expected a positive number of bytes, got 0".into()));
        }
        Ok(())
    }

    /// max_p (avg − min_th)/(max_th − min_th): the rise between the thresholds.
    #[inline]
    pub fn rise(&self, avg: f64) -> f64 {
        self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
    }

    /// The average queue of a run on a link of `rate_bps`.
    pub fn average(&self, rate_bps: u64) -> Average {
        Average::new(self.weight, rate_bps, self.mean_packet_bytes)
    }

    /// `verdict`, or a drop if the arrival does not fit in the buffer.
    #[inline]
    pub fn fit(&self, verdict: Verdict, a: &Arrival) -> Verdict {
        fit(verdict, self.limit_packets, self.limit_bytes, a)
    }

    /// (packets, bytes) limits of the buffer.
    pub fn limits(&self) -> (Option<u64>, Option<u64>) {
        (self.limit_packets, self.limit_bytes)
    }
}
