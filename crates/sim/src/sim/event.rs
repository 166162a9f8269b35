//! The two kinds of event the loop knows: a packet arriving at the far end of a
//! link, and a timer firing for its owner.

/// The timers of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnTimer {
    Rto,
    DelAck,
    /// The congestion or rate controller's own deadline.
    Cc,
    /// A rate-based sender's next datagram.
    Send,
    /// A rate flow's receiver: its feedback timer.
    Feedback,
}

/// Who a timer belongs to.
#[derive(Clone, Copy, Debug)]
pub enum Owner {
    /// A connection, by slot and flow id (a slot is reused by later flows).
    Conn { slot: u32, flow: u32, timer: ConnTimer },
    /// A traffic class's arrival process.
    Source(u32),
    /// A traffic class's access controller.
    Access(u32),
    /// The sampler of the series table.
    Recorder,
    /// A link's queue discipline (RCP's rate updates), by link index.
    Link(u32),
    /// The end of the warm-up: counters and the series start from here.
    Warmup,
    /// The traced flows' variables are due (`[trace] interval`).
    Trace,
}

/// An event: a packet arriving somewhere, or a timer firing for an owner (16 bytes).
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The packet at the head of a link's wire reaches the link's far end.
    Arrival(u32),
    Timer(Owner),
}
