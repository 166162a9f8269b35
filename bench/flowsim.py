"""Speed of the flow-level simulator: flow events (arrivals + departures) per second.

Run:  python bench/flowsim.py [--scale S]
Each scenario runs on one thread. Columns: events simulated; engine wall seconds (timed
in Rust, excluding Python) and events per engine second; CPU seconds of the whole call
(time.process_time: on a machine shared with other jobs this excludes time spent waiting
for a core) and events per CPU second.
"""
from __future__ import annotations

import argparse
import time

from cclab import flowsim


def scenarios(scale: float):
    d = 1e6 * scale
    two = lambda policy, **p: flowsim.Scenario(
        capacities=(1.0, 1.0),
        classes=[flowsim.Short(load=0.4, route=(0,), name="s1"), flowsim.Short(load=0.4, route=(1,), name="s2"),
                 flowsim.Background(policy, p, load=0.3, route=(0, 1), name="bg")],
        duration=d, replications=4)
    return {
        "M/M/1-PS rho=0.9": flowsim.single_link(0.9, policy=None, duration=d, replications=4),
        "wTCP k=1 w=1 rho=0.7": flowsim.single_link(0.7, 1, "wtcp", w=1.0, duration=d, replications=4),
        "threshold k=3 n0=23 rho=0.8": flowsim.single_link(0.8, 3, "threshold", n0=23, duration=d, replications=4),
        "implementable k=1 rho=0.5": flowsim.single_link(0.5, 1, "implementable", x_cap=0.28, duration=d,
                                                         replications=4),
        "Pareto(2.2) PS rho=0.7": flowsim.single_link(0.7, policy=None, size="pareto", shape=2.2, duration=d,
                                                      replications=4),
        "access control M=2 rho=0.5 rho_b=0.2": flowsim.single_link(0.5, 1, "access_control", limit=2.0,
                                                                    background_load=0.2, duration=d, replications=4),
        "FAIRBAT rho=0.5 rho_b=0.25": flowsim.single_link(0.5, 1, "fairbat", background_load=0.25, duration=d,
                                                          replications=4),
        "vanilla rho=0.5 rho_b=0.3": flowsim.single_link(0.5, 1, "vanilla", background_load=0.3, duration=d,
                                                         replications=4),
        "two links max-min, access control": two("access_control", limit=2.0),
        "two links, low priority": two("low_priority"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply simulated durations (default 1)")
    args = ap.parse_args()
    flowsim.simulate(flowsim.single_link(0.5, policy=None, duration=10.0, replications=2))  # imports
    print(f"{'scenario':40s} {'events':>10s} {'engine s':>9s} {'events/s':>10s} {'CPU s':>7s} {'events/CPU-s':>12s}")
    tot_ev = tot_s = tot_cpu = 0.0
    for name, sc in scenarios(args.scale).items():
        c0 = time.process_time()
        res = flowsim.simulate(sc)
        cpu = time.process_time() - c0
        tot_ev += res.events
        tot_s += res.wall_s
        tot_cpu += cpu
        print(f"{name:40s} {res.events:10d} {res.wall_s:9.3f} {res.events_per_s:10.3e} {cpu:7.3f} {res.events / cpu:12.3e}")
    print(f"{'all':40s} {int(tot_ev):10d} {tot_s:9.3f} {tot_ev / tot_s:10.3e} {tot_cpu:7.3f} {tot_ev / tot_cpu:12.3e}")


if __name__ == "__main__":
    main()
