//! The end of ns-2's `TCP_CA_Loss` state (tcp-linux.cc:460-470), the part of
//! Agent/TCP/Linux's sender that a controller can apply from the seam: after a
//! retransmission timeout (`enter_loss`: ssthresh from the module, cwnd 1,
//! `recover_ = maxseq_`), the ACK that acknowledges everything sent before the
//! timeout ends the state with `snd_cwnd = snd_ssthresh` if the window is
//! below it, moderated to the packets in flight plus `tcp_max_burst` (3,
//! ns-linux-param.c; `tcp_moderate_cwnd`, tcp-linux.cc:442-446). The machinery
//! restarts from one segment; without this rule its window then grows only as
//! the module allows (not at all within TCP-LP's inference time-out).
use crate::transport::cc::{Ack, Window};

/// `tcp_max_burst` (ns-linux-param.c).
const MAX_BURST: u64 = 3;

/// Whether the sender is in ns-2's Loss state, and its recovery point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossState {
    #[default]
    Open,
    /// A timeout came; the recovery point is learnt from the next ACK.
    Entered,
    /// Until `snd_una` reaches this byte (`recover_`: all sent before the timeout).
    Until(u64),
}

impl LossState {
    /// A retransmission timeout.
    pub fn on_timeout(&mut self) {
        *self = LossState::Entered;
    }

    /// After an ACK of new data has been processed (`tcp_fastretrans_alert`, after
    /// the module's growth): the end of the state, if this ACK reaches the point.
    pub fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if ack.bytes_acked == 0 {
            return;
        }
        if *self == LossState::Entered {
            // All sent before the timeout: snd_una before this ACK + what was in flight.
            *self = LossState::Until(ack.snd_una - ack.bytes_acked + ack.flight);
        }
        let LossState::Until(recover) = *self else { return };
        if ack.snd_una < recover {
            return;
        }
        *self = LossState::Open;
        if w.cwnd < w.ssthresh {
            let in_flight = ack.snd_nxt.saturating_sub(ack.snd_una).div_ceil(w.mss);
            w.cwnd = (w.ssthresh / w.mss).min(in_flight + MAX_BURST).max(1) * w.mss;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(snd_una: u64, acked: u64, flight: u64, snd_nxt: u64) -> Ack {
        Ack { bytes_acked: acked * MSS, snd_una: snd_una * MSS, flight: flight * MSS, snd_nxt: snd_nxt * MSS, ..Ack::default() }
    }

    #[test]
    fn the_ack_of_all_sent_before_the_timeout_raises_the_window_to_ssthresh() {
        // A timeout with packets 10..20 out (ssthresh 6, cwnd 1); the first ACK
        // acknowledges 10 (flight 10 before it): the recovery point is 20.
        let mut s = LossState::default();
        let mut w = Window { cwnd: MSS, ssthresh: 6 * MSS, mss: MSS };
        s.on_timeout();
        s.on_ack(&mut w, &ack(11, 1, 10, 12));
        assert_eq!((s, w.cwnd), (LossState::Until(20 * MSS), MSS));
        s.on_ack(&mut w, &ack(15, 4, 9, 16));
        assert_eq!(w.cwnd, MSS);
        // All acknowledged, one packet out: cwnd = min(ssthresh 6, 1 + 3) = 4.
        s.on_ack(&mut w, &ack(20, 5, 5, 21));
        assert_eq!((s, w.cwnd), (LossState::Open, 4 * MSS));
        // Open: nothing more; a window above ssthresh is left alone.
        s.on_ack(&mut w, &ack(21, 1, 1, 22));
        assert_eq!(w.cwnd, 4 * MSS);
        s.on_timeout();
        let mut w = Window { cwnd: 8 * MSS, ssthresh: 6 * MSS, mss: MSS };
        s.on_ack(&mut w, &ack(30, 1, 1, 30));
        assert_eq!((s, w.cwnd), (LossState::Open, 8 * MSS));
    }
}
