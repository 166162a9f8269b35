"""The daemon's per-host access controller (bgtransfer.gate): FAIRBAT hears the real
backlog — a job's chunks arrive when it is added or released, wait while not admitted,
leave when held again — so eq. (2) (FAIRBAT §III) has an error to act on. Pure: the
gate is driven with JobViews at chosen instants, no daemon, no network."""
from __future__ import annotations

import pytest

from cclab.bgtransfer.gate import HostGate
from cclab.bgtransfer.policy import parse_policy
from cclab.bgtransfer.scheduler import JobView, expected_chunks

WALL = 1_700_000_000.0  # the epoch instant holds are judged at (no window, no not-before)
# eq. (2) with a constant gain (harmonic from 0.2 to 0.2), no trend term, absolute
# units: m ← m + 0.2 (n − 4), n the mean waiting chunks over the period of 10 s
PARAMS = ["tau=4", "period=10", "gain_start=0.2", "gain_end=0.2", "gain_schedule=harmonic",
          "gain_scale=none", "trend=0", "m0=1"]


def gate() -> HostGate:
    return HostGate("http://h:80", parse_policy("fairbat", PARAMS), 0.0, 1000)


def views(opened: dict[int, int], unopened: list[int], paused=(), prio="normal") -> list[JobView]:
    """Open jobs with their ready chunks, jobs not opened yet expecting one chunk each."""
    out = [JobView(i, prio, "paused" if i in paused else "running", ready=r, backlog=r) for i, r in opened.items()]
    return out + [JobView(i, prio, "paused" if i in paused else "queued", ready=0, backlog=1) for i in unopened]


def test_arrivals_above_service_raise_the_limit_and_a_drained_queue_lowers_it():
    g = gate()
    # t = 0: ten jobs of one chunk are added; one is open. All ten arrive; m0 = 1 admits one,
    # and only to the open job (the others' tokens wait until they are opened)
    assert g.step(0.0, WALL, views({1: 1}, list(range(2, 11))), True, 64) == [1]
    assert (g.ctrl.waiting, g.ctrl.active, g.tokens) == (9, 1, 10)
    # nothing completes for a period (the link serves less than arrived): n = 9 throughout,
    # m = 1 + 0.2 (9 − 4) = 2; the update admits a second chunk, to the next job opened
    assert g.step(10.0, WALL, views({1: 0, 2: 1}, list(range(3, 11))), True, 64) == [2]
    assert g.ctrl.updates == 1 and g.limit == pytest.approx(2.0, abs=1e-12)
    assert (g.ctrl.waiting, g.ctrl.active) == (8, 2)
    # the eight waiting jobs are paused: their chunks leave the queue at the first slot the
    # limit frees (one chunk done), each token admitted and completed at once
    g.done(10.0)
    held = views({1: 0, 2: 0}, list(range(3, 11)), paused=range(3, 11))
    assert g.step(10.0, WALL, held, True, 64) == []
    assert (g.ctrl.waiting, g.ctrl.active, g.withdrawn) == (0, 1, 8)
    # a period with an empty queue: m = 2 + 0.2 (0 − 4) = 1.2 (above the anti-windup
    # bound's floor: one chunk held, plus one)
    assert g.step(20.0, WALL, held, True, 64) == []
    assert g.ctrl.updates == 2 and g.limit == pytest.approx(1.2, abs=1e-12)
    # resumed, they arrive again (8 more tokens), not admitted while unopened
    g.step(20.0, WALL, views({1: 0, 2: 0}, list(range(3, 11))), True, 64)
    assert (g.ctrl.waiting, g.tokens) == (8, 18)


def test_the_backlog_grows_when_a_job_is_opened_and_its_size_learnt():
    g = gate()
    g.step(0.0, WALL, views({}, [1]), True, 64)  # one chunk expected, nothing open: waits
    assert (g.ctrl.waiting, g.ctrl.active) == (1, 0)
    # opened: it holds 5 chunks; 4 more arrive, one admitted (m = 1)
    assert g.step(1.0, WALL, views({1: 5}, []), True, 64) == [1]
    assert (g.ctrl.waiting, g.ctrl.active, g.tokens) == (4, 1, 5)


def test_each_admission_goes_to_the_highest_priority_ready_chunk():
    g = gate()
    jobs = [JobView(1, "low", "running", ready=3, backlog=3), JobView(2, "high", "running", ready=2, backlog=2)]
    assert g.step(0.0, WALL, jobs, True, 64) == [2]
    assert g.ctrl.waiting == 4


def test_expected_chunks_from_what_is_known():
    assert expected_chunks(2, 1000) == 2  # nothing known: one chunk per URL
    assert expected_chunks(1, 1000, given=3500) == 4  # --size
    assert expected_chunks(3, 1000, given=1500) == 3  # a file is at least a chunk
    assert expected_chunks(1, 1000, size=5000, done=2500, given=100) == 3  # learnt size wins
