//! What a run will need, estimated before it starts, and the limits it must stay
//! within (issue 12): events (and from them a rough wall time), flows, rows of the
//! recorded tables, and memory. A run that would exceed a limit is refused with
//! the key at fault and the estimate, before any work, instead of running for
//! days or being killed for lack of memory.
//!
//! The estimate is an upper bound of the usual case, cheap (one pass over the
//! links and the classes' routes) and deterministic (it depends on the
//! configuration only, never on the machine):
//!
//! * packets: each class c sends at most X_c data packets, the least of what its
//!   route's narrowest link can carry in its smallest packets over the class's
//!   active time and, when the class's demand is bounded, that demand (Poisson and
//!   flow-list flows: their bytes over the MSS plus two packets per flow;
//!   constant-rate and Pareto senders: their peak rate). A link carries at most
//!   the sum of the X_c of the classes crossing it and at most its capacity in
//!   the smallest of their packets; acknowledgments and feedback are at most one
//!   per data packet, on each link of the ACK route.
//! * events: every packet crossing every link, one endpoint timer per packet
//!   sent, one event per flow arrival, one per sample of the series.
//! * wall time: events at [`NOMINAL_EVENTS_PER_S`].
//! * memory: the flow records and table (per flow), the connections that may be
//!   open at once (flows that never end, and every flow of a class whose route is
//!   offered at least its capacity), the series and arrivals tables, each row
//!   counted twice (the engine's columns and the Python copy).
//! * traces (`traced.rs`): the rows of the flows and packets traces of the traced
//!   flows' data packets, two rows per packet offered to a traced link, a record
//!   per captured packet, and the interval records' events.
use super::traced::{self, TraceNeeds};
use super::Config;
use crate::engine::SimTime;
use crate::metrics::FlowRecord;
use crate::settings::{err, Duration, Result, ScenarioError, Size, Table};
use crate::traffic::{Arrivals, ClassConfig};
use crate::transport::rate::RateConfig;
use crate::transport::{Conn, Transport};
use serde::{Deserialize, Serialize};

/// Events per second of wall time assumed by the wall-time estimate: the engine
/// runs the reference scenario at 19.5 million events per second on the 2-core
/// machine of docs/performance.md, and at about 2 million when five jobs share it;
/// with the events overestimated 1 to 3 times, 10 million keeps the estimate near
/// or above the real time on a loaded machine.
pub const NOMINAL_EVENTS_PER_S: f64 = 1e7;

/// The most flows a run can hold: flow ids are 32-bit (the flows table's `id`).
pub const MAX_FLOWS: f64 = u32::MAX as f64;

/// Bytes per row of the series table: time (8), metric (1), entity (4), value (8)
/// in the engine, and time (8), metric and entity codes (4 + 4), value (8) in pandas.
const SERIES_ROW_BYTES: f64 = 21.0 + 24.0;
/// Bytes per row of the arrivals table: 37 in the engine, 41 in pandas.
const ARRIVAL_ROW_BYTES: f64 = 37.0 + 41.0;
/// Bytes per flow of the flows table's columns (58 in the engine, 84 in pandas).
const FLOW_ROW_BYTES: f64 = 58.0 + 84.0;
/// Heap bytes of an open connection beyond its own struct (buffers, scoreboard).
const CONN_HEAP_BYTES: f64 = 512.0;
/// Bytes of a packet waiting on a link's wire (docs/performance.md).
const WIRE_ENTRY_BYTES: f64 = 64.0;
/// Bytes per row of the flows trace: time (8), flow (4), variable (2), value (8),
/// in the engine and in pandas.
const VAR_ROW_BYTES: f64 = 22.0 * 2.0;
/// Bytes per row of the packets trace: time, flow, event, seq, end, link (33), twice.
const PACKET_ROW_BYTES: f64 = 33.0 * 2.0;
/// Bytes per packet offered to a traced link: the tap's record (56) and two rows
/// (its arrival and its departure) of the links trace (54 bytes each), twice.
const LINK_PACKET_BYTES: f64 = 56.0 + 2.0 * 54.0 * 2.0;
/// Bytes per captured packet: a record header (16) and at most 80 header bytes,
/// in the engine and in Python.
const PCAP_PACKET_BYTES: f64 = 96.0 * 2.0;

/// Limits a run must stay within (the scenario's `[limits]` table).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Largest estimated memory, bytes.
    pub memory_bytes: u64,
    /// Largest estimated wall time (events at `NOMINAL_EVENTS_PER_S`).
    #[serde(rename = "wall_time_ns")]
    pub wall_time: SimTime,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory_bytes: 4_000_000_000, wall_time: SimTime::from_secs(3600) }
    }
}

impl Limits {
    pub fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// Read the `[limits]` table: `memory` (a size) and `wall_time` (a duration).
    pub fn read(mut t: Table) -> Result<Limits> {
        let d = Limits::default();
        let memory = match t.get::<Size>("memory")? {
            Some(Size(b)) if b >= 1.0 => b as u64,
            Some(_) => return err(t.key_path("memory"), "expected at least 1 byte"),
            None => d.memory_bytes,
        };
        let wall_time = match t.get::<Duration>("wall_time")? {
            Some(Duration(SimTime::ZERO)) => return err(t.key_path("wall_time"), "expected a positive duration"),
            Some(Duration(w)) => w,
            None => d.wall_time,
        };
        t.finish("the limits table")?;
        Ok(Limits { memory_bytes: memory, wall_time })
    }

    /// Check the values (the canonical form), naming the key under `p`.
    pub fn validate(&self, p: &str) -> Result<()> {
        if self.memory_bytes == 0 {
            return err(format!("{p}.memory_bytes"), "expected at least 1 byte");
        }
        if self.wall_time == SimTime::ZERO || self.wall_time > SimTime::LONGEST {
            return err(format!("{p}.wall_time_ns"), "expected a positive duration of at most 1e9 s");
        }
        Ok(())
    }
}

/// What an estimate blames: the key a user changes to bring it down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Culprit {
    Duration,
    RecordInterval,
    /// `record.arrivals[j]`.
    RecordArrivals(usize),
    /// The arrivals of class i (its count, starts, file, load or size).
    Class(usize),
    /// The queue limit of link l (index in the configuration's links).
    Queue(usize),
    /// `trace.flows[j]`, `trace.links[j]`, `trace.pcap[j]`, `trace.interval`.
    TraceFlows(usize),
    TraceLinks(usize),
    TracePcap(usize),
    TraceInterval,
}

/// Where each part of an estimate comes from.
type Parts = Vec<(Culprit, f64)>;

/// The estimate of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Flows that arrive (expected number for Poisson classes).
    pub flows: f64,
    /// Packets sent by all endpoints (data, ACKs, feedback) and delivered.
    pub packets: f64,
    pub events: f64,
    pub wall_time_s: f64,
    pub series_rows: f64,
    pub arrival_rows: f64,
    /// Rows of the traces (flows, packets, links) and bytes of the captures.
    pub trace_rows: f64,
    pub pcap_bytes: f64,
    pub memory_bytes: f64,
    /// The most bytes a link could send (its rate over the whole run).
    pub link_bytes: f64,
    events_by: Parts,
    memory_by: Parts,
    flows_by: Parts,
}

/// The largest part and its culprit.
fn largest(parts: &Parts) -> Culprit {
    parts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map_or(Culprit::Duration, |p| p.0)
}

/// A number for messages: 3 significant digits, exponent when large.
pub fn human(x: f64) -> String {
    if x < 1e6 {
        format!("{:.0}", x)
    } else {
        format!("{x:.2e}")
    }
}

/// A size for messages ("1.3 TB").
pub fn human_bytes(b: f64) -> String {
    let units = [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    for (s, u) in units {
        if b >= s {
            return format!("{:.1} {u}", b / s);
        }
    }
    format!("{b:.0} B")
}

/// A duration for messages ("2.5 h").
pub fn human_secs(s: f64) -> String {
    if s >= 86400.0 * 2.0 {
        format!("{:.0} days", s / 86400.0)
    } else if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

impl Estimate {
    /// The estimate of `cfg`.
    pub fn of(cfg: &Config) -> Estimate {
        let t_end = cfg.duration.as_secs_f64();
        let nl = cfg.links.len();
        let cap_bps: Vec<f64> = cfg.links.iter().map(|l| l.rate_bps as f64).collect();
        // Per link: the smallest data and ACK packet crossing it, and the sums of the
        // classes' packet bounds.
        let mut min_data = vec![f64::INFINITY; nl];
        let mut min_ack = vec![f64::INFINITY; nl];
        let mut data_sum = vec![0.0; nl];
        let mut ack_sum = vec![0.0; nl];
        // Data packets the classes with a bounded demand offer each link, uncapped.
        let mut demand_sum = vec![0.0; nl];
        let mut e = Estimate::default();
        // Packets of each class (data, ack) and its flows.
        let mut per_class = Vec::with_capacity(cfg.classes.len());
        for (ci, c) in cfg.classes.iter().enumerate() {
            let ClassDemand { active, flows, finite, small, demand, ack_bytes } = ClassDemand::of(c, cfg.duration);
            let narrowest = c.route.iter().map(|&l| cap_bps[l as usize]).fold(f64::INFINITY, f64::min);
            let x = demand.map_or(narrowest * active / (8.0 * small), |d| d.min(narrowest * active / (8.0 * small)));
            for &l in &c.route {
                let l = l as usize;
                min_data[l] = min_data[l].min(small);
                data_sum[l] += x;
                demand_sum[l] += demand.unwrap_or(0.0);
            }
            e.flows += flows;
            e.flows_by.push((Culprit::Class(ci), flows));
            e.events_by.push((Culprit::Class(ci), flows));
            per_class.push((flows, finite.is_some(), x, ack_bytes));
        }
        // What each link can carry in the smallest data packets crossing it.
        let cap = |l: usize, small: f64| if small.is_finite() { cap_bps[l] * t_end / (8.0 * small) } else { 0.0 };
        let data_cap: Vec<f64> = (0..nl).map(|l| cap(l, min_data[l])).collect();
        // Classes sharing a link share its capacity: each class's bound is scaled by
        // its most oversubscribed link, so that no link carries more than it can.
        for (c, pc) in cfg.classes.iter().zip(per_class.iter_mut()) {
            let share = c.route.iter().map(|&l| (data_cap[l as usize] / data_sum[l as usize]).min(1.0)).fold(1.0, f64::min);
            pc.2 *= share;
            if let Some(ab) = pc.3 {
                for &l in &c.ack_route {
                    min_ack[l as usize] = min_ack[l as usize].min(ab);
                    ack_sum[l as usize] += pc.2;
                }
            }
            e.packets += pc.2 * if pc.3.is_some() { 2.0 } else { 1.0 };
        }
        e.link_bytes = cap_bps.iter().fold(0.0, |m: f64, &r| m.max(r * t_end / 8.0));
        // Packets crossing each link, capped by its capacity in its smallest packets.
        let mut hops = 0.0;
        let mut per_link = vec![0.0; nl];
        for l in 0..nl {
            per_link[l] = data_sum[l].min(data_cap[l]) + ack_sum[l].min(cap(l, min_ack[l]));
            hops += per_link[l];
        }
        // Samples of the series, from the end of the warm-up.
        let measured = (cfg.duration - cfg.warmup).as_secs_f64();
        let samples = cfg.record.interval.map_or(0.0, |iv| (measured / iv.as_secs_f64()).floor());
        e.series_rows = samples * 2.0 * (nl + cfg.classes.len()) as f64;
        e.events_by.push((Culprit::Duration, hops + e.packets));
        e.events_by.push((Culprit::RecordInterval, samples));
        let traced = traced::needs(cfg, &per_class.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(), &per_link);
        e.add_traces(&traced);
        e.events = e.events_by.iter().map(|p| p.1).sum();
        e.wall_time_s = e.events / NOMINAL_EVENTS_PER_S;
        // Memory.
        let per_flow = std::mem::size_of::<FlowRecord>() as f64 + FLOW_ROW_BYTES;
        let per_conn = std::mem::size_of::<Option<Conn>>() as f64 + CONN_HEAP_BYTES;
        let offered = cfg.offered_load();
        for (ci, c) in cfg.classes.iter().enumerate() {
            let (flows, finite, _, _) = per_class[ci];
            let overloaded = c.route.iter().any(|&l| offered[l as usize].load >= 1.0);
            let open = if !finite || overloaded { flows } else { 0.0 };
            e.memory_by.push((Culprit::Class(ci), flows * per_flow + open * per_conn));
        }
        e.memory_by.push((Culprit::RecordInterval, e.series_rows * SERIES_ROW_BYTES));
        e.add_queues_and_arrivals(cfg, &demand_sum, &data_cap, &min_data, &per_link);
        e.memory_bytes = e.memory_by.iter().map(|p| p.1).sum();
        e
    }

    /// The memory of the packets queued at links offered more than they carry (up
    /// to their limits), and of the per-arrival rows of the recorded links; per link,
    /// `demand` and `capacity` in data packets, `smallest` data packet, `packets` crossing.
    fn add_queues_and_arrivals(&mut self, cfg: &Config, demand: &[f64], capacity: &[f64], smallest: &[f64], packets: &[f64]) {
        for (l, link) in cfg.links.iter().enumerate() {
            let excess = (demand[l] - capacity[l]).max(0.0);
            if excess > 0.0 {
                let (lp, lb) = link.queue.limits();
                let room = lp.map_or(f64::INFINITY, |p| p as f64).min(lb.map_or(f64::INFINITY, |b| b as f64 / smallest[l]));
                self.memory_by.push((Culprit::Queue(l), excess.min(room) * WIRE_ENTRY_BYTES));
            }
        }
        for (j, &l) in cfg.record.arrivals.iter().enumerate() {
            let rows = packets[l as usize];
            self.arrival_rows += rows;
            self.memory_by.push((Culprit::RecordArrivals(j), rows * ARRIVAL_ROW_BYTES));
        }
    }

    /// What the traces add: the interval records' events, and the memory of
    /// each selector's, traced link's and captured link's rows.
    fn add_traces(&mut self, t: &TraceNeeds) {
        if t.ticks > 0.0 {
            self.events_by.push((Culprit::TraceInterval, t.ticks));
        }
        for (j, (v, p)) in t.var_rows.iter().zip(&t.packet_rows).enumerate() {
            self.trace_rows += v + p;
            self.memory_by.push((Culprit::TraceFlows(j), v * VAR_ROW_BYTES + p * PACKET_ROW_BYTES));
        }
        for (j, &n) in t.link_packets.iter().enumerate() {
            self.trace_rows += 2.0 * n;
            self.memory_by.push((Culprit::TraceLinks(j), n * LINK_PACKET_BYTES));
        }
        for (j, &n) in t.pcap_packets.iter().enumerate() {
            self.pcap_bytes += n * PCAP_PACKET_BYTES / 2.0;
            self.memory_by.push((Culprit::TracePcap(j), n * PCAP_PACKET_BYTES));
        }
    }

    /// Check the estimate against `limits`; `key` names a culprit's key path
    /// (the scenario's, or the canonical form's).
    pub fn check(&self, limits: &Limits, key: &dyn Fn(Culprit) -> String) -> Result<()> {
        if self.link_bytes > MAX_LINK_BYTES {
            return err(
                key(Culprit::Duration),
                format!(
                    "a link could send {} bytes, more than the links table's 64-bit byte counters hold ({}): shorten the run",
                    human(self.link_bytes),
                    i64::MAX
                ),
            );
        }
        if self.flows > MAX_FLOWS {
            let c = largest(&self.flows_by);
            return err(key(c), format!("about {} flows would arrive; a run holds at most {} flows (flow ids are 32-bit)", human(self.flows), u32::MAX));
        }
        let wall_limit = limits.wall_time.as_secs_f64();
        if self.wall_time_s > wall_limit {
            let c = largest(&self.events_by);
            return Err(ScenarioError::new(
                key(c),
                format!(
                    "the run would take about {} events, roughly {} of wall time at {} events per second; limits.wall_time is {} (raise it to run this anyway)",
                    human(self.events),
                    human_secs(self.wall_time_s),
                    human(NOMINAL_EVENTS_PER_S),
                    human_secs(wall_limit)
                ),
            ));
        }
        if self.memory_bytes > limits.memory_bytes as f64 {
            let c = largest(&self.memory_by);
            let what = match c {
                Culprit::RecordInterval => format!("the series table would hold about {} rows", human(self.series_rows)),
                Culprit::RecordArrivals(_) => format!("the arrivals table would hold about {} rows", human(self.arrival_rows)),
                Culprit::Queue(_) => "an overloaded link would queue what it cannot carry".to_string(),
                Culprit::TraceFlows(_) | Culprit::TraceLinks(_) => format!("the traces would hold about {} rows", human(self.trace_rows)),
                Culprit::TracePcap(_) => format!("the packet captures would hold about {}", human_bytes(self.pcap_bytes)),
                _ => format!("about {} flows would arrive", human(self.flows)),
            };
            return err(
                key(c),
                format!(
                    "{what}: the run would need about {} of memory; limits.memory is {} (raise it to run this anyway)",
                    human_bytes(self.memory_bytes),
                    human_bytes(limits.memory_bytes as f64)
                ),
            );
        }
        Ok(())
    }
}

/// The largest byte count a link's counters can reach without overflowing the
/// links table's signed 64-bit columns (`bytes_sent`).
pub const MAX_LINK_BYTES: f64 = i64::MAX as f64;

/// What one class asks of the network over the run.
struct ClassDemand {
    /// Seconds the class is active (from its start to its stop or the end).
    active: f64,
    /// Flows it starts, and the bytes they carry (None: they never end).
    flows: f64,
    finite: Option<f64>,
    /// Its smallest data packet (bytes), its demand in data packets (None: as many
    /// as the path carries), and the bytes each data packet brings back (None: nothing).
    small: f64,
    demand: Option<f64>,
    ack_bytes: Option<f64>,
}

impl ClassDemand {
    /// The demand of class `c` in a run of `duration`.
    fn of(c: &ClassConfig, duration: SimTime) -> ClassDemand {
        let t_end = duration.as_secs_f64();
        let start = c.start.as_secs_f64().min(t_end);
        let stop = c.stop.map_or(t_end, |s| s.as_secs_f64().min(t_end));
        let active = (stop - start).max(0.0);
        let (flows, finite) = match &c.arrivals {
            Arrivals::Poisson { rate_per_s, size } => (rate_per_s * active, Some(rate_per_s * active * size.mean())),
            Arrivals::LongLived { count } => (*count as f64, None),
            Arrivals::Starts { times_ns } => (times_ns.len() as f64, None),
            Arrivals::FlowList { flows } => {
                let inside = flows.iter().filter(|f| f.0 < duration);
                let (n, bytes) = inside.fold((0.0, 0.0), |(n, b), f| (n + 1.0, b + f.1 as f64));
                (n, Some(bytes))
            }
        };
        // Smallest data packet, demand in packets, and what each data packet brings back.
        let (small, demand, ack_bytes) = match &c.transport {
            Transport::Window { tcp, .. } => {
                let hdr = tcp.header_bytes() as f64;
                let per_flow = if tcp.handshake { 2.0 } else { 0.0 };
                match finite {
                    Some(bytes) => (hdr + 1.0, Some(bytes / tcp.mss as f64 + flows * (2.0 + per_flow)), Some(hdr)),
                    None => (tcp.max_packet() as f64, None, Some(hdr)),
                }
            }
            Transport::Rate { cc, packet_bytes } => {
                let pkt = *packet_bytes as f64;
                let peak = match cc {
                    RateConfig::Cbr(p) => Some(p.rate_bps),
                    RateConfig::Pareto(p) => Some(p.rate_bps),
                    _ => None,
                };
                let demand = match (finite, peak) {
                    (Some(bytes), _) => Some(bytes / pkt + flows),
                    (None, Some(r)) => Some(flows * (r * active / (8.0 * pkt) + 1.0)),
                    (None, None) => None,
                };
                let fb = if cc.has_feedback() { Some(40.0) } else { None };
                (pkt, demand, fb)
            }
        };        ClassDemand { active, flows, finite, small, demand, ack_bytes }
    }
}
