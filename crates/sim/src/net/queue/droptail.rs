//! Tail drop at a limit in packets and/or bytes.
use super::{overflows, read_limit, Verdict};
use crate::settings::{Result, Table};
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
        let d = DropTail::default();
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, (d.limit_packets, d.limit_bytes))?;
        Ok(DropTail { limit_packets, limit_bytes })
    }

    #[inline]
    pub fn admit(&self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        if overflows(self.limit_packets, self.limit_bytes, q_packets, q_bytes, size) {
            Verdict::Drop
        } else {
            Verdict::Enqueue
        }
    }
}
