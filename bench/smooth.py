"""Speed of the exact steady-state method (lower-bounds paper, sections V-VI) against the
targets of issue 5: N = 5,000 flows x 1,000 runs under 5 s, N = 1,000,000 in one run under 1 s.

Run: python bench/smooth.py [--repeat R] [--threads T]
Prints the best of R wall-clock times for each case, the target and the ratio.
"""
from __future__ import annotations

import argparse
import os
import time

from cclab.theory import lower_bounds as lb


def best_of(repeat: int, fn) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="repetitions per case (best is reported)")
    p.add_argument("--threads", type=int, default=0, help="worker threads (0: all cores)")
    args = p.parse_args()
    th = args.threads
    print(f"cores available: {os.cpu_count()}, threads: {th or 'all'}, best of {args.repeat}")
    cases = []
    for dist in lb.DISTRIBUTIONS:
        cases.append((f"smooth_queue N=5,000 x 1,000 runs, {dist}", 5.0,
                      lambda d=dist: lb.smooth_queue(5000, d, runs=1000, seed=1, threads=th)))
    for dist in lb.DISTRIBUTIONS:
        cases.append((f"smooth_queue N=1,000,000 x 1 run, {dist}", 1.0,
                      lambda d=dist: lb.smooth_queue(1_000_000, d, runs=1, seed=1, threads=th)))
    cases.append(("smooth_queue N=5,000 x 1,000 runs, single thread, exponential", 5.0,
                  lambda: lb.smooth_queue(5000, "exponential", runs=1000, seed=1, threads=1)))
    cases.append(("smooth_queue N=1,000,000 x 1 run + pooled 99th percentile", 1.0,
                  lambda: lb.smooth_queue(1_000_000, "exponential", runs=1, seed=1, threads=th).top(0.01)))
    cases.append(("smooth_loss N=5,000 x 1,000 runs, B=10, exponential", None,
                  lambda: lb.smooth_loss(5000, "exponential", 10, runs=1000, seed=1, threads=th)))
    cases.append(("smooth_loss N=1,000,000 x 1 run, B=20, pareto", None,
                  lambda: lb.smooth_loss(1_000_000, "pareto", 20, runs=1, seed=1, threads=th)))
    width = max(len(c[0]) for c in cases)
    for name, target, fn in cases:
        t = best_of(args.repeat, fn)
        if target is None:
            print(f"{name:<{width}}  {t:8.3f} s")
        else:
            ok = "ok" if t < target else "SLOW"
            print(f"{name:<{width}}  {t:8.3f} s  target < {target:.0f} s  ({t / target:.2f} of target, {ok})")


if __name__ == "__main__":
    main()
