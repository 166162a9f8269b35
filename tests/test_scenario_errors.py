"""Malformed scenarios: each is rejected with a message naming the key path and
what was expected, through the API (ScenarioError) and the CLI (exit 2, one
line, no traceback)."""
from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab import cli  # noqa: E402
from cclab.scenario import ScenarioError  # noqa: E402

GOOD = {
    "duration": "10s",
    "links": [
        {"name": "l1", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "queue": {"limit": "50pkts"}},
        {"name": "l2", "from": "b", "to": "c", "rate": "10Mbps", "delay": "5ms"},
        {"name": "l3", "from": "x", "to": "y", "rate": "10Mbps", "delay": "5ms"},
    ],
    "traffic": [{"name": "t", "type": "poisson", "src": "a", "dst": "c", "load": 0.5,
                 "size": {"dist": "exponential", "mean": "1MB"}}],
}


def edit(path, value):
    """GOOD with the value at `path` (tuple of keys/indices) replaced; DELETE removes it."""
    sc = copy.deepcopy(GOOD)
    node = sc
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return sc


DELETE = object()

CASES = [
    (edit(("links", 0, "rate"), "ten"), 'links[0].rate: expected a rate like "10Mbps", got "ten"'),
    (edit(("links", 0, "rate"), 10), "links[0].rate: expected a rate like \"10Mbps\", got 10 (write the unit)"),
    (edit(("links", 1, "rate"), "0Mbps"), "links[1].rate: expected a positive rate"),
    (edit(("links", 0, "delay"), "25 parsecs"), 'links[0].delay: expected a duration like "25ms", got "25 parsecs"'),
    (edit(("links", 0, "queue", "limit"), "lots"), "links[0].queue.limit: expected a queue limit"),
    (edit(("links", 0, "queue", "type"), "fifo"), 'links[0].queue.type: unknown queue discipline "fifo"'),
    (edit(("links", 0, "queue", "limit"), "0pkts"), "links[0].queue.limit: expected room for at least one packet, got 0"),
    (edit(("links", 1, "rate"), DELETE), "links[1].rate: missing: the link's transmission rate"),
    (edit(("colour",), "blue"), "colour: unknown key; a scenario takes: name, description, duration"),
    (edit(("links", 0, "bandwidth"), "1Mbps"), "links[0].bandwidth: unknown key; a link takes: name, from, to, rate, delay, queue, duplex"),
    (edit(("links", 0, "dealy"), "1ms"), "links[0].dealy: unknown key (did you mean `delay`?)"),
    (edit(("duration",), "0s"), "duration: expected a positive duration"),
    (edit(("warmup",), "20s"), "warmup: must be shorter than duration"),
    (edit(("traffic", 0, "src"), "mars"), 'traffic[0].src: unknown node "mars"'),
    (edit(("traffic", 0, "dst"), "y"), 'traffic[0].dst: no route from "a" to "y"'),
    (edit(("traffic", 0, "route"), ["l1", "l3"]), "traffic[0].route[1]: route does not connect"),
    (edit(("traffic", 0, "route"), ["l1", "nope"]), 'traffic[0].route[1]: unknown link "nope"'),
    (edit(("traffic", 0, "protocol"), "cubic"), 'traffic[0].protocol: unknown protocol "cubic"'),
    (edit(("traffic", 0, "type"), "bursty"), 'traffic[0].type: unknown traffic type "bursty"'),
    (edit(("traffic", 0, "size"), DELETE), "traffic[0].size: missing"),
    (edit(("traffic", 0, "load"), -0.5), "traffic[0].load: expected a positive fraction"),
    (edit(("traffic", 0, "size"), {"dist": "pareto", "mean": "1MB", "shape": 0.9}), "traffic[0].size.shape: expected a shape above 1"),
    (edit(("traffic", 0, "size"), {"dist": "exponential", "mean": "big"}), 'traffic[0].size.mean: expected a size like "3MB", got "big"'),
    (edit(("traffic", 0, "size"), {"dist": "normal", "mean": "1MB"}), 'traffic[0].size.dist: unknown distribution "normal"'),
    (edit(("traffic", 0, "count"), 3), "traffic[0].count: only long_lived or cbr traffic takes `count`"),
    (edit(("traffic",), []), "traffic: expected at least one traffic class"),
    (edit(("tcp",), {"mss": 0}), "tcp.mss: expected a positive number of bytes"),
    (edit(("tcp",), {"min_rto": "1 fortnight"}), 'tcp.min_rto: expected a duration like "25ms"'),
    (edit(("tcp",), {"partial_ack_timer": "eager"}),
     'tcp.partial_ack_timer: expected "slow_but_steady" or "impatient", got "eager"'),
    (edit(("tcp",), {"limited_transmit": "yes"}), 'tcp.limited_transmit: expected true or false, got "yes"'),
    (edit(("traffic", 0), {"name": "f", "type": "flow_list", "src": "a", "dst": "c", "file": "/nonexistent/f.csv"}),
     "traffic[0].file: cannot read /nonexistent/f.csv"),
]


@pytest.mark.parametrize("scenario,message", CASES, ids=[c[1][:40] for c in CASES])
def test_api_rejects_with_key_path(scenario, message):
    with pytest.raises(ScenarioError) as exc:
        cclab.validate(scenario)
    assert message in str(exc.value)


def _toml(sc: dict) -> str:
    """Minimal TOML writer for the test scenarios (strings, numbers, lists, tables)."""
    def val(v):
        if isinstance(v, str):
            return '"' + v + '"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + "}"
        raise TypeError(v)
    lines = []
    for k, v in sc.items():
        if not (isinstance(v, list) and v and isinstance(v[0], dict)):
            lines.append(f"{k} = {val(v)}")
    for k, v in sc.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                lines.append(f"[[{k}]]")
                lines.extend(f"{kk} = {val(vv)}" for kk, vv in item.items())
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("scenario,message", CASES, ids=[c[1][:40] for c in CASES])
def test_cli_exits_nonzero_with_message(scenario, message, tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(_toml(scenario))
    code = cli.main(["run", str(f), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("cclab: error: ")
    assert message in err
    assert "Traceback" not in err


def test_cli_subprocess_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "10s"\n[[links]]\nfrom = "a"\nto = "b"\nrate = "ten"\ndelay = "1ms"\n')
    syntax = tmp_path / "syntax.toml"
    syntax.write_text("duration = \n")
    for f, msg in [(bad, 'links[0].rate: expected a rate like "10Mbps", got "ten"'),
                   (syntax, "invalid TOML"), (tmp_path / "missing.toml", "no such scenario file")]:
        p = subprocess.run([sys.executable, "-m", "cclab.cli", "run", str(f)], capture_output=True, text=True)
        assert p.returncode == 2, p.stderr
        assert msg in p.stderr
        assert "Traceback" not in p.stderr


def test_good_scenario_validates():
    info = cclab.validate(GOOD)
    assert info["duration_s"] == 10.0 and info["warnings"] == []


def test_cli_json_summary_is_valid_json(tmp_path, capsys):
    import json

    f = tmp_path / "ok.toml"
    f.write_text(_toml({**GOOD, "traffic": [{"name": "l", "type": "long_lived", "src": "a", "dst": "c"}]}))
    assert cli.main(["run", str(f), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["l.flows"] == 1 and d["l.mean_completion_time_s"] is None
