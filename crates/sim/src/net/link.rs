//! A unidirectional link: a FIFO queue in front of a transmitter of fixed rate,
//! then a fixed propagation delay.
//!
//! Because the queue is FIFO and the rate constant, a packet's transmission start
//! is known the moment it is admitted: max(now, end of the previous transmission).
//! The link therefore schedules no events of its own; it keeps the start times of
//! the waiting packets to know its queue length at any instant, exactly.
use super::queue::{QueueDiscipline, Verdict};
use crate::engine::SimTime;
use std::collections::VecDeque;

/// Counters of a link over the measured period [warm-up, end].
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
    pub bytes_dropped: u64,
    /// Time spent transmitting.
    pub busy_ns: u128,
    /// Integral of the waiting packets (and bytes) over time.
    pub queue_area_packets: u128,
    pub queue_area_bytes: u128,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Largest queue ever seen, warm-up included (for the limit invariant).
    pub peak_packets_all: u64,
    pub peak_bytes_all: u64,
}

/// A unidirectional link.
pub struct Link {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub rate_bps: f64,
    pub delay: SimTime,
    pub disc: QueueDiscipline,
    /// When the transmitter finishes the last admitted packet.
    busy_until: SimTime,
    /// (transmission start, size) of admitted packets not yet being transmitted.
    waiting: VecDeque<(SimTime, u32)>,
    q_bytes: u64,
    last_t: SimTime,
    warmup: SimTime,
    pub stats: LinkStats,
    /// Record the queue met by every arriving packet after the warm-up.
    pub record_arrivals: bool,
    pub arrivals: Vec<ArrivalRecord>,
}

/// What one packet met on reaching a link.
#[derive(Clone, Copy, Debug)]
pub struct ArrivalRecord {
    pub time: SimTime,
    /// Packets waiting (not counting the one being transmitted).
    pub queue_packets: u32,
    pub queue_bytes: u64,
    /// Unfinished work: time until the transmitter is free (its waiting time, if admitted).
    pub backlog: SimTime,
    pub dropped: bool,
}

impl Link {
    pub fn new(name: String, from: usize, to: usize, rate_bps: f64, delay: SimTime, disc: QueueDiscipline, warmup: SimTime) -> Link {
        Link {
            name,
            from,
            to,
            rate_bps,
            delay,
            disc,
            busy_until: SimTime::ZERO,
            waiting: VecDeque::new(),
            q_bytes: 0,
            last_t: SimTime::ZERO,
            warmup,
            stats: LinkStats::default(),
            record_arrivals: false,
            arrivals: Vec::new(),
        }
    }

    /// Serialization time of `size` bytes (rounded up to the nanosecond).
    #[inline]
    pub fn tx_time(&self, size: u32) -> SimTime {
        SimTime(((size as f64 * 8e9) / self.rate_bps).ceil() as u64)
    }

    #[inline]
    fn integrate(&mut self, t: SimTime) {
        // Queue area over [max(last_t, warmup), t].
        let from = self.last_t.max(self.warmup);
        if t > from {
            let dt = (t.0 - from.0) as u128;
            self.stats.queue_area_packets += self.waiting.len() as u128 * dt;
            self.stats.queue_area_bytes += self.q_bytes as u128 * dt;
        }
        self.last_t = t;
    }

    #[inline]
    fn count_tx(&mut self, start: SimTime, size: u32, end_of_run: SimTime) {
        if start >= self.warmup && start < end_of_run {
            let tx = self.tx_time(size);
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += size as u64;
            self.stats.busy_ns += tx.0.min(end_of_run.0 - start.0) as u128;
        }
    }

    /// Move every waiting packet whose transmission has started by `now` out of the queue.
    #[inline]
    pub fn advance(&mut self, now: SimTime, end_of_run: SimTime) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.integrate(start);
            self.waiting.pop_front();
            self.q_bytes -= size as u64;
            self.count_tx(start, size, end_of_run);
        }
        self.integrate(now);
    }

    /// A packet of `size` bytes reaches the link at `now`: returns when it arrives at
    /// the far end, or None if the queue discipline drops it.
    #[inline]
    pub fn offer(&mut self, now: SimTime, size: u32, end_of_run: SimTime) -> Option<SimTime> {
        self.advance(now, end_of_run);
        let q_packets = self.waiting.len() as u64;
        let verdict = self.disc.admit(q_packets, self.q_bytes, size);
        if self.record_arrivals && now >= self.warmup {
            self.arrivals.push(ArrivalRecord {
                time: now,
                queue_packets: q_packets as u32,
                queue_bytes: self.q_bytes,
                backlog: self.busy_until.saturating_sub(now),
                dropped: verdict == Verdict::Drop,
            });
        }
        if verdict == Verdict::Drop {
            if now >= self.warmup {
                self.stats.drops += 1;
                self.stats.bytes_dropped += size as u64;
            }
            return None;
        }
        let start = self.busy_until.max(now);
        self.busy_until = start + self.tx_time(size);
        if start > now {
            self.waiting.push_back((start, size));
            self.q_bytes += size as u64;
            let (qp, qb) = (self.waiting.len() as u64, self.q_bytes);
            let s = &mut self.stats;
            s.peak_packets_all = s.peak_packets_all.max(qp);
            s.peak_bytes_all = s.peak_bytes_all.max(qb);
            if now >= self.warmup {
                s.max_queue_packets = s.max_queue_packets.max(qp);
                s.max_queue_bytes = s.max_queue_bytes.max(qb);
            }
        } else {
            self.count_tx(start, size, end_of_run);
        }
        Some(self.busy_until + self.delay)
    }

    /// Packets and bytes waiting at `now` (call `advance` first).
    pub fn queue(&self) -> (u64, u64) {
        (self.waiting.len() as u64, self.q_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::DropTail;

    fn link(limit: u64) -> Link {
        let d = QueueDiscipline::DropTail(DropTail { limit_packets: Some(limit), limit_bytes: None });
        Link::new("l".into(), 0, 1, 8e6, SimTime::from_millis(10), d, SimTime::ZERO)
    }

    #[test]
    fn fifo_timing_and_tail_drop() {
        // 1000 B at 8 Mbps = 1 ms each; limit 2 waiting.
        let mut l = link(2);
        let end = SimTime::MAX;
        let t0 = SimTime::ZERO;
        assert_eq!(l.offer(t0, 1000, end), Some(SimTime::from_millis(11)));
        assert_eq!(l.offer(t0, 1000, end), Some(SimTime::from_millis(12)));
        assert_eq!(l.offer(t0, 1000, end), Some(SimTime::from_millis(13)));
        assert_eq!(l.offer(t0, 1000, end), None); // two already waiting
        assert_eq!(l.stats.drops, 1);
        l.advance(SimTime::from_millis(1), end);
        assert_eq!(l.queue(), (1, 1000));
        // Average queue over [0, 3 ms]: 2 for 1 ms, 1 for 1 ms, 0 for 1 ms -> area 3 pkt*ms.
        l.advance(SimTime::from_millis(3), end);
        assert_eq!(l.stats.queue_area_packets, 3 * 1_000_000);
        assert_eq!(l.stats.busy_ns, 3 * 1_000_000);
        assert_eq!(l.stats.packets_sent, 3);
    }
}
