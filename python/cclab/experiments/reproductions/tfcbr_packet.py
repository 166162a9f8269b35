"""Packet-level reproductions of the TCP-friendly CBR-like rate control paper.

Paper: Feng and Xu, "TCP-Friendly CBR-Like Rate Control"
(``shared/papers/tcp-friendly-cbr-like-rate-control.md``). Its NS-2 setup (§VI-A): one
10 Mbps bottleneck, 10 ms one way, a 40-packet DropTail buffer, 1500-byte packets,
short-lived TCP flows arriving as a Poisson process with Pareto sizes (mean 20 packets,
shape 1.6) at load rho_1, and long-lived UDP flows under TFRC, TFCBR or RDTF; 75,000 s
runs. The scenario is :func:`scenario` (the same as ``scenarios/tfcbr/single-link.toml``,
which a test keeps equal). Every run goes through :meth:`Context.sweep`, so the full
sizes can run on a cluster and a repeated entry costs nothing; what a run gives the
entries is computed beside it, in the worker (the reductions :func:`rates` and
:func:`convergence`), and only that is kept in the store: a 75,000-s run has about a
million TCP flows, and the full (α, β) sweep's 2,460 flows tables would take some
100 GB.

The friendliness indices are the paper's (§III, §VI-B): the TCP flows' rate is their
size over their response time; STF-mu (Theorem 1) holds when their mean rate is no lower
than with TFRC as the UDP protocol (the paper's reference, §V-C); the STF-st index is the
fraction of the protocol's TCP flows at whose rate its CDF lies above TFRC's
(:func:`cclab.theory.friendliness.stf_usual`), 0 meaning STF-st (Theorem 2).
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from cclab.experiments.catalogue import Context, Outcome, reproduction
from cclab.experiments.claims import AllOf, Estimate, Greater, Near, Within, mark_figure, outcome
from cclab.experiments.paired import estimate
from cclab.experiments.runs import Point, replicate, run_points
from cclab.experiments.sizes import Size, Sizes
from cclab.plotting import pyplot
from cclab.scenario import set_path
from cclab.stats import mean_ci
from cclab.theory import friendliness as fr

PAPER = "tcp-friendly-cbr-like-rate-control"

#: two-sample Kolmogorov-Smirnov critical value at the 95% level: c = sqrt(-ln(0.025)/2)
KS95 = math.sqrt(-math.log(0.025) / 2)

#: RED for Figs. 9-11. The paper states none of RED's parameters; these are ns-2's
#: classic defaults (thresh_ 5, maxthresh_ 15, linterm_ 10 so max_p 0.1, q_weight_
#: 0.002, gentle_ true) with the paper's 40-packet buffer and mean packets of 1500 bytes.
RED = {"type": "red", "limit": "40pkts", "min_th": "5pkts", "max_th": "15pkts", "max_p": 0.1,
       "weight": 0.002, "gentle": True, "mean_packet_size": "1500B"}
DROPTAIL = {"type": "droptail", "limit": "40pkts"}
QUEUES = {"droptail": DROPTAIL, "red": RED}

#: the three UDP protocols of §VI-A
PROTOCOLS = {"tfrc": ("tfrc", {}), "tfcbr": ("tfcbr", {"alpha": 0.5, "beta": "64s"}),
             "rdtf": ("rdtf", {"alpha": 1.0, "beta": "64s"})}


def scenario(load: float = 0.3, duration: float = 75000.0, warmup: float = 100.0, *,
             n_udp: int = 1, n_long_tcp: int = 0) -> dict:
    """The paper's dumbbell (§VI-A) as a scenario dict: UDP class ``udp`` (TFCBR α 0.5, β 64 s),
    short TCP class ``web`` at ``load``, and ``n_long_tcp`` long-lived TCP flows (class ``long``)."""
    traffic: list[dict[str, Any]] = [
        {"name": "udp", "type": "long_lived", "src": "a", "dst": "b", "protocol": "tfcbr",
         "cc": {"alpha": 0.5, "beta": "64s"}},   # 1500-byte datagrams: the default packet_size
        {"name": "web", "type": "poisson", "src": "a", "dst": "b", "protocol": "newreno", "load": load,
         "size": {"dist": "pareto", "mean": "29200B", "shape": 1.6}},
    ]
    if n_udp != 1:
        traffic[0]["count"] = n_udp
    if n_long_tcp:
        traffic.append({"name": "long", "type": "long_lived", "src": "a", "dst": "b", "protocol": "newreno",
                        "count": n_long_tcp})
    return {"name": "tfcbr/single-link", "duration": f"{duration:g}s", "warmup": f"{warmup:g}s", "seed": 1,
            "tcp": {"mss": 1460, "header": 40},
            "links": [{"name": "bottleneck", "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms",
                       "queue": dict(DROPTAIL)}],
            "traffic": traffic, "record": {"interval": "1s"}}


def udp_point(protocol: str, alpha: float | None = None, beta: float | None = None) -> dict:
    """Sweep overrides that make the UDP class run ``protocol`` (α, β for TFCBR)."""
    proto, cc = PROTOCOLS.get(protocol, (protocol, {}))
    cc = dict(cc)
    if alpha is not None:
        cc["alpha"] = float(alpha)
    if beta is not None:
        cc["beta"] = f"{beta:g}s"
    return {"traffic[udp].protocol": proto, "traffic[udp].cc": cc}


def _per_second(res, name: str) -> np.ndarray:
    s = res.series
    warm = float(res.config.get("warmup_ns", 0)) / 1e9
    sel = (s["name"] == name) & (s["metric"] == "throughput_bps") & (s["time"] > warm)
    return s.loc[sel, "value"].to_numpy(dtype=float)


def cov_64(x: np.ndarray, window: int = 64) -> float:
    """Fig. 19's smoothness: the CoV of the 1-s rates within each 64-s window, averaged."""
    n = len(x) // window
    if n == 0:
        return float("nan")
    c = x[: n * window].reshape(n, window)
    m = c.mean(axis=1)
    ok = m > 0
    return float((c[ok].std(axis=1) / m[ok]).mean()) if ok.any() else float("nan")


#: Bins of the TCP rates kept per run: 1 kbit/s to 10 Gbit/s, 400 a decade (each 0.58%
#: wide). A 75,000-s run has about a million TCP flows; a sweep of 2,460 such runs cannot
#: hold every rate in memory, so a run keeps the counts per bin and the comparisons use
#: the bins' geometric centres (rates outside the range are clipped into it).
RATE_EDGES = np.logspace(3.0, 10.0, 2801)
RATE_MID = np.sqrt(RATE_EDGES[:-1] * RATE_EDGES[1:])


def rate_hist(rates: np.ndarray) -> np.ndarray:
    """Counts of ``rates`` (bit/s) in the bins of :data:`RATE_EDGES`."""
    r = np.clip(np.asarray(rates, dtype=float), RATE_EDGES[0], RATE_EDGES[-1] * (1 - 1e-12))
    return np.histogram(r, RATE_EDGES)[0].astype(np.int64)


def rate_samples(hists) -> np.ndarray:
    """The pooled rates of several runs' :func:`rate_hist` counts, at the bins' centres."""
    return np.repeat(RATE_MID, np.sum(np.stack(list(hists)), axis=0))


def measure(res) -> dict:
    """One run's measures: the short TCP flows' rates (bit/s, finished after warm-up) as bin
    counts, their exact mean, the UDP class's mean rate and Fig. 19's CoV, and the long TCP
    class's mean rate."""
    f = res.flows
    web = f[(f["class"] == "web") & f["finished"] & ~f["warmup"]]
    rates = (web["size"].to_numpy(dtype=float) * 8 / web["completion_time"].to_numpy(dtype=float))
    udp = _per_second(res, "udp")
    out = {"tcp_hist": rate_hist(rates), "tcp_mean_rate": float(rates.mean()) if len(rates) else float("nan"),
           "tcp_sum": float(rates.sum()), "tcp_n": int(len(rates)),
           "tcp_mean_response_s": float(web["completion_time"].mean()) if len(web) else float("nan"),
           "udp_rate": float(udp.mean()) if len(udp) else float("nan"), "udp_cov": cov_64(udp)}
    if "long" in set(f["class"].cat.categories):
        lg = _per_second(res, "long")
        out["long_rate"] = float(lg.mean()) if len(lg) else float("nan")
    return out


#: Seconds of the UDP flow's 1-s rates kept per run (Fig. 20 draws the first 600).
UDP_TRACE_S = 600


def rates(res) -> pd.DataFrame:
    """The reduction the TFCBR entries keep of a run (computed in the worker, beside the run):
    :func:`measure`'s values in one row, the rate histogram as its non-empty bins, and the UDP
    flow's first :data:`UDP_TRACE_S` 1-s rates."""
    m = measure(res)
    hist = m.pop("tcp_hist")
    nz = np.nonzero(hist)[0]
    return pd.DataFrame([{**m, "hist_bins": nz.tolist(), "hist_counts": hist[nz].tolist(),
                          "udp_trace": _per_second(res, "udp")[:UDP_TRACE_S].tolist()}])


rates.version = 1


def measured(res, point=None) -> dict:
    """The row of a stored run's reduction (:func:`rates` or :func:`convergence`), with the
    histogram back as bin counts and traces as arrays."""
    (row,) = next(iter(res.reduced.values())).to_dict("records")
    if "hist_bins" in row:
        hist = np.zeros(len(RATE_MID), dtype=np.int64)
        hist[np.asarray(row.pop("hist_bins"), dtype=int)] = np.asarray(row.pop("hist_counts"), dtype=np.int64)
        row["tcp_hist"] = hist
    for k in ("udp_trace", "u1", "u2"):
        if k in row:
            row[k] = np.asarray(row[k], dtype=float)
    return row


RATES = f"{__name__}:rates"


#: How STF-st and STF-μ are judged (the verdicts' tolerance; :func:`friendliness`).
STF_TOLERANCE = ("STF-st: the CDFs may differ by the two-sample Kolmogorov-Smirnov 95% band; STF-μ: pooled "
                 "mean TCP rates compared without margin (their per-seed 95% CI is shown)")


def friendliness(ref_runs: pd.DataFrame, x_runs: pd.DataFrame) -> dict:
    """STF-μ and the STF-st index of one protocol against the reference, over seeds.

    Both frames have one row per seed with ``tcp_hist``, ``tcp_sum``, ``tcp_n`` and
    ``tcp_mean_rate`` (:func:`measure`). The TCP rates of all seeds are pooled (the
    paper's single long run; binned, see :data:`RATE_EDGES`); the STF-st index counts
    the protocol's flows where its CDF lies above the reference's by more than the
    two-sample Kolmogorov-Smirnov 95% band, so equal laws give 0 with 95% confidence.
    The per-seed ratio of the mean TCP rates gives the interval of STF-μ."""
    a, b = rate_samples(ref_runs["tcp_hist"]), rate_samples(x_runs["tcp_hist"])
    tol = KS95 * math.sqrt((len(a) + len(b)) / (len(a) * len(b)))
    st = fr.stf_usual(a, b, tol=tol).classes.iloc[0]
    st0 = fr.stf_usual(a, b).classes.iloc[0]
    paired = pd.merge(ref_runs[["seed", "tcp_mean_rate"]], x_runs[["seed", "tcp_mean_rate"]], on="seed")
    ratio, ratio_ci = mean_ci(paired["tcp_mean_rate_y"] / paired["tcp_mean_rate_x"])
    mean_a = ref_runs["tcp_sum"].sum() / ref_runs["tcp_n"].sum()
    mean_b = x_runs["tcp_sum"].sum() / x_runs["tcp_n"].sum()
    return {"stf_mu": bool(mean_b >= mean_a), "tcp_rate_ratio": ratio, "tcp_rate_ratio_ci": ratio_ci,
            "stf_st_index": float(st["st_index"]), "stf_st_index_raw": float(st0["st_index"]),
            "stf_st_gap": float(st0["max_violation"]),
            "stf_st": bool(st["st_index"] == 0.0), "n_tcp_flows": int(len(b))}


#: Each entry's sizes; the paper's runs are 75,000 s.
FIG1_SIZES = Sizes(Size(seeds=10, duration=3000.0, warmup=100.0, axes={"Y_CBR/Y_TCP": (0.5, 0.7, 0.8, 0.9, 0.95)}),
                   Size(seeds=5, duration=75000.0, warmup=500.0,
                        axes={"Y_CBR/Y_TCP": tuple(round(0.5 + 0.05 * i, 2) for i in range(10))}))
ALPHA_BETA_SIZES = Sizes(
    Size(seeds=5, duration=600.0, warmup=100.0,
         axes={"α": tuple(k / 8 for k in (1, 2, 4, 6, 8, 9)), "β (s)": (1, 16, 64), "TCP load": (0.1, 0.3, 0.5),
               "queues": ("droptail", "red")}),
    Size(seeds=5, duration=75000.0, warmup=500.0,
         axes={"α": tuple(i / 8 for i in range(1, 10)), "β (s)": tuple(2 ** k for k in range(9)),
               "TCP load": (0.1, 0.3, 0.5), "queues": ("droptail", "red")}))
CONVERGENCE_SIZES = Sizes(Size(seeds=10, max_seeds=16, duration=1500.0, axes={"β (s)": (16, 64, 256)}),
                          Size(seeds=20, max_seeds=40, duration=3000.0, axes={"β (s)": (16, 64, 256)}))
VS_SIZES = Sizes(Size(seeds=5, max_seeds=8, duration=2000.0, warmup=100.0,
                      axes={"TCP load": tuple(round(0.1 * k, 1) for k in range(1, 8)), "protocols": tuple(PROTOCOLS)}),
                 Size(seeds=5, max_seeds=20, duration=75000.0, warmup=500.0,
                      axes={"TCP load": tuple(round(0.1 * k, 1) for k in range(1, 8)), "protocols": tuple(PROTOCOLS)}))
UDP_TCP_SIZES = Sizes(Size(seeds=5, max_seeds=8, duration=1500.0, warmup=100.0,
                           axes={"long TCP flows": (1, 2, 3, 4, 5), "protocols": tuple(PROTOCOLS)}),
                      Size(seeds=5, max_seeds=20, duration=75000.0, warmup=500.0,
                           axes={"long TCP flows": (1, 2, 3, 4, 5), "protocols": tuple(PROTOCOLS)}))


def udp_scenario(base: dict, protocol: str, alpha: float | None = None, beta: float | None = None, **overrides) -> dict:
    """``base`` with the UDP class under ``protocol`` (:func:`udp_point`) and other overrides by key path."""
    sc = json.loads(json.dumps(base))
    for k, v in {**udp_point(protocol, alpha, beta), **overrides}.items():
        set_path(sc, k, v)
    return sc


def protocol_point(base: dict, protocol: str, group: tuple, labels: dict, alpha=None, beta=None, **overrides) -> Point:
    """A run of the UDP class under ``protocol`` (α, β for TFCBR), labelled with the protocol,
    α and β (NaN for TFRC) and ``labels``."""
    a = float(alpha) if alpha is not None else PROTOCOLS.get(protocol, (0, {}))[1].get("alpha", math.nan)
    b = float(beta) if beta is not None else _cc_value(PROTOCOLS.get(protocol, (0, {}))[1], "beta")
    return Point({"protocol": protocol, "alpha": a, "beta": b, **labels},
                 udp_scenario(base, protocol, alpha, beta, **overrides), group)


COLORS = {"tfrc": "tab:blue", "tfcbr": "tab:green", "rdtf": "tab:red"}


def _protocol_panels(axes, tab: pd.DataFrame, x: str, xlabel: str, panels) -> None:
    """One panel per (column, CI column or None, title): the column against ``x``, a line per protocol."""
    for ax, (col, ci, title) in zip(axes, panels):
        for p, g in tab.groupby("protocol", sort=False):
            ax.errorbar(g[x], g[col], yerr=None if ci is None else g[ci], fmt="o-", color=COLORS[p], capsize=3,
                        label=p.upper())
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)


# --------------------------------------------------------------------------- Fig. 1

def fig1_theory(f: np.ndarray) -> np.ndarray:
    """Fig. 1 in the paper's flow-level model (§V-B, M/G/1-PS): the short flows' mean response
    time with a CBR flow at f·Y^TCP over that with the UDP flow under TCP.

    Under TCP the link is PS with one permanent customer: R1 = (1−ρ)/2, so E[T] = 2E[S]/(1−ρ),
    and Y^TCP = 1−ρ (proof of Theorem 4 with n2 = 0, nu = 1). With CBR at r = f(1−ρ) the short
    flows share 1−r: E[T] = E[S]/(1−r−ρ) = E[S]/((1−ρ)(1−f)). The ratio is 1/(2(1−f)):
    infinite at f = 1, the instability of §V-B.4."""
    return 1.0 / (2.0 * (1.0 - np.asarray(f, dtype=float)))


def fig1_scenario(duration: float, warmup: float) -> dict:
    """§I-A: 10 Mbps, 10 ms RTT (5 ms one way), a 100-packet DropTail buffer, Poisson TCP
    arrivals at 30 flows/s with Pareto sizes of mean 20 packets and shape 1.5, one UDP flow."""
    sc = scenario(0.3, duration, warmup)
    sc["name"] = "tfcbr/fig1"
    sc["links"][0].update(delay="5ms", queue={"type": "droptail", "limit": "100pkts"})
    web = sc["traffic"][1]
    web.pop("load")
    web.update(arrival_rate=30.0, size={"dist": "pareto", "mean": "29200B", "shape": 1.5})
    return sc


def fig1_claims(ref: pd.DataFrame, cbr: pd.DataFrame) -> list:
    """§I-A: the TCP flows' mean response time rises with f and becomes "considerably longer"
    than with the UDP flow under TCP (seed by seed: the ratio of the two runs of a seed)."""
    t_tcp = dict(zip(ref["seed"], ref["tcp_mean_response_s"]))
    fr_ = sorted(set(cbr["fraction"]))
    resp = {f: estimate(cbr, "tcp_mean_response_s", fmt="{:.3g}", fraction=f) for f in fr_}
    ratio = {f: Estimate.of({s_: v / t_tcp[s_] for s_, v in resp[f].values if s_ in t_tcp}) for f in fr_}
    half_hi = Estimate.of({s_: v / 2 for s_, v in ratio[fr_[-1]].values})
    return [AllOf("the response time increases with Y_CBR/Y_TCP (\"increases quickly\")",
                  [Greater(f"{fr_[i + 1]:g} > {fr_[i]:g}", resp[fr_[i + 1]], resp[fr_[i]]) for i in range(len(fr_) - 1)],
                  ours=", ".join(resp[f].text() for f in fr_) + " s"),
            Greater(f"at f = {fr_[-1]:g} it is \"considerably longer\" than with the UDP flow under TCP (over twice)",
                    ratio[fr_[-1]], 2.0),
            Greater(f"... and the rise is steep: at f = {fr_[0]:g} less than half the ratio at f = {fr_[-1]:g}",
                    half_hi, ratio[fr_[0]])]


@reproduction("tfcbr-fig1", paper=PAPER, figure="Fig. 1",
              title="A CBR flow near the TCP rate makes the Poisson TCP flows' response time explode", sizes=FIG1_SIZES)
def tfcbr_fig1(ctx: Context) -> Outcome:
    """Fig. 1: the UDP flow under TCP gives Y^TCP; CBR at 0.5..0.95 Y^TCP, mean TCP response time.
    Two stages (the CBR rates are fractions of the first stage's mean Y^TCP), so the seeds are fixed."""
    size = ctx.size
    duration, warmup, fracs = size.duration, size.warmup, size.axis("Y_CBR/Y_TCP")
    base = fig1_scenario(duration, warmup)
    seeds = {(): range(ctx.seed, ctx.seed + size.seeds)}
    ref_pt = Point({"udp": "tcp"}, udp_scenario(base, "newreno", **{"traffic[udp].cc": {}}))
    r = run_points(ctx, "tcp", [ref_pt], seeds, measured, keep=(RATES,))
    y_tcp, y_tcp_ci = mean_ci(r["udp_rate"])
    t_tcp, t_tcp_ci = mean_ci(r["tcp_mean_response_s"])
    pts = [Point({"udp": "cbr", "fraction": f}, udp_scenario(base, "cbr", **{"traffic[udp].cc": {"rate": f"{f * y_tcp:.0f}bps"}}))
           for f in fracs]
    cbr = run_points(ctx, "cbr", pts, seeds, measured, keep=(RATES,))
    claims = fig1_claims(r, cbr)
    rows = [dict(udp="tcp", fraction=1.0, y_udp_bps=y_tcp, mean_response_s=t_tcp, mean_response_ci=t_tcp_ci,
                 ratio=1.0, ratio_ci=t_tcp_ci / t_tcp, theory_ratio=1.0, seeds=len(r))]
    for fr_, g in cbr.groupby("fraction"):
        m, h = mean_ci(g["tcp_mean_response_s"])
        rows.append(dict(udp="cbr", fraction=fr_, y_udp_bps=float(g["udp_rate"].mean()), mean_response_s=m,
                         mean_response_ci=h, ratio=m / t_tcp, ratio_ci=h / t_tcp,
                         theory_ratio=float(fig1_theory(fr_)), seeds=len(g)))
    df = pd.DataFrame(rows)
    c = df[df.udp == "cbr"].sort_values("fraction")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.errorbar(c["fraction"], c["mean_response_s"], yerr=c["mean_response_ci"], fmt="o-", color="tab:red",
                capsize=3, label="ours: UDP flow at CBR (95% CI over seeds)")
    ax.axhline(t_tcp, color="tab:blue", label=f"ours: UDP flow under TCP (Y_TCP = {y_tcp / 1e6:.2f} Mbps)")
    ax.axhspan(t_tcp - t_tcp_ci, t_tcp + t_tcp_ci, color="tab:blue", alpha=0.15)
    ff = np.linspace(min(fracs), 0.97, 100)
    ax.plot(ff, t_tcp * fig1_theory(ff), "k--", lw=1, label="flow-level PS model: T_TCP / (2(1 - f))")
    ax.set_xlabel("Y_CBR / Y_TCP")
    ax.set_ylabel("mean TCP response time (s)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    hi = c.iloc[-1]
    lo = c.iloc[0]
    table = "\n".join(f"| {r.fraction:g} | {r.y_udp_bps / 1e6:.3f} | {r.mean_response_s:.3f} ± "
                      f"{r.mean_response_ci:.3f} | {r.ratio:.2f} | {r.theory_ratio:.2f} |" for r in c.itertuples())
    details = f"""
Paper (§I-A, Fig. 1; NS-2, 10 Mbps, 10 ms RTT, 100-packet DropTail, Poisson TCP at 30
flows/s, Pareto sizes mean 20 packets, shape 1.5): the TCP flows' mean response time
"increases quickly" as Y_CBR approaches Y_TCP and "becomes considerably longer" than
with the UDP flow under TCP; at Y_CBR = Y_TCP "it approaches to infinite". The paper
prints no numbers (a figure only), so the check is the shape: the response time
rises monotonically with f, and at the largest f is more than twice the TCP case
while at f = {lo['fraction']:g} it is less than half of that.

Ours: {len(r)} seeds of {duration:g} s (the first {warmup:g} s excluded), Y_TCP =
{y_tcp / 1e6:.3f} ± {y_tcp_ci / 1e6:.3f} Mbps, TCP-case response time {t_tcp:.3f} ±
{t_tcp_ci:.3f} s.

| Y_CBR/Y_TCP | Y_CBR (Mbps) | mean response (s, 95% CI) | over TCP case | PS model |
|---|---|---|---|---|
{table}

The PS model (dashed) puts the crossing at f = 0.5 and the pole at f = 1. In the
packet simulation the UDP flow under TCP gets less than the PS model's 1 − ρ (slow
start and losses), so a CBR flow at f·Y_TCP leaves more room than the model's
f(1 − ρ), and the blow-up arrives later in f; with Pareto shape 1.5 the sizes have
infinite variance, so means over finite runs converge slowly (wide intervals near f = 1).
"""
    mark_figure(fig, claims, "TFCBR paper Fig. 1: CBR-like UDP vs Poisson TCP (paper: grows without bound as f -> 1)")
    return outcome(df, fig, claims, intro=details,
                   what=f"mean TCP response time {lo['mean_response_s']:.3g} s at f = {lo['fraction']:g} rising to "
                        f"{hi['mean_response_s']:.3g} ± {hi['mean_response_ci']:.2g} s at f = {hi['fraction']:g}, "
                        f"{hi['ratio']:.2f}x the {t_tcp:.3g} s with the UDP flow under TCP (PS model "
                        f"{float(fig1_theory(hi['fraction'])):.1f}x)",
                   tolerance="'considerably longer' read as over twice the TCP case")


# --------------------------------------------------------------------------- Figs. 6-11

def _param(v: Any) -> Any:
    """A sweep parameter's value as the runs table gives it (tables come back as JSON text)."""
    return json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v


def _queue_name(q: Any) -> str:
    q = _param(q)
    return str(q["type"]) if isinstance(q, dict) else str(q)


def _cc_value(cc: Any, key: str) -> float:
    cc = _param(cc)
    if not isinstance(cc, dict) or key not in cc:
        return float("nan")
    v = cc[key]
    return float(v[:-1]) if isinstance(v, str) else float(v)


def against_reference(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """For each protocol point of ``runs`` (rows of :func:`measure` with ``queue``, ``load``,
    ``protocol``, ``alpha``, ``beta``, ``seed``), its friendliness against the TFRC runs of the
    same ``keys`` (e.g. queue and load), and its UDP rate and smoothness with 95% intervals."""
    rows = []
    for kv, g in runs.groupby(keys, sort=True):
        kv = kv if isinstance(kv, tuple) else (kv,)
        ref = g[g["protocol"] == "tfrc"]
        ref_rate = float(ref["udp_rate"].mean())
        for (proto, a, b), x in g.groupby(["protocol", "alpha", "beta"], dropna=False, sort=False):
            st = friendliness(ref, x) if proto != "tfrc" else {}
            m, h = mean_ci(x["udp_rate"])
            cm, ch = mean_ci(x["udp_cov"])
            tm, th = mean_ci(x["tcp_mean_rate"])
            rows.append({**dict(zip(keys, kv)), "protocol": proto, "alpha": a, "beta": b, "seeds": len(x),
                         "mean_rate": m, "mean_rate_ci": h, "rate_over_tfrc": m / ref_rate,
                         "cov_rate": cm, "cov_rate_ci": ch, "tcp_mean_rate": tm, "tcp_mean_rate_ci": th,
                         **({"stf_mu": True, "stf_st": True, "stf_st_index": 0.0, "stf_st_gap": 0.0, "tcp_rate_ratio": 1.0}
                            if proto == "tfrc" else st)})
    return pd.DataFrame(rows)


def largest_alpha(tab: pd.DataFrame, col: str) -> float:
    """The largest α of the grid such that ``col`` holds for every β and load of ``tab`` and for
    every smaller α too (0 when it fails at the smallest)."""
    ok = tab.groupby("alpha")[col].all().sort_index()
    best = 0.0
    for a, v in ok.items():
        if not v:
            break
        best = float(a)
    return best


#: §V-C observations 2) and 3): the largest α that is STF-μ / STF-st for every β "among these figures"
PAPER_LARGEST = {("droptail", "stf_mu"): 6 / 8, ("red", "stf_mu"): 4 / 8,
                 ("droptail", "stf_st"): 4 / 8, ("red", "stf_st"): 1 / 8}


def alpha_beta_points(size: Size) -> list[Point]:
    """TFRC and every (α, β) of TFCBR at every TCP load and queue; a group per (queue, load)."""
    base = scenario(0.3, size.duration, size.warmup)
    out = []
    for q in size.axis("queues"):
        for ld in size.axis("TCP load"):
            over = {"traffic[web].load": ld, "links[bottleneck].queue": QUEUES[q]}
            lab = {"queue": q, "load": ld}
            out.append(protocol_point(base, "tfrc", (q, ld), lab, **over))
            out += [protocol_point(base, "tfcbr", (q, ld), lab, alpha=a, beta=b, **over)
                    for a in size.axis("α") for b in size.axis("β (s)")]
    return out


@reproduction("tfcbr-alpha-beta-packet", paper=PAPER, figure="Figs. 6-11",
              title="TFCBR's (α, β) plane by packet simulation: where it is STF-st, STF-μ or neither",
              sizes=ALPHA_BETA_SIZES)
def tfcbr_alpha_beta_packet(ctx: Context) -> Outcome:
    """Figs. 6-11: each (α, β) against TFRC at the same load and queue (§V-C). The grid's
    boundary is read off pooled CDFs at a fixed number of seeds (no replication rounds)."""
    size = ctx.size
    pts = alpha_beta_points(size)
    runs = run_points(ctx, "packet", pts, {p.group: range(ctx.seed, ctx.seed + size.seeds) for p in pts}, measured,
                      keep=(RATES,))
    tab = against_reference(runs, ["queue", "load"])
    tab = tab[tab.protocol == "tfcbr"].drop(columns=["protocol"]).reset_index(drop=True)
    return alpha_beta_outcome(tab, size.axis("α"), size.axis("β (s)"), size.axis("TCP load"))


def alpha_beta_outcome(tab: pd.DataFrame, alphas, betas, loads) -> Outcome:
    """Figure, verdict and details of :func:`tfcbr_alpha_beta_packet` from its table."""
    plt = pyplot()
    queues = [q for q in ("droptail", "red") if q in set(tab.queue)]
    fig, axes = plt.subplots(len(queues), len(loads), figsize=(4.3 * len(loads), 3.8 * len(queues)), sharex=True,
                             sharey=True, squeeze=False)
    for i, q in enumerate(queues):
        for j, ld in enumerate(loads):
            ax = axes[i, j]
            g = tab[(tab.queue == q) & np.isclose(tab.load, ld)]
            for cond, mk, col, lab in ((g.stf_st, "o", "tab:green", "STF-st"),
                                       (g.stf_mu & ~g.stf_st, "^", "tab:orange", "STF-μ only"),
                                       (~g.stf_mu, "x", "tab:red", "not STF-μ")):
                ax.plot(g.alpha[cond], g.beta[cond], mk, color=col, ms=7, label=lab)
            ax.axvline(0.5, color="k", ls="--", lw=0.8)
            # the paper's §V-C numbers: largest α STF-μ / STF-st for every β with this queue
            ax.axvline(PAPER_LARGEST[(q, "stf_mu")], color="tab:orange", ls=":", lw=1.2,
                       label="paper: largest α STF-μ ∀β")
            ax.axvline(PAPER_LARGEST[(q, "stf_st")], color="tab:green", ls=":", lw=1.2,
                       label="paper: largest α STF-st ∀β")
            ax.set_yscale("log", base=2)
            ax.set_title(f"{'DropTail' if q == 'droptail' else 'RED'}, TCP load {ld:.0%} "
                         f"(paper Fig. {6 + 3 * i + j})", fontsize=9)
            ax.grid(alpha=0.3)
            if i == 1:
                ax.set_xlabel("α")
            if j == 0:
                ax.set_ylabel("β (s)")
    # one legend for all panels, under them (in a corner it covered the small-α markers)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=5, fontsize=8,
               bbox_to_anchor=(0.5, -0.03))
    found = {(q, c): largest_alpha(tab[tab.queue == q], c) for q in queues for c in ("stf_mu", "stf_st")}
    tol = 2 / 8
    within = {k: abs(found[k] - PAPER_LARGEST[k]) <= tol + 1e-9 for k in found}
    p = tab[np.isclose(tab.alpha, 0.5) & np.isclose(tab.beta, 64)]
    lines = "\n".join(f"| {'DropTail' if q == 'droptail' else 'RED'} | {'STF-μ' if c == 'stf_mu' else 'STF-st'} | "
                      f"{PAPER_LARGEST[(q, c)] * 8:g}/8 | {found[(q, c)] * 8:g}/8 | "
                      f"{'yes' if within[(q, c)] else 'NO'} |" for (q, c) in found)
    pt = "\n".join(f"| {r.queue} | {r.load:.0%} | {r.stf_st_index:.3f} | {r.tcp_rate_ratio:.3f} ± "
                   f"{r.tcp_rate_ratio_ci:.3f} | {r.rate_over_tfrc:.3f} | {'STF-st' if r.stf_st else ('STF-μ' if r.stf_mu else 'neither')} |"
                   for r in p.itertuples())
    name = lambda q, c: f"largest α {'STF-μ' if c == 'stf_mu' else 'STF-st'} for every β with " \
                        f"{'DropTail' if q == 'droptail' else 'RED'}"
    claims = [Near(f"{name(q, c)}: {PAPER_LARGEST[(q, c)] * 8:g}/8 (§V-C)", Estimate.const(found[(q, c)], "{:.3f}"),
                   PAPER_LARGEST[(q, c)], tol, ours=f"{found[(q, c)] * 8:g}/8") for (q, c) in found]
    details = f"""
Paper (§V-C, Figs. 6-11, NS-2, 75,000 s): "the largest α so that TFCBR is STF-μ for any
β is 6/8 for Droptail routers and 4/8 for RED routers ... the largest α so that TFCBR
is STF-st for any β is 4/8 for Droptail routers and 1/8 for RED routers"; the point
(0.5, 64 s) is STF-st at high load and STF-μ but not STF-st at low load (§V-D). The
figures themselves are only drawn (boundary lines), so these four numbers are what we
compare, on our grid α ∈ {{{', '.join(f'{a * 8:g}/8' for a in alphas)}}}, β ∈ {betas} s,
loads {loads}, {int(tab['seeds'].max())} seeds each. Tolerance: two grid steps of α (±2/8), since the boundary
depends on TFRC's loss estimator (RFC 5348 here, ns-2's Agent/TFRC there) and on RED's
unstated parameters (ns-2's classic defaults here: thresholds 5/15 packets, max_p 0.1).

Each (α, β) is compared with TFRC at the same load, queue and seeds: STF-μ when the TCP
flows' pooled mean rate is at least TFRC's (Theorem 1); STF-st when no TCP flow sits
where the protocol's CDF is above TFRC's by more than the two-sample Kolmogorov-Smirnov
95% band (Theorem 2; the index is the fraction of flows that do, the paper's Fig. 16
orientation: 0 = STF-st).

| queue | order | paper | ours | within ±2/8 |
|---|---|---|---|---|
{lines}

The point (α, β) = (0.5, 64 s):

| queue | load | STF-st index | TCP mean rate over TFRC's (95% CI) | UDP rate over TFRC's | class |
|---|---|---|---|---|---|
{pt}
"""
    mark_figure(fig, claims, "TFCBR (α, β) against TFRC, packet level (markers: ours; dotted: the paper's boundary "
                             "α; dashed: flow-level point C, α = 0.5)")
    return outcome(tab, fig, claims, intro=details, what="; ".join(f"{name(q, c)}: {found[(q, c)] * 8:g}/8 (paper "
                                                                  f"{PAPER_LARGEST[(q, c)] * 8:g}/8)" for (q, c) in found),
                   tolerance=f"±2/8 in α, two steps of the paper's α grid of 1/8 (the paper's boundary is read off its "
                             f"figures' grid); {STF_TOLERANCE}")


# --------------------------------------------------------------------------- Figs. 15-20

def vs_claims(runs: pd.DataFrame) -> list:
    """§VI-B on Figs. 15-20, each protocol against TFRC at the same load (seed by seed where
    the measure is per run; the STF-st index pools the seeds' TCP rates)."""
    tab = against_reference(runs, ["load"]).set_index(["protocol", "load"])
    loads = sorted(set(runs["load"]))
    ratio = lambda p, ld: Estimate.of({s_: v for s_, v in _rate_ratios(runs, p, ld).items()},
                                     groups={(ld,)}, fmt="{:.3f}")
    per = lambda col, p, ld: estimate(runs, col, fmt="{:.3g}", protocol=p, load=ld)
    idx = lambda p, ld: Estimate.const(float(tab.loc[(p, ld), "stf_st_index"]), "{:.3f}")
    return [AllOf("TFCBR is always STF-μ (its TCP flows' mean rate at least TFRC's; Fig. 17)",
                  [Greater(f"{ld:.0%}", ratio("tfcbr", ld), 1.0) for ld in loads]),
            AllOf("RDTF is not even STF-μ (Fig. 17)", [Greater(f"{ld:.0%}", 1.0, ratio("rdtf", ld)) for ld in loads]),
            AllOf("TFCBR is STF-st except when the TCP load is 10% (Fig. 16)",
                  [Within(f"{ld:.0%}", idx("tfcbr", ld), hi=0.0) for ld in loads if ld >= 0.3]),
            AllOf("RDTF is far from STF-st: about 80% of TCP flows should improve (index at least 0.5; Fig. 16)",
                  [Within(f"{ld:.0%}", idx("rdtf", ld), lo=0.5) for ld in loads]),
            AllOf("TFCBR sends less than TFRC (Fig. 18)",
                  [Greater(f"{ld:.0%}", per("udp_rate", "tfrc", ld), per("udp_rate", "tfcbr", ld)) for ld in loads]),
            AllOf("... and much more smoothly on the scale of a minute (Fig. 19)",
                  [Greater(f"{ld:.0%}", per("udp_cov", "tfrc", ld), per("udp_cov", "tfcbr", ld)) for ld in loads])]


def _rate_ratios(runs: pd.DataFrame, protocol: str, load: float) -> dict:
    """Per seed: the TCP flows' mean rate with ``protocol`` over that with TFRC."""
    g = runs[np.isclose(runs["load"], load)]
    ref = dict(zip(g[g.protocol == "tfrc"]["seed"], g[g.protocol == "tfrc"]["tcp_mean_rate"]))
    x = g[g.protocol == protocol]
    return {s_: v / ref[s_] for s_, v in zip(x["seed"], x["tcp_mean_rate"]) if s_ in ref}


def protocols_points(base: dict, axis: str, key: str, values) -> list[Point]:
    """The three protocols at each value of one key path (a group per value)."""
    return [protocol_point(base, p, (v,), {axis: v}, **{key: v}) for v in values for p in PROTOCOLS]


@reproduction("tfcbr-vs-tfrc-rdtf", paper=PAPER, figure="Figs. 15-20",
              title="TFRC, TFCBR and RDTF against Poisson TCP at loads 10-70%: rate, smoothness, friendliness",
              sizes=VS_SIZES)
def tfcbr_vs_tfrc_rdtf(ctx: Context) -> Outcome:
    """Figs. 15-20 (§VI-B): one UDP flow of each protocol against short TCP flows."""
    size = ctx.size
    loads, duration, warmup = size.axis("TCP load"), size.duration, size.warmup
    pts = protocols_points(scenario(0.3, duration, warmup), "load", "traffic[web].load", loads)
    runs, claims = replicate(ctx, "packet", pts, measured, vs_claims, keep=(RATES,))
    tab = against_reference(runs, ["load"])
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
    colors = COLORS
    _protocol_panels(list(axes.flat), tab, "load", "TCP load", (
        ("stf_st_index", None, "STF-st index (Fig. 16)"),
        ("tcp_mean_rate", "tcp_mean_rate_ci", "TCP flows' mean rate, bit/s (Fig. 17)"),
        ("mean_rate", "mean_rate_ci", "UDP mean rate, bit/s (Fig. 18)"),
        ("cov_rate", "cov_rate_ci", "UDP CoV of 1-s rates in 64 s (Fig. 19)")))
    ax = axes[1, 1]
    mid = min(loads, key=lambda v: abs(v - 0.3))
    for p in PROTOCOLS:
        h = np.sum(np.stack(list(runs[(runs.protocol == p) & np.isclose(runs.load, mid)]["tcp_hist"])), axis=0)
        ax.step(RATE_EDGES[1:], np.cumsum(h) / h.sum(), where="post", color=colors[p], label=p.upper())
    ax.set_xscale("log")
    ax.set_title(f"CDF of the TCP flows' rates, load {mid:.0%} (Fig. 15)", fontsize=9)
    ax.set_xlabel("rate (bit/s)")
    ax.grid(alpha=0.3)
    ax = axes[1, 2]
    for p in ("tfrc", "tfcbr"):
        x = runs[(runs.protocol == p) & np.isclose(runs.load, mid)].sort_values("seed").iloc[0]["udp_trace"]
        ax.plot(np.arange(len(x)), x, color=colors[p], lw=0.8, label=p.upper())
    ax.set_title(f"1-s UDP rate, load {mid:.0%}, first seed (Fig. 20)", fontsize=9)
    ax.set_xlabel("time after warm-up (s)")
    ax.grid(alpha=0.3)
    t = tab.set_index(["protocol", "load"])
    tfcbr_st = [ld for ld in loads if t.loc[("tfcbr", ld), "stf_st"]]
    rdtf_idx = [t.loc[("rdtf", ld), "stf_st_index"] for ld in loads]
    gap = max([t.loc[("tfcbr", ld), "stf_st_gap"] for ld in loads if ld > 0.15] or [float("nan")])
    table = "\n".join(f"| {r.protocol} | {r.load:.0%} | {r.mean_rate / 1e6:.2f} ± {r.mean_rate_ci / 1e6:.2f} | "
                      f"{r.cov_rate:.3f} ± {r.cov_rate_ci:.3f} | {r.tcp_mean_rate / 1e6:.2f} ± "
                      f"{r.tcp_mean_rate_ci / 1e6:.2f} | {r.stf_st_index:.3f} | {r.stf_st_gap:.4f} | {'yes' if r.stf_mu else 'no'} | "
                      f"{'yes' if r.stf_st else 'no'} |" for r in tab.itertuples())
    details = f"""
Paper (§VI-B, Figs. 15-20, NS-2, 75,000 s, one UDP flow): "TFCBR is always STF-st,
except when the TCP load is 10%. However, RDTF is not STF-st for any TCP load ...
about 80% of TCP flows should have an improved rate in order for RDTF to be STF-st"
(Fig. 16); "TFCBR is always STF-μ including the case when the TCP load is 10%,
however, RDTF is not even STF-μ" (Fig. 17); TFCBR sends less than TFRC and much more
smoothly on the scale of a minute, RDTF about as much as TFRC, more smoothly (Figs.
18-19). The paper prints no values beyond these. Tolerance: the orders must hold at
every load (STF-st for TFCBR at every load from 30%), and RDTF's index must be at
least 0.5 (the paper's "about 80%" read loosely, since the index is a count of flows
past a band that shrinks with the sample size).

Ours, {duration:g} s runs (the first {warmup:g} s excluded), {int(tab['seeds'].min())}-{int(tab['seeds'].max())} seeds,
mean ± 95% CI over seeds; rates in Mbps; STF against TFRC at the same load and seeds; the largest CDF gap
is max_t F_protocol(t) − F_TFRC(t), in probability (0 when never above):

| protocol | load | UDP rate | CoV (64 s) | TCP flows' mean rate | STF-st index | largest CDF gap | STF-μ | STF-st |
|---|---|---|---|---|---|---|---|---|
{table}
"""
    mark_figure(fig, claims, "Figs. 15-20: TFRC, TFCBR and RDTF against Poisson TCP (ours, 95% CI)")
    return outcome(tab, fig, claims, intro=details,
                   what=f"TFCBR STF-st at loads {[f'{v:.0%}' for v in tfcbr_st]} (paper: all but 10%); RDTF's STF-st "
                        f"index {min(rdtf_idx):.2f}-{max(rdtf_idx):.2f} (paper about 0.8); TFCBR's CDF above TFRC's by "
                        f"at most {gap:.3f} from 20% load",
                   tolerance=STF_TOLERANCE + "; RDTF's STF-st index at least 0.5")


# --------------------------------------------------------------------------- Figs. 12-14

def convergence_scenario(beta: float, duration: float) -> dict:
    """§V-D: short TCP flows at 50% load and two TFCBR flows (α 0.5), from 10 s and 500 s."""
    sc = scenario(0.5, duration, 0.0)
    sc["name"] = "tfcbr/convergence"
    u = sc["traffic"][0]
    u.update(name="u1", start="10s", cc={"alpha": 0.5, "beta": f"{beta:g}s"})
    sc["traffic"].insert(1, dict(u, name="u2", start="500s"))
    return sc


def convergence_time(a: np.ndarray, b: np.ndarray, start: int = 500, window: int = 10,
                     within: float = 0.1) -> float:
    """Seconds after ``start`` until the two flows' ``window``-s mean rates first differ by less
    than ``within`` of their mean (NaN if never)."""
    n = min(len(a), len(b))
    for t in range(start, n - window):
        ma, mb = a[t:t + window].mean(), b[t:t + window].mean()
        if abs(ma - mb) < within * (ma + mb) / 2:
            return float(t - start)
    return float("nan")


def measure_convergence(res) -> dict:
    """Convergence time of the two flows, and their rates' CoV (Fig. 19's measure) after 1000 s."""
    a, b = _per_second(res, "u1"), _per_second(res, "u2")
    return {"convergence_s": convergence_time(a, b), "cov_u1": cov_64(a[1000:]), "cov_u2": cov_64(b[1000:]),
            "u1": a, "u2": b}


def convergence(res) -> pd.DataFrame:
    """The reduction ``tfcbr-convergence`` keeps of a run: :func:`measure_convergence` in one
    row (the two flows' 1-s rates as lists)."""
    m = measure_convergence(res)
    return pd.DataFrame([{**m, "u1": m["u1"].tolist(), "u2": m["u2"].tolist()}])


convergence.version = 1
CONVERGENCE = f"{__name__}:convergence"


def convergence_claims(runs: pd.DataFrame) -> list:
    """§V-D: the larger β, the smoother the rate and the longer the convergence; every seed converges."""
    betas = sorted(set(runs["beta"]))
    conv = {b: estimate(runs, "convergence_s", fmt="{:.0f}", beta=b) for b in betas}
    cov = {b: estimate(runs, "cov_mean", fmt="{:.3f}", beta=b) for b in betas}
    done = {b: Estimate.const(float(runs[runs.beta == b]["convergence_s"].notna().mean())) for b in betas}
    return [AllOf("the larger β, the longer the convergence (Figs. 12-14)",
                  [Greater(f"{betas[i + 1]:g} s", conv[betas[i + 1]], conv[betas[i]]) for i in range(len(betas) - 1)],
                  ours=", ".join(f"{conv[b].text()} s" for b in betas)),
            AllOf("... and the smoother the rate", [Greater(f"{betas[i + 1]:g} s", cov[betas[i]], cov[betas[i + 1]])
                                                    for i in range(len(betas) - 1)],
                  ours=", ".join(cov[b].text() for b in betas)),
            AllOf("the two flows converge in every run", [Within(f"β = {b:g} s", done[b], lo=1.0) for b in betas],
                  ours=", ".join(f"{done[b].value:.0%}" for b in betas))]


@reproduction("tfcbr-convergence", paper=PAPER, figure="Figs. 12-14",
              title="Two TFCBR flows: the larger β, the smoother the rate and the slower the convergence",
              sizes=CONVERGENCE_SIZES)
def tfcbr_convergence(ctx: Context) -> Outcome:
    """Figs. 12-14 (§V-D): the second flow joins at 500 s; time until the two rates agree."""
    size = ctx.size
    betas, duration = list(size.axis("β (s)")), size.duration
    base = convergence_scenario(64, duration)
    pts = []
    for b in betas:
        sc = json.loads(json.dumps(base))
        for k in ("traffic[u1].cc.beta", "traffic[u2].cc.beta"):
            set_path(sc, k, f"{b}s")
        pts.append(Point({"beta": float(b)}, sc))

    def measure(res, point):
        m = measured(res)
        return {**m, "cov_mean": (m["cov_u1"] + m["cov_u2"]) / 2}

    runs, claims = replicate(ctx, "packet", pts, measure, convergence_claims, keep=(CONVERGENCE,))
    seeds = int(runs["seed"].nunique())
    rows = []
    for b, g in runs.groupby("beta"):
        m, h = mean_ci(g["convergence_s"])
        c, ch = mean_ci(pd.concat([g["cov_u1"], g["cov_u2"]]))
        rows.append(dict(beta=b, seeds=len(g), converged=int(g["convergence_s"].notna().sum()),
                         convergence_s=m, convergence_ci=h, cov_rate=c, cov_rate_ci=ch))
    tab = pd.DataFrame(rows)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(betas) + 1, figsize=(4 * len(betas) + 4, 3.8))
    for ax, b in zip(axes, betas):
        r = runs[runs.beta == b].sort_values("seed").iloc[0]
        ax.plot(r["u1"] / 1e6, lw=0.7, label="flow 1 (from 10 s)")
        ax.plot(np.arange(len(r["u2"])), r["u2"] / 1e6, lw=0.7, label="flow 2 (from 500 s)")
        ax.set_title(f"β = {b} s (paper Fig. {12 + betas.index(b)}), seed {r['seed']}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("1-s rate (Mbps)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    ax = axes[-1]
    ax.errorbar(tab["beta"], tab["convergence_s"], yerr=tab["convergence_ci"], fmt="o-", capsize=3,
                label="convergence time (s)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("β (s)")
    ax.set_ylabel("s after the second flow starts")
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.errorbar(tab["beta"], tab["cov_rate"], yerr=tab["cov_rate_ci"], fmt="s--", color="tab:green", capsize=3)
    ax2.set_ylabel("CoV of 1-s rates in 64 s", color="tab:green")
    table = "\n".join(f"| {r.beta:g} | {r.converged}/{r.seeds} | {r.convergence_s:.1f} ± {r.convergence_ci:.1f} | "
                      f"{r.cov_rate:.3f} ± {r.cov_rate_ci:.3f} |" for r in tab.itertuples())
    details = f"""
Paper (§V-D, Figs. 12-14): short TCP flows at 50% load, two TFCBR flows (α = 0.5) from
10 s and 500 s, β = 16, 64 and 256 s: "the larger the value of β, the smoother the
TFCBR rate; however, the longer the convergence time". The paper shows the rate
traces only (no numbers), so the check is the two orders, over {seeds} seeds of
{duration:g} s. (The issue's "β of 10 s and 500 s" reads the flows' start times as β
values; we follow the paper's text: starts at 10 s and 500 s, β ∈ {betas} s.)

Convergence: the first second after 500 s at which the two flows' 10-s mean rates are
within 10% of their mean. Smoothness: Fig. 19's measure (the CoV of the 1-s rates in
each 64-s window, averaged) of both flows after 1000 s.

| β (s) | converged | convergence (s, 95% CI) | CoV (95% CI) |
|---|---|---|---|
{table}
"""
    mark_figure(fig, claims, "Figs. 12-14: two TFCBR flows, the second from 500 s (ours)")
    return outcome(tab, fig, claims, intro=details,
                   what="convergence " + ", ".join(f"{r.convergence_s:.0f} ± {r.convergence_ci:.0f} s" for r in
                                                   tab.itertuples()) + f" for β = {betas} s")


# --------------------------------------------------------------------------- Figs. 21-23

def udp_tcp_claims(runs: pd.DataFrame) -> list:
    """§VI-C on Figs. 21-23, against TFRC at the same number of long flows."""
    runs = runs.assign(long_per_flow=runs["long_rate"] / runs["n_long"])
    tab = against_reference(runs, ["n_long"]).set_index(["protocol", "n_long"])
    ns = sorted(set(runs["n_long"]))
    per = lambda col, p, n: estimate(runs, col, fmt="{:.3g}", protocol=p, n_long=n)
    return [AllOf("TFCBR is STF-st for every number of long flows: its short flows' index is zero (Fig. 21)",
                  [Within(f"n = {n}", Estimate.const(float(tab.loc[("tfcbr", n), "stf_st_index"]), "{:.3f}"), hi=0.0)
                   for n in ns]),
            AllOf("the long TCP flows are faster with TFCBR than with TFRC (Fig. 23)",
                  [Greater(f"n = {n}", per("long_per_flow", "tfcbr", n), per("long_per_flow", "tfrc", n)) for n in ns]),
            AllOf("with RDTF the short flows are slower than with TFRC (Fig. 22) ...",
                  [Greater(f"n = {n}", per("tcp_mean_rate", "tfrc", n), per("tcp_mean_rate", "rdtf", n)) for n in ns]),
            AllOf("... and the long flows too, slightly (Fig. 23): RDTF is not STF-μ",
                  [Greater(f"n = {n}", per("long_per_flow", "tfrc", n), per("long_per_flow", "rdtf", n))
                   for n in ns])]


@reproduction("tfcbr-udp-tcp", paper=PAPER, figure="Figs. 21-23",
              title="Five UDP flows with one to five long-lived TCP flows and Poisson TCP at 30%", sizes=UDP_TCP_SIZES)
def tfcbr_udp_tcp(ctx: Context) -> Outcome:
    """Figs. 21-23 (§VI-C): STF-st index of the short flows, mean rate of short and long flows."""
    size = ctx.size
    ns, duration, warmup = size.axis("long TCP flows"), size.duration, size.warmup
    base = scenario(0.3, duration, warmup, n_udp=5, n_long_tcp=1)
    pts = protocols_points(base, "n_long", "traffic[long].count", ns)
    runs, claims = replicate(ctx, "packet", pts, measured, udp_tcp_claims, keep=(RATES,))
    runs["long_rate"] = runs["long_rate"] / runs["n_long"]
    tab = against_reference(runs, ["n_long"])
    lr = runs.groupby(["n_long", "protocol"])["long_rate"].apply(lambda x: mean_ci(x))
    tab["long_mean_rate"] = [lr[(r.n_long, r.protocol)][0] for r in tab.itertuples()]
    tab["long_mean_rate_ci"] = [lr[(r.n_long, r.protocol)][1] for r in tab.itertuples()]
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    _protocol_panels(list(axes), tab, "n_long", "long-lived TCP flows", (
        ("stf_st_index", None, "STF-st index, short flows (Fig. 21)"),
        ("tcp_mean_rate", "tcp_mean_rate_ci", "short flows' mean rate (Fig. 22)"),
        ("long_mean_rate", "long_mean_rate_ci", "long flows' mean rate (Fig. 23)")))
    table = "\n".join(f"| {r.protocol} | {r.n_long} | {r.stf_st_index:.3f} | {r.tcp_mean_rate / 1e6:.3f} ± "
                      f"{r.tcp_mean_rate_ci / 1e6:.3f} | {r.long_mean_rate / 1e6:.3f} ± {r.long_mean_rate_ci / 1e6:.3f}"
                      f" | {r.mean_rate / 5e6:.3f} |" for r in tab.itertuples())
    details = f"""
Paper (§VI-C, Figs. 21-23): five UDP flows, one to five long-lived TCP flows, Poisson
TCP at 30%: TFCBR's STF-st index of the short flows is always zero, and the long-lived
TCP flows' mean rate is higher with TFCBR than with TFRC in every case, so TFCBR is
STF-st; with RDTF both the short and (slightly) the long flows' mean rates are below
TFRC's: not STF-μ. No values are printed; the check is these orders at every n.

Ours: {int(tab['seeds'].min())}-{int(tab['seeds'].max())} seeds of {duration:g} s (the first {warmup:g} s excluded); rates in Mbps, 95% CI:

| protocol | n_long | STF-st index | short flows' mean rate | long flow's mean rate | UDP flow's mean rate |
|---|---|---|---|---|---|
{table}
"""
    mark_figure(fig, claims, "Figs. 21-23: five UDP flows beside long and short TCP flows (ours, 95% CI)")
    return outcome(tab, fig, claims, intro=details, tolerance=STF_TOLERANCE)
