//! `cclab._core`: the Python extension module. Glue only: every algorithm lives in
//! the pure-Rust crates; each submodule here converts arguments and results.
use pyo3::prelude::*;

mod control;
mod flowsim;
mod sim;
mod smooth;
mod trace;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Part of every stored result's key (python/cclab/sweeps/store.py).
    m.add("ENGINE_RESULTS_VERSION", cclab_sim::RESULTS_VERSION)?;
    sim::register(m)?;
    flowsim::register(m)?;
    smooth::register(m)?;
    control::register(m)?;
    Ok(())
}
