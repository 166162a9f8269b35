"""Cross-check cclab against ns-3 (`make validate`).

Runs both simulators on
  1. long-lived NewReno flows: one alone, and two with different RTTs sharing a
     bottleneck (throughput, throughput shares, drops, retransmissions, timeouts);
  2. the reference scenario scenarios/background/single-link.toml (short flows at
     load 0.6 beside one long-lived flow) over several seeds;
  3. the same at load 0.3 without the long-lived flow;
and prints, for 2 and 3, the mean completion time of the short flows overall and
per size bin, with 95% confidence intervals over seeds, for both simulators, with
the verdict. Each seed's arrivals (start, size) are drawn once and replayed by
both simulators ("paired"); ns-3 is also run on the arrivals of other seeds
("independent") so that the comparison does not rest on shared arrivals.

Target: every mean within the other simulator's 95% interval or within 10% of
it, whichever is wider; event counts of the single long-flow runs within 10% or
within 1.96 sqrt(a + b) (two Poisson counts), whichever is wider. The tables also go to results/validation/ (report.md,
results.json and a figure).

    make validate                      # or: .venv/bin/python bench/validate.py
    .venv/bin/python bench/validate.py --seeds 3 --duration 500   # quicker
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "ns3"))
import ns3run  # noqa: E402

REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"
BINS = [(0, 1e5, "<100KB"), (1e5, 1e6, "100KB-1MB"), (1e6, 3e6, "1-3MB"), (3e6, 1e7, "3-10MB"),
        (1e7, math.inf, ">=10MB")]
TOL = 0.10
# Two-sided 95% Student t quantiles by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df: int) -> float:
    if df in T975:
        return T975[df]
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def mean_ci(xs) -> tuple[float, float, int]:
    xs = np.asarray([x for x in xs if np.isfinite(x)], float)
    if len(xs) == 0:
        return math.nan, math.nan, 0
    if len(xs) == 1:
        return float(xs[0]), math.nan, 1
    return float(xs.mean()), t975(len(xs) - 1) * float(xs.std(ddof=1)) / math.sqrt(len(xs)), len(xs)


def counts_agree(a: float, b: float) -> bool:
    """Two event counts (drops, timeouts, retransmissions) of one run each: within
    10% or within 1.96 sqrt(a + b), the 95% spread of the difference of two Poisson
    counts, whichever is wider (a single run gives no interval of its own)."""
    return abs(a - b) <= max(TOL * max(abs(a), abs(b)), 1.96 * math.sqrt(abs(a) + abs(b)))


def agrees(a: float, ha: float, b: float, hb: float) -> bool:
    """a within b's interval or within 10% of b, or the other way round."""
    d = abs(a - b)
    wa = max(ha if np.isfinite(ha) else 0.0, TOL * abs(a))
    wb = max(hb if np.isfinite(hb) else 0.0, TOL * abs(b))
    return d <= wa or d <= wb


# --- long-lived flows ------------------------------------------------------------------

def long_scenario(two_rtts: bool, duration: float) -> dict:
    tcp = dict(mss=1460, header=40, initial_window=10, min_rto="200ms")  # unlimited receive window
    if not two_rtts:
        links = [dict(name="bottleneck", to="client", rate="10Mbps", delay="25ms",
                      queue=dict(type="droptail", limit="50pkts"), **{"from": "server"})]
        traffic = [dict(name="long", type="long_lived", src="server", dst="client")]
    else:
        access = dict(rate="100Mbps", queue=dict(type="droptail", limit="1000pkts"))
        links = [dict(name="near", to="router", delay="5ms", **access, **{"from": "s1"}),
                 dict(name="far", to="router", delay="45ms", **access, **{"from": "s2"}),
                 dict(name="bottleneck", to="client", rate="10Mbps", delay="20ms",
                      queue=dict(type="droptail", limit="50pkts"), **{"from": "router"})]
        traffic = [dict(name="rtt50ms", type="long_lived", src="s1", dst="client"),
                   dict(name="rtt130ms", type="long_lived", src="s2", dst="client")]
    return dict(name="validate/long-" + ("two-rtts" if two_rtts else "one"), duration=f"{duration:g}s",
                warmup="0s", seed=1, tcp=tcp, links=links, traffic=traffic, record=dict(interval="0s"))


def long_metrics(flows: pd.DataFrame, links: pd.DataFrame, duration: float) -> dict:
    m = {}
    total = flows["bytes_delivered"].sum()
    for row in flows.itertuples(index=False):
        name = str(row[0])
        m[f"{name}: throughput (Mbps)"] = row.bytes_delivered * 8 / duration / 1e6
        if len(flows) > 1:
            m[f"{name}: share"] = row.bytes_delivered / total
        m[f"{name}: retransmissions"] = row.retransmissions
        m[f"{name}: timeouts"] = row.timeouts
    bn = links[links["name"] == "bottleneck"].iloc[0]
    m["bottleneck: drops"] = int(bn["drops"])
    m["bottleneck: utilization"] = float(bn["utilization"])
    return m


CENSUS: list[dict] = []  # ns-3's fast-recovery entries per case


def census(case: str, perfs: list[dict]) -> None:
    rec = sum(p.get("recoveries", 0) for p in perfs)
    early = sum(p.get("recoveries_before_dupack_threshold", 0) for p in perfs)
    CENSUS.append(dict(case=case, recoveries=rec, early=early, share=early / rec if rec else math.nan))


def run_long(duration: float, sack: bool, binary, pool) -> list[dict]:
    rows = []
    for two in (False, True):
        sc = long_scenario(two, duration)
        fl = ns3run.flow_list(sc, 1)
        fut = pool.submit(ns3run.run_ns3, sc, 1, fl, False, binary)
        c = ns3run.run_cclab(sc, 1, fl)
        n = fut.result()
        census(sc["name"], [n.perf])
        mc = long_metrics(c.flows, c.links, duration)
        mn = long_metrics(n.flows, n.links, duration)
        for k in mc:
            a, b = float(mc[k]), float(mn[k])
            count = k.endswith(("retransmissions", "timeouts", "drops"))
            ok = counts_agree(a, b) if count else agrees(a, math.nan, b, math.nan)
            rows.append(dict(case=sc["name"], metric=k, cclab=a, ns3=b, ok=ok))
    return rows


# --- short flows ------------------------------------------------------------------------

def ct_stats(flows: pd.DataFrame) -> dict:
    """Per-run mean completion time of the finished short flows after warm-up, overall and per bin."""
    f = flows[flows["size"].notna() & ~flows["warmup"].astype(bool)]
    done = f[f["finished"].astype(bool)]
    out = {"all": done["completion_time"].mean(), "unfinished": int((~f["finished"].astype(bool)).sum()),
           "flows": len(f)}
    for lo, hi, label in BINS:
        sel = done[(done["size"] >= lo) & (done["size"] < hi)]["completion_time"]
        out[label] = sel.mean() if len(sel) else math.nan
    return out


def short_scenario(load: float, with_long: bool, duration: float | None):
    from cclab.scenario import load_scenario

    sc, _ = load_scenario(REFERENCE)
    sc = json.loads(json.dumps(sc))
    sc["name"] = f"validate/load-{load:g}" + ("" if with_long else "-no-long")
    for t in sc["traffic"]:
        if t["type"] == "poisson":
            t["load"] = load
    if not with_long:
        sc["traffic"] = [t for t in sc["traffic"] if t["type"] != "long_lived"]
    if duration:
        sc["duration"] = f"{duration:g}s"
    sc.setdefault("record", {})["interval"] = "0s"
    return sc


def run_ns3_seeds(sc: dict, seeds: list[int], sack: bool, binary, pool, log) -> tuple[dict, list[dict]]:
    """ns-3 on each seed's arrivals: per-seed completion-time statistics and perf records."""
    futs = {s: pool.submit(ns3run.run_ns3, sc, s, ns3run.flow_list(sc, s), False, binary) for s in seeds}
    stats, perf = {}, []
    for s, fut in futs.items():
        r = fut.result()
        stats[s] = ct_stats(r.flows)
        perf.append(r.perf)
        log(f"  {sc['name']}: ns-3 seed {s} done ({r.perf['wall_s']:.1f} s wall)")
    return stats, perf


def run_cclab_seeds(sc: dict, seeds: list[int]) -> dict:
    """cclab (with ns-3's TCP behaviour) on each seed's arrivals."""
    return {s: ct_stats(ns3run.run_cclab(sc, s, ns3run.flow_list(sc, s)).flows) for s in seeds}


def short_rows(name: str, mode: str, res: dict, seeds: list[int]) -> list[dict]:
    rows = []
    for key in ["all"] + [b[2] for b in BINS]:
        a, ha, na = mean_ci([res["cclab"][s][key] for s in seeds])
        b, hb, nb = mean_ci([res["ns3"][s][key] for s in res["ns3_seeds"]])
        row = dict(case=name, mode=mode, metric=f"mean CT {key} (s)", cclab=a, cclab_ci=ha, ns3=b, ns3_ci=hb,
                   ok=agrees(a, ha, b, hb))
        if mode == "paired":
            ratios = [res["cclab"][s][key] / res["ns3"][s][key] for s in seeds
                      if np.isfinite(res["cclab"][s][key]) and np.isfinite(res["ns3"][s][key])]
            r, hr, _ = mean_ci(ratios)
            row.update(ratio=r, ratio_ci=hr)
        rows.append(row)
    return rows


# --- output -------------------------------------------------------------------------------

def fmt(x, ci=None, digits=3):
    if x is None or not np.isfinite(x):
        return "—"
    s = f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"
    if ci is not None and np.isfinite(ci):
        s += f" ± {ci:.2g}"
    return s


def table(rows: list[dict], short: bool) -> str:
    if short:
        head = "| case | arrivals | metric | cclab | ns-3 | cclab/ns-3 (paired) | verdict |\n|---|---|---|---:|---:|---:|---|\n"
        body = "".join(
            f"| {r['case']} | {r['mode']} | {r['metric']} | {fmt(r['cclab'], r['cclab_ci'])} | "
            f"{fmt(r['ns3'], r['ns3_ci'])} | {fmt(r.get('ratio'), r.get('ratio_ci'))} | "
            f"{'agrees' if r['ok'] else 'DIFFERS'} |\n" for r in rows)
    else:
        head = "| case | metric | cclab | ns-3 | verdict |\n|---|---|---:|---:|---|\n"
        body = "".join(f"| {r['case']} | {r['metric']} | {fmt(r['cclab'])} | {fmt(r['ns3'])} | "
                       f"{'agrees' if r['ok'] else 'DIFFERS'} |\n" for r in rows)
    return head + body


def figure(short: list[dict], sack: bool, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = sorted({(r["case"], r["mode"]) for r in short})
    fig, axes = plt.subplots(1, len(cases), figsize=(4.2 * len(cases), 3.6), squeeze=False)
    for ax, (case, mode) in zip(axes[0], cases):
        rs = [r for r in short if r["case"] == case and r["mode"] == mode]
        x = np.arange(len(rs))
        for off, side, label in ((-0.2, "cclab", "cclab"), (0.2, "ns3", "ns-3")):
            ax.bar(x + off, [r[side] for r in rs], 0.4, yerr=[np.nan_to_num(r[f"{side}_ci"]) for r in rs],
                   capsize=3, label=label)
        ax.set_xticks(x, [r["metric"].replace("mean CT ", "").replace(" (s)", "") for r in rs], rotation=30)
        ax.set_yscale("log")
        ax.set_title(f"{case.removeprefix('validate/')} ({mode})", fontsize=9)
        ax.set_ylabel("mean completion time (s)")
    axes[0][0].legend()
    fig.suptitle(f"cclab vs ns-3 3.44 ({'SACK on' if sack else 'SACK off'} in ns-3): mean completion time "
                 "per size bin, 95% intervals over seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds per short-flow scenario (default 5)")
    ap.add_argument("--duration", type=float, default=None,
                    help="simulated seconds of the short-flow scenarios (default: the reference's 2000)")
    ap.add_argument("--long-duration", type=float, default=300.0, help="simulated seconds of the long-flow cases")
    ap.add_argument("--no-independent", action="store_true", help="skip the runs on independent arrivals")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ns-3 runs in parallel")
    ap.add_argument("--ns3-sack", action="store_true",
                    help="turn ns-3's SACK on (its default; not the same algorithm as cclab's NewReno)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "validation")
    args = ap.parse_args()
    sack = args.ns3_sack
    if args.seeds < 2:
        ap.error("--seeds must be at least 2 (a confidence interval needs two)")

    log = lambda m: print(m, file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    binary = ns3run.ensure()
    seeds = list(range(1, args.seeds + 1))
    long_rows, short = [], []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        log("long-lived flows ...")
        long_rows = run_long(args.long_duration, sack, binary, pool)
        for load, with_long in ((0.6, True), (0.3, False)):
            sc = short_scenario(load, with_long, args.duration)
            log(f"{sc['name']}: {len(seeds)} seeds ...")
            cc = run_cclab_seeds(sc, seeds)  # on the paired seeds' arrivals, used by both comparisons
            ns, perf = run_ns3_seeds(sc, seeds, sack, binary, pool, log)
            census(f"{sc['name']} (seeds {seeds[0]}..{seeds[-1]})", perf)
            short += short_rows(sc["name"], "paired", dict(cclab=cc, ns3=ns, ns3_seeds=seeds), seeds)
            if not args.no_independent:
                other = [s + 1000 for s in seeds]
                ns_i, _ = run_ns3_seeds(sc, other, sack, binary, pool, log)
                short += short_rows(sc["name"], "independent", dict(cclab=cc, ns3=ns_i, ns3_seeds=other), seeds)
    wall = time.perf_counter() - t0

    ok = all(r["ok"] for r in long_rows + short)
    text = (f"# cclab vs ns-3 3.44{' (ns-3 with SACK)' if sack else ''}\n\n"
            f"Seeds {seeds[0]}..{seeds[-1]} (independent ns-3 arrivals: seeds +1000); 95% confidence "
            f"intervals over seeds; verdict: within the other's interval or within {TOL:.0%}.\n\n"
            "## Long-lived flows\n\n" + table(long_rows, False) +
            "\n## Short flows: mean completion time\n\n" + table(short, True) +
            "\n## ns-3's fast-recovery entries\n\nRFC 5681 enters fast recovery on the third duplicate "
            "ACK; cclab never does otherwise. ns-3 counts:\n\n| case | recoveries | on fewer than 3 "
            "duplicate ACKs | share |\n|---|---:|---:|---:|\n" +
            "".join(f"| {c['case']} | {c['recoveries']:,} | {c['early']:,} | {fmt(100 * c['share'])}% |\n"
                    for c in CENSUS) +
            f"\nOverall: {'every comparison agrees' if ok else 'SOME COMPARISONS DIFFER'} "
            f"({wall:.0f} s wall)\n")
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text)
    (args.out / "results.json").write_text(json.dumps(dict(long=long_rows, short=short, ns3_recoveries=CENSUS,
                                                           ok=ok), indent=1,
                                                      default=float))
    try:
        figure(short, sack, args.out / "completion-times.png")
    except Exception as exc:  # a figure is a convenience; the tables are the result
        log(f"figure not drawn: {exc}")
    log(f"wrote {args.out}/report.md, results.json, completion-times.png")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
