"""What the loss plateau of `lowerbounds-rcp` (section VII of the lower-bounds paper) is,
measured one factor at a time on the entry's own scenario (200 Mbps core, 10-packet
buffer, RTT 90 ms, N flows starting at the smooth model's exponential draws).

1. The load: the core's offered load (every datagram that arrived, dropped or not) over
   10-ms bins, and how clumped the arrivals are (gaps shorter than a tenth of a packet's
   transmission time D; independent arrivals at load 1 would give 1 - exp(-0.1) = 0.095).
2. The start: the same runs with R starting at C/N instead of ns-2's 5% of the link (no
   overload at the start), and with the starts spread over 2 s instead of N·D.
3. Time: the loss of one 40-s run in successive 4-s windows.
4. Drops: the same flows with R starting at C/N, through the 10-packet buffer and through
   one that never fills (no drop can delay a flow's news of a new rate).

    .venv/bin/python bench/rcp_plateau.py [--out results/rcp-plateau.md]

About 5 minutes on one core. docs/reproduction.md (lowerbounds-rcp) shows its output.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import cclab
from cclab.experiments.reproductions import lower_bounds as L

D_S = L.RCP_WIRE_BYTES * 8 / L.RCP_CORE_BPS  # one datagram's transmission time


def scenario(n: int, target: float, seed: int, duration: float, warmup: float, variant: str = "baseline",
             arrivals: bool = False) -> dict:
    sc = L.rcp_point_scenario(n, target, 1, duration, warmup, seed)
    if variant == "initial R = C/N":
        sc["links"][1]["queue"]["initial_rate"] = 1.0 / n
    elif variant == "starts over 2 s":
        sc["traffic"][0]["starts"] = sorted(np.random.default_rng(seed).uniform(0, 2.0, n).tolist())
    if arrivals:
        sc["record"] = {"interval": "0s", "arrivals": ["core"]}
    return sc


def load_table(ns, targets) -> list[str]:
    rows = ["| target | N | offered load (mean) | load per 10 ms: CV | 5th-95th percentile | arrivals < D/10 apart "
            "| loss | utilization | load × (1 − loss) |", "|---|---|---|---|---|---|---|---|---|"]
    for u in targets:
        for n in ns:
            r = cclab.run(scenario(n, u, 1, 15.0, 10.0, arrivals=True))
            t = np.sort(r.arrivals["time"].to_numpy())
            bins = np.bincount(np.floor((t - 10.0) / 0.01).astype(int))
            load = bins * L.RCP_WIRE_BYTES * 8 / (L.RCP_CORE_BPS * 0.01)
            m = L.rcp_measure(r, None)
            rows.append(f"| {u:.0%} | {n} | {m['offered_load']:.3f} | {load.std() / load.mean():.2f} | "
                        f"{np.percentile(load, 5):.2f}-{np.percentile(load, 95):.2f} | "
                        f"{np.mean(np.diff(t) < D_S / 10):.3f} | {m['loss_rate']:.3f} | {m['utilization']:.3f} | "
                        f"{m['offered_load'] * (1 - m['loss_rate']):.3f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def start_table(ns, seeds) -> list[str]:
    rows = ["| variant | " + " | ".join(f"N = {n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for v in ("baseline", "initial R = C/N", "starts over 2 s"):
        cells = []
        for n in ns:
            res = np.array([[m["loss_rate"], m["utilization"]] for m in
                            (L.rcp_measure(cclab.run(scenario(n, 1.0, s, 15.0, 10.0, v)), None) for s in seeds)])
            cells.append(f"{100 * res[:, 0].mean():.1f}% / {res[:, 1].mean():.2f}")
        rows.append(f"| {v} | " + " | ".join(cells) + " |")
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def time_table(ns, seeds, window: float = 4.0, duration: float = 40.0) -> list[str]:
    k = int(math.ceil(duration / window))
    rows = ["| N | seed | " + " | ".join(f"{i * window:g}-{(i + 1) * window:g} s" for i in range(k)) + " |",
            "|---|---|" + "---|" * k]
    for n in ns:
        for s in seeds:
            a = cclab.run(scenario(n, 1.0, s, duration, 0.0, arrivals=True)).arrivals
            w = np.floor(a["time"].to_numpy() / window).astype(int)
            loss = np.bincount(w, weights=a["dropped"].to_numpy().astype(float), minlength=k) / np.bincount(w, minlength=k)
            rows.append(f"| {n} | {s} | " + " | ".join(f"{100 * x:.0f}%" for x in loss[:k]) + " |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def drops_table(ns) -> list[str]:
    rows = ["| N | buffer | arrivals < D/10 apart | loss | offered load | utilization | mean queue | largest queue |",
            "|---|---|---|---|---|---|---|---|"]
    for n in ns:
        for limit in ("10pkts", "100000pkts"):
            sc = scenario(n, 1.0, 1, 30.0, 20.0, "initial R = C/N", arrivals=True)
            sc["links"][1]["queue"]["limit"] = limit
            r = cclab.run(sc)
            t = np.sort(r.arrivals["time"].to_numpy())
            m = L.rcp_measure(r, None)
            core = r.links.set_index("name").loc["core"]
            rows.append(f"| {n} | {limit} | {np.mean(np.diff(t) < D_S / 10):.3f} | {m['loss_rate']:.3f} | "
                        f"{m['offered_load']:.3f} | {m['utilization']:.3f} | {core.mean_queue_packets:.1f} | "
                        f"{core.max_queue_packets:.0f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    parts = [
        "### 1. The offered load and how clumped the arrivals are (seed 1, [10, 15] s of a 15-s run)", "",
        *load_table((100, 200, 250, 300, 600), (1.0, 0.85)), "",
        "### 2. The start (loss / utilization over [10, 15] s, mean of seeds 1-3, target 100%)", "",
        *start_table((150, 200, 250, 300, 400, 600), (1, 2, 3)), "",
        "### 3. Time (loss in successive 4-s windows of a 40-s run from the start, target 100%)", "",
        *time_table((200, 300, 600), (1, 2)), "",
        "### 4. Drops (seed 1, R starting at C/N, [20, 30] s of a 30-s run, target 100%)", "",
        *drops_table((300, 600)), ""]
    text = "\n".join(parts)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
