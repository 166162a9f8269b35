//! The sender's SACK scoreboard (RFC 6675 §§2-4): for every segment sent and not
//! yet cumulatively acknowledged, whether the receiver holds it (SACKed), whether
//! it is deemed lost (IsLost), and whether it was retransmitted; from these, the
//! estimate of data in the network (pipe) and the next segment to retransmit
//! (NextSeg rules 1, 3 and 4).
//!
//! Segments have fixed boundaries (segment k covers [k·MSS, (k+1)·MSS), the last
//! one shorter), so a flag byte per segment suffices. Every update is amortized
//! O(1) per segment: SACK blocks are merged into a set of SACKed ranges that
//! reports only the newly SACKed bytes; a segment is lost when DupThresh segments
//! above it are SACKed (IsLost, RFC 6675 §4), so the loss boundary is the
//! DupThresh-th highest SACKed segment, kept in a small sorted array, and it
//! only moves up; pipe is kept as counters, as Linux's `tcp_packets_in_flight`
//! and ns-3's `TcpTxBuffer::BytesInFlight` do.
use super::ranges::SegmentSet;
use std::collections::VecDeque;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;

/// Per-segment state of the data outstanding.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    mss: u64,
    /// Flow size: the last segment may be shorter than MSS.
    size: u64,
    dupthresh: usize,
    /// Index of the segment `flags[0]` describes (snd_una / MSS).
    first: u64,
    flags: VecDeque<u8>,
    /// SACKed byte ranges at or above snd_una.
    sacked_ranges: SegmentSet,
    /// Bytes SACKed, deemed lost (and not SACKed), retransmitted (and not SACKed).
    sacked: u64,
    lost: u64,
    retrans: u64,
    /// The highest SACKed segments, highest first, at most DupThresh of them.
    top: Vec<u64>,
    /// Segments below this index have been examined for loss.
    loss_scan: u64,
    /// Lowest segment that may still be a candidate for NextSeg rules 1 and 3.
    rxt_scan: u64,
    /// RFC 6675's RescueRxt (None: undefined).
    rescue_rxt: Option<u64>,
    /// Segments ever deemed lost (a count that only grows).
    losses: u64,
}

impl Scoreboard {
    pub fn new(mss: u64, size: u64, dupthresh: u32) -> Self {
        Scoreboard { mss, size, dupthresh: dupthresh as usize, ..Scoreboard::default() }
    }

    #[inline]
    fn seg_len(&self, k: u64) -> u64 {
        self.mss.min(self.size - k * self.mss)
    }

    #[inline]
    fn flag(&self, k: u64) -> u8 {
        self.flags[(k - self.first) as usize]
    }

    #[inline]
    fn flag_mut(&mut self, k: u64) -> &mut u8 {
        &mut self.flags[(k - self.first) as usize]
    }

    /// Index one past the last segment sent.
    #[inline]
    fn end(&self) -> u64 {
        self.first + self.flags.len() as u64
    }

    /// Bytes SACKed above the cumulative ACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    /// Whether any SACK block is held (RFC 6675's "highest octet covered by a SACK").
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked_ranges.max_end()
    }

    /// pipe (RFC 6675 §4, SetPipe): every octet between snd_una and snd_max that is
    /// not SACKed counts once if not deemed lost, and once more if retransmitted.
    #[inline]
    pub fn pipe(&self, snd_una: u64, snd_max: u64) -> u64 {
        (snd_max - snd_una) + self.retrans - self.sacked - self.lost
    }

    /// A segment starting at `seq` was sent; `retransmission` if sent before.
    pub fn on_sent(&mut self, seq: u64, retransmission: bool) {
        let k = seq / self.mss;
        if k == self.end() {
            self.flags.push_back(0);
        }
        if retransmission && k >= self.first {
            let len = self.seg_len(k);
            let f = self.flag_mut(k);
            if *f & (RETRANS | SACKED) == 0 {
                *f |= RETRANS;
                self.retrans += len;
            }
        }
    }

    /// The cumulative ACK moved to `snd_una`: forget the segments below it.
    pub fn on_cumulative_ack(&mut self, snd_una: u64) {
        let k_una = snd_una / self.mss;
        while self.first < k_una {
            let Some(f) = self.flags.pop_front() else { break };
            let len = self.seg_len(self.first);
            if f & SACKED != 0 {
                self.sacked -= len;
            }
            if f & LOST != 0 {
                self.lost -= len;
            }
            if f & RETRANS != 0 {
                self.retrans -= len;
            }
            self.first += 1;
        }
        self.sacked_ranges.discard_below(snd_una);
        self.top.retain(|&k| k >= k_una);
        self.loss_scan = self.loss_scan.max(self.first);
        self.rxt_scan = self.rxt_scan.max(self.first);
    }

    /// The SACK blocks of an ACK (RFC 2018): returns the bytes newly SACKed.
    pub fn on_sack(&mut self, blocks: &[(u64, u64)]) -> u64 {
        let mut newly = Vec::new();
        let lo = self.first * self.mss;
        let hi = self.end().saturating_mul(self.mss).min(self.size);
        for &(s, e) in blocks {
            let (s, e) = (s.max(lo), e.min(hi));
            if s < e {
                self.sacked_ranges.insert_reporting(s, e, |a, b| newly.push((a, b)));
            }
        }
        let mut bytes = 0;
        for (a, b) in newly {
            // Only whole segments are SACKed (a receiver's ranges are whole segments).
            for k in a.div_ceil(self.mss)..(b / self.mss + u64::from(b == self.size)).min(self.end()) {
                if k * self.mss < a || (k * self.mss + self.seg_len(k)) > b {
                    continue;
                }
                bytes += self.mark_sacked(k);
            }
        }
        self.update_losses();
        bytes
    }

    fn mark_sacked(&mut self, k: u64) -> u64 {
        let len = self.seg_len(k);
        let f = self.flag(k);
        if f & SACKED != 0 {
            return 0;
        }
        // A SACKed octet is neither lost nor in the network (RFC 6675 §4).
        if f & LOST != 0 {
            self.lost -= len;
        }
        if f & RETRANS != 0 {
            self.retrans -= len;
        }
        *self.flag_mut(k) = SACKED;
        self.sacked += len;
        // Keep the DupThresh highest SACKed segments.
        let pos = self.top.partition_point(|&t| t > k);
        if pos < self.dupthresh {
            self.top.insert(pos, k);
            self.top.truncate(self.dupthresh);
        }
        len
    }

    /// IsLost (RFC 6675 §4): a segment is lost once DupThresh segments above it are
    /// SACKed; mark every un-SACKed segment below the DupThresh-th highest SACKed one.
    fn update_losses(&mut self) {
        if self.top.len() < self.dupthresh {
            return;
        }
        let boundary = *self.top.last().expect("dupthresh >= 1");
        while self.loss_scan < boundary {
            let k = self.loss_scan;
            self.mark_lost(k);
            self.loss_scan += 1;
        }
    }

    fn mark_lost(&mut self, k: u64) {
        let len = self.seg_len(k);
        let f = self.flag_mut(k);
        if *f & (SACKED | LOST) == 0 {
            *f |= LOST;
            self.lost += len;
            self.losses += 1;
        }
    }

    /// How many segments have ever been deemed lost: an ACK that raises it reveals
    /// a further loss (RFC 9937's test of a safe ACK).
    pub fn losses(&self) -> u64 {
        self.losses
    }

    /// Whether the segment at `seq` is deemed lost.
    pub fn is_lost(&self, seq: u64) -> bool {
        let k = seq / self.mss;
        k >= self.first && k < self.end() && self.flag(k) & LOST != 0
    }

    /// Deem the first outstanding segment lost (entering recovery on DupThresh
    /// duplicate ACKs before enough SACK blocks arrived, as ns-3 and Linux do).
    pub fn mark_head_lost(&mut self) {
        if !self.flags.is_empty() {
            self.mark_lost(self.first);
        }
    }

    /// A retransmission timeout: every segment not SACKed is deemed lost and none
    /// counts as retransmitted (RFC 6675 §5.1). With `clear`, the SACKed bits are
    /// turned off first (RFC 2018 §8: the receiver may have reneged), so every
    /// segment is deemed lost; otherwise the SACK information is kept (as ns-3
    /// and Linux do).
    pub fn on_timeout(&mut self, clear: bool) {
        if clear {
            self.sacked_ranges = SegmentSet::default();
            self.top.clear();
            self.sacked = 0;
        }
        for k in self.first..self.end() {
            let len = self.seg_len(k);
            let was = if clear { self.flag(k) & !SACKED } else { self.flag(k) };
            let mut now = was & !RETRANS;
            if was & RETRANS != 0 {
                self.retrans -= len;
            }
            if was & (SACKED | LOST) == 0 {
                now |= LOST;
                self.lost += len;
                self.losses += 1;
            }
            *self.flag_mut(k) = now;
        }
        self.loss_scan = self.end();
        self.rxt_scan = self.first;
        self.rescue_rxt = None;
    }

    /// A new recovery begins.
    pub fn on_recovery(&mut self) {
        self.rescue_rxt = None;
    }

    /// NextSeg (RFC 6675 §4) rules 1 and 3: the first segment not SACKed and not
    /// yet retransmitted that is deemed lost (rule 1) or, with `rule3` (during
    /// recovery), lies below the highest SACKed octet. Returns its sequence number.
    pub fn next_retransmission(&mut self, rule3: bool) -> Option<u64> {
        // Segments below rxt_scan are SACKed or retransmitted; skip them for good.
        while self.rxt_scan < self.end() && self.flag(self.rxt_scan) & (SACKED | RETRANS) != 0 {
            self.rxt_scan += 1;
        }
        let highest = self.highest_sacked().map_or(0, |h| h.div_ceil(self.mss));
        let mut k = self.rxt_scan;
        let mut rule3_candidate = None;
        while k < self.end() {
            let f = self.flag(k);
            if f & (SACKED | RETRANS) == 0 {
                if f & LOST != 0 {
                    return Some(k * self.mss);
                }
                // Rule 3 (1.a, 1.b): not lost, below the highest SACKed octet.
                if rule3 && k < highest && rule3_candidate.is_none() {
                    rule3_candidate = Some(k * self.mss);
                }
                // Lost segments only lie below the loss boundary: none above here.
                if k >= self.loss_scan {
                    break;
                }
            }
            k += 1;
        }
        rule3_candidate
    }

    /// NextSeg rule 4, the rescue retransmission: once per recovery (until snd_una
    /// passes RescueRxt), the segment holding the highest outstanding octet not
    /// SACKed. `recovery_point` becomes RescueRxt.
    pub fn rescue(&mut self, snd_una: u64, recovery_point: u64) -> Option<u64> {
        if self.rescue_rxt.is_some_and(|r| snd_una <= r) {
            return None;
        }
        let k = (self.first..self.end()).rev().find(|&k| self.flag(k) & SACKED == 0)?;
        self.rescue_rxt = Some(recovery_point);
        Some(k * self.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A scoreboard with segments 0..n sent.
    fn sent(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(MSS, u64::MAX, 3);
        for k in 0..n {
            sb.on_sent(k * MSS, false);
        }
        sb
    }

    #[test]
    fn sacks_mark_losses_below_the_third_highest_sacked_segment() {
        let mut sb = sent(10);
        assert_eq!(sb.pipe(0, 10 * MSS), 10 * MSS);
        // Segments 1 and 2 lost; 3, 4 SACKed: not yet enough for IsLost.
        assert_eq!(sb.on_sack(&[(3 * MSS, 5 * MSS)]), 2 * MSS);
        assert!(!sb.is_lost(MSS) && !sb.is_lost(0));
        // 5 SACKed: three SACKed segments above 0, 1 and 2: all three deemed lost.
        assert_eq!(sb.on_sack(&[(3 * MSS, 6 * MSS)]), MSS);
        assert!(sb.is_lost(0) && sb.is_lost(MSS) && sb.is_lost(2 * MSS));
        // pipe = 10 sent - 3 SACKed - 3 lost.
        assert_eq!(sb.pipe(0, 10 * MSS), 4 * MSS);
        // Rule 1: the lost segments in order; a retransmission counts in pipe again.
        assert_eq!(sb.next_retransmission(false), Some(0));
        sb.on_sent(0, true);
        assert_eq!(sb.pipe(0, 10 * MSS), 5 * MSS);
        assert_eq!(sb.next_retransmission(false), Some(MSS));
        sb.on_sent(MSS, true);
        sb.on_sent(2 * MSS, true);
        assert_eq!(sb.next_retransmission(false), None);
        // Rule 3 would send nothing either: nothing un-SACKed below the highest SACK.
        assert_eq!(sb.next_retransmission(true), None);
        // The cumulative ACK passes segments 0..6: what is left is 6..10, in flight.
        sb.on_cumulative_ack(6 * MSS);
        assert_eq!((sb.sacked_bytes(), sb.pipe(6 * MSS, 10 * MSS)), (0, 4 * MSS));
    }

    #[test]
    fn rule3_and_rescue_when_nothing_is_deemed_lost() {
        let mut sb = sent(6);
        sb.on_sack(&[(2 * MSS, 3 * MSS)]);
        // One SACKed segment: nothing lost, but segments 0 and 1 lie below it.
        assert_eq!(sb.next_retransmission(false), None);
        assert_eq!(sb.next_retransmission(true), Some(0));
        sb.on_sent(0, true);
        assert_eq!(sb.next_retransmission(true), Some(MSS));
        sb.on_sent(MSS, true);
        assert_eq!(sb.next_retransmission(true), None);
        // The rescue retransmission: the highest un-SACKed segment, once.
        assert_eq!(sb.rescue(0, 6 * MSS), Some(5 * MSS));
        assert_eq!(sb.rescue(0, 6 * MSS), None);
        assert_eq!(sb.rescue(7 * MSS, 9 * MSS), Some(5 * MSS));
    }

    /// Resend every segment NextSeg rule 1 offers; their indices in order.
    fn resend_lost(sb: &mut Scoreboard) -> Vec<u64> {
        std::iter::from_fn(|| {
            let s = sb.next_retransmission(false)?;
            sb.on_sent(s, true);
            Some(s / MSS)
        })
        .collect()
    }

    #[test]
    fn a_timeout_deems_every_unsacked_segment_lost() {
        let mut sb = sent(5);
        sb.on_sack(&[(3 * MSS, 4 * MSS)]);
        sb.on_sent(0, true);
        sb.on_timeout(false);
        assert_eq!(sb.pipe(0, 5 * MSS), 0);
        let order = resend_lost(&mut sb);
        assert_eq!(order, vec![0, 1, 2, 4]); // segment 3 is SACKed
        assert_eq!(sb.pipe(0, 5 * MSS), 4 * MSS);
    }

    #[test]
    fn a_timeout_with_clear_forgets_the_sacked_segments() {
        // RFC 2018 §8: segment 3 was SACKed; after the timeout it is resent like the others.
        let mut sb = sent(5);
        sb.on_sack(&[(3 * MSS, 4 * MSS)]);
        sb.on_sent(0, true);
        sb.on_timeout(true);
        assert_eq!((sb.pipe(0, 5 * MSS), sb.sacked_bytes(), sb.highest_sacked()), (0, 0, None));
        let order = resend_lost(&mut sb);
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
        // A later SACK of segment 3 counts it again (it is newly SACKed).
        assert_eq!(sb.on_sack(&[(3 * MSS, 4 * MSS)]), MSS);
    }

    #[test]
    fn a_short_last_segment_is_sacked_whole() {
        let mut sb = Scoreboard::new(MSS, 4500, 3);
        for k in 0..5 {
            sb.on_sent(k * MSS, false);
        }
        // Segment 4 is 500 bytes: [4000, 4500).
        assert_eq!(sb.on_sack(&[(1000, 4500)]), 3500);
        assert!(sb.is_lost(0));
        assert_eq!(sb.pipe(0, 4500), 0);
    }
}
