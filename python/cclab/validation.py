"""Checking a scenario without running it: ``cclab.validate(scenario)``.

Kept apart from :mod:`cclab.api` so that validating imports neither pandas nor
numpy (their import costs more than validating a 1,000-link scenario).
"""
from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any, Mapping

from .scenario import ScenarioError, ScenarioLike, load_scenario, to_json


def _over(structure: dict, key: str, table: Mapping[str, Any] | None, example: str) -> dict:
    """The scenario with ``table`` written key by key over its table ``key``."""
    if table is None:
        return structure
    if not isinstance(table, Mapping):
        raise ScenarioError(f"{key}: expected a table like {example}, got {type(table).__name__}")
    own = structure.get(key)
    merged = dict(own) if isinstance(own, Mapping) else {}
    merged.update(table)
    return {**structure, key: merged}


def with_limits(structure: dict, limits: Mapping[str, Any] | None) -> dict:
    """The scenario with ``limits`` written over its ``[limits]`` table."""
    return _over(structure, "limits", limits, '{"memory": "16GB", "wall_time": "10h"}')


def with_trace(structure: dict, trace: Mapping[str, Any] | None) -> dict:
    """The scenario with ``trace`` written over its ``[trace]`` table (key by key)."""
    return _over(structure, "trace", trace, '{"flows": [{"class": "long"}], "links": ["bottleneck"]}')


def validate(scenario: ScenarioLike, seed: int | None = None, limits: Mapping[str, Any] | None = None,
             trace: Mapping[str, Any] | None = None) -> dict:
    """Check a scenario without running it.

    Returns ``{"warnings": [...], "duration_s", "warmup_s", "seed", "config",
    "estimate"}``; raises ScenarioError naming the key path of the first
    malformed field, or of what would make the run exceed a limit.
    ``config`` is the canonical configuration (a dict): nodes; links, both
    directions of a duplex link, with rates in bit/s and delays in ns; classes with
    endpoints and routes as indices, arrival process, transport and TCP
    parameters; the effective seed. It is what another simulator needs to run the
    same scenario, what a stored result is keyed by, and ``cclab.run(config)``
    runs it as it is.
    ``estimate`` is what the run will need: ``flows``, ``packets``, ``events``,
    ``wall_time_s`` (at 10 million events per second), ``series_rows``,
    ``arrival_rows``, ``trace_rows``, ``pcap_bytes``, ``memory_bytes``, and the
    limits they were checked against (``limit_memory_bytes``, ``limit_wall_time_s``).
    limits: overrides the scenario's ``[limits]`` table, e.g.
        ``{"memory": "16GB", "wall_time": "10h"}`` (docs/engine.md).
    trace: overrides keys of the scenario's ``[trace]`` table, e.g.
        ``{"flows": [{"class": "long"}], "links": ["bottleneck"]}`` (docs/engine.md).
    """
    structure, base_dir = load_scenario(scenario)
    return validate_text(to_json(with_trace(with_limits(structure, limits), trace)), base_dir, seed)


def validate_text(text: str, base_dir: Path, seed: int | None = None) -> dict:
    """Validate a scenario already turned into JSON text."""
    from . import _core

    if seed is not None and (isinstance(seed, bool) or not hasattr(seed, "__index__") or seed < 0):
        raise ScenarioError(f"seed: expected a non-negative integer, got {seed!r}")
    try:
        info = dict(_core.validate_scenario(text, str(base_dir), None if seed is None else int(seed)))
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None
    except OverflowError:
        raise ScenarioError(f"seed: expected an integer from 0 to {2**64 - 1}, got {seed!r}") from None
    # The configuration of a large scenario is a million small objects; the cyclic
    # collector would walk them again and again while they are made (none are cycles).
    collecting = gc.isenabled()
    gc.disable()
    try:
        info["config"] = json.loads(info["config"])
    finally:
        if collecting:
            gc.enable()
    info["estimate"] = dict(info["estimate"])
    return info
