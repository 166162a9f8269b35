//! Bandwidth allocation on a path of links: weighted max-min fairness.
//!
//! Rule (documented in docs/flowsim.md): every TCP-like entity `e` (a population of
//! flows of one class, with total weight `w_e` = number of flows × per-flow weight)
//! receives `θ_e · w_e`, where the per-unit-weight levels `θ_e` are the weighted
//! max-min fair allocation computed by progressive filling: all unfrozen entities
//! rise at the same level until a link saturates; the entities crossing it freeze.
//! On a single link this is processor sharing in proportion to the weights, i.e. the
//! equal TCP shares `x_n = C/(n+k+w)` of eq. (1)/(16) of the background paper.
//! Ideal low-priority entities then share, by the same rule, only the capacity the
//! TCP-like entities leave unused (so they send on a path only when every link of it
//! has spare capacity, the starvation mechanism behind FAIRBAT eq. 1).

/// Scratch space reused across calls so allocation does not allocate memory.
#[derive(Default, Debug, Clone)]
pub struct MaxMin {
    residual: Vec<f64>,
    wsum: Vec<f64>,
    frozen: Vec<bool>,
}

impl MaxMin {
    /// Weighted max-min fair rates.
    ///
    /// * `cap` — capacity of each link (residual capacities for a low-priority pass).
    /// * `routes[e]` — link indices crossed by entity `e`.
    /// * `weights[e]` — total weight of entity `e` (0 means absent: it gets rate 0).
    /// * `rates` — output, overwritten with the rate of each entity.
    pub fn allocate<R: AsRef<[usize]>>(
        &mut self,
        cap: &[f64],
        routes: &[R],
        weights: &[f64],
        rates: &mut [f64],
    ) {
        let ne = weights.len();
        let nl = cap.len();
        self.residual.clear();
        self.residual.extend(cap.iter().map(|c| c.max(0.0)));
        self.frozen.clear();
        self.frozen.extend(weights.iter().map(|w| *w <= 0.0));
        self.wsum.clear();
        self.wsum.resize(nl, 0.0);
        for e in 0..ne {
            rates[e] = 0.0;
            if !self.frozen[e] {
                for &l in routes[e].as_ref() {
                    self.wsum[l] += weights[e];
                }
            }
        }
        loop {
            // The next link to saturate: the smallest level residual/weight of unfrozen entities.
            let mut best = f64::INFINITY;
            let mut bl = usize::MAX;
            for l in 0..nl {
                if self.wsum[l] > 1e-300 {
                    let lev = self.residual[l] / self.wsum[l];
                    if lev < best {
                        best = lev;
                        bl = l;
                    }
                }
            }
            if bl == usize::MAX {
                break;
            }
            for e in 0..ne {
                if !self.frozen[e] && routes[e].as_ref().contains(&bl) {
                    self.frozen[e] = true;
                    let r = best * weights[e];
                    rates[e] = r;
                    for &l in routes[e].as_ref() {
                        self.residual[l] = (self.residual[l] - r).max(0.0);
                        self.wsum[l] -= weights[e];
                    }
                }
            }
            // All entities on the saturated link are frozen: drop its rounding remainder.
            self.wsum[bl] = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_network_max_min() {
        // Two unit links; entity 0 crosses both, entity 1 (two flows) uses link 0,
        // entity 2 (one flow) uses link 1. Link 0 saturates first at level 1/3:
        // entity 0 gets 1/3, entity 1 gets 2/3; link 1 leaves 2/3 to entity 2.
        let cap = [1.0, 1.0];
        let r0: &[usize] = &[0, 1];
        let r1: &[usize] = &[0];
        let r2: &[usize] = &[1];
        let mut rates = [0.0; 3];
        MaxMin::default().allocate(&cap, &[r0, r1, r2], &[1.0, 2.0, 1.0], &mut rates);
        assert!((rates[0] - 1.0 / 3.0).abs() < 1e-12);
        assert!((rates[1] - 2.0 / 3.0).abs() < 1e-12);
        assert!((rates[2] - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn single_link_is_weighted_processor_sharing() {
        let cap = [3.0];
        let r: &[usize] = &[0];
        let mut rates = [0.0; 3];
        MaxMin::default().allocate(&cap, &[r, r, r], &[1.0, 0.0, 2.0], &mut rates);
        assert_eq!(rates, [1.0, 0.0, 2.0]);
    }

    #[test]
    fn random_instances_satisfy_the_max_min_bottleneck_property() {
        // Weighted max-min fairness is characterised by: feasibility, and every entity has
        // a saturated link on its route where its per-weight rate is the largest.
        let mut rng = crate::engine::replication_stream(99, 0, 0);
        let mut mm = MaxMin::default();
        for _ in 0..500 {
            let nl = 1 + (rng.next_u64() % 4) as usize;
            let ne = 1 + (rng.next_u64() % 6) as usize;
            let cap: Vec<f64> = (0..nl).map(|_| 0.5 + rng.uniform_pos()).collect();
            let routes: Vec<Vec<usize>> = (0..ne)
                .map(|_| {
                    let mut r: Vec<usize> = (0..nl).filter(|_| rng.next_u64() % 2 == 0).collect();
                    if r.is_empty() {
                        r.push((rng.next_u64() % nl as u64) as usize);
                    }
                    r
                })
                .collect();
            let w: Vec<f64> = (0..ne)
                .map(|_| {
                    if rng.next_u64() % 5 == 0 {
                        0.0
                    } else {
                        3.0 * rng.uniform_pos()
                    }
                })
                .collect();
            let mut r = vec![0.0; ne];
            mm.allocate(&cap, &routes, &w, &mut r);
            let mut load = vec![0.0; nl];
            for e in 0..ne {
                for &l in &routes[e] {
                    load[l] += r[e];
                }
            }
            for l in 0..nl {
                assert!(load[l] <= cap[l] * (1.0 + 1e-12), "link {l} over capacity");
            }
            for e in 0..ne {
                if w[e] == 0.0 {
                    assert_eq!(r[e], 0.0);
                    continue;
                }
                let lev = r[e] / w[e];
                let has_bottleneck = routes[e].iter().any(|&l| {
                    (load[l] - cap[l]).abs() < 1e-9
                        && (0..ne).all(|o| {
                            w[o] == 0.0 || !routes[o].contains(&l) || r[o] / w[o] <= lev + 1e-9
                        })
                });
                assert!(has_bottleneck, "entity {e} has no bottleneck");
            }
        }
    }
}
