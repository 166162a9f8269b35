"""The Python API: ``cclab.run(scenario, seed=None) -> Result``."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Union

import numpy as np
import pandas as pd

from .scenario import ScenarioError, ScenarioLike, load_scenario, to_json
from .traces import Traces
from .validation import validate, validate_text as _validate_text, with_limits, with_trace

#: Summary keys that measure the machine rather than the simulation; `Result.save`
#: writes them to perf.json so that summary.json is byte-identical across runs.
PERF_KEYS = ("wall_time_s", "events_per_s", "wall_s_per_sim_s")


@dataclass
class Result:
    """The tables of one run.

    flows: one row per flow (class, id, size, arrival, start, finish, completion_time,
        bytes_delivered, retransmissions, timeouts, finished, warmup). Completion
        time is from the flow's arrival until the receiver holds every byte; a chunk
        of an access-controlled class starts (opens its connection) after waiting.
    links: one row per link, counters over [warm-up, end].
    series: sampled time series in long form (time, metric, name, value).
    summary: scalars (per-class means, packet counters, events, wall time).
    warnings: what validation flagged (e.g. an offered load at or above capacity).
    arrivals: the queue met by each packet arriving at the links listed in
        ``record.arrivals`` (time, link, queue_packets, queue_bytes, backlog in
        seconds until the transmitter is free, dropped); empty otherwise.
    scenario: the scenario as given (a dict), with ``seed`` the effective one.
    config: the canonical configuration that ran (a dict: every name resolved, every
        unit in SI integers, the effective seed); `cclab.run(result.config)` runs it again.
    reduced: for a run read back from the result store, the small tables its sweep kept
        in place of the engine's (``{"module:function@version": DataFrame}``; see
        :mod:`cclab.sweeps.worker`); empty otherwise.
    traces: what ``[trace]`` recorded (:class:`cclab.traces.Traces`: the flows,
        packets, links and access tables and the libpcap captures; empty without it).
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    series: pd.DataFrame
    summary: dict
    warnings: list = field(default_factory=list)
    arrivals: pd.DataFrame = field(default_factory=pd.DataFrame)
    scenario: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    reduced: dict = field(default_factory=dict)
    traces: Traces = field(default_factory=Traces)

    def save(self, out: Union[str, Path], command: list[str] | None = None) -> Path:
        """Write the run into folder ``out``, whole or not at all (cclab.outdir): the
        files go to a temporary folder beside ``out`` that then replaces it, under a
        lock that refuses a second writer; an earlier result there is replaced, files
        and all. See ``write_files`` for the files; ``command`` is recorded in run.json."""
        from .outdir import Destination

        with Destination(out) as dest, dest.writing() as tmp:
            self.write_files(tmp, command)
        return Path(out)

    def write_files(self, out: Path, command: list[str] | None = None) -> None:
        """Write into the existing folder ``out``: flows/links/series (and arrivals) as
        Parquet; summary.json (the scalars, byte-identical for the same scenario and
        seed), perf.json (wall time, events per second), scenario.json (the scenario
        as run: overrides applied, the effective seed), config.json (the canonical
        configuration), warnings.json, run.json (the effective seed, the cclab version and
        ``command``, the command line); with traces, the folder traces/ (flows, packets,
        links and access tables as Parquet, a LINK.pcap file per captured link)."""
        from . import __version__

        out = Path(out)
        self.flows.to_parquet(out / "flows.parquet", index=False)
        self.links.to_parquet(out / "links.parquet", index=False)
        self.series.to_parquet(out / "series.parquet", index=False)
        if len(self.arrivals):
            self.arrivals.to_parquet(out / "arrivals.parquet", index=False)
        if self.traces:
            self.traces.write(out / "traces")
        summary = {k: v for k, v in self.summary.items() if k not in PERF_KEYS}
        perf = {k: v for k, v in self.summary.items() if k in PERF_KEYS}
        (out / "summary.json").write_text(json.dumps(json_safe(summary), indent=2, sort_keys=True) + "\n")
        (out / "perf.json").write_text(json.dumps(json_safe(perf), indent=2, sort_keys=True) + "\n")
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2, sort_keys=True, default=str) + "\n")
        (out / "config.json").write_text(json.dumps(self.config) + "\n")
        (out / "warnings.json").write_text(json.dumps(self.warnings, indent=2) + "\n")
        run = {"seed": self.config.get("seed", self.summary.get("seed")), "cclab_version": __version__,
               "command": command}
        (out / "run.json").write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")

    def __repr__(self) -> str:
        # Short: the dataclass's own repr prints every table (4 KB for a small run).
        s = self.summary
        classes = list(self.flows["class"].cat.categories) if "class" in self.flows else []
        links = list(self.links["name"]) if "name" in self.links else []
        done = int(self.flows["finished"].sum()) if "finished" in self.flows else 0
        return (f"<cclab.Result {s.get('name', '?')!r} seed {s.get('seed', '?')}, "
                f"{s.get('simulated_s', float('nan')):g} s (warm-up {s.get('warmup_s', float('nan')):g} s): "
                f"{_names(classes, 'class', 'classes')}; {_names(links, 'link', 'links')}; "
                f"{len(self.flows)} flows ({done} finished), {len(self.warnings)} warnings>")

    def _repr_html_(self) -> str:
        """The run as a compact table in Jupyter (cclab.summary.html_summary)."""
        from .summary import html_summary

        return html_summary(self)

    def completion_times(self, cls: str | None = None) -> pd.Series:
        """Completion times of finished flows after warm-up (optionally of one class)."""
        f = self.flows[self.flows.finished & ~self.flows.warmup]
        if cls is not None:
            f = f[f["class"] == cls]
        return f["completion_time"]


def _names(names: list, one: str, many: str, show: int = 4) -> str:
    """``2 classes short, long`` or ``1000 classes c0, c1, c2, c3, ...``."""
    head = ", ".join(map(str, names[:show])) + (", ..." if len(names) > show else "")
    return f"{len(names)} {one if len(names) == 1 else many} {head}".rstrip()


def json_safe(d: dict) -> dict:
    """The dict with NaN floats as None, so that it serialises to valid JSON."""
    return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in d.items()}


class _ProgressBar:
    """A tqdm bar over simulated seconds that appears only if the run lasts > 1 s.

    total: the simulated seconds, or a function giving them, called only when the
    bar appears (validating a 1,000-class scenario again costs 0.15 s)."""

    def __init__(self, total: Union[float, Callable[[], float]]):
        self.total = total
        self.t0 = time.monotonic()
        self.bar = None

    def __call__(self, t: float) -> None:
        if self.bar is None:
            if time.monotonic() - self.t0 < 1.0:
                return
            from tqdm import tqdm

            if callable(self.total):
                self.total = self.total()
            # update() redraws at most every mininterval (refresh() on every callback wrote
            # 50,000 lines into a log for a 5-minute run); a log file gets one line every 10 s.
            tty = sys.stderr.isatty()
            self.bar = tqdm(total=round(self.total), unit="sim s", desc="simulating", file=sys.stderr,
                            leave=False, dynamic_ncols=True, mininterval=0.2 if tty else 10.0)
        n = min(round(t), round(self.total))
        if n > self.bar.n:
            self.bar.update(n - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(scenario: ScenarioLike, seed: int | None = None,
        progress: Union[bool, Callable[[float], Any]] = False,
        limits: Mapping[str, Any] | None = None, trace: Mapping[str, Any] | None = None) -> Result:
    """Run a scenario in the packet-level simulator.

    scenario: a TOML file path, TOML text, or the same structure as a dict; or a
        canonical configuration (a dict with ``"format": "cclab-config/1"``, as in
        ``Result.config`` and ``validate()["config"]``), which runs as it is.
    seed: overrides the scenario's ``seed`` (every random stream derives from it).
    progress: True for a progress bar on stderr (shown for runs longer than a
        second), or a callable receiving the simulated time in seconds.
    limits: overrides the scenario's ``[limits]`` table (what a run may need before
        it is refused: ``{"memory": "16GB", "wall_time": "10h"}``; docs/engine.md).
    trace: overrides keys of the scenario's ``[trace]`` table: which flows, links and
        access controllers to trace and which links to capture, e.g.
        ``{"flows": [{"class": "long"}], "links": ["bottleneck"], "pcap": ["bottleneck"]}``
        (docs/engine.md, "Traces"); the result's ``traces`` holds what they recorded.

    Raises ScenarioError (a ValueError) naming the key path of a malformed field.
    """
    from . import _core

    if _is_config(scenario):
        if seed is not None:
            raise ScenarioError("seed: a canonical configuration carries its seed; edit its \"seed\" instead")
        if limits is not None:
            raise ScenarioError("limits: a canonical configuration carries its limits; edit its \"limits\" instead")
        if trace is not None:
            raise ScenarioError("trace: a canonical configuration carries its traces; edit its \"trace\" instead")
        try:
            raw = _core.run_config(json.dumps(dict(scenario)), progress if callable(progress) else None)
        except _core.ScenarioError as exc:
            raise ScenarioError(str(exc)) from None
        return _to_result(raw, dict(scenario))
    structure, base_dir = load_scenario(scenario)
    return _run_structure(with_trace(with_limits(structure, limits), trace), base_dir, seed, progress)


def _run_structure(structure: dict, base_dir: Path, seed: int | None,
                   progress: Union[bool, Callable[[float], Any]],
                   warn: Callable[[list], Any] | None = None) -> Result:
    """Run a loaded scenario (relative file names looked up in ``base_dir``). With a
    progress bar, ``warn`` receives validation's warnings when the bar appears (a run
    longer than a second), so that they are read before the run ends."""
    from . import _core

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ScenarioError(f"seed: expected a non-negative integer, got {seed!r}")
    if seed is not None and seed > 2**64 - 1:
        raise ScenarioError(f"seed: expected an integer from 0 to {2**64 - 1}, got {seed!r}")
    if seed is not None:  # the effective seed, so that Result.scenario (scenario.json) runs again as it ran
        structure = {**structure, "seed": int(seed)}
    text = to_json(structure)
    bar = None
    if progress is True:
        def duration() -> float:
            info = _validate_text(text, base_dir, seed)
            if warn is not None:
                warn(info["warnings"])
            return info["duration_s"]

        bar = _ProgressBar(duration)
        cb = bar
    elif callable(progress):
        cb = progress
    else:
        cb = None
    try:
        raw = _core.run_scenario(text, str(base_dir), None if seed is None else int(seed), cb)
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
    return _to_result(raw, structure)


def _is_config(scenario) -> bool:
    return isinstance(scenario, Mapping) and str(scenario.get("format", "")).startswith("cclab-config/")


def _table(columns: dict, categories: Mapping[str, list] = {}) -> pd.DataFrame:
    """A result table from the engine's columns, as they come (the engine lists them:
    a new column needs no edit here): unsigned counters as int64, whole numbers that
    may be absent as pandas' Int64, and the columns in ``categories`` (indices into a
    list of names) as categoricals of those names."""
    out = {}
    for name, col in columns.items():
        if name in categories:
            out[name] = pd.Categorical.from_codes(np.asarray(col, dtype=np.int32), categories=categories[name])
        elif isinstance(col, np.ndarray):
            out[name] = col.astype(np.int64) if col.dtype.kind == "u" else col
        elif col and all(isinstance(x, str) for x in col):
            out[name] = col
        else:  # a list of whole numbers and None
            out[name] = pd.array(col, dtype="Int64")
    return pd.DataFrame(out)


def _to_result(raw: dict, structure: dict) -> Result:
    s = raw["series"]
    series = {k: v for k, v in s.items() if k not in ("metric_names", "entity_names")}
    names = list(raw["class_names"])
    traces = Traces.from_raw(raw.get("traces"), list(raw["link_names"]), names)
    return Result(flows=_table(raw["flows"], {"class": names}),
                  links=_table(raw["links"]),
                  series=_table(series, {"metric": s["metric_names"], "name": s["entity_names"]}),
                  summary=dict(raw["summary"]), warnings=list(raw["warnings"]),
                  arrivals=_table(raw["arrivals"], {"link": raw["link_names"]}), scenario=structure,
                  config=json.loads(raw["config"]), traces=traces)
