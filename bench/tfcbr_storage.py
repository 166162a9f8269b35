"""Bytes the full alpha-beta TFCBR sweep keeps in the result store (docs/reproduction.md, "Storage").

Runs three of `tfcbr-alpha-beta-packet`'s full-size points (α = 0.5, β = 64 s, drop-tail,
TCP loads 0.1, 0.3, 0.5; 75,000 s each) as the entry keeps them (its reduction only), and
the heaviest of them again with every table, and prints the bytes of each run's folder
and index row, and the whole sweep's extrapolated from them (its 2,460 runs).

    .venv/bin/python bench/tfcbr_storage.py [--dir /tmp/tfcbr-storage]    # about 10 minutes
"""
from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

from cclab.experiments import catalogue
from cclab.experiments.reproductions import tfcbr_packet as tp
from cclab.experiments.runs import run_points


def folder_bytes(d: Path) -> int:
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/tmp/tfcbr-storage", help="where the two stores go")
    args = ap.parse_args()
    root = Path(args.dir)
    e = catalogue.get("tfcbr-alpha-beta-packet")
    full = e.sizes.full
    runs_total = len(tp.alpha_beta_points(full)) * full.seeds
    size = full.replace(axes={**full.axes, "α": (0.5,), "β (s)": (64,), "queues": ("droptail",)})
    pts = [p for p in tp.alpha_beta_points(size) if p.labels["protocol"] == "tfcbr"]
    ctx = catalogue.Context(quick=False, out=root, store=root / "kept", workers=1, name="storage", size=size,
                            progress=False)
    t = time.time()
    run_points(ctx, "reduced", pts, {p.group: [1] for p in pts}, tp.measured, keep=(tp.RATES,))
    print(f"{len(pts)} full runs as the entry keeps them: {time.time() - t:.0f} s wall")
    per = [folder_bytes(d) for d in (root / "kept" / "runs").glob("*/*")]
    with sqlite3.connect(root / "kept" / "index.sqlite") as db:
        rows = [len(c or "") + len(m or "") + len(f or "") for c, m, f in
                db.execute("SELECT config, metrics, files FROM runs")]
    each = (sum(per) + sum(rows)) / len(per)
    print(f"run folders (bytes): {per}; index rows (bytes of text): {rows}")
    print(f"the whole sweep, {runs_total} runs: about {runs_total * each / 1e6:.0f} MB")
    ctx2 = catalogue.Context(quick=False, out=root, store=root / "every-table", workers=1, name="storage-all",
                             size=size, progress=False)
    run_points(ctx2, "all", pts[-1:], {pts[-1].group: [1]}, lambda r, p: {"n": len(r.flows)}, keep=None)
    (big,) = [folder_bytes(d) for d in (root / "every-table" / "runs").glob("*/*")]
    print(f"the load-{pts[-1].labels['load']:g} run with every table: {big / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
