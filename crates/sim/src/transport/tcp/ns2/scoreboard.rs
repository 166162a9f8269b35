//! Sack1's scoreboard: ns-2.35's `ScoreBoardRQ` (scoreboard-rq.cc, a shim over the
//! reassembly queue of rq.cc), which `Sack1TcpAgent` uses. It keeps the SACKed
//! ranges above the cumulative ACK and `h_seqno_`, the point below which this
//! recovery retransmits nothing again: a hole is resent once, and a resent
//! segment lost again waits for the timeout.
use crate::transport::tcp::ranges::SegmentSet;

/// The SACKed ranges and the next retransmission candidate.
#[derive(Clone, Debug, Default)]
pub struct HoleBoard {
    sacked: SegmentSet,
    /// `h_seqno_`, in bytes (0: none, ns-2's -1).
    next: u64,
}

impl HoleBoard {
    /// `UpdateScoreBoard(last_ack_, tcph)`: forget the ranges below the cumulative
    /// ACK `snd_una`, add the ACK's blocks. Returns whether the SACKed data grew
    /// (`CheckUpdate()`: the ACK brought new SACK information).
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> bool {
        self.sacked.discard_below(snd_una);
        let mut grew = false;
        for &(s, e) in blocks {
            self.sacked.insert_reporting(s.max(snd_una), e, |_, _| grew = true);
        }
        grew
    }

    /// `ClearScoreBoard()`: after an ACK of new data outside recovery, at the end
    /// of a recovery and at a timeout (RFC 2018 §8's turning off of the SACKed bits).
    pub fn clear(&mut self) {
        *self = HoleBoard::default();
    }

    /// `MarkRetran(seqno)`: the segment at `seq`, ending at `end`, was resent.
    pub fn mark_retransmitted(&mut self, seq: u64, end: u64) {
        if seq >= self.next {
            self.next = end;
        }
    }

    /// `GetNextRetran()`: the first byte at or after max(`h_seqno_`, snd_una) that
    /// is not SACKed and has a SACKed range above it (`nexthole()` with a count of
    /// blocks above greater than 0), or None.
    pub fn next_hole(&mut self, snd_una: u64) -> Option<u64> {
        let hole = self.sacked.hole_below_a_range(self.next.max(snd_una))?;
        self.next = self.next.max(hole);
        Some(hole)
    }

    /// Whether anything is SACKed.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn holes_below_the_highest_sack_each_once() {
        let mut b = HoleBoard::default();
        // Segments 0..10 sent; 1, 2 and 5 lost: the receiver SACKs 3-4 and 6-9.
        assert!(b.update(0, &[(3 * MSS, 5 * MSS), (6 * MSS, 10 * MSS)]));
        assert!(!b.update(0, &[(6 * MSS, 10 * MSS)])); // nothing new
        // Segment 0 is not SACKed either and lies below a SACKed range: a hole too
        // (ns-2 needs no DupThresh segments above it, only one SACK block).
        let mut order = Vec::new();
        while let Some(h) = b.next_hole(0) {
            order.push(h / MSS);
            b.mark_retransmitted(h, h + MSS);
        }
        assert_eq!(order, vec![0, 1, 2, 5]);
        // Nothing above the highest SACKed range counts as a hole.
        assert_eq!(b.next_hole(0), None);
        // A partial ACK to 3: the holes already resent are not resent again.
        b.update(3 * MSS, &[(6 * MSS, 10 * MSS)]);
        assert_eq!(b.next_hole(3 * MSS), None);
        // After clear (a timeout), the hole at 5 is a candidate again once SACKs return.
        b.clear();
        assert!(b.is_empty());
        b.update(5 * MSS, &[(6 * MSS, 10 * MSS)]);
        assert_eq!(b.next_hole(5 * MSS), Some(5 * MSS));
    }
}
