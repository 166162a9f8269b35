"""Engine benchmark: speed and memory of the packet-level engine, and ns-3 3.44
beside it in the same run.

1. The reference scenario (scenarios/background/single-link.toml, 2000 simulated
   s): engine wall time (median of --repeat seeds), events per second.
2. Four long-flow cases (one bottleneck, DropTail buffer of one BDP, 10 simulated
   s, NewReno): 10 Gbps / 1 ms RTT and 1 Gbps / 50 ms RTT, with 10 and 100 flows.
   CPU time of the simulation in the engine binary (no Python, no start-up or
   parsing), median of --repeat runs, per link transmission (every data or ACK
   packet transmitted on every link counts one).
3. Every window protocol (and NewReno with SACK and PRR) on the 1 Gbps / 50 ms,
   100-flow case: CPU per link transmission against NewReno's in the same run
   (one ACK per data segment, so this is the cost per ACK of the controller and
   its recovery, with the engine's share in common). Target: within 30%.
4. Peak resident memory of the engine binary: the reference scenario at 2000 and
   20000 s, and 10,000 concurrent long flows at 10 and 100 s.
5. ns-3 on the reference scenario's seed-1 flows, and cclab on the same list:
   the speed-up is the ratio of the two wall-clock times. Then ns-2.35 (the
   papers' simulator, bench/ns2) on the same flows with the scenario's own TCP
   parameters, and cclab with the same ones: the ratio of the two wall times,
   and ns-2's CPU time and peak memory (its own process, from wait4).
6. Rate senders (CBR, and TFRC, TFCBR, RDTF with their receivers' feedback) on the
   case of section 3: CPU per link transmission against NewReno's in the same run,
   and per data packet (NewReno's transmissions are half ACKs; a rate flow sends
   one feedback packet per RTT). Target: within 30%.
7. Tracing off: the four long-flow cases of section 2 in the engine before
   `[trace]` existed (built from git, --trace-baseline) and in this one, CPU per
   link transmission, interleaved runs. Target: within 1% (no cost when off).
   With valgrind installed, also the instructions each executes (cachegrind, 2
   simulated s of each case): a count that the machine's load does not move.
8. Tracing on: the reference scenario untraced and with 10 flows traced at event
   resolution (the first 10 short flows; the long flow and the first 9 short ones;
   the bottleneck's queue; its capture): CPU against the untraced run, rows, and
   bytes per row (peak RSS over the untraced run's). Target: +30% at most for 10
   traced flows.

    make bench            # or: .venv/bin/python bench/engine.py [--repeat 5] [--no-ns3] [--no-ns2] [--ns2-only]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"
TARGET_NS_PER_TX = 70.0
TARGET_SPEEDUP = 300.0
TARGET_RSS_MB = 64.0
TARGET_CONTROLLER_RATIO = 1.30
TARGET_TRACE_OFF_RATIO = 1.01
TARGET_TRACE_ON_RATIO = 1.30
# The engine before `[trace]` (issue 27): the last commit of main without it.
TRACE_BASELINE = "5f731db"

LONG_FLOWS = """name = "long-{rate}-{flows}"
duration = "{duration}"
[[links]]
name = "bottleneck"
from = "a"
to = "b"
rate = "{rate}"
delay = "{delay}"
queue = {{ type = "{queue}", limit = "{rtt}" }}
[[traffic]]
name = "long"
type = "long_lived"
src = "a"
dst = "b"
count = {flows}
{protocol}
[record]
interval = "0s"
{tcp}
"""
# (rate, one-way delay, RTT = buffer of one BDP)
CASES = [("10Gbps", "500us", "1ms"), ("1Gbps", "25ms", "50ms")]
# The controllers of section 3: (label, the traffic class's protocol lines, the [tcp] table).
CONTROLLERS = [
    ("newreno", 'protocol = "newreno"', ""),
    ("newreno + SACK, PRR", 'protocol = "newreno"', '[tcp]\nsack = true\nrecovery = "prr"'),
    ("reno", 'protocol = "reno"', ""),
    ("ledbat (draft00)", 'protocol = "ledbat"', ""),
    ("ledbat (rfc6817)", 'protocol = "ledbat"\ncc = { variant = "rfc6817" }', ""),
    ("tcp_lp", 'protocol = "tcp_lp"', ""),
    ("vegas", 'protocol = "vegas"', ""),
    ("fast", 'protocol = "fast"', ""),
    ("multcp (w = 2)", 'protocol = "multcp"\ncc = { weight = 2 }', ""),
]


def long_flows(rate: str, delay: str, rtt: str, flows: int, duration: str, protocol: str = "", tcp: str = "",
               queue: str = "droptail") -> str:
    return LONG_FLOWS.format(rate=rate, delay=delay, rtt=rtt, flows=flows, duration=duration, protocol=protocol, tcp=tcp,
                             queue=queue)


def engine_binary() -> Path:
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "cclab-sim", "--example", "run_toml"],
                   cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "examples" / "run_toml"


def run_binary(binary: Path, scenario_text: str) -> dict:
    """Run the engine binary on a scenario; its summary, per-link counters, peak RSS
    (MB) and the CPU seconds it used."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", dir=REFERENCE.parent, delete=False) as f:
        f.write(scenario_text)
        path = f.name
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([str(binary), path], capture_output=True, text=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        os.unlink(path)
    res = {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), "links": {}}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("peak_rss_kb"):
            res["rss_mb"] = int(parts[1]) / 1024.0
        elif line.startswith("trace_rows"):
            res["trace_rows"], res["pcap_bytes"] = int(parts[1]), int(parts[3])
        elif line.startswith("link "):
            res["links"][parts[1]] = int(parts[3])
            res.setdefault("util", float(parts[5]))
        elif len(parts) == 2:
            m = re.match(r"(Int|Num)\((.*)\)", parts[1])
            if m:
                res[parts[0]] = float(m.group(2))
    res["transmissions"] = sum(res["links"].values())
    return res


def long_flow_cases(binary: Path, repeat: int) -> bool:
    print(f"\nlong flows, 10 simulated s, DropTail buffer of one BDP (engine binary, median of {repeat}):\n")
    print(f"{'case':24} {'transmissions':>14} {'events/s (M)':>13} {'tx/s (M)':>9} {'ns/tx CPU':>10} "
          f"{'ns/tx wall':>10} {'util':>6}")
    ok = True
    for rate, delay, rtt in CASES:
        for flows in (10, 100):
            text = long_flows(rate, delay, rtt, flows, "10s")
            runs = [run_binary(binary, text) for _ in range(repeat)]
            cpu = statistics.median(r["cpu_time_s"] for r in runs)
            wall = statistics.median(r["wall_time_s"] for r in runs)
            r = runs[0]
            tx = r["transmissions"]
            ns = cpu / tx * 1e9
            ok &= ns <= TARGET_NS_PER_TX
            print(f"{rate + ' / ' + rtt + ', ' + str(flows) + ' flows':24} {tx:14,.0f} {r['events'] / wall / 1e6:13.1f} "
                  f"{tx / wall / 1e6:9.1f} {ns:10.1f} {wall / tx * 1e9:10.1f} {r['util']:6.3f}")
    print(f"\ntarget: at most {TARGET_NS_PER_TX:.0f} ns of CPU per link transmission in every case: "
          f"{'met' if ok else 'NOT MET'}")
    return ok


def controllers(binary: Path, repeat: int) -> bool:
    rate, delay, rtt = CASES[1]
    print(f"\ncontrollers, {rate} / {rtt}, 100 long flows, 10 simulated s (engine binary, median of {repeat} "
          f"interleaved runs):\n")
    print(f"{'protocol':22} {'transmissions':>14} {'ns/tx CPU':>10} {'/ newreno':>10} {'util':>6}")
    cpu = {label: [] for label, _, _ in CONTROLLERS}
    last = {}
    for _ in range(repeat):  # interleaved, so that a busy spell of the machine hits every protocol alike
        for label, protocol, tcp in CONTROLLERS:
            r = run_binary(binary, long_flows(rate, delay, rtt, 100, "10s", protocol, tcp))
            cpu[label].append(r["cpu_time_s"] / r["transmissions"] * 1e9)
            last[label] = r
    base = statistics.median(cpu["newreno"])
    ok = True
    for label, _, _ in CONTROLLERS:
        ns = statistics.median(cpu[label])
        ok &= ns / base <= TARGET_CONTROLLER_RATIO
        print(f"{label:22} {last[label]['transmissions']:14,.0f} {ns:10.1f} {ns / base:10.2f} {last[label]['util']:6.3f}")
    print(f"\ntarget: every controller within {TARGET_CONTROLLER_RATIO - 1:.0%} of NewReno's CPU per transmission: "
          f"{'met' if ok else 'NOT MET'}")
    return ok


# The rate senders of section 6: (label, the traffic class's protocol lines).
RATE_SENDERS = [
    ("newreno", 'protocol = "newreno"'),
    ("cbr (9.9 Mbps each)", 'protocol = "cbr"\ncc = { rate = "9.9Mbps" }'),
    ("cbr, random phases", 'protocol = "cbr"\ncc = { rate = "9.9Mbps" }\nphase = "random"'),
    ("pareto (19 Mbps on)", 'protocol = "pareto"\ncc = { rate = "19Mbps", on = "500ms", off = "500ms", shape = 1.5 }'),
    ("tfrc", 'protocol = "tfrc"'),
    ("tfrc (§4.5, §5.5 on)", 'protocol = "tfrc"\ncc = { discounting = true, oscillation_reduction = true }'),
    ("tfcbr", 'protocol = "tfcbr"'),
    ("rdtf", 'protocol = "rdtf"'),
    # RCP needs its router: the bottleneck's queue is RCP's (same drop-tail buffer).
    ("rcp (rcp bottleneck)", 'protocol = "rcp"'),
]


def rate_senders(binary: Path, repeat: int) -> bool:
    """Section 6: CPU per link transmission and per data packet of every rate sender
    against NewReno's, interleaved runs of the controllers section's case."""
    rate, delay, rtt = CASES[1]
    print(f"\nrate senders, {rate} / {rtt}, 100 long flows, 10 simulated s (engine binary, median of {repeat} "
          f"interleaved runs):\n")
    print(f"{'protocol':22} {'transmissions':>14} {'data packets':>13} {'ns/tx CPU':>10} {'/ newreno':>10} "
          f"{'ns/data pkt':>12} {'/ newreno':>10} {'util':>6}")
    per_tx = {label: [] for label, _ in RATE_SENDERS}
    per_data = {label: [] for label, _ in RATE_SENDERS}
    last = {}
    for _ in range(repeat):
        for label, protocol in RATE_SENDERS:
            queue = "rcp" if 'protocol = "rcp"' in protocol else "droptail"
            r = run_binary(binary, long_flows(rate, delay, rtt, 100, "10s", protocol, queue=queue))
            per_tx[label].append(r["cpu_time_s"] / r["transmissions"] * 1e9)
            per_data[label].append(r["cpu_time_s"] / r["links"]["bottleneck"] * 1e9)
            last[label] = r
    base_tx, base_data = statistics.median(per_tx["newreno"]), statistics.median(per_data["newreno"])
    ok_tx = ok_data = True
    for label, _ in RATE_SENDERS:
        tx, data = statistics.median(per_tx[label]), statistics.median(per_data[label])
        ok_tx &= tx / base_tx <= TARGET_CONTROLLER_RATIO
        ok_data &= data / base_data <= TARGET_CONTROLLER_RATIO
        r = last[label]
        print(f"{label:22} {r['transmissions']:14,.0f} {r['links']['bottleneck']:13,.0f} {tx:10.1f} {tx / base_tx:10.2f} "
              f"{data:12.1f} {data / base_data:10.2f} {r['util']:6.3f}")
    print(f"\ntarget: every rate sender within {TARGET_CONTROLLER_RATIO - 1:.0%} of NewReno's CPU per link transmission: "
          f"{'met' if ok_tx else 'NOT MET'}; per data packet: {'met' if ok_data else 'NOT MET'}")
    return ok_tx


def baseline_binary(rev: str) -> Path:
    """The engine binary of commit `rev` (its tree exported by git archive, built in
    its own target folder; both kept under target/bench-baseline for the next run)."""
    base = ROOT / "target" / "bench-baseline"
    commit = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    src = base / f"src-{commit}"
    if not (src / "Cargo.toml").is_file():
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "cclab-sim", "--example", "run_toml",
                    "--target-dir", str(base / "target")], cwd=src, check=True)
    return base / "target" / "release" / "examples" / "run_toml"


def tracing_off(binary: Path, rev: str, repeat: int) -> bool:
    """Section 7: the long-flow cases in the engine before tracing and in this one."""
    old = baseline_binary(rev)
    print(f"\ntracing off: the long-flow cases in the engine of {rev} (before [trace]) and in this one, CPU per "
          f"link transmission (median of {repeat} interleaved runs):\n")
    print(f"{'case':24} {'ns/tx before':>13} {'ns/tx now':>10} {'now / before':>13}")
    ok = True
    for rate, delay, rtt in CASES:
        for flows in (10, 100):
            text = long_flows(rate, delay, rtt, flows, "10s")
            before, now = [], []
            for _ in range(repeat):
                for b, out in ((old, before), (binary, now)):
                    r = run_binary(b, text)
                    out.append(r["cpu_time_s"] / r["transmissions"] * 1e9)
            ratio = statistics.median(n / b for n, b in zip(now, before))
            ok &= ratio <= TARGET_TRACE_OFF_RATIO
            print(f"{rate + ' / ' + rtt + ', ' + str(flows) + ' flows':24} {statistics.median(before):13.1f} "
                  f"{statistics.median(now):10.1f} {ratio:13.3f}")
    print(f"\ntarget: every case within {TARGET_TRACE_OFF_RATIO - 1:.0%} of the engine before tracing: "
          f"{'met' if ok else 'NOT MET'}")
    if shutil.which("valgrind"):
        print(f"\ninstructions executed (valgrind cachegrind, 2 simulated s of each case):\n")
        print(f"{'case':24} {'before':>14} {'now':>14} {'now / before':>13}")
        for rate, delay, rtt in CASES:
            for flows in (10, 100):
                text = long_flows(rate, delay, rtt, flows, "2s")
                before, now = instructions(old, text), instructions(binary, text)
                print(f"{rate + ' / ' + rtt + ', ' + str(flows) + ' flows':24} {before:14,} {now:14,} {now / before:13.3f}")
    return ok


def instructions(binary: Path, scenario_text: str) -> int:
    """Instructions a run of the engine binary executes (valgrind's cachegrind)."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", dir=REFERENCE.parent, delete=False) as f:
        f.write(scenario_text)
        path = f.name
    try:
        err = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                              str(binary), path], capture_output=True, text=True, check=True).stderr
    finally:
        os.unlink(path)
    return int(re.search(r"I\s+refs:\s+([\d,]+)", err).group(1).replace(",", ""))


# The traces of section 8: (label, the [trace] table added to the reference scenario).
TRACES = [
    ("10 short flows", 'flows = [{ class = "short", first = 10 }]'),
    ("long + 9 short flows", 'flows = [{ class = "long" }, { class = "short", first = 9 }]'),
    ("bottleneck queue", 'links = ["bottleneck"]'),
    ("bottleneck capture", 'pcap = ["bottleneck"]'),
]


def tracing_on(binary: Path, repeat: int) -> bool:
    """Section 8: the reference scenario with and without traces, CPU and memory."""
    text = re.sub(r'interval = "[^"]+"', 'interval = "0s"', REFERENCE.read_text())
    print(f"\ntracing on: the reference scenario (series off), CPU of the engine binary against the untraced run, "
          f"median of {repeat} interleaved runs; bytes per row from the peak RSS over the untraced run's:\n")
    print(f"{'traced':24} {'CPU (s)':>8} {'/ untraced':>11} {'rows':>11} {'pcap (MB)':>10} {'bytes/row':>10}")
    cpu = {label: [] for label, _ in [("untraced", "")] + TRACES}
    last = {}
    for _ in range(repeat):
        for label, table in [("untraced", "")] + TRACES:
            r = run_binary(binary, text + (f"\n[trace]\n{table}\n" if table else ""))
            cpu[label].append(r["cpu_time_s"])
            last[label] = r
    base = statistics.median(cpu["untraced"])
    ok = True
    for label, _ in [("untraced", "")] + TRACES:
        r = last[label]
        c = statistics.median(cpu[label])
        rows, pcap = r.get("trace_rows", 0), r.get("pcap_bytes", 0)
        extra = (r["rss_mb"] - last["untraced"]["rss_mb"]) * 1024 * 1024
        per_row = f"{extra / rows:10.1f}" if rows else f"{'':>10}"
        if "flows" in label:
            ok &= c / base <= TARGET_TRACE_ON_RATIO
        print(f"{label:24} {c:8.3f} {c / base:11.2f} {rows:11,} {pcap / 1e6:10.1f} {per_row}")
    print(f"\ntarget: 10 traced flows at most {TARGET_TRACE_ON_RATIO - 1:.0%} more CPU than untraced: "
          f"{'met' if ok else 'NOT MET'}")
    return ok


def memory(binary: Path) -> bool:
    text = re.sub(r'interval = "[^"]+"', 'interval = "0s"', REFERENCE.read_text())
    ref = {d: run_binary(binary, re.sub(r'duration = "[^"]+"', f'duration = "{d}"', text)) for d in ("2000s", "20000s")}
    many = {d: run_binary(binary, long_flows("1Gbps", "5ms", "10ms", 10_000, d))
            for d in ("10s", "100s")}
    print("\npeak resident memory of the engine binary (series off; the flows table is the only output kept):\n")
    print(f"  reference scenario, 2000 s / 20000 s:   {ref['2000s']['rss_mb']:6.1f} / {ref['20000s']['rss_mb']:6.1f} MB")
    print(f"  10,000 concurrent long flows, 10 s / 100 s: {many['10s']['rss_mb']:6.1f} / {many['100s']['rss_mb']:6.1f} MB"
          f"  ({many['100s']['transmissions']:,.0f} transmissions in the 100 s run)")
    ok = max(m["rss_mb"] for m in many.values()) <= TARGET_RSS_MB
    print(f"  target: at most {TARGET_RSS_MB:.0f} MB with 10,000 long flows: {'met' if ok else 'NOT MET'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each measurement (default 5)")
    ap.add_argument("--no-ns3", action="store_true", help="skip the ns-3 run")
    ap.add_argument("--no-ns2", action="store_true", help="skip the ns-2 run")
    ap.add_argument("--ns2-only", action="store_true", help="only the ns-2.35 side by side (section 5's second half)")
    ap.add_argument("--trace-baseline", default=TRACE_BASELINE, metavar="REV",
                    help=f"the engine without tracing to compare with (default {TRACE_BASELINE})")
    args = ap.parse_args()

    import cclab

    if args.ns2_only:
        ns2_side_by_side(cclab.validate(REFERENCE)["config"]["duration_ns"] / 1e9)
        return 0
    walls, events, api_walls = [], [], []
    for seed in range(1, args.repeat + 1):
        t0 = time.perf_counter()
        r = cclab.run(REFERENCE, seed=seed)
        api_walls.append(time.perf_counter() - t0)
        walls.append(r.summary["wall_time_s"])
        events.append(r.summary["events"])
    sim_s = r.summary["simulated_s"]
    wall = statistics.median(walls)
    ev = statistics.median(events)
    print(f"reference scenario: {REFERENCE.relative_to(ROOT)}, {sim_s:g} simulated s, {args.repeat} seeds\n")
    print(f"  engine wall time (median):              {wall:8.3f} s  ({wall / sim_s * 1e3:.4f} ms per simulated s)")
    print(f"  events (median), per second:            {ev:10,.0f}  {ev / wall / 1e6:.1f} M/s")
    print(f"  cclab.run() with its pandas tables:     {statistics.median(api_walls):8.3f} s")

    binary = engine_binary()
    met = long_flow_cases(binary, args.repeat)
    met &= controllers(binary, args.repeat)
    met &= rate_senders(binary, args.repeat)
    met &= tracing_off(binary, args.trace_baseline, args.repeat)
    met &= tracing_on(binary, args.repeat)
    met &= memory(binary)
    if not args.no_ns3:
        met &= side_by_side(sim_s)
    if not args.no_ns2:
        ns2_side_by_side(sim_s)
    return 0 if met else 1


def side_by_side(sim_s: float) -> bool:
    """ns-3 on the reference scenario, seed 1's arrivals; prints both and the ratio."""
    sys.path.insert(0, str(ROOT / "bench" / "ns3"))
    import ns3run

    binary = ns3run.ensure()
    flows = ns3run.flow_list(REFERENCE, 1)
    cc_walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        cc = ns3run.run_cclab(REFERENCE, 1, flows)  # the same arrivals, with ns-3's TCP behaviour
        cc_api = time.perf_counter() - t0
        cc_walls.append(cc.summary["wall_time_s"])
    cc_wall = statistics.median(cc_walls)
    ns = ns3run.run_ns3(REFERENCE, 1, flows, binary=binary)
    p = ns.perf
    ratio = p["wall_s"] / cc_wall
    print(f"\nside by side, seed 1's {len(flows)} flows replayed in both, {sim_s:g} simulated s "
          f"(cclab with ns-3's TCP behaviour: handshake, limited transmit, Impatient timer; median of 3)\n")
    print(f"{'measure':44} {'cclab':>12} {'ns-3 3.44':>12}")
    print(f"{'wall time of the run (s)':44} {cc_wall:12.3f} {p['wall_s']:12.2f}")
    print(f"{'wall ms per simulated s':44} {cc_wall / sim_s * 1e3:12.4f} {p['wall_s'] / sim_s * 1e3:12.2f}")
    print(f"{'events':44} {cc.summary['events']:12,.0f} {p['events']:12,.0f}")
    print(f"{'events per second (M)':44} {cc.summary['events'] / cc_wall / 1e6:12.2f} "
          f"{p['events'] / p['wall_s'] / 1e6:12.2f}")
    print(f"{'peak RSS of the simulator process (MB)':44} {'':>12} {p['peak_rss_kb'] / 1024:12.1f}")
    print(f"\nspeed-up over ns-3 on the same flows: x{ratio:.0f} (target x{TARGET_SPEEDUP:.0f}: "
          f"{'met' if ratio >= TARGET_SPEEDUP else 'NOT MET'}); cclab.run() with its Python tables: {cc_api:.2f} s")
    return ratio >= TARGET_SPEEDUP


def ns2_side_by_side(sim_s: float) -> None:
    """ns-2.35 on the reference scenario, seed 1's arrivals, with the scenario's own TCP
    parameters (1460-byte segments, 128 KiB window, initial window 10, as ns-2's agent
    variables: bench/ns2/ns2run.py), and cclab on the same list: both wall times and
    their ratio. Information, no target: ns-2 is not the baseline the speed target names."""
    sys.path.insert(0, str(ROOT / "bench" / "ns2"))
    import ns2run

    try:
        ns = ns2run.ensure()
    except ns2run.Missing as exc:
        print(f"\nns-2 skipped: {exc}")
        return
    flows = ns2run.flow_list(REFERENCE, 1)
    cc_walls, cc_cpus = [], []
    for _ in range(3):
        t0 = time.thread_time()  # the engine runs in this thread; the tables' Python is counted too
        cc_walls.append(ns2run.pairing.run_cclab(REFERENCE, 1, flows).summary["wall_time_s"])
        cc_cpus.append(time.thread_time() - t0)
    cc_wall, cc_cpu = statistics.median(cc_walls), statistics.median(cc_cpus)
    p = ns2run.run_ns2(REFERENCE, 1, flows, ns=ns).perf
    print(f"\nns-2.35 side by side, seed 1's {len(flows)} flows replayed in both, {sim_s:g} simulated s "
          f"(the scenario's TCP parameters in both; cclab median of 3)\n")
    print(f"{'measure':44} {'cclab':>12} {'ns-2.35':>12}")
    print(f"{'wall time of the run (s)':44} {cc_wall:12.3f} {p['process_wall_s']:12.2f}")
    print(f"{'CPU time (s; cclab: engine and its tables)':44} {cc_cpu:12.3f} {p['cpu_s']:12.2f}")
    print(f"{'wall ms per simulated s':44} {cc_wall / sim_s * 1e3:12.4f} {p['process_wall_s'] / sim_s * 1e3:12.2f}")
    print(f"{'peak RSS of the simulator process (MB)':44} {'':>12} {p['peak_rss_kb'] / 1024:12.1f}")
    print(f"\nspeed-up over ns-2.35 on the same flows: x{p['cpu_s'] / cc_cpu:.0f} in CPU time, "
          f"x{p['process_wall_s'] / cc_wall:.0f} in wall time")


if __name__ == "__main__":
    sys.exit(main())
