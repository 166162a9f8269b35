//! RCP in whole simulations: N long flows converge to C/N each at the target
//! utilization, a flow crossing two RCP links gets the smaller link's rate,
//! packets are conserved, and the scenario keys are checked.
use cclab_sim::config::Config;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::Path;

mod common;
use common::{config, run};

/// `n` long RCP flows of 1000-byte datagrams, one class each, on one link of
/// `rate_mbps` and 20 ms one way (RTT 40 ms) aiming at `target`, measured over
/// [10, 20] s: each flow's throughput, and the link.
fn single_link(n: usize, rate_mbps: u64, target: f64, min_queue: bool) -> (Vec<f64>, RunResult) {
    single_link_with(n, rate_mbps, target, min_queue, json!({}))
}

/// The same with the hosts' parameters `cc`.
fn single_link_with(n: usize, rate_mbps: u64, target: f64, min_queue: bool, cc: Value) -> (Vec<f64>, RunResult) {
    let traffic: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("f{i}"), "type": "long_lived", "src": "a", "dst": "b", "protocol": "rcp", "packet_size": 1000, "start": format!("{}ms", 37 * i), "cc": cc}))
        .collect();
    let doc = json!({
        "duration": "20s", "warmup": "10s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": format!("{rate_mbps}Mbps"), "delay": "20ms",
                   "queue": {"type": "rcp", "limit": "100pkts", "target_utilization": target, "min_queue": min_queue}}],
        "traffic": traffic,
        "record": {"interval": "0s"},
    });
    let r = run(&doc);
    let thr = (0..n).map(|i| r.num(&format!("f{i}.throughput_bps"))).collect();
    (thr, r)
}

#[test]
fn n_long_flows_converge_to_c_over_n() {
    // 20 Mbps, RTT 40 ms, flows starting 37 ms apart, measured over [10, 20] s.
    // With Q the persistent (smallest) queue every case reaches γC within 0.3%
    // and C/N per flow within 0.4% (measured: N = 2..50, γ = 1 and 0.85). With
    // the instantaneous queue at the update (ns-2's default) the flows' packets
    // bunch up as N grows (25 flows send in one burst every 12 ms, a mean queue
    // of 9 packets), and the queue term holds the rate below the target: 0.9956
    // at N = 10, γ = 1, but 0.9713 at N = 50 and 0.8035 at N = 25, γ = 0.85.
    let cases = [(2, 1.0, false), (10, 1.0, false), (10, 0.85, false), (2, 0.85, true), (25, 1.0, true), (25, 0.85, true), (50, 0.85, true)];
    for (n, target, min_queue) in cases {
        let (thr, r) = single_link(n, 20, target, min_queue);
        let fair = 20e6 * target / n as f64;
        let l = &r.links[0];
        for (i, x) in thr.iter().enumerate() {
            assert!((x / fair - 1.0).abs() < 0.01, "n {n}, target {target}: flow {i} at {x:.0} bit/s, fair share {fair:.0}");
        }
        assert!((l.utilization / target - 1.0).abs() < 0.01, "n {n}: utilization {} for a target of {target}", l.utilization);
        // Nothing is lost once converged. The reverse link carries 40-byte answers,
        // only to datagrams with news: at most one per rate update (every 10 ms)
        // plus one per RTT (40 ms) per flow over the 10 s measured.
        assert_eq!(l.drops, 0);
        let rev = &r.links[1];
        assert_eq!(rev.bytes_sent, 40 * rev.packets_sent);
        assert!(rev.packets_sent <= (n as u64 * 1250).min(l.packets_sent), "{} answers to {} datagrams", rev.packets_sent, l.packets_sent);
    }
    // With `answer_every`, ns-2's hosts: one answer per datagram, and the same rates.
    let (thr, r) = single_link_with(10, 20, 1.0, true, json!({"answer_every": true}));
    assert!((r.links[1].packets_sent as f64 / r.links[0].packets_sent as f64 - 1.0).abs() < 0.005);
    assert!(thr.iter().all(|x| (x / 2e6 - 1.0).abs() < 0.01), "{thr:?}");
    let (_, r) = single_link(25, 20, 0.85, false);
    assert!(r.links[0].utilization < 0.82, "{}", r.links[0].utilization);
}

#[test]
fn each_flow_gets_the_smallest_rate_on_its_path() {
    // a -> b at 20 Mbps, b -> c at 6 Mbps. Flow x crosses both, two flows y only
    // the first, flow z only the second. The second link shares 6 Mbps between x
    // and z (3 Mbps each); the first gives y what x leaves: (20 − 3)/2 = 8.5 Mbps
    // each (max-min fairness, which processor sharing gives). Measured: x and z
    // 2.99 Mbps, y 8.49 Mbps; both links 0.997–0.999 busy.
    let doc = json!({
        "duration": "20s", "warmup": "10s",
        "links": [
            {"name": "l1", "from": "a", "to": "b", "rate": "20Mbps", "delay": "10ms", "queue": {"type": "rcp", "limit": "100pkts", "min_queue": true}},
            {"name": "l2", "from": "b", "to": "c", "rate": "6Mbps", "delay": "10ms", "queue": {"type": "rcp", "limit": "100pkts", "min_queue": true}},
        ],
        "traffic": [
            {"name": "x", "type": "long_lived", "src": "a", "dst": "c", "protocol": "rcp", "packet_size": 1000},
            {"name": "y", "type": "long_lived", "src": "a", "dst": "b", "protocol": "rcp", "packet_size": 1000, "count": 2, "start": "13ms"},
            {"name": "z", "type": "long_lived", "src": "b", "dst": "c", "protocol": "rcp", "packet_size": 1000, "start": "29ms"},
        ],
        "record": {"interval": "0s"},
    });
    let r = run(&doc);
    let thr = |c: &str| r.num(&format!("{c}.throughput_bps"));
    assert!((thr("x") / 3e6 - 1.0).abs() < 0.01, "x {}", thr("x"));
    assert!((thr("z") / 3e6 - 1.0).abs() < 0.01, "z {}", thr("z"));
    assert!((thr("y") / 17e6 - 1.0).abs() < 0.01, "y (two flows) {}", thr("y"));
    // Same scenario, same bytes out.
    let again = run(&doc);
    assert_eq!(format!("{:?}{:?}", r.flows, r.links), format!("{:?}{:?}", again.flows, again.links));
}

#[test]
fn finite_flows_finish_and_keys_are_checked() {
    // Poisson arrivals of 100 kB flows on an RCP link (load 0.4): every flow that
    // arrives a second before the class stops finishes, with all its bytes.
    let doc = json!({
        "duration": "30s", "warmup": "0s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "queue": {"type": "rcp", "limit": "1000pkts"}}],
        "traffic": [{"name": "p", "type": "poisson", "src": "a", "dst": "b", "protocol": "rcp", "packet_size": 1000, "arrival_rate": 5.0, "size": {"dist": "constant", "value": "100KB"}, "stop": "20s"}],
        "record": {"interval": "0s"},
    });
    let r = run(&doc);
    let f = &r.flows;
    assert!(f.id.len() > 60, "{}", f.id.len());
    let mut fastest = f64::MAX;
    for i in (0..f.id.len()).filter(|&i| f.arrival[i] < 19.0) {
        assert!(f.finished[i], "flow {i} did not finish");
        assert_eq!(f.bytes_delivered[i] as f64, f.size[i]);
        fastest = fastest.min(f.completion_time[i]);
    }
    // A flow alone on the idle link (R = C): the SYN's round trip (20.064 ms),
    // then 100 datagrams at 10 Mbps (80 ms), the last one 10 ms on its way.
    assert!((fastest - 0.110064).abs() < 1e-4, "{fastest}");
    assert_eq!(r.links[0].drops, 0);
    // The canonical configuration round-trips.
    let cfg = config(&doc);
    assert_eq!(Config::from_json(&cfg.to_json(), &Registry::new()).unwrap().to_json(), cfg.to_json());
    // Errors name the key.
    let bad = |doc: Value| build(&doc, Path::new("."), None, &Registry::new()).unwrap_err().to_string();
    let with_queue = |q: Value| {
        json!({"duration": "1s", "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "queue": q}],
               "traffic": [{"name": "r", "type": "long_lived", "src": "a", "dst": "b", "protocol": "rcp"}]})
    };
    let e = bad(with_queue(json!({"type": "rcp", "target_utilization": 2})));
    assert!(e.contains("links[0].queue.target_utilization") && e.contains("(0, 1]"), "{e}");
    let e = bad(with_queue(json!({"type": "rcp", "alpha": 0})));
    assert!(e.contains("links[0].queue.alpha"), "{e}");
    let e = bad(with_queue(json!({"type": "rcp", "interval": "0s"})));
    assert!(e.contains("links[0].queue.interval"), "{e}");
    let e = bad(with_queue(json!({"type": "rcp", "gamma": 1})));
    assert!(e.contains("gamma") && e.contains("unknown"), "{e}");
    let e = bad(with_queue(json!({"limit": "10pkts"})));
    assert!(e.contains("traffic[0].route") && e.contains("rcp"), "{e}");
    // Long-lived classes take `starts` (seconds, any order) as CBR classes do.
    let mut doc = with_queue(json!({"type": "rcp"}));
    doc["duration"] = json!("2s");
    doc["traffic"][0]["starts"] = json!([0.5, 0.1]);
    let r = run(&doc);
    assert_eq!(r.flows.arrival, vec![0.1, 0.5]);
    doc["traffic"][0]["count"] = json!(2);
    assert!(bad(doc).contains("either count or starts"));
}
