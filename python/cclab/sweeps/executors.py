"""Where runs execute: in this process, in a local process pool, or on a dask cluster.

Every executor takes ``(key, config)`` tasks and yields ``(key, payload)`` as runs
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
``distributed.scheduler.allowed-failures``, 3 by default); after that, and when a
pool process dies, the run is reported ``kind = "lost"`` and retried by the next
sweep. A run's own error never takes the executor down (see ``worker.execute``).
"""
from __future__ import annotations

import os
import socket
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterable, Iterator

from .worker import execute

Task = tuple[str, str]  # (key, canonical config)

#: A pool process that dies this many times with a run in flight gives up on that run.
MAX_POOL_CRASHES = 2


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

    def run(self, tasks: Iterable[Task], engine: str) -> Iterator[tuple[str, dict]]:
        raise NotImplementedError


class SerialExecutor(Executor):
    """Runs in this process, one after another."""

    description = "this process"

    def run(self, tasks, engine):
        for key, config in tasks:
            yield key, execute(config, engine, key)


def _preload() -> None:
    from .. import api, _core  # noqa: F401
    import pyarrow.parquet  # noqa: F401


class PoolExecutor(Executor):
    """A local process pool (``concurrent.futures``), one single-threaded process per worker."""

    def __init__(self, workers: int | None = None):
        import multiprocessing as mp

        self.workers = int(workers) if workers else cpu_count()
        if self.workers < 1:
            raise ValueError(f"workers: expected at least 1, got {workers}")
        self.description = f"local pool of {self.workers} process{'es' if self.workers > 1 else ''}"
        methods = mp.get_all_start_methods()
        # forkserver: workers fork from a clean server that has imported the engine once
        # (no threads of this process copied, start-up paid once); spawn elsewhere.
        self._ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        if self._ctx.get_start_method() == "forkserver":
            self._ctx.set_forkserver_preload(["cclab.api", "cclab._core", "pyarrow.parquet", "cclab.sweeps.worker"])
        self._pool = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(self, tasks, engine):
        tasks = iter(tasks)
        limit = 4 * self.workers
        crashes: dict[str, int] = {}
        pending: dict[Any, Task] = {}
        retry: list[Task] = []
        if self._pool is None:
            self._pool = self._new_pool()
        while True:
            while len(pending) < limit:
                t = retry.pop() if retry else next(tasks, None)
                if t is None:
                    break
                try:
                    pending[self._pool.submit(execute, t[1], engine, t[0])] = t
                except BrokenProcessPool:
                    retry.append(t)
                    break
            if not pending:
                if retry:  # the pool broke while submitting
                    self._pool = self._new_pool()
                    continue
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            broken = False
            for fut in done:
                t = pending.pop(fut)
                try:
                    yield t[0], fut.result()
                except BrokenProcessPool:
                    broken = True
                    crashes[t[0]] = crashes.get(t[0], 0) + 1
                    if crashes[t[0]] >= MAX_POOL_CRASHES:
                        yield t[0], _lost(f"the worker process died {crashes[t[0]]} times while running it "
                                          "(out of memory or a crash of the simulator)")
                    else:
                        retry.append(t)
            if broken:
                # every run in flight failed with the pool; run them again in a new one
                for fut, t in list(pending.items()):
                    crashes[t[0]] = crashes.get(t[0], 0) + 1
                    retry.append(t)
                pending.clear()
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()


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
        elif isinstance(cluster, str) and cluster.startswith("local:"):
            n = cluster.split(":", 1)[1]
            if not n.isdigit() or int(n) < 1:
                raise ValueError(f"--cluster {cluster}: expected local:N with N a number of workers >= 1")
            import logging

            self._cluster = distributed.LocalCluster(n_workers=int(n), threads_per_worker=1, processes=True,
                                                     dashboard_address=None, silence_logs=logging.ERROR)
            self.client = distributed.Client(self._cluster)
        elif isinstance(cluster, str) and "://" in cluster:
            try:
                self.client = distributed.Client(cluster, timeout="20s")
            except OSError as exc:
                raise RuntimeError(f"--cluster {cluster}: cannot reach the dask scheduler: {exc}") from None
        else:
            raise ValueError(f"--cluster {cluster!r}: expected tcp://HOST:PORT, local:N or serial")
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
            fut = self.client.submit(execute, t[1], engine, t[0], key=f"cclab-run-{t[0]}", pure=False)
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


def make_executor(cluster: Any = None, workers: int | None = None) -> Executor:
    """The executor for a ``cluster`` value (see the module's documentation)."""
    if cluster is None or cluster == "" or cluster == "pool":
        return PoolExecutor(workers)
    if cluster == "serial":
        return SerialExecutor()
    return DaskExecutor(cluster)
