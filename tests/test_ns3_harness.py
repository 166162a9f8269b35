"""The ns-3 harness's translation of a cclab scenario (bench/ns3/ns3run.py), checked
without ns-3: the program input it writes, what it refuses, and that cclab replays
an explicit flow list exactly as it ran the Poisson arrivals it came from."""
import copy
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "ns3"))
import ns3run  # noqa: E402

import cclab  # noqa: E402

REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"
SMALL = {
    "name": "small", "duration": "60s", "warmup": "5s", "seed": 2,
    "tcp": {"receive_window": "64KiB"},
    "links": [{"name": "bn", "from": "s", "to": "d", "rate": "10Mbps", "delay": "10ms",
               "queue": {"type": "droptail", "limit": "30pkts"}}],
    "traffic": [
        {"name": "web", "type": "poisson", "src": "s", "dst": "d", "load": 0.5,
         "size": {"dist": "exponential", "mean": "100KB"}},
        {"name": "bulk", "type": "long_lived", "src": "s", "dst": "d", "count": 2},
    ],
    "record": {"interval": "0s"},
}


def _input(sc, seed=1):
    """The ns-3 program's input for `sc` as a comparison runs it (NS3_TCP on top)."""
    return ns3run.ns3_input(ns3run.ns3_plan(sc), ns3run.flow_list(sc, seed), 60.0, 5.0, seed).splitlines()


def _mixed(protocol, cc=None, tcp=None):
    """SMALL with its Poisson class run by `protocol` beside a NewReno long flow."""
    sc = copy.deepcopy(SMALL)
    sc["tcp"].update({"sack": True, "recovery": "prr", "timestamps": True} if tcp is None else tcp)
    sc["traffic"][0]["protocol"] = protocol
    if cc is not None:
        sc["traffic"][0]["cc"] = cc
    return sc


def test_input_for_the_reference_scenario():
    plan = ns3run.ns3_plan(REFERENCE)
    flows = ns3run.flow_list(REFERENCE, 1)
    text = ns3run.ns3_input(plan, flows, 2000.0, 100.0, 1)
    lines = text.splitlines()
    # One full-duplex link with the 80 ms buffer as 100,000 bytes (10 Mbps x 80 ms / 8).
    assert [l for l in lines if l.startswith("link ")] == ["link bottleneck 0 1 10000000.0 0.025 0 100000"]
    # The reference's own TCP: no SACK, so classic (RFC 6582) recovery, no timestamps.
    for rec in ("mss 1460", "initial_window 10", "min_rto 0.2", "rcv_buf 131072", "snd_buf 16777216",
                "timestamps 0", "delayed_ack 0", "limited_transmit 1", "sack 0", "recovery classic", "mtu 1500"):
        assert rec in lines
    assert [l for l in lines if l.startswith("class ")] == ["class short newreno", "class long newreno"]
    flow_lines = [l.split() for l in lines if l.startswith("flow ")]
    assert len(flow_lines) == len(flows)
    starts = [float(f[4]) for f in flow_lines]
    assert starts == sorted(starts)
    # The long-lived flow: class 1, size -1, at t = 0; the Poisson ones have their sizes.
    assert flow_lines[0] == ["flow", "1", "0", "1", "0.0", "-1"]
    sizes = np.array([int(f[5]) for f in flow_lines[1:]])
    np.testing.assert_array_equal(sizes, flows["size"].iloc[1:].astype(np.int64).to_numpy())


def test_ns3_tcp_is_what_ns3_does():
    assert ns3run.NS3_TCP == {"handshake": True, "limited_transmit": True, "partial_ack_timer": "impatient",
                              "rescue_retransmission": False, "sack_after_timeout": "keep"}
    tcp = ns3run.ns3_plan(_mixed("newreno"))["tcp"]
    assert (tcp["handshake"], tcp["limited_transmit"], tcp["partial_ack_timer"], tcp["rescue_retransmission"]) \
        == (True, True, "impatient", False)


@pytest.mark.parametrize("tcp,records", [
    # ns-3's defaults: SACK, PRR, timestamps (header stays 40: the option's 12 bytes come with timestamps).
    # ns-3 devices get an MTU that takes the timestamp option's 12 bytes (else IPv4 fragments).
    ({"sack": True, "recovery": "prr", "timestamps": True}, ["sack 1", "recovery prr", "timestamps 1", "mtu 1512"]),
    ({"sack": True, "recovery": "halve"}, ["sack 1", "recovery classic", "timestamps 0", "mtu 1500"]),
    ({"sack": False, "timestamps": True}, ["sack 0", "recovery classic", "timestamps 1"]),
    ({"delayed_ack": True, "delayed_ack_timeout": "40ms"}, ["delayed_ack 1", "delayed_ack_timeout 0.04"]),
])
def test_tcp_options_come_from_the_config(tcp, records):
    sc = copy.deepcopy(SMALL)
    sc["tcp"].update(tcp)
    lines = _input(sc)
    for rec in records:
        assert rec in lines


@pytest.mark.parametrize("protocol,cc,record", [
    ("newreno", None, "class web newreno"),
    # ns-3's TcpLedbat defaults: its vectors of length 10 and 4 hold 9 and 3 values.
    ("ledbat", {"variant": "ns3"},
     "class web ledbat TargetDelay=100ms Gain=1.0 BaseHistoryLen=10 NoiseFilterLen=4 MinCwnd=2 SSParam=yes"),
    ("ledbat", {"variant": "ns3", "target": "25ms"},
     "class web ledbat TargetDelay=25ms Gain=1.0 BaseHistoryLen=10 NoiseFilterLen=4 MinCwnd=2 SSParam=yes"),
    ("ledbat", {"variant": "ns3", "gain": 0.5, "base_history": 4, "current_filter": 1, "min_cwnd": 1,
                "slow_start": False, "init_cwnd": 10},
     "class web ledbat TargetDelay=100ms Gain=0.5 BaseHistoryLen=5 NoiseFilterLen=2 MinCwnd=1 SSParam=no"),
    ("tcp_lp", {"variant": "ns3"}, "class web tcp_lp"),
    ("vegas", None, "class web vegas Alpha=2 Beta=4 Gamma=1"),
    ("vegas", {"alpha": 1, "beta": 3, "gamma": 2}, "class web vegas Alpha=1 Beta=3 Gamma=2"),
])
def test_class_records(protocol, cc, record):
    lines = _input(_mixed(protocol, cc))
    assert [l for l in lines if l.startswith("class ")] == [record, "class bulk newreno"]


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["links"][0].update(duplex=False) or s["links"].append(
        {"name": "back", "from": "d", "to": "s", "rate": "1Mbps", "delay": "10ms"}),
     "link 'bn' has no reverse link"),
    (lambda s: s["tcp"].update(header=52), "tcp.header = 52: .* tcp.timestamps"),
    (lambda s: s["tcp"].update(byte_counting=2), "tcp.byte_counting = 2: ns-3 3.44 has no RFC 3465"),
    (lambda s: s["tcp"].update(max_rto="30s"), "caps the timeout at 60 s"),
    (lambda s: s["traffic"][1].update(tcp={"mss": 1000}), "TCP parameters differ"),
    (lambda s: s["traffic"].append({"name": "udp", "type": "cbr", "src": "s", "dst": "d", "rate": "1Mbps"}),
     "rate-based \\(cbr\\) classes"),
    (lambda s: s["traffic"][0].update(protocol="reno"), "no Reno"),
    (lambda s: s["traffic"][0].update(protocol="fast"), "no FAST TCP"),
    (lambda s: s["traffic"][0].update(protocol="multcp"), "no MulTCP"),
    (lambda s: s["traffic"][0].update(protocol="vegas", cc={"alpha": 2.5, "beta": 4}), "cc.alpha = 2.5"),
    (lambda s: s["traffic"][0].update(protocol="ledbat"), "cc.implementation = 'ns2'"),
    (lambda s: s["traffic"][0].update(protocol="ledbat", cc={"variant": "rfc6817"}),
     "cc.implementation = 'rfc6817'"),
    (lambda s: s["traffic"][0].update(protocol="ledbat", cc={"variant": "ns3", "target": "25.5ms"}),
     "whole milliseconds"),
    (lambda s: s["traffic"][0].update(protocol="ledbat", cc={"variant": "ns3", "allowed_increase": 1}),
     "cc.allowed_increase = 1"),
    (lambda s: s["traffic"][0].update(protocol="ledbat", cc={"variant": "ns3", "init_cwnd": 2}),
     "cc.init_cwnd = 2"),
    (lambda s: s["tcp"].update(timestamps=False) or s["traffic"][0].update(protocol="ledbat",
                                                                            cc={"variant": "ns3"}),
     "TcpLedbat measures delays from TCP timestamps"),
    (lambda s: s["tcp"].update(timestamps=False) or s["traffic"][0].update(protocol="tcp_lp",
                                                                            cc={"variant": "ns3"}),
     "TcpLp measures delays from TCP timestamps"),
    (lambda s: s["traffic"][0].update(protocol="tcp_lp"), "cc.variant = 'paper'"),
    (lambda s: s["traffic"][0].update(protocol="tcp_lp", cc={"variant": "ns3", "delta": 0.2}),
     "cc.delta = 0.2; ns-3's TcpLp has no attributes"),
])
def test_refuses_what_ns3_side_cannot_model(edit, message):
    sc = copy.deepcopy(SMALL)
    sc["tcp"]["timestamps"] = True
    edit(sc)
    with pytest.raises(ns3run.Unsupported, match=message):
        _input(sc)


@pytest.mark.parametrize("tcp,message", [
    ({"sack": True}, "tcp.rescue_retransmission = true: ns-3 3.44 has no RFC 6675 rescue"),
    ({}, "tcp.handshake = false"),
    ({"handshake": True}, "tcp.limited_transmit = false"),
    ({"handshake": True, "limited_transmit": True}, "tcp.partial_ack_timer = 'slow_but_steady'"),
    ({"handshake": True, "limited_transmit": True, "partial_ack_timer": "impatient", "sack": True,
      "rescue_retransmission": False}, "tcp.sack_after_timeout = 'clear': ns-3 3.44 runs 'keep'"),
    ({"handshake": True, "limited_transmit": True, "partial_ack_timer": "impatient", "loss_recovery": "ns2"},
     "tcp.loss_recovery = 'ns2': ns-3 3.44 runs 'rfc'"),
])
def test_refuses_tcp_without_ns3s_behaviour(tcp, message):
    # Without NS3_TCP on top, a scenario's TCP is refused where it is not ns-3's.
    sc = copy.deepcopy(SMALL)
    sc["tcp"].update(tcp)
    with pytest.raises(ns3run.Unsupported, match=message):
        ns3run.ns3_input(ns3run.plan(cclab.validate(sc)["config"]), ns3run.flow_list(sc, 1), 60.0, 5.0, 1)
    # A class's own tcp table wins over NS3_TCP, and is refused the same way.
    sc = copy.deepcopy(SMALL)
    for t in sc["traffic"]:
        t["tcp"] = dict(tcp, rescue_retransmission=True, handshake=tcp.get("handshake", False),
                        limited_transmit=tcp.get("limited_transmit", False),
                        partial_ack_timer="slow_but_steady")
    with pytest.raises(ns3run.Unsupported):
        _input(sc)


RED = {"type": "red", "limit": "100pkts", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1}


def _red(ecn=False, **queue):
    """SMALL through a RED bottleneck (`RED` with `queue` on top), marking with `ecn`."""
    sc = copy.deepcopy(SMALL)
    sc["links"][0]["queue"] = dict(RED, ecn=ecn, **queue)
    sc["tcp"].update({"sack": True, "timestamps": True, "recovery": "halve" if ecn else "prr", "ecn": ecn})
    return sc


@pytest.mark.parametrize("ecn", [False, True])
def test_red_record(ecn):
    lines = _input(_red(ecn))
    # The link keeps its 100-packet buffer; the red record follows it: MaxSize 99,
    # MinTh 4, MaxTh 14 (ns-3's RED does not count the device's packet), LInterm
    # 1/max_p = 10, and ns-3's defaults where the queue table says nothing (QW 0.002,
    # MeanPktSize 500, Gentle, Wait, UseHardDrop).
    i = next(k for k, l in enumerate(lines) if l.startswith("link "))
    assert lines[i] == "link bn 0 1 10000000.0 0.01 100 0"
    assert lines[i + 1] == f"red 99 4.0 14.0 10.0 0.002 500 1 1 {int(ecn)} 1"
    assert f"ecn {int(ecn)}" in lines
    assert sum(l.startswith("red ") for l in lines) == 1


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["links"][0].update(queue={"type": "linear", "limit": "100pkts", "min_th": "5pkts",
                                           "max_th": "15pkts", "max_p": 0.1}),
     "queue 'linear' is not in the ns-3 harness"),
    (lambda s: s["links"][0]["queue"].update(limit="150KB", min_th="7500B", max_th="22500B"), "RED in bytes"),
    (lambda s: s["links"][0]["queue"].update(limit="150KB"), "RED in bytes"),
    (lambda s: s["links"][0]["queue"].update(limit="1pkts", min_th="1pkts", max_th="2pkts"),
     "a RED limit of 1 packet"),
    (lambda s: s["links"][0]["queue"].update(min_th="0pkts"), "min_th = 0 packets"),
    (lambda s: s["tcp"].update(recovery="prr"), "tcp.ecn = true with recovery = \"prr\""),
])
def test_refuses_red_it_cannot_mirror(edit, message):
    sc = _red(ecn=True)
    edit(sc)
    with pytest.raises(ns3run.Unsupported, match=message):
        _input(sc)


def test_replay_keeps_each_class_protocol_and_tcp(tmp_path):
    sc = _mixed("ledbat", {"variant": "ns3", "target": "25ms"})
    sc["traffic"][0]["tcp"] = {"initial_window": 4}
    sc["traffic"][1]["tcp"] = {"initial_window": 4}
    flows = ns3run.flow_list(sc, 1)
    replay = ns3run.replay_scenario(sc, flows, tmp_path)
    web = replay["traffic"][0]
    assert web["type"] == "flow_list" and web["protocol"] == "ledbat"
    assert web["cc"] == {"variant": "ns3", "target": "25ms"} and web["tcp"] == {"initial_window": 4}
    assert all(replay["tcp"][k] == v for k, v in ns3run.NS3_TCP.items())
    cfg = cclab.validate(replay)["config"]
    assert cfg["classes"][0]["transport"]["cc"]["params"]["target_ns"] == 25_000_000


def test_replaying_the_flow_list_reproduces_the_arrivals():
    flows = ns3run.flow_list(SMALL, 4)
    native = cclab.run(SMALL, seed=4).flows
    # Same TCP as the scenario: the replay differs from the native run only in how
    # arrivals are given, so the tables are identical.
    replay = ns3run.run_cclab(SMALL, 4, flows, ns3_tcp=False).flows
    cols = ["class", "size", "arrival", "finish", "bytes_delivered", "retransmissions", "timeouts"]
    a = native.sort_values(["arrival", "class"])[cols].reset_index(drop=True)
    b = replay.sort_values(["arrival", "class"])[cols].reset_index(drop=True)
    assert list(a["class"].astype(str)) == list(b["class"].astype(str))
    np.testing.assert_allclose(a[["size", "arrival", "finish"]].to_numpy(float),
                               b[["size", "arrival", "finish"]].to_numpy(float), rtol=0, atol=1e-9, equal_nan=True)
    assert (a[["bytes_delivered", "retransmissions", "timeouts"]].to_numpy()
            == b[["bytes_delivered", "retransmissions", "timeouts"]].to_numpy()).all()
    # With ns-3's TCP behaviour the arrivals stay, and the handshake makes every
    # finished flow at least one round trip (2 x 10 ms) slower than it could be.
    ns3ish = ns3run.run_cclab(SMALL, 4, flows).flows
    assert len(ns3ish) == len(native)
    done = ns3ish[ns3ish["finished"]]
    assert (done["completion_time"] > 0.02).all()
