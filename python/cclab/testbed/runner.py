"""``cclab testbed run``: measure each policy of a testbed scenario on the namespace
testbed (same interactive arrivals for every policy: common random numbers) and set
beside it the packet-level simulator's prediction of the same scenario."""
from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..outdir import Destination
from ..stats import mean_ci
from . import netns
from .agents import arrivals
from .netns import SERVER_ADDR, TestbedError, Topology, sh, wait_port
from .scenario import TestbedScenario

PORT, IPORT, ECHO_PORT = 80, 8080, 7  # background server, interactive server, echo
STATS = "/_cclab/stats"
#: Interactive downloads are ranged GETs of the first SIZE bytes of one file this big;
#: sizes above it are cut (P(exp. of mean 3 MB > 64 MB) = 5e-10).
BLOB_BYTES = 64 << 20


def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def measure_rtt(topo: Topology, count: int = 50) -> float:
    """The base RTT client -> server (s): the least of ``count`` one-byte TCP ping-pongs
    over an idle bottleneck (no ping binary is needed). It includes the Python and
    syscall time of both ends, so it is an upper bound of the kernel's RTT."""
    echo = subprocess.Popen(topo.exec_args(topo.server, *_py("-m", "cclab.testbed.agents", "echo", str(ECHO_PORT))),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(topo, topo.client, SERVER_ADDR, ECHO_PORT)
        out = sh(*topo.exec_args(topo.client, *_py("-m", "cclab.testbed.agents", "ping", SERVER_ADDR,
                                                    str(ECHO_PORT), str(count)))).stdout
        return float(min(json.loads(out)[1:]))
    finally:
        echo.kill()
        echo.wait()


def start_server(topo: Topology, root: Path, port: int = PORT) -> subprocess.Popen:
    """``cclab bg serve ROOT`` in the server namespace, listening on every address."""
    p = subprocess.Popen(topo.exec_args(topo.server, *_py("-m", "cclab.cli", "bg", "serve", str(root),
                                                          "--host", "0.0.0.0", "--port", str(port))),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(topo, topo.client, SERVER_ADDR, port)
    except TestbedError:
        p.kill()
        raise TestbedError(f"cclab bg serve did not start: {p.communicate()[1].decode()[-500:]}") from None
    return p


def write_random(path: Path, size: int, seed: int) -> None:
    """A file of ``size`` pseudo-random bytes (incompressible, reproducible)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 22)
            f.write(rng.bytes(n))
            left -= n


def interactive_plan(sc: TestbedScenario, seed: int) -> list:
    w = sc.web
    return arrivals(seed, 0, w.rate_per_s, sc.duration_s, w.mean_bytes, w.dist, w.shape, BLOB_BYTES)


def background_load(sc: TestbedScenario) -> tuple[int, float, int]:
    """(chunk bytes, demand bytes/s, chunks released during the measurement): the
    manager's chunk is the background class's mean size; its demand is the class's
    offered load C·ρ_b in payload bytes per second (the simulator's `load` counts payload)."""
    chunk = int(round(sc.bulk.mean_bytes))
    demand = sc.bulk.rate_per_s * sc.bulk.mean_bytes
    return chunk, demand, max(1, math.ceil(demand * sc.duration_s / chunk))


def run_policy(topo: Topology, work: Path, iplan: list, bg_urls: list[str], access: dict | None,
               sc: TestbedScenario) -> tuple[list[dict], dict]:
    """One measurement: the manager on the background files and the interactive
    downloads at once in the client namespace, the background server's counters polled
    over [0, duration]; it ends when the last interactive download has (the manager is
    then stopped). Returns the interactive records and the background's."""
    ipath, bpath, ppath = work / "interactive.jsonl", work / "background.json", work / "poll.json"
    dest = work / "dest"
    shutil.rmtree(dest, ignore_errors=True)
    for p in (ipath, bpath, ppath):
        p.unlink(missing_ok=True)
    (work / "iplan.json").write_text(json.dumps(iplan))
    chunk, demand, _ = background_load(sc)
    bg = subprocess.Popen(topo.exec_args(topo.client, *_py(
        "-m", "cclab.testbed.background", str(bpath), str(dest), *bg_urls, "--access", json.dumps(access),
        "--chunk", str(chunk), "--demand", repr(demand))), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    poll = subprocess.Popen(topo.exec_args(topo.client, *_py(
        "-m", "cclab.testbed.agents", "poll", f"http://{SERVER_ADDR}:{PORT}{STATS}", str(ppath),
        str(sc.duration_s))), stderr=subprocess.PIPE)
    try:
        sh(*topo.exec_args(topo.client, *_py("-m", "cclab.testbed.agents", "interactive",
                                            f"http://{SERVER_ADDR}:{IPORT}/blob", str(ipath), "--plan",
                                            str(work / "iplan.json"))), timeout=sc.duration_s + 600)
        if poll.wait(timeout=sc.duration_s + 60) != 0:
            raise TestbedError(f"polling the server failed: {poll.communicate()[1].decode()[-500:]}")
        # The measurement is over: the manager is stopped (what it had not fetched stays
        # in its journal). Its throughput and active count are the server's counters.
        if bg.poll() is None:
            bg.send_signal(signal.SIGINT)
        try:
            _, err = bg.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            bg.kill()
            _, err = bg.communicate()
    finally:
        for p in (bg, poll):
            if p.poll() is None:
                p.kill()
                p.wait()
    out = json.loads(bpath.read_text()) if bpath.exists() else {"status": "stopped at the end of the measurement",
                                                                  "stderr": err.decode()[-300:]}
    out["poll"] = json.loads(ppath.read_text())
    shutil.rmtree(dest, ignore_errors=True)
    return [json.loads(l) for l in ipath.read_text().splitlines()], out


def background_stats(poll: list, duration: float) -> tuple[float, float]:
    """(throughput bit/s over [0, duration], time average of the bodies in progress)
    from the server's counters sampled at (t, active, bytes)."""
    s = np.asarray(poll, dtype=float)
    if len(s) < 2:
        return math.nan, math.nan
    got = np.interp(duration, s[:, 0], s[:, 2]) - s[0, 2]
    dt = np.diff(s[:, 0])
    return got * 8 / (duration - s[0, 0]), float((s[:-1, 1] * dt).sum() / dt.sum())


def summarize(ct: np.ndarray) -> dict:
    ct = np.asarray(ct, dtype=float)
    m, h = mean_ci(ct)
    return {"flows": int(np.isfinite(ct).sum()), "mean_s": m, "ci95_s": h,
            "median_s": float(np.nanmedian(ct)) if len(ct) else math.nan,
            "p95_s": float(np.nanpercentile(ct, 95)) if len(ct) else math.nan}


#: Simulator runs of the testbed's horizon per policy (seeds 1..N), and the time they
#: run on after the last arrival so that the downloads that arrived finish.
HORIZON_SEEDS = 20
HORIZON_TAIL_S = 300.0


def _chunk_csv(sc: TestbedScenario, until: float, folder: Path) -> str:
    from .background import release_times

    chunk, demand, _ = background_load(sc)
    times = [t for t in release_times(math.ceil(demand * until / chunk), chunk, demand) if t < until]
    csv = folder / f"chunks-{until:g}.csv"
    csv.write_text("start,size,class\n" + "".join(f"{t!r},{chunk},{sc.background}\n" for t in times))
    return str(csv)


def _sim_numbers(sc: TestbedScenario, results: list, until: float | None) -> dict:
    """Pooled interactive completion times (flows arriving before ``until``, if given),
    background throughput and active transfers over [0, until] (else the summary's)."""
    import pandas as pd

    flows = pd.concat([r.flows[~r.flows.warmup] for r in results])
    web = flows[flows["class"] == sc.interactive]
    if until is not None:
        web = web[web.arrival < until]
    done = web[web.finished]
    out = summarize(done["completion_time"].to_numpy())
    out["unfinished"] = int((~web.finished).sum())
    bps, act = [], []
    for r in results:
        se = r.series[r.series.name == sc.background]
        if until is not None:
            se = se[se.time <= until]
            bps.append(se[se.metric == "throughput_bps"]["value"].mean())
        else:
            bps.append(r.summary.get(f"{sc.background}.throughput_bps", math.nan))
        metric = "access_active" if (se.metric == "access_active").any() else "active_flows"
        act.append(se[se.metric == metric]["value"].mean())
    out["background_bps"] = float(np.mean(bps))
    out["background_active"] = float(np.mean(act))
    out["sizes"] = done["size"].tolist()
    out["completion_times"] = done["completion_time"].tolist()
    return out


def predict(sc: TestbedScenario, access: dict | None, delay_s: float) -> dict:
    """The simulator's numbers for one policy: the same link with the testbed's base
    delay, the same Poisson interactive class, and the background as the manager makes
    it (equal chunks released at (k+1)·chunk/demand), two ways:

    * ``horizon`` (what the testbed's measurement should see): runs as long as one
      measurement, starting empty, no warm-up, seeds 1..HORIZON_SEEDS pooled; arrivals
      stop at the duration and the run goes on until the downloads finish;
    * ``steady``: the scenario's own duration, warm-up and seed (the long-run value).
    """
    from ..api import run
    from ..validation import validate

    with tempfile.TemporaryDirectory(prefix="cclab-testbed-sim-") as tmp:
        d = sc.duration_s
        h = sc.simulator_scenario(access, delay_s, _chunk_csv(sc, d, Path(tmp)))
        h.update(duration=f"{d + HORIZON_TAIL_S:g}s", warmup="0s", record={"interval": "1s"})
        next(c for c in h["traffic"] if c["name"] == sc.interactive)["stop"] = f"{d:g}s"
        horizon = _sim_numbers(sc, [run(h, seed=k) for k in range(1, HORIZON_SEEDS + 1)], d)
        steady_until = validate(sc.structure)["duration_s"]
        steady = _sim_numbers(sc, [run(sc.simulator_scenario(access, delay_s, _chunk_csv(sc, steady_until,
                                                                                          Path(tmp))))], None)
    return {**horizon, "steady": steady}


#: The file that marks a folder as an earlier testbed result, which a new run may replace.
RESULTS_FILE = "results.json"


def run(sc: TestbedScenario, out: Path, log=print) -> dict:
    """Measure every policy and write the results into ``out``, which is checked and
    locked before any work (cclab.outdir) and replaced whole at the end."""
    ok, why = netns.probe()
    if not ok:
        raise TestbedError(f"cannot build the testbed here: {why}")
    with Destination(out, marker=RESULTS_FILE) as dest:
        results = measure(sc, log)
        write(results, dest)
    return results


def measure(sc: TestbedScenario, log=print) -> dict:
    """Every policy on the testbed, each beside the simulator's prediction."""
    netem = netns.netem_available()
    delay = sc.delay_s if netem else 0.0
    if not netem:
        log(f"testbed: this kernel has no netem: no base delay (the scenario's {sc.delay_s * 1e3:g} ms is "
            "not applied); the RTT is the veth's plus queueing, and the simulator gets the measured base RTT")
    if sc.congestion != "reno":
        log(f"testbed: the kernel's {sc.congestion} runs on the testbed; the simulator has no {sc.congestion} and "
            "predicts with the classes' own protocol")
    results: dict = {"scenario": sc.name, "rate_bps": sc.rate_bps, "buffer_packets": sc.buffer_packets,
                     "congestion": sc.congestion, "duration_s": sc.duration_s, "seeds": sc.seeds,
                     "netem": netem, "policies": {}}
    records: dict[str, list] = {name: [] for name, _ in sc.policies}
    bgrec: dict[str, list] = {name: [] for name, _ in sc.policies}
    with tempfile.TemporaryDirectory(prefix="cclab-testbed-") as tmp, \
            Topology(sc.rate_bps, sc.buffer_packets, delay_s=delay, congestion=sc.congestion) as topo:
        topo.install_cleanup()
        work, files = Path(tmp), Path(tmp) / "files"
        files.mkdir()
        os.chmod(tmp, 0o755)
        rtt = measure_rtt(topo)
        results["base_rtt_s"] = rtt + 2 * delay
        log(f"testbed: {topo.prefix}: tbf {sc.rate_bps / 1e6:g} Mbit/s, pfifo {sc.buffer_packets} packets, "
            f"{sc.congestion}; base RTT {results['base_rtt_s'] * 1e3:.3f} ms (TCP ping-pong)")
        blob = work / "blob"
        blob.mkdir()
        write_random(blob / "blob", BLOB_BYTES, 0)
        chunk, demand, nchunks = background_load(sc)
        per_file = 10  # chunks per background file: a queue of large files
        bg_urls = []
        for k in range(math.ceil(nchunks / per_file)):
            name = f"bg-{k:04d}"
            write_random(files / name, chunk * min(per_file, nchunks - k * per_file), 1 + k)
            bg_urls.append(f"http://{SERVER_ADDR}:{PORT}/{name}")
        results["background_demand_bps"] = demand * 8
        results["background_chunk_bytes"] = chunk
        servers = [start_server(topo, files, PORT), start_server(topo, blob, IPORT)]
        try:
            for seed in range(1, sc.seeds + 1):
                iplan = interactive_plan(sc, seed)
                for name, access in sc.policies:
                    t = time.monotonic()
                    rec, bg = run_policy(topo, work, iplan, bg_urls, access, sc)
                    for r in rec:
                        r["seed"] = seed
                    records[name] += rec
                    bps, active = background_stats(bg["poll"], sc.duration_s)
                    bgrec[name].append({"seed": seed, "bps": bps, "active": active, "manager": bg})
                    errs = sum(r["error"] is not None for r in rec)
                    log(f"  seed {seed} {name}: {len(rec)} interactive downloads ({errs} failed), background "
                        f"{bps / 1e6:.2f} Mbit/s, {active:.2f} active, manager status {bg.get('status')}, "
                        f"{time.monotonic() - t:.0f} s")
        finally:
            for server in servers:
                server.kill()
                server.wait()
    for name, access in sc.policies:
        rec = [r for r in records[name] if r["error"] is None]
        ct = np.array([r["completion_time"] for r in rec])
        row = {"access": access, "testbed": summarize(ct)}
        row["testbed"]["failed"] = sum(r["error"] is not None for r in records[name])
        row["testbed"]["background_bps"] = float(np.nanmean([b["bps"] for b in bgrec[name]]))
        row["testbed"]["background_active"] = float(np.nanmean([b["active"] for b in bgrec[name]]))
        row["testbed"]["manager_status"] = [b["manager"].get("status") for b in bgrec[name]]
        row["simulator"] = predict(sc, access, results["base_rtt_s"] / 2)
        results["policies"][name] = row
    results["interactive"] = records
    results["background"] = bgrec
    return results


def table(results: dict) -> str:
    """The per-policy table: interactive completion times and the background, measured
    on the testbed, predicted by the simulator over the same horizon and in the long run."""
    head = (f"{'policy':<15} {'':<16} {'flows':>5} {'mean (s)':>15} {'median':>7} {'p95':>7} "
            f"{'bg Mbit/s':>9} {'bg active':>9}")
    lines = [head, "-" * len(head)]
    for name, row in results["policies"].items():
        for i, (label, r) in enumerate((("testbed", row["testbed"]), ("sim, same horizon", row["simulator"]),
                                        ("sim, long run", row["simulator"]["steady"]))):
            lines.append(f"{name if i == 0 else '':<15} {label:<16} {r['flows']:>5} "
                         f"{r['mean_s']:>7.2f} ± {r['ci95_s']:<5.2f} {r['median_s']:>7.2f} {r['p95_s']:>7.2f} "
                         f"{r['background_bps'] / 1e6:>9.2f} {r['background_active']:>9.2f}")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> Path:
    from ..plotting import pyplot, savefig

    plt = pyplot()
    names = list(results["policies"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), sharey=True, squeeze=False)
    bins = np.logspace(3, 7.5, 12)
    for ax, name in zip(axes[0], names):
        tb = [r for r in results["interactive"][name] if r["error"] is None]
        sim = results["policies"][name]["simulator"]
        for label, sizes, ct, style in (("testbed", [r["size"] for r in tb], [r["completion_time"] for r in tb], "o"),
                                        ("simulator", sim["sizes"], sim["completion_times"], "s")):
            sizes, ct = np.asarray(sizes, float), np.asarray(ct, float)
            ax.scatter(sizes, ct, s=6, alpha=0.35, marker=style)
            idx = np.digitize(sizes, bins)
            xs = [np.exp(np.log(sizes[idx == k]).mean()) for k in np.unique(idx)]
            ys = [ct[idx == k].mean() for k in np.unique(idx)]
            ax.plot(xs, ys, marker=style, label=f"{label} (binned mean)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("download size (bytes)")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("completion time (s)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{results['scenario']}: {results['rate_bps'] / 1e6:g} Mbit/s, {results['buffer_packets']} packets, "
                 f"base RTT {results['base_rtt_s'] * 1e3:.2f} ms", fontsize=10)
    fig.tight_layout()
    return savefig(fig, path, dpi=110)


def write(results: dict, out: "Path | Destination") -> None:
    """Everything into a temporary sibling folder that then replaces ``out`` whole, under
    a lock (cclab.outdir: an existing ``out`` is replaced only once the new one is complete);
    ``out`` may be a Destination already held."""
    held = out if isinstance(out, Destination) else None
    with (contextlib.nullcontext(held) if held else Destination(out, marker=RESULTS_FILE)) as dest, \
            dest.writing() as tmp:
        (tmp / "results.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
        (tmp / "table.txt").write_text(table(results) + "\n")
        plot(results, tmp / "completion-vs-size.png")
