//! What a run records and produces: the flows table, the links table, the
//! sampled series, the per-arrival queue table and the summary scalars.
pub mod columns;
pub mod flows;
pub mod series;
pub mod trace;

pub use columns::{link_columns, Column, Columns};
pub use flows::{FlowRecord, FlowTable};
pub use series::Series;
pub use trace::{TraceConfig, Traces};

use crate::engine::SimTime;
use serde::{Deserialize, Serialize};

/// What to record, in a validated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordConfig {
    /// Sampling interval of the series table (None: not recorded).
    #[serde(rename = "interval_ns")]
    pub interval: Option<SimTime>,
    /// Link indices whose per-arrival queue is recorded.
    pub arrivals: Vec<u32>,
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig { interval: Some(SimTime::from_secs(1)), arrivals: Vec::new() }
    }
}

/// One row per link, counters over [warm-up, end].
#[derive(Clone, Debug, Default)]
pub struct LinkRow {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: f64,
    pub delay_s: f64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
    pub drop_rate: f64,
    /// Packets marked Congestion Experienced by the queue.
    pub marks: u64,
    pub utilization: f64,
    pub mean_queue_packets: f64,
    pub mean_queue_bytes: f64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// Largest queue at any time, warm-up included (never above the limit).
    pub peak_queue_packets: u64,
    pub peak_queue_bytes: u64,
}

/// The queue met by each packet arriving at the links listed in `record.arrivals`.
#[derive(Clone, Debug, Default)]
pub struct ArrivalTable {
    pub time: Vec<f64>,
    /// Index into the run's link names.
    pub link: Vec<u32>,
    pub queue_packets: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    /// Seconds until the transmitter is free.
    pub backlog: Vec<f64>,
    pub dropped: Vec<bool>,
}

/// A summary value.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Num(f64),
    Int(i64),
    /// A whole number that may exceed i64 (the seed, any u64).
    Unsigned(u64),
    Text(String),
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub class_names: Vec<String>,
    pub flows: FlowTable,
    pub links: Vec<LinkRow>,
    pub series: Series,
    pub arrivals: ArrivalTable,
    pub link_names: Vec<String>,
    pub summary: Vec<(String, Scalar)>,
    pub warnings: Vec<String>,
    /// What the run traced (empty without `[trace]`).
    pub traces: Traces,
}

impl RunResult {
    /// A summary value by key.
    pub fn get(&self, key: &str) -> Option<&Scalar> {
        self.summary.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// A numeric summary value by key.
    pub fn num(&self, key: &str) -> f64 {
        match self.get(key) {
            Some(Scalar::Num(x)) => *x,
            Some(Scalar::Int(i)) => *i as f64,
            Some(Scalar::Unsigned(u)) => *u as f64,
            _ => f64::NAN,
        }
    }
}
