//! Helpers shared by the whole-simulation tests: build a scenario document and
//! run it, checking packet conservation.
#![allow(dead_code)]
use cclab_sim::config::Config;
use cclab_sim::metrics::RunResult;
use cclab_sim::scenario::build;
use cclab_sim::transport::cc::Registry;
use cclab_sim::Simulation;
use serde_json::Value;
use std::path::Path;

/// The configuration of a scenario document (built-in protocols).
pub fn config(doc: &Value) -> Config {
    build(doc, Path::new("."), None, &Registry::new()).unwrap().0
}

/// Run a scenario document; every packet ever sent was delivered, dropped, or is
/// still on a wire.
pub fn run(doc: &Value) -> RunResult {
    run_config(config(doc))
}

/// Run a configuration of built-in protocols, checking packet conservation.
pub fn run_config(cfg: Config) -> RunResult {
    run_registered(cfg, &Registry::new())
}

/// Run a configuration whose protocols `registry` knows, checking packet conservation.
pub fn run_registered(cfg: Config, registry: &Registry) -> RunResult {
    let r = Simulation::with_registry(cfg, vec![], registry).unwrap().run(&mut |_| true);
    check_conservation(&r);
    r
}

/// Every packet of the run is accounted for, over the whole run and over the measured
/// period, and the summary's measured counters are what the links table counts.
pub fn check_conservation(r: &RunResult) {
    let n = |k: &str| r.num(k) as u64;
    let in_flight = n("packets_in_flight");
    assert_eq!(n("whole_run_packets_sent"), n("whole_run_packets_delivered") + n("whole_run_packets_dropped") + in_flight);
    assert_eq!(
        n("packets_in_flight_at_warmup") + n("measured_packets_sent"),
        n("measured_packets_delivered") + n("measured_packets_dropped") + in_flight
    );
    assert_eq!(n("measured_packets_dropped"), r.links.iter().map(|l| l.drops).sum::<u64>());
    assert_eq!(n("measured_packets_marked"), r.links.iter().map(|l| l.marks).sum::<u64>());
}
