//! TFRC, TCP-Friendly Rate Control (RFC 5348): an equation-based rate sender
//! whose receiver reports once per RTT.
//!
//! * The receiver (`receiver.rs`) detects losses from sequence gaps (a datagram
//!   is lost once three later ones have arrived, §5.1), groups losses that start
//!   within one RTT of each other into loss events (§5.2), keeps the last eight
//!   loss intervals (§5.3) and turns them into the loss event rate p with the
//!   weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (§5.4; `loss.rs`, with the optional
//!   history discounting of §5.5). It seeds the history at the first loss event
//!   with the interval that gives its receive rate (§6.3.1), measures X_recv over
//!   the last RTT, and reports every RTT, at once when p grows (§6.1-6.2).
//! * The sender (`sender.rs`) filters its RTT samples (q = 0.9, §4.3), sets its
//!   rate from the throughput equation (§3.1, b = 1, t_RTO = 4R) capped at twice
//!   the receive rates of the last two RTTs, doubles it once per RTT in slow start
//!   while p = 0 (§4.3 step 4), halves it when the no-feedback timer expires
//!   (§4.4), and optionally scales it by the RTT's variation (§4.5).
//!
//! The sender is greedy: it is never idle or data-limited, so the rules of
//! RFC 5348 for those cases (§4.3 step 4's data-limited branch, §4.4's idle
//! branches, §8) never apply. docs/protocols.md#tfrc lists every choice.
pub mod loss;
mod ns2;
mod receiver;
mod sender;

pub use ns2::{Ns2Receiver, Ns2Sender};
pub use receiver::TfrcReceiver;
pub use sender::TfrcSender;

#[cfg(test)]
pub mod harness;

use super::feedback::Report;
use super::{FlowStart, RateControl, RateProtocol, Receiver};
use crate::engine::SimTime;
use crate::settings::{err, Result, Table};
use crate::transport::state::StateVars;
use serde::{Deserialize, Serialize};

/// t_mbi, the longest the sender waits between datagrams: 64 s (RFC 5348 §4.3).
pub const T_MBI: f64 = 64.0;

/// The TCP throughput equation of RFC 5348 §3.1, in bytes per second, for
/// datagrams of `s` bytes, round-trip time `r` seconds and loss event rate `p`,
/// with b = 1 and t_RTO = 4R (both as §3.1 recommends):
///
/// ```text
/// X_Bps = s / (R·sqrt(2bp/3) + t_RTO·(3·sqrt(3bp/8))·p·(1 + 32p²))
/// ```
pub fn throughput(s: f64, r: f64, p: f64) -> f64 {
    const B: f64 = 1.0;
    let t_rto = 4.0 * r;
    s / (r * (2.0 * B * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * B * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

/// The loss event rate p at which [`throughput`] gives `x` bytes per second
/// (RFC 5348 §6.3.1 asks for one within 5%; this is exact to 1e-9 relative),
/// between 1e-12 and 1. The equation falls strictly as p grows, so bisection on
/// log p finds it.
pub fn loss_rate_for(s: f64, r: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-12f64.ln(), 0.0f64);
    if throughput(s, r, 1e-12) <= x {
        return 1e-12;
    }
    if throughput(s, r, 1.0) >= x {
        return 1.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if throughput(s, r, mid.exp()) > x {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 {
            break;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// Which TFRC runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// RFC 5348 (the default).
    #[default]
    Rfc5348,
    /// ns-2.35's Agent/TFRC and TFRCSink with their defaults (`ns2/`).
    Ns2,
}

impl Variant {
    fn is_rfc5348(&self) -> bool {
        *self == Variant::Rfc5348
    }
}

/// TFRC's parameters: the RFC's options. b, t_RTO, t_mbi, the eight loss
/// intervals and their weights, NDUPACK and the discounting threshold are the
/// RFC's constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfrcParams {
    /// `"rfc5348"` (the default; not written in the canonical form) or `"ns2"`,
    /// which runs ns-2's rules and constants and takes none of the keys below.
    #[serde(default, skip_serializing_if = "Variant::is_rfc5348")]
    pub variant: Variant,
    /// q, the weight of the old RTT estimate in the sender's filter
    /// R = q·R + (1 − q)·R_sample (RFC 5348 §4.3 step 2 recommends 0.9), in [0, 1).
    pub q: f64,
    /// History discounting of the loss intervals (RFC 5348 §5.5, optional).
    pub discounting: bool,
    /// The instantaneous-RTT adjustment of the sending rate (RFC 5348 §4.5):
    /// X_inst = X·R_sqmean/sqrt(R_sample).
    pub oscillation_reduction: bool,
}

impl Default for TfrcParams {
    fn default() -> Self {
        TfrcParams { variant: Variant::Rfc5348, q: 0.9, discounting: false, oscillation_reduction: false }
    }
}

impl TfrcParams {
    /// Read TFRC's keys from a `cc` table (TFCBR and RDTF read them too):
    /// `q`, `discounting`, `oscillation_reduction`, each optional.
    pub fn read_keys(t: &mut Table) -> Result<TfrcParams> {
        let d = TfrcParams::default();
        Ok(TfrcParams {
            variant: Variant::Rfc5348,
            q: t.or("q", d.q)?,
            discounting: t.or("discounting", d.discounting)?,
            oscillation_reduction: t.or("oscillation_reduction", d.oscillation_reduction)?,
        })
    }

    /// The one range check of TFRC's parameters (TFCBR and RDTF run it on theirs):
    /// the first key out of range, and why.
    pub fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(0.0..1.0).contains(&self.q) {
            return Err(("q", format!("expected a number in [0, 1), got {}", self.q)));
        }
        if self.variant == Variant::Ns2 {
            // ns-2's choices are fixed (df_ 0.95, discount_ 1, ca_ 1): the canonical
            // form writes the RFC's defaults beside them, and nothing else.
            let d = TfrcParams::default();
            let fixed = [
                ("q", self.q == d.q, d.q.to_string()),
                ("discounting", self.discounting == d.discounting, d.discounting.to_string()),
                ("oscillation_reduction", self.oscillation_reduction == d.oscillation_reduction, d.oscillation_reduction.to_string()),
            ];
            if let Some((key, _, default)) = fixed.into_iter().find(|f| !f.1) {
                return Err((key, format!("the ns2 variant runs ns-2's own rules (df_ 0.95, discount_ 1, ca_ 1) and keeps {key} at its default, {default}")));
            }
        }
        Ok(())
    }
}

/// A TFRC flow's sending end: RFC 5348's or ns-2's.
#[derive(Clone, Debug)]
pub enum Tfrc {
    Rfc5348(Box<TfrcSender>),
    Ns2(Box<Ns2Sender>),
}

impl RateProtocol for Tfrc {
    const NAME: &'static str = "tfrc";
    type Params = TfrcParams;

    /// `cc = { q = 0.9, discounting = false, oscillation_reduction = false }` (all
    /// optional), or `cc = { variant = "ns2" }` alone.
    fn read(mut t: Table) -> Result<TfrcParams> {
        let variant = match t.get::<String>("variant")?.as_deref() {
            None | Some("rfc5348") => Variant::Rfc5348,
            Some("ns2") => Variant::Ns2,
            Some(other) => return err(t.key_path("variant"), format!("expected \"rfc5348\" or \"ns2\", got {other:?}")),
        };
        if variant == Variant::Ns2 {
            // ns-2's choices are fixed: df_ 0.95, discount_ 1, ca_ 1.
            for key in ["q", "discounting", "oscillation_reduction"] {
                if t.present(key) {
                    return err(t.key_path(key), "the ns2 variant runs ns-2's own rules (df_ 0.95, discount_ 1, ca_ 1) and takes no other key");
                }
            }
            t.finish("the tfrc protocol")?;
            return Ok(TfrcParams { variant, ..TfrcParams::default() });
        }
        let p = TfrcParams::read_keys(&mut t)?;
        t.finish("the tfrc protocol")?;
        Ok(p)
    }

    fn check(p: &TfrcParams) -> std::result::Result<(), (&'static str, String)> {
        p.check()
    }

    fn new(p: &TfrcParams) -> Self {
        match p.variant {
            Variant::Rfc5348 => Tfrc::Rfc5348(Box::new(TfrcSender::new(p))),
            Variant::Ns2 => Tfrc::Ns2(Box::new(Ns2Sender::new())),
        }
    }

    fn receiver(p: &TfrcParams, packet_bytes: u32) -> Option<Receiver> {
        Some(match p.variant {
            Variant::Rfc5348 => Receiver::Tfrc(TfrcReceiver::new(p, packet_bytes)),
            Variant::Ns2 => Receiver::TfrcNs2(Box::new(Ns2Receiver::new(packet_bytes))),
        })
    }
}

impl RateControl for Tfrc {
    #[inline]
    fn rate_bps(&self) -> f64 {
        8.0 * match self {
            Tfrc::Rfc5348(s) => s.rate(),
            Tfrc::Ns2(s) => s.rate(),
        }
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        match self {
            Tfrc::Rfc5348(s) => s.deadline(),
            Tfrc::Ns2(s) => Some(s.deadline()),
        }
    }
    fn on_deadline(&mut self, now: SimTime) {
        match self {
            Tfrc::Rfc5348(s) => s.on_nofeedback(now),
            Tfrc::Ns2(s) => s.on_nofeedback(now),
        }
    }
    fn start(&mut self, f: FlowStart) {
        match self {
            Tfrc::Rfc5348(s) => s.start(f.now, f.packet_bytes),
            Tfrc::Ns2(s) => s.start(f.now, f.packet_bytes),
        }
    }
    fn on_feedback(&mut self, now: SimTime, report: &Report) {
        match self {
            Tfrc::Rfc5348(s) => s.on_feedback(now, report),
            Tfrc::Ns2(s) => s.on_feedback(now, report),
        }
    }
    #[inline]
    fn rtt(&self) -> Option<SimTime> {
        match self {
            Tfrc::Rfc5348(s) => s.rtt(),
            Tfrc::Ns2(s) => s.rtt(),
        }
    }
    fn next_send(&self) -> Option<SimTime> {
        match self {
            Tfrc::Rfc5348(_) => None,
            Tfrc::Ns2(s) => Some(s.next_send()),
        }
    }
    fn on_sent(&mut self, now: SimTime) {
        if let Tfrc::Ns2(s) = self {
            s.on_sent(now);
        }
    }
    fn header_field(&self) -> u32 {
        match self {
            Tfrc::Rfc5348(_) => 0,
            Tfrc::Ns2(s) => s.header().field(),
        }
    }
    fn observe(&self, vars: &mut StateVars) {
        match self {
            Tfrc::Rfc5348(s) => s.observe(vars),
            Tfrc::Ns2(s) => s.observe(vars),
        }
    }
}

#[cfg(test)]
mod tests;
