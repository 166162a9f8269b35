//! Bindings of a run's traces (`cclab_sim::metrics::Traces`): columns of each
//! trace table with their code names, and the libpcap files by link index.
use cclab_sim::metrics::trace::{LinkTable, PacketTable, VarTable};
use cclab_sim::metrics::Traces;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// {"flows", "packets", "links", "access": {column: ndarray, ..., "*_names": [...]},
/// "pcap": [(link index, bytes)]}.
pub fn to_python<'py>(py: Python<'py>, t: Traces) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", variables(py, t.flows)?)?;
    d.set_item("access", variables(py, t.access)?)?;
    d.set_item("packets", packets(py, t.packets)?)?;
    d.set_item("links", links(py, t.links)?)?;
    let pcap: Vec<(u32, Bound<'py, PyBytes>)> = t.pcap.into_iter().map(|(l, b)| (l, PyBytes::new(py, &b))).collect();
    d.set_item("pcap", pcap)?;
    Ok(d)
}

fn variables<'py>(py: Python<'py>, v: VarTable) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", v.time.into_pyarray(py))?;
    d.set_item("entity", v.entity.into_pyarray(py))?;
    d.set_item("variable", v.variable.into_pyarray(py))?;
    d.set_item("value", v.value.into_pyarray(py))?;
    d.set_item("variable_names", v.names)?;
    Ok(d)
}

fn packets<'py>(py: Python<'py>, p: PacketTable) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", p.time.into_pyarray(py))?;
    d.set_item("flow", p.flow.into_pyarray(py))?;
    d.set_item("event", p.event.into_pyarray(py))?;
    d.set_item("seq", p.seq.into_pyarray(py))?;
    d.set_item("end", p.end.into_pyarray(py))?;
    d.set_item("link", p.link.into_pyarray(py))?;
    d.set_item("event_names", PacketTable::event_names())?;
    Ok(d)
}

fn links<'py>(py: Python<'py>, l: LinkTable) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", l.time.into_pyarray(py))?;
    d.set_item("link", l.link.into_pyarray(py))?;
    d.set_item("event", l.event.into_pyarray(py))?;
    d.set_item("flow", l.flow.into_pyarray(py))?;
    d.set_item("seq", l.seq.into_pyarray(py))?;
    d.set_item("size", l.size.into_pyarray(py))?;
    d.set_item("ack", l.ack.into_pyarray(py))?;
    d.set_item("queue_packets", l.queue_packets.into_pyarray(py))?;
    d.set_item("queue_bytes", l.queue_bytes.into_pyarray(py))?;
    d.set_item("wait", l.wait.into_pyarray(py))?;
    d.set_item("event_names", LinkTable::event_names())?;
    Ok(d)
}
