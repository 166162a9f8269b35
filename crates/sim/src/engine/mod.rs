//! The engine: simulated time, the event queue and timers. Nothing above this
//! module knows how the queue is implemented; owners hold `Timer`s and links hold
//! `Stamp`s.
mod queue;
mod time;
mod timer;

pub use queue::{EventQueue, Stamp};
pub use time::SimTime;
pub use timer::{Firing, Timer};
