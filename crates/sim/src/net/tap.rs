//! A traced link's tap: every packet offered to the link, what became of it
//! (queued, marked, dropped), the queue it left behind, and when its
//! transmission starts. The departures from the queue need no record of their
//! own: a FIFO link knows a packet's transmission start when it admits it, so
//! the queue at every instant follows from these rows (`metrics::trace`).
use super::packet::{Packet, ACK};
use crate::engine::SimTime;

/// What became of an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Fate {
    /// Admitted: it waits in the queue, or is sent at once.
    Queued = 0,
    /// Admitted and marked Congestion Experienced.
    Marked = 1,
    /// Dropped by the queue discipline.
    Dropped = 2,
}

/// One packet offered to the link (56 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offered {
    /// When it reached the link.
    pub time: SimTime,
    /// When its transmission starts (`time` if it is sent at once; ZERO if dropped).
    pub start: SimTime,
    /// Its first byte (data), cumulative acknowledgment (ACK) or stream offset (datagram).
    pub seq: u64,
    /// Packets and bytes waiting after it was offered (not counting the one in transmission).
    pub queue_packets: u64,
    pub queue_bytes: u64,
    pub flow: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub fate: Fate,
    /// It carries an acknowledgment or feedback (no data).
    pub ack: bool,
}

/// The packets offered to one link, in the order they arrived.
#[derive(Clone, Debug, Default)]
pub struct Tap {
    pub offered: Vec<Offered>,
}

impl Tap {
    /// Record `pkt`, offered at `time`; the queue after it, and its start (admitted packets).
    #[cold]
    pub fn record(&mut self, time: SimTime, pkt: &Packet, fate: Fate, queue: (u64, u64), start: SimTime) {
        self.offered.push(Offered {
            time,
            start,
            seq: pkt.seq,
            queue_packets: queue.0,
            queue_bytes: queue.1,
            flow: pkt.flow,
            size: pkt.size,
            fate,
            ack: pkt.flags & ACK != 0,
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn records_stay_small() {
        assert_eq!(std::mem::size_of::<super::Offered>(), 56);
    }
}
