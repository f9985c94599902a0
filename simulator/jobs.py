"""Complex jobs: hold tasks until they may start (DAG parents, repetitions, a bounded job queue).

A *complex job* is a set of tasks that must all finish (UDRF paper, Tahir et al., Section I and
Section III-A, "User Jobs"); its job completion time (JCT) is the last task's finish minus the
job's submit time. Three workload rules decide *when* a submitted task is handed to the scheduler;
the :class:`JobGate` applies them between the task stream and the scheduler, so every scheduler
sees only tasks that may run now:

1. **Bounded waiting queue** (UDRF paper, Section V: "fixed-size waiting queues with a capacity of
   100 jobs. Whenever the waiting queue is not full, we add jobs to the queue"). A job enters the
   queue when its first task is submitted and the queue has fewer than ``queue_jobs`` jobs, else it
   waits, in submit order, for a job to leave. A job leaves the queue when all its repetitions have
   finished ("When a running job is executed in the system for the requested number of times, it
   will be removed from the waiting queue"). Tasks of a job outside the queue are held. The gate
   records which event let each job in (:attr:`JobGate.admissions`), so the time a job entered
   the queue can be read from the run's task table (:func:`admission_times`).
2. **Repetitions** (UDRF paper, Section V: "we randomly assign each job with a variable which
   indicates the total number of times the job has to run"). The task stream carries every
   repetition of a task (``rep`` = 0, 1, ...). Two modes (``repetition_mode``):

   ``simultaneous`` (default)
       The ``x_j`` repetitions are instances of the job that may run at the same time (the
       paper's job assignment ``x_j``, eq. 4, counts simultaneous instances): all are released
       when the job enters the queue.
   ``sequential``
       Repetition ``r`` of a job is held until every task of repetition ``r - 1`` has finished
       (one run after the other; ``configs/alibaba-2018-complex.yaml``).
3. **DAG parents** (Alibaba cluster-trace-v2018, ``traces/dag.py``): a task whose ``parents`` name
   other tasks of its job (same repetition) is held until every instance of every parent has
   finished.

A task row with ``instances = n`` (Alibaba) counts as finished when all ``n`` instances have. A task
that can never run (it fits no server) is *dropped*: it counts as done for the queue and the
repetition barrier, and its DAG descendants are dropped with it (they could never start). Tasks
whose parents never arrive (e.g. filtered out of the time window) stay held; :meth:`JobGate.held`
reports them at the end of a run.

The gate keeps state per task *row* (job, repetition, task index), never per instance, so an
11.9 M-instance Alibaba table needs no per-instance Python objects here.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Protocol

import numpy as np

from fairsim.errors import TraceError
from fairsim.simulator.workload import TaskBatch, TaskSource, WrappedTaskSource

Key = tuple[int, int, int]  # (job_id, repetition, task_index)

HELD_QUEUE = "job waiting for a place in the job queue"
REPETITION_MODES = ("simultaneous", "sequential")
#: How a job entered the queue (:attr:`JobGate.admissions`): when its first task was submitted, or
#: when a task finished (or was dropped) and so let the job that held the queue place go.
ADMIT_ON_ARRIVAL = 0
ADMIT_ON_FINISH = 1
HELD_REPETITION = "previous repetition of the job not finished"
HELD_DAG = "DAG parent not finished"
DROPPED_DAG = "a DAG ancestor can never run"


class TaskJobColumns(Protocol):
    """The per-task job columns the gate reads, indexed by task id: job, task row, repetition,
    instances and DAG parents (:class:`fairsim.simulator.recording.TaskTable` implements it)."""

    job_id: np.ndarray
    task_index: np.ndarray
    rep: np.ndarray
    instances: np.ndarray
    parents: np.ndarray


def parse_parents(raw: object, task: tuple[int, int] | None = None) -> tuple[int, ...]:
    """Parent task indices from the canonical ``parents`` column (``"3,4"``; null: none).

    Parameters
    ----------
    raw : object
        The column's value.
    task : (int, int), optional
        The task's ``(job_id, task_index)``, named in the error.

    Raises
    ------
    TraceError
        If ``raw`` is not a comma-separated list of integers (a ``ValueError``; one line naming
        the value and the task).
    """
    if raw is None or (isinstance(raw, float) and raw != raw) or raw == "":
        return ()
    try:
        return tuple(int(p) for p in str(raw).split(","))
    except ValueError:
        of = f" (task {task[0]}/{task[1]}, job/index)" if task is not None else ""
        raise TraceError(
            f"parents: {raw!r}{of} is not a comma-separated list of task indices"
        ) from None


class JobGate:
    """Decide when each submitted task is released to the scheduler.

    Parameters
    ----------
    dag : bool
        Enforce DAG parents (the ``parents`` column).
    job_sizes : mapping of int to int, optional
        Simulated tasks (instances) per repetition of each job. Required when ``queue_jobs`` is
        set or some job has more than one repetition (the gate must know when a repetition, and
        a job, is complete).
    repetitions : mapping of int to int, optional
        Number of repetitions of each job (default 1).
    queue_jobs : int, optional
        Capacity of the waiting queue, in jobs (UDRF paper Section V: 100). None: unbounded.
    repetition_mode : {"simultaneous", "sequential"}
        ``simultaneous`` (default): all repetitions of a job are released when it enters the
        queue (instances that may run side by side, the ``x_j`` of the UDRF paper's eq. 4);
        ``sequential``: repetition ``r`` waits until repetition ``r - 1`` has finished.

    Attributes
    ----------
    admissions : list of (int, int, int)
        With a bounded queue, one entry per job that entered it, in order: ``(job_id, task,
        how)``; the job entered at the submit time of ``task`` (``how`` = ``ADMIT_ON_ARRIVAL``) or
        at its finish time (``ADMIT_ON_FINISH``: the task's end let another job leave the queue).
        :func:`admission_times` turns them into times.

    Raises
    ------
    ValueError
        If ``queue_jobs`` < 1, ``repetition_mode`` is unknown, or sizes are missing where needed.

    Notes
    -----
    The engine calls :meth:`bind` once with its task table
    (:class:`fairsim.simulator.recording.TaskTable`), then :meth:`arrive` for every submitted
    task, :meth:`finish` for every finished task and :meth:`drop` for every task that can never
    run; each returns the task ids released *now*, in a deterministic order.
    """

    def __init__(
        self,
        *,
        dag: bool = True,
        job_sizes: Mapping[int, int] | None = None,
        repetitions: Mapping[int, int] | None = None,
        queue_jobs: int | None = None,
        repetition_mode: str = "simultaneous",
    ) -> None:
        if queue_jobs is not None and queue_jobs < 1:
            raise ValueError(f"queue_jobs: {queue_jobs!r} (expected an integer >= 1 or null)")
        if repetition_mode not in REPETITION_MODES:
            raise ValueError(
                f"repetition_mode: {repetition_mode!r} (expected 'simultaneous' or 'sequential')"
            )
        reps = dict(repetitions or {})
        if (queue_jobs is not None or any(r > 1 for r in reps.values())) and job_sizes is None:
            raise ValueError("job_sizes: required with a job queue or repetitions")
        self.dag = dag
        self.job_sizes = dict(job_sizes or {})
        self.repetitions = reps
        self.queue_jobs = queue_jobs
        self.repetition_mode = repetition_mode
        self._sequential = repetition_mode == "sequential"
        self._track_jobs = job_sizes is not None
        # DAG state, per task row
        self._left: dict[Key, int] = {}  # instances not yet finished
        self._done: set[Key] = set()
        self._failed: set[Key] = set()
        self._wait: dict[Key, list] = {}  # key -> [parents not done, held task ids]
        self._children: dict[Key, list[Key]] = {}
        # repetition barrier, per (job, rep)
        self._rep_left: dict[tuple[int, int], int] = {}
        self._rep_held: dict[tuple[int, int], list[int]] = {}
        self._reps_left: dict[int, int] = {}  # job -> repetitions not yet complete
        # bounded queue
        self._active: set[int] = set()
        self._fifo: deque[int] = deque()
        self._adm_held: dict[int, list[int]] = {}
        self.dropped: Counter[str] = Counter()
        #: Task ids dropped because a DAG ancestor can never run, in drop order.
        self.dropped_tasks: list[int] = []
        self.jobs_admitted = 0
        self.max_queue_wait = 0
        self.admissions: list[tuple[int, int, int]] = []
        self._event = (-1, ADMIT_ON_ARRIVAL)  # the engine call being answered (task, how)

    def bind(self, tasks: TaskJobColumns) -> None:
        """Attach the engine's task table (read at every call, so it may grow)."""
        self._tasks = tasks

    # ------------------------------------------------------------------ engine calls
    def arrive(self, task: int) -> list[int]:
        """A task was submitted: the tasks released now (``[task]`` or ``[]``)."""
        if self.queue_jobs is not None:
            self._event = (task, ADMIT_ON_ARRIVAL)
            job = int(self._tasks.job_id[task])
            held = self._adm_held.get(job)
            if held is not None:
                held.append(task)
                return []
            if job not in self._active:
                if len(self._active) < self.queue_jobs:
                    self._active.add(job)
                    self.jobs_admitted += 1
                    self.admissions.append((job, task, ADMIT_ON_ARRIVAL))
                else:
                    self._fifo.append(job)
                    self._adm_held[job] = [task]
                    self.max_queue_wait = max(self.max_queue_wait, len(self._fifo))
                    return []
        out: list[int] = []
        self._after_queue(task, out)
        return out

    def finish(self, task: int) -> list[int]:
        """A task finished: the tasks released now."""
        self._event = (task, ADMIT_ON_FINISH)
        out: list[int] = []
        if self.dag:
            key = self._key(task)
            left = self._left[key] - 1
            self._left[key] = left
            if left == 0:
                self._done.add(key)
                for child in self._children.pop(key, ()):
                    w = self._wait[child]
                    w[0] -= 1
                    if w[0] == 0:
                        out.extend(w[1])
                        w[1] = []
        self._count(task, out)
        return out

    def drop(self, task: int) -> list[int]:
        """A task can never run (fits no server): the tasks released now."""
        out: list[int] = []
        if self.dag:
            self._fail(self._key(task), out)
        self._count(task, out)
        return out

    def held(self) -> dict[str, int]:
        """Tasks still held, by reason (call at the end of a run)."""
        out: Counter[str] = Counter()
        out[HELD_QUEUE] = sum(len(v) for v in self._adm_held.values())
        out[HELD_REPETITION] = sum(len(v) for v in self._rep_held.values())
        out[HELD_DAG] = sum(len(w[1]) for w in self._wait.values())
        return {k: v for k, v in out.items() if v}

    # ------------------------------------------------------------------ stages
    def _key(self, task: int) -> Key:
        tasks = self._tasks
        return int(tasks.job_id[task]), int(tasks.rep[task]), int(tasks.task_index[task])

    def _after_queue(self, task: int, out: list[int]) -> None:
        rep = int(self._tasks.rep[task])
        if rep > 0 and self._sequential:
            job = int(self._tasks.job_id[task])
            prev = (job, rep - 1)
            if self._rep_left.get(prev, self._size(job)) > 0:
                self._rep_held.setdefault((job, rep), []).append(task)
                return
        self._after_rep(task, out)

    def _after_rep(self, task: int, out: list[int]) -> None:
        if not self.dag:
            out.append(task)
            return
        key = self._key(task)
        if key not in self._left:
            self._left[key] = int(self._tasks.instances[task])
        if key in self._failed:
            self._drop_descendant(task, out)
            return
        w = self._wait.get(key)
        if w is None:
            parents = parse_parents(self._tasks.parents[task], (key[0], key[2]))
            if not parents:
                out.append(task)
                return
            job, rep, _ = key
            pkeys = [(job, rep, p) for p in parents]
            if any(p in self._failed for p in pkeys):
                self._fail(key, out)
                self._drop_descendant(task, out)
                return
            missing = [p for p in pkeys if p not in self._done]
            w = self._wait[key] = [len(missing), []]
            for p in missing:
                self._children.setdefault(p, []).append(key)
        if w[0] == 0:
            out.append(task)
        else:
            w[1].append(task)

    def _drop_descendant(self, task: int, out: list[int]) -> None:
        """Drop a task because a DAG ancestor can never run (it counts as done)."""
        self.dropped[DROPPED_DAG] += 1
        self.dropped_tasks.append(task)
        self._count(task, out)

    def _fail(self, key: Key, out: list[int]) -> None:
        """Mark ``key`` and its DAG descendants failed; drop their held tasks."""
        stack = [key]
        while stack:
            k = stack.pop()
            if k in self._failed:
                continue
            self._failed.add(k)
            w = self._wait.pop(k, None)
            if w is not None:
                for t in w[1]:
                    self._drop_descendant(t, out)
            stack.extend(self._children.pop(k, ()))

    def _size(self, job: int) -> int:
        try:
            return self.job_sizes[job]
        except KeyError:
            raise ValueError(f"job_sizes: no size for job {job}") from None

    def _count(self, task: int, out: list[int]) -> None:
        """Job accounting for a task that finished or was dropped."""
        if not self._track_jobs:
            return
        job = int(self._tasks.job_id[task])
        rep = int(self._tasks.rep[task])
        k = (job, rep)
        left = self._rep_left.get(k)
        if left is None:
            left = self._size(job)
        left -= 1
        self._rep_left[k] = left
        if left > 0:
            return
        reps = self.repetitions.get(job, 1)
        if self._sequential and rep + 1 < reps:
            for t in self._rep_held.pop((job, rep + 1), ()):
                self._after_rep(t, out)
        reps_left = self._reps_left.get(job, reps) - 1
        if reps_left > 0:
            self._reps_left[job] = reps_left
            return
        self._reps_left.pop(job, None)
        # every repetition of the job is complete: it leaves the queue
        if self.queue_jobs is not None and job in self._active:
            self._active.discard(job)
            while self._fifo and len(self._active) < self.queue_jobs:
                nxt = self._fifo.popleft()
                self._active.add(nxt)
                self.jobs_admitted += 1
                self.admissions.append((nxt, *self._event))
                for t in self._adm_held.pop(nxt):
                    self._after_queue(t, out)


def admission_times(gate: JobGate, submit_s: np.ndarray, finish_s: np.ndarray) -> dict[int, float]:
    """Time each job entered the bounded queue, from a finished run's task columns.

    Parameters
    ----------
    gate : JobGate
        The run's gate (after the run).
    submit_s, finish_s : ndarray, shape (n_tasks,)
        The run's per-task submit and finish times, indexed by task id
        (:attr:`fairsim.simulator.engine.EngineResult.tasks`).

    Returns
    -------
    dict of int to float
        ``job_id -> seconds`` for every job the queue admitted (UDRF paper, Section V: the
        moment the job was added to the waiting queue of 100 jobs). Empty without a queue: every
        job then enters at its first task's submit time.
    """
    return {
        job: float(submit_s[task] if how == ADMIT_ON_ARRIVAL else finish_s[task])
        for job, task, how in gate.admissions
    }


class JobsTaskSource(WrappedTaskSource):
    """Wrap a task stream: repeat each job's tasks and optionally replace their run times.

    Every task of a job with ``r`` repetitions is emitted ``r`` times at its submit time, with
    ``rep = 0 .. r - 1`` (the :class:`JobGate` releases them all when the job enters the queue, or,
    in ``sequential`` mode, repetition ``k`` once ``k - 1`` is done).

    Parameters
    ----------
    inner : TaskSource
        The trace's task stream (its skip counts are shared, not copied).
    repetitions : mapping of int to int
        Repetitions per job id (missing: 1).
    job_run_s : mapping of int to float, optional
        Run time in seconds per job id, replacing the trace's (UDRF paper, Section V); the tasks
        are then no longer right-censored (their run times are the model's, known).
    """

    def __init__(
        self,
        inner: TaskSource,
        *,
        repetitions: Mapping[int, int],
        job_run_s: Mapping[int, float] | None = None,
    ) -> None:
        super().__init__(inner)
        self.repetitions = repetitions
        self.job_run_s = job_run_s
        mean = float(np.mean(list(repetitions.values()))) if repetitions else 1.0
        self.n_hint = int(inner.n_hint * mean) if inner.n_hint is not None else None

    def batches(self) -> Iterator[TaskBatch]:
        reps_of, runs_of = self.repetitions, self.job_run_s
        for batch in self.inner.batches():
            jobs = batch.job_id.tolist()
            if runs_of is not None:  # known run times: nothing is right-censored any more
                batch = replace(
                    batch,
                    run_s=np.array([runs_of[j] for j in jobs], dtype=np.float64),
                    censored=None,
                )
            r = np.array([reps_of.get(j, 1) for j in jobs], dtype=np.int64)
            idx = np.repeat(np.arange(len(batch)), r)
            first = np.cumsum(r) - r  # position of each task's first copy
            rep = (np.arange(len(idx)) - np.repeat(first, r)).astype(np.int32)
            fields = {
                name: getattr(batch, name)[idx]
                for name in ("job_id", "task_index", "user", "submit_s", "demand", "run_s")
            }
            for name in ("instances", "parents", "constraint", "censored", "priority", "queue"):
                col = getattr(batch, name)
                if col is not None:
                    fields[name] = col[idx]
            yield TaskBatch(**fields, rep=rep)
