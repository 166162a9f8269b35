"""Loading scenarios: a TOML file, TOML text, or the same structure as a dict.

Parsing of values and validation happen in the Rust core, which reports every
error with the key path at fault (``links[2].rate: expected a rate like "10Mbps",
got "ten"``). This module only turns the input into that structure.
"""
from __future__ import annotations

import copy
import datetime
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


#: A structure nested deeper than Python's parser and copier recurse (a thousand levels).
TOO_DEEP = "scenario: arrays or tables nested too deeply (no scenario needs more than a few levels)"


def load_scenario(scenario: ScenarioLike) -> tuple[dict, Path]:
    """Return ``(structure, base_dir)`` for a path, TOML text, or dict.

    ``base_dir`` is where relative file names inside the scenario (flow lists,
    empirical CDFs) are looked up: the scenario file's folder, else the current one.
    """
    if isinstance(scenario, Mapping):
        try:
            return copy.deepcopy(dict(scenario)), Path.cwd()
        except RecursionError:
            raise ScenarioError(TOO_DEEP) from None
    if isinstance(scenario, Path):
        return read_toml_file(scenario, "scenario"), scenario.resolve().parent
    if isinstance(scenario, str):
        # An existing file is a path whatever its name holds ("runs/a=1.toml"); other
        # text is TOML if it has a newline or an "=", else a path (which then is missing).
        path = Path(scenario)
        if "\n" not in scenario and ("=" not in scenario or _is_file(path)):
            return read_toml_file(path, "scenario"), path.resolve().parent
        try:
            return parse_toml(scenario), Path.cwd()
        except ScenarioError as exc:
            if "\n" not in scenario:
                raise ScenarioError(f"{scenario}: neither an existing scenario file nor valid TOML text "
                                    f"({str(exc).removeprefix('invalid TOML: ')})") from None
            raise
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
    if not path.is_file():  # a device or a pipe (/dev/zero never ends): read nothing
        raise ScenarioError(f"{path}: not a regular file, expected a {kind} TOML file")
    try:
        return parse_toml(path.read_text())
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file") from None


def parse_toml(text: str) -> dict:
    """TOML text as a structure, read by the engine's parser (Python's takes seconds on
    a 65,538-link scenario); ScenarioError for invalid TOML, a date or time (naming its
    key: no scenario value is one) or nesting beyond the parser's recursion limit.
    Non-finite floats come as "nan" / "inf" / "-inf", which the core rejects by key."""
    from . import _core

    try:
        return json.loads(_core.toml_to_json(text))
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None


def _plain(obj: Any, where: str = "") -> Any:
    """The structure as JSON can carry it: non-finite floats written as "nan" / "inf" /
    "-inf" (which the core rejects by key path, "expected a finite number"), numpy
    scalars as Python numbers, paths as text. A value of any other type (a TOML date or
    time, a set, an object) is refused naming its key path."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else ("nan" if obj != obj else ("inf" if obj > 0 else "-inf"))
    if obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, Mapping):
        return {k: _plain(v, f"{where}.{k}" if where else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item) and not isinstance(obj, (datetime.date, datetime.time)):
        return _plain(obj.item(), where)  # numpy scalars, which users put into dicts naturally
    what = ("a TOML date or time" if isinstance(obj, (datetime.date, datetime.time))
            else f"a value of type {type(obj).__name__}")
    raise ScenarioError(f"{where or 'scenario'}: {what} ({obj}) is not a scenario value "
                        f"(durations and rates are strings, like \"25ms\" or \"10Mbps\")")


def to_json(structure: Mapping[str, Any]) -> str:
    """Serialise a scenario structure for the Rust core (deterministic key order). Plain
    structures go straight to the JSON encoder; one it cannot carry as it is (a
    non-finite float, a numpy scalar, a date) is walked by `_plain`."""
    try:
        try:
            return json.dumps(structure, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            return json.dumps(_plain(structure), sort_keys=True, allow_nan=False)
    except RecursionError:
        raise ScenarioError(TOO_DEEP) from None


_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-]*)((?:\[[^\[\]]+\])*)$")


def split_key_path(path: str) -> list[tuple[str, list[str]]]:
    if not isinstance(path, str) or not path:
        raise ScenarioError(f"expected a key path like \"traffic[0].load\", got {path!r}")
    out = []
    for part in path.split("."):
        m = _SEGMENT.match(part)
        if not m:
            raise ScenarioError(f"{path}: malformed key path at {part!r} (expected name, name[0] or name[label])")
        out.append((m.group(1), re.findall(r"\[([^\[\]]+)\]", m.group(2))))
    return out


def _pick(items: list, sel: str, where: str) -> int:
    if re.fullmatch(r"-?\d+", sel):
        i = int(sel)
        if not -len(items) <= i < len(items):
            raise ScenarioError(f"{where}[{sel}]: index out of range (the list has {len(items)} items)")
        return i % len(items)
    names = []
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            label = item.get("name") or (f"{item.get('from')}->{item.get('to')}" if "from" in item else None)
            names.append(label)
            if label == sel:
                return i
    known = ", ".join(str(n) for n in names if n) or "(none named)"
    raise ScenarioError(f"{where}[{sel}]: no item named {sel!r} (names: {known})")


def set_path(structure: dict, path: str, value: Any) -> None:
    """Set ``value`` at a key path of a scenario structure (tables created as needed)."""
    node: Any = structure
    where = ""
    segs = split_key_path(path)
    for n, (name, sels) in enumerate(segs):
        last = n == len(segs) - 1 and not sels
        where = f"{where}.{name}" if where else name
        if not isinstance(node, dict):
            raise ScenarioError(f"{path}: {where.rsplit('.', 1)[0]} is not a table")
        if last:
            node[name] = copy.deepcopy(value)
            return
        if sels:
            if not isinstance(node.get(name), list):
                raise ScenarioError(f"{path}: {where} is not a list in the scenario")
            node = node[name]
            for k, sel in enumerate(sels):
                i = _pick(node, sel, where)
                where = f"{where}[{sel}]"
                if k == len(sels) - 1 and n == len(segs) - 1:
                    node[i] = copy.deepcopy(value)
                    return
                node = node[i]
        else:
            node = node.setdefault(name, {})


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
    except (tomllib.TOMLDecodeError, RecursionError):
        return key, value


def apply_overrides(structure: dict, overrides: list[tuple[str, Any]]) -> dict:
    """A copy of the scenario (itself if there are none) with each ``(key path, value)`` set (`set_path`: an item of
    a list by index or by name, ``traffic[short].load``; missing tables created, as
    ``limits.wall_time`` without a ``[limits]`` table). A malformed path, an index past
    a list's end or a step into a value that is not a table is a ScenarioError naming
    the path; an unknown final key is refused by the core's validation, naming it too."""
    if not overrides:  # a 65,538-link scenario takes a second to copy
        return structure
    out = copy.deepcopy(structure)
    for key, value in overrides:
        try:
            set_path(out, key, value)
        except ScenarioError as exc:
            raise ScenarioError(f"--set {exc}") from None
    return out
