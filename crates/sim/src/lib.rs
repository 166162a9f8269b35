//! cclab packet-level simulator: integer-nanosecond time, one deterministic event
//! queue, links with FIFO queue disciplines, a shared TCP machinery with pluggable
//! congestion controllers, paced senders with rate controllers, traffic classes,
//! and the tables a run produces. No Python here: `cclab-py` wraps it.
//!
//! Layers, each using only those before it: `engine` (time, events, timers) ←
//! `settings` (reading user tables) ← `net` (packets, links, queues, topology) ←
//! `transport` (TCP, congestion and rate controllers) ← `traffic` (arrivals,
//! sizes, classes) ← `metrics` ← `config` (the validated run) ← `sim` (the
//! loop) ← `scenario` (files in, `Config` out).
pub mod config;
pub mod engine;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod settings;
pub mod sim;
pub mod traffic;
pub mod transport;

pub use config::Config;

/// The version of the engine's results. Bump it with any change that alters the
/// output of an existing canonical configuration (a bug fix in a protocol, a new
/// order of events): the result store keys every run by the canonical
/// configuration, its seed and this version, so a bump makes every stored result
/// of the previous engine stale instead of silently reused. A change that only
/// adds keys needs no bump (new keys change the canonical configuration itself).
/// `tests/reference_digest.rs` pins one scenario's output; this covers the rest.
/// History: 2, the flows table's `start` column (access control); 3, the warm-up
/// excluded from the series and the flow counts; 4, the summary's counters say what
/// they count (`whole_run_packets_*` for the whole run, `measured_packets_*` and the
/// flow counts for the measured period, as the links and flows tables count); 5, an
/// RFC 6675 sender turns off its SACKed bits at a retransmission timeout (RFC 2018 §8;
/// `tcp.sack_after_timeout`, "keep" in the ns3 and linux presets): runs with SACK and
/// without a preset change; 6, the adaptive access controllers of `cclab-control`
/// (issue 25: FAIRBAT's gain relative to the arrivals and halved at each crossing of τ,
/// its trend term on the chunks held rather than the waiting ones, which ended a limit
/// cycle with many long flows; rate tracking's queue target and faster memory of the
/// rate per chunk, the running-mean start of the load; the limit never left above the
/// most chunks held in the period, plus one): every run with `access = { policy =
/// "fairbat" }` or `"rate_tracking"` changes, and so does the flow-level model's (whose
/// memos in the result store carry this version).
pub const RESULTS_VERSION: u32 = 6;
pub use metrics::{RunResult, Scalar};
pub use settings::ScenarioError;
pub use sim::{PacketCounters, Simulation};
