"""Human-facing output of a run: the summary table printed by `cclab run` and the
plot of completion time against flow size."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def class_table(result) -> pd.DataFrame:
    """Per-class statistics over flows that arrived after the warm-up.

    Computed for all classes at once (sums by class code, quantiles from one sort by
    class then completion time, numpy's default linear interpolation): a boolean
    selection of the flow table per class made 1,000 classes take seconds (issue 12).
    """
    s = result.summary
    fl = result.flows
    names = list(fl["class"].cat.categories)
    k = len(names)
    size = fl["size"].to_numpy(dtype=float, na_value=np.nan)
    # Long-lived flows start at once and never finish: keep them even if they began in warm-up.
    keep = ~fl["warmup"].to_numpy(dtype=bool) | np.isnan(size)
    codes = fl["class"].cat.codes.to_numpy()[keep]
    size = size[keep]
    known = ~np.isnan(size)
    finished = fl["finished"].to_numpy(dtype=bool)[keep]
    ct = fl["completion_time"].to_numpy(dtype=float, na_value=np.nan)[keep]

    def by_class(values) -> np.ndarray:
        return np.bincount(codes, weights=values, minlength=k)

    flows = np.bincount(codes, minlength=k)
    n_known = np.bincount(codes[known], minlength=k)
    done_codes, done_ct = codes[finished], ct[finished]
    order = np.lexsort((done_ct, done_codes))
    done_ct = done_ct[order]
    n_done = np.bincount(done_codes, minlength=k)
    first = np.concatenate(([0], np.cumsum(n_done)[:-1]))

    def quantile(q: float) -> np.ndarray:
        pos = q * np.maximum(n_done - 1, 0)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(n_done - 1, 0))
        out = np.full(k, np.nan)
        has = n_done > 0
        a, b = done_ct[(first + lo)[has]], done_ct[(first + hi)[has]]
        out[has] = a + (pos - lo)[has] * (b - a)
        return out

    with np.errstate(all="ignore"):
        mean_size = np.where(n_known > 0, by_class(np.where(known, size, 0.0)) / n_known / 1e6, np.nan)
        mean_ct = np.where(n_done > 0, np.bincount(done_codes, weights=ct[finished], minlength=k) / n_done, np.nan)
    return pd.DataFrame({
        "class": names,
        "flows": flows,
        "finished": n_done,
        "mean size (MB)": mean_size,
        "mean completion (s)": mean_ct,
        "median (s)": quantile(0.5),
        "p95 (s)": quantile(0.95),
        "throughput (Mbps)": [s.get(f"{c}.throughput_bps", np.nan) / 1e6 for c in names],
        "retransmissions": by_class(fl["retransmissions"].to_numpy()[keep].astype(float)).astype(np.int64),
        "timeouts": by_class(fl["timeouts"].to_numpy()[keep].astype(float)).astype(np.int64),
    }, columns=list(_CLASS_COLUMNS))


_CLASS_COLUMNS = ("class", "flows", "finished", "mean size (MB)", "mean completion (s)", "median (s)",
                  "p95 (s)", "throughput (Mbps)", "retransmissions", "timeouts")


def link_table(result) -> pd.DataFrame:
    """Per-link counters over the measured period."""
    l = result.links
    return pd.DataFrame({
        "link": l["name"],
        "rate (Mbps)": l["rate_bps"] / 1e6,
        "utilization": l["utilization"],
        "drops": l["drops"],
        "drop rate": l["drop_rate"],
        "marks": l["marks"],
        "mean queue (pkts)": l["mean_queue_packets"],
        "max queue (pkts)": l["max_queue_packets"],
    })


def print_summary(result) -> None:
    """Print the summary table of a run."""
    s = result.summary
    with pd.option_context("display.width", 140, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(f"scenario {s['name']!r}  seed {s['seed']}  simulated {s['simulated_s']:g} s "
              f"(statistics after {s['warmup_s']:g} s of warm-up)\n")
        classes = class_table(result)
        classes["class"] = [printable(c) for c in classes["class"]]
        links = link_table(result)
        links["link"] = [printable(c) for c in links["link"]]
        print(classes.to_string(index=False))
        print()
        print(links.to_string(index=False))
    print(f"\npackets (whole run): {s['packets_sent']} sent = {s['packets_delivered']} delivered + "
          f"{s['packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    if s["warmup_s"] > 0:
        print(f"packets after the warm-up: {s['packets_in_flight_at_warmup']} in flight at its end + "
              f"{s['measured_packets_sent']} sent = {s['measured_packets_delivered']} delivered + "
              f"{s['measured_packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    print(f"engine: {s['events']:,} events in {s['wall_time_s']:.3f} s wall "
          f"({s['events_per_s'] / 1e6:.2f} M events/s, {s['wall_s_per_sim_s'] * 1e3:.3f} ms wall per simulated s)")


#: Above this many classes the plot draws every flow as one scatter (coloured by class)
#: without per-class curves or legend: 1,000 legend entries took 20 s to lay out.
PLOT_MAX_CLASSES = 12


def plot_completion_times(result, path: str | Path) -> Path:
    """Scatter of completion time against flow size (log-log), with binned means.

    Names are drawn as plain text (every ``$`` escaped): a class called ``a$b$`` is not
    TeX, and matplotlib's mathtext parser used to fail on it after the run (issue 12).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    f = result.flows[result.flows.finished & ~result.flows.warmup & result.flows["size"].notna()]
    present = [c for c in f["class"].cat.categories if (f["class"] == c).any()] \
        if len(f["class"].cat.categories) <= PLOT_MAX_CLASSES else None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if present is None:
        ax.scatter(f["size"] / 1e6, f["completion_time"], s=6, alpha=0.35, c=f["class"].cat.codes,
                   cmap="viridis")
        ax.text(0.01, 0.99, f"{f['class'].nunique()} classes with finished flows, coloured by class (no legend)",
                transform=ax.transAxes, va="top", fontsize=8)
    else:
        for cls in present:
            _plot_class(ax, f[f["class"] == cls], cls)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (MB)")
    ax.set_ylabel("completion time (s)")
    s = result.summary
    ax.set_title(f"{_plain(s['name'])}: completion time vs size (seed {s['seed']}, {s['simulated_s']:g} s)")
    ax.grid(True, which="both", alpha=0.3)
    if present:
        ax.legend(fontsize=8)
    # Fixed margins: tight_layout measured every log tick label again (0.2 s a plot).
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.12, top=0.92)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _plot_class(ax, g: pd.DataFrame, cls: str) -> None:
    """One class's flows and, with ten or more, their mean completion time in log-size bins."""
    pts = ax.scatter(g["size"] / 1e6, g["completion_time"], s=8, alpha=0.35, label=f"{_plain(cls)} (flows)")
    if len(g) < 10:
        return
    edges = np.logspace(np.log10(g["size"].min()), np.log10(g["size"].max()), 13)
    mid, mean = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        b = g[(g["size"] >= lo) & (g["size"] <= hi)]
        if len(b) >= 3:
            mid.append(np.sqrt(lo * hi) / 1e6)
            mean.append(b["completion_time"].mean())
    ax.plot(mid, mean, "-o", color=pts.get_facecolor()[0][:3], lw=2, ms=4, label=f"{_plain(cls)} (binned mean)")


def _plain(name: str, width: int = 40) -> str:
    """A user's name as matplotlib plain text: ``$`` escaped (it would open TeX math),
    control characters shown as escapes (the fonts have no glyph for them), cut to
    ``width`` characters (a legend of 300-character names leaves no room to plot)."""
    text = printable(name)
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("$", r"\$")


def printable(name: str) -> str:
    """The name with control characters (newline, tab, NUL...) written as escapes, as
    the summary table prints it: every name is accepted, none breaks a table."""
    name = str(name)
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in name)
