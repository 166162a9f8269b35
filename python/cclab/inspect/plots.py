"""Figures of saved runs: ``cclab plot DIR`` (one run over time, and completion time
against size) and ``cclab compare DIR DIR`` (completion time by size, ratio of the
two runs)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..names import plot_label
from ..plotting import legend, pyplot, savefig

#: Lines drawn per panel at most (the largest by mean); more would hide each other.
MAX_LINES = 8
#: Points per time-series line at most: a longer series is drawn as the means of
#: k consecutive samples, with a light band from their minimum to their maximum
#: (the title says k); 1,900 raw samples of a fluctuating queue across 800 pixels
#: are a solid block.
MAX_POINTS = 400
#: Flows per class drawn as points at most in the completion-time panel (an even
#: stride through the flows; the medians use every flow).
MAX_SCATTER = 20000
#: Size bins of the completion-time panel, log-spaced over the class's sizes, and
#: the flows a bin needs for its median to be drawn.
SIZE_BINS = 12
MIN_PER_BIN = 5
#: Lines whose typical values span more than this factor get a log y axis (the
#: access controller's limit of 1-3 files beside 100 waiting ones).
DECADES = 20.0

#: The panels over time: (metrics, y label, scale of the value, title).
TIME_PANELS = [
    (("queue_packets",), "queue (packets)", 1.0, "queue length per link"),
    (("throughput_bps",), "throughput (Mbit/s)", 1e-6, "throughput per class (payload delivered in order)"),
    (("active_flows",), "active flows", 1.0, "active flows per class"),
    (("access_limit", "access_active", "access_waiting"), "files", 1.0,
     "access controller per class: the limit M, files transferring and files waiting"),
]
_STYLES = {"access_limit": ("-", "limit M"), "access_active": ("--", "transferring"),
           "access_waiting": (":", "waiting")}
_COUNTS = {"queue (packets)", "active flows", "files"}  # whole numbers: integer ticks
_HIDDEN = {"queue_bytes"}  # the same as queue_packets in other units


def _legend(ax, **kw) -> None:
    """The legend to the right of the axes, outside the data."""
    if ax.get_legend_handles_labels()[0]:
        legend(ax, "outside", fontsize=8, frameon=False, **kw)


def _log_if_decades(ax, lines: list[np.ndarray]) -> None:
    """Log scale when the lines' typical (median positive) values span more than
    DECADES: a 1 kbit/s class beside a 1 Gbit/s one is then still readable."""
    typical = [np.median(v[v > 0]) for v in lines if np.any(v > 0)]
    if len(typical) >= 2 and max(typical) / min(typical) > DECADES:
        ax.set_yscale("log", nonpositive="mask")


def _thin(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """At most MAX_POINTS points: (times, means, minima, maxima, k) of k
    consecutive samples (k = 1: the samples themselves)."""
    k = int(np.ceil(len(t) / MAX_POINTS))
    if k <= 1:
        return t, v, v, v, 1
    n = len(t) // k * k
    tv, vv = t[:n].reshape(-1, k), v[:n].reshape(-1, k)
    return tv.mean(axis=1), vv.mean(axis=1), vv.min(axis=1), vv.max(axis=1), k


def series_panels(series: pd.DataFrame) -> list[tuple]:
    """The time panels this series can fill: (metrics, y label, title, lines) where
    lines are (metric, name, times, scaled values); each panel keeps its
    MAX_LINES largest lines by mean and drops lines that are zero throughout (the
    title says how many)."""
    if series.empty:
        return []
    metrics = [str(m) for m in pd.unique(series["metric"].astype(str))]
    panels = list(TIME_PANELS)
    known = {m for p in panels for m in p[0]} | _HIDDEN
    panels += [((m,), m, 1.0, m) for m in metrics if m not in known]
    # One pass over the series: each line's mean, whether it is zero throughout, and
    # where its rows are (a run over 65,000 links has 130,000 lines; only the kept
    # ones are ever cut out of the table).
    by = series.groupby(["metric", "name"], observed=True, sort=False)
    means = by["value"].mean()
    nonzero = (series["value"] != 0).groupby([series["metric"], series["name"]], observed=True, sort=False).sum()
    mean = {(str(m), str(n)): float(x) for (m, n), x in means.items()}
    keys = list(mean)  # in the run's order (sort=False keeps the order of first appearance)
    zero_line = {(str(m), str(n)): int(x) == 0 for (m, n), x in nonzero.items()}
    rows = {(str(m), str(n)): ix for (m, n), ix in by.indices.items()}
    time, value = series["time"].to_numpy(float), series["value"].to_numpy(float)
    out = []
    for ms, ylabel, scale, title in panels:
        lines = [k for k in keys if k[0] in ms]
        if not lines:
            continue
        names = list(dict.fromkeys(n for _, n in lines))
        present = set(lines)
        # rank entities by their largest mean over the panel's metrics
        rank = {n: max(mean[(m, n)] for m in ms if (m, n) in present) for n in names}
        zero = [n for n in names if rank[n] == 0 and all(zero_line[(m, n)] for m in ms if (m, n) in present)]
        zeros = set(zero)
        kept = set([n for n in sorted(names, key=lambda n: -rank[n]) if n not in zeros][:MAX_LINES])
        keep = [n for n in names if n in kept]  # in the run's order
        notes = []
        if zero:
            notes.append(f"{len(zero)} always 0 not drawn" if len(zero) > 2 else f"always 0: {', '.join(zero)}")
        if len(names) - len(zero) > len(keep):
            notes.append(f"the {len(keep)} largest of {len(names) - len(zero)}")
        drawn = []
        for n in keep:
            for m in ms:
                if (m, n) in present:
                    ix = rows[(m, n)]
                    drawn.append((m, n, time[ix], value[ix] * scale))
        out.append((ms, ylabel, title + (f" ({'; '.join(notes)})" if notes else ""), drawn))
    return out


def completion_data(result) -> pd.DataFrame:
    """Finished flows with a size that arrived after the warm-up."""
    f = result.flows
    return f[f["finished"] & ~f["warmup"] & f["size"].notna()]


def size_bins(sizes: np.ndarray, n: int = SIZE_BINS) -> np.ndarray:
    """n log-spaced bins spanning the sizes (one bin if they are all equal)."""
    lo, hi = float(np.min(sizes)), float(np.max(sizes))
    if hi <= lo:
        return np.array([lo * 0.99, hi * 1.01])
    return np.logspace(np.log10(lo), np.log10(hi), n + 1)


def binned(sizes: np.ndarray, values: np.ndarray, edges: np.ndarray, stat) -> list[tuple]:
    """(lo, hi, geometric middle, flows, stat(values)) of every bin with at least
    MIN_PER_BIN flows; the last bin includes its upper edge."""
    ix = np.clip(np.searchsorted(edges, sizes, side="right") - 1, 0, len(edges) - 2)
    rows = []
    for b in range(len(edges) - 1):
        v = values[ix == b]
        if len(v) >= MIN_PER_BIN:
            rows.append((edges[b], edges[b + 1], float(np.sqrt(edges[b] * edges[b + 1])), len(v), stat(v)))
    return rows


def completion_classes(result) -> tuple[list, str]:
    """The classes the completion-time panel draws: those with a finished flow of
    finite size, at most MAX_LINES of them (the most flows), in the run's order;
    and a note when some are left out."""
    f = completion_data(result)
    counts = f["class"].value_counts()
    counts = counts[counts > 0]
    order = list(f["class"].cat.categories) if hasattr(f["class"], "cat") else list(pd.unique(f["class"]))
    keep = set(counts.sort_values(ascending=False, kind="stable").index[:MAX_LINES])
    note = f"the {len(keep)} classes with the most flows of {len(counts)}" if len(counts) > len(keep) else ""
    return [c for c in order if c in keep], note


def color_map(result, panels: list = ()) -> dict:
    """One colour per class and one per link, the same in every panel: the classes
    drawn (in the time panels or the completion panel), in the run's order, take
    the palette's colours in turn; the links take them apart, as no panel mixes
    links and classes."""
    palette = _colors()
    drawn = {n for p in panels for _, n, *_ in p[3]} | {str(c) for c in completion_classes(result)[0]}
    classes = [str(c) for c in (result.flows["class"].cat.categories if "class" in result.flows
                                and hasattr(result.flows["class"], "cat") else [])]
    links = [str(n) for n in result.links["name"]] if "name" in result.links else []
    out = {}
    for names in (links, classes):
        shown = [n for n in names if n in drawn] or names
        out.update({n: palette[i % len(palette)] for i, n in enumerate(shown)})
    return out


def draw_completion(ax, result, colors: dict | None = None) -> bool:
    """Completion time against size, log-log: the flows as points and each class's
    per-size-bin medians. False (nothing drawn) if no flow with a size finished."""
    f = completion_data(result)
    if f.empty:
        return False
    colors = colors or color_map(result)
    classes, note = completion_classes(result)
    for cls in classes:
        g = f[f["class"] == cls]
        if g.empty:
            continue
        c = colors.get(str(cls), "k")
        size = g["size"].to_numpy(float) / 1e6
        ct = g["completion_time"].to_numpy(float)
        stride = max(1, int(np.ceil(len(g) / MAX_SCATTER)))
        label = f"{plot_label(cls)} ({len(g):,} flows" + (f", 1 in {stride} drawn)" if stride > 1 else ")")
        rows = binned(size, ct, size_bins(size), np.median)
        # one legend entry per class: its median line, or its points if it has no bin of MIN_PER_BIN flows
        ax.scatter(size[::stride], ct[::stride], s=9, alpha=0.35, color=c, lw=0, rasterized=True,
                   label=None if rows else label)
        if rows:
            from matplotlib import patheffects

            # a white casing keeps the line visible over its own class's points
            ax.plot([r[2] for r in rows], [r[4] for r in rows], "-o", color=c, lw=2, ms=4, label=label,
                    path_effects=[patheffects.withStroke(linewidth=4, foreground="white")])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (MB, 10^6 bytes)")
    ax.set_ylabel("completion time (s)")
    ax.grid(True, which="both", alpha=0.25)
    ax.set_title("completion time vs size (flows that arrived after the warm-up and finished"
                 + (f"; {note})" if note else ")"), fontsize=10)
    _legend(ax, title="points: flows\nlines: median per size bin", title_fontsize=8)
    return True


def _colors() -> list:
    import matplotlib

    return list(matplotlib.colormaps["tab10"].colors)


def _link_labels(result) -> dict:
    """A link's legend entry in the queue panel: its name and its utilization over
    the measured period (the series records no per-link throughput)."""
    l = result.links
    if not {"name", "utilization"} <= set(l.columns):
        return {}
    return {str(n): f"{plot_label(n)} (utilization {u:.3g})" for n, u in zip(l["name"], l["utilization"])}


def _draw_time_panel(ax, ylabel: str, title: str, drawn: list, colors: dict, labels: dict | None = None) -> None:
    thinned = 1
    for m, n, t, v in drawn:
        c = colors.get(n, "k")
        t, mean, lo, hi, k = _thin(t, v)
        thinned = max(thinned, k)
        style, what = _STYLES.get(m, ("-", None))
        label = f"{plot_label(n)}: {what}" if what else (labels or {}).get(n, plot_label(n))
        if k > 1:
            ax.fill_between(t, lo, hi, color=c, alpha=0.15, lw=0)
        ax.plot(t, mean, style, color=c, lw=1.2, label=label, drawstyle="steps-post" if k == 1 else "default")
    _log_if_decades(ax, [v for *_, v in drawn])
    if ax.get_yscale() == "linear":
        ax.set_ylim(bottom=0)  # every series is a count, a length or a rate: from 0, not from its minimum
    if ylabel in _COUNTS and ax.get_yscale() == "linear":
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    ax.set_title(title + (f"; means of {thinned} samples, band: their min-max" if thinned > 1 else ""),
                 fontsize=10, loc="left")
    ax.grid(True, alpha=0.25)
    _legend(ax)


def plot_run(result, path: str | Path) -> tuple[Path, list[str]]:
    """One figure of a run: queue per link, throughput and active flows per class,
    the access controller's state (when recorded) over time, and completion time
    against size. Returns the PNG's path and notes on what was left out (a panel
    without data is omitted, never drawn empty). Raises ValueError if there is
    nothing to draw."""
    plt = pyplot()
    panels = series_panels(result.series)
    have_ct = not completion_data(result).empty
    notes = []
    if not panels:
        notes.append("no time series (the run recorded none: record.interval = \"0s\", or nothing after the warm-up)")
    if not have_ct:
        notes.append("no completion-time panel: no flow with a size arrived after the warm-up and finished "
                     "(only long-lived or CBR flows, or none finished)")
    if not panels and not have_ct:
        raise ValueError("nothing to plot: " + "; ".join(notes))
    heights = [2.2] * len(panels) + ([3.6] if have_ct else [])
    fig = plt.figure(figsize=(11, sum(heights) + 1.0), layout="constrained")
    gs = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    first = None
    colors = color_map(result, panels)
    for i, (ms, ylabel, title, drawn) in enumerate(panels):
        ax = fig.add_subplot(gs[i], sharex=first)
        first = first or ax
        _draw_time_panel(ax, ylabel, title, drawn, colors, _link_labels(result) if ms == ("queue_packets",) else None)
        if i < len(panels) - 1:
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xlabel("simulated time (s)")
    if have_ct:
        draw_completion(fig.add_subplot(gs[len(panels)]), result, colors=colors)
    s = result.summary
    head = (f"{plot_label(s.get('name', '?'))}: seed {s.get('seed', '?')}, {s.get('simulated_s', float('nan')):g} s simulated, "
            f"statistics after {s.get('warmup_s', float('nan')):g} s of warm-up")
    fig.suptitle(head + ("\n" + "; ".join(notes) if notes else ""), fontsize=11)
    return _save(fig, path), notes


def completion_or_throughput_figure(result):
    """The figure `cclab run --out` writes, and what it shows ("completion",
    "throughput" or "nothing"): completion time against size; for a run without a
    finished flow of finite size (long-lived flows only), throughput per class over
    time instead, with a title that says so (never an empty plot)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
    s = result.summary
    head = f"{plot_label(s.get('name', '?'))} (seed {s.get('seed', '?')}, {s.get('simulated_s', float('nan')):g} s)"
    if draw_completion(ax, result):
        ax.set_title(f"{head}: completion time vs size", fontsize=10)
        return fig, "completion"
    tp = [p for p in series_panels(result.series) if p[0] == ("throughput_bps",)]
    if tp:
        _draw_time_panel(ax, tp[0][1], tp[0][2], tp[0][3], color_map(result, tp))
        ax.set_xlabel("simulated time (s)")
        ax.set_title("", loc="left")
        ax.set_title(f"{head}: no flow with a size finished after the warm-up,\nso throughput per class "
                     "(payload delivered in order) over time instead of completion time vs size", fontsize=10)
        return fig, "throughput"
    ax.axis("off")
    ax.text(0.5, 0.5, f"{head}\nnothing to plot: no flow with a size finished after the warm-up\n"
            "and no time series was recorded (record.interval)", ha="center", va="center")
    return fig, "nothing"


def _save(fig, path: str | Path) -> Path:
    return savefig(fig, path, dpi=110)


def plot_completion_or_throughput(result, path: str | Path) -> Path:
    """Write :func:`completion_or_throughput_figure` to ``path``."""
    return _save(completion_or_throughput_figure(result)[0], path)


def plot_compare(comparison: dict, path: str | Path) -> Path:
    """Mean completion time per size bin of both runs (95% confidence intervals)
    and their ratio B/A, log-log, one colour per class in common."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8), layout="constrained")
    a_name, b_name = plot_label(comparison["a"]["label"]), plot_label(comparison["b"]["label"])
    colors = iter(_colors() * 100)
    drawn = [(cls, rows) for cls, rows in comparison["ratio"].items() if rows]
    ends = [v for _, rows in drawn for row in rows for v in (row["ratio"], row["ratio_lo"], row["ratio_hi"])
            if 0 < v < math.inf]
    lim = (min(ends) / 1.5, max(ends) * 1.5) if ends else (0.1, 10)
    for cls, rows in drawn:
        c = next(colors)
        x = np.array([r["size_mid_bytes"] for r in rows]) / 1e6
        for key, marker, ls, run, shift in (("a", "o", "-", a_name, 1 / 1.04), ("b", "s", "--", b_name, 1.04)):
            m = np.array([r[f"{key}_mean_s"] for r in rows])
            h = np.array([r[f"{key}_ci95_s"] for r in rows])
            # A and B side by side, a few percent apart in size, so that the bars do not hide each other
            left.errorbar(x * shift, m, yerr=np.nan_to_num(h), fmt=marker + ls, color=c, ms=4, capsize=2, lw=1.3,
                          mfc="white" if key == "b" else c, label=f"{plot_label(cls)}, {key.upper()}: {plot_label(run)}")
        r = np.array([row["ratio"] for row in rows])
        lo = np.array([row["ratio_lo"] for row in rows])
        hi = np.minimum([row["ratio_hi"] for row in rows], lim[1] * 10)  # unbounded: beyond the top
        yerr = np.nan_to_num(np.vstack([r - lo, hi - r]))
        right.errorbar(x, r, yerr=yerr, fmt="o-", color=c, ms=4, capsize=2, lw=1.3, label=plot_label(cls))
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("flow size (MB, 10^6 bytes; bin's geometric middle)")
        ax.grid(True, which="both", alpha=0.25)
    left.set_yscale("log")
    left.set_ylabel("mean completion time (s)")
    left.set_title("mean per size bin, 95% CI", fontsize=10)
    right.axhline(1.0, color="0.3", lw=1, ls=":")
    right.set_yscale("log")  # a ratio: 2 and 1/2 equally far from 1
    right.set_ylim(min(lim[0], 0.5), max(lim[1], 2))
    right.set_ylabel("ratio of means, B / A")
    right.set_title("B / A per size bin, 95% CI (Fieller; a bar to the edge: unbounded)", fontsize=10)
    _legend(left)
    _legend(right)
    fig.suptitle(f"completion time by size: A = {a_name}, B = {b_name}", fontsize=11)
    return _save(fig, path)
