"""What `cclab validate` prints: a checked scenario's resolved topology, routes,
per-link offered load and run estimate, read from ``cclab.validate()``'s result (the
offered load is the engine's, ``info["offered_load"]``).

Imports neither numpy nor pandas (validating must start fast).
"""
from __future__ import annotations

from typing import Any


def _scaled(x: float, units: tuple[str, str, str, str], digits: int) -> str:
    """x in the largest of giga, mega, kilo that keeps it at least 1 (``units``: those
    three names and the plain one)."""
    for unit, scale in zip(units, (1e9, 1e6, 1e3)):
        if x >= scale:
            return f"{x / scale:.{digits}g} {unit}"
    return f"{x:.{digits}g} {units[3]}"


def _rate(bps: float) -> str:
    return _scaled(bps, ("Gbps", "Mbps", "kbps", "bps"), 4)


def _bytes(n: float) -> str:
    return _scaled(n, ("GB", "MB", "kB", "B"), 3)


def _time(ns: float) -> str:
    return f"{ns / 1e6:g} ms" if ns < 1e9 else f"{ns / 1e9:g} s"


def _queue(q: dict) -> str:
    limit = f"{q['limit_packets']} packets" if q.get("limit_packets") is not None else (
        _bytes(q["limit_bytes"]) if q.get("limit_bytes") is not None else "no limit")
    return f"{q['type']} {limit}"


def _protocol(tr: dict) -> str:
    return tr["cc"]["protocol"] if "cc" in tr else tr["kind"]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def describe(info: dict, max_rows: int = 50) -> str:
    """The text `cclab validate` prints for ``info = cclab.validate(...)``; tables longer
    than ``max_rows`` show their first rows and say how many were left out."""
    cfg: dict[str, Any] = info["config"]
    nodes = cfg["nodes"]
    links = cfg["links"]
    lines = [f"scenario {cfg.get('name', '')!r}  seed {cfg['seed']}  duration {_time(cfg['duration_ns'])}  "
             f"warm-up {_time(cfg['warmup_ns'])}", ""]

    def cut(rows: list[list[str]], total: int, what: str) -> list[str]:
        """The first max_rows rows (a header and at most max_rows + 1 rows are made)."""
        shown = _table(rows[: max_rows + 1])
        if total > max_rows:
            shown.append(f"  ... and {total - max_rows} more {what} (--json prints them all)")
        return shown

    lines.append(f"nodes ({len(nodes)}): " + ", ".join(nodes[:max_rows]) + (" ..." if len(nodes) > max_rows else ""))
    lines.append(f"\nlinks ({len(links)}; offered load of the Poisson, flow-list and CBR classes, headers included):")
    rows = [["name", "from", "to", "rate", "delay", "queue", "offered", "load", "elastic classes"]]
    for link, load in zip(links[:max_rows + 1], info["offered_load"]):
        rows.append([link["name"], nodes[link["from"]], nodes[link["to"]], _rate(link["rate_bps"]),
                     _time(link["delay_ns"]), _queue(link["queue"]), _rate(load["offered_bps"]) if load["offered_bps"]
                     else "0", f"{load['load']:.3f}", str(load["elastic_classes"])])
    lines += cut(rows, len(links), "links")
    classes = cfg["classes"]
    lines.append(f"\nclasses ({len(classes)}) and routes:")
    rows = [["name", "arrivals", "protocol", "route", "ack route"]]
    for c in classes[:max_rows + 1]:
        rows.append([c["name"], c["arrivals"]["type"], _protocol(c["transport"]),
                     " > ".join(links[l]["name"] for l in c["route"]),
                     " > ".join(links[l]["name"] for l in c["ack_route"]) or "-"])
    lines += cut(rows, len(classes), "classes")
    e = info["estimate"]
    lines.append(f"\nestimate: {e['flows']:,.0f} flows, {e['packets']:,.0f} packets, {e['events']:,.0f} events, "
                 f"about {e['wall_time_s']:.3g} s of wall time (at 10 M events/s), {_bytes(e['memory_bytes'])} of memory")
    if e.get("trace_rows") or e.get("pcap_bytes"):
        lines.append(f"traces: about {e['trace_rows']:,.0f} rows and {_bytes(e['pcap_bytes'])} of packet captures")
    lines.append(f"limits: memory {_bytes(e['limit_memory_bytes'])}, wall time {e['limit_wall_time_s']:g} s "
                 f"(--set limits.memory=..., --set limits.wall_time=...)")
    for w in info["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
