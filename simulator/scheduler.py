"""The plug-in interface of online schedulers (indivisible tasks): :class:`Scheduler`.

An online scheduler is bound to a cluster and then told about events; it answers with placements
that the engine validates and commits (it never trusts a placement it did not check). The engine
never polls it: it calls :meth:`Scheduler.decide` once after every batch of same-time events (and
at the scheduler's own wake-up times, :meth:`Scheduler.next_wakeup`).

A scheduler may only place tasks it has been told about and not yet placed. The engine raises
:class:`fairsim.errors.PlacementError` naming task, server and resource for any placement that
does not fit or places an unknown task. :class:`DelegatingScheduler` wraps a scheduler without
changing its decisions (for measurements); :class:`WaitingTasks` also keeps the tasks it holds
waiting.

A scheduler that declares :attr:`Scheduler.preempts` may also take a running task back: its
:meth:`Scheduler.decide` yields an :class:`Eviction` naming the task and the server it runs on;
the engine validates it, ends the run (the task waits again and will restart from scratch) and
calls :meth:`Scheduler.on_eviction` (docs/preemption.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import ClassVar, NamedTuple

import numpy as np

from fairsim.simulator.cluster import ClusterView


class Eviction(NamedTuple):
    """A scheduler's proposal to take a running task back: ``Eviction(task, server)``.

    Only a scheduler that declares :attr:`Scheduler.preempts` may yield one from
    :meth:`Scheduler.decide`, beside its ``(task, server)`` placements. The engine checks that
    ``task`` runs on ``server`` (else :class:`fairsim.errors.PlacementError` naming both), ends
    that run (its resources are free again, the work done is lost: the task restarts from
    scratch with its full run time when it is placed again), counts the eviction and calls
    :meth:`Scheduler.on_eviction` before it resumes the generator. A task is evicted at most
    once per instant (:mod:`fairsim.simulator.preemption`).

    Attributes
    ----------
    task : int
        A running task.
    server : int
        The server it runs on (``cluster_.task_server(task)``).
    """

    task: int
    server: int


class Scheduler:
    """Base class of online schedulers: the engine's contract with a scheduling policy.

    A scheduler is a policy object. It keeps its own queue of waiting tasks, reads the cluster
    through the read-only view it is bound to, and *proposes* placements; the engine validates and
    commits each of them (capacity, placement constraint, task known and waiting) and raises
    :class:`fairsim.errors.PlacementError` naming task, server and resource otherwise.

    Subclasses can customise by overriding:

    * :meth:`bind` (call ``super().bind(cluster)`` first): allocate run state (names ending in
      ``_`` or starting with ``_``) and validate hyper-parameters against the cluster;
    * :meth:`on_arrival` (**required**): a task joined the queue of a user;
    * :meth:`on_completion` (**required**): a running task finished and released its demand;
    * :meth:`decide` (**required**): a generator of ``(task, server)`` placements; the engine
      commits each one before resuming it, so ``cluster_.free`` is current at every step;
    * :meth:`pending` (**required**): the number of tasks waiting;
    * :meth:`placeable` and :meth:`placeable_on`: whether a demand could ever run (default: yes;
      the engine also checks the capacities of a task's allowed servers itself);
    * :meth:`next_wakeup` and :meth:`on_tick`: passes at the scheduler's own times, for periodic
      policies (default: none, the scheduler runs on arrivals and completions only);
    * preemption (only with the class attribute ``preempts = True``): :meth:`decide` may also
      yield :class:`Eviction` records naming running tasks, and :meth:`on_eviction` (then
      **required**) hears of each run the engine ended; the engine commits each eviction
      before resuming the generator, as it does placements (docs/preemption.md).

    What the scheduler may know about the run comes through the view stored as ``self.cluster_``
    (:class:`fairsim.simulator.cluster.ClusterView`): ``capacity`` and ``free`` (ndarray,
    shape (n_servers, n_resources), ``free`` current after every commit), ``total``,
    ``resources``, ``n_servers``, ``n_resources``, and the typed accessors ``task_job(task)``
    (job id and repetition), ``task_index(task)`` (the trace's task index within the job),
    ``task_mask(task)`` (placement constraint: bool mask over the
    servers, or None), ``task_queue(task)`` (the task's queue in the run's queue tree, -1 for
    the root), ``constrained`` and ``machine_classes`` (class label per server), and what runs
    where: ``task_server(task)`` (the server a task runs on, -1 when it does not run),
    ``task_start(task)`` (the start of its current run, NaN when it does not run) and
    ``running_on(server)`` (the tasks running on a server, oldest run first). Nothing
    else: a scheduler never reads the engine or the cluster state.

    ``__init__`` only stores keyword-only hyper-parameters (scikit-learn's estimator contract);
    nothing is validated against a cluster before :meth:`bind`, and a scheduler class with no
    parameters is constructed with none. The registry
    (:mod:`fairsim.schedulers.registry`) derives a scheduler's configuration model (the keys a
    YAML ``schedulers:`` entry may give) from that keyword-only signature, leaving out
    ``weights``, ``eligible`` and ``bounds``, which the scenario supplies per user, and
    ``queues``, the scenario's queue tree (for hierarchical schedulers); annotate a
    parameter with :class:`typing.Annotated` and :func:`pydantic.Field` to constrain it
    (e.g. ``period_s: Annotated[float, Field(gt=0)] = 1.0``).

    Protocol, in the order the engine follows it::

        sched.bind(cluster_view)                         # once, before the first event
        sched.placeable(demand)                          # on arrival; False: reported unplaceable
        sched.on_arrival(task, user, demand)             # a task joined the queue of `user`
        sched.on_completion(task, user, demand, server)  # a running task finished
        sched.on_tick(now)                               # at a time from next_wakeup(now)
        for task, server in sched.decide():              # once after each batch of same-time
            ...                                          # events; each placement is committed
                                                         # before the generator resumes
        # only with preempts = True: decide() may also yield Eviction(task, server); the
        # engine ends that run, then calls
        sched.on_eviction(task, user, demand, server)    # the task waits again

    A minimal scheduler (first come, first served, first server that fits)::

        @fairsim.register_scheduler("my-fifo")
        class MyFifo(fairsim.Scheduler):
            work_conserving = False  # the head of the queue blocks every user behind it
            lowest_share_first = False  # arrival order, whoever submitted the task

            def bind(self, cluster):
                super().bind(cluster)
                self._queue = collections.deque()

            def on_arrival(self, task, user, demand):
                self._queue.append((task, demand))

            def on_completion(self, task, user, demand, server):
                pass

            def decide(self):
                while self._queue:
                    task, demand = self._queue[0]
                    fits = (self.cluster_.free >= demand).all(axis=1)
                    mask = self.cluster_.task_mask(task)
                    if mask is not None:
                        fits &= mask
                    if not fits.any():
                        return
                    self._queue.popleft()
                    yield task, int(fits.argmax())

            def pending(self):
                return len(self._queue)

    :func:`fairsim.testing.check_scheduler` runs the conformance suite on it. Three of its checks
    are properties of the fair schedulers of the field rather than of the engine's contract; a
    scheduler that does not promise one sets the class attribute to ``False`` (with a one-line
    reason beside it), and the suite skips that check, as ``MyFifo`` does.

    Attributes
    ----------
    name : str
        Registered name, e.g. ``"bf-drfh"``, or the label of a configured instance (e.g.
        ``"slots-14"``); it names the result folder and the ``scheduler`` of the results.
    cluster_ : ClusterView
        The view the scheduler is bound to (set by :meth:`bind`).
    work_conserving : bool
        Default True: after every pass at which it is due, no user's oldest waiting task (for a
        scheduler that is not ``fifo_within_user``: no waiting task) fits on a server its
        placement constraint allows (:func:`fairsim.testing.check_work_conserving`).
    lowest_share_first : bool
        Default True: of users holding different numbers of identical tasks, the one holding
        fewest is served first (:func:`fairsim.testing.check_lowest_share_first`).
    fifo_within_user : bool
        Default True: a user's tasks start in the order they were submitted
        (:func:`fairsim.testing.check_fifo_within_user`).
    mechanism : str or None
        The exact (divisible) mechanism of ``fairsim solve`` that the scheduler approximates
        with indivisible tasks (``"drfh"`` for ``ff-drfh`` and ``bf-drfh``, ``"tsf"`` for
        ``tsf``, ...), or None (default) for none; fairness over time
        (``collect.fairness: {reference: auto}``, docs/fairness.md) compares the run with it,
        and with ``drfh`` when it is None.
    preempts : bool
        Default False: the scheduler never takes a running task back. True: :meth:`decide` may
        yield :class:`Eviction` records and :meth:`on_eviction` is implemented; the engine then
        runs its preempting event loop, and the run records evictions (``evictions`` in
        ``tasks.parquet``, ``evictions.parquet``, ``preemption`` and ``preemption_loops`` in
        ``summary.json``; docs/preemption.md).
    leaf_queues_only : bool
        Default False: in a scenario with a queue tree (docs/queues.md), the leaf rule may put
        users in a queue with children. True: the scheduler serves only the users of leaf queues
        and of the root (``kueue-fair``: only a leaf queue is a ClusterQueue, a queue with
        children is a cohort with no workloads of its own), and the scenario refuses, before any
        run, a leaf rule that puts users or a tier in a queue with children
        (:func:`fairsim.scenario.queues.check_cluster_queues`). Read from the class.
    """

    name: str = "scheduler"
    mechanism: str | None = None
    work_conserving: bool = True
    lowest_share_first: bool = True
    fifo_within_user: bool = True
    preempts: bool = False
    leaf_queues_only: ClassVar[bool] = False
    #: A timed scheduler (:meth:`next_wakeup`) whose tick must also come when an arrival or a
    #: completion falls on the tick's time while no task waits (``dynamic-drf``: a period starts
    #: with new tasks). Default False: ticks only while tasks wait.
    tick_with_events: bool = False
    #: The constructor parameter that is the period of the scheduler's ticks, in seconds
    #: (``"period_s"``, ``"cycle_s"``), for a scheduler that wakes itself up on a grid of that
    #: step (:meth:`next_wakeup`); None (default): the scheduler does not tick. The scenario
    #: refuses, before running, a period that would give more ticks over the simulated window
    #: than :data:`fairsim.scenario.config.MAX_SCHEDULER_TICKS` (a value <= 0 is not a period:
    #: ``udrf``'s ``period_s: 0`` decides at every event). Read from the class.
    period_parameter: ClassVar[str | None] = None

    def bind(self, cluster: ClusterView) -> None:
        """Attach the scheduler to a cluster before the first event.

        Parameters
        ----------
        cluster : ClusterView
            Read-only view of the pool; ``cluster.free`` follows the engine's commits.
        """
        self.cluster_ = cluster

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """A task was submitted.

        Parameters
        ----------
        task : int
            Task id, unique within the run.
        user : int
            User code, a small non-negative integer assigned by the engine in order of first
            appearance.
        demand : tuple of float, length n_resources
            Resources the task holds while it runs (a tuple: the engine's hot loop works on
            Python floats).
        """
        raise NotImplementedError

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """A running task finished on ``server`` and released ``demand``."""
        raise NotImplementedError

    def decide(self) -> Iterator[tuple[int, int]]:
        """Propose placements ``(task, server)``, one at a time.

        Yields
        ------
        (int, int)
            A task and the server to run it on. The engine commits it before resuming the
            generator.
        Eviction
            Only with :attr:`preempts`: a running task to take back (:class:`Eviction`); the
            engine ends its run and calls :meth:`on_eviction` before resuming the generator.
        """
        raise NotImplementedError

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The engine ended the run of ``task`` on ``server`` at the scheduler's
        :class:`Eviction` (only with :attr:`preempts`).

        ``demand`` is free again on ``server`` (``cluster_.free`` is current); the task waits
        again, as if it had just arrived, with its full run time (the work of the ended run is
        lost), and may be placed again, in this pass too (a restart elsewhere); it cannot be
        evicted again at the same instant. Called before :meth:`decide` resumes.

        Raises
        ------
        NotImplementedError
            Unless overridden (a scheduler that preempts must).
        """
        raise NotImplementedError(
            f"scheduler {self.name!r} evicts tasks (preempts = True) and must implement "
            "on_eviction(task, user, demand, server)"
        )

    def next_wakeup(self, now: float) -> float:
        """Next time (s, >= ``now``) at which the scheduler wants a pass without any event.

        Default: never (``math.inf``); the engine then calls the scheduler on events only.
        Periodic schedulers (distributed PS-DSF runs each server's procedure every T seconds,
        PS-DSF paper Section III-D) override it and :meth:`on_tick`. The engine stops ticking when
        no arrival or completion is left and a tick placed nothing.
        """
        return math.inf

    def on_tick(self, now: float) -> None:
        """Called at a time returned by :meth:`next_wakeup`, before that time's :meth:`decide`."""

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether a task with this demand could ever run on the bound cluster.

        The engine asks on arrival and reports tasks that can never run as unplaceable instead
        of queueing them (a queued task that can never run would wait for ever). Default: some
        server's capacity covers the demand; schedulers that measure room in their own units
        (slots) override it.
        """
        d = np.asarray(demand, dtype=np.float64)
        view = self.cluster_
        return bool(np.any(np.all(view.capacity >= d - view.tolerance, axis=1)))

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Whether such a task could ever run on one of the servers of ``mask`` (its placement
        constraint, :mod:`fairsim.simulator.constraints`). Default: :meth:`placeable` (the engine
        also checks the servers' capacities itself); schedulers that measure room in their own units
        (slots) override it.
        """
        return self.placeable(demand)

    def pending(self) -> int:
        """Number of tasks waiting to be placed (for reports and invariant checks)."""
        raise NotImplementedError


class PlaceableOncePerDemand(Scheduler):
    """A :class:`Scheduler` that answers :meth:`placeable` once per distinct demand and then
    from a table (the servers' capacities do not change during a run).

    For schedulers that see many tasks of few demands and ask on every arrival (the queue
    schedulers :mod:`fairsim.schedulers.yarn_fair` and :mod:`fairsim.schedulers.kueue_fair`).
    Subclasses that override :meth:`bind` call ``super().bind``, which empties the table.
    """

    def bind(self, cluster: ClusterView) -> None:
        """:meth:`Scheduler.bind`, with an empty table of answers."""
        super().bind(cluster)
        self.placeable_: dict[tuple[float, ...], bool] = {}

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """:meth:`Scheduler.placeable`, computed the first time a demand is seen."""
        key = tuple(demand)
        ok = self.placeable_.get(key)
        if ok is None:
            ok = self.placeable_[key] = super().placeable(key)
        return ok


class DelegatingScheduler(Scheduler):
    """A scheduler that forwards every call to ``inner``; wrappers override what they watch.

    Used by measurement wrappers (queue counters, waste samplers) that must not change the
    decisions of the scheduler they wrap.

    Parameters
    ----------
    inner : Scheduler
        The scheduler that decides (its ``name`` is reported).
    """

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self.name = inner.name
        self.preempts = inner.preempts
        self.tick_with_events = inner.tick_with_events

    def bind(self, cluster: ClusterView) -> None:
        """Bind this wrapper and the wrapped scheduler."""
        super().bind(cluster)
        self.inner.bind(cluster)

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Delegated."""
        self.inner.on_arrival(task, user, demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Delegated."""
        self.inner.on_completion(task, user, demand, server)

    def decide(self) -> Iterator[tuple[int, int]]:
        """Delegated."""
        return self.inner.decide()

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Delegated."""
        self.inner.on_eviction(task, user, demand, server)

    def next_wakeup(self, now: float) -> float:
        """Delegated."""
        return self.inner.next_wakeup(now)

    def on_tick(self, now: float) -> None:
        """Delegated."""
        self.inner.on_tick(now)

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Delegated."""
        return self.inner.placeable(demand)

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Delegated."""
        return self.inner.placeable_on(demand, mask)

    def pending(self) -> int:
        """Delegated."""
        return self.inner.pending()


class WaitingTasks(DelegatingScheduler):
    """A :class:`DelegatingScheduler` that keeps the tasks the wrapped scheduler holds waiting.

    :attr:`waiting` maps every task that arrived and is not placed yet to its demand, in order
    of arrival (an evicted task waits again, at the end). Used to measure what waits (the UDRF
    reproduction's wasted resources, :meth:`wasted`) and, by :mod:`fairsim.testing`, to check
    what a scheduler places. Subclasses can customise by extending :meth:`on_arrival` and
    :meth:`on_eviction` (calling them) and replacing :meth:`decide` (removing each placed task
    from :attr:`waiting`, passing :class:`Eviction` records on).

    Parameters
    ----------
    inner : Scheduler
        The scheduler that decides.

    Attributes
    ----------
    waiting : dict of int to tuple of float
        Task -> its demand, one entry per resource.
    """

    def __init__(self, inner: Scheduler) -> None:
        super().__init__(inner)
        self.waiting: dict[int, tuple[float, ...]] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Record the task as waiting, then pass it on."""
        self.waiting[task] = demand
        self.inner.on_arrival(task, user, demand)

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Record the evicted task as waiting again, then pass it on."""
        self.waiting[task] = demand
        self.inner.on_eviction(task, user, demand, server)

    def decide(self) -> Iterator[tuple[int, int]]:
        """The wrapped scheduler's placements (each placed task stops waiting) and evictions."""
        for item in self.inner.decide():
            if not isinstance(item, Eviction):
                try:
                    del self.waiting[item[0]]
                except (TypeError, IndexError, KeyError):
                    pass  # not a placement of a waiting task: the engine refuses it, naming it
            yield item

    def wasted(self) -> np.ndarray:
        """Free resources of the servers where some waiting task could start now.

        UDRF paper (Tahir et al.), Section II-A: resources are wasted when they stay idle
        although a user could use them (the quantity of its Fig. 9, which the paper does not
        define further). A server counts when a waiting task's demand fits its free resources
        and the task's placement constraint (:meth:`ClusterView.task_mask`) allows it.

        Read from the bound cluster view (:attr:`cluster_`: its free and total resources) at
        the time of the call.

        Returns
        -------
        ndarray, shape (n_resources,)
            Wasted amount of every resource as a fraction of the pool's total.
        """
        view = self.cluster_
        free = np.asarray(view.free)
        usable = np.zeros(len(free), dtype=bool)
        kinds: dict[tuple[tuple[float, ...], int], np.ndarray | None] = {}
        for task, demand in self.waiting.items():
            mask = view.task_mask(task)
            key = (demand, id(mask))
            if key not in kinds:
                kinds[key] = mask
        for (demand, _), mask in kinds.items():
            fits = np.all(free + 1e-9 >= np.asarray(demand), axis=1)
            if mask is not None:
                fits &= mask
            usable |= fits
        total = np.asarray(view.total)
        return free[usable].sum(axis=0) / np.where(total > 0, total, 1.0)
