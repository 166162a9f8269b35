//! TFCBR and RDTF over the test harness: the paper's rule (§IV-C), rate = α ×
//! the mean of TFRC's TCP-rate estimates of the last β seconds, against closed
//! forms under losses a rule fixes.
use super::TfcbrParams;
use crate::engine::SimTime;
use crate::transport::rate::tfrc::harness::Harness;
use crate::transport::rate::tfrc::{throughput, TfrcParams};
use crate::transport::rate::{RateCc, RateConfig, RateControl};

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

fn params(alpha: f64, beta_s: u64) -> TfcbrParams {
    TfcbrParams::new(alpha, SimTime::from_secs(beta_s), &TfrcParams::default())
}

/// Bytes per second the flow's controller sends at.
fn rate(h: &Harness) -> f64 {
    h.conn.tx.cc.rate_bps() / 8.0
}

/// TCP-rate estimates in the window.
fn estimates(h: &Harness) -> usize {
    match &h.conn.tx.cc {
        RateCc::Tfcbr(t) => t.estimates(),
        RateCc::Rdtf(t) => t.estimates(),
        _ => unreachable!(),
    }
}

/// The equation's rate for 1000-byte datagrams, R = 100 ms and every k-th datagram
/// lost: between X(1/k) and X(1/(k + 1/2)) (tfrc/tests.rs explains the band).
fn band(k: u64) -> (f64, f64) {
    (throughput(1000.0, 0.1, 1.0 / k as f64), throughput(1000.0, 0.1, 1.0 / (k as f64 + 0.5)))
}

fn harness(cfg: RateConfig, drop: impl FnMut(u64, SimTime) -> bool + 'static) -> Harness {
    Harness::new(&cfg, 1000, ms(50), None, Box::new(drop))
}

#[test]
fn sends_alpha_times_the_tcp_rate_at_a_fixed_loss_rate() {
    // Every 100th datagram lost: TFRC's estimate X_Bps stays in the equation's band
    // whatever the flow's own rate (the loss interval is 100 datagrams either way),
    // so once β seconds of estimates are in the window the rate is α times it.
    let k = 100;
    let (lo, hi) = band(k);
    for (cfg, alpha) in [
        (RateConfig::Tfcbr(params(0.5, 10)), 0.5),
        (RateConfig::Tfcbr(params(0.25, 10)), 0.25),
        (RateConfig::Rdtf(params(1.0, 10)), 1.0),
    ] {
        let mut h = harness(cfg, move |n, _| n % k == k - 1);
        h.run(SimTime::from_secs(60), |_| {});
        let sent0 = h.sent;
        h.run(SimTime::from_secs(160), |h| {
            let x = rate(h);
            assert!(x >= alpha * lo * (1.0 - 1e-9) && x <= alpha * hi * (1.0 + 1e-9), "α = {alpha}: {x} vs {lo}..{hi}");
        });
        let x = (h.sent - sent0) as f64 * 1000.0 / 100.0;
        assert!(x >= alpha * lo * 0.999 && x <= alpha * hi * 1.001, "α = {alpha}: {x}");
        // About one estimate per RTT in the window of 10 s (plus one per loss event).
        let n = estimates(&h);
        assert!((100..=115).contains(&n), "{n}");
        assert_eq!(h.sent, h.delivered + h.dropped + h.in_flight());
    }
}

#[test]
fn slow_start_is_tfrc_s() {
    // Until the first loss event TFCBR sends exactly as TFRC: the same datagrams at
    // the same times (first loss: datagram 500).
    let drop = |n: u64, _| n == 500;
    let mut a = harness(RateConfig::Tfrc(TfrcParams::default()), drop);
    let mut b = harness(RateConfig::Tfcbr(params(0.5, 64)), drop);
    let mut times_a = vec![];
    let mut times_b = vec![];
    a.run(SimTime::from_secs(3), |h| times_a.push((h.sent, rate(h).to_bits())));
    b.run(SimTime::from_secs(3), |h| times_b.push((h.sent, rate(h).to_bits())));
    let first_loss = times_a.iter().position(|&(sent, _)| sent > 503).unwrap();
    assert_eq!(times_a[..first_loss], times_b[..first_loss]);
}

#[test]
fn a_step_in_the_loss_rate_is_averaged_over_beta() {
    // Every 200th datagram lost until 250 s, every 50th after; β = 100 s. The rate
    // is α times the mean of the estimates of the last β seconds, about one per RTT:
    // half-way through (300 s) it is near the mean of the two levels, and once β
    // seconds (and the eight loss intervals of the new level) have passed it is the
    // new level.
    let (alpha, t0) = (0.5, SimTime::from_secs(250));
    let mut h = harness(RateConfig::Tfcbr(params(alpha, 100)), move |n, t| if t < t0 { n % 200 == 199 } else { n % 50 == 49 });
    h.run(SimTime::from_secs(249), |_| {});
    let (lo1, hi1) = band(200);
    let x1 = rate(&h);
    assert!(x1 >= alpha * lo1 * 0.999 && x1 <= alpha * hi1 * 1.001, "{x1}");
    let mut mono = true;
    let mut last = x1;
    h.run(SimTime::from_secs(300), |h| {
        mono &= rate(h) <= last * (1.0 + 1e-9);
        last = rate(h);
    });
    assert!(mono, "the average only falls after the step");
    let (lo2, hi2) = band(50);
    let mid = alpha * (0.5 * (lo1 + hi1) + 0.5 * (lo2 + hi2)) / 2.0;
    let x_mid = rate(&h);
    assert!((x_mid / mid - 1.0).abs() < 0.1, "{x_mid} vs {mid}");
    h.run(SimTime::from_secs(370), |_| {});
    let x2 = rate(&h);
    assert!(x2 >= alpha * lo2 * 0.999 && x2 <= alpha * hi2 * 1.001, "{x2}");
}

#[test]
fn nofeedback_halves_the_average_until_the_next_report() {
    let k = 100;
    let mut h = harness(RateConfig::Tfcbr(params(0.5, 10)), move |n, _| n % k == k - 1);
    h.run(SimTime::from_secs(60), |_| {});
    let x0 = rate(&h);
    h.cut_feedback = true;
    let mut seen = vec![];
    let mut last = x0;
    h.run(SimTime::from_secs(61), |h| {
        if rate(h) != last {
            last = rate(h);
            seen.push(last);
        }
    });
    // One report was on its way when feedback was cut; then halvings at 4R = 0.4 s.
    assert!(seen.len() >= 2 && seen.len() <= 3, "{seen:?}");
    let n = seen.len();
    assert!((seen[n - 1] / seen[n - 2] - 0.5).abs() < 1e-12);
    // Feedback resumes: the next report restores α times the window's mean.
    h.cut_feedback = false;
    h.run(SimTime::from_secs(63), |_| {});
    let (lo, hi) = band(k);
    assert!(rate(&h) >= 0.5 * lo * 0.999 && rate(&h) <= 0.5 * hi * 1.001);
}
