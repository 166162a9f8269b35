//! The validated, typed configuration of one run, and its canonical JSON.
//!
//! A `Config` is what the simulator runs: every name resolved to an index, every
//! unit converted to SI integers (nanoseconds, bytes, bits per second), every
//! file read (flow lists and size CDFs are inside it). Its canonical JSON (keys
//! in a fixed order, no whitespace, floats in shortest round-trip form) is
//! written next to every result and is the content key of a run: the same JSON
//! and seed give the same bytes out. Reading the JSON back gives the same
//! `Config`, checked again, so a stored configuration can be re-run as it is.
pub mod estimate;
pub mod load;
pub mod traced;

use crate::engine::SimTime;
use crate::metrics::{RecordConfig, TraceConfig};
use crate::net::{Graph, LinkConfig, RouteFault};
use crate::settings::units::MAX_RATE_BPS;
use crate::settings::{err, Result, ScenarioError};
use crate::traffic::access::{access_misfit, check_access};
use crate::traffic::{Arrivals, ClassConfig, Phase, SizeDist, MAX_FLOW_BYTES};
use crate::transport::cc::{CcConfig, Registry};
use crate::transport::rate::{RateConfig, RateControl};
use crate::transport::Transport;
use estimate::{Culprit, Estimate, Limits};
use serde::{Deserialize, Serialize};

/// The version of the canonical form; a change of meaning bumps it.
pub const FORMAT: &str = "cclab-config/1";

/// A validated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub format: String,
    pub name: String,
    /// The seed every random stream derives from (the effective one: `--seed` applied).
    pub seed: u64,
    #[serde(rename = "duration_ns")]
    pub duration: SimTime,
    /// Initial period excluded from every statistic.
    #[serde(rename = "warmup_ns")]
    pub warmup: SimTime,
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub classes: Vec<ClassConfig>,
    pub record: RecordConfig,
    /// What the run traces (absent from the canonical form when nothing).
    #[serde(default, skip_serializing_if = "TraceConfig::is_off")]
    pub trace: TraceConfig,
    /// What the run may need (absent from the canonical form when the defaults).
    #[serde(default, skip_serializing_if = "Limits::is_default")]
    pub limits: Limits,
}

fn at(path: String, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

impl Config {
    /// The canonical JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a configuration serializes to JSON")
    }

    /// Read a canonical JSON and check it (`registry` knows the protocols it names).
    pub fn from_json(text: &str, registry: &Registry) -> Result<Config> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let mut msg = e.inner().to_string();
            if let Some(i) = msg.find(" at line ") {
                msg.truncate(i);
            }
            at(if path == "." { String::new() } else { path }, msg)
        })?;
        cfg.check(registry)?;
        Ok(cfg)
    }

    /// Check every invariant the simulator relies on; errors name the key path in
    /// the canonical form. A configuration built from a scenario always passes
    /// (the scenario reader checks the same things with the file's key paths).
    pub fn check(&self, registry: &Registry) -> Result<()> {
        if self.format != FORMAT {
            return err("format", format!("expected {FORMAT:?}, got {:?}", self.format));
        }
        if self.duration == SimTime::ZERO || self.duration > SimTime::LONGEST {
            return err("duration_ns", "expected a positive duration of at most 1e9 s");
        }
        if self.warmup >= self.duration {
            return err("warmup_ns", "must be shorter than the duration");
        }
        let mut names = std::collections::HashSet::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if node.is_empty() || !names.insert(node.as_str()) {
                return err(format!("nodes[{i}]"), "expected a unique, non-empty name");
            }
        }
        // Links and classes share one namespace (the series table names both).
        let mut entities = std::collections::HashSet::new();
        self.check_links(registry, &mut entities)?;
        let graph = Graph::new(self.nodes.len(), &self.links);
        if self.classes.is_empty() || self.classes.len() > (u32::MAX / 2) as usize {
            return err("classes", "expected at least one class");
        }
        for (i, c) in self.classes.iter().enumerate() {
            let p = format!("classes[{i}]");
            if c.name.is_empty() || !entities.insert(c.name.as_str()) {
                return err(format!("{p}.name"), "expected a non-empty name, unique among classes and links");
            }
            self.check_class(c, &p, &graph, registry)?;
        }
        self.check_record()?;
        let has_access = |c: usize| self.classes[c].access.is_some();
        self.trace.check(self.links.len(), self.classes.len(), &has_access).map_err(|(k, m)| at(format!("trace.{k}"), m))?;
        self.limits.validate("limits")?;
        self.estimate().check(&self.limits, &|c| match c {
            Culprit::Duration => "duration_ns".into(),
            Culprit::RecordInterval => "record.interval_ns".into(),
            Culprit::RecordArrivals(j) => format!("record.arrivals[{j}]"),
            Culprit::Class(i) => format!("classes[{i}].arrivals"),
            Culprit::Queue(l) => format!("links[{l}].queue"),
            Culprit::TraceFlows(j) => format!("trace.flows[{j}]"),
            Culprit::TraceLinks(j) => format!("trace.links[{j}]"),
            Culprit::TracePcap(j) => format!("trace.pcap[{j}]"),
            Culprit::TraceInterval => "trace.interval_ns".into(),
        })
    }

    /// Every link: its endpoints, rate, delay, queue (its limits and its discipline's
    /// check) and a name unique among `entities`.
    fn check_links<'a>(&'a self, registry: &Registry, entities: &mut std::collections::HashSet<&'a str>) -> Result<()> {
        if self.links.is_empty() || self.links.len() > u32::MAX as usize {
            return err("links", "expected at least one link");
        }
        let n = self.nodes.len() as u64;
        for (i, l) in self.links.iter().enumerate() {
            let p = format!("links[{i}]");
            if l.from as u64 >= n || l.to as u64 >= n || l.from == l.to {
                return err(p, "from and to must be two different node indices");
            }
            if l.rate_bps == 0 || l.rate_bps > MAX_RATE_BPS {
                return err(format!("{p}.rate_bps"), "expected 1 to 10^15 bits per second");
            }
            if l.delay > SimTime::LONGEST {
                return err(format!("{p}.delay_ns"), "must be at most 1e9 s");
            }
            let (lp, lb) = l.queue.limits();
            if lp == Some(0) || lb == Some(0) {
                return err(format!("{p}.queue"), "a queue must hold at least one packet");
            }
            if lp.max(lb).is_some_and(|x| x > crate::net::queue::MAX_LIMIT) {
                return err(format!("{p}.queue"), "a queue limit may be at most 10^18 packets or bytes");
            }
            registry.queues().check(&l.queue).map_err(|(k, m)| at(format!("{p}.queue.{k}"), m))?;
            if l.name.is_empty() || !entities.insert(l.name.as_str()) {
                return err(format!("{p}.name"), "expected a unique, non-empty link name");
            }
        }
        Ok(())
    }

    /// One class (at key path `p`): its routes, times, arrivals, transport, access
    /// control, phase and whether every queue on its route holds one of its packets.
    fn check_class(&self, c: &ClassConfig, p: &str, graph: &Graph, registry: &Registry) -> Result<()> {
        for (key, route, from, to) in [("route", &c.route, c.src, c.dst), ("ack_route", &c.ack_route, c.dst, c.src)] {
            if route.iter().any(|&l| l as usize >= self.links.len()) {
                return err(format!("{p}.{key}"), "a link index is out of range");
            }
            graph.check_route(route).map_err(|f| at(format!("{p}.{key}"), describe_fault(&f)))?;
            if self.links[route[0] as usize].from != from || self.links[*route.last().unwrap() as usize].to != to {
                return err(format!("{p}.{key}"), "does not join the class's endpoints");
            }
        }
        if c.stop.is_some_and(|s| s <= c.start) || c.start > SimTime::LONGEST {
            return err(format!("{p}.stop_ns"), "must be later than the start");
        }
        check_arrivals(&c.arrivals, &format!("{p}.arrivals"))?;
        self.check_transport(c, p, registry)?;
        if let Some(a) = &c.access {
            check_access(a, &format!("{p}.access"))?;
            let kind = match c.arrivals {
                Arrivals::Poisson { .. } => "poisson",
                Arrivals::FlowList { .. } => "flow_list",
                Arrivals::LongLived { .. } => "long_lived",
                Arrivals::Starts { .. } => "starts",
            };
            if let Some(why) = access_misfit(kind, matches!(c.transport, Transport::Window { .. })) {
                return err(format!("{p}.access"), why);
            }
        }
        let never_ending = matches!(c.arrivals, Arrivals::LongLived { .. } | Arrivals::Starts { .. });
        if c.phase == Phase::Random && !(never_ending && c.cbr_interval_ns().is_some()) {
            return err(format!("{p}.phase"), "only constant-rate flows that never end take a random phase");
        }
        for &l in &c.route {
            if !self.links[l as usize].queue.holds(c.transport.max_packet()) {
                return err(format!("{p}.route"), format!("the queue of link {:?} cannot hold one packet", self.links[l as usize].name));
            }
        }
        Ok(())
    }

    /// A class's transport: the TCP parameters and the controller's one check, or the
    /// rate protocol's check, rate, packet size and (RCP) route.
    fn check_transport(&self, c: &ClassConfig, p: &str, registry: &Registry) -> Result<()> {
        match &c.transport {
            Transport::Window { tcp, cc } => {
                tcp.validate().map_err(|(k, m)| at(format!("{p}.transport.tcp.{k}"), m))?;
                cc.check().map_err(|(k, m)| at(format!("{p}.transport.cc.params.{k}"), m))?;
                if let CcConfig::Custom { name, .. } = cc {
                    if !registry.knows(name) {
                        return err(format!("{p}.transport.cc.protocol"), format!("protocol {name:?} is not registered"));
                    }
                }
            }
            Transport::Rate { packet_bytes, cc } => {
                cc.check().map_err(|(k, m)| at(format!("{p}.transport.cc.params.{k}"), m))?;
                let r = cc.make().rate_bps();
                if !(r.is_finite() && r >= 0.0 && r <= MAX_RATE_BPS as f64) {
                    return err(format!("{p}.transport.cc.params"), "the rate must be from 0 to 10^15 bits per second");
                }
                if *packet_bytes == 0 || *packet_bytes as u64 > crate::transport::tcp::MAX_PACKET_BYTES {
                    return err(format!("{p}.transport.packet_bytes"), "expected 1 to 10^6 bytes");
                }
                if let RateConfig::Pareto(params) = cc {
                    params.check_packet(*packet_bytes).map_err(|m| at(format!("{p}.transport.cc.params"), m))?;
                }
                if let RateConfig::Rcp(_) = cc {
                    if !c.route.iter().any(|&l| self.links[l as usize].queue.is_rcp()) {
                        return err(format!("{p}.route"), RCP_ROUTE);
                    }
                }
                if cc.header_in_sack() && c.route.iter().any(|&l| self.links[l as usize].queue.is_rcp()) {
                    return err(format!("{p}.route"), HEADER_ROUTE);
                }
            }
        }
        Ok(())
    }

    /// What to record: a positive interval, links that exist.
    fn check_record(&self) -> Result<()> {
        if self.record.interval.is_some_and(|iv| iv == SimTime::ZERO) {
            return err("record.interval_ns", "expected a positive interval, or null for none");
        }
        if self.record.arrivals.iter().any(|&l| l as usize >= self.links.len()) {
            return err("record.arrivals", "a link index is out of range");
        }
        Ok(())
    }

    /// What the run will need ([`estimate`]).
    pub fn estimate(&self) -> Estimate {
        Estimate::of(self)
    }
}

/// Why an RCP class's route must cross an RCP link.
pub const RCP_ROUTE: &str = "an rcp class's route must cross at least one link whose queue is RCP's (queue = { type = \"rcp\" }): nothing else sets its rate";

/// Why a class whose datagrams carry a header field of their own may not cross an RCP link.
pub const HEADER_ROUTE: &str =
    "tfrc's ns2 variant carries its round id in the field RCP links rewrite: its route may not cross a link whose queue is RCP's";

/// What is wrong with a route, in words.
pub fn describe_fault(f: &RouteFault) -> String {
    match f {
        RouteFault::Empty => "expected at least one link".into(),
        RouteFault::Disconnected { at } => format!("link {at} does not start where link {} ends", at - 1),
        RouteFault::Revisits { at, .. } => format!("link {at} comes back to a node the route already passed (a loop)"),
        RouteFault::TooLong => format!("a route may have at most {} links", crate::net::topology::MAX_HOPS),
    }
}

fn check_arrivals(a: &Arrivals, p: &str) -> Result<()> {
    fn sorted(times: impl Iterator<Item = SimTime>) -> bool {
        let mut prev = SimTime::ZERO;
        for x in times {
            if x < prev || x > SimTime::LONGEST {
                return false;
            }
            prev = x;
        }
        true
    }
    match a {
        Arrivals::Poisson { rate_per_s, size } => {
            if !(rate_per_s.is_finite() && *rate_per_s > 0.0) {
                return err(format!("{p}.rate_per_s"), "expected a positive number of flows per second");
            }
            check_size(size, &format!("{p}.size"))
        }
        Arrivals::LongLived { count } if *count == 0 => err(format!("{p}.count"), "expected at least 1 flow"),
        Arrivals::LongLived { .. } => Ok(()),
        Arrivals::FlowList { flows } => {
            if flows.is_empty() || !sorted(flows.iter().map(|f| f.0)) || flows.iter().any(|f| f.1 == 0 || f.1 > MAX_FLOW_BYTES) {
                return err(format!("{p}.flows"), "expected [time_ns, bytes] pairs sorted by time, sizes from 1 to 10^15 bytes");
            }
            Ok(())
        }
        Arrivals::Starts { times_ns } => {
            if times_ns.is_empty() || !sorted(times_ns.iter().copied()) {
                return err(format!("{p}.times_ns"), "expected start times sorted");
            }
            Ok(())
        }
    }
}

fn check_size(s: &SizeDist, p: &str) -> Result<()> {
    let ok = match s {
        SizeDist::Exponential { mean_bytes } => mean_bytes.is_finite() && *mean_bytes > 0.0,
        SizeDist::Pareto { mean_bytes, shape } => mean_bytes.is_finite() && *mean_bytes > 0.0 && shape.is_finite() && *shape > 1.0,
        SizeDist::Constant { bytes } => bytes.is_finite() && *bytes >= 1.0,
        SizeDist::Empirical { points } => {
            !points.is_empty()
                && points.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1)
                && points.iter().all(|&(s, c)| s >= 1.0 && (0.0..=1.0).contains(&c))
                && (points.last().unwrap().1 - 1.0).abs() < 1e-9
        }
    };
    if ok {
        Ok(())
    } else {
        err(p, "invalid parameters for this distribution")
    }
}
