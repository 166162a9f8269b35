//! ns-2.35's agents against numbers worked out by hand from its source
//! (tcp.cc, tcp-reno.cc, tcp-newreno.cc, tcp-sack1.cc, scoreboard-rq.cc). Both
//! endpoints of one connection are driven step by step: segments reach the
//! receiver when a test says so, and its ACKs go back one at a time.
use super::super::*;
use crate::net::packet::SYN;
use crate::transport::cc::{Cc, CongestionControl, NewReno, Reno};
use crate::transport::endpoints::Endpoints;
use std::collections::HashMap;

const MSS: u64 = 1000;
const EP: Endpoints = Endpoints { flow: 0, conn: 0, class: 0, data_route: 0, ack_route: 1 };

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

/// The ns-2 preset without the SYN (most tests start with data).
fn ns2(sack: bool) -> TcpParams {
    TcpParams { handshake: false, sack, ..Preset::Ns2.params() }
}

/// A connection and the copies of its segments in flight.
struct Drive {
    t: Tcp,
    p: TcpParams,
    now: SimTime,
    /// The latest copy sent of each segment (by index).
    copies: HashMap<u64, Packet>,
}

impl Drive {
    fn new(p: TcpParams, reno: bool, size: u64) -> Drive {
        let cc = if reno { Cc::Reno(Reno::default()) } else { Cc::NewReno(NewReno::default()) };
        Drive { t: Tcp::new(EP, size, cc, &p), p, now: SimTime::ZERO, copies: HashMap::new() }
    }

    /// Segment indices sent, remembering each copy.
    fn record(&mut self, out: Vec<Packet>) -> Vec<u64> {
        out.into_iter()
            .filter(|s| s.flags & SYN == 0)
            .map(|s| {
                let k = s.seq / MSS;
                self.copies.insert(k, s);
                k
            })
            .collect()
    }

    fn open(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        self.t.open(self.now, &self.p, &mut out);
        self.record(out)
    }

    /// Set cwnd_ to `segments` (a real number) with ssthresh_ `ssthresh` segments.
    fn window(&mut self, segments: f64, ssthresh: u64) {
        self.t.cc.set_segments(&mut self.t.w, segments);
        self.t.w.ssthresh = ssthresh * MSS;
    }

    /// The latest copy of segment `k` reaches the receiver at `at`: its ACK.
    fn deliver(&mut self, k: u64, at: SimTime) -> Packet {
        let seg = self.copies[&k];
        let mut acks = Vec::new();
        self.t.on_data(&seg, at, &self.p, &mut acks);
        acks.pop().expect("every segment is acknowledged at once")
    }

    /// Segment `k` arrives and its ACK reaches the sender at `now`: what the sender sends.
    fn step(&mut self, k: u64) -> Vec<u64> {
        let a = self.deliver(k, self.now);
        self.ack(&a)
    }

    fn ack(&mut self, a: &Packet) -> Vec<u64> {
        let mut out = Vec::new();
        self.t.on_ack(a, self.now, &self.p, &mut out);
        self.record(out)
    }

    /// The flow arrives and sends its SYN, alone.
    fn open_syn(&mut self) -> Packet {
        let mut out = Vec::new();
        self.t.open(self.now, &self.p, &mut out);
        assert!(out.len() == 1 && out[0].flags & SYN != 0, "{out:?}");
        out[0]
    }

    /// The retransmission timer expires before the SYN-ACK: the resent SYN.
    fn syn_timeout(&mut self) -> Packet {
        let mut out = Vec::new();
        self.now = self.t.rto_timer.deadline().expect("the SYN is timed");
        self.t.on_rto(self.now, &self.p, &mut out);
        out[0]
    }

    /// `syn` reaches the receiver and its SYN-ACK the sender at `now`: what it sends.
    fn handshake(&mut self, syn: &Packet) -> Vec<u64> {
        let (mut synack, mut out) = (Vec::new(), Vec::new());
        self.t.on_syn(syn, &self.p, &mut synack);
        self.t.on_synack(&synack[0], self.now, &self.p, &mut out);
        self.record(out)
    }

    fn timeout(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        self.now = self.t.rto_timer.deadline().expect("the timer runs");
        self.t.on_rto(self.now, &self.p, &mut out);
        self.record(out)
    }

    fn cwnd(&self) -> f64 {
        self.t.cc.segments(&self.t.w)
    }

    fn ns(&self) -> &Ns2Sender {
        self.t.ns2.as_deref().unwrap()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn whole_segments_and_the_first_ssthresh_from_the_receive_window() {
    // sendmsg: ceil(2500 / 1000) = 3 full packets; ssthresh_ = window_ = 20; windowInit_ 2.
    let mut d = Drive::new(ns2(false), false, 2500);
    assert_eq!((d.t.size, d.t.w.ssthresh, d.t.w.cwnd), (3 * MSS, 20 * MSS, 2 * MSS));
    assert_eq!(d.open(), vec![0, 1]);
    assert_eq!(d.copies[&1].size, 1040); // 1000 + tcpip_base_hdr_size_ 40
}

#[test]
fn the_window_is_the_integer_part_of_a_real_cwnd() {
    // opencwnd in congestion avoidance: cwnd_ += 1/cwnd_. From 7.5: 7.633333,
    // 7.764338, 7.893132, 8.019824; window() = int(cwnd_) lets one segment out per
    // ACK until the fourth, which lets two.
    let mut d = Drive::new(ns2(false), false, 100 * MSS);
    d.window(7.5, 7);
    assert_eq!(d.open(), (0..7).collect::<Vec<_>>());
    let want = [7.633_333, 7.764_338, 7.893_132, 8.019_824];
    let sent: Vec<Vec<u64>> = (0..4).map(|k| d.step(k)).collect();
    assert_eq!(sent, vec![vec![7], vec![8], vec![9], vec![10, 11]]);
    assert!(close(d.cwnd(), want[3]), "{}", d.cwnd());
    // Slow start below ssthresh_: +1 per ACK of new data, whatever it covers.
    let mut s = Drive::new(ns2(false), false, 100 * MSS);
    s.open();
    s.deliver(1, s.now); // out of order: its duplicate ACK is lost
    let a = s.deliver(0, s.now);
    assert_eq!(a.seq, 2 * MSS); // one ACK for two segments
    s.ack(&a);
    assert!(close(s.cwnd(), 3.0));
    // The receiver's window caps the window, not cwnd_: 25 segments of cwnd_ send 20.
    let mut c = Drive::new(ns2(false), false, 100 * MSS);
    c.window(25.0, 30);
    assert_eq!(c.open().len(), 20);
}

/// A NewReno (or Reno) sender with cwnd_ 10 in congestion avoidance, segments 0-9
/// out, 2, 5 and 8 lost; 0 and 1 arrive, then the duplicate ACKs of 3 and 4 (each
/// sends one new segment, `send_one`) and of 6, the third, a fast retransmit.
fn three_holes(reno: bool) -> Drive {
    let mut d = Drive::new(ns2(false), reno, 100 * MSS);
    d.window(10.0, 5);
    assert_eq!(d.open().len(), 10);
    d.now = ms(100);
    // cwnd_ 10.1 then 10.19901: one segment each.
    assert_eq!((d.step(0), d.step(1)), (vec![10], vec![11]));
    // send_one: t_seqno_ <= highest_ack_ + cwnd_ + dupacks_ (11 <= 1 + 10.199 + 1, 12 <= 1 + 10.199 + 2).
    assert_eq!((d.step(3), d.step(4)), (vec![12], vec![13]));
    // The third: recover_ = maxseq_, ssthresh_ = int(10.19901 / 2) = 5, cwnd_ = 5.099505,
    // dupwnd_ = 3, segment 2 resent; window() = 5 + 3 = 8 < 13 outstanding.
    assert_eq!(d.step(6), vec![2]);
    assert_eq!((d.t.w.ssthresh, d.ns().dupwnd, d.ns().recover), (5 * MSS, 3, Some(14 * MSS)));
    assert!(close(d.cwnd(), 10.199_01 / 2.0), "{}", d.cwnd());
    d
}

#[test]
fn newreno_partial_acks_deflate_and_restart_the_timer_once() {
    let mut d = three_holes(false);
    // Duplicate ACKs of 7, 9, 10, 11, 12: dupwnd_ 4..8; at 8, window() = 13 and
    // segment 14 leaves; the ACK of 13 (dupwnd_ 9) lets 15 out.
    let sent: Vec<Vec<u64>> = [7, 9, 10, 11, 12, 13].iter().map(|&k| d.step(k)).collect();
    assert_eq!(sent, vec![vec![], vec![], vec![], vec![], vec![14], vec![15]]);
    // The resent 2 arrives: a partial ACK of three segments (2, 3, 4). dupwnd_ 9 >
    // 3, so dupwnd_ -= 3 - 1 = 7; the timer restarts (first partial ACK); segment 5
    // is resent; send_much(0, 0, 2): window() = 5 + 7 = 12 lets 16 out.
    d.now = ms(200);
    assert_eq!(d.step(2), vec![5, 16]);
    assert_eq!(d.ns().dupwnd, 7);
    let first = d.t.rto_timer.deadline().unwrap();
    assert_eq!(first, ms(200) + d.t.rto());
    // The resent 5 arrives: partial again, dupwnd_ 5, no timer restart
    // (newreno_changes1_ 1), 8 resent, and 17 (window 10).
    d.now = ms(300);
    assert_eq!(d.step(5), vec![8, 17]);
    assert_eq!((d.ns().dupwnd, d.t.rto_timer.deadline().unwrap()), (5, first));
    assert!(close(d.cwnd(), 5.099_505));
    // The resent 8: an ACK at recover_ (14) ends recovery: dupwnd_ 0, then
    // opencwnd(): cwnd_ 5.099505 >= ssthresh_ 5, += 1/5.099505 = 5.295603.
    d.now = ms(400);
    assert_eq!(d.step(8), vec![18]);
    assert!(close(d.cwnd(), 5.099_505 + 1.0 / 5.099_505), "{}", d.cwnd());
    assert_eq!((d.ns().dupwnd, d.t.in_recovery(), d.t.timeouts), (0, false, 0));
}

#[test]
fn deflation_beyond_dupwnd_takes_from_cwnd() {
    // Right after the fast retransmit (dupwnd_ 3) the resent 2 arrives: deflate = 3
    // is not below dupwnd_, so cwnd_ -= 3 - 3 and dupwnd_ = 1.
    let mut d = three_holes(false);
    d.step(2);
    assert_eq!(d.ns().dupwnd, 1);
    assert!(close(d.cwnd(), 5.099_505));
    // 2 and 7 lost: the fast retransmit on the ACK of 5, one more duplicate (of 6,
    // dupwnd_ 4); the resent 2 then acknowledges five segments (2-6): cwnd_ -= 5 - 4.
    let mut e = Drive::new(ns2(false), false, 100 * MSS);
    e.window(10.0, 5);
    e.open();
    let sent: Vec<Vec<u64>> = [0, 1, 3, 4, 5, 6].iter().map(|&k| e.step(k)).collect();
    assert_eq!(sent, vec![vec![10], vec![11], vec![12], vec![13], vec![2], vec![]]);
    e.step(2);
    assert_eq!(e.ns().dupwnd, 1);
    assert!(close(e.cwnd(), 5.099_505 - 1.0), "{}", e.cwnd());
}

#[test]
fn newreno_sends_at_most_two_segments_per_ack_in_recovery() {
    // send_much(0, 0, 2) while dupacks_ >= numdupacks_ (newreno_changes_ 0).
    let mut d = three_holes(false);
    d.window(20.0, 5); // an inflated window would allow more
    assert_eq!(d.step(7), vec![14, 15]);
    // Reno has no such limit (send_much(0, 0, maxburst_), maxburst_ 0).
    let mut r = three_holes(true);
    r.window(20.0, 5);
    assert_eq!(r.step(7), (14..=21).collect::<Vec<_>>());
}

#[test]
fn reno_leaves_recovery_on_a_partial_ack_and_the_next_hole_waits_for_the_timer() {
    let mut d = three_holes(true);
    // The resent 2 arrives: any new ACK ends Reno's recovery: dupwnd_ 0, opencwnd().
    d.now = ms(200);
    d.step(2);
    assert!(close(d.cwnd(), 5.099_505 + 1.0 / 5.099_505));
    assert_eq!((d.ns().dupwnd, d.t.in_recovery()), (0, false));
    // Three more duplicate ACKs (of 6, 7, 9): highest_ack_ is not beyond recover_
    // (bug_fix_), so no fast retransmit; nothing is sent (window() 5, 11 out).
    for k in [6, 7, 9] {
        assert_eq!(d.step(k), Vec::<u64>::new());
    }
    assert_eq!(d.t.retransmits, 1);
    // The timeout resends 5 (go-back-N from highest_ack_ + 1) with ssthresh_ =
    // int(5.295603 / 2) = 2 and cwnd_ 1.
    assert_eq!(d.timeout(), vec![5]);
    assert_eq!((d.t.w.ssthresh, d.cwnd(), d.t.snd_nxt), (2 * MSS, 1.0, 6 * MSS));
}

#[test]
fn timeouts_halve_the_window_every_time_and_go_back_n() {
    let mut d = Drive::new(ns2(false), false, 100 * MSS);
    d.window(12.0, 20);
    assert_eq!(d.open().len(), 12);
    // rtxcur_init_ 3 s, no sample yet: the first timeout at 3 s; ssthresh_ =
    // int(12 / 2) = 6, cwnd_ 1, recover_ = maxseq_, t_seqno_ = highest_ack_ + 1.
    assert_eq!(d.timeout(), vec![0]);
    assert_eq!(d.now, ms(3000));
    assert_eq!((d.t.w.ssthresh, d.cwnd(), d.ns().recover), (6 * MSS, 1.0, Some(12 * MSS)));
    // Backed off: 6 s. The second timeout halves the one-segment window again:
    // ssthresh_ = max(int(1 / 2), 2) = 2.
    assert_eq!(d.timeout(), vec![0]);
    assert_eq!((d.now, d.t.w.ssthresh), (ms(9000), 2 * MSS));
    // RFC 5681's rule instead holds ssthresh on the repeated timeout.
    let mut h = Drive::new(TcpParams { rules: Rules { timeout_ssthresh: TimeoutSsthresh::Hold, ..Rules::ns2() }, ..ns2(false) }, false, 100 * MSS);
    h.window(12.0, 20);
    h.open();
    h.timeout();
    h.timeout();
    assert_eq!(h.t.w.ssthresh, 6 * MSS);
}

#[test]
fn one_segment_per_window_is_timed_in_ticks() {
    // Clock phase 7 ms (boot_time_): ticks at 3, 13, ..., 93 ms. Segment 0 (timed)
    // sent at 0 and acknowledged at 95 ms counts int((95 + 7) / 10) = 10 ticks;
    // with phase 0, 9.
    let mut d = Drive::new(ns2(false), false, 100 * MSS);
    d.t.set_clock_phase(ms(7));
    d.open();
    d.now = ms(95);
    d.step(0);
    // srtt 10 ticks, rttvar 5: t_rtxcur_ = 10 + 4 * 5 = 30 ticks = 300 ms.
    assert_eq!((d.t.srtt(), d.t.rto()), (Some(ms(100)), ms(300)));
    let mut z = Drive::new(ns2(false), false, 100 * MSS);
    z.open();
    z.now = ms(95);
    z.step(0);
    assert_eq!(z.t.srtt(), Some(ms(90)));
    // Segment 1 was not timed: its ACK, however late, leaves the estimate alone.
    d.now = ms(240);
    d.step(1);
    assert_eq!(d.t.rto(), ms(300));
    // Segment 2, sent on the first ACK (at 95 ms) while nothing was timed, is: ACK
    // at 255 ms: int((160 + (95 + 7) % 10) / 10) = 16 ticks. delta = 6: t_srtt_ = 80 + 6
    // = 86; |6| - (20 >> 2) = 1: t_rttvar_ = 21; t_rtxcur_ = (168 + 86) >> 3 = 31 ticks.
    d.now = ms(255);
    d.step(2);
    assert_eq!(d.t.rto(), ms(310));
}

#[test]
fn backoff_ends_only_when_a_timed_segment_is_acknowledged() {
    let mut d = Drive::new(ns2(false), false, 100 * MSS);
    d.open();
    assert_eq!(d.timeout(), vec![0]); // 3 s, t_backoff_ 2
    assert_eq!(d.t.rto(), ms(6000));
    // The resent 0 is acknowledged: not timed (Karn), the backoff stays. cwnd_ 2
    // (slow start to ssthresh_ 2... 1 < 2): the resent 1 and the new 2, which is timed.
    d.now = ms(3100);
    assert_eq!(d.step(0), vec![1, 2]);
    assert_eq!(d.t.rto(), ms(6000));
    d.now = ms(3150);
    d.step(1);
    assert_eq!(d.t.rto(), ms(6000));
    // Segment 2's ACK, 10 ticks after it left: t_backoff_ 1, a first sample (t_srtt_
    // was 0): 100 ms, rttvar 50 -> 300 ms.
    d.now = ms(3200);
    d.step(2);
    assert_eq!(d.t.rto(), ms(300));
}

#[test]
fn the_syn_is_segment_zero_and_its_loss_is_a_timeout() {
    let p = Preset::Ns2.params();
    let mut d = Drive::new(p.clone(), false, 100 * MSS);
    // Only the SYN (40 bytes), timed; windowInit_ 2 after its ACK (5 ticks:
    // t_rtxcur_ = 15 ticks, below minrto_ 200 ms).
    let syn = d.open_syn();
    assert_eq!(syn.size, 40);
    d.now = ms(50);
    assert_eq!((d.handshake(&syn), d.t.rto()), (vec![0, 1], ms(200)));
    // The SYN lost: after rtxcur_init_ (3 s) the timeout of a one-segment window
    // sets ssthresh_ 2, and bugfix_ss_ windowInit_ 1; the resent SYN's ACK gives no
    // sample (Karn) and the backoff stays.
    let mut e = Drive::new(p.clone(), false, 100 * MSS);
    e.open_syn();
    let again = e.syn_timeout();
    assert_eq!((e.now, e.t.w.ssthresh, e.t.rto()), (ms(3000), 2 * MSS, ms(6000)));
    e.now = ms(3050);
    assert_eq!((e.handshake(&again), e.t.rto()), (vec![0], ms(6000)));
    // The RFC rule resends the SYN and keeps the window.
    let mut f = Drive::new(TcpParams { rules: Rules { syn_timeout: SynTimeout::Retry, ..Rules::ns2() }, ..p }, false, 100 * MSS);
    f.open_syn();
    f.syn_timeout();
    assert_eq!((f.t.w.cwnd, f.t.w.ssthresh), (2 * MSS, 20 * MSS));
}

/// A Sack1 sender with cwnd_ 10 in congestion avoidance, 0-9 out, 2 and 5 lost,
/// up to the fast retransmit on the third duplicate ACK with new SACK information.
fn sack1_two_holes() -> Drive {
    let mut d = Drive::new(ns2(true), false, 100 * MSS);
    d.window(10.0, 5);
    d.open();
    d.now = ms(100);
    assert_eq!((d.step(0), d.step(1)), (vec![10], vec![11]));
    assert_eq!((d.step(3), d.step(4)), (vec![12], vec![13]));
    // pipe_ = maxseq_ - highest_ack_ - 3 = 12 - 3 = 9; cwnd_ 5.099505; only the
    // retransmission leaves (send_much is not called while dupacks_ != 0).
    assert_eq!(d.step(6), vec![2]);
    let s = d.ns().sack1.as_ref().unwrap();
    assert_eq!((s.fastrecov, s.pipe), (true, 9));
    d
}

#[test]
fn sack1_sends_holes_then_new_data_while_pipe_is_below_cwnd() {
    let mut d = sack1_two_holes();
    // Each ACK takes one from pipe_; while pipe_ >= int(cwnd_) = 5 nothing leaves.
    for k in [7, 8, 9, 10] {
        assert_eq!(d.step(k), Vec::<u64>::new());
    }
    // At pipe_ 4, the next hole below a SACKed range (5), then new data.
    assert_eq!(d.step(11), vec![5]);
    assert_eq!(d.step(12), vec![14]);
    assert_eq!(d.step(13), vec![15]);
    // The resent 2: a partial ACK takes two from pipe_ (5 -> 3), restarts the timer
    // (with the backed-off RTO: newtimer() comes before t_backoff_ = 1) and ends the
    // backoff; the hole at 5 was resent already (h_seqno_): new data.
    d.t.rtt.back_off(ms(60_000));
    assert_eq!(d.t.rto(), ms(600));
    d.now = ms(200);
    assert_eq!(d.step(2), vec![16, 17]);
    assert_eq!(d.ns().sack1.as_ref().unwrap().pipe, 5);
    assert_eq!((d.t.rto_timer.deadline(), d.t.rto()), (Some(ms(800)), ms(300)));
    // The resent 5: recovery ends (recover_ 14) without opencwnd(): cwnd_ stays 5.099505.
    d.now = ms(300);
    assert_eq!(d.step(5), vec![18]);
    assert!(close(d.cwnd(), 5.099_505));
    assert_eq!((d.t.in_recovery(), d.ns().recover, d.t.retransmits), (false, None, 2));
}

#[test]
fn sack1_forgets_the_sack_information_at_a_timeout() {
    // 0 and 2 lost; 1 and 3 SACKed (two duplicate ACKs, each sending one segment).
    let mut d = Drive::new(ns2(true), false, 100 * MSS);
    d.window(10.0, 20);
    d.open();
    d.now = ms(100);
    assert_eq!((d.step(1), d.step(3)), (vec![10], vec![11]));
    // Timeout: the scoreboard is cleared and go-back-N resends 0.
    assert_eq!(d.timeout(), vec![0]);
    // A duplicate ACK after the timeout (10 arrives) is ignored (timeout_).
    assert_eq!(d.step(10), Vec::<u64>::new());
    // 0 arrives: ACK of 0 and 1; cwnd_ 2: 2, then 3, which the receiver holds and
    // RFC 6675 would not resend.
    d.now = ms(3100);
    assert_eq!(d.step(0), vec![2, 3]);
    let mut rfc = Drive::new(TcpParams { rules: Rules { loss_recovery: LossRecovery::Rfc, sack_after_timeout: SackAfterTimeout::Keep, ..Rules::ns2() }, ..ns2(true) }, false, 100 * MSS);
    rfc.window(10.0, 20);
    rfc.open();
    rfc.now = ms(100);
    rfc.step(1);
    rfc.step(3);
    rfc.timeout();
    rfc.now = ms(3100);
    assert_eq!(rfc.step(0), vec![2, 4]);
}
