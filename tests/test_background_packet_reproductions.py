"""The background paper's packet-level reproductions
(python/cclab/experiments/reproductions/background_packet.py): the networks of Figs. 5-9,
the measurements and the pairing with vanilla, the paper's statements as claims, and
each entry at a tiny size through the store, twice (the second time from the store alone)."""
import math

import numpy as np
import pandas as pd
import pytest

import cclab
from cclab.experiments.claims import FAILS, HOLDS
from cclab.experiments.reproductions import background_packet as bp
from cclab.experiments.reproductions import background_runs as br
from cclab.experiments.sizes import Size

from test_fairbat_reproductions import run_twice

NETS = {"fig5": (br.BG_ONE_LINK, bp.single_link_loads, 1), "fig7": (br.BG_TWO_LINKS, bp.two_link_loads, 0),
        "fig9": (br.BG_THREE_LINKS, bp.three_link_loads, 0)}


def link_loads(cfg) -> list[float]:
    """Offered load on each forward link, from the validated configuration."""
    loads = [0.0] * len(cfg["links"])
    for c in cfg["classes"]:
        a = c["arrivals"]
        if a["type"] != "poisson":
            continue
        load = a["rate_per_s"] * a["size"]["mean_bytes"] * 8 / 10e6
        for link in c["route"]:
            loads[link] += load
    return [round(x, 12) for i, x in enumerate(loads) if not cfg["links"][i]["name"].endswith("-rev")]


@pytest.mark.parametrize("policy", bp.POLICIES)
@pytest.mark.parametrize("fig", sorted(NETS))
def test_every_background_class_takes_the_policy(fig, policy):
    net, loads, k = NETS[fig]
    cfg = cclab.validate(br.packet_scenario(net, policy, loads(0.5), k=k, duration=100, warmup=10))["config"]
    want = br.POLICIES[policy]
    by = {c["name"]: c for c in cfg["classes"]}
    for name in net.background:
        c = by[name]
        assert c["transport"]["cc"]["protocol"] == want["protocol"]
        assert ("access" in c) == ("access" in want)
        if "access" in want:  # from the controller's own first limit, not a warm start
            assert c["access"]["policy"] == "rate_tracking" and c["access"]["m0"] == 1.0
        if "cc" in want:
            assert c["transport"]["cc"]["params"]["variant"] == want["cc"]["variant"]
    for name in net.web:
        assert by[name]["transport"]["cc"]["protocol"] == "reno" and "access" not in by[name]
    assert ("long" in by) == (k > 0)


def test_the_link_loads_are_those_of_the_paper():
    # Fig. 5: ρ + ρ_b; Fig. 7: ρ + 0.3 on both links; Fig. 8: ρ1 + 0.4, 0.8, 0.6 (§IV-D:
    # "link 1 is not excessively loaded (70%)" at ρ1 = 0.3).
    cfg = lambda net, loads: cclab.validate(br.packet_scenario(net, "vanilla", loads, duration=100, warmup=10))["config"]
    assert link_loads(cfg(br.BG_ONE_LINK, bp.single_link_loads(0.6))) == [0.9]
    assert link_loads(cfg(br.BG_TWO_LINKS, bp.two_link_loads(0.65))) == [0.95, 0.95]
    assert link_loads(cfg(br.BG_THREE_LINKS, bp.three_link_loads(0.3))) == [0.7, 0.8, 0.6]
    assert link_loads(cfg(br.BG_THREE_LINKS, bp.three_link_loads(0.5))) == [0.9, 0.8, 0.6]
    routes = {c["name"]: len(c["route"]) for c in cfg(br.BG_THREE_LINKS, bp.three_link_loads(0.3))["classes"]}
    assert routes == {"web_1": 1, "web_123": 3, "web_2": 1, "web_23": 2, "background_123": 3, "background_2": 1,
                      "background_23": 2}


def test_measurements_agree_with_the_engine_and_the_runs_are_paired():
    """The time averages read from the flows table equal the access controller's own
    (docs/protocols.md: to 1e-6); vanilla and access control see the same short flows."""
    size = Size(duration=1500.0, warmup=300.0)
    res = {}
    for p in ("vanilla", "rate_tracking"):
        pt = br.packet_point(br.BG_ONE_LINK, p, bp.single_link_loads(0.5), size, k=1)
        r = cclab.run(pt.scenario, seed=3)
        res[p] = (r, br.Measure(br.BG_ONE_LINK, bins=True)(r, pt))
    r, rows = res["rate_tracking"]
    allrow = rows[-1]
    assert allrow["class"] == "all"
    assert allrow["mean_active"] == pytest.approx(r.summary["background.access_mean_active"], rel=1e-6)
    assert allrow["mean_waiting"] == pytest.approx(r.summary["background.access_mean_waiting"], rel=1e-6)
    # the bins hold every measured short flow below 5 MB, and their sums give the mean
    f = r.flows
    m = f[(f["class"] == "web") & f["finished"] & (f["arrival"] >= 300) & (f["arrival"] < 1500 - 300)]
    small = m[m["size"] < 5e6]
    assert allrow["bin_count"].sum() == len(small) and allrow["flows"] == len(m)
    assert allrow["bin_sum"].sum() == pytest.approx(small["completion_time"].sum())
    # pairing: the same short flows (arrival and size) under both policies
    wv = res["vanilla"][0].flows.query("`class` == 'web'")[["arrival", "size"]].to_numpy()
    wa = f.query("`class` == 'web'")[["arrival", "size"]].to_numpy()
    assert np.array_equal(wv, wa)
    # vanilla has no waiting chunks, no limit, and delivers about what arrives (the bytes of
    # chunks open at either end of the window make the difference)
    v = res["vanilla"][1][-1]
    assert v["mean_waiting"] == 0 and math.isnan(v["mean_limit"]) and 0.9 < v["carried"] < 1.1


def _rows(values: dict, k=0, carried=1.0) -> pd.DataFrame:
    """Three seeds per (policy, load) whose delay over vanilla's (10 s) is r·(1 ± 0.1%)."""
    rows = []
    for seed, wob in ((1, 0.999), (2, 1.0), (3, 1.001)):
        for x in sorted({x for _, x in values}):
            rows.append({"level": "packet", "policy": "vanilla", "load": x, "k": k, "seed": seed, "group": (x, k),
                         "class": "all", "delay": 10.0, "mean_active": 2.0, "carried": 1.0, "delay_var": 1.0})
        for (p, x), r in values.items():
            rows.append({"level": "packet", "policy": p, "load": x, "k": k, "seed": seed, "group": (x, k),
                         "class": "all", "delay": 10.0 * r * wob, "mean_active": 2.0 * r * wob, "delay_var": 1.0,
                         "carried": carried if p == "rate_tracking" else 1.0})
    return br.paired_rows(pd.DataFrame(rows), on=["load", "k"])


def test_fig7_claims_read_the_printed_numbers_and_the_carried_load():
    vals = {(p, x): r for x in (0.3, 0.5, 0.65) for p, r in
            (("rate_tracking", 0.8), ("ledbat", 0.82), ("ledbat_60", 0.9), ("tcp_lp", 0.95))}
    vals[("rate_tracking", 0.65)] = 0.70  # paper 0.72
    vals[("ledbat", 0.65)] = 0.93  # paper 0.90
    vals[("ledbat", 0.5)] = 2.0  # LEDBAT's active ratio peaks at 0.5 and falls beyond
    claims = {c.text: c.verdict() for c in bp.fig7_claims(_rows(vals))}
    assert claims["LEDBAT's delay is 10% below vanilla's at 95% total load (ρ = 0.65)"] == HOLDS
    assert claims["access control's delay is 28% below vanilla's at 95% total load"] == HOLDS
    assert claims["access control's delay is below LEDBAT's at ρ = 0.65"] == HOLDS
    vals[("rate_tracking", 0.65)] = 1.0
    claims = {c.text: c.verdict() for c in bp.fig7_claims(_rows(vals))}
    assert claims["access control's delay is 28% below vanilla's at 95% total load"] == FAILS
    assert claims["access control's delay is below LEDBAT's at ρ = 0.65"] == FAILS
    # the paper's 0.72 met by a controller that left 10% of its chunks waiting is no agreement
    vals[("rate_tracking", 0.65)] = 0.70
    claims = {c.text: c.verdict() for c in bp.fig7_claims(_rows(vals, carried=0.9))}
    assert claims["access control's delay is 28% below vanilla's at 95% total load"] == FAILS


# ------------------------------------------------------------------------------- each entry, tiny

def tiny(**axes) -> dict:
    return dict(seeds=2, max_seeds=2, duration=1500.0, warmup=300.0, flow=(3, 5e3), axes=axes)


def test_fig5_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("background-packet-fig5", tmp_path, monkeypatch,
                         tiny(k=(0, 1), ρ=(0.2, 0.6), policies=bp.POLICIES))
    assert {"k", "policy", "load", "delay_ratio", "active_ratio", "delay_ratio_ci", "carried", "seeds"} <= set(csv)
    assert set(csv["policy"]) == set(bp.POLICIES) | {"low_priority"}
    pk = csv[csv["level"] == "packet"].set_index(["k", "policy", "load"])
    # k = 1, ρ = 0.6: access control keeps fewer micro-flows active than LEDBAT and TCP-LP (Fig. 5d)
    for p in ("ledbat", "tcp_lp"):
        assert pk.at[(1, "rate_tracking", 0.6), "mean_active"] < pk.at[(1, p, 0.6), "mean_active"]
    # LBEs leave every micro-flow active and none waiting; access control keeps some waiting
    assert (csv[csv["policy"].isin(bp.LBES)]["mean_waiting"] == 0).all()
    rt = csv[(csv["policy"] == "rate_tracking") & (csv["level"] == "packet")]
    assert (rt["mean_waiting"] > 0).all()


def test_fig6_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("background-packet-fig6", tmp_path, monkeypatch, tiny(ρ=(0.2, 0.6), policies=bp.FIG6_POLICIES))
    assert {"load", "policy", "bin_start_bytes", "delay_ratio", "delay_ratio_ci", "flows"} <= set(csv.columns)
    assert sorted(csv["bin_start_bytes"].unique()) == [50_000 * i for i in range(100)]
    # the same flows fall in the same bins under every policy (paired arrivals and sizes)
    n = csv[csv["load"] == 0.6].groupby("policy")["flows"].sum()
    assert n.max() - n.min() <= 0.02 * n.max()  # only flows unfinished at the end differ


def test_fig7_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("background-packet-fig7", tmp_path, monkeypatch, tiny(ρ=(0.4, 0.65), policies=bp.POLICIES))
    assert {"policy", "load", "delay_ratio", "active_ratio", "carried"} <= set(csv.columns)


def test_fig9_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("background-packet-fig9", tmp_path, monkeypatch, tiny(ρ1=(0.3, 0.5), policies=bp.POLICIES))
    assert {"route", "load", "policy", "delay_ratio"} <= set(csv.columns)
    assert set(csv["route"].astype(str)) == {"1", "123", "2", "23"} and set(csv["load"]) == {0.3, 0.5}
