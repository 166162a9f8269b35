"""The ready scenarios shipped in ``scenarios/`` (one folder per paper):
``cclab scenarios``.

Where they are found, first match wins:

1. ``$CCLAB_SCENARIOS``, a folder laid out like ``scenarios/``;
2. the checkout the package runs from: ``scenarios/`` beside ``python/cclab``
   (what ``make install`` gives: an editable install, so the ``cclab`` command of
   the checkout's venv finds them from any working folder).

A wheel built from the checkout does not carry them (maturin would put them at
the top of site-packages); with such an install set ``CCLAB_SCENARIOS``.

Each file's one-line description is the first line of its leading comment block;
a file that is a sweep (it has a ``scenario`` key naming the scenario it varies)
is listed with ``cclab sweep``, a testbed scenario (a ``[testbed]`` table beside an
ordinary scenario) with ``cclab testbed run``, every other one with ``cclab run``.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "CCLAB_SCENARIOS"


@dataclass
class Entry:
    paper: str         # the folder: background, fairbat, ...
    name: str          # the file's stem
    path: Path
    description: str
    kind: str          # "run", "sweep" or "testbed"

    def command(self, shown: Path | str) -> str:
        return f"cclab {'testbed run' if self.kind == 'testbed' else self.kind} {shown}"


def scenarios_dir() -> Path:
    """The folder of ready scenarios; FileNotFoundError saying where it looked."""
    env = os.environ.get(ENV)
    if env:
        p = Path(env)
        if not p.is_dir():
            raise FileNotFoundError(f"{ENV}={env}: no such folder")
        return p
    here = Path(__file__).resolve().parents[3] / "scenarios"  # python/cclab/inspect -> the checkout
    if here.is_dir():
        return here
    raise FileNotFoundError(f"no scenarios folder: not running from a checkout ({here} does not exist); "
                            f"set {ENV} to the scenarios/ folder of a cclab checkout")


def description(path: Path) -> str:
    """The first line of the file's leading comment block ("" if it has none)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                return s.lstrip("#").strip()
            return ""
    return ""


def _kind(path: Path) -> str:
    """"sweep", "testbed" or "run": what the file is, from its top-level keys."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return "run"
    if isinstance(doc.get("scenario"), str):
        return "sweep"
    return "testbed" if isinstance(doc.get("testbed"), dict) else "run"


def entries(root: Path | None = None) -> list[Entry]:
    """Every scenario and sweep file under the folder, by paper then name."""
    root = scenarios_dir() if root is None else root
    out = []
    for p in sorted(root.glob("*/*.toml")):
        out.append(Entry(paper=p.parent.name, name=p.stem, path=p, description=description(p),
                         kind=_kind(p)))
    return out


def shown_path(p: Path) -> str:
    """The path relative to the working folder when it is below it, else absolute."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p.resolve())
