"""One access controller per destination host, shared by every job that fetches from it.

The controller (crates/control through ``cclab._core.AccessController``; FAIRBAT by
default, FAIRBAT §III) sees the host's background chunks as one stream: it is told of
arrivals, admits at most m(t) at once, hears of completions and, at its deadlines, of
the bytes delivered (the same calls as `cclab bg fetch`'s schedule, engine._Schedule).
As there, the backlog is a plain one: the controller's queue is kept topped up at τ
chunks (FAIRBAT's trend term off, trend = 0 unless given; rate tracking keeps one
waiting, without its queue target), so eq. (2) holds m near where the bottleneck's
delay puts it.

What the controller queues are tokens, not chunks: each admitted token is given to the
first ready chunk in strict priority order (scheduler.assign), so a high-priority job
added later overtakes the low ones already queued without the controller knowing
priorities. The queue is topped up only to the number of ready chunks; a token admitted
when no chunk is ready any more (its job was paused or held since) completes at once,
an empty micro-flow.
"""
from __future__ import annotations

import math

from .policy import Policy
from .scheduler import JobView, assign, ready_background


class HostGate:
    def __init__(self, host: str, policy: Policy, now: float, chunk_size: int, m0: float | None = None):
        """``m0``: the limit an earlier controller of this host had learnt, resumed from
        (FAIRBAT, rate tracking) unless the policy gives its own m0 (as `bg fetch` does)."""
        self.host = host
        self.policy = policy
        self.chunk_size = chunk_size
        params = policy.params or {}
        backlog = {"rate": ("tau", 0.0), "fairbat": ("trend", 0.0)}.get(policy.name)
        fixed = {backlog[0]: backlog[1]} if backlog and backlog[0] not in params else {}
        self.ctrl = policy.controller(now, fixed or None)
        if m0 is not None and policy.name in ("fairbat", "rate") and "m0" not in params:
            try:
                self.ctrl = policy.controller(now, {**fixed, "m0": m0})
            except ValueError:  # outside m_min..m_max: from the policy's m0
                pass
        self.topup: int | None = None  # None: every ready chunk (static)
        if policy.name == "fairbat":
            import json

            self.topup = math.ceil(json.loads(self.ctrl.params_json())["tau"])
        elif policy.name == "rate":
            self.topup = 1
        self.delivered = 0  # bytes received by this host's chunks (rate tracking measures them)
        self.tokens = 0
        self.active = 0  # background chunks in flight (foreground ones are not counted)
        self.orphans = 0

    @property
    def limit(self) -> float | None:
        return self.ctrl.limit if self.ctrl is not None else None

    def deadline(self) -> float:
        return self.ctrl.next_deadline() if self.ctrl is not None else math.inf

    def step(self, now: float, wall: float, jobs: list[JobView], allowed: bool, cap: int) -> list[int]:
        """Deadlines due, the queue topped up, admissions: the job of each chunk to start
        (at most ``cap``). ``now``: the controller's clock (monotonic); ``wall``: the
        epoch seconds the jobs' holds are judged at."""
        ctrl = self.ctrl
        if ctrl is None:  # unlimited: every ready chunk
            ids = assign(jobs, cap, wall, allowed)
            self.active += len(ids)
            return ids
        while ctrl.next_deadline() <= now:
            ctrl.on_deadline(now, float(self.delivered))
        ready = ready_background(jobs, wall, allowed)
        want = ready if self.topup is None else min(self.topup, ready)
        while ctrl.waiting < want:
            ctrl.arrive(now, self.tokens, float(self.chunk_size))
            self.tokens += 1
        admitted = 0
        while admitted < cap and ctrl.admit(now) is not None:
            admitted += 1
        ids = assign(jobs, admitted, wall, allowed)
        for _ in range(admitted - len(ids)):
            ctrl.complete(now)
            self.orphans += 1
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
                "delivered": self.delivered, "idle": False}
