"""Two builds of the engine side by side: the CPU time per link transmission of a
BASELINE run_toml binary against the current one, on bench/engine.py's long-flow
cases with a drop-tail and a RED bottleneck, runs alternated (A, B, A, B, ...) so
that both see the same machine; the ratio of the medians is the speed of the
current build relative to the baseline (below 1: faster).

    git stash; cargo build --release -p cclab-sim --example run_toml
    cp target/release/examples/run_toml /tmp/run_toml_before; git stash pop
    .venv/bin/python bench/engine_ab.py /tmp/run_toml_before [--repeat 7]

Both builds must give the same transmissions on every case (the results are
unchanged), which this checks.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import CASES, engine_binary, long_flows, run_binary  # noqa: E402

QUEUES = [("droptail", ""), ("red", "")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("baseline", type=Path, help="the baseline's run_toml binary")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    current = engine_binary()
    print(f"{'case':34} {'baseline ns/tx':>15} {'current ns/tx':>14} {'ratio':>7}")
    ratios = []
    for rate, delay, rtt in CASES:
        for flows in (10, 100):
            for queue, _ in QUEUES:
                text = long_flows(rate, delay, rtt, flows, "10s", queue=queue)
                a, b = [], []
                for _ in range(args.repeat):
                    ra, rb = run_binary(args.baseline, text), run_binary(current, text)
                    assert ra["transmissions"] == rb["transmissions"], "the two builds' results differ"
                    a.append(1e9 * ra["cpu_time_s"] / ra["transmissions"])
                    b.append(1e9 * rb["cpu_time_s"] / rb["transmissions"])
                ma, mb = statistics.median(a), statistics.median(b)
                ratios.append(mb / ma)
                print(f"{rate + ' ' + rtt + f', {flows} flows, ' + queue:34} {ma:15.1f} {mb:14.1f} {mb / ma:7.3f}")
    print(f"\ngeometric mean of the ratios: {statistics.geometric_mean(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
