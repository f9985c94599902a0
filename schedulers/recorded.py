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
* Which request a run holds on its machine (parameter ``requests``): ``schedule`` (the default)
  the run's own, its SCHEDULE row's request (``placements.parquet``'s ``cpu`` and ``mem``: what
  the production scheduler placed), so that a task resubmitted or updated with another request
  holds that one; ``first`` the task's demand (its first request, the converter's rule), the
  workload every simulated scheduler replays, for comparing them on the same demands. The task's
  demand in the result tables (``tasks.parquet``) is its first request under both.

It needs the pool of the trace's machines (``cluster: {source: machine-events}``, every machine):
the scenario layer (:func:`fairsim.scenario.workload.recorded_runs`) maps each run's machine to
its server index and gives the runs to the scheduler as the scenario input ``placements``.

Run state: every run in recorded start order, walked once (:meth:`Recorded.replay` takes the
runs due), the engine task id of every task key that arrived and each task's next run; a run
whose start passes before its task is ready (not arrived yet, or its previous run not ended)
starts as soon as it is. A run costs a few dictionary look-ups here and two heap operations in
the engine.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.replay import (
    TASK_KEY_SPAN,
    RecordedRuns,
    ReplayedRun,
    ReplayScheduler,
    task_keys,
)


class Recorded(ReplayScheduler):
    """Replay the trace's recorded placements (module docstring).

    Parameters
    ----------
    placements : RecordedRuns, optional
        The recorded runs on the pool's servers; a scenario input (the scenario layer gives
        them, like user weights), never a config entry. Required before :meth:`bind`.
    requests : {"schedule", "first"}
        The request each run holds on its machine: ``"schedule"`` its own (the SCHEDULE row's,
        ``placements.request``: what production placed), ``"first"`` the task's demand (each
        task's first request, the workload of every simulated scheduler).

    Raises
    ------
    ValueError
        From :meth:`bind`, without placements, with a run on a server the pool does not have,
        or with ``requests="schedule"`` and placements without their runs' requests.
    """

    name = "recorded"
    # what the production scheduler did, not one of the field's fairness properties:
    work_conserving = False  # a task waits for its recorded start even where it would fit
    lowest_share_first = False  # the recorded order, whatever the users hold
    fifo_within_user = False  # the recorded start order, not the submission order
    mechanism = None  # no exact mechanism: fairness over time compares it with drfh

    def __init__(
        self,
        *,
        placements: RecordedRuns | None = None,
        requests: Literal["schedule", "first"] = "schedule",
    ) -> None:
        self.placements = placements
        self.requests = requests

    def bind(self, cluster: ClusterView) -> None:
        """Index the recorded runs by task and by start; refuse runs on servers the pool
        lacks."""
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
        if self.requests not in ("schedule", "first"):
            raise ValueError(
                f"scheduler 'recorded': requests={self.requests!r} (expected 'schedule' or 'first')"
            )
        if self.requests == "schedule" and p.request is None:
            raise ValueError(
                "scheduler 'recorded': requests='schedule' needs each run's request "
                "(RecordedRuns.request) and the placements carry none; give them or use "
                "requests='first'"
            )
        keys = task_keys(p.job_id, p.task_index)
        n = len(keys)
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, int)
        stop = np.r_[first[1:], n] if n else np.zeros(0, int)
        # per task key: its first run's row and the row after its last
        self._runs: dict[int, tuple[int, int]] = dict(
            zip(keys[first].tolist(), zip(first.tolist(), stop.tolist(), strict=True), strict=True)
        )
        start = np.asarray(p.start_s, dtype=np.float64)
        last = np.zeros(n, dtype=bool)
        last[stop - 1] = True
        self._server: list[int] = server.tolist()
        self._end: list[float] = np.asarray(p.end_s, dtype=np.float64).tolist()
        self._last: list[bool] = last.tolist()
        self._censored: list[bool] = np.asarray(p.censored, dtype=bool).tolist()
        # per row, the request its run holds (None: the task's demand)
        self._req: list[tuple[float, ...]] | None = None
        if self.requests == "schedule" and p.request is not None:
            req = np.asarray(p.request, dtype=np.float64)
            if req.shape[1] != cluster.n_resources:
                raise ValueError(
                    f"scheduler 'recorded': the runs' requests have {req.shape[1]} resources, "
                    f"the pool {cluster.n_resources}"
                )
            # one tuple per distinct request, shared by its runs (the Google sample's 890,514
            # runs ask for 2,441 distinct ones): a list of references, not of tuples
            distinct: dict[tuple[float, ...], tuple[float, ...]] = {}
            self._req = [
                distinct.setdefault(r, r)
                for r in zip(*(col.tolist() for col in req.T), strict=True)
            ]
        # every run in start order (ties: task key, then run): the stream replay() walks
        order = np.lexsort((np.arange(n), keys, start))
        self._o_start: list[float] = start[order].tolist()
        self._o_key: list[int] = keys[order].tolist()
        self._o_row: list[int] = order.tolist()
        self._pos = 0  # the next run of the stream
        self._task: dict[int, int] = {}  # task key -> engine task id, from its arrival
        self._next: dict[int, int] = {}  # task -> the row of its next run
        self._busy: set[int] = set()  # tasks running
        self._passed: set[int] = set()  # rows the stream passed before their task was ready
        self._due: list[int] = []  # tasks whose next run's row was passed: start them now
        self._waiting = 0

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Always: the replay keeps what happened (a request larger than its machine
        over-commits it)."""
        return True

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Always (see :meth:`placeable`)."""
        return True

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Find the task's runs by ``(job_id, task_index)``."""
        view = self.cluster_
        job, _ = view.task_job(task)
        key = job * TASK_KEY_SPAN + view.task_index(task)
        self._waiting += 1
        rows = self._runs.get(key)
        if rows is None:
            return  # no recorded run: it waits until the horizon
        self._task[key] = task
        self._next[task] = rows[0]
        if rows[0] in self._passed:  # recorded to start before the task arrived
            self._due.append(task)

    def on_run_end(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The task waits for its next run (now, if its recorded start has passed)."""
        self._waiting += 1
        self._busy.discard(task)
        if self._next[task] in self._passed:
            self._due.append(task)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """The task's last run ended."""
        self._busy.discard(task)
        del self._next[task]

    def replay(self, now: float) -> list[ReplayedRun]:
        """The runs whose recorded start is at or before ``now`` and whose task is ready (arrived,
        and its previous run ended), in recorded start order; those whose task is not ready
        start as soon as it is."""
        out: list[ReplayedRun] = []
        due = self._due
        if due:
            self._due = []
            for task in due:
                row = self._next[task]
                self._passed.discard(row)
                out.append(self._start_run(task, row, now))
        pos, o_start = self._pos, self._o_start
        n = len(o_start)
        while pos < n and o_start[pos] <= now:
            row = self._o_row[pos]
            task = self._task.get(self._o_key[pos], -1)
            pos += 1
            if task < 0 or task in self._busy or self._next.get(task) != row:
                self._passed.add(row)  # started when its task is ready
            else:
                out.append(self._start_run(task, row, now))
        self._pos = pos
        return out

    def _start_run(self, task: int, row: int, now: float) -> ReplayedRun:
        self._waiting -= 1
        self._busy.add(task)
        self._next[task] = row + 1
        end = self._end[row]
        req = self._req
        return (
            task,
            self._server[row],
            end if end > now else now,
            self._last[row],
            self._censored[row],
            None if req is None else req[row],
        )

    def next_wakeup(self, now: float) -> float:
        """The next recorded start, or ``inf``. After :meth:`replay` at ``now`` it is later than
        ``now``; before the first pass (runs recorded to start at or before the first event)
        it is the smallest time after ``now``, so that the first pass takes them."""
        pos = self._pos
        if pos == len(self._o_start):
            return math.inf
        start = self._o_start[pos]
        return start if start > now else math.nextafter(now, math.inf)

    def pending(self) -> int:
        """Tasks waiting: arrived and not running (before a run, between two, or with no run)."""
        return self._waiting
