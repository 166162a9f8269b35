//! What a trace reads from a connection: the sender's variables, beyond the
//! public window and sequence numbers, and the SACK blocks of an ACK on its way.
use super::sack::SackRecord;
use super::Tcp;
use crate::transport::rtt::RtoEstimator;

/// The sender's recovery state, as a trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryState {
    /// No loss being repaired.
    Open = 0,
    /// Fast recovery (RFC 6582, or RFC 6675 with SACK), entered by duplicate ACKs.
    Fast = 1,
    /// After a retransmission timeout, until an ACK of new data (RFC 5681 §3.1, RFC 6298 §5).
    Timeout = 2,
}

impl Tcp {
    /// The data in the network the window limits: FlightSize (snd_nxt − snd_una,
    /// RFC 5681), or with SACK the scoreboard's pipe (RFC 6675), or in ns-2
    /// Sack1's fast recovery its `pipe_` in segments.
    pub fn in_flight(&self) -> u64 {
        if let Some(pipe) = self.ns2.as_deref().and_then(|n| n.sack1_pipe()) {
            return pipe * self.w.mss;
        }
        match self.selective.as_deref() {
            Some(sel) => sel.board.pipe(self.snd_una, self.snd_max),
            None => self.snd_nxt - self.snd_una,
        }
    }

    /// The recovery state.
    pub fn recovery_state(&self) -> RecoveryState {
        if self.in_recovery() {
            RecoveryState::Fast
        } else if self.timed_out_since_ack {
            RecoveryState::Timeout
        } else {
            RecoveryState::Open
        }
    }

    /// The RTT estimator (RFC 6298's or ns-2's, `tcp.rtt_estimator`).
    pub fn rtt_estimator(&self) -> &RtoEstimator {
        &self.rtt
    }

    /// Whether the connection uses SACK.
    pub fn has_sack(&self) -> bool {
        self.selective.is_some()
    }

    /// The SACK blocks of the ACK that carries record `id` (`Packet::sack`), while
    /// the ACK is on its way to the sender (None: no such record).
    pub fn sack_record(&self, id: u32) -> Option<SackRecord> {
        self.sack.as_deref().and_then(|s| s.log.peek(id).copied())
    }
}
