//! Paced sending: datagrams at the rate a controller sets.
use super::feedback::{rtt_field, Report};
use super::{RateCc, RateControl};
use crate::engine::{SimTime, Timer};
use crate::net::packet::DATAGRAM;
use crate::net::Packet;
use crate::transport::endpoints::Endpoints;

/// `x.round() as u64` for a finite x ≥ 0 (halves away from zero), without the call
/// to libm's `round` that x86-64's baseline instruction set needs: `x as u64`
/// truncates, and x minus its whole part is exact in binary floating point.
#[inline]
fn round_ns(x: f64) -> u64 {
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        i + 1
    } else {
        i
    }
}

/// Send times at a rate that may change. Packet k after the latest change leaves
/// at anchor + round(k · 8 · size / rate), computed from k so that rounding
/// never accumulates (a constant rate gives exact times over any run length).
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    anchor: SimTime,
    k: u64,
    interval_ns: f64,
    rate_bps: f64,
}

impl Pacer {
    /// The first packet leaves at `start`.
    pub fn new(start: SimTime, rate_bps: f64, packet_bytes: u32) -> Self {
        Pacer { anchor: start, k: 0, interval_ns: Self::interval(rate_bps, packet_bytes), rate_bps }
    }

    fn interval(rate_bps: f64, packet_bytes: u32) -> f64 {
        if rate_bps > 0.0 {
            packet_bytes as f64 * 8e9 / rate_bps
        } else {
            f64::INFINITY
        }
    }

    /// When the next packet leaves (`SimTime::MAX` while the rate is 0).
    #[inline]
    pub fn next(&self) -> SimTime {
        let dt = self.k as f64 * self.interval_ns;
        if dt.is_finite() {
            self.anchor + SimTime(round_ns(dt))
        } else {
            SimTime::MAX
        }
    }

    /// The next packet has left.
    #[inline]
    pub fn sent(&mut self) {
        self.k += 1;
    }

    /// The rate becomes `rate_bps` at `now`: the next packet leaves one new interval
    /// after the previous one (or at once, if that is already past).
    pub fn set_rate(&mut self, now: SimTime, rate_bps: f64, packet_bytes: u32) {
        if rate_bps == self.rate_bps {
            return;
        }
        let last = if self.k == 0 || !self.interval_ns.is_finite() {
            None
        } else {
            Some(self.anchor + SimTime(round_ns((self.k - 1) as f64 * self.interval_ns)))
        };
        self.rate_bps = rate_bps;
        self.interval_ns = Self::interval(rate_bps, packet_bytes);
        match last {
            Some(t) if self.interval_ns.is_finite() && t + SimTime(round_ns(self.interval_ns)) > now => {
                self.anchor = t;
                self.k = 1;
            }
            _ => {
                self.anchor = now;
                self.k = 0;
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
    pub send_timer: Timer,
    /// The controller's own deadline.
    pub cc_timer: Timer,
}

impl RateSender {
    /// A flow of `size` bytes (u64::MAX: no end) starting at `start`: the controller
    /// is told its start and datagram size before the first send time is computed.
    pub fn new(ep: Endpoints, packet_bytes: u32, mut cc: RateCc, start: SimTime, stop: SimTime, size: u64) -> Self {
        cc.on_start(start, packet_bytes);
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
            send_timer: Timer::default(),
            cc_timer: Timer::default(),
        };
        s.sync_controller();
        s.sync_send_timer();
        s
    }

    fn sync_send_timer(&mut self) {
        let next = self.pacer.next();
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
    }

    /// The sender has sent its last datagram: its flow's bytes are all out, or its
    /// next datagram would leave at or after the class's stop. (A sender paused at
    /// rate 0 is not done: its controller may resume it.)
    pub fn done(&self) -> bool {
        self.sent >= self.total || (!self.send_timer.is_set() && self.pacer.next() != SimTime::MAX)
    }

    /// The datagram due at `now` (the send timer fired); the next one is scheduled.
    pub fn send(&mut self, now: SimTime) -> Packet {
        let bytes = if self.sent + 1 == self.total { self.last_bytes } else { self.packet_bytes };
        let pkt = Packet {
            seq: self.sent * self.packet_bytes as u64,
            ts: now,
            owd: self.rtt,
            sack: 0,
            flow: self.ep.flow,
            conn: self.ep.conn,
            len: bytes,
            size: bytes,
            route: self.ep.data_route,
            hop: 0,
            flags: DATAGRAM,
        };
        self.sent += 1;
        self.pacer.sent();
        self.sync_send_timer();
        pkt
    }

    /// The controller's deadline has come: it may change the rate.
    pub fn on_cc_deadline(&mut self, now: SimTime) {
        self.cc.on_deadline(now);
        self.retime(now);
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
    fn rounding_matches_f64_round() {
        let mut x = 0.0f64;
        for v in [0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 2_666_666.5, 4503599627370495.5, 9007199254740993.0, 1e18 + 0.7, 1.8e19] {
            assert_eq!(round_ns(v), v.round() as u64, "{v}");
        }
        // A pseudo-random sweep of magnitudes and fractions.
        for i in 0..100_000u64 {
            x = (x + 0.618_033_988_749_895 * (i as f64 + 1.0)) % 1e13;
            assert_eq!(round_ns(x), x.round() as u64, "{x}");
            let y = x * 1.000_000_1 + 0.5;
            assert_eq!(round_ns(y), y.round() as u64, "{y}");
        }
    }

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
