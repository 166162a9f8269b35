//! The access controller: an admission queue of waiting chunks, a limit on the
//! active ones (static, rate tracking or FAIRBAT), and the realisation of a
//! fractional limit. Sans-IO: the caller reports what happens and asks what to do.
//!
//! ```text
//! arrive(now, chunk, bytes)    a chunk is queued              then: while let Some(c) = admit(now) { start c }
//! complete(now)                an active chunk finished       then: admit loop
//! on_deadline(now, delivered)  at next_deadline()             then: admit loop
//! ```
use crate::alternate::{floor_ceil, Alternation};
use crate::fairbat::Fairbat;
use crate::params::{AccessParams, Fractional, ParamError};
use crate::tracking::RateTracking;
use crate::window::Window;
use std::collections::VecDeque;

/// Time tolerance of a deadline at time `t` (seconds): the packet-level engine rounds
/// deadlines to the nanosecond, and f64 sums lose about 1e-16 relative.
#[inline]
fn tolerance(t: f64) -> f64 {
    1e-9 + t.abs() * 1e-15
}

#[derive(Clone, Debug)]
enum Rule {
    Static,
    RateTracking(RateTracking),
    Fairbat(Fairbat),
}

/// Time averages over [measure_from, now].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Averages {
    /// Seconds measured.
    pub span: f64,
    pub limit: f64,
    /// Standard deviation of the limit over time.
    pub limit_sd: f64,
    pub active: f64,
    pub waiting: f64,
}

/// Integrals behind [`Averages`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    span: f64,
    limit: f64,
    limit_sq: f64,
    active: f64,
    waiting: f64,
}

/// An access controller over chunks of type `T` (whatever the caller needs to start one).
#[derive(Clone, Debug)]
pub struct AccessController<T> {
    rule: Rule,
    fractional: Fractional,
    m_min: f64,
    m_max: f64,
    period: f64,
    limit: f64,
    waiting: VecDeque<T>,
    active: u32,
    now: f64,
    start: f64,
    updates: u64,
    alt: Alternation,
    /// When the credit of the alternation reaches zero (infinite if it is not running down).
    credit_zero_at: f64,
    window: Window,
    measure_from: f64,
    sums: Sums,
}

impl<T> AccessController<T> {
    /// A controller starting at time `start` (its updates fall at start + j·period),
    /// averaging from `measure_from`. Checks the parameters.
    pub fn new(params: &AccessParams, start: f64, measure_from: f64) -> Result<Self, ParamError> {
        params.validate()?;
        let (rule, limit, m_min, m_max, period) = match params {
            AccessParams::Static(p) => (Rule::Static, p.limit, p.limit, p.limit, f64::INFINITY),
            AccessParams::RateTracking(p) => (Rule::RateTracking(RateTracking::new(*p)), p.m0, p.m_min, p.m_max, p.period_s),
            AccessParams::Fairbat(p) => (Rule::Fairbat(Fairbat::new(*p)), p.m0, p.m_min, p.m_max, p.period_s),
        };
        Ok(AccessController {
            rule,
            fractional: params.fractional(),
            m_min,
            m_max,
            period,
            limit,
            waiting: VecDeque::new(),
            active: 0,
            now: start,
            start,
            updates: 0,
            alt: Alternation::default(),
            credit_zero_at: f64::INFINITY,
            window: Window::default(),
            measure_from,
            sums: Sums::default(),
        })
    }

    /// The limit M (fractional in general).
    pub fn limit(&self) -> f64 {
        self.limit
    }
    /// Chunks transferring.
    pub fn active(&self) -> u32 {
        self.active
    }
    /// Chunks waiting to start.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
    /// Limit updates done.
    pub fn updates(&self) -> u64 {
        self.updates
    }
    /// Whether `on_deadline` needs the bytes delivered (rate tracking measures them).
    pub fn measures_delivery(&self) -> bool {
        matches!(self.rule, Rule::RateTracking(_))
    }
    /// How many TCP flows the active chunks count as: `active`, or with the fluid
    /// realisation [`Fractional::Weight`], min(active, M).
    pub fn weight(&self) -> f64 {
        match self.fractional {
            Fractional::Alternate => self.active as f64,
            Fractional::Weight => (self.active as f64).min(self.limit),
        }
    }
    /// Time averages of the limit, active and waiting chunks since `measure_from`.
    pub fn averages(&self) -> Averages {
        let s = self.sums;
        if s.span > 0.0 {
            let limit = s.limit / s.span;
            Averages {
                span: s.span,
                limit,
                limit_sd: (s.limit_sq / s.span - limit * limit).max(0.0).sqrt(),
                active: s.active / s.span,
                waiting: s.waiting / s.span,
            }
        } else {
            Averages { span: 0.0, limit: self.limit, limit_sd: 0.0, active: self.active as f64, waiting: self.waiting.len() as f64 }
        }
    }

    /// Let time run to `now` (never backwards) with nothing happening (to read
    /// [`Self::averages`] up to `now`).
    pub fn advance_to(&mut self, now: f64) {
        self.advance(now);
        self.refresh();
    }

    /// Let time run to `now` (never backwards) with the current state.
    fn advance(&mut self, now: f64) {
        let dt = now - self.now;
        debug_assert!(dt >= -tolerance(now), "time went back from {} to {now}", self.now);
        if dt > 0.0 {
            let n = self.waiting.len();
            self.window.advance(dt, self.active, n);
            self.alt.advance(dt, self.active, self.limit, n > 0);
            let from = self.now.max(self.measure_from);
            if now > from {
                let d = now - from;
                self.sums.span += d;
                self.sums.limit += self.limit * d;
                self.sums.limit_sq += self.limit * self.limit * d;
                self.sums.active += self.active as f64 * d;
                self.sums.waiting += n as f64 * d;
            }
            self.now = now;
        }
        if now >= self.credit_zero_at - tolerance(now) {
            self.alt.settle();
            self.credit_zero_at = f64::INFINITY;
        }
    }

    /// When the credit next reaches zero, after a change of state.
    fn refresh(&mut self) {
        self.credit_zero_at = match self.fractional {
            Fractional::Alternate if !self.waiting.is_empty() => {
                self.alt.until_zero(self.active, self.limit).map_or(f64::INFINITY, |d| self.now + d)
            }
            _ => f64::INFINITY,
        };
    }

    fn may_admit(&self) -> bool {
        match self.fractional {
            Fractional::Alternate => self.alt.allows(self.active, self.limit),
            Fractional::Weight => self.active < floor_ceil(self.limit).1.max(1),
        }
    }

    /// A chunk of `bytes` arrives at `now` and joins the queue.
    pub fn arrive(&mut self, now: f64, chunk: T, bytes: f64) {
        self.advance(now);
        self.window.arrived_bytes += bytes;
        self.window.arrivals += 1;
        self.waiting.push_back(chunk);
        self.refresh();
    }

    /// The next chunk to start now, if the limit allows one (call until None).
    pub fn admit(&mut self, now: f64) -> Option<T> {
        self.advance(now);
        if self.waiting.is_empty() || !self.may_admit() {
            return None;
        }
        let c = self.waiting.pop_front();
        self.active += 1;
        self.refresh();
        c
    }

    /// An active chunk finished at `now`.
    pub fn complete(&mut self, now: f64) {
        self.advance(now);
        debug_assert!(self.active > 0, "a completion with no active chunk");
        self.active = self.active.saturating_sub(1);
        self.refresh();
    }

    /// The next time `on_deadline` must be called (infinite: never).
    pub fn next_deadline(&self) -> f64 {
        let update = self.start + (self.updates + 1) as f64 * self.period;
        update.min(self.credit_zero_at)
    }

    /// A deadline is due at `now`: update the limit if a period has ended.
    /// `delivered` is the total of bytes the chunks delivered so far (only rate
    /// tracking reads it; see [`Self::measures_delivery`]).
    pub fn on_deadline(&mut self, now: f64, delivered: f64) {
        self.advance(now);
        loop {
            let due = self.start + (self.updates + 1) as f64 * self.period;
            if now < due - tolerance(now) {
                break;
            }
            let w = std::mem::take(&mut self.window);
            let n = self.waiting.len();
            let next = match &mut self.rule {
                Rule::Static => break,
                Rule::RateTracking(r) => r.update(self.limit, &w, delivered, n),
                Rule::Fairbat(f) => f.update(self.limit, &w, n, self.active),
            };
            // Anti-windup: a limit above the chunks the sender held does not bind, and
            // moving it further up only stores a change it would have to undo. The limit
            // never stays above the most chunks held during the period (or now), plus one.
            let held = w.held_peak.max(self.active as u64 + n as u64) as f64 + 1.0;
            self.limit = next.min(held).clamp(self.m_min, self.m_max);
            self.updates += 1;
        }
        self.refresh();
    }
}
