//! The packet-level simulator: builds links, routes and traffic from a `Config`,
//! runs the event loop, and collects the tables.
//!
//! The loop knows two kinds of event: the packet at the head of a link's wire
//! reaching the link's far end, and a timer firing for an owner (a connection, a
//! class's arrival process, the recorder). It hands each to its owner; nothing
//! here is protocol-specific beyond routing a packet to its connection.
use crate::config::Config;
use crate::engine::{EventQueue, Firing, SimTime, Timer};
use crate::metrics::series::{ACTIVE_FLOWS, QUEUE_BYTES, QUEUE_PACKETS, THROUGHPUT_BPS};
use crate::metrics::{ArrivalTable, FlowRecord, FlowTable, LinkRow, RunResult, Scalar, Series};
use crate::net::packet::{DATAGRAM, SYN};
use crate::net::{Link, Offer, Packet, Routes};
use crate::traffic::{Batch, Source};
use crate::transport::cc::{Cc, Registry};
use crate::transport::rate::RateSender;
use crate::transport::tcp::{Output, Tcp, TcpParams};
use crate::transport::Endpoints;
use crate::transport::{Conn, Transport};
use std::time::Instant;

/// The timers of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConnTimer {
    Rto,
    DelAck,
    /// The congestion or rate controller's own deadline.
    Cc,
    /// A rate-based sender's next datagram.
    Send,
}

/// Who a timer belongs to.
#[derive(Clone, Copy, Debug)]
enum Owner {
    /// A connection, by slot and flow id (a slot is reused by later flows).
    Conn { slot: u32, flow: u32, timer: ConnTimer },
    /// A traffic class's arrival process.
    Source(u32),
    /// The sampler of the series table.
    Recorder,
}

/// An event: a packet arriving somewhere, or a timer firing for an owner.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The packet at the head of link's wire reaches the link's far end.
    Arrival(u32),
    Timer(Owner),
}

/// Counters of every packet ever created (for the conservation invariant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounters {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

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
    active: u64,
    delivered: u64,
    delivered_at_sample: u64,
    delivered_after_warmup: u64,
}

/// A packet-level simulation of one scenario.
pub struct Simulation {
    cfg: Config,
    now: SimTime,
    queue: EventQueue<Event>,
    links: Vec<Link>,
    routes: Routes,
    conns: Vec<Option<Conn>>,
    free_slots: Vec<u32>,
    records: Vec<FlowRecord>,
    classes: Vec<ClassRun>,
    out: Output,
    counters: PacketCounters,
    events: u64,
    series: Series,
    recorder: Timer,
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
        let mut links: Vec<Link> = cfg.links.iter().map(|l| Link::new(l, cfg.warmup, cfg.duration)).collect();
        for &l in &cfg.record.arrivals {
            links[l as usize].record_arrivals = true;
        }
        let mut routes = Routes::new();
        let mut classes = Vec::with_capacity(cfg.classes.len());
        for c in &cfg.classes {
            let data_route = routes.add(&c.route);
            let ack_route = routes.add(&c.ack_route);
            let (tcp, cc) = match &c.transport {
                Transport::Window { tcp, cc } => (tcp.clone(), Some(registry.make(cc)?)),
                Transport::Rate { .. } => (TcpParams::default(), None),
            };
            classes.push(ClassRun {
                source: Source::new(cfg.seed, &c.name),
                timer: Timer::default(),
                data_route,
                ack_route,
                tcp,
                cc,
                active: 0,
                delivered: 0,
                delivered_at_sample: 0,
                delivered_after_warmup: 0,
            });
        }
        let series = Series::new(cfg.links.iter().map(|l| l.name.clone()), cfg.classes.iter().map(|c| c.name.clone()));
        Ok(Simulation {
            now: SimTime::ZERO,
            queue: EventQueue::new(),
            links,
            routes,
            conns: Vec::new(),
            free_slots: Vec::new(),
            records: Vec::new(),
            classes,
            out: Vec::with_capacity(64),
            counters: PacketCounters::default(),
            events: 0,
            series,
            recorder: Timer::default(),
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
        let mut c = self.counters;
        c.in_flight = self.links.iter().map(|l| l.in_flight() as u64).sum();
        c
    }

    fn schedule_initial(&mut self) {
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            let cr = &mut self.classes[ci];
            if let Some(t) = cr.source.first(&c.arrivals, c.start, c.stop_time()) {
                cr.timer.set(t);
                self.queue.arm(&mut cr.timer, Event::Timer(Owner::Source(ci as u32)));
            }
        }
        if let Some(iv) = self.cfg.record.interval {
            self.recorder.set(iv);
            self.queue.arm(&mut self.recorder, Event::Timer(Owner::Recorder));
        }
    }

    /// Run to the end of the scenario. `progress(now)` is called now and then; if it
    /// returns false the run stops early (the result covers what was simulated).
    pub fn run(mut self, progress: &mut dyn FnMut(SimTime) -> bool) -> RunResult {
        let t0 = Instant::now();
        self.schedule_initial();
        let end = self.cfg.duration;
        let mut stopped_early = false;
        while let Some((t, ev)) = self.queue.peek_until(end) {
            // Invariant: time never goes back (checked in every build; one compare per event).
            assert!(t >= self.now, "time went back from {} to {}", self.now, t);
            self.now = t;
            self.events += 1;
            self.handle(ev);
            if self.events & 0xFFFF == 0 && !progress(self.now) {
                stopped_early = true;
                break;
            }
        }
        if !stopped_early {
            self.now = end;
        }
        self.wall_secs = t0.elapsed().as_secs_f64();
        progress(self.now);
        self.finish(stopped_early)
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Arrival(l) => {
                let (pkt, next) = self.links[l as usize].deliver(self.now);
                match next {
                    Some((at, stamp)) => self.queue.reschedule(at, stamp),
                    None => self.queue.take(),
                }
                self.arrive(pkt);
            }
            Event::Timer(owner) => {
                self.queue.take();
                match owner {
                    Owner::Conn { slot, flow, timer } => self.conn_timer(slot, flow, timer),
                    Owner::Source(ci) => self.source_fired(ci),
                    Owner::Recorder => self.sample(),
                }
            }
        }
    }

    fn source_fired(&mut self, ci: u32) {
        let c = &self.cfg.classes[ci as usize];
        let cr = &mut self.classes[ci as usize];
        if self.queue.fire(&mut cr.timer, self.now) != Firing::Due {
            return;
        }
        let (batch, next) = cr.source.fire(&c.arrivals, self.now, c.stop_time());
        match batch {
            Batch::One(bytes) => self.start_flow(ci, bytes),
            Batch::Unbounded(n) => (0..n).for_each(|_| self.start_flow(ci, u64::MAX)),
        }
        let cr = &mut self.classes[ci as usize];
        if let Some(t) = next {
            cr.timer.set(t);
            self.queue.arm(&mut cr.timer, Event::Timer(Owner::Source(ci)));
        }
    }

    /// A new flow of `bytes` (u64::MAX: never ends) in class `ci`.
    fn start_flow(&mut self, ci: u32, bytes: u64) {
        let flow = self.records.len() as u32;
        self.records.push(FlowRecord::new(ci, bytes, self.now));
        let cr = &mut self.classes[ci as usize];
        cr.active += 1;
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.conns.push(None);
                (self.conns.len() - 1) as u32
            }
        };
        let ep = Endpoints { flow, conn: slot, class: ci, data_route: cr.data_route, ack_route: cr.ack_route };
        let c = &self.cfg.classes[ci as usize];
        match &c.transport {
            Transport::Window { .. } => {
                let mut tcp = Tcp::new(ep, bytes, cr.cc.clone().expect("window class"), &cr.tcp);
                tcp.open(self.now, &cr.tcp, &mut self.out);
                self.conns[slot as usize] = Some(Conn::Tcp(tcp));
                self.after_tcp(slot);
            }
            Transport::Rate { cc, packet_bytes } => {
                // The first datagram leaves at once, the next ones on the send timer.
                let sender = RateSender::new(ep, *packet_bytes, cc.make(), self.now, c.stop_time());
                self.conns[slot as usize] = Some(Conn::Rate(sender));
                self.rate_send(slot);
            }
        }
    }

    /// A rate-based sender's datagram is due: send it and arm its timers.
    fn rate_send(&mut self, slot: u32) {
        let Some(Conn::Rate(r)) = self.conns[slot as usize].as_mut() else { return };
        let pkt = r.send(self.now);
        Self::arm_rate(&mut self.queue, r, slot);
        self.counters.sent += 1;
        self.forward(pkt);
    }

    fn arm_rate(queue: &mut EventQueue<Event>, r: &mut RateSender, slot: u32) {
        let flow = r.ep.flow;
        queue.arm(&mut r.send_timer, Event::Timer(Owner::Conn { slot, flow, timer: ConnTimer::Send }));
        queue.arm(&mut r.cc_timer, Event::Timer(Owner::Conn { slot, flow, timer: ConnTimer::Cc }));
    }

    /// Send what a TCP connection produced and arm its timers.
    #[inline]
    fn after_tcp(&mut self, slot: u32) {
        for i in 0..self.out.len() {
            let pkt = self.out[i];
            self.forward(pkt);
        }
        self.counters.sent += self.out.len() as u64;
        self.out.clear();
        if let Some(Conn::Tcp(tcp)) = self.conns[slot as usize].as_mut() {
            let flow = tcp.ep.flow;
            let ev = |timer| Event::Timer(Owner::Conn { slot, flow, timer });
            self.queue.arm(&mut tcp.rto_timer, ev(ConnTimer::Rto));
            self.queue.arm(&mut tcp.delack_timer, ev(ConnTimer::DelAck));
            self.queue.arm(&mut tcp.cc_timer, ev(ConnTimer::Cc));
        }
    }

    /// Put a packet on the first link of its route.
    #[inline]
    fn forward(&mut self, pkt: Packet) {
        let l = self.routes.link(pkt.route, pkt.hop).expect("a packet sent on an empty route");
        self.offer(l, pkt);
    }

    /// Offer a packet to link `l`. Its stamp orders its arrival among simultaneous
    /// events as if it had been scheduled now (a dropped packet's stamp goes unused,
    /// which changes no order).
    #[inline]
    fn offer(&mut self, l: u32, pkt: Packet) {
        let stamp = self.queue.stamp();
        match self.links[l as usize].offer(self.now, pkt, stamp) {
            Offer::Head(at) => self.queue.push_stamped(at, stamp, Event::Arrival(l)),
            Offer::Queued => {}
            Offer::Dropped => self.counters.dropped += 1,
        }
    }

    /// A packet reaches the far end of a link: the next link, or its endpoint.
    #[inline]
    fn arrive(&mut self, pkt: Packet) {
        if let Some(l) = self.routes.link(pkt.route, pkt.hop) {
            self.offer(l, pkt);
            return;
        }
        self.counters.delivered += 1;
        if pkt.flags & DATAGRAM != 0 {
            let cs = &mut self.classes[self.records[pkt.flow as usize].class as usize];
            cs.delivered += pkt.len as u64;
            if self.now >= self.cfg.warmup {
                cs.delivered_after_warmup += pkt.len as u64;
            }
            return;
        }
        let slot = pkt.conn;
        let now = self.now;
        let Some(Conn::Tcp(tcp)) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == pkt.flow) else {
            return; // the connection has closed: a late duplicate
        };
        let cr = &mut self.classes[tcp.ep.class as usize];
        let p = &cr.tcp;
        if pkt.flags & SYN != 0 {
            // Connection setup: a SYN reaches the receiver, a SYN-ACK the sender.
            if pkt.is_ack() {
                tcp.on_synack(&pkt, now, p, &mut self.out);
            } else {
                tcp.on_syn(&pkt, p, &mut self.out);
            }
        } else if pkt.is_ack() {
            tcp.on_ack(&pkt, now, p, &mut self.out);
            if tcp.sender_done() {
                // Send whatever the last ACK produced before the slot is freed; the
                // connection's pending timer entries then find no live flow and lapse.
                self.after_tcp(slot);
                if let Some(Conn::Tcp(tcp)) = self.conns[slot as usize].take() {
                    copy_into(&tcp, &mut self.records[tcp.ep.flow as usize]);
                }
                self.free_slots.push(slot);
                return;
            }
        } else {
            // Receive rate counts each segment that brings bytes beyond the cumulative
            // ACK point when it arrives (a hole's repair does not count twice what
            // arrived out of order, and the rate never exceeds the link's).
            let fresh = if pkt.seq + pkt.len as u64 > tcp.rcv_nxt { pkt.len as u64 } else { 0 };
            tcp.on_data(&pkt, now, p, &mut self.out);
            let done = tcp.receiver_done();
            cr.delivered += fresh;
            if now >= self.cfg.warmup {
                cr.delivered_after_warmup += fresh;
            }
            let rec = &mut self.records[pkt.flow as usize];
            if done && rec.finish.is_none() {
                rec.finish = Some(now);
                cr.active -= 1;
            }
        }
        self.after_tcp(slot);
    }

    fn conn_timer(&mut self, slot: u32, flow: u32, which: ConnTimer) {
        let now = self.now;
        let Some(conn) = self.conns[slot as usize].as_mut().filter(|c| c.flow() == flow) else { return };
        match conn {
            Conn::Tcp(tcp) => {
                let timer = match which {
                    ConnTimer::Rto => &mut tcp.rto_timer,
                    ConnTimer::DelAck => &mut tcp.delack_timer,
                    ConnTimer::Cc => &mut tcp.cc_timer,
                    ConnTimer::Send => unreachable!("TCP connections have no send timer"),
                };
                match self.queue.fire(timer, now) {
                    Firing::Stale => return,
                    Firing::Early => {}
                    Firing::Due => {
                        let p = &self.classes[tcp.ep.class as usize].tcp;
                        match which {
                            ConnTimer::Rto => tcp.on_rto(now, p, &mut self.out),
                            ConnTimer::DelAck => tcp.on_delack(p, &mut self.out),
                            _ => tcp.on_cc_deadline(now, p, &mut self.out),
                        }
                    }
                }
                self.after_tcp(slot);
            }
            Conn::Rate(r) => {
                let timer = if which == ConnTimer::Send { &mut r.send_timer } else { &mut r.cc_timer };
                match self.queue.fire(timer, now) {
                    Firing::Stale => {}
                    Firing::Early => Self::arm_rate(&mut self.queue, r, slot),
                    Firing::Due if which == ConnTimer::Send => self.rate_send(slot),
                    Firing::Due => {
                        r.on_cc_deadline(now);
                        Self::arm_rate(&mut self.queue, r, slot);
                    }
                }
            }
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        if self.queue.fire(&mut self.recorder, now) != Firing::Due {
            return;
        }
        let t = now.as_secs_f64();
        let iv = self.cfg.record.interval.expect("sampling without an interval");
        let nl = self.links.len() as u32;
        for (i, l) in self.links.iter_mut().enumerate() {
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
        let next = now + iv;
        if next <= self.cfg.duration {
            self.recorder.set(next);
            self.queue.arm(&mut self.recorder, Event::Timer(Owner::Recorder));
        }
    }

    fn finish(mut self, stopped_early: bool) -> RunResult {
        let end = self.now;
        let warm = self.cfg.warmup;
        let measured = if end > warm { (end - warm).as_secs_f64() } else { 0.0 };
        for l in self.links.iter_mut() {
            l.advance(end);
        }
        // Connections still open: copy their state into the records.
        for conn in self.conns.iter().flatten() {
            if let Conn::Tcp(tcp) = conn {
                copy_into(tcp, &mut self.records[tcp.ep.flow as usize]);
            }
        }
        let counters = self.packet_counters();
        let ft = FlowTable::new(&self.records, warm);
        let links: Vec<LinkRow> = self.links.iter().zip(&self.cfg.links).map(|(l, c)| link_row(l, c, &self.cfg.nodes, measured)).collect();
        let mut summary: Vec<(String, Scalar)> = Vec::new();
        let mut put = |k: &str, v: Scalar| summary.push((k.to_string(), v));
        put("name", Scalar::Text(self.cfg.name.clone()));
        put("seed", Scalar::Int(self.cfg.seed as i64));
        put("duration_s", Scalar::Num(self.cfg.duration.as_secs_f64()));
        put("simulated_s", Scalar::Num(end.as_secs_f64()));
        put("warmup_s", Scalar::Num(warm.as_secs_f64()));
        put("completed_run", Scalar::Int(!stopped_early as i64));
        put("flows_arrived", Scalar::Int(ft.len() as i64));
        put("flows_finished", Scalar::Int(ft.finished.iter().filter(|&&f| f).count() as i64));
        put("packets_sent", Scalar::Int(counters.sent as i64));
        put("packets_delivered", Scalar::Int(counters.delivered as i64));
        put("packets_dropped", Scalar::Int(counters.dropped as i64));
        put("packets_in_flight", Scalar::Int(counters.in_flight as i64));
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            // Flows counted for the class: those that arrived after the warm-up, and
            // the ones that never end (they start once and never finish).
            let sel: Vec<usize> =
                (0..ft.len()).filter(|&i| ft.class[i] as usize == ci && (!ft.warmup[i] || ft.size[i].is_nan())).collect();
            let done: Vec<f64> = sel.iter().filter(|&&i| ft.finished[i]).map(|&i| ft.completion_time[i]).collect();
            let mean = if done.is_empty() { f64::NAN } else { done.iter().sum::<f64>() / done.len() as f64 };
            put(&format!("{}.flows", c.name), Scalar::Int(sel.len() as i64));
            put(&format!("{}.finished", c.name), Scalar::Int(done.len() as i64));
            put(&format!("{}.mean_completion_time_s", c.name), Scalar::Num(mean));
            let thr = if measured > 0.0 { self.classes[ci].delivered_after_warmup as f64 * 8.0 / measured } else { 0.0 };
            put(&format!("{}.throughput_bps", c.name), Scalar::Num(thr));
        }
        put("events", Scalar::Int(self.events as i64));
        put("wall_time_s", Scalar::Num(self.wall_secs));
        put("events_per_s", Scalar::Num(self.events as f64 / self.wall_secs.max(1e-9)));
        put("wall_s_per_sim_s", Scalar::Num(self.wall_secs / end.as_secs_f64().max(1e-9)));
        let mut arrivals = ArrivalTable::default();
        for (li, l) in self.links.iter().enumerate() {
            for a in &l.arrivals {
                arrivals.time.push(a.time.as_secs_f64());
                arrivals.link.push(li as u32);
                arrivals.queue_packets.push(a.queue_packets);
                arrivals.queue_bytes.push(a.queue_bytes);
                arrivals.backlog.push(a.backlog.as_secs_f64());
                arrivals.dropped.push(a.dropped);
            }
        }
        RunResult {
            arrivals,
            link_names: self.cfg.links.iter().map(|l| l.name.clone()).collect(),
            class_names: self.cfg.classes.iter().map(|c| c.name.clone()).collect(),
            flows: ft,
            links,
            series: self.series,
            summary,
            warnings: self.warnings,
        }
    }
}

/// Copy a connection's counters into its flow record.
fn copy_into(tcp: &Tcp, rec: &mut FlowRecord) {
    rec.bytes_delivered = tcp.rcv_nxt.min(rec.size);
    rec.retransmissions = tcp.retransmits;
    rec.timeouts = tcp.timeouts;
}

/// The links-table row of a link measured for `measured` seconds.
fn link_row(l: &Link, c: &crate::net::LinkConfig, nodes: &[String], measured: f64) -> LinkRow {
    let s = &l.stats;
    let offered = s.packets_sent + s.drops;
    let per_s = |x: u128| if measured > 0.0 { x as f64 * 1e-9 / measured } else { 0.0 };
    let (limit_packets, limit_bytes) = c.queue.limits();
    LinkRow {
        name: c.name.clone(),
        from: nodes[c.from as usize].clone(),
        to: nodes[c.to as usize].clone(),
        rate_bps: c.rate_bps as f64,
        delay_s: c.delay.as_secs_f64(),
        packets_sent: s.packets_sent,
        bytes_sent: s.bytes_sent,
        drops: s.drops,
        drop_rate: if offered > 0 { s.drops as f64 / offered as f64 } else { 0.0 },
        utilization: per_s(s.busy_ns),
        mean_queue_packets: per_s(s.queue_area_packets),
        mean_queue_bytes: per_s(s.queue_area_bytes),
        max_queue_packets: s.max_queue_packets,
        max_queue_bytes: s.max_queue_bytes,
        limit_packets,
        limit_bytes,
        peak_queue_packets: s.peak_packets_all,
        peak_queue_bytes: s.peak_bytes_all,
    }
}
