//! Reno (RFC 5681 §3.2 without RFC 6582's partial-ACK handling), as the ns-2
//! `Agent/TCP/Reno` the background-transfer papers simulated: NewReno's window
//! rules, but the first ACK of new data ends fast recovery, so a second loss in
//! the same window waits for three more duplicate ACKs or, since a new fast
//! retransmit needs the cumulative ACK beyond the previous recovery point (ns-2's
//! `bugfix_`, RFC 6582 §3.2 step 2), for the retransmission timeout.
use super::newreno::NoParams;
use super::{Ack, Congestion, CongestionControl, FastRecovery, NewReno, Window, WindowProtocol};
use crate::settings::{Result, Table};

/// TCP Reno: NewReno's window rules under Reno's recovery.
#[derive(Clone, Debug, Default)]
pub struct Reno(NewReno);

impl WindowProtocol for Reno {
    const NAME: &'static str = "reno";
    type Params = NoParams;

    fn read(t: Table) -> Result<NoParams> {
        t.finish("reno")?;
        Ok(NoParams {})
    }

    fn new(_: &NoParams) -> Self {
        Reno::default()
    }
}

impl CongestionControl for Reno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        self.0.on_ack(w, ack)
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        self.0.on_congestion(w, event, flight)
    }

    #[inline]
    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::Reno
    }

    #[inline]
    fn segments(&self, w: &Window) -> f64 {
        self.0.segments(w)
    }

    #[inline]
    fn set_segments(&mut self, w: &mut Window, segments: f64) {
        self.0.set_segments(w, segments)
    }
}
