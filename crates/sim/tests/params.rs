//! One path for parameters: a canonical configuration (what `cclab.run(config)` and a
//! stored result run) with an out-of-range parameter of any protocol or queue
//! discipline is refused naming its key, as a scenario file is.
mod common;
use cclab_sim::config::Config;
use cclab_sim::net::queue::BUILTIN as QUEUES;
use cclab_sim::transport::cc::{Registry, BUILTIN as WINDOW_PROTOCOLS};
use cclab_sim::transport::rate::RATE_PROTOCOLS;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// A one-link scenario whose class runs `protocol` with `cc` and whose link runs `queue`.
fn scenario(protocol: &str, cc: Value, queue: Value) -> Value {
    let queue = if protocol == "rcp" { json!({"type": "rcp"}) } else { queue };
    json!({
        "duration": "1s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "queue": queue}],
        "traffic": [{"name": "c", "type": "long_lived", "src": "a", "dst": "b", "protocol": protocol, "cc": cc}],
    })
}

/// The `cc` table a protocol needs to be read at all (a rate where it is required).
fn least_cc(protocol: &str) -> Value {
    match protocol {
        "pareto" | "cbr" => json!({"rate": "1Mbps"}),
        _ => json!({}),
    }
}

/// The canonical JSON of `doc`.
fn canonical(doc: &Value) -> Value {
    serde_json::from_str(&common::config(doc).to_json()).unwrap()
}

/// The canonical JSON of `doc` with `value` written at `pointer` (a JSON pointer).
fn edited(doc: &Value, pointer: &str, value: Value) -> String {
    let mut v = canonical(doc);
    *v.pointer_mut(pointer).unwrap_or_else(|| panic!("no {pointer}")) = value;
    v.to_string()
}

fn refused(text: &str) -> String {
    Config::from_json(text, &Registry::new()).unwrap_err().to_string()
}

/// The numeric keys of the object at `pointer` in the canonical form of `doc`: the
/// parameters that have a range.
fn numeric_keys(doc: &Value, pointer: &str) -> BTreeSet<String> {
    let v = canonical(doc);
    let o = v.pointer(pointer).and_then(Value::as_object).unwrap_or_else(|| panic!("no {pointer}"));
    o.iter().filter(|(_, x)| x.is_number()).map(|(k, _)| k.clone()).collect()
}

#[test]
fn every_protocols_parameters_are_checked_when_read_back() {
    let p = "/classes/0/transport/cc/params";
    // (protocol, its cc table, parameter, an out-of-range value): refused at
    // classes[0].transport.cc.params.PARAMETER by the protocol's one check().
    let cases: &[(&str, Value, &str, Value)] = &[
        ("fast", json!({}), "alpha", json!(-5.0)),
        ("fast", json!({}), "gamma", json!(1.5)),
        ("fast", json!({}), "update_interval_ns", json!(0)),
        ("fast", json!({}), "mi_threshold_ns", json!(u64::MAX)),
        ("ledbat", json!({}), "gain", json!(-1.0)),
        ("ledbat", json!({}), "target_ns", json!(0)),
        ("ledbat", json!({}), "base_history", json!(0)),
        ("ledbat", json!({}), "current_filter", json!(1000)),
        ("ledbat", json!({}), "min_cwnd", json!(0)),
        ("ledbat", json!({}), "init_cwnd", json!(0)),
        ("ledbat", json!({}), "allowed_increase", json!(-1.0)),
        ("multcp", json!({}), "weight", json!(0.0)),
        ("vegas", json!({}), "alpha", json!(-1.0)),
        ("vegas", json!({}), "beta", json!(0.5)),
        ("vegas", json!({}), "gamma", json!(-1.0)),
        ("vegas", json!({"variant": "ns2"}), "alpha", json!(1.5)),
        ("tcp_lp", json!({}), "delta", json!(1.5)),
        ("tcp_lp", json!({}), "gain", json!(-1.0)),
        ("tcp_lp", json!({}), "inference_rtts", json!(-1.0)),
        ("tcp_lp", json!({"variant": "ns3"}), "gain", json!(0.5)),
        ("tcp_lp", json!({"variant": "ns2"}), "inference_rtts", json!(2.5)),
        ("cbr", json!({"rate": "1Mbps"}), "rate_bps", json!(-1.0)),
        ("pareto", json!({"rate": "1Mbps"}), "shape", json!(0.5)),
        ("pareto", json!({"rate": "1Mbps"}), "on_ns", json!(0)),
        ("pareto", json!({"rate": "1Mbps"}), "off_ns", json!(0)),
        ("pareto", json!({"rate": "1Mbps"}), "rate_bps", json!(0.0)),
        ("tfrc", json!({}), "q", json!(-1.0)),
        ("tfrc", json!({"variant": "ns2"}), "q", json!(0.5)),
        ("tfcbr", json!({}), "alpha", json!(0.0)),
        ("tfcbr", json!({}), "beta_ns", json!(0)),
        ("tfcbr", json!({}), "q", json!(1.0)),
        ("rdtf", json!({}), "alpha", json!(-1.0)),
        ("rdtf", json!({}), "beta_ns", json!(0)),
        ("rdtf", json!({}), "q", json!(1.0)),
        ("rcp", json!({}), "syn_interval_ns", json!(0)),
    ];
    for (protocol, cc, key, bad) in cases {
        let doc = scenario(protocol, cc.clone(), json!({"type": "droptail"}));
        let e = refused(&edited(&doc, &format!("{p}/{key}"), bad.clone()));
        assert!(e.starts_with(&format!("classes[0].transport.cc.params.{key}: ")), "{protocol}.{key} = {bad}: {e}");
    }
    // Every numeric parameter of every built-in protocol has a case above.
    for protocol in WINDOW_PROTOCOLS.iter().chain(RATE_PROTOCOLS) {
        let doc = scenario(protocol, least_cc(protocol), json!({"type": "droptail"}));
        for key in numeric_keys(&doc, p) {
            assert!(cases.iter().any(|c| c.0 == *protocol && c.2 == key), "no out-of-range case for {protocol}.{key}");
        }
    }
}

#[test]
fn every_queue_disciplines_parameters_are_checked_when_read_back() {
    let q = "/links/0/queue";
    let linear = json!({"type": "linear", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1});
    let cases: &[(Value, &str, Value)] = &[
        (json!({"type": "red"}), "min_th", json!(-1.0)),
        (json!({"type": "red"}), "max_th", json!(1.0)),
        (json!({"type": "red"}), "max_p", json!(2.0)),
        (json!({"type": "red"}), "weight", json!(0.0)),
        (json!({"type": "red"}), "mean_packet_bytes", json!(0)),
        (linear.clone(), "min_th", json!(-1.0)),
        (linear.clone(), "max_th", json!(5.0)),
        (linear.clone(), "max_p", json!(-0.1)),
        (linear.clone(), "weight", json!(1.5)),
        (linear.clone(), "mean_packet_bytes", json!(0)),
        (json!({"type": "rcp"}), "alpha", json!(-0.4)),
        (json!({"type": "rcp"}), "beta", json!(-1.0)),
        (json!({"type": "rcp"}), "target_utilization", json!(1.5)),
        (json!({"type": "rcp"}), "interval_ns", json!(0)),
        (json!({"type": "rcp"}), "initial_rtt_ns", json!(0)),
        (json!({"type": "rcp"}), "initial_rate", json!(0.0)),
    ];
    for (queue, key, bad) in cases {
        let doc = scenario("newreno", json!({}), queue.clone());
        let e = refused(&edited(&doc, &format!("{q}/{key}"), bad.clone()));
        assert!(e.starts_with(&format!("links[0].queue.{key}:")), "{queue} {key} = {bad}: {e}");
    }
    // Every numeric parameter of every built-in discipline has a case above, but a
    // buffer's limits (any whole number is a buffer).
    for name in QUEUES {
        let queue = if *name == "linear" { linear.clone() } else { json!({"type": name}) };
        let doc = scenario("newreno", json!({}), queue);
        for key in numeric_keys(&doc, q) {
            let limit = key == "limit_packets" || key == "limit_bytes";
            assert!(limit || cases.iter().any(|c| c.0["type"] == *name && c.1 == key), "no out-of-range case for queue {name}.{key}");
        }
    }
}

#[test]
fn a_disciplines_unknown_key_is_refused_when_read_back() {
    // RED and the linear profile flatten their shared Profile into their own keys: a key
    // that neither knows is still refused.
    let linear = json!({"type": "linear", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1});
    for queue in [json!({"type": "droptail"}), json!({"type": "red"}), linear, json!({"type": "rcp"})] {
        let doc = scenario("newreno", json!({}), queue.clone());
        let mut v = canonical(&doc);
        v["links"][0]["queue"]["min_thresh"] = json!(5.0);
        let e = refused(&v.to_string());
        assert!(e.contains("min_thresh"), "{queue}: {e}");
    }
}
