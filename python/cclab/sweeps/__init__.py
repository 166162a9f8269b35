"""Sweeps over scenarios, with a content-addressed result store and executors.

``cclab.sweep(...)`` / ``cclab sweep FILE``: a base scenario, overrides by key path
(a grid and/or a list of points), and seeds. Every run is validated before any
work, keyed by its canonical configuration, seed and engine results version
(:mod:`.store`), and executed only if the store does not already hold it; results
stream into the store as runs finish, so a sweep that is killed and started again
runs only what is missing. :class:`SweepResult` reads the stored runs back: one
row per run, an aggregate with means and 95% confidence intervals over seeds, a
plot, and each run's full tables.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..stats import t_quantile
from .spec import Run, Sweep, set_path
from .store import Store, StoreError, default_store, engine_version, run_key
from .worker import normalize_keep

__all__ = ["sweep", "Sweep", "SweepResult", "Store", "StoreError", "Run", "set_path", "default_store",
           "engine_version", "run_key", "aggregate", "open_sweep"]


@dataclass
class SweepStats:
    """What a sweep did: runs in it, distinct runs, already stored, executed, failed."""

    runs: int = 0
    distinct: int = 0
    cached: int = 0
    ran: int = 0
    failed: int = 0
    wall_s: float = 0.0
    executor: str = ""
    executed: list = field(default_factory=list, repr=False)


class _Progress:
    """A tqdm bar: runs done of those to run, with cached / failed counts and the ETA."""

    def __init__(self, name: str, total: int, cached: int, enabled: bool):
        self.cached, self.failed = cached, 0
        self.bar = None
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=f"sweep {name}", unit="run", file=sys.stderr, dynamic_ncols=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} done{postfix} "
                                       "[{elapsed} elapsed, ETA {remaining}, {rate_fmt}]")
            self._post()

    def _post(self) -> None:
        self.bar.set_postfix_str(f"{self.cached} cached, {self.failed} failed", refresh=False)

    def update(self, failed: bool) -> None:
        self.failed += failed
        if self.bar is not None:
            if failed:
                self._post()
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def sweep(scenario: Any, *, grid: Mapping | None = None, points: Sequence[Mapping] | None = None,
          set: Mapping | None = None, seeds: Any = None, name: str | None = None,
          store: str | Path | Store | None = None, cluster: Any = None, workers: int | None = None,
          progress: bool = True, retry_failed: bool = False, dry_run: bool = False,
          keep: Sequence[str] | None = None) -> "SweepResult":
    """Run a sweep, reusing every run the store already holds.

    scenario: a base scenario (TOML path, TOML text or dict), or a sweep file / :class:`Sweep`
        (then grid, points, set and seeds come from it).
    grid: ``{key path: [values]}``: every combination is run.
    points: a list of ``{key path: value}`` override sets, each crossed with the grid.
    set: overrides applied to every run.
    seeds: a number n (seeds 1..n) or a list of seeds; default: the scenario's seed.
    name: the sweep's name in the store (default: the scenario's name).
    store: the result store (a folder or a :class:`Store`; default ``$CCLAB_STORE`` or
        ``results/store``).
    cluster: None (local process pool), ``"local:N"``, ``"tcp://HOST:8786"``, a
        ``distributed.Client``, or ``"serial"`` (see :mod:`.executors`).
    workers: local pool size (default: every core).
    progress: a progress bar on stderr (runs done, cached, failed, ETA).
    retry_failed: run again the runs whose failure is stored (a lost worker's runs are
        always retried; a run's own error only with this).
    dry_run: validate and count, run nothing.
    keep: the tables each run keeps in the store (``flows``, ``links``, ``series``,
        ``arrivals``, and reductions ``module:function``: :mod:`.worker`); default every
        engine table. A stored run that lacks one of them runs again and keeps both its
        tables and these.

    Raises ScenarioError (naming the run's parameters and the key) before any run if a
    run does not validate.
    """
    from .executors import check_cluster

    check_cluster(cluster)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers: expected a number of processes >= 1, got {workers!r}")
    if isinstance(scenario, Sweep):
        sw = scenario
    elif _is_sweep_file(scenario) and grid is None and points is None and set is None and seeds is None:
        sw = Sweep.from_file(scenario)
        if name:
            sw.name = name
    else:
        sw = Sweep.build(scenario, grid=grid, points=points, set=set, seeds=seeds, name=name)
    own = not isinstance(store, Store)
    st = Store(store) if own else store
    try:
        return _run(sw, st, cluster=cluster, workers=workers, progress=progress, retry_failed=retry_failed,
                    dry_run=dry_run, keep=normalize_keep(keep))
    finally:
        if own:
            st.close()


def _is_sweep_file(x: Any) -> bool:
    if not isinstance(x, (str, Path)) or (isinstance(x, str) and ("\n" in x or "=" in x)):
        return False
    p = Path(x)
    if not p.is_file():
        return False
    from ..scenario import ScenarioError, read_toml_file

    try:
        doc = read_toml_file(p)
    except ScenarioError:
        return False
    return "scenario" in doc and "links" not in doc


def _run(sw: Sweep, st: Store, *, cluster, workers, progress, retry_failed, dry_run, keep) -> "SweepResult":
    from .executors import make_executor

    import dataclasses

    t0 = time.perf_counter()
    engine = engine_version()
    runs: list[Run] = []  # without their configurations (a flow list is inside each)
    todo: dict[str, Run] = {}  # the runs to execute, with theirs
    keeps: dict[str, tuple] = {}  # what each run to execute keeps: ours, and what its stored copy kept
    chunk: dict[str, Run] = {}

    def settle() -> None:  # which of a chunk of runs the store lacks
        known = st.status(chunk)
        kept = st.kept(k for k, v in known.items() if v[0] == "ok")
        for k, r in chunk.items():
            if k not in known or (known[k][0] == "failed" and (retry_failed or known[k][1] == "lost")):
                todo[k], keeps[k] = r, keep
            elif k in kept and not set(keep) <= set(kept[k]):
                todo[k], keeps[k] = r, normalize_keep(set(keep) | set(kept[k]))
        chunk.clear()

    seen: set[str] = set()
    for r in sw.iter_runs(engine):
        runs.append(dataclasses.replace(r, config=""))
        if r.key not in seen:
            seen.add(r.key)
            chunk[r.key] = r
            if len(chunk) >= 1000:
                settle()
    settle()
    stats = SweepStats(runs=len(runs), distinct=len(seen))
    stats.cached = stats.distinct - len(todo)
    if not dry_run:
        st.record_sweep(sw.name, sw.to_json(), ((r.index, r.key, r.seed, _json(r.params)) for r in runs))
    if dry_run or not todo:
        stats.wall_s = time.perf_counter() - t0
        return SweepResult(sw.name, st.root, runs, stats, sw.param_names())
    bar = None
    try:
        with make_executor(cluster, workers) as ex:
            ex.start()  # a pool's processes fork before the bar's thread starts
            bar = _Progress(sw.name, len(todo), stats.cached, progress)
            stats.executor = ex.description
            for key, payload in ex.run(((r.key, r.config, keeps[r.key]) for r in todo.values()), engine):
                r = todo[key]
                status = st.put(key, config=r.config, engine=engine, seed=r.seed, name=r.name, payload=payload,
                                defer=True)
                stats.ran += 1
                stats.executed.append(key)
                stats.failed += status == "failed"
                bar.update(status == "failed")
    finally:
        st.flush()  # what finished is kept, also on an interrupt
        if bar is not None:
            bar.close()
    stats.wall_s = time.perf_counter() - t0
    return SweepResult(sw.name, st.root, runs, stats, sw.param_names())


def _json(params: Mapping) -> str:
    import json

    return json.dumps(params, sort_keys=False, default=str)


def open_sweep(name: str, store: str | Path | None = None) -> "SweepResult":
    """A recorded sweep read back from the store by name (nothing runs)."""
    with Store(store, readonly=True) as st:
        members = st.sweep_members(name)
        spec = next(s["spec"] for s in st.sweeps() if s["name"] == name)
    params = Sweep(scenario={}, grid=spec.get("grid", {}), points=spec.get("points", [])).param_names()
    runs = [Run(i, p, s, "", k, name) for i, k, s, p in members]
    return SweepResult(name, Path(store) if store else default_store(), runs, SweepStats(runs=len(runs)), params)


class SweepResult:
    """A sweep's runs, read from the store on demand (nothing is held but the index rows).

    ``runs_table()``: one row per run (parameters, seed, key, status, error, metrics);
    ``aggregate()``: one row per parameter set, mean and 95% CI over seeds;
    ``result(i)``: the full tables of run ``i`` (a :class:`cclab.Result`);
    ``map(fn)``: ``fn(result)`` for every stored run, streamed; ``plot(y, x, hue)``.
    """

    def __init__(self, name: str, store_root: Path, runs: list[Run], stats: SweepStats, params: list[str]):
        self.name = name
        self.store_root = Path(store_root)
        self.runs = runs
        self.stats = stats
        self.params = params

    def __repr__(self) -> str:
        s = self.stats
        return (f"SweepResult({self.name!r}: {s.runs} runs, {s.cached} cached, {s.ran} ran, {s.failed} failed, "
                f"store {str(self.store_root)!r})")

    def _store(self) -> Store:
        return Store(self.store_root, readonly=True)

    def runs_table(self, metrics: Sequence[str] | None = None):
        """One row per run: parameters, ``seed``, ``key``, ``status``, ``error``, ``wall_s`` and
        the stored scalar metrics (all of them, or those named)."""
        import pandas as pd

        with self._store() as st:
            rows = st.rows(r.key for r in self.runs)
        out = []
        for r in self.runs:
            row = rows.get(r.key)
            d = {p: r.params.get(p) for p in self.params}
            d.update(seed=r.seed, key=r.key, status=row.status if row else "missing",
                     error=row.error if row else None, wall_s=row.wall_s if row else None)
            if row and row.metrics:
                m = row.metrics if metrics is None else {k: row.metrics.get(k) for k in metrics}
                d.update(m)
            out.append(d)
        df = pd.DataFrame(out)
        return df

    def metric_names(self) -> list[str]:
        """The scalar metrics stored for the sweep's runs."""
        df = self.runs_table()
        fixed = set(self.params) | {"seed", "key", "status", "error", "wall_s"}
        return [c for c in df.columns if c not in fixed]

    def aggregate(self, metrics: Sequence[str] | None = None, confidence: float = 0.95):
        """One row per parameter set: ``runs`` (successful), ``failed``, and for each metric
        its mean over seeds and ``METRIC_ci`` (the half-width of the Student-t confidence
        interval of the mean; NaN with fewer than two runs)."""
        return aggregate(self.runs_table(metrics), self.params, confidence=confidence)

    def result(self, which: int | str, tables: Sequence[str] | None = None):
        """The stored tables of a run (by its index in the sweep or its key; ``tables``:
        those to read, default every table it keeps)."""
        key = self.runs[which].key if isinstance(which, int) else which
        with self._store() as st:
            return st.load(key, tables)

    def map(self, fn: Callable[[Any], Mapping[str, Any]], tables: Sequence[str] | None = None):
        """``fn(result)`` (a dict of values) for every successful run, one run in memory at a
        time; a table of the parameters, seed, key and fn's values. ``tables``: the tables
        to read (default every table each run keeps)."""
        import pandas as pd

        out = []
        with self._store() as st:
            ok = {k for k, (s, _) in st.status(r.key for r in self.runs).items() if s == "ok"}
            for r in self.runs:
                if r.key in ok:
                    vals = dict(fn(st.load(r.key, tables)))
                    out.append({**{p: r.params.get(p) for p in self.params}, "seed": r.seed, "key": r.key, **vals})
        return pd.DataFrame(out)

    def plot(self, y: str, x: str | None = None, hue: str | None = None, path: str | Path | None = None):
        """Mean of metric ``y`` against parameter ``x`` (default: the first), one line per value
        of ``hue`` (default: the second parameter), with 95% confidence intervals as error bars.
        Returns the figure; saves it as PNG if ``path`` is given."""
        return plot_aggregate(self.aggregate([y]), y, x or (self.params[0] if self.params else None),
                              hue if hue is not None else (self.params[1] if len(self.params) > 1 else None),
                              title=f"sweep {self.name}", path=path)


def aggregate(df, params: Sequence[str], confidence: float = 0.95):
    """Means and Student-t confidence half-widths of every metric column over the rows of
    each parameter set (failed runs excluded, counted in ``failed``)."""
    import numpy as np
    import pandas as pd

    fixed = set(params) | {"seed", "key", "status", "error", "wall_s"}
    metrics = [c for c in df.columns if c not in fixed]
    params = list(params)
    rows = []
    groups = df.groupby(params, sort=False, dropna=False) if params else [((), df)]
    for vals, g in groups:
        vals = vals if isinstance(vals, tuple) else (vals,)
        ok = g[g["status"] == "ok"]
        row = dict(zip(params, vals))
        row["runs"] = len(ok)
        row["failed"] = int((g["status"] == "failed").sum())
        for m in metrics:
            x = pd.to_numeric(ok[m], errors="coerce").to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            n = len(x)
            row[m] = float(x.mean()) if n else math.nan
            if n >= 2:
                row[f"{m}_ci"] = float(t_quantile(confidence, n - 1) * x.std(ddof=1) / math.sqrt(n))
            else:
                row[f"{m}_ci"] = math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def plot_aggregate(agg, y: str, x: str | None, hue: str | None, title: str = "", path: str | Path | None = None):
    """Draw an aggregate table: ``y`` against ``x`` with confidence intervals, one line per ``hue``."""
    import pandas as pd

    from cclab.plotting import pyplot, savefig

    plt = pyplot()
    if y not in agg.columns:
        known = ", ".join(c for c in agg.columns if not c.endswith("_ci") and c not in ("runs", "failed"))
        raise ValueError(f"no metric {y!r} in the sweep; known: {known}")
    for p, what in ((x, "x"), (hue, "hue")):
        if p is not None and p not in agg.columns:
            raise ValueError(f"{what} = {p!r} is not a parameter of the sweep")
    import numpy as np

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = list(agg.groupby(hue, sort=False, dropna=False)) if hue else [(None, agg)]
    for i, (label, g) in enumerate(groups):
        xs = g[x] if x else pd.Series(range(len(g)))
        numeric = pd.api.types.is_numeric_dtype(xs)
        pos = xs.to_numpy(dtype=float) if numeric else np.arange(len(xs), dtype=float)
        # lines side by side by a sliver, so that their intervals do not hide each other
        span = (np.ptp(pos) if len(pos) > 1 else 1.0) or 1.0
        shift = (i - (len(groups) - 1) / 2) * 0.012 * span
        ax.errorbar(pos + shift, g[y], yerr=g[f"{y}_ci"].fillna(0.0), marker="o", capsize=3,
                    label=None if hue is None else f"{hue} = {label}")
        if not numeric:
            ax.set_xticks(list(pos), [str(v) for v in xs])
    ax.set_xlabel(x or "point")
    ax.set_ylabel(y)
    ax.set_title(f"{title}: mean over seeds, 95% confidence intervals", fontsize=9)
    ax.grid(alpha=0.3)
    if hue:
        ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        savefig(fig, path, dpi=120, close=False)
    return fig
