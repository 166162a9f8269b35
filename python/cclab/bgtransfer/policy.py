"""Access policies of the manager: which controller decides how many chunks transfer at once.

* ``fairbat`` (default): FAIRBAT's adaptive limit (FAIRBAT paper §III, eq. 2), the
  controller of crates/control with its defaults (docs/protocols.md, FAIRBAT).
* ``static:N``: a fixed limit M = N (background paper §III-B, eq. 26); N may be fractional
  (⌊N⌋ and ⌈N⌉ alternate, as the controller does).
* ``rate``: rate tracking (background paper §IV), crates/control's ``rate_tracking``.
* ``unlimited``: no access control, the papers' "vanilla" background: every chunk starts
  when it is released.

Controller parameters are given as ``KEY=VALUE`` (``--param tau=20 --param period=30``),
read and checked by cclab_control::read through the binding ``cclab._core.AccessController``
(the same keys, defaults and messages as the simulators').
"""
from __future__ import annotations

from dataclasses import dataclass, field

NAMES = ("fairbat", "static:N", "rate", "unlimited")


@dataclass
class Policy:
    """A parsed ``--policy`` with its controller parameters (None for unlimited)."""

    name: str
    params: dict | None = field(default=None)

    @property
    def controlled(self) -> bool:
        return self.params is not None

    def controller(self, start: float = 0.0, overrides: dict | None = None):
        """A new ``cclab._core.AccessController`` starting at ``start`` (None: unlimited)."""
        if self.params is None:
            return None
        from cclab._core import AccessController

        params = dict(self.params)
        params.update(overrides or {})
        try:
            return AccessController(params, start, None, "--param")
        except ValueError as exc:
            raise ValueError(str(exc).replace("--param.", "--param ", 1)) from None

    def param(self, key: str, default=None):
        return (self.params or {}).get(key, default)


def _value(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def parse_policy(spec: str, params: dict | list | tuple | None = None) -> Policy:
    """``fairbat``, ``static:N``, ``rate`` or ``unlimited`` with parameters (a dict, or a list
    of ``KEY=VALUE`` strings). Checks them now (ValueError naming the key)."""
    if isinstance(params, (list, tuple)):
        kv = {}
        for item in params:
            key, eq, val = str(item).partition("=")
            if not eq or not key.strip():
                raise ValueError(f"--param: expected KEY=VALUE, got {item!r}")
            kv[key.strip()] = _value(val.strip())
        params = kv
    params = dict(params or {})
    if params.get("fractional") == "weight":
        raise ValueError("--param fractional: \"weight\" is the flow-level model's fluid idealisation, which a "
                         "sender of TCP connections cannot realise; the manager alternates (\"alternate\")")
    if "policy" in params:
        raise ValueError("--param policy: give the policy with --policy")
    name, _, arg = spec.partition(":")
    name = name.strip().lower()
    if name == "static":
        try:
            limit = float(arg)
        except ValueError:
            raise ValueError(f"--policy: static needs its limit, static:N with N > 0, got {spec!r}") from None
        pol = Policy("static", {"policy": "static", "limit": limit, **params})
    elif arg:
        raise ValueError(f"--policy: only static takes an argument (static:N), got {spec!r}")
    elif name == "fairbat":
        pol = Policy("fairbat", {"policy": "fairbat", **params})
    elif name in ("rate", "rate_tracking"):
        pol = Policy("rate", {"policy": "rate_tracking", **params})
    elif name in ("unlimited", "vanilla"):
        if params:
            raise ValueError(f"--param {next(iter(params))}: the unlimited policy has no parameters")
        pol = Policy("unlimited", None)
    else:
        raise ValueError(f"--policy: unknown policy {spec!r} (expected one of {', '.join(NAMES)})")
    pol.controller(0.0)  # check the parameters before any work is done
    return pol
