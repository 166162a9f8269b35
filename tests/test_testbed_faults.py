"""Faults end to end on the namespace testbed (issue 18, part 5): `cclab bg fetch` in
the client namespace downloads two files from `cclab bg serve` in the server namespace
through the tbf bottleneck, and

* the manager is killed with SIGKILL mid-transfer and started again;
* the server is killed with SIGKILL mid-transfer and started again;
* the bottleneck link goes down for 10 s (`ip link set DEV down` in the router).

After each, every file is complete with the right SHA-256, and the bytes downloaded
twice are within the ranges in flight at the fault. What "downloaded" counts:

* the server's own counter of body bytes written (`/_cclab/stats` of `cclab bg serve`)
  where the server survives: it counts every byte sent, including what sat in socket
  buffers when a connection died, so it is an upper bound of what the client got; the
  server cannot send beyond the ranges asked, so bytes_sent - total is the re-fetched
  part of ranges, which must be at most the chunks in flight at the fault (the policy's
  limit, static:2) times the chunk size: a SIGKILLed manager loses what its active chunks
  received since they started (the journal records a range when its connection ends,
  after fsync), nothing else;
* the manager's own count of body bytes received (`bytes_fetched` of `--json`) where the
  manager survives: it journals every received byte of a broken connection and resumes
  from it, so it downloads nothing twice (0 bytes beyond the total).

Needs root, network namespaces and tbf; skipped with the reason otherwise. About 35 s.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from cclab.testbed import netns
from cclab.testbed.runner import start_server, write_random

pytestmark = pytest.mark.skipif(not netns.probe()[0], reason=f"testbed unavailable: {netns.probe()[1]}")

RATE = 20e6          # a faster bottleneck than the papers' so that each test stays short
CHUNK = 1_000_000
SIZES = (4_000_000, 4_500_000)
LIMIT = 2            # static:2: at most two chunks in flight at any fault
PORT = 80


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    root = tmp_path_factory.mktemp("tb-faults")
    os.chmod(root, 0o755)
    files = root / "files"
    files.mkdir()
    manifest = []
    for i, size in enumerate(SIZES):
        write_random(files / f"f{i}.bin", size, 100 + i)
        manifest.append({"url": f"http://{netns.SERVER_ADDR}:{PORT}/f{i}.bin", "size": size,
                         "sha256": hashlib.sha256((files / f"f{i}.bin").read_bytes()).hexdigest()})
    (root / "manifest.json").write_text(json.dumps({"files": manifest}))
    with netns.Topology(RATE, 100) as topo:
        server = start_server(topo, files, PORT)
        state = {"topo": topo, "root": root, "files": files, "server": server}
        yield state
        state["server"].kill()
        state["server"].wait()


def _stats(topo, reset=False) -> dict:
    code = ("import urllib.request,sys;"
            f"sys.stdout.write(urllib.request.urlopen('http://{netns.SERVER_ADDR}:{PORT}/_cclab/stats"
            f"{'?reset=1' if reset else ''}',timeout=5).read().decode())")
    return json.loads(netns.sh(*topo.exec_args(topo.client, sys.executable, "-c", code)).stdout)


def _fetch(bed, dest) -> subprocess.Popen:
    topo = bed["topo"]
    return subprocess.Popen(topo.exec_args(topo.client, sys.executable, "-m", "cclab.cli", "bg", "fetch",
                                           str(bed["root"] / "manifest.json"), "-d", str(dest), "--policy",
                                           f"static:{LIMIT}", "--chunk-size", str(CHUNK), "--quiet", "--json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _until_sent(topo, fraction: float, timeout: float = 20) -> int:
    """Wait until the server has sent ``fraction`` of the bytes; return what it sent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sent = _stats(topo)["bytes_sent"]
        if sent >= fraction * sum(SIZES):
            return sent
        time.sleep(0.05)
    raise AssertionError(f"the transfer did not reach {fraction:.0%} in {timeout} s")


def _finish(p: subprocess.Popen, timeout: float = 60) -> dict:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err
    return json.loads(out)


def _check_files(bed, dest) -> None:
    for i, size in enumerate(SIZES):
        got = (dest / f"f{i}.bin").read_bytes()
        assert len(got) == size
        assert hashlib.sha256(got).digest() == hashlib.sha256((bed["files"] / f"f{i}.bin").read_bytes()).digest()


def test_manager_killed_mid_transfer_resumes(bed, tmp_path):
    topo = bed["topo"]
    _stats(topo, reset=True)
    first = _fetch(bed, tmp_path)
    before = _until_sent(topo, 0.4)
    first.kill()  # SIGKILL: no finally, no journal write of the active chunks
    first.wait()
    res = _finish(_fetch(bed, tmp_path))
    _check_files(bed, tmp_path)
    st = _stats(topo)
    twice = st["bytes_sent"] - sum(SIZES)
    print(f"killed after {before} B; server sent {st['bytes_sent']} B for {sum(SIZES)} B: {twice} B twice; "
          f"second run fetched {res['bytes_fetched']} B")
    assert 0 <= twice <= LIMIT * CHUNK
    assert st["max_active"] <= LIMIT


def test_server_killed_mid_transfer_restarts(bed, tmp_path):
    topo = bed["topo"]
    _stats(topo, reset=True)
    p = _fetch(bed, tmp_path)
    _until_sent(topo, 0.4)
    bed["server"].kill()  # SIGKILL of `cclab bg serve`: every connection is reset
    bed["server"].wait()
    time.sleep(1.0)  # the manager meets refused connections and backs off
    bed["server"] = start_server(topo, bed["files"], PORT)
    res = _finish(p)
    _check_files(bed, tmp_path)
    print(f"manager fetched {res['bytes_fetched']} B for {sum(SIZES)} B")
    assert res["bytes_fetched"] == sum(SIZES)  # every byte received was kept: none twice


def test_bottleneck_down_for_ten_seconds(bed, tmp_path):
    topo = bed["topo"]
    _stats(topo, reset=True)
    p = _fetch(bed, tmp_path)
    _until_sent(topo, 0.3)
    topo.link(up=False)
    down = time.monotonic()
    time.sleep(10)
    assert p.poll() is None  # the manager waits (its read timeout is 30 s)
    topo.link(up=True)
    res = _finish(p)
    _check_files(bed, tmp_path)
    st = _stats(topo)
    print(f"link down 10 s; done {time.monotonic() - down:.1f} s after it went down; server sent "
          f"{st['bytes_sent']} B, manager fetched {res['bytes_fetched']} B for {sum(SIZES)} B")
    assert res["bytes_fetched"] == sum(SIZES)
    assert st["bytes_sent"] - sum(SIZES) <= LIMIT * CHUNK  # re-requested ranges, if a connection gave up
