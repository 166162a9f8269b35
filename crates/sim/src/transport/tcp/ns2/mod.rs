//! ns-2.35's one-way TCP senders (`loss_recovery = "ns2"`), as `tcp/tcp.cc`,
//! `tcp-reno.cc`, `tcp-newreno.cc` and `tcp-sack1.cc` run them with the defaults
//! of `tcl/lib/ns-default.tcl`: `Agent/TCP/Reno` and `Agent/TCP/Newreno`
//! (`reno.rs`, by the protocol's fast-recovery rule) and `Agent/TCP/Sack1`
//! (`sack1.rs`, with SACK). This file holds what `TcpAgent` gives all three:
//! the window in whole segments (`window()`), `slowdown()`, `send_much()`,
//! `send_one()` (`singledup_`), `newack()` and the timeout.
//!
//! Sequence numbers stay bytes, segments are [k·MSS, (k+1)·MSS); ns-2 counts
//! packets (`t_seqno_` is `snd_nxt / MSS`, `highest_ack_ + 1` is `snd_una / MSS`,
//! `maxseq_ + 1` is `snd_max / MSS`), and every comparison below is the
//! packet comparison it cites, written in bytes.
mod reno;
mod sack1;
mod scoreboard;
#[cfg(test)]
mod tests;

use super::{Output, TcpParams, TimeoutSsthresh, Tcp};
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::cc::{halve, Ack, Congestion, CongestionControl, Window};
use sack1::Sack1;

/// ns-2's `last_cwnd_action_`: the last thing that reduced the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum CwndAction {
    #[default]
    None,
    /// A fast retransmit (`CWND_ACTION_DUPACK`): in fast recovery.
    DupAck,
    /// A retransmission timeout (`CWND_ACTION_TIMEOUT`).
    Timeout,
    /// Fast recovery has ended (`CWND_ACTION_EXITED`).
    Exited,
}

/// The state of an ns-2 sender beyond cclab's sequence variables and window.
#[derive(Clone, Debug, Default)]
pub struct Ns2Sender {
    /// `dupacks_`: duplicate ACKs since the last ACK of new data (Sack1: those
    /// that brought new SACK information). NewReno does not reset it on a partial ACK.
    dupacks: u32,
    /// `dupwnd_` (Reno, NewReno): the window's inflation in fast recovery, in
    /// segments, kept apart from cwnd_.
    dupwnd: u64,
    action: CwndAction,
    /// `firstpartial_`: a partial ACK of this recovery has restarted the timer.
    partial_seen: bool,
    /// `recover_`: snd_max at the last fast retransmit or timeout (None: ns-2's 0,
    /// before any, and after a Sack1 recovery).
    recover: Option<u64>,
    /// Sack1's own state (with SACK).
    sack1: Option<Sack1>,
}

impl Ns2Sender {
    pub fn new(sack: bool) -> Self {
        Ns2Sender { sack1: sack.then(Sack1::default), ..Ns2Sender::default() }
    }

    /// In fast recovery (Sack1's `fastrecov_`, Reno's and NewReno's DUPACK state).
    pub fn in_recovery(&self) -> bool {
        match &self.sack1 {
            Some(s) => s.fastrecov,
            None => self.action == CwndAction::DupAck,
        }
    }

    /// Sack1's `pipe_` in fast recovery (clamped at 0), None otherwise.
    pub fn sack1_pipe(&self) -> Option<u64> {
        self.sack1.as_ref().filter(|s| s.fastrecov).map(|s| s.pipe.max(0) as u64)
    }

    /// `bug_fix_` (tcp-newreno.cc:116-126, tcp-sack1.cc:276-282): a new fast
    /// retransmit needs an ACK beyond `recover_`; `bugfix_ss_` also allows one
    /// while no data has been acknowledged (`highest_ack_ == 0`: only the SYN).
    fn may_fast_retransmit(&self, snd_una: u64) -> bool {
        self.recover.is_none_or(|r| snd_una > r) || snd_una == 0
    }
}

impl Tcp {
    #[inline]
    fn ns(&mut self) -> &mut Ns2Sender {
        self.ns2.as_deref_mut().expect("an ns-2 sender")
    }

    /// Segments from snd_una up to and including the one at `seq` (ns-2's
    /// `seqno - highest_ack_`).
    #[inline]
    fn segments_to(&self, seq: u64) -> u64 {
        (seq - self.snd_una) / self.w.mss + 1
    }

    /// The receiver's window in segments (`window_`).
    #[inline]
    fn rwnd_segments(&self, p: &TcpParams) -> u64 {
        p.rwnd() / self.w.mss
    }

    /// `window()` (tcp.cc:888-902; Reno's, tcp-reno.cc:42-57, adds `dupwnd_`):
    /// min(int(cwnd_) + dupwnd_, window_) segments.
    fn ns2_window(&self, p: &TcpParams) -> u64 {
        let dupwnd = self.ns2.as_deref().map_or(0, |n| n.dupwnd);
        (self.w.cwnd / self.w.mss + dupwnd).min(self.rwnd_segments(p))
    }

    /// Sending from `open`, the SYN-ACK, the controller's deadline.
    pub(super) fn ns2_send(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        if self.ns().sack1.is_some() {
            self.sack1_send_much(now, p, out);
        } else {
            self.ns2_send_much(now, p, out, None);
        }
    }

    /// `send_much()` (tcp.cc:913-957): new (or, after a timeout, resent) segments
    /// while `t_seqno_ <= highest_ack_ + window()`, at most `burst` of them
    /// (`maxburst_` 0: no limit).
    fn ns2_send_much(&mut self, now: SimTime, p: &TcpParams, out: &mut Output, burst: Option<u32>) {
        let mut sent = 0;
        while self.snd_nxt < self.size && self.segments_to(self.snd_nxt) <= self.ns2_window(p) {
            let seq = self.snd_nxt;
            self.send_segment(seq, now, p, out);
            self.snd_nxt += self.seg_len(seq, p);
            sent += 1;
            if burst == Some(sent) {
                break;
            }
        }
    }

    /// `send_one()` (tcp.cc:1576-1587, `singledup_`): on each of the first
    /// duplicate ACKs, one segment if `t_seqno_ <= highest_ack_ + window_` and
    /// `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_` (cwnd_ unrounded).
    fn ns2_send_one(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let (seq, dupacks) = (self.snd_nxt, self.ns().dupacks as u64);
        if seq >= self.size {
            return;
        }
        let k = self.segments_to(seq);
        if k <= self.rwnd_segments(p) && k * self.w.mss <= self.w.cwnd + dupacks * self.w.mss {
            self.send_segment(seq, now, p, out);
            self.snd_nxt += self.seg_len(seq, p);
        }
    }

    /// `slowdown()` (tcp.cc:1241-1347) with `precisionReduce_` true, for a fast
    /// retransmit (`CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF`) or a timeout
    /// (`| CLOSE_CWND_RESTART`): the window win = `windowd()` = min(cwnd_ +
    /// dupwnd_, window_) is halved, ssthresh_ = max(int(win/2), 2) segments, cwnd_
    /// = win/2 unrounded, or 1 segment after a timeout. The controller gives the
    /// reduced value (Reno's halving: win/2); ns-2's floor of two segments applies
    /// to ssthresh only.
    fn ns2_slowdown(&mut self, timeout: bool, p: &TcpParams) {
        let mss = self.w.mss;
        let dupwnd = self.ns().dupwnd as f64;
        let windowd = (self.cc.segments(&self.w) + dupwnd).min((p.rwnd() / mss) as f64);
        let win = (windowd * mss as f64) as u64;
        let repeated = timeout && p.rules.timeout_ssthresh == TimeoutSsthresh::Hold && (self.timed_out_since_ack || self.in_recovery());
        let event = if timeout { Congestion::Timeout { repeated } } else { Congestion::Loss };
        let reduced = self.cc.on_congestion(&self.w, event, win);
        self.w.ssthresh = (reduced / mss * mss).max(2 * mss);
        if timeout {
            self.cc.set_segments(&mut self.w, 1.0);
        } else if reduced == halve(win, mss) {
            self.cc.set_segments(&mut self.w, windowd / 2.0);
        } else {
            self.w.cwnd = reduced;
        }
    }

    /// A fast retransmit (NewReno's `dupack_action`, tcp-newreno.cc:166-177; Reno's,
    /// tcp-reno.cc:194-202; Sack1's, tcp-sack1.cc:327-352): `recover_ = maxseq_`,
    /// the timer restarted and the timing abandoned (`reset_rtx_timer(1, 0)`),
    /// `slowdown()`, and the first unacknowledged segment resent.
    fn ns2_fast_retransmit(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let snd_max = self.snd_max;
        let ns = self.ns();
        ns.recover = Some(snd_max);
        ns.action = CwndAction::DupAck;
        self.rto_timer.set(now + self.rtt.rto());
        self.rtt.cancel_timing();
        self.ns2_slowdown(false, p);
        self.send_segment(self.snd_una, now, p, out);
    }

    /// `newack()` (tcp.cc:1352-1409, `timerfix_` true) for an ACK of new data up to
    /// `ack`: the RTT estimate (its timed segment), `dupacks_ = 0`, the sequence
    /// variables, and the timer restarted (`newtimer()`: t_seqno_ > seqno always
    /// holds once t_seqno_ is past the ACK).
    fn ns2_newack(&mut self, pkt: &Packet, ack: u64, now: SimTime, p: &TcpParams, sample: &mut Ack) {
        let r = Self::echo_sample(pkt, now, p);
        self.rtt.on_ack(ack, r, now, p.rto_bounds());
        self.ns2_advance(ack, sample);
        sample.rtt = r;
        self.ns().dupacks = 0;
        self.timed_out_since_ack = false;
        self.rto_timer.set(now + self.rtt.rto());
    }

    /// The cumulative ACK moves to `ack` (`highest_ack_`, and `t_seqno_` at least past it).
    fn ns2_advance(&mut self, ack: u64, sample: &mut Ack) {
        sample.bytes_acked = ack - self.snd_una;
        sample.bytes_delivered = sample.bytes_acked;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        sample.snd_una = ack;
        sample.snd_nxt = self.snd_nxt;
    }

    /// An ACK reaches an ns-2 sender.
    pub(super) fn on_ack_ns2(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        if self.ns().sack1.is_some() {
            self.on_ack_sack1(pkt, now, p, out);
        } else {
            self.on_ack_reno(pkt, now, p, out);
        }
        self.sync_cc_timer();
    }

    /// The controller sees the ACK (and grows the window unless `in_recovery`).
    fn ns2_observe(&mut self, sample: &mut Ack, in_recovery: bool) {
        sample.in_recovery = in_recovery;
        self.cc.on_ack(&mut self.w, sample);
    }

    /// The retransmission timer expired with data outstanding (`timeout()`,
    /// tcp.cc:1854-1932; Reno's, tcp-reno.cc:220-230; Sack1's, tcp-sack1.cc:390-420):
    /// `recover_ = maxseq_`, `slowdown()` to one segment, the timer backed off and
    /// restarted, and go-back-N from `highest_ack_ + 1`.
    pub(super) fn on_rto_ns2(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let snd_max = self.snd_max;
        let ns = self.ns();
        ns.dupwnd = 0;
        ns.dupacks = 0;
        ns.recover = Some(snd_max);
        if self.cc.segments(&self.w) < 1.0 {
            self.cc.set_segments(&mut self.w, 1.0);
        }
        self.ns2_slowdown(true, p);
        let ns = self.ns();
        ns.action = CwndAction::Timeout;
        if let Some(s) = ns.sack1.as_mut() {
            s.on_timeout();
        }
        self.timed_out_since_ack = true;
        self.rtt.back_off(p.max_rto);
        self.rto_timer.set(now + self.rtt.rto());
        self.snd_nxt = self.snd_una;
        self.ns2_send(now, p, out);
        self.sync_cc_timer();
    }

    /// ns-2's SYN timeout (`syn_timeout = "ns2"`): the SYN is segment 0 of a
    /// window of one (`delay_growth_`), so `timeout()` sets ssthresh_ =
    /// max(int(1/2), 2) = 2 segments and, the first packet being lost, `bugfix_ss_`
    /// sets `windowInit_` to 1 (tcp.cc:1886-1893).
    pub(super) fn ns2_syn_timeout(&mut self) {
        let mss = self.w.mss;
        let one = Window { cwnd: mss, ..self.w };
        let reduced = self.cc.on_congestion(&one, Congestion::Timeout { repeated: false }, mss);
        self.w.ssthresh = (reduced / mss * mss).max(2 * mss);
        self.w.cwnd = mss;
    }
}
