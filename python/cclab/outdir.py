"""Result folders written whole or not at all (`cclab run --out DIR`, `Result.save`).

* Checked before any work: ``DIR`` must not be a file, an existing folder must be
  empty or an earlier result (it holds ``summary.json``), and its parent must be
  creatable and writable (proved by creating the temporary folder there).
* Locked: ``.DIR.lock`` beside the folder is held (``fcntl.flock``) from the check
  until the new folder is in place; a second run into the same folder meanwhile is
  refused at once (exit status 2) naming the holder's process id, rather than
  waiting behind a run of unknown length. The lock file stays (removing it would
  let a third run lock a different file than a waiting second one).
* Atomic: the files are written into ``.DIR.tmp-XXXX`` beside ``DIR``, then the
  two folders are exchanged in one ``renameat2(RENAME_EXCHANGE)`` call and the old
  one removed: no reader ever sees a mix of two runs, no stale file of an earlier
  run survives, and a crash before the exchange leaves the old result intact
  (where renameat2 is missing, two renames: the old folder is kept as
  ``.DIR.old-XXXX`` for the instant between them). The temporary folders a killed
  run leaves are removed by the next run into the same folder, under the lock.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator


class OutError(ValueError):
    """The destination folder cannot be used; the message names it."""


#: A folder holding this file is an earlier result and may be replaced (a run's; other
#: results name their own, e.g. the testbed's results.json).
MARKER = "summary.json"


class Destination:
    """A checked, locked result folder; ``writing()`` yields the temporary folder to fill."""

    def __init__(self, path: str | os.PathLike, marker: str = MARKER):
        self.path = Path(path).absolute()
        self.where = where = f"--out {path}"
        self._lock_fd: int | None = None
        p = self.path
        if p.exists() and not p.is_dir():
            raise OutError(f"{where}: exists and is not a folder")
        if p.is_dir() and any(p.iterdir()) and not (p / marker).exists():
            raise OutError(f"{where}: a folder that is neither empty nor a cclab result (no {marker}); "
                           "cclab replaces the whole folder, so give a new or empty one")
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutError(f"{where}: cannot create {p.parent}: {exc.strerror or exc}") from None
        if not os.access(p.parent, os.W_OK | os.X_OK):
            raise OutError(f"{where}: {p.parent} is not writable")
        self._lock()
        # Holding the lock, no other run writes here: what a killed run left is debris.
        for debris in list(p.parent.glob(f".{p.name}.tmp-*")) + list(p.parent.glob(f".{p.name}.old-*")):
            shutil.rmtree(debris, ignore_errors=True)
        try:  # proves the parent writable (root passes os.access on read-only mounts)
            os.rmdir(tempfile.mkdtemp(dir=p.parent, prefix=f".{p.name}.tmp-"))
        except OSError as exc:
            self.release()
            raise OutError(f"{where}: cannot write in {p.parent}: {exc.strerror or exc}") from None

    def _lock(self) -> None:
        lock = self.path.parent / f".{self.path.name}.lock"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutError(f"{self.where}: cannot create the lock file {lock}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise OutError(f"{self.where}: another cclab run (process {holder}) is writing this folder; "
                               "wait for it or choose another") from None
            raise OutError(f"{self.where}: cannot lock {lock}: {exc.strerror or exc}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def release(self) -> None:
        """Release the lock (the lock file stays)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "Destination":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    @contextlib.contextmanager
    def writing(self) -> Iterator[Path]:
        """A temporary folder beside the destination; on leaving without an error it
        replaces the destination atomically, on an error it is removed."""
        tmp = Path(tempfile.mkdtemp(dir=self.path.parent, prefix=f".{self.path.name}.tmp-"))
        try:
            yield tmp
            for f in tmp.rglob("*"):  # the files (a run's traces/ too) reach the disk before the switch
                if f.is_file():
                    with open(f, "rb") as fh:
                        os.fsync(fh.fileno())
            os.chmod(tmp, 0o777 & ~_umask())
            _replace(tmp, self.path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def fsync_dir(path: Path) -> None:
    """Make a folder's entries durable (a rename or a new file in it survives a crash):
    open the folder, fsync it, close it. The result store and the transfer manager
    call it after their renames."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    name = ctypes.util.find_library("c")
    try:
        f = ctypes.CDLL(name, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None
    f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return f


def _replace(new: Path, dest: Path) -> None:
    """Put folder ``new`` at ``dest``; what was at ``dest`` ends at ``new`` (to remove)."""
    if not dest.exists():
        os.rename(new, dest)
        return
    f = _renameat2()
    if f is not None and f(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(dest), _RENAME_EXCHANGE) == 0:
        return
    old = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.old-"))
    os.rename(dest, old / "x")
    os.rename(new, dest)
    os.rename(old / "x", new)
    os.rmdir(old)
