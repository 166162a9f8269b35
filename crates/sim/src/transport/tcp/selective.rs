//! SACK-based loss recovery (RFC 6675) with the window reduction of RFC 6675 §5
//! (halving) or of Proportional Rate Reduction (RFC 9937), and the receiver's
//! SACK blocks (RFC 2018).
//!
//! With SACK the sender always sends by pipe, the scoreboard's estimate of the
//! data in the network, as Linux (`tcp_packets_in_flight`) and ns-3
//! (`TcpSocketBase::AvailableWindow`) do: a segment leaves when cwnd − pipe is at
//! least one SMSS, chosen by NextSeg (RFC 6675 §4): a lost segment first (rule 1),
//! then new data (rule 2), then, in recovery, a segment below the highest SACKed
//! one (rule 3) and the rescue retransmission (rule 4, optional). Outside
//! recovery this is limited transmit's effect (RFC 3042): each SACKed segment
//! makes room for a new one.
use super::prr::Prr;
use super::scoreboard::Scoreboard;
use super::{Output, RecoveryRule, Tcp, TcpParams};
use crate::engine::SimTime;
use crate::net::Packet;
use crate::transport::cc::{Congestion, CongestionControl};

/// The RFC 6675 sender's state (the receiver's SACK blocks are in `SackOption`).
#[derive(Clone, Debug)]
pub struct Selective {
    /// What the receiver holds, what is lost, what was resent.
    pub board: Scoreboard,
    /// PRR's state during a recovery with `recovery = "prr"`.
    pub prr: Option<Prr>,
}

impl Selective {
    pub fn new(mss: u64, size: u64, dupthresh: u32) -> Self {
        Selective { board: Scoreboard::new(mss, size, dupthresh), prr: None }
    }
}

impl Tcp {
    #[inline]
    fn sel(&mut self) -> &mut Selective {
        self.selective.as_deref_mut().expect("a SACK connection")
    }

    /// pipe (RFC 6675 SetPipe).
    #[inline]
    pub(super) fn pipe(&self) -> u64 {
        let sel = self.selective.as_deref().expect("a SACK connection");
        sel.board.pipe(self.snd_una, self.snd_max)
    }

    /// Send while cwnd − pipe ≥ 1 SMSS, each segment chosen by NextSeg.
    pub(super) fn try_send_selective(&mut self, now: SimTime, p: &TcpParams, out: &mut Output) {
        let mss = self.w.mss;
        let in_recovery = self.recovery.active;
        let recovery_point = self.recovery.recover.unwrap_or(0);
        loop {
            if self.pipe() + mss > self.w.cwnd {
                break;
            }
            let (una, snd_max, size) = (self.snd_una, self.snd_max, self.size);
            let new_fits = snd_max < size && snd_max + self.seg_len(snd_max, p) <= una.saturating_add(p.rwnd());
            let board = &mut self.sel().board;
            let Some(seq) = board
                .next_retransmission(false)
                .or(new_fits.then_some(snd_max))
                .or_else(|| if in_recovery { board.next_retransmission(true) } else { None })
                .or_else(|| if in_recovery && p.rescue_retransmission { board.rescue(una, recovery_point) } else { None })
            else {
                break;
            };
            self.send_segment(seq, now, p, out);
            self.snd_nxt = self.snd_max;
        }
    }

    /// An ACK reaches a SACK sender (RFC 6675 §5).
    pub(super) fn on_ack_selective(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) {
        let ack = pkt.seq.min(self.snd_max);
        let mss = self.w.mss;
        let pipe_before = self.pipe();
        let mut sample = self.ack_sample(pkt, now, pipe_before, p);
        let was_in_recovery = self.recovery.active;
        let advanced = ack > self.snd_una;
        let acked = ack.saturating_sub(self.snd_una);
        if advanced {
            sample.rtt = self.rtt_sample(pkt, now, p);
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            sample.snd_una = ack;
            sample.snd_nxt = self.snd_nxt;
            self.timed_out_since_ack = false;
        }
        // Update() (RFC 6675 §4): the cumulative ACK, then the SACK blocks.
        let record = self.take_sack_record(pkt);
        let sel = self.sel();
        let (sacked_before, losses_before) = (sel.board.sacked_bytes(), sel.board.losses());
        sel.board.on_cumulative_ack(ack);
        let newly_sacked = record.map_or(0, |r| sel.board.on_sack(r.blocks()));
        // RFC 9937's DeliveredData: the change in snd_una plus the change in SACKed bytes.
        let delivered = acked + sel.board.sacked_bytes() - sacked_before;
        let new_loss = sel.board.losses() > losses_before;
        sample.bytes_acked = acked;
        sample.bytes_delivered = delivered;
        // RFC 6675 §2: an ACK that SACKs new data is a duplicate ACK, whether or not
        // it also advances the cumulative ACK (§5).
        let dupack = newly_sacked > 0;
        let mut restart_timer = advanced;
        if self.recovery.active {
            if advanced && self.recovery.recover.is_some_and(|r| ack >= r) {
                // (A) The ACK covers RecoveryPoint: recovery ends with cwnd = ssthresh
                // (RFC 6675 §5, RFC 9937 §6).
                self.recovery.active = false;
                self.recovery.dupacks = 0;
                self.w.cwnd = self.w.ssthresh.max(mss);
                self.sel().prr = None;
            } else {
                if advanced {
                    restart_timer = self.partial_ack_restarts_timer(p);
                }
                let (pipe, ssthresh, safe) = (self.pipe(), self.w.ssthresh, advanced && !new_loss);
                if let Some(prr) = self.sel().prr.as_mut() {
                    if let Some(cwnd) = prr.cwnd(delivered, pipe, ssthresh, safe, mss) {
                        self.w.cwnd = cwnd;
                    }
                }
            }
        } else {
            if dupack {
                self.recovery.dupacks += 1;
            } else if advanced {
                self.recovery.dupacks = 0;
            }
            // §5 steps 1-2: DupThresh duplicate ACKs, or IsLost(HighACK + 1); a new
            // recovery only once the cumulative ACK has reached the last RecoveryPoint (§5.1).
            let una = self.snd_una;
            let head_lost = self.sel().board.is_lost(una);
            if self.snd_max > self.snd_una
                && (self.recovery.dupacks >= p.dupack_threshold || head_lost)
                && self.recovery.recover.is_none_or(|r| self.snd_una >= r)
            {
                self.enter_recovery(delivered, now, p, out);
            }
        }
        sample.in_recovery = was_in_recovery || self.recovery.active;
        self.finish_ack(&mut sample, advanced.then_some(restart_timer), now);
        self.try_send(now, p, out);
        self.sync_cc_timer();
    }

    /// RFC 6675 §5 step 4: RecoveryPoint = HighData, ssthresh from the controller,
    /// cwnd by the recovery rule, and the first segment presumed lost goes out at once.
    fn enter_recovery(&mut self, delivered: u64, now: SimTime, p: &TcpParams, out: &mut Output) {
        let mss = self.w.mss;
        let flight = self.flight_for_ssthresh();
        self.w.ssthresh = self.cc.on_congestion(&self.w, Congestion::Loss, flight);
        self.recovery = super::Recovery { dupacks: self.recovery.dupacks, active: true, recover: Some(self.snd_max), partial_ack_seen: false };
        // RFC 9937: RecoverFS is pipe before the head is deemed lost.
        let recover_fs = self.pipe();
        let una = self.snd_una;
        let sel = self.sel();
        if !sel.board.is_lost(una) {
            // DupThresh duplicate ACKs without DupThresh SACKed segments above the
            // head (e.g. with ACK loss): deem it lost anyway, as ns-3 and Linux do.
            sel.board.mark_head_lost();
        }
        sel.board.on_recovery();
        match p.recovery {
            RecoveryRule::Halve => self.w.cwnd = self.w.ssthresh,
            RecoveryRule::Prr => {
                let mut prr = Prr::new(recover_fs);
                let pipe = self.pipe();
                // An entering ACK that delivered nothing new still lets the fast
                // retransmit out (RFC 9937 §5).
                self.w.cwnd = prr.cwnd(delivered, pipe, self.w.ssthresh, false, mss).unwrap_or(pipe + mss);
                self.sel().prr = Some(prr);
            }
        }
        // Step 4.3: retransmit the first segment presumed lost, whatever the window.
        self.send_segment(una, now, p, out);
    }

    /// A retransmission timeout with SACK (RFC 6675 §5.1): the SACKed bits are
    /// turned off (RFC 2018 §8; `sack_after_timeout = "keep"` keeps them, as ns-3
    /// and Linux do), every segment not SACKed is deemed lost and none counts as
    /// resent; recovery ends.
    pub(super) fn on_rto_selective(&mut self, p: &TcpParams) {
        let clear = p.rules.sack_after_timeout == super::rules::SackAfterTimeout::Clear;
        let sel = self.sel();
        sel.board.on_timeout(clear);
        sel.prr = None;
        self.snd_nxt = self.snd_max;
    }
}
