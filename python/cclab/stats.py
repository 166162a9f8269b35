"""Small statistics shared by the sweeps, the flow-level simulator and the reproductions:
Student's t quantiles in closed form (no SciPy needed) and the mean with the half-width
of its confidence interval."""
from __future__ import annotations

import math


def _t_central(t: float, dof: int) -> float:
    """P(|T| < t) for Student's t with an integer number of degrees of freedom, in closed
    form (Abramowitz & Stegun 26.7.3 for odd dof, 26.7.4 for even dof)."""
    theta = math.atan(t / math.sqrt(dof))
    c2 = math.cos(theta) ** 2
    if dof % 2:
        term, acc = math.cos(theta), 0.0
        if dof > 1:
            acc = term
            for k in range(3, dof - 1, 2):  # the factors (k-1)/k of 2·4···(dof-3) / 1·3···(dof-2)
                term *= c2 * (k - 1) / k
                acc += term
        return 2 / math.pi * (theta + math.sin(theta) * acc)
    term, acc = 1.0, 1.0
    for k in range(2, dof - 1, 2):  # the factors (k-1)/k of 1·3···(dof-3) / 2·4···(dof-2)
        term *= c2 * (k - 1) / k
        acc += term
    return math.sin(theta) * acc


_T_CACHE: dict[tuple[float, int], float] = {}


def t_quantile(confidence: float, dof: int) -> float:
    """The t such that P(|T| < t) = confidence (Student's t, integer dof >= 1): the
    multiplier of s/sqrt(n) in a two-sided confidence interval of a mean."""
    if not 0 < confidence < 1 or dof < 1:
        raise ValueError(f"expected 0 < confidence < 1 and dof >= 1, got {confidence}, {dof}")
    k = (confidence, int(dof))
    if k not in _T_CACHE:
        lo, hi = 0.0, 1.0
        while _t_central(hi, dof) < confidence:
            hi *= 2
        for _ in range(200):  # bisection to the last bit
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if _t_central(mid, dof) < confidence else (lo, mid)
        _T_CACHE[k] = hi
    return _T_CACHE[k]


def mean_ci(x, confidence: float = 0.95) -> tuple[float, float]:
    """Mean of the finite values of ``x`` and the half-width of its two-sided Student-t
    confidence interval (NaN, NaN without a value; mean, NaN with one)."""
    import numpy as np  # imported here: the sweeps import this module in their workers

    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return math.nan, math.nan
    if len(x) < 2:
        return float(x.mean()), math.nan
    return float(x.mean()), float(t_quantile(confidence, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
