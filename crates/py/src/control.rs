//! Bindings of `cclab-control`: `cclab._core.AccessController`, the same sans-IO access
//! controller the simulators use, for the real-network transfer manager
//! (`cclab.bgtransfer`). Parameters are read and checked by `cclab_control::read`
//! exactly as for the flow-level simulator (same keys, defaults and messages).
use crate::flowsim::{to_params, Value};
use cclab_control::read::read_map;
use cclab_control::{AccessController as Controller, AccessParams};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;

/// An access controller over chunks named by integers.
///
/// `AccessController(params, start, measure_from=start, at="access")`: `params` is a dict
/// with `policy` ("static", "rate_tracking" or "fairbat") and that policy's keys
/// (`limit`, `m0`, `period`, `tau`, ...); errors name `{at}.{key}`.
#[pyclass(module = "cclab._core")]
pub struct AccessController {
    inner: Controller<u64>,
    params: AccessParams,
    policy: &'static str,
    last: f64,
}

impl AccessController {
    /// Time never runs backwards in the controller: a caller's clock that does is an error.
    fn at(&mut self, now: f64) -> PyResult<f64> {
        if !now.is_finite() || now < self.last - 1e-9 {
            return Err(PyValueError::new_err(format!("AccessController: time went back from {} to {now}", self.last)));
        }
        self.last = self.last.max(now);
        Ok(self.last)
    }
}

#[pymethods]
impl AccessController {
    #[new]
    #[pyo3(signature = (params, start, measure_from=None, at="access"))]
    fn new(params: HashMap<String, Value>, start: f64, measure_from: Option<f64>, at: &str) -> PyResult<Self> {
        let policy = match params.get("policy") {
            Some(Value::Name(s)) => s.clone(),
            Some(Value::Number(x)) => return Err(PyValueError::new_err(format!("{at}.policy: expected a name, got {x}"))),
            None => return Err(PyValueError::new_err(format!("{at}.policy: missing (static, rate_tracking or fairbat)"))),
        };
        let a = read_map(&policy, &to_params(&params), &["policy"]).map_err(|e| PyValueError::new_err(format!("{at}.{}: {}", e.key, e.message)))?;
        if !start.is_finite() {
            return Err(PyValueError::new_err(format!("AccessController: start must be finite, got {start}")));
        }
        let inner = Controller::new(&a, start, measure_from.unwrap_or(start))
            .map_err(|e| PyValueError::new_err(format!("{at}.{}: {}", e.key, e.message)))?;
        Ok(AccessController { inner, params: a, policy: a.policy(), last: start })
    }

    /// A chunk `id` of `bytes` arrives at `now` and waits.
    fn arrive(&mut self, now: f64, id: u64, bytes: f64) -> PyResult<()> {
        let now = self.at(now)?;
        self.inner.arrive(now, id, bytes);
        Ok(())
    }

    /// The next chunk to start now, if the limit allows one (call until None).
    fn admit(&mut self, now: f64) -> PyResult<Option<u64>> {
        let now = self.at(now)?;
        Ok(self.inner.admit(now))
    }

    /// An active chunk finished at `now`.
    fn complete(&mut self, now: f64) -> PyResult<()> {
        let now = self.at(now)?;
        if self.inner.active() == 0 {
            return Err(PyValueError::new_err("AccessController.complete: no chunk is active"));
        }
        self.inner.complete(now);
        Ok(())
    }

    /// When `on_deadline` must next be called (inf: never).
    fn next_deadline(&self) -> f64 {
        self.inner.next_deadline()
    }

    /// A deadline is due: update the limit if a period has ended; `delivered_bytes` is
    /// the total the chunks have delivered so far (rate tracking measures it).
    fn on_deadline(&mut self, now: f64, delivered_bytes: f64) -> PyResult<()> {
        let now = self.at(now)?;
        self.inner.on_deadline(now, delivered_bytes);
        Ok(())
    }

    /// Let time run to `now` with nothing happening (for `averages`).
    fn advance_to(&mut self, now: f64) -> PyResult<()> {
        let now = self.at(now)?;
        self.inner.advance_to(now);
        Ok(())
    }

    /// The limit M(t) (fractional in general).
    #[getter]
    fn limit(&self) -> f64 {
        self.inner.limit()
    }
    /// Chunks transferring.
    #[getter]
    fn active(&self) -> u32 {
        self.inner.active()
    }
    /// Chunks waiting.
    #[getter]
    fn waiting(&self) -> usize {
        self.inner.waiting()
    }
    /// Limit updates done.
    #[getter]
    fn updates(&self) -> u64 {
        self.inner.updates()
    }
    /// "static", "rate_tracking" or "fairbat".
    #[getter]
    fn policy(&self) -> &'static str {
        self.policy
    }
    /// Whether `on_deadline` reads the delivered bytes.
    #[getter]
    fn measures_delivery(&self) -> bool {
        self.inner.measures_delivery()
    }

    /// Every parameter after defaults, in the canonical JSON form of the simulators'
    /// configurations (`{"policy": "fairbat", "m0": 1.0, ..., "period_s": 120.0, ...}`).
    fn params_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.params).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Time averages since `measure_from`: span, limit, limit_sd, active, waiting.
    fn averages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let a = self.inner.averages();
        let d = PyDict::new(py);
        d.set_item("span", a.span)?;
        d.set_item("limit", a.limit)?;
        d.set_item("limit_sd", a.limit_sd)?;
        d.set_item("active", a.active)?;
        d.set_item("waiting", a.waiting)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "AccessController(policy={:?}, limit={}, active={}, waiting={})",
            self.policy,
            self.inner.limit(),
            self.inner.active(),
            self.inner.waiting()
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AccessController>()?;
    Ok(())
}
