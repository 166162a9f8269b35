//! The loop's side of `[trace]`: building the recorder and the links' taps, the
//! interval records of the traced flows, the packets crossing a captured link,
//! and the tables at the end. The per-event hooks are one `if let` each in the
//! loop (`mod.rs`), on `Network::trace`.
use super::event::{Event, Owner};
use super::Simulation;
use crate::config::Config;
use crate::engine::{Firing, SimTime};
use crate::metrics::trace::Tracer;
use crate::metrics::Traces;
use crate::net::{Link, Packet};
use crate::transport::Conn;

/// The recorder of `cfg`'s `[trace]` (None without one), with a tap on every traced link.
pub(super) fn tracer(cfg: &Config, links: &mut [Link]) -> Option<Box<Tracer>> {
    if cfg.trace.is_off() {
        return None;
    }
    for &l in &cfg.trace.links {
        links[l as usize].tap = Some(Box::default());
    }
    Some(Box::new(Tracer::new(&cfg.trace, links.len(), &cfg.classes)))
}

impl Simulation {
    /// The first interval record, one interval after the start.
    pub(super) fn trace_schedule_initial(&mut self) {
        if let Some(iv) = self.net.trace.as_ref().and_then(|t| t.interval()) {
            self.trace_timer.set(iv);
            self.net.queue.arm(&mut self.trace_timer, Event::Timer(Owner::Trace));
        }
    }

    /// Record every open traced flow's variables, and schedule the next record.
    pub(super) fn trace_tick(&mut self) {
        let now = self.net.now;
        // The recorder's events are not the simulation's: a traced run reports the
        // events of the same run untraced.
        self.events -= 1;
        if self.net.queue.fire(&mut self.trace_timer, now) != Firing::Due {
            return;
        }
        let Some(tr) = self.net.trace.as_deref_mut() else { return };
        for conn in self.conns.iter().flatten() {
            match conn {
                Conn::Tcp(tcp) => tr.tick_tcp(now, tcp),
                Conn::Rate(r) => tr.tick_rate(now, r),
            }
        }
        let next = now + tr.interval().expect("an interval");
        if next <= self.cfg.duration {
            self.trace_timer.set(next);
            self.net.queue.arm(&mut self.trace_timer, Event::Timer(Owner::Trace));
        }
    }

    /// `pkt` has crossed link `l` (it arrives at the far end now): capture it, if
    /// the link is captured, at the start of its transmission.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_capture(&mut self, l: u32, pkt: Packet) {
        if !self.net.trace.as_deref().is_some_and(|t| t.captures(l)) {
            return;
        }
        let link = &mut self.net.links[l as usize];
        let start = self.net.now - link.delay - link.tx_time(pkt.size);
        self.capture(l, start, &pkt);
    }

    fn capture(&mut self, l: u32, start: SimTime, pkt: &Packet) {
        let Some(tr) = self.net.trace.as_deref_mut().filter(|t| t.captures(l)) else { return };
        let conn = self.conns.get(pkt.conn as usize).and_then(|c| c.as_ref()).filter(|c| c.flow() == pkt.flow);
        // An ACK's SACK blocks are in its connection's log until the sender reads them.
        let sack = match conn {
            Some(Conn::Tcp(tcp)) if pkt.is_ack() && pkt.sack != 0 => tcp.sack_record(pkt.sack),
            _ => None,
        };
        tr.capture(l, start, pkt, self.records[pkt.flow as usize].class, sack);
    }

    /// The traces of the run, which ended at `end`: the packets still on a
    /// captured link whose transmission started are captured, the taps become
    /// the links trace.
    pub(super) fn trace_finish(&mut self, end: SimTime) -> Traces {
        if self.net.trace.is_none() {
            return Traces::default();
        }
        for l in 0..self.net.links.len() as u32 {
            if self.net.trace.as_deref().is_some_and(|t| t.captures(l)) {
                let started: Vec<(SimTime, Packet)> = self.net.links[l as usize].on_wire().filter(|(s, _)| *s < end).map(|(s, p)| (s, *p)).collect();
                for (start, pkt) in started {
                    self.capture(l, start, &pkt);
                }
            }
        }
        let taps = self.net.links.iter_mut().enumerate().filter_map(|(l, link)| link.tap.take().map(|t| (l as u32, *t))).collect();
        let tr = self.net.trace.take().expect("a tracer");
        tr.finish(taps, end)
    }
}
