"""Ideally smooth senders at packet level against the exact method (lower-bounds paper).

N constant-rate flows at U·C/N each, every flow starting at a uniformly random phase
within one packet interval (`phase = "random"`), through one FIFO link of rate C
(Podlesny and Gorinsky, WUCSE-2007-42, section II: equal packets, one link, no other
delay before the queue). The queue compared is the paper's q = d/D (eq. 6): the time a
packet waits before its transmission starts, in packet times; the engine records it per
arriving packet as `backlog` in the `arrivals` table, the exact method (crates/smooth,
the paper's 2N-packet method of section V) returns it per packet.

Two checks per (N, U), N in {10, 100, 1000}, U in {0.8, 0.95}:

1. Packet for packet: for every engine realization, the exact method on the phases the
   engine drew (its flows' start times) gives the same multiset of waits, to the ns.
2. In distribution: R engine realizations (seeds 1..R) against R exact-method
   realizations on phases drawn independently (numpy PCG64, uniform on [0, T) ns).
   Within a realization the pattern is periodic and exact, so the independent unit is
   the realization: the pooled CDF F(x) = mean over realizations of the fraction of
   that realization's packets with q <= x, compared at the exact side's pooled
   quantiles x_p (p in LEVELS) and for the mean queue by a two-sample z-test with the
   per-realization variances. Tolerance: |z| below the Bonferroni bound for a 1%
   family-wise level over every comparison of the run.

For context the figure also shows the paper's own Poisson model (exponential flow
inter-arrival times of mean D/U, `smooth_queue(n, "exponential")`): uniform phases are
Poisson arrivals conditioned on N of them in one period, so the two are close but not
equal (the paper's t_i spread past T and wrap around).

    make validate-smooth            # or: .venv/bin/python bench/validate_smooth.py [--runs 1000]

Writes results/validate-smooth/report.md, results.json and cdf.png; exit status 1 if a
check fails.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]
LINK_BPS = 100_000_000  # C = 100 Mbps, the paper's default (section V)
# (U, packet bytes): D = 8·size/C; T = N·D/U is then a whole number of ns.
UTILIZATIONS = [(0.8, 1000), (0.95, 950)]
FLOWS = [10, 100, 1000]
LEVELS = [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]
ALPHA = 0.01


def model(n: int, u: float, size: int) -> tuple[int, int]:
    """(D, T) in ns."""
    d = size * 8 * 1_000_000_000 // LINK_BPS
    t = round(n * d / u)
    assert t * u == n * d, "U and the size must give an integer period"
    return d, t


def scenario(n: int, u: float, size: int, seed: int) -> dict:
    """N smooth senders from time 0; the arrivals of [2T, 3T): one packet per flow in
    the steady state (every flow has started by T; one full period later the work at the
    link repeats exactly)."""
    d, t = model(n, u, size)
    return {
        "duration": f"{3 * t}ns", "warmup": f"{2 * t}ns", "seed": seed,
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "100Mbps", "delay": "1ms",
                   "queue": {"limit": "100000pkts"}}],
        "traffic": [{"name": "smooth", "type": "cbr", "src": "a", "dst": "b", "count": n,
                     "rate": f"{size * 8e9 / t!r}bps", "packet_size": size, "phase": "random"}],
        "record": {"interval": "0s", "arrivals": ["bn"]},
    }


def engine(cclab, n: int, u: float, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Steady-state waits (ns, sorted) and flow start times (ns) of one engine realization."""
    r = cclab.run(scenario(n, u, size, seed))
    a = r.arrivals
    assert len(a) == n and not a.dropped.any()
    waits = np.sort(np.round(a.backlog.to_numpy() * 1e9).astype(np.int64))
    starts = np.round(r.flows.arrival.to_numpy() * 1e9).astype(np.int64)
    return waits, starts


def exact(lb, starts: np.ndarray, d: int, t: int) -> np.ndarray:
    st = lb.steady_queue(starts, t, d, buffer=None)
    assert st.converged and st.periods <= 2
    return np.sort(np.asarray(st.wait, dtype=np.int64))


def cdf_rows(q: np.ndarray, x: float) -> np.ndarray:
    """Per realization (rows of q): the fraction of its packets with queue <= x."""
    return (q <= x + 1e-12).mean(axis=1)


def z_two(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample z of the means of per-realization values a and b (nan if both constant)."""
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return float((a.mean() - b.mean()) / se) if se > 0 else (0.0 if a.mean() == b.mean() else float("inf"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="realizations per (N, U) on each side (default 1000)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "validate-smooth")
    args = ap.parse_args()
    import cclab
    from cclab.theory import lower_bounds as lb

    R = args.runs
    configs = [(n, u, size) for u, size in UTILIZATIONS for n in FLOWS]
    comparisons = len(configs) * (len(LEVELS) + 1)
    z_crit = float(norm.ppf(1 - ALPHA / 2 / comparisons))
    rng = np.random.Generator(np.random.PCG64(20070742))
    rows, curves, ok = [], {}, True
    t0 = time.perf_counter()
    for n, u, size in configs:
        d, t = model(n, u, size)
        eng, mismatched = [], 0
        for seed in range(1, R + 1):
            w, starts = engine(cclab, n, u, size, seed)
            mismatched += not np.array_equal(w, exact(lb, starts, d, t))
            eng.append(w / d)
        exa = np.array([exact(lb, rng.integers(0, t, n), d, t) / d for _ in range(R)])
        eng = np.array(eng)
        xs = np.quantile(exa.ravel(), LEVELS)
        zs = [z_two(cdf_rows(eng, x), cdf_rows(exa, x)) for x in xs]
        z_mean = z_two(eng.mean(axis=1), exa.mean(axis=1))
        worst = max(abs(z) for z in zs + [z_mean])
        passed = mismatched == 0 and worst < z_crit
        ok &= passed
        paper = lb.smooth_queue(n, "exponential", utilization=u, runs=R, seed=1).queues.ravel()
        curves[(n, u)] = (np.sort(eng.ravel()), np.sort(exa.ravel()), np.sort(paper))
        rows.append(dict(
            n=n, utilization=u, packet_bytes=size, runs=R, packets_per_side=R * n,
            realizations_matching_exactly=R - mismatched,
            mean_engine=float(eng.mean()), mean_exact=float(exa.mean()),
            mean_se=float(np.sqrt(eng.mean(axis=1).var(ddof=1) / R + exa.mean(axis=1).var(ddof=1) / R)),
            quantiles_engine=[float(v) for v in np.quantile(eng.ravel(), LEVELS)],
            quantiles_exact=[float(v) for v in xs],
            z_cdf=[float(z) for z in zs], z_mean=float(z_mean), max_abs_z=float(worst), passed=bool(passed)))
        print(f"N={n:5d} U={u:.2f}: {R - mismatched}/{R} realizations equal packet for packet; "
              f"mean queue {eng.mean():.3f} vs {exa.mean():.3f} packets; max |z| {worst:.2f} "
              f"(bound {z_crit:.2f}) {'ok' if passed else 'FAILED'}  [{time.perf_counter() - t0:.0f} s]", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(dict(levels=LEVELS, alpha=ALPHA, z_bound=z_crit, rows=rows), indent=1))
    figure(curves, args.out / "cdf.png")
    report(rows, z_crit, R, args.out / "report.md")
    print(f"\n{'all checks passed' if ok else 'SOME CHECKS FAILED'}; wrote {args.out}/report.md, results.json, cdf.png")
    return 0 if ok else 1


def figure(curves: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(UTILIZATIONS), len(FLOWS), figsize=(13, 7.5), constrained_layout=True)
    for (n, u), (e, x, p) in curves.items():
        ax = axes[[v for v, _ in UTILIZATIONS].index(u), FLOWS.index(n)]
        for data, style, label in ((x, "-", "exact method, independent uniform phases"),
                                   (e, "--", "packet level, phase = \"random\""),
                                   (p, ":", "paper's Poisson model (exact method)")):
            ax.plot(data, np.arange(1, len(data) + 1) / len(data), style, label=label, lw=1.6)
        ax.set_title(f"N = {n}, U = {u}")
        ax.set_xlabel("queue met by an arriving packet, q = d/D (packets)")
        ax.set_ylabel("P(queue <= q)")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Ideally smooth senders: steady-state queue, packet level vs the exact 2N-packet method")
    fig.savefig(path, dpi=110)


def report(rows: list, z_crit: float, runs: int, path: Path) -> None:
    lv = " / ".join(f"{int(p * 100)}%" for p in LEVELS)
    lines = [
        "# Ideally smooth senders: packet level vs the exact method",
        "",
        f"`bench/validate_smooth.py`, {runs} realizations per (N, U) on each side. C = 100 Mbps; U = 0.8 with 1000-byte",
        "packets, U = 0.95 with 950-byte packets (integer periods). Queue q = d/D in packets (eq. 6), at each",
        "packet's arrival. Test: pooled CDF at the exact side's quantiles and the mean queue, two-sample z",
        f"over realizations, |z| < {z_crit:.2f} (1% family-wise, Bonferroni).",
        "",
        f"| N | U | equal packet for packet | mean q engine | mean q exact | ± se | quantiles {lv}: engine | exact | max abs z | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        qe = " / ".join(f"{v:.2f}" for v in r["quantiles_engine"])
        qx = " / ".join(f"{v:.2f}" for v in r["quantiles_exact"])
        lines.append(f"| {r['n']} | {r['utilization']} | {r['realizations_matching_exactly']}/{r['runs']} | "
                     f"{r['mean_engine']:.3f} | {r['mean_exact']:.3f} | {r['mean_se']:.3f} | {qe} | {qx} | "
                     f"{r['max_abs_z']:.2f} | {'ok' if r['passed'] else 'FAILED'} |")
    lines += ["", "![CDFs](cdf.png)", ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
