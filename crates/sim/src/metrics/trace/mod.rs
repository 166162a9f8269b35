//! Traces: what happened inside a run, beyond its totals and sampled series.
//!
//! A scenario's `[trace]` table selects flows, links and access-controlled
//! classes. For each selected flow the run records its variables (congestion
//! window, ssthresh, bytes in flight, the RTT estimator, each RTT and one-way
//! delay sample, the recovery state, the sending rate, and the controller's own
//! state) on every change or at a fixed interval, and its packets at its
//! endpoints (segments sent and resent, ACKs and SACK blocks arriving, drops on
//! any link); for each selected link, every packet offered to it and the queue it
//! met; for each class, its access controller; and for the links named in
//! `pcap`, a libpcap capture. Nothing is recorded, and nothing costs more than a
//! check of one option per packet, when the table is absent. Tracing observes
//! only: a run gives the same tables with and without it.
mod events;
mod pcap;
mod probes;
mod queues;
mod select;
mod tracer;
mod vars;

pub use events::{PacketEvent, PacketTable};
pub use pcap::{Endpoint, PcapWriter};
pub use queues::{LinkEvent, LinkTable};
pub use select::Selection;
pub use tracer::Tracer;
pub use vars::{VarTable, Variable, FIXED_VARIABLES};

use crate::engine::SimTime;
use serde::{Deserialize, Serialize};

/// Which flows a selector matches: every condition given must hold. A flow is
/// traced when any selector of `[trace] flows` matches it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSelector {
    /// The flow's class (index; None: any class).
    pub class: Option<u32>,
    /// Flow ids (None: any id).
    pub ids: Option<Vec<u32>>,
    /// Flow sizes in bytes, both ends included (None: no bound; a flow that never
    /// ends has no size and matches only without bounds).
    pub min_bytes: Option<u64>,
    pub max_bytes: Option<u64>,
    /// Only the first this many flows the other conditions match, in order of
    /// arrival (None: all of them).
    pub first: Option<u64>,
}

/// What a run traces (the scenario's `[trace]` table, validated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub flows: Vec<FlowSelector>,
    /// Flow variables every interval (None: on every change).
    #[serde(rename = "interval_ns")]
    pub interval: Option<SimTime>,
    /// Whether the traced flows' packets are recorded too (the packets table).
    pub packets: bool,
    /// Link indices whose queue is traced packet by packet.
    pub links: Vec<u32>,
    /// Link indices captured into libpcap files.
    pub pcap: Vec<u32>,
    /// Class indices whose access controller is traced.
    pub access: Vec<u32>,
}

impl TraceConfig {
    /// Nothing is traced (the canonical form then has no `trace` key).
    pub fn is_off(&self) -> bool {
        self.flows.is_empty() && self.links.is_empty() && self.pcap.is_empty() && self.access.is_empty()
    }

    /// Check the indices and values (the canonical form); errors name the key
    /// under `trace` and what is wrong.
    pub fn check(&self, links: usize, classes: usize, has_access: &dyn Fn(usize) -> bool) -> Result<(), (String, String)> {
        for (j, s) in self.flows.iter().enumerate() {
            if s.class.is_some_and(|c| c as usize >= classes) {
                return Err((format!("flows[{j}].class"), "a class index is out of range".into()));
            }
            if s.first == Some(0) {
                return Err((format!("flows[{j}].first"), "expected at least 1 flow".into()));
            }
            if let (Some(lo), Some(hi)) = (s.min_bytes, s.max_bytes) {
                if lo > hi {
                    return Err((format!("flows[{j}].max_bytes"), "must be at least min_bytes".into()));
                }
            }
        }
        if self.interval == Some(SimTime::ZERO) {
            return Err(("interval_ns".into(), "expected a positive interval, or null for every change".into()));
        }
        for (key, list) in [("links", &self.links), ("pcap", &self.pcap)] {
            if let Some(j) = list.iter().position(|&l| l as usize >= links) {
                return Err((format!("{key}[{j}]"), "a link index is out of range".into()));
            }
        }
        for (j, &c) in self.access.iter().enumerate() {
            if c as usize >= classes || !has_access(c as usize) {
                return Err((format!("access[{j}]"), "expected the index of a class with access control".into()));
            }
        }
        Ok(())
    }
}

/// What a run traced: the tables, and a libpcap file per captured link.
#[derive(Clone, Debug, Default)]
pub struct Traces {
    /// Variables of the traced flows (long form).
    pub flows: VarTable,
    /// Packets of the traced flows at their endpoints, and their drops.
    pub packets: PacketTable,
    /// Every packet offered to a traced link, and its departure from the queue.
    pub links: LinkTable,
    /// The access controllers of the traced classes (long form; entity: class index).
    pub access: VarTable,
    /// (link index, libpcap file) for every captured link.
    pub pcap: Vec<(u32, Vec<u8>)>,
}

impl Traces {
    /// Rows of every table.
    pub fn rows(&self) -> usize {
        self.flows.len() + self.packets.len() + self.links.len() + self.access.len()
    }
}
