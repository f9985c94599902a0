"""The conformance suite of online schedulers: one public function per check.

Like scikit-learn's ``check_estimator``, :func:`check_scheduler` runs the contract of
:class:`fairsim.simulator.scheduler.Scheduler` against any scheduler, built-in or plug-in::

    import fairsim

    fairsim.testing.check_scheduler("bf-drfh")                  # a registered name
    fairsim.testing.check_scheduler({"name": "psdsf", "period_s": 2})
    fairsim.testing.check_scheduler(MyFifo)                      # a class, registered or not

and, like scikit-learn's ``parametrize_with_checks``, :func:`parametrize_with_checks` gives a
plug-in author's pytest one test per (scheduler, check)::

    from fairsim.testing import parametrize_with_checks

    @parametrize_with_checks(["my-fifo"])
    def test_conformance(scheduler, check):
        check(scheduler)

Every check is also a public function (:data:`CHECKS` maps the check's name to it), taking what
:func:`check_scheduler` takes. The scheduler runs in the real engine
(:class:`fairsim.simulator.engine.Engine`) on small workloads built here from fixed seeds:
heterogeneous servers, several users, multi-task jobs, bursts of simultaneous arrivals, tasks that
no server can hold, and placement constraints (machine classes). A watcher between the engine and
the scheduler checks every proposed placement *before* the engine sees it. The checks:

``interface`` (:func:`check_interface`)
    It is a :class:`~fairsim.simulator.scheduler.Scheduler` with a name and implements
    ``on_arrival``, ``on_completion``, ``decide`` and ``pending``; ``decide()`` returns an
    iterator of ``(task, server)`` integer pairs.
``known tasks`` (:func:`check_known_tasks`)
    Only tasks handed to ``on_arrival`` and not yet placed are placed (never a task twice, never
    one that was not submitted to it).
``capacity`` (:func:`check_capacity`)
    Every placement fits the server's free resources at that moment (nothing is over-committed).
``constraints`` (:func:`check_constraints`)
    Every placement respects the task's placement constraint (``cluster_.task_mask(task)``).
``accounted`` (:func:`check_accounted`)
    After every pass ``pending()`` equals the number of tasks handed over and not placed; every
    task of the workload either reaches the scheduler or is refused as unplaceable.
``liveness`` (:func:`check_liveness`)
    With enough time (no horizon) every task that the scheduler accepted finishes, and a task that
    no server can hold is refused (``placeable``) instead of waiting for ever.
``determinism`` (:func:`check_determinism`)
    A fresh instance on the same workload makes the same placements at the same times.
``work conserving`` (:func:`check_work_conserving`)
    After every pass at which the scheduler is due (a pass after which ``next_wakeup`` asks for
    no later one, or a pass after ``on_tick``), no user's oldest waiting task fits on a server
    that its placement constraint allows; for a scheduler with ``fifo_within_user = False``, no
    waiting task at all. Every task of these workloads is its own job, so a scheduler that starts
    whole jobs is held to the same rule.
``lowest share first`` (:func:`check_lowest_share_first`)
    On two servers of (1, 1), user 0 holds two tasks and user 1 one task, all (0.05, 0.05); then
    users 0, 1 and 2 submit one such task each, in that order: they start in the order of users
    2, 1, 0, the user holding the fewest tasks (the lowest share, whichever share of the field)
    first.
``FIFO within a user`` (:func:`check_fifo_within_user`)
    A user's tasks start in the order they were submitted: no task starts while an earlier task of
    its user is waiting.
``evictions`` (:func:`check_evictions`; only for a scheduler that preempts,
:attr:`~fairsim.simulator.scheduler.Scheduler.preempts`)
    Every :class:`~fairsim.simulator.scheduler.Eviction` names a task running on the server it
    names; no task is evicted twice in one pass (evicted, placed again and evicted again at one
    instant: a loop that never lets time advance); ``on_eviction`` is implemented; and the run
    records what the engine promises: each evicted task's count in ``evictions``, an evicted run
    never completed (a finished task ran its full run time from its last start), the run's
    count of evictions equal to the tasks' counts summed.

The replay of a trace's recorded placements (``recorded``,
:class:`fairsim.simulator.replay.ReplayScheduler`) is not checked: it is not a policy but the
record of one, it needs the recorded placements of a trace (which these workloads do not have),
it over-commits servers by design (``capacity``) and starts tasks at their recorded times
(``work conserving``, ``lowest share first``, ``FIFO within a user``); the engine validates what
applies (only waiting tasks are placed, on existing servers) and ``tests/unit/test_recorded.py``
checks the replay. :func:`check_scheduler` refuses it with that reason.

The last three are properties of the fair schedulers of the field rather than of the engine's
contract. A scheduler that does not promise one declares so with a class attribute
(:data:`EXEMPTIONS`; :class:`~fairsim.simulator.scheduler.Scheduler` documents them), e.g.
``work_conserving = False``: :func:`check_scheduler` then skips that check and
:func:`parametrize_with_checks` marks it as an expected failure. Calling the check's function
directly runs it all the same.

A violation raises :class:`AssertionError` whose message starts with the scheduler's name and the
check, e.g. ``"my-fifo: capacity: workload 'mixed': task 7 (demand (0.2, 0.1)) placed on server 2,
which has (0.1, 0.3) free (capacity (0.5, 0.5)): over-committed"``.
A check that meets a violation of ``interface``, ``known tasks``, ``capacity``, ``constraints`` or
``evictions`` on its way reports that one (the engine cannot go past it); an eviction yielded by a
scheduler that does not declare ``preempts`` is an ``interface`` violation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from fairsim.simulator.cluster import ClusterState, ClusterView
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.replay import ReplayScheduler
from fairsim.simulator.scheduler import Eviction, Scheduler, WaitingTasks
from fairsim.simulator.workload import FrameTaskSource

__all__ = [
    "CHECKS",
    "EXEMPTIONS",
    "check_accounted",
    "check_capacity",
    "check_constraints",
    "check_determinism",
    "check_evictions",
    "check_fifo_within_user",
    "check_interface",
    "check_known_tasks",
    "check_liveness",
    "check_lowest_share_first",
    "check_scheduler",
    "check_work_conserving",
    "parametrize_with_checks",
]

RESOURCES = ("cpu", "mem")
#: Server capacities (the DRFH paper's Table I shapes, with Google's machine_events values).
_SHAPES = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])
_CLASSES = ("A", "B", "C")
_REQUIRED = ("on_arrival", "on_completion", "decide", "pending")

#: The checks a scheduler may be exempt from, and the class attribute that exempts it when False.
EXEMPTIONS = {
    "work conserving": "work_conserving",
    "lowest share first": "lowest_share_first",
    "FIFO within a user": "fifo_within_user",
}


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


def _workloads(own_jobs: bool = False) -> list[_Workload]:
    """The suite's workloads, from fixed seeds (identical in every process); ``own_jobs``: every
    task its own job."""
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
                "job_id": np.arange(n_tasks, dtype=np.int64) if own_jobs else job.astype(np.int64),
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


def _shares_workload() -> _Workload:
    """The scenario of ``lowest share first``: users 0 and 1 submit 2 and 1 tasks at 0 s, then
    users 0, 1 and 2 one task each at 10 s (tasks 3, 4, 5), all (0.05, 0.05), on two (1, 1)
    servers."""
    rows = [("a", 0.0), ("a", 0.0), ("b", 0.0), ("a", 10.0), ("b", 10.0), ("c", 10.0)]
    frame = pd.DataFrame(
        {
            "job_id": np.arange(len(rows), dtype=np.int64),
            "task_index": np.arange(len(rows), dtype=np.int32),
            "user": np.array([u for u, _ in rows], dtype=object),
            "submit_s": [s for _, s in rows],
            "cpu": 0.05,
            "mem": 0.05,
            "run_s": 100.0,
        }
    )
    classes = np.array(["A", "A"], dtype=object)
    return _Workload("shares", np.ones((2, 2)), classes, frame)


class _Checker(WaitingTasks):
    """Checks every placement of the wrapped scheduler before the engine sees it.

    The checks that the engine cannot go past (interface, known tasks, capacity, constraints)
    always raise; the others only when ``check`` names them.
    """

    def __init__(self, inner: Scheduler, label: str, check: str, workload: str) -> None:
        super().__init__(inner)
        self.label = label
        self.workload = workload
        self.check = check
        self.queues: dict[int, dict[int, None]] = {}  # user -> waiting tasks, in arrival order
        self.user_of: dict[int, int] = {}
        self.seq: dict[int, int] = {}  # task -> its rank in the order of arrival
        self.placed: set[int] = set()
        self.held: dict[int, int] = {}  # user -> tasks running
        self.contested: frozenset[int] = frozenset()  # the tasks of ``lowest share first``
        self.ticked = False  # on_tick was called since the last pass
        self.passed = self.passed_tick = False  # a pass to check for work conservation
        self.fifo = bool(getattr(inner, "fifo_within_user", True))
        self.running: dict[int, int] = {}  # task -> server
        self.n_evictions = 0

    def _fail(self, check: str, msg: str) -> AssertionError:
        return AssertionError(f"{self.label}: {check}: workload {self.workload!r}: {msg}")

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queues.setdefault(user, {})[task] = None
        self.user_of[task] = user
        self.seq[task] = len(self.seq)
        super().on_arrival(task, user, demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.held[user] -= 1
        del self.running[task]
        self.inner.on_completion(task, user, demand, server)

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        # the task waits again, in its place by arrival among its user's waiting tasks
        self.held[user] -= 1
        self.placed.discard(task)
        queue = self.queues[user]
        queue[task] = None
        self.queues[user] = dict.fromkeys(sorted(queue, key=self.seq.__getitem__))
        super().on_eviction(task, user, demand, server)

    def _evicted(self, item: Eviction, evicted: set[int]) -> None:
        """Check an eviction before the engine sees it."""
        if not self.inner.preempts:
            raise self._fail(
                "interface",
                f"decide() yielded {item!r}, but the scheduler does not declare preempts = True",
            )
        task, server = int(item.task), int(item.server)
        at = self.running.get(task)
        if at != server:
            where = (
                f"which runs on server {at}"
                if at is not None
                else "which is waiting"
                if task in self.waiting
                else "which has finished"
                if task in self.seq
                else "which was never submitted to it"
            )
            raise self._fail("evictions", f"evicted task {task} from server {server}, {where}")
        if task in evicted:
            raise self._fail(
                "evictions",
                f"evicted task {task} a second time in one pass: it was evicted, placed again "
                "and evicted again at one instant (a loop that never lets time advance)",
            )
        evicted.add(task)
        del self.running[task]
        self.n_evictions += 1

    def next_wakeup(self, now: float) -> float:
        # the engine asks right after every pass, before anything else changes
        t = self.inner.next_wakeup(now)
        if self.passed and (self.passed_tick or t == math.inf):
            self._conserved(self.cluster_, now)
        self.passed = False
        return t

    def on_tick(self, now: float) -> None:
        self.ticked = True
        self.inner.on_tick(now)

    def decide(self) -> Iterator[tuple[int, int]]:
        it = self.inner.decide()
        if not isinstance(it, Iterator):
            raise self._fail("interface", f"decide() returned {type(it).__name__}, not an iterator")
        view: ClusterView = self.cluster_
        started: list[tuple[int, int]] = []
        evicted: set[int] = set()
        for item in it:
            if isinstance(item, Eviction):
                self._evicted(item, evicted)
                yield item
                continue
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
            if np.any(np.asarray(demand) - free > view.tolerance):
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
            user = self.user_of[task]
            if task in self.contested:
                self._fewest_first(task, user)
            del self.waiting[task], self.queues[user][task]
            self.placed.add(task)
            self.held[user] = self.held.get(user, 0) + 1
            self.running[task] = server
            started.append((task, server))
            yield task, server
        if self.check == "FIFO within a user":
            self._in_order(started)
        if self.check == "accounted":
            pending = self.inner.pending()
            if pending != len(self.waiting):
                raise self._fail(
                    "accounted",
                    f"pending() returns {pending} after a pass, but {len(self.waiting)} tasks "
                    "are waiting",
                )
        # checked in next_wakeup: whether the scheduler asks for a later pass
        self.passed, self.passed_tick = self.check == "work conserving", self.ticked
        self.ticked = False

    def _fewest_first(self, task: int, user: int) -> None:
        """Of the users with a contested task waiting, ``user`` holds the fewest tasks."""
        rivals = sorted({self.user_of[t] for t in self.contested if t in self.waiting})
        fewest = min(rivals, key=lambda u: (self.held.get(u, 0), u))
        mine, theirs = self.held.get(user, 0), self.held.get(fewest, 0)
        if mine > theirs:
            raise self._fail(
                "lowest share first",
                f"task {task} of user {user}, holding {mine} tasks, started while user {fewest}, "
                f"holding {theirs} tasks of the same demand, was waiting",
            )

    def _in_order(self, started: list[tuple[int, int]]) -> None:
        """No task started in this pass while an earlier task of its user is still waiting."""
        for task, server in started:
            user = self.user_of[task]
            queue = self.queues[user]
            head = next(iter(queue), None)
            if head is not None and self.seq[head] < self.seq[task]:
                raise self._fail(
                    "FIFO within a user",
                    f"task {task} of user {user} started on server {server} while the user's "
                    f"earlier task {head} is waiting",
                )

    def _conserved(self, view: ClusterView, now: float) -> None:
        """No user's oldest waiting task (every waiting task, if not FIFO) fits anywhere after
        the pass at ``now`` (s)."""
        for user, queue in self.queues.items():
            for task in queue:
                fits = np.all(view.free >= np.asarray(self.waiting[task]), axis=1)
                mask = view.task_mask(task)
                if mask is not None:
                    fits &= mask
                if fits.any():
                    oldest = "the oldest waiting task" if self.fifo else "a waiting task"
                    raise self._fail(
                        "work conserving",
                        f"after the pass at {now:g} s, task {task} ({oldest} of user {user}, "
                        f"demand {_fmt(self.waiting[task])}) fits on server {int(fits.argmax())}, "
                        f"which has {_fmt(view.free[int(fits.argmax())])} free",
                    )
                if self.fifo:
                    break


def _fmt(v: Any) -> str:
    return "(" + ", ".join(f"{float(x):.4g}" for x in v) + ")"


def _factory(scheduler: Any, params: Mapping[str, Any]) -> tuple[Callable[[], Scheduler], str]:
    """A function building fresh instances (:func:`~fairsim.schedulers.registry.make_scheduler`
    of the validated entry), and the label used in messages."""
    from fairsim.schedulers.registry import make_scheduler, resolve

    if params and not isinstance(scheduler, str | type):
        raise TypeError("check_scheduler: parameters go into the mapping, not as keywords")
    if isinstance(scheduler, type):
        _refuse_replay(scheduler)
        label = str(getattr(scheduler, "name", scheduler.__name__))
        if label == Scheduler.name:
            label = scheduler.__name__
    entry = {"name": scheduler, **params} if params else scheduler
    spec = resolve(entry)  # validates now (raises for a non-Scheduler or bad parameters)
    _refuse_replay(spec.cls)
    if not isinstance(scheduler, type):
        label = spec.label
    return functools.partial(make_scheduler, spec), label


def _refuse_replay(cls: type) -> None:
    """The replay of recorded placements is not checked (the module docstring says why).

    Raises
    ------
    ValueError
        For a :class:`~fairsim.simulator.replay.ReplayScheduler`.
    """
    if isinstance(cls, type) and issubclass(cls, ReplayScheduler):
        raise ValueError(
            f"{cls.__name__}: the conformance suite does not check the replay of recorded "
            "placements (it needs a trace's placements and over-commits by design; "
            "tests/unit/test_recorded.py checks it)"
        )


def _interface(make: Callable[[], Scheduler], label: str) -> Scheduler:
    """A fresh instance, after the checks of ``interface`` that need no run."""
    inst = make()
    if not isinstance(inst, Scheduler):
        raise AssertionError(f"{label}: interface: {inst!r} is not a fairsim.Scheduler")
    if not isinstance(inst.name, str) or not inst.name:
        raise AssertionError(f"{label}: interface: name is {inst.name!r}, not a non-empty string")
    required = (*_REQUIRED, "on_eviction") if inst.preempts else _REQUIRED
    for method in required:
        if getattr(type(inst), method) is getattr(Scheduler, method):
            raise AssertionError(
                f"{label}: interface: {method}() is not implemented (a method of the "
                "fairsim.Scheduler protocol"
                + (", required with preempts = True)" if method == "on_eviction" else ")")
            )
    return inst


def _run(
    make: Callable[[], Scheduler],
    label: str,
    w: _Workload,
    check: str,
    contested: frozenset[int] = frozenset(),
) -> tuple[EngineResult, _Checker]:
    watch = _Checker(make(), label, check, w.name)
    watch.contested = contested
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
            f"{label}: {check}: the run on workload {w.name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _runs(
    scheduler: Any, params: Mapping[str, Any], check: str, *, own_jobs: bool = False
) -> Iterator[tuple[str, _Workload, EngineResult, _Checker]]:
    """Run the suite's workloads with the watcher set to ``check``: (label, workload, result,
    watcher) per workload."""
    make, label = _factory(scheduler, params)
    _interface(make, label)
    for w in _workloads(own_jobs):
        r, watch = _run(make, label, w, check)
        yield label, w, r, watch


def check_interface(scheduler: Any, /, **params: Any) -> None:
    """``interface``: a :class:`~fairsim.simulator.scheduler.Scheduler` with a non-empty ``name``
    that implements ``on_arrival``, ``on_completion``, ``decide`` and ``pending``, and whose
    ``decide()`` returns an iterator of ``(task, server)`` integer pairs.

    Parameters
    ----------
    scheduler : str, mapping, SchedulerSpec or Scheduler subclass
        What :func:`check_scheduler` takes.
    **params
        Parameters for a name or a class.

    Raises
    ------
    AssertionError
        ``"<scheduler>: interface: ..."`` naming the missing method or the value yielded.
    """
    for _ in _runs(scheduler, params, "interface"):
        pass


def check_known_tasks(scheduler: Any, /, **params: Any) -> None:
    """``known tasks``: only tasks handed to ``on_arrival`` and not yet placed are placed.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: known tasks: placed task <t>, which ..."`` (placed twice, or never
        submitted).
    """
    for _ in _runs(scheduler, params, "known tasks"):
        pass


def check_capacity(scheduler: Any, /, **params: Any) -> None:
    """``capacity``: every placement fits the server's free resources at that moment (within
    :func:`fairsim.simulator.cluster.capacity_tolerance`), on a server that exists.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: capacity: task <t> (demand ...) placed on server <s>, which has ... free
        (capacity ...): over-committed"``.
    """
    for _ in _runs(scheduler, params, "capacity"):
        pass


def check_constraints(scheduler: Any, /, **params: Any) -> None:
    """``constraints``: every placement is on a server that the task's placement constraint
    (``cluster_.task_mask(task)``, :mod:`fairsim.simulator.constraints`) allows.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: constraints: task <t> placed on server <s>, outside its placement
        constraint"``.
    """
    for _ in _runs(scheduler, params, "constraints"):
        pass


def check_accounted(scheduler: Any, /, **params: Any) -> None:
    """``accounted``: after every pass ``pending()`` equals the number of tasks handed to the
    scheduler and not placed, and every task of the workload either reached the scheduler or was
    refused as unplaceable.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: accounted: pending() returns <p> after a pass, but <n> tasks are
        waiting"``, or how many tasks of which workload the records lack.
    """
    for label, w, r, _watch in _runs(scheduler, params, "accounted"):
        n = len(w.frame)
        if len(r.tasks["submit_s"]) != n:
            raise AssertionError(
                f"{label}: accounted: {len(r.tasks['submit_s'])} of the {n} tasks of workload "
                f"{w.name!r} reached the scheduler"
            )


def check_liveness(scheduler: Any, /, **params: Any) -> None:
    """``liveness``: run until no event is left (no horizon), every task the scheduler accepted
    finishes, and a task that no server can hold is refused by ``placeable`` instead of waiting
    for ever; the run itself raises nothing.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: liveness: <k> of the <n> tasks of workload <w> never finished ..."``
        naming the first of them, or the exception the run raised.
    """
    for label, w, r, watch in _runs(scheduler, params, "liveness"):
        tasks = r.tasks
        n = len(w.frame)
        finished = ~np.isnan(tasks["finish_s"])
        lost = np.flatnonzero(~finished & ~tasks["unplaceable"])
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
                f"{lost[:8].tolist()}{' ...' if lost.size > 8 else ''}; {len(watch.waiting)} "
                f"still waiting in the scheduler){hint}"
            )
        if not finished.any():
            raise AssertionError(
                f"{label}: liveness: no task of workload {w.name!r} was ever placed"
            )


def check_determinism(scheduler: Any, /, **params: Any) -> None:
    """``determinism``: a fresh instance on the same workload places every task on the same
    server at the same time.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: determinism: on a rerun of workload <w> task <t> got server <s> instead
        of <s0>"`` (or ``start_s``).
    """
    make, label = _factory(scheduler, params)
    first = {w.name: r for _, w, r, _ in _runs(scheduler, params, "determinism")}
    for w in _workloads():
        again, _ = _run(make, label, w, "determinism")
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


def check_work_conserving(scheduler: Any, /, **params: Any) -> None:
    """``work conserving``: after every pass at which the scheduler is due, no user's oldest
    waiting task fits on a server its placement constraint allows (for a scheduler with
    ``fifo_within_user = False``: no waiting task fits). The workloads give every task its own
    job. A scheduler that may leave such a task waiting sets ``work_conserving = False``.

    A pass is due when the scheduler asks for no later pass after it (``next_wakeup`` returns
    ``inf``: every pass of an event-driven scheduler), and when it follows ``on_tick`` (a periodic
    scheduler's pass at its own time).

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: work conserving: workload <w>: after the pass at <time> s, task <t> (the
        oldest waiting task of user <u>, demand ...) fits on server <s>, which has ... free"``.
    """
    for _ in _runs(scheduler, params, "work conserving", own_jobs=True):
        pass


def check_lowest_share_first(scheduler: Any, /, **params: Any) -> None:
    """``lowest share first``: of the users waiting with tasks of the same demand, the one
    holding the fewest tasks starts first.

    Two servers of capacity (1, 1); every task (0.05, 0.05) runs 100 s, each its own job. At 0 s
    user 0 submits two tasks and user 1 one; at 10 s users 0, 1 and 2 submit one task each, in
    that order. Whenever one of these last three starts, its user must hold no more tasks than
    any other user with one of them waiting: every share of the field (dominant, global
    dominant, task share, slots, virtual dominant share) orders users with identical tasks by the
    number they hold, so a scheduler that serves the user with the lowest share first starts them
    in the order of users 2, 1, 0 (DRF: Ghodsi et al., NSDI 2011, Section 4). A scheduler that
    serves users otherwise sets ``lowest_share_first = False``.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: lowest share first: workload 'shares': task <t> of user <u>, holding <k>
        tasks, started while user <v>, holding <j> tasks of the same demand, was waiting"``.
    """
    make, label = _factory(scheduler, params)
    _interface(make, label)
    _run(make, label, _shares_workload(), "lowest share first", contested=frozenset({3, 4, 5}))


def check_fifo_within_user(scheduler: Any, /, **params: Any) -> None:
    """``FIFO within a user``: no task starts while an earlier-submitted task of its user is
    waiting. A scheduler that may start a user's tasks in another order (e.g. whole jobs, a later
    one first when an earlier one does not fit) sets ``fifo_within_user = False``.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: FIFO within a user: task <t> of user <u> placed on server <s> while the
        user's earlier task <t0> is waiting"``.
    """
    for _ in _runs(scheduler, params, "FIFO within a user"):
        pass


def check_evictions(scheduler: Any, /, **params: Any) -> None:
    """``evictions``: for a scheduler that preempts, every eviction names a task running on the
    server it names, no task is evicted twice in one pass, and the run records the evictions as
    the engine promises (docs/preemption.md); nothing to check for a scheduler that does not
    preempt (an eviction it yields is an ``interface`` violation in every check).

    Per workload: the tasks' ``evictions`` sum to the evictions the watcher saw and to the
    run's count; a finished task finished its full run time after its last start (an evicted
    run never completes: the task restarts from scratch); no task holds a negative count.

    Parameters
    ----------
    scheduler, **params
        What :func:`check_scheduler` takes.

    Raises
    ------
    AssertionError
        ``"<scheduler>: evictions: workload <w>: evicted task <t> from server <s>, which is
        waiting"`` (or runs elsewhere, has finished, was never submitted), ``"... evicted task
        <t> a second time in one pass ..."``, or the record that disagrees.
    """
    make, label = _factory(scheduler, params)
    if not _interface(make, label).preempts:
        return
    for label, w, r, watch in _runs(scheduler, params, "evictions"):
        tasks, report = r.tasks, r.preemption
        if report is None or "evictions" not in tasks:
            raise AssertionError(
                f"{label}: evictions: workload {w.name!r}: the run recorded no evictions "
                "although the scheduler preempts"
            )
        counts = np.asarray(tasks["evictions"], dtype=np.int64)
        total = int(counts.sum())
        if total != watch.n_evictions or total != report.evictions or counts.min(initial=0) < 0:
            raise AssertionError(
                f"{label}: evictions: workload {w.name!r}: the tasks' evictions sum to {total}, "
                f"the scheduler evicted {watch.n_evictions} runs and the run counts "
                f"{report.evictions}"
            )
        done = ~np.isnan(tasks["finish_s"])
        ran = tasks["finish_s"][done] - tasks["start_s"][done]
        bad = np.flatnonzero(~np.isclose(ran, tasks["run_s"][done], rtol=0, atol=1e-9))
        if bad.size:
            t = int(np.flatnonzero(done)[bad[0]])
            raise AssertionError(
                f"{label}: evictions: workload {w.name!r}: task {t} finished "
                f"{float(tasks['finish_s'][t] - tasks['start_s'][t]):g} s after its last start, "
                f"not its run time {float(tasks['run_s'][t]):g} s"
            )


#: Every check, by name, in the order :func:`check_scheduler` runs them.
CHECKS: dict[str, Callable[..., None]] = {
    "interface": check_interface,
    "known tasks": check_known_tasks,
    "capacity": check_capacity,
    "constraints": check_constraints,
    "accounted": check_accounted,
    "liveness": check_liveness,
    "determinism": check_determinism,
    "work conserving": check_work_conserving,
    "lowest share first": check_lowest_share_first,
    "FIFO within a user": check_fifo_within_user,
    "evictions": check_evictions,
}


def _exemptions(scheduler: Any, params: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The label, and the exempted checks with the attribute that exempts each."""
    make, label = _factory(scheduler, params)
    inst = _interface(make, label)
    return label, {c: a for c, a in EXEMPTIONS.items() if not getattr(inst, a, True)}


def check_scheduler(scheduler: Any, /, **params: Any) -> None:
    """Run every check of the conformance suite (:data:`CHECKS`) that applies to a scheduler.

    A check in :data:`EXEMPTIONS` is skipped when the scheduler sets its attribute to False.

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
        At the first violation; the message names the scheduler, the check (a key of
        :data:`CHECKS`) and the task, server or user at fault.
    fairsim.errors.ConfigError
        For an unknown name or invalid parameters.
    fairsim.errors.RegistryError
        For a class that is not a :class:`~fairsim.simulator.scheduler.Scheduler` subclass, or an
        entry point that cannot be loaded.
    ValueError
        For the replay of recorded placements (``recorded``), which the suite does not check
        (the module docstring says why).
    """
    _, exempt = _exemptions(scheduler, params)
    for name, check in CHECKS.items():
        if name not in exempt:
            check(scheduler, **params)


def parametrize_with_checks(schedulers: Iterable[Any]) -> Any:
    """A pytest decorator: one test per (scheduler, check), like scikit-learn's.

    The decorated test takes the arguments ``scheduler`` and ``check`` and calls
    ``check(scheduler)``; its ids are ``<label>-<check function>``, e.g.
    ``my-fifo-check_capacity``. A check the scheduler is exempt from (:data:`EXEMPTIONS`) is
    marked ``xfail`` (not strict: an exempt scheduler may pass it on these small workloads; any
    exception other than :class:`AssertionError` still fails the test).

    Parameters
    ----------
    schedulers : iterable
        What :func:`check_scheduler` takes as its first argument: names, config entries or
        classes (constructed with no parameters).

    Returns
    -------
    pytest.MarkDecorator
        ``pytest.mark.parametrize("scheduler, check", ...)``.

    Raises
    ------
    ImportError
        Without pytest.
    fairsim.errors.ConfigError, fairsim.errors.RegistryError
        As :func:`check_scheduler`, for a scheduler that cannot be built.

    Examples
    --------
    >>> from fairsim.testing import parametrize_with_checks
    >>> @parametrize_with_checks(["drf", "bf-drfh"])
    ... def test_conformance(scheduler, check):
    ...     check(scheduler)
    """
    import pytest

    cases = []
    for scheduler in schedulers:
        label, exempt = _exemptions(scheduler, {})
        for name, check in CHECKS.items():
            marks: tuple[Any, ...] = ()
            if name in exempt:
                reason = f"{label} sets {exempt[name]} = False"
                marks = (pytest.mark.xfail(reason=reason, raises=AssertionError, strict=False),)
            cases.append(
                pytest.param(scheduler, check, id=f"{label}-{check.__name__}", marks=marks)
            )
    return pytest.mark.parametrize(("scheduler", "check"), cases)
