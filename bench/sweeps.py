"""Sweep and result-store benchmark (docs/performance.md, "Sweeps and the result store").

1. Store overhead per run, for a tiny run (one 10 Mbps link, Poisson short flows and
   a long flow, 1 simulated s; bench/crashtest.py's TINY): the engine alone; the
   worker's share (its tables as Arrow, Parquet bytes, scalar metrics); the store's
   share (files, digests, rename, index row) with group commit and fsync (the
   default), with a commit per run, and without fsync; and a whole serial sweep per
   run minus the engine (validation, keys, index look-ups included). Target: < 5 ms.
2. A 10,000-run sweep of tiny scenarios end to end on the local pool (every core),
   then the same sweep again (every run cached), the aggregate table, the store's
   size, and the peak memory of the sweeping process.
3. The same sweeps on a 2-worker dask LocalCluster against the 2-process local pool
   and one process (serial): wall time including start-up, and throughput once
   running, for tiny runs and for runs of about 50 ms of engine time.

    .venv/bin/python bench/sweeps.py            # everything (15 minutes on the shared 2-core machine under load)
    .venv/bin/python bench/sweeps.py --quick    # smaller counts
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cclab import _core
from cclab.sweeps import Store, Sweep, engine_version, sweep
from crashtest import TINY  # bench/crashtest.py, beside this file
from cclab.sweeps.worker import execute


def _median_ms(f, n: int, repeat: int = 5) -> float:
    """Median over ``repeat`` rounds of the mean wall time of ``n`` calls, in ms."""
    return _timed(f, n, repeat)[0]


def _timed(f, n: int, repeat: int = 5) -> tuple[float, float]:
    """Medians over ``repeat`` rounds of the mean wall time and the mean CPU time of this
    process (user + system) of ``n`` calls, in ms. On a machine shared with other jobs the
    wall time grows with their load; the CPU time is what a run costs."""
    f()
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            f()
        walls.append((time.perf_counter() - t0) / n * 1e3)
        cpus.append((time.process_time() - c0) / n * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def overhead(n: int, tmp: Path) -> dict:
    eng = engine_version()
    run = Sweep.build(TINY, seeds=[1]).expand(eng)[0]
    engine, engine_cpu = _timed(lambda: _core.run_config(run.config, None), n)
    worker, worker_cpu = _timed(lambda: execute(run.config, eng, run.key), n)
    payload = execute(run.config, eng, run.key)
    out = {"engine_ms": engine, "worker_ms": worker, "worker_share_ms": worker - engine,
           "engine_cpu_ms": engine_cpu, "worker_share_cpu_ms": worker_cpu - engine_cpu,
           "files_bytes": sum(len(b) for b in payload["files"].values())}
    for label, kw in (("put_group_fsync", {}), ("put_each_fsync", {"batch_runs": 1}),
                      ("put_group_nofsync", {"durable": False})):
        walls, cpus = [], []
        for r in range(5):
            root = tmp / f"{label}-{r}"
            with Store(root, **kw) as st:
                keys = [f"{r:02d}{i:062x}" for i in range(n)]
                t0, c0 = time.perf_counter(), time.process_time()
                for k in keys:
                    st.put(k, config=run.config, engine=eng, seed=1, name="tiny", payload=payload, defer=True)
                st.flush()
                walls.append((time.perf_counter() - t0) / n * 1e3)
                cpus.append((time.process_time() - c0) / n * 1e3)
            shutil.rmtree(root)
        out[f"{label}_ms"], out[f"{label}_cpu_ms"] = statistics.median(walls), statistics.median(cpus)
    # a whole serial sweep, per run, minus the engine's time
    sw = Sweep.build(TINY, grid={"traffic[short].load": [0.2, 0.4, 0.6, 0.8]}, seeds=max(1, n // 4), name="o")
    walls, cpus = [], []
    for r in range(3):
        root = tmp / f"sweep-{r}"
        t0, c0 = time.perf_counter(), time.process_time()
        res = sweep(sw, store=root, cluster="serial", progress=False)
        walls.append((time.perf_counter() - t0) / res.stats.ran * 1e3)
        cpus.append((time.process_time() - c0) / res.stats.ran * 1e3)
        shutil.rmtree(root)
    out["serial_sweep_ms_per_run"], out["serial_sweep_cpu_ms_per_run"] = statistics.median(walls), statistics.median(cpus)
    out["serial_sweep_overhead_ms"] = out["serial_sweep_ms_per_run"] - engine
    out["serial_sweep_overhead_cpu_ms"] = out["serial_sweep_cpu_ms_per_run"] - engine_cpu
    out["store_overhead_ms"] = out["worker_share_ms"] + out["put_group_fsync_ms"]
    out["store_overhead_cpu_ms"] = out["worker_share_cpu_ms"] + out["put_group_fsync_cpu_ms"]
    return out


def _cpu_all() -> float:
    """CPU seconds (user + system) of this process and of its children that have ended."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def tiny_sweep(runs: int, name: str, duration: str | None = None) -> Sweep:
    sc = copy.deepcopy(TINY)
    if duration:
        sc["duration"] = duration
        sc["record"] = {"interval": "1s"}
    loads, limits = [0.2, 0.4, 0.6, 0.8], ["10pkts", "20pkts", "40pkts", "80pkts", "160pkts"]
    seeds = max(1, runs // (len(loads) * len(limits)))
    return Sweep.build(sc, grid={"traffic[short].load": loads, "links[bn].queue.limit": limits}, seeds=seeds,
                       name=name)


def ten_thousand(runs: int, tmp: Path) -> dict:
    sw = tiny_sweep(runs, "ten-thousand")
    root = tmp / "store10k"
    c0 = _cpu_all()
    t0 = time.perf_counter()
    first = sweep(sw, store=root, progress=False)
    t_first = time.perf_counter() - t0
    cpu_first = _cpu_all() - c0  # the sweeping process and its pool's (reaped) processes
    t0 = time.perf_counter()
    again = sweep(sw, store=root, progress=False)
    t_again = time.perf_counter() - t0
    t0 = time.perf_counter()
    agg = again.aggregate()
    t_agg = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    with Store(root, readonly=True) as st:
        problems = st.verify()
    shutil.rmtree(root)
    return {"runs": first.stats.runs, "ran": first.stats.ran, "failed": first.stats.failed,
            "executor": first.stats.executor, "first_s": t_first, "runs_per_s": first.stats.ran / t_first,
            "cpu_s": cpu_first, "cpu_ms_per_run": cpu_first / first.stats.ran * 1e3,
            "again_s": t_again, "again_ran": again.stats.ran, "aggregate_s": t_agg, "aggregate_rows": len(agg),
            "store_mb": size / 1e6, "verify_problems": len(problems),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def speedup(runs: int, duration: str | None, tmp: Path) -> dict:
    out = {}
    sw = tiny_sweep(runs, f"speed-{duration or 'tiny'}", duration)
    eng = engine_version()
    one = sw.expand(eng)[0]
    out["engine_ms"] = _median_ms(lambda: _core.run_config(one.config, None), 3 if duration else 200, repeat=3)
    for label, cluster, workers in (("serial", "serial", None), ("pool2", None, 2), ("localcluster2", "local:2", None)):
        root = tmp / f"speed-{label}"
        c0 = _cpu_all()
        t0 = time.perf_counter()
        res = sweep(sw, store=root, cluster=cluster, workers=workers, progress=False)
        wall = time.perf_counter() - t0
        cpu = _cpu_all() - c0  # with the pool's or the cluster's processes, reaped when it closed
        shutil.rmtree(root)
        out[label] = {"wall_s": wall, "runs_per_s": res.stats.ran / wall, "executor": res.stats.executor,
                      "cpu_ms_per_run": cpu / res.stats.ran * 1e3}
    # steady state: the same executors, start-up excluded (timed inside an open executor)
    from cclab.sweeps.executors import make_executor

    runs_list = sw.expand(eng)
    for label, cluster, workers in (("pool2", None, 2), ("localcluster2", "local:2", None)):
        with make_executor(cluster, workers) as ex:
            warm = list(ex.run([(r.key, r.config) for r in runs_list[:4]], eng))  # workers up and warm
            t0 = time.perf_counter()
            n = sum(1 for _ in ex.run([(r.key, r.config) for r in runs_list], eng))
            out[label]["steady_runs_per_s"] = n / (time.perf_counter() - t0)
            del warm
    out["runs"] = len(runs_list)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller counts (a minute)")
    ap.add_argument("--json", action="store_true", help="print the measurements as JSON")
    ap.add_argument("--only", choices=("overhead", "10k", "speedup"), default=None)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="cclab-bench-sweeps-", dir=os.environ.get("CCLAB_BENCH_TMP")))
    res = {"load_before": os.getloadavg()}
    try:
        if args.only in (None, "overhead"):
            res["overhead"] = overhead(200 if args.quick else 1000, tmp)
        if args.only in (None, "10k"):
            res["ten_thousand"] = ten_thousand(1000 if args.quick else 10_000, tmp)
        if args.only in (None, "speedup"):
            res["speedup_tiny"] = speedup(400 if args.quick else 2000, None, tmp)
            res["speedup_50ms"] = speedup(40 if args.quick else 120, "120s", tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"load average before {res['load_before'][0]:.2f}, after {res['load_after'][0]:.2f} (2 cores)")
    if "overhead" in res:
        o = res["overhead"]
        print("\n| tiny run (1 simulated s) | wall ms per run | CPU ms per run |\n|---|---:|---:|")
        rows = [(label, f"{k}_ms", f"{k}_cpu_ms") for k, label in (
            ("engine", "engine alone (`run_config`)"),
            ("worker_share", "worker's share: Arrow tables, Parquet bytes, metrics"),
            ("put_group_fsync", "store's share: group commit, flushed to disk (default)"),
            ("put_each_fsync", "store's share: a commit and a flush per run"),
            ("put_group_nofsync", "store's share: group commit, not flushed"),
            ("store_overhead", "**store overhead** (worker's + store's share, default)"))]
        rows += [("a serial sweep, per run", "serial_sweep_ms_per_run", "serial_sweep_cpu_ms_per_run"),
                 ("a serial sweep, per run, minus the engine", "serial_sweep_overhead_ms",
                  "serial_sweep_overhead_cpu_ms")]
        for label, wall, cpu in rows:
            print(f"| {label} | {o[wall]:.3f} | {o[cpu]:.3f} |")
        print(f"\n(target: store overhead < 5 ms; {o['files_bytes']} bytes of Parquet per run)")
    if "ten_thousand" in res:
        t = res["ten_thousand"]
        print(f"\n{t['runs']:,}-run sweep on {t['executor']}: {t['first_s']:.1f} s ({t['runs_per_s']:.0f} runs/s), "
              f"{t['failed']} failed, {t['cpu_ms_per_run']:.1f} ms of CPU per run (all processes); again (all cached): {t['again_s']:.2f} s, {t['again_ran']} ran; aggregate "
              f"({t['aggregate_rows']} rows): {t['aggregate_s']:.2f} s; store {t['store_mb']:.1f} MB, "
              f"verify: {t['verify_problems']} problems; peak RSS {t['peak_rss_mb']:.0f} MB")
    for key, what in (("speedup_tiny", "tiny runs"), ("speedup_50ms", "120-simulated-s runs")):
        if key not in res:
            continue
        s = res[key]
        print(f"\n{s['runs']} {what} (engine {s['engine_ms']:.2f} ms each)\n"
              "| executor | wall, start-up included | runs/s | runs/s once running | CPU ms per run, every process |\n"
              "|---|---:|---:|---:|---:|")
        for label in ("serial", "pool2", "localcluster2"):
            e = s[label]
            steady = e.get("steady_runs_per_s")
            print(f"| {e['executor']} | {e['wall_s']:.2f} s | {e['runs_per_s']:.1f} | "
                  f"{'' if steady is None else f'{steady:.1f}'} | {e['cpu_ms_per_run']:.1f} |")
        print(f"LocalCluster / local pool: {s['pool2']['wall_s'] / s['localcluster2']['wall_s']:.2f}x end to end, "
              f"{s['localcluster2']['steady_runs_per_s'] / s['pool2']['steady_runs_per_s']:.2f}x once running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
