//! The network: packets, links with their queue disciplines, and the topology.
pub mod link;
pub mod packet;
pub mod queue;
pub mod ring;
pub mod tap;
pub mod topology;

pub use link::{ArrivalRecord, Link, LinkConfig, LinkStats, Offer};
pub use packet::Packet;
pub use queue::{Arrival, Discipline, DropTail, Linear, Profile, Queue, Red, Unit, Verdict};
pub use topology::{Graph, RouteFault, Routes};
