//! The packet-level simulator: builds links, routes and traffic from a `Config`,
//! runs the event loop, and collects the tables.
//!
//! The loop knows two kinds of event (`event.rs`): the packet at the head of a
//! link's wire reaching the link's far end, and a timer firing for an owner (a
//! connection, a class's arrival process, the recorder). It hands each to its
//! owner; the network (`network.rs`) moves packets, and nothing here is
//! protocol-specific beyond handing a packet to its connection.
mod access;
mod event;
mod network;
mod report;
mod trace;

pub use network::PacketCounters;

use crate::config::Config;
use crate::engine::{EventQueue, Firing, SimTime, Timer};
use crate::metrics::series::{ACTIVE_FLOWS, QUEUE_BYTES, QUEUE_PACKETS, THROUGHPUT_BPS};
use crate::metrics::{FlowRecord, RunResult, Series};
use crate::net::packet::{DATAGRAM, SYN};
use crate::net::{queue, Link, Packet, Routes};
use crate::traffic::{Batch, Source};
use crate::transport::cc::{Cc, Registry};
use crate::transport::rate::{FlowStart, RateConn, RateSender};
use crate::transport::tcp::{Output, RttRule, Tcp, TcpParams};
use crate::transport::{Conn, Endpoints, Transport};
use event::{ConnTimer, Event, Owner};
use cclab_rng::StreamKey;
use network::Network;
use std::time::Instant;

/// A traffic class during a run.
struct ClassRun {
    source: Source,
    timer: Timer,
    data_route: u32,
    ack_route: u32,
    /// TCP parameters (defaults for rate-based classes).
    tcp: TcpParams,
    /// The controller each new connection starts from (window-based classes).
    cc: Option<Cc>,
    /// Rate-based classes whose receivers report back (TFRC and its kin).
    feedback: bool,
    active: u64,
    /// The controller of a class with access control (`access.rs`).
    access: Option<access::AccessRun>,
    /// Flows started so far (the index of the next one within the class).
    started: u64,
    delivered: u64,
    delivered_at_sample: u64,
    delivered_after_warmup: u64,
}

/// A packet-level simulation of one scenario.
pub struct Simulation {
    cfg: Config,
    net: Network,
    conns: Vec<Option<Conn>>,
    free_slots: Vec<u32>,
    records: Vec<FlowRecord>,
    classes: Vec<ClassRun>,
    out: Output,
    events: u64,
    series: Series,
    recorder: Timer,
    /// Fires at the end of the warm-up (when there is one).
    warmup_timer: Timer,
    /// The packet counters when the warm-up ended (all zero without a warm-up).
    at_warmup: PacketCounters,
    /// The traced flows' interval records (`[trace] interval`).
    trace_timer: Timer,
    warnings: Vec<String>,
    wall_secs: f64,
}

impl Simulation {
    /// Build a simulation of a checked configuration with the built-in controllers;
    /// `warnings` are carried into the result.
    pub fn new(cfg: Config, warnings: Vec<String>) -> Simulation {
        Self::with_registry(cfg, warnings, &Registry::new()).expect("a configuration with built-in protocols only")
    }

    /// Build a simulation whose classes may use controllers registered in `registry`.
    pub fn with_registry(cfg: Config, warnings: Vec<String>, registry: &Registry) -> Result<Simulation, String> {
        let mut links = Vec::with_capacity(cfg.links.len());
        for (i, l) in cfg.links.iter().enumerate() {
            let queue = registry.queues().start(&l.queue, l.rate_bps, queue::stream(cfg.seed, i as u32))?;
            links.push(Link::with_discipline(l, cfg.warmup, cfg.duration, queue));
        }
        for &l in &cfg.record.arrivals {
            links[l as usize].record_arrivals = true;
        }
        let mut routes = Routes::new();
        let mut classes = Vec::with_capacity(cfg.classes.len());
        for c in &cfg.classes {
            let data_route = routes.add(&c.route);
            let ack_route = routes.add(&c.ack_route);
            let (tcp, cc, feedback) = match &c.transport {
                Transport::Window { tcp, cc } => (tcp.clone(), Some(registry.make(cc)?), false),
                Transport::Rate { cc, .. } => (TcpParams::default(), None, cc.has_feedback()),
            };
            classes.push(ClassRun {
                source: Source::new(cfg.seed, &c.name, c.phase_window_ns()),
                timer: Timer::default(),
                data_route,
                ack_route,
                tcp,
                cc,
                feedback,
                active: 0,
                access: c.access.as_ref().map(|a| access::AccessRun::new(a, c.start, cfg.warmup)),
                started: 0,
                delivered: 0,
                delivered_at_sample: 0,
                delivered_after_warmup: 0,
            });
        }
        let mut series = Series::new(cfg.links.iter().map(|l| l.name.clone()), cfg.classes.iter().map(|c| c.name.clone()));
        if cfg.classes.iter().any(|c| c.access.is_some()) {
            series = series.with_access_metrics();
        }
        let queue_timers = links
            .iter()
            .map(|l: &Link| {
                let mut t = Timer::default();
                if let Some(d) = l.queue.deadline() {
                    t.set(d);
                }
                t
            })
            .collect();
        let trace = trace::tracer(&cfg, &mut links);
        let net = Network { now: SimTime::ZERO, queue: EventQueue::new(), links, queue_timers, routes, counters: PacketCounters::default(), trace };
        Ok(Simulation {
            net,
            conns: Vec::new(),
            free_slots: Vec::new(),
            records: Vec::new(),
            classes,
            out: Vec::with_capacity(64),
            events: 0,
            series,
            recorder: Timer::default(),
            warmup_timer: Timer::default(),
            at_warmup: PacketCounters::default(),
            trace_timer: Timer::default(),
            warnings,
            wall_secs: 0.0,
            cfg,
        })
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packet counters, with `in_flight` counted on the links' wires.
    pub fn packet_counters(&self) -> PacketCounters {
        self.net.packet_counters()
    }

    fn schedule_initial(&mut self) {
        // First, so that it runs before anything else due at the same time: what
        // happens at the warm-up's end is measured (as a flow arriving then is).
        if self.cfg.warmup > SimTime::ZERO {
            self.warmup_timer.set(self.cfg.warmup);
            self.net.queue.arm(&mut self.warmup_timer, Event::Timer(Owner::Warmup));
        }
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            let cr = &mut self.classes[ci];
            if let Some(t) = cr.source.first(&c.arrivals, c.start, c.stop_time()) {
                cr.timer.set(t);
                self.net.queue.arm(&mut cr.timer, Event::Timer(Owner::Source(ci as u32)));
            }
        }
        // Links whose queue discipline keeps a deadline (RCP's updates): the first
        // is already set.
        for (l, timer) in self.net.queue_timers.iter_mut().enumerate() {
            if timer.is_set() {
                self.net.queue.arm(timer, Event::Timer(Owner::Link(l as u32)));
            }
        }
        self.access_schedule_initial();
        self.trace_schedule_initial();
        if let Some(iv) = self.cfg.record.interval {
            // Samples every interval after the warm-up.
            self.recorder.set(self.cfg.warmup + iv);
            self.net.queue.arm(&mut self.recorder, Event::Timer(Owner::Recorder));
        }
    }

    /// Run to the end of the scenario. `progress(now)` is called now and then; if it
    /// returns false the run stops early (the result covers what was simulated).
    pub fn run(mut self, progress: &mut dyn FnMut(SimTime) -> bool) -> RunResult {
        let t0 = Instant::now();
        self.schedule_initial();
        let end = self.cfg.duration;
        let mut stopped_early = false;
        while let Some((t, ev)) = self.net.queue.peek_until(end) {
            // Invariant: time never goes back (checked in every build; one compare per event).
            assert!(t >= self.net.now, "time went back from {} to {}", self.net.now, t);
            self.net.now = t;
            self.events += 1;
            match ev {
                Event::Arrival(l) => {
                    let pkt = self.net.deliver(l);
                    if self.net.trace.is_some() {
                        self.trace_capture(l, pkt);
                    }
                    self.arrive(pkt);
                }
                Event::Timer(owner) => {
                    self.net.queue.take();
                    match owner {
                        Owner::Conn { slot, flow, timer } => self.conn_timer(slot, flow, timer),
                        Owner::Source(ci) => self.source_fired(ci),
                        Owner::Access(ci) => self.access_fired(ci),
                        Owner::Recorder => self.sample(),
                        Owner::Link(l) => self.link_timer(l),
                        Owner::Warmup => self.end_warmup(),
                        Owner::Trace => self.trace_tick(),
                    }
                }
            }
            if self.events & 0xFFFF == 0 && !progress(self.net.now) {
                stopped_early = true;
                break;
            }
        }
        if !stopped_early {
            self.net.now = end;
        }
        self.wall_secs = t0.elapsed().as_secs_f64();
        progress(self.net.now);
        self.report(stopped_early)
    }

    fn source_fired(&mut self, ci: u32) {
        let c = &self.cfg.classes[ci as usize];
        let cr = &mut self.classes[ci as usize];
        if self.net.queue.fire(&mut cr.timer, self.net.now) != Firing::Due {
            return;
        }
        let (batch, next) = cr.source.fire(&c.arrivals, self.net.now, c.stop_time());
        match batch {
            Batch::One(bytes) => self.start_flow(ci, bytes),
            Batch::Unbounded(n) => (0..n).for_each(|_| self.start_flow(ci, u64::MAX)),
        }
        let cr = &mut self.classes[ci as usize];
        if let Some(t) = next {
            cr.timer.set(t);
            self.net.queue.arm(&mut cr.timer, Event::Timer(Owner::Source(ci)));
        }
    }

    /// A new flow of `bytes` (u64::MAX: never ends) in class `ci`; in a class with
    /// access control, a chunk that waits for its turn.
    fn start_flow(&mut self, ci: u32, bytes: u64) {
        if self.classes[ci as usize].access.is_some() {
            return self.access_arrival(ci, bytes);
        }
        let flow = self.records.len() as u32;
        self.records.push(FlowRecord::new(ci, bytes, self.net.now));
        if let Some(tr) = self.net.trace.as_deref_mut() {
            tr.arrive(flow, ci, bytes);
        }
        self.open_flow(ci, flow, bytes);
    }

    /// Open the connection of flow `flow` (its record exists) of class `ci`.
    fn open_flow(&mut self, ci: u32, flow: u32, bytes: u64) {
        let now = self.net.now;
        self.records[flow as usize].start = Some(now);
        let cr = &mut self.classes[ci as usize];
        cr.active += 1;
        let index = cr.started;
        cr.started += 1;
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.conns.push(None);
                (self.conns.len() - 1) as u32
            }
        };
        let ep = Endpoints { flow, conn: slot, class: ci, data_route: cr.data_route, ack_route: cr.ack_route };
        let c = &self.cfg.classes[ci as usize];
        let conn = self.conns[slot as usize].insert(match &c.transport {
            Transport::Window { .. } => Conn::Tcp(Tcp::new(ep, bytes, cr.cc.clone().expect("window class"), &cr.tcp)),
            Transport::Rate { cc, packet_bytes } => {
                // The flow's own stream: adding a class or a flow elsewhere changes none of its draws.
                let rng = cclab_rng::stream(self.cfg.seed, StreamKey::new("rate").part(&c.name).num(index));
                let start = FlowStart { now, packet_bytes: *packet_bytes, rng };
                let tx = RateSender::new(ep, cc.make(), start, c.stop_time(), bytes);
                Conn::Rate(RateConn::new(tx, cc.receiver(*packet_bytes)))
            }
        });
        match conn {
            Conn::Tcp(tcp) => {
                if cr.tcp.rules.rtt_estimator == RttRule::Ns2 {
                    // ns-2's boot_time_ (uniform in one tick), from the flow's own stream.
                    let mut rng = cclab_rng::stream(self.cfg.seed, StreamKey::new("tcp").part(&c.name).num(index));
                    let tick = cr.tcp.rules.clock_tick.0;
                    tcp.set_clock_phase(SimTime(((rng.uniform() * tick as f64) as u64).min(tick - 1)));
                }
                tcp.open(now, &cr.tcp, &mut self.out);
                if let Some(tr) = self.net.trace.as_deref_mut() {
                    tr.tcp(now, tcp, &self.out);
                }
                self.net.send_all(&mut self.out);
                self.net.arm_tcp(tcp, slot);
            }
            // A first datagram due now (not delayed by a random phase) leaves at once,
            // the next ones on the send timer.
            Conn::Rate(r) => {
                if let Some(tr) = self.net.trace.as_deref_mut() {
                    tr.rate(now, r, None);
                }
                if r.tx.send_timer.deadline() != Some(now) {
                    self.net.arm_rate(r, slot)
                } else {
                    self.rate_send(slot)
                }
            }
        }
    }

    /// A rate flow's datagram is due: send it and arm its timers (before the
    /// datagram leaves, so that its next event comes first among equal times).
    /// After its last datagram the connection closes: the datagrams still on
    /// their way are counted for the flow when they arrive (`arrive`), and
    /// nobody listens to feedback any more. A finite flow then stops being active.
    fn rate_send(&mut self, slot: u32) {
        let Some(Conn::Rate(r)) = self.conns[slot as usize].as_mut() else { unreachable!("a rate flow's slot") };
        let pkt = r.tx.send(self.net.now);
        if let Some(tr) = self.net.trace.as_deref_mut() {
            tr.rate(self.net.now, r, Some(&pkt));
        }
        if r.tx.done() {
            if self.records[pkt.flow as usize].size != u64::MAX {
                self.classes[r.tx.ep.class as usize].active -= 1;
            }
            self.conns[slot as usize] = None;
            self.free_slots.push(slot);
        } else {
            self.net.arm_rate(r, slot);
        }
        self.net.send(pkt);
    }

    /// A packet reaches the far end of a link: the next link, or its endpoint.
    #[inline]
    fn arrive(&mut self, pkt: Packet) {
        if let Some(l) = self.net.routes.link(pkt.route, pkt.hop) {
            self.net.offer(l, pkt);
            return;
        }
        let now = self.net.now;
        self.net.counters.delivered += 1;
        if pkt.flags & DATAGRAM != 0 {
            self.arrive_rate(pkt);
            return;
        }
        let slot = pkt.conn;
        let Some(Conn::Tcp(tcp)) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == pkt.flow) else {
            return; // the connection has closed: a late duplicate
        };
        let cr = &mut self.classes[tcp.ep.class as usize];
        let p = &cr.tcp;
        let out = &mut self.out;
        if pkt.flags & SYN != 0 {
            // Connection setup: a SYN reaches the receiver, a SYN-ACK the sender.
            if pkt.is_ack() {
                tcp.on_synack(&pkt, now, p, out);
                if let Some(tr) = self.net.trace.as_deref_mut() {
                    tr.tcp(now, tcp, out);
                }
            } else {
                tcp.on_syn(&pkt, p, out);
            }
        } else if pkt.is_ack() {
            if let Some(tr) = self.net.trace.as_deref_mut() {
                tr.ack_arrived(now, tcp, &pkt);
            }
            tcp.on_ack(&pkt, now, p, out);
            if let Some(tr) = self.net.trace.as_deref_mut() {
                tr.tcp(now, tcp, out);
            }
            if tcp.sender_done() {
                // Send whatever the last ACK produced before the slot is freed; the
                // connection's pending timer entries then find no live flow and lapse.
                self.net.send_all(out);
                report::copy_into(tcp, &mut self.records[pkt.flow as usize]);
                self.conns[slot as usize] = None;
                self.free_slots.push(slot);
                return;
            }
        } else {
            // Receive rate counts each segment that brings bytes beyond the cumulative
            // ACK point when it arrives (a hole's repair does not count twice what
            // arrived out of order, and the rate never exceeds the link's).
            let fresh = if pkt.seq + pkt.len as u64 > tcp.rcv_nxt && pkt.seq >= tcp.syn { pkt.len as u64 } else { 0 };
            if let Some(tr) = self.net.trace.as_deref_mut() {
                tr.data_arrived(now, &pkt);
            }
            tcp.on_data(&pkt, now, p, out);
            cr.delivered += fresh;
            if now >= self.cfg.warmup {
                cr.delivered_after_warmup += fresh;
            }
            let rec = &mut self.records[pkt.flow as usize];
            if tcp.receiver_done() && rec.finish.is_none() {
                rec.finish = Some(now);
                cr.active -= 1;
                if cr.access.is_some() {
                    let ci = tcp.ep.class;
                    self.net.send_all(out);
                    self.net.arm_tcp(tcp, slot);
                    return self.access_completed(ci);
                }
            }
        }
        self.net.send_all(out);
        self.net.arm_tcp(tcp, slot);
    }

    /// A rate flow's packet reaches its endpoint: a datagram its receiver, or a
    /// feedback packet its sender.
    #[inline]
    fn arrive_rate(&mut self, pkt: Packet) {
        let now = self.net.now;
        let slot = pkt.conn;
        if pkt.is_ack() {
            if let Some(Conn::Rate(r)) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == pkt.flow) {
                r.on_feedback(now, &pkt);
                if let Some(tr) = self.net.trace.as_deref_mut() {
                    tr.feedback_arrived(now, pkt.flow);
                    tr.rate(now, r, None);
                }
                self.net.arm_rate(r, slot);
            }
            return;
        }
        let rec = &mut self.records[pkt.flow as usize];
        let cs = &mut self.classes[rec.class as usize];
        cs.delivered += pkt.len as u64;
        if now >= self.cfg.warmup {
            cs.delivered_after_warmup += pkt.len as u64;
        }
        // The flow's own count (long-lived CBR flows keep none, as before feedback
        // existed): a finite flow finishes when every byte has arrived.
        if cs.feedback || rec.size != u64::MAX {
            rec.bytes_delivered += pkt.len as u64;
            // (A probe carries no bytes: it finishes nothing.)
            if pkt.len > 0 && rec.bytes_delivered == rec.size {
                rec.finish = Some(now);
            }
        }
        if cs.feedback {
            if let Some(Conn::Rate(r)) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == pkt.flow) {
                if let Some(fb) = r.on_data(now, &pkt) {
                    self.net.send(fb);
                }
                self.net.arm_rate(r, slot);
            }
        }
    }

    fn conn_timer(&mut self, slot: u32, flow: u32, which: ConnTimer) {
        let now = self.net.now;
        let Some(conn) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == flow) else { return };
        match conn {
            Conn::Tcp(tcp) => {
                let timer = match which {
                    ConnTimer::Rto => &mut tcp.rto_timer,
                    ConnTimer::DelAck => &mut tcp.delack_timer,
                    ConnTimer::Cc => &mut tcp.cc_timer,
                    ConnTimer::Send | ConnTimer::Feedback => unreachable!("TCP connections have no rate timers"),
                };
                match self.net.queue.fire(timer, now) {
                    Firing::Stale => return,
                    Firing::Early => {}
                    Firing::Due => {
                        let p = &self.classes[tcp.ep.class as usize].tcp;
                        match which {
                            ConnTimer::Rto => tcp.on_rto(now, p, &mut self.out),
                            ConnTimer::DelAck => tcp.on_delack(p, &mut self.out),
                            _ => tcp.on_cc_deadline(now, p, &mut self.out),
                        }
                        if let Some(tr) = self.net.trace.as_deref_mut() {
                            tr.tcp(now, tcp, &self.out);
                        }
                    }
                }
                self.net.send_all(&mut self.out);
                self.net.arm_tcp(tcp, slot);
            }
            Conn::Rate(r) => {
                let timer = match which {
                    ConnTimer::Send => &mut r.tx.send_timer,
                    ConnTimer::Feedback => &mut r.rx_timer,
                    _ => &mut r.tx.cc_timer,
                };
                match self.net.queue.fire(timer, now) {
                    Firing::Stale => {}
                    Firing::Early => self.net.arm_rate(r, slot),
                    Firing::Due => match which {
                        ConnTimer::Send => self.rate_send(slot),
                        ConnTimer::Feedback => {
                            if let Some(fb) = r.on_rx_deadline(now) {
                                self.net.send(fb);
                            }
                            self.net.arm_rate(r, slot);
                        }
                        _ => {
                            let probe = r.tx.on_cc_deadline(now);
                            if let Some(tr) = self.net.trace.as_deref_mut() {
                                tr.rate(now, r, None);
                            }
                            self.net.arm_rate(r, slot);
                            if let Some(p) = probe {
                                self.net.send(p);
                            }
                        }
                    },
                }
            }
        }
    }

    /// A link's queue discipline is due to run (at a deadline of its own).
    fn link_timer(&mut self, l: u32) {
        let now = self.net.now;
        let timer = &mut self.net.queue_timers[l as usize];
        match self.net.queue.fire(timer, now) {
            Firing::Stale => return,
            Firing::Early => {}
            Firing::Due => match self.net.links[l as usize].queue_deadline(now) {
                Some(t) => timer.set(t),
                None => timer.stop(),
            },
        }
        self.net.queue.arm(timer, Event::Timer(Owner::Link(l)));
    }

    /// The warm-up ends: keep the packet counters, and start the series' throughput
    /// from here.
    fn end_warmup(&mut self) {
        if self.net.queue.fire(&mut self.warmup_timer, self.net.now) != Firing::Due {
            return;
        }
        self.at_warmup = self.net.packet_counters();
        for c in self.classes.iter_mut() {
            c.delivered_at_sample = c.delivered;
        }
    }

    fn sample(&mut self) {
        let now = self.net.now;
        if self.net.queue.fire(&mut self.recorder, now) != Firing::Due {
            return;
        }
        let t = now.as_secs_f64();
        let iv = self.cfg.record.interval.expect("sampling without an interval");
        let nl = self.net.links.len() as u32;
        for (i, l) in self.net.links.iter_mut().enumerate() {
            l.advance(now);
            let (qp, qb) = l.queue_len();
            self.series.push(t, QUEUE_PACKETS, i as u32, qp as f64);
            self.series.push(t, QUEUE_BYTES, i as u32, qb as f64);
        }
        for (ci, c) in self.classes.iter_mut().enumerate() {
            let thr = (c.delivered - c.delivered_at_sample) as f64 * 8.0 / iv.as_secs_f64();
            c.delivered_at_sample = c.delivered;
            self.series.push(t, THROUGHPUT_BPS, nl + ci as u32, thr);
            self.series.push(t, ACTIVE_FLOWS, nl + ci as u32, c.active as f64);
        }
        self.access_sample(t, nl);
        let next = now + iv;
        if next <= self.cfg.duration {
            self.recorder.set(next);
            self.net.queue.arm(&mut self.recorder, Event::Timer(Owner::Recorder));
        }
    }
}
