"""`bench/bgdaemon.py testbed`: the daemon on the namespace testbed (python/cclab/testbed).

server ─ router (tbf 10 Mbit/s over a pfifo of 100 packets) ─ client. In the server
namespace `cclab bg serve` gives JOBS files of 3 MB (port 80) and the interactive blob
(port 8080); in the client namespace `cclab bg daemon` fetches the JOBS jobs (3 MB
chunks: the papers' micro-flow), added at once in a seeded random order with mixed
priorities (7 high, 7 normal, 6 low of 20), while the testbed's interactive agent makes
Poisson downloads (1 a second, exponential sizes of mean 300 kB: load 0.24) for 60 s.
Run once with FAIRBAT (the testbed scenario's parameters: τ = 4, T = 20 s, absolute gains
0.05 → 0.01 on the harmonic schedule, trend 0.03) and once without access control (unlimited: every
chunk at once, as a plain downloader), the same interactive downloads in both; the FAIRBAT
run reports its limit's trajectory (sampled twice a second from `jobs`).
"""
from __future__ import annotations

import json
import random
import signal
import statistics
import subprocess
import time
from pathlib import Path

from bgdaemon import PY, start_daemon

FAIRBAT = ["--policy", "fairbat", "--param", "tau=4", "--param", "period=20", "--param", "gain_start=0.05",
           "--param", "gain_end=0.01", "--param", "gain_scale=none", "--param", "gain_schedule=harmonic",
           "--param", "trend=0.03"]
POLICIES = {"FAIRBAT": FAIRBAT, "unlimited": ["--policy", "unlimited"]}
JOB_BYTES = 3_000_000


def one(topo, work: Path, name: str, policy: list[str], prios: list[str], plan: Path) -> dict:
    from cclab.testbed.netns import SERVER_ADDR
    from cclab.testbed.runner import IPORT, PORT

    tmp = work / name
    p, c = start_daemon(tmp, "--chunk-size", str(JOB_BYTES), *policy, prefix=topo.exec_args(topo.client))
    out = tmp / "interactive.jsonl"
    t0 = time.monotonic()
    agent = subprocess.Popen(topo.exec_args(topo.client, *PY[:1], "-m", "cclab.testbed.agents", "interactive",
                                            f"http://{SERVER_ADDR}:{IPORT}/blob", str(out), "--plan", str(plan)))
    ids = {c.add(urls=[f"http://{SERVER_ADDR}:{PORT}/job{i:02d}.bin"], dest=str(tmp / "dest"), priority=pr, size=JOB_BYTES)["id"]: pr
           for i, pr in enumerate(prios)}
    limits = []  # (t, the host controller's limit, chunks in flight): sampled twice a second
    while True:
        data = c.jobs()
        jobs = {j["id"]: j for j in data["jobs"]}
        limits += [(time.monotonic() - t0, h["limit"], h["active"]) for h in data["hosts"] if not h["idle"]]
        if all(jobs[i]["state"] in ("done", "failed", "cancelled") for i in ids) or time.monotonic() - t0 > 900:
            break
        time.sleep(0.5)
    done_s = time.monotonic() - t0
    agent.wait(900)
    p.send_signal(signal.SIGTERM)
    p.wait(30)
    ct = [r["completion_time"] for r in map(json.loads, out.read_text().splitlines()) if r["error"] is None]
    finish = sorted(ids, key=lambda i: jobs[i]["finished_at"])
    first = min(j["added_at"] for j in jobs.values())
    active = [a for _, _, a in limits]
    return {"policy": name, "all_jobs_done_s": done_s, "interactive": ct, "limits": limits,
            "mean_active": sum(active) / max(1, len(active)),
            "states": sorted({j["state"] for j in jobs.values()}),
            "finish_order": [ids[i] for i in finish],
            "finish_s": {pr: [jobs[i]["finished_at"] - first for i in finish if ids[i] == pr]
                         for pr in ("high", "normal", "low")}}


def inversions(order: list[str]) -> int:
    """Pairs finishing against their priorities (a lower one before a higher one)."""
    rank = {"high": 0, "normal": 1, "low": 2}
    return sum(rank[a] > rank[b] for i, a in enumerate(order) for b in order[i + 1:])


def report(res: dict) -> None:
    ct = sorted(res["interactive"])
    q = statistics.quantiles(ct, n=20)
    fs = res["finish_s"]
    print(f"{res['policy']:>9}: interactive downloads {len(ct)}, completion time mean {statistics.mean(ct):.3f} s, "
          f"median {statistics.median(ct):.3f} s, 95th percentile {q[18]:.3f} s; the 20 jobs done in "
          f"{res['all_jobs_done_s']:.0f} s (chunks in flight {res['mean_active']:.2f} on average); mean finish high {statistics.mean(fs['high']):.0f} s, normal "
          f"{statistics.mean(fs['normal']):.0f} s, low {statistics.mean(fs['low']):.0f} s; finishing order "
          f"{''.join(p[0] for p in res['finish_order'])} ({inversions(res['finish_order'])} inversions)")
    lim = [(t, m) for t, m, _ in res["limits"] if m is not None]
    if lim:
        span = lim[-1][0] - lim[0][0]
        mean = sum(m * (t1 - t0) for (t0, m), (t1, _) in zip(lim, lim[1:])) / span if span > 0 else lim[0][1]
        moves = [f"{m:.2f} at {t:.0f} s" for (_, p), (t, m) in zip(lim, lim[1:]) if m != p]
        print(f"{'':>9}  limit: min {min(m for _, m in lim):.2f}, time mean {mean:.2f}, max "
              f"{max(m for _, m in lim):.2f}, final {lim[-1][1]:.2f}; from {lim[0][1]:.2f}: "
              f"{', '.join(moves) or 'never moved'}")


def testbed(args) -> None:
    from cclab.testbed import netns
    from cclab.testbed.runner import BLOB_BYTES, IPORT, PORT, start_server, write_random

    ok, why = netns.probe()
    if not ok:
        raise SystemExit(f"testbed unavailable: {why}")
    work = Path(args.out).with_suffix("")
    (work / "bg").mkdir(parents=True, exist_ok=True)
    (work / "int").mkdir(exist_ok=True)
    for i in range(args.jobs):
        write_random(work / "bg" / f"job{i:02d}.bin", JOB_BYTES, i)
    write_random(work / "int" / "blob", BLOB_BYTES, 999)
    topo = netns.Topology(rate_bps=10e6, buffer_packets=100)
    topo.install_cleanup()
    runs = []
    with topo:
        servers = [start_server(topo, work / "bg", PORT), start_server(topo, work / "int", IPORT)]
        try:
            for seed in range(args.seed, args.seed + args.seeds):
                runs.append(one_seed(topo, work, seed, args.jobs))
        finally:
            for s in servers:
                s.kill()
                s.wait()
    Path(args.out).write_text(json.dumps(runs, indent=1))
    ratios = [statistics.mean(r["results"][0]["interactive"]) / statistics.mean(r["results"][1]["interactive"])
              for r in runs]
    print(f"interactive mean completion time, FAIRBAT / unlimited, per seed: "
          f"{', '.join(f'{x:.2f}' for x in ratios)}")


def one_seed(topo, work: Path, seed: int, n_jobs: int) -> dict:
    """Both policies on one seed's interactive downloads and order of priorities."""
    from cclab.testbed.agents import arrivals
    from cclab.testbed.runner import BLOB_BYTES

    rng = random.Random(seed)
    n_high = round(n_jobs * 0.35)
    prios = ["high"] * n_high + ["normal"] * n_high + ["low"] * (n_jobs - 2 * n_high)
    rng.shuffle(prios)
    plan = work / f"plan-{seed}.json"
    plan.write_text(json.dumps(arrivals(seed, 0, 1.0, 60.0, 300_000, "exponential", 0.0, BLOB_BYTES)))
    results = []
    for name, policy in POLICIES.items():
        results.append(one(topo, work / f"seed{seed}", name, policy, prios, plan))
        print(f"seed {seed} ", end="")
        report(results[-1])
    return {"seed": seed, "priorities_added": prios, "results": results}
