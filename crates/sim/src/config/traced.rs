//! What a run's `[trace]` adds to its estimate (`estimate.rs`): rows of the flows
//! and packets traces per flow selector, packets offered to each traced link and
//! captured on each captured link, and the interval records.
use super::Config;
use crate::transport::Transport;

/// Rows of the flows trace per data packet of a traced window flow: the
/// machinery's variables that move on an ACK (cwnd, bytes in flight, SRTT,
/// RTTVAR, RTO, the RTT and one-way delay samples: 4 to 7 of them) and a
/// controller's few own.
pub const VAR_ROWS_PER_PACKET: f64 = 8.0;
/// Rows of the packets trace per data packet of a traced flow: its sending and
/// its ACK (a rate flow: its sending), and with SACK up to 4 blocks per ACK,
/// counted as 2 more.
const PACKET_ROWS: f64 = 2.0;
const SACK_ROWS: f64 = 2.0;

/// What tracing adds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceNeeds {
    /// Per flow selector: rows of the flows trace and of the packets trace.
    pub var_rows: Vec<f64>,
    pub packet_rows: Vec<f64>,
    /// Per entry of `trace.links`: packets offered; of `trace.pcap`: packets captured.
    pub link_packets: Vec<f64>,
    pub pcap_packets: Vec<f64>,
    /// Interval records of the flow variables (events).
    pub ticks: f64,
}

/// The needs of `cfg`'s traces, from each class's (flows, data packets) and the
/// packets crossing each link.
pub fn needs(cfg: &Config, classes: &[(f64, f64)], per_link: &[f64]) -> TraceNeeds {
    let t = &cfg.trace;
    let ticks = t.interval.map_or(0.0, |iv| (cfg.duration.as_secs_f64() / iv.as_secs_f64()).floor());
    let mut n = TraceNeeds { ticks, ..TraceNeeds::default() };
    for s in &t.flows {
        let matches = |c: usize| s.class.is_none_or(|k| k as usize == c);
        // Flows a selector takes in each class: all of the class's, at most its ids,
        // and `first` shared out over the classes it matches.
        let mut taken: Vec<f64> = (0..cfg.classes.len()).map(|c| if matches(c) { classes[c].0 } else { 0.0 }).collect();
        let limit = s.first.map(|f| f as f64).into_iter().chain(s.ids.as_ref().map(|i| i.len() as f64)).fold(f64::INFINITY, f64::min);
        let total: f64 = taken.iter().sum();
        if total > limit {
            taken.iter_mut().for_each(|x| *x *= limit / total);
        }
        let (mut vars, mut packets) = (0.0, 0.0);
        for (c, class) in cfg.classes.iter().enumerate() {
            let (flows, data) = classes[c];
            if taken[c] <= 0.0 || flows <= 0.0 {
                continue;
            }
            let traced = data * taken[c] / flows;
            let (per_var, per_packet) = match &class.transport {
                Transport::Window { tcp, .. } => (VAR_ROWS_PER_PACKET, PACKET_ROWS + if tcp.sack { SACK_ROWS } else { 0.0 }),
                Transport::Rate { .. } => (1.0, 1.0),
            };
            let every_change = traced * per_var;
            // At an interval: every variable of every open traced flow each time, but
            // not more than a record per packet (a flow lives while it sends).
            vars += if ticks > 0.0 { (ticks * taken[c] * VAR_ROWS_PER_PACKET).min(every_change) } else { every_change };
            if t.packets {
                packets += traced * per_packet;
            }
        }
        n.var_rows.push(vars);
        n.packet_rows.push(packets);
    }
    n.link_packets = t.links.iter().map(|&l| per_link[l as usize]).collect();
    n.pcap_packets = t.pcap.iter().map(|&l| per_link[l as usize]).collect();
    n
}
