//! Pareto on/off source: ns-2's `Application/Traffic/Pareto` (tools/pareto.cc,
//! class `POO_Traffic`), as a rate controller whose deadlines switch the rate
//! between `rate` (on) and 0 (off).
//!
//! ns-2's rules, followed exactly. With the packet interval at the burst rate
//! iv = 8·size/rate and the mean burst in packets b = on/iv:
//! * a burst has B = max(1, ⌊X + ½⌋) packets, X Pareto with shape k and scale
//!   b·(k−1)/k (mean b), sent one iv apart;
//! * before each burst the source is idle for iv + I, I Pareto with shape k and
//!   scale off·(k−1)/k (mean off): the gap after a burst's last packet;
//! * a flow starts idle (its first packet leaves iv + I₁ after its start), and
//!   draws B then I at the start and after the last packet of every burst.
//!
//! So a cycle is B·iv of sending and I of silence; the long-run rate is
//! 8·size·E[B] / (E[B]·iv + off) = rate·on/(on + off) up to the rounding of B.
//!
//! Realisation: at the start of a burst (time s) the rate becomes `rate` and the
//! pacer sends packet j at s + round(j·iv); the rate returns to 0 at
//! s + round((B − ½)·iv), strictly between packets B−1 and B (the validation keeps
//! iv at 2 ns or more), and comes back at s + round(B·iv + I).
use super::{FlowStart, RateControl, RateProtocol};
use crate::engine::SimTime;
use crate::settings::{Duration, Rate, Result, Table};
use cclab_rng::Xoshiro256pp;
use serde::{Deserialize, Serialize};

/// The shortest packet interval at the burst rate (ns): the switch-off falls half
/// an interval after a burst's last packet, which needs a whole nanosecond.
pub const MIN_INTERVAL_NS: f64 = 2.0;

/// The parameters of a Pareto on/off source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParetoParams {
    /// Mean burst (on) time, ns (ns-2 `burst_time_`, default 500 ms).
    pub on_ns: u64,
    /// Mean idle (off) time, ns (ns-2 `idle_time_`, default 500 ms).
    pub off_ns: u64,
    /// Pareto shape k of both periods (ns-2 `shape_`, default 1.5); above 1.
    pub shape: f64,
    /// Sending rate during a burst, bits per second (ns-2 `rate_`).
    pub rate_bps: f64,
}

/// The defaults of ns-2's `ns-default.tcl` (`burst_time_`, `idle_time_`, `shape_`).
pub const DEFAULT_ON: SimTime = SimTime::from_millis(500);
pub const DEFAULT_OFF: SimTime = SimTime::from_millis(500);
pub const DEFAULT_SHAPE: f64 = 1.5;

impl ParetoParams {
    /// Check every field: (its canonical name, what is wrong).
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        for (key, t) in [("on_ns", self.on_ns), ("off_ns", self.off_ns)] {
            if t == 0 || t > SimTime::LONGEST.0 {
                return Err((key, format!("expected a positive duration of at most 1e9 s, got {t} ns")));
            }
        }
        check_shape(self.shape).map_err(|m| ("shape", m))?;
        if !(self.rate_bps.is_finite() && self.rate_bps > 0.0 && self.rate_bps <= crate::settings::units::MAX_RATE_BPS as f64) {
            return Err(("rate_bps", format!("expected a rate from 0 to 10^15 bits per second, got {}", self.rate_bps)));
        }
        Ok(())
    }

    /// The packet interval at the burst rate, ns (the pacer's own formula).
    pub fn interval_ns(&self, packet_bytes: u32) -> f64 {
        packet_bytes as f64 * 8e9 / self.rate_bps
    }

    /// Whether packets of `packet_bytes` leave far enough apart during a burst
    /// (`Err` says what is wrong).
    pub fn check_packet(&self, packet_bytes: u32) -> std::result::Result<(), String> {
        let iv = self.interval_ns(packet_bytes);
        if iv < MIN_INTERVAL_NS {
            return Err(format!(
                "{packet_bytes}-byte packets at {} bit/s leave {iv:.3} ns apart; a Pareto source needs at least {MIN_INTERVAL_NS} ns",
                self.rate_bps
            ));
        }
        Ok(())
    }

    /// The long-run mean rate (bits per second): 8·size·E[B] / (E[B]·iv + off),
    /// E[B] the mean burst in whole packets ([`mean_burst_packets`]).
    pub fn mean_rate_bps(&self, packet_bytes: u32) -> f64 {
        let iv = self.interval_ns(packet_bytes);
        let eb = mean_burst_packets(self.on_ns as f64 / iv, self.shape);
        packet_bytes as f64 * 8e9 * eb / (eb * iv + self.off_ns as f64)
    }
}

fn check_shape(k: f64) -> std::result::Result<(), String> {
    if !(k.is_finite() && k > 1.0) {
        return Err(format!("expected a number above 1 (the mean of a Pareto period is finite only then), got {k}"));
    }
    Ok(())
}

/// E[max(1, ⌊X + ½⌋)] for X Pareto with mean `mean` and shape `k` > 1 (scale
/// x_m = mean·(k−1)/k): the mean burst of ns-2's rounding, Σ_{b≥1} P(B ≥ b) with
/// P(B ≥ b) = P(X ≥ b − ½) = min(1, (x_m/(b − ½))^k) for b ≥ 2. The sum runs to
/// 10^6 terms past x_m and the tail is the integral of the same (convex) term,
/// which is exact to about 1e-9 of the result for any k > 1.
pub fn mean_burst_packets(mean: f64, k: f64) -> f64 {
    let xm = mean * (k - 1.0) / k;
    let tail = |b: f64| (xm / (b - 0.5)).powf(k).min(1.0);
    let first_partial = (xm + 0.5).floor().max(1.0) + 1.0; // b below this: P = 1
    let mut sum = first_partial - 1.0; // P(B ≥ b) = 1 for b = 1 .. first_partial − 1
    let end = first_partial + 1e6;
    let mut b = first_partial;
    while b < end {
        sum += tail(b);
        b += 1.0;
    }
    // Σ_{b ≥ end} f(b) ≈ ∫_{end − ½}^∞ f: (x_m^k / (k−1)) · (end − 1)^(1−k).
    sum + xm.powf(k) / (k - 1.0) * (end - 1.0).powf(1.0 - k)
}

/// A Pareto on/off source.
#[derive(Clone, Debug)]
pub struct Pareto {
    on: bool,
    /// Packet interval at the burst rate, ns.
    iv_ns: f64,
    /// Pareto scales: of a burst's packet count, and of an idle time (ns).
    burst_scale: f64,
    idle_scale_ns: f64,
    /// Packets of the burst under way (on) or next (off), and when it started.
    burst: u64,
    burst_start: SimTime,
    /// The next switch (`SimTime::MAX` before the flow starts).
    next: SimTime,
    rng: Xoshiro256pp,
    params: ParetoParams,
}

impl RateProtocol for Pareto {
    const NAME: &'static str = "pareto";
    type Params = ParetoParams;

    /// `cc = { on = "500ms", off = "500ms", shape = 1.5, rate = "1Mbps" }`
    /// (`rate` required; the others default to ns-2's).
    fn read(mut t: Table) -> Result<ParetoParams> {
        let on = t.or("on", Duration(DEFAULT_ON))?.0;
        let off = t.or("off", Duration(DEFAULT_OFF))?.0;
        let shape: f64 = t.or("shape", DEFAULT_SHAPE)?;
        let rate: Rate = t.req("rate", "the sending rate during a burst, e.g. \"1Mbps\"")?;
        t.finish("the pareto source")?;
        Ok(ParetoParams { on_ns: on.0, off_ns: off.0, shape, rate_bps: rate.0 })
    }

    fn check(p: &ParetoParams) -> std::result::Result<(), (&'static str, String)> {
        p.check()
    }

    fn file_key(key: &'static str) -> &'static str {
        match key {
            "on_ns" => "on",
            "off_ns" => "off",
            "rate_bps" => "rate",
            k => k,
        }
    }

    fn new(p: &ParetoParams) -> Self {
        Pareto {
            on: false,
            iv_ns: 0.0,
            burst_scale: 0.0,
            idle_scale_ns: 0.0,
            burst: 0,
            burst_start: SimTime::ZERO,
            next: SimTime::MAX,
            // Replaced by the flow's own stream in `start`.
            rng: Xoshiro256pp::from_state([0; 4]),
            params: p.clone(),
        }
    }
}

/// `x` ns after `t`, rounded; `SimTime::MAX` (never) past the range of time.
fn after(t: SimTime, x: f64) -> SimTime {
    if x < 1.8e19 {
        t + SimTime(x.round() as u64)
    } else {
        SimTime::MAX
    }
}

impl Pareto {
    /// One Pareto draw with scale `scale` (ns-2 `Random::pareto`: scale · u^(−1/k)).
    fn draw(&mut self, scale: f64) -> f64 {
        scale * self.rng.uniform_pos().powf(-1.0 / self.params.shape)
    }

    /// ns-2's draws at the end of a burst (and at the start): the next burst's
    /// packets, then the idle time before it (ns).
    fn draw_cycle(&mut self) -> f64 {
        let x = self.draw(self.burst_scale);
        // int(x + .5), at least 1 (the float-to-integer cast saturates).
        self.burst = ((x + 0.5) as u64).max(1);
        self.draw(self.idle_scale_ns)
    }

    /// Packets in the burst under way or next.
    pub fn burst_packets(&self) -> u64 {
        self.burst
    }

    /// Whether a burst is under way.
    pub fn is_on(&self) -> bool {
        self.on
    }
}

impl RateControl for Pareto {
    fn start(&mut self, f: FlowStart) {
        let p = &self.params;
        self.iv_ns = p.interval_ns(f.packet_bytes);
        let k = p.shape;
        // ns-2 init(): burstlen = ontime / interval; p1 = burstlen (k−1)/k; p2 = offtime (k−1)/k.
        self.burst_scale = p.on_ns as f64 / self.iv_ns * (k - 1.0) / k;
        self.idle_scale_ns = p.off_ns as f64 * (k - 1.0) / k;
        self.rng = f.rng;
        self.on = false;
        let idle = self.draw_cycle();
        // The first packet leaves one interval plus an idle time after the start.
        self.next = after(f.now, self.iv_ns + idle);
    }

    #[inline]
    fn rate_bps(&self) -> f64 {
        if self.on {
            self.params.rate_bps
        } else {
            0.0
        }
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        (self.next != SimTime::MAX).then_some(self.next)
    }

    fn on_deadline(&mut self, now: SimTime) {
        if self.on {
            // The burst's last packet has left: idle, then the next burst.
            self.on = false;
            let done = self.burst as f64 * self.iv_ns;
            let idle = self.draw_cycle();
            self.next = after(self.burst_start, done + idle);
        } else {
            self.on = true;
            self.burst_start = now;
            self.next = after(now, (self.burst as f64 - 0.5) * self.iv_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::rate::Pacer;
    use serde_json::json;

    /// Read as a scenario's `cc` table is: the reader, then the one check.
    fn read(cc: serde_json::Value) -> std::result::Result<ParetoParams, String> {
        match crate::transport::rate::RateConfig::read("pareto", Table::new(&cc, "traffic[0].cc").unwrap()) {
            Ok(crate::transport::rate::RateConfig::Pareto(p)) => Ok(p),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn parameters_default_to_ns2_and_are_checked() {
        assert_eq!(
            read(json!({"rate": "1Mbps"})).unwrap(),
            ParetoParams { on_ns: 500_000_000, off_ns: 500_000_000, shape: 1.5, rate_bps: 1e6 }
        );
        assert_eq!(
            read(json!({"rate": "64kbps", "on": "1s", "off": "2s", "shape": 2})).unwrap(),
            ParetoParams { on_ns: 1_000_000_000, off_ns: 2_000_000_000, shape: 2.0, rate_bps: 64e3 }
        );
        let e = read(json!({})).unwrap_err();
        assert!(e.starts_with("traffic[0].cc.rate: missing"), "{e}");
        assert!(read(json!({"rate": "1Mbps", "shape": 1})).unwrap_err().starts_with("traffic[0].cc.shape: expected a number above 1"));
        assert!(read(json!({"rate": "1Mbps", "shape": "NaN"})).unwrap_err().starts_with("traffic[0].cc.shape: expected a finite number"));
        assert!(read(json!({"rate": "1Mbps", "on": "0s"})).unwrap_err().starts_with("traffic[0].cc.on: expected a positive duration"));
        assert!(read(json!({"rate": "1Mbps", "off": "0s"})).unwrap_err().starts_with("traffic[0].cc.off: expected a positive duration"));
        assert!(read(json!({"rate": 5})).unwrap_err().starts_with("traffic[0].cc.rate: expected a rate like"));
        assert!(read(json!({"rate": "1Mbps", "burst": "1s"})).unwrap_err().starts_with("traffic[0].cc.burst: unknown key"));
        // The canonical form passes the same check when read back (Config::check).
        let bad: ParetoParams = serde_json::from_value(json!({"on_ns": 1, "off_ns": 1, "shape": 0.5, "rate_bps": 1e6})).unwrap();
        assert!(Pareto::check(&bad).unwrap_err().1.starts_with("expected a number above 1"));
        let p = read(json!({"rate": "1Mbps"})).unwrap();
        assert_eq!(serde_json::from_value::<ParetoParams>(serde_json::to_value(&p).unwrap()).unwrap(), p);
        assert!(p.check_packet(1500).is_ok());
        // 1500 B at 6 Tbps: exactly 2 ns apart; at 7 Tbps, 1.71 ns.
        assert!(ParetoParams { rate_bps: 6e12, ..p.clone() }.check_packet(1500).is_ok());
        let e = ParetoParams { rate_bps: 7e12, ..p }.check_packet(1500).unwrap_err();
        assert!(e.contains("1.714 ns apart"), "{e}");
    }

    /// Drive one source with a pacer exactly as the simulator does (deadlines and
    /// send times in time order, a switch before a send at the same instant):
    /// every packet's send time until `end`.
    fn drive(p: &ParetoParams, packet: u32, seed: u64, end: SimTime) -> Vec<SimTime> {
        let mut c = Pareto::new(p);
        let rng = cclab_rng::stream(seed, cclab_rng::StreamKey::new("test"));
        c.start(FlowStart { now: SimTime::ZERO, packet_bytes: packet, rng });
        let mut pacer = Pacer::new(SimTime::ZERO, c.rate_bps(), packet);
        let mut sent = Vec::new();
        loop {
            let (d, s) = (c.deadline().unwrap_or(SimTime::MAX), pacer.next());
            let t = d.min(s);
            if t >= end {
                return sent;
            }
            if d <= s {
                c.on_deadline(t);
                pacer.set_rate(t, c.rate_bps(), packet);
            } else {
                sent.push(t);
                pacer.sent();
            }
        }
    }

    /// Split send times into bursts (gaps of one interval, ±1 ns of rounding): the
    /// burst sizes and the idle times I (the gap minus one interval), ns.
    fn bursts(times: &[SimTime], iv: f64) -> (Vec<u64>, Vec<f64>) {
        let (mut sizes, mut idles) = (vec![1u64], Vec::new());
        for w in times.windows(2) {
            let gap = (w[1].0 - w[0].0) as f64;
            if gap <= iv + 1.0 {
                assert!(gap >= iv - 1.0, "packets closer than one interval: {gap} < {iv}");
                *sizes.last_mut().unwrap() += 1;
            } else {
                idles.push(gap - iv);
                sizes.push(1);
            }
        }
        (sizes, idles)
    }

    #[test]
    fn first_packet_after_an_idle_period() {
        let p = ParetoParams { on_ns: 10_000_000, off_ns: 10_000_000, shape: 2.0, rate_bps: 8e6 }; // 1000 B: 1 ms apart
        let mut c = Pareto::new(&p);
        assert_eq!((c.rate_bps(), c.deadline()), (0.0, None)); // silent until started
        c.start(FlowStart { now: SimTime::from_secs(1), packet_bytes: 1000, rng: cclab_rng::stream(1, "x") });
        assert_eq!(c.rate_bps(), 0.0);
        // iv + I with I >= the idle scale off (k−1)/k = 5 ms.
        assert!(c.deadline().unwrap() >= SimTime::from_secs(1) + SimTime::from_millis(6));
        let b = c.burst_packets();
        let s = c.deadline().unwrap();
        c.on_deadline(s);
        assert!(c.is_on() && c.rate_bps() == 8e6);
        // Off half an interval after the burst's last packet.
        assert_eq!(c.deadline().unwrap(), s + SimTime((b as f64 - 0.5) as u64 * 1_000_000 + 500_000));
    }

    #[test]
    fn burst_and_idle_distributions() {
        // Shape 1.5 (ns-2's default): P(B >= b) = (x_m/(b − ½))^k exactly, and
        // ln(I/x_m) is exponential with mean 1/k, so the maximum-likelihood index
        // k̂ = n / Σ ln(I/x_m) has 1/k̂ with mean 1/k and sd 1/(k √n).
        let k = 1.5;
        let p = ParetoParams { on_ns: 20_000_000, off_ns: 20_000_000, shape: k, rate_bps: 1e6 };
        let iv = p.interval_ns(210);
        let times = drive(&p, 210, 11, SimTime::from_secs(4000));
        let (sizes, idles) = bursts(&times, iv);
        let n = idles.len() as f64;
        assert!(n > 50_000.0, "{n}");
        let x_idle = p.off_ns as f64 * (k - 1.0) / k;
        assert!(idles.iter().all(|&i| i >= x_idle - 1.0));
        let inv_k = idles.iter().map(|&i| (i / x_idle).ln()).sum::<f64>() / n;
        let z = (inv_k - 1.0 / k) / (1.0 / (k * n.sqrt()));
        eprintln!("{n} idle periods: k̂ = {:.4} (z = {z:+.2})", 1.0 / inv_k);
        assert!(z.abs() < 3.3, "1/k̂ = {inv_k}, z = {z}");
        // Burst sizes: fractions at or above b against the exact tail, binomial 99.9% bands.
        let x_b = p.on_ns as f64 / iv * (k - 1.0) / k;
        let m = (sizes.len() - 1) as f64; // the last burst may be cut by the end
        for b in [5u64, 10, 30, 100, 1000] {
            let expect = (x_b / (b as f64 - 0.5)).powf(k).min(1.0);
            let got = sizes[..sizes.len() - 1].iter().filter(|&&s| s >= b).count() as f64 / m;
            let sd = (expect * (1.0 - expect) / m).sqrt();
            eprintln!("P(B >= {b}) = {got:.5}, exact {expect:.5} (z = {:+.2})", (got - expect) / sd);
            assert!((got - expect).abs() < 3.3 * sd, "P(B >= {b}) = {got}, expected {expect} ± {sd}");
        }
    }

    #[test]
    fn mean_burst_sum_is_exact() {
        // Brute force for a light tail (k = 6): the sum to a million terms is complete.
        let (mean, k) = (4.0, 6.0);
        let xm: f64 = mean * (k - 1.0) / k;
        let brute: f64 = 1.0 + (2..2_000_000).map(|b| (xm / (b as f64 - 0.5)).powf(k).min(1.0)).sum::<f64>();
        assert!((mean_burst_packets(mean, k) - brute).abs() < 1e-9);
        // Heavy tail: close to the continuous mean (the rounding moves it by well under a packet).
        let m = mean_burst_packets(300.0, 1.5);
        assert!((m - 300.0).abs() < 0.5, "{m}");
        // Every burst has at least one packet: a tiny mean gives about 1.
        assert!((mean_burst_packets(0.01, 1.5) - 1.0).abs() < 1e-3);
    }
}
