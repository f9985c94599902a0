"""Packet-level multi-resource fair queueing in a router (Bonald and Roberts, Section 3).

A router has J resources (e.g. a processing middlebox, then the output link) visited in order; a
packet of a flow of class k occupies resource j for ``a_kj`` time units (capacity 1; resources
with ``a_kj = 0`` are skipped). Each flow keeps a window of W packets: packet k is admitted when
packet ``k - W`` has left every resource (Section 3.1), so a flow holds at most W packets inside
the router. Every resource serves its queue non-preemptively in increasing order of start tags
(start-time fair queueing, SFQ; ties by admission order):

* ``drfq`` -- memoryless DRFQ (eq. 2): one tag per packet, set at admission,
  ``S_i^k = max(V(u_i^k), S_i^{k-1} + max_j a_ij)``, where ``V`` is the largest start tag of any
  packet to have begun service at any resource;
* ``pf`` -- PF by SFQ with weights from queue occupancy (eq. 5): per resource,
  ``S_ij^k = max(V_j(u_ij^k), S_ij^{k-1} + a_ij / Q_ij)``, with ``Q_ij`` the number of flow-i
  packets waiting or in service at j (the arriving packet included) and ``V_j`` the start tag of the
  last packet to have begun service at j;
* ``bmf`` -- BMF by SFQ (eq. 7): per resource, ``S_ij^k = max(V_j(u_ij^k), S_ij^{k-1} + a_ij)``.
  Eq. 7 writes the router arrival time ``u_i^k``; we evaluate ``V_j`` when the packet reaches
  resource j, as SFQ does (the two coincide on the first resource).

Flows arrive as given by the caller (:func:`flow_arrivals` draws Poisson arrivals and geometric
sizes). The event loop is compiled with numba, cached in the user's cache directory or in
``NUMBA_CACHE_DIR`` (:func:`cache_dir`; compiled in memory when it is not writable). Randomness is
drawn outside the compiled code from a :class:`numpy.random.Generator`, so runs are reproducible
from a
``SeedSequence``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from fairsim.errors import ConfigError

logger = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where numba keeps the compiled loop: ``NUMBA_CACHE_DIR`` if set, else the user's cache
    directory (``$XDG_CACHE_HOME`` or ``~/.cache``) under ``fairsim/numba`` — never next to the
    installed package, whose folder may be read-only."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fairsim" / "numba"


def _can_cache() -> bool:
    """Whether numba can write its cache into :func:`cache_dir` (created if needed).

    Where it cannot, the loop is compiled in memory at first use instead of failing.
    """
    where = cache_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(where, os.W_OK)


_CACHE = _can_cache()
if _CACHE:
    numba.config.CACHE_DIR = str(cache_dir())  # type: ignore[attr-defined]  # read by the decorators below

#: Packet scheduling algorithms and their codes in the compiled loop.
ALGORITHMS = {"drfq": 0, "pf": 1, "bmf": 2}
#: The fluid allocation each packet algorithm approximates.
FLUID = {"drfq": "drf", "pf": "pf", "bmf": "bmf"}


@numba.njit(cache=_CACHE)
def _put(
    tag: np.ndarray, seq: np.ndarray, slot: np.ndarray, j: int, i: int, t: float, q: int, s: int
) -> None:
    """Write the entry (t, q, s) at position i of resource j's heap."""
    tag[j, i] = t
    seq[j, i] = q
    slot[j, i] = s


@numba.njit(cache=_CACHE)
def _push(
    tag: np.ndarray,
    seq: np.ndarray,
    slot: np.ndarray,
    size: np.ndarray,
    j: int,
    t: float,
    q: int,
    s: int,
) -> None:
    """Push (t, q, s) into the binary min-heap of resource j (key: tag, then sequence)."""
    i = size[j]
    size[j] = i + 1
    while i > 0:
        p = (i - 1) >> 1
        if tag[j, p] < t or (tag[j, p] == t and seq[j, p] < q):
            break
        _put(tag, seq, slot, j, i, tag[j, p], seq[j, p], slot[j, p])
        i = p
    _put(tag, seq, slot, j, i, t, q, s)


@numba.njit(cache=_CACHE)
def _pop(
    tag: np.ndarray, seq: np.ndarray, slot: np.ndarray, size: np.ndarray, j: int
) -> tuple[float, int]:
    """Pop the smallest entry of resource j's heap; returns (tag, slot)."""
    t0 = tag[j, 0]
    s0 = slot[j, 0]
    n = size[j] - 1
    size[j] = n
    if n > 0:
        t = tag[j, n]
        q = seq[j, n]
        s = slot[j, n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and (
                tag[j, c + 1] < tag[j, c]
                or (tag[j, c + 1] == tag[j, c] and seq[j, c + 1] < seq[j, c])
            ):
                c += 1
            if t < tag[j, c] or (t == tag[j, c] and q < seq[j, c]):
                break
            _put(tag, seq, slot, j, i, tag[j, c], seq[j, c], slot[j, c])
            i = c
        _put(tag, seq, slot, j, i, t, q, s)
    return t0, s0


@numba.njit(cache=_CACHE)
def _integrate(
    t0: float,
    t1: float,
    nk: np.ndarray,
    bounds: np.ndarray,
    area: np.ndarray,
    span: np.ndarray,
    ptr: np.ndarray,
) -> None:
    """Add ``n_k * dt`` over [t0, t1] to the batches ``[bounds[b], bounds[b + 1])`` it overlaps.

    Time only moves forward, so ``ptr[0]`` (the current batch) only moves forward too.
    """
    nb = bounds.shape[0] - 1
    if nb <= 0 or t1 <= bounds[0] or t0 >= bounds[nb]:
        return
    lo = max(t0, bounds[0])
    hi = min(t1, bounds[nb])
    b = ptr[0]
    while b < nb - 1 and bounds[b + 1] <= lo:
        b += 1
    while lo < hi and b < nb:
        e = min(hi, bounds[b + 1])
        dt = e - lo
        if dt > 0:
            span[b] += dt
            for k in range(nk.shape[0]):
                area[b, k] += nk[k] * dt
        lo = e
        if lo >= bounds[b + 1]:
            b += 1
    ptr[0] = min(b, nb - 1)


@numba.njit(cache=_CACHE)
def _tag(
    algo: int,
    s: int,
    j: int,
    k: int,
    vg: float,
    vj: np.ndarray,
    s_last: np.ndarray,
    s_q: np.ndarray,
    a: np.ndarray,
) -> float:
    """The tag of a new packet of flow slot ``s`` (class ``k``) queued at resource ``j``, which
    it records as the flow's last tag and counts in ``s_q`` (``algo``: 0 DRFQ, a virtual time
    over all resources; 1 and 2 a virtual time per resource)."""
    s_q[s, j] += 1
    if algo == 0:
        tg = max(vg, s_last[s, 0] + 1.0)
        s_last[s, 0] = tg
    elif algo == 1:
        tg = max(vj[j], s_last[s, j] + a[k, j] / s_q[s, j])
        s_last[s, j] = tg
    else:
        tg = max(vj[j], s_last[s, j] + a[k, j])
        s_last[s, j] = tg
    return tg


@numba.njit(cache=_CACHE)
def _start(
    j: int,
    t: float,
    vg: float,
    a: np.ndarray,
    s_cls: np.ndarray,
    heap: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    svc_slot: np.ndarray,
    svc_tag: np.ndarray,
    busy: np.ndarray,
    vj: np.ndarray,
) -> float:
    """Start serving the first packet of resource ``j``'s queue at time ``t``; returns the
    virtual time over all resources (``vg``, raised to the packet's tag)."""
    tg, s2 = _pop(heap[0], heap[1], heap[2], heap[3], j)
    svc_slot[j] = s2
    svc_tag[j] = tg
    busy[j] = t + a[s_cls[s2], j]
    vj[j] = tg
    return max(vg, tg)


# One event loop, compiled whole by numba, and long for that: its state is some twenty local
# arrays and counters that a split into functions would pass back and forth on every event; the
# per-packet steps that repeat are the helpers above.
@numba.njit(cache=_CACHE)
def _run(
    arr_t: np.ndarray,
    arr_cls: np.ndarray,
    arr_size: np.ndarray,
    a: np.ndarray,
    window: int,
    algo: int,
    bounds: np.ndarray,
    t_stop: float,
    max_flows: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int, int, float]:
    n_flows = arr_t.shape[0]
    n_cls, n_res = a.shape
    nb = max(bounds.shape[0] - 1, 0)
    finish = np.full(n_flows, np.nan)
    departed = np.zeros(n_flows, dtype=np.int64)
    area = np.zeros((max(nb, 1), n_cls))
    span = np.zeros(max(nb, 1))
    nk = np.zeros(n_cls, dtype=np.int64)
    bptr = np.zeros(1, dtype=np.int64)
    # flow slots
    s_flow = np.zeros(max_flows, dtype=np.int64)
    s_cls = np.zeros(max_flows, dtype=np.int64)
    s_left = np.zeros(max_flows, dtype=np.int64)
    s_infl = np.zeros(max_flows, dtype=np.int64)
    s_last = np.zeros((max_flows, n_res))
    s_q = np.zeros((max_flows, n_res), dtype=np.int64)
    free = np.arange(max_flows - 1, -1, -1).astype(np.int64)
    n_free = max_flows
    # first and next resource of each class
    first = np.full(n_cls, -1, dtype=np.int64)
    nxt = np.full((n_cls, n_res), -1, dtype=np.int64)
    for k in range(n_cls):
        prev = -1
        for j in range(n_res):
            if a[k, j] > 0:
                if prev < 0:
                    first[k] = j
                else:
                    nxt[k, prev] = j
                prev = j
    cap = max_flows * window + 1
    h_tag = np.zeros((n_res, cap))
    h_seq = np.zeros((n_res, cap), dtype=np.int64)
    h_slot = np.zeros((n_res, cap), dtype=np.int64)
    h_n = np.zeros(n_res, dtype=np.int64)
    heap = (h_tag, h_seq, h_slot, h_n)
    busy = np.full(n_res, np.inf)
    svc_slot = np.full(n_res, -1, dtype=np.int64)
    svc_tag = np.zeros(n_res)
    vj = np.zeros(n_res)
    vg = 0.0
    seq = 0
    t = 0.0
    ai = 0
    done = 0
    services = 0
    status = 0
    while True:
        # next event: the earliest resource completion (lowest j on ties), else the next arrival
        jn = -1
        tn = np.inf
        for j in range(n_res):
            if busy[j] < tn:
                tn = busy[j]
                jn = j
        ta = arr_t[ai] if ai < n_flows else np.inf
        if ta < tn:
            tn = ta
            jn = -1
        if tn > t_stop or tn == np.inf:
            _integrate(t, t_stop, nk, bounds, area, span, bptr)
            t = t_stop
            break
        _integrate(t, tn, nk, bounds, area, span, bptr)
        t = tn
        # packets entering a resource in this event: (slot, resource, DRFQ tag)
        if jn >= 0:
            s = svc_slot[jn]
            k = s_cls[s]
            s_q[s, jn] -= 1
            services += 1
            nj = nxt[k, jn]
            n_enq = 0
            enq_res0 = -1
            enq_tag0 = 0.0
            if nj >= 0:
                n_enq = 1
                enq_res0 = nj
                enq_tag0 = svc_tag[jn]
            else:
                done += 1
                s_infl[s] -= 1
                departed[s_flow[s]] += 1
                if s_left[s] > 0:
                    s_left[s] -= 1
                    s_infl[s] += 1
                    n_enq = 1
                    enq_res0 = first[k]
                    enq_tag0 = math.nan  # new packet: DRFQ tag set at admission
                elif s_infl[s] == 0:
                    finish[s_flow[s]] = t
                    nk[k] -= 1
                    free[n_free] = s
                    n_free += 1
            # start the next packet at jn
            if h_n[jn] > 0:
                vg = _start(jn, t, vg, a, s_cls, heap, svc_slot, svc_tag, busy, vj)
            else:
                busy[jn] = np.inf
                svc_slot[jn] = -1
            if n_enq == 1:
                # enqueue (one packet) below
                j = enq_res0
                if algo == 0 and not math.isnan(enq_tag0):
                    s_q[s, j] += 1
                    tg = enq_tag0
                else:
                    tg = _tag(algo, s, j, k, vg, vj, s_last, s_q, a)
                _push(h_tag, h_seq, h_slot, h_n, j, tg, seq, s)
                seq += 1
                if busy[j] == np.inf:
                    vg = _start(j, t, vg, a, s_cls, heap, svc_slot, svc_tag, busy, vj)
        else:
            if n_free == 0:
                status = 1
                break
            n_free -= 1
            s = free[n_free]
            k = arr_cls[ai]
            s_flow[s] = ai
            s_cls[s] = k
            nk[k] += 1
            size = arr_size[ai]
            ai += 1
            m = min(window, size)
            s_left[s] = size - m
            s_infl[s] = m
            for j in range(n_res):
                s_last[s, j] = -np.inf
                s_q[s, j] = 0
            j = first[k]
            for _ in range(m):
                tg = _tag(algo, s, j, k, vg, vj, s_last, s_q, a)
                _push(h_tag, h_seq, h_slot, h_n, j, tg, seq, s)
                seq += 1
            if busy[j] == np.inf:
                vg = _start(j, t, vg, a, s_cls, heap, svc_slot, svc_tag, busy, vj)
    return finish, departed, area, span, done, services, status, t


@dataclass(frozen=True)
class PacketRun:
    """Output of :func:`run_router`.

    Attributes
    ----------
    finish : ndarray, shape (F,)
        Time each flow's last packet left the router (NaN if it had not by ``t_stop``).
    departed : ndarray of int, shape (F,)
        Packets of each flow that left the router.
    area : ndarray, shape (B, K)
        Integral of the number of class-k flows in progress over each batch window.
    span : ndarray, shape (B,)
        Length of each batch window that was simulated.
    packets : int
        Packets that left the router.
    services : int
        Packet services completed over all resources.
    t_end : float
        Simulated time reached.
    wall_s : float
        Wall time, seconds.
    cpu_s : float
        CPU time of this process over the run, seconds (a busy machine inflates ``wall_s``).
    """

    finish: np.ndarray
    departed: np.ndarray
    area: np.ndarray
    span: np.ndarray
    packets: int
    services: int
    t_end: float
    wall_s: float
    cpu_s: float


def _check_vectors(vectors: np.ndarray) -> None:
    for k, v in enumerate(vectors):
        if not np.isfinite(v).all() or (v < 0).any():
            raise ConfigError(f"vectors[{k}]: {v.tolist()!r} (expected finite numbers >= 0)")
        if abs(float(v.max()) - 1.0) > 1e-9:
            raise ConfigError(
                f"vectors[{k}]: {v.tolist()!r} has no component equal to 1 (max {v.max():g}); "
                "requirement vectors are refused unless normalised"
            )


def run_router(
    vectors: np.ndarray,
    arrival_s: np.ndarray,
    classes: np.ndarray,
    sizes: np.ndarray,
    *,
    algorithm: str,
    window: int = 30,
    t_stop: float | None = None,
    batch_bounds: np.ndarray | None = None,
    max_flows: int = 4096,
) -> PacketRun:
    """Simulate the router on a given sequence of flow arrivals.

    Parameters
    ----------
    vectors : ndarray, shape (K, J)
        Per-packet requirement vector of each class (service time of a packet at resource j, in
        time units; each vector has a component equal to 1).
    arrival_s : ndarray, shape (F,)
        Flow arrival times, non-decreasing.
    classes : ndarray of int, shape (F,)
        Class of each flow.
    sizes : ndarray of int, shape (F,)
        Packets per flow (>= 1).
    algorithm : {"drfq", "pf", "bmf"}
        Eq. 2, eq. 5 or eq. 7.
    window : int
        W >= 1 packets per flow inside the router.
    t_stop : float, optional
        Stop time (default: when every flow has left, capped at the last arrival if batches are
        given).
    batch_bounds : ndarray, shape (B + 1,), optional
        Increasing times delimiting B windows over which the number of flows in progress per class
        is integrated.
    max_flows : int
        Most flows simultaneously in progress (memory bound).

    Returns
    -------
    PacketRun

    Raises
    ------
    ConfigError
        For an unknown algorithm, ``window < 1``, a requirement vector without a unit component,
        mismatched array lengths, non-positive sizes, or more than ``max_flows`` concurrent flows
        (the load is then too close to the stability limit for this bound).
    """
    if algorithm not in ALGORITHMS:
        raise ConfigError(
            f"algorithm: unknown {algorithm!r} (known: {', '.join(sorted(ALGORITHMS))})"
        )
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
        raise ConfigError(f"window: W = {window!r} (expected an integer >= 1)")
    a = np.ascontiguousarray(vectors, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ConfigError(f"vectors: expected a (K, J) array, got shape {a.shape}")
    _check_vectors(a)
    t_arr = np.ascontiguousarray(arrival_s, dtype=np.float64)
    cls = np.ascontiguousarray(classes, dtype=np.int64)
    size = np.ascontiguousarray(sizes, dtype=np.int64)
    if not (len(t_arr) == len(cls) == len(size)):
        raise ConfigError("flows: arrival_s, classes and sizes must have the same length")
    if len(size) and size.min() < 1:
        raise ConfigError(f"sizes: {int(size.min())} (expected >= 1 packet per flow)")
    if len(cls) and (cls.min() < 0 or cls.max() >= a.shape[0]):
        raise ConfigError(f"classes: values must be in 0..{a.shape[0] - 1}")
    bounds = (
        np.zeros(0)
        if batch_bounds is None
        else np.ascontiguousarray(batch_bounds, dtype=np.float64)
    )
    stop = np.inf if t_stop is None else float(t_stop)
    t0 = time.perf_counter()
    c0 = time.process_time()
    finish, departed, area, span, done, services, status, t_end = _run(
        t_arr, cls, size, a, int(window), ALGORITHMS[algorithm], bounds, stop, int(max_flows)
    )
    if status == 1:
        raise ConfigError(
            f"max_flows: more than {max_flows} flows in progress at once; the load is too close to "
            "the stability limit (raise max_flows or lower the load)"
        )
    return PacketRun(
        finish=finish,
        departed=departed,
        area=area,
        span=span,
        packets=int(done),
        services=int(services),
        t_end=float(t_end),
        wall_s=time.perf_counter() - t0,
        cpu_s=time.process_time() - c0,
    )


def flow_arrivals(
    rho: np.ndarray, mean_packets: float, n_flows: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Poisson flow arrivals with geometric sizes (Bonald and Roberts, Section 4.4).

    Parameters
    ----------
    rho : ndarray, shape (K,)
        Class loads (packets per time unit times the mean size ... i.e. ``lambda_k * mean``).
    mean_packets : float
        Mean flow size in packets (geometric on {1, 2, ...}); the paper uses 20,000.
    n_flows : int
    rng : numpy.random.Generator

    Returns
    -------
    arrival_s, classes, sizes : ndarrays, shape (n_flows,)
    """
    if mean_packets < 1:
        raise ConfigError(f"mean_packets: {mean_packets!r} (expected >= 1)")
    lam = np.asarray(rho, dtype=float) / mean_packets
    tot = float(lam.sum())
    gaps = rng.exponential(1.0 / tot, n_flows)
    cls = rng.choice(len(lam), size=n_flows, p=lam / tot)
    sizes = rng.geometric(1.0 / mean_packets, n_flows)
    return np.cumsum(gaps), cls.astype(np.int64), sizes.astype(np.int64)


@dataclass(frozen=True)
class PacketEstimate:
    """Batch-means service rates of one packet simulation.

    Attributes
    ----------
    gamma, gamma_lo, gamma_hi : ndarray, shape (K,)
        ``rho_k / E[n_k]`` (packets per time unit; comparable with the fluid ``gamma``) and its
        95 % CI.
    mean_n, mean_n_half : ndarray, shape (K,)
    packets : int
    wall_s, cpu_s : float
        Wall and CPU time of the router simulation, seconds.
    packets_per_s : float
        Packets per second of wall time.
    """

    gamma: np.ndarray
    gamma_lo: np.ndarray
    gamma_hi: np.ndarray
    mean_n: np.ndarray
    mean_n_half: np.ndarray
    packets: int
    wall_s: float
    cpu_s: float
    packets_per_s: float


def estimate_service_rates(
    vectors: np.ndarray,
    rho: np.ndarray,
    *,
    algorithm: str,
    window: int = 30,
    mean_packets: float = 20_000,
    flows: int = 100_000,
    warmup: int = 1_000,
    batches: int = 20,
    seed: int | np.random.SeedSequence = 0,
    max_flows: int = 4096,
) -> PacketEstimate:
    """Service rates ``gamma_k`` from a packet simulation under the Markovian demand model.

    ``flows`` arrivals after ``warmup``; the time between arrival ``warmup`` and the last arrival
    is cut into ``batches`` windows of equal numbers of arrivals, and the time-average number of
    class-k flows per window gives a batch mean of ``E[n_k]``; ``gamma_k = rho_k / E[n_k]``
    (Little's law, Section 4.1), CI by Student t over the batches.

    Raises
    ------
    ConfigError
        As :func:`run_router`, and for ``flows < batches`` or ``batches < 2``.
    """
    from fairsim.schedulers.flows.markov_chain import batch_gamma

    if batches < 2:
        raise ConfigError(f"batches: {batches!r} (expected an integer >= 2)")
    if flows < batches:
        raise ConfigError(f"flows: {flows!r} (expected at least batches = {batches})")
    rng = np.random.default_rng(seed)
    rho = np.asarray(rho, dtype=float)
    t_arr, cls, sizes = flow_arrivals(rho, mean_packets, warmup + flows, rng)
    edges = warmup + (np.arange(batches + 1) * flows) // batches
    edges[-1] = warmup + flows - 1
    bounds = t_arr[edges]
    run = run_router(
        vectors,
        t_arr,
        cls,
        sizes,
        algorithm=algorithm,
        window=window,
        t_stop=float(bounds[-1]),
        batch_bounds=bounds,
        max_flows=max_flows,
    )
    return PacketEstimate(
        **batch_gamma(run.area, run.span, rho, np.ones_like(rho)),
        packets=run.packets,
        wall_s=run.wall_s,
        cpu_s=run.cpu_s,
        packets_per_s=run.packets / max(run.wall_s, 1e-12),
    )
