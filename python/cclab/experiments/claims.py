"""What an entry checks against its paper, and the one vocabulary of its verdicts.

A claim is a statement of the paper made checkable: :class:`Greater` (an ordering,
``a > b``), :class:`Near` (a printed number: ``|a − target| ≤ tol``), :class:`Within`
(a range, one-sided or not) and :class:`AllOf` (every part). Its quantities are
:class:`Estimate` s: values per seed, so that two quantities of the same seeds compare
seed by seed (a paired difference), with their 95% Student-t interval.

Every claim says one of three things (:func:`Claim.verdict`):

* ``holds``: the means are as the paper says (inside the tolerance);
* ``within CI``: they are not, but the 95% interval reaches what the paper says;
* ``fails``: the opposite is significant at 95%.

**Deferred work.** An estimate of a policy that holds chunks back (access control)
carries its *carried/offered* ratio (``Estimate.carried``): what the policy delivered
over what arrived. Where that is below :data:`CARRIED_MIN` the chunks it did not send
are work deferred past the end of the run, and a web-delay saving measured then is not
a saving: a claim resting on such an estimate *fails* (its whole interval below the
bound) or is at best *within CI* (the interval reaches it), whatever its ordering.

**Known.** :func:`Claim.known` says whether more seeds could still change what the
claim says: the replications of an entry (:func:`cclab.experiments.runs.replicate`)
add seeds to the points of every claim not yet known, up to the size's maximum. A
number with a tolerance is known when its 95% interval is narrower than half the
tolerance (:data:`PRECISION`); an ordering when the interval of the difference
excludes zero or is narrower than half its resolution; a one-sided bound when the
interval lies on one side of it.

:func:`claims_table`, :func:`judge` and :func:`mark_figure` are the one Markdown and
plot epilogue of every entry.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ..stats import mean_ci

HOLDS, WITHIN, FAILS = "holds", "within CI", "fails"
#: The verdict vocabulary, best first.
VERDICTS = (HOLDS, WITHIN, FAILS)
#: The smallest carried/offered ratio of an access-controlled policy on which a verdict
#: may rest (issue 25): below it the policy defers work past the run's end.
CARRIED_MIN = 0.98
#: A quantity with a tolerance is known when its 95% interval is at most this fraction of
#: the tolerance wide (issue 25: "narrower than half its tolerance").
PRECISION = 0.5


@dataclass(frozen=True)
class Estimate:
    """A judged quantity: its value per seed, their mean and 95% half-width.

    values: ``(seed, value)`` pairs (finite values only count); a constant has none
        and its ``value``.
    groups: the replication groups its runs belong to (which points get more seeds).
    carried: for a policy that holds chunks back, its carried/offered ratio at the
        same point (see the module's documentation).
    fmt: how its numbers are written.
    """

    values: tuple[tuple[int, float], ...] = ()
    value: float = math.nan
    groups: frozenset = frozenset()
    carried: "Estimate | None" = None
    fmt: str = "{:.2f}"

    @classmethod
    def of(cls, values: Mapping[int, float] | Iterable[tuple[int, float]], *, groups: Iterable = (),
           carried: "Estimate | None" = None, fmt: str = "{:.2f}") -> "Estimate":
        """From ``{seed: value}`` or ``(seed, value)`` pairs; non-finite values are dropped."""
        items = values.items() if isinstance(values, Mapping) else values
        vals = tuple(sorted((int(s), float(v)) for s, v in items if v is not None and math.isfinite(float(v))))
        return cls(values=vals, groups=frozenset(groups), carried=carried, fmt=fmt)

    @classmethod
    def const(cls, x: float, fmt: str = "{:g}") -> "Estimate":
        """A number that is not measured (a paper's value, a bound)."""
        return cls(value=float(x), fmt=fmt)

    @property
    def is_const(self) -> bool:
        return not self.values and not math.isnan(self.value)

    @property
    def n(self) -> int:
        """Seeds with a finite value."""
        return len(self.values)

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(s for s, _ in self.values)

    @property
    def mean(self) -> float:
        return self.value if not self.values else mean_ci([v for _, v in self.values])[0]

    @property
    def half(self) -> float:
        """The 95% half-width (0 for a constant, NaN with fewer than two seeds)."""
        if self.is_const:
            return 0.0
        return mean_ci([v for _, v in self.values])[1] if self.values else math.nan

    def __sub__(self, other: "Estimate") -> "Estimate":
        """The difference, seed by seed over the seeds both have (a paired difference;
        for independent quantities of equal seeds it estimates the same variance)."""
        if other.is_const:
            return Estimate(tuple((s, v - other.value) for s, v in self.values), self.value - other.value,
                            self.groups, self.carried, self.fmt)
        if self.is_const:
            return Estimate(tuple((s, self.value - v) for s, v in other.values), self.value - other.value,
                            other.groups, other.carried, other.fmt)
        theirs = dict(other.values)
        carried = [c for c in (self.carried, other.carried) if c is not None]
        return Estimate(tuple((s, v - theirs[s]) for s, v in self.values if s in theirs),
                        groups=self.groups | other.groups, fmt=self.fmt,
                        carried=min(carried, key=lambda c: c.mean) if carried else None)

    def text(self) -> str:
        """``0.72 ± 0.03`` (a constant: its value; carried/offered appended where known)."""
        if self.is_const:
            return self.fmt.format(self.value)
        h = self.half
        out = self.fmt.format(self.mean) + ("" if math.isnan(h) else f" ± {self.fmt.format(h)}")
        if self.carried is not None:
            out += f" (carried {self.carried.mean:.3f})"
        return out


def _as_estimate(x) -> Estimate:
    return x if isinstance(x, Estimate) else Estimate.const(float(x))


def _half(e: Estimate) -> float:
    h = e.half
    return 0.0 if math.isnan(h) else h


def _worst(verdicts: Iterable[str]) -> str:
    v = list(verdicts)
    return FAILS if FAILS in v else (WITHIN if WITHIN in v else HOLDS)


@dataclass
class Claim:
    """A statement of the paper (``text``), checked; ``ours`` overrides the numbers shown."""

    text: str

    def raw_verdict(self) -> str:
        raise NotImplementedError

    def estimates(self) -> list[Estimate]:
        raise NotImplementedError

    def _precise(self) -> bool:
        raise NotImplementedError

    def numbers(self) -> str:
        raise NotImplementedError

    def verdict(self) -> str:
        """holds / within CI / fails, after the deferred-work rule."""
        return _worst([self.raw_verdict(), deferred_verdict(self.estimates())])

    def known(self) -> bool:
        """Whether more seeds could no longer change what the claim says (module docs)."""
        measured = [e for e in self.estimates() if not e.is_const]
        if any(e.n < 2 for e in measured):
            return False
        carried = [e.carried for e in measured if e.carried is not None]
        return self._precise() and all(_decisive(c, CARRIED_MIN) for c in carried if c.n >= 2)

    def groups(self) -> set:
        return set().union(*(e.groups for e in self.estimates())) if self.estimates() else set()

    def seeds(self) -> str:
        """The seeds its quantities took: ``5``, or ``5-12`` when they differ."""
        ns = sorted({e.n for e in self.estimates() if not e.is_const})
        return "" if not ns else (str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}")

    def shown(self) -> str:
        return getattr(self, "ours", "") or self.numbers()


def _decisive(e: Estimate, bound: float) -> bool:
    return e.mean - _half(e) >= bound or e.mean + _half(e) < bound


def deferred_verdict(estimates: Sequence[Estimate]) -> str:
    """The best verdict the carried/offered ratios of ``estimates`` allow (module docs)."""
    out = HOLDS
    for e in estimates:
        c = e.carried
        if c is None or c.n == 0:
            continue
        if c.mean + _half(c) < CARRIED_MIN:
            return FAILS
        if c.mean < CARRIED_MIN:
            out = WITHIN
    return out


@dataclass
class Greater(Claim):
    """``a > b``: holds when the mean difference (paired by seed) is positive, fails when
    its 95% interval lies below zero. ``resolution``: a difference too small to matter;
    the ordering is known once the interval excludes zero or is narrower than half of it."""

    a: Estimate | float = 0.0
    b: Estimate | float = 0.0
    resolution: float | None = None
    ours: str = ""

    def diff(self) -> Estimate:
        return _as_estimate(self.a) - _as_estimate(self.b)

    def raw_verdict(self) -> str:
        d = self.diff()
        if d.n == 0 and not d.is_const:
            return WITHIN
        if d.mean > 0:
            return HOLDS
        return WITHIN if d.mean + _half(d) >= 0 else FAILS

    def estimates(self) -> list[Estimate]:
        return [_as_estimate(x) for x in (self.a, self.b)]

    def _precise(self) -> bool:
        d = self.diff()
        if d.mean - _half(d) > 0 or d.mean + _half(d) < 0:
            return True
        return self.resolution is not None and 2 * _half(d) <= PRECISION * self.resolution

    def numbers(self) -> str:
        return f"{_as_estimate(self.a).text()} vs {_as_estimate(self.b).text()}"


@dataclass
class Near(Claim):
    """``|a − target| ≤ tol``: holds inside the tolerance, within CI when the 95% interval
    reaches it, fails otherwise; known when the interval is narrower than half of ``tol``."""

    a: Estimate | float = 0.0
    target: float = 0.0
    tol: float = 0.0
    ours: str = ""

    def raw_verdict(self) -> str:
        a = _as_estimate(self.a)
        off = abs(a.mean - self.target)
        if off <= self.tol:
            return HOLDS
        return WITHIN if off - _half(a) <= self.tol else FAILS

    def estimates(self) -> list[Estimate]:
        return [_as_estimate(self.a)]

    def _precise(self) -> bool:
        return 2 * _half(_as_estimate(self.a)) <= PRECISION * self.tol

    def numbers(self) -> str:
        return f"{_as_estimate(self.a).text()} (paper {self.target:g} ± {self.tol:g})"


@dataclass
class Within(Claim):
    """``lo ≤ a ≤ hi`` (either bound may be infinite): holds inside, within CI when the
    95% interval reaches the range, fails otherwise. Known when the interval is narrower
    than half of ``tolerance`` (default: half the range, if finite), or, for a one-sided
    range without one, when it lies on one side of the bound."""

    a: Estimate | float = 0.0
    lo: float = -math.inf
    hi: float = math.inf
    tolerance: float | None = None
    ours: str = ""

    def raw_verdict(self) -> str:
        a = _as_estimate(self.a)
        if self.lo <= a.mean <= self.hi:
            return HOLDS
        h = _half(a)
        return WITHIN if a.mean + h >= self.lo and a.mean - h <= self.hi else FAILS

    def estimates(self) -> list[Estimate]:
        return [_as_estimate(self.a)]

    def _precise(self) -> bool:
        a = _as_estimate(self.a)
        tol = self.tolerance if self.tolerance is not None else (
            (self.hi - self.lo) / 2 if math.isfinite(self.hi - self.lo) else None)
        if tol is not None:
            return 2 * _half(a) <= PRECISION * tol
        bound = self.lo if math.isfinite(self.lo) else self.hi
        return _decisive(a, bound)

    def numbers(self) -> str:
        rng = (f"≥ {self.lo:g}" if math.isinf(self.hi) else f"≤ {self.hi:g}" if math.isinf(self.lo)
               else f"{self.lo:g} to {self.hi:g}")
        return f"{_as_estimate(self.a).text()} ({rng})"


@dataclass
class AllOf(Claim):
    """Every part: fails if one fails, holds if all hold, else within CI."""

    parts: list[Claim] = field(default_factory=list)
    ours: str = ""

    def raw_verdict(self) -> str:
        return _worst(p.verdict() for p in self.parts)

    def estimates(self) -> list[Estimate]:
        return [e for p in self.parts for e in p.estimates()]

    def _precise(self) -> bool:
        return all(p.known() for p in self.parts)

    def numbers(self) -> str:
        return "; ".join(p.shown() for p in self.parts)


# ----------------------------------------------------------------------------------- the epilogue


#: How every claim is judged, in words (the verdicts' tolerance unless an entry adds to it).
TOLERANCE = ("an ordering holds when our means are so ordered and fails only when the opposite is significant "
             "at 95% (paired by seed), a number holds within its stated tolerance and fails when its 95% "
             "interval does not reach it; anything between is 'within CI'; a claim resting on a policy that "
             f"carried less than {CARRIED_MIN:g} of its offered load is at best 'within CI' (deferred work)")


def claims_table(claims: Sequence[Claim]) -> str:
    """The Markdown table of an entry's claims: the paper's statement, our numbers, the
    seeds they took, the verdict."""
    rows = [f"| {c.text} | {c.shown()} | {c.seeds()} | {c.verdict()} |" for c in claims]
    return "| the paper says | ours (95% CI) | seeds | |\n|---|---|---|---|\n" + "\n".join(rows)


def judge(claims: Sequence[Claim]) -> tuple[str, bool]:
    """One line for the verdict (``7 of 9 statements hold, none contradicted``) and whether
    the entry agrees (no claim fails)."""
    verdicts = [c.verdict() for c in claims]
    held = verdicts.count(HOLDS)
    failed = [c.text for c, v in zip(claims, verdicts) if v == FAILS]
    text = f"{held} of {len(claims)} statements hold"
    text += f", {len(failed)} fail: " + "; ".join(failed) if failed else ", none contradicted"
    return text, not failed


def mark_figure(fig, claims: Sequence[Claim], title: str):
    """The entry's title above its panels and the verdict counts below them."""
    verdicts = [c.verdict() for c in claims]
    seeds = sorted({int(s) for c in claims for s in c.seeds().split("-") if s})
    span = "" if not seeds else f"; seeds per point {seeds[0]}" + (f"-{seeds[-1]}" if seeds[-1] != seeds[0] else "")
    fig.suptitle(title, fontsize=9)
    fig.text(0.5, 0.005, f"paper's statements: {verdicts.count(HOLDS)} hold, {verdicts.count(WITHIN)} within CI, "
                         f"{verdicts.count(FAILS)} fail{span}", ha="center", va="bottom", fontsize=7)
    fig.tight_layout(rect=(0, 0.025, 1, 0.97))
    return fig


def outcome(data, figure, claims: Sequence[Claim], *, intro: str, tables: str = "", what: str = "",
            tolerance: str = ""):
    """An entry's :class:`~cclab.experiments.catalogue.Outcome` from its claims: the
    verdict line (:func:`judge`, then ``what``: the numbers that matter), and the details
    (``intro``, how claims are judged, the claims table, then ``tables``). It agrees when
    no claim fails. ``tolerance``: what the entry adds to :data:`TOLERANCE`."""
    from .catalogue import Outcome

    said, agrees = judge(claims)
    tol = TOLERANCE + (f"; {tolerance}" if tolerance else "")
    details = f"""
{intro.strip()}

Judged as follows: {tol}. A quantity's seeds grow, round by round, until its 95% interval is
narrower than half its tolerance (an ordering: until the interval of the difference excludes
zero) or the size's most seeds; the table says how many each took.

{claims_table(claims)}

{tables.strip()}
"""
    return Outcome(data, figure, said + (f"; {what}" if what else ""), details, agrees, tolerance=tol,
                   claims=list(claims))
