//! The congestion-controller seam. The TCP machinery owns sequence space, ACK
//! clocking, loss detection, NewReno fast recovery and the RTO; a controller only
//! decides how the window grows on ACKs and where it goes on a congestion event
//! or a timeout. Delay-based controllers read the RTT / one-way samples of
//! `AckEvent`; controllers with timers (FAST, TCP-LP) will add a timer hook here.
use super::newreno::NewReno;
use crate::engine::SimTime;

/// Window state shared between the machinery and the controller (bytes).
#[derive(Clone, Copy, Debug)]
pub struct CcState {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

/// An ACK that acknowledged new data, outside fast recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: SimTime,
    /// Newly acknowledged bytes.
    pub bytes_acked: u64,
    /// Round-trip sample from the echoed send time (None when Karn's rule forbids it).
    pub rtt: Option<SimTime>,
    /// Bytes in flight before this ACK.
    pub flight: u64,
}

/// What a congestion controller decides.
pub trait CongestionControl {
    /// Grow (or shrink) the window on an ACK of new data outside recovery.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckEvent);
    /// Loss detected by duplicate ACKs: return the new ssthresh (bytes).
    fn on_congestion_event(&mut self, st: &CcState, flight: u64) -> u64;
    /// Retransmission timeout: return the new ssthresh; `repeated` is true when
    /// ssthresh was already reduced for this window of data (the segment had been
    /// resent by the timer, or the timeout hit during fast recovery): RFC 5681
    /// then holds ssthresh.
    fn on_timeout(&mut self, st: &CcState, flight: u64, repeated: bool) -> u64;
}

/// The controllers cclab knows, dispatched without boxing.
#[derive(Clone, Debug)]
pub enum Controller {
    NewReno(NewReno),
}

impl CongestionControl for Controller {
    #[inline]
    fn on_ack(&mut self, st: &mut CcState, ack: &AckEvent) {
        match self {
            Controller::NewReno(c) => c.on_ack(st, ack),
        }
    }
    #[inline]
    fn on_congestion_event(&mut self, st: &CcState, flight: u64) -> u64 {
        match self {
            Controller::NewReno(c) => c.on_congestion_event(st, flight),
        }
    }
    #[inline]
    fn on_timeout(&mut self, st: &CcState, flight: u64, repeated: bool) -> u64 {
        match self {
            Controller::NewReno(c) => c.on_timeout(st, flight, repeated),
        }
    }
}
