"""The implementable policy's closed forms ([BG] eq. (15), cclab.theory.background):
its link term from closed-form log-pmfs against scipy's frozen distributions, the
way it was computed before, in the same run (both give the same number).

    .venv/bin/python bench/theory_terms.py
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from cclab.theory import background as tb


def frozen_link(n_star: int, k: int, rho: float, lam: float) -> float:
    """The link term as it was computed before: scipy's frozen distributions."""
    return float(stats.poisson(lam).logpmf(n_star) - stats.nbinom(k + 1, 1 - rho).logpmf(n_star))


def closed_link(n_star: int, k: int, rho: float, lam: float) -> float:
    return tb._log_poisson_pmf(n_star, lam) - tb._log_negbin_pmf(n_star, k + 1, 1 - rho)


def main() -> None:
    cases = [(int(math.floor(c - 1 + 1e-12)), 1, rho, rho * c)
             for rho in (0.3, 0.5, 0.9) for c in np.linspace(1.0, 60.0, 400)]
    times, values = {}, {}
    for name, fn in (("scipy frozen", frozen_link), ("closed form", closed_link)):
        t0 = time.perf_counter()
        values[name] = [fn(*c) for c in cases]
        times[name] = (time.perf_counter() - t0) / len(cases)
    worst = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(values["scipy frozen"], values["closed form"]))
    for name, t in times.items():
        print(f"{name:14} {t * 1e6:9.1f} us per link term")
    print(f"speed-up x{times['scipy frozen'] / times['closed form']:.0f}; largest relative difference {worst:.1e}")


if __name__ == "__main__":
    main()
