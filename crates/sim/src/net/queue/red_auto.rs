//! RED's automatic parameters as ns-2.35 computes them (`queue/red.cc`,
//! `REDQueue::initialize_params` and `reset`, lines 171-297), for the defaults of
//! `tcl/lib/ns-default.tcl` (lines 122-166): `thresh_ 0` and `maxthresh_ 0`
//! (automatic thresholds), `q_weight_ -1` (automatic weight), `targetdelay_`
//! 5 ms. Written `min_th = "auto"`, `max_th = "auto"`, `weight = "auto"` on a
//! `red` queue; each is resolved when the scenario is read, from the link's rate
//! and delay and the queue's `mean_packet_size` (ns-2's `mean_pktsize_`, 500
//! bytes by default there as here).
use crate::engine::SimTime;

/// ns-2's `targetdelay_` (ns-default.tcl:164): the automatic min_th is half the
/// queue this delay makes.
const TARGET_DELAY_S: f64 = 0.005;

/// ns-2's smallest automatic min_th, in typical packets (red.cc:202).
const MIN_TH_PACKETS: f64 = 5.0;

/// ns-2's shortest assumed round trip (red.cc:192-193).
const MIN_RTT_S: f64 = 0.1;

/// `ptc`, the "packet time constant": typical packets of `mean_packet_bytes` the
/// link sends per second (red.cc:280, `bandwidth / (8 · mean_pktsize)`).
pub fn packet_rate(rate_bps: u64, mean_packet_bytes: u32) -> f64 {
    rate_bps as f64 / (8.0 * mean_packet_bytes as f64)
}

/// `q_weight_ = -1` (red.cc:189-194): the round trip assumed is three times the
/// link's delay plus a typical packet's transmission, at least 100 ms, and the
/// average's time constant ten such round trips: w_q = 1 − exp(−1 / (10 · rtt · ptc)).
pub fn weight(rate_bps: u64, delay: SimTime, mean_packet_bytes: u32) -> f64 {
    let ptc = packet_rate(rate_bps, mean_packet_bytes);
    let rtt = (3.0 * (delay.as_secs_f64() + 1.0 / ptc)).max(MIN_RTT_S);
    1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
}

/// `thresh_ = 0` (red.cc:201-208): min_th is 5 typical packets, or half the queue
/// of `targetdelay_` if that is more, in typical packets.
pub fn min_th_packets(rate_bps: u64, mean_packet_bytes: u32) -> f64 {
    let target_queue = TARGET_DELAY_S * packet_rate(rate_bps, mean_packet_bytes);
    MIN_TH_PACKETS.max(target_queue / 2.0)
}

/// `maxthresh_ = 0` (red.cc:209-210): three times min_th.
pub fn max_th(min_th: f64) -> f64 {
    3.0 * min_th
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_megabits_with_500_byte_typical_packets() {
        // ptc = 10^7 / 4000 = 2500 packets/s; the target queue 0.005 · 2500 = 12.5,
        // half of it 6.25 > 5: min_th 6.25 typical packets, max_th 18.75.
        assert_eq!(packet_rate(10_000_000, 500), 2500.0);
        assert_eq!(min_th_packets(10_000_000, 500), 6.25);
        assert_eq!(max_th(6.25), 18.75);
        // 50 ms: rtt = 3 · (0.05 + 0.0004) = 0.1512 s, w = 1 − exp(−1/3780).
        let w = weight(10_000_000, SimTime::from_millis(50), 500);
        assert!((w - (1.0 - (-1.0f64 / 3780.0).exp())).abs() < 1e-15);
        assert!((w - 2.6452e-4).abs() < 1e-8);
        // 20 ms: 3 · 0.0204 = 0.0612 s is below 0.1 s: w = 1 − exp(−1/2500).
        let w = weight(10_000_000, SimTime::from_millis(20), 500);
        assert!((w - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
    }

    #[test]
    fn slow_links_keep_five_packets_and_fast_ones_scale() {
        // 1.5 Mb/s: target 0.005 · 375 = 1.875 packets, min_th stays 5.
        assert_eq!(min_th_packets(1_500_000, 500), 5.0);
        // 100 Mb/s: 0.005 · 25,000 / 2 = 62.5 typical packets.
        assert_eq!(min_th_packets(100_000_000, 500), 62.5);
        // 1500-byte typical packets at 10 Mb/s: ptc 833.3, target 4.17: 5.
        assert_eq!(min_th_packets(10_000_000, 1500), 5.0);
        // 100 Mb/s, 1 ms: rtt = max(3 · 0.00104, 0.1) = 0.1, w = 1 − exp(−1/25,000).
        let w = weight(100_000_000, SimTime::from_millis(1), 500);
        assert!((w - (1.0 - (-1.0f64 / 25_000.0).exp())).abs() < 1e-15);
    }
}
