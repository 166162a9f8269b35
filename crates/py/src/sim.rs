//! Bindings of the `cclab-sim` crate: run a scenario, validate a scenario.
use cclab_sim::metrics::{RunResult, Scalar};
use cclab_sim::{engine::SimTime, scenario, Simulation};
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
/// "seed", "plan"} or raises ScenarioError. `plan` is the resolved scenario (nodes,
/// links with both directions of duplex links, classes with their endpoints and
/// routes, TCP parameters), in SI units: what another simulator needs to run the
/// same thing (bench/ns3 uses it).
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=".", seed=None))]
fn validate_scenario<'py>(py: Python<'py>, scenario_json: &str, base_dir: &str, seed: Option<u64>) -> PyResult<Bound<'py, PyDict>> {
    match catch_unwind(|| scenario::load_json(scenario_json, Path::new(base_dir), seed)) {
        Ok(Ok((cfg, warnings))) => {
            let d = PyDict::new(py);
            d.set_item("warnings", warnings)?;
            d.set_item("duration_s", cfg.duration.as_secs_f64())?;
            d.set_item("warmup_s", cfg.warmup.as_secs_f64())?;
            d.set_item("seed", cfg.seed)?;
            d.set_item("plan", plan(py, &cfg)?)?;
            Ok(d)
        }
        Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
        Err(p) => Err(internal(p)),
    }
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

/// The resolved scenario as plain Python values.
fn plan<'py>(py: Python<'py>, cfg: &scenario::Config) -> PyResult<Bound<'py, PyDict>> {
    use scenario::{ClassKind, SizeDist};
    let p = PyDict::new(py);
    p.set_item("name", &cfg.name)?;
    p.set_item("nodes", cfg.nodes.clone())?;
    let t = &cfg.tcp;
    let tcp = PyDict::new(py);
    tcp.set_item("mss", t.mss)?;
    tcp.set_item("header", t.header)?;
    tcp.set_item("initial_window", t.initial_window)?;
    tcp.set_item("receive_window", (t.receive_window != u64::MAX).then_some(t.receive_window))?;
    tcp.set_item("min_rto_s", secs(t.min_rto))?;
    tcp.set_item("max_rto_s", secs(t.max_rto))?;
    tcp.set_item("initial_rto_s", secs(t.initial_rto))?;
    tcp.set_item("delayed_ack", t.delayed_ack)?;
    tcp.set_item("delayed_ack_timeout_s", secs(t.delayed_ack_timeout))?;
    tcp.set_item("dupack_threshold", t.dupack_threshold)?;
    tcp.set_item("handshake", t.handshake)?;
    tcp.set_item("limited_transmit", t.limited_transmit)?;
    tcp.set_item("partial_ack_timer", if t.impatient { "impatient" } else { "slow_but_steady" })?;
    p.set_item("tcp", tcp)?;
    let links = PyList::empty(py);
    for l in &cfg.links {
        let d = PyDict::new(py);
        d.set_item("name", &l.name)?;
        d.set_item("from", &cfg.nodes[l.from])?;
        d.set_item("to", &cfg.nodes[l.to])?;
        d.set_item("rate_bps", l.rate_bps)?;
        d.set_item("delay_s", secs(l.delay))?;
        d.set_item("limit_packets", l.limit_packets)?;
        d.set_item("limit_bytes", l.limit_bytes)?;
        links.append(d)?;
    }
    p.set_item("links", links)?;
    let classes = PyList::empty(py);
    for c in &cfg.classes {
        let d = PyDict::new(py);
        d.set_item("name", &c.name)?;
        d.set_item("src", &cfg.nodes[c.src])?;
        d.set_item("dst", &cfg.nodes[c.dst])?;
        d.set_item("route", c.fwd_route.iter().map(|&i| cfg.links[i].name.clone()).collect::<Vec<_>>())?;
        d.set_item("ack_route", c.rev_route.iter().map(|&i| cfg.links[i].name.clone()).collect::<Vec<_>>())?;
        d.set_item("protocol", c.protocol.name())?;
        d.set_item("start_s", secs(c.start))?;
        // None: the class keeps creating flows to the end of the run.
        d.set_item("stop_s", (c.stop < cfg.duration).then(|| secs(c.stop)))?;
        match &c.kind {
            ClassKind::Poisson { rate_per_s, size } => {
                d.set_item("type", "poisson")?;
                d.set_item("arrival_rate", *rate_per_s)?;
                d.set_item("mean_size", size.mean())?;
                let dist = match size {
                    SizeDist::Exponential { .. } => "exponential",
                    SizeDist::Pareto { .. } => "pareto",
                    SizeDist::Constant { .. } => "constant",
                    SizeDist::Empirical { .. } => "empirical",
                };
                d.set_item("size_dist", dist)?;
            }
            ClassKind::LongLived { count } => {
                d.set_item("type", "long_lived")?;
                d.set_item("count", *count)?;
            }
            ClassKind::FlowList { flows } => {
                d.set_item("type", "flow_list")?;
                d.set_item("starts", flows.iter().map(|f| secs(f.0)).collect::<Vec<_>>())?;
                d.set_item("sizes", flows.iter().map(|f| f.1).collect::<Vec<_>>())?;
            }
            ClassKind::Cbr { rate_bps, packet, starts } => {
                d.set_item("type", "cbr")?;
                d.set_item("rate_bps", *rate_bps)?;
                d.set_item("packet_size", *packet)?;
                d.set_item("starts", starts.iter().map(|&t| secs(t)).collect::<Vec<_>>())?;
            }
        }
        classes.append(d)?;
    }
    p.set_item("classes", classes)?;
    Ok(p)
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
    let (cfg, warnings) = match catch_unwind(|| scenario::load_json(scenario_json, Path::new(base_dir), seed)) {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => return Err(ScenarioError::new_err(e.to_string())),
        Err(p) => return Err(internal(p)),
    };
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
    let result = outcome.map_err(internal)?;
    if let Some(e) = callback_error {
        return Err(e);
    }
    to_python(py, result)
}

fn to_python<'py>(py: Python<'py>, r: RunResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let f = r.flows;
    let flows = PyDict::new(py);
    flows.set_item("class", f.class.into_pyarray(py))?;
    flows.set_item("id", f.id.into_pyarray(py))?;
    flows.set_item("size", f.size.into_pyarray(py))?;
    flows.set_item("arrival", f.arrival.into_pyarray(py))?;
    flows.set_item("finish", f.finish.into_pyarray(py))?;
    flows.set_item("completion_time", f.completion_time.into_pyarray(py))?;
    flows.set_item("bytes_delivered", f.bytes_delivered.into_pyarray(py))?;
    flows.set_item("retransmissions", f.retransmissions.into_pyarray(py))?;
    flows.set_item("timeouts", f.timeouts.into_pyarray(py))?;
    flows.set_item("finished", f.finished.into_pyarray(py))?;
    flows.set_item("warmup", f.warmup.into_pyarray(py))?;
    d.set_item("flows", flows)?;
    d.set_item("class_names", r.class_names)?;

    let links = PyList::empty(py);
    for l in r.links {
        let row = PyDict::new(py);
        row.set_item("name", l.name)?;
        row.set_item("from", l.from)?;
        row.set_item("to", l.to)?;
        row.set_item("rate_bps", l.rate_bps)?;
        row.set_item("delay_s", l.delay_s)?;
        row.set_item("packets_sent", l.packets_sent)?;
        row.set_item("bytes_sent", l.bytes_sent)?;
        row.set_item("drops", l.drops)?;
        row.set_item("drop_rate", l.drop_rate)?;
        row.set_item("utilization", l.utilization)?;
        row.set_item("mean_queue_packets", l.mean_queue_packets)?;
        row.set_item("mean_queue_bytes", l.mean_queue_bytes)?;
        row.set_item("max_queue_packets", l.max_queue_packets)?;
        row.set_item("max_queue_bytes", l.max_queue_bytes)?;
        row.set_item("limit_packets", l.limit_packets)?;
        row.set_item("limit_bytes", l.limit_bytes)?;
        row.set_item("peak_queue_packets", l.peak_queue_packets)?;
        row.set_item("peak_queue_bytes", l.peak_queue_bytes)?;
        links.append(row)?;
    }
    d.set_item("links", links)?;

    let s = r.series;
    let series = PyDict::new(py);
    series.set_item("time", s.time.into_pyarray(py))?;
    series.set_item("metric", s.metric.into_pyarray(py))?;
    series.set_item("name", s.name.into_pyarray(py))?;
    series.set_item("value", s.value.into_pyarray(py))?;
    series.set_item("metric_names", s.metric_names)?;
    series.set_item("entity_names", s.entity_names)?;
    d.set_item("series", series)?;

    let a = r.arrivals;
    let arrivals = PyDict::new(py);
    arrivals.set_item("time", a.time.into_pyarray(py))?;
    arrivals.set_item("link", a.link.into_pyarray(py))?;
    arrivals.set_item("queue_packets", a.queue_packets.into_pyarray(py))?;
    arrivals.set_item("queue_bytes", a.queue_bytes.into_pyarray(py))?;
    arrivals.set_item("backlog", a.backlog.into_pyarray(py))?;
    arrivals.set_item("dropped", a.dropped.into_pyarray(py))?;
    d.set_item("arrivals", arrivals)?;
    d.set_item("link_names", r.link_names)?;

    let summary = PyDict::new(py);
    for (k, v) in r.summary {
        match v {
            Scalar::Num(x) => summary.set_item(k, x)?,
            Scalar::Int(i) => summary.set_item(k, i)?,
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
    Ok(())
}
