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

__all__ = ["Equilibrium", "EquilibriumSet", "IncompleteEquilibria", "equilibria", "solve_equilibrium", "dual_dynamics", "price_scale",
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
    index: sign det(-dy/dp) on the priced links (+1 at every stable equilibrium), the equilibrium's
    index in the index theorem (see `equilibria`); None when p is not regular (degenerate, or that
    determinant is zero to rounding).
    """

    p: np.ndarray
    x: np.ndarray
    y: np.ndarray
    residual: float
    stable: bool | None
    eigenvalues: np.ndarray = field(repr=False)
    bottleneck: np.ndarray = field(repr=False)
    index: int | None = None


class EquilibriumSet(list):
    """The equilibria `equilibria` found (a list of Equilibrium), with its completeness check.

    index_sum: the sum of the equilibria's indices, or None when one of them is not regular.
    complete: False when the set is provably incomplete (index_sum != 1: the index theorem says
    the indices of all equilibria of a network whose equilibria are all regular sum to 1); None
    when the theorem does not apply (a non-regular equilibrium was found); True when the sum is 1,
    which is necessary for completeness but not sufficient (a missed pair of equilibria of
    indices +1 and -1 leaves the sum unchanged). rounds: search rounds run (each after the first
    adds random starts, because the previous one ended with index_sum != 1). starts: starting
    prices tried in all.
    """

    def __init__(self, items, index_sum, rounds: int, starts: int):
        super().__init__(items)
        self.index_sum = index_sum
        self.complete = None if index_sum is None else index_sum == 1
        self.rounds = rounds
        self.starts = starts


class IncompleteEquilibria(UserWarning):
    """`equilibria` ended with a set whose indices do not sum to 1: at least one equilibrium is missing."""


def classify(net, p, scale: float | None = None) -> Equilibrium:
    """Build the Equilibrium record at p: rates, loads, residual, local stability (eq. 4) and index.

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
    degenerate = bool(np.any(~active & (np.abs(1.0 - y / net_.c) < 1e-8)))
    index = None
    if active.any():
        A = load_jacobian(net, p)[np.ix_(active, active)]
        eig = np.linalg.eigvals(A)
        stable = bool(np.max(eig.real) < -1e-12 * max(1.0, np.max(np.abs(eig))))
        # det(-A) is the product of the -eigenvalues: real, its sign is the index; regular when
        # it is not zero to rounding (every eigenvalue away from 0 relative to the largest)
        if np.min(np.abs(eig)) > 1e-10 * np.max(np.abs(eig)):
            index = 1 if float(np.prod(-eig).real) > 0 else -1
    else:
        eig = np.zeros(0)
        stable = True
        index = 1
    return Equilibrium(p=p, x=x, y=y, residual=res, stable=None if degenerate else stable,
                       eigenvalues=eig, bottleneck=active, index=None if degenerate else index)


def _deflated_newton(net: Network, mu, p0, known: list, s: float, max_iter: int = 30):
    """Semismooth Newton on the deflated residual G(p) = Phi(p) prod_k (1 + s^2/|p - p_k|^2).

    Deflation (Farrell, Birkisson and Funke, SIAM J. Sci. Comput. 37(4), 2015, eq. 2.4 with
    power 2 and shift 1) keeps Phi's other zeros as zeros of G but makes every known
    equilibrium p_k a pole, so Newton from a start that led to p_k is pushed to another one.
    Returns (p, converged); converged means max|Phi| < 1e-9 at a point away from the known ones.
    """
    K = np.array(known, dtype=float)
    p = np.asarray(p0, dtype=float).copy()

    def G(p):
        Phi, Jac = _fb(net, mu, p)
        d = (p[None, :] - K) / s                               # (k, L)
        n2 = np.maximum(np.sum(d * d, axis=1), 1e-300)
        m = float(np.prod(1.0 + 1.0 / n2))
        # d log m / dp = sum_k -2 d_k / (s n2_k (1 + n2_k))
        g = np.sum(-2.0 * d / (s * (n2 * (1.0 + n2))[:, None]), axis=0)
        return Phi, m * Phi, m * (Jac + np.outer(Phi, g))

    try:
        Phi, Gv, JG = G(p)
        for _ in range(max_iter):
            if np.max(np.abs(Phi)) < 1e-9:
                break
            d = np.linalg.lstsq(JG, -Gv, rcond=None)[0]
            if not np.all(np.isfinite(d)):
                return p, False
            merit = Gv @ Gv
            step = 1.0
            while step > 1e-4:          # a failing search gives up early: it is one of many
                pn = p + step * d
                Phin, Gn, JGn = G(pn)
                if np.isfinite(Gn @ Gn) and Gn @ Gn <= (1.0 - 1e-4 * step) * merit:
                    break
                step *= 0.5
            else:
                return p, False
            p, Phi, Gv, JG = pn, Phin, Gn, JGn
            if np.max(np.abs(p)) > 1e8 * s:
                return p, False
    except np.linalg.LinAlgError:
        return p, False
    ok = bool(np.max(np.abs(Phi)) < 1e-9) and bool(np.all(np.max(np.abs(K - p), axis=1) > 1e-6 * s))
    return p, ok


def _start_grid(L: int, s: float, n: int) -> np.ndarray:
    """Structured starts: the corners, edge midpoints and centre of the box [s/10, 10 s]^L in
    log price (3^L points) when 3^L <= n, else a scrambled-free Halton sequence of n points in it."""
    if 3 ** L <= n:
        g = np.array(np.meshgrid(*([np.array([-1.0, 0.0, 1.0])] * L), indexing="ij")).reshape(L, -1).T
    else:
        primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71]
        g = np.empty((n, L))
        for l in range(L):
            b = primes[l % len(primes)]
            for i in range(n):
                f, r, k = 1.0, 0.0, i + 1 + (l // len(primes)) * n
                while k > 0:
                    f /= b
                    r += f * (k % b)
                    k //= b
                g[i, l] = 2.0 * r - 1.0
    return s * np.power(10.0, g)


def equilibria(net, starts=None, n_starts: int = 32, seed: int = 0, mu=None, settle_steps: int = 200,
               tol: float = 1e-10, max_rounds: int | None = None, deflation: bool | None = None,
               on_incomplete: str | None = None) -> EquilibriumSet:
    """The equilibria (eq. 7) of a network, deduplicated, classified, with a completeness check.

    Search: from every start the semismooth Newton solve is run directly (it also finds unstable
    equilibria) and again after ``settle_steps`` steps of damped dual dynamics (eq. 4, with gain
    s/c_l for the price scale s, which has the same equilibria and reaches stable ones). Then,
    with ``deflation``, Newton is run again from each start on the residual deflated by every
    equilibrium found so far (`_deflated_newton`), repeatedly, until it finds no new one.

    Check: the index of a regular equilibrium (every link either priced or with spare capacity,
    and det(dy/dp) on the priced links nonzero) is sign det(-dy/dp) on its priced links: +1 at
    every stable equilibrium. By the index theorem of Tang, Wang, Low and Chiang (ref. [23] of the
    paper, "Equilibrium of heterogeneous congestion control: existence and uniqueness", IEEE/ACM
    ToN 2007: equilibria of almost every network are finite and odd in number and cannot all be
    stable unless unique), the indices of all equilibria of a network whose equilibria are all
    regular sum to 1. A round that ends with another sum has provably missed at least one
    equilibrium: a new round adds twice as many random starts as the last (up to ``max_rounds``
    rounds). If the sum is still not 1, ``on_incomplete`` says what happens: "warn"
    (IncompleteEquilibria warning), "raise" (RuntimeError) or "ignore"; the result's ``complete``
    is False either way.

    Guarantee: every returned point satisfies eq. 7 to ``tol`` and they are distinct. complete is
    False: provably incomplete; True: the index sum is 1, necessary but not sufficient (a missed
    pair of indices +1 and -1 is invisible to it; the structured and random starts and the
    deflation are what make that unlikely); None: a non-regular equilibrium was found, where the
    theorem says nothing.

    net: the network (or a ScaledView). starts: optional array (K, L) of starting prices;
    default: the uniform price s, a structured set (the 3^L points of {s/10, s, 10 s}^L when
    3^L <= n_starts, else n_starts Halton points in [s/10, 10 s]^L in log price), and n_starts
    prices drawn log-uniformly in [s/10, 10 s]^L. n_starts: number of random starts when starts
    is None (>= 1). seed: seed of those draws (and of later rounds'). mu: optional scalers
    (eq. 21). settle_steps: dual-dynamics steps before the second Newton solve (0 to skip).
    tol: residual (eq. 7) an equilibrium must reach. max_rounds: search rounds at most (>= 1;
    default 6, or 1 with explicit starts). deflation: run the deflated Newton solves (default on,
    off with explicit starts). on_incomplete: "warn", "raise" or "ignore" (default "warn", or
    "ignore" with explicit starts: polishing given prices, e.g. to follow one equilibrium, then
    returns what those starts reach and nothing else; ``complete`` still reports the check).
    Returns an EquilibriumSet (a list of Equilibrium sorted by price vector).
    """
    net_, mu0 = _split(net)
    mu = mu0 if mu is None else net_.check_scalers(mu)
    view = ScaledView(net_, mu) if mu is not None else net_
    explicit = starts is not None
    max_rounds, deflation, on_incomplete = _search_options(tol, explicit, max_rounds, deflation, on_incomplete,
                                                           settle_steps)
    search = _Search(view, net_, mu, tol, np.random.default_rng(seed))
    S, settle = search.first_starts(starts, n_starts)
    tried, rounds, n_more = 0, 0, max(int(n_starts), len(S))
    while True:
        rounds += 1
        tried += len(S)
        search.solve_from(S, settle, settle_steps)
        if deflation and search.found:
            search.deflate()
        total = search.index_sum()
        if total is None or total == 1 or rounds >= int(max_rounds):
            break
        n_more *= 2
        S = search.draw(n_more)
        settle = np.ones(len(S), dtype=bool)
    result = search.result(total, rounds, tried)
    if result.complete is False:
        msg = (f"equilibria: the indices of the {len(result)} equilibria found sum to {total}, not 1: "
               f"at least one equilibrium is missing after {rounds} rounds and {tried} starts "
               "(raise max_rounds or n_starts, or give starts)")
        if on_incomplete == "raise":
            raise RuntimeError(msg)
        if on_incomplete == "warn":
            import warnings

            warnings.warn(msg, IncompleteEquilibria, stacklevel=2)
    return result


def _search_options(tol, explicit: bool, max_rounds, deflation, on_incomplete, settle_steps):
    """equilibria()'s search options checked, with their defaults (which differ with
    explicit starts): (max_rounds, deflation, on_incomplete)."""
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol}")
    max_rounds = (1 if explicit else 6) if max_rounds is None else max_rounds
    deflation = (not explicit) if deflation is None else bool(deflation)
    on_incomplete = ("ignore" if explicit else "warn") if on_incomplete is None else on_incomplete
    if int(max_rounds) < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    if on_incomplete not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_incomplete must be 'warn', 'raise' or 'ignore', got {on_incomplete!r}")
    if int(settle_steps) < 0:
        raise ValueError(f"settle_steps must be >= 0, got {settle_steps}")
    return max_rounds, deflation, on_incomplete


class _Search:
    """The equilibria of one network found so far (distinct, each satisfying eq. 7 to
    ``tol``), their classification, and the ways of finding more."""

    def __init__(self, view, net_, mu, tol: float, rng):
        self.view, self.net_, self.mu, self.tol, self.rng = view, net_, mu, tol, rng
        self.s = price_scale(view)
        self.found: list[np.ndarray] = []
        self.records: dict[int, Equilibrium] = {}

    def draw(self, n):
        """n prices drawn log-uniformly in [s/10, 10 s]^L."""
        return self.s * np.exp(self.rng.uniform(np.log(0.1), np.log(10.0), size=(int(n), self.net_.L)))

    def first_starts(self, starts, n_starts):
        """The first round's starts, and which of them also get the dual dynamics: the
        structured starts get the direct Newton solve only (dual dynamics from 3^L more
        points would cost more than they find); the others get both."""
        s, L = self.s, self.net_.L
        if starts is None:
            if int(n_starts) < 1:
                raise ValueError(f"n_starts must be >= 1, got {n_starts}")
            S = np.vstack([np.full(L, s), _start_grid(L, s, int(n_starts)), self.draw(n_starts)])
        else:
            S = np.asarray(starts, dtype=float)
            if S.ndim != 2 or S.shape[1] != L or not np.all(np.isfinite(S)) or np.any(S < 0):
                raise ValueError(f"starts must be a (K, {L}) array of finite prices >= 0")
        settle = np.ones(len(S), dtype=bool)
        if starts is None:
            settle[1:1 + len(S) - 1 - int(n_starts)] = False
        return S, settle

    def add(self, p) -> bool:
        """Keep p if it is an equilibrium not found yet."""
        if equilibrium_residual(self.view, p) > self.tol:
            return False
        for f in self.found:
            if np.max(np.abs(f - p)) <= 1e-6 * (self.s + np.max(p)):
                return False
        self.found.append(p)
        return True

    def solve_from(self, S, settle, settle_steps: int) -> None:
        """Newton from every start, and again after the dual dynamics where ``settle``."""
        view, s = self.view, self.s
        for p0, settle_it in zip(S, settle):
            p, ok = solve_equilibrium(view, p0, tol=1e-13)
            if ok:
                self.add(p)
            if settle_steps and settle_it:
                _, P = dual_dynamics(view, p0, t_end=settle_steps * 0.5, dt=0.5, gain=s / self.net_.c,
                                     record_every=10 ** 9)
                p, ok = solve_equilibrium(view, P[-1], tol=1e-13)
                if ok:
                    self.add(p)

    def deflate(self) -> None:
        """Deflated solves from the uniform price and from just beside each equilibrium
        found (where a nearby one, e.g. the unstable partner of a stable one, is likeliest)."""
        s = self.s
        todo = [np.full(self.net_.L, s)] + [f * g for f in self.found for g in (1.1, 0.9)]
        while todo:
            q, ok = _deflated_newton(self.net_, self.mu, todo.pop(0), self.found, s)
            if ok:
                p, ok = solve_equilibrium(self.view, q, tol=1e-13)
                if ok and self.add(p):
                    todo += [p * 1.1, p * 0.9]

    def index_sum(self):
        """The sum of the indices of the equilibria found (None: one is not regular)."""
        total = 0
        for k, p in enumerate(self.found):
            if k not in self.records:
                self.records[k] = classify(self.view, p, scale=self.s)
            if self.records[k].index is None:
                return None
            total += self.records[k].index
        return total

    def result(self, total, rounds: int, tried: int) -> EquilibriumSet:
        """The equilibria found, sorted by price vector."""
        found, s = self.found, self.s
        order = sorted(range(len(found)), key=lambda k: tuple(np.round(found[k] / s, 9)))
        return EquilibriumSet([self.records.get(k) or classify(self.view, found[k], scale=s) for k in order],
                              total, rounds, tried)
