"""The docs' runnable claims: code blocks whose output the docs show, and the commands they name."""
from __future__ import annotations

import contextlib
import io
import re
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
