//! MulTCP / wTCP: one connection that takes the long-run share of `weight`
//! standard TCP flows against TCP (the weighted TCP, wTCP, of Courcoubetis,
//! Dimakis and Kanakakis, "Congestion control for background data transfers with
//! minimal delay impact", §II-D: x_n = C/(k + w + n); §III-B, Theorem 7: a server
//! that runs at most M TCP transfers at once behaves as wTCP with w = M). Any
//! real w > 0 is allowed, below 1 included.
//!
//! It is an AIMD(a, b) window: in congestion avoidance cwnd grows by `a` packets
//! per RTT (a·SMSS²/cwnd per ACK, as RFC 5681 eq. 3 with a = 1), and a loss sets
//! ssthresh = (1 − b)·FlightSize (RFC 5681 eq. 4 with b = 1/2). Crowcroft and
//! Oechslin's MulTCP (CCR 28(3), 1998) emulates N flows with a = N and
//! b = 1/(2N), which is undefined below N = 1/2 and, on a drop-tail bottleneck,
//! takes about (4N² − N)/3 times TCP's share rather than N. The rule here:
//!
//! ```text
//! a = min(1, 3w)          b = min(1, 2/(1 + 3w))          (w = 1: a = 1, b = 1/2, NewReno)
//! ```
//!
//! Derivation (docs/protocols.md has it in full, with the measurements). Long-lived
//! flows on a drop-tail bottleneck lose packets at the queue's overflows, and a
//! drop-tail queue drops the packet that finds it full: with ACK clocking, the
//! extra packet a flow sends when its window grows by one. Two flows that grow
//! equally fast (a = 1, as TCP) are therefore equally likely to lose at each
//! overflow, and see the same loss-event rate: each window is a sawtooth between
//! (1 − b)·W and W with b·W = a·T (T RTTs between overflows), of mean
//! a·T·(2 − b)/(2b), TCP's being 3T/2. The ratio of throughputs (same RTT) is
//!
//! ```text
//! R = a(2 − b) / (3b),   so with a = 1:  R = w  ⇔  b = 2/(1 + 3w)   (b ≤ 1 ⇔ w ≥ 1/3)
//! ```
//!
//! Below w = 1/3 the decrease is at its largest (b = 1: the window falls to RFC
//! 5681's floor of 2 SMSS) and a = 3w keeps R = w with equal loss-event rates. Such
//! a flow grows slower than TCP and escapes some overflows: if it lost in
//! proportion to its growth, R would be (2 − b)/(3b) = 1/3 whatever a is, so for
//! w < 1/3 the share lies between w (every overflow hits both flows) and 1/3.
//!
//! Slow start emulates w flows: the initial window is w times `tcp.initial_window`
//! (at least one segment), doubling per RTT as TCP (RFC 5681 eq. 2: w flows each
//! doubling double their sum). A timeout sets ssthresh as a loss does (RFC 5681
//! eq. 4 uses the same FlightSize rule for both) and holds it on a repeated
//! timeout; the machinery restarts from one segment.
use super::{Ack, Congestion, CongestionControl, RenoGrowth, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::settings::{Result, Table};
use serde::{Deserialize, Serialize};

/// MulTCP's one parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MulTcpParams {
    /// The share taken against one standard TCP flow: a real number above 0
    /// (default 1: exactly NewReno).
    pub weight: f64,
}

impl Default for MulTcpParams {
    fn default() -> Self {
        MulTcpParams { weight: 1.0 }
    }
}

fn check_weight(w: f64) -> std::result::Result<(), String> {
    if !(w.is_finite() && w > 0.0) {
        return Err(format!("expected a positive number, got {w}"));
    }
    Ok(())
}

/// The AIMD(a, b) of weight `w`: grow `a` packets per RTT, keep `1 − b` of the
/// flight on a loss. a = min(1, 3w), b = min(1, 2/(1 + 3w)): R = a(2 − b)/(3b) = w.
pub fn aimd(w: f64) -> (f64, f64) {
    ((3.0 * w).min(1.0), (2.0 / (1.0 + 3.0 * w)).min(1.0))
}

/// Fixed-point scale of `a` (16 fractional bits; a = 1 is exact).
const ONE: u64 = 1 << 16;

/// MulTCP / wTCP.
#[derive(Clone, Debug)]
pub struct MulTcp {
    weight: f64,
    /// a · 2^16, a being the increase per RTT in packets.
    a: u64,
    /// Credit towards the next increase, 2^16 per increase (a < 1 only).
    credit: u64,
    /// 1 − b: the part of the flight kept as ssthresh on a loss.
    keep: f64,
    /// TCP's growth (RFC 5681, or RFC 3465 with `tcp.byte_counting`).
    growth: RenoGrowth,
}

impl WindowProtocol for MulTcp {
    const NAME: &'static str = "multcp";
    type Params = MulTcpParams;

    /// `cc = { weight = 0.5 }` (optional; default 1).
    fn read(mut t: Table) -> Result<MulTcpParams> {
        let weight: f64 = t.or("weight", MulTcpParams::default().weight)?;
        t.finish("the multcp controller")?;
        Ok(MulTcpParams { weight })
    }

    fn check(p: &MulTcpParams) -> std::result::Result<(), (&'static str, String)> {
        check_weight(p.weight).map_err(|m| ("weight", m))
    }

    fn new(p: &MulTcpParams) -> Self {
        let (a, _) = aimd(p.weight);
        // 1 − b = (3w − 1)/(3w + 1), or 0 below w = 1/3, written so that w = 1 gives 1/2
        // exactly and w = 1/2 gives 0.2 without the rounding of 1 − 0.8.
        let w3 = 3.0 * p.weight;
        let keep = ((w3 - 1.0) / (w3 + 1.0)).max(0.0);
        // a ≤ 1: at most 2^16 (and at least 1, so that a tiny weight still grows).
        MulTcp { weight: p.weight, a: ((a * ONE as f64).round() as u64).max(1), credit: 0, keep, growth: RenoGrowth::default() }
    }
}

impl CongestionControl for MulTcp {
    /// w flows start with w initial windows (at least one segment).
    fn on_start(&mut self, w: &mut Window, _now: SimTime) {
        let segments = (w.cwnd / w.mss) as f64 * self.weight;
        w.cwnd = (segments.round() as u64).max(1) * w.mss;
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        // Slow start as TCP (RFC 5681 eq. 2). Congestion avoidance: a packets per RTT
        // (RFC 5681 eq. 3 times a). From w = 1/3 up a = 1: NewReno's SMSS²/cwnd per ACK,
        // at least one byte (as ns-3's TcpNewReno). Below, the same increase on a
        // fraction a of the ACKs (a credit of a per ACK, one increase per whole credit):
        // a·SMSS²/cwnd per ACK on average, TCP's own rounding, and a division on fewer
        // ACKs than NewReno makes.
        if self.a < ONE && w.cwnd >= w.ssthresh {
            self.credit += self.a;
            if self.credit < ONE {
                return;
            }
            self.credit -= ONE;
        }
        self.growth.on_ack(w, ack);
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        self.growth.on_congestion(event);
        match event {
            // RFC 5681 §3.1: a repeated timeout keeps ssthresh.
            Congestion::Timeout { repeated: true } => w.ssthresh,
            // ssthresh = max((1 − b)·FlightSize, 2·SMSS) (RFC 5681 eq. 4 with 1/2 → 1 − b).
            _ => ((flight as f64 * self.keep) as u64).max(2 * w.mss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::NewReno;
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1460;

    fn ack(bytes: u64, in_recovery: bool) -> Ack {
        Ack {
            bytes_acked: bytes,
            bytes_delivered: bytes,
            in_recovery,
            cwnd_limited: true,
            ..Ack::default()
        }
    }

    fn multcp(weight: f64) -> MulTcp {
        MulTcp::new(&MulTcpParams { weight })
    }

    #[test]
    fn the_rule_gives_share_w() {
        for w in [0.01, 0.25, 1.0 / 3.0, 0.5, 1.0, 2.0, 4.0, 100.0] {
            let (a, b) = aimd(w);
            // R = a(2 − b)/(3b) with equal loss-event rates.
            assert!((a * (2.0 - b) / (3.0 * b) - w).abs() < 1e-12 * w.max(1.0), "w = {w}: a = {a}, b = {b}");
            assert!(a > 0.0 && a <= 1.0 && b > 0.0 && b <= 1.0);
        }
        assert_eq!(aimd(1.0), (1.0, 0.5)); // NewReno
        assert_eq!(aimd(0.25), (0.75, 1.0));
        assert_eq!(aimd(0.5), (1.0, 0.8));
        assert_eq!(aimd(2.0), (1.0, 2.0 / 7.0));
        assert_eq!(aimd(4.0), (1.0, 2.0 / 13.0));
    }

    #[test]
    fn increase_per_ack_and_decrease_on_loss() {
        // (weight, increases per 4 congestion-avoidance ACKs, ssthresh after a loss with
        // 20 SMSS = 29,200 bytes in flight: max((1 − b)·29,200, 2 SMSS)).
        let cases: [(f64, usize, u64); 5] = [
            (0.25, 3, 2 * MSS), // a = 0.75: 3 of 4 ACKs; b = 1: the 2 SMSS floor
            (0.5, 4, 5840),     // a = 1; b = 0.8: 0.2·29,200 = 5840
            (1.0, 4, 14_600),   // NewReno: half the flight
            (2.0, 4, 20_857),   // b = 2/7: 5/7·29,200 = 20,857.1
            (4.0, 4, 24_707),   // b = 2/13: 11/13·29,200 = 24,707.7
        ];
        for (weight, increases, ssthresh) in cases {
            let mut c = multcp(weight);
            let start = Window { cwnd: 20 * MSS, ssthresh: 10 * MSS, mss: MSS };
            let mut w = start;
            for _ in 0..4 {
                c.on_ack(&mut w, &ack(MSS, false));
            }
            // NewReno's increase SMSS²/cwnd (73 bytes at 20 SMSS, then 72, 72, 72), that many times.
            let mut reno = start;
            for _ in 0..increases {
                NewReno::default().on_ack(&mut reno, &ack(MSS, false));
            }
            assert_eq!(w.cwnd, reno.cwnd, "weight {weight}");
            assert_eq!(c.on_congestion(&w, Congestion::Loss, 20 * MSS), ssthresh, "weight {weight}");
            assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: false }, 20 * MSS), ssthresh);
            assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }, 20 * MSS), 10 * MSS);
            // Slow start as TCP: + min(N, SMSS); duplicates and recovery leave the window.
            let mut w = Window { cwnd: 4 * MSS, ssthresh: u64::MAX, mss: MSS };
            c.on_ack(&mut w, &ack(3 * MSS, false));
            c.on_ack(&mut w, &ack(0, false));
            c.on_ack(&mut w, &ack(MSS, true));
            assert_eq!(w.cwnd, 5 * MSS);
        }
        // Over one RTT of ACKs at 100 SMSS, a = 0.75 packets: 75 increases of ⌊1460/100.x⌋ = 14
        // bytes (NewReno makes 100), 1050 bytes = 0.72 segments.
        let mut c = multcp(0.25);
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 0, mss: MSS };
        for _ in 0..100 {
            c.on_ack(&mut w, &ack(MSS, false));
        }
        assert_eq!(w.cwnd - 100 * MSS, 75 * 14);
    }

    #[test]
    fn the_initial_window_is_w_flows() {
        for (weight, segments) in [(0.05, 1), (0.25, 3), (0.5, 5), (1.0, 10), (2.0, 20), (4.0, 40)] {
            let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
            multcp(weight).on_start(&mut w, SimTime::ZERO);
            assert_eq!(w.cwnd, segments * MSS, "weight {weight}");
        }
    }

    #[test]
    fn weight_one_is_newreno_exactly() {
        // The same long sequence of ACKs, losses and timeouts through both: identical windows.
        let (mut m, mut n) = (multcp(1.0), NewReno::default());
        let start = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        let (mut wm, mut wn) = (start, start);
        m.on_start(&mut wm, SimTime::ZERO);
        n.on_start(&mut wn, SimTime::ZERO);
        let mut x: u64 = 12345;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 1000 {
                0..=2 => {
                    let flight = wm.cwnd.min(x % (wm.cwnd + 1) + MSS);
                    let e = if x.is_multiple_of(7) { Congestion::Timeout { repeated: x.is_multiple_of(3) } } else { Congestion::Loss };
                    let (sm, sn) = (m.on_congestion(&wm, e, flight), n.on_congestion(&wn, e, flight));
                    assert_eq!(sm, sn, "step {i}");
                    wm.ssthresh = sm;
                    wn.ssthresh = sn;
                    let cwnd = if matches!(e, Congestion::Loss) { sm + 3 * MSS } else { MSS };
                    wm.cwnd = cwnd;
                    wn.cwnd = cwnd;
                }
                _ => {
                    let a = ack((x >> 12) % (3 * MSS), x.is_multiple_of(11));
                    m.on_ack(&mut wm, &a);
                    n.on_ack(&mut wn, &a);
                }
            }
            assert_eq!(wm, wn, "step {i}");
        }
    }

    /// The parameters as the registry reads them (the reader, then the one check).
    fn read(cc: serde_json::Value) -> std::result::Result<MulTcpParams, String> {
        match crate::transport::cc::Registry::new().read("multcp", Table::new(&cc, "traffic[0].cc").unwrap()) {
            Ok(crate::transport::cc::CcConfig::MulTcp(p)) => Ok(p),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn the_weight_is_typed_and_checked() {
        assert_eq!(read(json!({})).unwrap(), MulTcpParams { weight: 1.0 });
        assert_eq!(read(json!({"weight": 0.5})).unwrap(), MulTcpParams { weight: 0.5 });
        assert_eq!(read(json!({"weight": 3})).unwrap(), MulTcpParams { weight: 3.0 });
        assert_eq!(read(json!({"weight": 0})).unwrap_err(), "traffic[0].cc.weight: expected a positive number, got 0");
        assert_eq!(read(json!({"weight": -2})).unwrap_err(), "traffic[0].cc.weight: expected a positive number, got -2");
        assert_eq!(read(json!({"weight": "NaN"})).unwrap_err(), "traffic[0].cc.weight: expected a finite number, got NaN");
        assert_eq!(read(json!({"weight": "2"})).unwrap_err(), "traffic[0].cc.weight: expected a number, got \"2\"");
        assert_eq!(
            read(json!({"weigth": 2})).unwrap_err(),
            "traffic[0].cc.weigth: unknown key (did you mean `weight`?); the multcp controller takes: weight"
        );
        let bad: MulTcpParams = serde_json::from_value(json!({"weight": -1.0})).unwrap();
        assert_eq!(MulTcp::check(&bad), Err(("weight", "expected a positive number, got -1".to_string())));
    }
}
