"""The SACK gap (issue 24, part 5): which behaviour makes cclab's own SACK sender
(RFC 6675, its default rules) finish flows sooner than ns-2's Sack1 and ns-3, one
factor at a time (docs/validation.md, "The SACK gap").

Two scenarios, cclab only (seconds per run):
  dumbbell   ns-2's lossy dumbbell: 10 Mbps, 25 ms, a 50-packet DropTail buffer,
             Poisson flows of mean 1 MB at load 0.8, 1000-byte segments, windows
             of 100 segments. The reference is cclab's `preset = "ns2"` with
             `sack = true` (ns-2's Sack1, which agrees with ns-2.35 itself there:
             docs/validation.md); each row is one change from cclab's own SACK
             (ns-2's parameters, cclab's rules).
  reference  the ns-3 headline: scenarios/background/single-link.toml with SACK, PRR,
             timestamps and ns3run.NS3_TCP, as bench/validate.py runs it; each row
             is one change from that configuration.
Each row: the mean over seeds of the completion-time means (overall and 100 kB-1 MB)
with 95% intervals, the timeouts of the short flows per seed, and the paired ratio
to the first row. With --ns2 (dumbbell) ns-2.35 itself runs the first row's arrivals
(bench/ns2) and every ratio is to it; --agent newreno or reno then compares ns-2's
Agent/TCP/Newreno or /Reno with the preset and with cclab's own NewReno or Reno.

    .venv/bin/python bench/sack_gap.py dumbbell --seeds 10
    .venv/bin/python bench/sack_gap.py reference --seeds 10
    .venv/bin/python bench/sack_gap.py dumbbell --seeds 5 --ns2 [--agent newreno]
"""
from __future__ import annotations

import argparse
import math
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "ns3"))
sys.path.insert(0, str(ROOT / "bench" / "ns2"))
from pairing import mean_ci  # noqa: E402

# ns-2's parameters (packetSize_, windowInit_, syn_, minrto_, rtxcur_init_, maxrto_)
# with cclab's own rules: RFC 6675 with its defaults.
OWN = {"mss": 1000, "header": 40, "initial_window": 2, "handshake": True, "min_rto": "200ms",
       "initial_rto": "3s", "max_rto": "60s", "sack": True, "receive_window": "100000B"}
SACK1 = {"preset": "ns2", "sack": True, "receive_window": "100000B"}
DUMBBELL = {
    "ns-2 Sack1 (preset = \"ns2\", sack)": SACK1,
    "cclab's own SACK (RFC 6675)": OWN,
    "own, sack_after_timeout = \"keep\"": dict(OWN, sack_after_timeout="keep"),
    "own, rescue_retransmission = false": dict(OWN, rescue_retransmission=False),
    "own, partial_ack_timer = \"impatient\"": dict(OWN, partial_ack_timer="impatient"),
    "own, limited_transmit = true": dict(OWN, limited_transmit=True),
    "own, initial_ssthresh = \"receive_window\"": dict(OWN, initial_ssthresh="receive_window"),
    "own, loss_recovery = \"ns2\" (Sack1's recovery)": dict(OWN, loss_recovery="ns2"),
    "Sack1, loss_recovery = \"rfc\" (RFC 6675's)": dict(SACK1, loss_recovery="rfc"),
}
REFERENCE = {
    "cclab, ns-3's configuration": {},
    "sack_after_timeout = \"clear\"": {"sack_after_timeout": "clear"},
    "rescue_retransmission = true": {"rescue_retransmission": True},
    "partial_ack_timer = \"slow_but_steady\"": {"partial_ack_timer": "slow_but_steady"},
    "limited_transmit = false": {"limited_transmit": False},
    "recovery = \"halve\" (no PRR)": {"recovery": "halve"},
    "loss_recovery = \"ns2\" (Sack1's recovery)": {"loss_recovery": "ns2", "recovery": "halve"},
}


def dumbbell(tcp: dict, duration: float) -> dict:
    import validate_ns2 as v

    proto = {"protocol": "reno"} if tcp.get("_reno") else {}
    tcp = {k: x for k, x in tcp.items() if k != "_reno"}
    return v.scenario("sack-gap", duration, [v.link(limit="49pkts")], [v.poisson("short", 0.8, **proto)], tcp)


def agent_rows(agent: str) -> dict:
    """The dumbbell's rows for ns-2's NewReno or Reno: the preset, and cclab's own."""
    extra = {"sack": False, **({"_reno": True} if agent == "reno" else {})}
    return {f"preset = \"ns2\" ({agent})": dict(SACK1, **extra), f"cclab's own {agent} (RFC 5681/6582)": dict(OWN, **extra)}


def metrics(r) -> dict:
    f = r.flows[(r.flows["class"] == "short") & ~r.flows["warmup"] & r.flows["finished"]]
    mid = f[(f["size"] >= 1e5) & (f["size"] < 1e6)]
    return {"all": f["completion_time"].mean(), "mid": mid["completion_time"].mean(),
            "timeouts": float(r.flows["timeouts"][r.flows["class"] == "short"].sum())}


def ns2_row(tcp: dict, seeds, duration: float) -> list:
    """ns-2.35 on each seed's arrivals of the dumbbell with `tcp` (bench/ns2)."""
    import ns2run
    import pairing

    ns = ns2run.ensure()
    sc = dumbbell(tcp, duration)
    return [metrics(ns2run.run_ns2(sc, s, pairing.flow_list(sc, s), False, None, ns).result()) for s in seeds]


def reference(extra: dict, duration: float) -> dict:
    import ns3run

    sc = tomllib.loads((ROOT / "scenarios" / "background" / "single-link.toml").read_text())
    sc["tcp"].update({"sack": True, "recovery": "prr", "timestamps": True, **ns3run.NS3_TCP, **extra})
    sc["duration"] = f"{duration}s"
    sc["record"] = {"interval": "0s"}
    return sc


def one(args) -> dict:
    kind, tcp, seed, duration = args
    import cclab

    sc = dumbbell(tcp, duration) if kind == "dumbbell" else reference(tcp, duration)
    return metrics(cclab.run(sc, seed=seed))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", choices=["dumbbell", "reference"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds (1000 / 2000)")
    ap.add_argument("--ns2", action="store_true", help="dumbbell: ratios to ns-2.35 itself")
    ap.add_argument("--agent", choices=["sack1", "newreno", "reno"], default="sack1")
    args = ap.parse_args(argv)
    if args.scenario == "reference" and (args.ns2 or args.agent != "sack1"):
        ap.error("--ns2 and --agent are for the dumbbell")
    rows = REFERENCE if args.scenario == "reference" else DUMBBELL if args.agent == "sack1" else agent_rows(args.agent)
    duration = args.duration or (1000.0 if args.scenario == "dumbbell" else 2000.0)
    seeds = range(1, args.seeds + 1)
    print(f"| {args.scenario}: {args.seeds} seeds, {duration:g} s | mean CT (s) | CT 100 kB-1 MB (s) | "
          "ratio (paired) | 100 kB-1 MB ratio | timeouts / seed |\n|---|---:|---:|---:|---:|---:|")
    first = None
    if args.ns2:
        rows = {f"ns-2.35 ({args.agent})": None, **rows}
    with ProcessPoolExecutor(2) as pool:
        for name, tcp in rows.items():
            if tcp is None:
                res = ns2_row(list(rows.values())[1], seeds, duration)  # its config: the preset row's
            else:
                res = list(pool.map(one, [(args.scenario, tcp, s, duration) for s in seeds]))
            first = first or res
            cell = lambda xs: "{:.3g} ± {:.2g}".format(*mean_ci(xs)[:2])  # noqa: E731
            ratio = lambda k: cell([a[k] / b[k] for a, b in zip(res, first)])  # noqa: E731
            print(f"| {name} | {cell([x['all'] for x in res])} | {cell([x['mid'] for x in res])} | "
                  f"{ratio('all')} | {ratio('mid')} | {np.mean([x['timeouts'] for x in res]):,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
