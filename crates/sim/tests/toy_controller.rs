//! A new congestion controller in one file: a fixed window that doubles at a
//! deadline of its own, registered at run time and used from a scenario with
//! `protocol = "toy"` and its typed `cc` table.
mod common;
use cclab_sim::config::Config;
use cclab_sim::engine::SimTime;
use cclab_sim::scenario::build;
use cclab_sim::settings::{Duration, Result, Table};
use cclab_sim::transport::cc::{Ack, Congestion, CongestionControl, Registry, Window, WindowProtocol};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;

#[derive(Clone, Debug)]
struct Toy {
    packets: u64,
    double_at: Option<SimTime>,
    acks_seen: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ToyParams {
    packets: u64,
    double_at: SimTime,
}

impl WindowProtocol for Toy {
    const NAME: &'static str = "toy";
    type Params = ToyParams;

    fn read(mut t: Table) -> Result<ToyParams> {
        let packets = t.req("packets", "the window in segments")?;
        let double_at = t.req::<Duration>("double_at", "when the window doubles")?.0;
        t.finish("the toy controller")?;
        Ok(ToyParams { packets, double_at })
    }

    fn new(p: &ToyParams) -> Self {
        Toy { packets: p.packets, double_at: Some(p.double_at), acks_seen: 0 }
    }
}

impl CongestionControl for Toy {
    fn on_ack(&mut self, w: &mut Window, _ack: &Ack) {
        self.acks_seen += 1;
        w.cwnd = self.packets * w.mss;
    }
    fn on_congestion(&mut self, w: &Window, _: Congestion, _flight: u64) -> u64 {
        w.cwnd
    }
    fn deadline(&self) -> Option<SimTime> {
        self.double_at
    }
    fn on_deadline(&mut self, w: &mut Window, _now: SimTime) {
        self.packets *= 2;
        w.cwnd = self.packets * w.mss;
        self.double_at = None;
    }
}

fn scenario(cc: serde_json::Value) -> serde_json::Value {
    json!({
        "duration": "4s",
        "links": [{"from": "a", "to": "b", "rate": "100Mbps", "delay": "50ms", "queue": {"limit": "1000pkts"}}],
        "traffic": [{"name": "toy", "type": "long_lived", "src": "a", "dst": "b", "protocol": "toy", "cc": cc,
                     "tcp": {"initial_window": 10}}],
        "record": {"interval": "500ms"},
    })
}

#[test]
fn a_registered_controller_runs_from_a_scenario() {
    let mut reg = Registry::new();
    reg.register::<Toy>();
    let (cfg, _) = build(&scenario(json!({"packets": 10, "double_at": "2s"})), Path::new("."), None, &reg).unwrap();
    // Its parameters are part of the canonical configuration, and come back from it.
    let text = cfg.to_json();
    assert!(text.contains(r#""cc":{"protocol":"toy","params":{"double_at":2000000000,"packets":10}}"#), "{text}");
    assert_eq!(Config::from_json(&text, &reg).unwrap(), cfg);
    let r = common::run_registered(cfg, &reg);
    // A window of w segments over a 100 ms round trip (plus one serialization):
    // w * 1460 B * 8 / RTT. Sampled per 500 ms: 10 segments before 2 s, 20 after.
    let rtt = 0.1 + 1500.0 * 8.0 / 100e6;
    let thr: Vec<f64> = (0..r.series.time.len())
        .filter(|&i| r.series.metric[i] == 2)
        .map(|i| r.series.value[i])
        .collect();
    let expect = |w: f64| w * 1460.0 * 8.0 / rtt;
    for (k, v) in thr.iter().enumerate() {
        let t = 0.5 * (k + 1) as f64;
        // Skip the first interval (start-up) and the one with the change.
        if t <= 0.5 || (2.0..=2.5).contains(&t) {
            continue;
        }
        let w = if t < 2.0 { 10.0 } else { 20.0 };
        assert!((v / expect(w) - 1.0).abs() < 0.02, "t = {t}: {v} bit/s, expected {}", expect(w));
    }
}

#[test]
fn its_parameters_are_checked_by_name() {
    let mut reg = Registry::new();
    reg.register::<Toy>();
    let e = build(&scenario(json!({"packets": 10, "double_at": "2s", "speed": 3})), Path::new("."), None, &reg).unwrap_err();
    assert_eq!(e.to_string(), "traffic[0].cc.speed: unknown key; the toy controller takes: packets, double_at");
    let e = build(&scenario(json!({"packets": 10})), Path::new("."), None, &reg).unwrap_err();
    assert_eq!(e.to_string(), "traffic[0].cc.double_at: missing: when the window doubles");
    // Without the registration the name is unknown.
    let e = build(&scenario(json!({})), Path::new("."), None, &Registry::new()).unwrap_err();
    assert!(e.to_string().starts_with("traffic[0].protocol: unknown protocol \"toy\""), "{e}");
}
