//! The event queue: a binary min-heap keyed by (time, stamp). A stamp is taken
//! from one counter whenever something is scheduled, so events at equal times run
//! in the order they were scheduled and every run is deterministic.
//!
//! Stamps can be taken ahead of scheduling: a link stamps each packet when it
//! admits it and schedules only the packet at the head of its wire, with that
//! packet's own stamp, so packets keep the order they would have had with one
//! entry each. Entries are (u128 key, event): 32 bytes for the engine's events.
use super::timer::{Firing, Timer};
use super::SimTime;

/// The order of an event among events at the same time (earlier stamp first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

#[derive(Clone, Copy)]
struct Entry<E> {
    /// time in the high 64 bits, stamp in the low 64: one comparison orders both.
    key: u128,
    event: E,
}

/// A binary min-heap of entries.
struct Heap<E> {
    v: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    #[inline]
    fn push(&mut self, entry: Entry<E>) {
        self.v.push(entry);
        let v = &mut self.v[..];
        let mut i = v.len() - 1;
        // Sift up with a hole: move parents down until the entry's place is found.
        while i > 0 {
            let parent = (i - 1) / 2;
            if v[parent].key <= entry.key {
                break;
            }
            v[i] = v[parent];
            i = parent;
        }
        v[i] = entry;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        // The last entry fills the root's place and sinks to its own.
        self.replace_top(last);
        Some(top)
    }

    /// Replace the root by `entry` and restore the order by sifting it down with a
    /// hole: one sift instead of a removal and an insertion.
    #[inline]
    fn replace_top(&mut self, entry: Entry<E>) {
        let v = &mut self.v[..];
        let n = v.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            // The smaller child, the left one on a tie, chosen without a branch: with
            // timers of many flows the comparison is a coin flip a predictor misses half
            // the time.
            let c = if r < n { l + (v[r].key < v[l].key) as usize } else { l };
            if entry.key <= v[c].key {
                break;
            }
            v[i] = v[c];
            i = c;
        }
        v[i] = entry;
    }

    #[inline]
    fn peek_key(&self) -> u128 {
        self.v.first().map_or(u128::MAX, |e| e.key)
    }
}

/// A deterministic priority queue of events.
///
/// Timer entries (from [`EventQueue::arm`]) and other events (packets on links,
/// from [`EventQueue::push`]) are kept in two heaps, ordered together by
/// (time, stamp): packets come and go millions of times a second while timers
/// mostly wait, so packet events move through a heap of a few entries (one per
/// busy link) rather than one holding a timer of every connection.
pub struct EventQueue<E> {
    events: Heap<E>,
    timers: Heap<E>,
    next_stamp: u64,
    /// Which heap the last `peek_until` found the earliest event in.
    top_is_timer: bool,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn key(time: SimTime, stamp: Stamp) -> u128 {
    ((time.0 as u128) << 64) | stamp.0 as u128
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { events: Heap { v: Vec::with_capacity(64) }, timers: Heap { v: Vec::with_capacity(256) }, next_stamp: 0, top_is_timer: false }
    }

    /// A new stamp, later than every stamp taken before.
    #[inline]
    pub fn stamp(&mut self) -> Stamp {
        self.next_stamp += 1;
        Stamp(self.next_stamp)
    }

    /// Schedule `event` at `time`, after everything already scheduled for that time.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let s = self.stamp();
        self.push_stamped(time, s, event);
    }

    /// Schedule `event` at `time` with a stamp taken earlier.
    #[inline]
    pub fn push_stamped(&mut self, time: SimTime, stamp: Stamp, event: E) {
        self.events.push(Entry { key: key(time, stamp), event });
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let next = self.peek_until(SimTime::MAX);
        if next.is_some() {
            self.take();
        }
        next
    }

    /// The earliest event if it is due at or before `end`, left in the queue: the
    /// caller then [takes](EventQueue::take) it out, or
    /// [reschedules](EventQueue::reschedule) it, before scheduling anything else.
    #[inline]
    pub fn peek_until(&mut self, end: SimTime) -> Option<(SimTime, E)> {
        let (t, e) = (self.timers.peek_key(), self.events.peek_key());
        self.top_is_timer = t < e;
        let first = t.min(e);
        if first == u128::MAX || (first >> 64) as u64 > end.0 {
            return None;
        }
        let top = if self.top_is_timer { self.timers.v[0] } else { self.events.v[0] };
        Some((SimTime((first >> 64) as u64), top.event))
    }

    /// Remove the event `peek_until` returned.
    #[inline]
    pub fn take(&mut self) {
        if self.top_is_timer {
            self.timers.pop();
        } else {
            self.events.pop();
        }
    }

    /// Schedule the (non-timer) event `peek_until` returned again, at `time` with a
    /// stamp taken earlier (a link's next packet): one sift instead of two.
    #[inline]
    pub fn reschedule(&mut self, time: SimTime, stamp: Stamp) {
        debug_assert!(!self.top_is_timer, "timers are re-armed, not rescheduled");
        let event = self.events.v[0].event;
        self.events.replace_top(Entry { key: key(time, stamp), event });
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let k = self.timers.peek_key().min(self.events.peek_key());
        (k != u128::MAX).then_some(SimTime((k >> 64) as u64))
    }

    /// Entries in the queue.
    pub fn len(&self) -> usize {
        self.events.v.len() + self.timers.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Make sure the queue holds an entry `event` for `timer` at or before its deadline.
    #[inline]
    pub fn arm(&mut self, timer: &mut Timer, event: E) {
        if let Some(t) = timer.needs_entry() {
            let s = self.stamp();
            self.timers.push(Entry { key: key(t, s), event });
        }
    }

    /// An entry of `timer` popped at `now`: whether its deadline has come. After a
    /// `Due` or `Early` firing the owner re-arms the timer (with `arm`).
    #[inline]
    pub fn fire(&mut self, timer: &mut Timer, now: SimTime) -> Firing {
        timer.popped(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_stamp_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        let early = q.stamp();
        q.push(SimTime(5), 'c');
        q.push(SimTime(1), 'd');
        // Scheduled last, but with a stamp taken before 'c' and 'd'.
        q.push_stamped(SimTime(5), early, 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'e', 'c']);
    }

    #[test]
    fn heap_order_matches_a_sort() {
        // Pseudo-random times with many ties: the pops equal a stable sort by time.
        let mut q = EventQueue::new();
        let mut x: u64 = 12345;
        let mut pushed = Vec::new();
        for i in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = SimTime((x >> 33) % 200);
            q.push(t, i);
            pushed.push((t, i));
            if i % 7 == 0 {
                let got = q.pop().unwrap();
                let k = pushed.iter().enumerate().min_by_key(|(_, e)| **e).unwrap().0;
                assert_eq!(got, pushed.remove(k));
            }
        }
        pushed.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, pushed);
    }

    #[test]
    fn rescheduling_the_top_keeps_the_order() {
        // A link's event rescheduled for its next packet, among other events.
        let mut q = EventQueue::new();
        let mut stamps = Vec::new();
        for t in [10, 30, 50] {
            let s = q.stamp();
            stamps.push(s);
            q.push_stamped(SimTime(t), s, t as u32);
        }
        let mut timer = Timer::default();
        timer.set(SimTime(20));
        q.arm(&mut timer, 99);
        let mut order = Vec::new();
        let mut moved = false;
        while let Some((t, e)) = q.peek_until(SimTime(100)) {
            order.push((t.0, e));
            if e == 10 && !moved {
                moved = true;
                q.reschedule(SimTime(40), stamps[0]);
            } else {
                q.take();
            }
        }
        assert_eq!(order, vec![(10, 10), (20, 99), (30, 30), (40, 10), (50, 50)]);
        assert!(q.is_empty());
    }

    #[test]
    fn timers_keep_one_live_entry() {
        let mut q: EventQueue<u8> = EventQueue::new();
        let mut t = Timer::default();
        t.set(SimTime(100));
        q.arm(&mut t, 1);
        // Moving the deadline later adds nothing; the entry at 100 fires early and re-arms.
        t.set(SimTime(300));
        q.arm(&mut t, 1);
        assert_eq!(q.len(), 1);
        let (now, _) = q.pop().unwrap();
        assert_eq!((now, q.fire(&mut t, now)), (SimTime(100), Firing::Early));
        q.arm(&mut t, 1);
        // Moving it earlier adds an entry; the later one is then stale.
        t.set(SimTime(200));
        q.arm(&mut t, 1);
        assert_eq!(q.len(), 2);
        let (now, _) = q.pop().unwrap();
        assert_eq!((now, q.fire(&mut t, now)), (SimTime(200), Firing::Due));
        t.stop();
        let (now, _) = q.pop().unwrap();
        assert_eq!((now, q.fire(&mut t, now)), (SimTime(300), Firing::Stale));
        assert!(q.is_empty());
    }
}
