"""A testbed scenario: an ordinary cclab scenario (one link, an interactive Poisson
class and a background Poisson class) plus a ``[testbed]`` table saying how long to
measure, how many seeds, which classes play which part and which policies to compare.
Everything is read through the simulator's own validation (units, keys, errors), so the
testbed and the simulator see the same numbers."""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path

from ..scenario import ScenarioError, read_toml_file

TESTBED_KEYS = {"duration", "seeds", "interactive", "background", "policies", "congestion"}
POLICY_KEYS = {"name", "access"}
#: The kernel's controllers the testbed may set (`sysctl net.ipv4.tcp_available_congestion_control`
#: here: reno bbr cubic), and the simulator protocols a class may have: Linux's "reno" is
#: NewReno-style recovery with SACK, which the simulator's reno/newreno with the linux preset model.
CONGESTION = ("reno", "cubic")
SIM_PROTOCOLS = ("reno", "newreno")


@dataclass
class Arrivals:
    rate_per_s: float
    dist: str
    mean_bytes: float
    shape: float  # Pareto's; NaN for exponential


@dataclass
class TestbedScenario:
    name: str
    structure: dict          # the simulator scenario (without [testbed])
    rate_bps: float
    buffer_packets: int
    delay_s: float           # one-way propagation delay of the link
    congestion: str
    duration_s: float
    seeds: int
    interactive: str
    background: str
    web: Arrivals
    bulk: Arrivals
    policies: list[tuple[str, dict | None]]

    def simulator_scenario(self, access: dict | None, delay_s: float, chunk_list: str | None = None) -> dict:
        """The simulator's scenario for one policy: the background class with ``access``
        (none: vanilla), the link's delay ``delay_s`` (the testbed's base delay). With
        ``chunk_list`` (a flow-list CSV: start, size, class) the background class becomes
        that list of chunks, the manager's releases, instead of Poisson arrivals."""
        s = copy.deepcopy(self.structure)
        s["links"][0]["delay"] = f"{delay_s * 1e9:.0f}ns"
        for i, c in enumerate(s["traffic"]):
            if c["name"] != self.background:
                continue
            if chunk_list is not None:
                c = {k: v for k, v in c.items() if k not in ("type", "load", "load_link", "arrival_rate", "size")}
                c.update(type="flow_list", file=str(chunk_list))
            c.pop("access", None)
            if access is not None:
                c["access"] = copy.deepcopy(access)
            s["traffic"][i] = c
        return s


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def _duration_s(text, key: str) -> float:
    """``"300s"``, ``"5min"``... in seconds (the units of the simulator's durations)."""
    import re

    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|ms|s|min|h)\s*", str(text))
    if not isinstance(text, str) or not m:
        raise ScenarioError(f'{key}: expected a duration like "300s", got {text!r} (write the unit)')
    return float(m.group(1)) * _UNITS[m.group(2)]


def load(path: str | Path, duration: float | None = None, seeds: int | None = None) -> TestbedScenario:
    """Read and check a testbed scenario file; ScenarioError naming the key at fault."""
    from ..validation import validate

    raw = read_toml_file(Path(path), "testbed scenario")
    tb = raw.pop("testbed", None)
    if not isinstance(tb, dict):
        raise ScenarioError(f"{path}: testbed: missing table (duration, seeds, interactive, background, policies)")
    for k in tb:
        if k not in TESTBED_KEYS:
            raise ScenarioError(f"testbed.{k}: unknown key; [testbed] takes {', '.join(sorted(TESTBED_KEYS))}")
    for k in ("interactive", "background", "policies"):
        if k not in tb:
            raise ScenarioError(f"testbed.{k}: required")
    cfg = validate(raw)["config"]
    links = [l for l in cfg["links"] if not l["name"].endswith("-rev")]
    if len(links) != 1:
        raise ScenarioError(f"links: the testbed builds one bottleneck, got {len(links)} links")
    link = links[0]
    q = link["queue"]
    if q["type"] != "droptail" or q["limit_packets"] is None:
        raise ScenarioError("links[0].queue: the testbed's tbf has a drop-tail buffer in packets; "
                            f"give {{ type = \"droptail\", limit = \"100pkts\" }}, got {raw['links'][0].get('queue')}")
    classes = {c["name"]: c for c in cfg["classes"]}
    arrivals, cc = {}, set()  # cc: the classes' protocols (only checked)
    for role in ("interactive", "background"):
        name = tb[role]
        if name not in classes:
            raise ScenarioError(f"testbed.{role}: no traffic class named {name!r} (classes: {', '.join(classes)})")
        c = classes[name]
        a = c["arrivals"]
        if a.get("type") != "poisson" or a["size"]["dist"] not in ("exponential", "pareto"):
            raise ScenarioError(f"testbed.{role}: class {name!r} must be poisson with exponential or pareto sizes")
        if c["src"] != link["from"] or c["dst"] != link["to"]:
            raise ScenarioError(f"testbed.{role}: class {name!r} must cross the link from server to client")
        proto = c["transport"].get("cc", {}).get("protocol")
        if proto not in SIM_PROTOCOLS:
            raise ScenarioError(f"testbed.{role}: class {name!r} uses {proto!r}; the testbed runs Linux's TCP, "
                                f"so the class must be {' or '.join(SIM_PROTOCOLS)} (the kernel's controller "
                                "is testbed.congestion)")
        cc.add(proto)
        if "access" in next(t for t in raw["traffic"] if t["name"] == name):
            raise ScenarioError(f"traffic: class {name!r}: put access tables in [[testbed.policies]], not on the class")
        size = a["size"]
        arrivals[role] = Arrivals(a["rate_per_s"], size["dist"], size["mean_bytes"],
                                  size.get("shape", math.nan))
    congestion = tb.get("congestion", "reno")
    if congestion not in CONGESTION:
        raise ScenarioError(f"testbed.congestion: expected one of {', '.join(map(repr, CONGESTION))}, got {congestion!r}")
    if len(classes) != 2:
        raise ScenarioError(f"traffic: the testbed runs the two classes named in [testbed], got {len(classes)}")
    policies = []
    if not isinstance(tb["policies"], list) or not tb["policies"]:
        raise ScenarioError("testbed.policies: expected a non-empty array of tables")
    for i, p in enumerate(tb["policies"]):
        for k in p:
            if k not in POLICY_KEYS:
                raise ScenarioError(f"testbed.policies[{i}].{k}: unknown key; a policy takes name and access")
        if "name" not in p:
            raise ScenarioError(f"testbed.policies[{i}].name: required")
        access = p.get("access")
        if access is not None:  # checked by the simulator's reader, keys named as there
            trial = copy.deepcopy(raw)
            next(t for t in trial["traffic"] if t["name"] == tb["background"])["access"] = access
            try:
                validate(trial)
            except ScenarioError as exc:
                raise ScenarioError(f"testbed.policies[{i}]: {exc}") from None
        policies.append((str(p["name"]), access))
    dur = _duration_s(tb.get("duration", "300s"), "testbed.duration") if duration is None else float(duration)
    n = tb.get("seeds", 1) if seeds is None else seeds
    if not isinstance(n, int) or n < 1:
        raise ScenarioError(f"testbed.seeds: expected a positive integer, got {n!r}")
    if dur <= 0:
        raise ScenarioError(f"testbed.duration: expected a positive duration, got {dur}")
    return TestbedScenario(
        name=cfg["name"], structure=raw, rate_bps=float(link["rate_bps"]), buffer_packets=int(q["limit_packets"]),
        delay_s=link["delay_ns"] / 1e9, congestion=congestion, duration_s=dur, seeds=n,
        interactive=tb["interactive"], background=tb["background"], web=arrivals["interactive"],
        bulk=arrivals["background"], policies=policies)
