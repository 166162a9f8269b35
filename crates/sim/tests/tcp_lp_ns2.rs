//! TCP-LP as ns-2.35 ran it (`cc = { variant = "ns2" }`) and the two pieces of
//! ns-2's Agent/TCP/Linux it needs from the machinery (`tcp.syn_segment`,
//! `tcp.option_sizes = "ns2"`), in whole runs; the last test against ns-2.35
//! itself.
mod common;

use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

/// One 10 Mb/s link, `delay` one way, a DropTail buffer of 100 packets, and one class.
fn scenario(duration: &str, delay: &str, class: Value) -> Value {
    json!({
        "duration": duration,
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": delay, "queue": {"limit": "100pkts"}}],
        "traffic": [class],
        "record": {"interval": "0s"},
    })
}

/// The folder of the one-flow list (a 10,000-byte flow at t = 0), written once per test process.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cclab-tcp-lp-ns2-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("one.csv"), "start,size,class\n0,10000,f\n").unwrap();
        dir
    })
}

/// Run a scenario whose flow list is in `dir()`, checking packet conservation.
fn run(s: Value) -> RunResult {
    let (cfg, _) = build(&s, dir(), None, &Registry::new()).unwrap();
    common::run_config(cfg)
}

/// One flow of 10 segments at t = 0.
fn one_flow(tcp: Value) -> Value {
    json!({"name": "f", "type": "flow_list", "src": "a", "dst": "b", "protocol": "newreno", "file": "one.csv", "tcp": tcp})
}

/// ns-2's Agent/TCP/Linux settings: packetSize_ 1000, windowInit_ 2, the SYN in
/// the initial window, ns-2's option sizes, rtxcur_init_ 3 s, maxrto_ 120 s, and
/// no fast retransmit (a TCPSink sends no SACK, and without SACK blocks the agent's
/// scoreboard never marks a loss).
fn linux_agent(timestamps: bool) -> Value {
    json!({"mss": 1000, "header": 40, "initial_window": 2, "syn_segment": true, "option_sizes": "ns2",
           "timestamps": timestamps, "initial_rto": "3s", "max_rto": "120s", "dupack_threshold": 1_000_000})
}

#[test]
fn the_syn_segment_is_a_header_in_the_initial_window() {
    // A 10-segment flow: the SYN (40 bytes) and segment 1 leave at once (window
    // 2); the SYN's ACK is an ACK of one segment. 11 packets go out, 10 × 1040
    // bytes + 40; 11 ACKs of 40 bytes come back; the flow delivers its 10,000 bytes.
    let flow = one_flow;
    let r = run(scenario("10s", "50ms", flow(json!({"mss": 1000, "initial_window": 2, "syn_segment": true}))));
    assert_eq!((r.links[0].packets_sent, r.links[0].bytes_sent), (11, 10 * 1040 + 40));
    assert_eq!((r.links[1].packets_sent, r.links[1].bytes_sent), (11, 11 * 40));
    assert_eq!(r.flows.bytes_delivered[0], 10_000);
    assert!(r.flows.finished[0]);
    // Slow start counts the SYN's ACK: windows 2, 3 (+1), ... carry the SYN and
    // 1 segment, then 2 + 2, then the other 5: 3 round trips of ~100 ms, as
    // without the SYN (2, 4, 4).
    let with = r.flows.completion_time[0];
    let r = run(scenario("10s", "50ms", flow(json!({"mss": 1000, "initial_window": 2}))));
    assert_eq!(r.links[0].packets_sent, 10);
    assert!((with - r.flows.completion_time[0]).abs() < 0.01, "{with} against {}", r.flows.completion_time[0]);
    // It cannot be combined with a handshake.
    let s = scenario("10s", "50ms", flow(json!({"syn_segment": true, "handshake": true})));
    let e = build(&s, dir(), None, &Registry::new()).unwrap_err().to_string();
    assert!(e.contains("syn_segment: is a SYN sent with the data"), "{e}");
}

#[test]
fn ns2_option_sizes_put_ten_bytes_on_data_and_none_on_acks() {
    let flow = |sizes: &str| {
        let mut tcp = linux_agent(true);
        tcp["option_sizes"] = json!(sizes);
        one_flow(tcp)
    };
    // ns-2: data 1000 + 40 + 10, the SYN and ACKs 40 bytes.
    let r = run(scenario("10s", "50ms", flow("ns2")));
    assert_eq!((r.links[0].bytes_sent, r.links[1].bytes_sent), (10 * 1050 + 40, 11 * 40));
    // RFC 7323: 12 bytes on every segment.
    let r = run(scenario("10s", "50ms", flow("rfc7323")));
    assert_eq!((r.links[0].bytes_sent, r.links[1].bytes_sent), (10 * 1052 + 52, 11 * 52));
}

fn lp(timestamps: bool) -> Value {
    json!({"name": "lp", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tcp_lp", "count": 1,
           "cc": {"variant": "ns2"}, "tcp": linux_agent(timestamps)})
}

/// ns-2.35's packets acknowledged (`$tcp set ack_`) after 300 s of one
/// Agent/TCP/Linux flow with `select_ca lp`, `timestamps_ true`, `window_ 10000`,
/// to a TCPSink, on a 10 Mb/s link of the delay given and a DropTail queue of 100
/// packets (hand-written Tcl, `git show 971749a:bench/ns2/modules.py`, `lp_tcl`;
/// `bench/validate_ns2.py --only tcp_lp` runs the same case through the harness).
const NS2_ALONE: [(&str, u64); 4] = [("49.99ms", 28_385), ("50ms", 28_400), ("50.01ms", 29_745), ("50.1ms", 37_795)];

#[test]
fn alone_with_timestamps_it_delivers_what_ns2_delivers() {
    for (delay, ns2) in NS2_ALONE {
        let r = run(scenario("300s", delay, lp(true)));
        let got = r.flows.bytes_delivered[0] / 1000;
        // The few segments whose ACKs are still on their way at the end aside,
        // the same count: the same indications, at the same times.
        assert!(got.abs_diff(ns2) <= ns2 / 500, "{delay}: {got} segments against ns-2's {ns2}");
        assert_eq!(r.flows.retransmissions[0], 0);
    }
}

#[test]
fn without_timestamps_it_fills_the_link_as_reno() {
    // No delay sample ever: the agent's Reno, limited only by the buffer; ns-2.35
    // delivers 9.36 Mb/s (200 s, 50 ms, TCPSink).
    let r = run(scenario("200s", "50ms", lp(false)));
    let mbps = r.flows.bytes_delivered[0] as f64 * 8.0 / 200.0 / 1e6;
    assert!(mbps > 8.5, "{mbps} Mb/s");
}

#[test]
fn with_the_syn_segment_every_finished_flow_delivers_exactly_its_bytes_under_heavy_loss() {
    // Poisson flows (Pareto sizes, mean 100 kB, load 0.6) and two long flows of TCP-LP
    // into a 15 kB buffer: the SYN is lost and resent as any segment, with or without
    // SACK; the flows table counts the flow's bytes only, and every packet is
    // accounted for.
    for sack in [false, true] {
        let tcp = json!({"mss": 1000, "initial_window": 2, "syn_segment": true, "timestamps": true, "option_sizes": "ns2",
                         "sack": sack, "rescue_retransmission": false});
        let doc = json!({
            "duration": "40s", "seed": 3, "tcp": tcp,
            "links": [{"name": "l", "from": "a", "to": "b", "rate": "5Mbps", "delay": "20ms", "queue": {"limit": "15KB"}}],
            "traffic": [
                {"name": "web", "type": "poisson", "src": "a", "dst": "b", "protocol": "tcp_lp", "cc": {"variant": "ns2"},
                 "load": 0.6, "size": {"dist": "pareto", "shape": 1.5, "mean": "100KB"}},
                {"name": "long", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tcp_lp", "cc": {"variant": "ns2"}, "count": 2},
            ],
            "record": {"interval": "0s"},
        });
        let r = run(doc);
        let f = &r.flows;
        let finished = (0..f.len()).filter(|&i| f.finished[i]).count();
        for i in (0..f.len()).filter(|&i| f.finished[i]) {
            assert_eq!(f.bytes_delivered[i] as f64, f.size[i], "sack {sack}: flow {i}");
        }
        assert!(finished > 50, "sack {sack}: {finished} flows finished");
        // Every packet is accounted for (common::run_config checks it).
        assert!(r.num("whole_run_packets_dropped") > 100.0, "sack {sack}: the test needs losses");
    }
}
