//! Receiver feedback for rate-based senders: what a receiver reports, how the
//! report reaches the sender, and the receiver's seam.
//!
//! A rate flow's connection holds both endpoints (`RateConn`), as a TCP
//! connection does. The receiving end is a sans-IO state machine
//! ([`FeedbackReceiver`]) that sees every datagram, may keep a timer of its own
//! (TFRC's once-per-RTT feedback timer, RFC 5348 §6.2), and now and then
//! produces a [`Report`]. The report is kept in the connection's log
//! ([`ReportLog`]) and a header-only feedback packet of [`FEEDBACK_BYTES`]
//! carries its number (`Packet::sack`) on the class's ACK route: the packet is
//! queued, counted and dropped like any other, and when it reaches the sender
//! the controller gets the report (`RateControl::on_feedback`).
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::records::RecordLog;

/// Bytes on the wire of a feedback packet. RFC 5348 §3.2.2 lists its contents
/// (the echoed timestamp, the time the receiver held it, X_recv and p: four
/// 32-bit fields over UDP/IP would be 44 bytes); 40 is ns-2's `Agent/TFRCSink`
/// `packetSize_`, the size the TFCBR paper's simulations used.
pub const FEEDBACK_BYTES: u32 = 40;

/// What a feedback packet reports (RFC 5348 §3.2.2).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    /// t_recvdata + t_delay: the send time of the last datagram received plus the
    /// time the receiver held it before this report. The sender's RTT sample is
    /// its receive time minus `echo` (RFC 5348 §4.3 step 1).
    pub echo: SimTime,
    /// X_recv: the rate at which the receiver got data over the last RTT, in
    /// bytes (of whole datagrams) per second.
    pub x_recv: f64,
    /// The loss event rate (0: no loss yet).
    pub p: f64,
}

/// The reports sent and not yet read by the sender.
pub type ReportLog = RecordLog<Report>;

/// The receiving end of a rate flow with feedback.
pub trait FeedbackReceiver {
    /// A datagram arrived at `now`; `Some`: send this report now.
    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Report>;
    /// When the receiver next needs to run on its own (None: never).
    fn deadline(&self) -> Option<SimTime>;
    /// Its deadline has come; `Some`: send this report now.
    fn on_deadline(&mut self, now: SimTime) -> Option<Report>;
}

/// The sender's RTT estimate as a datagram carries it (RFC 5348 §3.2.1), in
/// microseconds in `Packet::owd` (0: no estimate yet; saturates at 71 minutes).
pub fn rtt_field(rtt: Option<SimTime>) -> u32 {
    rtt.map_or(0, |r| (r.0 / 1000).clamp(1, u32::MAX as u64) as u32)
}

/// The sender's RTT estimate a datagram carries (None: the sender had none).
pub fn packet_rtt(pkt: &Packet) -> Option<SimTime> {
    (pkt.owd > 0).then(|| SimTime(pkt.owd as u64 * 1000))
}
