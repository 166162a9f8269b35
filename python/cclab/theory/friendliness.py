"""Stochastic TCP-friendliness and the flow-level analysis of TFCBR.

Formulas from [TF] "TCP-Friendly CBR-Like Rate Control"
(``shared/papers/tcp-friendly-cbr-like-rate-control.md``):

* Sec. V-B: a bottleneck of unit capacity shared by ``nu`` long-lived UDP flows,
  ``n2`` long-lived TCP flows (class 2) and Poisson short TCP flows of load ``rho1``
  (class 1), modelled as an M/G/1 processor-sharing queue with permanent customers.
  Under TFCBR with beta = infinity the UDP flows send a constant total rate
  ``r = alpha * nu * Y_TCP``; under the TCP algorithm they are ``nu`` more permanent
  customers. Eqs. (1), (2), Theorems 3 and 4, eq. (3), eq. (4) and the stability
  condition alpha < 1 + n2/nu.
* Sec. III: stochastic TCP-friendliness (STF) in mean order (Definition 2 /
  Theorem 1), in increasing concave order (Definition 3) and in the usual stochastic
  order (Definition 4 / Theorem 2), checked here on samples of TCP rates for
  several classes at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import gammaln, logsumexp

__all__ = [
    "ps_permanent_cdf", "tfcbr_short_flow_cdf", "tcp_short_flow_cdf", "tfcbr_total_rate",
    "tfcbr_rates", "tcp_rates", "alpha_bound", "alpha_bound_infimum", "stf_mean_holds",
    "tfcbr_stable", "number_dominance", "stf_mean", "stf_usual", "stf_icv", "StfCheck",
]


# --------------------------------------------------------------------------- validation

def _count(v, name: str, minimum: int = 0) -> int:
    if isinstance(v, bool) or not float(v).is_integer():
        raise ValueError(f"{name} must be an integer number of flows, got {v!r}")
    v = int(v)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}"
                         f"{' (a number of flows cannot be negative)' if minimum == 0 else ''}, got {v}")
    return v


def _load(rho1, name: str = "rho1") -> float:
    rho1 = float(rho1)
    if not (0.0 <= rho1 < 1.0):
        raise ValueError(f"{name} must lie in [0, 1): the short-flow load must fit in the unit "
                         f"capacity for the PS queue to be stable, got {rho1!r}")
    return rho1


def _alpha(alpha) -> float:
    alpha = float(alpha)
    if not (alpha >= 0.0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be a finite ratio >= 0 (TFCBR rate over the TCP rate), got {alpha!r}")
    return alpha


# --------------------------------------------------------------------------- the PS model

def ps_permanent_cdf(n, rho: float, permanent: int, capacity: float = 1.0):
    """P[N <= n] for the M/G/1-PS queue with permanent customers ([TF] eqs. (1), (2), ref. [3]).

    P[N <= n] = sum_{i=0..n} (1 - s)^{p+1} C(i+p, p) s^i with s = rho/capacity and p the
    number of permanent customers: N is negative binomial (p+1 successes of
    probability 1 - s), insensitive to the size distribution.

    Args:
        n: number(s) of short flows, integer >= 0 (scalar or array).
        rho: load of the dynamic customers (short TCP flows), >= 0.
        permanent: number of permanent customers p, integer >= 0.
        capacity: service rate of the queue, > rho (stability).
    """
    permanent = _count(permanent, "permanent")
    capacity = float(capacity)
    rho = float(rho)
    if not capacity > 0:
        raise ValueError(f"capacity must be > 0, got {capacity!r}")
    if not (0.0 <= rho < capacity):
        raise ValueError(f"rho must lie in [0, capacity) = [0, {capacity:g}) for the PS queue "
                         f"to be stable, got {rho!r}")
    s = rho / capacity
    n_arr = np.asarray(n)
    if np.any(n_arr < 0):
        raise ValueError(f"n must be >= 0, got {n!r}")
    out = stats.nbinom.cdf(n_arr, permanent + 1, 1.0 - s)
    return float(out) if np.ndim(out) == 0 else out


def tfcbr_total_rate(alpha: float, rho1: float, n2: int, nu: int) -> float:
    """Total UDP rate r under TFCBR with beta = infinity ([TF] proof of Theorem 4).

    alpha = Y_TFCBR / Y_TCP with Y_TFCBR = r/nu and Y_TCP = (1 - rho1)/(n2 + nu), so
    r = alpha nu (1 - rho1) / (n2 + nu).

    Args:
        alpha: TFCBR rate over the TCP rate in the same environment, >= 0.
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    alpha = _alpha(alpha)
    rho1 = _load(rho1)
    n2 = _count(n2, "n2")
    nu = _count(nu, "nu", minimum=1)
    return alpha * nu * (1.0 - rho1) / (n2 + nu)


def tfcbr_stable(alpha: float, n2: int, nu: int) -> bool:
    """Stability of the PS queue under TFCBR: rho1 < 1 - r  <=>  alpha < 1 + n2/nu ([TF] Sec. V-B.4).

    Args:
        alpha: TFCBR rate over the TCP rate, >= 0.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    alpha = _alpha(alpha)
    n2 = _count(n2, "n2")
    nu = _count(nu, "nu", minimum=1)
    return bool(alpha < 1.0 + n2 / nu)


def _tfcbr_capacity(alpha, rho1, n2, nu) -> float:
    r = tfcbr_total_rate(alpha, rho1, n2, nu)
    if not rho1 < 1.0 - r:
        raise ValueError(f"alpha={alpha} makes the short flows unstable under TFCBR: rho1={rho1} "
                         f">= 1 - r = {1 - r:g} (need alpha < 1 + n2/nu = {1 + n2 / nu:g})")
    return 1.0 - r


def tfcbr_short_flow_cdf(n, alpha: float, rho1: float, n2: int, nu: int):
    """P[N1_TFCBR <= n], [TF] eq. (1): PS queue of capacity 1 - r with n2 permanent customers.

    Args:
        n: number(s) of short TCP flows, integer >= 0.
        alpha: TFCBR rate over the TCP rate, 0 <= alpha < 1 + n2/nu.
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    cap = _tfcbr_capacity(alpha, rho1, n2, nu)
    return ps_permanent_cdf(n, rho1, n2, cap)


def tcp_short_flow_cdf(n, rho1: float, n2: int, nu: int):
    """P[N1_TCP <= n], [TF] eq. (2): unit-capacity PS queue with n2 + nu permanent customers.

    Args:
        n: number(s) of short TCP flows, integer >= 0.
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 0.
    """
    rho1 = _load(rho1)
    n2 = _count(n2, "n2")
    nu = _count(nu, "nu")
    return ps_permanent_cdf(n, rho1, n2 + nu, 1.0)


def tfcbr_rates(alpha: float, rho1: float, n2: int, nu: int) -> tuple[float, float]:
    """(R1, E[X2]) under TFCBR, [TF] Theorem 4 proof: ((1-r-rho1)/(n2+1), (1-r-rho1)/n2).

    R1 is the mean short-flow size over the mean response time; E[X2] the rate of a
    long-lived TCP flow (NaN when n2 = 0).

    Args:
        alpha: TFCBR rate over the TCP rate, 0 <= alpha < 1 + n2/nu.
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    cap = _tfcbr_capacity(alpha, rho1, n2, nu)
    free = cap - rho1
    return free / (n2 + 1), (free / n2 if n2 > 0 else math.nan)


def tcp_rates(rho1: float, n2: int, nu: int) -> tuple[float, float]:
    """(R1, E[X2]) under the TCP algorithm, [TF] Theorem 4 proof: ((1-rho1)/(n2+nu+1), (1-rho1)/(n2+nu)).

    Args:
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 0.
    """
    rho1 = _load(rho1)
    n2 = _count(n2, "n2")
    nu = _count(nu, "nu")
    free = 1.0 - rho1
    return free / (n2 + nu + 1), (free / (n2 + nu) if n2 + nu > 0 else math.nan)


def alpha_bound(n2: int, nu: int) -> float:
    """The largest alpha that keeps TFCBR STF-mu in the flow model, [TF] eq. (4): (n2+nu)/(n2+nu+1).

    Args:
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    n2 = _count(n2, "n2")
    nu = _count(nu, "nu", minimum=1)
    return (n2 + nu) / (n2 + nu + 1)


def alpha_bound_infimum() -> float:
    """inf over nu >= 1, n2 >= 0 of eq. (4): 1/2 at n2 = 0, nu = 1 ([TF] Theorem 4)."""
    return alpha_bound(0, 1)


def stf_mean_holds(alpha: float, rho1: float, n2: int, nu: int) -> bool:
    """Do R1_TCP <= R1_TFCBR and E[X2_TCP] <= E[X2_TFCBR] both hold? ([TF] Theorem 4, eq. (3)).

    Evaluated from the rate formulas directly (not from eq. (4)), so that it can be
    compared with the closed-form bound. False when TFCBR is unstable.

    Args:
        alpha: TFCBR rate over the TCP rate, >= 0.
        rho1: load of the short TCP flows, 0 <= rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
    """
    if not tfcbr_stable(alpha, n2, nu):
        return False
    r1_u, x2_u = tfcbr_rates(alpha, rho1, n2, nu)
    r1_t, x2_t = tcp_rates(rho1, n2, nu)
    eps = 1e-12
    ok = r1_t <= r1_u * (1 + eps) + eps
    if n2 > 0:
        ok = ok and x2_t <= x2_u * (1 + eps) + eps
    return bool(ok)


def _log_negbin_sf(n: np.ndarray, r: int, s: float) -> np.ndarray:
    """log P[N > n] for N = failures before the r-th success, failure probability s.

    N > n iff the first n + r trials hold at most r - 1 successes, so the survival
    function is a sum of r binomial terms, summed in log space (no underflow however
    far in the tail).
    """
    n = np.asarray(n, dtype=float)[..., None]
    i = np.arange(r, dtype=float)
    tot = n + r
    logs = (gammaln(tot + 1) - gammaln(i + 1) - gammaln(tot - i + 1)
            + i * math.log1p(-s) + (tot - i) * math.log(s))
    return logsumexp(logs, axis=-1)


def number_dominance(alpha: float, rho1: float, n2: int, nu: int, n_max: int = 10 ** 12):
    """Check P[N1_TCP <= n] <= P[N1_TFCBR <= n] for every n ([TF] Theorem 3).

    The two survival functions (eqs. (1), (2)) are compared in log space, exactly, on
    every n up to 4096 and on a grid growing by 0.1% per point up to ``n_max``.

    Args:
        alpha: TFCBR rate over the TCP rate, 0 <= alpha < 1 + n2/nu.
        rho1: load of the short TCP flows, 0 < rho1 < 1.
        n2: number of long-lived TCP flows, integer >= 0.
        nu: number of long-lived UDP flows, integer >= 1.
        n_max: largest n examined (default 1e12).

    Returns:
        (holds, first_violation): whether the inequality holds on the examined n, and
        the first examined n where it fails (None if none; beyond n = 4096 it is located
        to within 0.1%). Theorem 3: it holds for all parameters only when alpha = 0; for
        alpha > 0 the TFCBR tail decays more slowly (ratio rho1/(1-r) > rho1), so it fails
        at some n.
    """
    cap = _tfcbr_capacity(alpha, rho1, n2, nu)
    nu = _count(nu, "nu", minimum=1)
    n_max = _count(n_max, "n_max")
    if rho1 == 0.0:
        return True, None      # no short flows under either protocol
    s_u = rho1 / cap

    def first_bad(grid):
        d = _log_negbin_sf(grid, n2 + 1, s_u) - _log_negbin_sf(grid, n2 + nu + 1, rho1)
        bad = np.nonzero(d > 1e-12)[0]
        return int(grid[bad[0]]) if len(bad) else None

    n_bad = first_bad(np.arange(min(n_max, 256) + 1, dtype=float))     # most crossings are early
    if n_bad is None and n_max > 256:
        n_bad = first_bad(np.arange(257, min(n_max, 4096) + 1, dtype=float))
    if n_bad is None and n_max > 4096:
        steps = int(math.log(n_max / 4096) / math.log(1.001)) + 2
        sparse_n = np.unique(np.floor(4096 * 1.001 ** np.arange(1, steps)))
        n_bad = first_bad(sparse_n[sparse_n <= n_max])
    return (n_bad is None, n_bad)


# --------------------------------------------------------------------------- STF on samples

Samples = Union[np.ndarray, Sequence[float], Mapping[str, Sequence[float]], Sequence[Sequence[float]]]


@dataclass
class StfCheck:
    """Result of an STF check over several TCP classes.

    Attributes:
        holds: True when the order holds for every class (Definition 1: componentwise).
        classes: one row per class: ``class``, ``n_ref``, ``n_x``, ``mean_ref``, ``mean_x``,
            ``holds``, ``max_violation`` (largest amount by which the order fails, in the
            units of the compared quantity; 0 when it holds) and, for the usual order,
            ``st_index``.
        order: "mean", "st" or "icv".
    """

    holds: bool
    classes: pd.DataFrame
    order: str

    def __bool__(self) -> bool:
        return self.holds


def _classes(ref: Samples, x: Samples) -> list[tuple[str, np.ndarray, np.ndarray]]:
    def as_map(s, name):
        if isinstance(s, Mapping):
            return {str(k): np.asarray(v, dtype=float).ravel() for k, v in s.items()}
        if isinstance(s, np.ndarray):
            if s.ndim == 1:
                return {"0": s.astype(float)}
            if s.ndim == 2:
                return {str(i): s[i].astype(float) for i in range(s.shape[0])}
            raise ValueError(f"{name} must be 1-D (one class) or 2-D (one row per class)")
        if all(np.ndim(v) == 0 for v in s):
            return {"0": np.asarray(s, dtype=float)}
        return {str(i): np.asarray(v, dtype=float).ravel() for i, v in enumerate(s)}

    a, b = as_map(ref, "ref"), as_map(x, "x")
    if set(a) != set(b):
        raise ValueError(f"ref and x must have the same classes, got {sorted(a)} and {sorted(b)}")
    out = []
    for key in a:
        for nm, v in (("ref", a[key]), ("x", b[key])):
            if v.size == 0:
                raise ValueError(f"{nm} has no samples for class {key!r}")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"{nm} has non-finite samples for class {key!r}")
        out.append((key, np.sort(a[key]), np.sort(b[key])))
    return out


def _ecdf(sorted_s: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.searchsorted(sorted_s, t, side="right") / sorted_s.size


def _mean_min(sorted_s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """E[min(S, t)] for the empirical law of S, for each t."""
    cs = np.concatenate([[0.0], np.cumsum(sorted_s)])
    j = np.searchsorted(sorted_s, t, side="right")
    return (cs[j] + t * (sorted_s.size - j)) / sorted_s.size


def stf_mean(ref: Samples, x: Samples, tol: float = 0.0) -> StfCheck:
    """STF in mean order: E[X_i^ref] <= E[X_i^x] for every class i ([TF] Definition 2, Theorem 1).

    Args:
        ref: TCP rate samples with the reference protocol (the TCP algorithm): one
            array (one class), a sequence of arrays, a 2-D array (one row per class) or
            a mapping class -> array.
        x: TCP rate samples with the protocol under test, same classes as ``ref``.
        tol: slack allowed, in rate units (the order holds if mean_ref <= mean_x + tol).
    """
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    rows = []
    for key, a, b in _classes(ref, x):
        gap = float(a.mean() - b.mean())
        rows.append(dict(cls=key, n_ref=a.size, n_x=b.size, mean_ref=a.mean(), mean_x=b.mean(),
                         holds=gap <= tol, max_violation=max(0.0, gap)))
    df = pd.DataFrame(rows).rename(columns={"cls": "class"})
    return StfCheck(bool(df["holds"].all()), df, "mean")


def stf_usual(ref: Samples, x: Samples, tol: float = 0.0) -> StfCheck:
    """STF in the usual stochastic order: F_i^ref(t) >= F_i^x(t) for all t, every class ([TF] Def. 4, Thm. 2).

    The empirical CDFs are compared at every pooled sample value (they only change
    there, so this is exact for the samples). The STF-st index of a class is the
    paper's (§VI-B, Fig. 16): "the fraction of the CDF of a protocol that is above the
    CDF of TFRC. The STF-st index of a protocol indicates the percentage of TCP flows
    whose rates should be improved to make the protocol STF-st. If the STF-st index of
    a protocol is zero, then it is STF-st; otherwise, the larger the STF-st index, the
    far away the protocol is to be STF-st." Here: the fraction of the samples of ``x``
    (its TCP flows) at whose value t the CDF of ``x`` lies above the reference's,
    F^x(t) > F^ref(t) + tol. 0 means STF-st (within tol), 1 that every flow of ``x``
    sits where its CDF is above the reference. (Before this version the index ran the
    other way: the fraction of pooled values where the order held, 1 meaning STF-st.)

    Args:
        ref: reference samples (see :func:`stf_mean` for the accepted shapes).
        x: samples of the protocol under test, same classes.
        tol: slack in probability units allowed at each t (e.g. a confidence band), >= 0.
    """
    if not (0 <= tol < 1):
        raise ValueError(f"tol must lie in [0, 1) (a probability), got {tol!r}")
    rows = []
    for key, a, b in _classes(ref, x):
        t = np.union1d(a, b)
        d = _ecdf(b, t) - _ecdf(a, t)          # > 0: x's CDF above the reference
        ok = d <= tol + 1e-12
        above = _ecdf(b, b) - _ecdf(a, b) > tol + 1e-12   # at each of x's own samples
        rows.append(dict(cls=key, n_ref=a.size, n_x=b.size, mean_ref=a.mean(), mean_x=b.mean(),
                         holds=bool(ok.all()), max_violation=float(max(0.0, d.max())),
                         st_index=float(above.mean())))
    df = pd.DataFrame(rows).rename(columns={"cls": "class"})
    return StfCheck(bool(df["holds"].all()), df, "st")


def stf_icv(ref: Samples, x: Samples, tol: float = 0.0) -> StfCheck:
    """STF in increasing concave order ([TF] Definition 3), every class.

    X^ref <=_icv X^x  iff  int_{-inf}^t F^ref(s) ds >= int_{-inf}^t F^x(s) ds for all t
    iff E[min(X^ref, t)] <= E[min(X^x, t)] for all t (Shaked & Shanthikumar, Thm. 4.A.2).
    Both sides are piecewise linear with kinks at the samples, so checking at every
    pooled sample value is exact.

    Args:
        ref: reference samples (see :func:`stf_mean` for the accepted shapes).
        x: samples of the protocol under test, same classes.
        tol: slack in rate units allowed in each comparison, >= 0.
    """
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    rows = []
    for key, a, b in _classes(ref, x):
        t = np.union1d(a, b)
        d = _mean_min(a, t) - _mean_min(b, t)     # > 0: violation
        scale = max(1.0, float(np.abs(t).max()))
        ok = d <= tol + 1e-12 * scale
        rows.append(dict(cls=key, n_ref=a.size, n_x=b.size, mean_ref=a.mean(), mean_x=b.mean(),
                         holds=bool(ok.all()), max_violation=float(max(0.0, d.max()))))
    df = pd.DataFrame(rows).rename(columns={"cls": "class"})
    return StfCheck(bool(df["holds"].all()), df, "icv")
