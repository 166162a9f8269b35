//! TFCBR, TCP-Friendly CBR-like Rate Control (Feng and Xu, "TCP-Friendly
//! CBR-Like Rate Control", §IV-C), and RDTF, the paper's representative of
//! relaxed deterministic TCP friendliness (§VI-A: TFCBR with α = 1).
//!
//! TFCBR is TFRC with a different congestion-avoidance rule, on the sender only
//! (§IV-C): "Slow start. TFCBR does not change the slow start part of TFRC.
//! Congestion avoidance. TFCBR maintains all the TCP rates estimated by TFRC in
//! the past β seconds. Every RTT, TFCBR sets its sending rate to the product of α
//! and the average of all TCP rates estimated in the past β seconds." Before β
//! seconds of estimates exist, the average is over those there are.
//!
//! Here the flow runs the whole TFRC sender of `tfrc/` (and its receiver). Each
//! feedback report with p > 0 gives one "TCP rate estimated by TFRC": X_Bps, the
//! throughput equation's rate for the reported p and the sender's R (RFC 5348
//! §4.3 step 4, ns-2's `rcvrate`), not TFRC's allowed rate X, which is also
//! capped at twice the receive rate. Reports come once per RTT, and at once
//! when p grows. The sending rate is α times the arithmetic mean of the
//! estimates whose reports arrived within the last β seconds, set at every
//! report. The paper does not say what a TFCBR sender does when feedback stops;
//! here the no-feedback timer of TFRC halves the congestion-avoidance rate (at
//! most down to one datagram per t_mbi) until the next report.
//!
//! Defaults: α = 0.5 and β = 64 s (§V-D), RDTF α = 1 and β = 64 s (§VI-A).
use super::feedback::Report;
use super::tfrc::{TfrcParams, TfrcReceiver, TfrcSender, T_MBI};
use super::{FlowStart, RateControl, RateProtocol, Receiver};
use crate::engine::SimTime;
use crate::settings::{Duration, Result, Table};
use crate::transport::state::StateVars;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// TFCBR's (and RDTF's) parameters: α, β, and the TFRC it modifies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfcbrParams {
    /// α, the relative sending rate: the ratio of the flow's average rate to a TCP
    /// flow's in the same environment on the time scale of β (> 0).
    pub alpha: f64,
    /// β, the smoothness time scale: the window of TCP-rate estimates averaged (> 0).
    #[serde(rename = "beta_ns")]
    pub beta: SimTime,
    /// TFRC's q (RFC 5348 §4.3).
    pub q: f64,
    /// TFRC's history discounting (RFC 5348 §5.5).
    pub discounting: bool,
    /// TFRC's §4.5 adjustment (applies in slow start only: congestion avoidance
    /// sends α times the average).
    pub oscillation_reduction: bool,
}

impl TfcbrParams {
    fn new(alpha: f64, beta: SimTime, t: &TfrcParams) -> Self {
        TfcbrParams { alpha, beta, q: t.q, discounting: t.discounting, oscillation_reduction: t.oscillation_reduction }
    }

    /// The TFRC underneath.
    pub fn tfrc(&self) -> TfrcParams {
        TfrcParams { q: self.q, discounting: self.discounting, oscillation_reduction: self.oscillation_reduction, ..TfrcParams::default() }
    }

    /// `alpha`, `beta` (defaults given) and TFRC's keys.
    fn read(mut t: Table, alpha: f64, what: &str) -> Result<TfcbrParams> {
        let alpha: f64 = t.or("alpha", alpha)?;
        let beta = t.get::<Duration>("beta")?.map_or(BETA, |d| d.0);
        let tfrc = TfrcParams::read_keys(&mut t)?;
        t.finish(what)?;
        Ok(TfcbrParams::new(alpha, beta, &tfrc))
    }

    /// The one range check: α and β, then TFRC's.
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(("alpha", format!("expected a positive number, got {}", self.alpha)));
        }
        if self.beta == SimTime::ZERO || self.beta > SimTime::LONGEST {
            return Err(("beta_ns", format!("expected a duration above 0 and at most 1e9 s, got {} ns", self.beta.0)));
        }
        self.tfrc().check()
    }
}

/// β = 64 s (§V-D).
pub const BETA: SimTime = SimTime::from_secs(64);

/// The sender of a TFCBR flow, or with `RDTF` of an RDTF flow (the same rule,
/// α = 1 by default).
#[derive(Clone, Debug)]
pub struct Tfcbr<const RDTF: bool = false>(Box<State>);

/// RDTF: TFCBR with α = 1 (the paper's relaxed deterministic TCP friendliness, §VI-A).
pub type Rdtf = Tfcbr<true>;

#[derive(Clone, Debug)]
struct State {
    tfrc: TfrcSender,
    alpha: f64,
    beta: SimTime,
    /// The TCP-rate estimates of the last β seconds, with their times, and their sum.
    estimates: VecDeque<(SimTime, f64)>,
    sum: f64,
    /// Estimates dropped from the window since `sum` was last added up afresh.
    dropped: usize,
    /// The congestion-avoidance rate (None: still in slow start).
    rate: Option<f64>,
}

impl State {
    fn new(p: &TfcbrParams) -> Self {
        State { tfrc: TfrcSender::new(&p.tfrc()), alpha: p.alpha, beta: p.beta, estimates: VecDeque::new(), sum: 0.0, dropped: 0, rate: None }
    }

    fn rate(&self) -> f64 {
        self.rate.unwrap_or_else(|| self.tfrc.rate())
    }

    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        self.tfrc.on_feedback(now, report);
        let Some(x) = self.tfrc.x_bps() else { return };
        self.estimates.push_back((now, x));
        self.sum += x;
        let from = now.0.saturating_sub(self.beta.0);
        while self.estimates.front().is_some_and(|&(t, _)| t.0 <= from) {
            let (_, old) = self.estimates.pop_front().expect("checked");
            self.sum -= old;
            self.dropped += 1;
        }
        // Add the window up afresh each time it has turned over, so that rounding
        // never builds up (amortized O(1) per estimate).
        if self.dropped >= self.estimates.len() {
            self.sum = self.estimates.iter().map(|&(_, x)| x).sum();
            self.dropped = 0;
        }
        self.rate = Some(self.alpha * self.sum / self.estimates.len() as f64);
    }

    fn on_nofeedback(&mut self, now: SimTime) {
        self.tfrc.on_nofeedback(now);
        if let Some(r) = self.rate {
            self.rate = Some((r / 2.0).max(self.tfrc.segment() / T_MBI));
        }
    }
}

impl<const RDTF: bool> Tfcbr<RDTF> {
    /// The number of TCP-rate estimates in the window (for tests).
    pub fn estimates(&self) -> usize {
        self.0.estimates.len()
    }
}

impl<const RDTF: bool> RateProtocol for Tfcbr<RDTF> {
    const NAME: &'static str = if RDTF { "rdtf" } else { "tfcbr" };
    type Params = TfcbrParams;

    /// `cc = { alpha = 0.5, beta = "64s" }` (RDTF: α = 1) and TFRC's keys, all optional.
    fn read(t: Table) -> Result<TfcbrParams> {
        if RDTF {
            TfcbrParams::read(t, 1.0, "the rdtf protocol")
        } else {
            TfcbrParams::read(t, 0.5, "the tfcbr protocol")
        }
    }

    fn check(p: &TfcbrParams) -> std::result::Result<(), (&'static str, String)> {
        p.check()
    }

    fn file_key(key: &'static str) -> &'static str {
        match key {
            "beta_ns" => "beta",
            k => k,
        }
    }

    fn new(p: &TfcbrParams) -> Self {
        Tfcbr(Box::new(State::new(p)))
    }

    fn receiver(p: &TfcbrParams, packet_bytes: u32) -> Option<Receiver> {
        Some(Receiver::Tfrc(TfrcReceiver::new(&p.tfrc(), packet_bytes)))
    }
}

impl<const RDTF: bool> RateControl for Tfcbr<RDTF> {
    #[inline]
    fn rate_bps(&self) -> f64 {
        8.0 * self.0.rate()
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        self.0.tfrc.deadline()
    }
    fn on_deadline(&mut self, now: SimTime) {
        self.0.on_nofeedback(now);
    }
    fn start(&mut self, f: FlowStart) {
        self.0.tfrc.start(f.now, f.packet_bytes);
    }
    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        self.0.on_feedback(now, report);
    }
    #[inline]
    fn rtt(&self) -> Option<SimTime> {
        self.0.tfrc.rtt()
    }
    /// TFRC's variables, and the TCP-rate estimates averaged over the last β.
    fn observe(&self, vars: &mut StateVars) {
        self.0.tfrc.observe(vars);
        vars.put("tfcbr.estimates", self.0.estimates.len() as f64);
    }
}

#[cfg(test)]
mod tests;
