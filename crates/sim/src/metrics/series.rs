//! Sampled time series in long form: (time, metric, entity, value).

/// Sampled time series: one row per (sample time, metric, entity).
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub time: Vec<f64>,
    pub metric: Vec<u8>,
    pub name: Vec<u32>,
    pub value: Vec<f64>,
    /// Names of metrics (index = `metric`) and entities (index = `name`).
    pub metric_names: Vec<String>,
    pub entity_names: Vec<String>,
}

/// Metrics of the series table.
pub const QUEUE_PACKETS: u8 = 0;
pub const QUEUE_BYTES: u8 = 1;
pub const THROUGHPUT_BPS: u8 = 2;
pub const ACTIVE_FLOWS: u8 = 3;
/// Access control (only in runs with an access-controlled class): the limit M, and
/// the chunks transferring and waiting.
pub const ACCESS_LIMIT: u8 = 4;
pub const ACCESS_ACTIVE: u8 = 5;
pub const ACCESS_WAITING: u8 = 6;

impl Series {
    /// An empty series over links and classes (entities: links first, then classes).
    pub fn new(links: impl Iterator<Item = String>, classes: impl Iterator<Item = String>) -> Self {
        Series {
            metric_names: ["queue_packets", "queue_bytes", "throughput_bps", "active_flows"].map(String::from).to_vec(),
            entity_names: links.chain(classes).collect(),
            ..Series::default()
        }
    }

    /// Name the access-control metrics too (a run with an access-controlled class).
    pub fn with_access_metrics(mut self) -> Self {
        self.metric_names.extend(["access_limit", "access_active", "access_waiting"].map(String::from));
        self
    }

    /// One row.
    #[inline]
    pub fn push(&mut self, time: f64, metric: u8, entity: u32, value: f64) {
        self.time.push(time);
        self.metric.push(metric);
        self.name.push(entity);
        self.value.push(value);
    }
}
