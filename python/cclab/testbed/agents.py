"""Programs the testbed starts inside its namespaces (``python -m cclab.testbed.agents
COMMAND ...`` under ``ip netns exec``):

``echo PORT``                      a TCP echo server (for the RTT ping-pong)
``ping HOST PORT COUNT``           round trips of one byte over one TCP connection
                                   (TCP_NODELAY); prints the RTTs in seconds as JSON
``poll URL OUT DURATION``           samples ``cclab bg serve``'s counters (bodies in
                                   progress, body bytes sent) every 0.25 s
``interactive URL OUT --plan P`` Poisson arrivals of short downloads, each a fresh
                                   connection and a ranged GET of the first SIZE bytes
                                   of URL, timed from request to last byte; one JSON
                                   line per download in OUT
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import sys
import time
from pathlib import Path


def echo(port: int) -> None:
    srv = socket.create_server(("0.0.0.0", port), reuse_port=False)
    while True:
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            b = conn.recv(64)
            if not b:
                break
            conn.sendall(b)
        conn.close()


def ping(host: str, port: int, count: int) -> list[float]:
    """RTTs (s) of ``count`` one-byte exchanges; the first (SYN, cold caches) is
    dropped by the caller if it wants."""
    c = socket.create_connection((host, port), timeout=5)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out = []
    for _ in range(count):
        t = time.perf_counter()
        c.sendall(b"x")
        if c.recv(1) != b"x":
            raise RuntimeError("echo server closed the connection")
        out.append(time.perf_counter() - t)
        time.sleep(0.01)
    c.close()
    return out


def arrivals(seed: int, stream: int, rate: float, duration: float, mean: float, dist: str, shape: float,
             max_size: int) -> list[tuple[float, int]]:
    """The interactive downloads (start time s, size bytes) of one seed: Poisson
    arrivals of rate ``rate`` over [0, duration), sizes exponential of mean ``mean``
    or Pareto of that mean and shape ``shape``, in whole bytes, capped at ``max_size``.
    The same seed gives the same downloads under every policy (common random numbers);
    ``stream`` separates the classes (0 interactive, 1 background)."""
    import numpy as np

    rng = np.random.Generator(np.random.PCG64([seed, stream, 0x7e57bed]))
    out, t = [], 0.0
    while True:
        t += rng.exponential(1 / rate)
        if t >= duration:
            return out
        if dist == "exponential":
            s = rng.exponential(mean)
        else:  # Pareto (Lomax-free, classic): x_m = mean (shape-1)/shape
            s = mean * (shape - 1) / shape * (1 + rng.pareto(shape))
        out.append((t, int(min(max_size, max(1, math.ceil(s))))))


async def interactive(url: str, out: Path, plan: list[tuple[float, int]]) -> None:
    import aiohttp

    t0 = time.monotonic()
    results = []

    async def one(i: int, at: float, size: int) -> None:
        await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
        start = time.monotonic()
        got, err = 0, None
        try:
            # force_close: a fresh connection per download, as a short web flow
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True),
                                             timeout=aiohttp.ClientTimeout(total=None)) as s:
                async with s.get(url, headers={"Range": f"bytes=0-{size - 1}"}) as r:
                    if r.status not in (200, 206):
                        err = f"HTTP {r.status}"
                    async for chunk in r.content.iter_chunked(1 << 16):
                        got += len(chunk)
                        if got >= size:
                            break
        except Exception as exc:  # noqa: BLE001 - recorded per download
            err = f"{exc.__class__.__name__}: {exc}"
        end = time.monotonic()
        results.append({"id": i, "arrival": at, "size": size, "start": start - t0, "finish": end - t0,
                        "completion_time": end - start, "bytes": got, "error": err})

    await asyncio.gather(*(one(i, at, size) for i, (at, size) in enumerate(plan)))
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in sorted(results, key=lambda r: r["id"])))
    tmp.rename(out)


def poll(url: str, out: Path, duration: float, interval: float = 0.25) -> None:
    """(t, active bodies, body bytes sent) of a ``cclab bg serve`` every ``interval`` s."""
    import urllib.request

    t0 = time.monotonic()
    rows = []
    while True:
        t = time.monotonic() - t0
        with urllib.request.urlopen(url, timeout=5) as r:
            st = json.loads(r.read())
        rows.append((t, st["active"], st["bytes_sent"]))
        if t >= duration:
            break
        time.sleep(max(0.0, min(interval, duration - t)))
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows))
    tmp.rename(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cclab.testbed.agents")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("echo")
    e.add_argument("port", type=int)
    g = sub.add_parser("ping")
    g.add_argument("host")
    g.add_argument("port", type=int)
    g.add_argument("count", type=int)
    q = sub.add_parser("poll")
    q.add_argument("url")
    q.add_argument("out", type=Path)
    q.add_argument("duration", type=float)
    i = sub.add_parser("interactive")
    i.add_argument("url")
    i.add_argument("out", type=Path)
    i.add_argument("--plan", type=Path, required=True, help="JSON list of [start_s, size_bytes]")
    a = p.parse_args(argv)
    if a.cmd == "echo":
        echo(a.port)
    elif a.cmd == "ping":
        print(json.dumps(ping(a.host, a.port, a.count)))
    elif a.cmd == "poll":
        poll(a.url, a.out, a.duration)
    else:
        plan = [tuple(x) for x in json.loads(a.plan.read_text())]
        asyncio.run(interactive(a.url, a.out, plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
