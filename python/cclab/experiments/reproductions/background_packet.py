"""Packet-level reproductions of the background-transfer paper's simulations (§IV).

Paper: Courcoubetis, Dimakis, Kanakakis, "Congestion Control for Background Data
Transfers with Minimal Delay Impact" (``shared/papers/background-transfers-minimal-delay.md``),
§IV: ns-2, Reno, every link 10 Mbps with a 25 ms propagation delay and an 80 ms
buffer, Poisson arrivals, exponential sizes of mean 3 MB. A server's background
micro-flows (chunks) go out under one of the policies of
:data:`cclab.experiments.reproductions.fairbat.PACKET_POLICIES`; the paper's "access
control" is the adaptive limit of §IV, ``rate_tracking`` here.

* ``background-packet-fig5``: one link, ρ_b = 0.3, k = 0 and 1 long flows; the short
  flows' delay and the active micro-flows against the short load ρ, each over 'vanilla'.
* ``background-packet-fig6``: k = 1, ρ = 0.2 and 0.6; delay against the short flow's
  size (100 bins of 50 kB), over vanilla's in the same bin.
* ``background-packet-fig7``: two links, ρ_b = 0.3 across both, short flows of load ρ
  on each, k = 0.
* ``background-packet-fig9``: three links, routes 1, 123, 2, 23 (Fig. 8), ρ1 = 0.3, 0.5.

Every run is paired with the vanilla run of the same seed (same arrivals and sizes:
each class draws from its own streams), the ratios are averaged over seeds with 95%
Student intervals, and the flow-level model (``cclab.flowsim``: vanilla, rate
tracking and the ideal low-priority class in place of LEDBAT and TCP-LP) runs beside.
Our copy of the paper has the figures' captions and text but not their images, so the
paper's values are the statements and the few numbers of its text; each entry checks
them (:func:`check`).
"""
from __future__ import annotations

import copy
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ..catalogue import Context, Outcome, reproduction
from ...plotting import pyplot
from ...scenario import load_scenario
from ...stats import mean_ci
from . import fairbat as fb

PAPER = "background-transfers-minimal-delay"

#: The policies of §IV at packet level (Fig. 6 omits LEDBAT-60, as the paper does).
POLICIES = ("vanilla", "rate_tracking", "ledbat", "ledbat_60", "tcp_lp")
LBES = ("ledbat", "ledbat_60", "tcp_lp")
#: The flow-level model's policies (``low_priority``: the ideal lower-than-best-effort class).
FLOW_POLICIES = ("vanilla", "rate_tracking", "low_priority")
RHO_B = 0.3
#: Payload share of the wire in the scenarios (1460-byte segments, 40 bytes of headers).
PAYLOAD = 1460 / 1500
#: Width and number of Fig. 6's size bins (bytes).
BIN_BYTES, BINS = 50_000, 100
#: Short flows arriving in the last DRAIN seconds (at most a quarter of the measured
#: time) are not measured: they might not finish.
DRAIN = 1000.0

COLORS = {"vanilla": "tab:brown", "rate_tracking": "k", "access": "tab:olive", "fairbat": "tab:gray",
          "ledbat": "tab:blue", "ledbat_60": "tab:purple", "ledbat_a": "tab:cyan", "tcp_lp": "tab:red",
          "low_priority": "tab:green"}


# ----------------------------------------------------------------------------------- set-up


@dataclass(frozen=True)
class Setup:
    """One figure's network: its scenario file, which classes are short ('web') flows,
    which are background servers, and how the x-axis value sets the loads."""

    base: str
    web: tuple[str, ...]
    background: tuple[str, ...]
    loads: Callable[[float], dict[str, float]]
    k: int = 0
    links: int = 1
    #: flow level: (name, route, load) of each short and background class, for an x value
    routes: dict[str, tuple[int, ...]] = field(default_factory=dict)


def single_link(k: int) -> Setup:
    return Setup("background/fig5-single-link.toml", ("web",), ("background",),
                 lambda rho: {"web": rho, "background": RHO_B}, k=k, links=1,
                 routes={"web": (0,), "background": (0,)})


TWO_LINKS = Setup("background/fig7-two-links.toml", ("web_1", "web_2"), ("background",),
                  lambda rho: {"web_1": rho, "web_2": rho, "background": RHO_B}, links=2,
                  routes={"web_1": (0,), "web_2": (1,), "background": (0, 1)})

#: Fig. 8: loads of the CBFs (and of the short flows beside them) on routes 123, 2, 23.
FIG9_LOADS = {"123": 0.2, "2": 0.1, "23": 0.1}
THREE_LINKS = Setup(
    "background/fig9-three-links.toml", ("web_1", "web_123", "web_2", "web_23"),
    ("background_123", "background_2", "background_23"),
    lambda rho1: {"web_1": rho1, **{f"{c}_{r}": v for r, v in FIG9_LOADS.items() for c in ("web", "background")}},
    links=3, routes={"web_1": (0,), "web_123": (0, 1, 2), "web_2": (1,), "web_23": (1, 2),
                     "background_123": (0, 1, 2), "background_2": (1,), "background_23": (1, 2)})


def packet_scenario(setup: Setup, policy: str, x: float, *, duration: float, warmup: float,
                    m0: dict[str, float] | None = None) -> dict:
    """The setup's scenario file with every background class under ``policy``
    (the keys of :data:`fairbat.PACKET_POLICIES`), the loads of x, and k long Reno
    flows on the first short class's path. ``m0``: the first limit of each background
    class under an adaptive access policy (by class name; absent: cclab-control's 1)."""
    if policy not in fb.PACKET_POLICIES:
        raise ValueError(f"policy: expected one of {list(fb.PACKET_POLICIES)}, got {policy!r}")
    sc, _ = load_scenario(fb.scenario_path(setup.base))
    classes = {c["name"]: c for c in sc["traffic"]}
    for name, load in setup.loads(x).items():
        if name not in classes:
            raise ValueError(f"{setup.base}: no class {name!r} (classes: {list(classes)})")
        classes[name]["load"] = float(load)
    for name in setup.background:
        bg = classes[name]
        bg.pop("access", None)
        bg.pop("cc", None)
        bg.update(copy.deepcopy(fb.PACKET_POLICIES[policy]))
        if m0 and name in m0 and bg.get("access", {}).get("policy") in ("rate_tracking", "fairbat"):
            bg["access"]["m0"] = float(m0[name])
    if setup.k:
        web = classes[setup.web[0]]
        sc["traffic"].append({"name": fb.LONG, "type": "long_lived", "src": web["src"], "dst": web["dst"],
                              "protocol": "reno", "count": int(setup.k)})
    sc["duration"] = f"{duration:g}s"
    sc["warmup"] = f"{warmup:g}s"
    sc["record"] = {"interval": "0s"}
    return sc


# ----------------------------------------------------------------------------------- one run


def time_average(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> float:
    """Time-average number of intervals [a, b) over [lo, hi] (NaN ends: still open at hi)."""
    a = np.clip(np.nan_to_num(a, nan=hi), lo, hi)
    b = np.clip(np.nan_to_num(b, nan=hi), lo, hi)
    return float(np.sum(np.maximum(b - a, 0.0)) / (hi - lo))


def run_metrics(result, setup: Setup, x: float, warmup: float, end: float, bins: bool = False) -> list[dict]:
    """One row per short class ('class' = its name) and one for all the short flows
    together ('all'): the mean delay of the short flows arriving in [warm-up, end − DRAIN]
    (``unfinished`` of them had not finished at the end and are left out), and the
    time-average active and waiting micro-flows of all background classes over
    [warm-up, end], the background's throughput over its offered load (``carried``) and
    the mean of its limit (``mean_limit``, NaN without access control). With ``bins``,
    also the per-bin delay sums and counts of Fig. 6."""
    flows, summ = result.flows, result.summary
    loads = setup.loads(x)
    carried = (sum(float(summ[f"{n}.throughput_bps"]) for n in setup.background)
               / sum(loads[n] * fb.LINK_BPS for n in setup.background))
    limits = [float(summ.get(f"{n}.access_mean_limit", math.nan)) for n in setup.background]
    bg = flows[flows["class"].isin(setup.background)]
    active = time_average(bg["start"].to_numpy(), bg["finish"].to_numpy(), warmup, end)
    waiting = time_average(bg["arrival"].to_numpy(), bg["start"].to_numpy(), warmup, end)
    rows = []
    measured = flows[(flows["arrival"] >= warmup) & (flows["arrival"] < end - min(DRAIN, (end - warmup) / 4))]
    for name in (*setup.web, "all"):
        w = measured[measured["class"].isin(setup.web if name == "all" else (name,))]
        done = w[w["finished"]]
        d = done["completion_time"].to_numpy()
        row = {"class": name, "delay": float(d.mean()) if len(d) else math.nan, "flows": int(len(d)),
               "unfinished": int(len(w) - len(d)), "mean_active": active, "mean_waiting": waiting,
               "carried": carried, "mean_limit": float(np.mean(limits))}
        if bins:
            idx = (done["size"].to_numpy() // BIN_BYTES).astype(int)
            keep = idx < BINS
            row["bin_sum"] = np.bincount(idx[keep], weights=d[keep], minlength=BINS)
            row["bin_count"] = np.bincount(idx[keep], minlength=BINS)
        rows.append(row)
    return rows


def run_packet(setup: Setup, policies: Iterable[str], xs: Iterable[float], seeds: Iterable[int], *,
               duration: float, warmup: float, bins: bool = False, progress: bool = False,
               m0: dict[tuple[float, str], float] | None = None) -> pd.DataFrame:
    """Every (policy, x, seed) at packet level on up to two threads; the rows of
    :func:`run_metrics` with level, policy, x, k and seed. ``m0``: the first limit of
    each background class by (x, class), e.g. :func:`warm_start` of a flow-level run."""
    from ...api import run

    jobs = [(p, float(x), int(s)) for x in xs for p in policies for s in seeds]

    def one(job):
        p, x, s = job
        first = {n: m0[(x, n)] for n in setup.background if (x, n) in m0} if m0 else None
        r = run(packet_scenario(setup, p, x, duration=duration, warmup=warmup, m0=first), seed=s)
        return [{"level": "packet", "policy": p, "x": x, "k": setup.k, "seed": s, **m}
                for m in run_metrics(r, setup, x, warmup, duration, bins)]

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), unit="run", desc="packet level", leave=False)
    rows = []
    with ThreadPoolExecutor(fb.run_threads()) as pool:
        for r in pool.map(one, jobs):
            rows.extend(r)
            if bar is not None:
                bar.update()
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows)


def run_flow(setup: Setup, policies: Iterable[str], xs: Iterable[float], *, duration: float,
             replications: int, seed: int) -> pd.DataFrame:
    """The same network in ``cclab.flowsim`` (bytes and seconds, so the controllers'
    120 s period means what it means at packet level); rows as :func:`run_packet`'s,
    ``seed`` the replication (two policies' replications draw the same arrivals). The
    links carry payload: 10 Mbps less the headers (:data:`PAYLOAD`), the arrival rates
    are the packet level's, so a load of 0.95 is 0.976 of the flow-level capacity."""
    from cclab import flowsim

    cap = fb.LINK_BPS / 8 * PAYLOAD  # bytes of payload per second
    rate = lambda load: load * fb.LINK_BPS / 8 / fb.MEAN_BYTES  # arrivals per second, as at packet level
    rows = []
    for x in xs:
        loads = setup.loads(float(x))
        for p in policies:
            classes: list[object] = [flowsim.Short(rate=rate(loads[n]), mean_size=fb.MEAN_BYTES,
                                                   route=setup.routes[n], name=n) for n in setup.web]
            if setup.k:
                classes.append(flowsim.Long(count=setup.k, route=setup.routes[setup.web[0]], name=fb.LONG))
            classes += [flowsim.Background(fb.FLOW_POLICIES[p], {}, rate=rate(loads[n]), mean_size=fb.MEAN_BYTES,
                                           route=setup.routes[n], name=n) for n in setup.background]
            res = flowsim.simulate(flowsim.Scenario(classes=classes, capacities=(cap,) * setup.links,
                                                    duration=duration, warmup=duration / 5,
                                                    replications=replications, seed=seed, threads=fb.run_threads()))
            reps = res.replications
            for r, g in reps.groupby("replication"):
                g = g.set_index("class")
                active = float(g.loc[list(setup.background), "mean_active"].sum())
                waiting = float((g.loc[list(setup.background), "mean_number"]
                                 - g.loc[list(setup.background), "mean_active"]).sum())
                carried = float(g.loc[list(setup.background), "throughput"].sum()
                                / sum(loads[n] * fb.LINK_BPS / 8 for n in setup.background))
                limit = float(g.loc[list(setup.background), "mean_limit"].mean())
                arrivals = g.loc[list(setup.web), "arrivals"].to_numpy()
                delays = g.loc[list(setup.web), "mean_delay"].to_numpy()
                for name in setup.background:  # each server's own limit (for warm_start)
                    rows.append({"level": "flow", "policy": p, "x": float(x), "k": setup.k, "seed": int(r),
                                 "class": name, "delay": math.nan, "flows": math.nan, "unfinished": 0,
                                 "mean_active": float(g.at[name, "mean_active"]), "mean_waiting": math.nan,
                                 "carried": math.nan, "mean_limit": float(g.at[name, "mean_limit"])})
                for name in (*setup.web, "all"):
                    if name == "all":  # the short flows' mean delay, weighting each class by its arrivals
                        d = float(np.sum(delays * arrivals) / np.sum(arrivals))
                    else:
                        d = float(g.at[name, "mean_delay"])
                    rows.append({"level": "flow", "policy": p, "x": float(x), "k": setup.k, "seed": int(r),
                                 "class": name, "delay": d, "flows": math.nan, "unfinished": 0,
                                 "mean_active": active, "mean_waiting": waiting, "carried": carried,
                                 "mean_limit": limit})
    return pd.DataFrame(rows)


def warm_start(flow: pd.DataFrame) -> dict[tuple[float, str], float]:
    """The mean limit of rate tracking at flow level per (x, background class): where
    the packet-level controller starts (its ``m0``), so that a warm-up of a few thousand
    seconds suffices. From m0 = 1 the limit needs tens of thousands of seconds at high
    load: each update moves it towards load / (rate per active chunk), a map whose slope
    at the fixed point is ρ_b/(1 − ρ) (0.86 at k = 1, ρ = 0.65), and its averages have a
    memory of 1/ewma = 20 periods (40 minutes)."""
    g = flow[(flow["policy"] == "rate_tracking") & flow["delay"].isna()]
    return {(float(x), c): float(v) for (x, c), v in g.groupby(["x", "class"])["mean_limit"].mean().items()}


# ----------------------------------------------------------------------------------- summaries


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (level, k, policy, x, class): each run's delay and active micro-flows over
    those of the vanilla run of the same seed, then mean and 95% half-width over seeds
    (``delay_ratio``, ``active_ratio``, with ``_ci``), and the means of the delay (s),
    active and waiting micro-flows and the short flows left unfinished."""
    keys = ["level", "k", "x", "class", "seed"]
    runs = runs[runs["delay"].notna() | (runs["level"] == "packet")]  # not the flow level's per-server rows
    base = runs[runs["policy"] == "vanilla"].set_index(keys)
    out = []
    for (lvl, k, p, x, c), g in runs.groupby(["level", "k", "policy", "x", "class"], sort=False):
        v = base.loc[[tuple(t) for t in g[keys].to_numpy()]]
        row = {"level": lvl, "k": int(k), "policy": p, "x": float(x), "class": c, "seeds": len(g)}
        for name, val in [("delay_ratio", g["delay"].to_numpy() / v["delay"].to_numpy()),
                          ("active_ratio", g["mean_active"].to_numpy() / v["mean_active"].to_numpy()),
                          ("delay_s", g["delay"]), ("mean_active", g["mean_active"]),
                          ("mean_waiting", g["mean_waiting"]), ("carried", g["carried"]),
                          ("mean_limit", g["mean_limit"])]:
            row[name], row[name + "_ci"] = mean_ci(val)
        row["unfinished"] = float(g["unfinished"].mean())
        out.append(row)
    return pd.DataFrame(out)


def summarize_bins(runs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6: per (x, policy, bin), the mean delay of the bin's short flows over that of
    the vanilla run of the same seed, averaged over the seeds where both bins have flows."""
    runs = runs[runs["class"] == "all"]
    base = runs[runs["policy"] == "vanilla"].set_index(["x", "seed"])
    out = []
    for (p, x), g in runs.groupby(["policy", "x"], sort=False):
        ratios, counts, delays = [], np.zeros(BINS), []
        for r in g.itertuples():
            v = base.loc[(r.x, r.seed)]
            with np.errstate(invalid="ignore", divide="ignore"):
                mine = r.bin_sum / r.bin_count
                ratios.append(mine / (v["bin_sum"] / v["bin_count"]))
            delays.append(mine)
            counts += r.bin_count
        ratios, delays = np.array(ratios), np.array(delays)
        for b in range(BINS):
            m, h = mean_ci(ratios[:, b])
            out.append({"level": "packet", "load": float(x), "policy": p, "bin_start_bytes": b * BIN_BYTES,
                        "delay_ratio": m, "delay_ratio_ci": h, "delay_s": float(np.nanmean(delays[:, b]))
                        if np.isfinite(delays[:, b]).any() else math.nan, "flows": int(counts[b]),
                        "seeds": len(g)})
    return pd.DataFrame(out)


def size_groups(runs: pd.DataFrame, edges=(0, 100_000, 1_000_000, BINS * BIN_BYTES)) -> pd.DataFrame:
    """Fig. 6's statements are about sizes below 100 kB, above 1 MB, and in between: the
    paired ratio of the mean delay over each group of bins, mean and 95% CI over seeds."""
    runs = runs[runs["class"] == "all"]
    base = runs[runs["policy"] == "vanilla"].set_index(["x", "seed"])
    out = []
    for (p, x), g in runs.groupby(["policy", "x"], sort=False):
        for lo, hi in zip(edges[:-1], edges[1:]):
            sl = slice(lo // BIN_BYTES, hi // BIN_BYTES)
            rat = []
            for r in g.itertuples():
                v = base.loc[(r.x, r.seed)]
                rat.append((r.bin_sum[sl].sum() / r.bin_count[sl].sum())
                           / (v["bin_sum"][sl].sum() / v["bin_count"][sl].sum()))
            m, h = mean_ci(rat)
            out.append({"load": float(x), "policy": p, "from_bytes": lo, "to_bytes": hi, "delay_ratio": m,
                        "delay_ratio_ci": h})
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------------- checks


def compare(a: tuple[float, float], b: tuple[float, float]) -> str:
    """Whether a < b for (mean, 95% half-width) pairs: "holds" when the means are so
    ordered, "within CI" when not but the intervals overlap, "fails" otherwise."""
    if a[0] < b[0]:
        return "holds"
    ha = 0.0 if math.isnan(a[1]) else a[1]
    hb = 0.0 if math.isnan(b[1]) else b[1]
    return "within CI" if a[0] - ha <= b[0] + hb else "fails"


def near(a: tuple[float, float], target: float, tol: float) -> str:
    """Whether a mean lies within ``tol`` of a printed value: "holds"; "within CI" when
    its 95% interval reaches the band; "fails" otherwise."""
    if abs(a[0] - target) <= tol:
        return "holds"
    h = 0.0 if math.isnan(a[1]) else a[1]
    return "within CI" if abs(a[0] - target) - h <= tol else "fails"


def worst(results: Iterable[str]) -> str:
    r = list(results)
    return "fails" if "fails" in r else ("within CI" if "within CI" in r else "holds")


def fmt(v: tuple[float, float]) -> str:
    return f"{v[0]:.2f} ± {v[1]:.2f}" if not math.isnan(v[1]) else f"{v[0]:.2f}"


class Lookup:
    """(mean, ci) of a summary column for one (policy, x[, class]) at packet level."""

    def __init__(self, s: pd.DataFrame, k: int | None = None, cls: str = "all"):
        s = s[(s["level"] == "packet") & (s["class"] == cls)]
        if k is not None:
            s = s[s["k"] == k]
        self.s = s.set_index(["policy", "x"])
        self.xs = sorted(self.s.index.get_level_values(1).unique())

    def __call__(self, p: str, x: float, col: str = "delay_ratio") -> tuple[float, float]:
        return float(self.s.at[(p, x), col]), float(self.s.at[(p, x), col + "_ci"])


def verdict_table(claims: list[tuple[str, str, str]]) -> str:
    return "\n".join(f"| {c} | {n} | {v} |" for c, n, v in claims)


def summary_table(s: pd.DataFrame, extra: tuple[str, ...] = ()) -> str:
    """Markdown rows of a :func:`summarize` table (policies other than vanilla)."""
    head = ("| level | " + " | ".join(extra) + (" | " if extra else "") + "policy | load | delay ratio | "
            "active ratio | short delay (s) | active | waiting | limit | carried / offered | unfinished |")
    sep = "|" + "---|" * (len(extra) + 11)
    rows = []
    for r in s[s["policy"] != "vanilla"].itertuples():
        ex = "".join(f"{getattr(r, e)} | " for e in extra)
        rows.append(f"| {r.level} | {ex}{r.policy} | {r.x:g} | {r.delay_ratio:.2f} ± {r.delay_ratio_ci:.2f} | "
                    f"{r.active_ratio:.2f} ± {r.active_ratio_ci:.2f} | {r.delay_s:.1f} | {r.mean_active:.2f} | "
                    f"{r.mean_waiting:.1f} | {'' if math.isnan(r.mean_limit) else f'{r.mean_limit:.2f}'} | "
                    f"{r.carried:.3f} | {r.unfinished:.1f} |")
    return "\n".join([head, sep, *rows])


def finish(fig, axes, title: str, ncol: int = 1):
    """The legend in the first panel, the title above all panels."""
    axes.flat[0].legend(fontsize=6.5, ncol=ncol)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_ratios(s: pd.DataFrame, panels: list[tuple[dict, str, str]], title: str, ncols: int = 2,
                paper: dict[int, list[tuple[str, float, float]]] | None = None):
    """One panel per (filter, column, y label): the ratio against the load per policy;
    packet level solid with 95% intervals, flow level dashed; ``paper``: per panel index,
    the paper's printed (policy, load, ratio) points, drawn as crosses."""
    plt = pyplot()
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    for n, (ax, (flt, col, label)) in enumerate(zip(axes.flat, panels)):
        g0 = s[s["policy"] != "vanilla"]
        for key, val in flt.items():
            g0 = g0[g0[key] == val]
        for (lvl, p), g in g0.groupby(["level", "policy"], sort=False):
            g = g.sort_values("x")
            ax.errorbar(g["x"], g[col], yerr=g[col + "_ci"], color=COLORS.get(p, "gray"),
                        ls="-" if lvl == "packet" else "--", marker="o" if lvl == "packet" else "s", ms=4,
                        capsize=2, label=f"{lvl}: {p}")
        for i, (p, x, y) in enumerate((paper or {}).get(n, [])):
            ax.plot([x], [y], "x", color=COLORS.get(p, "gray"), ms=10, mew=2.5,
                    label=f"paper (text): {p}" if i < 2 else None)
        ax.axhline(1.0, color="k", lw=0.6)
        if col == "active_ratio":  # ideal low priority starves beside a long flow: ratios of 10^3-10^4
            ax.set_yscale("log")
        ax.set_ylabel(label, fontsize=8)
        ax.set_xlabel("short-flow load ρ (each link; background ρ_b = 0.3)", fontsize=8)
        ax.set_title(", ".join(f"{k} = {v}" for k, v in flt.items()) or label, fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    return finish(fig, axes, title, ncol=2)


def outcome(s: pd.DataFrame, fig, claims: list[tuple[str, str, str]], intro: str, tables: str, what: str) -> Outcome:
    """The entry's verdict: it agrees when no statement of the paper fails."""
    held = sum(c[2] == "holds" for c in claims)
    failed = [c for c in claims if c[2] == "fails"]
    rt = s[(s["level"] == "packet") & (s["policy"] == "rate_tracking")]["carried"] if "carried" in s else pd.Series()
    if len(rt):
        what += (f"; access control carried {rt.min():.2f}-{rt.max():.2f} of its offered load (below 1: its limit "
                 "was still rising and the delays it saved are partly deferred work)")
    details = f"""
{intro}

Tolerance: a comparison *holds* when our packet-level means are ordered as the paper
says, is *within CI* when they are not but the 95% intervals overlap, and *fails* when
the opposite is significant; a printed number holds within ±0.10 of a ratio (the
paper's ns-2 TCP constants and its controller's constants are not stated, and its
figures' own noise is not given). The entry agrees when nothing fails.

| the paper says | ours (packet level, 95% CI) | |
|---|---|---|
{verdict_table(claims)}

{tables}
"""
    verdict = (f"{held} of {len(claims)} statements hold at packet level"
               + (f", {len(failed)} fail: " + "; ".join(c[0] for c in failed) if failed else ", none contradicted")
               + f"; {what}")
    return Outcome(s, fig, verdict, details, not failed,
                   tolerance="an ordering fails only when the opposite is significant at the 95% CIs of the "
                             "runs (overlapping intervals count as 'within CI'); a printed ratio holds within "
                             "±0.10 plus our CI (the paper's ns-2 and controller constants are unstated)")


def seeds_of(ctx: Context) -> range:
    return range(ctx.seed, ctx.seed + (5 if ctx.quick else 10))


def both_levels(setup: Setup, policies: Iterable[str], xs: Iterable[float], ctx: Context, size, *,
                bins: bool = False) -> pd.DataFrame:
    """The flow level (vanilla, rate tracking, ideal low priority; 10 or 20 replications)
    and then the packet level, its rate-tracking limits started where the flow level's
    settled (:func:`warm_start`); ``size`` = (duration, warm-up, flow-level duration)."""
    duration, warmup, fdur = size
    xs = tuple(xs)
    flow = run_flow(setup, FLOW_POLICIES, xs, duration=fdur, replications=10 if ctx.quick else 20, seed=ctx.seed)
    packet = run_packet(setup, policies, xs, seeds_of(ctx), duration=duration, warmup=warmup, bins=bins,
                        progress=ctx.progress, m0=warm_start(flow))
    return pd.concat([packet, flow], ignore_index=True)


def sizes(quick: bool, q: tuple[float, float, float], f: tuple[float, float, float]) -> tuple[float, float, float]:
    """(duration, warm-up, flow-level duration) of the quick or the full size."""
    return q if quick else f


# ----------------------------------------------------------------------------------- Fig. 5

FIG5_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65)
FIG5_QUICK_LOADS = (0.2, 0.5, 0.65)
#: (duration, warm-up, flow-level duration) in seconds: the warm-up lets rate tracking
#: move from the flow level's limit to the packet level's (see :func:`warm_start`).
FIG5_QUICK = (15_000.0, 7_000.0, 2e5)
FIG5_FULL = (80_000.0, 20_000.0, 2e6)


def fig5_claims(s: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-B about Fig. 5, checked on a :func:`summarize` table."""
    k0, k1 = Lookup(s, 0), Lookup(s, 1)
    xs = k0.xs
    lo, hi = xs[0], xs[-1]
    mid = min(xs, key=lambda x: abs(x - 0.5))
    claims = []
    for p in LBES:
        claims.append((f"k = 0: {p}'s delay is below vanilla's at every load (Fig. 5a)",
                       ", ".join(fmt(k0(p, x)) for x in xs), worst(compare(k0(p, x), (1.0, 0.0)) for x in xs)))
    best = min(LBES, key=lambda p: k0(p, mid)[0])
    diff = (k0(best, mid)[0] - k0("rate_tracking", mid)[0], math.hypot(k0(best, mid)[1], k0("rate_tracking", mid)[1]))
    claims.append((f"k = 0, ρ = {mid:g}: access control's delay ratio is 0.20 below the LBEs' (\"for ρ = 0.5 the "
                   "difference is 20%\")", f"{fmt(diff)} below the best LBE ({best})", near(diff, 0.20, 0.10)))
    top = [x for x in k1.xs if x >= 0.6] or [hi]
    for p in LBES:
        claims.append((f"k = 1: {p}'s delay is above vanilla's above ρ = 0.6 (Fig. 5b)",
                       ", ".join(f"{fmt(k1(p, x))} at {x:g}" for x in top),
                       worst(compare((1.0, 0.0), k1(p, x)) for x in top)))
    claims.append(("k = 1: access control's delay stays below vanilla's (Fig. 5b)",
                   ", ".join(fmt(k1("rate_tracking", x)) for x in k1.xs),
                   worst(compare(k1("rate_tracking", x), (1.0, 0.0)) for x in k1.xs)))
    claims.append(("k = 1: access control's delay ratio decreases with the load (§IV-B)",
                   f"{fmt(k1('rate_tracking', k1.xs[0]))} at {k1.xs[0]:g}, {fmt(k1('rate_tracking', hi))} at {hi:g}",
                   compare(k1("rate_tracking", hi), k1("rate_tracking", k1.xs[0]))))
    for p in ("ledbat", "ledbat_60"):
        claims.append((f"k = 0: {p} keeps more micro-flows active than vanilla, more as the load grows (Fig. 5c)",
                       ", ".join(fmt(k0(p, x, "active_ratio")) for x in xs),
                       worst([compare((1.0, 0.0), k0(p, hi, "active_ratio")),
                              compare(k0(p, lo, "active_ratio"), k0(p, hi, "active_ratio"))])))
    for p in LBES:
        claims.append((f"k = 1: {p}'s active-micro-flow ratio falls with the load (Fig. 5d)",
                       ", ".join(fmt(k1(p, x, "active_ratio")) for x in k1.xs),
                       compare(k1(p, hi, "active_ratio"), k1(p, k1.xs[0], "active_ratio"))))
    return claims


@reproduction("background-packet-fig5", paper=PAPER, figure="Fig. 5 (a-d), §IV-B",
              title="Single link, ρ_b = 0.3, k = 0 and 1: short-flow delay and active micro-flows over vanilla",
              quick_size="packet 2 k x 3 loads (0.2, 0.5, 0.65) x 5 policies x 5 seeds x 15,000 s (7,000 s "
                         "warm-up); flow 10 x 2x10^5 s",
              full_size="packet 2 k x 7 loads x 5 policies x 10 seeds x 80,000 s (20,000 s warm-up); "
                        "flow 20 x 2x10^6 s")
def fig5(ctx: Context) -> Outcome:
    """Fig. 5: access control (rate tracking) against LEDBAT, LEDBAT-60 and TCP-LP on one link."""
    seeds = seeds_of(ctx)
    loads = FIG5_QUICK_LOADS if ctx.quick else FIG5_LOADS
    duration, warmup, fdur = sizes(ctx.quick, FIG5_QUICK, FIG5_FULL)
    frames = [both_levels(single_link(k), POLICIES, loads, ctx, (duration, warmup, fdur)) for k in (0, 1)]
    s = summarize(pd.concat(frames, ignore_index=True))
    s = s[s["class"] == "all"].reset_index(drop=True)
    claims = fig5_claims(s)
    fig = plot_ratios(s, [({"k": 0}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({"k": 1}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({"k": 0}, "active_ratio", "active micro-flows / vanilla's"),
                          ({"k": 1}, "active_ratio", "active micro-flows / vanilla's")],
                      f"Fig. 5: ours, packet level ({len(seeds)} seeds, 95% CI) solid, flow level dashed; "
                      "paper: statements only (no image)")
    intro = (f"One 10 Mbps link, 25 ms, 80 ms DropTail buffer, ρ_b = 0.3, Reno; {duration:g} s per run, the first "
             f"{warmup:g} s discarded, short flows arriving in the last {DRAIN:g} s not measured; {len(seeds)} seeds, "
             "each run paired with the vanilla run of the same seed. Access control is the adaptive limit of "
             "§IV (`rate_tracking`, defaults of cclab-control). Flow level: `cclab.flowsim` with vanilla, rate "
             "tracking and the ideal low-priority class (it has no LEDBAT or TCP-LP).")
    tables = summary_table(s, ("k",))
    k1 = Lookup(s, 1)
    hi = k1.xs[-1]
    what = (f"k = 1, ρ = {hi:g}: access control {fmt(k1('rate_tracking', hi))}, LEDBAT {fmt(k1('ledbat', hi))}, "
            f"TCP-LP {fmt(k1('tcp_lp', hi))} of vanilla's delay")
    s = s.drop(columns="class").rename(columns={"x": "load"})
    return outcome(s, fig, claims, intro, tables, what)


# ----------------------------------------------------------------------------------- Fig. 6

FIG6_POLICIES = ("vanilla", "rate_tracking", "ledbat", "tcp_lp")
FIG6_LOADS = (0.2, 0.6)
FIG6_QUICK = (20_000.0, 7_000.0, 2e5)
FIG6_FULL = (100_000.0, 20_000.0, 2e6)
SMALL, LARGE = 100_000, 1_000_000


def fig6_claims(g: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-B about Fig. 6, on the :func:`size_groups` table: sizes below
    100 kB ('small'), 100 kB to 1 MB, and 1 to 5 MB ('large')."""
    t = g.set_index(["load", "policy", "from_bytes"])

    def v(x, p, lo):
        return float(t.at[(x, p, lo), "delay_ratio"]), float(t.at[(x, p, lo), "delay_ratio_ci"])

    lo_x, hi_x = min(t.index.get_level_values(0)), max(t.index.get_level_values(0))
    groups = sorted(t.index.get_level_values(2).unique())
    big = [b for b in groups if b >= SMALL]
    claims = [
        (f"ρ = {lo_x:g}: access control is similar to LEDBAT above 100 kB", ", ".join(
            f"{fmt(v(lo_x, 'rate_tracking', b))} vs {fmt(v(lo_x, 'ledbat', b))}" for b in big),
         worst(near((v(lo_x, "rate_tracking", b)[0] - v(lo_x, "ledbat", b)[0],
                     math.hypot(v(lo_x, "rate_tracking", b)[1], v(lo_x, "ledbat", b)[1])), 0.0, 0.10) for b in big)),
        (f"ρ = {hi_x:g}: access control does better than or as well as the LBEs above 100 kB", ", ".join(
            f"{fmt(v(hi_x, 'rate_tracking', b))} vs LEDBAT {fmt(v(hi_x, 'ledbat', b))}, TCP-LP "
            f"{fmt(v(hi_x, 'tcp_lp', b))}" for b in big),
         worst(compare(v(hi_x, "rate_tracking", b), (v(hi_x, p, b)[0] + 0.10, v(hi_x, p, b)[1]))
               for b in big for p in ("ledbat", "tcp_lp"))),
    ]
    for x in (lo_x, hi_x):
        claims.append((f"ρ = {x:g}: LEDBAT gives smaller delays than access control below 100 kB",
                       f"{fmt(v(x, 'ledbat', 0))} vs {fmt(v(x, 'rate_tracking', 0))}",
                       compare(v(x, "ledbat", 0), v(x, "rate_tracking", 0))))
    for p in ("ledbat", "tcp_lp"):
        claims.append((f"ρ = {hi_x:g}: {p} is worse than vanilla above 1 MB", fmt(v(hi_x, p, LARGE)),
                       compare((1.0, 0.0), v(hi_x, p, LARGE))))
    claims.append(("access control is better than vanilla for all flow sizes", ", ".join(
        f"{fmt(v(x, 'rate_tracking', b))}" for x in (lo_x, hi_x) for b in groups),
        worst(compare(v(x, "rate_tracking", b), (1.0, 0.0)) for x in (lo_x, hi_x) for b in groups)))
    return claims


def plot_fig6(bins: pd.DataFrame, flow: pd.DataFrame, title: str):
    plt = pyplot()
    loads = sorted(bins["load"].unique())
    fig, axes = plt.subplots(1, len(loads), figsize=(5.6 * len(loads), 4.2), squeeze=False)
    for ax, x in zip(axes.flat, loads):
        for p, g in bins[(bins["load"] == x) & (bins["policy"] != "vanilla")].groupby("policy", sort=False):
            ax.errorbar(g["bin_start_bytes"] / 1e6, g["delay_ratio"], yerr=g["delay_ratio_ci"], color=COLORS[p],
                        lw=0.9, ms=2, marker="o", capsize=0, elinewidth=0.4, label=f"packet: {p}")
        for r in flow[(flow["x"] == x) & (flow["policy"] != "vanilla")].itertuples():
            ax.axhline(r.delay_ratio, color=COLORS[r.policy], ls="--", lw=0.9, label=f"flow (all sizes): {r.policy}")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.axvline(0.1, color="gray", lw=0.5, ls=":")
        ax.set_xlabel("short-flow size, bin start (MB; bins of 50 kB)")
        ax.set_ylabel("mean delay in the bin / vanilla's")
        ax.set_title(f"k = 1, ρ = {x:g}", fontsize=8)
        ax.grid(alpha=0.3)
        ax.set_ylim(0, 2.5)
    return finish(fig, axes, title)


@reproduction("background-packet-fig6", paper=PAPER, figure="Fig. 6 (a, b), §IV-B",
              title="Single link, k = 1, ρ = 0.2 and 0.6: short-flow delay against size (100 bins of 50 kB)",
              quick_size="packet 2 loads x 4 policies x 5 seeds x 20,000 s (7,000 s warm-up); flow 10 x 2x10^5 s",
              full_size="packet 2 loads x 4 policies x 10 seeds x 100,000 s (20,000 s warm-up); flow 20 x 2x10^6 s")
def fig6(ctx: Context) -> Outcome:
    """Fig. 6: the delay ratio to vanilla per size bin, k = 1."""
    seeds = seeds_of(ctx)
    duration, warmup, fdur = sizes(ctx.quick, FIG6_QUICK, FIG6_FULL)
    setup = single_link(1)
    runs = both_levels(setup, FIG6_POLICIES, FIG6_LOADS, ctx, (duration, warmup, fdur), bins=True)
    packet = runs[runs["level"] == "packet"]
    bins = summarize_bins(packet)
    groups = size_groups(packet)
    overall = summarize(runs)
    overall = overall[overall["class"] == "all"]
    flow = overall[overall["level"] == "flow"]
    claims = fig6_claims(groups)
    fig = plot_fig6(bins, flow, f"Fig. 6: ours, packet level ({len(seeds)} seeds, 95% CI per bin), flow level "
                                "dashed (all sizes); paper: statements only (no image)")
    gt = "\n".join(f"| {r.load:g} | {r.policy} | {r.from_bytes / 1e6:g}-{r.to_bytes / 1e6:g} | "
                   f"{r.delay_ratio:.2f} ± {r.delay_ratio_ci:.2f} |"
                   for r in groups[groups["policy"] != "vanilla"].itertuples())
    ft = "\n".join(f"| {r.x:g} | {r.policy} | {r.delay_ratio:.2f} ± {r.delay_ratio_ci:.2f} |"
                   for r in flow[flow["policy"] != "vanilla"].itertuples())
    intro = (f"One link with one long Reno flow (k = 1), ρ_b = 0.3; {duration:g} s per run, the first {warmup:g} s "
             f"discarded; {len(seeds)} seeds. The short flows are put in 100 bins of 50 kB by size (0-5 MB, 81% of "
             "the flows); per bin, the mean delay over that of the vanilla run of the same seed, averaged over seeds "
             "(a bin holds a few dozen flows per run, so single bins are noisy: the statements are checked on three "
             "groups of bins). LEDBAT-60 is left out as in the paper.")
    tables = f"""Per size group (MB), paired with vanilla by seed:

| ρ | policy | size (MB) | delay ratio |
|---|---|---|---|
{gt}

Flow level (`cclab.flowsim`; it does not follow single flows, so only the ratio over all sizes):

| ρ | policy | delay ratio |
|---|---|---|
{ft}

All sizes together, both levels:

{summary_table(overall)}

The per-bin table is the CSV (`load, policy, bin_start_bytes, delay_ratio, delay_ratio_ci, delay_s, flows`)."""
    t = groups.set_index(["load", "policy", "from_bytes"])
    what = (f"ρ = 0.6 above 1 MB: access control {fmt((t.at[(0.6, 'rate_tracking', LARGE), 'delay_ratio'], t.at[(0.6, 'rate_tracking', LARGE), 'delay_ratio_ci']))}, "
            f"LEDBAT {fmt((t.at[(0.6, 'ledbat', LARGE), 'delay_ratio'], t.at[(0.6, 'ledbat', LARGE), 'delay_ratio_ci']))} of vanilla's delay")
    rt = overall[(overall["level"] == "packet") & (overall["policy"] == "rate_tracking")]["carried"]
    what += f"; access control carried {rt.min():.2f}-{rt.max():.2f} of its offered load"
    return outcome(bins, fig, claims, intro, tables, what)


# ----------------------------------------------------------------------------------- Fig. 7

FIG7_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65)
FIG7_QUICK_LOADS = (0.3, 0.5, 0.65)
FIG7_QUICK = (15_000.0, 7_000.0, 2e5)
FIG7_FULL = (80_000.0, 20_000.0, 2e6)


def fig7_claims(s: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-C about Fig. 7, checked on a :func:`summarize` table."""
    t = Lookup(s)
    xs, hi = t.xs, t.xs[-1]
    below = [x for x in xs if x < 0.5] or [xs[0]]
    claims = [("access control's delay is similar to LEDBAT's below ρ = 0.5 (Fig. 7a)",
               ", ".join(f"{fmt(t('rate_tracking', x))} vs {fmt(t('ledbat', x))}" for x in below),
               worst(near((t("rate_tracking", x)[0] - t("ledbat", x)[0],
                           math.hypot(t("rate_tracking", x)[1], t("ledbat", x)[1])), 0.0, 0.10) for x in below))]
    peak = max(xs[:-1], key=lambda x: t("ledbat", x, "active_ratio")[0]) if len(xs) > 1 else xs[0]
    claims.append(("LEDBAT's active-micro-flow ratio falls again above ρ = 0.5 (Fig. 7b)",
                   ", ".join(f"{fmt(t('ledbat', x, 'active_ratio'))} at {x:g}" for x in xs),
                   compare(t("ledbat", hi, "active_ratio"), t("ledbat", peak, "active_ratio"))))
    if abs(hi - 0.65) < 1e-9:
        claims.append(("LEDBAT's delay is 10% below vanilla's at 95% total load (ρ = 0.65)",
                       fmt(t("ledbat", hi)), near(t("ledbat", hi), 0.90, 0.10)))
        claims.append(("access control's delay is 28% below vanilla's at 95% total load",
                       fmt(t("rate_tracking", hi)), near(t("rate_tracking", hi), 0.72, 0.10)))
    claims.append((f"access control's delay is below LEDBAT's at ρ = {hi:g}",
                   f"{fmt(t('rate_tracking', hi))} vs {fmt(t('ledbat', hi))}",
                   compare(t("rate_tracking", hi), t("ledbat", hi))))
    return claims


@reproduction("background-packet-fig7", paper=PAPER, figure="Fig. 7 (a, b), §IV-C",
              title="Two links, ρ_b = 0.3 across both, k = 0: short-flow delay and active micro-flows over vanilla",
              quick_size="packet 3 loads (0.3, 0.5, 0.65) x 5 policies x 5 seeds x 15,000 s (7,000 s warm-up); "
                         "flow 10 x 2x10^5 s",
              full_size="packet 7 loads x 5 policies x 10 seeds x 80,000 s (20,000 s warm-up); flow 20 x 2x10^6 s")
def fig7(ctx: Context) -> Outcome:
    """Fig. 7: two links, the background crossing both."""
    seeds = seeds_of(ctx)
    loads = FIG7_QUICK_LOADS if ctx.quick else FIG7_LOADS
    duration, warmup, fdur = sizes(ctx.quick, FIG7_QUICK, FIG7_FULL)
    runs = both_levels(TWO_LINKS, POLICIES, loads, ctx, (duration, warmup, fdur))
    s = summarize(runs)
    s = s[s["class"] == "all"].reset_index(drop=True)
    claims = fig7_claims(s)
    fig = plot_ratios(s, [({}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({}, "active_ratio", "active micro-flows / vanilla's")],
                      f"Fig. 7: ours, packet level ({len(seeds)} seeds, 95% CI) solid, flow level dashed; paper "
                      "(crosses): 0.90 (LEDBAT) and 0.72 (access) at ρ = 0.65, from its text",
                      paper={0: [("rate_tracking", 0.65, 0.72), ("ledbat", 0.65, 0.90)]})
    intro = (f"Two 10 Mbps links (25 ms, 80 ms DropTail each); the background (ρ_b = 0.3) crosses both, each link "
             f"has its own short flows of load ρ; no long flow. {duration:g} s per run, the first {warmup:g} s "
             f"discarded; {len(seeds)} seeds, paired with vanilla. The delay is that of all short flows (both "
             "links; they have the same load). Paper's numbers: from the text of §IV-C (\"only 10% at 95% total "
             "load\", \"the reduction is 28% for the same load\"), exact as printed; 95% total load is ρ = 0.65.")
    t = Lookup(s)
    hi = t.xs[-1]
    what = (f"ρ = {hi:g}: access control {fmt(t('rate_tracking', hi))} (paper 0.72), LEDBAT {fmt(t('ledbat', hi))} "
            "(paper 0.90) of vanilla's delay")
    tables = summary_table(s)
    s = s.drop(columns="class").rename(columns={"x": "load"})
    return outcome(s, fig, claims, intro, tables, what)


# ----------------------------------------------------------------------------------- Fig. 9

FIG9_RHO1 = (0.3, 0.5)
FIG9_QUICK = (15_000.0, 7_000.0, 2e5)
FIG9_FULL = (80_000.0, 20_000.0, 2e6)
ROUTES = ("1", "123", "2", "23")


def fig9_claims(s: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The statements of §IV-D about Fig. 9, checked on a :func:`summarize` table."""
    r = {x: Lookup(s, cls=f"web_{x}") for x in ROUTES}
    lo, hi = min(FIG9_RHO1), max(FIG9_RHO1)
    claims = [("ρ1 = 0.3: the LBEs bring no significant saving on route 1 (ratio near 1)",
               ", ".join(f"{p} {fmt(r['1'](p, lo))}" for p in LBES),
               worst(near(r["1"](p, lo), 1.0, 0.10) if p != "tcp_lp" else compare((1.0, 0.0), r["1"](p, lo))
                     for p in LBES)),
              ("TCP-LP gives higher delays than vanilla (ρ1 = 0.3; checked on the mean of the four routes' ratios)",
               ", ".join(f"route {x} {fmt(r[x]('tcp_lp', lo))}" for x in ROUTES),
               compare((1.0, 0.0), (float(np.mean([r[x]("tcp_lp", lo)[0] for x in ROUTES])),
                                    float(np.max([r[x]("tcp_lp", lo)[1] for x in ROUTES])))))]
    for x in ("1", "2"):
        claims.append((f"access control gives the lowest delay on route {x} (both ρ1)",
                       "; ".join(f"{fmt(r[x]('rate_tracking', y))} vs best LBE "
                                 f"{fmt(min((r[x](p, y) for p in LBES), key=lambda v: v[0]))}" for y in FIG9_RHO1),
                       worst(compare(r[x]("rate_tracking", y), r[x](p, y)) for y in FIG9_RHO1 for p in LBES)))
    for x in ("123", "23"):
        claims.append((f"route {x}: access control is close to LEDBAT, the lowest there",
                       "; ".join(f"{fmt(r[x]('rate_tracking', y))} vs {fmt(r[x]('ledbat', y))}" for y in FIG9_RHO1),
                       worst(near((r[x]("rate_tracking", y)[0] - r[x]("ledbat", y)[0],
                                   math.hypot(r[x]("rate_tracking", y)[1], r[x]("ledbat", y)[1])), 0.0, 0.10)
                             for y in FIG9_RHO1)))
    for x in ("1", "123"):
        gap = {y: min(r[x](p, y)[0] for p in LBES) - r[x]("rate_tracking", y)[0] for y in FIG9_RHO1}
        claims.append((f"route {x}: access control's advantage over the LBEs grows from ρ1 = 0.3 to 0.5",
                       f"{gap[lo]:.2f} at 0.3, {gap[hi]:.2f} at 0.5", "holds" if gap[hi] > gap[lo] else "within CI"
                       if gap[hi] > gap[lo] - 0.10 else "fails"))
    return claims


@reproduction("background-packet-fig9", paper=PAPER, figure="Figs. 8-9, §IV-D",
              title="Three links, routes 1, 123, 2, 23, ρ1 = 0.3 and 0.5: short-flow delay per route over vanilla",
              quick_size="packet 2 loads x 5 policies x 5 seeds x 15,000 s (7,000 s warm-up); flow 10 x 2x10^5 s",
              full_size="packet 2 loads x 5 policies x 10 seeds x 80,000 s (20,000 s warm-up); flow 20 x 2x10^6 s")
def fig9(ctx: Context) -> Outcome:
    """Fig. 9: three links, three background servers, short flows on four routes."""
    seeds = seeds_of(ctx)
    duration, warmup, fdur = sizes(ctx.quick, FIG9_QUICK, FIG9_FULL)
    runs = both_levels(THREE_LINKS, POLICIES, FIG9_RHO1, ctx, (duration, warmup, fdur))
    s = summarize(runs)
    claims = fig9_claims(s)
    s = s[s["class"] != "all"].reset_index(drop=True)
    s.insert(0, "route", s["class"].str.removeprefix("web_"))
    s = s.rename(columns={"x": "rho1"}).drop(columns="class")
    fig = plot_fig9(s, f"Fig. 9: ours, packet level ({len(seeds)} seeds, 95% CI) bars, flow level markers; "
                       "paper: statements only (no image)")
    intro = (f"Three 10 Mbps links in a line (25 ms, 80 ms DropTail each); routes as in Fig. 8: route 1 carries short "
             f"flows of load ρ1, routes 123, 2, 23 a background server of load 0.2, 0.1, 0.1 and short flows of the "
             f"same load (link loads ρ1 + 0.4, 0.8, 0.6). {duration:g} s per run, the first {warmup:g} s discarded; "
             f"{len(seeds)} seeds, paired with vanilla; every server under the same policy, each with its own limit.")
    rows = "\n".join(f"| {r.level} | {r.rho1:g} | {r.route} | {r.policy} | {r.delay_ratio:.2f} ± {r.delay_ratio_ci:.2f}"
                     f" | {r.delay_s:.1f} | {r.mean_active:.2f} |" for r in s[s["policy"] != "vanilla"].itertuples())
    tables = ("| level | ρ1 | route | policy | delay ratio | short delay (s) | active (all servers) |\n"
              "|---|---|---|---|---|---|---|\n" + rows)
    r1 = Lookup(s.assign(**{"class": "web_" + s["route"], "x": s["rho1"]}), cls="web_1")
    what = (f"route 1 at ρ1 = 0.5: access control {fmt(r1('rate_tracking', 0.5))}, LEDBAT {fmt(r1('ledbat', 0.5))}, "
            f"TCP-LP {fmt(r1('tcp_lp', 0.5))} of vanilla's delay")
    return outcome(s, fig, claims, intro, tables, what)


def plot_fig9(s: pd.DataFrame, title: str):
    plt = pyplot()
    fig, axes = plt.subplots(1, len(FIG9_RHO1), figsize=(6 * len(FIG9_RHO1), 4.2), squeeze=False)
    pols = [p for p in POLICIES if p != "vanilla"]
    w = 0.8 / len(pols)
    for ax, y in zip(axes.flat, FIG9_RHO1):
        for i, p in enumerate(pols):
            g = s[(s["rho1"] == y) & (s["policy"] == p) & (s["level"] == "packet")].set_index("route").loc[list(ROUTES)]
            pos = np.arange(len(ROUTES)) + (i - (len(pols) - 1) / 2) * w
            ax.bar(pos, g["delay_ratio"], w, yerr=g["delay_ratio_ci"], color=COLORS[p], capsize=2, label=p)
            f = s[(s["rho1"] == y) & (s["policy"] == p) & (s["level"] == "flow")]
            if len(f):
                f = f.set_index("route").loc[list(ROUTES)]
                ax.plot(pos, f["delay_ratio"], "D", mfc="white", mec="k", ms=5,
                        label=f"flow: {p}" if y == FIG9_RHO1[0] else None)
        f = s[(s["rho1"] == y) & (s["policy"] == "low_priority")].set_index("route")
        if len(f):
            ax.plot(np.arange(len(ROUTES)), f.loc[list(ROUTES), "delay_ratio"], "^", color=COLORS["low_priority"],
                    label="flow: ideal low priority")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xticks(np.arange(len(ROUTES)), [f"route{x}" for x in ROUTES])
        ax.set_ylabel("short-flow delay / vanilla's")
        ax.set_title(f"ρ1 = {y:g}", fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    return finish(fig, axes, title)
