//! Run a TOML scenario from the command line and print the summary (for profiling
//! the engine without Python): `cargo run --release --example run_toml -- FILE`.
use cclab_sim::{scenario, Simulation};
use std::path::Path;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_toml FILE.toml");
    let text = std::fs::read_to_string(&path).expect("cannot read scenario");
    let base = Path::new(&path).parent().unwrap_or(Path::new("."));
    let (cfg, warnings) = match scenario::load_toml(&text, base, None) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let r = Simulation::new(cfg, warnings).run(&mut |_| true);
    for (k, v) in &r.summary {
        println!("{k:40} {v:?}");
    }
    // Peak resident memory of this process (Linux), for bench/engine.py.
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            println!("peak_rss_kb {}", line.split_whitespace().nth(1).unwrap_or("?"));
        }
    }
    for l in &r.links {
        println!("{} util {:.4} drops {} meanq {:.2} maxq {}", l.name, l.utilization, l.drops, l.mean_queue_packets, l.max_queue_packets);
    }
}
