"""The scheduler ``recorded``: the trace's own scheduler, replayed (the production baseline).

Places every recorded run of a task (Google 2011: a SCHEDULE event and the task's next terminal
event, ``placements.parquet`` of the converted trace) at its recorded start on its recorded
machine, and ends it at its recorded end (:mod:`fairsim.simulator.replay` says what the engine
does with it: over-commitment, runs that end without ending the task, right-censored last runs).

* A task arrives at its ``submit_s`` as always; its runs start at ``max(start_s, now)`` (never
  before the task arrived) and end at ``max(end_s, start)``; between two runs the task waits.
* A task with no recorded run (its runs were skipped by the converter, e.g. on a machine that
  machine_events never mentions) waits until the horizon.
* Every task is placeable (:meth:`Recorded.placeable`): the replay keeps what happened, even a
  request larger than the machine.

It needs the pool of the trace's machines (``cluster: {source: machine-events}``, every machine):
the scenario layer (:func:`fairsim.scenario.workload.recorded_runs`) maps each run's machine to
its server index and gives the runs to the scheduler as the scenario input ``placements``.

Run state: one heap of ``(next start, task)`` over the tasks waiting for a run that has a start,
and the task's next run by task id; :meth:`Recorded.replay` pops the runs due, so a run costs
two heap operations here and two in the engine.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

import numpy as np

from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.replay import RecordedRuns, ReplayedRun, ReplayScheduler, task_keys


class Recorded(ReplayScheduler):
    """Replay the trace's recorded placements (module docstring).

    Parameters
    ----------
    placements : RecordedRuns, optional
        The recorded runs on the pool's servers; a scenario input (the scenario layer gives
        them, like user weights), never a config entry. Required before :meth:`bind`.

    Raises
    ------
    ValueError
        From :meth:`bind`, without placements or with a run on a server the pool does not have.
    """

    name = "recorded"
    # what the production scheduler did, not one of the field's fairness properties:
    work_conserving = False  # a task waits for its recorded start even where it would fit
    lowest_share_first = False  # the recorded order, whatever the users hold
    fifo_within_user = False  # the recorded start order, not the submission order
    mechanism = None  # no exact mechanism: fairness over time compares it with drfh

    def __init__(self, *, placements: RecordedRuns | None = None) -> None:
        self.placements = placements

    def bind(self, cluster: ClusterView) -> None:
        """Index the recorded runs by task; refuse runs on servers the pool lacks."""
        super().bind(cluster)
        p = self.placements
        if p is None:
            raise ValueError(
                "scheduler 'recorded': no recorded placements (the scenario gives them for a "
                "google-2011 trace on cluster source machine-events)"
            )
        server = np.asarray(p.server, dtype=np.int64)
        if len(server) and (server.min() < 0 or server.max() >= cluster.n_servers):
            bad = int(server[(server < 0) | (server >= cluster.n_servers)][0])
            raise ValueError(
                f"scheduler 'recorded': a recorded run is on server {bad}, the pool has "
                f"{cluster.n_servers} servers"
            )
        keys = task_keys(p.job_id, p.task_index)
        n = len(keys)
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, int)
        stop = np.r_[first[1:], n] if n else np.zeros(0, int)
        self._runs: dict[int, tuple[int, int]] = dict(
            zip(keys[first].tolist(), zip(first.tolist(), stop.tolist(), strict=True), strict=True)
        )
        self._server: list[int] = server.tolist()
        self._start: list[float] = np.asarray(p.start_s, dtype=np.float64).tolist()
        self._end: list[float] = np.asarray(p.end_s, dtype=np.float64).tolist()
        self._censored: list[bool] = np.asarray(p.censored, dtype=bool).tolist()
        self._next: dict[int, tuple[int, int]] = {}  # task -> (its next run's row, stop)
        self._heap: list[tuple[float, int]] = []  # (next run's start, task)
        self._waiting = 0

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Always: the replay keeps what happened (a request larger than its machine
        over-commits it)."""
        return True

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Always (see :meth:`placeable`)."""
        return True

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Find the task's runs by ``(job_id, task_index)``; queue its first one."""
        view = self.cluster_
        job, _ = view.task_job(task)
        rows = self._runs.get(job * (1 << 24) + view.task_index(task))
        self._waiting += 1
        if rows is None:
            return  # no recorded run: it waits until the horizon
        self._next[task] = rows
        heapq.heappush(self._heap, (self._start[rows[0]], task))

    def on_run_end(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Queue the task's next run."""
        self._waiting += 1
        heapq.heappush(self._heap, (self._start[self._next[task][0]], task))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The task's last run ended."""
        del self._next[task]

    def replay(self, now: float) -> Iterator[ReplayedRun]:
        """The runs whose recorded start is at or before ``now``, in ``(start, task)`` order."""
        heap, nxt = self._heap, self._next
        while heap and heap[0][0] <= now:
            task = heapq.heappop(heap)[1]
            row, stop = nxt[task]
            nxt[task] = (row + 1, stop)
            self._waiting -= 1
            end = self._end[row]
            yield task, self._server[row], max(end, now), row + 1 == stop, self._censored[row]

    def next_wakeup(self, now: float) -> float:
        """The next recorded start (always after ``now``: :meth:`replay` placed every run due
        by then), or ``inf``."""
        return self._heap[0][0] if self._heap else math.inf

    def pending(self) -> int:
        """Tasks waiting: arrived and not running (before a run, between two, or with no run)."""
        return self._waiting
