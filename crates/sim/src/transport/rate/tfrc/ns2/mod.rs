//! TFRC as ns-2.35 runs it (`cc = { variant = "ns2" }`): `Agent/TFRC` and
//! `Agent/TFRCSink` (tcp/tfrc.cc, tcp/tfrc-sink.cc, tcp/formula.h,
//! tcp/formula-with-inverse.h) with the defaults of tcl/lib/ns-default.tcl
//! (lines 1123-1213), the TFRC of the TFCBR paper and of its authors. It
//! predates RFC 5348 and differs from it (and from `variant = "rfc5348"`) in
//! every rule listed in docs/protocols.md ("ns-2's TFRC"): the sender in
//! `sender.rs`, the receiver in `receiver.rs`, the loss-interval average in
//! `wali.rs`.
//!
//! Besides its RTT estimate (`Packet::owd`, as every TFRC datagram), an ns-2
//! datagram carries the sender's round id, its `tzero` (the RTO of the
//! equation, in 100 ms ticks) and its urgent flag (`hdr_tfrc`): they travel in
//! `Packet::sack` ([`DataHeader`]).
mod receiver;
mod sender;
mod wali;

pub use receiver::Ns2Receiver;
pub use sender::Ns2Sender;

/// ns-2's largest rate, bytes per second (formula.h:1, `MAXRATE`).
pub const MAXRATE: f64 = 25_000_000.0;

/// ns-2's `SMALLFLOAT` (tfrc.h:42) and `SAMLLFLOAT` (tfrc-sink.h:44).
const SMALLFLOAT: f64 = 0.0000001;

/// `tcp_tick_` (ns-default.tcl:1169), the unit of `tzero`.
pub const TCP_TICK: f64 = 0.1;

/// `p_to_b` (formula.h:8-50): the TCP equation's rate in bytes per second for
/// packets of `psize` bytes, loss event rate `p`, round trip `rtt` and RTO
/// `tzero` (s), B = `bval`: psize / (rtt·sqrt(2bp/3) + min(3·sqrt(3bp/8), 1)·tzero·p·(1 + 32p²)),
/// at most `MAXRATE` (which p = 0 gives).
pub fn p_to_b(p: f64, rtt: f64, tzero: f64, psize: f64, bval: f64) -> f64 {
    if p < 0.0 || rtt < 0.0 {
        return MAXRATE;
    }
    let mut res = rtt * (2.0 * bval * p / 3.0).sqrt();
    let tmp1 = (3.0 * (3.0 * bval * p / 8.0).sqrt()).min(1.0);
    let tmp2 = tzero * p * (1.0 + 32.0 * p * p);
    res += tmp1 * tmp2;
    if res < SMALLFLOAT {
        return MAXRATE;
    }
    (psize / res).min(MAXRATE)
}

/// `b_to_p` (formula-with-inverse.h:3-27): the loss event rate for a rate `b`,
/// by ns-2's bisection from p = 0.5 in halving steps, stopping within 5% of `b`
/// or after 31 steps.
pub fn b_to_p(b: f64, rtt: f64, tzero: f64, psize: f64, bval: f64) -> f64 {
    let (mut p, mut pi) = (0.5, 0.25);
    for _ in 0..=30 {
        let bres = p_to_b(p, rtt, tzero, psize, bval);
        if bres > 0.95 * b && bres < 1.05 * b {
            return p;
        }
        if bres > b {
            p += pi;
        } else {
            p -= pi;
        }
        pi /= 2.0;
    }
    p
}

/// The fields of ns-2's `hdr_tfrc` besides the sequence number, send time and
/// RTT: the round id (24 bits, saturating), `tzero` in ticks (7 bits,
/// saturating at 12.7 s) and the urgent flag (1 bit), packed in `Packet::sack`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataHeader {
    pub round_id: u32,
    pub tzero_ticks: u32,
    pub urgent: bool,
}

const ROUND_BITS: u32 = 24;
const TZERO_MAX: u32 = 127;

impl DataHeader {
    /// The `Packet::sack` value.
    pub fn field(self) -> u32 {
        let round = self.round_id.min((1 << ROUND_BITS) - 1);
        round | (self.tzero_ticks.min(TZERO_MAX) << ROUND_BITS) | ((self.urgent as u32) << 31)
    }

    /// From a `Packet::sack` value.
    pub fn of(field: u32) -> Self {
        DataHeader { round_id: field & ((1 << ROUND_BITS) - 1), tzero_ticks: (field >> ROUND_BITS) & TZERO_MAX, urgent: field >> 31 == 1 }
    }

    /// `tzero` in seconds.
    pub fn tzero(self) -> f64 {
        self.tzero_ticks as f64 * TCP_TICK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equation_is_formula_h() {
        // p = 0.01, rtt 0.1 s, tzero 0.4 s, 1000 bytes: 0.1·sqrt(0.02/3) = 0.0081650;
        // 3·sqrt(0.00375) = 0.183712; 0.4·0.01·1.0032 = 0.0040128; the sum 0.0089022:
        // 112,332 bytes/s.
        let x = p_to_b(0.01, 0.1, 0.4, 1000.0, 1.0);
        assert!((x - 1000.0 / (0.1 * (0.02f64 / 3.0).sqrt() + 3.0 * 0.00375f64.sqrt() * 0.4 * 0.01 * 1.0032)).abs() < 1e-9);
        assert!((x - 112_332.0).abs() < 1.0, "{x}");
        // No loss, or a negative one: the largest rate.
        assert_eq!((p_to_b(0.0, 0.1, 0.4, 1000.0, 1.0), p_to_b(-1.0, 0.1, 0.4, 1000.0, 1.0)), (MAXRATE, MAXRATE));
        // At p = 0.5 the timeout term's factor is capped at 1.
        let x = p_to_b(0.5, 0.1, 0.4, 1000.0, 1.0);
        assert!((x - 1000.0 / (0.1 * (1.0f64 / 3.0).sqrt() + 0.4 * 0.5 * 9.0)).abs() < 1e-9);
    }

    #[test]
    fn the_inverse_bisects_to_within_five_percent() {
        // 112,332 bytes/s is p = 0.01: the bisection from 0.5 stops at the first p
        // whose rate is within 5%, checked against the equation.
        let p = b_to_p(112_332.0, 0.1, 0.4, 1000.0, 1.0);
        let x = p_to_b(p, 0.1, 0.4, 1000.0, 1.0);
        assert!(x > 0.95 * 112_332.0 && x < 1.05 * 112_332.0, "p {p}: {x}");
        // The steps are ns-2's: 0.5, 0.25, 0.125, ... halving; 0.5 − Σ 2^-k lands on
        // a dyadic rational.
        assert_eq!((p * 2f64.powi(31)).fract(), 0.0);
        // A rate above what p → 0 allows ends after 31 steps near 0.
        assert!(b_to_p(1e12, 0.1, 0.4, 1000.0, 1.0) < 1e-8);
    }

    #[test]
    fn the_header_fields_pack_into_one_word() {
        let h = DataHeader { round_id: 12_345, tzero_ticks: 5, urgent: true };
        assert_eq!(DataHeader::of(h.field()), h);
        assert_eq!(h.tzero(), 0.5);
        // Saturating, never spilling into the next field.
        let h = DataHeader { round_id: u32::MAX, tzero_ticks: 1000, urgent: false };
        assert_eq!(DataHeader::of(h.field()), DataHeader { round_id: (1 << 24) - 1, tzero_ticks: 127, urgent: false });
    }
}
