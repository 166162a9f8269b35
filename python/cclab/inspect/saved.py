"""Reading a saved run back: ``cclab.load(DIR)`` on a folder written by
``cclab run --out DIR`` or ``Result.save(DIR)``."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from ..api import PERF_KEYS, Result
from ..traces import Traces

#: What a saved run must hold (the rest is optional: perf.json, scenario.json,
#: config.json, warnings.json, arrivals.parquet, a metadata file).
REQUIRED = ("flows.parquet", "links.parquet", "series.parquet", "summary.json")


class SavedRunError(ValueError):
    """A folder is not a saved run, or one of its files cannot be read; the message
    names the folder and what is missing or unreadable."""


@dataclass(repr=False)
class SavedRun(Result):
    """A :class:`cclab.Result` read from a folder, with where it came from.

    path: the folder.
    metadata: what the folder records about the run beyond its tables (the
        effective seed, the cclab version, the command line, when written by a
        `cclab run --out` that records them; empty for older folders).
    """

    path: Path = field(default_factory=Path)
    metadata: dict = field(default_factory=dict)

    def config_digest(self) -> str | None:
        """SHA-256 of the canonical configuration in config.json; None without it."""
        p = self.path / "config.json"
        if p.is_file():
            return hashlib.sha256(p.read_bytes().rstrip(b"\n")).hexdigest()
        return None


def load(path: Union[str, Path]) -> SavedRun:
    """The run saved in ``path`` (by ``cclab run --out`` or ``Result.save``), as the
    same tables as ``cclab.run`` returned: flows, links, series, arrivals, summary
    (perf.json's wall-time keys merged back), warnings, scenario, config, traces.

    Raises SavedRunError naming the folder and the missing or unreadable files.
    """
    import pandas as pd

    d = Path(path)
    if not d.exists():
        raise SavedRunError(f"{d}: no such folder")
    if not d.is_dir():
        raise SavedRunError(f"{d}: is a file; expected the folder of a saved run (written by `cclab run --out`)")
    missing = [f for f in REQUIRED if not (d / f).is_file()]
    if missing:
        raise SavedRunError(f"{d}: not a saved run: missing {', '.join(missing)} "
                            f"(a saved run is the folder written by `cclab run --out` or Result.save)")

    def table(name: str) -> pd.DataFrame:
        try:
            return pd.read_parquet(d / name)
        except Exception as exc:  # pyarrow raises several kinds; name the file
            raise SavedRunError(f"{d / name}: not a readable Parquet table ({exc.__class__.__name__}: {exc})") from None

    summary = _json(d / "summary.json", dict)
    perf = _json(d / "perf.json", dict) if (d / "perf.json").is_file() else {}
    summary = {k: (math.nan if v is None else v) for k, v in {**summary, **perf}.items()}
    links = table("links.parquet")
    for col in ("limit_packets", "limit_bytes"):
        if col in links:
            links[col] = links[col].astype("Int64")
    arrivals = table("arrivals.parquet") if (d / "arrivals.parquet").is_file() else _no_arrivals(links)
    metadata = _metadata(d)
    if (d / "warnings.json").is_file():
        warnings = list(_json(d / "warnings.json", list))
    else:
        warnings = list(metadata.get("warnings", []))
    try:
        traces = Traces.read(d / "traces", list(links["name"]) if "name" in links else [])
    except Exception as exc:  # a damaged Parquet table or file: name the folder
        raise SavedRunError(f"{d / 'traces'}: not readable ({exc.__class__.__name__}: {exc})") from None
    return SavedRun(
        flows=table("flows.parquet"), links=links, series=table("series.parquet"), summary=summary,
        warnings=warnings, arrivals=arrivals,
        scenario=_json(d / "scenario.json", dict) if (d / "scenario.json").is_file() else {},
        config=_json(d / "config.json", dict) if (d / "config.json").is_file() else {},
        traces=traces, path=d, metadata=metadata)


def _json(p: Path, kind: type):
    try:
        v = json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise SavedRunError(f"{p}: not valid JSON ({exc})") from None
    if not isinstance(v, kind):
        raise SavedRunError(f"{p}: expected a JSON {'object' if kind is dict else 'array'}, got {type(v).__name__}")
    return v


def _metadata(d: Path) -> dict:
    """run.json, which `cclab run --out` and `Result.save` write (the effective seed,
    the cclab version, the command line); empty for folders saved before it existed."""
    p = d / "run.json"
    if not p.is_file():
        return {}
    return dict(_json(p, dict))


def _no_arrivals(links):
    """The empty arrivals table of a run that recorded none (Result.save writes no
    file for it), with the dtypes `cclab.run` gives it."""
    import numpy as np
    import pandas as pd

    names = list(links["name"]) if "name" in links else []
    return pd.DataFrame({
        "time": np.array([], dtype=float),
        "link": pd.Categorical.from_codes(np.array([], dtype=np.int32), categories=names),
        "queue_packets": np.array([], dtype=np.int64),
        "queue_bytes": np.array([], dtype=np.int64),
        "backlog": np.array([], dtype=float),
        "dropped": np.array([], dtype=bool),
    })
