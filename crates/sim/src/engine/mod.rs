//! Simulation time, the event queue and the random-number streams.
pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::{stream, Rng};
pub use time::SimTime;
