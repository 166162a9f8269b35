"""The daemon's persistent job queue: STATE/jobs.sqlite, one row per job.

A job's row holds its spec (JSON, as checked at `add`), its state (``queued``,
``running``, ``paused``, ``done``, ``failed``, ``cancelled``), the bytes done and the
total when known, its last error and times. Each change is one committed statement in
WAL mode with ``synchronous=NORMAL``, which survives a kill of the process (the WAL is
in the page cache; journal.py says why NORMAL). A job's byte ranges are not here: they
are in its own transfer journal (engine, journal.py) under DEST/.cclab-bg/job-ID/.

On restart ``running`` jobs are queued again (their ranges resume); ``paused`` stay
paused; ended jobs stay as records until removed.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .jobs import JobSpec, spec_from_dict
from .journal import open_wal

ENDED = ("done", "failed", "cancelled")
STATES = ("queued", "running", "paused") + ENDED

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spec TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    bytes_done INTEGER NOT NULL DEFAULT 0,
    size INTEGER,
    error TEXT,
    added_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL
);
"""


class JobStore:
    """The queue (one writer: the daemon, which holds STATE/daemon.lock)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.db = open_wal(self.path, SCHEMA)

    def close(self) -> None:
        self.db.close()

    def add(self, spec: JobSpec) -> int:
        cur = self.db.execute("INSERT INTO jobs(spec, added_at) VALUES (?, ?)",
                              (json.dumps(spec.to_dict()), time.time()))
        return int(cur.lastrowid)

    def get(self, job_id: int) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()

    def all(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM jobs ORDER BY id").fetchall()

    def ended(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM jobs WHERE state IN ('done', 'failed', 'cancelled') "
                               "ORDER BY id").fetchall()

    def unfinished(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM jobs WHERE state NOT IN ('done', 'failed', 'cancelled') "
                               "ORDER BY id").fetchall()

    def set_state(self, job_id: int, state: str, error: str | None = None) -> None:
        assert state in STATES, state
        now = time.time()
        self.db.execute("UPDATE jobs SET state = ?, error = ?, "
                        "started_at = CASE WHEN ? = 'running' THEN COALESCE(started_at, ?) ELSE started_at END, "
                        "finished_at = CASE WHEN ? IN ('done', 'failed', 'cancelled') THEN ? ELSE NULL END "
                        "WHERE id = ?", (state, error, state, now, state, now, job_id))

    def progress(self, job_id: int, bytes_done: int, size: int | None) -> None:
        self.db.execute("UPDATE jobs SET bytes_done = ?, size = COALESCE(?, size) WHERE id = ?",
                        (bytes_done, size, job_id))

    def requeue_running(self) -> int:
        """After a restart: jobs that were running are queued again (their ranges resume)."""
        return self.db.execute("UPDATE jobs SET state = 'queued' WHERE state = 'running'").rowcount


def spec_of(row: sqlite3.Row) -> JobSpec:
    return spec_from_dict(json.loads(row["spec"]))
