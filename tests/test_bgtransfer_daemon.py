"""`cclab bg daemon` and its verbs: the scheduler (pure), the job fields' checks, and end to
end with a real daemon process on a real Unix socket, a real HTTP server
(bgtransfer.server) and a real `kill -9`."""
from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cclab import cli
from cclab.bgtransfer.client import Client, DaemonError
from cclab.bgtransfer.jobs import JobError, check_spec, parse_window
from cclab.bgtransfer.scheduler import JobView, assign, foreground, hold, in_window, next_change
from cclab.bgtransfer.server import ServeOptions, ServerThread

ROOT = Path(__file__).resolve().parents[1]


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# -- the scheduler (pure) ---------------------------------------------------------------
def test_slots_go_in_strict_priority_then_fifo():
    jobs = [JobView(1, "low", ready=5), JobView(2, "normal", ready=1), JobView(3, "high", ready=2),
            JobView(4, "normal", ready=3), JobView(5, "foreground", ready=9)]
    assert assign(jobs, 4, 0.0) == [3, 3, 2, 4]  # high's two, then normal FIFO by id; never foreground
    assert assign(jobs, 100, 0.0) == [3, 3, 2, 4, 4, 4, 1, 1, 1, 1, 1]  # 11 = every background chunk
    assert foreground(jobs, 4, 0.0) == [5, 5, 5, 5]  # foreground: no controller, only the cap


def test_holds_hold_one_job_and_not_the_others():
    now = dt.datetime(2026, 11, 27, 23, 30).timestamp()
    night, day = "22:00-06:00", "08:00-18:00"
    jobs = [JobView(1, "high", window=day, ready=3), JobView(2, "high", not_before=now + 60, ready=3),
            JobView(3, "high", state="paused", ready=3), JobView(4, "low", window=night, ready=2)]
    assert [hold(j, now) is not None for j in jobs] == [True, True, True, False]
    assert assign(jobs, 10, now) == [4, 4]
    assert assign(jobs, 10, now, allowed=False) == []  # the transfer check holds background jobs
    assert foreground([JobView(7, "foreground", ready=1)], 5, now) == [7]  # not foreground ones
    # the next change: job 2's not-before (60 s) before job 1's window opens (08:00)
    assert next_change(jobs, now) == pytest.approx(now + 60)
    assert next_change([jobs[0]], now) == pytest.approx(dt.datetime(2026, 11, 28, 8, 0).timestamp())


def test_a_window_wraps_past_midnight_start_included_end_not():
    at = lambda h, m: dt.datetime(2026, 11, 27, h, m).timestamp()  # noqa: E731
    assert in_window("22:00-06:00", at(22, 0)) and in_window("22:00-06:00", at(3, 0))
    assert not in_window("22:00-06:00", at(6, 0)) and not in_window("22:00-06:00", at(12, 0))
    assert in_window("08:00-18:00", at(17, 59)) and not in_window("08:00-18:00", at(18, 0))
    assert parse_window("00:00-23:59") == (0, 1439)


# -- the fields -------------------------------------------------------------------------
GOOD = {"urls": ["http://h.example/a.bin"], "dest": "/nonexistent/cclab-test-dest"}


@pytest.mark.parametrize("change, field", [
    ({"urls": ["file:///etc/passwd"]}, "urls[0]"),
    ({"urls": ["http://h.example/a", "http://other.example/b"]}, "urls[1]"),
    ({"urls": []}, "urls"),
    ({"dest": "relative/path"}, "dest"),
    ({"names": ["../escape"]}, "names[0]"),
    ({"names": [".cclab-bg/journal.sqlite"]}, "names[0]"),
    ({"priority": "urgent"}, "priority"),
    ({"not_before": "tomorrow"}, "not_before"),
    ({"window": "22:00-22:00"}, "window"),
    ({"max_rate": "fast"}, "max_rate"),
    ({"size": "big"}, "size"),
    ({"size": 0}, "size"),
    ({"sha256": "abc"}, "sha256"),
    ({"on_complete": "echo 'unclosed"}, "on_complete"),
    ({"shell": "yes"}, "shell"),
    ({"colour": "red"}, "colour"),
])
def test_every_field_is_checked_and_named(change, field):
    with pytest.raises(JobError) as err:
        check_spec({**GOOD, **change}, time.time())
    assert str(err.value).startswith(field + ":"), str(err.value)


def test_a_symbolic_link_out_of_dest_is_refused(tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "sub").symlink_to(tmp_path)
    with pytest.raises(JobError, match=r"^names\[0\]: .* leads outside dest"):
        check_spec({"urls": ["http://h/a"], "dest": str(dest), "names": ["sub/a"]}, 0.0)
    spec = check_spec({"urls": ["http://h/a"], "dest": str(dest), "not_before": "+2m"}, 1000.0)
    assert spec.not_before == 1120.0 and spec.names == ["a"]


# -- end to end -------------------------------------------------------------------------
class Daemon:
    """A `cclab bg daemon` process on its own state folder and socket."""

    def __init__(self, tmp: Path, *extra: str, sock: Path | None = None):
        self.state, self.sock = tmp / "state", sock or tmp / "run" / "d.sock"
        self.extra = list(extra)
        self.proc: subprocess.Popen | None = None
        self.client = Client(self.sock, timeout=10)

    def start(self) -> "Daemon":
        self.log = open(self.state.parent / "daemon.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "cclab.cli", "bg", "daemon", "--state", str(self.state),
                                      "--socket", str(self.sock), "--backoff", "0.05", "0.2", "--timeout", "5",
                                      *self.extra], stderr=self.log, cwd=ROOT)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.client.jobs()
                return self
            except DaemonError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the daemon did not start: {self.logtext()}") from None
                time.sleep(0.05)

    def logtext(self) -> str:
        return (self.state.parent / "daemon.log").read_text(errors="replace")

    def kill(self, sig=signal.SIGKILL) -> int:
        self.proc.send_signal(sig)
        rc = self.proc.wait(20)
        self.log.close()
        return rc

    def add(self, urls, dest, **kw) -> int:
        return self.client.add(urls=list(urls), dest=str(dest), **kw)["id"]

    def wait(self, ids, timeout=30.0, until=("done", "failed", "cancelled")) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            jobs = {j["id"]: j for j in self.client.jobs()["jobs"]}
            if all(jobs[i]["state"] in until for i in ids):
                return jobs
            if time.monotonic() > deadline:
                raise AssertionError(f"jobs {ids} did not end: {json.dumps([jobs[i] for i in ids])}\n{self.logtext()}")
            time.sleep(0.05)


@pytest.fixture()
def files(tmp_path):
    src = tmp_path / "srv"
    src.mkdir()
    data = {"a.bin": os.urandom(2_000_000), "b.bin": os.urandom(300_000), "c.bin": os.urandom(500_000)}
    for k, v in data.items():
        (src / k).write_bytes(v)
    return src, data


@pytest.fixture()
def daemon(tmp_path):
    made = []

    def make(*extra, sock=None):
        d = Daemon(tmp_path, *extra, sock=sock).start()
        made.append(d)
        return d
    yield make
    for d in made:
        if d.proc.poll() is None:
            d.kill()


def leftovers(dest: Path) -> list[str]:
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if ".cclab-bg" in p.parts)


def test_jobs_from_two_clients_are_placed_verified_and_leave_nothing_behind(files, daemon, tmp_path):
    src, data = files
    d = daemon("--chunk-size", "256k")
    assert (d.sock.stat().st_mode & 0o777) == 0o600 and (d.sock.parent.stat().st_mode & 0o777) == 0o700
    dest, marker = tmp_path / "out", tmp_path / "done; rm -rf x"
    with ServerThread(src) as srv:
        a = d.add([srv.url + "a.bin", srv.url + "b.bin"], dest, sha256=None, on_complete=f"touch '{marker}'")
        b = d.add([srv.url + "c.bin"], dest, priority="high", sha256=sha(data["c.bin"]))
        jobs = d.wait([a, b])
    assert jobs[a]["state"] == jobs[b]["state"] == "done", jobs
    for k, v in data.items():
        assert (dest / k).read_bytes() == v
    assert jobs[a]["bytes_done"] == jobs[a]["size"] == 2_300_000
    assert leftovers(dest) == [] and not (dest / ".cclab-bg").exists()
    deadline = time.monotonic() + 5
    while not marker.exists() and time.monotonic() < deadline:  # one argument, no shell: ';' is a character
        time.sleep(0.05)
    assert marker.exists()


def test_the_cli_verbs_and_their_exit_statuses(files, daemon, tmp_path, capsys):
    src, data = files
    d = daemon()
    sock = ["--socket", str(d.sock)]
    with ServerThread(src) as srv:
        assert cli.main(["bg", "add", srv.url + "a.bin", "--dest", str(tmp_path / "o"), "--window", "24:00-01:00",
                         *sock]) == 2
        assert "window: expected HH:MM-HH:MM" in capsys.readouterr().err
        assert cli.main(["bg", "add", "file:///etc/passwd", "--dest", str(tmp_path / "o"), *sock]) == 2
        assert cli.main(["bg", "add", srv.url + "b.bin", "--dest", str(tmp_path / "o"), "--not-before", "+1h",
                         *sock]) == 0
        assert "job 1: queued" in capsys.readouterr().out
        assert cli.main(["bg", "add", srv.url + "b.bin", "--dest", str(tmp_path / "o"), *sock]) == 2
        assert "names[0]: job 1 is already fetching" in capsys.readouterr().err
        assert cli.main(["bg", "jobs", *sock]) == 0
        out = capsys.readouterr().out
        assert "not before" in out and "queued" in out
        assert cli.main(["bg", "pause", "1", *sock]) == 0 and "job 1: paused" in capsys.readouterr().out
        assert cli.main(["bg", "resume", "1", *sock]) == 0
        assert cli.main(["bg", "cancel", "1", *sock]) == 0 and "cancelled" in capsys.readouterr().out
        assert cli.main(["bg", "cancel", "1", *sock]) == 2  # already ended: bad input
        assert cli.main(["bg", "pause", "99", *sock]) == 2
        assert "no job 99" in capsys.readouterr().err
        assert cli.main(["bg", "add", srv.url + "c.bin", "--dest", str(tmp_path / "o"), *sock]) == 0
        assert cli.main(["bg", "watch", "2", "--interval", "0.1", *sock]) == 0
        capsys.readouterr()
        assert cli.main(["bg", "jobs", "--json", *sock]) == 0
        js = json.loads(capsys.readouterr().out)
    assert [(j["id"], j["state"]) for j in js["jobs"]] == [(1, "cancelled"), (2, "done")]
    assert js["hosts"][0]["policy"] == "fairbat" and js["hosts"][0]["limit"] >= 1 and js["hosts"][0]["idle"]
    assert (tmp_path / "o" / "c.bin").read_bytes() == data["c.bin"]
    assert not (tmp_path / "o" / "b.bin").exists() and leftovers(tmp_path / "o") == []
    assert cli.main(["bg", "jobs", "--socket", str(tmp_path / "nothing.sock")]) == 1


def job_ranges(dest: Path, job: int, name: str) -> int:
    from cclab.bgtransfer.journal import Journal

    j = Journal(dest / ".cclab-bg" / f"job-{job}" / "journal.sqlite", readonly=True)
    try:
        return sum(e - s for s, e in j.ranges(name))
    finally:
        j.close()


def test_kill_9_loses_no_range_and_no_job_and_refetches_at_most_the_unjournaled_bytes(tmp_path, daemon):
    # 4 MB at 1.5 MB/s in 1 MB chunks, two at once (static:2). Bound: a chunk journals what it
    # received every CHECKPOINT_S = 1 s (or 4 MiB), so a kill loses at most 1 s of the
    # rate plus one 64 KiB read per chunk in flight: here <= 1.5 MB + 2*64 KiB. What the
    # restarted daemon fetches must be exactly the journal's gaps.
    src = tmp_path / "srv"
    src.mkdir()
    data = os.urandom(4_000_000)
    (src / "a.bin").write_bytes(data)
    dest = tmp_path / "out"
    rate = 1_500_000
    with ServerThread(src, options=ServeOptions(rate=rate)) as srv:
        d = daemon("--policy", "static:2", "--chunk-size", "1MB")
        job = d.add([srv.url + "a.bin"], dest, sha256=sha(data))
        held = d.add([srv.url + "a.bin"], tmp_path / "later", not_before="+1h")
        deadline = time.monotonic() + 20
        while d.client.job(job)["bytes_done"] < 1_200_000:
            assert time.monotonic() < deadline, d.logtext()
            time.sleep(0.02)
        time.sleep(0.3)  # between two checkpoints, at some instant
        assert d.kill() == -signal.SIGKILL
        time.sleep(0.5)  # the server sees the connections die
        sent_before = srv.stats.bytes_by_path["/a.bin"]
        journaled = job_ranges(dest, job, "a.bin")
        assert (dest / ".cclab-bg" / f"job-{job}" / "partial" / "a.bin").exists()
        srv.stats.reset()
        d2 = daemon("--policy", "static:2", "--chunk-size", "1MB")
        jobs = d2.wait([job])
        sent_after = srv.stats.bytes_by_path["/a.bin"]
        assert {j["id"]: j["state"] for j in d2.client.jobs()["jobs"]} == {job: "done", held: "queued"}
    assert (dest / "a.bin").read_bytes() == data and jobs[job]["bytes_done"] == len(data)
    assert leftovers(dest) == []
    refetched = sent_before - journaled
    print(f"kill -9 at {sent_before} B sent, {journaled} B journaled: {refetched} B re-fetched")
    assert 0 < journaled < len(data)
    assert sent_after == len(data) - journaled  # no completed range again, every gap once
    assert 0 <= refetched <= rate * 1.0 + 2 * 65536 + 65536  # + a block in the socket buffers
    # a kill between recording a job's end and removing its folder: the next start sweeps it
    d2.kill()
    left = dest / ".cclab-bg" / f"job-{job}" / "partial"
    left.mkdir(parents=True)
    (left / "a.bin").write_bytes(b"stale")
    d3 = daemon()
    assert not (dest / ".cclab-bg").exists() and "removed the folders of 1 ended jobs" in d3.logtext()


def test_errors_are_retried_then_fail_the_job_clearly_and_the_queue_goes_on(files, tmp_path, daemon):
    src, data = files
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    d = daemon("--retries", "2")
    gone = d.add([f"http://127.0.0.1:{dead}/a.bin"], tmp_path / "o1")
    with ServerThread(src, options=ServeOptions(fail_every=2)) as srv:  # every 2nd GET a 503
        flaky = d.add([srv.url + "a.bin"], tmp_path / "o2", sha256=sha(data["a.bin"]))
        missing = d.add([srv.url + "nope.bin"], tmp_path / "o3")
        jobs = d.wait([gone, flaky, missing])
    assert jobs[gone]["state"] == "failed" and "after 2 retries" in jobs[gone]["error"], jobs[gone]
    assert "Connect" in jobs[gone]["error"] or "refused" in jobs[gone]["error"]
    assert jobs[flaky]["state"] == "done" and (tmp_path / "o2" / "a.bin").read_bytes() == data["a.bin"]
    assert jobs[missing]["state"] == "failed" and "HTTP 404" in jobs[missing]["error"]
    for o in ("o1", "o2", "o3"):
        assert not (tmp_path / o).exists() or leftovers(tmp_path / o) == []


def test_a_server_that_vanishes_mid_transfer_fails_the_job_after_retries(files, tmp_path, daemon):
    src, data = files
    srv = ServerThread(src, options=ServeOptions(rate=300_000)).start()
    d = daemon("--retries", "2", "--chunk-size", "256k")
    job = d.add([srv.url + "a.bin"], tmp_path / "o")
    deadline = time.monotonic() + 20
    while d.client.job(job)["bytes_done"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    srv.stop()
    jobs = d.wait([job])
    assert jobs[job]["state"] == "failed" and "gave up after 2 retries" in jobs[job]["error"]
    assert not (tmp_path / "o" / "a.bin").exists() and leftovers(tmp_path / "o") == []


def test_a_file_that_changes_on_the_server_or_a_wrong_checksum_is_never_placed(files, tmp_path, daemon):
    src, data = files
    d = daemon("--chunk-size", "256k")
    with ServerThread(src, options=ServeOptions(rate=400_000)) as srv:
        wrong = d.add([srv.url + "b.bin"], tmp_path / "o1", sha256=sha(b"something else"))
        changing = d.add([srv.url + "a.bin"], tmp_path / "o2")
        deadline = time.monotonic() + 20
        while d.client.job(changing)["bytes_done"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (src / "a.bin").write_bytes(os.urandom(len(data["a.bin"])))  # same size, a new ETag (mtime)
        jobs = d.wait([wrong, changing])
    assert jobs[wrong]["state"] == "failed" and "SHA-256 mismatch" in jobs[wrong]["error"]
    assert jobs[changing]["state"] == "failed" and "changed on the server" in jobs[changing]["error"]
    for o in ("o1", "o2"):
        assert [p.name for p in (tmp_path / o).iterdir()] == []  # nothing placed, no temp file


def test_priorities_finish_in_order_and_foreground_bypasses_the_limit(tmp_path, daemon):
    src = tmp_path / "srv"
    src.mkdir()
    for k in "wxyz":
        (src / f"{k}.bin").write_bytes(os.urandom(300_000))
    d = daemon("--policy", "static:1", "--chunk-size", "100k")
    with ServerThread(src, options=ServeOptions(rate=3_000_000)) as srv:
        start = f"+{1.0}s"  # all become eligible at one instant
        ids = {p: d.add([srv.url + f"{k}.bin"], tmp_path / "o", priority=p, not_before=start, names=[f"{k}.bin"])
               for k, p in zip("wxyz", ("low", "normal", "high", "foreground"))}
        jobs = d.wait(list(ids.values()))
        peak = srv.stats.max_active
    assert all(j["state"] == "done" for j in jobs.values())
    by_end = sorted(ids, key=lambda p: jobs[ids[p]]["finished_at"])
    assert by_end[1:] == ["high", "normal", "low"], by_end  # strict priority under a limit of 1
    assert by_end[0] == "foreground" and peak >= 2  # its 3 chunks beside the admitted one


def test_holds_rate_caps_and_the_transfer_check(files, tmp_path, daemon):
    src, data = files
    flag = tmp_path / "may-transfer"
    d = daemon("--check", f"test -e {flag}", "--check-every", "0.2", "--max-rate", "400k")
    with ServerThread(src) as srv:
        capped = d.add([srv.url + "c.bin"], tmp_path / "o", max_rate="500k", priority="foreground")
        gated = d.add([srv.url + "b.bin"], tmp_path / "o")
        time.sleep(0.5)
        held = d.client.job(gated)
        assert held["state"] in ("queued", "running") and held["held"] == "the transfer check says no"
        assert held["bytes_done"] == 0
        flag.touch()
        jobs = d.wait([capped, gated])
    c, g = jobs[capped], jobs[gated]
    assert c["state"] == g["state"] == "done"
    # the job's cap (bucket depth 16 KiB), then the daemon's (64 KiB) on both at once
    assert c["finished_at"] - c["added_at"] >= (500_000 - 16384) / 500_000
    span = max(c["finished_at"], g["finished_at"]) - c["added_at"]
    assert span >= (800_000 - 2 * 65536) / 400_000


class AppThread:
    """An aiohttp application served from a thread, on a Unix socket (``path``) or TCP."""

    def __init__(self, make, path: Path | None = None):
        self.make, self.path = make, path
        self.ready, self.stop = threading.Event(), threading.Event()
        self.port = None

    async def main(self):
        from aiohttp import web

        from cclab.bgtransfer.api import listen

        app = self.make()
        if self.path is not None:
            runner = await listen(app, str(self.path))
        else:
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
        self.ready.set()
        while not self.stop.is_set():
            await asyncio.sleep(0.02)
        await runner.cleanup()

    def __enter__(self):
        self.thread = threading.Thread(target=lambda: asyncio.run(self.main()))
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_the_socket_refuses_other_users(tmp_path):
    from cclab.bgtransfer.api import make_app

    class Service:
        def jobs(self):
            return {"jobs": []}

    for uid, expect in ((os.getuid() + 1, 403), (os.getuid(), 200)):
        with AppThread(lambda: make_app(Service(), uid=uid), tmp_path / "s" / "api.sock"):
            try:
                Client(tmp_path / "s" / "api.sock").jobs()
                status = 200
            except DaemonError as exc:
                status = exc.status
                assert "refused: peer uid" in str(exc)
        assert status == expect


def test_a_redirect_to_another_scheme_fails_the_job_at_once(tmp_path, daemon):
    from aiohttp import web

    async def redirect(request):
        raise web.HTTPFound("file:///etc/passwd")

    def make():
        app = web.Application()
        app.router.add_route("*", "/passwd", redirect)
        return app

    d = daemon("--retries", "8")
    with AppThread(make) as srv:
        job = d.add([f"http://127.0.0.1:{srv.port}/passwd"], tmp_path / "o")
        jobs = d.wait([job], timeout=10)
    assert jobs[job]["state"] == "failed" and "file:///etc/passwd" in jobs[job]["error"], jobs[job]
    assert "retries" not in jobs[job]["error"]  # not retried: a redirect will not change
    assert not (tmp_path / "o" / "passwd").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_is_refused_even_on_a_widened_socket(tmp_path, daemon):
    import tempfile

    open_dir = Path(tempfile.mkdtemp(prefix="cclab-bgd-"))  # pytest's tmp_path is 0700: the socket goes here
    try:
        d = daemon(sock=open_dir / "run" / "d.sock")
        os.chmod(d.sock, 0o666)
        os.chmod(d.sock.parent, 0o755)
        os.chmod(open_dir, 0o755)
        answer = _as_nobody(d.sock)
    finally:
        import shutil

        shutil.rmtree(open_dir, ignore_errors=True)
    assert answer.startswith(b"HTTP/1.1 403") and b"refused: peer uid 65534" in answer, answer


def _as_nobody(sock: Path) -> bytes:
    """GET /v1/jobs as uid 65534 from a forked child; the raw answer."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nobody (uid 65534), a raw HTTP request (the stdlib under /root is unreadable)
        try:
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
                s.sendall(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = b""
                while block := s.recv(65536):
                    answer += block
            os.write(w, answer)
        except BaseException as exc:  # noqa: BLE001
            os.write(w, repr(exc).encode())
        os._exit(0)
    os.close(w)
    answer = b""
    while block := os.read(r, 65536):
        answer += block
    os.close(r)
    os.waitpid(pid, 0)
    return answer


def test_the_systemd_unit_starts_the_daemon(files, tmp_path):
    unit = (ROOT / "docs" / "examples" / "cclab-bg.service").read_text()
    exec_start = next(line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStart="))
    spec = {"%h": str(tmp_path / "home"), "%S": str(tmp_path / "state"), "%t": str(tmp_path / "run")}
    argv = exec_start.split()
    assert argv[0].endswith("/cclab") and argv[1:3] == ["bg", "daemon"]
    argv = [sys.executable, "-m", "cclab.cli"] + [_expand(a, spec) for a in argv[1:]]
    sock = Path(_expand(next(a for a in exec_start.split() if a.startswith("%t")), spec))
    env = dict(os.environ, HOME=spec["%h"])
    p = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not sock.exists():
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        src, data = files
        with ServerThread(src) as srv:
            c = Client(sock)
            job = c.add(urls=[srv.url + "b.bin"], dest=str(tmp_path / "o"))["id"]
            while c.job(job)["state"] != "done":
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGTERM)  # systemctl --user stop: KillSignal=SIGTERM
        _, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    assert not sock.exists() and "stopped" in err
    assert (tmp_path / "o" / "b.bin").read_bytes() == data["b.bin"]


def _expand(arg: str, spec: dict) -> str:
    for k, v in spec.items():
        arg = arg.replace(k, v)
    return arg


def test_pause_holds_a_running_job_resume_finishes_it_cancel_leaves_nothing(files, tmp_path, daemon):
    src, data = files
    d = daemon("--chunk-size", "100k")
    with ServerThread(src, options=ServeOptions(rate=1_000_000)) as srv:
        kept = d.add([srv.url + "a.bin"], tmp_path / "o", sha256=sha(data["a.bin"]))
        dropped = d.add([srv.url + "c.bin"], tmp_path / "o", priority="foreground", max_rate="100k")
        deadline = time.monotonic() + 20
        while d.client.job(kept)["bytes_done"] < 200_000:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert d.client.act(kept, "pause")["state"] == "paused"
        time.sleep(0.4)  # the chunks in flight (100 kB each, 0.1-0.3 s) end
        paused_at = job_ranges(tmp_path / "o", kept, "a.bin")  # what its journal has, now
        time.sleep(0.5)
        assert job_ranges(tmp_path / "o", kept, "a.bin") == paused_at < len(data["a.bin"])
        assert d.client.job(kept)["held"] == "paused"
        assert d.client.act(dropped, "cancel")["state"] == "cancelled"
        assert d.client.act(kept, "resume")["state"] == "running"
        jobs = d.wait([kept])
    assert jobs[kept]["state"] == "done" and (tmp_path / "o" / "a.bin").read_bytes() == data["a.bin"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["a.bin"]  # c.bin's partial data went too


def test_an_idle_daemon_sleeps_past_its_controllers_periods(files, tmp_path, daemon):
    # a controller period of 0.2 s: a host's controller left ticking after its jobs end
    # (or a held job's due retry) would wake the loop without end
    src, data = files
    d = daemon("--param", "period=0.2")
    with ServerThread(src) as srv:
        d.wait([d.add([srv.url + "b.bin"], tmp_path / "o")])
        d.add([srv.url + "c.bin"], tmp_path / "o", not_before="+1h")

        def cpu() -> float:
            f = Path(f"/proc/{d.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        time.sleep(0.5)
        c0 = cpu()
        time.sleep(1.5)
        assert cpu() - c0 <= 0.05  # 3 % of a core at most (a busy loop takes 100 %)
        hosts = d.client.jobs()["hosts"]
        assert len(hosts) == 1 and hosts[0]["idle"]  # retired: no controller without an open job
