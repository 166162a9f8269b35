"""The content-addressed result store.

Every run is keyed by a digest of what determines its output: its canonical
configuration (the engine's JSON of the validated scenario, seed inside), its seed
and the engine's results version (``cclab._core.ENGINE_RESULTS_VERSION``, bumped
by any change that alters an existing configuration's output). Layout::

    STORE/index.sqlite       one SQLite index (WAL): runs, sweeps and their members
    STORE/runs/ab/abcd.../   one folder per finished run: the tables its sweep keeps
                             (flows.parquet, links.parquet, series.parquet,
                             arrivals.parquet when recorded, by default; a sweep may
                             keep fewer, or reductions: ``worker``); the run's key,
                             configuration, summary and metrics are also in the
                             key-value metadata of flows.parquet (``cclab.run``), or in
                             run.json when the flows table is not kept
    STORE/tmp/               runs being written (removed by `cclab store gc`)
    STORE/lock, write.lock   advisory locks (flock)

A run is written into a fresh folder under ``tmp/``, every file flushed to disk,
then the folder is renamed into ``runs/`` (atomic on POSIX) and only then is the
index row committed (runs that finish close together share one flush to disk and
one transaction: a group commit). The index is the truth: a folder without a row (a crash
between the rename and the commit) is an orphan that the next writer of the same
key replaces and ``gc`` removes; a row always points at a complete folder whose
files' digests it records (``verify`` checks them). A process killed at any
instant therefore leaves either no result or a whole one.

Concurrency: any number of processes may read; writers (sweeps) hold a shared
lock on ``lock`` while the store is open and take ``write.lock`` for the short
rename-and-commit of each run; ``gc`` needs ``lock`` exclusively and refuses to
run while a sweep uses the store. The store must live on a local file system of
the process that runs the sweep (SQLite's WAL needs shared memory); workers never
touch it, they return their results to that process.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .. import sqlite_reader
from ..outdir import fsync_dir

#: The layout version of a store; a store written by another layout is refused. Layout 2
#: added the ``tables`` column (what each run keeps) and the ``memos`` table (computed
#: tables other than runs: :meth:`Store.memo`); a layout-1 store is upgraded in place when
#: opened for writing (its runs kept every engine table: ``tables`` NULL).
STORE_FORMAT = 2
#: Default store location, overridden by the CCLAB_STORE environment variable.
DEFAULT_STORE = "results/store"
#: Failure kinds: "error" is the run's own (the engine raised: it would raise again),
#: "lost" is the machinery's (a worker died, memory ran out): retried by the next sweep.
TRANSIENT_KINDS = ("lost",)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL,            -- 'ok' or 'failed'
    engine TEXT NOT NULL,
    name TEXT,
    seed INTEGER,
    config TEXT NOT NULL,            -- canonical JSON
    metrics TEXT,                    -- JSON object of scalar metrics (ok runs)
    error TEXT,
    error_kind TEXT,                 -- 'error' (deterministic) or 'lost' (retried)
    wall_s REAL,
    created REAL NOT NULL,
    host TEXT,
    files TEXT,                      -- JSON {file: [bytes, sha256]} of the run folder
    tables TEXT                      -- JSON list of the tables kept (NULL: every engine table)
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    runs INTEGER NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep TEXT NOT NULL,
    idx INTEGER NOT NULL,
    key TEXT NOT NULL,
    seed INTEGER NOT NULL,
    params TEXT NOT NULL,
    PRIMARY KEY (sweep, idx)
);
CREATE INDEX IF NOT EXISTS sweep_runs_key ON sweep_runs(key);
CREATE TABLE IF NOT EXISTS memos (
    key TEXT PRIMARY KEY,            -- SHA-256 of what determines the value (memo_key)
    engine TEXT NOT NULL,
    created REAL NOT NULL,
    data BLOB NOT NULL               -- a computed table (Parquet): e.g. a flow-level model's replications
);
"""



def _wal(db: sqlite3.Connection, attempts: int = 200) -> None:
    """Put the index in WAL mode. Switching needs the database alone, and SQLite
    answers "database is locked" at once, without its busy handler, when another
    process opens a new store at the same instant and switches it too: try again,
    a few ms apart (up to about 10 s), until one of them has done it."""
    for i in range(attempts):
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or i == attempts - 1:
                raise
            time.sleep(0.005 + 0.045 * random.random())

class StoreError(RuntimeError):
    """The store cannot be used as asked (wrong layout, in use, unknown key)."""


def engine_version() -> str:
    """The engine's results version as stored with every run, e.g. ``"results/1"``."""
    from .. import _core

    return f"results/{_core.ENGINE_RESULTS_VERSION}"


def run_key(config: str, seed: int, engine: str) -> str:
    """The store key of a run: SHA-256 of the engine version, the seed and the canonical JSON."""
    h = hashlib.sha256()
    h.update(f"cclab-run/1\nengine {engine}\nseed {int(seed)}\n".encode())
    h.update(config.encode())
    return h.hexdigest()


def memo_key(kind: str, description: str, engine: str | None = None) -> str:
    """The key of a memo: SHA-256 of its kind, the results version and a description of
    everything that determines it (canonical text: sorted JSON)."""
    h = hashlib.sha256()
    h.update(f"cclab-memo/1\n{kind}\nengine {engine or engine_version()}\n".encode())
    h.update(description.encode())
    return h.hexdigest()


def default_store() -> Path:
    """``$CCLAB_STORE`` if set, else ``results/store`` under the current folder."""
    return Path(os.environ.get("CCLAB_STORE") or DEFAULT_STORE)


# --------------------------------------------------------------------------- crash points

_crash_plan: dict[str, int] = {}


def _crash_due(name: str) -> bool:
    """True the n-th time this process passes the point ``name`` of ``_crash_plan`` (tests only)."""
    if _crash_plan and name in _crash_plan:
        _crash_plan[name] -= 1
        return _crash_plan[name] == 0
    return False


def _crash_point(name: str) -> None:
    if _crash_due(name):
        os.kill(os.getpid(), signal.SIGKILL)


def _load_syncfs():
    """Linux's syncfs(2) through the C library, or None (another system, an old libc)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        f = libc.syncfs
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_int]
    f.restype = ctypes.c_int
    return f


_SYNCFS = _load_syncfs() if os.uname().sysname == "Linux" else None


def _syncfs(fd: int) -> bool:
    """Flush the whole file system that holds ``fd`` to disk: every dirty file and
    directory entry, one journal commit and one device flush. False if unavailable
    (then the caller flushes file by file)."""
    if _SYNCFS is None:
        return False
    if _SYNCFS(fd) != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"syncfs: {os.strerror(err)}")
    return True


@dataclass
class Row:
    """One run of the index."""

    key: str
    status: str
    engine: str
    name: str | None
    seed: int | None
    config: str
    metrics: dict
    error: str | None
    error_kind: str | None
    wall_s: float | None
    created: float
    host: str | None
    files: dict
    #: The tables the run keeps (``worker.normalize_keep``).
    tables: tuple = ()

    @classmethod
    def from_sql(cls, r: tuple) -> "Row":
        (key, status, engine, name, seed, config, metrics, error, kind, wall, created, host, files, tables) = r
        return cls(key, status, engine, name, seed, config, json.loads(metrics or "{}"), error, kind, wall,
                   created, host, json.loads(files or "{}"), kept_tables(tables))


def kept_tables(column: str | None) -> tuple:
    """The ``tables`` column of a run as a tuple (NULL, a layout-1 run: every engine table)."""
    from .worker import TABLES

    return TABLES if column is None else tuple(json.loads(column))


_COLUMNS = "key, status, engine, name, seed, config, metrics, error, error_kind, wall_s, created, host, files, tables"


class Store:
    """A result store rooted at a folder (created if absent).

    durable: flush every file of a run to disk (one syncfs per group on Linux, fsync
        of each file and folder elsewhere) before its index row is committed, so that the index never names a file a power loss could have
        emptied (default: on, unless the environment sets ``CCLAB_STORE_FSYNC=0``).
        A killed process loses nothing either way: turning it off only gives up
        safety against power loss, for speed on a busy disk.
    batch_runs, batch_seconds: the size of a group commit of deferred puts (see :meth:`put`).
    """

    def __init__(self, root: str | Path | None = None, *, durable: bool | None = None, readonly: bool = False,
                 batch_runs: int = 64, batch_seconds: float = 0.5):
        self.root = Path(root) if root is not None else default_store()
        self.durable = os.environ.get("CCLAB_STORE_FSYNC", "1") != "0" if durable is None else durable
        self.batch_runs = batch_runs
        self.batch_seconds = batch_seconds
        self.readonly = readonly
        if readonly:
            if not (self.root / "index.sqlite").exists():
                raise StoreError(f"{self.root}: no result store here (no index.sqlite)")
        else:
            try:
                (self.root / "runs").mkdir(parents=True, exist_ok=True)
                (self.root / "tmp").mkdir(exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.root}: cannot create the result store: {exc.strerror}") from None
        self._use_fd = None
        self._write_fd = None
        self._columns = _COLUMNS  # what a SELECT of whole rows reads (a layout-1 index has no tables)
        if not readonly:
            self._use_fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._use_fd, fcntl.LOCK_SH)
            self._write_fd = os.open(self.root / "write.lock", os.O_RDWR | os.O_CREAT, 0o644)
        self.db = self._connect()
        self.host = socket.gethostname()
        self._parents: set[str] = set()  # runs/xx folders known to exist
        self._staged: list = []  # (key, tmp folder, open descriptors, index row) awaiting flush()
        self._last_flush = time.monotonic()

    def _connect(self) -> sqlite3.Connection:
        path = self.root / "index.sqlite"
        if self.readonly:
            try:
                db = sqlite_reader.connect(path, timeout=60.0)
            except sqlite_reader.NeedsRecovery as exc:
                raise StoreError(str(exc)) from None
        else:
            db = sqlite3.connect(f"file:{path}", uri=True, timeout=60.0, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 60000")
        if not self.readonly:
            _wal(db)
            # NORMAL in WAL mode: a commit survives any crash of the process; a power
            # loss can lose the last commits but never corrupts the index.
            db.execute("PRAGMA synchronous = NORMAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:  # a new index: its tables and layout version in one transaction
                db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {STORE_FORMAT}; COMMIT;")
                version = STORE_FORMAT
            elif version == 1:  # layout 1 -> 2: the tables column (NULL: every engine table)
                db.executescript(f"BEGIN IMMEDIATE; ALTER TABLE runs ADD COLUMN tables TEXT; {_SCHEMA} "
                                 f"PRAGMA user_version = {STORE_FORMAT}; COMMIT;")
                version = STORE_FORMAT
        else:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                db.close()
                raise StoreError(f"{self.root}: no result store here (its index is empty)")
            if version == 1:  # read a layout-1 store as it is: its runs kept every engine table
                self._columns = _COLUMNS.replace(", tables", ", NULL AS tables")
                return db
        if version != STORE_FORMAT:
            db.close()
            raise StoreError(f"{self.root}: store layout {version}, this cclab reads layout {STORE_FORMAT}")
        return db

    def close(self) -> None:
        """Commit what is staged, close the index and release the locks."""
        if self.db is not None and self._staged:
            self.flush()
        if self.db is not None:
            self.db.close()
            self.db = None
        for fd in (self._use_fd, self._write_fd):
            if fd is not None:
                os.close(fd)
        self._use_fd = self._write_fd = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # ------------------------------------------------------------------ writing

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        fcntl.flock(self._write_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._write_fd, fcntl.LOCK_UN)

    def run_dir(self, key: str) -> Path:
        """The folder of a run (whether or not it exists)."""
        return self.root / "runs" / key[:2] / key

    def put(self, key: str, *, config: str, engine: str, seed: int, name: str | None, payload: Mapping,
            defer: bool = False) -> str:
        """Store one run's outcome (a worker's payload); returns its status, "ok" or "failed".

        An ``ok`` payload has ``files`` ({name: bytes}), ``metrics``, ``summary``,
        ``wall_s``, ``host`` and ``tables`` (the tables kept; absent: every engine
        table); a failed one has ``error`` and ``kind``. A failure never replaces a
        stored success; a success replaces a stored one only if it keeps a table the
        stored one lacks (the same run, kept for a reader of more tables).

        The run's files are written at once into a fresh folder under ``tmp/``; the run
        is in the store when :meth:`flush` has moved the folder into ``runs/`` and
        committed its index row. Without ``defer`` that happens before returning; with
        it, runs are committed in groups (group commit: one flush to disk and one
        transaction for up to ``batch_runs`` runs or ``batch_seconds`` of results), and
        a crash before the flush loses only those runs (they are not in the index, so
        the next sweep runs them).
        """
        if self.readonly:
            raise StoreError(f"{self.root}: opened read-only")
        now = time.time()
        ok = bool(payload.get("ok"))
        tmp, fds, files = None, [], {}
        if ok:
            tmp = self.root / "tmp" / f"{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            try:
                for fname, data in payload["files"].items():
                    files[fname] = [len(data), hashlib.sha256(data).hexdigest()]
                    fds.append(self._write_file(tmp / fname, data))
            except BaseException:
                for fd in fds:
                    os.close(fd)
                raise
            tables = payload.get("tables")
            row = (key, "ok", engine, name, seed, config, json.dumps(payload.get("metrics", {}), allow_nan=True),
                   None, None, payload.get("wall_s"), now, payload.get("host"), json.dumps(files),
                   None if tables is None else json.dumps(list(tables)))
        else:
            row = (key, "failed", engine, name, seed, config, None, str(payload.get("error")),
                   payload.get("kind", "error"), payload.get("wall_s"), now, payload.get("host"), None, None)
        self._staged.append((key, tmp, fds, row))
        _crash_point("files")
        if not defer or len(self._staged) >= self.batch_runs or \
                time.monotonic() - self._last_flush >= self.batch_seconds:
            self.flush()
        return "ok" if ok else "failed"

    def flush(self) -> int:
        """Commit the staged runs (see :meth:`put`); returns how many were committed."""
        if not self._staged:
            return 0
        batch, self._staged = self._staged, []
        try:
            # every file of the group is written before any is flushed. On Linux one syncfs
            # flushes them all with their folders' entries: each fsync costs a journal commit
            # and a device flush (about 5 ms on this machine's disk, measured), so flushing
            # four files and folders per run file by file cost 20 ms a run, one syncfs per
            # group (15 ms) well under 1 ms. Elsewhere, file by file.
            if self.durable and not (self._write_fd is not None and _syncfs(self._write_fd)):
                for _, _, fds, _ in batch:
                    for fd in fds:
                        os.fsync(fd)
                for _, tmp, _, _ in batch:
                    if tmp is not None:
                        fsync_dir(tmp)
        finally:
            for _, _, fds, _ in batch:
                for fd in fds:
                    os.close(fd)
        rows = []
        with self._write_lock():
            present = self.status(k for k, _, _, _ in batch)
            kept = self.kept(k for k, st in present.items() if st[0] == "ok")
            parents = set()
            replaced = []
            for key, tmp, _, row in batch:
                if key in kept:  # another writer stored it meanwhile, or it is stored with fewer tables
                    if row[1] != "ok" or set(kept_tables(row[-1])) <= set(kept[key]):
                        if tmp is not None:
                            shutil.rmtree(tmp, ignore_errors=True)
                        continue
                    replaced.append(key)
            if replaced:  # its row goes first: until the new one is committed the run is not stored
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in replaced])
                self.db.execute("COMMIT")
            for key, tmp, _, row in batch:
                if key in kept and key not in replaced:
                    continue
                if tmp is not None:
                    final = self.run_dir(key)
                    if final.parent.name not in self._parents:
                        final.parent.mkdir(exist_ok=True)
                        self._parents.add(final.parent.name)
                    if final.exists():  # an orphan (a writer died before committing) or a replaced run
                        shutil.rmtree(final)
                    os.rename(tmp, final)
                    parents.add(final.parent)
                    _crash_point("rename")
                rows.append(row)
            if self.durable and parents and not _syncfs(self._write_fd):  # the renames, before the rows
                for p in parents:
                    fsync_dir(p)
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(f"INSERT OR REPLACE INTO runs ({_COLUMNS}) VALUES ({','.join('?' * 14)})", rows)
            self.db.execute("COMMIT")
            _crash_point("commit")
        self._last_flush = time.monotonic()
        return len(rows)

    def _write_file(self, path: Path, data: bytes) -> int:
        """Write a new file; returns its open descriptor (to fsync, then close)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            if _crash_due("file"):  # a kill in the middle of a file
                os.write(fd, data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            raise
        return fd

    # ------------------------------------------------------------------ sweeps

    def record_sweep(self, name: str, spec: str, members: Iterable[tuple[int, str, int, str]]) -> None:
        """Record (or replace) a sweep's definition: rows of (index, key, seed, params JSON)."""
        members = list(members)
        now = time.time()
        with self._write_lock():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                old = self.db.execute("SELECT created, spec FROM sweeps WHERE name = ?", (name,)).fetchone()
                if old is None or old[1] != spec or self._member_count(name) != len(members):
                    self.db.execute("DELETE FROM sweep_runs WHERE sweep = ?", (name,))
                    self.db.executemany("INSERT INTO sweep_runs (sweep, idx, key, seed, params) VALUES (?,?,?,?,?)",
                                        [(name, i, k, s, p) for i, k, s, p in members])
                self.db.execute("INSERT OR REPLACE INTO sweeps (name, spec, runs, created, updated) VALUES (?,?,?,?,?)",
                                (name, spec, len(members), old[0] if old else now, now))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def _member_count(self, name: str) -> int:
        return self.db.execute("SELECT COUNT(*) FROM sweep_runs WHERE sweep = ?", (name,)).fetchone()[0]

    def sweeps(self) -> list[dict]:
        """Every recorded sweep with its counts of runs done, failed and missing."""
        out = []
        for name, spec, n, created, updated in self.db.execute(
                "SELECT name, spec, runs, created, updated FROM sweeps ORDER BY updated DESC"):
            counts = dict(self.db.execute(
                "SELECT COALESCE(r.status, 'missing'), COUNT(*) FROM sweep_runs s LEFT JOIN runs r ON r.key = s.key "
                "WHERE s.sweep = ? GROUP BY 1", (name,)).fetchall())
            out.append({"name": name, "runs": n, "ok": counts.get("ok", 0), "failed": counts.get("failed", 0),
                        "missing": counts.get("missing", 0), "created": created, "updated": updated,
                        "spec": json.loads(spec)})
        return out

    def sweep_members(self, name: str) -> list[tuple[int, str, int, dict]]:
        """(index, key, seed, params) of a recorded sweep, in order."""
        rows = self.db.execute("SELECT idx, key, seed, params FROM sweep_runs WHERE sweep = ? ORDER BY idx",
                               (name,)).fetchall()
        if not rows and not self.db.execute("SELECT 1 FROM sweeps WHERE name = ?", (name,)).fetchone():
            known = ", ".join(s["name"] for s in self.sweeps()) or "(none)"
            raise StoreError(f"no sweep named {name!r} in {self.root}; recorded sweeps: {known}")
        return [(i, k, s, json.loads(p)) for i, k, s, p in rows]

    # ------------------------------------------------------------------ reading

    def status(self, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """{key: (status, error_kind)} for the keys present in the index."""
        keys = list(keys)
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, status, error_kind FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
            for k, st, kind in self.db.execute(q, chunk):
                out[k] = (st, kind)
        return out

    def memo(self, key: str, compute) -> bytes:
        """The bytes stored under ``key`` (:func:`memo_key`), computing and storing them with
        ``compute()`` the first time: what an entry computes in its own process (a
        flow-level model) kept like a run, so that running the entry again computes nothing."""
        if self.readonly:
            raise StoreError(f"{self.root}: opened read-only")
        row = self.db.execute("SELECT data FROM memos WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return bytes(row[0])
        data = bytes(compute())
        with self._write_lock():
            self.db.execute("INSERT OR REPLACE INTO memos (key, engine, created, data) VALUES (?,?,?,?)",
                            (key, engine_version(), time.time(), data))
        return data

    def kept(self, keys: Iterable[str]) -> dict[str, tuple]:
        """{key: the tables it keeps} for the keys of stored (ok) runs."""
        keys = list(keys)
        out = {}
        col = "tables" if self._columns is _COLUMNS else "NULL"
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, {col} FROM runs WHERE status = 'ok' AND key IN ({','.join('?' * len(chunk))})"
            for k, t in self.db.execute(q, chunk):
                out[k] = kept_tables(t)
        return out

    def rows(self, keys: Iterable[str]) -> dict[str, Row]:
        """{key: Row} for the keys present in the index."""
        keys = list(keys)
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT {self._columns} FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
            for r in self.db.execute(q, chunk):
                out[r[0]] = Row.from_sql(r)
        return out

    def resolve(self, prefix: str) -> str:
        """The full key of a run from a unique prefix (as `cclab store ls` prints)."""
        prefix = prefix.strip().lower()
        if not prefix or any(c not in "0123456789abcdef" for c in prefix):
            raise StoreError(f"{prefix!r} is not a run key (hexadecimal digits)")
        hits = [r[0] for r in self.db.execute("SELECT key FROM runs WHERE key >= ? AND key < ? LIMIT 2",
                                              (prefix, prefix + "g"))]
        if not hits:
            raise StoreError(f"no run with key {prefix}… in {self.root}")
        if len(hits) > 1:
            raise StoreError(f"key prefix {prefix} is ambiguous; give more digits")
        return hits[0]

    def get(self, key: str) -> Row:
        """The index row of a run (a full key or a unique prefix)."""
        key = self.resolve(key) if len(key) != 64 else key
        r = self.db.execute(f"SELECT {self._columns} FROM runs WHERE key = ?", (key,)).fetchone()
        if r is None:
            raise StoreError(f"no run with key {key[:12]}… in {self.root}")
        return Row.from_sql(r)

    def load(self, key: str, tables=None):
        """The stored run as a :class:`cclab.Result` (its tables read from Parquet).

        tables: the tables to read (names as ``keep`` takes them; default: every table
        the run keeps); a table the run does not keep is a StoreError. Tables not read
        are empty frames; reductions are in ``Result.reduced``.
        """
        import pyarrow.parquet as pq

        from .worker import META_FILE, META_KEY, TABLES, normalize_keep, table_file, to_result

        row = self.get(key)
        if row.status != "ok":
            raise StoreError(f"run {row.key[:12]} failed: {row.error}")
        want = row.tables if tables is None else normalize_keep(tables)
        missing = [t for t in want if t not in row.tables]
        if missing:
            raise StoreError(f"run {row.key[:12]} keeps {', '.join(row.tables)}, not {', '.join(missing)} "
                             "(run its sweep again keeping them)")
        d = self.run_dir(row.key)
        if "flows" in row.tables:
            meta = json.loads(pq.read_schema(d / "flows.parquet").metadata[META_KEY.encode()])
        else:
            meta = json.loads((d / META_FILE).read_text())
        read = {}
        for t in want:
            p = d / table_file(t)
            if p.exists():  # arrivals.parquet only when recorded
                read[t] = pq.read_table(p)
        reduced = {t: read.pop(t).to_pandas() for t in list(read) if t not in TABLES}
        return to_result(read, meta["summary"], meta["config"], meta.get("warnings", []), reduced)

    def counts(self) -> dict:
        """Runs by status and engine version, and the bytes the run folders take."""
        by = self.db.execute("SELECT status, engine, COUNT(*) FROM runs GROUP BY 1, 2").fetchall()
        size = 0
        for (files,) in self.db.execute("SELECT files FROM runs WHERE status = 'ok'"):
            size += sum(v[0] for v in json.loads(files or "{}").values())
        return {"by_status_engine": by, "bytes": size}

    def list_runs(self, limit: int | None = None) -> list[Row]:
        """Index rows, newest first."""
        q = f"SELECT {self._columns} FROM runs ORDER BY created DESC" + (f" LIMIT {int(limit)}" if limit else "")
        return [Row.from_sql(r) for r in self.db.execute(q)]

    # ------------------------------------------------------------------ checking and pruning

    def verify(self, keys: Iterable[str] | None = None) -> list[str]:
        """Check that every ``ok`` run's folder holds exactly the files its row names,
        with their sizes and SHA-256 digests; returns the problems found (empty: sound)."""
        problems = []
        if keys is None:
            rows = self.db.execute("SELECT key, files FROM runs WHERE status = 'ok'").fetchall()
        else:
            rows = [(r.key, json.dumps(r.files)) for r in self.rows(keys).values() if r.status == "ok"]
        for key, files in rows:
            files = json.loads(files or "{}")
            d = self.run_dir(key)
            if not d.is_dir():
                problems.append(f"{key[:12]}: folder missing")
                continue
            present = {p.name for p in d.iterdir()}
            if present != set(files):
                problems.append(f"{key[:12]}: files {sorted(present)} differ from the index's {sorted(files)}")
                continue
            for fname, (size, digest) in files.items():
                data = (d / fname).read_bytes()
                if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
                    problems.append(f"{key[:12]}/{fname}: content differs from its digest")
        return problems

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the store exclusively (no sweep may be writing): for gc."""
        if self.readonly:
            raise StoreError("gc needs a writable store")
        try:
            fcntl.flock(self._use_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{self.root} is in use by a running sweep; try again when it ends") from None
        try:
            yield
        finally:
            fcntl.flock(self._use_fd, fcntl.LOCK_SH)

    def gc(self, *, failed: bool = False, stale: bool = False, unreferenced: bool = False,
           forget: Iterable[str] = (), older_than_days: float | None = None, dry_run: bool = False) -> dict:
        """Prune the store; returns what was (or, with ``dry_run``, would be) removed.

        Always: leftovers of interrupted writes in ``tmp/``, orphan run folders (no
        index row), and index rows whose folder has gone. On request: failed runs
        (``failed``), runs of another engine results version (``stale``), the
        definitions of the sweeps named in ``forget``, runs no recorded sweep
        refers to (``unreferenced``), runs older than ``older_than_days``.
        """
        removed: dict[str, Any] = {"tmp": 0, "orphans": 0, "lost_rows": 0, "runs": 0, "sweeps": 0, "bytes": 0,
                                   "memos": 0}
        with self.exclusive():
            for p in (self.root / "tmp").iterdir():
                removed["tmp"] += 1
                if not dry_run:
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            present = {r[0]: r[1] for r in self.db.execute("SELECT key, status FROM runs")}
            for sub in (self.root / "runs").iterdir():
                for d in sub.iterdir():
                    if present.get(d.name) != "ok":
                        removed["orphans"] += 1
                        if not dry_run:
                            shutil.rmtree(d)
            lost = [k for k, st in present.items() if st == "ok" and not self.run_dir(k).is_dir()]
            removed["lost_rows"] = len(lost)
            doomed: set[str] = set()
            forget = list(forget)
            for name in forget:
                self.sweep_members(name)  # raises for an unknown name
            removed["sweeps"] = len(forget)
            if failed:
                doomed |= {k for k, st in present.items() if st == "failed"}
            if stale:
                eng = engine_version()
                doomed |= {r[0] for r in self.db.execute("SELECT key FROM runs WHERE engine != ?", (eng,))}
                removed["memos"] = self.db.execute("SELECT COUNT(*) FROM memos WHERE engine != ?",
                                                   (eng,)).fetchone()[0]
                if not dry_run:
                    self.db.execute("DELETE FROM memos WHERE engine != ?", (eng,))
            if older_than_days is not None:
                cutoff = time.time() - older_than_days * 86400
                doomed |= {r[0] for r in self.db.execute("SELECT key FROM runs WHERE created < ?", (cutoff,))}
            if unreferenced:
                qs = ",".join("?" * len(forget))
                where = f"WHERE sweep NOT IN ({qs})" if forget else ""
                kept = {r[0] for r in self.db.execute(f"SELECT DISTINCT key FROM sweep_runs {where}", forget)}
                doomed |= set(present) - kept
            removed["runs"] = len(doomed)
            removed["bytes"] = sum(v[0] for r in self.rows(doomed).values() for v in r.files.values())
            if not dry_run:
                self.db.execute("BEGIN IMMEDIATE")
                for name in forget:
                    self.db.execute("DELETE FROM sweep_runs WHERE sweep = ?", (name,))
                    self.db.execute("DELETE FROM sweeps WHERE name = ?", (name,))
                self.db.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in set(lost) | doomed])
                self.db.execute("COMMIT")
                # rows first, folders second: a crash in between leaves orphans, never dangling rows
                for k in doomed:
                    shutil.rmtree(self.run_dir(k), ignore_errors=True)
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self.db.execute("VACUUM")
        return removed
