"""The exact method of sections V-VI of the lower-bounds paper (Podlesny and Gorinsky,
WUCSE-2007-42), computed by the Rust core, against a direct event-by-event FIFO simulation
of many periods, and against the paper's claims (sqrt(N) growth, utilization, loss)."""
import math
from collections import deque

import numpy as np
import pytest

from cclab.theory import lower_bounds as lb

core = pytest.importorskip("cclab._core")
if not hasattr(core, "smooth_queue_runs"):  # pragma: no cover
    pytest.skip("cclab._core built without the smooth functions", allow_module_level=True)


def fifo_reference(arrivals, period, packet_time, buffer=None):
    """Direct event-by-event FIFO link fed by the flows with their ORIGINAL arrival times.

    Flow i sends a packet at t_i + j T for j = 0, 1, ... The link serves packets one at a time
    in arrival order (ties in flow order), each for ``packet_time``; with a buffer, a packet
    finding ``buffer`` packets waiting besides the one in transmission is dropped. Returns, for
    each flow, the wait (-1 if dropped) of its single packet in the window [S, S + T), where
    S = max t_i + 3T lies well past the transient. All earlier packets are simulated, so
    every packet in the window sees exactly its real predecessors.
    """
    n = len(arrivals)
    start = int(max(arrivals)) + 3 * period
    events = []
    for i, t in enumerate(arrivals):
        t = int(t)
        while t < start + period:
            events.append((t, i))
            t += period
    events.sort()
    in_system = deque()  # departure times of the packets in the link, FIFO
    window = {}
    for time, i in events:
        while in_system and in_system[0] <= time:
            in_system.popleft()
        dropped = buffer is not None and in_system and len(in_system) - 1 >= buffer
        if dropped:
            wait = -1
        else:
            begin = max(time, in_system[-1]) if in_system else time
            in_system.append(begin + packet_time)
            wait = begin - time
        if time >= start:
            window[i] = wait
    return np.array([window[i] for i in range(n)])


CASES = [("uniform", 2.1, 1.0), ("exponential", 2.1, 1.0), ("pareto", 2.1, 1.0), ("pareto", 1.8, 1.0),
         ("exponential", 2.1, 0.8), ("pareto", 2.5, 0.6)]


@pytest.mark.parametrize("dist, k, u", CASES)
def test_exact_method_equals_event_simulation(dist, k, u):
    tpp = 1000
    for run in range(8):
        n = 12 + 5 * run
        arr = lb.arrival_times(n, dist, u, seed=3, run=run, k=k, ticks_per_packet=tpp)
        period = lb.period_ticks(n, u, tpp)
        st = lb.steady_queue(arr, period, tpp)
        assert st.converged and st.periods <= 2 and st.drops == 0
        np.testing.assert_array_equal(st.wait, fifo_reference(arr, period, tpp))
        assert np.array_equal(st.phase, arr % period)


@pytest.mark.parametrize("buffer", [0, 1, 3, 6])
def test_finite_buffer_equals_event_simulation(buffer):
    tpp = 1000
    for run, (dist, k, u) in enumerate(CASES):
        n = 40
        arr = lb.arrival_times(n, dist, u, seed=11, run=run, k=k, ticks_per_packet=tpp)
        period = lb.period_ticks(n, u, tpp)
        st = lb.steady_queue(arr, period, tpp, buffer=buffer)
        assert st.converged and st.cycle == 1
        ref = fifo_reference(arr, period, tpp, buffer=buffer)
        np.testing.assert_array_equal(st.wait, ref)
        assert st.drops == int(np.sum(ref < 0))


def test_ties_and_wide_spread_by_hand():
    # Spread of arrivals larger than the period, and equal phases (flow 0 and 2 both at 0).
    arr = np.array([0, 7, 20, 3, 7])
    st = lb.steady_queue(arr, 10, 2)
    np.testing.assert_array_equal(st.wait, fifo_reference(arr, 10, 2))
    # Phases 0, 7, 0, 3, 7 (flows 0..4), T = 10, D = 2; service order f0, f2, f3, f1, f4.
    # Period 1 from an empty link: waits f0 0, f2 2, f3 1, f1 0, f4 2, and 1 tick of work left
    # at the boundary. Period 2 starts with that tick: f0 1, f2 3, f3 2, f1 0, f4 2, and 1
    # tick left again: the steady state (work per period = 10 = T).
    np.testing.assert_array_equal(st.wait, [1, 0, 3, 2, 2])
    assert st.boundary == pytest.approx(0.5) and st.periods == 2


def test_batch_equals_explicit_arrivals():
    n, u = 400, 0.9
    sq = lb.smooth_queue(n, "pareto", utilization=u, runs=3, seed=7, k=1.8)
    arr = lb.arrival_times(n, "pareto", u, seed=7, run=2, k=1.8)
    st = lb.steady_queue(arr, lb.period_ticks(n, u), lb.TICKS_PER_PACKET)
    order = np.lexsort((np.arange(n), st.phase))
    np.testing.assert_array_equal(sq.queues[2], st.queue[order])


def test_deterministic_given_seed_and_threads():
    a = lb.smooth_queue(500, "exponential", runs=6, seed=5, threads=1).queues
    b = lb.smooth_queue(500, "exponential", runs=6, seed=5, threads=2).queues
    c = lb.smooth_queue(500, "exponential", runs=6, seed=6).queues
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    la = lb.smooth_loss(500, "exponential", 5, runs=6, seed=5, threads=1).losses
    lb2 = lb.smooth_loss(500, "exponential", 5, runs=6, seed=5, threads=2).losses
    assert np.array_equal(la, lb2)


def test_queue_grows_as_sqrt_n():
    # Theorem 1 (eq. 19): top-1 % queue ~ sqrt(N) at U = 1; fit over N = 100 ... 100,000. Runs
    # are kept >= 40 because one run's top-1 % is a random multiple of sqrt(N): with these sizes
    # the fitted slope varies by about +-0.03 between seeds.
    ns = np.array([100, 300, 1000, 3000, 10_000, 30_000, 100_000])
    for dist in ("uniform", "exponential"):
        q = [lb.smooth_queue(int(n), dist, runs=max(40, 2_000_000 // int(n)), seed=0).top(0.01) for n in ns]
        slope = np.polyfit(np.log(ns), np.log(q), 1)[0]
        assert 0.45 <= slope <= 0.55, (dist, slope, q)


def test_pareto_2_1_stays_under_the_sqrt_n_envelope():
    # Pareto k = 2.1 approaches the CLT regime slowly (its slope over this range is 0.54-0.66
    # depending on the seed), but it stays below Q_max = E_1% A_psi sqrt(N) (eq. 22).
    for n in (100, 1000, 10_000, 100_000):
        top = lb.smooth_queue(n, "pareto", runs=max(40, 2_000_000 // n), seed=0).top(0.01)
        assert top < lb.queue_bounds(n, 0.01, "pareto")[1], (n, top)


def test_reduced_utilization_reduces_queuing():
    for dist in ("uniform", "exponential", "pareto"):
        tops, means = [], []
        for u in (1.0, 0.95, 0.75, 0.5, 0.2):
            sq = lb.smooth_queue(1000, dist, utilization=u, runs=200, seed=2)
            tops.append(sq.top(0.01))
            means.append(sq.queues.mean())
        assert np.all(np.diff(tops) < 0) and np.all(np.diff(means) < 0), (dist, tops, means)


def test_fig9_values_printed_in_the_paper():
    # Section V, Fig. 9 (N = 1000): top-1 % queue at U = 0.95, 0.75, 0.5 is 25/49/75,
    # 9/20/34 and 2/5/5 packets (uniform/exponential/Pareto 2.1). The pooled 99th percentile
    # of 1000 runs varies by 3-7 % (1 sigma) from seed to seed, since packets of one run are
    # strongly correlated; two independent 1000-run estimates (ours and the paper's) should
    # therefore agree within 20 % (about 3 sigma of their difference) or 1 packet.
    # Pareto 2.1 is the exception: its 1000-run estimate spreads by about 10 % (1 sigma)
    # with a long right tail (8 seeds at U = 0.95: 75-102, mean 84), so for it we take
    # the median of 5 independent 1000-run estimates, which is as stable as one
    # uniform or exponential estimate.
    paper = {0.95: (25, 49, 75), 0.75: (9, 20, 34), 0.5: (2, 5, 5)}
    for u, values in paper.items():
        for dist, want in zip(("uniform", "exponential", "pareto"), values):
            seeds = range(5) if dist == "pareto" else [0]
            got = float(np.median([lb.smooth_queue(1000, dist, utilization=u, runs=1000, seed=s).top(0.01)
                                   for s in seeds]))
            assert abs(got - want) <= max(1.0, 0.2 * want), (u, dist, got, want)


def test_no_loss_iff_buffer_holds_the_largest_queue():
    # With drop-tail B, a run loses packets exactly when its overprovisioned queue exceeds B
    # somewhere: without drops both systems coincide.
    n, runs = 800, 40
    for dist in ("uniform", "exponential", "pareto"):
        peak = lb.smooth_queue(n, dist, runs=runs, seed=8).queues.max(axis=1)
        for b in (5, 20, int(np.median(peak)), int(math.ceil(peak.max()))):
            sl = lb.smooth_loss(n, dist, b, runs=runs, seed=8)
            assert np.all(sl.converged)
            np.testing.assert_array_equal(sl.losses > 0, peak > b)
        assert lb.smooth_loss(n, dist, int(math.ceil(peak.max())), runs=runs, seed=8).loss == 0.0


def test_loss_is_a_count_of_dropped_packets_and_falls_with_buffer():
    n, runs = 500, 50
    prev = 1.0
    for b in (0, 2, 5, 10, 20, 40):
        sl = lb.smooth_loss(n, "exponential", b, runs=runs, seed=9)
        drops = sl.losses * n * sl.cycles
        np.testing.assert_allclose(drops, np.round(drops), atol=1e-9)
        assert np.all(sl.max_queue <= b + 1e-12)
        assert sl.loss < prev
        prev = sl.loss
    # Lower utilization, fewer losses (Fig. 11).
    assert lb.smooth_loss(n, "exponential", 10, utilization=0.7, runs=runs, seed=9).loss < \
        lb.smooth_loss(n, "exponential", 10, runs=runs, seed=9).loss


@pytest.mark.parametrize("call, arg", [
    (lambda: lb.smooth_queue(0, "uniform"), "n"),
    (lambda: lb.smooth_queue(10, "normal"), "dist"),
    (lambda: lb.smooth_queue(10, "pareto", k=1.0), "k"),
    (lambda: lb.smooth_queue(10, "uniform", utilization=0), "utilization"),
    (lambda: lb.smooth_queue(10, "uniform", utilization=1.01), "utilization"),
    (lambda: lb.smooth_queue(10, "uniform", runs=0), "runs"),
    (lambda: lb.smooth_queue(10, "uniform", seed=-1), "seed"),
    (lambda: lb.smooth_queue(10, "uniform", threads=-1), "threads"),
    (lambda: lb.smooth_queue(10**6, "uniform", runs=10**6), "runs"),
    (lambda: lb.smooth_loss(10, "uniform", -1), "buffer"),
    (lambda: lb.smooth_loss(10, "uniform", 2.5), "buffer"),
    (lambda: lb.smooth_loss(10, "uniform", 2, max_periods=0), "max_periods"),
    (lambda: lb.steady_queue([0, 1], 1, 1), "period"),
    (lambda: lb.steady_queue([0.5, 1], 10, 1), "arrivals"),
    (lambda: lb.steady_queue([], 10, 1), "arrivals"),
    (lambda: lb.steady_queue([0, 1], 10, 0), "packet_time"),
    (lambda: lb.steady_queue([0, 1], 10, 1, buffer=-2), "buffer"),
    (lambda: lb.arrival_times(10, "uniform", run=-1), "run"),
])
def test_bad_arguments_name_the_argument(call, arg):
    with pytest.raises(ValueError, match=rf"^{arg}:"):
        call()


def test_core_errors_are_value_errors_naming_the_argument():
    with pytest.raises(ValueError, match="^k:"):
        core.smooth_queue_runs(10, "pareto", 0.5, 1.0, 1, 0)
    with pytest.raises(ValueError, match="^dist:"):
        core.smooth_queue_runs(10, "weibull", 2.0, 1.0, 1, 0)
    with pytest.raises(ValueError, match="^period:"):
        core.smooth_steady(np.array([0, 1, 2], dtype=np.int64), 2, 1, None, 10)
