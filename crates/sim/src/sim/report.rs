//! The tables of a finished run: flows, links, series, per-arrival queues and the
//! summary scalars.
use super::Simulation;
use crate::metrics::{ArrivalTable, FlowRecord, FlowTable, LinkRow, RunResult, Scalar};
use crate::net::{Link, LinkConfig};
use crate::transport::tcp::Tcp;
use crate::transport::Conn;

impl Simulation {
    /// The tables of the run, which ended at `self.net.now`.
    pub(super) fn report(mut self, stopped_early: bool) -> RunResult {
        let end = self.net.now;
        let warm = self.cfg.warmup;
        let measured = if end > warm { (end - warm).as_secs_f64() } else { 0.0 };
        for l in self.net.links.iter_mut() {
            l.advance(end);
        }
        // Connections still open: copy their state into the records.
        for conn in self.conns.iter().flatten() {
            if let Conn::Tcp(tcp) = conn {
                copy_into(tcp, &mut self.records[tcp.ep.flow as usize]);
            }
        }
        let counters = self.net.packet_counters();
        let traces = self.trace_finish(end);
        let ft = FlowTable::new(&self.records, warm);
        let links: Vec<LinkRow> = self.net.links.iter().zip(&self.cfg.links).map(|(l, c)| link_row(l, c, &self.cfg.nodes, measured)).collect();
        let mut summary: Vec<(String, Scalar)> = Vec::new();
        let mut put = |k: &str, v: Scalar| summary.push((k.to_string(), v));
        put("name", Scalar::Text(self.cfg.name.clone()));
        put("seed", Scalar::Unsigned(self.cfg.seed));
        put("duration_s", Scalar::Num(self.cfg.duration.as_secs_f64()));
        put("simulated_s", Scalar::Num(end.as_secs_f64()));
        put("warmup_s", Scalar::Num(warm.as_secs_f64()));
        put("completed_run", Scalar::Int(!stopped_early as i64));
        // Every count says what it counts, so that it agrees with the table beside it:
        // flows of the measured period are the flows table's rows not flagged `warmup`
        // (a never-ending flow that starts in the warm-up is not one of them), and
        // `measured_packets_*` count [warm-up, end] as the links table does; the
        // `whole_run_` counters include the warm-up (docs/engine.md, "Results").
        let counted = |i: usize| !ft.warmup[i];
        put("flows_arrived", Scalar::Int((0..ft.len()).filter(|&i| counted(i)).count() as i64));
        put("flows_finished", Scalar::Int((0..ft.len()).filter(|&i| counted(i) && ft.finished[i]).count() as i64));
        // The whole run's packets (a conservation check: sent = delivered + dropped +
        // in flight at the end), then those of the measured period [warm-up, end].
        put("whole_run_packets_sent", Scalar::Int(counters.sent as i64));
        put("whole_run_packets_delivered", Scalar::Int(counters.delivered as i64));
        put("whole_run_packets_dropped", Scalar::Int(counters.dropped as i64));
        put("whole_run_packets_marked", Scalar::Int(counters.marked as i64));
        put("packets_in_flight", Scalar::Int(counters.in_flight as i64));
        let w = self.at_warmup;
        put("packets_in_flight_at_warmup", Scalar::Int(w.in_flight as i64));
        put("measured_packets_sent", Scalar::Int((counters.sent - w.sent) as i64));
        put("measured_packets_delivered", Scalar::Int((counters.delivered - w.delivered) as i64));
        put("measured_packets_dropped", Scalar::Int((counters.dropped - w.dropped) as i64));
        put("measured_packets_marked", Scalar::Int((counters.marked - w.marked) as i64));
        for (ci, c) in self.cfg.classes.iter().enumerate() {
            let sel: Vec<usize> = (0..ft.len()).filter(|&i| ft.class[i] as usize == ci && counted(i)).collect();
            let done: Vec<f64> = sel.iter().filter(|&&i| ft.finished[i]).map(|&i| ft.completion_time[i]).collect();
            let mean = if done.is_empty() { f64::NAN } else { done.iter().sum::<f64>() / done.len() as f64 };
            put(&format!("{}.flows", c.name), Scalar::Int(sel.len() as i64));
            put(&format!("{}.finished", c.name), Scalar::Int(done.len() as i64));
            put(&format!("{}.mean_completion_time_s", c.name), Scalar::Num(mean));
            let thr = if measured > 0.0 { self.classes[ci].delivered_after_warmup as f64 * 8.0 / measured } else { 0.0 };
            put(&format!("{}.throughput_bps", c.name), Scalar::Num(thr));
        }
        self.access_summary(end, &mut |k, v| summary.push((k, v)));
        let mut put = |k: &str, v: Scalar| summary.push((k.to_string(), v));
        put("events", Scalar::Int(self.events as i64));
        put("wall_time_s", Scalar::Num(self.wall_secs));
        put("events_per_s", Scalar::Num(self.events as f64 / self.wall_secs.max(1e-9)));
        put("wall_s_per_sim_s", Scalar::Num(self.wall_secs / end.as_secs_f64().max(1e-9)));
        RunResult {
            arrivals: arrival_table(&self.net.links),
            link_names: self.cfg.links.iter().map(|l| l.name.clone()).collect(),
            class_names: self.cfg.classes.iter().map(|c| c.name.clone()).collect(),
            flows: ft,
            links,
            series: self.series,
            summary,
            warnings: self.warnings,
            traces,
        }
    }
}


/// The queue met by every recorded arrival, link after link.
fn arrival_table(links: &[Link]) -> ArrivalTable {
    let mut arrivals = ArrivalTable::default();
    for (li, l) in links.iter().enumerate() {
        for a in &l.arrivals {
            arrivals.time.push(a.time.as_secs_f64());
            arrivals.link.push(li as u32);
            arrivals.queue_packets.push(a.queue_packets);
            arrivals.queue_bytes.push(a.queue_bytes);
            arrivals.backlog.push(a.backlog.as_secs_f64());
            arrivals.dropped.push(a.dropped);
        }
    }
    arrivals
}

/// Copy a connection's counters into its flow record.
pub(super) fn copy_into(tcp: &Tcp, rec: &mut FlowRecord) {
    rec.bytes_delivered = tcp.bytes_received().min(rec.size);
    rec.retransmissions = tcp.retransmits;
    rec.timeouts = tcp.timeouts;
}

/// The links-table row of a link measured for `measured` seconds.
fn link_row(l: &Link, c: &LinkConfig, nodes: &[String], measured: f64) -> LinkRow {
    let s = &l.stats;
    let offered = s.packets_sent + s.drops;
    let per_s = |x: u128| if measured > 0.0 { x as f64 * 1e-9 / measured } else { 0.0 };
    let (limit_packets, limit_bytes) = c.queue.limits();
    LinkRow {
        name: c.name.clone(),
        from: nodes[c.from as usize].clone(),
        to: nodes[c.to as usize].clone(),
        rate_bps: c.rate_bps as f64,
        delay_s: c.delay.as_secs_f64(),
        packets_sent: s.packets_sent,
        bytes_sent: s.bytes_sent,
        drops: s.drops,
        drop_rate: if offered > 0 { s.drops as f64 / offered as f64 } else { 0.0 },
        marks: s.marks,
        utilization: per_s(s.busy_ns),
        mean_queue_packets: per_s(s.queue_area_packets),
        mean_queue_bytes: per_s(s.queue_area_bytes),
        max_queue_packets: s.max_queue_packets,
        max_queue_bytes: s.max_queue_bytes,
        limit_packets,
        limit_bytes,
        peak_queue_packets: s.peak_packets_all,
        peak_queue_bytes: s.peak_bytes_all,
    }
}
