"""Background transfer manager for real networks (adaptive access control of background downloads).

``fetch(sources, dest, policy="fairbat", ...)`` downloads files over HTTP(S) with byte
ranges, at most m(t) chunks at once, m(t) from the same access controller as the
simulators (crates/control; FAIRBAT by default). ``serve`` is the test file server.
See docs/bgtransfer.md.
"""
from __future__ import annotations

import os

from .engine import DEFAULT_CHUNK, DEFAULT_MAX_ACTIVE, DEFAULT_RETRIES, DEFAULT_TIMEOUT, FetchResult, FileOutcome
from .manifest import Entry, ManifestError, entries_from, load_manifest
from .policy import Policy, parse_policy
from .units import parse_amount

__all__ = ["fetch", "FetchResult", "FileOutcome", "Entry", "ManifestError", "load_manifest", "parse_policy",
           "DEFAULT_CHUNK"]


def fetch(sources, dest: str | os.PathLike, *, policy: str = "fairbat", params: dict | list | None = None,
          chunk_size: int | str = DEFAULT_CHUNK, demand: float | str | None = None, within: float | None = None,
          retries: int = DEFAULT_RETRIES, timeout: float = DEFAULT_TIMEOUT, overwrite: bool = False,
          progress: bool = True, max_active: int = DEFAULT_MAX_ACTIVE, backoff: tuple[float, float] | None = None
          ) -> FetchResult:
    """Fetch ``sources`` into the folder ``dest`` under access control.

    sources: URLs, manifest paths (TOML/JSON), ``Entry`` objects or dicts
        (url, size, sha256, name).
    policy: ``fairbat`` (default), ``static:N``, ``rate`` (rate tracking) or ``unlimited``;
        ``params``: the controller's parameters (``{"tau": 20, "period": 30}`` or
        ``["tau=20"]``), as in the simulators (docs/protocols.md).
    chunk_size: bytes per chunk (byte range), default 3 MB (the papers' mean file size).
    demand: the background's offered load in bytes/s (Cρ_b): chunks are released to the
        controller as a fluid at this rate. within: seconds; demand = total / within.
        Neither: a plain backlog (docs/bgtransfer.md says what each policy then does).
    retries: retries of transient failures per chunk; timeout: seconds to connect and
        between two reads; overwrite: replace an existing different file;
        max_active: a cap on simultaneous connections whatever the policy;
        backoff: (base, cap) seconds of the exponential backoff.

    Bad input raises ValueError (ManifestError) before any transfer. Failures of files
    are in the result (``result.status``: 0 all done, 1 some failed)."""
    from .engine import BACKOFF_BASE, BACKOFF_CAP, Manager

    entries = entries_from(sources)
    pol = policy if isinstance(policy, Policy) else parse_policy(policy, params)
    chunk = int(parse_amount(chunk_size, what="chunk_size", rate=False))
    if chunk < 1:
        raise ValueError(f"chunk_size: expected at least 1 byte, got {chunk_size!r}")
    if demand is not None:
        demand = parse_amount(demand, what="demand", rate=True)
    if demand is not None and within is not None:
        raise ValueError("give demand or within, not both")
    if within is not None and not (within > 0 and within < float("inf")):
        raise ValueError(f"within: expected a positive number of seconds, got {within!r}")
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries: expected a whole number >= 0, got {retries!r}")
    if not (timeout > 0):
        raise ValueError(f"timeout: expected a positive number of seconds, got {timeout!r}")
    if not isinstance(max_active, int) or max_active < 1:
        raise ValueError(f"max_active: expected a whole number >= 1, got {max_active!r}")
    base, cap = backoff if backoff is not None else (BACKOFF_BASE, BACKOFF_CAP)
    if not (0 < base <= cap):
        raise ValueError(f"backoff: expected 0 < base <= cap, got {backoff!r}")
    m = Manager(entries, dest, pol, chunk_size=chunk, demand=demand, within=within, retries=retries,
                timeout=timeout, overwrite=overwrite, progress=progress, max_active=max_active,
                backoff_base=base, backoff_cap=cap)
    return m.run()
