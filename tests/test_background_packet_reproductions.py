"""The background paper's packet-level reproductions
(python/cclab/experiments/reproductions/background_packet.py): the networks of Figs. 5-9,
the measurements and the pairing with vanilla, the paper's statements, and each entry
run at a tiny size."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import cclab
from cclab.experiments import catalogue
from cclab.experiments.reproductions import background_packet as bp
from cclab.experiments.reproductions import fairbat as fb

SETUPS = {"fig5": bp.single_link(1), "fig7": bp.TWO_LINKS, "fig9": bp.THREE_LINKS}


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
@pytest.mark.parametrize("fig", sorted(SETUPS))
def test_every_background_class_takes_the_policy(fig, policy):
    setup = SETUPS[fig]
    cfg = cclab.validate(bp.packet_scenario(setup, policy, 0.5, duration=100, warmup=10,
                                            m0={n: 2.5 for n in setup.background}))["config"]
    want = fb.PACKET_POLICIES[policy]
    by = {c["name"]: c for c in cfg["classes"]}
    for name in setup.background:
        c = by[name]
        assert c["transport"]["cc"]["protocol"] == want["protocol"]
        assert ("access" in c) == ("access" in want)
        if "access" in want:  # the warm start reaches the controller
            assert c["access"]["policy"] == "rate_tracking" and c["access"]["m0"] == 2.5
        if "cc" in want:
            assert c["transport"]["cc"]["params"]["variant"] == want["cc"]["variant"]
    for name in setup.web:
        assert by[name]["transport"]["cc"]["protocol"] == "reno" and "access" not in by[name]
    assert ("long" in by) == (setup.k > 0)


def test_the_link_loads_are_those_of_the_paper():
    # Fig. 5: ρ + ρ_b; Fig. 7: ρ + 0.3 on both links; Fig. 8: ρ1 + 0.4, 0.8, 0.6 (§IV-D:
    # "link 1 is not excessively loaded (70%)" at ρ1 = 0.3).
    cfg = lambda s, x: cclab.validate(bp.packet_scenario(s, "vanilla", x, duration=100, warmup=10))["config"]
    assert link_loads(cfg(bp.single_link(0), 0.6)) == [0.9]
    assert link_loads(cfg(bp.TWO_LINKS, 0.65)) == [0.95, 0.95]
    assert link_loads(cfg(bp.THREE_LINKS, 0.3)) == [0.7, 0.8, 0.6]
    assert link_loads(cfg(bp.THREE_LINKS, 0.5)) == [0.9, 0.8, 0.6]
    routes = {c["name"]: len(c["route"]) for c in cfg(bp.THREE_LINKS, 0.3)["classes"]}
    assert routes == {"web_1": 1, "web_123": 3, "web_2": 1, "web_23": 2, "background_123": 3, "background_2": 1,
                      "background_23": 2}


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="policy"):
        bp.packet_scenario(bp.TWO_LINKS, "ledbat_b", 0.4, duration=100, warmup=10)


def test_measurements_agree_with_the_engine_and_the_runs_are_paired():
    """The time averages read from the flows table equal the access controller's own
    (docs/protocols.md: to 1e-6); vanilla and access control see the same short flows."""
    setup = bp.single_link(1)
    res = {}
    for p in ("vanilla", "rate_tracking"):
        r = cclab.run(bp.packet_scenario(setup, p, 0.5, duration=1500, warmup=300), seed=3)
        res[p] = (r, bp.run_metrics(r, setup, 0.5, 300, 1500, bins=True))
    r, rows = res["rate_tracking"]
    allrow = rows[-1]
    assert allrow["class"] == "all"
    assert allrow["mean_active"] == pytest.approx(r.summary["background.access_mean_active"], rel=1e-6)
    assert allrow["mean_waiting"] == pytest.approx(r.summary["background.access_mean_waiting"], rel=1e-6)
    assert allrow["mean_limit"] == pytest.approx(r.summary["background.access_mean_limit"])
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
    # vanilla has no waiting chunks, no limit, and carries what arrives (within the backlog)
    v = res["vanilla"][1][-1]
    assert v["mean_waiting"] == 0 and math.isnan(v["mean_limit"]) and 0.8 < v["carried"] < 1.2


def _runs(values: dict[tuple[str, float], tuple[float, float]], k=1, cls="all") -> pd.DataFrame:
    """Two seeds per (policy, x) whose delays over vanilla's (10 s) are r ± d."""
    rows = []
    for seed, sign in ((1, -1), (2, 1)):
        for x in sorted({x for _, x in values}):
            rows.append({"level": "packet", "policy": "vanilla", "x": x, "k": k, "seed": seed, "class": cls,
                         "delay": 10.0, "flows": 100, "unfinished": 0, "mean_active": 2.0, "mean_waiting": 0.0,
                         "carried": 1.0, "mean_limit": math.nan})
        for (p, x), (r, d) in values.items():
            rows.append({"level": "packet", "policy": p, "x": x, "k": k, "seed": seed, "class": cls,
                         "delay": 10.0 * (r + sign * d), "flows": 100, "unfinished": 0,
                         "mean_active": 2.0 * (r + sign * d), "mean_waiting": 0.0, "carried": 1.0,
                         "mean_limit": math.nan})
    return pd.DataFrame(rows)


def test_summarize_pairs_each_run_with_vanilla_of_its_seed():
    s = bp.summarize(_runs({("ledbat", 0.6): (0.8, 0.1)})).set_index("policy")
    assert s.at["ledbat", "delay_ratio"] == pytest.approx(0.8)
    half = stats.t.ppf(0.975, 1) * np.std([0.7, 0.9], ddof=1) / math.sqrt(2)
    assert s.at["ledbat", "delay_ratio_ci"] == pytest.approx(half)
    assert s.at["vanilla", "delay_ratio"] == 1.0 and s.at["vanilla", "delay_ratio_ci"] == 0.0


def test_the_comparisons_of_the_verdicts():
    assert bp.compare((0.7, 0.05), (0.9, 0.05)) == "holds"
    assert bp.compare((0.92, 0.05), (0.9, 0.05)) == "within CI"
    assert bp.compare((1.1, 0.05), (0.9, 0.05)) == "fails"
    assert bp.near((0.85, 0.01), 0.90, 0.10) == "holds"
    assert bp.near((0.75, 0.06), 0.90, 0.10) == "within CI"
    assert bp.near((0.6, 0.05), 0.90, 0.10) == "fails"


def test_fig7_claims_read_the_printed_numbers():
    # two seeds r ± 0.002: 95% half-widths of 12.7 · 0.0028 / √2 = 0.025
    vals = {(p, x): (r, 0.002) for x in (0.3, 0.5, 0.65) for p, r in
            (("rate_tracking", 0.8), ("ledbat", 0.85), ("ledbat_60", 0.9), ("tcp_lp", 0.95))}
    vals[("rate_tracking", 0.65)] = (0.70, 0.002)  # paper 0.72
    vals[("ledbat", 0.65)] = (0.93, 0.002)  # paper 0.90
    claims = {c[0]: c[2] for c in bp.fig7_claims(bp.summarize(_runs(vals, k=0)))}
    assert claims["LEDBAT's delay is 10% below vanilla's at 95% total load (ρ = 0.65)"] == "holds"
    assert claims["access control's delay is 28% below vanilla's at 95% total load"] == "holds"
    assert claims["access control's delay is below LEDBAT's at ρ = 0.65"] == "holds"
    vals[("rate_tracking", 0.65)] = (1.0, 0.002)
    claims = {c[0]: c[2] for c in bp.fig7_claims(bp.summarize(_runs(vals, k=0)))}
    assert claims["access control's delay is 28% below vanilla's at 95% total load"] == "fails"
    assert claims["access control's delay is below LEDBAT's at ρ = 0.65"] == "fails"


# ------------------------------------------------------------------- each entry at a tiny size


@pytest.fixture
def tiny(monkeypatch):
    """Every entry at 2 seeds x 1,500 s (300 s warm-up), two loads; flow level 10 x 5,000 s."""
    size = (1500.0, 300.0, 5e3)
    for fig in ("FIG5", "FIG6", "FIG7", "FIG9"):
        monkeypatch.setattr(bp, f"{fig}_QUICK", size)
    monkeypatch.setattr(bp, "FIG5_QUICK_LOADS", (0.2, 0.6))
    monkeypatch.setattr(bp, "FIG7_QUICK_LOADS", (0.4, 0.65))
    monkeypatch.setattr(bp, "seeds_of", lambda ctx: range(1, 3))


def _run(name, tmp_path):
    out, paths = catalogue.get(name).run(quick=True, out=tmp_path, progress=False)
    csv = pd.read_csv(paths["csv"])
    assert paths["png"].stat().st_size > 0 and "verdict" in paths["md"].read_text()
    return out, csv


def test_fig5_tiny(tiny, tmp_path):
    out, csv = _run("background-packet-fig5", tmp_path)
    assert {"k", "policy", "load", "delay_ratio", "active_ratio", "delay_ratio_ci", "carried"} <= set(csv.columns)
    assert set(csv["policy"]) == set(bp.POLICIES) | {"low_priority"}
    pk = csv[csv["level"] == "packet"].set_index(["k", "policy", "load"])
    # k = 1, ρ = 0.6: access control keeps the short flows' delay below LEDBAT's and
    # TCP-LP's (Fig. 5b), with far fewer active micro-flows (Fig. 5d)
    for p in ("ledbat", "tcp_lp"):
        assert pk.at[(1, "rate_tracking", 0.6), "delay_ratio"] < pk.at[(1, p, 0.6), "delay_ratio"]
        assert pk.at[(1, "rate_tracking", 0.6), "mean_active"] < pk.at[(1, p, 0.6), "mean_active"]
    # LBEs leave every micro-flow active and none waiting; access control keeps some
    # waiting and, on average, no more active than its limit (equal while chunks wait,
    # fewer when none does; the 5% allow a chunk over a limit that has just fallen, which
    # finishes and is not paid back, docs/protocols.md)
    assert (csv[csv["policy"].isin(bp.LBES)]["mean_waiting"] == 0).all()
    rt = csv[(csv["policy"] == "rate_tracking") & (csv["level"] == "packet")]
    assert (rt["mean_waiting"] > 1).all()
    assert (rt["mean_active"] <= 1.05 * rt["mean_limit"]).all()


def test_fig6_tiny(tiny, tmp_path):
    out, csv = _run("background-packet-fig6", tmp_path)
    assert {"load", "policy", "bin_start_bytes", "delay_ratio", "delay_ratio_ci", "flows"} <= set(csv.columns)
    assert sorted(csv["bin_start_bytes"].unique()) == [50_000 * i for i in range(100)]
    assert set(csv["load"]) == {0.2, 0.6} and set(csv["policy"]) == set(bp.FIG6_POLICIES)
    # vanilla's delay grows with the size (bins of 0-0.5 MB against 2.5-5 MB), and the
    # same flows fall in the same bins under every policy (paired arrivals and sizes)
    v = csv[(csv["policy"] == "vanilla") & (csv["load"] == 0.6)].set_index("bin_start_bytes")
    assert v.loc[:450_000, "delay_s"].mean() < v.loc[2_500_000:, "delay_s"].mean()
    n = csv[csv["load"] == 0.6].groupby("policy")["flows"].sum()
    assert n.max() - n.min() <= 0.02 * n.max()  # only flows unfinished at the end differ


def test_fig7_tiny(tiny, tmp_path):
    out, csv = _run("background-packet-fig7", tmp_path)
    assert {"policy", "load", "delay_ratio", "active_ratio"} <= set(csv.columns)
    pk = csv[csv["level"] == "packet"].set_index(["policy", "load"])
    # 95% total load on each link (ρ = 0.65): access control below LEDBAT (paper 0.72 vs 0.90)
    assert pk.at[("rate_tracking", 0.65), "delay_ratio"] < pk.at[("ledbat", 0.65), "delay_ratio"]
    assert pk.at[("rate_tracking", 0.65), "mean_active"] < pk.at[("ledbat", 0.65), "mean_active"]


def test_fig9_tiny(tiny, tmp_path):
    out, csv = _run("background-packet-fig9", tmp_path)
    assert {"route", "rho1", "policy", "delay_ratio"} <= set(csv.columns)
    assert set(csv["route"].astype(str)) == {"1", "123", "2", "23"} and set(csv["rho1"]) == {0.3, 0.5}
    pk = csv[csv["level"] == "packet"].set_index(["route", "policy", "rho1"])
    pk.index = pk.index.set_levels(pk.index.levels[0].astype(str), level=0)
    # route 1 at ρ1 = 0.5 (link 1 at 90%): access control below every LBE (§IV-D)
    for p in bp.LBES:
        assert pk.at[("1", "rate_tracking", 0.5), "delay_ratio"] < pk.at[("1", p, 0.5), "delay_ratio"]
