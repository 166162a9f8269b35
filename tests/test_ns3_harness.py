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


def test_input_for_the_reference_scenario():
    plan = ns3run.plan(cclab.validate(REFERENCE)["config"])
    flows = ns3run.flow_list(REFERENCE, 1)
    text = ns3run.ns3_input(plan, flows, 2000.0, 100.0, 1)
    lines = text.splitlines()
    # One full-duplex link with the 80 ms buffer as 100,000 bytes (10 Mbps x 80 ms / 8).
    assert [l for l in lines if l.startswith("link ")] == ["link bottleneck 0 1 10000000.0 0.025 0 100000"]
    for rec in ("mss 1460", "initial_window 10", "min_rto 0.2", "rcv_buf 131072", "snd_buf 16777216",
                "timestamps 0", "delayed_ack 0", "limited_transmit 1", "sack 0"):
        assert rec in lines
    flow_lines = [l.split() for l in lines if l.startswith("flow ")]
    assert len(flow_lines) == len(flows)
    starts = [float(f[4]) for f in flow_lines]
    assert starts == sorted(starts)
    # The long-lived flow: class 1, size -1, at t = 0; the Poisson ones have their sizes.
    assert flow_lines[0] == ["flow", "1", "0", "1", "0.0", "-1"]
    sizes = np.array([int(f[5]) for f in flow_lines[1:]])
    np.testing.assert_array_equal(sizes, flows["size"].iloc[1:].astype(np.int64).to_numpy())


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["links"][0].update(duplex=False) or s["links"].append(
        {"name": "back", "from": "d", "to": "s", "rate": "1Mbps", "delay": "10ms"}),
     "link 'bn' has no reverse link"),
    (lambda s: s["tcp"].update(header=48), "tcp.header = 48"),
    (lambda s: s["traffic"].append({"name": "udp", "type": "cbr", "src": "s", "dst": "d", "rate": "1Mbps"}),
     "rate-based \\(cbr\\) classes"),
])
def test_refuses_what_ns3_side_cannot_model(edit, message):
    sc = copy.deepcopy(SMALL)
    edit(sc)
    flows = ns3run.flow_list(sc, 1)
    with pytest.raises(ns3run.Unsupported, match=message):
        ns3run.ns3_input(ns3run.plan(cclab.validate(sc)["config"]), flows, 60.0, 5.0, 1)


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
