//! The traced links' queues packet by packet: the rows of each link's tap, and
//! the departures from the queue they imply (a FIFO link knows when each
//! admitted packet's transmission starts), merged in time order.
use crate::engine::SimTime;
use crate::net::tap::{Fate, Offered};
use std::collections::VecDeque;

/// What a row of the links trace records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LinkEvent {
    /// A packet was admitted; it waits `wait` (0: its transmission starts at once).
    Enqueue = 0,
    /// A packet was admitted and marked Congestion Experienced.
    Mark,
    /// A packet was dropped.
    Drop,
    /// A waiting packet's transmission starts: it leaves the queue.
    Dequeue,
}

/// The names of [`LinkEvent`], in code order.
pub const LINK_EVENTS: &[&str] = &["enqueue", "mark", "drop", "dequeue"];

/// Rows of the links trace, as columns.
#[derive(Clone, Debug, Default)]
pub struct LinkTable {
    /// Seconds.
    pub time: Vec<f64>,
    /// Link index.
    pub link: Vec<u32>,
    pub event: Vec<u8>,
    pub flow: Vec<u32>,
    /// The packet's first byte, acknowledgment or stream offset.
    pub seq: Vec<u64>,
    /// Bytes on the wire.
    pub size: Vec<u32>,
    /// The packet is an ACK or feedback.
    pub ack: Vec<bool>,
    /// Packets and bytes waiting after the event (not counting the one in transmission).
    pub queue_packets: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    /// Seconds the packet waits from its arrival to its transmission (NaN: dropped).
    pub wait: Vec<f64>,
}

impl LinkTable {
    fn push(&mut self, time: SimTime, link: u32, event: LinkEvent, o: &Offered, queue: (u64, u64)) {
        self.time.push(time.as_secs_f64());
        self.link.push(link);
        self.event.push(event as u8);
        self.flow.push(o.flow);
        self.seq.push(o.seq);
        self.size.push(o.size);
        self.ack.push(o.ack);
        self.queue_packets.push(queue.0);
        self.queue_bytes.push(queue.1);
        self.wait.push(if o.fate == Fate::Dropped { f64::NAN } else { (o.start - o.time).as_secs_f64() });
    }

    /// Add link `link`'s rows: its packets offered (in order of arrival) and the
    /// departures of those that waited, up to the end of the run (a departure at
    /// the same instant as an arrival comes first, as the link counts it).
    pub fn add_link(&mut self, link: u32, offered: &[Offered], end: SimTime) {
        let mut waiting: VecDeque<&Offered> = VecDeque::new();
        let (mut packets, mut bytes) = (0u64, 0u64);
        let depart = |t: &mut Self, until: SimTime, inclusive: bool, waiting: &mut VecDeque<&Offered>, q: &mut (u64, u64)| {
            while let Some(w) = waiting.front().filter(|w| w.start < until || (inclusive && w.start == until)) {
                q.0 -= 1;
                q.1 -= w.size as u64;
                t.push(w.start, link, LinkEvent::Dequeue, w, *q);
                waiting.pop_front();
            }
        };
        for o in offered {
            let mut q = (packets, bytes);
            depart(self, o.time, true, &mut waiting, &mut q);
            let event = match o.fate {
                Fate::Queued => LinkEvent::Enqueue,
                Fate::Marked => LinkEvent::Mark,
                Fate::Dropped => LinkEvent::Drop,
            };
            let waits = o.fate != Fate::Dropped && o.start > o.time;
            debug_assert_eq!((q.0 + waits as u64, q.1 + if waits { o.size as u64 } else { 0 }), (o.queue_packets, o.queue_bytes));
            (packets, bytes) = (o.queue_packets, o.queue_bytes);
            self.push(o.time, link, event, o, (packets, bytes));
            if waits {
                waiting.push_back(o);
            }
        }
        let mut q = (packets, bytes);
        depart(self, end, false, &mut waiting, &mut q);
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The event names, in code order.
    pub fn event_names() -> Vec<String> {
        LINK_EVENTS.iter().map(|s| s.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(time: u64, start: u64, fate: Fate, queue: (u64, u64)) -> Offered {
        Offered { time: SimTime(time), start: SimTime(start), seq: time, queue_packets: queue.0, queue_bytes: queue.1, flow: 7, size: 100, fate, ack: false }
    }

    #[test]
    fn departures_are_merged_before_arrivals_at_the_same_instant() {
        // 100-byte packets taking 10 ns: three at 0 (the first sent at once, two
        // waiting until 10 and 20), one dropped at 5, one at 20 (the second
        // waiting leaves at 20 first, so it finds one waiting).
        let rows = [
            offered(0, 0, Fate::Queued, (0, 0)),
            offered(0, 10, Fate::Queued, (1, 100)),
            offered(0, 20, Fate::Marked, (2, 200)),
            offered(5, 0, Fate::Dropped, (2, 200)),
            offered(20, 30, Fate::Queued, (1, 100)),
        ];
        let mut t = LinkTable::default();
        t.add_link(3, &rows, SimTime(25));
        let got: Vec<(f64, &str, u64)> = (0..t.len()).map(|i| (t.time[i] * 1e9, LINK_EVENTS[t.event[i] as usize], t.queue_packets[i])).collect();
        let want = vec![
            (0.0, "enqueue", 0),
            (0.0, "enqueue", 1),
            (0.0, "mark", 2),
            (5.0, "drop", 2),
            (10.0, "dequeue", 1),
            (20.0, "dequeue", 0),
            (20.0, "enqueue", 1),
        ];
        let got: Vec<(i64, &str, u64)> = got.into_iter().map(|(t, e, q)| (t.round() as i64, e, q)).collect();
        let want: Vec<(i64, &str, u64)> = want.into_iter().map(|(t, e, q)| (t as i64, e, q)).collect();
        assert_eq!(got, want);
        // The last packet would leave at 30, after the end (25): still queued.
        assert!(t.wait[3].is_nan());
        assert_eq!(t.wait[2] * 1e9, 20.0);
        assert!(t.link.iter().all(|&l| l == 3));
    }
}
