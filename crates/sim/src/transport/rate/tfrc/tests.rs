//! TFRC end to end over the test harness (`harness.rs`): the sender's and the
//! receiver's state machines together, with losses exactly as a rule says.
use super::harness::Harness;
use super::{throughput, Tfrc, TfrcParams, TfrcSender};
use crate::engine::SimTime;
use crate::transport::rate::{RateCc, RateConfig, Receiver};

const S: u32 = 1000;

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

fn sender(h: &Harness) -> &TfrcSender {
    match &h.conn.tx.cc {
        RateCc::Tfrc(Tfrc::Rfc5348(t)) => t,
        _ => unreachable!(),
    }
}

fn receiver_p(h: &Harness) -> f64 {
    match h.conn.receiver() {
        Some(Receiver::Tfrc(r)) => r.p(),
        _ => unreachable!("a TFRC receiver"),
    }
}

/// A TFRC flow over a 100 ms RTT path (no bottleneck) losing every k-th datagram.
fn every_kth(k: u64, params: TfrcParams) -> Harness {
    Harness::new(&RateConfig::Tfrc(params), S, ms(50), None, Box::new(move |n, _| n % k == k - 1))
}

#[test]
fn rate_follows_the_equation_at_a_fixed_loss_event_rate() {
    // Every k-th datagram lost, one loss per loss event (k datagrams take longer
    // than one RTT at the equation's rate): every closed loss interval is k, so
    // p = 1/k while the open interval I_0 ≤ k. Between a loss and its detection
    // (three datagrams later) I_0 reaches k + 3 − 1 and p dips to 1/(k + 1/2) at
    // most (I_tot0 = k·W_tot + 3, W_tot = 6). With R = 100 ms exactly (every RTT
    // sample is the path's), the sender's rate after each report is the equation's
    // for that p: X(s, R, 1/k) ≤ X ≤ X(s, R, 1/(k + 1/2)).
    for k in [20u64, 100, 400] {
        let mut h = every_kth(k, TfrcParams::default());
        let (lo, hi) = (throughput(1000.0, 0.1, 1.0 / k as f64), throughput(1000.0, 0.1, 1.0 / (k as f64 + 0.5)));
        h.run(SimTime::from_secs(60), |_| {});
        assert!((sender(&h).rtt().unwrap().as_secs_f64() - 0.1).abs() < 1e-9);
        assert!((receiver_p(&h) - 1.0 / k as f64).abs() < 1e-12 || receiver_p(&h) >= 1.0 / (k as f64 + 0.5) - 1e-12);
        let sent0 = h.sent;
        let mut reports = 0;
        let mut seen = h.reports;
        h.run(SimTime::from_secs(260), |h| {
            if h.reports != seen {
                seen = h.reports;
                reports += 1;
                let x = sender(h).allowed();
                assert!(x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9), "k = {k}: X = {x}, equation {lo}..{hi}");
            }
        });
        // One report per RTT, plus one at each loss event.
        assert!(reports >= 2000, "{reports}");
        // The long-run rate: datagrams sent in 200 s.
        let x = (h.sent - sent0) as f64 * 1000.0 / 200.0;
        assert!(x >= lo * 0.999 && x <= hi * 1.001, "k = {k}: {x} B/s, equation {lo}..{hi}");
        assert_eq!(h.sent, h.delivered + h.dropped + h.in_flight());
        assert_eq!(h.dropped, h.sent / k);
    }
}

#[test]
fn discounting_changes_nothing_when_intervals_are_equal() {
    // History discounting only acts when I_0 > 2·I_mean, which never happens with
    // equal intervals: the same rates, report for report.
    let mut a = every_kth(50, TfrcParams::default());
    let mut b = every_kth(50, TfrcParams { discounting: true, ..TfrcParams::default() });
    a.run(SimTime::from_secs(100), |_| {});
    b.run(SimTime::from_secs(100), |_| {});
    assert_eq!((a.sent, a.reports), (b.sent, b.reports));
    assert_eq!(sender(&a).allowed(), sender(&b).allowed());
}

#[test]
fn slow_start_at_most_doubles_per_rtt_and_stops_at_twice_the_receive_rate() {
    // No loss, a 1 MB/s (8 Mbps) bottleneck with an unlimited queue: p stays 0, the
    // rate grows by at most a factor 2 per RTT, never above twice the receive rates
    // reported in the last two RTTs, and ends at twice the bottleneck's rate (the
    // receive rate of a saturated bottleneck), within one datagram per RTT.
    let c = 1e6;
    let mut h = Harness::new(&RateConfig::Tfrc(TfrcParams::default()), S, ms(50), Some(8.0 * c), Box::new(|_, _| false));
    let mut last: Option<(SimTime, f64)> = None;
    let mut increases = 0;
    h.run(SimTime::from_secs(3), |h| {
        let s = sender(h);
        let x = s.allowed();
        match last {
            Some((t, x0)) if x > x0 => {
                if x0 > 1000.0 {
                    // A doubling: at most twice X, at most recv_limit (or W_init/R), and an RTT after the last.
                    assert!(x <= 2.0 * x0 * (1.0 + 1e-12), "{x0} -> {x}");
                    assert!(x <= s.recv_limit() * (1.0 + 1e-12) || x <= 4000.0 / s.rtt().unwrap().as_secs_f64() * (1.0 + 1e-12));
                    assert!((h.now - t).as_secs_f64() >= s.rtt().unwrap().as_secs_f64() * 0.999);
                }
                increases += 1;
                last = Some((h.now, x));
            }
            None => last = Some((h.now, x)),
            _ => {}
        }
        assert_eq!(s.p(), 0.0);
    });
    let x = sender(&h).allowed();
    assert!(increases >= 6);
    assert!(x >= 2.0 * c * 0.98 && x <= 2.0 * c * 1.01, "{x}");
}

#[test]
fn nofeedback_timer_halves_the_rate_each_expiry() {
    // In congestion avoidance (every 100th datagram lost), feedback is cut at 60 s:
    // the rate halves at each expiry of the no-feedback timer, which restarts after
    // max(4R, 2s/X) with the halved X: 400 ms while X > 5 kB/s, then 2s/X.
    let mut h = every_kth(100, TfrcParams::default());
    h.run(SimTime::from_secs(60), |_| {});
    h.cut_feedback = true;
    let x0 = sender(&h).allowed();
    let mut expiries = vec![];
    let mut n = sender(&h).expiries;
    h.run(SimTime::from_secs(64), |h| {
        let s = sender(h);
        if s.expiries != n {
            n = s.expiries;
            expiries.push((h.now, s.allowed()));
        }
    });
    assert!(expiries.len() >= 6, "{expiries:?}");
    for w in expiries.windows(2) {
        let gap = SimTime::from_secs_f64((4.0 * 0.1f64).max(2.0 * 1000.0 / w[0].1));
        assert!((w[1].0 - w[0].0).0.abs_diff(gap.0) <= 1, "{w:?}");
        assert!((w[1].1 / w[0].1 - 0.5).abs() < 1e-9, "{w:?}");
    }
    assert!(expiries[0].1 <= x0 / 2.0 * (1.0 + 1e-9) && expiries[0].1 >= x0 / 4.0);
}


