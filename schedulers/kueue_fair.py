"""Kubernetes Kueue's fair sharing (``kueue-fair``): cluster queues in one cohort, admission by
dominant resource share, and fair-sharing preemption.

The source is Kueue at commit ``ff69552e`` of ``github.com/kubernetes-sigs/kueue`` (2026-08-22,
``v0.20.0-devel``; latest release v0.19.2): the concept pages "Fair Sharing" and "Preemption"
(``site/content/en/docs/concepts/fair_sharing.md``, ``preemption.md``), KEP-1714
(``keps/1714-fair-sharing/README.md``), and the code that implements them:
``pkg/cache/scheduler/fair_sharing.go`` (the dominant resource share, ``CompareDRS``),
``pkg/cache/scheduler/resource_node.go`` (quotas, lending and borrowing limits, what a
ClusterQueue may use), ``pkg/scheduler/fair_sharing_iterator.go`` (admission order),
``pkg/scheduler/scheduler.go`` (the admission cycle), ``pkg/scheduler/preemption/preemption.go``
(``fairPreemptions``, ``findCandidates``, ``fillBackWorkloads``),
``pkg/scheduler/preemption/fairsharing/`` (the target ordering, the strategies) and
``pkg/scheduler/preemption/common/ordering.go`` (``CandidatesOrdering``). ``docs/kueue-fair.md``
gives the mapping, worked examples and every point where fairsim simplifies.

Mapping. Every leaf of the scenario's queue tree (:class:`~fairsim.schedulers.exact.instance
.QueueTree`) is a ClusterQueue of one cohort, with one resource flavor: its ``guarantee`` is its
``nominalQuota``, its ``limit`` minus its guarantee its ``borrowingLimit``, and its weight (the
product of the weights' shares along its path, see :func:`flat_weights`) its
``fairSharing.weight``. A user at the root (no queue) is a ClusterQueue of its own with nominal
quota 0. The cohort's own nominal quota is the part of the pool no ClusterQueue holds
(``max(0, pool - sum of nominal quotas)``), so the cohort's quota is the pool. A workload is one
task, of equal priority with every other (fairsim has no priorities).

The dominant resource share (DRS) of a ClusterQueue ``c`` is, for each resource, its usage above
its nominal quota over what the cohort can lend (the cohort's quota less the ClusterQueues'
non-lendable parts), the largest of these, times 1000, over its weight
(:meth:`KueueFair.drs`).

An admission cycle (the scheduler's ticks, every ``cycle_s``): each ClusterQueue offers its
oldest waiting task (BestEffortFIFO: a head that cannot be admitted in this tick is set aside and
the next one offered at the next cycle); the heads are taken one at a time, first those whose
ClusterQueue would not borrow with them, then by the ClusterQueue's DRS with the head admitted,
then oldest first. A head that fits in its ClusterQueue's available quota is admitted on the
first server with room; one that does not fit may preempt (``fairPreemptions``): its evicted
targets wait again and the head keeps its quota for the rest of the cycle but is not admitted
(Kueue waits for the targets to end). Cycles repeat in a tick until a cycle preempts or changes
nothing, so a preemption loop advances time (one round per tick) and shows up in the run's
``preemption_loops``.

Simplifications (each named in ``docs/kueue-fair.md``): one flat cohort and one flavor (a queue
with children passes its weight down and is no cohort); equal priorities (``LowerPriority``
finds no candidate; ``LowerOrNewerEqualPriority`` takes tasks submitted after the preemptor);
discrete cycles; preempted workloads end at once; a head that fits in quota but on no server
waits for the next tick, and once one has found no server, later heads asking at least as much
are set aside without using a turn; feature gates at the commit's defaults
(``FairSharingPreemptWithinNominal`` and ``FairSharingPrioritizeNonBorrowing`` on,
``PrioritizePreemptorWorkloads`` as ``prioritize_preemptors``).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator, Mapping
from itertools import takewhile
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from fairsim.errors import ConfigError
from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.periodic import next_multiple_after
from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.scheduler import Eviction, PlaceableOncePerDemand

#: DRS values are rounded to this many decimals before comparing, so that equal shares tie.
_DIGITS = 9
#: Most demands remembered per tick as finding no server.
_MEMO = 64

Strategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
#: The ``preemptionStrategies`` lists Kueue accepts (``docs/concepts/preemption.md``).
SUPPORTED_STRATEGIES: tuple[tuple[str, ...], ...] = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)


def flat_weights(tree: QueueTree) -> np.ndarray:
    """Each queue's weight in one flat cohort: its weight's share among its siblings, times its
    parent's flat weight (the root's children keep their own weights).

    Parameters
    ----------
    tree : QueueTree

    Returns
    -------
    ndarray, shape (n_queues,)
        E.g. production (1), shared (2) holding batch (4) and free (1): 1, 2, 1.6, 0.4.

    Examples
    --------
    >>> t = QueueTree(("p", "s", "b", "f"), np.array([-1, -1, 1, 1]), np.array([1.0, 2, 4, 1]),
    ...     np.zeros((4, 1)), np.zeros(4, bool), np.full((4, 1), np.inf), np.array([0]))
    >>> flat_weights(t).tolist()
    [1.0, 2.0, 1.6, 0.4]
    """
    n = len(tree.ids)
    out = np.zeros(n)
    for q in range(n):  # a parent is declared before its children
        p = int(tree.parent[q])
        if p < 0:
            out[q] = float(tree.weight[q])
        else:
            siblings = float(tree.weight[tree.parent == p].sum())
            out[q] = out[p] * float(tree.weight[q]) / siblings
    return out


class _CQ:
    """A ClusterQueue: quotas in pool units, usage, waiting and admitted workloads."""

    __slots__ = (
        "admitted",
        "borrow",
        "lo",
        "local",
        "name",
        "nominal",
        "pos",
        "use",
        "waiting",
        "weight",
    )

    def __init__(
        self, name: str, nominal: np.ndarray, borrow: np.ndarray, local: np.ndarray, weight: float
    ) -> None:
        self.name = name
        self.nominal = nominal  # nominalQuota
        self.borrow = borrow  # borrowingLimit (inf: none)
        self.local = local  # nominal quota it does not lend (nominal - lendingLimit, or 0)
        self.weight = weight
        self.use = np.zeros_like(nominal)
        # task ids: ``waiting[pos:]`` the tasks waiting, in submission order (ascending ids);
        # ``waiting[lo:pos]`` the heads set aside in this tick (not admissible until the next,
        # in no particular order); ``waiting[:lo]`` admitted in this tick (dropped at its end)
        self.waiting: list[int] = []
        self.lo = 0
        self.pos = 0
        self.admitted: dict[int, tuple[float, int]] = {}  # task -> (admission time, order)

    def head(self) -> int | None:
        """The oldest waiting task not set aside, or None."""
        return self.waiting[self.pos] if self.pos < len(self.waiting) else None

    def push(self, task: int) -> None:
        """``task`` waits (arrived, or preempted: in its place by submission order)."""
        w = self.waiting
        if not w or task > w[-1]:
            w.append(task)
        else:
            bisect.insort(w, task, lo=self.pos)

    def admit_head(self) -> None:
        """The head leaves the waiting tasks: the first task set aside takes its slot."""
        self.waiting[self.pos] = self.waiting[self.lo]
        self.lo += 1
        self.pos += 1

    def restore(self) -> None:
        """The tick ends: the heads set aside wait again, in submission order."""
        w = self.waiting
        if self.pos > self.lo:
            w = w[self.lo :]
            w.sort()
            self.waiting = w
        elif self.lo:
            del w[: self.lo]
        self.lo = self.pos = 0


class KueueFair(PlaceableOncePerDemand):
    """Kueue fair sharing: ClusterQueues of one cohort, DRS admission order, fair preemption.

    Parameters
    ----------
    cycle_s : float > 0, default 1
        Period of the admission cycles (s): Kueue's scheduler loop, as discrete ticks.
    preemption_strategies : list of str, optional
        ``fairSharing.preemptionStrategies`` of Kueue's configuration: one of
        ``[LessThanOrEqualToFinalShare]``, ``[LessThanInitialShare]`` or
        ``[LessThanOrEqualToFinalShare, LessThanInitialShare]`` (Kueue's default, and the
        default here).
    within_cluster_queue : {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}
        ``preemption.withinClusterQueue`` of every ClusterQueue (Kueue's default ``Never``).
        Every workload has the same priority, so ``LowerPriority`` finds no candidate and
        ``LowerOrNewerEqualPriority`` takes admitted tasks submitted after the preemptor.
    reclaim_within_cohort : {"Never", "LowerPriority", "Any"}
        ``preemption.reclaimWithinCohort`` of every ClusterQueue (default ``Never``: no
        preemption across ClusterQueues; ``LowerPriority`` finds none, as above).
    lending_limit_share : mapping of str to list of float, optional
        ``lendingLimit`` per leaf queue id, as fractions of the pool per resource (at most the
        queue's guarantee); without it a ClusterQueue lends all its nominal quota.
    prioritize_preemptors : bool, default False
        Kueue's ``PrioritizePreemptorWorkloads`` feature gate (alpha in 0.20, off by default): a
        head that preempted goes first in later cycles.
    queues : QueueTree, optional
        The scenario's queue tree (supplied by the scenario); without it every user is a
        ClusterQueue with nominal quota 0.

    Raises
    ------
    fairsim.errors.ConfigError
        One line for a bad value (``kueue-fair: preemption_strategies: [...] (supported: ...)``,
        an unknown queue id or a lending limit above the guarantee).

    Attributes
    ----------
    work_conserving : bool
        False when a preemption policy is on: a cycle that preempts admits nothing more until
        the next tick, so a task may wait while a server has room.

    Notes
    -----
    The module docstring and ``docs/kueue-fair.md`` give the algorithm and its sources.
    """

    name = "kueue-fair"
    mechanism = "hdrf"  # fairness over time is measured against exact H-DRF on the same tree
    preempts = True
    leaf_queues_only = True  # only a leaf queue is a ClusterQueue; a cohort holds no workloads
    #: with a preemption policy on, an instance is not work conserving (``__init__``)
    work_conserving = True
    fifo_within_user = False  # BestEffortFIFO: a later task passes a head that cannot be admitted

    period_parameter: ClassVar[str | None] = "cycle_s"  # its ticks

    def __init__(
        self,
        *,
        cycle_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0,
        preemption_strategies: list[Strategy] | None = None,
        within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = (
            "Never"
        ),
        reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never",
        lending_limit_share: Mapping[str, list[float]] | None = None,
        prioritize_preemptors: bool = False,
        queues: QueueTree | None = None,
    ) -> None:
        strategies = tuple(preemption_strategies or SUPPORTED_STRATEGIES[2])
        if strategies not in SUPPORTED_STRATEGIES:
            raise ConfigError(
                f"kueue-fair: preemption_strategies: [{', '.join(strategies)}] (supported: "
                + ", ".join(f"[{', '.join(s)}]" for s in SUPPORTED_STRATEGIES)
                + ")"
            )
        lending = dict(lending_limit_share or {})
        if queues is not None:
            internal = {int(p) for p in queues.parent if p >= 0}
            for qid in lending:
                if qid not in queues.ids:
                    raise ConfigError(
                        f"kueue-fair: lending_limit_share: unknown queue {qid!r} "
                        f"(queues: {', '.join(queues.ids)})"
                    )
                if queues.ids.index(qid) in internal:
                    raise ConfigError(
                        f"kueue-fair: lending_limit_share: queue {qid!r} has children (only a "
                        "leaf queue is a ClusterQueue)"
                    )
            for q in sorted(internal):
                if queues.guaranteed[q] or np.isfinite(queues.limit[q]).any():
                    raise ConfigError(
                        f"kueue-fair: queue {queues.ids[q]!r}: a guarantee or limit on a queue "
                        "with children (only leaf queues are ClusterQueues)"
                    )
        for qid, values in lending.items():
            if any(not 0 <= float(v) <= 1 for v in values):
                raise ConfigError(
                    f"kueue-fair: lending_limit_share: {qid}: {list(values)} (expected fractions "
                    "of the pool in [0, 1])"
                )
        self.cycle_s = cycle_s
        self.preemption_strategies = strategies
        self.within_cluster_queue = within_cluster_queue
        self.reclaim_within_cohort = reclaim_within_cohort
        self.lending_limit_share = lending
        self.prioritize_preemptors = prioritize_preemptors
        self.queues = queues
        # a cycle that preempts admits nothing more until the next tick (Kueue waits for the
        # preempted workloads to end): a task may wait while a server has room
        self.work_conserving = within_cluster_queue == "Never" == reclaim_within_cohort

    @property
    def evicts(self) -> bool:
        """Whether this instance can ever evict a task: only when ``within_cluster_queue`` is
        ``LowerOrNewerEqualPriority`` or ``reclaim_within_cohort`` is ``Any`` (every workload has
        the same priority, so ``Never`` and ``LowerPriority`` find no candidate).

        Returns
        -------
        bool
        """
        return (
            self.within_cluster_queue == "LowerOrNewerEqualPriority"
            or self.reclaim_within_cohort == "Any"
        )

    # ------------------------------------------------------------------ set-up
    def bind(self, cluster: ClusterView) -> None:
        """Lay out the ClusterQueues (the tree's leaves; users at the root as they arrive) and
        the cohort's lendable quota."""
        super().bind(cluster)
        total = np.asarray(cluster.total, dtype=np.float64)
        n_r = len(total)
        self.total_ = total
        # the slack when comparing a demand with free amounts or quotas: the engine's, relative
        # to the largest server capacity of each resource, so that admissions do not depend on
        # a resource's units
        self.tol_ = cluster.tolerance
        self.tol_list_: list[float] = self.tol_.tolist()
        self.cqs_: list[_CQ] = []
        self.cq_of_user_: dict[int, int] = {}
        tree = self.queues
        leaf_cq: dict[int, int] = {}  # a leaf queue's ClusterQueue
        if tree is not None:
            weights = flat_weights(tree)
            parents = {int(p) for p in tree.parent if p >= 0}
            for q, qid in enumerate(tree.ids):
                if q in parents:
                    continue
                nominal = np.asarray(tree.guarantee[q], dtype=np.float64).copy()
                borrow = np.asarray(tree.limit[q], dtype=np.float64) - nominal
                local = np.zeros(n_r)
                if qid in self.lending_limit_share:
                    share = [float(v) for v in self.lending_limit_share[qid]]
                    if len(share) != n_r:
                        raise ConfigError(
                            f"kueue-fair: lending_limit_share: {qid}: {share} (expected "
                            f"{n_r} values, one per resource)"
                        )
                    lend = np.asarray(share) * total
                    if (lend > nominal + self.tol_).any():
                        raise ConfigError(
                            f"kueue-fair: lending_limit_share: {qid}: {share} (above the "
                            "queue's guarantee: a lendingLimit is at most the nominal quota)"
                        )
                    local = np.maximum(nominal - lend, 0.0)
                leaf_cq[q] = len(self.cqs_)
                self.cqs_.append(
                    _CQ(qid, nominal, np.maximum(borrow, 0.0), local, float(weights[q]))
                )
        self.leaf_cq_ = leaf_cq if tree is not None else {}
        nominal_sum = sum((c.nominal for c in self.cqs_), np.zeros(n_r))
        self.cohort_nominal_ = np.maximum(total - nominal_sum, 0.0)
        # the cohort's SubtreeQuota: its own quota plus what each ClusterQueue lends
        self.lendable_ = self.cohort_nominal_ + sum(
            (c.nominal - c.local for c in self.cqs_), np.zeros(n_r)
        )
        self.cohort_use_ = np.zeros(n_r)  # usage the ClusterQueues store in the cohort
        self.task_cq_: dict[int, int] = {}
        self.demand_: dict[int, np.ndarray] = {}
        self.demand_t_: dict[int, tuple[float, ...]] = {}
        self.avail_: dict[int, tuple[float, ...]] = {}  # available quota, cached
        self.preemptors_: set[int] = set()
        self.pass_key_: dict[int, tuple[float, ...] | None] = {}  # see on_arrival
        self.n_waiting_ = 0
        self.clock_ = 0.0
        self.due_ = False
        self.admissions_ = 0

    def _cq(self, task: int, user: int) -> int:
        q = self.cluster_.task_queue(task)
        if q >= 0:
            return self.leaf_cq_[q]
        c = self.cq_of_user_.get(user)
        if c is None:  # a user at the root: a ClusterQueue of its own, nominal quota 0
            n_r = len(self.total_)
            c = len(self.cqs_)
            self.cqs_.append(
                _CQ(f"user {user}", np.zeros(n_r), np.full(n_r, np.inf), np.zeros(n_r), 1.0)
            )
            self.cq_of_user_[user] = c
        return c

    # ------------------------------------------------------------------ events
    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """The task (a workload) waits in its user's ClusterQueue."""
        c = self._cq(task, user)
        self.task_cq_[task] = c
        self.demand_[task] = np.asarray(demand, dtype=np.float64)
        self.demand_t_[task] = tuple(float(x) for x in demand)
        self.cqs_[c].push(task)
        # what _pass_over tests a task by: its demand, None for one with a placement constraint
        self.pass_key_[task] = (
            self.demand_t_[task] if self.cluster_.task_mask(task) is None else None
        )
        self.n_waiting_ += 1

    def _add(self, c: int, d: np.ndarray) -> None:
        """Add usage ``d`` (negative: remove) to ClusterQueue ``c`` and the cohort."""
        self.avail_.clear()
        cq = self.cqs_[c]
        before = np.maximum(cq.use - cq.local, 0.0)
        cq.use = cq.use + d
        self.cohort_use_ += np.maximum(cq.use - cq.local, 0.0) - before

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The workload's quota is released."""
        c = self.task_cq_.pop(task)
        del self.cqs_[c].admitted[task]
        self._add(c, -self.demand_.pop(task))
        del self.demand_t_[task], self.pass_key_[task]

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """A preempted workload releases its quota and waits again, in its place by submission
        time (Kueue keeps its creation timestamp)."""
        c = self.task_cq_[task]
        del self.cqs_[c].admitted[task]
        self._add(c, -self.demand_[task])
        self.cqs_[c].push(task)
        self.n_waiting_ += 1

    def pending(self) -> int:
        """Tasks waiting."""
        return self.n_waiting_

    # ------------------------------------------------------------------ time
    def next_wakeup(self, now: float) -> float:
        """The next cycle (a multiple of ``cycle_s`` after ``now``) while a task waits."""
        self.clock_ = now
        if self.n_waiting_ == 0:
            return math.inf
        return next_multiple_after(now, self.cycle_s)

    def on_tick(self, now: float) -> None:
        """A cycle is due: admission runs in this pass."""
        self.clock_ = now
        self.due_ = True

    # ------------------------------------------------------------------ quota
    def available(self, c: int) -> np.ndarray:
        """What ClusterQueue ``c`` may still use, per resource (``resource_node.go``,
        ``available``): what it keeps of its own quota, plus what the cohort has free, bounded
        by its borrowing limit.

        Returns
        -------
        ndarray, shape (n_resources,)
            In pool units.
        """
        cq = self.cqs_[c]
        parent = self.lendable_ - self.cohort_use_
        stored = cq.nominal - cq.local
        used = np.maximum(cq.use - cq.local, 0.0)
        parent = np.minimum(stored - used + cq.borrow, parent)
        return np.maximum(cq.local - cq.use, 0.0) + parent

    def drs(self, c: int, extra: np.ndarray | None = None) -> tuple[bool, float]:
        """Dominant resource share of ClusterQueue ``c`` (``fair_sharing.go``,
        ``dominantResourceShare``), with ``extra`` usage added.

        Returns
        -------
        borrowing : bool
            Its usage exceeds its nominal quota in some resource.
        share : float
            ``max_r (usage_r - nominal_r)^+ / lendable_r * 1000 / weight``; 0 when it does not
            borrow, ``inf`` for a zero weight that borrows (KEP-1714, "Share value function").
        """
        cq = self.cqs_[c]
        use = cq.use if extra is None else cq.use + extra
        over = use - cq.nominal
        borrowing = bool((over > self.tol_).any())
        if not borrowing:
            return False, 0.0
        ok = self.lendable_ > 0  # a resource the cohort cannot lend does not count
        over = np.where(ok, np.maximum(over, 0.0), 0.0)
        ratio = float(np.max(over / np.where(ok, self.lendable_, 1.0))) * 1000
        if cq.weight == 0:
            return True, math.inf
        return True, round(ratio / cq.weight, _DIGITS)

    def _fits(self, c: int, d: np.ndarray) -> bool:
        return bool(np.all(d <= self.available(c) + self.tol_))

    def _fits_task(self, c: int, task: int) -> bool:
        """:meth:`_fits` for a waiting task, on a cached :meth:`available` (cleared by
        :meth:`_add`)."""
        avail = self.avail_.get(c)
        if avail is None:
            avail = self.avail_[c] = tuple(self.available(c).tolist())
        tol = self.tol_list_
        return all(x <= a + t for x, a, t in zip(self.demand_t_[task], avail, tol, strict=True))

    def _server(self, task: int) -> int | None:
        view = self.cluster_
        fits = (view.free + self.tol_ >= self.demand_[task]).all(axis=1)
        mask = view.task_mask(task)
        if mask is not None:
            fits &= mask
        servers = np.flatnonzero(fits)
        return int(servers[0]) if servers.size else None

    # ------------------------------------------------------------------ preemption
    def _order(self, v: int, c: int) -> tuple:
        """``CandidatesOrdering``: other ClusterQueues' workloads first, then the most recently
        admitted, then the lowest id (Kueue: UID)."""
        when, seq = self.cqs_[self.task_cq_[v]].admitted[v]
        return (self.task_cq_[v] == c, -when, -seq, v)

    def _next_target(self, c: int, lists: dict[int, list[int]], pruned: set[int]) -> int | None:
        """``TargetClusterQueueOrdering.nextTarget`` in a flat cohort: the ClusterQueue with the
        highest DRS among those borrowing (or the preemptor's) that still have candidates."""
        best: int | None = None
        best_share = -1.0  # NegativeDRS
        for t in sorted(lists):
            if t in pruned:
                continue
            borrowing, share = self.drs(t)
            if (not borrowing and t != c) or not lists[t]:
                pruned.add(t)
                continue
            if best is None or share > best_share:
                best, best_share = t, share
            elif share == best_share and self._order(lists[t][0], c) < self._order(
                lists[best][0], c
            ):
                best = t
        return best

    def _candidates(self, c: int, task: int, need: np.ndarray) -> list[int]:
        """``findCandidates``: admitted workloads using a resource that needs preemption, from
        the preemptor's ClusterQueue (``within_cluster_queue``) and from borrowing ClusterQueues
        (``reclaim_within_cohort``)."""
        out: list[int] = []

        def uses(v: int) -> bool:
            return bool((self.demand_[v][need] > 0).any())

        if self.within_cluster_queue == "LowerOrNewerEqualPriority":
            # task ids follow the submission order
            out += [v for v in self.cqs_[c].admitted if uses(v) and v > task]
        if self.reclaim_within_cohort == "Any":
            for o, cq in enumerate(self.cqs_):
                if o == c or not bool((cq.use[need] - cq.nominal[need] > self.tol_[need]).any()):
                    continue
                out += [v for v in cq.admitted if uses(v)]
        return sorted(out, key=lambda v: self._order(v, c))

    def _fits_fs(self, c: int, d: np.ndarray) -> bool:
        """``workloadFitsForFairSharing``: the preemptor's usage is simulated; take it out."""
        self._add(c, -d)
        ok = self._fits(c, d)
        self._add(c, d)
        return ok

    def targets(self, c: int, task: int) -> list[int]:
        """``fairPreemptions``: the workloads to preempt so that ``task`` fits in ClusterQueue
        ``c``'s quota, or ``[]`` (the state is unchanged on return).

        Returns
        -------
        list of int
            Task ids, after ``fillBackWorkloads``.
        """
        d = self.demand_[task]
        need = d > self.available(c) + self.tol_
        candidates = self._candidates(c, task, need)
        if not candidates:
            return []
        removed: list[int] = []

        def remove(v: int) -> None:
            self._add(self.task_cq_[v], -self.demand_[v])
            removed.append(v)

        self._add(c, d)  # DRS values include the incoming workload
        cq = self.cqs_[c]
        within_nominal = bool(np.all(cq.use[need] <= cq.nominal[need] + self.tol_[need]))
        strategies: dict[str, Callable[[tuple, tuple, tuple], bool]] = {
            "LessThanOrEqualToFinalShare": lambda p, _o, n: _cmp(p, n) <= 0,
            "LessThanInitialShare": lambda p, o, _n: _cmp(p, o) < 0,
        }
        first = strategies[self.preemption_strategies[0]]
        lists: dict[int, list[int]] = {}
        for v in candidates:
            lists.setdefault(self.task_cq_[v], []).append(v)
        pruned: set[int] = set()
        retry: list[int] = []
        fits = False
        while not fits:
            t = self._next_target(c, lists, pruned)
            if t is None:
                break
            if t == c or within_nominal:
                remove(lists[t].pop(0))
                fits = self._fits_fs(c, d)
                continue
            p_new, t_old = self.drs(c), self.drs(t)
            while lists[t]:
                v = lists[t].pop(0)
                t_new = self.drs(t, -self.demand_[v])
                if first(p_new, t_old, t_new):
                    remove(v)
                    fits = self._fits_fs(c, d)
                    break  # the values changed: choose the ClusterQueue again
                retry.append(v)
        if not fits and len(self.preemption_strategies) > 1:
            # rule S2-b over the candidates the first strategy passed over, one per queue
            lists = {}
            for v in retry:
                lists.setdefault(self.task_cq_[v], []).append(v)
            pruned = set()
            while not fits:
                t = self._next_target(c, lists, pruned)
                if t is None:
                    break
                if _cmp(self.drs(c), self.drs(t)) < 0:
                    remove(lists[t][0])
                    fits = self._fits_fs(c, d)
                pruned.add(t)
        self._add(c, -d)
        if fits:  # fillBackWorkloads: in reverse order, keep a target out only if needed
            i = len(removed) - 2
            while i >= 0:
                v = removed[i]
                self._add(self.task_cq_[v], self.demand_[v])
                if self._fits(c, d):
                    removed[i] = removed[-1]
                    removed.pop()
                else:
                    self._add(self.task_cq_[v], -self.demand_[v])
                i -= 1
        for v in removed:  # restore the snapshot
            self._add(self.task_cq_[v], self.demand_[v])
        return removed if fits else []

    # ------------------------------------------------------------------ admission
    def _entry_key(self, c: int, task: int) -> tuple:
        """``fairSharingIterator``'s order: preemptors (with ``prioritize_preemptors``), heads
        that do not make their ClusterQueue borrow, lower DRS with the head, older head."""
        borrowing, share = self.drs(c, self.demand_[task])
        first = not (self.prioritize_preemptors and task in self.preemptors_)
        return (first, borrowing, share, task)

    def _set_aside(self, c: int) -> None:
        self.cqs_[c].pos += 1

    def _dominates(self, memo: list[tuple[float, ...]], task: int) -> bool:
        """Whether ``task`` (unconstrained) asks at least as much of every resource as a demand
        in ``memo``."""
        if not memo or self.cluster_.task_mask(task) is not None:
            return False
        d = self.demand_t_[task]
        tol = self.tol_list_
        return any(all(a + t >= b for a, b, t in zip(d, m, tol, strict=True)) for m in memo)

    def _remember(self, memo: list[tuple[float, ...]], task: int) -> None:
        """Keep ``task``'s demand in ``memo``, which holds only its minimal demands."""
        if self.cluster_.task_mask(task) is not None or self._dominates(memo, task):
            return
        d = self.demand_t_[task]
        memo[:] = [
            m
            for m in memo
            if not all(a + t >= b for a, b, t in zip(m, d, self.tol_list_, strict=True))
        ]
        if len(memo) < _MEMO:
            memo.append(d)

    def _no_room(self, task: int) -> bool:
        """Whether ``task`` cannot fit on any server: it asks at least as much as a task that
        found no room in this tick (room only shrinks until an eviction)."""
        return self._dominates(self.no_room_, task)

    def _pass_over(self) -> None:
        """Set aside, at once, every head of a ClusterQueue that fits in quota but finds no
        server (as a task before it in this tick found none): they do not use a turn.

        Neither test changes during the pass, so each is made once per demand: the runs of
        tasks whose demands passed are skipped at C speed."""
        if not self.no_room_:
            return  # nothing dominates
        key = self.pass_key_.__getitem__
        for c, cq in enumerate(self.cqs_):
            w, pos, n = cq.waiting, cq.pos, len(cq.waiting)
            passed: set[tuple[float, ...]] = set()
            it = iter(w)
            it.__setstate__(pos)  # type: ignore[attr-defined]  # a list iterator, from ``pos``
            keys = map(key, it)
            while pos < n:
                # the run of tasks whose demands passed (takewhile consumes the next task too)
                pos += len(list(takewhile(passed.__contains__, keys)))
                if pos == n:
                    break
                task = w[pos]
                d = key(task)
                # a task with a placement constraint never dominates (:meth:`_dominates`)
                if d is None or not (self._no_room(task) and self._fits_task(c, task)):
                    break
                passed.add(d)
                pos += 1
            cq.pos = pos

    def _cycle(self) -> Iterator[tuple[int, int] | Eviction]:
        """One admission cycle; sets ``cycle_preempted_`` and ``cycle_moved_``."""
        view = self.cluster_
        # the heads are fixed when the cycle starts (Kueue's snapshot): a workload preempted
        # in this cycle is not offered again in it
        entries = {c: h for c, cq in enumerate(self.cqs_) if (h := cq.head()) is not None}
        reserved: list[tuple[int, np.ndarray]] = []
        self.cycle_preempted_ = False
        self.cycle_moved_ = bool(entries)
        while entries:
            c = min(entries, key=lambda k: self._entry_key(k, entries[k]))
            head = entries.pop(c)
            cq = self.cqs_[c]
            if cq.head() != head:
                continue  # set aside, or a preempted workload of this queue came before it
            task = head
            d = self.demand_[task]
            if self._fits_task(c, task):
                server = None if self._no_room(task) else self._server(task)
                if server is None:  # quota, but no server with room: wait for the next tick
                    self._remember(self.no_room_, task)
                    self._set_aside(c)
                    self._pass_over()
                    continue
                cq.admit_head()
                self.n_waiting_ -= 1
                self._add(c, d)
                self.admissions_ += 1
                cq.admitted[task] = (self.clock_, self.admissions_)
                self.preemptors_.discard(task)
                self.no_targets_.clear()  # usage changed: candidates may have too
                yield task, server
                continue
            # a later head of the queue with the same demand finds no more candidates
            memo = self.no_targets_.setdefault(c, set())
            victims = [] if self.demand_t_[task] in memo else self.targets(c, task)
            if not victims:
                memo.add(self.demand_t_[task])
                self._set_aside(c)  # no candidates: inadmissible until the next tick
                continue
            self.no_room_.clear()
            self.no_targets_.clear()
            for v in victims:
                yield Eviction(v, view.task_server(v))  # on_eviction runs before we resume
            self._add(c, d)  # the preemptor keeps its quota for the rest of the cycle
            reserved.append((c, d))
            self.preemptors_.add(task)
            self.cycle_preempted_ = True
        for c, d in reserved:
            self._add(c, -d)

    def decide(self) -> Iterator[tuple[int, int] | Eviction]:
        """At a tick: admission cycles until one preempts or none changes anything."""
        if not self.due_:
            return
        self.due_ = False
        self.no_room_: list[tuple[float, ...]] = []  # demands that found no server this tick
        self.no_targets_: dict[int, set[tuple[float, ...]]] = {}  # per queue: no targets
        while True:
            yield from self._cycle()
            if self.cycle_preempted_ or not self.cycle_moved_:
                break
        for cq in self.cqs_:  # heads set aside are offered again at the next tick
            cq.restore()


def _cmp(a: tuple[bool, float], b: tuple[bool, float]) -> int:
    """``CompareDRS`` of two (borrowing, share) values: -1, 0 or 1."""
    return (a[1] > b[1]) - (a[1] < b[1])
