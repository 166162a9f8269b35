"""The import layering of the Python package, as crates/sim/tests/layering.rs checks the
engine's: a stated order of the package's parts, every import (at module level or inside
a function) going down it, no cycle between the modules of one part at module level,
and no private name imported from another package.

Parts, lowest first (a part may import the parts before it, never one after it):
"""
from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "python" / "cclab"

#: The parts of cclab, lowest first; parts on one line are side by side (neither imports
#: the other). `cclab` (the package's __init__) is the facade on top: it only re-exports.
ORDER = [
    {"_core", "names", "stats", "outdir", "sqlite_reader", "plotting", "traces"},
    {"scenario"},
    {"validation", "summary"},
    {"api", "flowsim", "theory", "describe"},
    {"inspect", "sweeps"},
    {"experiments", "bgtransfer"},
    {"testbed", "reproduction_page"},
    {"cli"},
]
RANK = {part: i for i, parts in enumerate(ORDER) for part in parts}

#: What any module may take from the package root: constants it defines without imports.
ROOT_CONSTANTS = {"__version__"}


def _module(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path):
    """(target module, imported name or None, at module level) of every cclab import."""
    mod = _module(path, root)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        module_level = id(node) in top
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "cclab" or target.startswith("cclab."):
                for a in node.names:
                    yield target, a.name, module_level
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "cclab" or a.name.startswith("cclab."):
                    yield a.name, None, module_level


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "cclab"


def _resolve(target: str, name: str | None, root: Path) -> str:
    """The module an import reaches: `from cclab import api` reaches cclab.api."""
    if name and ((root.parent / Path(*target.split("."), f"{name}.py")).exists()
                 or (root.parent / Path(*target.split("."), name)).is_dir()
                 or (target == "cclab" and name == "_core")):
        return f"{target}.{name}"
    return target


@functools.lru_cache(maxsize=None)
def _all_imports(root: Path = ROOT) -> tuple:
    return tuple((_module(path, root), _resolve(target, name, root), name, top)
                 for path in sorted(root.rglob("*.py")) for target, name, top in _imports(path, root))


def test_every_part_is_placed():
    parts = {_part(_module(p)) for p in ROOT.rglob("*.py")} | {"_core"}
    assert parts - {"cclab"} == set(RANK), f"place these in ORDER: {parts - {'cclab'} - set(RANK)}"


def downward_violations(root: Path = ROOT) -> list[str]:
    wrong = []
    for mod, target, name, _ in _all_imports(root):
        a, b = _part(mod), _part(target)
        if a == b or a == "cclab":
            continue
        if b == "cclab":
            if name not in ROOT_CONSTANTS:
                wrong.append(f"{mod} imports {name or 'cclab'} from the package root (import its module)")
            continue
        if RANK[b] >= RANK[a]:
            wrong.append(f"{mod} ({a}) imports {target} ({b}), which is not below it")
    return wrong


def cycles(root: Path = ROOT) -> list[str]:
    graph = defaultdict(set)
    for mod, target, _, top in _all_imports(root):
        if top and target != mod:
            graph[mod].add(target)
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append(" -> ".join(stack[stack.index(n):] + [m, n]) if n in stack else f"{m} -> {n}")
            elif n not in state:
                visit(n, stack + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    return cycles


def private_imports(root: Path = ROOT) -> list[str]:
    wrong = []
    for mod, target, name, _ in _all_imports(root):
        private = name and name.startswith("_") and not name.startswith("__") and name != "_core"
        own_package = target.rpartition(".")[0] == mod.rpartition(".")[0]
        if private and not own_package:
            wrong.append(f"{mod} imports {name} from {target}")
    return wrong


def test_imports_go_down_the_order():
    assert not (v := downward_violations()), "\n".join(v)


def test_no_module_level_cycles():
    assert not (v := cycles()), "\n".join(v)


def test_no_private_names_across_packages():
    assert not (v := private_imports()), "\n".join(v)


def test_the_checks_find_what_they_look_for(tmp_path):
    pkg = tmp_path / "cclab"
    for sub in ("sweeps", "experiments"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("__version__ = '0'\n")
    (pkg / "scenario.py").write_text("from .api import run\n")  # a use from below, and a cycle
    (pkg / "api.py").write_text("from .scenario import load\nfrom . import __version__\n")
    (pkg / "sweeps" / "store.py").write_text("def _fsync(): pass\n")
    (pkg / "experiments" / "runs.py").write_text("def f():\n    from ..sweeps.store import _fsync\n    import cclab\n")
    assert downward_violations(pkg) == ["cclab.experiments.runs imports cclab from the package root (import its module)",
                                        "cclab.scenario (scenario) imports cclab.api (api), which is not below it"]
    assert cycles(pkg) == ["cclab.api -> cclab.scenario -> cclab.api"]
    assert private_imports(pkg) == ["cclab.experiments.runs imports _fsync from cclab.sweeps.store"]
