//! Traces in whole simulations: they observe without changing the run, and what
//! they record obeys the rules the engine implements (the window bounds what is
//! in flight, no RTT is shorter than the path, the queue stays within its limit)
//! and agrees with the run's own tables (drops, marks, transmissions, resends).
mod common;

use cclab_sim::metrics::trace::{Variable, FIXED_VARIABLES};
use cclab_sim::metrics::{RunResult, Scalar};
use serde_json::{json, Value};

/// A dumbbell: a fast access link into a 10 Mbps, 10 ms bottleneck with a
/// 40-packet drop-tail queue (RED marking in `ecn`), and back. Classes: two
/// long NewReno flows (limited transmit), a long LEDBAT flow, a long SACK + PRR
/// flow with timestamps, short NewReno flows, and a TFRC flow.
fn scenario(trace: Option<Value>, ecn: bool) -> Value {
    let queue = if ecn {
        json!({"type": "red", "limit": "40pkts", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1, "ecn": true})
    } else {
        json!({"limit": "40pkts"})
    };
    let mut doc = json!({
        "duration": "20s",
        "seed": 3,
        "tcp": {"limited_transmit": true, "ecn": ecn},
        "links": [
            {"name": "access", "from": "s", "to": "r", "rate": "100Mbps", "delay": "1ms", "queue": {"limit": "10000pkts"}},
            {"name": "bottleneck", "from": "r", "to": "d", "rate": "10Mbps", "delay": "10ms", "queue": queue},
        ],
        "traffic": [
            {"name": "reno", "type": "long_lived", "src": "s", "dst": "d", "count": 2},
            {"name": "ledbat", "type": "long_lived", "src": "s", "dst": "d", "protocol": "ledbat"},
            {"name": "sack", "type": "long_lived", "src": "s", "dst": "d", "start": "2s",
             "tcp": {"sack": true, "recovery": "prr", "timestamps": true, "limited_transmit": false}},
            {"name": "short", "type": "poisson", "src": "s", "dst": "d", "load": 0.2, "size": {"dist": "exponential", "mean": "100KB"}},
            {"name": "tfrc", "type": "long_lived", "src": "s", "dst": "d", "protocol": "tfrc"},
        ],
        "record": {"interval": "1s"},
    });
    if let Some(t) = trace {
        doc["trace"] = t;
    }
    doc
}

fn all_traced() -> Value {
    json!({"flows": [{}], "links": ["bottleneck", "access"], "pcap": ["bottleneck"]})
}

/// The tables of a run without the machine's own numbers (wall time, rates) and the traces.
fn tables(r: &RunResult) -> String {
    let summary: Vec<&(String, Scalar)> = r.summary.iter().filter(|(k, _)| !matches!(k.as_str(), "wall_time_s" | "events_per_s" | "wall_s_per_sim_s")).collect();
    format!("{:?}\n{:?}\n{:?}\n{:?}\n{:?}", r.flows, r.links, r.series, r.arrivals, summary)
}

/// The two runs' tables are identical (compared whole; only a summary of the first difference is printed).
fn same(a: &RunResult, b: &RunResult) {
    let (x, y) = (tables(a), tables(b));
    if x != y {
        let at = x.bytes().zip(y.bytes()).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len()));
        panic!("the tables differ at byte {at}: {:?} against {:?}", &x[at.saturating_sub(80)..(at + 80).min(x.len())], &y[at.saturating_sub(80)..(at + 80).min(y.len())]);
    }
}

#[test]
fn tracing_changes_no_result() {
    for ecn in [false, true] {
        let plain = common::run(&scenario(None, ecn));
        let traced = common::run(&scenario(Some(all_traced()), ecn));
        assert!(traced.traces.rows() > 100_000, "the traces hold {} rows", traced.traces.rows());
        assert_eq!(plain.traces.rows(), 0);
        same(&plain, &traced);
        // ... and the interval mode, and a tracer with nothing selected but a capture.
        let every = common::run(&scenario(Some(json!({"flows": [{"class": "ledbat"}], "interval": "100ms"})), ecn));
        same(&plain, &every);
        let capture = common::run(&scenario(Some(json!({"pcap": ["access"]})), ecn));
        same(&plain, &capture);
    }
}

/// A flow's variable rows: (time, value) in order.
fn series(r: &RunResult, flow: u32, var: Variable) -> Vec<(f64, f64)> {
    let f = &r.traces.flows;
    (0..f.len()).filter(|&i| f.entity[i] == flow && f.variable[i] == var as u16).map(|i| (f.time[i], f.value[i])).collect()
}

/// The latest value at or before `t` in `rows` (time-ordered).
fn at(rows: &[(f64, f64)], t: f64) -> f64 {
    let k = rows.partition_point(|r| r.0 <= t);
    rows[k - 1].1
}

#[test]
fn what_is_in_flight_never_exceeds_the_window() {
    // RFC 5681 §2: a sender sends new data only while snd_nxt − snd_una stays
    // within min(cwnd, rwnd); limited transmit (RFC 3042) allows 2 SMSS more;
    // with SACK (RFC 6675) the sender sends while pipe + SMSS <= cwnd. The trace
    // records the state after each call of the machinery (an ACK, a timer); a
    // call sends new data with the window it found (limited transmit, before the
    // ACK's ECN-Echo or loss reduces it) or the one it ends with (after growth).
    // So after every "send" the recorded in-flight bytes are at most the larger
    // of the windows before and after the call (+ 2 SMSS with limited transmit).
    for ecn in [false, true] {
        let r = common::run(&scenario(Some(all_traced()), ecn));
        let p = &r.traces.packets;
        let mut checked = 0;
        for (flow, class) in r.flows.id.iter().zip(&r.flows.class) {
            let name = &r.class_names[*class as usize];
            if name == "tfrc" {
                continue;
            }
            let allowance = if name == "sack" { 0.0 } else { 2.0 * 1460.0 };
            let cwnd = series(&r, *flow, Variable::Cwnd);
            let flight = series(&r, *flow, Variable::InFlight);
            for i in (0..p.len()).filter(|&i| p.flow[i] == *flow && p.event[i] == 0) {
                let t = p.time[i];
                let k = cwnd.partition_point(|r| r.0 < t);
                let window = at(&cwnd, t).max(if k > 0 { cwnd[k - 1].1 } else { 0.0 });
                assert!(at(&flight, t) <= window + allowance, "flow {flow} ({name}) at {t}: {} in flight, cwnd {window}", at(&flight, t));
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked} sends checked");
    }
}

#[test]
fn no_rtt_is_shorter_than_the_path() {
    // The shortest round trip: both links' propagation delays both ways, the
    // smallest data segment (header + 1 byte) serialized on both links, and the
    // ACK (header, with timestamps 12 bytes more) on both. Every sample is at
    // least that, and SRTT, a weighted mean of samples (RFC 6298), too.
    let r = common::run(&scenario(Some(all_traced()), false));
    let tx = |bytes: f64| bytes * 8.0 / 100e6 + bytes * 8.0 / 10e6;
    let mut checked = 0;
    for (flow, class) in r.flows.id.iter().zip(&r.flows.class) {
        let name = &r.class_names[*class as usize];
        if name == "tfrc" {
            continue;
        }
        let header = if name == "sack" { 52.0 } else { 40.0 };
        let base = 2.0 * (0.001 + 0.010) + tx(header + 1.0) + tx(header);
        for var in [Variable::Srtt, Variable::RttSample] {
            for (t, x) in series(&r, *flow, var) {
                assert!(x >= base * (1.0 - 1e-12), "flow {flow} at {t}: {} {x} below the path's {base}", FIXED_VARIABLES[var as usize]);
                checked += 1;
            }
        }
    }
    assert!(checked > 5_000, "{checked} samples checked");
}

#[test]
fn the_links_trace_agrees_with_the_links_table() {
    for ecn in [false, true] {
        let r = common::run(&scenario(Some(all_traced()), ecn));
        let t = &r.traces.links;
        for (li, row) in r.links.iter().enumerate() {
            let rows: Vec<usize> = (0..t.len()).filter(|&i| t.link[i] == li as u32).collect();
            if row.name != "bottleneck" && row.name != "access" {
                assert!(rows.is_empty());
                continue;
            }
            let count = |e: u8| rows.iter().filter(|&&i| t.event[i] == e).count() as u64;
            // Events 0..3: enqueue, mark, drop, dequeue. No warm-up: the table covers the whole run.
            assert_eq!(count(2), row.drops, "{}", row.name);
            assert_eq!(count(1), row.marks, "{}", row.name);
            // Transmissions that started: those sent at once, and every departure from the queue.
            let at_once = rows.iter().filter(|&&i| t.event[i] < 2 && t.wait[i] == 0.0).count() as u64;
            assert_eq!(at_once + count(3), row.packets_sent, "{}", row.name);
            // The queue never exceeds the limit, and its largest value is the table's peak.
            let peak = rows.iter().map(|&i| t.queue_packets[i]).max().unwrap();
            assert_eq!(peak, row.peak_queue_packets, "{}", row.name);
            assert!(peak <= row.limit_packets.unwrap());
            assert!(rows.windows(2).all(|w| t.time[w[0]] <= t.time[w[1]]), "time-ordered");
        }
        assert!(r.links[2].drops + r.links[2].marks > 50, "the bottleneck drops or marks: {}", r.links[2].drops);
    }
}

#[test]
fn the_packets_trace_agrees_with_the_flows_table() {
    // Every resend the sender counted is a "retransmit" (or a resent SYN), every
    // drop of the flow's data on either link is in the links trace too.
    let r = common::run(&scenario(Some(all_traced()), false));
    let p = &r.traces.packets;
    let l = &r.traces.links;
    let mut total = 0;
    for (k, flow) in r.flows.id.iter().enumerate() {
        let n = |e: u8| (0..p.len()).filter(|&i| p.flow[i] == *flow && p.event[i] == e).count() as u32;
        if r.class_names[r.flows.class[k] as usize] != "tfrc" {
            assert_eq!(n(1), r.flows.retransmissions[k], "flow {flow}");
        }
        let link_drops = (0..l.len()).filter(|&i| l.flow[i] == *flow && l.event[i] == 2).count() as u32;
        assert_eq!(n(4) + n(5), link_drops, "flow {flow}");
        total += n(1);
    }
    assert!(total > 20, "{total} resends");
    // LEDBAT reports its delays; TFRC its rate and loss event rate.
    let names = &r.traces.flows.names;
    for v in ["ledbat.queuing_delay_s", "ledbat.base_delay_s", "tfrc.x_bps", "tfrc.p", "rate_bps"] {
        assert!(names.iter().any(|n| n == v), "{v} in {names:?}");
    }
}

#[test]
fn selectors_pick_the_flows_they_name() {
    let trace = json!({"flows": [{"class": "short", "first": 3}, {"ids": [1]}, {"class": "short", "min_size": "400KB"}]});
    let r = common::run(&scenario(Some(trace), false));
    let traced: std::collections::BTreeSet<u32> = r.traces.flows.entity.iter().copied().collect();
    let short: Vec<(u32, f64)> = (0..r.flows.id.len()).filter(|&i| r.class_names[r.flows.class[i] as usize] == "short").map(|i| (r.flows.id[i], r.flows.size[i])).collect();
    let mut want: std::collections::BTreeSet<u32> = short.iter().take(3).map(|s| s.0).collect();
    want.insert(1);
    want.extend(short.iter().filter(|s| s.1 >= 400e3).map(|s| s.0));
    assert!(want.len() > 5);
    assert_eq!(traced, want);
}


#[test]
fn the_estimate_counts_the_traces_and_the_limits_hold_them() {
    // Rows of the traces: estimated from the packets the traced flows and links
    // may carry (docs/engine.md, "Limits"), at least the real count. The
    // estimate of the packets themselves is 4.7 times the real count here (the
    // short flows' smallest segments bound what the links carry); per packet, the
    // rows are within a factor 2 of the real ones.
    let doc = scenario(Some(all_traced()), false);
    let cfg = common::config(&doc);
    let e = cfg.estimate();
    let r = common::run(&doc);
    let real = r.traces.rows() as f64;
    let per_packet = (e.trace_rows / e.packets) / (real / r.num("whole_run_packets_sent"));
    assert!(e.trace_rows >= real && (1.0..2.0).contains(&per_packet), "estimated {} rows, {} real; per packet {per_packet}", e.trace_rows, real);
    // A captured packet takes a 16-byte record header and 40 to 80 header bytes.
    let pcap = (r.traces.pcap[0].1.len() - 24) as f64 / r.links[2].packets_sent as f64;
    assert!(e.pcap_bytes >= pcap * r.links[2].packets_sent as f64 && (56.0..=96.0).contains(&pcap), "{} bytes per packet", pcap);
    let plain = common::config(&scenario(None, false)).estimate();
    assert!(e.memory_bytes > plain.memory_bytes + real * 40.0);
    // Every flow of a 10 Gbit/s link traced for an hour is refused, naming the selector.
    let mut big = scenario(Some(json!({"flows": [{"class": "reno"}]})), false);
    big["duration"] = json!("3600s");
    big["links"][1]["rate"] = json!("10Gbps");
    big["links"][0]["rate"] = json!("10Gbps");
    big["limits"] = json!({"wall_time": "100h"});
    let err = cclab_sim::scenario::build(&big, std::path::Path::new("."), None, &cclab_sim::transport::cc::Registry::new()).unwrap_err();
    assert_eq!(err.path, "trace.flows[0]", "{err}");
    assert!(err.message.starts_with("the traces would hold about"), "{err}");
}

#[test]
fn the_access_trace_holds_the_controllers_state_at_every_change() {
    // A class of 1 MB files at load 0.8 under a static limit of 2 (docs/protocols.md,
    // access control): the traced limit stays 2, never more than 2 files transfer,
    // and the time average of the traced active files over the run is the
    // summary's (the controller's own average over the same period).
    let doc = json!({
        "duration": "200s", "seed": 3,
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "100pkts"}}],
        "traffic": [{"name": "bg", "type": "poisson", "src": "a", "dst": "b", "protocol": "reno", "load": 0.8,
                     "size": {"dist": "exponential", "mean": "1MB"}, "access": {"policy": "static", "limit": 2}}],
        "trace": {"access": ["bg"], "flows": [{"class": "bg", "first": 2}]},
    });
    let r = common::run(&doc);
    let a = &r.traces.access;
    let rows = |name: &str| -> Vec<(f64, f64)> {
        let v = a.names.iter().position(|n| n == name).unwrap() as u16;
        (0..a.len()).filter(|&i| a.variable[i] == v).map(|i| (a.time[i], a.value[i])).collect()
    };
    assert!(rows("limit_files").iter().all(|r| r.1 == 2.0));
    let active = rows("active_files");
    assert!(active.len() > 20 && active.iter().all(|r| r.1 <= 2.0), "{} rows, max {:?}", active.len(), active.iter().map(|r| r.1).fold(0.0, f64::max));
    assert!(rows("waiting_files").iter().any(|r| r.1 > 0.0));
    let mut area = 0.0;
    for (k, &(t, x)) in active.iter().enumerate() {
        let next = active.get(k + 1).map_or(200.0, |r| r.0);
        area += x * (next - t);
    }
    assert!((area / 200.0 - r.num("bg.access_mean_active")).abs() < 1e-6, "{} vs {}", area / 200.0, r.num("bg.access_mean_active"));
    assert_eq!(r.traces.flows.entity.iter().collect::<std::collections::BTreeSet<_>>().len(), 2);
}
