"""The ns-2.35 referee harness (bench/ns2/ns2run.py).

The translation of a cclab scenario into ns-2's run script is checked without ns-2:
queue limits as ns-2 counts them, the agents and their variables, what it refuses.
Where `ns` is installed (Debian's `ns2`; `make validate-ns2` installs it as root),
both simulators run small scenarios whose answer is known in closed form: a
window-limited flow and a CBR flow, on identical flow lists; elsewhere those tests
are skipped saying why."""
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "ns2"))
import ns2run  # noqa: E402

import cclab  # noqa: E402
from conftest import dumbbell, long_lived, poisson  # noqa: E402

NS2 = pytest.mark.skipif(
    not ns2run.installed(),
    reason="ns-2 is not installed (no `ns` on the PATH): `apt-get install -y ns2` as root, or "
           "`make validate-ns2`, installs it; then these tests run",
)

TCP = {"mss": 1000, "initial_window": 2, "handshake": True, "limited_transmit": True,
       "rescue_retransmission": False, "receive_window": "20000B"}


def config(sc):
    return cclab.validate(sc)["config"]


def plan(sc):
    return ns2run.plan(config(sc))


def test_droptail_limit_is_one_more_in_ns2():
    """cclab holds L waiting packets; ns-2's DropTail drops when length + 1 >= limit_."""
    p = plan(dumbbell(limit="100pkts", traffic=[long_lived()], tcp=TCP))
    bn = p["links"][0]
    assert (bn["qtype"], bn["limit"], bn["inbytes"]) == ("DropTail", 101, False)
    p = plan(dumbbell(limit="80ms", traffic=[long_lived()], tcp=TCP))  # 100,000 bytes of 10 Mbps
    assert (p["links"][0]["limit"], p["links"][0]["inbytes"]) == (100_001, True)


def test_red_as_ns2s_queue_red():
    q = {"type": "red", "limit": "100pkts", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1}
    sc = dumbbell(traffic=[long_lived()], tcp=TCP)
    sc["links"][0]["queue"] = q
    bn = plan(sc)["links"][0]
    assert (bn["qtype"], bn["limit"]) == ("RED", 100)
    v = dict(zip(bn["qvars"][::2], bn["qvars"][1::2]))
    assert v["thresh_"] == "5.0" and v["maxthresh_"] == "15.0" and v["linterm_"] == "10.0"
    assert v["bytes_"] == v["queue_in_bytes_"] == "false"


def test_agents_and_variables():
    sc = dumbbell(traffic=[long_lived(name="nr"), long_lived(name="reno", protocol="reno"),
                           long_lived(name="sack", tcp={"sack": True})], tcp=TCP)
    nr, reno, sack = plan(sc)["classes"]
    assert (nr["agent"], nr["sink"]) == ("Agent/TCP/Newreno", "Agent/TCPSink")
    assert reno["agent"] == "Agent/TCP/Reno"
    assert (sack["agent"], sack["sink"]) == ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1")
    v = dict(zip(nr["avars"][::2], nr["avars"][1::2]))
    assert v["packetSize_"] == 1000 and v["window_"] == 20 and v["windowInit_"] == 2 and v["syn_"] == "true"
    # Whole packets of 1000 + 40 bytes, and the 40-byte SYN (tcp.cc, TcpAgent::output).
    assert (nr["perpkt"], nr["first"]) == (1040, 40)
    # ns-2's reset() sets ssthresh_ = int(window_) when the agent is created and again
    # after the harness sets its variables; the first ssthresh is then set as cclab's
    # says (none here: ns-2's int ceiling), and tcpTick_ as its clock tick.
    assert (nr["ssthresh"], v["tcpTick_"]) == (ns2run.NO_SSTHRESH, "0.01")
    sc = dumbbell(traffic=[long_lived(name="nr")], tcp={"preset": "ns2", "receive_window": "100000B"})
    c = plan(sc)["classes"][0]
    v = dict(zip(c["avars"][::2], c["avars"][1::2]))
    # The ns2 preset's first ssthresh is the receive window: reset()'s own rule is kept.
    assert (v["window_"], c["ssthresh"]) == (100, None)
    # The run script passes -1: "keep what reset() gave" (cclab_ns2.tcl, cc_class).
    flows = pd.DataFrame({"class": pd.Series(dtype=str), "start": pd.Series(dtype=float), "size": pd.Series(dtype=float)})
    line = [l for l in ns2run.tcl_script(plan(sc), flows, 1.0, 0.0, 1, Path("/tmp/x")).splitlines() if l.startswith("cc_class")]
    assert line[0].endswith(" -1")


def test_run_script_schedules_every_flow_in_whole_packets():
    sc = dumbbell(duration="30s", traffic=[poisson(0.3, mean="100KB")], tcp=TCP, seed=4)
    flows = ns2run.flow_list(sc, 4)
    info = cclab.validate(sc, seed=4)
    text = ns2run.tcl_script(ns2run.plan(info["config"]), flows, 30.0, 0.0, 4, Path("/tmp/x"))
    at = [l for l in text.splitlines() if l.startswith("$ns at ")]
    assert len(at) == len(flows) > 5
    first = flows.iloc[0]
    assert at[0] == f'$ns at {float(first.start)!r} "cc_flow 0 0 {math.ceil(first["size"] / 1000)}"'


@pytest.mark.parametrize("change, message", [
    (lambda sc: sc["traffic"][0].update(protocol="ledbat"), "LEDBAT"),
    (lambda sc: sc["tcp"].update(sack=True, recovery="prr"), "Proportional Rate Reduction"),
    (lambda sc: sc["tcp"].update(byte_counting=2), "count ACKs"),
    (lambda sc: sc["tcp"].update(sack=True, rescue_retransmission=True), "rescue"),
    (lambda sc: sc["links"][0].update(queue={"type": "linear", "min_th": "5pkts", "max_th": "15pkts",
                                             "max_p": 0.1}), "droptail and red"),
])
def test_refuses_what_stock_ns2_cannot_run(change, message):
    sc = dumbbell(traffic=[long_lived()], tcp=TCP)
    change(sc)
    with pytest.raises(ns2run.Unsupported, match=message):
        plan(sc)


def test_refuses_a_route_static_routing_would_not_take():
    """Two ways from a to c (direct, and through b): a class routed the long way is refused."""
    sc = {"duration": "10s", "tcp": TCP,
          "links": [{"name": "ab", "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms"},
                    {"name": "bc", "from": "b", "to": "c", "rate": "10Mbps", "delay": "1ms"},
                    {"name": "ac", "from": "a", "to": "c", "rate": "10Mbps", "delay": "1ms"}],
          "traffic": [{"name": "x", "type": "long_lived", "src": "a", "dst": "c", "route": ["ab", "bc"]}]}
    with pytest.raises(ns2run.Unsupported, match="only shortest path"):
        plan(sc)


def test_seed_zero_is_refused():
    with pytest.raises(ns2run.Unsupported, match="seed 0"):
        ns2run.tcl_script(plan(dumbbell(traffic=[long_lived()], tcp=TCP)), pd.DataFrame(
            {"class": [], "start": [], "size": []}), 1.0, 0.0, 0, Path("/tmp/x"))


# --- with ns-2 -----------------------------------------------------------------------------

def window_limited(seed=1):
    """One flow whose window (20 packets) never fills the 10 Mbps path: it sends 20
    packets per round trip, and no queue builds beyond a packet."""
    return dumbbell(duration="60s", warmup="10s", limit="100pkts", seed=seed, traffic=[long_lived()], tcp=TCP)


@NS2
def test_window_limited_flow_matches_the_closed_form_in_both():
    """Throughput = W·mss·8 / RTT, the RTT being a data packet's serialization (1040 B),
    both propagation delays and an ACK's serialization (40 B): 20,000 B per 50.864 ms."""
    sc = window_limited()
    flows = ns2run.flow_list(sc, 1)
    ns = ns2run.run_ns2(sc, 1, flows).result()
    cc = ns2run.pairing.run_cclab(sc, 1, flows)
    rtt = 1040 * 8 / 10e6 + 0.050 + 40 * 8 / 10e6
    expected = 20 * 1000 * 8 / rtt
    for r in (ns, cc):
        assert r.summary["long.throughput_bps"] == pytest.approx(expected, rel=0.002)
        assert r.links.set_index("name").loc["bn", "drops"] == 0


@NS2
def test_cbr_delivers_its_rate_and_links_conserve_packets(tmp_path):
    sc = dumbbell(duration="30s", warmup="5s", limit="100pkts", tcp=TCP,
                  traffic=[long_lived(name="cbr", protocol="cbr", cc={"rate": "2Mbps"}, packet_size=500),
                           long_lived(name="tcp")])
    flows = ns2run.flow_list(sc, 1)
    ns = ns2run.run_ns2(sc, 1, flows, keep=tmp_path / "raw")
    # 2 Mbps of 500-byte packets for the 25 measured seconds: 12,500 packets, give or take one.
    assert ns.delivered_after_warmup["cbr"] == pytest.approx(2e6 * 25 / 8, abs=500)
    raw = pd.read_csv(tmp_path / "raw" / "links.csv").set_index("name").loc["bn"]
    waiting = raw["arrivals"] - raw["departures"] - raw["drops"]
    assert 0 <= waiting <= 100  # what arrived after the warm-up left, was dropped, or still waits
    r = ns.result()
    assert list(r.flows.columns) == ns2run.FLOW_COLUMNS
    r.save(tmp_path / "ns2")
    back = cclab.load(tmp_path / "ns2")
    assert back.summary["cbr.throughput_bps"] == pytest.approx(r.summary["cbr.throughput_bps"])


@NS2
def test_same_flows_in_both():
    sc = dumbbell(duration="40s", warmup="5s", limit="100pkts", seed=3, tcp=TCP,
                  traffic=[poisson(0.4, mean="150KB")])
    flows = ns2run.flow_list(sc, 3)
    ns = ns2run.run_ns2(sc, 3, flows).flows
    cc = ns2run.pairing.run_cclab(sc, 3, flows).flows
    assert len(ns) == len(cc) == len(flows) > 20
    assert np.allclose(np.sort(ns["arrival"]), np.sort(cc["arrival"]))
    assert np.allclose(np.sort(ns["size"]), np.sort(cc["size"]))
    assert ns["finished"].mean() > 0.8
