"""Saved runs and ready scenarios: ``cclab.load(DIR)`` and the commands
``cclab show``, ``plot``, ``compare`` and ``scenarios`` (docs/inspect.md).

Importing this package is cheap: the tables' libraries load when used.
"""
from __future__ import annotations


def load(path):
    """The run saved in ``path`` by ``cclab run --out`` or ``Result.save`` (see
    :func:`cclab.inspect.saved.load`)."""
    from .saved import load as _load

    return _load(path)


def register(subparsers) -> None:
    """Add `show`, `plot`, `compare` and `scenarios` to the `cclab` parser."""
    from .commands import register as _register

    _register(subparsers)
