//! Timers: a deadline owned by a connection, a traffic source or the recorder,
//! which the event queue turns into entries lazily.
//!
//! Owners move their deadlines freely (a TCP sender restarts its retransmission
//! timer on every ACK) without touching the queue. The queue holds at most one
//! live entry per timer, at or before its deadline: [`EventQueue::arm`] adds an
//! entry only when the deadline is earlier than the pending one, and when an entry
//! fires early (the deadline moved later, or the timer was stopped)
//! [`EventQueue::fire`] says so and the owner is re-armed. An entry superseded by an
//! earlier one is recognised when it pops and dropped in O(1); nothing ever
//! searches the queue.
//!
//! [`EventQueue::arm`]: super::EventQueue::arm
//! [`EventQueue::fire`]: super::EventQueue::fire
use super::SimTime;

/// A deadline and the time of its pending queue entry (`SimTime::MAX`: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    deadline: SimTime,
    entry: SimTime,
}

impl Default for Timer {
    fn default() -> Self {
        Timer { deadline: SimTime::MAX, entry: SimTime::MAX }
    }
}

/// What a popped timer entry means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Firing {
    /// The deadline has come: run the owner's handler, then re-arm.
    Due,
    /// The entry fired before the deadline (moved later or stopped): re-arm.
    Early,
    /// Another entry of this timer is the live one: ignore.
    Stale,
}

impl Timer {
    /// Set the deadline to `at` (earlier or later than before).
    #[inline]
    pub fn set(&mut self, at: SimTime) {
        self.deadline = at;
    }
    /// No deadline.
    #[inline]
    pub fn stop(&mut self) {
        self.deadline = SimTime::MAX;
    }
    /// The deadline, if set.
    #[inline]
    pub fn deadline(&self) -> Option<SimTime> {
        (self.deadline != SimTime::MAX).then_some(self.deadline)
    }
    #[inline]
    pub fn is_set(&self) -> bool {
        self.deadline != SimTime::MAX
    }
    /// If the queue needs a new entry for this timer, record it and return its time.
    #[inline]
    pub(super) fn needs_entry(&mut self) -> Option<SimTime> {
        if self.deadline < self.entry {
            self.entry = self.deadline;
            Some(self.deadline)
        } else {
            None
        }
    }
    /// An entry of this timer popped at `now`.
    #[inline]
    pub(super) fn popped(&mut self, now: SimTime) -> Firing {
        if self.entry != now {
            return Firing::Stale;
        }
        self.entry = SimTime::MAX;
        if self.deadline <= now {
            Firing::Due
        } else {
            Firing::Early
        }
    }
}
