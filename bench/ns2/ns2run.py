"""Run a cclab scenario in ns-2.35, the papers' own simulator, and the same flow list in cclab.

ns-2.35 is Debian's package `ns2` (the `ns` binary, driven by Tcl). `ensure()` finds
`ns` on the PATH (or `$CCLAB_NS2`), installs the package with apt-get when it can
(as root), and otherwise raises `Missing` with what is missing. Nothing of ns-2 goes
into the project tree.

A comparison runs on identical arrivals (`bench/pairing.py`): `flow_list()` takes the
arrivals (start, size) that cclab draws for a seed, and both `pairing.run_cclab()`
and `run_ns2()` replay them. `run_ns2` writes a Tcl script from cclab's canonical
configuration (`tcl_script`), which sources `cclab_ns2.tcl`, runs `ns`, and reads
its per-flow and per-link output back into the tables cclab writes (`Ns2Result.flows`,
`.links`; `.result()` is a `cclab.Result`, so `cclab compare` takes a saved ns-2 run).

What the ns-2 side takes from the configuration (`plan()`): every directed link as a
`simplex-link` (rate, delay, DropTail or RED, the limit as ns-2 counts it, see
`queue_settings`); static routing, which must give each class the route cclab gives
it; per class, the stock agent of its protocol (`AGENTS`) with the class's TCP
parameters as the agent's variables (`tcp_vars`), or TFRC, CBR and Pareto on/off;
the seed of ns-2's default random generator. `plan()` refuses, with `Unsupported`
naming the key, what stock ns-2.35 cannot run: LEDBAT, FAST, MulTCP, RCP and the
other rate protocols, the linear marking profile, PRR, byte counting, the rescue
retransmission.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import pairing  # noqa: E402
from pairing import FLOW_COLUMNS, flow_list  # noqa: E402,F401  (re-exported)

LIBRARY = HERE / "cclab_ns2.tcl"
NS2_VERSION = "2.35"
DEBIAN_PACKAGE = "ns2"
# ns-2.35's one-way TCP agents (tcp.cc, tcp-reno.cc, tcp-newreno.cc, tcp-sack1.cc,
# tcp-vegas.cc) and Linux's congestion modules in Agent/TCP/Linux (tcp-linux.cc).
AGENTS = {"newreno": "Agent/TCP/Newreno", "reno": "Agent/TCP/Reno", "vegas": "Agent/TCP/Vegas",
          "tcp_lp": "Agent/TCP/Linux"}
SACK_AGENT = "Agent/TCP/Sack1"
# The Linux module each protocol selects in Agent/TCP/Linux (`$tcp select_ca NAME`).
LINUX_MODULES = {"tcp_lp": "lp"}
NO_NS2_COUNTERPART = {
    "ledbat": "stock ns-2.35 has no LEDBAT (the papers used Rossi's external module, not in the Debian package)",
    "fast": "stock ns-2.35 has no FAST TCP",
    "multcp": "stock ns-2.35 has no MulTCP",
}
RATE_PROTOCOLS = {"tfrc", "cbr", "pareto"}
# "Unlimited" receive window, in packets: ns-2's window_ is an int (tcp.h), and its
# scoreboards grow as needed.
UNLIMITED_WINDOW = 1_000_000
# The option bytes cclab adds for RFC 7323 timestamps, and ns-2's ts_option_size_ (on
# data segments only, unpadded).
TIMESTAMP_OPTION = 12
NS2_TIMESTAMP_OPTION = 10
# ssthresh_ for cclab's "none" (slow start until the first loss): ns-2's ssthresh_ is an int.
NO_SSTHRESH = 1_000_000_000


class Unsupported(ValueError):
    """The scenario uses something stock ns-2.35 cannot run."""


class Missing(RuntimeError):
    """ns-2 is not installed and cannot be installed here; the message says why."""


# --- ns-2 itself ---------------------------------------------------------------------

def binary() -> str | None:
    """The `ns` binary: `$CCLAB_NS2`, else `ns` on the PATH; None when absent."""
    env = os.environ.get("CCLAB_NS2")
    if env:
        return env if Path(env).is_file() else None
    return shutil.which("ns")


def installed() -> bool:
    return binary() is not None


def ensure(quiet: bool = False) -> str:
    """The `ns` binary, installing Debian's `ns2` with apt-get when it is absent and we
    are root; otherwise `Missing` saying what to do."""
    ns = binary()
    if ns is not None:
        return ns
    if os.environ.get("CCLAB_NS2"):
        raise Missing(f"CCLAB_NS2={os.environ['CCLAB_NS2']} is not a file")
    apt = shutil.which("apt-get")
    if apt is None:
        raise Missing("ns-2 is not installed (no `ns` on the PATH) and this machine has no apt-get: "
                      f"install ns-{NS2_VERSION} and put `ns` on the PATH, or set CCLAB_NS2")
    if os.geteuid() != 0:
        raise Missing("ns-2 is not installed (no `ns` on the PATH); as root, "
                      f"`apt-get install -y {DEBIAN_PACKAGE}` installs it (or set CCLAB_NS2)")
    if not quiet:
        print(f"ns-2: installing Debian's {DEBIAN_PACKAGE} with apt-get (about a minute, once)", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run([apt, "install", "-y", "-q", DEBIAN_PACKAGE], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        # A stale package list is the usual cause; refresh it once.
        subprocess.run([apt, "update", "-q"], env=env, capture_output=True)
        proc = subprocess.run([apt, "install", "-y", "-q", DEBIAN_PACKAGE], env=env, capture_output=True, text=True)
    ns = binary()
    if proc.returncode != 0 or ns is None:
        raise Missing(f"apt-get install {DEBIAN_PACKAGE} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return ns


# --- scenario translation --------------------------------------------------------------

def _shortest_routes(nodes: int, links: list[dict]) -> dict[tuple[int, int], list[list[int]]]:
    """Every shortest path (in hops) between every ordered pair of nodes, as lists of
    link indices: ns-2's static routing (route.cc, every link of cost 1) takes one of
    them, so a class's route must be the only one."""
    out: dict[tuple[int, int], list[list[int]]] = {}
    adj: dict[int, list[tuple[int, int]]] = {n: [] for n in range(nodes)}
    for i, l in enumerate(links):
        adj[l["from"]].append((l["to"], i))
    for s in range(nodes):
        paths = {s: [[]]}
        frontier = [s]
        while frontier:
            nxt: dict[int, list[list[int]]] = {}
            for u in frontier:
                for v, i in adj[u]:
                    if v in paths:
                        continue
                    nxt.setdefault(v, []).extend(p + [i] for p in paths[u])
            paths.update(nxt)
            frontier = list(nxt)
        for d, ps in paths.items():
            out[(s, d)] = ps
    return out


def queue_settings(link: dict, largest: int = 0) -> tuple[str, int, bool, list]:
    """A link's queue as ns-2 runs it: (queue class, limit_, counted in bytes,
    [variable, value, ...]); `largest`: the largest packet that crosses the link.

    cclab drops an arrival when the packets waiting (not the one in transmission)
    would exceed the limit L (`net/queue/mod.rs`, `overflows`); ns-2's DropTail drops
    when length + 1 >= limit_ (drop-tail.cc, DropTail::enque), the packet in
    transmission having left its queue, so ns-2 gets limit_ = L + 1 (in bytes, with
    mean_pktsize_ 1: bytes + size >= limit_). RED's hard limit is `qlen >= qlim_`
    before the arrival (red.cc, REDQueue::enque): limit_ = L (see `red_settings`)."""
    q, name = link["queue"], link["name"]
    if q["type"] == "droptail":
        if q["limit_packets"] is not None and q["limit_bytes"] is not None:
            raise Unsupported(f"link {name!r}: a limit in packets and in bytes at once; ns-2's DropTail has one")
        if q["limit_packets"] is not None:
            return "DropTail", q["limit_packets"] + 1, False, []
        return "DropTail", q["limit_bytes"] + 1, True, []
    if q["type"] == "red":
        return "RED", *red_settings(link, largest)
    raise Unsupported(f"link {name!r}: queue {q['type']!r}; stock ns-2.35 runs droptail and red here")


def red_settings(link: dict, largest: int) -> tuple[int, bool, list]:
    """cclab's RED as ns-2's Queue/RED (red.cc): thresh_, maxthresh_ (in packets, which
    ns-2 multiplies by mean_pktsize_ in byte mode, red.cc:286-296), q_weight_, linterm_ =
    1/max_p, mean_pktsize_, gentle_, wait_, setbit_ (ECN); bytes_ and queue_in_bytes_
    with cclab's unit.

    The hard limit: in packets, ns-2 admits while fewer than limit_ wait, as cclab
    with limit L: limit_ = L. In bytes, ns-2 admits while fewer than limit_ ×
    mean_pktsize_ bytes wait, cclab while the packet fits in L: for packets of `largest`
    bytes the same rule when limit_ × mean_pktsize_ = L − largest + 1."""
    q, name = link["queue"], link["name"]
    mean = int(q["mean_packet_bytes"])
    inbytes = q["unit"] == "bytes"
    if inbytes:
        if q["limit_bytes"] is None or q["limit_packets"] is not None:
            raise Unsupported(f"link {name!r}: RED counting bytes takes a limit in bytes here")
        room = q["limit_bytes"] - largest + 1
        if largest <= 0 or room <= 0 or room % mean:
            raise Unsupported(
                f"link {name!r}: ns-2's RED in bytes holds a whole number of mean_packet_size ({mean} B): for "
                f"{largest}-byte packets write limit = K x {mean} + {largest - 1} bytes (e.g. "
                f"\"{100 * mean + largest - 1}B\" for K = 100)")
        limit, scale = room // mean, mean
    else:
        if q["limit_packets"] is None or q["limit_bytes"] is not None:
            raise Unsupported(f"link {name!r}: RED counting packets takes a limit in packets here")
        limit, scale = q["limit_packets"], 1
    qvars = ["bytes_", _b(inbytes), "queue_in_bytes_", _b(inbytes),
             "thresh_", repr(float(q["min_th"]) / scale), "maxthresh_", repr(float(q["max_th"]) / scale),
             "q_weight_", repr(float(q["weight"])), "linterm_", repr(1.0 / q["max_p"]), "mean_pktsize_", str(mean),
             "gentle_", _b(q["gentle"]), "wait_", _b(q["wait"]), "setbit_", _b(q["ecn"])]
    if not q.get("hard_drop", True):
        raise Unsupported(f"link {name!r}: red hard_drop = false; ns-2's RED marks above max_th only "
                          "with use_mark_p_, which is not the same rule")
    return limit, inbytes, qvars


def _b(v: bool) -> str:
    return "true" if v else "false"


def _ts_bytes(tcp: dict, data: bool) -> int:
    """Bytes of the timestamp option on a data segment (or an ACK, `data` False): cclab's
    RFC 7323 12 on every packet, or ns-2's 10 on data segments only (`option_sizes = "ns2"`,
    TcpAgent::headersize, tcp.cc:634; TCPSink's ACKs keep packetSize_)."""
    if not tcp["timestamps"]:
        return 0
    if tcp.get("option_sizes", "rfc7323") == "ns2":
        return NS2_TIMESTAMP_OPTION if data else 0
    return TIMESTAMP_OPTION


def initial_ssthresh(tcp: dict) -> int | None:
    """ssthresh_ in packets for cclab's `initial_ssthresh` rule, or None to keep the
    value TcpAgent::reset() gives (int(window_), tcp.cc:476): ns-2's own rule."""
    rule = tcp.get("rules", {}).get("initial_ssthresh", "none")
    if rule == "receive_window":
        return None
    if isinstance(rule, dict):
        return max(1, rule["bytes"] // tcp["mss"])
    return NO_SSTHRESH


def tcp_vars(tcp: dict, where: str) -> list:
    """A class's TCP parameters as ns-2 agent variables ([name, value, ...]), or
    Unsupported for what ns-2.35's agents do not have. The agent is reset after they
    are set (cclab_ns2.tcl, cc_flow), as one created before `$ns run` is, so that
    reset() derives ssthresh_ and the RTT state from them; `ssthresh_` is then set
    when cclab's rule is not ns-2's."""
    if tcp["recovery"] == "prr":
        raise Unsupported(f"{where}: tcp.recovery = \"prr\"; ns-2.35 has no Proportional Rate Reduction")
    if tcp["byte_counting"] != 0:
        raise Unsupported(f"{where}: tcp.byte_counting = {tcp['byte_counting']}; ns-2.35's agents count ACKs")
    if tcp["sack"] and tcp["rescue_retransmission"]:
        raise Unsupported(f"{where}: tcp.rescue_retransmission = true; ns-2.35's Sack1 has no rescue "
                          "retransmission (set it false)")
    mss = tcp["mss"]
    rwnd = tcp["receive_window"]
    window = UNLIMITED_WINDOW if rwnd is None else max(1, rwnd // mss)
    rules = tcp.get("rules", {})
    syn = tcp["handshake"] or tcp.get("syn_segment", False)
    out = ["packetSize_", mss, "tcpip_base_hdr_size_", tcp["header"], "window_", window,
           "windowInit_", tcp["initial_window"], "windowInitOption_", 1, "syn_", _b(syn),
           # The SYN alone first (handshake), or with the initial window's data (syn_segment).
           "delay_growth_", _b(tcp["handshake"]), "minrto_", repr(tcp["min_rto_ns"] / 1e9),
           "maxrto_", repr(tcp["max_rto_ns"] / 1e9), "rtxcur_init_", repr(tcp["initial_rto_ns"] / 1e9),
           "numdupacks_", tcp["dupack_threshold"], "singledup_", int(tcp["limited_transmit"]),
           "newreno_changes1_", int(tcp["partial_ack_timer"] == "impatient"),
           "timestamps_", _b(tcp["timestamps"]), "ts_option_size_", _ts_bytes(tcp, True) or TIMESTAMP_OPTION,
           "ecn_", int(tcp["ecn"]), "maxburst_", 0]
    if "clock_tick_ns" in rules:
        out += ["tcpTick_", repr(rules["clock_tick_ns"] / 1e9)]
    return out


def _cc_vars(protocol: str, params: dict, where: str) -> list:
    if protocol == "vegas":
        out = ["v_alpha_", params["alpha"], "v_beta_", params["beta"], "v_gamma_", params["gamma"]]
        if params.get("variant") == "ns2":
            # cclab's ns2 variant is Agent/TCP/Vegas with its defaults: one packet until
            # packet 0 is acknowledged (syn_ and delay_growth_, though its output() sends
            # no SYN), then windowInit_ 2 (tcp-vegas.cc:189-192; cc/vegas/ns2.rs).
            out += ["syn_", "true", "delay_growth_", "true", "windowInit_", 2]
        return out
    return []


def _tcp_class(c: dict, where: str) -> dict:
    t = c["transport"]
    tcp, cc = t["tcp"], t["cc"]
    proto = cc["protocol"]
    if proto in NO_NS2_COUNTERPART:
        raise Unsupported(f"{where}: {NO_NS2_COUNTERPART[proto]}")
    if proto not in AGENTS:
        raise Unsupported(f"{where}: protocol {proto!r} is not in the ns-2 harness")
    agent = AGENTS[proto]
    if tcp["sack"] and proto == "newreno":
        agent = SACK_AGENT
    elif tcp["sack"] and proto in ("reno", "vegas"):
        raise Unsupported(f"{where}: tcp.sack = true with {proto}; ns-2's SACK agent is Sack1 (NewReno's "
                          "window rules): use protocol = \"newreno\"")
    # SACK blocks go to the sender only from a SACK sink: Agent/TCP/Linux detects losses
    # from them alone (scoreboard1.cc:118-125), so to a plain TCPSink it never
    # fast-retransmits, which is what cclab's tcp_lp ns2 variant models without SACK.
    header = tcp["header"] + _ts_bytes(tcp, True)
    svars = ["packetSize_", tcp["header"] + _ts_bytes(tcp, False)]
    sink = "Agent/TCPSink"
    if tcp["sack"]:
        sink += "/Sack1"
        blocks = tcp.get("rules", {}).get("sack_blocks") or (3 if tcp["timestamps"] else 4)
        svars += ["maxSackBlocks_", blocks]
    if tcp["delayed_ack"]:
        sink += "/DelAck"
        svars += ["interval_", repr(tcp["delayed_ack_timeout_ns"] / 1e9)]
    if tcp["timestamps"]:
        svars += ["ts_echo_rfc1323_", "true"]
    avars = tcp_vars(tcp, where) + _cc_vars(proto, cc.get("params") or {}, where)
    payload = tcp["mss"]
    if proto == "vegas":
        # Agent/TCP/Vegas sends packetSize_ bytes with no header (VegasTcpAgent::output):
        # the whole packet goes in packetSize_, so both simulators put the same bytes on the wire.
        avars[avars.index("packetSize_") + 1] = payload = tcp["mss"] + header
    return {"kind": "tcp", "agent": agent, "avars": avars, "sink": sink, "svars": svars, "app": "", "appvars": [],
            "ca": LINUX_MODULES.get(proto, ""), "ssthresh": initial_ssthresh(tcp),
            # ns-2 sends whole packets: every data packet is packetSize_ + headers; the
            # SYN (syn_) is tcpip_base_hdr_size_ alone (tcp.cc, TcpAgent::output).
            "perpkt": payload if proto == "vegas" else tcp["mss"] + header,
            "first": tcp["header"] if tcp["handshake"] or tcp.get("syn_segment") else 0, "payload": tcp["mss"]}


def _rate_class(c: dict, where: str) -> dict:
    t = c["transport"]
    proto = t["cc"]["protocol"]
    p = t["cc"].get("params") or {}
    size = t["packet_bytes"]
    if proto == "tfrc":
        # cclab's datagram size is the whole packet: ns-2's TFRC without its 32-byte
        # headersize_ on top (useHeaders_ false, tfrc.cc) sends exactly that.
        return {"kind": "tfrc", "agent": "Agent/TFRC", "avars": ["packetSize_", size, "useHeaders_", "false"],
                "sink": "Agent/TFRCSink", "svars": [], "app": "", "appvars": [], "ca": "", "ssthresh": None,
                "perpkt": size, "first": 0, "payload": size}
    if proto == "cbr":
        appvars = ["rate_", repr(float(p["rate_bps"])), "packetSize_", size, "random_", 0]
        app = "Application/Traffic/CBR"
    elif proto == "pareto":
        appvars = ["burst_time_", repr(p["on_ns"] / 1e9), "idle_time_", repr(p["off_ns"] / 1e9),
                   "rate_", repr(float(p["rate_bps"])), "packetSize_", size, "shape_", repr(float(p["shape"]))]
        app = "Application/Traffic/Pareto"
    else:
        raise Unsupported(f"{where}: rate protocol {proto!r} has no stock ns-2.35 counterpart here")
    return {"kind": "udp", "agent": "Agent/UDP", "avars": ["packetSize_", size], "sink": "Agent/LossMonitor",
            "svars": [], "app": app, "appvars": appvars, "ca": "", "ssthresh": None, "perpkt": size, "first": 0,
            "payload": size}


def plan(config: dict) -> dict:
    """What the run script needs from cclab's canonical configuration, or Unsupported."""
    nodes, links = config["nodes"], config["links"]
    routes = _shortest_routes(len(nodes), links)
    largest = _largest_packets(config)
    out_links = []
    for i, l in enumerate(links):
        qtype, limit, inbytes, qvars = queue_settings(l, largest[i])
        out_links.append({"name": l["name"], "from": l["from"], "to": l["to"], "rate_bps": float(l["rate_bps"]),
                          "delay_s": l["delay_ns"] / 1e9, "qtype": qtype, "limit": limit, "inbytes": inbytes,
                          "qvars": qvars})
    classes = []
    for c in config["classes"]:
        where = f"class {c['name']!r}"
        for key, src, dst in (("route", c["src"], c["dst"]), ("ack_route", c["dst"], c["src"])):
            paths = routes.get((src, dst), [])
            if c.get(key) is not None and paths != [c[key]]:
                names = [links[i]["name"] for i in c[key]]
                raise Unsupported(f"{where}: its {key.replace('_', ' ')} {names} is not the only shortest path "
                                  f"from {nodes[src]} to {nodes[dst]}, which ns-2's static routing takes")
        kind = c["transport"]["kind"]
        d = _tcp_class(c, where) if kind == "window" else _rate_class(c, where)
        d.update(name=c["name"], src=c["src"], dst=c["dst"], type=c["arrivals"]["type"],
                 protocol=c["transport"]["cc"]["protocol"])
        if d["kind"] != "tcp" and c["arrivals"]["type"] != "long_lived":
            raise Unsupported(f"{where}: a {d['protocol']} class with {c['arrivals']['type']} arrivals; the ns-2 "
                              "harness runs rate-based classes long-lived")
        classes.append(d)
    return {"name": config["name"], "nodes": nodes, "links": out_links, "classes": classes}


def _largest_packets(config: dict) -> list[int]:
    """The largest packet (bytes on the wire) that crosses each link: a class's data
    packets on its route, its ACKs or feedback (a header) on the way back."""
    out = [0] * len(config["links"])
    for c in config["classes"]:
        t = c["transport"]
        if t["kind"] == "window":
            tcp = t["tcp"]
            data = tcp["mss"] + tcp["header"] + _ts_bytes(tcp, True)
            ack = tcp["header"] + _ts_bytes(tcp, False)
        else:
            data, ack = t["packet_bytes"], 40
        for route, size in ((c["route"], data), (c["ack_route"], ack)):
            for l in route:
                out[l] = max(out[l], size)
    return out


def _tcl_list(xs) -> str:
    return "{" + " ".join(str(x) for x in xs) + "}"


def tcl_script(plan: dict, flows: pd.DataFrame, duration: float, warmup: float, seed: int, out: Path,
               progress: bool = False) -> str:
    """The ns-2 run script of a plan and an explicit flow list (see cclab_ns2.tcl)."""
    if not 1 <= seed < 2**31:
        # ns-2's RNG::seed takes a long; seed 0 would mean "from the clock" (rng.cc).
        raise Unsupported(f"seed {seed}: ns-2's random generator takes seeds from 1 to 2^31 - 1")
    lines = [f"# {plan['name']} seed {seed}: written by bench/ns2/ns2run.py",
             f"source {{{LIBRARY}}}", f"cc_init {seed} {duration!r} {warmup!r} {{{out}}}"]
    lines += [f"cc_node {i}" for i in range(len(plan["nodes"]))]
    for l in plan["links"]:
        lines.append(f"cc_link {{{l['name']}}} {l['from']} {l['to']} {l['rate_bps']!r} {l['delay_s']!r} "
                     f"{l['qtype']} {l['limit']} {int(l['inbytes'])} {_tcl_list(l['qvars'])}")
    index = {}
    for i, c in enumerate(plan["classes"]):
        index[c["name"]] = i
        lines.append(f"cc_class {i} {{{c['name']}}} {c['kind']} {c['src']} {c['dst']} {c['agent']} "
                     f"{_tcl_list(c['avars'])} {c['sink']} {_tcl_list(c['svars'])} {{{c['app']}}} "
                     f"{_tcl_list(c['appvars'])} {{{c['ca']}}} {c['perpkt']} {c['first']} "
                     f"{-1 if c['ssthresh'] is None else c['ssthresh']}")
    for i, row in enumerate(flows.itertuples(index=False)):
        c = plan["classes"][index[row[0]]]
        npkts = -1 if np.isnan(row.size) else max(1, math.ceil(row.size / c["payload"]))
        if row.start < duration:
            lines.append(f"$ns at {row.start!r} \"cc_flow {i} {index[row[0]]} {npkts}\"")
    lines.append(f"cc_run {int(progress)}")
    return "\n".join(lines) + "\n"


# --- reading the run back ----------------------------------------------------------------

@dataclass
class Ns2Result:
    flows: pd.DataFrame
    links: pd.DataFrame
    perf: dict
    config: dict = field(default_factory=dict)
    #: Payload bytes each class delivered after the warm-up.
    delivered_after_warmup: dict = field(default_factory=dict)
    seed: int = 0
    duration: float = 0.0
    warmup: float = 0.0

    def result(self):
        """The run as a `cclab.Result` (Result.save, then `cclab compare` with a cclab run)."""
        import cclab

        f = self.flows
        summary = {"name": f"ns-2.35: {self.config.get('name', '')}", "seed": self.seed,
                   "duration_s": self.duration, "simulated_s": self.perf.get("simulated_s", self.duration),
                   "warmup_s": self.warmup, "completed_run": True, "flows_arrived": int((~f["warmup"]).sum()),
                   "flows_finished": int((~f["warmup"] & f["finished"]).sum()), "wall_time_s": self.perf.get("wall_s")}
        # Counted as cclab counts them (sim/report.rs, class_summary): the flows that
        # arrived after the warm-up; throughput is every flow's bytes after it.
        counted = f[~f["warmup"]]
        span = self.duration - self.warmup
        for c in f["class"].cat.categories:
            g = counted[counted["class"] == c]
            done = g[g["finished"]]
            summary[f"{c}.flows"] = len(g)
            summary[f"{c}.finished"] = len(done)
            summary[f"{c}.mean_completion_time_s"] = float(done["completion_time"].mean()) if len(done) else math.nan
            thr = self.delivered_after_warmup.get(c, 0) * 8 / span if span > 0 else 0.0
            summary[f"{c}.throughput_bps"] = thr
        series = pd.DataFrame({"time": pd.Series([], dtype=float), "metric": pd.Series([], dtype=str),
                               "name": pd.Series([], dtype=str), "value": pd.Series([], dtype=float)})
        return cclab.Result(flows=f[FLOW_COLUMNS].copy(), links=self.links.copy(), series=series, summary=summary,
                            warnings=["ns-2.35 run (bench/ns2/ns2run.py): no sampled series"],
                            config=self.config)


def _payload(c: dict, wire_bytes: int) -> int:
    """Payload bytes in `wire_bytes` counted in order at a receiver: TCP's whole
    packets less the SYN; a datagram's size is its payload."""
    if c["kind"] != "tcp":
        return int(wire_bytes)
    return (max(0, int(wire_bytes) - c["first"]) // c["perpkt"]) * c["payload"]


def read_flows(path: Path, plan: dict, flows: pd.DataFrame, warmup: float) -> tuple[pd.DataFrame, dict]:
    """ns-2's per-flow rows as cclab's flows table, and each class's payload bytes
    delivered after the warm-up (what cclab's `CLASS.throughput_bps` counts). Bytes
    delivered are payload bytes, capped at the flow's size."""
    raw = pd.read_csv(path).set_index("id")
    listed = flows.reset_index(drop=True)
    by_name = {c["name"]: c for c in plan["classes"]}
    after = {c["name"]: 0 for c in plan["classes"]}
    rows = []
    for i, fl in enumerate(listed.itertuples(index=False)):
        if i not in raw.index:  # arrives after the end
            continue
        c, r = by_name[fl[0]], raw.loc[i]
        payload, at_warmup = _payload(c, r["delivered_bytes"]), _payload(c, r["delivered_at_warmup"])
        if np.isfinite(fl.size):
            payload, at_warmup = min(payload, int(fl.size)), min(at_warmup, int(fl.size))
        after[fl[0]] += payload - at_warmup
        finish = float(r["finish"]) if r["finish"] >= 0 else math.nan
        rows.append({"class": fl[0], "id": i, "size": fl.size, "arrival": float(r["arrival"]),
                     "start": float(r["arrival"]), "finish": finish,
                     "completion_time": finish - float(r["arrival"]), "bytes_delivered": int(payload),
                     "retransmissions": int(r["retransmissions"]), "timeouts": int(r["timeouts"]),
                     "finished": bool(np.isfinite(finish)), "warmup": bool(float(r["arrival"]) < warmup)})
    out = pd.DataFrame(rows, columns=FLOW_COLUMNS)
    out["class"] = pd.Categorical(out["class"], categories=[c["name"] for c in plan["classes"]])
    for col in ("id", "bytes_delivered", "retransmissions", "timeouts"):
        out[col] = out[col].astype(np.int64)
    for col in ("finished", "warmup"):
        out[col] = out[col].astype(bool)
    return out, after


def read_links(path: Path, config: dict) -> pd.DataFrame:
    """ns-2's queue monitors as cclab's links table (after the warm-up). The mean queue
    is the time average of the packets waiting (not the one in transmission), as
    cclab's; ns-2's monitors keep no maximum, so the max and peak columns are NaN.
    Time integrals are differences of two sums: a residue below 1e-9 is 0."""
    raw = pd.read_csv(path).set_index("name")
    nodes = config["nodes"]
    rows = []
    for l in config["links"]:
        r = raw.loc[l["name"]]
        span = float(r["measured_s"])
        q = l["queue"]
        rows.append({"name": l["name"], "from": nodes[l["from"]], "to": nodes[l["to"]],
                     "rate_bps": float(l["rate_bps"]), "delay_s": l["delay_ns"] / 1e9,
                     "packets_sent": int(r["departures"]), "bytes_sent": int(r["departure_bytes"]),
                     "drops": int(r["drops"]),
                     "drop_rate": r["drops"] / r["arrivals"] if r["arrivals"] else 0.0, "marks": 0,
                     "utilization": r["departure_bytes"] * 8 / (l["rate_bps"] * span) if span > 0 else math.nan,
                     "mean_queue_packets": _mean(r["queue_packet_seconds"], span),
                     "mean_queue_bytes": _mean(r["queue_byte_seconds"], span),
                     "max_queue_packets": math.nan, "max_queue_bytes": math.nan,
                     "limit_packets": q.get("limit_packets"), "limit_bytes": q.get("limit_bytes"),
                     "peak_queue_packets": math.nan, "peak_queue_bytes": math.nan})
    out = pd.DataFrame(rows)
    for col in ("limit_packets", "limit_bytes"):
        out[col] = out[col].astype("Int64")
    return out


def _mean(integral: float, span: float) -> float:
    if span <= 0:
        return math.nan
    return 0.0 if abs(integral) < 1e-9 else integral / span


def run_ns2(scenario, seed: int, flows: pd.DataFrame | None = None, progress: bool = False,
            keep: Path | None = None, ns: str | None = None) -> Ns2Result:
    """Run `scenario` in ns-2.35 on `flows` (default: `flow_list(scenario, seed)`).
    `keep`: a folder that keeps the run script and ns-2's raw output."""
    info = pairing.validated(scenario, seed)
    config = info["config"]
    p = plan(config)
    if flows is None:
        flows = flow_list(scenario, seed)
    ns = ns or ensure()
    with tempfile.TemporaryDirectory(prefix="cclab-ns2-") as tmp:
        folder = Path(tmp) if keep is None else Path(keep)
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / "run.tcl"
        script.write_text(tcl_script(p, flows, info["duration_s"], info["warmup_s"], seed, folder, progress))
        code, err, usage = _run(ns, script, folder, progress)
        if code != 0 or not (folder / "flows.csv").exists():
            raise RuntimeError(f"ns-2 run failed ({code}): {err[-2000:]}")
        table, after = read_flows(folder / "flows.csv", p, flows, info["warmup_s"])
        perf = json.loads((folder / "perf.json").read_text()) | usage
        return Ns2Result(flows=table, links=read_links(folder / "links.csv", config), delivered_after_warmup=after,
                         perf=perf, config=config, seed=seed, duration=info["duration_s"], warmup=info["warmup_s"])


def _run(ns: str, script: Path, folder: Path, progress: bool) -> tuple[int, str, dict]:
    """Run `ns script` in `folder`: exit code, the end of stderr, and the process's own
    wall time, CPU time and peak resident memory (from wait4, not the whole machine's).
    ns-2's Linux TCP-LP prints a line per ACK on stdout: stdout goes to a file."""
    import time

    t0 = time.perf_counter()
    with open(folder / "ns.stdout", "w") as so, open(folder / "ns.stderr", "w+") as se:
        proc = subprocess.Popen([ns, str(script)], stdout=so, stderr=None if progress else se, cwd=folder)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        se.seek(0)
        err = se.read()
    return proc.returncode, err, {"process_wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime,
                                  "peak_rss_kb": ru.ru_maxrss}


def main(argv=None) -> int:
    """Run one scenario in ns-2.35 and in cclab on the same flow list; save both runs
    (OUT/ns2 and OUT/cclab, folders that `cclab show` and `cclab compare` read)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("scenario", help="a cclab scenario file (TOML)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario key, as `cclab run --set` (repeatable)")
    ap.add_argument("--out", type=Path, required=True, help="folder for ns2/, cclab/ and ns-2's raw files")
    args = ap.parse_args(argv)
    from cclab.scenario import ScenarioError, apply_overrides, parse_override

    try:
        scenario = pairing.with_tcp(args.scenario)
        if args.set:
            scenario = apply_overrides(scenario, [parse_override(s) for s in args.set])
        flows = flow_list(scenario, args.seed)
        ns2 = run_ns2(scenario, args.seed, flows, progress=True, keep=args.out / "ns2-raw")
    except (Unsupported, ScenarioError, FileNotFoundError) as exc:
        print(f"ns2run: {exc}", file=sys.stderr)
        return 2
    except Missing as exc:
        print(f"ns2run: {exc}", file=sys.stderr)
        return 1
    cc = pairing.run_cclab(scenario, args.seed, flows)
    ns2.result().save(args.out / "ns2")
    cc.save(args.out / "cclab")
    for name, t in (("cclab", cc.flows), ("ns-2", ns2.flows)):
        f = t[t["size"].notna() & ~t["warmup"]]
        print(f"{name:6} flows {len(f):5d}  finished {int(f['finished'].sum()):5d}  "
              f"mean completion time {f['completion_time'].mean():.3f} s  timeouts {int(t['timeouts'].sum())}  "
              f"bytes delivered {int(t['bytes_delivered'].sum()):,}")
    print(f"wrote {args.out}/ns2 and {args.out}/cclab (cclab compare {args.out}/cclab {args.out}/ns2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
