"""Replaying a trace's recorded placements: the engine's side of the scheduler ``recorded``.

The Google 2011 trace records what its production scheduler did: every SCHEDULE event names the
machine a task ran on, and the task's next terminal event (EVICT, FAIL, FINISH, KILL, LOST) ends
that *run*; a task evicted and scheduled again has several runs. :class:`RecordedRuns` holds them
(``placements.parquet`` of the converted trace, mapped to the servers of the pool by the scenario
layer), and :class:`ReplayScheduler` is the protocol by which a scheduler hands them to the engine.

What the engine does differently for a :class:`ReplayScheduler` (and for no other scheduler; the
choice is made once, when the run starts, like the task recorder):

* it calls :meth:`ReplayScheduler.replay` at every event time instead of
  :meth:`~fairsim.simulator.scheduler.Scheduler.decide`: each placement comes with the end of
  its run, so a placement no longer lasts the task's ``run_s``, and may carry the request the
  run holds on its server (a run's own request, which may differ from the task's demand: the
  Google 2011 trace records one per SCHEDULE row; the task's demand when it carries none);
* it commits a placement without the capacity check
  (:meth:`fairsim.simulator.cluster.ClusterState.commit_over`): the production scheduler
  over-committed its machines, and the replay keeps what it did;
* a run that is not the task's last one ends *without* ending the task: the task releases its
  server and waits again (:meth:`ReplayScheduler.on_run_end`) until its next run is placed;
  its last run's end completes it (:meth:`~fairsim.simulator.scheduler.Scheduler.on_completion`),
  unless that run is right-censored: then the engine's rule ``censored`` applies ("hold": it holds
  its server until the horizon and never completes; "complete": it completes at the run's end,
  a lower bound);
* ``utilization.parquet`` gains, per resource, the over-committed servers and the amount above
  capacity (:attr:`fairsim.simulator.engine.EngineResult.overcommit`).

Only one class may implement the protocol: the registry's ``recorded``
(:class:`fairsim.schedulers.recorded.Recorded`, in module :data:`REPLAY_MODULE`).
:class:`ReplayScheduler` refuses any other subclass when it is defined, so a plug-in scheduler
cannot switch over-commitment on: for every other scheduler the engine keeps the capacity check.

What ``tasks.parquet`` says of a replayed task: ``start_s`` is its first run's start, ``finish_s``
its last run's end (null unless that run ended it), ``server`` the machine of its last run
(also for a task that waits for its next run at the horizon, whose ``ended`` is then
``running``); so the queueing delay is the wait before the first run, and the job completion time
runs from the first submission to the end of the job's last run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from fairsim.simulator.scheduler import Scheduler

#: The module of the one class allowed to subclass :class:`ReplayScheduler`.
REPLAY_MODULE = "fairsim.schedulers.recorded"

#: A replayed placement: ``(task, server, end_s, last, censored, request)``; see
#: :meth:`ReplayScheduler.replay`.
ReplayedRun = tuple[int, int, float, bool, bool, tuple[float, ...] | None]


#: Task indices are below this bound (the Google converter's ``TASK_INDEX_LIMIT``), so
#: ``job_id * TASK_KEY_SPAN + task_index`` is one integer key per task.
TASK_KEY_SPAN = 1 << 24


@dataclass(frozen=True)
class RecordedRuns:
    """The recorded runs of a trace's tasks, on the servers of a pool.

    One row per run, sorted by ``(job_id, task_index, run)``. Built by the scenario layer from
    ``placements.parquet`` (:func:`fairsim.scenario.workload.recorded_runs`), which maps each
    run's machine to its server index.

    Attributes
    ----------
    job_id : ndarray of int64, shape (n_runs,)
    task_index : ndarray of int32, shape (n_runs,)
    server : ndarray of int32, shape (n_runs,)
        Server index of the run's machine in the pool.
    start_s : ndarray of float64, shape (n_runs,)
        Recorded start (the SCHEDULE event), seconds.
    end_s : ndarray of float64, shape (n_runs,)
        Recorded end (the terminal event), seconds; for a right-censored run the last event time
        of the converted trace (a lower bound).
    censored : ndarray of bool, shape (n_runs,)
        The run has no terminal event in the converted trace.
    request : ndarray of float64, shape (n_runs, n_resources), optional
        The request each run was placed with (Google 2011: its SCHEDULE row's, the columns
        ``cpu``, ``mem`` of ``placements.parquet``), in the units of the tasks' demands; None
        when the runs carry none (then only the tasks' own demands can be replayed).

    Raises
    ------
    ValueError
        If the arrays differ in length, are not sorted by ``(job_id, task_index)``, a task
        index is outside ``[0, 2**24)`` (the Google converter's bound), or ``request`` is not
        two-dimensional or holds a negative or non-finite value.
    """

    job_id: np.ndarray
    task_index: np.ndarray
    server: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    censored: np.ndarray
    request: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.job_id)
        for name in ("task_index", "server", "start_s", "end_s", "censored"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"RecordedRuns.{name}: {len(getattr(self, name))} rows, job_id has {n}"
                )
        idx = np.asarray(self.task_index, dtype=np.int64)
        if n and (idx.min() < 0 or idx.max() >= TASK_KEY_SPAN):
            raise ValueError(
                f"RecordedRuns.task_index: values from {idx.min()} to {idx.max()} (expected "
                f"0 <= task_index < {TASK_KEY_SPAN})"
            )
        keys = task_keys(self.job_id, self.task_index)
        if n > 1 and bool(np.any(keys[1:] < keys[:-1])):
            raise ValueError("RecordedRuns: rows are not sorted by (job_id, task_index, run)")
        req = self.request
        if req is not None:
            if np.ndim(req) != 2 or len(req) != n:
                raise ValueError(
                    f"RecordedRuns.request: shape {np.shape(req)}, expected ({n}, n_resources)"
                )
            bad = ~(np.isfinite(req) & (np.asarray(req) >= 0))
            if bad.any():
                raise ValueError(
                    f"RecordedRuns.request: value {float(np.asarray(req)[bad][0])!r} (expected a "
                    "finite request >= 0)"
                )

    def __len__(self) -> int:
        return len(self.job_id)


def task_keys(job_id: np.ndarray, task_index: np.ndarray) -> np.ndarray:
    """One int64 key per task: ``job_id * 2**24 + task_index`` (ndarray of int64)."""
    return np.asarray(job_id, dtype=np.int64) * TASK_KEY_SPAN + np.asarray(
        task_index, dtype=np.int64
    )


class ReplayScheduler(Scheduler):
    """The protocol of the scheduler that replays recorded placements (module docstring).

    The engine drives it as any scheduler (:meth:`bind`, :meth:`placeable`, :meth:`on_arrival`,
    :meth:`on_completion`, :meth:`next_wakeup`, :meth:`on_tick`, :meth:`pending`), except that
    it calls :meth:`replay` instead of :meth:`decide` and :meth:`on_run_end` when a run that is
    not the task's last one ends.

    Only the class of :data:`REPLAY_MODULE` may subclass it.

    Raises
    ------
    TypeError
        When a subclass is defined anywhere else (over-commitment cannot be switched on by a
        plug-in).
    """

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ != REPLAY_MODULE:
            raise TypeError(
                f"{cls.__module__}.{cls.__qualname__}: only {REPLAY_MODULE} may subclass "
                "ReplayScheduler (the engine lets the replay of recorded placements, and no "
                "other scheduler, over-commit servers)"
            )

    def replay(self, now: float) -> Sequence[ReplayedRun]:
        """The runs to start at ``now``: ``(task, server, end_s, last, censored, request)`` each.

        The engine commits them in this order (over-commitment allowed). ``end_s`` (>= ``now``)
        is when the run ends; ``last``: the run is the task's last, its end ends the task;
        ``censored``: the run is right-censored (``end_s`` is a lower bound; only meaningful for
        the last run); ``request``: what the run holds on its server while it runs, one number
        per resource, or None for the task's own demand.
        """
        raise NotImplementedError

    def on_run_end(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """A run that is not the task's last ended on ``server``: the task waits again."""
        raise NotImplementedError

    def decide(self) -> Iterator[tuple[int, int]]:
        """Not used: the engine calls :meth:`replay` (placements carry their run's end).

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError(
            f"scheduler {self.name!r} replays recorded placements: the engine calls replay(now), "
            "not decide()"
        )
