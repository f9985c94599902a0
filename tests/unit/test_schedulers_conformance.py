"""One conformance suite that every registered online scheduler must pass (scikit-learn's
``check_estimator`` idea): every check of :mod:`fairsim.testing` over the registry, one test per
(scheduler, check) from :func:`fairsim.testing.parametrize_with_checks`, with the exemptions the
scheduler classes declare. Then each check fails on a scheduler broken in the matching way, and a
small correct DRF passes them all."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import fairsim
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.registry import examples, registrations, resolve
from fairsim.simulator.cluster import ClusterState, ClusterView
from fairsim.simulator.scheduler import Eviction, Scheduler
from fairsim.testing import (
    CHECKS,
    EXEMPTIONS,
    check_accounted,
    check_capacity,
    check_constraints,
    check_determinism,
    check_evictions,
    check_fifo_within_user,
    check_interface,
    check_known_tasks,
    check_liveness,
    check_lowest_share_first,
    check_scheduler,
    check_work_conserving,
    parametrize_with_checks,
)

#: Every built-in scheduler, with concrete parameters where it needs some (slots-<S>).
REGISTERED = list(examples(plugins=False))
RES = ("cpu", "mem")


def test_registry_lists_every_builtin_scheduler() -> None:
    """The examples cover every registered name once or more, and nothing else, except the
    replay of recorded placements: it needs a trace's placements, over-commits by design and
    starts tasks at recorded times, so the suite refuses it with that reason
    (tests/unit/test_recorded.py checks it)."""
    names = {resolve(n).name for n in REGISTERED}
    assert names == {
        *("slots", "ff-drfh", "bf-drfh", "drf", "dynamic-drf", "c-drfh", "tsf", "af", "pf"),
        *("bmf", "lmm-mms"),
        *("psdsf", "drf-classes", "drf-lockstep", "udrf", "hdrf", "yarn-fair", "kueue-fair"),
    }
    assert REGISTERED[:4] == ["slots-14", "slots-10", "slots-14-single", "slots-20-cpu"]
    left_out = {r.name: r.requires for r in registrations(plugins=False) if r.requires}
    assert list(left_out) == ["recorded"] and "placements" in str(left_out["recorded"])
    with pytest.raises(ValueError, match="does not check the replay of recorded placements"):
        check_scheduler("recorded")


@parametrize_with_checks(REGISTERED)
def test_conformance(scheduler: str, check: Callable[[str], None]) -> None:
    """Every check of the suite on every registered scheduler (exempt ones are xfail)."""
    check(scheduler)


def _exempt() -> dict[tuple[str, str], list[str]]:
    """(class, check) -> the registered examples of that class that declare the exemption (on
    the instance: ``udrf`` is exempt from work conservation, ``udrf-backfill`` is not)."""
    out: dict[tuple[str, str], list[str]] = {}
    for name in REGISTERED:
        inst = make_scheduler(name)
        for check, attr in EXEMPTIONS.items():
            if getattr(inst, attr) is False:
                out.setdefault((type(inst).__name__, check), []).append(name)
    return out


def test_the_declared_exemptions() -> None:
    """The built-in schedulers exempt from a check, and no other (a new one is a decision)."""
    assert {k: len(v) for k, v in _exempt().items()} == {
        ("Slots", "work conserving"): 4,
        ("DistributedPSDSF", "work conserving"): 1,
        ("DRFLockstep", "work conserving"): 1,
        ("DRFLockstep", "FIFO within a user"): 1,
        ("UDRF", "work conserving"): 1,  # udrf keeps a blocked job's servers (Fig. 5, line 6)
        ("UDRF", "FIFO within a user"): 2,
        ("KueueFair", "FIFO within a user"): 1,  # BestEffortFIFO passes a head it cannot admit
    }


@pytest.mark.parametrize(
    ("names", "check"), [pytest.param(v, k[1], id=f"{k[0]}-{k[1]}") for k, v in _exempt().items()]
)
def test_every_exemption_is_needed(names: list[str], check: str) -> None:
    """An exempt scheduler fails its check on the suite's workloads (with one of its
    configurations at least: ``slots-14-single`` refuses most tasks of the workloads as larger
    than a slot and conserves work on the few it runs)."""
    failures = []
    for name in names:
        try:
            CHECKS[check](name)
        except AssertionError as exc:
            failures.append(str(exc))
    assert failures, f"{names} pass {check!r}: the exemption is not needed"
    assert all(f.split(": ")[1] == check for f in failures), failures


def test_check_scheduler_skips_the_exempt_checks_only() -> None:
    """psdsf fails ``work conserving`` (test above) but passes check_scheduler, which skips it."""
    check_scheduler("psdsf")
    with pytest.raises(AssertionError, match=r"^OnePerPass: work conserving: "):
        check_scheduler(OnePerPass)
    check_scheduler(type("Exempt", (OnePerPass,), {"work_conserving": False}))


def test_parametrize_with_checks_ids_and_marks() -> None:
    """One id per (scheduler, check), in the order of CHECKS; exempt checks are xfail."""
    mark = parametrize_with_checks(["psdsf", MiniDRF])
    argnames, params = mark.args
    assert argnames == ("scheduler", "check")
    assert [p.id for p in params][:3] == [
        "psdsf-check_interface",
        "psdsf-check_known_tasks",
        "psdsf-check_capacity",
    ]
    assert [p.id for p in params][-1] == "MiniDRF-check_evictions"
    assert len(params) == 2 * len(CHECKS) == 22
    assert [p.values[1] for p in params[:11]] == list(CHECKS.values())
    xfail = {p.id: m.kwargs for p in params for m in p.marks}
    assert xfail == {
        "psdsf-check_work_conserving": {
            "reason": "psdsf sets work_conserving = False",
            "raises": AssertionError,
            "strict": False,
        }
    }


@pytest.mark.parametrize("name", REGISTERED)
def test_name_and_interface(name: str) -> None:
    sched = make_scheduler(name)
    assert sched.name == name  # the label: the result folder
    assert sched.decide.__doc__ and sched.placeable.__doc__
    cluster = ClusterState(np.array([[0.5, 0.5], [1.0, 1.0]]), RES)
    sched.bind(cluster.view())
    assert sched.pending() == 0 and list(sched.decide()) == []  # bound, no task: nothing to place
    assert sched.placeable((0.01, 0.01)) is True
    assert sched.placeable((2.0, 0.01)) is False  # larger than every server


@pytest.mark.parametrize("name", REGISTERED)
def test_unplaceable_task_is_refused(name: str) -> None:
    cluster = ClusterState(np.array([[0.5, 0.5]]), RES)
    sched = make_scheduler(name)
    sched.bind(cluster.view())
    assert not sched.placeable((0.9, 0.1))
    assert sched.placeable((0.01, 0.01))


def test_unknown_scheduler_suggests_closest() -> None:
    from fairsim.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown scheduler 'bf-drf'; did you mean 'bf-drfh'"):
        make_scheduler("bf-drf")


# --------------------------------------------------------------------------- every check can fail


class MiniDRF(Scheduler):
    """A small correct DRF: a FIFO queue per user, the user with the lowest dominant share first,
    its oldest task on the first server that fits. The broken schedulers below change one step."""

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.queues_: dict[int, deque[tuple[int, tuple[float, ...]]]] = {}
        self.held_: dict[int, np.ndarray] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queues_.setdefault(user, deque()).append((task, demand))
        self.held_.setdefault(user, np.zeros(len(demand)))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.held_[user] -= demand

    def _order(self, users: list[int]) -> list[int]:
        """Users by dominant share, then user code."""
        total = self.cluster_.total
        return sorted(users, key=lambda u: (float(np.max(self.held_[u] / total)), u))

    def _take(self, user: int) -> tuple[int, tuple[float, ...]]:
        """The user's next task, removed from its queue."""
        return self.queues_[user].popleft()

    def _head(self, user: int) -> tuple[int, tuple[float, ...]]:
        return self.queues_[user][0]

    def _servers(self, task: int, demand: tuple[float, ...]) -> np.ndarray:
        fits = np.all(self.cluster_.free >= np.asarray(demand), axis=1)
        mask = self.cluster_.task_mask(task)
        if mask is not None:
            fits &= mask
        return np.flatnonzero(fits)

    def decide(self) -> Iterator[tuple[int, int]]:
        """Progressive filling: a user whose head fits nowhere is done for this pass."""
        blocked: set[int] = set()
        while True:
            users = [u for u, q in self.queues_.items() if q and u not in blocked]
            if not users:
                return
            user = self._order(users)[0]
            task, demand = self._head(user)
            servers = self._servers(task, demand)
            if not servers.size:
                blocked.add(user)
                continue
            self._take(user)
            self.held_[user] += demand
            yield task, int(servers[0])

    def pending(self) -> int:
        return sum(len(q) for q in self.queues_.values())


class OverCommit(MiniDRF):
    """Broken: every server is taken to fit."""

    def _servers(self, task: int, demand: tuple[float, ...]) -> np.ndarray:
        return np.arange(self.cluster_.n_servers)


class PlacesTwice(MiniDRF):
    """Broken: places the head task and leaves it in the queue."""

    def _take(self, user: int) -> tuple[int, tuple[float, ...]]:
        return self._head(user)


class UnknownTask(MiniDRF):
    """Broken: after its own placements it places a task it was never given."""

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        if self.pending():
            yield 10**6, 0


class IgnoresConstraints(MiniDRF):
    """Broken: any server with room, whatever the task's placement constraint."""

    def _servers(self, task: int, demand: tuple[float, ...]) -> np.ndarray:
        return np.flatnonzero(np.all(self.cluster_.free >= np.asarray(demand), axis=1))


class LosesTasks(MiniDRF):
    """Broken: drops every tenth task it is given."""

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        if task % 10 != 9:
            super().on_arrival(task, user, demand)


class NeverRefuses(MiniDRF):
    """Broken: accepts tasks that no server can hold, which then wait for ever."""

    def placeable(self, demand: tuple[float, ...]) -> bool:
        return True


class ReturnsAList(MiniDRF):
    """Broken: decide() returns a list, not an iterator."""

    def decide(self) -> Iterator[tuple[int, int]]:
        return list(super().decide())  # type: ignore[return-value]


class SharedCounter(MiniDRF):
    """Broken: a class attribute shared by its instances picks the server, so a second instance
    on the same workload places differently."""

    _runs = itertools.count()

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.offset_ = next(self._runs)

    def _servers(self, task: int, demand: tuple[float, ...]) -> np.ndarray:
        return np.roll(super()._servers(task, demand), -self.offset_)


class LastInFirstOut(MiniDRF):
    """Broken: a user's newest task first."""

    def _head(self, user: int) -> tuple[int, tuple[float, ...]]:
        return self.queues_[user][-1]

    def _take(self, user: int) -> tuple[int, tuple[float, ...]]:
        return self.queues_[user].pop()


class HighestShareFirst(MiniDRF):
    """Broken: the user with the highest dominant share first."""

    def _order(self, users: list[int]) -> list[int]:
        return super()._order(users)[::-1]


class OnePerPass(MiniDRF):
    """Broken: at most one placement per pass, though more tasks fit."""

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from itertools.islice(super().decide(), 1)


class EvictsWaiting(MiniDRF):
    """Broken: preempts, and after its placements evicts a task that is waiting."""

    preempts = True

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.queues_[user].appendleft((task, demand))
        self.held_[user] -= demand

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        for queue in self.queues_.values():
            if queue:
                yield Eviction(queue[0][0], 0)


class EvictsTwice(EvictsWaiting):
    """Broken: evicts the youngest run on a server, places it again and evicts it again, in the
    same pass."""

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from MiniDRF.decide(self)
        for server in range(self.cluster_.n_servers):
            running = self.cluster_.running_on(server)
            if running:
                for _ in range(2):
                    yield Eviction(running[-1], server)
                    yield from MiniDRF.decide(self)
                return


class NoOnEviction(MiniDRF):
    """Broken: declares preempts but has no on_eviction."""

    preempts = True


class EvictsUndeclared(MiniDRF):
    """Broken: evicts without declaring preempts."""

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        for server in range(self.cluster_.n_servers):
            running = self.cluster_.running_on(server)
            if running:
                yield Eviction(running[-1], server)
                return


def test_a_correct_drf_passes_every_check() -> None:
    check_scheduler(MiniDRF)


BROKEN = [
    (
        check_capacity,
        OverCommit,
        r"^OverCommit: capacity: workload 'mixed': task \d+ \(demand \(.*\)\) placed on server 0, "
        r"which has \(.*\) free \(capacity \(.*\)\): over-committed$",
    ),
    (
        check_known_tasks,
        PlacesTwice,
        r"^PlacesTwice: known tasks: workload 'mixed': placed task \d+, which it had already "
        r"placed$",
    ),
    (
        check_known_tasks,
        UnknownTask,
        r"^UnknownTask: known tasks: workload '\w+': placed task 1000000, which was never "
        r"submitted to it$",
    ),
    (
        check_constraints,
        IgnoresConstraints,
        r"^IgnoresConstraints: constraints: workload 'constrained': task \d+ placed on server "
        r"\d+, outside its placement constraint$",
    ),
    (
        check_accounted,
        LosesTasks,
        r"^LosesTasks: accounted: workload 'mixed': pending\(\) returns \d+ after a pass, but "
        r"\d+ tasks are waiting$",
    ),
    (
        check_liveness,
        LosesTasks,
        r"^LosesTasks: liveness: \d+ of the 160 tasks of workload 'mixed' never finished",
    ),
    (
        check_liveness,
        NeverRefuses,
        r"^NeverRefuses: liveness: \d+ of the 160 tasks of workload 'mixed' never finished .*; "
        r"\d+ of them fit no server, which placeable\(\) must refuse$",
    ),
    (
        check_interface,
        ReturnsAList,
        r"^ReturnsAList: interface: workload 'mixed': decide\(\) returned list, not an iterator$",
    ),
    (
        check_determinism,
        SharedCounter,
        r"^SharedCounter: determinism: on a rerun of workload 'mixed' task \d+ got server \d+ "
        r"instead of \d+$",
    ),
    (
        check_fifo_within_user,
        LastInFirstOut,
        r"^LastInFirstOut: FIFO within a user: workload '\w+': task \d+ of user \d+ started on "
        r"server \d+ while the user's earlier task \d+ is waiting$",
    ),
    (
        check_lowest_share_first,
        HighestShareFirst,
        r"^HighestShareFirst: lowest share first: workload 'shares': task 3 of user 0, holding 2 "
        r"tasks, started while user 2, holding 0 tasks of the same demand, was waiting$",
    ),
    (
        check_evictions,
        EvictsWaiting,
        r"^EvictsWaiting: evictions: workload '\w+': evicted task \d+ from server 0, which is "
        r"waiting$",
    ),
    (
        check_evictions,
        EvictsTwice,
        r"^EvictsTwice: evictions: workload 'mixed': evicted task \d+ a second time in one pass: "
        r"it was evicted, placed again and evicted again at one instant \(a loop that never "
        r"lets time advance\)$",
    ),
    (
        check_interface,
        NoOnEviction,
        r"^NoOnEviction: interface: on_eviction\(\) is not implemented \(a method of the "
        r"fairsim.Scheduler protocol, required with preempts = True\)$",
    ),
    (
        check_interface,
        EvictsUndeclared,
        r"^EvictsUndeclared: interface: workload 'mixed': decide\(\) yielded Eviction\(task=\d+, "
        r"server=\d+\), but the scheduler does not declare preempts = True$",
    ),
    (
        check_work_conserving,
        OnePerPass,
        r"^OnePerPass: work conserving: workload 'mixed': after the pass at [\d.]+ s, task \d+ "
        r"\(the oldest "
        r"waiting task of user \d+, demand \(.*\)\) fits on server \d+, which has \(.*\) free$",
    ),
]


@pytest.mark.parametrize(
    ("check", "broken", "match"), [pytest.param(*b, id=b[1].__name__) for b in BROKEN]
)
def test_each_check_catches_its_violation(
    check: Callable[[type], None], broken: type, match: str
) -> None:
    with pytest.raises(AssertionError, match=match):
        check(broken)


def test_every_check_is_shown_failing() -> None:
    assert {b[0] for b in BROKEN} == set(CHECKS.values())


def test_a_check_names_another_violation_that_stops_the_run() -> None:
    """The engine cannot go past an over-commit: checking FIFO, it is reported as capacity."""
    with pytest.raises(AssertionError, match=r"^OverCommit: capacity: "):
        check_fifo_within_user(OverCommit)
    check_capacity(LosesTasks)  # a miscount is not a capacity violation
    check_lowest_share_first(OnePerPass)  # lowest share first still holds


def test_the_checks_refuse_what_is_not_a_scheduler() -> None:
    from fairsim.errors import ConfigError, RegistryError

    with pytest.raises(RegistryError, match=r"^<class 'dict'> is not a subclass of fairsim"):
        check_scheduler(dict)
    with pytest.raises(ConfigError, match=r"^unknown scheduler 'bf-drf'; did you mean 'bf-drfh'"):
        check_capacity("bf-drf")
    assert fairsim.testing.check_scheduler is check_scheduler


def test_one_task_per_pass_is_caught_naming_the_time_and_task() -> None:
    """The issue's scheduler: one placement per pass, so four tasks that all fit one server
    start at 0, 10, 20 and 30 s; ``check_scheduler`` refuses it in one line naming the pass's
    time and the task that fitted."""
    fairsim.register_scheduler("one-per-pass-test")(OnePerPass)
    try:
        cfg = {
            "name": "one-per-pass",
            "trace": {
                "format": "inline",
                "users": [{"name": "a", "demand": [0.1, 0.1], "tasks": 4, "run_s": 10}],
            },
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
            "schedulers": ["one-per-pass-test", "drf"],
        }
        runs = fairsim.simulate(cfg)
    finally:
        fairsim.schedulers.registry.unregister_scheduler("one-per-pass-test")
    assert runs["one-per-pass-test"].tasks["start_s"].tolist() == [0.0, 10.0, 20.0, 30.0]
    assert runs["drf"].tasks["start_s"].tolist() == [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(AssertionError) as err:
        check_scheduler(OnePerPass)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg == (
        "OnePerPass: work conserving: workload 'mixed': after the pass at 4.2 s, task 1 (the "
        "oldest waiting task of user 0, demand (0.152, 0.106)) fits on server 0, which has "
        "(0.444, 0.2175) free"
    )


def test_the_tutorial_lists_every_check_and_its_exemption() -> None:
    """docs/write-a-scheduler.md names each check of the suite once, in order, with the class
    attribute that exempts a scheduler from it (``never`` for the engine's contract)."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "write-a-scheduler.md").read_text("utf-8")
    rows = [
        [c.strip().strip("`") for c in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| `")
    ]
    table = {r[0]: (r[1], r[3]) for r in rows if len(r) == 4}
    assert list(table) == list(CHECKS)
    assert {k: fn for k, (fn, _) in table.items()} == {k: f.__name__ for k, f in CHECKS.items()}
    exempt = {k: a.removesuffix(" = False") for k, (_, a) in table.items() if a != "never"}
    assert exempt == EXEMPTIONS
