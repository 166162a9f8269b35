"""Quick-mode runs of the heterogeneous-congestion-control reproductions (cclab reproduce hetero-*)."""
from __future__ import annotations

import pandas as pd
import pytest

from cclab.experiments import catalogue

NAMES = ["hetero-exp1-equilibria", "hetero-exp1-two-timescale", "hetero-exp2-async", "hetero-efficiency-bound"]


def test_entries_are_registered():
    names = {e.name for e in catalogue.entries()}
    assert set(NAMES) <= names


def _run(name, tmp_path):
    outcome, paths = catalogue.get(name).run(quick=True, out=tmp_path, progress=False)
    for kind in ("csv", "png", "md"):
        assert paths[kind].exists()
    assert isinstance(outcome.data, pd.DataFrame) and len(outcome.data)
    return outcome


def test_exp1_equilibria_quick(tmp_path):
    out = _run("hetero-exp1-equilibria", tmp_path)
    eq = out.data[out.data.kind == "equilibrium"]
    assert len(eq) == 3 and int(eq.stable.sum()) == 2
    assert (eq.residual < 1e-10).all()


@pytest.mark.slow
def test_exp1_two_timescale_quick(tmp_path):
    out = _run("hetero-exp1-two-timescale", tmp_path)
    assert out.agrees is True


@pytest.mark.slow
def test_exp2_async_quick(tmp_path):
    out = _run("hetero-exp2-async", tmp_path)
    assert len(out.data) == 300
    med = out.data.groupby("probability")["time_within_1e-3"].median()
    assert med[1.0] < med[0.5] < med[0.2]           # asynchronism slows convergence (Fig. 14)


@pytest.mark.slow
def test_efficiency_bound_quick(tmp_path):
    out = _run("hetero-efficiency-bound", tmp_path)
    assert (out.data.ratio >= out.data.bound - 1e-12).all()
