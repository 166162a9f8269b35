//! The receiving side of a connection: in-order delivery, the out-of-order
//! segments, and when to acknowledge (RFC 5681 §4.2, RFC 7323 echo rules,
//! RFC 3168 ECN-Echo).
use super::{Output, TcpParams, Tcp};
use crate::engine::SimTime;
use crate::net::packet::{ACK, CE, CWR, ECE, RETX, SYN};
use crate::net::Packet;
use std::collections::VecDeque;

/// Out-of-order data held by the receiver: disjoint byte ranges [start, end),
/// sorted, with gaps between them (touching ranges are merged). Segments mostly
/// arrive in order behind a hole, so an arrival usually extends the last range
/// and a repair takes ranges off the front: both O(1).
#[derive(Clone, Debug, Default)]
pub(super) struct SegmentSet {
    ranges: VecDeque<(u64, u64)>,
}

impl SegmentSet {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Add the bytes [s, e).
    pub fn insert(&mut self, s: u64, e: u64) {
        if let Some(last) = self.ranges.back_mut() {
            if s >= last.0 {
                if s <= last.1 {
                    last.1 = last.1.max(e);
                } else {
                    self.ranges.push_back((s, e));
                }
                return;
            }
        } else {
            self.ranges.push_back((s, e));
            return;
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

impl Tcp {
    fn send_ack(&mut self, p: &TcpParams, out: &mut Output) {
        let mut flags = ACK | if self.echo_retx { RETX } else { 0 };
        if self.ece_pending {
            flags |= ECE;
        }
        let mut ack = self.control(self.ep.ack_route, self.rcv_nxt, self.echo_ts, flags, p);
        ack.owd = self.last_owd;
        out.push(ack);
        self.unacked = 0;
        self.echo_pending = false;
        self.delack_timer.stop();
    }

    /// A SYN reaches the receiver: answer with a SYN-ACK (header only, on the ACK
    /// route) echoing its send time and retransmission flag, as ACKs echo a
    /// segment's. Every copy of a resent SYN is answered.
    pub fn on_syn(&mut self, pkt: &Packet, p: &TcpParams, out: &mut Output) {
        out.push(self.control(self.ep.ack_route, 0, pkt.ts, SYN | ACK | (pkt.flags & RETX), p));
    }

    /// A data segment reaches the receiver; returns the bytes newly delivered in order.
    pub fn on_data(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) -> u64 {
        let (s, e) = (pkt.seq, pkt.seq + pkt.len as u64);
        let before = self.rcv_nxt;
        let mut immediate = !p.delayed_ack;
        self.last_owd = now - pkt.ts;
        // RFC 3168 §6.1.3: echo CE on every ACK until a segment with CWR arrives.
        if pkt.flags & CWR != 0 {
            self.ece_pending = false;
        }
        if pkt.flags & CE != 0 {
            self.ece_pending = true;
            immediate = true;
        }
        if s <= before && !self.echo_pending {
            // Echo the send time of the earliest unacknowledged in-order segment (RFC 7323 §4.3).
            self.echo_ts = pkt.ts;
            self.echo_retx = pkt.flags & RETX != 0;
            self.echo_pending = true;
        }
        if e <= before {
            immediate = true; // duplicate: acknowledge at once (RFC 5681 §4.2)
        } else if s <= before {
            self.rcv_nxt = e;
            if !self.ooo.is_empty() {
                immediate = true; // fills (part of) a hole
                self.rcv_nxt = self.ooo.advance(self.rcv_nxt);
            }
            self.unacked += 1;
        } else {
            immediate = true; // out of order: duplicate ACK at once
            self.ooo.insert(s, e);
        }
        if immediate || self.unacked >= 2 || self.receiver_done() {
            self.send_ack(p, out);
        } else if !self.delack_timer.is_set() {
            self.delack_timer.set(now + p.delayed_ack_timeout);
        }
        self.rcv_nxt - before
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, p: &TcpParams, out: &mut Output) {
        self.delack_timer.stop();
        if self.unacked > 0 {
            self.send_ack(p, out);
        }
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
}
