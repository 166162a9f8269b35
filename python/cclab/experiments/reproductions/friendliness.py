"""Reproduction of the flow-level alpha/beta analysis of TFCBR.

Paper: "TCP-Friendly CBR-Like Rate Control" (``shared/papers/tcp-friendly-cbr-like-rate-control.md``),
Sec. V-B: with beta = infinity (TFCBR is a CBR source at alpha times the TCP rate),

* Theorem 3 (point B): the short-flow number is stochastically no larger under TFCBR
  than under TCP for every n, n_u, n_2, rho_1 only if alpha = 0;
* Theorem 4 (point C): R1 and E[X2] are no smaller under TFCBR than under TCP for every
  n_u >= 1, n_2 >= 0, rho_1 iff alpha <= 0.5, the infimum of eq. (4);
* stability: rho_1 < 1 - r  <=>  alpha < 1 + n_2/n_u.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from cclab.experiments.catalogue import Context, Outcome, reproduction
from cclab.experiments.claims import Estimate, Near, mark_figure, outcome
from cclab.experiments.sizes import Size, Sizes
from cclab.plotting import legend, log_axis, pyplot, series, text_number
from cclab.theory import friendliness as fr

PAPER = "tcp-friendly-cbr-like-rate-control"


def alpha_beta_table(alphas, n2s=range(0, 6), nus=range(1, 6), rho1s=(0.1, 0.3, 0.5, 0.7, 0.9)) -> pd.DataFrame:
    """Evaluate the flow-level criteria of [TF] Sec. V-B on a grid.

    Args:
        alphas: TFCBR rate ratios alpha to test.
        n2s: numbers of long-lived TCP flows.
        nus: numbers of long-lived UDP flows (>= 1).
        rho1s: short-flow loads.

    Returns:
        one row per (alpha, n2, nu, rho1): ``stable`` (alpha < 1 + n2/nu),
        ``stf_mean`` (R1 and E[X2] no smaller than under TCP, from the rate formulas of
        Theorem 4's proof), ``eq4_bound`` ((n2+nu)/(n2+nu+1)) and ``number_dominance``
        (P[N1_TCP <= n] <= P[N1_TFCBR <= n] for every n, Theorem 3; False when unstable).
    """
    rows = []
    for a in alphas:
        for n2 in n2s:
            for nu in nus:
                stable = fr.tfcbr_stable(a, n2, nu)
                for rho1 in rho1s:
                    dom = fr.number_dominance(a, rho1, n2, nu)[0] if stable else False
                    rows.append(dict(alpha=float(a), n2=n2, nu=nu, rho1=rho1, stable=stable,
                                     stf_mean=fr.stf_mean_holds(a, rho1, n2, nu) if stable else False,
                                     eq4_bound=fr.alpha_bound(n2, nu), number_dominance=dom))
    return pd.DataFrame(rows)


def _alpha_beta_figure(bound, largest_mean, largest_dom):
    """The bounds on α per n2 + nu beside eq. (4), and Theorem 3's CDFs and survival functions."""
    plt = pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.4))
    tot = np.array([n2 + nu for n2, nu in bound.index])
    ax1.plot(tot, largest_mean.values, "o", color="tab:blue", ms=6,
             label="ours: largest α with R1, E[X2] ≥ TCP (grid, all ρ1)")
    tt = np.arange(1, tot.max() + 1)
    ax1.plot(tt, tt / (tt + 1), "k-", lw=1, label="ours: eq. (4) (n2+nu)/(n2+nu+1)")
    ax1.plot(tot, largest_dom.values, "s", color="tab:red", ms=5,
             label="ours: largest α with P[N1≤n] dominance (Thm 3)")
    ax1.axhline(0.5, color="tab:blue", ls="--", lw=1, label="paper: point C, α = 0.5 (Thm 4)")
    ax1.axhline(0.0, color="tab:red", ls="--", lw=1, label="paper: point B, α = 0 (Thm 3)")
    ax1.axhline(1.0, color="gray", ls=":", lw=1, label="paper: stability α < 1 when n2 = 0")
    ax1.set_xlabel("n2 + nu (long-lived TCP + UDP flows)")
    ax1.set_ylabel("α")
    ax1.set_ylim(-0.05, 1.1)
    ax1.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 0.07))
    ax1.grid(alpha=0.3)
    ax1.set_title("bounds on α (β = ∞)", fontsize=9)
    # Theorem 3 illustrated: CDFs of the short-flow number, alpha = 0.5, n2 = 0, nu = 1, rho1 = 0.5
    n = np.arange(0, 40)
    nn = np.arange(0, 81)
    tcp_style = dict(color="k", lw=1.8, ls="-")
    ax2.step(n, fr.tcp_short_flow_cdf(n, 0.5, 0, 1), where="post", label="ours: TCP, eq. (2)", **tcp_style)
    ax3.step(nn, 1 - fr.tcp_short_flow_cdf(nn, 0.5, 0, 1), where="post", label="TCP, eq. (2)", **tcp_style)
    for i, a in enumerate((0.25, 0.5, 0.75)):
        st = series(i, marker=False)
        ax2.step(n, fr.tfcbr_short_flow_cdf(n, a, 0.5, 0, 1), where="post", label=f"ours: TFCBR α={a}, eq. (1)", **st)
        ax3.step(nn, 1 - fr.tfcbr_short_flow_cdf(nn, a, 0.5, 0, 1), where="post", label=f"TFCBR α={a}, eq. (1)", **st)
    ax2.set_xlabel("n (short TCP flows)")
    ax2.set_ylabel("P[N1 ≤ n]")
    ax2.set_title("ρ1 = 0.5, n2 = 0, nu = 1: TFCBR's CDF falls below TCP's in the tail", fontsize=9)
    ax2.legend(fontsize=7)
    log_axis(ax3, "y")
    ax3.set_ylim(1e-16, 1.5)
    ax3.set_xlabel("n (short TCP flows)")
    ax3.set_ylabel("P[N1 > n] (log scale)")
    ax3.set_title("survival: TCP decays like ρ1^n, TFCBR like (ρ1/(1−r))^n,\nso every α > 0 crosses TCP (Thm 3)",
                  fontsize=9)
    legend(ax3, "lower left")

    return fig


@reproduction("tfcbr-alpha-beta", paper=PAPER, figure="Sec. V-B",
              title="Flow-level bounds on TFCBR's alpha (β → ∞): STF-st only at α = 0, STF-μ iff α ≤ 0.5",
              sizes=Sizes(Size(axes={"n2": (0, 1, 2, 3), "nu": (1, 2, 3), "ρ1": (0.1, 0.5, 0.9)},
                               extra={"α on [0, 1.5] in steps of": 1 / 40}),
                          Size(axes={"n2": (0, 1, 2, 3, 4, 5), "nu": (1, 2, 3, 4, 5), "ρ1": (0.1, 0.3, 0.5, 0.7, 0.9)},
                               extra={"α on [0, 1.5] in steps of": 1 / 200})))
def tfcbr_alpha_beta(ctx: Context) -> Outcome:
    """Sec. V-B of the TFCBR paper: the alpha boundaries of points B and C and stability."""
    step = float(ctx.size.extra["α on [0, 1.5] in steps of"])
    alphas = np.round(np.arange(0.0, 1.5 + 1e-9, step), 10)
    df = alpha_beta_table(alphas, n2s=ctx.size.axis("n2"), nus=ctx.size.axis("nu"), rho1s=ctx.size.axis("ρ1"))
    per = df.groupby(["n2", "nu"])
    # largest alpha on the grid meeting each criterion for all loads
    largest_mean = per.apply(lambda g: g.groupby("alpha")["stf_mean"].all().pipe(
        lambda s: s[s].index.max()), include_groups=False)
    largest_dom = per.apply(lambda g: g.groupby("alpha")["number_dominance"].all().pipe(
        lambda s: s[s].index.max()), include_groups=False)
    bound = per["eq4_bound"].first()
    universal_mean = df.groupby("alpha")["stf_mean"].all()
    universal_mean = float(universal_mean[universal_mean].index.max())
    universal_dom = df.groupby("alpha")["number_dominance"].all()
    universal_dom = float(universal_dom[universal_dom].index.max())
    # eq. (4) on the grid: the largest grid alpha <= bound
    grid_bound = bound.apply(lambda b: alphas[alphas <= b + 1e-12].max())
    eq4_gap = float(np.max(np.abs(largest_mean.values - grid_bound.values)))
    eq4_ok = eq4_gap < 1e-9
    # stability boundary 1 + n2/nu: the first unstable alpha on the grid
    stab = df.groupby(["n2", "nu"]).apply(lambda g: g.loc[~g["stable"], "alpha"].min(), include_groups=False)
    stab_gap = max([abs(stab[(n2, nu)] - alphas[alphas >= 1 + n2 / nu - 1e-12].min())
                    for (n2, nu) in stab.index if (1 + n2 / nu) <= alphas.max()] or [0.0])
    stab_ok = stab_gap < 1e-9

    fig = _alpha_beta_figure(bound, largest_mean, largest_dom)

    claims = [Near("Theorem 4 (point C): the largest α that is STF-μ for every setting is 0.5",
                   Estimate.const(universal_mean, "{:g}"), 0.5, 1e-9),
              Near("Theorem 3 (point B): STF-st (number dominance) for every setting only at α = 0",
                   Estimate.const(universal_dom, "{:g}"), 0.0, 1e-9),
              Near("eq. (4): the largest STF-μ α per (n2, nu) is (n2+nu)/(n2+nu+1), on the grid",
                   Estimate.const(eq4_gap, "{:g}"), 0.0, 1e-9, ours=f"largest difference {eq4_gap:g}"),
              Near("stability needs α < 1 + n2/nu (§V-B.4): the first unstable α of the grid",
                   Estimate.const(stab_gap, "{:g}"), 0.0, 1e-9, ours=f"largest difference {stab_gap:g}")]
    table = "\n".join(
        f"| {n2} | {nu} | {bound[(n2, nu)]:.4f} | {largest_mean[(n2, nu)]:.4f} | {largest_dom[(n2, nu)]:.4f} |"
        for (n2, nu) in bound.index if n2 <= 2 and nu <= 3)
    details = f"""
Paper (Sec. V-B): Theorem 3 — with β = ∞, TFCBR keeps P[N1_TCP ≤ n] ≤ P[N1_TFCBR ≤ n] for
every n, n_u, n_2, ρ1 iff α = 0 (point B); Theorem 4 — R1 and E[X2] are no smaller than
under TCP for every n_u ≥ 1, n_2 ≥ 0, ρ1 iff α ≤ 0.5 (point C), from eq. (4)
α ≤ (n2+nu)/(n2+nu+1); stability needs α < 1 + n2/nu (α < 1 when n2 = 0).

Computed on the grid α ∈ [0, 1.5] step {step:g}, n2 ∈ {{{', '.join(map(text_number, sorted(df.n2.unique())))}}},
nu ∈ {{{', '.join(map(text_number, sorted(df.nu.unique())))}}}, ρ1 ∈ {{{', '.join(map(text_number, sorted(df.rho1.unique())))}}}
directly from the PS model (eqs. 1, 2 and the rate formulas), not from eq. (4):

- largest α that satisfies the STF-μ criteria for every setting: **{universal_mean:g}** (paper 0.5);
- largest α with number dominance for every setting: **{universal_dom:g}** (paper 0);
- per (n2, nu), the largest STF-μ α equals eq. (4) on the grid: {'yes' if eq4_ok else 'NO'};
- the first unstable α equals 1 + n2/nu on the grid: {'yes' if stab_ok else 'NO'}.

| n2 | nu | eq. (4) | largest STF-μ α (grid) | largest dominance α (grid) |
|---|---|---|---|---|
{table}

Number dominance fails for every α > 0 because under TFCBR the tail of N1 decays like
(ρ1/(1−r))^n instead of ρ1^n; the survival functions are compared exactly in log space
(as sums of binomial terms) on every n ≤ 4096 and on a 0.1%-spaced grid up to 10^12, so
the crossing is found even when it lies where the probabilities are far below 1e-300.
The packet-level boundaries of Figs. 6-11
(6/8 for DropTail, 4/8 for RED) are the entry `tfcbr-alpha-beta-packet`.
"""
    mark_figure(fig, claims, "TFCBR flow-level analysis (Sec. V-B)")
    return outcome(df, fig, claims, intro=details,
                   what=f"largest α that is STF-μ everywhere = {universal_mean:g} (paper 0.5), STF-st (number order) "
                        f"only at α = {universal_dom:g} (paper 0)",
                   tolerance=f"exact on the α grid of step {step:g}: the criteria are evaluated exactly, the grid "
                             "step is the only resolution")
