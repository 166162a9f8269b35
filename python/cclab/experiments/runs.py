"""The one way an entry runs packet-level simulations: through ``ctx.sweep``.

An entry describes its runs as :class:`Point` s (labels, a whole scenario, and a
replication group: the points whose runs are paired by seed) and a *measure*, a
function of one stored run and its point that returns the row (or rows) the entry
reads. :func:`run_points` sends the points through :meth:`Context.sweep` — the result
store (a repeated or interrupted entry runs only what is missing), the executor of
``--cluster`` / ``--workers``, and the tables the entry keeps (``keep``) — and measures
each stored run once per process. :func:`replicate` adds seeds, group by group, until
every claim of the entry is known (:meth:`cclab.experiments.claims.Claim.known`) or
the size's most seeds are reached.

Each call to the sweep is one base scenario and points that override it by key path
(:func:`overrides`), so the store's record of the sweep names what differs between
the points. An ablation level (:mod:`.ablation`) the context runs changes every
point's scenario here (:meth:`Context.adjust`).
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from .paired import GROUP


@dataclass(frozen=True)
class Point:
    """One point of an entry's grid: ``labels`` (the columns of its rows), the scenario
    it runs (without a seed) and its replication group (points of one group take the
    same seeds, so that they pair run by run). ``per_seed``: for a point whose scenario
    depends on the seed (start times drawn per replication outside the engine), the
    scenario of each seed; ``scenario`` is then that of the first."""

    labels: Mapping[str, Any]
    scenario: Mapping[str, Any]
    group: tuple = ()
    per_seed: Callable[[int], Mapping[str, Any]] | None = field(default=None, compare=False)


Measure = Callable[[Any, Point], "Mapping | Sequence[Mapping]"]


def overrides(base: Mapping, scenario: Mapping, path: str = "") -> dict[str, Any]:
    """The key-path overrides that turn ``base`` into ``scenario`` (``cclab.sweep``'s
    ``points``): changed values by path, list items by name where both lists name the
    same items, and whole tables where a key was removed."""
    out: dict[str, Any] = {}
    for k, v in scenario.items():
        p = f"{path}.{k}" if path else k
        old = base.get(k, _MISSING)
        if old == v:
            continue
        if isinstance(v, dict) and isinstance(old, dict) and set(old) <= set(v):
            out.update(overrides(old, v, p))
        elif _named(v) and _named(old) and [x["name"] for x in v] == [x["name"] for x in old]:
            for a, b in zip(old, v):
                if a != b:
                    sub = f"{p}[{b['name']}]"
                    out.update(overrides(a, b, sub) if set(a) <= set(b) else {sub: b})
        else:
            out[p] = v
    if not path and set(base) - set(scenario):
        raise ValueError(f"a point removes top-level keys {sorted(set(base) - set(scenario))} of the base scenario")
    return out


_MISSING = object()


def _named(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and all(isinstance(i, dict) and "name" in i for i in x)


#: Rows measured in this process, by (run key, measure, point labels): an entry that
#: reads the runs of another (Table I those of Fig. 2) or a later replication round
#: does not read a stored run twice.
_MEASURED: dict[tuple, list[dict]] = {}


def run_points(ctx, name: str, points: Sequence[Point], seeds: Mapping[tuple, Sequence[int]], measure: Measure,
               keep: Sequence[str] | None = None) -> pd.DataFrame:
    """Run every point with the seeds of its group through ``ctx.sweep`` (one call per
    distinct list of seeds) and measure each run: one row per (point, seed) — or as many
    as ``measure`` returns — with the point's labels, ``seed`` and ``group``."""
    by_seeds: dict[tuple, list[Point]] = {}
    for p in points:
        if p.per_seed is None:
            by_seeds.setdefault(tuple(seeds[p.group]), []).append(Point(p.labels, ctx.adjust(p.scenario), p.group))
        else:  # one sweep per seed: its scenario is the seed's own
            for s in seeds[p.group]:
                by_seeds.setdefault((s,), []).append(Point(p.labels, ctx.adjust(p.per_seed(s)), p.group))
    rows: list[dict] = []
    for i, (seed_list, pts) in enumerate(by_seeds.items()):
        if not seed_list:
            continue
        base = copy.deepcopy(dict(pts[0].scenario))
        pset = [{"name": str(p.scenario.get("name", "scenario")), **overrides(base, p.scenario)} for p in pts]
        label = name if len(by_seeds) == 1 else f"{name}-seeds{seed_list[0]}-{seed_list[-1]}"
        res = ctx.sweep(base, points=pset, seeds=list(seed_list), part=label, keep=keep)
        failed = [r for r in res.runs_table().itertuples() if r.status != "ok"]
        if failed:
            raise RuntimeError(f"{len(failed)} of {len(res.runs)} runs of {label} failed; first: {failed[0].error}")
        n = len(seed_list)
        for r in res.runs:
            p = pts[r.index // n]
            rows += _measured(res, r, p, measure, keep)
    return pd.DataFrame(rows)


def _measured(res, run, point: Point, measure: Measure, keep) -> list[dict]:
    ident = (run.key, _identity(measure), json.dumps(point.labels, sort_keys=True, default=str))
    if ident not in _MEASURED:
        out = measure(res.result(run.key, tables=keep), point)
        out = [dict(out)] if isinstance(out, Mapping) else [dict(o) for o in out]
        _MEASURED[ident] = out
    return [{**point.labels, "seed": run.seed, GROUP: point.group, **o} for o in _MEASURED[ident]]


def _identity(measure: Measure) -> str:
    """A measure's name: a function's qualified name, or a callable object's repr (its fields)."""
    name = getattr(measure, "__qualname__", None)
    return f"{measure.__module__}.{name}" if name else f"{type(measure).__module__}.{measure!r}"


def replicate(ctx, name: str, points: Sequence[Point], measure: Measure, judge: Callable[[pd.DataFrame], list],
              keep: Sequence[str] | None = None) -> tuple[pd.DataFrame, list]:
    """Run the points with the size's first seeds, then keep adding seeds to the groups
    of every claim ``judge(rows)`` returns that is not yet known, until all are known or
    the groups have the size's most seeds. Returns the rows and the last claims.

    Seeds grow by half their number (at least two) a round, so a point takes at most
    a few rounds; every round's runs go through the store."""
    size = ctx.size
    groups = list(dict.fromkeys(p.group for p in points))
    count = {g: size.seeds for g in groups}
    while True:
        seeds = {g: range(ctx.seed, ctx.seed + count[g]) for g in groups}
        rows = run_points(ctx, name, points, seeds, measure, keep)
        claims = judge(rows)
        open_groups = {g for c in claims if not c.known() for g in c.groups()}
        grow = [g for g in groups if g in open_groups and count[g] < size.most_seeds]
        if not grow:
            return rows, claims
        for g in grow:
            count[g] = min(size.most_seeds, count[g] + max(2, count[g] // 2))


def seeds_of(rows: pd.DataFrame, by: Iterable[str]) -> dict:
    """How many seeds each point took, by the ``by`` columns."""
    return rows.groupby(list(by))["seed"].nunique().to_dict()


def flow_memo(ctx):
    """A cache of flow-level models (``cclab.flowsim``) in the entry's result store:
    ``memo(scenario) -> its replications table``, simulated only the first time (the
    key: the scenario without its thread count, and the results version). Each call is
    counted in the context's ledger as one run, ran or cached."""
    import dataclasses
    import io

    from cclab import flowsim
    from cclab.sweeps.store import Store, memo_key

    def memo(sc) -> pd.DataFrame:
        desc = dataclasses.asdict(sc)
        desc.pop("threads", None)
        key = memo_key("flowsim", json.dumps(desc, sort_keys=True, default=str))
        ran = []

        def compute() -> bytes:
            ran.append(1)
            buf = io.BytesIO()
            flowsim.simulate(sc).replications.to_parquet(buf, index=False)
            return buf.getvalue()

        with Store(ctx.store) as st:
            data = st.memo(key, compute)
        ctx.ledger.append(("flow level", 1, len(ran), 1 - len(ran)))
        return pd.read_parquet(io.BytesIO(data))

    return memo
