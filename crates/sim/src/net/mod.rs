//! Links and queue disciplines.
pub mod link;
pub mod queue;

pub use link::{ArrivalRecord, Link, LinkStats};
pub use queue::{DropTail, QueueDiscipline, Verdict};
