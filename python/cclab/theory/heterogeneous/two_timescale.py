"""Algorithm 2 (two-timescale control) and the random networks of Experiment 2.

Fast timescale: sources send at x_i = (U_i')^{-1}(q_i / mu_i) (Algorithm 2 step 1, eq. 22)
and links run the dual dynamics p' = y(p) - c (eq. 4) for T time units.
Slow timescale: every T, source i moves its scaler towards the ratio of its effective to its
common path price (Algorithm 2 step 2):

    mu_i <- mu_i + kappa_i ( (1/w_i) sum_l m_l^j(p_l) / sum_l p_l - mu_i ),

whose fixed point is eq. (26); there eq. (27) holds and x solves the weighted NUM of
eqs. (23)-(24) (Theorem 6). Algorithm 2 is printed for w = 1; the 1/w_i factor is eq. (26).
With ``asynchronous = r`` each source updates only with probability r per round (Experiment 2).

References: Tang, Wei, Low and Chiang, "Heterogeneous congestion control: efficiency,
fairness and design", section VI.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .equilibria import dual_dynamics, load_jacobian, rosenbrock_step
from .model import AlphaFair, Linear, Network, Power, ScaledView, _split, source_rates
from .welfare import _weights, num_optimum

__all__ = ["TwoTimescaleResult", "two_timescale", "mu_target", "random_network", "BatchResult",
           "two_timescale_batch", "slow_map_jacobian"]


@dataclass
class TwoTimescaleResult:
    """Trajectories of Algorithm 2.

    t: fast-timescale times (K,). p: prices at those times (K, L).
    t_slow: the times of the slow updates, 0, T, 2T, ... (S+1,). mu: scalers at those times (S+1, N),
    row k holding the value used during [kT, (k+1)T). x: rates at the end of each interval (S+1, N),
    row 0 at the starting prices. p_slow: prices at the slow times (S+1, L).
    """

    t: np.ndarray
    p: np.ndarray
    t_slow: np.ndarray
    mu: np.ndarray
    x: np.ndarray
    p_slow: np.ndarray


def _check_schedule(T, steps, asynchronous) -> None:
    """Validate Algorithm 2's round length T, number of rounds and update probability."""
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"T must be positive, got {T}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps}")
    if asynchronous is not None and not (0 < asynchronous <= 1):
        raise ValueError(f"asynchronous must be None or a probability in (0, 1], got {asynchronous}")


def mu_target(net: Network, p, w=None) -> np.ndarray:
    """(1/w_i) sum_l R_li m_l^j(p_l) / sum_l R_li p_l (eq. 26; Algorithm 2 step 2).

    net: the network. p: link prices (L,). w: optional weights (scalar or one per source).
    Sources whose path price sum_l p_l is zero get nan (no information to update on).
    """
    net, _ = _split(net)
    p = net.check_prices(p)
    w = _weights(net, w)
    M = net.mapping_values(p)
    num = np.einsum("li,il->i", net.R, M[net.protocol])
    den = net.RT @ p
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan) / w


def two_timescale(net: Network, w=None, kappa=0.5, T: float = 20.0, steps: int = 50, asynchronous=None,
                  p0=None, mu0=None, dt: float = 0.05, seed: int = 0, record_every: int = 1
                  ) -> TwoTimescaleResult:
    """Run Algorithm 2 (section VI-A) for ``steps`` slow rounds of length T.

    net: the network. w: target weights of eqs. (23)-(26) (scalar or one per source; default 1).
    kappa: step size kappa_i in (0, 1] (scalar or one per source).
    T: length of a fast-timescale round, time units of eq. (4) (> 0).
    steps: number of slow rounds (>= 1).
    asynchronous: None (every source updates every round) or the probability in (0, 1] with
        which each source updates in a round (Experiment 2).
    p0: starting prices (L,), default 1 on every link. mu0: starting scalers (N,), default 1.
    dt: time step of the fast dynamics (> 0). seed: seed of the asynchronous draws.
    record_every: keep every this many fast steps in the trajectory (>= 1).
    """
    net, _ = _split(net)
    w = _weights(net, w)
    kap = np.broadcast_to(np.asarray(kappa, dtype=float), (net.N,)).copy() if np.ndim(kappa) == 0 \
        else np.asarray(kappa, dtype=float)
    if kap.shape != (net.N,) or np.any(~np.isfinite(kap)) or np.any(kap <= 0) or np.any(kap > 1):
        raise ValueError(f"kappa must lie in (0, 1], as a scalar or one per source ({net.N})")
    _check_schedule(T, steps, asynchronous)
    p = np.ones(net.L) if p0 is None else net.check_prices(p0, "p0").copy()
    mu = np.ones(net.N) if mu0 is None else net.check_scalers(mu0, "mu0").copy()
    rng = np.random.default_rng(seed)
    ts, ps = [np.zeros(1)], [p[None, :].copy()]
    mus, xs, pslow = [mu.copy()], [], [p.copy()]
    xs.append(source_rates(net, p, mu))
    for k in range(int(steps)):
        t, P = dual_dynamics(ScaledView(net, mu), p, t_end=T, dt=dt, record_every=record_every)
        ts.append(k * T + t[1:])
        ps.append(P[1:])
        p = P[-1].copy()
        xs.append(source_rates(net, p, mu))
        target = mu_target(net, p, w)
        move = np.isfinite(target)
        if asynchronous is not None:
            move &= rng.random(net.N) < asynchronous
        mu = np.where(move, mu + kap * (np.where(move, target, mu) - mu), mu)
        mus.append(mu.copy())
        pslow.append(p.copy())
    return TwoTimescaleResult(t=np.concatenate(ts), p=np.vstack(ps), t_slow=np.arange(int(steps) + 1) * T,
                              mu=np.asarray(mus), x=np.asarray(xs), p_slow=np.asarray(pslow))


def random_network(rng: np.random.Generator, L: int = 5, N: int = 15, capacity=(1.0, 10.0),
                   exponent=(0.5, 5.0), utility=None) -> Network:
    """A random network of Experiment 2 (section VI-B).

    Capacities uniform in ``capacity``; two price mappings m^1(p) = p and m^2(p) = p^a with one a
    uniform in ``exponent`` per network; flows 1..L use links 1..L alone, every other flow uses
    each link with probability 1/2 (redrawn until it uses at least one); each flow picks
    protocol 1 or 2 with probability 1/2.

    rng: numpy Generator. L: links (>= 1). N: flows (>= L). capacity: (low, high), 0 < low <= high.
    exponent: (low, high) of a, 0 < low <= high. utility: callable rng -> Utility for each flow;
    default log x (AlphaFair(1, 1)), which the paper does not specify.
    """
    if int(L) < 1:
        raise ValueError(f"L must be >= 1, got {L}")
    if int(N) < L:
        raise ValueError(f"N must be >= L ({L}) so that flows 1..L can use links 1..L, got {N}")
    lo, hi = capacity
    if not (0 < lo <= hi):
        raise ValueError(f"capacity must be (low, high) with 0 < low <= high, got {capacity}")
    alo, ahi = exponent
    if not (0 < alo <= ahi):
        raise ValueError(f"exponent must be (low, high) with 0 < low <= high, got {exponent}")
    c = rng.uniform(lo, hi, L)
    a = rng.uniform(alo, ahi)
    routes = [[l] for l in range(L)]
    for _ in range(N - L):
        while True:
            r = np.flatnonzero(rng.random(L) < 0.5)
            if r.size:
                break
        routes.append(list(r))
    proto = rng.integers(0, 2, N)
    utils = [utility(rng) if utility is not None else AlphaFair(1.0, 1.0) for _ in range(N)]
    groups = [[i for i in range(N) if proto[i] == j] for j in range(2)]
    if not groups[0] or not groups[1]:             # both protocols present keeps J = 2
        k = int(rng.integers(0, N))
        proto[k] = 1 - proto[k]
        groups = [[i for i in range(N) if proto[i] == j] for j in range(2)]
    return Network(c, [[routes[i] for i in g] for g in groups], [Linear(1.0), Power(a=a)],
                   [[utils[i] for i in g] for g in groups], names=["p", f"p^{a:.2f}"])


@dataclass
class BatchResult:
    """Slow-timescale trajectories of Algorithm 2 for a batch of B networks.

    t_slow: times of the slow updates (S+1,). p: prices at those times (B, S+1, L).
    mu: scalers in force from those times (B, S+1, N). x: rates at those times (B, S+1, N).
    """

    t_slow: np.ndarray
    p: np.ndarray
    mu: np.ndarray
    x: np.ndarray


def two_timescale_batch(nets: Sequence[Network], w=None, kappa=0.5, T: float = 5.0, steps: int = 100,
                        asynchronous=None, p0=None, mu0=None, dt: float = 0.1, seed: int = 0) -> BatchResult:
    """Algorithm 2 on many networks at once, vectorised over the batch (for Experiment 2's trials).

    Same dynamics and update as :func:`two_timescale` (eq. 4 on the fast timescale, Algorithm 2
    step 2 / eq. 26 on the slow one), with the same time stepping, but only the prices at the
    slow times are kept. All networks must have the same numbers of links, sources and protocols,
    power-law mappings (Power or Linear) and alpha-fair utilities.

    nets: the networks (B >= 1). w: weights, scalar or (B, N) (default 1). kappa: step in (0, 1].
    T: round length (> 0). steps: rounds (>= 1). asynchronous: None or update probability in (0, 1].
    p0: starting prices (B, L), default 1. mu0: starting scalers (B, N), default 1.
    dt: fast time step (> 0). seed: seed of the asynchronous draws.
    """
    nets = _same_shaped(nets)
    if not (0 < kappa <= 1):
        raise ValueError(f"kappa must lie in (0, 1], got {kappa}")
    _check_schedule(T, steps, asynchronous)
    if not (dt > 0):
        raise ValueError(f"dt must be positive, got {dt}")
    st = _Stacked(nets)
    W, p, mu = st.start(w, p0, mu0)
    rng = np.random.default_rng(seed)
    n_fast = max(1, int(np.ceil(T / dt - 1e-9)))
    h = T / n_fast
    P, MU, X = [p.copy()], [mu.copy()], [st.rates(p, mu)[2]]
    for _ in range(int(steps)):
        for _ in range(n_fast):
            p = st.fast_step(p, mu, h)
        target = st.target(p, W)
        move = np.isfinite(target)
        if asynchronous is not None:
            move &= rng.random((st.B, st.N)) < asynchronous
        X.append(st.rates(p, mu)[2])
        mu = np.where(move, mu + kappa * (np.where(move, target, mu) - mu), mu)
        P.append(p.copy())
        MU.append(mu.copy())
    return BatchResult(t_slow=np.arange(int(steps) + 1) * T, p=np.stack(P, axis=1), mu=np.stack(MU, axis=1),
                       x=np.stack(X, axis=1))


def _same_shaped(nets) -> list:
    """The networks as a list, checked: the same numbers of links, sources and protocols,
    power-law mappings and alpha-fair utilities only."""
    nets = list(nets)
    if not nets or not all(isinstance(n, Network) for n in nets):
        raise ValueError("nets must be a non-empty list of Network")
    L, N, J = nets[0].L, nets[0].N, nets[0].J
    for n in nets:
        if (n.L, n.N, n.J) != (L, N, J):
            raise ValueError("nets must all have the same numbers of links, sources and protocols")
        if not (n._all_power and n._all_alpha_fair):
            raise ValueError("nets must use power-law mappings and alpha-fair utilities only")
    return nets


class _Stacked:
    """B networks of one shape, their arrays stacked along a first axis, for Algorithm 2's
    dynamics vectorised over the batch."""

    def __init__(self, nets: list):
        self.B, self.L, self.N, J = len(nets), nets[0].L, nets[0].N, nets[0].J
        self.K = np.stack([n._pk for n in nets])                    # (B, J, L)
        self.A = np.stack([n._pa for n in nets])
        self.R = np.stack([n.R for n in nets])                      # (B, L, N)
        onehot = np.stack([(n.protocol[None, :] == np.arange(J)[:, None]).astype(float) for n in nets])
        self.Rj = self.R[:, None, :, :] * onehot[:, :, None, :]     # (B, J, L, N)
        self.RjT = np.ascontiguousarray(self.Rj.transpose(0, 1, 3, 2))
        self.c = np.stack([n.c for n in nets])
        self.al = np.stack([n._alpha for n in nets])
        self.be = np.stack([n._beta for n in nets])
        self.cap = np.stack([n.rate_cap for n in nets])

    def start(self, w, p0, mu0):
        """The weights (B, N), starting prices (B, L) and scalers (B, N), checked."""
        B, L, N = self.B, self.L, self.N
        W = np.ones((B, N)) if w is None else np.broadcast_to(np.asarray(w, float), (B, N)).copy()
        if np.any(~np.isfinite(W)) or np.any(W <= 0):
            raise ValueError("w must be positive and finite")
        p = np.ones((B, L)) if p0 is None else np.asarray(p0, float).copy()
        if p.shape != (B, L) or np.any(~np.isfinite(p)) or np.any(p < 0):
            raise ValueError(f"p0 must be a ({B}, {L}) array of finite prices >= 0")
        mu = np.ones((B, N)) if mu0 is None else np.asarray(mu0, float).copy()
        if mu.shape != (B, N) or np.any(~np.isfinite(mu)) or np.any(mu <= 0):
            raise ValueError(f"mu0 must be a ({B}, {N}) array of positive scalers")
        return W, p, mu

    def rates(self, p, mu):
        """The effective prices m^j(p), the sources' scaled prices q (floored) and rates x."""
        M = self.K * np.power(p[:, None, :], self.A)
        q = np.einsum("bjl,bjln->bn", M, self.Rj) / mu
        qs = np.maximum(q, 1e-300)
        with np.errstate(over="ignore", divide="ignore"):
            x = np.power(self.be / qs, 1.0 / self.al)
        return M, qs, x

    def fast_step(self, p, mu, h: float):
        """One Rosenbrock step of length h of the price dynamics (eq. 4)."""
        K, A, Rj = self.K, self.A, self.Rj
        M, qs, x = self.rates(p, mu)
        capped = x >= self.cap
        x = np.minimum(x, self.cap)
        dx = np.where(capped, 0.0, -x / (self.al * qs)) / mu
        with np.errstate(divide="ignore", invalid="ignore"):
            Dm = np.where(A == 1.0, K, K * A * np.power(p[:, None, :], A - 1.0))
        Dm = np.where(np.isfinite(Dm), Dm, 0.0)
        # dy/dp: J_lk = sum_j sum_n Rj_ln dx_n Rj_kn m_k^j'(p_k), as batched matrix products
        J = (((Rj * dx[:, None, None, :]) @ self.RjT) * Dm[:, :, None, :]).sum(axis=1)
        f = np.einsum("bln,bn->bl", self.R, x) - self.c
        return np.maximum(p + rosenbrock_step(p, f, J, h), 0.0)

    def target(self, p, W):
        """Algorithm 2 step 2's scaler target at prices p (NaN where the source sees no price)."""
        M = self.K * np.power(p[:, None, :], self.A)
        num = np.einsum("bjl,bjln->bn", M, self.Rj)
        den = np.einsum("bl,bln->bn", p, self.R)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan) / W


def slow_map_jacobian(net: Network, w=None) -> np.ndarray:
    """Jacobian G'(mu*) of Algorithm 2's slow map G(mu) = mu_target(p(mu)) at its fixed point.

    p(mu) is the equilibrium (eq. 7) under the scalers mu that lies next to the weighted NUM
    optimum, and mu* is given by eq. (26) (Theorem 6). By the implicit function theorem on the
    priced links, dp/dmu = -(dy/dp)^{-1} dy/dmu. One round of Algorithm 2 with step kappa has the
    linearisation (1 - kappa) I + kappa G'(mu*), so the fixed point attracts for small kappa when
    every eigenvalue of G' has real part below 1, and for kappa = 1 when all lie in the unit disc.
    Theorem 6 guarantees the fixed point; this tells whether Algorithm 2 actually reaches it.

    net: the network. w: weights of eqs. (23)-(26) (scalar or one per source; default 1).
    """
    net, _ = _split(net)
    w = _weights(net, w)
    opt = num_optimum(net, w=w)
    p = opt.p
    mu = mu_target(net, p, w)
    act = p > 1e-12 * max(1.0, float(np.max(p)))
    M = net.mapping_values(p)
    q = np.einsum("li,il->i", net.R, M[net.protocol])
    # dx_i/dmu_i for x_i = (U_i')^{-1}(q_i / mu_i): slope at q/mu times -q/mu^2
    dxdmu = net.rate_slopes(q / mu) * (-q / mu ** 2)
    dydmu = net.R * dxdmu[None, :]                               # (L, N)
    A = load_jacobian(ScaledView(net, mu), p)
    dpdmu = np.zeros((net.L, net.N))
    dpdmu[act] = -np.linalg.solve(A[np.ix_(act, act)], dydmu[act])
    # d target_i / d p_l = R_li (m_l'(p_l) sum_k R_ki p_k - sum_k R_ki m_k(p_k)) / (sum_k R_ki p_k)^2 / w_i
    Dm = net.mapping_derivatives(p)[net.protocol]                # (N, L)
    sp = net.RT @ p
    dtdp = net.RT * (Dm * sp[:, None] - q[:, None]) / (sp ** 2 * w)[:, None]
    return dtdp @ dpdmu
