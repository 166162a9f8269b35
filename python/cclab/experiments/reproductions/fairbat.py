"""Reproductions of the FAIRBAT paper at flow level and packet level, side by side.

Paper: Courcoubetis, Dimakis, Kanakakis, "Designing incentive compatible protocols for
background data transfers" (``shared/papers/fairbat-incentive-compatible-background.md``);
the closed forms come from the companion "Congestion control for background data
transfers with minimal delay impact" ([BG]). Entries (docs/reproduction/fairbat.md):

* ``fairbat-fig1``: one bottleneck, no long flows, web load 0.3, background load
  0.2-0.6: the web flows' delay improvement over 'vanilla' (every chunk a TCP flow at
  once) and the ratio of active chunks, for FAIRBAT, LEDBAT, LEDBAT~a and TCP-LP.
* ``fairbat-fig2``: the same beside k = 3 long-lived flows; ``fairbat-table1``: the
  normalized variance of the web delays of those runs, against Table I.
* ``fairbat-fig3``: FAIRBAT's improvement against k, beside ρ_b/((1−ρ_s)(k+1)), which is
  [BG] Theorem 7 at the critical limit (:func:`theorem7_improvement`).
* ``fairbat-fig5``: two links, background 0.2 across both, web load 0.3-0.7 on each,
  across eq. (1)'s stability limit ρ_s = 1 − √0.2.
* ``fairbat-sensitivity``: the constants the papers leave unstated.

The building blocks are shared by the entries and by the background paper's
packet-level figures: :data:`POLICIES` and :func:`packet_scenario` set up the
background class of a scenario of ``scenarios/fairbat/`` or ``scenarios/background/``
for each policy; :func:`run_packet` and :func:`run_flow` run a grid of (policy, load,
seed) and return one row per run with the web flows' delay (mean and variance), the
active and waiting chunks and the limit (:func:`run_packet_jobs` and
:func:`run_flow_jobs` run any list of points); :func:`summarize` (:func:`summarize_by`
for grids over more than the background load) pairs each run with the vanilla run of
the same seed and averages over seeds with 95% confidence intervals.
"""
from __future__ import annotations

import functools
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..catalogue import Context, Outcome, reproduction
from ...plotting import pyplot
from ...scenario import load_scenario
from ...stats import mean_ci

PAPER = "fairbat-incentive-compatible-background"

#: Where the reproductions' scenarios live (the repository's ``scenarios/`` folder).
SCENARIOS = Path(__file__).resolve().parents[4] / "scenarios"

#: Every policy a reproduction may name, in the order of the tables.
POLICIES = ("vanilla", "access", "rate_tracking", "fairbat", "ledbat", "ledbat_60", "ledbat_a", "tcp_lp")

#: How the background class sends under each policy at packet level: the keys set on
#: its ``[[traffic]]`` table (``access`` and ``cc`` are replaced, not merged). Reno is
#: the papers' TCP; LEDBAT is the ns-2 draft-00 module (``draft00``), LEDBAT-60 the
#: background paper's 60 ms target, LEDBAT~a FAIRBAT's unstated "more competitive"
#: LEDBAT (our choice: the same 60 ms target, docs/protocols.md); TCP-LP is the ns-2
#: agent, i.e. Linux's tcp_lp.c (``variant = "linux"``, docs/protocols.md).
PACKET_POLICIES: dict[str, dict] = {
    "vanilla": {"protocol": "reno"},
    "access": {"protocol": "reno", "access": {"policy": "static"}},
    "rate_tracking": {"protocol": "reno", "access": {"policy": "rate_tracking"}},
    "fairbat": {"protocol": "reno", "access": {"policy": "fairbat"}},
    "ledbat": {"protocol": "ledbat", "cc": {"variant": "draft00"}},
    "ledbat_60": {"protocol": "ledbat", "cc": {"variant": "ledbat60"}},
    "ledbat_a": {"protocol": "ledbat", "cc": {"variant": "ledbat_a"}},
    "tcp_lp": {"protocol": "tcp_lp", "cc": {"variant": "linux"}},
}

#: The flow-level model (``cclab.flowsim``) of each policy. It has no LEDBAT or TCP-LP:
#: its lower-than-best-effort class is the ideal one, which sends only in capacity
#: TCP leaves unused (reported as policy ``low_priority``).
FLOW_POLICIES: dict[str, str] = {
    "vanilla": "vanilla",
    "access": "access_control",
    "rate_tracking": "rate_tracking",
    "fairbat": "fairbat",
    "low_priority": "low_priority",
}

WEB, BACKGROUND, LONG = "web", "background", "long"
#: The web (delay-sensitive) classes of a scenario: ``web``, or one per link (``web1``,
#: ``web2``, ... in ``fairbat/two-links.toml``); the reproductions pool their flows.
WEB_CLASS = re.compile(r"web\d*$")
#: Mean file size (bytes) and link rate (bit/s) of both papers' experiments.
MEAN_BYTES = 3e6
LINK_BPS = 10e6


def scenario_path(name: str) -> Path:
    """The scenario file ``scenarios/NAME`` (e.g. ``fairbat/single-link.toml``)."""
    p = SCENARIOS / name
    if not p.exists():
        raise FileNotFoundError(f"{p}: the reproductions read their scenarios from the repository's scenarios/ folder")
    return p


def packet_scenario(policy: str, background_load: float, *, k: int = 0, web_load: float | None = None,
                    duration: float | None = None, warmup: float | None = None, access: dict | None = None,
                    base: str = "fairbat/single-link.toml") -> dict:
    """The scenario ``base`` with its background class sent under ``policy``.

    Args:
        policy: one of :data:`POLICIES`.
        background_load: load of the background chunks (fraction of the link rate).
        k: long-lived Reno flows added on the background's path (class ``long``).
        web_load: load of the web flows, each web class on its own link (default: the file's).
        duration, warmup: seconds (default: the file's).
        access: extra keys of the ``access`` table (e.g. ``{"limit": 18}`` for ``access``).
        base: the scenario file under ``scenarios/``.
    """
    if policy not in PACKET_POLICIES:
        raise ValueError(f"policy: expected one of {list(PACKET_POLICIES)}, got {policy!r}")
    sc, _ = load_scenario(scenario_path(base))
    classes = {c["name"]: c for c in sc["traffic"]}
    bg = classes[BACKGROUND]
    for key in ("access", "cc"):
        bg.pop(key, None)
    bg.update({key: (dict(v) if isinstance(v, dict) else v) for key, v in PACKET_POLICIES[policy].items()})
    if access:
        bg.setdefault("access", {}).update(access)
    bg["load"] = float(background_load)
    if web_load is not None:
        for name, c in classes.items():
            if WEB_CLASS.match(name):
                c["load"] = float(web_load)
    if k:
        sc["traffic"].append({"name": LONG, "type": "long_lived", "src": bg["src"], "dst": bg["dst"],
                              "protocol": "reno", "count": int(k)})
    if duration is not None:
        sc["duration"] = f"{duration:g}s"
    if warmup is not None:
        sc["warmup"] = f"{warmup:g}s"
    sc["record"] = {"interval": "0s"}
    return sc


def _seconds(text: str) -> float:
    return float(text.removesuffix("s"))


def packet_metrics(result, warmup: float, end: float) -> dict:
    """What the reproductions read from one packet-level run: the web flows' delays
    (mean and sample variance, flows arriving after the warm-up, every web class pooled)
    and the background
    class's time-average active and waiting chunks over [warm-up, end]."""
    f = result.flows
    web = f[f["class"].astype(str).str.fullmatch(WEB_CLASS.pattern) & ~f["warmup"]]
    done = web[web["finished"]]["completion_time"].to_numpy()
    bg = f[f["class"] == BACKGROUND]
    span = end - warmup

    def busy(a, b):  # time-average number of intervals [a, b) over [warmup, end]
        a = np.clip(np.nan_to_num(a, nan=end), warmup, end)
        b = np.clip(np.nan_to_num(b, nan=end), warmup, end)
        return float(np.sum(np.maximum(b - a, 0.0)) / span)

    s = result.summary
    return {
        "web_delay": float(done.mean()) if len(done) else math.nan,
        "web_delay_var": float(done.var(ddof=1)) if len(done) > 1 else math.nan,
        "web_flows": int(len(web)),
        "web_unfinished": int((~web["finished"]).sum()),
        "mean_active": busy(bg["start"].to_numpy(), bg["finish"].to_numpy()),
        "mean_waiting": busy(bg["arrival"].to_numpy(), bg["start"].to_numpy()),
        "bg_throughput_bps": float(s[f"{BACKGROUND}.throughput_bps"]),
        "mean_limit": float(s.get(f"{BACKGROUND}.access_mean_limit", math.nan)),
        "sd_limit": float(s.get(f"{BACKGROUND}.access_sd_limit", math.nan)),
    }


def run_threads() -> int:
    """Threads to run packet-level runs on (the engine releases the GIL): two at most,
    the machines these reproductions are timed on have two cores."""
    return max(1, min(2, os.cpu_count() or 1))


def run_packet(policies: Iterable[str], loads: Iterable[float], seeds: Iterable[int], *, k: int = 0,
               duration: float, warmup: float, progress: bool = False, **kw) -> pd.DataFrame:
    """Run every (policy, background load, seed) at packet level; one row per run.

    Columns: level ("packet"), policy, background_load, k, seed and the keys of
    :func:`packet_metrics`. Runs go on up to two threads (the engine releases the GIL).
    ``kw`` goes to :func:`packet_scenario`.
    """
    jobs = [PacketJob(p, float(b), int(s), k=k, duration=duration, warmup=warmup, kw=kw)
            for b in loads for p in policies for s in seeds]
    return run_packet_jobs(jobs, progress=progress)


@dataclass(frozen=True)
class PacketJob:
    """One packet-level run: :func:`packet_scenario`'s arguments, the seed, and extra
    columns (``labels``) for its row, e.g. ``{"web_load": 0.5}``."""

    policy: str
    background_load: float
    seed: int
    k: int = 0
    duration: float = 10_000.0
    warmup: float = 3_000.0
    kw: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)


def run_packet_jobs(jobs: list[PacketJob], *, progress: bool = False) -> pd.DataFrame:
    """Run packet-level jobs on up to two threads; one row per job, in order: level,
    policy, background_load, k, seed, the job's labels and :func:`packet_metrics`."""
    from ...api import run

    def one(j: PacketJob):
        sc = packet_scenario(j.policy, j.background_load, k=j.k, duration=j.duration, warmup=j.warmup, **j.kw)
        r = run(sc, seed=j.seed)
        return {"level": "packet", "policy": j.policy, "background_load": j.background_load, "k": j.k,
                "seed": j.seed, **j.labels, **packet_metrics(r, _seconds(sc["warmup"]), _seconds(sc["duration"]))}

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), unit="run", desc="packet level", leave=False)
    rows = []
    with ThreadPoolExecutor(run_threads()) as pool:
        for row in pool.map(one, jobs):
            rows.append(row)
            if bar is not None:
                bar.update()
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows)


def flow_scenario(policy: str, background_load: float, *, k: int = 0, web_load: float = 0.3,
                  duration: float, replications: int, seed: int, params: dict | None = None, links: int = 1):
    """The same link at flow level (``cclab.flowsim``) in bytes and seconds, so that the
    controllers' parameters (a 120 s period) mean what they mean at packet level.

    ``links = 2``: FAIRBAT's Fig. 4 instead, two links in a line, a web class on each
    (``web1``, ``web2``, load ``web_load`` each) and the background (and any long flows)
    across both."""
    from cclab import flowsim

    cap = LINK_BPS / 8
    if links == 1:
        classes = [flowsim.Short(load=web_load, mean_size=MEAN_BYTES, name=WEB)]
    else:
        classes = [flowsim.Short(load=web_load, mean_size=MEAN_BYTES, route=(i,), name=f"{WEB}{i + 1}")
                   for i in range(links)]
    path = tuple(range(links))
    if k:
        classes.append(flowsim.Long(count=int(k), route=path, name=LONG))
    classes.append(flowsim.Background(FLOW_POLICIES[policy], dict(params or {}), load=background_load,
                                      mean_size=MEAN_BYTES, route=path, name=BACKGROUND))
    return flowsim.Scenario(classes=classes, capacities=(cap,) * links, duration=duration, warmup=duration / 5,
                            replications=replications, seed=seed, threads=run_threads())


def run_flow(policies: Iterable[str], loads: Iterable[float], *, k: int = 0, duration: float, replications: int,
             seed: int, params: dict | None = None) -> pd.DataFrame:
    """Every (policy, background load) at flow level; one row per replication, with the
    columns of :func:`run_packet` (``seed`` is the replication; the replications of two
    policies draw the same arrivals)."""
    return run_flow_jobs([FlowJob(p, float(b), k=k, params=(params or {}).get(p)) for b in loads for p in policies],
                         duration=duration, replications=replications, seed=seed)


@dataclass(frozen=True)
class FlowJob:
    """One flow-level scenario (:func:`flow_scenario`'s arguments) and extra columns
    (``labels``) for its rows."""

    policy: str
    background_load: float
    k: int = 0
    web_load: float = 0.3
    links: int = 1
    params: dict | None = None
    labels: dict = field(default_factory=dict)


def run_flow_jobs(jobs: list[FlowJob], *, duration: float, replications: int, seed: int) -> pd.DataFrame:
    """Run flow-level jobs; one row per replication with the columns of
    :func:`run_packet_jobs`. The web delay pools the web classes (weighted by the
    flows each completed)."""
    from cclab import flowsim

    rows = []
    for j in jobs:
        res = flowsim.simulate(flow_scenario(j.policy, j.background_load, k=j.k, web_load=j.web_load, links=j.links,
                                             duration=duration, replications=replications, seed=seed,
                                             params=j.params))
        reps = res.replications
        web = reps[reps["class"].astype(str).str.fullmatch(WEB_CLASS.pattern)]
        bg = reps[reps["class"] == BACKGROUND].set_index("replication")
        for r, w in web.groupby("replication"):
            n = w["departures"].to_numpy(dtype=float)
            rows.append({"level": "flow", "policy": j.policy, "background_load": j.background_load, "k": j.k,
                         "seed": int(r), **j.labels,
                         "web_delay": float(np.sum(n * w["mean_delay"].to_numpy()) / np.sum(n)),
                         "web_delay_var": math.nan, "web_flows": int(w["arrivals"].sum()), "web_unfinished": 0,
                         "mean_active": bg.at[r, "mean_active"],
                         "mean_waiting": bg.at[r, "mean_number"] - bg.at[r, "mean_active"],
                         "bg_throughput_bps": 8 * bg.at[r, "throughput"],
                         "mean_limit": bg.at[r, "mean_limit"], "sd_limit": bg.at[r, "sd_limit"]})
    return pd.DataFrame(rows)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (level, policy, background_load, and ``variant`` if the runs have one): each
    run against the vanilla run of the same seed (improvement of the mean web delay in
    %, ratio of mean active chunks, ratio of the web delays' variances), then mean and
    95% half-width over seeds."""
    return summarize_by(runs)


def summarize_by(runs: pd.DataFrame, by: Iterable[str] = ()) -> pd.DataFrame:
    """:func:`summarize` with more columns (``by``, e.g. ``("web_load",)`` or ``("k",)``)
    that tell the grid's points apart: each run is paired with the vanilla run of the
    same level, background load, k, seed and ``by``."""
    out = []
    by = [c for c in by if c != "k"]
    keys = ["level", "background_load", "k", "seed", *by]
    runs = runs.assign(variant=runs["variant"].fillna("")) if "variant" in runs else runs.assign(variant="")
    base = runs[runs["policy"] == "vanilla"].drop_duplicates(keys).set_index(keys)
    for (lvl, p, b, k, *rest), g in runs.groupby(["level", "policy", "background_load", "k", *by, "variant"],
                                                  sort=False):
        var = rest[-1]
        v = base.loc[[tuple(x) for x in g[keys].to_numpy()]]
        imp = 100 * (1 - g["web_delay"].to_numpy() / v["web_delay"].to_numpy())
        ratio = g["mean_active"].to_numpy() / v["mean_active"].to_numpy()
        nvar = g["web_delay_var"].to_numpy() / v["web_delay_var"].to_numpy()
        row = {"level": lvl, "policy": p, "background_load": b, "k": int(k), **dict(zip(by, rest[:-1])),
               "seeds": len(g)}
        if var:
            row["variant"] = var
        for name, x in [("improvement_pct", imp), ("active_ratio", ratio), ("normalized_variance", nvar),
                        ("web_delay_s", g["web_delay"]), ("mean_active", g["mean_active"]),
                        ("mean_waiting", g["mean_waiting"]), ("mean_limit", g["mean_limit"]),
                        ("sd_limit", g["sd_limit"]),
                        ("bg_throughput_ratio", g["bg_throughput_bps"] / (b * LINK_BPS))]:
            row[name], row[name + "_ci"] = mean_ci(x)
        out.append(row)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------- shared by the entries

#: The lower-than-best-effort protocols FAIRBAT is compared with (Figs. 1, 2, 5, Table I).
LBES = ("ledbat", "ledbat_a", "tcp_lp")
FIG1_POLICIES = ("vanilla", "fairbat", *LBES)
#: Web load of the single-link experiments (§IV-A: web flows at 1/8 per second).
WEB_LOAD = 0.3
#: How far below zero an LBE's improvement may be, or how far above, to count as
#: "negligible" (Fig. 2, §IV-A: "others' LBE impact is negligible or even negative").
NEGLIGIBLE_PCT = 10.0
#: FAIRBAT must carry its chunks' load (§III, incentive compatibility): the smallest
#: carried/offered ratio (mean plus its 95% half-width over seeds) we accept. The
#: offered bytes of a 7,000 s window have a relative standard deviation of about 1.7%
#: over five seeds at ρ_b = 0.6 (exponential sizes: √(2/N) per seed).
CARRIED_MIN = 0.97
#: Flow level against Theorem 7: allowed shortfall of FAIRBAT's improvement in points
#: (the limit fluctuates, and the rate of M connections is concave in M; docs/protocols.md).
THEORY_TOLERANCE_PCT = 3.0


def theorem7_improvement(background_load, k: int, web_load: float = WEB_LOAD):
    """The web flows' delay improvement (%) of access control at the critical limit over
    vanilla, on one link: [BG] Theorem 7 with eq. (16) gives (k+M*+1)ρ/(1−ρ) web flows at
    M* = kρ_b/(1−ρ−ρ_b) (eq. 27), vanilla (k+1)ρ/(1−ρ−ρ_b) (multiclass processor
    sharing); their ratio is 1 − ρ_b/((k+1)(1−ρ)), the FAIRBAT paper's ρ_b/((1−ρ_s)(k+1))
    trend of Fig. 3. At k = 0 it is the limit M* → 0 (the web flows see no background)."""
    return 100.0 * np.asarray(background_load, dtype=float) / ((k + 1) * (1.0 - web_load))


def critical_limit(background_load, k, web_load: float = WEB_LOAD):
    """M* of [BG] eq. (27), ρ_b/(1−ρ) = M/(k+M): M* = kρ_b/(1−ρ−ρ_b)."""
    return np.asarray(k, dtype=float) * np.asarray(background_load, dtype=float) / (1 - web_load - np.asarray(
        background_load, dtype=float))


def _lookup(t: pd.DataFrame, keys: tuple[str, str], default: str = "improvement_pct"):
    """``val(a, b, col=default) -> (mean, 95% half-width)`` over the rows of ``t``
    indexed by the two ``keys``, and the sorted values of the second key."""
    idx = t.set_index(list(keys))

    def val(a, b, col=default):
        return idx.at[(a, b), col], idx.at[(a, b), col + "_ci"]

    return val, sorted(idx.index.get_level_values(-1).unique())


def _greater(a, b) -> str:
    """a > b for (mean, 95% half-width) pairs: "holds", "within CI" (the other sign but
    the intervals overlap) or "fails"."""
    if a[0] > b[0]:
        return "holds"
    return "within CI" if a[0] + (a[1] if np.isfinite(a[1]) else 0) >= b[0] - (b[1] if np.isfinite(b[1]) else 0) \
        else "fails"


def _all(verdicts: list[str]) -> str:
    return "fails" if "fails" in verdicts else ("holds" if all(v == "holds" for v in verdicts) else "within CI")


def _fmt(v) -> str:
    return f"{v[0]:.1f} ± {v[1]:.1f}"


def _claims_md(claims) -> str:
    return "| the paper says | ours | |\n|---|---|---|\n" + "\n".join(f"| {c} | {n} | {v} |" for c, n, v in claims)


#: How every FAIRBAT statement is judged (the verdicts' tolerance).
CLAIMS_TOLERANCE = ("an ordering fails only when the opposite is significant at the 95% CIs over seeds "
                    "(overlapping intervals count as 'within CI')")


def _claims_verdict(claims) -> tuple[str, bool]:
    held = sum(c[2] == "holds" for c in claims)
    failed = [c for c in claims if c[2] == "fails"]
    text = f"{held} of {len(claims)} statements hold" + (f", {len(failed)} fail" if failed else ", none contradicted")
    return text, not failed


def _level_table(s: pd.DataFrame, level: str, x: str = "background_load", theory: bool = False) -> str:
    """The rows of one level of a :func:`summarize_by` table (vanilla left out)."""
    g = s[(s["level"] == level) & (s["policy"] != "vanilla")]
    head = (f"| policy | {x} | improvement (%) |{' Theorem 7 (%) |' if theory else ''} active ratio | web delay (s) "
            f"| active chunks | mean limit | carried / offered |")
    rule = "|---" * (head.count("|") - 1) + "|"
    lines = []
    for r in g.itertuples():
        th = f" {theorem7_improvement(r.background_load, r.k):.1f} |" if theory else ""
        lim = "" if math.isnan(r.mean_limit) else f"{r.mean_limit:.2f}"
        lines.append(f"| {r.policy} | {getattr(r, x):g} | {r.improvement_pct:.1f} ± {r.improvement_pct_ci:.1f} |{th} "
                     f"{r.active_ratio:.2f} ± {r.active_ratio_ci:.2f} | {r.web_delay_s:.2f} | {r.mean_active:.2f} | "
                     f"{lim} | {r.bg_throughput_ratio:.3f} |")
    return "\n".join([head, rule, *lines])


_COLORS = {"fairbat": "k", "ledbat": "tab:blue", "ledbat_a": "tab:cyan", "tcp_lp": "tab:red",
           "low_priority": "tab:gray", "rate_tracking": "tab:green", "access": "tab:olive",
           "ledbat_60": "tab:purple", "vanilla": "tab:brown"}


def plot_lines(s: pd.DataFrame, x: str, xlabel: str, title: str, *, series: str = "policy",
               theory: dict | None = None, vline: tuple[float, str] | None = None):
    """Improvement (top) and active-chunk ratio (bottom) against ``x``; packet level solid
    with 95% intervals, flow level dashed; ``theory``: label -> (xs, ys) drawn dotted on
    the top panel; ``vline``: (x, label) marked on both."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(6.8, 7.6), sharex=True)
    for ax, col, lab in [(axes[0], "improvement_pct", "web delay improvement over vanilla (%)"),
                         (axes[1], "active_ratio", "active chunks / vanilla's")]:
        for (lvl, p), g in s[s["policy"] != "vanilla"].groupby(["level", series], sort=False):
            g = g.sort_values(x)
            ax.errorbar(g[x], g[col], yerr=g[col + "_ci"], color=_COLORS.get(p, None),
                        ls="-" if lvl == "packet" else "--", marker="o" if lvl == "packet" else "s", ms=4,
                        capsize=2, label=f"ours, {lvl} level: {p}")
        ax.set_ylabel(lab)
        ax.grid(alpha=0.3)
        if vline:
            ax.axvline(vline[0], color="r", lw=0.8, ls=":", label=vline[1] if ax is axes[0] else None)
    for i, (lab, (xs, ys)) in enumerate((theory or {}).items()):
        axes[0].plot(xs, ys, ls=":", color=f"C{i}", lw=1.5, label=lab)
    axes[1].axhline(1.0, color="k", lw=0.6)
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=6.5, ncol=2)
    axes[1].set_xlabel(xlabel)
    axes[0].set_title(title, fontsize=8)
    return fig


def plot_fig1(s: pd.DataFrame, title: str):
    """Improvement (top) and active-chunk ratio (bottom) against the background load;
    packet level solid with 95% intervals, flow level dashed."""
    return plot_lines(s, "background_load", "background load ρ_b (web load 0.3, no long flows)", title)


# --------------------------------------------------------------------------------------------- Fig. 1

FIG1_LOADS = (0.2, 0.3, 0.4, 0.5, 0.6)
FIG1_QUICK_LOADS = (0.2, 0.4, 0.6)


def fig1_claims(s: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-A and the captions of Fig. 1 checked against the packet-level
    rows of a :func:`summarize` table: (claim, our numbers, "holds" / "within CI" / "fails").

    A comparison holds when the difference has the paper's sign, is "within CI" when it
    has the other sign but the 95% intervals overlap, and fails otherwise.
    """
    val, loads = _lookup(s[s["level"] == "packet"], ("policy", "background_load"))
    lo, hi = loads[0], loads[-1]

    claims = []
    lbes = [p for p in ("fairbat", *LBES) if p in set(s["policy"])]
    worst = min((val(p, b) for p in lbes for b in loads), key=lambda v: v[0])
    claims.append(("every policy improves the web delay at every load (Fig. 1a caption)",
                   f"smallest improvement {_fmt(worst)}%", _greater(worst, (0.0, 0.0))))
    for p in ("fairbat", "ledbat"):
        claims.append((f"{p}: the improvement grows with the background load (Fig. 1a caption)",
                       f"{_fmt(val(p, lo))}% at {lo:g}, {_fmt(val(p, hi))}% at {hi:g}",
                       _greater(val(p, hi), val(p, lo))))
    for p in ("ledbat", "tcp_lp"):
        claims.append((f"{p} outperforms FAIRBAT at low load (§IV-A)",
                       f"{_fmt(val(p, lo))}% vs FAIRBAT {_fmt(val('fairbat', lo))}% at {lo:g}",
                       _greater(val(p, lo), val("fairbat", lo))))
    claims.append(("FAIRBAT outperforms TCP-LP at high load (§IV-A)",
                   f"{_fmt(val('fairbat', hi))}% vs {_fmt(val('tcp_lp', hi))}% at {hi:g}",
                   _greater(val("fairbat", hi), val("tcp_lp", hi))))
    led = [val("ledbat", b, "active_ratio") for b in loads]
    claims.append(("LEDBAT's active-chunk ratio increases strictly with the load (§IV-A, Fig. 1b)",
                   ", ".join(f"{r[0]:.2f}" for r in led),
                   _all([_greater(led[i + 1], led[i]) for i in range(len(loads) - 1)])))
    if 0.4 in loads:
        lp = {b: val("tcp_lp", b, "active_ratio") for b in loads}
        claims.append(("TCP-LP's active-chunk ratio rises up to ρ_b = 0.4 and falls beyond (§IV-A)",
                       ", ".join(f"{lp[b][0]:.2f}" for b in loads),
                       _all([_greater(lp[0.4], lp[lo]), _greater(lp[0.4], lp[hi])])))
    claims.append(("LEDBAT~a gains less than LEDBAT (§IV-A) ...",
                   f"{_fmt(val('ledbat_a', hi))}% vs {_fmt(val('ledbat', hi))}% at {hi:g}",
                   _greater(val("ledbat", hi), val("ledbat_a", hi))))
    claims.append(("... and accumulates fewer active chunks (§IV-A)",
                   f"ratio {val('ledbat_a', hi, 'active_ratio')[0]:.2f} vs {val('ledbat', hi, 'active_ratio')[0]:.2f}"
                   f" at {hi:g}", _greater(val("ledbat", hi, "active_ratio"), val("ledbat_a", hi, "active_ratio"))))
    return claims


def _packet_setup(ctx: Context) -> tuple[range, float, float]:
    """Seeds, run length and warm-up (s) of the single-link packet-level entries."""
    seeds = range(ctx.seed, ctx.seed + (5 if ctx.quick else 10))
    return seeds, *((10_000.0, 3_000.0) if ctx.quick else (60_000.0, 10_000.0))


def _flow_setup(ctx: Context) -> dict:
    return {"duration": 1e6 if ctx.quick else 1e7, "replications": 10 if ctx.quick else 20, "seed": ctx.seed}


@reproduction("fairbat-fig1", paper=PAPER, figure="Fig. 1 (a, b)",
              title="Web-delay improvement and active-chunk ratio, no long flows, web load 0.3",
              quick_size="packet 3 loads x 5 policies x 5 seeds x 10,000 s (3,000 s warm-up); flow 10 x 10^6 s",
              full_size="packet 5 loads x 5 policies x 10 seeds x 60,000 s (10,000 s warm-up); flow 20 x 10^7 s")
def fig1(ctx: Context) -> Outcome:
    """Fig. 1: FAIRBAT against LEDBAT, LEDBAT~a and TCP-LP on one link without long flows."""
    seeds, duration, warmup = _packet_setup(ctx)
    loads = FIG1_QUICK_LOADS if ctx.quick else FIG1_LOADS
    runs = run_packet(FIG1_POLICIES, loads, seeds, duration=duration, warmup=warmup, progress=ctx.progress)
    flow = run_flow(("vanilla", "fairbat", "low_priority"), loads, **_flow_setup(ctx))
    s = summarize(pd.concat([runs, flow], ignore_index=True))
    claims = fig1_claims(s)
    said, agrees = _claims_verdict(claims)
    pk = s[(s["level"] == "packet") & (s["policy"] == "fairbat")]
    both = s[s["policy"] == "fairbat"].pivot(index="background_load", columns="level", values="improvement_pct")
    gap = (both["packet"] - both["flow"]).abs().max()
    details = f"""
The paper prints no number for Fig. 1 (our copy has its captions and text, not the
plots), so the comparison is with its statements. Each statement is checked on the
packet-level means over {len(seeds)} seeds (95% intervals): it *holds* when the difference
has the paper's sign, is *within CI* when it has the other sign but the intervals
overlap, and *fails* when the opposite is significant. Tolerance: the entry agrees when
no statement fails.

{_claims_md(claims)}

Packet level (10 Mbps, 25 ms, 100-packet buffer, Reno; {duration:g} s per run, the first
{warmup:g} s discarded; each run paired with the vanilla run of the same seed, whose
arrivals are the same):

{_level_table(s, "packet")}

Flow level (`cclab.flowsim`, the same link in bytes and seconds; FAIRBAT with the same
controller and parameters; `low_priority` is the ideal lower-than-best-effort class,
which the flow model has in place of LEDBAT and TCP-LP):

{_level_table(s, "flow")}

FAIRBAT's improvement at the two levels differs by at most {gap:.1f} points: the same
controller, over processor sharing or over Reno flows.
"""
    verdict = (f"{said} at packet level; FAIRBAT improves the web delay by "
               f"{pk.improvement_pct.min():.0f}-{pk.improvement_pct.max():.0f}%")
    title = (f"Fig. 1: ours, packet level ({len(seeds)} seeds, 95% CI) solid, flow level dashed; "
             "paper: no printed values")
    return Outcome(s, plot_fig1(s, title), verdict, details, agrees,
                   tolerance=f"{CLAIMS_TOLERANCE}; 'negligible' as at most {NEGLIGIBLE_PCT:g}% (our reading); "
                             f"FAIRBAT must carry at least {CARRIED_MIN:g} of its offered load (mean + 95% "
                             "half-width; offered bytes vary ~1.7% over five seeds)")


# --------------------------------------------------------------------------------------------- Fig. 2 and Table I

#: Fig. 2 and Table I: three long-lived Reno flows beside the chunks (§IV-A).
FIG2_K = 3


@functools.lru_cache(maxsize=4)
def _fig2_runs_cached(quick: bool, seed: int, progress: bool) -> pd.DataFrame:
    ctx = Context(quick=quick, out=Path("."), seed=seed, progress=progress)
    seeds, duration, warmup = _packet_setup(ctx)
    loads = FIG1_QUICK_LOADS if quick else FIG1_LOADS
    runs = run_packet(FIG1_POLICIES, loads, seeds, k=FIG2_K, duration=duration, warmup=warmup, progress=progress)
    flow = run_flow(("vanilla", "fairbat", "rate_tracking"), loads, k=FIG2_K, **_flow_setup(ctx))
    return pd.concat([runs, flow], ignore_index=True)


def _fig2_runs(ctx: Context) -> pd.DataFrame:
    """The packet- and flow-level runs of Fig. 2, which Table I reads too: computed once
    per process, and kept in ``OUT/fairbat-k3-runs-{quick,full}-seedN.csv`` so that
    ``fairbat-table1`` after ``fairbat-fig2`` into the same folder reuses them (delete
    the file to run them again)."""
    path = ctx.out / f"fairbat-k3-runs-{'quick' if ctx.quick else 'full'}-seed{ctx.seed}.csv"
    if path.exists():
        return pd.read_csv(path)
    runs = _fig2_runs_cached(ctx.quick, ctx.seed, ctx.progress).copy()
    ctx.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(path, index=False)
    return runs


def fig2_claims(s: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-A on Fig. 2 (k = 3), checked on the packet-level rows, and
    the flow-level FAIRBAT against Theorem 7."""
    val, loads = _lookup(s[s["level"] == "packet"], ("policy", "background_load"))
    lo, hi = loads[0], loads[-1]

    claims = []
    fb = [val("fairbat", b) for b in loads]
    worst = min(fb, key=lambda v: v[0])
    claims.append(("FAIRBAT improves the web delay at every load (Fig. 2a: \"a clear gain\")",
                   f"smallest {_fmt(worst)}%", _greater(worst, (0.0, 0.0))))
    claims.append(("... especially at the higher loads (§IV-A)", f"{_fmt(fb[0])}% at {lo:g}, {_fmt(fb[-1])}% at {hi:g}",
                   _greater(fb[-1], fb[0])))
    carried = [val("fairbat", b, "bg_throughput_ratio") for b in loads]
    claims.append((f"FAIRBAT serves the arriving chunks (§III; carried/offered ≥ {CARRIED_MIN:g}, else its gain is "
                   "that of a growing queue)", ", ".join(f"{b:g}: {c[0]:.3f}" for b, c in zip(loads, carried)),
                   _all([_greater((c[0] + c[1], 0.0), (CARRIED_MIN, 0.0)) for c in carried])))
    for p in LBES:
        best = max((val(p, b) for b in loads), key=lambda v: v[0])
        claims.append((f"{p}: impact negligible or negative (below {NEGLIGIBLE_PCT:g}%; Fig. 2a caption)",
                       f"largest {_fmt(best)}%", _greater((NEGLIGIBLE_PCT, 0.0), best)))
    for p in LBES:
        claims.append((f"FAIRBAT beats {p} at the highest load (Fig. 2a)",
                       f"{_fmt(fb[-1])}% vs {_fmt(val(p, hi))}%", _greater(fb[-1], val(p, hi))))
    for p in LBES:
        r = val(p, hi, "active_ratio")
        claims.append((f"{p}'s chunks accumulate: more active than vanilla's (§IV-A)",
                       f"ratio {r[0]:.2f} ± {r[1]:.2f} at {hi:g}", _greater(r, (1.0, 0.0))))
    fl = s[(s["level"] == "flow") & (s["policy"] == "fairbat")]
    gaps = [(r.improvement_pct - theorem7_improvement(r.background_load, r.k), r.improvement_pct_ci)
            for r in fl.itertuples()]
    claims.append((f"flow level: FAIRBAT within {THEORY_TOLERANCE_PCT:g} points of Theorem 7 "
                   "(ρ_b/((k+1)(1−ρ)), [BG] eq. 16, 27)",
                   ", ".join(f"{g[0]:+.1f}" for g in gaps),
                   _all([_greater((g[0] + g[1], 0.0), (-THEORY_TOLERANCE_PCT, 0.0)) for g in gaps])))
    return claims


@reproduction("fairbat-fig2", paper=PAPER, figure="Fig. 2 (a, b)",
              title="Web-delay improvement and active-chunk ratio with three long-lived flows, web load 0.3",
              quick_size="packet 3 loads x 5 policies x 5 seeds x 10,000 s (3,000 s warm-up); flow 10 x 10^6 s",
              full_size="packet 5 loads x 5 policies x 10 seeds x 60,000 s (10,000 s warm-up); flow 20 x 10^7 s")
def fig2(ctx: Context) -> Outcome:
    """Fig. 2: FAIRBAT against the LBEs on one link beside k = 3 long-lived Reno flows."""
    runs = _fig2_runs(ctx)
    s = summarize(runs)
    claims = fig2_claims(s)
    said, agrees = _claims_verdict(claims)
    loads = sorted(s["background_load"].unique())
    fb = s[(s["level"] == "packet") & (s["policy"] == "fairbat")]
    n = runs[runs["level"] == "packet"]["seed"].nunique()
    details = f"""
The paper prints no number for Fig. 2; its statements (§IV-A, Fig. 2 caption) are
checked on the packet-level means over {n} seeds with 95% intervals (*holds*: the
paper's sign; *within CI*: the other sign inside the intervals; *fails*: the opposite is
significant). "Negligible" is ours: an improvement below {NEGLIGIBLE_PCT:g}%. The flow
level is checked against Theorem 7 of the background paper, whose improvement at the
critical limit is ρ_b/((k+1)(1−ρ)) (the trend of Fig. 3), with the tolerance of the
crate test (`fairbat_improves_web_delay_as_theorem_7_predicts`): at most
{THEORY_TOLERANCE_PCT:g} points below it. The entry agrees when no statement fails.

{_claims_md(claims)}

Packet level (three long-lived Reno flows on the link from the start):

{_level_table(s, "packet")}

Flow level (`cclab.flowsim`; ideal low priority is left out: beside long flows it never
sends and its backlog grows without bound):

{_level_table(s, "flow", theory=True)}

At ρ_b = 0.6 the packet-level link is at the edge of what Reno carries: web 0.3 and
chunks 0.6 of the link in payload leave 0.07 of the 9.73 Mbit/s of payload a 10 Mbit/s
link can carry in 1500-byte packets, and retransmissions and timeouts of 60-odd flows
through a 100-packet buffer take more. Vanilla keeps about 59 chunks active (the flow
model: 24). With a static limit (seed 1, 20,000 s) M = 25 carries 94% of the chunks' load
(the queue grows) and M = 50 carries 98.7% with the web delay of vanilla, so the critical
limit there is close to vanilla's active count and no limit can both serve the chunks
and help the web flows much. FAIRBAT's limit therefore keeps rising (about 50 after
40,000 s from m0 = 1); a run shorter than that measures it on the way, with a growing
queue: the improvement then is not that of a converged FAIRBAT, which the line
"FAIRBAT serves the arriving chunks" flags (docs/reproduction/fairbat.md).
"""
    verdict = (f"{said}; packet-level FAIRBAT {fb.improvement_pct.min():.0f} to {fb.improvement_pct.max():.0f}% "
               f"over ρ_b = {loads[0]:g}-{loads[-1]:g} (Theorem 7: "
               f"{float(theorem7_improvement(loads[0], FIG2_K)):.0f} to {float(theorem7_improvement(loads[-1], FIG2_K)):.0f}%)")
    xs = np.linspace(min(loads), max(loads), 50)
    fig = plot_lines(s, "background_load", "background load ρ_b (web load 0.3, k = 3 long-lived flows)",
                     f"Fig. 2: ours, packet level ({n} seeds, 95% CI) solid, flow level dashed; paper: no printed values",
                     theory={"Theorem 7 at M*: ρ_b/(4(1−ρ))": (xs, theorem7_improvement(xs, FIG2_K))})
    return Outcome(s, fig, verdict, details, agrees,
                   tolerance=f"{CLAIMS_TOLERANCE}; flow level at most {THEORY_TOLERANCE_PCT:g} points below "
                             "Theorem 7 (the limit fluctuates and the rate of M connections is concave in M); "
                             f"FAIRBAT carries at least {CARRIED_MIN:g} of its load")


#: Table I of the FAIRBAT paper: normalized sample variance of the web flows' delays
#: (each protocol's over vanilla's), per background load.
TABLE1: dict[str, tuple[float, ...]] = {
    "fairbat": (0.8314, 0.7173, 0.6278, 0.5763, 0.4679),
    "ledbat": (0.9900, 0.9706, 0.9637, 0.9407, 1.131),
    "tcp_lp": (0.9327, 0.9152, 0.9727, 1.0891, 1.443),
    "ledbat_a": (0.9574, 0.9672, 0.9728, 0.9728, 1.067),
}
#: How close a cell of ours must come to the paper's to count as reproduced.
TABLE1_TOLERANCE = 0.15


@reproduction("fairbat-table1", paper=PAPER, figure="Table I",
              title="Normalized sample variance of the web flows' delays, k = 3 long-lived flows",
              quick_size="the runs of fairbat-fig2 --quick (packet 3 loads x 5 policies x 5 seeds x 10,000 s)",
              full_size="the runs of fairbat-fig2 (packet 5 loads x 5 policies x 10 seeds x 60,000 s)")
def table1(ctx: Context) -> Outcome:
    """Table I: the variance of the web flows' delays under each policy over vanilla's."""
    runs = _fig2_runs(ctx)
    s = summarize(runs[runs["level"] == "packet"])
    s = s[s["policy"] != "vanilla"]
    paper = {(p, b): v for p, vals in TABLE1.items() for b, v in zip(FIG1_LOADS, vals)}
    t = s[["policy", "background_load", "normalized_variance", "normalized_variance_ci", "improvement_pct",
           "bg_throughput_ratio", "seeds"]].copy()
    t["paper"] = [paper.get((p, round(b, 2)), math.nan) for p, b in zip(t["policy"], t["background_load"])]
    t["within_tolerance"] = ((t["normalized_variance"] - t["paper"]).abs() <= TABLE1_TOLERANCE) | (
        (t["normalized_variance"] - t["paper"]).abs() <= t["normalized_variance_ci"])
    loads = sorted(t["background_load"].unique())
    val = _lookup(t, ("policy", "background_load"), "normalized_variance")[0]

    claims = []
    for b in loads:
        claims.append((f"FAIRBAT has the lowest normalized variance (ρ_b = {b:g})",
                       f"{val('fairbat', b)[0]:.3f} vs {', '.join(f'{p} {val(p, b)[0]:.3f}' for p in LBES)}",
                       _all([_greater(val(p, b), val("fairbat", b)) for p in LBES])))
    claims.append(("FAIRBAT's normalized variance falls as ρ_b grows",
                   f"{val('fairbat', loads[0])[0]:.3f} at {loads[0]:g}, {val('fairbat', loads[-1])[0]:.3f} at {loads[-1]:g}",
                   _greater(val("fairbat", loads[0]), val("fairbat", loads[-1]))))
    said, agrees = _claims_verdict(claims)
    cells = int(t["within_tolerance"].sum())
    table = "\n".join(
        f"| {r.policy} | {r.background_load:g} | {r.paper:.4f} | {r.normalized_variance:.3f} ± "
        f"{r.normalized_variance_ci:.3f} | {'yes' if r.within_tolerance else 'no'} | {r.improvement_pct:.1f} | "
        f"{r.bg_throughput_ratio:.3f} |" for r in t.itertuples())
    details = f"""
Table I's values are printed in the paper. The normalized variance is the sample
variance of the web flows' delays (flows that arrived after the warm-up and finished)
under each policy over vanilla's, in the same seed, averaged over {int(t["seeds"].max())} seeds
(95% intervals). Which scenario Table I belongs to is not said; it follows the paragraph
on Fig. 2 and its LBE values above 1 at ρ_b = 0.6 match Fig. 2's worse-than-TCP LBEs,
so we take k = 3 (the runs of `fairbat-fig2`). The flow model has no per-flow delays,
so there is no flow level here.

A cell is reproduced when ours is within {TABLE1_TOLERANCE:g} of the paper's or the paper's
value is inside our interval: {cells} of {len(t)}. The entry agrees when the paper's
orderings hold (no statement below fails). Where FAIRBAT carries less than its load
(carried / offered below {CARRIED_MIN:g}, see `fairbat-fig2`) its queue is still growing and
its variance is not that of a converged FAIRBAT.

{_claims_md(claims)}

| policy | ρ_b | paper | ours | reproduced | improvement of the mean (%) | carried / offered |
|---|---|---|---|---|---|---|
{table}
"""
    verdict = f"{said}; {cells} of {len(t)} cells within ±{TABLE1_TOLERANCE:g} of the paper's"
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.4))
    for p in ("fairbat", *LBES):
        g = t[t["policy"] == p].sort_values("background_load")
        ax.errorbar(g["background_load"], g["normalized_variance"], yerr=g["normalized_variance_ci"], marker="o",
                    ms=4, capsize=2, color=_COLORS[p], label=f"ours (packet level): {p}")
        ax.plot(FIG1_LOADS, TABLE1[p], ls=":", marker="x", color=_COLORS[p], label=f"paper: {p}")
    ax.axhline(1.0, color="k", lw=0.6)
    ax.set_xlabel("background load ρ_b (web load 0.3, k = 3)")
    ax.set_ylabel("variance of web delays / vanilla's")
    ax.legend(fontsize=6.5, ncol=2)
    ax.grid(alpha=0.3)
    ax.set_title(f"Table I: ours ({int(t['seeds'].max())} seeds, 95% CI) against the paper's (dotted)", fontsize=8)
    return Outcome(t.assign(level="packet").reset_index(drop=True), fig, verdict, details, agrees,
                   tolerance=f"{CLAIMS_TOLERANCE}; a cell within ±{TABLE1_TOLERANCE:g} of the paper's or the "
                             "paper's value inside our 95% CI (the paper gives no spread)")


# --------------------------------------------------------------------------------------------- Fig. 3

FIG3_K = (0, 1, 2, 3, 5)
FIG3_QUICK_K = (0, 1, 3)
FIG3_LOADS = (0.2, 0.4, 0.6)
FIG3_QUICK_LOADS = (0.2, 0.6)


@reproduction("fairbat-fig3", paper=PAPER, figure="Fig. 3",
              title="FAIRBAT's web-delay improvement against the number k of long-lived flows and ρ_b",
              quick_size="k 0, 1, 3 x ρ_b 0.2, 0.6: packet 2 policies x 5 seeds x 10,000 s; flow 10 x 10^6 s",
              full_size="k 0, 1, 2, 3, 5 x ρ_b 0.2, 0.4, 0.6: packet 2 policies x 10 seeds x 60,000 s; flow 20 x 10^7 s")
def fig3(ctx: Context) -> Outcome:
    """Fig. 3: FAIRBAT's improvement over vanilla beside ρ_b/((1−ρ_s)(k+1))."""
    seeds, duration, warmup = _packet_setup(ctx)
    ks = FIG3_QUICK_K if ctx.quick else FIG3_K
    loads = FIG3_QUICK_LOADS if ctx.quick else FIG3_LOADS
    jobs = [PacketJob(p, b, s, k=k, duration=duration, warmup=warmup)
            for k in ks for b in loads for p in ("vanilla", "fairbat") for s in seeds]
    runs = run_packet_jobs(jobs, progress=ctx.progress)
    flow = run_flow_jobs([FlowJob(p, b, k=k, params=par, labels=lab) for k in ks for b in loads
                          for p, par, lab in (("vanilla", None, {}), ("fairbat", None, {}),
                                              ("fairbat", {"fractional": "weight"}, {"variant": "weight"}))],
                         **_flow_setup(ctx))
    s = summarize_by(pd.concat([runs, flow], ignore_index=True), ("k",))
    s = s[s["policy"] == "fairbat"].reset_index(drop=True)
    s["variant"] = s["variant"].fillna("alternate") if "variant" in s else "alternate"
    s["theory_pct"] = theorem7_improvement(s["background_load"].to_numpy(), 0) / (s["k"].to_numpy() + 1)
    s["m_star"] = critical_limit(s["background_load"].to_numpy(), s["k"].to_numpy())
    val = _lookup(s[s["level"] == "packet"], ("k", "background_load"))[0]

    claims = []
    for b in loads:
        claims.append((f"the improvement falls as k grows (ρ_b = {b:g}; \"inversely proportional to k+1\")",
                       ", ".join(f"k={k}: {val(k, b)[0]:.1f}" for k in ks),
                       _all([_greater(val(ks[i], b), val(ks[i + 1], b)) for i in range(len(ks) - 1)])))
    for k in ks:
        claims.append((f"the improvement grows with ρ_b (k = {k}; \"proportional to ρ_b\")",
                       ", ".join(f"{b:g}: {val(k, b)[0]:.1f}" for b in loads),
                       _all([_greater(val(k, loads[i + 1]), val(k, loads[i])) for i in range(len(loads) - 1)])))
    carried = [(k, b, val(k, b, "bg_throughput_ratio")) for k in ks for b in loads]
    claims.append((f"packet level: FAIRBAT serves the arriving chunks (carried/offered ≥ {CARRIED_MIN:g}; §III)",
                   ", ".join(f"k={k}, {b:g}: {c[0]:.3f}" for k, b, c in carried),
                   _all([_greater((c[0] + c[1], 0.0), (CARRIED_MIN, 0.0)) for _, _, c in carried])))

    def theory_claim(g, what):
        gaps = g["improvement_pct"] - g["theory_pct"]
        return (f"flow level, {what}: within {THEORY_TOLERANCE_PCT:g} points below ρ_b/((1−ρ_s)(k+1))",
                f"{gaps.min():+.1f} to {gaps.max():+.1f} points over {len(g)} points",
                _all([_greater((x + h, 0.0), (-THEORY_TOLERANCE_PCT, 0.0))
                      for x, h in zip(gaps, g["improvement_pct_ci"])]))

    fl = s[s["level"] == "flow"]
    claims.append(theory_claim(fl[fl["variant"] == "weight"], "the fluid limit (`fractional = \"weight\"`, wTCP)"))
    alt = fl[(fl["variant"] == "alternate") & (fl["m_star"] >= 1)]
    claims.append(theory_claim(alt, "floor/ceiling alternation where M* ≥ 1"))
    gaps = fl["improvement_pct"] - fl["theory_pct"]
    said, agrees = _claims_verdict(claims)
    pk = s[s["level"] == "packet"]
    ratio = (pk["improvement_pct"] / pk["theory_pct"])
    table = "\n".join(
        f"| {r.level} | {r.variant} | {r.k} | {r.background_load:g} | {r.m_star:.2f} | {r.theory_pct:.1f} | "
        f"{r.improvement_pct:.1f} ± {r.improvement_pct_ci:.1f} | {r.mean_limit:.2f} | {r.mean_active:.2f} | "
        f"{r.bg_throughput_ratio:.3f} |" for r in s.sort_values(["level", "variant", "background_load", "k"]).itertuples())
    n = len(seeds)
    details = f"""
The paper's Fig. 3 has no printed values; its text says FAIRBAT's improvement is
proportional to ρ_b and inversely proportional to k+1. The issue asks for it beside
ρ_b/((1−ρ_s)(k+1)), which is exactly the background paper's Theorem 7 at the critical
limit: (k+M*+1)ρ/(1−ρ) web flows against vanilla's (k+1)ρ/(1−ρ−ρ_b), with
M* = kρ_b/(1−ρ−ρ_b), give 1 − ρ_b/((k+1)(1−ρ)) (at k = 0 the limit M* → 0).

Web load ρ_s = 0.3; packet level {n} seeds × {duration:g} s ({warmup:g} s warm-up), flow
level {_flow_setup(ctx)["replications"]} replications; improvement over vanilla paired by
seed, 95% intervals. Tolerances: the orderings must not fail at packet level, where
FAIRBAT must also carry its load (else its gain is that of a growing queue); the flow
level must come within {THEORY_TOLERANCE_PCT:g} points below the formula. Theorem 7 holds for
a CBF that behaves as wTCP with weight M*: the flow model's fluid realisation
(`fractional = "weight"`) is checked at every point; the floor/ceiling alternation
FAIRBAT prescribes (§III) only where M* ≥ 1. Below one connection the alternation
switches between no chunk and one full TCP flow, a policy mixture, which is worse than
wTCP of the same mean ([BG] Proposition 2, Jensen's inequality on the convex N); at k = 0
eq. (27) has no solution (M* → 0) and the formula is the limit the fluid realisation
approaches. Packet level over the formula: {ratio.min():.2f} to {ratio.max():.2f}.

{_claims_md(claims)}

| level | realisation | k | ρ_b | M* (eq. 27) | ρ_b/((1−ρ_s)(k+1)) (%) | FAIRBAT (%) | mean limit | active chunks | carried / offered |
|---|---|---|---|---|---|---|---|---|---|
{table}
"""
    wg = (fl["improvement_pct"] - fl["theory_pct"])[fl["variant"] == "weight"]
    verdict = (f"{said}; packet level {ratio.min():.2f}-{ratio.max():.2f} × ρ_b/((1−ρ_s)(k+1)), flow level "
               f"{gaps.min():+.1f} to {gaps.max():+.1f} points from it ({wg.min():+.1f} to {wg.max():+.1f} with the "
               "fluid realisation)")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.8))
    kk = np.linspace(0, max(ks), 60)
    for i, b in enumerate(loads):
        for lvl, var, ls, mk in (("packet", "alternate", "-", "o"), ("flow", "alternate", "--", "s"),
                                 ("flow", "weight", "-.", "^")):
            g = s[(s["level"] == lvl) & (s["variant"] == var) & (s["background_load"] == b)].sort_values("k")
            ax.errorbar(g["k"], g["improvement_pct"], yerr=g["improvement_pct_ci"], color=f"C{i}", ls=ls, marker=mk,
                        ms=4, capsize=2, label=f"ours, {lvl} level{', weight' if var == 'weight' else ''}, ρ_b = {b:g}")
        ax.plot(kk, theorem7_improvement(b, 0) / (kk + 1), color=f"C{i}", ls=":", lw=1.5,
                label=f"ρ_b/((1−ρ_s)(k+1)), ρ_b = {b:g}")
    ax.set_xlabel("long-lived flows k (web load ρ_s = 0.3)")
    ax.set_ylabel("FAIRBAT's web delay improvement over vanilla (%)")
    ax.legend(fontsize=6.5, ncol=2)
    ax.grid(alpha=0.3)
    ax.set_title(f"Fig. 3: ours ({n} seeds, 95% CI) beside the trend; paper: no printed values", fontsize=8)
    return Outcome(s, fig, verdict, details, agrees,
                   tolerance=f"{CLAIMS_TOLERANCE}; flow level at most {THEORY_TOLERANCE_PCT:g} points below "
                             "ρ_b/((1−ρ_s)(k+1)) (Theorem 7; the limit fluctuates)")


# --------------------------------------------------------------------------------------------- Fig. 5

FIG5_BACKGROUND = 0.2
FIG5_LOADS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.7)
FIG5_QUICK_LOADS = (0.3, 0.55, 0.7)
#: Eq. (1): an ideal low-priority background across both links is stable while
#: ρ_b ≤ (1−ρ_s)², i.e. up to ρ_s = 1 − √ρ_b (0.553 for ρ_b = 0.2; the paper says 0.552).
FIG5_UNSTABLE = 1 - math.sqrt(FIG5_BACKGROUND)
#: Flow level: how close the ideal LBE's carried fraction must come to min(1, (1−ρ_s)²/ρ_b).
FIG5_CARRIED_TOLERANCE = 0.03


def _fig5_setup(ctx: Context) -> tuple[range, float, float, dict]:
    """Seeds, run length and warm-up (s) at packet level and the flow-level sizes of Fig. 5."""
    seeds = range(ctx.seed, ctx.seed + (5 if ctx.quick else 10))
    flow = {"duration": 2e5 if ctx.quick else 2e6, "replications": 10 if ctx.quick else 20, "seed": ctx.seed}
    return seeds, *((10_000.0, 4_000.0) if ctx.quick else (40_000.0, 10_000.0)), flow


@reproduction("fairbat-fig5", paper=PAPER, figure="Fig. 5 (a, b)",
              title="Two links, background 0.2 across both, web load 0.3-0.7 on each",
              quick_size="web loads 0.3, 0.55, 0.7: packet 5 policies x 5 seeds x 10,000 s (4,000 s warm-up); "
                         "flow 10 x 2x10^5 s",
              full_size="web loads 0.3, 0.4, 0.5, 0.55, 0.6, 0.7: packet 5 policies x 10 seeds x 40,000 s "
                        "(10,000 s warm-up); flow 20 x 2x10^6 s")
def fig5(ctx: Context) -> Outcome:
    """Fig. 5: FAIRBAT and the LBEs over two links, below and beyond eq. (1)'s stability limit."""
    seeds, duration, warmup, flow = _fig5_setup(ctx)
    loads = FIG5_QUICK_LOADS if ctx.quick else FIG5_LOADS
    jobs = [PacketJob(p, FIG5_BACKGROUND, s, duration=duration, warmup=warmup,
                      kw={"web_load": w, "base": "fairbat/two-links.toml"}, labels={"web_load": w})
            for w in loads for p in FIG1_POLICIES for s in seeds]
    runs = run_packet_jobs(jobs, progress=ctx.progress)
    flow = run_flow_jobs([FlowJob(p, FIG5_BACKGROUND, web_load=w, links=2, labels={"web_load": w})
                          for w in loads for p in ("vanilla", "fairbat", "low_priority")],
                         **flow)
    s = summarize_by(pd.concat([runs, flow], ignore_index=True), ("web_load",))
    val = _lookup(s[s["level"] == "packet"], ("policy", "web_load"))[0]
    lo, hi = loads[0], loads[-1]
    stable = [w for w in loads if w <= FIG5_UNSTABLE]

    fb = [val("fairbat", w) for w in loads]
    claims = [("FAIRBAT improves the web delay at every web load (Fig. 5a)",
               f"smallest {_fmt(min(fb, key=lambda v: v[0]))}%", _greater(min(fb, key=lambda v: v[0]), (0.0, 0.0))),
              ("... increasingly over the whole range (Fig. 5a caption)", ", ".join(f"{v[0]:.1f}" for v in fb),
               _all([_greater(fb[i + 1], fb[i]) for i in range(len(fb) - 1)]))]
    carried = [val("fairbat", w, "bg_throughput_ratio") for w in loads]
    claims.append((f"FAIRBAT serves the arriving chunks (carried/offered ≥ {CARRIED_MIN:g}; §III)",
                   ", ".join(f"{w:g}: {c[0]:.3f}" for w, c in zip(loads, carried)),
                   _all([_greater((c[0] + c[1], 0.0), (CARRIED_MIN, 0.0)) for c in carried])))
    for p in LBES:
        best = max((val(p, w) for w in stable), key=lambda v: v[0])
        claims.append((f"{p} deteriorates beyond ρ_s = {FIG5_UNSTABLE:.3f} (Fig. 5a caption)",
                       f"{_fmt(val(p, hi))}% at {hi:g}, best {_fmt(best)}% at ρ_s ≤ {FIG5_UNSTABLE:.2f}",
                       _greater(best, val(p, hi))))
        claims.append((f"FAIRBAT outperforms {p} at high web load (§IV-B)", f"{_fmt(fb[-1])}% vs {_fmt(val(p, hi))}%",
                       _greater(fb[-1], val(p, hi))))
        peak = max((val(p, w, "active_ratio") for w in stable), key=lambda v: v[0])
        claims.append((f"{p}'s active-chunk ratio falls beyond it: \"they tend to accumulate less compared to TCP\" "
                       "(§IV-B, Fig. 5b)", f"{val(p, hi, 'active_ratio')[0]:.2f} at {hi:g}, peak {peak[0]:.2f} at "
                       f"ρ_s ≤ {FIG5_UNSTABLE:.2f}", _greater(peak, val(p, hi, "active_ratio"))))
    fl = s[s["level"] == "flow"].set_index(["policy", "web_load"])
    lp = [(w, fl.at[("low_priority", w), "bg_throughput_ratio"], min(1.0, (1 - w) ** 2 / FIG5_BACKGROUND))
          for w in loads]
    claims.append((f"flow level: an ideal LBE carries min(ρ_b, (1−ρ_s)²) (eq. 1), within {FIG5_CARRIED_TOLERANCE:g}",
                   ", ".join(f"{w:g}: {c:.3f} (eq. 1: {e:.3f})" for w, c, e in lp),
                   "holds" if all(abs(c - e) <= FIG5_CARRIED_TOLERANCE for _, c, e in lp) else "fails"))
    fc = [fl.at[("fairbat", w), "bg_throughput_ratio"] for w in loads]
    claims.append(("flow level: FAIRBAT carries the background load at every web load (≥ 0.97 of it)",
                   ", ".join(f"{c:.3f}" for c in fc), "holds" if min(fc) >= 0.97 else "fails"))
    said, agrees = _claims_verdict(claims)
    n = len(seeds)
    details = f"""
The paper prints no number for Fig. 5; it says the LBEs improve the web delay while
eq. (1) holds and deteriorate, "reaching even negative levels", beyond ρ_s = 0.552
(1 − √0.2 = {FIG5_UNSTABLE:.4f}), while FAIRBAT's improvement grows over the whole
range. Web load ρ_s on each link, background 0.2 across both (`scenarios/fairbat/two-links.toml`);
the web delay pools both links' web flows (the paper: "the impact on each individual
stream is almost equal"). Packet level {n} seeds × {duration:g} s ({warmup:g} s warm-up);
statements checked as in `fairbat-fig1` (*holds*, *within CI*, *fails*); the entry agrees
when none fails. At flow level the ideal low-priority class sends only while neither
link has a web flow, a fraction (1−ρ_s)² of the time, which is eq. (1) in closed form.

{_claims_md(claims)}

Packet level:

{_level_table(s, "packet", x="web_load")}

Flow level:

{_level_table(s, "flow", x="web_load")}
"""
    verdict = (f"{said}; FAIRBAT {fb[0][0]:.0f}% at ρ_s = {lo:g} to {fb[-1][0]:.0f}% at {hi:g}; at {hi:g} the LBEs "
               + ", ".join(f"{p} {val(p, hi)[0]:.0f}%" for p in LBES))
    fig = plot_lines(s, "web_load", "web load ρ_s on each link (background 0.2 across both)",
                     f"Fig. 5: ours, packet level ({n} seeds, 95% CI) solid, flow level dashed; paper: no printed values",
                     vline=(FIG5_UNSTABLE, f"eq. (1): ρ_s = 1 − √0.2 = {FIG5_UNSTABLE:.3f}"))
    return Outcome(s, fig, verdict, details, agrees,
                   tolerance=f"{CLAIMS_TOLERANCE}; the ideal LBE's carried fraction within "
                             f"{FIG5_CARRIED_TOLERANCE:g} of min(1, (1−ρ_s)²/ρ_b) (eq. 1) at flow level")


# --------------------------------------------------------------------------------------------- sensitivity

#: Values tried for each parameter the papers leave unstated (one at a time, the others
#: at their defaults in ``cclab-control``).
SENSITIVITY: dict[str, list[tuple[str, tuple]]] = {
    "fairbat": [("period", (60.0, 240.0)), ("tau", (50.0, 300.0)), ("gain_start", (0.001, 0.01)),
                ("gain_end", (1e-5, 1e-3)), ("trend", (0.0, 0.01, 0.1)), ("measure", ("sample",))],
    "rate_tracking": [("period", (60.0, 240.0)), ("ewma", (0.02, 0.2)), ("step", (0.1, 1.0))],
}
#: The packet-level subset (FAIRBAT only; each variant costs a set of packet runs).
SENSITIVITY_PACKET = [("period", (60.0, 240.0)), ("tau", (50.0, 200.0)), ("gain_start", (0.001, 0.01)),
                      ("trend", (0.0, 0.1))]


def _variants(space):
    yield "default", None, {}
    for key, values in space:
        for v in values:
            yield key, v, {key: (f"{v:g}s" if key == "period" and isinstance(v, float) else v)}


def sensitivity_runs(quick: bool = True, seed: int = 1, progress: bool = False) -> pd.DataFrame:
    """The runs behind ``fairbat-sensitivity``: flow level at k = 3, ρ_b = 0.6 (the case of
    the FAIRBAT overshoot, Theorem 7's improvement 21.4%) for FAIRBAT and rate tracking,
    and packet level at k = 0, ρ_b = 0.6 for FAIRBAT; one parameter varied at a time."""
    frames = []
    reps, dur = (8, 1e6) if quick else (16, 4e6)
    frames.append(run_flow(("vanilla",), (0.6,), k=3, duration=dur, replications=reps, seed=seed))
    for policy, space in SENSITIVITY.items():
        for key, v, change in _variants(space):
            if key == "period":
                change = {"period": float(v)}
            f = run_flow((policy,), (0.6,), k=3, duration=dur, replications=reps, seed=seed, params={policy: change})
            frames.append(f.assign(variant=f"{key}={v:g}" if isinstance(v, float) else f"{key}={v}" if v else key))
    seeds = range(seed, seed + (3 if quick else 6))
    duration, warmup = (20_000.0, 5_000.0) if quick else (60_000.0, 10_000.0)
    frames.append(run_packet(("vanilla",), (0.6,), seeds, duration=duration, warmup=warmup, progress=progress))
    for key, v, change in _variants(SENSITIVITY_PACKET):
        f = run_packet(("fairbat",), (0.6,), seeds, duration=duration, warmup=warmup, access=change, progress=progress)
        frames.append(f.assign(variant=f"{key}={v:g}" if v is not None else key))
    return pd.concat(frames, ignore_index=True)


@reproduction("fairbat-sensitivity", paper=PAPER, figure="§III (eq. 2) and the background paper's §IV",
              title="Sensitivity of the access controllers to the constants the papers leave unstated",
              quick_size="flow 8 x 10^6 s per variant; packet 3 seeds x 20,000 s per variant",
              full_size="flow 16 x 4x10^6 s; packet 6 seeds x 60,000 s")
def sensitivity(ctx: Context) -> Outcome:
    """Web-delay improvement and limit of FAIRBAT and rate tracking, one constant at a time."""
    s = summarize(sensitivity_runs(ctx.quick, ctx.seed, ctx.progress))
    s = s[s["policy"] != "vanilla"].reset_index(drop=True)
    theory = 100 * (1 - (3 + 18 + 1) * 0.3 / 0.7 / 12.0)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    for ax, (lvl, title) in zip(axes, [("flow", f"flow level, k = 3, ρ_b = 0.6 (Theorem 7: {theory:.1f}%)"),
                                       ("packet", "packet level, k = 0, ρ_b = 0.6")]):
        g = s[s["level"] == lvl]
        labels = [f"{p}: {v}" for p, v in zip(g["policy"], g["variant"])]
        y = np.arange(len(g))
        ax.errorbar(g["improvement_pct"], y, xerr=g["improvement_pct_ci"], fmt="o", ms=4, capsize=2)
        ax.set_yticks(y, labels, fontsize=6.5)
        ax.invert_yaxis()
        if lvl == "flow":
            ax.axvline(theory, color="r", ls="--", lw=0.8, label="Theorem 7 at M* = 18")
            ax.legend(fontsize=7)
        ax.set_xlabel("web delay improvement over vanilla (%)")
        ax.set_title(title, fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()

    def table(lvl):
        g = s[s["level"] == lvl]
        return "\n".join(f"| {r.policy} | {r.variant} | {r.improvement_pct:.1f} ± {r.improvement_pct_ci:.1f} | "
                         f"{r.web_delay_s:.2f} ± {r.web_delay_s_ci:.2f} | {r.mean_limit:.2f} | {r.sd_limit:.2f} | "
                         f"{r.mean_waiting:.0f} | {r.bg_throughput_ratio:.3f} |" for r in g.itertuples())
    head = ("| policy | variant | improvement (%) | web delay (s) | mean limit | sd of limit | waiting | carried / offered |"
            "\n|---|---|---|---|---|---|---|---|")
    details = f"""
One constant at a time, the others at the defaults of `cclab-control` (docs/protocols.md,
"Access control"). Improvement: the web flows' mean delay against vanilla (every chunk a
Reno flow at once), paired by seed; 95% intervals.

Flow level, k = 3 long flows, web load 0.3, background 0.6 (the critical limit of eq. 27 is
M* = 18 and Theorem 7 gives {theory:.1f}%):

{head}
{table("flow")}

Packet level, k = 0, web load 0.3, background 0.6 (FAIRBAT):

{head}
{table("packet")}
"""
    fl = s[(s["level"] == "flow") & (s["policy"] == "fairbat")].set_index("variant")
    verdict = (f"flow level k = 3: FAIRBAT {fl.at['default', 'improvement_pct']:.1f}% with the defaults, "
               f"{fl.at['trend=0', 'improvement_pct']:.1f}% with eq. 2 as printed (trend = 0); theory {theory:.1f}%")
    return Outcome(s, fig, verdict, details, None)
