//! Exact steady-state queue and loss of N ideally smooth senders at a FIFO link
//! (Podlesny and Gorinsky, "Lower Bounds on Queuing and Loss at Highly Multiplexed
//! Links", WUCSE-2007-42, sections V-VI).
//!
//! N flows each send one packet every period T = N D / U (eq. 3), flow i first at its
//! arrival time t_i. Reducing the arrival times modulo T (eq. 23) makes the steady state
//! start at T, so 2N packets give the exact steady-state queue of every flow; with a finite
//! buffer the periods are iterated until the workload at the period boundary repeats.
//! Time is integer ticks, so the arithmetic is exact and deterministic.
pub mod arrivals;
pub mod error;
pub mod fifo;
pub mod runs;

pub use arrivals::{period_ticks, reduce_any, Dist, TICKS_PER_PACKET};
pub use error::ParamError;
pub use fifo::{check_periodic, steady_state_into, SteadyStats, DROPPED};
pub use runs::{loss_runs, queue_runs, run_arrivals, LossRun};

/// Steady state for explicit arrival times (any order, ticks): returns each flow's wait in
/// ticks in the order given (`DROPPED` if lost), each flow's phase t_i mod T (eq. 23), and
/// the summary. `service` is the packet transmission time D in ticks, `period` is T.
pub fn steady_at_arrivals(
    arrivals: &[i64],
    period: i64,
    service: i64,
    buffer: Option<u64>,
    max_periods: u32,
) -> Result<(Vec<i64>, Vec<i64>, SteadyStats), ParamError> {
    check_periodic(arrivals.len(), period, service)?;
    if max_periods == 0 {
        return Err(ParamError::new("max_periods", "must be at least 1"));
    }
    let (phases, order) = reduce_any(arrivals, period);
    let mut waits = Vec::new();
    let st = steady_state_into(&phases, period, service, buffer, max_periods, &mut waits);
    let mut per_flow = vec![0i64; arrivals.len()];
    let mut phase = vec![0i64; arrivals.len()];
    for (j, &i) in order.iter().enumerate() {
        per_flow[i] = waits[j];
        phase[i] = phases[j];
    }
    Ok((per_flow, phase, st))
}
