"""A daemon job's description (what `cclab bg add` asks for), checked field by field.

A job is one or more URLs of one host fetched into one destination folder, with a
priority (``foreground`` bypasses access control, as BITS's foreground jobs;
``high``/``normal``/``low`` share the chunks the host's controller admits, in strict
priority order), an earliest start (``not_before``, seconds since the epoch), a daily
window (``window``: "HH:MM-HH:MM" local time, may wrap past midnight), a rate cap
(bytes/s), an expected SHA-256 (a job of one URL), and commands to run when it
completes or fails (argv, split with shlex; through ``/bin/sh -c`` only with
``shell``). Every error names its field (the API answers 400, the CLI exits 2).
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import urllib.parse
from dataclasses import asdict, dataclass, field

from .manifest import ManifestError, check_name, entry
from .units import parse_amount

PRIORITIES = ("foreground", "high", "normal", "low")
FIELDS = ("urls", "dest", "names", "priority", "not_before", "window", "max_rate", "size", "sha256",
          "on_complete", "on_error", "shell")
_WINDOW = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")
_RELATIVE = re.compile(r"^\+(\d+(?:\.\d+)?)([smhd]?)$")


class JobError(ValueError):
    """Bad input to `add` (400 from the API, exit 2 from the CLI)."""


class NoJob(LookupError):
    """A job number the queue does not hold (404 from the API, exit 2 from the CLI)."""


@dataclass
class JobSpec:
    """What a client asked for (stored as JSON in the queue)."""

    urls: list[str]
    dest: str
    names: list[str] = field(default_factory=list)
    priority: str = "normal"
    not_before: float | None = None
    window: str | None = None
    max_rate: float | None = None
    size: int | None = None  # the bytes the client expects (URLSession's expected size): a hint
    sha256: str | None = None
    on_complete: str | None = None
    on_error: str | None = None
    shell: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def host(self) -> str:
        u = urllib.parse.urlsplit(self.urls[0])
        return f"{u.scheme}://{u.hostname}:{u.port or (443 if u.scheme == 'https' else 80)}"

    def entries(self):
        """The engine's entries (url, name, sha256) of this job."""
        return [entry({"url": u, "name": n, **({"sha256": self.sha256} if self.sha256 else {})}, f"urls[{i}]")
                for i, (u, n) in enumerate(zip(self.urls, self.names))]


def parse_time(text: str | float | int, now: float, what: str = "not_before") -> float:
    """Seconds since the epoch from an ISO 8601 time (local time unless it has an offset),
    ``+N[smhd]`` (from now) or a number (seconds since the epoch)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        raise JobError(f"{what}: expected a time (ISO 8601, +N[smhd] or epoch seconds), got {text!r}")
    m = _RELATIVE.match(text.strip())
    if m:
        return now + float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    try:
        t = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise JobError(f"{what}: expected a time (ISO 8601 such as 2026-11-28T22:00, +N[smhd] or epoch "
                       f"seconds), got {text!r}") from None
    return t.timestamp()  # naive: local time


def parse_window(text: str, what: str = "window") -> tuple[int, int]:
    """(start, end) minutes after midnight of "HH:MM-HH:MM"; start == end is refused."""
    m = _WINDOW.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise JobError(f"{what}: expected HH:MM-HH:MM (24 h, local time; may wrap past midnight), got {text!r}")
    a, b = int(m.group(1)) * 60 + int(m.group(2)), int(m.group(3)) * 60 + int(m.group(4))
    if a == b:
        raise JobError(f"{what}: an empty window {text!r} (start equals end)")
    return a, b


def check_command(cmd, shell: bool, what: str) -> str | None:
    if cmd is None:
        return None
    if not isinstance(cmd, str) or not cmd.strip():
        raise JobError(f"{what}: expected a command line, got {cmd!r}")
    if not shell:
        try:
            shlex.split(cmd)
        except ValueError as exc:
            raise JobError(f"{what}: cannot split {cmd!r} into arguments: {exc}") from None
    return cmd


def _urls(raw) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise JobError(f"urls: expected a non-empty list of http(s) URLs, got {raw!r}")
    for i, u in enumerate(raw):
        p = urllib.parse.urlsplit(u) if isinstance(u, str) else None
        if p is None or p.scheme not in ("http", "https") or not p.hostname:
            raise JobError(f"urls[{i}]: expected an http:// or https:// URL, got {u!r}")
    first = JobSpec(urls=raw, dest="").host
    for i, u in enumerate(raw):
        if JobSpec(urls=[u], dest="").host != first:
            raise JobError(f"urls[{i}]: {u!r} is on another host than urls[0] ({first}): a job's URLs share "
                           f"one host (its access controller); add them as separate jobs")
    return list(raw)


def _names(raw, urls: list[str]) -> list[str]:
    if raw in (None, []):
        try:
            return [entry({"url": u}, f"urls[{i}]").name for i, u in enumerate(urls)]
        except ManifestError as exc:
            raise JobError(str(exc)) from None
    if not isinstance(raw, list) or len(raw) != len(urls):
        raise JobError(f"names: expected one name per URL ({len(urls)}), got {raw!r}")
    try:
        names = [check_name(n, f"names[{i}]") for i, n in enumerate(raw)]
    except ManifestError as exc:
        raise JobError(str(exc)) from None
    return names


def _dest(raw) -> str:
    if not isinstance(raw, str) or not os.path.isabs(raw) or "\0" in raw:
        raise JobError(f"dest: expected an absolute folder path, got {raw!r}")
    if os.path.exists(raw) and not os.path.isdir(raw):
        raise JobError(f"dest: {raw} exists and is not a folder")
    return os.path.realpath(raw)


def confined(dest: str, name: str) -> bool:
    """DEST/NAME, symbolic links resolved, is inside DEST (and not DEST itself)."""
    real = os.path.realpath(os.path.join(dest, name))
    return os.path.commonpath([real, dest]) == dest and real != dest


def check_spec(raw: dict, now: float) -> JobSpec:
    """A JobSpec from a client's JSON object; JobError naming the field."""
    if not isinstance(raw, dict):
        raise JobError(f"expected a JSON object with {', '.join(FIELDS)}, got {raw!r}")
    for k in raw:
        if k not in FIELDS:
            raise JobError(f"{k}: unknown field (allowed: {', '.join(FIELDS)})")
    urls = _urls(raw.get("urls"))
    dest = _dest(raw.get("dest"))
    names = _names(raw.get("names"), urls)
    if len(set(names)) != len(names):
        raise JobError(f"names: two URLs map to one file name ({names}): give distinct names")
    for i, n in enumerate(names):
        if not confined(dest, n):
            raise JobError(f"names[{i}]: {n!r} leads outside dest {dest} (a symbolic link)")
    prio = raw.get("priority", "normal")
    if prio not in PRIORITIES:
        raise JobError(f"priority: expected one of {', '.join(PRIORITIES)}, got {prio!r}")
    nb = raw.get("not_before")
    nb = parse_time(nb, now) if nb is not None else None
    win = raw.get("window")
    if win is not None:
        parse_window(win)
    rate = raw.get("max_rate")
    if rate is not None:
        try:
            rate = parse_amount(rate, what="max_rate", rate=True)
        except ValueError as exc:
            raise JobError(str(exc)) from None
    size = raw.get("size")
    if size is not None:
        try:
            size = int(parse_amount(size, what="size", rate=False))
        except ValueError as exc:
            raise JobError(str(exc)) from None
    sha = raw.get("sha256")
    if sha is not None:
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", sha):
            raise JobError(f"sha256: expected 64 hexadecimal digits, got {sha!r}")
        if len(urls) != 1:
            raise JobError(f"sha256: a checksum is for a job of one URL, this one has {len(urls)}")
        sha = sha.lower()
    shell = raw.get("shell", False)
    if not isinstance(shell, bool):
        raise JobError(f"shell: expected true or false, got {shell!r}")
    return JobSpec(urls=urls, dest=dest, names=names, priority=prio, not_before=nb, window=win, max_rate=rate,
                   size=size, sha256=sha, on_complete=check_command(raw.get("on_complete"), shell, "on_complete"),
                   on_error=check_command(raw.get("on_error"), shell, "on_error"), shell=shell)


def spec_from_dict(d: dict) -> JobSpec:
    """A stored spec (already checked)."""
    return JobSpec(**d)
