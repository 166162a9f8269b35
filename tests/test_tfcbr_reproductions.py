"""The TFCBR paper's packet-level catalogue entries: their measures on closed forms, and
each entry end to end at a tiny size (a few seconds) through the sweep machinery."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cclab
from cclab.experiments import catalogue
from cclab.experiments.reproductions import tfcbr_packet as tp

ROOT = Path(__file__).resolve().parents[1]


def test_scenario_file_is_the_entries_scenario():
    # scenarios/tfcbr/single-link.toml and tfcbr_packet.scenario() mean the same run
    a = cclab.validate(ROOT / "scenarios/tfcbr/single-link.toml")["config"]
    b = cclab.validate(tp.scenario(0.3, 75000.0, 100.0))["config"]
    assert a == b


def test_cov_64_and_convergence_time_closed_forms():
    # 1-s rates alternating 1 and 3: mean 2, population std 1 in every 64-s window
    x = np.tile([1.0, 3.0], 64)
    assert tp.cov_64(x) == pytest.approx(0.5)
    assert np.isnan(tp.cov_64(x[:63]))
    a = np.full(1000, 2.0)
    b = np.concatenate([np.zeros(500), np.linspace(0.0, 2.0, 200), np.full(300, 2.0)])
    # 10-s means within 10% once b's window mean exceeds 2·0.9/1.1... solve numerically
    t = tp.convergence_time(a, b)
    ma = 2.0
    mb = np.array([b[s:s + 10].mean() for s in range(500, 990)])
    expect = int(np.argmax(np.abs(ma - mb) < 0.1 * (ma + mb) / 2))
    assert t == expect and 150 < t < 200


def test_fig1_flow_level_ratio():
    # PS model: 1/(2(1-f)); equal response times at f = 1/2, ten times at f = 0.95
    assert tp.fig1_theory(0.5) == pytest.approx(1.0)
    assert tp.fig1_theory(0.95) == pytest.approx(10.0)


def _runs(samples):
    """Rows as :func:`tp.measure` makes them, one per seed, from rate samples."""
    return pd.DataFrame([{"seed": i + 1, "tcp_hist": tp.rate_hist(x), "tcp_sum": x.sum(), "tcp_n": len(x),
                          "tcp_mean_rate": x.mean()} for i, x in enumerate(samples)])


def test_rate_bins_keep_every_flow_within_a_bin_width():
    x = np.array([500.0, 1e3, 2.5e6, 2.5e6, 9.99e9, 3e10])
    h = tp.rate_hist(x)
    assert h.sum() == len(x) and h[0] == 2 and h[-1] == 2       # clipped into the range
    back = tp.rate_samples([h])
    inside = np.clip(x, 1e3, 1e10)
    assert np.all(np.abs(np.log(np.sort(back) / np.sort(inside))) <= np.log(10) / 400 + 1e-12)


def test_friendliness_orientation_and_ks_band():
    rng = np.random.default_rng(7)
    base = [rng.exponential(1e6, 4000), rng.exponential(1e6, 4000)]
    ref = _runs(base)
    f = tp.friendliness(ref, _runs([v * 1.5 for v in base]))
    assert f["stf_mu"] and f["stf_st"] and f["stf_st_index"] == 0.0
    assert f["tcp_rate_ratio"] == pytest.approx(1.5)
    s = tp.friendliness(ref, _runs([v * 0.5 for v in base]))
    assert not s["stf_mu"] and not s["stf_st"] and s["stf_st_index"] > 0.9
    # the same law: inside the KS band, so STF-st although the raw ECDFs cross
    g = tp.friendliness(ref, _runs([rng.exponential(1e6, 4000), rng.exponential(1e6, 4000)]))
    assert g["stf_st_index_raw"] > 0 and g["stf_st_index"] == 0.0


def test_largest_alpha_needs_every_smaller_alpha():
    tab = pd.DataFrame({"alpha": [0.125, 0.125, 0.25, 0.25, 0.5, 0.5],
                        "ok": [True, True, True, False, True, True]})
    assert tp.largest_alpha(tab, "ok") == 0.125
    assert tp.largest_alpha(tab.assign(ok=False), "ok") == 0.0


SIZES = {
    "tfcbr-fig1": dict(duration=300.0, warmup=50.0, seeds=2, axes={"Y_CBR/Y_TCP": (0.5, 0.95)}),
    "tfcbr-alpha-beta-packet": dict(duration=200.0, warmup=50.0, seeds=2,
                                    axes={"α": (1 / 8, 9 / 8), "β (s)": (4,), "TCP load": (0.3,),
                                          "queues": ("droptail",)}),
    "tfcbr-convergence": dict(duration=900.0, seeds=2, max_seeds=2, axes={"β (s)": (16, 128)}),
    "tfcbr-vs-tfrc-rdtf": dict(duration=300.0, warmup=50.0, seeds=2, max_seeds=2,
                               axes={"TCP load": (0.3,), "protocols": ("tfrc", "tfcbr", "rdtf")}),
    "tfcbr-udp-tcp": dict(duration=200.0, warmup=50.0, seeds=2, max_seeds=2,
                          axes={"long TCP flows": (1,), "protocols": ("tfrc", "tfcbr", "rdtf")}),
}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """Run an entry at its tiny size, twice (the second time from the store alone)."""
    from test_fairbat_reproductions import run_twice

    return lambda name: run_twice(name, tmp_path, monkeypatch, SIZES[name])[0]


def test_the_entries_keep_a_reduction_not_the_flows(tiny, tmp_path):
    tiny("tfcbr-udp-tcp")
    from cclab.sweeps import Store

    with Store(tmp_path / "store", readonly=True) as st:
        rows = st.list_runs()
        assert rows and all(r.tables == (f"{tp.RATES}@1",) for r in rows)
        r = st.load(rows[0].key)
    assert r.flows.empty and list(r.reduced) == [f"{tp.RATES}@1"]
    m = tp.measured(r)
    assert m["tcp_hist"].sum() == m["tcp_n"] > 0 and len(m["udp_trace"]) <= tp.UDP_TRACE_S


def test_fig1_tiny(tiny):
    o = tiny("tfcbr-fig1")
    c = o.data[o.data.udp == "cbr"].set_index("fraction")
    # CBR at 95% of the TCP-controlled flow's rate slows the TCP flows more than at 50%
    assert c.loc[0.95, "mean_response_s"] > c.loc[0.5, "mean_response_s"]
    # the CBR flow delivers at most what it sends, f·Y_TCP, and loses little of it
    y_tcp = float(o.data.loc[o.data.udp == "tcp", "y_udp_bps"].iloc[0])
    for f in (0.5, 0.95):
        assert 0.9 * f * y_tcp < c.loc[f, "y_udp_bps"] <= f * y_tcp * 1.001


def test_alpha_beta_packet_tiny(tiny):
    o = tiny("tfcbr-alpha-beta-packet")
    t = o.data.set_index("alpha")
    assert {"queue", "load", "alpha", "beta", "stf_mu", "stf_st"} <= set(o.data.columns)
    # α = 1/8 takes an eighth of the TCP rate: the TCP flows do better than with TFRC
    assert bool(t.loc[0.125, "stf_mu"]) and t.loc[0.125, "tcp_rate_ratio"] > 1
    assert t.loc[0.125, "rate_over_tfrc"] < 0.5 < t.loc[1.125, "rate_over_tfrc"]


def test_convergence_tiny(tiny):
    o = tiny("tfcbr-convergence")
    t = o.data.set_index("beta")
    # a longer memory of estimates: slower to converge (β = 16 s vs 128 s)
    assert t.loc[16, "convergence_s"] < t.loc[128, "convergence_s"]


def test_vs_tfrc_rdtf_tiny(tiny):
    o = tiny("tfcbr-vs-tfrc-rdtf")
    t = o.data.set_index("protocol")
    assert {"protocol", "load", "mean_rate", "cov_rate", "stf_mu", "stf_st"} <= set(o.data.columns)
    # α = 0.5 sends less than TFRC; α = 1 about as much (RDTF)
    assert t.loc["tfcbr", "mean_rate"] < 0.9 * t.loc["tfrc", "mean_rate"]
    assert t.loc["rdtf", "mean_rate"] > t.loc["tfcbr", "mean_rate"]


def test_udp_tcp_tiny(tiny):
    o = tiny("tfcbr-udp-tcp")
    t = o.data.set_index("protocol")
    # five UDP flows + one long TCP flow + web traffic share 10 Mbps: no class exceeds it
    assert (o.data["long_mean_rate"] < 10e6).all() and (o.data["mean_rate"] < 10e6).all()
    assert t.loc["tfcbr", "mean_rate"] < t.loc["tfrc", "mean_rate"]
