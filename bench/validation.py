"""Validation speed against the engine's (issue 12): `cclab.validate` on large
scenarios must take at most twice the engine's own time on them.

Three scenarios (1 simulated second):

1. a chain of 1,000 duplex links (2,000 links), 1,000 long-lived classes of one hop;
2. the same chain, 1,000 classes crossing 500 links each (half a million hops);
3. one link, 1,000 long-lived classes.

The ratio is the validation time over cclab.run's on the same scenario, both in
a fresh process (the first call, imports included: validation needs the compiled
core, cclab.run also pandas) and in a warm one (the second call). The engine's own
wall time (`summary["wall_time_s"]`, the event loop only) is shown beside.
Not a timed test: the numbers depend on the machine; docs/performance.md records them.

    .venv/bin/python bench/validation.py
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

CASES = {
    "chain 1000 links, 1000 classes x 1 hop": (1000, 1000, 1),
    "chain 1000 links, 1000 classes x 500 hops": (1000, 1000, 500),
    "1 link, 1000 classes": (1, 1000, 1),
}


def chain(n: int, classes: int, hops: int, duration: str = "1s") -> dict:
    """n duplex links n0 -> n1 -> ... -> nN; class k from node k mod n over `hops` links."""
    links = [{"name": f"l{i}", "from": f"n{i}", "to": f"n{i + 1}", "rate": "10Mbps", "delay": "1ms"} for i in range(n)]
    traffic = [{"name": f"c{k}", "type": "long_lived", "src": f"n{k % n}", "dst": f"n{min(n, k % n + hops)}"}
               for k in range(classes)]
    return {"duration": duration, "links": links, "traffic": traffic, "record": {"interval": "0.1s"}}


CHILD = """
import json, sys, time
sc = json.loads(sys.stdin.read())
import cclab
call = cclab.validate if sys.argv[1] == "validate" else cclab.run
t1 = time.perf_counter()
r = call(sc)
t2 = time.perf_counter()
r = call(sc)
t3 = time.perf_counter()
print(json.dumps({"fresh": t2 - t1, "warm": t3 - t2,
                  "engine": r.summary["wall_time_s"] if sys.argv[1] == "run" else None}))
"""


def measure(what: str, sc: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, what], input=json.dumps(sc), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def main() -> int:
    print(f"{'scenario':42} {'validate':>17} {'cclab.run':>17} {'engine':>7} {'ratio':>12}")
    print(f"{'':42} {'fresh':>8} {'warm':>8} {'fresh':>8} {'warm':>8} {'':>7} {'fresh':>5} {'warm':>6}")
    worst = 0.0
    for name, args in CASES.items():
        sc = chain(*args)
        v, r = measure("validate", sc), measure("run", sc)
        ratios = (v["fresh"] / r["fresh"], v["warm"] / r["warm"])
        worst = max(worst, *ratios)
        print(f"{name:42} {v['fresh']:7.3f}s {v['warm']:7.3f}s {r['fresh']:7.3f}s {r['warm']:7.3f}s "
              f"{r['engine']:6.3f}s {ratios[0]:5.2f} {ratios[1]:6.2f}")
    print(f"worst ratio of validation to cclab.run: {worst:.2f} (target: at most 2)")
    return 0


if __name__ == "__main__":
    t = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - t:.0f} s)")
    sys.exit(code)
