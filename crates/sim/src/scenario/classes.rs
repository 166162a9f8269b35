//! Reading one `[[traffic]]` class: its endpoints and route, its arrival process
//! (`type` and the keys of that type), and its transport (`protocol`, `cc`, `tcp`).
use crate::config::describe_fault;
use crate::engine::SimTime;
use crate::net::{Graph, LinkConfig};
use crate::settings::{err, Duration, Rate, Result, ScenarioError, Table};
use crate::traffic::access::{access_misfit, read_access};
use crate::traffic::arrivals::read_flow_list;
use crate::traffic::files::resolve;
use crate::traffic::{Arrivals, ClassConfig, Phase, SizeDist};
use crate::transport::cc::Registry;
use crate::transport::rate::{cbr::CbrParams, RateConfig};
use crate::transport::tcp::TcpParams;
use crate::transport::Transport;
use std::collections::HashMap;
use std::path::Path;

/// Names and indices resolved so far, shared by the readers of classes.
pub(super) struct Names {
    pub nodes: Vec<String>,
    pub node_ix: HashMap<String, u32>,
    pub links: Vec<LinkConfig>,
    pub link_ix: HashMap<String, u32>,
}

/// Keys that only some traffic types take, and which.
const TYPE_KEYS: &[(&str, &str)] = &[
    ("load", "poisson"),
    ("load_link", "poisson"),
    ("arrival_rate", "poisson"),
    ("size", "poisson"),
    ("count", "long_lived or cbr"),
    ("file", "flow_list"),
    ("rate", "cbr"),
    ("starts", "long_lived or cbr"),
];

/// Read a traffic class.
pub(super) fn read_class(
    mut t: Table,
    names: &Names,
    graph: &Graph,
    base_tcp: &TcpParams,
    registry: &Registry,
    base_dir: &Path,
) -> Result<ClassConfig> {
    let name: String = t.req("name", "a name for the class")?;
    if name.is_empty() {
        return err(t.key_path("name"), "expected a non-empty class name");
    }
    let kind: String = t.req("type", "how flows arrive: \"poisson\", \"long_lived\", \"flow_list\" or \"cbr\"")?;
    let (src, dst, route) = resolve_route(&mut t, names, graph)?;
    let ack_route = graph.retrace(&route).or_else(|| graph.shortest_path(dst, src)).ok_or_else(|| {
        ScenarioError::new(
            t.key_path("dst"),
            format!(
                "no route from {:?} back to {:?} for acknowledgments (add the reverse links or set duplex = true)",
                names.nodes[dst as usize], names.nodes[src as usize]
            ),
        )
    })?;
    let start = t.get::<Duration>("start")?.map_or(SimTime::ZERO, |d| d.0);
    let stop = t.get::<Duration>("stop")?.map(|d| d.0);
    if stop.is_some_and(|s| s <= start) {
        return err(t.key_path("stop"), "must be later than start");
    }
    let transport = if kind == "cbr" { read_cbr_transport(&mut t)? } else { Transport::read(&mut t, base_tcp, registry)? };
    if let Transport::Rate { cc: RateConfig::Pareto(p), packet_bytes } = &transport {
        if let Err(m) = p.check_packet(*packet_bytes) {
            return err(t.key_path("cc"), m);
        }
    }
    let phase = read_phase(&mut t, &kind, &transport)?;
    let arrivals = match kind.as_str() {
        "poisson" => read_poisson(&mut t, names, &route, base_dir)?,
        "long_lived" => read_starts(&mut t)?,
        "flow_list" => {
            let file: String = t.req("file", "flow_list traffic needs a CSV file with columns start, size, class")?;
            Arrivals::FlowList { flows: read_flow_list(&resolve(base_dir, &file), &name, &t.key_path("file"))? }
        }
        "cbr" => read_starts(&mut t)?,
        other => {
            return err(
                t.key_path("type"),
                format!("unknown traffic type {other:?}; expected \"poisson\", \"long_lived\", \"flow_list\" or \"cbr\""),
            )
        }
    };
    let access = read_access(&mut t)?;
    if access.is_some() {
        if let Some(why) = access_misfit(&kind, matches!(transport, Transport::Window { .. })) {
            return err(t.key_path("access"), why);
        }
    }
    for &(key, types) in TYPE_KEYS {
        if t.present(key) && !types.split(" or ").any(|x| x == kind) {
            return err(t.key_path(key), format!("only {types} traffic takes `{key}` (this class is {kind})"));
        }
    }
    check_route_fits(&t, names, &route, &transport)?;
    t.finish(&format!("a {kind} class"))?;
    Ok(ClassConfig { name, src, dst, route, ack_route, start, stop, arrivals, transport, access, phase })
}

/// What the links of a class's route must offer its transport: RCP's router for an
/// RCP class, none for a protocol whose header field shares RCP's, and room in every
/// queue for one of its packets.
fn check_route_fits(t: &Table, names: &Names, route: &[u32], transport: &Transport) -> Result<()> {
    let rcp_on_route = || route.iter().any(|&l| names.links[l as usize].queue.is_rcp());
    if let Transport::Rate { cc, .. } = transport {
        if matches!(cc, RateConfig::Rcp(_)) && !rcp_on_route() {
            return err(t.key_path("route"), crate::config::RCP_ROUTE);
        }
        if cc.header_in_sack() && rcp_on_route() {
            return err(t.key_path("route"), crate::config::HEADER_ROUTE);
        }
    }
    for &l in route {
        let link = &names.links[l as usize];
        if !link.queue.holds(transport.max_packet()) {
            return err(
                t.key_path("route"),
                format!("the queue of link {:?} holds less than one packet of this class ({} bytes)", link.name, transport.max_packet()),
            );
        }
    }
    Ok(())
}

/// `phase = "zero"` (the default) or `"random"`: where in its first packet
/// interval a constant-rate flow that never ends starts.
fn read_phase(t: &mut Table, kind: &str, transport: &Transport) -> Result<Phase> {
    let Some(v) = t.get::<String>("phase")? else { return Ok(Phase::Zero) };
    let phase = match v.as_str() {
        "zero" => Phase::Zero,
        "random" => Phase::Random,
        other => return err(t.key_path("phase"), format!("expected \"zero\" or \"random\", got {other:?}")),
    };
    let cbr = matches!(transport, Transport::Rate { cc: RateConfig::Cbr(_), .. });
    if !(cbr && (kind == "cbr" || kind == "long_lived")) {
        return err(
            t.key_path("phase"),
            "only constant-rate flows that never end take `phase` (type = \"cbr\", or type = \"long_lived\" with protocol = \"cbr\")",
        );
    }
    Ok(phase)
}

/// `type = "cbr"`: shorthand for constant-rate datagram flows (`rate` and
/// `packet_size` on the class itself).
fn read_cbr_transport(t: &mut Table) -> Result<Transport> {
    for key in ["protocol", "cc", "tcp"] {
        if t.present(key) {
            return err(t.key_path(key), "cbr traffic takes `rate` and `packet_size` on the class itself");
        }
    }
    let rate = t.req::<Rate>("rate", "cbr traffic needs the rate of each flow, e.g. \"1Mbps\"")?.0;
    let packet = t.get::<u32>("packet_size")?;
    let packet_bytes = Transport::datagram_size(packet, t)?;
    Ok(Transport::Rate { cc: RateConfig::Cbr(CbrParams { rate_bps: rate }), packet_bytes })
}

fn read_count(t: &mut Table) -> Result<u32> {
    let count: u32 = t.or("count", 1)?;
    if count == 0 {
        return err(t.key_path("count"), "expected at least 1 flow");
    }
    Ok(count)
}

/// Never-ending flows: `count` at the class's start, or one at each of `starts`
/// (seconds; long-lived and CBR classes).
fn read_starts(t: &mut Table) -> Result<Arrivals> {
    let starts = t.get::<Vec<f64>>("starts")?;
    match (starts, t.present("count")) {
        (Some(_), true) => err(t.key_path("count"), "give either count or starts, not both"),
        (Some(list), false) => {
            if list.is_empty() {
                return err(t.key_path("starts"), "expected at least one start time");
            }
            let mut times = Vec::with_capacity(list.len());
            for (j, &s) in list.iter().enumerate() {
                if !(0.0..=SimTime::LONGEST.as_secs_f64()).contains(&s) {
                    return err(format!("{}[{j}]", t.key_path("starts")), format!("expected a time from 0 to 1e9 seconds, got {s}"));
                }
                times.push(SimTime::from_secs_f64(s));
            }
            times.sort();
            Ok(Arrivals::Starts { times_ns: times })
        }
        // `count` flows at the class's start.
        (None, _) => Ok(Arrivals::LongLived { count: read_count(t)? }),
    }
}

fn read_poisson(t: &mut Table, names: &Names, route: &[u32], base_dir: &Path) -> Result<Arrivals> {
    let size = match t.table("size")? {
        Some(s) => SizeDist::read(s, base_dir)?,
        None => return err(t.key_path("size"), "missing: poisson traffic needs a size distribution"),
    };
    let mean_bits = size.mean() * 8.0;
    let load: Option<f64> = t.get("load")?;
    let arrival_rate: Option<f64> = t.get("arrival_rate")?;
    let rate_per_s = match (load, arrival_rate) {
        (Some(_), Some(_)) => return err(t.key_path("arrival_rate"), "give either load or arrival_rate, not both"),
        (None, None) => return err(t.key_path("load"), "missing: poisson traffic needs load or arrival_rate"),
        (Some(load), None) => {
            if !(load > 0.0) {
                return err(t.key_path("load"), format!("expected a positive fraction of the link rate, got {load}"));
            }
            let link = match t.get::<String>("load_link")? {
                Some(n) => *names.link_ix.get(&n).ok_or_else(|| ScenarioError::new(t.key_path("load_link"), format!("unknown link {n:?}")))?,
                None => route[0],
            };
            load * names.links[link as usize].rate_bps as f64 / mean_bits
        }
        (None, Some(r)) => {
            if t.present("load_link") {
                return err(t.key_path("load_link"), "only poisson traffic given as a load takes `load_link`");
            }
            if !(r > 0.0) {
                return err(t.key_path("arrival_rate"), format!("expected a positive number of flows per second, got {r}"));
            }
            r
        }
    };
    if !rate_per_s.is_finite() {
        return err(t.key_path("load"), "gives an infinite arrival rate");
    }
    Ok(Arrivals::Poisson { rate_per_s, size })
}

/// The class's endpoints and data route: an explicit `route` (link names), or the
/// shortest path from `src` to `dst`.
fn resolve_route(t: &mut Table, names: &Names, graph: &Graph) -> Result<(u32, u32, Vec<u32>)> {
    let node = |t: &mut Table, key: &'static str| -> Result<Option<u32>> {
        match t.get::<String>(key)? {
            None => Ok(None),
            Some(n) => names.node_ix.get(&n).copied().map(Some).ok_or_else(|| {
                ScenarioError::new(t.key_path(key), format!("unknown node {n:?}; nodes are: {}", names.nodes.join(", ")))
            }),
        }
    };
    let src = node(t, "src")?;
    let dst = node(t, "dst")?;
    if let Some(route) = t.get::<Vec<String>>("route")? {
        let rp = t.key_path("route");
        if route.is_empty() {
            return err(rp, "expected at least one link name");
        }
        let mut ixs = Vec::with_capacity(route.len());
        for (j, name) in route.iter().enumerate() {
            let l = *names.link_ix.get(name).ok_or_else(|| ScenarioError::new(format!("{rp}[{j}]"), format!("unknown link {name:?}")))?;
            ixs.push(l);
        }
        if let Err(f) = graph.check_route(&ixs) {
            let j = match f {
                crate::net::RouteFault::Disconnected { at } => {
                    let (a, b) = (&names.links[ixs[at - 1] as usize], &names.links[ixs[at] as usize]);
                    return err(
                        format!("{rp}[{at}]"),
                        format!(
                            "route does not connect: link {:?} ends at {:?} but {:?} starts at {:?}",
                            a.name, names.nodes[a.to as usize], b.name, names.nodes[b.from as usize]
                        ),
                    );
                }
                crate::net::RouteFault::Revisits { at, node } => {
                    return err(
                        format!("{rp}[{at}]"),
                        format!("route comes back to node {:?}, which it already passed: a route may not loop", names.nodes[node as usize]),
                    )
                }
                _ => describe_fault(&f),
            };
            return err(rp, j);
        }
        let (s, d) = (names.links[ixs[0] as usize].from, names.links[*ixs.last().unwrap() as usize].to);
        if src.is_some_and(|x| x != s) {
            return err(t.key_path("src"), format!("route starts at {:?}, not at src", names.nodes[s as usize]));
        }
        if dst.is_some_and(|x| x != d) {
            return err(t.key_path("dst"), format!("route ends at {:?}, not at dst", names.nodes[d as usize]));
        }
        return Ok((s, d, ixs));
    }
    let src = src.ok_or_else(|| ScenarioError::new(t.key_path("src"), "missing: give src and dst, or a route"))?;
    let dst = dst.ok_or_else(|| ScenarioError::new(t.key_path("dst"), "missing: give src and dst, or a route"))?;
    if src == dst {
        return err(t.key_path("dst"), "must differ from src");
    }
    let route = graph.shortest_path(src, dst).ok_or_else(|| {
        ScenarioError::new(t.key_path("dst"), format!("no route from {:?} to {:?}", names.nodes[src as usize], names.nodes[dst as usize]))
    })?;
    if route.len() > crate::net::topology::MAX_HOPS {
        return err(t.key_path("dst"), format!("the shortest route has {} links; a route may have at most {}", route.len(), crate::net::topology::MAX_HOPS));
    }
    Ok((src, dst, route))
}
