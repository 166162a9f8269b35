//! Batches of independent runs (fresh random flow arrivals per run), spread over threads.
//! Run r always draws from the stream `smooth/run/r` of the seed, so results do not
//! depend on the thread count.
use crate::arrivals::{arrival_ticks_into, period_ticks, reduce_sorted_into, Dist, TICKS_PER_PACKET};
use crate::error::ParamError;
use crate::fifo::{steady_state_into, SteadyStats, DROPPED};

/// The random stream of run `run` (cclab's one derivation, `cclab_rng::stream`).
pub fn run_stream(seed: u64, run: u64) -> cclab_rng::Xoshiro256pp {
    cclab_rng::stream(seed, cclab_rng::StreamKey::new("smooth/run").num(run))
}

/// Per-thread buffers reused across runs.
#[derive(Default)]
struct Scratch {
    arrivals: Vec<i64>,
    phases: Vec<i64>,
    merge: Vec<i64>,
    waits: Vec<i64>,
}

impl Scratch {
    /// Draw run `run`'s arrivals and compute its steady state; waits stay in `self.waits`.
    #[allow(clippy::too_many_arguments)]
    fn run(&mut self, n: usize, dist: Dist, utilization: f64, period: i64, buffer: Option<u64>,
           max_periods: u32, seed: u64, run: usize) -> SteadyStats {
        let mut rng = run_stream(seed, run as u64);
        arrival_ticks_into(n, dist, utilization, TICKS_PER_PACKET, &mut rng, &mut self.arrivals);
        reduce_sorted_into(&self.arrivals, period, &mut self.phases, &mut self.merge);
        steady_state_into(&self.phases, period, TICKS_PER_PACKET, buffer, max_periods, &mut self.waits)
    }
}

/// Resolve a thread count: 0 means all available cores; never more threads than runs.
fn thread_count(threads: usize, runs: usize) -> usize {
    let t = if threads == 0 {
        std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1)
    } else {
        threads
    };
    t.clamp(1, runs.max(1))
}

/// Fill `out` (rows of `row_len`, one per run) by calling `f(run, row, scratch)` on threads.
fn parallel_rows<T: Send, F>(out: &mut [T], row_len: usize, threads: usize, f: F)
where
    F: Fn(usize, &mut [T], &mut Scratch) + Sync,
{
    if row_len == 0 || out.is_empty() {
        return;
    }
    let rows = out.len() / row_len;
    let threads = thread_count(threads, rows);
    let per = rows.div_ceil(threads);
    if threads == 1 {
        let mut sc = Scratch::default();
        for (r, row) in out.chunks_mut(row_len).enumerate() {
            f(r, row, &mut sc);
        }
        return;
    }
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(per * row_len).enumerate() {
            let f = &f;
            s.spawn(move || {
                let mut sc = Scratch::default();
                for (r, row) in chunk.chunks_mut(row_len).enumerate() {
                    f(c * per + r, row, &mut sc);
                }
            });
        }
    });
}

/// Check the arguments shared by the batch functions.
fn check_batch(n: usize, utilization: f64, runs: usize, dist: Dist) -> Result<i64, ParamError> {
    if n == 0 {
        return Err(ParamError::new("n", "must be at least 1 flow"));
    }
    if runs == 0 {
        return Err(ParamError::new("runs", "must be at least 1"));
    }
    dist.validate()?;
    period_ticks(n, utilization, TICKS_PER_PACKET)
}

/// Steady-state queue sizes (packets, eq. 6) of every packet of every run with an
/// overprovisioned buffer (section V): a `runs * n` row-major vector, each row in
/// order of arrival within the period.
pub fn queue_runs(n: usize, dist: Dist, utilization: f64, runs: usize, seed: u64, threads: usize)
    -> Result<Vec<f64>, ParamError> {
    let period = check_batch(n, utilization, runs, dist)?;
    let mut out = vec![0.0f64; n * runs];
    let scale = 1.0 / TICKS_PER_PACKET as f64;
    parallel_rows(&mut out, n, threads, |run, row, sc| {
        let st = sc.run(n, dist, utilization, period, None, 3, seed, run);
        assert!(st.converged && st.drops == 0, "overprovisioned steady state must repeat within 2 periods");
        for (q, &w) in row.iter_mut().zip(&sc.waits) {
            *q = w as f64 * scale;
        }
    });
    Ok(out)
}

/// Outcome of one finite-buffer run (section VI).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossRun {
    /// Steady-state loss rate: drops over packets sent in the repeating pattern.
    pub loss: f64,
    /// Periods simulated until the boundary workload repeated.
    pub periods: u32,
    /// Length of the repeating pattern in periods.
    pub cycle: u32,
    /// Whether it repeated within `max_periods`.
    pub converged: bool,
    /// Largest steady-state queue (packets) among accepted packets.
    pub max_queue: f64,
}

/// Steady-state loss with a drop-tail buffer of `buffer` packets for each of `runs` runs.
#[allow(clippy::too_many_arguments)]
pub fn loss_runs(n: usize, dist: Dist, utilization: f64, buffer: u64, runs: usize, seed: u64,
                 max_periods: u32, threads: usize) -> Result<Vec<LossRun>, ParamError> {
    let period = check_batch(n, utilization, runs, dist)?;
    if max_periods == 0 {
        return Err(ParamError::new("max_periods", "must be at least 1"));
    }
    let mut out = vec![LossRun::default(); runs];
    let scale = 1.0 / TICKS_PER_PACKET as f64;
    parallel_rows(&mut out, 1, threads, |run, row, sc| {
        let st = sc.run(n, dist, utilization, period, Some(buffer), max_periods, seed, run);
        let max_w = sc.waits.iter().copied().filter(|&w| w != DROPPED).max().unwrap_or(0);
        row[0] = LossRun {
            loss: st.loss(n),
            periods: st.periods,
            cycle: st.cycle,
            converged: st.converged,
            max_queue: max_w as f64 * scale,
        };
    });
    Ok(out)
}

/// Arrival times (ticks, t_1 = 0) of run `run`: exactly the draws `queue_runs` and
/// `loss_runs` use for that run, at any tick resolution.
pub fn run_arrivals(n: usize, dist: Dist, utilization: f64, seed: u64, run: usize, ticks_per_packet: i64)
    -> Result<Vec<i64>, ParamError> {
    dist.validate()?;
    period_ticks(n, utilization, ticks_per_packet)?;
    let mut rng = run_stream(seed, run as u64);
    let mut out = Vec::new();
    arrival_ticks_into(n, dist, utilization, ticks_per_packet, &mut rng, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_does_not_change_results() {
        let a = queue_runs(300, Dist::Exponential, 1.0, 7, 42, 1).unwrap();
        let b = queue_runs(300, Dist::Exponential, 1.0, 7, 42, 3).unwrap();
        assert_eq!(a, b);
        let la = loss_runs(300, Dist::Pareto { k: 2.1 }, 1.0, 5, 5, 42, 10_000, 1).unwrap();
        let lb = loss_runs(300, Dist::Pareto { k: 2.1 }, 1.0, 5, 5, 42, 10_000, 2).unwrap();
        assert_eq!(la, lb);
    }

    #[test]
    fn huge_buffer_means_no_loss() {
        let q = queue_runs(500, Dist::Exponential, 1.0, 4, 9, 1).unwrap();
        let max_q = q.iter().cloned().fold(0.0, f64::max);
        let l = loss_runs(500, Dist::Exponential, 1.0, max_q.ceil() as u64, 4, 9, 100, 1).unwrap();
        assert!(l.iter().all(|r| r.loss == 0.0 && r.converged));
    }

    #[test]
    fn run_arrivals_match_queue_runs() {
        // Queues recomputed from run_arrivals equal the batch's row for that run.
        let n = 200;
        let q = queue_runs(n, Dist::Uniform, 0.9, 3, 5, 1).unwrap();
        let arr = run_arrivals(n, Dist::Uniform, 0.9, 5, 2, TICKS_PER_PACKET).unwrap();
        let period = period_ticks(n, 0.9, TICKS_PER_PACKET).unwrap();
        let (phases, _) = crate::arrivals::reduce_any(&arr, period);
        let mut waits = Vec::new();
        steady_state_into(&phases, period, TICKS_PER_PACKET, None, 3, &mut waits);
        let row: Vec<f64> = waits.iter().map(|&w| w as f64 / TICKS_PER_PACKET as f64).collect();
        assert_eq!(&q[2 * n..3 * n], &row[..]);
    }
}
