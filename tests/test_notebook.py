"""The example notebook of docs/examples runs start to end (nbclient, the test
extras' ipykernel): every cell without an error, the run displayed as an HTML
table, and the figure drawn."""
from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "examples" / "ledbat-vs-reno.ipynb"


def test_the_ledbat_notebook_runs(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    # Each cell has 30 s (the whole notebook takes about 6 s on the 2-core machine).
    nbclient.NotebookClient(nb, timeout=30, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert html and html[0].startswith("<div><b>cclab run</b> ledbat-vs-reno") and "<table" in html[0]
    assert any("image/png" in o.get("data", {}) for o in outputs)
