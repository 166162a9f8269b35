"""Parsing of rates and sizes given on the command line ("10M", "8Mbit", "1MiB")."""
from __future__ import annotations

import re

_SI = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_IEC = {"ki": 1024, "mi": 1024**2, "gi": 1024**3, "ti": 1024**4}
_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKmMgGtT]i?)?\s*(b|B|bit|bits|bps|Bps|B/s|byte|bytes)?\s*$")


def parse_amount(text: str | float | int, *, what: str, rate: bool) -> float:
    """A size in bytes (``rate=False``) or a rate in bytes per second (``rate=True``).

    A number with an optional SI (k, M, G, T: powers of 1000) or IEC (Ki, Mi, Gi: powers
    of 1024) prefix and an optional unit: ``B``/``bytes`` (the default) or, for rates,
    ``bit``/``bps`` (bits per second, divided by 8). ``10M`` is 10^7 bytes/s; ``8Mbit`` is
    10^6 bytes/s. Raises ValueError naming ``what``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = _RE.match(str(text))
        if not m:
            raise ValueError(f"{what}: expected a number with an optional unit (e.g. 10M, 8Mbit, 1MiB), got {text!r}")
        number, prefix, unit = m.groups()
        prefix = (prefix or "").lower()
        scale = _IEC[prefix] if prefix in _IEC else _SI[prefix]
        value = float(number) * scale
        if unit in ("bit", "bits", "bps"):
            if not rate:
                raise ValueError(f"{what}: a size is in bytes, got {text!r}")
            value /= 8
    if not (value > 0 and value < float("inf")):
        raise ValueError(f"{what}: expected a positive amount, got {text!r}")
    return value


def human_bytes(n: float) -> str:
    """``12.3 MB``: SI prefixes, three significant digits."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n} B"  # pragma: no cover
