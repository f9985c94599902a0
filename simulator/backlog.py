"""Backlogged users with activity windows (PS-DSF paper, Section V).

The paper's users are *active* (they always have tasks waiting) or *inactive* (none): "User 4 is
inactive during interval (100, 250) sec, and is active elsewhere". The engine cannot withdraw a
queued task, so a backlogged user is realised by a feedback source: every ``step_s`` seconds of
an activity window, :class:`BacklogTaskSource` tops the user's queue up to ``target`` tasks, reading
the queue lengths from a :class:`QueueCounter` wrapped around the scheduler. Outside its windows a
user submits nothing; what is still queued when a window closes (at most one top-up) still runs,
so an inactive user's allocation fades out within about one run time plus one step.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from fairsim.simulator.scheduler import DelegatingScheduler, Eviction, Scheduler
from fairsim.simulator.workload import TaskBatch, TaskSource


class QueueCounter(DelegatingScheduler):
    """Wrap a scheduler and count every user's queued tasks (arrived, not yet placed).

    Every call is delegated to ``inner``; :attr:`queued` is read by the backlog source.

    Parameters
    ----------
    inner : Scheduler
        The scheduler that decides.
    """

    def __init__(self, inner: Scheduler) -> None:
        super().__init__(inner)
        self.queued: dict[int, int] = {}
        self._owner: dict[int, int] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Count the task as queued, then pass it on."""
        self.queued[user] = self.queued.get(user, 0) + 1
        self._owner[task] = user
        self.inner.on_arrival(task, user, demand)

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Count the evicted task as queued again, then pass it on."""
        self.queued[user] = self.queued.get(user, 0) + 1
        self._owner[task] = user
        self.inner.on_eviction(task, user, demand, server)

    def decide(self) -> Iterator[tuple[int, int]]:
        """The wrapped scheduler's placements (each one leaves its user's queue) and
        evictions."""
        for item in self.inner.decide():
            if not isinstance(item, Eviction):
                try:
                    user = self._owner.pop(item[0])
                except (TypeError, IndexError, KeyError):
                    pass  # not a placement of a waiting task: the engine refuses it, naming it
                else:
                    self.queued[user] -= 1
            yield item


@dataclass(frozen=True)
class BackloggedUser:
    """A user that keeps ``target`` tasks queued while active.

    Attributes
    ----------
    name : str
    demand : tuple of float
        Per-task demand, one entry per resource.
    run_s : tuple of float
        ``(lo, hi)``: run times uniform in ``[lo, hi]`` seconds.
    windows : tuple of (float, float)
        Activity windows ``[start, end)``, in order.
    target : int
        Queue length kept while active (> 0).
    """

    name: str
    demand: tuple[float, ...]
    run_s: tuple[float, float]
    windows: tuple[tuple[float, float], ...]
    target: int

    def active(self, t: float) -> bool:
        """Whether ``t`` lies in an activity window."""
        return any(a <= t < b for a, b in self.windows)


class BacklogTaskSource(TaskSource):
    """Top every active user's queue up to its target every ``step_s`` seconds.

    Parameters
    ----------
    users : sequence of BackloggedUser
    resources : sequence of str
    end_s : float
        No task is submitted at or after ``end_s``.
    step_s : float
        Spacing of the top-ups (> 0).
    rng : numpy.random.Generator
        Draws the run times.

    Notes
    -----
    The engine pulls the next batch as soon as the last row of the current one has arrived, so the
    last row of every top-up is submitted half a step after the others: the next top-up then reads
    the queue lengths after this step's placements, and never overshoots the target by more than
    one task (a step where nobody needs a task still submits one, to keep the clock going).
    :meth:`attach` must be called with the engine's scheduler before the run. User codes are
    given by the engine in order of first appearance; :meth:`user_order` lists the names in that
    order.
    """

    def __init__(
        self,
        users: Sequence[BackloggedUser],
        *,
        resources: Sequence[str],
        end_s: float,
        step_s: float,
        rng: np.random.Generator,
    ) -> None:
        super().__init__()
        if not step_s > 0:
            raise ValueError(f"step_s: {step_s!r} (expected a number > 0)")
        self.users = list(users)
        self.resources = tuple(resources)
        self.end_s = float(end_s)
        self.step_s = float(step_s)
        self._rng = rng
        self._counter: QueueCounter | None = None
        self._n = 0

    def attach(self, scheduler: Scheduler) -> QueueCounter:
        """Wrap the scheduler the engine will run; returns the wrapper to hand to the engine."""
        self._counter = QueueCounter(scheduler)
        return self._counter

    def user_order(self) -> list[str]:
        """User names in order of first submission (= the engine's user codes)."""
        first = {u.name: min(a for a, _b in u.windows) for u in self.users if u.windows}
        starts = {n: math.ceil(a / self.step_s) for n, a in first.items()}
        return sorted(starts, key=lambda n: starts[n])  # stable: config order breaks ties

    def batches(self) -> Iterator[TaskBatch]:
        if self._counter is None:
            raise RuntimeError("BacklogTaskSource.attach(scheduler) was not called before the run")
        codes: dict[str, int] = {}
        for name in self.user_order():
            codes[name] = len(codes)
        n_steps = math.ceil(self.end_s / self.step_s)
        for k in range(n_steps):
            t = k * self.step_s
            rows: list[tuple[BackloggedUser, int]] = []
            for u in self.users:
                if u.active(t):
                    need = u.target - self._counter.queued.get(codes[u.name], 0)
                    if need > 0:
                        rows.append((u, need))
            if not rows:
                active = [u for u in self.users if u.active(t)]
                if not active:
                    continue
                rows.append((active[-1], 1))  # one task, so that the batch has a last row
            n = sum(c for _u, c in rows)
            lo = self._n
            self._n += n
            run = np.concatenate([self._rng.uniform(*u.run_s, c) for u, c in rows])
            yield TaskBatch(
                job_id=np.concatenate([np.full(c, codes[u.name], np.int64) for u, c in rows]),
                task_index=np.arange(lo, lo + n, dtype=np.int32),
                user=np.concatenate([np.full(c, u.name, dtype=object) for u, c in rows]),
                # the last row half a step later: the engine pulls the next batch after it, so
                # the next top-up sees this step's placements
                submit_s=np.append(np.full(n - 1, t), t + self.step_s / 2),
                demand=np.concatenate([np.tile(np.asarray(u.demand), (c, 1)) for u, c in rows]),
                run_s=run,
            )
