"""Cross-check cclab against ns-2.35, the papers' own simulator (`make validate-ns2`).

Every check runs one scenario on arrivals drawn once per seed and replayed by both
simulators (bench/pairing.py), cclab with ns-2's TCP agent semantics (`[tcp] preset
= "ns2"`) and, where a protocol has one, its ns-2 variant (`cc = { variant = "ns2" }`);
ns-2 with the stock agents bench/ns2/ns2run.py maps the scenario to. For a metric m
and seed s, r_s = cclab's m / ns-2's m; r is the mean of r_s over the seeds and h the
half-width of its 95% Student-t interval. A row agrees when [r - h, r + h] meets
[1 - T, 1 + T] (the seeds do not show a difference larger than T); "not shown to
differ" when it does only thanks to h.

  tcp      NewReno, Reno and Sack1 (ns-2's Agent/TCP/Newreno, /Reno, /Sack1 with
           TCPSink or TCPSink/Sack1) on a 10 Mbps, 25 ms link with ns-2's 100-packet
           DropTail: Poisson flows (exponential sizes, mean 1 MB) at load 0.7 with
           ns-2's window_ of 20 packets, and at load 0.5 beside one long-lived flow
           with a window of 100 packets. T = 5% for the mean completion time of all
           flows, 8% in every size bin holding at least 30 flows over the seeds.
  red      the same link with ns-2's RED (Queue/RED: thresholds 5 and 15 packets,
           max_p 0.1, w_q 0.002, gentle, wait, 100 packets), NewReno Poisson at load
           0.6 beside a long flow: drops, mean queue and mean completion time, T = 5%.
  vegas    two Vegas flows (round trips 50 and 100 ms) beside one NewReno flow:
           each flow's share of the bottleneck, T = 10%.
  tfrc     two TFRC flows beside two NewReno flows: TFRC's share, T = 10%.
  tcp_lp   TCP-LP (ns-2's Agent/TCP/Linux with Linux's tcp_lp module) alone on a
           10 Mbps, 50 ms link, and beside NewReno Poisson flows at load 0.3: its
           goodput (T = 10%) and the NewReno flows' mean completion time (T = 5%).
  cbr      CBR and Pareto on/off sources: the CBR flow's rate delivered (T = 0.1%) and
           the mean rate of 20 Pareto sources (T = 10%; the two simulators draw
           different random numbers, so this compares distributions, not runs).

Writes results/validation-ns2/report.md, results.json and ratios.png;
exits 1 when a gating row differs, 2 when ns-2 is missing and cannot be installed.

    make validate-ns2                                  # every section, 5 seeds
    .venv/bin/python bench/validate_ns2.py --only tcp --seeds 2 --duration 300   # quicker
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "ns2"))
import ns2run  # noqa: E402
import pairing  # noqa: E402
from pairing import mean_ci, paired_agrees  # noqa: E402

BINS = [(0, 1e5, "<100KB"), (1e5, 1e6, "100KB-1MB"), (1e6, 3e6, "1-3MB"), (3e6, 1e7, "3-10MB"),
        (1e7, math.inf, ">=10MB")]
MIN_BIN_FLOWS = 30
SECTIONS = ("tcp", "red", "vegas", "tfrc", "tcp_lp", "cbr")
# ns-2.35's Agent/TCP defaults (ns-default.tcl) in cclab's keys, for engines without the
# `ns2` preset: packetSize_ 1000, window_ 20, windowInit_ 2, syn_, singledup_,
# newreno_changes1_, minrto_ 0.2, rtxcur_init_ 3, maxrto_ 60.
NS2_DEFAULTS = {"mss": 1000, "header": 40, "initial_window": 2, "receive_window": "20000B", "handshake": True,
                "limited_transmit": True, "partial_ack_timer": "impatient", "rescue_retransmission": False,
                "min_rto": "200ms", "initial_rto": "3s", "max_rto": "60s"}


def ns2_tcp() -> dict:
    """The cclab side's TCP: the `ns2` preset where the engine has it."""
    import cclab

    try:
        cclab.validate({"duration": "1s", "tcp": {"preset": "ns2"},
                        "links": [{"name": "l", "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms"}],
                        "traffic": [{"name": "x", "type": "long_lived", "src": "a", "dst": "b"}]})
        return {"preset": "ns2"}
    except Exception:
        return dict(NS2_DEFAULTS)


# --- scenarios --------------------------------------------------------------------------

def link(name="bottleneck", a="server", b="client", rate="10Mbps", delay="25ms", limit="99pkts", queue=None):
    """A duplex link; "99pkts" is ns-2's queue-limit 100 (ns2run.queue_settings)."""
    return {"name": name, "from": a, "to": b, "rate": rate, "delay": delay,
            "queue": queue or {"type": "droptail", "limit": limit}}


def scenario(name, duration, links, traffic, tcp, warmup=100.0) -> dict:
    return {"name": name, "duration": f"{duration}s", "warmup": f"{min(warmup, duration / 5)}s",
            "tcp": dict(tcp), "links": links, "traffic": traffic, "record": {"interval": "0s"}}


def poisson(name, load, mean="1MB", src="server", dst="client", **kw) -> dict:
    return {"name": name, "type": "poisson", "src": src, "dst": dst, "load": load,
            "size": {"dist": "exponential", "mean": mean}, **kw}


def long_lived(name, src="server", dst="client", count=1, **kw) -> dict:
    return {"name": name, "type": "long_lived", "src": src, "dst": dst, "count": count, **kw}


# --- metrics of one run -----------------------------------------------------------------

def completion_times(r, cls: str | None = None) -> dict:
    """Mean completion time of the finished flows that arrived after the warm-up, over
    all and per size bin; `n:BIN` the number of flows in the bin."""
    f = r.flows[r.flows["size"].notna() & ~r.flows["warmup"]]
    if cls is not None:
        f = f[f["class"] == cls]
    done = f[f["finished"]]
    out = {"mean completion time (s)": done["completion_time"].mean() if len(done) else math.nan}
    for lo, hi, label in BINS:
        sel = done[(done["size"] >= lo) & (done["size"] < hi)]["completion_time"]
        out[f"CT {label} (s)"] = sel.mean() if len(sel) else math.nan
        out[f"n:CT {label} (s)"] = len(sel)
    return out


def shares(r, classes: list[str]) -> dict:
    thr = {c: r.summary[f"{c}.throughput_bps"] for c in classes}
    total = sum(thr.values())
    return {f"{c} share": thr[c] / total if total else math.nan for c in classes}


def goodput(r, cls: str) -> dict:
    return {f"{cls} goodput (Mbps)": r.summary[f"{cls}.throughput_bps"] / 1e6}


def bottleneck(r, name="bottleneck") -> dict:
    row = r.links.set_index("name").loc[name]
    return {"drops": float(row["drops"]), "mean queue (packets)": float(row["mean_queue_packets"])}


# --- checks -----------------------------------------------------------------------------

@dataclass
class Check:
    """One scenario, the metrics read from each run, and each metric's tolerance (a
    metric without one is information)."""
    section: str
    case: str
    scenario: dict
    metrics: Callable
    tolerance: dict
    per_seed: dict = field(default_factory=dict)


def checks(duration: float, tcp: dict) -> list[Check]:
    """Every check of every section (`duration` of the Poisson scenarios)."""
    out = []
    ct_tol = {"mean completion time (s)": 0.05, **{f"CT {b[2]} (s)": 0.08 for b in BINS}}
    agents = [("newreno", {}, {}), ("reno", {"protocol": "reno"}, {}), ("sack1", {}, {"sack": True})]
    for agent, proto, extra in agents:
        for case, load, long_flow, window in (("w20", 0.7, False, None), ("w100+long", 0.5, True, "100000B")):
            t = dict(tcp, **extra)
            if window:
                t["receive_window"] = window
            traffic = [poisson("short", load, **proto)] + ([long_lived("long", **proto)] if long_flow else [])
            sc = scenario(f"ns2-tcp-{agent}-{case}", duration, [link()], traffic, t)
            out.append(Check("tcp", f"{agent} {case}", sc, lambda r: completion_times(r, "short"), ct_tol))
    red = {"type": "red", "limit": "100pkts", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1,
           "weight": 0.002, "gentle": True, "wait": True}
    sc = scenario("ns2-red", duration, [link(queue=red)], [poisson("short", 0.6), long_lived("long")], tcp)
    out.append(Check("red", "red", sc, lambda r: {**bottleneck(r), **completion_times(r, "short")},
                     {"drops": 0.05, "mean queue (packets)": 0.05, "mean completion time (s)": 0.05}))
    two_rtts = [link("access1", "s1", "router", delay="1ms", limit="1000pkts"),
                link("access2", "s2", "router", delay="26ms", limit="1000pkts"),
                link("bottleneck", "router", "client", delay="24ms")]
    vegas = [long_lived("vegas50", "s1", protocol="vegas", cc={"variant": "ns2"}),
             long_lived("vegas100", "s2", protocol="vegas", cc={"variant": "ns2"}), long_lived("newreno", "s1")]
    sc = scenario("ns2-vegas", 300, two_rtts, vegas, dict(tcp, receive_window="100000B"), warmup=50)
    names = ["vegas50", "vegas100", "newreno"]
    out.append(Check("vegas", "2 vegas + newreno", sc, lambda r: shares(r, names),
                     {f"{c} share": 0.10 for c in names}))
    tfrc = [long_lived("tfrc", count=2, protocol="tfrc", packet_size=1040, cc={"variant": "ns2"}),
            long_lived("newreno", count=2)]
    sc = scenario("ns2-tfrc", 300, [link()], tfrc, dict(tcp, receive_window="100000B"), warmup=50)
    out.append(Check("tfrc", "2 tfrc + 2 newreno", sc, lambda r: shares(r, ["tfrc", "newreno"]),
                     {"tfrc share": 0.10}))
    lp_tcp = dict(tcp, timestamps=True, receive_window="1000000B")
    lp = {"protocol": "tcp_lp", "cc": {"variant": "ns2"}}
    sc = scenario("ns2-tcp_lp-alone", 200, [link(delay="50ms", limit="124pkts")], [long_lived("lp", **lp)],
                  lp_tcp, warmup=20)
    out.append(Check("tcp_lp", "alone", sc, lambda r: goodput(r, "lp"), {"lp goodput (Mbps)": 0.10}))
    sc = scenario("ns2-tcp_lp-reno", duration, [link()], [poisson("reno", 0.3, protocol="reno"),
                                                          long_lived("lp", **lp)], lp_tcp)
    out.append(Check("tcp_lp", "beside reno", sc,
                     lambda r: {**goodput(r, "lp"), **completion_times(r, "reno")},
                     {"lp goodput (Mbps)": 0.10, "mean completion time (s)": 0.05}))
    cbr = [long_lived("cbr", protocol="cbr", cc={"rate": "2Mbps"}, packet_size=500),
           long_lived("pareto", count=20, protocol="pareto",
                      cc={"on": "500ms", "off": "500ms", "shape": 1.5, "rate": "400kbps"}, packet_size=210)]
    sc = scenario("ns2-cbr-pareto", 1000, [link(limit="1000pkts")], cbr, tcp, warmup=10)
    out.append(Check("cbr", "cbr + 20 pareto", sc,
                     lambda r: {"cbr rate (Mbps)": r.summary["cbr.throughput_bps"] / 1e6,
                                "pareto mean rate (Mbps)": r.summary["pareto.throughput_bps"] / 1e6},
                     {"cbr rate (Mbps)": 0.001, "pareto mean rate (Mbps)": 0.10}))
    return out


# --- running ----------------------------------------------------------------------------

def run_check(check: Check, seeds: list[int], pool, ns: str, log) -> None:
    """Both simulators on every seed; per-seed metric values into `check.per_seed`."""
    flows = {s: pairing.flow_list(check.scenario, s) for s in seeds}
    futs = {s: pool.submit(ns2run.run_ns2, check.scenario, s, flows[s], False, None, ns) for s in seeds}
    for s in seeds:
        cc = pairing.run_cclab(check.scenario, s, flows[s])
        t0 = time.perf_counter()
        n2 = futs[s].result()
        check.per_seed[s] = {"cclab": check.metrics(cc), "ns2": check.metrics(n2.result()),
                             "ns2_wall_s": n2.perf.get("wall_s"), "cclab_wall_s": cc.summary.get("wall_time_s")}
        log(f"  {check.section} {check.case}: seed {s} done (waited {time.perf_counter() - t0:.0f} s for ns-2)")


def rows_of(check: Check) -> list[dict]:
    """One row per metric: both means with their intervals, the paired ratio, the verdict."""
    seeds = sorted(check.per_seed)
    first = check.per_seed[seeds[0]]["cclab"]
    rows = []
    for m in first:
        if m.startswith("n:"):
            continue
        a = [check.per_seed[s]["cclab"][m] for s in seeds]
        b = [check.per_seed[s]["ns2"][m] for s in seeds]
        ratios = [x / y for x, y in zip(a, b) if np.isfinite(x) and np.isfinite(y) and y != 0]
        r, h, _ = mean_ci(ratios)
        n = sum(check.per_seed[s]["ns2"].get(f"n:{m}", 0) for s in seeds)
        tol = check.tolerance.get(m)
        gating = tol is not None and (f"n:{m}" not in first or n >= MIN_BIN_FLOWS)
        row = {"section": check.section, "case": check.case, "metric": m, "flows": n if f"n:{m}" in first else None,
               "cclab": mean_ci(a), "ns2": mean_ci(b), "ratio": r, "ratio_ci": h, "tolerance": tol,
               "gating": gating}
        row["ok"] = paired_agrees(r, h, tol) if gating else None
        row["within"] = gating and abs(r - 1) <= tol
        rows.append(row)
    return rows


def verdict(row: dict) -> str:
    if not row["gating"]:
        return "(information)" if row["tolerance"] is None else f"(fewer than {MIN_BIN_FLOWS} flows)"
    if not row["ok"]:
        return "DIFFERS"
    return "agrees" if row["within"] else "not shown to differ"


def fmt(x, ci=None, digits=3) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    s = f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:,.0f}"
    if ci is not None and np.isfinite(ci):
        s += f" ± {ci:.2g}"
    return s


def table(rows: list[dict]) -> str:
    head = ("| section | case | metric | flows | cclab | ns-2 | cclab/ns-2 (paired) | tolerance | verdict |\n"
            "|---|---|---|---:|---:|---:|---:|---:|---|\n")
    body = []
    for r in rows:
        flows = "" if r["flows"] is None else str(r["flows"])
        tol = "" if r["tolerance"] is None else f"{r['tolerance']:.0%}"
        body.append(f"| {r['section']} | {r['case']} | {r['metric']} | {flows} | {fmt(*r['cclab'][:2])} | "
                    f"{fmt(*r['ns2'][:2])} | {fmt(r['ratio'], r['ratio_ci'])} | {tol} | {verdict(r)} |\n")
    return head + "".join(body)


def figure(rows: list[dict], path: Path) -> None:
    """The paired ratio cclab/ns-2 of every gated or informative row, one panel per
    section, with the tolerance band of each row and its 95% interval."""
    from cclab.plotting import legend, pyplot, savefig, series

    plt = pyplot()
    rows = [r for r in rows if np.isfinite(r["ratio"])]
    sections = list(dict.fromkeys(r["section"] for r in rows))
    if not sections:
        return
    fig, axes = plt.subplots(len(sections), 1, figsize=(9.0, 2.1 * len(sections) + 0.6), squeeze=False)
    for ax, sec in zip(axes[:, 0], sections):
        rs = [r for r in rows if r["section"] == sec]
        cases = list(dict.fromkeys(r["case"] for r in rs))
        metrics = list(dict.fromkeys(r["metric"] for r in rs))
        width = 0.8 / len(cases)
        for i, case in enumerate(cases):
            cr = [r for r in rs if r["case"] == case]
            x = np.array([metrics.index(r["metric"]) for r in cr]) + (i - (len(cases) - 1) / 2) * width
            y = np.array([r["ratio"] for r in cr])
            err = np.nan_to_num([r["ratio_ci"] for r in cr])
            st = series(i, line=False)
            ax.errorbar(x, y, yerr=err, fmt=st["marker"], color=st["color"], capsize=2, label=case, ms=4)
            for xx, r in zip(x, cr):
                if r["tolerance"] is not None:
                    ax.fill_between([xx - width / 2, xx + width / 2], 1 - r["tolerance"], 1 + r["tolerance"],
                                    color="0.85", zorder=0)
        ax.axhline(1.0, color="0.4", lw=0.8)
        ax.set_xticks(range(len(metrics)), [m.replace(" (s)", "") for m in metrics], fontsize=7, rotation=12,
                      ha="right")
        ax.set_ylabel("cclab / ns-2", fontsize=8)
        ax.set_title(sec, fontsize=9, loc="left")
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, 0.0), min(hi, 2.5))
        legend(ax, "outside", fontsize=7)
    fig.suptitle("cclab against ns-2.35: paired ratio per metric (grey: tolerance; bars: 95% interval)", fontsize=9)
    fig.tight_layout()
    savefig(fig, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"sections, comma-separated ({', '.join(SECTIONS)})")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1000.0, help="simulated seconds of the Poisson scenarios")
    ap.add_argument("--jobs", type=int, default=2, help="ns-2 runs at once")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "validation-ns2")
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        ap.error(f"--only: unknown section(s) {', '.join(bad)}; expected {', '.join(SECTIONS)}")
    try:
        ns = ns2run.ensure()
    except ns2run.Missing as exc:
        print(f"validate-ns2: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    tcp = ns2_tcp()
    log(f"validate-ns2: cclab with tcp = {tcp}; sections {', '.join(only)}; seeds 1..{args.seeds}")
    todo = [c for c in checks(args.duration, tcp) if c.section in only]
    seeds = list(range(1, args.seeds + 1))
    rows = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for c in todo:
            try:
                run_check(c, seeds, pool, ns, log)
            except (ns2run.Unsupported, ValueError) as exc:
                log(f"  {c.section} {c.case}: not run: {exc}")
                continue
            rows += rows_of(c)
    args.out.mkdir(parents=True, exist_ok=True)
    wall = time.perf_counter() - t0
    text = (f"# cclab against ns-2.35\n\n`make validate-ns2` ({time.strftime('%Y-%m-%d')}): seeds 1..{args.seeds}, "
            f"cclab's tcp = `{json.dumps(tcp)}`, {wall / 60:.1f} min.\n\n" + table(rows))
    (args.out / "report.md").write_text(text)
    (args.out / "results.json").write_text(json.dumps(
        {"tcp": tcp, "seeds": seeds, "wall_s": wall,
         "checks": [{"section": c.section, "case": c.case, "per_seed": c.per_seed} for c in todo]},
        indent=1, default=float))
    figure(rows, args.out / "ratios.png")
    print(text)
    print(f"wrote {args.out}/report.md, results.json, ratios.png")
    return 1 if any(r["gating"] and not r["ok"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
