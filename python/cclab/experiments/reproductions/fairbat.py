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

Each entry reads as runs -> claims -> figure: its packet-level points and the rows they
give come from :mod:`.background_runs` (shared with the background paper's entries),
they run through the result store with seeds added until each claim is known
(:func:`cclab.experiments.runs.replicate`), and the claims use the one vocabulary of
:mod:`cclab.experiments.claims`.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

from ...plotting import pyplot
from ..catalogue import Context, Outcome, reproduction
from ..claims import AllOf, Estimate, Greater, Near, Within, mark_figure, outcome
from ..paired import summary
from ..runs import flow_memo, replicate, run_points
from ..sizes import Size, Sizes, settled
from . import background_runs as br

PAPER = "fairbat-incentive-compatible-background"

#: The lower-than-best-effort protocols FAIRBAT is compared with (Figs. 1, 2, 5, Table I).
LBES = ("ledbat", "ledbat_a", "tcp_lp")
FIG1_POLICIES = ("vanilla", "fairbat", *LBES)
#: Web load of the single-link experiments (§IV-A: web flows at 1/8 per second).
WEB_LOAD = 0.3
#: An improvement below this many points is "negligible" (Fig. 2, §IV-A: "others' LBE
#: impact is negligible or even negative"; our reading).
NEGLIGIBLE_PCT = 10.0
#: Differences of improvement (points) and of active-chunk ratios too small to matter:
#: an ordering is known once its interval is narrower than half of these (claims.py).
RESOLUTION_PCT = 5.0
RESOLUTION_RATIO = 0.1
#: Flow level against Theorem 7: allowed shortfall of FAIRBAT's improvement in points
#: (the limit fluctuates, and the rate of M connections is concave in M; docs/protocols.md).
THEORY_TOLERANCE_PCT = 3.0
#: The flow-level model of FAIRBAT must carry this much of its load (§III; its offered
#: bytes vary by about 1% over a replication).
FLOW_CARRIED_MIN = 0.97

SINGLE = br.FAIRBAT_ONE_LINK
TWO = br.FAIRBAT_TWO_LINKS


def theorem7_improvement(background_load, k: int, web_load: float = WEB_LOAD):
    """The web flows' delay improvement (%) of access control at the critical limit over
    vanilla, on one link: [BG] Theorem 7 with eq. (16) gives (k+M*+1)ρ/(1−ρ) web flows at
    M* = kρ_b/(1−ρ−ρ_b) (eq. 27), vanilla (k+1)ρ/(1−ρ−ρ_b) (multiclass processor
    sharing); their ratio is 1 − ρ_b/((k+1)(1−ρ)), the FAIRBAT paper's ρ_b/((1−ρ_s)(k+1))
    trend of Fig. 3. At k = 0 it is the limit M* → 0 (the web flows see no background)."""
    return 100.0 * np.asarray(background_load, dtype=float) / ((k + 1) * (1.0 - web_load))


def critical_limit(background_load, k, web_load: float = WEB_LOAD):
    """M* of [BG] eq. (27), ρ_b/(1−ρ) = M/(k+M): M* = kρ_b/(1−ρ−ρ_b)."""
    b = np.asarray(background_load, dtype=float)
    return np.asarray(k, dtype=float) * b / (1 - web_load - b)


# --------------------------------------------------------------------------------------------- shared


def single_link_points(size: Size, policies: Iterable[str], loads: Iterable[float], k: int = 0) -> list:
    """Packet-level points of the single link: every policy at every background load,
    web load 0.3; one replication group per (load, k)."""
    return [br.packet_point(SINGLE, p, {"web": WEB_LOAD, "background": b}, size, k=k,
                            labels={"background_load": b}, group=(b, k))
            for b in loads for p in policies]


def single_link_flow(ctx: Context, policies: Iterable[str], loads: Iterable[float], k: int = 0,
                     params: dict | None = None, labels: dict | None = None) -> list[dict]:
    """Flow-level rows of the single link (the model of the theory: 10 Mbps, loads as
    fractions of it), from the result store's memo when already computed."""
    reps, duration = ctx.size.flow
    memo = flow_memo(ctx)
    return [row for b in loads for p in policies
            for row in br.flow_rows(SINGLE, p, {"web": WEB_LOAD, "background": b}, k=k, duration=duration,
                                    replications=reps, seed=ctx.seed, payload=False, params=params,
                                    labels={"background_load": b, **(labels or {})}, memo=memo)]


def table_of(rows: pd.DataFrame, x: str, by: Iterable[str] = ()) -> pd.DataFrame:
    """The entry's table: per level, policy, ``x`` (and ``by``), k: means and 95% half-widths
    of the paired ratios and the raw measures, over the rows of all web flows together."""
    t = br.paired_rows(rows, on=[x, "k", *by])
    t = t[t["class"] == "all"]
    cols = ["improvement_pct", "active_ratio", "variance_ratio", "delay", "mean_active", "mean_waiting",
            "mean_limit", "sd_limit", "carried"]
    return summary(t, ["level", "policy", x, "k", *by], cols)


class Lookup:
    """A claim's quantities over paired rows: ``val(policy, x, column)`` as an Estimate."""

    def __init__(self, paired: pd.DataFrame, x: str, level: str = "packet", **fixed):
        self.t, self.x, self.level, self.fixed = paired, x, level, fixed
        sel = paired[paired["level"] == level]
        self.xs = sorted(set(sel[x]))

    def __call__(self, policy: str, xv: float, col: str = "improvement_pct") -> Estimate:
        fmt = "{:.1f}" if col == "improvement_pct" else "{:.2f}"
        return br.estimate(self.t, col, level=self.level, fmt=fmt, policy=policy, **{self.x: xv}, **self.fixed)


def carried_claim(val: Lookup, policy: str, xs, what: str = "") -> AllOf:
    """§III: the policy serves the arriving chunks (carried/offered ≥ 0.98 at every point)."""
    parts = [Within(f"{val.x} {x:g}", val(policy, x, "carried"), lo=0.98) for x in xs]
    return AllOf(f"{what or policy} serves the arriving chunks: carried/offered ≥ 0.98 (§III, incentive "
                 "compatibility)", parts, ours=", ".join(f"{x:g}: {p.a.mean:.3f}" for x, p in zip(xs, parts)))


def increasing(text: str, values: list[Estimate], resolution: float) -> AllOf:
    """Each value above the one before."""
    return AllOf(text, [Greater("", values[i + 1], values[i], resolution) for i in range(len(values) - 1)],
                 ours=", ".join(v.text() for v in values))


_COLORS = {"fairbat": "k", "ledbat": "tab:blue", "ledbat_a": "tab:cyan", "tcp_lp": "tab:red",
           "low_priority": "tab:gray", "rate_tracking": "tab:green", "access": "tab:olive",
           "ledbat_60": "tab:purple", "vanilla": "tab:brown"}


def plot_lines(s: pd.DataFrame, x: str, xlabel: str, *, theory: dict | None = None,
               vline: tuple[float, str] | None = None):
    """Improvement (top) and active-chunk ratio (bottom) against ``x``; packet level solid
    with 95% intervals, flow level dashed; ``theory``: label -> (xs, ys) drawn dotted on
    the top panel; ``vline``: (x, label) marked on both."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(6.8, 7.8), sharex=True)
    for ax, col, lab in [(axes[0], "improvement_pct", "web delay improvement over vanilla (%)"),
                         (axes[1], "active_ratio", "active chunks / vanilla's")]:
        for (lvl, p), g in s[s["policy"] != "vanilla"].groupby(["level", "policy"], sort=False):
            g = g.sort_values(x)
            ax.errorbar(g[x], g[col], yerr=g[col + "_ci"], color=_COLORS.get(p), ls="-" if lvl == "packet" else "--",
                        marker="o" if lvl == "packet" else "s", ms=4, capsize=2, label=f"ours, {lvl} level: {p}")
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
    return fig


def level_table(s: pd.DataFrame, level: str, x: str, theory: bool = False) -> str:
    """The rows of one level of an entry's table (vanilla left out), as Markdown."""
    g = s[(s["level"] == level) & (s["policy"] != "vanilla")]
    head = (f"| policy | {x} | k | seeds | improvement (%) |{' Theorem 7 (%) |' if theory else ''} active ratio | "
            "web delay (s) | active chunks | mean limit | carried / offered |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in g.itertuples():
        th = f" {float(theorem7_improvement(getattr(r, x), r.k)):.1f} |" if theory else ""
        lim = "" if math.isnan(r.mean_limit) else f"{r.mean_limit:.2f}"
        lines.append(f"| {r.policy} | {getattr(r, x):g} | {r.k} | {r.seeds} | {r.improvement_pct:.1f} ± "
                     f"{r.improvement_pct_ci:.1f} |{th} {r.active_ratio:.2f} ± {r.active_ratio_ci:.2f} | {r.delay:.2f} | "
                     f"{r.mean_active:.2f} | {lim} | {r.carried:.3f} |")
    return "\n".join(lines)


SETUP_TEXT = ("10 Mbps, 25 ms, 100-packet buffer, Reno, web load 0.3, exponential sizes of mean 3 MB "
              "(`scenarios/fairbat/single-link.toml`)")


def _sizes(seeds: tuple[int, int, int, int], quick: dict, full: dict) -> Sizes:
    """Quick and full sizes: (first, most) seeds of each, then their other fields."""
    return Sizes(Size(seeds=seeds[0], max_seeds=seeds[1], **quick), Size(seeds=seeds[2], max_seeds=seeds[3], **full))


# --------------------------------------------------------------------------------------------- Fig. 1

FIG1_SIZES = _sizes((3, 4, 10, 30),
                    dict(duration=30_000.0, warmup=15_000.0, axes={"ρ_b": (0.2, 0.4, 0.6), "policies": FIG1_POLICIES},
                         flow=(10, 1e6)),
                    dict(duration=80_000.0, warmup=20_000.0, settling=9_720.0, settling_note=settled(
                        "FAIRBAT's limit, fairbat-fig2's k = 3 at ρ_b = 0.6 (fig1's k = 0: 5,520 s)"),
                         axes={"ρ_b": (0.2, 0.3, 0.4, 0.5, 0.6),
                                                                   "policies": FIG1_POLICIES}, flow=(20, 1e7)))


def fig1_claims(t: pd.DataFrame) -> list:
    """The statements of §IV-A and Fig. 1's captions, on paired packet-level rows."""
    val = Lookup(t, "background_load")
    loads = val.xs
    lo, hi = loads[0], loads[-1]
    lbes = [p for p in ("fairbat", *LBES) if p in set(t["policy"])]
    claims = [AllOf("every policy improves the web delay at every load (Fig. 1a caption)",
                    [Greater(f"{p} at {b:g}", val(p, b), 0.0, RESOLUTION_PCT) for p in lbes for b in loads]),
              carried_claim(val, "fairbat", loads, "FAIRBAT")]
    claims[0].ours = "smallest " + min((val(p, b) for p in lbes for b in loads), key=lambda e: e.mean).text() + "%"
    for p in ("fairbat", "ledbat"):
        claims.append(Greater(f"{p}: the improvement grows with the background load (Fig. 1a caption)",
                              val(p, hi), val(p, lo), RESOLUTION_PCT))
    for p in ("ledbat", "tcp_lp"):
        claims.append(Greater(f"{p} outperforms FAIRBAT at low load (§IV-A)", val(p, lo), val("fairbat", lo),
                              RESOLUTION_PCT))
    claims.append(Greater("FAIRBAT outperforms TCP-LP at high load (§IV-A)", val("fairbat", hi), val("tcp_lp", hi),
                          RESOLUTION_PCT))
    claims.append(increasing("LEDBAT's active-chunk ratio increases strictly with the load (§IV-A, Fig. 1b)",
                             [val("ledbat", b, "active_ratio") for b in loads], RESOLUTION_RATIO))
    if 0.4 in loads:
        lp = {b: val("tcp_lp", b, "active_ratio") for b in loads}
        claims.append(AllOf("TCP-LP's active-chunk ratio rises up to ρ_b = 0.4 and falls beyond (§IV-A)",
                            [Greater("", lp[0.4], lp[lo], RESOLUTION_RATIO),
                             Greater("", lp[0.4], lp[hi], RESOLUTION_RATIO)],
                            ours=", ".join(lp[b].text() for b in loads)))
    claims.append(Greater("LEDBAT~a gains less than LEDBAT (§IV-A) ...", val("ledbat", hi), val("ledbat_a", hi),
                          RESOLUTION_PCT))
    claims.append(Greater("... and accumulates fewer active chunks (§IV-A)", val("ledbat", hi, "active_ratio"),
                          val("ledbat_a", hi, "active_ratio"), RESOLUTION_RATIO))
    return claims


def packet_claims(judge, x: str, by: Iterable[str] = ()):
    """``judge`` over the paired packet rows: what :func:`replicate` asks of a set of rows."""
    return lambda rows: judge(br.paired_rows(rows, on=[x, "k", *by]))


@reproduction("fairbat-fig1", paper=PAPER, figure="Fig. 1 (a, b)",
              title="Web-delay improvement and active-chunk ratio, no long flows, web load 0.3", sizes=FIG1_SIZES,
              ablation=br.ABLATION)
def fig1(ctx: Context) -> Outcome:
    """Fig. 1: FAIRBAT against LEDBAT, LEDBAT~a and TCP-LP on one link without long flows."""
    loads = ctx.size.axis("ρ_b")
    rows, claims = replicate(ctx, "packet", single_link_points(ctx.size, FIG1_POLICIES, loads), br.Measure(SINGLE),
                             packet_claims(fig1_claims, "background_load"), keep=br.KEEP)
    flow = pd.DataFrame(single_link_flow(ctx, ("vanilla", "fairbat", "low_priority"), loads))
    s = table_of(pd.concat([rows, flow], ignore_index=True), "background_load")
    fb = s[(s["level"] == "packet") & (s["policy"] == "fairbat")]
    both = s[s["policy"] == "fairbat"].pivot(index="background_load", columns="level", values="improvement_pct")
    fig = plot_lines(s, "background_load", "background load ρ_b (web load 0.3, no long flows)")
    mark_figure(fig, claims, "Fig. 1: ours, packet level solid (95% CI), flow level dashed; paper: no printed values")
    intro = f"""
The paper prints no number for Fig. 1 (our copy has its captions and text, not the
plots), so the comparison is with its statements, checked on the packet-level means
({SETUP_TEXT}; {ctx.size.duration:g} s per run, the first {ctx.size.warmup:g} s discarded; each run
paired with the vanilla run of the same seed, whose arrivals are the same). The flow level
(`cclab.flowsim`, the same link in bytes and seconds, FAIRBAT with the same controller;
`low_priority` is the ideal lower-than-best-effort class the flow model has in place of
LEDBAT and TCP-LP) is beside; FAIRBAT's improvement at the two levels differs by at most
{(both['packet'] - both['flow']).abs().max():.1f} points."""
    tables = f"Packet level:\n\n{level_table(s, 'packet', 'background_load')}\n\nFlow level:\n\n" \
             f"{level_table(s, 'flow', 'background_load')}"
    return outcome(s, fig, claims, intro=intro, tables=tables,
                   what=f"FAIRBAT improves the web delay by {fb.improvement_pct.min():.0f}-{fb.improvement_pct.max():.0f}%",
                   tolerance=f"a difference of improvements below {RESOLUTION_PCT:g} points or of active ratios "
                             f"below {RESOLUTION_RATIO:g} does not matter")


# --------------------------------------------------------------------------------------------- Fig. 2 and Table I

#: Fig. 2 and Table I: three long-lived Reno flows beside the chunks (§IV-A).
FIG2_K = 3
#: Fig. 1's grid, lengths and seeds (the long flows are the only difference).
FIG2_SIZES = FIG1_SIZES


def fig2_claims(t: pd.DataFrame) -> list:
    """The statements of §IV-A on Fig. 2 (k = 3), on paired packet-level rows."""
    val = Lookup(t, "background_load")
    loads = val.xs
    lo, hi = loads[0], loads[-1]
    fb = [val("fairbat", b) for b in loads]
    claims = [AllOf("FAIRBAT improves the web delay at every load (Fig. 2a: \"a clear gain\")",
                    [Greater(f"{b:g}", e, 0.0, RESOLUTION_PCT) for b, e in zip(loads, fb)],
                    ours=", ".join(e.text() for e in fb)),
              Greater("... especially at the higher loads (§IV-A)", fb[-1], fb[0], RESOLUTION_PCT),
              carried_claim(val, "fairbat", loads, "FAIRBAT")]
    for p in LBES:
        claims.append(AllOf(f"{p}: impact negligible or negative (below {NEGLIGIBLE_PCT:g}%; Fig. 2a caption)",
                            [Greater(f"{b:g}", NEGLIGIBLE_PCT, val(p, b), RESOLUTION_PCT) for b in loads],
                            ours=", ".join(val(p, b).text() for b in loads)))
        claims.append(Greater(f"FAIRBAT beats {p} at the highest load (Fig. 2a)", fb[-1], val(p, hi), RESOLUTION_PCT))
        claims.append(Greater(f"{p}'s chunks accumulate: more active than vanilla's (§IV-A)",
                              val(p, hi, "active_ratio"), 1.0, RESOLUTION_RATIO))
    return claims


def fig2_flow_claims(t: pd.DataFrame) -> list:
    """The flow-level FAIRBAT against Theorem 7 ([BG] eq. 16 and 27)."""
    val = Lookup(t, "background_load", level="flow")
    parts = [Greater(f"{b:g}", val("fairbat", b), float(theorem7_improvement(b, FIG2_K)) - THEORY_TOLERANCE_PCT)
             for b in val.xs]
    return [AllOf(f"flow level: FAIRBAT within {THEORY_TOLERANCE_PCT:g} points below Theorem 7 "
                  "(ρ_b/((k+1)(1−ρ)), [BG] eq. 16, 27)", parts,
                  ours=", ".join(f"{p.a.mean - float(theorem7_improvement(b, FIG2_K)):+.1f}"
                                 for b, p in zip(val.xs, parts)))]


def fig2_runs(ctx: Context, judge) -> tuple[pd.DataFrame, list]:
    """The packet-level runs of Fig. 2 (which Table I reads too: the store keeps them) with
    seeds added until ``judge``'s claims are known, and the flow level's rows."""
    loads = ctx.size.axis("ρ_b")
    rows, claims = replicate(ctx, "packet", single_link_points(ctx.size, FIG1_POLICIES, loads, k=FIG2_K),
                             br.Measure(SINGLE), packet_claims(judge, "background_load"), keep=br.KEEP)
    flow = pd.DataFrame(single_link_flow(ctx, ("vanilla", "fairbat", "rate_tracking"), loads, k=FIG2_K))
    return pd.concat([rows, flow], ignore_index=True), claims


@reproduction("fairbat-fig2", paper=PAPER, figure="Fig. 2 (a, b)",
              title="Web-delay improvement and active-chunk ratio with three long-lived flows, web load 0.3",
              sizes=FIG2_SIZES, ablation=br.ABLATION)
def fig2(ctx: Context) -> Outcome:
    """Fig. 2: FAIRBAT against the LBEs on one link beside k = 3 long-lived Reno flows."""
    rows, claims = fig2_runs(ctx, fig2_claims)
    claims += fig2_flow_claims(br.paired_rows(rows, on=["background_load", "k"]))
    s = table_of(rows, "background_load")
    loads = sorted(s["background_load"].unique())
    fb = s[(s["level"] == "packet") & (s["policy"] == "fairbat")]
    xs = np.linspace(min(loads), max(loads), 50)
    fig = plot_lines(s, "background_load", "background load ρ_b (web load 0.3, k = 3 long-lived flows)",
                     theory={"Theorem 7 at M*: ρ_b/(4(1−ρ))": (xs, theorem7_improvement(xs, FIG2_K))})
    mark_figure(fig, claims, "Fig. 2: ours, packet level solid (95% CI), flow level dashed; paper: no printed values")
    intro = f"""
The paper prints no number for Fig. 2; its statements (§IV-A, Fig. 2 caption) are checked
on the packet-level means ({SETUP_TEXT}, and three long-lived Reno flows from the start;
{ctx.size.duration:g} s per run, the first {ctx.size.warmup:g} s discarded). "Negligible" is ours:
an improvement below {NEGLIGIBLE_PCT:g}%. The flow level is checked against Theorem 7 of the
background paper, whose improvement at the critical limit is ρ_b/((k+1)(1−ρ)) (the trend of
Fig. 3), with the crate test's tolerance (`fairbat_improves_web_delay_as_theorem_7_predicts`):
at most {THEORY_TOLERANCE_PCT:g} points below it. At ρ_b = 0.6 the link is at the edge of what Reno
carries (web 0.3 and chunks 0.6 of the link in payload leave 0.07 of the 9.73 Mbit/s of payload a
10 Mbit/s link carries in 1500-byte packets), so the critical limit there is close to vanilla's
active count (docs/reproduction/fairbat.md)."""
    tables = f"Packet level:\n\n{level_table(s, 'packet', 'background_load')}\n\nFlow level:\n\n" \
             f"{level_table(s, 'flow', 'background_load', theory=True)}"
    return outcome(s, fig, claims, intro=intro, tables=tables,
                   what=f"packet-level FAIRBAT {fb.improvement_pct.min():.0f} to {fb.improvement_pct.max():.0f}% over "
                        f"ρ_b = {loads[0]:g}-{loads[-1]:g} (Theorem 7: {float(theorem7_improvement(loads[0], FIG2_K)):.0f}"
                        f" to {float(theorem7_improvement(loads[-1], FIG2_K)):.0f}%)",
                   tolerance=f"a difference of improvements below {RESOLUTION_PCT:g} points or of active ratios "
                             f"below {RESOLUTION_RATIO:g} does not matter; flow level at most "
                             f"{THEORY_TOLERANCE_PCT:g} points below Theorem 7")


#: Table I of the FAIRBAT paper: normalized sample variance of the web flows' delays
#: (each protocol's over vanilla's), per background load 0.2 ... 0.6.
TABLE1: dict[str, tuple[float, ...]] = {
    "fairbat": (0.8314, 0.7173, 0.6278, 0.5763, 0.4679),
    "ledbat": (0.9900, 0.9706, 0.9637, 0.9407, 1.131),
    "tcp_lp": (0.9327, 0.9152, 0.9727, 1.0891, 1.443),
    "ledbat_a": (0.9574, 0.9672, 0.9728, 0.9728, 1.067),
}
TABLE1_LOADS = (0.2, 0.3, 0.4, 0.5, 0.6)
#: How close a cell of ours must come to the paper's to count as reproduced.
TABLE1_TOLERANCE = 0.15


def table1_claims(t: pd.DataFrame) -> list:
    """Table I's orderings on paired packet-level rows: FAIRBAT's normalized variance is
    the lowest at every load and falls as ρ_b grows."""
    val = Lookup(t, "background_load")
    loads = val.xs
    claims = [AllOf(f"FAIRBAT has the lowest normalized variance (ρ_b = {b:g})",
                    [Greater(p, val(p, b, "variance_ratio"), val("fairbat", b, "variance_ratio"), RESOLUTION_RATIO)
                     for p in LBES],
                    ours=f"{val('fairbat', b, 'variance_ratio').text()} vs " + ", ".join(
                        f"{p} {val(p, b, 'variance_ratio').mean:.3f}" for p in LBES)) for b in loads]
    claims.append(Greater("FAIRBAT's normalized variance falls as ρ_b grows", val("fairbat", loads[0], "variance_ratio"),
                          val("fairbat", loads[-1], "variance_ratio"), RESOLUTION_RATIO))
    return claims


@reproduction("fairbat-table1", paper=PAPER, figure="Table I",
              title="Normalized sample variance of the web flows' delays, k = 3 long-lived flows", sizes=FIG2_SIZES,
              ablation=br.ABLATION)
def table1(ctx: Context) -> Outcome:
    """Table I: the variance of the web flows' delays under each policy over vanilla's."""
    rows, claims = fig2_runs(ctx, table1_claims)
    s = table_of(rows[rows["level"] == "packet"], "background_load")
    s = s[s["policy"] != "vanilla"].reset_index(drop=True)
    paper = {(p, b): v for p, vals in TABLE1.items() for b, v in zip(TABLE1_LOADS, vals)}
    s["paper"] = [paper.get((p, round(b, 2)), math.nan) for p, b in zip(s["policy"], s["background_load"])]
    off = (s["variance_ratio"] - s["paper"]).abs()
    s["within_tolerance"] = (off <= TABLE1_TOLERANCE) | (off <= s["variance_ratio_ci"])
    cells = int(s["within_tolerance"].sum())
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.6))
    for p in ("fairbat", *LBES):
        g = s[s["policy"] == p].sort_values("background_load")
        ax.errorbar(g["background_load"], g["variance_ratio"], yerr=g["variance_ratio_ci"], marker="o", ms=4,
                    capsize=2, color=_COLORS[p], label=f"ours (packet level): {p}")
        ax.plot(TABLE1_LOADS, TABLE1[p], ls=":", marker="x", color=_COLORS[p], label=f"paper: {p}")
    ax.axhline(1.0, color="k", lw=0.6)
    ax.set_xlabel("background load ρ_b (web load 0.3, k = 3)")
    ax.set_ylabel("variance of web delays / vanilla's")
    ax.legend(fontsize=6.5, ncol=2)
    ax.grid(alpha=0.3)
    mark_figure(fig, claims, "Table I: ours (95% CI) against the paper's (dotted)")
    table = "\n".join(
        f"| {r.policy} | {r.background_load:g} | {r.seeds} | {r.paper:.4f} | {r.variance_ratio:.3f} ± "
        f"{r.variance_ratio_ci:.3f} | {'yes' if r.within_tolerance else 'no'} | {r.improvement_pct:.1f} | "
        f"{r.carried:.3f} |" for r in s.itertuples())
    intro = f"""
Table I's values are printed in the paper. The normalized variance is the sample variance of
the web flows' delays (flows that arrived after the warm-up and finished) under each policy
over vanilla's in the same seed, averaged over seeds. Which scenario Table I belongs to is not
said; it follows the paragraph on Fig. 2 and its LBE values above 1 at ρ_b = 0.6 match Fig. 2's
worse-than-TCP LBEs, so we take k = 3 (the runs of `fairbat-fig2`, from the store). A cell is
reproduced when ours is within {TABLE1_TOLERANCE:g} of the paper's or the paper's value is inside
our interval: {cells} of {len(s)}; the entry agrees when the paper's orderings hold."""
    tables = ("| policy | ρ_b | seeds | paper | ours | reproduced | improvement of the mean (%) | carried / offered |\n"
              "|---|---|---|---|---|---|---|---|\n" + table)
    return outcome(s, fig, claims, intro=intro, tables=tables,
                   what=f"{cells} of {len(s)} cells within ±{TABLE1_TOLERANCE:g} of the paper's",
                   tolerance=f"a cell within ±{TABLE1_TOLERANCE:g} of the paper's or the paper's value inside our "
                             f"95% CI (the paper gives no spread); orderings of ratios below {RESOLUTION_RATIO:g} "
                             "do not matter")


# --------------------------------------------------------------------------------------------- Fig. 3

FIG3_SIZES = _sizes((3, 4, 10, 30),
                    dict(duration=30_000.0, warmup=15_000.0, axes={"k": (0, 1, 3), "ρ_b": (0.2, 0.6),
                                                                   "policies": ("vanilla", "fairbat")}, flow=(10, 1e6)),
                    dict(duration=90_000.0, warmup=30_000.0, settling=28_320.0,
                         settling_note=settled("FAIRBAT's limit at k = 5, ρ_b = 0.6"),
                         axes={"k": (0, 1, 2, 3, 5), "ρ_b": (0.2, 0.4, 0.6), "policies": ("vanilla", "fairbat")},
                         flow=(20, 1e7)))


def fig3_claims(t: pd.DataFrame) -> list:
    """Fig. 3's text on paired packet-level rows: FAIRBAT's improvement falls as k grows,
    grows with ρ_b, and FAIRBAT carries its load."""
    loads = sorted(set(t["background_load"]))
    ks = sorted(set(t["k"]))
    val = lambda k, b, col="improvement_pct": Lookup(t, "background_load", k=k)("fairbat", b, col)
    claims = [increasing(f"the improvement falls as k grows (ρ_b = {b:g}; \"inversely proportional to k+1\")",
                         [val(k, b) for k in reversed(ks)], RESOLUTION_PCT) for b in loads]
    claims += [increasing(f"the improvement grows with ρ_b (k = {k}; \"proportional to ρ_b\")",
                          [val(k, b) for b in loads], RESOLUTION_PCT) for k in ks]
    parts = [Within(f"k={k}, {b:g}", val(k, b, "carried"), lo=0.98) for k in ks for b in loads]
    claims.append(AllOf("FAIRBAT serves the arriving chunks: carried/offered ≥ 0.98 (§III)", parts,
                        ours=", ".join(f"{p.text}: {p.a.mean:.3f}" for p in parts)))
    return claims


def fig3_flow_claims(t: pd.DataFrame) -> list:
    """The flow level against ρ_b/((1−ρ_s)(k+1)): the fluid realisation everywhere, the
    floor/ceiling alternation where M* ≥ 1."""
    out = []
    for variant, what in (("weight", "the fluid limit (`fractional = \"weight\"`, wTCP)"),
                          ("alternate", "floor/ceiling alternation where M* ≥ 1")):
        parts = []
        for (k, b), _ in t[(t["level"] == "flow") & (t["variant"] == variant)].groupby(["k", "background_load"]):
            if variant == "alternate" and critical_limit(b, k) < 1:
                continue
            e = br.estimate(t, "improvement_pct", level="flow", fmt="{:.1f}", policy="fairbat", k=k,
                            background_load=b, variant=variant)
            parts.append(Greater(f"k={k}, {b:g}", e, float(theorem7_improvement(b, k)) - THEORY_TOLERANCE_PCT))
        out.append(AllOf(f"flow level, {what}: within {THEORY_TOLERANCE_PCT:g} points below ρ_b/((1−ρ_s)(k+1))",
                         parts, ours=", ".join(f"{p.a.mean - p.b - THEORY_TOLERANCE_PCT:+.1f}" for p in parts)))
    return out


@reproduction("fairbat-fig3", paper=PAPER, figure="Fig. 3",
              title="FAIRBAT's web-delay improvement against the number k of long-lived flows and ρ_b",
              sizes=FIG3_SIZES, ablation=br.ABLATION)
def fig3(ctx: Context) -> Outcome:
    """Fig. 3: FAIRBAT's improvement over vanilla beside ρ_b/((1−ρ_s)(k+1))."""
    ks, loads = ctx.size.axis("k"), ctx.size.axis("ρ_b")
    points = [p for k in ks for p in single_link_points(ctx.size, ("vanilla", "fairbat"), loads, k=k)]
    rows, claims = replicate(ctx, "packet", points, br.Measure(SINGLE), packet_claims(fig3_claims, "background_load"),
                             keep=br.KEEP)
    flow = [r for k in ks for r in single_link_flow(ctx, ("vanilla", "fairbat"), loads, k=k,
                                                    labels={"variant": "alternate"})]
    flow += [r for k in ks for r in single_link_flow(ctx, ("fairbat",), loads, k=k, params={"fractional": "weight"},
                                                     labels={"variant": "weight"})]
    rows = pd.concat([rows.assign(variant="alternate"), pd.DataFrame(flow)], ignore_index=True)
    paired = br.paired_rows(rows, on=["background_load", "k"])
    claims += fig3_flow_claims(paired)
    t = paired[paired["class"] == "all"]
    s = summary(t[t["policy"] == "fairbat"], ["level", "variant", "k", "background_load"],
                ["improvement_pct", "mean_limit", "mean_active", "carried"])
    s["theory_pct"] = theorem7_improvement(s["background_load"].to_numpy(), 0) / (s["k"].to_numpy() + 1)
    s["m_star"] = critical_limit(s["background_load"].to_numpy(), s["k"].to_numpy())
    pk = s[s["level"] == "packet"]
    ratio = pk["improvement_pct"] / pk["theory_pct"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 5.0))
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
    mark_figure(fig, claims, "Fig. 3: ours (95% CI) beside the trend; paper: no printed values")
    table = "\n".join(
        f"| {r.level} | {r.variant} | {r.k} | {r.background_load:g} | {r.seeds} | {r.m_star:.2f} | {r.theory_pct:.1f} | "
        f"{r.improvement_pct:.1f} ± {r.improvement_pct_ci:.1f} | {r.mean_limit:.2f} | {r.mean_active:.2f} | "
        f"{r.carried:.3f} |" for r in s.sort_values(["level", "variant", "background_load", "k"]).itertuples())
    intro = f"""
The paper's Fig. 3 has no printed values; its text says FAIRBAT's improvement is proportional
to ρ_b and inversely proportional to k+1. ρ_b/((1−ρ_s)(k+1)) is exactly the background paper's
Theorem 7 at the critical limit: (k+M*+1)ρ/(1−ρ) web flows against vanilla's (k+1)ρ/(1−ρ−ρ_b),
with M* = kρ_b/(1−ρ−ρ_b), give 1 − ρ_b/((k+1)(1−ρ)) (at k = 0 the limit M* → 0). Theorem 7
holds for a CBF that behaves as wTCP with weight M*: the flow model's fluid realisation
(`fractional = "weight"`) is checked at every point; the floor/ceiling alternation FAIRBAT
prescribes (§III) only where M* ≥ 1 (below one connection the alternation is a policy mixture,
worse than wTCP of the same mean: [BG] Proposition 2). Packet level ({ctx.size.duration:g} s per run,
{ctx.size.warmup:g} s warm-up) over the formula: {ratio.min():.2f} to {ratio.max():.2f}."""
    tables = ("| level | realisation | k | ρ_b | seeds | M* (eq. 27) | ρ_b/((1−ρ_s)(k+1)) (%) | FAIRBAT (%) | "
              "mean limit | active chunks | carried / offered |\n|---|---|---|---|---|---|---|---|---|---|---|\n" + table)
    return outcome(s, fig, claims, intro=intro, tables=tables,
                   what=f"packet level {ratio.min():.2f}-{ratio.max():.2f} × ρ_b/((1−ρ_s)(k+1))",
                   tolerance=f"flow level at most {THEORY_TOLERANCE_PCT:g} points below ρ_b/((1−ρ_s)(k+1)) "
                             f"(Theorem 7; the limit fluctuates); differences below {RESOLUTION_PCT:g} points do "
                             "not matter")


# --------------------------------------------------------------------------------------------- Fig. 5

FIG5_BACKGROUND = 0.2
#: Eq. (1): an ideal low-priority background across both links is stable while
#: ρ_b ≤ (1−ρ_s)², i.e. up to ρ_s = 1 − √ρ_b (0.553 for ρ_b = 0.2; the paper says 0.552).
FIG5_UNSTABLE = 1 - math.sqrt(FIG5_BACKGROUND)
#: Flow level: how close the ideal LBE's carried fraction must come to min(1, (1−ρ_s)²/ρ_b).
FIG5_CARRIED_TOLERANCE = 0.03
FIG5_SIZES = _sizes((3, 4, 10, 30),
                    dict(duration=30_000.0, warmup=15_000.0, axes={"ρ_s": (0.3, 0.55, 0.7), "policies": FIG1_POLICIES},
                         flow=(10, 2e5)),
                    dict(duration=100_000.0, warmup=40_000.0, settling=34_920.0,
                         settling_note=settled("FAIRBAT's limit at ρ_s = 0.7 on both links"),
                         axes={"ρ_s": (0.3, 0.4, 0.5, 0.55, 0.6, 0.7), "policies": FIG1_POLICIES}, flow=(20, 2e6)))


def fig5_claims(t: pd.DataFrame) -> list:
    """§IV-B and Fig. 5's caption, on paired packet-level rows."""
    val = Lookup(t, "web_load")
    loads = val.xs
    hi = loads[-1]
    stable = [w for w in loads if w <= FIG5_UNSTABLE]
    fb = [val("fairbat", w) for w in loads]
    claims = [AllOf("FAIRBAT improves the web delay at every web load (Fig. 5a)",
                    [Greater(f"{w:g}", e, 0.0, RESOLUTION_PCT) for w, e in zip(loads, fb)],
                    ours=", ".join(e.text() for e in fb)),
              increasing("... increasingly over the whole range (Fig. 5a caption)", fb, RESOLUTION_PCT),
              carried_claim(val, "fairbat", loads, "FAIRBAT")]
    for p in LBES:
        best = max((val(p, w) for w in stable), key=lambda e: e.mean)
        claims.append(Greater(f"{p} deteriorates beyond ρ_s = {FIG5_UNSTABLE:.3f} (Fig. 5a caption)", best, val(p, hi),
                              RESOLUTION_PCT, ours=f"best {best.text()}% at ρ_s ≤ {FIG5_UNSTABLE:.2f}, "
                                                   f"{val(p, hi).text()}% at {hi:g}"))
        claims.append(Greater(f"FAIRBAT outperforms {p} at high web load (§IV-B)", fb[-1], val(p, hi), RESOLUTION_PCT))
        peak = max((val(p, w, "active_ratio") for w in stable), key=lambda e: e.mean)
        claims.append(Greater(f"{p}'s active-chunk ratio falls beyond it: \"they tend to accumulate less compared to "
                              "TCP\" (§IV-B, Fig. 5b)", peak, val(p, hi, "active_ratio"), RESOLUTION_RATIO))
    return claims


def fig5_flow_claims(t: pd.DataFrame) -> list:
    val = Lookup(t, "web_load", level="flow")
    lp = [Near(f"{w:g}", val("low_priority", w, "carried"), min(1.0, (1 - w) ** 2 / FIG5_BACKGROUND),
               FIG5_CARRIED_TOLERANCE) for w in val.xs]
    fc = [Within(f"{w:g}", val("fairbat", w, "carried"), lo=FLOW_CARRIED_MIN) for w in val.xs]
    return [AllOf(f"flow level: an ideal LBE carries min(ρ_b, (1−ρ_s)²) (eq. 1), within {FIG5_CARRIED_TOLERANCE:g}",
                  lp, ours=", ".join(f"{w:g}: {p.a.mean:.3f} (eq. 1: {p.target:.3f})" for w, p in zip(val.xs, lp))),
            AllOf(f"flow level: FAIRBAT carries the background load at every web load (≥ {FLOW_CARRIED_MIN:g})", fc,
                  ours=", ".join(f"{p.a.mean:.3f}" for p in fc))]


@reproduction("fairbat-fig5", paper=PAPER, figure="Fig. 5 (a, b)",
              title="Two links, background 0.2 across both, web load 0.3-0.7 on each", sizes=FIG5_SIZES,
              ablation=br.ABLATION)
def fig5(ctx: Context) -> Outcome:
    """Fig. 5: FAIRBAT and the LBEs over two links, below and beyond eq. (1)'s stability limit."""
    loads = ctx.size.axis("ρ_s")
    points = [br.packet_point(TWO, p, {"web1": w, "web2": w, "background": FIG5_BACKGROUND}, ctx.size,
                              labels={"web_load": w}, group=(w,)) for w in loads for p in FIG1_POLICIES]
    rows, claims = replicate(ctx, "packet", points, br.Measure(TWO), packet_claims(fig5_claims, "web_load"),
                             keep=br.KEEP)
    reps, duration = ctx.size.flow
    memo = flow_memo(ctx)
    flow = [r for w in loads for p in ("vanilla", "fairbat", "low_priority")
            for r in br.flow_rows(TWO, p, {"web1": w, "web2": w, "background": FIG5_BACKGROUND}, duration=duration,
                                  replications=reps, seed=ctx.seed, payload=False, labels={"web_load": w}, memo=memo)]
    rows = pd.concat([rows, pd.DataFrame(flow)], ignore_index=True)
    claims += fig5_flow_claims(br.paired_rows(rows, on=["web_load", "k"]))
    s = table_of(rows, "web_load")
    fb = s[(s["level"] == "packet") & (s["policy"] == "fairbat")].sort_values("web_load")
    hi = s[(s["level"] == "packet") & (s["web_load"] == max(loads))].set_index("policy")
    fig = plot_lines(s, "web_load", "web load ρ_s on each link (background 0.2 across both)",
                     vline=(FIG5_UNSTABLE, f"eq. (1): ρ_s = 1 − √0.2 = {FIG5_UNSTABLE:.3f}"))
    mark_figure(fig, claims, "Fig. 5: ours, packet level solid (95% CI), flow level dashed; paper: no printed values")
    intro = f"""
The paper prints no number for Fig. 5; it says the LBEs improve the web delay while eq. (1)
holds and deteriorate, "reaching even negative levels", beyond ρ_s = 0.552 (1 − √0.2 =
{FIG5_UNSTABLE:.4f}), while FAIRBAT's improvement grows over the whole range. Web load ρ_s on each
link, background 0.2 across both (`scenarios/fairbat/two-links.toml`); the web delay pools both
links' web flows (the paper: "the impact on each individual stream is almost equal"). Packet level
{ctx.size.duration:g} s per run ({ctx.size.warmup:g} s warm-up). At flow level the ideal low-priority
class sends only while neither link has a web flow, a fraction (1−ρ_s)² of the time: eq. (1) in
closed form."""
    tables = f"Packet level:\n\n{level_table(s, 'packet', 'web_load')}\n\nFlow level:\n\n{level_table(s, 'flow', 'web_load')}"
    return outcome(s, fig, claims, intro=intro, tables=tables,
                   what=f"FAIRBAT {fb.improvement_pct.iloc[0]:.0f}% at ρ_s = {loads[0]:g} to "
                        f"{fb.improvement_pct.iloc[-1]:.0f}% at {max(loads):g}; at {max(loads):g} the LBEs "
                        + ", ".join(f"{p} {hi.at[p, 'improvement_pct']:.0f}%" for p in LBES),
                   tolerance=f"the ideal LBE's carried fraction within {FIG5_CARRIED_TOLERANCE:g} of "
                             "min(1, (1−ρ_s)²/ρ_b) (eq. 1) at flow level; differences below "
                             f"{RESOLUTION_PCT:g} points or active ratios below {RESOLUTION_RATIO:g} do not matter")


# --------------------------------------------------------------------------------------------- sensitivity

#: Values tried for each parameter the papers leave unstated (one at a time, the others
#: at their defaults in ``cclab-control``).
SENSITIVITY: dict[str, list[tuple[str, tuple]]] = {
    "fairbat": [("period", (60.0, 240.0)), ("tau", (50.0, 300.0)), ("gain_start", (0.02, 0.1)),
                ("gain_end", (2e-4, 5e-3)), ("trend", (0.0, 0.3, 1.0)), ("measure", ("sample",)),
                ("gain_scale", ("none",)), ("gain_schedule", ("harmonic",))],
    "rate_tracking": [("period", (60.0, 240.0)), ("ewma", (0.02, 0.2)), ("rate_ewma", (0.05, 1.0)),
                      ("step_end", (0.01, 0.1)), ("tau", (0.0, 50.0)), ("drain", (3.0, 30.0))],
}
#: The packet-level subset: the choices that make the limits settle, FAIRBAT's and rate
#: tracking's, each against the value before issue 25 (each variant costs a set of packet runs).
SENSITIVITY_PACKET = {
    "fairbat": [("gain_scale", ("none",)), ("gain_schedule", ("harmonic",)), ("trend", (0.0, 0.3)),
                ("gain_start", (0.02,)), ("gain_end", (2e-4,))],
    "rate_tracking": [("tau", (0.0,)), ("rate_ewma", (0.05,)), ("step_end", (0.3,))],
}
SENSITIVITY_SIZES = Sizes(
    Size(seeds=3, duration=40_000.0, warmup=20_000.0, flow=(8, 1e6)),
    Size(seeds=6, duration=80_000.0, warmup=20_000.0, flow=(16, 4e6)))


def _variants(space):
    yield "default", None, {}
    for key, values in space:
        for v in values:
            yield key, v, {key: (f"{v:g}s" if key == "period" and isinstance(v, float) else v)}


def _variant_name(key: str, v) -> str:
    return key if v is None else (f"{key}={v:g}" if isinstance(v, float) else f"{key}={v}")


def sensitivity_rows(ctx: Context) -> pd.DataFrame:
    """The runs behind ``fairbat-sensitivity``: flow level at k = 3, ρ_b = 0.6 (the case of
    the FAIRBAT overshoot, Theorem 7's improvement 21.4%) for FAIRBAT and rate tracking,
    and packet level at the same point for both; one parameter varied at a time."""
    flow = single_link_flow(ctx, ("vanilla",), (0.6,), k=3, labels={"variant": ""})
    for policy, space in SENSITIVITY.items():
        for key, v, change in _variants(space):
            if key == "period":
                change = {"period": float(v)}
            flow += single_link_flow(ctx, (policy,), (0.6,), k=3, params=change,
                                     labels={"variant": _variant_name(key, v)})
    loads = {"web": WEB_LOAD, "background": 0.6}
    points = [br.packet_point(SINGLE, "vanilla", loads, ctx.size, k=3, labels={"background_load": 0.6, "variant": ""})]
    points += [br.packet_point(SINGLE, policy, loads, ctx.size, k=3, access=change,
                               labels={"background_load": 0.6, "variant": _variant_name(key, v)})
               for policy, space in SENSITIVITY_PACKET.items() for key, v, change in _variants(space)]
    seeds = {(): range(ctx.seed, ctx.seed + ctx.size.seeds)}
    packet = run_points(ctx, "packet", points, seeds, br.Measure(SINGLE), keep=br.KEEP)
    return pd.concat([packet, pd.DataFrame(flow)], ignore_index=True)


@reproduction("fairbat-sensitivity", paper=PAPER, figure="§III (eq. 2) and the background paper's §IV",
              title="Sensitivity of the access controllers to the constants the papers leave unstated",
              sizes=SENSITIVITY_SIZES)
def sensitivity(ctx: Context) -> Outcome:
    """Web-delay improvement and limit of FAIRBAT and rate tracking, one constant at a time."""
    t = br.paired_rows(sensitivity_rows(ctx), on=["background_load", "k"])
    t = t[(t["class"] == "all") & (t["policy"] != "vanilla")]
    s = summary(t, ["level", "policy", "variant"], ["improvement_pct", "delay", "mean_limit", "sd_limit",
                                                    "mean_waiting", "carried"])
    s = s.sort_values(["level", "policy"], kind="stable").reset_index(drop=True)
    theory = 100 * (1 - (3 + 18 + 1) * 0.3 / 0.7 / 12.0)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.4))
    for ax, (lvl, title) in zip(axes, [("flow", f"flow level, k = 3, ρ_b = 0.6 (Theorem 7: {theory:.1f}%)"),
                                       ("packet", "packet level, k = 3, ρ_b = 0.6")]):
        g = s[s["level"] == lvl]
        y = np.arange(len(g))
        ax.errorbar(g["improvement_pct"], y, xerr=g["improvement_pct_ci"], fmt="o", ms=4, capsize=2)
        ax.set_yticks(y, [f"{p}: {v}" for p, v in zip(g["policy"], g["variant"])], fontsize=6.5)
        ax.invert_yaxis()
        if lvl == "flow":
            ax.axvline(theory, color="r", ls="--", lw=0.8, label="Theorem 7 at M* = 18")
            ax.legend(fontsize=7)
        ax.set_xlabel("web delay improvement over vanilla (%)")
        ax.set_title(title, fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("Sensitivity: one constant at a time (95% CI)", fontsize=9)
    fig.tight_layout()

    def table(lvl):
        return "\n".join(f"| {r.policy} | {r.variant} | {r.seeds} | {r.improvement_pct:.1f} ± {r.improvement_pct_ci:.1f} | "
                         f"{r.delay:.2f} | {r.mean_limit:.2f} | {r.sd_limit:.2f} | {r.mean_waiting:.0f} | "
                         f"{r.carried:.3f} |" for r in s[s["level"] == lvl].itertuples())
    head = ("| policy | variant | seeds | improvement (%) | web delay (s) | mean limit | sd of limit | waiting | "
            "carried / offered |\n|---|---|---|---|---|---|---|---|---|")
    details = f"""
One constant at a time, the others at the defaults of `cclab-control` (docs/protocols.md,
"Access control"). Improvement: the web flows' mean delay against vanilla (every chunk a Reno
flow at once), paired by seed; 95% intervals.

Flow level, k = 3 long flows, web load 0.3, background 0.6 (the critical limit of eq. 27 is
M* = 18 and Theorem 7 gives {theory:.1f}%):

{head}
{table("flow")}

Packet level, the same point (k = 3, web load 0.3, background 0.6), the choices of issue 25
against the values before it:

{head}
{table("packet")}
"""
    v = s.set_index(["level", "policy", "variant"])
    imp = lambda lvl, p, var: f"{v.at[(lvl, p, var), 'improvement_pct']:.1f}% (carried {v.at[(lvl, p, var), 'carried']:.3f})"
    verdict = (f"flow level k = 3: FAIRBAT {imp('flow', 'fairbat', 'default')}, rate tracking "
               f"{imp('flow', 'rate_tracking', 'default')} (theory {theory:.1f}%); packet level: FAIRBAT "
               f"{imp('packet', 'fairbat', 'default')}, with eq. 2's absolute gain "
               f"{imp('packet', 'fairbat', 'gain_scale=none')}; rate tracking {imp('packet', 'rate_tracking', 'default')}"
               f", without its queue target {imp('packet', 'rate_tracking', 'tau=0')}")
    return Outcome(s, fig, verdict, details, None)
