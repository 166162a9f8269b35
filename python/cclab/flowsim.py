"""Flow-level simulator of the background-transfer models, with a friendly Python API.

The engine is the Rust crate ``cclab-flowsim`` (exposed as ``cclab._core.flowsim_run``):
links shared by Poisson short TCP flows, ``k`` long-lived TCP flows and controlled
background aggregates (CBFs) under the policies of Courcoubetis, Dimakis & Kanakakis,
"Congestion control for background data transfers with minimal delay impact" (threshold
eqs. 8/12, optimal implementable eq. 15, wTCP eq. 16, access control eq. 26, rate-tracking
adaptive access control §IV) and of FAIRBAT ("Designing incentive compatible protocols for
background data transfers", adaptive limit eq. 2), plus vanilla TCP and ideal low priority.
Capacity on a path of links is shared by weighted max-min fairness (docs/flowsim.md).

Units: capacities in data per unit time (default 1), sizes in data (default mean 1),
so with the defaults a short-flow class of load ``rho`` has arrival rate ``rho``.

Example::

    from cclab import flowsim
    sc = flowsim.single_link(rho=0.5, k=1, policy="wtcp", w=1.0, duration=2e4)
    res = flowsim.simulate(sc)
    res.summary[["class", "mean_number", "mean_number_ci"]]
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

from .stats import mean_ci

__all__ = ["Short", "Long", "Background", "Scenario", "FlowsimResult", "simulate", "single_link",
           "POLICIES", "METRICS"]

#: Background policies understood by the engine, with their parameters. The access
#: policies (access_control = a static limit, fairbat, rate_tracking) are the
#: controllers of the Rust crate ``cclab-control``, which holds their defaults and checks
#: (docs/protocols.md, "Access control"); their times (``period``) are in the model's
#: time unit and the defaults assume seconds.
POLICIES: dict[str, tuple[str, ...]] = {
    "threshold": ("n0", "x_next"),
    "implementable": ("x_cap",),
    "wtcp": ("w",),
    "access_control": ("limit", "fractional"),
    "fairbat": ("m0", "m_min", "m_max", "period", "tau", "gain_start", "gain_end", "gain_updates", "measure",
                "trend", "gain_scale", "gain_schedule", "fractional"),
    "rate_tracking": ("m0", "m_min", "m_max", "period", "ewma", "rate_ewma", "step", "step_end", "tau", "drain",
                      "fractional"),
    "vanilla": (),
    "low_priority": (),
}
_REQUIRED = {"threshold": ("n0",), "implementable": ("x_cap",), "wtcp": ("w",), "access_control": ("limit",)}
#: Per-class metrics reported (each with a ``_ci`` half-width column in the summary).
METRICS = ("mean_number", "mean_active", "mean_delay", "throughput", "mean_limit", "sd_limit")


def _route(route, where: str) -> tuple[int, ...]:
    if isinstance(route, int):
        route = (route,)
    r = tuple(int(x) for x in route)
    if not r or any(x < 0 for x in r):
        raise ValueError(f"{where}.route: must be a non-empty sequence of link indices >= 0, got {route!r}")
    return r


def _size_params(size: str, shape: float | None, mean_size: float, where: str) -> dict[str, float]:
    if not (mean_size > 0 and np.isfinite(mean_size)):
        raise ValueError(f"{where}.mean_size: must be positive and finite, got {mean_size}")
    if size == "exp":
        return {"mean_size": float(mean_size)}
    if size == "pareto":
        if shape is None or not shape > 1:
            raise ValueError(f"{where}.shape: a Pareto size needs a tail index > 1 (finite mean), got {shape}")
        return {"mean_size": float(mean_size), "shape": float(shape)}
    raise ValueError(f"{where}.size: must be 'exp' or 'pareto', got {size!r}")


def _rate(load, rate, mean_size, cap, where) -> float:
    if (load is None) == (rate is None):
        raise ValueError(f"{where}: give exactly one of load= (fraction of the route's smallest capacity) or rate=")
    if rate is not None:
        return float(rate)
    if not load > 0:
        raise ValueError(f"{where}.load: must be positive, got {load}")
    return float(load) * cap / mean_size


@dataclass(frozen=True)
class Short:
    """Poisson short TCP flows.

    load: offered load as a fraction of the smallest capacity on the route (λ·mean_size/C);
        or give ``rate`` (arrivals per unit time) instead.
    mean_size: mean flow size. size: ``"exp"`` or ``"pareto"``; shape: Pareto tail index (> 1).
    route: link indices crossed. name: label in the results.
    """

    load: float | None = None
    rate: float | None = None
    mean_size: float = 1.0
    size: str = "exp"
    shape: float | None = None
    route: Sequence[int] = (0,)
    name: str = "short"


@dataclass(frozen=True)
class Long:
    """``count`` long-lived TCP flows on ``route`` (the k of the background paper)."""

    count: int = 1
    route: Sequence[int] = (0,)
    name: str = "long"


@dataclass(frozen=True)
class Background:
    """A controlled background aggregate (CBF).

    policy: one of :data:`POLICIES`. params: the policy's parameters
        (threshold: n0 and optional x_next, the TCP share at n0+1, eq. 8; implementable:
        x_cap, the TCP share the CBF keeps, eq. 15; wtcp: w, eq. 16; access_control:
        limit M, eq. 26; fairbat: FAIRBAT eq. 2; rate_tracking: §IV; the keys of the
        last three and their defaults are those of docs/protocols.md, "Access control").
    load / rate: a Poisson stream of micro-flows (§III); leave both None for a saturated
        CBF that always has data (§II). mean_size, size, shape: micro-flow sizes.
    route, name: as for :class:`Short`.
    """

    policy: str = "wtcp"
    params: dict = field(default_factory=dict)
    load: float | None = None
    rate: float | None = None
    mean_size: float = 1.0
    size: str = "exp"
    shape: float | None = None
    route: Sequence[int] = (0,)
    name: str = "background"


@dataclass(frozen=True)
class Scenario:
    """A flow-level scenario.

    classes: list of :class:`Short`, :class:`Long`, :class:`Background`.
    capacities: capacity of each link. duration: measured time per replication.
    warmup: discarded initial time (default duration/10). replications: independent runs (≥ 2).
    seed: base seed (replication r of class c uses stream (seed, r, c)). threads: OS threads.
    """

    classes: Sequence[object]
    capacities: Sequence[float] = (1.0,)
    duration: float = 2e4
    warmup: float | None = None
    replications: int = 10
    seed: int = 1
    threads: int = 1

    def specs(self) -> list[tuple]:
        """The class specifications passed to ``cclab._core.flowsim_run``."""
        caps = [float(c) for c in self.capacities]
        out = []
        for i, c in enumerate(self.classes):
            where = f"classes[{i}]"
            if isinstance(c, Long):
                if int(c.count) != c.count or c.count < 0:
                    raise ValueError(f"{where}.count: must be a non-negative integer, got {c.count}")
                out.append((c.name, "long", "", list(_route(c.route, where)), {"count": float(c.count)}))
                continue
            if not isinstance(c, (Short, Background)):
                raise ValueError(f"{where}: must be Short, Long or Background, got {type(c).__name__}")
            route = _route(c.route, where)
            if any(r >= len(caps) for r in route):
                raise ValueError(f"{where}.route: link index out of range (there are {len(caps)} links)")
            cap = min(caps[r] for r in route)
            if isinstance(c, Short):
                p = _size_params(c.size, c.shape, c.mean_size, where)
                p["rate"] = _rate(c.load, c.rate, c.mean_size, cap, where)
                out.append((c.name, "short", "", list(route), p))
                continue
            if c.policy not in POLICIES:
                raise ValueError(f"{where}.policy: unknown policy {c.policy!r}; choose from {sorted(POLICIES)}")
            params = dict(c.params)
            for k in params:
                if k not in POLICIES[c.policy]:
                    raise ValueError(f"{where}.params: {k!r} is not a parameter of {c.policy} "
                                     f"(it takes {POLICIES[c.policy] or 'none'})")
            for k in _REQUIRED.get(c.policy, ()):
                if k not in params:
                    raise ValueError(f"{where}.params: policy {c.policy} needs {k!r}")
            p = {k: (v if isinstance(v, str) else float(v)) for k, v in params.items() if v is not None}
            if c.load is not None or c.rate is not None:
                p.update(_size_params(c.size, c.shape, c.mean_size, where))
                p["rate"] = _rate(c.load, c.rate, c.mean_size, cap, where)
            out.append((c.name, "background", c.policy, list(route), p))
        return out


@dataclass
class FlowsimResult:
    """What :func:`simulate` returns.

    summary: one row per class: mean of each metric over replications and its
        confidence half-width (``<metric>_ci``); metrics are mean_number (time-average
        flows present, waiting included), mean_active, mean_delay (sojourn of flows that
        departed in the window), throughput, mean_limit and sd_limit (time average and
        standard deviation over time of the limit M of access control).
    replications: long table, one row per (replication, class).
    events: arrivals + departures simulated. wall_s: engine time. events_per_s: their ratio.
    """

    summary: pd.DataFrame
    replications: pd.DataFrame
    events: int
    wall_s: float
    events_per_s: float
    scenario: Scenario

    def row(self, name: str) -> pd.Series:
        """The summary row of class ``name``."""
        rows = self.summary[self.summary["class"] == name]
        if rows.empty:
            raise ValueError(f"name: no class called {name!r} (classes: {list(self.summary['class'])})")
        return rows.iloc[0]


def simulate(scenario: Scenario | None = None, *, confidence: float = 0.95, **kwargs) -> FlowsimResult:
    """Run a flow-level scenario and summarise it over independent replications.

    scenario: a :class:`Scenario`; or omit it and pass its fields as keyword arguments
        (``simulate(classes=[...], duration=1e4)``), or pass both to override fields.
    confidence: level of the Student-t confidence intervals, in (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must lie in (0, 1), got {confidence}")
    if scenario is None:
        scenario = Scenario(**kwargs)
    elif kwargs:
        scenario = replace(scenario, **kwargs)
    from . import _core

    warm = scenario.duration / 10 if scenario.warmup is None else scenario.warmup
    if not isinstance(scenario.replications, (int, np.integer)) or scenario.replications < 2:
        raise ValueError(f"replications: at least 2 are needed for a confidence interval, got {scenario.replications}")
    raw = _core.flowsim_run([float(c) for c in scenario.capacities], scenario.specs(), float(scenario.duration),
                            float(warm), int(scenario.replications), int(scenario.seed) % 2**64,
                            int(scenario.threads))
    names = raw["names"]
    kinds = [s[1] for s in scenario.specs()]
    policies = [s[2] or "" for s in scenario.specs()]
    arr = {m: np.asarray(raw[m], dtype=float) for m in (*METRICS, "departures", "arrivals")}
    rows = []
    for i, n in enumerate(names):
        row = {"class": n, "kind": kinds[i], "policy": policies[i]}
        for m in METRICS:
            row[m], row[m + "_ci"] = mean_ci(arr[m][:, i], confidence)
        row["departures"] = float(arr["departures"][:, i].sum())
        row["replications"] = int(scenario.replications)
        rows.append(row)
    reps = pd.DataFrame([
        {"replication": r, "class": n, **{m: arr[m][r, i] for m in (*METRICS, "departures", "arrivals")}}
        for r in range(int(scenario.replications)) for i, n in enumerate(names)
    ])
    return FlowsimResult(pd.DataFrame(rows), reps, int(raw["events"]), float(raw["wall_s"]),
                         float(raw["events_per_s"]), scenario)


def single_link(rho: float, k: int = 0, policy: str | None = "wtcp", *, background_load: float | None = None,
                size: str = "exp", shape: float | None = None, capacity: float = 1.0, duration: float = 2e4,
                warmup: float | None = None, replications: int = 10, seed: int = 1, threads: int = 1,
                **params) -> Scenario:
    """The single-link model of the background paper (§II-A) as a :class:`Scenario`.

    rho: load of the short flows (mean size 1, so λ = ρ·capacity). k: long TCP flows.
    policy: background policy (None: no background class). background_load: ρ_b of a
        micro-flow stream (§III); None for a saturated CBF (§II). size, shape: size
        distribution of short flows and micro-flows. capacity: link capacity C.
    duration, warmup, replications, seed, threads: as in :class:`Scenario`.
    params: the policy's parameters (e.g. ``w=1.0``, ``n0=3``, ``limit=2``).
    """
    if not 0 < rho < 1:
        raise ValueError(f"rho: must lie in (0, 1) for a stable short-flow chain (eq. 1), got {rho}")
    if int(k) != k or k < 0:
        raise ValueError(f"k: must be a non-negative integer, got {k}")
    classes: list[object] = [Short(load=rho, size=size, shape=shape, name="short")]
    if k > 0:
        classes.append(Long(count=int(k), name="long"))
    if policy is not None:
        classes.append(Background(policy=policy, params=dict(params), load=background_load, size=size,
                                  shape=shape, name="background"))
    elif params:
        raise ValueError(f"params: {sorted(params)} given but policy is None")
    return Scenario(classes=classes, capacities=(capacity,), duration=duration, warmup=warmup,
                    replications=replications, seed=seed, threads=threads)
