"""Loading scenarios: a TOML file, TOML text, or the same structure as a dict.

Parsing of values and validation happen in the Rust core, which reports every
error with the key path at fault (``links[2].rate: expected a rate like "10Mbps",
got "ten"``). This module only turns the input into that structure.
"""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ScenarioLike = Union[str, Path, Mapping[str, Any]]


class ScenarioError(ValueError):
    """A scenario is malformed; the message names the key path at fault."""


def load_scenario(scenario: ScenarioLike) -> tuple[dict, Path]:
    """Return ``(structure, base_dir)`` for a path, TOML text, or dict.

    ``base_dir`` is where relative file names inside the scenario (flow lists,
    empirical CDFs) are looked up: the scenario file's folder, else the current one.
    """
    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario)), Path.cwd()
    if isinstance(scenario, Path) or (isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario):
        path = Path(scenario)
        return read_toml_file(path, "scenario"), path.resolve().parent
    if isinstance(scenario, str):
        try:
            return tomllib.loads(scenario), Path.cwd()
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"invalid TOML: {exc}") from None
    raise ScenarioError(f"expected a scenario path, TOML text or dict, got {type(scenario).__name__}")


def read_toml_file(path: Path, kind: str = "scenario") -> dict:
    """A TOML file's contents; ScenarioError naming the file if it is absent, a folder,
    not text or not TOML (``kind`` says what the file should be)."""
    if not path.exists():
        raise ScenarioError(f"{path}: no such {kind} file")
    if path.is_dir():
        raise ScenarioError(f"{path}: is a folder, expected a {kind} TOML file")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file") from None


def _jsonable(obj: Any) -> Any:
    # numpy scalars and the like, which users put into dicts naturally.
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise ScenarioError(f"cannot use a value of type {type(obj).__name__} in a scenario: {obj!r}")


def _finite(obj: Any) -> Any:
    """The structure with non-finite floats written as "nan" / "inf" / "-inf", which
    JSON cannot carry and the core rejects by key path ("expected a finite number")."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if obj != obj else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Mapping):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(structure: Mapping[str, Any]) -> str:
    """Serialise a scenario structure for the Rust core (deterministic key order)."""
    return json.dumps(_finite(structure), default=_jsonable, sort_keys=True, allow_nan=False)
