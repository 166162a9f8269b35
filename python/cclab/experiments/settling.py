"""How long a run takes to settle: the warm-up an entry discards, measured.

An entry's warm-up must exceed the time its slowest point takes to reach its
stationary regime: the access limit of rate tracking or FAIRBAT climbing from its
first value, the number of chunks a lower-than-best-effort protocol keeps active,
the queue of waiting chunks. :func:`mser` finds that time in one sampled series by the
MSER-5 rule (White 1997; White, Cobb, Spratt 2000): the truncation point d that
minimises the standard error of the mean of what is left,

    MSER(d) = Σ_{i ≥ d} (z_i − z̄_d)² / (n − d)²,

over batch means z of 5 samples and d in the first half. A single run's series is
noisy (a near-critical access limit wanders for hours), so the settling time of a point
is that of the mean of its seeds' series, as MSER-5 is used on replications (Hoad,
Robinson, Davies 2010, "Automating warm-up length estimation"); the largest of the
single seeds' is reported beside it. :func:`settling_times` runs points with a sampled
series through the result store (``ctx.sweep``, keeping only the series) and gives, per
point and metric, both; ``bench/settling.py`` (``make settling``) measures every
packet-level entry's slowest points at their full length and prints the table of
docs/reproduction.md.
"""
from __future__ import annotations

import copy
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .runs import Point, run_points

#: Samples per batch of the MSER-5 rule.
BATCH = 5


def mser(values: Sequence[float], batch: int = BATCH) -> int:
    """The MSER truncation point of a series, as an index into ``values`` (a multiple of
    ``batch``): the start of its stationary part."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x) // batch
    if n < 4:
        return 0
    z = x[: n * batch].reshape(n, batch).mean(axis=1)
    best, arg = np.inf, 0
    for d in range(n // 2 + 1):
        tail = z[d:]
        v = float(np.sum((tail - tail.mean()) ** 2)) / (n - d) ** 2
        if v < best:
            best, arg = v, d
    return arg * batch


def settling_time(times: Sequence[float], values: Sequence[float], batch: int = BATCH) -> float:
    """The time at which a sampled series settles (MSER-``batch``), in the units of ``times``."""
    t = np.asarray(times, dtype=float)
    return float(t[mser(values, batch)]) if len(t) else float("nan")


#: What settles, by series metric and entity kind: the access limit and the waiting and
#: active chunks of the background classes.
METRICS = ("access_limit", "access_waiting", "active_flows")


def with_series(point: Point, interval: float) -> Point:
    """The point with its series sampled every ``interval`` seconds from the start (no
    warm-up: the settling is what is measured)."""
    sc = copy.deepcopy(dict(point.scenario))
    sc["record"] = {"interval": f"{interval:g}s"}
    sc["warmup"] = f"{interval / 1000:g}s"
    return Point(point.labels, sc, point.group)


def settling_times(ctx, name: str, points: Iterable[Point], classes: Sequence[str], seeds: Sequence[int],
                   interval: float = 120.0) -> pd.DataFrame:
    """Each point's settling time (s) per metric of :data:`METRICS` that the run records
    for ``classes`` (summed over them): ``settling_s``, that of the mean of the seeds'
    series, and ``largest_seed_s``, the largest of the single seeds'; ``last_mean``, the
    mean over the second half. One row per (point, metric), with the point's labels."""
    pts = [with_series(p, interval) for p in points]

    def measure(res, point):
        s = res.series
        rows = []
        for metric in METRICS:
            sel = s[(s["metric"] == metric) & s["name"].isin(classes)]
            if sel.empty:
                continue
            total = sel.groupby("time")["value"].sum()
            rows.append({"metric": metric, "times": tuple(total.index), "values": tuple(total.to_numpy())})
        return rows

    runs = run_points(ctx, name, pts, {p.group: list(seeds) for p in pts}, measure, keep=("series",))
    labels = [c for c in runs.columns if c not in ("seed", "metric", "times", "values")]
    out = []
    for key, g in runs.groupby([*labels, "metric"], sort=False, dropna=False):
        n = min(len(v) for v in g["values"])
        t = np.asarray(g["times"].iloc[0][:n], dtype=float)
        each = [settling_time(t, v[:n]) for v in g["values"]]
        mean = np.mean([np.asarray(v[:n], dtype=float) for v in g["values"]], axis=0)
        out.append({**dict(zip([*labels, "metric"], key)), "seeds": len(g), "settling_s": settling_time(t, mean),
                    "largest_seed_s": max(each), "last_mean": float(mean[n // 2:].mean())})
    return pd.DataFrame(out)
