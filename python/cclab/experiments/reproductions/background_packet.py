"""Packet-level reproductions of the background-transfer paper's simulations (§IV).

Paper: Courcoubetis, Dimakis, Kanakakis, "Congestion Control for Background Data
Transfers with Minimal Delay Impact" (``shared/papers/background-transfers-minimal-delay.md``),
§IV: ns-2, Reno, every link 10 Mbps with a 25 ms propagation delay and an 80 ms
buffer, Poisson arrivals, exponential sizes of mean 3 MB. A server's background
micro-flows (chunks) go out under one of the policies of
:data:`.background_runs.POLICIES`; the paper's "access control" is the adaptive limit of
§IV, ``rate_tracking`` here.

* ``background-packet-fig5``: one link, ρ_b = 0.3, k = 0 and 1 long flows; the short
  flows' delay and the active micro-flows against the short load ρ, each over 'vanilla'.
* ``background-packet-fig6``: k = 1, ρ = 0.2 and 0.6; delay against the short flow's
  size (100 bins of 50 kB), over vanilla's in the same bin.
* ``background-packet-fig7``: two links, ρ_b = 0.3 across both, short flows of load ρ
  on each, k = 0.
* ``background-packet-fig9``: three links, routes 1, 123, 2, 23 (Fig. 8), ρ1 = 0.3, 0.5.

Each entry reads as runs -> claims -> figure on the shared framework: the points and
what a run gives are :mod:`.background_runs`' (shared with the FAIRBAT entries), every
run is paired with the vanilla run of the same seed, seeds are added until each claim is
known, and the flow-level model (vanilla, rate tracking and the ideal low-priority class
in place of LEDBAT and TCP-LP) runs beside. Our copy of the paper has the figures'
captions and text but not their images, so the paper's values are the statements and
the few numbers of its text.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ...plotting import pyplot
from ...stats import mean_ci
from ..catalogue import Context, Outcome, reproduction
from ..claims import AllOf, Estimate, Greater, Near, mark_figure, outcome
from ..paired import summary
from ..runs import Point, flow_memo, replicate
from ..sizes import Size, Sizes, settled
from . import background_runs as br

PAPER = "background-transfers-minimal-delay"

#: The policies of §IV at packet level (Fig. 6 omits LEDBAT-60, as the paper does).
POLICIES = ("vanilla", "rate_tracking", "ledbat", "ledbat_60", "tcp_lp")
LBES = ("ledbat", "ledbat_60", "tcp_lp")
#: The flow-level model's policies (``low_priority``: the ideal lower-than-best-effort class).
FLOW_POLICIES = ("vanilla", "rate_tracking", "low_priority")
RHO_B = 0.3
#: A printed ratio holds within this (the paper's ns-2 TCP constants and its controller's
#: constants are not stated, and its figures' own noise is not given).
PRINTED_TOLERANCE = 0.10
#: A difference of delay or active ratios too small to matter (orderings; claims.py).
RESOLUTION = 0.05

COLORS = {"vanilla": "tab:brown", "rate_tracking": "k", "access": "tab:olive", "fairbat": "tab:gray",
          "ledbat": "tab:blue", "ledbat_60": "tab:purple", "ledbat_a": "tab:cyan", "tcp_lp": "tab:red",
          "low_priority": "tab:green"}


def _sizes(quick: dict, full: dict) -> Sizes:
    return Sizes(Size(seeds=3, max_seeds=4, **quick), Size(seeds=10, max_seeds=30, **full))


def single_link_loads(rho: float) -> dict:
    return {"web": rho, "background": RHO_B}


def two_link_loads(rho: float) -> dict:
    return {"web_1": rho, "web_2": rho, "background": RHO_B}


#: Fig. 8: loads of the CBFs (and of the short flows beside them) on routes 123, 2, 23.
FIG9_LOADS = {"123": 0.2, "2": 0.1, "23": 0.1}


def three_link_loads(rho1: float) -> dict:
    return {"web_1": rho1, **{f"{c}_{r}": v for r, v in FIG9_LOADS.items() for c in ("web", "background")}}


def points(net: br.Network, loads: Callable[[float], dict], xs: Iterable[float], size: Size,
           policies: Iterable[str] = POLICIES, k: int = 0) -> list[Point]:
    """Every policy at every x (the x-axis value ``load``), one replication group per (x, k)."""
    return [br.packet_point(net, p, loads(x), size, k=k, labels={"load": x}, group=(x, k)) for x in xs for p in policies]


def flow(ctx: Context, net: br.Network, loads: Callable[[float], dict], xs: Iterable[float], k: int = 0) -> list:
    """The flow level of the same network (payload capacity, the packet level's arrival rates)."""
    reps, duration = ctx.size.flow
    memo = flow_memo(ctx)
    return [r for x in xs for p in FLOW_POLICIES
            for r in br.flow_rows(net, p, loads(x), k=k, duration=duration, replications=reps, seed=ctx.seed,
                                  payload=True, labels={"load": x}, memo=memo)]


def packet_and_flow(ctx: Context, net: br.Network, loads: Callable[[float], dict], xs: Iterable[float],
                    pts: list[Point], judge, *, ks: Iterable[int] = (0,), bins: bool = False):
    """An entry's runs: its packet-level points replicated until ``judge``'s claims are
    known, and the flow level of the same network at each k. Returns the packet rows,
    the claims, and both levels' rows together."""
    rows, claims = replicate(ctx, "packet", pts, br.Measure(net, bins=bins), judge, keep=br.KEEP)
    fl = pd.DataFrame([r for k in ks for r in flow(ctx, net, loads, xs, k=k)])
    return rows, claims, pd.concat([rows, fl], ignore_index=True)


def judge_with(claims_of: Callable[[pd.DataFrame], list]):
    return lambda rows: claims_of(br.paired_rows(rows, on=["load", "k"]))


class Lookup:
    """A claim's quantity over paired rows: ``val(policy, load, column)`` (packet level)."""

    def __init__(self, paired: pd.DataFrame, k: int | None = None, cls: str = "all"):
        self.t, self.cls = paired, cls
        self.fixed = {} if k is None else {"k": k}
        sel = paired[paired["level"] == "packet"]
        self.xs = sorted(set(sel["load"]))

    def __call__(self, p: str, x: float, col: str = "delay_ratio") -> Estimate:
        return br.estimate(self.t, col, cls=self.cls, policy=p, load=x, **self.fixed)


def below(text: str, a: Estimate, b) -> Greater:
    """a < b (delay or active ratios), with the entries' resolution."""
    return Greater(text, b, a, RESOLUTION)


def similar(text: str, a: Estimate, b: Estimate) -> Near:
    """Two ratios within the printed tolerance of each other (their paired difference)."""
    return Near(text, a - b, 0.0, PRINTED_TOLERANCE, ours=f"{a.text()} vs {b.text()}")


def summary_table(s: pd.DataFrame, extra: tuple[str, ...] = ()) -> str:
    """Markdown rows of an entry's table (policies other than vanilla)."""
    head = ("| level | " + " | ".join(extra) + (" | " if extra else "") + "policy | load | seeds | delay ratio | "
            "active ratio | short delay (s) | active | waiting | limit | carried / offered | unfinished |")
    sep = "|" + "---|" * (len(extra) + 12)
    rows = []
    for r in s[s["policy"] != "vanilla"].itertuples():
        ex = "".join(f"{getattr(r, e)} | " for e in extra)
        rows.append(f"| {r.level} | {ex}{r.policy} | {r.load:g} | {r.seeds} | {r.delay_ratio:.2f} ± "
                    f"{r.delay_ratio_ci:.2f} | {r.active_ratio:.2f} ± {r.active_ratio_ci:.2f} | {r.delay:.1f} | "
                    f"{r.mean_active:.2f} | {r.mean_waiting:.1f} | "
                    f"{'' if math.isnan(r.mean_limit) else f'{r.mean_limit:.2f}'} | {r.carried:.3f} | "
                    f"{r.unfinished:.1f} |")
    return "\n".join([head, sep, *rows])


COLUMNS = ["delay_ratio", "active_ratio", "delay", "mean_active", "mean_waiting", "carried", "mean_limit",
           "unfinished"]


def table_of(rows: pd.DataFrame, cls: str = "all") -> pd.DataFrame:
    t = br.paired_rows(rows, on=["load", "k"])
    t = t[t["class"] == cls] if cls else t
    return summary(t, ["level", "k", "policy", "load", *([] if cls else ["class"])], COLUMNS)


def plot_ratios(s: pd.DataFrame, panels: list[tuple[dict, str, str]], ncols: int = 2,
                paper: dict[int, list[tuple[str, float, float]]] | None = None):
    """One panel per (filter, column, y label): the ratio against the load per policy;
    packet level solid with 95% intervals, flow level dashed; ``paper``: per panel index,
    the paper's printed (policy, load, ratio) points, drawn as crosses."""
    plt = pyplot()
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows + 0.4), squeeze=False)
    for n, (ax, (flt, col, label)) in enumerate(zip(axes.flat, panels)):
        g0 = s[s["policy"] != "vanilla"]
        for key, val in flt.items():
            g0 = g0[g0[key] == val]
        for (lvl, p), g in g0.groupby(["level", "policy"], sort=False):
            g = g.sort_values("load")
            ax.errorbar(g["load"], g[col], yerr=g[col + "_ci"], color=COLORS.get(p, "gray"),
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
    axes.flat[0].legend(fontsize=6.5, ncol=2)
    return fig


def packet_intro(ctx: Context, network: str) -> str:
    return (f"{network}; {ctx.size.duration:g} s per run, the first {ctx.size.warmup:g} s discarded, short flows arriving "
            f"in the last {br.DRAIN:g} s not measured; each run paired with the vanilla run of the same seed. Access "
            "control is the adaptive limit of §IV (`rate_tracking`, defaults of cclab-control, started from its own "
            "m0). Flow level: `cclab.flowsim` with vanilla, rate tracking and the ideal low-priority class (it has "
            "no LEDBAT or TCP-LP).")


TOLERANCE = (f"a printed ratio holds within ±{PRINTED_TOLERANCE:g} (the paper's ns-2 and controller constants are "
             f"unstated); ratios closer than {RESOLUTION:g} are not ordered")


# ----------------------------------------------------------------------------------- Fig. 5

FIG5_SIZES = _sizes(dict(duration=30_000.0, warmup=15_000.0, axes={"k": (0, 1), "ρ": (0.2, 0.5, 0.65),
                                                                   "policies": POLICIES}, flow=(10, 2e5)),
                    dict(duration=80_000.0, warmup=20_000.0, settling=9_120.0,
                         settling_note=settled("rate tracking's limit at k = 0, ρ = 0.65"),
                         axes={"k": (0, 1), "ρ": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65), "policies": POLICIES},
                         flow=(20, 2e6)))


def fig5_claims(t: pd.DataFrame) -> list:
    """The statements of §IV-B about Fig. 5, on paired packet-level rows."""
    k0, k1 = Lookup(t, 0), Lookup(t, 1)
    xs = k0.xs
    lo, hi = xs[0], xs[-1]
    mid = min(xs, key=lambda x: abs(x - 0.5))
    claims = []
    for p in LBES:
        claims.append(AllOf(f"k = 0: {p}'s delay is below vanilla's at every load (Fig. 5a)",
                            [below(f"{x:g}", k0(p, x), 1.0) for x in xs], ours=", ".join(k0(p, x).text() for x in xs)))
    best = min(LBES, key=lambda p: k0(p, mid).mean)
    claims.append(Near(f"k = 0, ρ = {mid:g}: access control's delay ratio is 0.20 below the LBEs' (\"for ρ = 0.5 "
                       "the difference is 20%\")", k0(best, mid) - k0("rate_tracking", mid), 0.20, PRINTED_TOLERANCE,
                       ours=f"{(k0(best, mid) - k0('rate_tracking', mid)).text()} below the best LBE ({best})"))
    top = [x for x in k1.xs if x >= 0.6] or [k1.xs[-1]]
    for p in LBES:
        claims.append(AllOf(f"k = 1: {p}'s delay is above vanilla's above ρ = 0.6 (Fig. 5b)",
                            [below(f"{x:g}", 1.0, k1(p, x)) for x in top],
                            ours=", ".join(f"{k1(p, x).text()} at {x:g}" for x in top)))
    claims.append(AllOf("k = 1: access control's delay stays below vanilla's (Fig. 5b)",
                        [below(f"{x:g}", k1("rate_tracking", x), 1.0) for x in k1.xs],
                        ours=", ".join(k1("rate_tracking", x).text() for x in k1.xs)))
    claims.append(below("k = 1: access control's delay ratio decreases with the load (§IV-B)",
                        k1("rate_tracking", k1.xs[-1]), k1("rate_tracking", k1.xs[0])))
    for p in ("ledbat", "ledbat_60"):
        r = [k0(p, x, "active_ratio") for x in xs]
        claims.append(AllOf(f"k = 0: {p} keeps more micro-flows active than vanilla, more as the load grows (Fig. 5c)",
                            [below("", 1.0, r[-1]), below("", r[0], r[-1])], ours=", ".join(e.text() for e in r)))
    for p in LBES:
        r = [k1(p, x, "active_ratio") for x in k1.xs]
        claims.append(below(f"k = 1: {p}'s active-micro-flow ratio falls with the load (Fig. 5d)", r[-1], r[0]))
        claims[-1].ours = ", ".join(e.text() for e in r)
    return claims


@reproduction("background-packet-fig5", paper=PAPER, figure="Fig. 5 (a-d), §IV-B",
              title="Single link, ρ_b = 0.3, k = 0 and 1: short-flow delay and active micro-flows over vanilla",
              sizes=FIG5_SIZES, ablation=br.ABLATION)
def fig5(ctx: Context) -> Outcome:
    """Fig. 5: access control (rate tracking) against LEDBAT, LEDBAT-60 and TCP-LP on one link."""
    loads = ctx.size.axis("ρ")
    pts = [p for k in ctx.size.axis("k") for p in points(br.BG_ONE_LINK, single_link_loads, loads, ctx.size, k=k)]
    rows, claims, both = packet_and_flow(ctx, br.BG_ONE_LINK, single_link_loads, loads, pts, judge_with(fig5_claims),
                                         ks=ctx.size.axis("k"))
    s = table_of(both)
    fig = plot_ratios(s, [({"k": 0}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({"k": 1}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({"k": 0}, "active_ratio", "active micro-flows / vanilla's"),
                          ({"k": 1}, "active_ratio", "active micro-flows / vanilla's")])
    mark_figure(fig, claims, "Fig. 5: ours, packet level solid (95% CI), flow level dashed; paper: statements only")
    k1 = Lookup(br.paired_rows(rows, on=["load", "k"]), 1)
    hi = k1.xs[-1]
    return outcome(s, fig, claims, tables=summary_table(s, ("k",)), tolerance=TOLERANCE,
                   intro=packet_intro(ctx, "One 10 Mbps link, 25 ms, 80 ms DropTail buffer, ρ_b = 0.3, Reno"),
                   what=f"k = 1, ρ = {hi:g}: access control {k1('rate_tracking', hi).text()}, LEDBAT "
                        f"{k1('ledbat', hi).text()}, TCP-LP {k1('tcp_lp', hi).text()} of vanilla's delay")


# ----------------------------------------------------------------------------------- Fig. 6

FIG6_POLICIES = ("vanilla", "rate_tracking", "ledbat", "tcp_lp")
SMALL, LARGE = 100_000, 1_000_000
FIG6_SIZES = _sizes(dict(duration=30_000.0, warmup=15_000.0, axes={"ρ": (0.2, 0.6), "policies": FIG6_POLICIES},
                         flow=(10, 2e5)),
                    dict(duration=150_000.0, warmup=50_000.0, settling=47_520.0,
                         settling_note=settled("rate tracking's waiting chunks at ρ = 0.6 (k = 1), not settled within "
                                               "half of a 100,000-s run; its limit 44,520 s"),
                         axes={"ρ": (0.2, 0.6), "policies": FIG6_POLICIES}, flow=(20, 2e6)))


def size_groups(rows: pd.DataFrame, edges=(0, SMALL, LARGE, br.BINS * br.BIN_BYTES)) -> pd.DataFrame:
    """Fig. 6's statements are about sizes below 100 kB, above 1 MB, and in between: per run,
    the mean delay over each group of bins over that of the vanilla run of the same seed."""
    rows = rows[(rows["class"] == "all") & (rows["level"] == "packet")]
    base = rows[rows["policy"] == "vanilla"].set_index(["load", "seed"])
    out = []
    for r in rows.itertuples():
        v = base.loc[(r.load, r.seed)]
        for lo, hi in zip(edges[:-1], edges[1:]):
            sl = slice(lo // br.BIN_BYTES, hi // br.BIN_BYTES)
            ratio = (r.bin_sum[sl].sum() / r.bin_count[sl].sum()) / (v["bin_sum"][sl].sum() / v["bin_count"][sl].sum())
            out.append({"load": r.load, "policy": r.policy, "seed": r.seed, "group": r.group, "from_bytes": lo,
                        "to_bytes": hi, "level": "packet", "class": "all", "delay_ratio": ratio,
                        "carried": r.carried})
    return pd.DataFrame(out)


def bins_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (load, policy, bin): the bin's mean delay over vanilla's bin of the same seed,
    averaged over the seeds where both bins have flows."""
    rows = rows[(rows["class"] == "all") & (rows["level"] == "packet")]
    base = rows[rows["policy"] == "vanilla"].set_index(["load", "seed"])
    out = []
    for (p, x), g in rows.groupby(["policy", "load"], sort=False):
        with np.errstate(invalid="ignore", divide="ignore"):
            mine = np.array([r.bin_sum / r.bin_count for r in g.itertuples()])
            theirs = np.array([base.loc[(r.load, r.seed), "bin_sum"] / base.loc[(r.load, r.seed), "bin_count"]
                               for r in g.itertuples()])
        counts = np.sum([r.bin_count for r in g.itertuples()], axis=0)
        for b in range(br.BINS):
            m, h = mean_ci(mine[:, b] / theirs[:, b])
            out.append({"level": "packet", "load": float(x), "policy": p, "bin_start_bytes": b * br.BIN_BYTES,
                        "delay_ratio": m, "delay_ratio_ci": h, "flows": int(counts[b]), "seeds": len(g),
                        "delay_s": float(np.nanmean(mine[:, b])) if np.isfinite(mine[:, b]).any() else math.nan})
    return pd.DataFrame(out)


def fig6_claims(rows: pd.DataFrame) -> list:
    """The statements of §IV-B about Fig. 6, on the size groups of :func:`size_groups`."""
    g = size_groups(rows)
    loads = sorted(set(g["load"]))
    lo_x, hi_x = loads[0], loads[-1]
    big = [b for b in sorted(set(g["from_bytes"])) if b >= SMALL]

    def v(x, p, frm):
        return br.estimate(g, "delay_ratio", policy=p, load=x, from_bytes=frm)

    claims = [AllOf(f"ρ = {lo_x:g}: access control is similar to LEDBAT above 100 kB",
                    [similar(f"from {b / 1e6:g} MB", v(lo_x, "rate_tracking", b), v(lo_x, "ledbat", b)) for b in big]),
              AllOf(f"ρ = {hi_x:g}: access control does better than or as well as the LBEs above 100 kB",
                    [Greater(f"{p} from {b / 1e6:g} MB", v(hi_x, p, b),
                             v(hi_x, "rate_tracking", b) - Estimate.const(PRINTED_TOLERANCE), RESOLUTION)
                     for b in big for p in ("ledbat", "tcp_lp")])]
    for x in (lo_x, hi_x):
        claims.append(below(f"ρ = {x:g}: LEDBAT gives smaller delays than access control below 100 kB",
                            v(x, "ledbat", 0), v(x, "rate_tracking", 0)))
    for p in ("ledbat", "tcp_lp"):
        claims.append(below(f"ρ = {hi_x:g}: {p} is worse than vanilla above 1 MB", 1.0, v(hi_x, p, LARGE)))
    claims.append(AllOf("access control is better than vanilla for all flow sizes",
                        [below(f"{x:g}, from {b / 1e6:g} MB", v(x, "rate_tracking", b), 1.0)
                         for x in (lo_x, hi_x) for b in sorted(set(g["from_bytes"]))]))
    return claims


def plot_fig6(bins: pd.DataFrame, flow_s: pd.DataFrame):
    plt = pyplot()
    loads = sorted(bins["load"].unique())
    fig, axes = plt.subplots(1, len(loads), figsize=(5.6 * len(loads), 4.6), squeeze=False)
    for ax, x in zip(axes.flat, loads):
        for p, g in bins[(bins["load"] == x) & (bins["policy"] != "vanilla")].groupby("policy", sort=False):
            ax.errorbar(g["bin_start_bytes"] / 1e6, g["delay_ratio"], yerr=g["delay_ratio_ci"], color=COLORS[p],
                        lw=0.9, ms=2, marker="o", capsize=0, elinewidth=0.4, label=f"packet: {p}")
        for r in flow_s[(flow_s["load"] == x) & (flow_s["policy"] != "vanilla")].itertuples():
            ax.axhline(r.delay_ratio, color=COLORS[r.policy], ls="--", lw=0.9, label=f"flow (all sizes): {r.policy}")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.axvline(0.1, color="gray", lw=0.5, ls=":")
        ax.set_xlabel("short-flow size, bin start (MB; bins of 50 kB)")
        ax.set_ylabel("mean delay in the bin / vanilla's")
        ax.set_title(f"k = 1, ρ = {x:g}", fontsize=8)
        ax.grid(alpha=0.3)
        ax.set_ylim(0, 2.5)
    axes.flat[0].legend(fontsize=6.5)
    return fig


@reproduction("background-packet-fig6", paper=PAPER, figure="Fig. 6 (a, b), §IV-B",
              title="Single link, k = 1, ρ = 0.2 and 0.6: short-flow delay against size (100 bins of 50 kB)",
              sizes=FIG6_SIZES, ablation=br.ABLATION)
def fig6(ctx: Context) -> Outcome:
    """Fig. 6: the delay ratio to vanilla per size bin, k = 1."""
    loads = ctx.size.axis("ρ")
    pts = points(br.BG_ONE_LINK, single_link_loads, loads, ctx.size, policies=FIG6_POLICIES, k=1)
    rows, claims, both = packet_and_flow(ctx, br.BG_ONE_LINK, single_link_loads, loads, pts, fig6_claims, ks=(1,),
                                         bins=True)
    overall = table_of(both)
    bins = bins_table(rows)
    groups = summary(size_groups(rows), ["load", "policy", "from_bytes", "to_bytes"], ["delay_ratio"])
    fig = plot_fig6(bins, overall[overall["level"] == "flow"])
    mark_figure(fig, claims, "Fig. 6: ours, packet level (95% CI per bin), flow level dashed (all sizes); "
                             "paper: statements only")
    gt = "\n".join(f"| {r.load:g} | {r.policy} | {r.from_bytes / 1e6:g}-{r.to_bytes / 1e6:g} | {r.seeds} | "
                   f"{r.delay_ratio:.2f} ± {r.delay_ratio_ci:.2f} |" for r in groups[groups["policy"] != "vanilla"]
                   .itertuples())
    tables = f"""Per size group (MB), paired with vanilla by seed:

| ρ | policy | size (MB) | seeds | delay ratio |
|---|---|---|---|---|
{gt}

All sizes together, both levels:

{summary_table(overall)}

The per-bin table is the CSV (`load, policy, bin_start_bytes, delay_ratio, delay_ratio_ci, delay_s, flows`)."""
    t = groups.set_index(["load", "policy", "from_bytes"])
    hi = max(loads)
    pk = overall[(overall["level"] == "packet") & (overall["policy"] == "rate_tracking")]["carried"]
    intro = packet_intro(ctx, "One link with one long Reno flow (k = 1), ρ_b = 0.3") + (
        " The short flows are put in 100 bins of 50 kB by size (0-5 MB, 81% of the flows); per bin, the mean delay "
        "over that of the vanilla run of the same seed, averaged over seeds (a bin holds a few dozen flows per run, "
        "so single bins are noisy: the statements are checked on three groups of bins). LEDBAT-60 is left out as in "
        "the paper.")
    return outcome(bins, fig, claims, intro=intro, tables=tables, tolerance=TOLERANCE,
                   what=f"ρ = {hi:g} above 1 MB: access control {t.at[(hi, 'rate_tracking', LARGE), 'delay_ratio']:.2f}, "
                        f"LEDBAT {t.at[(hi, 'ledbat', LARGE), 'delay_ratio']:.2f} of vanilla's delay; access control "
                        f"carried {pk.min():.2f}-{pk.max():.2f} of its offered load")


# ----------------------------------------------------------------------------------- Fig. 7

FIG7_SIZES = _sizes(dict(duration=30_000.0, warmup=15_000.0, axes={"ρ": (0.3, 0.5, 0.65), "policies": POLICIES},
                         flow=(10, 2e5)),
                    dict(duration=80_000.0, warmup=20_000.0, axes={"ρ": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65),
                                                                   "policies": POLICIES}, flow=(20, 2e6)))


def fig7_claims(t: pd.DataFrame) -> list:
    """The statements of §IV-C about Fig. 7, on paired packet-level rows."""
    v = Lookup(t)
    xs, hi = v.xs, v.xs[-1]
    low = [x for x in xs if x < 0.5] or [xs[0]]
    claims = [AllOf("access control's delay is similar to LEDBAT's below ρ = 0.5 (Fig. 7a)",
                    [similar(f"{x:g}", v("rate_tracking", x), v("ledbat", x)) for x in low])]
    peak = max(xs[:-1], key=lambda x: v("ledbat", x, "active_ratio").mean) if len(xs) > 1 else xs[0]
    claims.append(below("LEDBAT's active-micro-flow ratio falls again above ρ = 0.5 (Fig. 7b)",
                        v("ledbat", hi, "active_ratio"), v("ledbat", peak, "active_ratio")))
    claims[-1].ours = ", ".join(f"{v('ledbat', x, 'active_ratio').text()} at {x:g}" for x in xs)
    if abs(hi - 0.65) < 1e-9:
        claims.append(Near("LEDBAT's delay is 10% below vanilla's at 95% total load (ρ = 0.65)", v("ledbat", hi), 0.90,
                           PRINTED_TOLERANCE))
        claims.append(Near("access control's delay is 28% below vanilla's at 95% total load",
                           v("rate_tracking", hi), 0.72, PRINTED_TOLERANCE))
    claims.append(below(f"access control's delay is below LEDBAT's at ρ = {hi:g}", v("rate_tracking", hi),
                        v("ledbat", hi)))
    return claims


@reproduction("background-packet-fig7", paper=PAPER, figure="Fig. 7 (a, b), §IV-C",
              title="Two links, ρ_b = 0.3 across both, k = 0: short-flow delay and active micro-flows over vanilla",
              sizes=FIG7_SIZES, ablation=br.ABLATION)
def fig7(ctx: Context) -> Outcome:
    """Fig. 7: two links, the background crossing both."""
    loads = ctx.size.axis("ρ")
    rows, claims, both = packet_and_flow(ctx, br.BG_TWO_LINKS, two_link_loads, loads,
                                         points(br.BG_TWO_LINKS, two_link_loads, loads, ctx.size), judge_with(fig7_claims))
    s = table_of(both)
    fig = plot_ratios(s, [({}, "delay_ratio", "short-flow delay / vanilla's"),
                          ({}, "active_ratio", "active micro-flows / vanilla's")],
                      paper={0: [("rate_tracking", 0.65, 0.72), ("ledbat", 0.65, 0.90)]})
    mark_figure(fig, claims, "Fig. 7: ours, packet level solid (95% CI), flow level dashed; paper (crosses): 0.90 "
                             "(LEDBAT) and 0.72 (access) at ρ = 0.65, from its text")
    v = Lookup(br.paired_rows(rows, on=["load", "k"]))
    hi = v.xs[-1]
    intro = packet_intro(ctx, "Two 10 Mbps links (25 ms, 80 ms DropTail each); the background (ρ_b = 0.3) crosses "
                              "both, each link has its own short flows of load ρ; no long flow") + (
        " The delay is that of all short flows (both links; they have the same load). Paper's numbers: from the text "
        "of §IV-C (\"only 10% at 95% total load\", \"the reduction is 28% for the same load\"), exact as printed; 95% "
        "total load is ρ = 0.65.")
    return outcome(s, fig, claims, intro=intro, tables=summary_table(s), tolerance=TOLERANCE,
                   what=f"ρ = {hi:g}: access control {v('rate_tracking', hi).text()} (paper 0.72), LEDBAT "
                        f"{v('ledbat', hi).text()} (paper 0.90) of vanilla's delay")


# ----------------------------------------------------------------------------------- Fig. 9

ROUTES = ("1", "123", "2", "23")
FIG9_SIZES = _sizes(dict(duration=30_000.0, warmup=15_000.0, axes={"ρ1": (0.3, 0.5), "policies": POLICIES},
                         flow=(10, 2e5)),
                    dict(duration=80_000.0, warmup=20_000.0, settling=18_720.0,
                         settling_note=settled("rate tracking's active chunks at ρ1 = 0.5"),
                         axes={"ρ1": (0.3, 0.5), "policies": POLICIES}, flow=(20, 2e6)))


def fig9_claims(t: pd.DataFrame) -> list:
    """The statements of §IV-D about Fig. 9, on paired packet-level rows (per route)."""
    r = {x: Lookup(t, cls=f"web_{x}") for x in ROUTES}
    lo, hi = min(r["1"].xs), max(r["1"].xs)
    both = (lo, hi)
    claims = [AllOf("ρ1 = 0.3: the LBEs bring no significant saving on route 1 (ratio near 1; TCP-LP at or above it)",
                    [Near(p, r["1"](p, lo), 1.0, PRINTED_TOLERANCE) if p != "tcp_lp" else below(p, 1.0, r["1"](p, lo))
                     for p in LBES])]
    tcp_lp = [r[x]("tcp_lp", lo) for x in ROUTES]
    mean_lp = Estimate.of({s: np.mean([dict(e.values)[s] for e in tcp_lp])
                           for s in set.intersection(*(set(e.seeds) for e in tcp_lp))}, groups=tcp_lp[0].groups)
    claims.append(below("TCP-LP gives higher delays than vanilla (ρ1 = 0.3; the mean of the four routes' ratios)",
                        1.0, mean_lp))
    for x in ("1", "2"):
        claims.append(AllOf(f"access control gives the lowest delay on route {x} (both ρ1)",
                            [below(f"{p} at {y:g}", r[x]("rate_tracking", y), r[x](p, y)) for y in both for p in LBES]))
    for x in ("123", "23"):
        claims.append(AllOf(f"route {x}: access control is close to LEDBAT, the lowest there",
                            [similar(f"{y:g}", r[x]("rate_tracking", y), r[x]("ledbat", y)) for y in both]))
    for x in ("1", "123"):
        best = {y: min(LBES, key=lambda p: r[x](p, y).mean) for y in both}
        gap = {y: r[x](best[y], y) - r[x]("rate_tracking", y) for y in both}
        claims.append(Greater(f"route {x}: access control's advantage over the LBEs grows from ρ1 = 0.3 to 0.5",
                              gap[hi], gap[lo], RESOLUTION, ours=f"{gap[lo].text()} at 0.3, {gap[hi].text()} at 0.5"))
    return claims


def plot_fig9(s: pd.DataFrame):
    plt = pyplot()
    rho1 = sorted(s["load"].unique())
    fig, axes = plt.subplots(1, len(rho1), figsize=(6 * len(rho1), 4.6), squeeze=False)
    pols = [p for p in POLICIES if p != "vanilla"]
    w = 0.8 / len(pols)
    for ax, y in zip(axes.flat, rho1):
        for i, p in enumerate(pols):
            g = s[(s["load"] == y) & (s["policy"] == p) & (s["level"] == "packet")].set_index("route").loc[list(ROUTES)]
            pos = np.arange(len(ROUTES)) + (i - (len(pols) - 1) / 2) * w
            ax.bar(pos, g["delay_ratio"], w, yerr=g["delay_ratio_ci"], color=COLORS[p], capsize=2, label=p)
            f = s[(s["load"] == y) & (s["policy"] == p) & (s["level"] == "flow")]
            if len(f):
                f = f.set_index("route").loc[list(ROUTES)]
                ax.plot(pos, f["delay_ratio"], "D", mfc="white", mec="k", ms=5,
                        label=f"flow: {p}" if y == rho1[0] else None)
        f = s[(s["load"] == y) & (s["policy"] == "low_priority")].set_index("route")
        if len(f):
            ax.plot(np.arange(len(ROUTES)), f.loc[list(ROUTES), "delay_ratio"], "^", color=COLORS["low_priority"],
                    label="flow: ideal low priority")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xticks(np.arange(len(ROUTES)), [f"route{x}" for x in ROUTES])
        ax.set_ylabel("short-flow delay / vanilla's")
        ax.set_title(f"ρ1 = {y:g}", fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    axes.flat[0].legend(fontsize=6.5)
    return fig


@reproduction("background-packet-fig9", paper=PAPER, figure="Figs. 8-9, §IV-D",
              title="Three links, routes 1, 123, 2, 23, ρ1 = 0.3 and 0.5: short-flow delay per route over vanilla",
              sizes=FIG9_SIZES, ablation=br.ABLATION)
def fig9(ctx: Context) -> Outcome:
    """Fig. 9: three links, three background servers, short flows on four routes."""
    loads = ctx.size.axis("ρ1")
    rows, claims, both = packet_and_flow(ctx, br.BG_THREE_LINKS, three_link_loads, loads,
                                         points(br.BG_THREE_LINKS, three_link_loads, loads, ctx.size),
                                         judge_with(fig9_claims))
    s = table_of(both, cls="")
    s = s[s["class"] != "all"].reset_index(drop=True)
    s.insert(0, "route", s["class"].str.removeprefix("web_"))
    s = s.drop(columns="class")
    fig = plot_fig9(s)
    mark_figure(fig, claims, "Fig. 9: ours, packet level bars (95% CI), flow level markers; paper: statements only")
    rows_md = "\n".join(f"| {r.level} | {r.load:g} | {r.route} | {r.policy} | {r.seeds} | {r.delay_ratio:.2f} ± "
                        f"{r.delay_ratio_ci:.2f} | {r.delay:.1f} | {r.mean_active:.2f} | {r.carried:.3f} |"
                        for r in s[s["policy"] != "vanilla"].itertuples())
    tables = ("| level | ρ1 | route | policy | seeds | delay ratio | short delay (s) | active (all servers) | "
              "carried / offered |\n|---|---|---|---|---|---|---|---|---|\n" + rows_md)
    r1 = Lookup(br.paired_rows(rows, on=["load", "k"]), cls="web_1")
    intro = packet_intro(ctx, "Three 10 Mbps links in a line (25 ms, 80 ms DropTail each); routes as in Fig. 8: "
                              "route 1 carries short flows of load ρ1, routes 123, 2, 23 a background server of load "
                              "0.2, 0.1, 0.1 and short flows of the same load (link loads ρ1 + 0.4, 0.8, 0.6); every "
                              "server under the same policy, each with its own limit")
    return outcome(s, fig, claims, intro=intro, tables=tables, tolerance=TOLERANCE,
                   what=f"route 1 at ρ1 = {max(loads):g}: access control {r1('rate_tracking', max(loads)).text()}, "
                        f"LEDBAT {r1('ledbat', max(loads)).text()}, TCP-LP {r1('tcp_lp', max(loads)).text()} of "
                        "vanilla's delay")
