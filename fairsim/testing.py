"""The conformance suite of online schedulers: :func:`check_scheduler`.

Like scikit-learn's ``check_estimator``, one function runs the contract of
:class:`fairsim.simulator.scheduler.Scheduler` against any scheduler, built-in or plug-in::

    import fairsim

    fairsim.testing.check_scheduler("bf-drfh")                  # a registered name
    fairsim.testing.check_scheduler({"name": "psdsf", "period_s": 2})
    fairsim.testing.check_scheduler(MyFifo)                      # a class, registered or not

The scheduler runs in the real engine (:class:`fairsim.simulator.engine.Engine`) on small
workloads built here from fixed seeds: heterogeneous servers, several users, multi-task jobs,
bursts of simultaneous arrivals, tasks that no server can hold, and placement constraints
(machine classes). A watcher between the engine and the scheduler checks every proposed
placement *before* the engine sees it. The checks (:data:`CHECKS`):

``interface``
    It is a :class:`~fairsim.simulator.scheduler.Scheduler` with a name and implements
    ``on_arrival``, ``on_completion``, ``decide`` and ``pending``; ``decide()`` returns an
    iterator of ``(task, server)`` integer pairs.
``known tasks``
    Only tasks handed to ``on_arrival`` and not yet placed are placed (never a task twice, never
    one that was not submitted to it).
``capacity``
    Every placement fits the server's free resources at that moment (nothing is over-committed).
``constraints``
    Every placement respects the task's placement constraint (``cluster_.task_mask(task)``).
``accounted``
    After every pass ``pending()`` equals the number of tasks handed over and not placed; at the
    end every task either ran to completion or was refused as unplaceable.
``liveness``
    With enough time (no horizon) every task that the scheduler accepted finishes, and a task that
    no server can hold is refused (``placeable``) instead of waiting for ever.
``determinism``
    A fresh instance on the same workload makes the same placements at the same times.

A violation raises :class:`AssertionError` whose message starts with the scheduler's name and the
check, e.g. ``"my-fifo: capacity: task 7 (demand ...) placed on server 2, which has ... free"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from fairsim.simulator.cluster import CAPACITY_TOLERANCE, ClusterState, ClusterView
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.scheduler import DelegatingScheduler, Scheduler
from fairsim.simulator.workload import FrameTaskSource

__all__ = ["CHECKS", "check_scheduler"]

#: The checks :func:`check_scheduler` runs (see the module docstring).
CHECKS = (
    "interface",
    "known tasks",
    "capacity",
    "constraints",
    "accounted",
    "liveness",
    "determinism",
)

RESOURCES = ("cpu", "mem")
#: Server capacities (the DRFH paper's Table I shapes, with Google's machine_events values).
_SHAPES = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])
_CLASSES = ("A", "B", "C")
_REQUIRED = ("on_arrival", "on_completion", "decide", "pending")


class _Workload:
    """A small scenario: servers (capacities, classes), tasks, and whether constraints apply."""

    def __init__(
        self, name: str, capacity: np.ndarray, classes: np.ndarray, frame: pd.DataFrame
    ) -> None:
        self.name = name
        self.capacity = capacity
        self.classes = classes
        self.frame = frame
        self.constrained = "constraint" in frame


def _workloads() -> list[_Workload]:
    """The suite's workloads, from fixed seeds (identical in every process)."""
    out = []
    for name, seed, n_servers, n_tasks, burst, constrained in (
        ("mixed", 11, 12, 160, False, False),
        ("burst", 12, 4, 90, True, False),
        ("constrained", 13, 10, 140, False, True),
    ):
        rng = np.random.default_rng(seed)
        cap = _SHAPES[rng.integers(0, len(_SHAPES), n_servers)]
        classes = np.array([_CLASSES[i % len(_CLASSES)] for i in range(n_servers)], dtype=object)
        n_jobs = max(1, n_tasks // 4)
        job = np.sort(rng.integers(0, n_jobs, n_tasks))
        job_submit = np.round(rng.uniform(0.0, 0.0 if burst else 120.0, n_jobs), 1)
        demand = rng.uniform(0.01, 0.3, (n_tasks, 2)).round(3)
        demand[rng.random(n_tasks) < 0.03] = [1.5, 0.2]  # no server can hold these
        frame = pd.DataFrame(
            {
                "job_id": job.astype(np.int64),
                "task_index": np.arange(n_tasks, dtype=np.int32),
                "user": np.array([f"u{j % 5}" for j in job], dtype=object),
                "submit_s": job_submit[job],
                "cpu": demand[:, 0],
                "mem": demand[:, 1],
                "run_s": np.round(rng.uniform(1.0, 40.0, n_tasks), 1),
            }
        )
        if constrained:
            rules = [None, "class=A", "class=B|C", "class=C"]
            frame["constraint"] = [rules[j % len(rules)] for j in job]
        out.append(_Workload(name, cap, classes, frame))
    return out


class _Watch(DelegatingScheduler):
    """Checks every placement of the wrapped scheduler before the engine sees it."""

    def __init__(self, inner: Scheduler, label: str) -> None:
        super().__init__(inner)
        self.label = label
        self.waiting: dict[int, tuple[float, ...]] = {}
        self.placed: set[int] = set()

    def _fail(self, check: str, msg: str) -> AssertionError:
        return AssertionError(f"{self.label}: {check}: {msg}")

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.waiting[task] = demand
        self.inner.on_arrival(task, user, demand)

    def decide(self) -> Iterator[tuple[int, int]]:
        it = self.inner.decide()
        if not isinstance(it, Iterator):
            raise self._fail("interface", f"decide() returned {type(it).__name__}, not an iterator")
        view: ClusterView = self.cluster_
        for item in it:
            if not (
                isinstance(item, tuple)
                and len(item) == 2
                and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in item)
            ):
                raise self._fail(
                    "interface", f"decide() yielded {item!r}, not a (task, server) pair of ints"
                )
            task, server = int(item[0]), int(item[1])
            demand = self.waiting.get(task)
            if demand is None:
                why = (
                    "which it had already placed"
                    if task in self.placed
                    else "which was never submitted to it"
                )
                raise self._fail("known tasks", f"placed task {task}, {why}")
            if not 0 <= server < view.n_servers:
                raise self._fail(
                    "capacity",
                    f"placed task {task} on server {server}, which does not exist "
                    f"({view.n_servers} servers)",
                )
            free = view.free[server]
            if np.any(np.asarray(demand) - free > CAPACITY_TOLERANCE):
                raise self._fail(
                    "capacity",
                    f"task {task} (demand {_fmt(demand)}) placed on server {server}, which has "
                    f"{_fmt(free)} free (capacity {_fmt(view.capacity[server])}): over-committed",
                )
            mask = view.task_mask(task)
            if mask is not None and not mask[server]:
                raise self._fail(
                    "constraints",
                    f"task {task} placed on server {server}, outside its placement constraint",
                )
            del self.waiting[task]
            self.placed.add(task)
            yield task, server
        pending = self.inner.pending()
        if pending != len(self.waiting):
            raise self._fail(
                "accounted",
                f"pending() returns {pending} after a pass, but {len(self.waiting)} tasks are "
                "waiting",
            )


def _fmt(v: Any) -> str:
    return "(" + ", ".join(f"{float(x):.4g}" for x in v) + ")"


def _factory(scheduler: Any, params: Mapping[str, Any]) -> tuple[Callable[[], Scheduler], str]:
    """A function building fresh instances, and the label used in messages."""
    from fairsim.schedulers.registry import build_class, resolve

    if isinstance(scheduler, type):
        cls = scheduler
        build_class(cls, params)  # validates now (raises for a non-Scheduler or bad parameters)
        label = str(getattr(cls, "name", cls.__name__))
        if label == Scheduler.name:
            label = cls.__name__
        return (lambda: build_class(cls, params)), label
    entry = {"name": scheduler, **params} if params and isinstance(scheduler, str) else scheduler
    if params and not isinstance(scheduler, str):
        raise TypeError("check_scheduler: parameters go into the mapping, not as keywords")
    spec = resolve(entry)
    return spec.build, spec.label


def _run(make: Callable[[], Scheduler], label: str, w: _Workload) -> tuple[EngineResult, _Watch]:
    watch = _Watch(make(), label)
    index = ConstraintIndex(w.classes) if w.constrained else None
    engine = Engine(
        ClusterState(w.capacity, RESOURCES),
        watch,
        FrameTaskSource(w.frame),
        horizon_s=math.inf,
        utilization_interval_s=50.0,
        constraints=index,
    )
    try:
        return engine.run(), watch
    except AssertionError:
        raise
    except Exception as exc:
        raise AssertionError(
            f"{label}: liveness: the run on workload {w.name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _check_run(label: str, w: _Workload, r: EngineResult, watch: _Watch) -> None:
    tasks = r.tasks
    n = len(w.frame)
    if len(tasks["submit_s"]) != n:
        raise AssertionError(
            f"{label}: accounted: {len(tasks['submit_s'])} of the {n} tasks of workload "
            f"{w.name!r} reached the scheduler"
        )
    unplaceable = tasks["unplaceable"]
    finished = ~np.isnan(tasks["finish_s"])
    lost = np.flatnonzero(~finished & ~unplaceable)
    if lost.size:
        demand = tasks["demand"][lost]
        big = ~np.any(np.all(w.capacity[None, :, :] >= demand[:, None, :], axis=2), axis=1)
        hint = (
            f"; {int(big.sum())} of them fit no server, which placeable() must refuse"
            if big.any()
            else ""
        )
        raise AssertionError(
            f"{label}: liveness: {lost.size} of the {n} tasks of workload {w.name!r} never "
            f"finished although the run went on until no event was left (tasks "
            f"{lost[:8].tolist()}{' ...' if lost.size > 8 else ''}; {len(watch.waiting)} still "
            f"waiting in the scheduler){hint}"
        )
    if not finished.any():
        raise AssertionError(f"{label}: liveness: no task of workload {w.name!r} was ever placed")
    if watch.waiting:
        raise AssertionError(
            f"{label}: accounted: tasks {sorted(watch.waiting)[:8]} were handed to the scheduler "
            "but neither placed nor reported"
        )


def check_scheduler(scheduler: Any, /, **params: Any) -> None:
    """Run the conformance suite (:data:`CHECKS`) against a scheduler.

    Parameters
    ----------
    scheduler : str, mapping, SchedulerSpec or Scheduler subclass
        A registered name or alias (``"bf-drfh"``, ``"slots-14"``), a config entry
        (``{"name": "psdsf", "period_s": 2}``), or a class (registered or not; constructed with
        ``params``, or with none).
    **params
        Parameters for a name or a class (validated against its parameter model).

    Raises
    ------
    AssertionError
        At the first violation; the message names the scheduler, the check (one of
        :data:`CHECKS`) and what went wrong.
    fairsim.errors.ConfigError
        For an unknown name or invalid parameters.
    fairsim.errors.RegistryError
        For a class that is not a :class:`~fairsim.simulator.scheduler.Scheduler` subclass, or an
        entry point that cannot be loaded.
    """
    make, label = _factory(scheduler, params)
    inst = make()
    if not isinstance(inst, Scheduler):
        raise AssertionError(f"{label}: interface: {inst!r} is not a fairsim.Scheduler")
    if not isinstance(inst.name, str) or not inst.name:
        raise AssertionError(f"{label}: interface: name is {inst.name!r}, not a non-empty string")
    for method in _REQUIRED:
        if getattr(type(inst), method) is getattr(Scheduler, method):
            raise AssertionError(
                f"{label}: interface: {method}() is not implemented (a method of the "
                "fairsim.Scheduler protocol)"
            )
    first: dict[str, EngineResult] = {}
    for w in _workloads():
        r, watch = _run(make, label, w)
        _check_run(label, w, r, watch)
        first[w.name] = r
    for w in _workloads():
        again, _ = _run(make, label, w)
        a, b = first[w.name].tasks, again.tasks
        for col in ("server", "start_s"):
            x, y = np.asarray(a[col], dtype=np.float64), np.asarray(b[col], dtype=np.float64)
            diff = np.flatnonzero(~((x == y) | (np.isnan(x) & np.isnan(y))))
            if diff.size:
                t = int(diff[0])
                raise AssertionError(
                    f"{label}: determinism: on a rerun of workload {w.name!r} task {t} got "
                    f"{col} {y[t]:g} instead of {x[t]:g}"
                )
