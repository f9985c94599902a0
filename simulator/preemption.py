"""Preemption: what the engine keeps of the runs a scheduler takes back.

A scheduler that declares :attr:`fairsim.simulator.scheduler.Scheduler.preempts` may yield
:class:`fairsim.simulator.scheduler.Eviction` records from its ``decide()``; the engine
(:class:`fairsim.simulator.engine.Engine`, its preempting event loop, chosen once when the run
starts) validates each one, ends the run, and hands it to an :class:`EvictionLog`:

* an evicted task waits again with its full run time: it restarts from scratch when it is placed
  again (as an evicted task of the Google 2011 trace does), so its finish time is its last start
  plus its run time; the evicted run is never counted as completed;
* the run's *lost work* is its length times the task's demand, in resource-seconds per resource
  (a run evicted at the instant it started loses nothing);
* every eviction is counted per task (``evictions`` in ``tasks.parquet``) and per run
  (:class:`PreemptionReport`: evictions, tasks evicted, lost work, and both over time on the
  utilisation grid, ``evictions.parquet``).

Preemption loops. A task is *in a preemption loop* when it is evicted :attr:`LoopRule.evictions`
times (default 3) within :attr:`LoopRule.window_s` seconds (default 600): evicted, placed again,
evicted again, with no more than the window between the first and the last of those evictions
(the pattern of kubernetes-sigs/kueue #3779: the same workloads preempted and readmitted again
and again). Each task is counted once, at the eviction that completes its first such series; the
run reports the number of tasks, the time of the first detection and the first tasks found
(:attr:`PreemptionReport.loops`). A loop is reported, not stopped.

Termination. Two rules make every run end whatever the scheduler does, each stopping the run
with :class:`fairsim.errors.PlacementError` naming the scheduler and the task:

* a task is evicted at most once per instant: a second eviction of the same task at the same
  time (it was evicted, placed again and evicted again within one pass: a loop that never lets
  time advance) is refused. So a pass is finite: each eviction frees resources that only
  a placement can take again, and each task is placed at most twice per instant;
* a task evicted more than :data:`MAX_TASK_EVICTIONS` times stops the run (a loop that advances
  time without end, e.g. a periodic scheduler with an infinite horizon).

Memory stays bounded: the log keeps, per live task that was evicted, its count and its last
:attr:`LoopRule.evictions` eviction times (dropped when the task ends), the run's running totals,
and one row per utilisation grid point; never a record per eviction.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fairsim.errors import PlacementError

#: A task evicted more than this many times stops the run (module docstring: termination).
MAX_TASK_EVICTIONS = 10_000
#: Tasks in a preemption loop named in the report (the first ones found).
LOOP_EXAMPLES = 5


@dataclass(frozen=True)
class LoopRule:
    """When a task is in a preemption loop: ``evictions`` evictions within ``window_s`` seconds.

    Parameters
    ----------
    evictions : int
        Evictions (>= 2) of one task that make a loop.
    window_s : float
        The longest span (seconds, > 0) from the first to the last of them.

    Raises
    ------
    ValueError
        For ``evictions`` < 2 or a ``window_s`` that is not a finite number > 0.
    """

    evictions: int = 3
    window_s: float = 600.0

    def __post_init__(self) -> None:
        if not (isinstance(self.evictions, int) and self.evictions >= 2):
            raise ValueError(
                f"preemption loop rule: evictions {self.evictions!r} (expected an integer >= 2)"
            )
        if not (math.isfinite(self.window_s) and self.window_s > 0):
            raise ValueError(
                f"preemption loop rule: window_s {self.window_s!r} (expected a number > 0)"
            )


@dataclass(frozen=True)
class PreemptionReport:
    """What a run of a scheduler that preempts recorded of its evictions
    (:attr:`fairsim.simulator.engine.EngineResult.preemption`).

    Attributes
    ----------
    evictions : int
        Runs the scheduler took back.
    tasks_evicted : int
        Tasks evicted at least once.
    work_lost : ndarray, shape (n_resources,)
        Resource-seconds of the evicted runs: the sum over evicted runs of the run's length
        (seconds) times the task's demand (the pool's units).
    run_s_lost : float
        Seconds of the evicted runs (their lengths summed).
    work_used : ndarray, shape (n_resources,)
        Resource-seconds used over the simulated window, evicted runs included (the time
        integral of the used amount).
    samples : ndarray, shape (n_samples, 2 + n_resources)
        On the utilisation grid: time (s), evictions so far, then the work lost so far per
        resource (resource-seconds); "so far" counts every eviction at or before the time.
    rule : LoopRule
        The loop rule applied.
    loops : int
        Tasks found in a preemption loop (:class:`LoopRule`).
    first_loop_s : float or None
        When the first of them was found (None: no loop).
    loop_examples : tuple of (int, int)
        ``(job_id, task_index)`` of the first :data:`LOOP_EXAMPLES` tasks found in a loop.
    """

    evictions: int
    tasks_evicted: int
    work_lost: np.ndarray
    run_s_lost: float
    work_used: np.ndarray
    samples: np.ndarray
    rule: LoopRule
    loops: int
    first_loop_s: float | None
    loop_examples: tuple[tuple[int, int], ...]


class RunningIndex:
    """The engine's running tasks as a :class:`fairsim.simulator.cluster.RunningTasks` (what runs
    where, for the schedulers' views).

    Parameters
    ----------
    server_of : dict of int to int
        The engine's running tasks, task -> server (read, never changed here).
    start_of : callable
        ``start_of(task)``: the start (s) of the task's current run (the recorder's).
    by_server : list of dict, optional
        Per server, its running tasks in the order they started (keys; values None), kept by
        the engine's preempting event loop. None: :meth:`on_server` scans ``server_of``.
    """

    def __init__(
        self,
        server_of: dict[int, int],
        start_of: Callable[[int], float],
        by_server: list[dict[int, None]] | None = None,
    ) -> None:
        self._server_of = server_of
        self._start_of = start_of
        self._by_server = by_server

    def server_of(self, task: int) -> int:
        """The server ``task`` runs on, or -1."""
        return self._server_of.get(task, -1)

    def start_of(self, task: int) -> float:
        """The start of the current run of ``task`` (s), or NaN when it does not run."""
        if task not in self._server_of:
            return math.nan
        return self._start_of(task)

    def on_server(self, server: int) -> tuple[int, ...]:
        """The tasks running on ``server``, oldest run first."""
        if self._by_server is not None:
            return tuple(self._by_server[server])
        return tuple(t for t, s in self._server_of.items() if s == server)


class EvictionLog:
    """Counts, lost work, loop detection and the termination rules of a run's evictions (module
    docstring).

    The engine calls :meth:`evict` for each eviction it commits (before it changes anything:
    :meth:`evict` may refuse it), :meth:`forget` when an evicted task ends, and :meth:`sample`
    at utilisation grid points.

    Parameters
    ----------
    scheduler : str
        The scheduler's name (in error messages).
    n_resources : int
    rule : LoopRule
    """

    def __init__(self, scheduler: str, n_resources: int, rule: LoopRule) -> None:
        self.scheduler = scheduler
        self.rule = rule
        self.evictions = 0
        self.tasks_evicted = 0
        self.work_lost = [0.0] * n_resources
        self.run_s_lost = 0.0
        # live tasks evicted at least once: [evictions, their last rule.evictions times, looping]
        self._state: dict[int, list] = {}
        self.loops = 0
        self.first_loop_s: float | None = None
        self.loop_examples: list[tuple[int, int]] = []
        self._samples: list[np.ndarray] = []

    def evict(
        self,
        task: int,
        demand: tuple[float, ...],
        started_s: float,
        now: float,
        identity: Callable[[int], tuple[int, int]],
    ) -> None:
        """Record the eviction at ``now`` of the run of ``task`` that started at ``started_s``.

        Parameters
        ----------
        task : int
        demand : tuple of float
            What the run held.
        started_s, now : float
            The run's start and end (s).
        identity : callable
            ``identity(task)`` -> ``(job_id, task_index)``, asked for a task found in a loop.

        Raises
        ------
        PlacementError
            When ``task`` was already evicted at ``now``, or has been evicted
            :data:`MAX_TASK_EVICTIONS` times (module docstring: termination); nothing is
            recorded then.
        """
        state = self._state.get(task)
        if state is None:
            state = self._state[task] = [0, deque(maxlen=self.rule.evictions), False]
            self.tasks_evicted += 1
        times: deque[float] = state[1]
        if times and times[-1] == now:
            raise PlacementError(
                f"scheduler {self.scheduler!r} evicted task {task} a second time at {now:g} s: it "
                "was evicted, placed again and evicted again in the same instant, a preemption "
                "loop that never lets time advance (a task is evicted at most once per instant)"
            )
        if state[0] >= MAX_TASK_EVICTIONS:
            raise PlacementError(
                f"scheduler {self.scheduler!r} evicted task {task} more than "
                f"{MAX_TASK_EVICTIONS:,} times (at {now:g} s): a preemption loop without end"
            )
        state[0] += 1
        times.append(now)
        self.evictions += 1
        span = now - started_s
        self.run_s_lost += span
        lost = self.work_lost
        for r, d in enumerate(demand):
            lost[r] += d * span
        if (
            not state[2]
            and len(times) == self.rule.evictions
            and now - times[0] <= self.rule.window_s
        ):
            state[2] = True
            self.loops += 1
            if self.first_loop_s is None:
                self.first_loop_s = now
            if len(self.loop_examples) < LOOP_EXAMPLES:
                self.loop_examples.append(identity(task))

    def forget(self, task: int) -> None:
        """``task`` ended (completed): its eviction times are no longer needed."""
        self._state.pop(task, None)

    def sample(self, times: np.ndarray) -> None:
        """The running totals at the grid times ``times`` (ndarray, shape (n,))."""
        row = np.array([0.0, float(self.evictions), *self.work_lost])
        block = np.broadcast_to(row, (times.size, row.size)).copy()
        block[:, 0] = times
        self._samples.append(block)

    def report(self, work_used: list[float]) -> PreemptionReport:
        """The run's :class:`PreemptionReport`; ``work_used``: resource-seconds used over the
        window, per resource."""
        width = 2 + len(self.work_lost)
        return PreemptionReport(
            evictions=self.evictions,
            tasks_evicted=self.tasks_evicted,
            work_lost=np.array(self.work_lost),
            run_s_lost=self.run_s_lost,
            work_used=np.array(work_used, dtype=np.float64),
            samples=np.vstack(self._samples) if self._samples else np.empty((0, width)),
            rule=self.rule,
            loops=self.loops,
            first_loop_s=self.first_loop_s,
            loop_examples=tuple(self.loop_examples),
        )
