"""Closed forms and solvers of the five papers, one module per topic."""
