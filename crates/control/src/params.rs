//! The parameters of every access controller, their defaults, and their
//! validation: defined here once for the flow-level simulator, the packet-level
//! simulator and the real-network transfer manager.
//!
//! The serde form is the canonical one (`{"policy": "fairbat", "m0": 1.0, ...}`,
//! every field written out); readers of user settings start from the
//! `Default` of each policy and override the keys given.
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest limit any controller may reach or be given: far above any number
/// of simultaneous transfers a sender would open, small enough that counts stay exact.
pub const MAX_LIMIT: f64 = 1e6;

/// The longest update period (10^9 s, the packet-level engine's longest time).
pub const MAX_PERIOD_S: f64 = 1e9;

/// A parameter outside its range: the key (relative to the access table) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl ParamError {
    fn new(key: &str, message: impl Into<String>) -> Self {
        ParamError { key: key.to_string(), message: message.into() }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ParamError {}

/// How a fractional limit M becomes a whole number of active chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Fractional {
    /// FAIRBAT §III: "alternate opening an integer number of TCP connections equal to
    /// the floor and the ceiling of w". Our concrete form: while chunks wait, the
    /// number active is ⌊M⌋ or ⌈M⌉, chosen so that its time average is M (see
    /// [`crate::alternate`]). Implementable by a real sender.
    #[default]
    Alternate,
    /// The fluid idealisation of a flow-level model: up to ⌈M⌉ chunks are active and
    /// together weigh min(active, M) TCP flows (the background paper's eq. 26 with a
    /// fractional M, i.e. wTCP with w = M). Not implementable by a sender of TCP flows.
    Weight,
}

/// A static limit M (background paper §III-B, eq. 26).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticParams {
    /// The most chunks active at once, > 0 (may be fractional).
    pub limit: f64,
    pub fractional: Fractional,
}

/// How FAIRBAT measures the queue size n(t) of its eq. (2) over an update period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueueMeasure {
    /// The time average of the number of waiting chunks over the period.
    #[default]
    Mean,
    /// The number waiting at the update instant.
    Sample,
}

/// In what units FAIRBAT's gain moves the limit (the paper leaves γ's value open).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GainScale {
    /// Eq. (2) as printed: γ is limit per chunk of queue error, the same at every load.
    None,
    /// γ is relative: the limit moves by m/Â per chunk of error, Â the chunks that
    /// arrive per period (its running mean), so that an error of e chunks asks for a
    /// fraction γ·e of the period's arrivals more (or less) service, whatever the load
    /// and the chunk size (docs/protocols.md, FAIRBAT).
    #[default]
    Arrivals,
}

/// How FAIRBAT's gain decreases from `gain_start` to `gain_end` ([FB] §III: "starting
/// with a high value and gradually decreasing it while convergence is achieved").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GainSchedule {
    /// γ_j = max(gain_end, gain_start / (1 + j / gain_updates)), whatever the queue does.
    Harmonic,
    /// Halved each time the queue error n − τ changes sign (Kesten's rule of
    /// stochastic approximation: the gain falls only once the target is crossed).
    #[default]
    Sign,
}

/// FAIRBAT's adaptive limit (FAIRBAT paper §III, eq. 2):
/// m(t+1) = m(t) + γ_j (n(t) − τ), every `period_s`, with a gain γ_j decreasing from
/// `gain_start` to `gain_end`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairbatParams {
    /// m(0), the limit before the first update.
    pub m0: f64,
    /// The limit never falls below this (> 0: with M = 0 nothing would ever start).
    pub m_min: f64,
    /// Nor rises above this.
    pub m_max: f64,
    /// T, the update interval (and measurement window), seconds.
    pub period_s: f64,
    /// τ, the target queue of waiting chunks.
    pub tau: f64,
    /// The first gain γ_0 (limit change per waiting chunk above target, per update).
    pub gain_start: f64,
    /// The gain it decreases to and keeps.
    pub gain_end: f64,
    /// Updates over which the gain decreases harmonically: γ_j = max(gain_end,
    /// gain_start / (1 + j / gain_updates)).
    pub gain_updates: f64,
    /// How n(t) is measured.
    pub measure: QueueMeasure,
    /// Weight of the queue's trend n(t) − n(t−1) added to eq. (2) (0: eq. 2 as printed),
    /// at the first gain; it falls with the gain as trend·√(γ_j/gain_start), which keeps
    /// the loop's damping ratio.
    pub trend: f64,
    /// The units of the gain (and of `trend`).
    pub gain_scale: GainScale,
    /// How the gain decreases.
    pub gain_schedule: GainSchedule,
    pub fractional: Fractional,
}

/// The rate-tracking adaptive limit (background paper §IV): moving averages of the
/// arriving load and of the rate M active chunks obtain; M follows the value at which
/// they match.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateTrackingParams {
    pub m0: f64,
    pub m_min: f64,
    pub m_max: f64,
    /// The measurement window (and update interval), seconds.
    pub period_s: f64,
    /// β, the weight of each new window in the moving average of the arriving load, in
    /// (0, 1]; until 1/β windows have passed, their plain mean.
    pub ewma: f64,
    /// The weight of each new window in the moving average of the rate one active chunk
    /// obtains, in (0, 1]. That rate depends on M, which the controller moves: a long
    /// memory makes M lag behind it.
    pub rate_ewma: f64,
    /// The fraction of the distance to the matching limit moved per update, in (0, 1],
    /// at first; halved each time the limit's correction changes sign (Kesten's rule),
    /// down to `step_end`.
    pub step: f64,
    /// The smallest step, in (0, step].
    pub step_end: f64,
    /// Target number of waiting chunks ([BG] §III-B: "long micro-flow queues are
    /// maintained"): the rate tracked is the arriving load plus the rate that brings the
    /// waiting chunks back to `tau` within `drain` periods (0: the arriving load alone).
    pub tau: f64,
    /// Periods over which a queue away from `tau` is to be brought back.
    pub drain: f64,
    pub fractional: Fractional,
}

/// An access policy with its parameters: the canonical form of
/// `access = { policy = "...", ... }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum AccessParams {
    Static(StaticParams),
    RateTracking(RateTrackingParams),
    Fairbat(FairbatParams),
}

/// The policy names, as written in settings.
pub const POLICIES: &[&str] = &["static", "rate_tracking", "fairbat"];

impl Default for FairbatParams {
    fn default() -> Self {
        FairbatParams {
            m0: 1.0,
            m_min: 0.05,
            m_max: 1e4,
            period_s: 120.0,
            tau: 100.0,
            gain_start: 0.05,
            gain_end: 0.001,
            gain_updates: 10.0,
            measure: QueueMeasure::Mean,
            trend: 0.6,
            gain_scale: GainScale::Arrivals,
            gain_schedule: GainSchedule::Sign,
            fractional: Fractional::Alternate,
        }
    }
}

impl Default for RateTrackingParams {
    fn default() -> Self {
        RateTrackingParams {
            m0: 1.0,
            m_min: 0.05,
            m_max: 1e4,
            period_s: 120.0,
            ewma: 0.05,
            rate_ewma: 0.3,
            step: 1.0,
            step_end: 0.03,
            tau: 20.0,
            drain: 10.0,
            fractional: Fractional::Alternate,
        }
    }
}

fn positive(key: &str, v: f64, max: f64) -> Result<(), ParamError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("expected a number above 0 and at most {max}, got {v}")))
    }
}

fn unit_interval(key: &str, v: f64) -> Result<(), ParamError> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("expected a number in (0, 1], got {v}")))
    }
}

/// m_min ≤ m0 ≤ m_max, all in (0, MAX_LIMIT].
fn limits(m0: f64, m_min: f64, m_max: f64) -> Result<(), ParamError> {
    positive("m0", m0, MAX_LIMIT)?;
    positive("m_min", m_min, MAX_LIMIT)?;
    positive("m_max", m_max, MAX_LIMIT)?;
    if m_min > m0 {
        return Err(ParamError::new("m_min", format!("must be at most m0 ({m0}), got {m_min}")));
    }
    if m_max < m0 {
        return Err(ParamError::new("m_max", format!("must be at least m0 ({m0}), got {m_max}")));
    }
    Ok(())
}

impl AccessParams {
    /// The policy's name as written in settings.
    pub fn policy(&self) -> &'static str {
        match self {
            AccessParams::Static(_) => "static",
            AccessParams::RateTracking(_) => "rate_tracking",
            AccessParams::Fairbat(_) => "fairbat",
        }
    }

    /// The policy `name` with its default parameters (a static limit has no default:
    /// `limit` is required, so this gives None for it, and for an unknown name).
    pub fn default_for(name: &str) -> Option<AccessParams> {
        match name {
            "fairbat" => Some(AccessParams::Fairbat(FairbatParams::default())),
            "rate_tracking" => Some(AccessParams::RateTracking(RateTrackingParams::default())),
            _ => None,
        }
    }

    /// How fractional limits are realised.
    pub fn fractional(&self) -> Fractional {
        match self {
            AccessParams::Static(p) => p.fractional,
            AccessParams::RateTracking(p) => p.fractional,
            AccessParams::Fairbat(p) => p.fractional,
        }
    }

    /// Check every parameter; the error names the first key at fault.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            AccessParams::Static(p) => positive("limit", p.limit, MAX_LIMIT),
            AccessParams::RateTracking(p) => {
                limits(p.m0, p.m_min, p.m_max)?;
                positive("period", p.period_s, MAX_PERIOD_S)?;
                unit_interval("ewma", p.ewma)?;
                unit_interval("rate_ewma", p.rate_ewma)?;
                unit_interval("step", p.step)?;
                unit_interval("step_end", p.step_end)?;
                if p.step_end > p.step {
                    return Err(ParamError::new("step_end", format!("must be at most step ({}), got {}", p.step, p.step_end)));
                }
                if !(p.tau.is_finite() && (0.0..=1e9).contains(&p.tau)) {
                    return Err(ParamError::new("tau", format!("expected a number from 0 to 1000000000, got {}", p.tau)));
                }
                positive("drain", p.drain, 1e9)
            }
            AccessParams::Fairbat(p) => {
                limits(p.m0, p.m_min, p.m_max)?;
                positive("period", p.period_s, MAX_PERIOD_S)?;
                positive("tau", p.tau, 1e9)?;
                positive("gain_start", p.gain_start, 1e6)?;
                positive("gain_end", p.gain_end, 1e6)?;
                if p.gain_end > p.gain_start {
                    return Err(ParamError::new("gain_end", format!("must be at most gain_start ({}), got {}", p.gain_start, p.gain_end)));
                }
                positive("gain_updates", p.gain_updates, 1e12)?;
                if !(p.trend.is_finite() && (0.0..=1e6).contains(&p.trend)) {
                    return Err(ParamError::new("trend", format!("expected a number from 0 to 1000000, got {}", p.trend)));
                }
                Ok(())
            }
        }
    }
}
