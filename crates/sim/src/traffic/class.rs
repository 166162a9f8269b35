//! A traffic class: where its flows go, when they arrive, and how they send.
use super::arrivals::Arrivals;
use crate::engine::SimTime;
use crate::transport::Transport;
use cclab_control::AccessParams;
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
    /// Access control of the class's files (absent from the canonical form when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessParams>,
}

impl ClassConfig {
    /// The stop time, `SimTime::MAX` for never.
    pub fn stop_time(&self) -> SimTime {
        self.stop.unwrap_or(SimTime::MAX)
    }
}
