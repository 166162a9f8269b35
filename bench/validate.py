"""Cross-check cclab against ns-3 (`make validate`).

Three comparisons, each on arrivals drawn once per seed and replayed by both
simulators ("paired"), with 95% confidence intervals over seeds:

  headline   cclab with SACK (RFC 6675), PRR (RFC 9937) and timestamps against
             ns-3 3.44 with its defaults (SACK, PRR, timestamps): the reference
             scenario scenarios/background/single-link.toml (NewReno flows at load
             0.6 beside one long-lived flow) and the same at load 0.3 without the
             long flow; long-lived flows alone (one flow; two flows of different
             RTTs). Target: the mean completion time within 5% of ns-3's, overall
             and in every size bin. Seeds 1..5, 2000 simulated s.
  sack-off   the same scenarios with SACK and timestamps off in both, the
             comparison that shows ns-3's non-SACK recovery (docs/validation.md).
             Reported with the 10% rules below; it does not decide the exit status.
             Seeds 1..3 (ns-3 is slowest without SACK).
  mixed      the reference link with a NewReno Poisson class (load 0.3, the
             reference's sizes), a LEDBAT or TCP-LP Poisson class (load 0.3, the
             same sizes) and one long-lived NewReno flow: LEDBAT as ns-3's
             TcpLedbat with its defaults, the same with a 25 ms target, and TCP-LP
             as ns-3's TcpLp; SACK, PRR and timestamps as ns-3's defaults (TcpLedbat
             and TcpLp need timestamps). Target: each class's mean completion time
             within 10% of ns-3's (per size bin: reported, no verdict). Seeds 1..5,
             1000 simulated s (warm-up 100 s), to keep `make validate` near 25 minutes.
  red        RED against ns-3's RedQueueDisc: one 10 Mbps / 20 ms link, RED with
             min_th 5, max_th 15 packets, max_p 0.1 (LInterm 10), w_q 0.002,
             gentle, wait, a 100-packet buffer; NewReno Poisson flows (load 0.6,
             the reference's sizes) beside one long-lived NewReno flow; dropping
             (ns-3's TCP defaults) and marking (ECN, TcpClassicRecovery: the
             harness refuses ECN with PRR). Target: the bottleneck's mean queue,
             its drops (marks with ECN) and the mean completion time each within
             5% of ns-3's (paired; the size bins and the other counter:
             information). Seeds 1..5, 600 simulated s (warm-up 100 s).

Verdicts.
  * Paired rule (headline, mixed), for a target tolerance T (5% or 10%): for each
    seed s, r_s = cclab's mean / ns-3's mean on seed s's arrivals; r = mean of
    r_s, h = the half-width of its 95% Student-t interval (n - 1 degrees of
    freedom). The row agrees when the interval [r - h, r + h] meets [1 - T, 1 + T],
    i.e. |r - 1| <= T + h: the seeds do not show a difference larger than T. The
    report also says whether r itself is within T.
  * 10% rule (sack-off, independent arrivals): each mean within the other
    simulator's 95% interval or within 10% of it, whichever is wider.
  * Counts of the single long-flow runs (drops, timeouts, retransmissions): within
    10% or within 1.96 sqrt(a + b), the 95% spread of the difference of two Poisson
    counts, whichever is wider; throughputs, shares and utilization within 10%.

Writes results/validation/ (headline), results/validation-sack-off/,
results/validation-mixed/ and results/validation-red/, each with report.md,
results.json and a figure; exits non-zero when a headline, mixed or red verdict
fails.

    make validate                      # or: .venv/bin/python bench/validate.py
    .venv/bin/python bench/validate.py --only headline --seeds 3 --duration 500   # quicker
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
from pairing import mean_ci, paired_agrees  # noqa: E402

REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"
BINS = [(0, 1e5, "<100KB"), (1e5, 1e6, "100KB-1MB"), (1e6, 3e6, "1-3MB"), (3e6, 1e7, "3-10MB"),
        (1e7, math.inf, ">=10MB")]
TOL = 0.10           # the 10% rules
HEADLINE_TOL = 0.05  # the headline's paired rule
MIXED_TOL = 0.10     # the mixed cross-checks' paired rule
# ns-3 3.44's defaults (TcpSocketBase Sack and Timestamp true, TcpL4Protocol
# RecoveryType TcpPrrRecovery), put on top of each scenario's tcp table.
NS3_DEFAULT_TCP = {"sack": True, "recovery": "prr", "timestamps": True}
SACK_OFF_TCP = {"sack": False, "recovery": "halve", "timestamps": False}
# The mixed cross-checks: (name, protocol of the second Poisson class, its cc).
MIXED = [("ledbat-ns3", "ledbat", {"variant": "ns3"}),
         ("ledbat-ns3-25ms", "ledbat", {"variant": "ns3", "target": "25ms"}),
         ("tcp_lp-ns3", "tcp_lp", {"variant": "ns3"})]
SECTIONS = ("headline", "sack-off", "mixed", "red")
RED_TOL = 0.05       # the RED cross-check's paired rule (issue 14)
# The RED cross-check's queue: ns-3-like parameters (RedQueueDisc's MinTh 5, MaxTh 15,
# QW 0.002, MeanPktSize 500, Gentle, Wait defaults; LInterm 10 instead of 50), and a
# buffer large enough that RED, not overflow, decides (forced drops from 2 max_th = 30).
RED_QUEUE = dict(type="red", limit="100pkts", min_th="5pkts", max_th="15pkts", max_p=0.1, weight=0.002,
                 mean_packet_size="500B", gentle=True, wait=True)
# The RED cases: (name, ECN, tcp). ECN needs classic recovery in ns-3 (ns3run refuses PRR).
RED_CASES = [("red", False, NS3_DEFAULT_TCP),
             ("red-ecn", True, dict(NS3_DEFAULT_TCP, recovery="halve", ecn=True))]
# Per-run link metrics of the bottleneck, and their labels in the tables.
LINK_KEYS = {"queue": "bottleneck mean queue (packets)", "drops": "bottleneck drops",
             "marks": "bottleneck marks"}
def counts_agree(a: float, b: float) -> bool:
    """Two event counts (drops, timeouts, retransmissions) of one run each: within
    10% or within 1.96 sqrt(a + b), the 95% spread of the difference of two Poisson
    counts, whichever is wider (a single run gives no interval of its own)."""
    return abs(a - b) <= max(TOL * max(abs(a), abs(b)), 1.96 * math.sqrt(abs(a) + abs(b)))


def agrees(a: float, ha: float, b: float, hb: float) -> bool:
    """The 10% rule: a within b's interval or within 10% of b, or the other way round."""
    d = abs(a - b)
    wa = max(ha if np.isfinite(ha) else 0.0, TOL * abs(a))
    wb = max(hb if np.isfinite(hb) else 0.0, TOL * abs(b))
    return d <= wa or d <= wb


# --- scenarios ---------------------------------------------------------------------------

def with_tcp(sc: dict, tcp: dict) -> dict:
    sc = json.loads(json.dumps(sc))
    sc.setdefault("tcp", {}).update(tcp)
    return sc


def long_scenario(two_rtts: bool, duration: float, tcp: dict) -> dict:
    base = dict(mss=1460, header=40, initial_window=10, min_rto="200ms")  # unlimited receive window
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
    return dict(name="long-" + ("two-rtts" if two_rtts else "one"), duration=f"{duration:g}s",
                warmup="0s", seed=1, tcp=dict(base, **tcp), links=links, traffic=traffic,
                record=dict(interval="0s"))


def _reference() -> dict:
    from cclab.scenario import load_scenario

    sc, _ = load_scenario(REFERENCE)
    sc = json.loads(json.dumps(sc))
    sc.setdefault("record", {})["interval"] = "0s"
    return sc


def short_scenario(load: float, with_long: bool, duration: float | None, tcp: dict) -> dict:
    sc = _reference()
    sc["name"] = f"load-{load:g}" + (" + long flow" if with_long else ", no long flow")
    for t in sc["traffic"]:
        if t["type"] == "poisson":
            t["load"] = load
    if not with_long:
        sc["traffic"] = [t for t in sc["traffic"] if t["type"] != "long_lived"]
    if duration:
        sc["duration"] = f"{duration:g}s"
    return with_tcp(sc, tcp)


def mixed_scenario(name: str, protocol: str, cc: dict, duration: float | None, tcp: dict) -> dict:
    """The reference link: NewReno Poisson (load 0.3) + `protocol` Poisson (load 0.3),
    both with the reference's sizes, + one long-lived NewReno flow."""
    sc = _reference()
    sc["name"] = f"mixed {name}"
    short = next(t for t in sc["traffic"] if t["type"] == "poisson")
    long = next(t for t in sc["traffic"] if t["type"] == "long_lived")
    sc["traffic"] = [dict(short, name="newreno", protocol="newreno", load=0.3),
                     dict(short, name=protocol, protocol=protocol, cc=dict(cc), load=0.3),
                     dict(long, name="long")]
    if duration:
        sc["duration"] = f"{duration:g}s"
    return with_tcp(sc, tcp)


def red_scenario(name: str, ecn: bool, duration: float, tcp: dict) -> dict:
    """One 10 Mbps / 20 ms RED link (`RED_QUEUE`, marking with `ecn`): NewReno Poisson
    flows at load 0.6 with the reference's sizes, and one long-lived NewReno flow."""
    sc = _reference()
    sc["name"] = name
    link = sc["links"][0]
    link.update(delay="20ms", queue=dict(RED_QUEUE, ecn=ecn))
    for t in sc["traffic"]:
        if t["type"] == "poisson":
            t["load"] = 0.6
    sc["duration"] = f"{duration:g}s"
    return with_tcp(sc, tcp)


# --- measurements -----------------------------------------------------------------------

def ct_stats(flows: pd.DataFrame) -> dict:
    """Per-run mean completion time of the finished short flows after warm-up, overall
    and per bin, for all classes together ("*") and for each class."""
    f = flows[flows["size"].notna() & ~flows["warmup"].astype(bool)]
    out = {}
    for cls, g in [("*", f)] + [(str(c), g) for c, g in f.groupby("class", observed=True)]:
        done = g[g["finished"].astype(bool)]
        s = {"all": done["completion_time"].mean() if len(done) else math.nan,
             "unfinished": int((~g["finished"].astype(bool)).sum()), "flows": len(g),
             "timeouts": int(g["timeouts"].sum()), "retransmissions": int(g["retransmissions"].sum())}
        for lo, hi, label in BINS:
            sel = done[(done["size"] >= lo) & (done["size"] < hi)]["completion_time"]
            s[label] = sel.mean() if len(sel) else math.nan
        out[cls] = s
    return out


def link_stats(links: pd.DataFrame, link: str = "bottleneck") -> dict:
    """A link's mean queue (time average of the packets waiting), drops and marks after
    the warm-up, keyed as `LINK_KEYS`."""
    row = links[links["name"] == link].iloc[0]
    return {"queue": float(row["mean_queue_packets"]), "drops": float(row["drops"]), "marks": float(row["marks"])}


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


class Runner:
    """Queues every ns-3 run at once (they dominate the time) and runs cclab meanwhile."""

    def __init__(self, pool, binary, log, keep: Path | None = None, reuse: Path | None = None):
        self.pool, self.binary, self.log, self.keep, self.reuse = pool, binary, log, keep, reuse

    def submit(self, sc: dict, seeds: list[int]):
        flows = {s: ns3run.flow_list(sc, s) for s in seeds}
        futs = {s: self.pool.submit(self._ns3, sc, s, flows[s]) for s in seeds}
        return flows, futs

    @staticmethod
    def _stem(sc, seed) -> str:
        return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in sc["name"]) + f"-seed{seed}"

    def _kept(self, sc, seed):
        """A run kept by --keep-ns3 of exactly this scenario and seed, or None. Its links
        table and perf are there only if that run wrote them (older keeps have flows only)."""
        stem = self.reuse / self._stem(sc, seed)
        spec = stem.with_suffix(".scenario.json")
        if not spec.exists() or spec.read_text() != json.dumps(sc, indent=1):
            return None
        f = pd.read_csv(stem.with_suffix(".csv"))
        for col in ("finished", "warmup"):
            f[col] = f[col].astype(bool)
        links = stem.with_suffix(".links.csv")
        perf = stem.with_suffix(".perf.json")
        return ns3run.Ns3Result(flows=f, links=pd.read_csv(links) if links.exists() else pd.DataFrame(),
                                perf=json.loads(perf.read_text()) if perf.exists() else {})

    def _ns3(self, sc, seed, flows):
        if self.reuse is not None and (r := self._kept(sc, seed)) is not None:
            self.log(f"  {sc['name']}: ns-3 seed {seed} reused from {self.reuse}")
            return r
        r = ns3run.run_ns3(sc, seed, flows, False, self.binary)
        self.log(f"  {sc['name']}: ns-3 seed {seed} done ({r.perf['wall_s']:.0f} s)")
        if self.keep is not None:
            # ns-3's tables, to compare cclab variants with later (or --reuse-ns3) without ns-3.
            stem = self.keep / self._stem(sc, seed)
            self.keep.mkdir(parents=True, exist_ok=True)
            r.flows.to_csv(stem.with_suffix(".csv"), index=False)
            r.links.to_csv(stem.with_suffix(".links.csv"), index=False)
            stem.with_suffix(".perf.json").write_text(json.dumps(r.perf))
            stem.with_suffix(".scenario.json").write_text(json.dumps(sc, indent=1))
        return r

    @staticmethod
    def cclab(sc: dict, flows: dict):
        return {s: ns3run.run_cclab(sc, s, f) for s, f in flows.items()}


def census(case: str, perfs: list[dict]) -> dict:
    if not all("recoveries" in p for p in perfs):  # reused runs kept without perf.json
        return dict(case=case, recoveries=math.nan, early=math.nan, share=math.nan)
    rec = sum(p.get("recoveries", 0) for p in perfs)
    early = sum(p.get("recoveries_before_dupack_threshold", 0) for p in perfs)
    return dict(case=case, recoveries=rec, early=early, share=early / rec if rec else math.nan)


def ct_rows(case: str, mode: str, cc: dict, ns: dict, cls: str, keys: list[str], rule: str,
            tol: float, gate_keys: set[str]) -> list[dict]:
    """Rows of mean completion times (per-seed statistics `cc` and `ns` of class `cls`)."""
    rows = []
    for key in keys:
        a, ha, _ = mean_ci([cc[s][cls][key] for s in cc])
        b, hb, _ = mean_ci([ns[s][cls][key] for s in ns])
        metric = LINK_KEYS.get(key, f"mean CT {key} (s)")
        row = dict(case=case, mode=mode, cls=cls, metric=metric, key=key, cclab=a, cclab_ci=ha,
                   ns3=b, ns3_ci=hb, rule=rule, tol=tol, gating=key in gate_keys)
        if mode == "paired":
            ratios = [cc[s][cls][key] / ns[s][cls][key] for s in cc
                      if np.isfinite(cc[s][cls][key]) and np.isfinite(ns[s][cls][key]) and ns[s][cls][key] != 0]
            r, hr, _ = mean_ci(ratios)
            row.update(ratio=r, ratio_ci=hr, ratio_within=bool(np.isfinite(r) and abs(r - 1) <= tol))
        row["ok"] = paired_agrees(row["ratio"], row["ratio_ci"], tol) if rule == "paired" else agrees(a, ha, b, hb)
        if not (np.isfinite(a) and np.isfinite(b)):
            row.update(ok=True, gating=False, empty=True)  # no finished flow in this bin
        elif a == 0 and b == 0:
            row.update(ok=True, gating=False, zero=True)  # e.g. no marks without ECN
        rows.append(row)
    return rows


def run_long(runner: Runner, duration: float, tcp: dict, label: str, gating: bool):
    """Submit the two long-flow cases; returns a function that collects their rows."""
    jobs = []
    for two in (False, True):
        sc = long_scenario(two, duration, tcp)
        flows, futs = runner.submit(sc, [1])
        jobs.append((sc, flows, futs))

    def collect():
        rows, cens = [], []
        for sc, flows, futs in jobs:
            c = runner.cclab(sc, flows)[1]
            n = futs[1].result()
            cens.append(census(f"{sc['name']} ({label})", [n.perf]))
            mc, mn = long_metrics(c.flows, c.links, duration), long_metrics(n.flows, n.links, duration)
            for k in mc:
                a, b = float(mc[k]), float(mn[k])
                count = k.endswith(("retransmissions", "timeouts", "drops"))
                ok = counts_agree(a, b) if count else agrees(a, math.nan, b, math.nan)
                rows.append(dict(case=sc["name"], metric=k, cclab=a, ns3=b, ok=ok, gating=gating))
        return rows, cens
    return collect


def run_red(runner: Runner, duration: float, seeds: list[int]):
    """Submit the RED cases; returns a function that collects rows, census, per-seed data.
    Gating: the bottleneck's mean queue, its drops (marks with ECN), the overall mean
    completion time; the size bins and the other counter are information."""
    jobs = []
    for name, ecn, tcp in RED_CASES:
        sc = red_scenario(name, ecn, duration, tcp)
        flows, futs = runner.submit(sc, seeds)
        jobs.append((sc, ecn, flows, futs))

    def collect():
        rows, cens, raw = [], [], {}
        keys = list(LINK_KEYS) + ["all"] + [b[2] for b in BINS]
        for sc, ecn, flows, futs in jobs:
            cc, ns = {}, {}
            for s, r in runner.cclab(sc, flows).items():
                cc[s] = ct_stats(r.flows)
                cc[s]["*"].update(link_stats(r.links))
            ns_res = {s: f.result() for s, f in futs.items()}
            for s, r in ns_res.items():
                ns[s] = ct_stats(r.flows)
                ns[s]["*"].update(link_stats(r.links))
            cens.append(census(f"{sc['name']} (seeds {seeds[0]}..{seeds[-1]})", [r.perf for r in ns_res.values()]))
            gate = {"queue", "all", "marks" if ecn else "drops"}
            rows += ct_rows(sc["name"], "paired", cc, ns, "*", keys, "paired", RED_TOL, gate)
            raw[sc["name"]] = dict(cclab=cc, ns3=ns)
        return rows, cens, raw
    return collect


def run_short(runner: Runner, scs: list[dict], seeds: list[int], independent: bool, rule: str, tol: float,
              gate_keys: set[str], classes: str = "*"):
    """Submit short-flow scenarios; returns a function that collects rows, census, per-seed data."""
    jobs = []
    for sc in scs:
        flows, futs = runner.submit(sc, seeds)
        ind = runner.submit(sc, [s + 1000 for s in seeds])[1] if independent else None
        jobs.append((sc, flows, futs, ind))

    def collect():
        rows, cens, raw = [], [], {}
        keys = ["all"] + [b[2] for b in BINS]
        for sc, flows, futs, ind in jobs:
            cc = {s: ct_stats(r.flows) for s, r in runner.cclab(sc, flows).items()}
            ns_res = {s: f.result() for s, f in futs.items()}
            ns = {s: ct_stats(r.flows) for s, r in ns_res.items()}
            cens.append(census(f"{sc['name']} (seeds {seeds[0]}..{seeds[-1]})", [r.perf for r in ns_res.values()]))
            names = ["*"] if classes == "*" else [c for c in cc[seeds[0]] if c != "*"]
            for cls in names:
                rows += ct_rows(sc["name"], "paired", cc, ns, cls, keys, rule, tol, gate_keys)
            if ind is not None:
                nsi = {s: ct_stats(f.result().flows) for s, f in ind.items()}
                rows += ct_rows(sc["name"], "independent", cc, nsi, "*", keys, "10%", TOL, set())
            raw[sc["name"]] = dict(cclab=cc, ns3=ns)
        return rows, cens, raw
    return collect


# --- output -------------------------------------------------------------------------------

def fmt(x, ci=None, digits=3):
    if x is None or not np.isfinite(x):
        return "—"
    s = f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"
    if ci is not None and np.isfinite(ci):
        s += f" ± {ci:.2g}"
    return s


def verdict(r: dict) -> str:
    if r.get("empty"):
        return "no flows"
    if r.get("zero"):
        return "none in either"
    if not r.get("gating", True) and r.get("rule") == "paired":
        return "(information)"
    word = "agrees" if r["ok"] else "DIFFERS"
    if r.get("rule") == "paired" and r["ok"] and not r.get("ratio_within", True):
        word = "not shown to differ"
    return word if r.get("gating", True) else word.lower() + " (not gating)"


def long_table(rows: list[dict]) -> str:
    head = "| case | metric | cclab | ns-3 | verdict |\n|---|---|---:|---:|---|\n"
    return head + "".join(f"| {r['case']} | {r['metric']} | {fmt(r['cclab'])} | {fmt(r['ns3'])} | {verdict(r)} |\n"
                          for r in rows)


def ct_table(rows: list[dict], with_class: bool = False) -> str:
    cls_h, cls_s = ("class | ", "---|") if with_class else ("", "")
    head = (f"| case | {cls_h}arrivals | metric | cclab | ns-3 | cclab/ns-3 (paired) | verdict |\n"
            f"|---|{cls_s}---|---|---:|---:|---:|---|\n")
    body = "".join(
        f"| {r['case']} | {(r['cls'] + ' | ') if with_class else ''}{r['mode']} | {r['metric']} | "
        f"{fmt(r['cclab'], r['cclab_ci'])} | {fmt(r['ns3'], r['ns3_ci'])} | "
        f"{fmt(r.get('ratio'), r.get('ratio_ci'))} | {verdict(r)} |\n" for r in rows)
    return head + body


def census_table(cens: list[dict]) -> str:
    return ("| case | recoveries | on fewer than 3 duplicate ACKs | share |\n|---|---:|---:|---:|\n" +
            "".join(f"| {c['case']} | {fmt(c['recoveries'])} | {fmt(c['early'])} | {fmt(100 * c['share'])}% |\n"
                    for c in cens))


def figure(rows: list[dict], title: str, path: Path, by_class: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["mode"] == "paired" and r["key"] not in LINK_KEYS]
    panels = list(dict.fromkeys((r["case"], r["cls"]) for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.6), squeeze=False)
    for ax, (case, cls) in zip(axes[0], panels):
        rs = [r for r in rows if r["case"] == case and r["cls"] == cls]
        x = np.arange(len(rs))
        for off, side, label in ((-0.2, "cclab", "cclab"), (0.2, "ns3", "ns-3")):
            ax.bar(x + off, [r[side] for r in rs], 0.4, yerr=[np.nan_to_num(r[f"{side}_ci"]) for r in rs],
                   capsize=3, label=label)
        ax.set_xticks(x, [r["key"] for r in rs], rotation=30)
        ax.set_yscale("log")
        ax.set_title(case + (f": {cls}" if by_class else ""), fontsize=9)
        ax.set_ylabel("mean completion time (s)")
    axes[0][0].legend()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out: Path, text: str, data: dict, fig) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    (out / "results.json").write_text(json.dumps(data, indent=1, default=float))
    try:
        fig()
    except Exception as exc:  # a figure is a convenience; the tables are the result
        print(f"figure not drawn: {exc}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds per short-flow scenario (default 5)")
    ap.add_argument("--duration", type=float, default=None,
                    help="simulated seconds of the headline and sack-off short-flow scenarios (default: the "
                         "reference's 2000)")
    ap.add_argument("--mixed-duration", type=float, default=1000.0,
                    help="simulated seconds of the mixed scenarios (default 1000, warm-up 100: the time budget)")
    ap.add_argument("--sack-off-seeds", type=int, default=3,
                    help="seeds of the sack-off contrast (default 3: it has no verdict, and ns-3 is slowest there)")
    ap.add_argument("--red-duration", type=float, default=600.0,
                    help="simulated seconds of the RED cases (default 600, warm-up 100: the time budget)")
    ap.add_argument("--long-duration", type=float, default=300.0, help="simulated seconds of the long-flow cases")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections to run, of {', '.join(SECTIONS)} (default: all)")
    ap.add_argument("--independent", action="store_true",
                    help="also run ns-3 on independent arrivals (seeds + 1000) in the headline and sack-off sections")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ns-3 runs in parallel")
    ap.add_argument("--out", type=Path, default=ROOT / "results", help="folder for validation*/")
    ap.add_argument("--keep-ns3", type=Path, default=None,
                    help="also write every ns-3 run's flows and links tables, perf and scenario to this folder")
    ap.add_argument("--reuse-ns3", type=Path, default=None,
                    help="take ns-3's tables from this --keep-ns3 folder where it holds a run of exactly the same "
                         "scenario and seed, instead of running ns-3 again")
    args = ap.parse_args()
    if args.seeds < 2:
        ap.error("--seeds must be at least 2 (a confidence interval needs two)")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if bad := [s for s in only if s not in SECTIONS]:
        ap.error(f"unknown section(s) {bad}; expected some of {SECTIONS}")

    log = lambda m: print(m, file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    binary = ns3run.ensure()
    seeds = list(range(1, args.seeds + 1))
    gate_all = {"all"} | {b[2] for b in BINS}
    pending = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runner = Runner(pool, binary, log, args.keep_ns3, args.reuse_ns3)
        # Submit everything first (the pool runs ns-3 in that order), longest cases first.
        if "mixed" in only:
            pending["mixed"] = run_short(runner, [mixed_scenario(n, p, cc, args.mixed_duration, NS3_DEFAULT_TCP)
                                                  for n, p, cc in MIXED], seeds, False, "paired", MIXED_TOL,
                                         {"all"}, classes="each")
        if "red" in only:
            pending["red"] = run_red(runner, args.red_duration, seeds)
        for sec, tcp in (("headline", NS3_DEFAULT_TCP), ("sack-off", SACK_OFF_TCP)):
            if sec in only:
                gating = sec == "headline"
                scs = [short_scenario(0.6, True, args.duration, tcp), short_scenario(0.3, False, args.duration, tcp)]
                sec_seeds = seeds if gating else seeds[:max(2, min(args.sack_off_seeds, len(seeds)))]
                pending[sec] = (run_short(runner, scs, sec_seeds, args.independent,
                                          "paired" if gating else "10%", HEADLINE_TOL if gating else TOL,
                                          gate_all if gating else set()),
                                run_long(runner, args.long_duration, tcp, sec, gating))
        log(f"queued every ns-3 run ({args.jobs} at a time) ...")
        results = {}
        for sec in SECTIONS:
            if sec not in pending:
                continue
            if sec in ("mixed", "red"):
                rows, cens, raw = pending[sec]()
                results[sec] = dict(short=rows, long=[], census=cens, raw=raw)
            else:
                rows, cens, raw = pending[sec][0]()
                lrows, lcens = pending[sec][1]()
                results[sec] = dict(short=rows, long=lrows, census=lcens + cens, raw=raw)
            log(f"{sec}: done ({time.perf_counter() - t0:.0f} s)")
    wall = time.perf_counter() - t0

    status = {}
    for sec, res in results.items():
        gated = [r for r in res["short"] + res["long"] if r.get("gating")]
        status[sec] = all(r["ok"] for r in gated) if gated else None
    ok = all(v for v in status.values() if v is not None)
    summary = "".join(f"* {sec}: " + ("every verdict agrees" if v else "SOME VERDICTS FAIL" if v is False
                                       else "no verdicts (contrast only)") + "\n" for sec, v in status.items())
    header = (f"Seeds {seeds[0]}..{seeds[-1]} (sack-off: the first {args.sack_off_seeds}), paired arrivals (ns-3 replays the flows cclab draws for each "
              f"seed){'; independent: ns-3 on seeds + 1000' if args.independent else ''}; ± is the half-width of "
              "the 95% interval over seeds. Made by `bench/validate.py` (see its docstring for the rules) in "
              f"{wall:.0f} s of wall time.\n\n## Status\n\n{summary}\n")
    rules = {
        "headline": f"Verdict: the 95% interval of the paired ratio meets [{1 - HEADLINE_TOL:g}, "
                    f"{1 + HEADLINE_TOL:g}] (\"not shown to differ\": the interval meets it, the ratio itself is outside). Long-lived flows: "
                    "the 10% and Poisson-count rules.",
        "sack-off": "No verdict gates: ns-3 without SACK does not run RFC 6582 (docs/validation.md). The "
                    "10% rule is shown for reference.",
        "mixed": f"Verdict on each class's overall mean: the 95% interval of the paired ratio meets "
                 f"[{1 - MIXED_TOL:g}, {1 + MIXED_TOL:g}]; the size bins are information.",
        "red": f"Verdict on the bottleneck's mean queue, its drops (marks with ECN) and the overall mean "
               f"completion time: the 95% interval of the paired ratio meets [{1 - RED_TOL:g}, {1 + RED_TOL:g}]; "
               "the size bins and the other counter are information. Queue: "
               + ", ".join(f"{k} = {v}" for k, v in RED_QUEUE.items()) + " (ecn as the case says).",
    }
    titles = {"headline": "cclab with SACK, PRR, timestamps vs ns-3 3.44 with its defaults",
              "sack-off": "SACK and timestamps off in both (ns-3's non-SACK recovery)",
              "mixed": "mixed classes on the reference link (SACK, PRR, timestamps)",
              "red": "RED (RedQueueDisc), dropping and marking"}
    dirs = {"headline": "validation", "sack-off": "validation-sack-off", "mixed": "validation-mixed",
            "red": "validation-red"}
    for sec, res in results.items():
        dur = {"mixed": args.mixed_duration, "red": args.red_duration}.get(sec, args.duration) or 2000
        text = (f"# cclab vs ns-3 3.44: {titles[sec]}\n\n" + header +
                f"Short-flow scenarios: {dur:g} simulated s (warm-up 100 s); long-lived: {args.long_duration:g} s.\n\n" +
                rules[sec] + "\n\n")
        if res["long"]:
            text += "## Long-lived flows (one run each)\n\n" + long_table(res["long"]) + "\n"
        text += ("## Mean completion time\n\n" + ct_table(res["short"], with_class=sec == "mixed") +
                 "\n## ns-3's fast-recovery entries\n\n" + census_table(res["census"]))
        timeouts = "".join(
            f"| {case} | {cls} | {np.mean([d['cclab'][s][cls]['timeouts'] for s in d['cclab']]):,.0f} | "
            f"{np.mean([d['ns3'][s][cls]['timeouts'] for s in d['ns3']]):,.0f} | "
            f"{np.mean([d['cclab'][s][cls]['retransmissions'] for s in d['cclab']]):,.0f} | "
            f"{np.mean([d['ns3'][s][cls]['retransmissions'] for s in d['ns3']]):,.0f} |\n"
            for case, d in res["raw"].items() for cls in d["cclab"][seeds[0]]
            if cls != "*" or len(d["cclab"][seeds[0]]) > 2)
        text += ("\n## Timeouts and retransmissions of the short flows (mean per seed, after warm-up)\n\n"
                 "| case | class | cclab timeouts | ns-3 timeouts | cclab retransmissions | ns-3 retransmissions |\n"
                 "|---|---|---:|---:|---:|---:|\n" + timeouts)
        print(text)
        out = args.out / dirs[sec]
        fig_name = "completion-times.png"
        write(out, text, dict(section=sec, seeds=seeds, status=status[sec], rows=res["short"], long=res["long"],
                              ns3_recoveries=res["census"], per_seed=res["raw"], wall_s=wall),
              lambda: figure(res["short"], f"{titles[sec]}: mean completion time per size bin, 95% intervals",
                             out / fig_name, by_class=sec == "mixed"))
        log(f"wrote {out}/report.md, results.json, {fig_name}")
    log(f"validate: {'every gating verdict agrees' if ok else 'SOME GATING VERDICTS FAIL'} ({wall:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
