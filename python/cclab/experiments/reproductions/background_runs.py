"""The runs of both background-transfer papers, written once.

Papers: Courcoubetis, Dimakis, Kanakakis, "Congestion control for background data
transfers with minimal delay impact" ([BG], §IV) and "Designing incentive compatible
protocols for background data transfers" ([FB], §IV). Both put a server's background
files (chunks) next to delay-sensitive ("web", "short") Reno flows on one to three
10 Mbps links and compare the policies under which the chunks are sent.

* :data:`POLICIES`: how the background classes send under each policy (packet level)
  and :data:`FLOW_POLICIES` the flow-level model's policies.
* :class:`Network`: a scenario file of ``scenarios/`` and its classes.
* :func:`packet_point`: one run's :class:`~cclab.experiments.runs.Point`: the network's
  scenario with its loads, k long flows and the background under a policy.
* :class:`Measure`: what one run gives the entries (per web class and for all web flows
  together): the web flows' delay (mean and variance), the time-average active and
  waiting chunks, carried/offered, the access limit, and Fig. 6's size bins.
* :func:`flow_rows`: the flow-level model (``cclab.flowsim``) of the same network, in the
  same rows; :func:`paired_rows`: every row beside the vanilla row of its seed;
  :func:`estimate`: a claim's quantity, with carried/offered attached where the policy
  holds chunks back.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...scenario import load_scenario
from ..ablation import Ablation, Factor, Level
from ..claims import Estimate
from ..paired import busy_average, estimate as paired_estimate, pair
from ..runs import Point

#: Where the reproductions' scenarios live (the repository's ``scenarios/`` folder).
SCENARIOS = Path(__file__).resolve().parents[4] / "scenarios"

#: How the background classes send under each policy at packet level: the keys set on
#: their ``[[traffic]]`` tables (``access`` and ``cc`` are replaced, not merged). Reno is
#: the papers' TCP; LEDBAT is the ns-2 draft-00 module (``draft00``), LEDBAT-60 [BG]'s
#: 60 ms target, LEDBAT~a [FB]'s unstated "more competitive" LEDBAT (our choice: the same
#: 60 ms target, docs/protocols.md); TCP-LP is Linux's tcp_lp.c rules on one clock
#: (``variant = "linux"``), which is not what ns-2.35's Agent/TCP/Linux made of them
#: (issue 24; the "LBE implementation" factor of :data:`ABLATION` runs that). ``access``: a static limit, ``rate_tracking``: [BG] §IV's
#: adaptive limit, ``fairbat``: [FB] eq. (2).
POLICIES: dict[str, dict] = {
    "vanilla": {"protocol": "reno"},
    "access": {"protocol": "reno", "access": {"policy": "static"}},
    "rate_tracking": {"protocol": "reno", "access": {"policy": "rate_tracking"}},
    "fairbat": {"protocol": "reno", "access": {"policy": "fairbat"}},
    "ledbat": {"protocol": "ledbat", "cc": {"variant": "draft00"}},
    "ledbat_60": {"protocol": "ledbat", "cc": {"variant": "ledbat60"}},
    "ledbat_a": {"protocol": "ledbat", "cc": {"variant": "ledbat_a"}},
    "tcp_lp": {"protocol": "tcp_lp", "cc": {"variant": "linux"}},
}
#: The policies that hold chunks back: their verdicts report carried/offered (claims.py).
HOLD_BACK = frozenset({"access", "rate_tracking", "fairbat"})

#: The flow-level model of each policy. It has no LEDBAT or TCP-LP: its
#: lower-than-best-effort class is the ideal one, which sends only in capacity TCP
#: leaves unused (policy ``low_priority``).
FLOW_POLICIES: dict[str, str] = {
    "vanilla": "vanilla",
    "access": "access_control",
    "rate_tracking": "rate_tracking",
    "fairbat": "fairbat",
    "low_priority": "low_priority",
}

LONG = "long"
#: Mean file size (bytes) and link rate (bit/s) of both papers' experiments.
MEAN_BYTES = 3e6
LINK_BPS = 10e6
#: Payload share of the wire in the scenarios (1460-byte segments, 40 bytes of headers).
PAYLOAD = 1460 / 1500
#: Web flows arriving in the last DRAIN seconds of a run (at most a quarter of the
#: measured time) are not measured: they might not finish.
DRAIN = 1000.0
#: Fig. 6 of [BG]: width and number of the size bins (bytes).
BIN_BYTES, BINS = 50_000, 100


@dataclass(frozen=True)
class Network:
    """A scenario file of ``scenarios/`` and its classes: the web classes, the background
    classes, each class's links at flow level, and the class whose path long flows take."""

    base: str
    web: tuple[str, ...]
    background: tuple[str, ...]
    routes: Mapping[str, tuple[int, ...]]
    long_path: str

    @property
    def links(self) -> int:
        return 1 + max(i for r in self.routes.values() for i in r)


FAIRBAT_ONE_LINK = Network("fairbat/single-link.toml", ("web",), ("background",),
                           {"web": (0,), "background": (0,)}, "background")
FAIRBAT_TWO_LINKS = Network("fairbat/two-links.toml", ("web1", "web2"), ("background",),
                            {"web1": (0,), "web2": (1,), "background": (0, 1)}, "background")
BG_ONE_LINK = Network("background/fig5-single-link.toml", ("web",), ("background",),
                      {"web": (0,), "background": (0,)}, "web")
BG_TWO_LINKS = Network("background/fig7-two-links.toml", ("web_1", "web_2"), ("background",),
                       {"web_1": (0,), "web_2": (1,), "background": (0, 1)}, "web_1")
BG_THREE_LINKS = Network("background/fig9-three-links.toml", ("web_1", "web_123", "web_2", "web_23"),
                         ("background_123", "background_2", "background_23"),
                         {"web_1": (0,), "web_123": (0, 1, 2), "web_2": (1,), "web_23": (1, 2),
                          "background_123": (0, 1, 2), "background_2": (1,), "background_23": (1, 2)}, "web_1")


def scenario_path(name: str) -> Path:
    """The scenario file ``scenarios/NAME`` (e.g. ``fairbat/single-link.toml``)."""
    p = SCENARIOS / name
    if not p.exists():
        raise FileNotFoundError(f"{p}: the reproductions read their scenarios from the repository's scenarios/ folder")
    return p


def packet_scenario(net: Network, policy: str, loads: Mapping[str, float], *, k: int = 0, duration: float,
                    warmup: float, access: Mapping | None = None) -> dict:
    """The network's scenario with the classes' ``loads``, every background class under
    ``policy`` (a key of :data:`POLICIES`; ``access``: extra keys of its access table),
    and ``k`` long-lived Reno flows on the path of ``net.long_path``."""
    if policy not in POLICIES:
        raise ValueError(f"policy: expected one of {list(POLICIES)}, got {policy!r}")
    sc, _ = load_scenario(scenario_path(net.base))
    classes = {c["name"]: c for c in sc["traffic"]}
    for name, load in loads.items():
        if name not in classes:
            raise ValueError(f"{net.base}: no class {name!r} (classes: {list(classes)})")
        classes[name]["load"] = float(load)
    for name in net.background:
        bg = classes[name]
        bg.pop("access", None)
        bg.pop("cc", None)
        bg.update(copy.deepcopy(POLICIES[policy]))
        if access and "access" in bg:
            bg["access"].update(access)
    if k:
        path = classes[net.long_path]
        sc["traffic"].append({"name": LONG, "type": "long_lived", "src": path["src"], "dst": path["dst"],
                              "protocol": "reno", "count": int(k)})
    sc["duration"], sc["warmup"] = f"{duration:g}s", f"{warmup:g}s"
    sc["record"] = {"interval": "0s"}
    return sc


def packet_point(net: Network, policy: str, loads: Mapping[str, float], size, *, k: int = 0,
                 labels: Mapping | None = None, group: tuple = (), access: Mapping | None = None) -> Point:
    """One packet-level point: :func:`packet_scenario` at the size's duration and warm-up,
    labelled ``level = "packet"``, the policy, k and ``labels``."""
    sc = packet_scenario(net, policy, loads, k=k, duration=size.duration, warmup=size.warmup, access=access)
    return Point({"level": "packet", "policy": policy, "k": int(k), **(labels or {})}, sc, group)


#: The factors parts 6-7 of issue 25 move one at a time on every packet-level entry of
#: both papers (``cclab reproduce NAME --ablate``; :mod:`cclab.experiments.ablation`): the
#: buffer in packets (the papers' 100), the lower-than-best-effort implementations (ours:
#: the ns-2 draft-00 LEDBAT and Linux's TCP-LP, against ns-3's), the run length (twice,
#: the same warm-up); TCP-LP as ns-2.35 ran it, its Linux module inside Agent/TCP/Linux
#: with that agent's defaults ("the default version of TCP-LP" of the papers: no
#: timestamps_, so no delay sample, and a TCPSink, so no fast retransmit;
#: docs/protocols.md, TCP-LP's ns2 variant), and with timestamps_ on; and the TCP agent,
#: ns-2.35's (``tcp.preset = "ns2"``: 1000-byte packets, ns-2's windows, timers and
#: recovery), keeping the scenarios' receive window of 128 KiB (131 packets: ns-2's
#: default window_ of 20 packets would cap a web flow near 3 Mb/s, which no paper
#: reports; our choice, stated).
def ns2_linux_agent(timestamps: bool) -> dict:
    """Agent/TCP/Linux's sender as cclab's keys (as bench/validate_ns2.py checks them
    against ns-2.35): packetSize_ 1000, windowInit_ 2 with the SYN in it, ns-2's option
    sizes, rtxcur_init_ 3 s, maxrto_ 120 s, no fast retransmit to a TCPSink."""
    return {"mss": 1000, "header": 40, "initial_window": 2, "syn_segment": True, "timestamps": timestamps,
            "option_sizes": "ns2", "initial_rto": "3s", "max_rto": "120s", "dupack_threshold": 1_000_000,
            "receive_window": "131072B"}


ABLATION = Ablation((
    Factor("buffer (packets)", (Level("50", {"links[*].queue.limit": "50pkts"}),
                                Level("200", {"links[*].queue.limit": "200pkts"}))),
    Factor("LBE implementation", (
        Level("ns-3 LEDBAT and TCP-LP", {"traffic[protocol=ledbat].cc.variant": "ns3",
                                         "traffic[protocol=tcp_lp].cc.variant": "ns3"}),
        Level("TCP-LP as ns-2 ran it (Agent/TCP/Linux defaults)",
              {"traffic[protocol=tcp_lp].cc.variant": "ns2", "traffic[protocol=tcp_lp].tcp": ns2_linux_agent(False)}),
        Level("TCP-LP as ns-2 ran it, timestamps_ on",
              {"traffic[protocol=tcp_lp].cc.variant": "ns2", "traffic[protocol=tcp_lp].tcp": ns2_linux_agent(True)}),
    )),
    Factor("TCP agent", (Level("ns-2.35's (preset ns2, 128 KiB window)",
                               {"tcp": {"preset": "ns2", "receive_window": "131072B"}}),)),
    Factor("run length", (Level("twice", size=lambda s: s.replace(duration=2 * s.duration)),)),
), note="A level that holds no lower-than-best-effort class (vanilla, access control) runs as the baseline.")

#: The tables a packet-level run of these entries keeps in the store: the flows (the
#: web delays and the chunks' busy times are read from them); the summary is always kept.
KEEP = ("flows",)


@dataclass(frozen=True)
class Measure:
    """What one packet-level run gives: a row per web class and one for all web flows
    together (``class = "all"``) with

    * ``delay``, ``delay_var``, ``flows``, ``unfinished``: the web flows arriving in
      [warm-up, end − drain] (drain: :data:`DRAIN`, at most a quarter of the measured
      time): mean and sample variance of the delays of those that finished, how many
      finished, how many had not;
    * ``mean_active``, ``mean_waiting``: time-average chunks of all background classes
      active and waiting over [warm-up, end] (:func:`~cclab.experiments.paired.busy_average`);
    * ``carried``: the bytes the background classes delivered over [warm-up, end] over
      the bytes of their chunks that arrived then: below 1, work was deferred past the
      run (chunks held back, the queue grew); ``offered``: their throughput over the
      nominal offered load (loads × link rate), which also moves with the arrivals drawn;
    * ``mean_limit``, ``sd_limit``: the access limit's time average and deviation (NaN
      without access control), averaged over the background classes;
    * with ``bins``, ``bin_sum`` and ``bin_count`` per 50 kB size bin ([BG] Fig. 6).
    """

    net: Network
    bins: bool = False

    def __call__(self, result, point: Point) -> list[dict]:
        net, summ, flows = self.net, result.summary, result.flows
        warm, end = float(summ["warmup_s"]), float(summ["simulated_s"])
        thr = sum(float(summ[f"{n}.throughput_bps"]) for n in net.background)
        offered = thr / (sum(_load(point.scenario, n) for n in net.background) * LINK_BPS)
        bg = flows[flows["class"].isin(net.background)]
        arrived = float(bg.loc[bg["arrival"] >= warm, "size"].sum())
        carried = thr * (end - warm) / 8 / arrived if arrived > 0 else math.nan
        limits = [float(summ.get(f"{n}.access_mean_limit", math.nan)) for n in net.background]
        sds = [float(summ.get(f"{n}.access_sd_limit", math.nan)) for n in net.background]
        common = {"mean_active": busy_average(bg["start"], bg["finish"], warm, end),
                  "mean_waiting": busy_average(bg["arrival"], bg["start"], warm, end),
                  "carried": carried, "offered": offered, "mean_limit": float(np.mean(limits)),
                  "sd_limit": float(np.mean(sds))}
        measured = flows[(flows["arrival"] >= warm) & (flows["arrival"] < end - min(DRAIN, (end - warm) / 4))]
        rows = []
        for name in (*net.web, "all"):
            w = measured[measured["class"].isin(net.web if name == "all" else (name,))]
            d = w.loc[w["finished"], "completion_time"].to_numpy(dtype=float)
            row = {"class": name, "delay": float(d.mean()) if len(d) else math.nan,
                   "delay_var": float(d.var(ddof=1)) if len(d) > 1 else math.nan, "flows": int(len(d)),
                   "unfinished": int(len(w) - len(d)), **common}
            if self.bins:
                done = w[w["finished"]]
                idx = (done["size"].to_numpy() // BIN_BYTES).astype(int)
                keep = idx < BINS
                row["bin_sum"] = np.bincount(idx[keep], weights=d[keep], minlength=BINS)
                row["bin_count"] = np.bincount(idx[keep], minlength=BINS)
            rows.append(row)
        return rows


def _load(scenario: Mapping, cls: str) -> float:
    return float(next(c["load"] for c in scenario["traffic"] if c["name"] == cls))


# ----------------------------------------------------------------------------------- flow level


def flow_rows(net: Network, policy: str, loads: Mapping[str, float], *, k: int = 0, duration: float,
              replications: int, seed: int, payload: bool, params: Mapping | None = None,
              labels: Mapping | None = None, memo=None) -> list[dict]:
    """The network in ``cclab.flowsim`` (bytes and seconds, so that the controllers'
    120 s period means what it means at packet level): rows as :class:`Measure`'s, one
    set per replication (``seed`` the replication, 1-based; the replications of two
    policies draw the same arrivals), ``level = "flow"``.

    payload: the links carry payload only (10 Mbps less the headers, :data:`PAYLOAD`)
        with the packet level's arrival rates, so that the flow level mirrors the packet
        level ([BG]'s entries); otherwise the links carry 10 Mbps and loads are fractions
        of it, the model of the papers' theory ([FB]'s entries, checked against Theorem 7).
    memo: a ``(key, compute) -> DataFrame`` cache (the result store's, runs.flow_memo).
    """
    from cclab import flowsim

    cap = LINK_BPS / 8 * (PAYLOAD if payload else 1.0)

    def cls(name: str, make):
        kw = {"rate": loads[name] * LINK_BPS / 8 / MEAN_BYTES} if payload else {"load": loads[name]}
        return make(name, kw)

    classes: list[object] = [cls(n, lambda n, kw: flowsim.Short(mean_size=MEAN_BYTES, route=net.routes[n], name=n,
                                                                 **kw)) for n in net.web]
    if k:
        classes.append(flowsim.Long(count=int(k), route=net.routes[net.long_path], name=LONG))
    classes += [cls(n, lambda n, kw: flowsim.Background(FLOW_POLICIES[policy], dict(params or {}),
                                                        mean_size=MEAN_BYTES, route=net.routes[n], name=n, **kw))
                for n in net.background]
    sc = flowsim.Scenario(classes=classes, capacities=(cap,) * net.links, duration=duration, warmup=duration / 5,
                          replications=replications, seed=seed, threads=2)
    reps = memo(sc) if memo is not None else flowsim.simulate(sc).replications
    rows = []
    for r, g in reps.groupby("replication"):
        g = g.set_index("class")
        bg = list(net.background)
        common = {"mean_active": float(g.loc[bg, "mean_active"].sum()),
                  "mean_waiting": float((g.loc[bg, "mean_number"] - g.loc[bg, "mean_active"]).sum()),
                  "carried": float(g.loc[bg, "throughput"].sum() / sum(loads[n] * LINK_BPS / 8 for n in bg)),
                  "mean_limit": float(g.loc[bg, "mean_limit"].mean()), "sd_limit": float(g.loc[bg, "sd_limit"].mean())}
        n = g.loc[list(net.web), "departures"].to_numpy(dtype=float)
        d = g.loc[list(net.web), "mean_delay"].to_numpy(dtype=float)
        base = {"level": "flow", "policy": policy, "k": int(k), **(labels or {}), "seed": int(r) + 1}
        for name in net.web:
            rows.append({**base, "class": name, "delay": float(g.at[name, "mean_delay"]), **common})
        rows.append({**base, "class": "all", "delay": float(np.sum(n * d) / np.sum(n)), **common})
    return rows


# ----------------------------------------------------------------------------------- pairing and claims


def paired_rows(rows: pd.DataFrame, on: Sequence[str]) -> pd.DataFrame:
    """Every row beside the vanilla row of the same level, ``on`` labels, class and seed:
    ``delay_ratio``, ``active_ratio``, ``variance_ratio`` and ``improvement_pct``
    (100·(1 − delay ratio), [FB]'s "percentage improvement")."""
    return pair(rows, on=["level", *on, "class"], baseline={"policy": "vanilla"},
                ratios={"delay_ratio": "delay", "active_ratio": "mean_active", "variance_ratio": "delay_var"},
                improvements={"improvement_pct": "delay"})


def estimate(rows: pd.DataFrame, column: str, *, level: str = "packet", cls: str = "all", fmt: str = "{:.2f}",
             **where) -> Estimate:
    """A claim's quantity: ``column`` per seed at one point (``where``: policy and x
    labels), with the policy's carried/offered attached if it holds chunks back."""
    policy = where.get("policy")
    return paired_estimate(rows, column, carried="carried" if policy in HOLD_BACK else None, fmt=fmt,
                           level=level, **{"class": cls}, **where)


def policies_in(rows: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(rows["policy"]))


def loads_of(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(sorted({float(v) for v in values}))
