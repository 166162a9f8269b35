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
    let cpu0 = thread_cpu_s();
    let r = Simulation::new(cfg, warnings).run(&mut |_| true);
    let cpu = thread_cpu_s() - cpu0;
    for (k, v) in &r.summary {
        println!("{k:40} {v:?}");
    }
    // CPU time of the simulation alone (building it, running it, making its tables).
    println!("{:40} Num({cpu})", "cpu_time_s");
    // Peak resident memory of this process (Linux), for bench/engine.py.
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            println!("peak_rss_kb {}", line.split_whitespace().nth(1).unwrap_or("?"));
        }
    }
    // The traces' rows and captured bytes (bench/engine.py: tracing's cost).
    let pcap: usize = r.traces.pcap.iter().map(|(_, b)| b.len()).sum();
    println!("trace_rows {} pcap_bytes {}", r.traces.rows(), pcap);
    for l in &r.links {
        println!(
            "link {} packets_sent {} util {:.4} drops {} meanq {:.2} maxq {}",
            l.name, l.packets_sent, l.utilization, l.drops, l.mean_queue_packets, l.max_queue_packets
        );
    }
}

/// CPU seconds used by this thread (Linux: CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
