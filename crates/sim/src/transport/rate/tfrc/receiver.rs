//! The TFRC receiver (RFC 5348 §5-6): loss detection, loss events, the receive
//! rate, and when to report. Datagrams are numbered by their place in the
//! flow (sequence byte / datagram size).
use super::loss::LossHistory;
use super::{loss_rate_for, TfrcParams};
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::rate::feedback::{packet_rtt, FeedbackReceiver, Report};
use std::collections::VecDeque;

/// NDUPACK: a datagram is lost once this many later ones have arrived (RFC 5348 §5.1).
pub const NDUPACK: u32 = 3;

/// Datagrams missing between two that arrived: [from, to), with the arrivals
/// around the gap (for interpolating the loss times, §5.2) and how many
/// datagrams above it have arrived since.
#[derive(Clone, Copy, Debug)]
struct Gap {
    from: u64,
    to: u64,
    before: (u64, SimTime),
    after: (u64, SimTime),
    later: u32,
}

impl Gap {
    /// T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before).
    fn time_of(&self, seq: u64) -> SimTime {
        let (s0, t0) = self.before;
        let (s1, t1) = self.after;
        let frac = (seq - s0) as f64 / (s1 - s0) as f64;
        t0 + SimTime(((t1.0 - t0.0) as f64 * frac).round() as u64)
    }
}

/// The receiving end of a TFRC flow.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    /// Datagram size (sequence bytes per datagram).
    s: u64,
    history: LossHistory,
    /// The first datagram received (None: nothing yet).
    first: Option<u64>,
    /// S_m, the highest datagram received; when it arrived and when it was sent.
    highest: u64,
    highest_arrival: SimTime,
    highest_sent: SimTime,
    /// R_m, the sender's RTT estimate carried by datagram S_m.
    r_m: Option<SimTime>,
    /// Gaps not yet declared lost, in sequence order.
    gaps: Vec<Gap>,
    /// The latest loss event: its first lost datagram (the start of I_0) and that
    /// datagram's interpolated arrival time (T_old).
    event: Option<(u64, SimTime)>,
    /// Arrival times with the bytes received up to each, within the last R_m.
    arrivals: VecDeque<(SimTime, u64)>,
    /// Bytes received in all, up to the oldest arrival dropped from `arrivals`, and
    /// up to the last report.
    bytes: u64,
    bytes_before_window: u64,
    bytes_at_report: u64,
    /// A datagram has arrived since the last report, and when that report left.
    fresh: bool,
    last_report: SimTime,
    /// The feedback timer.
    timer: Option<SimTime>,
}

impl TfrcReceiver {
    pub fn new(p: &TfrcParams, packet_bytes: u32) -> Self {
        TfrcReceiver {
            s: packet_bytes as u64,
            history: LossHistory::new(p.discounting),
            first: None,
            highest: 0,
            highest_arrival: SimTime::ZERO,
            highest_sent: SimTime::ZERO,
            r_m: None,
            gaps: Vec::new(),
            event: None,
            arrivals: VecDeque::new(),
            bytes: 0,
            bytes_before_window: 0,
            bytes_at_report: 0,
            fresh: false,
            last_report: SimTime::ZERO,
            timer: None,
        }
    }

    /// The loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// The loss event rate now (§5.4): with I_0 from the latest event's first lost
    /// datagram to the highest received.
    pub fn p(&self) -> f64 {
        match self.event {
            Some((start, _)) => self.history.p(self.open_interval(start)),
            None => 0.0,
        }
    }

    fn open_interval(&self, start: u64) -> f64 {
        (self.highest + 1).saturating_sub(start) as f64
    }

    /// Bytes received in (now − window, now] (window at most R_m, or since the last report).
    fn bytes_within(&self, now: SimTime, window: SimTime) -> u64 {
        let from = now.0.saturating_sub(window.0);
        let i = self.arrivals.partition_point(|&(t, _)| t.0 <= from);
        self.bytes - if i == 0 { self.bytes_before_window } else { self.arrivals[i - 1].1 }
    }

    /// X_recv for a report: the bytes received in the last R_m over R_m (RFC 5348
    /// §6.2 step 2), or, when the previous report is older than that, the bytes
    /// received since it over the time since it (as ns-2's and Linux's receivers
    /// measure): a flow sending less than one datagram per RTT then reports the
    /// rate it has, not 0. Arrivals older than R_m are then forgotten. 0 while the
    /// sender has no RTT estimate.
    fn receive_rate(&mut self, now: SimTime) -> f64 {
        let Some(r) = self.r_m else {
            self.arrivals.clear();
            self.bytes_before_window = self.bytes;
            return 0.0;
        };
        let since = now - self.last_report;
        let x = if since >= r {
            (self.bytes - self.bytes_at_report) as f64 / since.as_secs_f64()
        } else {
            self.bytes_within(now, r) as f64 / r.as_secs_f64()
        };
        let from = now.0.saturating_sub(r.0);
        while let Some(&(t, b)) = self.arrivals.front() {
            if t.0 > from {
                break;
            }
            self.bytes_before_window = b;
            self.arrivals.pop_front();
        }
        x
    }

    /// A report now (§6.2 steps 1-4): p, X_recv, the echo of the latest datagram
    /// with the time it was held; the feedback timer restarts after R_m.
    fn report(&mut self, now: SimTime, x_recv: f64) -> Report {
        self.fresh = false;
        self.last_report = now;
        self.bytes_at_report = self.bytes;
        self.timer = self.r_m.map(|r| now + r);
        Report { echo: self.highest_sent + (now - self.highest_arrival), x_recv, p: self.p() }
    }

    /// Datagram `seq` is lost and was due at `t`: it starts a new loss event if it
    /// was due more than R after the start of the latest one (§5.2). Returns
    /// whether it did.
    fn lost(&mut self, seq: u64, t: SimTime, now: SimTime) -> bool {
        match self.event {
            None => {
                // The first loss event (§6.3.1): the history starts with the interval
                // that would give the receive rate of the last RTT.
                let len = match self.r_m {
                    Some(r) => {
                        // X_recv over the most recent RTT.
                        let x_recv = self.bytes_within(now, r) as f64 / r.as_secs_f64();
                        1.0 / loss_rate_for(self.s as f64, r.as_secs_f64(), x_recv)
                    }
                    // No RTT yet: the datagrams before this one.
                    None => (seq - self.first.unwrap_or(seq)).max(1) as f64,
                };
                self.history.close(len, len);
                self.event = Some((seq, t));
                true
            }
            Some((start, t_old)) => {
                let r = self.r_m.unwrap_or(SimTime::ZERO);
                if t > t_old + r {
                    self.history.close((seq - start) as f64, self.open_interval(start));
                    self.event = Some((seq, t));
                    true
                } else {
                    false
                }
            }
        }
    }
}

impl FeedbackReceiver for TfrcReceiver {
    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Report> {
        // The datagram's number (without a division when it is the next one).
        let n = if self.first.is_some() && pkt.seq == (self.highest + 1) * self.s { self.highest + 1 } else { pkt.seq / self.s };
        self.bytes += pkt.len as u64;
        self.arrivals.push_back((now, self.bytes));
        self.fresh = true;
        let rtt = packet_rtt(pkt);
        if self.first.is_none() {
            // The first datagram (§6.3): report at once, with p = 0 and X_recv = 0.
            self.first = Some(n);
            (self.highest, self.highest_arrival, self.highest_sent, self.r_m) = (n, now, pkt.ts, rtt);
            return Some(self.report(now, 0.0));
        }
        if n > self.highest {
            if n > self.highest + 1 {
                self.gaps.push(Gap { from: self.highest + 1, to: n, before: (self.highest, self.highest_arrival), after: (n, now), later: 0 });
            }
            for g in &mut self.gaps {
                g.later += 1;
            }
            (self.highest, self.highest_arrival, self.highest_sent) = (n, now, pkt.ts);
            if rtt.is_some() {
                self.r_m = rtt;
            }
        } else {
            // A late datagram: no longer missing, and one more arrival above the gaps below it.
            if let Some(i) = self.gaps.iter().position(|g| (g.from..g.to).contains(&n)) {
                let g = self.gaps[i];
                match (n == g.from, n + 1 == g.to) {
                    (true, true) => {
                        self.gaps.remove(i);
                    }
                    (true, false) => self.gaps[i].from = n + 1,
                    (false, true) => self.gaps[i].to = n,
                    (false, false) => {
                        self.gaps[i].to = n;
                        self.gaps.insert(i + 1, Gap { from: n + 1, ..g });
                    }
                }
            }
            for g in self.gaps.iter_mut().filter(|g| g.to <= n) {
                g.later += 1;
            }
        }
        // Declare the gaps that have NDUPACK later arrivals, in sequence order.
        let mut urgent = false;
        if self.gaps.first().is_some_and(|g| g.later >= NDUPACK) {
            let p_prev = self.p();
            let mut event = false;
            while self.gaps.first().is_some_and(|g| g.later >= NDUPACK) {
                let g = self.gaps.remove(0);
                for seq in g.from..g.to {
                    event |= self.lost(seq, g.time_of(seq), now);
                }
            }
            // §6.1 step 3: report at once if p grew.
            urgent = event && self.p() > p_prev;
        }
        if urgent || rtt.is_none() {
            // While the sender has no RTT estimate every datagram is answered at
            // once (as ns-2's receiver answers the sender's "urgent" datagrams).
            let x_recv = self.receive_rate(now);
            return Some(self.report(now, x_recv));
        }
        if self.timer.is_none() {
            self.timer = self.r_m.map(|r| now + r);
        }
        None
    }

    fn deadline(&self) -> Option<SimTime> {
        self.timer
    }

    /// The feedback timer (§6.2): a report if data arrived since the last one;
    /// the timer restarts after R_m either way.
    fn on_deadline(&mut self, now: SimTime) -> Option<Report> {
        if self.fresh {
            let x_recv = self.receive_rate(now);
            Some(self.report(now, x_recv))
        } else {
            self.timer = self.r_m.map(|r| now + r);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::DATAGRAM;
    use crate::transport::rate::feedback::rtt_field;

    const S: u32 = 1000;

    fn datagram(n: u64, sent: SimTime, rtt: Option<SimTime>) -> Packet {
        Packet { seq: n * S as u64, ts: sent, owd: rtt_field(rtt), len: S, size: S, flags: DATAGRAM, ..Packet::default() }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// A receiver fed datagrams `seqs`, one per ms from t = 1 ms (sent 1 ms earlier), R = 100 ms.
    fn fed(rx: &mut TfrcReceiver, seqs: impl IntoIterator<Item = u64>) -> Vec<(u64, Option<Report>)> {
        seqs.into_iter().map(|n| (n, rx.on_data(ms(n + 1), &datagram(n, ms(n), Some(ms(100)))))).collect()
    }

    #[test]
    fn first_datagram_is_reported_at_once_and_starts_the_timer() {
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        let r = rx.on_data(ms(10), &datagram(0, ms(5), Some(ms(40)))).unwrap();
        assert_eq!(r, Report { echo: ms(5), x_recv: 0.0, p: 0.0 });
        assert_eq!(rx.deadline(), Some(ms(50)));
        // Nothing new: no report, the timer restarts.
        assert_eq!(rx.on_deadline(ms(50)), None);
        assert_eq!(rx.deadline(), Some(ms(90)));
        // Datagrams at 60 and 70 ms; the report at 90 ms echoes the last one's send
        // time plus the 20 ms it was held. X_recv: the previous report (10 ms) is
        // older than R_m = 40 ms, so it counts (10, 90]: 2000 B / 80 ms.
        rx.on_data(ms(60), &datagram(1, ms(55), Some(ms(40))));
        rx.on_data(ms(70), &datagram(2, ms(65), Some(ms(40))));
        let r = rx.on_deadline(ms(90)).unwrap();
        assert_eq!(r.echo, ms(85));
        assert!((r.x_recv - 25_000.0).abs() < 1e-9);
        // One datagram in (90, 130]: 1000 B / 40 ms.
        rx.on_data(ms(110), &datagram(3, ms(105), Some(ms(40))));
        assert!((rx.on_deadline(ms(130)).unwrap().x_recv - 25_000.0).abs() < 1e-9);
        // Less than one datagram per RTT: none by 170 ms (no report), one at 200 ms;
        // the report at 210 ms counts it over the 80 ms since the last report.
        assert_eq!(rx.on_deadline(ms(170)), None);
        rx.on_data(ms(200), &datagram(4, ms(195), Some(ms(40))));
        assert!((rx.on_deadline(ms(210)).unwrap().x_recv - 12_500.0).abs() < 1e-9);
        // An early report (a new loss event) 20 ms later counts the last R_m: (190, 230].
        rx.on_data(ms(215), &datagram(5, ms(210), Some(ms(40))));
        assert!((rx.receive_rate(ms(230)) - 2000.0 / 0.04).abs() < 1e-9);
    }

    #[test]
    fn without_an_rtt_estimate_every_datagram_is_answered() {
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        assert!(rx.on_data(ms(10), &datagram(0, ms(5), None)).is_some());
        assert!(rx.on_data(ms(1010), &datagram(1, ms(1005), None)).is_some());
        assert_eq!(rx.deadline(), None);
        assert!(rx.on_data(ms(1020), &datagram(2, ms(1015), Some(ms(30)))).is_none());
        assert_eq!(rx.deadline(), Some(ms(1050)));
    }

    #[test]
    fn a_loss_is_declared_after_three_later_datagrams() {
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        fed(&mut rx, 0..10);
        // Datagram 10 is missing; 11 and 12 do not declare it yet.
        let out = fed(&mut rx, [11, 12]);
        assert!(out.iter().all(|(_, r)| r.is_none()) && rx.history().is_empty());
        // 13 is the third later arrival: the first loss event, reported at once.
        let r = fed(&mut rx, [13])[0].1.unwrap();
        assert!(r.p > 0.0);
        assert_eq!(rx.history().intervals().len(), 1);
        // A late arrival of a missing datagram before the third later one is not a loss.
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        fed(&mut rx, [0, 1, 2, 4, 5, 3, 6, 7, 8]);
        assert!(rx.history().is_empty() && rx.gaps.is_empty());
    }

    #[test]
    fn first_loss_interval_gives_the_receive_rate() {
        // One datagram per ms, datagram 200 lost; 203 arrives at 204 ms and declares
        // it. R = 100 ms: X_recv counts arrivals in (104, 204] ms, datagrams 104..=199
        // and 201..=203: 99 kB in 0.1 s. The synthetic interval is 1/p with
        // throughput(1000, 0.1, p) = X_recv.
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        fed(&mut rx, (0..200).chain(201..204));
        let p = 1.0 / rx.history().intervals()[0];
        assert!((super::super::throughput(1000.0, 0.1, p) / 990_000.0 - 1.0).abs() < 1e-8);
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        // R = 100 ms, one datagram per ms: losses of 300, 350 and 399 fall within
        // 100 ms of 300's; 401 does not.
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        let lost = [300, 350, 399, 401, 600];
        fed(&mut rx, (0..700).filter(|n| !lost.contains(n)));
        let h = rx.history().intervals();
        // Events start at 300, 401 and 600: closed intervals 401 − 300 = 101 and
        // 600 − 401 = 199 (then the synthetic first).
        assert_eq!(h.len(), 3);
        assert_eq!(&h[..2], &[199.0, 101.0]);
        // I_0 = 699 − 600 + 1 = 100 < I_tot1-average: p from the closed ones.
        let (w, i_tot1) = (3.0, 199.0 + 101.0 + h[2]);
        let i_tot0 = 100.0 + 199.0 + 101.0;
        assert!((rx.p() - w / i_tot1.max(i_tot0)).abs() < 1e-12);
    }

    #[test]
    fn a_burst_of_losses_is_interpolated_between_its_neighbours() {
        // Datagrams 10..=19 lost; 9 arrived at 10 ms, 20 at 21 ms: datagram n is due
        // at 10 + 11·(n − 9)/11 ms. With R = 5 ms, 10..=15 (due at 11..16 ms) form
        // one event and 16 (due at 17 ms > 11 + 5) starts the next.
        let mut rx = TfrcReceiver::new(&TfrcParams::default(), S);
        for n in (0..10).chain(20..30) {
            rx.on_data(ms(n + 1), &datagram(n, ms(n), Some(ms(5))));
        }
        let g = Gap { from: 10, to: 20, before: (9, ms(10)), after: (20, ms(21)), later: 0 };
        assert_eq!((g.time_of(10), g.time_of(19)), (ms(11), ms(20)));
        let h = rx.history().intervals();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0], 6.0);
    }
}
