//! MulTCP / wTCP in whole simulations: the share a flow of weight w takes against
//! one NewReno flow, weight 1 being NewReno, and the weight read from a scenario.
mod common;
use cclab_sim::config::Config;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::Path;

fn run(doc: &Value) -> RunResult {
    let (cfg, _) = build(doc, Path::new("."), None, &Registry::new()).unwrap();
    common::run_config(cfg)
}

/// One long-lived MulTCP flow of weight `w` (from 0 s) against one NewReno flow
/// (from 10 ms) on 10 Mbps with 25 ms one-way delay (base RTT 51.2 ms, a
/// bandwidth-delay product of 62.5 kB, 42 packets of 1500 bytes) and a drop-tail
/// buffer of `buffer_ms` at the link's rate (50 ms: one BDP), for 320 s measured
/// after the first 20. Returns (MulTCP's throughput over NewReno's, utilization).
fn share(w: f64, buffer_ms: f64) -> (f64, f64) {
    let r = run(&json!({
        "duration": "320s", "warmup": "20s",
        "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms", "queue": {"limit": format!("{buffer_ms}ms")}}],
        "traffic": [
            {"name": "w", "type": "long_lived", "src": "a", "dst": "b", "protocol": "multcp", "cc": {"weight": w}},
            {"name": "tcp", "type": "long_lived", "src": "a", "dst": "b", "protocol": "newreno", "start": "0.01s"},
        ],
        "record": {"interval": "0s"},
    }));
    (r.num("w.throughput_bps") / r.num("tcp.throughput_bps"), r.links[0].utilization)
}

#[test]
fn weight_w_takes_w_times_the_share_of_one_tcp_flow() {
    // a = min(1, 3w), b = min(1, 2/(1 + 3w)): equal growth to TCP's makes both flows equally
    // likely to lose at each overflow of the drop-tail queue, and the sawtooth arithmetic
    // gives a throughput ratio a(2 − b)/(3b) = w (docs/protocols.md). Measured: 0.475 for
    // w = 0.5, 2.114 for 2, 4.246 for 4 (the same within 2% for other start times and for
    // 600 s): ±15% holds them with room for the phase effects of two deterministic flows.
    for w in [0.5, 2.0, 4.0] {
        let (ratio, utilization) = share(w, 50.0);
        assert!((ratio / w - 1.0).abs() <= 0.15, "w = {w}: ratio {ratio}");
        assert!(utilization > 0.97, "w = {w}: utilization {utilization}");
    }
    // Below w = 1/3 the decrease is already total (b = 1) and a = 3w < 1: the flow adds fewer
    // packets than TCP while the queue is full, so it escapes some of the losses. Losing in
    // proportion to its growth it would take (2 − b)/(3b) = 1/3 of TCP's share whatever w; its
    // share lies between w and 1/3. Measured 0.344 for w = 0.25.
    let (ratio, utilization) = share(0.25, 50.0);
    assert!((0.25 * 0.85..=1.15 / 3.0).contains(&ratio), "w = 0.25: ratio {ratio}");
    assert!(utilization > 0.95, "w = 0.25: utilization {utilization}");
}

#[test]
fn the_share_holds_from_a_quarter_to_two_bandwidth_delay_products_of_buffer() {
    // Measured: 0.459, 2.116, 4.573 with a quarter of a BDP (12.5 ms: the link idles after
    // some reductions, utilization 0.82-0.996, so the sawtooth model holds less well) and
    // 0.475, 2.023, 4.034 with two BDPs (100 ms). ±20%.
    for buffer_ms in [12.5, 100.0] {
        for w in [0.5, 2.0, 4.0] {
            let (ratio, _) = share(w, buffer_ms);
            assert!((ratio / w - 1.0).abs() <= 0.2, "buffer {buffer_ms} ms, w = {w}: ratio {ratio}");
        }
    }
}

#[test]
fn weight_one_is_newreno() {
    // The same scenario with one class as multcp { weight = 1 } and as newreno: every flow
    // and link counter identical. A 10-packet buffer, four flows and the "impatient" timer
    // make losses, recoveries and timeouts.
    let doc = |protocol: &str, cc: Value| {
        json!({
            "duration": "60s",
            "tcp": {"partial_ack_timer": "impatient"},
            "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms", "queue": {"limit": "10pkts"}}],
            "traffic": [
                {"name": "x", "type": "long_lived", "src": "a", "dst": "b", "protocol": protocol, "cc": cc, "count": 3},
                {"name": "y", "type": "long_lived", "src": "a", "dst": "b", "protocol": "newreno", "start": "1s"},
            ],
        })
    };
    let m = run(&doc("multcp", json!({"weight": 1})));
    let n = run(&doc("newreno", json!({})));
    assert_eq!(format!("{:?}", m.flows), format!("{:?}", n.flows));
    assert_eq!(format!("{:?}", m.links), format!("{:?}", n.links));
    assert!(m.links[0].drops > 100 && m.flows.timeouts.iter().sum::<u32>() > 0, "{:?}", m.flows);
}

#[test]
fn the_weight_comes_from_the_scenario_and_the_canonical_form() {
    let doc = |cc: Value| {
        json!({
            "duration": "1s",
            "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms"}],
            "traffic": [{"name": "w", "type": "long_lived", "src": "a", "dst": "b", "protocol": "multcp", "cc": cc}],
        })
    };
    let reg = Registry::new();
    let (cfg, _) = build(&doc(json!({"weight": 0.5})), Path::new("."), None, &reg).unwrap();
    let text = cfg.to_json();
    assert!(text.contains(r#""cc":{"protocol":"multcp","params":{"weight":0.5}}"#), "{text}");
    assert_eq!(Config::from_json(&text, &reg).unwrap(), cfg);
    let e = Config::from_json(&text.replace(r#""weight":0.5"#, r#""weight":0.0"#), &reg).unwrap_err().to_string();
    assert!(e.contains("weight: expected a positive number, got 0"), "{e}");
    // The default is 1.
    let (cfg, _) = build(&doc(json!({})), Path::new("."), None, &reg).unwrap();
    assert!(cfg.to_json().contains(r#""params":{"weight":1.0}"#));
    let refused = |cc: Value| build(&doc(cc), Path::new("."), None, &reg).unwrap_err().to_string();
    assert_eq!(refused(json!({"weight": 0})), "traffic[0].cc.weight: expected a positive number, got 0");
    assert_eq!(refused(json!({"weight": -0.5})), "traffic[0].cc.weight: expected a positive number, got -0.5");
    assert_eq!(refused(json!({"weight": "nan"})), "traffic[0].cc.weight: expected a finite number, got nan");
    assert_eq!(refused(json!({"N": 2})), "traffic[0].cc.N: unknown key; the multcp controller takes: weight");
}
