//! Active queues in whole simulations: RED holding N NewReno flows' average queue
//! between its thresholds, ECN marks replacing drops, packet conservation with
//! marks, a controller that ignores marks (FAST), the linear profile's mark
//! rate, determinism per seed; and the scenario keys of `queue = { type = "red" }`,
//! `queue = { type = "linear" }` and `tcp.ecn`: canonical round trip and errors.
//!
//! The RED link is 10 Mbps with 20 ms each way and 1500-byte packets: 833.3
//! packets/s, a bandwidth-delay product of 33 packets.
mod common;
use cclab_sim::config::Config;
use cclab_sim::net::{Linear, Profile, Queue, Red, Unit};
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use cclab_sim::transport::Transport;
use cclab_sim::RunResult;
use serde_json::{json, Value};
use std::path::Path;

fn load(v: &Value) -> Result<Config, String> {
    build(v, Path::new("."), None, &Registry::new()).map(|c| c.0).map_err(|e| e.to_string())
}

fn run(v: &Value) -> RunResult {
    common::run_config(load(v).unwrap())
}

/// `n` long NewReno flows through a 10 Mbps RED link (thresholds 20 and 60
/// packets, max_p 0.1, a 1000-packet buffer), 60 s of which the first 10 are warm-up.
fn red_scenario(n: u32, ecn: bool, seed: u64) -> Value {
    json!({
        "duration": "60s", "warmup": "10s", "seed": seed,
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "20ms",
                   "queue": {"type": "red", "limit": "1000pkts", "min_th": "20pkts", "max_th": "60pkts", "max_p": 0.1, "ecn": ecn}}],
        "traffic": [{"name": "long", "type": "long_lived", "src": "a", "dst": "b", "count": n, "tcp": {"ecn": ecn}}],
        "record": {"interval": "0s"},
    })
}

fn conserved(r: &RunResult) {
    let (sent, delivered) = (r.num("whole_run_packets_sent"), r.num("whole_run_packets_delivered"));
    assert_eq!(sent, delivered + r.num("whole_run_packets_dropped") + r.num("packets_in_flight"));
    // Every marked packet was admitted; with one queue on the path, each is
    // delivered or still in flight.
    assert!(r.num("whole_run_packets_marked") <= delivered + r.num("packets_in_flight"));
    for l in &r.links {
        assert!(l.marks <= l.packets_sent, "{}: {} marks, {} sent", l.name, l.marks, l.packets_sent);
    }
}

#[test]
fn red_holds_newreno_flows_between_its_thresholds() {
    // Measured (seed 1): n = 5, 10, 20 flows keep a mean queue of 25.7, 33.3, 47.6
    // packets dropping and 24.6, 32.2, 49.7 marking, at full utilization.
    for n in [5, 10, 20] {
        let (drop, mark) = (run(&red_scenario(n, false, 1)), run(&red_scenario(n, true, 1)));
        for (r, ecn) in [(&drop, false), (&mark, true)] {
            conserved(r);
            let bn = &r.links[0];
            assert!(bn.mean_queue_packets > 20.0 && bn.mean_queue_packets < 60.0, "n = {n}, ecn = {ecn}: mean queue {}", bn.mean_queue_packets);
            assert!(bn.utilization > 0.99, "n = {n}, ecn = {ecn}: utilization {}", bn.utilization);
            // The signals are as many as RED's spread gives at the mean queue: with
            // wait, at a steady average the gap between two is uniform on
            // 1/p_b..2/p_b − 1 arrivals, a rate of 2 p_b/(3 − p_b). The average
            // moves, so within 20% (measured: 0.84 to 0.97 of it).
            let p_b = 0.1 * (bn.mean_queue_packets - 20.0) / 40.0;
            let want = 2.0 * p_b / (3.0 - p_b);
            let got = (bn.drops + bn.marks) as f64 / (bn.packets_sent + bn.drops) as f64;
            assert!(got / want > 0.8 && got / want < 1.1, "n = {n}, ecn = {ecn}: {got} signals per packet, RED's rate {want}");
        }
        // Marks replace drops: with ECN no data packet is dropped after the warm-up
        // (the average stays below max_th, where RED only marks ECN-capable packets).
        assert_eq!(mark.links[0].drops, 0, "n = {n}");
        assert!(mark.links[0].marks > 0 && drop.links[0].marks == 0 && drop.links[0].drops > 0);
        // Without losses, the flows deliver as much as when they lose packets.
        assert!(mark.num("long.throughput_bps") > 0.99 * drop.num("long.throughput_bps"));
    }
}

#[test]
fn marks_are_deterministic_per_seed_and_link() {
    let a = run(&red_scenario(10, true, 3));
    let b = run(&red_scenario(10, true, 3));
    let c = run(&red_scenario(10, true, 4));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!((a.links[0].marks, a.num("whole_run_packets_sent")), (b.links[0].marks, b.num("whole_run_packets_sent")));
    assert_ne!(a.links[0].marks, c.links[0].marks);
}

/// One flow of `protocol` (`cc` its parameters) through a 100 Mbps link with 25 ms
/// each way, marking with the linear profile (0, 200 packets, 0.1).
fn linear_scenario(protocol: &str, cc: Value) -> Value {
    json!({
        "duration": "30s", "warmup": "10s",
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "100Mbps", "delay": "25ms",
                   "queue": {"type": "linear", "limit": "1000pkts", "min_th": "0pkts", "max_th": "200pkts", "max_p": 0.1}}],
        "traffic": [{"name": "f", "type": "long_lived", "src": "a", "dst": "b", "protocol": protocol, "cc": cc, "tcp": {"ecn": true}}],
        "record": {"interval": "0s"},
    })
}

#[test]
fn a_controller_may_ignore_marks() {
    // FAST ignoring marks keeps its α = 50 packets queued at full rate (measured
    // 49.9); the profile marks p(50) = 0.1 · 50/200 = 0.025 of the packets
    // (measured 0.0246).
    let r = run(&linear_scenario("fast", json!({"react_to_ecn": false})));
    conserved(&r);
    let bn = &r.links[0];
    assert!((bn.mean_queue_packets - 50.0).abs() < 5.0, "mean queue {}", bn.mean_queue_packets);
    assert!(bn.utilization > 0.99 && bn.drops == 0);
    let frac = bn.marks as f64 / bn.packets_sent as f64;
    assert!((frac / 0.025 - 1.0).abs() < 0.1, "marked fraction {frac}");
    // Reacting to them (ns-2's halving) it cannot hold its queue.
    let r = run(&linear_scenario("fast", json!({"react_to_ecn": true})));
    assert!(r.links[0].mean_queue_packets < 25.0 && r.links[0].utilization < 0.9, "{:?}", r.links[0]);
}

/// A one-link scenario whose link has `queue`, and a class with `tcp`.
fn with_queue(queue: Value, tcp: Value) -> Value {
    json!({
        "duration": "1s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "queue": queue}],
        "traffic": [{"name": "t", "type": "long_lived", "src": "a", "dst": "b", "tcp": tcp}],
    })
}

#[test]
fn every_key_reads_and_round_trips() {
    let red = json!({"type": "red", "limit": "100KB", "min_th": "10ms", "max_th": "30ms", "max_p": 0.05, "weight": 0.01,
                     "mean_packet_size": "1500B", "gentle": false, "wait": false, "ecn": true, "hard_drop": false});
    let cfg = load(&with_queue(red, json!({"ecn": true}))).unwrap();
    // Times are bytes of the link's rate: 10 ms of 10 Mbps = 12,500 bytes.
    let want = Red {
        profile: Profile {
            limit_packets: None,
            limit_bytes: Some(100_000),
            unit: Unit::Bytes,
            min_th: 12_500.0,
            max_th: 37_500.0,
            max_p: 0.05,
            weight: 0.01,
            mean_packet_bytes: 1500,
        },
        gentle: false,
        wait: false,
        ecn: true,
        hard_drop: false,
    };
    assert_eq!(cfg.links[0].queue, Queue::Red(want.clone()));
    assert_eq!(cfg.links[1].queue, Queue::Red(want)); // the duplex link's other direction
    match &cfg.classes[0].transport {
        Transport::Window { tcp, .. } => assert!(tcp.ecn),
        t => panic!("{t:?}"),
    }
    let json = cfg.to_json();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["links"][0]["queue"],
        json!({"type": "red", "limit_packets": null, "limit_bytes": 100_000, "unit": "bytes", "min_th": 12500.0, "max_th": 37500.0,
               "max_p": 0.05, "weight": 0.01, "mean_packet_bytes": 1500, "gentle": false, "wait": false, "ecn": true, "hard_drop": false})
    );
    assert_eq!(v["classes"][0]["transport"]["tcp"]["ecn"], json!(true));
    let back = Config::from_json(&json, &Registry::new()).unwrap();
    assert_eq!((back.to_json(), &back), (json, &cfg));
    // Defaults: ns-3's RedQueueDisc; the linear profile's own.
    let cfg = load(&with_queue(json!({"type": "red"}), json!({}))).unwrap();
    assert_eq!(cfg.links[0].queue, Queue::Red(Red::default()));
    let lin = json!({"type": "linear", "min_th": "300pkts", "max_th": "1500pkts", "max_p": 1e-4});
    let cfg = load(&with_queue(lin, json!({}))).unwrap();
    let want = Linear {
        profile: Profile { limit_packets: Some(1000), limit_bytes: None, unit: Unit::Packets, min_th: 300.0, max_th: 1500.0, max_p: 1e-4, weight: 0.002, mean_packet_bytes: 500 },
        ecn: true,
    };
    assert_eq!(cfg.links[0].queue, Queue::Linear(want));
    let json = cfg.to_json();
    assert_eq!(Config::from_json(&json, &Registry::new()).unwrap().to_json(), json);
    let lin = json!({"type": "linear", "min_th": "0B", "max_th": "1MB", "max_p": 1, "weight": 1, "limit": "2MB", "mean_packet_size": "1KB", "ecn": false});
    match &load(&with_queue(lin, json!({}))).unwrap().links[0].queue {
        Queue::Linear(l) => assert_eq!((l.profile.unit, l.profile.max_th, l.profile.weight, l.profile.limit_bytes, l.profile.mean_packet_bytes, l.ecn), (Unit::Bytes, 1e6, 1.0, Some(2_000_000), 1000, false)),
        q => panic!("{q:?}"),
    }
}

/// A one-link scenario at `rate`, `delay` one way, whose link has `queue`.
fn on_link(rate: &str, delay: &str, queue: Value) -> Value {
    json!({
        "duration": "1s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": rate, "delay": delay, "queue": queue}],
        "traffic": [{"name": "t", "type": "long_lived", "src": "a", "dst": "b"}],
    })
}

/// The profile of the RED queue a scenario reads.
fn red_of(v: &Value) -> Profile {
    match &load(v).unwrap().links[0].queue {
        Queue::Red(r) => r.profile.clone(),
        q => panic!("{q:?}"),
    }
}

#[test]
fn automatic_settings_are_ns2s() {
    // ns-2.35's Queue/RED defaults on 10 Mb/s, 50 ms (red.cc:189-210, 280-292):
    // ptc = 10^7 / (8 · 500) = 2500; min_th = max(5, 0.005 · 2500 / 2) = 6.25
    // typical packets, in bytes (queue_in_bytes_): 3125, max_th 9375; the weight
    // 1 − exp(−1 / (10 · 3 · (0.05 + 1/2500) · 2500)) = 1 − exp(−1/3780).
    let auto = json!({"type": "red", "min_th": "auto", "max_th": "auto", "weight": "auto", "max_p": 0.1});
    let r = red_of(&on_link("10Mbps", "50ms", auto.clone()));
    assert_eq!((r.unit, r.min_th, r.max_th, r.max_p), (Unit::Bytes, 3125.0, 9375.0, 0.1));
    assert_eq!(r.weight, 1.0 - (-1.0f64 / 3780.0).exp());
    // 20 ms: the assumed round trip 3 · 20.4 ms is below 100 ms, so 100 ms.
    assert_eq!(red_of(&on_link("10Mbps", "20ms", auto.clone())).weight, 1.0 - (-1.0f64 / 2500.0).exp());
    // 1.5 Mb/s: min_th stays 5 typical packets (2500 bytes), max_th 7500.
    let r = red_of(&on_link("1.5Mbps", "20ms", auto.clone()));
    assert_eq!((r.min_th, r.max_th), (2500.0, 7500.0));
    // An automatic threshold takes the other's unit; max_th is 3 · min_th; an
    // absent one beside an automatic one is automatic (ns-2's defaults are both 0).
    let r = red_of(&on_link("10Mbps", "50ms", json!({"type": "red", "min_th": "auto", "max_th": "40pkts"})));
    assert_eq!((r.unit, r.min_th, r.max_th), (Unit::Packets, 6.25, 40.0));
    let r = red_of(&on_link("10Mbps", "50ms", json!({"type": "red", "min_th": "10pkts", "max_th": "auto"})));
    assert_eq!((r.unit, r.min_th, r.max_th), (Unit::Packets, 10.0, 30.0));
    let r = red_of(&on_link("10Mbps", "50ms", json!({"type": "red", "min_th": "auto"})));
    assert_eq!((r.unit, r.min_th, r.max_th, r.weight), (Unit::Bytes, 3125.0, 9375.0, 0.002));
    // 1500-byte typical packets: ptc 833.3, min_th 5 of them, 7500 bytes.
    let r = red_of(&on_link("10Mbps", "50ms", json!({"type": "red", "min_th": "auto", "mean_packet_size": "1500B"})));
    assert_eq!((r.min_th, r.max_th), (7500.0, 22_500.0));
    // Resolved when read: the canonical form holds the numbers.
    let json = load(&on_link("10Mbps", "50ms", auto)).unwrap().to_json();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!((v["links"][0]["queue"]["min_th"].as_f64(), v["links"][0]["queue"]["unit"].as_str()), (Some(3125.0), Some("bytes")));
}

#[test]
fn every_bad_value_names_its_key() {
    let refused = |queue: Value, want: &str| {
        let e = load(&with_queue(queue.clone(), json!({}))).unwrap_err();
        assert!(e.starts_with(want), "{queue}: got {e:?}, expected {want:?}");
    };
    refused(json!({"type": "red", "max_p": 2}), "links[0].queue.max_p: expected a number in (0, 1], got 2");
    refused(json!({"type": "red", "max_p": 0}), "links[0].queue.max_p: expected a number in (0, 1], got 0");
    refused(json!({"type": "red", "max_p": "0.1"}), "links[0].queue.max_p: expected a number, got \"0.1\"");
    refused(json!({"type": "red", "weight": -0.1}), "links[0].queue.weight: expected a number in (0, 1], got -0.1");
    refused(json!({"type": "red", "weight": "nan"}), "links[0].queue.weight: expected a finite number, got nan");
    refused(json!({"type": "red", "weight": "automatic"}), "links[0].queue.weight: expected a number, got \"automatic\"");
    refused(json!({"type": "red", "min_th": "auto", "max_th": "4pkts"}), "links[0].queue.max_th: must be above min_th (6.25), got 4");
    refused(json!({"type": "red", "min_th": "20pkts"}), "links[0].queue.max_th: must be above min_th (20), got 15");
    refused(json!({"type": "red", "min_th": "5pkts", "max_th": "5pkts"}), "links[0].queue.max_th: must be above min_th (5), got 5");
    refused(json!({"type": "red", "min_th": "5pkts", "max_th": "15KB"}), "links[0].queue.max_th: min_th is in packets and max_th in bytes");
    refused(json!({"type": "red", "min_th": 5}), "links[0].queue.min_th: expected a queue limit like");
    refused(json!({"type": "red", "min_th": "1.5pkts"}), "links[0].queue.min_th: expected a whole number of packets");
    refused(json!({"type": "red", "limit": "0pkts"}), "links[0].queue.limit: expected room for at least one packet");
    refused(json!({"type": "red", "mean_packet_size": "0B"}), "links[0].queue.mean_packet_size: expected a whole number of bytes from 1");
    refused(json!({"type": "red", "mean_packet_size": "1.5B"}), "links[0].queue.mean_packet_size: expected a whole number of bytes from 1");
    refused(json!({"type": "red", "gentle": 1}), "links[0].queue.gentle: expected true or false, got 1");
    refused(json!({"type": "red", "hard_drops": true}), "links[0].queue.hard_drops: unknown key (did you mean `hard_drop`?)");
    refused(json!({"type": "red", "limit": "1000B"}), "traffic[0].route: the queue of link \"l\" holds less than one packet");
    refused(json!({"type": "linear", "max_th": "10pkts", "max_p": 0.1}), "links[0].queue.min_th: missing: a threshold");
    refused(json!({"type": "linear", "min_th": "0pkts", "max_th": "10pkts"}), "links[0].queue.max_p: missing: the marking probability at max_th");
    refused(json!({"type": "linear", "min_th": "0pkts", "max_th": "10pkts", "max_p": 0.1, "gentle": true}),
            "links[0].queue.gentle: unknown key; a queue takes: type, limit, min_th, max_th, max_p, weight, mean_packet_size, ecn");
    refused(json!({"type": "codel"}), "links[0].queue.type: unknown queue discipline \"codel\"; expected \"droptail\", \"red\", \"linear\" or \"rcp\"");
    refused(json!({"type": "droptail", "ecn": true}), "links[0].queue.ecn: unknown key; a queue takes: type, limit");
    let e = load(&with_queue(json!({}), json!({"ecn": "yes"}))).unwrap_err();
    assert_eq!(e, "traffic[0].tcp.ecn: expected true or false, got \"yes\"");
    // The canonical configuration is checked again when read.
    let cfg = load(&with_queue(json!({"type": "red"}), json!({}))).unwrap();
    for (key, bad, want) in [
        ("max_p", json!(1.5), "links[0].queue.max_p: expected a number in (0, 1], got 1.5"),
        ("max_th", json!(1.0), "links[0].queue.max_th: must be above min_th (5), got 1"),
        ("mean_packet_bytes", json!(0), "links[0].queue.mean_packet_bytes: expected a positive number of bytes, got 0"),
        // (serde names the tagged table, not the key, for a wrong type)
        ("unit", json!("cells"), "links[0].queue: unknown variant `cells`, expected `packets` or `bytes`"),
    ] {
        let mut v: Value = serde_json::from_str(&cfg.to_json()).unwrap();
        v["links"][0]["queue"][key] = bad;
        let e = Config::from_json(&v.to_string(), &Registry::new()).unwrap_err().to_string();
        assert!(e.starts_with(want), "{key}: {e}");
    }
}
