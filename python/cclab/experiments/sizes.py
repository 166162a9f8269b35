"""An entry's sizes, declared once: quick and full.

A :class:`Size` says what one size of an entry runs: the seeds each point of its grid
starts with and the most it may take (replications until the answer is known,
:func:`cclab.experiments.runs.replicate`), the length and warm-up of its packet-level
runs and the measured settling time that justifies the warm-up, the axes of its grid,
the flow-level model's replications and length, and any other value the entry reads
(``extra``). The catalogue describes each size from the declaration
(:meth:`Size.describe`): ``cclab reproduce --list``, ``NAME.md`` and the report never
restate a size by hand. Tests run an entry at a tiny size by passing one
(``entry.run(size=...)``).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Size:
    """One size of an entry (see the module's documentation).

    seeds: seeds every point starts with (0: the entry has no seeded runs).
    max_seeds: the most seeds a point may take while a judged quantity is not known
        (0: ``seeds``, a fixed number).
    duration, warmup: seconds of each packet-level run, and of its warm-up.
    settling: the settling time (s) measured for the entry's slowest point, which the
        warm-up must exceed, and where it was measured (``settling_note``).
    axes: the grid, ``{label: values}`` in the order of the entry's loops.
    flow: the flow-level model's (replications, seconds), if the entry runs it.
    extra: other values the entry reads (``size.extra["interval"]``), described as
        ``key value``.
    """

    seeds: int = 0
    max_seeds: int = 0
    duration: float | None = None
    warmup: float | None = None
    settling: float | None = None
    settling_note: str = ""
    axes: Mapping[str, tuple] = field(default_factory=dict)
    flow: tuple[int, float] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_seeds and self.max_seeds < self.seeds:
            raise ValueError(f"max_seeds ({self.max_seeds}) is below seeds ({self.seeds})")
        if self.warmup is not None and self.duration is not None and self.warmup >= self.duration:
            raise ValueError(f"warmup ({self.warmup:g} s) must be shorter than duration ({self.duration:g} s)")
        if self.settling is not None and self.warmup is not None and self.warmup < self.settling:
            raise ValueError(f"warmup ({self.warmup:g} s) is shorter than the measured settling time "
                             f"({self.settling:g} s)")

    @property
    def most_seeds(self) -> int:
        """The most seeds a point may take."""
        return max(self.seeds, self.max_seeds)

    def axis(self, label: str) -> tuple:
        """The values of one axis of the grid."""
        try:
            return tuple(self.axes[label])
        except KeyError:
            raise KeyError(f"no axis {label!r}; axes: {', '.join(self.axes) or '(none)'}") from None

    def replace(self, **changes: Any) -> "Size":
        """A copy with some fields changed (a test's tiny size from an entry's quick one)."""
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """The size in words, e.g. ``ρ_b 0.2, 0.4, 0.6 × 5 policies × 5-20 seeds × 10,000 s
        (3,000 s warm-up); flow level 10 × 10^6 s``."""
        parts = [_axis(k, v) for k, v in self.axes.items()]
        if self.seeds:
            most = self.most_seeds
            parts.append(f"{self.seeds} seeds" if most == self.seeds else f"{self.seeds}-{most} seeds")
        head = " × ".join(parts)
        if self.duration is not None:
            head += f"{' × ' if head else ''}{_seconds(self.duration)}"
            if self.warmup:
                settled_at = f", settling {_seconds(self.settling)} measured" if self.settling is not None else ""
                head += f" ({_seconds(self.warmup)} warm-up{settled_at})"
        out = [head] if head else []
        if self.flow is not None:
            out.append(f"flow level {self.flow[0]} × {_seconds(self.flow[1])}")
        out += [f"{k} {_value(v)}" for k, v in self.extra.items()]
        return "; ".join(out)


#: Where the settling times the sizes declare come from.
SETTLING_SOURCE = "`make settling` (bench/settling.py), 2026-11-27: MSER-5 on the mean of 3 seeds' series"


def settled(what: str) -> str:
    """A size's ``settling_note``: which series of which point settled last, and how it was measured."""
    return f"{what}; {SETTLING_SOURCE}"


@dataclass(frozen=True)
class Sizes:
    """An entry's two sizes."""

    quick: Size
    full: Size

    def of(self, quick: bool) -> Size:
        return self.quick if quick else self.full


def _axis(label: str, values) -> str:
    values = tuple(values)
    if all(isinstance(v, str) for v in values):
        return f"{len(values)} {label}" if len(values) > 1 else f"{label} {values[0]}"
    return f"{label} {', '.join(_value(v) for v in values)}"


def _value(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, (tuple, list)):
            return ", ".join(_value(x) for x in v)
        return str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if v and (abs(v) >= 1e5 or abs(v) < 1e-3):
        exp = math.floor(math.log10(abs(v)))
        mant = v / 10 ** exp
        return f"10^{exp}" if mant == 1 else f"{mant:g}×10^{exp}"
    return f"{v:,.0f}" if v == int(v) and abs(v) >= 10_000 else f"{v:g}"


def _seconds(s: float) -> str:
    return f"{_value(s)} s"
