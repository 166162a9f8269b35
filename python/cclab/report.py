"""Human-facing output of a run: the summary table printed by `cclab run` and the
plot of completion time against flow size."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def class_table(result) -> pd.DataFrame:
    """Per-class statistics over flows that arrived after the warm-up."""
    s = result.summary
    rows = []
    for cls in result.flows["class"].cat.categories:
        fl = result.flows
        # Long-lived flows start at once and never finish: keep them even if they began in warm-up.
        f = fl[(fl["class"] == cls) & (~fl.warmup | fl["size"].isna())]
        done = f[f.finished]
        ct = done.completion_time
        rows.append({
            "class": cls,
            "flows": len(f),
            "finished": len(done),
            "mean size (MB)": f["size"].mean() / 1e6 if f["size"].notna().any() else np.nan,
            "mean completion (s)": ct.mean() if len(ct) else np.nan,
            "median (s)": ct.median() if len(ct) else np.nan,
            "p95 (s)": ct.quantile(0.95) if len(ct) else np.nan,
            "throughput (Mbps)": s.get(f"{cls}.throughput_bps", np.nan) / 1e6,
            "retransmissions": int(f.retransmissions.sum()),
            "timeouts": int(f.timeouts.sum()),
        })
    return pd.DataFrame(rows)


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
        print(class_table(result).to_string(index=False))
        print()
        print(link_table(result).to_string(index=False))
    print(f"\npackets (whole run): {s['packets_sent']} sent = {s['packets_delivered']} delivered + "
          f"{s['packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    if s["warmup_s"] > 0:
        print(f"packets after the warm-up: {s['packets_in_flight_at_warmup']} in flight at its end + "
              f"{s['measured_packets_sent']} sent = {s['measured_packets_delivered']} delivered + "
              f"{s['measured_packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    print(f"engine: {s['events']:,} events in {s['wall_time_s']:.3f} s wall "
          f"({s['events_per_s'] / 1e6:.2f} M events/s, {s['wall_s_per_sim_s'] * 1e3:.3f} ms wall per simulated s)")


def plot_completion_times(result, path: str | Path) -> Path:
    """Scatter of completion time against flow size (log-log), with binned means."""
    from cclab.plotting import pyplot, savefig

    plt = pyplot()
    path = Path(path)
    f = result.flows[result.flows.finished & ~result.flows.warmup & result.flows["size"].notna()]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for cls in f["class"].cat.categories:
        g = f[f["class"] == cls]
        if g.empty:
            continue
        pts = ax.scatter(g["size"] / 1e6, g["completion_time"], s=8, alpha=0.35, label=f"{cls} (flows)")
        if len(g) >= 10:
            edges = np.logspace(np.log10(g["size"].min()), np.log10(g["size"].max()), 13)
            mid, mean = [], []
            for lo, hi in zip(edges[:-1], edges[1:]):
                b = g[(g["size"] >= lo) & (g["size"] <= hi)]
                if len(b) >= 3:
                    mid.append(np.sqrt(lo * hi) / 1e6)
                    mean.append(b["completion_time"].mean())
            ax.plot(mid, mean, "-o", color=pts.get_facecolor()[0][:3], lw=2, ms=4, label=f"{cls} (binned mean)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow size (MB)")
    ax.set_ylabel("completion time (s)")
    s = result.summary
    ax.set_title(f"{s['name']}: completion time vs size (seed {s['seed']}, {s['simulated_s']:g} s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return savefig(fig, path, dpi=120)
