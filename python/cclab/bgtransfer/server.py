"""`cclab bg serve DIR`: a small static file server for tests and demos of the
background-transfer manager, on aiohttp.web.

What it implements of RFC 9110 (HTTP semantics):

* GET and HEAD of the regular files under DIR (never outside it: paths are resolved and
  checked; dot-files and folders are not served); 404 otherwise.
* Validators (§8.8): a strong ``ETag`` made of the file's size and modification time,
  and ``Last-Modified``.
* Single byte ranges (§14.1.2): ``bytes=a-b``, ``bytes=a-``, ``bytes=-n``, answered with
  206 and ``Content-Range: bytes a-b/size``; ``Accept-Ranges: bytes`` on every file.
  A range starting at or beyond the end (or a suffix of 0 bytes) is unsatisfiable: 416
  with ``Content-Range: bytes */size`` (§14.4, §15.5.17). A syntactically invalid range
  or a request for several ranges is ignored (200 with the whole file), which §14.2
  allows ("A server MAY ignore the Range header field").
* ``If-Range`` (§13.1.5): the range is served only if the validator matches the
  current ETag (strong comparison) or equals Last-Modified; otherwise the whole file.

Rate limit (``--rate`` total, ``--conn-rate`` per connection): token buckets, in bytes
per second, the body is sent in blocks and each block first takes its bytes from
the bucket(s) (a deficit is slept off: the bucket may go negative, so waiting
connections are served roughly in turn). Bucket depth: one block (at most 64 KiB
and about 20 ms of the rate), so a burst is at most one block per connection.

Fault injection for tests: ``--fail-every N`` answers every N-th GET of a file with 503;
``--drop-every N`` sends only the first half of every N-th GET's body, then closes the
connection; ``--ignore-range`` answers every GET with 200 and the whole file (a server
without range support).

Counters (requests, bytes of body sent per path, bodies in progress and their maximum)
are served as JSON at ``/_cclab/stats`` (``?reset=1`` zeroes them after reading), so
that tests and the testbed can check what the manager did on the wire.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

STATS_PATH = "/_cclab/stats"
MAX_BLOCK = 64 * 1024


@dataclass
class Stats:
    """What the server did (shared by restarts of a test server)."""

    requests: int = 0
    gets: int = 0
    heads: int = 0
    statuses: Counter = field(default_factory=Counter)
    bytes_sent: int = 0
    bytes_by_path: Counter = field(default_factory=Counter)
    active: int = 0
    max_active: int = 0
    max_active_by_path: Counter = field(default_factory=Counter)
    aborted: int = 0

    def to_dict(self) -> dict:
        return {
            "requests": self.requests,
            "gets": self.gets,
            "heads": self.heads,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "bytes_sent": self.bytes_sent,
            "bytes_by_path": dict(sorted(self.bytes_by_path.items())),
            "active": self.active,
            "max_active": self.max_active,
            "aborted": self.aborted,
        }

    def reset(self) -> None:
        active = self.active
        self.__init__()  # type: ignore[misc]
        self.active = self.max_active = active


class TokenBucket:
    """A token bucket of ``rate`` bytes per second and depth ``burst`` bytes."""

    def __init__(self, rate: float, burst: float):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.last = time.monotonic()

    async def take(self, n: int) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        self.tokens -= n
        if self.tokens < 0:
            await asyncio.sleep(-self.tokens / self.rate)


def block_size(*rates: float | None) -> int:
    """The body is sent in blocks: 64 KiB, or about 20 ms of the slowest rate (at least 1 KiB)."""
    limits = [r for r in rates if r]
    if not limits:
        return MAX_BLOCK
    return int(max(1024, min(MAX_BLOCK, min(limits) * 0.02)))


@dataclass
class ServeOptions:
    rate: float | None = None
    conn_rate: float | None = None
    fail_every: int = 0
    drop_every: int = 0
    ignore_range: bool = False


def parse_range(header: str, size: int) -> tuple[int, int] | None | str:
    """The one byte range [first, last] that ``header`` asks of a file of ``size`` bytes;
    None if the header is to be ignored (invalid, not bytes, several ranges);
    "unsatisfiable" for a 416 (RFC 9110 §14.1.2, §14.2)."""
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first_s, dash, last_s = spec.strip().partition("-")
    if not dash:
        return None
    first_s, last_s = first_s.strip(), last_s.strip()
    try:
        if not first_s:  # suffix range: the last n bytes
            if not last_s.isdigit():
                return None
            n = int(last_s)
            if n == 0 or size == 0:
                return "unsatisfiable"
            return max(0, size - n), size - 1
        if not first_s.isdigit() or (last_s and not last_s.isdigit()):
            return None
        first = int(first_s)
        last = int(last_s) if last_s else size - 1
    except ValueError:
        return None
    if last_s and last < first:
        return None  # invalid: ignored (§14.1.1)
    if first >= size:
        return "unsatisfiable"
    return first, min(last, size - 1)


class FileServer:
    """The aiohttp application serving ``root``."""

    def __init__(self, root: str | os.PathLike, options: ServeOptions | None = None, stats: Stats | None = None):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"bg serve: {root}: not a folder")
        self.options = options or ServeOptions()
        self.stats = stats if stats is not None else Stats()
        o = self.options
        self.block = block_size(o.rate, o.conn_rate)
        self.total_bucket = TokenBucket(o.rate, max(self.block, o.rate * 0.02)) if o.rate else None
        self.file_gets = 0
        self.transports: set = set()

    def abort_all(self) -> None:
        """Cut every body in progress (a crash of the server, as tests need it)."""
        for t in list(self.transports):
            t.abort()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get(STATS_PATH, self.handle_stats)
        app.router.add_route("GET", "/{tail:.*}", self.handle_file)
        app.router.add_route("HEAD", "/{tail:.*}", self.handle_file)
        return app

    async def handle_stats(self, request: web.Request) -> web.Response:
        body = self.stats.to_dict()
        if request.query.get("reset"):
            self.stats.reset()
        return web.json_response(body)

    def resolve(self, tail: str) -> Path | None:
        parts = [p for p in tail.split("/") if p]
        if any(p.startswith(".") for p in parts):
            return None
        path = (self.root / "/".join(parts)).resolve()
        if path != self.root and self.root not in path.parents:
            return None
        return path if path.is_file() else None

    async def handle_file(self, request: web.Request) -> web.StreamResponse:
        st = self.stats
        st.requests += 1
        head = request.method == "HEAD"
        if head:
            st.heads += 1
        else:
            st.gets += 1
        path = self.resolve(request.match_info["tail"])
        if path is None:
            st.statuses[404] += 1
            raise web.HTTPNotFound(text=f"not found: {request.path}\n")
        if not head:
            self.file_gets += 1
            if self.options.fail_every and self.file_gets % self.options.fail_every == 0:
                st.statuses[503] += 1
                return web.Response(status=503, text="injected failure (--fail-every)\n")
        info = path.stat()
        size = info.st_size
        etag = f'"{size:x}-{info.st_mtime_ns:x}"'
        last_modified = email.utils.formatdate(info.st_mtime, usegmt=True)
        headers = {"Accept-Ranges": "bytes", "ETag": etag, "Last-Modified": last_modified,
                   "Content-Type": "application/octet-stream"}
        first, last, status = 0, size - 1, 200
        rng = request.headers.get("Range")
        if rng is not None and not self.options.ignore_range:
            if_range = request.headers.get("If-Range")
            if if_range is None or if_range == etag or if_range == last_modified:
                r = parse_range(rng, size)
                if r == "unsatisfiable":
                    st.statuses[416] += 1
                    return web.Response(status=416, headers={"Content-Range": f"bytes */{size}", "ETag": etag,
                                                             "Accept-Ranges": "bytes"})
                if r is not None:
                    first, last = r
                    status = 206
                    headers["Content-Range"] = f"bytes {first}-{last}/{size}"
        length = last - first + 1
        headers["Content-Length"] = str(length)
        st.statuses[status] += 1
        resp = web.StreamResponse(status=status, headers=headers)
        if head:
            await resp.prepare(request)
            return resp
        drop = self.options.drop_every and self.file_gets % self.options.drop_every == 0
        return await self.send_body(request, resp, path, first, length, drop)

    async def send_body(self, request: web.Request, resp: web.StreamResponse, path: Path, first: int,
                        length: int, drop: bool) -> web.StreamResponse:
        st = self.stats
        key = "/" + path.relative_to(self.root).as_posix()
        conn_bucket = (TokenBucket(self.options.conn_rate, self.block) if self.options.conn_rate else None)
        limit = length // 2 if drop else length
        st.active += 1
        st.max_active = max(st.max_active, st.active)
        transport = request.transport
        if transport is not None:
            self.transports.add(transport)
        try:
            await resp.prepare(request)
            with open(path, "rb") as f:
                f.seek(first)
                sent = 0
                while sent < limit:
                    data = f.read(min(self.block, limit - sent))
                    if not data:
                        break
                    for bucket in (self.total_bucket, conn_bucket):
                        if bucket is not None:
                            await bucket.take(len(data))
                    await resp.write(data)
                    sent += len(data)
                    st.bytes_sent += len(data)
                    st.bytes_by_path[key] += len(data)
            if drop:
                st.aborted += 1
                if request.transport is not None:
                    request.transport.close()
                return resp
            await resp.write_eof()
        except ConnectionError:  # the client went away (or abort_all): nothing to answer
            st.aborted += 1
            return resp
        except asyncio.CancelledError:
            st.aborted += 1
            raise
        finally:
            st.active -= 1
            self.transports.discard(transport)
        return resp


async def start(root, host: str = "127.0.0.1", port: int = 0, options: ServeOptions | None = None,
                stats: Stats | None = None, shutdown_timeout: float = 1.0) -> tuple[web.AppRunner, int, FileServer]:
    """Start serving; returns the runner (``await runner.cleanup()`` stops it, cutting
    transfers still running after ``shutdown_timeout`` seconds) and the bound port."""
    server = FileServer(root, options, stats)
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    sockets = site._server.sockets if site._server is not None else []  # noqa: SLF001 (the bound port)
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, bound, server


def serve_forever(root, host: str = "127.0.0.1", port: int = 8000, options: ServeOptions | None = None) -> int:
    """Serve until interrupted (the CLI's `cclab bg serve`). Prints the URL first (flushed:
    a parent process may read it to learn the port chosen with --port 0)."""
    async def main() -> None:
        runner, bound, _ = await start(root, host, port, options)
        o = options or ServeOptions()
        limits = []
        if o.rate:
            limits.append(f"total {o.rate:.6g} B/s")
        if o.conn_rate:
            limits.append(f"per connection {o.conn_rate:.6g} B/s")
        shown = f"[{host}]" if ":" in host else host
        print(f"serving {Path(root).resolve()} on http://{shown}:{bound}/"
              + (f" (rate limit: {', '.join(limits)})" if limits else ""), flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0


class ServerThread:
    """A server on its own event loop in a background thread (tests). ``stop()`` and
    ``start()`` again restart it on the same port, with the same counters."""

    def __init__(self, root, host: str = "127.0.0.1", port: int = 0, options: ServeOptions | None = None,
                 stats: Stats | None = None):
        self.root, self.host, self.port = root, host, port
        self.options = options or ServeOptions()
        self.stats = stats if stats is not None else Stats()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> "ServerThread":
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            try:
                self.runner, self.port, self.server = self.loop.run_until_complete(
                    start(self.root, self.host, self.port, self.options, self.stats, shutdown_timeout=0.05))
            except BaseException as exc:  # reported to the caller of start()
                error.append(exc)
                ready.set()
                return
            ready.set()
            self.loop.run_forever()
            self.server.abort_all()
            self.loop.run_until_complete(self.runner.cleanup())
            self.loop.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait()
        if error:
            raise error[0]
        return self

    def stop(self) -> None:
        if self.loop is not None and self.thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()
        self.loop = self.thread = self.runner = None

    def __enter__(self) -> "ServerThread":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve_forever(sys.argv[1]))
