//! Scenarios in, `Config` out: the canonical JSON round-trips, per-class settings
//! override the scenario's, and every malformed input is refused before any
//! work with a message that names its key (never a panic, a wrap-around or an
//! allocation the size of the input's numbers).
mod common;
use cclab_sim::config::Config;
use cclab_sim::scenario::{self, build, parse_json, parse_toml};
use cclab_sim::transport::cc::{CcConfig, Registry};
use cclab_sim::transport::tcp::PartialAckTimer;
use cclab_sim::transport::Transport;
use serde_json::{json, Value};
use std::path::Path;

fn base() -> Value {
    json!({
        "duration": "10s",
        "links": [
            {"name": "l1", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "queue": {"limit": "50pkts"}},
            {"name": "l2", "from": "b", "to": "c", "rate": "10Mbps", "delay": "5ms"},
        ],
        "traffic": [{"name": "t", "type": "poisson", "src": "a", "dst": "c", "load": 0.5,
                     "size": {"dist": "exponential", "mean": "1MB"}}],
    })
}

fn load(v: &Value) -> Result<Config, String> {
    build(v, Path::new("."), None, &Registry::new()).map(|c| c.0).map_err(|e| e.to_string())
}

/// `base()` with `f` applied; the error it must give starts with `want`.
fn refused(f: impl FnOnce(&mut Value), want: &str) {
    let mut v = base();
    f(&mut v);
    match load(&v) {
        Ok(_) => panic!("accepted, expected {want:?}"),
        Err(e) => assert!(e.starts_with(want), "got {e:?}, expected {want:?}"),
    }
}

#[test]
fn canonical_json_round_trips() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/background/single-link.toml")).unwrap();
    let (cfg, _) = scenario::load_toml(&text, Path::new("."), Some(7)).unwrap();
    let json = cfg.to_json();
    let back = Config::from_json(&json, &Registry::new()).unwrap();
    assert_eq!(back, cfg);
    assert_eq!(back.to_json(), json);
    assert_eq!(cfg.seed, 7); // the effective seed
    // SI integers with the unit in the key.
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["duration_ns"], json!(2_000_000_000_000u64));
    assert_eq!(v["links"][0]["rate_bps"], json!(10_000_000));
    assert_eq!(v["links"][0]["queue"], json!({"type": "droptail", "limit_packets": null, "limit_bytes": 100_000}));
    assert_eq!(v["classes"][0]["transport"]["cc"], json!({"protocol": "newreno", "params": {}}));
    assert_eq!(v["classes"][0]["transport"]["tcp"]["receive_window"], json!(131_072));
    // Every kind of class and distribution round-trips too.
    let dir = std::env::temp_dir().join("cclab-config-test");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f.csv"), "start,size,class\n0.5,1000,fl\n0.25,2000,fl\n").unwrap();
    std::fs::write(dir.join("cdf.csv"), "size,cdf\n100,0.2\n1000,1\n").unwrap();
    let all = json!({
        "duration": "1s", "seed": 3, "name": "all",
        "links": [{"from": "a", "to": "b", "rate": "1Gbps", "delay": "1ms"}],
        "traffic": [
            {"name": "p", "type": "poisson", "src": "a", "dst": "b", "arrival_rate": 3.5,
             "size": {"dist": "pareto", "mean": "10KB", "shape": 1.3}},
            {"name": "e", "type": "poisson", "src": "a", "dst": "b", "load": 0.1, "size": {"dist": "empirical", "file": "cdf.csv"}},
            {"name": "c", "type": "poisson", "src": "a", "dst": "b", "load": 0.1, "size": {"dist": "constant", "value": "3kB"},
             "tcp": {"mss": 1000, "partial_ack_timer": "impatient"}},
            {"name": "fl", "type": "flow_list", "src": "a", "dst": "b", "file": "f.csv", "stop": "0.9s"},
            {"name": "ll", "type": "long_lived", "src": "a", "dst": "b", "count": 2, "start": "0.1s"},
            {"name": "s", "type": "cbr", "src": "a", "dst": "b", "rate": "33.3kbps", "starts": [0.2, 0.1], "packet_size": 200},
            {"name": "r", "type": "long_lived", "src": "a", "dst": "b", "protocol": "cbr", "cc": {"rate": "1Mbps"}},
        ],
        "record": {"interval": "0s", "arrivals": ["a->b"]},
    });
    let (cfg, _) = build(&all, &dir, None, &Registry::new()).unwrap();
    let back = Config::from_json(&cfg.to_json(), &Registry::new()).unwrap();
    assert_eq!(back, cfg);
    // And the configuration runs the same from its JSON as from the scenario.
    let a = common::run_config(cfg.clone());
    let b = common::run_config(back);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
}

#[test]
fn canonical_json_is_checked_when_read() {
    let cfg = load(&base()).unwrap();
    let mut v: Value = serde_json::from_str(&cfg.to_json()).unwrap();
    v["classes"][0]["route"] = json!([2, 0]);
    let e = Config::from_json(&v.to_string(), &Registry::new()).unwrap_err().to_string();
    assert!(e.starts_with("classes[0].route: link 1 does not start"), "{e}");
    let mut v: Value = serde_json::from_str(&cfg.to_json()).unwrap();
    v["links"][0]["rate_bps"] = json!(0);
    let e = Config::from_json(&v.to_string(), &Registry::new()).unwrap_err().to_string();
    assert!(e.starts_with("links[0].rate_bps"), "{e}");
    let e = Config::from_json("{\"format\": 3}", &Registry::new()).unwrap_err().to_string();
    assert!(e.starts_with("format: invalid type"), "{e}");
    // A configuration saved before the SACK, PRR, byte-counting, timestamp, ECN and
    // rule keys existed loads with them at their defaults (what such a run did).
    let mut v: Value = serde_json::from_str(&cfg.to_json()).unwrap();
    let tcp = v["classes"][0]["transport"]["tcp"].as_object_mut().unwrap();
    for k in ["sack", "recovery", "byte_counting", "timestamps", "rescue_retransmission", "ecn", "rules"] {
        assert!(tcp.remove(k).is_some(), "{k}");
    }
    assert_eq!(Config::from_json(&v.to_string(), &Registry::new()).unwrap(), cfg);
}

#[test]
fn class_settings_override_the_scenario() {
    let mut v = base();
    v["tcp"] = json!({"mss": 1000, "min_rto": "1s", "delayed_ack": true});
    v["traffic"].as_array_mut().unwrap().push(json!({
        "name": "u", "type": "long_lived", "src": "a", "dst": "c", "protocol": "newreno", "cc": {},
        "tcp": {"mss": 500, "partial_ack_timer": "impatient"}}));
    let cfg = load(&v).unwrap();
    let tcp = |i: usize| match &cfg.classes[i].transport {
        Transport::Window { tcp, cc } => {
            assert_eq!(*cc, CcConfig::NewReno(Default::default()));
            tcp.clone()
        }
        t => panic!("{t:?}"),
    };
    let (t, u) = (tcp(0), tcp(1));
    assert_eq!((t.mss, t.min_rto.0, t.delayed_ack, t.partial_ack_timer), (1000, 1_000_000_000, true, PartialAckTimer::SlowButSteady));
    // The class's own table wins; what it leaves out comes from the scenario's.
    assert_eq!((u.mss, u.min_rto.0, u.delayed_ack, u.partial_ack_timer), (500, 1_000_000_000, true, PartialAckTimer::Impatient));
    // The initial RTO is raised to the minimum RTO (RFC 6298 rule 2.4).
    assert_eq!(u.initial_rto.0, 1_000_000_000);
}

#[test]
fn malformed_settings_name_their_key() {
    let set = |path: &'static str, val: Value| {
        move |v: &mut Value| {
            let mut node = v;
            let keys: Vec<&str> = path.split('.').collect();
            for k in &keys[..keys.len() - 1] {
                node = match k.parse::<usize>() {
                    Ok(i) => &mut node[i],
                    Err(_) => &mut node[*k],
                };
            }
            node[keys[keys.len() - 1]] = val;
        }
    };
    // Durations that would overflow 64-bit nanoseconds, or sum past them.
    refused(set("duration", json!("18446744073s")), "duration: expected a duration of at most 1e9s");
    refused(set("links.0.delay", json!("1e12s")), "links[0].delay: expected a duration of at most 1e9s");
    refused(set("traffic.0.stop", json!("5000000000h")), "traffic[0].stop: expected a duration of at most 1e9s");
    // Retransmission timeouts: the first one above the largest.
    refused(set("tcp", json!({"initial_rto": "3s", "max_rto": "2s"})), "tcp.initial_rto: must be at most max_rto");
    refused(set("tcp", json!({"max_rto": "100ms"})), "tcp.max_rto: must be at least min_rto");
    // Header or MSS values that would wrap a packet's size.
    refused(set("tcp", json!({"mss": 4294967295u64})), "tcp.mss: mss + header is 4294967335 bytes");
    refused(set("tcp", json!({"header": 4294967295u64})), "tcp.header: mss + header is");
    refused(set("tcp", json!({"mss": 4294967296u64})), "tcp.mss: expected a whole number from 0 to 4294967295");
    // A queue that cannot hold one packet.
    refused(set("links.0.queue", json!({"limit": "1000B"})), "traffic[0].route: the queue of link \"l1\" holds less than one packet");
    refused(set("links.0.queue", json!({"limit": "1us"})), "traffic[0].route: the queue of link \"l1\" holds less than one packet");
    refused(set("links.0.queue", json!({"limit": "0pkts"})), "links[0].queue.limit: expected room for at least one packet");
    // Numbers that are not finite, or of the wrong type (JSON from Python sends "nan" for NaN).
    refused(set("traffic.0.load", json!("nan")), "traffic[0].load: expected a finite number, got nan");
    refused(set("traffic.0.size", json!({"dist": "pareto", "mean": "1MB", "shape": "inf"})), "traffic[0].size.shape: expected a finite number, got inf");
    refused(set("traffic.0.load", json!(1e308)), "traffic[0].load: gives an infinite arrival rate");
    refused(set("traffic.0.load", json!(true)), "traffic[0].load: expected a number, got true");
    refused(set("links.0.rate", json!("0.5bps")), "links[0].rate: expected a whole number of bits per second");
    refused(set("seed", json!(-1)), "seed: expected a whole number from 0 to 18446744073709551615, got -1");
    refused(set("record", json!({"arrivals": "l1"})), "record.arrivals: expected a list, got \"l1\"");
    refused(set("nodes", json!("a")), "nodes: expected a list, got \"a\"");
    // Unknown keys, at every depth.
    refused(set("traffic.0.cc", json!({"gain": 1})), "traffic[0].cc.gain: unknown key; newreno takes no keys");
    refused(set("traffic.0.tcp", json!({"msss": 1})), "traffic[0].tcp.msss: unknown key (did you mean `mss`?)");
    // Every built-in window protocol is listed after newreno (the list grows with each controller).
    refused(set("traffic.0.protocol", json!("cubic")), "traffic[0].protocol: unknown protocol \"cubic\"; expected one of: newreno, ");
    refused(set("traffic.0.packet_size", json!(100)), "traffic[0].packet_size: only rate-based protocols take `packet_size`");
    // A class and a link with the same name (the series table names both).
    refused(set("traffic.0.name", json!("l2")), "traffic[0].name: \"l2\" is already a link's name");
}

#[test]
fn routes_never_loop_or_return_to_their_source() {
    let oneway = |route: Value| {
        json!({
            "duration": "1s",
            "links": [
                {"name": "ab", "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "duplex": false},
                {"name": "bc", "from": "b", "to": "c", "rate": "1Mbps", "delay": "1ms", "duplex": false},
                {"name": "ca", "from": "c", "to": "a", "rate": "1Mbps", "delay": "1ms", "duplex": false},
                {"name": "ad", "from": "a", "to": "d", "rate": "1Mbps", "delay": "1ms"},
            ],
            "traffic": [{"name": "t", "type": "long_lived", "route": route}],
        })
    };
    let e = load(&oneway(json!(["ab", "bc", "ca"]))).unwrap_err();
    assert_eq!(e, "traffic[0].route[2]: route comes back to node \"a\", which it already passed: a route may not loop");
    let e = load(&oneway(json!(["ab", "bc", "ca", "ad"]))).unwrap_err();
    assert!(e.starts_with("traffic[0].route[2]: route comes back to node \"a\""), "{e}");
    let e = load(&oneway(json!(["ab", "ab"]))).unwrap_err();
    assert!(e.starts_with("traffic[0].route[1]: route does not connect"), "{e}");
    // Over one-way links the acknowledgments go the shortest way back: c -> a.
    let cfg = load(&oneway(json!(["ab", "bc"]))).unwrap();
    assert_eq!((cfg.classes[0].route.clone(), cfg.classes[0].ack_route.clone()), (vec![0, 1], vec![2]));
}

#[test]
fn toml_type_errors_keep_the_key_path() {
    let text = "duration = \"10s\"\n[[links]]\nfrom=\"a\"\nto=\"b\"\nrate=\"1Mbps\"\ndelay=\"1ms\"\n\
                [[traffic]]\nname=\"x\"\ntype=\"long_lived\"\nsrc=\"a\"\ndst=\"b\"\ncount = \"3\"\n";
    let e = scenario::load_toml(text, Path::new("."), None).unwrap_err().to_string();
    assert_eq!(e, "traffic[0].count: expected a whole number from 0 to 4294967295, got \"3\"");
    let e = scenario::load_toml(&text.replace("count = \"3\"", "count = nan"), Path::new("."), None).unwrap_err().to_string();
    assert_eq!(e, "traffic[0].count: expected a whole number from 0 to 4294967295, got \"nan\"");
    let e = parse_toml("duration = ").unwrap_err().to_string();
    assert!(e.starts_with("invalid TOML"), "{e}");
    let e = parse_json("{\"duration\": NaN}").unwrap_err().to_string();
    assert!(e.starts_with("invalid JSON"), "{e}");
}

#[test]
fn wide_ids_attribute_traffic_past_16_bits() {
    // 70,000 one-way links in a chain; a class on the last one. With 16-bit link ids
    // its packets would be counted on link 70,000 - 65,536 = 4,464.
    let n = 70_000;
    let links: Vec<Value> =
        (0..n).map(|i| json!({"from": format!("n{i}"), "to": format!("n{}", i + 1), "rate": "1Gbps", "delay": "1us", "duplex": false})).collect();
    let mut links = links;
    links.push(json!({"name": "back", "from": format!("n{n}"), "to": format!("n{}", n - 1), "rate": "1Gbps", "delay": "1us", "duplex": false}));
    let v = json!({
        "duration": "10ms", "links": links,
        "traffic": [{"name": "last", "type": "long_lived", "src": format!("n{}", n - 1), "dst": format!("n{n}")}],
        "record": {"interval": "5ms"},
    });
    let cfg = load(&v).unwrap();
    assert_eq!(cfg.classes[0].route, vec![n as u32 - 1]);
    let r = common::run_config(cfg);
    assert!(r.links[n - 1].packets_sent > 100);
    assert_eq!(r.links[n - 1 - 65_536].packets_sent, 0);
    assert_eq!(r.links.iter().map(|l| l.packets_sent).filter(|&p| p > 0).count(), 2); // data and ACK links
    // The series names the class after all 70,001 links.
    assert_eq!(r.series.entity_names.len(), n + 2);
    assert!(r.series.name.iter().any(|&e| e as usize == n + 1));

    // 33,000 classes (past 2^15), one flow each: the last flows belong to the last class.
    let classes: Vec<Value> = (0..33_000).map(|i| json!({"name": format!("c{i}"), "type": "long_lived", "src": "a", "dst": "b"})).collect();
    let v = json!({"duration": "1ms", "links": [{"from": "a", "to": "b", "rate": "1Gbps", "delay": "1us", "queue": {"limit": "100000pkts"}}],
                   "traffic": classes, "record": {"interval": "0s"}});
    let r = common::run_config(load(&v).unwrap());
    assert_eq!(r.flows.class.len(), 33_000);
    assert_eq!(*r.flows.class.last().unwrap(), 32_999);
    assert_eq!(r.num("c32999.flows"), 1.0);
}
