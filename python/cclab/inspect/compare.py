"""Two saved runs side by side: ``cclab compare DIR DIR``.

The completion-time ratio is computed per class and size bin: the bins are
log-spaced over the sizes of that class's finished flows in both runs together
(plots.SIZE_BINS of them), a bin counts when each run has at least
plots.MIN_PER_BIN flows in it, and each run's mean comes with the half-width of
its 95% Student-t interval (cclab.stats.mean_ci). The ratio r = m_B/m_A of the
two means gets Fieller's interval for independent samples (Fieller 1954; the
set of r with (m_B - r·m_A)² <= h_B² + r²·h_A², each run's half-width h taken
with its own Student-t quantile): the r between
    (m_A·m_B ± sqrt(m_A²·m_B² - (m_A² - h_A²)(m_B² - h_B²))) / (m_A² - h_A²),
asymmetric as a ratio's uncertainty is, and unbounded above (inf) when A's
interval reaches 0 (m_A <= h_A). The first-order (delta-method) interval
r ± r·sqrt((h_A/m_A)² + (h_B/m_B)²) agrees with it while both relative
half-widths are small and is too narrow and symmetric when they are not (a bin
of five heavy-tailed flows).
"""
from __future__ import annotations

import math

import numpy as np

from ..stats import mean_ci
from . import plots


class CompareError(ValueError):
    """The two runs have nothing comparable (no class, or no size bin, in common)."""


#: Per-class rows of the side-by-side table: (label, column of report.class_table).
CLASS_ROWS = [
    ("flows", "flows"),
    ("finished", "finished"),
    ("mean completion (s)", "mean completion (s)"),
    ("median completion (s)", "median (s)"),
    ("p95 completion (s)", "p95 (s)"),
    ("throughput (Mbit/s)", "throughput (Mbps)"),
    ("retransmissions", "retransmissions"),
    ("timeouts", "timeouts"),
]
#: Per-link rows: (label, column of report.link_table).
LINK_ROWS = [
    ("utilization", "utilization"),
    ("drops", "drops"),
    ("drop rate", "drop rate"),
    ("mean queue (pkts)", "mean queue (pkts)"),
    ("max queue (pkts)", "max queue (pkts)"),
]


def _num(v):
    if v is None:
        return math.nan
    v = float(v)
    return v


def compare(a, b, a_label: str = "A", b_label: str = "B") -> dict:
    """The comparison of two runs (Results): per class in common its statistics in
    A and B, per link in common its counters, and the completion-time ratio per
    class and size bin. Raises CompareError when no class is in common."""
    from ..summary import class_table, link_table

    ca, cb = class_table(a).set_index("class"), class_table(b).set_index("class")
    common = [c for c in ca.index if c in cb.index]
    if not common:
        raise CompareError(f"the runs have no traffic class in common (A: {', '.join(map(str, ca.index))}; "
                           f"B: {', '.join(map(str, cb.index))})")
    la, lb = link_table(a).set_index("link"), link_table(b).set_index("link")
    out = {
        "a": {"label": a_label, "name": a.summary.get("name"), "seed": a.summary.get("seed"),
              "simulated_s": a.summary.get("simulated_s"), "warmup_s": a.summary.get("warmup_s")},
        "b": {"label": b_label, "name": b.summary.get("name"), "seed": b.summary.get("seed"),
              "simulated_s": b.summary.get("simulated_s"), "warmup_s": b.summary.get("warmup_s")},
        "classes": {str(c): {label: [_num(ca.at[c, col]), _num(cb.at[c, col])] for label, col in CLASS_ROWS}
                    for c in common},
        "links": {str(l): {label: [_num(la.at[l, col]), _num(lb.at[l, col])] for label, col in LINK_ROWS}
                  for l in la.index if l in lb.index},
        "only_in_a": {"classes": [str(c) for c in ca.index if c not in cb.index],
                      "links": [str(l) for l in la.index if l not in lb.index]},
        "only_in_b": {"classes": [str(c) for c in cb.index if c not in ca.index],
                      "links": [str(l) for l in lb.index if l not in la.index]},
        "ratio": {str(c): ratio_by_size(a, b, c) for c in common},
    }
    return out


def ratio_by_size(a, b, cls) -> list[dict]:
    """Per size bin of class ``cls`` (bins over both runs' sizes), both runs' mean
    completion time with its 95% half-width and the ratio B/A with its own."""
    fa, fb = plots.completion_data(a), plots.completion_data(b)
    fa, fb = fa[fa["class"] == cls], fb[fb["class"] == cls]
    if fa.empty or fb.empty:
        return []
    sa, sb = fa["size"].to_numpy(float), fb["size"].to_numpy(float)
    edges = plots.size_bins(np.concatenate([sa, sb]), plots.SIZE_BINS)
    ra = {r[0]: r for r in plots.binned(sa, fa["completion_time"].to_numpy(float), edges, mean_ci)}
    rb = {r[0]: r for r in plots.binned(sb, fb["completion_time"].to_numpy(float), edges, mean_ci)}
    rows = []
    for lo in sorted(set(ra) & set(rb)):
        _, hi, mid, na, (ma, ha) = ra[lo]
        _, _, _, nb, (mb, hb) = rb[lo]
        rlo, rhi = fieller(ma, ha, mb, hb)
        rows.append({"size_lo_bytes": float(lo), "size_hi_bytes": float(hi), "size_mid_bytes": mid,
                     "a_flows": na, "a_mean_s": ma, "a_ci95_s": ha,
                     "b_flows": nb, "b_mean_s": mb, "b_ci95_s": hb,
                     "ratio": mb / ma, "ratio_lo": rlo, "ratio_hi": rhi})
    return rows


def fieller(ma: float, ha: float, mb: float, hb: float) -> tuple[float, float]:
    """Fieller's interval of m_B/m_A from two independent means and the half-widths
    of their intervals (module docstring); (0 or the lower root, inf) when A's
    interval includes 0; the lower end at least 0 (the means are of positive
    times); (nan, nan) if a half-width is unknown."""
    if math.isnan(ha) or math.isnan(hb):
        return math.nan, math.nan
    a = ma * ma - ha * ha
    if a <= 0:
        return (max(0.0, (mb - hb) / (ma + ha)) if ma + ha > 0 else 0.0), math.inf
    disc = math.sqrt(max(0.0, (ma * mb) ** 2 - a * (mb * mb - hb * hb)))
    # completion times are positive: a lower end below 0 (B's interval reaching 0) is 0
    return max(0.0, (ma * mb - disc) / a), (ma * mb + disc) / a


def require_bins(comparison: dict) -> None:
    """CompareError unless some class has a size bin in common."""
    if not any(comparison["ratio"].values()):
        raise CompareError(
            "no completion-time ratio: no class in common has a size bin with at least "
            f"{plots.MIN_PER_BIN} finished flows in both runs (classes in common: "
            f"{', '.join(comparison['classes'])}; long-lived flows never finish)")


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.4g}"


def _ratio(a: float, b: float) -> str:
    if any(x is None or math.isnan(x) for x in (a, b)) or a == 0:
        return "-"
    return f"{b / a:.3g}"


def format_comparison(c: dict) -> str:
    """The side-by-side table printed by `cclab compare`."""
    a, b = c["a"], c["b"]
    lines = [f"A: {a['label']}  ({a['name']!r}, seed {a['seed']}, {a['simulated_s']:g} s, warm-up {a['warmup_s']:g} s)",
             f"B: {b['label']}  ({b['name']!r}, seed {b['seed']}, {b['simulated_s']:g} s, warm-up {b['warmup_s']:g} s)",
             ""]
    rows = [("", "A", "B", "B/A")]
    for kind, table in (("class", c["classes"]), ("link", c["links"])):
        for name, stats in table.items():
            rows.append((f"{kind} {name}", "", "", ""))
            for label, (x, y) in stats.items():
                rows.append((f"  {label}", _fmt(x), _fmt(y), _ratio(x, y)))
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        lines.append(f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}  {r[3]:>{w[3]}}".rstrip())
    for side in ("a", "b"):
        only = c[f"only_in_{side}"]
        for kind in ("classes", "links"):
            if only[kind]:
                lines.append(f"{kind} only in {side.upper()}: {', '.join(only[kind])}")
    if any(c["ratio"].values()):
        lines.append("")
        lines.append(f"mean completion time per size bin (bins with >= {plots.MIN_PER_BIN} flows in both): "
                     "means ± 95% CI half-widths; B/A [95% CI, Fieller]")
        rows = [("class", "size (MB)", "flows A", "mean A (s)", "flows B", "mean B (s)", "B/A")]
        for cls, bins in c["ratio"].items():
            for r in bins:
                rows.append((cls, f"{r['size_lo_bytes'] / 1e6:.3g}-{r['size_hi_bytes'] / 1e6:.3g}",
                             str(r["a_flows"]), _pm(r["a_mean_s"], r["a_ci95_s"]),
                             str(r["b_flows"]), _pm(r["b_mean_s"], r["b_ci95_s"]), _range(r["ratio"], r["ratio_lo"], r["ratio_hi"])))
        w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            lines.append("  ".join(f"{x:<{w[i]}}" if i == 0 else f"{x:>{w[i]}}" for i, x in enumerate(r)))
    return "\n".join(lines)


def _range(r: float, lo: float, hi: float) -> str:
    return f"{r:.3g}" if math.isnan(lo) else f"{r:.3g} [{lo:.3g}, {hi:.3g}]"


def _pm(m: float, h: float) -> str:
    return f"{m:.3g}" if math.isnan(h) else f"{m:.3g} ± {h:.2g}"
