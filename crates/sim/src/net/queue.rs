//! Queue disciplines: the decision taken when a packet reaches a link's queue.
//! (RED with drop or ECN mark joins `QueueDiscipline` as another variant.)

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    Drop,
}

/// Tail drop at a limit in packets and/or bytes (waiting packets only: the one
/// being transmitted has left the queue, as in ns-3's and Linux's devices).
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
}

impl DropTail {
    #[inline]
    fn admit(&self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        if self.limit_packets.is_some_and(|l| q_packets + 1 > l) || self.limit_bytes.is_some_and(|l| q_bytes + size as u64 > l) {
            Verdict::Drop
        } else {
            Verdict::Enqueue
        }
    }
}

/// The queue discipline of a link.
#[derive(Clone, Debug)]
pub enum QueueDiscipline {
    DropTail(DropTail),
}

impl QueueDiscipline {
    /// Decide on a packet of `size` bytes arriving to `q_packets` / `q_bytes` waiting.
    #[inline]
    pub fn admit(&mut self, q_packets: u64, q_bytes: u64, size: u32) -> Verdict {
        match self {
            QueueDiscipline::DropTail(d) => d.admit(q_packets, q_bytes, size),
        }
    }
}
