//! NewReno's window rules (RFC 5681 §§3.1-3.2). Recovery itself (fast retransmit,
//! RFC 6582's partial ACKs) is in the shared machinery.
use super::{Ack, Congestion, CongestionControl, Window, WindowProtocol};
use crate::settings::{Result, Table};
use serde::{Deserialize, Serialize};

/// TCP NewReno.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

/// NewReno has no parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl WindowProtocol for NewReno {
    const NAME: &'static str = "newreno";
    type Params = NoParams;

    fn read(t: Table) -> Result<NoParams> {
        t.finish("newreno")?;
        Ok(NoParams {})
    }

    fn new(_: &NoParams) -> Self {
        NewReno
    }
}

/// ssthresh = max(FlightSize / 2, 2*SMSS) (RFC 5681 eq. 4).
#[inline]
pub fn halve(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}

impl CongestionControl for NewReno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if w.cwnd < w.ssthresh {
            // Slow start: cwnd += min(N, SMSS) per ACK (RFC 5681 eq. 2).
            w.cwnd += ack.bytes_acked.min(w.mss);
        } else {
            // Congestion avoidance: cwnd += SMSS*SMSS/cwnd per ACK (RFC 5681 eq. 3),
            // at least one byte, as in ns-3's TcpNewReno.
            w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
        }
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        match event {
            Congestion::Timeout { repeated: true } => w.ssthresh,
            _ => halve(flight, w.mss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;

    fn ack(bytes: u64) -> Ack {
        Ack {
            now: SimTime::ZERO,
            bytes_acked: bytes,
            bytes_delivered: bytes,
            rtt: None,
            one_way_delay: None,
            ece: false,
            in_recovery: false,
            cwnd_limited: true,
            flight: 0,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    #[test]
    fn slow_start_avoidance_and_halving() {
        let mut c = NewReno;
        let mut w = Window { cwnd: 4000, ssthresh: u64::MAX, mss: 1000 };
        c.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 5000); // + min(N, SMSS)
        c.on_ack(&mut w, &ack(3000));
        assert_eq!(w.cwnd, 6000); // a stretch ACK still adds one SMSS
        c.on_ack(&mut w, &ack(0));
        assert_eq!(w.cwnd, 6000); // duplicates do not grow the window
        w.ssthresh = 6000;
        c.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 6000 + 1000 * 1000 / 6000);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 9000), 4500);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 3000), 2000); // floor of 2 SMSS
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }, 9000), 6000);
        assert_eq!(c.on_congestion(&w, Congestion::Ecn, 9000), 4500);
        let mut r = ack(1000);
        r.in_recovery = true;
        c.on_ack(&mut w, &r);
        assert_eq!(w.cwnd, 6166); // recovery owns the window
    }
}
