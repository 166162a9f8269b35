"""The settling time of every packet-level reproduction of the background papers, measured.

For each entry, its slowest points (the highest load of its grid, where the access limit
has furthest to climb and the lower-than-best-effort protocols accumulate most) run at
the entry's full length with the series sampled every 120 s from the start, and the
MSER-5 rule (cclab.experiments.settling) says when each settles: the access limit, the
waiting chunks and the background's active flows, on the mean of the seeds' series
(the largest single seed's beside it). An entry's warm-up must exceed the largest
settling time of its points (its Size checks it against the value written there).

    .venv/bin/python bench/settling.py [--seeds 3] [--store DIR] [--out results/settling.csv] [ENTRY ...]

Prints one row per (entry, point, metric): the settling time of the mean series, the
largest single seed's, the warm-up, and a flag where the mean series had not settled
within half the run (MSER looks no further: a series still trending at the end
"settles" near half the run, which then says it did not settle).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from cclab.experiments import catalogue
from cclab.experiments.reproductions import background_packet as bp
from cclab.experiments.reproductions import background_runs as br
from cclab.experiments.reproductions import fairbat as fb
from cclab.experiments.settling import settling_times

SLOW = ("vanilla", "fairbat", "rate_tracking", "ledbat", "tcp_lp")


def plan(name: str, size):
    """(network, points) of an entry's slowest points at its full size."""
    hi = lambda axis: (max(size.axis(axis)),)
    if name in ("fairbat-fig1", "fairbat-fig2"):
        k = fb.FIG2_K if name == "fairbat-fig2" else 0
        return br.FAIRBAT_ONE_LINK, fb.single_link_points(size, [p for p in fb.FIG1_POLICIES if p in SLOW],
                                                          hi("ρ_b"), k=k)
    if name == "fairbat-fig3":
        ks = size.axis("k")
        return br.FAIRBAT_ONE_LINK, [p for k in (ks[0], ks[-1])
                                     for p in fb.single_link_points(size, ("vanilla", "fairbat"), hi("ρ_b"), k=k)]
    if name == "fairbat-fig5":
        w = max(size.axis("ρ_s"))
        return br.FAIRBAT_TWO_LINKS, [br.packet_point(br.FAIRBAT_TWO_LINKS, p, {"web1": w, "web2": w, "background": 0.2},
                                                      size, labels={"web_load": w}, group=(w,))
                                      for p in fb.FIG1_POLICIES if p in SLOW]
    pols = [p for p in bp.POLICIES if p in SLOW]
    if name == "background-packet-fig5":
        return br.BG_ONE_LINK, [p for k in size.axis("k")
                                for p in bp.points(br.BG_ONE_LINK, bp.single_link_loads, hi("ρ"), size, pols, k=k)]
    if name == "background-packet-fig6":
        return br.BG_ONE_LINK, bp.points(br.BG_ONE_LINK, bp.single_link_loads, hi("ρ"), size,
                                         [p for p in bp.FIG6_POLICIES if p in SLOW], k=1)
    if name == "background-packet-fig7":
        return br.BG_TWO_LINKS, bp.points(br.BG_TWO_LINKS, bp.two_link_loads, hi("ρ"), size, pols)
    if name == "background-packet-fig9":
        return br.BG_THREE_LINKS, bp.points(br.BG_THREE_LINKS, bp.three_link_loads, hi("ρ1"), size, pols)
    raise KeyError(name)


ENTRIES = ("fairbat-fig1", "fairbat-fig2", "fairbat-fig3", "fairbat-fig5", "background-packet-fig5",
           "background-packet-fig6", "background-packet-fig7", "background-packet-fig9")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entries", nargs="*", default=list(ENTRIES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--store", default="results/settling-store")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default="results/settling.csv")
    args = ap.parse_args()
    frames = []
    for name in args.entries:
        entry = catalogue.get(name)
        size = entry.sizes.full
        net, points = plan(name, size)
        ctx = catalogue.Context(quick=False, out=Path("."), store=args.store, workers=args.workers, name=name,
                                size=size, progress=True)
        rows = settling_times(ctx, "settling", points, list(net.background), range(1, args.seeds + 1))
        rows["entry"], rows["duration_s"], rows["warmup_s"] = name, size.duration, size.warmup
        frames.append(rows)
        show(rows)
    out = pd.concat(frames, ignore_index=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    out.drop(columns=["group"]).to_csv(args.out, index=False)
    print(f"\nwritten {args.out}")
    return 0


def show(rows: pd.DataFrame) -> None:
    labels = [c for c in rows.columns if c not in ("group", "metric", "seeds", "settling_s", "largest_seed_s",
                                                   "last_mean", "entry", "duration_s", "warmup_s")]
    for r in rows.to_dict("records"):
        half = r["duration_s"] / 2
        flag = "" if r["settling_s"] < 0.95 * half else "  NOT SETTLED within half the run"
        point = ", ".join(f"{k} {r[k]}" for k in labels if not (isinstance(r[k], float) and math.isnan(r[k])))
        print(f"{r['entry']:<24} {point}, {r['metric']}: {r['settling_s']:,.0f} s (mean of {r['seeds']} seeds; "
              f"largest single seed {r['largest_seed_s']:,.0f} s; last mean {r['last_mean']:.1f}; warm-up "
              f"{r['warmup_s']:,.0f} s){flag}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
