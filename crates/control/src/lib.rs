//! Access control of background transfers, as small state machines that know
//! nothing of simulators or sockets (sans-IO).
//!
//! A background sender splits its data into chunks (files). Instead of opening a TCP
//! connection for each chunk when it arrives, it queues the chunks and lets at most
//! M of them transfer at once (Courcoubetis, Dimakis, Kanakakis, "Congestion control
//! for background data transfers with minimal delay impact", §III-B, eq. 26). M is
//! * static ([`StaticParams`]);
//! * adapted so that the rate M connections obtain tracks the arriving load (the same
//!   paper, §IV; [`RateTrackingParams`], [`tracking`]);
//! * adapted so that the queue of waiting chunks hovers at a target (FAIRBAT, "Designing
//!   incentive compatible protocols for background data transfers", §III, eq. 2;
//!   [`FairbatParams`], [`fairbat`]).
//!
//! A fractional M is realised by alternating between ⌊M⌋ and ⌈M⌉ active chunks
//! ([`alternate`]). The flow-level simulator (`crates/flowsim`), the packet-level
//! simulator (`crates/sim`) and the real-network transfer manager use this crate; the
//! parameters, their defaults and their checks live in [`params`] only.
//!
//! Time is in seconds (the flow-level model's time unit, whatever it is, plays the
//! role of the second there), sizes in bytes (or the model's unit of data).
pub mod alternate;
pub mod controller;
pub mod fairbat;
pub mod params;
pub mod read;
pub mod tracking;
pub mod window;

pub use controller::{AccessController, Averages};
pub use params::{
    AccessParams, FairbatParams, Fractional, GainScale, GainSchedule, ParamError, QueueMeasure, RateTrackingParams, StaticParams,
    POLICIES,
};

#[cfg(test)]
mod tests;
