//! LEDBAT, Low Extra Delay Background Transport: a less-than-best-effort
//! controller that steers the one-way queuing delay it sees towards a target.
//!
//! Sources, section by section (docs/protocols.md#ledbat has the full account):
//! * RFC 6817 (2012) §2.4.2 (the controller and its pseudocode), §2.5 (parameter
//!   values), §3.1 (delay estimation);
//! * draft-shalunov-ledbat-congestion-00 (2009) as implemented for ns-2 by
//!   Valenti, Testa and Rossi (TELECOM ParisTech, the `tcp_ledbat.c` module for
//!   ns-2's TCP-Linux; Rossi et al., ICCCN 2010), which both background-transfer
//!   papers used;
//! * ns-3.44's `TcpLedbat` (`src/internet/model/tcp-ledbat.cc`).
//!
//! The three differ in their arithmetic, selected by `implementation`:
//! * `rfc6817`: per ACK, cwnd += GAIN·off_target·bytes_acked·MSS/cwnd in bytes
//!   (kept fractional), capped at flightsize + ALLOWED_INCREASE·MSS and floored
//!   at MIN_CWND·MSS; base-delay buckets are calendar minutes;
//! * `ns2`: the window is a whole number of packets driven by a counter of
//!   off-target per ACK (one packet more when the counter reaches cwnd, one less
//!   when it falls below zero), updated only when cwnd-limited, off_target capped
//!   at 1; buckets last 60 s from the first sample;
//! * `ns3`: the RFC rule in whole bytes, the sum truncated as ns-3's integer
//!   window does, capped at the bytes outstanding before the ACK (ns-3 has no
//!   ALLOWED_INCREASE), ssthresh from FlightSize/2 on loss; buckets last 60 s
//!   from time 0.
//!
//! Delay samples come from `Ack::one_way_delay`; as in RFC 6817 §3.1.1 a clock
//! offset would cancel, since only differences from the base delay are used.
use super::{Ack, Congestion, CongestionControl, Window, WindowProtocol};
use crate::engine::SimTime;
use crate::transport::state::StateVars;
use crate::settings::readers::{nonnegative, pick, positive, whole};
use crate::settings::{describe, err, Duration, Read, Result, Table};
use serde::{Deserialize, Serialize};

/// One minute: the period of each base-delay minimum (RFC 6817 §2.4.2,
/// `update_base_delay`; draft-00's base history; ns-2's and ns-3's 60 s).
const MINUTE: u64 = 60_000_000_000;

/// Largest `base_history` and `current_filter` accepted (RFC 6817 §2.5: BASE_HISTORY
/// SHOULD NOT be more than 10; the filter is a few samples).
const MAX_LIST: u32 = 64;

/// The named parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Variant {
    /// draft-shalunov-ledbat-congestion-00 as the ns-2 module of Rossi et al. runs it.
    #[serde(rename = "draft00")]
    Draft00,
    /// RFC 6817's pseudocode with its recommended values.
    #[serde(rename = "rfc6817")]
    Rfc6817,
    /// draft00 with a 60 ms target ("LEDBAT-60", background-transfers paper §IV-A).
    #[serde(rename = "ledbat60")]
    Ledbat60,
    /// The FAIRBAT paper's "LEDBAT~a", whose parameters it does not state: by our
    /// choice LEDBAT-60, the same authors' more aggressive LEDBAT in the same setup.
    #[serde(rename = "ledbat_a")]
    LedbatA,
    /// ns-3.44's `TcpLedbat` with its default attributes.
    #[serde(rename = "ns3")]
    Ns3,
}

const VARIANTS: &[(&str, Variant)] = &[
    ("draft00", Variant::Draft00),
    ("rfc6817", Variant::Rfc6817),
    ("ledbat60", Variant::Ledbat60),
    ("ledbat_a", Variant::LedbatA),
    ("ns3", Variant::Ns3),
];

/// Whose arithmetic the window update follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Implementation {
    #[serde(rename = "rfc6817")]
    Rfc6817,
    #[serde(rename = "ns2")]
    Ns2,
    #[serde(rename = "ns3")]
    Ns3,
}

const IMPLEMENTATIONS: &[(&str, Implementation)] =
    &[("rfc6817", Implementation::Rfc6817), ("ns2", Implementation::Ns2), ("ns3", Implementation::Ns3)];

/// LEDBAT's parameters (canonical form: every field explicit, the target in ns).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedbatParams {
    /// The parameter set the others started from.
    pub variant: Variant,
    /// Whose window arithmetic to follow.
    pub implementation: Implementation,
    /// TARGET: the queuing delay LEDBAT aims for.
    #[serde(rename = "target_ns")]
    pub target: SimTime,
    /// GAIN: window growth per RTT at zero queuing delay, in MSS.
    pub gain: f64,
    /// BASE_HISTORY: how many one-minute minima the base delay is the minimum of.
    pub base_history: u32,
    /// CURRENT_FILTER: the current delay is the minimum of this many last samples.
    pub current_filter: u32,
    /// MIN_CWND, in segments.
    pub min_cwnd: u32,
    /// INIT_CWND, in segments (None: the class's `tcp.initial_window`).
    pub init_cwnd: Option<u32>,
    /// ALLOWED_INCREASE, in MSS over the flight size before the ACK, 0 or more
    /// (None: no such cap).
    pub allowed_increase: Option<f64>,
    /// Standard slow start (as ns-3 does it) before the delay-based rule.
    pub slow_start: bool,
}

impl LedbatParams {
    /// The parameters of a variant.
    pub fn of(variant: Variant) -> LedbatParams {
        // draft-00 as run by the ns-2 module (tcp_ledbat.c for ns-2's TCP-Linux):
        // target = 25 ms, alpha1/alpha2 = 1, do_ss = 0, base_histo_len = 6 and
        // noise_filter_len = 3 circular buffers that hold 5 and 2 values, a window
        // never below 1 packet, and ns-2's Agent/TCP windowInit_ of 2 segments.
        let draft = LedbatParams {
            variant,
            implementation: Implementation::Ns2,
            target: SimTime::from_millis(25),
            gain: 1.0,
            base_history: 5,
            current_filter: 2,
            min_cwnd: 1,
            init_cwnd: Some(2),
            allowed_increase: None,
            slow_start: false,
        };
        match variant {
            Variant::Draft00 => draft,
            // Background-transfers paper §IV-A: "a more 'aggressive' 60ms value
            // (labeled as LEDBAT-60)"; FAIRBAT's LEDBAT~a taken to be the same
            // (docs/protocols.md#ledbat gives the reasons and the sensitivity).
            Variant::Ledbat60 | Variant::LedbatA => LedbatParams { target: SimTime::from_millis(60), ..draft },
            // RFC 6817 §2.5: TARGET 100 ms (MUST be at most 100 ms), GAIN 1 (MUST be at
            // most 1), BASE_HISTORY 10, INIT_CWND = MIN_CWND = 2, ALLOWED_INCREASE 1.
            // CURRENT_FILTER: our choice of a MIN over 4 samples (RFC §3.1.2 leaves the
            // filter open; 4 is ns-3's NoiseFilterLen and the Linux module's default).
            // No slow start: the §2.4.2 pseudocode has none.
            Variant::Rfc6817 => LedbatParams {
                variant,
                implementation: Implementation::Rfc6817,
                target: SimTime::from_millis(100),
                gain: 1.0,
                base_history: 10,
                current_filter: 4,
                min_cwnd: 2,
                init_cwnd: Some(2),
                allowed_increase: Some(1.0),
                slow_start: false,
            },
            // ns-3.44 TcpLedbat defaults: TargetDelay 100 ms, Gain 1, BaseHistoryLen 10
            // and NoiseFilterLen 4 (vectors that hold 9 and 3 values), MinCwnd 2,
            // SSParam DO_SLOWSTART, the socket's InitialCwnd. ns-3 has no
            // AllowedIncrease: CongestionAvoidance caps cwnd at m_highTxMark −
            // m_lastAckedSeq + segmentsAcked·MSS, the bytes outstanding before the ACK,
            // so in congestion avoidance the window never grows past the flight.
            Variant::Ns3 => LedbatParams {
                variant,
                implementation: Implementation::Ns3,
                target: SimTime::from_millis(100),
                gain: 1.0,
                base_history: 9,
                current_filter: 3,
                min_cwnd: 2,
                init_cwnd: None,
                allowed_increase: Some(0.0),
                slow_start: true,
            },
        }
    }
}





/// The LEDBAT controller of one connection. Its state (about 120 bytes, and the
/// delay lists) is boxed so that the connection of every other protocol, which
/// holds the same enum of controllers, stays as small as before.
#[derive(Clone, Debug)]
pub struct Ledbat(Box<State>);

/// LEDBAT's state: the parameters in the forms the per-ACK rule uses, both delay
/// lists in one allocation.
#[derive(Clone, Debug)]
struct State {
    /// GAIN, and GAIN / TARGET (per ns): off_target = gain − k · queuing_delay.
    gain: f64,
    k: f64,
    /// ALLOWED_INCREASE in MSS (negative: no cap).
    allowed_increase: f64,
    /// MIN_CWND and INIT_CWND in segments (INIT_CWND 0: the machinery's).
    min_cwnd: u32,
    init_cwnd: u32,
    implementation: Implementation,
    slow_start: bool,
    /// Slow start is allowed (ns-3's LEDBAT_CAN_SS).
    can_ss: bool,
    /// A first sample has been recorded.
    have_base: bool,
    /// A reduction was made and its window of data is not acknowledged yet.
    reduced: bool,
    /// CURRENT_FILTER, and where the current-delay ring stands: `cur_len` valid
    /// samples, the next written at `cur_pos`; the base ring's newest bucket.
    filter: u8,
    cur_len: u8,
    cur_pos: u8,
    base_tail: u8,
    /// The last CURRENT_FILTER delays (ns), then BASE_HISTORY one-minute minima
    /// (ns; u64::MAX marks a minute without samples, the RFC's "+INFINITY").
    delays: Box<[u64]>,
    /// The minimum of the base buckets (kept as samples come, recomputed at a
    /// rollover).
    base_min: u64,
    /// A sample at or after this time (ns) starts a new minute.
    next_rollover: u64,
    /// `rfc6817`: the window as a float; `ns2`: the counter of off-target per ACK
    /// (the ns-2 module's snd_cwnd_cnt / target).
    acc: f64,
    /// The window last written (if the machinery changed it since, the float
    /// window or the packet count restarts from it), and, for `ns2`, in packets.
    set_cwnd: u64,
    pkts: u64,
    /// snd_nxt at the last ACK, and at the last reduction: further losses before
    /// snd_una passes it are the same congestion event (RFC 6817 §2.4.2: halve
    /// "at most once per RTT").
    snd_nxt: u64,
    reduce_until: u64,
}

impl WindowProtocol for Ledbat {
    const NAME: &'static str = "ledbat";
    type Params = LedbatParams;

    fn read(mut t: Table) -> Result<LedbatParams> {
        let variant = pick(&mut t, "variant", VARIANTS)?.unwrap_or(Variant::Draft00);
        let mut p = LedbatParams::of(variant);
        if let Some(i) = pick(&mut t, "implementation", IMPLEMENTATIONS)? {
            p.implementation = i;
        }
        if let Some(v) = t.raw("target") {
            let path = t.key_path("target");
            let Duration(d) = Duration::read(v, &path)?;
            if d == SimTime::ZERO {
                return err(path, format!("expected a positive duration, got {}", describe(v)));
            }
            p.target = d;
        }
        if let Some(g) = positive(&mut t, "gain", 100.0)? {
            p.gain = g;
        }
        if let Some(n) = whole(&mut t, "base_history", 1, MAX_LIST)? {
            p.base_history = n;
        }
        if let Some(n) = whole(&mut t, "current_filter", 1, MAX_LIST)? {
            p.current_filter = n;
        }
        if let Some(n) = whole(&mut t, "min_cwnd", 1, 100_000)? {
            p.min_cwnd = n;
        }
        if let Some(n) = whole(&mut t, "init_cwnd", 1, 100_000)? {
            p.init_cwnd = Some(n);
        }
        if t.raw("allowed_increase").and_then(|v| v.as_str()) == Some("none") {
            p.allowed_increase = None;
        } else if let Some(a) = nonnegative(&mut t, "allowed_increase", 100_000.0).map_err(|mut e| {
            e.message = e.message.replacen("expected a", "expected \"none\" or a", 1);
            e
        })? {
            p.allowed_increase = Some(a);
        }
        if let Some(b) = t.get::<bool>("slow_start")? {
            p.slow_start = b;
        }
        t.finish("the ledbat controller")?;
        Ok(p)
    }

    fn check(p: &LedbatParams) -> std::result::Result<(), (&'static str, String)> {
        if p.target == SimTime::ZERO || p.target > SimTime::LONGEST {
            return Err(("target_ns", format!("expected a positive time of at most 1e9 s, got {} ns", p.target.0)));
        }
        if !(p.gain > 0.0 && p.gain <= 100.0) {
            return Err(("gain", format!("expected a positive number at most 100, got {}", p.gain)));
        }
        if !(1..=MAX_LIST).contains(&p.base_history) {
            return Err(("base_history", format!("expected a whole number from 1 to {MAX_LIST}, got {}", p.base_history)));
        }
        if !(1..=MAX_LIST).contains(&p.current_filter) {
            return Err(("current_filter", format!("expected a whole number from 1 to {MAX_LIST}, got {}", p.current_filter)));
        }
        if !(1..=100_000).contains(&p.min_cwnd) {
            return Err(("min_cwnd", format!("expected a whole number from 1 to 100000, got {}", p.min_cwnd)));
        }
        if p.init_cwnd.is_some_and(|n| !(1..=100_000).contains(&n)) {
            return Err(("init_cwnd", "expected a whole number from 1 to 100000, or null (tcp.initial_window)".into()));
        }
        if p.allowed_increase.is_some_and(|a| !(0.0..=100_000.0).contains(&a)) {
            return Err(("allowed_increase", "expected a number from 0 to 100000, or null (no cap)".into()));
        }
        Ok(())
    }

    fn new(p: &LedbatParams) -> Self {
        Ledbat(Box::new(State::new(p)))
    }
}

impl Ledbat {
    /// The base delay and the current delay (ns), for tests and diagnostics.
    pub fn delays(&self) -> (u64, u64) {
        (self.0.base_min, self.0.current_delay())
    }
}

impl State {
    fn new(p: &LedbatParams) -> Self {
        let nb = p.base_history.clamp(1, MAX_LIST) as usize;
        let nc = p.current_filter.clamp(1, MAX_LIST) as usize;
        let mut delays = vec![u64::MAX; nc + nb].into_boxed_slice();
        delays[..nc].fill(0);
        State {
            gain: p.gain,
            k: p.gain / p.target.0.max(1) as f64,
            allowed_increase: p.allowed_increase.unwrap_or(-1.0),
            min_cwnd: p.min_cwnd.max(1),
            init_cwnd: p.init_cwnd.unwrap_or(0),
            implementation: p.implementation,
            slow_start: p.slow_start,
            can_ss: p.slow_start,
            have_base: false,
            reduced: false,
            filter: nc as u8,
            cur_len: 0,
            cur_pos: 0,
            base_tail: 0,
            delays,
            base_min: u64::MAX,
            // ns-3 starts its first minute at time 0 (a rollover is due more than
            // 60 s after it); ns-2 at the first sample; the RFC at the first sample's
            // calendar minute.
            next_rollover: match p.implementation {
                Implementation::Ns3 => MINUTE + 1,
                _ => 0,
            },
            acc: 0.0,
            set_cwnd: u64::MAX,
            pkts: 0,
            snd_nxt: 0,
            reduce_until: 0,
        }
    }

    /// Record one delay sample (RFC 6817 §2.4.2: `update_base_delay`, then
    /// `update_current_delay`).
    #[inline]
    fn sample(&mut self, now: SimTime, d: u64) {
        let nc = self.filter as usize;
        if now.0 >= self.next_rollover || !self.have_base {
            self.roll(now.0, d);
        } else {
            // Same minute: base_delays.tail = MIN(base_delays.tail, delay).
            let tail = &mut self.delays[nc + self.base_tail as usize];
            if d < *tail {
                *tail = d;
                self.base_min = self.base_min.min(d);
            }
        }
        // current_delays: drop the oldest, append this one.
        self.delays[self.cur_pos as usize] = d;
        self.cur_pos = if self.cur_pos as usize + 1 == nc { 0 } else { self.cur_pos + 1 };
        if (self.cur_len as usize) < nc {
            self.cur_len += 1;
        }
    }

    /// A new minute begins with sample `d` at `now` (ns): once a minute.
    #[cold]
    fn roll(&mut self, now: u64, d: u64) {
        let nc = self.filter as usize;
        let n = self.delays.len() - nc;
        let next = |i: u8| if i as usize + 1 == n { 0 } else { i + 1 };
        match self.implementation {
            Implementation::Rfc6817 => {
                // RFC 6817 §2.4.2: a new bucket when round_to_minute(now) differs from
                // round_to_minute(last_rollover). Minutes that passed without a sample
                // get empty (+INFINITY) buckets, so the base is always the minimum over
                // the last BASE_HISTORY calendar minutes (the pseudocode rotates once,
                // which is the same whenever an ACK comes every minute).
                let minute = now / MINUTE;
                let steps = if self.have_base { minute + 1 - self.next_rollover / MINUTE } else { 1 };
                for _ in 0..steps.min(n as u64) {
                    self.base_tail = next(self.base_tail);
                    self.delays[nc + self.base_tail as usize] = u64::MAX;
                }
                self.next_rollover = (minute + 1) * MINUTE;
            }
            Implementation::Ns2 | Implementation::Ns3 => {
                // ns-2 and ns-3: the first sample fills the first bucket without moving
                // the rollover time (ns-2 set it at the first sample, ns-3 at time 0);
                // later, a sample more than 60 s after the last rollover opens a bucket.
                if self.have_base {
                    self.base_tail = next(self.base_tail);
                    self.next_rollover = now + MINUTE + 1;
                } else if self.implementation == Implementation::Ns2 {
                    self.next_rollover = now + MINUTE + 1;
                }
            }
        }
        self.have_base = true;
        self.delays[nc + self.base_tail as usize] = d;
        self.base_min = self.delays[nc..].iter().copied().min().unwrap_or(u64::MAX);
    }

    /// FILTER(current_delays): the minimum of the last CURRENT_FILTER samples.
    #[inline]
    fn current_delay(&self) -> u64 {
        let mut m = u64::MAX;
        for &x in &self.delays[..self.cur_len as usize] {
            m = m.min(x);
        }
        m
    }

    /// off_target = GAIN · (TARGET − queuing_delay) / TARGET, with queuing_delay =
    /// FILTER(current_delays) − MIN(base_delays) (RFC 6817 §2.4.2). None before any
    /// sample.
    #[inline]
    fn off_target(&self) -> Option<f64> {
        if self.cur_len == 0 {
            return None;
        }
        let queuing = self.current_delay() as f64 - self.base_min as f64;
        Some(self.gain - self.k * queuing)
    }

    /// ssthresh after a loss or a first timeout.
    fn reduced_window(&self, w: &Window, flight: u64) -> u64 {
        let floor = self.min_cwnd.max(2) as u64 * w.mss;
        match self.implementation {
            // RFC 6817 §2.4.2 "on data loss": cwnd = min(cwnd, max(cwnd/2, MIN_CWND·MSS)).
            Implementation::Rfc6817 => (w.cwnd / 2).max(self.min_cwnd as u64 * w.mss).min(w.cwnd),
            // The ns-2 module keeps Linux's tcp_reno_ssthresh: max(cwnd/2, 2) packets.
            Implementation::Ns2 => ((w.cwnd / w.mss) / 2 * w.mss).max(floor),
            // ns-3's TcpLedbat keeps TcpNewReno::GetSsThresh: max(2·SMSS, BytesInFlight/2).
            Implementation::Ns3 => (flight / 2).max(floor),
        }
    }
}

impl CongestionControl for Ledbat {
    fn on_start(&mut self, w: &mut Window, now: SimTime) {
        self.0.on_start(w, now)
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        self.0.on_ack(w, ack)
    }

    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        self.0.on_congestion(w, event, flight)
    }

    /// RFC 6817 §2.4.2's quantities (absent before the first delay sample): the
    /// base delay MIN(base_delays), the current delay FILTER(current_delays), the
    /// queuing delay (their difference) and off_target, which scales the window's
    /// change per ACK.
    fn observe(&self, _w: &Window, _now: SimTime, vars: &mut StateVars) {
        let s = &self.0;
        let Some(off) = s.off_target() else { return };
        let (base, current) = (s.base_min as f64, s.current_delay() as f64);
        vars.put("ledbat.base_delay_s", base * 1e-9);
        vars.put("ledbat.current_delay_s", current * 1e-9);
        vars.put("ledbat.queuing_delay_s", (current - base) * 1e-9);
        vars.put("ledbat.off_target", off / s.gain);
    }
}

impl State {
    /// ns-3's slow start (with `slow_start`): true when it set the window for this ACK.
    #[inline]
    fn slow_start_step(&mut self, w: &mut Window, ack: &Ack) -> bool {
        let mss = w.mss;
        if self.slow_start {
            // ns-3 TcpLedbat::IncreaseWindow: slow start again after a timeout (cwnd of
            // one segment); one segment per ACK while cwnd <= ssthresh (RFC 5681 eq. 2).
            if w.cwnd <= mss {
                self.can_ss = true;
            }
            if self.can_ss && w.cwnd <= w.ssthresh {
                w.cwnd += ack.bytes_acked.min(mss);
                self.set_cwnd = w.cwnd;
                return true;
            }
            self.can_ss = false;
        }
        false
    }

    /// RFC 6817's window rule, in floating point. Returns true (the window was set).
    #[inline]
    fn grow_rfc6817(&mut self, w: &mut Window, ack: &Ack, off: f64) -> bool {
        let mss = w.mss;
        if w.cwnd != self.set_cwnd {
            self.acc = w.cwnd as f64;
        }
        // cwnd += GAIN · off_target · bytes_newly_acked · MSS / cwnd (§2.4.2).
        let mut c = self.acc + off * (ack.bytes_acked * mss) as f64 / self.acc;
        // cwnd = min(cwnd, flightsize + ALLOWED_INCREASE · MSS). (Tests rather
        // than min/max: rarely taken, they keep the per-ACK chain short.)
        if self.allowed_increase >= 0.0 {
            let cap = ack.flight as f64 + self.allowed_increase * mss as f64;
            if c > cap {
                c = cap;
            }
        }
        // cwnd = max(cwnd, MIN_CWND · MSS).
        let floor = (self.min_cwnd as u64 * mss) as f64;
        if c < floor {
            c = floor;
        }
        self.acc = c;
        w.cwnd = c as u64;
        true
    }

    /// ns-3's window rule, in whole bytes. Returns true (the window was set).
    #[inline]
    fn grow_ns3(&mut self, w: &mut Window, ack: &Ack, off: f64) -> bool {
        let mss = w.mss;
        // TcpLedbat::CongestionAvoidance: the increment in bytes is added to the
        // integer window and the sum truncated; then the cap and the floor. The
        // cap is ns-3's m_highTxMark − m_lastAckedSeq (after this ACK) plus
        // segmentsAcked whole segments: the flight before the ACK when it
        // acknowledges whole segments; ALLOWED_INCREASE (0 in the variant) on top.
        let inc = off * (ack.bytes_acked * mss) as f64 / w.cwnd as f64;
        let mut c = (w.cwnd as f64 + inc).max(0.0) as u64;
        if self.allowed_increase >= 0.0 {
            let before = ack.flight - ack.bytes_acked + ack.bytes_acked / mss * mss;
            c = c.min(before + (self.allowed_increase * mss as f64) as u64);
        }
        w.cwnd = c.max(self.min_cwnd as u64 * mss);
        if w.cwnd <= w.ssthresh {
            w.ssthresh = w.cwnd - 1;
        }
        true
    }

    /// The ns-2 module's window rule, in packets: false when the window was not
    /// cwnd-limited and nothing changed.
    #[inline]
    fn grow_ns2(&mut self, w: &mut Window, ack: &Ack, off: f64) -> bool {
        let mss = w.mss;
        // tcp_ledbat_cong_avoid: nothing unless cwnd-limited.
        if !ack.cwnd_limited {
            return false;
        }
        if w.cwnd != self.set_cwnd {
            self.pkts = (w.cwnd / mss).max(1);
        }
        // draft-00: cwnd += GAIN · off_target / cwnd per ACK, off_target at most
        // TARGET ("do not ramp more than TCP"); counted in a per-ACK counter.
        self.acc += off.min(1.0);
        if self.acc >= 0.0 {
            if self.acc >= self.pkts as f64 {
                self.pkts += 1;
                self.acc = 0.0;
            }
        } else if self.pkts > self.min_cwnd as u64 {
            // One packet less, and the counter just under the next increase.
            self.pkts -= 1;
            self.acc = (self.pkts - 1) as f64;
        } else {
            self.acc = 0.0;
        }
        w.cwnd = self.pkts * mss;
        if self.allowed_increase >= 0.0 {
            let cap = ack.flight + (self.allowed_increase * mss as f64) as u64;
            if w.cwnd > cap {
                self.pkts = (cap / mss).max(self.min_cwnd as u64);
                w.cwnd = self.pkts * mss;
            }
        }
        true
    }

    fn on_start(&mut self, w: &mut Window, _now: SimTime) {
        // RFC 6817 §2.5: INIT_CWND SHOULD be 2; the ns-2 module starts from the
        // agent's initial window; ns-3 from the socket's InitialCwnd.
        if self.init_cwnd > 0 {
            w.cwnd = self.init_cwnd as u64 * w.mss;
        }
        // Without slow start no threshold is ever used: cwnd >= ssthresh says so.
        if !self.slow_start {
            w.ssthresh = w.cwnd;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        self.snd_nxt = ack.snd_nxt;
        if self.reduced && ack.snd_una >= self.reduce_until {
            self.reduced = false;
        }
        // Every acknowledgement carries a delay sample (RFC 6817 §2.4.2 "for each
        // delay in acknowledgement"), duplicates and ACKs during recovery included.
        if let Some(d) = ack.one_way_delay {
            self.sample(ack.now, d.0);
        }
        if ack.bytes_acked == 0 || ack.in_recovery {
            // Duplicates grow nothing; in recovery the machinery owns the window.
            return;
        }
        if self.slow_start_step(w, ack) {
            return;
        }
        let Some(off) = self.off_target() else { return };
        let grown = match self.implementation {
            Implementation::Rfc6817 => self.grow_rfc6817(w, ack, off),
            Implementation::Ns3 => self.grow_ns3(w, ack, off),
            Implementation::Ns2 => self.grow_ns2(w, ack, off),
        };
        if grown {
            self.set_cwnd = w.cwnd;
        }
    }

    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        // A congestion event restarts the ns-2 counter, as Linux clears snd_cwnd_cnt.
        if self.implementation == Implementation::Ns2 {
            self.acc = 0.0;
        }
        match event {
            // RFC 5681 §3.1: ssthresh is not reduced again by a repeated timeout.
            Congestion::Timeout { repeated: true } => w.ssthresh,
            // RFC 6817 §2.4.2: on a timeout the machinery sets cwnd to 1 MSS.
            Congestion::Timeout { repeated: false } => self.reduced_window(w, flight),
            Congestion::Loss | Congestion::Ecn => {
                // "at most once per RTT" (RFC 6817 §2.4.2): a loss or mark within the
                // window of data outstanding at the last reduction changes nothing.
                if self.reduced {
                    return w.cwnd;
                }
                self.reduced = true;
                self.reduce_until = self.snd_nxt;
                self.reduced_window(w, flight)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    fn ack(now_ms: u64, owd_ms: f64, bytes: u64) -> Ack {
        Ack {
            now: SimTime(now_ms * MS),
            bytes_acked: bytes,
            bytes_delivered: bytes,
            one_way_delay: Some(SimTime((owd_ms * MS as f64) as u64)),
            cwnd_limited: true,
            flight: 1 << 40,
            ..Ack::default()
        }
    }

    fn params(v: serde_json::Value) -> Result<LedbatParams> {
        Ledbat::read(Table::new(&v, "traffic[0].cc")?)
    }

    fn ctl(v: serde_json::Value) -> Ledbat {
        Ledbat::new(&params(v).unwrap())
    }

    #[test]
    fn off_target_below_at_and_above_the_target() {
        // RFC rule, TARGET 100 ms, GAIN 1, base 20 ms: one sample sets the base,
        // then queuing delays of 50, 100 and 150 ms give off_target 0.5, 0, -0.5 and
        // cwnd += off · bytes · MSS / cwnd = ±0.5 · 1000 · 1000 / 20000 = ±25 bytes.
        let mut c = ctl(json!({"variant": "rfc6817", "current_filter": 1}));
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 20 * MSS, mss: MSS };
        let mut a = ack(0, 20.0, 0);
        c.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 20_000); // a duplicate only samples
        for (owd, want) in [(70.0, 20_025), (120.0, 20_025), (170.0, 20_000)] {
            a = ack(1, owd, MSS);
            c.on_ack(&mut w, &a);
            assert!((c.0.off_target().unwrap() - (100.0 - (owd - 20.0)) / 100.0).abs() < 1e-12);
            // 20_025 + (−0.5 · 10^6 / 20_025 = −24.97) = 20_000.03: the fraction is kept.
            assert_eq!(w.cwnd, want, "owd {owd}");
        }
        assert!((c.0.acc - 20_000.031).abs() < 1e-3, "{}", c.0.acc);
        // GAIN scales it: 0.25 · 0.5 · 10^6 / 20_000 = 6.25 bytes.
        let mut c = ctl(json!({"variant": "rfc6817", "current_filter": 1, "gain": 0.25}));
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 20.0, 0));
        c.on_ack(&mut w, &ack(1, 70.0, MSS));
        assert!((c.0.acc - 20_006.25).abs() < 1e-9);
    }

    #[test]
    fn allowed_increase_caps_at_the_flight_and_min_cwnd_floors() {
        let mut c = ctl(json!({"variant": "rfc6817", "current_filter": 1}));
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 20.0, 0));
        // Application-limited: 5 segments out, so cwnd <= 5 + ALLOWED_INCREASE = 6 MSS.
        let mut a = ack(1, 20.0, MSS);
        a.flight = 5 * MSS;
        c.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 6 * MSS);
        // Far above target, off_target = (100 − 900)/100 = −8: the window falls to
        // the floor MIN_CWND = 2 MSS and stays there.
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(2, 920.0, MSS));
        }
        assert_eq!(w.cwnd, 2 * MSS);
        // draft00 floors at one packet (the ns-2 module's snd_cwnd > 1 test).
        let mut c = ctl(json!({}));
        let mut w = Window { cwnd: 3 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 20.0, 0));
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(1, 200.0, MSS));
        }
        assert_eq!(w.cwnd, MSS);
        // ns3 caps at ns-3's m_highTxMark − m_lastAckedSeq + segmentsAcked·MSS: the 20
        // segments out before an ACK of one, so cwnd = 20 MSS stays there however far
        // below target the delay is; with ALLOWED_INCREASE 1 it would grow.
        for (allowed, want) in [(0, 20 * MSS), (1, 20 * MSS + 50)] {
            let mut c = ctl(json!({"variant": "ns3", "slow_start": false, "current_filter": 1,
                                   "allowed_increase": allowed}));
            let mut w = Window { cwnd: 20 * MSS, ssthresh: 0, mss: MSS };
            c.on_ack(&mut w, &ack(0, 20.0, 0));
            let mut a = ack(1, 20.0, MSS);
            a.flight = 20 * MSS;
            c.on_ack(&mut w, &a);
            // off_target 1: + 1000 · 1000 / 20_000 = 50 bytes, then the cap.
            assert_eq!(w.cwnd, want, "allowed_increase {allowed}");
        }
        // ns3 floors at MinCwnd = 2 segments.
        let mut c = ctl(json!({"variant": "ns3", "slow_start": false}));
        let mut w = Window { cwnd: 3 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 20.0, 0));
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(1, 500.0, MSS));
        }
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn the_ns2_counter_moves_whole_packets() {
        // draft00: target 25 ms; queuing delay 0 gives off_target 1 per ACK, capped
        // at 1: with cwnd = 4 packets the counter reaches 4 on the 4th ACK, one more
        // packet, counter 0. Then 5 ACKs for the next.
        let mut c = ctl(json!({"current_filter": 1}));
        let mut w = Window { cwnd: 4 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 30.0, 0));
        let cw: Vec<u64> = (0..9)
            .map(|_| {
                c.on_ack(&mut w, &ack(1, 30.0, MSS));
                w.cwnd / MSS
            })
            .collect();
        assert_eq!(cw, [4, 4, 4, 5, 5, 5, 5, 5, 6]);
        // Queuing delay 37.5 ms: off_target = −0.5; the counter (0) goes negative at
        // once: one packet less (5), counter = 5 − 1 = 4 (just under the next
        // increase), then −0.5 per ACK: the next decrease 9 ACKs later.
        let mut dec = Vec::new();
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(2, 67.5, MSS));
            dec.push(w.cwnd / MSS);
        }
        assert_eq!(dec, [5, 5, 5, 5, 5, 5, 5, 5, 5, 4]);
        // Not cwnd-limited: no change at all.
        let mut a = ack(3, 30.0, MSS);
        a.cwnd_limited = false;
        let before = (w.cwnd, c.0.acc);
        c.on_ack(&mut w, &a);
        assert_eq!((w.cwnd, c.0.acc), before);
        // A window set by the machinery (after a loss) is taken up in packets.
        w.cwnd = 7 * MSS + 300;
        c.on_ack(&mut w, &ack(4, 30.0, MSS));
        assert_eq!(w.cwnd, 7 * MSS);
    }

    #[test]
    fn loss_halves_once_per_window_of_data() {
        let mut c = ctl(json!({"variant": "rfc6817"}));
        let w = Window { cwnd: 40 * MSS, ssthresh: 0, mss: MSS };
        let mut a = ack(0, 20.0, MSS);
        a.snd_una = 10_000;
        a.snd_nxt = 50_000;
        c.on_ack(&mut w.clone(), &a);
        // max(cwnd/2, MIN_CWND · MSS) = 20 MSS.
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 40 * MSS), 20 * MSS);
        // A second signal before snd_una passes 50_000 (the window of data out at the
        // first): no second reduction, for a loss or a mark.
        a.snd_una = 49_000;
        a.snd_nxt = 60_000;
        c.on_ack(&mut w.clone(), &a);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 40 * MSS), 40 * MSS);
        assert_eq!(c.on_congestion(&w, Congestion::Ecn, 40 * MSS), 40 * MSS);
        // Once it has: halve again.
        a.snd_una = 50_000;
        c.on_ack(&mut w.clone(), &a);
        assert_eq!(c.on_congestion(&w, Congestion::Ecn, 40 * MSS), 20 * MSS);
        // The floor: MIN_CWND = 2 MSS; never above cwnd.
        let small = Window { cwnd: 3 * MSS, ssthresh: 0, mss: MSS };
        a.snd_una = 70_000;
        c.on_ack(&mut w.clone(), &a);
        assert_eq!(c.on_congestion(&small, Congestion::Loss, 3 * MSS), 2 * MSS);
        // Timeouts: halved once, held when repeated (RFC 5681 §3.1).
        let held = Window { ssthresh: 7 * MSS, ..w };
        assert_eq!(c.on_congestion(&held, Congestion::Timeout { repeated: true }, 0), 7 * MSS);
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: false }, 0), 20 * MSS);
        // ns2: Linux's max(cwnd/2, 2) in whole packets; ns3: max(flight/2, 2 SMSS).
        let mut n2 = ctl(json!({}));
        assert_eq!(n2.on_congestion(&Window { cwnd: 7 * MSS, ..w }, Congestion::Loss, 0), 3 * MSS);
        let mut n2 = ctl(json!({}));
        assert_eq!(n2.on_congestion(&Window { cwnd: 3 * MSS, ..w }, Congestion::Loss, 0), 2 * MSS);
        let mut n3 = ctl(json!({"variant": "ns3"}));
        assert_eq!(n3.on_congestion(&w, Congestion::Loss, 30 * MSS), 15 * MSS);
    }

    /// A controller that has seen one sample of `owd` ms at each of `times` (s).
    fn feed(c: &mut Ledbat, samples: &[(f64, f64)]) {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 0, mss: MSS };
        for &(t, owd) in samples {
            let mut a = ack(0, owd, 0);
            a.now = SimTime::from_secs_f64(t);
            c.on_ack(&mut w, &a);
        }
    }

    #[test]
    fn base_history_keeps_the_minimum_of_the_last_minutes() {
        // RFC rule, BASE_HISTORY 3: calendar minutes. Minute 0 holds 10 ms, minute 1
        // 30 ms, minute 2 20 ms: base 10 ms. In minute 3 the 10 ms minute is gone.
        let mut c = ctl(json!({"variant": "rfc6817", "base_history": 3}));
        feed(&mut c, &[(1.0, 15.0), (30.0, 10.0), (59.9, 12.0), (60.0, 30.0), (150.0, 20.0)]);
        assert_eq!(c.delays().0, 10 * MS);
        feed(&mut c, &[(180.0, 40.0)]);
        assert_eq!(c.delays().0, 20 * MS);
        // Minutes without a sample are empty: after 3 silent minutes only the new
        // sample is left.
        feed(&mut c, &[(420.5, 50.0)]);
        assert_eq!(c.delays().0, 50 * MS);
        // ns2 rule: the first minute starts at the first sample (t = 30 s) and a
        // new one with the first sample more than 60 s after the last rollover.
        let mut c = ctl(json!({"base_history": 2}));
        feed(&mut c, &[(30.0, 10.0), (90.0, 30.0)]);
        assert_eq!(c.delays().0, 10 * MS); // 90 − 30 = 60 s: same minute
        feed(&mut c, &[(90.5, 30.0), (151.0, 25.0)]);
        assert_eq!(c.delays().0, 25 * MS); // buckets [30, 25]: the 10 ms one left
        // ns3 rule: the first minute ends at 60 s of simulated time, not 60 s after
        // the first sample.
        let mut c = ctl(json!({"variant": "ns3", "base_history": 1}));
        feed(&mut c, &[(30.0, 10.0), (60.5, 30.0)]);
        assert_eq!(c.delays().0, 30 * MS);
    }

    #[test]
    fn the_filter_is_the_minimum_of_the_last_samples() {
        let mut c = ctl(json!({"variant": "rfc6817", "current_filter": 3}));
        let seq = [(0.0, 50.0), (0.1, 40.0), (0.2, 60.0), (0.3, 70.0), (0.4, 80.0), (0.5, 45.0)];
        let want = [50, 40, 40, 40, 60, 45];
        for (s, w) in seq.iter().zip(want) {
            feed(&mut c, &[*s]);
            assert_eq!(c.delays().1, w * MS, "after {s:?}");
        }
        // The base is the minimum of everything this minute.
        assert_eq!(c.delays().0, 40 * MS);
        // Queuing delay = 45 − 40 = 5 ms: off_target = (100 − 5)/100.
        assert!((c.0.off_target().unwrap() - 0.95).abs() < 1e-12);
    }

    #[test]
    fn variants_set_defaults_and_keys_override_them() {
        let d = params(json!({})).unwrap();
        assert_eq!(d, LedbatParams::of(Variant::Draft00));
        assert_eq!((d.target, d.base_history, d.current_filter, d.min_cwnd), (SimTime::from_millis(25), 5, 2, 1));
        let p = params(json!({"variant": "ledbat60"})).unwrap();
        assert_eq!((p.target, p.implementation), (SimTime::from_millis(60), Implementation::Ns2));
        let p = params(json!({"variant": "ledbat_a"})).unwrap();
        assert_eq!(p, LedbatParams { variant: Variant::LedbatA, ..LedbatParams::of(Variant::Ledbat60) });
        let p = params(json!({"variant": "rfc6817", "target": "50ms", "gain": 0.5, "allowed_increase": "none",
                              "slow_start": true, "init_cwnd": 4, "implementation": "ns3"}))
        .unwrap();
        assert_eq!(p.variant, Variant::Rfc6817);
        assert_eq!((p.target, p.gain, p.allowed_increase, p.slow_start), (SimTime::from_millis(50), 0.5, None, true));
        assert_eq!((p.init_cwnd, p.implementation, p.base_history), (Some(4), Implementation::Ns3, 10));
        // The canonical form round-trips.
        let back: LedbatParams = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        assert_eq!(serde_json::to_value(&d).unwrap()["target_ns"], json!(25_000_000));
        // on_start: INIT_CWND, and no threshold without slow start.
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        Ledbat::new(&d).on_start(&mut w, SimTime::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (2 * MSS, 2 * MSS));
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        Ledbat::new(&LedbatParams::of(Variant::Ns3)).on_start(&mut w, SimTime::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, u64::MAX));
    }

    #[test]
    fn bad_keys_and_values_are_refused_by_name() {
        let e = |v| params(v).unwrap_err().to_string();
        assert_eq!(e(json!({"traget": "25ms"})), "traffic[0].cc.traget: unknown key (did you mean `target`?); the ledbat controller takes: variant, implementation, target, gain, base_history, current_filter, min_cwnd, init_cwnd, allowed_increase, slow_start");
        assert_eq!(e(json!({"target": "0ms"})), "traffic[0].cc.target: expected a positive duration, got \"0ms\"");
        assert_eq!(e(json!({"target": 25})), "traffic[0].cc.target: expected a duration like \"25ms\", got 25 (write the unit)");
        assert_eq!(e(json!({"variant": "rfc"})), "traffic[0].cc.variant: expected one of \"draft00\", \"rfc6817\", \"ledbat60\", \"ledbat_a\", \"ns3\", got \"rfc\"");
        assert_eq!(e(json!({"implementation": 2})), "traffic[0].cc.implementation: expected one of \"rfc6817\", \"ns2\", \"ns3\", got 2");
        assert_eq!(e(json!({"gain": 0})), "traffic[0].cc.gain: expected a positive number at most 100, got 0");
        assert_eq!(e(json!({"gain": "nan"})), "traffic[0].cc.gain: expected a finite number, got nan");
        assert_eq!(e(json!({"base_history": 0})), "traffic[0].cc.base_history: expected a whole number from 1 to 64, got 0");
        assert_eq!(e(json!({"current_filter": 2.5})), "traffic[0].cc.current_filter: expected a whole number from 1 to 64, got 2.5");
        assert_eq!(e(json!({"min_cwnd": -1})), "traffic[0].cc.min_cwnd: expected a whole number from 1 to 100000, got -1");
        assert_eq!(e(json!({"init_cwnd": 0})), "traffic[0].cc.init_cwnd: expected a whole number from 1 to 100000, got 0");
        assert_eq!(e(json!({"allowed_increase": -1})), "traffic[0].cc.allowed_increase: expected \"none\" or a number from 0 to 100000, got -1");
        assert_eq!(e(json!({"allowed_increase": "all"})), "traffic[0].cc.allowed_increase: expected \"none\" or a number, got \"all\"");
        assert_eq!(e(json!({"slow_start": "yes"})), "traffic[0].cc.slow_start: expected true or false, got \"yes\"");
    }

    #[test]
    fn ns3_slow_starts_until_the_threshold_then_follows_delay() {
        let mut c = ctl(json!({"variant": "ns3"}));
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_start(&mut w, SimTime::ZERO);
        // One segment per ACK whatever the delay.
        c.on_ack(&mut w, &ack(0, 20.0, MSS));
        c.on_ack(&mut w, &ack(1, 500.0, MSS));
        assert_eq!(w.cwnd, 12 * MSS);
        // After a loss (cwnd = ssthresh = 6 on leaving recovery) one more slow-start
        // step, then the delay rule, which lowers ssthresh under cwnd.
        w.ssthresh = c.on_congestion(&w, Congestion::Loss, 12 * MSS);
        w.cwnd = w.ssthresh;
        c.on_ack(&mut w, &ack(2, 20.0, MSS));
        assert_eq!(w.cwnd, 7 * MSS);
        // Queuing delay 0 (current 20 ms = base): off = 1, +MSS²/cwnd = 142.857 bytes,
        // truncated: 7142.
        c.on_ack(&mut w, &ack(3, 20.0, MSS));
        assert_eq!(w.cwnd, 7142);
        // A timeout (cwnd = 1 MSS) allows slow start again.
        w.ssthresh = c.on_congestion(&w, Congestion::Timeout { repeated: false }, 7 * MSS);
        w.cwnd = MSS;
        c.on_ack(&mut w, &ack(4, 20.0, MSS));
        assert_eq!((w.cwnd, w.ssthresh), (2 * MSS, 3500));
    }

    #[test]
    fn recovery_and_duplicates_only_sample() {
        let mut c = ctl(json!({"variant": "rfc6817", "current_filter": 1}));
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 0, mss: MSS };
        c.on_ack(&mut w, &ack(0, 20.0, MSS));
        let mut a = ack(1, 10.0, MSS);
        a.in_recovery = true;
        c.on_ack(&mut w, &a);
        assert_eq!(c.delays(), (10 * MS, 10 * MS));
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(2, 10.0, 0));
        assert_eq!(w.cwnd, before);
    }
}
