//! Queue disciplines: the decision taken when a packet reaches a link's queue.
//! One small struct per discipline, one variant per struct in [`Queue`]; the
//! link's `queue = { type = ..., ... }` table is read by the discipline's own file.
mod droptail;

pub use droptail::DropTail;

use crate::settings::{err, Result, Table};
use serde::{Deserialize, Serialize};

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    Drop,
}

/// The queue discipline of a link (its configuration is its state: DropTail has none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Queue {
    #[serde(rename = "droptail")]
    DropTail(DropTail),
}

impl Default for Queue {
    fn default() -> Self {
        Queue::DropTail(DropTail::default())
    }
}

impl Queue {
    /// Read a link's `queue` table; `rate_bps` converts limits given as time.
    pub fn read(t: &mut Table, rate_bps: u64) -> Result<Queue> {
        let kind: String = t.or("type", "droptail".to_string())?;
        let q = match kind.as_str() {
            "droptail" => Queue::DropTail(DropTail::read(t, rate_bps)?),
            other => return err(t.key_path("type"), format!("unknown queue discipline {other:?}; expected \"droptail\"")),
        };
        Ok(q)
    }

    /// Whether a packet of `bytes` can ever be admitted.
    pub fn holds(&self, bytes: u64) -> bool {
        match self {
            Queue::DropTail(d) => d.holds(bytes),
        }
    }

    /// (packets, bytes) limits, for the links table.
    pub fn limits(&self) -> (Option<u64>, Option<u64>) {
        match self {
            Queue::DropTail(d) => (d.limit_packets, d.limit_bytes),
        }
    }

    /// Decide on a packet of `size` bytes arriving to `q_packets` / `q_bytes` waiting.
    #[inline]
    pub fn admit(&mut self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        match self {
            Queue::DropTail(d) => d.admit(q_packets, q_bytes, size),
        }
    }
}
