//! Records one endpoint of a connection hands to the other through its packets.
//! Both endpoints of a connection live in one value (a TCP connection, a rate
//! flow), so a packet carries only the number of its record in a log inside the
//! connection (in `Packet::sack`), not the record itself, and packets stay 48
//! bytes: a TCP ACK's SACK blocks, a rate receiver's feedback report. The other
//! end reads the record when the packet arrives. A connection's packets on one
//! route arrive in order, so a record whose packet was lost is dropped when a
//! later one is read.
use std::collections::VecDeque;

/// The records of packets sent and not yet read by the other end.
#[derive(Clone, Debug)]
pub struct RecordLog<T> {
    records: VecDeque<(u32, T)>,
    next_id: u32,
}

impl<T> Default for RecordLog<T> {
    fn default() -> Self {
        RecordLog { records: VecDeque::new(), next_id: 0 }
    }
}

impl<T: Copy> RecordLog<T> {
    /// Keep a record; returns its number (never 0: a packet's 0 means none).
    pub fn push(&mut self, r: T) -> u32 {
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.records.push_back((self.next_id, r));
        self.next_id
    }

    /// The record `id` of a packet still on its way, left in the log (a trace
    /// reads an ACK's SACK blocks as the ACK crosses a link).
    pub fn peek(&self, id: u32) -> Option<&T> {
        self.records.iter().find(|r| r.0 == id).map(|r| &r.1)
    }

    /// The record `id` a packet carried (records before it belonged to lost packets).
    pub fn take(&mut self, id: u32) -> Option<T> {
        while let Some(&(k, r)) = self.records.front() {
            self.records.pop_front();
            if k == id {
                return Some(r);
            }
        }
        None
    }
}
