//! cclab packet-level simulator.
