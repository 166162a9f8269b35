//! The result tables as named columns: the one list of each table's columns, which
//! the Python glue hands over as they are (a new column is a field here, not an edit
//! of the glue). Each list destructures its table whole, so a field added to a
//! table and not listed is a compile error.
use super::{ArrivalTable, FlowTable, LinkRow, Series};

/// One column of a result table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
    Text(Vec<String>),
    /// Whole numbers that may be absent (pandas' nullable Int64).
    OptionalU64(Vec<Option<u64>>),
}

impl Column {
    /// Rows in the column.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U8(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
            Column::OptionalU64(v) => v.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table's columns, in order.
pub type Columns = Vec<(&'static str, Column)>;

impl FlowTable {
    /// The flows table's columns (`class` is an index into the run's class names).
    pub fn into_columns(self) -> Columns {
        let FlowTable { class, id, size, arrival, start, finish, completion_time, bytes_delivered, retransmissions, timeouts, finished, warmup } = self;
        vec![
            ("class", Column::U32(class)),
            ("id", Column::U32(id)),
            ("size", Column::F64(size)),
            ("arrival", Column::F64(arrival)),
            ("start", Column::F64(start)),
            ("finish", Column::F64(finish)),
            ("completion_time", Column::F64(completion_time)),
            ("bytes_delivered", Column::U64(bytes_delivered)),
            ("retransmissions", Column::U32(retransmissions)),
            ("timeouts", Column::U32(timeouts)),
            ("finished", Column::Bool(finished)),
            ("warmup", Column::Bool(warmup)),
        ]
    }
}

/// Collect one field of every row into a column.
macro_rules! column {
    ($rows:expr, $field:ident, $kind:ident) => {
        (stringify!($field), Column::$kind($rows.iter().map(|r| r.$field.clone()).collect()))
    };
}

/// The links table's columns, one row per link.
pub fn link_columns(rows: &[LinkRow]) -> Columns {
    // Every field, so that one added to LinkRow and not listed below fails to compile.
    let _every_field_listed = |r: &LinkRow| {
        let LinkRow { name: _, from: _, to: _, rate_bps: _, delay_s: _, packets_sent: _, bytes_sent: _, drops: _, drop_rate: _, marks: _, utilization: _, mean_queue_packets: _, mean_queue_bytes: _, max_queue_packets: _, max_queue_bytes: _, limit_packets: _, limit_bytes: _, peak_queue_packets: _, peak_queue_bytes: _ } = r;
    };
    vec![
        column!(rows, name, Text),
        column!(rows, from, Text),
        column!(rows, to, Text),
        column!(rows, rate_bps, F64),
        column!(rows, delay_s, F64),
        column!(rows, packets_sent, U64),
        column!(rows, bytes_sent, U64),
        column!(rows, drops, U64),
        column!(rows, drop_rate, F64),
        column!(rows, marks, U64),
        column!(rows, utilization, F64),
        column!(rows, mean_queue_packets, F64),
        column!(rows, mean_queue_bytes, F64),
        column!(rows, max_queue_packets, U64),
        column!(rows, max_queue_bytes, U64),
        column!(rows, limit_packets, OptionalU64),
        column!(rows, limit_bytes, OptionalU64),
        column!(rows, peak_queue_packets, U64),
        column!(rows, peak_queue_bytes, U64),
    ]
}

impl Series {
    /// The series table's columns (`metric` and `name` index `metric_names` and
    /// `entity_names`, which the caller takes first).
    pub fn into_columns(self) -> Columns {
        let Series { time, metric, name, value, metric_names: _, entity_names: _ } = self;
        vec![("time", Column::F64(time)), ("metric", Column::U8(metric)), ("name", Column::U32(name)), ("value", Column::F64(value))]
    }
}

impl ArrivalTable {
    /// The arrivals table's columns (`link` indexes the run's link names).
    pub fn into_columns(self) -> Columns {
        let ArrivalTable { time, link, queue_packets, queue_bytes, backlog, dropped } = self;
        vec![
            ("time", Column::F64(time)),
            ("link", Column::U32(link)),
            ("queue_packets", Column::U64(queue_packets)),
            ("queue_bytes", Column::U64(queue_bytes)),
            ("backlog", Column::F64(backlog)),
            ("dropped", Column::Bool(dropped)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_of_a_table_has_its_rows() {
        let rows = vec![LinkRow { name: "a".into(), limit_packets: Some(5), ..LinkRow::default() }, LinkRow::default()];
        let cols = link_columns(&rows);
        assert_eq!(cols.len(), 19);
        assert!(cols.iter().all(|(_, c)| c.len() == 2));
        assert_eq!(cols[0], ("name", Column::Text(vec!["a".into(), String::new()])));
        assert_eq!(cols[15], ("limit_packets", Column::OptionalU64(vec![Some(5), None])));
        let names: Vec<&str> = FlowTable::default().into_columns().iter().map(|c| c.0).collect();
        assert_eq!(names[..3], ["class", "id", "size"]);
    }
}
