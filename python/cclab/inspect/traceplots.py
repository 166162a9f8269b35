"""Figures of a run's traces: ``cclab plot DIR --flow ID`` (the time-sequence graph,
as tcptrace and Wireshark draw it, over the window, the RTT and the controller's
state) and ``cclab plot DIR --link NAME`` (the queue at event resolution with its
drops and marks, and each packet's wait)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..names import plot_label
from ..plotting import COLORS, legend, pyplot, savefig

#: Points per line at most: a longer line is drawn as the minimum and maximum of
#: each of this many equal time bins (an envelope that keeps every peak).
MAX_POINTS = 4000
#: Segments drawn one by one at most in the time-sequence graph; more are drawn
#: as their sequence numbers' envelope over time.
MAX_SEGMENTS = 20000

SEND, RESEND, ACK, SACK, DROP, CE = COLORS[0], COLORS[1], COLORS[2], COLORS[5], "#C00000", COLORS[4]


class TraceError(ValueError):
    """What a trace plot needs is not in the run (named in the message)."""


def _window(df: pd.DataFrame, start: float | None, end: float | None) -> pd.DataFrame:
    t = df["time_s"]
    keep = np.ones(len(df), dtype=bool)
    if start is not None:
        keep &= t.to_numpy() >= start
    if end is not None:
        keep &= t.to_numpy() <= end
    return df[keep]


def envelope(t: np.ndarray, v: np.ndarray, n: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(bin middles, minima, maxima) of ``v`` over ``n`` equal time bins, when there
    are more than ``n`` points (None: draw them as they are)."""
    if len(t) <= n:
        return None
    edges = np.linspace(t[0], t[-1], n + 1)
    ix = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, n - 1)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, ix, v)
    np.maximum.at(hi, ix, v)
    has = np.isfinite(lo)
    mid = (edges[:-1] + edges[1:]) / 2
    return mid[has], lo[has], hi[has]


def _step(ax, t, v, label: str, color, **kw) -> None:
    """A state over time: as steps, or as its envelope when it has too many points."""
    env = envelope(np.asarray(t, float), np.asarray(v, float))
    if env is None:
        ax.step(t, v, where="post", color=color, label=label, **kw)
    else:
        _band(ax, env, color, f"{label} (min-max per {(t[-1] - t[0]) / MAX_POINTS * 1e3:.3g} ms)")


def _band(ax, env, color, label: str) -> None:
    """An envelope: its minimum and maximum as thin lines, the space between shaded."""
    mid, lo, hi = env
    ax.fill_between(mid, lo, hi, color=color, alpha=0.3, lw=0, step="mid")
    ax.step(mid, hi, where="mid", color=color, lw=0.6, label=label)
    ax.step(mid, lo, where="mid", color=color, lw=0.6)


def _points(ax, t, v, label: str, color, **kw) -> None:
    """Samples as dots (every k-th when there are more than 10 x MAX_POINTS)."""
    k = max(1, int(np.ceil(len(t) / (10 * MAX_POINTS))))
    ax.plot(t[::k], v[::k], ".", ms=2, color=color, label=label + (f" (1 in {k})" if k > 1 else ""), **kw)


def _seq_scale(top: float) -> tuple[float, str]:
    return (1e6, "MB") if top >= 5e6 else (1e3, "kB") if top >= 5e3 else (1.0, "bytes")


def _segments(ax, rows: pd.DataFrame, scale: float, color, label: str, lw: float = 1.0) -> None:
    """Byte ranges [seq, end) at their times as vertical bars, or their envelope."""
    if rows.empty:
        return
    from matplotlib.collections import LineCollection

    t = rows["time_s"].to_numpy(float)
    lo, hi = rows["seq"].to_numpy(float) / scale, rows["end"].to_numpy(float) / scale
    if len(rows) <= MAX_SEGMENTS:
        segs = np.stack([np.column_stack([t, lo]), np.column_stack([t, hi])], axis=1)
        ax.add_collection(LineCollection(segs, colors=color, linewidths=lw, label=label, rasterized=len(rows) > 2000))
        ax.plot(t, hi, "_", ms=3, color=color)  # tcptrace's tick at each segment's end
    else:
        _band(ax, envelope(t, hi, MAX_POINTS), color, f"{label} (highest byte: min-max per bin)")


def draw_time_sequence(ax, packets: pd.DataFrame) -> None:
    """The time-sequence graph: segments sent and resent, the ACK line, SACK blocks,
    drops and congestion marks (sequence numbers from the flow's first byte)."""
    ev = packets["event"].astype(str)
    top = float(packets["end"].max()) if len(packets) else 1.0
    scale, unit = _seq_scale(top)
    _segments(ax, packets[ev == "send"], scale, SEND, "sent")
    _segments(ax, packets[ev == "sack"], scale, SACK, "SACK block", lw=2.0)
    _segments(ax, packets[ev == "retransmit"], scale, RESEND, "resent", lw=1.6)
    acks = packets[ev == "ack"]
    if len(acks):
        _step(ax, acks["time_s"].to_numpy(float), acks["seq"].to_numpy(float) / scale, "ACK (cumulative)", ACK, lw=1.0)
    for event, marker, color, label in (("drop", "x", DROP, "dropped"), ("ce", "^", CE, "marked CE (at the receiver)")):
        d = packets[ev == event]
        if len(d):
            many = len(d) > 50
            ax.plot(d["time_s"], d["end"] / scale, marker, ms=3.5 if many else 6, mew=1.0 if many else 1.5, color=color,
                    linestyle="none", label=f"{label} ({len(d):,})", zorder=5)
    ax.autoscale_view()
    ax.set_ylabel(f"sequence number ({unit})")
    legend(ax, "outside", fontsize=8, frameon=False)


def _flow_panels(state: pd.DataFrame, rate_flow: bool) -> list[tuple[str, list[str]]]:
    """(y label, variables) of the panels below the time-sequence graph."""
    have = set(state.columns)
    own = [c for c in state.columns if "." in c]
    panels = []
    if rate_flow:
        panels.append(("rate (Mbit/s)", [c for c in ("rate_bps", *[o for o in own if o.endswith("_bps")]) if c in have]))
        panels.append(("RTT (ms)", [c for c in ("rtt_estimate_s", *[o for o in own if o.endswith("_s")]) if c in have]))
    else:
        panels.append(("window (kB)", [c for c in ("cwnd_bytes", "ssthresh_bytes", "in_flight_bytes") if c in have]))
        panels.append(("RTT (ms)", [c for c in ("rtt_sample_s", "srtt_s", "rto_s", "owd_sample_s") if c in have]))
    # The controller's own variables, one panel per unit.
    shown = {v for _, vs in panels for v in vs}
    for suffix, label in (("_s", "ms"), ("_packets", "packets"), ("_bps", "Mbit/s"), ("", "")):
        vs = [o for o in own if o not in shown and o.endswith(suffix)]
        if vs:
            panels.append((f"{vs[0].split('.')[0]} state" + (f" ({label})" if label else ""), vs))
            shown.update(vs)
    return [(y, vs) for y, vs in panels if vs]


def _unit_scale(name: str) -> float:
    return 1e3 if name.endswith("_s") else 1e-3 if name.endswith("_bytes") else 1e-6 if name.endswith("_bps") else 1.0


def plot_flow(run, flow: int, path: str | Path, start: float | None = None, end: float | None = None) -> Path:
    """The figure of one traced flow: its time-sequence graph, then its window
    (or rate), its RTT and its controller's state over the same time axis."""
    tr = run.traces
    packets = _window(tr.packets[tr.packets["flow"] == flow], start, end) if len(tr.packets) else pd.DataFrame()
    rows = _window(tr.flows[tr.flows["flow"] == flow], start, end) if len(tr.flows) else pd.DataFrame()
    if rows.empty and packets.empty:
        traced = sorted(set(tr.flows["flow"]) if len(tr.flows) else [])
        hint = f"traced flows: {', '.join(map(str, traced[:20]))}{' ...' if len(traced) > 20 else ''}" if traced else \
            "the run traced no flow ([trace] flows = [...], or --set 'trace.flows=[{class=\"NAME\"}]')"
        raise TraceError(f"--flow {flow}: nothing traced for this flow" + (" in that time window" if traced and flow in traced
                                                                           else "") + f"; {hint}")
    state = tr.flow(flow)
    if start is not None or end is not None:
        state = state[(state.index >= (start if start is not None else -np.inf)) & (state.index <= (end if end is not None else np.inf))]
    rate_flow = "rate_bps" in state.columns and "cwnd_bytes" not in state.columns
    panels = _flow_panels(state, rate_flow)
    plt = pyplot()
    heights = ([4.0] if len(packets) else []) + [2.0] * len(panels)
    fig, axes = plt.subplots(len(heights), 1, figsize=(11, sum(heights) + 1.0), sharex=True, layout="constrained",
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    axes = list(axes[:, 0])
    if len(packets):
        draw_time_sequence(axes.pop(0), packets)
    for ax, (ylabel, names) in zip(axes, panels):
        tops = []
        for i, name in enumerate(names):
            col = state[name].dropna()
            t, v = col.index.to_numpy(float), col.to_numpy(float) * _unit_scale(name)
            color = COLORS[i % len(COLORS)]
            if name.endswith("_sample_s"):
                _points(ax, t, v, name, color)
            else:
                _step(ax, t, v, name, color, lw=1.2)
            if len(v):
                tops.append((name, float(np.max(v)), float(np.quantile(v, 0.98))))
        ax.set_ylabel(ylabel)
        _robust_top(ax, tops)
        legend(ax, "outside", fontsize=8, frameon=False)
    fig.axes[-1].set_xlabel("simulated time (s)")
    cls = _flow_class(run, flow)
    s = run.summary
    fig.suptitle(f"{plot_label(s.get('name', '?'))}, seed {s.get('seed', '?')}: flow {flow}"
                 + (f" (class {plot_label(cls)})" if cls else ""), fontsize=11)
    return savefig(fig, path, dpi=110)


def _robust_top(ax, tops: list[tuple[str, float, float]]) -> None:
    """From 0 to a little above the lines' 98th percentiles, so that one spike
    (a window grown far beyond the receive window) does not flatten the rest; what
    goes off the axis is said in the panel."""
    ax.set_ylim(bottom=0)
    if not tops:
        return
    top = max(q for _, _, q in tops) * 1.15
    over = [(n, m) for n, m, _ in tops if m > top]
    if top > 0 and over:
        ax.set_ylim(0, top)
        ax.text(0.99, 0.97, "off the axis: " + ", ".join(f"{n} up to {m:,.4g}" for n, m in over),
                transform=ax.transAxes, ha="right", va="top", fontsize=7.5, color="0.3")


def _flow_class(run, flow: int) -> str | None:
    f = run.flows
    hit = f[f["id"] == flow] if "id" in f else f.iloc[:0]
    return str(hit["class"].iloc[0]) if len(hit) else None


def plot_link(run, link: str, path: str | Path, start: float | None = None, end: float | None = None) -> Path:
    """The figure of one traced link: the queue at event resolution (packets, with
    its limit) with every drop and mark, and the wait of each packet it admitted."""
    tr = run.traces
    names = [str(n) for n in run.links["name"]] if "name" in run.links else []
    if link not in names:
        raise TraceError(f"--link {link}: no such link; links are: {', '.join(names)}")
    rows = tr.links[tr.links["link"].astype(str) == link] if len(tr.links) else pd.DataFrame()
    if rows.empty:
        traced = sorted(set(tr.links["link"].astype(str))) if len(tr.links) else []
        raise TraceError(f"--link {link}: the run did not trace this link; "
                         + (f"traced links: {', '.join(traced)}" if traced else
                            "trace it with [trace] links = [\"NAME\"] (or --set 'trace.links=[\"NAME\"]')"))
    rows = _window(rows, start, end)
    ev = rows["event"].astype(str)
    plt = pyplot()
    fig, (q, w) = plt.subplots(2, 1, figsize=(11, 6.2), sharex=True, layout="constrained",
                               gridspec_kw={"height_ratios": [3, 2]})
    t = rows["time_s"].to_numpy(float)
    _step(q, t, rows["queue_packets"].to_numpy(float), "queue (packets waiting)", COLORS[0], lw=1.0)
    row = run.links[run.links["name"] == link].iloc[0]
    if pd.notna(row.get("limit_packets")):
        q.axhline(float(row["limit_packets"]), color="0.3", ls=":", lw=1, label=f"limit ({int(row['limit_packets'])} packets)")
    elif pd.notna(row.get("limit_bytes")):
        q.plot([], [], " ", label=f"limit: {int(row['limit_bytes']):,} bytes")
    for event, marker, color in (("drop", "x", DROP), ("mark", "^", CE)):
        d = rows[ev == event]
        if len(d):
            _points_at(q, d, marker, color, f"{event}s ({len(d):,})")
    q.set_ylabel("queue (packets)")
    q.set_ylim(bottom=0)
    legend(q, "outside", fontsize=8, frameon=False)
    admitted = rows[(ev == "enqueue") | (ev == "mark")]
    for ack, color, label in ((False, COLORS[1], "data"), (True, COLORS[2], "ACKs and feedback")):
        a = admitted[admitted["ack"] == ack]
        if len(a):
            _points(w, a["time_s"].to_numpy(float), a["wait_s"].to_numpy(float) * 1e3, label, color)
    w.set_ylabel("wait in the queue (ms)")
    w.set_xlabel("simulated time (s)")
    w.set_ylim(bottom=0)
    legend(w, "outside", fontsize=8, frameon=False, markerscale=4)
    s = run.summary
    fig.suptitle(f"{plot_label(s.get('name', '?'))}, seed {s.get('seed', '?')}: link {plot_label(link)} "
                 f"({len(rows):,} queue events)", fontsize=11)
    return savefig(fig, path, dpi=110)


def _points_at(ax, rows: pd.DataFrame, marker: str, color, label: str) -> None:
    k = max(1, int(np.ceil(len(rows) / (5 * MAX_POINTS))))
    r = rows.iloc[::k]
    ax.plot(r["time_s"], r["queue_packets"], marker, ms=5, mew=1.2, color=color, linestyle="none",
            label=label + (f", 1 in {k} drawn" if k > 1 else ""), zorder=5)
