//! The scenario file as written by a user (TOML, or the same structure as JSON /
//! a Python dict). Unknown keys are errors; values with units are parsed strictly
//! and a bad one is reported with its key path.
use super::units::{parse_duration, parse_queue_limit, parse_rate, parse_size, QueueLimit};
use crate::engine::SimTime;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:expr, $expect:literal) => {
        #[doc = concat!("A value written as ", $expect, ".")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        let parse: fn(&str) -> Option<$inner> = $parse;
                        parse(s).map($name).ok_or_else(|| E::custom(format!("expected {}, got {:?}", $expect, s)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got {} (write the unit)", $expect, v)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got {} (write the unit)", $expect, v)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got {} (write the unit)", $expect, v)))
                    }
                    fn visit_bool<E: de::Error>(self, v: bool) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got {}", $expect, v)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, f64, parse_rate, "a rate like \"10Mbps\"");
unit_type!(Size, f64, parse_size, "a size like \"3MB\"");
unit_type!(Duration, SimTime, parse_duration, "a duration like \"25ms\"");
unit_type!(Limit, QueueLimit, parse_queue_limit, "a queue limit like \"80ms\", \"100pkts\" or \"150KB\"");

/// A whole scenario.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Free-form name, echoed in the summary.
    #[serde(default)]
    pub name: Option<String>,
    /// Free-form description.
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time to run.
    pub duration: Duration,
    /// Initial period excluded from every statistic.
    #[serde(default)]
    pub warmup: Option<Duration>,
    /// Base seed of all random streams (overridable at run time).
    #[serde(default)]
    pub seed: Option<u64>,
    /// TCP parameters shared by every window-based flow.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Optional explicit node list; otherwise nodes are the links' endpoints.
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    /// Unidirectional links (or duplex pairs).
    pub links: Vec<LinkSpec>,
    /// Traffic classes.
    pub traffic: Vec<TrafficSpec>,
    /// What to record.
    #[serde(default)]
    pub record: RecordSpec,
}

/// TCP parameters (RFC 5681 / 6582 / 6298 machinery).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct TcpSpec {
    /// Maximum segment size: payload bytes per data packet.
    pub mss: u32,
    /// Header bytes added to every packet (IP + TCP).
    pub header: u32,
    /// Initial congestion window, in segments.
    pub initial_window: u32,
    /// Receiver's advertised window (flow control): the sender never has more than
    /// this in flight. Absent: unlimited.
    pub receive_window: Option<Size>,
    /// Lower bound of the retransmission timeout (RFC 6298 rule 2.4).
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout.
    pub max_rto: Duration,
    /// Timeout before the first RTT sample (RFC 6298 rule 2.1).
    pub initial_rto: Duration,
    /// Acknowledge every second full segment (RFC 5681 section 4.2) instead of every one.
    pub delayed_ack: bool,
    /// Longest an acknowledgment is delayed.
    pub delayed_ack_timeout: Duration,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Open each connection with a SYN / SYN-ACK exchange before sending data
    /// (as ns-3 does); off: data flows from the flow's arrival.
    pub handshake: bool,
    /// RFC 3042 limited transmit: send one new segment on each of the first two
    /// duplicate ACKs (as ns-3 and Linux do).
    pub limited_transmit: bool,
    /// Which partial ACKs of NewReno fast recovery restart the retransmission timer
    /// (RFC 6582 section 4): every one ("slow_but_steady") or only the first ("impatient", ns-3).
    pub partial_ack_timer: PartialAckTimer,
}

/// RFC 6582 section 4's two variants of resetting the retransmission timer on partial ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckTimer {
    /// Every partial ACK restarts the timer (Linux).
    #[default]
    SlowButSteady,
    /// Only the first partial ACK of a recovery restarts it (ns-3 3.44).
    Impatient,
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            mss: 1460,
            header: 40,
            initial_window: 10,
            receive_window: None,
            min_rto: Duration(SimTime::from_millis(200)),
            max_rto: Duration(SimTime::from_millis(60_000)),
            initial_rto: Duration(SimTime::from_millis(1000)),
            delayed_ack: false,
            delayed_ack_timeout: Duration(SimTime::from_millis(200)),
            dupack_threshold: 3,
            handshake: false,
            limited_transmit: false,
            partial_ack_timer: PartialAckTimer::SlowButSteady,
        }
    }
}

/// A link from one node to another.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Name used by routes and in the output (default "FROM->TO").
    #[serde(default)]
    pub name: Option<String>,
    pub from: String,
    pub to: String,
    /// Transmission rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue discipline at the link's input.
    #[serde(default)]
    pub queue: QueueSpec,
    /// Also create the reverse link TO->FROM with the same parameters (named "NAME-rev").
    #[serde(default = "yes")]
    pub duplex: bool,
}

fn yes() -> bool {
    true
}

/// A queue discipline.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// "droptail".
    #[serde(rename = "type", default = "droptail")]
    pub kind: String,
    /// Most that may wait (the packet in transmission does not count).
    pub limit: Limit,
}

fn droptail() -> String {
    "droptail".into()
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec { kind: droptail(), limit: Limit(QueueLimit::Packets(1000)) }
    }
}

/// A traffic class.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    pub name: String,
    /// "poisson", "long_lived", "flow_list" or "cbr".
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub src: Option<String>,
    #[serde(default)]
    pub dst: Option<String>,
    /// Explicit route: link names from src to dst (default: shortest path).
    #[serde(default)]
    pub route: Option<Vec<String>>,
    /// Congestion controller: "newreno".
    #[serde(default = "newreno")]
    pub protocol: String,
    /// Poisson: offered load as a fraction of `load_link`'s rate (payload bits).
    #[serde(default)]
    pub load: Option<f64>,
    /// Poisson: the link whose rate defines `load` (default: the route's first link).
    #[serde(default)]
    pub load_link: Option<String>,
    /// Poisson: flow arrival rate in flows per second (instead of `load`).
    #[serde(default)]
    pub arrival_rate: Option<f64>,
    /// Poisson: flow size distribution.
    #[serde(default)]
    pub size: Option<SizeSpec>,
    /// long_lived / cbr: number of flows (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// cbr: sending rate of each flow.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// cbr: bytes per packet on the wire (default 1500).
    #[serde(default)]
    pub packet_size: Option<u32>,
    /// cbr: start time of each flow in seconds (instead of `count` flows at `start`).
    #[serde(default)]
    pub starts: Option<Vec<f64>>,
    /// flow_list: CSV file with columns start (seconds), size (bytes), class.
    #[serde(default)]
    pub file: Option<String>,
    /// When the class starts (default 0).
    #[serde(default)]
    pub start: Option<Duration>,
    /// When the class stops creating flows (default: never).
    #[serde(default)]
    pub stop: Option<Duration>,
}

fn newreno() -> String {
    "newreno".into()
}

/// A flow size distribution.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct SizeSpec {
    /// "exponential", "pareto", "constant" or "empirical".
    pub dist: String,
    #[serde(default)]
    pub mean: Option<Size>,
    /// Pareto shape (> 1 so that the mean is finite).
    #[serde(default)]
    pub shape: Option<f64>,
    /// Constant size.
    #[serde(default)]
    pub value: Option<Size>,
    /// Empirical CDF: CSV with columns size (bytes), cdf.
    #[serde(default)]
    pub file: Option<String>,
}

/// What to record.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct RecordSpec {
    /// Sampling interval of the `series` table ("0s" turns it off).
    pub interval: Duration,
    /// Links at which the queue met by every arriving packet is recorded
    /// (the `arrivals` table; after the warm-up).
    pub arrivals: Vec<String>,
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec { interval: Duration(SimTime::from_millis(1000)), arrivals: Vec::new() }
    }
}
