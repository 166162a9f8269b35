//! Transports: one TCP machinery (`tcp`) shared by every window-based congestion
//! controller (`cc`), in the spirit of Linux `tcp_congestion_ops` and ns-3
//! `TcpCongestionOps`, and paced datagram senders (`rate`) steered by rate
//! controllers. A connection is one [`Conn`].
pub mod cc;
pub mod endpoints;
pub mod rate;
pub mod records;
pub mod rtt;
pub mod state;
pub mod tcp;

use crate::settings::{err, Result, ScenarioError, Table, Value};
use cc::{CcConfig, Registry};
use rate::{RateConfig, RateConn, RATE_PROTOCOLS};
use serde::{Deserialize, Serialize};
use tcp::{Tcp, TcpParams, MAX_PACKET_BYTES};

pub use endpoints::Endpoints;

/// How a traffic class's flows send: the TCP machinery with a congestion
/// controller, or paced datagrams with a rate controller.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Window { tcp: TcpParams, cc: CcConfig },
    Rate { cc: RateConfig, packet_bytes: u32 },
}

impl Transport {
    /// The protocol name.
    pub fn protocol(&self) -> &str {
        match self {
            Transport::Window { cc, .. } => cc.name(),
            Transport::Rate { cc, .. } => cc.name(),
        }
    }

    /// Bytes on the wire of the largest packet a flow sends.
    pub fn max_packet(&self) -> u64 {
        match self {
            Transport::Window { tcp, .. } => tcp.max_packet(),
            Transport::Rate { packet_bytes, .. } => *packet_bytes as u64,
        }
    }

    /// Read a traffic class's transport from its table: `protocol` (default
    /// "newreno"), its parameters `cc = { ... }`, for window protocols the class's
    /// `tcp = { ... }` over the scenario's `base_tcp`, and for rate protocols the
    /// datagram size `packet_size` (default 1500 bytes).
    pub fn read(class: &mut Table, base_tcp: &TcpParams, registry: &Registry) -> Result<Transport> {
        let protocol: String = class.or("protocol", "newreno".to_string())?;
        let empty = Value::Object(Default::default());
        let cc = match class.table("cc")? {
            Some(t) => t,
            None => Table::new(&empty, class.key_path("cc"))?,
        };
        let tcp = class.table("tcp")?;
        let packet = class.get::<u32>("packet_size")?;
        if registry.knows(&protocol) {
            if packet.is_some() {
                return err(class.key_path("packet_size"), format!("only rate-based protocols take `packet_size`; {protocol} sends segments of tcp.mss bytes"));
            }
            let tcp = match tcp {
                Some(t) => TcpParams::read(t, base_tcp)?,
                None => base_tcp.clone(),
            };
            let cc = registry.read(&protocol, cc)?;
            return Ok(Transport::Window { tcp, cc });
        }
        if RATE_PROTOCOLS.contains(&protocol.as_str()) {
            if let Some(t) = tcp {
                return err(t.path().to_string(), format!("{protocol} is not a TCP protocol: it takes no `tcp` table"));
            }
            let packet_bytes = Self::datagram_size(packet, class)?;
            return Ok(Transport::Rate { cc: RateConfig::read(&protocol, cc)?, packet_bytes });
        }
        let mut known = registry.names();
        known.extend_from_slice(RATE_PROTOCOLS);
        err(class.key_path("protocol"), format!("unknown protocol {protocol:?}; expected one of: {}", known.join(", ")))
    }

    /// A datagram size as written (`packet_size`, default 1500 bytes), checked.
    pub fn datagram_size(packet: Option<u32>, class: &Table) -> Result<u32> {
        let bytes = packet.unwrap_or(1500);
        if bytes == 0 || bytes as u64 > MAX_PACKET_BYTES {
            return err(class.key_path("packet_size"), format!("expected 1 to {MAX_PACKET_BYTES} bytes, got {bytes}"));
        }
        Ok(bytes)
    }
}

/// The canonical form: `{"kind": "window", "tcp": {...}, "cc": {...}}` or
/// `{"kind": "rate", "cc": {...}, "packet_bytes": N}`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum TransportForm {
    Window { tcp: TcpParams, cc: CcConfig },
    Rate { cc: ControllerForm, packet_bytes: u32 },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ControllerForm {
    protocol: String,
    params: Value,
}

impl Serialize for Transport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let form = match self {
            Transport::Window { tcp, cc } => TransportForm::Window { tcp: tcp.clone(), cc: cc.clone() },
            Transport::Rate { cc, packet_bytes } => TransportForm::Rate {
                cc: ControllerForm { protocol: cc.name().to_string(), params: cc.params() },
                packet_bytes: *packet_bytes,
            },
        };
        form.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match TransportForm::deserialize(d)? {
            TransportForm::Window { tcp, cc } => Transport::Window { tcp, cc },
            TransportForm::Rate { cc, packet_bytes } => Transport::Rate {
                cc: RateConfig::from_parts(&cc.protocol, cc.params, "cc").map_err(|e: ScenarioError| serde::de::Error::custom(e))?,
                packet_bytes,
            },
        })
    }
}

/// One connection of the simulator's connection table.
#[derive(Clone, Debug)]
pub enum Conn {
    Tcp(Tcp),
    Rate(RateConn),
}

impl Conn {
    /// The flow this connection carries.
    pub fn flow(&self) -> u32 {
        match self {
            Conn::Tcp(t) => t.ep.flow,
            Conn::Rate(r) => r.flow(),
        }
    }
}
