"""A sweep's definition and its expansion into runs.

A sweep is a base scenario, overrides applied to every run (``set``), a grid of
overrides (every combination), an explicit list of override sets (``points``,
each crossed with the grid), and seeds. Overrides are addressed by key path, as
error messages name them: ``duration``, ``links[0].queue.limit``,
``traffic[short].load`` (an item of a list by index or by its ``name``),
``tcp.sack`` (tables are created as needed).

A sweep file (TOML)::

    name = "load"
    scenario = "../background/single-link.toml"   # relative to this file, or an inline [scenario] table
    seeds = 5                                      # seeds 1..5; or a list, e.g. [1, 7, 9]
    [set]
    duration = "300s"
    [grid]
    "traffic[short].load" = [0.3, 0.5, 0.7]
    "links[bottleneck].queue.limit" = ["40ms", "80ms"]

Expansion validates every run with the engine before any work is done: a bad
value is an error naming the run's parameters and the key at fault.
"""
from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..scenario import ScenarioError, ScenarioLike, load_scenario, read_toml_file, set_path, to_json
from ..scenario import split_key_path as _split

_SWEEP_KEYS = ("name", "description", "scenario", "seeds", "set", "grid", "points")


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its place, parameters, seed, canonical configuration and key."""

    index: int
    params: dict
    seed: int
    config: str
    key: str
    name: str


def _seeds(value: Any, where: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, bool):
        raise ScenarioError(f"{where}: expected a number of seeds or a list of seeds, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ScenarioError(f"{where}: expected at least one seed, got {value}")
        return list(range(1, value + 1))
    if isinstance(value, range):
        value = list(value)
    if isinstance(value, (list, tuple)) and value:
        out = []
        for s in value:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ScenarioError(f"{where}: expected non-negative whole seeds, got {s!r}")
            out.append(int(s))
        if len(set(out)) != len(out):
            raise ScenarioError(f"{where}: a seed is repeated in {out}")
        return out
    raise ScenarioError(f"{where}: expected a number of seeds or a non-empty list of seeds, got {value!r}")


def _param_value(v: Any) -> Any:
    """A parameter as a table cell: scalars as they are, tables and lists as compact JSON."""
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return v


@dataclass
class Sweep:
    """A sweep: base scenario, fixed overrides, grid, explicit points and seeds."""

    scenario: dict
    name: str = "sweep"
    base_dir: Path = field(default_factory=Path.cwd)
    set: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    points: list = field(default_factory=list)
    seeds: list = field(default_factory=list)
    description: str = ""

    @classmethod
    def build(cls, scenario: ScenarioLike, *, grid: Mapping | None = None, points: Sequence[Mapping] | None = None,
              set: Mapping | None = None, seeds: Any = None, name: str | None = None) -> "Sweep":
        """A sweep from Python values (see :func:`cclab.sweep`)."""
        structure, base_dir = load_scenario(scenario)
        sw = cls(scenario=structure, base_dir=base_dir, set=dict(set or {}), grid={}, points=[],
                 seeds=_seeds(seeds, "seeds"), name=name or str(structure.get("name") or "sweep"))
        for k, vals in (grid or {}).items():
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
                raise ScenarioError(f"grid.{k}: expected a list of values, got {vals!r}")
            vals = list(vals)
            if not vals:
                raise ScenarioError(f"grid.{k}: expected at least one value")
            _split(k)
            sw.grid[k] = vals
        for i, p in enumerate(points or []):
            if not isinstance(p, Mapping) or not p:
                raise ScenarioError(f"points[{i}]: expected a table of key path = value, got {p!r}")
            for k in p:
                _split(k)
            sw.points.append(dict(p))
        for k in sw.set:
            _split(k)
        for k in list(sw.set) + list(sw.grid) + [k for p in sw.points for k in p]:
            if k == "seed":
                raise ScenarioError(f"{k}: give seeds with `seeds`, not as an override")
        return sw

    @classmethod
    def from_file(cls, path: str | Path) -> "Sweep":
        """Read a sweep file (TOML); errors name the file and key."""
        path = Path(path)
        doc = read_toml_file(path, "sweep")
        for k in doc:
            if k not in _SWEEP_KEYS:
                raise ScenarioError(f"{path}: {k}: unknown key; a sweep file takes: {', '.join(_SWEEP_KEYS)}")
        if "scenario" not in doc:
            raise ScenarioError(f"{path}: scenario: missing (a scenario file path or an inline [scenario] table)")
        sc = doc["scenario"]
        if isinstance(sc, str):
            base = (path.parent / sc)
            if not base.is_file():
                raise ScenarioError(f"{path}: scenario: no such scenario file {base}")
            scenario: Any = base
        elif isinstance(sc, dict):
            scenario = sc
        else:
            raise ScenarioError(f"{path}: scenario: expected a file path or a table, got {sc!r}")
        for k, kind in (("set", dict), ("grid", dict), ("points", list)):
            if k in doc and not isinstance(doc[k], kind):
                raise ScenarioError(f"{path}: {k}: expected a {'table' if kind is dict else 'list of tables'}")
        try:
            sw = cls.build(scenario, grid=doc.get("grid"), points=doc.get("points"), set=doc.get("set"),
                           seeds=doc.get("seeds"), name=doc.get("name") or path.stem)
        except ScenarioError as exc:
            raise ScenarioError(f"{path}: {exc}") from None
        if isinstance(sc, dict):
            sw.base_dir = path.resolve().parent
        sw.description = str(doc.get("description", ""))
        return sw

    def to_json(self) -> str:
        """The definition as JSON (stored with the sweep)."""
        # keys in the order written: the order of the parameters is the tables' column order
        return json.dumps({"name": self.name, "description": self.description, "scenario": self.scenario,
                           "set": self.set, "grid": self.grid, "points": self.points, "seeds": self.seeds},
                          default=str)

    def param_names(self) -> list[str]:
        """The swept key paths, points' first then the grid's, in order of appearance."""
        names: list[str] = []
        for p in self.points:
            names += [k for k in p if k not in names]
        names += [k for k in self.grid if k not in names]
        return names

    def combinations(self) -> list[dict]:
        """Every parameter set: each point crossed with every grid combination."""
        keys = list(self.grid)
        combos = [dict(zip(keys, vals)) for vals in itertools.product(*(self.grid[k] for k in keys))]
        pts = self.points or [{}]
        return [{**p, **c} for p in pts for c in combos]

    def __len__(self) -> int:
        return len(self.combinations()) * max(1, len(self.seeds))

    def expand(self, engine: str) -> list[Run]:
        """Every run, validated by the engine, with its canonical configuration and key."""
        return list(self.iter_runs(engine))

    def iter_runs(self, engine: str) -> Iterator[Run]:
        """The runs one by one (see :meth:`expand`), so that a caller may keep only some
        configurations (a flow list is inside each)."""
        from .. import _core
        from .store import run_key

        base = copy.deepcopy(self.scenario)
        for k, v in self.set.items():
            try:
                set_path(base, k, v)
            except ScenarioError as exc:
                raise ScenarioError(f"set: {exc}") from None
        index = 0
        seeds = self.seeds or [None]
        base_dir = str(self.base_dir)
        for params in self.combinations():
            sc = copy.deepcopy(base)
            for k, v in params.items():
                try:
                    set_path(sc, k, v)
                except ScenarioError as exc:
                    raise ScenarioError(f"sweep point {_show(params)}: {exc}") from None
            text = to_json(sc)
            for seed in seeds:
                try:
                    info = _core.validate_scenario(text, base_dir, seed)
                except _core.ScenarioError as exc:
                    at = _show(params) + ("" if seed is None else f", seed {seed}")
                    raise ScenarioError(f"sweep point {at}: {exc}") from None
                cfg = info["config"]
                s = int(info["seed"])
                yield Run(index, {k: _param_value(v) for k, v in params.items()}, s, cfg, run_key(cfg, s, engine),
                          str(sc.get("name", "scenario")))
                index += 1


def _show(params: Mapping) -> str:
    return "{" + ", ".join(f"{k} = {json.dumps(v, default=str)}" for k, v in params.items()) + "}" if params \
        else "(base scenario)"
