//! The packets of the traced flows, at their endpoints: what a time-sequence
//! graph draws (segments sent and resent, ACKs and SACK blocks coming back, drops
//! and congestion marks on the way).
use crate::engine::SimTime;

/// What happened to a packet of a traced flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketEvent {
    /// The sender sent new data [seq, end) (a rate flow: a datagram).
    Send = 0,
    /// The sender resent [seq, end).
    Retransmit,
    /// An ACK reached the sender; seq = end = its cumulative acknowledgment.
    Ack,
    /// One SACK block [seq, end) of that ACK (RFC 2018).
    Sack,
    /// A data segment or datagram [seq, end) was dropped at `link`.
    Drop,
    /// An ACK (or feedback) was dropped at `link`; seq = its acknowledgment.
    AckDrop,
    /// A data segment [seq, end) reached the receiver marked Congestion Experienced.
    Ce,
    /// The sender sent a SYN (resent ones included).
    Syn,
    /// A rate flow's feedback report reached its sender.
    Feedback,
}

/// The names of [`PacketEvent`], in code order.
pub const PACKET_EVENTS: &[&str] = &["send", "retransmit", "ack", "sack", "drop", "ack_drop", "ce", "syn", "feedback"];

/// No link (an event at an endpoint).
pub const NO_LINK: u32 = u32::MAX;

/// Rows of (time, flow, event, seq, end, link), as columns.
#[derive(Clone, Debug, Default)]
pub struct PacketTable {
    /// Seconds.
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub event: Vec<u8>,
    /// Sequence space in bytes of payload from the flow's first byte (0).
    pub seq: Vec<u64>,
    pub end: Vec<u64>,
    /// The link of a drop ([`NO_LINK`] otherwise).
    pub link: Vec<u32>,
}

impl PacketTable {
    /// One row.
    #[inline]
    pub fn push(&mut self, time: SimTime, flow: u32, event: PacketEvent, range: (u64, u64), link: u32) {
        self.time.push(time.as_secs_f64());
        self.flow.push(flow);
        self.event.push(event as u8);
        self.seq.push(range.0);
        self.end.push(range.1);
        self.link.push(link);
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The event names, in code order.
    pub fn event_names() -> Vec<String> {
        PACKET_EVENTS.iter().map(|s| s.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_codes() {
        assert_eq!(PACKET_EVENTS.len(), PacketEvent::Feedback as usize + 1);
        assert_eq!(PACKET_EVENTS[PacketEvent::AckDrop as usize], "ack_drop");
    }
}
