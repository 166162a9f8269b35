"""What a worker does for one run: simulate a canonical configuration and return
its tables as Parquet bytes with its scalar metrics. Nothing here touches the
store: the process that owns the store writes what workers return, so workers
need no shared file system (a dask worker on another machine works the same).

An exception raised by the simulator becomes a failed outcome (``kind = "error"``,
with the message); the sweep records it and goes on.
"""
from __future__ import annotations

import json
import socket
import time
import traceback

#: Key of the run's description in the key-value metadata of its flows.parquet.
META_KEY = "cclab.run"
#: Field metadata of a column of whole numbers that may be absent (pandas' Int64 in a Result).
NULLABLE_INT = b"cclab.nullable_int"

#: Columns of the links table kept as scalar metrics ``link.NAME.COLUMN``.
LINK_METRICS = ("utilization", "drop_rate", "drops", "packets_sent", "bytes_sent", "mean_queue_packets",
                "mean_queue_bytes", "max_queue_packets", "max_queue_bytes")


def _dictionary(codes, names):
    import numpy as np
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(np.asarray(codes, dtype=np.int32)), pa.array(list(names), pa.string()))


def _arrow_table(columns: dict, categories: dict | None = None):
    """One table from the engine's columns as they come (the engine lists them:
    crates/sim/src/metrics/columns.rs), with the types of :class:`cclab.Result`'s
    tables: unsigned counters as int64, whole numbers that may be absent as nullable
    int64, the columns in ``categories`` as dictionaries of those names."""
    import numpy as np
    import pyarrow as pa

    categories = categories or {}
    arrays, fields = [], []
    for name, col in columns.items():
        meta = None
        if name in categories:
            a = _dictionary(col, categories[name])
        elif isinstance(col, np.ndarray):
            a = pa.array(col.astype(np.int64) if col.dtype.kind == "u" else col)
        elif col and all(isinstance(x, str) for x in col):
            a = pa.array(col, pa.string())
        else:  # whole numbers and None: marked, so that a stored run reads back as Int64
            a, meta = pa.array(col, pa.int64()), {NULLABLE_INT: b"1"}
        arrays.append(a)
        fields.append(pa.field(name, a.type, metadata=meta))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def arrow_tables(raw: dict) -> dict:
    """The engine's raw columns as Arrow tables with the columns and types of
    :class:`cclab.Result`'s tables (categoricals as dictionaries), without pandas."""
    s = raw["series"]
    series = {k: v for k, v in s.items() if k not in ("metric_names", "entity_names")}
    out = {"flows": _arrow_table(raw["flows"], {"class": raw["class_names"]}),
           "links": _arrow_table(raw["links"]),
           "series": _arrow_table(series, {"metric": s["metric_names"], "name": s["entity_names"]})}
    if len(raw["arrivals"]["time"]):
        out["arrivals"] = _arrow_table(raw["arrivals"], {"link": raw["link_names"]})
    return out


def parquet_bytes(table) -> bytes:
    """An Arrow table as the bytes of a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    # no column statistics: a run's file is read whole, and they cost a third of the writing
    pq.write_table(table, sink, write_statistics=False)
    return sink.getvalue().to_pybytes()


def scalar_metrics(summary: dict, links: dict) -> dict:
    """The numeric summary values, and per link ``link.NAME.COLUMN`` for LINK_METRICS
    (``links``: the links table's columns)."""
    out = {k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    for i, name in enumerate(links["name"]):
        for col in LINK_METRICS:
            v = links[col][i]
            out[f"link.{name}.{col}"] = None if v is None else float(v)
    return out


def execute(config: str, engine: str | None = None, key: str | None = None) -> dict:
    """Run one canonical configuration; a payload for :meth:`Store.put`.

    engine: the results version the client computed the run's key with; a worker
        whose engine differs refuses the run (its output would be filed under the
        wrong key).
    key: the run's key, written with the configuration, summary and metrics into
        the key-value metadata of ``flows.parquet`` (``cclab.run``), so that a run's
        folder describes itself.
    """
    t0 = time.perf_counter()
    host = socket.gethostname()
    try:
        from .. import _core

        mine = f"results/{_core.ENGINE_RESULTS_VERSION}"
        if engine is not None and engine != mine:
            return {"ok": False, "kind": "error", "host": host, "wall_s": 0.0,
                    "error": f"worker {host} runs engine {mine}, the sweep expects {engine}: install the same cclab"}
        raw = _core.run_config(config, None)
        tables = arrow_tables(raw)
        summary = dict(raw["summary"])
        metrics = scalar_metrics(summary, raw["links"])
        meta = {"key": key, "engine": mine, "host": host, "summary": summary, "metrics": metrics,
                "warnings": list(raw["warnings"]), "config": json.loads(config)}
        tables["flows"] = tables["flows"].replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True)})
        files = {f"{name}.parquet": parquet_bytes(t) for name, t in tables.items()}
        return {"ok": True, "files": files, "metrics": metrics, "summary": summary,
                "warnings": meta["warnings"], "host": host, "wall_s": time.perf_counter() - t0}
    except MemoryError:
        return {"ok": False, "kind": "lost", "error": "MemoryError: the worker ran out of memory", "host": host,
                "wall_s": time.perf_counter() - t0}
    except Exception as exc:  # the run's own failure: recorded, the sweep goes on
        msg = str(exc) or exc.__class__.__name__
        return {"ok": False, "kind": "error", "error": f"{exc.__class__.__name__}: {msg}",
                "traceback": traceback.format_exc(limit=5), "host": host, "wall_s": time.perf_counter() - t0}
