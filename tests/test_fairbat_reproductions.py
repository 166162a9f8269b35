"""The FAIRBAT reproductions (python/cclab/experiments/reproductions/fairbat.py) and the
runs they share with the background paper's (background_runs.py): each policy's
scenario, what a run measures, the pairing with vanilla, the paper's statements as
claims, and each entry at a tiny size through the store, twice (the second time from
the store alone)."""
import math

import numpy as np
import pandas as pd
import pytest

import cclab
from cclab.experiments import catalogue, runs as runs_mod
from cclab.experiments.claims import FAILS, HOLDS, WITHIN
from cclab.experiments.reproductions import background_runs as br
from cclab.experiments.reproductions import fairbat as fb
from cclab.experiments.runs import Point
from cclab.experiments.sizes import Size


@pytest.mark.parametrize("policy", br.POLICIES)
def test_each_policy_sets_up_the_background_class(policy):
    extra = {"limit": 3} if policy == "access" else None
    sc = br.packet_scenario(fb.SINGLE, policy, {"web": 0.3, "background": 0.4}, k=3, duration=100, warmup=10,
                            access=extra)
    cfg = cclab.validate(sc)["config"]
    assert [c["name"] for c in cfg["classes"]] == ["web", "background", "long"]
    bg = cfg["classes"][1]
    want = br.POLICIES[policy]
    assert bg["transport"]["cc"]["protocol"] == want["protocol"]
    assert ("access" in bg) == ("access" in want)
    if "access" in want:
        assert bg["access"]["policy"] == want["access"]["policy"]
    if "cc" in want:
        assert bg["transport"]["cc"]["params"]["variant"] == want["cc"]["variant"]
    assert cfg["classes"][2]["arrivals"] == {"type": "long_lived", "count": 3}
    # 0.4 of 10 Mbps in files of 3 MB: 1/6 files per second.
    assert math.isclose(bg["arrivals"]["rate_per_s"], 0.4 * 10e6 / 8 / 3e6)


def test_an_unknown_policy_or_class_is_refused():
    with pytest.raises(ValueError, match="policy"):
        br.packet_scenario(fb.SINGLE, "ledbat_b", {"background": 0.4}, duration=10, warmup=1)
    with pytest.raises(ValueError, match="no class 'web9'"):
        br.packet_scenario(fb.SINGLE, "vanilla", {"web9": 0.4}, duration=10, warmup=1)


def test_the_two_link_scenario_puts_web_flows_on_each_link_and_the_chunks_across_both():
    sc = br.packet_scenario(fb.TWO, "ledbat", {"web1": 0.6, "web2": 0.6, "background": 0.2}, duration=100, warmup=10)
    cfg = cclab.validate(sc)["config"]
    by = {c["name"]: c for c in cfg["classes"]}
    names = [l["name"] for l in cfg["links"]]
    route = {c: [names[i] for i in by[c]["route"]] for c in by}
    assert route == {"web1": ["link1"], "web2": ["link2"], "background": ["link1", "link2"]}
    for w in ("web1", "web2"):  # 0.6 of 10 Mbps in 3 MB files
        assert math.isclose(by[w]["arrivals"]["rate_per_s"], 0.6 * 10e6 / 8 / 3e6)
    assert "access" not in by["background"]


def test_a_run_measures_the_web_delays_the_chunks_and_what_was_carried():
    p = br.packet_point(fb.TWO, "fairbat", {"web1": 0.3, "web2": 0.3, "background": 0.2},
                        Size(duration=2000.0, warmup=400.0))
    r = cclab.run(p.scenario, seed=3)
    rows = {row["class"]: row for row in br.Measure(fb.TWO)(r, p)}
    assert set(rows) == {"web1", "web2", "all"}
    f = r.flows
    end = 2000.0 - min(br.DRAIN, 1600.0 / 4)
    web = f[f["class"].isin(["web1", "web2"]) & (f["arrival"] >= 400) & (f["arrival"] < end)]
    assert rows["all"]["flows"] == int(web["finished"].sum())
    assert rows["all"]["delay"] == pytest.approx(web[web["finished"]]["completion_time"].mean())
    assert rows["all"]["delay_var"] == pytest.approx(web[web["finished"]]["completion_time"].var(ddof=1))
    # the chunks' busy time: the controller's own average agrees
    assert rows["all"]["mean_active"] == pytest.approx(r.summary["background.access_mean_active"], rel=1e-6)
    # carried: bytes delivered over bytes arrived in the measured window
    bg = f[(f["class"] == "background") & (f["arrival"] >= 400)]
    delivered = r.summary["background.throughput_bps"] * 1600 / 8
    assert rows["all"]["carried"] == pytest.approx(delivered / bg["size"].sum())
    assert rows["all"]["mean_limit"] == pytest.approx(r.summary["background.access_mean_limit"])


def test_theorem_7_improvement_is_the_ratio_of_eq_16_to_processor_sharing():
    # k = 3, ρ = 0.3, ρ_b = 0.6: M* = 18 (eq. 27); web flows (k+M*+1)ρ/(1−ρ) = 9.43 under
    # access control, (k+1)ρ/(1−ρ−ρ_b) = 12 under vanilla: 21.43% fewer, hence shorter delays.
    assert fb.critical_limit(0.6, 3) == pytest.approx(18.0)
    for k, rb in [(1, 0.2), (3, 0.6), (5, 0.4)]:
        m = fb.critical_limit(rb, k)
        access = (k + m + 1) * 0.3 / 0.7
        vanilla = (k + 1) * 0.3 / (1 - 0.3 - rb)
        assert fb.theorem7_improvement(rb, k) == pytest.approx(100 * (1 - access / vanilla))
    assert fb.theorem7_improvement(0.6, 3) == pytest.approx(21.428571, rel=1e-6)


def test_an_ideal_lbe_across_two_links_carries_what_eq_1_allows():
    # Web load 0.7 on each link: both links are free of web flows (1−0.7)² = 9% of the
    # time, so an ideal low-priority background of load 0.2 carries 0.09/0.2 = 45% of it.
    rows = br.flow_rows(fb.TWO, "low_priority", {"web1": 0.7, "web2": 0.7, "background": 0.2}, duration=4e4,
                        replications=4, seed=2, payload=False)
    carried = np.mean([r["carried"] for r in rows if r["class"] == "all"])
    assert carried == pytest.approx(0.45, abs=0.04)


# ------------------------------------------------------------------------------- claims on rows

def _rows(delays: dict, active: dict, carried: float = 1.0, seeds=(1, 2, 3), k: int = 0) -> pd.DataFrame:
    """Per-seed packet rows: a policy's delay at a load is the vanilla delay (10) times the
    given factor, with a small spread across seeds; active chunks as given."""
    out = []
    for (p, b), factor in delays.items():
        for s in seeds:
            wobble = 1 + 0.01 * (s - 2)
            out.append({"level": "packet", "policy": p, "background_load": b, "k": k, "class": "all", "seed": s,
                        "group": (b, k), "delay": 10.0 * factor * wobble, "delay_var": 4.0 * factor,
                        "mean_active": active[(p, b)] * wobble, "carried": carried if p == "fairbat" else 1.0})
    return pd.DataFrame(out)


def _fig1_case(fairbat_hi=0.3, carried=1.0):
    loads = (0.2, 0.4, 0.6)
    d = {("vanilla", b): 1.0 for b in loads}
    d.update({("fairbat", b): 0.9 - b for b in loads})
    d.update({("ledbat", b): 0.7 - b for b in loads})
    d.update({("ledbat_a", b): 0.8 - 0.5 * b for b in loads})
    d.update({("tcp_lp", b): 0.65 - 0.1 * b for b in loads})
    d[("fairbat", 0.6)] = fairbat_hi
    a = {("vanilla", b): 2.0 for b in loads}
    a.update({("fairbat", b): 1.0 for b in loads})
    a.update({("ledbat", b): 2.0 + 2 * b for b in loads})
    a.update({("ledbat_a", b): 1.8 + 2 * b for b in loads})
    a.update({("tcp_lp", 0.2): 4.0, ("tcp_lp", 0.4): 6.0, ("tcp_lp", 0.6): 5.0})
    return br.paired_rows(_rows(d, a, carried), on=["background_load", "k"])


def test_the_papers_statements_hold_fail_or_sit_within_the_intervals():
    verdicts = {c.text: c.verdict() for c in fb.fig1_claims(_fig1_case())}
    assert set(verdicts.values()) == {HOLDS}, verdicts
    # FAIRBAT's delay at 0.6 above TCP-LP's by far more than the intervals: that fails
    verdicts = {c.text: c.verdict() for c in fb.fig1_claims(_fig1_case(fairbat_hi=0.7))}
    assert verdicts["FAIRBAT outperforms TCP-LP at high load (§IV-A)"] == FAILS
    # ... and a FAIRBAT that deferred work cannot support any statement it is part of
    verdicts = {c.text: c.verdict() for c in fb.fig1_claims(_fig1_case(carried=0.9))}
    assert verdicts["FAIRBAT outperforms TCP-LP at high load (§IV-A)"] == FAILS
    assert verdicts["FAIRBAT serves the arriving chunks: carried/offered ≥ 0.98 (§III, incentive compatibility)"] \
        == FAILS
    assert verdicts["LEDBAT's active-chunk ratio increases strictly with the load (§IV-A, Fig. 1b)"] == HOLDS


def test_pairing_gives_improvements_and_ratios_seed_by_seed():
    t = _fig1_case()
    fair = t[(t.policy == "fairbat") & (t.background_load == 0.2)].set_index("seed")
    assert list(fair["improvement_pct"]) == pytest.approx([30.0, 30.0, 30.0])
    assert list(fair["active_ratio"]) == pytest.approx([0.5, 0.5, 0.5])
    assert list(fair["variance_ratio"]) == pytest.approx([0.7, 0.7, 0.7])


# ------------------------------------------------------------------------------- each entry, tiny

TINY = {
    "fairbat-fig1": dict(seeds=2, max_seeds=3, duration=1500.0, warmup=300.0, flow=(3, 5e3),
                         axes={"ρ_b": (0.2, 0.6), "policies": fb.FIG1_POLICIES}),
    "fairbat-fig2": dict(seeds=2, max_seeds=2, duration=1500.0, warmup=300.0, flow=(3, 5e3),
                         axes={"ρ_b": (0.2, 0.6), "policies": fb.FIG1_POLICIES}),
    "fairbat-fig3": dict(seeds=2, max_seeds=2, duration=1500.0, warmup=300.0, flow=(3, 5e3),
                         axes={"k": (0, 3), "ρ_b": (0.2, 0.6), "policies": ("vanilla", "fairbat")}),
    "fairbat-fig5": dict(seeds=2, max_seeds=2, duration=1500.0, warmup=300.0, flow=(3, 5e3),
                         axes={"ρ_s": (0.3, 0.7), "policies": fb.FIG1_POLICIES}),
}


def run_twice(name: str, tmp_path, monkeypatch, size: dict | Size):
    """Run an entry at a tiny size, then again from the store alone (any simulation, packet
    or flow level, raises): its outcome, CSV and the second run's counts."""
    from cclab import _core

    e = catalogue.get(name)
    size = size if isinstance(size, Size) else e.sizes.quick.replace(**size)
    kw = dict(quick=True, out=tmp_path / "out", store=tmp_path / "store", progress=False, size=size, workers=2)
    out, paths = e.run(**kw)
    for p in paths.values():
        assert p.exists() and p.stat().st_size > 0
    assert "verdict" in paths["md"].read_text() and "| the paper says |" in paths["md"].read_text() or out.agrees is None
    runs_mod._MEASURED.clear()

    def refuse(*a, **k):
        raise AssertionError(f"{name}: a second run simulated again")

    with monkeypatch.context() as m:
        m.setattr(_core, "run_config", refuse)
        m.setattr(_core, "flowsim_run", refuse)
        again, paths = e.run(**kw)
    import json

    rec = json.loads(paths["json"].read_text())
    assert rec["runs"]["ran"] == 0 and rec["runs"]["cached"] == rec["runs"]["runs"] > 0, rec["runs"]
    assert again.verdict == out.verdict
    return out, pd.read_csv(paths["csv"])


def test_fig1_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("fairbat-fig1", tmp_path, monkeypatch, TINY["fairbat-fig1"])
    assert {"level", "policy", "background_load", "improvement_pct", "active_ratio", "carried", "seeds"} <= set(csv)
    pk = csv[csv.level == "packet"].set_index(["policy", "background_load"])
    # LBEs keep every chunk active, none waiting; FAIRBAT holds some back
    assert (pk.loc["ledbat", "mean_waiting"] == 0).all() and (pk.loc["fairbat", "mean_waiting"] > 0).all()
    assert (csv[csv.level == "flow"]["policy"].isin(["vanilla", "fairbat", "low_priority"])).all()


def test_fig2_and_table1_tiny_share_their_runs(tmp_path, monkeypatch):
    out, csv = run_twice("fairbat-fig2", tmp_path, monkeypatch, TINY["fairbat-fig2"])
    assert (csv["k"] == 3).all()
    # Table I reads the same runs: the store has them all
    e = catalogue.get("fairbat-table1")
    size = e.sizes.quick.replace(**TINY["fairbat-fig2"])
    t1, paths = e.run(quick=True, out=tmp_path / "out", store=tmp_path / "store", progress=False, size=size)
    import json

    assert json.loads(paths["json"].read_text())["runs"]["ran"] == 0
    assert {"paper", "variance_ratio", "within_tolerance"} <= set(t1.data.columns)


def test_fig3_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("fairbat-fig3", tmp_path, monkeypatch, TINY["fairbat-fig3"])
    assert set(csv["variant"]) == {"alternate", "weight"} and {"theory_pct", "m_star"} <= set(csv)


def test_fig5_tiny(tmp_path, monkeypatch):
    out, csv = run_twice("fairbat-fig5", tmp_path, monkeypatch, TINY["fairbat-fig5"])
    assert set(csv["web_load"]) == {0.3, 0.7}
