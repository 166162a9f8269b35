"""Paired cross-checks: one flow list, replayed by cclab and by a referee simulator.

Both referee harnesses (`bench/ns3/ns3run.py`, `bench/ns2/ns2run.py`) compare
cclab with another simulator on *identical arrivals*: `flow_list()` takes the
arrivals (start, size) that cclab draws for a seed (the Poisson process does not
depend on the network, so a cclab run's flows table is a realization of it), and
`run_cclab()` replays that list in cclab as `flow_list` classes while the referee
replays it its own way. This module holds what the two harnesses share: the list,
the replay, the scenario with a `tcp` table on top, and the statistics of a paired
comparison (a ratio per seed, its mean and 95% Student-t interval).
"""
from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

#: The flows table's columns, as `cclab.Result.flows` has them. `start` is when the
#: connection opened: in a referee, which has no access control, the arrival.
FLOW_COLUMNS = ["class", "id", "size", "arrival", "start", "finish", "completion_time", "bytes_delivered",
                "retransmissions", "timeouts", "finished", "warmup"]


def validated(scenario, seed: int | None = None) -> dict:
    """`cclab.validate()`: the canonical configuration, duration and warm-up."""
    import cclab

    return cclab.validate(scenario, seed=seed)


def with_tcp(scenario, tcp: dict | None = None) -> dict:
    """`scenario` (a file or a structure) as a structure with `tcp` on top of its own
    `[tcp]` table (classes' own `tcp` tables still win); relative file names resolved
    against the scenario's folder, so the structure runs from anywhere."""
    from cclab.scenario import load_scenario

    structure, base_dir = load_scenario(scenario)
    structure = json.loads(json.dumps(structure))
    if tcp:
        structure.setdefault("tcp", {}).update(tcp)
    for t in structure.get("traffic", []):
        if t.get("type") == "flow_list" and not Path(t["file"]).is_absolute():
            t["file"] = str(Path(base_dir) / t["file"])
        size = t.get("size")
        if isinstance(size, dict) and isinstance(size.get("file"), str) and not Path(size["file"]).is_absolute():
            size["file"] = str(Path(base_dir) / size["file"])
    return structure


def flow_list(scenario, seed: int) -> pd.DataFrame:
    """Every flow a scenario creates for `seed`: columns class, start, size (NaN:
    long-lived), sorted by start (ties in class order).

    Poisson arrivals are the ones cclab draws for that seed (taken from a cclab run;
    arrivals do not depend on the network); long-lived flows start at their class's
    start; flow_list classes give their own list.
    """
    import cclab

    config = validated(scenario, seed)["config"]
    classes = config["classes"]
    rows = []
    poisson = [c["name"] for c in classes if c["arrivals"]["type"] == "poisson"]
    if poisson:
        r = cclab.run(scenario, seed=seed)
        f = r.flows[r.flows["class"].isin(poisson)]
        rows.append(pd.DataFrame({"class": f["class"].astype(str), "start": f["arrival"], "size": f["size"]}))
    for c in classes:
        a = c["arrivals"]
        if a["type"] == "long_lived":
            n = a["count"]
            rows.append(pd.DataFrame({"class": [c["name"]] * n, "start": [c["start_ns"] / 1e9] * n,
                                      "size": [np.nan] * n}))
        elif a["type"] == "flow_list":
            rows.append(pd.DataFrame({"class": c["name"], "start": [f[0] / 1e9 for f in a["flows"]],
                                      "size": np.asarray([f[1] for f in a["flows"]], float)}))
    if not rows:
        return pd.DataFrame({"class": pd.Series([], dtype=str), "start": pd.Series([], dtype=float),
                             "size": pd.Series([], dtype=float)})
    out = pd.concat(rows, ignore_index=True)
    order = {c["name"]: i for i, c in enumerate(classes)}
    out["_c"] = out["class"].map(order)
    return out.sort_values(["start", "_c"], kind="stable").drop(columns="_c").reset_index(drop=True)


def replay_scenario(scenario, flows: pd.DataFrame, folder: Path, tcp: dict | None = None) -> dict:
    """`scenario` with every Poisson class replaced by a flow_list class reading
    `flows` (written to `folder`), and with `tcp` on top of its own `[tcp]` table."""
    structure = with_tcp(scenario, tcp)
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / "flows.csv"
    listed = flows[flows["size"].notna()]
    pd.DataFrame({"start": listed["start"].map(repr), "size": listed["size"].astype(np.int64),
                  "class": listed["class"]}).to_csv(csv, index=False)
    keep = {"name", "src", "dst", "route", "protocol", "cc", "tcp", "start", "stop"}
    for t in structure.get("traffic", []):
        if t.get("type") == "poisson":
            for k in list(t):
                if k not in keep:
                    del t[k]
            t["type"] = "flow_list"
            t["file"] = str(csv)
    return structure


def run_cclab(scenario, seed: int, flows: pd.DataFrame | None = None, tcp: dict | None = None):
    """Run `scenario` in cclab on an explicit flow list (default: `flow_list(scenario,
    seed)`), with `tcp` on top of its `[tcp]` table; returns a cclab Result."""
    import cclab

    if flows is None:
        flows = flow_list(scenario, seed)
    with tempfile.TemporaryDirectory(prefix="cclab-replay-") as tmp:
        return cclab.run(replay_scenario(scenario, flows, Path(tmp), tcp), seed=seed)


# --- statistics of a paired comparison ---------------------------------------------

#: Two-sided 95% Student t quantiles by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df: int) -> float:
    if df in T975:
        return T975[df]
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def mean_ci(xs) -> tuple[float, float, int]:
    """Mean of the finite values, the half-width of its 95% Student-t interval (NaN for
    one value) and how many values there were."""
    xs = np.asarray([x for x in xs if np.isfinite(x)], float)
    if len(xs) == 0:
        return math.nan, math.nan, 0
    if len(xs) == 1:
        return float(xs[0]), math.nan, 1
    return float(xs.mean()), t975(len(xs) - 1) * float(xs.std(ddof=1)) / math.sqrt(len(xs)), len(xs)


def paired_agrees(r: float, h: float, tol: float) -> bool:
    """The paired rule: the interval [r - h, r + h] of the per-seed ratio meets
    [1 - tol, 1 + tol] (the seeds do not show a difference larger than tol). One
    seed (no interval): r itself within tol."""
    if not np.isfinite(r):
        return False
    if not np.isfinite(h):
        return abs(r - 1) <= tol
    return abs(r - 1) <= tol + h
