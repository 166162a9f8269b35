//! SACK blocks (RFC 2018): the receiver's list of out-of-order ranges in the order
//! it must report them, and the log through which an ACK's blocks reach the
//! sender. Both endpoints of a connection live in one `Tcp` value, so an ACK
//! carries only the number of its record in the log (`transport::records`); the
//! sender reads the record when the ACK arrives (ACKs of a connection arrive in
//! order, and a record whose ACK was lost is dropped when a later one is read).
use super::rules::SackOptionSize;
use crate::transport::records::RecordLog;

/// The most blocks an ACK carries (40 bytes of TCP options).
pub const MAX_BLOCKS: usize = 4;

/// The blocks one ACK carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackRecord {
    pub blocks: [(u64, u64); MAX_BLOCKS],
    pub len: u8,
}

impl SackRecord {
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }

    /// Bytes of the SACK option on the wire: kind, length and 8 per block, padded to
    /// a multiple of 4 (RFC 2018 §3); as ns-2 counts them, 8 per block.
    pub fn option_bytes(&self, size: SackOptionSize) -> u32 {
        match size {
            _ if self.len == 0 => 0,
            SackOptionSize::Rfc2018 => (2 + 8 * self.len as u32).div_ceil(4) * 4,
            SackOptionSize::Ns2 => 8 * self.len as u32,
        }
    }
}

/// The receiver's out-of-order ranges, most recently changed first (RFC 2018 §4:
/// the first block holds the segment that triggered the ACK, the others repeat
/// the most recently reported blocks).
#[derive(Clone, Debug, Default)]
pub struct SackBlocks {
    recent: Vec<(u64, u64)>,
}

impl SackBlocks {
    /// An arrival changed the out-of-order range to `range` (merged with whatever it
    /// touched): it becomes the first block, replacing the blocks it covers.
    pub fn touch(&mut self, range: (u64, u64)) {
        self.recent.retain(|&(s, e)| e < range.0 || s > range.1);
        self.recent.insert(0, range);
    }

    /// Forget all but the `n` most recent blocks (ns-2's `SackStack` holds
    /// `maxSackBlocks_` of them, tcp-sink.cc:483-520, 605-758).
    pub fn keep(&mut self, n: usize) {
        self.recent.truncate(n);
    }

    /// The cumulative ACK point moved to `rcv_nxt`: blocks below it are gone.
    pub fn discard_below(&mut self, rcv_nxt: u64) {
        self.recent.retain(|&(_, e)| e > rcv_nxt);
    }

    /// The first `max` blocks.
    pub fn record(&self, max: usize) -> SackRecord {
        let mut r = SackRecord::default();
        for (slot, &b) in r.blocks.iter_mut().zip(self.recent.iter().take(max.min(MAX_BLOCKS))) {
            *slot = b;
            r.len += 1;
        }
        r
    }

    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }
}

/// The records of ACKs sent and not yet read by the sender.
pub type SackLog = RecordLog<SackRecord>;

/// The SACK option of one connection: the receiver's blocks and the log that
/// carries each ACK's blocks to the sender (whichever recovery reads them).
#[derive(Clone, Debug, Default)]
pub struct SackOption {
    /// Receiver: the out-of-order ranges in reporting order.
    pub blocks: SackBlocks,
    /// The blocks of ACKs in transit.
    pub log: SackLog,
}

impl SackOption {
    /// The receiver sends an ACK: log its blocks (at most `max`). Returns the
    /// record's number and the option's bytes, or None without blocks.
    pub fn record(&mut self, max: usize, size: SackOptionSize) -> Option<(u32, u32)> {
        if self.blocks.is_empty() {
            return None;
        }
        let r = self.blocks.record(max);
        Some((self.log.push(r), r.option_bytes(size)))
    }

    /// An arrival changed the out-of-order range to `range` (`SackBlocks::touch`);
    /// as ns-2's `Sacker` does, remember at most `memory` blocks.
    pub fn touch(&mut self, range: (u64, u64), memory: Option<usize>) {
        self.blocks.touch(range);
        if let Some(n) = memory {
            self.blocks.keep(n);
        }
    }

    /// The blocks of the ACK that carries record `id` (0: none).
    pub fn take(&mut self, id: u32) -> Option<SackRecord> {
        if id == 0 {
            None
        } else {
            self.log.take(id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_reported_most_recent_first() {
        let mut b = SackBlocks::default();
        b.touch((10, 20));
        b.touch((30, 40));
        b.touch((50, 60));
        assert_eq!(b.record(4).blocks(), &[(50, 60), (30, 40), (10, 20)]);
        // A segment extends the oldest block: it moves to the front.
        b.touch((10, 25));
        assert_eq!(b.record(4).blocks(), &[(10, 25), (50, 60), (30, 40)]);
        // A hole between two blocks fills: the merged block replaces both.
        b.touch((25, 40));
        b.touch((10, 40));
        assert_eq!(b.record(4).blocks(), &[(10, 40), (50, 60)]);
        assert_eq!(b.record(1).blocks(), &[(10, 40)]);
        b.discard_below(45);
        assert_eq!(b.record(4).blocks(), &[(50, 60)]);
        let rfc = SackOptionSize::Rfc2018;
        assert_eq!((b.record(4).option_bytes(rfc), SackRecord::default().option_bytes(rfc)), (12, 0));
        assert_eq!(b.record(4).option_bytes(SackOptionSize::Ns2), 8);
        b.touch((70, 80));
        b.touch((90, 95));
        b.touch((100, 110));
        assert_eq!(b.record(4).option_bytes(rfc), 36);
        assert_eq!(b.record(3).option_bytes(SackOptionSize::Ns2), 24);
    }

    #[test]
    fn the_log_skips_records_of_lost_acks() {
        let mut log = SackLog::default();
        let r = |s| SackRecord { blocks: [(s, s + 1), (0, 0), (0, 0), (0, 0)], len: 1 };
        let (a, b, c) = (log.push(r(1)), log.push(r(2)), log.push(r(3)));
        assert_eq!(log.take(a).unwrap().blocks(), &[(1, 2)]);
        // The ACK carrying b was lost: c's record is still found, b's is dropped.
        assert_eq!(log.take(c).unwrap().blocks(), &[(3, 4)]);
        assert_eq!(log.take(b), None);
    }
}
