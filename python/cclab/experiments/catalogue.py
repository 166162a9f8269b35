"""The reproductions catalogue behind `cclab reproduce`.

Each entry reproduces one figure or table of one of the five papers. An entry is a
function decorated with :func:`reproduction`, with its sizes declared once
(:mod:`.sizes`); it receives a :class:`Context` (its size, output folder, seed, where
its runs go) and returns an :class:`Outcome`. The catalogue writes ``NAME.csv`` (the
data), ``NAME.png`` (our curves beside the paper's reported values) and ``NAME.md``
(a short verdict) for it. An entry reads as runs -> claims -> figure: its runs through
:mod:`.runs`, its claims and their one vocabulary in :mod:`.claims`, pairing by seed in
:mod:`.paired`.

Every packet-level simulation of an entry runs through :meth:`Context.sweep`: the
result store (a repeated or interrupted reproduction reruns only what is missing, and
keeps only the tables the entry reads), on the executor the user chose (``--cluster``,
``--workers``). The context counts what its sweeps ran and found stored
(:attr:`Context.ledger`), which ``NAME.json`` records.

Besides the three files, the catalogue writes ``NAME.json`` (status, verdict, size,
wall time, details), which ``cclab report`` turns into one HTML page.

Entries live in the modules of :mod:`cclab.experiments.reproductions`, one module
per paper topic; they are discovered by importing every module of that package.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .sizes import Size, Sizes


@dataclass(frozen=True)
class Context:
    """What an entry is asked to do: its size, where to write, its seed, and where its
    packet-level runs go (the result store and the executor of :func:`cclab.sweep`).

    size: the entry's declared size for ``quick`` (or one given to ``Reproduction.run``).
    ledger: one ``(sweep name, runs, ran, cached)`` per sweep the entry ran, counting the
        runs no earlier sweep of the entry had asked for (``seen``: their keys).
    """

    quick: bool
    out: Path
    seed: int = 1
    progress: bool = True
    store: str | Path | None = None
    cluster: Any = None
    workers: int | None = None
    name: str = ""
    size: Size | None = None
    ledger: list = field(default_factory=list)
    seen: set = field(default_factory=set)
    variant: Any = None
    variant_changed: list = field(default_factory=lambda: [0])

    def adjust(self, scenario: Any) -> Any:
        """A packet-level scenario as this context runs it: with the changes of the
        ablation level it runs (:class:`cclab.experiments.ablation.Level`), if any."""
        if self.variant is None:
            return scenario
        changed = self.variant.apply(scenario)
        if changed != scenario:
            self.variant_changed[0] += 1
        return changed

    def sweep(self, scenario: Any, *, part: str = "", **kw: Any):
        """:func:`cclab.sweep` with this context's store, executor and progress setting; the
        sweep is recorded in the store as ``ENTRY-quick`` or ``ENTRY-full`` (``-PART``
        appended) unless named. What it ran and found stored goes into the ledger."""
        from cclab.sweeps import sweep

        kw.setdefault("progress", self.progress)
        if self.variant is not None:
            part = f"{part}-{_slug(self.variant.label)}" if part else _slug(self.variant.label)
        if self.name:
            kw.setdefault("name", f"{self.name}-{'quick' if self.quick else 'full'}" + (f"-{part}" if part else ""))
        res = sweep(scenario, store=self.store, cluster=self.cluster, workers=self.workers, **kw)
        # each distinct run once: a replication round asks again for the runs of the rounds
        # before it, which are no runs found in the store but the entry's own
        new = {r.key for r in res.runs} - self.seen
        self.seen.update(new)
        self.ledger.append((res.name, len(new), res.stats.ran, len(new) - res.stats.ran))
        return res

    def runs_done(self) -> dict:
        """What the entry's sweeps did: runs asked for, ran, found stored."""
        return {"runs": sum(x[1] for x in self.ledger), "ran": sum(x[2] for x in self.ledger),
                "cached": sum(x[3] for x in self.ledger)}


@dataclass
class Outcome:
    """What an entry produced.

    data: the table written as ``NAME.csv``.
    figure: a matplotlib Figure written as ``NAME.png``.
    verdict: one line: does our result agree with the paper, and how closely.
    details: Markdown body of the verdict: the comparison table, where the paper's
        values were read (text, table, or figure), and any difference explained.
    agrees: True/False when the entry checks a claim of the paper, None when it
        only shows something the paper does not quantify.
    tolerance: how far from the paper's value a result may be and still agree, and where
        that margin comes from (a confidence interval of the runs, the numerical precision
        of a closed form, the rounding of the paper's printed number, or an explicit reading
        of a qualitative claim). An entry that judges (``agrees`` not None) must state it,
        here or in ``verdict`` (see :func:`verdict_text`).
    """

    data: Any
    figure: Any
    verdict: str
    details: str = ""
    agrees: bool | None = None
    tolerance: str = ""
    claims: list = field(default_factory=list)


def verdict_text(outcome: Outcome) -> str:
    """The verdict line as written: the entry's verdict and its tolerance.

    Raises ValueError when an entry judges a claim (``agrees`` is not None) but states no
    tolerance, neither in ``tolerance`` nor in the verdict itself: a verdict a reader can
    trust says how close is close enough and why.
    """
    text = outcome.verdict.strip()
    if outcome.tolerance:
        text += f" (tolerance: {outcome.tolerance.strip()})"
    if outcome.agrees is not None and "tolerance" not in text.lower():
        raise ValueError("the verdict states no tolerance (set Outcome.tolerance): " + text)
    return text


@dataclass(frozen=True)
class Reproduction:
    """One catalogue entry. ``sizes``: its declared sizes, which ``quick_size`` and
    ``full_size`` (the words of NAME.md and the report) describe when not given."""

    name: str
    paper: str
    figure: str
    title: str
    func: Callable[[Context], Outcome]
    quick_size: str = ""
    full_size: str = ""
    sizes: Sizes | None = None
    ablation: Any = None

    def size_text(self, quick: bool) -> str:
        if self.sizes is not None:
            return self.sizes.of(quick).describe()
        return self.quick_size if quick else self.full_size

    def run(self, quick: bool = True, out: str | Path = "results/reproduce", seed: int = 1,
            progress: bool = True, store: str | Path | None = None, cluster: Any = None,
            workers: int | None = None, size: Size | None = None) -> tuple[Outcome, dict[str, Path]]:
        """Run the entry and write its CSV, PNG, Markdown verdict and JSON record into ``out``.
        ``size``: run at this size instead of the declared one (tests run tiny sizes)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        if size is None and self.sizes is not None:
            size = self.sizes.of(quick)
        ctx = Context(quick=quick, out=out, seed=seed, progress=progress, store=store, cluster=cluster,
                      workers=workers, name=self.name, size=size)
        t0 = time.perf_counter()
        outcome = self.func(ctx)
        wall = time.perf_counter() - t0
        text = size.describe() if size is not None else self.size_text(quick)
        return outcome, write_outcome(self, outcome, out, quick=quick, wall=wall, seed=seed, size_text=text,
                                      runs=ctx.runs_done() if ctx.ledger else None)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower()


_REGISTRY: dict[str, Reproduction] = {}
_LOADED = False


def reproduction(name: str, *, paper: str, figure: str, title: str, sizes: Sizes | None = None,
                 quick_size: str = "", full_size: str = "", ablation: Any = None,
                 ) -> Callable[[Callable[[Context], Outcome]], Callable[[Context], Outcome]]:
    """Register a function ``f(ctx) -> Outcome`` as the catalogue entry ``name`` with its
    ``sizes`` (or, for an entry of no seeds or runs, sizes in words) and its ``ablation``
    (:class:`cclab.experiments.ablation.Ablation`: the factors ``--ablate`` moves one at a
    time)."""

    def deco(func: Callable[[Context], Outcome]) -> Callable[[Context], Outcome]:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"reproduction {name!r} is registered twice")
        _REGISTRY[name] = Reproduction(name, paper, figure, title, func, quick_size, full_size, sizes, ablation)
        return func

    return deco


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    from . import reproductions

    for mod in pkgutil.iter_modules(reproductions.__path__):
        importlib.import_module(f"{reproductions.__name__}.{mod.name}")
    _LOADED = True


def entries() -> list[Reproduction]:
    """All registered entries, sorted by name with numbers in numeric order (fig4 before fig10)."""
    _load_all()
    natural = lambda k: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", k)]
    return [_REGISTRY[k] for k in sorted(_REGISTRY, key=natural)]


def get(name: str) -> Reproduction:
    """The entry called ``name``; ``KeyError`` with the list of names if unknown."""
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise KeyError(f"unknown reproduction {name!r}; known: {known}") from None


def _command(entry: Reproduction, quick: bool) -> str:
    return f"cclab reproduce {entry.name}{'' if quick else ' --full'}"


def _record(entry: Reproduction, quick: bool, seed: int, size_text: str | None = None, **fields: Any) -> dict:
    from cclab import __version__

    return {"name": entry.name, "paper": entry.paper, "figure": entry.figure, "title": entry.title,
            "size": "quick" if quick else "full",
            "size_detail": entry.size_text(quick) if size_text is None else size_text,
            "seed": seed, "command": _command(entry, quick), "cclab": __version__,
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"), **fields}


def write_failure(entry: Reproduction, exc: BaseException, out: Path, *, quick: bool, seed: int = 1) -> Path:
    """Record that an entry raised (``NAME.json`` with status "failed"), for the report."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{entry.name}.json"
    rec = _record(entry, quick, seed, status="failed", verdict=f"{exc.__class__.__name__}: {exc}",
                  details="", wall_s=None, png=None, csv=None, md=None)
    path.write_text(json.dumps(rec, indent=2) + "\n")
    return path


def write_outcome(entry: Reproduction, outcome: Outcome, out: Path, *, quick: bool,
                  wall: float, seed: int = 1, size_text: str | None = None,
                  runs: dict | None = None) -> dict[str, Path]:
    """Write ``NAME.csv``, ``NAME.png``, ``NAME.md`` and ``NAME.json`` for an outcome; return their paths."""
    from cclab.plotting import savefig

    verdict = verdict_text(outcome)
    outcome.verdict, outcome.tolerance = verdict, ""  # callers print outcome.verdict: with its tolerance
    paths = {"csv": out / f"{entry.name}.csv", "png": out / f"{entry.name}.png",
             "md": out / f"{entry.name}.md", "json": out / f"{entry.name}.json"}
    outcome.data.to_csv(paths["csv"], index=False)
    savefig(outcome.figure, paths["png"], dpi=120)
    status = {True: "agrees", False: "DISAGREES", None: "shown"}[outcome.agrees]
    size = "quick" if quick else "full"
    sz = entry.size_text(quick) if size_text is None else size_text
    md = [
        f"# {entry.name}: {entry.title}",
        "",
        f"- paper: `{entry.paper}`, {entry.figure}",
        f"- size: {size}" + (f" ({sz})" if sz else ""),
        f"- command: `{_command(entry, quick)}`",
        f"- wall time: {wall:.1f} s" + (f"; packet-level runs: {runs['ran']} ran, {runs['cached']} found in "
                                        "the store" if runs else ""),
        f"- verdict: **{status}** — {verdict}",
        "",
        outcome.details.strip(),
        "",
        f"![{entry.name}]({entry.name}.png)",
        "",
    ]
    paths["md"].write_text("\n".join(md))
    rec = _record(entry, quick, seed, size_text, status=status, verdict=verdict, details=outcome.details.strip(),
                  wall_s=round(wall, 3), png=paths["png"].name, csv=paths["csv"].name, md=paths["md"].name,
                  runs=runs)
    paths["json"].write_text(json.dumps(rec, indent=2) + "\n")
    return paths
