//! The congestion-control seam of window-based transports.
//!
//! The TCP machinery (`transport::tcp`) owns sequence space, ACK clocking, loss
//! detection and recovery, and the retransmission timer. A controller is a
//! sans-IO state machine that only steers the window: it sees every ACK with its
//! samples ([`Ack`]), each congestion signal as a distinct event
//! ([`Congestion`]), and may ask for a deadline of its own (FAST's periodic
//! update, TCP-LP's inference timeout) through [`CongestionControl::deadline`].
//! It never sends, schedules or reads a clock: the machinery calls it, and it can
//! be driven by hand in a unit test.
//!
//! A new controller is one file implementing [`CongestionControl`] and
//! [`WindowProtocol`] (its name and its typed parameters, read from the traffic
//! class's `cc = { ... }` table), plus one line in `registry.rs`. A controller
//! defined outside this crate (a test, an experiment) registers at run time with
//! [`Registry::register`].
mod fast;
mod ledbat;
mod multcp;
mod newreno;
mod registry;
mod reno;
mod tcp_lp;
mod vegas;

pub use fast::{AdaptationParams, Fast, FastParams};
pub use ledbat::{Implementation as LedbatImplementation, Ledbat, LedbatParams, Variant as LedbatVariant};
pub use multcp::{MulTcp, MulTcpParams};
pub use newreno::{halve, NewReno, RenoGrowth};
pub use reno::Reno;
pub use registry::{Cc, CcConfig, Registry, BUILTIN};
pub use tcp_lp::{TcpLp, TcpLpParams};
pub use vegas::{Vegas, VegasParams};

use crate::engine::SimTime;
use crate::settings::{Result, Table};
use crate::transport::state::StateVars;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

/// The window a controller steers (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: u64,
    /// Slow-start threshold (u64::MAX: none yet).
    pub ssthresh: u64,
    /// Sender's maximum segment size (payload bytes).
    pub mss: u64,
}

/// What the sender learned from one arriving acknowledgment (duplicates included).
/// (`Ack::default()` is an ACK of nothing at time zero, for tests to fill in.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    pub now: SimTime,
    /// Bytes newly acknowledged cumulatively (0 for a duplicate ACK).
    pub bytes_acked: u64,
    /// Bytes newly known delivered: cumulatively acknowledged or selectively
    /// acknowledged (equal to `bytes_acked` without SACK).
    pub bytes_delivered: u64,
    /// Round-trip sample from the echoed send time; None for ACKs of no new data
    /// and, by Karn's rule, for ACKs of retransmitted segments (unless the
    /// connection uses timestamps, whose echo dates the retransmission itself).
    pub rtt: Option<SimTime>,
    /// Forward one-way delay of the data segment whose arrival triggered this ACK
    /// (receiver's arrival time minus sender's send time, as LEDBAT and TCP-LP measure it).
    pub one_way_delay: Option<SimTime>,
    /// The timestamp the ACK echoes (RFC 7323's TSecr: the send time of the
    /// segment that triggered it), only when the connection uses timestamps
    /// (`tcp.timestamps`); for controllers that run a stack's own timestamp
    /// arithmetic (TCP-LP's `ns2` variant).
    pub ts_echo: Option<SimTime>,
    /// The ACK newly acknowledges data that was sent more than once, so a sample
    /// from it may time either transmission (Karn's rule; ns-2's Agent/TCP/Linux
    /// takes no sample from such an ACK, `FLAG_UNSURE_TSTAMP`).
    pub acks_retransmission: bool,
    /// The ACK carries ECN-Echo: a segment was marked Congestion Experienced (RFC 3168).
    pub ece: bool,
    /// CE-marked data segments this ACK newly reports (the receiver's count, as
    /// AccECN's, minus the count on the previous ACK): every mark, where ECN-Echo
    /// says only that there was at least one since the last CWR.
    pub ce_marks: u32,
    /// The sender is in loss recovery (this ACK included, if it ends it): the recovery
    /// rules set the window, and controllers usually only observe.
    pub in_recovery: bool,
    /// The window limited sending: at least cwnd − 1 MSS was in flight before this
    /// ACK (RFC 7661's test of whether growing the window means anything).
    pub cwnd_limited: bool,
    /// Bytes in flight before this ACK (snd_max − snd_una).
    pub flight: u64,
    /// The cumulative ACK point after this ACK, and the next byte the sender will
    /// send, before it sends what this ACK allows (after a timeout it rewinds to
    /// `snd_una`): a controller that acts once per round trip (Vegas) waits for
    /// `snd_una` to pass the `snd_nxt` it saw.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// RFC 3465 appropriate byte counting, from `tcp.byte_counting`: the limit L in
    /// segments of slow-start growth per ACK (0: off, grow per ACK as RFC 5681;
    /// u32::MAX: no limit). Controllers with Reno's growth honour it ([`RenoGrowth`]).
    pub byte_counting: u32,
    /// `tcp.window_arithmetic = "ns2"`: grow the window as ns-2's `opencwnd()` does,
    /// cwnd a real number of segments (+1 per ACK in slow start, +1/cwnd in
    /// congestion avoidance). Controllers with Reno's growth honour it.
    pub ns2_arithmetic: bool,
}

/// How the machinery recovers from a loss detected by duplicate ACKs when the
/// connection has no SACK (with SACK it is always RFC 6675's recovery).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FastRecovery {
    /// RFC 6582: stay in recovery through partial ACKs, retransmitting at each.
    #[default]
    NewReno,
    /// RFC 5681 §3.2: the first ACK of new data ends recovery (cwnd = ssthresh).
    Reno,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// Loss detected by duplicate ACKs (fast retransmit).
    Loss,
    /// The retransmission timer expired; `repeated` when ssthresh was already
    /// reduced for this window of data (a timeout during fast recovery, or a
    /// second timeout before an ACK of new data): RFC 5681 then holds ssthresh.
    Timeout { repeated: bool },
    /// An ACK carried ECN-Echo, at most once per window of data (RFC 3168 §6.1.2).
    Ecn,
}

/// What a congestion controller decides.
pub trait CongestionControl {
    /// The connection opens at `now`, before anything is sent: the controller may
    /// set its initial window and threshold (the machinery starts them at
    /// `tcp.initial_window` segments and no threshold).
    #[inline]
    fn on_start(&mut self, _w: &mut Window, _now: SimTime) {}

    /// Every arriving ACK: grow (or shrink) the window, record samples.
    fn on_ack(&mut self, w: &mut Window, ack: &Ack);

    /// A congestion signal with `flight` bytes in flight (capped by cwnd): return
    /// the new ssthresh. The machinery then sets cwnd by its recovery rules (for
    /// `Ecn`: cwnd = ssthresh). Returning at least `w.cwnd` for `Ecn` ignores the mark.
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64;

    /// A segment of `bytes` payload left the sender (`retransmission`: it had been
    /// sent before). Controllers that measure sending or loss rates count here.
    #[inline]
    fn on_sent(&mut self, _now: SimTime, _bytes: u64, _retransmission: bool) {}

    /// The fast-recovery rules this controller runs under without SACK.
    #[inline]
    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::NewReno
    }

    /// The window in segments as a real number: ns-2's `cwnd_`, which controllers
    /// with Reno's growth keep exactly under `tcp.window_arithmetic = "ns2"`
    /// ([`RenoGrowth`]); for the others, cwnd / MSS.
    #[inline]
    fn segments(&self, w: &Window) -> f64 {
        w.cwnd as f64 / w.mss as f64
    }

    /// Set the window to `segments` (ns-2's `slowdown()` and partial-ACK
    /// deflation): cwnd in bytes is its integer part.
    #[inline]
    fn set_segments(&mut self, w: &mut Window, segments: f64) {
        w.cwnd = (segments * w.mss as f64) as u64;
    }

    /// When the controller next needs to run on its own (None: never).
    fn deadline(&self) -> Option<SimTime> {
        None
    }

    /// The deadline has come.
    fn on_deadline(&mut self, _w: &mut Window, _now: SimTime) {}

    /// Report the controller's own state for a trace (LEDBAT's delays, Vegas'
    /// diff, FAST's α): `vars.put("protocol.quantity_unit", value)`. Called only
    /// for traced flows, after each event that may change it; `w` is the window
    /// now. The window itself, ssthresh and the RTT estimator are the machinery's
    /// and traced without it.
    fn observe(&self, _w: &Window, _now: SimTime, _vars: &mut StateVars) {}
}

/// A window-based protocol: a congestion controller with a name and typed parameters.
pub trait WindowProtocol: CongestionControl + Clone + Debug + Send + 'static {
    /// The `protocol = "..."` name.
    const NAME: &'static str;
    /// Parameters, as read from the class's `cc` table and written in the canonical
    /// configuration.
    type Params: Clone + Debug + PartialEq + Serialize + DeserializeOwned;
    /// Read (and validate) the class's `cc` table (an empty table if absent); call
    /// `t.finish(...)` so that unknown keys are errors.
    fn read(t: Table) -> Result<Self::Params>;
    /// The first parameter out of range (its key in the canonical `params`), and why.
    /// The one range check of the parameters, run on every way in: after `read` (a
    /// scenario file or a Python dict) and when a canonical configuration is read
    /// back (`Config::check`).
    fn check(_params: &Self::Params) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }
    /// A controller for one new connection (the window, with the MSS, comes with
    /// every call).
    fn new(params: &Self::Params) -> Self;
}

/// A controller behind a box. The registry lists a controller whose state is
/// larger than a few words as `Box<T>`, so that the controller slot of every
/// connection (whatever its protocol) stays small; a boxed controller costs one
/// indirection per call.
impl<T: CongestionControl> CongestionControl for Box<T> {
    #[inline]
    fn on_start(&mut self, w: &mut Window, now: SimTime) {
        (**self).on_start(w, now)
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        (**self).on_ack(w, ack)
    }
    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        (**self).on_congestion(w, event, flight)
    }
    #[inline]
    fn on_sent(&mut self, now: SimTime, bytes: u64, retransmission: bool) {
        (**self).on_sent(now, bytes, retransmission)
    }
    #[inline]
    fn fast_recovery(&self) -> FastRecovery {
        (**self).fast_recovery()
    }
    #[inline]
    fn segments(&self, w: &Window) -> f64 {
        (**self).segments(w)
    }
    #[inline]
    fn set_segments(&mut self, w: &mut Window, segments: f64) {
        (**self).set_segments(w, segments)
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        (**self).deadline()
    }
    #[inline]
    fn on_deadline(&mut self, w: &mut Window, now: SimTime) {
        (**self).on_deadline(w, now)
    }
    fn observe(&self, w: &Window, now: SimTime, vars: &mut StateVars) {
        (**self).observe(w, now, vars)
    }
}

impl<T: WindowProtocol> WindowProtocol for Box<T> {
    const NAME: &'static str = T::NAME;
    type Params = T::Params;
    fn read(t: Table) -> Result<Self::Params> {
        T::read(t)
    }
    fn check(params: &Self::Params) -> std::result::Result<(), (&'static str, String)> {
        T::check(params)
    }
    fn new(params: &Self::Params) -> Self {
        Box::new(T::new(params))
    }
}
