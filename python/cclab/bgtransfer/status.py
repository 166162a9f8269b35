"""`cclab bg status DEST`: the journal of a destination folder, read-only."""
from __future__ import annotations

import json
from pathlib import Path

from .journal import Journal
from .manifest import RESERVED
from .units import human_bytes


def status(dest: str | Path) -> dict:
    """Files (state, bytes done, size, rate, failures, last error) and runs of DEST's journal."""
    path = Path(dest) / RESERVED / "journal.sqlite"
    if not path.exists():
        raise ValueError(f"{dest}: no journal ({path} does not exist): nothing was fetched here")
    j = Journal(path, readonly=True)
    try:
        files = []
        for r in j.files():
            span = (r["finished_at"] or r["last_at"] or 0) - (r["first_byte_at"] or 0)
            files.append({
                "name": r["name"], "url": r["url"], "state": r["state"], "size": r["size"],
                "bytes_done": r["bytes_done"], "sha256": r["sha256"], "failures": r["failures"],
                "error": r["error"], "rate_Bps": r["bytes_done"] / span if r["first_byte_at"] and span > 0 else None,
                "ranges": len(j.ranges(r["name"])),
            })
        runs = [{"run": r["run"], "policy": r["policy"], "started_at": r["started_at"],
                 "finished_at": r["finished_at"], "status": r["status"]} for r in j.runs()]
    finally:
        j.close()
    return {"dest": str(dest), "files": files, "runs": runs}


def print_status(dest, as_json: bool = False) -> int:
    st = status(dest)
    if as_json:
        print(json.dumps(st, indent=2))
        return 0
    files = st["files"]
    width = max([len(f["name"]) for f in files] + [4])
    print(f"{'file':<{width}}  {'state':<8} {'done':>10} {'size':>10} {'rate':>11} failures  last error")
    for f in files:
        size = human_bytes(f["size"]) if f["size"] is not None else "?"
        rate = f"{human_bytes(f['rate_Bps'])}/s" if f["rate_Bps"] else "-"
        err = f["error"] or ""
        if len(err) > 80:
            err = err[:77] + "..."
        print(f"{f['name']:<{width}}  {f['state']:<8} {human_bytes(f['bytes_done']):>10} {size:>10} {rate:>11} "
              f"{f['failures']:>8}  {err}")
    counts: dict[str, int] = {}
    for f in files:
        counts[f["state"]] = counts.get(f["state"], 0) + 1
    runs = st["runs"]
    last = runs[-1] if runs else None
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"{len(files)} files: {summary}; {len(runs)} runs"
          + (f", the last with policy {last['policy']}, " + ("still running or killed" if last["finished_at"] is None
                                                            else f"exit status {last['status']}") if last else ""))
    return 0
