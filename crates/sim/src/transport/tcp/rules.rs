//! The `tcp` table's rule keys: for each rule of the sender, which of two
//! implementations a class follows — the RFCs' (the default, what cclab always
//! did) or ns-2.35's one-way agents' (`preset = "ns2"`; docs/protocols.md,
//! "Presets", lists each with its ns-2 variable and source line).
use crate::engine::SimTime;
use crate::settings::{describe, err, Duration, Read, Result, Size, Table};
use serde::{Deserialize, Serialize};

/// How the congestion window grows (`window_arithmetic`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowArithmetic {
    /// RFC 5681 in whole bytes: slow start += min(acked, SMSS), congestion
    /// avoidance += SMSS²/cwnd per ACK (RFC 3465 with `byte_counting`).
    #[default]
    Bytes,
    /// ns-2's `opencwnd()` (windowOption_ 1): cwnd a real number of segments,
    /// +1 per ACK of new data in slow start, +1/cwnd in congestion avoidance.
    Ns2,
}

/// What a timeout does to ssthresh when it was already reduced for this window
/// of data (`timeout_ssthresh`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutSsthresh {
    /// RFC 5681 §3.1: a repeated timeout (or one during fast recovery) keeps it.
    #[default]
    Hold,
    /// ns-2's `timeout()`: every timeout halves the window (`slowdown`), so a
    /// second one in a row sets ssthresh to 2 segments.
    Halve,
}

/// How the retransmission timeout is estimated (`rtt_estimator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttRule {
    /// RFC 6298 with a sample from every ACK of new data (Karn's rule).
    #[default]
    Rfc6298,
    /// ns-2's: one timed segment per window, in `clock_tick` ticks (`transport/rtt/ns2.rs`).
    Ns2,
}

/// What a lost SYN does (`syn_timeout`; with `handshake`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SynTimeout {
    /// Resend it with the timer backed off; the window is untouched (ns-3, RFC 6298 §5).
    #[default]
    Retry,
    /// ns-2's: the SYN is segment 0, so its timeout is an ordinary timeout of a
    /// one-segment window (ssthresh 2 segments), and `bugfix_ss_` drops the
    /// initial window to one segment.
    Ns2,
}

/// Which loss recovery runs (`loss_recovery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// RFC 5681 / RFC 6582 (Reno or NewReno by the protocol), RFC 6675 with SACK.
    #[default]
    Rfc,
    /// ns-2.35's agents: `Agent/TCP/Reno` or `Agent/TCP/Newreno` by the protocol,
    /// `Agent/TCP/Sack1` with SACK (`transport/tcp/ns2/`).
    Ns2,
}

/// What the RFC 6675 sender keeps of the SACK information after a
/// retransmission timeout (`sack_after_timeout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SackAfterTimeout {
    /// Keep the SACKed segments (ns-3 3.44, Linux): only the others are resent.
    /// RFC 6675 §5.1 allows it only beside robust tests for reneging (Errata 1610).
    Keep,
    /// Turn off every SACKed bit (RFC 2018 §8's SHOULD, which RFC 6675 §5.1 keeps:
    /// the timeout may mean the receiver reneged): everything is resent unless the
    /// ACKs of the recovery SACK it again.
    #[default]
    Clear,
}

/// How the receiver builds the SACK option (`sack_option`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SackOptionSize {
    /// RFC 2018: kind and length, 8 bytes per block, padded to a multiple of 4
    /// (§3); every out-of-order range is remembered, to be reported again (§4).
    #[default]
    Rfc2018,
    /// ns-2's `Sacker::append_ack` (tcp-sink.cc:605-758): 8 bytes per block, and
    /// a stack of the last `maxSackBlocks_` blocks, so older ranges are forgotten.
    Ns2,
}

/// The slow-start threshold a connection starts with (`initial_ssthresh`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InitialSsthresh {
    /// None: slow start until the first loss (RFC 5681 §3.1's "arbitrarily high").
    #[default]
    None,
    /// This many bytes.
    Bytes(u64),
    /// The receiver's window (ns-2's `ssthresh_ = int(window_)`).
    ReceiveWindow,
}

/// The rule keys of one class, as read; the defaults are the RFC rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Round every flow up to whole segments (ns-2's one-way agents send
    /// ceil(size / packetSize_) full packets).
    pub whole_segments: bool,
    pub initial_ssthresh: InitialSsthresh,
    pub window_arithmetic: WindowArithmetic,
    pub timeout_ssthresh: TimeoutSsthresh,
    pub rtt_estimator: RttRule,
    /// The clock tick of ns-2's RTT estimator (`tcpTick_`).
    #[serde(rename = "clock_tick_ns")]
    pub clock_tick: SimTime,
    pub syn_timeout: SynTimeout,
    pub loss_recovery: LossRecovery,
    pub sack_after_timeout: SackAfterTimeout,
    /// Most SACK blocks an ACK carries (None: as many as the option space holds).
    pub sack_blocks: Option<u32>,
    pub sack_option: SackOptionSize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            whole_segments: false,
            initial_ssthresh: InitialSsthresh::None,
            window_arithmetic: WindowArithmetic::Bytes,
            timeout_ssthresh: TimeoutSsthresh::Hold,
            rtt_estimator: RttRule::Rfc6298,
            clock_tick: SimTime::from_millis(10),
            syn_timeout: SynTimeout::Retry,
            loss_recovery: LossRecovery::Rfc,
            sack_after_timeout: SackAfterTimeout::Clear,
            sack_blocks: None,
            sack_option: SackOptionSize::Rfc2018,
        }
    }
}

/// One of a rule key's names, or an error naming the key and the names it takes.
fn choice<T: Copy>(t: &mut Table, key: &'static str, names: &[(&str, T)], current: T) -> Result<T> {
    let Some(v) = t.get::<String>(key)? else { return Ok(current) };
    match names.iter().find(|(n, _)| *n == v) {
        Some(&(_, x)) => Ok(x),
        None => {
            let list: Vec<String> = names.iter().map(|(n, _)| format!("{n:?}")).collect();
            err(t.key_path(key), format!("expected {}, got {v:?}", list.join(" or ")))
        }
    }
}

impl Rules {
    /// ns-2.35's agents (`preset = "ns2"`).
    pub fn ns2() -> Rules {
        Rules {
            whole_segments: true,
            initial_ssthresh: InitialSsthresh::ReceiveWindow,
            window_arithmetic: WindowArithmetic::Ns2,
            timeout_ssthresh: TimeoutSsthresh::Halve,
            rtt_estimator: RttRule::Ns2,
            clock_tick: SimTime::from_millis(10),
            syn_timeout: SynTimeout::Ns2,
            loss_recovery: LossRecovery::Ns2,
            sack_after_timeout: SackAfterTimeout::Clear,
            sack_blocks: Some(3),
            sack_option: SackOptionSize::Ns2,
        }
    }

    /// Read the rule keys present in `t` over `self`.
    pub fn read(&mut self, t: &mut Table) -> Result<()> {
        self.whole_segments = t.or("whole_segments", self.whole_segments)?;
        self.window_arithmetic = choice(t, "window_arithmetic", &[("bytes", WindowArithmetic::Bytes), ("ns2", WindowArithmetic::Ns2)], self.window_arithmetic)?;
        self.timeout_ssthresh = choice(t, "timeout_ssthresh", &[("hold", TimeoutSsthresh::Hold), ("halve", TimeoutSsthresh::Halve)], self.timeout_ssthresh)?;
        self.rtt_estimator = choice(t, "rtt_estimator", &[("rfc6298", RttRule::Rfc6298), ("ns2", RttRule::Ns2)], self.rtt_estimator)?;
        self.syn_timeout = choice(t, "syn_timeout", &[("retry", SynTimeout::Retry), ("ns2", SynTimeout::Ns2)], self.syn_timeout)?;
        self.loss_recovery = choice(t, "loss_recovery", &[("rfc", LossRecovery::Rfc), ("ns2", LossRecovery::Ns2)], self.loss_recovery)?;
        self.sack_after_timeout = choice(t, "sack_after_timeout", &[("keep", SackAfterTimeout::Keep), ("clear", SackAfterTimeout::Clear)], self.sack_after_timeout)?;
        self.sack_option = choice(t, "sack_option", &[("rfc2018", SackOptionSize::Rfc2018), ("ns2", SackOptionSize::Ns2)], self.sack_option)?;
        if let Some(d) = t.get::<Duration>("clock_tick")? {
            if d.0 == SimTime::ZERO || d.0 > SimTime::from_secs(1) {
                return err(t.key_path("clock_tick"), format!("expected a tick from 1ns to 1s, got {}", d.0));
            }
            self.clock_tick = d.0;
        }
        if let Some(n) = t.get::<u32>("sack_blocks")? {
            if !(1..=4).contains(&n) {
                return err(t.key_path("sack_blocks"), format!("expected 1 to 4 blocks (the TCP option space holds 4), got {n}"));
            }
            self.sack_blocks = Some(n);
        }
        // initial_ssthresh: a size, "receive_window" or "none".
        if let Some(v) = t.raw("initial_ssthresh") {
            let path = t.key_path("initial_ssthresh");
            self.initial_ssthresh = match v.as_str() {
                Some("receive_window") => InitialSsthresh::ReceiveWindow,
                Some("none") => InitialSsthresh::None,
                _ => match Size::read(v, &path) {
                    Ok(s) if s.0 >= 1.0 => InitialSsthresh::Bytes(s.0.floor() as u64),
                    _ => return err(path, format!("expected a size like \"20KB\", \"receive_window\" or \"none\", got {}", describe(v))),
                },
            };
        }
        Ok(())
    }
}
