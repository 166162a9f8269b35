"""`cclab bg daemon`: the background-transfer service.

One process, one asyncio loop: the persistent queue (store.py), the local API on a Unix
socket (api.py), one access controller per destination host (gate.py), whose admitted
chunks go to jobs in strict priority (scheduler.py), each job's transfer on the engine
(jobrun.py). The loop sleeps until something happens: a chunk or a verification ends,
a client acts, a retry or a controller deadline is due, a hold (window, not-before)
begins or ends, the transfer check is due; idle with any number of queued jobs it
wakes only for those.

Every background job's chunks count as waiting at its host's controller from the moment
the job is added or released from a hold (gate.py), opened or not: a job not opened yet
counts the chunks it is expected to hold (from --size, or one per URL, until its opening
learns the sizes). Jobs are opened (lock, journal, size probe) lazily, in priority order,
a few per host, enough for what the limit admits at once; a queue of a thousand jobs
costs a row each in memory, not a connection or a file.
"""
from __future__ import annotations

import asyncio
import fcntl
import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .engine import BACKOFF_BASE, BACKOFF_CAP, DEFAULT_CHUNK, DEFAULT_RETRIES, DEFAULT_TIMEOUT
from .gate import HostGate
from .hooks import run_check, run_hook
from .jobrun import JobRun, remove_job_folder
from .jobs import JobError, NoJob, check_spec
from .manifest import RESERVED
from .policy import Policy
from .scheduler import RANK, JobView, backlog_background, expected_chunks, foreground, hold, next_change, order
from .store import JobStore, spec_of

#: jobs opened at once per host beyond what its controller needs (and a ceiling)
OPEN_MAX = 16
#: seconds between two saves of running jobs' progress (and rate estimates)
PROGRESS_S = 1.0


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "cclab-bg"


def default_socket() -> Path:
    """$CCLAB_BG_SOCKET, else $XDG_RUNTIME_DIR/cclab-bg/daemon.sock, else STATE/daemon.sock."""
    if os.environ.get("CCLAB_BG_SOCKET"):
        return Path(os.environ["CCLAB_BG_SOCKET"])
    run = os.environ.get("XDG_RUNTIME_DIR")
    return Path(run) / "cclab-bg" / "daemon.sock" if run else default_state_dir() / "daemon.sock"


@dataclass
class Options:
    state: Path
    socket: Path
    policy: Policy
    chunk_size: int = DEFAULT_CHUNK
    retries: int = DEFAULT_RETRIES
    timeout: float = DEFAULT_TIMEOUT
    backoff: tuple[float, float] = (BACKOFF_BASE, BACKOFF_CAP)
    max_active: int = 64
    max_rate: float | None = None
    check: str | None = None
    check_every: float = 60.0
    quiet: bool = False


@dataclass
class Live:
    """An unfinished job in memory."""

    id: int
    spec: object
    state: str
    run: JobRun | None = None
    rate: float = 0.0
    last_bytes: int | None = None
    bytes_done: int = 0
    size: int | None = None
    expected: int = 1  # chunks it holds before it is opened (scheduler.expected_chunks)

    def view(self, now: float) -> JobView:
        s = self.spec
        ready = self.run.ready(now) if self.run is not None else 0
        backlog = ready if self.run is not None else self.expected
        return JobView(self.id, s.priority, self.state, s.not_before, s.window, ready, backlog)


class Daemon:
    def __init__(self, opts: Options):
        self.o = opts
        self.live: dict[int, Live] = {}
        self.gates: dict[str, HostGate] = {}
        self.learnt: dict[str, float | None] = {}  # the limit of a retired controller, per host
        self.chunks: dict[asyncio.Task, tuple[Live, bool]] = {}  # task -> (job, through the gate)
        self.opening: dict[asyncio.Task, Live] = {}
        self.side: set[asyncio.Task] = set()  # hooks
        self.allowed = opts.check is None  # with a check: no background transfer until it says yes
        self.check_task: asyncio.Task | None = None
        self.next_check = 0.0
        self.last_save = 0.0
        self.global_bucket = None

    # -- the service (the API's calls) -------------------------------------------
    def log(self, msg: str) -> None:
        if not self.o.quiet:
            print(f"cclab bg daemon: {msg}", file=sys.stderr, flush=True)

    def clock(self) -> float:
        return time.monotonic() - self.t0

    def add(self, raw: dict) -> dict:
        spec = check_spec(raw, time.time())
        for lv in self.live.values():  # two jobs placing one file would race for it
            same = [i for i, n in enumerate(spec.names) if lv.spec.dest == spec.dest and n in lv.spec.names]
            if same:
                raise JobError(f"names[{same[0]}]: job {lv.id} is already fetching "
                               f"{os.path.join(spec.dest, spec.names[same[0]])}")
        job_id = self.store.add(spec)
        self.live[job_id] = self.expect(Live(job_id, spec, "queued"))
        self.log(f"job {job_id} added: {len(spec.urls)} URL(s) of {spec.host} into {spec.dest}, {spec.priority}")
        self.wake.set()
        return self.job(job_id)

    def expect(self, lv: Live) -> Live:
        """The chunks ``lv`` counts as waiting until it is opened: they arrive at its
        host's controller when the job is added (or released from a hold)."""
        lv.expected = expected_chunks(len(lv.spec.urls), self.o.chunk_size, lv.size, lv.bytes_done, lv.spec.size)
        return lv

    def job(self, job_id: int) -> dict:
        row = self.store.get(job_id)
        if row is None:
            raise NoJob(job_id)
        return self.describe(row, time.time())

    def jobs(self) -> dict:
        wall = time.time()
        hosts = [g.to_dict() for g in self.gates.values()]
        hosts += [{"host": h, "policy": self.o.policy.name, "limit": m, "active": 0, "waiting": 0, "idle": True}
                  for h, m in self.learnt.items() if h not in self.gates]  # retired: the limit it had learnt
        return {"jobs": [self.describe(r, wall) for r in self.store.all()], "allowed": self.allowed,
                "hosts": hosts, "max_rate": self.o.max_rate, "pid": os.getpid()}

    def describe(self, row, wall: float) -> dict:
        spec = spec_of(row)
        lv = self.live.get(row["id"])
        gate = self.gates.get(spec.host)
        d = {"id": row["id"], "state": row["state"], "priority": spec.priority, "host": spec.host,
             "dest": spec.dest, "names": spec.names, "urls": spec.urls, "bytes_done": row["bytes_done"],
             "size": row["size"], "error": row["error"], "added_at": row["added_at"],
             "finished_at": row["finished_at"], "window": spec.window, "not_before": spec.not_before,
             "max_rate": spec.max_rate, "rate_Bps": None, "eta_s": None, "held": None, "active_chunks": 0,
             "limit": gate.limit if gate is not None and spec.priority != "foreground" else None}
        if lv is not None:
            d.update(bytes_done=lv.bytes_done, size=lv.size, rate_Bps=lv.rate,
                     held=hold(lv.view(self.clock()), wall, self.allowed),
                     active_chunks=len(lv.run.tasks) if lv.run is not None else 0)
            if lv.rate > 0 and lv.size is not None:
                d["eta_s"] = max(0.0, (lv.size - lv.bytes_done) / lv.rate)
        return d

    async def act(self, job_id: int, verb: str) -> dict:
        row = self.store.get(job_id)
        if row is None:
            raise NoJob(job_id)
        lv = self.live.get(job_id)
        if lv is None:  # ended: nothing to do, say so
            raise JobError(f"job {job_id}: already {row['state']}, cannot {verb} it")
        if verb == "pause":
            lv.state = "paused"
        elif verb == "resume":
            lv.state = "running" if lv.run is not None else "queued"
        else:
            await self.cancel(lv)
            return self.job(job_id)
        self.store.set_state(job_id, lv.state)
        self.log(f"job {job_id}: {verb}d")
        self.wake.set()
        return self.job(job_id)

    async def cancel(self, lv: Live) -> None:
        for t, (owner, _) in list(self.chunks.items()):
            if owner is lv:
                t.cancel()
        self.store.set_state(lv.id, "cancelled")  # first: see end_jobs
        self.live.pop(lv.id, None)
        if lv.run is not None:
            await lv.run.stop()
            for t in [t for t, (owner, _) in self.chunks.items() if owner is lv]:
                self.settle(lv, self.chunks.pop(t)[1])
            lv.run.close(remove=True)
        for t, owner in list(self.opening.items()):
            if owner is lv:
                t.cancel()
        self.log(f"job {lv.id}: cancelled")
        self.wake.set()

    # -- the loop ----------------------------------------------------------------
    def run(self) -> int:
        try:
            asyncio.run(self.main())
        except KeyboardInterrupt:
            pass
        return 0

    async def main(self) -> None:
        import aiohttp

        from .api import listen, make_app
        from .server import TokenBucket

        o = self.o
        o.state.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = os.open(o.state / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"--state: another cclab bg daemon runs on {o.state} (lock {o.state / 'daemon.lock'})") from None
        self.store = JobStore(o.state / "jobs.sqlite")
        again = self.store.requeue_running()
        swept = sweep_ended(self.store)
        for row in self.store.unfinished():
            self.live[row["id"]] = self.expect(Live(row["id"], spec_of(row), row["state"],
                                                    bytes_done=row["bytes_done"], size=row["size"]))
        self.t0 = time.monotonic()
        self.wake, self.stopping = asyncio.Event(), asyncio.Event()
        if o.max_rate:
            self.global_bucket = TokenBucket(o.max_rate, max(65536, o.max_rate * 0.02))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        runner = await listen(make_app(self), str(o.socket))
        self.log(f"listening on {o.socket}; {len(self.live)} unfinished jobs ({again} resumed), policy "
                 f"{o.policy.name}" + (f"; removed the folders of {swept} ended jobs a kill had left" if swept else ""))
        connector = aiohttp.TCPConnector(limit=0, force_close=True)
        timeout = aiohttp.ClientTimeout(total=None, connect=o.timeout, sock_connect=o.timeout, sock_read=o.timeout)
        try:
            async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False,
                                             headers={"Accept-Encoding": "identity"}) as session:
                self.session = session
                await self.loop()
                await self.shutdown()
        finally:
            await runner.cleanup()
            self.store.close()
            if o.socket.exists():
                o.socket.unlink()
            os.close(lock)
        self.log("stopped")

    async def loop(self) -> None:
        while not self.stopping.is_set():
            now, wall = self.clock(), time.time()
            self.end_jobs(now)
            hosts = self.snapshot(now)
            self.retire_gates(hosts, wall)
            self.open_more(hosts, wall)
            self.dispatch(hosts, now, wall)
            self.save_progress(now)
            self.maybe_check(now)
            await self.wait(hosts, now, wall)
            now = self.clock()
            for t in [t for t in self.chunks if t.done()]:
                lv, gated = self.chunks.pop(t)
                self.settle(lv, gated)
                if lv.run is not None:
                    lv.run.collect(t, now)
            self.reap_side()

    def settle(self, lv: Live, gated: bool) -> None:
        """A chunk of ``lv`` left the network: its host's controller hears of it."""
        if gated:
            self.gates[lv.spec.host].done(self.clock())

    async def shutdown(self) -> None:
        """SIGTERM: chunks in flight journal what they received; jobs stay queued."""
        opening = list(self.opening)
        for t in opening:
            t.cancel()
        await asyncio.gather(*opening, return_exceptions=True)
        for lv in self.live.values():
            if lv.run is not None:
                await lv.run.stop()
                lv.run.close(remove=False)
        for t in self.side:
            t.cancel()

    # -- jobs: open, end ---------------------------------------------------------
    def gate(self, host: str, now: float | None = None) -> HostGate:
        """The host's controller, made when the host has background chunks waiting or a
        job of it opens (resuming from the limit the last one had learnt) and retired when
        neither is left: an idle host's controller neither wakes the daemon nor learns
        from an empty queue."""
        if host not in self.gates:
            self.gates[host] = HostGate(host, self.o.policy, self.clock() if now is None else now, self.o.chunk_size,
                                        m0=self.learnt.get(host))
        return self.gates[host]

    def snapshot(self, now: float) -> dict[str, dict[int, JobView]]:
        """What the scheduler sees of each host's unfinished jobs, once per turn of the loop
        (a thousand queued jobs are read once, not by each step)."""
        hosts: dict[str, dict[int, JobView]] = {}
        for lv in self.live.values():
            hosts.setdefault(lv.spec.host, {})[lv.id] = lv.view(now)
        return hosts

    def retire_gates(self, hosts: dict[str, dict[int, JobView]], wall: float) -> None:
        """Retire the controllers of hosts with no job open and no background chunk waiting."""
        for host in [h for h, g in self.gates.items() if g.active == 0]:
            views = hosts.get(host, {})
            if (not any(self.live[i].run is not None for i in views)
                    and backlog_background(list(views.values()), wall, self.allowed) == 0):
                self.learnt[host] = self.gates.pop(host).limit

    def open_more(self, hosts: dict[str, dict[int, JobView]], wall: float) -> None:
        """Open the next jobs of each host (priority order) while the open ones have fewer
        ready chunks than its controller may admit at once, or the next one outranks an
        open one with chunks to start (its chunks must get the next admission), one
        opening per host at a time."""
        busy = {lv.spec.host for lv in self.opening.values()}
        for host, views in hosts.items():
            if host in busy:
                continue
            lvs = [self.live[i] for i in views]
            gate = self.gates.get(host)
            need = 1 if gate is None else math.ceil(gate.limit or 1) + 2
            runnable = [lv for lv in lvs if hold(views[lv.id], wall, self.allowed) is None]
            have = sum(views[lv.id].ready for lv in runnable if lv.run is not None)
            opened = sum(1 for lv in lvs if lv.run is not None)
            nxt = next((lv for v in order([views[lv.id] for lv in runnable]) for lv in [self.live[v.id]]
                        if lv.run is None), None)
            outranked = nxt is not None and any(
                RANK[lv.spec.priority] > RANK[nxt.spec.priority] and views[lv.id].ready > 0
                for lv in runnable if lv.run is not None)
            if nxt is not None and opened < OPEN_MAX and (have < need or outranked or nxt.spec.priority == "foreground"):
                self.opening[asyncio.ensure_future(self.open_job(nxt))] = nxt

    async def open_job(self, lv: Live) -> None:
        o = self.o
        run = JobRun(lv.id, lv.spec, chunk_size=o.chunk_size, retries=o.retries, timeout=o.timeout,
                     backoff_base=o.backoff[0], backoff_cap=o.backoff[1])
        try:
            await run.open(self.session, self.t0)
        except asyncio.CancelledError:  # cancelled (its folder goes) or the daemon stops (it stays)
            run.close(remove=run.lock_fd is not None and lv.id not in self.live)
            raise
        except Exception as exc:  # noqa: BLE001 (the job fails, not the daemon)
            run.close(remove=run.lock_fd is not None)  # never another process's folder
            self.end(lv, "failed", f"cannot start: {exc}")
            return
        finally:
            self.opening = {t: v for t, v in self.opening.items() if v is not lv}
        if lv.id not in self.live:  # cancelled meanwhile
            run.close(remove=True)
            return
        run.m.pace = self.pacer(lv)
        lv.run = run
        if lv.state == "queued":
            lv.state = "running"
            self.store.set_state(lv.id, "running")
        self.wake.set()

    def pacer(self, lv: Live):
        from .server import TokenBucket

        gate = self.gate(lv.spec.host)
        rate = lv.spec.max_rate
        bucket = TokenBucket(rate, max(16384, rate * 0.02)) if rate else None

        async def pace(n: int) -> None:
            gate.delivered += n
            if bucket is not None:
                await bucket.take(n)
            if self.global_bucket is not None:
                await self.global_bucket.take(n)
        return pace

    def end_jobs(self, now: float) -> None:
        for lv in list(self.live.values()):
            if lv.run is None:
                continue
            lv.run.reap_finishing()
            if lv.run.ended():
                state, error = lv.run.outcome()
                lv.bytes_done, lv.size = lv.run.progress()
                self.store.progress(lv.id, lv.bytes_done, lv.size)
                self.end(lv, state, error)  # recorded first: a kill before the removal below
                lv.run.close(remove=True)   # leaves a folder that the next start sweeps

    def end(self, lv: Live, state: str, error: str | None) -> None:
        self.store.set_state(lv.id, state, error)
        self.live.pop(lv.id, None)
        self.log(f"job {lv.id}: {state}" + (f": {error}" if error else ""))
        cmd = lv.spec.on_complete if state == "done" else lv.spec.on_error
        if cmd:
            self.side.add(asyncio.ensure_future(self.hook(lv, cmd, state, error)))

    async def hook(self, lv: Live, cmd: str, state: str, error: str | None) -> int:
        """--on-complete / --on-error, with the job in its environment; its status is logged."""
        env = {"CCLAB_BG_JOB": str(lv.id), "CCLAB_BG_STATE": state, "CCLAB_BG_DEST": lv.spec.dest,
               "CCLAB_BG_FILES": "\n".join(lv.spec.names), "CCLAB_BG_ERROR": error or ""}
        rc, what = await run_hook(cmd, lv.spec.shell, env)
        self.log(f"job {lv.id}: hook {what}")
        return rc

    def reap_side(self) -> None:
        self.side = {t for t in self.side if not t.done()}
        if self.check_task is not None and self.check_task.done():
            ok = not self.check_task.cancelled() and self.check_task.result()
            if ok != self.allowed:
                self.log(f"transfer check: {'yes' if ok else 'no'}")
            self.allowed = ok
            self.check_task = None

    # -- chunks ------------------------------------------------------------------
    def dispatch(self, hosts: dict[str, dict[int, JobView]], now: float, wall: float) -> None:
        """Foreground chunks at once; each host's admitted slots in priority order (the
        jobs not opened yet are backlog too). The foreground chunks started do not change
        what the controller sees (it ignores foreground jobs)."""
        for host, by_id in hosts.items():
            views = list(by_id.values())
            cap = self.o.max_active - len(self.chunks)
            for job_id in foreground(views, cap, wall):
                self.start(self.live[job_id], now, gated=False)
            cap = self.o.max_active - len(self.chunks)
            if host not in self.gates and backlog_background(views, wall, self.allowed) == 0:
                continue  # nothing for a controller to hear of
            for job_id in self.gate(host, now).step(now, wall, views, self.allowed, max(0, cap)):
                self.start(self.live[job_id], now, gated=True)

    def start(self, lv: Live, now: float, gated: bool) -> None:
        chunk = lv.run.take(now)
        if chunk is None:  # cannot happen: `ready` counted it
            raise AssertionError(f"job {lv.id}: no chunk ready")
        self.chunks[lv.run.start(chunk)] = (lv, gated)

    def save_progress(self, now: float) -> None:
        """Bytes done and a rate estimate (EWMA over ~5 s) of running jobs, saved once a second."""
        dt = now - self.last_save
        if dt < PROGRESS_S:
            return
        self.last_save = now
        for lv in self.live.values():
            if lv.run is None:
                continue
            done, size = lv.run.progress()
            if lv.last_bytes is not None:
                w = min(1.0, dt / 5.0)
                lv.rate = (1 - w) * lv.rate + w * max(0, done - lv.last_bytes) / dt
            lv.last_bytes = done
            if (done, size) != (lv.bytes_done, lv.size):
                lv.bytes_done, lv.size = done, size
                self.store.progress(lv.id, done, size)

    def maybe_check(self, now: float) -> None:
        """Start the "may I transfer now" command when it is due (exit status 0: yes)."""
        if self.o.check is None or self.check_task is not None or now < self.next_check:
            return
        self.next_check = now + self.o.check_every
        self.check_task = asyncio.ensure_future(run_check(self.o.check, self.o.check_every))

    async def wait(self, hosts: dict[str, dict[int, JobView]], now: float, wall: float) -> None:
        """Until a task ends, a client acts, or the next timed event."""
        views = [v for by_id in hosts.values() for v in by_id.values()]
        times = [g.deadline() for g in self.gates.values()]
        times += [self.live[v.id].run.next_retry() or math.inf for v in views  # a held job's retry waits
                  if self.live[v.id].run is not None and hold(v, wall, self.allowed) is None]
        nc = next_change(views, wall)
        if nc is not None:
            times.append(now + (nc - wall) + 0.01)
        if self.o.check is not None and self.check_task is None:
            times.append(self.next_check)
        running = any(lv.run is not None for lv in self.live.values())
        if running:
            times.append(self.last_save + PROGRESS_S)
        wake = min(times, default=math.inf)
        timeout = None if wake == math.inf else max(0.0, wake - now)
        waits = set(self.chunks) | set(self.opening) | self.side
        waits |= {t for lv in self.live.values() if lv.run is not None for t in lv.run.m.finishing}
        if self.check_task is not None:
            waits.add(self.check_task)
        w = asyncio.ensure_future(self.wake.wait())
        s = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait(waits | {w, s}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            w.cancel()
            s.cancel()
        self.wake.clear()


def sweep_ended(store: JobStore) -> int:
    """Remove DEST/.cclab-bg/job-ID of ended jobs, which a kill between recording the end
    and removing the folder left behind (skipped if someone holds its lock)."""
    n = 0
    for row in store.ended():
        folder = Path(spec_of(row).dest) / RESERVED / f"job-{row['id']}"
        if folder.is_dir() and remove_job_folder(folder):
            n += 1
    return n
