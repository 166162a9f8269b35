//! TCP Vegas (L. S. Brakmo and L. L. Peterson, "TCP Vegas: end to end congestion
//! avoidance on a global Internet", IEEE JSAC 13(8), 1995: §III-B "Congestion
//! avoidance mechanism", §III-C "Modified slow-start mechanism"), as ns-3
//! implements it (`src/internet/model/tcp-vegas.cc`, the cross-check reference;
//! Linux's `net/ipv4/tcp_vegas.c` is the same design).
//!
//! Once per round trip Vegas compares the window it has with the window the path
//! would carry at the base RTT and keeps the difference, the flow's own packets
//! queued in the network, between `alpha` and `beta` packets:
//!
//! ```text
//! diff = cwnd · (RTT − BaseRTT) / RTT        (packets; paper §III-B: (Expected − Actual) · BaseRTT)
//! diff < alpha: cwnd += 1 packet;  diff > beta: cwnd −= 1 packet;  otherwise hold
//! ```
//!
//! with BaseRTT the smallest RTT sample seen and RTT the smallest sample of the
//! round just ended (ns-3 and Linux take the minimum to filter delayed ACKs). In
//! slow start, a round with `diff > gamma` ends slow start with the window the
//! measured rate fills at BaseRTT (paper §III-C, ns-3's rule for cwnd and ssthresh).
//! Losses are handled as NewReno's (RFC 5681 eq. 4); while the sender recovers,
//! or after a timeout until the data outstanding at the timeout is acknowledged,
//! Vegas is off and the window follows NewReno, as ns-3 switches Vegas off outside
//! its `CA_OPEN` state. Every difference from ns-3 is listed in docs/protocols.md.
mod ns2;

use super::newreno::reno_ssthresh;
use super::{Ack, Congestion, CongestionControl, FastRecovery, RenoGrowth, Window, WindowProtocol};
use ns2::Ns2Vegas;
use crate::engine::SimTime;
use crate::settings::{err, Result, Table};
use crate::transport::state::StateVars;
use serde::{Deserialize, Serialize};

/// Which rule set runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// ns-3 3.44's TcpVegas (and Linux's design): the default.
    #[default]
    Ns3,
    /// ns-2.35's Agent/TCP/Vegas (`vegas/ns2.rs`).
    Ns2,
}

impl Variant {
    fn is_ns3(&self) -> bool {
        *self == Variant::Ns3
    }
}

/// Vegas' thresholds, in packets (segments). Defaults are ns-3's (and Linux's):
/// `alpha = 2`, `beta = 4`, `gamma = 1`; ns-2's with `variant = "ns2"`: 1, 3, 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VegasParams {
    /// `"ns3"` (the default; not written in the canonical form, which then reads
    /// as configurations written before the key existed) or `"ns2"`.
    #[serde(default, skip_serializing_if = "Variant::is_ns3")]
    pub variant: Variant,
    /// Below this many packets queued (diff), grow the window by one packet per RTT.
    pub alpha: f64,
    /// Above this many, shrink it by one packet per RTT.
    pub beta: f64,
    /// Above this many in slow start, leave slow start.
    pub gamma: f64,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams { variant: Variant::Ns3, alpha: 2.0, beta: 4.0, gamma: 1.0 }
    }
}

impl VegasParams {
    /// ns-2.35's defaults (`v_alpha_ 1`, `v_beta_ 3`, `v_gamma_ 1`, ns-default.tcl:1086-1088).
    pub fn ns2() -> Self {
        VegasParams { variant: Variant::Ns2, alpha: 1.0, beta: 3.0, gamma: 1.0 }
    }
}

/// Where the sender is, as far as Vegas cares (ns-3's `TcpCongState_t`, inferred
/// from the seam: a duplicate ACK, a congestion signal, the ACK that passes the
/// recovery point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// `CA_OPEN`: Vegas runs.
    Open,
    /// `CA_DISORDER`: a duplicate ACK came; the next ACK of new data reopens (and restarts the round).
    Disorder,
    /// `CA_RECOVERY` after a fast retransmit, or `CA_CWR` after an ECN reduction:
    /// the machinery sets the window until `snd_una` reaches `recover`.
    Recovery,
    /// `CA_LOSS` after a timeout: NewReno's slow start and congestion avoidance
    /// until `snd_una` reaches `recover`.
    Loss,
}

/// TCP Vegas (`protocol = "vegas"`): ns-3's rules or ns-2's.
#[derive(Clone, Debug)]
pub enum Vegas {
    Ns3(Ns3Vegas),
    Ns2(Ns2Vegas),
}

/// TCP Vegas with ns-3's rules (`variant = "ns3"`, the default).
#[derive(Clone, Debug)]
pub struct Ns3Vegas {
    alpha: f64,
    beta: f64,
    gamma: f64,
    /// Smallest RTT sample ever (ns; u64::MAX before the first).
    base_rtt: u64,
    /// Smallest RTT sample of the current round (ns; u64::MAX: none yet).
    min_rtt: u64,
    /// RTT samples in the current round.
    cnt_rtt: u32,
    /// The round ends when `snd_una` reaches this (`snd_nxt` when it began).
    beg_snd_nxt: u64,
    phase: Phase,
    /// The highest byte sent when the last congestion signal came (RFC 6582's
    /// `recover`, as the machinery records it).
    recover: u64,
    /// The highest byte sent so far (counted in `on_sent`; sequence space starts at 0).
    snd_max: u64,
    /// NewReno's window growth (ns-3's `TcpNewReno::IncreaseWindow`), which Vegas
    /// runs when it is off or lacks samples.
    growth: RenoGrowth,
}

impl WindowProtocol for Vegas {
    const NAME: &'static str = "vegas";
    type Params = VegasParams;

    /// `cc = { variant = "ns3", alpha = 2, beta = 4, gamma = 1 }` (packets; each
    /// optional; `variant = "ns2"` has the defaults 1, 3, 1).
    fn read(mut t: Table) -> Result<VegasParams> {
        let d = match t.get::<String>("variant")?.as_deref() {
            None | Some("ns3") => VegasParams::default(),
            Some("ns2") => VegasParams::ns2(),
            Some(other) => return err(t.key_path("variant"), format!("expected \"ns3\" or \"ns2\", got {other:?}")),
        };
        let p = VegasParams { variant: d.variant, alpha: t.or("alpha", d.alpha)?, beta: t.or("beta", d.beta)?, gamma: t.or("gamma", d.gamma)? };
        t.finish("the vegas controller")?;
        Ok(p)
    }

    fn check(p: &VegasParams) -> std::result::Result<(), (&'static str, String)> {
        // alpha > 0: with alpha = 0 the window could never grow in congestion avoidance (diff ≥ 0).
        if !(p.alpha.is_finite() && p.alpha > 0.0) {
            return Err(("alpha", format!("expected a positive number of packets, got {}", p.alpha)));
        }
        // The paper requires alpha < beta (§III-B); alpha = beta is accepted (a single target, as in
        // Low, Peterson and Wang's analysis), beta < alpha would grow and shrink at once.
        if !(p.beta.is_finite() && p.beta >= p.alpha) {
            return Err(("beta", format!("expected a number of packets at least alpha ({}), got {}", p.alpha, p.beta)));
        }
        if !(p.gamma.is_finite() && p.gamma >= 0.0) {
            return Err(("gamma", format!("expected a non-negative number of packets, got {}", p.gamma)));
        }
        if p.variant == Variant::Ns2 {
            // ns-2's thresholds are C ints compared with a whole delta.
            for (key, v) in [("alpha", p.alpha), ("beta", p.beta), ("gamma", p.gamma)] {
                if v.fract() != 0.0 {
                    return Err((key, format!("the ns2 variant takes whole packets (ns-2's v_{key}_ is an int), got {v}")));
                }
            }
        }
        Ok(())
    }

    fn new(p: &VegasParams) -> Self {
        match p.variant {
            Variant::Ns3 => Vegas::Ns3(Ns3Vegas::new(p)),
            Variant::Ns2 => Vegas::Ns2(Ns2Vegas::new(p.alpha as i64, p.beta as i64, p.gamma as i64)),
        }
    }
}

impl CongestionControl for Vegas {
    #[inline]
    fn on_start(&mut self, w: &mut Window, now: SimTime) {
        if let Vegas::Ns2(v) = self {
            v.on_start(now);
        }
        let _ = w;
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        match self {
            Vegas::Ns3(v) => v.on_ack(w, ack),
            Vegas::Ns2(v) => v.on_ack(w, ack),
        }
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        match self {
            Vegas::Ns3(v) => v.on_congestion(w, event, flight),
            Vegas::Ns2(v) => v.on_congestion(w, event),
        }
    }

    #[inline]
    fn on_sent(&mut self, now: SimTime, bytes: u64, retransmission: bool) {
        if let Vegas::Ns3(v) = self {
            v.on_sent(now, bytes, retransmission);
        }
    }

    fn observe(&self, w: &Window, now: SimTime, vars: &mut StateVars) {
        match self {
            Vegas::Ns3(v) => v.observe(w, now, vars),
            Vegas::Ns2(v) => v.observe(vars),
        }
    }

    /// ns-2's Vegas leaves recovery at the first ACK of new data (its own
    /// Reno-style inflation and deflation, tcp-vegas.cc:159-164, 399-405).
    #[inline]
    fn fast_recovery(&self) -> FastRecovery {
        match self {
            Vegas::Ns3(_) => FastRecovery::NewReno,
            Vegas::Ns2(_) => FastRecovery::Reno,
        }
    }
}

impl Ns3Vegas {
    /// A controller for one connection.
    pub fn new(p: &VegasParams) -> Self {
        Ns3Vegas {
            alpha: p.alpha,
            beta: p.beta,
            gamma: p.gamma,
            base_rtt: u64::MAX,
            min_rtt: u64::MAX,
            cnt_rtt: 0,
            // ns-3 starts at sequence 0 too: the first ACK ends an empty round.
            beg_snd_nxt: 0,
            phase: Phase::Open,
            recover: 0,
            snd_max: 0,
            growth: RenoGrowth::default(),
        }
    }
}

/// RFC 5681 eq. 2 (slow start): cwnd += min(N, SMSS).
#[inline]
fn slow_start(w: &mut Window, acked: u64) {
    w.cwnd += acked.min(w.mss);
}

/// ns-3's `TcpVegas::GetSsThresh`: max(min(ssthresh, cwnd − 1 SMSS), 2 SMSS).
/// Used where ns-3 uses it inside Vegas (leaving slow start, shrinking the window).
#[inline]
fn vegas_ssthresh(w: &Window) -> u64 {
    w.ssthresh.min(w.cwnd.saturating_sub(w.mss)).max(2 * w.mss)
}

impl Ns3Vegas {
    /// Vegas' diff for a window of `segments` packets: the packets the flow keeps
    /// queued, cwnd · (RTT − BaseRTT) / RTT (paper §III-B: (Expected − Actual) ·
    /// BaseRTT, Expected = cwnd/BaseRTT, Actual = cwnd/RTT), with RTT the smallest
    /// sample of the round (ns-3, Linux). Exact, where ns-3 truncates (see docs).
    #[inline]
    fn diff(&self, segments: u64) -> f64 {
        segments as f64 * (self.min_rtt - self.base_rtt) as f64 / self.min_rtt as f64
    }

    /// `CongestionStateSet(CA_OPEN)` → ns-3's `EnableVegas`: a fresh round from
    /// the next byte to send, no samples yet.
    #[inline]
    fn enable(&mut self, snd_nxt: u64) {
        self.phase = Phase::Open;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = u64::MAX;
    }

    /// ns-3's `TcpVegas::IncreaseWindow` with Vegas on: an ACK of new data.
    #[inline]
    fn increase(&mut self, w: &mut Window, ack: &Ack) {
        if ack.snd_una < self.beg_snd_nxt {
            // Within a round only slow start moves the window (ns-3, Linux).
            if w.cwnd < w.ssthresh {
                slow_start(w, ack.bytes_acked);
            }
            return;
        }
        // The round is over: the next one ends when what is sent from now on is acknowledged.
        self.beg_snd_nxt = ack.snd_nxt;
        if self.cnt_rtt <= 2 {
            // Too few samples to trust one that is not from a delayed ACK (ns-3, Linux): NewReno.
            self.growth.on_ack(w, ack);
        } else {
            self.adjust(w);
        }
        self.cnt_rtt = 0;
        self.min_rtt = u64::MAX;
    }

    /// The once-per-RTT decision (paper §III-B and §III-C; ns-3's branch with enough samples).
    fn adjust(&mut self, w: &mut Window) {
        let mss = w.mss;
        let segments = w.cwnd / mss;
        let diff = self.diff(segments);
        if w.cwnd < w.ssthresh {
            if diff > self.gamma {
                // Leave slow start (paper §III-C) with the window the measured rate fills at
                // BaseRTT, plus one for the truncation: cwnd = min(cwnd, ⌊cwnd·BaseRTT/RTT⌋ + 1)
                // segments, ssthresh from ns-3's GetSsThresh (Linux: min(ssthresh, cwnd)).
                let target = (segments as u128 * self.base_rtt as u128 / self.min_rtt as u128) as u64;
                w.cwnd = segments.min(target + 1) * mss;
                w.ssthresh = vegas_ssthresh(w);
            } else {
                // The round's own slow-start step (ns-3 calls NewReno's SlowStart here).
                slow_start(w, mss);
            }
        } else if diff > self.beta {
            // Too much queued: one packet less per RTT (paper §III-B), ssthresh at most cwnd − 1
            // (ns-3). Never below one segment (ns-3 has no floor; Linux keeps 2).
            w.cwnd = segments.saturating_sub(1).max(1) * mss;
            w.ssthresh = vegas_ssthresh(w);
        } else if diff < self.alpha {
            // Too little queued: one packet more per RTT (paper §III-B).
            w.cwnd = (segments + 1) * mss;
        }
        // ns-3 (and Linux's tcp_current_ssthresh): ssthresh = max(ssthresh, 3/4 cwnd), so a
        // later timeout slow-starts back to three quarters of the window Vegas settled on.
        w.ssthresh = w.ssthresh.max(3 * w.cwnd / 4);
    }
}

impl CongestionControl for Ns3Vegas {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        // ns-3's PktsAcked, Linux's tcp_vegas_pkts_acked: every RTT sample feeds both minima
        // (a zero sample is ignored, as ns-3 does).
        if let Some(SimTime(rtt)) = ack.rtt {
            if rtt > 0 {
                self.base_rtt = self.base_rtt.min(rtt);
                self.min_rtt = self.min_rtt.min(rtt);
                self.cnt_rtt = self.cnt_rtt.saturating_add(1);
            }
        }
        if ack.bytes_acked == 0 {
            // A duplicate ACK: CA_OPEN -> CA_DISORDER switches Vegas off (ns-3's DisableVegas).
            if self.phase == Phase::Open {
                self.phase = Phase::Disorder;
            }
            return;
        }
        match self.phase {
            Phase::Open => {}
            // Back to CA_OPEN: Vegas restarts its round (ns-3's EnableVegas; Linux's vegas_enable).
            Phase::Disorder => self.enable(ack.snd_nxt),
            Phase::Recovery if ack.snd_una >= self.recover => self.enable(ack.snd_nxt),
            Phase::Loss if ack.snd_una >= self.recover => self.enable(ack.snd_nxt),
            // The machinery's recovery rules own the window.
            Phase::Recovery => return,
            // CA_LOSS: Vegas off, NewReno grows the window (ns-3).
            Phase::Loss => {
                self.growth.on_ack(w, ack);
                return;
            }
        }
        self.increase(w, ack);
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        // Vegas is off until the data outstanding now is acknowledged.
        self.recover = self.snd_max;
        self.phase = match event {
            Congestion::Timeout { .. } => Phase::Loss,
            Congestion::Loss | Congestion::Ecn => Phase::Recovery,
        };
        self.growth.on_congestion(event);
        // As NewReno (RFC 5681 eq. 4, held on a repeated timeout; Linux's Vegas uses
        // tcp_reno_ssthresh). ns-3's Vegas returns max(min(ssthresh, cwnd − 1 SMSS),
        // 2 SMSS) here: see docs/protocols.md.
        reno_ssthresh(w, event, flight)
    }

    #[inline]
    fn on_sent(&mut self, _now: SimTime, bytes: u64, retransmission: bool) {
        if !retransmission {
            self.snd_max += bytes;
        }
    }

    /// BaseRTT, the round's smallest RTT sample and the diff they give for the
    /// window now (packets queued, compared with α and β once per round; absent
    /// before the round's first sample), and whether Vegas is on (1: CA_OPEN).
    fn observe(&self, w: &Window, _now: SimTime, vars: &mut StateVars) {
        vars.put("vegas.on", (self.phase == Phase::Open) as u8 as f64);
        if self.base_rtt != u64::MAX {
            vars.put("vegas.base_rtt_s", self.base_rtt as f64 * 1e-9);
        }
        if self.min_rtt != u64::MAX {
            vars.put("vegas.min_rtt_s", self.min_rtt as f64 * 1e-9);
            vars.put("vegas.diff_packets", self.diff(w.cwnd / w.mss));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// An ACK of `bytes` new bytes (0: a duplicate) with an RTT sample of `rtt_ms`.
    fn ack(bytes: u64, rtt_ms: Option<u64>, snd_una: u64, snd_nxt: u64) -> Ack {
        Ack {
            bytes_acked: bytes,
            bytes_delivered: bytes,
            rtt: rtt_ms.map(|r| SimTime(r * MS)),
            cwnd_limited: true,
            snd_una,
            snd_nxt,
            ..Ack::default()
        }
    }

    fn vegas() -> Ns3Vegas {
        Ns3Vegas::new(&VegasParams::default())
    }

    /// A Vegas in congestion avoidance whose current round ends at byte 1000, with
    /// BaseRTT `base` ms and three samples of `rtt` ms in the round.
    fn in_round(base: u64, rtt: u64) -> Ns3Vegas {
        let mut v = vegas();
        v.base_rtt = base * MS;
        v.min_rtt = rtt * MS;
        v.cnt_rtt = 3;
        v.beg_snd_nxt = 1000;
        v
    }

    /// The window after the ACK that ends the round of `in_round(base, rtt)` with `segments`
    /// segments of window in congestion avoidance.
    fn decide(segments: u64, base: u64, rtt: u64) -> u64 {
        decide_with(&VegasParams::default(), segments, base, rtt)
    }

    fn decide_with(p: &VegasParams, segments: u64, base: u64, rtt: u64) -> u64 {
        let mut v = Ns3Vegas::new(p);
        (v.base_rtt, v.min_rtt, v.cnt_rtt, v.beg_snd_nxt) = (base * MS, rtt * MS, 3, 1000);
        let mut w = Window { cwnd: segments * MSS, ssthresh: 2 * MSS, mss: MSS };
        v.on_ack(&mut w, &ack(MSS, None, 1000, 50_000));
        w.cwnd / MSS
    }

    #[test]
    fn diff_is_the_packets_queued() {
        // cwnd · (RTT − BaseRTT)/RTT: 20 segments, RTT 125 ms over BaseRTT 100 ms → 4 packets.
        let v = in_round(100, 125);
        assert_eq!(v.diff(20), 4.0);
        // No queueing: 0; twice the base RTT: half the window.
        assert_eq!(in_round(100, 100).diff(20), 0.0);
        assert_eq!(in_round(100, 200).diff(20), 10.0);
        // Expected − Actual in packets per second, times BaseRTT (paper §III-B).
        let (expected, actual) = (20.0 / 0.1, 20.0 / 0.125);
        assert!(((expected - actual) * 0.1 - v.diff(20)).abs() < 1e-12);
    }

    #[test]
    fn grows_below_alpha_shrinks_above_beta_holds_between() {
        // 20 segments at BaseRTT 100 ms: diff = 20·(RTT − 100)/RTT.
        assert_eq!(decide(20, 100, 100), 21); // diff 0 < alpha
        assert_eq!(decide(20, 100, 105), 21); // diff 0.95 < alpha
        assert_eq!(decide(20, 100, 110), 21); // diff 1.82 < alpha
        // diff = 2 exactly (RTT = 100·20/18 is not whole: use 10 segments, RTT 125: 10·25/125 = 2).
        assert_eq!(decide(10, 100, 125), 10); // diff = alpha: hold
        assert_eq!(decide(20, 100, 115), 20); // diff 2.61: hold
        assert_eq!(decide(20, 100, 125), 20); // diff = beta = 4: hold
        assert_eq!(decide(20, 100, 126), 19); // diff 4.13 > beta
        assert_eq!(decide(20, 100, 200), 19); // diff 10: still one packet per RTT
        // Other thresholds move the boundaries: alpha = 1, beta = 3.
        let p = VegasParams { variant: Variant::Ns3, alpha: 1.0, beta: 3.0, gamma: 1.0 };
        assert_eq!(decide_with(&p, 20, 100, 104), 21); // diff 0.77 < 1
        assert_eq!(decide_with(&p, 20, 100, 115), 20); // diff 2.61 ∈ [1, 3]
        assert_eq!(decide_with(&p, 20, 100, 118), 19); // diff 3.05 > 3
    }

    #[test]
    fn decisions_happen_once_per_round() {
        let mut v = vegas();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // The first ACK ends the empty initial round (beg_snd_nxt = 0): 1 sample ≤ 2 → NewReno's
        // congestion avoidance step (MSS²/cwnd = 50 bytes); the next round ends at 20,000.
        v.on_ack(&mut w, &ack(MSS, Some(100), 1000, 20_000));
        assert_eq!(w.cwnd, 20 * MSS + 50);
        assert_eq!((v.beg_snd_nxt, v.cnt_rtt, v.min_rtt), (20_000, 0, u64::MAX));
        // ACKs inside the round only record samples: the window does not move.
        for k in 2..=19 {
            v.on_ack(&mut w, &ack(MSS, Some(100 + k), k * 1000, 20_000 + k * 1000));
            assert_eq!(w.cwnd, 20 * MSS + 50);
        }
        assert_eq!((v.cnt_rtt, v.min_rtt, v.base_rtt), (18, 102 * MS, 100 * MS));
        // The ACK that reaches 20,000 ends it: diff = 20·(102 − 100)/102 = 0.39 < alpha → +1.
        v.on_ack(&mut w, &ack(MSS, Some(130), 20_000, 40_000));
        assert_eq!(w.cwnd, 21 * MSS); // whole segments, as ns-3
        assert_eq!(w.ssthresh, 15_750); // max(ssthresh, 3/4 cwnd) (ns-3)
        assert_eq!((v.beg_snd_nxt, v.cnt_rtt, v.min_rtt), (40_000, 0, u64::MAX));
        // The next ACK is inside the new round.
        v.on_ack(&mut w, &ack(MSS, Some(100), 21_000, 41_000));
        assert_eq!(w.cwnd, 21 * MSS);
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        let mut v = vegas();
        v.base_rtt = 100 * MS;
        v.beg_snd_nxt = 8000;
        let mut w = Window { cwnd: 8 * MSS, ssthresh: u64::MAX, mss: MSS };
        // Inside a round: slow start, + 1 MSS per ACK.
        for k in 1..=3 {
            v.on_ack(&mut w, &ack(MSS, Some(110), k * 1000, 8000 + k * 1000));
        }
        assert_eq!(w.cwnd, 11 * MSS);
        // The round ends with diff = 11·10/110 = 1 = gamma, not above it: slow start goes on.
        v.on_ack(&mut w, &ack(MSS, None, 8000, 20_000));
        assert_eq!((w.cwnd, w.ssthresh), (12 * MSS, u64::MAX));
        for k in 9..=11 {
            v.on_ack(&mut w, &ack(MSS, Some(125), k * 1000, 20_000));
        }
        assert_eq!(w.cwnd, 15 * MSS);
        // diff = 15·25/125 = 3 > gamma: cwnd = min(15, ⌊15·100/125⌋ + 1) = 13 segments,
        // ssthresh = max(min(∞, 13 − 1), 2) = 12 segments (then max(12, 3/4·13) = 12).
        v.on_ack(&mut w, &ack(MSS, Some(125), 20_000, 35_000));
        assert_eq!((w.cwnd, w.ssthresh), (13 * MSS, 12 * MSS));
        // Congestion avoidance now: nothing inside the round, and diff = 13·25/125 = 2.6 holds.
        for k in 21..=23 {
            v.on_ack(&mut w, &ack(MSS, Some(125), k * 1000, 35_000));
        }
        v.on_ack(&mut w, &ack(MSS, Some(125), 35_000, 48_000));
        assert_eq!((w.cwnd, w.ssthresh), (13 * MSS, 12 * MSS));
        // With gamma = 3 the same round (diff = 3) would have stayed in slow start.
        let mut v = Ns3Vegas::new(&VegasParams { variant: Variant::Ns3, alpha: 2.0, beta: 4.0, gamma: 3.0 });
        (v.base_rtt, v.min_rtt, v.cnt_rtt, v.beg_snd_nxt) = (100 * MS, 125 * MS, 3, 1000);
        let mut w = Window { cwnd: 15 * MSS, ssthresh: u64::MAX, mss: MSS };
        v.on_ack(&mut w, &ack(MSS, None, 1000, 20_000));
        assert_eq!(w.cwnd, 16 * MSS);
    }

    #[test]
    fn loss_halves_and_vegas_waits_for_the_recovery_point() {
        let mut v = vegas();
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 30 * MSS, mss: MSS };
        v.on_sent(SimTime::ZERO, 60 * MSS, false); // 60,000 bytes sent
        v.on_sent(SimTime::ZERO, MSS, true); // a retransmission moves nothing
        assert_eq!(v.on_congestion(&w, Congestion::Loss, 40 * MSS), 20 * MSS);
        assert_eq!((v.phase, v.recover), (Phase::Recovery, 60 * MSS));
        assert_eq!(v.on_congestion(&w, Congestion::Loss, 3 * MSS), 2 * MSS); // 2 SMSS floor
        // Partial ACKs in recovery: the machinery's window, untouched.
        w.cwnd = 23 * MSS;
        let mut a = ack(MSS, Some(100), 41 * MSS, 62 * MSS);
        a.in_recovery = true;
        v.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 23 * MSS);
        // The full ACK (at the recovery point) turns Vegas on with a round from snd_nxt.
        w.cwnd = 20 * MSS;
        w.ssthresh = 20 * MSS;
        let mut a = ack(MSS, Some(100), 60 * MSS, 62 * MSS);
        a.in_recovery = true;
        v.on_ack(&mut w, &a);
        assert_eq!((v.phase, v.beg_snd_nxt, v.cnt_rtt), (Phase::Open, 62 * MSS, 0));
        assert_eq!(w.cwnd, 20 * MSS);
        // A timeout: ssthresh halves (held when repeated); NewReno slow start until snd_una
        // passes what was outstanding, then Vegas again.
        v.on_sent(SimTime::ZERO, 10 * MSS, false); // snd_max = 70,000
        assert_eq!(v.on_congestion(&w, Congestion::Timeout { repeated: false }, 20 * MSS), 10 * MSS);
        w.ssthresh = 10 * MSS;
        assert_eq!(v.on_congestion(&w, Congestion::Timeout { repeated: true }, 20 * MSS), 10 * MSS);
        assert_eq!((v.phase, v.recover), (Phase::Loss, 70 * MSS));
        w.cwnd = MSS;
        v.on_ack(&mut w, &ack(MSS, Some(100), 61 * MSS, 61 * MSS));
        assert_eq!(w.cwnd, 2 * MSS); // slow start
        w.cwnd = 10 * MSS;
        v.on_ack(&mut w, &ack(MSS, Some(100), 62 * MSS, 62 * MSS));
        assert_eq!(w.cwnd, 10 * MSS + 100); // NewReno congestion avoidance (MSS²/cwnd)
        v.on_ack(&mut w, &ack(MSS, Some(100), 70 * MSS, 75 * MSS));
        assert_eq!((v.phase, v.beg_snd_nxt), (Phase::Open, 75 * MSS));
    }

    #[test]
    fn a_duplicate_ack_restarts_the_round() {
        let mut v = in_round(100, 100);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 2 * MSS, mss: MSS };
        v.on_ack(&mut w, &ack(0, None, 900, 30_000));
        assert_eq!(v.phase, Phase::Disorder);
        // The next ACK of new data reopens with a fresh round (ns-3's EnableVegas): the round
        // that would have ended at 1000 with diff 0 (→ +1) is discarded.
        v.on_ack(&mut w, &ack(MSS, Some(100), 1000, 31_000));
        assert_eq!((v.phase, v.beg_snd_nxt, v.cnt_rtt), (Phase::Open, 31_000, 0));
        assert_eq!(w.cwnd, 20 * MSS);
    }

    /// Read as a scenario's `cc` table is: the reader, then the one check.
    fn read(cc: serde_json::Value) -> std::result::Result<VegasParams, String> {
        match crate::transport::cc::Registry::new().read("vegas", Table::new(&cc, "traffic[0].cc").unwrap()) {
            Ok(crate::transport::cc::CcConfig::Vegas(p)) => Ok(p),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn parameters_are_typed_and_checked() {
        assert_eq!(read(json!({})).unwrap(), VegasParams { variant: Variant::Ns3, alpha: 2.0, beta: 4.0, gamma: 1.0 });
        assert_eq!(read(json!({"alpha": 1, "beta": 3.5, "gamma": 0})).unwrap(), VegasParams { variant: Variant::Ns3, alpha: 1.0, beta: 3.5, gamma: 0.0 });
        assert_eq!(read(json!({"alpha": 0})).unwrap_err(), "traffic[0].cc.alpha: expected a positive number of packets, got 0");
        assert_eq!(read(json!({"alpha": 5})).unwrap_err(), "traffic[0].cc.beta: expected a number of packets at least alpha (5), got 4");
        assert_eq!(read(json!({"gamma": -1})).unwrap_err(), "traffic[0].cc.gamma: expected a non-negative number of packets, got -1");
        assert_eq!(read(json!({"alpha": "nan"})).unwrap_err(), "traffic[0].cc.alpha: expected a finite number, got nan");
        assert_eq!(read(json!({"beta": "4"})).unwrap_err(), "traffic[0].cc.beta: expected a number, got \"4\"");
        assert!(read(json!({"alfa": 2})).unwrap_err().starts_with("traffic[0].cc.alfa: unknown key (did you mean `alpha`?); the vegas controller takes: variant, alpha, beta, gamma"));
        // ns-2's variant: its defaults, whole packets.
        assert_eq!(read(json!({"variant": "ns2"})).unwrap(), VegasParams::ns2());
        assert_eq!(read(json!({"variant": "ns2", "beta": 4})).unwrap(), VegasParams { beta: 4.0, ..VegasParams::ns2() });
        assert_eq!(read(json!({"variant": "ns2", "alpha": 1.5})).unwrap_err(), "traffic[0].cc.alpha: the ns2 variant takes whole packets (ns-2's v_alpha_ is an int), got 1.5");
        assert_eq!(read(json!({"variant": "ns1"})).unwrap_err(), "traffic[0].cc.variant: expected \"ns3\" or \"ns2\", got \"ns1\"");
        assert_eq!(serde_json::to_value(VegasParams::ns2()).unwrap(), json!({"variant": "ns2", "alpha": 1.0, "beta": 3.0, "gamma": 1.0}));
        assert_eq!(serde_json::to_value(VegasParams::default()).unwrap(), json!({"alpha": 2.0, "beta": 4.0, "gamma": 1.0}));
        // The canonical form passes the same check when read back (tests/params.rs).
        let bad: VegasParams = serde_json::from_value(json!({"alpha": 3.0, "beta": 1.0, "gamma": 1.0})).unwrap();
        assert_eq!(Vegas::check(&bad).unwrap_err(), ("beta", "expected a number of packets at least alpha (3), got 1".into()));
    }
}
