"""What `cclab sweep` and `cclab store` print and write."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Sequence

from .store import Store, StoreError, default_store, engine_version


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def default_metrics(res) -> list[str]:
    """Per class: mean completion time and throughput; the busiest link's utilization and drop rate."""
    df = res.runs_table()
    ok = df[df["status"] == "ok"]
    names = list(df.columns)
    out = [c for c in names if c.endswith(".mean_completion_time_s") or c.endswith(".throughput_bps")]
    out = [c for c in out if not c.startswith("link.") and ok[c].notna().any()]
    util = [c for c in names if c.startswith("link.") and c.endswith(".utilization")]
    if util and len(ok):
        busiest = max(util, key=lambda c: float(ok[c].mean()))
        link = busiest[len("link."):-len(".utilization")]
        out += [busiest, f"link.{link}.drop_rate"]
    return out


def format_aggregate(agg, params: Sequence[str], metrics: Sequence[str]) -> str:
    """The aggregate table as text: each metric as ``mean ± half-width``."""
    import pandas as pd

    shown = pd.DataFrame({p: agg[p] for p in params})
    shown["runs"] = agg["runs"]
    if agg["failed"].any():
        shown["failed"] = agg["failed"]
    for m in metrics:
        if m not in agg:
            continue
        shown[m] = [(_fmt(v) + ("" if (c is None or math.isnan(c)) else f" ± {c:.2g}"))
                    for v, c in zip(agg[m], agg[f"{m}_ci"])]
    with pd.option_context("display.width", 200, "display.max_columns", 40, "display.max_colwidth", 40):
        return shown.to_string(index=False)


def print_sweep(res, *, out: Path | None, metrics: str | None, plot: str | None, x: str | None, hue: str | None,
                dry_run: bool = False) -> int:
    """Print a finished sweep's counts and aggregate; write runs.csv, table.csv and a plot into ``out``."""
    s = res.stats
    dup = f" ({s.distinct} distinct)" if s.distinct != s.runs else ""
    if dry_run:
        print(f"sweep {res.name}: {s.runs} runs{dup} validated; {s.cached} stored, {s.distinct - s.cached} to run "
              f"(store {res.store_root})")
        return 0
    where = f" on {s.executor}" if s.executor else ""
    print(f"sweep {res.name}: {s.runs} runs{dup}: {s.cached} cached, {s.ran} ran, {s.failed} failed "
          f"in {s.wall_s:.1f} s{where} (store {res.store_root})")
    table = res.runs_table()
    chosen = [m.strip() for m in metrics.split(",")] if metrics else default_metrics(res)
    unknown = [m for m in chosen if m not in table.columns]
    if unknown and (table["status"] == "ok").any():
        known = ", ".join(c for c in table.columns if c not in set(res.params) | {"seed", "key", "status", "error"})
        raise ValueError(f"--metrics: no metric {', '.join(unknown)} in the sweep; known: {known}")
    from . import aggregate

    agg = aggregate(table, res.params)
    print()
    print(format_aggregate(agg, res.params, chosen))
    failed = table[table["status"] == "failed"]
    for _, r in failed.head(5).iterrows():
        p = ", ".join(f"{k} = {r[k]}" for k in res.params)
        print(f"failed: {p}{', ' if p else ''}seed {r['seed']} ({r['key'][:12]}): {r['error']}")
    if len(failed) > 5:
        print(f"... and {len(failed) - 5} more failed runs (runs.csv has them all)")
    if out is not None:
        write_outputs(res, table, agg, out, plot=plot, x=x, hue=hue)
    return 1 if s.failed or len(failed) else 0


def write_outputs(res, table, agg, out: Path, *, plot: str | None, x: str | None, hue: str | None) -> None:
    """Write a sweep's runs.csv and table.csv into ``out``, and METRIC.png if ``plot`` names a
    metric (its mean and 95% CI against ``x``, one line per ``hue``); print what was written."""
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "runs.csv", index=False)
    agg.to_csv(out / "table.csv", index=False)
    written = [out / "runs.csv", out / "table.csv"]
    if plot:
        from . import plot_aggregate

        x = x or (res.params[0] if res.params else None)
        hue = hue or (res.params[1] if len(res.params) > 1 and res.params[1] != x else None)
        png = out / f"{plot.replace('/', '_')}.png"
        fig = plot_aggregate(agg, plot, x, hue, title=f"sweep {res.name}", path=png)
        from cclab.plotting import pyplot

        pyplot().close(fig)
        written.append(png)
    print("\nwrote " + ", ".join(str(p) for p in written))


# --------------------------------------------------------------------------- cclab store

def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def store_command(args) -> int:
    """`cclab store ls | show | gc | verify`."""
    root = Path(args.store) if args.store else default_store()
    action = args.store_command
    if action == "gc":
        with Store(root) as st:
            r = st.gc(failed=args.failed, stale=args.stale, unreferenced=args.unreferenced, forget=args.forget,
                      older_than_days=args.older_than, dry_run=args.dry_run)
        verb = "would remove" if args.dry_run else "removed"
        print(f"{root}: {verb} {r['runs']} runs ({_size(r['bytes'])}), {r['sweeps']} sweep definitions, "
              f"{r['tmp']} interrupted writes, {r['orphans']} orphan folders, {r['lost_rows']} index rows "
              f"without their folder" + (f", {r['memos']} memos of another engine" if r["memos"] else ""))
        return 0
    with Store(root, readonly=True) as st:
        if action == "ls":
            return _ls(st, args.runs)
        if action == "show":
            return _show(st, args.what, args)
        if action == "verify":
            problems = st.verify()
            n = st.db.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0]
            for p in problems:
                print(f"corrupt: {p}")
            print(f"{root}: {n} stored runs checked, {len(problems)} problem{'s' if len(problems) != 1 else ''}")
            return 1 if problems else 0
    raise StoreError(f"unknown store action {action!r}")  # pragma: no cover


def _ls(st: Store, runs: int | None) -> int:
    c = st.counts()
    total = sum(n for _, _, n in c["by_status_engine"])
    try:
        current = engine_version()
    except Exception:
        current = "unknown"
    parts = [f"{n} {status} ({eng}{', current' if eng == current else ', stale'})"
             for status, eng, n in c["by_status_engine"]]
    print(f"store {st.root}: {total} runs, {_size(c['bytes'])}" + (": " + ", ".join(parts) if parts else ""))
    if runs is not None:
        print(f"\n{'key':<12}  {'status':<6}  {'name':<24} {'seed':>5} {'wall s':>8}  {'created':<16}  error")
        for r in st.list_runs(runs):
            wall = "-" if r.wall_s is None else f"{r.wall_s:.3f}"
            err = (r.error or "")[:60]
            print(f"{r.key[:12]}  {r.status:<6}  {str(r.name)[:24]:<24} {r.seed:>5} {wall:>8}  {_when(r.created)}  {err}")
        return 0
    sweeps = st.sweeps()
    if not sweeps:
        print("no sweeps recorded")
        return 0
    width = max(len(s["name"]) for s in sweeps)
    print(f"\n{'sweep':<{width}}  {'runs':>6} {'ok':>6} {'failed':>6} {'missing':>7}  updated")
    for s in sweeps:
        print(f"{s['name']:<{width}}  {s['runs']:>6} {s['ok']:>6} {s['failed']:>6} {s['missing']:>7}  {_when(s['updated'])}")
    return 0


def _show(st: Store, what: str, args=None) -> int:
    if any(s["name"] == what for s in st.sweeps()):
        from . import open_sweep
        from . import aggregate

        res = open_sweep(what, st.root)
        spec = next(s for s in st.sweeps() if s["name"] == what)
        d = spec["spec"]
        print(f"sweep {what}: {spec['runs']} runs, {spec['ok']} ok, {spec['failed']} failed, {spec['missing']} missing "
              f"(updated {_when(spec['updated'])})")
        print(f"  scenario: {d['scenario'].get('name', '?')}; seeds: {d['seeds'] or 'the scenario seed'}")
        for k in ("set", "grid"):
            for p, v in d.get(k, {}).items():
                print(f"  {k}: {p} = {json.dumps(v)}")
        for p in d.get("points", []):
            print(f"  point: {json.dumps(p)}")
        table = res.runs_table()
        agg = aggregate(table, res.params)
        if (table["status"] == "ok").any():
            print()
            print(format_aggregate(agg, res.params, default_metrics(res)))
        if args is not None and (args.plot or args.out):
            out = Path(args.out) if args.out else Path("results/sweeps") / what
            write_outputs(res, table, agg, out, plot=args.plot, x=args.x, hue=args.hue)
        return 0
    try:
        r = st.get(what)
    except StoreError as exc:
        known = ", ".join(s["name"] for s in st.sweeps())
        raise StoreError(f"{exc}" + (f" (and no sweep named {what!r}; sweeps: {known})" if known else "")) from None
    if args is not None and (args.plot or args.out):
        raise StoreError(f"--plot and --out apply to a sweep; {what!r} is a run")
    print(f"run {r.key}")
    print(f"  status {r.status}, engine {r.engine}, scenario {r.name!r}, seed {r.seed}")
    wall = "-" if r.wall_s is None else f"{r.wall_s:.3f} s"
    print(f"  created {_when(r.created)} on {r.host}, wall {wall}")
    if r.status == "ok":
        print(f"  folder {st.run_dir(r.key)}: " + ", ".join(f"{k} ({_size(v[0])})" for k, v in sorted(r.files.items())))
        cfg = json.loads(r.config)
        print(f"  {len(cfg.get('links', []))} links, {len(cfg.get('classes', []))} classes, "
              f"duration {cfg.get('duration_ns', 0) / 1e9:g} s")
        print("  metrics:")
        for k in sorted(r.metrics):
            print(f"    {k} = {_fmt(r.metrics[k])}")
    else:
        print(f"  error ({r.error_kind}): {r.error}")
    return 0
