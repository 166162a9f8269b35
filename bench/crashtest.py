"""Kill sweeps with SIGKILL and check that nothing stored is lost or corrupt.

One campaign: a sweep of tiny runs is started again and again into the same
store and killed with SIGKILL after a random delay (so the kill lands anywhere:
inside a run, while a file is half written, between the rename of a run's folder
and its index commit, during the commit), then resumed to the end. After each
kill and at the end it checks that

* every run the index calls stored has every file, byte for byte as its digests say
  (``Store.verify``) and loads as a Result;
* the resumed sweep ran exactly the runs the index did not hold, each once;
* every stored run equals the same run executed once without interruption.

Tooling of the tests, not part of the installed package. ``make test`` runs a few
kills (tests/test_sweeps.py); ``make crash-test`` runs the long campaign, :func:`main`
(not as a script: the children fork from a server that has imported this module,
and would import it again as ``__main__``)::

    .venv/bin/python -c 'import sys; sys.path.insert(0, "bench"); from crashtest import main; sys.exit(main())' --kills 200
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: A tiny scenario: one 10 Mbps link, Poisson short flows and one long flow, 1 s.
TINY = {
    "name": "tiny",
    "duration": "1s",
    "links": [{"name": "bn", "from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms",
               "queue": {"type": "droptail", "limit": "20pkts"}}],
    "traffic": [
        {"name": "short", "type": "poisson", "src": "a", "dst": "b", "load": 0.5,
         "size": {"dist": "exponential", "mean": "20KB"}},
        {"name": "long", "type": "long_lived", "src": "a", "dst": "b"},
    ],
    "record": {"interval": "0.1s"},
}


def tiny_sweep(runs: int, name: str = "crash"):
    """A sweep of ``runs`` tiny runs (loads × queue limits × seeds)."""
    from cclab.sweeps import Sweep

    loads = [0.2, 0.4, 0.6, 0.8]
    limits = ["10pkts", "40pkts"]
    seeds = max(1, -(-runs // (len(loads) * len(limits))))
    return Sweep.build(TINY, grid={"traffic[short].load": loads, "links[bn].queue.limit": limits},
                       seeds=seeds, name=name)


def _child(store: str, runs: int, plan: dict | None, cluster: str, batch: int | None = None) -> None:
    from cclab.sweeps import Store, store as st_mod, sweep

    if plan:
        st_mod._crash_plan.update(plan)
    # A group of `batch` runs, however long they take: the store also commits after
    # batch_seconds, which on a loaded machine would end a group early.
    group = {} if batch is None else {"batch_runs": batch, "batch_seconds": float("inf")}
    with Store(store, **group) as st:
        sweep(tiny_sweep(runs), store=st, cluster=cluster, progress=False)
    os._exit(0)


_CTX = None


def _context():
    global _CTX
    if _CTX is None:
        _CTX = mp.get_context("forkserver")
        _CTX.set_forkserver_preload([__name__ if __name__ != "__main__" else "crashtest", "cclab.sweeps", "cclab.api", "pyarrow.parquet"])
    return _CTX


def run_child(store: str | Path, runs: int, *, plan: dict | None = None, kill_after: float | None = None,
              cluster: str = "serial", batch: int | None = None) -> int:
    """Run the sweep in a child process (forked from a server that has imported cclab); kill
    it with SIGKILL after ``kill_after`` seconds, or let ``plan`` kill it at a crash point
    (``batch``: the store's group-commit size). Returns the child's exit code (-9 when killed)."""
    p = _context().Process(target=_child, args=(str(store), runs, plan, cluster, batch))
    p.start()
    p.join(kill_after)
    if p.exitcode is None:
        os.kill(p.pid, signal.SIGKILL)
        p.join()
    return p.exitcode


def run_cli(store: str | Path, runs: int, kill_after: float, workers: int = 2) -> int:
    """`cclab sweep` with the local process pool in its own session; the whole process group
    (the command and its pool) is killed with SIGKILL after ``kill_after`` seconds."""
    d = Path(store).parent
    d.mkdir(parents=True, exist_ok=True)
    spec = d / "crash-sweep.toml"
    if not spec.exists():
        sw = tiny_sweep(runs)
        spec.write_text(_sweep_toml(sw))
    cmd = [sys.executable, "-m", "cclab.cli", "sweep", str(spec), "--store", str(store), "--workers", str(workers),
           "--quiet", "--out", str(d / "out")]
    p = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        p.wait(kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    return p.returncode


def scenario_toml(sc: dict, prefix: str = "") -> str:
    """A scenario dict (of TINY's shape: scalars, inline tables, lists of tables) as TOML."""
    lines = [f"{k} = {_toml(v)}" for k, v in sc.items() if not isinstance(v, list)]
    for k, items in sc.items():
        if isinstance(items, list):
            for item in items:
                lines += [f"[[{prefix}{k}]]"] + [f"{kk} = {_toml(v)}" for kk, v in item.items()]
    return "\n".join(lines) + "\n"


def _sweep_toml(sw) -> str:
    lines = [f"name = {json.dumps(sw.name)}", f"seeds = {json.dumps(sw.seeds)}", "[grid]"]
    lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sw.grid.items()]
    return "\n".join(lines) + "\n[scenario]\n" + scenario_toml(sw.scenario, "scenario.")


def _toml(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)


class DieFor:
    """A worker function that kills its own process (SIGKILL) when given one run's key,
    as an out-of-memory kill would; every other run it executes normally."""

    def __init__(self, key: str):
        self.key = key

    def __call__(self, config: str, engine: str, key: str, keep=None) -> dict:
        from cclab.sweeps.worker import execute

        if key == self.key:
            os.kill(os.getpid(), signal.SIGKILL)
        return execute(config, engine, key, keep)


def _open(store: str | Path):
    """The store read-only, or None if it holds no index yet (a sweep killed before it made one)."""
    from cclab.sweeps.store import Store, StoreError

    try:
        return Store(store, readonly=True)
    except StoreError:
        return None


def stored(store: str | Path) -> dict[str, str]:
    """{key: status} of every run in the index."""
    st = _open(store)
    if st is None:
        return {}
    with st:
        return dict(st.db.execute("SELECT key, status FROM runs").fetchall())


def check_store(store: str | Path, reference: dict[str, dict] | None = None) -> None:
    """Every stored run is whole (digests), loads, and equals the reference metrics."""
    st = _open(store)
    if st is None:
        return
    with st:
        problems = st.verify()
        assert not problems, f"corrupt store: {problems[:5]}"
        rows = st.rows(stored(store))
        for k, r in rows.items():
            assert r.status == "ok", f"{k[:12]} stored as {r.status}: {r.error}"
            if reference is not None:
                assert _same(r.metrics, reference[k]), f"{k[:12]}: stored metrics differ from an uninterrupted run"
        for k in list(rows)[:3]:  # a few loaded whole
            res = st.load(k)
            assert len(res.links) and res.summary["whole_run_packets_sent"] > 0


def _same(a: dict, b: dict) -> bool:
    drop = ("wall_time_s", "events_per_s", "wall_s_per_sim_s")  # the machine's, not the run's
    keep = lambda d: {k: ("nan" if v != v else v) for k, v in d.items() if k not in drop}
    return keep(a) == keep(b)


def reference_metrics(runs: int) -> dict[str, dict]:
    """Metrics of every run of the sweep, executed once without interruption (no store)."""
    from cclab.sweeps import engine_version
    from cclab.sweeps.worker import execute

    eng = engine_version()
    out = {}
    for r in tiny_sweep(runs).expand(eng):
        out[r.key] = execute(r.config, eng, r.key)["metrics"]
    return out


def _child_seconds(store: Path, runs: int, mode: str) -> float:
    t0 = time.perf_counter()
    code = run_cli(store, runs, kill_after=600) if mode == "cli" else run_child(store, runs)
    assert code == 0, f"the uninterrupted sweep failed (exit {code})"
    return time.perf_counter() - t0


def _calibrate(tmp: Path, runs: int, mode: str) -> tuple[float, float]:
    """Seconds an uninterrupted sweep takes on an empty store, and on a full one (start-up,
    validation and the index look-up alone), measured on a throwaway store."""
    store = tmp / "calibration" / "store"
    full = _child_seconds(store, runs, mode)
    fixed = _child_seconds(store, runs, mode)
    shutil.rmtree(tmp / "calibration")
    return full, min(fixed, full)


def campaign(kills: int, runs: int = 160, *, mode: str = "fork", seed: int = 0, root: str | Path | None = None,
             log=None) -> dict:
    """Kill a sweep ``kills`` times at random instants, resume it, check everything.

    mode: "fork" (the sweep in a forked child, runs in that process) or "cli" (`cclab
    sweep` with a 2-process pool, its process group killed). A quarter of the kills come
    at a uniform instant of the start-up (validation, index look-ups: the time a sweep
    with every run stored takes), the others at a uniform instant of the time the runs
    still missing would take (from an uninterrupted sweep's time); both are measured
    first. A sweep that finishes anyway is started again on an empty store, until
    ``kills`` sweeps have been killed. Returns counts; raises AssertionError on any
    lost, duplicated or corrupt result.
    """
    from cclab.sweeps import sweep

    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="cclab-crash-", dir=root))
    store = tmp / "store"
    try:
        ref = reference_metrics(runs)
        total = len(ref)
        full, fixed = _calibrate(tmp, runs, mode)
        killed = rounds = 0
        while killed < kills:
            rounds += 1
            assert rounds <= 5 * kills, f"only {killed} of {rounds} sweeps were killed before they finished"
            before = stored(store) if store.exists() else {}
            if len(before) >= total:  # finished: start over on an empty store
                shutil.rmtree(store)
                before = {}
            # a quarter of the kills during start-up and validation, the rest while runs are stored
            if rng.random() < 0.25:
                delay = rng.uniform(0.0, fixed)
            else:
                delay = fixed + rng.uniform(0.0, (full - fixed) * (total - len(before)) / total)
            if mode == "cli":
                code = run_cli(store, runs, kill_after=delay)
            else:
                code = run_child(store, runs, kill_after=delay)
            killed += code in (-9, -signal.SIGKILL)
            check_store(store, ref)
            after = stored(store)
            assert set(before) <= set(after), "a stored run disappeared"
            if log:
                log(f"round {rounds}: killed after {delay:.2f} s (exit {code}), {len(after)}/{total} stored")
        before = set(stored(store))
        res = sweep(tiny_sweep(runs), store=store, cluster="serial", progress=False)
        executed = set(res.stats.executed)
        missing = set(ref) - before
        assert executed == missing, (f"resume ran {len(executed)} runs, {len(missing)} were missing "
                                     f"({len(executed - missing)} extra, {len(missing - executed)} not run)")
        assert len(res.stats.executed) == len(executed), "a run executed twice"
        check_store(store, ref)
        assert set(stored(store)) == set(ref)
        return {"kills": kills, "rounds": rounds, "runs": total, "resumed": len(executed), "full_s": full}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--runs", type=int, default=160)
    ap.add_argument("--mode", choices=("fork", "cli", "both"), default="both")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    modes = ("fork", "cli") if args.mode == "both" else (args.mode,)
    t0 = time.time()
    for m in modes:
        n = args.kills if len(modes) == 1 else max(1, args.kills // 2)
        r = campaign(n, args.runs, mode=m, seed=args.seed, log=lambda s: print(f"[{m}] {s}", flush=True))
        print(f"{m}: {r['kills']} sweeps killed with SIGKILL ({r['rounds']} started; an uninterrupted one "
              f"takes {r['full_s']:.1f} s); resume ran exactly the "
              f"{r['resumed']} missing of {r['runs']} runs; no stored result corrupt")
    print(f"crash campaign passed in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
