"""Property-based tests (hypothesis; issue 12).

* Random valid scenarios (chains of 1 to 3 links, drop-tail or RED queues, 1 to 3
  Poisson, long-lived and CBR classes of every protocol, TCP options, warm-up,
  recording)
  conserve packets (whole run and measured period), keep every flow's bytes
  within its size, keep the links' counters within what the links can do, and
  give the same tables twice for the same seed.
* Random invalid scenarios (a valid one with one value replaced by a wrong type,
  a number out of range, a non-finite number, an unknown key, an empty name or a
  huge count) are refused with a ScenarioError whose message starts with a key
  path of the scenario, or validate; never another exception, never a panic. The
  ones that validate and are estimated to take under 0.2 s are run too.
* Random bytes as a flow-list file (with a valid header or not) are refused naming
  `traffic[0].file`, never echoing the file (a marker inside it never appears).

`make test` runs a fast, derandomized subset (profile "default", under 30 s);
`make fuzz` runs the long campaign (profile "fuzz": 800 valid and 4,000 invalid examples, random
seeds, failures kept in .hypothesis/ and replayed first on the next run).
"""
from __future__ import annotations

import copy
import json
import math
import re

import pytest

hypothesis = pytest.importorskip("hypothesis")
cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cclab.scenario import ScenarioError  # noqa: E402

# The profiles "default" and "fuzz" are registered in conftest.py (before pytest reads
# --hypothesis-profile).

WINDOW = ["newreno", "reno", "ledbat", "tcp_lp", "multcp", "fast", "vegas"]
RATE = ["cbr", "pareto", "tfrc", "tfcbr", "rdtf"]
#: Protocols and queue disciplines the random scenarios do not draw, and why
#: (CONTRIBUTING.md: each new one is drawn, or named here).
NOT_FUZZED = {
    "rcp": "RCP's senders need a route through an RCP link, and an RCP link carries them only",
    "linear": "its thresholds are a profile of one experiment (heterogeneous Example 2a), not a general buffer",
}
PERF = ("wall_time_s", "events_per_s", "wall_s_per_sim_s")


def _ms(lo, hi):
    return st.integers(lo, hi).map(lambda v: f"{v}ms")


@st.composite
def queues(draw):
    if draw(st.booleans()):
        # At least one packet of every class (up to 1512 bytes) at the slowest rate (1 Mbps).
        limit = draw(st.one_of(st.integers(2, 300).map(lambda n: f"{n}pkts"), _ms(13, 200),
                               st.integers(3, 400).map(lambda k: f"{k}KB")))
        return {"type": "droptail", "limit": limit}
    lo = draw(st.integers(2, 20))
    return {"type": "red", "limit": f"{lo * 4 + draw(st.integers(0, 50))}pkts", "min_th": f"{lo}pkts",
            "max_th": f"{lo * 3}pkts", "max_p": draw(st.sampled_from([0.02, 0.1, 0.5])),
            "ecn": draw(st.booleans()), "gentle": draw(st.booleans())}


@st.composite
def classes(draw, name, nodes):
    n = len(nodes)
    i = draw(st.integers(0, n - 2))
    j = draw(st.integers(i + 1, n - 1))
    c = {"name": name, "src": nodes[i], "dst": nodes[j]}
    kind = draw(st.sampled_from(["poisson", "long_lived", "cbr"]))
    if kind == "poisson":
        c.update(type="poisson", load=draw(st.floats(0.05, 0.9)),
                 size=draw(st.one_of(
                     st.builds(lambda m: {"dist": "exponential", "mean": f"{m}KB"}, st.integers(1, 400)),
                     st.builds(lambda m, a: {"dist": "pareto", "mean": f"{m}KB", "shape": a},
                               st.integers(5, 400), st.floats(1.2, 2.5)),
                     st.builds(lambda v: {"dist": "constant", "value": f"{v}B"}, st.integers(1, 200_000)))))
    elif kind == "cbr":
        c.update(type="cbr", rate=f"{draw(st.integers(50, 3000))}kbps", count=draw(st.integers(1, 3)),
                 packet_size=draw(st.integers(100, 1500)))
        if draw(st.booleans()):
            c["phase"] = "random"
    else:
        c.update(type="long_lived", count=draw(st.integers(1, 3)))
    if c["type"] in ("poisson", "long_lived"):
        proto = draw(st.sampled_from(WINDOW + RATE))
        c["protocol"] = proto
        if proto in RATE:
            c["packet_size"] = draw(st.integers(200, 1500))
            if proto in ("cbr", "pareto"):
                c["cc"] = {"rate": f"{draw(st.integers(100, 3000))}kbps"}
        else:
            c["tcp"] = draw(st.fixed_dictionaries({}, optional={
                "sack": st.booleans(), "delayed_ack": st.booleans(), "handshake": st.booleans(),
                "timestamps": st.booleans(), "ecn": st.booleans(), "limited_transmit": st.booleans(),
                "mss": st.integers(200, 1460), "initial_window": st.integers(1, 10),
                "partial_ack_timer": st.sampled_from(["slow_but_steady", "impatient"])}))
    if draw(st.booleans()):
        c["start"] = f"{draw(st.integers(0, 500))}ms"
    return c


@st.composite
def scenarios(draw):
    hops = draw(st.integers(1, 3))
    nodes = [f"n{k}" for k in range(hops + 1)]
    links = [{"name": f"l{k}", "from": nodes[k], "to": nodes[k + 1],
              "rate": f"{draw(st.integers(1, 20))}Mbps", "delay": draw(_ms(1, 40)), "queue": draw(queues())}
             for k in range(hops)]
    traffic = [draw(classes(f"c{k}", nodes)) for k in range(draw(st.integers(1, 3)))]
    duration = draw(st.integers(1, 4))
    sc = {"name": "prop", "duration": f"{duration}s", "seed": draw(st.integers(0, 2**32)), "links": links,
          "traffic": traffic, "record": {"interval": f"{draw(st.integers(50, 1000))}ms"}}
    if draw(st.booleans()):
        sc["warmup"] = f"{draw(st.integers(0, duration * 1000 - 1))}ms"
    if draw(st.booleans()):
        sc["record"]["arrivals"] = [links[0]["name"]]
    return sc


def _check_conservation(r):
    s = r.summary
    assert s["whole_run_packets_sent"] == s["whole_run_packets_delivered"] + s["whole_run_packets_dropped"] + s["packets_in_flight"]
    assert (s["packets_in_flight_at_warmup"] + s["measured_packets_sent"]
            == s["measured_packets_delivered"] + s["measured_packets_dropped"] + s["packets_in_flight"])
    assert s["measured_packets_dropped"] == r.links.drops.sum()
    f = r.flows
    finite = f["size"].notna()
    assert (f.bytes_delivered[finite] <= f["size"][finite]).all()
    assert (f.bytes_delivered[f.finished] == f["size"][f.finished]).all()
    assert (f.completion_time[f.finished] > 0).all()
    assert (r.links.utilization <= 1 + 1e-9).all() and (r.links.drops >= 0).all()
    lim = r.links.limit_packets
    assert ((r.links.peak_queue_packets <= lim) | lim.isna()).all()
    assert s["flows_arrived"] == (~f.warmup).sum()
    assert s["measured_packets_dropped"] == r.links.drops.sum()
    assert s["measured_packets_marked"] == r.links.marks.sum()
    if len(r.series):
        assert r.series.time.min() > s["warmup_s"]


@given(scenarios())
def test_random_valid_scenarios_conserve_and_are_deterministic(sc):
    info = cclab.validate(sc)
    assert info["estimate"]["wall_time_s"] < info["estimate"]["limit_wall_time_s"]
    a, b = cclab.run(sc), cclab.run(copy.deepcopy(sc))
    _check_conservation(a)
    same = lambda r: json.dumps({k: v for k, v in r.summary.items() if k not in PERF}, sort_keys=True)  # NaN as NaN
    assert same(a) == same(b)
    assert a.flows.equals(b.flows) and a.links.equals(b.links) and a.series.equals(b.series)
    assert a.arrivals.equals(b.arrivals)


BAD_VALUES = [None, True, -1, 0, 2**64, 1e300, -1e-9, "nan", "inf", "", "ten", "-5s", "1e400Mbps", [], {}, [1, "x"],
              {"x": 1}, "0pkts", "1ns", "4294967296", 4294967295, "1e20s", "0.000001B", "\x00", "🦀"]
TOP_KEYS = {"name", "description", "duration", "warmup", "seed", "nodes", "tcp", "links", "traffic", "record", "limits"}
KEY_PATH = re.compile(r"^(?P<root>[A-Za-z_][A-Za-z0-9_]*)(\[\d+\]|\.[^\s:]+)*: \S")


def _paths(node, prefix=()):
    """Every (path, value) of a document, tables and lists included."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated(draw):
    sc = draw(scenarios())
    paths = [p for p, _ in _paths(sc) if p]
    path = draw(st.sampled_from(paths))
    node = sc
    for k in path[:-1]:
        node = node[k]
    how = draw(st.sampled_from(["value", "value", "unknown_key", "delete"]))
    if how == "value":
        node[path[-1]] = draw(st.sampled_from(BAD_VALUES))
    elif how == "unknown_key" and isinstance(node, dict):
        node[draw(st.sampled_from(["colour", "rat", "delay_ms", "Count"]))] = 1
    elif isinstance(node, dict):
        del node[path[-1]]
    else:
        node.pop(path[-1])
    return sc


@given(mutated())
@settings(max_examples=settings().max_examples * 5)  # validating is cheap: 5 times as many
def test_random_invalid_scenarios_name_a_key_and_never_crash(sc):
    try:
        info = cclab.validate(sc)
    except ScenarioError as exc:
        msg = str(exc)
        m = KEY_PATH.match(msg)
        assert m, f"no key path in {msg!r}"
        assert m["root"] in set(sc) | TOP_KEYS, msg
        assert "Traceback" not in msg and "panicked" not in msg and "internal error" not in msg
        return
    # It validates: it runs, if it is small (the estimate says how long it takes).
    if info["estimate"]["wall_time_s"] < 0.2:
        r = cclab.run(sc)
        _check_conservation(r)


@given(head=st.binary(max_size=300), tail=st.binary(max_size=300), with_header=st.booleans())
@settings(max_examples=settings().max_examples * 5)
def test_random_files_as_flow_lists_are_refused_by_key_without_echo(tmp_path_factory, head, tail, with_header):
    # A marker inside arbitrary bytes, after a valid header or not: the file is either
    # a flow list (it validates) or refused naming traffic[0].file, never echoed.
    body = (b"start,size,class\n" if with_header else b"") + head + b"SECRETMARK" + tail
    f = tmp_path_factory.mktemp("flows") / "f.csv"
    f.write_bytes(body)
    sc = {"duration": "1s", "links": [{"name": "l", "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms"}],
          "traffic": [{"name": "f", "type": "flow_list", "src": "a", "dst": "b", "file": str(f)}]}
    try:
        cclab.validate(sc)
    except ScenarioError as exc:
        msg = str(exc)
        assert msg.startswith(f"traffic[0].file: {f}"), msg
        assert "SECRETMARK" not in msg and "\x00" not in msg, msg


def test_the_profiles_exist():
    # `make fuzz` selects the long campaign with --hypothesis-profile=fuzz.
    assert settings.get_profile("fuzz").max_examples >= 800
    assert math.isfinite(settings.get_profile("default").max_examples)
