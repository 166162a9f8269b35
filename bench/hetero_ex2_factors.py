"""Why Example 2a's "Reno first" equilibrium does not survive FAST's arrival in
`hetero-ex2`: one factor at a time on the entry's own quick scenario (300 s, 200 s of
warm-up, FAST at 100 s; seeds 1-3, mean ± standard deviation over them).

1. FAST's baseRTT: measured (the smallest RTT sample, as FAST specifies: a FAST flow
   starting into Reno's standing queue at link 1-2 first takes 146 ms for its 120 ms) or
   known from the start (`cc.base_rtt`, the fluid model's propagation delay), without and
   with Algorithm 1.
2. Link 3-4's rate: Fig. 4's (equal to link 1-2's, so Reno's packets reach 3-4 already
   spaced by 1-2 and only 3-4's noise queues there, where the fluid equilibrium has 479
   packets) or 5% and 10% lower (Reno queues at 3-4).

    .venv/bin/python bench/hetero_ex2_factors.py [--out FILE.md]

About 3 minutes on one core. docs/reproduction/heterogeneous.md (hetero-ex2) shows its output.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import cclab
from cclab.experiments.reproductions import heterogeneous_packet as H
from cclab.experiments.runs import Point

SEEDS = (1, 2, 3)
#: Two 30 ms links each way, plus a 1500-byte packet's and an ACK's transmission times.
FAST_PROPAGATION_RTT = "120.2ms"


def measured(order: str, algorithm1: bool, base_rtt: str | None = None, l34_factor: float = 1.0) -> str:
    """One table row's numbers: per-flow rates and the links' utilization and queue."""
    rows = []
    for seed in SEEDS:
        sc = H.ex2_scenario(order, algorithm1, H.EX2_SIZES.quick, H.ex2_weight())
        for t in sc["traffic"]:
            if t["protocol"] == "fast" and base_rtt:
                t["cc"]["base_rtt"] = base_rtt
        l34 = next(link for link in sc["links"] if link["name"] == "l34")
        l34["rate"] = f"{float(l34['rate'].removesuffix('Mbps')) * l34_factor:.4f}Mbps"
        rows.append(H.ex2_measure(cclab.run(sc, seed=seed), Point({}, sc)))
    m = {k: np.mean([r[k] for r in rows]) for k in rows[0]}
    sd = {k: np.std([r[k] for r in rows], ddof=1) for k in rows[0]}
    return (f"{m['reno_pkts_per_ms']:.3f} ± {sd['reno_pkts_per_ms']:.3f} | "
            f"{m['fast_pkts_per_ms']:.2f} ± {sd['fast_pkts_per_ms']:.2f} | "
            f"{m['utilization_12']:.3f} / {m['utilization_23']:.3f} / {m['utilization_34']:.3f} | "
            f"{m['queue_12']:.0f} / {m['queue_23']:.0f} / {m['queue_34']:.0f}")


HEAD = "Reno pkts/ms | FAST pkts/ms | utilization 1-2 / 2-3 / 3-4 | mean queue 1-2 / 2-3 / 3-4 (packets) |"


def tables() -> list[str]:
    out = ["### FAST's baseRTT", "", "| baseRTT | Algorithm 1 | start order | " + HEAD, "|---|---|---|---|---|---|---|"]
    for base in (None, FAST_PROPAGATION_RTT):
        for alg in (False, True):
            for order in ("fast_first", "reno_first"):
                out.append(f"| {'known, ' + base if base else 'measured'} | {'yes' if alg else 'no'} | "
                           f"{order.replace('_', ' ')} | {measured(order, alg, base)} |")
                print(out[-1], flush=True)
    out += ["", "### Link 3-4's rate (without Algorithm 1)", "", "| link 3-4 | start order | " + HEAD,
            "|---|---|---|---|---|---|"]
    for f in (1.0, 0.95, 0.9):
        for order in ("fast_first", "reno_first"):
            out.append(f"| {f:.2f} × Fig. 4's | {order.replace('_', ' ')} | {measured(order, False, l34_factor=f)} |")
            print(out[-1], flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    text = "\n".join(tables()) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
