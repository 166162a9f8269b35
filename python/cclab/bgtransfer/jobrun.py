"""One daemon job on the transfer engine (engine.Manager): its files' journal, partial
data and lock in DEST/.cclab-bg/job-ID/, its chunks handed out one at a time to the
daemon (which decides when each starts), retried with backoff after a transient
failure, its files verified and placed by the engine. Everything about a chunk (range
requests, If-Range, checkpoints every second or 4 MiB, fsync before journal, SHA-256
before the atomic rename) is the engine's: there is no second engine here.

When the job ends (every file placed or failed, or cancelled) its folder under
.cclab-bg is removed: no partial file outlives a job.
"""
from __future__ import annotations

import asyncio
import fcntl
import heapq
import os
import shutil
from pathlib import Path

from .engine import DiskFull, Fatal, FileJob, Manager, Transient, backoff, describe
from .jobs import JobSpec, confined
from .journal import Journal
from .manifest import RESERVED
from .policy import Policy


class JobRun:
    """A job between `open` (lock, journal, size probes) and `close`."""

    def __init__(self, job_id: int, spec: JobSpec, *, chunk_size: int, retries: int, timeout: float,
                 backoff_base: float, backoff_cap: float):
        self.id, self.spec = job_id, spec
        self.meta = Path(spec.dest) / RESERVED / f"job-{job_id}"
        self.m = Manager(spec.entries(), spec.dest, Policy("unlimited"), chunk_size=chunk_size, retries=retries,
                         timeout=timeout, progress=False, backoff_base=backoff_base, backoff_cap=backoff_cap,
                         trace=False, meta=self.meta)
        self.retry: list[tuple[float, int, object]] = []  # (when, seq, chunk) backing off
        self.next_id = 0
        self.tasks: dict[asyncio.Task, object] = {}  # chunks in flight -> Chunk
        self.lock_fd: int | None = None

    async def open(self, session, t0: float) -> None:
        """Lock the job's folder, open its journal, probe sizes, list the missing ranges."""
        m = self.m
        for i, n in enumerate(self.spec.names):
            if not confined(self.spec.dest, n):
                raise Fatal(f"names[{i}]: {n!r} now leads outside {self.spec.dest} (a symbolic link)")
        m.dest.mkdir(parents=True, exist_ok=True)
        self.lock_fd = m.lock()
        m.journal = Journal(self.meta / "journal.sqlite")
        m.run_id = m.journal.start_run("daemon")
        m.session, m.t0 = session, t0
        m.requeued, m.finishing = _Sink(), set()
        m.averages = None
        await m.prepare()
        for f in m.jobs:  # nothing left to fetch (empty, or journaled before a kill): verify now
            if f.state == "pending" and not f.pending_chunks:
                m.maybe_finish(f)

    # -- chunks ------------------------------------------------------------------
    def ready(self, now: float) -> int:
        """Chunks this job could start now."""
        backing_off = sum(1 for t, _, _ in self.retry if t <= now)
        return backing_off + sum(len(f.pending_chunks) for f in self.m.jobs if f.state == "pending")

    def next_retry(self) -> float | None:
        return self.retry[0][0] if self.retry else None

    def take(self, now: float):
        """The next chunk to start (a retry that is due first, then in file order)."""
        from .engine import Chunk

        if self.retry and self.retry[0][0] <= now:
            return heapq.heappop(self.retry)[2]
        for f in self.m.jobs:
            if f.state == "pending" and f.pending_chunks:
                s, e = f.pending_chunks.popleft()
                f.outstanding += 1
                self.next_id += 1
                return Chunk(self.next_id, f, s, e)
        return None

    def start(self, chunk) -> asyncio.Task:
        t = asyncio.ensure_future(self.m.transfer(chunk))
        self.tasks[t] = chunk
        return t

    def collect(self, t: asyncio.Task, now: float) -> None:
        """A chunk's task ended: done, retried after a backoff, or its file failed."""
        m, c = self.m, self.tasks.pop(t)
        exc = t.exception() if not t.cancelled() else asyncio.CancelledError()
        f: FileJob = c.job
        if exc is None:
            f.outstanding -= 1
            m.maybe_finish(f)
            return
        if isinstance(exc, Transient) and c.attempts < m.retries and f.state == "pending":
            delay = backoff(c.attempts, m.rng, m.backoff_base, m.backoff_cap)
            c.attempts += 1
            m.journal.failure(f.name, str(exc))
            heapq.heappush(self.retry, (now + delay, c.id, c))
            return
        f.outstanding -= 1
        if f.state == "pending":
            if isinstance(exc, DiskFull):
                why = f"disk full: {exc}"
            else:
                why = str(exc) if isinstance(exc, (Fatal, Transient)) else describe(exc)
                if isinstance(exc, Transient):
                    why += f" (gave up after {m.retries} retries)"
            m.fail(f, why)
        m.maybe_finish(f)

    def reap_finishing(self) -> None:
        """Verifications that ended (an error in one is the file's failure)."""
        for t in [t for t in self.m.finishing if t.done()]:
            self.m.finishing.discard(t)
            if not t.cancelled() and t.exception() is not None:  # place() keeps OSError; anything else
                f = next(f for f in self.m.jobs if f.placing is t)
                self.m.fail(f, f"cannot verify or place: {describe(t.exception())}")

    # -- the job -----------------------------------------------------------------
    def ended(self) -> bool:
        return (not self.tasks and not self.m.finishing and not self.retry
                and all(f.state in ("done", "skipped", "failed") for f in self.m.jobs))

    def outcome(self) -> tuple[str, str | None]:
        failed = [f for f in self.m.jobs if f.state == "failed"]
        if not failed:
            return "done", None
        return "failed", "; ".join(f"{f.name}: {f.error}" for f in failed)

    def progress(self) -> tuple[int, int | None]:
        """(bytes journaled or placed, total bytes if every size is known)."""
        done = sum((f.size or 0) if f.state in ("done", "skipped") else
                   sum(e - s for s, e in self.m.journal.ranges(f.name)) for f in self.m.jobs)
        sizes = [f.size for f in self.m.jobs]
        return done, (sum(sizes) if all(s is not None for s in sizes) else None)

    async def stop(self) -> None:
        """Cancel the chunks in flight (each journals what it received) and wait for them."""
        tasks = list(self.tasks) + list(self.m.finishing)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.tasks.clear()
        self.m.finishing.clear()

    def close(self, remove: bool) -> None:
        """Close files, journal and lock; ``remove``: the job ended, drop its folder."""
        m = self.m
        for f in m.jobs:
            if f.fd is not None:
                os.close(f.fd)
                f.fd = None
        if getattr(m, "journal", None) is not None:
            m.journal.finish_run(m.run_id, 0)
            m.journal.close()
            m.journal = None
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None
        if remove:
            _remove(self.meta)


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    try:
        folder.parent.rmdir()  # DEST/.cclab-bg, if no other job uses it
    except OSError:
        pass


def remove_job_folder(folder: Path) -> bool:
    """Remove an ended job's folder unless a process holds its lock; True if removed."""
    try:
        fd = os.open(folder / "lock", os.O_RDWR)
    except FileNotFoundError:
        _remove(folder)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        _remove(folder)
    finally:
        os.close(fd)
    return True


class _Sink:
    """The engine's queue of re-fetched files (a checksum mismatch): here a file's
    requeued chunks are taken from its own list in file order, so the queue is not kept."""

    def append(self, _job) -> None:
        pass

    def __bool__(self) -> bool:
        return False
