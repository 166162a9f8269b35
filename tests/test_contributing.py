"""CONTRIBUTING.md's recipes match the code: every file a recipe names exists, and
every built-in controller, queue discipline and reproduction is in each place its
recipe says a new one must go. A recipe that went stale (a file moved, a list
renamed, a place added that the existing ones use) fails here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "CONTRIBUTING.md").read_text()


def _recipe(title: str) -> str:
    parts = re.split(r"^## ", GUIDE, flags=re.M)
    (body,) = [p for p in parts if p.startswith(title)]
    return body


def _flat(title: str) -> str:
    """A recipe's text with its line breaks and runs of spaces as single spaces."""
    return " ".join(_recipe(title).split())


def _files(recipe: str) -> list[str]:
    """The paths of a recipe's "Files it touches" list (first backticked word of each item)."""
    return re.findall(r"^- `([^`]+)`", recipe, flags=re.M)


def _read(path: str) -> str:
    return (ROOT / path).read_text()


RECIPES = {"Recipe 1: a congestion controller": "NAME", "Recipe 2: a queue discipline": "NAME",
           "Recipe 3: a reproduction": "PAPER"}


@pytest.mark.parametrize("title", list(RECIPES))
def test_every_file_a_recipe_names_exists(title):
    files = _files(_recipe(title))
    assert len(files) >= 5, files
    for f in files:
        if "NAME" in f or "PAPER" in f:  # the new file: its folder exists, and so do its siblings
            folder = ROOT / f.rstrip("/").rsplit("/", 1)[0]
            assert folder.is_dir(), f
        else:
            assert (ROOT / f).exists(), f


def _controllers() -> list[tuple[str, str]]:
    """(variant, module) of every built-in window protocol, from window_protocols!."""
    reg = _read("crates/sim/src/transport/cc/registry.rs")
    block = reg[reg.index("window_protocols! {"):]
    return re.findall(r"^\s+(\w+) => (?:Box<)?super::(\w+)>?,", block, flags=re.M)


def _protocol_names() -> dict[str, tuple[str, str]]:
    """Variant -> (the protocol's NAME, the module it is in), from each controller's file."""
    names = {}
    for variant, typ in _controllers():
        (path,) = [p for p in (ROOT / "crates/sim/src/transport/cc").glob("*.rs")
                   if re.search(rf"impl WindowProtocol for {typ} \{{", p.read_text())]
        name = re.search(rf'impl WindowProtocol for {typ} \{{\s+const NAME: &\'static str = "(\w+)";',
                         path.read_text()).group(1)
        names[variant] = (name, path.stem)
    return names


def test_every_controller_is_where_recipe_1_puts_a_new_one():
    mod = _read("crates/sim/src/transport/cc/mod.rs")
    fuzz = _read("tests/test_properties.py")
    window = re.search(r"^WINDOW = \[(.*)\]", fuzz, flags=re.M).group(1)
    protocols = _read("docs/protocols.md")
    engine = _read("docs/engine.md")
    row = next(line for line in engine.splitlines() if line.startswith("| `protocol` |"))
    names = _protocol_names()
    assert len(names) >= 7
    for variant, (name, module) in names.items():
        assert f"mod {module};" in mod and f"pub use {module}::" in mod, f"{module} not declared in cc/mod.rs"
        assert f'"{name}"' in window, f"{name} missing from tests/test_properties.py WINDOW"
        assert f'`"{name}"`' in row, f"{name} missing from docs/engine.md's protocol row"
        assert re.search(rf"^## .*{variant if variant != 'TcpLp' else 'TCP-LP'}", protocols, flags=re.M | re.I) or \
            re.search(rf"^## .*{name.replace('_', '-')}", protocols, flags=re.M | re.I), f"no section for {name}"
    # The recipe's paths are the ones the controllers use.
    recipe = _recipe("Recipe 1")
    assert "window_protocols!" in recipe and "WINDOW" in recipe and "WindowProtocol" in recipe


def _disciplines() -> list[tuple[str, str]]:
    """(variant, name) of every built-in queue discipline, from queue_disciplines!."""
    reg = _read("crates/sim/src/net/queue/registry.rs")
    block = reg[reg.rindex("queue_disciplines! {"):]
    return re.findall(r'^\s+(\w+)\("(\w+)"\) => super::\w+;', block, flags=re.M)


def test_every_queue_discipline_is_where_recipe_2_puts_a_new_one():
    mod = _read("crates/sim/src/net/queue/mod.rs")
    fuzz = _read("tests/test_properties.py")
    queues = fuzz[fuzz.index("def queues("):fuzz.index("def classes(")]
    not_fuzzed = fuzz[fuzz.index("NOT_FUZZED = {"):fuzz.index("}", fuzz.index("NOT_FUZZED = {"))]
    engine_row = next(line for line in _read("docs/engine.md").splitlines() if line.startswith("| `queue` |"))
    protocols = _read("docs/protocols.md")
    queue_docs = protocols[protocols.index("## Queue disciplines and ECN"):]
    found = _disciplines()
    assert {n for _, n in found} >= {"droptail", "red", "linear", "rcp"}
    for variant, name in found:
        assert (ROOT / f"crates/sim/src/net/queue/{name}.rs").exists(), name
        assert f"mod {name};" in mod, f"no `mod {name};` in net/queue/mod.rs"
        assert f'"type": "{name}"' in queues or f'"{name}"' in not_fuzzed, f"{name}: neither fuzzed nor in NOT_FUZZED"
        assert f'type = "{name}"' in engine_row, f"{name} missing from docs/engine.md's queue row"
        assert name in queue_docs.lower(), f"no section for {name} in docs/protocols.md"
    params = _read("crates/sim/tests/params.rs")
    for _, name in found:
        if name != "droptail":  # drop-tail's only parameter is its limit, checked by every link
            assert f'"type": "{name}"' in params, f"no out-of-range case for {name} in crates/sim/tests/params.rs"


def test_every_reproduction_is_where_recipe_3_puts_a_new_one():
    from cclab.experiments import catalogue

    table = _read("docs/reproduction.md")
    pages = "".join(p.read_text() for p in (ROOT / "docs/reproduction").glob("*.md"))
    tests = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*reproduction*.py"))
    entries = catalogue.entries()
    assert len(entries) > 30
    for e in entries:
        module = e.func.__module__.rsplit(".", 1)[-1]
        assert (ROOT / f"python/cclab/experiments/reproductions/{module}.py").exists()
        assert f"| `{e.name}` |" in table, f"{e.name} has no row in docs/reproduction.md"
        assert e.name in pages, f"{e.name} has no section in docs/reproduction/"
        assert e.size_text(True), f"{e.name} states no quick size"
    assert "ctx.size" in _recipe("Recipe 3") and "tolerance" in _recipe("Recipe 3")
    assert tests


def test_every_path_and_name_the_guide_points_to_exists():
    """The files a recipe tells a newcomer to read (a model controller, the framework of a
    reproduction, a shared reader) exist, beyond the files it touches: a pointer that went
    stale sends the next contributor searching."""
    placeholders = ("NAME", "PAPER", "FILE", "paper-fig")
    paths = set(re.findall(r"`((?:crates|python|tests|bench|scenarios|docs)/[\w./-]+)`", GUIDE))
    missing = [p for p in paths if not any(h in p for h in placeholders) and not (ROOT / p).exists()]
    assert missing == []
    # Bare file names (`newreno.rs`, `droptail.rs`, `profile.rs`): somewhere in the engine.
    sim = {p.name for p in (ROOT / "crates/sim").rglob("*.rs")}
    bare = set(re.findall(r"`(\w+\.rs)`", GUIDE)) - {"NAME.rs"}
    assert bare and bare <= sim, bare - sim
    # The helpers the recipes name, where they say they are.
    queue_mod = _read("crates/sim/src/net/queue/mod.rs")
    for helper in ("read_limit", "read_thresholds", "read_number", "overflows"):
        assert f"`{helper}`" in _recipe("Recipe 2") and f"fn {helper}(" in queue_mod, helper
    assert "`RenoGrowth`" in _recipe("Recipe 1")
    assert "pub struct RenoGrowth" in _read("crates/sim/src/transport/cc/newreno.rs")
    from cclab.experiments.catalogue import Context, Outcome, reproduction  # noqa: F401 (the recipe's import)

    assert "from cclab.experiments.catalogue import Context, Outcome, reproduction" in _flat("Recipe 3")


def test_the_guide_says_how_to_run_what_it_adds():
    """Each recipe names the tests to run and a command that runs the new thing; the
    cargo commands name their test binary (a bare filter builds every one of them)."""
    for line in re.findall(r"^cargo test .*$", GUIDE, flags=re.M):
        assert "--lib" in line or "--test" in line, line
    for title in ("Recipe 1", "Recipe 2"):
        r = _flat(title)
        assert "--lib NAME" in r and "--test params" in r and "cclab run" in r, title
    assert (ROOT / "crates/sim/tests/params.rs").exists()
    r3 = _flat("Recipe 3")
    assert "cclab reproduce paper-figN" in r3 and "cclab reproduce --list" in r3
    cli = _read("python/cclab/cli.py")
    assert '"reproduce"' in cli and '"--list"' in cli and '"--store"' in cli
