//! Sets of byte ranges: the receiver's out-of-order data, the sender's SACKed data.
use std::collections::VecDeque;

/// Byte ranges, e.g. the receiver's out-of-order data: disjoint byte ranges [start, end),
/// sorted, with gaps between them (touching ranges are merged). Segments mostly
/// arrive in order behind a hole, so an arrival usually extends the last range
/// and a repair takes ranges off the front: both O(1).
#[derive(Clone, Debug, Default)]
pub struct SegmentSet {
    ranges: VecDeque<(u64, u64)>,
}

impl SegmentSet {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Add the bytes [s, e); returns the range of the set that now contains them.
    pub fn insert(&mut self, s: u64, e: u64) -> (u64, u64) {
        if let Some(last) = self.ranges.back_mut() {
            if s >= last.0 {
                if s <= last.1 {
                    last.1 = last.1.max(e);
                    return *last;
                }
                self.ranges.push_back((s, e));
                return (s, e);
            }
        } else {
            self.ranges.push_back((s, e));
            return (s, e);
        }
        // Somewhere before the last range: merge with the ranges it touches.
        let mut i = self.ranges.partition_point(|r| r.0 < s);
        let (mut s, mut e) = (s, e);
        if i > 0 && self.ranges[i - 1].1 >= s {
            i -= 1;
            s = self.ranges[i].0;
            e = e.max(self.ranges[i].1);
            self.ranges.remove(i);
        }
        while i < self.ranges.len() && self.ranges[i].0 <= e {
            e = e.max(self.ranges[i].1);
            self.ranges.remove(i);
        }
        self.ranges.insert(i, (s, e));
        (s, e)
    }

    /// Add the bytes [s, e), calling `new(a, b)` for each part [a, b) that was not
    /// in the set before, in order.
    pub fn insert_reporting(&mut self, s: u64, e: u64, mut new: impl FnMut(u64, u64)) {
        if s >= e {
            return;
        }
        let mut at = s;
        let first = self.ranges.partition_point(|r| r.1 < s);
        for &(a, b) in self.ranges.iter().skip(first) {
            if a >= e {
                break;
            }
            if a > at {
                new(at, a);
            }
            at = at.max(b);
        }
        if at < e {
            new(at, e);
        }
        self.insert(s, e);
    }

    /// Remove every byte below `x`.
    pub fn discard_below(&mut self, x: u64) {
        while let Some(front) = self.ranges.front_mut() {
            if front.1 <= x {
                self.ranges.pop_front();
            } else {
                front.0 = front.0.max(x);
                break;
            }
        }
    }

    /// The first byte at or after `x` that is not in the set and lies below one
    /// of its ranges (ns-2's `ReassemblyQueue::nexthole` with blocks above it), or None.
    pub fn hole_below_a_range(&self, x: u64) -> Option<u64> {
        let mut ranges = self.ranges.iter().skip_while(|r| r.1 < x);
        let &(s, e) = ranges.next()?;
        if s > x {
            return Some(x);
        }
        // x lies in [s, e]: the hole is at e, if a range lies above it.
        ranges.next().map(|_| e)
    }

    /// The end of the highest range (None: empty).
    pub fn max_end(&self) -> Option<u64> {
        self.ranges.back().map(|r| r.1)
    }

    /// The cumulative point `next` advanced over the ranges it reaches, which are removed.
    pub fn advance(&mut self, mut next: u64) -> u64 {
        while let Some(&(s, e)) = self.ranges.front() {
            if s > next {
                break;
            }
            next = next.max(e);
            self.ranges.pop_front();
        }
        next
    }

    #[cfg(test)]
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::SegmentSet;

    #[test]
    fn segment_set_merges_and_advances() {
        let mut s = SegmentSet::default();
        s.insert(10, 20);
        s.insert(20, 30); // touching: merged
        s.insert(40, 50);
        s.insert(45, 60); // overlapping the last
        assert_eq!(s.ranges(), vec![(10, 30), (40, 60)]);
        s.insert(0, 5); // before everything
        s.insert(32, 35); // in a gap
        assert_eq!(s.ranges(), vec![(0, 5), (10, 30), (32, 35), (40, 60)]);
        s.insert(4, 41); // swallows three ranges and touches the fourth
        assert_eq!(s.ranges(), vec![(0, 60)]);
        assert_eq!(s.advance(0), 60);
        assert!(s.is_empty());
        s.insert(100, 110);
        s.insert(120, 130);
        assert_eq!(s.advance(90), 90);
        assert_eq!(s.advance(100), 110);
        assert_eq!(s.ranges(), vec![(120, 130)]);
    }

    #[test]
    fn insertion_reports_only_new_bytes_and_the_containing_range() {
        let mut s = SegmentSet::default();
        assert_eq!(s.insert(10, 20), (10, 20));
        assert_eq!(s.insert(30, 40), (30, 40));
        assert_eq!(s.insert(20, 25), (10, 25)); // touching: merged
        let mut new = Vec::new();
        s.insert_reporting(0, 50, |a, b| new.push((a, b)));
        assert_eq!(new, vec![(0, 10), (25, 30), (40, 50)]);
        assert_eq!(s.ranges(), vec![(0, 50)]);
        new.clear();
        s.insert_reporting(5, 45, |a, b| new.push((a, b)));
        assert!(new.is_empty());
        s.insert(60, 70);
        s.discard_below(65);
        assert_eq!(s.ranges(), vec![(65, 70)]);
        assert_eq!(s.max_end(), Some(70));
        // Holes below a range: 50..60 and 70.. have no range above; 40 and 60 are
        // the ends of ranges with one above.
        let mut h = SegmentSet::default();
        h.insert(10, 20);
        h.insert(40, 50);
        assert_eq!((h.hole_below_a_range(0), h.hole_below_a_range(15), h.hole_below_a_range(20)), (Some(0), Some(20), Some(20)));
        assert_eq!((h.hole_below_a_range(25), h.hole_below_a_range(40), h.hole_below_a_range(50)), (Some(25), None, None));
    }
}
