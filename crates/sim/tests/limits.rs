//! What a run will need, estimated before it starts (issue 12): the inputs that
//! used to run for days or be killed for lack of memory are refused at once with
//! the key at fault and the estimate; the estimate bounds what runs really do.
mod common;
use cclab_sim::config::estimate::{Limits, MAX_FLOWS, NOMINAL_EVENTS_PER_S};
use cclab_sim::config::Config;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

fn base() -> Value {
    json!({
        "duration": "10s",
        "links": [{"name": "l1", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"}],
        "traffic": [{"name": "t", "type": "poisson", "src": "a", "dst": "b", "load": 0.5,
                     "size": {"dist": "exponential", "mean": "1MB"}}],
    })
}

fn load(v: &Value) -> Result<Config, String> {
    build(v, Path::new("."), None, &Registry::new()).map(|c| c.0).map_err(|e| e.to_string())
}

/// `base()` with `f` applied must be refused, fast, with an error starting with `want`.
fn refused(f: impl FnOnce(&mut Value), want: &str) -> String {
    let mut v = base();
    f(&mut v);
    let t0 = Instant::now();
    let e = load(&v).expect_err("accepted");
    assert!(t0.elapsed().as_secs_f64() < 0.5, "refusing took {:?}", t0.elapsed());
    assert!(e.starts_with(want), "got {e:?}, expected {want:?}");
    e
}

#[test]
fn the_issue_cases_are_refused_before_any_work() {
    // A record interval of 1 ns over 1000 s: 10^12 samples.
    let e = refused(
        |v| {
            v["duration"] = json!("1000s");
            v["record"] = json!({"interval": "1ns"});
        },
        "record.interval: the run would take about 1.00e12 events",
    );
    assert!(e.ends_with("limits.wall_time is 1.0 h (raise it to run this anyway)"), "{e}");
    // A CBR count of 4294967295: every flow's record would need terabytes.
    let e = refused(
        |v| v["traffic"] = json!([{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1kbps", "count": 4294967295u64}]),
        "traffic[0].count: about 4.29e9 flows would arrive: the run would need about ",
    );
    assert!(e.contains(" TB of memory; limits.memory is 4.0 GB"), "{e}");
    // A mean flow size of 0.001 B at load 0.5 of 10 Mbps: 6.25e8 flows a second.
    refused(
        |v| v["traffic"][0]["size"]["mean"] = json!("0.001B"),
        "traffic[0].size: about 6.25e9 flows would arrive; a run holds at most 4294967295 flows (flow ids are 32-bit)",
    );
    // The same given as an arrival rate blames the arrival rate.
    refused(
        |v| {
            v["traffic"][0].as_object_mut().unwrap().remove("load");
            v["traffic"][0]["arrival_rate"] = json!(1e9);
        },
        "traffic[0].arrival_rate: about 1.00e10 flows",
    );
    // A duration of 1e8 s.
    let e = refused(|v| v["duration"] = json!("1e8s"), "duration: the run would take about ");
    assert!(e.contains("4.8 h of wall time at 1.00e7 events per second"), "{e}");
    // 20 Mbps of CBR into 10 Mbps behind an endless buffer: 8.3e7 packets queued after 1e5 s.
    let e = refused(
        |v| {
            v["duration"] = json!("1e5s");
            // A duplex link first: configuration link 2 is the scenario's links[1].
            v["links"].as_array_mut().unwrap().insert(0, json!({"name": "x", "from": "c", "to": "d", "rate": "1Mbps", "delay": "1ms"}));
            v["links"][1]["queue"] = json!({"limit": "1000000000000000000pkts"});
            v["traffic"] = json!([{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "20Mbps"}]);
            v["record"] = json!({"interval": "0s"});
        },
        "links[1].queue.limit: an overloaded link would queue what it cannot carry: the run would need about 5.3 GB of memory",
    );
    assert!(e.ends_with("limits.memory is 4.0 GB (raise it to run this anyway)"), "{e}");
    // The arrivals table of a long run.
    refused(
        |v| {
            v["duration"] = json!("5000s");
            v["links"][0]["rate"] = json!("10Gbps");
            v["record"] = json!({"arrivals": ["l1"], "interval": "0s"});
            v["limits"] = json!({"wall_time": "100h"});
        },
        "record.arrivals[0]: the arrivals table would hold about ",
    );
}

#[test]
fn limits_are_read_checked_and_round_trip() {
    // Raised limits let the CBR case validate (it is not run here).
    let mut v = base();
    v["traffic"] = json!([{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1kbps", "count": 4294967295u64}]);
    v["limits"] = json!({"memory": "10000TB"});
    let cfg = load(&v).unwrap();
    assert_eq!(cfg.limits, Limits { memory_bytes: 10_000_000_000_000_000, ..Limits::default() });
    let json = cfg.to_json();
    assert!(json.contains("\"limits\":{\"memory_bytes\":10000000000000000,\"wall_time_ns\":3600000000000}"), "{json}");
    assert_eq!(Config::from_json(&json, &Registry::new()).unwrap(), cfg);
    // Default limits are absent from the canonical form (existing configurations keep their bytes).
    assert!(!load(&base()).unwrap().to_json().contains("limits"));
    // Bad values name their key.
    for (limits, want) in [
        (json!({"memory": "lots"}), "limits.memory: expected a size like \"3MB\", got \"lots\""),
        (json!({"memory": "0B"}), "limits.memory: expected at least 1 byte"),
        (json!({"wall_time": "0s"}), "limits.wall_time: expected a positive duration"),
        (json!({"walltime": "1h"}), "limits.walltime: unknown key (did you mean `wall_time`?); the limits table takes: memory, wall_time"),
    ] {
        refused(|v| v["limits"] = limits, want);
    }
    // A canonical configuration is checked against its own limits, with its keys.
    let mut c: Value = serde_json::from_str(&load(&base()).unwrap().to_json()).unwrap();
    c["record"]["interval_ns"] = json!(1);
    let e = Config::from_json(&c.to_string(), &Registry::new()).unwrap_err().to_string();
    assert!(e.starts_with("record.interval_ns: the series table would hold about 6.00e10 rows: the run would need about 2.7 TB"), "{e}");
    c["limits"] = json!({"memory_bytes": 0, "wall_time_ns": 1});
    let e = Config::from_json(&c.to_string(), &Registry::new()).unwrap_err().to_string();
    assert_eq!(e, "limits.memory_bytes: expected at least 1 byte");
}

#[test]
fn counters_that_would_overflow_the_tables_are_refused_whatever_the_limits() {
    // 10^15 bit/s for 10^9 s is 1.25e23 bytes: more than bytes_sent (int64) holds.
    refused(
        |v| {
            v["duration"] = json!("1e9s");
            v["links"][0]["rate"] = json!("1000Tbps");
            v["traffic"] = json!([{"name": "c", "type": "long_lived", "src": "a", "dst": "b"}]);
            v["record"] = json!({"interval": "0s"});
            v["limits"] = json!({"wall_time": "1e9s", "memory": "1000000TB"});
        },
        "duration: a link could send 1.25e23 bytes, more than the links table's 64-bit byte counters hold (9223372036854775807)",
    );
    assert_eq!(MAX_FLOWS, 4294967295.0);
    // A canonical configuration with a queue limit the links table's Int64 column cannot hold.
    let mut c: Value = serde_json::from_str(&load(&base()).unwrap().to_json()).unwrap();
    c["links"][0]["queue"]["limit_packets"] = json!(u64::MAX);
    let e = Config::from_json(&c.to_string(), &Registry::new()).unwrap_err().to_string();
    assert_eq!(e, "links[0].queue: a queue limit may be at most 10^18 packets or bytes");
}

/// The estimate bounds the events and packets of real runs, within a small factor.
#[test]
fn the_estimate_bounds_real_runs() {
    let reference = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/background/single-link.toml"))
        .unwrap()
        .replace("duration = \"2000s\"", "duration = \"300s\"");
    let reference = cclab_sim::scenario::parse_toml(&reference).unwrap();
    let cbr = json!({
        "duration": "20s", "warmup": "2s",
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms"}],
        "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "2Mbps", "count": 4}],
    });
    let chain = json!({
        "duration": "30s",
        "links": [
            {"name": "l1", "from": "a", "to": "r1", "rate": "20Mbps", "delay": "5ms"},
            {"name": "l2", "from": "r1", "to": "r2", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "50pkts"}},
            {"name": "l3", "from": "r2", "to": "b", "rate": "20Mbps", "delay": "5ms"},
        ],
        "traffic": [
            {"name": "through", "type": "poisson", "src": "a", "dst": "b", "load": 0.3, "load_link": "l2",
             "size": {"dist": "pareto", "mean": "500KB", "shape": 1.5}},
            {"name": "bulk", "type": "long_lived", "route": ["l1", "l2", "l3"], "count": 2},
        ],
        "tcp": {"delayed_ack": true},
    });
    // Classes sharing a link share its capacity (they are not each given all of it).
    let shared = |n: usize, rate: &str, duration: &str| {
        let classes: Vec<Value> = (0..n).map(|i| json!({"name": format!("c{i}"), "type": "long_lived", "src": "a", "dst": "b"})).collect();
        json!({"duration": duration, "links": [{"name": "bn", "from": "a", "to": "b", "rate": rate, "delay": "5ms"}], "traffic": classes})
    };
    let big = load(&shared(1000, "10Gbps", "100s")).expect("1,000 classes on 10 Gbps for 100 s are within the default limits");
    let e = big.estimate();
    // 10 Gbps for 100 s is 8.3e7 packets of 1500 bytes, and as many ACKs.
    assert!(e.packets <= 2.0 * 1e10 * 100.0 / 12000.0 + 1.0, "{}", e.packets);
    let mut seen = Vec::new();
    for (name, v) in [("reference", reference), ("cbr", cbr), ("chain", chain), ("shared", shared(100, "10Mbps", "20s"))] {
        let cfg = load(&v).unwrap();
        let e = cfg.estimate();
        let r = common::run_config(cfg);
        // Packets delivered (drops, and packets left in the queues at the end, are not
        // bounded by the links' capacity over the run).
        let (events, sent) = (r.num("events"), r.num("whole_run_packets_delivered"));
        seen.push(format!("{name}: events {events} estimated {:.0} ({:.2}x); packets {sent} estimated {:.0}", e.events, e.events / events, e.packets));
        assert!(e.events >= events && e.events <= 4.0 * events, "{}", seen.last().unwrap());
        assert!(e.packets >= sent, "{}", seen.last().unwrap());
        assert!((e.wall_time_s - e.events / NOMINAL_EVENTS_PER_S).abs() < 1e-9);
        let n = r.flows.len() as f64;
        assert!((e.flows - n).abs() <= 6.0 * e.flows.sqrt() + 1.0, "{name}: flows {n} estimated {}", e.flows);
    }
    println!("{}", seen.join("\n"));
}
