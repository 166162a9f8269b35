"""Traces from Python: the tables and their units, the libpcap captures read by a
real reader (dpkt), save and load, the CLI's --set and plots, and the checks on
bad input. The engine's invariants on traces are in crates/sim/tests/trace.rs."""
from __future__ import annotations

import io
from collections import Counter
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cclab
from cclab.scenario import ScenarioError
from cclab.traces import pcap_name

dpkt = pytest.importorskip("dpkt")

# A fast access link into a 10 Mbps bottleneck (25-packet drop-tail queue): a long
# NewReno flow, a long SACK flow with timestamps (from 0.5 s), a LEDBAT flow and
# short flows that open with a handshake; 6 simulated seconds.
SCENARIO = {
    "name": "traced",
    "duration": "6s",
    "seed": 5,
    "links": [
        {"name": "access", "from": "s", "to": "r", "rate": "100Mbps", "delay": "1ms", "queue": {"limit": "1000pkts"}},
        {"name": "bottleneck", "from": "r", "to": "d", "rate": "10Mbps", "delay": "10ms", "queue": {"limit": "25pkts"}},
    ],
    "traffic": [
        {"name": "reno", "type": "long_lived", "src": "s", "dst": "d"},
        {"name": "sack", "type": "long_lived", "src": "s", "dst": "d", "start": "0.5s",
         "tcp": {"sack": True, "timestamps": True}},
        {"name": "ledbat", "type": "long_lived", "src": "s", "dst": "d", "protocol": "ledbat"},
        {"name": "short", "type": "poisson", "src": "s", "dst": "d", "load": 0.2,
         "size": {"dist": "exponential", "mean": "60KB"}, "tcp": {"handshake": True}},
    ],
}
TRACE = {"flows": [{}], "links": ["access", "bottleneck"], "pcap": ["access", "bottleneck"]}


@pytest.fixture(scope="module")
def traced():
    return cclab.run(SCENARIO, trace=TRACE)


def test_tables_have_units_in_their_names_and_change_no_result(traced):
    plain = cclab.run(SCENARIO)
    for table in ("flows", "links", "series"):
        pd.testing.assert_frame_equal(getattr(plain, table), getattr(traced, table))
    t = traced.traces
    assert list(t.flows.columns) == ["time_s", "flow", "variable", "value"]
    assert list(t.packets.columns) == ["time_s", "flow", "event", "seq", "end", "link"]
    assert list(t.links.columns) == ["time_s", "link", "event", "flow", "seq", "size_bytes", "ack",
                                     "queue_packets", "queue_bytes", "wait_s"]
    names = set(t.flows["variable"].astype(str))
    assert {"cwnd_bytes", "ssthresh_bytes", "in_flight_bytes", "srtt_s", "rttvar_s", "rto_s", "rtt_sample_s",
            "owd_sample_s", "recovery", "ledbat.queuing_delay_s"} <= names
    # Every name of a variable carries its unit, or is a count, a state or a fraction.
    unitless = {"recovery", "ledbat.off_target"}
    assert all(n.endswith(("_bytes", "_s", "_bps", "_packets")) or n in unitless for n in names), names
    assert not plain.traces and traced.traces
    # Every flow traced ({} selects all), at its own id.
    assert set(t.flows["flow"]) == set(traced.flows["id"])


def test_a_flows_wide_table_carries_states_forward(traced):
    wide = traced.traces.flow(0)
    assert wide.index.is_monotonic_increasing
    assert wide["cwnd_bytes"].notna().all() and (wide["cwnd_bytes"] >= 1460).all()
    # Samples are not carried: a row without a new RTT sample has none.
    assert wide["rtt_sample_s"].isna().any() and wide["srtt_s"].iloc[-1] > 0.022
    assert traced.traces.flow(10**6).empty


def _capture(traces, link: str):
    """(timestamp, IP packet) of every record of a link's capture, read by dpkt."""
    r = dpkt.pcap.Reader(io.BytesIO(traces.pcap[link]))
    assert r.datalink() == 101  # LINKTYPE_RAW in files (DLT_RAW is 12 or 14 by platform)
    return [(ts, dpkt.ip.IP(buf)) for ts, buf in r]


def _flow_of(ip) -> int:
    """The flow id of a packet, from its ports (docs/engine.md: the sender's port is
    1024 + id mod 64512, the receiver's 5001 + id div 64512)."""
    tcp = ip.data
    back = ip.src > ip.dst  # ACKs come from the receiver (node d, the larger address)
    sender, receiver = (tcp.dport, tcp.sport) if back else (tcp.sport, tcp.dport)
    return (receiver - 5001) * 64512 + sender - 1024


def test_the_capture_reads_as_the_run_counted_it(traced):
    # At the bottleneck: one record per transmission that started (the links table's
    # packets_sent), each at the transmission's start as the links trace gives it,
    # in the same order, with the trace's flow and sequence number (+1: the SYN's).
    t = traced.traces
    cap = _capture(t, "bottleneck")
    row = traced.links.set_index("name").loc["bottleneck"]
    assert len(cap) == row["packets_sent"]
    q = t.links[t.links["link"] == "bottleneck"]
    started = q[(q["event"].isin(["enqueue", "mark"]) & (q["wait_s"] == 0)) | (q["event"] == "dequeue")]
    assert len(started) == len(cap)
    flows = [_flow_of(ip) for _, ip in cap]
    assert flows == list(started["flow"])
    seqs = [ip.data.seq - 1 if not ip.data.flags & dpkt.tcp.TH_SYN else -1 for _, ip in cap]
    want = [s if not syn else -1 for s, syn in zip(started["seq"], started["size_bytes"] == 40)]
    assert seqs == want
    times = np.array([float(ts) for ts, _ in cap])
    assert np.abs(times - started["time_s"].to_numpy()).max() < 1e-9
    assert all(Decimal(ts) * 10**9 % 1 == 0 for ts, _ in cap[:100])  # nanosecond timestamps
    # IPv4 as the RFC wants it: version 4, a header checksum that sums to zero, the
    # total length the packet's size on the wire, ECN bits off (no ECN here).
    assert [ip.len for _, ip in cap] == list(started["size_bytes"])
    for _, ip in cap[:200]:
        assert ip.v == 4 and ip.tos & 3 == 0 and dpkt.in_cksum(bytes(ip)[:20]) == 0
    # The SACK flow carries timestamps: TSval is its send time in microseconds.
    sack = traced.flows.set_index("class").loc["sack", "id"]
    opts = [dict(dpkt.tcp.parse_opts(ip.data.opts)) for _, ip in cap if _flow_of(ip) == sack][:50]
    assert opts and all(dpkt.tcp.TCP_OPT_TIMESTAMP in o for o in opts)


def test_retransmissions_are_where_the_engine_counted_them(traced):
    # The access link sees every segment the senders send and drops none: a segment
    # whose sequence number is below the highest one its flow sent before is a
    # retransmission, and their count per flow is the flows table's (resent SYNs
    # included). Acknowledgments on the way back carry SACK blocks for the SACK flow.
    cap = _capture(traced.traces, "access")
    highest: dict[int, int] = {}
    resent = Counter()
    for _, ip in cap:
        tcp = ip.data
        flow = _flow_of(ip)
        end = tcp.seq + ip.len - 20 - tcp.off * 4 if not tcp.flags & dpkt.tcp.TH_SYN else 0
        if flow in highest and (end <= highest[flow] or tcp.flags & dpkt.tcp.TH_SYN):
            resent[flow] += 1
        highest[flow] = max(highest.get(flow, 0), end)
    want = dict(zip(traced.flows["id"], traced.flows["retransmissions"]))
    assert sum(want.values()) > 20
    assert {f: resent.get(f, 0) for f in want} == want
    acks = _capture(traced.traces, "bottleneck-rev") if "bottleneck-rev" in traced.traces.pcap else []
    assert not acks  # only the links named are captured
    # The trace's retransmissions are the same events.
    p = traced.traces.packets
    assert Counter(p[p["event"] == "retransmit"]["flow"]) + Counter(p[(p["event"] == "syn")]["flow"]) - \
        Counter(set(p[p["event"] == "syn"]["flow"])) == Counter({f: n for f, n in want.items() if n})


def test_sack_blocks_are_in_the_captured_acks():
    run = cclab.run(SCENARIO, trace={"flows": [{"class": "sack"}], "pcap": ["bottleneck-rev"]})
    sack = run.flows.set_index("class").loc["sack", "id"]
    blocks = 0
    for _, ip in _capture(run.traces, "bottleneck-rev"):
        if _flow_of(ip) == sack:
            for kind, data in dpkt.tcp.parse_opts(ip.data.opts):
                if kind == dpkt.tcp.TCP_OPT_SACK:
                    blocks += len(data) // 8
    p = run.traces.packets
    assert blocks > 10 and blocks == (p["event"] == "sack").sum()


def test_save_and_load_keep_the_traces(traced, tmp_path):
    traced.save(tmp_path / "run")
    files = sorted(f.name for f in (tmp_path / "run" / "traces").iterdir())
    assert files == ["access.pcap", "bottleneck.pcap", "flows.parquet", "links.parquet", "packets.parquet"]
    back = cclab.load(tmp_path / "run")
    for table in ("flows", "packets", "links"):
        pd.testing.assert_frame_equal(getattr(back.traces, table), getattr(traced.traces, table))
    assert back.traces.pcap == traced.traces.pcap
    html = back._repr_html_()
    assert "<table" in html and "traced" in html and "pcap: access" in html
    assert pcap_name("a->b c") == "a-to-b_c.pcap"


def test_validate_estimates_the_traces_and_limits_refuse_them():
    est = cclab.validate(SCENARIO, trace=TRACE)["estimate"]
    assert est["trace_rows"] > 100_000 and est["pcap_bytes"] > 1e6
    plain = cclab.validate(SCENARIO)["estimate"]
    assert plain["trace_rows"] == 0
    # A memory limit between the run's need untraced and traced refuses the trace.
    link = cclab.validate(SCENARIO, trace={"links": ["access"]})["estimate"]
    limit = (plain["memory_bytes"] + link["memory_bytes"]) / 2
    with pytest.raises(ScenarioError, match=r"^trace.links\[0\]: the traces would hold about"):
        cclab.validate(SCENARIO, trace={"links": ["access"]}, limits={"memory": f"{limit:.0f}B"})


@pytest.mark.parametrize("trace, message", [
    ({"flows": [{"class": "nope"}]}, 'trace.flows[0].class: unknown class "nope"; classes are: reno, sack, ledbat, short'),
    ({"links": ["bottlenek"]}, 'trace.links[0]: unknown link "bottlenek"'),
    ({"flows": [{"first": 0}]}, "trace.flows[0].first: expected at least 1 flow"),
    ({"flows": [{"min_size": "2MB", "max_size": "1MB"}]}, "trace.flows[0].max_size: must be at least min_size"),
    ({"flows": [{"clas": "reno"}]}, "trace.flows[0].clas: unknown key (did you mean `class`?)"),
    ({"pcaps": ["access"]}, "trace.pcaps: unknown key (did you mean `pcap`?)"),
    ({"access": ["reno"]}, 'trace.access[0]: class "reno" has no access control'),
    ({"interval": "fast"}, "trace.interval: expected a duration"),
])
def test_bad_trace_tables_are_refused_by_key(trace, message):
    with pytest.raises(ScenarioError) as e:
        cclab.validate(SCENARIO, trace=trace)
    assert str(e.value).startswith(message), str(e.value)


def test_the_canonical_configuration_carries_the_trace(traced):
    assert cclab.validate(SCENARIO)["config"].get("trace") is None  # absent when nothing is traced
    cfg = traced.config
    assert cfg["trace"]["links"] == [0, 2] and cfg["trace"]["flows"] == [
        {"class": None, "ids": None, "min_bytes": None, "max_bytes": None, "first": None}]
    again = cclab.run({**cfg, "duration_ns": 1_000_000_000})
    assert len(again.traces.links) > 0


def test_the_cli_traces_with_set_and_plots_flows_and_links(tmp_path, capsys):
    from cclab.cli import main

    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "2s"\n[[links]]\nname = "bottleneck"\nfrom = "a"\nto = "b"\nrate = "10Mbps"\ndelay = "10ms"\n'
        'queue = { limit = "20pkts" }\n[[traffic]]\nname = "long"\ntype = "long_lived"\nsrc = "a"\ndst = "b"\n'
        '[[traffic]]\nname = "lp"\ntype = "long_lived"\nsrc = "a"\ndst = "b"\nprotocol = "tcp_lp"\n')
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--quiet", "--out", str(out), "--set", 'trace.flows=[{class="long"}, {class="lp"}]',
                 "--set", 'trace.links=["bottleneck"]', "--set", 'trace.pcap=["bottleneck"]']) == 0
    assert (out / "traces" / "bottleneck.pcap").is_file()
    capsys.readouterr()
    for args, png in ((["--flow", "1"], "flow-1.png"), (["--link", "bottleneck"], "link-bottleneck.png"),
                      (["--flow", "0", "--from", "1", "--to", "2", "--out", str(tmp_path / "z.png")], None)):
        assert main(["plot", str(out), *args]) == 0
        path = Path(capsys.readouterr().out.split("wrote ")[1].strip())
        assert path.stat().st_size > 20_000 and (png is None or path.name == png)
    for args, message in ((["--flow", "7"], "--flow 7: nothing traced for this flow; traced flows: 0, 1"),
                          (["--link", "bottleneck-rev"], "--link bottleneck-rev: the run did not trace this link"),
                          (["--link", "x"], "--link x: no such link"),
                          (["--from", "1"], "--from and --to choose the time window")):
        assert main(["plot", str(out), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"cclab: error: {message}"), err
    assert main(["run", str(scenario), "--quiet", "--set", 'trace.links=["nope"]']) == 2
    assert 'trace.links[0]: unknown link "nope"' in capsys.readouterr().err
