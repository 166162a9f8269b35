//! A traffic class: where its flows go, when they arrive, and how they send.
use super::arrivals::Arrivals;
use crate::engine::SimTime;
use crate::transport::rate::RateConfig;
use crate::transport::Transport;
use serde::{Deserialize, Serialize};

/// A traffic class of a validated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    pub name: String,
    /// Node indices of the endpoints.
    pub src: u32,
    pub dst: u32,
    /// Link indices from src to dst (data) and from dst to src (acknowledgments).
    pub route: Vec<u32>,
    pub ack_route: Vec<u32>,
    /// When the class starts and stops creating flows (None: never stops).
    #[serde(rename = "start_ns")]
    pub start: SimTime,
    #[serde(rename = "stop_ns")]
    pub stop: Option<SimTime>,
    pub arrivals: Arrivals,
    pub transport: Transport,
    /// Where in its first packet interval each constant-rate flow starts (absent
    /// from the canonical form when `zero`).
    #[serde(default, skip_serializing_if = "Phase::is_zero")]
    pub phase: Phase,
}

/// When a constant-rate flow sends its first packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// At its start time.
    #[default]
    Zero,
    /// At a uniformly random offset within one packet interval (8·size/rate) after
    /// its start time, drawn from the class's stream `phase/NAME`: the independent
    /// phases of the lower-bounds paper's ideally smooth senders.
    Random,
}

impl Phase {
    pub fn is_zero(&self) -> bool {
        *self == Phase::Zero
    }
}

impl ClassConfig {
    /// The packet interval of a constant-rate class (ns), None for any other.
    pub fn cbr_interval_ns(&self) -> Option<f64> {
        match &self.transport {
            Transport::Rate { cc: RateConfig::Cbr(p), packet_bytes } => Some(*packet_bytes as f64 * 8e9 / p.rate_bps),
            _ => None,
        }
    }

    /// The window of the flows' random start offsets (ns): one packet interval
    /// with `phase = "random"`, None otherwise.
    pub fn phase_window_ns(&self) -> Option<f64> {
        match self.phase {
            Phase::Zero => None,
            Phase::Random => self.cbr_interval_ns(),
        }
    }

    /// The stop time, `SimTime::MAX` for never.
    pub fn stop_time(&self) -> SimTime {
        self.stop.unwrap_or(SimTime::MAX)
    }
}
