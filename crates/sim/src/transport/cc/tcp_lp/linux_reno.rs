//! Reno's window growth as ns-2.35's `Agent/TCP/Linux` runs it: Linux
//! 2.6.22's `tcp_reno_cong_avoid` and `tcp_slow_start` (ns-2.35
//! tcp/linux/src/tcp_cong.c) with ns-2's `sysctl_tcp_abc = 1`
//! (tcp/linux/ns-linux-param.c), in whole packets.
//!
//! Two things set it apart from RFC 5681's per-ACK growth (`RenoGrowth`):
//! * appropriate byte counting with L = 1 in slow start (one packet per ACK of
//!   at least one MSS, however much it acknowledges) and, in congestion
//!   avoidance, one packet each time a whole window of bytes has been
//!   acknowledged;
//! * the bytes are counted on *every* ACK of new data
//!   (`linux_.bytes_acked += ...` in tcp-linux.cc's `recv`), also while the
//!   controller holds the window (TCP-LP's inference time-out, loss recovery):
//!   when growth resumes, the bytes counted meanwhile give one packet per ACK
//!   until they are spent.
use crate::transport::cc::Window;

/// `snd_cwnd_cnt` and `bytes_acked` of ns-2's Linux `tcp_sock`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxReno {
    /// `snd_cwnd_cnt`: slow start's count of ACKed packets towards the next
    /// increase (ns-2 declares it `__u16`, which ns-linux-util.h defines as
    /// `unsigned int`).
    cwnd_cnt: u32,
    /// `bytes_acked`: bytes acknowledged since the window last grew.
    bytes_acked: u64,
}

impl LinuxReno {
    /// Bytes newly acknowledged by an ACK (counted before anything else runs).
    #[inline]
    pub fn count(&mut self, bytes: u64) {
        self.bytes_acked += bytes;
    }

    /// A congestion response (fast retransmit or timeout) clears both counters
    /// (tcp-linux.cc: `snd_cwnd_cnt = 0; bytes_acked = 0;`).
    #[inline]
    pub fn reset(&mut self) {
        *self = LinuxReno::default();
    }

    /// `tcp_reno_cong_avoid(sk, ack, rtt, in_flight, flag)`: grow the window,
    /// `in_flight` being the packets in flight before this ACK.
    pub fn cong_avoid(&mut self, w: &mut Window, in_flight: u64) {
        let mut cwnd = w.cwnd / w.mss;
        // tcp_is_cwnd_limited: in_flight >= snd_cwnd.
        if in_flight < cwnd {
            return;
        }
        if cwnd <= w.ssthresh / w.mss {
            // tcp_slow_start with sysctl_tcp_abc = 1 and no tcp_max_ssthresh:
            // nothing until a whole MSS is acknowledged, then cnt = snd_cwnd.
            if self.bytes_acked < w.mss {
                return;
            }
            self.bytes_acked = 0;
            self.cwnd_cnt = self.cwnd_cnt.wrapping_add(cwnd as u32);
            while self.cwnd_cnt as u64 >= cwnd {
                self.cwnd_cnt -= cwnd as u32;
                cwnd += 1;
            }
        } else if self.bytes_acked >= cwnd * w.mss {
            // RFC 3465 in congestion avoidance: one packet per window of bytes.
            self.bytes_acked -= cwnd * w.mss;
            cwnd += 1;
        }
        w.cwnd = cwnd * w.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn window(cwnd: u64, ssthresh: u64) -> Window {
        Window { cwnd: cwnd * MSS, ssthresh: ssthresh * MSS, mss: MSS }
    }

    #[test]
    fn slow_start_adds_one_packet_per_ack_of_a_full_segment() {
        let mut g = LinuxReno::default();
        let mut w = window(2, 100);
        // An ACK of three packets still adds one (L = 1): snd_cwnd_cnt += 2
        // reaches snd_cwnd = 2 once.
        g.count(3 * MSS);
        g.cong_avoid(&mut w, 2);
        assert_eq!(w.cwnd, 3 * MSS);
        // Less than an MSS acknowledged: nothing (ABC), and the bytes wait.
        g.count(MSS / 2);
        g.cong_avoid(&mut w, 3);
        assert_eq!(w.cwnd, 3 * MSS);
        g.count(MSS / 2);
        g.cong_avoid(&mut w, 3);
        assert_eq!(w.cwnd, 4 * MSS);
        // cwnd = ssthresh is still slow start (snd_cwnd <= snd_ssthresh).
        let mut w = window(100, 100);
        g.count(MSS);
        g.cong_avoid(&mut w, 100);
        assert_eq!(w.cwnd, 101 * MSS);
    }

    #[test]
    fn avoidance_adds_one_packet_per_window_of_bytes_and_keeps_the_rest() {
        let mut g = LinuxReno::default();
        let mut w = window(10, 5);
        for k in 1..=9 {
            g.count(MSS);
            g.cong_avoid(&mut w, 10);
            assert_eq!(w.cwnd, 10 * MSS, "ack {k}");
        }
        g.count(MSS);
        g.cong_avoid(&mut w, 10);
        assert_eq!(w.cwnd, 11 * MSS);
        // Bytes counted while growth was held (24 packets' worth, then one more
        // ACK) give one packet per ACK while at least a window remains: 25 − 11
        // = 14, then 15 − 12 = 3 packets' worth are left.
        g.count(24 * MSS);
        g.count(MSS);
        g.cong_avoid(&mut w, 11);
        assert_eq!(w.cwnd, 12 * MSS);
        g.count(MSS);
        g.cong_avoid(&mut w, 12);
        assert_eq!(w.cwnd, 13 * MSS);
        g.count(MSS);
        g.cong_avoid(&mut w, 13);
        assert_eq!(w.cwnd, 13 * MSS); // 4 packets' worth, less than a window
    }

    #[test]
    fn no_growth_unless_the_window_limited_sending() {
        let mut g = LinuxReno::default();
        let mut w = window(10, 100);
        g.count(MSS);
        g.cong_avoid(&mut w, 9);
        assert_eq!(w.cwnd, 10 * MSS);
        // The bytes are kept for the next limited ACK (slow start spends them all).
        g.count(MSS);
        g.cong_avoid(&mut w, 10);
        assert_eq!(w.cwnd, 11 * MSS);
        g.reset();
        assert_eq!(g, LinuxReno::default());
    }
}
