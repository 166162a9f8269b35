"""Section IV of the lower-bounds paper (Podlesny and Gorinsky, WUCSE-2007-42): theta(i),
A_psi, L_theta, E_theta and the queue bounds, checked against values computed by hand
(bisection on math.erf, independent of scipy) and the numbers printed in the paper."""
import math

import numpy as np
import pytest

from cclab.theory import lower_bounds as lb


def solve_erf(target: float) -> float:
    """x with erf(x) = target by bisection on math.erf."""
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erf(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_A_psi_from_fig2_moments():
    # eq. 15 is sqrt(2) sigma / D at U = 1, with sigma^2 from Fig. 2 (mu = D = 1).
    assert lb.A_psi("uniform") == pytest.approx(math.sqrt(2 * (1 / 3)), rel=1e-12)
    assert lb.A_psi("exponential") == pytest.approx(math.sqrt(2 * 1.0), rel=1e-12)
    for k in (2.1, 2.5, 3.0):
        assert lb.A_psi("pareto", k) == pytest.approx(math.sqrt(2 / (k * (k - 2))), rel=1e-12)
    assert lb.A_psi("pareto", 2.1) == pytest.approx(3.0861, abs=1e-4)


def test_L_and_E_solve_their_equations_exactly():
    for t in (0.001, 0.01, 0.05, 0.1):
        assert lb.L_theta(t) == pytest.approx(solve_erf(1 - 6 * t) / math.sqrt(1.5), abs=1e-10)  # eq. 18
        assert lb.E_theta(t) == pytest.approx(solve_erf(1 - 2 * t), abs=1e-10)  # eq. 21
        assert math.erf(lb.L_theta(t) * math.sqrt(1.5)) == pytest.approx(1 - 6 * t, abs=1e-12)


def test_L_and_E_match_the_papers_rounded_values():
    # Section IV: L_1% ~ 1.1, L_5% ~ 0.6, E_1% ~ 1.6, E_5% ~ 1.15.
    assert lb.L_theta(0.01) == pytest.approx(1.1, abs=0.05)
    assert lb.L_theta(0.05) == pytest.approx(0.6, abs=0.05)
    assert lb.E_theta(0.01) == pytest.approx(1.6, abs=0.05)
    assert lb.E_theta(0.05) == pytest.approx(1.15, abs=0.05)


def test_fig3_coefficients():
    # Fig. 3: Q_min = c sqrt(N) with c = 0.89, 0.49 (uniform), 1.54, 0.85 (exponential).
    tab = lb.fig3_table()
    printed = tab.dropna(subset=["paper_qmin_coef"])
    assert len(printed) == 6
    for _, row in printed.iterrows():
        assert row.qmin_coef == pytest.approx(row.paper_qmin_coef, abs=0.011), row.to_dict()
    assert tab.set_index(["dist", "theta"]).loc[("uniform", 0.01), "qmin_coef"] == pytest.approx(0.8866, abs=1e-4)


def test_queue_bounds_by_hand():
    # N = 1000, top 1 %, exponential: L A sqrt(N) and E A sqrt(N) (eqs. 19, 22).
    a = math.sqrt(2)
    lo = solve_erf(0.94) / math.sqrt(1.5) * a * math.sqrt(1000)
    hi = solve_erf(0.98) * a * math.sqrt(1000)
    qmin, qmax = lb.queue_bounds(1000, 0.01, "exponential")
    assert qmin == pytest.approx(lo, rel=1e-9) and qmin == pytest.approx(48.56, abs=0.01)
    assert qmax == pytest.approx(hi, rel=1e-9) and qmax == pytest.approx(73.57, abs=0.01)
    # Theorem 1: both scale as sqrt(N).
    q4 = lb.queue_bounds(4000, 0.01, "exponential")
    assert q4[0] / qmin == pytest.approx(2.0, rel=1e-12) and q4[1] / qmax == pytest.approx(2.0, rel=1e-12)


def test_theta_eq14_form_and_limits():
    a = lb.A_psi("uniform")
    for i, q in ((1, 0.5), (10, 3.0), (500, 12.0)):
        assert lb.theta(i, q, "uniform") == pytest.approx(0.5 * (1 - math.erf(q / (a * math.sqrt(i)))), rel=1e-12)
    assert lb.theta(100, 0.0, "exponential") == pytest.approx(0.5)
    qs = np.linspace(0, 50, 11)
    th = lb.theta(300, qs, "pareto", 2.5)
    assert np.all(np.diff(th) < 0)
    # Lower utilization stretches arrivals (mu = D/U > D): fewer packets find a long queue.
    assert lb.theta(300, 10.0, "exponential", utilization=0.8) < lb.theta(300, 10.0, "exponential")


def test_theta_mean_respects_inequalities_17_and_20():
    n = 1000
    for dist in ("uniform", "exponential", "pareto"):
        a = lb.A_psi(dist)
        for q in (5.0, 20.0, 40.0, 80.0):
            m = lb.theta_mean(q, n, dist)
            lower = (1 - math.erf(q / (a * math.sqrt(2 * n / 3)))) / 6
            upper = (1 - math.erf(q / (a * math.sqrt(n)))) / 2
            assert lower <= m <= upper
        qmin, qmax = lb.queue_bounds(n, 0.01, dist)
        assert qmin <= lb.queue_clt(n, 0.01, dist) <= qmax
        assert lb.theta_mean(lb.queue_clt(n, 0.01, dist), n, dist) == pytest.approx(0.01, abs=1e-9)


@pytest.mark.parametrize("call, arg", [
    (lambda: lb.A_psi("gamma"), "dist"),
    (lambda: lb.A_psi("pareto", 2.0), "k"),
    (lambda: lb.A_psi("pareto", "x"), "k"),
    (lambda: lb.L_theta(0.2), "theta"),
    (lambda: lb.L_theta(0.0), "theta"),
    (lambda: lb.E_theta(0.5), "theta"),
    (lambda: lb.queue_bounds(0, 0.01, "uniform"), "n"),
    (lambda: lb.queue_bounds(10.5, 0.01, "uniform"), "n"),
    (lambda: lb.theta(0, 1.0, "uniform"), "i"),
    (lambda: lb.theta(5, 1.0, "uniform", utilization=0.0), "utilization"),
    (lambda: lb.theta(5, 1.0, "uniform", utilization=1.2), "utilization"),
    (lambda: lb.theta(5, float("nan"), "uniform"), "q"),
    (lambda: lb.period_ticks(10, 1.0, 0), "ticks_per_packet"),
])
def test_bad_arguments_name_the_argument(call, arg):
    with pytest.raises(ValueError, match=rf"^{arg}:"):
        call()


def test_period_ticks():
    # eq. 3: T = N D / U.
    assert lb.period_ticks(1000, 1.0, 80_000) == 80_000_000
    assert lb.period_ticks(1000, 0.5, 80_000) == 160_000_000
    assert lb.period_ticks(3, 0.7, 7) == 30
