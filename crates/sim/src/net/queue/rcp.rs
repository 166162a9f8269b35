//! The router side of RCP, the Rate Control Protocol of N. Dukkipati, M.
//! Kobayashi, R. Zhang-Shen and N. McKeown, "Processor Sharing Flows in the
//! Internet" (IWQoS 2005, §2), as the lower-bounds paper ran it (Podlesny and
//! Gorinsky, WUCSE-2007-42, §VII: α = β = 0.4, 10-packet drop-tail buffers).
//!
//! Every control interval T the link updates the one rate R it offers every flow:
//!
//!   R ← R · (1 + (T/d) · (α(C − y) − β·Q/d) / C)                     (§2, eq. 1)
//!
//! with C = link rate × target utilization, y the rate of the traffic that
//! arrived over the last interval, Q the queue (bits) and d the mean RTT of the
//! flows crossing the link, learnt from the RTT field RCP packets carry. T is
//! min(d, `interval`). Each RCP datagram carries a rate field that every RCP
//! link lowers to its own R, so the receiver learns the smallest rate on the
//! path and echoes it to the sender. The buffer is drop-tail.
//!
//! Where the paper leaves a detail open, this follows the RCP authors' ns-2
//! router (`rcp.cc`, Rui Zhang and Nandita Dukkipati), which the lower-bounds
//! paper used: the initial R (5% of the link rate), the lower clip of R, the
//! gain of the RTT average and the interval's start at the first update. The
//! choices and deviations are listed in docs/protocols.md (RCP).
use super::{overflows, read_limit, read_number, Arrival, DropTail, LinkSpeed, QueueConfig, QueueDiscipline, Verdict, Waiting};
use crate::engine::SimTime;
use crate::net::packet::{Packet, ACK, DATAGRAM};
use crate::settings::readers::positive_time;
use crate::settings::{Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// ns-2's floor of the advertised rate: `min_pprtt_` 1000-byte packets per mean
/// RTT (the ns-3 port's default, 0.01), so that R never reaches 0 and stays there.
pub const MIN_PACKETS_PER_RTT: f64 = 0.01;

/// RCP's parameters on one link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rcp {
    /// The drop-tail buffer (default: drop-tail's 1000 packets).
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// α, the gain of the spare capacity (0.4: §VII and the RCP paper).
    pub alpha: f64,
    /// β, the gain of the queue (0.4).
    pub beta: f64,
    /// γ: the link aims at this fraction of its rate (C = γ · rate; ns-2 `gamma_`).
    pub target_utilization: f64,
    /// The longest control interval: T = min(d, interval) (10 ms, ns-2 `upd_timeslot_`).
    #[serde(rename = "interval_ns")]
    pub interval: SimTime,
    /// d before any RTT sample (200 ms, ns-2's `RTT`).
    #[serde(rename = "initial_rtt_ns")]
    pub initial_rtt: SimTime,
    /// R at the start, as a fraction of the link rate (0.05, ns-2 `init_rate_fact_`).
    pub initial_rate: f64,
    /// Q: the queue at the update (false, as ns-2's router) or the smallest queue
    /// met by the packets that arrived over the interval and at its end (true:
    /// the persistent queue).
    pub min_queue: bool,
}

impl Default for Rcp {
    fn default() -> Self {
        let d = DropTail::default();
        Rcp {
            limit_packets: d.limit_packets,
            limit_bytes: d.limit_bytes,
            alpha: 0.4,
            beta: 0.4,
            target_utilization: 1.0,
            interval: SimTime::from_millis(10),
            initial_rtt: SimTime::from_millis(200),
            initial_rate: 0.05,
            min_queue: false,
        }
    }
}

impl Rcp {
    /// Read `{ type = "rcp", limit, alpha, beta, target_utilization, interval,
    /// initial_rtt, initial_rate, min_queue }`: every key has a default.
    pub fn read(t: &mut Table, rate_bps: u64) -> Result<Rcp> {
        let d = Rcp::default();
        let (limit_packets, limit_bytes) = read_limit(t, rate_bps, (d.limit_packets, d.limit_bytes))?;
        Ok(Rcp {
            limit_packets,
            limit_bytes,
            alpha: read_number(t, "alpha", Some(d.alpha), "")?,
            beta: read_number(t, "beta", Some(d.beta), "")?,
            target_utilization: read_number(t, "target_utilization", Some(d.target_utilization), "")?,
            interval: positive_time(t, "interval", d.interval)?,
            initial_rtt: positive_time(t, "initial_rtt", d.initial_rtt)?,
            initial_rate: read_number(t, "initial_rate", Some(d.initial_rate), "")?,
            min_queue: t.or("min_queue", d.min_queue)?,
        })
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(("alpha", format!("expected a positive number, got {}", self.alpha)));
        }
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err(("beta", format!("expected a number of at least 0, got {}", self.beta)));
        }
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return Err(("target_utilization", format!("expected a number in (0, 1], got {}", self.target_utilization)));
        }
        if !(self.initial_rate > 0.0 && self.initial_rate <= 1.0) {
            return Err(("initial_rate", format!("expected a fraction of the link rate in (0, 1], got {}", self.initial_rate)));
        }
        if self.interval == SimTime::ZERO || self.interval > SimTime::LONGEST {
            return Err(("interval_ns", "expected a positive time of at most 1e9 s".into()));
        }
        if self.initial_rtt == SimTime::ZERO || self.initial_rtt > SimTime::LONGEST {
            return Err(("initial_rtt_ns", "expected a positive time of at most 1e9 s".into()));
        }
        Ok(())
    }
}


/// Whether a packet is an RCP datagram: data or probe from an RCP sender (a
/// datagram that is not feedback and carries a rate field).
#[inline]
pub fn is_rcp(pkt: &Packet) -> bool {
    pkt.flags & (DATAGRAM | ACK) == DATAGRAM && pkt.sack != 0
}

/// The rate field of an RCP datagram, in bits per second (`Packet::sack` holds
/// the bits of an f32: datagrams have no other use for it).
#[inline]
pub fn rate_field(pkt: &Packet) -> f32 {
    f32::from_bits(pkt.sack)
}

/// The `Packet::sack` value of an RCP rate field of `bps` (never 0: a rate is
/// positive, +∞ for "no limit yet").
#[inline]
pub fn field_of(bps: f32) -> u32 {
    bps.to_bits()
}

/// One step of eq. (1): the new rate from the old one over an interval of `t`
/// seconds, with mean RTT `d` (s), capacity `c` and arrival rate `y` (bit/s), and
/// queue `q` (bits); clipped to [floor, c].
// (Eq. 1's symbols, one argument each.)
#[allow(clippy::too_many_arguments)]
pub fn next_rate(r: f64, t: f64, d: f64, c: f64, y: f64, q: f64, alpha: f64, beta: f64, floor: f64) -> f64 {
    let r = r * (1.0 + (t / d) * (alpha * (c - y) - beta * q / d) / c);
    r.clamp(floor.min(c), c)
}

/// RCP on one link during a run.
pub struct RcpState {
    pub cfg: Rcp,
    /// The link's rate (bit/s).
    link_bps: f64,
    /// C = γ · link rate.
    pub capacity: f64,
    /// R, the rate the link offers each flow (bit/s), and its header form.
    pub rate: f64,
    field: f32,
    /// d: the mean RTT (s).
    pub d: f64,
    /// The last interval's byte-weighted mean of the RTT fields (0: none yet).
    d_sample: f64,
    /// The current interval began at `since` and is `t` long.
    since: SimTime,
    t: SimTime,
    /// Bytes that arrived in the interval (dropped ones too: the offered load).
    bytes: u64,
    /// Σ rtt·bytes and Σ bytes over the RCP datagrams that carried an RTT.
    rtt_sum: f64,
    rtt_bytes: u64,
    /// The smallest queue (bytes) an arrival met in the interval.
    q_min: u64,
    /// The next update.
    next: SimTime,
    /// Updates so far.
    pub updates: u64,
}

impl RcpState {
    pub fn new(cfg: &Rcp, rate_bps: u64) -> RcpState {
        let link_bps = rate_bps as f64;
        let rate = link_bps * cfg.initial_rate;
        let d = cfg.initial_rtt.as_secs_f64();
        let t = cfg.interval.min(cfg.initial_rtt);
        RcpState {
            cfg: cfg.clone(),
            link_bps,
            capacity: link_bps * cfg.target_utilization,
            rate,
            field: rate as f32,
            d,
            d_sample: 0.0,
            since: SimTime::ZERO,
            t,
            bytes: 0,
            rtt_sum: 0.0,
            rtt_bytes: 0,
            q_min: u64::MAX,
            next: t,
            updates: 0,
        }
    }

    /// A packet arrives to `q_packets` / `q_bytes` waiting: count it, decide
    /// (drop-tail), and lower an admitted RCP datagram's rate field to R.
    #[inline]
    pub fn admit(&mut self, q_packets: u64, q_bytes: u64, pkt: &mut Packet) -> Verdict {
        self.bytes += pkt.size as u64;
        self.q_min = self.q_min.min(q_bytes);
        let rcp = is_rcp(pkt);
        if rcp && pkt.owd > 0 {
            // The sender's RTT, in microseconds (`Packet::owd` of a datagram).
            self.rtt_sum += pkt.owd as f64 * 1e-6 * pkt.size as f64;
            self.rtt_bytes += pkt.size as u64;
        }
        if overflows(self.cfg.limit_packets, self.cfg.limit_bytes, q_packets, q_bytes, pkt.size) {
            return Verdict::Drop;
        }
        if rcp && self.field < rate_field(pkt) {
            pkt.sack = field_of(self.field);
        }
        Verdict::Enqueue
    }

    /// The update is due at `now`, with `q_bytes` waiting: eq. (1), then the next
    /// interval. Returns the time of the next update.
    pub fn update(&mut self, now: SimTime, q_bytes: u64) -> SimTime {
        let c = &self.cfg;
        let t = (now - self.since).as_secs_f64();
        let y = self.bytes as f64 * 8.0 / t;
        // d: the interval's byte-weighted mean RTT, averaged in with ns-2's gains
        // (T/d when the sample is at least d; (R/link rate)·(sample/d)·(T/d), far
        // slower, when it is below).
        if self.rtt_bytes > 0 {
            self.d_sample = self.rtt_sum / self.rtt_bytes as f64;
        }
        if self.d_sample > 0.0 {
            let gain = if self.d_sample >= self.d { t / self.d } else { (self.rate / self.link_bps) * (self.d_sample / self.d) * (t / self.d) };
            self.d += gain.min(1.0) * (self.d_sample - self.d);
        }
        let q = if c.min_queue { self.q_min.min(q_bytes) } else { q_bytes };
        let floor = MIN_PACKETS_PER_RTT * 8000.0 / self.d;
        self.rate = next_rate(self.rate, t, self.d, self.capacity, y, q as f64 * 8.0, c.alpha, c.beta, floor);
        self.field = self.rate as f32;
        self.updates += 1;
        // T = min(d, interval), to the nanosecond (at least 1 ns).
        self.t = SimTime(((self.d * 1e9) as u64).max(1)).min(c.interval);
        self.since = now;
        self.bytes = 0;
        self.rtt_sum = 0.0;
        self.rtt_bytes = 0;
        self.q_min = u64::MAX;
        self.next = now + self.t;
        self.next
    }

    /// The rate field a datagram leaves with (f32 of R).
    pub fn advertised(&self) -> f32 {
        self.field
    }
}

/// The discipline's seam (registry.rs): its own reader, check and state.
impl QueueConfig for Rcp {
    const NAME: &'static str = "rcp";
    type State = Box<RcpState>;

    fn read(t: &mut Table, link: LinkSpeed) -> Result<Rcp> {
        Rcp::read(t, link.rate_bps)
    }

    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        self.validate()
    }

    fn limits(&self) -> (Option<u64>, Option<u64>) {
        (self.limit_packets, self.limit_bytes)
    }

    fn start(&self, rate_bps: u64, _rng: Xoshiro256pp) -> Box<RcpState> {
        Box::new(RcpState::new(self, rate_bps))
    }
}

/// RCP decides from the queue alone, and updates its rate at a deadline of its own.
impl QueueDiscipline for RcpState {
    fn admit(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        RcpState::admit(self, a.q_packets, a.q_bytes, pkt)
    }

    #[inline]
    fn admit_lazy<F: Fn() -> Arrival>(&mut self, q_packets: u64, q_bytes: u64, pkt: &mut Packet, _arrival: F) -> Verdict {
        RcpState::admit(self, q_packets, q_bytes, pkt)
    }

    fn deadline(&self) -> Option<SimTime> {
        Some(self.next)
    }

    fn on_deadline(&mut self, now: SimTime, waiting: Waiting) {
        self.update(now, waiting.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(size: u32, rtt_us: u32, field: f32) -> Packet {
        Packet { size, len: size, owd: rtt_us, sack: field_of(field), flags: DATAGRAM, ..Packet::default() }
    }

    #[test]
    fn one_update_against_equation_1_by_hand() {
        // 100 Mbps, γ = 0.85: C = 85 Mbps; R0 = 5% = 5 Mbps; d0 = 200 ms, so the
        // first interval is T = 10 ms. In it, 125 datagrams of 1000 B arrive (y =
        // 1e6 bits / 0.01 s = 100 Mbps), all carrying RTT 100 ms (below d: the
        // gain is (R/rate)(sample/d)(T/d) = 0.05 · 0.5 · 0.05 = 1.25e-3, so d =
        // 0.2 − 1.25e-3 · 0.1 = 0.199875 s). The queue at the update is 5000 B.
        //   R = 5e6 · (1 + (0.01/0.199875) · (0.4·(85e6 − 100e6) − 0.4·40000/0.199875) / 85e6)
        let cfg = Rcp { target_utilization: 0.85, ..Rcp::default() };
        let mut s = RcpState::new(&cfg, 100_000_000);
        assert_eq!(QueueDiscipline::deadline(&s), Some(SimTime::from_millis(10)));
        for _ in 0..125 {
            let mut p = datagram(1000, 100_000, f32::INFINITY);
            assert_eq!(s.admit(0, 0, &mut p), Verdict::Enqueue);
            // Admitted RCP datagrams leave with R0.
            assert_eq!(rate_field(&p), 5e6);
        }
        let next = s.update(SimTime::from_millis(10), 5000);
        let d = 0.2 - 0.05 * 0.5 * 0.05 * 0.1;
        assert!((s.d - d).abs() < 1e-15, "d = {}", s.d);
        let want = 5e6 * (1.0 + (0.01 / d) * (0.4 * (85e6 - 100e6) - 0.4 * 40_000.0 / d) / 85e6);
        assert!((s.rate - want).abs() < 1e-6, "R = {} not {want}", s.rate);
        // = 5e6 · (1 − 0.0500313 · 0.0715300) = 4,982,106.3 bit/s.
        assert!((s.rate - 4_982_106.3).abs() < 0.1, "R = {}", s.rate);
        // The next interval is min(d, 10 ms) = 10 ms.
        assert_eq!(next, SimTime::from_millis(20));
        assert_eq!(s.advertised(), want as f32);
    }

    #[test]
    fn rtt_average_rises_at_gain_t_over_d_and_intervals_follow_d() {
        // RTT 400 ms samples (above d = 200 ms): d += (T/d)(0.4 − d) each interval.
        let cfg = Rcp { interval: SimTime::from_millis(50), ..Rcp::default() };
        let mut s = RcpState::new(&cfg, 10_000_000);
        let mut now = SimTime::ZERO;
        let mut d = 0.2f64;
        let mut t = 0.05f64;
        for _ in 0..5 {
            let mut p = datagram(500, 400_000, f32::INFINITY);
            s.admit(0, 0, &mut p);
            now = now + SimTime((t * 1e9).round() as u64);
            let next = s.update(now, 0);
            d += (t / d) * (0.4 - d);
            assert!((s.d - d).abs() < 1e-12);
            t = d.min(0.05);
            assert_eq!(next, now + SimTime((t * 1e9) as u64));
        }
        // With a 500 ms cap T follows d itself.
        let cfg = Rcp { interval: SimTime::from_millis(500), initial_rtt: SimTime::from_millis(30), ..Rcp::default() };
        let mut s = RcpState::new(&cfg, 10_000_000);
        assert_eq!(QueueDiscipline::deadline(&s), Some(SimTime::from_millis(30)));
        assert_eq!(s.update(SimTime::from_millis(30), 0), SimTime::from_millis(60));
    }

    #[test]
    fn rate_is_clipped_to_capacity_and_to_the_floor() {
        // An idle link: y = 0, Q = 0: R grows by (1 + α T/d) per interval up to C.
        let cfg = Rcp { target_utilization: 0.5, ..Rcp::default() };
        let mut s = RcpState::new(&cfg, 1_000_000_000);
        let mut now = SimTime::ZERO;
        let mut r = 5e7f64;
        for _ in 0..200 {
            now = now + SimTime::from_millis(10);
            s.update(now, 0);
            r = (r * (1.0 + 0.05 * 0.4)).min(5e8);
            assert!((s.rate - r).abs() < 1e-3 * r);
        }
        assert_eq!(s.rate, 5e8);
        // A 100-fold overload: the factor is negative, and R stops at the floor
        // (0.01 packets of 1000 B per d = 400 bit/s at d = 0.2 s).
        let mut p = datagram(1000, 0, f32::INFINITY);
        for _ in 0..(100 * 5e8 as u64 / 8 / 100 / 1000) {
            s.admit(0, 0, &mut p);
        }
        now = now + SimTime::from_millis(10);
        s.update(now, 0);
        assert_eq!(s.rate, 0.01 * 8000.0 / 0.2);
    }

    #[test]
    fn only_admitted_rcp_datagrams_are_stamped_and_only_lowered() {
        let cfg = Rcp { limit_packets: Some(2), ..Rcp::default() };
        let mut s = RcpState::new(&cfg, 100_000_000); // R0 = 5 Mbps
        // A field already below R stays.
        let mut p = datagram(1000, 0, 1e6);
        s.admit(0, 0, &mut p);
        assert_eq!(rate_field(&p), 1e6);
        // Not RCP: a CBR datagram (no field), a feedback packet, a TCP segment.
        for flags in [DATAGRAM, DATAGRAM | ACK, 0, ACK] {
            let mut p = Packet { size: 1000, flags, ..Packet::default() };
            s.admit(0, 0, &mut p);
            assert_eq!(p.sack, 0);
        }
        let mut p = Packet { size: 40, flags: DATAGRAM | ACK, sack: 7, ..Packet::default() };
        s.admit(0, 0, &mut p);
        assert_eq!(p.sack, 7);
        // A full buffer drops (tail drop at 2 waiting), and the drop counts in y.
        let mut p = datagram(1000, 0, f32::INFINITY);
        assert_eq!(s.admit(2, 2000, &mut p), Verdict::Drop);
        assert_eq!(p.sack, field_of(f32::INFINITY));
        assert_eq!(s.bytes, 1000 + 4 * 1000 + 40 + 1000);
    }

    #[test]
    fn persistent_queue_is_the_smallest_met() {
        // Q = min over arrivals and the end: 3000 B (instantaneous: 9000 B).
        let mk = |min_queue| RcpState::new(&Rcp { min_queue, ..Rcp::default() }, 100_000_000);
        let (mut a, mut b) = (mk(true), mk(false));
        for q in [6000, 3000, 8000] {
            let mut p = datagram(1000, 0, f32::INFINITY);
            a.admit(q / 1000, q, &mut p);
            b.admit(q / 1000, q, &mut p);
        }
        a.update(SimTime::from_millis(10), 9000);
        b.update(SimTime::from_millis(10), 9000);
        let r = |q: f64| next_rate(5e6, 0.01, 0.2, 1e8, 3000.0 * 8.0 / 0.01, q * 8.0, 0.4, 0.4, 0.0);
        assert!((a.rate - r(3000.0)).abs() < 1e-6);
        assert!((b.rate - r(9000.0)).abs() < 1e-6);
    }

    #[test]
    fn parameters_are_checked() {
        let bad = [
            (Rcp { alpha: 0.0, ..Rcp::default() }, "alpha"),
            (Rcp { beta: -1.0, ..Rcp::default() }, "beta"),
            (Rcp { target_utilization: 1.5, ..Rcp::default() }, "target_utilization"),
            (Rcp { initial_rate: 0.0, ..Rcp::default() }, "initial_rate"),
            (Rcp { interval: SimTime::ZERO, ..Rcp::default() }, "interval_ns"),
        ];
        for (r, key) in bad {
            assert_eq!(r.validate().unwrap_err().0, key);
        }
        assert!(Rcp::default().validate().is_ok());
    }
}
