//! The network during a run: the clock and event queue, the links and routes,
//! and the packet counters. Everything that moves a packet goes through here.
use super::event::{ConnTimer, Event, Owner};
use crate::engine::{EventQueue, SimTime, Timer};
use crate::metrics::trace::Tracer;
use crate::net::{Link, Offer, Packet, Routes};
use crate::transport::rate::RateConn;
use crate::transport::tcp::{Output, Tcp};

/// Counters of every packet ever created (for the conservation invariant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounters {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    /// Marks set by the queues (a packet marked at two links counts twice).
    pub marked: u64,
}

/// Clock, event queue, links, routes and packet counters.
pub struct Network {
    pub now: SimTime,
    pub queue: EventQueue<Event>,
    pub links: Vec<Link>,
    /// Per link, the deadline of its queue discipline (`Owner::Link`), kept apart from
    /// the link so that the per-packet path does not carry it.
    pub queue_timers: Vec<Timer>,
    pub routes: Routes,
    pub counters: PacketCounters,
    /// The run's traces (None: `[trace]` is absent, and nothing is recorded).
    pub trace: Option<Box<Tracer>>,
}

impl Network {
    /// A packet leaves its sender: onto the first link of its route.
    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        self.counters.sent += 1;
        let l = self.routes.link(pkt.route, pkt.hop).expect("a packet sent on an empty route");
        self.offer(l, pkt);
    }

    /// Send every packet of `out`, in order, and empty it.
    #[inline]
    pub fn send_all(&mut self, out: &mut Output) {
        for &pkt in out.iter() {
            self.send(pkt);
        }
        out.clear();
    }

    /// Offer a packet to link `l`. Its stamp orders its arrival among simultaneous
    /// events as if it had been scheduled now (a dropped packet's stamp goes unused,
    /// which changes no order).
    #[inline]
    pub fn offer(&mut self, l: u32, pkt: Packet) {
        let stamp = self.queue.stamp();
        match self.links[l as usize].offer(self.now, pkt, stamp) {
            Offer::Head(at) => self.queue.push_stamped(at, stamp, Event::Arrival(l)),
            Offer::Queued => {}
            Offer::Dropped => {
                self.counters.dropped += 1;
                if let Some(tr) = self.trace.as_deref_mut() {
                    tr.dropped(self.now, l, &self.links[l as usize].last_drop);
                }
            }
        }
    }

    /// The head of link `l`'s wire has arrived (its event is the queue's current
    /// one): returns the packet, and reschedules the event for the next packet.
    #[inline]
    pub fn deliver(&mut self, l: u32) -> Packet {
        let (pkt, next) = self.links[l as usize].deliver(self.now);
        match next {
            Some((at, stamp)) => self.queue.reschedule(at, stamp),
            None => self.queue.take(),
        }
        pkt
    }

    /// Arm a TCP connection's timers (in slot `slot`).
    #[inline(always)]
    pub fn arm_tcp(&mut self, tcp: &mut Tcp, slot: u32) {
        let flow = tcp.ep.flow;
        let ev = |timer| Event::Timer(Owner::Conn { slot, flow, timer });
        self.queue.arm(&mut tcp.rto_timer, ev(ConnTimer::Rto));
        self.queue.arm(&mut tcp.delack_timer, ev(ConnTimer::DelAck));
        self.queue.arm(&mut tcp.cc_timer, ev(ConnTimer::Cc));
    }

    /// Arm a rate flow's timers (in slot `slot`): its sender's and its receiver's.
    pub fn arm_rate(&mut self, r: &mut RateConn, slot: u32) {
        let flow = r.flow();
        let ev = |timer| Event::Timer(Owner::Conn { slot, flow, timer });
        self.queue.arm(&mut r.tx.send_timer, ev(ConnTimer::Send));
        self.queue.arm(&mut r.tx.cc_timer, ev(ConnTimer::Cc));
        self.queue.arm(&mut r.rx_timer, ev(ConnTimer::Feedback));
    }

    /// Packet counters, with `in_flight` counted on the links' wires and the marks
    /// by the links.
    pub fn packet_counters(&self) -> PacketCounters {
        let mut c = self.counters;
        c.in_flight = self.links.iter().map(|l| l.in_flight() as u64).sum();
        c.marked = self.links.iter().map(|l| l.stats.marks_all).sum();
        c
    }
}
