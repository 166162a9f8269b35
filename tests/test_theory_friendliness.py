"""Tests of cclab.theory.friendliness: the TFCBR flow-level model (eqs. 1-4,
Theorems 3-4, stability) and the STF checks on samples of known order."""
import math

import numpy as np
import pytest
from scipy import stats

from cclab.theory import friendliness as fr


def _eq1_direct(n, rho1, n2, cap):
    s = rho1 / cap
    return sum((1 - s) ** (n2 + 1) * math.comb(i + n2, n2) * s ** i for i in range(n + 1))


def test_eq1_and_eq2_match_the_printed_sums():
    rho1, n2, nu, alpha = 0.4, 2, 1, 0.5
    r = fr.tfcbr_total_rate(alpha, rho1, n2, nu)
    assert r == pytest.approx(alpha * nu * (1 - rho1) / (n2 + nu))
    for n in (0, 1, 5, 20):
        assert fr.tfcbr_short_flow_cdf(n, alpha, rho1, n2, nu) == pytest.approx(_eq1_direct(n, rho1, n2, 1 - r), rel=1e-12)
        assert fr.tcp_short_flow_cdf(n, rho1, n2, nu) == pytest.approx(_eq1_direct(n, rho1, n2 + nu, 1.0), rel=1e-12)


def test_rates_agree_with_littles_law():
    # R1 = (mean size)/(mean response time) = rho1 / E[N1] (Little), E[N1] of the negative binomial
    rho1, n2, nu, alpha = 0.3, 3, 2, 0.7
    cap = 1 - fr.tfcbr_total_rate(alpha, rho1, n2, nu)
    EN_u = stats.nbinom.mean(n2 + 1, 1 - rho1 / cap)
    EN_t = stats.nbinom.mean(n2 + nu + 1, 1 - rho1)
    R1_u, X2_u = fr.tfcbr_rates(alpha, rho1, n2, nu)
    R1_t, X2_t = fr.tcp_rates(rho1, n2, nu)
    assert R1_u == pytest.approx(rho1 / EN_u) and R1_t == pytest.approx(rho1 / EN_t)
    # capacity conservation: rate of long flows + short flows + UDP = capacity when busy
    assert X2_t * (n2 + nu) == pytest.approx(1 - rho1)
    assert X2_u * n2 + fr.tfcbr_total_rate(alpha, rho1, n2, nu) == pytest.approx(1 - rho1)


def test_theorem4_bound_is_exactly_where_stf_mean_stops():
    for n2 in range(0, 5):
        for nu in range(1, 5):
            b = fr.alpha_bound(n2, nu)
            assert b == pytest.approx((n2 + nu) / (n2 + nu + 1))
            for rho1 in (0.0, 0.3, 0.8):
                assert fr.stf_mean_holds(b * (1 - 1e-6), rho1, n2, nu)
                assert not fr.stf_mean_holds(b * (1 + 1e-6), rho1, n2, nu)


def test_theorem4_alpha_half_is_the_universal_limit():
    assert fr.alpha_bound_infimum() == 0.5
    grid = [(n2, nu, rho1) for n2 in range(4) for nu in range(1, 4) for rho1 in (0.1, 0.5, 0.9)]
    assert all(fr.stf_mean_holds(0.5, rho1, n2, nu) for n2, nu, rho1 in grid)
    assert not all(fr.stf_mean_holds(0.51, rho1, n2, nu) for n2, nu, rho1 in grid)


def test_stability_condition():
    # rho1 < 1 - r  <=>  alpha < 1 + n2/nu (Sec. V-B.4); with n2 = 0: alpha < 1
    assert fr.tfcbr_stable(0.99, 0, 1) and not fr.tfcbr_stable(1.0, 0, 1)
    rng = np.random.default_rng(7)
    for _ in range(200):
        n2, nu = int(rng.integers(0, 5)), int(rng.integers(1, 5))
        alpha, rho1 = float(rng.uniform(0, 3)), float(rng.uniform(0.01, 0.95))
        r = alpha * nu * (1 - rho1) / (n2 + nu)
        assert fr.tfcbr_stable(alpha, n2, nu) == (rho1 < 1 - r)
    with pytest.raises(ValueError, match="unstable"):
        fr.tfcbr_rates(1.5, 0.5, 0, 1)


def test_theorem3_dominance_only_at_alpha_zero():
    for n2, nu, rho1 in [(0, 1, 0.5), (2, 1, 0.3), (1, 3, 0.8)]:
        assert fr.number_dominance(0.0, rho1, n2, nu) == (True, None)
        for alpha in (0.05, 0.5):
            holds, n_bad = fr.number_dominance(alpha, rho1, n2, nu)
            assert not holds and n_bad is not None
            # at the reported n the printed CDFs really are in the wrong order
            assert fr.tcp_short_flow_cdf(n_bad, rho1, n2, nu) >= fr.tfcbr_short_flow_cdf(n_bad, alpha, rho1, n2, nu) - 1e-15


def test_theorem3_crossing_found_far_in_the_tail():
    # alpha = 1e-4: the CDFs cross where both tails are ~1e-70000; found exactly in log space
    holds, n_bad = fr.number_dominance(1e-4, 0.1, 0, 1)
    assert not holds and n_bad > 10 ** 4
    # crossing point of the two tails' leading terms: n log(1/(1-r)) ~ log n + const
    r = fr.tfcbr_total_rate(1e-4, 0.1, 0, 1)
    assert 0.5 < n_bad * -math.log1p(-r) / math.log(n_bad) < 2.0


# ----------------------------------------------------------------- STF on samples

def test_shifted_samples_are_friendly_in_every_order():
    rng = np.random.default_rng(3)
    ref = rng.exponential(1.0, 2000)
    x = ref + 0.5
    for check in (fr.stf_mean, fr.stf_usual, fr.stf_icv):
        assert check(ref, x).holds
        assert not check(x, ref).holds
    # the paper's orientation (§VI-B): 0 = STF-st; the reverse comparison has every
    # flow where its CDF is above the reference's
    assert fr.stf_usual(ref, x).classes["st_index"].iloc[0] == 0.0
    assert fr.stf_usual(x, ref).classes["st_index"].iloc[0] == 1.0


def test_less_risky_same_mean_is_icv_but_not_st():
    ref = [0.0, 2.0]            # mean 1, risky
    x = [1.0, 1.0]              # mean 1, sure: preferred by every concave utility
    assert fr.stf_mean(ref, x).holds
    assert fr.stf_icv(ref, x).holds
    st = fr.stf_usual(ref, x)
    assert not st.holds
    # pooled values {0, 1, 2}: F_x - F_ref = 0, 0.5, 0; both flows of x have rate 1,
    # where F_x(1) = 1 > F_ref(1) = 0.5: STF-st index 1 (every flow needs a better rate)
    assert st.classes["st_index"].iloc[0] == 1.0
    assert st.classes["max_violation"].iloc[0] == pytest.approx(0.5)


def test_mean_friendly_but_not_icv():
    ref = [1.0] * 10
    x = np.linspace(0.5, 1.6, 12)      # mean 1.05 but spread below 1
    assert fr.stf_mean(ref, x).holds
    assert not fr.stf_icv(ref, x).holds
    assert not fr.stf_usual(ref, x).holds


def test_several_classes_at_once():
    ref = {"short": [1.0, 2.0, 3.0], "long": [5.0, 5.0]}
    good = {"short": [2.0, 3.0, 4.0], "long": [5.0, 6.0]}
    bad = {"short": [2.0, 3.0, 4.0], "long": [4.0, 4.5]}
    for check in (fr.stf_mean, fr.stf_usual, fr.stf_icv):
        assert check(ref, good).holds
        res = check(ref, bad)
        assert not res.holds
        assert dict(zip(res.classes["class"], res.classes["holds"])) == {"short": True, "long": False}
    # 2-D arrays: one row per class
    assert fr.stf_usual(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.5, 2.0], [3.0, 4.5]])).holds
    with pytest.raises(ValueError, match="same classes"):
        fr.stf_mean({"a": [1.0]}, {"b": [1.0]})


@pytest.mark.parametrize("call,arg", [
    (lambda: fr.tcp_short_flow_cdf(3, 1.0, 1, 1), "rho1"),
    (lambda: fr.tfcbr_total_rate(0.5, 0.3, -1, 1), "n2"),
    (lambda: fr.alpha_bound(0, 0), "nu"),
    (lambda: fr.tfcbr_stable(-0.1, 0, 1), "alpha"),
    (lambda: fr.ps_permanent_cdf(3, 0.5, 1, capacity=0.4), "rho"),
    (lambda: fr.stf_usual([1.0], [1.0], tol=1.0), "tol"),
])
def test_bad_arguments_name_the_argument(call, arg):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(arg + " ")
