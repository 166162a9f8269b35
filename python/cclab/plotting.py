"""The one plotting module of cclab: a lazy pyplot, one style, atomic saving, shared helpers.

``import cclab`` does not import matplotlib; :func:`pyplot` imports it the first time a
figure is drawn, selects the non-interactive Agg backend (unless pyplot was already
imported, e.g. in a notebook, whose backend is then kept) and applies :data:`STYLE`.

Style choices:

* colours: the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2002; also
  Wong, Nature Methods 8:441, 2011), distinguishable by readers with the common
  colour-vision deficiencies;
* every series of the default cycle also differs by line style, and :func:`series`
  adds a marker, so curves stay apart when printed in grey;
* font sizes and figure sizes fixed here (:data:`SIZES`), legends placed outside the
  axes or in an empty corner by :func:`legend`.

:func:`savefig` writes the PNG to a temporary file in the destination folder and renames
it over the destination (``os.replace``), so a reader never sees a half-written image.
"""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any, Iterable

#: Okabe-Ito colours in the order of the cycle (black last: it is kept for references).
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
#: Marker of each position of the cycle: filled and open shapes that differ in grey.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Line style of each position of the cycle.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), "-")
#: Colour of the paper's values in every figure (black, open markers).
PAPER_COLOR = "#000000"

#: Figure sizes in inches: one panel, two side by side, three side by side, two stacked.
SIZES = {"single": (6.4, 4.4), "wide": (11.0, 4.3), "triple": (13.0, 4.2), "tall": (6.8, 7.2)}

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 7.5,
    "legend.framealpha": 0.85,
    "figure.titlesize": 10,
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.alpha": 0.3,
    "lines.linewidth": 1.5,
    "lines.markersize": 5,
}

_STYLED = False


def pyplot():
    """``matplotlib.pyplot``, imported on first use with the Agg backend and :data:`STYLE`."""
    global _STYLED
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not _STYLED:
        from cycler import cycler

        matplotlib.rcParams.update(STYLE)
        matplotlib.rcParams["axes.prop_cycle"] = cycler(color=COLORS) + cycler(linestyle=LINESTYLES)
        _STYLED = True
    return plt


def series(i: int, *, marker: bool = True, line: bool = True, markevery: Any = None) -> dict:
    """Keyword arguments for ``ax.plot`` of the ``i``-th series: colour, line style and marker
    of position ``i`` of the cycle (wrapping), so that series differ in colour, dash and shape."""
    j = i % len(COLORS)
    kw: dict = {"color": COLORS[j]}
    kw["linestyle"] = LINESTYLES[j] if line else "none"
    if marker:
        kw["marker"] = MARKERS[j]
        kw["markerfacecolor"] = "white" if j % 2 else COLORS[j]
        if markevery is not None:
            kw["markevery"] = markevery
    return kw


def subplots(nrows: int = 1, ncols: int = 1, size: str | tuple = "single", **kw):
    """``plt.subplots`` with a size from :data:`SIZES` (or explicit inches)."""
    plt = pyplot()
    figsize = SIZES[size] if isinstance(size, str) else size
    return plt.subplots(nrows, ncols, figsize=figsize, **kw)


def legend(ax, where: str = "outside", **kw):
    """A legend that does not cover data: ``"outside"`` (right of the axes), ``"below"`` (under
    the axes), or a corner name passed to matplotlib (``"upper left"``, ``"best"``...)."""
    if where == "outside":
        kw.setdefault("loc", "upper left")
        kw.setdefault("bbox_to_anchor", (1.01, 1.0))
        kw.setdefault("borderaxespad", 0.0)
    elif where == "below":
        kw.setdefault("loc", "upper center")
        kw.setdefault("bbox_to_anchor", (0.5, -0.16))
        kw.setdefault("ncol", 3)
    else:
        kw.setdefault("loc", where)
    return ax.legend(**kw)


def log_axis(ax, axis: str = "y", *, symlog_threshold: float | None = None) -> None:
    """Put ``axis`` ("x", "y" or "xy") on a log scale (symlog with a linear part below
    ``symlog_threshold`` when zeros must stay visible), with minor grid lines."""
    for a in axis:
        if symlog_threshold is None:
            getattr(ax, f"set_{a}scale")("log")
        else:
            getattr(ax, f"set_{a}scale")("symlog", linthresh=symlog_threshold)
    ax.grid(True, which="minor", alpha=0.12)


def curve_with_band(ax, x, y, lo=None, hi=None, *, i: int = 0, label: str | None = None,
                    band_label: str | None = None, marker: bool = True, **kw):
    """Our curve (series ``i``) with a shaded band between ``lo`` and ``hi`` (e.g. a 95%
    confidence interval); returns the line."""
    style = series(i, marker=marker)
    style.update(kw)
    line, = ax.plot(x, y, label=label, zorder=3, **style)
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, color=style["color"], alpha=0.18, lw=0, zorder=2, label=band_label)
    return line


def paper_points(ax, x, y, *, label: str = "paper", yerr=None, marker: str = "X", **kw):
    """The paper's printed values: black markers with a white edge, drawn above every curve."""
    kw.setdefault("ms", 9)
    kw.setdefault("mec", "white")
    kw.setdefault("mew", 0.8)
    if yerr is None:
        return ax.plot(x, y, linestyle="none", marker=marker, color=PAPER_COLOR, label=label, zorder=6, **kw)
    return ax.errorbar(x, y, yerr=yerr, fmt=marker, color=PAPER_COLOR, label=label, zorder=6, capsize=2, **kw)


def savefig(fig, path: str | Path, *, dpi: int | None = None, close: bool = True) -> Path:
    """Write ``fig`` to ``path`` atomically (a temporary file in the same folder, then
    ``os.replace``); the format comes from the suffix. Closes the figure unless ``close`` is False."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a unique name opened exclusively (not mkstemp, whose 0600 mode would outlive the rename):
    # the file gets the usual permissions of the user's umask
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "xb") as fh:
            fig.savefig(fh, format=path.suffix.lstrip(".") or "png", dpi=dpi, bbox_inches="tight")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        if close:
            pyplot().close(fig)
    return path


def text_number(v: Any, fmt: str = "{:.4g}") -> str:
    """A number as text for tables and verdicts: numpy scalars become Python ones (so no
    ``np.int64(0)`` reaches a page), integers print whole, NaN/None print empty."""
    if v is None:
        return ""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return "" if v != v else str(v)
        return fmt.format(v)
    return str(v)


def ticks_every(ax, values: Iterable[float], axis: str = "x") -> None:
    """Put ticks (and plain labels) exactly at ``values`` on ``axis``, e.g. the simulated N."""
    vals = list(values)
    getattr(ax, f"set_{axis}ticks")(vals)
    getattr(ax, f"set_{axis}ticklabels")([f"{v:,g}" for v in vals])
    getattr(ax, f"{axis}axis").set_minor_formatter(pyplot().NullFormatter())
