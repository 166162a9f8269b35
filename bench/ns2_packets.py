"""Packet by packet: cclab's `preset = "ns2"` against ns-2.35's one-way agents.

One dumbbell (a sender's node, a fast access link of 1 us, the bottleneck with a
DropTail buffer, the receiver), a few flows given as START:BYTES, and the bottleneck's
arrivals in order, each with its time and whether it was dropped: ns-2's from
`trace-queue`, cclab's from `record.arrivals`. The two lists must be the same. The
access link puts the senders one link before the bottleneck, where ns-2, like cclab,
takes a transmission that ends at t before an arrival at t (docs/protocols.md, "ns-2.35's
agents"); the clock tick defaults to 1 us so that the random phase of each sender's
clock (`boot_time_`, drawn differently in the two) cannot move a timeout.

    .venv/bin/python bench/ns2_packets.py --agent sack1 --flows 0:300000,1:1000000 --queue 5
    .venv/bin/python bench/ns2_packets.py --random 40        # random cases, one line each
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

AGENTS = {"newreno": ("Agent/TCP/Newreno", "Agent/TCPSink"), "reno": ("Agent/TCP/Reno", "Agent/TCPSink"),
          "sack1": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1")}


def ns2_arrivals(flows, agent, rate_mbps, queue, window, tick, duration) -> np.ndarray:
    """(time, dropped) of every packet that reaches ns-2's bottleneck queue."""
    a, sink = AGENTS[agent]
    tcl = ["set ns [new Simulator]", "set s [$ns node]", "set r [$ns node]", "set h [$ns node]",
           "$ns duplex-link $h $s 1000Mb 0.001ms DropTail", "$ns queue-limit $h $s 100000",
           f"$ns duplex-link $s $r {rate_mbps}Mb 25ms DropTail", f"$ns queue-limit $s $r {queue}",
           "set tf [open trace.tr w]", "$ns trace-queue $s $r $tf",
           f"Agent/TCP set tcpTick_ {tick}", f"Agent/TCP set window_ {window}"]
    for i, (t, size) in enumerate(flows):
        tcl += [f"set t{i} [new {a}]", f"$ns attach-agent $h $t{i}", f"set k{i} [new {sink}]",
                f"$ns attach-agent $r $k{i}", f"$ns connect $t{i} $k{i}", f"set f{i} [$t{i} attach-app FTP]",
                f"$ns at {t!r} \"$f{i} send {int(size)}\""]
    tcl += [f"$ns at {duration} \"close $tf; exit 0\"", "$ns run"]
    with tempfile.TemporaryDirectory(prefix="ns2-packets-") as d:
        Path(d, "run.tcl").write_text("\n".join(tcl) + "\n")
        subprocess.run(["ns", "run.tcl"], cwd=d, check=True, stdout=subprocess.DEVNULL)
        lines = Path(d, "trace.tr").read_text().split("\n")
    order, rows = [], {}
    for line in lines:
        f = line.split()
        if len(f) < 12 or (f[2], f[3]) != ("0", "1"):
            continue
        if f[0] == "+":
            rows[f[11]] = [float(f[1]), False]
            order.append(f[11])
        elif f[0] == "d":
            rows[f[11]][1] = True
    return np.array([rows[u] for u in order], float).reshape(-1, 2)


def cclab_arrivals(flows, agent, rate_mbps, queue, window, tick, duration) -> np.ndarray:
    import cclab

    tcp = {"preset": "ns2", "sack": agent == "sack1", "receive_window": f"{window * 1000}B",
           "clock_tick": f"{round(tick * 1e9)}ns"}
    with tempfile.TemporaryDirectory(prefix="ns2-packets-") as d:
        Path(d, "flows.csv").write_text("start,size,class\n" + "".join(f"{t!r},{int(b)},x\n" for t, b in flows))
        sc = {"name": "packets", "duration": f"{duration}s", "tcp": tcp, "record": {"interval": "0s", "arrivals": ["b"]},
              "links": [{"name": "a", "from": "h", "to": "s", "rate": "1000Mbps", "delay": "1us",
                         "queue": {"type": "droptail", "limit": "99999pkts"}},
                        # ns-2's queue-limit L holds L - 1 waiting packets (DropTail::enque).
                        {"name": "b", "from": "s", "to": "r", "rate": f"{rate_mbps}Mbps", "delay": "25ms",
                         "queue": {"type": "droptail", "limit": f"{queue - 1}pkts"}}],
              "traffic": [{"name": "x", "type": "flow_list", "src": "h", "dst": "r", "file": str(Path(d, "flows.csv")),
                           "protocol": "reno" if agent == "reno" else "newreno"}]}
        r = cclab.run(sc)
    a = r.arrivals
    return np.column_stack([a["time"].to_numpy(), a["dropped"].to_numpy().astype(float)])


def compare(flows, agent, rate_mbps=1, queue=5, window=20, tick=1e-6, duration=100.0) -> str:
    """One line: the arrivals and drops of both, and the first arrival that differs."""
    n = ns2_arrivals(flows, agent, rate_mbps, queue, window, tick, duration)
    c = cclab_arrivals(flows, agent, rate_mbps, queue, window, tick, duration)
    k = min(len(n), len(c))
    diff = np.nonzero((np.abs(n[:k, 0] - c[:k, 0]) > 1e-6) | (n[:k, 1] != c[:k, 1]))[0]
    head = f"ns-2 {len(n)} arrivals, {int(n[:, 1].sum())} drops; cclab {len(c)}, {int(c[:, 1].sum())}"
    if len(diff) == 0 and len(n) == len(c):
        return head + ": identical"
    i = int(diff[0]) if len(diff) else k
    at = f"ns-2 {n[i, 0]:.6f} s{' dropped' if n[i, 1] else ''}, cclab {c[i, 0]:.6f} s{' dropped' if c[i, 1] else ''}" \
        if i < k else "one list ends"
    return head + f": first difference at arrival {i} ({at})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", choices=sorted(AGENTS), default="newreno")
    ap.add_argument("--flows", default="0:300000", help="START:BYTES,...")
    ap.add_argument("--rate", type=float, default=1.0, help="bottleneck Mbps")
    ap.add_argument("--queue", type=int, default=5, help="ns-2's queue-limit")
    ap.add_argument("--window", type=int, default=20, help="window_ in packets")
    ap.add_argument("--tick", type=float, default=1e-6, help="tcpTick_ in seconds")
    ap.add_argument("--duration", type=float, default=100.0)
    ap.add_argument("--random", type=int, default=0, help="run this many random cases instead")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    if not a.random:
        flows = [(float(x.split(":")[0]), float(x.split(":")[1])) for x in a.flows.split(",")]
        print(compare(flows, a.agent, a.rate, a.queue, a.window, a.tick, a.duration))
        return 0
    rng = random.Random(a.seed)
    for _ in range(a.random):
        agent, rate = rng.choice(sorted(AGENTS)), rng.choice([1, 2, 10])
        queue, window = rng.choice([4, 6, 10, 20, 50]), rng.choice([20, 32, 64, 100])
        flows = [(round(rng.uniform(0, 2), 4), rng.choice([30000, 100000, 300000, 1000000]))
                 for _ in range(rng.randint(2, 8))]
        case = f"{agent} {rate:g} Mbps queue {queue} window {window} flows {len(flows)}"
        print(f"{case}: {compare(flows, agent, rate, queue, window, a.tick, 200.0)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
