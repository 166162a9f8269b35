"""`cclab testbed`: the scenario reader, the arrival plans, the bookkeeping (no root
needed), and the namespace topology itself: its cleanup after exit, SIGTERM and SIGKILL,
and the bottleneck's rate and buffer measured through it (root, netns and tbf needed:
skipped with the reason otherwise)."""
from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from cclab.scenario import ScenarioError
from cclab.testbed import netns, runner
from cclab.testbed.agents import arrivals
from cclab.testbed.scenario import load

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "testbed" / "single-link.toml"

needs_netns = pytest.mark.skipif(not netns.probe()[0], reason=f"testbed unavailable: {netns.probe()[1]}")


def test_shipped_scenario_has_the_papers_single_link():
    sc = load(SCENARIO)
    assert (sc.rate_bps, sc.buffer_packets, sc.delay_s, sc.congestion) == (10e6, 100, 0.025, "reno")
    # load 0.3 (0.6) of 10 Mbit/s in files of mean 3 MB: lambda = 0.3 * 1.25e6 / 3e6 = 0.125 /s ([FB] §IV-A: 1/8)
    assert sc.web.rate_per_s == pytest.approx(0.125) and sc.bulk.rate_per_s == pytest.approx(0.25)
    assert (sc.web.dist, sc.web.mean_bytes) == ("exponential", 3e6)
    assert [n for n, _ in sc.policies] == ["vanilla", "access control", "FAIRBAT"]
    assert sc.policies[0][1] is None and sc.policies[1][1] == {"policy": "static", "limit": 1}
    assert load(SCENARIO, duration=12, seeds=3).duration_s == 12 and load(SCENARIO, seeds=3).seeds == 3


def test_congestion_control_is_the_testbeds_choice(tmp_path):
    assert load(_variant(tmp_path, "seeds = 1", 'seeds = 1\ncongestion = "cubic"')).congestion == "cubic"


def test_simulator_scenario_takes_the_policy_and_the_measured_delay():
    sc = load(SCENARIO)
    s = sc.simulator_scenario({"policy": "static", "limit": 2}, 50e-6)
    assert s["links"][0]["delay"] == "50000ns"
    bg = next(t for t in s["traffic"] if t["name"] == "background")
    assert bg["access"] == {"policy": "static", "limit": 2}
    assert "access" not in next(t for t in sc.simulator_scenario(None, 0).get("traffic") if t["name"] == "background")
    assert "testbed" not in s


def _variant(tmp_path, old: str, new: str) -> Path:
    text = SCENARIO.read_text()
    assert old in text
    p = tmp_path / "s.toml"
    p.write_text(text.replace(old, new, 1))
    return p


@pytest.mark.parametrize("old,new,message", [
    ("seeds = 1", "seeds = 1\nsede = 2", "testbed.sede: unknown key"),
    ('interactive = "web"', 'interactive = "webb"', "testbed.interactive: no traffic class named 'webb'"),
    ('limit = "100pkts"', 'limit = "150KB"', "links[0].queue: the testbed's tbf has a drop-tail buffer in packets"),
    ('protocol = "reno"', 'protocol = "ledbat"', "testbed.interactive: class 'web' uses 'ledbat'"),
    ("seeds = 1", 'seeds = 1\ncongestion = "bbr"', "testbed.congestion: expected one of 'reno', 'cubic', got 'bbr'"),
    ('access = { policy = "static", limit = 1 }', 'access = { policy = "static", limt = 1 }',
     "testbed.policies[1]: traffic[1].access.limit: missing"),
    ('name = "vanilla"', 'nme = "vanilla"', "testbed.policies[0].nme: unknown key"),
    ('duration = "400s"', "duration = 400", 'testbed.duration: expected a duration like "300s", got 400'),
    ('seeds = 1', 'seeds = 0', "testbed.seeds: expected a positive integer, got 0"),
])
def test_scenario_errors_name_the_key(tmp_path, old, new, message):
    with pytest.raises(ScenarioError) as exc:
        load(_variant(tmp_path, old, new))
    assert message in str(exc.value)


def test_access_on_the_class_itself_is_refused(tmp_path):
    p = _variant(tmp_path, 'load = 0.6\nsize = { dist = "exponential", mean = "3MB" }\n\n[testbed]',
                 'load = 0.6\nsize = { dist = "exponential", mean = "3MB" }\naccess = { policy = "static", limit = 2 }'
                 '\n\n[testbed]')
    with pytest.raises(ScenarioError, match="put access tables in"):
        load(p)


def test_arrival_plans_are_poisson_with_the_given_mean_and_common_across_policies():
    plan = arrivals(7, 0, 10.0, 1000.0, 3e6, "exponential", math.nan, 1 << 40)
    n = len(plan)
    assert abs(n - 10_000) < 4 * 100  # Poisson count: mean 10^4, sd 100
    t = np.array([a for a, _ in plan])
    gaps = np.diff(t)
    assert abs(gaps.mean() - 0.1) < 4 * 0.1 / math.sqrt(n)  # exponential gaps of mean 1/rate
    sizes = np.array([s for _, s in plan], float)
    assert abs(sizes.mean() - 3e6) < 4 * 3e6 / math.sqrt(n)
    assert abs(sizes.std() / sizes.mean() - 1) < 0.05  # exponential: cv = 1
    assert plan == arrivals(7, 0, 10.0, 1000.0, 3e6, "exponential", math.nan, 1 << 40)  # same seed, same plan
    assert plan != arrivals(7, 1, 10.0, 1000.0, 3e6, "exponential", math.nan, 1 << 40)  # the other class
    par = np.array([s for _, s in arrivals(3, 0, 10.0, 1000.0, 3e6, "pareto", 2.5, 1 << 40)], float)
    # Pareto of mean 3 MB and shape 2.5: x_m = 1.8 MB, the smallest size; sd of the mean via var = x_m^2 a/((a-1)^2 (a-2))
    assert par.min() >= 1.8e6 - 1
    sd = 1.8e6 * math.sqrt(2.5 / (1.5 ** 2 * 0.5))
    assert abs(par.mean() - 3e6) < 5 * sd / math.sqrt(len(par))
    assert max(s for _, s in arrivals(1, 0, 10.0, 100.0, 3e6, "exponential", math.nan, 4_000_000)) == 4_000_000


def test_background_stats_integrate_the_server_counters():
    # (t, bodies in progress, bytes sent): 1 MB/s for 10 s, two bodies for the first half, none after
    samples = [(t / 10, 2 if t < 50 else 0, 1e6 * t / 10) for t in range(0, 101)]
    bps, active = runner.background_stats(samples, 10.0)
    assert bps == pytest.approx(8e6)
    assert active == pytest.approx(1.0)  # 5 s of 2 over 10 s


def test_manager_policy_and_release_times():
    from cclab.testbed.background import manager_policy, release_times

    assert manager_policy(None) == ("unlimited", None)
    assert manager_policy({"policy": "static", "limit": 2}) == ("static:2", None)
    assert manager_policy({"policy": "fairbat", "tau": 4, "period": "20s"}) == ("fairbat", {"tau": 4, "period": 20.0})
    assert manager_policy({"policy": "rate_tracking"}) == ("rate", None)
    # 3 MB chunks at 0.6 x 10 Mbit/s = 750 kB/s: one every 4 s, the first when 3 MB are due
    assert release_times(3, 3_000_000, 750_000.0) == [4.0, 8.0, 12.0]
    sc = load(SCENARIO)
    assert runner.background_load(sc) == (3_000_000, pytest.approx(750_000.0), 100)  # 400 s x 750 kB/s / 3 MB


def test_output_folder_is_replaced_only_when_complete(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("old")
    results = {"scenario": "x", "rate_bps": 1e7, "buffer_packets": 100, "base_rtt_s": 1e-4, "policies": {},
               "interactive": {}}
    monkeypatch.setattr(runner, "plot", lambda r, p: (_ for _ in ()).throw(RuntimeError("disk full")))
    with pytest.raises(RuntimeError):
        runner.write(results, out)
    assert (out / "results.json").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir() if p.name != ".out.lock") == ["out"]
    monkeypatch.setattr(runner, "plot", lambda r, p: p.write_bytes(b"png"))
    runner.write(results, out)
    assert json.loads((out / "results.json").read_text())["scenario"] == "x"


def test_probe_says_why_when_not_permitted():
    ok, why = netns.probe()
    assert ok == (why == "")


# ---- the topology itself (root) ------------------------------------------------------

def _ours() -> set[str]:
    return {n for n in netns._listed() if n.startswith(netns.PREFIX_TAG)}


HOLDER = textwrap.dedent("""
    import sys, time
    from cclab.testbed.netns import Topology
    t = Topology(10e6, 100)
    t.up()
    t.install_cleanup()
    print(t.prefix, flush=True)
    time.sleep(60)
""")


def _holder() -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    prefix = p.stdout.readline().strip()
    assert prefix.startswith(netns.PREFIX_TAG), prefix
    return p, prefix


@needs_netns
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_run_removes_its_namespaces(sig):
    p, prefix = _holder()
    assert {f"{prefix}-srv", f"{prefix}-rtr", f"{prefix}-cli"} <= _ours()
    p.send_signal(sig)
    assert p.wait(10) == 128 + sig
    assert not any(n.startswith(prefix) for n in _ours())
    assert not (netns.STATE_DIR / f"{prefix}.json").exists()


@needs_netns
def test_leftovers_of_a_killed_run_are_cleaned_and_live_runs_spared():
    live, live_prefix = _holder()
    dead, dead_prefix = _holder()
    try:
        dead.kill()
        dead.wait()
        assert f"{dead_prefix}-rtr" in _ours()  # SIGKILL leaves them
        gone = netns.clean_stale()
        assert sorted(gone) == sorted(f"{dead_prefix}-{r}" for r in ("srv", "rtr", "cli"))
        assert f"{live_prefix}-rtr" in _ours()  # the live run's namespaces are not touched
    finally:
        live.terminate()
        live.wait(10)
    assert not any(n.startswith((live_prefix, dead_prefix)) for n in _ours())


SENDER = textwrap.dedent("""
    import socket
    s = socket.create_server(("0.0.0.0", 5001)); b = b"x" * 65536
    while True:  # the first connection is wait_port's probe
        c, _ = s.accept()
        try:
            while True: c.sendall(b)
        except OSError: c.close()
""")

RECEIVER = textwrap.dedent("""
    import json, socket, time
    c = socket.create_connection(("%s", 5001)); got = 0; t0 = time.monotonic(); marks = {}
    while time.monotonic() - t0 < 8:
        got += len(c.recv(1 << 20))
        for m in (3, 8):
            if m not in marks and time.monotonic() - t0 >= m: marks[m] = (time.monotonic() - t0, got)
    print(json.dumps(marks))
""")


@needs_netns
def test_bottleneck_rate_buffer_and_base_rtt():
    """A bulk Reno download through the tbf at 10 Mbit/s. Goodput after slow start =
    the tbf's rate x 1448/1514 (9.564 Mbit/s at the full 10; tbf counts the Ethernet
    frame; 1448 B of payload with timestamps in 1514 B; a 100-packet buffer far above
    the sub-millisecond BDP keeps the link busy). Reno fills the pfifo to its 100 packets and no further, so
    the queueing delay beside it, median of one-byte pings, lies between half and all
    of 100 x 1514 x 8 / 10^7 = 121 ms; the base RTT on idle veth is below 1 ms."""
    with netns.Topology(10e6, 100, congestion="reno") as topo:
        base = runner.measure_rtt(topo, 20)
        srv = subprocess.Popen(topo.exec_args(topo.server, sys.executable, "-c", SENDER))
        echo = subprocess.Popen(topo.exec_args(topo.server, sys.executable, "-m", "cclab.testbed.agents", "echo", "7"))
        try:
            netns.wait_port(topo, topo.client, netns.SERVER_ADDR, 5001)
            netns.wait_port(topo, topo.client, netns.SERVER_ADDR, 7)
            rx = subprocess.Popen(topo.exec_args(topo.client, sys.executable, "-c", RECEIVER % netns.SERVER_ADDR),
                                  stdout=subprocess.PIPE, text=True)
            backlog, sent, started = [], [], time.monotonic()

            def sample():
                while rx.poll() is None:
                    q = json.loads(netns.sh("tc", "-s", "-j", "-n", topo.router, "qdisc", "show", "dev",
                                            topo.bottleneck_dev).stdout)
                    backlog.append(next(x["qlen"] for x in q if x["kind"] == "pfifo"))
                    sent.append((time.monotonic(), next(x["bytes"] for x in q if x["kind"] == "tbf")))
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample)
            sampler.start()
            time.sleep(3)
            pings = subprocess.run(topo.exec_args(topo.client, sys.executable, "-m", "cclab.testbed.agents", "ping",
                                                  netns.SERVER_ADDR, "7", "25"), capture_output=True, text=True)
            marks = json.loads(rx.stdout.read())
            sampler.join()
        finally:
            srv.kill()
            echo.kill()
        counters = topo.counters()
    (t3, b3), (t8, b8) = marks["3"], marks["8"]
    goodput = (b8 - b3) * 8 / (t8 - t3)
    rtt = float(np.median(json.loads(pings.stdout)))
    steady = [(t, b) for t, b in sent if started + 3 <= t <= started + 8]
    tbf_rate = (steady[-1][1] - steady[0][1]) * 8 / (steady[-1][0] - steady[0][0])
    print(f"tbf {tbf_rate / 1e6:.3f} Mbit/s; goodput {goodput / 1e6:.3f} Mbit/s, median RTT beside it {rtt * 1e3:.1f} ms, pfifo max "
          f"{max(backlog)} packets, base RTT {base * 1e6:.0f} us, drops {counters['drops']}")
    assert 0 < base < 1e-3
    # Every byte the tbf sends is a 1514-byte frame carrying 1448 bytes of payload: the
    # goodput is the tbf's own rate over the same seconds times 1448/1514 (measured within
    # 0.1%). The tbf's rate is set to 10 Mbit/s; on a busy or jittery VM its watchdog
    # sends less, never more (9.40 to 9.96 Mbit/s on this 2-core VM, 2026-11-27).
    assert goodput == pytest.approx(tbf_rate * 1448 / 1514, rel=0.02)
    assert 0.9 * 10e6 <= tbf_rate <= 1.02 * 10e6
    assert counters["drops"] > 0 and 90 <= max(backlog) <= 100  # Reno found the buffer's end, and it is 100
    assert 0.121 / 2 - 0.01 < rtt < 0.121 + 0.005


def test_cli_refuses_a_bad_scenario_before_any_work(tmp_path):
    p = _variant(tmp_path, "seeds = 1", "seeds = -1")
    r = subprocess.run([sys.executable, "-m", "cclab.cli", "testbed", "run", str(p), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "cclab: error: testbed.seeds: expected a positive integer, got -1"
    assert not (tmp_path / "o").exists()


def test_run_says_why_it_cannot_build_the_testbed(tmp_path, monkeypatch):
    monkeypatch.setattr(netns, "_PROBE", (False, "the testbed needs root (ip netns, veth, tc)"))
    with pytest.raises(netns.TestbedError, match="cannot build the testbed here: the testbed needs root"):
        runner.run(load(SCENARIO), tmp_path / "o")
    assert not (tmp_path / "o").exists()
