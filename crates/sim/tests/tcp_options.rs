//! TCP options and presets as a scenario sets them, and loss recovery under
//! heavy loss checked by conservation: every flow that finishes delivered exactly
//! its size, and every packet sent was delivered, dropped or is still in flight.
mod common;
use cclab_sim::transport::tcp::{Preset, RecoveryRule, TcpParams};
use cclab_sim::transport::Transport;
use cclab_sim::scenario;
use std::path::Path;

fn scenario(tcp: &str, protocol: &str, seed: u64) -> String {
    format!(
        r#"
name = "options"
duration = "40s"
[tcp]
{tcp}
[[links]]
name = "bn"
from = "a"
to = "b"
rate = "5Mbps"
delay = "20ms"
queue = {{ type = "droptail", limit = "15KB" }}
[[links]]
name = "back"
from = "b"
to = "a"
rate = "5Mbps"
delay = "20ms"
[[traffic]]
name = "web"
type = "poisson"
protocol = "{protocol}"
src = "a"
dst = "b"
load = 0.5
size = {{ dist = "pareto", shape = 1.5, mean = "100KB" }}
[[traffic]]
name = "long"
type = "long_lived"
protocol = "{protocol}"
src = "a"
dst = "b"
count = 2
[record]
interval = "0s"
# seed {seed}
"#
    )
}

fn tcp_of(text: &str) -> Result<TcpParams, String> {
    let (cfg, _) = scenario::load_toml(text, Path::new("."), Some(1)).map_err(|e| e.to_string())?;
    match &cfg.classes[0].transport {
        Transport::Window { tcp, .. } => Ok(tcp.clone()),
        other => panic!("a window transport, got {other:?}"),
    }
}

#[test]
fn presets_set_every_option_and_explicit_keys_win() {
    assert_eq!(tcp_of(&scenario("preset = \"ns3\"", "newreno", 1)).unwrap(), Preset::Ns3.params());
    assert_eq!(tcp_of(&scenario("preset = \"linux\"", "newreno", 1)).unwrap(), Preset::Linux.params());
    assert_eq!(tcp_of(&scenario("preset = \"ns2\"", "newreno", 1)).unwrap(), Preset::Ns2.params());
    let p = tcp_of(&scenario("preset = \"ns3\"\nmss = 1460\ntimestamps = false", "newreno", 1)).unwrap();
    assert_eq!((p.mss, p.timestamps, p.sack, p.min_rto.as_secs_f64()), (1460, false, true, 1.0));
    // SACK off under a preset with PRR: recovery falls back to halving, which is all
    // that exists without SACK, unless `recovery` is named.
    let p = tcp_of(&scenario("preset = \"linux\"\nsack = false", "newreno", 1)).unwrap();
    assert_eq!((p.sack, p.recovery), (false, RecoveryRule::Halve));
    let e = tcp_of(&scenario("sack = false\nrecovery = \"prr\"", "newreno", 1)).unwrap_err();
    assert!(e.starts_with("tcp.recovery: \"prr\" needs sack = true"), "{e}");
    let e = tcp_of(&scenario("preset = \"bsd\"", "newreno", 1)).unwrap_err();
    assert!(e.starts_with("tcp.preset: unknown preset \"bsd\""), "{e}");
}

#[test]
fn every_recovery_delivers_exactly_what_was_sent_under_heavy_loss() {
    let options = [
        "sack = false",
        "sack = true",
        "sack = true\nrecovery = \"prr\"",
        "sack = true\nrecovery = \"prr\"\ntimestamps = true\ndelayed_ack = true\nbyte_counting = 2",
        "preset = \"ns3\"",
        "preset = \"linux\"",
        "preset = \"ns2\"",
        "preset = \"ns2\"\nsack = true",
    ];
    for tcp in options {
        for protocol in ["newreno", "reno"] {
            for seed in 1..=3 {
                let (cfg, _) = scenario::load_toml(&scenario(tcp, protocol, seed), Path::new("."), Some(seed)).unwrap();
                let r = common::run_config(cfg);
                let what = format!("{tcp:?} {protocol} seed {seed}");
                let f = &r.flows;
                let mut finished = 0;
                for i in 0..f.len() {
                    if f.finished[i] {
                        finished += 1;
                        assert_eq!(f.bytes_delivered[i] as f64, f.size[i], "{what}: flow {i}");
                    } else {
                        // (a long-lived flow's size is NaN: never reached)
                        assert!(!(f.bytes_delivered[i] as f64 >= f.size[i]), "{what}: flow {i}");
                    }
                }
                assert!(finished > 50, "{what}: {finished} flows finished");
                let sent = r.num("whole_run_packets_sent");
                let accounted = r.num("whole_run_packets_delivered") + r.num("whole_run_packets_dropped") + r.num("packets_in_flight");
                assert_eq!(sent, accounted, "{what}");
                assert!(r.num("whole_run_packets_dropped") > 100.0, "{what}: the test needs losses");
            }
        }
    }
}

#[test]
fn sack_times_out_less_than_newreno_under_the_same_losses() {
    let timeouts = |tcp: &str| -> u64 {
        (1..=3)
            .map(|seed| {
                let (cfg, _) = scenario::load_toml(&scenario(tcp, "newreno", seed), Path::new("."), Some(seed)).unwrap();
                let r = common::run_config(cfg);
                r.flows.timeouts.iter().map(|&t| t as u64).sum::<u64>()
            })
            .sum()
    };
    // Timeouts that remain with SACK are mostly tail losses of short flows (too few
    // segments behind the loss for three duplicate ACKs), which SACK cannot help;
    // several losses in one window, which end NewReno's recovery in a timeout when
    // the retransmission is lost again or the timer is not restarted, it repairs.
    // Measured: 326 against 523 over these three seeds (322 when the SACKed bits
    // survived a timeout, before RESULTS_VERSION 5).
    let (newreno, sack) = (timeouts("sack = false"), timeouts("sack = true\nrecovery = \"prr\""));
    assert!(sack * 4 < newreno * 3, "timeouts: SACK {sack}, NewReno {newreno}");
}
