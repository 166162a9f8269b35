//! The load each link is offered: one definition for the engine's overload warning,
//! the run estimate and `cclab validate` (which reads it from `validate()`).
//!
//! A Poisson class offers its arrival rate times its mean size, a flow list the bytes
//! of its flows that start before the end over the time it is active, a CBR class its
//! rate times its flows; a window class's bytes count with their headers (a flow of
//! B bytes puts B·(mss + header)/mss on the wire). Long-lived window flows and rate
//! senders other than CBR take what is left: they are "elastic" and offer nothing.
use super::Config;
use crate::engine::SimTime;
use crate::net::LinkConfig;
use crate::traffic::{Arrivals, ClassConfig};
use crate::transport::rate::RateConfig;
use crate::transport::Transport;
use serde::Serialize;

/// What one link is offered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The link's name.
    pub link: String,
    /// Bits per second offered by the classes with a fixed demand, headers included.
    pub offered_bps: f64,
    /// `offered_bps` over the link's rate.
    pub load: f64,
    /// Classes crossing the link whose demand is elastic (they take what is left).
    pub elastic_classes: u32,
}

/// The bits per second class `c` offers each link of its route in a run of
/// `duration`; None for an elastic class.
pub fn class_offered_bps(c: &ClassConfig, duration: SimTime) -> Option<f64> {
    // On the wire, with every segment's header (a 1-byte MSS sends 41 bytes a byte).
    let wire = match &c.transport {
        Transport::Window { tcp, .. } => tcp.max_packet() as f64 / tcp.mss as f64,
        Transport::Rate { .. } => 1.0,
    };
    match (&c.arrivals, &c.transport) {
        (Arrivals::Poisson { rate_per_s, size }, _) => Some(rate_per_s * size.mean() * 8.0 * wire),
        (Arrivals::FlowList { flows }, _) => {
            let stop = c.stop.map_or(duration, |s| s.min(duration));
            let active = SimTime(stop.0.saturating_sub(c.start.0)).as_secs_f64().max(1e-9);
            let bytes: f64 = flows.iter().filter(|f| f.0 < duration).map(|f| f.1 as f64).sum();
            Some(bytes * 8.0 * wire / active)
        }
        (Arrivals::LongLived { count }, Transport::Rate { cc: RateConfig::Cbr(p), .. }) => Some(p.rate_bps * *count as f64),
        (Arrivals::Starts { times_ns }, Transport::Rate { cc: RateConfig::Cbr(p), .. }) => Some(p.rate_bps * times_ns.len() as f64),
        _ => None,
    }
}

/// The load of every link of `links` offered by `classes` in a run of `duration`.
pub fn offered_load(links: &[LinkConfig], classes: &[ClassConfig], duration: SimTime) -> Vec<LinkLoad> {
    let mut out: Vec<LinkLoad> = links.iter().map(|l| LinkLoad { link: l.name.clone(), ..LinkLoad::default() }).collect();
    for c in classes {
        let offered = class_offered_bps(c, duration);
        for &l in &c.route {
            match offered {
                Some(bps) => out[l as usize].offered_bps += bps,
                None => out[l as usize].elastic_classes += 1,
            }
        }
    }
    for (o, l) in out.iter_mut().zip(links) {
        o.load = o.offered_bps / l.rate_bps as f64;
    }
    out
}

/// The warnings of the links offered at least their capacity.
pub fn overload_warnings(loads: &[LinkLoad]) -> Vec<String> {
    loads
        .iter()
        .filter(|l| l.load >= 1.0)
        .map(|l| {
            format!(
                "link {:?}: offered load of the Poisson, flow-list and CBR classes is {:.3} (headers included), at or above capacity",
                l.link, l.load
            )
        })
        .collect()
}

impl Config {
    /// The load every link is offered (one entry per link, in order).
    pub fn offered_load(&self) -> Vec<LinkLoad> {
        offered_load(&self.links, &self.classes, self.duration)
    }
}
