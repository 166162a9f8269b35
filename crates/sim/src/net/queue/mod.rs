//! Queue disciplines: the decision taken when a packet reaches a link's queue.
//!
//! Each discipline has a configuration (a [`QueueConfig`]: a variant of [`Queue`],
//! part of the canonical configuration, read from the link's `queue = { type =
//! ..., ... }` table by the discipline's own file) and a run-time state (a
//! [`QueueDiscipline`]: a variant of [`Discipline`], built from the configuration
//! for one run). Drop-tail's state is its configuration; RED and the linear
//! profile keep an average queue, a counter and a random stream of their own; RCP
//! (`rcp.rs`) a rate it updates at a deadline of its own (the link's timer runs it)
//! and writes into the packets it admits. `registry.rs` lists them, and registers
//! others at run time.
mod average;
mod discipline;
mod droptail;
mod linear;
mod profile;
pub mod rcp;
mod red;
mod red_auto;
mod registry;

pub use average::Average;
pub use droptail::DropTail;
pub use linear::{Linear, LinearState};
pub use profile::Profile;
pub use rcp::{Rcp, RcpState};
pub use red::{Red, RedState};
pub use discipline::{LinkSpeed, QueueConfig, QueueDiscipline, Waiting};
pub use registry::{Discipline, Queue, QueueRegistry, BUILTIN};

use crate::engine::SimTime;
use crate::settings::{err, QueueLimit, Result, Table};
use cclab_rng::{StreamKey, Xoshiro256pp};
use serde::{Deserialize, Serialize};

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    /// Enqueue with Congestion Experienced set (only ever for an ECN-capable packet).
    Mark,
    Drop,
}

/// What a queue discipline knows of an arriving packet and of the link.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub now: SimTime,
    /// Packets (and their bytes) waiting, not counting the one being transmitted.
    pub q_packets: u64,
    pub q_bytes: u64,
    /// The packet's size on the wire.
    pub size: u32,
    /// The packet is ECN-capable (ECT): it may be marked instead of dropped.
    pub ect: bool,
    /// How long the transmitter has been free with nothing waiting (zero while busy).
    pub idle: SimTime,
}

/// What an active queue's average and thresholds count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Packets,
    Bytes,
}

impl Unit {
    /// The queue an arrival meets, in this unit.
    #[inline]
    fn of(self, a: &Arrival) -> u64 {
        match self {
            Unit::Packets => a.q_packets,
            Unit::Bytes => a.q_bytes,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Packets => "packets",
            Unit::Bytes => "bytes",
        }
    }
}

/// The random stream of link `link`'s queue: one per link, so a link's marks and
/// drops depend only on the seed and what reaches that link.
pub fn stream(seed: u64, link: u32) -> Xoshiro256pp {
    cclab_rng::stream(seed, StreamKey::new("queue").num(link as u64))
}

/// Whether a packet of `size` bytes arriving to `q_packets` / `q_bytes` waiting
/// would overflow a buffer of `packets` and/or `bytes`.
#[inline]
fn overflows(packets: Option<u64>, bytes: Option<u64>, q_packets: u64, q_bytes: u64, size: u32) -> bool {
    packets.is_some_and(|l| q_packets >= l) || bytes.is_some_and(|l| q_bytes + size as u64 > l)
}

/// `verdict`, unless the packet overflows the buffer of `packets` and/or `bytes`
/// (checked after the discipline's decision, as ns-3's queue discs do with their
/// internal queue's limit).
#[inline]
fn fit(verdict: Verdict, packets: Option<u64>, bytes: Option<u64>, a: &Arrival) -> Verdict {
    if verdict != Verdict::Drop && overflows(packets, bytes, a.q_packets, a.q_bytes, a.size) {
        Verdict::Drop
    } else {
        verdict
    }
}

/// A congestion signal for a packet: a mark if the queue marks and the packet is
/// ECN-capable, a drop otherwise (RFC 3168 §5: only ECT packets may be marked).
#[inline]
fn signal(ecn: bool, ect: bool) -> Verdict {
    if ecn && ect {
        Verdict::Mark
    } else {
        Verdict::Drop
    }
}

/// The buffer `limit = "80ms" | "100pkts" | "150KB"`, or `default` if absent; a
/// time limit is that much of the link's rate (`rate_bps`).
fn read_limit(t: &mut Table, rate_bps: u64, default: (Option<u64>, Option<u64>)) -> Result<(Option<u64>, Option<u64>)> {
    let Some(limit) = t.get::<QueueLimit>("limit")? else { return Ok(default) };
    let l = match limit {
        QueueLimit::Packets(n) => (Some(n), None),
        QueueLimit::Bytes(b) => (None, Some(b)),
        // Time's worth of the link's rate (e.g. "80ms" of 10 Mbps = 100 kB).
        QueueLimit::Time(d) => (None, Some(bytes_in(rate_bps, d))),
    };
    // A packet is admitted to the queue before it starts, even on an idle link
    // (as in ns-3's devices), so a zero limit would drop everything.
    if l.0 == Some(0) || l.1 == Some(0) {
        return err(t.key_path("limit"), "expected room for at least one packet, got 0 (an empty buffer drops every packet)");
    }
    if let QueueLimit::Time(d) = limit {
        let b = rate_bps as u128 * d.0 as u128 / 8_000_000_000;
        if b > MAX_LIMIT as u128 {
            return err(t.key_path("limit"), format!("that much of the link's rate is {b} bytes; a limit may be at most 10^18 bytes"));
        }
    }
    Ok(l)
}

/// Bytes the link sends in `d`.
fn bytes_in(rate_bps: u64, d: SimTime) -> u64 {
    (rate_bps as u128 * d.0 as u128 / 8_000_000_000).min(u64::MAX as u128) as u64
}

/// The largest queue limit, in packets or bytes: 10^18, below what the links
/// table's `limit_packets` / `limit_bytes` columns (pandas Int64) hold, 2^63 - 1.
pub const MAX_LIMIT: u64 = 1_000_000_000_000_000_000;

/// The thresholds `min_th` and `max_th` of an active queue ("5pkts", "7500B" or
/// "5ms", the last in bytes of the link's rate), both in one unit; `default`
/// (in packets) for those absent.
fn read_thresholds(t: &mut Table, rate_bps: u64, default: Option<(f64, f64)>) -> Result<(Unit, f64, f64)> {
    let mut read = |key: &'static str, default: Option<f64>| -> Result<(Unit, f64)> {
        match (read_threshold(t, rate_bps, key)?, default) {
            (Some(x), _) => Ok(x),
            (None, Some(v)) => Ok((Unit::Packets, v)),
            (None, None) => err(t.key_path(key), "missing: a threshold of the average queue, e.g. \"300pkts\" or \"450KB\""),
        }
    };
    let (u_min, min_th) = read("min_th", default.map(|d| d.0))?;
    let (u_max, max_th) = read("max_th", default.map(|d| d.1))?;
    if u_min != u_max {
        return err(
            t.key_path("max_th"),
            format!("min_th is in {} and max_th in {}: write both in packets, or both in bytes (or time)", u_min.name(), u_max.name()),
        );
    }
    Ok((u_min, min_th, max_th))
}

/// One threshold `key` ("5pkts", "7500B" or "5ms", the last in bytes of the
/// link's rate) in its unit, if present.
fn read_threshold(t: &mut Table, rate_bps: u64, key: &'static str) -> Result<Option<(Unit, f64)>> {
    Ok(match t.get::<QueueLimit>(key)? {
        Some(QueueLimit::Packets(n)) => Some((Unit::Packets, n as f64)),
        Some(QueueLimit::Bytes(b)) => Some((Unit::Bytes, b as f64)),
        Some(QueueLimit::Time(d)) => Some((Unit::Bytes, bytes_in(rate_bps, d) as f64)),
        None => None,
    })
}

/// A `mean_packet_size` (whole bytes), or `default`.
fn read_mean_packet(t: &mut Table, default: u32) -> Result<u32> {
    match t.get::<crate::settings::Size>("mean_packet_size")? {
        None => Ok(default),
        Some(s) if s.0 >= 1.0 && s.0 <= u32::MAX as f64 && s.0.fract() == 0.0 => Ok(s.0 as u32),
        Some(s) => err(t.key_path("mean_packet_size"), format!("expected a whole number of bytes from 1 to {}, got {}", u32::MAX, s.0)),
    }
}

/// A number `key`, or `default` if absent (None: required, `what` says what it is);
/// its range is checked with the other parameters.
fn read_number(t: &mut Table, key: &'static str, default: Option<f64>, what: &str) -> Result<f64> {
    match (t.get::<f64>(key)?, default) {
        (Some(v), _) | (None, Some(v)) => Ok(v),
        (None, None) => err(t.key_path(key), format!("missing: {what}")),
    }
}
