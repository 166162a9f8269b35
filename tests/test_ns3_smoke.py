"""Smoke test of the ns-3 harness (bench/ns3): both simulators run a 30-second
scenario on the same flow list and give flow tables of the same schema and the
same flows. Skipped unless the harness's ns-3 is installed; `make validate` (or
`.venv/bin/python -c "import sys; sys.path.insert(0, 'bench/ns3'); import ns3run; ns3run.ensure()"`)
installs it."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "ns3"))
import ns3run  # noqa: E402

pytestmark = pytest.mark.skipif(
    not ns3run.installed(),
    reason="ns-3 is not installed for the harness: run `make validate` once (it installs ns-3 into "
           f"{ns3run.home()}), then this test runs",
)

SCENARIO = {
    "name": "smoke", "duration": "30s", "warmup": "5s", "seed": 3,
    "tcp": {"mss": 1460, "header": 40, "initial_window": 10, "min_rto": "200ms", "receive_window": "128KiB"},
    "links": [{"name": "bottleneck", "from": "server", "to": "client", "rate": "10Mbps", "delay": "25ms",
               "queue": {"type": "droptail", "limit": "80ms"}}],
    "traffic": [
        {"name": "short", "type": "poisson", "src": "server", "dst": "client", "arrival_rate": 2.0,
         "size": {"dist": "exponential", "mean": "200KB"}},
        {"name": "long", "type": "long_lived", "src": "server", "dst": "client"},
    ],
    "record": {"interval": "0s"},
}


def test_same_schema_and_flows():
    flows = ns3run.flow_list(SCENARIO, 3)
    assert len(flows) > 30
    cc = ns3run.run_cclab(SCENARIO, 3, flows).flows
    ns = ns3run.run_ns3(SCENARIO, 3, flows).flows
    assert list(ns.columns) == list(cc.columns) == ns3run.FLOW_COLUMNS
    assert len(ns) == len(cc) == len(flows)
    for col in ("class", "arrival", "size"):
        a, b = cc.sort_values("arrival")[col].to_numpy(), ns.sort_values("arrival")[col].to_numpy()
        if col == "class":
            assert list(map(str, a)) == list(map(str, b))
        else:
            np.testing.assert_allclose(a.astype(float), b.astype(float), rtol=0, atol=1e-9)
    # Both delivered every byte of the flows that finished, and most flows finished.
    for t in (cc, ns):
        done = t[t["finished"]]
        assert (done["bytes_delivered"] == done["size"]).all()
        assert len(done) >= 0.8 * t["size"].notna().sum()


@pytest.mark.parametrize("ecn", [False, True])
def test_red_link_counters(ecn):
    """A RED bottleneck (ns-3's RedQueueDisc): the links table has cclab's marks and
    mean_queue_packets columns; a dropping RED marks nothing, a marking one marks
    (ECT data) and drops far fewer than it marks; the time-averaged queue stays below
    the buffer and is positive on a loaded link in both simulators."""
    sc = dict(SCENARIO, name="smoke-red", links=[dict(SCENARIO["links"][0], queue=dict(
        type="red", limit="100pkts", min_th="5pkts", max_th="15pkts", max_p=0.1, ecn=ecn))])
    sc["tcp"] = dict(SCENARIO["tcp"], sack=True, timestamps=True, recovery="halve" if ecn else "prr", ecn=ecn)
    flows = ns3run.flow_list(sc, 3)
    cc = ns3run.run_cclab(sc, 3, flows).links.set_index("name")
    ns = ns3run.run_ns3(sc, 3, flows).links.set_index("name")
    for t in (cc, ns):
        bn = t.loc["bottleneck"]
        assert 0 < bn["mean_queue_packets"] < 100
        if ecn:
            assert bn["marks"] > 0 and bn["drops"] < bn["marks"]
        else:
            assert bn["marks"] == 0 and bn["drops"] > 0
        assert t.loc["bottleneck-rev"]["marks"] == 0  # pure ACKs are not ECN-capable
