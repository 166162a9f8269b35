//! Bindings of the `cclab-sim` crate: validate a scenario, run a scenario or a canonical configuration.
use cclab_sim::metrics::{link_columns, Column, Columns, RunResult, Scalar};
use cclab_sim::transport::cc::Registry;
use cclab_sim::{engine::SimTime, scenario, Config, Simulation};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

pyo3::create_exception!(_core, ScenarioError, PyValueError, "A scenario is malformed; the message names the key path at fault.");

fn internal(e: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = e
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    PyRuntimeError::new_err(format!("internal error in the simulator (please report it): {msg}"))
}

/// Validate a scenario (JSON text); returns {"warnings", "duration_s", "warmup_s",
/// "seed", "config", "estimate", "offered_load"} or raises ScenarioError.
/// `offered_load` has one dict per link (`link`, `offered_bps`, `load`,
/// `elastic_classes`: `Config::offered_load`, the definition of the engine's
/// overload warning). `estimate` is what the
/// run will need (flows, packets, events, wall_time_s, series_rows, arrival_rows,
/// memory_bytes) and the limits it was checked against. `config` is the canonical JSON of the
/// validated configuration: every name resolved, every unit in SI integers, every
/// file read in (what another simulator needs to run the same thing, and the key of
/// a stored result).
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=".", seed=None))]
fn validate_scenario<'py>(py: Python<'py>, scenario_json: &str, base_dir: &str, seed: Option<u64>) -> PyResult<Bound<'py, PyDict>> {
    let (cfg, warnings) = load(scenario_json, base_dir, seed)?;
    let d = PyDict::new(py);
    d.set_item("warnings", warnings)?;
    d.set_item("duration_s", cfg.duration.as_secs_f64())?;
    d.set_item("warmup_s", cfg.warmup.as_secs_f64())?;
    d.set_item("seed", cfg.seed)?;
    d.set_item("config", cfg.to_json())?;
    let e = cfg.estimate();
    let est = PyDict::new(py);
    est.set_item("flows", e.flows)?;
    est.set_item("packets", e.packets)?;
    est.set_item("events", e.events)?;
    est.set_item("wall_time_s", e.wall_time_s)?;
    est.set_item("series_rows", e.series_rows)?;
    est.set_item("arrival_rows", e.arrival_rows)?;
    est.set_item("trace_rows", e.trace_rows)?;
    est.set_item("pcap_bytes", e.pcap_bytes)?;
    est.set_item("memory_bytes", e.memory_bytes)?;
    est.set_item("limit_memory_bytes", cfg.limits.memory_bytes)?;
    est.set_item("limit_wall_time_s", cfg.limits.wall_time.as_secs_f64())?;
    d.set_item("estimate", est)?;
    let loads = PyList::empty(py);
    for l in cfg.offered_load() {
        let row = PyDict::new(py);
        row.set_item("link", l.link)?;
        row.set_item("offered_bps", l.offered_bps)?;
        row.set_item("load", l.load)?;
        row.set_item("elastic_classes", l.elastic_classes)?;
        loads.append(row)?;
    }
    d.set_item("offered_load", loads)?;
    Ok(d)
}

/// TOML text as JSON text (the engine's reader: ten times faster than Python's on a
/// 65,538-link scenario; a date or time is refused naming its key, nesting beyond
/// the parser's recursion limit refused too).
#[pyfunction]
fn toml_to_json(text: &str) -> PyResult<String> {
    match catch_unwind(|| scenario::parse_toml(text)) {
        Ok(Ok(v)) => Ok(v.to_string()),
        Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
        Err(p) => Err(internal(p)),
    }
}

/// Parse and validate a scenario, panics and errors turned into Python exceptions.
fn load(scenario_json: &str, base_dir: &str, seed: Option<u64>) -> PyResult<(Config, Vec<String>)> {
    match catch_unwind(|| scenario::load_json(scenario_json, Path::new(base_dir), seed)) {
        Ok(Ok(x)) => Ok(x),
        Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
        Err(p) => Err(internal(p)),
    }
}

/// Run a scenario (JSON text) and return its tables as columns.
///
/// `progress(sim_seconds)` is called about every 65k events; if it raises, the run
/// stops and the exception propagates.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=".", seed=None, progress=None))]
fn run_scenario<'py>(
    py: Python<'py>,
    scenario_json: &str,
    base_dir: &str,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (cfg, warnings) = load(scenario_json, base_dir, seed)?;
    run(py, cfg, warnings, progress)
}

/// Run a canonical configuration (the `config` of `validate_scenario`, or one
/// written next to a result) as it is.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run_config<'py>(py: Python<'py>, config_json: &str, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    let cfg = match catch_unwind(|| Config::from_json(config_json, &Registry::new())) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(ScenarioError::new_err(e.to_string())),
        Err(p) => return Err(internal(p)),
    };
    run(py, cfg, Vec::new(), progress)
}

fn run<'py>(py: Python<'py>, cfg: Config, warnings: Vec<String>, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    let config_json = cfg.to_json();
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut hook = |t: SimTime| -> bool {
            if callback_error.is_some() {
                return false;
            }
            Python::attach(|py| {
                let r = match &progress {
                    Some(cb) => cb.call1(py, (t.as_secs_f64(),)).map(|_| ()),
                    None => py.check_signals(),
                };
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        callback_error = Some(e);
                        false
                    }
                }
            })
        };
        catch_unwind(AssertUnwindSafe(|| Simulation::new(cfg, warnings).run(&mut hook)))
    });
    let mut result = outcome.map_err(internal)?;
    if let Some(e) = callback_error {
        return Err(e);
    }
    // The traces go through their own glue (trace.rs), beside the tables.
    let traces = std::mem::take(&mut result.traces);
    let d = to_python(py, result)?;
    d.set_item("traces", crate::trace::to_python(py, traces)?)?;
    d.set_item("config", config_json)?;
    Ok(d)
}

/// A table's columns (the engine's list, `cclab_sim::metrics::columns`) as a dict of
/// NumPy arrays (lists for text and for whole numbers that may be absent).
fn columns<'py>(py: Python<'py>, cols: Columns) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in cols {
        match col {
            Column::F64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::U64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::U32(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::U8(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::Bool(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::Text(v) => d.set_item(name, v)?,
            Column::OptionalU64(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

fn to_python<'py>(py: Python<'py>, r: RunResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", columns(py, r.flows.into_columns())?)?;
    d.set_item("class_names", r.class_names)?;
    d.set_item("links", columns(py, link_columns(&r.links))?)?;
    let mut s = r.series;
    let (metric_names, entity_names) = (std::mem::take(&mut s.metric_names), std::mem::take(&mut s.entity_names));
    let series = columns(py, s.into_columns())?;
    series.set_item("metric_names", metric_names)?;
    series.set_item("entity_names", entity_names)?;
    d.set_item("series", series)?;
    d.set_item("arrivals", columns(py, r.arrivals.into_columns())?)?;
    d.set_item("link_names", r.link_names)?;
    let summary = PyDict::new(py);
    for (k, v) in r.summary {
        match v {
            Scalar::Num(x) => summary.set_item(k, x)?,
            Scalar::Int(i) => summary.set_item(k, i)?,
            Scalar::Unsigned(u) => summary.set_item(k, u)?,
            Scalar::Text(t) => summary.set_item(k, t)?,
        }
    }
    d.set_item("summary", summary)?;
    d.set_item("warnings", r.warnings)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_config, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    Ok(())
}
