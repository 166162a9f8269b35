//! Paced sending: datagrams at the rate a controller sets.
use super::feedback::{rtt_field, Report};
use crate::net::queue::rcp::field_of;
use super::schedule::Schedule;
use super::{FlowStart, RateCc, RateControl};
use crate::engine::{SimTime, Timer};
use crate::net::packet::DATAGRAM;
use crate::net::Packet;
use crate::transport::endpoints::Endpoints;

/// Send times at a rate that may change. Packet k after the latest change leaves
/// at anchor + round(k · 8 · size / rate), exact to the nanosecond over any run
/// length ([`Schedule`]).
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    anchor: SimTime,
    /// Offsets from the anchor (None while the rate is 0).
    schedule: Option<Schedule>,
    rate_bps: f64,
}

impl Pacer {
    /// The first packet leaves at `start`.
    pub fn new(start: SimTime, rate_bps: f64, packet_bytes: u32) -> Self {
        Pacer { anchor: start, schedule: Schedule::new(rate_bps, packet_bytes), rate_bps }
    }

    /// When the next packet leaves (`SimTime::MAX` while the rate is 0).
    #[inline]
    pub fn next(&self) -> SimTime {
        match &self.schedule {
            Some(s) => self.anchor + s.offset(),
            None => SimTime::MAX,
        }
    }

    /// The next packet has left.
    #[inline]
    pub fn sent(&mut self) {
        if let Some(s) = &mut self.schedule {
            s.advance();
        }
    }

    /// The rate becomes `rate_bps` at `now`: the next packet leaves one new interval
    /// after the previous one (or at once, if that is already past).
    pub fn set_rate(&mut self, now: SimTime, rate_bps: f64, packet_bytes: u32) {
        if rate_bps == self.rate_bps {
            return;
        }
        let last = self.schedule.and_then(|s| s.previous()).map(|o| self.anchor + o);
        self.rate_bps = rate_bps;
        self.schedule = Schedule::new(rate_bps, packet_bytes);
        self.anchor = now;
        if let (Some(t), Some(s)) = (last, &mut self.schedule) {
            let mut one = *s;
            one.advance();
            if t + one.offset() > now {
                self.anchor = t;
                *s = one;
            }
        }
    }
}

/// A flow of datagrams paced by a rate controller.
#[derive(Clone, Debug)]
pub struct RateSender {
    pub ep: Endpoints,
    /// Bytes of every datagram on the wire (the last of a finite flow carries the rest).
    pub packet_bytes: u32,
    pub cc: RateCc,
    pacer: Pacer,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams the flow sends in all (u64::MAX: no end), and the bytes of the last.
    total: u64,
    last_bytes: u32,
    /// When the class stops: no datagram leaves at or after it.
    stop: SimTime,
    /// The controller's RTT estimate as datagrams carry it (updated whenever the
    /// controller runs, so that sending a datagram does not consult it).
    rtt: u32,
    /// The rate field datagrams carry (`Packet::sack`; 0: none), likewise.
    request: u32,
    pub send_timer: Timer,
    /// The controller's own deadline.
    pub cc_timer: Timer,
}

impl RateSender {
    /// A flow of `size` bytes (u64::MAX: no end) starting as `f` says: the controller
    /// is told its start, datagram size and random stream before the first send
    /// time is computed.
    pub fn new(ep: Endpoints, mut cc: RateCc, f: FlowStart, stop: SimTime, size: u64) -> Self {
        let (start, packet_bytes) = (f.now, f.packet_bytes);
        cc.start(f);
        let pacer = Pacer::new(start, cc.rate_bps(), packet_bytes);
        let (total, last_bytes) = if size == u64::MAX {
            (u64::MAX, packet_bytes)
        } else {
            let pb = packet_bytes as u64;
            let n = size.div_ceil(pb).max(1);
            (n, (size - (n - 1) * pb).max(1) as u32)
        };
        let mut s = RateSender {
            ep,
            packet_bytes,
            cc,
            pacer,
            sent: 0,
            total,
            last_bytes,
            stop,
            rtt: 0,
            request: 0,
            send_timer: Timer::default(),
            cc_timer: Timer::default(),
        };
        s.sync_controller();
        s.sync_send_timer();
        s
    }

    fn sync_send_timer(&mut self) {
        let next = self.cc.next_send().unwrap_or_else(|| self.pacer.next());
        if next < self.stop && self.sent < self.total {
            self.send_timer.set(next);
        } else {
            self.send_timer.stop();
        }
    }

    /// What the controller decides besides the rate: its deadline and its RTT estimate.
    fn sync_controller(&mut self) {
        match self.cc.deadline() {
            Some(t) => self.cc_timer.set(t),
            None => self.cc_timer.stop(),
        }
        self.rtt = rtt_field(self.cc.rtt());
        self.request = self.cc.rate_request().map_or_else(|| self.cc.header_field(), |r| field_of(r as f32));
    }

    /// The sender has sent its last datagram: its flow's bytes are all out, or its
    /// next datagram would leave at or after the class's stop. (A sender paused at
    /// rate 0 is not done: its controller may resume it.)
    pub fn done(&self) -> bool {
        let next = self.cc.next_send().unwrap_or_else(|| self.pacer.next());
        self.sent >= self.total || (!self.send_timer.is_set() && next != SimTime::MAX)
    }

    /// The datagram due at `now` (the send timer fired); the next one is scheduled.
    pub fn send(&mut self, now: SimTime) -> Packet {
        let bytes = if self.sent + 1 == self.total { self.last_bytes } else { self.packet_bytes };
        let pkt = self.datagram(now, bytes, bytes);
        self.sent += 1;
        self.pacer.sent();
        self.cc.on_sent(now);
        self.sync_send_timer();
        pkt
    }

    /// A datagram of `len` payload bytes and `size` on the wire, leaving at `now`.
    #[inline]
    fn datagram(&self, now: SimTime, len: u32, size: u32) -> Packet {
        Packet {
            seq: self.sent * self.packet_bytes as u64,
            ts: now,
            owd: self.rtt,
            sack: self.request,
            flow: self.ep.flow,
            conn: self.ep.conn,
            len,
            size,
            route: self.ep.data_route,
            hop: 0,
            flags: DATAGRAM,
            ce: 0,
        }
    }

    /// The controller's deadline has come: it may change the rate, and may want a
    /// header-only probe sent now (RCP's SYN and REF packets; none once the class
    /// has stopped): returned, with no payload (it counts for no bytes).
    pub fn on_cc_deadline(&mut self, now: SimTime) -> Option<Packet> {
        self.cc.on_deadline(now);
        let probe = self.cc.take_probe().filter(|_| now < self.stop).map(|bytes| self.datagram(now, 0, bytes));
        self.retime(now);
        probe
    }

    /// A feedback report reached the sender: the controller may change the rate.
    pub fn on_feedback(&mut self, now: SimTime, report: &Report) {
        self.cc.on_feedback(now, report);
        self.retime(now);
    }

    fn retime(&mut self, now: SimTime) {
        self.pacer.set_rate(now, self.cc.rate_bps(), self.packet_bytes);
        self.sync_controller();
        self.sync_send_timer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_times_are_exact_over_long_runs() {
        // 1000 B at 3 Mbps: 2,666,666.67 ns apart; packet 3,000,000 leaves at exactly 8000 s.
        let mut p = Pacer::new(SimTime::from_secs(5), 3e6, 1000);
        assert_eq!(p.next(), SimTime::from_secs(5));
        p.sent();
        assert_eq!(p.next(), SimTime(5_000_000_000 + 2_666_667));
        for _ in 1..3_000_000 {
            p.sent();
        }
        assert_eq!(p.next(), SimTime::from_secs(8005));
    }

    #[test]
    fn a_rate_change_spaces_from_the_last_packet() {
        let mut p = Pacer::new(SimTime::ZERO, 8e6, 1000); // 1 ms apart
        p.sent();
        p.sent(); // packets at 0 and 1 ms left; next due at 2 ms
        p.set_rate(SimTime(1_500_000), 4e6, 1000); // 2 ms apart from now on
        assert_eq!(p.next(), SimTime::from_millis(3));
        p.set_rate(SimTime(1_600_000), 0.0, 1000);
        assert_eq!(p.next(), SimTime::MAX);
        p.set_rate(SimTime::from_millis(10), 8e6, 1000);
        assert_eq!(p.next(), SimTime::from_millis(10)); // resumes at once
    }
}
