//! The queue disciplines cclab knows, by name.
//!
//! A discipline is one file implementing the seam of `discipline.rs`. Built-in disciplines are listed
//! once, in the `queue_disciplines!` line at the bottom of this file, and run as
//! enum variants (drop-tail's verdict stays inlined in the link's admission); a
//! discipline defined elsewhere (a test, an experiment) registers at run time with
//! [`QueueRegistry::register`] and runs boxed. The event loop knows none by name: a
//! link's timer runs whatever deadline its discipline asks for.
use super::discipline::{LinkSpeed, QueueConfig, QueueDiscipline, Waiting};
use super::{Arrival, DropTail, Verdict};
use crate::engine::SimTime;
use crate::net::packet::Packet;
use crate::settings::{err, Result, Table, Value};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

type ReadFn = fn(&mut Table, LinkSpeed) -> Result<Value>;
type CheckFn = fn(&Value) -> std::result::Result<(), (String, String)>;
type StartFn = fn(&Value, u64, Xoshiro256pp) -> std::result::Result<Box<dyn QueueDiscipline>, String>;

/// Queue disciplines registered at run time, beside the built-in ones.
#[derive(Clone, Default)]
pub struct QueueRegistry {
    custom: Vec<(&'static str, ReadFn, CheckFn, StartFn)>,
}

fn read_as<T: QueueConfig>(t: &mut Table, link: LinkSpeed) -> Result<Value> {
    Ok(serde_json::to_value(T::read(t, link)?).expect("parameters serialize to JSON"))
}

fn typed<T: QueueConfig>(v: &Value) -> std::result::Result<T, (String, String)> {
    serde_json::from_value(v.clone()).map_err(|e| (String::new(), e.to_string()))
}

fn check_as<T: QueueConfig>(v: &Value) -> std::result::Result<(), (String, String)> {
    typed::<T>(v)?.check().map_err(|(k, m)| (k.to_string(), m))
}

fn start_as<T: QueueConfig>(v: &Value, rate_bps: u64, rng: Xoshiro256pp) -> std::result::Result<Box<dyn QueueDiscipline>, String> {
    let cfg = typed::<T>(v).map_err(|e| e.1)?;
    Ok(Box::new(cfg.start(rate_bps, rng)))
}

impl QueueRegistry {
    /// Add discipline `T` under `T::NAME` (a built-in name cannot be replaced).
    pub fn register<T: QueueConfig>(&mut self) -> &mut Self {
        assert!(!BUILTIN.contains(&T::NAME), "{} is a built-in queue discipline", T::NAME);
        self.custom.retain(|c| c.0 != T::NAME);
        self.custom.push((T::NAME, read_as::<T>, check_as::<T>, start_as::<T>));
        self
    }

    /// Every discipline name this registry knows.
    pub fn names(&self) -> Vec<&'static str> {
        BUILTIN.iter().copied().chain(self.custom.iter().map(|c| c.0)).collect()
    }

    fn find(&self, name: &str) -> Option<&(&'static str, ReadFn, CheckFn, StartFn)> {
        self.custom.iter().find(|c| c.0 == name)
    }

    /// Read a link's `queue` table: its `type` (drop-tail if absent) and that
    /// discipline's keys, checked.
    pub fn read(&self, t: &mut Table, link: LinkSpeed) -> Result<Queue> {
        let kind: String = t.or("type", DropTail::NAME.to_string())?;
        let q = match Queue::read_builtin(&kind, t, link) {
            Some(q) => q?,
            None => match self.find(&kind) {
                Some(&(name, read, _, _)) => Queue::Custom { name: name.to_string(), params: read(t, link)? },
                None => {
                    let names: Vec<String> = self.names().iter().map(|n| format!("{n:?}")).collect();
                    let (last, rest) = names.split_last().expect("built-in disciplines");
                    let known = if rest.is_empty() { last.clone() } else { format!("{} or {last}", rest.join(", ")) };
                    return err(t.key_path("type"), format!("unknown queue discipline {kind:?}; expected {known}"));
                }
            },
        };
        if let Err((key, msg)) = self.check(&q) {
            return err(t.key_path(&key), msg);
        }
        Ok(q)
    }

    /// Check a discipline's parameters; on failure, the key at fault and what is wrong.
    pub fn check(&self, q: &Queue) -> std::result::Result<(), (String, String)> {
        if let Some(r) = q.check_builtin() {
            return r.map_err(|(k, m)| (k.to_string(), m));
        }
        let Queue::Custom { name, params } = q else { unreachable!("built-in disciplines are checked above") };
        match self.find(name) {
            Some(&(_, _, check, _)) => check(params),
            None => Err(("type".into(), format!("queue discipline {name:?} is not registered (known: {})", self.names().join(", ")))),
        }
    }

    /// The run-time state of `q` on a link of `rate_bps`, drawing from `rng`.
    pub fn start(&self, q: &Queue, rate_bps: u64, rng: Xoshiro256pp) -> std::result::Result<Discipline, String> {
        if let Some(d) = q.start_builtin(rate_bps, rng.clone()) {
            return Ok(d);
        }
        let Queue::Custom { name, params } = q else { unreachable!("built-in disciplines start above") };
        let &(_, _, _, start) = self.find(name).ok_or_else(|| format!("queue discipline {name:?} is not registered"))?;
        start(params, rate_bps, rng).map(Discipline::Custom)
    }
}

macro_rules! queue_disciplines {
    ($($variant:ident($name:literal) => $cfg:ty);* $(;)?) => {
        /// The queue discipline of a link, as configured. In the canonical configuration:
        /// `{"type": NAME, ...its parameters}`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Queue {
            $($variant($cfg),)*
            /// A discipline registered at run time: its name and parameters as read
            /// (its buffer limits are its `limit_packets` / `limit_bytes`, if any).
            Custom { name: String, params: Value },
        }

        /// The built-in configurations in their canonical form (tagged by `type`).
        #[derive(Serialize, Deserialize)]
        #[serde(tag = "type")]
        enum Builtin { $(#[serde(rename = $name)] $variant($cfg),)* }

        /// The same, borrowed, to write one.
        #[derive(Serialize)]
        #[serde(tag = "type")]
        enum BuiltinRef<'a> { $(#[serde(rename = $name)] $variant(&'a $cfg),)* }

        /// The names of the built-in queue disciplines.
        pub const BUILTIN: &[&str] = &[$($name),*];

        /// Each listed name beside its discipline's own `QueueConfig::NAME`.
        #[cfg(test)]
        const LISTED: &[(&str, &str)] = &[$(($name, <$cfg as QueueConfig>::NAME)),*];

        /// A queue discipline during a run. (An explicit tag byte: telling drop-tail
        /// apart is then one comparison, where a niche in its limits took four.)
        #[repr(u8)]
        pub enum Discipline {
            $($variant(<$cfg as QueueConfig>::State),)*
            /// A discipline registered at run time.
            Custom(Box<dyn QueueDiscipline>),
        }

        impl Queue {
            /// The discipline's name.
            pub fn name(&self) -> &str {
                match self {
                    $(Queue::$variant(_) => <$cfg as QueueConfig>::NAME,)*
                    Queue::Custom { name, .. } => name,
                }
            }

            fn read_builtin(kind: &str, t: &mut Table, link: LinkSpeed) -> Option<Result<Queue>> {
                match kind {
                    $($name => Some(<$cfg as QueueConfig>::read(t, link).map(Queue::$variant)),)*
                    _ => None,
                }
            }

            fn check_builtin(&self) -> Option<std::result::Result<(), (&'static str, String)>> {
                match self {
                    $(Queue::$variant(c) => Some(c.check()),)*
                    Queue::Custom { .. } => None,
                }
            }

            fn start_builtin(&self, rate_bps: u64, rng: Xoshiro256pp) -> Option<Discipline> {
                match self {
                    $(Queue::$variant(c) => Some(Discipline::$variant(c.start(rate_bps, rng))),)*
                    Queue::Custom { .. } => None,
                }
            }

            /// (packets, bytes) limits of the buffer, for the links table.
            pub fn limits(&self) -> (Option<u64>, Option<u64>) {
                match self {
                    $(Queue::$variant(c) => c.limits(),)*
                    Queue::Custom { params, .. } => {
                        let limit = |k: &str| params.get(k).and_then(Value::as_u64);
                        (limit("limit_packets"), limit("limit_bytes"))
                    }
                }
            }
        }

        impl Serialize for Queue {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                match self {
                    $(Queue::$variant(c) => BuiltinRef::$variant(c).serialize(s),)*
                    Queue::Custom { name, params } => {
                        let fields = params.as_object();
                        let mut m = s.serialize_map(Some(1 + fields.map_or(0, |f| f.len())))?;
                        m.serialize_entry("type", name)?;
                        for (k, v) in fields.into_iter().flatten() {
                            m.serialize_entry(k, v)?;
                        }
                        m.end()
                    }
                }
            }
        }

        impl<'de> Deserialize<'de> for Queue {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let mut v = Value::deserialize(d)?;
                let name = v.get("type").and_then(Value::as_str).map(str::to_string);
                match name {
                    Some(n) if !BUILTIN.contains(&n.as_str()) => {
                        v.as_object_mut().map(|o| o.remove("type"));
                        Ok(Queue::Custom { name: n, params: v })
                    }
                    _ => match Builtin::deserialize(v).map_err(serde::de::Error::custom)? {
                        $(Builtin::$variant(c) => Ok(Queue::$variant(c)),)*
                    },
                }
            }
        }

        impl Discipline {
            /// Decide on a packet `pkt` arriving to `q_packets` / `q_bytes` waiting;
            /// `arrival` says the rest, for the disciplines that need it (drop-tail
            /// never builds it, which keeps its per-packet work what it was).
            #[inline]
            pub fn admit(&mut self, q_packets: u64, q_bytes: u64, pkt: &mut Packet, arrival: impl Fn() -> Arrival) -> Verdict {
                match self {
                    $(Discipline::$variant(d) => d.admit_lazy(q_packets, q_bytes, pkt, arrival),)*
                    Discipline::Custom(d) => d.as_mut().admit(&arrival(), pkt),
                }
            }

            /// When the discipline next runs on its own (None: never).
            pub fn deadline(&self) -> Option<SimTime> {
                match self {
                    $(Discipline::$variant(d) => d.deadline(),)*
                    Discipline::Custom(d) => d.as_ref().deadline(),
                }
            }

            /// Its deadline has come, with `waiting` in the queue.
            pub fn on_deadline(&mut self, now: SimTime, waiting: Waiting) {
                match self {
                    $(Discipline::$variant(d) => d.on_deadline(now, waiting),)*
                    Discipline::Custom(d) => d.as_mut().on_deadline(now, waiting),
                }
            }
        }
    };
}

impl Queue {
    /// Whether the link runs RCP (sets the rate of the RCP flows crossing it).
    pub fn is_rcp(&self) -> bool {
        matches!(self, Queue::Rcp(_))
    }

    /// Whether a packet of `bytes` fits an empty buffer (a byte limit below a
    /// packet's size would drop every such packet).
    pub fn holds(&self, bytes: u64) -> bool {
        self.limits().1.is_none_or(|l| bytes <= l)
    }

    /// Check a built-in discipline's parameters (a registered one's need its registry:
    /// [`QueueRegistry::check`]); on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        self.check_builtin().unwrap_or(Ok(()))
    }
}

impl Default for Queue {
    fn default() -> Self {
        Queue::DropTail(DropTail::default())
    }
}

// The built-in queue disciplines: one line each, `Variant("name") => super::Config` (its
// `QueueConfig::NAME` is the name; a test checks). A state larger than a few words
// is boxed by its `QueueConfig::State`, so that a link's discipline slot stays small.
queue_disciplines! {
    DropTail("droptail") => super::DropTail;
    Red("red") => super::Red;
    Linear("linear") => super::Linear;
    Rcp("rcp") => super::Rcp;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::{Rcp, Red};

    #[test]
    fn the_listed_names_are_the_disciplines_own() {
        for (listed, own) in LISTED {
            assert_eq!(listed, own);
        }
        for q in [Queue::DropTail(DropTail::default()), Queue::Red(Red::default()), Queue::Rcp(Rcp::default())] {
            let text = serde_json::to_string(&q).unwrap();
            assert!(text.starts_with(&format!("{{\"type\":\"{}\"", q.name())), "{text}");
            assert_eq!(serde_json::from_str::<Queue>(&text).unwrap(), q);
        }
    }

    #[test]
    fn a_discipline_not_built_in_is_kept_by_name() {
        let q: Queue = serde_json::from_str(r#"{"type":"toy","limit_packets":7,"x":1}"#).unwrap();
        assert_eq!(q.name(), "toy");
        assert_eq!(q.limits(), (Some(7), None));
        assert_eq!(serde_json::to_string(&q).unwrap(), r#"{"type":"toy","limit_packets":7,"x":1}"#);
        let e = QueueRegistry::default().check(&q).unwrap_err();
        assert_eq!(e.0, "type");
        assert!(e.1.starts_with("queue discipline \"toy\" is not registered"), "{}", e.1);
    }
}
