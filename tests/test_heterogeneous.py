"""Tests of cclab.theory.heterogeneous (Tang, Wei, Low, Chiang: heterogeneous congestion control)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from cclab.theory.heterogeneous import (AlphaFair, IncompleteEquilibria, CustomMapping, CustomUtility, Linear, Network, Power, Red,
                                        ScaledView, dual_dynamics, efficiency, equilibria, equilibrium_residual,
                                        gamma, intra_protocol_check, link_loads, mu_target, num_optimum,
                                        random_network, scalers_for_allocation, slow_map_jacobian,
                                        solve_equilibrium, source_rates, two_timescale, two_timescale_batch)
from cclab.experiments.reproductions.heterogeneous import experiment1_network


@pytest.fixture(scope="module")
def exp1():
    net = experiment1_network()
    return net, equilibria(net, n_starts=24, seed=3)


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))))


# ---------------------------------------------------------------- model ------------------------------

def test_single_link_two_protocols_closed_form():
    # x_i = beta_i / (k_j p) (eq. 5 with log utility, m^j = k_j p); sum x = c gives p = sum(beta/k)/c
    betas1, betas2, k2, c = [1.0, 2.0], [0.5, 1.5, 3.0], 3.0, 2.5
    net = Network([c], [[[0], [0]], [[0], [0], [0]]], [Linear(1.0), Linear(k2)],
                  [[AlphaFair(1, b) for b in betas1], [AlphaFair(1, b) for b in betas2]])
    eqs = equilibria(net, n_starts=8)
    assert len(eqs) == 1
    p = (sum(betas1) + sum(betas2) / k2) / c
    assert eqs[0].p[0] == pytest.approx(p, rel=1e-12)
    assert eqs[0].stable is True
    assert np.sum(eqs[0].x) == pytest.approx(c, rel=1e-12)


def test_rates_and_loads_follow_eqs_3_5_6():
    net = experiment1_network()
    p = np.array([0.2, 0.5, 0.3])
    # source (2, 1) uses links 1, 2 with K^2 = diag(5, 1, 5): q = 5*0.2 + 0.5 (eq. 3)
    q21 = 5 * 0.2 + 0.5
    x = source_rates(net, p)
    a, b = net.utilities[3].alpha, net.utilities[3].beta
    assert x[3] == pytest.approx((b / q21) ** (1 / a), rel=1e-14)
    assert np.allclose(link_loads(net, p), net.R @ x, rtol=1e-14)
    mu = np.full(net.N, 2.0)
    assert source_rates(net, p, mu)[3] == pytest.approx((b / (q21 / 2.0)) ** (1 / a), rel=1e-14)


def test_red_profile_eq2():
    red = Red(300.0, 1500.0, 10000.0)          # links 1-2, 3-4 of Example 2a
    assert red(np.array(0.0)) == 0.0
    assert red(np.array(300.0)) == 0.0
    assert red(np.array(900.0)) == pytest.approx(0.5 / 10000.0)
    assert red(np.array(5000.0)) == pytest.approx(1e-4)
    assert red.inverse(0.25e-4) == pytest.approx(600.0)
    assert red.derivative(np.array(900.0)) == pytest.approx(1 / (10000 * 1200))


def test_custom_mapping_and_utility_solve_like_builtins():
    # m(p) = p + p^3 as a plain callable; U = log given by callables: same equilibrium as AlphaFair(1)
    m = CustomMapping(lambda p: p + p ** 3)
    u = CustomUtility(np.log, lambda x: 1.0 / x, lambda q: 1.0 / q)
    a = Network([1.0, 2.0], [[[0], [0, 1]], [[1]]], [Linear(1.0), m], [u, u])
    b = Network([1.0, 2.0], [[[0], [0, 1]], [[1]]], [Linear(1.0), m],
                [AlphaFair(1, 1), AlphaFair(1, 1)])
    ea, eb = equilibria(a, n_starts=6), equilibria(b, n_starts=6)
    assert len(ea) == len(eb) == 1
    assert np.allclose(ea[0].p, eb[0].p, rtol=1e-8)
    assert ea[0].residual < 1e-10


# ---------------------------------------------------------------- equilibria -------------------------

def test_experiment1_has_three_equilibria(exp1):
    net, eqs = exp1
    assert len(eqs) == 3
    assert sorted(e.stable for e in eqs) == [False, True, True]
    for e in eqs:
        assert e.residual < 1e-10                       # eq. 7
        assert np.all(e.p > 0) and np.allclose(e.y, net.c, rtol=1e-9)
        assert abs(e.p[0] - e.p[2]) < 1e-9              # the network is symmetric in links 1 and 3
    # a different set of starts finds the same three
    again = equilibria(net, n_starts=16, seed=11, settle_steps=0)
    assert len(again) == 3
    assert np.allclose(np.stack([e.p for e in again]), np.stack([e.p for e in eqs]), atol=1e-9)


def test_experiment1_index_theorem_and_every_seed_finds_all_three(exp1):
    net, eqs = exp1
    # indices: +1 at the two stable equilibria, -1 at the unstable one; they sum to 1 (index theorem)
    assert sorted((e.stable, e.index) for e in eqs) == [(False, -1), (True, 1), (True, 1)]
    assert eqs.index_sum == 1 and eqs.complete is True
    ref = np.stack([e.p for e in eqs])
    rounds = []
    for seed in range(50):
        # deflation alone (one round) from one random start, one Halton start and the uniform price
        d = equilibria(net, n_starts=1, settle_steps=0, seed=seed, max_rounds=1)
        # the index check alone: without deflation a round that misses one equilibrium leaves an
        # index sum of 0 or 2, and new rounds add random starts until it is 1
        c = equilibria(net, n_starts=1, settle_steps=0, seed=seed, deflation=False)
        for found in (d, c):
            assert len(found) == 3 and found.complete is True
            assert [e.stable for e in found] == [e.stable for e in eqs]
            assert np.allclose(np.stack([e.p for e in found]), ref, atol=1e-9)
        rounds.append(c.rounds)
    assert max(rounds) > 1          # some seeds' first round did miss one: the check was needed


def test_an_incomplete_set_is_reported():
    net = experiment1_network()
    stable_a, unstable, _ = equilibria(net, n_starts=4, settle_steps=0)
    starts = np.stack([stable_a.p, unstable.p])
    got = equilibria(net, starts=starts, settle_steps=0)       # explicit starts: polish only
    assert len(got) == 2 and got.index_sum == 0 and got.complete is False
    with pytest.warns(IncompleteEquilibria, match="sum to 0, not 1"):
        equilibria(net, starts=starts, settle_steps=0, on_incomplete="warn")
    with pytest.raises(RuntimeError, match="at least one equilibrium is missing"):
        equilibria(net, starts=starts, settle_steps=0, on_incomplete="raise")
    # given more rounds, the search adds random starts until the index sum is 1
    more = equilibria(net, starts=starts, settle_steps=0, max_rounds=6, on_incomplete="raise")
    assert len(more) == 3 and more.complete is True and more.rounds >= 2


@pytest.mark.parametrize("seed", range(10))
def test_a_network_with_one_equilibrium_gives_one_from_any_seed(seed):
    # homogeneous: the unique equilibrium is the NUM optimum (section IV-B), index +1
    net = _random_homogeneous(seed % 3, Linear(1.0))
    eqs = equilibria(net, n_starts=1, settle_steps=0, seed=seed)
    assert len(eqs) == 1 and eqs[0].index == 1 and eqs.complete is True and eqs.rounds == 1


def test_dual_dynamics_settle_on_stable_equilibria(exp1):
    net, eqs = exp1
    for e in eqs:
        if not e.stable:
            continue
        slowest = -np.max(e.eigenvalues.real)           # decay rate of the slowest mode of eq. 4
        _, P = dual_dynamics(net, e.p * 1.02, t_end=25.0 / slowest, dt=0.5, record_every=10 ** 6)
        assert np.max(np.abs(P[-1] - e.p)) < 1e-6


def _random_homogeneous(seed, mapping):
    rng = np.random.default_rng(seed)
    L, N = 4, 9
    routes = [[l] for l in range(L)] + [list(np.flatnonzero(rng.random(L) < 0.5)) or [0] for _ in range(N - L)]
    utils = [AlphaFair(rng.uniform(0.5, 3), rng.uniform(0.5, 2)) for _ in range(N)]
    return Network(rng.uniform(1, 10, L), [routes[:5], routes[5:]], [mapping, mapping], [utils[:5], utils[5:]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_homogeneous_network_single_equilibrium_is_num_optimum(seed):
    net = _random_homogeneous(seed, Linear(1.0))
    eqs = equilibria(net, n_starts=12, seed=seed)
    assert len(eqs) == 1
    opt = num_optimum(net)
    assert _rel(eqs[0].x, opt.x) < 1e-8
    assert np.allclose(eqs[0].p, opt.p, rtol=1e-7, atol=1e-12)


def test_common_nonlinear_mapping_still_gives_the_num_rates():
    # all sources see the same m(p) = p^2: the equilibrium rates are the NUM optimum, with m(p) = p_NUM
    net = _random_homogeneous(4, Power(2.0))
    eqs = equilibria(net, n_starts=12)
    assert len(eqs) == 1
    opt = num_optimum(net)
    assert _rel(eqs[0].x, opt.x) < 1e-8
    assert np.allclose(eqs[0].p ** 2, opt.p, rtol=1e-7, atol=1e-12)


def test_num_optimum_dual_agrees_with_primal_solve():
    net = _random_homogeneous(7, Linear(1.0))
    w = np.linspace(0.5, 2.0, net.N)
    opt = num_optimum(net, w=w)

    def neg(x):
        return -np.sum(net.utility_values(x) / w), -net.utility_derivatives(x) / w

    cons = {"type": "ineq", "fun": lambda x: net.c - net.R @ x, "jac": lambda x: -net.R}
    res = minimize(neg, np.full(net.N, 0.1), jac=True, method="SLSQP", constraints=[cons],
                   bounds=[(1e-9, None)] * net.N, options={"ftol": 1e-14, "maxiter": 2000})
    assert res.success
    assert _rel(res.x, opt.x) < 1e-5
    assert opt.value == pytest.approx(-res.fun, rel=1e-9)
    assert opt.kkt_residual < 1e-10


# ---------------------------------------------------------------- Theorems 1, 3, 4, 5 ----------------

def test_theorem1_gamma_makes_each_equilibrium_a_weighted_num_optimum(exp1):
    net, eqs = exp1
    for e in eqs:
        g = gamma(net, e.p)
        # type 1 reacts to p itself (K^1 = I): gamma = 1 (eq. 15)
        assert np.allclose(g[net.protocol == 0], 1.0)
        sol = num_optimum(net, w=1.0 / g)               # max sum gamma U (eqs. 10-11)
        assert _rel(sol.x, e.x) < 1e-8
        assert np.allclose(sol.p, e.p, rtol=1e-7)       # KKT multipliers are the link prices (eq. 12)


def test_theorem3_bound_holds_on_random_networks():
    rng = np.random.default_rng(5)
    checked = 0
    for k in range(4):
        net = random_network(rng, utility=lambda r: AlphaFair(r.uniform(0.2, 0.8), r.uniform(0.5, 2.0)))
        for e in equilibria(net, n_starts=6, settle_steps=50, seed=k):
            ef = efficiency(net, e)
            assert ef.applies
            assert ef.ratio <= 1.0 + 1e-12              # U* is the maximum
            assert ef.ratio >= ef.bound - 1e-12         # eq. 17
            assert ef.theorem1_gap < 1e-7
            checked += 1
    assert checked >= 4


def test_theorem4_each_protocol_solves_its_own_num(exp1):
    net, eqs = exp1
    for e in eqs:
        for row in intra_protocol_check(net, e):
            assert row["max_rel_error"] < 1e-8


def test_theorem5_scalers_realise_a_requested_allocation():
    # every link carries a single-link source of the reference protocol (Theorem 5's hypothesis)
    rng = np.random.default_rng(2)
    c = np.array([3.0, 5.0, 4.0])
    net = Network(c, [[[0, 1], [1, 2], [0, 1, 2]], [[0], [1], [2], [0, 2]]], [Power(2.0), Linear(2.0)],
                  [AlphaFair(2.0, 1.0), [AlphaFair(1.0, b) for b in (1.0, 2.0, 1.5, 0.5)]])
    x = np.empty(net.N)
    x[net.protocol == 0] = rng.uniform(0.3, 0.8, 3)
    x[net.protocol == 1] = 0.1
    alloc = scalers_for_allocation(net, x)
    assert alloc.residual < 1e-9                        # an equilibrium under mu (eqs. 3, 21, 6, 7)
    others = net.protocol == 0
    assert _rel(alloc.x[others], x[others]) < 1e-12
    assert _rel(source_rates(net, alloc.p, alloc.mu), alloc.x) < 1e-8
    assert np.all(alloc.mu[~others] == 1.0)


# ---------------------------------------------------------------- Algorithm 2, Theorem 6 -------------

def test_theorem6_mu_of_eq26_makes_the_weighted_optimum_an_equilibrium(exp1):
    net, _ = exp1
    w = np.array([1.0, 2.0, 1.0, 0.5, 0.5, 1.5])
    opt = num_optimum(net, w=w)
    mu = mu_target(net, opt.p, w)
    assert equilibrium_residual(ScaledView(net, mu), opt.p) < 1e-10
    # eq. 27: (1/w) U'(x) = sum_l R_li p_l
    assert _rel(net.utility_derivatives(opt.x) / w, net.RT @ opt.p) < 1e-9


def test_algorithm2_fixed_point_satisfies_eq27(exp1):
    net, _ = exp1
    r = two_timescale(net, kappa=1.0, T=20.0, steps=40, p0=[0.3, 0.3, 0.3], dt=0.05, record_every=100)
    p, mu = r.p_slow[-1], r.mu[-1]
    x = source_rates(net, p, mu)
    assert _rel(net.utility_derivatives(x), net.RT @ p) < 1e-6          # eq. 27 with w = 1
    assert _rel(mu, mu_target(net, p)) < 1e-6                             # eq. 26
    assert _rel(x, num_optimum(net).x) < 1e-6                             # Theorem 6


def test_slow_map_jacobian_matches_finite_differences(exp1):
    # G(mu) = mu_target(equilibrium under mu), solved by Newton next to the optimum (Theorem 6)
    net, _ = exp1
    opt = num_optimum(net)
    mu_star = mu_target(net, opt.p)

    def G(mu):
        p, ok = solve_equilibrium(ScaledView(net, mu), opt.p)
        assert ok
        return mu_target(net, p)

    assert np.allclose(G(mu_star), mu_star, rtol=1e-9)         # the fixed point of eq. 26
    J = slow_map_jacobian(net)
    h = 1e-6
    F = np.column_stack([(G(mu_star + h * e) - G(mu_star - h * e)) / (2 * h) for e in np.eye(net.N)])
    assert np.max(np.abs(F - J)) < 1e-6 * np.max(np.abs(J))
    # type 1 reacts to p itself (K^1 = I): its target is 1 whatever p is
    assert np.allclose(J[net.protocol == 0], 0.0)


def test_batch_matches_single_runs():
    rng = np.random.default_rng(9)
    nets = [random_network(rng) for _ in range(3)]
    p0 = rng.uniform(0.1, 1.0, (3, 5))
    b = two_timescale_batch(nets, kappa=0.5, T=5.0, steps=8, p0=p0, dt=0.1)
    for k, net in enumerate(nets):
        r = two_timescale(net, kappa=0.5, T=5.0, steps=8, p0=p0[k], dt=0.1)
        assert np.allclose(b.p[k], r.p_slow, rtol=1e-12, atol=1e-14)
        assert np.allclose(b.mu[k], r.mu, rtol=1e-12)


def test_random_network_structure_of_experiment2():
    rng = np.random.default_rng(0)
    net = random_network(rng)
    assert (net.L, net.N, net.J) == (5, 15, 2)
    assert np.all((net.c >= 1) & (net.c <= 10))
    single = net.R[:, net.R.sum(axis=0) == 1]
    assert np.all(single.sum(axis=1) >= 1)              # flows 1..5 use links 1..5 alone
    a = net.mappings[1][0].a
    assert 0.5 <= a <= 5 and all(m.a == a for m in net.mappings[1])


# ---------------------------------------------------------------- bad inputs -------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(capacities=[1.0, 0.0]), "capacities"),
    (dict(capacities=[1.0, -2.0]), "capacities"),
    (dict(routing=[[[0], [2]], [[1]]]), "link 2"),
    (dict(routing=[np.ones((3, 2)), [[1]]]), "one row per link"),
    (dict(mappings=[Linear(1.0), lambda p: -p]), "increasing"),
    (dict(mappings=[Linear(1.0), lambda p: p + 1.0]), "m\\(0\\) = 0"),
    (dict(utilities=[[AlphaFair(1, 1)], AlphaFair(1, 1)]), "one utility per source"),
    (dict(utilities=[AlphaFair(1, 1), "log"]), "Utility"),
])
def test_bad_network_arguments_raise(kwargs, match):
    args = dict(capacities=[1.0, 2.0], routing=[[[0], [0, 1]], [[1]]], mappings=[Linear(1.0), Linear(2.0)],
                utilities=[AlphaFair(1, 1), AlphaFair(1, 1)])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        Network(args["capacities"], args["routing"], args["mappings"], args["utilities"])


def test_bad_solver_arguments_raise(exp1):
    net, eqs = exp1
    with pytest.raises(ValueError, match="kappa"):
        two_timescale(net, kappa=1.5, steps=1)
    with pytest.raises(ValueError, match="asynchronous"):
        two_timescale(net, asynchronous=0.0, steps=1)
    with pytest.raises(ValueError, match="p0"):
        two_timescale(net, p0=[0.1, 0.2], steps=1)
    with pytest.raises(ValueError, match="one price per link"):
        equilibrium_residual(net, [0.1, 0.2])
    with pytest.raises(ValueError, match="w"):
        num_optimum(net, w=np.zeros(net.N))
    with pytest.raises(ValueError, match="equilibrium"):
        efficiency(net, np.array([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match="only link"):
        scalers_for_allocation(net, eqs[0].x)           # type 3 has no single-link source
    with pytest.raises(ValueError, match="AlphaFair|alpha"):
        AlphaFair(0.0, 1.0)
    with pytest.raises(ValueError, match="b_max"):
        Red(10.0, 5.0, 10.0)
    with pytest.raises(ValueError, match="increasing"):
        Linear(-1.0)


def test_example2a_fluid_model_has_equilibria_with_different_bottlenecks():
    # Example 2a in fluid form: common price = queue (packets); Reno reacts to RED marking (eq. 2),
    # x = sqrt(1.5)/(RTT sqrt(q)), i.e. AlphaFair(2, 1.5/RTT^2), RTT = 180 ms; FAST reacts to queueing
    # delay b/c (ms) with x = alpha/q, alpha = 50 packets (eq. 1). Section II-B: which links are
    # bottlenecks depends on which protocol dominates.
    c = np.array([9.1, 13.8, 9.1])                      # packets per ms
    red = [Red(300, 1500, 1e4), Red(0, 1500, 10), Red(300, 1500, 1e4)]
    delay = [Linear(1 / ci) for ci in c]
    net = Network(c, [[[0, 1, 2]] * 8, [[0, 1], [0, 1], [1, 2], [1, 2]]], [red, delay],
                  [AlphaFair(2, 1.5 / 180 ** 2), AlphaFair(1, 50.0)])
    eqs = equilibria(net, n_starts=24)
    sets = {tuple(e.bottleneck) for e in eqs}
    assert (False, True, False) in sets                 # FAST first: only link 2-3 saturated
    assert (True, False, True) in sets                  # Reno first: links 1-2 and 3-4 saturated
    for e in eqs:
        assert e.residual < 1e-10
    reno = {tuple(e.bottleneck): e.x[0] for e in eqs}
    assert reno[(True, False, True)] > 10 * reno[(False, True, False)]


def test_saturating_mapping_without_equilibrium_is_reported():
    # RED saturates at 1/K: with greedy enough sources no price brings the link under capacity (A2 fails)
    net = Network([1.0], [[[0], [0]]], [Red(0.0, 10.0, 10.0)], [AlphaFair(1, 1.0)])
    with pytest.raises(ValueError, match="A2"):
        equilibria(net)
