//! The exact steady state of a FIFO link fed by N ideally smooth flows (lower-bounds
//! paper, sections V and VI).
//!
//! Every flow sends one packet per period T, the packet of flow i at phase τ_i = t_i mod T
//! (eq. 23). The link serves one packet per `service` ticks (D, eq. 4). We follow the
//! link's unfinished work w (in ticks) from an empty link at time 0, period after period:
//! between arrivals w drains at rate 1; an arriving packet waits w (its queue size in
//! packets is w/D, eq. 6) and adds `service` to w.
//!
//! Overprovisioned buffer (section V): the work arriving in a period, N D, never exceeds
//! T (U <= 1), so the workload at time T equals the supremum over one period of
//! arrivals-minus-service, which is the steady-state value: the second period (packets at
//! τ_i + T) is the steady state exactly -- the paper's 2N-packet method. The loop below
//! confirms it by exact integer repetition of the boundary workload.
//!
//! Finite buffer of B packets (section VI): a packet is dropped when it would find more
//! than B packets waiting besides the one in transmission, i.e. when w > B D (drop-tail
//! with a limit of B waiting packets). Drops make the pattern need more than one period to
//! settle, so periods are iterated until the boundary workload repeats.
use crate::error::ParamError;
use std::collections::HashMap;

/// Marker in a waits vector for a packet dropped at a full buffer.
pub const DROPPED: i64 = -1;

/// Summary of a steady-state computation.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyStats {
    /// Periods simulated from an empty link at time 0 until the boundary workload repeated
    /// (the waits returned are those of the last of them).
    pub periods: u32,
    /// Length of the repeating pattern in periods (1: periodic with T).
    pub cycle: u32,
    /// Packets dropped during the `cycle` periods of the repeating pattern.
    pub drops: u64,
    /// Whether the boundary workload repeated within `max_periods`.
    pub converged: bool,
    /// Workload at the period boundary in the steady state, in ticks (q_0 D of eq. 12).
    pub boundary: i64,
}

impl SteadyStats {
    /// Steady-state loss rate: dropped packets over packets sent during the cycle.
    pub fn loss(&self, n: usize) -> f64 {
        if n == 0 {
            return 0.0;
        }
        self.drops as f64 / (self.cycle as f64 * n as f64)
    }
}

/// One period starting with workload `w` at the boundary; writes each packet's wait (or
/// `DROPPED`) into `waits`; returns the workload at the next boundary and the drops.
#[inline]
fn one_period(phases: &[i64], period: i64, service: i64, limit: i64, mut w: i64, waits: &mut [i64]) -> (i64, u64) {
    let mut prev = 0i64;
    let mut drops = 0u64;
    for (slot, &p) in waits.iter_mut().zip(phases) {
        w = (w - (p - prev)).max(0);
        prev = p;
        if w > limit {
            *slot = DROPPED;
            drops += 1;
        } else {
            *slot = w;
            w += service;
        }
    }
    ((w - (period - prev)).max(0), drops)
}

/// Check the arguments of [`steady_state_into`].
pub fn check_periodic(n: usize, period: i64, service: i64) -> Result<(), ParamError> {
    if service <= 0 {
        return Err(ParamError::new("packet_time", format!("must be a positive number of ticks, got {service}")));
    }
    if period <= 0 {
        return Err(ParamError::new("period", format!("must be a positive number of ticks, got {period}")));
    }
    match (n as i64).checked_mul(service) {
        Some(work) if work <= period => Ok(()),
        _ => Err(ParamError::new(
            "period",
            format!("must be at least n * packet_time = {n} * {service} ticks (utilization <= 1), got {period}"),
        )),
    }
}

/// Steady-state waits (ticks) of the packets at sorted `phases` (each in [0, period)).
///
/// `buffer`: `None` for an overprovisioned buffer, else the drop-tail limit B in packets.
/// `max_periods`: give up (with `converged = false`) after this many periods.
/// `waits` receives one entry per phase, in phase order (`DROPPED` for lost packets).
pub fn steady_state_into(
    phases: &[i64],
    period: i64,
    service: i64,
    buffer: Option<u64>,
    max_periods: u32,
    waits: &mut Vec<i64>,
) -> SteadyStats {
    waits.clear();
    waits.resize(phases.len(), 0);
    debug_assert!(phases.windows(2).all(|w| w[0] <= w[1]));
    debug_assert!(phases.iter().all(|&p| (0..period).contains(&p)));
    let limit = match buffer {
        None => i64::MAX,
        Some(b) => i64::try_from(b).ok().and_then(|b| b.checked_mul(service)).unwrap_or(i64::MAX),
    };
    // Boundary workload -> the period after which it was observed (0: empty link at t = 0).
    let mut seen: HashMap<i64, u32> = HashMap::new();
    seen.insert(0, 0);
    let mut drops_hist: Vec<u64> = Vec::new();
    let mut w = 0i64;
    for k in 1..=max_periods.max(1) {
        let (next, drops) = one_period(phases, period, service, limit, w, waits);
        drops_hist.push(drops);
        w = next;
        if let Some(&j) = seen.get(&w) {
            return SteadyStats {
                periods: k,
                cycle: k - j,
                drops: drops_hist[j as usize..].iter().sum(),
                converged: true,
                boundary: w,
            };
        }
        seen.insert(w, k);
    }
    SteadyStats {
        periods: max_periods.max(1),
        cycle: 1,
        drops: *drops_hist.last().unwrap_or(&0),
        converged: false,
        boundary: w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct simulation of `periods` periods with explicit packets and departure times:
    /// returns the waits of the last period in phase order.
    fn brute_force(phases: &[i64], period: i64, service: i64, buffer: Option<u64>, periods: usize) -> Vec<i64> {
        let mut departures: std::collections::VecDeque<i64> = Default::default();
        let mut last = vec![0; phases.len()];
        for k in 0..periods {
            for (j, &p) in phases.iter().enumerate() {
                let a = k as i64 * period + p;
                while departures.front().is_some_and(|&d| d <= a) {
                    departures.pop_front();
                }
                let waiting = departures.len().saturating_sub(1) as u64;
                if buffer.is_some_and(|b| !departures.is_empty() && waiting >= b) {
                    last[j] = DROPPED;
                    continue;
                }
                let start = departures.back().copied().unwrap_or(a).max(a);
                last[j] = start - a;
                departures.push_back(start + service);
            }
        }
        last
    }

    fn random_phases(n: usize, period: i64, seed: u64) -> Vec<i64> {
        let mut r = crate::runs::run_stream(seed, 0);
        let mut v: Vec<i64> = (0..n).map(|_| (r.next_u64() % period as u64) as i64).collect();
        v.sort();
        v
    }

    #[test]
    fn overprovisioned_steady_state_after_two_periods() {
        for seed in 0..50 {
            let (n, service) = (40usize, 1000i64);
            let period = if seed % 2 == 0 { n as i64 * service } else { n as i64 * service * 5 / 4 };
            let phases = random_phases(n, period, seed);
            let mut waits = Vec::new();
            let st = steady_state_into(&phases, period, service, None, 10, &mut waits);
            assert!(st.converged && st.periods <= 2 && st.cycle == 1 && st.drops == 0, "{st:?}");
            assert_eq!(waits, brute_force(&phases, period, service, None, 6));
        }
    }

    #[test]
    fn finite_buffer_matches_brute_force() {
        for seed in 0..50 {
            let (n, service) = (60usize, 1000i64);
            let period = n as i64 * service;
            let phases = random_phases(n, period, 100 + seed);
            let buffer = Some(seed % 4);
            let mut waits = Vec::new();
            let st = steady_state_into(&phases, period, service, buffer, 10_000, &mut waits);
            assert!(st.converged, "{st:?}");
            let many = brute_force(&phases, period, service, buffer, st.periods as usize + 3 * st.cycle as usize);
            if st.cycle == 1 {
                assert_eq!(waits, many);
            }
            let dropped = waits.iter().filter(|&&w| w == DROPPED).count() as u64;
            if st.cycle == 1 {
                assert_eq!(dropped, st.drops);
            }
            assert!(waits.iter().all(|&w| w == DROPPED || w <= buffer.unwrap() as i64 * service));
        }
    }

    #[test]
    fn hand_example() {
        // Three packets at phases 0, 0, 1 with D = 2 ticks and T = 6: the link is always busy.
        // Period 1: waits 0, 2, 3; boundary work = (2+2+2) - 6 = 0 -> steady already.
        let mut waits = Vec::new();
        let st = steady_state_into(&[0, 0, 1], 6, 2, None, 10, &mut waits);
        assert_eq!(waits, vec![0, 2, 3]);
        assert_eq!((st.periods, st.boundary), (1, 0));
        // Phases 0, 5, 5, D = 2, T = 6. Period 1: waits 0, 0, 2; the link is busy from 5 to 9,
        // so the boundary work is 3. Period 2: waits 3, 0, 2 and boundary 3 again: steady.
        let st = steady_state_into(&[0, 5, 5], 6, 2, None, 10, &mut waits);
        assert_eq!(waits, vec![3, 0, 2]);
        assert_eq!((st.periods, st.boundary), (2, 3));
        // Zero buffer: a packet passes only if the link is idle; boundary work 1 repeats.
        let st = steady_state_into(&[0, 5, 5], 6, 2, Some(0), 10, &mut waits);
        assert_eq!(waits, vec![DROPPED, 0, DROPPED]);
        assert_eq!((st.drops, st.cycle), (2, 1));
        assert!((st.loss(3) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn argument_checks() {
        assert_eq!(check_periodic(10, 100, 0).unwrap_err().arg, "packet_time");
        assert_eq!(check_periodic(10, 0, 1).unwrap_err().arg, "period");
        assert_eq!(check_periodic(10, 99, 10).unwrap_err().arg, "period");
        assert!(check_periodic(10, 100, 10).is_ok());
    }
}
