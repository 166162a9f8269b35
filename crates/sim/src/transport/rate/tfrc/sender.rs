//! The TFRC sender (RFC 5348 §4): the allowed sending rate X from each feedback
//! report, slow start, and the no-feedback timer. Rates are in bytes per second
//! of whole datagrams of `s` bytes; times in seconds.
use super::{throughput, TfrcParams, T_MBI};
use crate::engine::SimTime;
use crate::transport::rate::feedback::Report;
use crate::transport::state::StateVars;

/// q2, the weight of the old value in R_sqmean (RFC 5348 §4.5 recommends 0.9).
const Q2: f64 = 0.9;

/// The no-feedback timer before the first RTT sample: 2 s (RFC 5348 §4.2).
const INITIAL_NOFEEDBACK: f64 = 2.0;

/// The sender's state.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    q: f64,
    oscillation_reduction: bool,
    /// s: bytes per datagram.
    s: f64,
    /// X, the allowed sending rate.
    x: f64,
    /// X_inst / X: R_sqmean / sqrt(R_sample) with §4.5, else 1.
    inst: f64,
    /// R, the smoothed RTT (None before the first feedback), in seconds and as a time.
    r: Option<f64>,
    r_time: Option<SimTime>,
    /// R_sqmean (§4.5).
    r_sqmean: f64,
    /// The latest reported loss event rate.
    p: f64,
    /// X_Bps from the latest report with p > 0.
    x_bps: f64,
    /// X_recv_set: the receive rates reported in the last two RTTs, with their
    /// arrival times (first entry: infinity, §4.2).
    x_recv_set: Vec<(SimTime, f64)>,
    /// tld, the time X was last doubled in slow start.
    tld: Option<SimTime>,
    /// When the no-feedback timer expires.
    nofeedback: SimTime,
    /// No-feedback timer expiries so far.
    pub expiries: u32,
}

impl TfrcSender {
    pub fn new(p: &TfrcParams) -> Self {
        TfrcSender {
            q: p.q,
            oscillation_reduction: p.oscillation_reduction,
            s: 0.0,
            x: 0.0,
            inst: 1.0,
            r: None,
            r_time: None,
            r_sqmean: 0.0,
            p: 0.0,
            x_bps: 0.0,
            x_recv_set: Vec::new(),
            tld: None,
            nofeedback: SimTime::MAX,
            expiries: 0,
        }
    }

    /// The flow starts (RFC 5348 §4.2): X = one datagram per second, X_recv_set =
    /// {infinity}, the no-feedback timer at 2 s.
    pub fn start(&mut self, now: SimTime, packet_bytes: u32) {
        self.s = packet_bytes as f64;
        self.x = self.s;
        self.x_recv_set = vec![(now, f64::INFINITY)];
        self.nofeedback = now + SimTime::from_secs_f64(INITIAL_NOFEEDBACK);
    }

    /// The rate at which datagrams leave: X, or X_inst with §4.5 (never below one
    /// datagram per t_mbi).
    #[inline]
    pub fn rate(&self) -> f64 {
        if self.oscillation_reduction {
            (self.x * self.inst).max(self.s / T_MBI)
        } else {
            self.x
        }
    }

    /// s, the datagram size.
    pub fn segment(&self) -> f64 {
        self.s
    }

    /// X, the allowed sending rate.
    pub fn allowed(&self) -> f64 {
        self.x
    }

    /// The latest reported loss event rate.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// X_Bps, the throughput equation's rate for the latest report (None while p = 0).
    pub fn x_bps(&self) -> Option<f64> {
        (self.p > 0.0).then_some(self.x_bps)
    }

    /// The smoothed RTT.
    #[inline]
    pub fn rtt(&self) -> Option<SimTime> {
        self.r_time
    }

    /// When the no-feedback timer expires.
    pub fn deadline(&self) -> Option<SimTime> {
        (self.nofeedback != SimTime::MAX).then_some(self.nofeedback)
    }

    /// RFC 5348's sender variables for a trace: X (the allowed rate), p (the
    /// latest loss event rate) and X_recv (the largest receive rate of X_recv_set,
    /// absent while it holds only the initial infinity), in bit/s.
    pub fn observe(&self, vars: &mut StateVars) {
        vars.put("tfrc.x_bps", 8.0 * self.x);
        vars.put("tfrc.p", self.p);
        let x_recv = self.max_x_recv();
        if x_recv.is_finite() {
            vars.put("tfrc.x_recv_bps", 8.0 * x_recv);
        }
    }

    /// recv_limit = 2·max(X_recv_set): the most the rate may be (RFC 5348 §4.3 step 4).
    pub fn recv_limit(&self) -> f64 {
        2.0 * self.max_x_recv()
    }

    /// The largest rate in X_recv_set (the sender's cached X_recv, §4.4).
    fn max_x_recv(&self) -> f64 {
        self.x_recv_set.iter().fold(0.0, |m, &(_, x)| m.max(x))
    }

    /// initial_rate = W_init/R, W_init = min(4s, max(2s, 4380)) (RFC 5348 §4.2, RFC 3390).
    fn initial_rate(&self, r: f64) -> f64 {
        (4.0 * self.s).min((2.0 * self.s).max(4380.0)) / r
    }

    /// A feedback report arrives at `now` (RFC 5348 §4.3).
    pub fn on_feedback(&mut self, now: SimTime, rep: &Report) {
        // (1) The RTT sample: now − t_recvdata − t_delay.
        let r_sample = ((now.0.saturating_sub(rep.echo.0)).max(1)) as f64 * 1e-9;
        // (2) The RTT estimate.
        let r = match self.r {
            None => r_sample,
            Some(r) => self.q * r + (1.0 - self.q) * r_sample,
        };
        self.r = Some(r);
        self.r_time = Some(SimTime::from_secs_f64(r));
        // (3) The timeout interval, with X before this report.
        let rto = (4.0 * r).max(2.0 * self.s / self.x);
        // (4) The allowed sending rate. The sender is never data-limited: Update X_recv_set.
        self.p = rep.p;
        self.x_recv_set.push((now, rep.x_recv));
        let horizon = 2.0 * r;
        self.x_recv_set.retain(|&(t, _)| (now.0 - t.0) as f64 * 1e-9 <= horizon);
        let recv_limit = self.recv_limit();
        if self.p > 0.0 {
            // Congestion avoidance.
            self.x_bps = throughput(self.s, r, self.p);
            self.x = self.x_bps.min(recv_limit).max(self.s / T_MBI);
        } else if self.tld.is_none_or(|t| (now.0 - t.0) as f64 * 1e-9 >= r) {
            // Slow start: double at most once per RTT, up to twice the receive rate.
            self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate(r));
            self.tld = Some(now);
        }
        // (5) The no-feedback timer.
        self.nofeedback = now + SimTime::from_secs_f64(rto);
        // (6) §4.5: X_inst = X·R_sqmean/sqrt(R_sample).
        if self.oscillation_reduction {
            let sq = r_sample.sqrt();
            self.r_sqmean = if self.r_sqmean == 0.0 { sq } else { Q2 * self.r_sqmean + (1.0 - Q2) * sq };
            self.inst = self.r_sqmean / sq;
        }
    }

    /// The no-feedback timer expires at `now` (RFC 5348 §4.4): halve the rate.
    pub fn on_nofeedback(&mut self, now: SimTime) {
        self.expiries += 1;
        let floor = self.s / T_MBI;
        if self.r.is_none() || self.p == 0.0 {
            // No X_Bps yet (no feedback at all, or none reporting a loss).
            self.x = (self.x / 2.0).max(floor);
        } else {
            let x_recv = self.max_x_recv();
            let limit = if self.x_bps > 2.0 * x_recv {
                // 2·X_recv was already limiting the rate.
                x_recv
            } else {
                // X_Bps was.
                self.x_bps / 2.0
            };
            // Update_Limits(limit): X_recv_set = {limit/2}, then X as in §4.3 step 4.
            let limit = limit.max(floor);
            self.x_recv_set = vec![(now, limit / 2.0)];
            self.x = self.x_bps.min(limit).max(floor);
        }
        // (2) Restart: max(4R, 2s/X), or 2 s (at least 2s/X) before any RTT sample.
        let t = match self.r {
            Some(r) => (4.0 * r).max(2.0 * self.s / self.x),
            None => INITIAL_NOFEEDBACK.max(2.0 * self.s / self.x),
        };
        self.nofeedback = now + SimTime::from_secs_f64(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn started(p: &TfrcParams) -> TfrcSender {
        let mut s = TfrcSender::new(p);
        s.start(SimTime::ZERO, 1000);
        s
    }

    fn report(echo: SimTime, x_recv: f64, p: f64) -> Report {
        Report { echo, x_recv, p, rate_bps: 0.0 }
    }

    #[test]
    fn starts_at_one_datagram_per_second() {
        let s = started(&TfrcParams::default());
        assert_eq!((s.rate(), s.rtt(), s.deadline()), (1000.0, None, Some(SimTime::from_secs(2))));
    }

    #[test]
    fn first_feedback_sets_the_initial_rate_and_rtt() {
        // First report at 100 ms echoing t = 0: R = 100 ms, X = W_init/R with
        // W_init = min(4·1000, max(2·1000, 4380)) = 4000 bytes: 40,000 B/s.
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        assert_eq!(s.rtt(), Some(ms(100)));
        assert!((s.rate() - 40_000.0).abs() < 1e-9);
        // RTO = max(4R, 2s/X_old) = max(0.4, 2·1000/1000) = 2 s.
        assert_eq!(s.deadline(), Some(ms(2100)));
        // 1500-byte datagrams: W_init = min(6000, max(3000, 4380)) = 4380.
        let mut s = TfrcSender::new(&TfrcParams::default());
        s.start(SimTime::ZERO, 1500);
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        assert!((s.rate() - 43_800.0).abs() < 1e-9);
    }

    #[test]
    fn rtt_filter_is_q_weighted() {
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        // Sample 200 ms: R = 0.9·0.1 + 0.1·0.2 = 0.11 s.
        s.on_feedback(ms(400), &report(ms(200), 1e9, 0.0));
        assert_eq!(s.rtt(), Some(ms(110)));
    }

    #[test]
    fn slow_start_doubles_once_per_rtt_up_to_twice_the_receive_rate() {
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        let x0 = s.allowed(); // 40,000 B/s, tld = 100 ms
        // A report within one RTT of the last doubling changes nothing.
        s.on_feedback(ms(150), &report(ms(50), 50_000.0, 0.0));
        assert_eq!(s.allowed(), x0);
        // One RTT later: doubles (twice the receive rate allows it).
        s.on_feedback(ms(200), &report(ms(100), 50_000.0, 0.0));
        assert_eq!(s.allowed(), 2.0 * x0);
        // Next RTT: 2·X would be 160,000 but the receive rates of the last two RTTs
        // are at most 50,000 (the infinite initial entry has aged out): X = 100,000.
        s.on_feedback(ms(300), &report(ms(200), 50_000.0, 0.0));
        assert_eq!(s.allowed(), 100_000.0);
        // Never below the initial rate W_init/R.
        s.x_recv_set = vec![(ms(300), 1.0)];
        s.on_feedback(ms(400), &report(ms(300), 1.0, 0.0));
        assert!((s.allowed() - 40_000.0).abs() < 1e-9);
    }

    #[test]
    fn congestion_avoidance_follows_the_equation_capped_by_the_receive_rate() {
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        let p = 0.01;
        let x_eq = throughput(1000.0, 0.1, p);
        s.on_feedback(ms(200), &report(ms(100), 1e9, p));
        assert_eq!((s.allowed(), s.x_bps()), (x_eq, Some(x_eq)));
        // Receive rates of the last 2R all below X_Bps/2: X = 2·max(X_recv_set).
        s.x_recv_set.clear();
        s.on_feedback(ms(300), &report(ms(200), 0.3 * x_eq, p));
        assert!((s.allowed() - 0.6 * x_eq).abs() < 1e-9);
    }

    #[test]
    fn nofeedback_timer_halves_the_rate() {
        // Before any feedback: X halves from 1 datagram/s, the timer restarts after
        // max(2 s, 2s/X) = 4 s; never below s/t_mbi.
        let mut s = started(&TfrcParams::default());
        s.on_nofeedback(SimTime::from_secs(2));
        assert_eq!((s.allowed(), s.deadline()), (500.0, Some(SimTime::from_secs(6))));
        for _ in 0..10 {
            s.on_nofeedback(s.deadline().unwrap());
        }
        assert_eq!(s.allowed(), 1000.0 / 64.0);

        // In congestion avoidance, limited by X_Bps: X = X_Bps/2, then X_Bps/4.
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        let p = 0.001;
        let x_eq = throughput(1000.0, 0.1, p);
        s.on_feedback(ms(200), &report(ms(100), x_eq, p));
        assert_eq!(s.allowed(), x_eq);
        // RTO = max(4R, 2s/X) = 0.4 s.
        assert_eq!(s.deadline(), Some(ms(600)));
        s.on_nofeedback(ms(600));
        assert!((s.allowed() - x_eq / 2.0).abs() < 1e-9);
        assert_eq!(s.x_recv_set, vec![(ms(600), x_eq / 4.0)]);
        assert_eq!(s.deadline(), Some(ms(1000)));
        // Again: now 2·X_recv limits (X_Bps > 2·X_eq/4): X = X_recv = X_eq/4.
        s.on_nofeedback(ms(1000));
        assert!((s.allowed() - x_eq / 4.0).abs() < 1e-9);
        s.on_nofeedback(ms(1400));
        assert!((s.allowed() - x_eq / 8.0).abs() < 1e-9);
        // Feedback resumes with the same p and receive rate X_eq/8: X = 2·X_eq/8.
        s.on_feedback(ms(1500), &report(ms(1400), x_eq / 8.0, p));
        assert!((s.allowed() - x_eq / 4.0).abs() < 1e-9);

        // In slow start after feedback (p = 0): X halves.
        let mut s = started(&TfrcParams::default());
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        s.on_nofeedback(s.deadline().unwrap());
        assert!((s.allowed() - 20_000.0).abs() < 1e-9);
    }

    #[test]
    fn oscillation_reduction_scales_by_the_rtt_variation() {
        let p = TfrcParams { oscillation_reduction: true, ..TfrcParams::default() };
        let mut s = started(&p);
        s.on_feedback(ms(100), &report(SimTime::ZERO, 0.0, 0.0));
        // First sample: R_sqmean = sqrt(R_sample), X_inst = X.
        assert!((s.rate() - s.allowed()).abs() < 1e-9);
        // A sample of 400 ms: R_sqmean = 0.9·sqrt(0.1) + 0.1·sqrt(0.4), X_inst = X·R_sqmean/sqrt(0.4).
        s.on_feedback(ms(600), &report(ms(200), 1e9, 0.0));
        let f = (0.9 * 0.1f64.sqrt() + 0.1 * 0.4f64.sqrt()) / 0.4f64.sqrt();
        assert!((s.rate() - s.allowed() * f).abs() < 1e-6);
        assert!(f < 1.0);
    }
}
