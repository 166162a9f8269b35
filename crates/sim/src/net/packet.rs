//! Packets: small plain structs moved by value through links.
use crate::engine::SimTime;

/// The packet carries an acknowledgment (no payload).
pub const ACK: u8 = 1;
/// Data: this segment is a retransmission. ACK: the echoed segment was one (Karn's rule).
pub const RETX: u8 = 2;
/// A datagram of a rate-based sender: no acknowledgment, no retransmission. With
/// ACK: a rate receiver's feedback to its sender.
pub const DATAGRAM: u8 = 4;
/// Connection setup (header only): SYN alone opens a connection, SYN | ACK answers it.
pub const SYN: u8 = 8;
/// IP: the sender is ECN-capable (ECT, RFC 3168 §5).
pub const ECT: u8 = 16;
/// IP: a queue marked the packet Congestion Experienced.
pub const CE: u8 = 32;
/// TCP: ECN-Echo, on ACKs from a receiver that got a CE-marked segment (RFC 3168 §6.1.3).
pub const ECE: u8 = 64;
/// TCP: Congestion Window Reduced, on the first new segment after a reduction for ECE.
pub const CWR: u8 = 128;

/// One packet on the wire (48 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Data: first payload byte. ACK: cumulative acknowledgment (next byte expected).
    /// SYN and SYN-ACK: 0. Datagram: first byte of the sender's stream.
    pub seq: u64,
    /// Data, SYN and datagrams: send time. ACK and SYN-ACK: the echoed send time of
    /// the segment (or SYN) the ACK answers (RFC 7323 echo rules).
    pub ts: SimTime,
    /// ACK: the one-way delay of the data segment whose arrival triggered it
    /// (receive time minus send time), in nanoseconds (saturating at 4.29 s).
    /// Datagram: the sender's RTT estimate in microseconds (RFC 5348 §3.2.1; 0:
    /// none). Zero otherwise.
    pub owd: u32,
    /// ACK: the receiver's record of the SACK blocks it carries (0: none). Rate
    /// feedback: the record of the report it carries.
    pub sack: u32,
    /// Flow id (unique for the run): tells a live connection from a reused slot.
    pub flow: u32,
    /// Slot of the connection in the simulator's connection table.
    pub conn: u32,
    /// Payload bytes.
    pub len: u32,
    /// Bytes on the wire (payload + header).
    pub size: u32,
    /// Route id and the index of the next link on it.
    pub route: u32,
    pub hop: u16,
    /// ACK / RETX / DATAGRAM / SYN and the ECN bits.
    pub flags: u8,
}

impl Packet {
    #[inline]
    pub fn is_ack(&self) -> bool {
        self.flags & ACK != 0
    }

    /// The one-way delay an ACK reports.
    #[inline]
    pub fn one_way_delay(&self) -> SimTime {
        SimTime(self.owd as u64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packets_stay_small() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 48);
    }
}
