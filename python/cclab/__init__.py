"""cclab: congestion control of mixed traffic — theory, packet- and flow-level simulation.

The compiled core (`cclab._core`) is imported lazily, so the pure-Python theory
modules work even where the extension has not been built.
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["run", "load", "validate", "load_scenario", "Result", "ScenarioError", "sweep", "Store", "__version__"]


def __getattr__(name: str):
    if name == "validate":
        from . import validation

        return validation.validate
    if name in ("run", "Result"):
        from . import api

        return getattr(api, name)
    if name == "load":
        from .inspect import load

        return load
    if name in ("sweep", "Store"):
        from . import sweeps

        return getattr(sweeps, name)
    if name in ("load_scenario", "ScenarioError"):
        from . import scenario

        return getattr(scenario, name)
    raise AttributeError(f"module 'cclab' has no attribute {name!r}")
