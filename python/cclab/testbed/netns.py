"""The testbed's topology: three network namespaces joined by two veth pairs,

    server ──veth── router ──veth── client
                         └ tbf (rate, bucket) over a pfifo of B packets, on the
                           router's egress toward the client: the download bottleneck

named with a per-run prefix (``cctb`` + 6 hex digits) so that two runs, or a run and
the remains of a killed one, never collide. Every name a run creates is recorded in
``STATE_DIR/PREFIX.json`` with the owner's pid before it is created, so that
``cclab testbed clean`` (and the start of every run) removes what a dead owner left.

Only ``ip`` and ``tc`` (iproute2) are used; everything needs root (CAP_NET_ADMIN and
CAP_SYS_ADMIN for ``ip netns``). ``probe()`` says whether this machine allows it.
"""
from __future__ import annotations

import atexit
import json
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX_TAG = "cctb"
STATE_DIR = Path(os.environ.get("CCLAB_TESTBED_STATE", "/run/cclab-testbed"))

SERVER_ADDR, ROUTER_SERVER_SIDE = "10.201.1.1", "10.201.1.2"
CLIENT_ADDR, ROUTER_CLIENT_SIDE = "10.201.2.1", "10.201.2.2"
MTU = 1500


class TestbedError(RuntimeError):
    """A testbed command failed; the message says which and why."""


def sh(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run one command (no shell) and return it; TestbedError with its stderr on failure."""
    try:
        p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise TestbedError(f"{args[0]}: command not found (the testbed needs iproute2's ip and tc)") from None
    if check and p.returncode != 0:
        raise TestbedError(f"`{' '.join(args)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p


_PROBE: tuple[bool, str] | None = None


def probe() -> tuple[bool, str]:
    """(True, "") if this process may build the testbed, else (False, why). Tries to
    create and delete a namespace, a veth pair and a tbf; the answer is cached."""
    global _PROBE
    if _PROBE is None:
        _PROBE = _probe()
    return _PROBE


def _probe() -> tuple[bool, str]:
    if os.name != "posix" or not Path("/proc/self/ns/net").exists():
        return False, "network namespaces need Linux"
    if os.geteuid() != 0:
        return False, "the testbed needs root (ip netns, veth, tc)"
    name = f"{PREFIX_TAG}probe{os.getpid()}"
    try:
        sh("ip", "netns", "add", name)
    except TestbedError as exc:
        return False, f"cannot create a network namespace: {exc}"
    try:
        sh("ip", "-n", name, "link", "add", "pa", "type", "veth", "peer", "name", "pb")
        sh("tc", "-n", name, "qdisc", "add", "dev", "pa", "root", "tbf", "rate", "1mbit", "burst", "3028",
           "limit", "30000")
    except TestbedError as exc:
        return False, f"cannot build a veth pair with a tbf qdisc: {exc}"
    finally:
        sh("ip", "netns", "del", name, check=False)
    return True, ""


_NETEM: bool | None = None


def netem_available() -> bool:
    """Whether the kernel has the netem qdisc (tried on a scratch namespace; cached)."""
    global _NETEM
    if _NETEM is None:
        name = f"{PREFIX_TAG}netem{os.getpid()}"
        sh("ip", "netns", "add", name)
        try:
            sh("ip", "-n", name, "link", "add", "pa", "type", "veth", "peer", "name", "pb")
            _NETEM = sh("tc", "-n", name, "qdisc", "add", "dev", "pa", "root", "netem", "delay", "1ms",
                        check=False).returncode == 0
        finally:
            sh("ip", "netns", "del", name, check=False)
    return _NETEM


@dataclass
class Topology:
    """One run's namespaces and links. ``up()`` builds them; ``down()`` removes them
    (idempotent). Use as a context manager, or call ``install_cleanup()`` for
    SIGINT/SIGTERM/exit handling."""

    rate_bps: float
    buffer_packets: int
    burst_bytes: int = 2 * (MTU + 14)
    delay_s: float = 0.0
    congestion: str = "reno"
    prefix: str = field(default_factory=lambda: PREFIX_TAG + secrets.token_hex(3))
    created: bool = False

    @property
    def server(self) -> str:
        return f"{self.prefix}-srv"

    @property
    def router(self) -> str:
        return f"{self.prefix}-rtr"

    @property
    def client(self) -> str:
        return f"{self.prefix}-cli"

    @property
    def namespaces(self) -> list[str]:
        return [self.server, self.router, self.client]

    # interface names (at most 15 characters: prefix is 10)
    @property
    def bottleneck_dev(self) -> str:
        """The router's interface toward the client: the tbf sits on its egress."""
        return f"{self.prefix}r1"

    def up(self) -> "Topology":
        clean_stale()
        _record(self.prefix, self.namespaces)
        self.created = True
        p, s, r, c = self.prefix, self.server, self.router, self.client
        for ns in self.namespaces:
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"{p}s0", "netns", s, "type", "veth", "peer", "name", f"{p}r0", "netns", r)
        sh("ip", "link", "add", f"{p}r1", "netns", r, "type", "veth", "peer", "name", f"{p}c0", "netns", c)
        for ns, dev, addr in ((s, f"{p}s0", SERVER_ADDR), (r, f"{p}r0", ROUTER_SERVER_SIDE),
                              (r, f"{p}r1", ROUTER_CLIENT_SIDE), (c, f"{p}c0", CLIENT_ADDR)):
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            # MTU-sized packets at the qdisc: no TSO/GSO super-packets from the senders
            # (veth does no GRO without XDP, so the router forwards what it gets).
            sh("ip", "-n", ns, "link", "set", dev, "mtu", str(MTU), "gso_max_segs", "1", "up")
        sh("ip", "-n", s, "route", "add", "default", "via", ROUTER_SERVER_SIDE)
        sh("ip", "-n", c, "route", "add", "default", "via", ROUTER_CLIENT_SIDE)
        sh("ip", "netns", "exec", r, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        # The congestion control of every socket of the endpoints (a per-namespace
        # default since Linux 4.15; a new namespace otherwise takes the kernel's
        # built-in default, bbr on this machine, not the host's sysctl).
        for ns in (s, c):
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"net.ipv4.tcp_congestion_control={self.congestion}")
        self._bottleneck()
        return self

    def _bottleneck(self) -> None:
        """tbf (token bucket: rate, bucket of ``burst_bytes``) whose inner queue is a
        pfifo of ``buffer_packets`` packets: a drop-tail buffer counted in packets,
        as ns-2's DropTail of the papers. With netem and a delay, netem sits under the
        pfifo's place on the client's side (its own egress), so the queue stays in
        packets."""
        r, dev = self.router, self.bottleneck_dev
        # tbf's own limit (bytes) is replaced by the pfifo below; it must admit the pfifo.
        sh("tc", "-n", r, "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf",
           "rate", f"{int(self.rate_bps)}bit", "burst", str(self.burst_bytes),
           "limit", str((self.buffer_packets + 2) * (MTU + 14)))
        sh("tc", "-n", r, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo",
           "limit", str(self.buffer_packets))
        if self.delay_s > 0:
            if not netem_available():
                raise TestbedError("a base delay needs the netem qdisc, which this kernel lacks")
            # Half the delay each way, on the egresses of the client and of the server
            # (not on the bottleneck, whose queue must stay the pfifo).
            half = f"{self.delay_s / 2 * 1e6:.0f}us"
            sh("tc", "-n", self.client, "qdisc", "add", "dev", f"{self.prefix}c0", "root", "netem",
               "delay", half, "limit", "100000")
            sh("tc", "-n", self.server, "qdisc", "add", "dev", f"{self.prefix}s0", "root", "netem",
               "delay", half, "limit", "100000")

    def exec_args(self, ns: str, *cmd: str) -> list[str]:
        """The argv that runs ``cmd`` inside namespace ``ns``."""
        return ["ip", "netns", "exec", ns, *cmd]

    def link(self, up: bool) -> None:
        """Take the bottleneck down (both ends of the router—client veth) or up again."""
        sh("ip", "-n", self.router, "link", "set", self.bottleneck_dev, "up" if up else "down")

    def counters(self) -> dict:
        """Bytes and packets the bottleneck qdisc sent and dropped (``tc -s -j``)."""
        out = sh("tc", "-s", "-j", "-n", self.router, "qdisc", "show", "dev", self.bottleneck_dev).stdout
        root = next(q for q in json.loads(out) if q.get("kind") == "tbf")
        return {"bytes": root["bytes"], "packets": root["packets"], "drops": root["drops"]}

    def down(self) -> None:
        if self.created:
            remove(self.prefix)
            self.created = False

    def install_cleanup(self) -> None:
        """Remove the topology at interpreter exit and on SIGINT / SIGTERM (then exit
        with the usual status 128 + signal)."""
        atexit.register(self.down)

        def handler(signum, frame):
            self.down()
            raise SystemExit(128 + signum)

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, handler)

    def __enter__(self) -> "Topology":
        try:
            return self.up()
        except BaseException:
            self.down()
            raise

    def __exit__(self, *exc) -> None:
        self.down()


def _record(prefix: str, namespaces: list[str]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = STATE_DIR / f".{prefix}.tmp"
    tmp.write_text(json.dumps({"pid": os.getpid(), "start": _proc_start(os.getpid()), "namespaces": namespaces}))
    tmp.rename(STATE_DIR / f"{prefix}.json")


def _proc_start(pid: int) -> str | None:
    """The process's start time in clock ticks (field 22 of /proc/PID/stat): a pid
    reused by another process does not pass for the owner."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(state: dict) -> bool:
    return state.get("start") is not None and _proc_start(int(state.get("pid", -1))) == state["start"]


def _listed() -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def remove(prefix: str) -> list[str]:
    """Kill every process inside the prefix's namespaces, delete them (the veths go
    with them) and the state file. Returns the namespaces removed."""
    gone = []
    for ns in [n for n in _listed() if n.startswith(prefix + "-")]:
        pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        sh("ip", "netns", "del", ns, check=False)
        gone.append(ns)
    (STATE_DIR / f"{prefix}.json").unlink(missing_ok=True)
    return gone


def clean_stale(everything: bool = False) -> list[str]:
    """Remove the namespaces of runs whose owner is dead (all testbed namespaces with
    ``everything``), and namespaces with our tag but no state file (a crash between
    creating them and... never: the state is written first; so these are from a run
    whose state directory was wiped, e.g. by a reboot of /run). Returns what it removed."""
    owners: dict[str, dict] = {}
    if STATE_DIR.exists():
        for f in STATE_DIR.glob(f"{PREFIX_TAG}*.json"):
            try:
                owners[f.stem] = json.loads(f.read_text())
            except (OSError, ValueError):
                owners[f.stem] = {}
    gone: list[str] = []
    prefixes = {n.split("-", 1)[0] for n in _listed() if n.startswith(PREFIX_TAG) and "-" in n}
    for prefix in sorted(prefixes | set(owners)):
        state = owners.get(prefix)
        if everything or state is None or not _alive(state):
            gone += remove(prefix)
    return gone


def wait_port(topo: Topology, ns: str, addr: str, port: int, timeout: float = 10.0) -> None:
    """Wait until a TCP server listens at addr:port, seen from namespace ``ns``."""
    code = ("import socket,sys\n"
            f"s=socket.create_connection(({addr!r},{port}),timeout=0.5); s.close()")
    deadline = time.monotonic() + timeout
    while True:
        import sys

        if subprocess.run(topo.exec_args(ns, sys.executable, "-c", code), capture_output=True).returncode == 0:
            return
        if time.monotonic() > deadline:
            raise TestbedError(f"nothing listens at {addr}:{port} after {timeout:.0f} s")
        time.sleep(0.1)
