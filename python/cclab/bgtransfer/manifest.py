"""What to fetch: URLs given on the command line, or a manifest (TOML or JSON) of
entries with ``url`` and optional ``size`` (bytes), ``sha256`` (hex) and ``name`` (the
file's path under the destination folder; default: the URL's last path segment).

TOML::

    [[files]]
    url = "https://example.org/a.iso"
    size = 1048576
    sha256 = "9f86d0..."

JSON: ``{"files": [{"url": ...}, ...]}`` or a bare list of such objects.
Errors name the entry and key (``files[2].sha256: expected 64 hexadecimal digits``).
"""
from __future__ import annotations

import json
import posixpath
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

KEYS = ("url", "size", "sha256", "name")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
RESERVED = ".cclab-bg"


class ManifestError(ValueError):
    """Bad input: the CLI exits with status 2."""


@dataclass(frozen=True)
class Entry:
    """One file to fetch."""

    url: str
    name: str
    size: int | None = None
    sha256: str | None = None


def check_name(name: str, at: str) -> str:
    """A relative path inside the destination, without '..', not in the journal's folder."""
    if not isinstance(name, str) or not name or name.startswith("/") or "\\" in name or "\0" in name:
        raise ManifestError(f"{at}: expected a relative file name, got {name!r}")
    norm = posixpath.normpath(name)
    parts = norm.split("/")
    if norm != name.rstrip("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == RESERVED:
        raise ManifestError(f"{at}: {name!r} is not a plain relative path inside the destination "
                            f"(no '..', '.', empty parts or {RESERVED}/)")
    return norm


def name_from_url(url: str, at: str) -> str:
    path = urllib.parse.urlsplit(url).path
    base = urllib.parse.unquote(path.rsplit("/", 1)[-1])
    if not base:
        raise ManifestError(f"{at}: the URL {url!r} ends in '/': give the file a name")
    return check_name(base, at)


def entry(raw: dict, at: str) -> Entry:
    if not isinstance(raw, dict):
        raise ManifestError(f"{at}: expected a table with url (and optional size, sha256, name), got {raw!r}")
    for k in raw:
        if k not in KEYS:
            raise ManifestError(f"{at}.{k}: unknown key (allowed: {', '.join(KEYS)})")
    url = raw.get("url")
    if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https") \
            or not urllib.parse.urlsplit(url).netloc:
        raise ManifestError(f"{at}.url: expected an http:// or https:// URL, got {url!r}")
    size = raw.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ManifestError(f"{at}.size: expected a whole number of bytes >= 0, got {size!r}")
    sha = raw.get("sha256")
    if sha is not None and (not isinstance(sha, str) or not _HEX64.match(sha)):
        raise ManifestError(f"{at}.sha256: expected 64 hexadecimal digits, got {sha!r}")
    name = check_name(raw["name"], f"{at}.name") if "name" in raw else name_from_url(url, f"{at}.url")
    return Entry(url=url, name=name, size=size, sha256=sha.lower() if sha else None)


def load_manifest(path: str | Path) -> list[Entry]:
    """The entries of a TOML or JSON manifest."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the manifest: {exc.strerror or exc}") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: {exc}") from None
    if isinstance(data, dict):
        unknown = [k for k in data if k != "files"]
        if unknown:
            raise ManifestError(f"{path}: {unknown[0]}: unknown key (a manifest holds `files`, a list of entries)")
        data = data.get("files", [])
    if not isinstance(data, list):
        raise ManifestError(f"{path}: expected a list of files")
    return [entry(raw, f"{path}: files[{i}]") for i, raw in enumerate(data)]


def entries_from(sources, *, at: str = "sources") -> list[Entry]:
    """Entries from a mix of URLs, manifest paths, Entry objects and dicts; names unique."""
    if isinstance(sources, (str, Path, Entry, dict)):
        sources = [sources]
    out: list[Entry] = []
    for i, s in enumerate(sources):
        if isinstance(s, Entry):
            out.append(s)
        elif isinstance(s, dict):
            out.append(entry(s, f"{at}[{i}]"))
        elif isinstance(s, str) and re.match(r"^https?://", s, re.I):
            out.append(entry({"url": s}, f"{at}[{i}]"))
        else:
            out.extend(load_manifest(s))
    if not out:
        raise ManifestError("nothing to fetch: give URLs or a manifest")
    seen: dict[str, str] = {}
    for e in out:
        if e.name in seen:
            raise ManifestError(f"two files named {e.name!r} ({seen[e.name]} and {e.url}): give them distinct names")
        seen[e.name] = e.url
    return out
