//! A new queue discipline in one file: a gate that admits packets for one period,
//! drops them the next, and so on, switching at a deadline of its own; registered
//! at run time and used from a scenario with `queue = { type = "gate", period = ... }`.
mod common;
use cclab_sim::config::Config;
use cclab_sim::engine::SimTime;
use cclab_sim::net::queue::{Arrival, LinkSpeed, QueueConfig, QueueDiscipline, Verdict, Waiting};
use cclab_sim::net::Packet;
use cclab_sim::scenario::build;
use cclab_sim::settings::{Duration, Result, Table};
use cclab_sim::transport::cc::Registry;
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;

/// The gate's parameters (the canonical configuration's `{"type": "gate", ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gate {
    /// How long the gate stays open, then closed (ns).
    period_ns: u64,
    /// The buffer while open.
    limit_packets: Option<u64>,
}

/// The gate during a run.
struct GateState {
    open: bool,
    period: SimTime,
    next: SimTime,
    limit: u64,
}

impl QueueConfig for Gate {
    const NAME: &'static str = "gate";
    type State = GateState;

    fn read(t: &mut Table, _link: LinkSpeed) -> Result<Gate> {
        let period = t.req::<Duration>("period", "how long the gate stays open, then closed")?.0;
        Ok(Gate { period_ns: period.0, limit_packets: Some(100) })
    }

    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if self.period_ns == 0 {
            return Err(("period_ns", "expected a positive period".into()));
        }
        Ok(())
    }

    fn limits(&self) -> (Option<u64>, Option<u64>) {
        (self.limit_packets, None)
    }

    fn start(&self, _rate_bps: u64, _rng: Xoshiro256pp) -> GateState {
        let period = SimTime(self.period_ns);
        GateState { open: true, period, next: period, limit: self.limit_packets.unwrap_or(u64::MAX) }
    }
}

impl QueueDiscipline for GateState {
    fn admit(&mut self, a: &Arrival, _pkt: &mut Packet) -> Verdict {
        if self.open && a.q_packets < self.limit {
            Verdict::Enqueue
        } else {
            Verdict::Drop
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        Some(self.next)
    }

    fn on_deadline(&mut self, now: SimTime, _waiting: Waiting) {
        self.open = !self.open;
        self.next = now + self.period;
    }
}

/// 1 Mbps of 1000-byte datagrams (one every 8 ms) through a gate of `period`.
fn scenario(period: &str) -> serde_json::Value {
    json!({
        "duration": "2s",
        "links": [{"name": "l", "from": "a", "to": "b", "rate": "100Mbps", "delay": "1ms",
                   "queue": {"type": "gate", "period": period}}],
        "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1Mbps", "packet_size": 1000}],
    })
}

fn registry() -> Registry {
    let mut reg = Registry::new();
    reg.register_queue::<Gate>();
    reg
}

#[test]
fn a_registered_discipline_with_a_timer_runs_from_a_scenario() {
    let reg = registry();
    let (cfg, _) = build(&scenario("100.1ms"), Path::new("."), None, &reg).unwrap();
    // Its parameters are part of the canonical configuration, and come back from it.
    let text = cfg.to_json();
    assert!(text.contains(r#""queue":{"type":"gate","limit_packets":100,"period_ns":100100000}"#), "{text}");
    assert_eq!(Config::from_json(&text, &reg).unwrap(), cfg);
    let r = common::run_registered(cfg, &reg);
    // The k-th datagram reaches the link at 8k ms (k = 0..=250: the run includes its
    // last instant) and passes when floor(8k / 100.1) is even: the gate switches at
    // every multiple of 100.1 ms (none of which is a multiple of 8 ms before 8008 ms).
    let open = (0..=250u64).filter(|k| (k * 8_000_000 / 100_100_000) % 2 == 0).count() as u64;
    assert_eq!((r.links[0].packets_sent, r.links[0].drops), (open, 251 - open));
    assert_eq!(r.num("whole_run_packets_delivered") as u64, open);
}

#[test]
fn the_registry_refuses_what_it_does_not_know_and_checks_what_it_does() {
    let e = build(&scenario("100ms"), Path::new("."), None, &Registry::new()).unwrap_err();
    assert_eq!(e.to_string(), r#"links[0].queue.type: unknown queue discipline "gate"; expected "droptail", "red", "linear" or "rcp""#);
    let reg = registry();
    let (cfg, _) = build(&scenario("100ms"), Path::new("."), None, &reg).unwrap();
    let zero = cfg.to_json().replace(r#""period_ns":100000000"#, r#""period_ns":0"#);
    assert_eq!(Config::from_json(&zero, &reg).unwrap_err().to_string(), "links[0].queue.period_ns: expected a positive period");
    assert!(Config::from_json(&cfg.to_json(), &Registry::new()).unwrap_err().to_string().starts_with("links[0].queue.type: queue discipline \"gate\" is not registered"));
}
