"""Reproductions of the background-transfers paper's figures from its theory.

Paper: Courcoubetis, Dimakis, Kanakakis, "Congestion Control for Background Data
Transfers with Minimal Delay Impact" (``shared/papers/background-transfers-minimal-delay.md``).

* ``background-fig2``: N*(10, f, rho) normalised by rho/(1-rho) against f, with the
  Erlang-loss approximation of Corollary 1 (k + 1 + a_f f).
* ``background-fig3``: wTCP's delay over the optimal one, rho -> 1 (Theorem 5), for
  several k, with the bound b_k(f) of eq. (19).
* ``background-fig4``: the optimal, optimal implementable, wTCP and 'vanilla' policies
  at rho = 0.5 and 0.9, k = 1, as ratios to the optimal. :func:`fig4_theory` returns
  the theory table in long format (``source`` = "theory"); a simulator can append
  rows with its own ``source`` and confidence interval and :func:`plot_fig4` draws
  them as markers with error bars.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cclab.experiments.catalogue import Context, Outcome, reproduction
from cclab.plotting import pyplot
from cclab.theory import background as bg

PAPER = "background-transfers-minimal-delay"


# --------------------------------------------------------------------------- Fig. 2

def fig2_theory(k: int = 10, rhos=(0.1, 0.3, 0.5, 0.7, 0.9, 0.99), fs=None) -> pd.DataFrame:
    """N*(k, f, rho) (Theorem 1) normalised by rho/(1-rho), and Corollary 1's limit.

    Args:
        k: number of long flows (the paper's Fig. 2 uses 10).
        rhos: short-flow loads drawn.
        fs: grid of target fractions f in [0, 1) (default 0..0.98).

    Returns:
        one row per (rho, f): ``rho``, ``f``, ``n_star``, ``mean_flows`` (N*),
        ``normalized`` (N* (1-rho)/rho, the delay over 1/(mu - lambda)),
        ``erlang_approx`` (k + 1 + a_f f) and ``rel_gap`` (normalized / erlang_approx - 1).
    """
    fs = np.linspace(0.0, 0.98, 99) if fs is None else np.asarray(fs, dtype=float)
    rows = []
    for f in fs:
        approx = bg.asymptotic_mean_flows(k, float(f))
        for rho in rhos:
            N = bg.optimal_mean_flows(k, float(f), rho)
            norm = N * (1 - rho) / rho
            rows.append(dict(rho=rho, f=float(f), n_star=bg.optimal_threshold(k, float(f), rho),
                             mean_flows=N, normalized=norm, erlang_approx=approx,
                             rel_gap=norm / approx - 1))
    return pd.DataFrame(rows)


@reproduction("background-fig2", paper=PAPER, figure="Fig. 2",
              title="Minimum short-flow delay against the background share f (k = 10)",
              quick_size="f on 50 points, 6 loads", full_size="f on 197 points, 6 loads")
def fig2(ctx: Context) -> Outcome:
    """Fig. 2: N*(10, f, rho)(1-rho)/rho against f, with Corollary 1's Erlang approximation."""
    k = 10
    fs = np.linspace(0.0, 0.98, 50 if ctx.quick else 197)
    df = fig2_theory(k, fs=fs)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for rho, g in df.groupby("rho"):
        ax.plot(g["f"], g["normalized"], lw=1.2, label=f"ours: N*·(1-ρ)/ρ, ρ={rho:g}")
    first = df[df["rho"] == df["rho"].iloc[0]]
    ax.plot(first["f"], first["erlang_approx"], "k-", lw=2.4, alpha=0.6,
            label="ours: Erlang approx. k+1+a_f f (Cor. 1)")
    ax.plot([0.0], [k + 1], "rs", ms=8, label="paper: k+1 = 11 at f = 0 (eq. 13, n0 = 0)")
    ax.set_xlabel("fraction f of the excess capacity taken by the CBF")
    ax.set_ylabel("short-flow delay / delay without other traffic")
    ax.set_yscale("log")
    ax.set_title("Fig. 2 (k = 10): curves ours; paper: approx. 'close for ρ ≥ .5', → ∞ as f → 1",
                 fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    # the paper's claim: the Erlang approximation is close for rho >= 0.5 (text of Fig. 2)
    band = df[df["f"] <= 0.95]
    worst = band.groupby("rho")["rel_gap"].apply(lambda s: float(np.max(np.abs(s))))
    hi = worst[worst.index >= 0.5]
    lo = worst[worst.index < 0.5]
    monotone = bool(np.all(np.diff(worst.values) < 0))
    agrees = bool(hi.max() <= 0.15 and monotone and lo.min() > hi.max())
    table = "\n".join(f"| {r:g} | {100 * w:.1f}% |" for r, w in worst.items())
    details = f"""
Paper (text under Fig. 2 and caption): "The Erlang loss approximation given in Corollary 1
is close to the minimum delay for ρ ≥ .5" and the delay increases sharply to +∞ as f → 1.
The figure itself is not in our copy of the paper, so only these statements are compared.

Largest relative gap |N*(1-ρ)/ρ ÷ (k+1+a_f f) − 1| over f ≤ 0.95 (k = 10):

| ρ | worst gap |
|---|---|
{table}

The gap shrinks monotonically with ρ ({'yes' if monotone else 'no'}) and is at most
{100 * hi.max():.1f}% for ρ ≥ 0.5 (criterion: ≤ 15% and smaller than for every ρ < 0.5).
At f = 0 all curves start at k + 1 = 11 (eq. 13 with n0 = 0), and they grow without
bound as f → 1 (a_f → ∞).
"""
    verdict = (f"Erlang approximation within {100 * hi.max():.1f}% of N* for ρ ≥ 0.5 "
               f"(vs {100 * lo.min():.0f}%+ below), the paper's 'close for ρ ≥ .5'")
    return Outcome(df, fig, verdict, details, agrees)


# --------------------------------------------------------------------------- Fig. 3

def fig3_theory(ks=(1, 2, 3, 5, 10, 20), fs=None) -> pd.DataFrame:
    """lim_{rho->1} N_w/N* (Theorem 5 via Corollary 1 and eq. (16)) and the bound of eq. (19).

    Args:
        ks: numbers of long flows drawn.
        fs: grid of target fractions in (0, 1).

    Returns:
        one row per (k, f): ``k``, ``f``, ``ratio`` (N_w/N* in the limit), ``gap``
        (ratio - 1) and ``bound`` (b_k(f) of eq. (19); NaN for k = 1).
    """
    fs = np.linspace(0.005, 0.995, 199) if fs is None else np.asarray(fs, dtype=float)
    rows = []
    for k in ks:
        for f in fs:
            gap = bg.wtcp_gap_limit(k, float(f))
            rows.append(dict(k=k, f=float(f), ratio=1 + gap, gap=gap,
                             bound=bg.wtcp_gap_bound(k, float(f)) if k >= 2 else math.nan))
    return pd.DataFrame(rows)


@reproduction("background-fig3", paper=PAPER, figure="Fig. 3",
              title="wTCP delay over the optimal delay (ρ → 1) against f, for several k",
              quick_size="f on 99 points, k in 1,2,3,5,10,20", full_size="f on 991 points")
def fig3(ctx: Context) -> Outcome:
    """Fig. 3: N_w/N* in the rho -> 1 limit, with the 20.7% (k = 1) and 8% (k = 5) values."""
    fs = np.linspace(0.005, 0.995, 99 if ctx.quick else 991)
    df = fig3_theory(fs=fs)
    # the exact k = 1 maximiser, f = 2 - sqrt 2 (Theorem 5.1)
    f0 = 2 - math.sqrt(2)
    peak1 = bg.wtcp_gap_limit(1, f0)
    worst = df.groupby("k")["gap"].max()
    worst[1] = max(worst[1], peak1)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for k, g in df.groupby("k"):
        line, = ax.plot(g["f"], g["ratio"], lw=1.4, label=f"ours: k={k}")
        if k >= 2 and k in (2, 5):
            ax.plot(g["f"], 1 + g["bound"], ls=":", color=line.get_color(), lw=1,
                    label=f"ours: bound 1+b_k(f), eq. 19, k={k}")
    ax.plot([f0], [1 + (3 - 2 * math.sqrt(2)) / (2 * math.sqrt(2) - 2)], "r*", ms=13,
            label="paper: 20.7% at f = 2-√2, k = 1 (Thm 5, eq. 17)")
    ax.axhline(1.08, color="r", ls="--", lw=0.8, label="paper: worst gap 8% for k = 5 (Sec. II-D)")
    ax.set_ylim(0.99, 1.3)
    ax.set_xlabel("fraction f of the excess capacity taken by the CBF")
    ax.set_ylabel("N_w / N*  (ρ → 1)")
    ax.set_title("Fig. 3: wTCP over the optimal full-information policy", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ok1 = abs(peak1 - 0.2071) < 5e-4 and worst[1] <= peak1 + 1e-12
    ok5 = abs(worst[5] - 0.08) < 0.005
    decreasing = bool(np.all(np.diff(worst.values) < 0))
    agrees = bool(ok1 and ok5 and decreasing)
    table = "\n".join(f"| {k} | {100 * w:.2f}% |" for k, w in worst.items())
    details = f"""
Paper: Theorem 5 (eq. 17) gives the k = 1 limit f(1−f)/(1+(1−f)²), at most
(3−2√2)/(2√2−2) ≈ 20.7% at f = 2−√2; Sec. II-D: "for k = 5 the worst difference is 8%";
Fig. 3 caption: the difference converges to zero as k grows and is small for small and
large f.

Worst gap (N_w − N*)/N* in the ρ → 1 limit over f:

| k | worst gap (ours) |
|---|---|
{table}

k = 1: {100 * peak1:.3f}% at f = 2−√2 (paper 20.7%); k = 5: {100 * worst[5]:.2f}% (paper 8%);
the worst gap decreases with k: {'yes' if decreasing else 'no'}. The dotted lines are the
bound b_k(f) of eq. (19), which lies above the exact limit everywhere.
"""
    verdict = (f"worst wTCP gap {100 * peak1:.1f}% at k = 1 (paper 20.7%), "
               f"{100 * worst[5]:.1f}% at k = 5 (paper 8%), decreasing in k")
    return Outcome(df, fig, verdict, details, agrees)


# --------------------------------------------------------------------------- Fig. 4

FIG4_POLICIES = ("optimal", "implementable", "wtcp", "vanilla")


def fig4_theory(k: int = 1, rhos=(0.5, 0.9), fs=None) -> pd.DataFrame:
    """Theory table of Fig. 4 in long format.

    Args:
        k: number of long flows (the paper's Fig. 4 uses 1).
        rhos: short-flow loads (the paper: 0.5 and 0.9).
        fs: grid of target fractions in [0, 1).

    Returns:
        one row per (rho, f, policy) with columns ``source`` ("theory"), ``policy``
        (optimal: N*, Theorem 1; implementable: M*, Theorem 3; wtcp: eq. (16);
        vanilla: every background file a TCP flow), ``k``, ``rho``, ``f``,
        ``mean_flows``, ``ci_low``, ``ci_high`` (equal to ``mean_flows`` for theory) and
        ``ratio_to_optimal``. Simulator rows use the same columns with their own
        ``source`` and confidence interval.
    """
    fs = np.linspace(0.02, 0.98, 49) if fs is None else np.asarray(fs, dtype=float)
    rows = []
    for rho in rhos:
        for f in fs:
            f = float(f)
            opt = bg.optimal_mean_flows(k, f, rho)
            vals = {"optimal": opt, "implementable": bg.implementable_mean_flows(k, f, rho),
                    "wtcp": bg.wtcp_mean_flows(k, f, rho), "vanilla": bg.vanilla_mean_flows(k, f, rho)}
            for pol, v in vals.items():
                rows.append(dict(source="theory", policy=pol, k=k, rho=rho, f=f, mean_flows=v,
                                 ci_low=v, ci_high=v, ratio_to_optimal=v / opt))
    return pd.DataFrame(rows)


def plot_fig4(df: pd.DataFrame):
    """Draw Fig. 4 from a table shaped like :func:`fig4_theory`'s (theory lines, other sources as markers)."""
    plt = pyplot()
    rhos = sorted(df["rho"].unique())
    fig, axes = plt.subplots(len(rhos), 1, figsize=(6.4, 3.4 * len(rhos)), sharex=True)
    axes = np.atleast_1d(axes)
    colors = {"optimal": "k", "implementable": "tab:blue", "wtcp": "tab:green", "vanilla": "tab:red"}
    for ax, rho in zip(axes, rhos):
        d = df[df["rho"] == rho]
        th = d[d["source"] == "theory"]
        for pol in FIG4_POLICIES:
            g = th[th["policy"] == pol]
            if len(g):
                ax.plot(g["f"], g["ratio_to_optimal"], color=colors[pol], lw=1.4,
                        label=f"ours (theory): {pol}")
        for (src, pol), g in d[d["source"] != "theory"].groupby(["source", "policy"]):
            opt = th[th["policy"] == "optimal"].set_index("f")["mean_flows"]
            base = opt.reindex(g["f"]).values
            ax.errorbar(g["f"], g["mean_flows"] / base,
                        yerr=[(g["mean_flows"] - g["ci_low"]) / base, (g["ci_high"] - g["mean_flows"]) / base],
                        fmt="o", ms=4, color=colors.get(pol, "gray"), label=f"ours ({src}): {pol}")
        if rho == 0.5:
            ax.axhline(1.22, color="tab:blue", ls="--", lw=0.8,
                       label="paper: implementable up to 22% above optimal (ρ=0.5, Sec. II-C)")
        ax.plot([1.0], [2.0], "r*", ms=12, label="paper: vanilla doubles the delay at f = 1 (caption)")
        ax.set_ylabel(f"delay / optimal delay, ρ = {rho:g}")
        ax.set_ylim(0.95, 3.1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, loc="best")
    axes[-1].set_xlabel("fraction f of the excess capacity taken by the CBF")
    axes[0].set_title(f"Fig. 4 (k = {int(df['k'].iloc[0])}): short-flow delay under CBF policies", fontsize=9)
    return fig


def fig4_verdict(df: pd.DataFrame) -> tuple[str, str, bool]:
    """Compare the theory rows of a Fig. 4 table with the paper's statements."""
    th = df[df["source"] == "theory"]
    imp = th[th["policy"] == "implementable"].groupby("rho")["ratio_to_optimal"].max()
    van = th[th["policy"] == "vanilla"]
    van_end = van[van["f"] == van["f"].max()].set_index("rho")["ratio_to_optimal"]
    van_max = van.groupby("rho")["ratio_to_optimal"].max()
    ok_05 = abs(imp.get(0.5, math.nan) - 1.22) <= 0.05
    ok_09 = imp.get(0.9, math.nan) < 1.02
    ok_van = bool(np.all(van_max > 1.95))
    agrees = bool(ok_05 and ok_09 and ok_van)
    table = "\n".join(f"| {r:g} | {100 * (imp[r] - 1):.1f}% | {van_end[r]:.2f} | {van_max[r]:.2f} |"
                      for r in imp.index)
    details = f"""
Paper (Sec. II-C and Fig. 4 caption, k = 1): the optimal implementable policy's delay "can
be up to 22% higher than the optimal for ρ = 0.5"; "for ρ = 0.9 the delays of the two
algorithms are practically indistinguishable"; 'vanilla' (every background file its own TCP
flow) "doubles the delay at f = 1" and "could more than double" it (Sec. I).

| ρ | max M*/N* − 1 (ours) | vanilla/N* at largest f | max vanilla/N* |
|---|---|---|---|
{table}

Our peak of M*/N* at ρ = 0.5 sits at the kink f = 2/3 where the optimal threshold moves
from n* = 0 to n* = 1; it is {100 * (imp.get(0.5, math.nan) - 1):.1f}% against the paper's
22% (read from the text; criterion ±5 points). The implementable policy is computed exactly
(x_n = min(x̄, C/(k+n)), eq. 15, x̄ solved for the target f) and checked against the
stationary distribution of chain (1) in the tests, so the 3-point difference is the
paper's reading or a different numerical method, not a truncation. At ρ = 0.9 the
difference is {100 * (imp.get(0.9, math.nan) - 1):.1f}% ('practically indistinguishable').
Vanilla/N* → (k+1)/(k+1−f) · N_w/N* → 2 as f → 1 and exceeds 2 at intermediate f.
"""
    verdict = (f"M*/N* peaks at {100 * (imp.get(0.5, math.nan) - 1):.1f}% for ρ=0.5 (paper: up to 22%), "
               f"{100 * (imp.get(0.9, math.nan) - 1):.1f}% for ρ=0.9 (paper: indistinguishable); "
               f"vanilla/N* → 2 as f → 1")
    return verdict, details, agrees


def fig4_flowsim(k: int = 1, rhos=(0.5, 0.9), fs=(0.2, 0.5, 0.8), duration: float = 2e5,
                 replications: int = 10, seed: int = 1) -> pd.DataFrame:
    """Fig. 4 measured by the flow-level simulator (:mod:`cclab.flowsim`), a second line of evidence.

    Each policy is simulated with the parameter the theory prescribes for the target f:
    optimal: threshold n* (Proposition 1) with x_{n*+1} of eq. (10); implementable: the cap
    x̄ of eq. (15); wtcp: w = k f/(1−f) (Sec. II-D); vanilla: a Poisson stream of TCP
    micro-flows of load f(1−ρ). Rows have the columns of :func:`fig4_theory` with
    ``source`` = "flowsim" and a 95% confidence interval over independent replications,
    plus ``theory`` (the theory value of the same policy).

    Args:
        k: number of long flows. rhos: short-flow loads. fs: target fractions in (0, 1).
        duration: simulated time per replication (mean short-flow size 1, capacity 1).
        replications: independent replications. seed: base seed.
    """
    from cclab import flowsim

    rows = []
    for rho in rhos:
        for f in fs:
            f = float(f)
            opt = bg.optimal_mean_flows(k, f, rho)
            n_star = bg.optimal_threshold(k, f, rho)
            specs = {
                "optimal": (dict(policy="threshold", n0=n_star, x_next=float(bg.optimal_policy(k, f, rho)[-1])), opt),
                "implementable": (dict(policy="implementable", x_cap=bg.implementable_level(k, f, rho)),
                                  bg.implementable_mean_flows(k, f, rho)),
                "wtcp": (dict(policy="wtcp", w=k * f / (1 - f)), bg.wtcp_mean_flows(k, f, rho)),
                "vanilla": (dict(policy="vanilla", background_load=f * (1 - rho)), bg.vanilla_mean_flows(k, f, rho)),
            }
            for pol, (kw, theory) in specs.items():
                sc = flowsim.single_link(rho, k, duration=duration, replications=replications, seed=seed, **kw)
                row = flowsim.simulate(sc).row("short")
                m, h = float(row["mean_number"]), float(row["mean_number_ci"])
                rows.append(dict(source="flowsim", policy=pol, k=k, rho=rho, f=f, mean_flows=m, ci_low=m - h,
                                 ci_high=m + h, ratio_to_optimal=m / opt, theory=theory))
    return pd.DataFrame(rows)


@reproduction("background-fig4", paper=PAPER, figure="Fig. 4",
              title="Short-flow delay under optimal, implementable, wTCP and vanilla CBF policies (k = 1)",
              quick_size="theory, f on 25 points; flowsim 3 f x 4 policies x 2 rho, 10 x 1e5",
              full_size="theory, f on 197 points; flowsim 6 f x 4 policies x 2 rho, 20 x 1e6")
def fig4(ctx: Context) -> Outcome:
    """Fig. 4: delay of each CBF policy over the optimal one, rho = 0.5 and 0.9, k = 1."""
    fs = np.linspace(0.01, 0.99, 25 if ctx.quick else 197)
    # include the kink f = 2/3 (n* 0 -> 1 at rho = 0.5, k = 1) where M*/N* peaks
    sim_fs = (0.2, 0.5, 0.8) if ctx.quick else (0.1, 0.3, 0.5, 2 / 3, 0.8, 0.9)
    fs = np.unique(np.concatenate([fs, [2.0 / 3.0], sim_fs]))  # theory also at the simulated f
    df = fig4_theory(1, (0.5, 0.9), fs)
    verdict, details, agrees = fig4_verdict(df)
    try:  # second line of evidence: the flow-level simulator (needs the compiled core)
        sim = fig4_flowsim(1, (0.5, 0.9), sim_fs, duration=1e5 if ctx.quick else 1e6,
                           replications=10 if ctx.quick else 20, seed=ctx.seed)
    except ImportError:
        sim = None
    if sim is not None:
        # within twice the 95% half-width (about 1/1000 false alarms per point)
        inside = (sim["theory"] - sim["mean_flows"]).abs() <= 2 * (sim["ci_high"] - sim["mean_flows"])
        worst = ((sim["mean_flows"] - sim["theory"]) / sim["theory"]).abs().max()
        verdict += f"; flow-level simulator within its CI at {int(inside.sum())}/{len(sim)} points"
        details += (f"\n**Flow-level simulator** (`cclab.flowsim`, markers with 95% intervals): "
                    f"{int(inside.sum())} of {len(sim)} (ρ, f, policy) points lie within twice their "
                    f"confidence half-width of the theory; the largest relative difference is "
                    f"{100 * worst:.1f}%.\n")
        agrees = bool(agrees and inside.all())
        df = pd.concat([df, sim], ignore_index=True)
    return Outcome(df, plot_fig4(df), verdict, details, agrees)
