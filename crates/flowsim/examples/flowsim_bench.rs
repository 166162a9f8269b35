//! Events per second of the engine on a few scenarios (no Python):
//! `cargo run --release -p cclab-flowsim --example flowsim_bench`.
use cclab_flowsim::*;

/// CPU seconds consumed by this thread (Linux `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`),
/// so the figure does not depend on other jobs sharing the machine.
#[cfg(target_os = "linux")]
fn thread_cpu_s() -> f64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, tp: *mut Timespec) -> i32;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one Timespec; 3 is CLOCK_THREAD_CPUTIME_ID on Linux.
    unsafe { clock_gettime(3, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_s() -> f64 {
    f64::NAN
}

fn class(name: &str, route: Vec<usize>, kind: ClassKind) -> Class {
    Class {
        name: name.into(),
        route,
        kind,
    }
}

fn main() {
    let e = SizeDist::Exp { mean: 1.0 };
    let d = 1e6;
    let cases: Vec<(&str, Scenario)> = vec![
        (
            "M/M/1-PS rho=0.9",
            Scenario {
                capacities: vec![1.0],
                classes: vec![class("s", vec![0], ClassKind::Short { rate: 0.9, size: e })],
                duration: d,
                warmup: d / 10.0,
                replications: 4,
                seed: 1,
            },
        ),
        (
            "wTCP k=1 rho=0.7",
            Scenario {
                capacities: vec![1.0],
                classes: vec![
                    class("s", vec![0], ClassKind::Short { rate: 0.7, size: e }),
                    class("l", vec![0], ClassKind::Long { count: 1 }),
                    class(
                        "b",
                        vec![0],
                        ClassKind::Background {
                            source: Source::Saturated,
                            policy: Policy::Wtcp { w: 1.0 },
                        },
                    ),
                ],
                duration: d,
                warmup: d / 10.0,
                replications: 4,
                seed: 1,
            },
        ),
        (
            "two links, low priority",
            Scenario {
                capacities: vec![1.0, 1.0],
                classes: vec![
                    class("s1", vec![0], ClassKind::Short { rate: 0.4, size: e }),
                    class("s2", vec![1], ClassKind::Short { rate: 0.4, size: e }),
                    class(
                        "b",
                        vec![0, 1],
                        ClassKind::Background {
                            source: Source::Stream { rate: 0.3, size: e },
                            policy: Policy::LowPriority,
                        },
                    ),
                ],
                duration: d,
                warmup: d / 10.0,
                replications: 4,
                seed: 1,
            },
        ),
    ];
    for (name, sc) in cases {
        let c0 = thread_cpu_s();
        let r = simulate(&sc, 1).expect("valid scenario");
        let cpu = thread_cpu_s() - c0;
        println!(
            "{name:28} {:>10} events  wall {:6.3} s {:10.3e} events/s  CPU {:6.3} s {:10.3e} events/CPU-s",
            r.events,
            r.wall_s,
            r.events_per_second(),
            cpu,
            r.events as f64 / cpu
        );
    }
}
