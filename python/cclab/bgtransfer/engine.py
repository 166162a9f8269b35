"""The transfer manager: files cut into chunks (byte ranges), chunks released to an
access controller (crates/control through ``cclab._core.AccessController``), at most
m(t) chunks in transfer at once, every finished byte range fsync'ed and journaled,
every file verified (size, SHA-256) and renamed into place atomically.

How it maps onto the papers (docs/bgtransfer.md has the reasoning):

* a chunk = a micro-flow (background paper §III) = FAIRBAT's "chunk" (FAIRBAT §III): one
  HTTP range request on its own TCP connection (``force_close``: no reuse, so that each
  chunk is a fresh TCP flow as in the models); ``chunk_size`` defaults to 3 MB, the
  mean file size of both papers' experiments (FAIRBAT §IV, background paper §IV-A);
* arrivals: with ``demand`` (bytes/s, the papers' Cρ_b) chunks are released to the
  controller as a fluid at that rate (chunk k arrives when demand·t reaches the bytes of
  chunks 0..k); ``within`` (seconds) sets demand = total bytes / within. Without either
  (a plain backlog there is no load to track): FAIRBAT's queue is kept topped up at τ
  chunks and its trend term off (trend = 0 unless given: a topped-up queue's arrivals
  equal its admissions, so the chunks held change only as the active ones do, which the
  trend term would feed back into m) so that eq. (2) leaves m at m0; rate tracking's at
  one chunk and without its queue target (τ = 0 unless given: arrivals equal
  admissions, M stays near m0); a static limit gets the whole backlog at once;
* completions: a chunk completes when its range is on disk (or it failed: a failed
  chunk leaves the controller and its remainder arrives again after a backoff);
* deadlines: at ``next_deadline()`` the controller is told the bytes delivered so far
  (all bytes received by chunks, for rate tracking).
"""
from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import json
import heapq
import math
import os
import random
import signal
import sqlite3
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..outdir import fsync_dir
from .journal import Journal, gaps
from .manifest import RESERVED, Entry
from .policy import Policy
from .units import human_bytes

#: The papers' mean micro-flow (chunk) size: 3 MB (FAIRBAT §IV; background paper §IV-A).
DEFAULT_CHUNK = 3_000_000
#: Transient failures are retried this many times per chunk (the count restarts when a
#: chunk makes progress); with the backoff below the retries span about a minute.
DEFAULT_RETRIES = 8
#: Exponential backoff: min(cap, base·2^attempt), of which a uniformly random half
#: ("equal jitter") is slept.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
#: Seconds without a byte (and to connect) before a chunk's connection is given up.
DEFAULT_TIMEOUT = 30.0
#: A safety cap on simultaneous connections, whatever the policy (file descriptors).
DEFAULT_MAX_ACTIVE = 256
READ_BLOCK = 64 * 1024
#: A chunk in progress journals what it has received every CHECKPOINT_S seconds or
#: CHECKPOINT_BYTES bytes (fsync first), so a kill loses at most that much per chunk in
#: flight, and `cclab bg status` sees progress within a chunk. 1 s: an fsync a second per
#: chunk on slow links; 4 MiB: at 100 MB/s, 25 a second, a few per cent of the time.
CHECKPOINT_S = 1.0
CHECKPOINT_BYTES = 4 * 1024 * 1024


class Transient(Exception):
    """A failure worth retrying (connection, timeout, 5xx, 408, 429, short body)."""


class Fatal(Exception):
    """A failure of one file that retrying will not fix (404 and other 4xx, a changed size)."""


class DiskFull(Exception):
    """ENOSPC: the run stops."""


@dataclass
class FileOutcome:
    name: str
    url: str
    state: str  # done, failed, skipped (already there)
    size: int | None = None
    sha256: str | None = None
    error: str | None = None
    bytes_fetched: int = 0


@dataclass
class FetchResult:
    """What ``fetch`` did; ``status`` is the CLI's exit status (0 all done, 1 some failed)."""

    files: list[FileOutcome]
    policy: str
    elapsed: float
    bytes_fetched: int
    limit_trace: list[tuple[float, float, int, int]] = field(default_factory=list)  # (t, limit, active, waiting)
    max_active: int = 0
    averages: dict | None = None
    params: dict | None = None  # the controller's parameters after defaults (canonical form)

    @property
    def ok(self) -> bool:
        return all(f.state in ("done", "skipped") for f in self.files)

    @property
    def status(self) -> int:
        return 0 if self.ok else 1

    @property
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.state == "failed"]


@dataclass
class FileJob:
    entry: Entry
    partial: Path
    final: Path
    size: int | None = None
    validator: str | None = None
    fd: int | None = None
    no_range: bool = False
    whole: asyncio.Event | None = None  # set while a 200 (whole-file) body is being received
    outstanding: int = 0  # chunks released and not finished
    pending_chunks: deque = field(default_factory=deque)
    state: str = "pending"
    error: str | None = None
    fetched: int = 0
    verify_retries: int = 1
    initial: int = 0
    started: bool = False
    bar: object = None
    placing: asyncio.Task | None = None  # its verification and rename, once all its ranges are in

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass
class Chunk:
    id: int
    job: FileJob
    start: int
    end: int
    attempts: int = 0

    @property
    def bytes(self) -> int:
        return self.end - self.start


def sha256_of(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            n += len(block)
    return n, h.hexdigest()


def backoff(attempt: int, rng: random.Random, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """Exponential backoff with equal jitter: d = min(cap, base·2^attempt), sleep in [d/2, d]."""
    d = min(cap, base * 2 ** attempt)
    return d / 2 + rng.uniform(0, d / 2)


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__


class Manager:
    """One run of the manager over a destination folder."""

    def __init__(self, entries: list[Entry], dest: str | os.PathLike, policy: Policy, *,
                 chunk_size: int = DEFAULT_CHUNK, demand: float | None = None, within: float | None = None,
                 retries: int = DEFAULT_RETRIES, timeout: float = DEFAULT_TIMEOUT, overwrite: bool = False,
                 progress: bool = True, max_active: int = DEFAULT_MAX_ACTIVE,
                 backoff_base: float = BACKOFF_BASE, backoff_cap: float = BACKOFF_CAP, trace: bool = True,
                 ca_file: str | os.PathLike | None = None, meta: str | os.PathLike | None = None):
        self.entries = entries
        self.dest = Path(dest)
        self.policy = policy
        self.chunk_size = int(chunk_size)
        self.demand = demand
        self.within = within
        self.retries = retries
        self.timeout = timeout
        self.overwrite = overwrite
        self.progress = progress
        self.max_active = max_active
        self.backoff_base, self.backoff_cap = backoff_base, backoff_cap
        self.trace_on = trace
        self.ca_file = ca_file
        self.rng = random.Random()
        # the journal, partial data and lock: DEST/.cclab-bg (`cclab bg fetch`), or a folder
        # of its own under it (a daemon's job: jobs into one folder do not share a journal)
        self.meta = Path(meta) if meta is not None else self.dest / RESERVED
        #: awaited with the bytes of every block received (the daemon's rate caps and its
        #: per-host delivery count); None: nothing
        self.pace = None
        self.jobs: list[FileJob] = []
        self.delivered = 0  # bytes received by every chunk (rate tracking's measurement)
        self.fetched = 0
        self.trace: list[tuple[float, float, int, int]] = []
        self.max_seen = 0
        self.disk_full: str | None = None
        self.overall = None

    # -- set up ------------------------------------------------------------------
    def lock(self) -> int:
        self.meta.mkdir(parents=True, exist_ok=True)
        (self.meta / "partial").mkdir(exist_ok=True)
        fd = os.open(self.meta / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ValueError(f"{self.dest}: another `cclab bg fetch` is writing here (lock {self.meta / 'lock'})") from None
        return fd

    def clock(self) -> float:
        return time.monotonic() - self.t0

    def log(self, msg: str) -> None:
        if self.progress:
            from tqdm import tqdm

            tqdm.write(msg, file=sys.stderr)

    # -- the run -----------------------------------------------------------------
    def run(self) -> FetchResult:
        if self.dest.exists() and not self.dest.is_dir():
            raise ValueError(f"{self.dest}: not a folder")
        self.dest.mkdir(parents=True, exist_ok=True)
        lock = self.lock()
        self.journal = Journal(self.meta / "journal.sqlite")
        self.resume_limit = self.journal.last_limit(self.policy.name)
        run_id = self.run_id = self.journal.start_run(self.policy.name)
        status = 1
        try:
            t = time.monotonic()
            try:
                outcomes = asyncio.run(self.main())
            except asyncio.CancelledError:  # SIGTERM
                raise KeyboardInterrupt from None
            res = FetchResult(files=outcomes, policy=self.policy.name, elapsed=time.monotonic() - t,
                              bytes_fetched=self.fetched, limit_trace=self.trace, max_active=self.max_seen,
                              averages=self.averages, params=getattr(self, "params", None))
            status = res.status
            return res
        finally:
            self.journal.finish_run(run_id, status)
            self.journal.close()
            os.close(lock)

    async def main(self) -> list[FileOutcome]:
        import aiohttp

        self.t0 = time.monotonic()
        self.averages = None
        ssl_ctx = True  # verify with the system's certificates
        if self.ca_file is not None:
            import ssl

            ssl_ctx = ssl.create_default_context(cafile=str(self.ca_file))
        connector = aiohttp.TCPConnector(limit=0, force_close=True, ssl=ssl_ctx)
        timeout = aiohttp.ClientTimeout(total=None, connect=self.timeout, sock_connect=self.timeout,
                                        sock_read=self.timeout)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False,
                                         headers={"Accept-Encoding": "identity"}) as session:
            self.session = session
            loop = asyncio.get_running_loop()
            me = asyncio.current_task()
            loop.add_signal_handler(signal.SIGTERM, me.cancel)  # SIGTERM stops as cleanly as Ctrl-C
            await self.prepare()
            try:
                await self.schedule()
            finally:
                for job in self.jobs:
                    if job.fd is not None:
                        os.close(job.fd)
                        job.fd = None
                    if job.bar is not None:
                        job.bar.close()
                if self.overall is not None:
                    self.overall.close()
        return [FileOutcome(name=j.name, url=j.entry.url, state=j.state, size=j.size,
                            sha256=j.entry.sha256, error=j.error, bytes_fetched=j.fetched) for j in self.jobs]

    async def prepare(self) -> None:
        """Journal rows, existing files, sizes (HEAD), the chunks still to fetch."""
        sem = asyncio.Semaphore(8)

        async def one(e: Entry) -> FileJob:
            job = FileJob(entry=e, partial=self.meta / "partial" / e.name, final=self.dest / e.name)
            async with sem:
                await self.prepare_file(job)
            return job

        self.jobs = list(await asyncio.gather(*(one(e) for e in self.entries)))
        if self.progress:
            from tqdm import tqdm

            total = sum(j.size or 0 for j in self.jobs if j.state == "pending")
            done = sum(sum(e - s for s, e in self.journal.ranges(j.name)) for j in self.jobs if j.state == "pending")
            self.overall = tqdm(total=total, initial=done, unit="B", unit_scale=True, desc="all files",
                                position=0, dynamic_ncols=True, file=sys.stderr)

    async def prepare_file(self, job: FileJob) -> None:
        e = job.entry
        row = self.journal.file(e.name)
        if row is not None and (row["url"] != e.url or (e.sha256 and row["sha256"] and row["sha256"] != e.sha256)
                                or (e.size is not None and row["size"] is not None and row["size"] != e.size)):
            self.journal.reset_file(e.name, "a different file under this name: partial data dropped")
            row = None
        if row is not None and not job.partial.exists() and (
                (row["state"] != "done" and self.journal.ranges(e.name))
                or (row["state"] == "done" and not job.final.exists())):
            self.journal.reset_file(e.name, "the partial data is gone (removed by hand)")
            row = self.journal.file(e.name)
        self.journal.upsert_file(e.name, e.url, e.size if e.size is not None else (row["size"] if row else None),
                                 e.sha256 or (row["sha256"] if row else None))
        # Never overwrite a good file; skip one that is already the right one.
        if job.final.exists():
            if not job.final.is_file():
                return self.fail(job, f"{job.final} exists and is not a file")
            if row is not None and row["state"] == "done" and row["sha256"]:
                expect = e.sha256 or row["sha256"]
            else:
                expect = e.sha256
            if expect:
                size, digest = await asyncio.to_thread(sha256_of, job.final)
                if digest == expect and (e.size is None or size == e.size):
                    job.state, job.size = "skipped", size
                    self.journal.set_state(e.name, "done", None, bytes_done=size)
                    return None
                if not self.overwrite:
                    return self.fail(job, f"{job.final} exists with a different SHA-256 ({digest[:12]}…, expected "
                                          f"{expect[:12]}…): not overwritten (use --overwrite)")
        try:
            await self.probe(job)
        except (Fatal, Transient) as exc:
            return self.fail(job, str(exc))
        if row is not None and row["validator"] and job.validator and row["validator"] != job.validator:
            self.journal.reset_file(e.name, "the file changed on the server: partial data dropped")
        self.journal.set(e.name, size=job.size)
        if row is None or self.journal.file(e.name)["bytes_done"] == 0:
            job.partial.unlink(missing_ok=True)
        job.partial.parent.mkdir(parents=True, exist_ok=True)
        job.fd = os.open(job.partial, os.O_RDWR | os.O_CREAT, 0o644)
        missing = gaps(self.journal.ranges(e.name), job.size)
        job.initial = job.size - sum(t - s for s, t in missing)
        if job.no_range and missing:  # the server ignores Range: one request takes the whole file
            job.pending_chunks.append((0, job.size))
        for s, t in missing if not job.no_range else []:
            for a in range(s, t, self.chunk_size):
                job.pending_chunks.append((a, min(t, a + self.chunk_size)))
        return None

    async def probe(self, job: FileJob) -> None:
        """The file's size and validator: HEAD, else a GET of byte 0."""
        import aiohttp

        e = job.entry
        size = None
        for attempt in range(self.retries + 1):
            try:
                async with self.session.head(e.url, allow_redirects=True) as r:
                    if r.status == 200 and r.headers.get("Content-Length", "").isdigit():
                        size = int(r.headers["Content-Length"])
                        job.validator = r.headers.get("ETag") or r.headers.get("Last-Modified")
                    elif r.status in (404, 410) or (400 <= r.status < 500 and r.status not in (405, 408, 429)):
                        raise Fatal(f"{e.url}: HTTP {r.status} {r.reason or ''}".rstrip())
                    elif r.status >= 500 or r.status in (408, 429):
                        raise Transient(f"{e.url}: HTTP {r.status} {r.reason or ''}".rstrip())
                if size is None:
                    async with self.session.get(e.url, headers={"Range": "bytes=0-0"}) as r:
                        if r.status == 206 and "/" in r.headers.get("Content-Range", ""):
                            total = r.headers["Content-Range"].rsplit("/", 1)[1]
                            if total.isdigit():
                                size = int(total)
                        elif r.status == 200 and r.headers.get("Content-Length", "").isdigit():
                            size = int(r.headers["Content-Length"])
                            job.no_range = True
                        elif 400 <= r.status < 500 and r.status not in (408, 429):
                            raise Fatal(f"{e.url}: HTTP {r.status} {r.reason or ''}".rstrip())
                        elif r.status >= 500 or r.status in (408, 429):
                            raise Transient(f"{e.url}: HTTP {r.status} {r.reason or ''}".rstrip())
                        job.validator = r.headers.get("ETag") or r.headers.get("Last-Modified")
                break
            except (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError, aiohttp.RedirectClientError,
                    aiohttp.TooManyRedirects) as exc:
                # retrying will not fix a certificate, nor a redirect to file: or another scheme
                raise Fatal(f"{e.url}: {describe(exc)}") from None
            except (aiohttp.ClientError, asyncio.TimeoutError, Transient) as exc:
                if attempt == self.retries:
                    raise Transient(f"{e.url}: {describe(exc)} (after {self.retries} retries)") from None
                await asyncio.sleep(backoff(attempt, self.rng, self.backoff_base, self.backoff_cap))
        if size is None:
            raise Fatal(f"{e.url}: the server gives no size (no Content-Length or Content-Range); "
                        f"give `size` in the manifest")
        if e.size is not None and size != e.size:
            raise Fatal(f"{e.url}: the server has {size} bytes, the manifest says {e.size}")
        job.size = size

    def fail(self, job: FileJob, error: str) -> None:
        job.state, job.error = "failed", error
        job.pending_chunks.clear()
        self.journal.failure(job.name, error)
        self.journal.set_state(job.name, "failed", error)
        self.log(f"cclab: {job.name}: FAILED: {error}")

    # -- scheduling --------------------------------------------------------------
    def released_order(self):
        """The chunks of every pending file in order, and those of files that must be fetched
        again (a checksum mismatch, a gap) as soon as they appear."""
        while True:
            if self.requeued:
                job = self.requeued.popleft()
            else:
                job = next((j for j in self.jobs if j.state == "pending" and j.pending_chunks), None)
                if job is None:
                    return
            while job.state == "pending" and job.pending_chunks:
                s, e = job.pending_chunks.popleft()
                yield job, s, e

    def requeue(self, job: FileJob, missing: list[tuple[int, int]]) -> None:
        for s, e in missing:
            for a in range(s, e, self.chunk_size):
                job.pending_chunks.append((a, min(e, a + self.chunk_size)))
        self.requeued.append(job)

    def _controller(self, pol, t_start: float, demand: float | None):
        """The run's access controller (None: unlimited), its periods counted from
        ``t_start``. Rate tracking on a plain backlog runs without its queue target (τ = 0
        unless given: no arrivals whose queue a target could hold; one chunk is kept
        waiting instead), FAIRBAT without its trend term (trend = 0 unless given: no
        arrival rate for it to read). An adaptive limit resumes from the one an earlier
        run had learnt (the gain schedule restarts), unless ``m0`` is given."""
        backlog = {"rate": ("tau", 0.0), "fairbat": ("trend", 0.0)}.get(pol.name) if demand is None else None
        fixed = dict([backlog]) if backlog is not None and backlog[0] not in pol.params else {}
        ctrl = pol.controller(t_start, fixed or None)
        if pol.name in ("fairbat", "rate") and "m0" not in pol.params and self.resume_limit is not None:
            try:
                ctrl = pol.controller(t_start, {**fixed, "m0": self.resume_limit})
            except ValueError:  # outside this run's m_min..m_max: start from m0
                pass
        return ctrl

    async def schedule(self) -> None:
        """Release the chunks, start those the policy admits, retry and fail them, until
        every file is placed or failed."""
        sched = _Schedule(self)
        # Finished files whose outstanding chunks are all done are verified here.
        self.finishing: set[asyncio.Task] = set()
        # files with nothing left to fetch (empty, or every range journaled before a kill
        # came between the last range and the rename) go straight to verification
        for job in self.jobs:
            if job.state == "pending" and not job.pending_chunks:
                self.maybe_finish(job)
        try:
            await sched.run()
        finally:
            # an interruption (Ctrl-C, SIGTERM): the chunks in flight record what they got
            for t in sched.tasks:
                t.cancel()
            if sched.tasks:
                await asyncio.gather(*sched.tasks, return_exceptions=True)
        if sched.ctrl is not None:
            sched.ctrl.advance_to(self.clock())
            self.averages = dict(sched.ctrl.averages())

    # -- one chunk ---------------------------------------------------------------
    async def transfer(self, c: Chunk) -> None:
        """Fetch [start, end) of the chunk's file into its partial file; record what arrived."""
        import aiohttp

        job = c.job
        url = job.entry.url
        if job.no_range and job.whole is not None:
            await job.whole.wait()  # a whole-file body is on its way: wait for it, then see
        done = self.journal.ranges(job.name)
        rest = [(s, e) for s, e in gaps(done, job.size) if e > c.start and s < c.end]
        if not rest:
            return
        c.start, c.end = max(rest[0][0], c.start), min(rest[0][1], c.end)
        headers = {"Range": f"bytes={c.start}-{c.end - 1}"}
        if job.validator and job.validator.startswith('"'):
            # RFC 9110 §13.1.5: a changed file comes whole (200) with its new ETag, which
            # check_validator refuses, instead of a range of other bytes
            headers["If-Range"] = job.validator
        pos = base = mark = c.start  # mark: the first byte not yet journaled
        mark_t = time.monotonic()
        whole = other = None
        try:
            async with self.session.get(url, headers=headers, allow_redirects=True) as r:
                end, whole, other = self.accept(job, c, r)
                if whole is not None:
                    pos = base = mark = 0
                async for data in r.content.iter_chunked(READ_BLOCK):
                    if pos >= end:
                        break
                    data = data[: end - pos]
                    self.write(job, data, pos)
                    pos += len(data)
                    if self.pace is not None:
                        await self.pace(len(data))
                    if pos - mark >= CHECKPOINT_BYTES or time.monotonic() - mark_t >= CHECKPOINT_S:
                        await self.record(job, mark, pos)  # a long chunk's progress survives a kill
                        mark, mark_t = pos, time.monotonic()
                if pos < end:
                    raise Transient(f"{url}: the body stopped at byte {pos} of {c.start}-{end - 1}")
            if other is not None:
                await other.wait()
                if any(e > c.start and s < c.end for s, e in gaps(self.journal.ranges(job.name), job.size)):
                    raise Transient(f"{url}: the whole-file body that was to cover bytes {c.start}-{c.end - 1} "
                                    f"stopped short")
        except (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError, aiohttp.RedirectClientError,
                aiohttp.TooManyRedirects) as exc:
            raise Fatal(f"{url}: {describe(exc)}") from None
        except (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError) as exc:
            raise Transient(f"{url}: {describe(exc)}") from None
        finally:
            if pos > base:
                c.attempts = 0  # progress: the retry count starts again
            if pos > mark:
                await self.record(job, mark, pos)
            if whole is not None:
                whole.set()

    def accept(self, job: FileJob, c: Chunk, r) -> tuple[int, asyncio.Event | None, asyncio.Event | None]:
        """The response to the chunk's range request, checked: where its body ends, and
        for a whole-file body (the server ignores Range) the event this chunk sets when
        it ends, or the other chunk's that is already taking it (then nothing is read)."""
        url = job.entry.url
        if r.status == 206:
            cr = r.headers.get("Content-Range", "")
            if not cr.startswith(f"bytes {c.start}-"):
                raise Transient(f"{url}: asked bytes {c.start}-{c.end - 1}, got Content-Range {cr!r}")
            total = cr.rsplit("/", 1)[-1]
            if total.isdigit() and int(total) != job.size:
                raise Fatal(f"{url}: the file's size changed on the server ({job.size} -> {total} bytes)")
            self.check_validator(job, r)
            return c.end, None, None
        if r.status == 200:
            # The server ignores Range: the whole file comes; take all of it, unless
            # another chunk of the file is already taking it (then wait for that one).
            job.no_range = True
            length = r.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) != job.size:
                raise Fatal(f"{url}: the file's size changed on the server ({job.size} -> {length} bytes)")
            self.check_validator(job, r)
            if job.whole is not None and not job.whole.is_set():
                return c.start, None, job.whole
            job.whole = asyncio.Event()
            return job.size, job.whole, None
        if r.status == 416:
            raise Fatal(f"{url}: HTTP 416 for bytes {c.start}-{c.end - 1}: the file shrank on the server")
        if r.status >= 500 or r.status in (408, 429):
            raise Transient(f"{url}: HTTP {r.status} {r.reason or ''}".rstrip())
        raise Fatal(f"{url}: HTTP {r.status} {r.reason or ''}".rstrip())

    def write(self, job: FileJob, data: bytes, pos: int) -> None:
        """Write `data` at `pos` of the partial file; count it and show it."""
        try:
            os.pwrite(job.fd, data, pos)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskFull(f"{job.partial}: {exc.strerror}") from None
            raise
        self.delivered += len(data)
        self.fetched += len(data)
        job.fetched += len(data)
        if not job.started:
            job.started = True
            self.journal.first_byte(job.name)
        if self.progress and job.bar is None:
            from tqdm import tqdm

            job.bar = tqdm(total=job.size, initial=job.initial, unit="B", unit_scale=True,
                           desc=job.name[-30:], leave=False, dynamic_ncols=True, file=sys.stderr)
        if job.bar is not None:
            job.bar.update(len(data))
        if self.overall is not None:
            self.overall.update(len(data))

    def check_validator(self, job: FileJob, r) -> None:
        v = r.headers.get("ETag") or r.headers.get("Last-Modified")
        if v and job.validator and v != job.validator:
            raise Fatal(f"{job.entry.url}: the file changed on the server during the transfer "
                        f"(validator {job.validator} -> {v})")
        if v and not job.validator:
            job.validator = v
            self.journal.set(job.name, validator=v)

    async def record(self, job: FileJob, start: int, end: int) -> None:
        """fsync the data, then journal [start, end) as done (never the other way round)."""
        try:
            await asyncio.to_thread(os.fsync, job.fd)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskFull(f"{job.partial}: {exc.strerror}") from None
            raise
        try:
            self.journal.add_range(job.name, start, end)
        except sqlite3.OperationalError as exc:
            if "full" in str(exc):
                raise DiskFull(f"{self.journal.path}: {exc}") from None
            raise

    # -- one file ----------------------------------------------------------------
    def maybe_finish(self, job: FileJob) -> None:
        if job.state != "pending" or job.outstanding > 0 or job.pending_chunks:
            return
        missing = gaps(self.journal.ranges(job.name), job.size)
        if missing:  # e.g. a whole-file body failed while range chunks waited on it
            self.requeue(job, missing)
            return
        job.state = "verifying"
        t = job.placing = asyncio.ensure_future(self.place(job))
        self.finishing.add(t)

    async def place(self, job: FileJob) -> None:
        """Verify size and SHA-256, then rename into place (atomic) and fsync the folder."""
        try:
            await self.verify_and_place(job)
        except OSError as exc:  # reading the data, renaming, fsync: the file fails, the run goes on
            why = f"disk full: {exc}" if exc.errno == errno.ENOSPC else f"cannot verify or place: {describe(exc)}"
            self.fail(job, why)

    async def verify_and_place(self, job: FileJob) -> None:
        name = job.name
        size, digest = await asyncio.to_thread(sha256_of, job.partial)
        expect = job.entry.sha256
        if size != job.size:
            return self.fail(job, f"size {size} after the transfer, expected {job.size}")
        if expect and digest != expect:
            why = f"{job.entry.url}: SHA-256 mismatch: got {digest}, expected {expect}"
            self.journal.reset_file(name, why)
            if job.verify_retries > 0:  # fetch the whole file once more before giving up
                job.verify_retries -= 1
                self.journal.failure(name, why)
                self.log(f"{name}: {why}; fetching it again")
                job.state = "pending"
                self.requeue(job, [(0, job.size)])
                return None
            return self.fail(job, f"{why} (after {1} re-fetch); not placed")
        if job.final.exists() and not self.overwrite:
            _, existing = await asyncio.to_thread(sha256_of, job.final)
            if existing != digest:
                return self.fail(job, f"{job.final} exists with a different SHA-256 ({existing[:12]}…, fetched "
                                      f"{digest[:12]}…): not overwritten (use --overwrite); the fetched data stays "
                                      f"in {job.partial}")
        job.final.parent.mkdir(parents=True, exist_ok=True)
        os.fsync(job.fd)
        os.replace(job.partial, job.final)
        fsync_dir(job.final.parent)
        self.journal.set_state(name, "done", None, sha256=digest, bytes_done=size, finished_at=time.time())
        job.state = "done"
        job.entry = Entry(url=job.entry.url, name=name, size=size, sha256=digest)
        if job.bar is not None:
            job.bar.close()
            job.bar = None
        self.log(f"{name}: done ({human_bytes(size)}, sha256 {digest[:16]}…)")
        return None


class _Schedule:
    """One run's chunks between release and completion: released in file order
    (re-fetches first) at the demand's fluid pace, or topping up the policy's queue;
    started as the policy admits them, at most `max_active` at once; retried with
    backoff after a transient failure."""

    def __init__(self, m: Manager):
        self.m = m
        pol = m.policy
        self.t_start = m.clock()
        m.requeued = deque()
        self.order = m.released_order()
        pending_bytes = sum(e - s for j in m.jobs for s, e in j.pending_chunks)
        self.demand = m.demand
        if self.demand is None and m.within is not None:
            self.demand = max(pending_bytes, 1) / m.within
        # its periods count from the first release
        self.ctrl = m.ctrl = ctrl = m._controller(pol, self.t_start, self.demand)
        # every parameter after defaults, from the crate (no second copy of a default here)
        m.params = json.loads(ctrl.params_json()) if ctrl is not None else None
        self.topup = None
        if self.demand is None:
            if pol.name == "fairbat":
                self.topup = math.ceil(m.params["tau"])
            elif pol.name == "rate":
                self.topup = 1
        self.chunks: dict[int, Chunk] = {}
        self.next_id = 0
        self.released_bytes = 0.0
        self.lookahead: tuple | None = None
        self.retry_heap: list[tuple[float, int]] = []
        self.local_queue: deque[int] = deque()  # unlimited: released chunks not yet started (max_active)
        self.tasks: dict[asyncio.Task, Chunk] = {}
        self.last_state = None

    def arrive(self, now: float, c: Chunk) -> None:
        c.job.outstanding += 1 if c.id not in self.chunks else 0
        self.chunks[c.id] = c
        if self.ctrl is None:
            self.local_queue.append(c.id)
        else:
            self.ctrl.arrive(now, c.id, float(c.bytes))

    def next_new(self) -> tuple | None:
        if self.lookahead is None:
            self.lookahead = next(self.order, None)
            if self.lookahead is None and self.m.requeued:
                self.order = self.m.released_order()
                self.lookahead = next(self.order, None)
        return self.lookahead

    def release(self, now: float) -> float:
        """Release chunks due by now; returns when the next one is due (inf: none)."""
        while True:
            nxt = self.next_new()
            if nxt is None:
                return math.inf
            job, s, e = nxt
            if job.state != "pending":
                self.lookahead = None
                continue
            if self.demand is not None:
                due = self.t_start + (self.released_bytes + (e - s)) / self.demand  # the fluid, from the first release
                if due > now:
                    return due
            elif self.topup is not None and self.ctrl is not None and self.ctrl.waiting >= self.topup:
                return math.inf
            self.lookahead = None
            self.released_bytes += e - s
            self.arrive(now, Chunk(self.next_id, job, s, e))
            self.next_id += 1

    def start(self, cid: int, now: float) -> None:
        c = self.chunks[cid]
        if c.job.state != "pending":  # its file failed meanwhile: the slot is freed at once
            self.finish_chunk(c, None, now)
            return
        self.tasks[asyncio.ensure_future(self.m.transfer(c))] = c
        self.m.max_seen = max(self.m.max_seen, len(self.tasks))

    def finish_chunk(self, c: Chunk, exc: BaseException | None, now: float) -> None:
        """The chunk left the network (or never entered it)."""
        if self.ctrl is not None:
            self.ctrl.complete(now)
        if exc is None:
            c.job.outstanding -= 1
            self.m.maybe_finish(c.job)

    def steer(self, now: float, next_release: float) -> float:
        """The policy's deadlines due by `now`, then its admissions; returns when the
        next chunk is due for release."""
        ctrl, m = self.ctrl, self.m
        if ctrl.next_deadline() <= now:
            while ctrl.next_deadline() <= now:
                ctrl.on_deadline(now, float(m.delivered))
            if self.next_new() is not None:
                # kept for the next run only while chunks are still to come: once
                # the backlog is out the queue drains and m falls for that reason
                m.journal.note_limit(m.run_id, ctrl.limit)
        # admit, then top the queue up again at the same instant (a plain backlog
        # keeps exactly `topup` chunks waiting), until nothing more starts
        while len(self.tasks) < m.max_active and (cid := ctrl.admit(now)) is not None:
            self.start(cid, now)
            next_release = self.release(now)
        state = (ctrl.limit, ctrl.active, ctrl.waiting, ctrl.updates)
        if m.trace_on and state != self.last_state:
            m.trace.append((now, ctrl.limit, ctrl.active, ctrl.waiting))
            self.last_state = state
        return next_release

    def idle(self, next_release: float) -> bool:
        """Nothing runs, waits or is still to come."""
        return (not self.tasks and not self.m.finishing and not self.retry_heap and next_release == math.inf
                and not self.local_queue and (self.ctrl is None or self.ctrl.waiting == 0) and not self.m.requeued)

    async def wait(self, next_release: float) -> set:
        """Until a chunk or a verification ends, or the next release, retry or deadline."""
        m = self.m
        wake = min(next_release, self.retry_heap[0][0] if self.retry_heap else math.inf,
                   self.ctrl.next_deadline() if self.ctrl is not None else math.inf)
        timeout = None if wake == math.inf else max(0.0, wake - m.clock())
        if self.tasks or m.finishing:
            done, _ = await asyncio.wait(set(self.tasks) | m.finishing, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            return done
        await asyncio.sleep(timeout if timeout is not None else 0.05)
        return set()

    def collect(self, t: asyncio.Task, now: float) -> None:
        """A task ended at `now`: a verification (its error stops the run), or a chunk:
        done, retried after a backoff, or its file failed."""
        m = self.m
        if t in m.finishing:
            m.finishing.discard(t)
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()
            return
        c = self.tasks.pop(t)
        exc = t.exception() if not t.cancelled() else asyncio.CancelledError()
        if exc is None:
            self.finish_chunk(c, None, now)
            return
        if isinstance(exc, DiskFull) or isinstance(exc, asyncio.CancelledError) and m.disk_full:
            m.disk_full = m.disk_full or str(exc)
            self.finish_chunk(c, exc, now)
            c.job.outstanding -= 1
            if c.job.state == "pending":
                m.fail(c.job, f"disk full: {m.disk_full}")
            return
        self.finish_chunk(c, exc, now)
        if isinstance(exc, Transient) and c.attempts < m.retries and c.job.state == "pending":
            delay = backoff(c.attempts, m.rng, m.backoff_base, m.backoff_cap)
            c.attempts += 1
            m.journal.failure(c.job.name, str(exc))
            heapq.heappush(self.retry_heap, (now + delay, c.id))
            return
        c.job.outstanding -= 1
        if c.job.state == "pending":
            why = str(exc) if isinstance(exc, (Fatal, Transient)) else describe(exc)
            if isinstance(exc, Transient):
                why += f" (gave up after {m.retries} retries)"
            m.fail(c.job, why)
        m.maybe_finish(c.job)

    async def run(self) -> None:
        m = self.m
        now, first = self.t_start, True
        while True:
            now = self.t_start if first else max(m.clock(), now)
            first = False
            while self.retry_heap and self.retry_heap[0][0] <= now:
                _, cid = heapq.heappop(self.retry_heap)
                self.arrive(now, self.chunks[cid])
            next_release = self.release(now)
            if self.ctrl is not None:
                next_release = self.steer(now, next_release)
            else:
                while self.local_queue and len(self.tasks) < m.max_active:
                    self.start(self.local_queue.popleft(), now)
            if m.disk_full:
                for t in self.tasks:
                    t.cancel()
            if self.idle(next_release):
                break
            done = await self.wait(next_release)
            now = m.clock()
            for t in done:
                self.collect(t, now)
            if m.disk_full:
                for job in m.jobs:
                    if job.state == "pending":
                        m.fail(job, f"not fetched: the disk is full ({m.disk_full})")
