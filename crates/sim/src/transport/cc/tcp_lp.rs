//! TCP-LP, TCP Low Priority: A. Kuzmanovic and E. W. Knightly, "TCP-LP:
//! low-priority service via end-point congestion control", IEEE/ACM Transactions
//! on Networking 14(4), 2006 (INFOCOM 2003 for the first version).
//!
//! A NewReno sender that also infers congestion early, from one-way delays:
//! an *early congestion indication* when the smoothed one-way delay passes
//! `d_min + δ·(d_max − d_min)` (paper §III-A). On an indication it halves the
//! window and starts an *inference time-out*; a second indication before the
//! time-out ends sends the window to one packet; while the time-out runs the
//! window does not grow (paper §III-B). Losses and timeouts get TCP's own
//! response.
//!
//! Three variants (`cc = { variant = ... }`), compared rule by rule in
//! docs/protocols.md (section TCP-LP):
//!
//! * `"paper"` (the default) follows the paper: lifetime minimum and maximum of
//!   the one-way delay samples, the inference time-out at `inference_rtts`
//!   smoothed RTTs, no growth at all (slow start included) during it, and after
//!   an indication the additive-increase phase (ssthresh = the reduced window).
//!   At most one indication per window of data (see [`Paper`]).
//! * `"ns3"` is ns-3 3.44's `TcpLp` (src/internet/model/tcp-lp.cc) and
//!   `"linux"` Linux's `tcp_lp.c` (which ns-2.35 runs in its TCP-Linux agent),
//!   rule for rule in their integer millisecond arithmetic, for cross-checks
//!   (see [`Reference`]).
//! * `"ns2"` is that `tcp_lp.c` as ns-2.35's `Agent/TCP/Linux` runs it, with
//!   ns-2's clocks, timestamps, remote-HZ estimate, 64-bit types and the
//!   agent's Reno growth in whole packets (see [`ns2`]).
mod linux_reno;
mod loss_state;
mod ns2;

use ns2::Ns2;

use super::newreno::reno_ssthresh;
use super::{Ack, Congestion, CongestionControl, RenoGrowth, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::settings::{err, Result, Table};
use crate::transport::state::StateVars;
use serde::{Deserialize, Serialize};

/// Which rule set runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The paper's algorithm (default).
    Paper,
    /// ns-3 3.44's TcpLp.
    Ns3,
    /// Linux's tcp_lp.c, on cclab's machinery and clock.
    Linux,
    /// Linux's tcp_lp.c inside ns-2.35's Agent/TCP/Linux.
    Ns2,
}

/// TCP-LP's parameters (the `cc` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpLpParams {
    /// `"paper"`, `"ns3"`, `"linux"` or `"ns2"`; default `"paper"`.
    pub variant: Variant,
    /// δ, where the threshold sits between the minimum and maximum one-way delay;
    /// default 0.15 (paper §III-A and its simulations; Linux's and ns-3's `15 / 100`).
    pub delta: f64,
    /// γ, the gain of the one-way delay smoothing; default 1/8 (paper §III-A: the
    /// smoothing of TCP's SRTT; Linux and ns-3 shift by 3).
    pub gain: f64,
    /// The inference time-out in round-trip times; default 3 (paper §III-B;
    /// Linux and ns-3 multiply their RTT by 3).
    pub inference_rtts: f64,
}

impl Default for TcpLpParams {
    fn default() -> Self {
        TcpLpParams { variant: Variant::Paper, delta: 0.15, gain: 0.125, inference_rtts: 3.0 }
    }
}

/// The largest inference time-out, in round-trip times (a bound that keeps the
/// time-out's arithmetic far from overflow; the paper uses 3).
const MAX_INFERENCE_RTTS: f64 = 1000.0;

/// TCP-LP (`protocol = "tcp_lp"`).
#[derive(Clone, Debug)]
pub enum TcpLp {
    Paper(Paper),
    Reference(Reference),
    Ns2(Ns2),
}

impl WindowProtocol for TcpLp {
    const NAME: &'static str = "tcp_lp";
    type Params = TcpLpParams;

    fn read(mut t: Table) -> Result<TcpLpParams> {
        let d = TcpLpParams::default();
        let variant = match t.get::<String>("variant")?.as_deref() {
            None | Some("paper") => Variant::Paper,
            Some("ns3") => Variant::Ns3,
            Some("linux") => Variant::Linux,
            Some("ns2") => Variant::Ns2,
            Some(other) => return err(t.key_path("variant"), format!("expected \"paper\", \"ns3\", \"linux\" or \"ns2\", got {other:?}")),
        };
        let p = TcpLpParams {
            variant,
            delta: t.or("delta", d.delta)?,
            gain: t.or("gain", d.gain)?,
            inference_rtts: t.or("inference_rtts", d.inference_rtts)?,
        };
        t.finish("the tcp_lp controller")?;
        Ok(p)
    }

    fn check(p: &TcpLpParams) -> std::result::Result<(), (&'static str, String)> {
        if !(0.0..=1.0).contains(&p.delta) {
            return Err(("delta", format!("expected a number from 0 to 1, got {}", p.delta)));
        }
        if !(p.gain > 0.0 && p.gain <= 1.0) {
            return Err(("gain", format!("expected a number above 0 and at most 1, got {}", p.gain)));
        }
        if !(0.0..=MAX_INFERENCE_RTTS).contains(&p.inference_rtts) {
            return Err(("inference_rtts", format!("expected a number from 0 to {MAX_INFERENCE_RTTS}, got {}", p.inference_rtts)));
        }
        if p.variant != Variant::Paper {
            // ns-3 and Linux smooth with shifts (gain 1/8) and compute 15 * (max - min) / 100.
            let v = match p.variant {
                Variant::Ns3 => "ns3",
                Variant::Linux => "linux",
                _ => "ns2",
            };
            if p.gain != 0.125 {
                return Err(("gain", format!("the {v} variant smooths with a fixed gain of 1/8 (0.125), got {}", p.gain)));
            }
            let pct = p.delta * 100.0;
            if (pct - pct.round()).abs() > 1e-9 {
                return Err(("delta", format!("the {v} variant takes delta in whole hundredths (its threshold is 15/100), got {}", p.delta)));
            }
        }
        if p.variant == Variant::Ns2 && p.inference_rtts.fract() != 0.0 {
            return Err(("inference_rtts", format!("the ns2 variant takes a whole number of round trips (its time-out is 3 * rtt in ms), got {}", p.inference_rtts)));
        }
        Ok(())
    }

    fn new(p: &TcpLpParams) -> Self {
        match p.variant {
            Variant::Paper => TcpLp::Paper(Paper::new(p)),
            Variant::Ns3 | Variant::Linux => TcpLp::Reference(Reference::new(p)),
            Variant::Ns2 => TcpLp::Ns2(Ns2::new((p.delta * 100.0).round() as u64, p.inference_rtts as u64)),
        }
    }
}

impl CongestionControl for TcpLp {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        match self {
            TcpLp::Paper(c) => c.on_ack(w, ack),
            TcpLp::Reference(c) => c.on_ack(w, ack),
            TcpLp::Ns2(c) => c.on_ack(w, ack),
        }
    }

    /// Losses and timeouts: TCP's response (paper §III-B keeps TCP's reaction to
    /// packet loss; Linux's `tcp_reno_ssthresh`, ns-3's `TcpNewReno::GetSsThresh`).
    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        match self {
            TcpLp::Paper(c) => c.growth.on_congestion(event),
            TcpLp::Reference(c) => c.growth.on_congestion(event),
            TcpLp::Ns2(c) => return c.on_congestion(w, event),
        }
        reno_ssthresh(w, event, flight)
    }

    /// The delay inference (absent before the first one-way delay sample): the
    /// smoothed one-way delay, the minimum and maximum the threshold is built
    /// from, the threshold d_min + δ·(d_max − d_min), whether the smoothed delay
    /// is above it (early congestion, 1 or 0), and what remains of the inference
    /// time-out after the latest indication (0 outside it: a new indication
    /// halves the window, inside it one sets the window to one segment).
    fn observe(&self, _w: &Window, now: SimTime, vars: &mut StateVars) {
        let ms = |x: u32| x as f64 * 1e-3;
        let (sowd, min, max, threshold, end) = match self {
            TcpLp::Paper(c) if c.sampled => (c.sowd * 1e-9, c.owd_min * 1e-9, c.owd_max * 1e-9, c.threshold * 1e-9, c.inference_end()),
            TcpLp::Reference(c) if c.sowd != 0 => {
                let threshold = c.owd_min.wrapping_add(c.pct.wrapping_mul(c.owd_max.wrapping_sub(c.owd_min)) / 100);
                (c.sowd as f64 / 8e3, ms(c.owd_min), ms(c.owd_max), ms(threshold), c.last_drop.map(|t| t + c.inference))
            }
            TcpLp::Ns2(c) => return c.observe(now, vars),
            _ => return,
        };
        vars.put("tcp_lp.smoothed_owd_s", sowd);
        vars.put("tcp_lp.owd_min_s", min);
        vars.put("tcp_lp.owd_max_s", max);
        vars.put("tcp_lp.threshold_s", threshold);
        vars.put("tcp_lp.early_congestion", (sowd > threshold) as u8 as f64);
        vars.put("tcp_lp.inference_left_s", end.map_or(0.0, |e| e.0.saturating_sub(now.0) as f64 * 1e-9));
    }
}

/// What an early congestion indication did to the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indication {
    /// Outside the inference time-out: the window was halved.
    Halved,
    /// Within the inference time-out: the window went to one segment.
    Floored,
}

/// The paper's TCP-LP.
///
/// Choices where the paper leaves room, each documented in docs/protocols.md:
/// * one-way delays are the machinery's (`ack.one_way_delay`: the receiver's
///   arrival time minus the sender's send time, in nanoseconds, on one clock);
///   the paper takes them from TCP timestamps and notes that a clock offset
///   cancels out of `d − d_min` (§III-A);
/// * every ACK, duplicates included, gives one sample, as every ACK reports the
///   delay of the segment whose arrival sent it;
/// * at most one indication per window of data: after an indication, the next
///   one can only come from an ACK of data sent after it (cumulative ACK beyond
///   the `snd_nxt` of the indication). The paper's second indication is the
///   network's answer to the reduced window (under persistent congestion the
///   window reaches one packet in two round trips, §III-B); without this rule the ACKs already in flight, whose delays predate
///   the reduction, would floor the window within the same round trip. TCP
///   reacts to losses (RFC 6582 `recover`) and ECN marks (RFC 3168 §6.1.2) once
///   per window in the same way. For the same reason the smoothed delay starts
///   again from the first sample of data sent after the indication: smoothed
///   with gain 1/8 it would otherwise still be made of the delays that caused
///   the first indication for several more ACKs, and floor the window of a flow
///   alone on its link (whose queue the halving has emptied). Linux and ns-3
///   instead move the thresholds after an indication (see [`Reference`]);
/// * the smoothed RTT of the inference time-out is the controller's own, from
///   `ack.rtt` with RFC 6298's gain 1/8;
/// * during loss recovery (the machinery owns the window) delays are recorded
///   but indications are not acted on.
#[derive(Clone, Debug)]
pub struct Paper {
    delta: f64,
    gain: f64,
    inference_rtts: f64,
    /// Whether a one-way delay sample has been seen.
    sampled: bool,
    /// Smoothed one-way delay `sd` (ns).
    sowd: f64,
    /// Lifetime minimum and maximum one-way delay samples (ns).
    owd_min: f64,
    owd_max: f64,
    /// The indication threshold `d_min + δ·(d_max − d_min)` (ns), recomputed
    /// when `d_min` or `d_max` moves.
    threshold: f64,
    /// Smoothed RTT (ns; 0 before the first sample).
    srtt: f64,
    /// The inference time-out ends here (ZERO: none started).
    inference_end: SimTime,
    /// `snd_nxt` at the last indication: no further indication until the
    /// cumulative ACK passes it.
    hold_until: u64,
    /// The smoothed delay restarts from the first sample of data sent after the
    /// last indication.
    restart: bool,
    /// TCP's window growth (slow start, congestion avoidance, byte counting).
    growth: RenoGrowth,
}

impl Paper {
    fn new(p: &TcpLpParams) -> Self {
        Paper {
            delta: p.delta,
            gain: p.gain,
            inference_rtts: p.inference_rtts,
            sampled: false,
            sowd: 0.0,
            owd_min: 0.0,
            owd_max: 0.0,
            threshold: f64::INFINITY,
            srtt: 0.0,
            inference_end: SimTime::ZERO,
            hold_until: 0,
            restart: false,
            growth: RenoGrowth::default(),
        }
    }

    /// The smoothed one-way delay (ns).
    pub fn smoothed_owd(&self) -> f64 {
        self.sowd
    }

    /// The lifetime minimum and maximum one-way delays (ns).
    pub fn owd_range(&self) -> (f64, f64) {
        (self.owd_min, self.owd_max)
    }

    /// The current indication threshold (ns; infinite before the first sample).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The smoothed RTT (ns).
    pub fn srtt(&self) -> f64 {
        self.srtt
    }

    /// When the current inference time-out ends (None: none was ever started).
    pub fn inference_end(&self) -> Option<SimTime> {
        (self.inference_end != SimTime::ZERO).then_some(self.inference_end)
    }

    /// One one-way delay sample `d` (ns); `fresh`: the first sample of data sent
    /// after the last indication.
    #[inline]
    fn sample(&mut self, d: f64, fresh: bool) {
        if !self.sampled {
            // The first sample is the smoothed delay (as TCP's first SRTT,
            // RFC 6298 rule 2.2; Linux and ns-3 likewise).
            self.sampled = true;
            self.sowd = d;
            self.owd_min = d;
            self.owd_max = d;
            self.threshold = d;
            return;
        }
        if fresh {
            // What follows an indication is judged on the network's answer to the
            // reduced window (§III-B), not on delays measured before it: the smoothed
            // delay starts again from this sample, as RFC 6298 §5 (note to rule
            // 5.7) lets a sender restart a stale SRTT from the next measurement.
            self.sowd = d;
        }
        // d_min and d_max over the connection's lifetime (§III-A).
        if d < self.owd_min || d > self.owd_max {
            self.owd_min = self.owd_min.min(d);
            self.owd_max = self.owd_max.max(d);
            // Early congestion indication threshold (§III-A):
            // d_min + (d_max − d_min)·δ.
            self.threshold = self.owd_min + (self.owd_max - self.owd_min) * self.delta;
        }
        // sd_i = (1 − γ)·sd_{i−1} + γ·d_i (§III-A).
        if !fresh {
            self.sowd += self.gain * (d - self.sowd);
        }
    }

    /// The early congestion indication test and reaction (§III-B); returns what
    /// it did, if anything.
    #[inline]
    fn indicate(&mut self, w: &mut Window, ack: &Ack, within: bool) -> Option<Indication> {
        // An indication: the smoothed delay exceeds the threshold (§III-A),
        // counted once per window of data (see the type's notes).
        if self.sowd <= self.threshold || ack.snd_una <= self.hold_until {
            return None;
        }
        let what = if within {
            // A second indication within the inference time-out: the window to
            // one packet (§III-B).
            w.cwnd = w.mss;
            Indication::Floored
        } else {
            // A first indication: halve the window (§III-B), not below one packet.
            w.cwnd = (w.cwnd / 2).max(w.mss);
            Indication::Halved
        };
        // After the time-out TCP-LP enters its additive-increase phase, one packet
        // per round trip as TCP's congestion avoidance (§III-B): with NewReno's
        // rules, ssthresh at the reduced window.
        w.ssthresh = w.cwnd;
        // (Re)start the inference time-out: `inference_rtts` smoothed RTTs (§III-B).
        self.inference_end = ack.now + SimTime((self.inference_rtts * self.srtt) as u64);
        self.hold_until = ack.snd_nxt;
        self.restart = true;
        Some(what)
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if let Some(r) = ack.rtt {
            // SRTT with gain 1/8 (RFC 6298 §2).
            let r = r.0 as f64;
            self.srtt = if self.srtt == 0.0 { r } else { self.srtt + 0.125 * (r - self.srtt) };
        }
        if let Some(d) = ack.one_way_delay {
            let fresh = self.restart && ack.snd_una > self.hold_until;
            self.restart &= !fresh;
            self.sample(d.0 as f64, fresh);
        }
        if ack.in_recovery {
            // Recovery sets the window; the controller only observes.
            return;
        }
        let within = ack.now < self.inference_end;
        if self.indicate(w, ack, within).is_some() {
            return;
        }
        // During the inference time-out TCP-LP only watches the network's response
        // and does not increase its window (§III-B); otherwise TCP's increase:
        // NewReno's slow start and congestion avoidance.
        if !within {
            self.growth.on_ack(w, ack);
        }
    }
}

/// ns-3 3.44's TcpLp (`variant = "ns3"`) or Linux's tcp_lp.c (`variant =
/// "linux"`, the code ns-2.35 runs as `Agent/TCP/Linux` with `select_ca lp`),
/// rule for rule, for cross-checks. What they share (ns-3's is a port of Linux's):
/// * one-way delays in whole milliseconds, as their timestamp difference
///   `TSval − TSecr` (receiver's and sender's clocks in ms; one clock in a
///   simulator): when the ACK carries an RTT sample the send time is known and
///   the difference of the two truncated clocks is reproduced exactly; otherwise
///   the delay is truncated. A zero delay is not a sample (`LP_VALID_OWD`);
/// * `sowd` kept times 8 and updated by shifts (gain 1/8); `d_min`; `d_max` the
///   runner-up of a "reserve" maximum (the largest sample is forgotten);
/// * the threshold `d_min + pct·(d_max − d_min)/100` in 32-bit unsigned
///   integers (pct = 100·δ);
/// * on an indication: `d_min = sowd/8`, `d_max = reserve = sowd/4` (the Linux
///   port's "FIXME" reset), the window to half, not below one segment, or to one
///   segment within the inference time-out; ssthresh untouched;
/// * the inference time-out is `inference_rtts` times the ACK's RTT measured
///   from the echoed timestamp (`3 * (now − TSecr)`, the echo in whole ms),
///   counted from the last reduction; the time-out state is decided before this
///   ACK's reduction;
/// * in recovery the window change is left to the machinery (ns-3 and Linux
///   override it there too); the delay state changes as theirs.
///
/// Where they differ:
///
/// | rule | ns-3 3.44 | Linux (and ns-2.35) |
/// |---|---|---|
/// | ACKs that run the rules | every ACK, duplicates included (`PktsAcked` per ACK) | ACKs of new data (`pkts_acked`) |
/// | one-way delay sample | every such ACK | only with a valid timestamp (not after a retransmission) |
/// | indication | `sowd/8 > threshold` | `sowd/8 ≥ threshold` |
/// | growth within the time-out | congestion avoidance held, slow start not | none (`tcp_reno_cong_avoid` skipped) |
/// | window | bytes: max(cwnd/2, 1 MSS) | whole segments: max(⌊cwnd/MSS⌋/2, 1) |
/// | time-out clock | ns (`Now()`), echo in ms | ms (`tcp_time_stamp`) |
///
/// Known differences from both: ns-3 echoes on a duplicate ACK the timestamp of
/// the last in-order segment, so its duplicate-ACK delays grow with the time
/// since that segment was sent; here a duplicate ACK reports the arriving
/// segment's delay. Linux estimates the receiver's clock rate (`remote_hz`);
/// here the clocks are one. Window growth is cclab's NewReno (ns-3's slow
/// start adds `segmentsAcked` MSS per ACK, capped at ssthresh).
#[derive(Clone, Debug)]
pub struct Reference {
    /// Linux's rules (else ns-3's).
    linux: bool,
    pct: u32,
    inference_rtts: f64,
    /// Smoothed one-way delay times 8 (ms), `sowd` / `m_sOwd`.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// When the window was last reduced (`last_drop`; None: never).
    last_drop: Option<SimTime>,
    /// `inference`.
    inference: SimTime,
    /// TCP's window growth.
    growth: RenoGrowth,
}

const MS: u64 = 1_000_000;

impl Reference {
    fn new(p: &TcpLpParams) -> Self {
        Reference {
            linux: p.variant == Variant::Linux,
            pct: (p.delta * 100.0).round() as u32,
            inference_rtts: p.inference_rtts,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            last_drop: None,
            inference: SimTime::ZERO,
            growth: RenoGrowth::default(),
        }
    }

    /// (sowd × 8, d_min, d_max, reserve maximum), in ms.
    pub fn state(&self) -> (u32, u32, u32, u32) {
        (self.sowd, self.owd_min, self.owd_max, self.owd_max_rsv)
    }

    /// The current inference time-out.
    pub fn inference(&self) -> SimTime {
        self.inference
    }

    /// `RttSample` / `tcp_lp_rtt_sample`: one one-way delay sample in ms.
    #[inline]
    fn sample(&mut self, mowd: u32) {
        if mowd == 0 {
            return; // not LP_VALID_OWD
        }
        if mowd < self.owd_min {
            self.owd_min = mowd;
        }
        // The maximum forgets the largest sample: d_max is the runner-up.
        if mowd > self.owd_max {
            if mowd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { mowd } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd;
            } else {
                self.owd_max = mowd;
            }
        }
        // sowd = 7/8 sowd + 1/8 owd, kept times 8 (u32 arithmetic as theirs).
        if self.sowd != 0 {
            self.sowd = self.sowd.wrapping_add(mowd.wrapping_sub(self.sowd >> 3));
        } else {
            self.sowd = mowd << 3;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if self.linux && ack.bytes_acked == 0 {
            return; // Linux calls pkts_acked and cong_avoid for new data only
        }
        let now = ack.now;
        // The segment's send time, when the ACK echoes it (an RTT sample).
        let sent = ack.rtt.map(|r| now - r);
        if let Some(d) = ack.one_way_delay {
            let mowd = match sent {
                Some(s) => Some((s + d).0 / MS - s.0 / MS),
                None if !self.linux => Some(d.0 / MS),
                None => None,
            };
            if let Some(m) = mowd {
                self.sample(m.min(u32::MAX as u64) as u32);
            }
        }
        // inference = 3·(now − TSecr), when now is past the echo (in ms).
        if let Some(s) = sent {
            let echo_ms = s.0 / MS;
            if now.0 / MS > echo_ms {
                let rtt = if self.linux { SimTime((now.0 / MS - echo_ms) * MS) } else { now - SimTime(echo_ms * MS) };
                self.inference = SimTime((rtt.0 as f64 * self.inference_rtts) as u64);
            }
        }
        let within = self.last_drop.is_some_and(|t| {
            if self.linux {
                (now.0 / MS - t.0 / MS) * MS < self.inference.0
            } else {
                now - t < self.inference
            }
        });
        // "Within threshold": sowd/8 (<= ns-3, < Linux) d_min + 15·(d_max − d_min)/100,
        // in 32-bit unsigned arithmetic (before the first sample, d_max − d_min wraps to 1).
        let threshold = self.owd_min.wrapping_add(self.pct.wrapping_mul(self.owd_max.wrapping_sub(self.owd_min)) / 100);
        let s = self.sowd >> 3;
        if s > threshold || (self.linux && s == threshold) {
            self.owd_min = self.sowd >> 3;
            self.owd_max = self.sowd >> 2;
            self.owd_max_rsv = self.sowd >> 2;
            if !ack.in_recovery {
                w.cwnd = match (within, self.linux) {
                    (true, _) => w.mss,
                    (false, false) => (w.cwnd >> 1).max(w.mss),
                    (false, true) => ((w.cwnd / w.mss) >> 1).max(1) * w.mss,
                };
            }
            self.last_drop = Some(now);
        }
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        // Growth: ns-3 holds congestion avoidance only, Linux all of it.
        if !within || (!self.linux && w.cwnd < w.ssthresh) {
            self.growth.on_ack(w, ack);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// A new-data ACK at `now` with a one-way delay and an RTT sample.
    fn ack(now: SimTime, owd: SimTime, rtt: Option<SimTime>, snd_una: u64) -> Ack {
        Ack {
            now,
            bytes_acked: MSS,
            bytes_delivered: MSS,
            rtt,
            one_way_delay: Some(owd),
            cwnd_limited: true,
            snd_una,
            snd_nxt: snd_una + 10 * MSS,
            ..Ack::default()
        }
    }

    fn paper(p: TcpLpParams) -> Paper {
        Paper::new(&p)
    }

    #[test]
    fn owd_smoothing_is_the_ewma_with_gain_one_eighth() {
        let mut c = paper(TcpLpParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        // 40 ms, then 48 ms: sd = 40 + (48 - 40)/8 = 41 ms; then 32 ms: 41 + (32 - 41)/8 = 39.875 ms.
        let mut expect = 40e6;
        for (k, d) in [40u64, 48, 32].into_iter().enumerate() {
            c.on_ack(&mut w, &ack(ms(100 + k as u64), ms(d), None, (k as u64 + 1) * MSS));
            if k > 0 {
                expect = 0.875 * expect + 0.125 * d as f64 * 1e6;
            }
            assert!((c.smoothed_owd() - expect).abs() < 1e-6, "sample {k}: {} vs {expect}", c.smoothed_owd());
        }
        assert_eq!(c.smoothed_owd(), 39.875e6);
        assert_eq!(c.owd_range(), (32e6, 48e6));
        // Another gain: γ = 1/2 gives 40 → 44 → 38 ms.
        let mut c = paper(TcpLpParams { gain: 0.5, ..Default::default() });
        for (k, d) in [40u64, 48, 32].into_iter().enumerate() {
            c.on_ack(&mut w, &ack(ms(100 + k as u64), ms(d), None, (k as u64 + 1) * MSS));
        }
        assert_eq!(c.smoothed_owd(), 38e6);
    }

    /// NewReno's congestion-avoidance step (RFC 5681 eq. 3, at least one byte).
    fn ca(cwnd: u64) -> u64 {
        cwnd + (MSS * MSS / cwnd).max(1)
    }

    #[test]
    fn threshold_is_min_plus_delta_of_the_range() {
        let mut c = paper(TcpLpParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        assert_eq!(c.threshold(), f64::INFINITY); // no sample, no indication
        c.on_ack(&mut w, &ack(ms(100), ms(30), None, MSS));
        assert_eq!(c.threshold(), 30e6); // d_min = d_max = 30 ms
        assert_eq!(w.cwnd, ca(100 * MSS)); // sd = threshold is not above it
        // A 130 ms sample: d_max = 130 ms, threshold = 30 + 0.15 · 100 = 45 ms.
        c.on_ack(&mut w, &ack(ms(101), ms(130), None, 2 * MSS));
        assert_eq!(c.owd_range(), (30e6, 130e6));
        assert!((c.threshold() - 45e6).abs() < 1e-3);
        // sd = 30 + 100/8 = 42.5 ms < 45 ms: no indication, the window grew.
        assert_eq!(c.smoothed_owd(), 42.5e6);
        assert_eq!(w.cwnd, ca(ca(100 * MSS)));
        // A 20 ms sample lowers d_min: threshold = 20 + 0.15 · 110 = 36.5 ms;
        // sd = 42.5 + (20 − 42.5)/8 = 39.6875 ms > 36.5 ms: an indication.
        c.on_ack(&mut w, &ack(ms(102), ms(20), None, 3 * MSS));
        assert!((c.threshold() - 36.5e6).abs() < 1e-3);
        assert_eq!(c.smoothed_owd(), 39.6875e6);
        assert_eq!(w.cwnd, ca(ca(100 * MSS)) / 2);
        // δ = 0.5 puts the threshold at 20 + 55 = 75 ms: no indication there.
        let mut c = paper(TcpLpParams { delta: 0.5, ..Default::default() });
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        for (k, d) in [30u64, 130, 20].into_iter().enumerate() {
            c.on_ack(&mut w, &ack(ms(100 + k as u64), ms(d), None, (k as u64 + 1) * MSS));
        }
        assert!((c.threshold() - 75e6).abs() < 1e-3);
        assert_eq!(w.cwnd, ca(ca(ca(100 * MSS)))); // three increases, no reduction
        // δ = 0: any smoothed delay above the minimum is an indication.
        let mut c = paper(TcpLpParams { delta: 0.0, ..Default::default() });
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        c.on_ack(&mut w, &ack(ms(100), ms(30), None, MSS));
        c.on_ack(&mut w, &ack(ms(101), ms(31), None, 2 * MSS));
        assert_eq!(w.cwnd, ca(100 * MSS) / 2);
    }

    /// A controller that has seen d_min = 20 ms and d_max = 120 ms (threshold
    /// 35 ms) and one RTT sample of 100 ms, its smoothed delay back near 20 ms,
    /// the window 40 segments in congestion avoidance; snd_una at 100 segments.
    fn primed() -> (Paper, Window) {
        let mut c = paper(TcpLpParams::default());
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 20 * MSS, mss: MSS };
        c.on_ack(&mut w, &ack(ms(0), ms(20), Some(ms(100)), MSS));
        c.on_ack(&mut w, &ack(ms(1), ms(120), None, 2 * MSS));
        for k in 0..60 {
            c.on_ack(&mut w, &ack(ms(2 + k), ms(20), None, (3 + k) * MSS));
        }
        // sd = 20 + 12.5 · (7/8)^60 ms.
        assert!((c.smoothed_owd() - (20e6 + 12.5e6 * 0.875f64.powi(60))).abs() < 1e-3);
        assert!((c.threshold() - 35e6).abs() < 1e-3);
        assert_eq!(c.srtt(), 100e6);
        assert_eq!(c.inference_end(), None);
        w.cwnd = 40 * MSS;
        (c, w)
    }

    /// Four ACKs with 60 ms delays from `t0`, snd_una from 101 segments on: the
    /// smoothed delay 60 − (60 − sd)·(7/8)^k ms passes 35 ms at the fourth
    /// (k = 3: 33.2 ms, k = 4: 36.55 ms), an indication. Returns the window before
    /// that ACK.
    fn four_late_acks(c: &mut Paper, w: &mut Window, t0: SimTime) -> u64 {
        let s0 = c.smoothed_owd();
        let mut before = 0;
        for k in 1..=4u64 {
            before = w.cwnd;
            c.on_ack(w, &ack(t0 + ms(k), ms(60), None, 100 * MSS + k * MSS));
            let sd = 60e6 - (60e6 - s0) * 0.875f64.powi(k as i32);
            assert!((c.smoothed_owd() - sd).abs() < 1e-3);
            assert_eq!(sd > 35e6, k == 4);
        }
        before
    }

    #[test]
    fn first_indication_halves_and_arms_the_inference_timeout() {
        let (mut c, mut w) = primed();
        let before = four_late_acks(&mut c, &mut w, ms(200));
        assert_eq!(before, ca(ca(ca(40 * MSS)))); // three ACKs below the threshold grew it
        assert_eq!(w.cwnd, before / 2);
        assert_eq!(w.ssthresh, w.cwnd); // the AI phase follows
        // The time-out: 3 smoothed RTTs (3 × 100 ms) from the indication.
        assert_eq!(c.inference_end(), Some(ms(204) + ms(300)));
        // inference_rtts = 1.5: 150 ms.
        let mut c = paper(TcpLpParams { inference_rtts: 1.5, ..Default::default() });
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 20 * MSS, mss: MSS };
        c.on_ack(&mut w, &ack(ms(0), ms(20), Some(ms(100)), MSS));
        c.on_ack(&mut w, &ack(ms(1), ms(120), Some(ms(140)), 2 * MSS)); // srtt = 105 ms
        assert_eq!(c.srtt(), 105e6);
        c.on_ack(&mut w, &ack(ms(2), ms(120), None, 3 * MSS)); // sd = 20 + 100·(1 − (7/8)²) = 43.4 ms
        assert_eq!(c.inference_end(), Some(ms(2) + SimTime(157_500_000)));
    }

    #[test]
    fn second_indication_within_the_timeout_floors_the_window() {
        let (mut c, mut w) = primed();
        four_late_acks(&mut c, &mut w, ms(200));
        let halved = w.cwnd;
        let first = c.inference_end().unwrap();
        // ACKs of data sent before the reduction (snd_una up to that ACK's snd_nxt,
        // 104 + 10 segments) do not count again, and the window holds.
        for k in 5..=14u64 {
            c.on_ack(&mut w, &ack(ms(200 + k), ms(60), None, 100 * MSS + k * MSS));
            assert!(c.smoothed_owd() > c.threshold());
        }
        assert_eq!(w.cwnd, halved);
        assert_eq!(c.inference_end(), Some(first));
        // The next ACK acknowledges data sent after the reduction: still above
        // the threshold, within the time-out → one segment; the time-out restarts.
        let a = ack(ms(215), ms(60), None, 115 * MSS);
        assert!(a.now < first);
        c.on_ack(&mut w, &a);
        assert_eq!(c.smoothed_owd(), 60e6); // restarted from this fresh sample
        assert_eq!((w.cwnd, w.ssthresh), (MSS, MSS));
        assert_eq!(c.inference_end(), Some(ms(215) + ms(300)));
    }

    #[test]
    fn the_second_indication_is_judged_on_delays_after_the_reduction() {
        let (mut c, mut w) = primed();
        four_late_acks(&mut c, &mut w, ms(200));
        let halved = w.cwnd;
        for k in 5..=14u64 {
            c.on_ack(&mut w, &ack(ms(200 + k), ms(60), None, 100 * MSS + k * MSS));
        }
        // The smoothed delay is still made of the old, long delays...
        assert!(c.smoothed_owd() > 50e6);
        // ... but the first ACK of data sent after the reduction reports an empty
        // queue (20 ms): the smoothed delay restarts there, no indication.
        c.on_ack(&mut w, &ack(ms(215), ms(20), None, 115 * MSS));
        assert_eq!(c.smoothed_owd(), 20e6);
        assert_eq!(w.cwnd, halved);
        // Later samples are smoothed again: 20 + (60 − 20)/8 = 25 ms.
        c.on_ack(&mut w, &ack(ms(216), ms(60), None, 116 * MSS));
        assert_eq!(c.smoothed_owd(), 25e6);
        assert_eq!(w.cwnd, halved);
    }

    #[test]
    fn growth_resumes_when_the_timeout_passes_without_indication() {
        let (mut c, mut w) = primed();
        four_late_acks(&mut c, &mut w, ms(200));
        let halved = w.cwnd;
        let end = c.inference_end().unwrap();
        // Delays fall back below the threshold: no indication, and no growth
        // until the time-out ends.
        let mut una = 104 * MSS;
        let mut t = ms(205);
        while t < end {
            una += MSS;
            c.on_ack(&mut w, &ack(t, ms(20), None, una));
            t = t + ms(5);
        }
        assert!(c.smoothed_owd() < c.threshold());
        assert_eq!(w.cwnd, halved);
        // At the end of the time-out: additive increase, SMSS²/cwnd per ACK.
        una += MSS;
        c.on_ack(&mut w, &ack(end, ms(20), None, una));
        assert_eq!(w.cwnd, ca(halved));
        // A fresh indication after the time-out halves again (not to one segment).
        let grown = ca(ca(ca(ca(halved))));
        for k in 1..=4 {
            una += MSS;
            c.on_ack(&mut w, &ack(end + ms(k), ms(60), None, una));
        }
        assert_eq!(w.cwnd, grown / 2);
    }

    #[test]
    fn slow_start_is_held_too_and_recovery_is_only_observed() {
        let (mut c, mut w) = primed();
        w.ssthresh = u64::MAX;
        four_late_acks(&mut c, &mut w, ms(200));
        // Three slow-start increases (+1 SMSS each), then halved; ssthresh follows.
        assert_eq!((w.cwnd, w.ssthresh), (43 * MSS / 2, 43 * MSS / 2));
        w.ssthresh = u64::MAX;
        c.on_ack(&mut w, &ack(ms(205), ms(20), None, 105 * MSS));
        assert_eq!(w.cwnd, 43 * MSS / 2); // no slow start within the time-out
        // In recovery the window is the machinery's: samples count, nothing else.
        let mut r = ack(ms(1000), ms(60), None, 300 * MSS);
        r.in_recovery = true;
        w.cwnd = 7 * MSS;
        let before = c.smoothed_owd();
        c.on_ack(&mut w, &r);
        assert_eq!(w.cwnd, 7 * MSS);
        assert!(c.smoothed_owd() > before);
        // Loss and timeout responses are NewReno's.
        let w = Window { cwnd: 10 * MSS, ssthresh: 8 * MSS, mss: MSS };
        let mut lp = TcpLp::new(&TcpLpParams::default());
        assert_eq!(lp.on_congestion(&w, Congestion::Loss, 9 * MSS), 4500);
        assert_eq!(lp.on_congestion(&w, Congestion::Timeout { repeated: false }, 3 * MSS), 2 * MSS);
        assert_eq!(lp.on_congestion(&w, Congestion::Timeout { repeated: true }, 9 * MSS), 8 * MSS);
    }

    #[test]
    fn below_the_threshold_it_is_newreno() {
        let mut lp = TcpLp::new(&TcpLpParams::default());
        let mut nr = crate::transport::cc::NewReno::default();
        let mut a = Window { cwnd: 4 * MSS, ssthresh: 8 * MSS, mss: MSS };
        let mut b = a;
        for k in 0..50u64 {
            let x = ack(ms(k), ms(30), Some(ms(60)), (k + 1) * MSS);
            lp.on_ack(&mut a, &x);
            nr.on_ack(&mut b, &x);
            assert_eq!(a, b);
        }
        assert!(a.cwnd > 8 * MSS);
    }

    /// ns-3's own unit tests (src/internet/test/tcp-lp-test.cc) as vectors: the
    /// timestamp pairs (TSval, TSecr) 2/1, 14/4, 25/15 ms give one-way delays 1,
    /// 10 and 10 ms.
    #[test]
    fn ns3_variant_reproduces_ns3s_test_vectors() {
        let p = TcpLpParams { variant: Variant::Ns3, ..Default::default() };
        let mut c = Reference::new(&p);
        let seg = 1446;
        let mut w = Window { cwnd: 2 * seg, ssthresh: u64::MAX, mss: seg };
        let dup = |owd: u64| {
            let mut a = ack(SimTime::ZERO, ms(owd), None, 0);
            a.bytes_acked = 0;
            a.bytes_delivered = 0;
            a
        };
        c.on_ack(&mut w, &dup(1));
        assert_eq!(c.state(), (8, 1, 1, 1));
        assert_eq!(w.cwnd, 2 * seg);
        // 10 ms: d_max becomes the previous reserve (1), the reserve 10;
        // sowd = 8 + 10 − 1 = 17, 17 >> 3 = 2 > 1 + 15·0/100: an indication,
        // the window halves, d_min = 2, d_max = reserve = 17 >> 2 = 4.
        c.on_ack(&mut w, &dup(10));
        assert_eq!(c.state(), (17, 2, 4, 4));
        assert_eq!(w.cwnd, seg); // TcpLpInferenceTest1: cWnd / 2
        // 10 ms again: sowd = 17 + 10 − 2 = 25, 3 > 2 + 15·2/100 = 2: an
        // indication; the window is one segment (TcpLpInferenceTest2).
        c.on_ack(&mut w, &dup(10));
        assert_eq!(c.state(), (25, 3, 6, 6));
        assert_eq!(w.cwnd, seg);
    }

    #[test]
    fn ns3_variant_inference_and_growth_rules() {
        let p = TcpLpParams { variant: Variant::Ns3, ..Default::default() };
        let mut c = Reference::new(&p);
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // Sent at 1000.4 ms, acknowledged at 1100.9 ms with a 30.7 ms one-way
        // delay: TSval − TSecr = 1031 − 1000 = 31 ms; inference = 3·(1100.9 − 1000) ms.
        let now = SimTime(1_100_900_000);
        let rtt = SimTime(100_500_000);
        c.on_ack(&mut w, &ack(now, SimTime(30_700_000), Some(rtt), MSS));
        assert_eq!(c.state(), (31 * 8, 31, 31, 31));
        assert_eq!(c.inference(), SimTime(302_700_000));
        assert_eq!(w.cwnd, 40 * MSS + MSS * MSS / (40 * MSS));
        // A jump to 80 ms: sowd = 248 + 80 − 31 = 297 (37 ms) > 31 + 15·(31 − 31)/100:
        // halved, thresholds reset to d_min = 37, d_max = 74.
        w.cwnd = 40 * MSS;
        let t1 = now + ms(1);
        c.on_ack(&mut w, &ack(t1, ms(80), None, 2 * MSS));
        assert_eq!(c.state(), (297, 37, 74, 74));
        assert_eq!(w.cwnd, 20 * MSS + MSS * MSS / (20 * MSS)); // the same ACK still grows: ns-3 decides "within" first
        // Within the inference time-out: avoidance holds the window...
        w.cwnd = 20 * MSS;
        c.on_ack(&mut w, &ack(t1 + ms(1), ms(37), None, 3 * MSS));
        assert_eq!(w.cwnd, 20 * MSS);
        // ... slow start does not (ns-3 overrides CongestionAvoidance only).
        w.ssthresh = u64::MAX;
        c.on_ack(&mut w, &ack(t1 + ms(2), ms(37), None, 4 * MSS));
        assert_eq!(w.cwnd, 21 * MSS);
        // sowd is now ≈ 8·37 and the threshold 37 + 15·37/100 = 42 ms: a 200 ms
        // sample lifts sowd/8 to 57 ms within the time-out → one segment.
        c.on_ack(&mut w, &ack(t1 + ms(3), ms(200), None, 5 * MSS));
        assert_eq!(w.cwnd, MSS + MSS); // floored, then slow start on the same ACK
        // After the time-out (302.7 ms from the last reduction) growth is NewReno's.
        w.ssthresh = 2 * MSS;
        let late = t1 + ms(3) + SimTime(302_700_000);
        let sowd = c.state().0;
        c.on_ack(&mut w, &ack(late, SimTime(sowd as u64 / 8 * MS), None, 6 * MSS));
        assert_eq!(w.cwnd, 2 * MSS + MSS / 2);
    }

    #[test]
    fn linux_variant_rules() {
        let p = TcpLpParams { variant: Variant::Linux, ..Default::default() };
        let mut c = Reference::new(&p);
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // The first sample (31 ms, as in the ns-3 test) makes sowd/8 = d_min =
        // d_max = threshold, and Linux's "within threshold" is strict: an
        // indication at once. Halved in whole segments; thresholds reset to
        // d_min = 31, d_max = 62; inference = 3·(1100 − 1000) ms in whole ms.
        let t0 = SimTime(1_100_900_000);
        c.on_ack(&mut w, &ack(t0, SimTime(30_700_000), Some(SimTime(100_500_000)), MSS));
        assert_eq!(c.state(), (248, 31, 62, 62));
        assert_eq!(c.inference(), ms(300));
        assert_eq!(w.cwnd, 20 * MSS + MSS / 20); // halved, then avoidance: the time-out is judged first
        // Duplicate ACKs do not reach Linux's controller at all.
        let mut dup = ack(t0 + ms(1), ms(80), None, MSS);
        dup.bytes_acked = 0;
        c.on_ack(&mut w, &dup);
        assert_eq!(c.state(), (248, 31, 62, 62));
        // No valid timestamp (a retransmission): no sample; within the time-out
        // nothing grows, slow start included.
        w.cwnd = 20 * MSS;
        w.ssthresh = u64::MAX;
        c.on_ack(&mut w, &ack(t0 + ms(1), ms(80), None, 2 * MSS));
        assert_eq!(c.state(), (248, 31, 62, 62));
        assert_eq!(w.cwnd, 20 * MSS);
        // A 200 ms sample (sent at 1052.4 ms): sowd = 248 + 200 − 31 = 417,
        // 52 ≥ 31 + 15·31/100 = 35 within the time-out → one segment; the
        // time-out becomes 3·(1102 − 1052) = 150 ms.
        let t1 = t0 + ms(2);
        c.on_ack(&mut w, &ack(t1, ms(200), Some(SimTime(50_500_000)), 3 * MSS));
        assert_eq!(c.state(), (417, 52, 104, 104));
        assert_eq!(c.inference(), ms(150));
        assert_eq!(w.cwnd, MSS);
        // 150 ms later (in whole ms) the time-out is over: slow start again.
        c.on_ack(&mut w, &ack(t1 + ms(150), ms(52), None, 4 * MSS));
        assert_eq!(w.cwnd, 2 * MSS);
    }

    /// Read as a scenario's `cc` table is: the reader, then the one check.
    fn read(v: serde_json::Value) -> std::result::Result<TcpLpParams, String> {
        match crate::transport::cc::Registry::new().read("tcp_lp", Table::new(&v, "traffic[0].cc").unwrap()) {
            Ok(crate::transport::cc::CcConfig::TcpLp(p)) => Ok(p),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn parameters_are_typed_validated_and_named() {
        assert_eq!(read(json!({})).unwrap(), TcpLpParams::default());
        let p = read(json!({"delta": 0.2, "gain": 0.25, "inference_rtts": 2, "variant": "paper"})).unwrap();
        assert_eq!(p, TcpLpParams { variant: Variant::Paper, delta: 0.2, gain: 0.25, inference_rtts: 2.0 });
        assert_eq!(read(json!({"variant": "ns3"})).unwrap().variant, Variant::Ns3);
        assert_eq!(read(json!({"delta": 2})).unwrap_err(), "traffic[0].cc.delta: expected a number from 0 to 1, got 2");
        assert_eq!(read(json!({"delta": "big"})).unwrap_err(), "traffic[0].cc.delta: expected a number, got \"big\"");
        assert_eq!(read(json!({"gain": 0})).unwrap_err(), "traffic[0].cc.gain: expected a number above 0 and at most 1, got 0");
        assert_eq!(read(json!({"inference_rtts": -1})).unwrap_err(), "traffic[0].cc.inference_rtts: expected a number from 0 to 1000, got -1");
        assert_eq!(read(json!({"variant": "linux"})).unwrap().variant, Variant::Linux);
        assert_eq!(read(json!({"variant": "ns2"})).unwrap().variant, Variant::Ns2);
        assert_eq!(read(json!({"variant": "ns-2"})).unwrap_err(), "traffic[0].cc.variant: expected \"paper\", \"ns3\", \"linux\" or \"ns2\", got \"ns-2\"");
        assert_eq!(
            read(json!({"variant": "ns2", "inference_rtts": 2.5})).unwrap_err(),
            "traffic[0].cc.inference_rtts: the ns2 variant takes a whole number of round trips (its time-out is 3 * rtt in ms), got 2.5"
        );
        assert_eq!(
            read(json!({"variant": "ns3", "gain": 0.25})).unwrap_err(),
            "traffic[0].cc.gain: the ns3 variant smooths with a fixed gain of 1/8 (0.125), got 0.25"
        );
        assert_eq!(
            read(json!({"variant": "linux", "delta": 0.155})).unwrap_err(),
            "traffic[0].cc.delta: the linux variant takes delta in whole hundredths (its threshold is 15/100), got 0.155"
        );
        assert_eq!(
            read(json!({"detla": 0.1})).unwrap_err(),
            "traffic[0].cc.detla: unknown key (did you mean `delta`?); the tcp_lp controller takes: variant, delta, gain, inference_rtts"
        );
        // The canonical form passes the same check when read back (tests/params.rs).
        let v = serde_json::to_value(TcpLpParams::default()).unwrap();
        assert_eq!(v, json!({"variant": "paper", "delta": 0.15, "gain": 0.125, "inference_rtts": 3.0}));
        assert_eq!(serde_json::from_value::<TcpLpParams>(v).unwrap(), TcpLpParams::default());
        let bad = serde_json::from_value::<TcpLpParams>(json!({"variant": "paper", "delta": 1.5, "gain": 0.125, "inference_rtts": 3.0})).unwrap();
        assert_eq!(TcpLp::check(&bad).unwrap_err(), ("delta", "expected a number from 0 to 1, got 1.5".into()));
    }
}
