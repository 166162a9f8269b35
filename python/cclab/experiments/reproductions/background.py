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
from cclab.experiments.claims import AllOf, Estimate, Greater, Near, Within, judge, mark_figure, outcome
from cclab.experiments.sizes import Size, Sizes
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


#: The closed forms are exact: the sizes are grids (no seeds, no simulation).
FIG2_SIZES = Sizes(Size(extra={"f on points": 50, "loads": 6}), Size(extra={"f on points": 197, "loads": 6}))
#: 'Close' (Fig. 2's text) read as a relative gap of at most this for ρ ≥ 0.5.
FIG2_CLOSE = 0.15


@reproduction("background-fig2", paper=PAPER, figure="Fig. 2",
              title="Minimum short-flow delay against the background share f (k = 10)", sizes=FIG2_SIZES)
def fig2(ctx: Context) -> Outcome:
    """Fig. 2: N*(10, f, rho)(1-rho)/rho against f, with Corollary 1's Erlang approximation."""
    k = 10
    fs = np.linspace(0.0, 0.98, int(ctx.size.extra["f on points"]))
    df = fig2_theory(k, fs=fs)
    from cclab.plotting import legend, log_axis, series, subplots

    fig, (ax, axr) = subplots(1, 2, size="wide")
    every = max(1, len(fs) // 10)
    for i, (rho, g) in enumerate(df.groupby("rho")):
        # markers offset per curve so that coinciding curves still show each marker
        ax.plot(g["f"], g["normalized"], **series(i, markevery=(i * every // 6, every)), zorder=3 + i,
                label=f"ours: N*·(1-ρ)/ρ, ρ={rho:g}")
        axr.plot(g["f"], 100 * g["rel_gap"], **series(i, markevery=(i * every // 6, every)),
                 label=f"ρ={rho:g}")
    first = df[df["rho"] == df["rho"].iloc[0]]
    ax.plot(first["f"], first["erlang_approx"], color="k", lw=1, ls=(0, (1, 1)), zorder=10,
            label="ours: Erlang approx. k+1+a_f f (Cor. 1)")
    ax.plot([0.0], [k + 1], "kX", ms=10, mec="white", zorder=11, label="paper: k+1 = 11 at f = 0 (eq. 13, n0 = 0)")
    ax.set_xlabel("fraction f of the excess capacity taken by the CBF")
    ax.set_ylabel("short-flow delay / delay without other traffic")
    log_axis(ax, "y")
    ax.set_title("Fig. 2 (k = 10): the curves for ρ ≥ 0.5 coincide with the approximation;\n"
                 "right: their gap. Paper: approx. 'close for ρ ≥ .5', → ∞ as f → 1")
    legend(ax, "upper left")
    axr.axhline(0, color="k", lw=0.8)
    axr.axvline(0.95, color="0.5", lw=0.6, ls="--")
    axr.set_xlabel("fraction f of the excess capacity taken by the CBF")
    axr.set_ylabel("N*·(1-ρ)/ρ over the Erlang approx. − 1 (%)")
    axr.set_title("relative gap to Corollary 1 (the verdict uses f ≤ 0.95, dashed)")
    legend(axr, "lower left")
    fig.tight_layout()
    # the paper's claim: the Erlang approximation is close for rho >= 0.5 (text of Fig. 2)
    band = df[df["f"] <= 0.95]
    worst = band.groupby("rho")["rel_gap"].apply(lambda s: float(np.max(np.abs(s))))
    hi, lo = worst[worst.index >= 0.5], worst[worst.index < 0.5]
    gap = lambda r: Estimate.const(float(worst[r]), "{:.3f}")
    claims = [AllOf("the Erlang approximation is close for ρ ≥ 0.5: worst gap over f ≤ 0.95 at most 15%",
                    [Within(f"ρ = {r:g}", gap(r), hi=FIG2_CLOSE) for r in hi.index]),
              AllOf("... and closer than at every ρ < 0.5", [Greater(f"ρ = {r:g}", gap(r), float(hi.max()))
                                                            for r in lo.index]),
              AllOf("the gap shrinks as ρ grows", [Greater(f"{a:g} > {b:g}", gap(a), gap(b))
                                                  for a, b in zip(worst.index[:-1], worst.index[1:])])]
    table = "\n".join(f"| {r:g} | {100 * w:.1f}% |" for r, w in worst.items())
    details = f"""
Paper (text under Fig. 2 and caption): "The Erlang loss approximation given in Corollary 1
is close to the minimum delay for ρ ≥ .5" and the delay increases sharply to +∞ as f → 1.
The figure itself is not in our copy of the paper, so only these statements are compared.

Largest relative gap |N*(1-ρ)/ρ ÷ (k+1+a_f f) − 1| over f ≤ 0.95 (k = 10):

| ρ | worst gap |
|---|---|
{table}

At f = 0 all curves start at k + 1 = 11 (eq. 13 with n0 = 0), and they grow without
bound as f → 1 (a_f → ∞). The values are exact closed forms, so no sampling error enters.
"""
    return outcome(df, fig, claims, intro=details,
                   what=f"Erlang approximation within {100 * hi.max():.1f}% of N* for ρ ≥ 0.5 (vs "
                        f"{100 * lo.min():.0f}%+ below), the paper's 'close for ρ ≥ .5'",
                   tolerance="'close' read as ≤ 15% and below every ρ < 0.5 (exact closed forms)")


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


FIG3_SIZES = Sizes(Size(axes={"k": (1, 2, 3, 5, 10, 20)}, extra={"f on points": 99}),
                   Size(axes={"k": (1, 2, 3, 5, 10, 20)}, extra={"f on points": 991}))


@reproduction("background-fig3", paper=PAPER, figure="Fig. 3",
              title="wTCP delay over the optimal delay (ρ → 1) against f, for several k", sizes=FIG3_SIZES)
def fig3(ctx: Context) -> Outcome:
    """Fig. 3: N_w/N* in the rho -> 1 limit, with the 20.7% (k = 1) and 8% (k = 5) values."""
    fs = np.linspace(0.005, 0.995, int(ctx.size.extra["f on points"]))
    df = fig3_theory(fs=fs)
    # the exact k = 1 maximiser, f = 2 - sqrt 2 (Theorem 5.1)
    f0 = 2 - math.sqrt(2)
    peak1 = bg.wtcp_gap_limit(1, f0)
    worst = df.groupby("k")["gap"].max()
    worst[1] = max(worst[1], peak1)
    from cclab.plotting import legend, paper_points, series, subplots

    fig, ax = subplots(1, 1, size=(8.6, 4.6))
    every = max(1, len(fs) // 9)
    for i, (k, g) in enumerate(df.groupby("k")):
        st = series(i, markevery=(i * every // 6, every))
        st["linestyle"] = "-"  # exact limits solid; the bounds of eq. 19 dotted in the same colour
        ax.plot(g["f"], g["ratio"], label=f"ours: k={k}", **st)
        if k in (2, 5):
            ax.plot(g["f"], 1 + g["bound"], ls=(0, (1, 1.5)), color=st["color"], lw=1.1,
                    label=f"ours: bound 1+b_k(f), eq. 19, k={k}")
    paper_points(ax, [f0], [1 + (3 - 2 * math.sqrt(2)) / (2 * math.sqrt(2) - 2)], marker="*", ms=14,
                 label="paper: 20.7% at f = 2-√2, k = 1 (Thm 5, eq. 17)")
    ax.axhline(1.08, color="k", ls="--", lw=0.8, label="paper: worst gap 8% for k = 5 (Sec. II-D)")
    ax.set_ylim(0.99, 1.3)
    ax.set_xlabel("fraction f of the excess capacity taken by the CBF")
    ax.set_ylabel("N_w / N*  (ρ → 1)")
    ax.set_title("Fig. 3: wTCP over the optimal full-information policy")
    legend(ax, "outside")
    fig.tight_layout()
    w = lambda k: Estimate.const(float(worst[k]), "{:.4f}")
    claims = [Near("k = 1: the worst gap is 20.7%, at f = 2 − √2 (Theorem 5, eq. 17)", Estimate.const(peak1, "{:.4f}"),
                   0.207, 5e-4),
              Within("... and it is the largest over f", w(1), hi=peak1 + 1e-12),
              Near("k = 5: the worst difference is 8% (Sec. II-D)", w(5), 0.08, 0.005),
              AllOf("the worst gap decreases as k grows (Fig. 3 caption)",
                    [Greater(f"k = {a}", w(a), w(b)) for a, b in zip(worst.index[:-1], worst.index[1:])])]
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

k = 1: {100 * peak1:.3f}% at f = 2−√2 (paper 20.7%); k = 5: {100 * worst[5]:.2f}% (paper 8%).
The dotted lines are the bound b_k(f) of eq. (19), which lies above the exact limit everywhere.
"""
    return outcome(df, fig, claims, intro=details,
                   what=f"worst wTCP gap {100 * peak1:.2f}% at k = 1 (paper 20.7%), {100 * worst[5]:.2f}% at k = 5 "
                        "(paper 8%)",
                   tolerance="half a unit of the paper's last printed digit: ±0.05 point on 20.7%, ±0.5 point on 8% "
                             "(exact closed forms, so only the paper's rounding limits the comparison)")


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


def implementable_peak(rho: float, k: int = 1, fs=None) -> tuple[float, float]:
    """The largest excess of the optimal implementable policy over the optimal one,
    max_f M*(k, f, rho)/N*(k, f, rho) - 1 ([BG] Theorems 1 and 3), and where it is.

    Computed from the closed forms on the grid ``fs`` (default 201 points in (0, 1)), then
    refined by a bounded Brent search (scipy ``minimize_scalar``, xatol 1e-10) between the
    grid neighbours of the best grid point. The maximum sits at a kink of M*/N* (where the
    optimal threshold n* steps), which the bounded search brackets.

    Returns:
        (f at the maximum, M*/N* - 1 there).
    """
    from scipy.optimize import minimize_scalar

    fs = np.linspace(0.005, 0.995, 201) if fs is None else np.sort(np.asarray(fs, dtype=float))
    gap = lambda f: bg.implementable_mean_flows(k, float(f), rho) / bg.optimal_mean_flows(k, float(f), rho) - 1
    g = np.array([gap(f) for f in fs])
    best_f, best = float(fs[int(np.argmax(g))]), float(g.max())
    # refine around every grid local maximum that comes within 10% of the best (M*/N* has a
    # kink at each step of n*, so there are several)
    for i in range(len(fs)):
        if g[i] >= 0.9 * g.max() and g[i] >= g[max(i - 1, 0)] and g[i] >= g[min(i + 1, len(fs) - 1)]:
            lo, hi = fs[max(i - 1, 0)], fs[min(i + 1, len(fs) - 1)]
            res = minimize_scalar(lambda f: -gap(f), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
            if -res.fun > best:
                best_f, best = float(res.x), float(-res.fun)
    return best_f, best


#: The paper's statements on Fig. 4 (Sec. II-C, caption): M* up to 22% above N* at rho = 0.5,
#: M* and N* practically indistinguishable at rho = 0.9, vanilla doubling the delay at f = 1.
PAPER_FIG4_PEAK = 0.22
#: Our reading of 'practically indistinguishable' (a qualitative claim, not a measured error).
FIG4_INDISTINGUISHABLE = 0.02
#: Closed forms evaluated by a bounded Brent search to xatol 1e-10 in f: the peak value is
#: exact to far better than this; a paper value agrees only within it.
FIG4_PEAK_TOL = 1e-4
#: Vanilla/N* is evaluated at f = 1 - FIG4_F_GAP; its slope near f = 1 is below 2.1 (|d ratio/df|),
#: so the limit is within 2.1 * FIG4_F_GAP of the value there.
FIG4_F_GAP = 1e-6


def plot_fig4(df: pd.DataFrame, peaks: dict | None = None):
    """Draw Fig. 4 from a table shaped like :func:`fig4_theory`'s: for each rho, all policies
    over the optimal (left) and the optimal implementable policy alone on its own y-range
    (right, where M*/N* is a few percent); theory as lines, other sources as markers with
    their confidence intervals. ``peaks``: rho -> (f, M*/N* - 1), marked on the right panels."""
    from cclab.plotting import legend, paper_points, series, subplots

    rhos = sorted(df["rho"].unique())
    fig, axes = subplots(len(rhos), 2, size=(11.5, 3.3 * len(rhos)), sharex=True, squeeze=False)
    idx = {pol: i for i, pol in enumerate(FIG4_POLICIES)}
    for (ax, axz), rho in zip(axes, rhos):
        d = df[df["rho"] == rho]
        th = d[d["source"] == "theory"]
        opt = th[th["policy"] == "optimal"].set_index("f")["mean_flows"]
        for pol in FIG4_POLICIES:
            g = th[th["policy"] == pol]
            if len(g):
                for a in ((ax, axz) if pol in ("optimal", "implementable") else (ax,)):
                    a.plot(g["f"], g["ratio_to_optimal"], **series(idx[pol], marker=False),
                           lw=2.2 if pol == "optimal" else 1.5, zorder=3 if pol == "implementable" else 2,
                           label=f"ours (theory): {pol}")
        for (src, pol), g in d[d["source"] != "theory"].groupby(["source", "policy"]):
            base = opt.reindex(g["f"]).values
            st = series(idx.get(pol, 7), line=False)
            for a in ((ax, axz) if pol in ("optimal", "implementable") else (ax,)):
                a.errorbar(g["f"], g["mean_flows"] / base,
                           yerr=[(g["mean_flows"] - g["ci_low"]) / base, (g["ci_high"] - g["mean_flows"]) / base],
                           capsize=2, zorder=4, label=f"ours ({src}, 95% CI): {pol}", **st)
        paper_points(ax, [1.0], [2.0], marker="*", ms=13, label="paper: vanilla doubles the delay at f = 1 (caption)")
        if rho == 0.5:
            axz.axhline(1 + PAPER_FIG4_PEAK, color="k", ls="--", lw=1,
                        label="paper: implementable 'up to 22%' above optimal (Sec. II-C)")
        if peaks and rho in peaks:
            fp, vp = peaks[rho]
            axz.plot([fp], [1 + vp], marker="o", ms=9, mfc="none", mec="k", ls="none", zorder=5,
                     label=f"exact maximum {100 * vp:.2f}% at f = {fp:.4f}")
        ax.set_ylabel(f"delay / optimal delay, ρ = {rho:g}")
        top = max(th["ratio_to_optimal"].max(), 2.0)
        ax.set_ylim(0.95, top * 1.06)
        imp = th[th["policy"] == "implementable"]["ratio_to_optimal"]
        hi = max(imp.max(), 1 + PAPER_FIG4_PEAK if rho == 0.5 else imp.max())
        axz.set_ylim(0.995, 1 + (hi - 1) * 1.15 + 0.005)
        axz.set_ylabel(f"M* / N* (zoom), ρ = {rho:g}")
        legend(axz, "outside")
    for a in axes[-1]:
        a.set_xlabel("fraction f of the excess capacity taken by the CBF")
    handles = {}
    for a in axes[:, 0]:
        for h, lab in zip(*a.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    axes[-1][0].legend(handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    axes[0][0].set_title(f"Fig. 4 (k = {int(df['k'].iloc[0])}): every policy over the optimal")
    axes[0][1].set_title("the optimal implementable policy on its own scale")
    fig.tight_layout()
    return fig


def fig4_checks(peaks: dict, vanilla_end: dict) -> list:
    """The paper's three statements on Fig. 4 against the closed forms, each a claim with its
    tolerance (the closed forms are exact: the claims have no interval).

    peaks: rho -> (f, max M*/N* - 1) from :func:`implementable_peak`; vanilla_end: rho ->
    vanilla/N* at f = 1 - FIG4_F_GAP.
    """
    out = []
    if 0.5 in peaks:
        f5, p5 = peaks[0.5]
        out.append(Near(f"ρ = 0.5: the implementable policy's delay is up to {100 * PAPER_FIG4_PEAK:.0f}% above the "
                        f"optimal (Sec. II-C); tolerance ±{100 * FIG4_PEAK_TOL:.2f} points (the closed forms maximised "
                        "to 1e-10 in f: numerical precision, not a simulation error)", Estimate.const(p5, "{:.4f}"),
                        PAPER_FIG4_PEAK, FIG4_PEAK_TOL, ours=f"{100 * p5:.2f}% at f = {f5:.4f}"))
    if 0.9 in peaks:
        f9, p9 = peaks[0.9]
        out.append(Within(f"ρ = 0.9: the two are 'practically indistinguishable', read as below "
                          f"{100 * FIG4_INDISTINGUISHABLE:.0f}% (our reading of a qualitative claim)",
                          Estimate.const(p9, "{:.4f}"), hi=FIG4_INDISTINGUISHABLE, ours=f"{100 * p9:.2f}% at f = {f9:.4f}"))
    for rho, v in sorted(vanilla_end.items()):
        tol = 2.1 * FIG4_F_GAP
        out.append(Near(f"ρ = {rho:g}: vanilla doubles the delay at f = 1 (caption); vanilla/N* at f = 1 − "
                        f"{FIG4_F_GAP:g}, tolerance {tol:.1e} (slope ≤ 2.1 times the distance to f = 1)",
                        Estimate.const(v, "{:.6f}"), 2.0, tol))
    return out


def fig4_verdict(df: pd.DataFrame, peaks: dict | None = None) -> tuple[str, str, list]:
    """Compare the closed forms behind a Fig. 4 table with the paper's statements: the
    numbers of the verdict, the details, and the claims.

    ``peaks`` (rho -> (f, M*/N* - 1)) defaults to :func:`implementable_peak` on the table's f grid.
    """
    th = df[df["source"] == "theory"]
    k = int(th["k"].iloc[0])
    rhos = sorted(th["rho"].unique())
    if peaks is None:
        peaks = {r: implementable_peak(r, k, th[th["rho"] == r]["f"].unique()) for r in rhos}
    van_end = {r: bg.vanilla_mean_flows(k, 1 - FIG4_F_GAP, r) / bg.optimal_mean_flows(k, 1 - FIG4_F_GAP, r)
               for r in rhos}
    van = th[th["policy"] == "vanilla"]
    van_max = van.groupby("rho")["ratio_to_optimal"].max()
    checks = fig4_checks(peaks, van_end)
    f5, p5 = peaks.get(0.5, (math.nan, math.nan))
    table = "\n".join(f"| {r:g} | {100 * peaks[r][1]:.2f}% | {peaks[r][0]:.4f} | {van_end[r]:.6f} | {van_max[r]:.2f} |"
                      for r in rhos)
    details = f"""
Paper (Sec. II-C and Fig. 4 caption, k = 1): the optimal implementable policy's delay "can
be up to 22% higher than the optimal for ρ = 0.5"; "for ρ = 0.9 the delays of the two
algorithms are practically indistinguishable"; 'vanilla' (every background file its own TCP
flow) "doubles the delay at f = 1" and "could more than double" it (Sec. I).

| ρ | max M*/N* − 1 (exact) | at f | vanilla/N* at f = 1 − {FIG4_F_GAP:g} | max vanilla/N* on the grid |
|---|---|---|---|---|
{table}

**The paper's 22% is not what its own formulas give.** M* (Theorem 3: x_n = min(x̄, C/(k+n)),
eq. 15, x̄ solved for the target f) and N* (Theorem 1 with the fractional x_(n*+1) of eq. 10),
both checked against the stationary distribution of chain (1) in `tests/test_theory_background.py`,
give M*/N* − 1 at most **{100 * p5:.2f}% at f = {f5:.4f}** for ρ = 0.5 (the kink f = 2/3 where the
optimal threshold n* steps from 0 to 1). Computation: M*/N* − 1 on the f grid of the table,
then a bounded Brent search (`scipy.optimize.minimize_scalar`, xatol 1e-10) between the grid
neighbours of the best grid point (`implementable_peak`). The 22% is about 3 points above
this, far outside the numerical precision of the closed forms, so this claim **disagrees**:
the paper's number is either read loosely off its figure or from a different computation.

Vanilla/N* → (k+1)/(k+1−f) · N_w/N* → 2 as f → 1 and exceeds 2 at intermediate f.
"""
    verdict = (f"M*/N* peaks at {100 * p5:.2f}% (f = {f5:.4f}) for ρ=0.5, exact closed forms (tolerance "
               f"±{100 * FIG4_PEAK_TOL:.2f} points): the paper's 22% is not what its formulas give; "
               + (f"{100 * peaks[0.9][1]:.2f}% for ρ=0.9 (paper: indistinguishable, read as < 2%); " if 0.9 in peaks else "")
               + "vanilla/N* → 2 as f → 1 (to 2e-6)")
    return verdict, details, checks


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


FIG4_SIZES = Sizes(
    Size(axes={"ρ": (0.5, 0.9), "simulated f": (0.2, 0.5, 0.8)}, flow=(10, 1e5), extra={"theory's f on points": 25}),
    Size(axes={"ρ": (0.5, 0.9), "simulated f": (0.1, 0.3, 0.5, 2 / 3, 0.8, 0.9)}, flow=(20, 1e6),
         extra={"theory's f on points": 197}))


@reproduction("background-fig4", paper=PAPER, figure="Fig. 4",
              title="Short-flow delay under optimal, implementable, wTCP and vanilla CBF policies (k = 1)",
              sizes=FIG4_SIZES)
def fig4(ctx: Context) -> Outcome:
    """Fig. 4: delay of each CBF policy over the optimal one, rho = 0.5 and 0.9, k = 1."""
    size = ctx.size
    fs = np.linspace(0.01, 0.99, int(size.extra["theory's f on points"]))
    # include the kink f = 2/3 (n* 0 -> 1 at rho = 0.5, k = 1) where M*/N* peaks
    sim_fs = size.axis("simulated f")
    fs = np.unique(np.concatenate([fs, [2.0 / 3.0], sim_fs]))  # theory also at the simulated f
    rhos = size.axis("ρ")
    df = fig4_theory(1, rhos, fs)
    peak_fs = np.union1d(fs, np.linspace(0.005, 0.995, 100))  # the peak on at least 100 points
    peaks = {r: implementable_peak(r, 1, peak_fs) for r in rhos}
    what, details, claims = fig4_verdict(df, peaks)
    replications, duration = size.flow
    # second line of evidence: the flow-level simulator
    sim = fig4_flowsim(1, rhos, sim_fs, duration=duration, replications=replications, seed=ctx.seed)
    inside, widen = flowsim_within(sim, replications)
    half = sim["ci_high"] - sim["mean_flows"]
    claims.append(AllOf(f"the flow-level simulator agrees with the closed forms: every point within its "
                        f"Bonferroni-corrected 95% interval ({widen:.2f} × the per-point half-width)",
                        [Near(f"ρ {r.rho:g}, f {r.f:.2f}, {r.policy}", Estimate.const(r.mean_flows, "{:.3f}"), r.theory,
                              widen * h) for r, h in zip(sim.itertuples(), half)],
                        ours=f"{int(inside.sum())} of {len(sim)} points inside"))
    worst = ((sim["mean_flows"] - sim["theory"]) / sim["theory"]).abs().max()
    details += (f"\n**Flow-level simulator** (`cclab.flowsim`, markers with 95% intervals over "
                f"{replications} independent replications): {int(inside.sum())} of {len(sim)} (ρ, f, policy) "
                f"points lie within the simultaneous 95% interval of the theory (Bonferroni over the "
                f"{len(sim)} points: each half-width times t(1−0.025/{len(sim)})/t(0.975) = {widen:.2f}, "
                f"so all points inside has probability ≥ 95% if the simulator matches the theory); "
                f"the largest relative difference is {100 * worst:.1f}%.\n")
    df = pd.concat([df, sim], ignore_index=True)
    fig = plot_fig4(df, peaks)
    mark_figure(fig, claims, "Fig. 4 (k = 1): every policy over the optimal, and the implementable one on its scale")
    return outcome(df, fig, claims, intro=details, what=what,
                   tolerance="closed forms to their numerical precision; the simulator within its simultaneous "
                             "95% interval")


def flowsim_within(sim: pd.DataFrame, replications: int, confidence: float = 0.95) -> tuple[pd.Series, float]:
    """Which simulated points lie within a simultaneous ``confidence`` interval of the theory.

    Each row's 95% Student-t half-width (``ci_high - mean_flows``, over ``replications``
    replications) is widened by t(1 - (1-confidence)/(2m)) / t(0.975) for the m rows
    (Bonferroni), so that every point of a correct simulator falls inside with probability at
    least ``confidence``. Returns (inside per row, the widening factor).
    """
    from cclab.stats import t_quantile

    m = len(sim)
    widen = t_quantile(1 - (1 - confidence) / m, replications - 1) / t_quantile(0.95, replications - 1)
    half = sim["ci_high"] - sim["mean_flows"]
    return (sim["theory"] - sim["mean_flows"]).abs() <= widen * half, widen
