"""The network model (c, m, R, U) of Tang, Wei, Low and Chiang, "Heterogeneous
congestion control: efficiency, fairness and design" (section IV).

A network has L links with capacities c_l, J protocols, and N^j sources of
protocol j. Source (j, i) uses the links of column i of the routing matrix R^j,
reacts to the effective price m_l^j(p_l) of each link on its path (eq. 3) and
sends at the rate x_i^j = (U_i^j)'^{-1}(q_i^j) (eq. 5), or at
(U_i^j)'^{-1}(q_i^j / mu_i^j) when it scales its prices by mu_i^j (eqs. 21-22).

Internally the sources of all protocols are laid side by side in the order
(j = 1, i = 1..N^1), (j = 2, ...), ..., as in the paper's R = [R^1 ... R^J].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import brentq

__all__ = [
    "PriceMapping", "Linear", "Power", "Red", "CustomMapping",
    "Utility", "AlphaFair", "CustomUtility",
    "Network", "effective_prices", "aggregate_prices", "source_rates", "link_loads",
    "equilibrium_residual",
]

# ---------------------------------------------------------------------------
# price mapping functions m_l^j (section IV-A, assumption A1; RED: eq. 2)
# ---------------------------------------------------------------------------


class PriceMapping:
    """A price mapping m: p -> effective price, continuous, non-decreasing, m(0) = 0 (A1)."""

    def __call__(self, p):  # pragma: no cover - abstract
        raise NotImplementedError

    def derivative(self, p):
        """dm/dp at p (central difference unless a subclass knows it exactly)."""
        p = np.asarray(p, dtype=float)
        h = 1e-7 * np.maximum(np.abs(p), 1e-3)
        lo = np.maximum(p - h, 0.0)
        return (self(p + h) - self(lo)) / (p + h - lo)

    def inverse(self, v: float) -> float:
        """The smallest p >= 0 with m(p) = v (bracketing root search unless known exactly).

        v: an effective price in the range of the mapping.
        """
        if v < 0:
            raise ValueError(f"v must be >= 0 to invert a price mapping, got {v}")
        if v == 0:
            return 0.0
        hi = 1.0
        while float(self(hi)) < v:
            hi *= 2.0
            if hi > 1e12:
                raise ValueError(f"v={v} is outside the range of the price mapping {self!r}")
        return brentq(lambda s: float(self(s)) - v, 0.0, hi, xtol=1e-15, rtol=1e-14)


@dataclass(frozen=True)
class Power(PriceMapping):
    """m(p) = k p^a: a power law (a = 1 is the linear map of Experiment 1; a in [0.5, 5] in Experiment 2).

    k: positive scale. a: positive exponent.
    """

    a: float = 1.0
    k: float = 1.0

    def __post_init__(self):
        if not (np.isfinite(self.a) and self.a > 0):
            raise ValueError(f"a (power-law exponent) must be positive and finite, got {self.a}")
        if not (np.isfinite(self.k) and self.k > 0):
            raise ValueError(f"k (power-law scale) must be positive and finite, got {self.k}; "
                             "a mapping must be increasing")

    def __call__(self, p):
        return self.k * np.power(np.maximum(p, 0.0), self.a)

    def derivative(self, p):
        p = np.maximum(np.asarray(p, dtype=float), 0.0)
        if self.a == 1.0:
            return np.full_like(p, self.k)
        with np.errstate(divide="ignore"):
            return self.k * self.a * np.power(p, self.a - 1.0)

    def inverse(self, v: float) -> float:
        if v < 0:
            raise ValueError(f"v must be >= 0 to invert a price mapping, got {v}")
        return (v / self.k) ** (1.0 / self.a)


def Linear(k: float = 1.0) -> Power:
    """m(p) = k p, the linear price mapping m_l^j(p) = k_l^j p of Experiment 1 (section VI-B).

    k: positive slope.
    """
    return Power(a=1.0, k=k)


@dataclass(frozen=True)
class Red(PriceMapping):
    """The RED marking profile of eq. (2) as a function of the queue length b (the common price).

    p(b) = 0 for b <= b_min, (1/K)(b - b_min)/(b_max - b_min) in between, 1/K for b >= b_max.
    It is non-decreasing but flat outside [b_min, b_max], so it meets A1 only in between.

    b_min: queue length where marking starts (>= 0). b_max: where it saturates (> b_min).
    K: 1/K is the largest marking probability (K >= 1).
    """

    b_min: float
    b_max: float
    K: float

    def __post_init__(self):
        if not (self.b_min >= 0):
            raise ValueError(f"b_min must be >= 0, got {self.b_min}")
        if not (self.b_max > self.b_min):
            raise ValueError(f"b_max must exceed b_min ({self.b_min}), got {self.b_max}")
        if not (self.K >= 1):
            raise ValueError(f"K must be >= 1 (1/K is a probability), got {self.K}")

    def __call__(self, p):
        b = np.asarray(p, dtype=float)
        return np.clip((b - self.b_min) / (self.b_max - self.b_min), 0.0, 1.0) / self.K

    def derivative(self, p):
        b = np.asarray(p, dtype=float)
        inside = (b > self.b_min) & (b < self.b_max)
        return np.where(inside, 1.0 / (self.K * (self.b_max - self.b_min)), 0.0)

    def inverse(self, v: float) -> float:
        if not (0 <= v <= 1.0 / self.K):
            raise ValueError(f"v must lie in [0, 1/K={1 / self.K}] to invert a RED profile, got {v}")
        if v == 0:
            return 0.0
        return self.b_min + v * self.K * (self.b_max - self.b_min)


class CustomMapping(PriceMapping):
    """Any continuous non-decreasing m with m(0) = 0, given as a callable.

    func: p -> m(p), applied to numpy arrays (it is vectorised with np.vectorize if it fails on one).
    derivative: optional p -> m'(p); a central difference is used when it is omitted.
    check_up_to: the mapping is checked on [0, check_up_to] (m(0) = 0, finite, non-decreasing, not constant).
    """

    def __init__(self, func: Callable, derivative: Callable | None = None, check_up_to: float = 100.0):
        if not callable(func):
            raise ValueError(f"func must be callable, got {type(func).__name__}")
        if derivative is not None and not callable(derivative):
            raise ValueError("derivative must be callable or None")
        self._func = func
        self._deriv = derivative
        grid = np.concatenate([[0.0], np.geomspace(1e-6, check_up_to, 400)])
        try:
            vals = np.asarray(self(grid), dtype=float)
        except Exception as exc:  # noqa: BLE001 - turned into the documented error
            raise ValueError(f"func could not be evaluated on prices in [0, {check_up_to}]: {exc}") from None
        if vals.shape != grid.shape or not np.all(np.isfinite(vals)):
            raise ValueError("func must return one finite value per price")
        if abs(vals[0]) > 1e-12:
            raise ValueError(f"func must satisfy m(0) = 0 (assumption A1), got m(0) = {vals[0]}")
        drops = np.diff(vals) < -1e-12 * np.maximum(1.0, np.abs(vals[:-1]))
        if np.any(drops):
            where = grid[1:][drops][0]
            raise ValueError(f"func must be increasing (assumption A1) but decreases near p = {where:.3g}")
        if vals[-1] <= 0:
            raise ValueError("func must be increasing (assumption A1) but is constant on the checked range")

    def __call__(self, p):
        p = np.asarray(p, dtype=float)
        try:
            out = np.asarray(self._func(p), dtype=float)
            if out.shape == p.shape:
                return out
        except Exception:  # noqa: BLE001 - fall back to element-wise evaluation
            pass
        return np.vectorize(lambda s: float(self._func(float(s))))(p)

    def derivative(self, p):
        if self._deriv is None:
            return super().derivative(p)
        return np.asarray(np.vectorize(lambda s: float(self._deriv(float(s))))(np.asarray(p, float)))

    def __repr__(self):
        return f"CustomMapping({getattr(self._func, '__name__', self._func)!r})"


def _as_mapping(obj, where: str) -> PriceMapping:
    if isinstance(obj, PriceMapping):
        return obj
    if callable(obj):
        return CustomMapping(obj)
    raise ValueError(f"{where} must be a PriceMapping or a callable, got {type(obj).__name__}")


# ---------------------------------------------------------------------------
# utilities U_i^j (section IV-A, A1; weighted alpha-fair family of section VI-B)
# ---------------------------------------------------------------------------


class Utility:
    """A strictly concave increasing utility U with the inverse of its derivative (eq. 5)."""

    def value(self, x):  # pragma: no cover - abstract
        """U(x)."""
        raise NotImplementedError

    def derivative(self, x):  # pragma: no cover - abstract
        """U'(x)."""
        raise NotImplementedError

    def rate(self, q):  # pragma: no cover - abstract
        """(U')^{-1}(q): the rate at aggregate price q > 0 (eq. 5)."""
        raise NotImplementedError

    def rate_derivative(self, q):
        """d rate / d q (central difference unless a subclass knows it exactly)."""
        q = np.asarray(q, dtype=float)
        h = 1e-6 * q
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return (self.rate(q + h) - self.rate(q - h)) / (2 * h)


@dataclass(frozen=True)
class AlphaFair(Utility):
    """Weighted alpha-fair utility of section VI-B (Mo and Walrand [19]).

    U(x) = beta x^(1-alpha) / (1-alpha) for alpha != 1, beta log x for alpha = 1;
    U'(x) = beta x^-alpha, so the rate at price q is (beta / q)^(1/alpha).

    alpha: positive fairness exponent. beta: positive weight.
    """

    alpha: float = 1.0
    beta: float = 1.0

    def __post_init__(self):
        if not (np.isfinite(self.alpha) and self.alpha > 0):
            raise ValueError(f"alpha must be positive and finite, got {self.alpha}")
        if not (np.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"beta must be positive and finite, got {self.beta}")

    def value(self, x):
        x = np.asarray(x, dtype=float)
        if self.alpha == 1.0:
            return self.beta * np.log(x)
        return self.beta * np.power(x, 1.0 - self.alpha) / (1.0 - self.alpha)

    def derivative(self, x):
        return self.beta * np.power(np.asarray(x, dtype=float), -self.alpha)

    def rate(self, q):
        return np.power(self.beta / np.asarray(q, dtype=float), 1.0 / self.alpha)

    def rate_derivative(self, q):
        q = np.asarray(q, dtype=float)
        return -self.rate(q) / (self.alpha * q)


class CustomUtility(Utility):
    """Any strictly concave increasing utility given by callables.

    value: x -> U(x). derivative: x -> U'(x). inverse_derivative: q -> (U')^{-1}(q).
    """

    def __init__(self, value: Callable, derivative: Callable, inverse_derivative: Callable):
        for name, f in (("value", value), ("derivative", derivative),
                        ("inverse_derivative", inverse_derivative)):
            if not callable(f):
                raise ValueError(f"{name} must be callable, got {type(f).__name__}")
        self._u, self._du, self._inv = value, derivative, inverse_derivative
        qs = np.array([0.1, 1.0, 10.0])
        xs = np.asarray([float(inverse_derivative(q)) for q in qs])
        if not np.all(np.isfinite(xs)) or np.any(np.diff(xs) >= 0):
            raise ValueError("inverse_derivative must be finite and strictly decreasing "
                             "(U strictly concave, assumption A1)")
        back = np.asarray([float(derivative(x)) for x in xs])
        if not np.allclose(back, qs, rtol=1e-6):
            raise ValueError("inverse_derivative must invert derivative: U'((U')^{-1}(q)) != q")

    def _map(self, f, a):
        a = np.asarray(a, dtype=float)
        try:
            out = np.asarray(f(a), dtype=float)
            if out.shape == a.shape:
                return out
        except Exception:  # noqa: BLE001
            pass
        return np.vectorize(lambda s: float(f(float(s))))(a)

    def value(self, x):
        return self._map(self._u, x)

    def derivative(self, x):
        return self._map(self._du, x)

    def rate(self, q):
        return self._map(self._inv, q)


def _as_utility(obj, where: str) -> Utility:
    if isinstance(obj, Utility):
        return obj
    raise ValueError(f"{where} must be a Utility (AlphaFair or CustomUtility), got {type(obj).__name__}")


# ---------------------------------------------------------------------------
# the network (c, m, R, U)
# ---------------------------------------------------------------------------


class Network:
    """A network (c, m, R, U) shared by J protocols (section IV-A).

    capacities: the L link capacities c_l, all positive.
    routing: one entry per protocol j: an L x N^j 0/1 numpy array R^j, or a list of N^j routes,
        each a list of link indices (0-based). Every source must use at least one link.
    mappings: one entry per protocol j: a single PriceMapping (or callable) used on every link,
        or a list of L of them (m_l^j). A plain callable is wrapped in CustomMapping and checked.
    utilities: one entry per protocol j: a single Utility for all its sources, or a list of N^j.
    names: optional protocol names (for tables); default "1", "2", ...
    """

    def __init__(self, capacities, routing, mappings, utilities, names: Sequence[str] | None = None):
        c = np.asarray(capacities, dtype=float).ravel()
        if c.size == 0:
            raise ValueError("capacities must list at least one link")
        if not np.all(np.isfinite(c)) or np.any(c <= 0):
            bad = int(np.flatnonzero(~(np.isfinite(c) & (c > 0)))[0])
            raise ValueError(f"capacities must be positive and finite; link {bad} has {c[bad]}")
        L = c.size
        if isinstance(routing, np.ndarray) or not isinstance(routing, (list, tuple)) or len(routing) == 0:
            raise ValueError("routing must be a non-empty list with one routing matrix (or route list) "
                             "per protocol")
        J = len(routing)
        for name, arg in (("mappings", mappings), ("utilities", utilities)):
            if not isinstance(arg, (list, tuple)) or len(arg) != J:
                raise ValueError(f"{name} must be a list with one entry per protocol ({J} protocols)")
        blocks = [self._routing_block(r, L, j) for j, r in enumerate(routing)]
        self.c = c
        self.L = L
        self.J = J
        self.R_by_protocol = blocks
        self.R = np.hstack(blocks)
        self.N = self.R.shape[1]
        self.counts = [b.shape[1] for b in blocks]
        self.protocol = np.concatenate([np.full(n, j, dtype=int) for j, n in enumerate(self.counts)])
        self.index_in_protocol = np.concatenate([np.arange(n) for n in self.counts]).astype(int)
        self.names = list(names) if names is not None else [str(j + 1) for j in range(J)]
        if len(self.names) != J:
            raise ValueError(f"names must have one entry per protocol ({J}), got {len(self.names)}")

        self.mappings: list[list[PriceMapping]] = []
        for j, m in enumerate(mappings):
            if isinstance(m, (list, tuple)):
                if len(m) != L:
                    raise ValueError(f"mappings[{j}] must give one mapping per link ({L}), got {len(m)}")
                self.mappings.append([_as_mapping(mm, f"mappings[{j}][{l}]") for l, mm in enumerate(m)])
            else:
                mm = _as_mapping(m, f"mappings[{j}]")
                self.mappings.append([mm] * L)

        self.utilities: list[Utility] = []
        for j, u in enumerate(utilities):
            if isinstance(u, (list, tuple)):
                if len(u) != self.counts[j]:
                    raise ValueError(f"utilities[{j}] must give one utility per source of protocol {j} "
                                     f"({self.counts[j]}), got {len(u)}")
                self.utilities.extend(_as_utility(uu, f"utilities[{j}][{i}]") for i, uu in enumerate(u))
            else:
                uu = _as_utility(u, f"utilities[{j}]")
                self.utilities.extend([uu] * self.counts[j])
        self._compile()

    @staticmethod
    def _routing_block(r, L: int, j: int) -> np.ndarray:
        if isinstance(r, np.ndarray):
            if r.ndim != 2 or r.shape[0] != L:
                raise ValueError(f"routing[{j}] must be an L x N^j matrix with one row per link ({L}), "
                                 f"got shape {r.shape}")
            if not np.all((r == 0) | (r == 1)):
                raise ValueError(f"routing[{j}] must contain only 0 and 1")
            R = r.astype(float)
        else:
            if not isinstance(r, (list, tuple)) or len(r) == 0:
                raise ValueError(f"routing[{j}] must be an L x N numpy array or a non-empty list of routes")
            R = np.zeros((L, len(r)))
            for i, route in enumerate(r):
                for l in np.atleast_1d(np.asarray(route)).ravel():
                    if not float(l).is_integer() or not (0 <= int(l) < L):
                        raise ValueError(f"routing[{j}] route {i} uses link {l}, which is not one of "
                                         f"the {L} links 0..{L - 1}")
                    R[int(l), i] = 1.0
        if R.shape[1] == 0:
            raise ValueError(f"routing[{j}] has no sources")
        empty = np.flatnonzero(R.sum(axis=0) == 0)
        if empty.size:
            raise ValueError(f"routing[{j}] source {int(empty[0])} uses no link")
        return R

    def _compile(self) -> None:
        """Arrays for the fast paths: power-law mappings and alpha-fair utilities."""
        J, L = self.J, self.L
        self._pk = np.ones((J, L))
        self._pa = np.ones((J, L))
        self._power = np.zeros((J, L), dtype=bool)
        for j in range(J):
            for l, m in enumerate(self.mappings[j]):
                if isinstance(m, Power):
                    self._pk[j, l], self._pa[j, l], self._power[j, l] = m.k, m.a, True
        self._all_power = bool(self._power.all())
        self._alpha = np.ones(self.N)
        self._beta = np.ones(self.N)
        af = [isinstance(u, AlphaFair) for u in self.utilities]
        self._all_alpha_fair = all(af)
        for i, u in enumerate(self.utilities):
            if af[i]:
                self._alpha[i], self._beta[i] = u.alpha, u.beta
        self.RT = self.R.T.copy()
        # the per-source rows of mapping values: E[i, l] = m_l^{j(i)}(p_l) is M[protocol[i], l]
        self.source_of = [np.flatnonzero(self.protocol == j) for j in range(J)]
        # a rate cap that no equilibrium reaches (x_i <= c_l on its route); keeps solvers finite
        caps = np.where(self.R > 0, self.c[:, None], np.inf).min(axis=0)
        self.rate_cap = 10.0 * caps

    # -- vectorised evaluations ------------------------------------------------------
    def mapping_values(self, p) -> np.ndarray:
        """The J x L matrix M[j, l] = m_l^j(p_l).

        p: link prices, shape (L,).
        """
        p = np.maximum(np.asarray(p, dtype=float), 0.0)
        if self._all_power:
            return self._pk * np.power(p[None, :], self._pa)
        M = np.empty((self.J, self.L))
        for j in range(self.J):
            for l in range(self.L):
                M[j, l] = self._pk[j, l] * p[l] ** self._pa[j, l] if self._power[j, l] \
                    else float(self.mappings[j][l](p[l]))
        return M

    def mapping_derivatives(self, p) -> np.ndarray:
        """The J x L matrix of m_l^j'(p_l).

        p: link prices, shape (L,).
        """
        p = np.maximum(np.asarray(p, dtype=float), 0.0)
        if self._all_power:
            with np.errstate(divide="ignore", invalid="ignore"):
                D = self._pk * self._pa * np.power(p[None, :], self._pa - 1.0)
            D = np.where(self._pa == 1.0, self._pk, D)
            # p^a with a < 1 has an infinite slope at p = 0; the solvers only meet it on unpriced
            # links, where a zero keeps their Jacobians finite
            return np.where(np.isfinite(D), D, 0.0)
        D = np.empty((self.J, self.L))
        for j in range(self.J):
            for l in range(self.L):
                D[j, l] = float(self.mappings[j][l].derivative(np.asarray(p[l])))
        return np.where(np.isfinite(D), D, 0.0)

    def rates_from_prices(self, q, mu=None, cap: bool = False) -> np.ndarray:
        """x_i = (U_i')^{-1}(q_i / mu_i) (eqs. 5 and 21) for aggregate prices q.

        q: aggregate prices, shape (N,). mu: optional price scalers, shape (N,).
        cap: clip rates to ``rate_cap`` (used by the solvers; no equilibrium reaches the cap).
        """
        q = np.asarray(q, dtype=float)
        if mu is not None:
            q = q / mu
        qs = np.maximum(q, 1e-300)
        if self._all_alpha_fair:
            with np.errstate(over="ignore", divide="ignore"):
                x = np.power(self._beta / qs, 1.0 / self._alpha)
        else:
            x = np.array([float(u.rate(qq)) for u, qq in zip(self.utilities, qs)])
        if cap:
            x = np.minimum(x, self.rate_cap)
        return x

    def rate_slopes(self, q, mu=None, cap: bool = False) -> np.ndarray:
        """dx_i/dq_i at aggregate prices q (with respect to the unscaled q when mu is given).

        q: aggregate prices, shape (N,). mu: optional price scalers. cap: zero slope above the cap.
        """
        q = np.asarray(q, dtype=float)
        scale = np.ones_like(q) if mu is None else 1.0 / np.asarray(mu, dtype=float)
        qq = np.maximum(q * scale, 1e-300)
        if self._all_alpha_fair:
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                x = np.power(self._beta / qq, 1.0 / self._alpha)
                d = -x / (self._alpha * qq)
        else:
            x = np.array([float(u.rate(v)) for u, v in zip(self.utilities, qq)])
            d = np.array([float(u.rate_derivative(v)) for u, v in zip(self.utilities, qq)])
        if cap:
            d = np.where(x >= self.rate_cap, 0.0, d)
        return d * scale

    def utility_values(self, x) -> np.ndarray:
        """U_i(x_i) for every source.

        x: rates, shape (N,).
        """
        x = np.asarray(x, dtype=float)
        if self._all_alpha_fair:
            a, b = self._alpha, self._beta
            one = a == 1.0
            with np.errstate(divide="ignore"):
                return np.where(one, b * np.log(x), b * np.power(x, 1.0 - a) / np.where(one, 1.0, 1.0 - a))
        return np.array([float(u.value(v)) for u, v in zip(self.utilities, x)])

    def utility_derivatives(self, x) -> np.ndarray:
        """U_i'(x_i) for every source.

        x: rates, shape (N,).
        """
        x = np.asarray(x, dtype=float)
        if self._all_alpha_fair:
            return self._beta * np.power(x, -self._alpha)
        return np.array([float(u.derivative(v)) for u, v in zip(self.utilities, x)])

    def with_scalers(self, mu) -> "ScaledView":
        """This network with every source scaling its prices by mu_i (eq. 21)."""
        return ScaledView(self, mu)

    def homogeneous(self) -> "Network":
        """The same network with every mapping the identity (the NUM problem of eqs. 8-9)."""
        return Network(self.c, self.R_by_protocol, [Linear(1.0)] * self.J,
                       [list(self.utilities[s] for s in self.source_of[j]) for j in range(self.J)],
                       names=self.names)

    def check_prices(self, p, what: str = "p") -> np.ndarray:
        """p as a float array of shape (L,), or ValueError naming ``what``."""
        p = np.asarray(p, dtype=float)
        if p.shape != (self.L,):
            raise ValueError(f"{what} must have one price per link ({self.L}), got shape {p.shape}")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError(f"{what} must be finite and >= 0")
        return p

    def check_scalers(self, mu, what: str = "mu") -> np.ndarray | None:
        """mu as a positive float array of shape (N,) (or None), or ValueError naming ``what``."""
        if mu is None:
            return None
        mu = np.asarray(mu, dtype=float)
        if mu.shape != (self.N,):
            raise ValueError(f"{what} must have one entry per source ({self.N}), got shape {mu.shape}")
        if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
            raise ValueError(f"{what} must be positive and finite")
        return mu

    def __repr__(self):
        return f"Network(L={self.L}, J={self.J}, sources={self.counts})"


class ScaledView:
    """A network whose sources scale their prices by mu (eq. 21); the solvers accept it like a Network."""

    def __init__(self, net: Network, mu):
        self.net = net
        self.mu = net.check_scalers(mu)


def _split(net) -> tuple[Network, np.ndarray | None]:
    if isinstance(net, ScaledView):
        return net.net, net.mu
    if isinstance(net, Network):
        return net, None
    raise ValueError(f"net must be a Network, got {type(net).__name__}")


def effective_prices(net: Network, p) -> np.ndarray:
    """The J x L matrix of effective prices m_l^j(p_l) (section IV-A).

    net: the network. p: link prices (L,).
    """
    net, _ = _split(net)
    return net.mapping_values(net.check_prices(p))


def aggregate_prices(net: Network, p, mu=None) -> np.ndarray:
    """q_i^j = sum_l R_li^j m_l^j(p_l) (eq. 3), divided by mu_i^j when scalers are given (eq. 21).

    net: the network (or a ScaledView). p: link prices (L,). mu: optional scalers (N,).
    """
    net, mu0 = _split(net)
    mu = net.check_scalers(mu) if mu is not None else mu0
    M = net.mapping_values(net.check_prices(p))
    q = np.einsum("li,il->i", net.R, M[net.protocol])
    return q if mu is None else q / mu


def source_rates(net: Network, p, mu=None) -> np.ndarray:
    """x_i^j(p) = (U_i^j)'^{-1}(q_i^j / mu_i^j) (eqs. 5, 21, 22).

    net: the network (or a ScaledView). p: link prices (L,). mu: optional scalers (N,).
    """
    net_, mu0 = _split(net)
    mu = net_.check_scalers(mu) if mu is not None else mu0
    return net_.rates_from_prices(aggregate_prices(net_, p), mu)


def link_loads(net: Network, p, mu=None) -> np.ndarray:
    """y(p) = R x(p) (eq. 6).

    net: the network (or a ScaledView). p: link prices (L,). mu: optional scalers (N,).
    """
    net_, _ = _split(net)
    return net_.R @ source_rates(net, p, mu)


def equilibrium_residual(net: Network, p, mu=None) -> float:
    """How far p is from an equilibrium (eq. 7): max_l |min(p_l, 1 - y_l(p)/c_l)|.

    This natural residual of the complementarity problem is zero exactly when
    P(y - c) = 0, y <= c and p >= 0 (eq. 7). Its first argument is in price units,
    the second is the relative overload or spare capacity of the link.

    net: the network (or a ScaledView). p: link prices (L,), may be any finite vector.
    mu: optional scalers (N,).
    """
    net_, _ = _split(net)
    p = np.asarray(p, dtype=float)
    if p.shape != (net_.L,) or not np.all(np.isfinite(p)):
        raise ValueError(f"p must be a finite vector with one price per link ({net_.L})")
    y = link_loads(net, np.maximum(p, 0.0), mu)
    F = 1.0 - y / net_.c
    return float(np.max(np.abs(np.minimum(p, F))))

