"""The background side of a testbed measurement, run inside the client namespace
(``python -m cclab.testbed.background ...``): background files arrive at the times of
a plan (Poisson arrivals of the scenario's background class: the chunks of [FB] §III)
and join the download manager's queue; the manager fetches them from the server under
a policy (at most m(t) at once).

The manager is ``cclab.bgtransfer`` (the "fetch" engineer's). Until it offers a queue
that accepts files while it runs, a stand-in here does what the simulator's access
control does for the fixed policies: FIFO queue, at most ⌊M⌋ active (``unlimited``: all),
each a plain ranged-free GET streamed to /dev/null. FAIRBAT and rate tracking need the
manager (they raise an error here until it lands).

Output (JSON in OUT): per file its arrival, start and finish (s since the start) and
bytes; a sample every 0.1 s of (time, active, waiting, bytes received so far).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from pathlib import Path

SAMPLE_S = 0.1


def policy_limit(access: dict | None) -> float:
    """The fixed limit of an access table: ``None`` (vanilla) is unlimited."""
    if access is None:
        return float("inf")
    if access.get("policy") == "static":
        return float(access["limit"])
    raise NotImplementedError(
        f"policy {access.get('policy')!r} needs the background-transfer manager (cclab bg fetch), "
        "not yet available to the testbed")


async def run(base_url: str, plan: list[tuple[float, int, str]], access: dict | None, duration: float,
              out: Path) -> None:
    import aiohttp

    limit = policy_limit(access)
    t0 = time.monotonic()
    waiting: asyncio.Queue = asyncio.Queue()
    files = [{"name": n, "size": s, "arrival": a, "start": None, "finish": None, "bytes": 0} for a, s, n in plan]
    state = {"active": 0, "bytes": 0}
    samples = []
    slots = asyncio.Semaphore(int(limit)) if limit != float("inf") else None

    async def download(session, f) -> None:
        try:
            f["start"] = time.monotonic() - t0
            state["active"] += 1
            async with session.get(f"{base_url}/{f['name']}") as r:
                r.raise_for_status()
                async for chunk in r.content.iter_chunked(1 << 16):
                    f["bytes"] += len(chunk)
                    state["bytes"] += len(chunk)
            f["finish"] = time.monotonic() - t0
        finally:
            state["active"] -= 1
            if slots is not None:
                slots.release()

    async def arrive() -> None:
        for f in files:
            await asyncio.sleep(max(0.0, t0 + f["arrival"] - time.monotonic()))
            await waiting.put(f)

    async def dispatch(session) -> None:
        tasks = set()
        while True:
            f = await waiting.get()
            if slots is not None:
                await slots.acquire()
            t = asyncio.create_task(download(session, f))
            tasks.add(t)
            t.add_done_callback(tasks.discard)

    async def sample() -> None:
        while True:
            samples.append((time.monotonic() - t0, state["active"], waiting.qsize(), state["bytes"]))
            await asyncio.sleep(SAMPLE_S)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # the runner stops us when the interactive side is done
        loop.add_signal_handler(sig, stop.set)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        jobs = [asyncio.create_task(c) for c in (arrive(), dispatch(session), sample())]
        try:
            await asyncio.wait_for(stop.wait(), timeout=duration)
        except asyncio.TimeoutError:
            pass
        for j in jobs:
            j.cancel()
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"files": files, "samples": samples, "manager": "stand-in"}))
    tmp.rename(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cclab.testbed.background")
    p.add_argument("base_url")
    p.add_argument("out", type=Path)
    p.add_argument("--plan", type=Path, required=True, help="JSON list of [arrival_s, size, name]")
    p.add_argument("--access", default="null", help="the access table as JSON (null: vanilla)")
    p.add_argument("--duration", type=float, required=True, help="longest run (s); SIGINT/SIGTERM end it sooner")
    a = p.parse_args(argv)
    plan = [tuple(x) for x in json.loads(a.plan.read_text())]
    asyncio.run(run(a.base_url, plan, json.loads(a.access), a.duration, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
