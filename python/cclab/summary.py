"""Human-facing output of a run: the summary tables `cclab run` and `cclab show` print
(its figures are in cclab.inspect.plots)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .names import printable


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
    print(f"\npackets (whole run): {s['whole_run_packets_sent']} sent = {s['whole_run_packets_delivered']} delivered + "
          f"{s['whole_run_packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    if s["warmup_s"] > 0:
        print(f"packets after the warm-up: {s['packets_in_flight_at_warmup']} in flight at its end + "
              f"{s['measured_packets_sent']} sent = {s['measured_packets_delivered']} delivered + "
              f"{s['measured_packets_dropped']} dropped + {s['packets_in_flight']} in flight")
    if "wall_time_s" not in s:  # a saved run without its perf.json
        print(f"engine: {s['events']:,} events (wall time not recorded)")
        return
    print(f"engine: {s['events']:,} events in {s['wall_time_s']:.3f} s wall "
          f"({s['events_per_s'] / 1e6:.2f} M events/s, {s['wall_s_per_sim_s'] * 1e3:.3f} ms wall per simulated s)")


#: Rows of each table `html_summary` shows at most (the rest counted below it).
HTML_ROWS = 12


def _html_table(df: pd.DataFrame, what: str) -> str:
    shown = df.head(HTML_ROWS)
    more = f"<p><i>... and {len(df) - HTML_ROWS:,} more {what}</i></p>" if len(df) > HTML_ROWS else ""
    return shown.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep="–", border=0) + more


def html_summary(result) -> str:
    """The run as compact HTML (Jupyter's display of a Result or a saved run): a
    heading line, the per-class and per-link tables `cclab run` prints (the first
    HTML_ROWS of each), what was traced, and the warnings. Names are escaped."""
    import html

    s = result.summary
    head = (f"<b>cclab run</b> {html.escape(str(s.get('name', '?')))}: seed {s.get('seed', '?')}, "
            f"{s.get('simulated_s', float('nan')):g} s simulated, statistics after "
            f"{s.get('warmup_s', float('nan')):g} s of warm-up, {len(result.flows):,} flows")
    path = getattr(result, "path", None)
    if path is not None and str(path) not in ("", "."):
        head += f" (saved in <code>{html.escape(str(path))}</code>)"
    parts = [f"<div>{head}</div>"]
    if "class" in result.flows and len(result.flows):
        parts.append(_html_table(class_table(result), "classes"))
    if "name" in result.links and len(result.links):
        parts.append(_html_table(link_table(result), "links"))
    traces = getattr(result, "traces", None)
    if traces:
        parts.append(f"<div>traces: {html.escape(repr(traces)[len('<cclab.Traces '):-1])}</div>")
    for w in result.warnings:
        parts.append(f"<div>warning: {html.escape(str(w))}</div>")
    return "\n".join(parts)
