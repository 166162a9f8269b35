//! TCP parameters: the scenario's `[tcp]` table, overridden per class by the
//! class's `tcp = { ... }` table.
use super::rules::{InitialSsthresh, LossRecovery, Rules, SackAfterTimeout, SackOptionSize, WindowArithmetic};
use crate::engine::SimTime;
use crate::settings::{err, Duration, Result, Size, Table};
use serde::{Deserialize, Serialize};

/// The largest packet (payload plus header) a scenario may configure.
pub const MAX_PACKET_BYTES: u64 = 1_000_000;

/// RFC 6582 §4's two ways of restarting the retransmission timer on partial ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckTimer {
    /// Every partial ACK restarts the timer (Linux).
    #[default]
    SlowButSteady,
    /// Only the first partial ACK of a recovery restarts it (ns-3 3.44).
    Impatient,
}

/// How the window is reduced during SACK-based loss recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// cwnd = ssthresh on entering recovery (RFC 6675 §5 step 4.2); without SACK,
    /// NewReno's inflate and deflate (RFC 6582).
    #[default]
    Halve,
    /// Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937).
    Prr,
}

/// Which segments carry the timestamp option, and its size (`option_sizes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionSizes {
    /// RFC 7323: 12 bytes (10, padded to a multiple of 4) on every segment.
    #[default]
    Rfc7323,
    /// ns-2.35: `ts_option_size_` 10 bytes on data segments only
    /// (`TcpAgent::headersize`, tcp.cc:634); a SYN is `tcpip_base_hdr_size_`
    /// (tcp.cc:705) and a TCPSink's ACK its `packetSize_` of 40 bytes.
    Ns2,
}

/// A named set of TCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// ns-3 3.44's TcpSocketBase and TcpSocket defaults.
    Ns3,
    /// Linux's defaults (kernel 6.x).
    Linux,
    /// ns-2.35's one-way agents and sinks as ns-default.tcl sets them.
    Ns2,
}

/// TCP parameters of one class, in engine units.
///
/// In the canonical JSON a missing key takes its default (which is what a run
/// did before the key existed), so configurations saved by earlier versions load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpParams {
    /// Maximum segment size: payload bytes per data packet.
    pub mss: u32,
    /// Header bytes of every packet (IP + TCP); ACKs are header-only.
    pub header: u32,
    /// Initial congestion window, in segments (RFC 6928).
    pub initial_window: u32,
    /// Receiver's advertised window in bytes (flow control); None: unlimited.
    pub receive_window: Option<u64>,
    /// Lower bound of the retransmission timeout (RFC 6298 rule 2.4).
    #[serde(rename = "min_rto_ns")]
    pub min_rto: SimTime,
    /// Upper bound of the retransmission timeout.
    #[serde(rename = "max_rto_ns")]
    pub max_rto: SimTime,
    /// Timeout before the first RTT sample (RFC 6298 rule 2.1), at least `min_rto`.
    #[serde(rename = "initial_rto_ns")]
    pub initial_rto: SimTime,
    /// Acknowledge every second full segment (RFC 5681 §4.2) instead of every one.
    pub delayed_ack: bool,
    /// Longest an acknowledgment is delayed.
    #[serde(rename = "delayed_ack_timeout_ns")]
    pub delayed_ack_timeout: SimTime,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Open each connection with a SYN / SYN-ACK exchange before sending data.
    pub handshake: bool,
    /// RFC 3042 limited transmit on the first duplicate ACKs.
    pub limited_transmit: bool,
    /// Which partial ACKs of a NewReno recovery restart the retransmission timer.
    pub partial_ack_timer: PartialAckTimer,
    /// Selective acknowledgments (RFC 2018) and SACK-based loss recovery (RFC 6675).
    pub sack: bool,
    /// Window reduction during SACK-based recovery.
    pub recovery: Recovery,
    /// RFC 3465 appropriate byte counting with limit L segments (0: off, count
    /// ACKs; u32::MAX: no limit).
    pub byte_counting: u32,
    /// RFC 7323 timestamps: 12 option bytes on every segment, and an RTT sample from
    /// the echo of every ACK of new data, retransmissions included.
    pub timestamps: bool,
    /// RFC 6675's rescue retransmission (NextSeg rule 4), once per recovery.
    pub rescue_retransmission: bool,
    /// RFC 3168 ECN: new data segments are ECN-capable (ECT), so queues may mark
    /// them instead of dropping them (the receiver echoes CE and the sender
    /// answers ECN-Echo whatever this says).
    pub ecn: bool,
    /// Which implementation of each sender rule (the RFCs' or ns-2's) the class follows.
    pub rules: Rules,
    // --- ns-2.35's Agent/TCP/Linux (docs/protocols.md, TCP-LP's `ns2` variant)
    /// The SYN is segment 0, sent with the data of the initial window: ns-2's
    /// one-way agents with `syn_ true` and `delay_growth_ false` (Agent/TCP/Linux's
    /// default). It takes one segment of sequence space and of the window but
    /// only a header on the wire, and is acknowledged (and lost, and resent) as
    /// data; the flow's bytes follow it.
    pub syn_segment: bool,
    /// The timestamp option's bytes on data segments and on the others.
    pub option_sizes: OptionSizes,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            mss: 1460,
            header: 40,
            initial_window: 10,
            receive_window: None,
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_millis(60_000),
            initial_rto: SimTime::from_millis(1000),
            delayed_ack: false,
            delayed_ack_timeout: SimTime::from_millis(200),
            dupack_threshold: 3,
            handshake: false,
            limited_transmit: false,
            partial_ack_timer: PartialAckTimer::SlowButSteady,
            sack: false,
            recovery: Recovery::Halve,
            byte_counting: 0,
            timestamps: false,
            rescue_retransmission: true,
            ecn: false,
            rules: Rules::default(),
            syn_segment: false,
            option_sizes: OptionSizes::Rfc7323,
        }
    }
}

impl Preset {
    fn parse(name: &str) -> Option<Preset> {
        match name {
            "ns3" => Some(Preset::Ns3),
            "linux" => Some(Preset::Linux),
            "ns2" => Some(Preset::Ns2),
            _ => None,
        }
    }

    /// The parameters this preset sets (docs/protocols.md lists them with sources).
    pub fn params(self) -> TcpParams {
        match self {
            // ns-3 3.44: TcpSocket (SegmentSize 536, InitialCwnd 10, RcvBufSize 131072,
            // DelAckCount 2, DelAckTimeout 200 ms, ConnTimeout 3 s), TcpSocketBase
            // (Sack, Timestamp, LimitedTransmit on, MinRto 1 s, ReTxThreshold 3,
            // RTO doubling capped at 60 s), RttEstimator (initial estimate 1 s),
            // TcpL4Protocol (RecoveryType TcpPrrRecovery); every connection opens
            // with SYN / SYN-ACK; a recovery's timer restarts on its first partial
            // ACK only; no rescue retransmission (TcpTxBuffer::NextSeg, rule 4);
            // ECN off (TcpSocketBase::UseEcn Off).
            Preset::Ns3 => TcpParams {
                mss: 536,
                header: 40,
                initial_window: 10,
                receive_window: Some(131_072),
                min_rto: SimTime::from_secs(1),
                max_rto: SimTime::from_secs(60),
                initial_rto: SimTime::from_secs(1),
                delayed_ack: true,
                delayed_ack_timeout: SimTime::from_millis(200),
                dupack_threshold: 3,
                handshake: true,
                limited_transmit: true,
                partial_ack_timer: PartialAckTimer::Impatient,
                sack: true,
                recovery: Recovery::Prr,
                byte_counting: 0,
                timestamps: true,
                rescue_retransmission: false,
                ecn: false,
                // TcpSocketBase::ReTxTimeout: SetSentListLost(resetSack = !m_sackEnabled).
                rules: Rules { sack_after_timeout: SackAfterTimeout::Keep, ..Rules::default() },
                syn_segment: false,
                option_sizes: OptionSizes::Rfc7323,
            },
            // Linux 6.x: MSS 1448 with timestamps on a 1500-byte MTU, initial window
            // 10 (RFC 6928), receive buffer autotuning (no fixed window), TCP_RTO_MIN
            // 200 ms, TCP_RTO_MAX 120 s, initial RTO 1 s, quick ACKs then every second
            // segment with a 40 ms minimum delayed-ACK timer, tcp_reordering 3, SACK,
            // timestamps, PRR (tcp_cwnd_reduction), the timer rearmed on every ACK,
            // slow start and congestion avoidance counting delivered segments
            // without RFC 3465's limit, no RFC 6675 rescue retransmission (Linux
            // has tail loss probes instead); ECN off for connections it opens
            // (tcp_ecn = 2: accepted when the peer asks, never asked for).
            Preset::Linux => TcpParams {
                mss: 1448,
                header: 40,
                initial_window: 10,
                receive_window: None,
                min_rto: SimTime::from_millis(200),
                max_rto: SimTime::from_secs(120),
                initial_rto: SimTime::from_secs(1),
                delayed_ack: true,
                delayed_ack_timeout: SimTime::from_millis(40),
                dupack_threshold: 3,
                handshake: true,
                limited_transmit: true,
                partial_ack_timer: PartialAckTimer::SlowButSteady,
                sack: true,
                recovery: Recovery::Prr,
                byte_counting: u32::MAX,
                timestamps: true,
                rescue_retransmission: false,
                ecn: false,
                // tcp_enter_loss keeps the SACKed marks unless it detected reneging.
                rules: Rules { sack_after_timeout: SackAfterTimeout::Keep, ..Rules::default() },
                syn_segment: false,
                option_sizes: OptionSizes::Rfc7323,
            },
            Preset::Ns2 => Self::ns2(),
        }
    }

    /// ns-2.35 (tcl/lib/ns-default.tcl; docs/protocols.md lists every key with its
    /// ns-2 variable and source): `packetSize_` 1000 + `tcpip_base_hdr_size_` 40,
    /// `windowInit_` 2, `window_` 20 packets as the receiver's window and the first
    /// ssthresh, `minrto_` 0.2 s, `maxrto_` 60 s, `rtxcur_init_` 3 s, TCPSink's ACK
    /// per packet (TCPSink/DelAck's `interval_` 100 ms), `numdupacks_` 3, `syn_`
    /// with `delay_growth_`, `singledup_` 1, Newreno's `newreno_changes1_` 1 (the
    /// timer restarts on the first partial ACK only), no timestamps, no ECN, and
    /// ns-2's rules for everything else (`Rules::ns2`).
    fn ns2() -> TcpParams {
        TcpParams {
            mss: 1000,
            header: 40,
            initial_window: 2,
            receive_window: Some(20_000),
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(3),
            delayed_ack: false,
            delayed_ack_timeout: SimTime::from_millis(100),
            dupack_threshold: 3,
            handshake: true,
            limited_transmit: true,
            partial_ack_timer: PartialAckTimer::Impatient,
            sack: false,
            recovery: Recovery::Halve,
            byte_counting: 0,
            timestamps: false,
            rescue_retransmission: false,
            ecn: false,
            rules: Rules::ns2(),
            syn_segment: false,
            option_sizes: OptionSizes::Rfc7323,
        }
    }
}

impl TcpParams {
    /// Receiver's window in bytes (u64::MAX: unlimited).
    #[inline]
    pub fn rwnd(&self) -> u64 {
        self.receive_window.unwrap_or(u64::MAX)
    }

    /// Header bytes of every data packet: the IP + TCP header and, with
    /// timestamps, the option (`option_sizes`).
    #[inline]
    pub fn header_bytes(&self) -> u32 {
        let option = match (self.timestamps, self.option_sizes) {
            (false, _) => 0,
            (true, OptionSizes::Rfc7323) => 12,
            (true, OptionSizes::Ns2) => 10,
        };
        self.header.saturating_add(option)
    }

    /// Bytes of a header-only packet (ACK, SYN, SYN-ACK; SACK blocks come on top).
    #[inline]
    pub fn control_bytes(&self) -> u32 {
        match self.option_sizes {
            OptionSizes::Rfc7323 => self.header_bytes(),
            OptionSizes::Ns2 => self.header,
        }
    }

    /// Bytes on the wire of a full-sized data segment.
    pub fn max_packet(&self) -> u64 {
        self.mss as u64 + self.header_bytes() as u64
    }

    /// SACK blocks an ACK can carry: the TCP option space is 40 bytes, a SACK
    /// option 2 + 8 per block (RFC 2018 §3): 4 blocks, or 3 beside timestamps.
    pub fn max_sack_blocks(&self) -> usize {
        let fit = if self.timestamps { 3 } else { 4 };
        self.rules.sack_blocks.map_or(fit, |n| (n as usize).min(fit))
    }

    /// The RTO's bounds, (min_rto, max_rto).
    #[inline]
    pub fn rto_bounds(&self) -> (SimTime, SimTime) {
        (self.min_rto, self.max_rto)
    }

    /// How many blocks the receiver remembers to report again: all of them
    /// (RFC 2018 §4), or as many as an ACK carries (ns-2's `Sacker`).
    pub fn sack_memory(&self) -> Option<usize> {
        (self.rules.sack_option == SackOptionSize::Ns2).then(|| self.max_sack_blocks())
    }

    /// The slow-start threshold a connection starts with (u64::MAX: none).
    pub fn initial_ssthresh(&self) -> u64 {
        match self.rules.initial_ssthresh {
            InitialSsthresh::None => u64::MAX,
            InitialSsthresh::Bytes(b) => b,
            InitialSsthresh::ReceiveWindow => self.rwnd(),
        }
    }

    /// Check the parameters; on failure, the key at fault and what is wrong.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, String)> {
        let fail = |k: &'static str, m: String| Err((k, m));
        if self.mss == 0 {
            return fail("mss", "expected a positive number of bytes, got 0".into());
        }
        if self.max_packet() > MAX_PACKET_BYTES {
            return fail("mss+header", format!("mss + header is {} bytes; a packet may have at most {MAX_PACKET_BYTES}", self.max_packet()));
        }
        if self.initial_window == 0 {
            return fail("initial_window", "expected at least 1 segment, got 0".into());
        }
        if self.dupack_threshold == 0 {
            return fail("dupack_threshold", "expected at least 1, got 0".into());
        }
        if self.min_rto == SimTime::ZERO {
            return fail("min_rto", "expected a positive duration, got 0".into());
        }
        if self.max_rto < self.min_rto {
            return fail("max_rto", format!("must be at least min_rto ({})", self.min_rto));
        }
        if self.max_rto > SimTime::LONGEST {
            return fail("max_rto", "must be at most 1e9s".into());
        }
        if self.initial_rto < self.min_rto || self.initial_rto > self.max_rto {
            return fail("initial_rto", format!("must be from min_rto to max_rto, got {}", self.initial_rto));
        }
        if self.delayed_ack && self.delayed_ack_timeout == SimTime::ZERO {
            return fail("delayed_ack_timeout", "expected a positive duration with delayed_ack = true".into());
        }
        if self.delayed_ack_timeout > SimTime::LONGEST {
            return fail("delayed_ack_timeout", "must be at most 1e9s".into());
        }
        if let Some(w) = self.receive_window {
            if w < self.mss as u64 {
                return fail("receive_window", format!("expected at least one segment ({} bytes), got {w} bytes", self.mss));
            }
        }
        if self.recovery == Recovery::Prr && !self.sack {
            return fail("recovery", "\"prr\" needs sack = true (without SACK, recovery is NewReno's or Reno's)".into());
        }
        if self.syn_segment && self.handshake {
            return fail("syn_segment", "is a SYN sent with the data; it cannot be combined with handshake = true".into());
        }
        self.validate_rules()
    }

    /// Combinations of the rule keys that have no meaning.
    fn validate_rules(&self) -> std::result::Result<(), (&'static str, String)> {
        let r = &self.rules;
        let ns2 = r.loss_recovery == LossRecovery::Ns2;
        if ns2 && self.recovery == Recovery::Prr {
            return Err(("recovery", "\"prr\" has no meaning with loss_recovery = \"ns2\" (Sack1 keeps its own pipe)".into()));
        }
        if ns2 && self.ecn {
            return Err(("ecn", "ns-2's ECN response is not modelled: use loss_recovery = \"rfc\" with ecn = true".into()));
        }
        if r.window_arithmetic == WindowArithmetic::Ns2 && self.byte_counting != 0 {
            return Err(("byte_counting", "byte counting needs window_arithmetic = \"bytes\" (ns-2 grows by ACKs)".into()));
        }
        Ok(())
    }

    /// Read a `tcp` table: `base` with the keys present replaced, then checked.
    pub fn read(mut t: Table, base: &TcpParams) -> Result<TcpParams> {
        let mut p = match t.get::<String>("preset")? {
            Some(name) => match Preset::parse(&name) {
                Some(preset) => preset.params(),
                None => return err(t.key_path("preset"), format!("unknown preset {name:?}; expected \"ns3\", \"linux\" or \"ns2\"")),
            },
            None => base.clone(),
        };
        let base = &p.clone();
        p.mss = t.or("mss", p.mss)?;
        p.header = t.or("header", p.header)?;
        p.initial_window = t.or("initial_window", p.initial_window)?;
        let rwnd = t.get::<Size>("receive_window")?;
        p.min_rto = t.get::<Duration>("min_rto")?.map_or(p.min_rto, |d| d.0);
        p.max_rto = t.get::<Duration>("max_rto")?.map_or(p.max_rto, |d| d.0);
        let initial_rto = t.get::<Duration>("initial_rto")?;
        p.delayed_ack = t.or("delayed_ack", p.delayed_ack)?;
        p.delayed_ack_timeout = t.get::<Duration>("delayed_ack_timeout")?.map_or(p.delayed_ack_timeout, |d| d.0);
        p.dupack_threshold = t.or("dupack_threshold", p.dupack_threshold)?;
        p.handshake = t.or("handshake", p.handshake)?;
        p.limited_transmit = t.or("limited_transmit", p.limited_transmit)?;
        p.sack = t.or("sack", p.sack)?;
        match t.get::<String>("recovery")? {
            Some(v) => {
                p.recovery = match v.as_str() {
                    "halve" => Recovery::Halve,
                    "prr" => Recovery::Prr,
                    other => return err(t.key_path("recovery"), format!("expected \"prr\" or \"halve\", got {other:?}")),
                }
            }
            // PRR from a preset or the scenario's [tcp] has nothing to act on once
            // SACK is turned off: without SACK the recovery is NewReno's or Reno's.
            None if !p.sack => p.recovery = Recovery::Halve,
            None => {}
        }
        p.byte_counting = t.or("byte_counting", p.byte_counting)?;
        p.timestamps = t.or("timestamps", p.timestamps)?;
        p.rescue_retransmission = t.or("rescue_retransmission", p.rescue_retransmission)?;
        p.ecn = t.or("ecn", p.ecn)?;
        p.rules.read(&mut t)?;
        p.syn_segment = t.or("syn_segment", p.syn_segment)?;
        if let Some(v) = t.get::<String>("option_sizes")? {
            p.option_sizes = match v.as_str() {
                "rfc7323" => OptionSizes::Rfc7323,
                "ns2" => OptionSizes::Ns2,
                other => return err(t.key_path("option_sizes"), format!("expected \"rfc7323\" or \"ns2\", got {other:?}")),
            };
        }
        if let Some(v) = t.get::<String>("partial_ack_timer")? {
            p.partial_ack_timer = match v.as_str() {
                "slow_but_steady" => PartialAckTimer::SlowButSteady,
                "impatient" => PartialAckTimer::Impatient,
                other => {
                    return err(t.key_path("partial_ack_timer"), format!("expected \"slow_but_steady\" or \"impatient\", got {other:?}"))
                }
            };
        }
        if let Some(d) = initial_rto {
            if d.0 > p.max_rto {
                return err(t.key_path("initial_rto"), format!("must be at most max_rto ({}), got {}", p.max_rto, d.0));
            }
            p.initial_rto = d.0;
        }
        if let Some(w) = rwnd {
            if w.0 < p.mss as f64 {
                return err(t.key_path("receive_window"), format!("expected at least one segment ({} bytes), got {} bytes", p.mss, w.0));
            }
            p.receive_window = Some(w.0.floor() as u64);
        }
        // RFC 6298's lower bound applies to the first timeout too.
        p.initial_rto = p.initial_rto.max(p.min_rto).min(p.max_rto);
        if let Err((key, msg)) = p.validate() {
            let key = if key == "mss+header" { if p.mss != base.mss { "mss" } else { "header" } } else { key };
            return err(t.key_path(key), msg);
        }
        t.finish("a tcp table")?;
        Ok(p)
    }
}
