"""The flow-level simulator against the theory of the background paper, within its intervals.

Reference values come from two independent routes: the birth-death chain of eq. (1)
solved here directly (local balance, eq. 3) and the closed forms of
cclab.theory.background (eq. 13 / Theorem 1, Theorem 3, eq. 16, Theorem 7).
"""
from __future__ import annotations

import numpy as np
import pytest

flowsim = pytest.importorskip("cclab.flowsim")
pytest.importorskip("cclab._core")
from cclab.theory import background as bgt  # noqa: E402

# Seeds are fixed, so each check is deterministic; the factor 2 on the 95% half-width keeps
# the joint false-alarm rate of the ~25 comparisons small, and the cap on the half-width
# keeps every check sharp.
FACTOR = 2.0


def agree(row, metric, theory, rel_width=0.04):
    m, h = row[metric], row[metric + "_ci"]
    assert abs(m - theory) <= FACTOR * h, f"{metric}: simulated {m:.4f} ± {h:.4f}, theory {theory:.4f}"
    assert h <= rel_width * abs(theory), f"{metric}: interval ±{h:.4f} too wide around {theory:.4f}"


def chain(rho, x, k, nmax=4000):
    """Stationary law of eq. (1) with C = μ = 1: returns (mean short flows, CBF fraction of C(1−ρ))."""
    xs = np.array([x(n) for n in range(nmax)], dtype=float)
    start = max([n for n in range(1, nmax) if xs[n] <= 0] or [0])
    logp = np.full(nmax, -np.inf)
    logp[start] = 0.0
    n = np.arange(start + 1, nmax)
    logp[start + 1:] = np.cumsum(np.log(rho / (n * xs[start + 1:])))
    p = np.exp(logp - logp.max())
    p /= p.sum()
    ns = np.arange(nmax)
    cbf = np.sum(p * (1.0 - (ns + k) * xs))       # eq. (6): CBF gets C − (n+k)x_n
    return float(np.sum(ns * p)), float(cbf / (1 - rho))


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.8])
def test_mm1_ps_mean_number_and_delay(rho):
    res = flowsim.simulate(flowsim.single_link(rho, policy=None, duration=1e5, replications=20, seed=2))
    row = res.row("short")
    agree(row, "mean_number", rho / (1 - rho))
    agree(row, "mean_delay", 1 / (1 - rho))       # Little's law with λ = ρ


def test_pareto_sizes_keep_ps_insensitive():
    res = flowsim.simulate(flowsim.single_link(0.5, policy=None, size="pareto", shape=3.5, duration=2e5,
                                               replications=20, seed=3))
    agree(res.row("short"), "mean_number", 1.0)


CASES = [(1, 0.5, 0.5), (2, 0.3, 0.7), (1, 0.1, 0.6), (3, 0.6, 0.8)]


@pytest.mark.parametrize("k,f,rho", CASES)
def test_optimal_threshold_policy(k, f, rho):
    """Theorem 1: threshold n* of Proposition 1 with the fractional x_{n*+1} of eq. (10)."""
    n_star = bgt.optimal_threshold(k, f, rho)
    x_pol = bgt.optimal_policy(k, f, rho)
    x_next = float(x_pol[-1])
    x = lambda n: (0.0 if n <= n_star else x_next if n == n_star + 1 else 1.0 / (k + n))
    n_chain, f_chain = chain(rho, x, k)
    assert abs(f_chain - f) < 1e-6                   # the policy meets its target (eq. 10)
    assert abs(n_chain - bgt.optimal_mean_flows(k, f, rho)) < 1e-6 * n_chain
    res = flowsim.simulate(flowsim.single_link(rho, k, "threshold", n0=n_star, x_next=x_next,
                                               duration=2e5, replications=20, seed=4))
    agree(res.row("short"), "mean_number", n_chain)
    agree(res.row("background"), "throughput", f * (1 - rho), rel_width=0.05)


@pytest.mark.parametrize("n0", [0, 4])
def test_threshold_eq13(n0):
    k, rho = 2, 0.6
    theory = bgt.threshold_mean_flows(n0, k, rho)       # eq. (13)
    assert abs(chain(rho, lambda n: 0.0 if n <= n0 else 1.0 / (k + n), k)[0] - theory) < 1e-8 * theory
    res = flowsim.simulate(flowsim.single_link(rho, k, "threshold", n0=n0, duration=1e5, replications=20, seed=5))
    agree(res.row("short"), "mean_number", theory)
    agree(res.row("background"), "throughput", bgt.threshold_cbf_fraction(n0, k, rho) * (1 - rho), 0.05)


@pytest.mark.parametrize("k,f,rho", CASES)
def test_optimal_implementable_policy(k, f, rho):
    """Theorem 3: x_n = min(x̄, C/(k+n)), x̄ set by the target f."""
    xbar = bgt.implementable_level(k, f, rho)
    n_chain, f_chain = chain(rho, lambda n: min(xbar, 1.0 / (k + n)), k)
    assert abs(f_chain - f) < 1e-6
    res = flowsim.simulate(flowsim.single_link(rho, k, "implementable", x_cap=xbar, duration=2e5,
                                               replications=20, seed=6))
    agree(res.row("short"), "mean_number", bgt.implementable_mean_flows(k, f, rho))
    agree(res.row("short"), "mean_number", n_chain)
    agree(res.row("background"), "throughput", f * (1 - rho), rel_width=0.05)


@pytest.mark.parametrize("k,f,rho", CASES)
def test_wtcp_eq16(k, f, rho):
    w = k * f / (1 - f)                                 # w/(k+w) = f, §II-D
    res = flowsim.simulate(flowsim.single_link(rho, k, "wtcp", w=w, duration=2e5, replications=20, seed=7))
    agree(res.row("short"), "mean_number", bgt.wtcp_mean_flows(k, f, rho))
    agree(res.row("short"), "mean_number", chain(rho, lambda n: 1.0 / (k + w + n), k)[0])
    agree(res.row("background"), "throughput", f * (1 - rho), rel_width=0.05)


@pytest.mark.parametrize("k,f,rho", [(1, 0.5, 0.5), (2, 0.3, 0.6)])
def test_vanilla_stream(k, f, rho):
    res = flowsim.simulate(flowsim.single_link(rho, k, "vanilla", background_load=f * (1 - rho), duration=2e5,
                                               replications=20, seed=8))
    agree(res.row("short"), "mean_number", bgt.vanilla_mean_flows(k, f, rho))
    agree(res.row("background"), "throughput", f * (1 - rho))


def test_access_control_against_chain20():
    """Eq. (26) with a stable limit: simulator vs the truncated two-dimensional chain (20)."""
    k, rho, rho_b = 1, 0.5, 0.2
    M = 1.5 * bgt.access_control_limit(k, rho, rho_b)     # eq. (27) gives 2/3
    sol = bgt.access_control_chain(k, rho, rho_b, M)
    res = flowsim.simulate(flowsim.single_link(rho, k, "access_control", limit=M, background_load=rho_b,
                                               duration=2e5, replications=20, seed=9))
    agree(res.row("short"), "mean_number", sol.mean_short)
    agree(res.row("background"), "mean_number", sol.mean_micro, rel_width=0.06)
    agree(res.row("background"), "throughput", rho_b)


def test_access_control_overloaded_is_wtcp():
    """Theorem 7 / Prop. 3: with the queue never empty, short flows see wTCP with w = M."""
    k, rho, M = 1, 0.5, 2.0
    res = flowsim.simulate(flowsim.single_link(rho, k, "access_control", limit=M, background_load=0.4,
                                               duration=1e5, replications=20, seed=10))
    agree(res.row("short"), "mean_number", (k + M + 1) * rho / (1 - rho))
    agree(res.row("background"), "throughput", M / (k + M) * (1 - rho))


def test_rate_tracking_finds_eq27():
    k, rho, rho_b = 2, 0.4, 0.3
    res = flowsim.simulate(flowsim.single_link(rho, k, "rate_tracking", background_load=rho_b, duration=2e5,
                                               replications=10, seed=11))
    m_star = bgt.access_control_limit(k, rho, rho_b)
    m, h = res.row("background")[["mean_limit", "mean_limit_ci"]]
    assert abs(m - m_star) < 0.03 * m_star + FACTOR * h, (m, h, m_star)
    agree(res.row("short"), "mean_number", bgt.wtcp_mean_flows(k, rho_b / (1 - rho), rho), rel_width=0.05)


def two_link(rho, rho_b, policy, **params):
    return flowsim.Scenario(
        capacities=(1.0, 1.0),
        classes=[flowsim.Short(load=rho, route=(0,), name="s1"), flowsim.Short(load=rho, route=(1,), name="s2"),
                 flowsim.Background(policy, params, load=rho_b, route=(0, 1), name="bg")],
        duration=1e5, replications=10, seed=12)


def test_low_priority_two_links_fairbat_eq1():
    """FAIRBAT eq. (1): low priority over two links is stable iff ρ_b ≤ (1−ρ)²."""
    rho = 0.3
    stable = flowsim.simulate(two_link(rho, 0.4, "low_priority"))
    assert bgt.lbe_stable(0.4, [rho, rho])
    agree(stable.row("s1"), "mean_number", rho / (1 - rho))     # short flows never see it
    agree(stable.row("bg"), "throughput", 0.4)
    unstable = flowsim.simulate(two_link(rho, 0.55, "low_priority"))
    assert not bgt.lbe_stable(0.55, [rho, rho])
    thr = unstable.row("bg")["throughput"]
    # It can only send when both links are idle: throughput → (1−ρ)² = 0.49 < 0.55.
    assert thr < 0.5 and abs(thr - (1 - rho) ** 2) < 0.02
    # Access control (max-min per link) carries the same load with a stable queue.
    ac = flowsim.simulate(two_link(rho, 0.55, "access_control", limit=3.0))
    agree(ac.row("bg"), "throughput", 0.55)


def test_deterministic_given_seed():
    sc = flowsim.single_link(0.5, 1, "wtcp", w=1.0, duration=2e3, replications=4, seed=13)
    a = flowsim.simulate(sc).replications
    b = flowsim.simulate(sc, threads=2).replications
    assert a.equals(b)
    c = flowsim.simulate(sc, seed=14).replications
    assert not a.equals(c)


@pytest.mark.parametrize("call, field", [
    (lambda: flowsim.single_link(1.2), "rho"),
    (lambda: flowsim.single_link(0.5, -1), "k"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, 1, "wtcp")), "params"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, 1, "bogus")), "policy"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, 1, "wtcp", w=-1.0)), "w"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, 1, "vanilla")), "source"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, size="pareto", shape=0.9, policy=None)), "shape"),
    (lambda: flowsim.simulate(flowsim.single_link(0.5, policy=None, replications=1)), "replications"),
    (lambda: flowsim.simulate(two_link(0.3, 0.2, "threshold", n0=2)), "single link"),
])
def test_bad_arguments_raise_valueerror(call, field):
    with pytest.raises(ValueError, match=field):
        call()


def test_fig4_flowsim_rows_match_theory():
    """The simulator rows of the background-fig4 entry (small size) sit on the theory."""
    from cclab.experiments.reproductions.background import fig4_flowsim

    df = fig4_flowsim(1, (0.6,), (0.4,), duration=1e5, replications=10, seed=3)
    assert list(df["policy"]) == ["optimal", "implementable", "wtcp", "vanilla"]
    half = df["ci_high"] - df["mean_flows"]
    assert ((df["mean_flows"] - df["theory"]).abs() <= FACTOR * half).all(), df
    assert (half <= 0.05 * df["theory"]).all()


def test_three_link_network_conserves_every_load():
    """[BG] §IV-D topology: every stable class carries exactly its offered load, max-min per link."""
    routes = {"route1": (0,), "route123": (0, 1, 2), "route2": (1,), "route23": (1, 2)}
    loads = {"route123": 0.2, "route2": 0.1, "route23": 0.1}
    classes = [flowsim.Short(load=0.3, route=routes["route1"], name="short route1")]
    for r, load in loads.items():
        classes.append(flowsim.Short(load=load, route=routes[r], name=f"short {r}"))
        classes.append(flowsim.Background("fairbat", load=load, route=routes[r], name=f"bg {r}"))
    res = flowsim.simulate(flowsim.Scenario(capacities=(1.0, 1.0, 1.0), classes=classes, duration=1e5,
                                            replications=10, seed=15))
    agree(res.row("short route1"), "throughput", 0.3)
    for r, load in loads.items():
        agree(res.row(f"short {r}"), "throughput", load, rel_width=0.06)
        agree(res.row(f"bg {r}"), "throughput", load, rel_width=0.06)
