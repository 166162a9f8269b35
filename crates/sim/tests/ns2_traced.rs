//! The ns-2 variants (TCP-LP, Vegas, TFRC `variant = "ns2"`) in a trace: they
//! report their own state, and tracing them changes nothing in the run.
mod common;

use cclab_sim::metrics::RunResult;
use serde_json::{json, Value};

/// A 10 Mb/s, 20 ms link with a 50-packet buffer: one flow of each ns-2 variant
/// and a NewReno flow, 10 s.
fn scenario(trace: bool) -> Value {
    let mut doc = json!({
        "duration": "10s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "20ms", "queue": {"limit": "50pkts"}}],
        "traffic": [
            {"name": "lp", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tcp_lp",
             "cc": {"variant": "ns2"}, "tcp": {"timestamps": true, "option_sizes": "ns2"}},
            {"name": "vegas", "type": "long_lived", "src": "a", "dst": "b", "protocol": "vegas", "cc": {"variant": "ns2"}},
            {"name": "tfrc", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tfrc", "cc": {"variant": "ns2"}},
            {"name": "reno", "type": "long_lived", "src": "a", "dst": "b", "start": "3s"},
        ],
        "record": {"interval": "1s"},
    });
    if trace {
        doc["trace"] = json!({"flows": [{}]});
    }
    doc
}

fn tables(r: &RunResult) -> String {
    format!("{:?}\n{:?}\n{:?}", r.flows, r.links, r.series)
}

#[test]
fn the_ns2_variants_report_their_state_and_tracing_changes_nothing() {
    let traced = common::run(&scenario(true));
    assert_eq!(tables(&traced), tables(&common::run(&scenario(false))));
    let f = &traced.traces.flows;
    let names = &f.names;
    // Each name is reported, by the flow of its protocol only (flows 0, 1, 2 by class).
    for (v, flow) in [
        ("tcp_lp.remote_hz", 0),
        ("tcp_lp.smoothed_owd_ticks", 0),
        ("tcp_lp.threshold_ticks", 0),
        ("vegas.base_rtt_s", 1),
        ("vegas.increment_packets", 1),
        ("tfrc.x_bps", 2),
        ("tfrc.p", 2),
        ("tfrc.x_recv_bps", 2),
    ] {
        let code = names.iter().position(|n| n == v).unwrap_or_else(|| panic!("{v} in {names:?}")) as u16;
        let rows: Vec<usize> = (0..f.time.len()).filter(|&i| f.variable[i] == code).collect();
        assert!(!rows.is_empty(), "{v}");
        assert!(rows.iter().all(|&i| f.entity[i] == flow), "{v}: flows other than {flow}");
    }
    // Vegas's BaseRTT starts at the first ACK's time since the first send (the
    // path's 40 ms and two packets' transmissions: SYN-less, 1040 + 40 bytes);
    // ns-2 takes the round's time as BaseRTT whenever at most one packet was sent
    // in the round, so it may later be shorter than the path.
    let code = names.iter().position(|n| n == "vegas.base_rtt_s").unwrap() as u16;
    let base: Vec<f64> = (0..f.time.len()).filter(|&i| f.variable[i] == code).map(|i| f.value[i]).collect();
    assert!((0.040..0.060).contains(&base[0]), "{base:?}");
    assert!(base.iter().all(|&b| b > 0.0), "{base:?}");
}
