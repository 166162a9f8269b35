//! The linear marking profile of A. Tang, D. Wei, S. H. Low and M. Chiang,
//! "Heterogeneous congestion control: efficiency, fairness and design" (§II-B,
//! eq. (2)): every packet is marked with probability p(b), linear in the average
//! queue b between two thresholds and constant above.
use super::{check_profile, fit, read_limit, read_mean_packet, read_number, read_thresholds, signal, Arrival, Average, DropTail, Unit, Verdict};
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// The profile's parameters: eq. (2)'s (b_, b̄, K) are (`min_th`, `max_th`, 1/`max_p`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Linear {
    /// The buffer (default: drop-tail's 1000 packets).
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    pub unit: Unit,
    pub min_th: f64,
    pub max_th: f64,
    /// 1/K: the probability at and above max_th.
    pub max_p: f64,
    /// w_q of the average queue b (1: the instantaneous queue).
    pub weight: f64,
    /// Idle time is counted in transmissions of this many bytes.
    pub mean_packet_bytes: u32,
    /// Mark ECN-capable packets (drop the others); false: drop every one chosen.
    pub ecn: bool,
}

impl Linear {
    /// Read `{ type = "linear", min_th, max_th, max_p, limit, weight, mean_packet_size, ecn }`:
    /// the profile (`min_th`, `max_th`, `max_p`) is required.
    pub fn read(t: &mut Table, rate_bps: u64) -> Result<Linear> {
        let d = DropTail::default();
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, (d.limit_packets, d.limit_bytes))?;
        let (unit, min_th, max_th) = read_thresholds(t, rate_bps, None)?;
        Ok(Linear {
            limit_packets,
            limit_bytes,
            unit,
            min_th,
            max_th,
            max_p: read_number(t, "max_p", None, "the marking probability at max_th (1/K in eq. 2), e.g. 1e-4")?,
            weight: read_number(t, "weight", Some(0.002), "")?,
            mean_packet_bytes: read_mean_packet(t, 500)?,
            ecn: t.or("ecn", true)?,
        })
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        check_profile(self.min_th, self.max_th, self.max_p, self.weight, self.mean_packet_bytes)
    }

    /// Eq. (2): p(b) = 0 for b ≤ b_, (1/K)(b − b_)/(b̄ − b_) between, 1/K for b ≥ b̄.
    pub fn p(&self, b: f64) -> f64 {
        if b <= self.min_th {
            0.0
        } else if b >= self.max_th {
            self.max_p
        } else {
            self.max_p * (b - self.min_th) / (self.max_th - self.min_th)
        }
    }
}

/// The linear profile during a run.
pub struct LinearState {
    pub cfg: Linear,
    pub avg: Average,
    rng: Xoshiro256pp,
}

impl LinearState {
    pub fn new(cfg: &Linear, rate_bps: u64, rng: Xoshiro256pp) -> LinearState {
        LinearState { avg: Average::new(cfg.weight, rate_bps, cfg.mean_packet_bytes), cfg: cfg.clone(), rng }
    }

    /// Decide on an arrival: a mark (or drop) with probability p(b), each packet
    /// independently, so the fraction marked is p(b) itself. Never inlined (as RED's).
    #[inline(never)]
    #[cold]
    pub fn admit(&mut self, a: &Arrival) -> Verdict {
        let c = &self.cfg;
        let p = c.p(self.avg.update(c.unit.of(a) as f64, a.idle));
        let verdict = if p > 0.0 && self.rng.uniform() < p { signal(c.ecn, a.ect) } else { Verdict::Enqueue };
        fit(verdict, c.limit_packets, c.limit_bytes, a)
    }
}
