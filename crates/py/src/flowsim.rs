//! Bindings of the `cclab-flowsim` crate: `cclab._core.flowsim_run`.
use cclab_control::read::{self, Kind, Setting};
use cclab_control::{AccessParams, ParamError};
use cclab_flowsim::{simulate, Class, ClassKind, Policy, Scenario, SizeDist, Source};
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

type ClassSpec = (String, String, String, Vec<usize>, HashMap<String, Value>);

struct Params<'a> {
    at: String,
    p: &'a HashMap<String, Value>,
}

impl Params<'_> {
    fn req(&self, key: &str) -> PyResult<f64> {
        self.opt(key).ok_or_else(|| {
            PyValueError::new_err(format!("{}.{key}: required parameter is missing (a number)", self.at))
        })
    }
    fn opt(&self, key: &str) -> Option<f64> {
        match self.p.get(key) {
            Some(Value::Number(x)) => Some(*x),
            _ => None,
        }
    }
    fn only(&self, allowed: &[&str]) -> PyResult<()> {
        for k in self.p.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "{}.{k}: unknown parameter (allowed: {})",
                    self.at,
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }
    fn size(&self) -> PyResult<SizeDist> {
        let mean = self.opt("mean_size").unwrap_or(1.0);
        Ok(match self.opt("shape") {
            None => SizeDist::Exp { mean },
            Some(shape) => SizeDist::Pareto { mean, shape },
        })
    }
    fn count(&self, key: &str) -> PyResult<u32> {
        let v = self.req(key)?;
        if !(v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64) {
            return Err(PyValueError::new_err(format!(
                "{}.{key}: must be a non-negative integer, got {v}",
                self.at
            )));
        }
        Ok(v as u32)
    }
}

/// An access policy's settings from the class's parameters (times in the model's unit).
struct AccessSource<'a, 'b> {
    p: &'a Params<'b>,
    asked: Vec<&'static str>,
}

/// An access policy (`static`, `rate_tracking` or `fairbat`) read by `cclab_control::read`
/// from the parameters `p` (errors say `{at}.{key}: ...`); `also` are further keys the
/// caller knows, every other key is an error.
pub(crate) fn read_access(at: &str, policy: &str, p: &HashMap<String, Value>, also: &[&'static str]) -> PyResult<AccessParams> {
    let p = Params { at: at.to_string(), p };
    let mut src = AccessSource { p: &p, asked: Vec::from(also) };
    let a = read::read(policy, &mut src).map_err(|e| PyValueError::new_err(format!("{}.{}: {}", p.at, e.key, e.message)))?;
    p.only(&src.asked)?;
    Ok(a)
}

impl read::Source for AccessSource<'_, '_> {
    fn get(&mut self, key: &'static str, kind: Kind) -> Result<Option<Setting>, ParamError> {
        self.asked.push(key);
        let wrong = |what: &str| ParamError { key: key.into(), message: format!("expected {what}") };
        match (self.p.p.get(key), kind) {
            (None, _) => Ok(None),
            (Some(Value::Name(s)), Kind::Choice(_)) => Ok(Some(Setting::Choice(s.clone()))),
            (Some(Value::Number(x)), Kind::Number | Kind::Seconds) => Ok(Some(Setting::Number(*x))),
            (Some(_), Kind::Choice(names)) => Err(wrong(&format!("one of {names:?}"))),
            (Some(_), _) => Err(wrong("a number")),
        }
    }
}

fn class_from(i: usize, spec: &ClassSpec) -> PyResult<Class> {
    let (name, kind, policy, route, params) = spec;
    let p = Params {
        at: format!("classes[{i}]"),
        p: params,
    };
    let kind = match kind.as_str() {
        "short" => {
            p.only(&["rate", "mean_size", "shape"])?;
            ClassKind::Short {
                rate: p.req("rate")?,
                size: p.size()?,
            }
        }
        "long" => {
            p.only(&["count"])?;
            ClassKind::Long {
                count: p.count("count")?,
            }
        }
        "background" => {
            let source = match p.opt("rate") {
                Some(rate) => Source::Stream {
                    rate,
                    size: p.size()?,
                },
                None => Source::Saturated,
            };
            let common = ["rate", "mean_size", "shape"];
            let allow = |extra: &[&str]| -> PyResult<()> {
                let v: Vec<&str> = common.iter().chain(extra.iter()).copied().collect();
                p.only(&v)
            };
            let policy = match policy.as_str() {
                "threshold" => {
                    allow(&["n0", "x_next"])?;
                    let n0 = p.req("n0")?;
                    if !(n0 >= -1.0 && n0.fract() == 0.0 && n0 <= i32::MAX as f64) {
                        return Err(PyValueError::new_err(format!("classes[{i}].n0: must be an integer >= -1, got {n0}")));
                    }
                    Policy::Threshold { n0: n0 as i32, x_next: p.opt("x_next") }
                }
                "implementable" => {
                    allow(&["x_cap"])?;
                    Policy::Implementable { x_cap: p.req("x_cap")? }
                }
                "wtcp" => {
                    allow(&["w"])?;
                    Policy::Wtcp { w: p.req("w")? }
                }
                // Access control: parameters, defaults and checks from cclab_control.
                "access_control" | "fairbat" | "rate_tracking" => {
                    let name = if policy == "access_control" { "static" } else { policy.as_str() };
                    Policy::Access(read_access(&p.at, name, p.p, &common)?)
                }
                "vanilla" => {
                    allow(&[])?;
                    Policy::Vanilla
                }
                "low_priority" => {
                    allow(&[])?;
                    Policy::LowPriority
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "classes[{i}].policy: unknown policy {other:?} (threshold, implementable, wtcp, access_control, fairbat, rate_tracking, vanilla, low_priority)"
                    )))
                }
            };
            ClassKind::Background { source, policy }
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "classes[{i}].kind: unknown kind {other:?} (short, long, background)"
            )))
        }
    };
    Ok(Class {
        name: name.clone(),
        route: route.clone(),
        kind,
    })
}

/// Run the flow-level simulator; returns a dict of per-replication statistics.
#[pyfunction]
#[pyo3(signature = (capacities, classes, duration, warmup, replications, seed, threads=1))]
#[allow(clippy::too_many_arguments)]
fn flowsim_run<'py>(
    py: Python<'py>,
    capacities: Vec<f64>,
    classes: Vec<ClassSpec>,
    duration: f64,
    warmup: f64,
    replications: u32,
    seed: u64,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let classes = classes
        .iter()
        .enumerate()
        .map(|(i, c)| class_from(i, c))
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
