//! ns-2.35's `Agent/TFRCSink` (tcp/tfrc-sink.cc) with ns-default.tcl's
//! defaults: `numPkts_ 1` (a packet is lost once one later packet has arrived),
//! `PreciseLoss_ 1` (a new loss event needs a new round id besides an RTT),
//! `NumFeedback_ 1`, `AdjustHistoryAfterSS_ 1`, `algo_ 1` (`wali.rs`),
//! `discount_ 1`, `smooth_ 1`, no ECN.
//!
//! Reports go out on an urgent datagram (the sender's first ones, and after a
//! no-feedback expiry), on the first gap, at a new loss event, on a datagram
//! arriving an RTT or more after the last report, and when the timer set 1.5 RTT
//! after each report expires, if data arrived since (tfrc-sink.cc:290-315, 365-380).
use super::wali::Wali;
use super::{b_to_p, DataHeader, SMALLFLOAT};
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::rate::feedback::{packet_rtt, FeedbackReceiver, Report};
use std::collections::VecDeque;

/// `lossvec_` states (tfrc-sink.h:47-52, without ECN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unknown,
    Rcvd,
    /// Lost, and the first of a new loss event.
    Lost,
    /// Lost within an event already counted.
    NotRcvd,
}

/// One packet's entry: arrival time (or when declared lost), send time
/// (interpolated for a lost one), state.
#[derive(Clone, Copy, Debug)]
struct Entry {
    rt: f64,
    ts: f64,
    state: State,
}

const UNSEEN: Entry = Entry { rt: -1.0, ts: -1.0, state: State::Unknown };

/// ns-2's `InitHistorySize_`: the sink forgets packets this far behind.
const HSZ: usize = 100_000;

/// The packets from `base` on (ns-2 keeps `InitHistorySize_` of them in a ring;
/// only the recent ones are ever read, and older ones are dropped).
#[derive(Clone, Debug, Default)]
struct History {
    base: i64,
    entries: VecDeque<Entry>,
}

impl History {
    fn get(&self, i: i64) -> Entry {
        if i < self.base {
            return UNSEEN;
        }
        self.entries.get((i - self.base) as usize).copied().unwrap_or(UNSEEN)
    }

    fn set(&mut self, i: i64, e: Entry) {
        if self.entries.is_empty() {
            self.base = i;
        }
        if i < self.base {
            return;
        }
        let k = (i - self.base) as usize;
        while self.entries.len() <= k {
            self.entries.push_back(UNSEEN);
        }
        self.entries[k] = e;
    }

    /// Forget packets below `keep` that arrived (or were declared lost) before
    /// `before` s, and any beyond ns-2's history size behind `latest`.
    fn trim(&mut self, keep: i64, before: f64, latest: i64) {
        while let Some(front) = self.entries.front() {
            let old = self.base < keep && front.rt < before;
            if !(old || self.base <= latest - HSZ as i64) {
                break;
            }
            self.entries.pop_front();
            self.base += 1;
        }
    }
}

/// ns-2's TFRC receiver (`TfrcSinkAgent`).
#[derive(Clone, Debug)]
pub struct Ns2Receiver {
    /// Sequence bytes per datagram (datagrams are numbered by seq / this).
    bytes: u64,
    /// `psize_`: the datagram size (bytes).
    psize: f64,
    /// The sender's values from the latest new datagram: `rtt_`, `tzero_`, `round_id`.
    rtt: f64,
    tzero: f64,
    round_id: i64,
    /// `maxseq` (−1 before the first datagram) and `maxseqList`.
    maxseq: i64,
    maxseq_list: i64,
    num_pkts_so_far: u32,
    history: History,
    last_arrival: f64,
    last_timestamp: SimTime,
    last_report: f64,
    rcvd_since_report: u64,
    loss_seen: bool,
    lastloss: f64,
    lastloss_round_id: i64,
    /// `last_sample`: the next packet the loss estimate counts.
    last_sample: i64,
    wali: Wali,
    /// The report timer (`nack_timer_`).
    timer: Option<SimTime>,
}

impl Ns2Receiver {
    pub fn new(packet_bytes: u32) -> Self {
        Ns2Receiver {
            bytes: packet_bytes.max(1) as u64,
            psize: packet_bytes as f64,
            rtt: 0.0,
            tzero: 0.0,
            round_id: 0,
            maxseq: -1,
            maxseq_list: -1,
            num_pkts_so_far: 0,
            history: History::default(),
            last_arrival: 0.0,
            last_timestamp: SimTime::ZERO,
            last_report: 0.0,
            rcvd_since_report: 0,
            loss_seen: false,
            lastloss: 0.0,
            lastloss_round_id: -1,
            last_sample: 0,
            wali: Wali::default(),
            timer: None,
        }
    }

    /// `new_loss` (tfrc-sink.cc:135-155): a loss at send time `ts` starts an event
    /// if it is more than an RTT after the last event's start, in a newer round.
    fn new_loss(&mut self, ts: f64) -> bool {
        if ts - self.lastloss > self.rtt && self.round_id > self.lastloss_round_id {
            self.lastloss = ts;
            self.lastloss_round_id = self.round_id;
            true
        } else {
            false
        }
    }

    /// The datagrams missing before `seqno` are declared (tfrc-sink.cc:228-250):
    /// lost at send times interpolated between `before` and `seqno`.
    fn declare_losses(&mut self, before: i64, seqno: i64, now: f64) -> bool {
        let (t0, t1) = (self.history.get(before).ts, self.history.get(seqno).ts);
        let step = (t1 - t0) / (seqno - before) as f64;
        let mut event = false;
        for i in self.maxseq_list..seqno {
            if self.history.get(i).state != State::Unknown {
                continue;
            }
            let ts = t0 + (i - before) as f64 * step;
            let state = if self.new_loss(ts) { State::Lost } else { State::NotRcvd };
            event |= state == State::Lost;
            self.history.set(i, Entry { rt: now, ts, state });
        }
        event
    }

    /// `est_thput` (tfrc-sink.cc:335-365), in packets per second.
    fn thput(&self, now: f64) -> f64 {
        if self.rtt > 0.0 && now - self.last_report >= self.rtt {
            return if self.rcvd_since_report > 0 { self.rcvd_since_report as f64 / (now - self.last_report) } else { 1.0 };
        }
        if self.rtt <= 0.0 {
            return 1.0;
        }
        let last = self.history.get(self.maxseq).rt;
        let mut rcvd = 0;
        let mut i = self.maxseq;
        while i > 0 && i >= self.history.base {
            let e = self.history.get(i);
            if e.state == State::Rcvd {
                if e.rt + self.rtt > last {
                    rcvd += 1;
                } else {
                    break;
                }
            }
            i -= 1;
        }
        if rcvd > 0 {
            rcvd as f64 / self.rtt
        } else {
            1.0
        }
    }

    /// `est_loss_WALI`: count the packets since the last estimate into the history.
    fn loss_rate(&mut self) -> f64 {
        for i in self.last_sample..=self.maxseq {
            self.wali.count(self.history.get(i).state == State::Lost);
        }
        self.last_sample = self.maxseq + 1;
        self.wali.loss_rate()
    }

    /// `adjust_history` (tfrc-sink.cc:830-868): at the first gap, the events so far
    /// are forgotten and the history seeded with 1/p for the receive rate.
    fn adjust_history(&mut self, ts: SimTime, now: f64) -> f64 {
        for e in self.history.entries.iter_mut() {
            if e.state == State::Lost {
                e.state = State::NotRcvd;
            }
        }
        self.lastloss = ts.as_secs_f64();
        self.lastloss_round_id = self.round_id;
        let p = b_to_p(self.thput(now) * self.psize, self.rtt, self.tzero, self.psize, 1.0);
        self.wali.seed((1.0 / p) as i64);
        p
    }

    /// `nextpkt(p)`: `sendpkt(p)` (p < 0: estimate it), which reports only if
    /// something arrived at or after the last report (`last_arrival_ >=
    /// last_report_sent`, so a report answering an arrival may be repeated by the
    /// timer), then the timer 1.5 RTT later (left as it was while the RTT is 0).
    fn report(&mut self, now: SimTime, p: f64) -> Option<Report> {
        let t = now.as_secs_f64();
        if self.rtt > 0.0 {
            self.timer = Some(now + SimTime::from_secs_f64(1.5 * self.rtt));
        }
        if self.last_arrival < self.last_report {
            return None;
        }
        let p = if p < 0.0 { self.loss_rate() } else { p };
        let thput = self.thput(t);
        let held = SimTime::from_secs_f64((t - self.last_arrival).max(0.0));
        self.last_report = t;
        self.rcvd_since_report = 0;
        Some(Report { echo: self.last_timestamp + held, x_recv: thput * self.psize, p, rate_bps: 0.0 })
    }

    /// A new datagram's fields (`seqno > maxseq`, or a hole filled late).
    fn record(&mut self, pkt: &Packet, seqno: i64, now: f64) -> bool {
        if seqno > self.maxseq_list + 1 {
            self.num_pkts_so_far += 1;
        }
        let h = DataHeader::of(pkt.sack);
        self.round_id = h.round_id as i64;
        self.rtt = packet_rtt(pkt).map_or(0.0, SimTime::as_secs_f64);
        self.tzero = h.tzero();
        self.psize = pkt.size as f64;
        self.last_arrival = now;
        self.last_timestamp = pkt.ts;
        self.history.set(seqno, Entry { rt: now, ts: pkt.ts.as_secs_f64(), state: State::Rcvd });
        h.urgent
    }
}

impl FeedbackReceiver for Ns2Receiver {
    /// `TfrcSinkAgent::recv` (tfrc-sink.cc:165-290).
    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Report> {
        let t = now.as_secs_f64();
        let seqno = (pkt.seq / self.bytes) as i64;
        self.rcvd_since_report += 1;
        if self.maxseq < 0 {
            self.maxseq = seqno - 1;
            self.maxseq_list = seqno;
        }
        let oldmaxseq = self.maxseq;
        let mut urgent = false;
        if seqno > self.maxseq || (seqno > self.maxseq_list && self.history.get(seqno).state == State::Unknown) {
            urgent = self.record(pkt, seqno, t);
        }
        let mut event = false;
        if seqno > self.maxseq_list && (self.num_pkts_so_far >= 1 || self.history.get(seqno).ts - self.history.get(self.maxseq_list).ts > self.rtt) {
            event = self.declare_losses(oldmaxseq, seqno, t);
            self.maxseq_list = seqno;
            self.num_pkts_so_far = 0;
        } else if seqno == self.maxseq_list + 1 {
            self.maxseq_list = seqno;
            self.num_pkts_so_far = 0;
        }
        let mut p = -1.0;
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !self.loss_seen && seqno - oldmaxseq > 1 {
                urgent = true;
                self.loss_seen = true;
                p = self.adjust_history(pkt.ts, t);
            }
            if self.rtt > SMALLFLOAT && t - self.last_report >= self.rtt {
                urgent = true;
            }
        }
        // Older packets are read only by est_thput's scan over the last RTT.
        self.history.trim(self.last_sample.min(self.maxseq_list), t - 4.0 * self.rtt - 1.0, self.maxseq);
        if urgent || event {
            return self.report(now, p);
        }
        None
    }

    fn deadline(&self) -> Option<SimTime> {
        self.timer
    }

    fn on_deadline(&mut self, now: SimTime) -> Option<Report> {
        self.timer = None; // expired; `report` sets it again with an RTT
        self.report(now, -1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::DATAGRAM;

    const S: u32 = 1000;

    /// Datagram `n`, sent at `sent_ms`, carrying RTT `rtt_ms` (0: none), round `round`.
    fn datagram(n: u64, sent_ms: f64, rtt_ms: u32, round: u32, urgent: bool) -> Packet {
        let h = DataHeader { round_id: round, tzero_ticks: 4, urgent };
        Packet { seq: n * S as u64, ts: SimTime::from_secs_f64(sent_ms / 1e3), owd: rtt_ms * 1000, sack: h.field(), size: S, len: S, flags: DATAGRAM, ..Packet::default() }
    }

    fn at(ms: f64) -> SimTime {
        SimTime::from_secs_f64(ms / 1e3)
    }

    #[test]
    fn urgent_datagrams_are_answered_at_once_and_the_timer_follows_each_report() {
        let mut r = Ns2Receiver::new(S);
        // The first datagram, urgent, no RTT yet: a report echoing its send time,
        // p = 0, the receive rate's default of 1 packet per second; no timer (RTT 0).
        let rep = r.on_data(at(50.0), &datagram(0, 0.0, 0, 0, true)).unwrap();
        assert_eq!((rep.echo, rep.p, rep.x_recv), (SimTime::ZERO, 0.0, 1000.0));
        assert_eq!(r.deadline(), None);
        // With an RTT of 100 ms, a datagram less than an RTT after the report waits.
        assert!(r.on_data(at(120.0), &datagram(1, 70.0, 100, 1, false)).is_none());
        // One an RTT or more after it is answered; the timer is 1.5 RTT later.
        let rep = r.on_data(at(160.0), &datagram(2, 110.0, 100, 1, false)).unwrap();
        assert_eq!(rep.echo, at(110.0));
        assert_eq!(r.deadline(), Some(at(160.0) + at(150.0)));
        // The receive rate: 2 datagrams since the report 110 ms ago (an RTT or more).
        assert!((rep.x_recv - 2.0 / 0.11 * 1000.0).abs() < 1e-6, "{}", rep.x_recv);
        // The timer with nothing new since: ns-2 still reports when the last arrival
        // is the last report's own instant (`last_arrival_ >= last_report_sent`), then not.
        assert!(r.on_deadline(at(310.0)).is_some());
        assert!(r.on_deadline(at(460.0)).is_none());
        assert_eq!(r.deadline(), Some(at(460.0) + at(150.0)));
    }

    /// A receiver that got datagrams 0..n every 10 ms (RTT 100 ms, round 1).
    fn steady(n: u64) -> Ns2Receiver {
        let mut r = Ns2Receiver::new(S);
        for k in 0..n {
            r.on_data(at(50.0 + 10.0 * k as f64), &datagram(k, 10.0 * k as f64, 100, 1, false));
        }
        r
    }

    #[test]
    fn one_later_datagram_declares_a_loss_and_the_first_gap_seeds_the_history() {
        let mut r = steady(30);
        // Datagram 30 is lost; 31 arrives: the gap is seen at once (numPkts_ 1),
        // datagram 30 is declared lost at the interpolated send time 300 ms, and the
        // first gap seeds the history: the report carries b_to_p of the receive rate.
        let rep = r.on_data(at(360.0), &datagram(31, 310.0, 100, 1, false)).unwrap();
        // The receive rate is measured after the gap's arrival: est_thput, times the size.
        let x = r.thput(0.36) * 1000.0;
        let want = b_to_p(x, 0.1, 0.4, 1000.0, 1.0);
        assert_eq!(rep.p, want);
        assert_eq!(r.history.get(30).state, State::NotRcvd); // the seeding forgets events so far
        assert!((r.history.get(30).ts - 0.300).abs() < 1e-12);
        assert_eq!(r.lastloss_round_id, 1);
    }

    #[test]
    fn a_new_loss_event_needs_an_rtt_and_a_new_round() {
        let mut r = steady(30);
        r.on_data(at(360.0), &datagram(31, 310.0, 100, 1, false)); // first gap: seeds
        // Datagram 40 lost, 41 arrives in the same round 1: no new event.
        for k in 32..40 {
            r.on_data(at(50.0 + 10.0 * k as f64), &datagram(k, 10.0 * k as f64, 100, 1, false));
        }
        r.on_data(at(460.0), &datagram(41, 410.0, 100, 1, false));
        assert_eq!(r.history.get(40).state, State::NotRcvd);
        assert_eq!(r.lastloss_round_id, 1);
        // Datagram 50 lost in round 2, more than an RTT after the last event (310 ms):
        // a new event, reported at once.
        for k in 42..50 {
            r.on_data(at(50.0 + 10.0 * k as f64), &datagram(k, 10.0 * k as f64, 100, 2, false));
        }
        let rep = r.on_data(at(560.0), &datagram(51, 510.0, 100, 2, false));
        assert_eq!(r.history.get(50).state, State::Lost);
        assert!(rep.is_some());
        assert_eq!((r.lastloss, r.lastloss_round_id), (0.5, 2));
    }
}
