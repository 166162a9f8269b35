//! cclab packet-level simulator: integer-nanosecond time, one deterministic event
//! queue, links with FIFO queue disciplines, a shared TCP machinery with pluggable
//! congestion controllers, traffic classes, and the tables a run produces.
//! No Python here: `cclab-py` wraps it.
pub mod engine;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod scenario;
pub mod sim;
pub mod traffic;
pub mod transport;

pub use metrics::{RunResult, Scalar};
pub use scenario::{Config, ScenarioError};
pub use sim::{run_json, PacketCounters, Simulation};
