//! libpcap captures of a link: every packet whose transmission starts on the
//! link, timestamped at that start, as IPv4 with TCP or UDP headers synthesised
//! from its flow (tcpdump, tshark and Wireshark read them).
//!
//! The file format is libpcap's (nanosecond timestamps, magic 0xa1b23c4d,
//! link type 101, raw IP; https://www.tcpdump.org/manpages/pcap-savefile.5.html).
//! Only the headers are captured (the engine carries no payload); each record's
//! original length is the packet's size on the wire. The headers:
//!
//! * IPv4 (RFC 791): node i has address 10.0.0.0 + i + 1; total length the
//!   packet's size (at most 65,535); ECN field (RFC 3168 §5): ECT(0) on
//!   ECN-capable packets, CE on marked ones; no fragmentation, TTL 64.
//! * TCP (RFC 9293): sequence numbers count from an initial sequence number of 0
//!   that the SYN takes, as a real connection's do, so the flow's byte k has
//!   sequence number k + 1 and an ACK of the engine's k carries k + 1 (modulo
//!   2^32); data segments carry ACK 1 (the receiver sends no data). Flags: SYN,
//!   ACK, ECE, CWR as the engine set them (and ECE | CWR on the SYN, ECE on the
//!   SYN-ACK, of an ECN connection: RFC 3168 §6.1.1). Options as the engine counts
//!   their bytes: timestamps (RFC 7323, NOP NOP TS; TSval in microseconds of
//!   simulated time, a data segment's its send time, an ACK's the start of its
//!   transmission on this link; TSecr an ACK's echo, 0 on data) and SACK blocks
//!   (RFC 2018, NOP NOP SACK) on ACKs. Checksums are 0 (no payload to sum).
//! * UDP (RFC 768) for rate flows: a datagram's first 8 payload bytes carry its
//!   offset in the flow's stream (big-endian); feedback goes the other way.
//! * Ports: the sender's 1024 + id mod 64512, the receiver's 5001 + (id div
//!   64512) mod 60000, so that flows between the same nodes differ.
use crate::engine::SimTime;
use crate::net::packet::{ACK, CE, CWR, DATAGRAM, ECE, ECT, SYN};
use crate::net::Packet;

/// What a capture needs to know of a class's flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// Node indices of the sender and the receiver.
    pub src: u32,
    pub dst: u32,
    /// TCP options the class's connections use.
    pub timestamps: bool,
    /// ECN-capable connections (flags on the SYN and SYN-ACK).
    pub ecn: bool,
}

/// One captured link's libpcap file, in memory.
#[derive(Clone, Debug)]
pub struct PcapWriter {
    bytes: Vec<u8>,
    /// The IPv4 identification of the next packet.
    id: u16,
    /// Packets captured.
    pub packets: u64,
}

/// libpcap: nanosecond timestamps, version 2.4, link type 101 (raw IP).
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;
/// The most header bytes a record holds (IPv4 20 + TCP 60).
const SNAPLEN: u32 = 80;

/// The IPv4 address of node `i`.
pub fn address(node: u32) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add(node).wrapping_add(1)).to_be_bytes()
}

/// The (sender, receiver) ports of flow `flow`.
pub fn ports(flow: u32) -> (u16, u16) {
    ((1024 + flow % 64512) as u16, (5001 + (flow / 64512) % 60000) as u16)
}

/// The Internet checksum (RFC 1071) of `data`.
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Microseconds of simulated time, as a 32-bit timestamp value.
fn micros(t: SimTime) -> u32 {
    (t.0 / 1000) as u32
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapWriter {
    /// An empty capture: the file header only.
    pub fn new() -> Self {
        let mut bytes = Vec::with_capacity(1 << 16);
        bytes.extend_from_slice(&MAGIC_NS.to_le_bytes());
        bytes.extend_from_slice(&[2, 0, 4, 0]); // version 2.4, two little-endian u16
        for x in [0, 0, SNAPLEN, LINKTYPE_RAW] {
            bytes.extend_from_slice(&x.to_le_bytes()); // zone, accuracy, snaplen, link type
        }
        PcapWriter { bytes, id: 0, packets: 0 }
    }

    /// The file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Capture `pkt`, whose transmission started at `start`, of a flow between
    /// `ep`'s nodes; `sack`: the blocks an ACK carries (None: none, or unknown).
    pub fn packet(&mut self, start: SimTime, pkt: &Packet, ep: &Endpoint, sack: Option<&[(u64, u64)]>) {
        let mut hdr = [0u8; SNAPLEN as usize];
        let n = if pkt.flags & DATAGRAM != 0 { self.udp(&mut hdr, pkt, ep) } else { self.tcp(&mut hdr, start, pkt, ep, sack) };
        let orig = (pkt.size as usize).max(n);
        for x in [(start.0 / 1_000_000_000) as u32, (start.0 % 1_000_000_000) as u32, n as u32, orig.min(u32::MAX as usize) as u32] {
            self.bytes.extend_from_slice(&x.to_le_bytes());
        }
        self.bytes.extend_from_slice(&hdr[..n]);
        self.packets += 1;
    }

    /// The IPv4 header of `pkt` into `h[..20]`, protocol `proto`, total length
    /// at least `min_len`.
    fn ip(&mut self, h: &mut [u8], pkt: &Packet, ep: &Endpoint, proto: u8, min_len: usize) {
        let back = pkt.flags & ACK != 0;
        let (src, dst) = if back { (ep.dst, ep.src) } else { (ep.src, ep.dst) };
        let ecn = if pkt.flags & CE != 0 { 3 } else if pkt.flags & ECT != 0 { 2 } else { 0 };
        let len = (pkt.size as usize).max(min_len).min(65535) as u16;
        h[0] = 0x45;
        h[1] = ecn;
        h[2..4].copy_from_slice(&len.to_be_bytes());
        h[4..6].copy_from_slice(&self.id.to_be_bytes());
        self.id = self.id.wrapping_add(1);
        h[6] = 0x40; // don't fragment
        h[8] = 64;
        h[9] = proto;
        h[12..16].copy_from_slice(&address(src));
        h[16..20].copy_from_slice(&address(dst));
        let c = checksum(&h[..20]);
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }

    /// A TCP segment's headers; returns their length.
    fn tcp(&mut self, h: &mut [u8], start: SimTime, pkt: &Packet, ep: &Endpoint, sack: Option<&[(u64, u64)]>) -> usize {
        let back = pkt.flags & ACK != 0;
        let syn = pkt.flags & SYN != 0;
        let (sender, receiver) = ports(pkt.flow);
        let (sport, dport) = if back { (receiver, sender) } else { (sender, receiver) };
        // Sequence and acknowledgment numbers: the SYN (real or implied) takes 0.
        let (seq, ack) = match (syn, back) {
            (true, false) => (0, 0),
            (true, true) => (0, 1),
            (false, false) => (pkt.seq.wrapping_add(1) as u32, 1),
            (false, true) => (1, pkt.seq.wrapping_add(1) as u32),
        };
        let mut flags = if syn { 0x02 } else { 0 } | if back || !syn { 0x10 } else { 0 };
        flags |= if pkt.flags & ECE != 0 { 0x40 } else { 0 } | if pkt.flags & CWR != 0 { 0x80 } else { 0 };
        if syn && ep.ecn {
            flags |= if back { 0x40 } else { 0xc0 };
        }
        // Options: NOP NOP TS, then NOP NOP SACK blocks.
        let t = &mut h[20..];
        let mut o = 20;
        if ep.timestamps {
            let (val, ecr) = if back { (micros(start), micros(pkt.ts)) } else { (micros(pkt.ts), 0) };
            t[o..o + 4].copy_from_slice(&[1, 1, 8, 10]);
            t[o + 4..o + 8].copy_from_slice(&val.to_be_bytes());
            t[o + 8..o + 12].copy_from_slice(&ecr.to_be_bytes());
            o += 12;
        }
        if let Some(blocks) = sack.filter(|b| !b.is_empty() && back) {
            t[o..o + 4].copy_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
            o += 4;
            for &(s, e) in blocks {
                t[o..o + 4].copy_from_slice(&(s.wrapping_add(1) as u32).to_be_bytes());
                t[o + 4..o + 8].copy_from_slice(&(e.wrapping_add(1) as u32).to_be_bytes());
                o += 8;
            }
        }
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[12] = ((o / 4) as u8) << 4;
        t[13] = flags;
        t[14..16].copy_from_slice(&65535u16.to_be_bytes());
        self.ip(h, pkt, ep, 6, 20 + o);
        20 + o
    }

    /// A datagram's (or feedback's) headers and the 8 payload bytes of its
    /// stream offset; returns their length.
    fn udp(&mut self, h: &mut [u8], pkt: &Packet, ep: &Endpoint) -> usize {
        let back = pkt.flags & ACK != 0;
        let (sender, receiver) = ports(pkt.flow);
        let (sport, dport) = if back { (receiver, sender) } else { (sender, receiver) };
        let len = (pkt.size as usize).max(36).min(65535) - 20;
        let u = &mut h[20..];
        u[0..2].copy_from_slice(&sport.to_be_bytes());
        u[2..4].copy_from_slice(&dport.to_be_bytes());
        u[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        u[8..16].copy_from_slice(&pkt.seq.to_be_bytes());
        self.ip(h, pkt, ep, 17, 36);
        36
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32) -> Packet {
        Packet { seq, ts: SimTime(1_500_000), owd: 0, sack: 0, flow: 3, conn: 0, len, size: len + 52, route: 0, hop: 1, flags: ECT, ce: 0 }
    }

    #[test]
    fn writes_libpcap_records_with_ipv4_and_tcp_headers() {
        let ep = Endpoint { src: 0, dst: 1, timestamps: true, ecn: true };
        let mut w = PcapWriter::new();
        w.packet(SimTime(2_000_000_123), &data(1000, 1448), &ep, None);
        let ack = Packet { seq: 2448, flags: ACK | ECE, size: 52 + 12, len: 0, ..data(0, 0) };
        w.packet(SimTime(3_000_000_000), &ack, &ep, Some(&[(4000, 5448)]));
        let b = w.into_bytes();
        assert_eq!(&b[..4], &MAGIC_NS.to_le_bytes());
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), LINKTYPE_RAW);
        // First record: 2 s + 123 ns, 52 header bytes captured of 1500.
        let r = &b[24..];
        let word = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap());
        assert_eq!((word(0), word(4), word(8), word(12)), (2, 123, 52, 1500));
        let ip = &r[16..];
        assert_eq!((ip[0], ip[1], u16::from_be_bytes([ip[2], ip[3]])), (0x45, 2, 1500));
        assert_eq!((&ip[12..16], &ip[16..20]), (&[10, 0, 0, 1][..], &[10, 0, 0, 2][..]));
        assert_eq!(checksum(&ip[..20]), 0, "a valid header sums to zero");
        let tcp = &ip[20..];
        assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), 1001);
        assert_eq!((tcp[12] >> 4, tcp[13]), (8, 0x10));
        // TSval: the send time in microseconds.
        assert_eq!(u32::from_be_bytes(tcp[24..28].try_into().unwrap()), 1500);
        // Second record: an ACK the other way with one SACK block.
        let r = &r[16 + 52..];
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 64);
        let ip = &r[16..];
        assert_eq!(&ip[12..16], &[10, 0, 0, 2]);
        let tcp = &ip[20..];
        assert_eq!((u16::from_be_bytes([tcp[0], tcp[1]]), u16::from_be_bytes([tcp[2], tcp[3]])), (5001, 1027));
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 2449);
        assert_eq!((tcp[12] >> 4, tcp[13]), (11, 0x50));
        assert_eq!(&tcp[32..36], &[1, 1, 5, 10]);
        assert_eq!(u32::from_be_bytes(tcp[36..40].try_into().unwrap()), 4001);
    }

    #[test]
    fn ports_tell_flows_apart() {
        assert_eq!(ports(0), (1024, 5001));
        assert_eq!(ports(64512), (1024, 5002));
        assert_eq!(address(255), [10, 0, 1, 0]);
    }
}
