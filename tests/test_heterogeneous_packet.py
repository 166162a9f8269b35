"""Tiny-size runs of the packet-level heterogeneous-congestion-control reproductions
(cclab reproduce hetero-ex1 / hetero-ex2 / hetero-wan), each a few seconds, asserting what the
paper's model says of them."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cclab._core")
from cclab.experiments import catalogue  # noqa: E402
from cclab.experiments.reproductions import heterogeneous_packet as hp  # noqa: E402
from cclab.experiments.sizes import Size  # noqa: E402


@pytest.fixture
def ctx(tmp_path):
    """A context whose runs go through a store of their own, in this process."""
    return catalogue.Context(quick=True, out=tmp_path, store=tmp_path / "store", cluster="serial", progress=False)


def size(duration, warmup, interval, seeds=1, **extra):
    return Size(seeds=seeds, duration=float(duration), warmup=float(warmup), extra={"α interval (s)": interval, **extra})

C_EX1 = 100e6 / (8 * 1500)  # packets/s of Example 1's link (1500-byte packets on the wire)


def test_entries_are_registered():
    names = {e.name for e in catalogue.entries()}
    assert {"hetero-ex1", "hetero-ex2", "hetero-wan"} <= names


def test_scenarios_load_and_are_the_papers():
    ex1, ex2, wan = hp.scenario("ex1"), hp.scenario("ex2"), hp.scenario("wan")
    assert ex1["links"][0]["rate"] == "100Mbps" and ex1["links"][0]["delay"] == "25ms"
    assert ex1["traffic"][0]["cc"]["alpha"] == 50
    # 9.1 and 13.8 packets/ms of 1500 bytes; the eq. (2) triples as printed
    assert [l["rate"] for l in ex2["links"]] == ["109.2Mbps", "165.6Mbps", "109.2Mbps"]
    q = [l["queue"] for l in ex2["links"]]
    assert [(x["min_th"], x["max_th"], x["max_p"]) for x in q] == [
        ("300pkts", "1500pkts", 1e-4), ("0pkts", "1500pkts", 0.1), ("300pkts", "1500pkts", 1e-4)]
    assert wan["links"][0]["queue"]["limit"] == "480pkts" and wan["traffic"][0]["cc"]["alpha"] == 800


@pytest.fixture(scope="module")
def ex2_equilibria():
    return hp.ex2_theory(n_starts=8)


def test_ex1_fast_gets_alpha_over_q_and_loses_share_with_the_buffer(ctx):
    """Example 1a: FAST's equilibrium rate is alpha/q (eq. 1) with q the queueing delay Reno
    builds, so the larger buffer (larger queue) leaves FAST the smaller share (Table I)."""
    df = hp.ex1_runs(ctx, configs=[(400, False, "main"), (80, False, "main")], size=size(150, 75, 15))
    big, small = df.iloc[0], df.iloc[1]
    q = big.mean_queue_pkts / C_EX1  # seconds
    predicted = 50 / q / 1000        # packets/ms
    assert abs(big.fast_pkts_per_ms / predicted - 1) < 0.25, (big.fast_pkts_per_ms, predicted)
    share = lambda r: r.fast_pkts_per_ms / (r.fast_pkts_per_ms + r.reno_pkts_per_ms)
    assert share(big) < 0.4 < share(small)
    assert big.reno_over_fast > 1 > small.reno_over_fast   # the paper's Table I, first row


def test_ex1_algorithm1_brings_the_small_buffer_nearer_table_1(ctx):
    """Example 1b, B = 80: Algorithm 1 lowers alpha (FAST loses, so alpha* = q/(l w) is tiny) until
    Reno gets its share back; Reno/FAST is nearer Table I's 1.3 than without it (0.18 in the
    paper, about 0.12 here) and the link is busier (paper: 53.6% -> 97.7%). alpha interval 10 s."""
    df = hp.ex1_runs(ctx, configs=[(80, False, "main"), (80, True, "main")], size=size(240, 120, 10))
    fixed, adapted = df.iloc[0], df.iloc[1]
    dist = lambda r: abs(np.log(r.reno_over_fast / 1.3))
    assert dist(adapted) < dist(fixed) and 0.5 < adapted.reno_over_fast < 2
    assert adapted.utilization > 0.95 > fixed.utilization


def test_ex2_fast_first_reaches_the_theorys_link_2_equilibrium(ex2_equilibria, ctx):
    """Example 2a, FAST first: link 2-3 saturated, Reno starved; per-flow rates as the theory
    library's equilibrium with link 2-3 alone saturated, and link 2-3 marks at p(b) = b/15000."""
    df = hp.ex2_runs(ctx, configs=[("fast_first", False, "main")],
                     size=size(200, 150, 10, **{"with Algorithm 1 (s)": (200.0, 150.0)}))
    r = df.iloc[0]
    th = ex2_equilibria
    eq = th[th.saturated == "23"].iloc[0]
    assert eq.stable
    assert abs(r.fast_pkts_per_ms / eq.fast_pkts_per_ms - 1) < 0.1, (r.fast_pkts_per_ms, eq.fast_pkts_per_ms)
    assert r.reno_pkts_per_ms < 0.15 and eq.reno_pkts_per_ms < 0.15
    assert r.utilization_23 > 0.99 and r.utilization_12 < 0.9
    assert abs(r.mark_rate_23 / (r.queue_23 / 15000) - 1) < 0.2


def test_ex2_weight_puts_fast_at_the_papers_rate_in_theory(ex2_equilibria):
    """Our w for Example 2b makes Theorem 6's optimum give FAST the paper's 1.5 packets/ms, with
    the outer links saturated and Reno near the paper's 0.6."""
    w = hp.ex2_weight()
    th = hp.ex2_theory(w).iloc[0]
    assert abs(th.fast_pkts_per_ms - 1.5) < 0.01
    assert th.saturated == "12 34"
    assert abs(th.reno_pkts_per_ms - 0.6) < 0.1
    eqs = ex2_equilibria
    assert len(eqs) == 3 and int(eqs.stable.sum()) == 2   # two stable equilibria and one unstable


def test_wan_algorithm1_lowers_alpha_below_the_buffer_and_the_link_fills(ctx):
    """Experiment 3 (B = 480 < alpha0 = 800): FAST cannot keep alpha packets queued and loses
    without Algorithm 1; with it alpha falls below B within a few intervals (800 * 0.9^5 = 472
    after 25 s with a 5 s interval) and the link fills without loss (measured over 40-60 s)."""
    df = hp.wan_runs(ctx, configs=[("exp3", False, "main"), ("exp3", True, "main")], size=size(60, 40, 5))
    fixed, adapted = df.iloc[0], df.iloc[1]
    assert fixed.drop_rate > 1e-3 and adapted.drop_rate == 0
    assert adapted.utilization > 0.99 > fixed.utilization
    assert np.isclose(hp.jain([1, 1]), 1) and np.isclose(hp.jain([1, 0]), 0.5)
