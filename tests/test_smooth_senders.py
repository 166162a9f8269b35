"""Ideally smooth senders (`phase = "random"`) and Pareto on/off sources through the
Python API, and `bench/validate_smooth.py` at a small size (the thorough run is
`make validate-smooth`; the statistics of the fast run are in crates/sim/tests/smooth.rs)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab.theory import lower_bounds as lb  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import validate_smooth as vs  # noqa: E402


def test_random_phases_give_the_exact_methods_queue_packet_for_packet():
    n, u, size = 100, 0.95, 950
    d, t = vs.model(n, u, size)
    assert (d, t) == (76_000, 8_000_000)
    for seed in (1, 2):
        waits, starts = vs.engine(cclab, n, u, size, seed)
        assert starts.min() >= 0 and starts.max() < t
        assert np.array_equal(waits, vs.exact(lb, starts, d, t))
    assert waits.max() > 5 * d  # some packets find several packets' work


def test_phase_is_in_the_canonical_config():
    cfg = cclab.validate(vs.scenario(10, 0.8, 1000, seed=3))["config"]
    assert cfg["classes"][0]["phase"] == "random"
    assert cfg["classes"][0]["transport"]["cc"] == {"protocol": "cbr", "params": {"rate_bps": 8e6}}
    with pytest.raises(cclab.ScenarioError, match=r'traffic\[0\]\.phase: expected "zero" or "random"'):
        sc = vs.scenario(10, 0.8, 1000, seed=3)
        sc["traffic"][0]["phase"] = "uniform"
        cclab.validate(sc)


def test_validate_smooth_script_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(vs, "FLOWS", [10, 100])
    monkeypatch.setattr(sys, "argv", ["validate_smooth.py", "--runs", "20", "--out", str(tmp_path)])
    assert vs.main() == 0
    report = (tmp_path / "report.md").read_text()
    assert "| 100 | 0.95 | 20/20 |" in report
    assert (tmp_path / "cdf.png").stat().st_size > 10_000


def test_pareto_noise_through_the_api():
    # Ten ns-2-default sources (210 B, on = off = 500 ms, shape 1.5) at 2.22 Mbit/s in
    # bursts: about 10% of a 111 Mbit/s link on average (Tang et al.'s noise level).
    sc = {
        "duration": "60s", "seed": 2,
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "111Mbps", "delay": "30ms"}],
        "traffic": [{"name": "noise", "type": "long_lived", "src": "a", "dst": "b", "count": 10,
                     "protocol": "pareto", "cc": {"rate": "2.22Mbps"}, "packet_size": 210}],
        "record": {"interval": "1s"},
    }
    r = cclab.run(sc)
    assert r.config["classes"][0]["transport"]["cc"]["params"] == {
        "on_ns": 500_000_000, "off_ns": 500_000_000, "shape": 1.5, "rate_bps": 2.22e6}
    s = r.summary
    assert s["whole_run_packets_sent"] == s["whole_run_packets_delivered"] + s["whole_run_packets_dropped"] + s["packets_in_flight"]
    # Heavy tails (infinite variance at shape 1.5): only a loose check of the level.
    assert 0.3 * 11.1e6 < s["noise.throughput_bps"] < 3 * 11.1e6
    thr = r.series[(r.series.metric == "throughput_bps")].value.to_numpy()
    assert thr.min() < thr.max()  # on/off: the rate varies second to second
    assert cclab.run(sc).summary["noise.throughput_bps"] == s["noise.throughput_bps"]
