//! When a traffic class's flows arrive: the arrival processes, and the source
//! that draws them during a run.
use super::files::{num, read_csv};
use super::size::{SizeDist, MAX_FLOW_BYTES};
use crate::settings::{err, Result};
use std::path::Path;
use crate::engine::SimTime;
use cclab_rng::{StreamKey, Xoshiro256pp as Rng};
use serde::{Deserialize, Serialize};

/// A class's arrival process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// Poisson arrivals at `rate_per_s` flows per second, sizes drawn from `size`.
    Poisson { rate_per_s: f64, size: SizeDist },
    /// `count` flows that never end, all at the class's start.
    LongLived { count: u32 },
    /// Flows at given times with given sizes, sorted by time: [time_ns, bytes].
    FlowList { flows: Vec<(SimTime, u64)> },
    /// Flows that never end, at given times (sorted).
    Starts { times_ns: Vec<SimTime> },
}

/// What a source's event starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    /// One flow of this many bytes.
    One(u64),
    /// This many flows that never end.
    Unbounded(u32),
}

/// The arrival process of one class during a run: its random streams (`arrivals/NAME`
/// and `sizes/NAME`, so adding a class never changes another's draws) and its
/// position in a list.
pub struct Source {
    arrivals: Rng,
    sizes: Rng,
    next: usize,
    /// Flows with random phases: the window (ns), the stream `phase/NAME`, and the
    /// start times drawn at the class's first event (sorted).
    phase: Option<(f64, Rng)>,
    phased: Vec<SimTime>,
}

impl Source {
    /// `phase_window_ns`: each never-ending flow starts at a uniformly random offset
    /// in [0, window) after its start time (None: at its start time).
    pub fn new(seed: u64, class: &str, phase_window_ns: Option<f64>) -> Self {
        Source {
            arrivals: cclab_rng::stream(seed, StreamKey::new("arrivals").part(class)),
            sizes: cclab_rng::stream(seed, StreamKey::new("sizes").part(class)),
            next: 0,
            phase: phase_window_ns.map(|w| (w, cclab_rng::stream(seed, StreamKey::new("phase").part(class)))),
            phased: Vec::new(),
        }
    }

    fn poisson_gap(&mut self, rate_per_s: f64) -> SimTime {
        SimTime::from_secs_f64(self.arrivals.exponential(1.0 / rate_per_s))
    }

    /// The time of the class's first event, if before `stop`.
    pub fn first(&mut self, a: &Arrivals, start: SimTime, stop: SimTime) -> Option<SimTime> {
        if let Some((window, rng)) = &mut self.phase {
            // One offset per flow, in the order the flows are listed; flows start in time order.
            let mut offset = |t: SimTime| t + SimTime((rng.uniform() * *window).floor() as u64);
            self.phased = match a {
                Arrivals::LongLived { count } => (0..*count).map(|_| offset(start)).collect(),
                Arrivals::Starts { times_ns } => times_ns.iter().map(|&t| offset(t)).collect(),
                _ => unreachable!("only never-ending flows take a phase"),
            };
            self.phased.sort_unstable();
            return self.phased.first().copied().filter(|&t| t < stop);
        }
        let t = match a {
            Arrivals::Poisson { rate_per_s, .. } => start + self.poisson_gap(*rate_per_s),
            Arrivals::LongLived { .. } => start,
            Arrivals::FlowList { flows } => {
                self.next = flows.partition_point(|f| f.0 < start);
                flows.get(self.next)?.0
            }
            Arrivals::Starts { times_ns } => *times_ns.first()?,
        };
        (t < stop).then_some(t)
    }

    /// The event at `now`: what it starts, and the time of the next event before `stop`.
    pub fn fire(&mut self, a: &Arrivals, now: SimTime, stop: SimTime) -> (Batch, Option<SimTime>) {
        if self.phase.is_some() {
            return starts_at(&self.phased, &mut self.next, now, stop);
        }
        match a {
            Arrivals::Poisson { rate_per_s, size } => {
                let bytes = size.sample(&mut self.sizes);
                let next = now + self.poisson_gap(*rate_per_s);
                (Batch::One(bytes), (next < stop).then_some(next))
            }
            Arrivals::LongLived { count } => (Batch::Unbounded(*count), None),
            Arrivals::FlowList { flows } => {
                let bytes = flows[self.next].1;
                self.next += 1;
                (Batch::One(bytes), flows.get(self.next).map(|f| f.0).filter(|&t| t < stop))
            }
            Arrivals::Starts { times_ns } => starts_at(times_ns, &mut self.next, now, stop),
        }
    }
}

/// The never-ending flows of a sorted list of start times that start at `now`
/// (from position `next` on), and the next start time before `stop`.
fn starts_at(times: &[SimTime], next: &mut usize, now: SimTime, stop: SimTime) -> (Batch, Option<SimTime>) {
    let n = times[*next..].iter().take_while(|&&t| t == now).count();
    *next += n;
    (Batch::Unbounded(n as u32), times.get(*next).copied().filter(|&t| t < stop))
}

/// Flow list CSV: `start` (seconds), `size` (bytes), `class`; the rows of `class`,
/// sorted by start (stable).
pub fn read_flow_list(path: &Path, class: &str, key: &str) -> Result<Vec<(SimTime, u64)>> {
    let mut flows = Vec::new();
    for (line, r) in read_csv(path, key, &["start", "size", "class"])? {
        if r[2] != class {
            continue;
        }
        let start = num(&r[0], path, line, "start", key)?;
        let size = num(&r[1], path, line, "size", key)?;
        if !(0.0..=SimTime::LONGEST.as_secs_f64()).contains(&start) {
            return err(key, format!("{} line {line}: start must be from 0 to 1e9 seconds, got {start}", path.display()));
        }
        if !(1.0..=MAX_FLOW_BYTES as f64).contains(&size) {
            return err(key, format!("{} line {line}: size must be from 1 to 10^15 bytes, got {size}", path.display()));
        }
        flows.push((SimTime::from_secs_f64(start), size.round() as u64));
    }
    if flows.is_empty() {
        return err(key, format!("{} has no row whose class is {class:?}", path.display()));
    }
    flows.sort_by_key(|f| f.0);
    Ok(flows)
}
