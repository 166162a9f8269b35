"""Ablations: move one factor at a time, declared once on an entry.

An entry's claims rest on choices the paper leaves open or states loosely: the TCP the
runs use, the implementation of a lower-than-best-effort protocol, the buffer, the
length of the runs. An :class:`Ablation` names those factors and their levels; running
it (``cclab reproduce NAME --ablate``, :func:`run_ablation`) runs the entry as
declared (the *baseline*) and then once per level of each factor, that factor alone
changed, and tabulates every claim's numbers and verdict side by side
(``NAME-ablation.md`` and ``.csv``). Nothing in the entry changes: a level acts on every
packet-level scenario the entry runs (:meth:`Level.apply`, called by
:func:`cclab.experiments.runs.run_points` through :meth:`Context.adjust`) and on the
entry's size; the runs go through the same store, so the baseline's runs are reused
and a level's runs are kept for the next time.

Declared on an entry::

    ABLATION = Ablation((
        Factor("TCP preset", (Level("ns-2", {"tcp.preset": "ns2"}),)),
        Factor("LBE implementation", (Level("ns-2 TCP-LP", {"traffic[protocol=tcp_lp].variant": "ns2"}),)),
        Factor("buffer (packets)", (Level("50", {"links[*].queue.limit": 50}),
                                    Level("200", {"links[*].queue.limit": 200}))),
        Factor("run length", (Level("twice", size=lambda s: s.replace(duration=2 * s.duration)),)),
    ))

    @reproduction("fairbat-fig2", ..., sizes=FIG2_SIZES, ablation=ABLATION)

Key paths are those of ``cclab.sweep`` (``links[0].rate``, ``traffic[web].load``) and
two list selectors: ``[*]`` every item, ``[key=value]`` the items whose ``key`` has that
value (a scenario without such an item is left as it is). A level that changes no
scenario of the entry at all is an error: it would report the baseline under another
name.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..scenario import set_path


@dataclass(frozen=True)
class Level:
    """One level of a factor: ``set``, key paths and their values on every packet-level
    scenario the entry runs; ``change``, a function of a scenario (dict) returning the
    changed scenario, for what key paths cannot say; ``size``, the entry's size changed
    (a function of the :class:`~cclab.experiments.sizes.Size`, or fields to replace)."""

    label: str
    set: Mapping[str, Any] = field(default_factory=dict)
    change: Callable[[dict], dict] | None = None
    size: Callable[[Any], Any] | Mapping[str, Any] | None = None

    def apply(self, scenario: Mapping[str, Any]) -> dict:
        """The scenario with this level's changes."""
        out = copy.deepcopy(dict(scenario))
        for path, value in self.set.items():
            for concrete in expand_path(out, path):
                set_path(out, concrete, value)
        if self.change is not None:
            out = dict(self.change(out))
        return out

    def resize(self, size):
        """The entry's size at this level."""
        if self.size is None:
            return size
        if callable(self.size):
            return self.size(size)
        return size.replace(**dict(self.size))


@dataclass(frozen=True)
class Factor:
    """A factor and its levels (each against the baseline, the others unchanged)."""

    name: str
    levels: Sequence[Level]


@dataclass(frozen=True)
class Ablation:
    """An entry's factors, moved one at a time."""

    factors: Sequence[Factor]
    note: str = ""

    def cells(self) -> list[tuple[str, Level]]:
        """Every (factor, level), in order."""
        return [(f.name, lv) for f in self.factors for lv in f.levels]


_SELECT = re.compile(r"\[(\*|[A-Za-z_][A-Za-z0-9_]*=[^\]]*)\]")


def expand_path(scenario: Mapping[str, Any], path: str) -> list[str]:
    """The concrete key paths a path with ``[*]`` or ``[key=value]`` selectors names in
    this scenario (by index); a path without selectors is itself."""
    m = _SELECT.search(path)
    if m is None:
        return [path]
    head, tail = path[:m.start()], path[m.end():]
    node: Any = scenario
    for part in filter(None, re.split(r"\.|\[|\]", head)):
        if isinstance(node, list):
            node = _item(node, part)
        elif isinstance(node, dict):
            node = node.get(part)
        if node is None:
            return []
    if not isinstance(node, list):
        return []
    sel = m.group(1)
    out: list[str] = []
    for i, item in enumerate(node):
        if sel != "*":
            key, _, want = sel.partition("=")
            if not isinstance(item, dict) or str(item.get(key)) != want.strip('"'):
                continue
        out += expand_path(scenario, f"{head}[{i}]{tail}")
    return out


def _item(items: list, sel: str) -> Any:
    if sel.isdigit():
        i = int(sel)
        return items[i] if i < len(items) else None
    return next((x for x in items if isinstance(x, dict) and x.get("name") == sel), None)


def run_ablation(entry, ablation: Ablation, *, quick: bool = True, out: str | Path = "results/reproduce",
                 seed: int = 1, progress: bool = True, store=None, cluster=None, workers=None,
                 only: Sequence[str] = ()) -> tuple[pd.DataFrame, Path]:
    """Run ``entry`` at its size (the baseline), then at each level of each factor (or
    of the factors named in ``only``), and write ``NAME-ablation.csv`` (one row per
    claim and level: numbers, seeds, verdict) and ``NAME-ablation.md`` (the claims
    down, the levels across). Returns the table and the Markdown's path."""
    from .catalogue import Context

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base_size = entry.sizes.of(quick) if entry.sizes is not None else None
    cells = [("baseline", Level("as declared"))] + [c for c in ablation.cells() if not only or c[0] in only]
    rows = []
    for factor, level in cells:
        size = level.resize(base_size) if base_size is not None else None
        ctx = Context(quick=quick, out=out / f"{entry.name}-ablation", seed=seed, progress=progress, store=store,
                      cluster=cluster, workers=workers, name=entry.name, size=size,
                      variant=None if factor == "baseline" else level)
        ctx.out.mkdir(parents=True, exist_ok=True)
        outcome = entry.func(ctx)
        if ctx.variant is not None and (level.set or level.change) and ctx.variant_changed == [0]:
            raise ValueError(f"{entry.name}: ablation level {factor}: {level.label} changed none of the entry's "
                             "scenarios")
        if not outcome.claims:
            raise ValueError(f"{entry.name} returns no claims: an ablation compares claims")
        for c in outcome.claims:
            rows.append({"factor": factor, "level": level.label, "claim": c.text, "ours": c.shown(),
                         "seeds": c.seeds(), "verdict": c.verdict()})
    table = pd.DataFrame(rows)
    table.to_csv(out / f"{entry.name}-ablation.csv", index=False)
    md = out / f"{entry.name}-ablation.md"
    md.write_text(ablation_markdown(entry, ablation, table, quick))
    return table, md


def ablation_markdown(entry, ablation: Ablation, table: pd.DataFrame, quick: bool) -> str:
    """The claims down, the levels across: each cell the verdict and our numbers."""
    cols = list(dict.fromkeys(zip(table["factor"], table["level"])))
    head = "| the paper says | " + " | ".join(f"{f}: {lv}" if f != "baseline" else "baseline" for f, lv in cols)
    lines = [head + " |", "|---" * (len(cols) + 1) + "|"]
    for claim, g in table.groupby("claim", sort=False):
        cell = {(r.factor, r.level): f"{r.verdict}: {r.ours} ({r.seeds} seeds)" for r in g.itertuples()}
        lines.append(f"| {claim} | " + " | ".join(cell.get(c, "") for c in cols) + " |")
    size = "quick" if quick else "full"
    note = f"\n\n{ablation.note.strip()}" if ablation.note else ""
    return (f"# {entry.name}: one factor at a time ({size} size)\n\nEach column changes one factor of the "
            f"baseline (the entry as declared: {entry.size_text(quick)}); the others stay as declared.{note}\n\n"
            + "\n".join(lines) + "\n")
