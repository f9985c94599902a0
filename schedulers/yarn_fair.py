"""YARN's Fair Scheduler with its DominantResourceFairnessPolicy (``yarn-fair``), with preemption.

The source is the Apache Hadoop 3.3.6 documentation, "Hadoop: Fair Scheduler"
(``hadoop-yarn-site/FairScheduler.html``: queue elements ``minResources``, ``maxResources``,
``weight``, ``minSharePreemptionTimeout``, ``fairSharePreemptionTimeout``,
``fairSharePreemptionThreshold``, scheduling policy ``drf``; properties
``yarn.scheduler.fair.preemption.cluster-utilization-threshold`` and
``yarn.scheduler.fair.update-interval-ms``), read against the Hadoop source (``FSAppAttempt``,
``FSPreemptionThread`` and ``FSLeafQueue`` of the 3.x line; ``ComputeFairShares`` from a 2.x copy,
the one available to us: ``ComputeFairShares``, ``DominantResourceFairnessPolicy``, ``FSLeafQueue``,
``FSAppAttempt``, ``FSPreemptionThread`` in
``hadoop-yarn-server-resourcemanager/.../scheduler/fair``). ``docs/yarn-fair.md`` gives the
mapping, the worked example and every point where fairsim simplifies.

Mapping. The scenario's queue tree (:class:`~fairsim.schedulers.exact.instance.QueueTree`) is
the allocation file: a queue's ``guarantee`` is its ``minResources``, its ``limit`` its
``maxResources``, its ``weight`` its ``weight``; every queue uses the ``drf`` policy. A YARN
application is a pair (queue, user): a user's tasks in one queue are one application of weight
1, without minimum or maximum share (``FSAppAttempt``); a task is a container. Users at the
root (no queue) are applications of the root.

What a pass does (one ``decide()``):

* **Allocation** (a node heartbeat, ``FSParentQueue.assignContainer``): from the root, descend
  into the child that comes first by the DRF comparator, until an application; place its oldest
  waiting task on the first server (in server order) where it fits; repeat until no application
  can place its oldest task. The comparator (``DominantResourceFairnessComparator``): a child is
  *needy* when its usage of its dominant resource (its largest share of the cluster, usage over
  capacity times weight) is below its ``minResources`` of that resource; needy children come
  first, two needy ones compare their usage over minimum share, two others their weighted shares
  of the cluster, each sorted from the dominant resource down (lexicographically); ties go to
  the first declared queue, or the application whose first task came first. A task never takes
  its queue or an ancestor above ``maxResources`` (``FSQueue.fitsInMaxShare``).
* **Update** (``FairScheduler.update``, every ``update_interval_s``: the scheduler's ticks):
  instantaneous fair shares, from the root's (the pool) down, among the *active* children
  (queues with an application holding or waiting for a task; applications), per resource, by
  ``ComputeFairShares``: the weighted share ``w R`` clamped to [minimum, maximum] share, with
  ``R`` such that the shares sum to the parent's share (or to the sum of the maxima, when
  smaller); inactive queues get 0. The *steady* fair shares are the same over every queue,
  active or not (:attr:`YarnFair.steady_fair_share`).
* **Starvation and preemption** (``FSLeafQueue.updateStarvedApps``, ``FSPreemptionThread``),
  only at an update and only when the pool's utilisation (the largest share used of any
  resource) is above ``utilization_threshold``: in every queue that holds applications, the
  applications with waiting tasks, in comparator order, each *fair-share starved* when its
  dominant share of usage is below that of ``min(fairSharePreemptionThreshold * fair share,
  demand)`` and has been for ``fair_share_preemption_timeout_s`` (the first one not starved ends
  the scan); then the queue is *min-share starved* by ``min(minResources, demand) - usage``
  (per resource) when that has been positive for ``min_share_preemption_timeout_s``, less the
  fair-share starvation, shared out among its applications with waiting tasks in comparator
  order; an application preempted for less than ``wait_before_kill_s +
  starvation_check_delay_s`` ago is left out (``FSAppAttempt.shouldCheckForStarvation``), its
  queue's timer going on. For each starved application, its oldest waiting tasks that fit in
  its starvation (``getStarvedResourceRequests``); for each such task, the first server where
  the free room not kept for an earlier preemption, plus its most recently launched runs
  (``getRunningContainersWithAMsAtTheEnd``) not yet marked whose applications stay at or above
  their fair share (``canContainerBePreempted``: dominant shares, less what is already marked),
  makes room; those runs are marked and killed (evicted) ``wait_before_kill_s`` later
  (``FSPreemptionThread.preemptContainers``), when the task starts in the room kept for it if
  it is still its application's oldest waiting task and fits (else it waits as any other).
  With ``wait_before_kill_s: 0`` the runs are evicted and the task placed at once.

Simplifications (each named in ``docs/yarn-fair.md``): tasks are containers and every server
heartbeats at every pass, as often as it can take a task (``assignmultiple`` without a bound);
no reservations, no locality delay, no application masters (so no ``maxAMShare``), no
``maxRunningApps``; timeouts and thresholds are scheduler-wide (the tree has no per-queue
ones); the task a kill makes room for starts at the kill (YARN allocates it at the node's next
heartbeat), and kills due while no task waits happen at the next pass that has one; shares are
reals, not integers (no truncation); an application that had no task and gets one again starts its
fair-share timer afresh (YARN: a new application). Where the source's min-share split gives an
application its pending demand *less* the queue's remaining starvation
(``updateStarvedAppsMinshare``), fairsim gives it the remaining starvation, which the comment
beside that line describes.

Timers are read at updates only, as YARN's update thread reads them: a queue or application
starved at an update since the last update at which it was not, for at least the timeout.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.periodic import next_multiple_after
from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.scheduler import Eviction, PlaceableOncePerDemand

#: Slack when comparing a demand with free amounts, relative to the largest server capacity of
#: each resource (the engine accepts the same rounding:
#: :func:`~fairsim.simulator.cluster.capacity_tolerance`, held as ``tol_``); also the relative
#: slack of a queue's maximum and of a count of tasks.
TOLERANCE = 1e-9
#: Shares are rounded to this many decimals in the comparator, so that equal shares tie.
_DIGITS = 12


def fair_shares(
    weight: np.ndarray, minimum: np.ndarray, maximum: np.ndarray, total: float
) -> np.ndarray:
    """``ComputeFairShares`` for one resource: ``clip(w R, min, max)`` with ``R`` such that the
    shares sum to ``total`` (or to the sum of the maxima when that is smaller).

    Parameters
    ----------
    weight : ndarray, shape (n,)
        Positive weights.
    minimum, maximum : ndarray, shape (n,)
        Minimum and maximum shares (``inf`` for none), in the resource's units.
    total : float
        What the parent shares out.

    Returns
    -------
    ndarray, shape (n,)
        The shares. When the minima alone exceed ``total`` every child gets its minimum (YARN's
        binary search ends at ``R = 0``); shares are reals (YARN truncates them to integers).

    Examples
    --------
    >>> fair_shares(np.array([1.0, 2.0]), np.zeros(2), np.full(2, np.inf), 9.0).tolist()
    [3.0, 6.0]
    >>> fair_shares(np.array([1.0, 1.0]), np.array([6.0, 0.0]), np.full(2, np.inf), 8.0).tolist()
    [6.0, 2.0]
    """
    lo = np.minimum(minimum, maximum)
    if lo.sum() >= total:
        return lo.copy()
    if maximum.sum() <= total:
        return maximum.astype(np.float64).copy()
    points = np.unique(np.concatenate([[0.0], lo / weight, maximum / weight]))
    points = points[np.isfinite(points)]

    def used(r: float) -> float:
        return float(np.clip(weight * r, lo, maximum).sum())

    # the last breakpoint where the shares sum to at most `total` (f is non-decreasing)
    a, b = 0, len(points) - 1
    while a < b:
        m = (a + b + 1) // 2
        if used(float(points[m])) <= total:
            a = m
        else:
            b = m - 1
    r0 = float(points[a])
    slope = float(weight[(lo / weight <= r0) & (maximum / weight > r0)].sum())
    r = r0 + (total - used(r0)) / slope if slope > 0 else r0
    return np.clip(weight * r, lo, maximum)


def _dominant(x: np.ndarray, total: np.ndarray) -> float:
    """The largest share of the pool in ``x`` (``DominantResourceCalculator``, one type)."""
    return float(np.max(x / total))


def _in_order(heap: list[int]) -> Iterator[int]:
    """The items of a heap in ascending order, lazily (the heap must not change meanwhile):
    a walk of its tree, the smallest of the frontier first."""
    n = len(heap)
    frontier = [(heap[0], 0)] if n else []
    while frontier:
        item, i = heapq.heappop(frontier)
        yield item
        for j in (2 * i + 1, 2 * i + 2):
            if j < n:
                heapq.heappush(frontier, (heap[j], j))


class _App:
    """A YARN application: a user's tasks in one queue."""

    __slots__ = (
        "check_after",
        "fair_since",
        "leaving",
        "node",
        "order",
        "run",
        "running",
        "use",
        "user",
        "wait_sum",
        "waiting",
    )

    def __init__(self, node: int, user: int, order: int, n_r: int) -> None:
        self.node = node  # its queue's node (0: the root)
        self.user = user
        self.order = order  # tie-break: order of its first task
        self.waiting: list[int] = []  # heap of task ids (submission order)
        self.use = np.zeros(n_r)
        self.wait_sum = np.zeros(n_r)
        self.running = 0
        self.run: set[int] = set()  # its running tasks
        self.fair_since = -math.inf  # last update at which it was not fair-share starved
        self.check_after = -math.inf  # not checked for starvation before (a preemption's delay)
        self.leaving = np.zeros(n_r)  # its runs marked for preemption, not yet killed


class YarnFair(PlaceableOncePerDemand):
    """YARN Fair Scheduler, DominantResourceFairnessPolicy, hierarchical queues, preemption.

    Parameters
    ----------
    fair_share_preemption_timeout_s : float, default inf
        ``fairSharePreemptionTimeout`` (s): how long an application stays below
        ``fair_share_preemption_threshold`` times its fair share before it preempts. Hadoop's
        default is ``Long.MAX_VALUE``: never.
    min_share_preemption_timeout_s : float, default inf
        ``minSharePreemptionTimeout`` (s): how long a queue stays below its ``minResources``
        (its guarantee) before it preempts. Default never, as Hadoop's.
    fair_share_preemption_threshold : float in [0, 1], default 0.5
        ``fairSharePreemptionThreshold`` (Hadoop's default 0.5).
    utilization_threshold : float in [0, 1], default 0.8
        ``yarn.scheduler.fair.preemption.cluster-utilization-threshold``: no preemption unless
        the largest share used of any resource is above it (Hadoop's default 0.8).
    update_interval_s : float > 0, default 0.5
        ``yarn.scheduler.fair.update-interval-ms`` in seconds: how often fair shares and
        starvation are updated (the scheduler's ticks, while tasks wait and preemption is on).
    wait_before_kill_s : float >= 0, default 15
        ``yarn.scheduler.fair.waitTimeBeforeKill`` in seconds (Hadoop's default 15,000 ms): how
        long a run marked for preemption goes on before it is killed. 0: evicted at once.
    starvation_check_delay_s : float >= 0, default 14
        How long after ``wait_before_kill_s`` an application preempted for is not checked for
        starvation again: ``FSPreemptionThread``'s delay less its ``waitTimeBeforeKill``, that
        is four node heartbeats (Hadoop's default interval 1 s) plus
        ``yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck`` (default 10,000 ms).
    queues : QueueTree, optional
        The scenario's queue tree (supplied by the scenario, not a config key); without it
        every user is an application of the root.

    Attributes
    ----------
    fair_share : ndarray, shape (n_queues + 1, n_resources)
        Instantaneous fair share of the root (row 0) and of each queue (row ``q + 1``) at the
        last update, in pool units (0 for an inactive queue).
    steady_fair_share : ndarray, shape (n_queues + 1, n_resources)
        Steady fair share: the same computation over every queue, active or not.

    Raises
    ------
    fairsim.errors.ConfigError
        For a parameter out of its range (one line from the registry, e.g. ``yarn-fair:
        fair_share_preemption_threshold: 1.5 (Input should be less than or equal to 1)``).

    Notes
    -----
    The module docstring and ``docs/yarn-fair.md`` give the algorithm and its sources.
    """

    name = "yarn-fair"
    mechanism = "hdrf"  # fairness over time is measured against exact H-DRF on the same tree
    preempts = True
    fifo_within_user = True  # preemption serves a starved application's oldest tasks in order

    period_parameter: ClassVar[str | None] = "update_interval_s"  # its ticks

    def __init__(
        self,
        *,
        fair_share_preemption_timeout_s: Annotated[float, Field(ge=0)] = math.inf,
        min_share_preemption_timeout_s: Annotated[float, Field(ge=0)] = math.inf,
        fair_share_preemption_threshold: Annotated[float, Field(ge=0, le=1)] = 0.5,
        utilization_threshold: Annotated[float, Field(ge=0, le=1)] = 0.8,
        update_interval_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 0.5,
        wait_before_kill_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 15.0,
        starvation_check_delay_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 14.0,
        queues: QueueTree | None = None,
    ) -> None:
        self.fair_share_preemption_timeout_s = fair_share_preemption_timeout_s
        self.min_share_preemption_timeout_s = min_share_preemption_timeout_s
        self.fair_share_preemption_threshold = fair_share_preemption_threshold
        self.utilization_threshold = utilization_threshold
        self.update_interval_s = update_interval_s
        self.wait_before_kill_s = wait_before_kill_s
        self.starvation_check_delay_s = starvation_check_delay_s
        self.queues = queues

    @property
    def evicts(self) -> bool:
        """Whether this instance can ever evict a task: only with a finite
        ``fair_share_preemption_timeout_s`` or ``min_share_preemption_timeout_s`` (with both
        infinite, the defaults, it never updates its starvation and never marks a run).

        Returns
        -------
        bool
        """
        return math.isfinite(self.fair_share_preemption_timeout_s) or math.isfinite(
            self.min_share_preemption_timeout_s
        )

    # ------------------------------------------------------------------ set-up
    def bind(self, cluster: ClusterView) -> None:
        """Lay out the tree (root, queues; applications as their tasks arrive) and compute the
        steady fair shares."""
        super().bind(cluster)
        tree, n_r = self.queues, cluster.n_resources
        n_q = 0 if tree is None else len(tree.ids)
        self.total_ = np.asarray(cluster.total, dtype=np.float64)
        self.total_list_ = self.total_.tolist()
        # the slack of every resource in its own units (the engine's: relative to the largest
        # capacity), so that placements and preemptions do not depend on a resource's units
        self.tol_ = cluster.tolerance
        self.tol_list_: list[float] = self.tol_.tolist()
        self.zero_ = np.zeros(n_r)
        self.parent_ = [-1] + ([int(p) + 1 for p in tree.parent] if tree is not None else [])
        self.weight_ = [1.0] + ([float(w) for w in tree.weight] if tree is not None else [])
        self.min_ = np.zeros((n_q + 1, n_r))
        self.max_ = np.full((n_q + 1, n_r), np.inf)
        if tree is not None:
            self.min_[1:] = tree.guarantee
            self.max_[1:] = tree.limit
        self.children_: list[list[int]] = [[] for _ in range(n_q + 1)]
        for a in range(1, n_q + 1):
            self.children_[self.parent_[a]].append(a)
        self.apps_of_: list[list[int]] = [[] for _ in range(n_q + 1)]
        self.path_: list[list[int]] = []  # a node and its ancestors, root last
        for a in range(n_q + 1):
            k, p = a, []
            while k >= 0:
                p.append(k)
                k = self.parent_[k]
            self.path_.append(p)
        self.use_ = np.zeros((n_q + 1, n_r))
        self.demand_ = np.zeros((n_q + 1, n_r))  # usage plus waiting, per queue
        self.active_ = [0] * (n_q + 1)  # active applications below
        self.waiting_below_ = [0] * (n_q + 1)  # applications with waiting tasks below
        self.apps_: list[_App] = []
        self.first_app_ = n_q + 1  # heap ids: queues 0..n_q, application x at first_app_ + x
        self.ver_: list[int] = [0] * (n_q + 1)
        self.heap_: list[list[tuple[tuple, int, int]]] = [[] for _ in range(n_q + 1)]
        self.limited_ = bool(np.isfinite(self.max_).any())
        self.app_of_: dict[tuple[int, int], int] = {}
        self.task_app_: dict[int, int] = {}
        self.task_demand_: dict[int, np.ndarray] = {}
        self.n_waiting_ = 0
        self.fair_share = np.zeros((n_q + 1, n_r))
        self.app_fair_: dict[int, np.ndarray] = {}
        self.min_since_ = [-math.inf] * (n_q + 1)  # last update at which not min-share starved
        self.clock_ = -math.inf  # time of the last pass (next_wakeup) or update (on_tick)
        self.idle_ = True  # no task waited after the last pass: no one starved since then
        self.update_due_ = False
        self.kill_due_ = False
        self.next_update_ = math.inf
        # preemptions decided, not yet carried out: (kill time, sequence, victims, task, server)
        self.kills_: list[tuple[float, int, list[int], int, int]] = []
        self.doomed_: set[int] = set()  # runs marked for preemption
        self.n_kills_ = 0
        # per server, the demands of the tasks its marked runs will make room for, and their
        # number (FSSchedulerNode's resources preempted for an application)
        self.reserved_ = np.zeros((cluster.n_servers, n_r))
        self.n_reserved_ = [0] * cluster.n_servers
        self.steady_fair_share = self._shares(steady=True)
        self.preempting_ = math.isfinite(self.fair_share_preemption_timeout_s) or math.isfinite(
            self.min_share_preemption_timeout_s
        )

    # ------------------------------------------------------------------ events
    def _app(self, task: int, user: int) -> _App:
        q = self.cluster_.task_queue(task) if self.queues is not None else -1
        if self.queues is not None and q < 0 and 0 <= user < len(self.queues.user_queue):
            q = int(self.queues.user_queue[user])
        key = (q + 1, user)
        a = self.app_of_.get(key)
        if a is None:
            a = len(self.apps_)
            self.app_of_[key] = a
            self.apps_.append(_App(q + 1, user, a, self.cluster_.n_resources))
            self.ver_.append(0)
            self.apps_of_[q + 1].append(a)
        return self.apps_[a]

    def _active_change(self, app: _App, before: bool) -> None:
        now = bool(app.waiting) or app.running > 0
        if now != before:
            for k in self.path_[app.node]:
                self.active_[k] += 1 if now else -1
            if now:
                app.fair_since = self.clock_  # a new application: its timer starts afresh

    def _wait(self, app: _App, task: int) -> None:
        before = bool(app.waiting) or app.running > 0
        fresh = not app.waiting  # its key is unchanged unless it starts to wait
        if fresh:
            for k in self.path_[app.node]:
                self.waiting_below_[k] += 1
        heapq.heappush(app.waiting, task)
        d = self.task_demand_[task]
        app.wait_sum += d
        for k in self.path_[app.node]:
            self.demand_[k] += d
        self.n_waiting_ += 1
        self._active_change(app, before)
        if fresh:
            self._touch(app)

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """The task waits in its application (the user's, in the task's queue)."""
        app = self._app(task, user)
        self.task_app_[task] = app.order
        self.task_demand_[task] = np.asarray(demand, dtype=np.float64)
        self._wait(app, task)

    def _stop(self, task: int) -> _App:
        """Take a running task's usage out of its application and queues (ended or evicted)."""
        app = self.apps_[self.task_app_[task]]
        d = self.task_demand_[task]
        if task in self.doomed_:  # ended or evicted before its kill: nothing to preempt any more
            self.doomed_.discard(task)
            app.leaving -= d
        app.use -= d
        app.running -= 1
        app.run.discard(task)
        for k in self.path_[app.node]:
            self.use_[k] -= d
            self.demand_[k] -= d
        return app

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The task's usage leaves its application and queues."""
        app = self._stop(task)
        self._active_change(app, True)
        self._touch(app)
        del self.task_app_[task], self.task_demand_[task]

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The evicted task waits again in its application, in submission order."""
        # running -> waiting: the application stays active (its timer goes on)
        app = self._stop(task)
        app.running += 1  # _wait sees it active
        self._wait(app, task)
        app.running -= 1
        self._touch(app)

    def _start(self, task: int) -> None:
        app = self.apps_[self.task_app_[task]]
        popped = heapq.heappop(app.waiting) if app.waiting and app.waiting[0] == task else None
        if popped is None:
            app.waiting.remove(task)
            heapq.heapify(app.waiting)
        d = self.task_demand_[task]
        app.wait_sum -= d
        app.use += d
        app.running += 1
        app.run.add(task)
        for k in self.path_[app.node]:
            self.use_[k] += d
        if not app.waiting:
            for k in self.path_[app.node]:
                self.waiting_below_[k] -= 1
        self.n_waiting_ -= 1
        self._touch(app)

    def pending(self) -> int:
        """Tasks waiting."""
        return self.n_waiting_

    # ------------------------------------------------------------------ time
    def next_wakeup(self, now: float) -> float:
        """The next update (a multiple of ``update_interval_s`` after ``now``) while preemption
        is on and a task runs; never otherwise (no preemption can help)."""
        if self.n_waiting_ == 0:
            self.idle_ = True  # nothing waits from this pass on: no one is starved
        elif self.idle_:
            self.idle_ = False  # tasks wait since this pass: timers start now
            self._reset_timers(now)
        self.clock_ = now
        t = next_multiple_after(now, self.update_interval_s)
        kill = self.kills_[0][0] if self.kills_ else math.inf
        if kill <= now:  # overdue (no task waited at its time): at the next update's time
            kill = t
        if not self.preempting_ or not self.use_[0].any():
            self.next_update_ = math.inf
            return kill
        self.next_update_ = t
        return min(t, kill)

    def on_tick(self, now: float) -> None:
        """An update is due (fair shares and starvation are updated in this pass), or a
        preemption's kills."""
        self.kill_due_ = bool(self.kills_) and self.kills_[0][0] <= now
        if now < self.next_update_:
            self.clock_ = now
            return  # the kills only (decide carries them out)
        if self.idle_:
            self.idle_ = False
            self._reset_timers(now)
        self.clock_ = now
        self.update_due_ = True

    def _reset_timers(self, now: float) -> None:
        self.min_since_ = [now] * len(self.min_since_)
        for app in self.apps_:
            app.fair_since = now

    # ------------------------------------------------------------------ fair shares
    def _shares(self, *, steady: bool) -> np.ndarray:
        """Fair shares of the root and the queues (rows), and of the applications
        (``app_fair_``, instantaneous only), from the root down."""
        n = len(self.parent_)
        out = np.zeros((n, len(self.total_)))
        out[0] = self.total_
        for a in range(n):
            kids = [c for c in self.children_[a] if steady or self.active_[c] > 0]
            apps = [] if steady else [x for x in self.apps_of_[a] if self._is_active(x)]
            if not kids and not apps:
                continue
            w = np.array([self.weight_[c] for c in kids] + [1.0] * len(apps))
            lo = np.vstack([self.min_[c] for c in kids] + [np.zeros_like(self.total_)] * len(apps))
            hi = np.vstack(
                [self.max_[c] for c in kids] + [np.full_like(self.total_, np.inf)] * len(apps)
            )
            share = np.column_stack(
                [
                    fair_shares(w, lo[:, r], hi[:, r], float(out[a, r]))
                    for r in range(len(self.total_))
                ]
            )
            for i, c in enumerate(kids):
                out[c] = share[i]
            for i, x in enumerate(apps):
                self.app_fair_[x] = share[len(kids) + i]
        return out

    def _is_active(self, a: int) -> bool:
        app = self.apps_[a]
        return bool(app.waiting) or app.running > 0

    # ------------------------------------------------------------------ the comparator
    def _key(self, use: np.ndarray, minimum: np.ndarray, weight: float, order: int) -> tuple:
        """``DominantResourceFairnessComparator``'s order as a sort key."""
        u, m, t = use.tolist(), minimum.tolist(), self.total_list_
        cs = [u[r] / (t[r] * weight) for r in range(len(u))]
        order_r = sorted(range(len(cs)), key=lambda r: -cs[r])
        dom = order_r[0]
        if m[dom] > 0 and u[dom] < m[dom]:
            ratio = [u[r] / m[r] if m[r] > 0 else math.inf for r in order_r]
            return (0, tuple([round(x, _DIGITS) for x in ratio]), order)
        return (1, tuple([round(cs[r], _DIGITS) for r in order_r]), order)

    def _queue_key(self, a: int) -> tuple:
        return self._key(self.use_[a], self.min_[a], self.weight_[a], a)

    def _app_key(self, x: int) -> tuple:
        app = self.apps_[x]
        return self._key(app.use, self.zero_, 1.0, self.first_app_ + app.order)

    # ------------------------------------------------------------------ placing
    def _fits_max(self, node: int, d: np.ndarray) -> bool:
        if not self.limited_:
            return True
        for k in self.path_[node]:
            if np.any(self.use_[k] + d > self.max_[k] * (1 + TOLERANCE) + self.tol_):
                return False
        return True

    def _first_fit(self, task: int, no_room: list[list[float]] | None = None) -> int | None:
        d = self.task_demand_[task]
        mask = self.cluster_.task_mask(task)
        if no_room is not None and mask is None:
            dl = d.tolist()
            n_r = len(dl)
            if any(all(dl[r] >= m[r] for r in range(n_r)) for m in no_room):
                return None
        fits = (self.cluster_.free + self.tol_ >= d).all(axis=1)
        if mask is not None:
            fits &= mask
        servers = np.flatnonzero(fits)
        if servers.size:
            return int(servers[0])
        if no_room is not None and mask is None and len(no_room) < 64:
            no_room.append(dl)
        return None

    def _touch(self, app: _App) -> None:
        """The application's usage or waiting tasks changed: its key and its queues' keys are
        pushed again into their parents' heaps (older entries go stale)."""
        nid = self.first_app_ + app.order
        self.ver_[nid] += 1
        if app.waiting:
            heapq.heappush(self.heap_[app.node], (self._app_key(app.order), nid, self.ver_[nid]))
        for a in self.path_[app.node][:-1]:  # the queues, not the root
            self.ver_[a] += 1
            if self.waiting_below_[a] > 0:
                heapq.heappush(self.heap_[self.parent_[a]], (self._queue_key(a), a, self.ver_[a]))

    def _descend(self, node: int, aside: list[tuple[int, tuple]]) -> int | None:
        """The application the comparator serves next below ``node`` (None: all blocked in
        this pass); children found blocked are set ``aside`` until the pass ends."""
        heap, first = self.heap_[node], self.first_app_
        while heap:
            entry = heap[0]
            _, nid, ver = entry
            if ver != self.ver_[nid] or (
                self.waiting_below_[nid] == 0
                if nid < first
                else not self.apps_[nid - first].waiting
            ):
                heapq.heappop(heap)  # stale
                continue
            if nid >= first:
                return nid - first
            found = self._descend(nid, aside)
            if found is not None:
                return found
            aside.append((node, heapq.heappop(heap)))
        return None

    def _allocate(self, started: set[int]) -> Iterator[tuple[int, int]]:
        aside: list[tuple[int, tuple]] = []  # (parent, heap entry) of children blocked
        # demands of unconstrained tasks that found no server in this allocation: free room
        # only shrinks in it, so a demand at least as large in every resource finds none either
        no_room: list[list[float]] = []
        try:
            while self.n_waiting_:
                x = self._descend(0, aside)
                if x is None:
                    return
                app = self.apps_[x]
                task = app.waiting[0]
                server = None
                if self._fits_max(app.node, self.task_demand_[task]):
                    server = self._first_fit(task, no_room)
                if server is None:
                    aside.append((app.node, heapq.heappop(self.heap_[app.node])))
                    continue
                self._start(task)
                started.add(task)
                yield task, server
        finally:
            for parent, entry in aside:  # blocked for this pass only
                heapq.heappush(self.heap_[parent], entry)

    # ------------------------------------------------------------------ starvation
    def _update(self) -> list[tuple[int, np.ndarray]]:
        """Fair shares, then the starved applications and their starvation (in pool units)."""
        now, total = self.clock_, self.total_
        self.app_fair_ = {}
        self.fair_share = self._shares(steady=False)
        if not float(np.max(self.use_[0] / total)) > self.utilization_threshold:
            return []
        starved: list[tuple[int, np.ndarray]] = []
        for node in range(len(self.parent_)):
            waiting = [x for x in self.apps_of_[node] if self.apps_[x].waiting]
            if not waiting:
                if self.apps_of_[node]:
                    self.min_since_[node] = now
                continue
            # FSLeafQueue.fetchAppsWithDemand(false): an application preempted for lately is
            # not checked (FSAppAttempt.shouldCheckForStarvation); its queue's timer goes on
            apps = [x for x in waiting if self.apps_[x].check_after <= now]
            apps.sort(key=self._app_key)
            fs_total = np.zeros_like(total)
            fs_of: dict[int, np.ndarray] = {}
            for x in apps:
                app = self.apps_[x]
                demand = app.use + app.wait_sum
                fair_demand = np.minimum(
                    self.app_fair_[x] * self.fair_share_preemption_threshold, demand
                )
                if not _dominant(app.use, total) < _dominant(fair_demand, total):
                    app.fair_since = now
                    break  # FSLeafQueue.updateStarvedAppsFairshare stops at the first
                if now - app.fair_since < self.fair_share_preemption_timeout_s:
                    break
                s = np.maximum(fair_demand - app.use, 0.0)
                fs_of[x] = s
                fs_total += s
            ms = np.zeros_like(total)
            if node > 0:
                q_demand = np.minimum(self.demand_[node], self.max_[node])
                ms = np.maximum(np.minimum(self.min_[node], q_demand) - self.use_[node], 0.0)
                if not (ms > self.tol_).any():
                    self.min_since_[node] = now
                if now - self.min_since_[node] < self.min_share_preemption_timeout_s:
                    ms[:] = 0.0
                ms = np.maximum(ms - fs_total, 0.0)
            for x in apps:
                app = self.apps_[x]
                own = fs_of.get(x, np.zeros_like(total))
                if (ms > self.tol_).any():
                    mine = np.maximum(app.wait_sum - own, 0.0)
                    if _dominant(mine, total) > _dominant(ms, total):
                        mine = ms.copy()  # the remaining starvation (see the module docstring)
                        ms[:] = 0.0
                    else:
                        ms = np.maximum(ms - mine, 0.0)
                    own = own + mine
                if (own > self.tol_).any():
                    starved.append((x, own))
        return starved

    def _requests(self, x: int, starvation: np.ndarray) -> list[int]:
        """``getStarvedResourceRequests``: the application's oldest waiting tasks, each one
        container, while the starvation covers it (by the largest ratio of any resource)."""
        pending = starvation.copy()
        out = []
        for task in _in_order(self.apps_[x].waiting):
            if not (pending > self.tol_).any():
                break
            d = self.task_demand_[task]
            ratio = max((pending[r] / d[r] for r in range(len(d)) if d[r] > 0), default=0.0)
            if math.floor(ratio + TOLERANCE) < 1:
                break  # YARN skips to the next request; fairsim keeps the order of submission
            out.append(task)
            pending = np.maximum(pending - d, 0.0)
        return out

    def _victims(
        self,
        task: int,
        started: set[int],
        bound: np.ndarray,
        below: set[int],
        fresh: set[int],
        fair_dom: dict[int, float],
        reach: dict[int, list[float]],
        base: dict[int, list[float]],
        readers: dict[int, list[int]],
    ) -> tuple[list[int], int] | None:
        """``identifyContainersToPreemptForOneContainer``: the first server where evicting its
        most recently launched runs that may be preempted makes room for ``task``.

        The scan is plain Python over floats (the same operations, in the same order, as on
        the pool's arrays), on the servers whose ``bound`` (free room plus the runs that may
        be preempted) could hold the task. A server's scan adds its runs' demands to its room
        in an order and with a choice of runs that do not depend on the task, so the room it
        reaches with every run it may take (``reach``, per server, kept by the caller while
        nothing changes, as ``base``, an application's usage less what is leaving) says whether
        a later search succeeds there: the room only grows along the scan, so a search succeeds
        on a server exactly when its reach covers the task. ``readers``: per application, the
        servers whose reach read its usage (to forget when it changes)."""
        view, demand = self.cluster_, self.task_demand_
        need = demand[task].tolist()
        n_r = len(need)
        mask = view.task_mask(task)
        # ``fresh``: applications that started a task in this pass keep their runs in it (an
        # older task evicted beside a younger one just started would wait behind it);
        # ``below``: applications below their fair share lose no run (the check below)
        if all(x in below or x in fresh for x in self.app_fair_):
            return None
        # servers where free room plus every run that may be preempted could make room
        room: np.ndarray = np.asarray((bound + self.tol_ >= demand[task]).all(axis=1))
        if mask is not None:
            room &= mask
        skip = below | fresh
        for server in np.flatnonzero(room).tolist():
            r = reach.get(server)
            if r is None:
                read: set[int] = set()
                r = reach[server] = self._scan(server, started, skip, fair_dom, base, read=read)[0]
                for x in read:
                    readers.setdefault(x, []).append(server)
            tol = self.tol_list_
            if all(r[k] + tol[k] >= need[k] for k in range(n_r)):
                return self._scan(server, started, skip, fair_dom, base, need)[1], server
        return None

    def _scan(
        self,
        server: int,
        started: set[int],
        skip: set[int],
        fair_dom: dict[int, float],
        base: dict[int, list[float]],
        need: list[float] | None = None,
        read: set[int] | None = None,
    ) -> tuple[list[float], list[int]]:
        """One server's victim scan: its free room not kept for a pending preemption, plus its
        most recently launched runs first, each taken while its application stays at or above
        its fair share (less what is already leaving or taken). Returns the room reached and
        the runs taken, stopping as soon as the room covers ``need`` (None: never); adds to
        ``read`` the applications whose usage it read."""
        view, demand, total = self.cluster_, self.task_demand_, self.total_list_
        n_r = len(total)
        potential = (
            np.maximum(view.free[server] - self.reserved_[server], 0.0).tolist()
            if self.n_reserved_[server]
            else view.free[server].tolist()
        )
        victims: list[int] = []
        tol = self.tol_list_
        if need is not None and all(potential[r] + tol[r] >= need[r] for r in range(n_r)):
            return potential, victims
        doomed, task_app = self.doomed_, self.task_app_
        taken: dict[int, list[float]] = {}
        for v in reversed(view.running_on(server)):
            x = task_app[v]
            if x in skip or v in started or v in doomed:
                continue
            b = base.get(x)
            if b is None:
                app = self.apps_[x]
                b = base[x] = (app.use - app.leaving).tolist()
            if read is not None:
                read.add(x)
            d = demand[v].tolist()
            t = taken.get(x)
            after = (
                [b[r] - 0.0 - d[r] for r in range(n_r)]
                if t is None
                else [b[r] - t[r] - d[r] for r in range(n_r)]
            )
            fair = fair_dom.get(x)
            if fair is None or not max(after[r] / total[r] for r in range(n_r)) < fair:
                victims.append(v)
                taken[x] = (
                    [0.0 + d[r] for r in range(n_r)]
                    if t is None
                    else [t[r] + d[r] for r in range(n_r)]
                )
                potential = [potential[r] + d[r] for r in range(n_r)]
                if need is not None and all(potential[r] + tol[r] >= need[r] for r in range(n_r)):
                    return potential, victims
        return potential, victims

    def _preempt(
        self, starved: list[tuple[int, np.ndarray]], started: set[int]
    ) -> Iterator[tuple[int, int] | Eviction]:
        view, total, demand, doomed = self.cluster_, self.total_, self.task_demand_, self.doomed_
        fresh = {self.task_app_[t] for t in started}
        fair_dom = {x: _dominant(fair, total) for x, fair in self.app_fair_.items()}
        # per server, free room not kept for a pending preemption plus every run that may yet
        # be preempted in this pass: an upper bound on the room a search finds there (it only
        # shrinks). A run may be preempted only if its application is not fresh and would stay
        # at or above its fair share without it alone (an application's usage only falls in
        # the pass, unless it starts a task and so becomes fresh)
        bound = np.maximum(np.asarray(view.free, dtype=np.float64) - self.reserved_, 0.0)
        below: set[int] = set()
        counted: dict[int, list[int]] = {}  # per application, the runs added to the bound
        on: list[int] = []  # the servers of the runs added, and their demands, in order
        added: list[np.ndarray] = []
        for x in self.app_fair_:
            app = self.apps_[x]
            base = app.use - app.leaving
            if _dominant(base, total) < fair_dom[x]:
                below.add(x)  # stays below: its usage only falls, or it is fresh
            elif x not in fresh:
                runs = [t for t in app.run if t not in doomed]
                if not runs:
                    counted[x] = []
                    continue
                d = np.array([demand[t] for t in runs])
                # each run alone: the application's dominant share without it (_dominant)
                keep = ~(np.max((base - d) / total, axis=1) < fair_dom[x])
                counted[x] = [t for t, k in zip(runs, keep.tolist(), strict=True) if k]
                on += [view.task_server(t) for t in counted[x]]
                added.append(d[keep])
        if on:  # added one run at a time, in the order above (np.add.at is unbuffered)
            np.add.at(bound, np.asarray(on, dtype=np.intp), np.concatenate(added))
        # per server, the room its scan reaches, and per application its usage less what is
        # leaving: kept until a search succeeds and marks, evicts or starts runs (below)
        reach: dict[int, list[float]] = {}
        base_of: dict[int, list[float]] = {}
        readers: dict[int, list[int]] = {}
        for x, starvation in starved:
            # FSPreemptionThread.run: preemptionTriggered, whether or not victims were found
            self.apps_[x].check_after = (
                self.clock_ + self.wait_before_kill_s + self.starvation_check_delay_s
            )
            for task in self._requests(x, starvation):
                app = self.apps_[x]
                if task not in app.waiting or not self._fits_max(app.node, self.task_demand_[task]):
                    break
                found = self._victims(
                    task, started, bound, below, fresh, fair_dom, reach, base_of, readers
                )
                if found is None:
                    break  # a later task of the application does not jump the queue
                victims, server = found
                if victims and self.wait_before_kill_s > 0:
                    # FSPreemptionThread.preemptContainers: killed after waitTimeBeforeKill;
                    # the task waits until then, its room kept for it. What changes: the
                    # server's room kept, its runs marked and their applications' usage less
                    # what is leaving (read by the reach of the servers listed for them)
                    reach.pop(server, None)
                    for y in {self.task_app_[v] for v in victims}:
                        base_of.pop(y, None)
                        for other in readers.pop(y, ()):
                            reach.pop(other, None)
                    for v in victims:
                        self.doomed_.add(v)
                        self.apps_[self.task_app_[v]].leaving += self.task_demand_[v]
                    kill_at = self.clock_ + self.wait_before_kill_s
                    heapq.heappush(self.kills_, (kill_at, self.n_kills_, victims, task, server))
                    self.n_kills_ += 1
                    self.reserved_[server] += self.task_demand_[task]
                    self.n_reserved_[server] += 1
                    bound[server] -= self.task_demand_[task]
                    continue
                reach.clear()  # runs evicted and started, an application fresh: start afresh
                base_of.clear()
                readers.clear()
                for v in victims:
                    yield Eviction(v, server)  # on_eviction runs before we resume
                self._start(task)
                started.add(task)
                bound[server] -= demand[task]
                if x not in fresh:
                    fresh.add(x)  # its runs are no longer preempted in this pass
                    for t in counted.pop(x, ()):
                        if t in self.apps_[x].run and t not in doomed:
                            bound[view.task_server(t)] -= demand[t]
                yield task, server

    def _kill(self, started: set[int]) -> Iterator[tuple[int, int] | Eviction]:
        """The preemptions whose time has come: their runs still marked are evicted, and the
        task they were for starts in the room when it is still its application's oldest
        waiting task and fits there (else it waits, as any other)."""
        view = self.cluster_
        while self.kills_ and self.kills_[0][0] <= self.clock_:
            _, _, victims, task, server = heapq.heappop(self.kills_)
            self.n_reserved_[server] -= 1
            if self.n_reserved_[server]:
                self.reserved_[server] -= self.task_demand_[task]
            else:
                self.reserved_[server] = 0.0  # exactly, without rounding left behind
            for v in victims:
                if v in self.doomed_:
                    yield Eviction(v, server)  # on_eviction unmarks it
            x = self.task_app_.get(task)
            if x is None:
                continue
            app = self.apps_[x]
            d = self.task_demand_[task]
            mask = view.task_mask(task)
            if (
                app.waiting
                and app.waiting[0] == task
                and bool(np.all(view.free[server] + self.tol_ >= d))
                and (mask is None or bool(mask[server]))
                and self._fits_max(app.node, d)
            ):
                self._start(task)
                started.add(task)
                yield task, server

    def decide(self) -> Iterator[tuple[int, int] | Eviction]:
        """Allocate; at an update, also preempt for the starved applications and allocate
        again (the module docstring)."""
        started: set[int] = set()  # runs started in this pass: never evicted in it
        if self.kill_due_:
            self.kill_due_ = False
            yield from self._kill(started)
        yield from self._allocate(started)
        if self.update_due_:
            self.update_due_ = False
            starved = self._update()
            if starved:
                yield from self._preempt(starved, started)
                yield from self._allocate(started)
