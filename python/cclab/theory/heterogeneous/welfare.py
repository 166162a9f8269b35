"""Utility maximisation, efficiency and fairness of heterogeneous equilibria.

- num_optimum: the weighted NUM problem of eqs. (8)-(9) and (23)-(24), solved through its
  convex Lagrange dual (scipy TNC, bound-constrained) and polished on its KKT conditions.
- efficiency: the gamma of eq. (15) (Theorem 1), the bound of Theorem 3 (eq. 17), and the
  achieved versus optimal aggregate utility.
- intra_protocol_check: Theorem 4 (each protocol solves its own NUM, eq. 20).
- scalers_for_allocation: Theorem 5 (the mu of eq. 21 that makes an allocation an equilibrium).

All references are to Tang, Wei, Low and Chiang, "Heterogeneous congestion control:
efficiency, fairness and design".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .equilibria import Equilibrium, price_scale, solve_equilibrium
from .model import Linear, Network, ScaledView, _split, equilibrium_residual

__all__ = ["NumSolution", "num_optimum", "Efficiency", "efficiency", "gamma",
           "intra_protocol_check", "Allocation", "scalers_for_allocation"]


@dataclass
class NumSolution:
    """The optimum of max sum_i U_i(x_i)/w_i subject to Rx <= c (eqs. 8-9, 23-24).

    x: optimal rates. p: optimal Lagrange multipliers (link prices). value: sum_i U_i(x_i)/w_i.
    utility: the unweighted aggregate utility sum_i U_i(x_i). kkt_residual: eq. 7 residual of the
    KKT system (prices p against the homogeneous network with utilities U/w).
    """

    x: np.ndarray
    p: np.ndarray
    value: float
    utility: float
    kkt_residual: float


def _weights(net: Network, w, what: str = "w") -> np.ndarray:
    if w is None:
        return np.ones(net.N)
    w = np.broadcast_to(np.asarray(w, dtype=float), (net.N,)).copy() if np.ndim(w) == 0 \
        else np.asarray(w, dtype=float)
    if w.shape != (net.N,):
        raise ValueError(f"{what} must have one weight per source ({net.N}), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"{what} must be positive and finite")
    return w


def num_optimum(net: Network, w=None) -> NumSolution:
    """Solve max_{x>=0} sum_i U_i(x_i)/w_i subject to Rx <= c (eqs. 23-24; w = 1 gives eqs. 8-9).

    Minimises the convex dual D(p) = sum_i [U_i(x_i)/w_i - x_i q_i] + c.p over p >= 0, with
    x_i = (U_i')^{-1}(w_i q_i) and q = R^T p (Low and Lapsley [17]); grad D = c - R x.
    The TNC solution of that bound-constrained convex problem is then polished by Newton on the KKT conditions, which are the
    equilibrium conditions (eq. 7) of the homogeneous network whose sources scale prices by
    mu = 1/w (eqs. 25-27).

    net: the network (its price mappings are ignored: NUM prices are common, eq. 9).
    w: optional positive weights w_i (scalar or one per source); default all 1.
    """
    net, _ = _split(net)
    w = _weights(net, w)
    homo = net.homogeneous()
    view = ScaledView(homo, 1.0 / w)
    s = price_scale(view)
    R, c = net.R, net.c

    def dual(z):
        p = s * z
        q = net.RT @ p
        x = homo.rates_from_prices(q, 1.0 / w)
        val = np.sum(homo.utility_values(x) / w - x * q) + c @ p
        grad = s * (c - R @ x)
        return val, grad

    z0 = np.ones(net.L)
    # TNC (bound-constrained truncated Newton) is ~10x faster here than L-BFGS-B in scipy 1.17
    res = minimize(dual, z0, jac=True, method="TNC", bounds=[(1e-12, None)] * net.L,
                   options={"maxfun": 5000, "ftol": 1e-15, "gtol": 1e-12})
    p_dual = s * res.x
    p_newton, ok = solve_equilibrium(view, p_dual, tol=1e-13)
    candidates = [p_dual] + ([p_newton] if ok else [])
    p = min(candidates, key=lambda v: equilibrium_residual(view, v))
    x = homo.rates_from_prices(net.RT @ p, 1.0 / w)
    u = homo.utility_values(x)
    return NumSolution(x=x, p=p, value=float(np.sum(u / w)), utility=float(np.sum(u)),
                       kkt_residual=equilibrium_residual(view, p))


def gamma(net: Network, p) -> np.ndarray:
    """gamma_i^j = sum_l R_li^j p_l / sum_l R_li^j m_l^j(p_l) (eq. 15, Theorem 1).

    net: the network. p: an equilibrium price (L,). Sources whose effective price is zero get inf.
    """
    net, _ = _split(net)
    p = net.check_prices(p)
    M = net.mapping_values(p)
    num = net.RT @ p
    den = np.einsum("li,il->i", net.R, M[net.protocol])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


@dataclass
class Efficiency:
    """Efficiency of one equilibrium (section V-A).

    gamma: the weights of eq. (15). bound: min gamma / max gamma (Theorem 3, eq. 17).
    achieved: aggregate utility at the equilibrium, U-hat. optimal: the NUM optimum U* (eqs. 8-9).
    ratio: achieved / optimal. applies: Theorem 3's hypothesis U >= 0 holds at both allocations.
    theorem1_gap: max relative difference between the equilibrium rates and the optimum of the
    gamma-weighted NUM (eqs. 10-11); it should be ~0 by Theorem 1.
    """

    gamma: np.ndarray
    bound: float
    achieved: float
    optimal: float
    ratio: float
    applies: bool
    theorem1_gap: float


def efficiency(net: Network, eq) -> Efficiency:
    """gamma (eq. 15), the bound gamma_min/gamma_max of Theorem 3 and U-hat/U* at an equilibrium.

    net: the network. eq: an Equilibrium (or its price vector p).
    """
    net, _ = _split(net)
    p = eq.p if isinstance(eq, Equilibrium) else np.asarray(eq, dtype=float)
    p = net.check_prices(p, "eq")
    if equilibrium_residual(net, p) > 1e-6:
        raise ValueError("eq must be an equilibrium of net (eq. 7 residual above 1e-6)")
    g = gamma(net, p)
    if not np.all(np.isfinite(g)):
        raise ValueError("eq gives a source a zero effective price; gamma (eq. 15) is undefined")
    x_hat = net.rates_from_prices(np.einsum("li,il->i", net.R, net.mapping_values(p)[net.protocol]))
    opt = num_optimum(net)
    u_hat_i = net.utility_values(x_hat)
    u_hat = float(np.sum(u_hat_i))
    applies = bool(np.all(u_hat_i >= 0) and np.all(net.utility_values(opt.x) >= 0))
    weighted = num_optimum(net, w=1.0 / g)            # Theorem 1: max sum gamma_i U_i
    gap = float(np.max(np.abs(weighted.x - x_hat) / x_hat))
    return Efficiency(gamma=g, bound=float(g.min() / g.max()), achieved=u_hat, optimal=opt.utility,
                      ratio=u_hat / opt.utility if opt.utility != 0 else np.nan, applies=applies,
                      theorem1_gap=gap)


def intra_protocol_check(net: Network, eq) -> list[dict]:
    """Theorem 4: each protocol's equilibrium rates solve its own NUM (eq. 20).

    For every protocol j, c-hat^j = R^j x-hat^j is the bandwidth it takes on each link; the
    rates x-hat^j must be the unique optimum of max sum_i U_i^j(x_i^j) s.t. R^j x^j <= c-hat^j.

    net: the network. eq: an Equilibrium (or its price vector p).
    Returns one dict per protocol: protocol, x_equilibrium, x_num, max_rel_error.
    """
    net, _ = _split(net)
    p = eq.p if isinstance(eq, Equilibrium) else np.asarray(eq, dtype=float)
    p = net.check_prices(p, "eq")
    if equilibrium_residual(net, p) > 1e-6:
        raise ValueError("eq must be an equilibrium of net (eq. 7 residual above 1e-6)")
    M = net.mapping_values(p)
    x_hat = net.rates_from_prices(np.einsum("li,il->i", net.R, M[net.protocol]))
    out = []
    for j in range(net.J):
        idx = net.source_of[j]
        Rj = net.R_by_protocol[j]
        chat = Rj @ x_hat[idx]
        used = chat > 0
        sub = Network(chat[used], [Rj[used]], [Linear(1.0)], [[net.utilities[i] for i in idx]])
        sol = num_optimum(sub)
        err = float(np.max(np.abs(sol.x - x_hat[idx]) / x_hat[idx]))
        out.append({"protocol": net.names[j], "x_equilibrium": x_hat[idx], "x_num": sol.x,
                    "max_rel_error": err})
    return out


@dataclass
class Allocation:
    """The outcome of Theorem 5.

    mu: the scalers (eq. 21), 1 for the reference protocol. p: the link prices of the equilibrium.
    x: the equilibrium rates: the requested rates for the other protocols, the optimum of the
    reference protocol's NUM on the capacity they leave. residual: eq. 7 residual of p under mu.
    """

    mu: np.ndarray
    p: np.ndarray
    x: np.ndarray
    residual: float


def scalers_for_allocation(net: Network, x, reference: int | None = None) -> Allocation:
    """Theorem 5: the scalers mu that make a feasible allocation an equilibrium (eqs. 3, 21, 6, 7).

    The reference protocol J keeps mu = 1. Its sources solve max sum U_i^J s.t.
    R^J x^J <= c - sum_{k != J} R^k x^k with multipliers p^J; the link price is
    p_l = (m_l^J)^{-1}(p_l^J) and mu_i^j = sum_l R_li^j m_l^j(p_l) / U_i^j'(x_i^j) for j != J
    (proof of Theorem 5). The rates of protocol J are those of that NUM, not the given ones.

    net: the network; every link must carry a reference-protocol source that uses only that link.
    x: the requested rates, one per source (N,); all positive with Rx <= c.
    reference: index of the protocol that keeps mu = 1 (default: the last one, J).
    """
    net, _ = _split(net)
    J = net.J - 1 if reference is None else int(reference)
    if not (0 <= J < net.J):
        raise ValueError(f"reference must be a protocol index in 0..{net.J - 1}, got {reference}")
    x = np.asarray(x, dtype=float)
    if x.shape != (net.N,) or not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise ValueError(f"x must hold one positive finite rate per source ({net.N})")
    if np.any(net.R @ x > net.c * (1 + 1e-9)):
        raise ValueError("x must be feasible: R x exceeds the capacity on some link")
    RJ = net.R_by_protocol[J]
    single = RJ[:, RJ.sum(axis=0) == 1]
    lacking = np.flatnonzero(single.sum(axis=1) == 0)
    if lacking.size:
        raise ValueError(f"net must have a reference-protocol source using only link {int(lacking[0])} "
                         "(hypothesis of Theorem 5)")
    others = net.protocol != J
    cap = net.c - net.R[:, others] @ x[others]
    if np.any(cap <= 1e-12 * net.c):
        raise ValueError("x must leave spare capacity on every link for the reference protocol")
    idxJ = net.source_of[J]
    sub = Network(cap, [RJ], [Linear(1.0)], [[net.utilities[i] for i in idxJ]])
    sol = num_optimum(sub)
    pJ = sol.p
    p = np.array([net.mappings[J][l].inverse(float(pJ[l])) for l in range(net.L)])
    M = net.mapping_values(p)
    q = np.einsum("li,il->i", net.R, M[net.protocol])
    xx = x.copy()
    xx[idxJ] = sol.x
    mu = np.ones(net.N)
    mu[others] = q[others] / net.utility_derivatives(x)[others]
    return Allocation(mu=mu, p=p, x=xx, residual=equilibrium_residual(ScaledView(net, mu), p))
