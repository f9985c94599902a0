"""Cluster state: server capacities and free amounts as numpy arrays.

The engine owns a :class:`ClusterState` and is the only code that changes it (through
:meth:`ClusterState.commit` and :meth:`ClusterState.release`). Schedulers receive a
:class:`ClusterView`, whose arrays are read-only views of the same memory (numpy refuses
``flags.writeable = True`` on them: :func:`~fairsim.simulator.readonly.read_only`), so they
always see the current free amounts without being able to change them (Omega's "cell state
commits claims"). The state checks every placement against free amounts of its own, not
against the array the views share.

The state holds servers only. What a scheduler may know about the tasks of a run (a task's job and
repetition, its placement constraint, what runs where) and about the servers beyond their
capacities (machine classes) reaches it through the typed accessors of its :class:`ClusterView`,
which the engine builds with three references: a :class:`TaskJobsAndConstraints` (the engine's
task recorder), a :class:`RunningTasks` (the engine's running tasks) and the run's
:class:`fairsim.simulator.constraints.ConstraintIndex`. Nothing is planted on the state from
outside.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from fairsim.errors import PlacementError
from fairsim.simulator.readonly import read_only

if TYPE_CHECKING:
    from fairsim.simulator.constraints import ConstraintIndex

#: Slack allowed when validating a placement, relative to the pool's scale of each resource: a
#: task may take up to ``CAPACITY_TOLERANCE`` times the largest server capacity of a resource more
#: than a server has free of it (:func:`capacity_tolerance`). Free amounts are updated by repeated
#: float additions and subtractions; a task whose demand equals the free amount up to rounding is
#: accepted, in whatever units a resource is given (in the trace's normalised units, where the
#: largest server has 1 of every resource, the slack is ``CAPACITY_TOLERANCE`` itself).
CAPACITY_TOLERANCE = 1e-9


def capacity_tolerance(capacity: np.ndarray) -> np.ndarray:
    """The absolute slack of every resource: :data:`CAPACITY_TOLERANCE` times the largest server
    capacity of that resource (0 for a resource that no server has).

    The engine accepts a placement whose demand exceeds a server's free amount of a resource by
    at most this much (:meth:`ClusterState.commit`); schedulers that admit with a tolerance use
    the same (or a part of it), so that their answers do not depend on a resource's units.

    Parameters
    ----------
    capacity : array_like, shape (n_servers, n_resources)
        Server capacities.

    Returns
    -------
    ndarray of float64, shape (n_resources,)

    Examples
    --------
    >>> capacity_tolerance(np.array([[1.0, 64.0], [0.5, 128.0]])).tolist()
    [1e-09, 1.28e-07]
    """
    cap = np.asarray(capacity, dtype=np.float64)
    if cap.ndim != 2 or cap.shape[0] == 0:
        return np.zeros(cap.shape[-1] if cap.ndim else 0)
    return CAPACITY_TOLERANCE * cap.max(axis=0)


def default_server_ids(n: int) -> tuple[str, ...]:
    """The ids of ``n`` servers that have no names of their own: ``("s0", "s1", ...)``, by
    position (a pool drawn from the DRFH paper's Table I, explicit server classes).

    Examples
    --------
    >>> default_server_ids(3)
    ('s0', 's1', 's2')
    """
    return tuple(f"s{i}" for i in range(n))


class PoolShape:
    """The pool's size, read from its ``capacity`` array (shape ``(n_servers, n_resources)``):
    what :class:`ClusterState` and :class:`ClusterView` answer alike."""

    capacity: np.ndarray

    @property
    def n_servers(self) -> int:
        """Number of servers."""
        return int(self.capacity.shape[0])

    @property
    def n_resources(self) -> int:
        """Number of resource types."""
        return int(self.capacity.shape[1])


class ClusterState(PoolShape):
    """Capacities and free amounts of a pool of heterogeneous servers.

    Parameters
    ----------
    capacity : array_like, shape (n_servers, n_resources)
        Capacity of every server per resource, in the trace's normalised units (Google 2011:
        the largest machine has 1 CPU and 1 memory). Must be finite and non-negative.
    resources : sequence of str
        Resource names, one per column of ``capacity``.
    ids : sequence of str, optional
        The servers' ids, one per row of ``capacity`` (the ``server`` column of the run's
        ``servers.parquet``; written as ``tasks.parquet``'s ``server``). None:
        :func:`default_server_ids`. The engine itself works with row positions.

    Attributes
    ----------
    ids : tuple of str
        The servers' ids, by row position.

    Raises
    ------
    ValueError
        If ``capacity`` is not two-dimensional, has a negative or non-finite entry, or its number
        of columns differs from ``len(resources)``; if ``ids`` does not name every server once.

    Notes
    -----
    Arrays are stored in Fortran order so that ``free[:, r]`` (one resource over all servers) is
    contiguous: the schedulers' searches scan one resource column at a time.
    """

    def __init__(
        self, capacity: np.ndarray, resources: Sequence[str], ids: Sequence[str] | None = None
    ) -> None:
        cap = np.asarray(capacity, dtype=np.float64)
        if cap.ndim != 2:
            raise ValueError(f"capacity: expected shape (n_servers, n_resources), got {cap.shape}")
        if cap.shape[1] != len(resources):
            raise ValueError(
                f"capacity: {cap.shape[1]} columns but {len(resources)} resources {list(resources)}"
            )
        if cap.shape[0] == 0:
            raise ValueError("capacity: the cluster has no servers")
        if not np.all(np.isfinite(cap)) or np.any(cap < 0):
            bad = np.argwhere(~np.isfinite(cap) | (cap < 0))[0]
            raise ValueError(
                f"capacity: server {bad[0]} resource {resources[bad[1]]!r} has invalid "
                f"capacity {cap[bad[0], bad[1]]!r} (expected a finite value >= 0)"
            )
        self.ids: tuple[str, ...] = (
            default_server_ids(cap.shape[0]) if ids is None else tuple(str(i) for i in ids)
        )
        if len(self.ids) != cap.shape[0] or len(set(self.ids)) != len(self.ids):
            raise ValueError(
                f"ids: {len(self.ids)} ids ({len(set(self.ids))} distinct) for {cap.shape[0]} "
                "servers (expected one distinct id per server)"
            )
        self.resources: tuple[str, ...] = tuple(resources)
        self.capacity = read_only(np.asfortranarray(cap.copy()))
        self.free = np.asfortranarray(cap.copy())
        self.total = cap.sum(axis=0)
        #: Absolute slack of every resource (:func:`capacity_tolerance`), shape (n_resources,).
        self.tolerance = read_only(capacity_tolerance(cap))
        self._tol = [-t for t in self.tolerance.tolist()]  # the least free amount accepted
        self._n = cap.shape[0]
        self._cols = [self.free[:, r] for r in range(cap.shape[1])]  # contiguous column views
        # the engine's own free amounts, one list per resource: commit checks a placement
        # against these, never against the array the views share (self.free, a copy kept equal)
        self._own = [cap[:, r].tolist() for r in range(cap.shape[1])]
        self._used = [0.0] * cap.shape[1]

    def commit(self, task: int, server: int, demand: tuple[float, ...]) -> None:
        """Reserve ``demand`` on ``server`` for ``task`` after checking that it fits.

        Parameters
        ----------
        task : int
            Task id (used in the error message only).
        server : int
            Server index, ``0 <= server < n_servers``.
        demand : tuple of float, length n_resources
            Amount of every resource the task holds while it runs.

        Raises
        ------
        PlacementError
            If the server index is out of range or the demand exceeds the server's free amount of
            some resource; the message names the task, the server and the resource.
        """
        if not 0 <= server < self._n:
            raise PlacementError(
                f"task {task}: server {server} does not exist (cluster has {self._n} servers)"
            )
        own = self._own  # checked against the engine's own amounts, not the shared array
        if len(own) == 2:  # the loops below, written out for two resources
            o0, o1 = own
            d0, d1 = demand
            f0, f1 = o0[server] - d0, o1[server] - d1
            t0, t1 = self._tol
            if f0 >= t0 and f1 >= t1:
                o0[server] = f0
                o1[server] = f1
                c0, c1 = self._cols
                c0[server] = f0
                c1[server] = f1
                used = self._used
                used[0] += d0
                used[1] += d1
                return
        low = self._tol
        for r, d in enumerate(demand):
            free = own[r][server]
            if free - d < low[r]:
                raise PlacementError(
                    f"task {task} does not fit on server {server}: {self.resources[r]} demand "
                    f"{d:.6g} > free {free:.6g} (capacity {self.capacity[server, r]:.6g})"
                )
        used, cols = self._used, self._cols
        for r, d in enumerate(demand):
            f = own[r][server] - d
            own[r][server] = f
            cols[r][server] = f
            used[r] += d

    def commit_over(self, task: int, server: int, demand: tuple[float, ...]) -> None:
        """Reserve ``demand`` on ``server`` for ``task`` even if it exceeds the free amount.

        Only for the replay of recorded placements (:mod:`fairsim.simulator.replay`): the engine
        calls it for a :class:`~fairsim.simulator.replay.ReplayScheduler` and :meth:`commit` for
        every other scheduler. A server's free amount may then become negative (over-committed:
        :meth:`overcommit`).

        Raises
        ------
        PlacementError
            If the server index is out of range.
        """
        if not 0 <= server < self._n:
            raise PlacementError(
                f"task {task}: server {server} does not exist (cluster has {self._n} servers)"
            )
        own, cols, used = self._own, self._cols, self._used
        for r, d in enumerate(demand):
            f = own[r][server] - d
            own[r][server] = f
            cols[r][server] = f
            used[r] += d

    def overcommit(self) -> tuple[np.ndarray, np.ndarray]:
        """Over-commitment now (after :meth:`commit_over`), per resource.

        Returns
        -------
        counts : ndarray of int64, shape (n_resources,)
            Servers whose used amount exceeds their capacity by more than the resource's
            tolerance (free amount below ``-tolerance``: :func:`capacity_tolerance`).
        amount : ndarray of float64, shape (n_resources,)
            Sum over servers of ``max(used - capacity, 0)``, as a fraction of the pool's total
            capacity (the unit of the utilisation columns).
        """
        free = self.free
        counts = np.count_nonzero(free < -self.tolerance, axis=0).astype(np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            amount = np.maximum(-free, 0.0).sum(axis=0) / self.total
        return counts, amount

    def release(self, server: int, demand: tuple[float, ...]) -> None:
        """Return ``demand`` to ``server`` when a task finishes.

        Parameters
        ----------
        server : int
            Server the task ran on.
        demand : tuple of float, length n_resources
            The task's demand, as committed.
        """
        own, cols, used = self._own, self._cols, self._used
        if len(own) == 2:  # the loop below, written out for two resources
            o0, o1 = own
            d0, d1 = demand
            f0, f1 = o0[server] + d0, o1[server] + d1
            o0[server] = f0
            o1[server] = f1
            c0, c1 = cols
            c0[server] = f0
            c1[server] = f1
            used[0] -= d0
            used[1] -= d1
            return
        for r, d in enumerate(demand):
            f = own[r][server] + d
            own[r][server] = f
            cols[r][server] = f
            used[r] -= d

    @property
    def used(self) -> list[float]:
        """Total amount in use per resource as the live list the state updates (do not mutate;
        the engine reads it at every event to integrate utilisation over time)."""
        return self._used

    @property
    def used_total(self) -> np.ndarray:
        """Total amount in use per resource, shape (n_resources,)."""
        return np.array(self._used)

    def view(
        self,
        *,
        tasks: TaskJobsAndConstraints | None = None,
        constraints: ConstraintIndex | None = None,
        running: RunningTasks | None = None,
    ) -> ClusterView:
        """A read-only view that follows this state as the engine changes it.

        Parameters
        ----------
        tasks : TaskJobsAndConstraints, optional
            What the run knows about its tasks (the engine passes its task recorder). None: every
            task is its own job and has no placement constraint.
        constraints : ConstraintIndex, optional
            The run's placement constraints (:mod:`fairsim.simulator.constraints`); the codes
            that ``tasks`` reports refer to it. None: tasks run anywhere.
        running : RunningTasks, optional
            What runs where (the engine passes its running tasks). None: the view reports no
            task running.
        """
        return ClusterView(self, tasks=tasks, constraints=constraints, running=running)


@runtime_checkable
class TaskJobsAndConstraints(Protocol):
    """The job and the placement constraint of every submitted task, by task id: what a run knows
    about its tasks beyond their user and demand.

    The engine's task recorder implements it (:class:`fairsim.simulator.recording.TaskRecorder`:
    :class:`fairsim.simulator.engine.Engine` builds every scheduler's view with it);
    :class:`TaskRecords` implements it over plain sequences, for driving a scheduler by hand.
    Schedulers never call it directly: they use :meth:`ClusterView.task_job`,
    :meth:`ClusterView.task_index` and :meth:`ClusterView.task_mask`. Task ids are those of
    :meth:`fairsim.simulator.scheduler.Scheduler.on_arrival`.
    """

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a submitted task (repetition 0 without a job gate)."""
        ...

    def task_constraint(self, task: int) -> int:
        """The task's placement constraint: a code of the run's
        :class:`~fairsim.simulator.constraints.ConstraintIndex` (0: any server)."""
        ...

    def trace_task_index(self, task: int) -> int:
        """The trace's ``task_index`` of a submitted task (its position within its job)."""
        ...

    def task_queue(self, task: int) -> int:
        """The task's queue in the run's queue tree (-1: the root, or a run without a tree)."""
        ...


@runtime_checkable
class RunningTasks(Protocol):
    """What runs where: the tasks placed and not ended, by task id and by server.

    The engine implements it (:class:`fairsim.simulator.preemption.RunningIndex`) and builds
    every scheduler's view with it; schedulers use :meth:`ClusterView.task_server`,
    :meth:`ClusterView.task_start` and :meth:`ClusterView.running_on`.
    """

    def server_of(self, task: int) -> int:
        """The server a task runs on, or -1 when it does not run."""
        ...

    def start_of(self, task: int) -> float:
        """The start (s) of the task's current run, or NaN when it does not run."""
        ...

    def on_server(self, server: int) -> tuple[int, ...]:
        """The tasks running on a server, in the order their runs started (oldest first)."""
        ...


class TaskRecords:
    """A :class:`TaskJobsAndConstraints` over plain sequences indexed by task id (for
    hand-driven schedulers).

    The sequences are read at every call, so lists that grow as tasks are submitted work.

    Parameters
    ----------
    job_id : sequence of int, optional
        Job of every task (default: every task is its own job, ``job_id = task``).
    rep : sequence of int, optional
        Repetition of every task within its job (default 0).
    constraint : sequence of int, optional
        Constraint code of every task in the view's
        :class:`~fairsim.simulator.constraints.ConstraintIndex` (default 0: any server).
    task_index : sequence of int, optional
        The trace's task index of every task within its job (default 0).
    queue : sequence of int, optional
        The queue of every task in the run's queue tree (default -1: the root).
    """

    def __init__(
        self,
        *,
        job_id: Sequence[int] | None = None,
        rep: Sequence[int] | None = None,
        constraint: Sequence[int] | None = None,
        task_index: Sequence[int] | None = None,
        queue: Sequence[int] | None = None,
    ) -> None:
        self.job_id = job_id
        self.rep = rep
        self.constraint = constraint
        self.index = task_index
        self.queue = queue

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id[task], rep[task])``, with the defaults above."""
        job = task if self.job_id is None else int(self.job_id[task])
        return job, 0 if self.rep is None else int(self.rep[task])

    def task_constraint(self, task: int) -> int:
        """``constraint[task]`` (0 when no constraints were given)."""
        return 0 if self.constraint is None else int(self.constraint[task])

    def trace_task_index(self, task: int) -> int:
        """``task_index[task]`` (0 when no task indices were given)."""
        return 0 if self.index is None else int(self.index[task])

    def task_queue(self, task: int) -> int:
        """``queue[task]`` (-1 when no queues were given)."""
        return -1 if self.queue is None else int(self.queue[task])


class ClusterView(PoolShape):
    """Read-only window on a :class:`ClusterState`, handed to schedulers.

    Everything a scheduler may know about the cluster and the run's tasks is here: the arrays
    below, :attr:`n_servers`, :attr:`n_resources`, :attr:`constrained`, :attr:`machine_classes`,
    :meth:`task_job`, :meth:`task_index`, :meth:`task_mask` and :meth:`task_queue`, and what
    runs where: :meth:`task_server`, :meth:`task_start` and :meth:`running_on` (what a scheduler
    that preempts chooses its victims from). Build it with :meth:`ClusterState.view`.

    Parameters
    ----------
    state : ClusterState
        The pool; the view shares its arrays (read-only), not the state itself.
    tasks : TaskJobsAndConstraints, optional
        Jobs and constraint codes of the run's tasks (see :meth:`ClusterState.view`).
    constraints : ConstraintIndex, optional
        The run's placement constraints; its masks and machine classes.
    running : RunningTasks, optional
        What runs where (see :meth:`ClusterState.view`).

    Attributes
    ----------
    capacity : ndarray, shape (n_servers, n_resources)
        Server capacities (read-only).
    free : ndarray, shape (n_servers, n_resources)
        Free amounts, updated in place by the engine (read-only for the holder).
    total : ndarray, shape (n_resources,)
        Total capacity of the pool per resource (read-only).
    tolerance : ndarray, shape (n_resources,)
        The engine's slack per resource (read-only): a placement may exceed a server's free
        amount by this much (:func:`capacity_tolerance`).

    resources : tuple of str
        Resource names.

    Raises
    ------
    ValueError
        If ``constraints`` indexes another number of servers than the pool has.

    Notes
    -----
    Every array the view hands out (these, :attr:`machine_classes` and the masks of
    :meth:`task_mask`) is read-only for good: setting its ``flags.writeable`` to True raises
    ValueError (:func:`~fairsim.simulator.readonly.read_only`).
    """

    def __init__(
        self,
        state: ClusterState,
        *,
        tasks: TaskJobsAndConstraints | None = None,
        constraints: ConstraintIndex | None = None,
        running: RunningTasks | None = None,
    ) -> None:
        if constraints is not None and constraints.n_servers != state.n_servers:
            raise ValueError(
                f"constraints: index over {constraints.n_servers} servers, cluster has "
                f"{state.n_servers}"
            )
        self.resources = state.resources
        # read_only: a scheduler cannot make these writable (flags.writeable = True is refused)
        self.capacity = read_only(state.capacity)
        self.free = read_only(state.free)
        self.total = read_only(state.total)
        self.tolerance = read_only(state.tolerance)
        self._tasks = tasks
        self._constraints = constraints
        self._running = running
        self._masks: list[np.ndarray | None] | None = None
        self._code: Callable[[int], int] = _unconstrained
        if constraints is not None:
            self._masks = constraints.masks
            if tasks is not None:
                self._code = tasks.task_constraint
        self._classes: np.ndarray | None = None
        if tasks is not None:  # the recorder answers directly (a hierarchical scheduler asks
            self.task_queue = tasks.task_queue  # type: ignore[method-assign]  # per arrival)

    @property
    def constrained(self) -> bool:
        """Whether tasks of this run may carry placement constraints (:meth:`task_mask` may
        return a mask)."""
        return self._constraints is not None

    @property
    def machine_classes(self) -> np.ndarray:
        """Machine class label of every server, ndarray of str, shape (n_servers,).

        The pool's ``class`` labels when the run has placement constraints
        (:func:`fairsim.simulator.constraints.machine_classes`), else the capacity vector written as
        ``"cpu/mem"`` (servers with equal capacities share a class, the UDRF paper's "machine
        class", Section II-B).
        """
        if self._classes is None:
            self._classes = read_only(
                self._constraints.classes
                if self._constraints is not None
                else np.array(
                    ["/".join(f"{v:g}" for v in row) for row in self.capacity.tolist()],
                    dtype=object,
                )
            )
        return self._classes

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a submitted task (repetition 0 without a job gate).

        A view without task information (a scheduler driven by hand) sees every task as its own
        job: ``(task, 0)``.
        """
        if self._tasks is None:
            return task, 0
        return self._tasks.task_job(task)

    def task_index(self, task: int) -> int:
        """The trace's ``task_index`` of a submitted task: with :meth:`task_job`'s job id, the
        task's identity in the trace (``(job_id, task_index)``; the replay of recorded
        placements looks its runs up by it, :mod:`fairsim.simulator.replay`).

        A view without task information sees task index 0.
        """
        if self._tasks is None:
            return 0
        return self._tasks.trace_task_index(task)

    def task_queue(self, task: int) -> int:
        """The queue of a submitted task: an index into the run's queue tree (the ``queues`` a
        hierarchical scheduler is given, :class:`fairsim.schedulers.exact.instance.QueueTree`), -1
        for the root; -1 for every task of a run without a tree.

        Only the task's queue: how a scheduler groups a queue's tasks into leaves (one leaf per
        user in the queue) is its own. A view without task information sees -1.
        """
        if self._tasks is None:
            return -1
        return self._tasks.task_queue(task)

    def task_server(self, task: int) -> int:
        """The server ``task`` runs on now (its row position), or -1 when it does not run
        (waiting, ended, or never submitted).

        A view without running tasks (a scheduler driven by hand) sees -1.
        """
        if self._running is None:
            return -1
        return self._running.server_of(task)

    def task_start(self, task: int) -> float:
        """When the current run of ``task`` started, seconds; NaN when it does not run.

        A task evicted and placed again reports its last start (its earlier runs were lost).
        A view without running tasks sees NaN.
        """
        if self._running is None:
            return math.nan
        return self._running.start_of(task)

    def running_on(self, server: int) -> tuple[int, ...]:
        """The tasks running on ``server`` now, in the order their runs started (oldest first,
        so the youngest run is last).

        Cost: the tasks on the server for a scheduler that preempts (the engine keeps an index
        per server for it); for any other scheduler a pass over every running task. A view
        without running tasks sees none.
        """
        if self._running is None:
            return ()
        return self._running.on_server(server)

    def task_mask(self, task: int) -> np.ndarray | None:
        """Servers ``task`` may run on: a read-only bool mask (n_servers,), or None for any.

        The engine rejects a placement outside the mask (:mod:`fairsim.simulator.constraints`).
        Masks are shared: tasks with the same constraint get the same array object, which
        cannot be made writable (:func:`~fairsim.simulator.readonly.read_only`).
        """
        masks = self._masks
        if masks is None:
            return None
        return masks[self._code(task)]


def _unconstrained(task: int) -> int:
    return 0
