"""The building blocks of the FAIRBAT reproductions (python/cclab/experiments/reproductions/fairbat.py):
each policy's packet-level scenario, the pairing with vanilla, the paper's statements, small runs."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import cclab
from cclab.experiments.reproductions import fairbat as fb


@pytest.mark.parametrize("policy", fb.POLICIES)
def test_each_policy_sets_up_the_background_class(policy):
    extra = {"limit": 3} if policy == "access" else None
    sc = fb.packet_scenario(policy, 0.4, k=3, duration=100, warmup=10, access=extra)
    cfg = cclab.validate(sc)["config"]
    names = [c["name"] for c in cfg["classes"]]
    assert names == ["web", "background", "long"]
    bg = cfg["classes"][1]
    want = fb.PACKET_POLICIES[policy]
    assert bg["transport"]["cc"]["protocol"] == want["protocol"]
    assert ("access" in bg) == ("access" in want)
    if "access" in want:
        assert bg["access"]["policy"] == want["access"]["policy"]
    if "cc" in want:
        assert bg["transport"]["cc"]["params"]["variant"] == want["cc"]["variant"]
    assert cfg["classes"][2]["arrivals"] == {"type": "long_lived", "count": 3}
    # 0.4 of 10 Mbps in files of 3 MB: 1/6 files per second.
    assert math.isclose(bg["arrivals"]["rate_per_s"], 0.4 * 10e6 / 8 / 3e6)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="policy"):
        fb.packet_scenario("ledbat_b", 0.4)


def test_summarize_pairs_each_run_with_the_vanilla_run_of_its_seed():
    rows = []
    for seed, (van, pol, av, ap) in enumerate([(10.0, 5.0, 2.0, 1.0), (20.0, 15.0, 4.0, 1.0)]):
        common = {"level": "packet", "background_load": 0.4, "k": 0, "seed": seed, "web_delay_var": 1.0,
                  "mean_waiting": 0.0, "mean_limit": math.nan, "sd_limit": math.nan, "bg_throughput_bps": 4e6}
        rows.append({**common, "policy": "vanilla", "web_delay": van, "mean_active": av})
        rows.append({**common, "policy": "fairbat", "web_delay": pol, "mean_active": ap})
    s = fb.summarize(pd.DataFrame(rows)).set_index("policy")
    # Improvements 50% and 25% (not 1 - 20/30): paired by seed.
    assert s.at["fairbat", "improvement_pct"] == pytest.approx(37.5)
    assert s.at["fairbat", "improvement_pct_ci"] == pytest.approx(stats.t.ppf(0.975, 1) * np.std([50, 25], ddof=1) / math.sqrt(2))
    assert s.at["fairbat", "active_ratio"] == pytest.approx((0.5 + 0.25) / 2)
    assert s.at["vanilla", "improvement_pct"] == 0.0
    assert s.at["fairbat", "bg_throughput_ratio"] == pytest.approx(1.0)


def _summary(imp: dict, ratio: dict) -> pd.DataFrame:
    rows = []
    for (p, b), v in imp.items():
        rows.append({"level": "packet", "policy": p, "background_load": b, "improvement_pct": v,
                     "improvement_pct_ci": 1.0, "active_ratio": ratio[(p, b)], "active_ratio_ci": 0.05})
    return pd.DataFrame(rows)


def test_the_papers_statements_hold_fail_or_sit_within_the_intervals():
    loads = (0.2, 0.4, 0.6)
    imp = {("fairbat", b): 10 + 100 * b for b in loads}
    imp.update({("ledbat", b): 30 + 100 * b for b in loads})
    imp.update({("ledbat_a", b): 20 + 50 * b for b in loads})
    imp.update({("tcp_lp", b): 35 + 10 * b for b in loads})
    ratio = {("fairbat", b): 0.5 for b in loads}
    ratio.update({("ledbat", b): 1 + b for b in loads})
    ratio.update({("ledbat_a", b): 0.9 + b for b in loads})
    ratio.update({("tcp_lp", 0.2): 2.0, ("tcp_lp", 0.4): 3.0, ("tcp_lp", 0.6): 2.5})
    claims = fb.fig1_claims(_summary(imp, ratio))
    assert len(claims) == 10 and all(c[2] == "holds" for c in claims), claims
    # FAIRBAT below TCP-LP at high load by more than the intervals: that statement fails.
    imp[("fairbat", 0.6)] = 30.0
    verdicts = {c[0]: c[2] for c in fb.fig1_claims(_summary(imp, ratio))}
    assert verdicts["FAIRBAT outperforms TCP-LP at high load (§IV-A)"] == "fails"
    # A reversal inside the intervals is not a failure.
    imp[("fairbat", 0.6)] = 40.5
    imp[("tcp_lp", 0.6)] = 41.5
    verdicts = {c[0]: c[2] for c in fb.fig1_claims(_summary(imp, ratio))}
    assert verdicts["FAIRBAT outperforms TCP-LP at high load (§IV-A)"] == "within CI"


def test_small_runs_at_both_levels_give_the_columns_the_entries_read():
    runs = fb.run_packet(("vanilla", "fairbat"), (0.3,), [1], duration=600, warmup=100)
    assert list(runs["policy"]) == ["vanilla", "fairbat"]
    van, fair = runs.iloc[0], runs.iloc[1]
    assert van["web_delay"] > 0 and math.isnan(van["mean_limit"]) and van["mean_waiting"] == 0
    assert fair["mean_limit"] > 0 and fair["mean_waiting"] > 0
    flow = fb.run_flow(("vanilla", "fairbat"), (0.3,), duration=2e4, replications=2, seed=1)
    assert len(flow) == 4 and set(flow["level"]) == {"flow"}
    s = fb.summarize(pd.concat([runs, flow], ignore_index=True))
    assert set(zip(s["level"], s["policy"])) == {(l, p) for l in ("packet", "flow") for p in ("vanilla", "fairbat")}


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


def test_summarize_by_pairs_each_web_load_with_its_own_vanilla():
    rows = []
    for w, van in [(0.3, 10.0), (0.7, 40.0)]:
        for seed in (1, 2):
            common = {"level": "packet", "background_load": 0.2, "k": 0, "seed": seed, "web_load": w,
                      "web_delay_var": 4.0, "mean_active": 2.0, "mean_waiting": 0.0, "mean_limit": math.nan,
                      "sd_limit": math.nan, "bg_throughput_bps": 2e6}
            rows.append({**common, "policy": "vanilla", "web_delay": van})
            rows.append({**common, "policy": "fairbat", "web_delay": van * (0.9 if w == 0.3 else 0.5),
                         "web_delay_var": 1.0})
    s = fb.summarize_by(pd.DataFrame(rows), ("web_load",)).set_index(["policy", "web_load"])
    assert s.at[("fairbat", 0.3), "improvement_pct"] == pytest.approx(10.0)
    assert s.at[("fairbat", 0.7), "improvement_pct"] == pytest.approx(50.0)
    assert s.at[("fairbat", 0.7), "normalized_variance"] == pytest.approx(0.25)
    assert s.at[("vanilla", 0.7), "seeds"] == 2


def test_the_two_link_scenario_puts_web_flows_on_each_link_and_the_chunks_across_both():
    sc = fb.packet_scenario("ledbat", 0.2, web_load=0.6, duration=100, warmup=10, base="fairbat/two-links.toml")
    cfg = cclab.validate(sc)["config"]
    by = {c["name"]: c for c in cfg["classes"]}
    names = [l["name"] for l in cfg["links"]]
    route = {c: [names[i] for i in by[c]["route"]] for c in by}
    assert route == {"web1": ["link1"], "web2": ["link2"], "background": ["link1", "link2"]}
    for w in ("web1", "web2"):  # 0.6 of 10 Mbps in 3 MB files
        assert math.isclose(by[w]["arrivals"]["rate_per_s"], 0.6 * 10e6 / 8 / 3e6)
    assert "access" not in by["background"]


def test_packet_metrics_pool_the_web_classes():
    sc = fb.packet_scenario("vanilla", 0.2, web_load=0.3, duration=600, warmup=100, base="fairbat/two-links.toml")
    r = cclab.run(sc, seed=3)
    m = fb.packet_metrics(r, 100.0, 600.0)
    f = r.flows
    web = f[f["class"].isin(["web1", "web2"]) & ~f["warmup"]]
    assert m["web_flows"] == len(web) and (web["class"] == "web1").any() and (web["class"] == "web2").any()
    assert m["web_delay"] == pytest.approx(web[web["finished"]]["completion_time"].mean())


def test_an_ideal_lbe_across_two_links_carries_what_eq_1_allows():
    # Web load 0.7 on each link: both links are free of web flows (1−0.7)² = 9% of the
    # time, so an ideal low-priority background of load 0.2 carries 0.09/0.2 = 45% of it.
    runs = fb.run_flow_jobs([fb.FlowJob("low_priority", 0.2, web_load=0.7, links=2)], duration=4e4,
                            replications=4, seed=2)
    carried = runs["bg_throughput_bps"].mean() / (0.2 * fb.LINK_BPS)
    assert carried == pytest.approx(0.45, abs=0.04)


def test_every_fairbat_entry_is_in_the_catalogue_with_both_sizes():
    from cclab.experiments import catalogue

    entries = {e.name: e for e in catalogue.entries()}
    for name in ("fairbat-fig1", "fairbat-fig2", "fairbat-table1", "fairbat-fig3", "fairbat-fig5",
                 "fairbat-sensitivity"):
        assert entries[name].quick_size and entries[name].full_size, name


def test_fig2_flags_a_fairbat_that_does_not_carry_its_load_and_lbes_that_gain():
    rows = []
    for p in ("fairbat", "ledbat", "ledbat_a", "tcp_lp"):
        for b in (0.2, 0.6):
            imp = {"fairbat": 10 + 50 * b, "ledbat": 1.0, "ledbat_a": -2.0, "tcp_lp": -5.0}[p]
            rows.append({"level": "packet", "policy": p, "background_load": b, "k": 3, "improvement_pct": imp,
                         "improvement_pct_ci": 1.0, "active_ratio": 0.5 if p == "fairbat" else 3.0,
                         "active_ratio_ci": 0.1, "bg_throughput_ratio": 1.0, "bg_throughput_ratio_ci": 0.01})
    for b in (0.2, 0.6):
        th = float(fb.theorem7_improvement(b, 3))
        rows.append({"level": "flow", "policy": "fairbat", "background_load": b, "k": 3, "improvement_pct": th - 1,
                     "improvement_pct_ci": 0.3})
    s = pd.DataFrame(rows)
    assert all(c[2] == "holds" for c in fb.fig2_claims(s)), fb.fig2_claims(s)
    s.loc[(s.policy == "fairbat") & (s.background_load == 0.6) & (s.level == "packet"), "bg_throughput_ratio"] = 0.9
    s.loc[(s.policy == "ledbat") & (s.background_load == 0.6), "improvement_pct"] = 15.0
    s.loc[(s.level == "flow") & (s.background_load == 0.6), "improvement_pct"] -= 4.0
    failed = {c[0].split(" (")[0] for c in fb.fig2_claims(s) if c[2] == "fails"}
    assert failed == {"FAIRBAT serves the arriving chunks", "ledbat: impact negligible or negative",
                      "flow level: FAIRBAT within 3 points of Theorem 7"}, failed
