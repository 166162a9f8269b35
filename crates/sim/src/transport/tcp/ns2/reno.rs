//! `Agent/TCP/Reno` (tcp-reno.cc) and `Agent/TCP/Newreno` (tcp-newreno.cc, with
//! ns-default.tcl's `newreno_changes_` 0, `newreno_changes1_` 1 through
//! `partial_ack_timer`, `partial_window_deflation_` 1, `exit_recovery_fix_` 0,
//! `exitFastRetrans_` true, `bugFix_` true):
//!
//! * the third duplicate ACK retransmits (if `bug_fix_` allows it) with
//!   cwnd_ = win/2 and `dupwnd_` = 3; each further one adds 1 to `dupwnd_`;
//! * Reno leaves fast recovery on any ACK of new data: `dupwnd_` = 0, cwnd_ as
//!   the halving left it, then `opencwnd()`;
//! * NewReno stays on a partial ACK (below `recover_`): it deflates the window by
//!   the segments acknowledged less one, taking them from `dupwnd_` first and from
//!   cwnd_ beyond (`partialnewack`), restarts the timer on the first partial ACK
//!   only, and resends the next segment; the ACK at or beyond `recover_` ends
//!   recovery (`dupwnd_` = 0, cwnd_ as deflation left it, then `opencwnd()`);
//! * the first two duplicate ACKs may each send one new segment (`send_one`);
//!   other duplicate ACKs send nothing but the recovery's, which NewReno sends two
//!   at a time at most (`send_much(0, 0, 2)`).
use super::CwndAction;
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::cc::{Ack, CongestionControl, FastRecovery};
use crate::transport::tcp::{Output, PartialAckTimer, TcpParams, Tcp};

impl Tcp {
    /// `RenoTcpAgent::recv` (tcp-reno.cc:77-145) and `NewRenoTcpAgent::recv`
    /// (tcp-newreno.cc:180-305).
    pub(super) fn on_ack_reno(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        let ack = pkt.seq.min(self.snd_max);
        let newreno = self.cc.fast_recovery() == FastRecovery::NewReno;
        let mut sample = self.ack_sample(pkt, now, self.snd_max - self.snd_una, p);
        if ack > self.snd_una {
            let ns = self.ns();
            let in_recovery = ns.action == CwndAction::DupAck;
            if newreno && in_recovery && ns.recover.is_some_and(|r| ack < r) {
                self.newreno_partial_ack(pkt, ack, now, p, out, &mut sample);
                self.ns2_observe(&mut sample, true);
            } else {
                // Any new ACK ends Reno's recovery; NewReno's, one at or beyond recover_.
                let ns = self.ns();
                ns.dupwnd = 0;
                if in_recovery {
                    ns.action = CwndAction::Exited;
                }
                ns.partial_seen = false;
                self.ns2_newack(pkt, ack, now, p, &mut sample);
                self.ns2_observe(&mut sample, false); // opencwnd()
            }
        } else {
            if ack == self.snd_una {
                self.reno_dupack(newreno, now, p, out);
            }
            let in_recovery = self.in_recovery();
            self.ns2_observe(&mut sample, in_recovery);
        }
        let dupacks = self.ns().dupacks;
        if dupacks == 0 {
            self.ns2_send_much(now, p, out, None);
        } else if dupacks >= p.dupack_threshold {
            self.ns2_send_much(now, p, out, newreno.then_some(2));
        }
    }

    /// A duplicate ACK (`tcph->seqno() == last_ack_`).
    fn reno_dupack(&mut self, newreno: bool, now: SimTime, p: &TcpParams, out: &mut Output) {
        let snd_una = self.snd_una;
        let ns = self.ns();
        ns.dupacks += 1;
        let in_recovery = ns.action == CwndAction::DupAck;
        if ns.dupacks == p.dupack_threshold {
            // Reno also allows it while still in recovery (`allow_fast_retransmit`).
            if ns.may_fast_retransmit(snd_una) || (!newreno && in_recovery) {
                self.ns2_fast_retransmit(now, p, out);
                self.ns().dupwnd = p.dupack_threshold as u64;
            }
        } else if ns.dupacks > p.dupack_threshold && in_recovery {
            ns.dupwnd += 1;
        } else if ns.dupacks < p.dupack_threshold && p.limited_transmit {
            self.ns2_send_one(now, p, out);
        }
    }

    /// `partialnewack_helper` and `partialnewack` (tcp-newreno.cc:61-105).
    fn newreno_partial_ack(&mut self, pkt: &Packet, ack: u64, now: SimTime, p: &TcpParams, out: &mut Output, sample: &mut Ack) {
        let deflate = (ack - self.snd_una).div_ceil(self.w.mss);
        let ns = self.ns();
        if ns.dupwnd > deflate {
            ns.dupwnd -= deflate - 1;
        } else {
            // "Leave dupwnd_ > 0 to flag fast recovery".
            let take = (deflate - ns.dupwnd) as f64;
            ns.dupwnd = 1;
            let cwnd = self.cc.segments(&self.w) - take;
            self.cc.set_segments(&mut self.w, cwnd);
        }
        if self.cc.segments(&self.w) < 1.0 {
            self.cc.set_segments(&mut self.w, 1.0);
        }
        let ns = self.ns();
        if p.partial_ack_timer == PartialAckTimer::SlowButSteady || !ns.partial_seen {
            self.rto_timer.set(now + self.rtt.rto());
        }
        self.ns().partial_seen = true;
        let r = Self::echo_sample(pkt, now, p);
        self.rtt.on_partial_ack(ack, r, now, p.rto_bounds());
        sample.rtt = r;
        self.ns2_advance(ack, sample);
        self.send_segment(self.snd_una, now, p, out);
    }
}
