"""Very large topologies through the command line (issue 26): `cclab validate` of a
chain of 65,538 directed links must answer in under 5 s, and `cclab run FILE --json
--out DIR` of one simulated second over 32,769 duplex links (65,538 directed) with
one CBR class in under 10 s.

Each command runs in a fresh process, as a user would start it (imports included),
best of three. Not a timed test: docs/performance.md records the numbers, and
tests/test_new_user_inputs.py runs a smaller chain through the same paths.

    .venv/bin/python bench/topology.py
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

CCLAB = str(Path(sys.executable).with_name("cclab"))


def chain(n: int, duplex: bool, dst: int) -> str:
    """A chain n0 -> n1 -> ... -> n{n} of n links and one CBR flow to n{dst}; the links
    are duplex, or (``duplex`` false) only those the flow crosses, for its return route."""
    parts = ['name = "chain"\nduration = "1s"\n']
    for i in range(n):
        d = "true" if duplex or i < dst else "false"
        parts.append(f'[[links]]\nfrom = "n{i}"\nto = "n{i + 1}"\nrate = "10Mbps"\ndelay = "1ms"\nduplex = {d}\n')
    parts.append(f'[[traffic]]\nname = "c"\ntype = "cbr"\nsrc = "n0"\ndst = "n{dst}"\nrate = "1Mbps"\n')
    return "".join(parts)


def best_of(cmd: list[str], n: int = 3) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.monotonic() - t0)
    return best


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one_way = folder / "chain-65538.toml"
        # A route may cross at most 65,535 links: the flow goes 100 hops, the rest only is read.
        one_way.write_text(chain(65_438, duplex=False, dst=100))  # 65,338 one-way + 100 duplex = 65,538 links
        duplex = folder / "duplex-32769.toml"
        duplex.write_text(chain(32_769, duplex=True, dst=32_769))
        v = best_of([CCLAB, "validate", str(one_way)])
        r = best_of([CCLAB, "run", str(duplex), "--json", "--out", str(folder / "out")])
    print(f"cclab validate, a chain of 65,538 directed links:      {v:5.2f} s (target < 5 s)")
    print(f"cclab run --json --out, 32,769 duplex links, 1 s CBR: {r:5.2f} s (target < 10 s)")
    return 0 if v < 5 and r < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
