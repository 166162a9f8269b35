//! Random Early Detection: S. Floyd and V. Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM ToN 1(4), 1993 (Fig. 2), with
//! the rules ns-2's `queue/red.cc` and ns-3 3.44's `RedQueueDisc` add where the
//! paper is silent (docs/protocols.md, "RED", lists each).
use super::{check_profile, fit, read_limit, read_mean_packet, read_number, read_thresholds, signal, Arrival, Average, Unit, Verdict};
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// RED's parameters. Defaults: ns-3 3.44's `RedQueueDisc` attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Red {
    /// The buffer (`MaxSize`, 25 packets): a packet that does not fit is dropped.
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// What the average and the thresholds count (ns-3: the unit of `MaxSize`).
    pub unit: Unit,
    /// min_th and max_th of the average queue (`MinTh` 5, `MaxTh` 15).
    pub min_th: f64,
    pub max_th: f64,
    /// The early-drop probability at max_th (1 / `LInterm`, 1/50).
    pub max_p: f64,
    /// w_q, the weight of a sample in the average (`QW` 0.002).
    pub weight: f64,
    /// The typical packet: idle time is counted in its transmissions, and in byte
    /// mode it scales the count and the probability (`MeanPktSize` 500).
    pub mean_packet_bytes: u32,
    /// From max_th to 2·max_th the probability rises from max_p to 1 (`Gentle`, true).
    pub gentle: bool,
    /// Spread drops so that at least 1/p_b packets pass between two (`Wait`, true).
    pub wait: bool,
    /// Mark ECN-capable packets instead of dropping them (`UseEcn`, false).
    pub ecn: bool,
    /// Above the top of the profile, drop even ECN-capable packets (`UseHardDrop`, true).
    pub hard_drop: bool,
}

impl Default for Red {
    fn default() -> Self {
        Red {
            limit_packets: Some(25),
            limit_bytes: None,
            unit: Unit::Packets,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 1.0 / 50.0,
            weight: 0.002,
            mean_packet_bytes: 500,
            gentle: true,
            wait: true,
            ecn: false,
            hard_drop: true,
        }
    }
}

impl Red {
    /// Read `{ type = "red", limit, min_th, max_th, max_p, weight, mean_packet_size,
    /// gentle, wait, ecn, hard_drop }` (every key optional).
    pub fn read(t: &mut Table, rate_bps: u64) -> Result<Red> {
        let d = Red::default();
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, (d.limit_packets, d.limit_bytes))?;
        let (unit, min_th, max_th) = read_thresholds(t, rate_bps, Some((d.min_th, d.max_th)))?;
        Ok(Red {
            limit_packets,
            limit_bytes,
            unit,
            min_th,
            max_th,
            max_p: read_number(t, "max_p", Some(d.max_p), "")?,
            weight: read_number(t, "weight", Some(d.weight), "")?,
            mean_packet_bytes: read_mean_packet(t, d.mean_packet_bytes)?,
            gentle: t.or("gentle", d.gentle)?,
            wait: t.or("wait", d.wait)?,
            ecn: t.or("ecn", d.ecn)?,
            hard_drop: t.or("hard_drop", d.hard_drop)?,
        })
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        check_profile(self.min_th, self.max_th, self.max_p, self.weight, self.mean_packet_bytes)
    }

    /// p_b, the probability before spreading, at average queue `avg` (below the
    /// forced region): 0 below min_th, max_p (avg − min_th)/(max_th − min_th) up to
    /// max_th, then with `gentle` from max_p at max_th to 1 at 2·max_th.
    pub fn p_b(&self, avg: f64) -> f64 {
        let p = if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// The average from which every arrival is dropped (or marked, without `hard_drop`).
    fn forced_from(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }
}

/// RED during a run.
pub struct RedState {
    pub cfg: Red,
    pub avg: Average,
    /// Arrivals (and their bytes) since the last early drop or mark.
    count: u64,
    count_bytes: u64,
    /// Whether the previous arrival was in the early-drop region (ns-2's `old`).
    old: bool,
    rng: Xoshiro256pp,
}

impl RedState {
    pub fn new(cfg: &Red, rate_bps: u64, rng: Xoshiro256pp) -> RedState {
        RedState { avg: Average::new(cfg.weight, rate_bps, cfg.mean_packet_bytes), cfg: cfg.clone(), count: 0, count_bytes: 0, old: false, rng }
    }

    /// Decide on an arrival (ns-3's `RedQueueDisc::DoEnqueue`). Never inlined, so
    /// that the link's drop-tail path stays as small as it was.
    #[inline(never)]
    #[cold]
    pub fn admit(&mut self, a: &Arrival) -> Verdict {
        let q = self.cfg.unit.of(a);
        let avg = self.avg.update(q as f64, a.idle);
        self.count += 1;
        self.count_bytes += a.size as u64;
        let mut verdict = Verdict::Enqueue;
        // ns-2 and ns-3 never drop early while at most one packet (or byte) waits.
        if avg >= self.cfg.min_th && q > 1 {
            let c = &self.cfg;
            if avg >= c.forced_from() {
                verdict = if c.hard_drop { Verdict::Drop } else { signal(c.ecn, a.ect) };
            } else if !self.old {
                // The average has just crossed min_th (or the queue just refilled):
                // start counting, drop nothing (ns-2 and ns-3).
                self.old = true;
                self.count = 1;
                self.count_bytes = a.size as u64;
            } else if self.drop_early(avg, a.size) {
                verdict = signal(self.cfg.ecn, a.ect);
            }
        } else {
            self.old = false;
        }
        fit(verdict, self.cfg.limit_packets, self.cfg.limit_bytes, a)
    }

    /// p_a from p_b and the count, then the draw (ns-3's `DropEarly` and `ModifyP`).
    fn drop_early(&mut self, avg: f64, size: u32) -> bool {
        let c = &self.cfg;
        let p_b = c.p_b(avg);
        let count = match c.unit {
            Unit::Packets => self.count as f64,
            // ns-3: whole typical packets' worth of the bytes since the last drop.
            Unit::Bytes => (self.count_bytes / c.mean_packet_bytes as u64) as f64,
        };
        let mut p = spread(p_b, count, c.wait);
        if c.unit == Unit::Bytes && p < 1.0 {
            p *= size as f64 / c.mean_packet_bytes as f64;
        }
        if p > 0.0 && self.rng.uniform() < p.min(1.0) {
            self.count = 0;
            self.count_bytes = 0;
            true
        } else {
            false
        }
    }
}

/// The probability for the `count`-th arrival since the last drop, so that drops
/// are spread evenly (Floyd and Jacobson §7, "method 2"): p_a = p_b / (1 − count·p_b),
/// making the gap uniform on 1..1/p_b − 1 arrivals. With `wait` (ns-2 and ns-3):
/// 0 while count·p_b < 1, then p_b / (2 − count·p_b): the gap is uniform on
/// 1/p_b..2/p_b − 1.
pub fn spread(p_b: f64, count: f64, wait: bool) -> f64 {
    let cp = count * p_b;
    if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    }
}
