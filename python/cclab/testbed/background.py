"""The background side of a testbed measurement: the transfer manager
(``cclab.bgtransfer.fetch``, the "fetch" engineer's) run inside the client namespace
(``python -m cclab.testbed.background ...``) on a queue of large files served by
``cclab bg serve`` in the server namespace.

The manager cuts the files into chunks of ``chunk`` bytes (each one HTTP range request on
its own connection: the papers' micro-flows) and releases them as a fluid at ``demand``
bytes/s (the background's offered load C·ρ_b): chunk k is released when demand·t reaches
the bytes of chunks 0..k (docs/bgtransfer.md). The testbed gives it files whose bytes are
``demand × duration``, so that releases span the measurement, and stops it (SIGINT) when
the measurement ends; the simulator's prediction is given the same release times
(``release_times``).

Output (JSON in OUT, if the manager finished before it was stopped): the manager's
outcome: per file its state, the limit trace (t, limit, active, waiting), its averages.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def manager_policy(access: dict | None) -> tuple[str, dict | None]:
    """The simulator's access table as the manager's ``policy`` and ``params``: none
    (vanilla) is ``unlimited``; durations ("20s") become seconds, as the manager takes."""
    from .scenario import _duration_s

    if access is None:
        return "unlimited", None
    kind = access.get("policy")
    params = {}
    for k, v in access.items():
        if k == "policy":
            continue
        params[k] = _duration_s(v, f"access.{k}") if isinstance(v, str) and k == "period" else v
    if kind == "static":
        return f"static:{params.pop('limit')}", params or None
    if kind == "rate_tracking":
        return "rate", params or None
    return str(kind), params or None


def release_times(chunks: int, chunk: int, demand: float) -> list[float]:
    """When the manager releases chunk k of equal chunks (s from its start): (k+1)·chunk/demand."""
    return [(k + 1) * chunk / demand for k in range(chunks)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cclab.testbed.background")
    p.add_argument("out", type=Path)
    p.add_argument("dest")
    p.add_argument("urls", nargs="+")
    p.add_argument("--access", default="null", help="the simulator's access table as JSON (null: vanilla)")
    p.add_argument("--chunk", type=int, required=True)
    p.add_argument("--demand", type=float, required=True, help="bytes/s")
    a = p.parse_args(argv)
    from dataclasses import asdict

    from ..bgtransfer import fetch

    policy, params = manager_policy(json.loads(a.access))
    res = fetch(a.urls, a.dest, policy=policy, params=params, chunk_size=a.chunk, demand=a.demand, progress=False)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"status": res.status, "policy": res.policy, "elapsed_s": res.elapsed,
                               "bytes_fetched": res.bytes_fetched, "trace": res.limit_trace,
                               "averages": res.averages, "files": [asdict(f) for f in res.files]}))
    tmp.rename(a.out)
    return res.status


if __name__ == "__main__":
    sys.exit(main())
