//! The packet-level simulator: builds links, routes and traffic from a `Config`,
//! runs the event loop, and collects the tables.
use crate::engine::{EventQueue, Rng, SimTime};
use crate::metrics::{Arrivals, FlowTable, LinkRow, RunResult, Scalar, Series};
use crate::net::{DropTail, Link, QueueDiscipline};
use crate::packet::{Packet, DATAGRAM, SYN};
use crate::scenario::{ClassKind, Config, Protocol};
use crate::transport::{Controller, NewReno, Tcp, TcpOutput};
use std::time::Instant;

/// Events: a plain enum, no boxed closures.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A packet reaches the far end of a link (or is injected at its source).
    Arrive(Packet),
    /// Next Poisson arrival of a class.
    PoissonArrival(u16),
    /// The long-lived flows of a class start.
    LongLivedStart(u16),
    /// Flow `idx` of a class's flow list arrives.
    ListedArrival(u16, u32),
    /// Retransmission / delayed-ACK timer of a connection (slot, uid).
    Rto(u32, u32),
    DelAck(u32, u32),
    /// Constant-rate flow `j` of a class starts.
    CbrArrival(u16),
    /// A constant-rate flow sends its next packet.
    CbrSend(u32),
    /// Record one sample of the series.
    Sample,
}

/// A constant-rate sender: packet k leaves at start + k * interval (computed from
/// k, so rounding never accumulates).
struct CbrFlow {
    uid: u32,
    class: u16,
    start: SimTime,
    interval_ns: f64,
    packet: u32,
    sent: u64,
}

/// Per-flow bookkeeping kept for the flows table.
struct FlowRecord {
    class: u16,
    size: u64,
    arrival: SimTime,
    finish: Option<SimTime>,
    bytes_delivered: u64,
    retransmissions: u32,
    timeouts: u32,
}

impl Tcp {
    /// Copy a connection's counters into its flow record.
    fn copy_into(&self, rec: &mut FlowRecord) {
        rec.bytes_delivered = self.rcv_nxt.min(rec.size);
        rec.retransmissions = self.retransmits;
        rec.timeouts = self.timeouts;
    }
}

struct ClassState {
    arrivals: Rng,
    sizes: Rng,
    active: u64,
    delivered: u64,
    delivered_at_sample: u64,
    delivered_after_warmup: u64,
}

/// Counters of every packet ever created (for the conservation invariant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounters {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

/// A packet-level simulation of one scenario.
pub struct Simulation {
    cfg: Config,
    now: SimTime,
    queue: EventQueue<Event>,
    links: Vec<Link>,
    /// Route id -> link indices; class c uses routes 2c (data) and 2c+1 (ACKs).
    routes: Vec<Vec<u32>>,
    flows: Vec<Option<Tcp>>,
    free_slots: Vec<u32>,
    cbr: Vec<CbrFlow>,
    records: Vec<FlowRecord>,
    classes: Vec<ClassState>,
    out: TcpOutput,
    counters: PacketCounters,
    events: u64,
    series: Series,
    warnings: Vec<String>,
    wall_secs: f64,
}

impl Simulation {
    /// Build a simulation; `warnings` are carried into the result.
    pub fn new(cfg: Config, warnings: Vec<String>) -> Simulation {
        let mut links: Vec<Link> = cfg
            .links
            .iter()
            .map(|l| {
                let disc = QueueDiscipline::DropTail(DropTail { limit_packets: l.limit_packets, limit_bytes: l.limit_bytes });
                Link::new(l.name.clone(), l.from, l.to, l.rate_bps, l.delay, disc, cfg.warmup)
            })
            .collect();
        for &l in &cfg.record_arrivals {
            links[l].record_arrivals = true;
        }
        let mut routes = Vec::new();
        for c in &cfg.classes {
            routes.push(c.fwd_route.iter().map(|&l| l as u32).collect());
            routes.push(c.rev_route.iter().map(|&l| l as u32).collect());
        }
        let classes = cfg
            .classes
            .iter()
            .map(|c| ClassState {
                arrivals: crate::engine::stream(cfg.seed, &format!("arrivals/{}", c.name)),
                sizes: crate::engine::stream(cfg.seed, &format!("sizes/{}", c.name)),
                active: 0,
                delivered: 0,
                delivered_at_sample: 0,
                delivered_after_warmup: 0,
            })
            .collect();
        let mut series = Series::default();
        series.metric_names = ["queue_packets", "queue_bytes", "throughput_bps", "active_flows"].map(String::from).to_vec();
        series.entity_names = cfg.links.iter().map(|l| l.name.clone()).chain(cfg.classes.iter().map(|c| c.name.clone())).collect();
        Simulation {
            now: SimTime::ZERO,
            queue: EventQueue::new(),
            links,
            routes,
            flows: Vec::new(),
            free_slots: Vec::new(),
            cbr: Vec::new(),
            records: Vec::new(),
            classes,
            out: Vec::with_capacity(64),
            counters: PacketCounters::default(),
            events: 0,
            series,
            warnings,
            wall_secs: 0.0,
            cfg,
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packet counters, with `in_flight` counted from the pending events.
    pub fn packet_counters(&self) -> PacketCounters {
        let mut c = self.counters;
        c.in_flight = self.queue.iter().filter(|e| matches!(e, Event::Arrive(_))).count() as u64;
        c
    }

    fn schedule_initial(&mut self) {
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            let ci = ci as u16;
            match &c.kind {
                ClassKind::Poisson { rate_per_s, .. } => {
                    let gap = self.classes[ci as usize].arrivals.exponential(1.0 / rate_per_s);
                    let t = c.start.saturating_add(SimTime::from_secs_f64(gap));
                    if t < c.stop {
                        self.queue.push(t, Event::PoissonArrival(ci));
                    }
                }
                ClassKind::LongLived { .. } => self.queue.push(c.start, Event::LongLivedStart(ci)),
                ClassKind::Cbr { starts, .. } => {
                    for &t in starts {
                        if t < c.stop {
                            self.queue.push(t, Event::CbrArrival(ci));
                        }
                    }
                }
                ClassKind::FlowList { flows } => {
                    if let Some(k) = flows.iter().position(|f| f.0 >= c.start) {
                        if flows[k].0 < c.stop {
                            self.queue.push(flows[k].0, Event::ListedArrival(ci, k as u32));
                        }
                    }
                }
            }
        }
        if let Some(iv) = self.cfg.record_interval {
            self.queue.push(iv, Event::Sample);
        }
    }

    /// Run to the end of the scenario. `progress(now)` is called now and then; if it
    /// returns false the run stops early (the result covers what was simulated).
    pub fn run(mut self, progress: &mut dyn FnMut(SimTime) -> bool) -> RunResult {
        let t0 = Instant::now();
        self.schedule_initial();
        let end = self.cfg.duration;
        let mut stopped_early = false;
        while let Some(t) = self.queue.peek_time() {
            if t > end {
                break;
            }
            let (t, ev) = self.queue.pop().unwrap();
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
            Event::Arrive(pkt) => self.arrive(pkt),
            Event::PoissonArrival(ci) => {
                let c = &self.cfg.classes[ci as usize];
                let ClassKind::Poisson { rate_per_s, size } = &c.kind else { unreachable!() };
                let (rate, stop) = (*rate_per_s, c.stop);
                let size = size.sample(&mut self.classes[ci as usize].sizes);
                self.start_flow(ci, size);
                let gap = self.classes[ci as usize].arrivals.exponential(1.0 / rate);
                let next = self.now.saturating_add(SimTime::from_secs_f64(gap));
                if next < stop {
                    self.queue.push(next, Event::PoissonArrival(ci));
                }
            }
            Event::LongLivedStart(ci) => {
                if let ClassKind::LongLived { count } = self.cfg.classes[ci as usize].kind {
                    for _ in 0..count {
                        self.start_flow(ci, u64::MAX);
                    }
                }
            }
            Event::ListedArrival(ci, k) => {
                let c = &self.cfg.classes[ci as usize];
                let (size, next) = match &c.kind {
                    ClassKind::FlowList { flows } => {
                        (flows[k as usize].1, flows.get(k as usize + 1).filter(|f| f.0 < c.stop).map(|f| f.0))
                    }
                    _ => unreachable!(),
                };
                self.start_flow(ci, size);
                if let Some(t) = next {
                    self.queue.push(t, Event::ListedArrival(ci, k + 1));
                }
            }
            Event::CbrArrival(ci) => {
                let (rate_bps, packet) = match self.cfg.classes[ci as usize].kind {
                    ClassKind::Cbr { rate_bps, packet, .. } => (rate_bps, packet),
                    _ => unreachable!(),
                };
                let uid = self.new_record(ci, u64::MAX);
                self.cbr.push(CbrFlow { uid, class: ci, start: self.now, interval_ns: packet as f64 * 8e9 / rate_bps, packet, sent: 0 });
                self.cbr_send((self.cbr.len() - 1) as u32);
            }
            Event::CbrSend(i) => self.cbr_send(i),
            Event::Rto(slot, uid) => self.timer(slot, uid, true),
            Event::DelAck(slot, uid) => self.timer(slot, uid, false),
            Event::Sample => self.sample(),
        }
    }

    fn cbr_send(&mut self, i: u32) {
        let f = &mut self.cbr[i as usize];
        let ci = f.class;
        let pkt = Packet {
            slot: i,
            uid: f.uid,
            seq: f.sent * f.packet as u64,
            ts: self.now,
            len: f.packet,
            size: f.packet,
            route: 2 * ci,
            hop: 0,
            flags: DATAGRAM,
        };
        f.sent += 1;
        let next = f.start + SimTime((f.sent as f64 * f.interval_ns).round() as u64);
        if next < self.cfg.classes[ci as usize].stop {
            self.queue.push(next, Event::CbrSend(i));
        }
        self.counters.sent += 1;
        self.forward(pkt);
    }

    fn new_record(&mut self, ci: u16, size: u64) -> u32 {
        let uid = self.records.len() as u32;
        self.records.push(FlowRecord {
            class: ci,
            size,
            arrival: self.now,
            finish: None,
            bytes_delivered: 0,
            retransmissions: 0,
            timeouts: 0,
        });
        self.classes[ci as usize].active += 1;
        uid
    }

    fn start_flow(&mut self, ci: u16, size: u64) {
        let uid = self.new_record(ci, size);
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.flows.push(None);
                (self.flows.len() - 1) as u32
            }
        };
        let cc = match self.cfg.classes[ci as usize].protocol {
            Protocol::NewReno => Controller::NewReno(NewReno),
        };
        let mut tcp = Tcp::new(uid, slot, size, 2 * ci, 2 * ci + 1, cc, &self.cfg.tcp);
        tcp.open(self.now, &self.cfg.tcp, &mut self.out);
        self.flows[slot as usize] = Some(tcp);
        self.after_tcp(slot);
    }

    /// Send what a connection produced and turn its timer deadlines into events.
    #[inline]
    fn after_tcp(&mut self, slot: u32) {
        let mut out = std::mem::take(&mut self.out);
        for pkt in out.drain(..) {
            self.counters.sent += 1;
            self.forward(pkt);
        }
        self.out = out;
        if let Some(tcp) = self.flows[slot as usize].as_mut() {
            if let Some(d) = tcp.rto_deadline {
                if tcp.rto_event.is_none_or(|e| e > d) {
                    tcp.rto_event = Some(d);
                    self.queue.push(d, Event::Rto(slot, tcp.uid));
                }
            }
            if let Some(d) = tcp.delack_deadline {
                if tcp.delack_event.is_none_or(|e| e > d) {
                    tcp.delack_event = Some(d);
                    self.queue.push(d, Event::DelAck(slot, tcp.uid));
                }
            }
        }
    }

    /// Put a packet on the next link of its route.
    #[inline]
    fn forward(&mut self, mut pkt: Packet) {
        let link = self.routes[pkt.route as usize][pkt.hop as usize] as usize;
        match self.links[link].offer(self.now, pkt.size, self.cfg.duration) {
            Some(at) => {
                pkt.hop += 1;
                self.queue.push(at, Event::Arrive(pkt));
            }
            None => self.counters.dropped += 1,
        }
    }

    #[inline]
    fn arrive(&mut self, pkt: Packet) {
        if (pkt.hop as usize) < self.routes[pkt.route as usize].len() {
            self.forward(pkt);
            return;
        }
        self.counters.delivered += 1;
        if pkt.flags & DATAGRAM != 0 {
            let cs = &mut self.classes[self.records[pkt.uid as usize].class as usize];
            cs.delivered += pkt.len as u64;
            if self.now >= self.cfg.warmup {
                cs.delivered_after_warmup += pkt.len as u64;
            }
            return;
        }
        let slot = pkt.slot;
        let p = &self.cfg.tcp;
        let Some(tcp) = self.flows[slot as usize].as_mut().filter(|t| t.uid == pkt.uid) else {
            return; // the connection has closed: a late duplicate
        };
        if pkt.flags & SYN != 0 {
            // Connection setup: a SYN reaches the receiver, a SYN-ACK the sender.
            if pkt.is_ack() {
                tcp.on_synack(&pkt, self.now, p, &mut self.out);
            } else {
                tcp.on_syn(&pkt, p, &mut self.out);
            }
        } else if pkt.is_ack() {
            tcp.on_ack(&pkt, self.now, p, &mut self.out);
            if tcp.sender_done() {
                // Send whatever the last ACK produced before the slot is freed; the
                // connection's pending timer events then find no live flow and lapse.
                self.after_tcp(slot);
                let tcp = self.flows[slot as usize].take().unwrap();
                tcp.copy_into(&mut self.records[tcp.uid as usize]);
                self.free_slots.push(slot);
                return;
            }
        } else {
            // Receive rate counts each segment that brings bytes beyond the cumulative
            // ACK point when it arrives (a hole's repair does not count twice what
            // arrived out of order, and the rate never exceeds the link's).
            let fresh = if pkt.seq + pkt.len as u64 > tcp.rcv_nxt { pkt.len as u64 } else { 0 };
            tcp.on_data(&pkt, self.now, p, &mut self.out);
            let done = tcp.receiver_done();
            let rec = &mut self.records[pkt.uid as usize];
            let cs = &mut self.classes[rec.class as usize];
            cs.delivered += fresh;
            if self.now >= self.cfg.warmup {
                cs.delivered_after_warmup += fresh;
            }
            if done && rec.finish.is_none() {
                rec.finish = Some(self.now);
                cs.active -= 1;
            }
        }
        self.after_tcp(slot);
    }

    fn timer(&mut self, slot: u32, uid: u32, rto: bool) {
        let now = self.now;
        let p = &self.cfg.tcp;
        let Some(tcp) = self.flows[slot as usize].as_mut().filter(|t| t.uid == uid) else { return };
        let (event, deadline) = if rto { (&mut tcp.rto_event, tcp.rto_deadline) } else { (&mut tcp.delack_event, tcp.delack_deadline) };
        if *event != Some(now) {
            return; // superseded by an earlier event
        }
        *event = None;
        match deadline {
            Some(d) if d <= now => {
                if rto {
                    tcp.on_rto(now, p, &mut self.out);
                } else {
                    tcp.on_delack(p, &mut self.out);
                }
            }
            _ => {} // moved later (or cancelled): after_tcp re-arms it
        }
        self.after_tcp(slot);
    }

    fn sample(&mut self) {
        let now = self.now;
        let t = now.as_secs_f64();
        let iv = self.cfg.record_interval.unwrap();
        let end = self.cfg.duration;
        let s = &mut self.series;
        for (i, l) in self.links.iter_mut().enumerate() {
            l.advance(now, end);
            let (qp, qb) = l.queue();
            for (m, v) in [(0u8, qp as f64), (1, qb as f64)] {
                s.time.push(t);
                s.metric.push(m);
                s.name.push(i as u16);
                s.value.push(v);
            }
        }
        let nl = self.links.len();
        for (ci, c) in self.classes.iter_mut().enumerate() {
            let thr = (c.delivered - c.delivered_at_sample) as f64 * 8.0 / iv.as_secs_f64();
            c.delivered_at_sample = c.delivered;
            for (m, v) in [(2u8, thr), (3, c.active as f64)] {
                s.time.push(t);
                s.metric.push(m);
                s.name.push((nl + ci) as u16);
                s.value.push(v);
            }
        }
        let next = now + iv;
        if next <= end {
            self.queue.push(next, Event::Sample);
        }
    }

    fn finish(mut self, stopped_early: bool) -> RunResult {
        let end = self.now;
        let warm = self.cfg.warmup;
        let measured = end.saturating_sub(warm).as_secs_f64();
        for l in self.links.iter_mut() {
            l.advance(end, self.cfg.duration);
        }
        // Connections still open: copy their state into the records.
        for tcp in self.flows.iter().flatten() {
            tcp.copy_into(&mut self.records[tcp.uid as usize]);
        }
        let counters = self.packet_counters();
        let mut ft = FlowTable::default();
        for (id, r) in self.records.iter().enumerate() {
            ft.class.push(r.class);
            ft.id.push(id as u32);
            ft.size.push(if r.size == u64::MAX { f64::NAN } else { r.size as f64 });
            ft.arrival.push(r.arrival.as_secs_f64());
            let fin = r.finish.map(|f| f.as_secs_f64()).unwrap_or(f64::NAN);
            ft.finish.push(fin);
            ft.completion_time.push(r.finish.map(|f| (f - r.arrival).as_secs_f64()).unwrap_or(f64::NAN));
            ft.bytes_delivered.push(if r.finish.is_some() { r.size } else { r.bytes_delivered });
            ft.retransmissions.push(r.retransmissions);
            ft.timeouts.push(r.timeouts);
            ft.finished.push(r.finish.is_some());
            ft.warmup.push(r.arrival < warm);
        }
        let links: Vec<LinkRow> = self
            .links
            .iter()
            .zip(&self.cfg.links)
            .map(|(l, p)| {
                let s = &l.stats;
                let offered = s.packets_sent + s.drops;
                LinkRow {
                    name: l.name.clone(),
                    from: self.cfg.nodes[l.from].clone(),
                    to: self.cfg.nodes[l.to].clone(),
                    rate_bps: l.rate_bps,
                    delay_s: l.delay.as_secs_f64(),
                    packets_sent: s.packets_sent,
                    bytes_sent: s.bytes_sent,
                    drops: s.drops,
                    drop_rate: if offered > 0 { s.drops as f64 / offered as f64 } else { 0.0 },
                    utilization: if measured > 0.0 { s.busy_ns as f64 * 1e-9 / measured } else { 0.0 },
                    mean_queue_packets: if measured > 0.0 { s.queue_area_packets as f64 * 1e-9 / measured } else { 0.0 },
                    mean_queue_bytes: if measured > 0.0 { s.queue_area_bytes as f64 * 1e-9 / measured } else { 0.0 },
                    max_queue_packets: s.max_queue_packets,
                    max_queue_bytes: s.max_queue_bytes,
                    limit_packets: p.limit_packets,
                    limit_bytes: p.limit_bytes,
                    peak_queue_packets: s.peak_packets_all,
                    peak_queue_bytes: s.peak_bytes_all,
                }
            })
            .collect();
        let mut summary: Vec<(String, Scalar)> = Vec::new();
        let mut put = |k: &str, v: Scalar| summary.push((k.to_string(), v));
        put("name", Scalar::Text(self.cfg.name.clone()));
        put("seed", Scalar::Int(self.cfg.seed as i64));
        put("duration_s", Scalar::Num(self.cfg.duration.as_secs_f64()));
        put("simulated_s", Scalar::Num(end.as_secs_f64()));
        put("warmup_s", Scalar::Num(warm.as_secs_f64()));
        put("completed_run", Scalar::Int(!stopped_early as i64));
        put("flows_arrived", Scalar::Int(ft.id.len() as i64));
        put("flows_finished", Scalar::Int(ft.finished.iter().filter(|&&f| f).count() as i64));
        put("packets_sent", Scalar::Int(counters.sent as i64));
        put("packets_delivered", Scalar::Int(counters.delivered as i64));
        put("packets_dropped", Scalar::Int(counters.dropped as i64));
        put("packets_in_flight", Scalar::Int(counters.in_flight as i64));
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            // Flows counted for the class: those that arrived after the warm-up, and
            // the long-lived and constant-rate ones (they start once and never finish).
            let sel: Vec<usize> =
                (0..ft.id.len()).filter(|&i| ft.class[i] as usize == ci && (!ft.warmup[i] || ft.size[i].is_nan())).collect();
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
        let mut arrivals = Arrivals::default();
        for (li, l) in self.links.iter().enumerate() {
            for a in &l.arrivals {
                arrivals.time.push(a.time.as_secs_f64());
                arrivals.link.push(li as u16);
                arrivals.queue_packets.push(a.queue_packets);
                arrivals.queue_bytes.push(a.queue_bytes);
                arrivals.backlog.push(a.backlog.as_secs_f64());
                arrivals.dropped.push(a.dropped);
            }
        }
        RunResult {
            arrivals,
            link_names: self.links.iter().map(|l| l.name.clone()).collect(),
            class_names: self.cfg.classes.iter().map(|c| c.name.clone()).collect(),
            flows: ft,
            links,
            series: self.series,
            summary,
            warnings: self.warnings,
        }
    }
}

/// Parse, validate and run a JSON scenario in one call.
pub fn run_json(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    progress: &mut dyn FnMut(SimTime) -> bool,
) -> Result<RunResult, crate::scenario::ScenarioError> {
    let (cfg, warnings) = crate::scenario::load_json(text, base_dir, seed)?;
    Ok(Simulation::new(cfg, warnings).run(progress))
}
