//! Scenario description of the flow-level model and its validation.
//!
//! Units are free but consistent: capacities in data per unit time, sizes in data,
//! times in time units. The background paper uses C = 1 and mean short size 1/μ.

use cclab_control::AccessParams;
use std::fmt;

/// Error for an invalid scenario; the message names the field at fault and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowsimError(pub String);

impl fmt::Display for FlowsimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlowsimError {}

/// Distribution of flow sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    /// Exponential with the given mean (the sizes of the background paper, §II-A).
    Exp { mean: f64 },
    /// Pareto with the given mean and tail index `shape` > 1 (scale = mean·(shape−1)/shape).
    Pareto { mean: f64, shape: f64 },
}

impl SizeDist {
    /// Mean size.
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Exp { mean } | SizeDist::Pareto { mean, .. } => mean,
        }
    }
}

/// Where the controlled background aggregate (CBF) gets its data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Always has data to send (§II of the background paper).
    Saturated,
    /// A Poisson stream of micro-flows (§III: rate λ_b, sizes of mean 1/μ_b).
    Stream { rate: f64, size: SizeDist },
}

/// Policy of the controlled background aggregate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// Threshold policy (background paper eqs. 8 and 12): each TCP flow gets x_n = 0 for
    /// n ≤ n0, `x_next` at n = n0+1 (default C/(k+n0+1), giving eq. 12), and C/(k+n)
    /// for n ≥ n0+2; the CBF takes C − (n+k)x_n. n0 = −1 gives the low-priority form of
    /// eq. (9) (x_0 = `x_next`, fair share for n ≥ 1). Single link only.
    Threshold { n0: i32, x_next: Option<f64> },
    /// Optimal implementable policy (Theorem 3, eq. 15): x_n = min(x_cap, C/(k+n)), i.e.
    /// the CBF keeps every TCP flow at rate x_cap while it can. Single link only.
    Implementable { x_cap: f64 },
    /// wTCP: the aggregate behaves as w TCP flows (§II-D, eq. 16): x_n = C/(k+w+n).
    Wtcp { w: f64 },
    /// Access control by `cclab_control`: a queue of micro-flows of which at most M
    /// are active, M static (§III-B, eq. 26), rate tracking (§IV) or FAIRBAT (eq. 2).
    /// Times of the controller (its period) are in the model's time unit.
    Access(AccessParams),
    /// Vanilla: each background micro-flow is a TCP flow as soon as it arrives.
    Vanilla,
    /// Ideal low priority: the CBF uses only capacity the TCP flows leave unused.
    LowPriority,
}

impl Policy {
    /// True for policies that prescribe x_n directly from the number of short flows
    /// (they need the single-link state of eq. 1).
    pub fn is_explicit(&self) -> bool {
        matches!(
            self,
            Policy::Threshold { .. } | Policy::Implementable { .. }
        )
    }
    /// True for access-control policies (a queue of waiting micro-flows).
    pub fn is_access(&self) -> bool {
        matches!(self, Policy::Access(_))
    }
}

/// What a traffic class is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClassKind {
    /// Poisson short TCP flows (arrival rate λ, size distribution).
    Short { rate: f64, size: SizeDist },
    /// `count` long-lived TCP flows, always active (k of the background paper).
    Long { count: u32 },
    /// A controlled background aggregate with its source and policy.
    Background { source: Source, policy: Policy },
}

/// One traffic class on one route.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// Name used in reports.
    pub name: String,
    /// Indices of the links crossed (distinct, each < number of links).
    pub route: Vec<usize>,
    /// What the class is.
    pub kind: ClassKind,
}

/// A whole simulation request.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Capacity of each link.
    pub capacities: Vec<f64>,
    /// Traffic classes.
    pub classes: Vec<Class>,
    /// Measured time per replication (after the warm-up).
    pub duration: f64,
    /// Warm-up time discarded at the start of each replication.
    pub warmup: f64,
    /// Number of independent replications (≥ 2 for confidence intervals).
    pub replications: u32,
    /// Seed; replication r of class c draws from stream (seed, r, c).
    pub seed: u64,
}

fn pos(name: &str, v: f64) -> Result<(), FlowsimError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(FlowsimError(format!(
            "{name}: must be positive and finite, got {v}"
        )))
    }
}

fn nonneg(name: &str, v: f64) -> Result<(), FlowsimError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(FlowsimError(format!(
            "{name}: must be non-negative and finite, got {v}"
        )))
    }
}

fn check_size(name: &str, s: &SizeDist) -> Result<(), FlowsimError> {
    match *s {
        SizeDist::Exp { mean } => pos(&format!("{name}.mean"), mean),
        SizeDist::Pareto { mean, shape } => {
            pos(&format!("{name}.mean"), mean)?;
            if !(shape.is_finite() && shape > 1.0) {
                return Err(FlowsimError(format!(
                    "{name}.shape: Pareto tail index must exceed 1 for a finite mean, got {shape}"
                )));
            }
            Ok(())
        }
    }
}

impl Scenario {
    /// Check every field; the error names the first offending one.
    pub fn validate(&self) -> Result<(), FlowsimError> {
        self.check_run()?;
        let (mut explicit, mut backgrounds) = (0, 0);
        for (i, c) in self.classes.iter().enumerate() {
            let p = format!("classes[{i}]");
            check_route(&p, &c.route, self.capacities.len())?;
            match &c.kind {
                ClassKind::Short { rate, size } => {
                    pos(&format!("{p}.rate"), *rate)?;
                    check_size(&format!("{p}.size"), size)?;
                }
                ClassKind::Long { .. } => {}
                ClassKind::Background { source, policy } => {
                    backgrounds += 1;
                    if let Source::Stream { rate, size } = source {
                        pos(&format!("{p}.rate"), *rate)?;
                        check_size(&format!("{p}.size"), size)?;
                    }
                    check_policy(&p, policy)?;
                    explicit += policy.is_explicit() as usize;
                    let stream = matches!(source, Source::Stream { .. });
                    if !stream && (policy.is_access() || matches!(policy, Policy::Vanilla)) {
                        return Err(FlowsimError(format!(
                            "{p}.source: policy {policy:?} acts on a stream of micro-flows; a saturated source has none"
                        )));
                    }
                }
            }
        }
        if explicit > 0 {
            self.check_explicit(backgrounds)?;
        }
        Ok(())
    }

    /// The links, the run's length and replications, and that there are classes.
    fn check_run(&self) -> Result<(), FlowsimError> {
        if self.capacities.is_empty() {
            return Err(FlowsimError(
                "capacities: at least one link is needed".into(),
            ));
        }
        for (l, c) in self.capacities.iter().enumerate() {
            pos(&format!("capacities[{l}]"), *c)?;
        }
        pos("duration", self.duration)?;
        nonneg("warmup", self.warmup)?;
        if self.replications < 2 {
            return Err(FlowsimError(format!(
                "replications: at least 2 are needed for a confidence interval, got {}",
                self.replications
            )));
        }
        if self.classes.is_empty() {
            return Err(FlowsimError("classes: at least one class is needed".into()));
        }
        Ok(())
    }

    /// A threshold or implementable policy (eq. 1) is defined on one link, for the
    /// only background class (`backgrounds` of them here).
    fn check_explicit(&self, backgrounds: usize) -> Result<(), FlowsimError> {
        if self.capacities.len() != 1 {
            return Err(FlowsimError(
                "classes: threshold and implementable policies are defined on a single link (eq. 1); use one link".into(),
            ));
        }
        if backgrounds != 1 {
            return Err(FlowsimError(
                "classes: a threshold or implementable policy must be the only background class".into(),
            ));
        }
        Ok(())
    }
}

/// A route of class `p`: at least one link, each existing (of `links`) and crossed once.
fn check_route(p: &str, route: &[usize], links: usize) -> Result<(), FlowsimError> {
    if route.is_empty() {
        return Err(FlowsimError(format!(
            "{p}.route: must cross at least one link"
        )));
    }
    for (j, &l) in route.iter().enumerate() {
        if l >= links {
            return Err(FlowsimError(format!(
                "{p}.route: link {l} does not exist (there are {links} links)"
            )));
        }
        if route[..j].contains(&l) {
            return Err(FlowsimError(format!("{p}.route: link {l} appears twice")));
        }
    }
    Ok(())
}

/// The parameters of background class `p`'s policy.
fn check_policy(p: &str, policy: &Policy) -> Result<(), FlowsimError> {
    match *policy {
        Policy::Threshold { n0, x_next } => {
            if n0 < -1 {
                return Err(FlowsimError(format!(
                    "{p}.n0: must be >= -1, got {n0}"
                )));
            }
            if let Some(x) = x_next {
                nonneg(&format!("{p}.x_next"), x)?;
            }
            Ok(())
        }
        Policy::Implementable { x_cap } => pos(&format!("{p}.x_cap"), x_cap),
        Policy::Wtcp { w } => pos(&format!("{p}.w"), w),
        Policy::Access(a) => a
            .validate()
            .map_err(|e| FlowsimError(format!("{p}.{}: {}", e.key, e.message))),
        Policy::Vanilla | Policy::LowPriority => Ok(()),
    }
}
