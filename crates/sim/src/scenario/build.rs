//! Reading a scenario document into a `Config`: names resolved to indices,
//! routes computed and checked, units converted, files read. Every error names
//! the key path in the file.
use super::classes::{read_class, Names};
use super::trace::read_trace;
use crate::config::estimate::{Culprit, Limits};
use crate::config::load::{offered_load, overload_warnings};
use crate::config::{Config, FORMAT};
use crate::engine::SimTime;
use crate::metrics::RecordConfig;
use crate::net::queue::{LinkSpeed, QueueRegistry};
use crate::net::{Graph, LinkConfig, Queue};
use crate::settings::{err, Duration, Result, Table, Value, WholeRate};
use crate::traffic::{Arrivals, ClassConfig};
use crate::transport::cc::Registry;
use crate::transport::tcp::TcpParams;
use std::collections::HashMap;
use std::path::Path;

/// Read and validate a scenario document; `seed` overrides the file's. Returns the
/// configuration and the warnings (e.g. an offered load at or above a link's capacity).
pub fn build(doc: &Value, base_dir: &Path, seed: Option<u64>, registry: &Registry) -> Result<(Config, Vec<String>)> {
    let mut top = Table::new(doc, "")?;
    let name: String = top.or("name", "scenario".to_string())?;
    let _description: Option<String> = top.get("description")?;
    let (duration, warmup) = read_duration_and_warmup(&mut top)?;
    let file_seed: Option<u64> = top.get("seed")?;
    let tcp = match top.table("tcp")? {
        Some(t) => TcpParams::read(t, &TcpParams::default())?,
        None => TcpParams::default(),
    };
    let mut names = read_nodes_and_links(&mut top, registry.queues())?;
    let graph_links = names.links.clone();
    let graph = Graph::new(names.nodes.len(), &graph_links);

    let classes = read_classes(&mut top, &names, &graph, &tcp, registry, base_dir)?;
    let mut warnings = overload_warnings(&offered_load(&names.links, &classes, duration));
    warnings.extend(slow_link_warnings(&classes, &names.links));
    let record = read_record(&mut top, &names.link_ix)?;
    let trace = match top.table("trace")? {
        Some(t) => read_trace(t, &names.link_ix, &classes)?,
        None => Default::default(),
    };
    let limits = match top.table("limits")? {
        Some(t) => Limits::read(t)?,
        None => Limits::default(),
    };
    top.finish("a scenario")?;
    let config = Config {
        format: FORMAT.to_string(),
        name,
        seed: seed.or(file_seed).unwrap_or(1),
        duration,
        warmup,
        nodes: std::mem::take(&mut names.nodes),
        links: std::mem::take(&mut names.links),
        classes,
        record,
        trace,
        limits,
    };
    // What the run will need, blamed on the scenario's keys.
    let traffic = doc.get("traffic").and_then(|t| t.as_array());
    config.estimate().check(&config.limits, &|c| match c {
        Culprit::Duration => "duration".into(),
        Culprit::RecordInterval => "record.interval".into(),
        Culprit::RecordArrivals(j) => format!("record.arrivals[{j}]"),
        Culprit::TraceFlows(j) => format!("trace.flows[{j}]"),
        Culprit::TraceLinks(j) => format!("trace.links[{j}]"),
        Culprit::TracePcap(j) => format!("trace.pcap[{j}]"),
        Culprit::TraceInterval => "trace.interval".into(),
        // The scenario's link that made configuration link l (a duplex link makes two).
        Culprit::Queue(l) => {
            let mut made = 0;
            let items = doc.get("links").and_then(|v| v.as_array()).map_or(&[][..], |v| v.as_slice());
            let j = items.iter().position(|it| {
                made += if it.get("duplex").and_then(|d| d.as_bool()) == Some(false) { 1 } else { 2 };
                made > l
            });
            format!("links[{}].queue.limit", j.unwrap_or(0))
        }
        Culprit::Class(i) => {
            let given = |k: &str| traffic.and_then(|t| t.get(i)).and_then(|t| t.get(k)).is_some_and(|v| !v.is_null());
            let key = match &config.classes[i].arrivals {
                Arrivals::Poisson { .. } if given("arrival_rate") => "arrival_rate",
                Arrivals::Poisson { .. } => "size",
                Arrivals::LongLived { .. } => "count",
                Arrivals::Starts { .. } => "starts",
                Arrivals::FlowList { .. } => "file",
            };
            format!("traffic[{i}].{key}")
        }
    })?;
    debug_assert_eq!(config.check(registry), Ok(()));
    Ok((config, warnings))
}

/// The node list (explicit, or the links' endpoints in order of appearance) and
/// the links, both directions of a duplex link.
fn read_nodes_and_links(top: &mut Table, queues: &QueueRegistry) -> Result<Names> {
    let mut n = Names { nodes: Vec::new(), node_ix: HashMap::new(), links: Vec::new(), link_ix: HashMap::new() };
    let explicit = top.get::<Vec<String>>("nodes")?;
    if let Some(list) = &explicit {
        for (i, node) in list.iter().enumerate() {
            if node.is_empty() {
                return err(format!("nodes[{i}]"), "expected a non-empty name");
            }
            if n.node_ix.insert(node.clone(), i as u32).is_some() {
                return err(format!("nodes[{i}]"), format!("duplicate node name {node:?}"));
            }
            n.nodes.push(node.clone());
        }
    }
    let items = top.list("links")?.unwrap_or_default();
    if items.is_empty() {
        return err("links", "expected at least one link");
    }
    for (p, v) in items {
        let mut t = Table::new(v, p.clone())?;
        let given_name: Option<String> = t.get("name")?;
        let from_name: String = t.req("from", "the node the link starts at")?;
        let to_name: String = t.req("to", "the node the link ends at")?;
        let mut endpoint = |name: &str, key: &str| -> Result<u32> {
            if name.is_empty() {
                return err(format!("{p}.{key}"), "expected a node name, got an empty string");
            }
            if let Some(&ix) = n.node_ix.get(name) {
                return Ok(ix);
            }
            if explicit.is_some() {
                return err(format!("{p}.{key}"), format!("unknown node {name:?}; nodes are: {}", n.nodes.join(", ")));
            }
            n.nodes.push(name.to_string());
            n.node_ix.insert(name.to_string(), (n.nodes.len() - 1) as u32);
            Ok((n.nodes.len() - 1) as u32)
        };
        let from = endpoint(&from_name, "from")?;
        let to = endpoint(&to_name, "to")?;
        if from == to {
            return err(format!("{p}.to"), format!("a link must join two different nodes, got {from_name:?} twice"));
        }
        let rate_bps = t.req::<WholeRate>("rate", "the link's transmission rate, e.g. \"10Mbps\"")?.0;
        let delay = t.req::<Duration>("delay", "the link's propagation delay, e.g. \"25ms\"")?.0;
        let queue = match t.table("queue")? {
            Some(mut q) => {
                let queue = queues.read(&mut q, LinkSpeed { rate_bps, delay })?;
                q.finish("a queue")?;
                queue
            }
            None => Queue::default(),
        };
        let duplex: bool = t.or("duplex", true)?;
        t.finish("a link")?;
        let name = given_name.clone().unwrap_or_else(|| format!("{from_name}->{to_name}"));
        let mut add = |name: String, from: u32, to: u32| -> Result<()> {
            if name.is_empty() {
                return err(format!("{p}.name"), "expected a non-empty link name");
            }
            if n.link_ix.insert(name.clone(), n.links.len() as u32).is_some() {
                return err(format!("{p}.name"), format!("duplicate link name {name:?}"));
            }
            n.links.push(LinkConfig { name, from, to, rate_bps, delay, queue: queue.clone() });
            Ok(())
        };
        add(name.clone(), from, to)?;
        if duplex {
            let rev = if given_name.is_some() { format!("{name}-rev") } else { format!("{to_name}->{from_name}") };
            add(rev, to, from)?;
        }
    }
    if n.links.len() > u32::MAX as usize {
        return err("links", "too many links");
    }
    Ok(n)
}

fn read_record(top: &mut Table, link_ix: &HashMap<String, u32>) -> Result<RecordConfig> {
    let Some(mut t) = top.table("record")? else { return Ok(RecordConfig::default()) };
    let interval = match t.get::<Duration>("interval")? {
        None => RecordConfig::default().interval,
        Some(Duration(SimTime::ZERO)) => None,
        Some(d) => Some(d.0),
    };
    let mut arrivals = Vec::new();
    for (j, name) in t.get::<Vec<String>>("arrivals")?.unwrap_or_default().iter().enumerate() {
        match link_ix.get(name) {
            Some(&l) => arrivals.push(l),
            None => return err(format!("record.arrivals[{j}]"), format!("unknown link {name:?}")),
        }
    }
    t.finish("the record table")?;
    Ok(RecordConfig { interval, arrivals })
}

/// The `traffic` list: every class read, with a name unique among classes and links.
fn read_classes(top: &mut Table, names: &Names, graph: &Graph, tcp: &TcpParams, registry: &Registry, base_dir: &Path) -> Result<Vec<ClassConfig>> {
    let items = top.list("traffic")?.unwrap_or_default();
    if items.is_empty() {
        return err("traffic", "expected at least one traffic class");
    }
    let mut classes = Vec::with_capacity(items.len());
    let mut class_ix: HashMap<String, usize> = HashMap::new();
    for (path, v) in items {
        let c = read_class(Table::new(v, path.clone())?, names, graph, tcp, registry, base_dir)?;
        if class_ix.insert(c.name.clone(), classes.len()).is_some() {
            return err(format!("{path}.name"), format!("duplicate class name {:?}", c.name));
        }
        if names.link_ix.contains_key(&c.name) {
            return err(format!("{path}.name"), format!("{:?} is already a link's name (the series table names links and classes together)", c.name));
        }
        classes.push(c);
    }
    Ok(classes)
}

/// A link so slow that one packet takes longer to send than the first
/// retransmission timeout: every first segment times out (spurious timeouts).
/// The same for the ACKs (header bytes only) on the way back: a 40-byte ACK
/// takes 3.2 s on a 100 bit/s reverse link.
fn slow_link_warnings(classes: &[ClassConfig], links: &[LinkConfig]) -> Vec<String> {
    let mut warnings = Vec::new();
    for c in classes {
        if let crate::transport::Transport::Window { tcp, .. } = &c.transport {
            let rto = tcp.initial_rto.as_secs_f64();
            let ack = tcp.control_bytes() as u64;
            for (what, bytes, route) in [("packet", tcp.max_packet(), &c.route), ("ACK", ack, &c.ack_route)] {
                let secs = |link: &LinkConfig| (bytes * 8) as f64 / link.rate_bps as f64;
                if let Some(link) = route.iter().map(|&l| &links[l as usize]).find(|&link| secs(link) > rto) {
                    let secs = secs(link);
                    warnings.push(format!(
                        "class {:?}: one {what} ({bytes} bytes) takes {secs:.3} s to send on link {:?}, longer than initial_rto ({rto} s): expect spurious timeouts",
                        c.name, link.name
                    ));
                }
            }
        }
    }
    warnings
}

/// The run's `duration` (positive) and `warmup` (shorter than it, default 0).
fn read_duration_and_warmup(top: &mut Table) -> Result<(SimTime, SimTime)> {
    let duration = top.req::<Duration>("duration", "how long to simulate, e.g. \"2000s\"")?.0;
    if duration == SimTime::ZERO {
        return err("duration", "expected a positive duration, got 0");
    }
    let warmup = top.get::<Duration>("warmup")?.map_or(SimTime::ZERO, |d| d.0);
    if warmup >= duration {
        return err("warmup", format!("must be shorter than duration ({duration}), got {warmup}"));
    }
    Ok((duration, warmup))
}
