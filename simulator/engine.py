"""The discrete-event engine: a SimPy environment driving arrivals, completions and scheduling.

This and :mod:`fairsim.experiments.bonald_roberts.markov_chain` (the Markovian demand model) are
the only modules importing :mod:`simpy`; schedulers never do. The engine

* streams tasks in submit order from a :class:`fairsim.simulator.workload.TaskSource`;
* keeps completions in a heap ordered by ``(finish time, task id)``, so ties never depend on set or
  dict order;
* advances a SimPy :class:`~simpy.Environment` straight to the next event time (arrival or
  completion) with one timeout per distinct event time — it never polls every simulated second;
* at each event time processes all completions, then all arrivals, then runs one scheduling pass
  (:meth:`fairsim.simulator.scheduler.Scheduler.decide`), validating and committing every placement
  (:meth:`fairsim.simulator.cluster.ClusterState.commit`);
* samples utilisation on a fixed grid of ``utilization_interval_s`` exactly (the cluster state is
  constant between events, so a grid point takes the state after the last event before it).

A task's run starts when it is placed and lasts its ``run_s`` from the trace. A simulation ends at
``horizon_s``: tasks still queued or running then count as not completed; a task that finishes at
exactly ``horizon_s`` counts as completed.

Right-censored tasks (``TaskBatch.censored``: the trace ended while they ran, so ``run_s`` is only a
lower bound) never complete under the default rule ``censored="hold"``: once started, a censored
task holds its resources until the horizon. ``censored="complete"`` keeps the older rule (the task
runs its observed, lower-bound span and then counts as completed), for sensitivity analyses.

Mean utilisation (:attr:`EngineResult.mean_utilization`) is the exact time integral of the used
amount (a step function that changes only at event times) over ``[start_s, horizon_s]``, divided
by the window's length and the pool's total; the grid samples are for plotting.
"""

from __future__ import annotations

import heapq
import math
import os
import time
from array import array
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import simpy
from tqdm import tqdm

from fairsim.errors import PlacementError
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.jobs import JobGate
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.stream import FINISHED, UNPLACEABLE, StreamedTasks, TaskStream
from fairsim.simulator.workload import TaskBatch, TaskSource

SKIP_UNPLACEABLE = "fits no server of the pool"
#: Consecutive ticks of a periodic scheduler without any event or placement before giving up.
MAX_IDLE_TICKS = 100_000
#: Rules for right-censored tasks (see the module docstring).
CENSORED_RULES = ("hold", "complete")
NAN = math.nan


class _Table:
    """Growable per-task arrays, indexed by task id (order of arrival).

    Memory per task is kept small for traces of tens of millions of tasks: a task ever seen costs
    its numpy columns (job id, task index, user, submit time, run time, demand: 48 bytes with two
    resources) and its run state in :mod:`array` buffers (8 + 8 + 4 + 1 + 1 bytes). The Python
    objects the event loop works with (demand tuple, user code, run time) exist only for the
    tasks of the batch being read and for *live* tasks (arrived and not finished, :attr:`live`);
    consecutive identical tasks (the instances of one Alibaba row) share them.

    It is the :class:`fairsim.simulator.cluster.TaskJobsAndConstraints` of the schedulers' views
    (:meth:`task_job`, :meth:`task_constraint`); schedulers never see the table itself.
    """

    def __init__(
        self,
        n_resources: int,
        capacity: int = 1 << 16,
        jobs: bool = False,
        constraints: ConstraintIndex | None = None,
        n_hint: int | None = None,
        stream: TaskStream | None = None,
    ) -> None:
        self.n = 0
        self.n_hint = n_hint
        self.r = n_resources
        self.jobs = jobs
        self.constraints = constraints
        # streamed (collect.stream_tasks): no per-task columns, only the batch being read and
        # the live tasks (the stream's ``live``); ended tasks go to the stream
        self.stream = stream
        if stream is not None:
            capacity = 0
        self.b_job: list[int] = []
        self.b_tidx: list[int] = []
        self.b_cens: list[bool] = []
        self._pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.code_l = array("i")  # constraint code per task (only with constraints)
        self.job_id = np.empty(capacity, dtype=np.int64)
        self.task_index = np.empty(capacity, dtype=np.int32)
        self.user = np.empty(capacity, dtype=np.int32)
        self.submit_s = np.empty(capacity)
        self.run_s = np.empty(capacity)
        self.demand = np.empty((capacity, n_resources))
        # only with a job gate (simulator/jobs.py)
        self.rep = np.zeros(capacity if jobs else 0, dtype=np.int32)
        self.instances = np.ones(capacity if jobs else 0, dtype=np.int32)
        self.parents = np.full(capacity if jobs else 0, None, dtype=object)
        # Python mirrors of the hot columns for the batch being read (task ids b_lo..n-1):
        # scalar access to lists is several times faster than to numpy arrays in the event loop
        self.b_lo = 0
        self.b_demand: list[tuple[float, ...]] = []
        self.b_user: list[int] = []
        self.b_submit: list[float] = []
        self.b_run: list[float] = []
        # arrived and not finished: task -> (user, demand, run time); what the loop needs later
        self.live: dict[int, tuple[int, tuple[float, ...], float]] = {}
        # run state, one entry per task
        self.start_l = array("d")
        self.finish_l = array("d")
        self.server_l = array("i")
        self.unpl_l = bytearray()
        self.cens_l = bytearray()  # right-censored (1) or not (0)

    def batch(
        self,
    ) -> tuple[int, list[float], list[int], list[tuple[float, ...]], list[float]]:
        """The batch being read: its first task id and its submit, user, demand and run lists."""
        return self.b_lo, self.b_submit, self.b_user, self.b_demand, self.b_run

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a task (repetition 0 without a job gate)."""
        if self.stream is not None:
            return self.stream.live[task][0], 0
        return int(self.job_id[task]), (int(self.rep[task]) if self.jobs else 0)

    def task_constraint(self, task: int) -> int:
        """The task's code in the run's constraint index (0: any server)."""
        return self.code_l[task] if self.constraints is not None else 0

    def count_arrived(self, n: int | None = None) -> None:
        """Streamed: count the first ``n`` tasks of the batch being read (all of them when
        None) in the stream's per-user and per-job totals; they all arrived."""
        if self._pending is None:
            return
        job, users, submit = self._pending
        self._pending = None
        if n is not None:
            job, users, submit = job[:n], users[:n], submit[:n]
        self.stream.count_arrivals(job, users, submit)  # type: ignore[union-attr]

    def append(self, batch: TaskBatch, users: np.ndarray) -> tuple[int, int]:
        if self.stream is not None:
            return self._append_streamed(batch, users)
        lo, hi = self.n, self.n + len(batch)
        cap = self.job_id.shape[0]
        if hi > cap:
            # the source's row count when it is known (no slack kept to the end), else x1.5
            hint = self.n_hint if self.n_hint is not None and self.n_hint >= hi else 0
            self._grow(max(hi, hint or cap + cap // 2))
        self.job_id[lo:hi] = batch.job_id
        self.task_index[lo:hi] = batch.task_index
        self.user[lo:hi] = users
        self.submit_s[lo:hi] = batch.submit_s
        self.run_s[lo:hi] = batch.run_s
        self.demand[lo:hi] = batch.demand
        if self.jobs:
            for name, default in (("rep", 0), ("instances", 1), ("parents", None)):
                col = getattr(batch, name)
                getattr(self, name)[lo:hi] = default if col is None else col
        n = hi - lo
        if self.constraints is not None:
            if batch.constraint is None:
                self.code_l.frombytes(np.zeros(n, dtype=np.intc).tobytes())
            else:
                codes = self.constraints.codes(batch.constraint).astype(np.intc)
                self.code_l.frombytes(codes.tobytes())
        self.b_lo = lo
        self._batch_lists(batch, users)
        self.start_l.frombytes(np.full(n, np.nan).tobytes())
        self.finish_l.frombytes(np.full(n, np.nan).tobytes())
        self.server_l.frombytes(np.full(n, -1, dtype=np.intc).tobytes())
        self.unpl_l.extend(bytes(n))
        if batch.censored is None:
            self.cens_l.extend(bytes(n))
        else:
            self.cens_l.extend(np.asarray(batch.censored, dtype=bool).tobytes())
        self.n = hi
        return lo, hi

    def _append_streamed(self, batch: TaskBatch, users: np.ndarray) -> tuple[int, int]:
        """:meth:`append` without per-task columns: the batch's lists, and its job, user and
        submit columns until they are counted (:meth:`count_arrived`)."""
        self.count_arrived()  # the previous batch arrived whole
        lo, hi = self.n, self.n + len(batch)
        self.b_lo = lo
        self._batch_lists(batch, users)
        self.b_job = batch.job_id.tolist()
        self.b_tidx = batch.task_index.tolist()
        n = hi - lo
        self.b_cens = (
            [False] * n if batch.censored is None else np.asarray(batch.censored, bool).tolist()
        )
        self._pending = (np.asarray(batch.job_id, np.int64), users, batch.submit_s)
        self.n = hi
        return lo, hi

    def _batch_lists(self, batch: TaskBatch, users: np.ndarray) -> None:
        """The Python lists of the batch being read (submit, user, demand, run time)."""
        n = len(batch)
        cols = [batch.demand[:, r] for r in range(self.r)]
        starts = _runs(users, batch.submit_s, batch.run_s, batch.demand)
        if starts is None:
            self.b_demand = list(zip(*(c.tolist() for c in cols), strict=True))
            self.b_user = users.tolist()
            self.b_submit = batch.submit_s.tolist()
            self.b_run = batch.run_s.tolist()
        else:  # share one Python object per run of identical tasks
            counts = np.diff(np.append(starts, n))

            def rep(values: list) -> list:
                obj = np.empty(len(values), dtype=object)
                obj[:] = values
                return np.repeat(obj, counts).tolist()

            dem = list(zip(*(c[starts].tolist() for c in cols), strict=True))
            obj = np.empty(len(dem), dtype=object)
            for i, d in enumerate(dem):
                obj[i] = d
            self.b_demand = np.repeat(obj, counts).tolist()
            self.b_user = rep(users[starts].tolist())
            self.b_submit = rep(batch.submit_s[starts].tolist())
            self.b_run = rep(batch.run_s[starts].tolist())

    def _grow(self, cap: int) -> None:
        names = ["job_id", "task_index", "user", "submit_s", "run_s", "demand"]
        if self.jobs:
            names += ["rep", "instances", "parents"]
        for name in names:
            old = getattr(self, name)
            new = np.empty((cap, *old.shape[1:]), dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)


def _trim(col: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` rows of a table column, shrunk in place when the column owns its memory
    (else copied)."""
    if col.shape[0] == n:
        return col
    if col.flags.owndata and col.flags.c_contiguous:
        col.resize((n, *col.shape[1:]), refcheck=False)
        return col
    return col[:n].copy()


def _runs(
    users: np.ndarray, submit: np.ndarray, run: np.ndarray, demand: np.ndarray
) -> np.ndarray | None:
    """Start indices of runs of identical consecutive tasks, or None if runs are rare."""
    n = len(users)
    if n < 2:
        return None
    same = (users[1:] == users[:-1]) & (submit[1:] == submit[:-1]) & (run[1:] == run[:-1])
    same &= (demand[1:] == demand[:-1]).all(axis=1)
    n_runs = n - int(same.sum())
    if 2 * n_runs > n:
        return None
    return np.flatnonzero(np.concatenate(([True], ~same)))


@dataclass
class EngineResult:
    """Everything a simulation produced, ready for :mod:`fairsim.simulator.results`.

    The engine's raw output (per-task arrays, user codes); the public per-scheduler result of
    ``fairsim.simulate`` is ``fairsim.RunResult``, whose tables are built from this one.

    Attributes
    ----------
    scheduler : str
    resources : tuple of str
    users : list of str
        User names; position = user code.
    tasks : dict of str to ndarray
        Per-task columns (length n_tasks, the tasks that arrived by the horizon; empty when the
        run streamed its tasks to a file, :attr:`streamed`): job_id,
        task_index, user (code), submit_s, start_s, finish_s (NaN unless it completed), server
        (-1 if never started), run_s, demand (n_tasks, n_resources), unplaceable (bool: fits no
        server of the pool, or a DAG ancestor never can), censored (bool: right-censored in the
        trace); with a job gate also rep.
    utilization : ndarray, shape (n_samples, 1 + n_resources)
        Grid time in seconds, then used fraction of total capacity per resource.
    mean_utilization : ndarray, shape (n_resources,)
        Time-average of the used fraction over ``[start_s, horizon_s]`` (exact integral of the
        step function; NaN for an empty window or a resource with no capacity).
    user_shares : ndarray or None, shape (n_samples, n_users, n_resources)
        Share of the pool's total capacity of every resource held by each user at each grid time
        (only if requested); the global dominant share is the maximum over resources.
    skipped : dict of str to int
        Tasks not simulated, by reason.
    horizon_s, wall_s : float
    extra : dict
        With a job gate: ``held`` (tasks still held at the end, by reason), ``dropped`` (tasks
        dropped because a DAG ancestor can never run) and ``jobs_admitted`` (bounded queue).
    censored_rule : str
        The rule for right-censored tasks (``"hold"`` or ``"complete"``).
    streamed : StreamedTasks or None
        With ``Engine(tasks_out=...)``: the written ``tasks.parquet`` and the per-user and
        per-job totals (:class:`fairsim.simulator.stream.StreamedTasks`); else None.
    """

    scheduler: str
    resources: tuple[str, ...]
    users: list[str]
    tasks: dict[str, np.ndarray]
    utilization: np.ndarray
    user_shares: np.ndarray | None
    skipped: dict[str, int]
    start_s: float
    horizon_s: float
    wall_s: float
    n_events: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    mean_utilization: np.ndarray | None = None
    censored_rule: str = "hold"
    streamed: StreamedTasks | None = None


class Engine:
    """Run one scheduler over one workload on one server pool.

    Parameters
    ----------
    cluster : ClusterState
        The server pool; the engine owns and mutates it.
    scheduler : Scheduler
        An unbound scheduler; the engine binds it to a read-only view of ``cluster``.
    source : TaskSource
        Tasks in submit order.
    start_s : float
        First utilisation grid point (simulation starts here), seconds.
    horizon_s : float
        End of the simulation, seconds. Use ``math.inf`` to run until every task is done.
    utilization_interval_s : float
        Spacing of the utilisation grid, seconds (> 0).
    record_user_shares : bool
        Also record every user's global dominant share on the grid (DRFH paper Fig. 4).
    progress : bool
        Show a tqdm progress bar over arrived tasks.
    on_sample : callable, optional
        Called as ``on_sample(time_s, cluster)`` at every grid point (invariant checks in tests).
    gate : JobGate, optional
        Complex-job rules (DAG parents, repetitions, bounded job queue) deciding when a submitted
        task reaches the scheduler (:mod:`fairsim.simulator.jobs`). None: every task on submission.
    constraints : ConstraintIndex, optional
        Placement constraints of the tasks' ``constraint`` column
        (:mod:`fairsim.simulator.constraints`);
        the engine rejects a placement that violates one. None: tasks run anywhere.
    censored : {"hold", "complete"}
        Rule for right-censored tasks: ``"hold"`` (default) — once started, the task holds its
        resources until the horizon and never completes (its run time is unknown);
        ``"complete"`` — it runs its observed span (a lower bound) and counts as completed.
    tasks_out : path-like, optional
        Stream ended tasks to this ``tasks.parquet`` in row groups while the run goes on
        (:mod:`fairsim.simulator.stream`): the engine then keeps a task only while it is live,
        and :attr:`EngineResult.tasks` is empty (:attr:`EngineResult.streamed` describes the
        file). None (default): every task is kept to the end, in :attr:`EngineResult.tasks`.

    Raises
    ------
    ValueError
        For a non-positive ``utilization_interval_s``, a horizon before ``start_s``, an unknown
        ``censored`` rule, or ``tasks_out`` with a job gate or placement constraints; from
        :meth:`run`, when a right-censored task starts under the rule
        ``"hold"`` with an infinite horizon (it would hold its server for ever).
    """

    def __init__(
        self,
        cluster: ClusterState,
        scheduler: Scheduler,
        source: TaskSource,
        *,
        start_s: float = 0.0,
        horizon_s: float = math.inf,
        utilization_interval_s: float = 60.0,
        record_user_shares: bool = False,
        progress: bool = False,
        progress_desc: str | None = None,
        on_sample: Callable[[float, ClusterState], None] | None = None,
        gate: JobGate | None = None,
        constraints: ConstraintIndex | None = None,
        censored: str = "hold",
        tasks_out: str | os.PathLike[str] | None = None,
    ) -> None:
        if tasks_out is not None and (gate is not None or constraints is not None):
            raise ValueError(
                "tasks_out: streamed task results do not support "
                f"{'a job gate' if gate is not None else 'placement constraints'} yet "
                "(collect.stream_tasks: false keeps every task in memory)"
            )
        if censored not in CENSORED_RULES:
            raise ValueError(
                f"censored: {censored!r} (expected one of {', '.join(CENSORED_RULES)})"
            )
        if not utilization_interval_s > 0:
            raise ValueError(
                f"utilization_interval_s: {utilization_interval_s!r} (expected a number > 0)"
            )
        if not horizon_s >= start_s:
            raise ValueError(f"horizon_s: {horizon_s!r} is before start_s {start_s!r}")
        if source.resources != cluster.resources:
            raise ValueError(
                f"workload resources {list(source.resources)} differ from the cluster's "
                f"{list(cluster.resources)}"
            )
        self.cluster = cluster
        self.scheduler = scheduler
        self.source = source
        self.start_s = float(start_s)
        self.horizon_s = float(horizon_s)
        self.dt = float(utilization_interval_s)
        self.record_user_shares = record_user_shares
        self.progress = progress
        self.progress_desc = progress_desc or getattr(scheduler, "name", "run")
        self.on_sample = on_sample
        self.gate = gate
        self.constraints = constraints
        self.censored = censored
        self.tasks_out = Path(tasks_out) if tasks_out is not None else None

    # ------------------------------------------------------------------ public
    def run(self) -> EngineResult:
        """Simulate until the horizon (or until no event is left) and return the results."""
        t0 = time.perf_counter()
        self._user_codes: dict[str, int] = {}
        self._stream = (
            TaskStream(self.tasks_out, self.cluster.resources, self._user_codes)
            if self.tasks_out is not None
            else None
        )
        self._tasks = _Table(
            self.cluster.n_resources,
            jobs=self.gate is not None,
            constraints=self.constraints,
            n_hint=self.source.n_hint,
            stream=self._stream,
        )
        # the scheduler learns about tasks only through its view: the table answers the view's
        # task_job / task_mask questions (it is the view's TaskJobsAndConstraints), nothing is
        # set on the state
        view = self.cluster.view(tasks=self._tasks, constraints=self.constraints)
        if self.constraints is not None:
            self._caps_of_code: dict[int, list[tuple[float, ...]]] = {}
        if self.gate is not None:
            self.gate.bind(self._tasks)
        self.scheduler.bind(view)
        self._user_alloc = np.zeros((64, self.cluster.n_resources))
        self._completions: list[tuple[float, int]] = []
        self._samples: list[np.ndarray] = []
        self._share_samples: list[tuple[np.ndarray, np.ndarray]] = []
        self._next_grid = self.start_s
        self._n_events = 0
        self._n_unplaceable = 0
        self._used_integral = [0.0] * self.cluster.n_resources  # ∫ used_r dt from start_s
        self._bar = tqdm(
            total=self.source.n_hint,
            desc=self.progress_desc,
            unit="task",
            disable=not self.progress,
            mininterval=0.5,
            leave=False,
        )
        env = simpy.Environment(initial_time=self.start_s)
        env.process(self._main(env))
        try:
            env.run()
            self._streamed = self._stream.close() if self._stream is not None else None
        except BaseException:
            if self._stream is not None:
                self._stream.abort()
            raise
        finally:
            self._bar.close()
        wall = time.perf_counter() - t0
        return self._result(wall)

    # ------------------------------------------------------------------ the process
    def _main(self, env: simpy.Environment) -> Generator[simpy.events.Event, None, None]:
        sched, cluster, tab = self.scheduler, self.cluster, self._tasks
        heap = self._completions
        horizon = self.horizon_s
        batches = self.source.batches()
        live = tab.live  # task -> (user, demand, run time), from arrival until it finishes
        start_s, finish_s, server_of, unplaceable = (
            tab.start_l,
            tab.finish_l,
            tab.server_l,
            tab.unpl_l,
        )
        running: dict[int, int] = {}  # task -> server, for the tasks placed and not finished
        hold = self.censored == "hold"
        censored = tab.cens_l
        used, integral = cluster.used, self._used_integral
        k_res = range(cluster.n_resources)
        track_users = self.record_user_shares
        gate = self.gate
        codes = tab.code_l if self.constraints is not None else None
        masks: list = self.constraints.masks if self.constraints is not None else []
        fits = self._fits_constraint
        stream = self._stream
        # streamed: live task -> its row's fields, and -> its start time; the rows to write
        meta = stream.live if stream is not None else {}
        stream_start = stream.started if stream is not None else {}
        rows: list = stream.pending if stream is not None else []
        row_limit = stream.limit if stream is not None else 0
        s_job, s_tidx, s_cens = tab.b_job, tab.b_tidx, tab.b_cens  # the batch's, streamed

        def release(tasks: list[int]) -> None:
            """Hand tasks the gate released to the scheduler (drops cascade through the gate)."""
            i = 0
            while i < len(tasks):
                t = tasks[i]
                i += 1
                user, demand, _ = live[t]
                if sched.placeable(demand) and (codes is None or fits(codes[t], demand)):
                    sched.on_arrival(t, user, demand)
                else:
                    del live[t]
                    unplaceable[t] = True
                    self._n_unplaceable += 1
                    tasks.extend(gate.drop(t))  # type: ignore[union-attr]

        lo = hi = 0  # pending arrivals are task ids lo..hi-1 of the table
        exhausted = False
        timed = type(sched).next_wakeup is not Scheduler.next_wakeup
        idle = 0  # consecutive ticks with no arrival, completion or placement
        while True:
            if lo == hi and not exhausted:
                lo, hi, exhausted = self._pull(batches, lo, hi)
            t_arr = tab.b_submit[lo - tab.b_lo] if lo < hi else math.inf
            t_cmp = heap[0][0] if heap else math.inf
            now = t_arr if t_arr < t_cmp else t_cmp
            tick = False
            if timed:
                # a periodic scheduler (e.g. distributed PS-DSF) also acts at its own times
                t_tick = sched.next_wakeup(env.now)
                if not t_tick > env.now:
                    raise ValueError(
                        f"scheduler {sched.name!r}: next_wakeup({env.now!r}) returned {t_tick!r}, "
                        "expected a later time"
                    )
                if t_tick <= now and sched.pending():
                    idle = idle + 1 if now == math.inf else 0  # no event left at all
                    tick, now = True, t_tick
                    if idle > MAX_IDLE_TICKS:
                        raise ValueError(
                            f"scheduler {sched.name!r}: {MAX_IDLE_TICKS} ticks in a row placed "
                            "nothing (next_wakeup should return inf when no pass can help)"
                        )
            if now == math.inf or now > horizon:
                break
            if now > env.now:
                if now >= self._next_grid:
                    self._sample_until(now)
                dt = now - env.now
                for r in k_res:
                    integral[r] += used[r] * dt
                yield env.timeout(dt)
            self._n_events += 1
            # 1. completions at `now`
            while heap and heap[0][0] <= now:
                task = heapq.heappop(heap)[1]
                server = running.pop(task)
                user, demand, _ = live.pop(task)
                cluster.release(server, demand)
                if track_users:
                    self._user_alloc[user] -= demand
                if stream is None:
                    finish_s[task] = now
                else:  # its row (what TaskStream.end does, inlined)
                    job, index, submit, _ = meta.pop(task)
                    rows += (job, index, user, submit, stream_start.pop(task), now, server,
                             FINISHED, *demand)  # fmt: skip
                    if len(rows) >= row_limit:
                        stream.flush()
                sched.on_completion(task, user, demand, server)
                if gate is not None:
                    release(gate.finish(task))
            # 2. arrivals at `now` (the rest of this batch may hold later ones)
            b_lo, b_submit, b_user, b_demand, b_run = tab.batch()
            if stream is not None:
                s_job, s_tidx, s_cens = tab.b_job, tab.b_tidx, tab.b_cens
            while lo < hi and b_submit[lo - b_lo] <= now:
                i = lo - b_lo
                demand = b_demand[i]
                if gate is not None:
                    live[lo] = (b_user[i], demand, b_run[i])
                    release(gate.arrive(lo))
                elif sched.placeable(demand) and (codes is None or fits(codes[lo], demand)):
                    live[lo] = (b_user[i], demand, b_run[i])
                    if stream is not None:
                        meta[lo] = (s_job[i], s_tidx[i], b_submit[i], s_cens[i])
                    sched.on_arrival(lo, b_user[i], demand)
                else:
                    if stream is None:
                        unplaceable[lo] = True
                    else:
                        stream.row(
                            s_job[i], s_tidx[i], b_user[i], b_submit[i], NAN, NAN, -1,
                            UNPLACEABLE, demand,
                        )  # fmt: skip
                    self._n_unplaceable += 1
                lo += 1
                if lo == hi and not exhausted:
                    lo, hi, exhausted = self._pull(batches, lo, hi)
                    b_lo, b_submit, b_user, b_demand, b_run = tab.batch()
                    s_job, s_tidx, s_cens = tab.b_job, tab.b_tidx, tab.b_cens
            if tick:
                sched.on_tick(now)
            # 3. one scheduling pass; every placement is validated and committed here
            for task, server in sched.decide():
                idle = 0
                known = live.get(task) if 0 <= task < lo else None
                # (a live task that is not running never started: one check covers both)
                if known is None or task in running:
                    raise PlacementError(
                        f"scheduler {sched.name!r} placed task {task}, which is not waiting"
                    )
                user, demand, run = known
                if codes is not None and codes[task] and not masks[codes[task]][server]:
                    raise PlacementError(
                        f"scheduler {sched.name!r} placed task {task} on server {server}, which "
                        f"violates its placement constraint {self.constraints.rules[codes[task]]!r}"  # type: ignore[union-attr]
                    )
                cluster.commit(task, server, demand)
                running[task] = server
                if stream is None:
                    server_of[task] = server
                    start_s[task] = now
                    cens = censored[task]
                else:
                    stream_start[task] = now
                    cens = meta[task][3]
                if track_users:
                    self._user_alloc[user] += demand
                if not (hold and cens):
                    heapq.heappush(heap, (now + run, task))
                elif horizon == math.inf:  # a held censored task runs to the horizon
                    raise ValueError(
                        f"task {task} is right-censored and holds its server until the horizon, "
                        "but the horizon is infinite: give a finite horizon (collect.horizon_s "
                        "or trace.end_s) or the rule censored='complete'"
                    )
        end = self._end_s = horizon if horizon < math.inf else env.now
        for r in k_res:
            integral[r] += used[r] * (end - env.now)
        self._sample_until(end, inclusive=True)
        # the arrivals never reached were submitted after the horizon
        n_late = hi - lo
        for batch in batches:
            n_late += len(batch)
            self._bar.update(len(batch))
        if n_late:
            self.source.skipped["submitted after the horizon"] += n_late
        tab.n = lo
        if stream is not None:
            tab.count_arrived(lo - tab.b_lo)  # the batch being read, up to the horizon
            stream.end_live(live, running)  # the tasks live at the horizon
            live.clear()

    def _fits_constraint(self, code: int, demand: tuple[float, ...]) -> bool:
        """Whether some server allowed by constraint ``code`` could ever hold ``demand`` (by its
        capacity, and by the scheduler's own measure, e.g. slots)."""
        if code == 0:
            return True
        if not self.scheduler.placeable_on(demand, self.constraints.masks[code]):  # type: ignore[union-attr, arg-type]
            return False
        caps = self._caps_of_code.get(code)
        if caps is None:
            mask = self.constraints.masks[code]  # type: ignore[union-attr]
            sub = np.unique(self.cluster.capacity[mask], axis=0)
            caps = self._caps_of_code[code] = [tuple(float(x) for x in row) for row in sub]
        return any(all(d <= c for d, c in zip(demand, cap, strict=True)) for cap in caps)

    def _pull(self, batches: Iterator[TaskBatch], lo: int, hi: int) -> tuple[int, int, bool]:
        """Append the next batch to the table: ``(lo, hi, exhausted)`` of the pending arrivals."""
        batch = next(batches, None)
        if batch is None:
            return lo, hi, True
        lo, hi = self._tasks.append(batch, self._codes(batch.user))
        self._bar.update(len(batch))
        return lo, hi, False

    def _codes(self, names: np.ndarray) -> np.ndarray:
        codes = self._user_codes
        out = np.empty(len(names), dtype=np.int32)
        for i, name in enumerate(names.tolist()):
            c = codes.get(name)
            if c is None:
                c = codes[name] = len(codes)
            out[i] = c
        if len(codes) > self._user_alloc.shape[0]:
            grow = np.zeros(
                (len(codes) + 64 - self._user_alloc.shape[0], self._user_alloc.shape[1])
            )
            self._user_alloc = np.vstack([self._user_alloc, grow])
        return out

    def _sample_until(self, t: float, inclusive: bool = False) -> None:
        """Record the current state at every grid point before ``t`` (or up to ``t``)."""
        g = self._next_grid
        if g > t or (g == t and not inclusive):
            return
        cluster = self.cluster
        util = cluster.used_total / cluster.total
        n = math.floor((t - g) / self.dt) + 1
        times = g + self.dt * np.arange(n)
        times = times[times <= t] if inclusive else times[times < t]
        if times.size == 0:
            return
        block = np.empty((times.size, 1 + util.size))
        block[:, 0] = times
        block[:, 1:] = util
        self._samples.append(block)
        if self.record_user_shares:
            n_users = len(self._user_codes)
            shares = self._user_alloc[:n_users] / cluster.total  # (n_users, n_resources)
            self._share_samples.append((times, shares.copy()))
        if self.on_sample is not None:
            for ti in times:
                self.on_sample(float(ti), cluster)
        self._next_grid = float(times[-1]) + self.dt

    def _result(self, wall: float) -> EngineResult:
        util = (
            np.vstack(self._samples)
            if self._samples
            else np.empty((0, 1 + self.cluster.n_resources))
        )
        shares = None
        if self.record_user_shares:
            n_users, n_res = len(self._user_codes), self.cluster.n_resources
            rows = []
            for times, s in self._share_samples:
                full = np.zeros((n_users, n_res))
                full[: s.shape[0]] = s
                rows.append(np.broadcast_to(full, (len(times), n_users, n_res)))
            shares = np.concatenate(rows) if rows else np.zeros((0, n_users, n_res))
        skipped = dict(self.source.skipped)
        if self._n_unplaceable:
            skipped[SKIP_UNPLACEABLE] = self._n_unplaceable
        horizon = self._end_s  # the horizon, or the last event time when it is infinite
        span = horizon - self.start_s
        total = self.cluster.total
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_util = np.where(
                (total > 0) & (span > 0),
                np.asarray(self._used_integral) / (span * total),
                np.nan,
            )
        return EngineResult(
            scheduler=self.scheduler.name,
            resources=self.cluster.resources,
            users=list(self._user_codes),
            tasks=self._task_columns() if self._streamed is None else {},
            utilization=util,
            user_shares=shares,
            skipped=skipped,
            start_s=self.start_s,
            horizon_s=horizon,
            wall_s=wall,
            n_events=self._n_events,
            extra=self._gate_report(),
            mean_utilization=mean_util,
            censored_rule=self.censored,
            streamed=self._streamed,
        )

    def _task_columns(self) -> dict[str, np.ndarray]:
        """:attr:`EngineResult.tasks`: the table's own memory, trimmed to the tasks that arrived
        (no second copy of a table of tens of millions of rows); the table is not written to
        after the run."""
        tab = self._tasks
        n = tab.n
        # the table's own bytes (no copy of n bytes at the run's peak), unless tasks the gate
        # dropped must be marked
        unplaceable = np.frombuffer(tab.unpl_l, dtype=bool)[:n]
        if self.gate is not None and self.gate.dropped_tasks:
            dropped = np.asarray(self.gate.dropped_tasks, dtype=np.int64)
            unplaceable = unplaceable.copy()
            unplaceable[dropped[dropped < n]] = True
        return {
            "job_id": _trim(tab.job_id, n),
            "task_index": _trim(tab.task_index, n),
            "user": _trim(tab.user, n),
            "submit_s": _trim(tab.submit_s, n),
            "start_s": np.frombuffer(tab.start_l, dtype=np.float64)[:n],
            "finish_s": np.frombuffer(tab.finish_l, dtype=np.float64)[:n],
            "server": np.frombuffer(tab.server_l, dtype=np.intc)[:n].astype(np.int32, copy=False),
            "run_s": _trim(tab.run_s, n),
            "demand": _trim(tab.demand, n),
            "unplaceable": unplaceable,
            "censored": np.frombuffer(tab.cens_l, dtype=bool)[:n],
            **({"rep": _trim(tab.rep, n)} if self.gate is not None else {}),
        }

    def _gate_report(self) -> dict[str, Any]:
        gate = self.gate
        if gate is None:
            return {}
        out: dict[str, Any] = {"held": gate.held(), "dropped": dict(gate.dropped)}
        if gate.queue_jobs is not None:
            out["jobs_admitted"] = gate.jobs_admitted
            out["max_jobs_waiting"] = gate.max_queue_wait
        return out
