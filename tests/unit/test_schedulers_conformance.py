"""One conformance suite that every registered online scheduler must pass (the scikit-learn
``check_estimator`` idea): :func:`fairsim.testing.check_scheduler` over the registry, and checks
that drive each scheduler through the engine's protocol by hand and assert the contract of
``simulator/scheduler.py``. The names come from the registry (``schedulers/registry.py``); the
lists below name only the schedulers exempt from a check, and why."""

from __future__ import annotations

import numpy as np
import pytest

import fairsim
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.registry import examples, resolve
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.scheduler import Scheduler

#: Every built-in scheduler, with concrete parameters where it needs some (slots-<S>).
REGISTERED = list(examples(plugins=False))
RES = ("cpu", "mem")


def _cluster(rng: np.random.Generator, n: int = 12) -> ClusterState:
    table = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])
    return ClusterState(table[rng.integers(0, len(table), n)], RES)


def _pass(sched: Scheduler, now: float = 0.0):
    """One scheduling pass; a periodic scheduler's period has elapsed before it."""
    if sched.next_wakeup(now) < np.inf:
        sched.on_tick(sched.next_wakeup(now))
    return sched.decide()


def _drive(name: str, seed: int, n_tasks: int = 200):
    """Feed random tasks, commit every placement, release some; return what happened."""
    rng = np.random.default_rng(seed)
    cluster = _cluster(rng)
    sched = make_scheduler(name)
    sched.bind(cluster.view())
    demands = [tuple(rng.uniform(0.01, 0.3, 2).round(3).tolist()) for _ in range(n_tasks)]
    users = rng.integers(0, 5, n_tasks).tolist()
    waiting: set[int] = set()
    running: dict[int, int] = {}
    placements: list[tuple[int, int]] = []
    for t in range(n_tasks):
        if sched.placeable(demands[t]):
            sched.on_arrival(t, users[t], demands[t])
            waiting.add(t)
        if t % 7 == 6 and running:  # a completion
            done = min(running)
            server = running.pop(done)
            cluster.release(server, demands[done])
            sched.on_completion(done, users[done], demands[done], server)
        for task, server in _pass(sched, float(t)):
            assert task in waiting, f"{name} placed task {task}, which is not waiting"
            cluster.commit(task, server, demands[task])  # raises if it does not fit
            waiting.discard(task)
            running[task] = server
            placements.append((task, server))
    return cluster, sched, demands, users, waiting, placements


def test_registry_lists_every_builtin_scheduler() -> None:
    """The examples cover every registered name once or more, and nothing else."""
    names = {resolve(n).name for n in REGISTERED}
    assert names == {
        *("slots", "ff-drfh", "bf-drfh", "drf", "c-drfh", "tsf", "af", "pf", "bmf", "lmm-mms"),
        *("psdsf", "drf-classes", "drf-lockstep", "udrf"),
    }
    assert REGISTERED[:4] == ["slots-14", "slots-10", "slots-14-single", "slots-20-cpu"]


@pytest.mark.parametrize("name", REGISTERED)
def test_check_scheduler(name: str) -> None:
    """The public conformance suite passes on every registered scheduler."""
    fairsim.testing.check_scheduler(name)


@pytest.mark.parametrize("name", REGISTERED)
def test_name_and_interface(name: str) -> None:
    sched = make_scheduler(name)
    assert sched.name == name  # the label: the result folder
    assert isinstance(sched, Scheduler)
    for method in ("on_arrival", "on_completion", "decide", "pending"):  # the base only raises
        assert getattr(type(sched), method) is not getattr(Scheduler, method), (name, method)
    assert sched.decide.__doc__ and sched.placeable.__doc__
    cluster = _cluster(np.random.default_rng(0))
    sched.bind(cluster.view())
    assert sched.pending() == 0 and list(_pass(sched)) == []  # bound, no task: nothing to place
    assert sched.placeable((0.01, 0.01)) is True
    too_big = tuple((2 * cluster.capacity.max(axis=0)).tolist())  # larger than every server
    assert sched.placeable(too_big) is False


@pytest.mark.parametrize("name", REGISTERED)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_only_waiting_tasks_placed_and_capacity_respected(name: str, seed: int) -> None:
    cluster, sched, _demands, _users, waiting, placements = _drive(name, seed)
    assert placements, "nothing was ever placed"
    assert np.all(cluster.free >= -1e-9)
    assert np.all(cluster.free <= cluster.capacity + 1e-9)
    assert sched.pending() == len(waiting)


@pytest.mark.parametrize("name", REGISTERED)
def test_deterministic(name: str) -> None:
    assert _drive(name, 5)[5] == _drive(name, 5)[5]


#: A user's jobs are independent under UDRF (its point: a user runs more of one job than of
#: another, Section II-A), so a later job may start before an earlier one that does not fit; the
#: order within a job is checked in tests/unit/test_udrf_online.py.
JOB_LEVEL = ["udrf"]


@pytest.mark.parametrize("name", [n for n in REGISTERED if n not in JOB_LEVEL])
def test_fifo_within_a_user(name: str) -> None:
    *_, users, _w, placements = _drive(name, 3)
    order: dict[int, list[int]] = {}
    for task, _server in placements:
        order.setdefault(users[task], []).append(task)
    for tasks in order.values():
        assert tasks == sorted(tasks), "a user's tasks were not started in submission order"


#: Not work-conserving by design: a user's waiting jobs start together or not at all (the UDRF
#: paper's Section V baseline; its waste is Fig. 9), checked in tests/unit/test_drf_lockstep.py.
LOCKSTEP = ["drf-lockstep"]


#: Not work-conserving in resources by design: ``slots`` counts slots, not resources;
#: ``psdsf``'s servers reserve free room for a lower-VDS user
#: (``tests/regression/test_psdsf_online.py``).
NOT_WORK_CONSERVING = {"slots", "psdsf", *LOCKSTEP}


@pytest.mark.parametrize(
    "name", [n for n in REGISTERED if resolve(n).name not in NOT_WORK_CONSERVING]
)
def test_work_conserving_after_a_pass(name: str) -> None:
    """After decide() no waiting user's head task fits on any server (progressive filling)."""
    cluster, sched, demands, _users, waiting, _p = _drive(name, 4)
    if name in JOB_LEVEL:  # driven by hand, every task is its own job: none waiting fits
        heads = sorted(waiting)
    else:
        assert isinstance(sched, ProgressiveFilling)
        heads = [q[0][0] for q in sched._queues if q]
    for task in heads:
        d = np.array(demands[task])
        assert not np.any(np.all(cluster.free >= d, axis=1)), f"head task {task} still fits"
    assert waiting


@pytest.mark.parametrize("name", REGISTERED)
def test_lowest_share_user_served_first(name: str) -> None:
    """Two users, one already holding resources: the other one is served first."""
    cluster = ClusterState(np.array([[1.0, 1.0], [1.0, 1.0]]), RES)
    sched = make_scheduler(name)
    sched.bind(cluster.view())
    sched.on_arrival(0, 0, (0.05, 0.05))
    ((t0, s0),) = list(_pass(sched))
    cluster.commit(t0, s0, (0.05, 0.05))
    sched.on_arrival(1, 0, (0.05, 0.05))
    sched.on_arrival(2, 1, (0.05, 0.05))
    first = next(iter(_pass(sched, 1.0)))
    assert first[0] == 2, "the user with the lower share must be served first"


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
