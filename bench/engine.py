"""Engine benchmark: the reference scenario (scenarios/background/single-link.toml)
over 2000 simulated seconds, in cclab and in ns-3 3.44, in the same run.

Prints events per second, wall-clock seconds per simulated second and peak
memory, and compares them with the targets of the packet-level core issue. ns-3
runs the same scenario on the same arrivals (seed 1's flow list) through the
harness in bench/ns3 (installed on first use, about 2 minutes); the speed-up is
the ratio of the two wall-clock times. Memory is measured on the engine alone
(the Rust example binary, no Python) at two durations, to show it does not grow
with simulated time.

    make bench            # or: .venv/bin/python bench/engine.py [--repeat 5] [--no-ns3]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"
TARGET_SPEEDUP = 20.0
TARGET_WALL_S = 2.5
TARGET_EVENTS_PER_S = 5e6


def engine_binary() -> Path:
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "cclab-sim", "--example", "run_toml"],
                   cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "examples" / "run_toml"


def peak_rss_mb(binary: Path, scenario_text: str) -> tuple[float, float]:
    """Run the engine binary on a scenario; return (its peak RSS in MB, wall seconds)."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", dir=REFERENCE.parent, delete=False) as f:
        f.write(scenario_text)
        path = f.name
    try:
        t0 = time.perf_counter()
        out = subprocess.run([str(binary), path], capture_output=True, text=True, check=True).stdout
        wall = time.perf_counter() - t0
        kb = next(int(l.split()[1]) for l in out.splitlines() if l.startswith("peak_rss_kb"))
        return kb / 1024.0, wall
    finally:
        os.unlink(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of the reference scenario (default 5)")
    ap.add_argument("--no-ns3", action="store_true", help="skip the ns-3 run")
    args = ap.parse_args()

    import cclab

    walls, events, api_walls = [], [], []
    for seed in range(1, args.repeat + 1):
        t0 = time.perf_counter()
        r = cclab.run(REFERENCE, seed=seed)
        api_walls.append(time.perf_counter() - t0)
        walls.append(r.summary["wall_time_s"])
        events.append(r.summary["events"])
    sim_s = r.summary["simulated_s"]
    wall = statistics.median(walls)
    ev = statistics.median(events)
    eps = ev / wall

    binary = engine_binary()
    # Series recording off: the sampled series is output that grows with time by design.
    text = re.sub(r'interval = "[^"]+"', 'interval = "0s"', REFERENCE.read_text())
    short = re.sub(r'duration = "[^"]+"', 'duration = "2000s"', text)
    long = re.sub(r'duration = "[^"]+"', 'duration = "20000s"', text)
    rss_2k, _ = peak_rss_mb(binary, short)
    rss_20k, wall_20k = peak_rss_mb(binary, long)

    ok = lambda c: "yes" if c else "NO"
    print(f"reference scenario: {REFERENCE.relative_to(ROOT)}, {sim_s:g} simulated s, {args.repeat} seeds\n")
    print(f"{'measure':44} {'cclab':>12} {'target':>10} {'met':>5}")
    print(f"{'engine wall time (s, median)':44} {wall:12.3f} {TARGET_WALL_S:10.1f} {ok(wall < TARGET_WALL_S):>5}")
    print(f"{'events per second (M, median)':44} {eps / 1e6:12.2f} {TARGET_EVENTS_PER_S / 1e6:10.1f} {ok(eps >= TARGET_EVENTS_PER_S):>5}")
    print(f"{'wall ms per simulated s':44} {wall / sim_s * 1e3:12.4f}")
    print(f"{'events (median)':44} {ev:12,.0f}")
    print(f"{'cclab.run() incl. Python tables (s, median)':44} {statistics.median(api_walls):12.3f}")
    print(f"{'engine peak RSS, 2000 s (MB)':44} {rss_2k:12.1f}")
    print(f"{'engine peak RSS, 20000 s (MB)':44} {rss_20k:12.1f}   ({wall_20k:.2f} s wall, "
          f"x{rss_20k / rss_2k:.2f} memory for x10 simulated time;"
          " series off, the flows table is the only output kept)")
    met = wall < TARGET_WALL_S and eps >= TARGET_EVENTS_PER_S
    if not args.no_ns3:
        met &= side_by_side(wall, sim_s)
    return 0 if met else 1


def side_by_side(cclab_wall: float, sim_s: float) -> bool:
    """ns-3 on the reference scenario, seed 1's arrivals; prints both and the ratio."""
    sys.path.insert(0, str(ROOT / "bench" / "ns3"))
    import ns3run

    binary = ns3run.ensure()
    flows = ns3run.flow_list(REFERENCE, 1)
    t0 = time.perf_counter()
    cc = ns3run.run_cclab(REFERENCE, 1, flows)  # the same arrivals, with ns-3's TCP behaviour
    cc_api = time.perf_counter() - t0
    ns = ns3run.run_ns3(REFERENCE, 1, flows, binary=binary)
    p = ns.perf
    ratio = p["wall_s"] / cclab_wall
    print(f"\nside by side, seed 1's {len(flows)} flows, {sim_s:g} simulated s (one ns-3 run; "
          f"cclab: median above, and this flow list replayed with ns-3's TCP behaviour)\n")
    print(f"{'measure':44} {'cclab':>12} {'ns-3 3.44':>12}")
    print(f"{'wall time (s)':44} {cclab_wall:12.3f} {p['wall_s']:12.2f}")
    print(f"{'wall ms per simulated s':44} {cclab_wall / sim_s * 1e3:12.4f} {p['wall_s'] / sim_s * 1e3:12.2f}")
    print(f"{'events per second (M)':44} {cc.summary['events'] / cc.summary['wall_time_s'] / 1e6:12.2f} "
          f"{p['events'] / p['wall_s'] / 1e6:12.2f}")
    print(f"{'replayed flow list: wall time (s)':44} {cc.summary['wall_time_s']:12.3f} {p['wall_s']:12.2f}")
    print(f"{'peak RSS of the process (MB)':44} {'(above)':>12} {p['peak_rss_kb'] / 1024:12.1f}")
    print(f"\nspeed-up over ns-3 (wall per simulated second): x{ratio:.0f} (target x{TARGET_SPEEDUP:.0f})"
          f"; on the replayed list x{p['wall_s'] / cc.summary['wall_time_s']:.0f}"
          f" (cclab.run() with its Python tables: {cc_api:.2f} s)")
    return ratio >= TARGET_SPEEDUP


if __name__ == "__main__":
    sys.exit(main())
