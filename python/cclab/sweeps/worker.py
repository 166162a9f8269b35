"""What a worker does for one run: simulate a canonical configuration and return
its tables as Parquet bytes with its scalar metrics. Nothing here touches the
store: the process that owns the store writes what workers return, so workers
need no shared file system (a dask worker on another machine works the same).

Which tables a run keeps is the caller's choice (``keep``): the engine's tables by
name (``flows``, ``links``, ``series``, ``arrivals``) and *reductions*, functions
``module:function`` of a run's :class:`cclab.Result` that return a small table and
run here, beside the simulation, so that a run whose flows table is too large to
keep (a TFCBR run of 75,000 s has a million flows) keeps what its reader computes
from it. The summary and the scalar metrics are always kept.

An exception raised by the simulator becomes a failed outcome (``kind = "error"``,
with the message); the sweep records it and goes on.
"""
from __future__ import annotations

import json
import socket
import time
import traceback
from typing import Iterable

#: Key of the run's description in the key-value metadata of its flows.parquet.
META_KEY = "cclab.run"
#: Field metadata of a column of whole numbers that may be absent (pandas' Int64 in a Result).
NULLABLE_INT = b"cclab.nullable_int"

#: Columns of the links table kept as scalar metrics ``link.NAME.COLUMN``.
LINK_METRICS = ("utilization", "drop_rate", "drops", "packets_sent", "bytes_sent", "mean_queue_packets",
                "mean_queue_bytes", "max_queue_packets", "max_queue_bytes")
#: The engine's tables, in the order a Result has them.
TABLES = ("flows", "links", "series", "arrivals")
#: A run's description when its flows table is not kept (else it is in flows.parquet's metadata).
META_FILE = "run.json"


def reduction_name(spec: str) -> str:
    """A reduction ``module:function`` as the store names it: with the function's
    ``version`` attribute (default 1), ``module:function@1``, so that a reduction whose
    computation changes (its author bumps the version) is not read from older runs."""
    return f"{spec}@{getattr(reduction(spec), 'version', 1)}"


def reduction(spec: str):
    """The function of a reduction ``module:function`` (ValueError naming it if absent)."""
    import importlib

    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"keep: {spec!r} is neither a table ({', '.join(TABLES)}) nor a reduction module:function")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"keep: reduction {spec!r} not found: {exc}") from None


def table_file(name: str) -> str:
    """The file of a kept table in a run's folder: ``flows.parquet``, or for a reduction
    ``module.function@version.parquet``."""
    return f"{name.replace(':', '.')}.parquet"


def normalize_keep(keep: Iterable[str] | None) -> tuple[str, ...]:
    """The tables a run keeps, checked and in canonical form (engine tables first, then
    reductions with their versions, each once); None: every engine table."""
    if keep is None:
        return TABLES
    if isinstance(keep, str):
        keep = (keep,)
    out = [t for t in TABLES if t in keep]
    for k in keep:
        if k in TABLES:
            continue
        name = k if "@" in k else reduction_name(k)
        if name not in out:
            out.append(name)
    return tuple(out)


def to_result(tables: dict, summary: dict, config: dict, warnings: list, reduced: dict | None = None):
    """A :class:`cclab.Result` from Arrow tables (those absent: empty frames)."""
    import pandas as pd

    from ..api import Result

    frames = {t: _frame(tables[t]) if t in tables else pd.DataFrame() for t in TABLES}
    return Result(flows=frames["flows"], links=frames["links"], series=frames["series"], summary=dict(summary),
                  warnings=list(warnings), arrivals=frames["arrivals"], scenario={}, config=config,
                  reduced=dict(reduced or {}))


def _frame(arrow):
    """An Arrow table as pandas, its marked columns of whole numbers as Int64."""
    frame = arrow.to_pandas()
    for f in arrow.schema:
        if f.metadata and NULLABLE_INT in f.metadata:
            frame[f.name] = frame[f.name].astype("Int64")
    return frame


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


def execute(config: str, engine: str | None = None, key: str | None = None, keep=None) -> dict:
    """Run one canonical configuration; a payload for :meth:`Store.put`.

    engine: the results version the client computed the run's key with; a worker
        whose engine differs refuses the run (its output would be filed under the
        wrong key).
    key: the run's key, written with the configuration, summary and metrics into
        the key-value metadata of ``flows.parquet`` (``cclab.run``), or into
        ``run.json`` when the flows table is not kept, so that a run's folder
        describes itself.
    keep: the tables to keep (see the module's documentation; None: every engine table).
    """
    t0 = time.perf_counter()
    host = socket.gethostname()
    try:
        from .. import _core

        mine = f"results/{_core.ENGINE_RESULTS_VERSION}"
        if engine is not None and engine != mine:
            return {"ok": False, "kind": "error", "host": host, "wall_s": 0.0,
                    "error": f"worker {host} runs engine {mine}, the sweep expects {engine}: install the same cclab"}
        keep = normalize_keep(keep)
        raw = _core.run_config(config, None)
        tables = arrow_tables(raw)
        summary = dict(raw["summary"])
        metrics = scalar_metrics(summary, raw["links"])
        meta = {"key": key, "engine": mine, "host": host, "summary": summary, "metrics": metrics,
                "warnings": list(raw["warnings"]), "config": json.loads(config), "tables": list(keep)}
        files = _reduced_files(keep, tables, meta)
        kept = {t: tables[t] for t in TABLES if t in keep and t in tables}
        if "flows" in kept:
            kept["flows"] = kept["flows"].replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True)})
        else:
            files[META_FILE] = json.dumps(meta, sort_keys=True).encode()
        files.update({table_file(name): parquet_bytes(t) for name, t in kept.items()})
        return {"ok": True, "files": files, "metrics": metrics, "summary": summary, "tables": list(keep),
                "warnings": meta["warnings"], "host": host, "wall_s": time.perf_counter() - t0}
    except MemoryError:
        return {"ok": False, "kind": "lost", "error": "MemoryError: the worker ran out of memory", "host": host,
                "wall_s": time.perf_counter() - t0}
    except Exception as exc:  # the run's own failure: recorded, the sweep goes on
        msg = str(exc) or exc.__class__.__name__
        return {"ok": False, "kind": "error", "error": f"{exc.__class__.__name__}: {msg}",
                "traceback": traceback.format_exc(limit=5), "host": host, "wall_s": time.perf_counter() - t0}


def _reduced_files(keep: tuple[str, ...], tables: dict, meta: dict) -> dict:
    """The files of the reductions among ``keep``, computed from the run's tables."""
    import pyarrow as pa

    specs = [k for k in keep if k not in TABLES]
    if not specs:
        return {}
    res = to_result(tables, meta["summary"], meta["config"], meta["warnings"])
    out = {}
    for name in specs:
        frame = reduction(name.rsplit("@", 1)[0])(res)
        out[table_file(name)] = parquet_bytes(pa.Table.from_pandas(frame, preserve_index=False))
    return out
