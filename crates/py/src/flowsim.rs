//! Bindings of the `cclab-flowsim` crate: `cclab._core.flowsim_run` (its classes read by
//! `cclab_flowsim::read`).
use cclab_control::read::{Param, Params};
use cclab_flowsim::read::{self, ClassSpec};
use cclab_flowsim::{simulate, Scenario};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;

/// A parameter: a number, or a name (an access policy's `fractional`, `measure`).
#[derive(FromPyObject, Clone, Debug)]
pub(crate) enum Value {
    Number(f64),
    Name(String),
}

/// Python's parameters as the readers' plain map.
pub(crate) fn to_params(p: &HashMap<String, Value>) -> Params {
    p.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Number(x) => Param::Number(*x),
                Value::Name(s) => Param::Name(s.clone()),
            };
            (k.clone(), v)
        })
        .collect()
}

type ClassTuple = (String, String, String, Vec<usize>, HashMap<String, Value>);

/// Run the flow-level simulator; returns a dict of per-replication statistics.
#[pyfunction]
#[pyo3(signature = (capacities, classes, duration, warmup, replications, seed, threads=1))]
#[allow(clippy::too_many_arguments)]
fn flowsim_run<'py>(
    py: Python<'py>,
    capacities: Vec<f64>,
    classes: Vec<ClassTuple>,
    duration: f64,
    warmup: f64,
    replications: u32,
    seed: u64,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let classes = classes
        .iter()
        .enumerate()
        .map(|(i, (name, kind, policy, route, p))| {
            let params = to_params(p);
            read::class(i, &ClassSpec { name, kind, policy, route, params: &params }).map_err(|e| PyValueError::new_err(e.0))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let sc = Scenario {
        capacities,
        classes,
        duration,
        warmup,
        replications,
        seed,
    };
    let rep = py
        .detach(|| simulate(&sc, threads))
        .map_err(|e| PyValueError::new_err(e.0))?;
    let d = PyDict::new(py);
    d.set_item("names", rep.names.clone())?;
    d.set_item("events", rep.events)?;
    d.set_item("ticks", rep.ticks)?;
    d.set_item("wall_s", rep.wall_s)?;
    d.set_item("events_per_s", rep.events_per_second())?;
    let col = |f: &dyn Fn(&cclab_flowsim::RepStats) -> Vec<f64>| -> Vec<Vec<f64>> {
        rep.reps.iter().map(f).collect()
    };
    d.set_item("mean_number", col(&|r| r.mean_number.clone()))?;
    d.set_item("mean_active", col(&|r| r.mean_active.clone()))?;
    d.set_item("mean_delay", col(&|r| r.mean_delay.clone()))?;
    d.set_item("throughput", col(&|r| r.throughput.clone()))?;
    d.set_item("departures", col(&|r| r.departures.clone()))?;
    d.set_item("arrivals", col(&|r| r.arrivals.clone()))?;
    d.set_item("mean_limit", col(&|r| r.mean_limit.clone()))?;
    d.set_item("sd_limit", col(&|r| r.sd_limit.clone()))?;
    d.set_item(
        "rep_events",
        rep.reps.iter().map(|r| r.events).collect::<Vec<u64>>(),
    )?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flowsim_run, m)?)?;
    Ok(())
}
