"""Fairness over time: each online run against the exact mechanism it implements
(``collect.fairness``, docs/fairness.md).

At every instant of its grid the engine hands a :class:`FairnessProbe` the active users
(:class:`fairsim.simulator.snapshot.UserSnapshot`: a user with at least one task running or
waiting). The probe represents each user by its tasks present (running + waiting) and the mean
demand vector of those tasks, and computes

* the **online allocation**: the user's share of the pool's total of every resource and its
  global dominant share, ``max_r A_r / C_r`` (DRFH paper, Wang, Li and Liang, Section IV, eq. 3);
* the **reference allocation**: the exact mechanism's divisible allocation of the same users
  (mean demand, task bound = tasks present, the run's weights) on the same pool
  (:func:`reference_dominant_shares`, :func:`fairsim.schedulers.exact.solve_exact`, verified),
  identical servers aggregated into classes where that is exact
  (:mod:`fairsim.schedulers.exact.aggregate`);
* per instant: Jain's index of the fractions of their entitlement the active users hold
  (:func:`jain_entitlement`: online dominant share over reference dominant share), Jain's index of
  the raw weighted dominant shares (:func:`jain_index`), the largest deficit and the L1 distance
  between reference and online dominant shares, the sharing-incentive violations
  (:func:`sharing_incentive_shares`) and the envious pairs (:func:`envious_pairs`).

:meth:`FairnessProbe.tables` gives ``fairness.parquet`` and ``fairness_summary.parquet``
(:data:`FAIRNESS_COLUMNS`, :data:`SUMMARY_COLUMNS`), :meth:`FairnessProbe.summary` the
``fairness`` entry of ``summary.json``.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.schedulers.exact import EXACT, dominant_shares, solve_exact
from fairsim.schedulers.exact.aggregate import (
    EXACT_UNDER_AGGREGATION,
    ServerClasses,
    aggregate_instance,
    aggregate_servers,
)
from fairsim.schedulers.exact.common import tasks_that_fit
from fairsim.schedulers.exact.instance import ROOT, Instance, InstanceError, QueueTree
from fairsim.schedulers.exact.pool import POOLED
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.snapshot import UserSnapshot

#: The mechanism ``reference: auto`` takes for a scheduler that names none (``mechanism`` None:
#: ``slots``, ``drf-classes``, ``drf-lockstep``, plug-ins), and for one whose mechanism takes
#: jobs over machine classes (``udrf``): DRFH, the DRFH paper's definition of multi-resource
#: fairness on heterogeneous servers.
DEFAULT_REFERENCE = "drfh"

#: Relative tolerance of the whole-task counts (sharing incentive, envy): ``floor(v (1 + TOL))``,
#: so that ``2.9999999997`` tasks (rounding of ``3``) count as 3.
TASK_TOL = 1e-9
#: Relative tolerance of "below its sharing-incentive share".
SHARE_TOL = 1e-9


def fairness_columns(resources: tuple[str, ...] | list[str], queues: bool = False) -> list[str]:
    """The columns of ``fairness.parquet``, in order (with ``queues``, a scenario with a queue
    tree: one row per leaf, the pair of a ``user`` and its ``queue``)."""
    return [
        "time_s",
        "user",
        *(["queue"] if queues else []),
        "tasks_running",
        "tasks_waiting",
        *(f"demand_{r}" for r in resources),
        *(f"share_{r}" for r in resources),
        "dominant_share",
        "reference_dominant_share",
        "deficit",
    ]


#: The columns of ``fairness.parquet`` for the resources ``cpu, mem`` (:func:`fairness_columns`).
FAIRNESS_COLUMNS = tuple(fairness_columns(("cpu", "mem")))


def queue_fairness_columns(resources: tuple[str, ...] | list[str]) -> list[str]:
    """The columns of ``fairness_queues.parquet``, in order (:meth:`FairnessProbe.queue_tables`)."""
    return [
        "time_s",
        "queue",
        "tasks_running",
        "tasks_waiting",
        *(f"share_{r}" for r in resources),
        "dominant_share",
        "reference_dominant_share",
        "deficit",
        "holds_nothing",
    ]


#: The columns of ``fairness_summary.parquet``, in order: DESIGN.md's contract (``time_s`` to
#: ``envious_pairs``; ``jain_index`` is Jain's index of the raw weighted dominant shares, kept under
#: that name for the contract), then ``jain_entitlement`` (:func:`jain_entitlement`), its count of
#: users left out (``zero_reference_users``) and ``jain_raw_dominant`` (the same values as
#: ``jain_index``, under a name that says what it is).
SUMMARY_COLUMNS = (
    "time_s",
    "active_users",
    "jain_index",
    "max_deficit",
    "l1_distance",
    "si_violations",
    "envious_pairs",
    "jain_entitlement",
    "zero_reference_users",
    "jain_raw_dominant",
)

#: A reference dominant share at or below this (a share of the pool's total) is 0 for
#: :func:`jain_entitlement`: the user is entitled to nothing (a solver's rounding of 0 must not
#: become an entitlement that the user's online share is divided by).
ZERO_REFERENCE = 1e-12


def reference_mechanism(
    scheduler: type[Scheduler] | Scheduler | None, reference: str, hierarchical: bool = False
) -> str:
    """The exact mechanism a run is compared with.

    Parameters
    ----------
    scheduler : Scheduler class or instance, or None
        The run's scheduler (its ``mechanism`` attribute,
        :attr:`fairsim.simulator.scheduler.Scheduler.mechanism`).
    reference : str
        ``"auto"`` or a key of :data:`fairsim.schedulers.exact.EXACT` (``collect.fairness.
        reference``, validated with the config).
    hierarchical : bool
        The run's scenario has a queue tree.

    Returns
    -------
    str
        ``reference`` itself unless it is ``"auto"``; then ``hdrf`` for every run of a scenario
        with a queue tree (the mechanism that shares by the tree, whatever the scheduler does),
        else the scheduler's ``mechanism`` when it is an exact mechanism of ``fairsim solve``
        on users and servers (:data:`EXACT`), else :data:`DEFAULT_REFERENCE` (no mechanism, or
        ``udrf``: its mechanism takes jobs over machine classes,
        :data:`fairsim.schedulers.exact.JOB_EXACT`, which a run's users do not give).
    """
    if reference != "auto":
        return reference
    if hierarchical:
        return "hdrf"
    own = getattr(scheduler, "mechanism", None)
    return str(own) if own in EXACT else DEFAULT_REFERENCE


def reference_instance(
    mechanism: str,
    resources: tuple[str, ...],
    capacity: np.ndarray,
    demand: np.ndarray,
    max_tasks: np.ndarray,
    weight: np.ndarray,
    eligible: np.ndarray | None = None,
    user_ids: tuple[str, ...] | None = None,
    classes: ServerClasses | None = None,
) -> Instance:
    """The instance the reference mechanism solves: users over the pool, aggregated where exact.

    Parameters
    ----------
    mechanism : str
        A key of :data:`fairsim.schedulers.exact.EXACT`.
    resources : tuple of str
    capacity : ndarray, shape (n_servers, n_resources)
        The pool.
    demand : ndarray, shape (n_users, n_resources)
        Per-task demand of each user (the mean demand of its present tasks); every row has a
        positive entry.
    max_tasks : ndarray, shape (n_users,)
        Task bound of each user (its tasks present).
    weight : ndarray, shape (n_users,)
    eligible : ndarray of bool, shape (n_users, n_servers), optional
        Servers each user may use (placement constraints); ignored by the pooled mechanisms
        (``drf``, ``af``, ``bmf``), which are defined on one pooled server.
    user_ids : tuple of str, optional
        Default ``"0", "1", ...``.
    classes : ServerClasses, optional
        ``aggregate_servers(capacity)``, when the caller has it (no eligibility): saves the
        aggregation.

    Returns
    -------
    Instance
        Servers aggregated into classes of identical capacity and eligibility
        (:func:`fairsim.schedulers.exact.aggregate.aggregate_instance`) for the mechanisms of
        :data:`~fairsim.schedulers.exact.aggregate.EXACT_UNDER_AGGREGATION`; the servers one
        by one for ``psdsf``.
    """
    n_u = demand.shape[0]
    if mechanism in POOLED:
        eligible = None
    ids = user_ids if user_ids is not None else _default_ids(n_u)
    if eligible is None and mechanism in EXACT_UNDER_AGGREGATION:
        classes = classes if classes is not None else aggregate_servers(capacity)
        return Instance(
            resources=tuple(resources),
            server_ids=tuple(f"class-{k}" for k in range(len(classes.count))),
            user_ids=ids,
            capacity=classes.capacity,
            demand=demand,
            weight=weight,
            max_tasks=max_tasks,
            eligible=np.ones((n_u, len(classes.count)), dtype=bool),
        )
    inst = Instance(
        resources=tuple(resources),
        server_ids=tuple(str(i) for i in range(capacity.shape[0])),
        user_ids=ids,
        capacity=np.asarray(capacity, dtype=np.float64),
        demand=demand,
        weight=weight,
        max_tasks=max_tasks,
        eligible=(
            np.ones((n_u, capacity.shape[0]), dtype=bool)
            if eligible is None
            else np.asarray(eligible, dtype=bool)
        ),
    )
    if mechanism in EXACT_UNDER_AGGREGATION:
        return aggregate_instance(inst)[0]
    return inst


@functools.lru_cache(maxsize=8)
def _default_ids(n: int) -> tuple[str, ...]:
    """``("0", "1", ..., str(n - 1))``, built once per ``n``."""
    return tuple(str(i) for i in range(n))


def reference_dominant_shares(
    mechanism: str,
    resources: tuple[str, ...],
    capacity: np.ndarray,
    demand: np.ndarray,
    max_tasks: np.ndarray,
    weight: np.ndarray,
    eligible: np.ndarray | None = None,
    classes: ServerClasses | None = None,
    queues: QueueTree | None = None,
    tasks: np.ndarray | None = None,
) -> np.ndarray:
    """Each user's global dominant share in the exact mechanism's allocation.

    Users whose demand is all zero take no resource in any allocation: their share is 0 and
    they are left out of the solve. The others are solved together
    (:func:`reference_instance`, :func:`fairsim.schedulers.exact.solve_exact`, whose answer is
    verified) and their dominant shares taken against the pool's total
    (:func:`fairsim.schedulers.exact.dominant_shares`, DRFH eq. 3), the measure of the online
    side, whatever the mechanism's own notion of share.

    Parameters
    ----------
    mechanism, resources, capacity, demand, max_tasks, weight, eligible, classes
        As for :func:`reference_instance`.
    queues : QueueTree, optional
        The queue tree the users hang in (``user_queue``: one queue per row), for ``hdrf``: the
        rows are then the tree's leaves.
    tasks : ndarray, shape (n_users,), optional
        Filled with each row's tasks in the reference allocation (summed over the servers),
        when given.

    Returns
    -------
    ndarray, shape (n_users,)

    Raises
    ------
    InstanceError
        When the mechanism cannot answer the instance (``bmf`` with too many bottleneck
        mappings, ...).
    NumericalRangeError
        When the numbers are out of the solvers' range, or the answer fails its check.
    """
    n_u = demand.shape[0]
    out = np.zeros(n_u)
    some = (demand > 0).any(axis=1) & (max_tasks > 0)
    if not some.any():
        return out
    keep = np.flatnonzero(some)
    inst = reference_instance(
        mechanism,
        resources,
        capacity,
        demand[keep],
        max_tasks[keep].astype(np.float64),
        weight[keep].astype(np.float64),
        None if eligible is None else eligible[keep],
        classes=classes,
    )
    if queues is not None:
        inst = replace(inst, queues=replace(queues, user_queue=queues.user_queue[keep]))
    x = solve_exact(mechanism, inst)
    out[keep] = dominant_shares(inst, x)
    if tasks is not None:
        tasks[:] = 0.0
        tasks[keep] = np.asarray(x, dtype=np.float64).sum(axis=1)
    return out


def jain_index(y: np.ndarray) -> float:
    """Jain's fairness index ``(sum y)^2 / (n sum y^2)`` (Jain, Chiu and Hawe, DEC-TR-301, 1984).

    Parameters
    ----------
    y : ndarray, shape (n,)
        Non-negative amounts (here weighted dominant shares, ``dominant_share / weight``).

    Returns
    -------
    float
        In ``[1/n, 1]``; 1 when every amount is equal; NaN when ``n == 0`` or every amount is 0.

    Examples
    --------
    >>> jain_index(np.array([0.2, 0.2, 0.2])), jain_index(np.array([1.0, 0.0]))
    (1.0, 0.5)
    """
    y = np.asarray(y, dtype=np.float64)
    top = float(y.max()) if y.size else 0.0
    if top <= 0.0:
        return math.nan
    y = y / top  # in [0, 1]: equal amounts are exactly 1, and nothing overflows
    return min(1.0, float(y.sum()) ** 2 / (y.size * float(np.dot(y, y))))


def jain_entitlement(dominant_share: np.ndarray, reference_share: np.ndarray) -> tuple[float, int]:
    """Jain's index of the fractions of their entitlement the users hold.

    A user's entitlement is its dominant share in the reference allocation (the exact
    mechanism's divisible allocation of the same users, bounded by their tasks present, with the
    run's weights): ``x_i = dominant_share_i / reference_share_i``, and the index is Jain's
    ``(sum x)^2 / (n sum x^2)`` (:func:`jain_index`; Jain, Chiu and Hawe, *A quantitative measure
    of fairness and discrimination for resource allocation in shared computer systems*,
    DEC-TR-301, 1984) over the users with a positive reference share. It is 1 exactly when every
    such user holds the same fraction of its entitlement (all 100 %, or all 62 % when whole
    tasks fill servers less than the divisible allocation does), and ``k/n`` when ``k`` of them
    hold an equal fraction and the others nothing. Unlike Jain's index of the raw dominant shares
    it does not count as unfair a user who holds little because it needs little: a user bounded
    by a few tasks present has a small reference share, and holding it is ``x_i = 1``. The
    weights are in the reference already. Scaling a resource's units changes no share, so
    neither the index.

    Parameters
    ----------
    dominant_share : ndarray, shape (n,)
        Each user's global dominant share online, ``max_r A_r / C_r`` (DRFH paper, eq. 3).
    reference_share : ndarray, shape (n,)
        The same measure of its allocation in the reference mechanism; NaN when unavailable.

    Returns
    -------
    index : float
        In ``[1/m, 1]`` over the ``m`` users whose reference share exceeds
        :data:`ZERO_REFERENCE`; NaN when there is none, when every one of them holds nothing
        online (no fraction to compare), or when a reference share is NaN.
    zero_reference : int
        The users left out because their reference share is at most :data:`ZERO_REFERENCE`
        (a user entitled to nothing, such as one whose tasks demand nothing); 0 when a
        reference share is NaN.

    Examples
    --------
    Reference shares 0.6, 0.1, 0.1. Holding 0.3, 0.1, 0.1 is 50 %, 100 % and 100 % of the
    entitlements (index 25/27); holding exactly the reference is 1, though the raw dominant
    shares 0.6, 0.1, 0.1 have Jain's index 32/57, below the 25/33 of 0.3, 0.1, 0.1:

    >>> ref = np.array([0.6, 0.1, 0.1])
    >>> jain_entitlement(np.array([0.3, 0.1, 0.1]), ref), 25 / 27
    ((0.9259259259259259, 0), 0.9259259259259259)
    >>> jain_entitlement(ref, ref)
    (1.0, 0)
    """
    dom = np.asarray(dominant_share, dtype=np.float64)
    ref = np.asarray(reference_share, dtype=np.float64)
    if np.isnan(ref).any():
        return math.nan, 0
    entitled = ref > ZERO_REFERENCE
    zero = int(ref.size - np.count_nonzero(entitled))
    if not entitled.any():
        return math.nan, zero
    return jain_index(dom[entitled] / ref[entitled]), zero


def sharing_incentive_shares(
    demand: np.ndarray,
    max_tasks: np.ndarray,
    weight: np.ndarray,
    classes: ServerClasses,
    total: np.ndarray,
) -> np.ndarray:
    """Each user's sharing-incentive share: the global dominant share of what it would run on
    its weighted slice ``w_n / sum_m w_m`` of every server (DRFH paper, Section IV-D).

    On each server the user runs the whole tasks of its (mean) demand that fit in its slice,
    ``floor(min_r (w_n / W) c[l, r] / d[n, r])`` (:data:`TASK_TOL`), summed over the servers it
    may use and bounded by its tasks present; the share is that count times ``max_r d[n, r] /
    C_r``.

    Parameters
    ----------
    demand : ndarray, shape (n, n_resources)
    max_tasks : ndarray, shape (n,)
    weight : ndarray, shape (n,)
    classes : ServerClasses
        The pool in classes of identical servers (with the users' eligibility, if any).
    total : ndarray, shape (n_resources,)
        The pool's total capacity.

    Returns
    -------
    ndarray, shape (n,)
    """
    n = demand.shape[0]
    if n == 0:
        return np.zeros(0)
    per_server = classes.capacity / classes.count[:, None]  # (K, R)
    slice_ = weight / weight.sum()  # (n,)
    fit = tasks_that_fit(demand, per_server) * slice_[:, None]  # (n, K)
    whole = np.floor(np.where(np.isfinite(fit), fit, 0.0) * (1 + TASK_TOL))
    if classes.eligible is not None:
        whole = np.where(classes.eligible, whole, 0.0)
    tasks = np.minimum(whole @ classes.count.astype(np.float64), max_tasks)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_task = np.where(total > 0, demand / total, 0.0).max(axis=1)
    return tasks * per_task


def envious_pairs(
    demand: np.ndarray, max_tasks: np.ndarray, running: np.ndarray, allocation: np.ndarray
) -> int:
    """Ordered pairs ``(i, j)``, ``i != j``, where user i would run more of its tasks with j's
    allocation than it runs now.

    With j's aggregate allocation (the sum over the servers of what j holds) user i would run
    ``floor(min(n_i, min_r A_j[r] / d_i[r]) (1 + TASK_TOL))`` whole tasks of its mean demand
    ``d_i``, at most its tasks present ``n_i``; i envies j when that exceeds the tasks i runs.
    The aggregate bundle holds at least as many tasks as j's allocation server by server (the
    DRFH paper's envy-freeness, Section IV-D, counts per server), so every pair envious by that
    definition is counted here; a pair counted here may not be envious server by server.

    Computed without dividing every pair: since ``k_i`` (tasks running) is a whole number,
    ``floor(v) > k_i`` iff ``v >= k_i + 1``, and rounding is monotone, so i envies j iff
    ``fl(n_i (1 + TASK_TOL)) >= k_i + 1`` and, for every resource i demands, ``A_j[r] >=
    s[i, r]``, the least double with ``fl(fl(s / d_i[r]) (1 + TASK_TOL)) >= k_i + 1``
    (:func:`_least`): the same floating-point verdict as the formula above, pair by pair, with
    one comparison per pair and resource.

    Parameters
    ----------
    demand : ndarray, shape (n, n_resources)
        Mean demand per task.
    max_tasks : ndarray, shape (n,)
        Tasks present.
    running : ndarray, shape (n,)
        Tasks running.
    allocation : ndarray, shape (n, n_resources)
        What each user holds.

    Returns
    -------
    int
    """
    n, n_r = demand.shape
    if n == 0:
        return 0
    run1 = np.asarray(running, dtype=np.float64) + 1.0  # floor(v) > k  <=>  v >= k + 1
    grow = 1 + TASK_TOL
    # i's tasks present allow k_i + 1 whole tasks: fl(n_i (1 + TOL)) >= k_i + 1
    rowok = np.asarray(max_tasks, dtype=np.float64) * grow >= run1
    # fl(fl(q) (1 + TOL)) >= k_i + 1  <=>  q >= t_i, the least such double (rounding is monotone)
    t = _least(lambda q: q * grow, run1 / grow, run1)
    # fl(A_j[r] / d_i[r]) >= t_i  <=>  A_j[r] >= s[i, r], the least such double; d_i[r] = 0: any A
    dem = np.asarray(demand, dtype=np.float64)
    pos = dem > 0
    d1 = np.where(pos, dem, 1.0)
    t2 = np.broadcast_to(t[:, None], dem.shape)
    s = np.where(pos, _least(lambda a: a / d1, t2 * d1, t2), -np.inf)
    alloc = np.asarray(allocation, dtype=np.float64)
    count = 0
    who = np.flatnonzero(rowok)  # the others envy nobody
    step = max(1, 4_000_000 // max(1, n * n_r))  # rows per chunk: bounded memory
    for lo in range(0, len(who), step):
        i = who[lo : lo + step]
        more = np.ones((len(i), n), dtype=bool)
        for r in range(n_r):
            more &= alloc[None, :, r] >= s[i, r, None]
        # less i's own bundle (j = i)
        count += int(np.count_nonzero(more)) - int(np.count_nonzero(more[np.arange(len(i)), i]))
    return count


def _least(f: Any, start: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The least doubles ``v`` with ``f(v) >= target``, element-wise, for a non-decreasing
    floating-point ``f`` (one division or multiplication: ``start``, ``target``'s exact preimage
    rounded, is within a few ulps of the answer).

    Raises
    ------
    RuntimeError
        If 64 steps of one ulp do not settle it (``f`` is not such a function).
    """
    v = np.array(start, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    for _ in range(64):
        low = f(v) < target
        if not low.any():
            break
        v = np.where(low, np.nextafter(v, np.inf), v)
    else:
        raise RuntimeError("_least: no least preimage within 64 ulps")
    for _ in range(64):
        down = np.nextafter(v, -np.inf)
        lower = f(down) >= target
        if not lower.any():
            return v
        v = np.where(lower, down, v)
    raise RuntimeError("_least: no least preimage within 64 ulps")


def _reason(exc: Exception) -> str:
    """The reason a reference is unavailable: the error's message with numbers as ``N``, so that
    instants failing for the same reason count together."""
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return re.sub(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", "N", msg)


class FairnessProbe:
    """Fairness over time of one scheduler's run: the engine's ``on_fairness`` callback.

    Parameters
    ----------
    mechanism : str
        The reference mechanism (:func:`reference_mechanism`).
    resources : tuple of str
    capacity : ndarray, shape (n_servers, n_resources)
        The simulated pool.
    weights : mapping of int to float, optional
        The run's user weights by engine user code (default 1).
    interval_s : float
        The grid's spacing (recorded in the summary).
    queues : QueueTree, optional
        The scenario's queue tree on the pool: the snapshots then hold one row per leaf (a
        user and its queue), the reference (``hdrf``) shares by the tree, and the probe also
        measures every queue (:meth:`queue_tables`).

    Attributes
    ----------
    solve_s, metrics_s : float
        Seconds spent in the reference solves and in everything else the probe computes.
    """

    def __init__(
        self,
        *,
        mechanism: str,
        resources: tuple[str, ...],
        capacity: np.ndarray,
        weights: Mapping[int, float] | None = None,
        interval_s: float,
        queues: QueueTree | None = None,
    ) -> None:
        if mechanism not in EXACT:
            raise ValueError(f"mechanism: {mechanism!r} (expected one of {', '.join(EXACT)})")
        self.mechanism = mechanism
        self.resources = tuple(resources)
        self.capacity = np.asarray(capacity, dtype=np.float64)
        self.total = self.capacity.sum(axis=0)
        self.weights = dict(weights or {})
        self.interval_s = float(interval_s)
        self._classes = aggregate_servers(self.capacity)  # without eligibility
        self._rows: list[dict[str, Any]] = []
        self._summary: list[tuple[Any, ...]] = []
        self._unavailable: Counter[str] = Counter()
        self.solve_s = 0.0
        self.metrics_s = 0.0
        self.queues = queues
        self._queue_rows: list[dict[str, Any]] = []
        if queues is not None:  # within[c, q]: queue q is c or an ancestor of c
            n_q = len(queues.ids)
            self._within = np.zeros((n_q + 1, n_q), dtype=bool)  # last row: the root
            for c in range(n_q):
                k = c
                while k >= 0:
                    self._within[c, k] = True
                    k = int(queues.parent[k])

    def __call__(self, time_s: float, snap: UserSnapshot) -> None:
        """Measure one instant (the engine calls it; see the module docstring)."""
        t0 = time.perf_counter()
        n = len(snap.users)
        present = snap.tasks_present.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(self.total > 0, snap.allocation / self.total, 0.0)
            mean = snap.demand / np.where(present > 0, present, 1.0)[:, None]
        dom = share.max(axis=1) if n else np.zeros(0)
        if self.weights:
            weight = np.array([self.weights.get(int(u), 1.0) for u in snap.users.tolist()])
            weight = weight.reshape(-1)
        else:  # no user weights in the run: every weight 1
            weight = np.ones(n)
        t1 = time.perf_counter()
        ref = np.full(n, np.nan)
        ref_tasks = np.full(n, np.nan)
        tree = None
        if self.queues is not None and snap.queues is not None and self.mechanism == "hdrf":
            tree = replace(self.queues, user_queue=np.asarray(snap.queues, dtype=int))
        if n:
            try:
                ref = reference_dominant_shares(
                    self.mechanism,
                    self.resources,
                    self.capacity,
                    mean,
                    present,
                    weight,
                    snap.eligible,
                    classes=self._classes if snap.eligible is None else None,
                    queues=tree,
                    tasks=ref_tasks if self.queues is not None else None,
                )
            except InstanceError as exc:  # NumericalRangeError included
                self._unavailable[_reason(exc)] += 1
                ref_tasks = np.full(n, np.nan)
        t2 = time.perf_counter()
        deficit = ref - dom
        classes = (
            self._classes
            if snap.eligible is None
            else aggregate_servers(self.capacity, snap.eligible)
        )
        si = sharing_incentive_shares(mean, present, weight, classes, self.total)
        waiting = snap.tasks_waiting > 0
        si_violations = int(np.count_nonzero(waiting & (dom < si * (1 - SHARE_TOL))))
        envy = envious_pairs(mean, present, snap.tasks_running.astype(np.float64), snap.allocation)
        ok = ~np.isnan(deficit)
        raw = jain_index(dom / weight) if n else math.nan
        entitlement, zero_ref = jain_entitlement(dom, ref)
        self._summary.append(
            (
                float(time_s),
                n,
                raw,
                float(deficit.max()) if n and ok.all() else math.nan,
                float(np.abs(deficit).sum()) if ok.all() else math.nan,
                si_violations,
                envy,
                entitlement,
                zero_ref if ok.all() else math.nan,
                raw,
            )
        )
        if self.queues is not None and snap.queues is not None:
            self._measure_queues(float(time_s), snap, mean, ref_tasks)
        self._rows.append(
            {
                "time_s": np.full(n, float(time_s)),
                "user": list(snap.names),
                **({"queue": self._queue_names(snap.queues)} if snap.queues is not None else {}),
                "tasks_running": snap.tasks_running.astype(np.int64),
                "tasks_waiting": snap.tasks_waiting.astype(np.int64),
                "demand": mean,
                "share": share,
                "dominant_share": dom,
                "reference_dominant_share": ref,
                "deficit": deficit,
            }
        )
        t3 = time.perf_counter()
        self.solve_s += t2 - t1
        self.metrics_s += (t1 - t0) + (t3 - t2)

    def _queue_names(self, codes: np.ndarray) -> list[str]:
        ids = (*(self.queues.ids if self.queues is not None else ()), ROOT)
        return [ids[int(c)] for c in codes.tolist()]

    def _measure_queues(
        self, time_s: float, snap: UserSnapshot, mean: np.ndarray, ref_tasks: np.ndarray
    ) -> None:
        """One instant of every queue: its subtree's tasks, allocation and dominant share, the
        reference allocation's (the leaves' reference tasks times their mean demand), and
        whether it holds nothing while tasks of its wait."""
        assert self.queues is not None
        assert snap.queues is not None
        codes = np.asarray(snap.queues, dtype=np.int64)
        # nothing present: the reference allocates nothing either (0, as the online share,
        # not null: null means the reference is unavailable, and the time averages of the
        # two must be over the same instants)
        if not len(codes):
            ref_tasks = np.zeros(0)
        member = self._within[codes].astype(np.float64)  # (n rows, Q); root rows: none
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(self.total > 0, 1.0 / self.total, 0.0)
        running = member.T @ snap.tasks_running.astype(np.float64)
        waiting = member.T @ snap.tasks_waiting.astype(np.float64)
        share = (member.T @ snap.allocation) * inv
        ref_use = member.T @ (ref_tasks[:, None] * mean) if len(codes) else np.zeros_like(share)
        ref_share = (ref_use * inv).max(axis=1) if share.shape[1] else np.zeros(len(running))
        dom = share.max(axis=1) if share.shape[1] else np.zeros(len(running))
        self._queue_rows.append(
            {
                "time_s": np.full(len(running), time_s),
                "running": running.astype(np.int64),
                "waiting": waiting.astype(np.int64),
                "share": share,
                "dominant_share": dom,
                "reference": ref_share,
                "holds_nothing": (waiting > 0) & (running == 0),
            }
        )

    def queue_tables(self) -> dict[str, pa.Table]:
        """``fairness_queues``, the table of a run whose scenario has a queue tree (empty
        mapping otherwise): per sampled instant and queue of the tree, in the tree's order,
        :func:`queue_fairness_columns`: the tasks running and waiting below the queue, its
        share of each resource and dominant share of the pool (over its whole subtree), the
        reference's (``reference_dominant_share``: the reference allocation of the leaves below
        it; 0 at an instant with no task present, when the reference allocates nothing; null
        when the reference is unavailable at that instant), ``deficit`` (reference
        minus online) and ``holds_nothing`` (tasks below it wait while it runs none)."""
        if self.queues is None:
            return {}
        res, rows = self.resources, self._queue_rows
        n_q = len(self.queues.ids)
        names = np.array(self.queues.ids, dtype=object)

        def cat(key: str, width: int | None = None) -> np.ndarray:
            if not rows:
                return np.zeros((0, width) if width else 0)
            return np.concatenate([r[key] for r in rows])

        share = cat("share", len(res))
        dom, ref = cat("dominant_share"), cat("reference")
        cols: dict[str, pa.Array] = {
            "time_s": pa.array(cat("time_s").astype(np.float64), pa.float64()),
            "queue": pa.array(np.tile(names, len(rows)).tolist(), pa.string()),
            "tasks_running": pa.array(cat("running").astype(np.int64), pa.int64()),
            "tasks_waiting": pa.array(cat("waiting").astype(np.int64), pa.int64()),
        }
        for k, r in enumerate(res):
            cols[f"share_{r}"] = _floats(share[:, k] if len(share) else np.zeros(0))
        cols["dominant_share"] = _floats(dom)
        cols["reference_dominant_share"] = _floats(ref)
        cols["deficit"] = _floats(ref - dom)
        cols["holds_nothing"] = pa.array(cat("holds_nothing").astype(bool), pa.bool_())
        assert all(len(c) == n_q * len(rows) for c in cols.values())
        return {"fairness_queues": pa.table(cols)}

    def queue_summary(self) -> dict[str, dict[str, float | int | None]]:
        """The ``queues`` entry of ``summary.json``'s ``fairness`` (a scenario with a queue
        tree): per queue, the time averages over the sampled instants of its dominant share,
        the reference's and the deficit (each over the instants where it is defined),
        ``waiting_instants`` (instants with a task of the queue waiting) and ``holds_nothing_s``
        (the instants at which tasks of the queue wait while it runs none, times the grid's
        spacing: the time, on the grid, a queue with waiting tasks holds nothing)."""
        if self.queues is None:
            return {}
        out: dict[str, dict[str, float | int | None]] = {}
        rows = self._queue_rows
        for q, qid in enumerate(self.queues.ids):

            def avg(key: str, q: int = q) -> float | None:
                v = np.array([r[key][q] for r in rows], dtype=np.float64)
                v = v[~np.isnan(v)]
                return float(v.mean()) if v.size else None

            dom = np.array([r["dominant_share"][q] for r in rows], dtype=np.float64)
            ref = np.array([r["reference"][q] for r in rows], dtype=np.float64)
            deficit = (ref - dom)[~np.isnan(ref)]
            nothing = sum(bool(r["holds_nothing"][q]) for r in rows)
            out[qid] = {
                "dominant_share": avg("dominant_share"),
                "reference_dominant_share": avg("reference"),
                "deficit": float(deficit.mean()) if deficit.size else None,
                "waiting_instants": sum(bool(r["waiting"][q] > 0) for r in rows),
                "holds_nothing_s": nothing * self.interval_s,
            }
        return out

    @property
    def instants(self) -> int:
        """Instants measured so far."""
        return len(self._summary)

    def tables(self) -> dict[str, pa.Table]:
        """``fairness`` and ``fairness_summary``: the two tables of the run's folder (columns
        :func:`fairness_columns` and :data:`SUMMARY_COLUMNS`, in that order; undefined values
        are null)."""
        res = self.resources
        n_res = len(res)
        rows = self._rows

        def cat(key: str, dtype: Any = np.float64) -> np.ndarray:
            if not rows:
                return np.zeros((0, n_res) if key in ("demand", "share") else 0, dtype=dtype)
            return np.concatenate([r[key] for r in rows]).astype(dtype, copy=False)

        demand, share = cat("demand"), cat("share")
        cols: dict[str, pa.Array] = {
            "time_s": pa.array(cat("time_s"), pa.float64()),
            "user": pa.array([u for r in rows for u in r["user"]], pa.string()),
            **(
                {"queue": pa.array([q for r in rows for q in r["queue"]], pa.string())}
                if self.queues is not None
                else {}
            ),
            "tasks_running": pa.array(cat("tasks_running", np.int64), pa.int64()),
            "tasks_waiting": pa.array(cat("tasks_waiting", np.int64), pa.int64()),
        }
        for k, r in enumerate(res):
            cols[f"demand_{r}"] = _floats(demand[:, k])
        for k, r in enumerate(res):
            cols[f"share_{r}"] = _floats(share[:, k])
        for key in ("dominant_share", "reference_dominant_share", "deficit"):
            cols[key] = _floats(cat(key))
        frame = pd.DataFrame(self._summary, columns=list(SUMMARY_COLUMNS))
        summary = pa.table(
            {
                "time_s": pa.array(frame["time_s"].to_numpy(np.float64), pa.float64()),
                "active_users": pa.array(frame["active_users"].to_numpy(np.int64), pa.int64()),
                **{
                    c: _floats(frame[c].to_numpy(np.float64))
                    for c in ("jain_index", "max_deficit", "l1_distance")
                },
                "si_violations": pa.array(frame["si_violations"].to_numpy(np.int64), pa.int64()),
                "envious_pairs": pa.array(frame["envious_pairs"].to_numpy(np.int64), pa.int64()),
                "jain_entitlement": _floats(frame["jain_entitlement"].to_numpy(np.float64)),
                "zero_reference_users": _ints(frame["zero_reference_users"].to_numpy(np.float64)),
                "jain_raw_dominant": _floats(frame["jain_raw_dominant"].to_numpy(np.float64)),
            }
        )
        return {"fairness": pa.table(cols), "fairness_summary": summary}

    def summary(self) -> dict[str, Any]:
        """The ``fairness`` entry of ``summary.json``.

        ``interval_s``; ``reference`` (the mechanism); ``instants``; ``time_average``: the mean
        over the instants of every column of ``fairness_summary.parquet`` but ``time_s`` (the
        instants are equally spaced, so this is the time average over the sampled window), each
        over the instants where it is defined (null if none); ``reference_unavailable``:
        ``instants`` without a reference and their ``reasons`` (the solver's message, numbers
        as ``N``: count); ``solve_s`` and ``metrics_s``, seconds spent in the reference solves
        and in the rest of the probe (the engine's snapshot is not included).
        """
        frame = pd.DataFrame(self._summary, columns=list(SUMMARY_COLUMNS))
        avg: dict[str, float | None] = {}
        for c in SUMMARY_COLUMNS[1:]:
            v = frame[c].to_numpy(np.float64)
            v = v[~np.isnan(v)]
            avg[c] = float(v.mean()) if v.size else None
        return {
            "interval_s": self.interval_s,
            "reference": self.mechanism,
            "instants": len(frame),
            "time_average": avg,
            "reference_unavailable": {
                "instants": int(sum(self._unavailable.values())),
                "reasons": dict(sorted(self._unavailable.items())),
            },
            "solve_s": round(self.solve_s, 3),
            "metrics_s": round(self.metrics_s, 3),
            **({"queues": self.queue_summary()} if self.queues is not None else {}),
        }


def _floats(values: np.ndarray) -> pa.Array:
    """A float64 column whose NaN (undefined) entries are null."""
    values = np.asarray(values, dtype=np.float64)
    return pa.array(values, pa.float64(), mask=np.isnan(values))


def _ints(values: np.ndarray) -> pa.Array:
    """An int64 column of whole numbers held as float64, whose NaN (undefined) entries are
    null."""
    values = np.asarray(values, dtype=np.float64)
    missing = np.isnan(values)
    return pa.array(np.where(missing, 0.0, values).astype(np.int64), pa.int64(), mask=missing)
