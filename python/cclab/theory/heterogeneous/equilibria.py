"""Network equilibria of heterogeneous protocols (eq. 7) and the dual dynamics (eq. 4).

An equilibrium is a price vector p with P(y(p) - c) = 0, y(p) <= c, p >= 0 (eq. 7 of
Tang, Wei, Low and Chiang). It is a nonlinear complementarity problem; we solve it
with a semismooth Newton method on the Fischer-Burmeister function

    Phi_l(p) = p_l + F_l(p) - sqrt(p_l^2 + F_l(p)^2),   F_l(p) = 1 - y_l(p)/c_l,

whose zeros are exactly the solutions of eq. 7. To find several equilibria we start
that Newton solve from many prices, both directly and after a stretch of damped dual
dynamics (eq. 4), then deduplicate. An equilibrium is classified as locally stable
for the dual dynamics p' = y(p) - c (eq. 4) when the Jacobian dy/dp restricted to
its priced links has all eigenvalues in the open left half plane.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .model import Network, ScaledView, _split, equilibrium_residual, source_rates

__all__ = ["Equilibrium", "equilibria", "solve_equilibrium", "dual_dynamics", "price_scale",
           "load_jacobian", "rosenbrock_step"]


def _state(net: Network, mu, p):
    """Rates, slopes and dq/dp at p^+ with capped rates (solver internals)."""
    pp = np.maximum(p, 0.0)
    M = net.mapping_values(pp)
    q = np.einsum("li,il->i", net.R, M[net.protocol])
    x = net.rates_from_prices(q, mu, cap=True)
    return pp, q, x


def load_jacobian(net: Network, p, mu=None, cap: bool = False) -> np.ndarray:
    """dy/dp (L x L) at prices p: sum over sources of R_li x_i'(q_i) R_ki m_k^j'(p_k) / mu_i.

    net: the network (or a ScaledView). p: link prices (L,). mu: optional scalers.
    cap: use the solvers' rate cap (zero slope where the cap binds).
    """
    net_, mu0 = _split(net)
    mu = mu0 if mu is None else net_.check_scalers(mu)
    pp = np.maximum(np.asarray(p, dtype=float), 0.0)
    M = net_.mapping_values(pp)
    q = np.einsum("li,il->i", net_.R, M[net_.protocol])
    dx = net_.rate_slopes(q, mu, cap=cap)
    Dm = net_.mapping_derivatives(pp)[net_.protocol]          # (N, L)
    dqdp = net_.RT * Dm                                       # (N, L)
    return net_.R @ (dx[:, None] * dqdp)


def _fb(net: Network, mu, p):
    """Fischer-Burmeister residual Phi(p) and its (generalised) Jacobian."""
    pp, q, x = _state(net, mu, p)
    y = net.R @ x
    F = 1.0 - y / net.c
    dx = net.rate_slopes(q, mu, cap=True)
    Dm = net.mapping_derivatives(pp)[net.protocol]
    dydp = net.R @ (dx[:, None] * (net.RT * Dm))
    dF = -dydp / net.c[:, None]
    dF[:, p < 0] = 0.0                                        # y depends on p^+
    r = np.sqrt(p * p + F * F)
    Phi = p + F - r
    safe = r > 1e-300
    da = np.where(safe, 1.0 - p / np.where(safe, r, 1.0), 1.0 - 1.0 / np.sqrt(2.0))
    db = np.where(safe, 1.0 - F / np.where(safe, r, 1.0), 1.0 - 1.0 / np.sqrt(2.0))
    Jac = np.diag(da) + db[:, None] * dF
    return Phi, Jac


def solve_equilibrium(net, p0, mu=None, tol: float = 1e-12, max_iter: int = 100):
    """Polish a starting price into an equilibrium (eq. 7) by semismooth Newton.

    net: the network (or a ScaledView). p0: starting prices (L,). mu: optional scalers (eq. 21).
    tol: stop when the Fischer-Burmeister residual max_l |Phi_l| falls below it.
    max_iter: Newton iterations at most.
    Returns (p, converged). p is clipped to p >= 0 on return.
    """
    net_, mu0 = _split(net)
    mu = mu0 if mu is None else net_.check_scalers(mu)
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol}")
    p = np.asarray(p0, dtype=float).copy()
    if p.shape != (net_.L,) or not np.all(np.isfinite(p)):
        raise ValueError(f"p0 must be a finite vector with one price per link ({net_.L})")
    Phi, Jac = _fb(net_, mu, p)
    merit = 0.5 * Phi @ Phi
    for _ in range(max_iter):
        if np.max(np.abs(Phi)) < tol:
            return np.maximum(p, 0.0), True
        try:
            d = np.linalg.solve(Jac, -Phi)
        except np.linalg.LinAlgError:
            d = np.linalg.lstsq(Jac, -Phi, rcond=None)[0]
        if not np.all(np.isfinite(d)):
            break
        step, ok = 1.0, False
        slope = -2.0 * merit
        while step > 1e-10:
            pn = p + step * d
            Phin, Jacn = _fb(net_, mu, pn)
            mn = 0.5 * Phin @ Phin
            if np.isfinite(mn) and mn <= merit + 1e-4 * step * slope:
                ok = True
                break
            step *= 0.5
        if not ok:
            break
        p, Phi, Jac, merit = pn, Phin, Jacn, mn
    conv = bool(np.max(np.abs(Phi)) < max(tol, 1e-9))
    return np.maximum(p, 0.0), conv


def price_scale(net) -> float:
    """The uniform price s with max_l y_l(s, ..., s)/c_l = 1: a natural unit for prices.

    net: the network (or a ScaledView).
    """
    net_, mu = _split(net)

    def over(s):
        _, _, x = _state(net_, mu, np.full(net_.L, s))
        return np.max(net_.R @ x / net_.c) - 1.0

    lo, hi = 1e-6, 1.0
    while over(hi) > 0:
        hi *= 4.0
        if hi > 1e12:
            raise ValueError("net: no uniform price brings every link under capacity; assumption A2 fails "
                             "(a price mapping saturates, e.g. RED above b_max, before rates fall enough)")
    while over(lo) < 0:
        lo /= 4.0
        if lo < 1e-300:
            return hi
    for _ in range(80):
        mid = np.sqrt(lo * hi)
        if over(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-10:
            break
    return float(hi)


def dual_dynamics(net, p0, t_end: float, mu=None, dt: float = 0.05, gain=None, record_every: int = 1):
    """Integrate the projected dual dynamics p_l' = g_l (y_l(p) - c_l) of eq. (4) (g = 1 in the paper).

    Steps are linearly implicit (Rosenbrock-Euler): p <- max(p + dt (I - dt G J)^{-1} f, 0) with
    f = G (y - c), G = diag(g) and J = dy/dp, solved on the links that are priced or loaded above
    capacity (the others stay at p = 0). This stays stable where rates are steep in the prices
    (stiff dynamics) and is exact to first order in dt. Rates are capped at 10 x the smallest
    capacity on their route, a value no equilibrium reaches.

    net: the network (or a ScaledView). p0: starting prices (L,), >= 0. t_end: time to integrate (> 0).
    mu: optional scalers (N,). dt: time step (> 0). gain: optional positive gains g_l (L,) or scalar.
    record_every: keep every this many steps in the returned trajectory.
    Returns (t, P): times (K,) and prices (K, L), first row p0, last row the final state.
    """
    net_, mu0 = _split(net)
    mu = mu0 if mu is None else net_.check_scalers(mu)
    p = net_.check_prices(p0, "p0").copy()
    if not (t_end > 0):
        raise ValueError(f"t_end must be positive, got {t_end}")
    if not (dt > 0):
        raise ValueError(f"dt must be positive, got {dt}")
    if int(record_every) < 1:
        raise ValueError(f"record_every must be >= 1, got {record_every}")
    g = np.ones(net_.L) if gain is None else np.broadcast_to(np.asarray(gain, float), (net_.L,)).copy()
    if np.any(~np.isfinite(g)) or np.any(g <= 0):
        raise ValueError("gain must be positive and finite")
    n = max(1, int(np.ceil(t_end / dt - 1e-9)))
    h = t_end / n
    ts, ps = [0.0], [p.copy()]
    R, RT, c, proto = net_.R, net_.RT, net_.c, net_.protocol
    for k in range(1, n + 1):
        M = net_.mapping_values(p)
        q = np.einsum("li,il->i", R, M[proto])
        x = net_.rates_from_prices(q, mu, cap=True)
        dx = net_.rate_slopes(q, mu, cap=True)
        Dm = net_.mapping_derivatives(p)[proto]
        J = R @ (dx[:, None] * (RT * Dm))                 # dy/dp
        f = g * (R @ x - c)
        p = np.maximum(p + rosenbrock_step(p[None], f[None], (g[:, None] * J)[None], h)[0], 0.0)
        if k % record_every == 0 or k == n:
            ts.append(k * h)
            ps.append(p.copy())
    return np.asarray(ts), np.asarray(ps)


def rosenbrock_step(p: np.ndarray, f: np.ndarray, J: np.ndarray, h: float) -> np.ndarray:
    """The increment h (I - h J)^{-1} f of a linearly implicit Euler step, batched.

    Links with p_l = 0 and f_l <= 0 stay put (the projection of eq. 4 holds them at zero), so the
    solve runs on the other links only.

    p: prices (B, L). f: velocities (B, L). J: Jacobians df/dp (B, L, L). h: time step.
    """
    B, L = p.shape
    free = (p > 0) | (f > 0)
    M = np.eye(L)[None] - h * J
    # decouple the held links: identity rows and columns, zero right-hand side
    M = np.where(free[:, :, None] & free[:, None, :], M, np.eye(L)[None])
    rhs = np.where(free, h * f, 0.0)
    try:
        return np.linalg.solve(M, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return rhs


@dataclass
class Equilibrium:
    """One equilibrium of a network.

    p: link prices. x: source rates (eq. 5 or 21). y: link loads (eq. 6).
    residual: equilibrium_residual at p (eq. 7). stable: True when locally stable for eq. 4,
    False when unstable, None when degenerate (a link with zero price and zero spare capacity).
    eigenvalues: of dy/dp restricted to the priced links. bottleneck: links with p_l > 0.
    """

    p: np.ndarray
    x: np.ndarray
    y: np.ndarray
    residual: float
    stable: bool | None
    eigenvalues: np.ndarray = field(repr=False)
    bottleneck: np.ndarray = field(repr=False)


def classify(net, p, scale: float | None = None) -> Equilibrium:
    """Build the Equilibrium record at p: rates, loads, residual and local stability (eq. 4).

    net: the network (or a ScaledView). p: an equilibrium price (L,).
    scale: price unit for deciding p_l > 0 (default: price_scale(net)).
    """
    net_, mu = _split(net)
    p = np.maximum(np.asarray(p, dtype=float), 0.0)
    s = price_scale(net) if scale is None else scale
    x = source_rates(net, p)
    y = net_.R @ x
    res = equilibrium_residual(net, p)
    active = p > 1e-9 * s
    degenerate = np.any(~active & (np.abs(1.0 - y / net_.c) < 1e-8))
    if active.any():
        A = load_jacobian(net, p)[np.ix_(active, active)]
        eig = np.linalg.eigvals(A)
        stable = bool(np.max(eig.real) < -1e-12 * max(1.0, np.max(np.abs(eig))))
    else:
        eig = np.zeros(0)
        stable = True
    return Equilibrium(p=p, x=x, y=y, residual=res, stable=None if degenerate else stable,
                       eigenvalues=eig, bottleneck=active)


def equilibria(net, starts=None, n_starts: int = 32, seed: int = 0, mu=None, settle_steps: int = 200,
               tol: float = 1e-10) -> list[Equilibrium]:
    """All equilibria (eq. 7) reachable from a set of starting prices, deduplicated and classified.

    From every start the semismooth Newton solve is run directly (it also finds unstable
    equilibria) and again after ``settle_steps`` steps of damped dual dynamics (eq. 4, with
    gain s/c_l for the price scale s, which has the same equilibria and reaches stable ones).

    net: the network (or a ScaledView). starts: optional array (K, L) of starting prices;
    default: n_starts prices drawn log-uniformly in [s/10, 10 s]^L around the price scale s,
    plus the uniform price s. n_starts: number of random starts when starts is None (>= 1).
    seed: seed of those draws. mu: optional scalers (eq. 21). settle_steps: dual-dynamics steps
    before the second Newton solve (0 to skip). tol: residual (eq. 7) an equilibrium must reach.
    Returns the equilibria sorted by price vector.
    """
    net_, mu0 = _split(net)
    mu = mu0 if mu is None else net_.check_scalers(mu)
    view = ScaledView(net_, mu) if mu is not None else net_
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol}")
    s = price_scale(view)
    if starts is None:
        if int(n_starts) < 1:
            raise ValueError(f"n_starts must be >= 1, got {n_starts}")
        rng = np.random.default_rng(seed)
        S = s * np.exp(rng.uniform(np.log(0.1), np.log(10.0), size=(int(n_starts), net_.L)))
        S = np.vstack([np.full(net_.L, s), S])
    else:
        S = np.asarray(starts, dtype=float)
        if S.ndim != 2 or S.shape[1] != net_.L or not np.all(np.isfinite(S)) or np.any(S < 0):
            raise ValueError(f"starts must be a (K, {net_.L}) array of finite prices >= 0")
    if int(settle_steps) < 0:
        raise ValueError(f"settle_steps must be >= 0, got {settle_steps}")
    found: list[np.ndarray] = []

    def add(p):
        if equilibrium_residual(view, p) > tol:
            return
        for f in found:
            if np.max(np.abs(f - p)) <= 1e-6 * (s + np.max(p)):
                return
        found.append(p)

    for p0 in S:
        p, ok = solve_equilibrium(view, p0, tol=1e-13)
        if ok:
            add(p)
        if settle_steps:
            _, P = dual_dynamics(view, p0, t_end=settle_steps * 0.5, dt=0.5, gain=s / net_.c,
                                 record_every=10 ** 9)
            p, ok = solve_equilibrium(view, P[-1], tol=1e-13)
            if ok:
                add(p)
    found.sort(key=lambda v: tuple(np.round(v / s, 9)))
    return [classify(view, p, scale=s) for p in found]
