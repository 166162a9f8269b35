//! Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937): during loss
//! recovery, send in proportion to the data delivered so that the data in flight
//! falls smoothly to ssthresh, then at most as fast as data is delivered
//! (conservative reduction bound), or one segment faster after an ACK that makes
//! good progress (slow-start reduction bound).
/// PRR's state for one recovery episode (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// prr_delivered: data delivered to the receiver since recovery began.
    delivered: u64,
    /// prr_out: data sent since recovery began.
    out: u64,
    /// RecoverFS: pipe when recovery began (RFC 9937 §5).
    recover_fs: u64,
}

impl Prr {
    /// Recovery begins with `pipe` bytes in flight.
    pub fn new(pipe: u64) -> Self {
        Prr { delivered: 0, out: 0, recover_fs: pipe.max(1) }
    }

    /// `bytes` of data were sent (new or retransmitted).
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// The congestion window after an ACK that delivered `delivered` bytes
    /// (cumulatively acknowledged or newly SACKed), with `pipe` bytes in flight
    /// (RFC 6675 SetPipe); `safe` when the ACK advanced snd_una and revealed no
    /// further loss. None if the ACK delivered nothing (the window stays).
    pub fn cwnd(&mut self, delivered: u64, pipe: u64, ssthresh: u64, safe: bool, mss: u64) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional rate reduction: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let target = (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128) as u64;
            target.saturating_sub(self.out)
        } else {
            // Reduction bound: conservative (as much as was delivered), plus one
            // segment on a safe ACK (slow-start reduction bound).
            let mut limit = self.delivered.saturating_sub(self.out).max(delivered);
            if safe {
                limit += mss;
            }
            limit.min(ssthresh - pipe)
        };
        // The fast retransmit always goes out (RFC 9937 §5).
        let sndcnt = if self.out == 0 { sndcnt.max(mss) } else { sndcnt };
        Some(pipe + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::Prr;

    const MSS: u64 = 1000;

    #[test]
    fn proportional_then_bounded() {
        // 20 segments in flight, ssthresh 10 segments: one segment sent per two delivered.
        let mut p = Prr::new(20 * MSS);
        // First ACK (the third duplicate) delivers one segment: ceil(1 * 10/20) = 1 - 0 out.
        assert_eq!(p.cwnd(MSS, 19 * MSS, 10 * MSS, false, MSS), Some(19 * MSS + MSS));
        p.on_sent(MSS);
        // Second: prr_delivered 2 -> ceil(2 * 10 / 20) = 1, minus 1 out = 0.
        assert_eq!(p.cwnd(MSS, 18 * MSS, 10 * MSS, false, MSS), Some(18 * MSS));
        // Third: in bytes (as RFC 9937 counts), ceil(3000 * 10 / 20) - 1000 = 500:
        // half a segment, which goes out once the next ACK adds the other half.
        assert_eq!(p.cwnd(MSS, 17 * MSS, 10 * MSS, false, MSS), Some(17 * MSS + MSS / 2));
        assert_eq!(p.cwnd(MSS, 16 * MSS, 10 * MSS, false, MSS), Some(16 * MSS + MSS));
        p.on_sent(MSS);
        // Far into recovery, pipe below ssthresh: conservative bound, +1 MSS on safe ACKs.
        let mut q = Prr::new(20 * MSS);
        q.on_sent(MSS);
        assert_eq!(q.cwnd(3 * MSS, 5 * MSS, 10 * MSS, false, MSS), Some(5 * MSS + 3 * MSS));
        assert_eq!(q.cwnd(MSS, 5 * MSS, 10 * MSS, true, MSS), Some(5 * MSS + 3 * MSS + MSS));
        // Never above ssthresh.
        assert_eq!(q.cwnd(10 * MSS, 9 * MSS, 10 * MSS, true, MSS), Some(10 * MSS));
        // An ACK that delivers nothing leaves the window.
        assert_eq!(q.cwnd(0, 9 * MSS, 10 * MSS, true, MSS), None);
    }

    #[test]
    fn the_fast_retransmit_always_goes_out() {
        // Even when the proportional share is zero on the first ACK.
        let mut p = Prr::new(100 * MSS);
        assert_eq!(p.cwnd(MSS, 99 * MSS, 10 * MSS, false, MSS), Some(100 * MSS));
    }
}
