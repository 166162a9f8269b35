"""Theory of background transfers with minimal delay impact.

Every formula here is taken from

* [BG] C. Courcoubetis, A. Dimakis, M. Kanakakis, "Congestion Control for
  Background Data Transfers with Minimal Delay Impact"
  (``shared/papers/background-transfers-minimal-delay.md``), and
* [FB] "FAIRBAT: incentive-compatible background transfers"
  (``shared/papers/fairbat-incentive-compatible-background.md``), eq. (1).

Model ([BG] Sec. II-A): a link of capacity ``C`` carries ``k`` long TCP flows,
Poisson short TCP flows of load ``rho`` (fraction of ``C``) and a controlled
background aggregate (CBF). When ``n`` short flows are present every TCP flow
gets ``x_n`` and the CBF gets ``C - (n + k) x_n``; ``n`` is the birth-death
chain of [BG] eq. (1). Mean numbers of short flows are returned; the mean
delay is that number divided by the arrival rate (Little's law).

All Erlang-B / Engset evaluations use log-space recursions, so they neither
overflow nor underflow for ``k`` up to thousands and loads up to 1e6 and more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np
from scipy import optimize, sparse, stats
from scipy.sparse import linalg as splinalg

__all__ = [
    "engset", "erlang_b", "erlang_b_inverse", "stationary", "StationaryDistribution",
    "threshold_mean_flows", "threshold_cbf_fraction", "optimal_threshold",
    "optimal_policy", "optimal_mean_flows", "implementable_level", "implementable_policy",
    "implementable_mean_flows", "wtcp_weight", "wtcp_mean_flows", "wtcp_gap_limit",
    "wtcp_gap_bound", "asymptotic_mean_flows", "vanilla_mean_flows",
    "access_control_limit", "access_control_chain", "AccessControlSolution", "lbe_stable",
]

Policy = Union[Callable[[int], float], Sequence[float], np.ndarray]


# --------------------------------------------------------------------------- validation

def _check_k(k, name: str = "k", minimum: int = 0) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        if isinstance(k, (float, np.floating)) and float(k).is_integer():
            k = int(k)
        else:
            raise ValueError(f"{name} must be an integer number of flows/circuits, got {k!r}")
    k = int(k)
    if k < minimum:
        if minimum == 0:
            raise ValueError(f"{name} must be >= 0 (a number of flows cannot be negative), got {k}")
        raise ValueError(f"{name} must be >= {minimum}, got {k}")
    return k


def _check_rho(rho, name: str = "rho") -> float:
    rho = float(rho)
    if not math.isfinite(rho):
        raise ValueError(f"{name} must be a finite load, got {rho!r}")
    if rho >= 1.0:
        raise ValueError(f"{name} must be < 1: with a short-flow load {rho} >= 1 the chain of "
                         f"[BG] eq. (1) is not positive recurrent under any policy")
    if rho <= 0.0:
        raise ValueError(f"{name} must be > 0 (a load of short flows), got {rho}")
    return rho


def _check_f(f, name: str = "f") -> float:
    f = float(f)
    if not (0.0 <= f < 1.0):
        raise ValueError(f"{name} must lie in [0, 1) (the fraction of the excess capacity taken "
                         f"by the background traffic; f = 1 needs infinite delay), got {f!r}")
    return f


def _check_C(C) -> float:
    C = float(C)
    if not (C > 0.0 and math.isfinite(C)):
        raise ValueError(f"C must be a positive finite link capacity, got {C!r}")
    return C


# --------------------------------------------------------------------------- loss formulas

def _log_inv_erlang_b(k: int, a):
    """log(1/B(k, a)) by the recursion 1/B_i = 1 + (i/a) / B_{i-1}, B_0 = 1, in log space."""
    a = np.asarray(a, dtype=float)
    L = np.zeros_like(a)
    with np.errstate(divide="ignore"):
        log_a = np.log(a)
    for i in range(1, k + 1):
        L = np.logaddexp(0.0, math.log(i) - log_a + L)
    return L


def erlang_b(k: int, a):
    """Erlang-B blocking probability B(k, a) ([BG] Corollary 1).

    B(k, a) = (a^k / k!) / sum_{i=0..k} a^i / i!, computed by the stable recursion
    B_i = a B_{i-1} / (i + a B_{i-1}) carried out in log space.

    Args:
        k: number of circuits, integer >= 0 (B(0, a) = 1).
        a: offered load in Erlangs, >= 0; a scalar or a numpy array.

    Returns:
        B(k, a) as a float (or an array shaped like ``a``).
    """
    k = _check_k(k)
    arr = np.asarray(a, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"a must be a finite load >= 0 Erlangs, got {a!r}")
    out = np.exp(-_log_inv_erlang_b(k, arr))
    return float(out) if out.ndim == 0 else out


def erlang_b_inverse(k: int, f: float) -> float:
    """The load a_f with B(k, a_f) = f ([BG] Corollary 1).

    B(k, a) increases from 0 to 1 in a, so the root is unique; it is bracketed by
    [0, k / (1 - f)] because the carried load a (1 - B) cannot exceed k.

    Args:
        k: number of circuits (long flows), integer >= 1 (B(0, a) = 1 has no root for f < 1).
        f: target blocking probability in [0, 1).

    Returns:
        a_f in Erlangs (0 when f = 0).
    """
    k = _check_k(k, minimum=1)
    f = _check_f(f)
    if f == 0.0:
        return 0.0
    log_f = math.log(f)
    hi = k / (1.0 - f)
    # solve in log a: log B is smooth and monotone there, for tiny and huge a alike
    g = lambda t: -float(_log_inv_erlang_b(k, math.exp(t))) - log_f
    t_hi = math.log(hi) + 1e-9
    t_lo = t_hi - 1.0
    while g(t_lo) > 0.0:
        t_lo -= 2.0 * (t_hi - t_lo)
    t = optimize.brentq(g, t_lo, t_hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(t)


def engset(m, q: int, r: float) -> float:
    """Engset blocking probability E(m, q, r) of [BG] Proposition 1.

    E(m, q, r) = C(m-1, q) r^q / sum_{i=0..q} C(m-1, i) r^i: a loss system with q
    circuits and m users each offering r Erlangs. Computed with the recursion
    1/E_i = 1 + i / ((m - i) r E_{i-1}), E_0 = 1, in log space (no binomials).

    Args:
        m: number of users, m > q (real values are accepted; the formula uses m - 1).
        q: number of circuits, integer >= 0.
        r: traffic offered by each idle user in Erlangs, >= 0.

    Returns:
        E(m, q, r) in [0, 1].
    """
    q = _check_k(q, name="q")
    m = float(m)
    if not m > q:
        raise ValueError(f"m must exceed q (more users than circuits), got m={m}, q={q}")
    r = float(r)
    if not (r >= 0.0):
        raise ValueError(f"r must be >= 0 Erlangs per user, got {r!r}")
    if math.isinf(r):
        return 1.0
    if q == 0:
        return 1.0
    if r == 0.0:
        return 0.0
    log_r = math.log(r)
    L = 0.0
    for i in range(1, q + 1):
        L = float(np.logaddexp(0.0, math.log(i) - math.log(m - i) - log_r + L))
    return math.exp(-L)


# --------------------------------------------------------------------------- the chain of eq. (1)

@dataclass
class StationaryDistribution:
    """Stationary law of the short-flow chain of [BG] eq. (1), truncated.

    Attributes:
        pi: probabilities of n = 0..len(pi)-1 (normalised over the kept states).
        mean: mean number of short flows, sum n pi_n (plus nothing from the tail).
        cbf_fraction: the fraction f of the excess capacity taken by the CBF,
            sum pi_n [C - (n+k) x_n] / (C (1 - rho))  ([BG] eq. (6)).
        tail_mass_bound: upper bound on the probability of the states cut off.
        mean_error_bound: upper bound on the error of ``mean`` due to the truncation.
        n_max: the largest state kept.
    """

    pi: np.ndarray
    mean: float
    cbf_fraction: float
    tail_mass_bound: float
    mean_error_bound: float
    n_max: int


def _policy_values(policy: Policy, k: int, C: float, lo: int, hi: int) -> np.ndarray:
    """x_n for n in [lo, hi). Arrays are extended by the full TCP share C/(k+n)."""
    n = np.arange(lo, hi)
    if callable(policy):
        return np.array([float(policy(int(i))) for i in n], dtype=float)
    arr = np.asarray(policy, dtype=float)
    out = np.empty(len(n))
    inside = n < len(arr)
    out[inside] = arr[n[inside]]
    with np.errstate(divide="ignore"):
        out[~inside] = C / (k + n[~inside])
    return out


def stationary(policy: Policy, k: int, rho: float, C: float = 1.0, tol: float = 1e-12,
               n_limit: int = 50_000_000) -> StationaryDistribution:
    """Stationary distribution of the number of short flows under a policy ([BG] eq. (1)).

    The chain moves n -> n+1 at rate lambda and n -> n-1 at rate mu n x_n; it is
    reversible, so pi_n / pi_{n-1} = rho C / (n x_n) (the local balance (3)). States
    below the largest n >= 1 with x_n = 0 are transient and get probability 0.

    Truncation: states are added until the ratio q = rho C / (n x_n) of the last
    state is < 1 and the geometric bound pi_N q / (1 - q) on the rest is below
    ``tol``. The bound is valid when the ratios do not increase beyond the cut, which
    holds for every policy whose tail is x_n = C / (k + w + n) (threshold, optimal,
    implementable, wTCP); the code checks the ratios over a look-ahead of as many
    states again and keeps going if they rise. The reported ``tail_mass_bound`` and
    ``mean_error_bound`` are these geometric bounds.

    Args:
        policy: x_n, the rate of each TCP flow when n short flows are present: a
            callable n -> x_n, or an array of x_0, x_1, ... extended beyond its end by
            x_n = C/(k+n) (the CBF sends nothing there). Must satisfy
            0 <= x_n <= C/(k+n) ([BG] eq. (5)).
        k: number of long TCP flows, integer >= 0.
        rho: load of the short flows, 0 < rho < 1.
        C: link capacity (default 1).
        tol: target bound on the probability mass cut off by the truncation.
        n_limit: the largest number of states tried before giving up (ValueError).

    Returns:
        a :class:`StationaryDistribution`.
    """
    k = _check_k(k)
    rho = _check_rho(rho)
    C = _check_C(C)
    if not (0.0 < tol < 1.0):
        raise ValueError(f"tol must lie in (0, 1), got {tol!r}")
    N = 256
    xs = np.empty(0)
    while True:
        if N > n_limit:
            raise ValueError("the chain of [BG] eq. (1) does not settle under this policy "
                             "(x_n stays too small: not positive recurrent)")
        if len(xs) < 2 * N:
            xs = np.concatenate([xs, _policy_values(policy, k, C, len(xs), 2 * N)])
            n = np.arange(len(xs))
            cap = np.where(k + n > 0, C / np.maximum(k + n, 1), np.inf)
            bad = (xs < 0) | (xs > cap * (1 + 1e-12)) | ~np.isfinite(xs)
            if np.any(bad):
                raise ValueError(f"policy gives x_{int(np.nonzero(bad)[0][0])} outside "
                                 f"[0, C/(k+n)] (the capacity constraint [BG] eq. (5))")
        zeros = np.nonzero(xs[1:] == 0.0)[0]
        start = int(zeros[-1] + 1) if len(zeros) else 0   # lowest recurrent state
        if start >= N:
            N *= 2
            continue
        nn = np.arange(start + 1, 2 * N)
        log_ratio = math.log(rho * C) - np.log(nn) - np.log(xs[start + 1:2 * N])
        cut = N - start                     # ratios [0, cut) build states start..N
        q = float(np.exp(log_ratio[cut:].max()))   # sup of the ratios in the look-ahead
        if q < 1.0:
            lw = np.concatenate([[0.0], np.cumsum(log_ratio[:cut])])
            w = np.exp(lw - lw.max())
            Z = w.sum()
            pN = w[-1] / Z
            tail = pN * q / (1.0 - q)
            if tail <= tol:
                pi = np.zeros(N + 1)
                pi[start:] = w / Z
                states = np.arange(N + 1)
                mean = float(np.dot(states, pi))
                # sum_{j>=1} (N+j) pN q^j, plus the renormalisation of the kept part
                mean_err = pN * (N * q / (1 - q) + q / (1 - q) ** 2) + tail * mean
                cbf = float(np.dot(pi, C - (states + k) * xs[:N + 1])) / (C * (1 - rho))
                return StationaryDistribution(pi=pi, mean=mean, cbf_fraction=cbf,
                                              tail_mass_bound=float(tail),
                                              mean_error_bound=float(mean_err), n_max=N)
        N *= 2


# --------------------------------------------------------------------------- threshold policies

def threshold_mean_flows(n0: int, k: int, rho: float) -> float:
    """Mean number of short flows under the threshold policy (12), [BG] Theorem 2, eq. (13).

    N_{n0} = (k+1) rho / (1-rho) + n0 E(n0+k+1, k, (1-rho)/rho).

    Args:
        n0: threshold, integer >= 0: x_n = 0 for n <= n0, x_n = C/(k+n) above.
        k: number of long TCP flows, integer >= 0.
        rho: load of the short flows, 0 < rho < 1.
    """
    n0 = _check_k(n0, name="n0")
    k = _check_k(k)
    rho = _check_rho(rho)
    base = (k + 1) * rho / (1.0 - rho)
    if n0 == 0:
        return base
    return base + n0 * engset(n0 + k + 1, k, (1.0 - rho) / rho)


def threshold_cbf_fraction(n0: int, k: int, rho: float) -> float:
    """Fraction f of the excess capacity that the threshold policy (12) gives the CBF.

    [BG] Appendix C (proof of Proposition 1): f = pi_{n0} / (1 - rho)
    = E(n0+k+1, k, (1-rho)/rho).

    Args:
        n0: threshold, integer >= 0.
        k: number of long TCP flows, integer >= 0.
        rho: load of the short flows, 0 < rho < 1.
    """
    n0 = _check_k(n0, name="n0")
    k = _check_k(k)
    rho = _check_rho(rho)
    return engset(n0 + k + 1, k, (1.0 - rho) / rho)


def optimal_threshold(k: int, f: float, rho: float) -> int:
    """The optimal threshold n* of [BG] Proposition 1, eq. (11).

    n* is the integer with E(n*+k+1, k, r) <= f < E(n*+k+2, k, r), r = (1-rho)/rho.
    Since E(k+1, k, r) = (1-rho)^k, no n* >= 0 exists when (1-rho)^k > f: then the
    optimum is the low-priority policy of eq. (9) and this function returns -1 (eq. (8)
    with n* = -1 is exactly eq. (9): only x_0 is fractional).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity for the CBF, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    if k == 0 or (1.0 - rho) ** k > f:
        return -1
    r = (1.0 - rho) / rho
    E = lambda n0: engset(n0 + k + 1, k, r)   # increasing in n0
    lo, hi = 0, 1
    while E(hi) <= f:
        lo, hi = hi, hi * 2
    while hi - lo > 1:          # invariant: E(lo) <= f < E(hi)
        mid = (lo + hi) // 2
        if E(mid) <= f:
            lo = mid
        else:
            hi = mid
    return lo


def _optimal_theta(k: int, f: float, rho: float, n_star: int) -> float:
    """theta = x_{n*+1} (k+n*+1)/C that meets eq. (10) (1 = threshold n*, 0 = threshold n*+1)."""
    r = (1.0 - rho) / rho
    E1 = engset(n_star + k + 1, k, r)
    E2 = engset(n_star + k + 2, k, r)
    a_over_A = (1 - rho) * E1 / (1 - (1 - rho) * E1)
    num = (1 - rho) * (f - E2)
    den = a_over_A * (1 - (1 - rho) * f) - (1 - rho) * E2
    return min(1.0, max(0.0, num / den))


def optimal_policy(k: int, f: float, rho: float, C: float = 1.0) -> np.ndarray:
    """The optimal full-information policy of [BG] Theorem 1 as an array x_0..x_{n*+1}.

    eq. (8): x_n = 0 for n <= n*, x_{n*+1} fixed by eq. (10), x_n = C/(k+n) beyond
    (the array's implicit extension in :func:`stationary`); eq. (9) in the
    low-priority case (1-rho)^k > f (only x_0 is below C/k).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
        C: link capacity (default 1).
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    C = _check_C(C)
    if k == 0:
        return np.array([0.0])   # k = 0: the CBF gets everything at n = 0 whatever x_0
    n_star = optimal_threshold(k, f, rho)
    if n_star < 0:
        # eq. (9)
        return np.array([C * ((1 - rho) ** k - f) / (k * (1 - rho) ** k)])
    theta = _optimal_theta(k, f, rho, n_star)
    x = np.zeros(n_star + 2)
    x[n_star + 1] = theta * C / (k + n_star + 1)
    return x


def optimal_mean_flows(k: int, f: float, rho: float) -> float:
    """N*(k, f, rho): the least mean number of short flows, [BG] Theorem 1.

    Uses the optimal policy (8) with the fractional x_{n*+1} of eq. (10): writing
    theta = x_{n*+1}(k+n*+1)/C, the stationary law is that of the threshold policy
    n*+1 with the extra state n* weighted by theta (Lemma 1), so
    N* = (N_{n*+1} + theta w n*) / (1 + theta w), w = pi_{n*}/pi_{>n*} under threshold
    n*, with N_{n0} from eq. (13). In the low-priority case (1-rho)^k > f (eq. (9))
    N* = (k+1) rho/(1-rho). N_{n*} <= N* < N_{n*+1} (Theorem 2).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    n_star = optimal_threshold(k, f, rho)
    if n_star < 0:
        return (k + 1) * rho / (1.0 - rho)
    theta = _optimal_theta(k, f, rho, n_star)
    E1 = engset(n_star + k + 1, k, (1 - rho) / rho)
    w = (1 - rho) * E1 / (1 - (1 - rho) * E1)
    N_next = threshold_mean_flows(n_star + 1, k, rho)
    return (N_next + theta * w * n_star) / (1 + theta * w)


# --------------------------------------------------------------------------- implementable policies

def _log_tail_series(log_ratio, chunk: int = 65536, limit: int = 10 ** 8) -> float:
    """log sum_{j>=0} prod_{i<j} q_i for ratios q_i = exp(log_ratio(i)) that decrease below 1.

    Summed in chunks until the geometric bound on the rest is below 1e-17 of the sum.
    """
    total = -math.inf
    offset = 0.0
    start = 0
    while start < limit:
        lr = log_ratio(np.arange(start, start + chunk))
        partial = offset + np.concatenate([[0.0], np.cumsum(lr)])
        terms, offset = partial[:-1], float(partial[-1])
        total = float(np.logaddexp(total, float(np.logaddexp.reduce(terms))))
        q_last = float(lr[-1])
        if q_last < 0 and offset - math.log1p(-math.exp(q_last)) < total + math.log(1e-17):
            return total
        start += chunk
    raise ValueError("tail series did not converge (internal error)")


def _log_negbin_sf(n: int, k: int, rho: float) -> float:
    """log P[X > n] for X of [BG] Lemma 1 (negative binomial), accurate far in the tail."""
    v = float(stats.nbinom.logsf(n, k + 1, 1 - rho))
    if v > -600.0:
        return v
    # P[X > n] = pmf(n+1) sum_j prod ratios, pmf(m+1)/pmf(m) = rho (m+k+1)/(m+1), decreasing
    m0 = n + 1
    first = float(stats.nbinom.logpmf(m0, k + 1, 1 - rho))
    return first + _log_tail_series(lambda j: math.log(rho) + np.log(m0 + j + k + 1) - np.log(m0 + j + 1))


def _log_poisson_cdf(n: int, lam: float) -> float:
    """log P[Pois(lam) <= n], accurate far in the lower tail."""
    if n < 0:
        return -math.inf
    v = float(stats.poisson.logcdf(n, lam))
    if v > -600.0:
        return v
    # P[<= n] = pmf(n) sum_j prod_{i=n-j+1..n} i/lam (ratios decrease as i falls)
    first = float(stats.poisson.logpmf(n, lam))

    def lr(j):
        i = n - j
        out = np.full(j.shape, -np.inf)
        ok = i >= 1
        out[ok] = np.log(i[ok]) - math.log(lam)
        return out

    return first + _log_tail_series(lr)


def _log_poisson_pmf(n: int, lam: float) -> float:
    """log P(N = n) for N ~ Poisson(lam): n log lam - lam - log n! (as scipy's
    `poisson.logpmf`, whose frozen form cost 0.7 ms a call here)."""
    return (n * math.log(lam) if n else 0.0) - lam - math.lgamma(n + 1)


def _log_negbin_pmf(n: int, r: int, p: float) -> float:
    """log P(X = n) for X the failures before the r-th success of probability p:
    log C(n + r - 1, n) + r log p + n log(1 - p) (as scipy's `nbinom.logpmf`)."""
    return (math.lgamma(n + r) - math.lgamma(r) - math.lgamma(n + 1) + r * math.log(p)
            + (n * math.log1p(-p) if n else 0.0))


def _implementable_terms(k: int, rho: float, c: float):
    """Mean flows and CBF fraction under x_n = min(C/c, C/(k+n)) ([BG] eq. (15)), c >= k.

    For n <= n* = floor(c - k) the ratio pi_n/pi_{n-1} is rho c / n (Poisson weights);
    above, it is rho (k+n)/n, the negative-binomial law X of Lemma 1. Both pieces are
    summed in closed form (the Poisson and negative-binomial log-pmfs, and their tails).
    """
    n_star = int(math.floor(c - k + 1e-12))
    lam = rho * c
    # X: failures before the (k+1)-th success, success probability 1 - rho.
    # weights normalised by e^{lam}: head = sum_{n<=n*} pmf_pois(n); all in log space
    # because the two pieces can differ by hundreds of orders of magnitude
    log_head = _log_poisson_cdf(n_star, lam)
    log_head_m1 = _log_poisson_cdf(n_star - 1, lam)
    log_link = _log_poisson_pmf(n_star, lam) - _log_negbin_pmf(n_star, k + 1, 1 - rho)  # w_{n*} / P(X = n*)
    log_tail = log_link + _log_negbin_sf(n_star, k, rho)          # sum_{n>n*} w_n
    N_tail = _negbin_conditional_mean(n_star + 1, k, rho)         # E[X | X > n*]
    log_D = float(np.logaddexp(log_head, log_tail))
    log_num = float(np.logaddexp(math.log(lam) + log_head_m1 if lam > 0 else -math.inf,
                                 log_tail + math.log(N_tail)))
    mean = math.exp(log_num - log_D)
    # CBF rate at n <= n*: C - (n+k) C/c, in units of C
    cbf = math.exp(log_head - log_D) * (1 - k / c) - rho * math.exp(log_head_m1 - log_D)
    return mean, cbf / (1 - rho)


def _negbin_conditional_mean(n0: int, k: int, rho: float) -> float:
    """E[X | X >= n0] for X of [BG] Lemma 1, which is eq. (13)."""
    if n0 == 0:
        return (k + 1) * rho / (1 - rho)
    return (k + 1) * rho / (1 - rho) + n0 * engset(n0 + k + 1, k, (1 - rho) / rho)


def implementable_level(k: int, f: float, rho: float, C: float = 1.0) -> float:
    """The common rate x_0 = ... = x_{n*} of the optimal implementable policy ([BG] eq. (15)).

    The policy is x_n = min(xbar, C/(k+n)); the CBF throughput decreases strictly in
    xbar ([BG] Sec. II-C), so xbar is the unique root of "CBF fraction = f".

    Args:
        k: number of long TCP flows, integer >= 1.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
        C: link capacity (default 1).
    """
    k = _check_k(k, minimum=1)
    f = _check_f(f)
    rho = _check_rho(rho)
    C = _check_C(C)
    if f == 0.0:
        return C / k
    g = lambda t: _implementable_terms(k, rho, k * math.exp(t))[1] - f
    hi = 1.0
    while g(hi) < 0:
        hi *= 2.0
    t = optimize.brentq(g, 0.0, hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    return C / (k * math.exp(t))


def implementable_policy(k: int, f: float, rho: float, C: float = 1.0) -> Callable[[int], float]:
    """The optimal implementable policy of [BG] Theorem 3 as a callable n -> x_n.

    Args:
        k: number of long TCP flows, integer >= 1.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
        C: link capacity (default 1).
    """
    xbar = implementable_level(k, f, rho, C)
    return lambda n: min(xbar, C / (k + n))


def implementable_mean_flows(k: int, f: float, rho: float) -> float:
    """M*(k, f, rho): mean short flows under the optimal implementable policy, [BG] Theorem 3.

    eq. (15): x_n = xbar for n <= n*, C/(k+n) above, i.e. x_n = min(xbar, C/(k+n)), with
    xbar set so that the CBF takes the fraction f. M* >= N* and M*/N* -> 1 as
    rho -> 1 (Theorem 4). For k = 0 every work-conserving policy gives the CBF the
    whole excess capacity and M* = rho/(1-rho).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    if k == 0:
        return rho / (1 - rho)
    xbar = implementable_level(k, f, rho)
    return _implementable_terms(k, rho, 1.0 / xbar)[0]


# --------------------------------------------------------------------------- wTCP

def wtcp_weight(k: int, f: float) -> float:
    """The wTCP weight w with w/(k+w) = f ([BG] Sec. II-D): w = k f/(1-f).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    return k * f / (1.0 - f)


def wtcp_mean_flows(k: int, f: float, rho: float) -> float:
    """N_w(k, f, rho) = rho/(1-rho) (k + 1 + k f/(1-f)), [BG] eq. (16).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    return rho / (1 - rho) * (k + 1 + k * f / (1 - f))


def asymptotic_mean_flows(k: int, f: float) -> float:
    """lim_{rho->1} (1-rho) N*(k, f, rho) = k + 1 + a_f f, [BG] Corollary 1.

    a_f solves B(k, a_f) = f (see :func:`erlang_b_inverse`). For k = 0 the limit is 1
    (the CBF is then low priority, eq. (9)).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    if k == 0:
        return 1.0
    return k + 1 + erlang_b_inverse(k, f) * f


def wtcp_gap_limit(k: int, f: float) -> float:
    """lim_{rho->1} (N_w - N*)/N* ([BG] Theorem 5), via Corollary 1 and eq. (16).

    = (k + 1 + k f/(1-f)) / (k + 1 + a_f f) - 1; for k = 1 this is
    f(1-f)/(1+(1-f)^2) (eq. (17)), at most 20.7% at f = 2 - sqrt 2.

    Args:
        k: number of long TCP flows, integer >= 0.
        f: target fraction of the excess capacity, 0 <= f < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    return (k + 1 + k * f / (1 - f)) / asymptotic_mean_flows(k, f) - 1.0


def wtcp_gap_bound(k: int, f: float) -> float:
    """The bound b_k(f) of [BG] Theorem 5, eq. (19), on the limit of :func:`wtcp_gap_limit`.

    b_k(f) = (B(k-1, a_f) - f) / (1 - [B(k-1, a_f) - f]) with B(k, a_f) = f. The paper
    states it for k >= 2; the derivation (eq. (50)) also holds for k = 1, where it is loose.

    Args:
        k: number of long TCP flows, integer >= 1.
        f: target fraction of the excess capacity, 0 <= f < 1.
    """
    k = _check_k(k, minimum=1)
    f = _check_f(f)
    if f == 0.0:
        return 0.0
    d = erlang_b(k - 1, erlang_b_inverse(k, f)) - f
    return d / (1.0 - d)


def vanilla_mean_flows(k: int, f: float, rho: float) -> float:
    """Mean short flows when every background file is its own TCP flow ('vanilla', [BG] Fig. 4).

    Chain (20) with x_{n,m} = C/(n+k+m): a processor-sharing queue with k permanent
    customers and two Poisson classes of total load rho + rho_b, rho_b = f (1-rho).
    The total count has the law X of Lemma 1 with load rho + rho_b and each customer
    is a short flow with probability rho/(rho+rho_b), so
    N_vanilla = (k+1) rho / (1 - rho - rho_b) = (k+1) rho / ((1-rho)(1-f)).

    Args:
        k: number of long TCP flows, integer >= 0.
        f: fraction of the excess capacity offered by the background files, 0 <= f < 1.
        rho: load of the short flows, 0 < rho < 1.
    """
    k = _check_k(k)
    f = _check_f(f)
    rho = _check_rho(rho)
    return (k + 1) * rho / ((1 - rho) * (1 - f))


# --------------------------------------------------------------------------- dynamic arrivals (Sec. III)

def access_control_limit(k: int, rho: float, rho_b: float) -> float:
    """The critical limit M of active micro-flows, [BG] eq. (27): rho_b/(1-rho) = M/(k+M).

    M = k rho_b / (1 - rho - rho_b). (For k = 0 any M > 0 serves the whole excess
    capacity and the critical value is 0.)

    Args:
        k: number of long TCP flows, integer >= 0.
        rho: load of the short flows, 0 < rho < 1.
        rho_b: load of the background micro-flows, 0 <= rho_b < 1 - rho.
    """
    k = _check_k(k)
    rho = _check_rho(rho)
    rho_b = float(rho_b)
    if not (0.0 <= rho_b < 1.0 - rho):
        raise ValueError(f"rho_b must lie in [0, 1 - rho) = [0, {1 - rho:g}) so that the "
                         f"background load fits in the excess capacity, got {rho_b!r}")
    return k * rho_b / (1.0 - rho - rho_b)


@dataclass
class AccessControlSolution:
    """Stationary solution of the truncated chain (20) under access control (26).

    Attributes:
        mean_short: mean number of short flows.
        mean_micro: mean number of micro-flows (active and waiting).
        short_marginal: P(n) for n = 0..n_max.
        micro_marginal: P(m) for m = 0..m_max.
        boundary_mass_n: P(n = n_max), mass on the short-flow truncation edge.
        boundary_mass_m: P(m = m_max), mass on the micro-flow truncation edge (arrivals
            of micro-flows are refused there, so it is also their loss probability).
        cbf_throughput: mean CBF rate sum pi [C - (n+k) x_{n,m}] (in units of C).
        wtcp_mean: N_w(k, M/(M+k), rho) of [BG] eq. (16), the value Theorem 7 predicts
            at the critical M.
    """

    mean_short: float
    mean_micro: float
    short_marginal: np.ndarray
    micro_marginal: np.ndarray
    boundary_mass_n: float
    boundary_mass_m: float
    cbf_throughput: float
    wtcp_mean: float


def access_control_chain(k: int, rho: float, rho_b: float, M: float, size_ratio: float = 1.0,
                         n_max: int = 120, m_max: int = 400, C: float = 1.0) -> AccessControlSolution:
    """Solve chain (20) of [BG] under the access-control policy (26), truncated.

    (n, m) -> (n+1, m) at lambda, (n-1, m) at mu n x, (n, m+1) at lambda_b and
    (n, m-1) at mu_b [C - (n+k) x] with x = C/(n + k + min(m, M)). Time is in units
    of the mean service time of a short flow at full rate (mu C = 1); background files
    are ``size_ratio`` times larger on average. The state space is cut at n_max (no
    short arrivals there) and m_max (micro-flow arrivals refused there); the masses on
    those edges are reported as the truncation error. Theorem 7: at the critical M of
    eq. (27) the mean number of short flows equals N_w(k, M/(M+k), rho); above it the
    micro-flow queue is stable and the mean approaches that value as M decreases to
    the critical one (and m_max grows).

    Args:
        k: number of long TCP flows, integer >= 0.
        rho: load of the short flows, 0 < rho < 1.
        rho_b: load of the micro-flows, 0 <= rho_b < 1 - rho.
        M: the limit on active micro-flows, > 0 (may be fractional).
        size_ratio: mean background file size over mean short-flow size, > 0.
        n_max: largest number of short flows kept, >= 1.
        m_max: largest number of micro-flows kept, >= 1.
        C: link capacity (default 1).

    Returns:
        an :class:`AccessControlSolution`.
    """
    k = _check_k(k)
    rho = _check_rho(rho)
    access_control_limit(k, rho, rho_b)   # validates rho_b
    M = float(M)
    if not (M > 0 and math.isfinite(M)):
        raise ValueError(f"M must be a positive limit of active micro-flows, got {M!r}")
    if not (size_ratio > 0):
        raise ValueError(f"size_ratio must be > 0, got {size_ratio!r}")
    n_max = _check_k(n_max, name="n_max", minimum=1)
    m_max = _check_k(m_max, name="m_max", minimum=1)
    C = _check_C(C)
    mu = 1.0 / C
    lam = rho * mu * C
    mu_b = mu / size_ratio
    lam_b = rho_b * mu_b * C
    nn, mm = np.meshgrid(np.arange(n_max + 1), np.arange(m_max + 1), indexing="ij")
    active = np.minimum(mm, M)
    tot = nn + k + active
    x = np.where(tot > 0, C / np.where(tot > 0, tot, 1), 0.0)
    idx = lambda n, m: n * (m_max + 1) + m
    S = (n_max + 1) * (m_max + 1)
    rows, cols, vals = [], [], []

    def add(mask, dn, dm, rate):
        src = idx(nn[mask], mm[mask])
        dst = idx(nn[mask] + dn, mm[mask] + dm)
        rows.append(src); cols.append(dst); vals.append(rate[mask])

    add(nn < n_max, 1, 0, np.full(nn.shape, lam))
    add(nn > 0, -1, 0, mu * nn * x)
    add(mm < m_max, 0, 1, np.full(nn.shape, lam_b))
    add(mm > 0, 0, -1, mu_b * (C - (nn + k) * x))
    r = np.concatenate(rows); c = np.concatenate(cols); v = np.concatenate(vals)
    keep = v > 0
    Q = sparse.csr_matrix((v[keep], (r[keep], c[keep])), shape=(S, S))
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = np.ones(S)   # replace one balance equation by the normalisation
    b = np.zeros(S); b[0] = 1.0
    p = splinalg.spsolve(A.tocsc(), b)
    p = np.clip(p, 0.0, None)
    p /= p.sum()
    P = p.reshape(n_max + 1, m_max + 1)
    pn = P.sum(axis=1); pm = P.sum(axis=0)
    cbf = float(np.sum(P * (C - (nn + k) * x))) / C
    f_eff = M / (M + k) if (M + k) > 0 else 1.0
    wt = rho / (1 - rho) * (k + 1 + (k * f_eff / (1 - f_eff) if f_eff < 1 else math.inf))
    return AccessControlSolution(
        mean_short=float(np.dot(np.arange(n_max + 1), pn)),
        mean_micro=float(np.dot(np.arange(m_max + 1), pm)),
        short_marginal=pn, micro_marginal=pm,
        boundary_mass_n=float(pn[-1]), boundary_mass_m=float(pm[-1]),
        cbf_throughput=cbf, wtcp_mean=float(wt))


# --------------------------------------------------------------------------- FAIRBAT

def lbe_stable(rho_b: float, rhos) -> bool:
    """Is ideal low-priority (LBE) background traffic stable over a path? [FB] eq. (1).

    A low-priority flow sends only when no short flow is present on any link of its
    path, a fraction prod_i (1 - rho_i) of the time (independent links), so its load
    must satisfy rho_b <= prod_i (1 - rho_i) ([FB] eq. (1) for two equal links:
    rho_b <= (1 - rho_s)^2; [BG] Sec. IV-C).

    Args:
        rho_b: load of the low-priority background traffic, >= 0.
        rhos: the short-flow loads rho_i of the links on the path (an iterable of
            numbers in [0, 1), or a single number for a one-link path).
    """
    rho_b = float(rho_b)
    if not (rho_b >= 0 and math.isfinite(rho_b)):
        raise ValueError(f"rho_b must be a finite load >= 0, got {rho_b!r}")
    arr = np.atleast_1d(np.asarray(rhos, dtype=float))
    if arr.size == 0:
        raise ValueError("rhos must name the load of at least one link")
    if np.any(~(arr >= 0)) or np.any(arr >= 1):
        raise ValueError(f"rhos must all lie in [0, 1) (each link's short-flow load), got {rhos!r}")
    return bool(rho_b <= float(np.prod(1.0 - arr)))
