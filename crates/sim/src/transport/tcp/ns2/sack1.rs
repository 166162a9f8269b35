//! `Agent/TCP/Sack1` (tcp-sack1.cc, ns-default.tcl's `partial_ack_` false,
//! `LimTransmitFix_` false, `oldCode_` false), with `Agent/TCPSink/Sack1`'s blocks:
//!
//! * outside fast recovery, every ACK of new data clears the scoreboard and opens
//!   the window; a duplicate ACK counts only if its SACK blocks bring new
//!   information, and the third such retransmits (if `bug_fix_` allows it) with
//!   `pipe_` = the segments outstanding − 3 and cwnd_ = win/2;
//! * in recovery every ACK takes one from `pipe_` (a partial ACK two), and the
//!   sender sends while `pipe_ < int(cwnd_)`: first the next hole below a SACKed
//!   range not yet resent (each hole once: `h_seqno_`), then new data; a partial
//!   ACK restarts the timer and ends the backoff; the ACK at or beyond `recover_`
//!   ends recovery with cwnd_ unchanged (no `opencwnd()`), and `recover_` = 0;
//! * a timeout clears the scoreboard (the SACK information is forgotten),
//!   ignores duplicate ACKs until an ACK of new data (`timeout_`), and goes back N.
use super::scoreboard::HoleBoard;
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::tcp::{Output, TcpParams, Tcp};

/// Sack1's state beyond `TcpAgent`'s.
#[derive(Clone, Debug, Default)]
pub struct Sack1 {
    /// `fastrecov_`.
    pub fastrecov: bool,
    /// `timeout_`: since a timeout, until an ACK of new data; duplicate ACKs are ignored.
    after_timeout: bool,
    /// `pipe_`: segments in flight as fast recovery counts them.
    pub(super) pipe: i64,
    board: HoleBoard,
}

impl Sack1 {
    /// `Sack1TcpAgent::timeout` (tcp-sack1.cc:390-420), beside `TcpAgent`'s.
    pub fn on_timeout(&mut self) {
        self.fastrecov = false;
        self.after_timeout = true;
        self.board.clear();
    }
}

impl Tcp {
    #[inline]
    fn sack1(&mut self) -> &mut Sack1 {
        self.ns().sack1.as_mut().expect("a Sack1 sender")
    }

    /// `Sack1TcpAgent::recv` (tcp-sack1.cc:95-249).
    pub(super) fn on_ack_sack1(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        let ack = pkt.seq.min(self.snd_max);
        let record = self.take_sack_record(pkt);
        let blocks = record.as_ref().map_or(&[][..], |r| r.blocks());
        let mut sample = self.ack_sample(pkt, now, self.snd_max - self.snd_una, p);
        if !self.sack1().fastrecov {
            if ack > self.snd_una {
                self.ns2_newack(pkt, ack, now, p, &mut sample);
                self.sack1().after_timeout = false;
                self.sack1().board.clear();
                self.ns2_observe(&mut sample, false); // opencwnd()
            } else {
                let snd_una = self.snd_una;
                let s = self.sack1();
                if ack == snd_una && !s.after_timeout && s.board.update(snd_una, blocks) {
                    self.sack1_dupack(now, p, out);
                }
                self.ns2_observe(&mut sample, self.in_recovery());
            }
            if self.ns().dupacks == 0 {
                self.sack1_send_much(now, p, out);
            }
            return;
        }
        self.sack1().pipe -= 1;
        if self.ns().recover.is_some_and(|r| ack >= r) {
            // Recovery ends (newack(), no opencwnd()).
            self.ns().recover = None;
            let s = self.sack1();
            s.fastrecov = false;
            s.after_timeout = false;
            s.board.clear();
            self.ns2_newack(pkt, ack, now, p, &mut sample);
        } else if ack > self.snd_una {
            // A partial ACK: two from pipe_ (the resent segment and the one it
            // replaced), the timer restarted and the backoff ended.
            self.ns2_advance(ack, &mut sample);
            let s = self.sack1();
            s.board.update(ack, blocks);
            s.pipe -= 1;
            self.rto_timer.set(now + self.rtt.rto());
            let r = Self::echo_sample(pkt, now, p);
            self.rtt.on_sack1_partial_ack(ack, r, now, p.rto_bounds());
            sample.rtt = r;
        } else if !self.sack1().after_timeout {
            let snd_una = self.snd_una;
            self.sack1().board.update(snd_una, blocks);
        }
        self.ns2_observe(&mut sample, true);
        self.sack1_send_much(now, p, out);
    }

    /// A duplicate ACK with new SACK information outside recovery.
    fn sack1_dupack(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let snd_una = self.snd_una;
        let ns = self.ns();
        ns.dupacks += 1;
        if ns.dupacks < p.dupack_threshold {
            if p.limited_transmit {
                self.ns2_send_one(now, p, out);
            }
            return;
        }
        if ns.dupacks > p.dupack_threshold || !ns.may_fast_retransmit(snd_una) {
            return;
        }
        // dupack_action (tcp-sack1.cc:274-353): pipe_ = maxseq_ − highest_ack_ − numdupacks_.
        let outstanding = (self.snd_max - self.snd_una).div_ceil(self.w.mss) as i64;
        let (una, end) = (self.snd_una, self.snd_una + self.seg_len(self.snd_una, p));
        let s = self.sack1();
        s.pipe = outstanding - p.dupack_threshold as i64;
        s.fastrecov = true;
        s.board.mark_retransmitted(una, end);
        self.ns2_fast_retransmit(now, p, out);
    }

    /// `Sack1TcpAgent::send_much` (tcp-sack1.cc:422-490): outside recovery while
    /// `t_seqno_ <= highest_ack_ + window()`, in recovery while `pipe_ <
    /// int(cwnd_)`; a hole first, within the receiver's window, else new data
    /// (in recovery within the receiver's window only).
    pub(super) fn sack1_send_much(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let mss = self.w.mss;
        while self.snd_una < self.size {
            let fastrecov = self.sack1().fastrecov;
            let win = self.ns2_window(p);
            let open = if fastrecov { self.sack1().pipe < (self.w.cwnd / mss) as i64 } else { self.segments_to(self.snd_nxt) <= win };
            if !open {
                break;
            }
            let una = self.snd_una;
            let seq = match self.sack1().board.next_hole(una) {
                Some(h) if self.ns().recover.is_some() && self.segments_to(h) <= self.rwnd_segments(p) => {
                    let end = h + self.seg_len(h, p);
                    self.sack1().board.mark_retransmitted(h, end);
                    h
                }
                Some(_) => break,
                None => {
                    let limit = if fastrecov { self.rwnd_segments(p) } else { win };
                    if self.snd_nxt >= self.size || self.segments_to(self.snd_nxt) > limit {
                        break;
                    }
                    self.snd_nxt
                }
            };
            self.send_segment(seq, now, p, out);
            self.snd_nxt = self.snd_nxt.max(seq + self.seg_len(seq, p));
            self.sack1().pipe += 1;
        }
    }
}
