//! Links and queue disciplines.
pub mod link;
pub mod queue;

pub use link::{Link, LinkStats};
pub use queue::{DropTail, QueueDiscipline, Verdict};
