"""The journal of a destination folder: DEST/.cclab-bg/journal.sqlite.

Tables:

* ``files``: one row per file name: its URL, expected size and SHA-256, the server's
  validator (ETag or Last-Modified) seen with the first byte, the state (``pending``,
  ``partial``, ``done``, ``failed``), the bytes done, the failures counted and the last
  error, and times (first byte, last progress, finish).
* ``ranges``: the byte ranges [start, end) of each file whose data is in
  DEST/.cclab-bg/partial/NAME and fsync'ed. A range is inserted only after the fsync
  of its data returned (the invariant everything rests on: a range in the journal is
  on disk).

SQLite settings: WAL (readers such as ``cclab bg status`` never block the writer) and
``synchronous=NORMAL``. In WAL mode NORMAL makes every commit survive a crash of the
process (SIGKILL: the WAL is in the OS page cache); only a power loss or kernel crash
may roll back the last commits. That loses no data that the journal claims, it only
forgets ranges (and files: see ``place``) that were done, which are then fetched
again: the invariant "a range in the journal is on disk" holds because the data's
fsync precedes the range's commit. FULL would add an fsync per commit (one per chunk)
to save re-fetching the last chunks after a power cut; not worth it.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from .. import sqlite_reader

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    size INTEGER,
    sha256 TEXT,
    validator TEXT,
    state TEXT NOT NULL DEFAULT 'pending',
    bytes_done INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    first_byte_at REAL,
    last_at REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS ranges (
    name TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ranges_name ON ranges(name);
CREATE TABLE IF NOT EXISTS runs (
    started_at REAL NOT NULL,
    finished_at REAL,
    policy TEXT,
    status INTEGER,
    last_limit REAL
);
"""


def merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint, non-adjacent intervals covering the same bytes."""
    out: list[list[int]] = []
    for s, e in sorted(r for r in ranges if r[1] > r[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def gaps(done: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """The bytes of [0, size) not in the merged intervals ``done``."""
    out, pos = [], 0
    for s, e in done:
        if s > pos:
            out.append((pos, min(s, size)))
        pos = max(pos, e)
    if pos < size:
        out.append((pos, size))
    return [(s, e) for s, e in out if e > s]


def open_wal(path: Path, schema: str) -> sqlite3.Connection:
    """A writer's connection: WAL, synchronous=NORMAL (the reasons above), autocommit,
    ``schema`` applied, rows by name. The daemon's queue (store.py) opens its own the same way."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)
    db.row_factory = sqlite3.Row
    return db


class Journal:
    """The journal of one destination folder (one writer at a time: see ``lock``)."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path)
        self.db = sqlite_reader.connect(self.path) if readonly else open_wal(self.path, SCHEMA)
        self.db.row_factory = sqlite3.Row

    def close(self) -> None:
        self.db.close()

    # files
    def file(self, name: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM files WHERE name = ?", (name,)).fetchone()

    def files(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM files ORDER BY rowid").fetchall()

    def upsert_file(self, name: str, url: str, size: int | None, sha256: str | None) -> None:
        self.db.execute(
            "INSERT INTO files(name, url, size, sha256) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET url = excluded.url, size = excluded.size, sha256 = excluded.sha256",
            (name, url, size, sha256))

    def reset_file(self, name: str, why: str | None = None) -> None:
        """Forget the file's ranges (its partial data no longer belongs to it)."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("DELETE FROM ranges WHERE name = ?", (name,))
            self.db.execute("UPDATE files SET bytes_done = 0, validator = NULL, state = 'pending', error = ? "
                            "WHERE name = ?", (why, name))

    def note(self, sql: str, args: tuple) -> None:
        """A write that only informs (failures, errors, runs): on a full disk it is
        dropped rather than hide the error being reported."""
        try:
            self.db.execute(sql, args)
        except sqlite3.OperationalError as exc:
            if "full" not in str(exc):
                raise

    def set_state(self, name: str, state: str, error: str | None = None, **cols) -> None:
        sets = ", ".join(f"{k} = ?" for k in cols)
        (self.note if state == "failed" else self.db.execute)(f"UPDATE files SET state = ?, error = ?{', ' + sets if sets else ''} WHERE name = ?",
                        (state, error, *cols.values(), name))

    def set(self, name: str, **cols) -> None:
        sets = ", ".join(f"{k} = ?" for k in cols)
        self.db.execute(f"UPDATE files SET {sets} WHERE name = ?", (*cols.values(), name))

    def first_byte(self, name: str) -> None:
        """The file's first byte arrived (kept from the first run that got one)."""
        self.note("UPDATE files SET first_byte_at = COALESCE(first_byte_at, ?) WHERE name = ?",
                        (time.time(), name))

    def failure(self, name: str, error: str) -> None:
        self.note("UPDATE files SET failures = failures + 1, error = ? WHERE name = ?", (error, name))

    # ranges
    def ranges(self, name: str) -> list[tuple[int, int]]:
        return merge([(r[0], r[1]) for r in
                      self.db.execute("SELECT start, end FROM ranges WHERE name = ?", (name,))])

    def add_range(self, name: str, start: int, end: int) -> int:
        """Record [start, end) as on disk (call after its fsync); returns the bytes done.
        The rows it overlaps or touches are merged into one, so a file has about as many
        rows as disjoint intervals (chunks in flight and gaps), whatever its size."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN")
            near = self.db.execute("SELECT rowid, start, end FROM ranges WHERE name = ? AND start <= ? AND end >= ?",
                                   (name, end, start)).fetchall()
            lo = min([start] + [r[1] for r in near])
            hi = max([end] + [r[2] for r in near])
            self.db.executemany("DELETE FROM ranges WHERE rowid = ?", [(r[0],) for r in near])
            self.db.execute("INSERT INTO ranges(name, start, end, at) VALUES (?, ?, ?, ?)", (name, lo, hi, now))
            done = self.db.execute("SELECT COALESCE(SUM(end - start), 0) FROM ranges WHERE name = ?",
                                   (name,)).fetchone()[0]
            self.db.execute("UPDATE files SET bytes_done = ?, state = CASE WHEN state = 'pending' THEN 'partial' "
                            "ELSE state END, last_at = ?, first_byte_at = COALESCE(first_byte_at, ?) WHERE name = ?",
                            (done, now, now, name))
        return done

    # runs
    def start_run(self, policy: str) -> int:
        cur = self.db.execute("INSERT INTO runs(started_at, policy) VALUES (?, ?)", (time.time(), policy))
        return int(cur.lastrowid)

    def finish_run(self, run: int, status: int) -> None:
        self.note("UPDATE runs SET finished_at = ?, status = ? WHERE rowid = ?", (time.time(), status, run))

    def note_limit(self, run: int, limit: float) -> None:
        self.note("UPDATE runs SET last_limit = ? WHERE rowid = ?", (limit, run))

    def last_limit(self, policy: str) -> float | None:
        """The limit an earlier run of ``policy`` had reached (to resume from it)."""
        row = self.db.execute("SELECT last_limit FROM runs WHERE policy = ? AND last_limit IS NOT NULL "
                              "ORDER BY rowid DESC LIMIT 1", (policy,)).fetchone()
        return None if row is None else float(row[0])

    def runs(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT rowid AS run, * FROM runs ORDER BY rowid").fetchall()
