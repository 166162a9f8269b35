"""Loading scenarios: a TOML file, TOML text, or the same structure as a dict.

Parsing of values and validation happen in the Rust core, which reports every
error with the key path at fault (``links[2].rate: expected a rate like "10Mbps",
got "ten"``). This module only turns the input into that structure.
"""
from __future__ import annotations

import copy
import json
import math
import re
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
    if isinstance(scenario, Path):
        return read_toml_file(scenario, "scenario"), scenario.resolve().parent
    if isinstance(scenario, str):
        # An existing file is a path whatever its name holds ("runs/a=1.toml"); other
        # text is TOML if it has a newline or an "=", else a path (which then is missing).
        path = Path(scenario)
        if "\n" not in scenario and ("=" not in scenario or _is_file(path)):
            return read_toml_file(path, "scenario"), path.resolve().parent
        try:
            return tomllib.loads(scenario), Path.cwd()
        except tomllib.TOMLDecodeError as exc:
            if "\n" not in scenario:
                raise ScenarioError(f"{scenario}: neither an existing scenario file nor valid TOML text "
                                    f"({exc})") from None
            raise ScenarioError(f"invalid TOML: {exc}") from None
    raise ScenarioError(f"expected a scenario path, TOML text or dict, got {type(scenario).__name__}")


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        return False


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


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")


def parse_override(text: str) -> tuple[str, Any]:
    """``"links[0].rate=10Mbps"`` -> ``("links[0].rate", "10Mbps")``: the value is read
    as a TOML value (``0.5``, ``true``, ``"x"``, ``[1, 2]``, ``{type = "red"}``), else
    kept as a string (``10Mbps``, ``25ms``, ``2h``)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"--set {text!r}: expected KEY=VALUE, e.g. links[0].rate=10Mbps")
    value = value.strip()
    try:
        return key, tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return key, value


def apply_overrides(structure: dict, overrides: list[tuple[str, Any]]) -> dict:
    """A copy of the scenario with each ``(key.path, value)`` set: dotted table keys and
    list indices (``traffic[1].cc.target``); missing tables on the way are created
    (``limits.wall_time`` without a ``[limits]`` table). A malformed path, an index
    past a list's end, or a step into a value that is not a table is a ScenarioError
    naming the key; an unknown final key is refused by the core's validation, which
    names it too."""
    out = copy.deepcopy(structure)
    for key, value in overrides:
        steps: list[Union[str, int]] = []
        for part in key.split("."):
            m = _SEGMENT.match(part)
            if not m:
                raise ScenarioError(f"--set {key}: expected a key path like links[0].rate or limits.wall_time")
            steps.append(m.group(1))
            steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
        node: Any = out
        done = ""
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            where = done or "the scenario"
            if isinstance(step, int):
                if not isinstance(node, list):
                    raise ScenarioError(f"{done}: not a list, cannot take [{step}] (--set {key})")
                if step >= len(node):
                    raise ScenarioError(f"{done}[{step}]: {done} has {len(node)} entr{'y' if len(node) == 1 else 'ies'} (--set {key})")
                done = f"{done}[{step}]"
            else:
                if not isinstance(node, dict):
                    raise ScenarioError(f"{where}: not a table, cannot set {step!r} in it (--set {key})")
                done = f"{done}.{step}" if done else step
                if not last and step not in node:
                    node[step] = [] if isinstance(steps[i + 1], int) else {}
            if last:
                node[step] = value
            else:
                node = node[step]
    return out
