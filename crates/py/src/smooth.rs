//! Bindings of the `cclab-smooth` crate: the exact steady-state queue and loss of N ideally
//! smooth senders (lower-bounds paper, sections V-VI). Conversions only; the Python API is
//! `cclab.theory.lower_bounds`.
use cclab_smooth as sm;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn value_error(e: sm::ParamError) -> PyErr {
    PyValueError::new_err(format!("{}: {}", e.arg, e.reason))
}

/// Steady-state queue sizes (packets) of every packet of `runs` runs, flat (runs * n),
/// each run's n packets in order of arrival within the period.
#[pyfunction]
#[pyo3(signature = (n, dist, k, utilization, runs, seed, threads=0))]
fn smooth_queue_runs<'py>(
    py: Python<'py>,
    n: usize,
    dist: &str,
    k: f64,
    utilization: f64,
    runs: usize,
    seed: u64,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let d = sm::Dist::from_name(dist, k).map_err(value_error)?;
    let v = py
        .detach(|| sm::queue_runs(n, d, utilization, runs, seed, threads))
        .map_err(value_error)?;
    Ok(PyArray1::from_vec(py, v))
}

/// Steady-state loss with a drop-tail buffer of `buffer` packets for each run:
/// (loss, periods, cycle, converged, max_queue) arrays of length `runs`.
#[pyfunction]
#[pyo3(signature = (n, dist, k, utilization, buffer, runs, seed, max_periods, threads=0))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn smooth_loss_runs<'py>(
    py: Python<'py>,
    n: usize,
    dist: &str,
    k: f64,
    utilization: f64,
    buffer: u64,
    runs: usize,
    seed: u64,
    max_periods: u32,
    threads: usize,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<f64>>,
)> {
    let d = sm::Dist::from_name(dist, k).map_err(value_error)?;
    let v = py
        .detach(|| sm::loss_runs(n, d, utilization, buffer, runs, seed, max_periods, threads))
        .map_err(value_error)?;
    Ok((
        PyArray1::from_vec(py, v.iter().map(|r| r.loss).collect()),
        PyArray1::from_vec(py, v.iter().map(|r| r.periods).collect()),
        PyArray1::from_vec(py, v.iter().map(|r| r.cycle).collect()),
        PyArray1::from_vec(py, v.iter().map(|r| r.converged).collect()),
        PyArray1::from_vec(py, v.iter().map(|r| r.max_queue).collect()),
    ))
}

/// Arrival times (integer ticks, t_1 = 0) of run `run`: the draws the batch functions use.
#[pyfunction]
#[pyo3(signature = (n, dist, k, utilization, seed, run, ticks_per_packet))]
#[allow(clippy::too_many_arguments)]
fn smooth_arrivals<'py>(
    py: Python<'py>,
    n: usize,
    dist: &str,
    k: f64,
    utilization: f64,
    seed: u64,
    run: usize,
    ticks_per_packet: i64,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let d = sm::Dist::from_name(dist, k).map_err(value_error)?;
    let v = sm::run_arrivals(n, d, utilization, seed, run, ticks_per_packet).map_err(value_error)?;
    Ok(PyArray1::from_vec(py, v))
}

/// Steady state for explicit arrival times (integer ticks): (waits per flow in the given
/// order, -1 if dropped; phase per flow; periods; cycle; drops; converged; boundary work).
#[pyfunction]
#[pyo3(signature = (arrivals, period, packet_time, buffer, max_periods))]
#[allow(clippy::type_complexity)]
fn smooth_steady<'py>(
    py: Python<'py>,
    arrivals: PyReadonlyArray1<'py, i64>,
    period: i64,
    packet_time: i64,
    buffer: Option<u64>,
    max_periods: u32,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, u32, u32, u64, bool, i64)> {
    let a = arrivals.as_slice().map(|s| s.to_vec()).unwrap_or_else(|_| arrivals.as_array().to_vec());
    let (waits, phases, st) = py
        .detach(|| sm::steady_at_arrivals(&a, period, packet_time, buffer, max_periods))
        .map_err(value_error)?;
    Ok((
        PyArray1::from_vec(py, waits),
        PyArray1::from_vec(py, phases),
        st.periods,
        st.cycle,
        st.drops,
        st.converged,
        st.boundary,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SMOOTH_TICKS_PER_PACKET", sm::TICKS_PER_PACKET)?;
    m.add_function(wrap_pyfunction!(smooth_queue_runs, m)?)?;
    m.add_function(wrap_pyfunction!(smooth_loss_runs, m)?)?;
    m.add_function(wrap_pyfunction!(smooth_arrivals, m)?)?;
    m.add_function(wrap_pyfunction!(smooth_steady, m)?)?;
    Ok(())
}
