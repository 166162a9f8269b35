"""Queuing and loss of ideally smooth senders at a highly multiplexed FIFO link.

Podlesny and Gorinsky, "Lower Bounds on Queuing and Loss at Highly Multiplexed Links",
Washington University in St. Louis, WUCSE-2007-42 (2007); "the paper" below.

N flows share a link of packet transmission time D (eq. 4); each sends one packet every
period T = N D / U (eq. 3), flow i starting at its arrival time t_i, with inter-arrival
times delta_i = t_i - t_{i-1} (eq. 1) drawn from a distribution psi of mean mu = D / U
(eq. 5): uniform on [0, 2 mu], exponential, or Pareto with index k (Fig. 2). Queuing comes
only from the asynchrony of the arrivals.

Two parts:

* The analysis of section IV: the probability theta(i) that the i-th packet of a period
  finds a queue longer than Q (eqs. 13/14), the coefficient A_psi (eq. 15), the constants
  L_theta and E_theta (eqs. 18, 21, solved exactly instead of the paper's rounded 1.1, 0.6,
  1.6, 1.15), and the lower and upper bounds Q_min, Q_max on the queue exceeded by the top
  fraction theta of packets (eqs. 19, 22; table of Fig. 3).
* The exact simulation of sections V-VI, computed by the Rust crate ``cclab-smooth``:
  arrival times reduced modulo T (eq. 23) so that the second period of 2N packets is the
  steady state, for an overprovisioned buffer (:func:`smooth_queue`) and for a drop-tail
  buffer (:func:`smooth_loss`), where periods are iterated until the workload at the period
  boundary repeats. :func:`steady_queue` does the same for arrival times you give.

Units: queue sizes are in packets, q = d / D (eq. 6), where d is the time a packet waits
before its transmission starts; they are fractional (a packet arriving half-way through
another's transmission finds q = 0.5). Simulation time is integer ticks, 2**20 ticks per D.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "DISTRIBUTIONS",
    "TICKS_PER_PACKET",
    "A_psi",
    "theta",
    "theta_mean",
    "L_theta",
    "E_theta",
    "queue_bounds",
    "queue_clt",
    "fig3_table",
    "period_ticks",
    "arrival_times",
    "smooth_queue",
    "smooth_loss",
    "steady_queue",
    "SmoothQueue",
    "SmoothLoss",
    "SteadyState",
]

#: Names of the inter-arrival distributions of Fig. 2 (Pareto takes its index ``k``).
DISTRIBUTIONS = ("uniform", "exponential", "pareto")

#: Ticks per packet transmission time D in the batch simulations (matches the Rust crate).
TICKS_PER_PACKET = 1 << 20

# Largest number of per-packet queue values one smooth_queue call may return (8 bytes each).
_MAX_VALUES = 200_000_000


# ----------------------------------------------------------------------------- checks

def _check_dist(dist) -> str:
    if not isinstance(dist, str) or dist.lower() not in DISTRIBUTIONS:
        raise ValueError(f"dist: must be one of {', '.join(map(repr, DISTRIBUTIONS))}, got {dist!r}")
    return dist.lower()


def _check_int(name: str, value, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: must be at most {maximum}, got {value}")
    return value


def _check_real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name}: must be a finite number, got {value!r}")
    return float(value)


def _check_utilization(utilization) -> float:
    u = _check_real("utilization", utilization)
    if not 0.0 < u <= 1.0:
        raise ValueError(f"utilization: must be in (0, 1] (paper section II), got {u}")
    return u


def _check_k(dist: str, k, *, analysis: bool) -> float:
    kk = _check_real("k", k)
    if dist == "pareto":
        if analysis and kk <= 2.0:
            raise ValueError(f"k: the CLT analysis (eqs. 13-15) needs a finite variance, i.e. k > 2, got {kk}")
        if kk <= 1.0:
            raise ValueError(f"k: the Pareto index must exceed 1 for the mean D/U to exist, got {kk}")
    return kk


def _check_fraction(name: str, value, upper: float) -> float:
    v = _check_real(name, value)
    if not 0.0 < v < upper:
        raise ValueError(f"{name}: must be in (0, {upper:g}), got {v}")
    return v


# ----------------------------------------------------------------------------- analysis (section IV)

def _sigma_over_mu(dist: str, k: float) -> float:
    """sigma / mu of the inter-arrival time (Fig. 2)."""
    if dist == "uniform":
        return math.sqrt(1.0 / 3.0)
    if dist == "exponential":
        return 1.0
    return math.sqrt(1.0 / (k * (k - 2.0)))


def A_psi(dist: str, k: float = 2.1) -> float:
    """Coefficient A_psi of eq. 15: sqrt(2/3), sqrt(2), sqrt(2/(k(k-2))).

    It is sigma sqrt(2) / D at U = 1 (eqs. 13-14 with the moments of Fig. 2).

    dist: "uniform", "exponential" or "pareto".
    k: Pareto index; must exceed 2 (finite variance). Ignored for the other distributions.
    """
    d = _check_dist(dist)
    kk = _check_k(d, k, analysis=True)
    return math.sqrt(2.0) * _sigma_over_mu(d, kk)


def theta(i, q, dist: str, k: float = 2.1, utilization: float = 1.0):
    """Probability theta(i) that the i-th packet of a period finds a queue longer than q.

    Eq. 13 with the moments of Fig. 2 (D = 1, mu = 1/U, sigma = (sigma/mu) mu); at U = 1 it
    is eq. 14, theta(i) = (1 - erf(q / (A_psi sqrt(i)))) / 2. It assumes q_0 = 0 (eq. 12).

    i: packet index within the period, >= 1 (scalar or array).
    q: queue size in packets (scalar or array, broadcast with i).
    dist: "uniform", "exponential" or "pareto".
    k: Pareto index (> 2).
    utilization: U in (0, 1]; eq. 13 holds for any U, eq. 14 is its U = 1 case.
    """
    from scipy.special import erf

    d = _check_dist(dist)
    kk = _check_k(d, k, analysis=True)
    u = _check_utilization(utilization)
    ii = np.asarray(i, dtype=float)
    if np.any(~np.isfinite(ii)) or np.any(ii < 1):
        raise ValueError("i: packet indices must be >= 1")
    qq = np.asarray(q, dtype=float)
    if np.any(~np.isfinite(qq)):
        raise ValueError("q: must be finite")
    mu = 1.0 / u
    sigma = _sigma_over_mu(d, kk) * mu
    out = 0.5 * (1.0 - erf(((qq - ii) + ii * mu) / (sigma * np.sqrt(2.0 * ii))))
    return float(out) if np.ndim(out) == 0 else out


def theta_mean(q, n: int, dist: str, k: float = 2.1, utilization: float = 1.0):
    """Fraction of packets finding a queue longer than q: the average of theta(i), eq. 16.

    q: queue size in packets (scalar).
    n: number of flows N (>= 1).
    dist, k, utilization: as in :func:`theta`.
    """
    n = _check_int("n", n, 1)
    return float(np.mean(theta(np.arange(1, n + 1), _check_real("q", q), dist, k, utilization)))


def L_theta(theta: float) -> float:
    """L_theta of eq. 18, solved exactly: erf(L sqrt(3/2)) = 1 - 6 theta.

    The paper rounds L_1% to 1.1 and L_5% to 0.6.

    theta: fraction of top packets, 0 < theta < 1/6 (else 1 - 6 theta is not in (0, 1)).
    """
    from scipy.special import erfinv

    t = _check_fraction("theta", theta, 1.0 / 6.0)
    return float(erfinv(1.0 - 6.0 * t) / math.sqrt(1.5))


def E_theta(theta: float) -> float:
    """E_theta of eq. 21, solved exactly: erf(E) = 1 - 2 theta.

    The paper rounds E_1% to 1.6 and E_5% to 1.15.

    theta: fraction of top packets, 0 < theta < 1/2.
    """
    from scipy.special import erfinv

    t = _check_fraction("theta", theta, 0.5)
    return float(erfinv(1.0 - 2.0 * t))


def queue_bounds(n: int, theta: float, dist: str, k: float = 2.1) -> tuple[float, float]:
    """Bounds (Q_min, Q_max) on the queue exceeded by the top fraction theta of packets.

    Q_min = L_theta A_psi sqrt(N) (eq. 19, from inequality 17) and Q_max = E_theta A_psi
    sqrt(N) (eq. 22, from inequality 20), for a fully utilized link (U = 1) with an
    overprovisioned buffer. Theorem 1: the queue is O(sqrt(N)).

    n: number of flows N (>= 1; the CLT argument of section IV wants N >= 20).
    theta: fraction of top packets, 0 < theta < 1/6.
    dist: "uniform", "exponential" or "pareto".
    k: Pareto index (> 2).
    """
    n = _check_int("n", n, 1)
    a = A_psi(dist, k)
    root = math.sqrt(n)
    return L_theta(theta) * a * root, E_theta(theta) * a * root


def queue_clt(n: int, theta: float, dist: str, k: float = 2.1, utilization: float = 1.0) -> float:
    """Queue Q exceeded by the top fraction theta of packets under the CLT model itself.

    Solves eq. 16, mean_i theta(i) = theta, for Q instead of bounding it (inequalities 17 and
    20 give Q_min <= Q <= Q_max at U = 1). Still assumes q_0 = 0 (eq. 12).

    n: number of flows N (>= 1).
    theta: fraction of top packets, 0 < theta < 1/2.
    dist, k, utilization: as in :func:`theta`.
    """
    from scipy.optimize import brentq

    n = _check_int("n", n, 1)
    t = _check_fraction("theta", theta, 0.5)
    i = np.arange(1, n + 1)
    f = lambda q: float(np.mean(theta_fn(i, q, dist, k, utilization))) - t  # noqa: E731
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
    lo = -float(n)
    if f(lo) < 0:
        return lo
    return float(brentq(f, lo, hi, xtol=1e-9))


theta_fn = theta  # the function, for code where a parameter named theta shadows it


def fig3_table(thetas=(0.01, 0.05), k: float = 2.1):
    """The table of Fig. 3: coefficients c with Q_min = c sqrt(N) (and Q_max = c' sqrt(N)).

    Returns a DataFrame with one row per (distribution, theta): A_psi, L_theta, E_theta,
    the Q_min and Q_max coefficients, and the paper's printed Q_min coefficient where the
    paper gives one (0.89, 0.49 uniform; 1.54, 0.85 exponential; 1.54/sqrt(k(k-2)),
    0.85/sqrt(k(k-2)) Pareto).

    thetas: fractions of top packets, each in (0, 1/6).
    k: Pareto index (> 2).
    """
    import pandas as pd

    paper = {("uniform", 0.01): 0.89, ("uniform", 0.05): 0.49, ("exponential", 0.01): 1.54,
             ("exponential", 0.05): 0.85}
    rows = []
    for d in DISTRIBUTIONS:
        a = A_psi(d, k)
        for t in thetas:
            lt, et = L_theta(t), E_theta(t)
            if d == "pareto":
                base = paper.get(("exponential", t))
                printed = None if base is None else base / math.sqrt(k * (k - 2.0))
            else:
                printed = paper.get((d, t))
            rows.append({"dist": d, "k": k if d == "pareto" else None, "theta": t, "A_psi": a,
                         "L_theta": lt, "E_theta": et, "qmin_coef": lt * a, "qmax_coef": et * a,
                         "paper_qmin_coef": printed})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- exact method (sections V-VI)

def _core():
    try:
        from cclab import _core
    except ImportError as exc:  # pragma: no cover - depends on the build
        raise ImportError("cclab._core is not built; run `make install` (maturin develop --release)") from exc
    if not hasattr(_core, "smooth_queue_runs"):  # pragma: no cover
        raise ImportError("cclab._core lacks the smooth-queue functions; rebuild it (maturin develop --release)")
    return _core


def period_ticks(n: int, utilization: float = 1.0, ticks_per_packet: int = TICKS_PER_PACKET) -> int:
    """Period T = N D / U (eq. 3) in integer ticks, as the simulations use it.

    Exactly N D at U = 1; otherwise rounded half away from zero, never below N D.

    n: number of flows N (>= 1).
    utilization: U in (0, 1].
    ticks_per_packet: D in ticks (>= 1).
    """
    n = _check_int("n", n, 1)
    u = _check_utilization(utilization)
    tpp = _check_int("ticks_per_packet", ticks_per_packet, 1)
    work = n * tpp
    if u == 1.0:
        return work
    x = float(work) / u
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1
    return max(int(r), work)


def arrival_times(n: int, dist: str, utilization: float = 1.0, seed: int = 0, run: int = 0, k: float = 2.1,
                  ticks_per_packet: int = TICKS_PER_PACKET) -> np.ndarray:
    """Flow arrival times t_1 = 0 <= t_2 <= ... of run ``run`` in integer ticks (eqs. 1, 7).

    They are the draws :func:`smooth_queue` and :func:`smooth_loss` use for that run (each
    inter-arrival time is rounded to a tick, so another ``ticks_per_packet`` rescales them).
    To feed a packet-level engine that counts nanoseconds, pass ``ticks_per_packet`` = D in
    ns and use ``period_ticks(n, utilization, D_ns)`` as the sending period.

    n: number of flows N (>= 1).
    dist: "uniform", "exponential" or "pareto".
    utilization: U in (0, 1]; the mean inter-arrival time is D/U (eq. 5).
    seed: base seed (0 <= seed < 2**64).
    run: run number; run r of a batch uses RNG stream (seed, r).
    k: Pareto index (> 1).
    ticks_per_packet: D in ticks (>= 1).
    """
    n = _check_int("n", n, 1)
    d = _check_dist(dist)
    kk = _check_k(d, k, analysis=False)
    u = _check_utilization(utilization)
    seed = _check_int("seed", seed, 0, 2**64 - 1)
    run = _check_int("run", run, 0, 2**63 - 1)
    tpp = _check_int("ticks_per_packet", ticks_per_packet, 1, 2**40)
    return _core().smooth_arrivals(n, d, kk, u, seed, run, tpp)


@dataclass
class SmoothQueue:
    """Steady-state queue sizes of :func:`smooth_queue` (overprovisioned buffer, section V).

    queues: array (runs, n) of queue sizes in packets (eq. 6), each row in order of arrival
        within the steady-state period.
    The other fields echo the arguments.
    """

    n: int
    dist: str
    k: float
    utilization: float
    runs: int
    seed: int
    queues: np.ndarray = field(repr=False)

    def percentile(self, p):
        """Percentile(s) ``p`` (0-100) over the pooled packets of all runs (the paper's CDFs)."""
        return np.percentile(self.queues, p)

    def top(self, fraction: float) -> float:
        """Queue size exceeded by the top ``fraction`` of pooled packets (Figs. 7, 9): the
        (1 - fraction) quantile.

        fraction: in (0, 1), e.g. 0.01 for the top 1% packets.
        """
        f = _check_fraction("fraction", fraction, 1.0)
        return float(np.percentile(self.queues, 100.0 * (1.0 - f)))

    def top_per_run(self, fraction: float) -> np.ndarray:
        """Per-run (1 - fraction) quantile: one value per run, for run-to-run spread.

        fraction: in (0, 1).
        """
        f = _check_fraction("fraction", fraction, 1.0)
        return np.percentile(self.queues, 100.0 * (1.0 - f), axis=1)

    def cdf(self, points: int = 501) -> tuple[np.ndarray, np.ndarray]:
        """(queue, probability) of the pooled CDF at ``points`` evenly spaced probabilities.

        points: number of points (>= 2).
        """
        points = _check_int("points", points, 2)
        prob = np.linspace(0.0, 1.0, points)
        return np.quantile(self.queues, prob), prob

    @property
    def waiting_packets(self) -> np.ndarray:
        """Whole packets waiting ahead of each packet, not counting the one in transmission:
        ceil(q) - 1 for q > 0, else 0 (what a packet-counting queue monitor would show)."""
        return np.maximum(np.ceil(self.queues) - 1.0, 0.0)


def smooth_queue(n: int, dist: str, utilization: float = 1.0, runs: int = 1000, seed: int = 0, k: float = 2.1,
                 threads: int = 0) -> SmoothQueue:
    """Exact steady-state queue of N ideally smooth flows with an overprovisioned buffer.

    The method of section V: arrival times reduced modulo T (eq. 23), two packets per flow,
    the second period's waits are the steady state exactly (eq. 6 turns them into packets).
    Each run draws fresh arrivals (t_1 = 0, eq. 7) from RNG stream (seed, run), so results
    are deterministic given the seed and independent of ``threads``.

    n: number of flows N (>= 1).
    dist: "uniform", "exponential" or "pareto" (Fig. 2, mean D/U, eq. 5).
    utilization: U in (0, 1].
    runs: number of independent runs (>= 1); the paper uses 1,000.
    seed: base seed (0 <= seed < 2**64).
    k: Pareto index (> 1; k < 2 allowed, e.g. 1.8 as in Fig. 5).
    threads: worker threads (0: all cores).
    """
    n = _check_int("n", n, 1)
    d = _check_dist(dist)
    kk = _check_k(d, k, analysis=False)
    u = _check_utilization(utilization)
    runs = _check_int("runs", runs, 1)
    if n * runs > _MAX_VALUES:
        raise ValueError(f"runs: n * runs = {n * runs} queue values exceed the limit of {_MAX_VALUES}")
    seed = _check_int("seed", seed, 0, 2**64 - 1)
    threads = _check_int("threads", threads, 0, 4096)
    flat = _core().smooth_queue_runs(n, d, kk, u, runs, seed, threads)
    return SmoothQueue(n, d, kk, u, runs, seed, flat.reshape(runs, n))


@dataclass
class SmoothLoss:
    """Steady-state loss of :func:`smooth_loss` (drop-tail buffer, section VI).

    losses: per-run loss rate (dropped / sent over the repeating pattern).
    periods: per-run number of periods simulated until the boundary workload repeated.
    cycles: per-run length of the repeating pattern in periods.
    converged: per-run flag; False if ``max_periods`` was reached first.
    max_queue: per-run largest steady-state queue (packets) of an accepted packet.
    The other fields echo the arguments.
    """

    n: int
    dist: str
    k: float
    utilization: float
    buffer: int
    runs: int
    seed: int
    losses: np.ndarray = field(repr=False)
    periods: np.ndarray = field(repr=False)
    cycles: np.ndarray = field(repr=False)
    converged: np.ndarray = field(repr=False)
    max_queue: np.ndarray = field(repr=False)

    @property
    def loss(self) -> float:
        """Loss rate over all runs (every run sends the same number of packets)."""
        return float(np.mean(self.losses))

    @property
    def stderr(self) -> float:
        """Standard error of :attr:`loss` across runs."""
        if self.runs < 2:
            return float("nan")
        return float(np.std(self.losses, ddof=1) / math.sqrt(self.runs))


def smooth_loss(n: int, dist: str, buffer: int, utilization: float = 1.0, runs: int = 1000, seed: int = 0,
                k: float = 2.1, max_periods: int = 1000, threads: int = 0) -> SmoothLoss:
    """Steady-state loss rate of N ideally smooth flows with a drop-tail buffer (section VI).

    A packet is dropped when it would find more than ``buffer`` packets waiting besides the
    one in transmission, i.e. when its queue size (eq. 6) would exceed ``buffer``. With
    drops the pattern need not settle in one period, so periods are iterated from an empty
    link until the workload at the period boundary repeats (exactly: time is integer).
    Same arrivals as :func:`smooth_queue` for the same seed and run.

    n: number of flows N (>= 1).
    dist: "uniform", "exponential" or "pareto".
    buffer: buffer size B in packets (>= 0).
    utilization: U in (0, 1].
    runs: number of independent runs (>= 1).
    seed: base seed (0 <= seed < 2**64).
    k: Pareto index (> 1).
    max_periods: give up on a run after this many periods (>= 1); see ``converged``.
    threads: worker threads (0: all cores).
    """
    n = _check_int("n", n, 1)
    d = _check_dist(dist)
    kk = _check_k(d, k, analysis=False)
    buffer = _check_int("buffer", buffer, 0, 2**62)
    u = _check_utilization(utilization)
    runs = _check_int("runs", runs, 1)
    seed = _check_int("seed", seed, 0, 2**64 - 1)
    max_periods = _check_int("max_periods", max_periods, 1, 2**32 - 1)
    threads = _check_int("threads", threads, 0, 4096)
    loss, periods, cycles, conv, mq = _core().smooth_loss_runs(n, d, kk, u, buffer, runs, seed, max_periods, threads)
    return SmoothLoss(n, d, kk, u, buffer, runs, seed, loss, periods, cycles, conv, mq)


@dataclass
class SteadyState:
    """Steady state of :func:`steady_queue` for given arrival times; per-flow arrays follow
    the order of the arrivals given.

    wait: time each flow's packet waits before its transmission starts, in ticks (-1 if
        the packet is dropped in the steady state).
    queue: wait / packet_time, the queue size in packets (eq. 6); NaN if dropped.
    phase: t_i mod T in ticks (eq. 23): when in each period the flow's packet arrives.
    periods, cycle, drops, converged: as in :class:`SmoothLoss` (drops over the cycle).
    loss: drops / (cycle * n).
    boundary: workload at the period boundary in the steady state, in packets (q_0, eq. 12).
    """

    wait: np.ndarray
    queue: np.ndarray
    phase: np.ndarray
    periods: int
    cycle: int
    drops: int
    loss: float
    converged: bool
    boundary: float


def steady_queue(arrivals, period: int, packet_time: int, buffer: int | None = None,
                 max_periods: int = 1000) -> SteadyState:
    """Exact steady state of a FIFO link fed by flows with given arrival times.

    Flow i sends one packet every ``period`` ticks starting at ``arrivals[i]``; the link
    transmits one packet per ``packet_time`` ticks. Arrival times are reduced modulo the
    period (eq. 23) and periods are simulated from an empty link until the workload at the
    period boundary repeats (2 periods suffice without drops: the 2N-packet method).
    Packets with equal phases are served in the order of ``arrivals``. All arithmetic is on
    integers, so a packet-level simulator running on the same integer clock (e.g. ns) must
    reproduce ``wait`` exactly for every packet after its transient.

    arrivals: 1-D array of N integer arrival times (ticks, any order, may exceed period).
    period: T in ticks; must be at least N * packet_time (utilization <= 1).
    packet_time: D in ticks (>= 1).
    buffer: None for an overprovisioned buffer, else the drop-tail limit B in packets
        (drop when more than B packets wait besides the one in transmission).
    max_periods: give up after this many periods (>= 1); see ``converged``.
    """
    a = np.asarray(arrivals)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("arrivals: must be a non-empty 1-D array of integer ticks")
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise ValueError(f"arrivals: must be integer ticks, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > 2**63 - 1:
        raise ValueError("arrivals: values must fit in 64-bit signed integers")
    a = np.ascontiguousarray(a, dtype=np.int64)
    period = _check_int("period", period, 1, 2**62)
    packet_time = _check_int("packet_time", packet_time, 1, 2**62)
    if a.size * packet_time > period:
        raise ValueError(f"period: must be at least N * packet_time = {a.size * packet_time} ticks "
                         f"(utilization <= 1), got {period}")
    if buffer is not None:
        buffer = _check_int("buffer", buffer, 0, 2**62)
    max_periods = _check_int("max_periods", max_periods, 1, 2**32 - 1)
    wait, phase, periods, cycle, drops, conv, boundary = _core().smooth_steady(a, period, packet_time, buffer,
                                                                               max_periods)
    queue = np.where(wait >= 0, wait / packet_time, np.nan)
    return SteadyState(wait, queue, phase, int(periods), int(cycle), int(drops),
                       drops / (cycle * a.size), bool(conv), boundary / packet_time)
