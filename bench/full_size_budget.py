"""What `cclab reproduce --all --full` would take, from the entries' own size declarations
and a measured quick `--all`: for each packet-level entry, the simulated seconds of its
full grid at its starting seeds (and at its most seeds), over those of its quick grid, times
the CPU its quick run took per simulated second. Entries without packet runs (theory and
flow level) are taken as measured at full size where a full run's NAME.json is given.

    .venv/bin/python bench/full_size_budget.py QUICK_DIR [--full FULL_DIR] [--workers 2]

QUICK_DIR: the --out of a quick `--all` (its NAME.json: wall time and runs that ran);
`--workers`: the pool it ran with, the CPU per wall second assumed for its packet runs
(the quick `--all` of docs/reproduction.md ran 2 on the 2-core machine). A grid's size is
the product of its axes' lengths; entries whose points are not a plain product (variants,
reused runs) are marked "approximate". The estimate is a lower bound at the starting
seeds: replication adds seeds only where a claim is not yet known.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from cclab.experiments import catalogue


def simulated_seconds(size, seeds: int) -> float | None:
    """Points × seeds × run length of a size's packet grid (None: no packet runs)."""
    if not size.seeds or size.duration is None:
        return None
    points = math.prod(len(tuple(v)) for v in size.axes.values()) if size.axes else 1
    return points * seeds * size.duration


def row(entry, quick_dir: Path, full_dir: Path | None, workers: int) -> dict:
    q, f = entry.sizes.quick, entry.sizes.full
    out = {"entry": entry.name}
    full_json = full_dir / f"{entry.name}.json" if full_dir else None
    if full_json is not None and full_json.exists():
        out.update(measured_full_s=json.loads(full_json.read_text())["wall_s"])
    qs, fs, fmax = simulated_seconds(q, q.seeds), simulated_seconds(f, f.seeds), simulated_seconds(f, f.most_seeds)
    qj = quick_dir / f"{entry.name}.json"
    if qs and qj.exists():
        rec = json.loads(qj.read_text())
        runs = rec.get("runs", {})
        if runs.get("runs") and not runs.get("ran"):
            return out | {"reuses": True}  # its runs are another entry's (fairbat-table1: fairbat-fig2's)
        ran_share = runs.get("ran", 0) / runs["runs"] if runs.get("runs") else 1.0
        cpu_per_sim_s = rec["wall_s"] * workers / (qs * ran_share)
        out.update(quick_sim_s=qs, full_sim_s=fs, ratio=fs / qs, full_cpu_h=fs * cpu_per_sim_s / 3600,
                   full_cpu_h_most=fmax * cpu_per_sim_s / 3600)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("quick_dir", type=Path)
    ap.add_argument("--full", type=Path, help="the --out of full runs, whose wall times are taken as measured")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    rows = [row(e, args.quick_dir, args.full, args.workers) for e in catalogue.entries()]
    print("| entry | full, measured (s) | packet sim-s, quick | full (starting seeds) | ratio | full CPU (h), "
          "starting seeds | at most seeds |")
    print("|---|---|---|---|---|---|---|")
    total = total_most = 0.0
    for r in rows:
        meas = f"{r['measured_full_s']:.0f}" if "measured_full_s" in r else ""
        if r.get("reuses"):
            print(f"| `{r['entry']}` | {meas} | (another entry's runs) | | | 0 | 0 |")
        elif "full_cpu_h" in r and meas:  # measured: the estimate beside it, as a check of the method
            total += r["measured_full_s"] / 3600
            total_most += r["measured_full_s"] / 3600
            print(f"| `{r['entry']}` | {meas} | {r['quick_sim_s']:.3g} | {r['full_sim_s']:.3g} | {r['ratio']:.1f} | "
                  f"{r['measured_full_s'] / 3600:.2f} measured (estimated {r['full_cpu_h']:.2f}) | |")
        elif "full_cpu_h" in r:
            total += r["full_cpu_h"]
            total_most += r["full_cpu_h_most"]
            print(f"| `{r['entry']}` | {meas} | {r['quick_sim_s']:.3g} | {r['full_sim_s']:.3g} | {r['ratio']:.1f} | "
                  f"{r['full_cpu_h']:.1f} | {r['full_cpu_h_most']:.1f} |")
        elif meas:
            total += r["measured_full_s"] / 3600
            total_most += r["measured_full_s"] / 3600
            print(f"| `{r['entry']}` | {meas} | | | | {r['measured_full_s'] / 3600:.2f} | |")
        else:
            print(f"| `{r['entry']}` | | (no packet grid) | | | | |")
    print(f"| **all** | | | | | **{total:.0f}** (about {total / 2:.0f} h on 2 cores) | **{total_most:.0f}** |")


if __name__ == "__main__":
    main()
