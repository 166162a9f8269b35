//! Ideally smooth senders at packet level (lower-bounds paper, section II): N
//! constant-rate flows at U·C/N with `phase = "random"` against the exact
//! steady state of `cclab-smooth` (the paper's 2N-packet method, section V), and
//! constant-rate timing to the nanosecond.
//!
//! The quantity compared is the paper's queue size q = d/D (eq. 6): the time d a
//! packet waits before its transmission starts, in packet times D. The engine
//! records it per arriving packet as `backlog` (the work ahead of it, the
//! packet's wait when admitted), the exact method returns it as each packet's wait.
mod common;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use cclab_rng::StreamKey;
use serde_json::{json, Value};
use std::path::Path;

fn run(doc: &Value) -> RunResult {
    let (cfg, _) = build(doc, Path::new("."), None, &Registry::new()).unwrap();
    common::run_config(cfg)
}

/// The model's parameters with an integer period: packets of `size` bytes on a
/// 100 Mbps link (D = 8·size·10 ns) and T = N·D/U a whole number of nanoseconds.
#[derive(Clone, Copy, Debug)]
struct Model {
    n: u32,
    u: f64,
    size: u32,
}

impl Model {
    const LINK_BPS: u64 = 100_000_000;
    fn d_ns(&self) -> i64 {
        (self.size as u64 * 8 * 1_000_000_000 / Self::LINK_BPS) as i64
    }
    fn period_ns(&self) -> i64 {
        let t = (self.n as f64 * self.d_ns() as f64 / self.u).round() as i64;
        assert_eq!(t as f64 * self.u, self.n as f64 * self.d_ns() as f64, "choose U and the size for an integer period");
        t
    }
    /// Each flow's rate U·C/N, written so that 8·size/rate is exactly T.
    fn rate(&self) -> String {
        format!("{}bps", self.size as f64 * 8e9 / self.period_ns() as f64)
    }

    /// N smooth senders from time 0, each starting within its first packet interval;
    /// the queue met by every packet arriving in [2T, 3T): the steady state, one
    /// packet per flow (all flows have started by T, and after one full period of
    /// all of them the work at the link repeats exactly, the paper's section V).
    fn scenario(&self, seed: u64) -> Value {
        let t = self.period_ns();
        json!({
            "duration": format!("{}ns", 3 * t), "warmup": format!("{}ns", 2 * t), "seed": seed,
            "links": [{"name": "bn", "from": "a", "to": "b", "rate": "100Mbps", "delay": "1ms",
                       "queue": {"limit": "100000pkts"}}],
            "traffic": [{"name": "smooth", "type": "cbr", "src": "a", "dst": "b", "count": self.n,
                         "rate": self.rate(), "packet_size": self.size, "phase": "random"}],
            "record": {"interval": "0s", "arrivals": ["bn"]},
        })
    }

    /// The engine's steady-state waits (ns, sorted) and the flows' start times (ns).
    fn engine(&self, seed: u64) -> (Vec<i64>, Vec<i64>) {
        let r = run(&self.scenario(seed));
        let waits = sorted(r.arrivals.backlog.iter().map(|&b| (b * 1e9).round() as i64).collect());
        assert!(r.arrivals.dropped.iter().all(|&d| !d));
        assert_eq!(waits.len(), self.n as usize, "one packet per flow in one steady period");
        let starts = r.flows.arrival.iter().map(|&a| (a * 1e9).round() as i64).collect();
        (waits, starts)
    }

    /// The exact method's steady-state waits (ns, sorted) for flows starting at `starts`.
    fn exact(&self, starts: &[i64]) -> Vec<i64> {
        let (waits, _, st) = cclab_smooth::steady_at_arrivals(starts, self.period_ns(), self.d_ns(), None, 3).unwrap();
        assert!(st.converged && st.periods <= 2);
        sorted(waits)
    }
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

/// U = 0.8 with 1000-byte packets (D = 80 µs, T = N·100 µs) and U = 0.95 with
/// 950-byte packets (D = 76 µs, T = N·80 µs), for N = 10, 100, 1000.
fn models() -> Vec<Model> {
    let mut v = Vec::new();
    for (u, size) in [(0.8, 1000), (0.95, 950)] {
        for n in [10, 100, 1000] {
            v.push(Model { n, u, size });
        }
    }
    v
}

#[test]
fn random_phases_start_every_flow_within_one_interval() {
    let m = Model { n: 1000, u: 0.8, size: 1000 };
    let (_, starts) = m.engine(1);
    let t = m.period_ns();
    assert!(starts.iter().all(|&s| (0..t).contains(&s)));
    // Uniform on [0, T): the sample mean within 4 standard errors (T/√12/√N) of T/2.
    let mean = starts.iter().sum::<i64>() as f64 / starts.len() as f64;
    let se = t as f64 / 12f64.sqrt() / (starts.len() as f64).sqrt();
    assert!((mean - t as f64 / 2.0).abs() < 4.0 * se, "{mean} vs {}", t / 2);
    // Another seed, other phases; the same seed, the same phases.
    assert_ne!(starts, m.engine(2).1);
    assert_eq!(starts, m.engine(1).1);
}

#[test]
fn each_realization_equals_the_exact_method_packet_for_packet() {
    // Given the phases the engine drew, the exact method predicts every packet's
    // wait in the steady state; the engine must agree to the nanosecond.
    for m in models() {
        for seed in 1..=4 {
            let (waits, starts) = m.engine(seed);
            let exact = m.exact(&starts);
            assert_eq!(waits, exact, "{m:?} seed {seed}");
            // Not trivial: some packets wait (more than one packet time once N is large).
            assert!(*exact.last().unwrap() > if m.n >= 100 { m.d_ns() } else { 0 }, "{m:?}");
        }
    }
}

/// Per-realization statistics of the queue q = wait/D: mean, fraction of packets
/// that wait, and the largest.
fn stats(waits: &[i64], d: i64) -> [f64; 3] {
    let n = waits.len() as f64;
    let mean = waits.iter().sum::<i64>() as f64 / d as f64 / n;
    let waiting = waits.iter().filter(|&&w| w > 0).count() as f64 / n;
    [mean, waiting, *waits.iter().max().unwrap() as f64 / d as f64]
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (m, x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0))
}

#[test]
fn queue_distribution_matches_the_exact_method_with_independent_phases() {
    // The engine's realizations (its own phase streams, seeds 1..R) against the exact
    // method on phases drawn independently (uniform on [0, T) from another stream).
    // Within one realization the queue pattern is periodic and exact, so the
    // independent unit is the realization: each statistic's mean over R realizations
    // of both, a two-sample z-test, |z| < 3.45: a 1% family-wise level over the
    // 18 comparisons (Bonferroni).
    const R: u64 = 200;
    let mut worst = 0.0f64;
    for m in models() {
        let t = m.period_ns();
        let mut eng: Vec<[f64; 3]> = Vec::new();
        let mut exa: Vec<[f64; 3]> = Vec::new();
        for r in 0..R {
            eng.push(stats(&m.engine(r + 1).0, m.d_ns()));
            let mut rng = cclab_rng::stream(r, StreamKey::new("test/exact-phases").num(m.n as u64));
            let starts: Vec<i64> = (0..m.n).map(|_| (rng.uniform() * t as f64).floor() as i64).collect();
            exa.push(stats(&m.exact(&starts), m.d_ns()));
        }
        for s in 0..3 {
            let (me, ve) = mean_var(&eng.iter().map(|x| x[s]).collect::<Vec<_>>());
            let (mx, vx) = mean_var(&exa.iter().map(|x| x[s]).collect::<Vec<_>>());
            let z = (me - mx) / ((ve + vx) / R as f64).sqrt();
            eprintln!("{m:?} statistic {s}: engine {me:.4} exact {mx:.4} z {z:+.2}");
            assert!(z.abs() < 3.45, "{m:?} statistic {s}: engine {me} exact {mx} z {z}");
            worst = worst.max(z.abs());
        }
    }
    eprintln!("largest |z| {worst:.2}");
}

/// k·8·size·10^9/rate rounded half up, exactly (rate a whole number of bit/s).
fn exact_offset(k: u64, size: u64, rate: u64) -> u64 {
    let num = k as u128 * size as u128 * 8 * 1_000_000_000;
    ((2 * num + rate as u128) / (2 * rate as u128)) as u64
}

#[test]
fn constant_rate_timing_is_exact_to_the_nanosecond() {
    // One flow per case, 1000 s: packet k leaves (and reaches the first link) at
    // start + round(k·8·size/rate) to the nanosecond, rounding never accumulating.
    for (rate, size, start_ns) in [(33_300u64, 200u64, 0u64), (95_000, 950, 123_456_789), (3_000_000, 1000, 7), (1_000_003, 1500, 1)] {
        let doc = json!({
            "duration": "1000s",
            "links": [{"name": "bn", "from": "a", "to": "b", "rate": "100Mbps", "delay": "1ms"}],
            "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": format!("{rate}bps"),
                         "packet_size": size, "starts": [start_ns as f64 / 1e9]}],
            "record": {"interval": "0s", "arrivals": ["bn"]},
        });
        let r = run(&doc);
        let times: Vec<u64> = r.arrivals.time.iter().map(|&t| (t * 1e9).round() as u64).collect();
        let expect: Vec<u64> = (0u64..)
            .map(|k| start_ns + exact_offset(k, size, rate))
            .take_while(|&t| t < 1_000_000_000_000)
            .collect();
        assert_eq!(times.len(), expect.len(), "rate {rate}");
        if let Some(k) = times.iter().zip(&expect).position(|(a, b)| a != b) {
            panic!("rate {rate}: packet {k} at {} ns, expected {}", times[k], expect[k]);
        }
    }
}

#[test]
fn random_phase_shifts_the_whole_schedule_and_conserves_packets() {
    // With phase = "random" flow i starts at start + φᵢ and then keeps exact time;
    // the queue drops some packets; every packet is sent, delivered, dropped or in flight.
    let doc = json!({
        "duration": "20s", "seed": 5,
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "1Mbps", "delay": "10ms", "queue": {"limit": "3pkts"}}],
        "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "100kbps", "packet_size": 1000,
                     "count": 11, "start": "1s", "phase": "random"}],
        "record": {"interval": "0s", "arrivals": ["bn"]},
    });
    let r = run(&doc);
    let starts: Vec<u64> = r.flows.arrival.iter().map(|&a| (a * 1e9).round() as u64).collect();
    assert_eq!(starts.len(), 11);
    assert!(starts.iter().all(|&s| (1_000_000_000..1_080_000_000).contains(&s)), "{starts:?}");
    let mut expect: Vec<u64> = starts
        .iter()
        .flat_map(|&s| (0u64..).map(move |k| s + exact_offset(k, 1000, 100_000)).take_while(|&t| t < 20_000_000_000))
        .collect();
    expect.sort_unstable();
    let times: Vec<u64> = r.arrivals.time.iter().map(|&t| (t * 1e9).round() as u64).collect();
    assert_eq!(times, expect);
    let n = |k: &str| r.num(k) as u64;
    assert!(n("whole_run_packets_dropped") > 0, "1.1 Mbps offered to 1 Mbps");
    assert_eq!(n("whole_run_packets_sent"), n("whole_run_packets_delivered") + n("whole_run_packets_dropped") + n("packets_in_flight"));
    assert_eq!(n("whole_run_packets_sent"), expect.len() as u64);
}

#[test]
fn phase_is_checked_and_round_trips() {
    let base = |class: Value| {
        json!({"duration": "1s", "links": [{"name": "bn", "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms"}],
               "traffic": [class]})
    };
    let err = |class: Value| build(&base(class), Path::new("."), None, &Registry::new()).unwrap_err().to_string();
    let e = err(json!({"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1Mbps", "phase": "late"}));
    assert_eq!(e, "traffic[0].phase: expected \"zero\" or \"random\", got \"late\"");
    let e = err(json!({"name": "c", "type": "long_lived", "src": "a", "dst": "b", "phase": "random"}));
    assert!(e.starts_with("traffic[0].phase: only constant-rate flows that never end take `phase`"), "{e}");
    let e = err(json!({"name": "c", "type": "poisson", "src": "a", "dst": "b", "load": 0.1, "protocol": "cbr",
                       "cc": {"rate": "1Mbps"}, "size": {"dist": "constant", "value": "1MB"}, "phase": "random"}));
    assert!(e.starts_with("traffic[0].phase: only constant-rate flows"), "{e}");
    // long_lived with protocol = "cbr" takes it too; the canonical form carries it and reads back.
    let doc = base(json!({"name": "c", "type": "long_lived", "src": "a", "dst": "b", "protocol": "cbr",
                          "cc": {"rate": "1Mbps"}, "count": 3, "phase": "random"}));
    let (cfg, _) = build(&doc, Path::new("."), None, &Registry::new()).unwrap();
    let v: Value = serde_json::from_str(&cfg.to_json()).unwrap();
    assert_eq!(v["classes"][0]["phase"], json!("random"));
    let back = cclab_sim::Config::from_json(&cfg.to_json(), &Registry::new()).unwrap();
    assert_eq!(back, cfg);
    // A zero phase is the default and stays out of the canonical form.
    let (cfg0, _) = build(&base(json!({"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1Mbps", "phase": "zero"})),
                          Path::new("."), None, &Registry::new()).unwrap();
    assert!(!cfg0.to_json().contains("phase"));
    // A canonical form with a random phase on a TCP class is refused, naming the key.
    let mut bad: Value = serde_json::from_str(&cfg0.to_json()).unwrap();
    bad["classes"][0]["phase"] = json!("random");
    bad["classes"][0]["arrivals"] = json!({"type": "poisson", "rate_per_s": 1.0, "size": {"dist": "constant", "bytes": 1000.0}});
    let e = cclab_sim::Config::from_json(&bad.to_string(), &Registry::new()).unwrap_err().to_string();
    assert!(e.starts_with("classes[0].phase: only constant-rate flows that never end"), "{e}");
}
