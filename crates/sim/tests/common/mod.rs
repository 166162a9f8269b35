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
    let sim = Simulation::new(config(doc), vec![]);
    let r = sim.run(&mut |_| true);
    let n = |k: &str| r.num(k) as u64;
    assert_eq!(n("packets_sent"), n("packets_delivered") + n("packets_dropped") + n("packets_in_flight"));
    r
}
