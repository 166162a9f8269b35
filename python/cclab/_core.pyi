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
    """Validate a scenario given as JSON; returns {"warnings", "duration_s", "warmup_s", "seed",
    "config", "estimate", "offered_load"}, where "config" is the canonical JSON text of the validated
    configuration, "estimate" what the run will need (flows, packets, events, wall_time_s, series_rows,
    arrival_rows, trace_rows, pcap_bytes, memory_bytes) with the limits it was checked against (limit_memory_bytes,
    limit_wall_time_s) and "offered_load" one dict per link (link, offered_bps, load, elastic_classes).
    Raises ScenarioError for a malformed scenario or one over its limits."""

def toml_to_json(text: str) -> str:
    """TOML text as JSON text; raises ScenarioError for invalid TOML or a date or time (naming its key)."""

def run_config(config_json: str, progress: Optional[Callable[[float], Any]] = None) -> dict[str, Any]:
    """Run a canonical configuration (JSON text) as it is; returns what `run_scenario` does."""

def run_scenario(
    scenario_json: str,
    base_dir: str = ".",
    seed: Optional[int] = None,
    progress: Optional[Callable[[float], Any]] = None,
) -> dict[str, Any]:
    """Run a scenario in the packet-level simulator.

    Returns {"flows": {column: ndarray}, "class_names": [...], "links": [row dict],
    "series": {"time", "metric", "name", "value": ndarray, "metric_names", "entity_names"},
    "summary": {key: scalar}, "warnings": [...], "config": canonical JSON text,
    "traces": {"flows", "access": {"time", "entity", "variable", "value", "variable_names"},
    "packets": {"time", "flow", "event", "seq", "end", "link", "event_names"}, "links": {"time", "link",
    "event", "flow", "seq", "size", "ack", "queue_packets", "queue_bytes", "wait", "event_names"},
    "pcap": [(link index, bytes)]}}: what [trace] recorded (cclab.traces.Traces reads it).
    """

def flowsim_run(
    capacities: list[float],
    classes: list[tuple[str, str, str, list[int], dict[str, float | str]]],
    duration: float,
    warmup: float,
    replications: int,
    seed: int,
    threads: int = 1,
) -> dict[str, object]:
    """Run the flow-level simulator; per-replication statistics per class."""

SMOOTH_TICKS_PER_PACKET: int

def smooth_queue_runs(n: int, dist: str, k: float, utilization: float, runs: int, seed: int,
                      threads: int = 0) -> np.ndarray:
    """Steady-state queue sizes (packets, float64, flat runs*n) of the exact 2N-packet method."""

def smooth_loss_runs(n: int, dist: str, k: float, utilization: float, buffer: int, runs: int, seed: int,
                     max_periods: int, threads: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-run loss rate, periods iterated, cycle length, converged flag and largest queue."""

def smooth_arrivals(n: int, dist: str, k: float, utilization: float, seed: int, run: int,
                    ticks_per_packet: int) -> np.ndarray:
    """Flow arrival times (int64 ticks) of one run."""

def smooth_steady(arrivals: np.ndarray, period: int, packet_time: int, buffer: Optional[int],
                  max_periods: int) -> tuple[np.ndarray, np.ndarray, int, int, int, bool, int]:
    """Exact steady state for given arrivals: waits, phases, periods, cycle, drops, converged, boundary."""

class AccessController:
    """The access controller of crates/control over chunks named by integers (the manager
    `cclab bg fetch` runs it on real transfers). ``params``: ``policy`` ("static",
    "rate_tracking", "fairbat") and that policy's keys; errors name ``{at}.{key}``."""

    def __init__(self, params: dict[str, float | str], start: float, measure_from: Optional[float] = None,
                 at: str = "access") -> None: ...
    def arrive(self, now: float, id: int, bytes: float) -> None: ...
    def admit(self, now: float) -> Optional[int]: ...
    def complete(self, now: float) -> None: ...
    def next_deadline(self) -> float: ...
    def on_deadline(self, now: float, delivered_bytes: float) -> None: ...
    def advance_to(self, now: float) -> None: ...
    def params_json(self) -> str: ...
    def averages(self) -> dict[str, float]: ...
    @property
    def limit(self) -> float: ...
    @property
    def active(self) -> int: ...
    @property
    def waiting(self) -> int: ...
    @property
    def updates(self) -> int: ...
    @property
    def policy(self) -> str: ...
    @property
    def measures_delivery(self) -> bool: ...
