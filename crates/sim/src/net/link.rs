//! A unidirectional link: a FIFO queue in front of a transmitter of fixed rate,
//! then a fixed propagation delay.
//!
//! Because the queue is FIFO and the rate constant, a packet's transmission start
//! (and so its arrival at the far end) is known the moment it is admitted:
//! start = max(now, end of the previous transmission). The link keeps every
//! admitted packet on its *wire*, a FIFO ordered by arrival time, and needs one
//! event in the simulator's queue while the wire is not empty: the arrival of its
//! head (as htsim's pipes do). The start times on the wire give the queue length
//! at any instant, exactly.
use super::packet::{Packet, CE, ECT};
use super::queue::{Arrival, Discipline, Queue, QueueRegistry, Verdict, Waiting};
use super::ring::Ring;
use super::tap::{Fate, Tap};
use crate::engine::{SimTime, Stamp};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// A link of a validated scenario, in SI units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub name: String,
    /// Node indices.
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    #[serde(rename = "delay_ns")]
    pub delay: SimTime,
    pub queue: Queue,
}

/// Counters of a link over the measured period [warm-up, end].
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
    pub bytes_dropped: u64,
    /// Packets the queue marked Congestion Experienced (and admitted).
    pub marks: u64,
    /// Marks over the whole run, warm-up included (for the packet counters).
    pub marks_all: u64,
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

/// What one packet met on reaching a link.
#[derive(Clone, Copy, Debug)]
pub struct ArrivalRecord {
    pub time: SimTime,
    /// Packets waiting (not counting the one being transmitted).
    pub queue_packets: u64,
    pub queue_bytes: u64,
    /// Unfinished work: time until the transmitter is free (its waiting time, if admitted).
    pub backlog: SimTime,
    pub dropped: bool,
}

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The queue discipline dropped it.
    Dropped,
    /// On the wire behind other packets.
    Queued,
    /// On the wire, at its head: the link needs an event at this arrival time.
    Head(SimTime),
}

/// A packet on the wire: admitted, and waiting, in transmission or propagating
/// (64 bytes: a cache line; its arrival is start + serialization + delay).
#[derive(Clone, Copy, Debug, Default)]
struct OnWire {
    start: SimTime,
    stamp: Stamp,
    pkt: Packet,
}

/// Serialization times of the two most recent packet sizes (data and ACK sizes
/// alternate), so the division is done once per size rather than per packet.
#[derive(Clone, Copy, Debug, Default)]
struct TxCache {
    sizes: [u32; 2],
    times: [u64; 2],
}

/// A unidirectional link.
pub struct Link {
    pub rate_bps: u64,
    pub delay: SimTime,
    pub queue: Discipline,
    wire: Ring<OnWire>,
    /// How many packets at the front of the wire have started transmission.
    started: usize,
    /// Bytes of the waiting packets.
    q_bytes: u64,
    /// When the transmitter finishes the last admitted packet.
    busy_until: SimTime,
    warmup: SimTime,
    end: SimTime,
    tx: TxCache,
    pub stats: LinkStats,
    /// Record the queue met by every arriving packet after the warm-up.
    pub record_arrivals: bool,
    pub arrivals: Vec<ArrivalRecord>,
    /// Every packet offered, when the link is traced (None: not traced, and the
    /// only cost is this check once per packet).
    pub tap: Option<Box<Tap>>,
    /// The packet the queue dropped last (kept on the drop's path only, for the
    /// traces of the flows it belongs to).
    pub last_drop: Packet,
}

impl Link {
    /// A link with a built-in queue discipline, measured over [warmup, end); its
    /// queue discipline draws from `rng` (`queue::stream`).
    pub fn new(cfg: &LinkConfig, warmup: SimTime, end: SimTime, rng: Xoshiro256pp) -> Link {
        let queue = QueueRegistry::default().start(&cfg.queue, cfg.rate_bps, rng).expect("a built-in queue discipline");
        Link::with_discipline(cfg, warmup, end, queue)
    }

    /// A link running `queue` (started from `cfg.queue`), measured over [warmup, end).
    pub fn with_discipline(cfg: &LinkConfig, warmup: SimTime, end: SimTime, queue: Discipline) -> Link {
        Link {
            rate_bps: cfg.rate_bps,
            delay: cfg.delay,
            queue,
            wire: Ring::default(),
            started: 0,
            q_bytes: 0,
            busy_until: SimTime::ZERO,
            warmup,
            end,
            tx: TxCache::default(),
            stats: LinkStats::default(),
            record_arrivals: false,
            arrivals: Vec::new(),
            tap: None,
            last_drop: Packet::default(),
        }
    }

    /// Serialization time of `size` bytes, rounded up to the nanosecond.
    #[inline]
    pub fn tx_time(&mut self, size: u32) -> SimTime {
        if self.tx.sizes[0] == size {
            return SimTime(self.tx.times[0]);
        }
        if self.tx.sizes[1] == size {
            return SimTime(self.tx.times[1]);
        }
        // size < 2^32 bytes, rate >= 1 bit/s: the product fits in 128 bits, and the
        // quotient (at most 3.5e19 ns) is capped to "never".
        let ns = (size as u128 * 8_000_000_000).div_ceil(self.rate_bps as u128);
        let ns = ns.min(u64::MAX as u128) as u64;
        self.tx.sizes[1] = self.tx.sizes[0];
        self.tx.times[1] = self.tx.times[0];
        self.tx.sizes[0] = size;
        self.tx.times[0] = ns;
        SimTime(ns)
    }

    /// Account for a packet admitted at `now` whose transmission starts at `start`.
    ///
    /// Everything the links table reports follows from the admission: the packet
    /// waits over [now, start], so it adds that span (clipped to the measured period
    /// [warmup, end)) to the time integral of the queue, and its transmission counts
    /// if it starts in that period. Summing per packet gives exactly the integral of
    /// the queue length over time, with no work as packets leave the queue.
    #[inline]
    fn account(&mut self, now: SimTime, start: SimTime, tx: SimTime, size: u32) {
        let (from, to) = (now.max(self.warmup), start.min(self.end));
        if to > from {
            let dt = (to.0 - from.0) as u128;
            self.stats.queue_area_packets += dt;
            self.stats.queue_area_bytes += size as u128 * dt;
        }
        if start >= self.warmup && start < self.end {
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += size as u64;
            self.stats.busy_ns += tx.0.min(self.end.0 - start.0) as u128;
        }
    }

    /// Take every waiting packet whose transmission has started by `now` out of the queue.
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        while let Some(w) = self.wire.get(self.started) {
            if w.start > now {
                break;
            }
            self.q_bytes -= w.pkt.size as u64;
            self.started += 1;
        }
    }

    /// A packet reaches the link at `now`: the queue discipline drops it, or admits it
    /// to the wire (marked Congestion Experienced if it says so), ordered among
    /// simultaneous events by `stamp`.
    #[inline]
    pub fn offer(&mut self, now: SimTime, mut pkt: Packet, stamp: Stamp) -> Offer {
        self.advance(now);
        let size = pkt.size;
        let q_packets = (self.wire.len() - self.started) as u64;
        let (q_bytes, busy_until, flags) = (self.q_bytes, self.busy_until, pkt.flags);
        let verdict = self.queue.admit(q_packets, q_bytes, &mut pkt, || Arrival {
            now,
            q_packets,
            q_bytes,
            size,
            ect: flags & ECT != 0,
            // The transmitter is free and nothing waits from the end of the last
            // transmission on (`busy_until`, 0 before the first packet).
            idle: if busy_until < now { now - busy_until } else { SimTime::ZERO },
        });
        if self.record_arrivals && now >= self.warmup {
            self.arrivals.push(ArrivalRecord {
                time: now,
                queue_packets: q_packets,
                queue_bytes: self.q_bytes,
                backlog: if self.busy_until > now { self.busy_until - now } else { SimTime::ZERO },
                dropped: verdict == Verdict::Drop,
            });
        }
        if verdict != Verdict::Enqueue {
            if verdict == Verdict::Drop {
                if now >= self.warmup {
                    self.stats.drops += 1;
                    self.stats.bytes_dropped += size as u64;
                }
                if let Some(tap) = self.tap.as_deref_mut() {
                    tap.record(now, &pkt, Fate::Dropped, (q_packets, self.q_bytes), SimTime::ZERO);
                }
                self.last_drop = pkt;
                return Offer::Dropped;
            }
            debug_assert!(pkt.flags & ECT != 0, "a queue marked a packet that is not ECN-capable");
            pkt.flags |= CE;
            self.stats.marks_all += 1;
            if now >= self.warmup {
                self.stats.marks += 1;
            }
        }
        let start = self.busy_until.max(now);
        let tx = self.tx_time(size);
        let arrival = start + tx + self.delay;
        self.busy_until = start + tx;
        self.account(now, start, tx, size);
        let head = self.wire.is_empty();
        pkt.hop += 1;
        self.wire.push_back(OnWire { start, stamp, pkt });
        if start > now {
            self.q_bytes += size as u64;
            let (qp, qb) = ((self.wire.len() - self.started) as u64, self.q_bytes);
            let s = &mut self.stats;
            s.peak_packets_all = s.peak_packets_all.max(qp);
            s.peak_bytes_all = s.peak_bytes_all.max(qb);
            if now >= self.warmup {
                s.max_queue_packets = s.max_queue_packets.max(qp);
                s.max_queue_bytes = s.max_queue_bytes.max(qb);
            }
        } else {
            self.started += 1;
        }
        if let Some(tap) = self.tap.as_deref_mut() {
            let fate = if verdict == Verdict::Enqueue { Fate::Queued } else { Fate::Marked };
            tap.record(now, &pkt, fate, ((self.wire.len() - self.started) as u64, self.q_bytes), start);
        }
        if head {
            Offer::Head(arrival)
        } else {
            Offer::Queued
        }
    }

    /// The head of the wire reaches the far end at `now`: returns it, and the arrival
    /// time and stamp of the next packet on the wire, if any.
    #[inline]
    pub fn deliver(&mut self, now: SimTime) -> (Packet, Option<(SimTime, Stamp)>) {
        let head = self.wire.pop_front().expect("a link event with an empty wire");
        debug_assert!(head.start + self.tx_time(head.pkt.size) + self.delay == now);
        // The head arrives after its transmission ended: it has started, though the
        // cursor may not know it yet.
        if self.started > 0 {
            self.started -= 1;
        } else {
            self.q_bytes -= head.pkt.size as u64;
        }
        let next = self.wire.front().map(|w| (w.start, w.stamp, w.pkt.size));
        (head.pkt, next.map(|(start, stamp, size)| (start + self.tx_time(size) + self.delay, stamp)))
    }

    /// Packets and bytes waiting at the time of the last `advance`.
    ///
    /// The links-table counters (`stats`) are complete for the whole run as soon as
    /// packets are admitted; `advance` only moves the queue-length cursor.
    pub fn queue_len(&self) -> (u64, u64) {
        ((self.wire.len() - self.started) as u64, self.q_bytes)
    }

    /// The queue discipline's deadline has come at `now`: it runs with the queue as
    /// it is; returns its next deadline (if any).
    pub fn queue_deadline(&mut self, now: SimTime) -> Option<SimTime> {
        self.advance(now);
        let (packets, bytes) = self.queue_len();
        self.queue.on_deadline(now, Waiting { packets, bytes });
        self.queue.deadline()
    }

    /// Packets on the wire (waiting, in transmission or propagating).
    pub fn in_flight(&self) -> usize {
        self.wire.len()
    }

    /// The packets on the wire with their transmission starts, head first.
    pub fn on_wire(&self) -> impl Iterator<Item = (SimTime, &Packet)> + '_ {
        (0..self.wire.len()).filter_map(|i| self.wire.get(i)).map(|w| (w.start, &w.pkt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EventQueue;
    use crate::net::queue::{self, DropTail};

    /// 8 Mbps (1000 bytes in 1 ms), 10 ms.
    fn config(queue: Queue) -> LinkConfig {
        LinkConfig { name: "l".into(), from: 0, to: 1, rate_bps: 8_000_000, delay: SimTime::from_millis(10), queue }
    }

    fn link(limit: u64) -> Link {
        let cfg = config(Queue::DropTail(DropTail { limit_packets: Some(limit), limit_bytes: None }));
        Link::new(&cfg, SimTime::ZERO, SimTime::MAX, queue::stream(1, 0))
    }

    fn pkt(seq: u64, size: u32) -> Packet {
        Packet { seq, ts: SimTime::ZERO, owd: 0, sack: 0, flow: 0, conn: 0, len: size, size, route: 0, hop: 0, flags: 0, ce: 0 }
    }

    #[test]
    fn fifo_timing_tail_drop_and_one_head() {
        // 1000 B at 8 Mbps = 1 ms each; limit 2 waiting.
        let mut l = link(2);
        let mut q: EventQueue<()> = EventQueue::new();
        let t0 = SimTime::ZERO;
        let mut offers = Vec::new();
        for k in 0..4 {
            offers.push(l.offer(t0, pkt(k, 1000), q.stamp()));
        }
        // Only the first packet needs an event; the fourth finds two waiting.
        assert_eq!(offers, vec![Offer::Head(SimTime::from_millis(11)), Offer::Queued, Offer::Queued, Offer::Dropped]);
        assert_eq!(l.stats.drops, 1);
        l.advance(SimTime::from_millis(1));
        assert_eq!(l.queue_len(), (1, 1000));
        // Queue over time: 2 for 1 ms, 1 for 1 ms, 0 after -> area 3 pkt*ms (the
        // waits of the three packets: 0, 1 and 2 ms).
        l.advance(SimTime::from_millis(3));
        assert_eq!(l.stats.queue_area_packets, 3 * 1_000_000);
        assert_eq!(l.stats.queue_area_bytes, 3 * 1_000_000 * 1000);
        assert_eq!(l.stats.busy_ns, 3 * 1_000_000);
        assert_eq!(l.stats.packets_sent, 3);
        // Deliveries come out in order, each naming the next head's arrival.
        let (p, next) = l.deliver(SimTime::from_millis(11));
        assert_eq!((p.seq, p.hop, next.map(|n| n.0)), (0, 1, Some(SimTime::from_millis(12))));
        let (p, _) = l.deliver(SimTime::from_millis(12));
        let (p2, next) = l.deliver(SimTime::from_millis(13));
        assert_eq!((p.seq, p2.seq, next), (1, 2, None));
        assert_eq!(l.in_flight(), 0);
    }

    #[test]
    fn marks_set_ce_and_active_queues_see_the_idle_time() {
        use crate::net::packet::{CE, ECT};
        use crate::net::queue::{Discipline, Linear, Profile, Red, Unit};
        // Linear profile with p = 1 from one packet waiting: the third packet sent
        // at once finds one waiting and is marked if ECN-capable, dropped if not.
        let profile = Profile { limit_packets: Some(10), limit_bytes: None, unit: Unit::Packets, min_th: 0.0, max_th: 1.0, max_p: 1.0, weight: 1.0, mean_packet_bytes: 1000 };
        let lin = Linear { profile, ecn: true };
        let mut l = Link::new(&config(Queue::Linear(lin)), SimTime::ZERO, SimTime::MAX, queue::stream(1, 0));
        let mut q: EventQueue<()> = EventQueue::new();
        let ect = |k| Packet { flags: ECT, ..pkt(k, 1000) };
        assert_eq!(l.offer(SimTime::ZERO, ect(0), q.stamp()), Offer::Head(SimTime::from_millis(11)));
        assert_eq!(l.offer(SimTime::ZERO, ect(1), q.stamp()), Offer::Queued);
        assert_eq!(l.offer(SimTime::ZERO, ect(2), q.stamp()), Offer::Queued);
        assert_eq!(l.offer(SimTime::ZERO, pkt(3, 1000), q.stamp()), Offer::Dropped);
        assert_eq!((l.stats.marks, l.stats.marks_all, l.stats.drops), (1, 1, 1));
        let flags: Vec<u8> = (0..3).map(|k| l.deliver(SimTime::from_millis(11 + k)).0.flags).collect();
        assert_eq!(flags, vec![ECT, ECT, ECT | CE]);
        // RED with w_q = 1/2 and 1000-byte typical packets (1 ms at 8 Mbps): three
        // packets at 0 find 0, 0, 1 waiting (avg 0.5); the transmitter is free from
        // 3 ms, so a packet at 10.5 ms comes after 7 packet times: avg = 0.5^8 · 0.5.
        let mut red = Red::default();
        (red.profile.weight, red.profile.mean_packet_bytes) = (0.5, 1000);
        let mut l = Link::new(&config(Queue::Red(red)), SimTime::ZERO, SimTime::MAX, queue::stream(1, 0));
        for k in 0..3 {
            l.offer(SimTime::ZERO, pkt(k, 1000), q.stamp());
        }
        let avg = |l: &Link| match &l.queue {
            Discipline::Red(r) => r.avg.value,
            _ => unreachable!(),
        };
        assert_eq!(avg(&l), 0.5);
        l.offer(SimTime(10_500_000), pkt(3, 1000), q.stamp());
        assert_eq!(avg(&l), 0.5f64.powi(9));
        // A packet arriving while the transmitter is busy: no idle time.
        l.offer(SimTime(11_000_000), pkt(4, 1000), q.stamp());
        assert_eq!(avg(&l), 0.5f64.powi(10));
    }

    #[test]
    fn wire_entries_fill_one_cache_line() {
        assert_eq!(std::mem::size_of::<OnWire>(), 64);
    }

    #[test]
    fn serialization_time_is_exact_and_rounds_up() {
        let mut l = link(10);
        l.rate_bps = 10_000_000_000; // 10 Gbps: 1500 B = 1200 ns, 40 B = 32 ns
        assert_eq!(l.tx_time(1500), SimTime(1200));
        assert_eq!(l.tx_time(40), SimTime(32));
        assert_eq!(l.tx_time(1500), SimTime(1200));
        assert_eq!(l.tx_time(1), SimTime(1)); // 0.8 ns rounds up
        l.rate_bps = 3;
        l.tx = TxCache::default();
        assert_eq!(l.tx_time(1), SimTime(2_666_666_667));
    }
}
