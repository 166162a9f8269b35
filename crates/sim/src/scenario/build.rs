//! Validation of a `ScenarioSpec` into the `Config` the simulator runs: names
//! resolved to indices, routes computed and checked, units converted, files read.
use super::spec::{ScenarioSpec, SizeSpec, TrafficSpec};
use super::units::QueueLimit;
use super::ScenarioError;
use crate::engine::SimTime;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// TCP parameters in engine units.
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub mss: u32,
    pub header: u32,
    pub initial_window: u32,
    /// Receiver's advertised window in bytes (u64::MAX: unlimited).
    pub receive_window: u64,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    pub initial_rto: SimTime,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: SimTime,
    pub dupack_threshold: u32,
    /// Three-way handshake before data (SYN, SYN-ACK).
    pub handshake: bool,
    /// RFC 3042 limited transmit on the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Only the first partial ACK of a recovery restarts the timer (RFC 6582 "Impatient").
    pub impatient: bool,
}

/// A link in engine units; the queue limit is in packets or bytes.
#[derive(Clone, Debug)]
pub struct LinkParams {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub rate_bps: f64,
    pub delay: SimTime,
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
}

/// The congestion controller of a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    NewReno,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::NewReno => "newreno",
        }
    }
}

/// A flow-size distribution, in bytes.
#[derive(Clone, Debug)]
pub enum SizeDist {
    Exponential { mean: f64 },
    Pareto { mean: f64, shape: f64 },
    Constant { value: f64 },
    /// Piecewise-linear CDF through (size, cdf) points, cdf rising from its first value to 1.
    Empirical { points: Vec<(f64, f64)> },
}

impl SizeDist {
    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Exponential { mean } | SizeDist::Pareto { mean, .. } => *mean,
            SizeDist::Constant { value } => *value,
            SizeDist::Empirical { points } => {
                // Mass at the first point, then uniform within each segment.
                let mut m = points[0].0 * points[0].1;
                for w in points.windows(2) {
                    m += 0.5 * (w[0].0 + w[1].0) * (w[1].1 - w[0].1);
                }
                m
            }
        }
    }
}

/// How a class creates flows.
#[derive(Clone, Debug)]
pub enum ClassKind {
    Poisson { rate_per_s: f64, size: SizeDist },
    LongLived { count: u32 },
    FlowList { flows: Vec<(SimTime, u64)> },
    /// Constant-rate senders without feedback (UDP CBR; the "ideally smooth"
    /// senders of the lower-bounds paper): one packet of `packet` bytes every
    /// 8 packet / rate seconds from each start time on.
    Cbr { rate_bps: f64, packet: u32, starts: Vec<SimTime> },
}

/// A traffic class in engine units.
#[derive(Clone, Debug)]
pub struct ClassParams {
    pub name: String,
    pub kind: ClassKind,
    pub src: usize,
    pub dst: usize,
    /// Link indices from src to dst (data) and from dst to src (ACKs).
    pub fwd_route: Vec<usize>,
    pub rev_route: Vec<usize>,
    pub protocol: Protocol,
    pub start: SimTime,
    pub stop: SimTime,
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Config {
    pub name: String,
    pub duration: SimTime,
    pub warmup: SimTime,
    pub seed: u64,
    pub tcp: TcpParams,
    pub nodes: Vec<String>,
    pub links: Vec<LinkParams>,
    pub classes: Vec<ClassParams>,
    /// Sampling interval of the series table (None: not recorded).
    pub record_interval: Option<SimTime>,
    /// Link indices whose per-arrival queue is recorded.
    pub record_arrivals: Vec<usize>,
}

type R<T> = Result<T, ScenarioError>;

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

/// Validate `spec` into a `Config`; returns the warnings too (e.g. offered load ≥ 1).
pub fn build(spec: ScenarioSpec, base_dir: &Path, seed: Option<u64>) -> R<(Config, Vec<String>)> {
    let mut warnings = Vec::new();
    let duration = spec.duration.0;
    if duration == SimTime::ZERO {
        return err("duration", "expected a positive duration, got 0");
    }
    let warmup = spec.warmup.map(|d| d.0).unwrap_or(SimTime::ZERO);
    if warmup >= duration {
        return err("warmup", format!("must be shorter than duration ({duration}), got {warmup}"));
    }
    let t = &spec.tcp;
    if t.mss == 0 {
        return err("tcp.mss", "expected a positive number of bytes, got 0");
    }
    if t.initial_window == 0 {
        return err("tcp.initial_window", "expected at least 1 segment, got 0");
    }
    if t.dupack_threshold == 0 {
        return err("tcp.dupack_threshold", "expected at least 1, got 0");
    }
    if t.min_rto.0 == SimTime::ZERO {
        return err("tcp.min_rto", "expected a positive duration, got 0");
    }
    if t.max_rto.0 < t.min_rto.0 {
        return err("tcp.max_rto", "must be at least tcp.min_rto");
    }
    if t.delayed_ack && t.delayed_ack_timeout.0 == SimTime::ZERO {
        return err("tcp.delayed_ack_timeout", "expected a positive duration with delayed_ack = true");
    }
    let receive_window = match t.receive_window {
        None => u64::MAX,
        Some(w) if w.0 >= t.mss as f64 => w.0.floor() as u64,
        Some(w) => return err("tcp.receive_window", format!("expected at least one segment ({} bytes), got {} bytes", t.mss, w.0)),
    };
    let tcp = TcpParams {
        receive_window,
        mss: t.mss,
        header: t.header,
        initial_window: t.initial_window,
        min_rto: t.min_rto.0,
        max_rto: t.max_rto.0,
        initial_rto: t.initial_rto.0.max(t.min_rto.0),
        delayed_ack: t.delayed_ack,
        delayed_ack_timeout: t.delayed_ack_timeout.0,
        dupack_threshold: t.dupack_threshold,
        handshake: t.handshake,
        limited_transmit: t.limited_transmit,
        impatient: t.partial_ack_timer == super::spec::PartialAckTimer::Impatient,
    };

    // Nodes: explicit list, or the links' endpoints in order of appearance.
    let mut nodes: Vec<String> = Vec::new();
    let mut node_ix: HashMap<String, usize> = HashMap::new();
    let explicit_nodes = spec.nodes.is_some();
    if let Some(list) = &spec.nodes {
        for (i, n) in list.iter().enumerate() {
            if n.is_empty() {
                return err(format!("nodes[{i}]"), "expected a non-empty name");
            }
            if node_ix.insert(n.clone(), i).is_some() {
                return err(format!("nodes[{i}]"), format!("duplicate node name {n:?}"));
            }
            nodes.push(n.clone());
        }
    }
    if spec.links.is_empty() {
        return err("links", "expected at least one link");
    }
    let mut links: Vec<LinkParams> = Vec::new();
    let mut link_ix: HashMap<String, usize> = HashMap::new();
    for (i, l) in spec.links.iter().enumerate() {
        let p = format!("links[{i}]");
        let mut endpoint = |name: &str, key: &str| -> R<usize> {
            if name.is_empty() {
                return err(format!("{p}.{key}"), "expected a node name, got an empty string");
            }
            if let Some(&ix) = node_ix.get(name) {
                return Ok(ix);
            }
            if explicit_nodes {
                return err(format!("{p}.{key}"), format!("unknown node {name:?}; nodes are: {}", nodes.join(", ")));
            }
            nodes.push(name.to_string());
            node_ix.insert(name.to_string(), nodes.len() - 1);
            Ok(nodes.len() - 1)
        };
        let from = endpoint(&l.from, "from")?;
        let to = endpoint(&l.to, "to")?;
        if from == to {
            return err(format!("{p}.to"), format!("a link must join two different nodes, got {:?} twice", l.from));
        }
        if !(l.rate.0 > 0.0) {
            return err(format!("{p}.rate"), format!("expected a positive rate, got {} bps", l.rate.0));
        }
        if l.queue.kind != "droptail" {
            return err(format!("{p}.queue.type"), format!("unknown queue discipline {:?}; expected \"droptail\"", l.queue.kind));
        }
        let (limit_packets, limit_bytes) = match l.queue.limit.0 {
            QueueLimit::Packets(n) => (Some(n), None),
            QueueLimit::Bytes(b) => (None, Some(b)),
            // Time's worth of the link's rate (e.g. "80ms" of 10 Mbps = 100 kB).
            QueueLimit::Time(d) => (None, Some((l.rate.0 * d.as_secs_f64() / 8.0).floor() as u64)),
        };
        // A packet is admitted to the queue before it starts, even on an idle link
        // (as in ns-3's devices), so a zero limit would drop everything.
        if limit_packets == Some(0) || limit_bytes == Some(0) {
            return err(format!("{p}.queue.limit"), "expected room for at least one packet, got 0 (an empty buffer drops every packet)");
        }
        let name = l.name.clone().unwrap_or_else(|| format!("{}->{}", l.from, l.to));
        let mut add = |name: String, from: usize, to: usize| -> R<()> {
            if link_ix.insert(name.clone(), links.len()).is_some() {
                return err(format!("{p}.name"), format!("duplicate link name {name:?}"));
            }
            links.push(LinkParams { name, from, to, rate_bps: l.rate.0, delay: l.delay.0, limit_packets, limit_bytes });
            Ok(())
        };
        add(name.clone(), from, to)?;
        if l.duplex {
            let rev = if l.name.is_some() { format!("{name}-rev") } else { format!("{}->{}", l.to, l.from) };
            add(rev, to, from)?;
        }
    }

    if spec.traffic.is_empty() {
        return err("traffic", "expected at least one traffic class");
    }
    let mut classes = Vec::new();
    let mut class_names: HashMap<String, usize> = HashMap::new();
    let mut offered: Vec<f64> = vec![0.0; links.len()];
    for (i, c) in spec.traffic.iter().enumerate() {
        let p = format!("traffic[{i}]");
        if c.name.is_empty() {
            return err(format!("{p}.name"), "expected a non-empty class name");
        }
        if class_names.insert(c.name.clone(), i).is_some() {
            return err(format!("{p}.name"), format!("duplicate class name {:?}", c.name));
        }
        let (src, dst, fwd_route) = resolve_route(c, &p, &nodes, &node_ix, &links, &link_ix)?;
        let rev_route = reverse_of(&links, &fwd_route).or_else(|| shortest_path(&links, nodes.len(), dst, src)).ok_or_else(|| {
            ScenarioError::new(
                format!("{p}.dst"),
                format!("no route from {:?} back to {:?} for acknowledgments (add the reverse links or set duplex = true)", nodes[dst], nodes[src]),
            )
        })?;
        let protocol = match c.protocol.as_str() {
            "newreno" => Protocol::NewReno,
            other => return err(format!("{p}.protocol"), format!("unknown protocol {other:?}; expected \"newreno\"")),
        };
        let start = c.start.map(|d| d.0).unwrap_or(SimTime::ZERO);
        let stop = c.stop.map(|d| d.0).unwrap_or(SimTime::MAX);
        if stop <= start {
            return err(format!("{p}.stop"), "must be later than start");
        }
        let only = |key: &str, present: bool, kinds: &str| -> R<()> {
            if present {
                return err(format!("{p}.{key}"), format!("only {kinds} traffic takes `{key}` (this class is {:?})", c.kind));
            }
            Ok(())
        };
        let kind = match c.kind.as_str() {
            "poisson" => {
                only("count", c.count.is_some(), "long_lived or cbr")?;
                cbr_only(c, &p)?;
                only("file", c.file.is_some(), "flow_list")?;
                let size = match &c.size {
                    Some(s) => size_dist(s, &format!("{p}.size"), base_dir)?,
                    None => return err(format!("{p}.size"), "missing: poisson traffic needs a size distribution"),
                };
                let mean_bits = size.mean() * 8.0;
                let rate_per_s = match (c.load, c.arrival_rate) {
                    (Some(_), Some(_)) => return err(format!("{p}.arrival_rate"), "give either load or arrival_rate, not both"),
                    (None, None) => return err(format!("{p}.load"), "missing: poisson traffic needs load or arrival_rate"),
                    (Some(load), None) => {
                        if !(load > 0.0) || !load.is_finite() {
                            return err(format!("{p}.load"), format!("expected a positive fraction of the link rate, got {load}"));
                        }
                        let link = match &c.load_link {
                            Some(n) => *link_ix.get(n).ok_or_else(|| {
                                ScenarioError::new(format!("{p}.load_link"), format!("unknown link {n:?}"))
                            })?,
                            None => fwd_route[0],
                        };
                        load * links[link].rate_bps / mean_bits
                    }
                    (None, Some(r)) => {
                        only("load_link", c.load_link.is_some(), "poisson traffic given as a load")?;
                        if !(r > 0.0) || !r.is_finite() {
                            return err(format!("{p}.arrival_rate"), format!("expected a positive number of flows per second, got {r}"));
                        }
                        r
                    }
                };
                for &l in &fwd_route {
                    offered[l] += rate_per_s * mean_bits;
                }
                ClassKind::Poisson { rate_per_s, size }
            }
            "long_lived" => {
                for (k, v) in [("size", c.size.is_some()), ("load", c.load.is_some()), ("arrival_rate", c.arrival_rate.is_some())] {
                    only(k, v, "poisson")?;
                }
                cbr_only(c, &p)?;
                only("file", c.file.is_some(), "flow_list")?;
                let count = c.count.unwrap_or(1);
                if count == 0 {
                    return err(format!("{p}.count"), "expected at least 1 flow");
                }
                ClassKind::LongLived { count }
            }
            "flow_list" => {
                for (k, v) in [("size", c.size.is_some()), ("load", c.load.is_some()), ("arrival_rate", c.arrival_rate.is_some())] {
                    only(k, v, "poisson")?;
                }
                only("count", c.count.is_some(), "long_lived or cbr")?;
                cbr_only(c, &p)?;
                let file = c.file.as_ref().ok_or_else(|| ScenarioError::new(format!("{p}.file"), "missing: flow_list traffic needs a CSV file"))?;
                let flows = read_flow_list(&resolve(base_dir, file), &c.name, &format!("{p}.file"))?;
                ClassKind::FlowList { flows }
            }
            "cbr" => {
                for (k, v) in [("size", c.size.is_some()), ("load", c.load.is_some()), ("arrival_rate", c.arrival_rate.is_some())] {
                    only(k, v, "poisson")?;
                }
                only("file", c.file.is_some(), "flow_list")?;
                let rate_bps = match c.rate {
                    Some(r) if r.0 > 0.0 => r.0,
                    Some(r) => return err(format!("{p}.rate"), format!("expected a positive rate, got {} bps", r.0)),
                    None => return err(format!("{p}.rate"), "missing: cbr traffic needs the rate of each flow"),
                };
                let packet = c.packet_size.unwrap_or(1500);
                if packet == 0 {
                    return err(format!("{p}.packet_size"), "expected a positive number of bytes, got 0");
                }
                let starts = match (&c.starts, c.count) {
                    (Some(_), Some(_)) => return err(format!("{p}.count"), "give either count or starts, not both"),
                    (Some(list), None) => {
                        if list.is_empty() {
                            return err(format!("{p}.starts"), "expected at least one start time");
                        }
                        let mut v = Vec::with_capacity(list.len());
                        for (j, &t) in list.iter().enumerate() {
                            if !(t >= 0.0) || !t.is_finite() {
                                return err(format!("{p}.starts[{j}]"), format!("expected a non-negative time in seconds, got {t}"));
                            }
                            v.push(SimTime::from_secs_f64(t));
                        }
                        v
                    }
                    (None, n) => {
                        let n = n.unwrap_or(1);
                        if n == 0 {
                            return err(format!("{p}.count"), "expected at least 1 flow");
                        }
                        vec![start; n as usize]
                    }
                };
                for &l in &fwd_route {
                    offered[l] += rate_bps * starts.len() as f64;
                }
                ClassKind::Cbr { rate_bps, packet, starts }
            }
            other => {
                return err(format!("{p}.type"), format!("unknown traffic type {other:?}; expected \"poisson\", \"long_lived\", \"flow_list\" or \"cbr\""))
            }
        };
        classes.push(ClassParams { name: c.name.clone(), kind, src, dst, fwd_route, rev_route, protocol, start, stop });
    }
    for (l, bits) in offered.iter().enumerate() {
        let load = bits / links[l].rate_bps;
        if load >= 1.0 {
            warnings.push(format!(
                "link {:?}: offered load of the Poisson and CBR classes is {:.3}, at or above capacity",
                links[l].name, load
            ));
        }
    }
    let mut record_arrivals = Vec::new();
    for (j, name) in spec.record.arrivals.iter().enumerate() {
        match link_ix.get(name) {
            Some(&l) => record_arrivals.push(l),
            None => return err(format!("record.arrivals[{j}]"), format!("unknown link {name:?}")),
        }
    }
    let record_interval = match spec.record.interval.0 {
        SimTime(0) => None,
        d => Some(d),
    };
    let config = Config {
        name: spec.name.unwrap_or_else(|| "scenario".into()),
        duration,
        warmup,
        seed: seed.or(spec.seed).unwrap_or(1),
        tcp,
        nodes,
        links,
        classes,
        record_interval,
        record_arrivals,
    };
    Ok((config, warnings))
}

/// Keys that only cbr traffic takes.
fn cbr_only(c: &TrafficSpec, p: &str) -> R<()> {
    for (key, present) in [("rate", c.rate.is_some()), ("packet_size", c.packet_size.is_some()), ("starts", c.starts.is_some())] {
        if present {
            return err(format!("{p}.{key}"), format!("only cbr traffic takes `{key}` (this class is {:?})", c.kind));
        }
    }
    Ok(())
}

fn resolve(base: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

fn resolve_route(
    c: &TrafficSpec,
    p: &str,
    nodes: &[String],
    node_ix: &HashMap<String, usize>,
    links: &[LinkParams],
    link_ix: &HashMap<String, usize>,
) -> R<(usize, usize, Vec<usize>)> {
    let node = |key: &str, v: &Option<String>| -> R<Option<usize>> {
        match v {
            None => Ok(None),
            Some(n) => node_ix.get(n).copied().map(Some).ok_or_else(|| {
                ScenarioError::new(format!("{p}.{key}"), format!("unknown node {n:?}; nodes are: {}", nodes.join(", ")))
            }),
        }
    };
    let src = node("src", &c.src)?;
    let dst = node("dst", &c.dst)?;
    if let Some(route) = &c.route {
        if route.is_empty() {
            return err(format!("{p}.route"), "expected at least one link name");
        }
        let mut ixs = Vec::new();
        for (j, name) in route.iter().enumerate() {
            let l = *link_ix.get(name).ok_or_else(|| ScenarioError::new(format!("{p}.route[{j}]"), format!("unknown link {name:?}")))?;
            if let Some(&prev) = ixs.last() {
                let prev: usize = prev;
                if links[prev].to != links[l].from {
                    return err(
                        format!("{p}.route[{j}]"),
                        format!("route does not connect: link {:?} ends at {:?} but {:?} starts at {:?}", links[prev].name, nodes[links[prev].to], name, nodes[links[l].from]),
                    );
                }
            }
            if ixs.contains(&l) {
                return err(format!("{p}.route[{j}]"), format!("link {name:?} appears twice"));
            }
            ixs.push(l);
        }
        let (s, d) = (links[ixs[0]].from, links[*ixs.last().unwrap()].to);
        if src.is_some_and(|x| x != s) {
            return err(format!("{p}.src"), format!("route starts at {:?}, not at src", nodes[s]));
        }
        if dst.is_some_and(|x| x != d) {
            return err(format!("{p}.dst"), format!("route ends at {:?}, not at dst", nodes[d]));
        }
        return Ok((s, d, ixs));
    }
    let src = src.ok_or_else(|| ScenarioError::new(format!("{p}.src"), "missing: give src and dst, or a route"))?;
    let dst = dst.ok_or_else(|| ScenarioError::new(format!("{p}.dst"), "missing: give src and dst, or a route"))?;
    if src == dst {
        return err(format!("{p}.dst"), "must differ from src");
    }
    let route = shortest_path(links, nodes.len(), src, dst).ok_or_else(|| {
        ScenarioError::new(format!("{p}.dst"), format!("no route from {:?} to {:?}", nodes[src], nodes[dst]))
    })?;
    Ok((src, dst, route))
}

/// ACKs retrace the data path when every hop has a link back (duplex links);
/// otherwise they take the shortest path back.
fn reverse_of(links: &[LinkParams], route: &[usize]) -> Option<Vec<usize>> {
    route
        .iter()
        .rev()
        .map(|&l| {
            let (a, b) = (links[l].from, links[l].to);
            // Prefer the duplex partner (added right after its forward link).
            [l + 1, l.wrapping_sub(1)]
                .into_iter()
                .find(|&k| k < links.len() && links[k].from == b && links[k].to == a)
                .or_else(|| links.iter().position(|x| x.from == b && x.to == a))
        })
        .collect()
}

/// Shortest path by hop count, ties broken by total propagation delay and then by
/// the lower link index (Dijkstra over the key (hops, delay)): deterministic.
pub fn shortest_path(links: &[LinkParams], n_nodes: usize, src: usize, dst: usize) -> Option<Vec<usize>> {
    let mut best: Vec<Option<(u32, u64)>> = vec![None; n_nodes];
    let mut via: Vec<Option<usize>> = vec![None; n_nodes];
    let mut done = vec![false; n_nodes];
    best[src] = Some((0, 0));
    loop {
        let mut u = None;
        for v in 0..n_nodes {
            if !done[v] {
                if let Some(k) = best[v] {
                    if u.is_none_or(|(_, bk)| k < bk) {
                        u = Some((v, k));
                    }
                }
            }
        }
        let (u, (h, d)) = u?;
        if u == dst {
            break;
        }
        done[u] = true;
        for (li, l) in links.iter().enumerate() {
            if l.from == u && !done[l.to] {
                let k = (h + 1, d + l.delay.0);
                if best[l.to].is_none_or(|b| k < b) {
                    best[l.to] = Some(k);
                    via[l.to] = Some(li);
                }
            }
        }
    }
    let mut path = Vec::new();
    let mut v = dst;
    while v != src {
        let l = via[v]?;
        path.push(l);
        v = links[l].from;
    }
    path.reverse();
    Some(path)
}

fn size_dist(s: &SizeSpec, p: &str, base_dir: &Path) -> R<SizeDist> {
    let positive_mean = || -> R<f64> {
        match s.mean {
            Some(m) if m.0 > 0.0 => Ok(m.0),
            Some(m) => err(format!("{p}.mean"), format!("expected a positive size, got {} bytes", m.0)),
            None => err(format!("{p}.mean"), format!("missing: the {} distribution needs a mean", s.dist)),
        }
    };
    let unused = |key: &str, present: bool| -> R<()> {
        if present {
            return err(format!("{p}.{key}"), format!("the {} distribution does not take `{key}`", s.dist));
        }
        Ok(())
    };
    match s.dist.as_str() {
        "exponential" => {
            unused("shape", s.shape.is_some())?;
            unused("value", s.value.is_some())?;
            unused("file", s.file.is_some())?;
            Ok(SizeDist::Exponential { mean: positive_mean()? })
        }
        "pareto" => {
            unused("value", s.value.is_some())?;
            unused("file", s.file.is_some())?;
            let mean = positive_mean()?;
            match s.shape {
                Some(a) if a > 1.0 && a.is_finite() => Ok(SizeDist::Pareto { mean, shape: a }),
                Some(a) => err(format!("{p}.shape"), format!("expected a shape above 1 (finite mean), got {a}")),
                None => err(format!("{p}.shape"), "missing: the pareto distribution needs a shape"),
            }
        }
        "constant" => {
            unused("mean", s.mean.is_some())?;
            unused("shape", s.shape.is_some())?;
            unused("file", s.file.is_some())?;
            match s.value {
                Some(v) if v.0 >= 1.0 => Ok(SizeDist::Constant { value: v.0 }),
                Some(v) => err(format!("{p}.value"), format!("expected at least one byte, got {}", v.0)),
                None => err(format!("{p}.value"), "missing: the constant distribution needs a value"),
            }
        }
        "empirical" => {
            unused("mean", s.mean.is_some())?;
            unused("shape", s.shape.is_some())?;
            unused("value", s.value.is_some())?;
            let file = s.file.as_ref().ok_or_else(|| ScenarioError::new(format!("{p}.file"), "missing: the empirical distribution needs a CSV file"))?;
            Ok(SizeDist::Empirical { points: read_cdf(&resolve(base_dir, file), &format!("{p}.file"))? })
        }
        other => err(format!("{p}.dist"), format!("unknown distribution {other:?}; expected \"exponential\", \"pareto\", \"constant\" or \"empirical\"")),
    }
}

fn read_csv(path: &Path, p: &str, columns: &[&str]) -> R<(Vec<usize>, Vec<Vec<String>>)> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::new(p, format!("cannot read {}: {e}", path.display())))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| ScenarioError::new(p, format!("{} is empty", path.display())))?;
    let head: Vec<&str> = header.split(',').map(|h| h.trim()).collect();
    let mut ix = Vec::new();
    for c in columns {
        match head.iter().position(|h| h == c) {
            Some(i) => ix.push(i),
            None => return err(p, format!("{}: missing column {c:?} (header is {header:?})", path.display())),
        }
    }
    let rows = lines
        .map(|(n, l)| {
            let cells: Vec<String> = l.split(',').map(|c| c.trim().to_string()).collect();
            let mut row = vec![format!("{}", n + 1)];
            for &i in &ix {
                row.push(cells.get(i).cloned().unwrap_or_default());
            }
            row
        })
        .collect();
    Ok((ix, rows))
}

fn num(v: &str, path: &Path, line: &str, col: &str, p: &str) -> R<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| ScenarioError::new(p, format!("{} line {line}: column {col:?} expected a number, got {v:?}", path.display())))
}

/// Flow list CSV: `start` (seconds), `size` (bytes), `class`; rows of this class only.
fn read_flow_list(path: &Path, class: &str, p: &str) -> R<Vec<(SimTime, u64)>> {
    let (_, rows) = read_csv(path, p, &["start", "size", "class"])?;
    let mut flows = Vec::new();
    for r in &rows {
        if r[3] != class {
            continue;
        }
        let start = num(&r[1], path, &r[0], "start", p)?;
        let size = num(&r[2], path, &r[0], "size", p)?;
        if start < 0.0 {
            return err(p, format!("{} line {}: start must be non-negative, got {start}", path.display(), r[0]));
        }
        if size < 1.0 {
            return err(p, format!("{} line {}: size must be at least 1 byte, got {size}", path.display(), r[0]));
        }
        flows.push((SimTime::from_secs_f64(start), size.round() as u64));
    }
    if flows.is_empty() {
        return err(p, format!("{} has no row whose class is {class:?}", path.display()));
    }
    flows.sort_by_key(|f| f.0);
    Ok(flows)
}

/// Empirical CDF CSV: `size` (bytes, increasing), `cdf` (non-decreasing, last = 1).
fn read_cdf(path: &Path, p: &str) -> R<Vec<(f64, f64)>> {
    let (_, rows) = read_csv(path, p, &["size", "cdf"])?;
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for r in &rows {
        let s = num(&r[1], path, &r[0], "size", p)?;
        let c = num(&r[2], path, &r[0], "cdf", p)?;
        if s < 1.0 || !(0.0..=1.0).contains(&c) {
            return err(p, format!("{} line {}: need size >= 1 and 0 <= cdf <= 1", path.display(), r[0]));
        }
        if let Some(&(ps, pc)) = pts.last() {
            if s <= ps || c < pc {
                return err(p, format!("{} line {}: sizes must increase and cdf must not decrease", path.display(), r[0]));
            }
        }
        pts.push((s, c));
    }
    match pts.last() {
        Some(&(_, c)) if (c - 1.0).abs() < 1e-9 => Ok(pts),
        _ => err(p, format!("{}: the last cdf value must be 1", path.display())),
    }
}
