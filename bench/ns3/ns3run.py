"""Run a cclab scenario in ns-3, and the same flow list in cclab.

The harness owns its ns-3: `ensure()` installs the `ns3` wheel from PyPI into a
virtual environment of its own (cached under ``$CCLAB_NS3_HOME``, default
``~/.cache/cclab/ns3-3.44``) and compiles ``cclab_ns3.cc`` against the wheel's
headers and libraries with ``-O2``. Nothing of it goes into the project tree.

A comparison runs on identical arrivals: `flow_list()` takes the arrivals (start,
size) that cclab draws for a seed, and both `run_cclab()` (as a ``flow_list``
class) and `run_ns3()` replay them. Both return a flows table with the columns of
``cclab.Result.flows``.

What the ns-3 side takes from the scenario's canonical configuration (see
docs/validation.md for why each one matters): each class's congestion control
(newreno, ledbat, tcp_lp, vegas: ns-3's TcpNewReno, TcpLedbat, TcpLp, TcpVegas,
with the attributes the class's `cc` sets), SACK (`tcp.sack`), timestamps
(`tcp.timestamps`), TcpPrrRecovery for `tcp.recovery = "prr"` and
TcpClassicRecovery for "halve", limited transmit on, SegmentSize = mss,
InitialCwnd, MinRto, DelAckCount 1 or 2 and DelAckTimeout, RcvBufSize = receive
window, ConnTimeout = initial RTO, UseEcn for `tcp.ecn`; DropTail device queues
of the scenario's limit with the default queue disc removed, or, for a `red`
queue, ns-3's RedQueueDisc with the queue's parameters in front of a one-packet
device queue (`red_attributes()`). `plan()` and `ns3_input()` refuse,
with `Unsupported`, what ns-3 cannot mirror. Both sides run the scenario with
`NS3_TCP` on top of its `tcp` table: the handshake, limited transmit, the
"Impatient" timer and no rescue retransmission, which is what ns-3 does.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import pairing  # noqa: E402
from pairing import FLOW_COLUMNS, flow_list  # noqa: E402,F401  (re-exported: the harness's API)

SOURCE = HERE / "cclab_ns3.cc"
NS3_VERSION = "3.44"
NS3_REQUIREMENT = "ns3==3.44.*"
LIBS = ["core", "network", "internet", "point-to-point", "traffic-control"]
# Header bytes of a data packet in ns-3 on a point-to-point link without TCP
# options: IP 20 + TCP 20 (the 12 bytes of the timestamp option come with
# tcp.timestamps, in both simulators; the 2-byte PPP header on top).
HEADER = 40
TIMESTAMP_OPTION = 12
# "Unlimited" receive window: far above any window the scenarios reach (ns-3 keeps
# the send buffer as real packet objects, so it is not made larger than needed).
UNLIMITED_WINDOW = 16 << 20
# How ns-3 3.44's TCP differs from cclab's defaults, switched on in cclab for a
# comparison: ns-3 opens connections with SYN / SYN-ACK, always uses limited
# transmit (without SACK it cannot run without it: see cclab_ns3.cc), restarts
# the retransmission timer on the first partial ACK of a recovery only, has no
# rescue retransmission (RFC 6675 NextSeg rule 4; TcpTxBuffer::NextSeg stops at rule 3),
# and with SACK keeps the SACKed marks at a timeout (TcpSocketBase::ReTxTimeout).
NS3_TCP = {"handshake": True, "limited_transmit": True, "partial_ack_timer": "impatient",
           "rescue_retransmission": False, "sack_after_timeout": "keep"}
# ns-3 3.44's congestion-control class for each of cclab's window protocols that has one.
NS3_CONGESTION = {"newreno": "TcpNewReno", "ledbat": "TcpLedbat", "tcp_lp": "TcpLp", "vegas": "TcpVegas"}
# Why the others have none.
NO_NS3_COUNTERPART = {
    "reno": "ns-3 3.44 has no Reno: its recovery (TcpClassicRecovery, in TcpSocketBase) always "
            "follows partial ACKs as NewReno does, and TcpLinuxReno is NewReno recovery with "
            "Linux's window growth",
    "fast": "ns-3 3.44 has no FAST TCP",
    "multcp": "ns-3 3.44 has no MulTCP",
}
# cclab's sender rules (`tcp.rules`, docs/protocols.md "Presets") as ns-3 3.44 follows them:
# the RFCs' (the defaults), except that with SACK it keeps the SACKed marks at a timeout
# (TcpSocketBase::ReTxTimeout: SetSentListLost(resetSack = !m_sackEnabled); NS3_TCP sets it).
NS3_RULES = {"whole_segments": False, "initial_ssthresh": "none", "window_arithmetic": "bytes",
             "timeout_ssthresh": "hold", "rtt_estimator": "rfc6298", "syn_timeout": "retry",
             "loss_recovery": "rfc", "sack_after_timeout": "keep", "sack_blocks": None, "sack_option": "rfc2018"}
# ns-3's hard-coded upper bound of the retransmission timeout (TcpSocketBase::ReTxTimeout).
NS3_MAX_RTO_S = 60.0


class Unsupported(ValueError):
    """The scenario uses something the ns-3 side cannot reproduce."""


def home() -> Path:
    return Path(os.environ.get("CCLAB_NS3_HOME", Path.home() / ".cache" / "cclab" / f"ns3-{NS3_VERSION}"))


def _venv_python() -> Path:
    return home() / "venv" / "bin" / "python"


def _ns3_dir() -> Path | None:
    """The wheel's `ns3` folder (headers in include/, libraries in lib64/)."""
    py = _venv_python()
    if not py.exists():
        return None
    for sp in (home() / "venv" / "lib").glob("python3*/site-packages/ns3"):
        if (sp / "include" / "ns3" / "core-module.h").exists():
            return sp
    return None


def installed() -> bool:
    """ns-3 is installed in the harness's environment (nothing is downloaded)."""
    return _ns3_dir() is not None


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def ensure(quiet: bool = False) -> Path:
    """Install ns-3 (once) and build the program (when its source changed); returns the binary."""
    if not installed():
        _say(f"ns-3: installing {NS3_REQUIREMENT} into {home() / 'venv'} (about 1-2 minutes, once)", quiet)
        home().mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(home() / "venv")], check=True)
        subprocess.run([str(_venv_python()), "-m", "pip", "install", "--quiet", NS3_REQUIREMENT], check=True)
        if not installed():
            raise RuntimeError(f"pip installed {NS3_REQUIREMENT} but its headers are not where expected")
    ns3 = _ns3_dir()
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    binary = home() / "build" / f"cclab-ns3-{digest}"
    if not binary.exists():
        cxx = os.environ.get("CXX", "g++")
        if shutil.which(cxx) is None:
            raise RuntimeError(f"no C++ compiler ({cxx}) to build {SOURCE.name}")
        _say(f"ns-3: compiling {SOURCE.name} (-O2) ...", quiet)
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_suffix(".tmp")
        cmd = [cxx, "-O2", "-std=c++20", "-DNS3_BUILD_PROFILE_RELEASE", f"-I{ns3 / 'include'}",
               str(SOURCE), "-o", str(tmp), f"-L{ns3 / 'lib64'}", f"-Wl,-rpath,{ns3 / 'lib64'}"]
        cmd += [f"-lns{NS3_VERSION}-{lib}" for lib in LIBS]
        subprocess.run(cmd, check=True)
        tmp.rename(binary)
    return binary


# --- scenario translation ------------------------------------------------------------

def _validated(scenario, seed: int | None = None) -> dict:
    """cclab.validate(): duration, warm-up, and the plan the harness translates."""
    info = pairing.validated(scenario, seed)
    info["plan"] = plan(info["config"])
    return info


def ns3_plan(scenario, seed: int | None = None) -> dict:
    """The plan of `scenario` as a comparison runs it: with `NS3_TCP` on top of its `tcp`."""
    return _validated(with_tcp(scenario), seed)["plan"]


def plan(config: dict) -> dict:
    """What the ns-3 program needs from cclab's canonical configuration (SI units):
    nodes; links with node names, rate (bit/s), delay (s) and DropTail limits;
    classes with endpoints, arrival type, protocol and its `cc` parameters; and the
    one TCP parameter set every TCP class shares (the ns-3 program has one: the
    receivers' sockets, which set SACK, timestamps and the delayed-ACK rule, fork
    from one listening socket per node)."""
    nodes = config["nodes"]
    links = []
    for l in config["links"]:
        q = l["queue"]
        if q["type"] not in ("droptail", "red"):
            raise Unsupported(f"link {l['name']!r}: queue {q['type']!r} is not in the ns-3 harness "
                              "(it maps droptail to a DropTail device queue and red to RedQueueDisc)")
        links.append({"name": l["name"], "from": nodes[l["from"]], "to": nodes[l["to"]],
                      "rate_bps": float(l["rate_bps"]), "delay_s": l["delay_ns"] / 1e9,
                      "limit_packets": q["limit_packets"], "limit_bytes": q["limit_bytes"],
                      "queue": {k: v for k, v in q.items() if k not in ("limit_packets", "limit_bytes")}})
    classes, tcps = [], []
    for c in config["classes"]:
        a, t = c["arrivals"], c["transport"]
        d = {"name": c["name"], "src": nodes[c["src"]], "dst": nodes[c["dst"]], "type": a["type"],
             "protocol": t["cc"]["protocol"], "cc": dict(t["cc"].get("params") or {}), "kind": t["kind"],
             "start_s": c["start_ns"] / 1e9, "stop_s": None if c["stop_ns"] is None else c["stop_ns"] / 1e9}
        if a["type"] == "long_lived":
            d["count"] = a["count"]
        elif a["type"] == "flow_list":
            d["starts"] = [f[0] / 1e9 for f in a["flows"]]
            d["sizes"] = [f[1] for f in a["flows"]]
        if t["kind"] == "window":
            tcps.append((c["name"], t["tcp"]))
        classes.append(d)
    for name, t in tcps[1:]:
        if t != tcps[0][1]:
            raise Unsupported(f"class {name!r}: its TCP parameters differ from class {tcps[0][0]!r}'s; "
                              "the ns-3 program has one TCP configuration")
    tcp = dict(tcps[0][1]) if tcps else {}
    for k in list(tcp):
        if k.endswith("_ns"):
            tcp[k[:-3] + "_s"] = tcp.pop(k) / 1e9
    return {"name": config["name"], "nodes": nodes, "links": links, "classes": classes, "tcp": tcp}


def _duplex_links(plan: dict) -> list[dict]:
    """Pair each link with its reverse (ns-3 point-to-point links are full duplex)."""
    by_name = {l["name"]: l for l in plan["links"]}
    out, used = [], set()
    for l in plan["links"]:
        if l["name"] in used:
            continue
        rev = by_name.get(l["name"] + "-rev")
        if rev is None or (rev["from"], rev["to"]) != (l["to"], l["from"]):
            raise Unsupported(f"link {l['name']!r} has no reverse link: the ns-3 side needs duplex links")
        for key in ("rate_bps", "delay_s", "limit_packets", "limit_bytes", "queue"):
            if rev[key] != l[key]:
                raise Unsupported(f"link {l['name']!r}: its two directions differ in {key}")
        used.update((l["name"], rev["name"]))
        out.append(l)
    return out


def _check_tcp(tcp: dict) -> None:
    """Refuse TCP parameters ns-3 3.44's TcpSocketBase cannot run."""
    if tcp["header"] != HEADER:
        raise Unsupported(f"tcp.header = {tcp['header']}: the ns-3 side models {HEADER} (IP 20 + TCP 20); "
                          "TCP timestamps are tcp.timestamps, which adds their 12 bytes in both simulators")
    if tcp["byte_counting"] != 0:
        raise Unsupported(f"tcp.byte_counting = {tcp['byte_counting']}: ns-3 3.44 has no RFC 3465 byte "
                          "counting (TcpNewReno grows per ACK by the segments it acknowledges)")
    if tcp["sack"] and tcp["rescue_retransmission"]:
        raise Unsupported("tcp.rescue_retransmission = true: ns-3 3.44 has no RFC 6675 rescue retransmission "
                          "(TcpTxBuffer::NextSeg stops at rule 3); set it false (ns3run.NS3_TCP does)")
    if not tcp["handshake"]:
        raise Unsupported("tcp.handshake = false: every ns-3 connection opens with SYN / SYN-ACK "
                          "(ns3run.NS3_TCP turns it on)")
    if not tcp["limited_transmit"]:
        raise Unsupported("tcp.limited_transmit = false: the harness keeps ns-3's limited transmit "
                          "(without SACK ns-3 3.44 cannot run without it; ns3run.NS3_TCP turns it on)")
    if tcp["partial_ack_timer"] != "impatient":
        raise Unsupported(f"tcp.partial_ack_timer = {tcp['partial_ack_timer']!r}: ns-3 3.44 restarts the "
                          "timer on the first partial ACK only (\"impatient\"; ns3run.NS3_TCP sets it)")
    if tcp["ecn"] and tcp["recovery"] == "prr":
        raise Unsupported("tcp.ecn = true with recovery = \"prr\": on an ECN-Echo ns-3 3.44 enters CWR "
                          "through its recovery algorithm (TcpSocketBase::EnterCwr), and TcpPrrRecovery "
                          "brings the window down over a round trip where cclab sets cwnd = ssthresh at "
                          "once; set recovery = \"halve\" (ns-3's TcpClassicRecovery does the same)")
    for key, ns3 in NS3_RULES.items():
        value = tcp.get("rules", {}).get(key, ns3)
        if value != ns3 and (key != "sack_after_timeout" or tcp["sack"]):
            raise Unsupported(f"tcp.{key} = {value!r}: ns-3 3.44 runs {ns3!r} (ns3run.NS3_TCP sets what "
                              "ns-3 does; the others are ns-2.35's rules, preset \"ns2\")")
    if tcp["max_rto_s"] != NS3_MAX_RTO_S:
        raise Unsupported(f"tcp.max_rto = {tcp['max_rto_s']:g} s: ns-3 3.44 caps the timeout at 60 s")


# Packets a point-to-point device holds besides the one it transmits, below a queue
# disc (the harness's device queue "1p" under RedQueueDisc).
DEVICE_SLOT = 1


def red_attributes(link: dict, slot: int | None = None) -> list:
    """A red link's `red` record for the ns-3 program, ns-3's values of RedQueueDisc's
    MaxSize (packets), MinTh, MaxTh, LInterm, QW, MeanPktSize, Gentle, Wait, UseEcn,
    UseHardDrop; or Unsupported.

    cclab's RED and buffer count every packet waiting on the link; ns-3's RedQueueDisc
    counts its own queue, and the device below it holds `slot` more whenever anything
    waits (the one-packet device queue). So ns-3 gets MaxSize = limit - slot (the two
    hold `limit` together) and MinTh, MaxTh lowered by `slot`: RED then decides on the
    same count of waiting packets in both (the average differs only while the queue is
    empty, where ns-3's sample is 0 rather than -1). LInterm = 1/max_p."""
    slot = DEVICE_SLOT if slot is None else slot
    q, where = link["queue"], f"link {link['name']!r}"
    if q["unit"] != "packets" or link["limit_packets"] is None or link["limit_bytes"] is not None:
        raise Unsupported(f"{where}: RED in bytes (or with a byte limit) is not in the ns-3 harness; "
                          "write limit, min_th and max_th in packets (\"100pkts\")")
    if link["limit_packets"] <= slot:
        raise Unsupported(f"{where}: a RED limit of {link['limit_packets']} packet(s): ns-3's RedQueueDisc "
                          f"needs room besides the device's {slot}")
    if q["min_th"] < slot:
        raise Unsupported(f"{where}: min_th = {q['min_th']:g} packets: ns-3's RED counts {slot} packet(s) "
                          f"fewer than cclab's (the device's), so min_th must be at least {slot}")
    return [link["limit_packets"] - slot, float(q["min_th"] - slot), float(q["max_th"] - slot),
            1.0 / q["max_p"], q["weight"], q["mean_packet_bytes"],
            int(q["gentle"]), int(q["wait"]), int(q["ecn"]), int(q["hard_drop"])]


def _whole(x: float) -> bool:
    return float(x) == int(x)


def congestion(c: dict, tcp: dict) -> list[str]:
    """A class's congestion control as ns-3 attributes (ATTRIBUTE=VALUE), or Unsupported:
    every cc parameter the class sets is either passed to the ns-3 class's attribute
    that holds it or, where ns-3 has no such attribute, must have ns-3's fixed value."""
    name, proto, p = c["name"], c["protocol"], c.get("cc", {})
    where = f"class {name!r} ({proto})"
    if c["kind"] != "window":
        raise Unsupported(f"class {name!r}: rate-based ({proto}) classes have no ns-3 counterpart here")
    if proto in NO_NS3_COUNTERPART:
        raise Unsupported(f"{where}: {NO_NS3_COUNTERPART[proto]}")
    if proto not in NS3_CONGESTION:
        raise Unsupported(f"{where}: protocol {proto!r} is not in the ns-3 harness")
    if proto == "newreno":
        return []
    if proto in ("ledbat", "tcp_lp") and not tcp["timestamps"]:
        raise Unsupported(f"{where}: ns-3's {NS3_CONGESTION[proto]} measures delays from TCP timestamps and "
                          "runs as TcpNewReno without them; set tcp.timestamps = true")
    if proto == "ledbat":
        if p["implementation"] != "ns3":
            raise Unsupported(f"{where}: cc.implementation = {p['implementation']!r}; ns-3's TcpLedbat has "
                              "its own window arithmetic, cc = {{ variant = \"ns3\" }}")
        target_ms = p["target_ns"] / 1e6
        if not _whole(target_ms):
            raise Unsupported(f"{where}: cc.target = {target_ms:g} ms; ns-3's TcpLedbat computes in whole "
                              "milliseconds (TargetDelay.GetMilliSeconds())")
        if p["allowed_increase"] != 0.0:
            raise Unsupported(f"{where}: cc.allowed_increase = {p['allowed_increase']}; ns-3's TcpLedbat has "
                              "no such attribute: its cap is the bytes outstanding before the ACK (0)")
        if p["init_cwnd"] is not None and p["init_cwnd"] != tcp["initial_window"]:
            raise Unsupported(f"{where}: cc.init_cwnd = {p['init_cwnd']}; ns-3's TcpLedbat starts from the "
                              f"socket's InitialCwnd, tcp.initial_window = {tcp['initial_window']}")
        # BaseHistoLen and NoiseFilterLen are the lengths at which ns-3's vectors drop
        # their oldest value: they hold one value less, which is what cclab counts.
        return [f"TargetDelay={int(target_ms)}ms", f"Gain={p['gain']!r}",
                f"BaseHistoryLen={p['base_history'] + 1}", f"NoiseFilterLen={p['current_filter'] + 1}",
                f"MinCwnd={p['min_cwnd']}", f"SSParam={'yes' if p['slow_start'] else 'no'}"]
    if proto == "tcp_lp":
        if p["variant"] != "ns3":
            raise Unsupported(f"{where}: cc.variant = {p['variant']!r}; ns-3's TcpLp is cc = {{ variant = \"ns3\" }}")
        fixed = {"delta": 0.15, "gain": 0.125, "inference_rtts": 3.0}
        for k, v in fixed.items():
            if p[k] != v:
                raise Unsupported(f"{where}: cc.{k} = {p[k]}; ns-3's TcpLp has no attributes ({k} is fixed at {v:g})")
        return []
    # vegas
    for k in ("alpha", "beta", "gamma"):
        if not _whole(p[k]):
            raise Unsupported(f"{where}: cc.{k} = {p[k]}; ns-3's TcpVegas takes whole numbers of packets")
    return [f"Alpha={int(p['alpha'])}", f"Beta={int(p['beta'])}", f"Gamma={int(p['gamma'])}"]


def _check(plan: dict) -> None:
    _check_tcp(plan["tcp"])
    for l in plan["links"]:
        if l["queue"]["type"] == "red":
            red_attributes(l)
    for c in plan["classes"]:
        congestion(c, plan["tcp"])


def ns3_input(plan: dict, flows: pd.DataFrame, duration: float, warmup: float, seed: int) -> str:
    """The ns-3 program's input for a plan and an explicit flow list."""
    _check(plan)
    tcp = plan["tcp"]
    rwnd = tcp["receive_window"] or UNLIMITED_WINDOW
    lines = [f"# {plan['name']} seed {seed}", f"duration {duration!r}", f"warmup {warmup!r}", f"seed {seed}",
             f"mss {tcp['mss']}", f"initial_window {tcp['initial_window']}", f"min_rto {tcp['min_rto_s']!r}",
             f"initial_rto {tcp['initial_rto_s']!r}", f"rcv_buf {rwnd}",
             f"snd_buf {max(4 * rwnd, UNLIMITED_WINDOW)}",
             f"delayed_ack {int(tcp['delayed_ack'])}", f"delayed_ack_timeout {tcp['delayed_ack_timeout_s']!r}",
             f"dupack_threshold {tcp['dupack_threshold']}", f"timestamps {int(tcp['timestamps'])}",
             "limited_transmit 1", f"sack {int(tcp['sack'])}", f"ecn {int(tcp['ecn'])}",
             f"recovery {'prr' if tcp['recovery'] == 'prr' else 'classic'}",
             # The largest data packet (no ns-3 device may fragment it): the timestamp
             # option's 12 bytes on top of the 40 of IP and TCP.
             f"mtu {tcp['mss'] + HEADER + (TIMESTAMP_OPTION if tcp['timestamps'] else 0)}"]
    node = {n: i for i, n in enumerate(plan["nodes"])}
    lines += [f"node {n}" for n in plan["nodes"]]
    for l in _duplex_links(plan):
        lines.append(f"link {l['name']} {node[l['from']]} {node[l['to']]} {l['rate_bps']!r} {l['delay_s']!r} "
                     f"{l['limit_packets'] or 0} {l['limit_bytes'] or 0}")
        if l["queue"]["type"] == "red":
            lines.append("red " + " ".join(repr(v) if isinstance(v, float) else str(v) for v in red_attributes(l)))
    cls = {c["name"]: i for i, c in enumerate(plan["classes"])}
    lines += [" ".join(["class", c["name"], c["protocol"]] + congestion(c, tcp)) for c in plan["classes"]]
    ends = {c["name"]: (node[c["src"]], node[c["dst"]]) for c in plan["classes"]}
    for row in flows.itertuples(index=False):
        s, d = ends[row[0]]
        size = -1 if np.isnan(row.size) else int(row.size)
        lines.append(f"flow {cls[row[0]]} {s} {d} {row.start!r} {size}")
    return "\n".join(lines) + "\n"


@dataclass
class Ns3Result:
    flows: pd.DataFrame
    links: pd.DataFrame
    perf: dict


def with_tcp(scenario, tcp: dict | None = NS3_TCP) -> dict:
    """`scenario` as a structure with `tcp` (default: ns-3's TCP behaviour, `NS3_TCP`)
    on top of its own `tcp` table (`pairing.with_tcp`)."""
    return pairing.with_tcp(scenario, tcp)


def run_ns3(scenario, seed: int, flows: pd.DataFrame | None = None, progress: bool = False,
            binary: Path | None = None, keep: Path | None = None) -> Ns3Result:
    """Run `scenario` in ns-3 on `flows` (default: `flow_list(scenario, seed)`).

    ns-3 runs the scenario as cclab does in a comparison, with `NS3_TCP` on top of
    its `tcp` table: SACK, timestamps and recovery are the scenario's.
    `keep`: a folder that keeps the program's input and outputs."""
    info = _validated(with_tcp(scenario), seed)
    plan = info["plan"]
    if flows is None:
        flows = flow_list(scenario, seed)
    text = ns3_input(plan, flows, info["duration_s"], info["warmup_s"], seed)
    binary = binary or ensure()
    with tempfile.TemporaryDirectory(prefix="cclab-ns3-") as tmp:
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            tmp = str(keep)
        inp = Path(tmp) / "input.txt"
        inp.write_text(text)
        cmd = [str(binary), f"--input={inp}", f"--out={tmp}"] + (["--progress=1"] if progress else [])
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None if progress else subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"ns-3 run failed ({proc.returncode}): {proc.stderr}")
        f = pd.read_csv(Path(tmp) / "flows.csv")
        links = pd.read_csv(Path(tmp) / "links.csv")
        perf = json.loads((Path(tmp) / "perf.json").read_text())
    f["class"] = pd.Categorical(f["class"], categories=[c["name"] for c in plan["classes"]])
    for col in ("finished", "warmup"):
        f[col] = f[col].astype(bool)
    f["start"] = f["arrival"]
    return Ns3Result(flows=f[FLOW_COLUMNS], links=links, perf=perf)


def replay_scenario(scenario, flows: pd.DataFrame, folder: Path, tcp: dict | None = NS3_TCP) -> dict:
    """`scenario` with every Poisson class replaced by a flow_list class reading
    `flows` (written to `folder`), and with the `tcp` settings on top of its own
    (default: ns-3's TCP behaviour, `NS3_TCP`; None keeps the scenario's)."""
    return pairing.replay_scenario(scenario, flows, folder, tcp)


def run_cclab(scenario, seed: int, flows: pd.DataFrame | None = None, ns3_tcp: bool = True):
    """Run `scenario` in cclab on the explicit flow list; returns a cclab Result.

    `ns3_tcp`: with ns-3's TCP behaviour (`NS3_TCP`); False keeps the scenario's own.
    """
    return pairing.run_cclab(scenario, seed, flows, NS3_TCP if ns3_tcp else None)


def main(argv=None) -> int:
    """Run one scenario in both simulators on the same flow list; write both flows tables."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("scenario", help="a cclab scenario file (TOML)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True, help="folder for input.txt and both tables")
    args = ap.parse_args(argv)
    from cclab.scenario import ScenarioError

    try:
        flows = flow_list(args.scenario, args.seed)
        ns = run_ns3(args.scenario, args.seed, flows, progress=True, keep=args.out)
    except (Unsupported, ScenarioError, FileNotFoundError) as exc:
        print(f"ns3run: {exc}", file=sys.stderr)
        return 2
    cc = run_cclab(args.scenario, args.seed, flows)
    cc.flows.to_csv(args.out / "cclab-flows.csv", index=False)
    for name, t in (("cclab", cc.flows), ("ns-3", ns.flows)):
        f = t[t["size"].notna() & ~t["warmup"]]
        print(f"{name:6} flows {len(f):5d}  finished {int(f['finished'].sum()):5d}  "
              f"mean completion time {f['completion_time'].mean():.3f} s  timeouts {int(t['timeouts'].sum())}  "
              f"bytes delivered {int(t['bytes_delivered'].sum()):,}")
    print(f"wrote {args.out}/flows.csv (ns-3), links.csv, perf.json, input.txt and cclab-flows.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
