"""`cclab run` against `cclab.run` (issue 12): the command line must take at most
twice the API's time on the same scenario.

One link (100 Mbps, 10 ms), N Poisson classes of exponential 100 kB flows sharing
load 0.5, 20 simulated seconds, N = 100, 300, 1,000, 3,000. Each is timed in one
warm process (imports done, best of three): `cclab.run(FILE)`, then
`cclab.cli.main(["run", FILE, "--quiet"])` (summary printed to a buffer), then the
same with `--out DIR` (Parquet, JSON and the plot written, folder swapped in
atomically). Start-up is measured apart: `python -c "import cclab"`, `cclab --help`
and the imports of `cclab run`, each in a fresh process (best of three).
Not a timed test: docs/performance.md records the numbers; tests/test_cli.py
guards the ratio at 300 classes.

    .venv/bin/python bench/cli.py
"""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cclab
from cclab import cli

SIZES = (100, 300, 1000, 3000)


def scenario(n: int, folder: Path) -> Path:
    text = ('name = "many"\nduration = "20s"\nseed = 1\n[[links]]\nname = "bn"\nfrom = "a"\nto = "b"\n'
            'rate = "100Mbps"\ndelay = "10ms"\nqueue = { type = "droptail", limit = "50ms" }\n')
    for i in range(n):
        text += (f'[[traffic]]\nname = "c{i}"\ntype = "poisson"\nsrc = "a"\ndst = "b"\nload = {0.5 / n}\n'
                 'size = { dist = "exponential", mean = "100kB" }\n')
    f = folder / f"many-{n}.toml"
    f.write_text(text)
    return f


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def quiet_main(argv: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(argv) == 0


def startup(code: list[str]) -> float:
    return best(lambda: subprocess.run(code, check=True, capture_output=True))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"{'classes':>8} {'cclab.run':>10} {'cclab run':>10} {'ratio':>6} {'--out':>8} {'ratio':>6}")
        worst = 0.0
        for n in SIZES:
            f = scenario(n, tmp)
            cclab.run(str(f))  # imports, caches
            api = best(lambda: cclab.run(str(f)))
            run = best(lambda: quiet_main(["run", str(f), "--quiet"]))
            out = best(lambda: quiet_main(["run", str(f), "--quiet", "--out", str(tmp / "out")]))
            worst = max(worst, run / api)
            print(f"{n:8d} {api:9.3f}s {run:9.3f}s {run / api:6.2f} {out:7.3f}s {out / api:6.2f}")
        print(f"worst ratio of `cclab run` to cclab.run: {worst:.2f} (target: at most 2)")
    py = sys.executable
    print("\nstart-up, fresh process (best of 3):")
    for label, code in [("python -c pass", [py, "-c", "pass"]),
                        ("import cclab", [py, "-c", "import cclab"]),
                        ("cclab --help", [py, "-m", "cclab.cli", "--help"]),
                        ("cclab validate (single-link)", [py, "-m", "cclab.cli", "validate",
                                                          str(Path(__file__).parents[1] / "scenarios/background/single-link.toml")]),
                        ("import cclab.api (pandas, numpy)", [py, "-c", "import cclab.api"])]:
        print(f"  {label:34} {startup(code):6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
