"""Shared builders for the packet-level tests."""
from __future__ import annotations

import pytest

try:  # property-based tests (tests/test_properties.py): a fast subset by default, `make fuzz` for long
    from hypothesis import HealthCheck, settings

    settings.register_profile("default", max_examples=12, deadline=None, derandomize=True, database=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("fuzz", max_examples=800, deadline=None, derandomize=False,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("default")
except ImportError:  # pragma: no cover
    pass


def dumbbell(*, rate="10Mbps", delay="25ms", limit="80ms", duration="300s", warmup="0s", seed=1,
             traffic=(), tcp=None, record=None) -> dict:
    """A one-link scenario a -> b (duplex, so ACKs return on b -> a)."""
    sc = {
        "name": "test",
        "duration": duration,
        "warmup": warmup,
        "seed": seed,
        "links": [{"name": "bn", "from": "a", "to": "b", "rate": rate, "delay": delay,
                   "queue": {"type": "droptail", "limit": limit}}],
        "traffic": [dict(t) for t in traffic],
    }
    if tcp:
        sc["tcp"] = dict(tcp)
    if record:
        sc["record"] = dict(record)
    return sc


def long_lived(count=1, name="long", **kw) -> dict:
    return {"name": name, "type": "long_lived", "src": "a", "dst": "b", "count": count, **kw}


def poisson(load, name="short", mean="3MB", dist="exponential", **kw) -> dict:
    return {"name": name, "type": "poisson", "src": "a", "dst": "b", "load": load,
            "size": {"dist": dist, "mean": mean}, **kw}


@pytest.fixture(scope="session")
def cclab_core():
    """Skip cleanly if the compiled core was not built (pure-theory checkouts)."""
    return pytest.importorskip("cclab._core")
