//! Random Early Detection: S. Floyd and V. Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM ToN 1(4), 1993 (Fig. 2), with
//! the rules ns-2's `queue/red.cc` and ns-3 3.44's `RedQueueDisc` add where the
//! paper is silent (docs/protocols.md, "RED", lists each).
use super::red_auto;
use super::{read_limit, read_mean_packet, read_number, read_threshold, read_thresholds, signal, Arrival, Average, LinkSpeed, Profile, QueueConfig, QueueDiscipline, Unit, Verdict};
use crate::engine::SimTime;
use crate::net::packet::Packet;
use crate::settings::{Result, Table};
use serde_json::Value;
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// RED's parameters. Defaults: ns-3 3.44's `RedQueueDisc` attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Red {
    /// The buffer (`MaxSize`, 25 packets); the unit of the average (ns-3: the unit
    /// of `MaxSize`); min_th and max_th (`MinTh` 5, `MaxTh` 15); the early-drop
    /// probability at max_th (1 / `LInterm`, 1/50); w_q (`QW` 0.002); the typical
    /// packet, which in byte mode also scales the count and the probability
    /// (`MeanPktSize` 500).
    #[serde(flatten)]
    pub profile: Profile,
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
            profile: Profile {
                limit_packets: Some(25),
                limit_bytes: None,
                unit: Unit::Packets,
                min_th: 5.0,
                max_th: 15.0,
                max_p: 1.0 / 50.0,
                weight: 0.002,
                mean_packet_bytes: 500,
            },
            gentle: true,
            wait: true,
            ecn: false,
            hard_drop: true,
        }
    }
}

/// Whether `key` is written `"auto"`.
fn is_auto(t: &mut Table, key: &'static str) -> bool {
    matches!(t.raw(key), Some(Value::String(v)) if v == "auto")
}

/// The thresholds, each a size or `"auto"` (ns-2.35's `thresh_ 0` and
/// `maxthresh_ 0`, `red_auto.rs`). An automatic threshold takes the unit of the
/// other one; both automatic, they are in bytes, as ns-2.35's default
/// `queue_in_bytes_ true` counts them (typical packets × `mean_packet_size`).
fn read_red_thresholds(t: &mut Table, rate_bps: u64, mean: u32, default: (f64, f64)) -> Result<(Unit, f64, f64)> {
    let (auto_min, auto_max) = (is_auto(t, "min_th"), is_auto(t, "max_th"));
    if !auto_min && !auto_max {
        return read_thresholds(t, rate_bps, Some(default));
    }
    let auto_min_th = |u: Unit| {
        let packets = red_auto::min_th_packets(rate_bps, mean);
        if u == Unit::Bytes { packets * mean as f64 } else { packets }
    };
    let explicit = if auto_min && auto_max { None } else { read_threshold(t, rate_bps, if auto_min { "max_th" } else { "min_th" })? };
    Ok(match explicit {
        None => (Unit::Bytes, auto_min_th(Unit::Bytes), red_auto::max_th(auto_min_th(Unit::Bytes))),
        Some((u, max_th)) if auto_min => (u, auto_min_th(u), max_th),
        Some((u, min_th)) => (u, min_th, red_auto::max_th(min_th)),
    })
}

impl Red {
    /// Read `{ type = "red", limit, min_th, max_th, max_p, weight, mean_packet_size,
    /// gentle, wait, ecn, hard_drop }` (every key optional) for a link of `rate_bps`
    /// and `delay` (which the automatic weight uses).
    pub fn read(t: &mut Table, rate_bps: u64, delay: SimTime) -> Result<Red> {
        let red = Red::default();
        let d = &red.profile;
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, d.limits())?;
        let mean_packet_bytes = read_mean_packet(t, d.mean_packet_bytes)?;
        let (unit, min_th, max_th) = read_red_thresholds(t, rate_bps, mean_packet_bytes, (d.min_th, d.max_th))?;
        let weight = if is_auto(t, "weight") {
            red_auto::weight(rate_bps, delay, mean_packet_bytes)
        } else {
            read_number(t, "weight", Some(d.weight), "")?
        };
        let max_p = read_number(t, "max_p", Some(d.max_p), "")?;
        Ok(Red {
            profile: Profile { limit_packets, limit_bytes, unit, min_th, max_th, max_p, weight, mean_packet_bytes },
            gentle: t.or("gentle", red.gentle)?,
            wait: t.or("wait", red.wait)?,
            ecn: t.or("ecn", red.ecn)?,
            hard_drop: t.or("hard_drop", red.hard_drop)?,
        })
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        self.profile.check()
    }

    /// p_b, the probability before spreading, at average queue `avg` (below the
    /// forced region): 0 below min_th, max_p (avg − min_th)/(max_th − min_th) up to
    /// max_th, then with `gentle` from max_p at max_th to 1 at 2·max_th.
    pub fn p_b(&self, avg: f64) -> f64 {
        let c = &self.profile;
        let p = if avg < c.min_th {
            0.0
        } else if avg < c.max_th {
            c.rise(avg)
        } else if self.gentle {
            c.max_p + (1.0 - c.max_p) * (avg - c.max_th) / c.max_th
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// The average from which every arrival is dropped (or marked, without `hard_drop`).
    fn forced_from(&self) -> f64 {
        if self.gentle {
            2.0 * self.profile.max_th
        } else {
            self.profile.max_th
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
        RedState { avg: cfg.profile.average(rate_bps), cfg: cfg.clone(), count: 0, count_bytes: 0, old: false, rng }
    }

    /// Decide on an arrival (ns-3's `RedQueueDisc::DoEnqueue`). Never inlined, so
    /// that the link's drop-tail path stays as small as it was.
    #[inline(never)]
    #[cold]
    pub fn admit(&mut self, a: &Arrival) -> Verdict {
        let q = self.cfg.profile.unit.of(a);
        let avg = self.avg.update(q as f64, a.idle);
        self.count += 1;
        self.count_bytes += a.size as u64;
        let mut verdict = Verdict::Enqueue;
        // ns-2 and ns-3 never drop early while at most one packet (or byte) waits.
        if avg >= self.cfg.profile.min_th && q > 1 {
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
        self.cfg.profile.fit(verdict, a)
    }

    /// p_a from p_b and the count, then the draw (ns-3's `DropEarly` and `ModifyP`).
    fn drop_early(&mut self, avg: f64, size: u32) -> bool {
        let p_b = self.cfg.p_b(avg);
        let c = &self.cfg.profile;
        let count = match c.unit {
            Unit::Packets => self.count as f64,
            // ns-3: whole typical packets' worth of the bytes since the last drop.
            Unit::Bytes => (self.count_bytes / c.mean_packet_bytes as u64) as f64,
        };
        let mut p = spread(p_b, count, self.cfg.wait);
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

/// The discipline's seam (registry.rs): its own reader, check and state.
impl QueueConfig for Red {
    const NAME: &'static str = "red";
    type State = Box<RedState>;

    fn read(t: &mut Table, link: LinkSpeed) -> Result<Red> {
        Red::read(t, link.rate_bps, link.delay)
    }

    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        self.validate()
    }

    fn limits(&self) -> (Option<u64>, Option<u64>) {
        self.profile.limits()
    }

    fn start(&self, rate_bps: u64, rng: Xoshiro256pp) -> Box<RedState> {
        Box::new(RedState::new(self, rate_bps, rng))
    }
}

impl QueueDiscipline for RedState {
    #[inline]
    fn admit(&mut self, a: &Arrival, _pkt: &mut Packet) -> Verdict {
        RedState::admit(self, a)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::net::queue::stream;

    /// RED with the average equal to the queue met (w_q = 1), thresholds 10 and 30
    /// packets and max_p 0.02: a queue of 20 gives p_b = 0.01 exactly.
    fn red(f: impl FnOnce(&mut Red)) -> RedState {
        let mut c = Red::default();
        let p = &mut c.profile;
        (p.weight, p.min_th, p.max_th, p.max_p, p.limit_packets) = (1.0, 10.0, 30.0, 0.02, Some(1000));
        f(&mut c);
        c.validate().unwrap();
        RedState::new(&c, 10_000_000, stream(7, 0))
    }

    fn arrival(q: u64, size: u32, ect: bool) -> Arrival {
        Arrival { now: SimTime::ZERO, q_packets: q, q_bytes: q * size as u64, size, ect, idle: SimTime::ZERO }
    }

    /// Arrivals between consecutive early drops at a constant queue of `q` packets
    /// of `size` bytes.
    fn gaps(r: &mut RedState, q: u64, size: u32, n: usize) -> Vec<u64> {
        let (mut out, mut since, mut seen) = (Vec::new(), 0, false);
        while out.len() < n {
            since += 1;
            if r.admit(&arrival(q, size, false)) != Verdict::Enqueue {
                if seen {
                    out.push(since);
                }
                (since, seen) = (0, true);
            }
        }
        out
    }

    fn mean_var(x: &[u64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<u64>() as f64 / n;
        (m, x.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / (n - 1.0))
    }

    #[test]
    fn defaults_are_ns3_red_queue_disc() {
        let (d, red) = (Red::default().profile, Red::default());
        assert_eq!((d.limit_packets, d.limit_bytes, d.unit), (Some(25), None, Unit::Packets));
        assert_eq!((d.min_th, d.max_th, d.max_p, d.weight, d.mean_packet_bytes), (5.0, 15.0, 0.02, 0.002, 500));
        assert_eq!((red.gentle, red.wait, red.ecn, red.hard_drop), (true, true, false, true));
    }

    #[test]
    fn the_average_follows_its_ewma_on_a_deterministic_pattern() {
        // w_q = 0.01, arrivals finding 0, 1, ..., 39 waiting in turn, 25 times over:
        // avg_n = Σ_k w (1 − w)^(n−k) q_k, from zero.
        let mut r = red(|c| c.profile.weight = 0.01);
        let q: Vec<u64> = (0..1000).map(|k| k % 40).collect();
        for &x in &q {
            r.admit(&arrival(x, 1000, false));
        }
        let n = q.len();
        let want: f64 = q.iter().enumerate().map(|(k, &x)| 0.01 * 0.99f64.powi((n - 1 - k) as i32) * x as f64).sum();
        assert!((r.avg.value - want).abs() < 1e-9 * want, "{} vs {want}", r.avg.value);
        // After 100 ms idle at 10 Mbps with 500-byte typical packets (m = 250), the
        // next arrival finds an empty queue: avg ← 0.99^251 avg.
        let before = r.avg.value;
        r.admit(&Arrival { idle: SimTime::from_millis(100), ..arrival(0, 1000, false) });
        assert!((r.avg.value - before * 0.99f64.powi(251)).abs() < 1e-12 * before);
    }

    #[test]
    fn count_spreads_drops_uniformly() {
        // p_b = 0.01. Without wait the gap is uniform on 1..99: mean 50, variance
        // (99² − 1)/12 = 816.7 (a geometric gap would have mean 100, variance 9900).
        let g = gaps(&mut red(|c| c.wait = false), 20, 1000, 20_000);
        let (m, v) = mean_var(&g);
        assert!((m - 50.0).abs() < 1.0, "mean gap {m}");
        assert!((v - 816.67).abs() < 30.0, "variance {v}");
        assert!(*g.iter().min().unwrap() >= 1 && *g.iter().max().unwrap() <= 100, "{:?}", (g.iter().min(), g.iter().max()));
        // With wait (ns-3's default) it is uniform on 100..199: mean 149.5, variance
        // (100² − 1)/12 = 833.25.
        let g = gaps(&mut red(|_| ()), 20, 1000, 20_000);
        let (m, v) = mean_var(&g);
        assert!((m - 149.5).abs() < 1.0, "mean gap {m}");
        assert!((v - 833.25).abs() < 30.0, "variance {v}");
        assert!(*g.iter().min().unwrap() >= 100 && *g.iter().max().unwrap() <= 200);
    }

    #[test]
    fn byte_mode_counts_bytes_and_scales_by_size() {
        // Thresholds 10 kB and 30 kB, 500-byte typical packets, a queue of 20 kB:
        // p_b = 0.01. A 1000-byte packet counts as two typical ones and its
        // probability doubles: the k-th packet after a drop has p_a = 2·0.01/(1 − 0.02k)
        // = 1/(50 − k), so the gap is uniform on 1..49: mean 25, variance 200.
        let byte_red = |size: u32| {
            let mut r = red(|c| {
                (c.profile.unit, c.profile.min_th, c.profile.max_th, c.wait) = (Unit::Bytes, 10_000.0, 30_000.0, false);
            });
            gaps(&mut r, 20_000 / size as u64, size, 20_000)
        };
        let (m, v) = mean_var(&byte_red(1000));
        assert!((m - 25.0).abs() < 0.5 && (v - 200.0).abs() < 10.0, "{m} {v}");
        // Typical-sized packets: as in packet mode, uniform on 1..99.
        let (m, v) = mean_var(&byte_red(500));
        assert!((m - 50.0).abs() < 1.0 && (v - 816.67).abs() < 30.0, "{m} {v}");
    }

    #[test]
    fn the_profile_gentle_region_and_forced_drops() {
        let mut c = Red::default();
        (c.profile.min_th, c.profile.max_th, c.profile.max_p) = (10.0, 30.0, 0.1);
        assert_eq!(c.p_b(9.99), 0.0);
        assert!((c.p_b(20.0) - 0.05).abs() < 1e-15);
        // Gentle: max_p at max_th, then linear to 1 at 2·max_th.
        assert!((c.p_b(30.0) - 0.1).abs() < 1e-15);
        assert!((c.p_b(45.0) - 0.55).abs() < 1e-15);
        assert_eq!(c.p_b(60.0), 1.0);
        assert_eq!(c.forced_from(), 60.0);
        let abrupt = Red { gentle: false, ..c.clone() };
        assert_eq!((abrupt.p_b(30.0), abrupt.forced_from()), (1.0, 30.0));
        // In the forced region every arrival is dropped, ECN-capable or not (hard
        // drop); without hard drop an ECN queue marks the capable ones.
        for (gentle, q) in [(true, 60), (false, 30)] {
            let mut r = red(|c| (c.gentle, c.ecn) = (gentle, true));
            assert!((0..100).all(|_| r.admit(&arrival(q, 1000, true)) == Verdict::Drop));
            let mut r = red(|c| (c.gentle, c.ecn, c.hard_drop) = (gentle, true, false));
            assert!((0..100).all(|_| r.admit(&arrival(q, 1000, true)) == Verdict::Mark));
            assert!((0..100).all(|_| r.admit(&arrival(q, 1000, false)) == Verdict::Drop));
        }
        // The gentle region spreads its drops too: at 45 with max_p 0.02, p_b =
        // 0.02 + 0.98·0.5 = 0.51; with wait the second arrival after a drop has
        // p_a = 0.51/(2 − 1.02) = 0.5204 and the third 1: gaps of 2 and 3, mean
        // 2·0.5204 + 3·0.4796 = 2.4796.
        let g = gaps(&mut red(|_| ()), 45, 1000, 20_000);
        let (m, _) = mean_var(&g);
        assert!(g.iter().all(|&x| (2..=3).contains(&x)) && (m - 2.4796).abs() < 0.02, "{m}");
    }

    #[test]
    fn marks_replace_drops_only_for_ecn_capable_packets() {
        // Same seed, same arrivals: the ECN queue marks capable packets exactly where
        // the dropping queue drops, and drops the others there.
        let run = |ecn: bool, ect: bool| -> Vec<Verdict> {
            let mut r = red(|c| c.ecn = ecn);
            (0..5000).map(|k| r.admit(&arrival(12 + k % 15, 1000, ect))).collect()
        };
        let drops = run(false, true);
        // About 5000 / 150 drops (p_b from 0.002 to 0.016, with wait).
        assert!(drops.iter().filter(|&&v| v == Verdict::Drop).count() > 20);
        assert!(!drops.contains(&Verdict::Mark));
        let marks = run(true, true);
        assert_eq!(marks.iter().map(|&v| if v == Verdict::Mark { Verdict::Drop } else { v }).collect::<Vec<_>>(), drops);
        assert_eq!(run(true, false), drops);
    }

    #[test]
    fn edge_rules_of_ns2_and_ns3() {
        // At most one packet waiting: never an early drop, even in the forced region.
        let mut r = red(|_| ());
        assert!((0..100).all(|_| r.admit(&arrival(1, 1000, false)) == Verdict::Enqueue));
        // The first arrival above min_th only starts the count.
        let mut r = red(|c| (c.wait, c.profile.max_p) = (false, 1.0));
        assert_eq!(r.admit(&arrival(29, 1000, false)), Verdict::Enqueue);
        assert_eq!(r.count, 1);
        // The buffer drops what does not fit, whatever the average says.
        let mut r = red(|c| (c.profile.limit_packets, c.profile.weight) = (Some(25), 0.002));
        assert_eq!(r.admit(&arrival(24, 1000, false)), Verdict::Enqueue);
        assert_eq!(r.admit(&arrival(25, 1000, false)), Verdict::Drop);
        let mut r = red(|c| (c.profile.limit_packets, c.profile.limit_bytes) = (None, Some(25_000)));
        assert_eq!(r.admit(&arrival(24, 1000, false)), Verdict::Enqueue);
        assert_eq!(r.admit(&Arrival { size: 1001, ..arrival(24, 1000, false) }), Verdict::Drop);
    }

    #[test]
    fn spread_closed_forms() {
        assert_eq!(spread(0.01, 0.0, false), 0.01);
        assert!((spread(0.01, 50.0, false) - 0.02).abs() < 1e-15);
        assert_eq!(spread(0.01, 100.0, false), 1.0);
        assert_eq!(spread(0.01, 99.0, true), 0.0);
        assert!((spread(0.01, 150.0, true) - 0.02).abs() < 1e-15);
        assert_eq!(spread(0.01, 200.0, true), 1.0);
    }
}
