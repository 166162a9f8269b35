//! Packets: small plain structs moved by value through the event queue.
use crate::engine::SimTime;

/// The packet carries an acknowledgment (no payload).
pub const ACK: u8 = 1;
/// Data: this segment is a retransmission. ACK: the echoed segment was one (Karn's rule).
pub const RETX: u8 = 2;
/// A datagram of a constant-rate sender: no acknowledgment, no retransmission.
pub const DATAGRAM: u8 = 4;
/// Connection setup (header only): SYN alone opens a connection, SYN | ACK answers it.
pub const SYN: u8 = 8;

/// One packet on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Slot of the connection in the simulator's flow table.
    pub slot: u32,
    /// Flow id (unique for the whole run): tells a live flow from a reused slot.
    pub uid: u32,
    /// Data: first payload byte. ACK: cumulative acknowledgment (next byte expected).
    /// SYN and SYN-ACK: 0.
    pub seq: u64,
    /// Data and SYN: send time. ACK and SYN-ACK: the echoed send time of the segment
    /// (or SYN) that triggered it.
    pub ts: SimTime,
    /// Payload bytes.
    pub len: u32,
    /// Bytes on the wire (payload + header).
    pub size: u32,
    /// Route id and the index of the next link on it.
    pub route: u16,
    pub hop: u16,
    /// ACK / RETX / DATAGRAM / SYN bits.
    pub flags: u8,
}

impl Packet {
    #[inline]
    pub fn is_ack(&self) -> bool {
        self.flags & ACK != 0
    }
}
