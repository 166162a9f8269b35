//! Flow-level simulator of the Markov / processor-sharing models of the background-transfer
//! papers (Courcoubetis, Dimakis, Kanakakis: "Congestion control for background data
//! transfers with minimal delay impact", and "Designing incentive compatible protocols for
//! background data transfers" (FAIRBAT)).
//!
//! A set of links is shared by classes of flows: Poisson short TCP flows (exponential or
//! Pareto sizes), k long-lived TCP flows, and controlled background aggregates under a
//! policy (threshold, optimal implementable, wTCP, access control, FAIRBAT, rate tracking,
//! vanilla, ideal low priority). Capacity is shared by weighted max-min fairness per link
//! (see [`alloc`]). Results are averaged over independent replications with 95% confidence
//! intervals. No dependencies; deterministic given the seed.

pub mod alloc;
pub mod engine;
pub mod model;
pub mod read;
pub mod stats;

pub use engine::{run_replication, RepStats};
pub use model::{Class, ClassKind, FlowsimError, Policy, Scenario, SizeDist, Source};

/// Everything a run produced: per-replication statistics and the work done.
#[derive(Debug, Clone)]
pub struct Report {
    /// Class names, in scenario order.
    pub names: Vec<String>,
    /// One entry per replication.
    pub reps: Vec<RepStats>,
    /// Arrivals + departures simulated in all replications.
    pub events: u64,
    /// Controller updates simulated in all replications.
    pub ticks: u64,
    /// Wall-clock seconds spent simulating.
    pub wall_s: f64,
}

/// Mean and 95% half-width of each metric of one class.
#[derive(Debug, Clone, Copy)]
pub struct ClassSummary {
    pub mean_number: (f64, f64),
    pub mean_active: (f64, f64),
    pub mean_delay: (f64, f64),
    pub throughput: (f64, f64),
    pub mean_limit: (f64, f64),
    pub sd_limit: (f64, f64),
}

impl Report {
    /// Flow events (arrivals and departures) per wall-clock second.
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.wall_s.max(1e-12)
    }

    /// Per-class means over replications with 95% confidence half-widths.
    pub fn summary(&self) -> Vec<ClassSummary> {
        let col = |i: usize, f: &dyn Fn(&RepStats) -> &Vec<f64>| -> (f64, f64) {
            let xs: Vec<f64> = self.reps.iter().map(|r| f(r)[i]).collect();
            stats::mean_ci(&xs)
        };
        (0..self.names.len())
            .map(|i| ClassSummary {
                mean_number: col(i, &|r| &r.mean_number),
                mean_active: col(i, &|r| &r.mean_active),
                mean_delay: col(i, &|r| &r.mean_delay),
                throughput: col(i, &|r| &r.throughput),
                mean_limit: col(i, &|r| &r.mean_limit),
                sd_limit: col(i, &|r| &r.sd_limit),
            })
            .collect()
    }
}

/// Validate the scenario and run its independent replications.
///
/// * `sc` — the scenario; replications run on `threads` OS threads (1 = sequential);
///   the result does not depend on `threads`.
pub fn simulate(sc: &Scenario, threads: usize) -> Result<Report, FlowsimError> {
    sc.validate()?;
    if threads == 0 {
        return Err(FlowsimError("threads: must be at least 1".into()));
    }
    let t0 = std::time::Instant::now();
    let nrep = sc.replications;
    let reps: Vec<RepStats> = if threads == 1 || nrep == 1 {
        (0..nrep).map(|r| run_replication(sc, r)).collect()
    } else {
        let mut out: Vec<Option<RepStats>> = vec![None; nrep as usize];
        std::thread::scope(|s| {
            let chunks: Vec<(usize, &mut [Option<RepStats>])> = {
                let per = (nrep as usize).div_ceil(threads);
                out.chunks_mut(per)
                    .enumerate()
                    .map(|(i, c)| (i * per, c))
                    .collect()
            };
            for (start, chunk) in chunks {
                s.spawn(move || {
                    for (j, slot) in chunk.iter_mut().enumerate() {
                        *slot = Some(run_replication(sc, (start + j) as u32));
                    }
                });
            }
        });
        out.into_iter().map(|x| x.unwrap()).collect()
    };
    let wall_s = t0.elapsed().as_secs_f64();
    Ok(Report {
        names: sc.classes.iter().map(|c| c.name.clone()).collect(),
        events: reps.iter().map(|r| r.events).sum(),
        ticks: reps.iter().map(|r| r.ticks).sum(),
        reps,
        wall_s,
    })
}

#[cfg(test)]
mod tests;
