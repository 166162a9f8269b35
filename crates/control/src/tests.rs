//! The controller against its specification: admission, the realisation of a
//! fractional limit, the update instants, and whole loops closed over a
//! deterministic fluid link whose critical limit is known in closed form.
use crate::read::{read, Kind, Setting, Source};
use crate::*;
use std::collections::HashMap;

fn fixed(limit: f64, fractional: Fractional) -> AccessParams {
    AccessParams::Static(StaticParams { limit, fractional })
}

#[test]
fn a_static_limit_admits_in_order_and_never_exceeds_m() {
    let mut c: AccessController<u32> = AccessController::new(&fixed(2.0, Fractional::Alternate), 0.0, 0.0).unwrap();
    for i in 0..5 {
        c.arrive(i as f64, i, 1.0);
    }
    assert_eq!(c.admit(5.0), Some(0));
    assert_eq!(c.admit(5.0), Some(1));
    assert_eq!(c.admit(5.0), None);
    assert_eq!((c.active(), c.waiting()), (2, 3));
    c.complete(6.0);
    assert_eq!(c.admit(6.0), Some(2));
    assert_eq!(c.admit(6.0), None);
    assert_eq!(c.next_deadline(), f64::INFINITY);
}

/// Run a backlogged static controller whose chunks each last `life` seconds, for
/// `horizon` seconds; the time average of the active count.
fn backlogged_mean_active(limit: f64, life: f64, horizon: f64) -> f64 {
    let mut c: AccessController<()> = AccessController::new(&fixed(limit, Fractional::Alternate), 0.0, 0.0).unwrap();
    let mut ends: Vec<f64> = Vec::new();
    let mut t = 0.0;
    for _ in 0..3 {
        c.arrive(0.0, (), 1.0);
    }
    while t < horizon {
        while c.admit(t).is_some() {
            ends.push(t + life);
            c.arrive(t, (), 1.0); // keep chunks waiting
        }
        let next_end = ends.iter().cloned().fold(f64::INFINITY, f64::min);
        let next = next_end.min(c.next_deadline()).min(horizon);
        t = next;
        if let Some(i) = ends.iter().position(|&e| e == next) {
            ends.swap_remove(i);
            c.complete(t);
        } else {
            c.on_deadline(t, 0.0);
        }
    }
    c.advance_to(horizon);
    c.averages().active
}

#[test]
fn a_fractional_limit_alternates_floor_and_ceiling_to_average_m() {
    // Chunks of 2 s, always some waiting: the active count is 1 or 2 (M = 1.3),
    // 0 or 1 (M = 0.25), 4 or 5 (M = 4.7), averaging M up to one cycle's rounding.
    for &(m, life) in &[(1.3, 2.0), (0.25, 2.0), (4.7, 3.0)] {
        let a = backlogged_mean_active(m, life, 10_000.0);
        assert!((a - m).abs() < 2e-3, "M = {m}: mean active {a}");
    }
    assert!((backlogged_mean_active(3.0, 2.0, 1000.0) - 3.0).abs() < 1e-9);
}

#[test]
fn the_weight_realisation_opens_the_ceiling_and_counts_m() {
    let mut c: AccessController<u8> = AccessController::new(&fixed(1.5, Fractional::Weight), 0.0, 0.0).unwrap();
    for i in 0..3 {
        c.arrive(0.0, i, 1.0);
    }
    assert!(c.admit(0.0).is_some() && c.admit(0.0).is_some() && c.admit(0.0).is_none());
    assert_eq!(c.weight(), 1.5);
    c.complete(1.0);
    assert!(c.admit(1.0).is_some());
    let mut c: AccessController<u8> = AccessController::new(&fixed(0.3, Fractional::Weight), 0.0, 0.0).unwrap();
    c.arrive(0.0, 0, 1.0);
    assert!(c.admit(0.0).is_some());
    assert!((c.weight() - 0.3).abs() < 1e-15);
}

#[test]
fn fairbat_updates_at_multiples_of_the_period_by_eq2() {
    let p = FairbatParams {
        m0: 2.0,
        period_s: 100.0,
        tau: 10.0,
        trend: 0.0,
        gain_start: 0.01,
        gain_end: 0.01,
        gain_scale: GainScale::None,
        ..FairbatParams::default()
    };
    let mut c: AccessController<()> = AccessController::new(&AccessParams::Fairbat(p), 50.0, 0.0).unwrap();
    assert_eq!(c.next_deadline(), 150.0);
    // 40 chunks wait from t = 50 (2 start), 20 more from t = 100: mean waiting over
    // [50, 150] = (38·50 + 58·50)/100 = 48, so m = 2 + 0.01·(48 − 10) = 2.38.
    for _ in 0..40 {
        c.arrive(50.0, (), 1.0);
    }
    while c.admit(50.0).is_some() {}
    for _ in 0..20 {
        c.arrive(100.0, (), 1.0);
    }
    // A deadline rounded half a nanosecond early still performs the update.
    c.on_deadline(150.0 - 4e-10, 0.0);
    assert!((c.limit() - 2.38).abs() < 1e-9, "{}", c.limit());
    assert_eq!(c.updates(), 1);
    assert_eq!(c.next_deadline(), 250.0);
    // The limit never leaves [m_min, m_max].
    let p = FairbatParams { m0: 1.0, m_min: 0.5, m_max: 1.2, period_s: 1.0, tau: 100.0, gain_start: 0.01, gain_end: 0.001,
                            gain_scale: GainScale::None, ..FairbatParams::default() };
    let mut c: AccessController<()> = AccessController::new(&AccessParams::Fairbat(p), 0.0, 0.0).unwrap();
    c.on_deadline(1.0, 0.0);
    assert_eq!(c.limit(), 0.5);
    for _ in 0..10_000 {
        c.arrive(1.5, (), 1.0);
    }
    c.on_deadline(2.0, 0.0);
    c.on_deadline(3.0, 0.0);
    assert_eq!(c.limit(), 1.2);
}

/// A deterministic fluid link: capacity `cap`, `k` long TCP flows, chunks of `size`
/// arriving every `gap` seconds; active chunks share the capacity equally with the
/// long flows (each gets cap/(k + active)). Runs the controller for `horizon`
/// seconds and returns its time averages over the second half.
fn fluid_loop(params: AccessParams, k: f64, cap: f64, size: f64, gap: f64, horizon: f64) -> Averages {
    let mut c: AccessController<()> = AccessController::new(&params, 0.0, horizon / 2.0).unwrap();
    let mut left: Vec<f64> = Vec::new(); // bytes left of each active chunk
    let (mut t, mut next_arrival, mut delivered) = (0.0, 0.0, 0.0);
    while t < horizon {
        let rate = if left.is_empty() { 0.0 } else { cap / (k + left.len() as f64) };
        let (i_min, least) = left.iter().enumerate().fold((usize::MAX, f64::INFINITY), |a, (i, &x)| if x < a.1 { (i, x) } else { a });
        let t_done = if rate > 0.0 { t + least / rate } else { f64::INFINITY };
        let next = t_done.min(next_arrival).min(c.next_deadline()).min(horizon);
        for x in left.iter_mut() {
            *x -= rate * (next - t);
        }
        delivered += rate * (next - t) * left.len() as f64;
        t = next;
        if t == t_done {
            left.swap_remove(i_min);
            c.complete(t);
        } else if t == next_arrival {
            c.arrive(t, (), size);
            next_arrival += gap;
        } else {
            c.on_deadline(t, delivered);
        }
        while c.admit(t).is_some() {
            left.push(size);
        }
    }
    c.advance_to(horizon);
    c.averages()
}

/// The limit at which alternating between ⌊M⌋ and ⌈M⌉ chunks carries `load`
/// (fraction of the capacity) beside k long flows: the time average of j/(k+j).
fn alternating_critical_limit(k: f64, load: f64) -> f64 {
    let share = |j: f64| j / (k + j);
    let mut j = 0.0;
    while share(j + 1.0) < load {
        j += 1.0;
    }
    j + (load - share(j)) / (share(j + 1.0) - share(j))
}

#[test]
fn closed_loops_find_the_critical_limit_of_a_fluid_link() {
    // 10 Mbps, 3 MB chunks every 4 s (load 0.6 of the link) beside k = 3 long flows:
    // eq. (27) puts M* = kρ_b/(1−ρ_b) = 4.5; alternating 4 and 5 chunks, the load is
    // carried at M = 4.533 (the share j/(k+j) is concave, so a little more than 4.5).
    let (cap, size, gap) = (1.25e6, 3e6, 4.0);
    let m_alt = alternating_critical_limit(3.0, 0.6);
    assert!((m_alt - 4.5333).abs() < 1e-4);
    let fb = fluid_loop(AccessParams::Fairbat(FairbatParams::default()), 3.0, cap, size, gap, 2e6);
    assert!((fb.limit - m_alt).abs() < 1e-3 && fb.limit_sd < 0.01, "FAIRBAT: {fb:?}, expected {m_alt}");
    // The queue is held at τ: the trend term damps eq. (2).
    assert!((fb.waiting - 100.0).abs() < 1.0, "FAIRBAT queue {}", fb.waiting);
    let rt = fluid_loop(AccessParams::RateTracking(RateTrackingParams::default()), 3.0, cap, size, gap, 2e6);
    assert!((rt.limit - m_alt).abs() < 1e-3 && rt.limit_sd < 0.02, "rate tracking: {rt:?}, expected {m_alt}");
    // ... and its queue at its own target (§III-B's long queues, `tau`)
    assert!((rt.waiting - 20.0).abs() < 1.0, "rate tracking queue {}", rt.waiting);
}

#[test]
fn many_long_flows_leave_fairbat_stable() {
    // k = 40 long flows, load 0.6: M* = 60, above the 30 chunks arriving per period over
    // the trend term's 0.6. Read on the waiting queue alone, the trend term took the
    // chunks a higher limit admitted for a shrinking queue and cut m by m·0.6/30 times
    // as many: from m ≈ 50 on, a limit cycle between m_min and hundreds (issue 25; here
    // 52.9, sd 10.5). A chunk takes two periods at M*, a delay the gain floor feels: at
    // 0.001, 59.2 with sd 1.6 (at 0.002, 57.9 and 2.5; at 2·10⁻⁴, sd below 1).
    let (cap, size, gap) = (1.25e6, 3e6, 4.0);
    let m_alt = alternating_critical_limit(40.0, 0.6);
    let fb = fluid_loop(AccessParams::Fairbat(FairbatParams::default()), 40.0, cap, size, gap, 2e6);
    assert!((fb.limit - m_alt).abs() < 0.05 * m_alt && fb.limit_sd < 0.05 * m_alt, "FAIRBAT: {fb:?}, expected {m_alt}");
    assert!((fb.active - m_alt).abs() < 0.01 * m_alt, "FAIRBAT: {fb:?}, expected {m_alt}");
}

#[test]
fn a_limit_that_does_not_bind_comes_down_to_the_chunks_held() {
    // m = 50 with at most 3 chunks held in the period: the update leaves m at 3 + 1
    // (eq. 2 alone would lower it by 0.01·(0 − 10) = 0.1 only).
    let p = FairbatParams { m0: 50.0, period_s: 10.0, tau: 10.0, trend: 0.0, gain_start: 0.01, gain_end: 0.01,
                            gain_scale: GainScale::None, ..FairbatParams::default() };
    let mut c: AccessController<()> = AccessController::new(&AccessParams::Fairbat(p), 0.0, 0.0).unwrap();
    for _ in 0..3 {
        c.arrive(1.0, (), 1.0);
    }
    while c.admit(1.0).is_some() {}
    c.complete(2.0);
    c.on_deadline(10.0, 0.0);
    assert_eq!(c.limit(), 4.0);
    // ... and the next period, with 2 held, to 3
    c.on_deadline(20.0, 0.0);
    assert_eq!(c.limit(), 3.0);
}

#[test]
fn eq2_alone_is_an_undamped_double_integrator() {
    // Without the trend term the limit integrates the queue, which integrates the
    // mismatch of rates: on the fluid link nothing damps the oscillation, and half a
    // million seconds in, the limit still swings around M* (sd 0.57, against 0.001
    // with the trend term).
    let p = FairbatParams { trend: 0.0, ..FairbatParams::default() };
    let fb = fluid_loop(AccessParams::Fairbat(p), 3.0, 1.25e6, 3e6, 4.0, 1e6);
    assert!(fb.limit_sd > 0.3, "{fb:?}");
}

struct Map(HashMap<&'static str, Setting>);

impl Source for Map {
    fn get(&mut self, key: &'static str, _kind: Kind) -> Result<Option<Setting>, ParamError> {
        Ok(self.0.get(key).cloned())
    }
}

#[test]
fn settings_start_from_the_defaults_and_name_the_key_at_fault() {
    let mut m = Map(HashMap::from([("tau", Setting::Number(30.0)), ("measure", Setting::Choice("sample".into()))]));
    let AccessParams::Fairbat(p) = read("fairbat", &mut m).unwrap() else { panic!() };
    assert_eq!(p, FairbatParams { tau: 30.0, measure: QueueMeasure::Sample, ..FairbatParams::default() });
    let e = read("fairbat", &mut Map(HashMap::from([("gain_end", Setting::Number(0.5))]))).unwrap_err();
    assert_eq!(e.to_string(), "gain_end: must be at most gain_start (0.05), got 0.5");
    let e = read("fairbat", &mut Map(HashMap::from([("m_min", Setting::Number(2.0))]))).unwrap_err();
    assert_eq!(e.to_string(), "m_min: must be at most m0 (1), got 2");
    let e = read("static", &mut Map(HashMap::new())).unwrap_err();
    assert_eq!(e.key, "limit");
    let e = read("static", &mut Map(HashMap::from([("limit", Setting::Number(0.0))]))).unwrap_err();
    assert_eq!(e.to_string(), "limit: expected a number above 0 and at most 1000000, got 0");
    let e = read("fairbat", &mut Map(HashMap::from([("fractional", Setting::Choice("half".into()))]))).unwrap_err();
    assert_eq!(e.to_string(), "fractional: expected one of \"alternate\", \"weight\", got \"half\"");
    let e = read("wtcp", &mut Map(HashMap::new())).unwrap_err();
    assert_eq!(e.key, "policy");
    let e = read("rate_tracking", &mut Map(HashMap::from([("ewma", Setting::Number(1.5))]))).unwrap_err();
    assert_eq!(e.to_string(), "ewma: expected a number in (0, 1], got 1.5");
}

#[test]
fn the_canonical_form_round_trips_and_refuses_unknown_fields() {
    for p in [
        fixed(2.5, Fractional::Weight),
        AccessParams::Fairbat(FairbatParams::default()),
        AccessParams::RateTracking(RateTrackingParams::default()),
    ] {
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<AccessParams>(&text).unwrap(), p, "{text}");
    }
    let text = serde_json::to_string(&fixed(2.0, Fractional::Alternate)).unwrap();
    assert_eq!(text, r#"{"policy":"static","limit":2.0,"fractional":"alternate"}"#);
    assert!(serde_json::from_str::<AccessParams>(r#"{"policy":"static","limit":2.0,"fractional":"alternate","x":1}"#).is_err());
    assert!(serde_json::from_str::<AccessParams>(r#"{"policy":"static","limit":2.0}"#).is_err());
}
