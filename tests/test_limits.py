"""Issue 12, the input side: what a run needs is estimated and refused before any
work; output conflicts are validation errors; a file that is not a flow list is
refused by its header without echoing it; the warm-up is excluded from every
statistic, consistently."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import dumbbell, long_lived, poisson

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab.scenario import ScenarioError  # noqa: E402

BASE = {
    "duration": "10s",
    "links": [{"name": "l1", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"}],
    "traffic": [{"name": "t", "type": "poisson", "src": "a", "dst": "b", "load": 0.5,
                 "size": {"dist": "exponential", "mean": "1MB"}}],
}

# The four inputs of the issue that were killed for lack of memory or aborted
# (exit 134), each refused at once with its key.
HUGE = [
    ({**BASE, "duration": "1000s", "record": {"interval": "1ns"}}, "record.interval: the run would take about 1.00e12 events"),
    ({**BASE, "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "1kbps", "count": 4294967295}]},
     "traffic[0].count: about 4.29e9 flows would arrive: the run would need about "),
    ({**BASE, "traffic": [{**BASE["traffic"][0], "size": {"dist": "exponential", "mean": "0.001B"}}]},
     "traffic[0].size: about 6.25e9 flows would arrive; a run holds at most 4294967295 flows"),
    ({**BASE, "duration": "1e8s"}, "duration: the run would take about "),
]


@pytest.mark.parametrize("scenario,message", HUGE, ids=["record-1ns", "cbr-count", "mean-0.001B", "duration-1e8s"])
def test_runs_too_big_are_refused_before_any_work(scenario, message):
    for call in (cclab.validate, cclab.run):
        with pytest.raises(ScenarioError) as exc:
            call(scenario)
        assert str(exc.value).startswith(message), str(exc.value)


@pytest.mark.parametrize("scenario,message", HUGE[:2], ids=["record-1ns", "cbr-count"])
def test_cli_refuses_too_big_runs_with_exit_2(scenario, message, tmp_path):
    import json

    f = tmp_path / "big.json"
    f.write_text(json.dumps(scenario))
    script = ("import json, sys; from cclab import cli; "
              f"sys.exit(cli.main(['run', {str(_as_toml(scenario, tmp_path))!r}, '--quiet']))")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr


def _as_toml(sc: dict, tmp_path: Path) -> Path:
    from test_scenario_errors import _toml

    f = tmp_path / "big.toml"
    f.write_text(_toml(sc))
    return f


def test_validate_reports_the_estimate_and_limits_can_be_raised():
    info = cclab.validate("scenarios/background/single-link.toml")
    est = info["estimate"]
    assert set(est) == {"flows", "packets", "events", "wall_time_s", "series_rows", "arrival_rows", "trace_rows",
                        "pcap_bytes", "memory_bytes", "limit_memory_bytes", "limit_wall_time_s"}
    # 0.6 x 10 Mbps / (8 x 3 MB) = 0.25 flows a second for 2000 s, and the long flow.
    assert est["flows"] == pytest.approx(0.25 * 2000 + 1)
    # Samples every second after the 100 s warm-up, of 2 links and 2 classes, 2 metrics each.
    assert est["series_rows"] == 1900 * 2 * 4
    assert est["limit_memory_bytes"] == 4e9 and est["limit_wall_time_s"] == 3600
    # The keyword overrides the scenario's [limits] table; the CBR case then validates.
    big = HUGE[1][0]
    info = cclab.validate(big, limits={"memory": "10000TB"})
    assert info["estimate"]["flows"] == 4294967295
    assert info["config"]["limits"]["memory_bytes"] == 10**16
    with pytest.raises(ScenarioError, match=r"^limits\.memory: expected a size"):
        cclab.validate(BASE, limits={"memory": 5})
    with pytest.raises(ScenarioError, match=r"^limits: expected a table"):
        cclab.validate(BASE, limits="16GB")
    with pytest.raises(ScenarioError, match=r"^limits: a canonical configuration carries its limits"):
        cclab.run(cclab.validate(BASE)["config"], limits={"memory": "1GB"})


def test_every_shipped_scenario_validates_under_the_default_limits():
    # scenarios/sweeps/ holds sweep files, whose base scenarios are among the others;
    # a testbed scenario is an ordinary one beside its [testbed] table
    from cclab.scenario import read_toml_file

    files = sorted(f for f in Path("scenarios").rglob("*.toml") if "sweeps" not in f.parts)
    assert files
    for f in files:
        raw = read_toml_file(Path(f), "scenario")
        raw.pop("testbed", None)
        est = cclab.validate(raw)["estimate"]
        assert est["memory_bytes"] < est["limit_memory_bytes"] and est["wall_time_s"] < est["limit_wall_time_s"], f


# --- names and values the output tables cannot hold ---------------------------------

@pytest.mark.parametrize("edit,message", [
    (lambda s: s["traffic"][0].update(name="l1"), 'traffic[0].name: "l1" is already a link\'s name'),
    (lambda s: s["traffic"][0].update(name="l1-rev"), 'traffic[0].name: "l1-rev" is already a link\'s name'),
    (lambda s: (s["links"][0].pop("name"), s["traffic"][0].update(name="b->a")), 'traffic[0].name: "b->a" is already a link\'s name'),
    (lambda s: s["links"].append({"name": "l1-rev", "from": "b", "to": "c", "rate": "1Mbps", "delay": "1ms"}),
     'links[1].name: duplicate link name "l1-rev"'),
    (lambda s: s["links"][0].update(queue={"limit": "18446744073709551615pkts"}),
     "links[0].queue.limit: expected a whole number of packets (at most 10^18)"),
    (lambda s: s["links"][0].update(queue={"limit": "2e18B"}), "links[0].queue.limit: expected a size of at most 1EB"),
    (lambda s: s["links"][0].update(rate="1000Gbps", queue={"limit": "1e7s"}),
     "links[0].queue.limit: that much of the link's rate is 1250000000000000000 bytes; a limit may be at most 10^18 bytes"),
    # Used to wrap around in 64 bits and fail in pandas after the run ("cannot safely cast").
    (lambda s: s["links"][0].update(rate="1000Gbps", queue={"limit": "1e9s"}),
     "links[0].queue.limit: that much of the link's rate is 125000000000000000000 bytes; a limit may be at most 10^18 bytes"),
])
def test_conflicts_in_output_tables_are_validation_errors(edit, message):
    import copy

    sc = copy.deepcopy(BASE)
    edit(sc)
    with pytest.raises(ScenarioError) as exc:
        cclab.validate(sc)
    assert str(exc.value).startswith(message), str(exc.value)


def test_the_largest_queue_limit_reaches_the_links_table():
    # 10^18 packets: below the links table's Int64 column (2^63 - 1 = 9.2e18).
    r = cclab.run({**BASE, "duration": "1s", "links": [{**BASE["links"][0], "queue": {"limit": "1000000000000000000pkts"}}]})
    assert r.links.limit_packets.dtype == "Int64" and r.links.limit_packets[0] == 10**18


# --- warnings the issue found missing --------------------------------------------------

def test_a_link_slower_than_the_initial_rto_warns():
    sc = {**BASE, "links": [{**BASE["links"][0], "rate": "1kbps"}],
          "traffic": [{"name": "t", "type": "long_lived", "src": "a", "dst": "b"}]}
    w = cclab.validate(sc)["warnings"]
    assert w == ['class "t": one packet (1500 bytes) takes 12.000 s to send on link "l1", longer than initial_rto '
                 '(1 s): expect spurious timeouts'], w
    assert cclab.validate({**sc, "tcp": {"initial_rto": "20s", "max_rto": "60s"}})["warnings"] == []
    # the ACKs' way back: 52 bytes (40 + 12 of timestamps) at 100 bit/s take 4.16 s
    sc = {**sc, "tcp": {"timestamps": True}, "links": [
        {"name": "fwd", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "duplex": False},
        {"name": "back", "from": "b", "to": "a", "rate": "100bps", "delay": "5ms", "duplex": False}]}
    assert cclab.validate(sc)["warnings"] == [
        'class "t": one ACK (52 bytes) takes 4.160 s to send on link "back", longer than initial_rto (1 s): '
        'expect spurious timeouts']


def test_the_load_warning_counts_headers():
    # Payload load 0.5 with a 1-byte MSS: 41 bytes on the wire per payload byte.
    sc = {**BASE, "tcp": {"mss": 1}}
    w = cclab.validate(sc)["warnings"]
    assert w == ['link "l1": offered load of the Poisson, flow-list and CBR classes is 20.500 (headers included), at or above capacity'], w
    assert cclab.validate(BASE)["warnings"] == []  # 0.5 x 1500/1460 = 0.514


# --- files that are not flow lists -----------------------------------------------------

def _flow_list(file):
    return {**BASE, "traffic": [{"name": "f", "type": "flow_list", "src": "a", "dst": "b", "file": str(file)}]}


def test_a_file_that_is_not_a_flow_list_is_refused_without_echoing_it(tmp_path):
    secret = "root:x:0:0:SECRET-CONTENT:/root:/bin/bash"
    passwd = tmp_path / "passwd"
    passwd.write_text(secret + "\nother:x:1:1::/:/bin/sh\n")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    elf = tmp_path / "elf"
    elf.write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56 + b"start,size,class\n")
    csv_like = tmp_path / "wrong.csv"
    csv_like.write_text("start,bytes,class\n1,100,f\n")
    fake = tmp_path / "fake.csv"
    fake.write_text("start size class SECRET-CONTENT,\n1,100,f\n")
    cases = [
        (passwd, f"traffic[0].file: {passwd}: the first line must be a header naming the columns start, size, class"),
        (binary, f"traffic[0].file: {binary} is not a text (UTF-8) file"),
        (elf, f"traffic[0].file: {elf} is not a text (UTF-8) file"),
        (csv_like, f"traffic[0].file: {csv_like}: the first line must be a header naming the columns start, size, class"),
        (fake, f"traffic[0].file: {fake}: the first line must be a header naming the columns start, size, class"),
        (tmp_path, f"traffic[0].file: {tmp_path} is not a regular file"),
    ]
    if os.path.exists("/dev/zero"):  # a device is never read (it has no end)
        cases.append((Path("/dev/zero"), "traffic[0].file: /dev/zero is not a regular file"))
    if os.path.exists("/etc/passwd"):
        cases.append((Path("/etc/passwd"), "traffic[0].file: /etc/passwd: the first line must be a header"))
    for f, message in cases:
        with pytest.raises(ScenarioError) as exc:
            cclab.validate(_flow_list(f))
        assert str(exc.value) == message or str(exc.value).startswith(message), str(exc.value)
        assert "SECRET" not in str(exc.value) and "root:" not in str(exc.value)


def test_a_flow_list_after_comments_keeps_its_line_numbers(tmp_path):
    f = tmp_path / "flows.csv"
    f.write_text("# generated\n\nstart,size,class\n1.0,100,f\n2.0,oops,f\n")
    with pytest.raises(ScenarioError) as exc:
        cclab.validate(_flow_list(f))
    assert str(exc.value) == f'traffic[0].file: {f} line 5: column "size" expected a finite number'


# --- the warm-up -----------------------------------------------------------------------

def test_the_warmup_is_excluded_from_every_statistic():
    sc = dumbbell(duration="60s", warmup="20s", traffic=[poisson(0.4, mean="200KB"), long_lived()],
                  record={"interval": "2s"})
    r = cclab.run(sc)
    s, f = r.summary, r.flows
    # The flows table keeps every flow, flagged; the counts are its rows after the warm-up
    # (the long-lived flow, which starts at 0 and never ends, is one of the warm-up's).
    assert (f.warmup == (f.arrival < 20)).all() and f.warmup.any()
    counted = ~f.warmup
    assert s["long.flows"] == 0 and s["long.throughput_bps"] > 0
    assert s["flows_arrived"] == counted.sum() == s["short.flows"] + s["long.flows"]
    assert s["flows_finished"] == (counted & f.finished).sum() == s["short.finished"] + s["long.finished"]
    # Packets: the whole run's counters, and the measured period's, each conserved.
    assert s["whole_run_packets_sent"] == s["whole_run_packets_delivered"] + s["whole_run_packets_dropped"] + s["packets_in_flight"]
    assert (s["packets_in_flight_at_warmup"] + s["measured_packets_sent"]
            == s["measured_packets_delivered"] + s["measured_packets_dropped"] + s["packets_in_flight"])
    assert 0 < s["measured_packets_sent"] < s["whole_run_packets_sent"]
    # Every packet sent after the warm-up crosses the one data or ACK link once; the
    # links table counts transmissions that started after the warm-up.
    assert s["measured_packets_dropped"] == r.links.drops.sum()
    # The series starts after the warm-up, and its throughput adds up to the summary's.
    ser = r.series
    q = ser[(ser.metric == "queue_packets") & (ser.name == "bn")]
    assert np.allclose(q.time.to_numpy(), np.arange(22, 61, 2))
    thr = ser[ser.metric == "throughput_bps"]
    for cls in ("short", "long"):
        got = thr[thr.name == cls].value.sum() * 2 / 40
        assert got == pytest.approx(s[f"{cls}.throughput_bps"], rel=1e-12)


def test_without_warmup_the_measured_counters_are_the_whole_run():
    r = cclab.run(dumbbell(duration="10s", traffic=[long_lived()]))
    s = r.summary
    for k in ("sent", "delivered", "dropped", "marked"):
        assert s[f"measured_packets_{k}"] == s[f"whole_run_packets_{k}"]
    assert s["packets_in_flight_at_warmup"] == 0
    assert r.series.time.min() == 1.0
