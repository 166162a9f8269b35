"""`cclab bg serve`: byte ranges as RFC 9110 §14 specifies them, validators, the rate
limit, fault injection, and the command line."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from cclab.bgtransfer.server import ServeOptions, ServerThread, parse_range


def _get(url: str, headers: dict | None = None, method: str = "GET"):
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.fixture()
def served(tmp_path):
    data = os.urandom(100_000)
    (tmp_path / "a.bin").write_bytes(data)
    (tmp_path / ".hidden").write_bytes(b"secret")
    with ServerThread(tmp_path) as srv:
        yield srv, data


def test_parse_range_follows_rfc9110():
    # §14.1.2: first-last inclusive; an open end and a last beyond the end stop at size-1
    assert parse_range("bytes=0-499", 10_000) == (0, 499)
    assert parse_range("bytes=9500-", 10_000) == (9500, 9999)
    assert parse_range("bytes=9500-20000", 10_000) == (9500, 9999)
    assert parse_range("bytes=-500", 10_000) == (9500, 9999)   # suffix
    assert parse_range("bytes=-20000", 10_000) == (0, 9999)    # suffix longer than the file
    assert parse_range("bytes=10000-", 10_000) == "unsatisfiable"
    assert parse_range("bytes=-0", 10_000) == "unsatisfiable"
    # ignored (whole file): invalid, other units, several ranges
    for h in ("bytes=5-3", "items=0-1", "bytes=0-1,5-6", "bytes=a-b", "bytes 0-1"):
        assert parse_range(h, 10_000) is None, h


def test_ranges_206_416_head_and_validators(served):
    srv, data = served
    url = srv.url + "a.bin"
    status, h, body = _get(url)
    assert status == 200 and body == data and h["Accept-Ranges"] == "bytes"
    etag = h["ETag"]
    status, h, body = _get(url, {"Range": "bytes=1000-1999"})
    assert status == 206 and body == data[1000:2000]
    assert h["Content-Range"] == f"bytes 1000-1999/{len(data)}" and h["Content-Length"] == "1000"
    status, h, body = _get(url, {"Range": "bytes=-10"})
    assert status == 206 and body == data[-10:]
    status, h, _ = _get(url, {"Range": f"bytes={len(data)}-"})
    assert status == 416 and h["Content-Range"] == f"bytes */{len(data)}"
    # If-Range: the range only while the validator matches
    status, _, body = _get(url, {"Range": "bytes=0-9", "If-Range": etag})
    assert status == 206 and body == data[:10]
    status, _, body = _get(url, {"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert status == 200 and body == data
    status, h, body = _get(url, method="HEAD")
    assert status == 200 and body == b"" and h["Content-Length"] == str(len(data))
    assert _get(srv.url + "nothing")[0] == 404
    assert _get(srv.url + ".hidden")[0] == 404
    assert _get(srv.url + "../" + "a.bin")[0] in (200, 404)  # normalised by the client or refused
    stats = srv.stats
    assert stats.bytes_by_path["/a.bin"] == 2 * len(data) + 1000 + 10 + 10


def test_rate_limit_and_faults(tmp_path):
    data = os.urandom(200_000)
    (tmp_path / "f").write_bytes(data)
    with ServerThread(tmp_path, options=ServeOptions(rate=1_000_000)) as srv:
        t0 = time.monotonic()
        status, _, body = _get(srv.url + "f")
        elapsed = time.monotonic() - t0
    assert status == 200 and body == data
    # 200 kB at 1 MB/s: 0.2 s less the bucket's depth (one block of 20 ms of the rate)
    assert 0.17 <= elapsed < 0.5, elapsed
    with ServerThread(tmp_path, options=ServeOptions(fail_every=2, ignore_range=True)) as srv:
        assert _get(srv.url + "f", {"Range": "bytes=0-9"})[0] == 200  # range ignored
        assert _get(srv.url + "f")[0] == 503
        assert _get(srv.url + "f")[0] == 200
    with ServerThread(tmp_path, options=ServeOptions(drop_every=1)) as srv:
        with pytest.raises(Exception):  # the body stops half way
            _get(srv.url + "f")
        assert srv.stats.bytes_by_path["/f"] == len(data) // 2


def test_cli_serve_prints_its_port(tmp_path):
    (tmp_path / "x").write_bytes(b"hello")
    p = subprocess.Popen([sys.executable, "-m", "cclab.cli", "bg", "serve", str(tmp_path), "--port", "0"],
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("serving ") and "http://127.0.0.1:" in line
        url = line.split(" on ")[1].split()[0]
        status, _, body = _get(url + "x", {"Range": "bytes=1-"})
        assert status == 206 and body == b"ello"
        assert hashlib.sha256(body).hexdigest()
    finally:
        p.terminate()
        p.wait(5)
