//! The seam a queue discipline plugs into.
//!
//! A discipline is one file: a configuration type implementing [`QueueConfig`] (its
//! name, how it is read from a link's `queue = { type = ..., ... }` table, its range
//! check, its buffer limits and its run-time state) and a state implementing
//! [`QueueDiscipline`] (the verdict on every arrival, and a deadline of its own if
//! it keeps a timer, as RCP's rate updates do), plus one line in `registry.rs`.
use super::{Arrival, Verdict};
use crate::engine::SimTime;
use crate::net::packet::Packet;
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

/// The queue a discipline's deadline finds: packets and bytes waiting, not counting
/// the one being transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub packets: u64,
    pub bytes: u64,
}

/// A queue discipline during a run: a sans-IO state machine the link asks for a
/// verdict on every arriving packet, which may keep a deadline of its own.
pub trait QueueDiscipline: Send {
    /// Decide on `pkt` arriving to the queue `a` describes. A discipline may change
    /// the packet it admits (RCP lowers the rate field of its datagrams).
    fn admit(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict;

    /// The same decision for a caller that builds the [`Arrival`] only if it is
    /// asked for (`arrival`): a discipline that decides from the queue alone
    /// (drop-tail, RCP) overrides this and never builds it. (Generic, so that the
    /// built-in disciplines' admission compiles to direct code; a boxed discipline
    /// registered at run time is asked `admit`.)
    #[inline]
    fn admit_lazy<F: Fn() -> Arrival>(&mut self, _q_packets: u64, _q_bytes: u64, pkt: &mut Packet, arrival: F) -> Verdict
    where
        Self: Sized,
    {
        self.admit(&arrival(), pkt)
    }

    /// When the discipline next needs to run on its own (None: never). Read when the
    /// run starts and after each `on_deadline`, which is the only place it may move.
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        None
    }

    /// The deadline has come, with `waiting` in the queue.
    #[inline]
    fn on_deadline(&mut self, _now: SimTime, _waiting: Waiting) {}
}

/// What a discipline's reader knows of its link.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpeed {
    /// Transmission rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: crate::engine::SimTime,
}

/// A queue discipline's configuration: its name, typed parameters (part of the
/// canonical configuration, after `"type": NAME`) and its run-time state.
pub trait QueueConfig: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + 'static {
    /// The `type = "..."` name.
    const NAME: &'static str;
    /// The discipline during a run.
    type State: QueueDiscipline + 'static;
    /// Read the link's `queue` table (its `type` already read; the caller refuses
    /// unknown keys); the link's rate converts limits and thresholds given as time,
    /// and its delay sets parameters derived from the path (RED's `"auto"` weight).
    fn read(t: &mut Table, link: LinkSpeed) -> Result<Self>;
    /// The first parameter out of range (its key in the canonical configuration),
    /// and why: checked on every way in (a scenario and a canonical configuration).
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }
    /// The buffer's limits in packets and bytes (None: no such limit).
    fn limits(&self) -> (Option<u64>, Option<u64>);
    /// The state at the start of a run on a link of `rate_bps`, with the link's own
    /// random stream (`queue/LINK`).
    fn start(&self, rate_bps: u64, rng: Xoshiro256pp) -> Self::State;
}

/// A discipline behind a box: the built-in enum holds the larger states this way, so
/// that a link's discipline slot stays small.
impl<T: QueueDiscipline> QueueDiscipline for Box<T> {
    #[inline]
    fn admit(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        (**self).admit(a, pkt)
    }
    #[inline]
    fn admit_lazy<F: Fn() -> Arrival>(&mut self, q_packets: u64, q_bytes: u64, pkt: &mut Packet, arrival: F) -> Verdict {
        (**self).admit_lazy(q_packets, q_bytes, pkt, arrival)
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        (**self).deadline()
    }
    #[inline]
    fn on_deadline(&mut self, now: SimTime, waiting: Waiting) {
        (**self).on_deadline(now, waiting)
    }
}

