"""Reproductions of Podlesny and Gorinsky, "Lower Bounds on Queuing and Loss at Highly
Multiplexed Links" (WUCSE-2007-42; ``shared/papers/lower-bounds-queuing-loss.md``),
Figs. 4-12, plus one entry beyond the paper (N up to 10^6).

All simulations use the exact steady-state method of section V (arrival times reduced
modulo T, eq. 23) in :mod:`cclab.theory.lower_bounds`; bounds come from section IV
(eqs. 19, 22). The paper's values are those stated in its text (its figures are not
digitised); where the text gives a qualitative claim, we test that claim. Queue sizes are
q = d / D in packets (eq. 6), fractional.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from cclab.experiments.catalogue import Context, Outcome, reproduction
from cclab.experiments.claims import AllOf, Estimate, Greater, Near, Within, mark_figure, outcome
from cclab.experiments.runs import Point, replicate
from cclab.experiments.sizes import Size, Sizes
from cclab.plotting import legend, log_axis, pyplot, series, text_number
from cclab.theory import lower_bounds as lb

PAPER = "lower-bounds-queuing-loss"

#: The three main inter-arrival distributions of Fig. 2 (Pareto with k = 2.1).
MAIN = (("uniform", 2.1), ("exponential", 2.1), ("pareto", 2.1))
#: The five of Fig. 5 (Pareto also with k = 1.8 and 2.5).
FIVE = MAIN + (("pareto", 1.8), ("pareto", 2.5))
COLORS = {"uniform": "tab:blue", "exponential": "tab:orange", "pareto": "tab:green"}

# Default link of section V: C = 100 Mbps, S = 1,000 bytes, so D = 80 us and T = 80 ms at N = 1,000.
LINK_BPS = 100e6
PACKET_BYTES = 1000
D_SECONDS = PACKET_BYTES * 8 / LINK_BPS


def _label(dist: str, k: float) -> str:
    return f"Pareto k={k:g}" if dist == "pareto" else dist.capitalize()


def _color(dist: str, k: float) -> str:
    if dist == "pareto" and k != 2.1:
        return {1.8: "tab:red", 2.5: "tab:purple"}.get(k, "tab:gray")
    return COLORS[dist]


def _runs(ctx: Context) -> int:
    """Runs per point of the smooth-sender entries (their size's ``runs``)."""
    return int(ctx.size.extra["runs"])


def _sizes(quick: dict, full: dict) -> Sizes:
    """The two sizes of a smooth-sender entry: runs per point, and what else it varies."""
    return Sizes(Size(extra=quick), Size(extra=full))


RUNS = _sizes({"runs": 100}, {"runs": 1000})


def _finish(data, fig, checks: dict, details: str, verdict: str, tolerance: str, title: str = "") -> Outcome:
    """The outcome of a smooth-sender entry: each of its checks (a comparison of exact,
    pooled numbers, stated with them in its text; None: shown, not judged) as a claim
    that holds or fails (the runs are pooled, so there is no interval and no replication
    round), the shared epilogue, and the verdict's numbers."""
    claims = [Within(text, Estimate.const(1.0 if ok else 0.0, "{:g}"), lo=1.0, ours="yes" if ok else "no")
              for text, ok in checks.items() if ok is not None]
    if title:
        mark_figure(fig, claims, title)
    return outcome(data, fig, claims, intro=details, what=verdict, tolerance=tolerance)


def _md_table(df: pd.DataFrame, floatfmt: str = "{:.4g}") -> str:
    """A DataFrame as a Markdown table (no extra dependency)."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = []
        for c in cols:
            cells.append(text_number(row[c], floatfmt))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- Fig. 4

def queue_trace(phases: np.ndarray, waits: np.ndarray, packet_time: int, period: int,
                boundary: int) -> tuple[np.ndarray, np.ndarray]:
    """Unfinished work (packets) over one steady-state period, as a polyline.

    Between arrivals the work drains at one packet per D (clipped at zero); an arriving packet
    finds its wait and adds one packet. Returns (time in ticks from the period start, work in
    packets).

    phases: sorted arrival phases in ticks; waits: their steady-state waits (ticks, none
    dropped); packet_time: D in ticks; period: T in ticks; boundary: work at the period start
    (ticks).
    """
    t, q = [0], [boundary]
    prev_t, prev_w = 0, boundary
    for p, w in zip(np.asarray(phases).tolist(), np.asarray(waits).tolist()):
        if prev_t + prev_w < p:
            t += [prev_t + prev_w, p]
            q += [0, 0]
        t += [p, p]
        q += [w, w + packet_time]
        prev_t, prev_w = p, w + packet_time
    if prev_t + prev_w < period:
        t += [prev_t + prev_w, period]
        q += [0, 0]
    else:
        t += [period]
        q += [prev_w - (period - prev_t)]
    return np.asarray(t, dtype=float), np.asarray(q, dtype=float) / packet_time


@reproduction("lowerbounds-fig4", paper=PAPER, figure="Fig. 4",
              title="One period of steady-state queuing (N = 1,000, U = 1, T = 80 ms)",
              sizes=_sizes({"runs": 1}, {"runs": 1}))
def fig4(ctx: Context) -> Outcome:
    """One steady-state period of the queue for each main distribution."""
    plt = pyplot()
    n, u = 1000, 1.0
    tpp = lb.TICKS_PER_PACKET
    period = lb.period_ticks(n, u, tpp)
    rows, summary = [], []
    fig, axes = plt.subplots(3, 1, figsize=(8, 7.5), sharex=True)
    for ax, (dist, k) in zip(axes, MAIN):
        arr = lb.arrival_times(n, dist, u, seed=ctx.seed, run=0, k=k)
        st = lb.steady_queue(arr, period, tpp)
        order = np.lexsort((np.arange(n), st.phase))
        t, q = queue_trace(st.phase[order], st.wait[order], tpp, period, int(round(st.boundary * tpp)))
        ms = t / tpp * D_SECONDS * 1e3
        ax.plot(ms, q, color=_color(dist, k), lw=0.8, label=f"{_label(dist, k)}: work in the link")
        ax.plot(st.phase[order] / tpp * D_SECONDS * 1e3, st.queue[order], ".", ms=2, color="k",
                label="queue found by each packet (eq. 6)")
        ax.set_ylabel("queue (packets)")
        ax.legend(loc="upper left", fontsize=8)
        rows += [{"dist": dist, "k": k, "time_ms": a, "queue_packets": b} for a, b in zip(ms, q)]
        summary.append({"distribution": _label(dist, k), "periods to steady state": st.periods,
                        "mean queue": float(np.mean(st.queue)), "max queue": float(np.max(st.queue)),
                        "queue at period start": st.boundary})
    axes[-1].set_xlabel("time within the steady-state period [T, 2T) (ms); T = 80 ms")
    axes[0].set_title("Fig. 4 (ours): one period of steady-state queuing, N = 1,000, U = 1\n"
                      "paper gives no numbers for this figure")
    fig.tight_layout()
    s = pd.DataFrame(summary)
    ok = bool((s["periods to steady state"] <= 2).all())
    details = (
        "One run per distribution (RNG stream (seed, 0)); C = 100 Mbps, S = 1,000 B, so D = 80 us "
        "and T = 80 ms. The curve is the unfinished work in the link; dots are the queue each packet "
        "finds (eq. 6). The paper shows the same kind of trace but states no numbers, so there is "
        "nothing to compare quantitatively; the steady state repeated after at most 2 periods, as "
        "section V's transformation (eq. 23) promises.\n\n" + _md_table(s))
    return Outcome(data=pd.DataFrame(rows), figure=fig,
                   verdict="shape as in the paper: queue builds from asynchrony alone; "
                           f"peaks {', '.join(f'{r:.0f}' for r in s['max queue'])} packets "
                           "(uniform, exponential, Pareto 2.1)" + ("" if ok else "; steady state NOT reached in 2 periods"),
                   tolerance="none needed: the only check is that the steady state repeats exactly (integer "
                             "ticks) within 2 periods, as eq. 23 promises",
                   details=details, agrees=None if ok else False)


# ----------------------------------------------------------------------------- Fig. 5

PCTS = np.array([0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.5, 99.9, 100])


@reproduction("lowerbounds-fig5", paper=PAPER, figure="Fig. 5",
              title="Queue CDFs for five inter-arrival distributions (N = 1,000, U = 1)", sizes=RUNS)
def fig5(ctx: Context) -> Outcome:
    """Pooled queue CDFs for uniform, exponential and Pareto k = 2.1, 1.8, 2.5."""
    plt = pyplot()
    runs = _runs(ctx)
    res = {(d, k): lb.smooth_queue(1000, d, runs=runs, seed=ctx.seed, k=k) for d, k in FIVE}
    rows = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (d, k), r in res.items():
        x, p = r.cdf()
        ax.plot(x, p, color=_color(d, k), label=_label(d, k))
        for pc, v in zip(PCTS, r.percentile(PCTS)):
            rows.append({"dist": d, "k": k, "percentile": pc, "queue_packets": v})
    df = pd.DataFrame(rows)
    pv = df.pivot_table(index="percentile", columns=["dist", "k"], values="queue_packets")
    uni, exp_, par = pv[("uniform", 2.1)], pv[("exponential", 2.1)], pv[("pareto", 2.1)]
    checks = {
        "uniform is the smoothest (smallest 95th and 99th percentile of all five)":
            all(uni[p] <= pv.loc[p].min() + 1e-12 for p in (95, 99)),
        "Pareto 2.1 above exponential at the top (95th, 99th)": bool(par[95] > exp_[95] and par[99] > exp_[99]),
        "Pareto 2.1 below exponential at the bottom (1st, 5th, 10th)":
            bool(all(par[p] < exp_[p] for p in (1, 5, 10))),
    }
    ax.set_xlabel("queue size (packets)")
    ax.set_ylabel("fraction of packets (CDF)")
    ax.set_xlim(0, float(pv.loc[99.5].max()) * 1.05)
    ax.set_title("Fig. 5 (ours): N = 1,000, U = 1, pooled over %d runs\n"
                 "paper: qualitative claims only (section V text)" % runs)
    ax.legend()
    fig.tight_layout()
    table = pv.loc[[1, 5, 10, 50, 90, 95, 99]].copy()
    table.columns = [_label(d, k) for d, k in table.columns]
    details = (
        "Paper (section V, text on Fig. 5): all five distributions show similar profiles with sharp "
        "increases at the top percentiles; queuing is smoothest under Uniform; Pareto k = 2.1 gives "
        "larger queues than Exponential at top percentiles but smaller at bottom percentiles.\n\n"
        "Queue (packets) at selected percentiles of the pooled packets:\n\n"
        + _md_table(table.reset_index()))
    return _finish(df, fig, checks, details,
                   f"99th percentile: uniform {uni[99]:.0f}, exponential {exp_[99]:.0f}, Pareto {par[99]:.0f}",
                   f"orderings of the pooled percentiles of {runs} runs, strict, no margin (the claims are "
                   "qualitative orderings)")


# ----------------------------------------------------------------------------- Fig. 6

@reproduction("lowerbounds-fig6", paper=PAPER, figure="Fig. 6",
              title="Queue CDFs for N = 100 ... 5,000 (U = 1)", sizes=RUNS)
def fig6(ctx: Context) -> Outcome:
    """Pooled queue CDFs for several N, for each main distribution."""
    plt = pyplot()
    runs = _runs(ctx)
    ns = (100, 500, 1000, 2000, 5000)
    rows, low_hw = [], {}
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, (d, k) in zip(axes, MAIN):
        for j, n in enumerate(ns):
            r = lb.smooth_queue(n, d, runs=runs, seed=ctx.seed, k=k)
            if n == 100:
                low_hw[d] = batch_percentile_ci(r.queues, 5)
            x, p = r.cdf()
            ax.plot(x, p, **series(j, markevery=max(1, len(x) // 8)), label=f"N = {n:,}")
            for pc, v in zip(PCTS, r.percentile(PCTS)):
                rows.append({"dist": d, "k": k, "n": n, "percentile": pc, "queue_packets": v})
        ax.axhline(0.05, color="k", lw=0.6, ls=":")
        ax.axvline(FIG6_NO_QUEUE, color="0.4", lw=0.6, ls="--")
        ax.set_title(_label(d, k))
        ax.set_xlabel("queue size found (packets; linear below 1, log above)")
        log_axis(ax, "x", symlog_threshold=1.0)
        ax.set_xlim(0, None)
    axes[0].set_ylabel("fraction of packets (CDF)")
    axes[0].text(FIG6_NO_QUEUE, 0.06, " 1 packet", fontsize=7, color="0.3")
    axes[0].text(0.02, 0.07, "5th percentile", fontsize=7)
    legend(axes[-1], "outside")
    fig.suptitle(f"Fig. 6 (ours): U = 1, {runs} runs; paper: bottom 5% see no queuing at N = 100, "
                 "up to ~10 packets at N = 5,000")
    fig.tight_layout()
    df = pd.DataFrame(rows)
    p5 = df[df.percentile == 5].pivot_table(index="n", columns="dist", values="queue_packets")
    grow = all(
        np.all(np.diff(df[(df.dist == d) & (df.percentile == pc)].sort_values("n").queue_packets) > 0)
        for d, _ in MAIN for pc in (5, 50, 95, 99))
    hw = pd.Series(low_hw)
    low_ok, high_ok, high = fig6_claims(p5, hw)
    checks = {"5th, 50th, 95th, 99th percentiles grow with N for every distribution": grow,
              f"5th percentile at N = 100 at most {FIG6_NO_QUEUE:g} packet (paper: no queuing)": low_ok,
              f"5th percentile at N = 5,000 reaches {high:.1f} packets (paper: 'as large as 10', [5, 15))": high_ok}
    details = (
        "Paper (section V, text on Fig. 6): larger N consistently produces longer queues; 'while "
        "bottom 5% packets experience no queuing at all with 100 flows, queue sizes for this "
        "percentile can be as large as 10 packets with 5,000 flows'. The paper does not say which "
        "distribution the figure shows; we show all three. Tolerances: 'no queuing' is read at the "
        "queue's resolution, one packet: our queues are fractional (eq. 6), and a packet that finds at "
        f"most {FIG6_NO_QUEUE:g} packet of work finds no whole packet waiting ahead, only the one being "
        "transmitted (the same reading as Fig. 8's); so the 5th percentile at N = 100 must be at most "
        f"{FIG6_NO_QUEUE:g} packet for every distribution, within its 95% confidence interval (batch means: "
        f"the runs split into {FIG6_BATCHES} batches, Student t over the batches' pooled 5th percentiles). 'As large as 10' is a one-significant-figure "
        "number: it agrees with any value that rounds to 10 at that precision, [5, 15) packets (largest "
        "over the three distributions).\n\n"
        f"- {'OK' if grow else 'FAILS'}: 5th, 50th, 95th, 99th percentiles grow with N for every distribution\n"
        f"- {'OK' if low_ok else 'FAILS'}: 5th percentile at N = 100 at most {FIG6_NO_QUEUE:g} packet "
        "(" + ", ".join(f"{d} {p5.loc[100, d]:.3f} ± {hw[d]:.3f}" for d, _ in MAIN) + ")\n"
        f"- {'OK' if high_ok else 'FAILS'}: 5th percentile at N = 5,000 reaches {high:.1f} packets (paper: 'as large as 10')\n\n"
        "5th percentile (packets):\n\n" + _md_table(p5.reset_index()))
    return _finish(df, fig, checks, details,
                   f"5th percentile {p5.loc[100].max():.2f} packets at N = 100 (paper: no queuing) and up to "
                   f"{high:.1f} at N = 5,000 (paper: ~10)",
                   f"'no queuing' at most {FIG6_NO_QUEUE:g} packet, the queue's resolution, within the 95% CI of "
                   f"the runs (±{hw.max():.3f}); ~10 as [5, 15), the rounding of a one-significant-figure number")


#: 'No queuing' at the queue's resolution: a packet finding at most one packet of (fractional,
#: eq. 6) work finds no whole packet waiting ahead of it.
FIG6_NO_QUEUE = 1.0


#: Batches of runs for the confidence interval of a pooled percentile (batch means).
FIG6_BATCHES = 10


def batch_percentile_ci(queues: np.ndarray, p: float, batches: int = FIG6_BATCHES,
                        confidence: float = 0.95) -> float:
    """Half-width of a ``confidence`` interval of the pooled ``p``-th percentile of ``queues``
    (runs x packets), by batch means: the runs (independent) split into ``batches`` groups,
    the pooled percentile of each, and a Student-t interval over the groups."""
    from cclab.stats import t_quantile

    groups = np.array_split(np.asarray(queues), batches, axis=0)
    vals = np.array([np.percentile(g, p) for g in groups if len(g)])
    if len(vals) < 2:
        return float("nan")
    return float(t_quantile(confidence, len(vals) - 1) * vals.std(ddof=1) / math.sqrt(len(vals)))


def fig6_claims(p5: pd.DataFrame, halfwidth: pd.Series | None = None) -> tuple[bool, bool, float]:
    """Fig. 6's two numbers against a table of 5th percentiles (index N, one column per
    distribution) and the 95% half-widths of those at N = 100 (per distribution; 0 if None):
    (no queuing at N = 100: within one packet up to that interval; ~10 at N = 5,000 within
    [5, 15); the largest 5th percentile at N = 5,000)."""
    high = float(p5.loc[5000].max())
    hw = 0.0 if halfwidth is None else halfwidth.reindex(p5.columns).fillna(0.0)
    return bool((p5.loc[100] - hw <= FIG6_NO_QUEUE).all()), 5.0 <= high < 15.0, high


# ----------------------------------------------------------------------------- Fig. 7

@reproduction("lowerbounds-fig7", paper=PAPER, figure="Fig. 7",
              title="Top-1% queue against N with the bounds Q_min, Q_max (U = 1)",
              sizes=_sizes({"runs": 100, "N on points": 8, "'close'": 0.2},
                           {"runs": 1000, "N on points": 15, "'close'": 0.15}))
def fig7(ctx: Context) -> Outcome:
    """Top-1 % queue (pooled 99th percentile) against N beside eqs. 19 and 22."""
    plt = pyplot()
    runs = _runs(ctx)
    ns = np.unique(np.round(np.geomspace(100, 5000, int(ctx.size.extra["N on points"]))).astype(int))
    rows = []
    for d, k in MAIN:
        for n in ns:
            r = lb.smooth_queue(int(n), d, runs=runs, seed=ctx.seed, k=k)
            qmin, qmax = lb.queue_bounds(int(n), 0.01, d, k)
            rows.append({"dist": d, "k": k, "n": int(n), "top1_queue": r.top(0.01),
                         "top1_per_run_mean": float(np.mean(r.top_per_run(0.01))),
                         "q_min": qmin, "q_max": qmax, "q_clt_eq16": lb.queue_clt(int(n), 0.01, d, k)})
    df = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    verdicts, checks = [], {}
    for ax, (d, k) in zip(axes, MAIN):
        s = df[df.dist == d]
        ax.plot(s.n, s.top1_queue, "o-", color=COLORS[d], label="simulation (ours)")
        ax.plot(s.n, s.q_max, "k--", label="Q_max (eq. 22)")
        ax.plot(s.n, s.q_min, "k:", label="Q_min (eq. 19)")
        ax.plot(s.n, s.q_clt_eq16, color="gray", lw=0.8, label="eq. 16 solved (q0 = 0)")
        ax.set_title(_label(d, k))
        ax.set_xlabel("number of flows N")
        ax.set_ylabel("queue of top 1% packets (packets)")
        slope = float(np.polyfit(np.log(s.n), np.log(s.top1_queue), 1)[0])
        big = s[s.n >= 500]
        ratio = big.top1_queue / big.q_max
        close = float(ctx.size.extra["'close'"])
        if d in ("uniform", "exponential"):
            checks[f"{_label(d, k)}: within {close:.0%} of Q_max for N >= 500 (ratio {ratio.min():.2f}-{ratio.max():.2f})"] = \
                bool((abs(ratio - 1) <= close).all())
            checks[f"{_label(d, k)}: log-log slope {slope:.3f} (Theorem 1: 1/2; within 0.45-0.55)"] = 0.45 <= slope <= 0.55
            above = s[s.top1_queue > s.q_max]
            verdicts.append(f"{_label(d, k)} at {ratio.mean():.2f} Q_max")
            if d == "uniform":
                checks[f"Uniform exceeds Q_max for some N (paper: 'slightly', one subrange): "
                       f"{'at N = ' + ', '.join(map(str, above.n)) if len(above) else 'not seen'}"] = None
        else:
            below = float(np.mean(s.top1_queue < s.q_min))
            checks[f"{_label(d, k)}: mostly below Q_min ({below:.0%} of the N points)"] = below > 0.5
            checks[f"{_label(d, k)}: below Q_max at every N (consistent with O(sqrt(N)))"] = bool((s.top1_queue < s.q_max).all())
            checks[f"{_label(d, k)}: log-log slope {slope:.3f} over this range: the heavy tail reaches the "
                   "sqrt(N) regime only for larger N (see lowerbounds-sqrt-n-beyond)"] = None
            verdicts.append(f"Pareto below Q_min at {below:.0%} of N")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Fig. 7 (ours): top-1% queue, {runs} runs per point; paper: Uniform/Exponential "
                 "close to Q_max, Pareto mostly below the span (section V text)")
    fig.tight_layout()
    details = (
        "Paper (section V, text on Fig. 7): for Uniform and Exponential the simulated top-1% queue is "
        "'remarkably close to the upper bound' Q_max, Uniform exceeding it slightly over one subrange "
        "of N because the analysis assumes q0 = 0; for Pareto the simulated queues are 'mostly below "
        "the span predicted by our bounds'; all consistent with O(sqrt(N)). We measure the top-1% "
        "queue as the 99th percentile of the pooled packets of all runs (as the CDFs); the mean of "
        "per-run 99th percentiles is in the CSV too. 'Close' is tested as within 15% (20% in quick mode, "
        "where 100 runs underestimate the pooled percentile).\n\n"
        + "\n".join(f"- shown: {c}" for c, v in checks.items() if v is None)
        + "\n\n" + _md_table(df[["dist", "n", "top1_queue", "q_min", "q_max", "q_clt_eq16"]]))
    return _finish(df, fig, checks, details, "; ".join(verdicts) + "; Uniform/Exponential slopes ~1/2 (Theorem 1)",
                   f"'remarkably close' to Q_max read as within {close:.0%} (our reading; 20% in quick mode, where "
                   "100 runs underestimate the pooled percentile); slope 1/2 ± 0.05; 'mostly below' as more than "
                   "half of the N points")


# ----------------------------------------------------------------------------- Figs. 8 and 9

UTILS_FIG8 = (0.05, 0.25, 0.5, 0.75, 0.95, 1.0)
PAPER_FIG9 = {0.95: (25, 49, 75), 0.75: (9, 20, 34), 0.5: (2, 5, 5)}


@reproduction("lowerbounds-fig8", paper=PAPER, figure="Fig. 8",
              title="Queue CDFs for utilizations 0.05 ... 1 (N = 1,000)", sizes=RUNS)
def fig8(ctx: Context) -> Outcome:
    """Pooled queue CDFs for several utilizations."""
    plt = pyplot()
    runs = _runs(ctx)
    rows, zero = [], []
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, (d, k) in zip(axes, MAIN):
        for j, u in enumerate(UTILS_FIG8):
            r = lb.smooth_queue(1000, d, utilization=u, runs=runs, seed=ctx.seed, k=k)
            x, p = r.cdf()
            ax.plot(x, p, **series(j, markevery=max(1, len(x) // 8)), label=f"U = {u:g}")
            for pc, v in zip(PCTS, r.percentile(PCTS)):
                rows.append({"dist": d, "k": k, "utilization": u, "percentile": pc, "queue_packets": v})
            if u == 0.5:
                zero.append({"dist": d, "80th percentile (packets)": float(r.percentile(80)),
                             "share with no whole packet waiting": float(np.mean(r.waiting_packets == 0)),
                             "share with zero wait": float(np.mean(r.queues == 0))})
        ax.axhline(0.8, color="k", lw=0.6, ls=":")
        ax.axvline(1.0, color="0.4", lw=0.6, ls="--")
        log_axis(ax, "x", symlog_threshold=1.0)
        ax.set_xlim(0, None)
        ax.set_title(_label(d, k))
        ax.set_xlabel("queue size found (packets; linear below 1, log above)")
    axes[0].set_ylabel("fraction of packets (CDF)")
    axes[0].text(0.03, 0.81, "80%", fontsize=7)
    legend(axes[-1], "outside")
    fig.suptitle(f"Fig. 8 (ours): N = 1,000, {runs} runs; paper: bottom 80% see no queuing at U = 0.5")
    fig.tight_layout()
    df = pd.DataFrame(rows)
    z = pd.DataFrame(zero)
    ok_zero = bool((z["share with no whole packet waiting"] >= 0.8).all())
    mono = all(np.all(np.diff(df[(df.dist == d) & (df.percentile == pc)].sort_values("utilization").queue_packets) >= 0)
               for d, _ in MAIN for pc in (50, 90, 99))
    checks = {"at U = 0.5 at least 80% of packets find no whole packet waiting (paper: bottom 80% see no queuing)":
              ok_zero, "50th, 90th, 99th percentiles grow with U for every distribution": mono}
    details = (
        "Paper (section V, text on Fig. 8): 'decreasing the utilization subdues the steady-state "
        "queuing substantially. For instance, bottom 80% packets experience no queuing at all with "
        "50% utilization.' Our queue sizes are fractional (eq. 6): a packet arriving during another's "
        "transmission waits less than one packet time. We count 'no queuing' as no whole packet "
        "waiting ahead (ceil(q) - 1 = 0) and also show the share with exactly zero wait.\n\n"
        + _md_table(z))
    return _finish(df, fig, checks, details,
                   "at U = 0.5, " + ", ".join(f"{r['share with no whole packet waiting']:.0%}" for _, r in z.iterrows())
                   + " of packets (uniform, exponential, Pareto) find no whole packet waiting (paper: bottom 80%)",
                   "at least 80% of the pooled packets, 'no queuing' at the queue's resolution of one packet (no "
                   "whole packet waiting ahead); growth with U without margin")


@reproduction("lowerbounds-fig9", paper=PAPER, figure="Fig. 9",
              title="Top-1% queue against utilization (N = 1,000)",
              sizes=_sizes({"runs": 100, "U on points": 9, "runs at the stated U": 400, "tolerance": (0.35, 1.5)},
                           {"runs": 1000, "U on points": 20, "runs at the stated U": 4000, "tolerance": (0.2, 1.0)}))
def fig9(ctx: Context) -> Outcome:
    """Top-1 % queue against U beside the values stated in section V."""
    plt = pyplot()
    runs = _runs(ctx)
    grid = np.round(np.linspace(0.05, 1.0, int(ctx.size.extra["U on points"])), 4)
    rel_tol, abs_tol = ctx.size.extra["tolerance"]
    us = np.unique(np.concatenate([grid, list(PAPER_FIG9)]))
    rows = []
    for d, k in MAIN:
        for u in us:
            # More runs where the paper states values: the pooled top-1% of 1,000 runs varies by
            # 3-7% (1 sigma) between seeds, the paper's as much.
            n_runs = 4 * runs if u in PAPER_FIG9 else runs
            r = lb.smooth_queue(1000, d, utilization=float(u), runs=n_runs, seed=ctx.seed, k=k)
            rows.append({"dist": d, "k": k, "utilization": float(u), "runs": n_runs, "top1_queue": r.top(0.01)})
    df = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    comp = []
    for j, (d, k) in enumerate(MAIN):
        s = df[df.dist == d]
        ax.plot(s.utilization, s.top1_queue, "-", color=COLORS[d], label=f"{_label(d, k)} (ours)")
        pu = list(PAPER_FIG9)
        pv = [PAPER_FIG9[u][j] for u in pu]
        ax.plot(pu, pv, "kx", ms=8, label="paper, section V text" if j == 0 else None)
        for u, want in zip(pu, pv):
            got = float(s[np.isclose(s.utilization, u)].top1_queue.iloc[0])
            # Ours (4,000 runs) ~3%, the paper's (1,000 runs) ~3-7% (1 sigma): 20% ~ 2.5-3 sigma.
            tol = max(abs_tol, rel_tol * want)
            comp.append({"dist": d, "utilization": u, "paper": want, "ours": round(got, 1),
                         "diff %": round(100 * (got / want - 1), 1), "tolerance": tol,
                         "agrees": abs(got - want) <= tol})
    ax.set_yscale("log")
    ax.set_xlabel("link utilization U")
    ax.set_ylabel("queue of top 1% packets (packets)")
    ax.set_title(f"Fig. 9 (ours): N = 1,000, {runs} runs per point, {4 * runs} at the paper's points")
    ax.legend(fontsize=8)
    fig.tight_layout()
    c = pd.DataFrame(comp)
    top1 = df.pivot_table(index="utilization", columns="dist", values="top1_queue")
    drop = (top1.loc[0.95] / top1.loc[0.5])
    pareto_most = bool(drop["pareto"] >= drop.max() - 1e-12)
    claims = [Near(f"{r.dist}, U = {r.utilization:g}: top-1% queue {r.paper:g} packets (section V)",
                   Estimate.const(r.ours, "{:.1f}"), r.paper, r.tolerance) for r in c.itertuples()]
    claims.append(AllOf("utilization decreases help most under Pareto (U = 0.95 to 0.5)",
                        [Greater(d, Estimate.const(float(drop["pareto"]), "{:.1f}"), float(drop[d]))
                         for d in drop.index if d != "pareto"]))
    details = (
        "Paper (section V): 'With 95% utilization, the minimum queue size for top 1% packets is 25, 49, "
        "75 packets under the Uniform, Exponential, Pareto flow interarrival times respectively. "
        "Decreasing U to 75% and further to 50% reduces the queue size to 9, 20, 34 packets and 2, 5, "
        "5 packets respectively.' and 'utilization decreases help most dramatically under the Pareto "
        "distribution'. The top-1% queue of 1,000 runs varies by 3-7% (1 sigma) between seeds; we use "
        "4,000 runs at the stated points and accept 20% or 1 packet (35% or 1.5 packets in quick mode). "
        "'Helps most' is tested on the range the text quantifies, U = 0.95 to 0.5 (paper's own numbers: "
        "factors 12.5, 9.8, 15 for Uniform, Exponential, Pareto).\n\n"
        + _md_table(c)
        + f"\n\n- {'OK' if pareto_most else 'FAILS'}: reduction from U = 0.95 to 0.5 is largest for Pareto "
          f"(factors: " + ", ".join(f"{k} {v:.1f}" for k, v in drop.items()) + ")")
    mark_figure(fig, claims, "Fig. 9 (ours) and the values of section V")
    return outcome(df, fig, claims, intro=details,
                   what=f"{int(c.agrees.sum())}/{len(c)} stated values matched (max deviation "
                        f"{c['diff %'].abs().max():.0f}%)",
                   tolerance=f"{rel_tol:.0%} or {abs_tol:g} packet, about 2.5-3 standard deviations of the difference: "
                             "the pooled top-1% of 1,000 runs varies 3-7% between seeds (the paper's), 4,000 runs ~3% "
                             "(ours; fewer runs in quick mode, wider tolerance)")


# ----------------------------------------------------------------------------- Figs. 10-12 (loss)

def _loss_rows(ctx: Context, runs: int, settings) -> pd.DataFrame:
    rows = []
    for d, k, n, u, b in settings:
        r = lb.smooth_loss(n, d, b, utilization=u, runs=runs, seed=ctx.seed, k=k)
        rows.append({"dist": d, "k": k, "n": n, "utilization": u, "buffer": b, "loss": r.loss,
                     "loss_stderr": r.stderr, "max_periods": int(r.periods.max()),
                     "all_converged": bool(r.converged.all())})
    return pd.DataFrame(rows)


@reproduction("lowerbounds-fig10", paper=PAPER, figure="Fig. 10",
              title="Loss rate against N with 10- and 20-packet buffers (U = 1)",
              sizes=Sizes(Size(axes={"N": (100, 200, 500, 1000, 2000, 3000, 5000)}, extra={"runs": 100}),
                          Size(axes={"N": (100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 2500, 3000, 4000, 5000)},
                               extra={"runs": 1000})))
def fig10(ctx: Context) -> Outcome:
    """Steady-state loss against N for B = 10 and 20."""
    plt = pyplot()
    runs = _runs(ctx)
    ns = ctx.size.axis("N")
    df = _loss_rows(ctx, runs, [(d, k, n, 1.0, b) for d, k in MAIN for b in (10, 20) for n in ns])
    fig, ax = plt.subplots(figsize=(8.6, 4.5))
    for j, (d, k) in enumerate(MAIN):
        for b, ls in ((10, "-"), (20, "--")):
            s = df[(df.dist == d) & (df.buffer == b)]
            st = series(j)
            st["linestyle"] = ls
            ax.errorbar(s.n, 100 * s.loss, yerr=200 * s.loss_stderr, capsize=2, label=f"{_label(d, k)}, B = {b}", **st)
    for b, v in FIG10_PAPER.items():
        ax.axhspan(v - FIG10_TOL_POINTS, v + FIG10_TOL_POINTS, color="0.85", zorder=0)
        ax.axhline(v, color="k", lw=0.6, ls="-" if b == 10 else "--")
        ax.text(ns[0], v + FIG10_TOL_POINTS, f"paper text: ~{v:g}% (B = {b}) ± {FIG10_TOL_POINTS:g}", va="bottom",
                fontsize=7)
    log_axis(ax, "x")
    ax.set_xticks(ns)
    ax.set_xticklabels([f"{n:,}" for n in ns], rotation=45)
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("number of flows N (log scale)")
    ax.set_ylabel("loss rate (% of packets), ± 2 standard errors")
    ax.set_title(f"Fig. 10 (ours): U = 1, {runs} runs per point; grey: the paper's values ± {FIG10_TOL_POINTS:g} point")
    legend(ax, "outside")
    fig.tight_layout()
    checks = {}
    stab = []
    for d, k in MAIN:
        for b in (10, 20):
            s = df[(df.dist == d) & (df.buffer == b)].set_index("n").loss
            se = df[(df.dist == d) & (df.buffer == b)].set_index("n").loss_stderr
            rise = s.loc[1000] > s.loc[100]
            beyond = s[s.index >= 1000]
            plateau = fig10_stable(beyond, se[se.index >= 1000])
            checks[f"{_label(d, k)}, B = {b}: loss rises from N = 100 to 1,000 "
                   f"({100 * s.loc[100]:.2f}% -> {100 * s.loc[1000]:.2f}%) and stays within "
                   f"{FIG10_TOL_POINTS:g} point + 2 standard errors of that up to N = 5,000 "
                   f"({100 * beyond.min():.2f}-{100 * beyond.max():.2f}%; peak at N = {s.idxmax()}, "
                   f"{100 * s.loc[5000]:.2f}% at 5,000)"] = bool(rise and plateau)
            if d != "uniform":
                m = beyond.mean()
                err = float(np.sqrt((se[se.index >= 1000] ** 2).sum()) / len(beyond))
                stab.append({"dist": d, "buffer": b, "loss N>=1000 (%)": 100 * m, "2 stderr (points)": 200 * err,
                             "paper (%)": FIG10_PAPER[b],
                             "agrees": fig10_agrees(100 * m, FIG10_PAPER[b], 200 * err)})
    st = pd.DataFrame(stab)
    higher = all(df[(df.dist == d) & (df.n >= 1000)].loss.mean() > df[(df.dist == "uniform") & (df.n >= 1000)].loss.mean()
                 for d in ("exponential", "pareto"))
    checks["Exponential and Pareto lose more than Uniform"] = higher
    for r in st.itertuples():
        checks[f"{r.dist}, B = {r.buffer}: plateau loss {r._3:.2f}% against the paper's ~{r._5:g}% (within "
               f"{FIG10_TOL_POINTS:g} point + 2 standard errors, {r._4:.2f})"] = bool(r.agrees)
    details = (
        "Paper (section VI, text on Fig. 10): 'As N starts to grow, the loss rates increase quickly. "
        "Surprisingly, the loss rates stabilize and even decrease slightly after N grows beyond 1,000'; "
        "rates are higher with Exponential and Pareto and 'stabilize with both distributions around 3% "
        "and 5% for the 10-packet and 20-packet buffer respectively'. That last sentence has the "
        "buffers swapped (a larger buffer cannot lose more; Fig. 12 gives 3% at 20 packets for "
        "Exponential): we compare 5% for B = 10 and 3% for B = 20. Tolerance: the paper states these "
        f"to one significant figure ('around 3%'), so ±{FIG10_TOL_POINTS:g} percentage point (the rounding of "
        "its last digit), widened by 2 standard errors of our mean loss over N = 1,000 ... 5,000 (runs "
        "independent). 'Stabilize' is tested as: the loss at every N from 1,000 to 5,000 within "
        f"{FIG10_TOL_POINTS:g} point + 2 standard errors of its value at N = 1,000. Buffer semantics: a "
        "packet is dropped when B packets already wait besides the one in transmission. The "
        "boundary workload repeated after at most "
        f"{int(df.max_periods.max())} periods in every run.\n\n"
        + _md_table(st, "{:.2f}"))
    return _finish(df, fig, checks, details,
                   "loss rises then stabilises beyond N = 1,000 at " + ", ".join(
                       f"{r['loss N>=1000 (%)']:.2f}% ({r.dist}, B = {r.buffer})" for _, r in st.iterrows())
                   + " (paper: ~5% and ~3%)",
                   f"±{FIG10_TOL_POINTS:g} point, the paper's one-significant-figure rounding, + 2 standard errors of "
                   "ours")


#: The paper's plateau loss (%) per buffer (section VI text, buffers swapped back, see fig10).
FIG10_PAPER = {10: 5.0, 20: 3.0}
#: '~5%', '~3%': one significant figure, so a value agrees within half a unit of that digit.
FIG10_TOL_POINTS = 0.5


def fig10_agrees(ours_pct: float, paper_pct: float, two_se_pct: float) -> bool:
    """A plateau loss (%) agrees with the paper's one-significant-figure value when within
    FIG10_TOL_POINTS percentage point plus twice its standard error."""
    return bool(abs(ours_pct - paper_pct) <= FIG10_TOL_POINTS + two_se_pct)


def fig10_stable(loss: pd.Series, stderr: pd.Series) -> bool:
    """'Stabilizes': the loss (fraction, indexed by N >= 1,000) stays within FIG10_TOL_POINTS
    percentage point plus twice the standard error of the difference of its value at N = 1,000."""
    base, base_se = loss.iloc[0], stderr.iloc[0]
    lim = FIG10_TOL_POINTS / 100 + 2 * np.sqrt(stderr ** 2 + base_se ** 2)
    return bool((abs(loss - base) <= lim).all())


@reproduction("lowerbounds-fig11", paper=PAPER, figure="Fig. 11",
              title="Loss rate against utilization (N = 1,000, 10- and 20-packet buffers)",
              sizes=_sizes({"runs": 100, "U on points": 6}, {"runs": 1000, "U on points": 11}))
def fig11(ctx: Context) -> Outcome:
    """Steady-state loss against U for B = 10 and 20."""
    plt = pyplot()
    runs = _runs(ctx)
    us = tuple(np.round(np.linspace(0.5, 1.0, int(ctx.size.extra["U on points"])), 3))
    df = _loss_rows(ctx, runs, [(d, k, 1000, float(u), b) for d, k in MAIN for b in (10, 20) for u in us])
    fig, ax = plt.subplots(figsize=(8.6, 4.5))
    for j, (d, k) in enumerate(MAIN):
        for b, ls in ((10, "-"), (20, "--")):
            s = df[(df.dist == d) & (df.buffer == b)]
            st = series(j)
            st["linestyle"] = ls
            ax.plot(s.utilization, 100 * s.loss, label=f"{_label(d, k)}, B = {b}", **st)
    log_axis(ax, "y", symlog_threshold=0.001)
    ax.set_ylim(-0.0002, None)
    ax.set_xticks(us)
    ax.set_xlabel("link utilization U (fraction of capacity)")
    ax.set_ylabel("loss rate (% of packets; log above 0.001%, 0 shown)")
    ax.set_title(f"Fig. 11 (ours): N = 1,000, {runs} runs; paper: 'prompt dramatic reductions' from U = 1 to 0.5")
    legend(ax, "outside")
    fig.tight_layout()
    piv = df.pivot_table(index="utilization", columns=["dist", "buffer"], values="loss")
    with np.errstate(divide="ignore"):
        factor = piv.loc[1.0] / piv.loc[0.5]  # inf where U = 0.5 loses nothing
    mono = all(np.all(np.diff(piv[c].values) >= -2 * df.loss_stderr.max()) for c in piv.columns)
    claims = [AllOf("'prompt dramatic reductions' from U = 1 to 0.5: by at least 10x (section VI)",
                    [Greater(f"{d}, B = {b}", Estimate.const(float(f), "{:.3g}"), 10.0) for (d, b), f in factor.items()],
                    ours=f"at least {factor.min():.0f}x"),
              Within("the loss grows with U (within 2 standard errors)", Estimate.const(1.0 if mono else 0.0), lo=1.0,
                     ours="yes" if mono else "no")]
    tab = pd.DataFrame({"loss at U=1 (%)": 100 * piv.loc[1.0], "loss at U=0.5 (%)": 100 * piv.loc[0.5],
                        "reduction factor": factor}).reset_index()
    details = (
        "Paper (section VI, text on Fig. 11): 'prompt dramatic reductions in the steady-state loss rates "
        "as the link utilization reduces from 100% to 50%'. We test a reduction by at least 10x from "
        "U = 1 to U = 0.5 and a loss that grows with U (within 2 standard errors).\n\n"
        + _md_table(tab, "{:.3g}"))
    mark_figure(fig, claims, "Fig. 11 (ours)")
    return outcome(df, fig, claims, intro=details,
                   what=f"loss falls at least {factor.min():.0f}x from U = 1 to 0.5, to zero in "
                        f"{int(np.isinf(factor).sum())} of {len(factor)} curves (paper: dramatic reductions)",
                   tolerance="'dramatic' read as at least 10x, our reading of a qualitative claim; growth with U "
                             "checked within 2 standard errors")


PAPER_FIG12 = {"uniform": 20, "exponential": 40, "pareto": 50}
#: The paper's buffers are round numbers (tens): a measured B agrees within half that unit.
FIG12_TOL = 5


@reproduction("lowerbounds-fig12", paper=PAPER, figure="Fig. 12",
              title="Loss rate against buffer size (N = 1,000, U = 1)",
              sizes=_sizes({"runs": 100, "B": "5 ... 60 step 5, step 1 near 1% loss"},
                           {"runs": 1000, "B": "5 ... 60 step 1"}))
def fig12(ctx: Context) -> Outcome:
    """Steady-state loss against B; the buffer needed for 1 % loss."""
    plt = pyplot()
    runs = _runs(ctx)
    if ctx.quick:
        bs = sorted(set(range(5, 61, 5)) | set(range(15, 26)) | set(range(35, 56)))
    else:
        bs = list(range(5, 61))
    df = _loss_rows(ctx, runs, [(d, k, 1000, 1.0, b) for d, k in MAIN for b in bs])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    comp = []
    for d, k in MAIN:
        s = df[df.dist == d]
        ax.plot(s.buffer, 100 * s.loss, "-", color=COLORS[d], label=f"{_label(d, k)} (ours)")
        under = s[s.loss <= 0.01]
        need = int(under.buffer.min()) if len(under) else None
        want = PAPER_FIG12[d]
        ax.plot([want], [1.0], "kx", ms=9)
        comp.append({"dist": d, "paper B for 1% loss": want, "ours": need,
                     "agrees": need is not None and abs(need - want) <= FIG12_TOL})
    ax.axhline(1.0, color="k", lw=0.5, ls=":")
    ax.plot([], [], "kx", label="paper, section VI text: B for 1% loss")
    ax.set_yscale("log")
    ax.set_xlabel("buffer size B (packets)")
    ax.set_ylabel("loss rate (%)")
    ax.set_title(f"Fig. 12 (ours): N = 1,000, U = 1, {runs} runs per point")
    ax.legend(fontsize=8)
    fig.tight_layout()
    c = pd.DataFrame(comp)
    claims = [Near(f"{r.dist}: about {r._2} packets for 1% loss (section VI)",
                   Estimate.const(float("nan") if r.ours is None else float(r.ours), "{:g}"), r._2, FIG12_TOL)
              for r in c.itertuples()]
    details = (
        "Paper (section VI, text on Fig. 12): 'reduction of the loss rates to 1% requires about 20, 40, "
        "and 50 packets with the Uniform, Exponential, and Pareto flow interarrival time distributions "
        "respectively.' We report the smallest B on our grid with loss <= 1% and accept a difference of "
        f"{FIG12_TOL} packets (the paper's numbers are rounded to tens; half that unit).\n\n" + _md_table(c))
    mark_figure(fig, claims, "Fig. 12 (ours) and the buffers of section VI")
    return outcome(df, fig, claims, intro=details,
                   what="buffer for 1% loss: " + ", ".join(f"{r.dist} {r.ours}" for _, r in c.iterrows())
                        + " packets (paper: about 20, 40, 50)",
                   tolerance=f"±{FIG12_TOL} packets: the paper's 'about 20, 40, 50' are rounded to tens, so half of "
                             "that unit")


# ----------------------------------------------------------------------------- beyond the paper

def _weighted_slope(s: pd.DataFrame) -> tuple[float, float]:
    """Slope and its standard error of log(mean per-run top-1% queue) against log(N), each
    point weighted by its relative standard error."""
    rel = (s.top1_per_run_stderr / s.top1_per_run_mean).clip(lower=1e-6)
    coef, cov = np.polyfit(np.log(s.n), np.log(s.top1_per_run_mean), 1, w=1.0 / rel, cov="unscaled")
    return float(coef[0]), float(math.sqrt(cov[0, 0]))


def _sqrt_n_rows(ctx: Context, ns) -> pd.DataFrame:
    """One row per (distribution, N): the top-1% queue pooled and per run (the exact
    method's smooth queue), the bounds of eqs. 19 and 22, eq. 16 solved, and the loss
    with buffers of 10 and 20 packets."""
    # The top-1% queue of one run is a random multiple of sqrt(N) (one random arrival path),
    # so large N still needs many runs; a run's loss averages over all its N packets and
    # needs few.
    q_budget, q_min_runs = ctx.size.extra["queue: packets (runs) per point"]
    l_budget, l_min_runs = ctx.size.extra["loss: packets (runs) per point"]
    rows = []
    for d, k in MAIN:
        for n in ns:
            n = int(n)
            runs = max(q_min_runs, q_budget // n)
            r = lb.smooth_queue(n, d, runs=runs, seed=ctx.seed, k=k)
            per_run = r.top_per_run(0.01)
            qmin, qmax = lb.queue_bounds(n, 0.01, d, k)
            row = {"dist": d, "k": k, "n": n, "runs": runs, "top1_queue": r.top(0.01),
                   "top1_per_run_mean": float(per_run.mean()),
                   "top1_per_run_stderr": float(per_run.std(ddof=1) / math.sqrt(runs)),
                   "q_min": qmin, "q_max": qmax, "q_clt_eq16": lb.queue_clt(n, 0.01, d, k),
                   "max_queue": float(r.queues.max())}
            row["top1_over_sqrt_n"] = row["top1_queue"] / math.sqrt(n)
            row["top1_per_run_over_sqrt_n"] = row["top1_per_run_mean"] / math.sqrt(n)
            del r
            loss_runs = max(l_min_runs, l_budget // n)
            row["loss_runs"] = loss_runs
            for b in (10, 20):
                sl = lb.smooth_loss(n, d, b, runs=loss_runs, seed=ctx.seed, k=k)
                row[f"loss_b{b}"] = sl.loss
                row[f"loss_b{b}_stderr"] = sl.stderr
                row[f"periods_b{b}"] = int(sl.periods.max())
            rows.append(row)
    return pd.DataFrame(rows)


def _sqrt_n_queue_panels(df: pd.DataFrame, axes) -> tuple[dict, dict, dict, dict]:
    """The top-1% queue over sqrt(N) beside its bounds, one panel per distribution; the
    slopes fitted (N >= 1,000 and >= 10,000; the paper's range), whether the per-run queue
    stays below Q_max and at how many N the pooled one reaches Q_min."""
    slopes, local, below_max, above_min = {}, {}, {}, {}
    for j, (ax, (d, k)) in enumerate(zip(axes.flat, MAIN)):
        s = df[df.dist == d]
        rn = np.sqrt(s.n)
        # what the bounds speak of: the queue exceeded by 1% of all packets, pooled over the
        # random arrival draws (theta of eq. 16 is a probability over both)
        ax.fill_between(s.n, s.q_min / rn, s.q_max / rn, color=COLORS[d], alpha=0.15, lw=0,
                        label="span of the bounds: Q_min (eq. 19) to Q_max (eq. 22)")
        ax.plot(s.n, s.q_clt_eq16 / rn, color="k", lw=1, ls=":", label="eq. 16 solved (the CLT model, q0 = 0)")
        ax.plot(s.n, s.top1_over_sqrt_n, **series(j), zorder=4,
                label="simulated top-1% queue, pooled packets (the quantity bounded)")
        ax.errorbar(s.n, s.top1_per_run_over_sqrt_n, yerr=2 * s.top1_per_run_stderr / rn, fmt="o", ms=3,
                    mfc="white", color="0.45", capsize=2, zorder=3,
                    label="mean of per-run top-1% (± 2 s.e.; fitted for the slope)")
        ax.axvline(5000, color="0.6", lw=0.6)
        log_axis(ax, "x")
        ax.set_title(f"{_label(d, k)}: top-1% queue / sqrt(N); flat = the sqrt(N) law (Theorem 1)")
        ax.set_xlabel("number of flows N (log scale; grey line: the paper's largest N)")
        ax.set_ylabel("queue / sqrt(N) (packets)")
        for lo_n, key in ((1000, "N >= 1,000"), (10_000, "N >= 10,000")):
            slopes[(d, key)] = _weighted_slope(s[s.n >= lo_n])
        local[d] = _weighted_slope(s[s.n <= 5000])
        below_max[d] = bool((s.top1_per_run_mean < s.q_max).all())
        above_min[d] = int((s.top1_queue >= s.q_min).sum())
    return slopes, local, below_max, above_min


def _sqrt_n_loss_panel(df: pd.DataFrame, ax) -> None:
    """Loss with buffers of 10 and 20 packets against N."""
    for j, (d, k) in enumerate(MAIN):
        s = df[df.dist == d]
        for b, ls in ((10, "-"), (20, "--")):
            st = series(j)
            st["linestyle"] = ls
            ax.plot(s.n, 100 * s[f"loss_b{b}"], label=f"{_label(d, k)}, B = {b}", **st)
    ax.axvline(5000, color="0.6", lw=0.6)
    log_axis(ax, "x")
    ax.set_xlabel("number of flows N (log scale)")
    ax.set_ylabel("loss rate (% of packets)")
    ax.set_ylim(0, 100 * df[["loss_b10", "loss_b20"]].max().max() * 1.35)  # room for the legend
    ax.set_title("loss with small buffers (paper, section VI: bounded regardless of N)")
    legend(ax, "upper right", ncol=2)


def _sqrt_n_loss_table(df: pd.DataFrame) -> pd.DataFrame:
    """Small-buffer loss near N = 5,000, at 10^6 and its largest, per distribution and buffer."""
    loss_tab = []
    for d, _ in MAIN:
        s = df[df.dist == d].set_index("n")
        n5 = s.index[np.argmin(abs(s.index - 5000))]
        for b in (10, 20):
            loss_tab.append({"dist": d, "buffer": b, "loss near N=5,000 (%)": 100 * s.loc[n5, f"loss_b{b}"],
                             "loss at N=10^6 (%)": 100 * s.loc[1_000_000, f"loss_b{b}"],
                             "largest over N (%)": 100 * s[f"loss_b{b}"].max(),
                             "at N": int(s[f"loss_b{b}"].idxmax())})
    return pd.DataFrame(loss_tab)


def _sqrt_n_details(df: pd.DataFrame, ns, lt: pd.DataFrame, slopes: dict, local: dict, below_max: dict,
                    above_min: dict) -> str:
    """What Q_min is, what was run beyond the paper, the checks and their numbers."""
    ratio = df.groupby("dist").top1_per_run_over_sqrt_n.agg(["min", "max"])
    return (
        "**What Q_min is.** Q_min = L_θ A_ψ sqrt(N) (eq. 19) is the paper's lower bound on the queue "
        "exceeded by the top θ = 1% of packets, where θ (eq. 16) is the probability, over the random flow "
        "arrivals and over the packet's position in the period, that a packet finds more than Q: it speaks "
        "of all packets of many runs pooled. It is derived assuming a queue q0 = 0 at the period start "
        "(eq. 12) and normal packet arrival times (the CLT of section IV), and it loosens eq. 16 twice "
        "(θ ≥ θ(2N/3)/3, inequality 17); Q_max (eq. 22) loosens it the other way. So the simulated value "
        "comparable with the bounds is the pooled 99th percentile (coloured line), and the CLT model's own "
        "value is eq. 16 solved (dotted); the mean of each run's own 99th percentile (grey) is a different "
        "quantity, used only for the slope fit. Pooled top-1% at or above Q_min at "
        + ", ".join(f"{above_min[d]}/{len(ns)} N ({d})" for d, _ in MAIN)
        + ": the bound holds where the CLT applies (Uniform, Exponential) and not for Pareto k = 2.1 "
          "until N is large, as the paper found ('mostly below the span').\n\n"
        "Beyond the paper (which stops at N = 5,000): the exact method up to N = 10^6. Theorem 1 says "
        "the queue of a fixed top fraction of packets is O(sqrt(N)); section VI conjectures that loss "
        "with a small buffer stays bounded however large N grows. The top-1% queue of one run is a "
        "random multiple of sqrt(N) (one random arrival path), so we fit the mean over runs of each "
        "run's 99th percentile (error bars: 2 standard errors); the pooled 99th percentile (x) is noisier "
        "at large N where there are fewer runs.\n\n"
        "Checks (tolerances): for Uniform and Exponential, the log-log slope (least squares weighted by the "
        "standard errors) within 2 standard errors of the fit of 1/2, but never tighter than 0.05 (the "
        "curvature a finite-N correction can leave over one decade) for N >= 1,000 and N >= 10,000; for "
        "Pareto k = 2.1, the queue below Q_max (an O(sqrt(N)) envelope) at every N; loss at N = 10^6 "
        "at most 10% (+0.05 points) above its value near N = 5,000.\n\n"
        + "\n".join(f"- slope {d}, {key}: {v[0]:.3f} +- {v[1]:.3f}" for (d, key), v in slopes.items())
        + "\n- slope over the paper's range N <= 5,000: " + ", ".join(f"{d} {v[0]:.3f}" for d, v in local.items())
        + "\n- Pareto k = 2.1 below Q_max at every N: " + str(below_max["pareto"])
        + "\n\nPareto k = 2.1 has a barely finite variance and its largest gap among N flows grows like "
          "N^(1/k) = N^0.48, almost as fast as sqrt(N): the central-limit regime of section IV sets in "
          "very slowly, so its top-1% queue climbs from below Q_min towards the sqrt(N) law with a "
          "slope above 1/2 over the whole range (which is why the paper found it 'mostly below the span')."
        + "\n- pooled 99th percentile above Q_max at N = " + (", ".join(
            f"{r.n:,} ({r.dist})" for _, r in df[df.top1_queue > df.q_max].iterrows()) or "none")
        + ": the pooled percentile mixes runs whose whole queue level differs (one random arrival "
          "path each); with Pareto's heavy tail a few runs dominate it when runs are few"
        + "\n- mean per-run top-1% queue / sqrt(N): " + ", ".join(
            f"{d} {r['min']:.2f}-{r['max']:.2f}" for d, r in ratio.iterrows())
        + "\n\nLoss with small buffers:\n\n" + _md_table(lt, "{:.3f}"))


@reproduction("lowerbounds-sqrt-n-beyond", paper=PAPER, figure="beyond Figs. 7 and 10",
              title="Top-1% queue and loss for N = 100 ... 1,000,000 (U = 1)",
              sizes=_sizes({"N on points": 9, "queue: packets (runs) per point": (2_000_000, 10),
                            "loss: packets (runs) per point": (1_000_000, 2)},
                           {"N on points": 16, "queue: packets (runs) per point": (20_000_000, 50),
                            "loss: packets (runs) per point": (5_000_000, 4)}))
def sqrt_n_beyond(ctx: Context) -> Outcome:
    """Where the sqrt(N) law holds and what loss does beyond 5,000 flows, up to 10^6."""
    ns = np.unique(np.round(np.geomspace(100, 1_000_000, int(ctx.size.extra["N on points"]))).astype(int))
    df = _sqrt_n_rows(ctx, ns)
    fig, axes = pyplot().subplots(2, 2, figsize=(13, 8.6))
    slopes, local, below_max, above_min = _sqrt_n_queue_panels(df, axes)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.0))
    _sqrt_n_loss_panel(df, axes[1, 1])
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    lt = _sqrt_n_loss_table(df)
    # Theorem 1 checked where the CLT of section IV applies quickly (Uniform, Exponential):
    # slope 1/2 within 0.05 or 2 standard errors of the fit, whichever is larger.
    sqrt_ok = all(abs(v[0] - 0.5) <= max(0.05, 2 * v[1]) for (d, key), v in slopes.items()
                  if d != "pareto") and below_max["pareto"]
    bounded = bool((lt["loss at N=10^6 (%)"] <= 1.1 * lt["loss near N=5,000 (%)"] + 0.05).all())
    checks = {"Theorem 1: the sqrt(N) law holds up to N = 10^6 (slopes within their tolerance; Pareto below Q_max)":
              sqrt_ok, "section VI's conjecture: small-buffer loss stays bounded up to N = 10^6": bounded}
    details = _sqrt_n_details(df, ns, lt, slopes, local, below_max, above_min)
    return _finish(df, fig, checks, details,
                   "slopes N >= 10^3: " + ", ".join(f"{d} {v[0]:.2f}" for (d, key), v in slopes.items()
                                                   if key == "N >= 1,000")
                   + "; B = 10 loss at 10^6: " + ", ".join(f"{r['loss at N=10^6 (%)']:.1f}%"
                                                         for _, r in lt[lt.buffer == 10].iterrows())
                   + "; Q_min (eq. 19) holds at " + ", ".join(f"{above_min[d]}/{len(ns)} N ({d})" for d, _ in MAIN),
                   "slope 1/2 within 2 standard errors of the fit, at least 0.05; bounded: at most 10% + 0.05 point "
                   "above N = 5,000")


# ----------------------------------------------------------------------------- Section VII (RCP)

#: Section VII's dumbbell: a 200 Mbps, 30 ms core link with a 10-packet buffer, 1000-byte
#: packets (1040 on the wire with RCP's header), RTT 90 ms for every flow (the access links add 7.5 ms each way on each side).
#: ``scenarios/lower-bounds/rcp.toml`` is the same scenario as a file.
RCP_CORE_BPS = 200e6
RCP_BUFFER = 10
RCP_D_NS = PACKET_BYTES * 8 * 1_000_000_000 // int(RCP_CORE_BPS)  # D = 40 us
#: Bytes of an RCP datagram on the wire: ns-2's RCP agent adds its 40-byte header
#: (``RCP_HDR_BYTES``) to the 1000-byte packet size (``rcp-host.cc``, ``sendpkt``).
RCP_WIRE_BYTES = PACKET_BYTES + 40
#: The paper's text on Fig. 13: the loss rates stabilise "around 30%" under RCP.
PAPER_RCP_PLATEAU = 0.30


def rcp_scenario(starts_s, target: float, duration_s: float, warmup_s: float, seed: int = 1) -> dict:
    """Section VII's dumbbell with one long-lived RCP flow starting at each of ``starts_s``.

    The core link runs RCP with alpha = beta = 0.4 and the target utilization ``target``;
    the access links are fast drop-tail links that never queue.
    """
    access = {"type": "droptail", "limit": "10000pkts"}
    return {
        "name": f"lower-bounds/rcp-n{len(starts_s)}-u{target:g}",
        "duration": f"{duration_s:g}s", "warmup": f"{warmup_s:g}s", "seed": int(seed),
        "links": [
            {"name": "access-in", "from": "senders", "to": "r1", "rate": "10Gbps", "delay": "7500us", "queue": access},
            {"name": "core", "from": "r1", "to": "r2", "rate": "200Mbps", "delay": "30ms",
             "queue": {"type": "rcp", "limit": f"{RCP_BUFFER}pkts", "alpha": 0.4, "beta": 0.4,
                       "target_utilization": float(target)}},
            {"name": "access-out", "from": "r2", "to": "receivers", "rate": "10Gbps", "delay": "7500us",
             "queue": access},
        ],
        "traffic": [{"name": "rcp", "type": "long_lived", "src": "senders", "dst": "receivers",
                     "protocol": "rcp", "packet_size": RCP_WIRE_BYTES, "starts": [float(s) for s in starts_s]}],
        "record": {"interval": "0s"},
    }


def rcp_point_scenario(n: int, target: float, base_seed: int, duration_s: float, warmup_s: float, seed: int) -> dict:
    """The run of seed ``seed``: N flows starting at the exponential inter-arrival times of
    Fig. 2 (mean D/U) that the smooth model draws for its run ``seed - base_seed``."""
    ticks = lb.arrival_times(n, "exponential", target, seed=base_seed, run=seed - base_seed, ticks_per_packet=RCP_D_NS)
    return rcp_scenario(np.asarray(ticks) * 1e-9, target, duration_s, warmup_s, seed)


def rcp_points(size: Size, base_seed: int) -> list[Point]:
    """One point per (target utilization, N); its flows' start times depend on the seed."""
    out = []
    for u in size.axis("target"):
        for n in size.axis("N"):
            per_seed = functools.partial(rcp_point_scenario, n, u, base_seed, size.duration, size.warmup)
            out.append(Point({"n_flows": n, "target_utilization": u}, per_seed(base_seed), (u, n), per_seed=per_seed))
    return out


def rcp_measure(r, point: Point) -> dict:
    """The core link over [warm-up, end]: loss rate (drops over arrivals), utilization (busy
    time), offered load (the bits that arrived, dropped or not, over what the link could
    send: every datagram is RCP_WIRE_BYTES long) and mean queue."""
    core = r.links[r.links["name"] == "core"].iloc[0]
    drops, sent = float(core["drops"]), float(core["packets_sent"])
    measured_s = float(r.summary["duration_s"]) - float(r.summary["warmup_s"])
    load = (drops + sent) * RCP_WIRE_BYTES * 8 / (RCP_CORE_BPS * measured_s)
    return {"loss_rate": drops / (drops + sent), "utilization": float(core["utilization"]), "offered_load": load,
            "mean_queue_packets": float(core["mean_queue_packets"])}


def _ci95(x: np.ndarray) -> float:
    """Half-width of a 95% Student-t interval of the mean of ``x``."""
    from cclab.stats import mean_ci

    return mean_ci(np.asarray(x, dtype=float))[1]


RCP_SIZES = Sizes(
    Size(seeds=3, max_seeds=6, duration=20.0, warmup=10.0, axes={"N": (100, 200, 300, 600), "target": (1.0, 0.85)},
         extra={"smooth-sender runs": 100}),
    Size(seeds=10, max_seeds=30, duration=60.0, warmup=30.0, axes={"N": tuple(range(100, 601, 50)),
                                                                     "target": (1.0, 0.85)},
         extra={"smooth-sender runs": 1000}))
#: The plateau: N at and above this.
RCP_PLATEAU_N = 300
#: "Around 30%" read as within a factor 2; "stable" as every N of the plateau within 25% of its
#: mean; "low for small N" as below a third of the plateau; "no help" as at least 3/4 of it.
#: What the plateau presupposes is a link offered its target load (section VII: RCP "strives
#: to maintain the load of 1"), read as within 5% of the target. Not a busy link: a loss
#: rate p at a mean load ρ leaves a utilization of ρ(1 - p) (what arrives is sent or
#: dropped), so the paper's own "around 30%" at a load of 1 means a link at most 70% busy.
RCP_STABLE, RCP_LOAD_TOLERANCE = 0.25, 0.05


def _per_seed(runs: pd.DataFrame, col: str, fn=np.mean, **where) -> Estimate:
    """``fn`` of ``col`` over the rows matching ``where``, seed by seed (each seed's runs of the
    N of the plateau averaged, say)."""
    g = runs
    for k, v in where.items():
        g = g[g[k].isin(v)] if isinstance(v, (list, tuple)) else g[g[k] == v]
    return Estimate.of({s: fn(x[col].to_numpy()) for s, x in g.groupby("seed")}, groups=set(g["group"]),
                       fmt="{:.3f}")


def rcp_claims(runs: pd.DataFrame, smooth: dict | None = None) -> list:
    """Section VII's claims on Fig. 13, each as tested (see RCP_STABLE, RCP_BUSY)."""
    ns = sorted(set(runs["n_flows"]))
    big = [n for n in ns if n >= RCP_PLATEAU_N]
    claims = []
    plateau = {}
    for u in sorted(set(runs["target_utilization"]), reverse=True):
        pl = plateau[u] = _per_seed(runs, "loss_rate", target_utilization=u, n_flows=big)
        small = _per_seed(runs, "loss_rate", target_utilization=u, n_flows=ns[0])
        third = Estimate.of({s: v / 3 for s, v in pl.values}, groups=pl.groups, fmt="{:.3f}")
        claims.append(Greater(f"target {u:.0%}: loss low at N = {ns[0]} (below a third of the plateau, N ≥ "
                              f"{RCP_PLATEAU_N})", third, small, ours=f"{small.text()} vs plateau {pl.text()}"))
        claims.append(AllOf(f"target {u:.0%}: the plateau is stable: every N ≥ {RCP_PLATEAU_N} within "
                            f"{RCP_STABLE:.0%} of its mean",
                            [Near(f"N = {n}", _per_seed(runs, "loss_rate", target_utilization=u, n_flows=n) - pl,
                                  0.0, RCP_STABLE * pl.mean) for n in big]))
        claims.append(Within(f"target {u:.0%}: the plateau is 'around 30%' (within a factor 2)", pl,
                             PAPER_RCP_PLATEAU / 2, PAPER_RCP_PLATEAU * 2))
        if smooth:
            bound = max(smooth[(u, n)] for n in big)
            claims.append(Greater(f"target {u:.0%}: RCP loses far more than the smooth senders at N ≥ {RCP_PLATEAU_N} "
                                  "(over 3 times their loss)", pl, 3 * bound,
                                  ours=f"{pl.text()} vs at most {bound:.4f}"))
        load = _per_seed(runs, "offered_load", target_utilization=u, n_flows=big)
        claims.append(Near(f"target {u:.0%}: the plateau is that of a link offered its target load, as the paper's "
                           f"RCP 'strives to maintain the load of 1' (offered load at N ≥ {RCP_PLATEAU_N} within "
                           f"{RCP_LOAD_TOLERANCE:.0%} of the target)", load, u, RCP_LOAD_TOLERANCE * u))
    if len(plateau) == 2:
        hi, lo = plateau[max(plateau)], plateau[min(plateau)]
        claims.append(Greater("reducing the target to 85% does not lessen the losses (at least 3/4 of them)",
                              lo, Estimate.of({s: 0.75 * v for s, v in hi.values}, groups=hi.groups, fmt="{:.3f}")))
    return claims


@reproduction("lowerbounds-rcp", paper=PAPER, figure="Fig. 13 (section VII)",
              title="RCP with 10-packet buffers: loss rate and utilization against N (targets 100% and 85%)",
              sizes=RCP_SIZES)
def rcp_fig13(ctx: Context) -> Outcome:
    """Section VII: steady-state loss and utilization of RCP against N, beside the smooth bound."""
    size = ctx.size
    smooth_runs = int(size.extra["smooth-sender runs"])
    smooth = {(u, n): lb.smooth_loss(n, "exponential", RCP_BUFFER, utilization=u, runs=smooth_runs, seed=ctx.seed).loss
              for u in size.axis("target") for n in size.axis("N")}
    per_run, claims = replicate(ctx, "packet", rcp_points(size, ctx.seed), rcp_measure,
                                lambda rows: rcp_claims(rows, smooth), keep=("links",))
    rows = []
    for (u, n), g in per_run.groupby(["target_utilization", "n_flows"], sort=False):
        rows.append({"n_flows": n, "target_utilization": u, "runs": len(g),
                     "loss_rate": g.loss_rate.mean(), "loss_ci95": _ci95(g.loss_rate),
                     "utilization": g.utilization.mean(), "utilization_ci95": _ci95(g.utilization),
                     "offered_load": g.offered_load.mean(), "offered_load_ci95": _ci95(g.offered_load),
                     "mean_queue_packets": g.mean_queue_packets.mean(),
                     "smooth_loss_bound": smooth[(u, n)], "paper_loss_plateau": PAPER_RCP_PLATEAU})
    df = pd.DataFrame(rows)
    ns = size.axis("N")
    plt = pyplot()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 7.4), sharex=True)
    for u, color in zip(size.axis("target"), ("tab:blue", "tab:orange")):
        s = df[df.target_utilization == u]
        ax.errorbar(s.n_flows, 100 * s.loss_rate, yerr=100 * s.loss_ci95, marker="o", ms=3, capsize=2,
                    color=color, label=f"RCP, target {u:.0%} (ours, 95% CI)")
        ax.plot(s.n_flows, 100 * s.smooth_loss_bound, ":", color=color, label=f"smooth-sender bound, U = {u:.0%}")
        ax2.errorbar(s.n_flows, s.utilization, yerr=s.utilization_ci95, marker="o", ms=3, capsize=2, color=color,
                     label=f"utilization, target {u:.0%}")
        ax2.plot(s.n_flows, s.offered_load, ":", marker="s", ms=4, mfc="none", color=color,
                 label=f"offered load, target {u:.0%}")
    ax.axhline(100 * PAPER_RCP_PLATEAU, color="k", lw=0.7, ls="--")
    ax.text(ns[-1], 100 * PAPER_RCP_PLATEAU, " paper text: ~30%", va="bottom", ha="right", fontsize=8)
    ax.set_ylabel("loss rate (%)")
    ax.legend(fontsize=7)
    ax2.set_xlabel("number of flows N")
    ax2.set_ylabel("core link (fraction of 200 Mbps)")
    ax2.legend(fontsize=7)
    mark_figure(fig, claims, "Section VII (ours): RCP, 200 Mbps, B = 10, RTT 90 ms")
    tab = df[["n_flows", "target_utilization", "runs", "loss_rate", "loss_ci95", "offered_load", "utilization",
              "utilization_ci95", "smooth_loss_bound", "paper_loss_plateau"]]
    intro = (
        "Paper (section VII, text on Figs. 13 and 14): ns-2 RCP on a dumbbell whose core has a 10-packet "
        "buffer, 200 Mbps and 30 ms; RTT 90 ms; Poisson flow arrivals; 1000-byte packets; 10 runs; N from "
        "100 to 600. 'The loss rates are low for small N, then undergo prompt dramatic increases, and remain "
        "almost stable for larger N ... around 30%'; 'reducing the targeted utilization from 100% to 85% does "
        "not help RCP to lessen the losses'; 'the default RCP strives to maintain the load of 1', and the load "
        "oscillates widely as N grows. Its Fig. 13 is not digitised: the claims are tested as stated below, the "
        f"plateau being N >= {RCP_PLATEAU_N}; what the plateau presupposes, a link offered its target load, is "
        "checked too (not a busy link: a loss p at a load 1 leaves a utilization of 1 - p, at most 0.70 by the "
        "paper's own 30%). Our setting: RCP as in docs/protocols.md (RCP), alpha = beta = 0.4, T = min(d, 10 ms), "
        "the queue at the update; datagrams of 1040 bytes on the wire (1000 plus ns-2's 40-byte RCP header); "
        "flows start at the exponential inter-arrival times of Fig. 2 (mean D/U, D = 40 us: the smooth model's "
        "own draws for each run, unstated in the paper), each sends its SYN at its arrival. Loss = drops / "
        "arrivals at the core over the measured window. Beside: the loss of the ideally smooth senders with the "
        f"same buffer, N and U (section VI, {smooth_runs} runs), the lower bound the paper compares RCP with.")
    p100 = df[(df.target_utilization == 1.0) & (df.n_flows >= RCP_PLATEAU_N)]
    p85 = df[(df.target_utilization == 0.85) & (df.n_flows >= RCP_PLATEAU_N)]
    return outcome(df, fig, claims, intro=intro, tables=_md_table(tab, "{:.4g}"),
                   what=f"plateau loss (N >= {RCP_PLATEAU_N}) {100 * p100.loss_rate.mean():.0f}% at target 100% and "
                        f"{100 * p85.loss_rate.mean():.0f}% at 85% (paper: ~30%, 85% no help), offered load "
                        f"{p100.offered_load.mean():.3f} and {p85.offered_load.mean():.3f}, core utilization "
                        f"{p100.utilization.mean():.2f} and {p85.utilization.mean():.2f} there",
                   tolerance="our readings of qualitative claims: 'low for small N' as below a third of the "
                             "plateau, 'stable' as every N >= 300 within 25% of the plateau mean, 'around 30%' as "
                             "within a factor of 2, 'no help' as at least 3/4 of the loss at 100%, the target "
                             "load as within 5% of the target")
