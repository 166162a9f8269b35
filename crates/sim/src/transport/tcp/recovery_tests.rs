//! Loss recovery end to end: SACK (RFC 2018, RFC 6675), PRR (RFC 9937), Reno
//! (RFC 5681) against NewReno (RFC 6582), and timestamps (RFC 7323), with both
//! endpoints of one connection driven in lockstep: every round, the segments the
//! sender sent reach the receiver (minus the ones a test drops) and the ACKs come
//! back one round-trip time later.
use super::*;
use crate::net::packet::RETX;
use crate::transport::cc::{Cc, NewReno, Reno};
use crate::transport::endpoints::Endpoints;
use std::collections::HashSet;

const MSS: u64 = 1000;
const RTT: SimTime = SimTime::from_millis(100);
const EP: Endpoints = Endpoints { flow: 0, conn: 0, class: 0, data_route: 0, ack_route: 1 };

fn params(sack: bool, recovery: RecoveryRule) -> TcpParams {
    TcpParams { mss: MSS as u32, initial_window: 20, sack, recovery, ..TcpParams::default() }
}

/// What a lockstep run did.
#[derive(Debug, Default)]
struct Run {
    rounds: u32,
    /// Segments sent in each round and whether each was a retransmission.
    sent: Vec<Vec<(u64, bool)>>,
    /// (cwnd, pipe or flight, in recovery) after each round's ACKs.
    after: Vec<(u64, u64, bool)>,
    /// Most segments sent in reply to one ACK while in recovery.
    burst_in_recovery: usize,
}

/// Run `t` until its `size` bytes are acknowledged; `drop(seq, retransmission)`
/// decides which segments the network loses. A round in which nothing is in
/// flight ends with the retransmission timer.
fn lockstep(t: &mut Tcp, p: &TcpParams, mut drop: impl FnMut(u64, bool) -> bool) -> Run {
    let mut run = Run::default();
    let mut now = SimTime::ZERO;
    let mut data = Vec::new();
    t.open(now, p, &mut data);
    while !t.sender_done() {
        assert!(run.rounds < 200, "no progress: {run:?}");
        run.rounds += 1;
        run.sent.push(data.iter().map(|s| (s.seq, s.flags & RETX != 0)).collect());
        let mut acks = Vec::new();
        for seg in data.drain(..) {
            if !drop(seg.seq, seg.flags & RETX != 0) {
                t.on_data(&seg, now + SimTime(RTT.0 / 2), p, &mut acks);
            }
        }
        now = now + RTT;
        if acks.is_empty() {
            now = t.rto_timer.deadline().expect("the timer runs while data is out");
            t.on_rto(now, p, &mut data);
        }
        for a in &acks {
            let mut sent = Vec::new();
            t.on_ack(a, now, p, &mut sent);
            if t.in_recovery() {
                run.burst_in_recovery = run.burst_in_recovery.max(sent.len());
            }
            data.extend(sent);
        }
        let in_flight = if t.selective.is_some() { t.pipe() } else { t.snd_max - t.snd_una };
        run.after.push((t.w.cwnd, in_flight, t.in_recovery()));
    }
    run
}

/// Drop the first transmission of these segments (by index).
fn first_copies(lost: &[u64]) -> impl FnMut(u64, bool) -> bool {
    let lost: HashSet<u64> = lost.iter().map(|k| k * MSS).collect();
    move |seq, retx| !retx && lost.contains(&seq)
}

fn newreno(size: u64, p: &TcpParams) -> Tcp {
    Tcp::new(EP, size, Cc::NewReno(NewReno::default()), p)
}

#[test]
fn sack_repairs_three_losses_in_one_round_trip_where_newreno_takes_three() {
    // 20 segments in the initial window, 2, 5 and 9 lost, 40 to send.
    let p = params(true, RecoveryRule::Halve);
    let mut t = newreno(40 * MSS, &p);
    let sack = lockstep(&mut t, &p, first_copies(&[2, 5, 9]));
    // All three holes are resent in the round after the losses (RFC 6675: rule 1
    // of NextSeg as soon as IsLost), and nothing else is resent.
    let resent: Vec<u64> = sack.sent[1].iter().filter(|s| s.1).map(|s| s.0 / MSS).collect();
    assert_eq!(resent, vec![2, 5, 9]);
    assert_eq!((t.retransmits, t.timeouts), (3, 0));
    // ssthresh = min(FlightSize, cwnd) / 2 on the third duplicate ACK: the two
    // ACKs of new data grew cwnd to 22 segments and let 4 new ones out, each of the
    // first two SACKs one more (pipe falls as segments are SACKed): FlightSize is
    // 26 - 2 = 24 segments, so the cap by cwnd decides.
    assert_eq!(t.w.ssthresh, 11 * MSS);

    let q = params(false, RecoveryRule::Halve);
    let mut u = newreno(40 * MSS, &q);
    let nr = lockstep(&mut u, &q, first_copies(&[2, 5, 9]));
    // NewReno resends one hole per round trip (RFC 6582 partial ACKs).
    let rounds_with_retx: Vec<usize> = (0..nr.sent.len()).filter(|&r| nr.sent[r].iter().any(|s| s.1)).collect();
    assert_eq!(rounds_with_retx, vec![1, 2, 3]);
    assert_eq!((u.retransmits, u.timeouts), (3, 0));
    // Round trips ending in recovery: one with SACK, three with NewReno.
    let in_recovery = |r: &Run| r.after.iter().filter(|a| a.2).count();
    assert_eq!((in_recovery(&sack), in_recovery(&nr)), (1, 3));
}

#[test]
fn halving_waits_until_pipe_falls_below_cwnd() {
    let p = params(true, RecoveryRule::Halve);
    let mut t = newreno(40 * MSS, &p);
    let run = lockstep(&mut t, &p, first_copies(&[2, 5, 9]));
    // During recovery cwnd is ssthresh throughout (RFC 6675 §5 step 4.2).
    let (cwnd, pipe, in_recovery) = run.after[0];
    assert!(in_recovery);
    assert_eq!(cwnd, 11 * MSS);
    // After the round every hole is resent and every other segment SACKed:
    // pipe is the three retransmissions plus the new data cwnd allows.
    assert_eq!(pipe, 11 * MSS);
}

#[test]
fn prr_sends_in_proportion_then_ends_at_ssthresh() {
    let p = params(true, RecoveryRule::Prr);
    let mut t = newreno(60 * MSS, &p);
    let run = lockstep(&mut t, &p, first_copies(&[2, 5, 9]));
    assert_eq!((t.retransmits, t.timeouts), (3, 0));
    // PRR never bursts: at most two segments per ACK (one per delivered segment
    // plus the slow-start reduction bound's one).
    assert!(run.burst_in_recovery <= 2, "burst of {}", run.burst_in_recovery);
    // Recovery begins on the SACK of segment 6 with 24 segments outstanding, 3
    // SACKed and segment 2 deemed lost: RecoverFS = pipe = 20 segments, ssthresh 11.
    // From then on 13 segments are delivered in the round (6, 7, 8, 10..19), so PRR
    // lets out ceil(13 * 11 / 20) = 7.15 segments' worth (RFC 9937 §5): 7 whole
    // segments, the three retransmissions first.
    let sent_in_round = &run.sent[1];
    let first_retx = sent_in_round.iter().position(|s| s.1).unwrap();
    assert_eq!(sent_in_round.len() - first_retx, 7, "{sent_in_round:?}");
    assert_eq!(t.w.ssthresh, 11 * MSS);
    // The round after, the cumulative ACK covers RecoveryPoint: cwnd = ssthresh.
    let (cwnd, _, in_recovery) = run.after[1];
    assert!(!in_recovery);
    assert!(cwnd >= t.w.ssthresh);
}

#[test]
fn a_timeout_with_sack_resends_only_what_the_receiver_lacks() {
    // No fast retransmit (DupThresh out of reach): segments 0, 1, 2 of 10 lost.
    let p = TcpParams { dupack_threshold: 50, initial_window: 10, ..params(true, RecoveryRule::Halve) };
    let mut t = newreno(10 * MSS, &p);
    let run = lockstep(&mut t, &p, first_copies(&[0, 1, 2]));
    assert_eq!(t.timeouts, 1);
    let resent: Vec<u64> = run.sent.iter().flatten().filter(|s| s.1).map(|s| s.0 / MSS).collect();
    assert_eq!(resent, vec![0, 1, 2]);
    // Without SACK, going back N resends the segments the receiver holds too.
    let q = TcpParams { sack: false, ..p.clone() };
    let mut u = newreno(10 * MSS, &q);
    lockstep(&mut u, &q, first_copies(&[0, 1, 2]));
    assert!(u.retransmits > 3, "{} retransmissions", u.retransmits);
}

#[test]
fn reno_leaves_recovery_on_the_first_partial_ack() {
    // Two losses in one window: NewReno repairs both in recovery; Reno leaves it
    // at the partial ACK, and with the recovery point still ahead may not fast-
    // retransmit again (ns-2's bugfix_), so the second hole waits for the timer.
    let p = params(false, RecoveryRule::Halve);
    let mut t = newreno(40 * MSS, &p);
    lockstep(&mut t, &p, first_copies(&[2, 9]));
    assert_eq!(t.timeouts, 0);
    let mut r = Tcp::new(EP, 40 * MSS, Cc::Reno(Reno::default()), &p);
    let run = lockstep(&mut r, &p, first_copies(&[2, 9]));
    assert_eq!(r.timeouts, 1);
    // Right after the partial ACK, Reno is out of recovery with cwnd = ssthresh.
    // (The timeout later halves ssthresh again, from 11 to 5.5 segments.)
    let (cwnd, _, in_recovery) = run.after[1];
    assert!(!in_recovery);
    assert_eq!(cwnd, 11 * MSS);
    assert_eq!(r.w.ssthresh, 5 * MSS + MSS / 2);
}

#[test]
fn sack_blocks_fill_the_option_space_latest_first() {
    for timestamps in [false, true] {
        let p = TcpParams { timestamps, ..params(true, RecoveryRule::Halve) };
        let mut t = newreno(u64::MAX, &p);
        let mut acks = Vec::new();
        // Segments 1, 3, 5, 7, 9 arrive (0, 2, 4, 6, 8 missing): five blocks.
        for k in [1u64, 3, 5, 7, 9] {
            let seg = Packet { seq: k * MSS, ts: SimTime::ZERO, owd: 0, sack: 0, flow: 0, conn: 0, len: MSS as u32, size: 0, route: 0, hop: 0, flags: 0, ce: 0 };
            t.on_data(&seg, RTT, &p, &mut acks);
        }
        let last = acks.last().unwrap();
        let record = t.sack.as_deref_mut().unwrap().take(last.sack).unwrap();
        let want: Vec<(u64, u64)> = if timestamps {
            vec![(9000, 10_000), (7000, 8000), (5000, 6000)]
        } else {
            vec![(9000, 10_000), (7000, 8000), (5000, 6000), (3000, 4000)]
        };
        assert_eq!(record.blocks(), &want[..]);
        // 40 bytes of headers, 12 of timestamps, 2 + 8 per block padded to 4 bytes.
        let options = if timestamps { 12 + 28 } else { 36 };
        assert_eq!(last.size, 40 + options);
    }
}

#[test]
fn timestamps_date_retransmissions_and_add_twelve_bytes() {
    let p = TcpParams { timestamps: true, ..params(false, RecoveryRule::Halve) };
    let mut t = newreno(u64::MAX, &p);
    let mut out = Vec::new();
    t.try_send(SimTime::ZERO, &p, &mut out);
    assert_eq!(out[0].size, MSS as u32 + 52);
    // An ACK echoing a retransmission (RETX) still gives a sample: 100 ms.
    let mut ack = t.control(1, MSS, SimTime::ZERO, crate::net::packet::ACK | RETX, &p);
    ack.seq = MSS;
    t.on_ack(&ack, RTT, &p, &mut out);
    assert_eq!(t.srtt(), Some(RTT));
    assert_eq!(ack.size, 52);
}
