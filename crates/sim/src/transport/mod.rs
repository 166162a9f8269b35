//! Window-based transport: one TCP sender/receiver machinery (`tcp`) shared by
//! every congestion controller (`cc`), in the spirit of Linux `tcp_congestion_ops`
//! and ns-3 `TcpCongestionOps`.
pub mod cc;
pub mod newreno;
pub mod tcp;

pub use cc::{AckEvent, CcState, CongestionControl, Controller};
pub use newreno::NewReno;
pub use tcp::{Tcp, TcpOutput};
