//! A test driver of one rate flow's connection without the simulator: datagrams
//! cross a path of fixed one-way delay (with, optionally, a bottleneck of a given
//! rate and an unlimited FIFO queue) unless a rule drops them; feedback comes back
//! after the same delay, unless cut. Losses are exactly what the rule says.
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::rate::{FlowStart, RateConfig, RateConn, RateSender};
use crate::transport::Endpoints;
use std::collections::VecDeque;

/// Decides which datagrams are lost: (datagram number, send time) → dropped.
pub type DropRule = Box<dyn FnMut(u64, SimTime) -> bool>;

pub struct Harness {
    pub conn: RateConn,
    pub now: SimTime,
    packet_bytes: u32,
    one_way: SimTime,
    bottleneck_bps: Option<f64>,
    free_at: SimTime,
    drop: DropRule,
    /// Feedback sent from now on is lost.
    pub cut_feedback: bool,
    data: VecDeque<(SimTime, Packet)>,
    feedback: VecDeque<(SimTime, Packet)>,
    pub sent: u64,
    pub dropped: u64,
    pub delivered: u64,
    pub reports: u64,
}

impl Harness {
    /// A flow of `cfg` starting at time 0; its first datagram leaves at once.
    pub fn new(cfg: &RateConfig, packet_bytes: u32, one_way: SimTime, bottleneck_bps: Option<f64>, drop: DropRule) -> Self {
        let ep = Endpoints { flow: 0, conn: 0, class: 0, data_route: 0, ack_route: 1 };
        let start = FlowStart { now: SimTime::ZERO, packet_bytes, rng: cclab_rng::stream(0, "harness") };
        let tx = RateSender::new(ep, cfg.make(), start, SimTime::MAX, u64::MAX);
        let conn = RateConn::new(tx, cfg.receiver(packet_bytes));
        let mut h = Harness {
            conn,
            now: SimTime::ZERO,
            packet_bytes,
            one_way,
            bottleneck_bps,
            free_at: SimTime::ZERO,
            drop,
            cut_feedback: false,
            data: VecDeque::new(),
            feedback: VecDeque::new(),
            sent: 0,
            dropped: 0,
            delivered: 0,
            reports: 0,
        };
        h.send();
        h
    }

    fn send(&mut self) {
        let pkt = self.conn.tx.send(self.now);
        self.sent += 1;
        if (self.drop)(pkt.seq / self.packet_bytes as u64, self.now) {
            self.dropped += 1;
            return;
        }
        let mut t = self.now;
        if let Some(c) = self.bottleneck_bps {
            self.free_at = t.max(self.free_at) + SimTime::from_secs_f64(pkt.size as f64 * 8.0 / c);
            t = self.free_at;
        }
        self.data.push_back((t + self.one_way, pkt));
    }

    fn post(&mut self, fb: Option<Packet>) {
        if let Some(fb) = fb {
            if !self.cut_feedback {
                self.feedback.push_back((self.now + self.one_way, fb));
            }
        }
    }

    /// Datagrams on their way.
    pub fn in_flight(&self) -> u64 {
        self.data.len() as u64
    }

    /// Run until `end`; `observe` sees the harness after every event.
    pub fn run(&mut self, end: SimTime, mut observe: impl FnMut(&Harness)) {
        loop {
            let never = SimTime::MAX;
            let times = [
                self.data.front().map_or(never, |x| x.0),
                self.feedback.front().map_or(never, |x| x.0),
                self.conn.rx_timer.deadline().unwrap_or(never),
                self.conn.tx.cc_timer.deadline().unwrap_or(never),
                self.conn.tx.send_timer.deadline().unwrap_or(never),
            ];
            let (which, &t) = times.iter().enumerate().min_by_key(|&(i, t)| (*t, i)).expect("five");
            if t > end {
                self.now = end;
                return;
            }
            self.now = t;
            match which {
                0 => {
                    let (_, pkt) = self.data.pop_front().expect("due");
                    self.delivered += 1;
                    let fb = self.conn.on_data(t, &pkt);
                    self.post(fb);
                }
                1 => {
                    let (_, fb) = self.feedback.pop_front().expect("due");
                    self.reports += 1;
                    self.conn.on_feedback(t, &fb);
                }
                2 => {
                    let fb = self.conn.on_rx_deadline(t);
                    self.post(fb);
                }
                3 => self.conn.tx.on_cc_deadline(t),
                _ => self.send(),
            }
            observe(self);
        }
    }
}
