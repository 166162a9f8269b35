//! Traffic: flow-size distributions, arrival processes and traffic classes.
pub mod arrivals;
pub mod class;
pub mod files;
pub mod size;

pub use arrivals::{Arrivals, Batch, Source};
pub use class::{ClassConfig, Phase};
pub use size::{SizeDist, MAX_FLOW_BYTES};
