"""Measurements of `cclab bg daemon` (docs/bgtransfer.md, "The daemon: measured").

    .venv/bin/python bench/bgdaemon.py idle [--jobs 1000] [--seconds 60]
    .venv/bin/python bench/bgdaemon.py queued [--jobs 1000] [--seconds 30]
    .venv/bin/python bench/bgdaemon.py loopback [--size 200MB]
    .venv/bin/python bench/bgdaemon.py kills [--kills 10]
    .venv/bin/python bench/bgdaemon.py testbed [--jobs 20] [--seeds 3]   (root: namespaces + tbf)

idle: the daemon's CPU time (utime + stime of /proc/PID/stat) over SECONDS with JOBS
queued jobs (held by a not-before an hour away), and its resident memory (VmRSS) empty
and with them. queued: JOBS runnable jobs of 100 kB from a server limited to 50 kB/s,
the time to add them and the daemon's CPU over SECONDS while they wait at the host's
controller (each counted there from its add). loopback: one job of SIZE from `cclab bg serve` on 127.0.0.1, and
`cclab bg fetch` of the same file in the same run (the ratio is the daemon's cost).
kills: a daemon fetching a file from a rate-limited server killed with SIGKILL at a
random instant, restarted, KILLS times; per kill the bytes the server had sent and the
job's journal did not hold (what is fetched again) against the bound, and at the end the
file's SHA-256. testbed: 20 jobs of mixed priorities through a 10 Mbit/s tbf beside
Poisson interactive downloads, under FAIRBAT and without access control (unlimited),
the same downloads for both: interactive completion times and the jobs' finishing order.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cclab.bgtransfer.client import Client, DaemonError
from cclab.bgtransfer.units import parse_amount

PY = [sys.executable, "-m", "cclab.cli"]


def start_daemon(tmp: Path, *extra: str, prefix: list[str] | None = None) -> tuple[subprocess.Popen, Client]:
    sock = tmp / "run" / "d.sock"
    p = subprocess.Popen([*(prefix or []), *PY, "bg", "daemon", "--state", str(tmp / "state"), "--socket", str(sock),
                          "--quiet", *extra])
    c = Client(sock)
    deadline = time.monotonic() + 30
    while True:
        try:
            c.jobs()
            return p, c
        except DaemonError:
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the daemon did not start") from None
            time.sleep(0.05)


def start_server(root: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([*PY, "bg", "serve", str(root), "--port", "0", *extra], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    return p, line.split(" on ", 1)[1].split()[0]


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def wait_done(c: Client, ids: list[int], timeout: float = 3600) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        jobs = {j["id"]: j for j in c.jobs()["jobs"]}
        if all(jobs[i]["state"] in ("done", "failed", "cancelled") for i in ids):
            return jobs
        if time.monotonic() > deadline:
            raise RuntimeError(f"jobs did not end: {[jobs[i] for i in ids if jobs[i]['state'] != 'done']}")
        time.sleep(0.1)


def idle(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        p, c = start_daemon(Path(tmp))
        try:
            time.sleep(2)
            empty = rss_mb(p.pid)
            t = time.monotonic()
            for i in range(args.jobs):
                c.add(urls=[f"http://192.0.2.1/file-{i}.bin"], dest=f"{tmp}/dest", not_before="+1h",
                      priority=("high", "normal", "low")[i % 3])
            add_s = time.monotonic() - t
            time.sleep(2)
            c0, t0 = cpu_s(p.pid), time.monotonic()
            time.sleep(args.seconds)
            used, span = cpu_s(p.pid) - c0, time.monotonic() - t0
            full = rss_mb(p.pid)
            t = time.monotonic()
            listed = len(c.jobs()["jobs"])
            list_s = time.monotonic() - t
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
    print(f"RSS empty {empty:.1f} MB; {args.jobs} jobs added in {add_s:.2f} s ({add_s / args.jobs * 1e3:.2f} ms "
          f"each); RSS with them {full:.1f} MB; CPU over {span:.0f} s idle: {used:.2f} s "
          f"({used / span * 100:.3f} %); `jobs` of {listed} answered in {list_s * 1e3:.0f} ms")


def queued(args) -> None:
    """JOBS runnable jobs (not held) of one host whose server is slow: every job's chunk
    waits at the host's controller from its add; the cost of that per job."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "srv").mkdir()
        (tmp / "srv" / "f0.bin").write_bytes(os.urandom(100_000))
        for i in range(1, args.jobs):
            os.link(tmp / "srv" / "f0.bin", tmp / "srv" / f"f{i}.bin")
        srv, url = start_server(tmp / "srv", "--rate", "50k")
        p, c = start_daemon(tmp)
        try:
            time.sleep(2)
            t = time.monotonic()
            for i in range(args.jobs):
                c.add(urls=[f"{url}f{i}.bin"], dest=f"{tmp}/dest", priority=("high", "normal", "low")[i % 3])
            add_s = time.monotonic() - t
            c0, t0 = cpu_s(p.pid), time.monotonic()
            time.sleep(args.seconds)
            used, span = cpu_s(p.pid) - c0, time.monotonic() - t0
            data = c.jobs()
            host = data["hosts"][0]
            done = sum(j["state"] == "done" for j in data["jobs"])
            full = rss_mb(p.pid)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
            srv.kill()
            srv.wait()
    print(f"{args.jobs} runnable jobs of 100 kB from a 50 kB/s server: added in {add_s:.2f} s "
          f"({add_s / args.jobs * 1e3:.2f} ms each); over the next {span:.0f} s {done} done, CPU {used:.2f} s "
          f"({used / span * 100:.2f} %), RSS {full:.1f} MB; the controller: {host['waiting']} waiting, "
          f"{host['active']} active, limit {host['limit']:.2f}")


def loopback(args) -> None:
    size = int(parse_amount(args.size, what="--size", rate=False))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "srv").mkdir()
        with open(tmp / "srv" / "big.bin", "wb") as f:
            for _ in range(0, size, 1 << 22):
                f.write(os.urandom(min(1 << 22, size - f.tell())))
        srv, url = start_server(tmp / "srv")
        p, c = start_daemon(tmp)
        try:
            t = time.monotonic()
            job = c.add(urls=[url + "big.bin"], dest=str(tmp / "d1"))["id"]
            j = wait_done(c, [job])[job]
            daemon_s = time.monotonic() - t
            t = time.monotonic()
            subprocess.run([*PY, "bg", "fetch", url + "big.bin", "-d", str(tmp / "d2"), "--quiet"], check=True,
                           stdout=subprocess.DEVNULL)
            fetch_s = time.monotonic() - t
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
            srv.terminate()
            srv.wait()
    assert j["state"] == "done", j
    print(f"one job of {size / 1e6:.0f} MB on loopback: daemon {daemon_s:.2f} s ({size / daemon_s / 1e6:.0f} MB/s, "
          f"add to done, SHA-256 and rename included); `cclab bg fetch` {fetch_s:.2f} s "
          f"({size / fetch_s / 1e6:.0f} MB/s, process start included); ratio {daemon_s / fetch_s:.2f}")


def journaled(dest: Path, job: int) -> int:
    from cclab.bgtransfer.journal import Journal

    path = dest / ".cclab-bg" / f"job-{job}" / "journal.sqlite"
    if not path.exists():
        return 0
    j = Journal(path, readonly=True)
    try:
        return sum(e - s for r in j.files() for s, e in j.ranges(r["name"]))
    finally:
        j.close()


def kills(args) -> None:
    rate, size, chunk = 4_000_000, 24_000_000, "3MB"
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "srv").mkdir()
        data = os.urandom(size)
        (tmp / "srv" / "f.bin").write_bytes(data)
        srv, url = start_server(tmp / "srv", "--rate", str(rate))
        extra = ("--policy", "static:4", "--chunk-size", chunk)
        p, c = start_daemon(tmp, *extra)
        job = c.add(urls=[url + "f.bin"], dest=str(tmp / "d"), sha256=hashlib.sha256(data).hexdigest())["id"]
        worst, held = 0, 0
        try:
            for k in range(args.kills):
                time.sleep(rng.uniform(0.3, 1.5))
                if c.job(job)["state"] == "done":
                    break
                p.kill()
                p.wait()
                time.sleep(0.5)  # the server sees the connections die
                sent = json.loads(_get(url + "_cclab/stats?reset=1"))["bytes_by_path"].get("/f.bin", 0)
                grew = journaled(tmp / "d", job) - held
                held += grew
                worst = max(worst, sent - grew)
                print(f"kill {k + 1}: the server sent {sent} B since the last start, the journal grew {grew} B: "
                      f"{sent - grew} B to fetch again")
                p, c = start_daemon(tmp, *extra)
            j = wait_done(c, [job])[job]
            last = json.loads(_get(url + "_cclab/stats"))["bytes_by_path"].get("/f.bin", 0)
            same = (tmp / "d" / "f.bin").read_bytes() == data if j["state"] == "done" else False
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
            srv.terminate()
    print(f"job {j['state']}, the placed file equals the served one: {same}; the last run fetched {last} B = the "
          f"gaps {size - held} B: {last == size - held}; worst re-fetch {worst} B; bound rate x 1 s + "
          f"4 chunks x 64 KiB = {rate + 4 * 65536} B")


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    i = sub.add_parser("idle")
    i.add_argument("--jobs", type=int, default=1000)
    i.add_argument("--seconds", type=float, default=60)
    q = sub.add_parser("queued")
    q.add_argument("--jobs", type=int, default=1000)
    q.add_argument("--seconds", type=float, default=30)
    lo = sub.add_parser("loopback")
    lo.add_argument("--size", default="200MB")
    k = sub.add_parser("kills")
    k.add_argument("--kills", type=int, default=10)
    k.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("testbed")
    t.add_argument("--jobs", type=int, default=20)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--seeds", type=int, default=3)
    t.add_argument("--out", default="results/bgdaemon-testbed.json")
    args = ap.parse_args(argv)
    if args.what == "testbed":
        from bgdaemon_testbed import testbed

        testbed(args)
    else:
        {"idle": idle, "queued": queued, "loopback": loopback, "kills": kills}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
