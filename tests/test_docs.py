"""The docs' runnable claims: code blocks whose output the docs show, and the commands they name."""
from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python_block(doc: str, marker: str) -> str:
    """The ```python block of docs/<doc> that contains `marker`."""
    text = (ROOT / "docs" / doc).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"docs/{doc}: {len(found)} python blocks contain {marker!r}"
    return found[0]


def _run_and_compare(block: str, preamble: str) -> None:
    """Run a block; its printed lines must be the block's trailing '# ' comment lines."""
    shown = [ln[2:] for ln in block.splitlines() if ln.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(preamble + block, "<doc block>", "exec"), {})
    assert out.getvalue().splitlines() == shown


def test_heterogeneous_example_2a_prints_what_the_doc_shows():
    _run_and_compare(_python_block("heterogeneous.md", "eqs = equilibria(net)"),
                     "import numpy as np\nfrom cclab.theory.heterogeneous import *\n")


# ---- docs/engine.md: what the CLI guarantees about errors ------------------------------------

def _bad_scenario(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('name = "x"\nduration = "1s"\n[[links]]\nfrom = "a"\nto = "b"\nrate = "1Mbps"\n'
                 'delay = "1ms"\nbogus = 1\n')
    return str(f)


def test_cli_error_is_one_line_without_traceback(tmp_path, capsys, monkeypatch):
    from cclab.cli import main

    monkeypatch.delenv("CCLAB_DEBUG", raising=False)
    for argv in (["run", _bad_scenario(tmp_path)], ["run", str(tmp_path / "missing.toml")]):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert err.startswith("cclab: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "links[0].bogus: unknown key" in (main(["run", _bad_scenario(tmp_path)]) and capsys.readouterr().err)


def test_cclab_debug_lets_the_exception_through(tmp_path, monkeypatch):
    import pytest
    from cclab.cli import main

    monkeypatch.setenv("CCLAB_DEBUG", "1")
    with pytest.raises(Exception, match="links\\[0\\].bogus"):
        main(["run", _bad_scenario(tmp_path)])


# ---- docs/engine.md: a duplex link's reverse direction is NAME-rev, or TO->FROM unnamed ---------

def test_reverse_link_names_are_what_engine_md_says(tmp_path):
    import cclab

    base = 'name = "x"\nduration = "1s"\n[[links]]\nfrom = "a"\nto = "b"\nrate = "1Mbps"\ndelay = "1ms"\n'
    traffic = '[[traffic]]\nname = "t"\ntype = "long_lived"\nsrc = "a"\ndst = "b"\nprotocol = "newreno"\n'
    named = tmp_path / "named.toml"
    named.write_text(base + 'name = "bottleneck"\n' + traffic)
    unnamed = tmp_path / "unnamed.toml"
    unnamed.write_text(base + traffic)
    names = lambda f: [link["name"] for link in cclab.validate(str(f))["config"]["links"]]  # noqa: E731
    assert names(named) == ["bottleneck", "bottleneck-rev"]
    assert names(unnamed) == ["a->b", "b->a"]
    text = (ROOT / "docs" / "engine.md").read_text()
    assert "named `NAME-rev` when `name` is given" in text and '`"TO->FROM"`' in text


# ---- every `make TARGET` and every repository path the docs name exists ----------------------

def _docs():
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def test_make_targets_named_in_docs_exist():
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), flags=re.M))
    named = {(d.name, m) for d in _docs() for m in re.findall(r"`make ([a-z][a-z0-9-]+)", d.read_text())}
    assert named and {(d, m) for d, m in named if m not in targets} == set()


def test_repository_paths_named_in_docs_exist():
    pattern = r"`((?:crates|python|tests|bench|scenarios|docs)/[A-Za-z0-9_./+-]+)`"
    missing = []
    for d in _docs():
        for p in re.findall(pattern, d.read_text()):
            p = p.rstrip(".")
            if not any(c.exists() for c in (ROOT / p, d.parent / p)):
                missing.append(f"{d.relative_to(ROOT)}: {p}")
    assert missing == []


def test_the_recipe_for_an_entry_runs(tmp_path):
    """docs/reproduction.md, "Writing an entry": the toy entry runs as written (on a tiny
    scenario, at a tiny size), through the store, and its claims come out judged."""
    import json

    from cclab.experiments import catalogue
    sys.path.insert(0, str(ROOT / "bench"))  # the crash tooling, not installed
    from crashtest import TINY

    def my_scenario(load, duration, warmup):
        sc = json.loads(json.dumps(TINY))
        sc["traffic"][0]["load"] = load
        sc["traffic"] = sc["traffic"][:1]
        sc["duration"], sc["warmup"] = f"{duration:g}s", f"{warmup:g}s"
        return sc

    block = _python_block("reproduction.md", "@reproduction(\"toy-fig0\"")
    try:
        exec(compile(block, "<doc block>", "exec"), {"my_scenario": my_scenario})
        e = catalogue.get("toy-fig0")
        outcome, paths = e.run(out=tmp_path, store=tmp_path / "store", cluster="serial", progress=False,
                               size=e.sizes.quick.replace(duration=20.0, warmup=2.0, max_seeds=4))
    finally:
        catalogue._REGISTRY.pop("toy-fig0", None)
    assert [c.text for c in outcome.claims] == ["the link is 60% busy at load 0.6 (Fig. 0: 0.6)",
                                                "busier at 0.6 than at 0.3"]
    assert outcome.claims[1].verdict() == "holds"
    assert "| the paper says | ours (95% CI) | seeds | |" in paths["md"].read_text()


# ---- no doc carries a path of the machine it was written on ----------------------------------

#: Absolute paths that only exist on some machine: home folders, the workplace's own
#: folders, a pytest temporary folder. A scratch folder a command is given (``--store
#: /tmp/s``) is the reader's choice and allowed.
_MACHINE_PATH = re.compile(r"(?<![\w.~$])(/work/|/home/\w|/Users/\w|/root/|/tmp/pytest-|/private/var/)")


def _shipped_text_files():
    """Every Markdown file of the checkout, and the scenarios and code a user reads."""
    for pattern in ("*.md", "docs/**/*.md", "scenarios/**/*.toml", "python/cclab/**/*.py", "crates/**/*.rs",
                    "bench/*.py"):
        yield from (p for p in ROOT.glob(pattern) if ".venv" not in p.parts and "target" not in p.parts)


def test_no_doc_or_source_carries_an_absolute_machine_path():
    found = []
    root = str(ROOT)
    for path in _shipped_text_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _MACHINE_PATH.search(line) or root in line:
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "absolute machine paths:\n" + "\n".join(found)


def test_the_machine_path_check_finds_one():
    assert _MACHINE_PATH.search("source /work/wt/sweeps/.venv/bin/activate")
    assert _MACHINE_PATH.search("see /home/alice/cclab/docs")
    assert not _MACHINE_PATH.search("cclab store ls --store /tmp/s")
    assert not _MACHINE_PATH.search("~/.cache/cclab/ns3-3.44/build")
