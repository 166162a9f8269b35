"""The reproductions' framework (issue 25): sizes declared once, claims and their one
verdict vocabulary with the deferred-work rule, pairing by seed, runs through the
result store with replication until the answer is known, resume after a kill, a second
run that simulates nothing, the tables each entry keeps, and the settling rule."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import cclab
from cclab.experiments import catalogue, runs as runs_mod
from cclab.experiments.claims import (CARRIED_MIN, FAILS, HOLDS, WITHIN, AllOf, Estimate, Greater, Near, Within,
                                      claims_table, judge)
from cclab.experiments.paired import busy_average, pair, summary
from cclab.experiments.runs import Point, overrides, replicate, run_points
from cclab.experiments.settling import mser, settling_time
from cclab.experiments.sizes import Size, Sizes
from cclab.sweeps import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # the crash tooling, not installed
from crashtest import TINY  # noqa: E402


# ------------------------------------------------------------------------------------- sizes

def test_a_size_describes_itself_and_checks_its_warm_up():
    s = Size(seeds=5, max_seeds=20, duration=30_000.0, warmup=10_000.0, axes={"ρ_b": (0.2, 0.4), "policies": ("a", "b")},
             flow=(10, 1e6), extra={"α interval (s)": 15})
    assert s.describe() == ("ρ_b 0.2, 0.4 × 2 policies × 5-20 seeds × 30,000 s (10,000 s warm-up); flow level 10 × "
                            "10^6 s; α interval (s) 15")
    assert s.most_seeds == 20 and s.axis("ρ_b") == (0.2, 0.4)
    with pytest.raises(KeyError, match="no axis 'ρ'"):
        s.axis("ρ")
    with pytest.raises(ValueError, match="shorter than the measured settling time"):
        Size(duration=100.0, warmup=10.0, settling=20.0)
    assert Size(seeds=3, duration=90_000.0, warmup=30_000.0, settling=28_320.0).describe() == \
        "3 seeds × 90,000 s (30,000 s warm-up, settling 28,320 s measured)"
    with pytest.raises(ValueError, match="max_seeds"):
        Size(seeds=5, max_seeds=3)
    with pytest.raises(ValueError, match="shorter than duration"):
        Size(duration=10.0, warmup=10.0)


def test_every_entry_declares_both_sizes():
    for e in catalogue.entries():
        assert isinstance(e.sizes, Sizes), e.name
        assert e.size_text(True) and e.size_text(False), e.name


# ------------------------------------------------------------------------------------- claims

def est(values, carried=None):
    return Estimate.of(dict(enumerate(values, start=1)), carried=None if carried is None else
                       Estimate.of(dict(enumerate(carried, start=1))))


def test_an_estimate_is_the_mean_and_student_interval_of_its_seeds_and_differences_pair_them():
    a = est([1.0, 2.0, 4.0])
    assert a.mean == pytest.approx(7 / 3)
    assert a.half == pytest.approx(stats.t.ppf(0.975, 2) * np.std([1, 2, 4], ddof=1) / math.sqrt(3))
    # paired: b = a + 1 seed by seed, so the difference has no spread at all
    d = est([2.0, 3.0, 5.0]) - a
    assert d.mean == pytest.approx(1.0) and d.half == pytest.approx(0.0)
    # only the seeds both have count; a constant subtracts from each
    assert (Estimate.of({1: 1.0, 5: 9.0}) - a).n == 1
    assert (a - Estimate.const(1.0)).mean == pytest.approx(4 / 3)


def test_each_claim_holds_sits_within_ci_or_fails():
    tight, wide = est([1.0, 1.1, 0.9]), est([1.0, 2.0, 0.0])
    assert Greater("", tight, 0.5).verdict() == HOLDS
    assert Greater("", tight, 1.5).verdict() == FAILS
    assert Greater("", wide, 1.5).verdict() == WITHIN
    assert Near("", tight, 1.6, 0.2).verdict() == FAILS and Near("", tight, 1.2, 0.2).verdict() == HOLDS
    assert Near("", tight, 1.3, 0.2).verdict() == WITHIN  # 0.3 off, but the interval (±0.25) reaches 0.2
    assert Near("", wide, 3.5, 0.2).verdict() == WITHIN
    assert Within("", tight, lo=0.95).verdict() == HOLDS and Within("", tight, hi=0.5).verdict() == FAILS
    assert AllOf("", [Greater("", tight, 0.5), Greater("", wide, 1.5)]).verdict() == WITHIN
    assert AllOf("", [Greater("", tight, 0.5), Greater("", tight, 1.5)]).verdict() == FAILS


def test_a_claim_resting_on_deferred_work_cannot_hold():
    better = est([0.5, 0.55, 0.45])
    for carried, want in [([0.99, 1.0, 1.01], HOLDS), ([0.97, 0.99, 0.975], WITHIN), ([0.9, 0.91, 0.89], FAILS)]:
        c = Greater("access control below vanilla", 1.0, est([0.5, 0.55, 0.45], carried))
        assert c.verdict() == want, (carried, c.verdict())
    assert CARRIED_MIN == 0.98
    # the carried ratio is shown beside the number, and travels through differences
    c = est([0.5, 0.55, 0.45], [0.9, 0.91, 0.89])
    assert "carried 0.900" in c.text()
    assert Near("", est([0.6, 0.6, 0.6]) - c, 0.1, 0.2).verdict() == FAILS
    assert Greater("", 1.0, better).verdict() == HOLDS


def test_a_claim_is_known_when_its_interval_is_narrower_than_half_its_tolerance():
    x = est([1.0, 1.02, 0.98])  # half-width 0.0497
    assert Near("", x, 1.0, 0.2).known() and not Near("", x, 1.0, 0.19).known()
    # an ordering is known once the interval of the difference excludes zero
    assert Greater("", x, 0.5).known() and not Greater("", x, 1.0).known()
    assert Greater("", x, 1.0, resolution=0.2).known()
    # one seed is never enough; a one-sided bound is known once the interval is on one side
    assert not Near("", est([1.0]), 1.0, 10.0).known()
    assert Within("", x, lo=0.9).known() and not Within("", x, lo=1.0).known()


def test_the_epilogue_counts_and_tables_the_claims():
    claims = [Greater("up", est([2.0, 2.1, 1.9]), 1.0), Greater("down", est([0.0, 0.1, -0.1]), 1.0)]
    text, agrees = judge(claims)
    assert text == "1 of 2 statements hold, 1 fail: down" and agrees is False
    table = claims_table(claims)
    assert "| up | 2.00 ± 0.25 vs 1 | 3 | holds |" in table and table.count("\n") == 3


# ------------------------------------------------------------------------------------- pairing

def test_busy_average_and_pairing_by_seed():
    # two intervals over [0, 10]: [2, 6) and [5, still open): 4 + 5 = 9 busy units
    assert busy_average([2.0, 5.0], [6.0, np.nan], 0.0, 10.0) == pytest.approx(0.9)
    assert busy_average([np.nan], [np.nan], 0.0, 10.0) == 0.0  # still waiting: never started
    rows = pd.DataFrame([{"policy": p, "x": x, "seed": s, "delay": d}
                         for p, x, s, d in [("vanilla", 1, 1, 10.0), ("vanilla", 1, 2, 20.0), ("a", 1, 1, 5.0),
                                            ("a", 1, 2, 15.0), ("vanilla", 2, 1, 4.0), ("a", 2, 1, 1.0)]])
    t = pair(rows, on=["x"], baseline={"policy": "vanilla"}, ratios={"r": "delay"}, improvements={"imp": "delay"})
    a = t[t.policy == "a"].set_index(["x", "seed"])
    assert list(a["r"]) == [0.5, 0.75, 0.25] and list(a["imp"]) == [50.0, 25.0, 75.0]
    s = summary(t[t.policy == "a"], ["x"], ["r"]).set_index("x")
    assert s.at[1, "r"] == pytest.approx(0.625) and s.at[1, "seeds"] == 2 and math.isnan(s.at[2, "r_ci"])


# ------------------------------------------------------------------------------------- runs

def test_overrides_turn_the_base_into_each_point():
    base = json.loads(json.dumps(TINY))
    other = json.loads(json.dumps(TINY))
    other["traffic"][0]["load"] = 0.7
    other["links"][0]["queue"] = {"type": "droptail", "limit": "5pkts"}
    other["duration"] = "2s"
    assert overrides(base, other) == {"traffic[short].load": 0.7, "links[bn].queue.limit": "5pkts", "duration": "2s"}
    gone = json.loads(json.dumps(TINY))
    del gone["traffic"][1]["dst"]
    assert overrides(base, gone) == {"traffic[long]": gone["traffic"][1]}  # a removed key: the whole table
    from cclab.scenario import apply_overrides

    assert apply_overrides(base, list(overrides(base, other).items())) == other


def _points(loads=(0.3, 0.6)):
    out = []
    for x in loads:
        sc = json.loads(json.dumps(TINY))
        sc["traffic"][0]["load"] = x
        out.append(Point({"load": x}, sc, (x,)))
    return out


def _utilization(result, point):
    return {"utilization": float(result.links.iloc[0]["utilization"])}


def _ctx(tmp_path, size=Size(seeds=2, max_seeds=6), name="toy"):
    return catalogue.Context(quick=True, out=tmp_path, store=tmp_path / "store", cluster="serial", progress=False,
                             name=name, size=size)


def test_replication_adds_seeds_until_the_claims_are_known_or_the_most(tmp_path):
    def judge(tol):
        def claims(rows):
            u = Estimate.of(dict(zip(rows[rows.load == 0.6]["seed"], rows[rows.load == 0.6]["utilization"])),
                            groups={(0.6,)})
            return [Near("utilization at 0.6", u, 0.6, tol)]
        return claims

    ctx = _ctx(tmp_path)
    rows, claims = replicate(ctx, "u", _points(), _utilization, judge(10.0), keep=("links",))
    assert set(rows.groupby("load")["seed"].nunique()) == {2}  # known at once: two seeds each
    rows, claims = replicate(ctx, "u", _points(), _utilization, judge(1e-6), keep=("links",))
    seeds = rows.groupby("load")["seed"].nunique().to_dict()
    assert seeds == {0.3: 2, 0.6: 6}  # never known: its group grows to the most, the other stays
    assert claims[0].seeds() == "6"
    assert ctx.runs_done()["ran"] == 2 * 2 + 4  # the first two seeds came from the store the second time
    # each distinct run counted once: the rounds asked again for the runs of the rounds before
    assert ctx.runs_done() == {"runs": 8, "ran": 8, "cached": 0}


def _run_entry(tmp_path, name="toy-runs"):
    points = _points((0.2, 0.4, 0.6))

    def entry(ctx):
        rows = run_points(ctx, "u", points, {p.group: range(1, 4) for p in points}, _utilization, keep=("links",))
        return catalogue.Outcome(rows, None, "shown", agrees=None)

    return catalogue.Reproduction(name, "toy", "Fig. 0", "toy", entry, sizes=Sizes(Size(seeds=3), Size(seeds=3)))


def test_a_second_run_of_an_entry_simulates_nothing(tmp_path, monkeypatch):
    e = _run_entry(tmp_path)
    ctx = _ctx(tmp_path, e.sizes.quick)
    e.func(ctx)
    assert ctx.runs_done() == {"runs": 9, "ran": 9, "cached": 0}

    def refuse(*a, **k):
        raise AssertionError("a stored run was simulated again")

    monkeypatch.setattr(cclab._core, "run_config", refuse)
    runs_mod._MEASURED.clear()  # a new process: nothing measured in memory
    again = _ctx(tmp_path, e.sizes.quick)
    e.func(again)
    assert again.runs_done() == {"runs": 9, "ran": 0, "cached": 9}


def test_an_entry_killed_halfway_runs_only_what_is_missing(tmp_path):
    # the first process is killed (SIGKILL) right after the commit of its fourth run
    # (each run committed on its own, not in groups)
    script = textwrap.dedent(f"""
        from pathlib import Path
        from cclab.sweeps import store
        from tests.test_experiment_framework import _ctx, _run_entry
        store.Store.__init__.__kwdefaults__["batch_runs"] = 1
        store._crash_plan["commit"] = 4
        e = _run_entry(Path({str(tmp_path)!r}))
        e.func(_ctx(Path({str(tmp_path)!r}), e.sizes.quick))
    """)
    import os

    env = {**os.environ, "CCLAB_STORE_FSYNC": "0"}
    done = subprocess.run([sys.executable, "-c", script], cwd=str(__import__("pathlib").Path(__file__).parents[1]),
                          env=env, capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    with Store(tmp_path / "store", readonly=True) as st:
        stored = st.db.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    assert stored == 4
    e = _run_entry(tmp_path)
    ctx = _ctx(tmp_path, e.sizes.quick)
    e.func(ctx)
    assert ctx.runs_done() == {"runs": 9, "ran": 9 - stored, "cached": stored}


def test_an_entry_keeps_only_the_tables_it_reads(tmp_path):
    ctx = _ctx(tmp_path)
    run_points(ctx, "u", _points((0.3,)), {(0.3,): [1]}, _utilization, keep=("links",))
    with Store(tmp_path / "store", readonly=True) as st:
        (row,) = st.list_runs()
        assert row.tables == ("links",) and set(row.files) == {"links.parquet", "run.json"}


# ------------------------------------------------------------------------------------- settling

def test_mser_finds_where_a_ramp_meets_its_plateau():
    rng = np.random.default_rng(1)
    t = np.arange(400) * 120.0
    x = np.minimum(t / 12_000.0, 1.0) * 50 + rng.normal(0, 1.0, len(t))  # a ramp for 100 samples, then flat
    d = mser(x)
    assert 90 <= d <= 115, d
    assert settling_time(t, x) == pytest.approx(t[d])
    assert mser(rng.normal(0, 1.0, 400)) < 40  # stationary from the start: little to cut


# ------------------------------------------------------------------------------------- ablation

def test_key_path_selectors_name_every_item_or_the_items_that_match():
    from cclab.experiments.ablation import Level, expand_path

    sc = json.loads(json.dumps(TINY))
    assert expand_path(sc, "links[*].queue.limit") == ["links[0].queue.limit"]
    assert expand_path(sc, "traffic[type=long_lived].protocol") == ["traffic[1].protocol"]
    assert expand_path(sc, "traffic[type=cbr].rate") == []  # no such item: nothing to change
    assert expand_path(sc, "traffic[short].load") == ["traffic[short].load"]
    lv = Level("x", {"traffic[*].protocol": "reno", "links[bn].queue.limit": "9pkts"})
    out = lv.apply(sc)
    assert [t["protocol"] for t in out["traffic"]] == ["reno", "reno"] and out["links"][0]["queue"]["limit"] == "9pkts"
    assert "protocol" not in sc["traffic"][0]  # the scenario itself is untouched


def test_an_ablation_is_one_declaration_and_moves_one_factor_at_a_time(tmp_path):
    from cclab.experiments.ablation import Ablation, Factor, Level, run_ablation

    def entry(ctx):
        rows = run_points(ctx, "u", _points((0.6,)), {(0.6,): range(1, ctx.size.seeds + 1)}, _utilization,
                          keep=("links",))
        u = Estimate.of(dict(zip(rows["seed"], rows["utilization"])), groups={(0.6,)})
        from cclab.experiments.claims import outcome

        return outcome(rows, None, [Within("utilization above 0.5", u, lo=0.5)], intro="toy")

    abl = Ablation((Factor("buffer (packets)", (Level("2", {"links[*].queue.limit": "2pkts"}),)),
                    Factor("seeds", (Level("three", size={"seeds": 3}),)),
                    Factor("protocol", (Level("cbr", {"traffic[type=cbr].rate": "1Mbps"}),))))
    e = catalogue.Reproduction("toy-ablation", "toy", "Fig. 0", "toy", entry, sizes=Sizes(Size(seeds=2), Size(seeds=2)),
                               ablation=abl)
    kw = dict(out=tmp_path, store=tmp_path / "store", cluster="serial", progress=False)
    with pytest.raises(ValueError, match="changed none of the entry's scenarios"):
        run_ablation(e, abl, **kw)
    table, md = run_ablation(e, abl, only=("buffer (packets)", "seeds"), **kw)
    assert list(dict.fromkeys(table["level"])) == ["as declared", "2", "three"]
    assert list(table["seeds"]) == ["2", "2", "3"]
    text = md.read_text()
    assert "| the paper says | baseline | buffer (packets): 2 | seeds: three |" in text
    assert (tmp_path / "toy-ablation-ablation.csv").exists()
    with Store(tmp_path / "store", readonly=True) as st:
        # baseline 2 runs, buffer of 2 packets 2 runs, three seeds: only the third is new
        assert len(st.list_runs()) == 5


def test_the_cli_names_an_entrys_factors(tmp_path, capsys):
    from cclab import cli

    assert cli.main(["reproduce", "fairbat-fig2", "--ablate", "nosuch", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "fairbat-fig2 has no factor 'nosuch'; its factors: buffer (packets), LBE implementation, TCP agent, run length" in err
    assert cli.main(["reproduce", "background-fig4", "--ablate", "--out", str(tmp_path)]) == 2
    assert "background-fig4 declares no ablation" in capsys.readouterr().err
