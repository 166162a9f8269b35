//! NewReno's window rules (RFC 5681 sections 3.1-3.2; recovery itself, RFC 6582,
//! is in the shared machinery).
use super::cc::{AckEvent, CcState, CongestionControl};

/// TCP NewReno.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_ack(&mut self, st: &mut CcState, ack: &AckEvent) {
        if st.cwnd < st.ssthresh {
            // Slow start: cwnd += min(N, SMSS) per ACK (RFC 5681 eq. 2).
            st.cwnd += ack.bytes_acked.min(st.mss);
        } else {
            // Congestion avoidance: cwnd += SMSS*SMSS/cwnd per ACK (RFC 5681 eq. 3),
            // at least one byte, as in ns-3's TcpNewReno.
            st.cwnd += (st.mss * st.mss / st.cwnd).max(1);
        }
    }

    fn on_congestion_event(&mut self, st: &CcState, flight: u64) -> u64 {
        // ssthresh = max(FlightSize / 2, 2*SMSS) (RFC 5681 eq. 4).
        (flight / 2).max(2 * st.mss)
    }

    fn on_timeout(&mut self, st: &CcState, flight: u64, repeated: bool) -> u64 {
        if repeated {
            st.ssthresh
        } else {
            (flight / 2).max(2 * st.mss)
        }
    }
}
