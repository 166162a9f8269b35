"""Pairing by seed and time averages, written once for every entry.

Runs of two policies with the same seed see the same arrivals and sizes (each class
draws from its own streams), so a policy's effect is measured run by run against the
baseline run of the same seed and point (:func:`pair`), then averaged over seeds with
a 95% interval (:func:`summary`) or handed to a claim as an
:class:`~cclab.experiments.claims.Estimate` (:func:`estimate`). :func:`busy_average`
is the time-average number of open intervals (active or waiting chunks) over a window.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..stats import mean_ci
from .claims import Estimate

#: The column of a runs table that names its replication group (see runs.py).
GROUP = "group"


def busy_average(start, end, lo: float, hi: float) -> float:
    """Time-average number of intervals [start, end) open over [lo, hi]; a NaN start or
    end means "not yet" (still waiting, still open at ``hi``)."""
    a = np.clip(np.nan_to_num(np.asarray(start, dtype=float), nan=hi), lo, hi)
    b = np.clip(np.nan_to_num(np.asarray(end, dtype=float), nan=hi), lo, hi)
    return float(np.sum(np.maximum(b - a, 0.0)) / (hi - lo))


def pair(runs: pd.DataFrame, *, on: Sequence[str], baseline: Mapping[str, object],
         ratios: Mapping[str, str] = {}, improvements: Mapping[str, str] = {}) -> pd.DataFrame:
    """Each run beside the baseline run of the same seed and the same ``on`` columns.

    baseline: the column values that make a run the baseline (``{"policy": "vanilla"}``).
    ratios: ``{new column: value column}``: the run's value over the baseline's.
    improvements: ``{new column: value column}``: 100·(1 − value / baseline's value).
    Runs without a baseline of their seed get NaN.
    """
    keys = [*on, "seed"]
    base_rows = runs
    for col, val in baseline.items():
        base_rows = base_rows[base_rows[col] == val]
    cols = sorted(set(ratios.values()) | set(improvements.values()))
    base = base_rows.drop_duplicates(keys).set_index(keys)[cols]
    idx = pd.MultiIndex.from_frame(runs[keys])
    theirs = base.reindex(idx)
    out = runs.copy()
    for new, col in ratios.items():
        out[new] = runs[col].to_numpy(dtype=float) / theirs[col].to_numpy(dtype=float)
    for new, col in improvements.items():
        out[new] = 100.0 * (1.0 - runs[col].to_numpy(dtype=float) / theirs[col].to_numpy(dtype=float))
    return out


def summary(runs: pd.DataFrame, by: Sequence[str], columns: Iterable[str]) -> pd.DataFrame:
    """Per ``by`` group: ``seeds`` and each column's mean and 95% half-width (``COL_ci``)."""
    rows = []
    for key, g in runs.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["seeds"] = int(g["seed"].nunique())
        for c in columns:
            if c in g:
                row[c], row[c + "_ci"] = mean_ci(pd.to_numeric(g[c], errors="coerce"))
        rows.append(row)
    return pd.DataFrame(rows)


def estimate(runs: pd.DataFrame, column: str, *, carried: str | None = None, fmt: str = "{:.2f}",
             **where) -> Estimate:
    """The values of ``column`` per seed over the rows that match ``where``, as an
    Estimate (its groups those of the rows; ``carried``: the column of the carried/offered
    ratio, attached when the rows have it)."""
    g = runs
    for col, val in where.items():
        g = g[np.isclose(g[col], val)] if isinstance(val, float) else g[g[col] == val]
    if g.empty:
        raise KeyError(f"no run with {where}")
    groups = set(g[GROUP]) if GROUP in g else set()
    values = dict(zip(g["seed"], g[column]))
    c = None
    if carried is not None and carried in g and g[carried].notna().any():
        c = Estimate.of(dict(zip(g["seed"], g[carried])), groups=groups, fmt="{:.3f}")
    return Estimate.of(values, groups=groups, carried=c, fmt=fmt)


def ci_text(mean: float, half: float, fmt: str = "{:.2f}") -> str:
    """``mean ± half`` (the half-width left out when unknown)."""
    return fmt.format(mean) + ("" if half is None or math.isnan(half) else f" ± {fmt.format(half)}")
