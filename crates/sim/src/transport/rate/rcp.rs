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
use super::feedback::{packet_rtt, FeedbackReceiver, Report};
use super::{FlowStart, RateControl, RateProtocol, Receiver};
use crate::engine::SimTime;
use crate::net::queue::rcp::rate_field;
use crate::settings::readers::positive_time;
use crate::net::Packet;
use crate::settings::{Result, Table};
use crate::transport::state::StateVars;
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
    /// The receiver answers every datagram (true: ns-2's hosts), or (false, the
    /// default) only the datagrams that bring news: a probe, a rate field other
    /// than the last one answered, or the first datagram one sender's RTT after
    /// the last answer. The sender learns every new rate at the same moment
    /// either way; false sends a fraction of the feedback packets.
    pub answer_every: bool,
}

impl Default for RcpParams {
    fn default() -> Self {
        RcpParams { syn_interval: SimTime::from_millis(500), answer_every: false }
    }
}

/// An RCP flow's sending end (48 bytes: it is kept in the connection unboxed,
/// and a rate connection stays no larger than a TCP one).
#[derive(Clone, Debug)]
pub struct Rcp {
    syn_interval: SimTime,
    /// The echoed rate (bit/s; 0 until the first answer).
    rate: f64,
    /// The latest RTT sample (0: none yet) and the smallest (`SimTime::MAX`: none).
    rtt: SimTime,
    min_rtt: SimTime,
    /// When the next probe (SYN or REF) is due (`SimTime::MAX`: none).
    next_probe: SimTime,
    packet_bytes: u32,
    /// A probe is due now (taken by the sender).
    probe: bool,
}

impl RateProtocol for Rcp {
    const NAME: &'static str = "rcp";
    type Params = RcpParams;

    /// `cc = { syn_interval = "500ms", answer_every = true }` (optional).
    fn read(mut t: Table) -> Result<RcpParams> {
        let d = RcpParams::default();
        let syn_interval = positive_time(&mut t, "syn_interval", d.syn_interval)?;
        let answer_every = t.or("answer_every", d.answer_every)?;
        t.finish("the rcp protocol")?;
        Ok(RcpParams { syn_interval, answer_every })
    }

    fn check(p: &RcpParams) -> std::result::Result<(), (&'static str, String)> {
        if p.syn_interval == SimTime::ZERO || p.syn_interval > SimTime::LONGEST {
            return Err(("syn_interval_ns", format!("expected a positive time of at most 1e9 s, got {} ns", p.syn_interval.0)));
        }
        Ok(())
    }

    fn file_key(key: &'static str) -> &'static str {
        match key {
            "syn_interval_ns" => "syn_interval",
            k => k,
        }
    }

    fn new(p: &RcpParams) -> Self {
        Rcp { syn_interval: p.syn_interval, rate: 0.0, rtt: SimTime::ZERO, min_rtt: SimTime::MAX, next_probe: SimTime::MAX, packet_bytes: 1500, probe: false }
    }

    fn receiver(p: &RcpParams, _packet_bytes: u32) -> Option<Receiver> {
        Some(Receiver::Rcp(RcpReceiver { every: p.answer_every, ..RcpReceiver::default() }))
    }
}

impl Rcp {
    /// The gap between REF probes while the rate is below one datagram per RTT
    /// (None: the rate is not that low, or there is no RTT sample yet).
    fn ref_gap(&self) -> Option<SimTime> {
        let rtt = self.min_rtt;
        let interval = self.packet_bytes as f64 * 8.0 / self.rate;
        (rtt != SimTime::MAX && self.rate > 0.0 && interval > rtt.as_secs_f64()).then(|| rtt.min(self.syn_interval))
    }
}

impl RateControl for Rcp {
    fn start(&mut self, f: FlowStart) {
        self.packet_bytes = f.packet_bytes;
        // The SYN leaves at once.
        self.next_probe = f.now;
    }

    #[inline]
    fn rate_bps(&self) -> f64 {
        self.rate
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.next_probe != SimTime::MAX).then_some(self.next_probe)
    }

    fn on_deadline(&mut self, now: SimTime) {
        self.probe = true;
        self.next_probe = if self.rate == 0.0 { now + self.syn_interval } else { self.ref_gap().map_or(SimTime::MAX, |g| now + g) };
    }

    fn take_probe(&mut self) -> Option<u32> {
        std::mem::take(&mut self.probe).then_some(PROBE_BYTES)
    }

    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        let rtt = now - report.echo;
        self.rtt = rtt;
        self.min_rtt = self.min_rtt.min(rtt);
        // A field still at +∞ crossed no RCP link (the configuration refuses such
        // a route); a rate of 0 is none.
        let had_rate = self.rate > 0.0;
        if report.rate_bps.is_finite() && report.rate_bps > 0.0 {
            self.rate = report.rate_bps;
        }
        if self.rate > 0.0 {
            // REF probes while the rate is below a datagram per RTT: a REF already
            // pending stays; the first comes one gap from now.
            self.next_probe = match self.ref_gap() {
                None => SimTime::MAX,
                Some(_) if had_rate && self.next_probe != SimTime::MAX && self.next_probe > now => self.next_probe,
                Some(g) => now + g,
            };
        }
    }

    #[inline]
    fn rtt(&self) -> Option<SimTime> {
        (self.rtt > SimTime::ZERO).then_some(self.rtt)
    }

    fn rate_request(&self) -> Option<f64> {
        Some(f64::INFINITY)
    }

    /// The smallest RTT seen (absent before the first feedback).
    fn observe(&self, vars: &mut StateVars) {
        if self.min_rtt != SimTime::MAX {
            vars.put("rcp.min_rtt_s", self.min_rtt.as_secs_f64());
        }
    }
}

/// RCP's receiving end: a datagram is answered at once with its rate field and
/// its send time (ns-2's ACK, SYN-ACK and REF-ACK): every one, or with
/// `answer_every = false` only those that bring the sender news.
#[derive(Clone, Copy, Debug, Default)]
pub struct RcpReceiver {
    every: bool,
    /// The rate field last answered (0: none yet) and when.
    last_field: u32,
    last_answer: SimTime,
}

impl FeedbackReceiver for RcpReceiver {
    #[inline]
    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Report> {
        let news = self.every
            || pkt.len == 0
            || pkt.sack != self.last_field
            || packet_rtt(pkt).is_none_or(|rtt| now >= self.last_answer + rtt);
        if !news {
            return None;
        }
        self.last_field = pkt.sack;
        self.last_answer = now;
        Some(Report { echo: pkt.ts, x_recv: 0.0, p: 0.0, rate_bps: rate_field(pkt) as f64 })
    }
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    fn on_deadline(&mut self, _now: SimTime) -> Option<Report> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::DATAGRAM;
    use crate::net::queue::rcp::field_of;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn start(c: &mut Rcp, now: SimTime, packet_bytes: u32) {
        c.start(FlowStart { now, packet_bytes, rng: cclab_rng::stream(1, cclab_rng::StreamKey::new("t")) });
    }

    fn answer(echo: SimTime, rate: f64) -> Report {
        Report { echo, x_recv: 0.0, p: 0.0, rate_bps: rate }
    }

    #[test]
    fn syn_first_then_the_echoed_rate() {
        let mut c = Rcp::new(&RcpParams::default());
        start(&mut c, ms(100), 1000);
        // No data before the first answer; the SYN is due at once, then every 0.5 s.
        assert_eq!((c.rate_bps(), c.deadline()), (0.0, Some(ms(100))));
        assert_eq!(c.rate_request(), Some(f64::INFINITY));
        c.on_deadline(ms(100));
        assert_eq!(c.take_probe(), Some(PROBE_BYTES));
        assert_eq!(c.take_probe(), None);
        assert_eq!(c.deadline(), Some(ms(600)));
        // An answer without a rate (a field no RCP link lowered) changes nothing but the RTT.
        c.on_feedback(ms(190), &answer(ms(100), f64::INFINITY));
        assert_eq!((c.rate_bps(), c.rtt(), c.deadline()), (0.0, Some(ms(90)), Some(ms(600))));
        // The SYN's answer: 8 Mbps (a datagram per ms, far more than one per RTT): no REFs.
        c.on_feedback(ms(191), &answer(ms(100), 8e6));
        assert_eq!((c.rate_bps(), c.rtt(), c.deadline()), (8e6, Some(ms(91)), None));
    }

    #[test]
    fn ref_probes_while_below_one_datagram_per_rtt() {
        let mut c = Rcp::new(&RcpParams::default());
        start(&mut c, SimTime::ZERO, 1000);
        c.on_deadline(SimTime::ZERO);
        c.take_probe();
        c.on_feedback(ms(90), &answer(SimTime::ZERO, 8e6));
        // 80 kbit/s: one 1000-byte datagram per 100 ms > the 90 ms RTT: a REF one min RTT on.
        c.on_feedback(ms(200), &answer(ms(110), 80e3));
        assert_eq!(c.deadline(), Some(ms(290)));
        // A later answer with the same low rate keeps the pending REF.
        c.on_feedback(ms(250), &answer(ms(155), 80e3));
        assert_eq!(c.deadline(), Some(ms(290)));
        c.on_deadline(ms(290));
        assert_eq!((c.take_probe(), c.deadline()), (Some(PROBE_BYTES), Some(ms(380))));
        // 100 kbit/s: a datagram per 80 ms, more than one per RTT: no more REFs.
        c.on_feedback(ms(300), &answer(ms(210), 100e3));
        assert_eq!(c.deadline(), None);
        // An RTT above the SYN interval: REFs every 0.5 s at most.
        let mut c = Rcp::new(&RcpParams::default());
        start(&mut c, SimTime::ZERO, 1000);
        c.on_feedback(ms(800), &answer(SimTime::ZERO, 1000.0));
        assert_eq!(c.deadline(), Some(ms(1300)));
    }

    #[test]
    fn receiver_answers_news_only_unless_told_every() {
        let dg = |ts: u64, field: f32, len: u32| Packet { ts: ms(ts), owd: 90_000, sack: field_of(field), len, size: len.max(40), flags: DATAGRAM, ..Packet::default() };
        let mut every = RcpReceiver { every: true, ..RcpReceiver::default() };
        let mut news = RcpReceiver::default();
        let arrivals = [(0, 5e6, 1000), (1, 5e6, 1000), (2, 4e6, 1000), (3, 4e6, 1000), (4, 4e6, 0), (95, 4e6, 1000), (96, 4e6, 1000)];
        let mut answered = vec![];
        for (ts, f, len) in arrivals {
            let now = ms(ts + 45);
            let a = every.on_data(now, &dg(ts, f, len)).expect("every datagram is answered");
            assert_eq!(a, answer(ms(ts), f as f64));
            answered.push(news.on_data(now, &dg(ts, f, len)).is_some());
        }
        // New field, same, new field, same, probe, one RTT (90 ms) after the last answer, same.
        assert_eq!(answered, vec![true, false, true, false, true, true, false]);
    }
}
