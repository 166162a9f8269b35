"""Issue 12, the output side: a saved run read back (cclab.load), shown, plotted and
compared; the ready scenarios listed; a short repr(Result)."""
from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import dumbbell, long_lived, poisson

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab.api import json_safe  # noqa: E402
from cclab.cli import main  # noqa: E402
from cclab.inspect import compare as cmp  # noqa: E402
from cclab.inspect import plots  # noqa: E402
from cclab.inspect.saved import SavedRunError  # noqa: E402
from cclab.summary import print_summary  # noqa: E402

# Short flows and access-controlled background files over 30 s: every panel of
# `cclab plot` has data (queues, throughput, active flows, the access controller),
# and the Poisson classes offer 1.03 x 1500/1460 of the link, so validation warns.
MIXED = dumbbell(duration="30s", warmup="2s", limit="50pkts", delay="10ms", record={"interval": "0.5s"},
                 traffic=[poisson(0.7, mean="100kB"),
                          poisson(0.33, name="bg", mean="300kB", access={"policy": "fairbat"})])
# Long-lived flows only: nothing ever completes.
LONG = dumbbell(duration="10s", traffic=[long_lived(2, name="short")], record={"interval": "0.5s"})


@pytest.fixture(scope="module")
def mixed():
    return cclab.run(MIXED)


@pytest.fixture(scope="module")
def saved(mixed, tmp_path_factory):
    return mixed.save(tmp_path_factory.mktemp("mixed") / "run")


def _same_result(a, b):
    for t in ("flows", "links", "series", "arrivals"):
        pd.testing.assert_frame_equal(getattr(a, t), getattr(b, t), check_exact=True, obj=t)
    assert a.summary.keys() == b.summary.keys()
    for k, v in a.summary.items():
        w = b.summary[k]
        assert (v == w) or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), k
        assert type(v) is type(w), k
    assert (a.config, a.scenario, a.warnings) == (b.config, b.scenario, b.warnings)


def test_load_gives_back_the_run_table_by_table(mixed, saved):
    assert mixed.warnings and "at or above capacity" in mixed.warnings[0]
    loaded = cclab.load(saved)
    assert isinstance(loaded, cclab.Result)
    _same_result(mixed, loaded)
    assert len(loaded.series) > 0 and loaded.arrivals.empty


def test_load_gives_back_recorded_arrivals_and_nan_summaries(tmp_path):
    # A class with no finished flow has a NaN mean completion time (None in JSON).
    sc = {**LONG, "record": {"interval": "1s", "arrivals": ["bn"]}}
    r = cclab.run(sc)
    assert len(r.arrivals) > 0 and math.isnan(r.summary["short.mean_completion_time_s"])
    _same_result(r, cclab.load(r.save(tmp_path / "long")))


def test_load_names_what_is_missing(tmp_path, saved):
    with pytest.raises(SavedRunError, match="no such folder"):
        cclab.load(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SavedRunError, match="is a file"):
        cclab.load(tmp_path / "file")
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "flows.parquet").write_bytes((saved / "flows.parquet").read_bytes())
    with pytest.raises(SavedRunError, match=r"not a saved run: missing links.parquet, series.parquet, summary.json"):
        cclab.load(partial)
    for f in ("links.parquet", "series.parquet", "summary.json"):
        (partial / f).write_bytes((saved / f).read_bytes())
    (partial / "series.parquet").write_text("not parquet")
    with pytest.raises(SavedRunError, match=r"series.parquet: not a readable Parquet table"):
        cclab.load(partial)
    # the CLI: one line, exit status 2
    assert main(["show", str(tmp_path / "nowhere")]) == 2


def test_repr_is_short():
    # 60 classes: the dataclass's repr printed every table (4 KB for a small run)
    r = cclab.run(dumbbell(duration="1s", traffic=[long_lived(1, name=f"c{i}") for i in range(60)]))
    text = repr(r)
    assert text == ("<cclab.Result 'test' seed 1, 1 s (warm-up 0 s): 60 classes c0, c1, c2, c3, ...; "
                    "2 links bn, bn-rev; 60 flows (0 finished), 0 warnings>")


def test_show_prints_the_run_summary_and_what_was_recorded(mixed, saved, capsys):
    print_summary(mixed)
    expected = capsys.readouterr().out
    # run.json as `cclab run --out` records it
    meta = saved.parent / "with-meta"
    meta.mkdir()
    for p in saved.iterdir():
        (meta / p.name).write_bytes(p.read_bytes())
    (meta / "run.json").write_text(json.dumps({"cclab_version": "9.9.9", "seed": 1,
                                              "command": ["cclab", "run", "x.toml"]}))
    assert main(["show", str(meta)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(expected)  # the very table `cclab run` printed
    digest = hashlib.sha256(json.dumps(mixed.config).encode()).hexdigest()
    assert f"configuration sha256: {digest}" in out
    assert "seed 1 (effective), cclab 9.9.9" in out and "command: cclab run x.toml" in out
    assert f"warning: {mixed.warnings[0]}" in out
    assert main(["show", str(saved), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] == json.loads(json.dumps(json_safe(mixed.summary)))
    assert doc["run"] == {"path": str(saved), "seed": 1, "cclab_version": cclab.__version__, "command": None,
                          "config_sha256": digest}
    assert doc["warnings"] == mixed.warnings
    # a folder without perf.json (the machine's wall time) still shows, saying so
    (meta / "perf.json").unlink()
    assert main(["show", str(meta)]) == 0
    assert f"engine: {mixed.summary['events']:,} events (wall time not recorded)\n" in capsys.readouterr().out


def test_plot_draws_every_recorded_series_and_the_completion_times(mixed, saved, capsys):
    panels = plots.series_panels(mixed.series)
    assert [p[1] for p in panels] == ["queue (packets)", "throughput (Mbit/s)", "active flows", "files"]
    # the reverse link never queues: left out, and the title says so
    assert [n for _, n, *_ in panels[0][3]] == ["bn"] and "always 0: bn-rev" in panels[0][2]
    # the lines are the series' values (throughput scaled to Mbit/s)
    s = mixed.series
    for m, n, t, v in panels[1][3]:
        g = s[(s.metric == m) & (s.name == n)]
        np.testing.assert_array_equal(t, g.time.to_numpy())
        np.testing.assert_allclose(v, g.value.to_numpy() / 1e6, rtol=1e-15)
    assert [(m, n) for m, n, *_ in panels[3][3]] == [("access_limit", "bg"), ("access_active", "bg"),
                                                     ("access_waiting", "bg")]
    assert main(["plot", str(saved), "--out", str(saved.parent / "p.png")]) == 0
    assert capsys.readouterr().out == f"wrote {saved.parent / 'p.png'}\n"
    assert (saved.parent / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_many_classes_keep_the_largest_with_distinct_colours():
    # 12 classes of loads 0.01..0.12: each panel draws the 8 with the most (flows, throughput)
    sc = dumbbell(duration="20s", record={"interval": "1s"},
                  traffic=[poisson(0.01 * (i + 1), name=f"c{i:02d}", mean="20kB") for i in range(12)])
    r = cclab.run(sc)
    classes, note = plots.completion_classes(r)
    counts = plots.completion_data(r)["class"].value_counts()
    assert len(classes) == 8 and note == "the 8 classes with the most flows of 12"
    assert min(counts[c] for c in classes) >= max(counts[c] for c in counts.index if c not in classes)
    panels = plots.series_panels(r.series)
    assert all(len({n for _, n, *_ in p[3]}) <= plots.MAX_LINES for p in panels)
    colors = plots.color_map(r, panels)
    drawn = {n for p in panels if p[1] != "queue (packets)" for _, n, *_ in p[3]} | set(classes)
    assert len(drawn) <= 10 and len({colors[n] for n in drawn}) == len(drawn)  # tab10: no colour twice


def test_size_bin_medians():
    # sizes 1..100 in 12 log bins: each bin's median is that of the values inside it
    sizes = np.arange(1, 101, dtype=float)
    edges = plots.size_bins(sizes)
    rows = plots.binned(sizes, sizes * 2, edges, np.median)
    assert len(rows) >= 6
    for lo, hi, mid, n, med in rows:
        inside = sizes[(sizes >= lo) & ((sizes < hi) | (hi == edges[-1]))]
        assert n == len(inside) >= plots.MIN_PER_BIN and med == np.median(inside) * 2
        assert mid == pytest.approx(math.sqrt(lo * hi))


def test_long_lived_only_runs_plot_throughput_not_an_empty_figure(tmp_path, capsys):
    r = cclab.run(LONG)
    assert plots.completion_data(r).empty
    d = r.save(tmp_path / "long")
    assert main(["plot", str(d)]) == 0
    out = capsys.readouterr().out
    assert "note: no completion-time panel" in out and f"wrote {d / 'overview.png'}" in out
    # `cclab run --out`'s figure: throughput over time instead
    fig, kind = plots.completion_or_throughput_figure(r)
    lines = fig.axes[0].get_lines()
    assert kind == "throughput" and len(lines) == 1 and len(lines[0].get_xdata()) == 20
    # nothing at all to plot: an error, not an empty PNG
    r0 = cclab.run({**LONG, "record": {"interval": "0s"}})
    assert main(["plot", str(r0.save(tmp_path / "none"))]) == 2
    assert "nothing to plot" in capsys.readouterr().err
    assert not (tmp_path / "none" / "overview.png").exists()


def test_compare_a_run_with_itself_and_with_another_seed(mixed, saved, tmp_path, capsys):
    same = cmp.compare(mixed, mixed)
    rows = [r for bins in same["ratio"].values() for r in bins]
    assert rows
    for r in rows:  # identical samples: ratio 1, Fieller's (m² ± h·sqrt(2m² - h²)) / (m² - h²)
        m, h = r["a_mean_s"], r["a_ci95_s"]
        assert r["ratio"] == 1.0
        if h < m:
            assert r["ratio_lo"] == pytest.approx((m * m - h * math.sqrt(2 * m * m - h * h)) / (m * m - h * h))
            assert r["ratio_hi"] == pytest.approx((m * m + h * math.sqrt(2 * m * m - h * h)) / (m * m - h * h))
        else:
            assert r["ratio_hi"] == math.inf
    other = cclab.run(MIXED, seed=2)
    c = cmp.compare(mixed, other)
    assert list(c["classes"]) == ["short", "bg"]
    assert c["classes"]["short"]["flows"] == [mixed.summary["short.flows"], other.summary["short.flows"]]
    # each bin's means are those of the flows inside it, computed here independently
    for cls, bins in c["ratio"].items():
        for r in bins:
            for res, key in ((mixed, "a"), (other, "b")):
                f = res.flows[res.flows.finished & ~res.flows.warmup & (res.flows["class"] == cls)]
                last = r["size_hi_bytes"] == max(b["size_hi_bytes"] for b in bins)
                inside = f[(f["size"] >= r["size_lo_bytes"]) &
                           ((f["size"] <= r["size_hi_bytes"]) if last else (f["size"] < r["size_hi_bytes"]))]
                if not last:  # the last bin of the union may end above this run's largest flow
                    assert r[f"{key}_flows"] == len(inside)
                    assert r[f"{key}_mean_s"] == pytest.approx(inside.completion_time.mean(), rel=1e-12)
            assert r["ratio"] == pytest.approx(r["b_mean_s"] / r["a_mean_s"], rel=1e-12)
    d2 = other.save(tmp_path / "seed2")
    assert main(["compare", str(saved), str(d2), "--out", str(tmp_path / "cmp.png")]) == 0
    out = capsys.readouterr().out
    assert "class short" in out and "mean completion time per size bin" in out
    assert (tmp_path / "cmp.png").exists()
    assert main(["compare", str(saved), str(d2), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["classes"]["bg"]["flows"][1] == other.summary["bg.flows"]


def test_fieller_interval():
    # B/A = 2 with 10% half-widths: the interval's ends solve (m_B - r m_A)² = h_B² + r² h_A²
    lo, hi = cmp.fieller(10.0, 1.0, 20.0, 2.0)
    for r in (lo, hi):
        assert (20 - r * 10) ** 2 == pytest.approx(4 + r * r, rel=1e-12)
    assert lo < 2 < hi and hi - 2 > 2 - lo  # asymmetric, longer above
    # delta method agrees to first order: r·sqrt(0.1² + 0.1²) = 0.283
    assert (hi - lo) / 2 == pytest.approx(2 * math.sqrt(0.02), rel=0.03)
    assert cmp.fieller(1.0, 1.5, 2.0, 0.1)[1] == math.inf  # A's interval reaches 0


def test_compare_refuses_runs_with_nothing_in_common(saved, tmp_path, capsys):
    other = cclab.run(dumbbell(duration="5s", traffic=[poisson(0.3, name="web", mean="50kB")])).save(tmp_path / "o")
    assert main(["compare", str(saved), str(other)]) == 2
    assert "no traffic class in common (A: short, bg; B: web)" in capsys.readouterr().err
    # a class in common, but long-lived there: no size bin in common, no plot
    long = cclab.run(LONG).save(tmp_path / "long")
    assert main(["compare", str(saved), str(long), "--out", str(tmp_path / "x.png")]) == 2
    assert "no completion-time ratio: no class in common has a size bin" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
    # without a plot the table is still printed; as JSON, NaN (B's completion times) is null
    assert main(["compare", str(saved), str(long), "--json"]) == 0

    def strict(name):
        raise AssertionError(f"{name} is not JSON")

    doc = json.loads(capsys.readouterr().out, parse_constant=strict)
    assert doc["classes"]["short"]["mean completion (s)"][1] is None and doc["ratio"] == {"short": []}


def test_every_ready_scenario_is_listed_with_a_description_and_validates(tmp_path, monkeypatch, capsys):
    from cclab.inspect.scenarios import entries
    from cclab.sweeps import Sweep
    from cclab.sweeps.store import engine_version

    rows = entries()
    assert {e.paper for e in rows} >= {"background", "fairbat", "heterogeneous", "lower-bounds", "tfcbr", "sweeps"}
    for e in rows:
        assert 20 <= len(e.description) <= 110, e.path
        if e.kind == "run":
            cclab.validate(e.path)
        elif e.kind == "testbed":
            from cclab.testbed.scenario import load as load_testbed

            load_testbed(e.path)  # its [testbed] table and, through cclab.validate, the rest
        else:
            assert Sweep.from_file(e.path).expand(engine_version())
    # from another folder, as an installed command: found through the package's checkout
    monkeypatch.chdir(tmp_path)
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    for e in rows:
        assert f"$ {e.command(e.path.resolve())}" in out and e.description in out
    # CCLAB_SCENARIOS overrides; a missing folder is a clear error
    (tmp_path / "mine" / "paper").mkdir(parents=True)
    (tmp_path / "mine" / "paper" / "one.toml").write_text("# My one-liner\nduration = \"1s\"\n")
    monkeypatch.setenv("CCLAB_SCENARIOS", str(tmp_path / "mine"))
    assert main(["scenarios", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{
        "paper": "paper", "name": "one", "path": str((tmp_path / "mine/paper/one.toml").resolve()),
        "description": "My one-liner", "command": "cclab run mine/paper/one.toml"}]
    monkeypatch.setenv("CCLAB_SCENARIOS", str(tmp_path / "absent"))
    assert main(["scenarios"]) == 2
    assert "CCLAB_SCENARIOS=" in capsys.readouterr().err


def test_registering_the_commands_imports_nothing_heavy():
    # `cclab --help` must stay fast: show/plot/compare/scenarios load pandas and
    # matplotlib only when they run
    import subprocess
    import sys

    code = ("import sys, cclab.cli; cclab.cli.build_parser(); "
            "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
