//! The controllers cclab knows, by protocol name.
//!
//! Built-in controllers are listed once, in the `window_protocols!` line at the
//! bottom of this file; they are enum variants (dispatched without boxing or
//! dynamic calls). A controller defined elsewhere (a test, an experiment) is
//! registered at run time with [`Registry::register`] and runs boxed.
use super::{Ack, Congestion, CongestionControl, FastRecovery, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::net::queue::{QueueConfig, QueueRegistry};
use crate::settings::{Result, ScenarioError, Table, Value};
use crate::transport::state::StateVars;
use std::fmt::Debug;

/// A controller running behind a box (registered at run time).
pub trait DynCc: CongestionControl + Debug + Send {
    fn box_clone(&self) -> Box<dyn DynCc>;
}

impl<T: CongestionControl + Clone + Debug + Send + 'static> DynCc for T {
    fn box_clone(&self) -> Box<dyn DynCc> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn DynCc> {
    fn clone(&self) -> Self {
        self.box_clone()
    }
}

type ReadFn = fn(Table) -> Result<Value>;
type MakeFn = fn(&Value) -> std::result::Result<Box<dyn DynCc>, String>;

/// Controllers (and queue disciplines) registered at run time, beside the built-in ones.
#[derive(Clone, Default)]
pub struct Registry {
    custom: Vec<(&'static str, ReadFn, MakeFn)>,
    queues: QueueRegistry,
}

fn read_as<T: WindowProtocol>(t: Table) -> Result<Value> {
    Ok(serde_json::to_value(T::read(t)?).expect("parameters serialize to JSON"))
}

fn make_as<T: WindowProtocol>(v: &Value) -> std::result::Result<Box<dyn DynCc>, String> {
    let p: T::Params = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    Ok(Box::new(T::new(&p)))
}

impl Registry {
    /// The built-in controllers only.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Add controller `T` under `T::NAME` (a built-in name cannot be replaced).
    pub fn register<T: WindowProtocol>(&mut self) -> &mut Self {
        assert!(!BUILTIN.contains(&T::NAME), "{} is a built-in protocol", T::NAME);
        self.custom.retain(|c| c.0 != T::NAME);
        self.custom.push((T::NAME, read_as::<T>, make_as::<T>));
        self
    }

    /// Add queue discipline `T` under `T::NAME` (a built-in name cannot be replaced).
    pub fn register_queue<T: QueueConfig>(&mut self) -> &mut Self {
        self.queues.register::<T>();
        self
    }

    /// The queue disciplines this registry knows.
    pub fn queues(&self) -> &QueueRegistry {
        &self.queues
    }

    /// Every protocol name this registry knows.
    pub fn names(&self) -> Vec<&'static str> {
        BUILTIN.iter().copied().chain(self.custom.iter().map(|c| c.0)).collect()
    }

    /// Whether `protocol` names a window protocol this registry knows.
    pub fn knows(&self, protocol: &str) -> bool {
        BUILTIN.contains(&protocol) || self.custom.iter().any(|c| c.0 == protocol)
    }

    /// Read the parameters of `protocol` from its `cc` table `t`. The name must be
    /// one this registry [knows](Registry::knows).
    pub fn read(&self, protocol: &str, t: Table) -> Result<CcConfig> {
        if BUILTIN.contains(&protocol) {
            return CcConfig::read_builtin(protocol, t).expect("a built-in name");
        }
        let &(name, read, _) = self.custom.iter().find(|c| c.0 == protocol).expect("a registered name");
        read(t).map(|params| CcConfig::Custom { name: name.to_string(), params })
    }

    /// A controller for one new connection of a class configured with `cfg`.
    pub fn make(&self, cfg: &CcConfig) -> std::result::Result<Cc, String> {
        if let Some(c) = cfg.make_builtin() {
            return Ok(c);
        }
        let CcConfig::Custom { name, params } = cfg else { unreachable!("built-in configurations make built-in controllers") };
        let (_, _, make) = self
            .custom
            .iter()
            .find(|c| c.0 == name)
            .ok_or_else(|| format!("protocol {name:?} is not registered (known: {})", self.names().join(", ")))?;
        make(params).map(Cc::Custom).map_err(|e| format!("protocol {name:?}: {e}"))
    }
}

macro_rules! window_protocols {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// The congestion controller of one connection.
        #[derive(Clone, Debug)]
        pub enum Cc {
            $($variant($ty),)*
            /// A controller registered at run time.
            Custom(Box<dyn DynCc>),
        }

        /// Which controller a traffic class uses, with its parameters. In the
        /// canonical configuration: `{"protocol": NAME, "params": {...}}`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum CcConfig {
            $($variant(<$ty as WindowProtocol>::Params),)*
            /// A controller registered at run time: its name and parameters as read.
            Custom { name: String, params: Value },
        }

        /// The names of the built-in window protocols.
        pub const BUILTIN: &[&str] = &[$(<$ty as WindowProtocol>::NAME),*];

        impl CcConfig {
            /// The protocol name.
            pub fn name(&self) -> &str {
                match self {
                    $(CcConfig::$variant(_) => <$ty as WindowProtocol>::NAME,)*
                    CcConfig::Custom { name, .. } => name,
                }
            }

            /// The parameters as JSON.
            pub fn params(&self) -> Value {
                match self {
                    $(CcConfig::$variant(p) => serde_json::to_value(p).expect("parameters serialize to JSON"),)*
                    CcConfig::Custom { params, .. } => params.clone(),
                }
            }

            fn read_builtin(protocol: &str, t: Table) -> Option<Result<CcConfig>> {
                let path = t.path().to_string();
                let c = match protocol {
                    $(<$ty as WindowProtocol>::NAME => <$ty as WindowProtocol>::read(t).map(CcConfig::$variant),)*
                    _ => return None,
                };
                Some(c.and_then(|c| {
                    c.check().map_err(|(k, m)| ScenarioError::new(crate::settings::join(&path, k), m))?;
                    Ok(c)
                }))
            }

            /// The parameters' range check (`WindowProtocol::check`; a controller
            /// registered at run time checks in its `read`). The key is the canonical one.
            pub fn check(&self) -> std::result::Result<(), (&'static str, String)> {
                match self {
                    $(CcConfig::$variant(p) => <$ty as WindowProtocol>::check(p),)*
                    CcConfig::Custom { .. } => Ok(()),
                }
            }

            /// From the canonical form; a name that is not built in is kept as Custom.
            pub fn from_parts(name: &str, params: Value, path: &str) -> Result<CcConfig> {
                match name {
                    $(<$ty as WindowProtocol>::NAME => serde_json::from_value(params)
                        .map(CcConfig::$variant)
                        .map_err(|e| ScenarioError::new(format!("{path}.params"), e.to_string())),)*
                    _ => Ok(CcConfig::Custom { name: name.to_string(), params }),
                }
            }

            fn make_builtin(&self) -> Option<Cc> {
                match self {
                    $(CcConfig::$variant(p) => Some(Cc::$variant(<$ty as WindowProtocol>::new(p))),)*
                    CcConfig::Custom { .. } => None,
                }
            }
        }

        impl CongestionControl for Cc {
            #[inline]
            fn on_start(&mut self, w: &mut Window, now: SimTime) {
                match self {
                    $(Cc::$variant(c) => c.on_start(w, now),)*
                    Cc::Custom(c) => c.on_start(w, now),
                }
            }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
                match self {
                    $(Cc::$variant(c) => c.on_ack(w, ack),)*
                    Cc::Custom(c) => c.on_ack(w, ack),
                }
            }
            #[inline]
            fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
                match self {
                    $(Cc::$variant(c) => c.on_congestion(w, event, flight),)*
                    Cc::Custom(c) => c.on_congestion(w, event, flight),
                }
            }
            #[inline]
            fn on_sent(&mut self, now: SimTime, bytes: u64, retransmission: bool) {
                match self {
                    $(Cc::$variant(c) => c.on_sent(now, bytes, retransmission),)*
                    Cc::Custom(c) => c.on_sent(now, bytes, retransmission),
                }
            }
            #[inline]
            fn fast_recovery(&self) -> FastRecovery {
                match self {
                    $(Cc::$variant(c) => c.fast_recovery(),)*
                    Cc::Custom(c) => c.fast_recovery(),
                }
            }
            #[inline]
            fn segments(&self, w: &Window) -> f64 {
                match self {
                    $(Cc::$variant(c) => c.segments(w),)*
                    Cc::Custom(c) => c.segments(w),
                }
            }
            #[inline]
            fn set_segments(&mut self, w: &mut Window, segments: f64) {
                match self {
                    $(Cc::$variant(c) => c.set_segments(w, segments),)*
                    Cc::Custom(c) => c.set_segments(w, segments),
                }
            }
            #[inline]
            fn deadline(&self) -> Option<SimTime> {
                match self {
                    $(Cc::$variant(c) => c.deadline(),)*
                    Cc::Custom(c) => c.deadline(),
                }
            }
            #[inline]
            fn on_deadline(&mut self, w: &mut Window, now: SimTime) {
                match self {
                    $(Cc::$variant(c) => c.on_deadline(w, now),)*
                    Cc::Custom(c) => c.on_deadline(w, now),
                }
            }
            fn observe(&self, w: &Window, now: SimTime, vars: &mut StateVars) {
                match self {
                    $(Cc::$variant(c) => c.observe(w, now, vars),)*
                    Cc::Custom(c) => c.observe(w, now, vars),
                }
            }
        }
    };
}

impl serde::Serialize for CcConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CcConfig", 2)?;
        st.serialize_field("protocol", self.name())?;
        st.serialize_field("params", &self.params())?;
        st.end()
    }
}

impl<'de> serde::Deserialize<'de> for CcConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Parts {
            protocol: String,
            params: Value,
        }
        let p = Parts::deserialize(d)?;
        CcConfig::from_parts(&p.protocol, p.params, "").map_err(|e| serde::de::Error::custom(e.message))
    }
}

// The built-in window protocols: one line each. A controller with more than two
// words of state is boxed here (or boxes its own state, as FAST and LEDBAT do),
// so that every connection's controller slot stays at NewReno's size.
window_protocols! {
    NewReno => super::NewReno,
    Reno => super::Reno,
    Fast => super::Fast,
    Ledbat => super::Ledbat,
    TcpLp => Box<super::TcpLp>,
    Vegas => Box<super::Vegas>,
    MulTcp => Box<super::MulTcp>,
}
