//! The end hosts of RCP (Dukkipati et al., "Processor Sharing Flows in the
//! Internet", IWQoS 2005, §2): the sender sends at the rate the RCP links of its
//! path advertise, which the receiver echoes on every datagram.
//!
//! As the RCP authors' ns-2 hosts (`rcp-host.cc`) do:
//! * a flow starts with a header-only SYN probe whose rate field starts at "no
//!   limit" (+∞); each RCP link lowers it to its own rate; the receiver answers
//!   every datagram (probe or data) with a feedback packet carrying the field
//!   and the datagram's send time. The sender sends no data until the first
//!   answer, then sends at the echoed rate from that moment, and takes every
//!   later echo as its new rate;
//! * an unanswered SYN is repeated every `syn_interval` (ns-2 `SYN_DELAY`, 0.5 s);
//! * while the rate is below one datagram per RTT (the data alone would bring
//!   news too rarely), a header-only REF probe goes out every min(min RTT,
//!   `syn_interval`) (ns-2's `REF_INTVAL`·min RTT);
//! * every datagram carries the sender's latest RTT sample (now − echoed send
//!   time), from which the links average their d.
//!
//! The router's side is `net/queue/rcp.rs`.
use super::feedback::{FeedbackReceiver, Report};
use super::{FlowStart, RateControl, RateProtocol, Receiver};
use crate::engine::SimTime;
use crate::net::queue::rcp::{rate_field, read_time};
use crate::net::Packet;
use crate::settings::{Result, Table};
use serde::{Deserialize, Serialize};

/// Bytes of a SYN or REF probe on the wire: a header (ns-2 `RCP_HDR_BYTES`, 40).
pub const PROBE_BYTES: u32 = 40;

/// RCP's host parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcpParams {
    /// An unanswered SYN is sent again after this long; also the longest gap
    /// between REF probes (ns-2 `SYN_DELAY`, 0.5 s).
    #[serde(rename = "syn_interval_ns")]
    pub syn_interval: SimTime,
}

impl Default for RcpParams {
    fn default() -> Self {
        RcpParams { syn_interval: SimTime::from_millis(500) }
    }
}

/// An RCP flow's sending end.
#[derive(Clone, Debug)]
pub struct Rcp {
    syn_interval: SimTime,
    packet_bytes: u32,
    /// The echoed rate (bit/s; 0 until the first answer).
    rate: f64,
    /// The latest RTT sample and the smallest.
    rtt: Option<SimTime>,
    min_rtt: Option<SimTime>,
    /// When the next probe (SYN or REF) is due.
    next_probe: Option<SimTime>,
    /// A probe is due now (taken by the sender).
    probe: bool,
}

impl RateProtocol for Rcp {
    const NAME: &'static str = "rcp";
    type Params = RcpParams;

    /// `cc = { syn_interval = "500ms" }` (optional).
    fn read(mut t: Table) -> Result<RcpParams> {
        let d = RcpParams::default();
        let syn_interval = read_time(&mut t, "syn_interval", d.syn_interval)?;
        t.finish("the rcp protocol")?;
        Ok(RcpParams { syn_interval })
    }

    fn new(p: &RcpParams) -> Self {
        Rcp { syn_interval: p.syn_interval, packet_bytes: 1500, rate: 0.0, rtt: None, min_rtt: None, next_probe: None, probe: false }
    }

    fn receiver(_p: &RcpParams, _packet_bytes: u32) -> Option<Receiver> {
        Some(Receiver::Rcp(RcpReceiver))
    }
}

impl Rcp {
    /// The gap between REF probes while the rate is below one datagram per RTT
    /// (None: the rate is not that low, or there is no RTT sample yet).
    fn ref_gap(&self) -> Option<SimTime> {
        let rtt = self.min_rtt?;
        let interval = self.packet_bytes as f64 * 8.0 / self.rate;
        (self.rate > 0.0 && interval > rtt.as_secs_f64()).then(|| rtt.min(self.syn_interval))
    }
}

impl RateControl for Rcp {
    fn start(&mut self, f: FlowStart) {
        self.packet_bytes = f.packet_bytes;
        // The SYN leaves at once.
        self.next_probe = Some(f.now);
    }

    #[inline]
    fn rate_bps(&self) -> f64 {
        self.rate
    }

    fn deadline(&self) -> Option<SimTime> {
        self.next_probe
    }

    fn on_deadline(&mut self, now: SimTime) {
        self.probe = true;
        self.next_probe = if self.rate == 0.0 { Some(now + self.syn_interval) } else { self.ref_gap().map(|g| now + g) };
    }

    fn take_probe(&mut self) -> Option<u32> {
        std::mem::take(&mut self.probe).then_some(PROBE_BYTES)
    }

    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        let rtt = now - report.echo;
        self.rtt = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        // A field still at +∞ crossed no RCP link (the configuration refuses such
        // a route); a rate of 0 is none.
        let had_rate = self.rate > 0.0;
        if report.rate_bps.is_finite() && report.rate_bps > 0.0 {
            self.rate = report.rate_bps;
        }
        if self.rate > 0.0 {
            // REF probes while the rate is below a datagram per RTT: a REF already
            // pending stays; the first comes one gap from now.
            self.next_probe = match (self.ref_gap(), self.next_probe) {
                (None, _) => None,
                (Some(_), Some(t)) if had_rate && t > now => Some(t),
                (Some(g), _) => Some(now + g),
            };
        }
    }

    #[inline]
    fn rtt(&self) -> Option<SimTime> {
        self.rtt
    }

    fn rate_request(&self) -> Option<f64> {
        Some(f64::INFINITY)
    }
}

/// RCP's receiving end: every datagram is answered at once with its rate field
/// and its send time (ns-2's ACK, SYN-ACK and REF-ACK).
#[derive(Clone, Copy, Debug, Default)]
pub struct RcpReceiver;

impl FeedbackReceiver for RcpReceiver {
    #[inline]
    fn on_data(&mut self, _now: SimTime, pkt: &Packet) -> Option<Report> {
        Some(Report { echo: pkt.ts, x_recv: 0.0, p: 0.0, rate_bps: rate_field(pkt) as f64 })
    }
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    fn on_deadline(&mut self, _now: SimTime) -> Option<Report> {
        None
    }
}
