//! The recorder of a traced run: the loop hands it each event of a traced flow
//! or class, and the packets crossing a captured link; it keeps what changed.
use super::events::NO_LINK;
use super::probes::{Fixed, Probes};
use super::{Endpoint, LinkTable, PacketEvent, PacketTable, PcapWriter, Selection, TraceConfig, Traces, VarTable, Variable, FIXED_VARIABLES};
use crate::engine::SimTime;
use crate::net::packet::{ACK, CE, RETX, SYN};
use crate::net::tap::Tap;
use crate::net::Packet;
use crate::traffic::ClassConfig;
use crate::transport::cc::CongestionControl;
use crate::transport::rate::{RateConn, RateControl};
use crate::transport::state::StateVars;
use crate::transport::tcp::{SackRecord, Tcp};
use crate::transport::Transport;

/// The recorder of a run's traces.
pub struct Tracer {
    selection: Selection,
    interval: Option<SimTime>,
    packets_on: bool,
    probes: Probes,
    /// A controller's report, filled afresh for every record.
    vars: StateVars,
    packets: PacketTable,
    access: VarTable,
    /// One writer per captured link (None: not captured).
    pcap: Vec<Option<PcapWriter>>,
    /// Per class: the capture's view of its flows, and whether its access controller is traced.
    endpoints: Vec<Endpoint>,
    access_traced: Vec<bool>,
    access_last: Vec<[f64; 3]>,
}

/// The access trace's variables.
const ACCESS_VARIABLES: &[&str] = &["limit_files", "active_files", "waiting_files"];

impl Tracer {
    /// A recorder of `cfg` for a run of `links` links and these classes.
    pub fn new(cfg: &TraceConfig, links: usize, classes: &[ClassConfig]) -> Tracer {
        let mut pcap: Vec<Option<PcapWriter>> = (0..links).map(|_| None).collect();
        for &l in &cfg.pcap {
            pcap[l as usize] = Some(PcapWriter::new());
        }
        let endpoints = classes
            .iter()
            .map(|c| {
                let (timestamps, ecn) = match &c.transport {
                    Transport::Window { tcp, .. } => (tcp.timestamps, tcp.ecn),
                    Transport::Rate { .. } => (false, false),
                };
                Endpoint { src: c.src, dst: c.dst, timestamps, ecn }
            })
            .collect();
        let mut access_traced = vec![false; classes.len()];
        for &c in &cfg.access {
            access_traced[c as usize] = true;
        }
        Tracer {
            selection: Selection::new(&cfg.flows),
            interval: cfg.interval,
            packets_on: cfg.packets,
            probes: Probes::new(cfg.interval.is_none()),
            vars: StateVars::default(),
            packets: PacketTable::default(),
            access: VarTable::new(ACCESS_VARIABLES),
            pcap,
            endpoints,
            access_traced,
            access_last: vec![[f64::NAN; 3]; classes.len()],
        }
    }

    /// The flow variables' interval (None: every change).
    pub fn interval(&self) -> Option<SimTime> {
        self.interval
    }

    /// Flow `flow` of class `class` and `size` bytes (u64::MAX: never ends) arrives.
    #[cold]
    pub fn arrive(&mut self, flow: u32, class: u32, size: u64) {
        self.selection.arrive(flow, class, size);
    }

    /// Whether flow `flow` is traced.
    #[inline]
    pub fn traced(&self, flow: u32) -> bool {
        self.selection.traced(flow)
    }

    /// After an event of a TCP sender (its opening, an ACK, a timer): the
    /// segments it sent (`out`, in order) and its variables.
    #[cold]
    pub fn tcp(&mut self, now: SimTime, tcp: &Tcp, out: &[Packet]) {
        let flow = tcp.ep.flow;
        if !self.traced(flow) {
            return;
        }
        if self.packets_on {
            for p in out.iter().filter(|p| p.flow == flow && p.flags & ACK == 0) {
                let event = if p.flags & SYN != 0 {
                    PacketEvent::Syn
                } else if p.flags & RETX != 0 {
                    PacketEvent::Retransmit
                } else {
                    PacketEvent::Send
                };
                self.packet(now, flow, event, (p.seq, p.seq + p.len as u64), NO_LINK);
            }
        }
        self.tcp_state(now, tcp, false);
    }

    /// One row of the packets trace.
    #[inline]
    fn packet(&mut self, now: SimTime, flow: u32, event: PacketEvent, range: (u64, u64), link: u32) {
        self.packets.push(now, flow, event, range, link);
    }

    /// The variables of a TCP sender; `all`: every one, changed or not (an interval's record).
    fn tcp_state(&mut self, now: SimTime, tcp: &Tcp, all: bool) {
        let est = tcp.rtt_estimator();
        let (sample, count) = est.latest();
        let mut v: Fixed = [f64::NAN; FIXED_VARIABLES.len()];
        v[Variable::Cwnd as usize] = tcp.w.cwnd as f64;
        if tcp.w.ssthresh != u64::MAX {
            v[Variable::Ssthresh as usize] = tcp.w.ssthresh as f64;
        }
        v[Variable::InFlight as usize] = tcp.in_flight() as f64;
        if let Some((srtt, rttvar)) = est.smoothed() {
            v[Variable::Srtt as usize] = srtt * 1e-9;
            v[Variable::Rttvar as usize] = rttvar * 1e-9;
        }
        v[Variable::Rto as usize] = est.rto().as_secs_f64();
        v[Variable::Recovery as usize] = tcp.recovery_state() as u8 as f64;
        self.vars.clear();
        tcp.cc.observe(&tcp.w, now, &mut self.vars);
        self.probes.record(now, tcp.ep.flow, &v, (sample.as_secs_f64(), count), &self.vars, all);
    }

    /// An ACK reaches a traced flow's sender (before it is processed): the ACK
    /// and its SACK blocks, and the one-way delay sample it carries.
    #[cold]
    pub fn ack_arrived(&mut self, now: SimTime, tcp: &Tcp, ack: &Packet) {
        let flow = tcp.ep.flow;
        if !self.traced(flow) {
            return;
        }
        if self.packets_on {
            self.packet(now, flow, PacketEvent::Ack, (ack.seq, ack.seq), NO_LINK);
            if let Some(r) = (ack.sack != 0).then(|| tcp.sack_record(ack.sack)).flatten() {
                for &b in r.blocks() {
                    self.packet(now, flow, PacketEvent::Sack, b, NO_LINK);
                }
            }
        }
        self.probes.owd(now, flow, ack.one_way_delay().as_secs_f64());
    }

    /// A data segment reaches a traced flow's receiver: a congestion mark, if it carries one.
    #[cold]
    pub fn data_arrived(&mut self, now: SimTime, pkt: &Packet) {
        if self.packets_on && pkt.flags & CE != 0 && self.traced(pkt.flow) {
            self.packet(now, pkt.flow, PacketEvent::Ce, (pkt.seq, pkt.seq + pkt.len as u64), NO_LINK);
        }
    }

    /// After an event of a rate flow's sender (its start, a report, a deadline):
    /// its variables; `sent`: the datagram it sent, if any.
    #[cold]
    pub fn rate(&mut self, now: SimTime, r: &RateConn, sent: Option<&Packet>) {
        let flow = r.flow();
        if !self.traced(flow) {
            return;
        }
        if let Some(p) = sent.filter(|_| self.packets_on) {
            self.packet(now, flow, PacketEvent::Send, (p.seq, p.seq + p.len as u64), NO_LINK);
        }
        self.rate_state(now, r, false);
    }

    fn rate_state(&mut self, now: SimTime, r: &RateConn, all: bool) {
        let mut v: Fixed = [f64::NAN; FIXED_VARIABLES.len()];
        v[Variable::Rate as usize] = r.tx.cc.rate_bps();
        if let Some(rtt) = r.tx.cc.rtt() {
            v[Variable::RttEstimate as usize] = rtt.as_secs_f64();
        }
        self.vars.clear();
        r.tx.cc.observe(&mut self.vars);
        self.probes.record(now, r.flow(), &v, (0.0, 0), &self.vars, all);
    }

    /// A feedback report reaches a traced rate flow's sender.
    #[cold]
    pub fn feedback_arrived(&mut self, now: SimTime, flow: u32) {
        if self.packets_on && self.traced(flow) {
            self.packet(now, flow, PacketEvent::Feedback, (0, 0), NO_LINK);
        }
    }

    /// A packet was dropped at link `link`.
    #[cold]
    pub fn dropped(&mut self, now: SimTime, link: u32, pkt: &Packet) {
        if !self.packets_on || !self.traced(pkt.flow) {
            return;
        }
        let (event, end) = if pkt.flags & ACK != 0 { (PacketEvent::AckDrop, pkt.seq) } else { (PacketEvent::Drop, pkt.seq + pkt.len as u64) };
        self.packet(now, pkt.flow, event, (pkt.seq, end), link);
    }

    /// The interval's record of an open traced TCP flow.
    pub fn tick_tcp(&mut self, now: SimTime, tcp: &Tcp) {
        if self.traced(tcp.ep.flow) {
            self.tcp_state(now, tcp, true);
        }
    }

    /// The interval's record of an open traced rate flow.
    pub fn tick_rate(&mut self, now: SimTime, r: &RateConn) {
        if self.traced(r.flow()) {
            self.rate_state(now, r, true);
        }
    }

    /// The access controller of class `class` now: its limit and the files
    /// transferring and waiting (recorded when any changed, if the class is traced).
    #[cold]
    pub fn access(&mut self, now: SimTime, class: u32, state: [f64; 3]) {
        if !self.access_traced[class as usize] {
            return;
        }
        let last = &mut self.access_last[class as usize];
        for (i, (&x, l)) in state.iter().zip(last.iter_mut()).enumerate() {
            if x.to_bits() != l.to_bits() {
                self.access.push(now.as_secs_f64(), class, i as u16, x);
                *l = x;
            }
        }
    }

    /// Whether link `link` is captured.
    #[inline]
    pub fn captures(&self, link: u32) -> bool {
        self.pcap.get(link as usize).is_some_and(|w| w.is_some())
    }

    /// Capture `pkt` of class `class`, whose transmission on link `link` started
    /// at `start`, with the SACK blocks it carries (when its connection knows them).
    pub fn capture(&mut self, link: u32, start: SimTime, pkt: &Packet, class: u32, sack: Option<SackRecord>) {
        let ep = self.endpoints[class as usize];
        if let Some(w) = self.pcap[link as usize].as_mut() {
            w.packet(start, pkt, &ep, sack.as_ref().map(|r| r.blocks()));
        }
    }

    /// The tables, with the links' taps (link index, tap) turned into the links
    /// trace up to `end`.
    pub fn finish(self, taps: Vec<(u32, Tap)>, end: SimTime) -> Traces {
        let mut links = LinkTable::default();
        for (l, tap) in taps {
            links.add_link(l, &tap.offered, end);
        }
        let pcap = self.pcap.into_iter().enumerate().filter_map(|(l, w)| w.map(|w| (l as u32, w.into_bytes()))).collect();
        Traces { flows: self.probes.finish(), packets: self.packets, links, access: self.access, pcap }
    }
}
