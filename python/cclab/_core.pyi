"""Typed stub of the compiled module `cclab._core` (Rust, built by maturin).

Use the Python wrappers (`cclab.run`, `cclab.flowsim`, `cclab.theory.lower_bounds`)
rather than these functions directly: they convert the raw columns into pandas
tables and check arguments.
"""
from typing import Any, Callable, Optional

import numpy as np

__version__: str

class ScenarioError(ValueError):
    """A scenario is malformed; the message names the key path at fault."""

def validate_scenario(scenario_json: str, base_dir: str = ".", seed: Optional[int] = None) -> dict[str, Any]:
    """Validate a scenario given as JSON; returns {"warnings", "duration_s", "warmup_s", "seed"}."""

def run_scenario(
    scenario_json: str,
    base_dir: str = ".",
    seed: Optional[int] = None,
    progress: Optional[Callable[[float], Any]] = None,
) -> dict[str, Any]:
    """Run a scenario in the packet-level simulator.

    Returns {"flows": {column: ndarray}, "class_names": [...], "links": [row dict],
    "series": {"time", "metric", "name", "value": ndarray, "metric_names", "entity_names"},
    "summary": {key: scalar}, "warnings": [...]}.
    """

def flowsim_run(
    capacities: list[float],
    classes: list[tuple[str, str, str, list[int], dict[str, float]]],
    duration: float,
    warmup: float,
    replications: int,
    seed: int,
    threads: int = 1,
) -> dict[str, object]:
    """Run the flow-level simulator; per-replication statistics per class."""
