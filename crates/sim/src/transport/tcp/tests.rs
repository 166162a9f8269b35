//! The TCP machinery against RFC arithmetic, driven by hand.
use super::*;
use crate::transport::endpoints::Endpoints;
use crate::net::packet::{ACK, RETX, SYN};
use crate::transport::cc::{Cc, NewReno};

const MSS: u64 = 1000;

fn params() -> TcpParams {
    TcpParams { mss: MSS as u32, initial_window: 4, ..TcpParams::default() }
}

const EP: Endpoints = Endpoints { flow: 0, conn: 0, class: 0, data_route: 0, ack_route: 1 };

fn conn(size: u64) -> Tcp {
    Tcp::new(EP, size, Cc::NewReno(NewReno::default()), &params())
}

fn ack(seq: u64, ts: SimTime, retx: bool) -> Packet {
    Packet { seq, ts, owd: 0, sack: 0, flow: 0, conn: 0, len: 0, size: 40, route: 1, hop: 0, flags: ACK | if retx { RETX } else { 0 } }
}

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

#[test]
fn slow_start_then_congestion_avoidance() {
    let p = params();
    let mut t = conn(u64::MAX);
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out);
    assert_eq!(out.len(), 4); // initial window
    out.clear();
    t.on_ack(&ack(1000, ms(0), false), ms(100), &p, &mut out);
    // Slow start: +1 MSS per ACK of one MSS, and two segments go out.
    assert_eq!(t.w.cwnd, 5 * MSS);
    assert_eq!(out.len(), 2);
    // Congestion avoidance: +MSS*MSS/cwnd per ACK.
    t.w.ssthresh = 5 * MSS;
    t.on_ack(&ack(2000, ms(0), false), ms(100), &p, &mut out);
    assert_eq!(t.w.cwnd, 5 * MSS + MSS * MSS / (5 * MSS));
}

#[test]
fn rtt_estimator_and_karn() {
    let p = params();
    let mut t = conn(u64::MAX);
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out);
    // First sample R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 300 ms (RFC 6298 2.2).
    t.on_ack(&ack(1000, ms(0), false), ms(100), &p, &mut out);
    assert_eq!(t.rto(), ms(300));
    assert_eq!(t.srtt(), Some(ms(100)));
    // An ACK echoing a retransmission gives no sample (Karn): RTO unchanged.
    t.on_ack(&ack(2000, ms(0), true), ms(900), &p, &mut out);
    assert_eq!(t.rto(), ms(300));
    // Second sample R' = 50 ms: RTTVAR = 3/4*50 + 1/4*|100-50| = 50, SRTT = 93.75, RTO = 293.75 ms.
    t.on_ack(&ack(3000, ms(950), false), ms(1000), &p, &mut out);
    assert_eq!(t.rto(), SimTime(293_750_000));
}

#[test]
fn fast_retransmit_partial_and_full_ack() {
    let p = params();
    let mut t = conn(u64::MAX);
    t.w.cwnd = 10 * MSS;
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out);
    assert_eq!(out.len(), 10); // segments 0..10 out; 0 and 5 will be lost
    out.clear();
    for _ in 0..2 {
        t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
    }
    assert!(!t.in_recovery() && out.is_empty());
    t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
    // Third duplicate: ssthresh = FlightSize/2 = 5 MSS, retransmit segment 0,
    // cwnd = ssthresh + 3 MSS (RFC 5681 3.2 / RFC 6582).
    assert!(t.in_recovery());
    assert_eq!(t.w.ssthresh, 5 * MSS);
    assert_eq!(t.w.cwnd, 8 * MSS);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 0);
    assert_ne!(out[0].flags & RETX, 0);
    out.clear();
    // Another duplicate inflates cwnd by one MSS; flight (10) still exceeds it.
    t.on_ack(&ack(0, ms(0), false), ms(51), &p, &mut out);
    assert_eq!(t.w.cwnd, 9 * MSS);
    assert!(out.is_empty());
    // Partial ACK up to the second hole (5000): retransmit it, deflate by the
    // 5 MSS acknowledged and add one back.
    t.on_ack(&ack(5000, ms(50), true), ms(100), &p, &mut out);
    assert!(t.in_recovery());
    assert_eq!(out[0].seq, 5000);
    assert_eq!(t.w.cwnd, 9 * MSS - 5 * MSS + MSS);
    out.clear();
    // Full ACK (covers `recover` = 10000): leave recovery with cwnd = ssthresh.
    t.on_ack(&ack(10_000, ms(100), true), ms(150), &p, &mut out);
    assert!(!t.in_recovery());
    assert_eq!(t.w.cwnd, 5 * MSS);
}

#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack() {
    let p = TcpParams { limited_transmit: true, ..params() };
    let mut t = conn(u64::MAX);
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out);
    assert_eq!(out.len(), 4); // cwnd = 4 MSS: segments 0..4, segment 0 lost
    out.clear();
    // First and second duplicate ACKs: one new segment each (RFC 3042), cwnd unchanged.
    t.on_ack(&ack(0, ms(0), false), ms(50), &p, &mut out);
    assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![4 * MSS]);
    t.on_ack(&ack(0, ms(0), false), ms(51), &p, &mut out);
    assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![4 * MSS, 5 * MSS]);
    assert_eq!(t.w.cwnd, 4 * MSS);
    assert_eq!(out.iter().filter(|s| s.flags & RETX != 0).count(), 0);
    out.clear();
    // Third: fast retransmit. FlightSize for ssthresh is capped by cwnd (4 MSS): ssthresh 2 MSS.
    t.on_ack(&ack(0, ms(0), false), ms(52), &p, &mut out);
    assert!(t.in_recovery());
    assert_eq!(out[0].seq, 0);
    assert_ne!(out[0].flags & RETX, 0);
    assert_eq!(t.w.ssthresh, 2 * MSS);
    // Without the option the early duplicates send nothing.
    let q = params();
    let mut u = conn(u64::MAX);
    let mut o = Vec::new();
    u.try_send(ms(0), &q, &mut o);
    o.clear();
    u.on_ack(&ack(0, ms(0), false), ms(50), &q, &mut o);
    u.on_ack(&ack(0, ms(0), false), ms(51), &q, &mut o);
    assert!(o.is_empty());
    // The receiver's window still binds: with rwnd = 4 MSS nothing new may go out.
    let r = TcpParams { limited_transmit: true, receive_window: Some(4 * MSS), ..params() };
    let mut v = conn(u64::MAX);
    let mut o = Vec::new();
    v.try_send(ms(0), &r, &mut o);
    o.clear();
    v.on_ack(&ack(0, ms(0), false), ms(50), &r, &mut o);
    assert!(o.is_empty());
}

#[test]
fn impatient_timer_restarts_on_the_first_partial_ack_only() {
    for impatient in [false, true] {
        let p = TcpParams { partial_ack_timer: if impatient { PartialAckTimer::Impatient } else { PartialAckTimer::SlowButSteady }, ..params() };
        let mut t = conn(u64::MAX);
        t.w.cwnd = 10 * MSS;
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out); // segments 0..10; 0, 3 and 6 lost
        // First sample R = 100 ms: RTO 300 ms.
        for k in 0..3 {
            t.on_ack(&ack(0, ms(0), false), ms(100 + k), &p, &mut out);
        }
        assert!(t.in_recovery());
        t.on_ack(&ack(3000, ms(0), true), ms(200), &p, &mut out); // first partial ACK
        assert_eq!(t.rto_timer.deadline(), Some(ms(200) + t.rto()));
        t.on_ack(&ack(6000, ms(0), true), ms(300), &p, &mut out); // second partial ACK
        let expect = if impatient { ms(200) + t.rto() } else { ms(300) + t.rto() };
        assert_eq!(t.rto_timer.deadline(), Some(expect), "impatient = {impatient}");
        // A full ACK restarts it in both variants (RFC 6298 rule 5.3).
        t.on_ack(&ack(10_000, ms(0), true), ms(400), &p, &mut out);
        assert!(!t.in_recovery());
    }
}

#[test]
fn timeout_during_recovery_keeps_the_halved_ssthresh() {
    let p = params();
    let mut t = conn(u64::MAX);
    t.w.cwnd = 10 * MSS;
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out); // segments 0..10, 0 lost
    for k in 0..3 {
        t.on_ack(&ack(0, ms(0), false), ms(100 + k), &p, &mut out);
    }
    assert_eq!(t.w.ssthresh, 5 * MSS);
    // Duplicate ACKs inflate cwnd and clock out new data: FlightSize grows too.
    for k in 0..20 {
        t.on_ack(&ack(0, ms(0), false), ms(103 + k), &p, &mut out);
    }
    assert!(t.w.cwnd >= 20 * MSS && t.snd_max - t.snd_una >= 20 * MSS);
    // The timer fires in recovery: ssthresh stays at the value the recovery set.
    t.on_rto(ms(1200), &p, &mut out);
    assert_eq!(t.w.ssthresh, 5 * MSS);
    assert_eq!(t.w.cwnd, MSS);
}

#[test]
fn timeout_backs_off_and_goes_back_n() {
    let p = params();
    let mut t = conn(u64::MAX);
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out);
    assert_eq!(t.rto_timer.deadline(), Some(ms(1000))); // initial RTO 1 s
    out.clear();
    t.on_rto(ms(1000), &p, &mut out);
    assert_eq!(t.timeouts, 1);
    assert_eq!(t.w.cwnd, MSS); // loss window
    assert_eq!(t.w.ssthresh, 2 * MSS); // max(FlightSize/2 = 2 MSS, 2 MSS)
    assert_eq!(t.rto(), ms(2000)); // doubled (RFC 6298 5.5)
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 0);
    assert_eq!(t.rto_timer.deadline(), Some(ms(3000)));
    // A second timeout holds ssthresh (RFC 5681) and doubles again.
    out.clear();
    t.on_rto(ms(3000), &p, &mut out);
    assert_eq!(t.w.ssthresh, 2 * MSS);
    assert_eq!(t.rto(), ms(4000));
}

fn handshake_params() -> TcpParams {
    TcpParams { handshake: true, ..params() }
}

fn synack(ts: SimTime, retx: bool) -> Packet {
    let a = ack(0, ts, retx); // SYN-ACK: an ACK of sequence 0 with SYN set
    Packet { flags: SYN | a.flags, ..a }
}

#[test]
fn handshake_opens_with_a_syn_alone() {
    let p = handshake_params();
    let mut t = Tcp::new(EP, 100 * MSS, Cc::NewReno(NewReno::default()), &p);
    let mut out = Vec::new();
    t.open(ms(5), &p, &mut out);
    // One header-only SYN on the data route and no data, whatever the window.
    assert_eq!(out.len(), 1);
    let syn = out[0];
    assert_eq!((syn.flags, syn.seq, syn.len, syn.size, syn.route, syn.ts), (SYN, 0, 0, 40, 0, ms(5)));
    assert!(!t.established && t.snd_max == 0);
    assert_eq!(t.rto_timer.deadline(), Some(ms(1005))); // initial RTO 1 s (RFC 6298 2.1)
    // Without the option the same call sends the initial window of data.
    let q = params();
    let mut u = Tcp::new(EP, 100 * MSS, Cc::NewReno(NewReno::default()), &q);
    out.clear();
    u.open(ms(5), &q, &mut out);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|d| d.flags == 0 && d.len == MSS as u32));
}

#[test]
fn receiver_answers_every_syn_with_an_echoing_synack() {
    let p = handshake_params();
    let mut t = conn(5000);
    let mut out = Vec::new();
    let syn = Packet { seq: 0, ts: ms(7), owd: 0, sack: 0, flow: 0, conn: 0, len: 0, size: 40, route: 0, hop: 0, flags: SYN };
    t.on_syn(&syn, &p, &mut out);
    assert_eq!(out.len(), 1);
    let sa = out[0];
    assert_eq!((sa.flags, sa.seq, sa.len, sa.size, sa.route, sa.ts), (SYN | ACK, 0, 0, 40, 1, ms(7)));
    // A resent SYN is answered again, its RETX flag echoed (Karn's rule).
    t.on_syn(&Packet { ts: ms(1007), flags: SYN | RETX, ..syn }, &p, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!((out[1].flags, out[1].ts), (SYN | ACK | RETX, ms(1007)));
    assert_eq!(t.rcv_nxt, 0); // no data yet
}

#[test]
fn synack_gives_the_first_rtt_sample_then_data_flows() {
    let p = handshake_params();
    let mut t = Tcp::new(EP, u64::MAX, Cc::NewReno(NewReno::default()), &p);
    let mut out = Vec::new();
    t.open(ms(0), &p, &mut out);
    out.clear();
    // R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 300 ms (RFC 6298 2.2),
    // then the initial window goes out, timed with that RTO.
    t.on_synack(&synack(ms(0), false), ms(100), &p, &mut out);
    assert!(t.established);
    assert_eq!(t.rto(), ms(300));
    assert_eq!(t.srtt(), Some(ms(100)));
    assert_eq!(out.len(), 4);
    assert_eq!(out[0].seq, 0);
    assert!(out.iter().all(|d| d.flags == 0));
    assert_eq!(t.rto_timer.deadline(), Some(ms(400)));
    assert_eq!((t.timeouts, t.retransmits), (0, 0));
    // A duplicate SYN-ACK changes nothing.
    out.clear();
    t.on_synack(&synack(ms(0), false), ms(150), &p, &mut out);
    assert!(out.is_empty());
    assert_eq!((t.rto(), t.rto_timer.deadline(), t.snd_nxt), (ms(300), Some(ms(400)), 4 * MSS));
}

#[test]
fn syn_timeout_backs_off_and_karn_skips_the_sample() {
    let p = handshake_params();
    let mut t = Tcp::new(EP, u64::MAX, Cc::NewReno(NewReno::default()), &p);
    let mut out = Vec::new();
    t.open(ms(0), &p, &mut out);
    out.clear();
    // First timeout after initial_rto: the SYN is resent, flagged, and the
    // timer doubles (RFC 6298 5.5 and 5.6). Counted as a timeout and a
    // retransmission, as a data timeout and its resent segment are.
    t.on_rto(ms(1000), &p, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].flags, out[0].ts, out[0].len), (SYN | RETX, ms(1000), 0));
    assert_eq!(t.rto(), ms(2000));
    assert_eq!(t.rto_timer.deadline(), Some(ms(3000)));
    assert_eq!((t.timeouts, t.retransmits), (1, 1));
    out.clear();
    t.on_rto(ms(3000), &p, &mut out);
    assert_eq!((t.rto(), t.rto_timer.deadline()), (ms(4000), Some(ms(7000))));
    assert_eq!((t.timeouts, t.retransmits), (2, 2));
    // No data was out: the window is untouched.
    assert_eq!((t.w.cwnd, t.w.ssthresh), (4 * MSS, u64::MAX));
    // The SYN-ACK echoes a resent SYN: no sample (Karn), the backed-off RTO
    // stays, and the initial window goes out.
    out.clear();
    t.on_synack(&synack(ms(3000), true), ms(3100), &p, &mut out);
    assert!(t.established);
    assert_eq!(t.srtt(), None);
    assert_eq!(t.rto(), ms(4000));
    assert_eq!(out.len(), 4);
    assert_eq!(t.rto_timer.deadline(), Some(ms(7100)));
    // The backoff is capped by max_rto.
    let q = TcpParams { max_rto: ms(3000), ..handshake_params() };
    let mut u = Tcp::new(EP, u64::MAX, Cc::NewReno(NewReno::default()), &q);
    u.open(ms(0), &q, &mut out);
    u.on_rto(ms(1000), &q, &mut out);
    u.on_rto(ms(3000), &q, &mut out);
    assert_eq!((u.rto(), u.rto_timer.deadline()), (ms(3000), Some(ms(6000))));
}

fn data(seq: u64, len: u32, ts: SimTime) -> Packet {
    Packet { seq, ts, owd: 0, sack: 0, flow: 0, conn: 0, len, size: len + 40, route: 0, hop: 0, flags: 0 }
}

#[test]
fn receiver_acks_out_of_order_at_once_and_jumps_on_repair() {
    let mut p = params();
    p.delayed_ack = true;
    let mut t = conn(5000);
    let mut out = Vec::new();
    assert_eq!(t.on_data(&data(0, 1000, ms(1)), ms(10), &p, &mut out), 1000);
    assert!(out.is_empty() && t.delack_timer.deadline() == Some(ms(210))); // delayed
    t.on_data(&data(1000, 1000, ms(2)), ms(11), &p, &mut out);
    assert_eq!(out.len(), 1); // every second segment
    assert_eq!(out[0].seq, 2000);
    assert_eq!(out[0].ts, ms(1)); // echoes the earliest unacknowledged segment
    out.clear();
    t.on_data(&data(3000, 1000, ms(4)), ms(13), &p, &mut out); // hole at 2000
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 2000); // duplicate ACK at once
    out.clear();
    assert_eq!(t.on_data(&data(2000, 1000, ms(3)), ms(14), &p, &mut out), 2000);
    assert_eq!(out[0].seq, 4000); // repair: ACK at once, cumulative jump
    out.clear();
    t.on_data(&data(4000, 1000, ms(5)), ms(15), &p, &mut out);
    assert!(t.receiver_done());
    assert_eq!(out[0].seq, 5000); // the last segment is acknowledged at once
}

/// A controller that records what the machinery tells it.
#[derive(Clone, Debug, Default)]
struct Probe {
    acks: std::sync::Arc<std::sync::Mutex<Vec<crate::transport::cc::Ack>>>,
    events: std::sync::Arc<std::sync::Mutex<Vec<crate::transport::cc::Congestion>>>,
    deadline: Option<SimTime>,
    fired: std::sync::Arc<std::sync::Mutex<Vec<SimTime>>>,
    sent: std::sync::Arc<std::sync::Mutex<Vec<(u64, bool)>>>,
    ignore_ecn: bool,
}

impl crate::transport::cc::CongestionControl for Probe {
    fn on_ack(&mut self, _w: &mut Window, ack: &crate::transport::cc::Ack) {
        self.acks.lock().unwrap().push(*ack);
    }
    fn on_congestion(&mut self, w: &Window, ev: crate::transport::cc::Congestion, flight: u64) -> u64 {
        self.events.lock().unwrap().push(ev);
        if self.ignore_ecn && ev == crate::transport::cc::Congestion::Ecn {
            return w.cwnd;
        }
        (flight / 2).max(2 * w.mss)
    }
    fn on_start(&mut self, w: &mut Window, _now: SimTime) {
        if self.deadline.is_some() {
            w.cwnd = 2 * w.mss; // a controller with its own initial window
        }
    }
    fn on_sent(&mut self, _now: SimTime, bytes: u64, retransmission: bool) {
        self.sent.lock().unwrap().push((bytes, retransmission));
    }
    fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }
    fn on_deadline(&mut self, w: &mut Window, now: SimTime) {
        self.fired.lock().unwrap().push(now);
        w.cwnd += w.mss;
        self.deadline = None;
    }
}

fn probed(probe: &Probe, p: &TcpParams) -> Tcp {
    Tcp::new(EP, u64::MAX, Cc::Custom(Box::new(probe.clone())), p)
}

#[test]
fn controllers_see_every_ack_with_its_samples() {
    let p = params();
    let probe = Probe::default();
    let mut t = probed(&probe, &p);
    let mut out = Vec::new();
    t.try_send(ms(0), &p, &mut out); // 4 segments
    let mut a = ack(1000, ms(0), false);
    a.owd = 30_000_000;
    t.on_ack(&a, ms(100), &p, &mut out);
    for k in 0..3 {
        let mut d = ack(1000, ms(0), false);
        d.owd = (31 + k as u32) * 1_000_000;
        t.on_ack(&d, ms(101 + k), &p, &mut out);
    }
    let acks = probe.acks.lock().unwrap().clone();
    assert_eq!(acks.len(), 4);
    // New data: RTT and one-way delay; cwnd-limited (4 segments out with cwnd 4).
    assert_eq!((acks[0].bytes_acked, acks[0].rtt, acks[0].one_way_delay), (1000, Some(ms(100)), Some(ms(30))));
    assert!(acks[0].cwnd_limited && !acks[0].in_recovery && acks[0].flight == 4000);
    // Duplicates: no bytes, no RTT sample, but their one-way delays; the third starts recovery.
    assert_eq!(acks[1..].iter().map(|a| (a.bytes_acked, a.rtt)).collect::<Vec<_>>(), vec![(0, None); 3]);
    assert_eq!(acks[3].one_way_delay, Some(ms(33)));
    assert_eq!(acks.iter().map(|a| a.in_recovery).collect::<Vec<_>>(), vec![false, false, false, true]);
    assert_eq!(*probe.events.lock().unwrap(), vec![crate::transport::cc::Congestion::Loss]);
    // Sequence state after each ACK, for controllers that act once per round trip.
    assert_eq!((acks[0].snd_una, acks[0].snd_nxt), (1000, 4000));
    // Every segment sent is reported: 4 first, 1 after the first ACK, the fast
    // retransmit, and 1 new one that cwnd = ssthresh + 3 MSS = 5 MSS allows.
    let sent: Vec<(u64, bool)> = vec![(1000, false); 5].into_iter().chain([(1000, true), (1000, false)]).collect();
    assert_eq!(*probe.sent.lock().unwrap(), sent);
    // A timeout during recovery is reported as a repeated reduction.
    t.on_rto(ms(2000), &p, &mut out);
    assert_eq!(probe.events.lock().unwrap()[1], crate::transport::cc::Congestion::Timeout { repeated: true });
}

#[test]
fn controller_deadlines_become_the_connection_timer() {
    let p = params();
    let probe = Probe { deadline: Some(ms(20)), ..Probe::default() };
    let mut t = probed(&probe, &p);
    let mut out = Vec::new();
    t.open(ms(0), &p, &mut out);
    assert_eq!(t.cc_timer.deadline(), Some(ms(20)));
    // The controller chose an initial window of 2 segments (on_start).
    assert_eq!(out.len(), 2);
    out.clear();
    // The deadline: the controller opens the window by one segment, which goes out at once.
    t.on_cc_deadline(ms(20), &p, &mut out);
    assert_eq!(*probe.fired.lock().unwrap(), vec![ms(20)]);
    assert_eq!((t.w.cwnd, out.len(), t.cc_timer.deadline()), (3 * MSS, 1, None));
}

#[test]
fn ecn_echo_reduces_once_per_window_and_sets_cwr() {
    use crate::net::packet::{CE, CWR, ECE};
    let p = params();
    for ignore_ecn in [false, true] {
        let probe = Probe { ignore_ecn, ..Probe::default() };
        let mut t = probed(&probe, &p);
        t.w.cwnd = 10 * MSS;
        let mut out = Vec::new();
        t.try_send(ms(0), &p, &mut out); // segments 0..10
        out.clear();
        let ece = |seq| Packet { flags: ACK | ECE, ..ack(seq, ms(0), false) };
        t.on_ack(&ece(1000), ms(100), &p, &mut out);
        // RFC 3168 §6.1.2: ssthresh = cwnd = half of the flight (9 segments out), once.
        let (cwnd, ss) = if ignore_ecn { (10 * MSS, u64::MAX) } else { (4500, 4500) };
        assert_eq!((t.w.cwnd, t.w.ssthresh), (cwnd, ss), "ignore_ecn = {ignore_ecn}");
        t.on_ack(&ece(2000), ms(101), &p, &mut out);
        assert_eq!(probe.events.lock().unwrap().len(), 1); // not again within the window
        // The next new segment carries CWR (none if the mark was ignored).
        t.on_ack(&ack(7000, ms(0), false), ms(102), &p, &mut out);
        assert!(!out.is_empty());
        let cwr = out.iter().any(|s| s.flags & CWR != 0);
        assert_eq!(cwr, !ignore_ecn);
    }
    // The receiver echoes CE on every ACK until it sees CWR.
    let mut r = conn(u64::MAX);
    let mut out = Vec::new();
    r.on_data(&Packet { flags: CE, ..data(0, 1000, ms(1)) }, ms(10), &p, &mut out);
    r.on_data(&data(1000, 1000, ms(2)), ms(11), &p, &mut out);
    r.on_data(&Packet { flags: CWR, ..data(2000, 1000, ms(3)) }, ms(12), &p, &mut out);
    assert_eq!(out.iter().map(|a| a.flags & ECE != 0).collect::<Vec<_>>(), vec![true, true, false]);
}

#[test]
fn only_new_data_is_ecn_capable() {
    use crate::net::packet::ECT;
    // RFC 3168 §6.1.1: data segments are ECT; §6.1.5: retransmissions are not; SYNs
    // and pure ACKs never are (as ns-3's ClassicEcn).
    for ecn in [false, true] {
        let p = TcpParams { ecn, handshake: true, ..params() };
        let mut t = Tcp::new(EP, u64::MAX, Cc::NewReno(NewReno::default()), &p);
        let mut out = Vec::new();
        t.open(ms(0), &p, &mut out);
        assert_eq!(out.iter().map(|s| s.flags & (SYN | ECT)).collect::<Vec<_>>(), vec![SYN]);
        out.clear();
        let mut r = Tcp::new(EP, u64::MAX, Cc::NewReno(NewReno::default()), &p);
        r.on_syn(&Packet { flags: SYN, ..data(0, 0, ms(0)) }, &p, &mut out);
        let synack = out[0];
        assert_eq!(synack.flags & ECT, 0);
        out.clear();
        t.on_synack(&synack, ms(20), &p, &mut out);
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|s| (s.flags & ECT != 0) == ecn && s.flags & RETX == 0));
        let first = out[0];
        out.clear();
        t.on_rto(ms(2000), &p, &mut out);
        assert_eq!((out[0].seq, out[0].flags & RETX != 0, out[0].flags & ECT), (0, true, 0));
        out.clear();
        r.on_data(&first, ms(30), &p, &mut out);
        assert_eq!(out[0].flags & ECT, 0);
    }
}

#[test]
fn acks_carry_the_one_way_delay_of_the_segment_that_triggered_them() {
    let p = params();
    let mut r = conn(u64::MAX);
    let mut out = Vec::new();
    r.on_data(&data(0, 1000, ms(1)), ms(26), &p, &mut out);
    r.on_data(&data(2000, 1000, ms(2)), ms(40), &p, &mut out); // out of order
    assert_eq!(out.iter().map(|a| a.one_way_delay()).collect::<Vec<_>>(), vec![ms(25), ms(38)]);
}
