"""Tests of cclab.theory.background against closed forms, the directly computed
stationary distribution of chain (1), and the numbers printed in the paper
(background-transfers-minimal-delay.md, FAIRBAT eq. (1))."""
import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from cclab.theory import background as bg


# ----------------------------------------------------------------- loss formulas

def _erlang_b_direct(k, a):
    # log of a^i/i!, summed with logsumexp: an independent way to evaluate B(k, a)
    i = np.arange(k + 1)
    lt = i * math.log(a) - gammaln(i + 1)
    return math.exp(lt[-1] - logsumexp(lt))


@pytest.mark.parametrize("k,a", [(1, 0.3), (5, 3.0), (10, 12.5), (1000, 900.0), (1000, 1e6), (300, 1e-2)])
def test_erlang_b_matches_direct_sum(k, a):
    assert bg.erlang_b(k, a) == pytest.approx(_erlang_b_direct(k, a), rel=1e-10, abs=1e-300)


def test_erlang_b_small_cases_and_arrays():
    assert bg.erlang_b(0, 7.0) == 1.0
    a = np.array([0.0, 0.5, 2.0])
    assert np.allclose(bg.erlang_b(1, a), a / (1 + a))
    # carried load a(1-B) < k; for a >> k, B ~ 1 - k/a
    B = bg.erlang_b(1000, 1e6)
    assert 1e6 * (1 - B) < 1000 and B == pytest.approx(1 - 1000 / 1e6, rel=1e-5)


@pytest.mark.parametrize("k", [1, 2, 10, 1000])
@pytest.mark.parametrize("f", [1e-8, 0.3, 0.9, 0.999])
def test_erlang_b_inverse_roundtrip(k, f):
    a = bg.erlang_b_inverse(k, f)
    assert bg.erlang_b(k, a) == pytest.approx(f, rel=1e-9)


def test_erlang_b_inverse_k1_closed_form():
    for f in (0.1, 0.5, 2 - math.sqrt(2)):
        assert bg.erlang_b_inverse(1, f) == pytest.approx(f / (1 - f), rel=1e-12)
    assert bg.erlang_b_inverse(3, 0.0) == 0.0


def test_engset_matches_binomial_formula():
    for m, q, r in [(12, 10, 1.0), (20, 3, 0.25), (7, 6, 4.0)]:
        terms = [math.comb(m - 1, i) * r ** i for i in range(q + 1)]
        assert bg.engset(m, q, r) == pytest.approx(terms[-1] / sum(terms), rel=1e-12)


def test_engset_first_threshold_is_idle_probability():
    # E(k+1, k, (1-rho)/rho) = (1-rho)^k: footnote 3 / Theorem 1 of the paper
    for k, rho in [(1, 0.3), (10, 0.9), (1000, 0.001)]:
        assert bg.engset(k + 1, k, (1 - rho) / rho) == pytest.approx((1 - rho) ** k, rel=1e-10)


def test_engset_tends_to_erlang_b():
    # Corollary 1 proof: E(n + k, k, (1-rho)/rho) -> B(k, a) when n(1-rho) -> a
    k, a = 10, 7.0
    m = 10 ** 7
    assert bg.engset(m + k, k, a / m) == pytest.approx(bg.erlang_b(k, a), rel=1e-5)
    assert 0.0 <= bg.engset(10 ** 6, 1000, 1e6) <= 1.0


# ----------------------------------------------------------------- threshold / optimal policies

@pytest.mark.parametrize("n0,k,rho", [(0, 0, 0.5), (0, 3, 0.7), (4, 3, 0.7), (25, 10, 0.9), (7, 1, 0.2)])
def test_threshold_closed_form_vs_stationary(n0, k, rho):
    s = bg.stationary(np.zeros(n0 + 1), k, rho)
    assert s.tail_mass_bound < 1e-12
    assert bg.threshold_mean_flows(n0, k, rho) == pytest.approx(s.mean, rel=1e-10)
    assert bg.threshold_cbf_fraction(n0, k, rho) == pytest.approx(s.cbf_fraction, rel=1e-10)
    assert np.all(s.pi[:n0] == 0.0)


@pytest.mark.parametrize("k,rho", [(1, 0.5), (3, 0.7), (10, 0.9)])
@pytest.mark.parametrize("f", [0.05, 0.3, 0.6, 0.9])
def test_optimal_policy_meets_target_and_mean(k, f, rho):
    n_star = bg.optimal_threshold(k, f, rho)
    N = bg.optimal_mean_flows(k, f, rho)
    s = bg.stationary(bg.optimal_policy(k, f, rho), k, rho)
    assert s.cbf_fraction == pytest.approx(f, rel=1e-9)              # eq. (6)/(10)
    assert N == pytest.approx(s.mean, rel=1e-9)
    if n_star >= 0:
        r = (1 - rho) / rho                                            # eq. (11)
        assert bg.engset(n_star + k + 1, k, r) <= f < bg.engset(n_star + k + 2, k, r)
        assert bg.threshold_mean_flows(n_star, k, rho) <= N < bg.threshold_mean_flows(n_star + 1, k, rho)
    else:
        assert (1 - rho) ** k > f


def test_low_priority_case():
    k, rho, f = 2, 0.3, 0.2          # (1-rho)^k = 0.49 > f: eq. (9)
    assert bg.optimal_threshold(k, f, rho) == -1
    assert bg.optimal_mean_flows(k, f, rho) == pytest.approx((k + 1) * rho / (1 - rho))
    x = bg.optimal_policy(k, f, rho)
    assert x[0] == pytest.approx(((1 - rho) ** k - f) / (k * (1 - rho) ** k))
    assert bg.stationary(x, k, rho).cbf_fraction == pytest.approx(f)


def test_optimal_is_no_worse_than_other_threshold_policies():
    # any threshold policy n0 reaching a fraction f' >= f costs at least N*(f)
    k, rho = 3, 0.8
    for n0 in range(0, 30, 3):
        f = bg.threshold_cbf_fraction(n0, k, rho)
        assert bg.optimal_mean_flows(k, f, rho) == pytest.approx(bg.threshold_mean_flows(n0, k, rho), rel=1e-9)


# ----------------------------------------------------------------- implementable (Theorems 3, 4)

@pytest.mark.parametrize("k,f,rho", [(1, 0.5, 0.5), (3, 0.3, 0.7), (10, 0.8, 0.9), (1, 0.95, 0.6)])
def test_implementable_closed_form_vs_stationary(k, f, rho):
    M = bg.implementable_mean_flows(k, f, rho)
    pol = bg.implementable_policy(k, f, rho)
    xs = [pol(n) for n in range(200)]
    assert all(a >= b for a, b in zip(xs, xs[1:]))          # decreasing: implementable
    s = bg.stationary(pol, k, rho)
    assert s.cbf_fraction == pytest.approx(f, rel=1e-8)
    assert M == pytest.approx(s.mean, rel=1e-8)
    assert M >= bg.optimal_mean_flows(k, f, rho) * (1 - 1e-12)


def test_theorem4_ratio_tends_to_one():
    k, f = 1, 0.6
    ratios = [bg.implementable_mean_flows(k, f, r) / bg.optimal_mean_flows(k, f, r)
              for r in (0.5, 0.9, 0.99, 0.999)]
    assert all(a > b for a, b in zip(ratios, ratios[1:]))
    assert ratios[0] > 1.05 and ratios[-1] - 1 < 2e-4


def test_fig4_rho09_practically_indistinguishable():
    # Sec. II-C: "For rho = 0.9 the delays of the two algorithms are practically indistinguishable"
    worst = max(bg.implementable_mean_flows(1, f, 0.9) / bg.optimal_mean_flows(1, f, 0.9)
                for f in np.linspace(0.05, 0.95, 19))
    assert 1.0 < worst < 1.02


# ----------------------------------------------------------------- wTCP (eq. 16, Theorem 5)

@pytest.mark.parametrize("k,f,rho", [(1, 0.5, 0.5), (5, 0.3, 0.8), (10, 0.9, 0.95)])
def test_wtcp_closed_form_vs_stationary(k, f, rho):
    w = bg.wtcp_weight(k, f)
    assert w / (k + w) == pytest.approx(f)
    s = bg.stationary(lambda n: 1.0 / (k + w + n), k, rho)
    assert bg.wtcp_mean_flows(k, f, rho) == pytest.approx(s.mean, rel=1e-9)
    assert s.cbf_fraction == pytest.approx(f, rel=1e-9)


def test_theorem5_k1_closed_form_and_20_7_percent():
    for f in (0.1, 0.4, 0.8):
        assert bg.wtcp_gap_limit(1, f) == pytest.approx(f * (1 - f) / (1 + (1 - f) ** 2), rel=1e-10)
    f0 = 2 - math.sqrt(2)
    bound = (3 - 2 * math.sqrt(2)) / (2 * math.sqrt(2) - 2)
    assert bound == pytest.approx(0.2071, abs=1e-4)
    assert bg.wtcp_gap_limit(1, f0) == pytest.approx(bound, rel=1e-9)
    grid = np.linspace(0.01, 0.99, 197)
    assert max(bg.wtcp_gap_limit(1, f) for f in grid) <= bound + 1e-12


def test_worst_wtcp_gap_k5_near_8_percent():
    # Sec. II-D: "for k = 5 the worst difference is 8%"
    worst = max(bg.wtcp_gap_limit(5, f) for f in np.linspace(0.01, 0.99, 99))
    assert 0.075 < worst < 0.085


def test_wtcp_gap_bound_eq19():
    for k in (2, 3, 5, 10):
        for f in (0.1, 0.4, 0.7, 0.95):
            assert bg.wtcp_gap_limit(k, f) <= bg.wtcp_gap_bound(k, f) + 1e-12
    sup = [max(bg.wtcp_gap_bound(k, f) for f in np.linspace(0.02, 0.98, 49)) for k in (2, 5, 20)]
    assert sup[0] > sup[1] > sup[2]          # decreasing to zero as k grows


def test_gap_at_high_load_approaches_limit():
    k, f = 5, 0.4
    gap = bg.wtcp_mean_flows(k, f, 0.9999) / bg.optimal_mean_flows(k, f, 0.9999) - 1
    assert gap == pytest.approx(bg.wtcp_gap_limit(k, f), abs=2e-3)


# ----------------------------------------------------------------- Corollary 1

def test_corollary1_limits():
    k, f = 10, 0.5
    a_f = bg.erlang_b_inverse(k, f)
    rho = 0.9999
    assert (1 - rho) * bg.optimal_mean_flows(k, f, rho) == pytest.approx(bg.asymptotic_mean_flows(k, f), rel=1e-3)
    assert (1 - rho) * bg.optimal_threshold(k, f, rho) == pytest.approx(a_f, rel=1e-3)
    assert bg.asymptotic_mean_flows(k, f) == pytest.approx(k + 1 + a_f * f)
    assert bg.asymptotic_mean_flows(0, 0.3) == 1.0


# ----------------------------------------------------------------- dynamic arrivals (Sec. III)

def test_access_control_limit_eq27():
    k, rho, rho_b = 3, 0.5, 0.2
    M = bg.access_control_limit(k, rho, rho_b)
    assert M / (k + M) == pytest.approx(rho_b / (1 - rho))


def test_access_control_approaches_wtcp_theorem7():
    k, rho, rho_b = 1, 0.5, 0.25
    Mc = bg.access_control_limit(k, rho, rho_b)
    target = bg.wtcp_mean_flows(k, rho_b / (1 - rho), rho)      # N_w(k, M/(M+k), rho)
    means = []
    for M in (2.0 * Mc, 1.5 * Mc, 1.2 * Mc):
        s = bg.access_control_chain(k, rho, rho_b, M, n_max=45, m_max=250)
        assert s.boundary_mass_n < 1e-10 and s.boundary_mass_m < 1e-6
        assert s.cbf_throughput == pytest.approx(rho_b, rel=1e-5)   # no micro-flow lost
        assert target < s.mean_short < s.wtcp_mean
        means.append(s.mean_short)
    assert means[0] > means[1] > means[2]
    assert means[2] - target < 0.05 * target


def test_access_control_without_limit_is_vanilla():
    # M beyond the truncation: every micro-flow is a TCP flow (the 'vanilla' policy)
    k, rho, rho_b = 1, 0.4, 0.2
    s = bg.access_control_chain(k, rho, rho_b, M=1e9, n_max=90, m_max=90)
    assert s.mean_short == pytest.approx(bg.vanilla_mean_flows(k, rho_b / (1 - rho), rho), rel=1e-6)


def test_lbe_stable_fairbat_eq1():
    # FAIRBAT eq. (1), two links: rho_b <= (1 - rho_s)^2; the paper (Sec. IV-B) puts the transition at rho_s = 0.552 = 1 - sqrt(0.2)
    rho_b = 0.2
    edge = 1 - math.sqrt(rho_b)
    assert edge == pytest.approx(0.553, abs=1e-3)
    assert bg.lbe_stable(rho_b, [edge - 1e-6] * 2) and not bg.lbe_stable(rho_b, [edge + 1e-6] * 2)
    assert bg.lbe_stable(0.3, 0.6) and not bg.lbe_stable(0.3, [0.4, 0.4, 0.4])  # 0.216 < 0.3


# ----------------------------------------------------------------- the solver itself

def test_stationary_reports_bounded_truncation():
    s = bg.stationary(lambda n: 1.0 / (2 + n), 2, 0.95, tol=1e-9)
    assert s.tail_mass_bound <= 1e-9 and s.mean_error_bound < 1e-5
    assert s.mean == pytest.approx(3 * 0.95 / 0.05, rel=1e-7)
    assert s.pi.sum() == pytest.approx(1.0)


def test_stationary_rejects_unstable_policy():
    with pytest.raises(ValueError, match="positive recurrent"):
        bg.stationary(lambda n: 0.3 / max(n, 1), 1, 0.5, n_limit=5000)
    with pytest.raises(ValueError, match="capacity"):
        bg.stationary([1.0, 1.0], 1, 0.5)


# ----------------------------------------------------------------- bad arguments

@pytest.mark.parametrize("call,arg", [
    (lambda: bg.optimal_mean_flows(3, 0.5, 1.0), "rho"),
    (lambda: bg.wtcp_mean_flows(3, 0.5, 1.2), "rho"),
    (lambda: bg.implementable_mean_flows(3, 1.0, 0.5), "f"),
    (lambda: bg.optimal_threshold(3, -0.1, 0.5), "f"),
    (lambda: bg.wtcp_gap_limit(2, 1.5), "f"),
    (lambda: bg.erlang_b_inverse(2, 1.0), "f"),
    (lambda: bg.erlang_b(-1, 1.0), "k"),
    (lambda: bg.optimal_mean_flows(-2, 0.5, 0.5), "k"),
    (lambda: bg.threshold_mean_flows(-1, 2, 0.5), "n0"),
    (lambda: bg.stationary(np.zeros(2), -1, 0.5), "k"),
    (lambda: bg.access_control_limit(1, 0.5, 0.6), "rho_b"),
    (lambda: bg.lbe_stable(0.1, [0.5, 1.0]), "rhos"),
    (lambda: bg.engset(3, 3, 1.0), "m"),
])
def test_bad_arguments_name_the_argument(call, arg):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(arg + " ")


def test_large_scale_implementable_stays_above_optimal():
    # k = 1000, rho = 0.999: n* ~ 1e7, the negative-binomial tail is ~e^-6500 (below any double)
    for k, f, rho in [(1000, 0.9, 0.999), (1000, 0.5, 0.99), (100, 0.9, 0.99)]:
        M, N = bg.implementable_mean_flows(k, f, rho), bg.optimal_mean_flows(k, f, rho)
        assert 1.0 <= M / N < 1.0 + 1e-4
        assert (1 - rho) * N == pytest.approx(bg.asymptotic_mean_flows(k, f), rel=2e-2)


def test_far_tail_helpers_match_scipy_where_scipy_is_accurate():
    from scipy import stats
    assert bg._log_negbin_sf(400, 3, 0.2) == pytest.approx(stats.nbinom.logsf(400, 4, 0.8), rel=1e-9)
    assert bg._log_poisson_cdf(5, 400.0) == pytest.approx(stats.poisson.logcdf(5, 400.0), rel=1e-9)
    # beyond scipy's range, against a direct log-sum of the pmf
    n, lam = 100, 5000.0
    i = np.arange(n + 1)
    direct = logsumexp(i * math.log(lam) - lam - gammaln(i + 1))
    assert bg._log_poisson_cdf(n, lam) == pytest.approx(direct, rel=1e-10)
    m = np.arange(3000, 200000)
    direct_nb = logsumexp(stats.nbinom.logpmf(m, 4, 0.5))
    assert bg._log_negbin_sf(2999, 3, 0.5) == pytest.approx(direct_nb, rel=1e-10)
