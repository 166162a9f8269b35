//! What a run produces: the flows table, the links table, the sampled series and
//! the summary scalars.

/// One row per flow that arrived (finished or not).
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    pub class: Vec<u16>,
    pub id: Vec<u32>,
    /// Bytes to transfer; NaN for long-lived flows.
    pub size: Vec<f64>,
    /// Arrival time of the flow (s).
    pub arrival: Vec<f64>,
    /// When the receiver held every byte (s); NaN if unfinished.
    pub finish: Vec<f64>,
    /// finish - arrival (s); NaN if unfinished.
    pub completion_time: Vec<f64>,
    /// Bytes the receiver holds in order at finish (or at the end of the run).
    pub bytes_delivered: Vec<u64>,
    pub retransmissions: Vec<u32>,
    pub timeouts: Vec<u32>,
    pub finished: Vec<bool>,
    /// The flow arrived during the warm-up period (excluded from statistics).
    pub warmup: Vec<bool>,
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

/// Sampled time series in long form: (time, metric, name, value).
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub time: Vec<f64>,
    pub metric: Vec<u8>,
    pub name: Vec<u16>,
    pub value: Vec<f64>,
    /// Names of metrics (index = `metric`) and entities (index = `name`).
    pub metric_names: Vec<String>,
    pub entity_names: Vec<String>,
}

/// The queue met by each packet arriving at the links listed in `record.arrivals`.
#[derive(Clone, Debug, Default)]
pub struct Arrivals {
    pub time: Vec<f64>,
    /// Index into the run's link names.
    pub link: Vec<u16>,
    pub queue_packets: Vec<u32>,
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
    Text(String),
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub class_names: Vec<String>,
    pub flows: FlowTable,
    pub links: Vec<LinkRow>,
    pub series: Series,
    pub arrivals: Arrivals,
    pub link_names: Vec<String>,
    pub summary: Vec<(String, Scalar)>,
    pub warnings: Vec<String>,
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
            _ => f64::NAN,
        }
    }
}
