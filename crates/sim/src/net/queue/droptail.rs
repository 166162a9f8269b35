//! Tail drop at a limit in packets and/or bytes.
use super::Verdict;
use crate::settings::{err, QueueLimit, Result, Table};
use serde::{Deserialize, Serialize};

/// Tail drop: an arriving packet is dropped when the packets (or bytes) waiting
/// would exceed the limit. The packet being transmitted has left the queue, as in
/// ns-3's and Linux's devices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTail {
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
}

impl Default for DropTail {
    /// 1000 packets, ns-3's and Linux's default device queue.
    fn default() -> Self {
        DropTail { limit_packets: Some(1000), limit_bytes: None }
    }
}

impl DropTail {
    /// Read `{ limit = "80ms" | "100pkts" | "150KB" }`; a time limit is that much of
    /// the link's rate (`rate_bps`).
    pub fn read(t: &mut Table, rate_bps: u64) -> Result<DropTail> {
        let Some(limit) = t.get::<QueueLimit>("limit")? else { return Ok(DropTail::default()) };
        let d = match limit {
            QueueLimit::Packets(n) => DropTail { limit_packets: Some(n), limit_bytes: None },
            QueueLimit::Bytes(b) => DropTail { limit_packets: None, limit_bytes: Some(b) },
            // Time's worth of the link's rate (e.g. "80ms" of 10 Mbps = 100 kB).
            QueueLimit::Time(d) => {
                let bytes = (rate_bps as u128 * d.0 as u128 / 8_000_000_000) as u64;
                DropTail { limit_packets: None, limit_bytes: Some(bytes) }
            }
        };
        // A packet is admitted to the queue before it starts, even on an idle link
        // (as in ns-3's devices), so a zero limit would drop everything.
        if d.limit_packets == Some(0) || d.limit_bytes == Some(0) {
            return err(t.key_path("limit"), "expected room for at least one packet, got 0 (an empty buffer drops every packet)");
        }
        Ok(d)
    }

    /// Whether a packet of `packet_bytes` fits an empty queue (a byte limit below a
    /// packet's size would drop every such packet).
    pub fn holds(&self, packet_bytes: u64) -> bool {
        self.limit_bytes.is_none_or(|l| packet_bytes <= l)
    }

    #[inline]
    pub fn admit(&self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        if self.limit_packets.is_some_and(|l| q_packets >= l) || self.limit_bytes.is_some_and(|l| q_bytes + size as u64 > l) {
            Verdict::Drop
        } else {
            Verdict::Enqueue
        }
    }
}
