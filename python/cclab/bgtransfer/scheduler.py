"""Which job's chunk goes next: pure functions of (jobs, slots, now), no I/O.

The daemon keeps one access controller per destination host (FAIRBAT by default; the
bottleneck it protects is the path to that host). The controller decides how many
chunks of that host's background jobs transfer at once (m(t), FAIRBAT §III eq. 2);
these functions decide whose chunks fill the slots it admits:

* ``foreground`` jobs bypass the controller (BITS's FOREGROUND: as fast as the network
  allows): all their ready chunks start, within the daemon's connection cap;
* ``high`` > ``normal`` > ``low`` in strict priority: a slot goes to the first job of the
  highest priority that has a ready chunk; FIFO (by job id) within a priority;
* a job is *held* (gets no new chunk; its chunks in flight finish) while it is paused,
  before its ``not_before``, outside its daily window, or while the "may I transfer
  now" check says no (foreground jobs ignore the check, not their own window).
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

from .jobs import parse_window

RANK = {"foreground": 0, "high": 1, "normal": 2, "low": 3}


@dataclass(frozen=True)
class JobView:
    """What the scheduler needs of a job."""

    id: int
    priority: str
    state: str = "queued"  # queued, running or paused (ended jobs are not scheduled)
    not_before: float | None = None
    window: str | None = None
    ready: int = 0  # chunks it could start now (released, not in flight, not backing off)
    backlog: int = 0  # chunks waiting to start: ``ready`` once opened, else as many as expected


def expected_chunks(urls: int, chunk_size: int, size: int | None = None, done: int = 0,
                    given: int | None = None) -> int:
    """The chunks a job not opened yet is expected to hold: from the total ``size`` an
    earlier opening learnt (less the ``done`` bytes journaled), else from the size the
    client gave at `add` (``given``), else one per URL, the least that is known (the
    rest arrive when its opening learns the sizes). A file is at least one chunk."""
    if size is not None:
        return math.ceil(max(0, size - done) / chunk_size)
    if given is not None:
        return max(urls, math.ceil(given / chunk_size))
    return urls


def minute_of_day(now: float) -> float:
    t = _dt.datetime.fromtimestamp(now)
    return t.hour * 60 + t.minute + t.second / 60 + t.microsecond / 6e7


def in_window(window: str, now: float) -> bool:
    """``now`` (epoch seconds, local time) inside "HH:MM-HH:MM" (start included, end not)."""
    a, b = parse_window(window)
    m = minute_of_day(now)
    return a <= m < b if a < b else (m >= a or m < b)


def hold(job: JobView, now: float, allowed: bool = True) -> str | None:
    """Why ``job`` may not start a chunk at ``now``, or None."""
    if job.state == "paused":
        return "paused"
    if job.not_before is not None and now < job.not_before:
        return "not before " + _dt.datetime.fromtimestamp(job.not_before).isoformat(timespec="seconds")
    if job.window is not None and not in_window(job.window, now):
        return f"outside its window {job.window}"
    if not allowed and job.priority != "foreground":
        return "the transfer check says no"
    return None


def order(jobs: list[JobView]) -> list[JobView]:
    """Strict priority, FIFO within a priority."""
    return sorted(jobs, key=lambda j: (RANK[j.priority], j.id))


def assign(jobs: list[JobView], slots: int, now: float, allowed: bool = True) -> list[int]:
    """The job of each of ``slots`` admitted chunks (background jobs only), in the order
    they start; shorter than ``slots`` when fewer chunks are ready."""
    out: list[int] = []
    for j in order(jobs):
        if len(out) >= slots:
            break
        if j.priority == "foreground" or hold(j, now, allowed) is not None:
            continue
        out.extend([j.id] * min(j.ready, slots - len(out)))
    return out


def foreground(jobs: list[JobView], cap: int, now: float) -> list[int]:
    """The foreground jobs' chunks to start now (no access control), at most ``cap``."""
    out: list[int] = []
    for j in order(jobs):
        if j.priority != "foreground" or len(out) >= cap or hold(j, now) is not None:
            continue
        out.extend([j.id] * min(j.ready, cap - len(out)))
    return out


def ready_background(jobs: list[JobView], now: float, allowed: bool = True) -> int:
    """Chunks of background jobs that could start now (open, not held)."""
    return sum(j.ready for j in jobs if j.priority != "foreground" and hold(j, now, allowed) is None)


def backlog_background(jobs: list[JobView], now: float, allowed: bool = True) -> int:
    """Chunks of background jobs waiting to start, opened or not (the controller's queue)."""
    return sum(j.backlog for j in jobs if j.priority != "foreground" and hold(j, now, allowed) is None)


def next_change(jobs: list[JobView], now: float) -> float | None:
    """The next instant after ``now`` at which a hold of ``jobs`` begins or ends
    (a not-before date, a window's edge); None if none will."""
    times = []
    for j in jobs:
        if j.state == "paused":
            continue
        if j.not_before is not None and j.not_before > now:
            times.append(j.not_before)
        if j.window is not None:
            m = minute_of_day(now)
            edges = parse_window(j.window)
            waits = [((e - m) % 1440) * 60 for e in edges]
            times.append(now + min(w if w > 1e-6 else 86400.0 for w in waits))
    return min(times) if times else None
