"""Engine invariants: packet conservation, queue limits, determinism, routing,
traffic classes and the tables a run produces."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import dumbbell, long_lived, poisson

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "scenarios" / "background" / "single-link.toml"


def three_link(duration="200s", seed=1):
    """a -> r1 -> r2 -> b chain with short flows on every hop and cross traffic."""
    links = [
        {"name": "l1", "from": "a", "to": "r1", "rate": "10Mbps", "delay": "5ms", "queue": {"limit": "50pkts"}},
        {"name": "l2", "from": "r1", "to": "r2", "rate": "8Mbps", "delay": "10ms", "queue": {"limit": "60KB"}},
        {"name": "l3", "from": "r2", "to": "b", "rate": "10Mbps", "delay": "5ms", "queue": {"limit": "40ms"}},
    ]
    traffic = [
        {"name": "through", "type": "poisson", "src": "a", "dst": "b", "load": 0.3, "load_link": "l2",
         "size": {"dist": "pareto", "mean": "500KB", "shape": 1.5}},
        {"name": "cross", "type": "poisson", "src": "r1", "dst": "r2", "arrival_rate": 1.0,
         "size": {"dist": "constant", "value": "300KB"}},
        {"name": "bulk", "type": "long_lived", "route": ["l1", "l2", "l3"], "count": 2},
    ]
    return {"name": "chain", "duration": duration, "warmup": "20s", "seed": seed, "links": links,
            "traffic": traffic, "tcp": {"delayed_ack": True}}


@pytest.mark.parametrize("scenario", ["reference", "chain"])
def test_conservation_and_queue_limits(scenario):
    if scenario == "reference":
        r = cclab.run(REFERENCE, seed=2)  # full 2000 s reference run (about 0.5 s)
    else:
        r = cclab.run(three_link())
    s = r.summary
    # Every packet sent is delivered, dropped, or still in flight at the end.
    assert s["whole_run_packets_sent"] == s["whole_run_packets_delivered"] + s["whole_run_packets_dropped"] + s["packets_in_flight"]
    assert s["whole_run_packets_dropped"] >= s["measured_packets_dropped"] == r.links.drops.sum()
    for _, l in r.links.iterrows():
        if not pd.isna(l.limit_packets):
            assert l.peak_queue_packets <= l.limit_packets
        if not pd.isna(l.limit_bytes):
            assert l.peak_queue_bytes <= l.limit_bytes
        assert 0.0 <= l.utilization <= 1.0 + 1e-9
        assert l.max_queue_packets >= l.mean_queue_packets
    # A flow's delivered bytes never exceed its size; finished flows delivered all.
    f = r.flows
    fin = f[f.finished]
    assert (fin.bytes_delivered == fin["size"]).all()
    assert (fin.completion_time > 0).all()
    assert np.allclose(fin.finish - fin.arrival, fin.completion_time)


def test_red_marks_appear_in_the_links_table():
    # RED with ECN on a 10 Mbps bottleneck, ten ECN-capable NewReno flows: marks
    # instead of drops, counted beside them (crates/sim/tests/red.rs tests the rest).
    q = {"type": "red", "limit": "1000pkts", "min_th": "20pkts", "max_th": "60pkts", "max_p": 0.1, "ecn": True}
    r = cclab.run({"duration": "20s", "warmup": "10s",
                   "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "20ms", "queue": q}],
                   "traffic": [{"name": "long", "type": "long_lived", "src": "a", "dst": "b", "count": 10,
                                "tcp": {"ecn": True}}]})
    bn = r.links.set_index("name").loc["bn"]
    assert bn.marks > 0 and bn.drops == 0
    assert 20 < bn.mean_queue_packets < 60
    s = r.summary
    assert s["whole_run_packets_marked"] >= s["measured_packets_marked"] == r.links.marks.sum()
    assert s["whole_run_packets_sent"] == s["whole_run_packets_delivered"] + s["whole_run_packets_dropped"] + s["packets_in_flight"]
    assert r.config["links"][0]["queue"]["type"] == "red"


def test_reference_scenario_sanity():
    r = cclab.run(REFERENCE)
    bn = r.links.set_index("name").loc["bottleneck"]
    # A long-lived flow keeps the bottleneck busy: utilization near 1.
    assert bn.utilization > 0.97
    # "80ms" of 10 Mbps = 100,000 bytes (66 full-size packets).
    assert bn.limit_bytes == 100_000
    assert bn.peak_queue_bytes <= 100_000
    # Offered short-flow load 0.6 of 10 Mbps: their throughput is near 6 Mbps
    # (the sample mean of sizes over ~450 flows varies by ~5%).
    assert 5.0e6 < r.summary["short.throughput_bps"] < 7.0e6
    # The long flow takes the rest.
    total = r.summary["short.throughput_bps"] + r.summary["long.throughput_bps"]
    assert 0.95 * 10e6 * 1460 / 1500 < total <= 10e6 * 1460 / 1500


def _digest(r):
    h = hashlib.sha256()
    for df in (r.flows, r.links, r.series):
        h.update(df.to_csv(index=False).encode())
    return h.hexdigest()


def test_determinism_same_seed_same_bytes(tmp_path):
    a = cclab.run(three_link(seed=7))
    b = cclab.run(three_link(seed=7))
    c = cclab.run(three_link(seed=8))
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)
    a.save(tmp_path / "a")
    b.save(tmp_path / "b")
    for name in ("flows.parquet", "links.parquet", "series.parquet", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_adding_a_class_keeps_other_draws():
    # Each random source has its own stream: adding a class does not change the
    # arrivals and sizes of another.
    base = dumbbell(duration="300s", traffic=[poisson(0.2, name="x")])
    more = dumbbell(duration="300s", traffic=[poisson(0.2, name="x"), poisson(0.1, name="y", mean="1MB")])
    fa = cclab.run(base).flows
    fb = cclab.run(more).flows
    xa = fa[fa["class"] == "x"][["arrival", "size"]].reset_index(drop=True)
    xb = fb[fb["class"] == "x"][["arrival", "size"]].reset_index(drop=True)
    assert len(xa) > 20
    assert xa.equals(xb)


def test_poisson_arrivals_and_sizes_statistics():
    # 20,000 s at 1 flow/s of exponential 10 kB flows: count ~ Poisson(20000),
    # mean size 10 kB with standard error 10e3/sqrt(20000) = 71 bytes.
    sc = dumbbell(rate="100Mbps", duration="20000s", record={"interval": "0s"},
                  traffic=[{"name": "p", "type": "poisson", "src": "a", "dst": "b", "arrival_rate": 1.0,
                            "size": {"dist": "exponential", "mean": "10kB"}}])
    f = cclab.run(sc).flows
    assert abs(len(f) - 20000) < 5 * np.sqrt(20000)
    assert abs(f["size"].mean() - 10e3) < 5 * 10e3 / np.sqrt(len(f))
    gaps = np.diff(f.arrival.to_numpy())
    assert abs(gaps.mean() - 1.0) < 5 / np.sqrt(len(gaps))
    # Exponential gaps: coefficient of variation 1.
    assert abs(gaps.std() / gaps.mean() - 1.0) < 0.05


def test_load_defines_arrival_rate():
    # load 0.5 of 10 Mbps with 1 MB constant flows: 0.625 flows/s.
    sc = dumbbell(duration="4000s", record={"interval": "0s"},
                  traffic=[{"name": "c", "type": "poisson", "src": "a", "dst": "b", "load": 0.5,
                            "size": {"dist": "constant", "value": "1MB"}}])
    f = cclab.run(sc).flows
    assert abs(len(f) / 4000 - 0.625) < 5 * np.sqrt(0.625 * 4000) / 4000
    assert (f["size"] == 1e6).all()


def test_flow_list_replay_and_empirical_sizes(tmp_path):
    csv = tmp_path / "flows.csv"
    csv.write_text("start,size,class\n0.5,20000,web\n1.25,150000,web\n2.0,5000,other\n3.0,1000000,web\n")
    cdf = tmp_path / "cdf.csv"
    cdf.write_text("size,cdf\n1000,0\n3000,1\n")
    sc = dumbbell(duration="60s", traffic=[
        {"name": "web", "type": "flow_list", "src": "a", "dst": "b", "file": str(csv)},
        {"name": "emp", "type": "poisson", "src": "a", "dst": "b", "arrival_rate": 2.0,
         "size": {"dist": "empirical", "file": str(cdf)}},
    ])
    f = cclab.run(sc).flows
    web = f[f["class"] == "web"]
    assert web.arrival.tolist() == [0.5, 1.25, 3.0]
    assert web["size"].tolist() == [20000, 150000, 1000000]
    assert web.finished.all()
    emp = f[f["class"] == "emp"]["size"]
    assert emp.between(1000, 3000).all() and abs(emp.mean() - 2000) < 5 * 577 / np.sqrt(len(emp))


def test_routes_shortest_path_and_explicit():
    # Two paths a->c: direct (one hop, 50 ms) and via b (two hops, 2 ms):
    # shortest path counts hops, so the direct link carries the flow; an explicit
    # route forces the two-hop path.
    links = [
        {"name": "ac", "from": "a", "to": "c", "rate": "10Mbps", "delay": "50ms"},
        {"name": "ab", "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms"},
        {"name": "bc", "from": "b", "to": "c", "rate": "10Mbps", "delay": "1ms"},
    ]
    one = {"name": "f", "type": "flow_list", "src": "a", "dst": "c"}
    base = {"duration": "20s", "links": links}
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "f.csv")
        Path(p).write_text("start,size,class\n0,100000,f\n")
        direct = cclab.run({**base, "traffic": [{**one, "file": p}]})
        via = cclab.run({**base, "traffic": [{**one, "file": p, "route": ["ab", "bc"]}]})
    ld = direct.links.set_index("name")
    lv = via.links.set_index("name")
    assert ld.loc["ac", "packets_sent"] > 60 and ld.loc["ab", "packets_sent"] == 0
    assert lv.loc["ab", "packets_sent"] > 60 and lv.loc["ac", "packets_sent"] == 0
    # RTT 100 ms vs 4 ms: the two-hop path finishes far sooner.
    assert via.flows.completion_time[0] < direct.flows.completion_time[0] / 3


def test_single_packet_flow_completion_time_is_exact():
    # One 1000-byte flow alone: completion = serialization (1040 B at 10 Mbps =
    # 0.832 ms) + propagation 25 ms, exactly, from its arrival at 1 s.
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "f.csv")
        Path(p).write_text("start,size,class\n1.0,1000,one\n")
        r = cclab.run(dumbbell(duration="5s", traffic=[{"name": "one", "type": "flow_list", "src": "a",
                                                         "dst": "b", "file": p}]))
    assert r.flows.completion_time[0] == pytest.approx(1040 * 8 / 10e6 + 0.025, abs=1e-9)


def test_warmup_excluded_and_series_recorded():
    sc = dumbbell(duration="100s", warmup="40s", traffic=[poisson(0.4, mean="500KB"), long_lived()],
                  record={"interval": "2s"})
    r = cclab.run(sc)
    f = r.flows
    assert (f.warmup == (f.arrival < 40)).all()
    s = r.series
    q = s[(s.metric == "queue_packets") & (s.name == "bn")]
    assert np.allclose(q.time.to_numpy(), np.arange(42, 101, 2))  # after the warm-up
    act = s[(s.metric == "active_flows") & (s.name == "long")].value
    assert (act == 1).all()
    thr = s[(s.metric == "throughput_bps")].groupby("time").value.sum()
    assert (thr.iloc[5:] <= 10e6).all() and thr.iloc[5:].mean() > 8e6


def test_delayed_acks_halve_ack_count():
    base = dumbbell(duration="60s", warmup="5s", limit="100pkts", traffic=[long_lived()])
    plain = cclab.run(base)
    delayed = cclab.run({**base, "tcp": {"delayed_ack": True}})
    acks = lambda r: r.links.set_index("name").loc["bn-rev", "packets_sent"]
    data = lambda r: r.links.set_index("name").loc["bn", "packets_sent"]
    assert acks(plain) == pytest.approx(data(plain), rel=0.01)
    assert acks(delayed) == pytest.approx(data(delayed) / 2, rel=0.05)


def test_offered_load_at_capacity_warns():
    r = cclab.run(dumbbell(duration="5s", traffic=[poisson(1.2, mean="100kB")]))
    assert any("at or above capacity" in w for w in r.warnings)


def test_cbr_senders_exact_rate_and_queue_seen_by_arrivals():
    # Four 2 Mbps constant-rate senders of 1500-byte packets (one every 6 ms) on a
    # 10 Mbps link: utilization exactly 0.8, no loss. Three start 0.1 ms apart, so
    # each period the second packet finds 1.1 ms of work left (1.2 ms service minus
    # 0.1 ms) and the third finds one packet waiting and 2.2 ms of work.
    r = cclab.run({
        "duration": "10s", "warmup": "1s",
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms"}],
        "traffic": [{"name": "c", "type": "cbr", "src": "a", "dst": "b", "rate": "2Mbps",
                     "starts": [0.0, 0.0001, 0.0002, 0.003]}],
        "record": {"arrivals": ["bn"]},
    })
    bn = r.links.set_index("name").loc["bn"]
    assert bn.utilization == pytest.approx(0.8, abs=2e-4)  # last packet's partial service
    assert bn.drops == 0
    assert r.summary["c.throughput_bps"] == pytest.approx(8e6, rel=1e-3)
    a = r.arrivals[r.arrivals.link == "bn"]
    assert len(a) == 4 * 9 / 0.006
    backlog = np.round(a.backlog.to_numpy() * 1e4) / 1e4
    assert sorted(set(backlog)) == [0.0, 0.0006, 0.0011, 0.0022]
    assert (a.queue_packets <= 1).all()


def test_canonical_config_reruns_the_same_run(tmp_path):
    """validate()["config"] and Result.config are the canonical configuration: it
    names every unit in SI integers, carries the effective seed, and running it
    gives the same tables as running the scenario."""
    sc = dumbbell(duration="60s", traffic=[poisson(0.4, mean="200KB"), long_lived()])
    cfg = cclab.validate(sc, seed=9)["config"]
    assert cfg["format"] == "cclab-config/1" and cfg["seed"] == 9
    assert cfg["links"][0]["rate_bps"] == 10_000_000 and cfg["links"][0]["delay_ns"] == 25_000_000
    assert cfg["classes"][0]["arrivals"]["type"] == "poisson"
    assert cfg["classes"][0]["transport"]["cc"] == {"protocol": "newreno", "params": {}}
    a = cclab.run(sc, seed=9)
    assert a.config == cfg
    b = cclab.run(cfg)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.links, b.links)
    # Saved next to the results, as canonical JSON.
    a.save(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == cfg
    with pytest.raises(cclab.ScenarioError, match="seed: a canonical configuration carries its seed"):
        cclab.run(cfg, seed=3)
    bad = json.loads(json.dumps(cfg))
    bad["classes"][0]["route"] = [1]
    with pytest.raises(cclab.ScenarioError, match=r"classes\[0\].route: does not join the class's endpoints"):
        cclab.run(bad)


@pytest.mark.parametrize("value,message", [
    (float("nan"), "traffic[0].load: expected a finite number, got nan"),
    (float("inf"), "traffic[0].load: expected a finite number, got inf"),
    ("0.5", 'traffic[0].load: expected a number, got "0.5"'),
])
def test_non_finite_numbers_from_python_name_their_key(value, message):
    sc = dumbbell(traffic=[poisson(0.4)])
    sc["traffic"][0]["load"] = value
    with pytest.raises(cclab.ScenarioError) as exc:
        cclab.validate(sc)
    assert str(exc.value) == message


def test_the_tables_are_the_engines_columns_as_they_come():
    # The engine lists each table's columns (crates/sim/src/metrics/columns.rs); the
    # glue and cclab.run hand them over by name, adding and dropping none.
    from cclab import _core
    from cclab.scenario import to_json

    sc = dumbbell(duration="5s", traffic=[poisson(0.3), long_lived()], record={"interval": "1s", "arrivals": ["bn"]})
    raw = _core.run_scenario(to_json(sc), ".", None, None)
    r = cclab.run(sc)
    assert list(r.flows.columns) == list(raw["flows"])
    assert list(r.links.columns) == list(raw["links"])
    assert list(r.series.columns) == [k for k in raw["series"] if not k.endswith("_names")]
    assert list(r.arrivals.columns) == list(raw["arrivals"])
    # Unsigned counters become int64, limits that may be absent Int64, indices categoricals.
    assert r.flows["bytes_delivered"].dtype == np.int64 and r.links["drops"].dtype == np.int64
    assert str(r.links["limit_packets"].dtype) == "Int64" and r.links["limit_packets"].isna().all()
    assert (r.links["limit_bytes"] == 100_000).all()  # 80 ms of 10 Mbps
    assert list(r.flows["class"].cat.categories) == ["short", "long"]
    assert set(r.arrivals["link"]) == {"bn"} and r.series["metric"].dtype.name == "category"
