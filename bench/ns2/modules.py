"""ns-2.35's modules against cclab's `ns2` variants, on hand-written Tcl (issue 24, part 3).

`make validate-ns2` runs the harness (`ns2run.py`), which writes ns-2 scripts from
cclab's configurations. This script checks each `ns2` variant against the ns-2
settings it reproduces, written out by hand so that every ns-2 default stays what it
is in ns-default.tcl unless named: agents created before `$ns run` (so that
TcpAgent::reset gives them ssthresh_ = window_), TCPSink without SACK for the Linux
agent (Agent/TCP/Linux then never fast-retransmits), TFRC without its 32-byte
`headersize_` (cclab's datagram size is the whole packet).

    .venv/bin/python bench/ns2/modules.py                 # every section, 5 seeds
    .venv/bin/python bench/ns2/modules.py --only tcp_lp --seeds 2

Sections (docs/protocols.md gives each variant's rules and these results):
  tcp_lp  one Agent/TCP/Linux flow with `select_ca lp` alone on 10 Mb/s, 50 ms, a
          100-packet DropTail, 300 s, its delay perturbed by up to 0.1 ms (8 runs: the
          goodput of a TCP-LP flow depends on which millisecond its timestamps fall
          in); and beside Poisson Reno flows (exponential sizes, mean 3 MB) at load
          0.3, 1000 s, paired per seed: TCP-LP's goodput, the Reno flows' mean
          completion time. With and without timestamps_, 1000- and 1460-byte packets,
          window_ 10000 and 20.
  red     Queue/RED with every automatic parameter (thresh_ 0, maxthresh_ 0,
          q_weight_ -1, byte mode, linterm_ 10) against `min_th = max_th = weight =
          "auto"`: Reno Poisson flows (mean 500 kB) at load 0.6, 10 Mb/s, 20 ms, 600 s:
          drops, mean queue, mean completion time, paired per seed.
  vegas   long-lived Agent/TCP/Vegas flows on a 10 Mb/s, 10 ms bottleneck (100
          packets), 200 s: each flow's share over [50, 200] s.
  tfrc    n Agent/TFRC and n Newreno flows on 10 Mb/s, 25 ms (100 packets), 300 s:
          TFRC's share over [50, 300] s.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from pairing import mean_ci  # noqa: E402

SECTIONS = ("tcp_lp", "red", "vegas", "tfrc")


def ns(script: str, folder: Path, name: str) -> str:
    """Run a Tcl script in ns-2 (its stdout discarded: Linux TCP-LP prints a line per ACK)."""
    path = folder / f"{name}.tcl"
    path.write_text(script)
    proc = subprocess.run(["ns", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=folder)
    if proc.returncode != 0:
        raise RuntimeError(f"ns {path}: {proc.stderr[-800:]}")
    return (folder / f"{name}.out").read_text()


def poisson(seed: int, load: float, duration: float, mean: float, pkt: int, rate=10e6) -> list[tuple[float, int]]:
    """Arrivals (start, bytes in whole packets) of a Poisson class."""
    rng = np.random.default_rng(1000 + seed)
    lam = load * rate / 8 / mean
    t, out = 0.0, []
    while True:
        t += rng.exponential(1 / lam)
        if t >= duration:
            return out
        out.append((round(t, 6), max(1, int(np.ceil(rng.exponential(mean) / pkt))) * pkt))


def flow_csv(folder: Path, flows, cls: str) -> str:
    path = folder / f"{cls}.csv"
    path.write_text("start,size,class\n" + "".join(f"{t},{s},{cls}\n" for t, s in flows))
    return str(path)


def reno_tcl(flows, pkt: int, window: int) -> str:
    """Agent/TCP/Reno flows with TCPSink, each created before the run, started by
    `advanceby`; `done` writes its completion time."""
    out = []
    for i, (t, size) in enumerate(flows):
        out.append(f"""set r{i} [new Agent/TCP/Reno]
$r{i} set window_ {window}
$r{i} set packetSize_ {pkt}
$ns attach-agent $n0 $r{i}
set s{i} [new Agent/TCPSink]
$ns attach-agent $n1 $s{i}
$ns connect $r{i} $s{i}
$r{i} proc done {{}} {{ global f ns; puts $f "ct {i} [expr [$ns now] - {t}]" }}
$ns at {t} "$r{i} advanceby {size // pkt}"
""")
    return "".join(out)


def reno_class(csv: str, pkt: int, window: int) -> dict:
    """The same Reno flows in cclab: ns-2's handshake (syn_, delay_growth_) and initial window."""
    return {"name": "reno", "type": "flow_list", "src": "a", "dst": "b", "protocol": "reno", "file": csv,
            "tcp": {"mss": pkt, "handshake": True, "receive_window": f"{window * pkt}B"}}


def ns2_tcp(pkt: int) -> dict:
    """cclab's [tcp] as ns-2's Agent/TCP defaults (without the `ns2` preset)."""
    return {"mss": pkt, "header": 40, "initial_window": 2, "min_rto": "200ms", "initial_rto": "3s", "max_rto": "60s"}


def cts(text: str) -> dict[int, float]:
    return {int(p[1]): float(p[2]) for p in (l.split() for l in text.splitlines()) if p and p[0] == "ct"}


# --- TCP-LP -----------------------------------------------------------------------------

def lp_tcl(duration, flows, delay, ts, pkt, window, out) -> str:
    return f"""set ns [new Simulator]
set n0 [$ns node]
set n1 [$ns node]
$ns simplex-link $n0 $n1 10Mb {delay}ms DropTail
$ns simplex-link $n1 $n0 10Mb {delay}ms DropTail
$ns queue-limit $n0 $n1 100
set f [open {out} w]
set lp [new Agent/TCP/Linux]
$lp set timestamps_ {ts}
$lp set window_ {window}
$lp set packetSize_ {pkt}
$ns attach-agent $n0 $lp
set lps [new Agent/TCPSink]
$ns attach-agent $n1 $lps
$ns connect $lp $lps
$ns at 0 "$lp select_ca lp"
set ftp [new Application/FTP]
$ftp attach-agent $lp
$ns at 0.0 "$ftp start"
{reno_tcl(flows, pkt, window)}
$ns at {duration} {{puts $f "lp [expr [$lp set ack_] * {pkt}]"; close $f; exit 0}}
$ns run
"""


def lp_cclab(duration, flows_csv, delay, ts, pkt, window):
    import cclab

    lp_tcp = dict(ns2_tcp(pkt), timestamps=bool(ts), option_sizes="ns2", syn_segment=True, max_rto="120s",
                  dupack_threshold=1_000_000, receive_window=f"{window * pkt}B")
    traffic = [{"name": "lp", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tcp_lp", "count": 1,
                "cc": {"variant": "ns2"}, "tcp": lp_tcp}]
    if flows_csv:
        traffic.append(reno_class(flows_csv, pkt, window))
    sc = {"name": "lp", "duration": f"{duration}s", "seed": 1, "tcp": ns2_tcp(pkt),
          "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": f"{delay}ms",
                     "queue": {"type": "droptail", "limit": "99pkts"}}], "traffic": traffic, "record": {"interval": "0s"}}
    f = cclab.run(sc).flows
    lp = int(f[f["class"] == "lp"]["bytes_delivered"].sum())
    reno = f[f["class"] == "reno"].reset_index(drop=True)
    return lp, {i: float(r["completion_time"]) for i, r in reno.iterrows() if r["finished"]}


def tcp_lp(args, folder: Path) -> list[str]:
    rows = ["| case | metric | ns-2 | cclab | cclab/ns-2 (paired) | per run |", "|---|---|---:|---:|---:|---|"]
    for pkt, ts, window in ((1000, 1, 10000), (1000, 0, 10000), (1460, 1, 10000), (1000, 1, 20)):
        case = f"{pkt} B, timestamps_ {ts}, window_ {window}"
        # Alone: the delay perturbed (the same link to 0.1 ms).
        n, c = [], []
        for d in (49.99, 49.995, 50.0, 50.005, 50.01, 50.02, 50.05, 50.1):
            out = ns(lp_tcl(300, [], d, ts, pkt, window, folder / "lp.out"), folder, "lp")
            n.append(int(out.split()[1]) * 8 / 300 / 1e6)
            c.append(lp_cclab(300, None, d, ts, pkt, window)[0] * 8 / 300 / 1e6)
        rows.append(row(f"{case}, alone (8 delays)", "goodput (Mb/s)", n, c))
        # Beside Reno at load 0.3, paired per seed.
        n, c, nct, cct = [], [], [], []
        for s in range(1, args.seeds + 1):
            flows = poisson(s, 0.3, args.duration, 3e6, pkt)
            out = ns(lp_tcl(args.duration, flows, 50, ts, pkt, window, folder / "lp.out"), folder, "lp")
            lp_bytes = int(next(l.split()[1] for l in out.splitlines() if l.startswith("lp")))
            lp, cc = lp_cclab(args.duration, flow_csv(folder, flows, "reno"), 50, ts, pkt, window)
            both = sorted(set(cts(out)) & set(cc))
            n.append(lp_bytes * 8 / args.duration / 1e6)
            c.append(lp * 8 / args.duration / 1e6)
            nct.append(np.mean([cts(out)[i] for i in both]))
            cct.append(np.mean([cc[i] for i in both]))
        rows.append(row(f"{case}, beside Reno", "TCP-LP goodput (Mb/s)", n, c))
        rows.append(row(f"{case}, beside Reno", "Reno mean completion time (s)", nct, cct))
    return rows


def row(case: str, metric: str, n: list, c: list) -> str:
    r, h, _ = mean_ci([x / y for x, y in zip(c, n)])
    per = ", ".join(f"{x / y:.3f}" for x, y in zip(c, n))
    return f"| {case} | {metric} | {np.mean(n):.3f} | {np.mean(c):.3f} | {r:.3f} ± {h:.3f} | {per} |"


# --- RED --------------------------------------------------------------------------------

def red(args, folder: Path) -> list[str]:
    import cclab

    rows = ["| metric | ns-2 | cclab | cclab/ns-2 (paired) | per seed |", "|---|---:|---:|---:|---|"]
    vals = {k: ([], []) for k in ("drops", "mean queue (packets)", "mean completion time (s)")}
    dur = min(args.duration, 600)
    for s in range(1, args.seeds + 1):
        flows = poisson(s, 0.6, dur, 500e3, 1000)
        tcl = f"""set ns [new Simulator]
set n0 [$ns node]
set n1 [$ns node]
$ns simplex-link $n0 $n1 10Mb 20ms RED
$ns simplex-link $n1 $n0 10Mb 20ms DropTail
$ns queue-limit $n0 $n1 100
set qmon [$ns monitor-queue $n0 $n1 ""]
set f [open {folder / 'red.out'} w]
{reno_tcl(flows, 1000, 10000)}
proc finish {{}} {{
  global f qmon ns
  set pi [$qmon get-pkts-integrator]
  $pi newpoint [$ns now] [$qmon set pkts_]
  puts $f "q [$qmon set pdrops_] [expr [$pi set sum_] / [$ns now]]"
  close $f
  exit 0
}}
$ns at {dur} finish
$ns run
"""
        out = ns(tcl, folder, "red")
        q = next(l.split() for l in out.splitlines() if l.startswith("q "))
        # ns-2's RED in bytes holds queue-limit × mean_pktsize_ bytes and admits while
        # fewer than that wait: for 1040-byte packets, cclab's byte limit plus 1039.
        queue = {"type": "red", "limit": f"{100 * 500 + 1039}B", "min_th": "auto", "max_th": "auto", "weight": "auto",
                 "max_p": 0.1}
        sc = {"name": "red", "duration": f"{dur}s", "seed": s, "tcp": ns2_tcp(1000),
              "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "20ms", "queue": queue, "duplex": False},
                        {"name": "r", "from": "b", "to": "a", "rate": "10Mbps", "delay": "20ms", "duplex": False}],
              "traffic": [reno_class(flow_csv(folder, flows, "reno"), 1000, 10000)], "record": {"interval": "0s"}}
        r = cclab.run(sc)
        f = r.flows.reset_index(drop=True)
        cc = {i: float(x["completion_time"]) for i, x in f.iterrows() if x["finished"]}
        both = sorted(set(cts(out)) & set(cc))
        link = r.links.iloc[0]
        for k, nv, cv in (("drops", float(q[1]), float(link["drops"])),
                          ("mean queue (packets)", float(q[2]), float(link["mean_queue_packets"])),
                          ("mean completion time (s)", np.mean([cts(out)[i] for i in both]), np.mean([cc[i] for i in both]))):
            vals[k][0].append(nv)
            vals[k][1].append(cv)
    for k, (n, c) in vals.items():
        rows.append(row("", k, n, c).replace("|  | ", "| ", 1))
    return rows


# --- Vegas ------------------------------------------------------------------------------

VEGAS = {"a second flow 20 s later": [(0, 5), (20, 5)], "access 5, 20, 45 ms": [(0, 5), (0, 20), (0, 45)],
         "four, 5 s apart, 5-20 ms": [(0, 5), (5, 10), (10, 15), (15, 20)]}


def vegas(args, folder: Path) -> list[str]:
    import cclab

    rows = ["| flows | ns-2 shares | cclab shares | largest share ratio − 1 |", "|---|---|---|---:|"]
    for name, flows in VEGAS.items():
        tcl = [f"""set ns [new Simulator]
set r [$ns node]
set d [$ns node]
$ns duplex-link $r $d 10Mb 10ms DropTail
$ns queue-limit $r $d 100
set f [open {folder / 'vegas.out'} w]
"""]
        links = [{"name": "bn", "from": "r", "to": "d", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "99pkts"}}]
        traffic = []
        for i, (start, delay) in enumerate(flows):
            tcl.append(f"""set s{i} [$ns node]
$ns duplex-link $s{i} $r 100Mb {delay}ms DropTail
set t{i} [new Agent/TCP/Vegas]
$t{i} set window_ 10000
$t{i} set packetSize_ 1000
$ns attach-agent $s{i} $t{i}
set k{i} [new Agent/TCPSink]
$ns attach-agent $d $k{i}
$ns connect $t{i} $k{i}
set ftp{i} [new Application/FTP]
$ftp{i} attach-agent $t{i}
$ns at {start} "$ftp{i} start"
$ns at 50 {{set a{i} [$t{i} set ack_]}}
""")
            links.append({"name": f"a{i}", "from": f"s{i}", "to": "r", "rate": "100Mbps", "delay": f"{delay}ms",
                          "queue": {"limit": "1000pkts"}})
            traffic.append({"name": f"v{i}", "type": "long_lived", "src": f"s{i}", "dst": "d", "protocol": "vegas",
                            "cc": {"variant": "ns2"}, "start": f"{start}s"})
        acks = " ".join(f"[expr [$t{i} set ack_] - $a{i}]" for i in range(len(flows)))
        tcl.append(f'$ns at 200 {{puts $f "{acks}"; close $f; exit 0}}\n$ns run\n')
        n = [float(x) for x in ns("".join(tcl), folder, "vegas").split()]
        # ns-2's Vegas sends packetSize_ bytes with no header (VegasTcpAgent::output).
        sc = {"name": "vegas", "duration": "200s", "warmup": "50s", "seed": 1,
              "tcp": {"mss": 1000, "header": 0, "initial_window": 1, "initial_rto": "3s"}, "links": links,
              "traffic": traffic, "record": {"interval": "0s"}}
        s = cclab.run(sc).summary
        c = [s[f"v{i}.throughput_bps"] for i in range(len(flows))]
        ns_sh, cc_sh = [x / sum(n) for x in n], [x / sum(c) for x in c]
        worst = max(abs(x / y - 1) for x, y in zip(cc_sh, ns_sh))
        fmt = lambda v: ", ".join(f"{x:.3f}" for x in v)  # noqa: E731
        rows.append(f"| {name} | {fmt(ns_sh)} | {fmt(cc_sh)} | {worst:.3f} |")
    return rows


# --- TFRC -------------------------------------------------------------------------------

def tfrc(args, folder: Path) -> list[str]:
    import cclab

    rows = ["| flows | ns-2 TFRC share | cclab TFRC share | cclab/ns-2 |", "|---|---:|---:|---:|"]
    for n in (1, 2, 4):
        tcl = [f"""set ns [new Simulator]
set n0 [$ns node]
set n1 [$ns node]
$ns simplex-link $n0 $n1 10Mb 25ms DropTail
$ns simplex-link $n1 $n0 10Mb 25ms DropTail
$ns queue-limit $n0 $n1 100
set f [open {folder / 'tfrc.out'} w]
"""]
        traffic = []
        for i in range(n):
            tcl.append(f"""set t{i} [new Agent/TFRC]
$t{i} set packetSize_ 1040
$t{i} set useHeaders_ false
$ns attach-agent $n0 $t{i}
set s{i} [new Agent/TFRCSink]
$ns attach-agent $n1 $s{i}
$ns connect $t{i} $s{i}
$ns at {0.1 * i} "$t{i} start"
set r{i} [new Agent/TCP/Newreno]
$r{i} set packetSize_ 1000
$r{i} set window_ 10000
$ns attach-agent $n0 $r{i}
set k{i} [new Agent/TCPSink]
$ns attach-agent $n1 $k{i}
$ns connect $r{i} $k{i}
set ftp{i} [new Application/FTP]
$ftp{i} attach-agent $r{i}
$ns at {0.1 * i + 0.05} "$ftp{i} start"
$ns at 50 {{set ta{i} [$s{i} set bytes_]; set ra{i} [$r{i} set ack_]}}
""")
            traffic += [{"name": f"tfrc{i}", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tfrc",
                         "packet_size": 1040, "cc": {"variant": "ns2"}, "start": f"{0.1 * i}s"},
                        {"name": f"tcp{i}", "type": "long_lived", "src": "a", "dst": "b", "protocol": "newreno",
                         "start": f"{0.1 * i + 0.05}s"}]
        vals = " ".join(f"[expr [$s{i} set bytes_] - $ta{i}] [expr ([$r{i} set ack_] - $ra{i}) * 1040]" for i in range(n))
        tcl.append(f'$ns at 300 {{puts $f "{vals}"; close $f; exit 0}}\n$ns run\n')
        v = [float(x) for x in ns("".join(tcl), folder, "tfrc").split()]
        ns_share = sum(v[0::2]) / sum(v)
        sc = {"name": "tfrc", "duration": "300s", "warmup": "50s", "seed": 1, "tcp": dict(ns2_tcp(1000), handshake=True),
              "links": [{"name": "l", "from": "a", "to": "b", "rate": "10Mbps", "delay": "25ms", "queue": {"limit": "99pkts"}}],
              "traffic": traffic, "record": {"interval": "0s"}}
        s = cclab.run(sc).summary
        tf = sum(s[f"tfrc{i}.throughput_bps"] for i in range(n))
        tc = sum(s[f"tcp{i}.throughput_bps"] for i in range(n)) * 1040 / 1000
        rows.append(f"| {n} + {n} | {ns_share:.3f} | {tf / (tf + tc):.3f} | {tf / (tf + tc) / ns_share:.3f} |")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1000.0, help="seconds of the Poisson scenarios")
    args = ap.parse_args(argv)
    only = [s for s in args.only.split(",") if s]
    if any(s not in SECTIONS for s in only):
        ap.error(f"--only: sections are {', '.join(SECTIONS)}")
    with tempfile.TemporaryDirectory(prefix="cclab-ns2-modules-") as tmp:
        for sec in only:
            print(f"\n### {sec}\n")
            print("\n".join(globals()[sec](args, Path(tmp))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
