"""Where runs execute: in this process, in a local process pool, or on a dask cluster.

Every executor takes ``(key, config, keep)`` tasks and yields ``(key, payload)`` as runs
finish, in any order, keeping a bounded number of runs in flight so that neither
tasks nor results pile up in memory. No scheduling or transport of our own: the
pool is :class:`concurrent.futures.ProcessPoolExecutor`, the cluster is
dask.distributed's.

``cluster`` values (``--cluster`` on the command line):

* ``None``: the local pool, one worker per core (``workers`` to change it);
* ``"local:N"``: a dask LocalCluster of N single-threaded worker processes;
* ``"tcp://HOST:8786"`` (any dask scheduler address): an existing cluster;
* a ``distributed.Client``: that client's cluster;
* ``"serial"``: this process, one run after another (debugging, tests).

Lost workers: dask reschedules the runs of a worker that dies (up to its
``distributed.scheduler.allowed-failures``, 3 by default). When a pool process
dies, the runs that were in flight are run again one at a time, so that the run
that kills its process is found and the others are not blamed. A run that still
fails so is reported ``kind = "lost"`` and retried by the next sweep. A run's own
error never takes the executor down (see ``worker.execute``).
"""
from __future__ import annotations

import os
import socket
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterable, Iterator

from .worker import execute

Task = tuple  # (key, canonical config[, the tables to keep: worker.execute's keep])


def _keep(t: Task):
    return t[2] if len(t) > 2 else None


def _lost(msg: str) -> dict:
    return {"ok": False, "kind": "lost", "error": msg, "host": socket.gethostname(), "wall_s": None}


def cpu_count() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


class Executor:
    """Base class: a context manager whose :meth:`run` yields ``(key, payload)``."""

    description = ""
    workers = 1

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        pass

    def start(self) -> "Executor":
        """Start workers (a pool's processes); a no-op elsewhere."""
        return self

    def run(self, tasks: Iterable[Task], engine: str) -> Iterator[tuple[str, dict]]:
        raise NotImplementedError


class SerialExecutor(Executor):
    """Runs in this process, one after another."""

    description = "this process"

    def run(self, tasks, engine):
        for t in tasks:
            yield t[0], execute(t[1], engine, t[0], _keep(t))


def _watch_lifeline(lifeline, inherited_end=None) -> None:
    """In a pool process: exit as soon as the sweeping process is gone (killed included).
    Nothing is ever sent on the lifeline; reading it ends only when its other end closes
    (a forked process first closes its own copy of that end)."""
    if inherited_end is not None:
        inherited_end.close()

    def wait() -> None:
        try:
            lifeline.recv()
        except (EOFError, OSError):
            pass
        os._exit(0)

    threading.Thread(target=wait, name="cclab-lifeline", daemon=True).start()


class PoolExecutor(Executor):
    """A local process pool (``concurrent.futures``), one single-threaded process per worker."""

    def __init__(self, workers: int | None = None):
        import multiprocessing as mp
        import sys

        self.workers = int(workers) if workers else cpu_count()
        if self.workers < 1:
            raise ValueError(f"workers: expected at least 1, got {workers}")
        self.description = f"local pool of {self.workers} process{'es' if self.workers > 1 else ''}"
        # fork on Linux: the workers start at once with the engine imported, and the sweep
        # works from any script, notebook or standard input (spawn and forkserver run the
        # main script again in every worker). They are forked before any thread of ours
        # starts (see run), run nothing but worker.execute, and end with os._exit, never
        # touching the store's open index. spawn elsewhere.
        self._fork = sys.platform.startswith("linux")
        self._ctx = mp.get_context("fork" if self._fork else "spawn")
        self._pool = None
        self._lifeline = None

    def _new_pool(self) -> ProcessPoolExecutor:
        # A pool process does not notice when the process that feeds it dies (its queues stay
        # open in its siblings), so each holds the read end of a pipe whose only write end is
        # ours: when this process ends, however it ends, the pipe closes and they exit.
        self._close_lifeline()
        r, w = self._ctx.Pipe(duplex=False)
        self._lifeline = (r, w)
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx, initializer=_watch_lifeline,
                                   initargs=(r, w if self._fork else None))
        pool.submit(os.getpid).result()  # start every process now (with fork, all start at the first task)
        return pool

    def start(self) -> "PoolExecutor":
        """Start the pool's processes (before any progress bar's thread exists)."""
        if self._pool is None:
            self._pool = self._new_pool()
        return self

    def _close_lifeline(self) -> None:
        if self._lifeline is not None:
            for c in self._lifeline:
                c.close()
            self._lifeline = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._close_lifeline()

    def run(self, tasks, engine):
        tasks = iter(tasks)
        limit = 4 * self.workers
        pending: dict[Any, Task] = {}
        suspects: list[Task] = []  # in flight when the pool broke: run again one at a time
        self.start()
        while True:
            broken: list[Task] = []
            want = (0 if pending else 1) if suspects else limit - len(pending)
            for _ in range(max(0, want)):
                t = suspects.pop() if suspects else next(tasks, None)
                if t is None:
                    break
                try:
                    pending[self._pool.submit(execute, t[1], engine, t[0], _keep(t))] = t
                except BrokenProcessPool:
                    broken.append(t)
                    break
            if not pending and not broken:
                return
            if pending and not broken:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    t = pending.pop(fut)
                    try:
                        payload = fut.result()
                    except BrokenProcessPool:
                        broken.append(t)
                        continue
                    yield t[0], payload
            if broken:
                # a worker process died: every run in flight failed with the pool
                broken += pending.values()
                pending.clear()
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()  # closes the old lifeline: the old pool's processes exit
                if len(broken) == 1:  # it was alone in the pool: the run killed its process
                    yield broken[0][0], _lost("the worker process died while running it alone (out of memory, "
                                              "or a crash of the simulator)")
                else:
                    suspects.extend(broken)


class DaskExecutor(Executor):
    """A dask.distributed cluster: an existing scheduler, a LocalCluster, or a given Client."""

    def __init__(self, cluster: Any):
        try:
            import distributed
        except ImportError:  # pragma: no cover
            raise RuntimeError("--cluster needs dask.distributed: pip install distributed") from None
        self._cluster = None
        self._own_client = True
        if isinstance(cluster, distributed.Client):
            self.client = cluster
            self._own_client = False
        elif check_cluster(cluster) == "local":
            import logging

            self._cluster = distributed.LocalCluster(n_workers=int(cluster.split(":", 1)[1]), threads_per_worker=1,
                                                     processes=True, dashboard_address=":0",
                                                     silence_logs=logging.ERROR)
            self.client = distributed.Client(self._cluster)
        else:
            try:
                self.client = distributed.Client(cluster, timeout="20s")
            except OSError as exc:
                raise RuntimeError(f"--cluster {cluster}: cannot reach the dask scheduler: {exc}") from None
        self.workers = max(1, sum(self.client.nthreads().values()))
        where = "LocalCluster" if self._cluster is not None else f"dask scheduler {self.client.scheduler.address}"
        self.description = f"{where} with {self.workers} worker thread{'s' if self.workers > 1 else ''}"

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def run(self, tasks, engine):
        from distributed import as_completed

        tasks = iter(tasks)
        limit = max(16, 4 * self.workers)
        futures = {}

        def submit(t: Task):
            fut = self.client.submit(execute, t[1], engine, t[0], _keep(t), key=f"cclab-run-{t[0]}", pure=False)
            futures[fut.key] = t[0]
            return fut

        first = [submit(t) for t in _take(tasks, limit)]
        if not first:
            return
        ac = as_completed(first, with_results=True, raise_errors=False)
        for fut, res in ac:
            key = futures.pop(fut.key)
            if isinstance(res, BaseException) or fut.status == "error":
                payload = _lost(f"{type(res).__name__}: {res}")
            else:
                payload = res
            fut.release()
            nxt = next(tasks, None)
            if nxt is not None:
                ac.add(submit(nxt))
            yield key, payload


def _take(it: Iterator, n: int) -> list:
    out = []
    for _ in range(n):
        x = next(it, None)
        if x is None:
            break
        out.append(x)
    return out


def check_cluster(cluster: Any) -> str:
    """The kind of a ``cluster`` value ("pool", "serial", "local", "address", "client");
    ValueError naming the value if it is none of them."""
    if cluster is None or cluster in ("", "pool"):
        return "pool"
    if cluster == "serial":
        return "serial"
    if isinstance(cluster, str):
        if cluster.startswith("local:"):
            n = cluster.split(":", 1)[1]
            if not n.isdigit() or int(n) < 1:
                raise ValueError(f"--cluster {cluster}: expected local:N with N a number of workers >= 1")
            return "local"
        if "://" in cluster:
            return "address"
        raise ValueError(f"--cluster {cluster!r}: expected tcp://HOST:PORT (a dask scheduler), local:N or serial")
    if type(cluster).__name__ == "Client":
        return "client"
    raise ValueError(f"cluster: expected an address, local:N, serial or a distributed.Client, got {cluster!r}")


def make_executor(cluster: Any = None, workers: int | None = None) -> Executor:
    """The executor for a ``cluster`` value (see the module's documentation)."""
    kind = check_cluster(cluster)
    if kind == "pool":
        return PoolExecutor(workers)
    if kind == "serial":
        return SerialExecutor()
    return DaskExecutor(cluster)
