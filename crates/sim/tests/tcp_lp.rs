//! TCP-LP (`protocol = "tcp_lp"`) in whole simulations on the reference link of
//! the background-transfer papers (10 Mbps, 25 ms one way), each number against
//! a closed form or a bound.
//!
//! Common quantities: a data packet is 1460 + 40 bytes, 1.2 ms at 10 Mbps; the
//! base RTT is 2 × 25 ms + 1.2 ms + 0.032 ms (the ACK) = 51.232 ms; the
//! bandwidth-delay product P = 51.232 ms / 1.2 ms = 42.69 packets.
mod common;
use cclab_sim::config::Config;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

const PKT_S: f64 = 1500.0 * 8.0 / 10e6;
const BASE_RTT_S: f64 = 0.050 + PKT_S + 40.0 * 8.0 / 10e6;
const BDP_PKTS: f64 = BASE_RTT_S / PKT_S;

fn scenario(buffer: &str, traffic: Vec<Value>) -> Value {
    json!({
        "duration": "200s", "warmup": "20s",
        "links": [{"name": "bottleneck", "from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms", "queue": {"limit": buffer}}],
        "traffic": traffic,
        "record": {"interval": "0s"},
    })
}

/// The folder of the burst's flow list, written once per test process.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cclab-tcp-lp-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("burst.csv"), "start,size,class\n0,3000000,burst\n").unwrap();
        dir
    })
}

fn run(s: Value) -> RunResult {
    let (cfg, _) = build(&s, dir(), None, &Registry::new()).unwrap();
    common::run_config(cfg)
}

fn lp(name: &str, cc: Value) -> Value {
    json!({"name": name, "type": "long_lived", "src": "a", "dst": "b", "protocol": "tcp_lp", "cc": cc})
}

fn newreno(name: &str) -> Value {
    json!({"name": name, "type": "long_lived", "src": "a", "dst": "b", "protocol": "newreno"})
}

/// One 3 MB NewReno transfer at t = 0: its slow start overflows the buffer, so
/// every TCP-LP flow records d_max = d_min + the full buffer (as any TCP cross
/// traffic filling the buffer would); it is over well before the 20 s warm-up ends.
fn burst() -> Value {
    json!({"name": "burst", "type": "flow_list", "src": "a", "dst": "b", "file": "burst.csv"})
}

/// The utilization of one TCP-LP flow alone, from its cycle (fluid model, in
/// round trips, P = BDP in packets): an indication at W = P + q (q: the
/// threshold's queue in packets, δ·(d_max − d_min) over one packet's time)
/// halves the window to h = W/2; for the first round trip the link still
/// carries the old window, then h per round trip until the inference time-out
/// (k round trips) ends; then one packet more per round trip, P − h round trips
/// at (h + P)/2P on average, and q round trips at full rate before the next
/// indication.
fn halving_cycle(q: f64, k: f64) -> f64 {
    let p = BDP_PKTS;
    let h = (p + q) / 2.0;
    let ai = p - h;
    (1.0 + (k - 1.0) * h / p + ai * (h + p) / (2.0 * p) + q) / (k + ai + q)
}

#[test]
fn alone_on_a_one_bdp_buffer_it_cycles_below_full_utilization() {
    // A buffer of one BDP (50 ms). Without cross traffic the largest delay a flow
    // ever sees is its own initial window's burst: 10 segments back to back, the
    // last waiting 9 packets, so d_max − d_min = 9 packet times and the threshold
    // sits q = 0.15 × 9 = 1.35 packets above the empty queue.
    let r = run(scenario("50ms", vec![lp("lp", json!({}))]));
    let u = r.links[0].utilization;
    let model = halving_cycle(0.15 * 9.0, 3.0); // 0.761
    assert!((u - model).abs() < 0.03, "utilization {u}, model {model}");
    assert_eq!(r.links[0].drops, 0);
    // After any halving the window is at most (P + δ·B)/2 = 0.575 P < P: the link
    // idles every cycle, so no buffer of one BDP lets TCP-LP fill it (≥ 0.95 is
    // out of reach by construction, whatever d_max).
    assert!(u < 0.85);
    // With d_max set by a full buffer (after a 3 MB TCP burst): q = 0.15 × 41.67.
    let r = run(scenario("50ms", vec![lp("lp", json!({})), burst()]));
    let u = r.links[0].utilization;
    let model = halving_cycle(0.15 * 62_500.0 / 1500.0, 3.0); // 0.827
    assert!((u - model).abs() < 0.03, "utilization {u}, model {model}");
}

#[test]
fn alone_it_fills_the_link_when_the_threshold_queue_exceeds_a_bdp() {
    // Halving at W = P + q keeps the link busy when W/2 ≥ P, i.e. q ≥ P: with
    // δ = 0.15 a buffer of 400 ms (δ·B = 60 ms of queue > 51.2 ms) whose depth the
    // flow has seen once (the burst). Then TCP-LP alone uses the whole link.
    let r = run(scenario("400ms", vec![lp("lp", json!({})), burst()]));
    assert!(r.links[0].utilization >= 0.99, "{}", r.links[0].utilization);
    // The queue saw-tooths between W/2 − P after a halving and q before the next,
    // q = 0.15 × 333.3 = 50 packets: a mean near (q + (P + q)/2 − P)/2 = 26.8
    // packets (a little more, as round trips are longer when the queue is long).
    let q = 0.15 * 500_000.0 / 1500.0;
    let mid = (q + (BDP_PKTS + q) / 2.0 - BDP_PKTS) / 2.0;
    let mean = r.links[0].mean_queue_packets;
    assert!((mean / mid - 1.0).abs() < 0.15, "mean queue {mean} packets, midpoint {mid}");
}

/// The share of class `a` and the throughput one segment per mean round trip
/// gives (the window at its floor), from the measured mean queue.
fn share_and_floor(r: &RunResult, a: &str, b: &str) -> (f64, f64, f64) {
    let (x, y) = (r.num(&format!("{a}.throughput_bps")), r.num(&format!("{b}.throughput_bps")));
    let rtt = BASE_RTT_S + r.links[0].mean_queue_bytes * 8.0 / 10e6;
    (x / (x + y), x, 1460.0 * 8.0 / rtt)
}

#[test]
fn against_a_long_newreno_flow_it_keeps_to_one_segment_per_round_trip() {
    // The reference link (80 ms buffer): NewReno keeps the queue between about 15
    // and 80 ms, while TCP-LP's threshold is 0.15 × 80 = 12 ms above the empty
    // queue: indication after indication holds TCP-LP at one segment, which it
    // sends once per round trip. NewReno takes the rest of the link.
    let r = run(scenario("80ms", vec![lp("lp", json!({})), newreno("tcp")]));
    let (share, lp_bps, floor_bps) = share_and_floor(&r, "lp", "tcp");
    assert!(share < 0.02, "TCP-LP's share {share}");
    assert!((lp_bps / floor_bps - 1.0).abs() < 0.1, "{lp_bps} bit/s, one segment per RTT is {floor_bps}");
    assert!(r.links[0].utilization > 0.99);
    // ns-3's and Linux's rules: still low priority (6.4% and 4.7% measured), more
    // than the paper's, as their thresholds move with each indication (d_min =
    // sowd, d_max = 2·sowd) and ns-3's slow start runs within the time-out.
    for v in ["ns3", "linux"] {
        let r = run(scenario("80ms", vec![lp("lp", json!({"variant": v})), newreno("tcp")]));
        let (share, _, _) = share_and_floor(&r, "lp", "tcp");
        assert!(share < 0.1, "{v} variant's share {share}");
    }
}

#[test]
fn two_flows_alone_share_evenly() {
    // Both flows see the same delays (d_min: the empty queue, d_max: the full
    // buffer, set by the burst), so both have the same threshold; halving and
    // adding one segment per round trip (AIMD) then converges to equal shares.
    let r = run(scenario("80ms", vec![lp("lp1", json!({})), lp("lp2", json!({})), burst()]));
    let ratio = r.num("lp1.throughput_bps") / r.num("lp2.throughput_bps");
    assert!((0.9..=1.0 / 0.9).contains(&ratio), "ratio {ratio}");
    // Halving together at the same queue, they cycle as one flow with that
    // threshold would (q = 0.15 × 66.67 packets; model 0.867).
    let u = r.links[0].utilization;
    let model = halving_cycle(0.15 * 100_000.0 / 1500.0, 3.0);
    assert!((u - model).abs() < 0.03, "utilization {u}, model {model}");
}

#[test]
fn the_constants_are_not_knife_edges() {
    // Against NewReno: below 2% for δ from 0.1 to 0.25, an inference time-out of
    // 1 to 6 round trips and a smoothing gain from 1/16 to 1/4.
    let cases = [
        json!({"delta": 0.1}),
        json!({"delta": 0.25}),
        json!({"inference_rtts": 1}),
        json!({"inference_rtts": 6}),
        json!({"gain": 0.0625}),
        json!({"gain": 0.25}),
    ];
    for cc in cases {
        let r = run(scenario("80ms", vec![lp("lp", cc.clone()), newreno("tcp")]));
        let (share, _, _) = share_and_floor(&r, "lp", "tcp");
        assert!(share < 0.02, "{cc}: share {share}");
    }
    // Alone: a longer inference time-out holds the halved window longer, so the
    // utilization falls with it, as the cycle model says (k = 1, 3, 6).
    let alone = |cc: Value| run(scenario("50ms", vec![lp("lp", cc)])).links[0].utilization;
    let u: Vec<f64> = [1, 3, 6].iter().map(|&k| alone(json!({"inference_rtts": k}))).collect();
    assert!(u[0] > u[1] && u[1] > u[2], "{u:?}");
    for (ui, k) in u.iter().zip([1.0, 3.0, 6.0]) {
        let model = halving_cycle(1.35, k);
        assert!((ui - model).abs() < 0.03, "k = {k}: {ui} vs {model}");
    }
    // A threshold under one packet time (δ·9 < 1) is crossed by the queue of one
    // packet that every window increase adds behind the flow's own packet train,
    // so TCP-LP halves far below the BDP: δ = 0.1 gives less than half the link.
    let u = alone(json!({"delta": 0.1}));
    assert!(u < 0.5, "{u}");
}

#[test]
fn with_delta_one_it_is_newreno_packet_for_packet() {
    // δ = 1 puts the threshold at d_max, which a smoothed delay (an average of
    // samples none above d_max) never exceeds: no indication, no inference
    // time-out, and every rule left is NewReno's. The runs are identical.
    let go = |protocol: &str, cc: Value| {
        let mut s = scenario("80ms", vec![json!({"name": "c", "type": "long_lived", "src": "a", "dst": "b", "protocol": protocol, "cc": cc, "count": 3})]);
        s["duration"] = json!("60s");
        let r = run(s);
        (r.num("whole_run_packets_delivered"), r.num("whole_run_packets_dropped"), format!("{:?}", r.flows), format!("{:?}", r.links[0]))
    };
    let (a, b) = (go("newreno", json!({})), go("tcp_lp", json!({"delta": 1})));
    assert!(a.1 > 0.0); // NewReno's losses happen, and TCP-LP has the same
    assert_eq!(a, b);
}

#[test]
fn parameters_reach_the_canonical_configuration_and_are_checked() {
    let s = scenario("80ms", vec![lp("lp", json!({"delta": 0.2, "variant": "ns3"}))]);
    let (cfg, _) = build(&s, std::path::Path::new("."), None, &Registry::new()).unwrap();
    let text = cfg.to_json();
    assert!(
        text.contains(r#""cc":{"protocol":"tcp_lp","params":{"delta":0.2,"gain":0.125,"inference_rtts":3.0,"variant":"ns3"}}"#),
        "{text}"
    );
    assert_eq!(Config::from_json(&text, &Registry::new()).unwrap(), cfg);
    let bad = |cc: Value| {
        let s = scenario("80ms", vec![lp("lp", cc)]);
        build(&s, std::path::Path::new("."), None, &Registry::new()).unwrap_err().to_string()
    };
    assert_eq!(bad(json!({"delta": 2})), "traffic[0].cc.delta: expected a number from 0 to 1, got 2");
    assert_eq!(
        bad(json!({"speed": 1})),
        "traffic[0].cc.speed: unknown key; the tcp_lp controller takes: variant, delta, gain, inference_rtts"
    );
    // A canonical configuration edited out of range is refused when read back.
    let edited = text.replace(r#""delta":0.2"#, r#""delta":-1"#);
    let e = Config::from_json(&edited, &Registry::new()).unwrap_err().to_string();
    assert!(e.contains("delta: expected a number from 0 to 1, got -1"), "{e}");
}
