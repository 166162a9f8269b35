//! Per-flow records and the flows table.
use crate::engine::SimTime;

/// What the run keeps of one flow (finished or not).
#[derive(Clone, Copy, Debug)]
pub struct FlowRecord {
    pub class: u32,
    /// Bytes to transfer (u64::MAX: a flow that never ends).
    pub size: u64,
    /// When the file arrived at the sender (a chunk of an access-controlled class
    /// enters its queue then).
    pub arrival: SimTime,
    /// When its connection opened (later than the arrival for a chunk that waited).
    pub start: Option<SimTime>,
    pub finish: Option<SimTime>,
    pub bytes_delivered: u64,
    pub retransmissions: u32,
    pub timeouts: u32,
}

impl FlowRecord {
    pub fn new(class: u32, size: u64, arrival: SimTime) -> Self {
        FlowRecord { class, size, arrival, start: None, finish: None, bytes_delivered: 0, retransmissions: 0, timeouts: 0 }
    }
}

/// One row per flow that arrived (finished or not), as columns.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    pub class: Vec<u32>,
    pub id: Vec<u32>,
    /// Bytes to transfer; NaN for flows that never end.
    pub size: Vec<f64>,
    /// Arrival time of the flow (s).
    pub arrival: Vec<f64>,
    /// When its connection opened (s): the arrival, or for a chunk of an
    /// access-controlled class the end of its wait; NaN if it never started.
    pub start: Vec<f64>,
    /// When the receiver held every byte (s); NaN if unfinished.
    pub finish: Vec<f64>,
    /// finish - arrival (s), waiting included; NaN if unfinished.
    pub completion_time: Vec<f64>,
    /// Bytes the receiver holds in order at finish (or at the end of the run).
    pub bytes_delivered: Vec<u64>,
    pub retransmissions: Vec<u32>,
    pub timeouts: Vec<u32>,
    pub finished: Vec<bool>,
    /// The flow arrived during the warm-up period (excluded from statistics).
    pub warmup: Vec<bool>,
}

impl FlowTable {
    /// The table of `records`, flows arriving before `warmup` flagged.
    pub fn new(records: &[FlowRecord], warmup: SimTime) -> Self {
        let mut ft = FlowTable::default();
        for (id, r) in records.iter().enumerate() {
            ft.class.push(r.class);
            ft.id.push(id as u32);
            ft.size.push(if r.size == u64::MAX { f64::NAN } else { r.size as f64 });
            ft.arrival.push(r.arrival.as_secs_f64());
            ft.start.push(r.start.map(|s| s.as_secs_f64()).unwrap_or(f64::NAN));
            ft.finish.push(r.finish.map(|f| f.as_secs_f64()).unwrap_or(f64::NAN));
            ft.completion_time.push(r.finish.map(|f| (f - r.arrival).as_secs_f64()).unwrap_or(f64::NAN));
            ft.bytes_delivered.push(if r.finish.is_some() { r.size } else { r.bytes_delivered });
            ft.retransmissions.push(r.retransmissions);
            ft.timeouts.push(r.timeouts);
            ft.finished.push(r.finish.is_some());
            ft.warmup.push(r.arrival < warmup);
        }
        ft
    }

    pub fn len(&self) -> usize {
        self.id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}
