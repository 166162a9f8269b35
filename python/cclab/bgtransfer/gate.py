"""One access controller per destination host, shared by every job that fetches from it.

The controller (crates/control through ``cclab._core.AccessController``; FAIRBAT by
default, FAIRBAT §III) sees the host's background chunks as one stream, as the paper's
sender sees its buffer: a chunk *arrives* when its work does (its job is added, or
released from a hold: a window, a not-before date, a pause, the transfer check; or the
job's size is learnt and it holds more chunks than were counted), *waits* while not
admitted, and *completes* when it leaves the network. Eq. (2), m ← m + γ (n − τ), then
reads the real backlog n: arrivals above what m connections carry make it grow and m
rise; a drained queue makes m fall.

The controller's queue is kept equal to the host's *backlog*: the chunks of its
background jobs that are not held, not in flight and not backing off (``JobView.backlog``:
the chunks an open job can start, or what a job not opened yet is expected to hold).
It grows by arrivals. The controller has no call to withdraw a waiting chunk, so when
the backlog falls without an admission (a job held again, or opened and found to hold
fewer chunks than expected) the surplus tokens are flushed at the first admission the
limit allows, each admitted and completed at the same instant (an empty micro-flow):
until then, at most until the next completion, n counts them. (Rebuilding the controller
instead would restart its period, gain schedule and averages; a withdrawal in the crate
would be exact, but the crates are not changed here.)

What the controller queues are tokens, not chunks: each admitted token is given to the
first ready chunk in strict priority order (scheduler.assign), so a high-priority job
added later overtakes the low ones already queued without the controller knowing
priorities. A token is admitted only when an open job has a chunk to start: the tokens
of jobs not opened yet wait (the daemon opens them, in priority order, as the limit
needs them).
"""
from __future__ import annotations

import math

from .policy import Policy
from .scheduler import JobView, assign, backlog_background, ready_background


class HostGate:
    def __init__(self, host: str, policy: Policy, now: float, chunk_size: int, m0: float | None = None):
        """``m0``: the limit an earlier controller of this host had learnt, resumed from
        (FAIRBAT, rate tracking) unless the policy gives its own m0 (as `bg fetch` does)."""
        self.host = host
        self.policy = policy
        self.chunk_size = chunk_size
        self.ctrl = policy.controller(now)
        if m0 is not None and policy.name in ("fairbat", "rate") and "m0" not in (policy.params or {}):
            try:
                self.ctrl = policy.controller(now, {"m0": m0})
            except ValueError:  # outside m_min..m_max: from the policy's m0
                pass
        self.delivered = 0  # bytes received by this host's chunks (rate tracking measures them)
        self.tokens = 0  # arrivals announced
        self.active = 0  # background chunks in flight (foreground ones are not counted)
        self.withdrawn = 0  # tokens flushed: their chunks left the backlog unadmitted

    @property
    def limit(self) -> float | None:
        return self.ctrl.limit if self.ctrl is not None else None

    def deadline(self) -> float:
        return self.ctrl.next_deadline() if self.ctrl is not None else math.inf

    def step(self, now: float, wall: float, jobs: list[JobView], allowed: bool, cap: int) -> list[int]:
        """Deadlines due, arrivals of the backlog's growth, withdrawals, admissions: the
        job of each chunk to start (at most ``cap``). ``now``: the controller's clock
        (monotonic); ``wall``: the epoch seconds the jobs' holds are judged at."""
        ctrl = self.ctrl
        if ctrl is None:  # unlimited: every ready chunk
            ids = assign(jobs, cap, wall, allowed)
            self.active += len(ids)
            return ids
        while ctrl.next_deadline() <= now:
            ctrl.on_deadline(now, float(self.delivered))
        backlog = backlog_background(jobs, wall, allowed)
        while ctrl.waiting < backlog:
            ctrl.arrive(now, self.tokens, float(self.chunk_size))
            self.tokens += 1
        surplus = ctrl.waiting - backlog
        startable = min(cap, ready_background(jobs, wall, allowed))
        admitted = 0
        while (surplus > 0 or admitted < startable) and ctrl.admit(now) is not None:
            if surplus > 0:  # a withdrawn chunk's token: leaves at once
                ctrl.complete(now)
                surplus -= 1
                self.withdrawn += 1
            else:
                admitted += 1
        ids = assign(jobs, admitted, wall, allowed)
        assert len(ids) == admitted, "an admitted token with no chunk to start"
        self.active += len(ids)
        return ids

    def done(self, now: float) -> None:
        """A background chunk of this host left the network."""
        self.active -= 1
        if self.ctrl is not None:
            self.ctrl.complete(now)

    def to_dict(self) -> dict:
        c = self.ctrl
        return {"host": self.host, "policy": self.policy.name, "limit": None if c is None else c.limit,
                "active": self.active, "waiting": 0 if c is None else c.waiting,
                "delivered": self.delivered, "arrived": self.tokens, "withdrawn": self.withdrawn, "idle": False}
