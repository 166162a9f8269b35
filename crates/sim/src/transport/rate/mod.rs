//! The rate-control seam: senders that pace datagrams at a rate a controller
//! sets, instead of clocking them by ACKs.
//!
//! A [`RateControl`] is a sans-IO state machine that says how fast to send and
//! may ask for deadlines of its own; the [`Pacer`] turns its rate into send times.
//! A protocol with receiver feedback also has a receiving end, a sans-IO
//! [`FeedbackReceiver`] with a deadline of its own, whose reports reach the
//! controller through `on_feedback` (`feedback.rs`; both ends live in one
//! [`RateConn`]). A new rate controller is one file implementing [`RateControl`]
//! and [`RateProtocol`], plus one line in the `rate_protocols!` list below.
pub mod cbr;
mod conn;
pub mod feedback;
mod pacer;
pub mod pareto;
pub mod rcp;
mod schedule;
pub mod tfcbr;
pub mod tfrc;

pub use cbr::Cbr;
pub use conn::RateConn;
pub use feedback::{FeedbackReceiver, Report};
pub use pacer::{Pacer, RateSender};
pub use pareto::Pareto;
pub use rcp::Rcp;
pub use tfcbr::{Rdtf, Tfcbr};
pub use tfrc::Tfrc;

use crate::engine::SimTime;
use crate::net::Packet;
use cclab_rng::Xoshiro256pp;
use crate::settings::{Result, ScenarioError, Table, Value};
use crate::transport::state::StateVars;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

/// What a rate controller learns when its flow starts.
pub struct FlowStart {
    /// The flow's start time.
    pub now: SimTime,
    /// Bytes of every datagram on the wire.
    pub packet_bytes: u32,
    /// The flow's own random stream (`rate/CLASS/K` for the class's K-th flow).
    pub rng: Xoshiro256pp,
}

/// What a rate controller decides.
pub trait RateControl {
    /// The flow starts (before its first packet): a controller that draws random
    /// numbers or schedules from the start time takes what it needs here.
    fn start(&mut self, _f: FlowStart) {}
    /// The sending rate now, in bits per second (0: pause until the next deadline).
    fn rate_bps(&self) -> f64;
    /// When the controller next needs to run on its own (None: never).
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    /// The deadline has come.
    fn on_deadline(&mut self, _now: SimTime) {}
    /// A receiver's report has arrived (protocols with feedback).
    fn on_feedback(&mut self, _now: SimTime, _report: &Report) {}
    /// The sender's RTT estimate, which every datagram carries (RFC 5348 §3.2.1).
    fn rtt(&self) -> Option<SimTime> {
        None
    }
    /// A router-assisted protocol's request (RCP): the rate field (bit/s) every
    /// datagram carries, which each RCP link on the path lowers to its own rate.
    /// None: no field (the datagrams' `Packet::sack` stays 0).
    fn rate_request(&self) -> Option<f64> {
        None
    }
    /// After a deadline: whether a header-only probe of this many bytes is due
    /// now (RCP's SYN and REF packets, which learn the rate without data).
    fn take_probe(&mut self) -> Option<u32> {
        None
    }
    /// A controller that times its own datagrams (ns-2's TFRC schedules each one
    /// after the previous and sends at once on some reports): when the next one
    /// leaves (`SimTime::MAX`: not now). None: the pacer's schedule at `rate_bps`.
    fn next_send(&self) -> Option<SimTime> {
        None
    }
    /// A datagram left at `now` (for controllers that time their own).
    fn on_sent(&mut self, _now: SimTime) {}
    /// A protocol's own header field, which every datagram carries in
    /// `Packet::sack` (ns-2's TFRC: round id, tzero, urgent flag). Zero: none.
    fn header_field(&self) -> u32 {
        0
    }
    /// Report the controller's own state for a trace (TFRC's X, p and X_recv):
    /// `vars.put("protocol.quantity_unit", value)`. Called only for traced flows;
    /// the sending rate and the RTT estimate are traced without it.
    fn observe(&self, _vars: &mut StateVars) {}
}

/// A rate-based protocol: a rate controller with a name and typed parameters.
pub trait RateProtocol: RateControl + Clone + Debug + Send + 'static {
    /// The `protocol = "..."` name.
    const NAME: &'static str;
    type Params: Clone + Debug + PartialEq + Serialize + DeserializeOwned;
    /// Read (and validate) the class's `cc` table; call `t.finish(...)`.
    fn read(t: Table) -> Result<Self::Params>;
    /// The first parameter out of range (its key in the canonical `params`), and why.
    /// The one range check of the parameters, run on every way in: after `read` (a
    /// scenario file or a Python dict) and when a canonical configuration is read
    /// back (`Config::check`).
    fn check(_params: &Self::Params) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }
    /// The key a scenario's `cc` table writes for the canonical key `key`, where the
    /// two differ (a value with its unit: `beta = "64s"` is `beta_ns`), so that a
    /// check failing after `read` names the key the user wrote.
    fn file_key(key: &'static str) -> &'static str {
        key
    }
    /// A controller for one new flow.
    fn new(params: &Self::Params) -> Self;
    /// The receiving end of one new flow of `packet_bytes` datagrams (None: the
    /// protocol has no feedback, and its receiver only counts what arrives).
    fn receiver(_params: &Self::Params, _packet_bytes: u32) -> Option<Receiver> {
        None
    }
}

/// A rate controller behind a box, as `Box<T>` in the window registry: the
/// registry lists a controller with more than a few words of state (Pareto's
/// random stream) as `Box<T>`, so that every rate connection stays no larger than
/// a TCP one; a boxed controller costs one indirection per call.
impl<T: RateControl> RateControl for Box<T> {
    fn start(&mut self, f: FlowStart) {
        (**self).start(f)
    }
    #[inline]
    fn rate_bps(&self) -> f64 {
        (**self).rate_bps()
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        (**self).deadline()
    }
    #[inline]
    fn on_deadline(&mut self, now: SimTime) {
        (**self).on_deadline(now)
    }
    #[inline]
    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        (**self).on_feedback(now, report)
    }
    #[inline]
    fn rtt(&self) -> Option<SimTime> {
        (**self).rtt()
    }
    fn rate_request(&self) -> Option<f64> {
        (**self).rate_request()
    }
    fn take_probe(&mut self) -> Option<u32> {
        (**self).take_probe()
    }
    fn next_send(&self) -> Option<SimTime> {
        (**self).next_send()
    }
    fn on_sent(&mut self, now: SimTime) {
        (**self).on_sent(now)
    }
    fn header_field(&self) -> u32 {
        (**self).header_field()
    }
    fn observe(&self, vars: &mut StateVars) {
        (**self).observe(vars)
    }
}

impl<T: RateProtocol> RateProtocol for Box<T> {
    const NAME: &'static str = T::NAME;
    type Params = T::Params;
    fn read(t: Table) -> Result<Self::Params> {
        T::read(t)
    }
    fn check(params: &Self::Params) -> std::result::Result<(), (&'static str, String)> {
        T::check(params)
    }
    fn file_key(key: &'static str) -> &'static str {
        T::file_key(key)
    }
    fn new(params: &Self::Params) -> Self {
        Box::new(T::new(params))
    }
    fn receiver(params: &Self::Params, packet_bytes: u32) -> Option<Receiver> {
        T::receiver(params, packet_bytes)
    }
}

/// The receiving end of a rate flow with feedback.
#[derive(Clone, Debug)]
pub enum Receiver {
    /// RFC 5348's receiver, shared by TFRC, TFCBR and RDTF.
    Tfrc(tfrc::TfrcReceiver),
    /// ns-2.35's TFRCSink (TFRC's `variant = "ns2"`).
    TfrcNs2(Box<tfrc::Ns2Receiver>),
    /// RCP's: every datagram answered with its rate field.
    Rcp(rcp::RcpReceiver),
}

impl FeedbackReceiver for Receiver {
    #[inline]
    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Report> {
        match self {
            Receiver::Tfrc(r) => r.on_data(now, pkt),
            Receiver::TfrcNs2(r) => r.on_data(now, pkt),
            Receiver::Rcp(r) => r.on_data(now, pkt),
        }
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        match self {
            Receiver::Tfrc(r) => r.deadline(),
            Receiver::TfrcNs2(r) => r.deadline(),
            Receiver::Rcp(r) => r.deadline(),
        }
    }
    #[inline]
    fn on_deadline(&mut self, now: SimTime) -> Option<Report> {
        match self {
            Receiver::Tfrc(r) => r.on_deadline(now),
            Receiver::TfrcNs2(r) => r.on_deadline(now),
            Receiver::Rcp(r) => r.on_deadline(now),
        }
    }
}

/// A protocol's `cc` table read, then passed through its one check, which names the
/// key as the table writes it.
fn read_checked<T: RateProtocol>(t: Table) -> Result<T::Params> {
    let path = t.path().to_string();
    let p = T::read(t)?;
    T::check(&p).map_err(|(k, m)| ScenarioError::new(crate::settings::join(&path, T::file_key(k)), m))?;
    Ok(p)
}

macro_rules! rate_protocols {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// The rate controller of one flow.
        #[derive(Clone, Debug)]
        pub enum RateCc {
            $($variant($ty),)*
        }

        /// Which rate controller a class uses, with its parameters. In the canonical
        /// configuration: `{"protocol": NAME, "params": {...}}`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum RateConfig {
            $($variant(<$ty as RateProtocol>::Params),)*
        }

        /// The names of the rate protocols.
        pub const RATE_PROTOCOLS: &[&str] = &[$(<$ty as RateProtocol>::NAME),*];

        impl RateConfig {
            /// The protocol name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(RateConfig::$variant(_) => <$ty as RateProtocol>::NAME,)*
                }
            }
            /// The parameters as JSON.
            pub fn params(&self) -> Value {
                match self {
                    $(RateConfig::$variant(p) => serde_json::to_value(p).expect("parameters serialize to JSON"),)*
                }
            }
            /// Read the `cc` table of `protocol` (one of `RATE_PROTOCOLS`).
            pub fn read(protocol: &str, t: Table) -> Result<RateConfig> {
                match protocol {
                    $(<$ty as RateProtocol>::NAME => read_checked::<$ty>(t).map(RateConfig::$variant),)*
                    other => unreachable!("{other} is not a rate protocol"),
                }
            }
            /// The parameters' range check (`RateProtocol::check`); the key is the canonical one.
            pub fn check(&self) -> std::result::Result<(), (&'static str, String)> {
                match self {
                    $(RateConfig::$variant(p) => <$ty as RateProtocol>::check(p),)*
                }
            }
            /// From the canonical form.
            pub fn from_parts(name: &str, params: Value, path: &str) -> Result<RateConfig> {
                let bad = |e: serde_json::Error| ScenarioError::new(format!("{path}.params"), e.to_string());
                match name {
                    $(<$ty as RateProtocol>::NAME => serde_json::from_value(params).map(RateConfig::$variant).map_err(bad),)*
                    other => Err(ScenarioError::new(format!("{path}.protocol"), format!("unknown rate protocol {other:?}"))),
                }
            }
            /// A controller for one new flow.
            pub fn make(&self) -> RateCc {
                match self {
                    $(RateConfig::$variant(p) => RateCc::$variant(<$ty as RateProtocol>::new(p)),)*
                }
            }
            /// The receiving end of one new flow of `packet_bytes` datagrams (None: no feedback).
            pub fn receiver(&self, packet_bytes: u32) -> Option<Receiver> {
                match self {
                    $(RateConfig::$variant(p) => <$ty as RateProtocol>::receiver(p, packet_bytes),)*
                }
            }
            /// Whether the protocol's receiver reports back.
            pub fn has_feedback(&self) -> bool {
                self.receiver(1500).is_some()
            }
            /// Whether its datagrams carry a header field of their own in
            /// `Packet::sack` (where RCP links write their rate).
            pub fn header_in_sack(&self) -> bool {
                !matches!(self.name(), "rcp") && self.make().header_field() != 0
            }
        }

        impl RateControl for RateCc {
            fn start(&mut self, f: FlowStart) {
                match self {
                    $(RateCc::$variant(c) => c.start(f),)*
                }
            }
            #[inline]
            fn rate_bps(&self) -> f64 {
                match self {
                    $(RateCc::$variant(c) => c.rate_bps(),)*
                }
            }
            #[inline]
            fn deadline(&self) -> Option<SimTime> {
                match self {
                    $(RateCc::$variant(c) => c.deadline(),)*
                }
            }
            #[inline]
            fn on_deadline(&mut self, now: SimTime) {
                match self {
                    $(RateCc::$variant(c) => c.on_deadline(now),)*
                }
            }
            #[inline]
            fn on_feedback(&mut self, now: SimTime, report: &Report) {
                match self {
                    $(RateCc::$variant(c) => c.on_feedback(now, report),)*
                }
            }
            #[inline]
            fn rtt(&self) -> Option<SimTime> {
                match self {
                    $(RateCc::$variant(c) => c.rtt(),)*
                }
            }
            fn rate_request(&self) -> Option<f64> {
                match self {
                    $(RateCc::$variant(c) => c.rate_request(),)*
                }
            }
            fn take_probe(&mut self) -> Option<u32> {
                match self {
                    $(RateCc::$variant(c) => c.take_probe(),)*
                }
            }
            fn next_send(&self) -> Option<SimTime> {
                match self {
                    $(RateCc::$variant(c) => c.next_send(),)*
                }
            }
            fn on_sent(&mut self, now: SimTime) {
                match self {
                    $(RateCc::$variant(c) => c.on_sent(now),)*
                }
            }
            fn header_field(&self) -> u32 {
                match self {
                    $(RateCc::$variant(c) => c.header_field(),)*
                }
            }
            fn observe(&self, vars: &mut StateVars) {
                match self {
                    $(RateCc::$variant(c) => c.observe(vars),)*
                }
            }
        }
    };
}

// The rate protocols: one line each.
rate_protocols! {
    Cbr => Cbr,
    Pareto => Box<Pareto>,
    Tfrc => Tfrc,
    Tfcbr => Tfcbr,
    Rdtf => Rdtf,
    Rcp => Rcp,
}
