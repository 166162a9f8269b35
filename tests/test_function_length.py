"""Functions short enough to read at once: none in crates/ or python/cclab longer than
80 lines, but those still waiting to be split (issue 26), which may only shrink."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80

#: Functions still over the limit, with their length now: each may shrink (lower the
#: number, or remove the line once it is under the limit), none may grow.
WAITING: dict[str, int] = {}

_RUST_FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")


def _python_functions(path: Path):
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield n.name, n.end_lineno - n.lineno + 1


def _rust_functions(text: str):
    """(name, lines) of every function with a body: from its `fn` line to the brace that
    closes it (string and character literals and line comments left out of the count)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _RUST_FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            s = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j])
            s = re.sub(r"'(\\.|[^'\\])'", "''", s).split("//")[0]
            depth += s.count("{") - s.count("}")
            opened = opened or "{" in s
            if opened and depth <= 0:
                yield m.group(5), j - i + 1
                break


def _lengths() -> dict[str, int]:
    out = {}
    for p in sorted((ROOT / "python" / "cclab").rglob("*.py")):
        for name, n in _python_functions(p):
            key = f"{p.relative_to(ROOT)}::{name}"
            out[key] = max(out.get(key, 0), n)
    for p in sorted((ROOT / "crates").rglob("*.rs")):
        if "target" in p.parts:
            continue
        for name, n in _rust_functions(p.read_text(encoding="utf-8")):
            key = f"{p.relative_to(ROOT)}::{name}"
            out[key] = max(out.get(key, 0), n)
    return out


def test_no_function_is_longer_than_80_lines_but_those_waiting():
    long = {k: n for k, n in _lengths().items() if n > LIMIT}
    new = {k: n for k, n in long.items() if k not in WAITING}
    grown = {k: (n, WAITING[k]) for k, n in long.items() if k in WAITING and n > WAITING[k]}
    done = sorted(k for k in WAITING if k not in long)
    assert not new, f"split these into named steps: {new}"
    assert not grown, f"these grew (now, allowed): {grown}"
    assert not done, f"under the limit now: remove from WAITING: {done}"


def test_the_rust_scan_counts_a_function_to_its_closing_brace():
    text = 'fn short() {\n    let s = "}";\n}\n\npub(crate) fn f(x: u8) -> u8 {\n    if x > 0 {\n        1\n    } else { 0 }\n}\n'
    assert list(_rust_functions(text)) == [("short", 3), ("f", 5)]
