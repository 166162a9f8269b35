//! The TCP machinery shared by every window-based controller: byte sequence
//! space, ACK clocking, fast retransmit and NewReno fast recovery with partial ACKs
//! (RFC 5681 §3.2, RFC 6582, the "Slow-but-Steady" timer variant or, as an option,
//! "Impatient"), optional limited transmit (RFC 3042), the retransmission timeout
//! (RFC 6298), ECN's TCP side (RFC 3168 §6.1: ECE echoed until CWR, one window
//! reduction per window of data), and cumulative ACKs with optional delayed ACKs
//! (RFC 5681 §4.2). With `TcpParams::sack`, selective acknowledgments (RFC 2018)
//! and SACK-based loss recovery (RFC 6675) with the halving of RFC 6675 §5 or
//! Proportional Rate Reduction (RFC 9937) replace NewReno's recovery
//! (`selective.rs`). Optionally (`TcpParams::handshake`) a connection opens with a
//! SYN / SYN-ACK exchange as in ns-3 (RFC 9293 §3.5), and (`TcpParams::timestamps`)
//! every segment carries RFC 7323 timestamps. With `loss_recovery = "ns2"` the
//! sender is ns-2.35's `Agent/TCP/Reno`, `Agent/TCP/Newreno` or `Agent/TCP/Sack1`
//! instead (`ns2/`), and each rule of `tcp::rules` chooses between the RFCs' and
//! ns-2's arithmetic (`preset = "ns2"` chooses ns-2's throughout).
//!
//! Both endpoints of one connection live in one `Tcp` value: the sending side in
//! `sender.rs`, the receiving side in `receiver.rs`; the simulator moves the
//! packets between them. The congestion controller (`transport::cc`) only steers
//! the window. Timers are [`Timer`] deadlines the simulator turns into events.
mod ns2;
mod observe;
mod params;
mod prr;
mod ranges;
mod receiver;
mod rules;
mod sack;
mod scoreboard;
mod selective;
mod sender;

pub use observe::RecoveryState;
pub use sack::SackRecord;
pub use params::{PartialAckTimer, Preset, Recovery as RecoveryRule, TcpParams, MAX_PACKET_BYTES};
pub use rules::{InitialSsthresh, LossRecovery, RttRule, Rules, SackAfterTimeout, SackOptionSize, SynTimeout, TimeoutSsthresh, WindowArithmetic};

use super::cc::{Cc, Window};
use super::endpoints::Endpoints;
use super::rtt::{Ns2Ticks, Rfc6298, RtoEstimator};
use crate::engine::{SimTime, Timer};
use crate::net::Packet;
use ns2::Ns2Sender;
use ranges::SegmentSet;
use sack::SackOption;
use selective::Selective;

/// Packets a call wants sent, in order.
pub type Output = Vec<Packet>;

/// The sender's loss-recovery state (RFC 5681 §3.2, RFC 6582).
#[derive(Clone, Copy, Debug, Default)]
struct Recovery {
    dupacks: u32,
    active: bool,
    /// RFC 6582's `recover`: the highest sequence sent when recovery (or a timeout) began.
    recover: Option<u64>,
    /// A partial ACK has already restarted the timer in this recovery (RFC 6582 "Impatient").
    partial_ack_seen: bool,
}

/// One connection: sender state and receiver state.
#[derive(Clone, Debug)]
pub struct Tcp {
    pub ep: Endpoints,
    /// Sequence bytes to transfer: the flow's bytes after `syn` (u64::MAX: a
    /// long-lived flow that always has data).
    pub size: u64,
    /// Sequence bytes of a SYN sent as segment 0 (`tcp.syn_segment`): one MSS, or 0.
    pub syn: u64,
    // --- sender
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub cc: Cc,
    pub w: Window,
    recovery: Recovery,
    rtt: RtoEstimator,
    timed_out_since_ack: bool,
    /// ECN: the highest sequence sent when the window was last reduced for ECE
    /// (one reduction per window of data), and whether the next segment carries CWR.
    ecn_recover: u64,
    cwr_pending: bool,
    /// The receiver's CE count (`Packet::ce`) on the latest ACK: the next ACK's
    /// count minus this is the number of CE-marked segments it newly reports.
    ce_seen: u8,
    pub rto_timer: Timer,
    /// The controller's own deadline.
    pub cc_timer: Timer,
    pub retransmits: u32,
    /// The end of the highest segment ever retransmitted: an ACK that moves
    /// `snd_una` from below it acknowledges retransmitted data.
    retx_high: u64,
    pub timeouts: u32,
    /// The SYN-ACK has arrived (from the start without a handshake); no data before.
    pub established: bool,
    /// `tcp.byte_counting`, passed to the controller with every ACK.
    byte_counting: u32,
    /// `tcp.window_arithmetic = "ns2"`, passed to the controller with every ACK.
    ns2_arithmetic: bool,
    /// The RFC 6675 sender's SACK state (present with `tcp.sack` and the RFC recovery).
    selective: Option<Box<Selective>>,
    /// ns-2.35's sender (present with `loss_recovery = "ns2"`).
    ns2: Option<Box<Ns2Sender>>,
    /// The receiver's SACK blocks and the log that carries them (present with `tcp.sack`).
    sack: Option<Box<SackOption>>,
    // --- receiver
    pub rcv_nxt: u64,
    ooo: SegmentSet,
    unacked: u32,
    echo_ts: SimTime,
    echo_retx: bool,
    echo_pending: bool,
    last_owd: SimTime,
    ece_pending: bool,
    /// CE-marked data segments received, modulo 256 (carried on every ACK).
    ce_count: u8,
    pub delack_timer: Timer,
}

impl Tcp {
    /// A connection at sequence 0; `open` starts it. With `whole_segments` the
    /// flow is rounded up to whole segments (ns-2 sends only full packets).
    pub fn new(ep: Endpoints, size: u64, cc: Cc, p: &TcpParams) -> Tcp {
        let mss = p.mss as u64;
        let size = if p.rules.whole_segments && size != u64::MAX { size.div_ceil(mss) * mss } else { size };
        let ns2 = p.rules.loss_recovery == LossRecovery::Ns2;
        let syn = if p.syn_segment { mss } else { 0 };
        let size = size.saturating_add(syn);
        Tcp {
            ep,
            size,
            syn,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cc,
            w: Window { cwnd: p.initial_window as u64 * mss, ssthresh: p.initial_ssthresh(), mss },
            recovery: Recovery::default(),
            rtt: match p.rules.rtt_estimator {
                RttRule::Rfc6298 => RtoEstimator::Rfc6298(Rfc6298::new(p.initial_rto)),
                RttRule::Ns2 => RtoEstimator::Ns2(Box::new(Ns2Ticks::new(p.rules.clock_tick, SimTime::ZERO, p.initial_rto, p.min_rto, p.max_rto, p.timestamps))),
            },
            timed_out_since_ack: false,
            ecn_recover: 0,
            cwr_pending: false,
            ce_seen: 0,
            rto_timer: Timer::default(),
            cc_timer: Timer::default(),
            retransmits: 0,
            retx_high: 0,
            timeouts: 0,
            established: !p.handshake,
            byte_counting: p.byte_counting,
            ns2_arithmetic: p.rules.window_arithmetic == WindowArithmetic::Ns2,
            selective: (p.sack && !ns2).then(|| Box::new(Selective::new(mss, size, p.dupack_threshold))),
            ns2: ns2.then(|| Box::new(Ns2Sender::new(p.sack))),
            sack: p.sack.then(|| Box::new(SackOption::default())),
            rcv_nxt: 0,
            ooo: SegmentSet::default(),
            unacked: 0,
            echo_ts: SimTime::ZERO,
            echo_retx: false,
            echo_pending: false,
            last_owd: SimTime::ZERO,
            ece_pending: false,
            ce_count: 0,
            delack_timer: Timer::default(),
        }
    }

    /// The sender has every byte acknowledged.
    #[inline]
    pub fn sender_done(&self) -> bool {
        self.snd_una >= self.size
    }

    /// The receiver holds every byte.
    #[inline]
    pub fn receiver_done(&self) -> bool {
        self.rcv_nxt >= self.size
    }

    /// The flow's bytes the receiver holds in order (the SYN's segment excluded).
    #[inline]
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt.saturating_sub(self.syn)
    }

    /// The sender is in fast recovery.
    pub fn in_recovery(&self) -> bool {
        match &self.ns2 {
            Some(n) => n.in_recovery(),
            None => self.recovery.active,
        }
    }

    /// ns-2's `boot_time_`: where between two ticks of `tcp.clock_tick` this
    /// sender's clock started (the simulator draws it from the flow's own random
    /// stream). Only ns-2's RTT estimator reads it.
    pub fn set_clock_phase(&mut self, phase: SimTime) {
        if let RtoEstimator::Ns2(e) = &mut self.rtt {
            e.set_boot(phase);
        }
    }

    /// Current retransmission timeout.
    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }

    /// Smoothed RTT (None before the first sample).
    pub fn srtt(&self) -> Option<SimTime> {
        self.rtt.srtt()
    }

    /// The SACK blocks an arriving ACK carries (read from the log; None without).
    fn take_sack_record(&mut self, pkt: &Packet) -> Option<sack::SackRecord> {
        self.sack.as_deref_mut().and_then(|s| s.take(pkt.sack))
    }

    /// A header-only packet (SYN, SYN-ACK, ACK) on the data or ACK route.
    fn control(&self, route: u32, seq: u64, ts: SimTime, flags: u8, p: &TcpParams) -> Packet {
        Packet {
            seq,
            ts,
            owd: 0,
            sack: 0,
            flow: self.ep.flow,
            conn: self.ep.conn,
            len: 0,
            size: p.control_bytes(),
            route,
            hop: 0,
            flags,
            ce: 0,
        }
    }
}

#[cfg(test)]
mod recovery_tests;
#[cfg(test)]
mod tests;
