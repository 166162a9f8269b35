//! The linear marking profile of A. Tang, D. Wei, S. H. Low and M. Chiang,
//! "Heterogeneous congestion control: efficiency, fairness and design" (§II-B,
//! eq. (2)): every packet is marked with probability p(b), linear in the average
//! queue b between two thresholds and constant above.
use super::{read_limit, read_mean_packet, read_number, read_thresholds, signal, Arrival, Average, LinkSpeed, Profile, QueueConfig, QueueDiscipline, DropTail, Verdict};
use crate::net::packet::Packet;
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// The profile's parameters: eq. (2)'s (b_, b̄, K) are (`min_th`, `max_th`, 1/`max_p`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Linear {
    /// The buffer (default: drop-tail's 1000 packets); the thresholds; 1/K, the
    /// probability at and above max_th; w_q of the average queue b (default 0.002);
    /// the typical packet (500 bytes).
    #[serde(flatten)]
    pub profile: Profile,
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
        let max_p = read_number(t, "max_p", None, "the marking probability at max_th (1/K in eq. 2), e.g. 1e-4")?;
        let weight = read_number(t, "weight", Some(0.002), "")?;
        let mean_packet_bytes = read_mean_packet(t, 500)?;
        Ok(Linear {
            profile: Profile { limit_packets, limit_bytes, unit, min_th, max_th, max_p, weight, mean_packet_bytes },
            ecn: t.or("ecn", true)?,
        })
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        self.profile.check()
    }

    /// Eq. (2): p(b) = 0 for b ≤ b_, (1/K)(b − b_)/(b̄ − b_) between, 1/K for b ≥ b̄.
    pub fn p(&self, b: f64) -> f64 {
        let c = &self.profile;
        if b <= c.min_th {
            0.0
        } else if b >= c.max_th {
            c.max_p
        } else {
            c.rise(b)
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
        LinearState { avg: cfg.profile.average(rate_bps), cfg: cfg.clone(), rng }
    }

    /// Decide on an arrival: a mark (or drop) with probability p(b), each packet
    /// independently, so the fraction marked is p(b) itself. Never inlined (as RED's).
    #[inline(never)]
    #[cold]
    pub fn admit(&mut self, a: &Arrival) -> Verdict {
        let c = &self.cfg;
        let p = c.p(self.avg.update(c.profile.unit.of(a) as f64, a.idle));
        let verdict = if p > 0.0 && self.rng.uniform() < p { signal(c.ecn, a.ect) } else { Verdict::Enqueue };
        c.profile.fit(verdict, a)
    }
}

/// The discipline's seam (registry.rs): its own reader, check and state.
impl QueueConfig for Linear {
    const NAME: &'static str = "linear";
    type State = Box<LinearState>;

    fn read(t: &mut Table, link: LinkSpeed) -> Result<Linear> {
        Linear::read(t, link.rate_bps)
    }

    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        self.validate()
    }

    fn limits(&self) -> (Option<u64>, Option<u64>) {
        self.profile.limits()
    }

    fn start(&self, rate_bps: u64, rng: Xoshiro256pp) -> Box<LinearState> {
        Box::new(LinearState::new(self, rate_bps, rng))
    }
}

impl QueueDiscipline for LinearState {
    #[inline]
    fn admit(&mut self, a: &Arrival, _pkt: &mut Packet) -> Verdict {
        LinearState::admit(self, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::net::queue::stream;

    /// Example 2a's profiles (§II-B): links 1-2 and 3-4 (b_, b̄, K) = (300, 1500,
    /// 10000), link 2-3 (0, 1500, 10), buffers of 1500 packets.
    fn example(outer: bool, weight: f64) -> Linear {
        let (min_th, max_p) = if outer { (300.0, 1e-4) } else { (0.0, 0.1) };
        let profile = Profile { limit_packets: Some(1500), limit_bytes: None, unit: crate::net::queue::Unit::Packets, min_th, max_th: 1500.0, max_p, weight, mean_packet_bytes: 500 };
        Linear { profile, ecn: true }
    }

    fn arrival(q: u64, ect: bool) -> Arrival {
        Arrival { now: SimTime::ZERO, q_packets: q, q_bytes: q * 1500, size: 1500, ect, idle: SimTime::ZERO }
    }

    #[test]
    fn equation_2_at_known_queues() {
        let outer = example(true, 1.0);
        for (b, p) in [(0.0, 0.0), (300.0, 0.0), (900.0, 5e-5), (1200.0, 7.5e-5), (1500.0, 1e-4), (4000.0, 1e-4)] {
            assert!((outer.p(b) - p).abs() < 1e-18, "p({b}) = {} not {p}", outer.p(b));
        }
        let middle = example(false, 1.0);
        for (b, p) in [(0.0, 0.0), (150.0, 0.01), (750.0, 0.05), (1500.0, 0.1), (1501.0, 0.1)] {
            assert!((middle.p(b) - p).abs() < 1e-15, "p({b}) = {} not {p}", middle.p(b));
        }
    }

    #[test]
    fn marks_are_independent_with_probability_p() {
        // Link 2-3 at a queue of 750 (w = 1): p = 0.05. 400,000 arrivals: the
        // fraction marked is 0.05 within 5 standard errors (3.4e-4), and the gaps are
        // geometric (variance (1 − p)/p² = 380), not RED's uniform spread (≈ 133).
        let mut s = LinearState::new(&example(false, 1.0), 100_000_000, stream(3, 1));
        let v: Vec<Verdict> = (0..400_000).map(|_| s.admit(&arrival(750, true))).collect();
        let marks: Vec<usize> = (0..v.len()).filter(|&i| v[i] == Verdict::Mark).collect();
        assert!(!v.contains(&Verdict::Drop));
        let f = marks.len() as f64 / v.len() as f64;
        assert!((f - 0.05).abs() < 5.0 * (0.05f64 * 0.95 / 4e5).sqrt(), "{f}");
        let g: Vec<f64> = marks.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let m = g.iter().sum::<f64>() / g.len() as f64;
        let var = g.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (g.len() - 1) as f64;
        assert!((var / 380.0 - 1.0).abs() < 0.1, "variance {var}");
        // Not ECN-capable: dropped at the same places (same stream); ecn = false: dropped.
        let mut s = LinearState::new(&example(false, 1.0), 100_000_000, stream(3, 1));
        let d: Vec<Verdict> = (0..400_000).map(|_| s.admit(&arrival(750, false))).collect();
        assert!(d.iter().zip(&v).all(|(a, b)| (*a == Verdict::Drop) == (*b == Verdict::Mark)));
        let mut s = LinearState::new(&Linear { ecn: false, ..example(false, 1.0) }, 100_000_000, stream(3, 1));
        assert!((0..1000).all(|_| s.admit(&arrival(750, true)) != Verdict::Mark));
    }

    #[test]
    fn the_average_queue_drives_it_and_the_buffer_limits_it() {
        // w = 0.002 from zero: after n arrivals at 1000, b = 1000 (1 − 0.998^n); the
        // outer profile marks nothing until b passes 300 (n = 179).
        let mut s = LinearState::new(&example(true, 0.002), 100_000_000, stream(3, 2));
        for _ in 0..178 {
            s.admit(&arrival(1000, true));
        }
        assert!(s.avg.value < 300.0 && s.avg.value > 299.0, "{}", s.avg.value);
        assert!((s.avg.value - 1000.0 * (1.0 - 0.998f64.powi(178))).abs() < 1e-9);
        // A full buffer drops whatever the profile says.
        assert_eq!(s.admit(&arrival(1500, true)), Verdict::Drop);
        assert_eq!(s.admit(&arrival(1499, false)), Verdict::Enqueue);
    }
}
