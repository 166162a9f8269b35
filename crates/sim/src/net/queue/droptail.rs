//! Tail drop at a limit in packets and/or bytes.
use super::{overflows, read_limit, Arrival, LinkSpeed, QueueConfig, QueueDiscipline, Verdict};
use crate::net::packet::Packet;
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
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

impl QueueConfig for DropTail {
    const NAME: &'static str = "droptail";
    type State = DropTail;

    /// Read `{ limit = "80ms" | "100pkts" | "150KB" }`; a time limit is that much of
    /// the link's rate (`rate_bps`).
    fn read(t: &mut Table, link: LinkSpeed) -> Result<DropTail> {
        let rate_bps = link.rate_bps;
        let d = DropTail::default();
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, (d.limit_packets, d.limit_bytes))?;
        Ok(DropTail { limit_packets, limit_bytes })
    }

    fn limits(&self) -> (Option<u64>, Option<u64>) {
        (self.limit_packets, self.limit_bytes)
    }

    fn start(&self, _rate_bps: u64, _rng: Xoshiro256pp) -> DropTail {
        self.clone()
    }
}

impl DropTail {
    /// Drop a packet of `size` arriving to `q_packets` / `q_bytes` waiting if it overflows.
    #[inline]
    pub fn verdict(&self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        if overflows(self.limit_packets, self.limit_bytes, q_packets, q_bytes, size) {
            Verdict::Drop
        } else {
            Verdict::Enqueue
        }
    }
}

impl QueueDiscipline for DropTail {
    #[inline]
    fn admit(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        self.verdict(a.q_packets, a.q_bytes, pkt.size)
    }

    #[inline]
    fn admit_lazy<F: Fn() -> Arrival>(&mut self, q_packets: u64, q_bytes: u64, pkt: &mut Packet, _arrival: F) -> Verdict {
        self.verdict(q_packets, q_bytes, pkt.size)
    }
}
