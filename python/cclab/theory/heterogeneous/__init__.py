"""Heterogeneous congestion control (Tang, Wei, Low and Chiang): equilibria, efficiency,
fairness and the two-timescale algorithm.

Model (section IV): :class:`Network` (c, m, R, U), price mappings :class:`Linear`,
:class:`Power`, :class:`Red` (eq. 2), :class:`CustomMapping`, utilities :class:`AlphaFair`,
:class:`CustomUtility`; :func:`source_rates` (eq. 5), :func:`link_loads` (eq. 6),
:func:`equilibrium_residual` (eq. 7).
Equilibria: :func:`equilibria` (with the index-theorem check of completeness), :func:`solve_equilibrium`, :func:`dual_dynamics` (eq. 4).
Welfare (section V): :func:`num_optimum` (eqs. 8-9, 23-24), :func:`efficiency` (eq. 15,
Theorem 3), :func:`intra_protocol_check` (Theorem 4), :func:`scalers_for_allocation` (Theorem 5).
Design (section VI): :func:`two_timescale` (Algorithm 2, Theorem 6).
"""
from .model import (AlphaFair, CustomMapping, CustomUtility, Linear, Network, Power, PriceMapping, Red,
                    ScaledView, Utility, aggregate_prices, effective_prices, equilibrium_residual,
                    link_loads, source_rates)
from .equilibria import (Equilibrium, EquilibriumSet, IncompleteEquilibria, dual_dynamics, equilibria,
                         load_jacobian, price_scale, solve_equilibrium)
from .welfare import (Allocation, Efficiency, NumSolution, efficiency, gamma, intra_protocol_check,
                      num_optimum, scalers_for_allocation)
from .two_timescale import (BatchResult, TwoTimescaleResult, mu_target, random_network, slow_map_jacobian,
                            two_timescale, two_timescale_batch)

__all__ = [
    "AlphaFair", "CustomMapping", "CustomUtility", "Linear", "Network", "Power", "PriceMapping", "Red",
    "ScaledView", "Utility", "aggregate_prices", "effective_prices", "equilibrium_residual", "link_loads",
    "source_rates", "Equilibrium", "EquilibriumSet", "IncompleteEquilibria", "dual_dynamics", "equilibria", "load_jacobian", "price_scale",
    "solve_equilibrium", "Allocation", "Efficiency", "NumSolution", "efficiency", "gamma",
    "intra_protocol_check", "num_optimum", "scalers_for_allocation",
    "TwoTimescaleResult", "mu_target", "random_network", "two_timescale", "BatchResult",
    "two_timescale_batch", "slow_map_jacobian",
]
