"""Cross-check of the exact steady-state method (lower-bounds paper, section V-VI)
with the packet-level engine: N ideally smooth senders (constant rate U*C/N, first
packet at the flow's arrival time) through one FIFO link. Both run on the same
integer nanosecond clock, so after the transient every packet must wait exactly
as long in the engine as the exact method says. A check of both."""
from __future__ import annotations

import numpy as np
import pytest

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab.theory import lower_bounds as lb  # noqa: E402

RATE = 10e6
PACKET = 1500
D_NS = 1_200_000  # 1500 B at 10 Mbps


def _engine_waits(arr_ns, period_ns, buffer):
    n = len(arr_ns)
    warm_ns = int(arr_ns.max()) + 3 * period_ns  # past the transient (exact method settles in <= 2 periods)
    limit = "1000000pkts" if buffer is None else f"{buffer}pkts"
    sc = {
        "duration": f"{(warm_ns + period_ns) / 1e9 - 1e-9:.9f}s",
        "warmup": f"{warm_ns / 1e9:.9f}s",
        "record": {"interval": "0s", "arrivals": ["bn"]},
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms",
                   "queue": {"type": "droptail", "limit": limit}}],
        "traffic": [{"name": "smooth", "type": "cbr", "src": "a", "dst": "b",
                     "rate": f"{PACKET * 8e9 / period_ns!r}bps", "packet_size": PACKET,
                     "starts": [float(t) / 1e9 for t in arr_ns]}],
    }
    r = cclab.run(sc)
    a = r.arrivals
    assert len(a) == n, "one packet per flow in one steady period"
    waits = np.round(a.backlog.to_numpy() * 1e9).astype(np.int64)
    return np.sort(np.where(a.dropped.to_numpy(), -1, waits))


@pytest.mark.parametrize("dist,utilization,buffer", [
    ("exponential", 1.0, None),
    ("uniform", 0.9, None),
    ("pareto", 1.0, None),
    ("exponential", 1.0, 3),
    ("uniform", 1.0, 2),
])
def test_packet_engine_matches_exact_method(dist, utilization, buffer):
    n = 60
    for run in range(3):
        arr = lb.arrival_times(n, dist, utilization, seed=11, run=run, ticks_per_packet=D_NS)
        period = lb.period_ticks(n, utilization, D_NS)
        st = lb.steady_queue(arr, period, D_NS, buffer=buffer)
        exact = np.sort(np.asarray(st.wait, dtype=np.int64))
        engine = _engine_waits(np.asarray(arr, dtype=np.int64), period, buffer)
        assert np.array_equal(engine, exact), (run, np.abs(engine - exact).max())
        if buffer is not None:
            assert (exact == -1).sum() == (engine == -1).sum()
    # Not a trivial agreement: some packets wait more than a packet time (and, with
    # an overprovisioned buffer, several).
    assert exact.max() > (2 if buffer is None else 1) * D_NS
