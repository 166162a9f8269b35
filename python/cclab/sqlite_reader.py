"""Read-only connections to cclab's SQLite files (the result store's index, a transfer
journal) that still open after the writer was killed mid-write.

A writer killed while its file was in rollback mode (e.g. a new index, before it switched
to WAL) leaves a hot journal, and one killed in WAL mode can leave a WAL index to
rebuild. A ``mode=ro`` connection may repair neither and answers "attempt to write a
readonly database". Then, where the folder is writable, the file is opened as any
SQLite client would open it, which rolls the journal back, with ``query_only`` so that
nothing else is written.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path


class NeedsRecovery(RuntimeError):
    """The file needs a writer's recovery and its folder is not writable."""


def connect(path: str | Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection to ``path`` that reads only (autocommit, busy timeout ``timeout`` s)."""
    path = Path(path)
    db = _open(f"file:{path}?mode=ro", timeout)
    try:
        db.execute("PRAGMA user_version").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if "readonly" not in str(exc):
            raise
        if not os.access(path.parent, os.W_OK):
            raise NeedsRecovery(f"{path}: a writer was killed mid-write and left a journal to roll back, "
                                f"which needs write access to {path.parent} ({exc})") from None
    db = _open(f"file:{path}", timeout)
    db.execute("PRAGMA query_only = ON")
    return db


def _open(uri: str, timeout: float) -> sqlite3.Connection:
    db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return db
