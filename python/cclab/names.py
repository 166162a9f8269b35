"""Users' names (classes, links, runs) as tables and figures can show them.

Every name the engine accepts is shown, none breaks a table or a figure: control
characters become escapes, and in figures ``$`` is escaped (matplotlib would read
``a$b$`` as TeX math and fail after the run, issue 12) and long names are cut.
"""
from __future__ import annotations


def printable(name) -> str:
    """The name with control characters (newline, tab, NUL...) written as escapes."""
    name = str(name)
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in name)


def plot_label(name, width: int = 40) -> str:
    """The name as matplotlib plain text: printable, cut to ``width`` characters (a
    legend of 300-character names leaves no room to plot), ``$`` escaped."""
    text = printable(name)
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("$", r"\$")
