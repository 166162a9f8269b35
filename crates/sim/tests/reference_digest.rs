//! The reference scenario's flows table, pinned: any change to the engine that
//! alters the results of an existing scenario fails here, and must say why.
//!
//! The digest is FNV-1a (64-bit) over the table's columns in order, each value
//! little-endian (f64 as its bits, booleans as one byte). It was computed with the
//! engine before the re-cut (commit faf20c4) and is unchanged by it.
mod common;
use cclab_sim::scenario;
use std::path::Path;

fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

#[test]
fn reference_scenario_flows_are_unchanged() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/background/single-link.toml");
    let text = std::fs::read_to_string(path).unwrap().replace("duration = \"2000s\"", "duration = \"300s\"");
    let (cfg, _) = scenario::load_toml(&text, Path::new("."), Some(1)).unwrap();
    let r = common::run_config(cfg);
    let f = &r.flows;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let n = f.len();
    for i in 0..n {
        fnv(&mut h, &f.class[i].to_le_bytes());
    }
    for col in [&f.size, &f.arrival, &f.finish, &f.completion_time] {
        for x in col.iter() {
            fnv(&mut h, &x.to_bits().to_le_bytes());
        }
    }
    for x in &f.bytes_delivered {
        fnv(&mut h, &x.to_le_bytes());
    }
    for col in [&f.retransmissions, &f.timeouts] {
        for x in col.iter() {
            fnv(&mut h, &x.to_le_bytes());
        }
    }
    for col in [&f.finished, &f.warmup] {
        for &x in col.iter() {
            fnv(&mut h, &[x as u8]);
        }
    }
    assert_eq!((n, r.num("whole_run_packets_sent") as u64), (67, 497_857));
    assert_eq!(h, 0x14c6_4ae7_8f75_6963, "digest of the flows table changed: {h:#018x}");
}
