//! Access control at packet level (`access = { policy = ... }` on a class): chunks
//! wait at the sender, start in arrival order, never more than the limit at once,
//! a fractional limit alternates floor and ceiling to its time average, FAIRBAT
//! holds the queue near its target, and the settings are checked like every other.
mod common;
use cclab_sim::config::Config;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use serde_json::{json, Value};
use std::path::Path;

/// 10 Mbps, 10 ms, 100-packet buffer; a background class of 1 MB files at `load`
/// under `access`, and optionally web flows.
fn scenario(load: f64, access: Value, web: Option<f64>, duration: &str, warmup: &str) -> Value {
    let mut traffic = vec![json!({"name": "bg", "type": "poisson", "src": "a", "dst": "b", "protocol": "reno",
                                  "load": load, "size": {"dist": "exponential", "mean": "1MB"}, "access": access})];
    if let Some(w) = web {
        traffic.push(json!({"name": "web", "type": "poisson", "src": "a", "dst": "b", "protocol": "reno",
                            "load": w, "size": {"dist": "exponential", "mean": "1MB"}}));
    }
    json!({
        "duration": duration, "warmup": warmup, "seed": 3,
        "tcp": {"receive_window": "128KiB"},
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "100pkts"}}],
        "traffic": traffic,
        "record": {"interval": "1s"},
    })
}

fn config(v: &Value) -> Result<Config, String> {
    build(v, Path::new("."), None, &Registry::new()).map(|c| c.0).map_err(|e| e.to_string())
}

fn run(v: &Value) -> RunResult {
    common::run_config(config(v).unwrap())
}

/// The largest number of class-0 flows whose [start, finish) intervals overlap.
fn max_concurrent(r: &RunResult, end: f64) -> usize {
    let f = &r.flows;
    let mut ev: Vec<(f64, i32)> = Vec::new();
    for i in 0..f.len() {
        if f.class[i] == 0 && !f.start[i].is_nan() {
            ev.push((f.start[i], 1));
            ev.push((if f.finish[i].is_nan() { end } else { f.finish[i] }, -1));
        }
    }
    ev.sort_by(|a, b| a.partial_cmp(b).unwrap()); // a finish before a start at the same instant
    let (mut n, mut most) = (0i32, 0i32);
    for (_, d) in ev {
        n += d;
        most = most.max(n);
    }
    most as usize
}

/// Time average over [from, to] of class-0 flows between `a` and `b` (per flow).
fn time_average(r: &RunResult, from: f64, to: f64, a: &[f64], b: &[f64]) -> f64 {
    let mut area = 0.0;
    for i in 0..r.flows.len() {
        if r.flows.class[i] == 0 {
            let lo = if a[i].is_nan() { to } else { a[i] }.clamp(from, to);
            let hi = if b[i].is_nan() { to } else { b[i] }.clamp(from, to);
            area += (hi - lo).max(0.0);
        }
    }
    area / (to - from)
}

#[test]
fn chunks_wait_start_in_order_and_never_exceed_the_limit() {
    let v = scenario(0.8, json!({"policy": "static", "limit": 2}), None, "300s", "0s");
    let r = run(&v);
    let f = &r.flows;
    assert!(f.len() > 150, "{} files", f.len());
    assert_eq!(max_concurrent(&r, 300.0), 2);
    let mut waited = 0;
    let mut last_start = 0.0;
    for i in 0..f.len() {
        if f.start[i].is_nan() {
            continue;
        }
        assert!(f.start[i] >= f.arrival[i] && f.start[i] >= last_start, "flow {i} out of order");
        last_start = f.start[i];
        waited += (f.start[i] > f.arrival[i]) as usize;
        if f.finished[i] {
            // Completion counts from the arrival in the queue, the wait included.
            assert!((f.completion_time[i] - (f.finish[i] - f.arrival[i])).abs() < 1e-9);
        }
    }
    assert!(waited > 20, "only {waited} chunks waited");
    // Every chunk is accounted for: finished, transferring at the end, or waiting.
    let (started, finished) = ((0..f.len()).filter(|&i| !f.start[i].is_nan()).count(), f.finished.iter().filter(|&&x| x).count());
    let s = &r.series;
    let last = |m: &str| {
        let k = s.metric_names.iter().position(|x| x == m).unwrap() as u8;
        (0..s.time.len()).filter(|&i| s.metric[i] == k).map(|i| (s.time[i], s.value[i])).collect::<Vec<_>>()
    };
    let (active, waiting, limit) = (last("access_active"), last("access_waiting"), last("access_limit"));
    assert!(active.iter().all(|x| x.1 <= 2.0) && limit.iter().all(|x| x.1 == 2.0));
    assert_eq!(active, last("active_flows"));
    let at_end = |x: &Vec<(f64, f64)>| x.last().unwrap().1 as usize;
    assert_eq!(started - finished, at_end(&active));
    assert_eq!(f.len() - started, at_end(&waiting));
    // Same scenario and seed, same bytes out.
    let again = run(&v);
    assert_eq!(again.flows.start.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), f.start.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

#[test]
fn a_fractional_limit_averages_floor_and_ceiling() {
    // Overloaded (the queue never empties after the first seconds): M = 1.5 keeps one
    // or two chunks transferring, 1.5 on average up to one chunk's rounding.
    let v = scenario(1.5, json!({"policy": "static", "limit": 1.5}), None, "1500s", "100s");
    let r = run(&v);
    let a = time_average(&r, 100.0, 1500.0, &r.flows.start, &r.flows.finish);
    assert!((a - 1.5).abs() < 0.001, "mean active {a}"); // measured 1.50008
    assert_eq!(max_concurrent(&r, 1500.0), 2);
    // The controller's own average agrees with the flows table.
    assert!((r.num("bg.access_mean_active") - a).abs() < 1e-6, "{} vs {a}", r.num("bg.access_mean_active"));
}

#[test]
fn fairbat_holds_the_queue_near_its_target_and_carries_the_load() {
    // Web load 0.3, background 0.5 of 1 MB files; τ = 40, updates every 30 s. After the
    // first 3000 s the queue hovers at τ and the class delivers what arrives.
    let access = json!({"policy": "fairbat", "tau": 40, "period": "30s", "gain_start": 0.01, "gain_end": 0.001});
    let r = run(&scenario(0.5, access, Some(0.3), "9000s", "3000s"));
    let waiting = r.num("bg.access_mean_waiting");
    assert!((30.0..50.0).contains(&waiting), "mean queue {waiting}, τ = 40"); // measured 40.5
    let thr = r.num("bg.throughput_bps") / 5e6;
    assert!((thr - 1.0).abs() < 0.03, "throughput / load = {thr}"); // measured 1.012
    assert_eq!(r.num("bg.access_updates"), 300.0); // 9000 s / 30 s
    let m = r.num("bg.access_mean_limit");
    assert!(m > 0.05 && m < 5.0, "mean limit {m}");
}

#[test]
fn access_settings_are_checked_by_key_and_round_trip() {
    let ok = scenario(0.5, json!({"policy": "fairbat", "period": "60s", "tau": 20, "measure": "sample"}), None, "10s", "0s");
    let cfg = config(&ok).unwrap();
    let text = cfg.to_json();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["classes"][0]["access"]["policy"], json!("fairbat"));
    assert_eq!(v["classes"][0]["access"]["period_s"], json!(60.0));
    assert_eq!(v["classes"][0]["access"]["gain_start"], json!(0.05)); // the crate's default
    let back = Config::from_json(&text, &Registry::new()).unwrap();
    assert_eq!(back, cfg);
    // A class without access control has no `access` in the canonical form.
    let mut plain = ok.clone();
    plain["traffic"][0].as_object_mut().unwrap().remove("access");
    assert!(!config(&plain).unwrap().to_json().contains("access"));

    let refused = |access: Value, want: &str| {
        let e = config(&scenario(0.5, access, None, "10s", "0s")).unwrap_err();
        assert!(e.starts_with(want), "got {e:?}, expected {want:?}");
    };
    refused(json!({"limit": 2}), "traffic[0].access.policy: missing");
    refused(json!({"policy": "wtcp"}), "traffic[0].access.policy: unknown access policy \"wtcp\"");
    refused(json!({"policy": "static"}), "traffic[0].access.limit: missing");
    refused(json!({"policy": "static", "limit": -1}), "traffic[0].access.limit: expected a number above 0");
    refused(json!({"policy": "fairbat", "period": 120}), "traffic[0].access.period: expected a duration like \"25ms\", got 120 (write the unit)");
    refused(json!({"policy": "fairbat", "gain_ned": 0.1}), "traffic[0].access.gain_ned: unknown key (did you mean `gain_end`?); a fairbat access policy takes: policy, m0,");
    refused(json!({"policy": "rate_tracking", "ewma": 0}), "traffic[0].access.ewma: expected a number in (0, 1], got 0");
    refused(json!({"policy": "fairbat", "fractional": "round"}), "traffic[0].access.fractional: expected one of");
    // Only finite files sent by TCP queue up.
    let mut long = scenario(0.5, json!({"policy": "static", "limit": 1}), None, "10s", "0s");
    long["traffic"][0] = json!({"name": "bg", "type": "long_lived", "src": "a", "dst": "b", "access": {"policy": "static", "limit": 1}});
    assert!(config(&long).unwrap_err().starts_with("traffic[0].access: only poisson and flow_list classes take `access`"));
    let mut cbr = scenario(0.5, json!({"policy": "static", "limit": 1}), None, "10s", "0s");
    cbr["traffic"][0]["protocol"] = json!("cbr");
    cbr["traffic"][0]["cc"] = json!({"rate": "1Mbps"});
    assert!(config(&cbr).unwrap_err().starts_with("traffic[0].access: access control starts each chunk as a TCP connection"));
    // The canonical form is checked again when read back.
    let bad = text.replace("\"tau\":20.0", "\"tau\":-3.0");
    assert!(Config::from_json(&bad, &Registry::new()).unwrap_err().to_string().starts_with("classes[0].access.tau:"));
}
