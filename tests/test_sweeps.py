"""Sweeps and the result store: key paths, keys, caching, failures, executors
(local pool, dask LocalCluster with 2 workers, a lost worker), crash safety under
SIGKILL, gc, the CLI, and the catalogue's --all and HTML report."""
from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
import time

import numpy as np
import pandas as pd
import pytest

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab.scenario import ScenarioError  # noqa: E402
from cclab.sweeps import Store, StoreError, Sweep, engine_version, run_key, set_path, sweep, t_quantile  # noqa: E402
from cclab.sweeps import executors, store as store_mod  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # the crash tooling, not installed
import crashtest  # noqa: E402
from crashtest import TINY, tiny_sweep  # noqa: E402

GRID = {"traffic[short].load": [0.3, 0.6], "links[bn].queue.limit": ["10pkts", "40pkts"]}


@pytest.fixture(scope="module")
def dask_client():
    """A LocalCluster of 2 single-threaded worker processes (what `--cluster local:2` starts),
    shared by this module's tests."""
    pytest.importorskip("distributed")
    ex = executors.make_executor("local:2")
    assert ex.description == "LocalCluster with 2 worker threads"
    yield ex.client
    ex.close()


def _metrics(res) -> pd.DataFrame:
    drop = ["wall_s", "wall_time_s", "events_per_s", "wall_s_per_sim_s", "error"]
    return res.runs_table().drop(columns=drop).sort_values("key").reset_index(drop=True)


# --------------------------------------------------------------------------- key paths and definitions

def test_set_path_by_index_by_name_and_new_tables():
    sc = json.loads(json.dumps(TINY))
    set_path(sc, "traffic[short].load", 0.7)
    set_path(sc, "traffic[1].count", 3)
    set_path(sc, "links[bn].queue.limit", "5pkts")
    set_path(sc, "tcp.sack", True)  # a table the scenario does not have yet
    set_path(sc, "duration", "2s")
    set_path(sc, "traffic[-1].protocol", "reno")
    assert sc["traffic"][0]["load"] == 0.7 and sc["traffic"][1]["count"] == 3
    assert sc["traffic"][1]["protocol"] == "reno"
    assert sc["links"][0]["queue"]["limit"] == "5pkts" and sc["tcp"] == {"sack": True} and sc["duration"] == "2s"
    sc2 = json.loads(json.dumps(TINY))
    set_path(sc2, "traffic[long]", {"name": "long", "type": "long_lived", "src": "a", "dst": "b", "count": 2})
    assert sc2["traffic"][1]["count"] == 2


@pytest.mark.parametrize("path,msg", [
    ("traffic[9].load", "traffic[9]: index out of range (the list has 2 items)"),
    ("traffic[bulk].load", "traffic[bulk]: no item named 'bulk' (names: short, long)"),
    ("duration.x", "duration is not a table"),
    ("links..rate", "malformed key path"),
    ("name[0]", "name is not a list"),
])
def test_set_path_errors_name_the_path(path, msg):
    with pytest.raises(ScenarioError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)")):
        set_path(json.loads(json.dumps(TINY)), path, 1)


@pytest.mark.parametrize("text,msg", [
    ('scenario = "nope.toml"\n', "no such scenario file"),
    ('scenario = {}\ngrdi = {}\n', "grdi: unknown key; a sweep file takes: name, description, scenario"),
    ('seeds = 0\n[scenario]\nduration = "1s"\n', "seeds: expected at least one seed, got 0"),
    ('[scenario]\nduration = "1s"\n[grid]\nduration = "2s"\n', "grid.duration: expected a list of values"),
    ('seeds = [1, 1]\n[scenario]\nduration = "1s"\n', r"seeds: a seed is repeated in \[1, 1\]"),
    ('name = "x"\n', "scenario: missing"),
    ('scenario = [1]\n', "scenario: expected a file path or a table"),
    ('scenario = {', "invalid TOML"),
])
def test_sweep_file_errors(tmp_path, text, msg):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(ScenarioError, match=msg):
        Sweep.from_file(bad)


def test_seeds_are_not_an_override():
    with pytest.raises(ScenarioError, match="give seeds with `seeds`"):
        Sweep.build(TINY, grid={"seed": [1, 2]})
    with pytest.raises(ScenarioError, match="no such sweep file"):
        Sweep.from_file("/nonexistent/sweep.toml")


def test_a_bad_value_is_refused_before_any_run(tmp_path):
    store = tmp_path / "store"
    with pytest.raises(ScenarioError) as e:
        sweep(TINY, grid={"traffic[short].load": [0.5, "lots"]}, store=store, cluster="serial", progress=False)
    msg = str(e.value)
    assert msg.startswith('sweep point {traffic[short].load = "lots"}: traffic[0].load:'), msg
    with Store(store, readonly=True) as st:
        assert st.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_the_grid_crosses_points_and_seeds():
    sw = Sweep.build(TINY, grid={"traffic[short].load": [0.2, 0.4, 0.6]},
                     points=[{"links[bn].rate": "10Mbps"}, {"links[bn].rate": "20Mbps", "duration": "2s"}],
                     seeds=[4, 9])
    runs = sw.expand(engine_version())
    assert len(runs) == len(sw) == 2 * 3 * 2
    assert sw.param_names() == ["links[bn].rate", "duration", "traffic[short].load"]
    assert [r.seed for r in runs[:4]] == [4, 9, 4, 9]
    assert runs[6].params == {"links[bn].rate": "20Mbps", "duration": "2s", "traffic[short].load": 0.2}
    assert json.loads(runs[6].config)["links"][0]["rate_bps"] == 20_000_000
    assert len({r.key for r in runs}) == 12


def test_the_key_is_the_canonical_configuration_seed_and_engine():
    eng = engine_version()
    assert eng == f"results/{cclab._core.ENGINE_RESULTS_VERSION}"
    a = Sweep.build(TINY, seeds=[1]).expand(eng)[0]
    # the same run written differently (units) has the same canonical configuration, hence key
    other = json.loads(json.dumps(TINY))
    other["links"][0]["rate"] = "10000kbps"
    other["duration"] = "1000ms"
    b = Sweep.build(other, seeds=[1]).expand(eng)[0]
    assert a.config == b.config and a.key == b.key
    assert run_key(a.config, 1, eng) == a.key and len(a.key) == 64
    assert run_key(a.config, 2, eng) != a.key
    assert run_key(a.config, 1, "results/0") != a.key
    assert Sweep.build(TINY, seeds=[2]).expand(eng)[0].key != a.key


def test_student_t_quantiles_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    for dof in (1, 2, 3, 4, 9, 19, 30, 101, 1000):
        for c in (0.9, 0.95, 0.99):
            assert t_quantile(c, dof) == pytest.approx(stats.t.ppf(0.5 + c / 2, dof), rel=1e-12)
    assert t_quantile(0.95, 1) == pytest.approx(12.7062047, rel=1e-8)


# --------------------------------------------------------------------------- caching, results, failures

def test_a_sweep_streams_into_the_store_and_a_repeat_costs_nothing(tmp_path):
    store = tmp_path / "store"
    res = sweep(TINY, grid=GRID, seeds=3, store=store, cluster="serial", progress=False, name="t")
    assert (res.stats.runs, res.stats.ran, res.stats.cached, res.stats.failed) == (12, 12, 0, 0)
    again = sweep(TINY, grid=GRID, seeds=3, store=store, cluster="serial", progress=False, name="t")
    assert (again.stats.ran, again.stats.cached) == (0, 12)
    # a stored run is the run: every table equal to cclab.run of the same scenario
    r = res.runs[5]
    sc = json.loads(json.dumps(TINY))
    for k, v in r.params.items():
        set_path(sc, k, v)
    direct = cclab.run(sc, seed=r.seed)
    back = res.result(5)
    for t in ("flows", "links", "series"):
        pd.testing.assert_frame_equal(getattr(back, t), getattr(direct, t))
    assert back.config == direct.config
    # the aggregate is the mean and Student-t half-width over the seeds of each point
    runs = res.runs_table()
    agg = res.aggregate()
    assert len(agg) == 4 and (agg["runs"] == 3).all()
    g = runs[(runs["traffic[short].load"] == 0.6) & (runs["links[bn].queue.limit"] == "10pkts")]
    x = g["link.bn.utilization"].to_numpy()
    row = agg[(agg["traffic[short].load"] == 0.6) & (agg["links[bn].queue.limit"] == "10pkts")].iloc[0]
    assert row["link.bn.utilization"] == pytest.approx(x.mean(), rel=1e-12)
    assert row["link.bn.utilization_ci"] == pytest.approx(4.302652729749464 * x.std(ddof=1) / math.sqrt(3),
                                                          rel=1e-9)
    # map streams every stored run's tables through a function
    m = res.map(lambda r: {"flows": len(r.flows)})
    assert len(m) == 12 and (m["flows"] > 0).all()


def short_flows(result):
    """A reduction (tests.test_sweeps:short_flows): the short flows' count and mean size."""
    f = result.flows[result.flows["class"] == "short"]
    return pd.DataFrame({"flows": [len(f)], "mean_size": [float(f["size"].mean())]})


short_flows.version = 3


def test_a_sweep_keeps_only_the_tables_it_is_asked_for(tmp_path):
    store = tmp_path / "store"
    grid = {"traffic[short].load": [0.3, 0.6]}
    res = sweep(TINY, grid=grid, seeds=2, store=store, cluster="serial", progress=False, keep=["links"])
    assert res.stats.ran == 4
    with Store(store, readonly=True) as st:
        row = st.get(res.runs[0].key)
        assert row.tables == ("links",) and set(row.files) == {"links.parquet", "run.json"}
        back = st.load(res.runs[0].key)
        with pytest.raises(StoreError, match="keeps links, not flows"):
            st.load(res.runs[0].key, ["flows"])
    direct = cclab.run(set_params(TINY, res.runs[0].params), seed=res.runs[0].seed)
    pd.testing.assert_frame_equal(back.links, direct.links)
    assert back.flows.empty and back.summary["whole_run_packets_sent"] == direct.summary["whole_run_packets_sent"]
    assert res.runs_table()["link.bn.utilization"].notna().all()  # the metrics are always kept
    # asking for the same tables again runs nothing; asking for one more reruns and keeps both
    assert sweep(TINY, grid=grid, seeds=2, store=store, cluster="serial", progress=False,
                 keep=["links"]).stats.ran == 0
    more = sweep(TINY, grid=grid, seeds=2, store=store, cluster="serial", progress=False, keep=["flows"])
    assert (more.stats.ran, more.stats.cached) == (4, 0)
    with Store(store, readonly=True) as st:
        assert st.get(res.runs[0].key).tables == ("flows", "links")
        assert st.verify() == []
    assert sweep(TINY, grid=grid, seeds=2, store=store, cluster="serial", progress=False,
                 keep=["links", "flows"]).stats.ran == 0
    full = more.result(0)
    pd.testing.assert_frame_equal(full.flows, direct.flows)


def set_params(scenario, params):
    sc = json.loads(json.dumps(scenario))
    for k, v in params.items():
        set_path(sc, k, v)
    return sc


def test_a_reduction_runs_beside_the_simulation_and_keeps_its_small_table(tmp_path):
    store = tmp_path / "store"
    res = sweep(TINY, seeds=2, store=store, cluster="serial", progress=False,
                keep=["tests.test_sweeps:short_flows"])
    name = "tests.test_sweeps:short_flows@3"
    r = res.result(1)
    assert list(r.reduced) == [name] and r.flows.empty
    direct = cclab.run(TINY, seed=res.runs[1].seed)
    want = direct.flows[direct.flows["class"] == "short"]
    assert r.reduced[name].to_dict("records") == [{"flows": len(want), "mean_size": float(want["size"].mean())}]
    with Store(store, readonly=True) as st:
        assert set(st.get(res.runs[1].key).files) == {"tests.test_sweeps.short_flows@3.parquet", "run.json"}
    # a new version of the reduction is another table: the runs run again
    import importlib

    fn = importlib.import_module("tests.test_sweeps").short_flows  # the module the worker imports
    fn.version = 4
    try:
        again = sweep(TINY, seeds=2, store=store, cluster="serial", progress=False,
                      keep=["tests.test_sweeps:short_flows"])
        assert again.stats.ran == 2
        assert set(again.result(0).reduced) == {name, "tests.test_sweeps:short_flows@4"}
    finally:
        fn.version = 3
    with pytest.raises(ValueError, match="neither a table"):
        sweep(TINY, seeds=1, store=store, cluster="serial", progress=False, keep=["flow"])


def test_a_layout_1_store_is_read_and_upgraded(tmp_path):
    import sqlite3

    store = tmp_path / "store"
    res = sweep(TINY, seeds=2, store=store, cluster="serial", progress=False)
    db = sqlite3.connect(store / "index.sqlite")  # back to layout 1: its runs table had no tables column
    cols = "key, status, engine, name, seed, config, metrics, error, error_kind, wall_s, created, host, files"
    db.executescript(f"""BEGIN; CREATE TABLE old AS SELECT {cols} FROM runs; DROP TABLE runs;
        CREATE TABLE runs (key TEXT PRIMARY KEY, status TEXT NOT NULL, engine TEXT NOT NULL, name TEXT,
            seed INTEGER, config TEXT NOT NULL, metrics TEXT, error TEXT, error_kind TEXT, wall_s REAL,
            created REAL NOT NULL, host TEXT, files TEXT);
        INSERT INTO runs SELECT * FROM old; DROP TABLE old; PRAGMA user_version = 1; COMMIT;""")
    db.close()
    with Store(store, readonly=True) as st:
        assert st.get(res.runs[0].key).tables == ("flows", "links", "series", "arrivals")
        assert len(st.load(res.runs[0].key).flows) > 0
    assert sweep(TINY, seeds=2, store=store, cluster="serial", progress=False, keep=["links"]).stats.ran == 0
    with Store(store) as st:
        assert st.db.execute("PRAGMA user_version").fetchone()[0] == store_mod.STORE_FORMAT == 2


def test_failed_runs_are_recorded_and_the_others_go_on(tmp_path, monkeypatch):
    real = executors.execute

    def flaky(config, engine, key, keep=None):
        if json.loads(config)["seed"] == 2:
            return {"ok": False, "kind": "error", "error": "RuntimeError: boom", "host": "h", "wall_s": 0.0}
        return real(config, engine, key, keep)

    monkeypatch.setattr(executors, "execute", flaky)
    store = tmp_path / "store"
    res = sweep(TINY, grid={"traffic[short].load": [0.3, 0.6]}, seeds=3, store=store, cluster="serial",
                progress=False)
    assert (res.stats.ran, res.stats.failed) == (6, 2)
    table = res.runs_table()
    assert (table[table.seed == 2]["status"] == "failed").all()
    assert (table[table.seed == 2]["error"] == "RuntimeError: boom").all()
    assert (table[table.seed != 2]["status"] == "ok").all()
    agg = res.aggregate()
    assert (agg["runs"] == 2).all() and (agg["failed"] == 1).all()
    # a run's own error is not retried by default; it is with retry_failed, and a success replaces it
    again = sweep(TINY, grid={"traffic[short].load": [0.3, 0.6]}, seeds=3, store=store, cluster="serial",
                  progress=False)
    assert again.stats.ran == 0
    monkeypatch.setattr(executors, "execute", real)
    fixed = sweep(TINY, grid={"traffic[short].load": [0.3, 0.6]}, seeds=3, store=store, cluster="serial",
                  progress=False, retry_failed=True)
    assert (fixed.stats.ran, fixed.stats.failed) == (2, 0)
    assert (fixed.runs_table()["status"] == "ok").all()


def test_lost_runs_are_retried_by_the_next_sweep(tmp_path, monkeypatch):
    real = executors.execute
    monkeypatch.setattr(executors, "execute", lambda c, e, k, keep=None: {"ok": False, "kind": "lost", "error": "KilledWorker",
                                                               "host": "h", "wall_s": None})
    store = tmp_path / "store"
    first = sweep(TINY, seeds=2, store=store, cluster="serial", progress=False)
    assert first.stats.failed == 2
    monkeypatch.setattr(executors, "execute", real)
    second = sweep(TINY, seeds=2, store=store, cluster="serial", progress=False)
    assert (second.stats.ran, second.stats.failed) == (2, 0)


def test_the_progress_bar_counts_done_cached_failed_and_eta(tmp_path, capsys):
    store = tmp_path / "store"
    sweep(TINY, seeds=2, store=store, cluster="serial", progress=False)
    sweep(TINY, seeds=3, store=store, cluster="serial", progress=True)
    err = capsys.readouterr().err
    assert "1/1 done, 2 cached, 0 failed" in err and "ETA" in err
    sweep(TINY, seeds=4, store=store, cluster="serial", progress=False)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- executors

def test_local_pool_and_dask_cluster_store_what_a_serial_sweep_does(tmp_path, dask_client):
    ref = sweep(TINY, grid=GRID, seeds=2, store=tmp_path / "a", cluster="serial", progress=False)
    pool = sweep(TINY, grid=GRID, seeds=2, store=tmp_path / "b", workers=2, progress=False)
    dask = sweep(TINY, grid=GRID, seeds=2, store=tmp_path / "c", cluster=dask_client, progress=False)
    assert pool.stats.executor == "local pool of 2 processes"
    assert dask.stats.executor.endswith("with 2 worker threads")
    for other in (pool, dask):
        assert other.stats.ran == 8
        pd.testing.assert_frame_equal(_metrics(other), _metrics(ref))
    with Store(tmp_path / "c", readonly=True) as st:
        assert st.verify() == []


def test_a_lost_dask_worker_s_runs_are_retried(tmp_path, dask_client):
    """One worker is killed (SIGKILL) as soon as the scheduler has given it runs, whatever
    the machine's speed: dask reschedules them and every run is stored once, ok."""
    sc = json.loads(json.dumps(TINY))
    sc["duration"] = "200s"
    sc["record"] = {"interval": "0s"}
    victim_addr, victim = next(iter(dask_client.run(os.getpid).items()))
    killed, stop = threading.Event(), threading.Event()

    def kill_when_busy():
        while not stop.is_set():
            if dask_client.processing(workers=[victim_addr]).get(victim_addr):
                os.kill(victim, signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=kill_when_busy)
    watcher.start()
    try:
        res = sweep(sc, grid={"traffic[short].load": [0.2, 0.4, 0.6, 0.8]}, seeds=6, store=tmp_path / "s",
                    cluster=dask_client, progress=False)
    finally:
        stop.set()
        watcher.join()
    assert killed.is_set(), "the sweep ended before the worker was given a run"
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
    assert (res.stats.ran, res.stats.failed) == (24, 0)
    assert (res.runs_table()["status"] == "ok").all()
    with Store(tmp_path / "s", readonly=True) as st:
        assert st.verify() == []
    dask_client.wait_for_workers(2, timeout=30)


def test_a_dead_pool_process_s_runs_are_run_again(monkeypatch):
    """A pool process that dies (as on an out-of-memory kill) breaks the pool: the runs in
    flight go to a new pool; a run that kills its process every time is recorded as lost."""
    runs = Sweep.build(TINY, seeds=4).expand(engine_version())
    doomed = runs[1].key
    monkeypatch.setattr(executors, "execute", crashtest.DieFor(doomed))
    with executors.PoolExecutor(2) as ex:
        out = dict(ex.run([(r.key, r.config) for r in runs], engine_version()))
    assert set(out) == {r.key for r in runs}
    assert out[doomed]["kind"] == "lost" and "died while running it alone" in out[doomed]["error"]
    assert all(out[r.key]["ok"] for r in runs if r.key != doomed)


# --------------------------------------------------------------------------- crash safety

def test_a_group_commit_flushes_the_file_system_twice_or_every_file(tmp_path, monkeypatch):
    """Durable writes: on Linux one syncfs for a group's files and folders, one for its
    renames, before its rows are committed; where syncfs is missing, every file and folder
    is flushed with fsync. Either way the stored runs are whole."""
    calls = []
    real = store_mod._SYNCFS
    if real is not None:
        monkeypatch.setattr(store_mod, "_SYNCFS", lambda fd: calls.append(fd) or real(fd))
        with Store(tmp_path / "a", batch_runs=4, batch_seconds=1e9) as st:
            sweep(tiny_sweep(8), store=st, cluster="serial", progress=False)
        assert len(calls) == 4  # two groups of four runs
        crashtest.check_store(tmp_path / "a")
    fsyncs = []
    real_fsync = os.fsync
    monkeypatch.setattr(store_mod, "_SYNCFS", None)
    monkeypatch.setattr(store_mod.os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    with Store(tmp_path / "b", batch_runs=4, batch_seconds=1e9) as st:
        res = sweep(tiny_sweep(8), store=st, cluster="serial", progress=False)
    monkeypatch.undo()
    # three files and their folder per run, then each group's runs/xx folders the renames wrote into
    done = res.stats.executed
    parents = len({k[:2] for k in done[:4]}) + len({k[:2] for k in done[4:]})
    assert len(fsyncs) == 8 * 4 + parents
    crashtest.check_store(tmp_path / "b")


@pytest.mark.parametrize("point,at,batch,held,tmp_left,orphans", [
    ("file", 7, 1, 2, 1, 0),    # three files a run: the 7th is the first of the third run
    ("files", 3, 1, 2, 1, 0),   # the third run's files written, not yet flushed
    ("rename", 3, 1, 2, 0, 1),  # the third run's folder in runs/, its row not committed
    ("commit", 3, 1, 3, 0, 0),
    ("files", 6, 4, 4, 2, 0),   # group commits of 4 runs: the second group staged
    ("rename", 6, 4, 4, 2, 2),  # ... and half of it renamed
])
def test_a_kill_at_each_step_of_a_write_loses_nothing_stored(tmp_path, point, at, batch, held, tmp_left, orphans):
    """SIGKILL in the middle of a file, after the files, after the rename (an orphan folder),
    after the commit: what the index holds is whole, and a resume runs exactly the rest."""
    store = tmp_path / "store"
    n = 8
    code = crashtest.run_child(store, n, plan={point: at}, batch=batch)
    assert code == -signal.SIGKILL
    stored = crashtest.stored(store)
    assert len(stored) == held
    crashtest.check_store(store)
    assert len(list((store / "tmp").iterdir())) == tmp_left
    assert len([d for sub in (store / "runs").iterdir() for d in sub.iterdir() if d.name not in stored]) == orphans
    res = sweep(tiny_sweep(n), store=store, cluster="serial", progress=False)
    assert set(res.stats.executed) == {r.key for r in res.runs} - set(stored)
    crashtest.check_store(store, crashtest.reference_metrics(n))


def test_random_sigkills_then_resume_runs_exactly_what_is_missing(tmp_path):
    """A few kills at random instants (the long campaign: `make crash-test`)."""
    r = crashtest.campaign(kills=3, runs=32, seed=11, root=tmp_path)
    assert r["rounds"] >= 3 and r["resumed"] >= 1


def test_killing_the_sweeping_process_leaves_no_pool_process_behind(tmp_path):
    import subprocess
    import sys

    spec = tmp_path / "s.toml"
    spec.write_text(crashtest._sweep_toml(tiny_sweep(400)))
    p = subprocess.Popen([sys.executable, "-m", "cclab.cli", "sweep", str(spec), "--store", str(tmp_path / "st"),
                          "--workers", "2", "--quiet", "--out", str(tmp_path / "o")],
                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = tmp_path / "st"
    t0 = time.perf_counter()
    while not (store / "index.sqlite").exists() or not crashtest.stored(store):  # the pool is running
        assert p.poll() is None and time.perf_counter() - t0 < 60
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)  # the sweeping process alone, not its group
    p.wait()
    t0 = time.perf_counter()
    while True:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break  # the pool processes, the fork server and the resource tracker are gone
        if time.perf_counter() - t0 > 10:
            os.killpg(p.pid, signal.SIGKILL)  # leave nothing running, then fail
            pytest.fail("pool processes outlived the sweep")
        time.sleep(0.05)
    crashtest.check_store(store)


def test_two_sweeps_writing_one_store_at_once(tmp_path):
    store = tmp_path / "store"
    ctx = crashtest._context()
    procs = [ctx.Process(target=crashtest._child, args=(str(store), 24, None, "serial")) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert len(crashtest.stored(store)) == 24
    crashtest.check_store(store, crashtest.reference_metrics(24))


# --------------------------------------------------------------------------- gc

def test_gc_removes_interrupted_writes_orphans_and_what_is_asked(tmp_path):
    store = tmp_path / "store"
    crashtest.run_child(store, 8, plan={"rename": 2}, batch=1)  # one orphan folder
    crashtest.run_child(store, 8, plan={"files": 2}, batch=1)   # one interrupted write in tmp/
    sweep(tiny_sweep(8), store=store, cluster="serial", progress=False)
    sweep(TINY, seeds=[77], store=store, cluster="serial", progress=False, name="other")
    with Store(store) as st:
        st.db.execute("UPDATE runs SET engine = 'results/0' WHERE seed = 77")
        with pytest.raises(StoreError, match="in use by a running sweep"):
            with Store(store) as other:
                other.gc()
        r = st.gc(dry_run=True)
        assert (r["tmp"], r["orphans"], r["runs"]) == (1, 0, 0)  # the orphan was replaced by the resume
        r = st.gc(stale=True)
        assert (r["tmp"], r["runs"]) == (1, 1)
        assert not list((store / "tmp").iterdir())
        r = st.gc(forget=["crash"], unreferenced=True)
        assert (r["sweeps"], r["runs"]) == (1, 8)
        assert st.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
        assert [s["name"] for s in st.sweeps()] == ["other"]
        assert not any(list(sub.iterdir()) for sub in (store / "runs").iterdir())


# --------------------------------------------------------------------------- command line

def test_cli_sweep_store_and_plot(tmp_path, capsys):
    from cclab.cli import main

    (tmp_path / "tiny.toml").write_text(crashtest.scenario_toml(TINY))
    spec = tmp_path / "load.toml"
    spec.write_text('name = "load"\nscenario = "tiny.toml"\nseeds = 2\n[grid]\n"traffic[short].load" = [0.3, 0.6]\n')
    store = str(tmp_path / "store")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--store", store, "--cluster", "serial", "--quiet", "--out", str(out),
                 "--plot", "short.mean_completion_time_s"]) == 0
    text = capsys.readouterr().out
    assert "sweep load: 4 runs: 0 cached, 4 ran, 0 failed" in text
    assert "short.mean_completion_time_s" in text and " ± " in text
    assert (out / "short.mean_completion_time_s.png").stat().st_size > 1000
    table = pd.read_csv(out / "table.csv")
    assert list(table["traffic[short].load"]) == [0.3, 0.6] and list(table["runs"]) == [2, 2]
    assert main(["sweep", str(spec), "--store", store, "--quiet", "--dry-run"]) == 0
    assert "4 runs validated; 4 stored, 0 to run" in capsys.readouterr().out
    assert main(["store", "ls", "--store", store]) == 0
    text = capsys.readouterr().out
    assert "4 runs" in text and "load" in text
    assert main(["store", "ls", "--store", store, "--runs", "2"]) == 0
    key = capsys.readouterr().out.splitlines()[3].split()[0]
    assert main(["store", "show", key, "--store", store]) == 0
    assert "link.bn.utilization" in capsys.readouterr().out
    assert main(["store", "show", "load", "--store", store]) == 0
    assert "grid: traffic[short].load = [0.3, 0.6]" in capsys.readouterr().out
    # a recorded sweep is plotted from the store alone (a sweep made in Python has no file)
    assert main(["store", "show", "load", "--store", store, "--plot", "link.bn.utilization", "--out",
                 str(tmp_path / "again")]) == 0
    assert "again/link.bn.utilization.png" in capsys.readouterr().out
    assert (tmp_path / "again" / "link.bn.utilization.png").stat().st_size > 1000
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again" / "table.csv"), table)
    assert main(["store", "show", key, "--store", store, "--plot", "link.bn.utilization"]) == 2
    assert "--plot and --out apply to a sweep" in capsys.readouterr().err
    assert main(["store", "verify", "--store", store]) == 0
    assert "4 stored runs checked, 0 problems" in capsys.readouterr().out
    assert main(["store", "show", "ffff", "--store", store]) == 2
    assert "no run with key ffff" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--store", store, "--quiet", "--metrics", "nope"]) == 2
    assert "--metrics: no metric nope" in capsys.readouterr().err


@pytest.mark.parametrize("cluster,msg", [("local:x", "expected local:N"), ("local:0", "expected local:N"),
                                         ("nowhere", "expected tcp://HOST:PORT")])
def test_a_bad_cluster_is_refused_before_any_work(tmp_path, capsys, cluster, msg):
    from cclab.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text(crashtest._sweep_toml(Sweep.build(TINY, seeds=1, name="lc")))
    assert main(["sweep", str(spec), "--cluster", cluster, "--store", str(tmp_path / "st"), "--out",
                 str(tmp_path / "o")]) == 2
    assert msg in capsys.readouterr().err
    assert not (tmp_path / "st").exists()


# --------------------------------------------------------------------------- the catalogue on the store

def test_reproduce_all_runs_entries_through_the_store_and_writes_the_report(tmp_path, capsys, monkeypatch,
                                                                            dask_client):
    from cclab.cli import main
    from cclab.experiments import catalogue

    def packet_entry(ctx):
        res = ctx.sweep(TINY, grid={"traffic[short].load": [0.3, 0.6]}, seeds=2 if ctx.quick else 3)
        agg = res.aggregate(["link.bn.utilization"])
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot(agg["traffic[short].load"], agg["link.bn.utilization"])
        return catalogue.Outcome(agg, fig, f"{res.stats.ran} ran, {res.stats.cached} cached",
                                 "| a | b |\n|---|---|\n| 1 | **2** |", True,
                                 tolerance="exact counts")  # a judging verdict must state one

    def broken_entry(ctx):
        raise RuntimeError("no such protocol yet")

    reg = {"toy-packet": catalogue.Reproduction("toy-packet", "toy", "Fig. 1", "a toy", packet_entry, "2 seeds",
                                                "3 seeds"),
           "toy-broken": catalogue.Reproduction("toy-broken", "toy", "Fig. 2", "broken", broken_entry),
           "toy-unrun": catalogue.Reproduction("toy-unrun", "toy", "Fig. 3", "never run", broken_entry)}
    monkeypatch.setattr(catalogue, "_REGISTRY", reg)
    monkeypatch.setattr(catalogue, "_LOADED", True)
    monkeypatch.setattr(catalogue, "entries", lambda: [reg["toy-packet"], reg["toy-broken"]])
    out, store = tmp_path / "out", str(tmp_path / "store")
    cluster = dask_client.scheduler.address
    assert main(["reproduce", "--all", "--out", str(out), "--store", store, "--cluster", cluster, "--quiet"]) == 1
    text = capsys.readouterr().out
    assert "toy-packet: agrees — 4 ran, 0 cached" in text
    assert "toy-broken: FAILED — RuntimeError: no such protocol yet" in text
    # --full reuses the quick size's stored runs (seeds 1, 2) and runs only seed 3
    assert main(["reproduce", "toy-packet", "--full", "--out", str(out), "--store", store, "--quiet"]) == 0
    assert "toy-packet: agrees — 2 ran, 4 cached" in capsys.readouterr().out
    rec = json.loads((out / "toy-packet.json").read_text())
    assert rec["size"] == "full" and rec["command"] == "cclab reproduce toy-packet --full" and rec["wall_s"] > 0
    monkeypatch.setattr(catalogue, "entries", lambda: list(reg.values()))
    assert main(["report", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "<td>1</td><td><strong>2</strong></td>" in page
    assert "no such protocol yet" in page and "Not run yet: <code>cclab reproduce toy-unrun</code>" in page
    assert "3 entries; agrees: 1, failed: 1, not run: 1." in page


# --------------------------------------------------------------------------- the SLURM example

def _live_in_group(pgid: int) -> list[int]:
    """The processes of a process group that are running (zombies waiting for init excluded)."""
    from pathlib import Path

    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def test_the_slurm_example_runs_a_sweep_through_dask_jobqueue(tmp_path):
    """docs/examples/slurm_sweep.py end to end, with stand-ins for sbatch and scancel that
    run the batch script dask-jobqueue writes on this machine (its own process group) and
    kill that group: the example's SLURMCluster, job script, workers and sweep are the real ones."""
    pytest.importorskip("dask_jobqueue")
    import subprocess
    import sys
    from pathlib import Path

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    # dask-jobqueue removes the script once sbatch returns: the job runs a copy
    (bin_ / "sbatch").write_text('#!/bin/sh\ncp "$1" "$FAKE_SLURM/job.$$.sh"\n'
                                 'setsid bash "$FAKE_SLURM/job.$$.sh" > "$FAKE_SLURM/job.$$.out" 2>&1 < /dev/null &\n'
                                 'echo $! >> "$FAKE_SLURM/jobs"\necho "Submitted batch job $!"\n')
    (bin_ / "scancel").write_text('#!/bin/sh\nfor j in "$@"; do kill -KILL -- "-$j" 2>/dev/null; done\nexit 0\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    (tmp_path / "tiny.toml").write_text(crashtest.scenario_toml(TINY))
    spec = tmp_path / "slurm.toml"
    spec.write_text('name = "slurm"\nscenario = "tiny.toml"\nseeds = 2\n[grid]\n"traffic[short].load" = [0.3, 0.6]\n')
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", FAKE_SLURM=str(tmp_path), TMPDIR=str(tmp_path))
    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "slurm_sweep.py"
    script = subprocess.run([sys.executable, str(example), str(spec), "--print-job-script", "--cores", "2",
                             "--memory", "2GB", "--queue", "short"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert script.returncode == 0, script.stderr
    assert "#SBATCH -p short" in script.stdout and "--nworkers 2" in script.stdout and "--nthreads 1" in script.stdout
    try:
        done = subprocess.run([sys.executable, str(example), str(spec), "--jobs", "1", "--cores", "2", "--memory",
                               "2GB", "--store", str(tmp_path / "store")], env=env, capture_output=True, text=True,
                              timeout=120)
    finally:  # the jobs' process groups end with scancel; nothing is left running either way
        jobs = (tmp_path / "jobs").read_text().split() if (tmp_path / "jobs").exists() else []
        t0 = time.perf_counter()
        for job in map(int, jobs):
            while _live_in_group(job):
                if time.perf_counter() - t0 > 20:
                    os.killpg(job, signal.SIGKILL)
                time.sleep(0.1)
    assert len(jobs) == 1
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SweepResult('slurm': 4 runs, 0 cached, 4 ran, 0 failed" in done.stdout
    crashtest.check_store(tmp_path / "store")
    assert len(crashtest.stored(tmp_path / "store")) == 4


def _leave_hot_journal(index: Path) -> None:
    """A writer killed mid-transaction in rollback mode: the index keeps a hot journal."""
    code = f"""
import os, sqlite3
db = sqlite3.connect({str(index)!r}, isolation_level=None)
db.execute("PRAGMA journal_mode = DELETE")
db.execute("PRAGMA cache_size = 1")  # spill the change into the file before the commit
db.execute("BEGIN")
db.execute("CREATE TABLE padding (x)")
db.executemany("INSERT INTO padding VALUES (?)", [("x" * 200,)] * 5000)
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    assert index.with_name(index.name + "-journal").exists()


def test_a_reader_repairs_what_a_killed_writer_left(tmp_path):
    """A read-only Store opened on an index with a hot journal (a writer killed while
    creating it) reads it instead of failing with "attempt to write a readonly database"."""
    store = tmp_path / "s"
    res = sweep(tiny_sweep(2), store=store, cluster="serial", progress=False)
    _leave_hot_journal(store / "index.sqlite")
    with Store(store, readonly=True) as st:
        keys = [k for (k,) in st.db.execute("SELECT key FROM runs")]
        assert sorted(keys) == sorted(res.stats.executed)
        assert "padding" not in {n for (n,) in st.db.execute("SELECT name FROM sqlite_master")}
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            st.db.execute("DELETE FROM runs")
