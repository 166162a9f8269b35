//! A connection's identity and where its packets go.

/// Where a connection's packets go: its identity and its two routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Flow id (unique for the run).
    pub flow: u32,
    /// Slot in the simulator's connection table.
    pub conn: u32,
    /// The traffic class the flow belongs to.
    pub class: u32,
    pub data_route: u32,
    pub ack_route: u32,
}
