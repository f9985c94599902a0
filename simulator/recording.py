"""Where the engine keeps its tasks: one interface, two recording modes chosen when a run starts.

The engine (:class:`fairsim.simulator.engine.Engine`) reads the tasks batch by batch and keeps a
task's *live record* while it is live (arrived and not ended). What becomes of a task once it
starts, completes, fits no server or is still live at the horizon is the recorder's business:

* :class:`TaskTable` (the default) keeps every task that arrived, as per-task columns, to the
  end of the run; :attr:`fairsim.simulator.engine.EngineResult.tasks` holds them;
* :class:`StreamingRecorder` (a run with an output folder, :mod:`fairsim.simulator.stream`)
  keeps the live tasks only, and hands each ended task's row to a
  :class:`fairsim.simulator.stream.TaskStream`, which writes ``tasks.parquet`` while the run
  goes on.

The engine picks one when the run starts and drives it the same way whatever it is; its event
loop never asks which one it has. For a scheduler that preempts, both also count each task's
evictions (:meth:`TaskRecorder.evicted`; ``evictions`` in ``tasks.parquet``): a
:class:`TaskTable` with ``evictions=True``, an :class:`EvictingStreamingRecorder`.
:class:`TaskRecorder` names the calls; subclasses customise what is kept through
:meth:`TaskRecorder._store`, :meth:`TaskRecorder._key_columns`, :meth:`TaskRecorder.finished`,
:meth:`TaskRecorder.unplaceable`, :meth:`TaskRecorder.end` and :meth:`TaskRecorder.close`.

A recorder is also the :class:`fairsim.simulator.cluster.TaskJobsAndConstraints` of the
schedulers' views (:meth:`TaskRecorder.task_job`, :meth:`TaskRecorder.task_constraint`);
schedulers never see the recorder itself.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Sequence
from itertools import repeat
from typing import Any, Protocol

import numpy as np

from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.stream import (
    CENSORED,
    FINISHED,
    QUEUED,
    RUNNING,
    UNPLACEABLE,
    StreamedTasks,
    TaskStream,
)
from fairsim.simulator.workload import TaskBatch

#: The run time in the live record of a right-censored task held to the horizon (the rule
#: ``censored="hold"``): it never completes. Every other run time is >= 0.
HELD = -math.inf
_NAN = math.nan

#: Bytes of memory a task costs a run that keeps every task in memory (:class:`TaskTable`),
#: beyond a streamed run (:class:`StreamingRecorder`): the peak RSS of ``fairsim run`` on
#: 3,000,000 synthetic tasks, ff-drfh on 12,583 Table I servers, in memory (1,075 MB) minus
#: streamed (621 MB), per task, rounded up (measured on this project's 2-core machine). The
#: per-task columns are about 70 bytes; the rest is the result tables built from them at the end
#: (pandas frames, group-bys, Arrow columns). A job gate adds its own columns.
TASK_TABLE_BYTES = 160


def in_memory_estimate(n_tasks: int) -> str:
    """What keeping ``n_tasks`` tasks in memory costs, in words: ``"about 480 MB for 3,000,000
    tasks"`` (:data:`TASK_TABLE_BYTES` a task; MB and GB of 10**6 and 10**9 bytes)."""
    b = TASK_TABLE_BYTES * n_tasks
    size = f"{b / 1e9:.1f} GB" if b >= 1e9 else f"{max(1, round(b / 1e6))} MB"
    return f"about {size} for {n_tasks:,} tasks"


class LiveCodes(dict[int, int]):
    """Placement constraint codes of the tasks a streamed run has read and not yet ended (task
    id → code; 0, any server, for a task not in it): ``codes[task]`` as with a
    :class:`TaskTable`'s per-task array, without an entry per task ever seen."""

    def __missing__(self, task: int) -> int:
        return 0


class LiveQueues(dict[int, int]):
    """Queue codes of the tasks a streamed run has read and not yet ended (task id → index into
    the run's queue tree; -1, the root, for a task not in it)."""

    def __missing__(self, task: int) -> int:
        return -1


#: The live record of a task: ``(user code, demand, run time, key)``. The run time is
#: :data:`HELD` for a task that never completes; ``key`` is what the recorder needs to write the
#: task's row when it ends (None when the recorder keeps per-task columns instead).
LiveTask = tuple[int, tuple[float, ...], float, Any]


class StartTimes(Protocol):
    """Where the engine writes the start time of a task (seconds) as it starts it:
    ``start_s[task] = now``."""

    def __setitem__(self, task: int, start_s: float, /) -> None: ...


class TaskRecorder:
    """What the engine keeps of the tasks of a run, and what it records of them as they end.

    The engine drives every recorder alike:

    * :meth:`append` for every batch it reads (task ids run on, in arrival order), then
      :meth:`batch` for the submit times and live records of that batch;
    * enters a task in :attr:`live` when it arrives, writes ``start_s[task] = now`` when it
      starts, and pops it from :attr:`live` when it ends;
    * :meth:`finished` when a task completes, :meth:`unplaceable` when it fits no server;
    * :meth:`evicted` when a scheduler that preempts took a running task back (only for a
      recorder that counts evictions);
    * :meth:`end` at the horizon, then :meth:`close` (or :meth:`abort` after a failure).

    Subclasses customise what is kept: :meth:`_store` (a batch's columns),
    :meth:`_key_columns` (the ``key`` of the live records), and the calls above.

    Parameters
    ----------
    n_resources : int
    hold_censored : bool
        Right-censored tasks never complete (the engine's rule ``censored="hold"``): their live
        record's run time is :data:`HELD`.

    Attributes
    ----------
    n : int
        Tasks read so far; task ids ``0..n-1`` in arrival order.
    live : dict of int to LiveTask
        The live tasks' records (entered and popped by the engine).
    start_s : StartTimes
        Start times, written by the engine (``start_s[task] = now``).
    codes : array of int, LiveCodes or None
        Placement constraint code per task, ``codes[task]`` (only with placement constraints;
        a streamed run keeps those of the tasks read and not ended).
    queues : array of int, LiveQueues or None
        Queue code per task, ``queues[task]`` (only for a run whose tasks carry one, a scenario
        with a queue tree; a streamed run keeps those of the tasks read and not ended).
    until : dict of int to float
        Placeholder tasks (``TaskBatch.end_at_s``) read and not yet started: task id → the
        absolute time, in seconds, at which each ends (their live record's run time is
        :data:`HELD`; the engine pops the entry when it starts the task). Empty in every run
        without placeholders.
    writes_held : bool
        The recorder writes the row of a right-censored task held to the horizon as soon as it
        starts (:meth:`held`): the engine then pops the task from :attr:`live` there (False
        here; True for a :class:`StreamingRecorder` in arrival order).
    """

    writes_held = False

    def __init__(self, n_resources: int, *, hold_censored: bool) -> None:
        self.n = 0
        self.n_resources = n_resources
        self.hold_censored = hold_censored
        self.live: dict[int, LiveTask] = {}
        self.start_s: StartTimes = {}
        self.codes: array[int] | LiveCodes | None = None
        self.queues: array[int] | LiveQueues | None = None
        self.until: dict[int, float] = {}
        # the batch being read (task ids b_lo..n-1): Python lists, whose scalar access is
        # several times faster than numpy's in the event loop
        self.b_lo = 0
        self.b_submit: list[float] = []
        self.b_live: list[LiveTask] = []

    def append(self, batch: TaskBatch, users: np.ndarray) -> tuple[int, int]:
        """Read a batch: it becomes the batch being read.

        Parameters
        ----------
        batch : TaskBatch
        users : ndarray of int32, shape (len(batch),)
            User codes of the batch's tasks.

        Returns
        -------
        (int, int)
            The batch's task ids ``lo..hi-1``.
        """
        lo, hi = self.n, self.n + len(batch)
        self._store(batch, users, lo, hi)
        self.b_lo = lo
        self._read(batch, users)
        self.n = hi
        return lo, hi

    def batch(self) -> tuple[int, list[float], list[LiveTask]]:
        """The batch being read: its first task id, its submit times and its live records."""
        return self.b_lo, self.b_submit, self.b_live

    def finished(self, task: int, finish_s: float, server: int, record: LiveTask) -> None:
        """A task completed at ``finish_s`` on ``server`` (popped from :attr:`live`)."""
        raise NotImplementedError

    def unplaceable(self, task: int, record: LiveTask) -> None:
        """A task fits no server of the pool (or a DAG ancestor never can): it ended unstarted."""
        raise NotImplementedError

    def held(self, task: int, server: int, record: LiveTask) -> None:
        """A right-censored task held to the horizon (run time :data:`HELD`, not a placeholder)
        started on ``server`` (its start already in :attr:`start_s`) and was popped from
        :attr:`live`: it will hold the server until the horizon and end ``censored``, so its row
        is final now. Called only when :attr:`writes_held` is True."""
        raise NotImplementedError

    def end(self, n_arrived: int, running: dict[int, int]) -> None:
        """The horizon: only the first ``n_arrived`` tasks arrived; ``running`` (task → server)
        are the tasks started and not finished; the other live tasks are queued."""
        raise NotImplementedError

    def evicted(self, task: int) -> None:
        """The run of a live task was evicted: the task waits again (its start is forgotten: a
        task's ``start_s`` is its last run's) and its eviction count goes up.

        Raises
        ------
        NotImplementedError
            For a recorder that does not count evictions (a run of a scheduler that does not
            preempt).
        """
        raise NotImplementedError(f"{type(self).__name__} does not count evictions")

    def run_start(self, task: int) -> float:
        """The start (s) of the current run of a running task."""
        raise NotImplementedError

    def close(self, dropped: Sequence[int]) -> tuple[dict[str, np.ndarray], StreamedTasks | None]:
        """The run's tasks: :attr:`fairsim.simulator.engine.EngineResult.tasks` and
        :attr:`~fairsim.simulator.engine.EngineResult.streamed`.

        Parameters
        ----------
        dropped : sequence of int
            Tasks a job gate dropped because a DAG ancestor can never run.
        """
        raise NotImplementedError

    def abort(self) -> None:
        """The run failed or was interrupted: leave nothing half-written."""

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a task (repetition 0 without a job gate)."""
        raise NotImplementedError

    def task_constraint(self, task: int) -> int:
        """The task's code in the run's constraint index (0: any server)."""
        return self.codes[task] if self.codes is not None else 0

    def trace_task_index(self, task: int) -> int:
        """The trace's ``task_index`` of a task."""
        raise NotImplementedError

    def task_queue(self, task: int) -> int:
        """The task's queue: an index into the run's queue tree, -1 for the root (or no tree)."""
        return self.queues[task] if self.queues is not None else -1

    # ------------------------------------------------------------------ subclasses
    def _store(self, batch: TaskBatch, users: np.ndarray, lo: int, hi: int) -> None:
        """Keep what the recorder needs of a batch (task ids ``lo..hi-1``) beyond its live
        records."""

    def _key_columns(self, batch: TaskBatch) -> list[np.ndarray] | None:
        """The columns of the ``key`` of every task's live record, shape (len(batch),) each: the
        key is the tuple of a task's values in them (None: the key is None for every task)."""
        return None

    # ------------------------------------------------------------------ internals
    def _read(self, batch: TaskBatch, users: np.ndarray) -> None:
        """The submit times and live records of the batch being read."""
        n = len(batch)
        run = batch.run_s
        if self.hold_censored and batch.censored is not None:
            run = np.where(np.asarray(batch.censored, dtype=bool), HELD, run)
        if batch.end_at_s is not None:  # placeholders: held until their absolute end
            ends = np.asarray(batch.end_at_s, dtype=np.float64)
            marked = ~np.isnan(ends)
            if marked.any():
                run = np.where(marked, HELD, run)
                ids = np.flatnonzero(marked)
                self.until.update(zip((ids + self.n).tolist(), ends[ids].tolist(), strict=True))
        cols = [batch.demand[:, r] for r in range(self.n_resources)]
        key_cols = self._key_columns(batch)
        starts = _runs(users, batch.submit_s, run, batch.demand)
        if starts is None:
            self.b_submit = batch.submit_s.tolist()
            demand = _tuples(cols)
            self.b_live = list(
                zip(
                    users.tolist(),
                    demand,
                    run.tolist(),
                    repeat(None, n) if key_cols is None else _tuples(key_cols),
                    strict=True,
                )
            )
            return
        # one Python object per run of identical tasks
        counts = np.diff(np.append(starts, n))
        self.b_submit = _repeat(batch.submit_s[starts].tolist(), counts)
        user_l, run_l = users[starts].tolist(), run[starts].tolist()
        demand = _tuples([c[starts] for c in cols])
        if key_cols is None:  # one live record per run
            records = zip(user_l, demand, run_l, repeat(None, len(starts)), strict=True)
            self.b_live = _repeat_tuples(list(records), counts)
            return
        # one live record per run of identical tasks with identical keys (the replicas of one
        # canonical row, :mod:`fairsim.simulator.replicas`: a few hundred bytes less for every
        # replica that waits), else one demand tuple per run and a record per task
        same = np.ones(n - 1, dtype=bool)
        for c in key_cols:
            same &= c[1:] == c[:-1]
        both = np.union1d(starts, np.flatnonzero(np.concatenate(([True], ~same))))
        if 2 * len(both) > n:
            self.b_live = list(
                zip(
                    _repeat(user_l, counts),
                    _repeat_tuples(demand, counts),
                    _repeat(run_l, counts),
                    _tuples(key_cols),
                    strict=True,
                )
            )
            return
        of_run = (np.searchsorted(starts, both, side="right") - 1).tolist()
        keyed = zip(
            users[both].tolist(),
            [demand[i] for i in of_run],
            run[both].tolist(),
            _tuples([c[both] for c in key_cols]),
            strict=True,
        )
        self.b_live = _repeat_tuples(list(keyed), np.diff(np.append(both, n)))


class TaskTable(TaskRecorder):
    """Every task that arrived, as growable per-task columns kept to the end of the run.

    Memory per task is kept small for traces of tens of millions of tasks: a task ever seen costs
    its numpy columns (job id, task index, user, submit time, run time, demand: 48 bytes with two
    resources) and its run state in :mod:`array` buffers (8 + 8 + 4 + 1 + 1 bytes). The Python
    objects the event loop works with (live records: demand tuple, user code, run time) exist
    only for the tasks of the batch being read and for the live tasks; consecutive identical
    tasks (the instances of one Alibaba row) share them.

    It is also the :class:`fairsim.simulator.jobs.TaskJobColumns` of a job gate.

    Parameters
    ----------
    n_resources : int
    hold_censored : bool
        See :class:`TaskRecorder`.
    capacity : int, optional
        Rows allocated at first.
    jobs : bool
        Keep the job gate's columns (``rep``, ``instances``, ``parents``).
    constraints : ConstraintIndex, optional
        The run's placement constraints: keep every task's constraint code (:attr:`codes`).
    n_hint : int, optional
        The source's row count, if known: the columns grow to it at once when they first fill.
    evictions : bool
        Count every task's evictions (a scheduler that preempts; 4 bytes a task): the
        ``evictions`` column.
    """

    def __init__(
        self,
        n_resources: int,
        *,
        hold_censored: bool,
        capacity: int = 1 << 16,
        jobs: bool = False,
        constraints: ConstraintIndex | None = None,
        n_hint: int | None = None,
        evictions: bool = False,
    ) -> None:
        super().__init__(n_resources, hold_censored=hold_censored)
        self.n_hint = n_hint
        self.jobs = jobs
        self.constraints = constraints
        if constraints is not None:
            self.codes = self._codes = array("i")
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
        # run state, one entry per task
        self._start = array("d")
        self.start_s = self._start
        self._finish = array("d")
        self._server = array("i")
        self._unplaceable = bytearray()
        self._censored = bytearray()  # right-censored (1) or not (0)
        self._evictions: array[int] | None = array("i") if evictions else None

    def finished(self, task: int, finish_s: float, server: int, record: LiveTask) -> None:
        """Record the finish time and the server."""
        self._finish[task] = finish_s
        self._server[task] = server

    def unplaceable(self, task: int, record: LiveTask) -> None:
        """Mark the task unplaceable."""
        self._unplaceable[task] = True

    def evicted(self, task: int) -> None:
        """Count the eviction; the task's start is NaN again (it waits)."""
        if self._evictions is None:
            super().evicted(task)
            return
        self._evictions[task] += 1
        self._start[task] = _NAN

    def run_start(self, task: int) -> float:
        """The task's start (s)."""
        return self._start[task]

    def end(self, n_arrived: int, running: dict[int, int]) -> None:
        """Record the servers of the running tasks; drop the tasks that never arrived."""
        server = self._server
        for task, s in running.items():
            server[task] = s
        self.n = n_arrived

    def close(self, dropped: Sequence[int]) -> tuple[dict[str, np.ndarray], None]:
        """The table's own memory, trimmed to the tasks that arrived (no second copy of a table
        of tens of millions of rows; the table is not written to afterwards); the ``dropped``
        tasks are marked unplaceable."""
        n = self.n
        # the table's own bytes (no copy of n bytes at the run's peak), unless tasks the gate
        # dropped must be marked
        unplaceable = np.frombuffer(self._unplaceable, dtype=bool)[:n]
        if len(dropped):
            ids = np.asarray(dropped, dtype=np.int64)
            unplaceable = unplaceable.copy()
            unplaceable[ids[ids < n]] = True
        columns = {
            "job_id": _trim(self.job_id, n),
            "task_index": _trim(self.task_index, n),
            "user": _trim(self.user, n),
            "submit_s": _trim(self.submit_s, n),
            "start_s": np.frombuffer(self._start, dtype=np.float64)[:n],
            "finish_s": np.frombuffer(self._finish, dtype=np.float64)[:n],
            "server": np.frombuffer(self._server, dtype=np.intc)[:n].astype(np.int32, copy=False),
            "run_s": _trim(self.run_s, n),
            "demand": _trim(self.demand, n),
            "unplaceable": unplaceable,
            "censored": np.frombuffer(self._censored, dtype=bool)[:n],
            **({"rep": _trim(self.rep, n)} if self.jobs else {}),
        }
        if self._evictions is not None:
            columns["evictions"] = np.frombuffer(self._evictions, dtype=np.intc)[:n].astype(
                np.int32, copy=False
            )
        return columns, None

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a task (repetition 0 without a job gate)."""
        return int(self.job_id[task]), (int(self.rep[task]) if self.jobs else 0)

    def trace_task_index(self, task: int) -> int:
        """The trace's ``task_index`` of a task."""
        return int(self.task_index[task])

    def _store(self, batch: TaskBatch, users: np.ndarray, lo: int, hi: int) -> None:
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
        if batch.queue is not None:
            if self.queues is None:  # every batch of a run with a tree carries its queues
                self._queue_codes: array[int] = array("i", [-1]) * lo
                self.queues = self._queue_codes
            self._queue_codes.frombytes(np.asarray(batch.queue, dtype=np.intc).tobytes())
        if self.constraints is not None:
            if batch.constraint is None:
                self._codes.frombytes(np.zeros(n, dtype=np.intc).tobytes())
            else:
                codes = self.constraints.codes(batch.constraint).astype(np.intc)
                self._codes.frombytes(codes.tobytes())
        self._start.frombytes(np.full(n, np.nan).tobytes())
        self._finish.frombytes(np.full(n, np.nan).tobytes())
        self._server.frombytes(np.full(n, -1, dtype=np.intc).tobytes())
        self._unplaceable.extend(bytes(n))
        if self._evictions is not None:
            self._evictions.frombytes(bytes(n * self._evictions.itemsize))
        if batch.censored is None:
            self._censored.extend(bytes(n))
        else:
            self._censored.extend(np.asarray(batch.censored, dtype=bool).tobytes())

    def _grow(self, cap: int) -> None:
        names = ["job_id", "task_index", "user", "submit_s", "run_s", "demand"]
        if self.jobs:
            names += ["rep", "instances", "parents"]
        for name in names:
            old = getattr(self, name)
            new = np.empty((cap, *old.shape[1:]), dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)


class StreamingRecorder(TaskRecorder):
    """The live tasks only: every task that ends goes, as its row of ``tasks.parquet``, to a
    :class:`~fairsim.simulator.stream.TaskStream` (:mod:`fairsim.simulator.stream`).

    A live record's ``key`` is ``(job_id, task_index, submit_s, censored)``: what the task's row
    needs besides its user, demand, start and end. Consecutive tasks with the same values and key
    (the instances of one trace row, :mod:`fairsim.simulator.replicas`) share one live record.
    Every batch is counted in the stream's per-user and per-job totals once its tasks arrived
    (the last one up to the horizon). With placement constraints, the codes of the tasks read
    and not yet ended are kept (:class:`LiveCodes`). Job gates are not supported: they look
    tasks up after they end.

    In arrival order (and for a scheduler that does not preempt), a right-censored task held to
    the horizon is written when it starts (:meth:`held`): its row (``censored``, no finish) is
    final then, and the file's rows are put in task-id order at the end whenever they were
    written, so the engine keeps only its server in its running tasks, not its live record,
    start time and codes. Those tasks run to the horizon: their number grows with the trace's
    length (105,947 of the 274,742 tasks of an 8.4-hour resampled Google trace are live at its
    horizon, all of them such tasks), and each live record costs several hundred bytes.

    Parameters
    ----------
    path : path-like
        Where the finished ``tasks.parquet`` goes.
    resources : tuple of str
    users : dict of str to int
        The engine's user codes (see :class:`~fairsim.simulator.stream.TaskStream`).
    hold_censored : bool
        See :class:`TaskRecorder`.
    order : {"end", "arrival"}
        The row order of ``tasks.parquet`` (:class:`~fairsim.simulator.stream.TaskStream`).
    constraints : ConstraintIndex, optional
        The run's placement constraints.
    servers : sequence of str, optional
        The servers' ids by position, written as the file's ``server``
        (:class:`~fairsim.simulator.stream.TaskStream`).

    Attributes
    ----------
    stream : TaskStream
    counts_evictions : bool
        Class attribute: the rows carry an ``evictions`` column (False here; True for
        :class:`EvictingStreamingRecorder`).
    """

    counts_evictions = False

    def __init__(
        self,
        path: str | os.PathLike[str],
        resources: tuple[str, ...],
        users: dict[str, int],
        *,
        hold_censored: bool,
        order: str = "end",
        constraints: ConstraintIndex | None = None,
        servers: Sequence[str] | None = None,
    ) -> None:
        super().__init__(len(resources), hold_censored=hold_censored)
        self.stream = TaskStream(
            path, resources, users, order=order, servers=servers, evictions=self.counts_evictions
        )
        self.constraints = constraints
        self._live_codes = LiveCodes() if constraints is not None else None
        self.codes = self._live_codes
        self._live_queues: LiveQueues | None = None
        self._started: dict[int, float] = {}
        self.start_s = self._started
        self.writes_held = order == "arrival" and not self.counts_evictions
        # the batch being read: its job, user and submit columns, until counted as arrived
        self._arrivals: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # evictions of each live task evicted at least once (counted by the evicting subclass)
        self._evictions: dict[int, int] = {}

    def finished(self, task: int, finish_s: float, server: int, record: LiveTask) -> None:
        """Write the task's row (``finished``)."""
        user, demand, _, (job, index, submit, _) = record
        rows = self.stream.pending
        rows += (task, job, index, user, submit, self._started.pop(task), finish_s, server,
                 FINISHED, *demand)  # fmt: skip
        if len(rows) >= self.stream.limit:
            self.stream.flush()
        if self._live_codes is not None:
            self._live_codes.pop(task, None)
        if self._live_queues is not None:
            self._live_queues.pop(task, None)

    def unplaceable(self, task: int, record: LiveTask) -> None:
        """Write the task's row (``unplaceable``)."""
        user, demand, _, (job, index, submit, _) = record
        self.stream.row(
            task, job, index, user, submit, _NAN, _NAN, -1, UNPLACEABLE, demand, *self._tail(task)
        )
        if self._live_codes is not None:
            self._live_codes.pop(task, None)
        if self._live_queues is not None:
            self._live_queues.pop(task, None)

    def held(self, task: int, server: int, record: LiveTask) -> None:
        """Write the row of a censored task held to the horizon as it starts (``censored``:
        what :meth:`end` would write at the horizon)."""
        user, demand, _, (job, index, submit, _) = record
        self.stream.row(
            task, job, index, user, submit, self._started.pop(task), _NAN, server, CENSORED, demand
        )
        if self._live_codes is not None:
            self._live_codes.pop(task, None)
        if self._live_queues is not None:
            self._live_queues.pop(task, None)

    def run_start(self, task: int) -> float:
        """The start (s) of the current run of a running task."""
        return self._started[task]

    def evicted(self, task: int) -> None:
        """Forget the run's start (the task waits again); :class:`EvictingStreamingRecorder`
        also counts the eviction.

        Raises
        ------
        NotImplementedError
            Here (a run of a scheduler that does not preempt).
        """
        super().evicted(task)

    def _tail(self, task: int) -> tuple[int, ...]:
        """The values a task's row has after its demand (:class:`EvictingStreamingRecorder`: its
        evictions); none here."""
        return ()

    def end(self, n_arrived: int, running: dict[int, int]) -> None:
        """Count the batch being read up to the horizon, and write the rows of the tasks live
        at the horizon in task-id order: ``censored`` or ``running`` if they started, else
        ``queued``."""
        self._count_arrived(n_arrived - self.b_lo)
        live, started, stream = self.live, self._started, self.stream
        for task in sorted(live):
            user, demand, _, (job, index, submit, censored) = live.pop(task)
            server = running.get(task, -1)
            code = QUEUED if server < 0 else (CENSORED if censored else RUNNING)
            start = started.pop(task, _NAN)
            stream.row(
                task, job, index, user, submit, start, _NAN, server, code, demand, *self._tail(task)
            )
        if self._live_codes is not None:
            self._live_codes.clear()
        if self._live_queues is not None:
            self._live_queues.clear()

    def close(self, dropped: Sequence[int]) -> tuple[dict[str, np.ndarray], StreamedTasks]:
        """Finish ``tasks.parquet``: no per-task columns, the stream's summary.

        Raises
        ------
        ValueError
            If tasks are still live (:meth:`end` was not called).
        """
        if self.live:
            raise ValueError(f"{len(self.live)} tasks are still live at the end of the stream")
        return {}, self.stream.close()

    def abort(self) -> None:
        """Delete the partial file."""
        self.stream.abort()

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, 0)`` of a live task."""
        return self.live[task][3][0], 0

    def trace_task_index(self, task: int) -> int:
        """The trace's ``task_index`` of a live task."""
        return int(self.live[task][3][1])

    def _store(self, batch: TaskBatch, users: np.ndarray, lo: int, hi: int) -> None:
        self._count_arrived()  # the previous batch arrived whole
        self._arrivals = (np.asarray(batch.job_id, np.int64), users, batch.submit_s)
        if self._live_codes is not None and batch.constraint is not None:
            codes = self.constraints.codes(batch.constraint)  # type: ignore[union-attr]
            at = np.flatnonzero(codes)
            self._live_codes.update(zip((at + lo).tolist(), codes[at].tolist(), strict=True))
        if batch.queue is not None:
            if self._live_queues is None:
                self.queues = self._live_queues = LiveQueues()
            at = np.flatnonzero(np.asarray(batch.queue) >= 0)
            self._live_queues.update(
                zip((at + lo).tolist(), np.asarray(batch.queue)[at].tolist(), strict=True)
            )

    def _key_columns(self, batch: TaskBatch) -> list[np.ndarray]:
        """``job_id``, ``task_index``, ``submit_s`` and ``censored`` (False when the batch has
        no such column)."""
        n = len(batch)
        censored = (
            np.zeros(n, dtype=bool)
            if batch.censored is None
            else np.asarray(batch.censored, dtype=bool)
        )
        return [batch.job_id, batch.task_index, batch.submit_s, censored]

    def _count_arrived(self, n: int | None = None) -> None:
        """Count the first ``n`` tasks of the batch being read (all of them when None) in the
        stream's per-user and per-job totals: they all arrived."""
        if self._arrivals is None:
            return
        job, users, submit = self._arrivals
        self._arrivals = None
        if n is not None:
            job, users, submit = job[:n], users[:n], submit[:n]
        self.stream.count_arrivals(job, users, submit)


class EvictingStreamingRecorder(StreamingRecorder):
    """A :class:`StreamingRecorder` for a scheduler that preempts: it also counts the evictions
    of the live tasks and writes each task's count as the ``evictions`` column of its row
    (:class:`~fairsim.simulator.stream.TaskStream` with ``evictions=True``). Memory: one entry per
    live task evicted at least once.

    Parameters
    ----------
    path, resources, users, hold_censored, order, constraints, servers
        See :class:`StreamingRecorder`.
    """

    counts_evictions = True

    def finished(self, task: int, finish_s: float, server: int, record: LiveTask) -> None:
        """Write the task's row (``finished``) with its evictions."""
        user, demand, _, (job, index, submit, _) = record
        self.stream.row(
            task, job, index, user, submit, self._started.pop(task), finish_s, server, FINISHED,
            demand, self._evictions.pop(task, 0),
        )  # fmt: skip
        if self._live_codes is not None:
            self._live_codes.pop(task, None)

    def evicted(self, task: int) -> None:
        """Forget the run's start (the task waits again) and count the eviction."""
        del self._started[task]
        self._evictions[task] = self._evictions.get(task, 0) + 1

    def _tail(self, task: int) -> tuple[int, ...]:
        return (self._evictions.pop(task, 0),)


def _repeat(values: list[Any], counts: np.ndarray) -> list[Any]:
    """Every value (a number) repeated ``counts`` times."""
    obj = np.empty(len(values), dtype=object)
    obj[:] = values
    return np.repeat(obj, counts).tolist()


def _tuples(columns: list[np.ndarray]) -> list[tuple[Any, ...]]:
    """One tuple of Python scalars per row of the columns."""
    return list(zip(*(c.tolist() for c in columns), strict=True))


def _repeat_tuples(values: list[tuple[Any, ...]], counts: np.ndarray) -> list[Any]:
    """Every tuple repeated ``counts`` times (the same object, not copies)."""
    obj = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):  # one by one: a tuple is one value, not a row
        obj[i] = v
    return np.repeat(obj, counts).tolist()


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
