//! TCP Vegas in whole simulations: the queue a flow keeps alone, how two flows
//! share, and its parameters read from a scenario.
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

/// One link a → b (`rate` in Mbit/s, one-way `delay_ms`), a queue that never fills,
/// and `traffic`.
fn scenario(rate_mbps: f64, delay_ms: f64, duration_s: u32, warmup_s: u32, traffic: Value) -> Value {
    json!({
        "duration": format!("{duration_s}s"), "warmup": format!("{warmup_s}s"),
        "links": [{"from": "a", "to": "b", "rate": format!("{rate_mbps}Mbps"), "delay": format!("{delay_ms}ms"),
                   "queue": {"limit": "1000pkts"}}],
        "traffic": traffic,
        "record": {"interval": "0s"},
    })
}

/// The mean queue (packets waiting) one Vegas flow settles at, from the paper's
/// arithmetic. With the link saturated and W packets in flight, every packet's RTT
/// is W·tx (tx: a packet's transmission time), so diff = W·(W·tx − base)/(W·tx) =
/// W − base/tx, which is also the number of packets waiting (Little's law). After
/// the slow-start overshoot the window comes down one packet per RTT while diff >
/// beta; the RTT of a round is that of the previous, one packet larger, window, so
/// it stops at the first W with W·((W+1)·tx − base)/((W+1)·tx) ≤ beta, and holds
/// there if W − base/tx ≥ alpha.
fn settled_queue(rate_mbps: f64, delay_ms: f64, alpha: f64, beta: f64) -> f64 {
    let tx = 1500.0 * 8.0 / (rate_mbps * 1e6);
    // Base RTT: both propagation delays, the data packet's and the 40-byte ACK's transmission.
    let base = 2.0 * delay_ms / 1e3 + tx + 40.0 * 8.0 / (rate_mbps * 1e6);
    let mut w = (base / tx).ceil() + 100.0; // well above: the overshoot
    while w * ((w + 1.0) * tx - base) / ((w + 1.0) * tx) > beta {
        w -= 1.0;
    }
    let queue = w - base / tx;
    assert!(queue >= alpha, "the descent would end below alpha: the flow would grow again");
    queue
}

#[test]
fn alone_it_keeps_between_alpha_and_beta_packets_queued() {
    // (rate, delay, alpha, beta, the queue the arithmetic above predicts)
    let cases = [
        (10.0, 25.0, 2.0, 4.0, 2.307), // base 51.232 ms = 42.69 packet times; settles at W = 45
        (10.0, 25.0, 1.0, 3.0, 1.307), // W = 44
        (10.0, 25.0, 4.0, 8.0, 6.307), // W = 49
        (1.0, 50.0, 2.0, 4.0, 2.640),  // base 112.32 ms = 9.36 packet times; W = 12
    ];
    for (rate, delay, alpha, beta, expect) in cases {
        let predicted = settled_queue(rate, delay, alpha, beta);
        assert!((predicted - expect).abs() < 5e-4, "{predicted}");
        // The slow-start overshoot (a peak of 247 packets at 10 Mbps, about 120 when slow start
        // ends) drains at one packet per RTT within 16 s: measure from 30 s.
        let cc = json!({"alpha": alpha, "beta": beta});
        let r = run(&scenario(rate, delay, 60, 30, json!([{"name": "v", "type": "long_lived", "src": "a", "dst": "b",
            "protocol": "vegas", "cc": cc}])));
        let l = &r.links[0];
        let what = format!("{rate} Mbps, {delay} ms, alpha {alpha}, beta {beta}");
        assert!(l.mean_queue_packets >= alpha && l.mean_queue_packets <= beta, "{what}: mean queue {}", l.mean_queue_packets);
        assert!((l.mean_queue_packets - predicted).abs() < 0.01, "{what}: mean queue {}, predicted {predicted}", l.mean_queue_packets);
        // A few packets queued are enough to keep the link busy; nothing is lost.
        assert!(l.utilization > 0.9999, "{what}: utilization {}", l.utilization);
        assert_eq!((l.drops, r.flows.retransmissions[0]), (0, 0), "{what}");
    }
}

/// Two Vegas flows, the second starting `offset_s` after the first; their
/// throughputs and the mean queue, over 60-150 s.
fn two_flows(cc: Value, offset_s: f64) -> (f64, f64, f64) {
    let flow = |name: &str, start: f64| {
        json!({"name": name, "type": "long_lived", "src": "a", "dst": "b", "protocol": "vegas", "cc": cc, "start": format!("{start}s")})
    };
    let r = run(&scenario(10.0, 25.0, 150, 60, json!([flow("v0", 0.0), flow("v1", offset_s)])));
    assert_eq!(r.links[0].drops, 0);
    (r.num("v0.throughput_bps"), r.num("v1.throughput_bps"), r.links[0].mean_queue_packets)
}

#[test]
fn two_flows_share_as_their_thresholds_allow() {
    // Both flows measure the true base RTT when each starts on an empty queue: the second
    // starts one base RTT after the first, between the first's initial burst and its second.
    // In equilibrium flow i keeps diff_i = x_i·q packets queued (x_i its rate, q the queueing
    // delay), with diff_i in [alpha, beta] (Low, Peterson and Wang, "Understanding Vegas",
    // 2002). With alpha = beta the equilibrium is unique and the rates equal: measured 1.000.
    let (x0, x1, _) = two_flows(json!({"alpha": 3, "beta": 3}), 0.05);
    assert!((x1 / x0 - 1.0).abs() < 0.05, "alpha = beta = 3: {x0} vs {x1}");
    assert!((x0 + x1) / 10e6 > 0.97);
    // With alpha < beta any split with both diffs in [alpha, beta] is an equilibrium: the
    // ratio lies in [alpha/beta, beta/alpha] = [0.5, 2] (measured 1.53, where the flows'
    // slow starts left them) and the total queue in [2·alpha, 2·beta] (measured 5.31).
    let (x0, x1, queue) = two_flows(json!({}), 0.05);
    assert!(x1 / x0 >= 0.5 && x1 / x0 <= 2.0, "defaults: {x0} vs {x1}");
    assert!((4.0..=8.0).contains(&queue), "defaults: mean queue {queue}");
    // A flow that starts on a standing queue takes it for propagation delay (its base RTT is
    // too large by the queue's delay e) and keeps more in the network (x1·(q − e) = alpha):
    // started at 40 s into the first flow's queue (3.32 packets alone, e ≈ 4 ms), the arithmetic
    // (3/q + 3/(q − e) = 833 packets/s) gives a ratio of about 1.7; measured 1.87.
    let (x0, x1, _) = two_flows(json!({"alpha": 3, "beta": 3}), 40.0);
    assert!(x1 / x0 > 1.4 && x1 / x0 < 2.2, "late start: {x0} vs {x1}");
}

#[test]
fn its_parameters_come_from_the_scenario_and_the_canonical_form() {
    let traffic = |cc: Value| json!([{"name": "v", "type": "long_lived", "src": "a", "dst": "b", "protocol": "vegas", "cc": cc}]);
    let reg = Registry::new();
    let (cfg, _) = build(&scenario(10.0, 25.0, 1, 0, traffic(json!({"alpha": 1, "beta": 3.5}))), Path::new("."), None, &reg).unwrap();
    let text = cfg.to_json();
    assert!(text.contains(r#""cc":{"protocol":"vegas","params":{"alpha":1.0,"beta":3.5,"gamma":1.0}}"#), "{text}");
    assert_eq!(Config::from_json(&text, &reg).unwrap(), cfg);
    // A canonical form edited out of range is refused when read back.
    let bad = text.replace(r#""beta":3.5"#, r#""beta":0.5"#);
    let e = Config::from_json(&bad, &reg).unwrap_err().to_string();
    assert!(e.contains("beta: expected a number of packets at least alpha (1), got 0.5"), "{e}");
    let refused = |cc: Value| build(&scenario(10.0, 25.0, 1, 0, traffic(cc)), Path::new("."), None, &reg).unwrap_err().to_string();
    assert_eq!(refused(json!({"alpha": -1})), "traffic[0].cc.alpha: expected a positive number of packets, got -1");
    assert_eq!(refused(json!({"gamma": "x"})), "traffic[0].cc.gamma: expected a number, got \"x\"");
    assert_eq!(refused(json!({"delta": 1})), "traffic[0].cc.delta: unknown key (did you mean `beta`?); the vegas controller takes: variant, alpha, beta, gamma");
}

/// Long-lived ns-2 Vegas flows (`variant = "ns2"`) sharing a 10 Mb/s, 10 ms link
/// with ns-2's queue-limit 100 (99 packets waiting), flow i starting at `starts[i]` over an access
/// link of 100 Mb/s and `delays[i]` ms; the packets each delivers in 200 s. ns-2's
/// Agent/TCP/Vegas sends `packetSize_` bytes with no header (its `output()` adds
/// none): `mss = 1000`, `header = 0`; one packet until the first is acknowledged
/// (`delay_growth_`), no SYN.
fn ns2_vegas(starts: &[f64], delays: &[f64]) -> Vec<u64> {
    let mut links = vec![json!({"name": "bn", "from": "r", "to": "d", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "99pkts"}})];
    let mut traffic = vec![];
    for (i, (start, delay)) in starts.iter().zip(delays).enumerate() {
        links.push(json!({"name": format!("a{i}"), "from": format!("s{i}"), "to": "r", "rate": "100Mbps", "delay": format!("{delay}ms"),
                          "queue": {"limit": "1000pkts"}}));
        traffic.push(json!({"name": format!("v{i}"), "type": "long_lived", "src": format!("s{i}"), "dst": "d", "protocol": "vegas",
                            "cc": {"variant": "ns2"}, "start": format!("{start}s")}));
    }
    let doc = json!({"duration": "200s", "tcp": {"mss": 1000, "header": 0, "initial_window": 1, "initial_rto": "3s"},
                     "links": links, "traffic": traffic, "record": {"interval": "0s"}});
    let r = run(&doc);
    assert_eq!(r.flows.retransmissions.iter().sum::<u32>(), 0);
    r.flows.bytes_delivered.iter().map(|b| b / 1000).collect()
}

#[test]
fn ns2_variant_shares_as_ns2s_vegas() {
    // ns-2.35 (`$tcp set ack_` at 200 s, from hand-written Tcl: `git show
    // 971749a:bench/ns2/modules.py`; `bench/validate_ns2.py --only vegas` runs these
    // scenarios through the harness and compares the shares): a second flow 20 s after the first, both 5 ms from the router, and
    // three flows at 5, 20 and 45 ms. Packet for packet the same windows (the
    // second flow's slow start ends at 24 − 24/8 = 21, the first comes down to
    // 23.5 packets), so the counts agree to the packets in flight at the end.
    for (starts, delays, ns2) in [
        (vec![0.0, 20.0], vec![5.0, 5.0], vec![142_155, 107_189]),
        (vec![0.0, 0.0, 0.0], vec![5.0, 20.0, 45.0], vec![136_256, 71_564, 41_684]),
    ] {
        let got = ns2_vegas(&starts, &delays);
        for (g, n) in got.iter().zip(&ns2) {
            assert!(g.abs_diff(*n) * 100 <= *n, "{got:?} against ns-2's {ns2:?}");
        }
    }
}
