//! `preset = "ns2"` as a scenario sets it: scenario-wide and per class, explicit
//! keys over it, its errors, and one flow timed against ns-2.35 itself.
mod common;

use cclab_sim::transport::tcp::{LossRecovery, Preset, TcpParams};
use cclab_sim::transport::Transport;
use common::{config, run};
use serde_json::{json, Value};

fn link() -> Value {
    json!({"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms", "queue": {"type": "droptail", "limit": "100pkts"}})
}

fn scenario(tcp: Value, classes: Vec<Value>) -> Value {
    json!({"name": "ns2", "duration": "20s", "tcp": tcp, "links": [link()], "traffic": classes, "record": {"interval": "0s"}})
}

fn poisson(name: &str, tcp: Option<Value>) -> Value {
    let mut c = json!({"name": name, "type": "poisson", "src": "a", "dst": "b", "arrival_rate": 0.5, "size": {"dist": "constant", "value": "100KB"}});
    if let Some(t) = tcp {
        c["tcp"] = t;
    }
    c
}

fn tcp_of(doc: &Value, class: usize) -> TcpParams {
    match &config(doc).classes[class].transport {
        Transport::Window { tcp, .. } => tcp.clone(),
        other => panic!("a window transport, got {other:?}"),
    }
}

fn error_of(doc: &Value) -> String {
    cclab_sim::scenario::build(doc, std::path::Path::new("."), None, &cclab_sim::transport::cc::Registry::new()).unwrap_err().to_string()
}

#[test]
fn one_flow_of_2500_bytes_ends_when_ns2_ends_it() {
    // ns-2.35 (Agent/TCP/Newreno, TCPSink, `$ftp send 2500` on a 10 Mb, 25 ms
    // duplex link) receives the SYN at 25.032 ms and packets 1-3 (1040 bytes each:
    // ceil(2500 / 1000) full packets) at 75.896, 76.728 and 126.76 ms: windowInit_ 2
    // after the SYN's ACK at 50.064 ms, the third packet on the first data ACK
    // (100.928 ms) in slow start.
    let dir = std::env::temp_dir().join(format!("cclab-ns2-tcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("one.csv"), "start,size,class\n0,2500,one\n").unwrap();
    let doc = scenario(json!({"preset": "ns2"}), vec![json!({"name": "one", "type": "flow_list", "src": "a", "dst": "b", "file": "one.csv"})]);
    let (cfg, _) = cclab_sim::scenario::build(&doc, &dir, None, &cclab_sim::transport::cc::Registry::new()).unwrap();
    let r = common::run_config(cfg);
    let f = &r.flows;
    assert_eq!((f.len(), f.bytes_delivered[0], f.retransmissions[0]), (1, 2500, 0));
    assert!((f.completion_time[0] - 0.12676).abs() < 1e-9, "{}", f.completion_time[0]);
    // SYN, SYN-ACK, three packets and their three ACKs.
    assert_eq!(r.num("whole_run_packets_sent"), 8.0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_preset_scenario_wide_and_per_class_with_explicit_keys_over_it() {
    let doc = scenario(json!({}), vec![poisson("ns2", Some(json!({"preset": "ns2"}))), poisson("rfc", None)]);
    assert_eq!(tcp_of(&doc, 0), Preset::Ns2.params());
    assert_eq!(tcp_of(&doc, 1), TcpParams::default());
    // Sack1 with a 40-segment window: the first ssthresh follows the receive window.
    let doc = scenario(json!({"preset": "ns2", "sack": true, "receive_window": "40KB"}), vec![poisson("s", None)]);
    let p = tcp_of(&doc, 0);
    assert_eq!((p.sack, p.rules.loss_recovery, p.initial_ssthresh(), p.max_sack_blocks()), (true, LossRecovery::Ns2, 40_000, 3));
    // Any rule back to the RFCs' on its own.
    let doc = scenario(json!({"preset": "ns2", "rtt_estimator": "rfc6298", "loss_recovery": "rfc"}), vec![poisson("s", None)]);
    let p = tcp_of(&doc, 0);
    assert_eq!((p.rules.loss_recovery, p.initial_rto.as_secs_f64()), (LossRecovery::Rfc, 3.0));
    let r = run(&doc);
    assert!(r.num("flows_finished") > 5.0);
}

#[test]
fn rule_keys_are_checked_and_errors_name_them() {
    let bad = |tcp: Value| error_of(&scenario(tcp, vec![poisson("s", None)]));
    assert_eq!(bad(json!({"loss_recovery": "bsd"})), "tcp.loss_recovery: expected \"rfc\" or \"ns2\", got \"bsd\"");
    assert!(bad(json!({"preset": "ns2", "ecn": true})).starts_with("tcp.ecn: ns-2's ECN response is not modelled"));
    assert!(bad(json!({"preset": "ns2", "byte_counting": 2})).starts_with("tcp.byte_counting: byte counting needs window_arithmetic = \"bytes\""));
    assert!(bad(json!({"preset": "ns2", "sack": true, "recovery": "prr"})).starts_with("tcp.recovery: \"prr\" has no meaning"));
    assert!(bad(json!({"initial_ssthresh": "lots"})).starts_with("tcp.initial_ssthresh: expected a size like \"20KB\", \"receive_window\" or \"none\""));
    assert!(bad(json!({"sack_blocks": 5})).starts_with("tcp.sack_blocks: expected 1 to 4 blocks"));
    assert!(bad(json!({"clock_tick": "0s"})).starts_with("tcp.clock_tick: expected a tick from 1ns to 1s"));
    assert!(bad(json!({"preset": "ns4"})).starts_with("tcp.preset: unknown preset \"ns4\"; expected \"ns3\", \"linux\" or \"ns2\""));
    assert!(error_of(&scenario(json!({}), vec![poisson("s", Some(json!({"window_arithmetic": "floats"})))]))
        .starts_with("traffic[0].tcp.window_arithmetic: expected \"bytes\" or \"ns2\""));
}
