"""Run invariants of online ``hdrf`` on random queue trees (hypothesis): capacity and every
queue's limit are never exceeded, every task is accounted for and, given time, every task runs
but those larger than a limit on their path (and their leaf's tasks behind them); the same run
twice gives the same placements."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from helpers import held_by_limits, random_frame, run_on_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.schedulers.exact.instance import parse_queues
from fairsim.schedulers.registry import make_scheduler
from fairsim.simulator.cluster import ClusterState

TABLE = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """1-4 queues nested at random (weights, some limits and guarantees as shares of the pool)
    and each of 4 users' queue (or the root)."""
    queues: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 4))):
        q: dict[str, Any] = {"id": f"q{i}", "weight": draw(st.sampled_from([1, 1, 2, 3]))}
        if i and draw(st.booleans()):
            q["parent"] = f"q{draw(st.integers(0, i - 1))}"
        kind = draw(st.integers(0, 4))
        if kind == 0:
            q["limit_share"] = [draw(st.sampled_from([0.2, 0.5, None])) for _ in range(2)]
        elif kind == 1 and "parent" not in q and i == 0:
            q["guarantee_share"] = [0.3, 0.3]
        queues.append(q)
    users = {
        str(u): f"q{draw(st.integers(0, len(queues) - 1))}"
        for u in range(4)
        if draw(st.integers(0, 4))
    }
    return queues, users


def _run(frame: Any, capacity: np.ndarray, queues: list[dict[str, Any]], users: dict[str, str],
         horizon: float, check: Any = None) -> tuple[Any, Any]:  # fmt: skip
    tree = parse_queues(queues, [], ["cpu", "mem"], capacity.sum(axis=0))
    assert tree is not None
    sched = make_scheduler({"name": "hdrf", "fit": "best-fit"}, queues=tree)
    r = run_on_tree(
        sched, frame, capacity, tree, users, end_s=600.0, horizon_s=horizon, interval_s=7.0,
        on_sample=check,
    )  # fmt: skip
    return r, tree


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_tasks=st.integers(1, 120),
    n_servers=st.integers(1, 6),
    tree=trees(),
    horizon=st.sampled_from([300.0, math.inf]),
)
def test_capacity_limits_and_every_task(
    seed: int,
    n_tasks: int,
    n_servers: int,
    tree: tuple[list[dict[str, Any]], dict[str, str]],
    horizon: float,
) -> None:
    queues, users = tree
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, n_tasks, 4, horizon=500.0)
    capacity = TABLE[rng.integers(0, len(TABLE), n_servers)]
    worst: list[float] = []

    def check(_t: float, cluster: ClusterState) -> None:
        used = cluster.capacity - cluster.free
        worst.append(float((used - cluster.capacity).max()))

    r, qt = _run(frame, capacity, queues, users, horizon, check)
    assert max(worst) <= 1e-9
    t = r.tasks
    assert len(t["submit_s"]) + sum(r.skipped.values()) - r.skipped.get(
        "fits no server of the pool", 0
    ) == len(frame)
    started = t["server"] >= 0
    finished = ~np.isnan(t["finish_s"])
    assert np.all(started[finished])
    user_names = np.array(r.users, dtype=object)[t["user"]]
    code = {u: qt.ids.index(q) for u, q in users.items()}
    queue_of = np.array([code.get(str(u), -1) for u in user_names], dtype=int)
    if horizon == math.inf:  # every task that can run, runs (work conserving, no queue starves
        # for ever: a limit frees room as its queue's tasks end); a task larger than a limit on
        # its path never starts (as in YARN and Kueue)
        stuck = held_by_limits(r, qt, users)
        assert np.all(finished | t["unplaceable"] | stuck)
    for q in range(len(qt.ids)):
        below = np.zeros(len(queue_of), dtype=bool)
        for c in range(len(qt.ids)):  # queues c inside q
            k = c
            while k >= 0 and k != q:
                k = int(qt.parent[k])
            if k == q:
                below |= queue_of == c
        for at in t["start_s"][started & below]:
            on = started & below & (t["start_s"] <= at) & ~(finished & (t["finish_s"] <= at))
            use = t["demand"][on].sum(axis=0)
            assert np.all(use <= qt.limit[q] * (1 + 1e-9) + 1e-9), (q, at, use, qt.limit[q])


def test_the_same_run_twice_places_the_same() -> None:
    rng = np.random.default_rng(5)
    frame = random_frame(rng, 300, 4, horizon=500.0)
    capacity = TABLE[rng.integers(0, len(TABLE), 5)]
    queues = [{"id": "a", "guarantee_share": [0.3, 0.3]}, {"id": "b", "weight": 2},
              {"id": "c", "parent": "b", "limit_share": [0.5, None]}]  # fmt: skip
    users = {"0": "a", "1": "b", "2": "c", "3": "c"}
    one, _ = _run(frame, capacity, queues, users, math.inf)
    two, _ = _run(frame, capacity, queues, users, math.inf)
    for col in ("start_s", "server"):
        np.testing.assert_array_equal(one.tasks[col], two.tasks[col])
    assert (one.tasks["server"] >= 0).sum() > 200


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_tasks=st.integers(2, 120), tree=trees())
def test_reservation_order_is_the_descents(
    seed: int, n_tasks: int, tree: tuple[list[dict[str, Any]], dict[str, str]]
) -> None:
    """Leaves woken on a freed server reserve it in the order the descent would serve them:
    ``_by_key`` (grouped by queue when the queues' leaves are contiguous) equals sorting every
    leaf by its whole path (``path_key``), at every sampled instant, for every subset tried."""
    queues, users = tree
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, n_tasks, 4, horizon=500.0)
    capacity = TABLE[rng.integers(0, len(TABLE), 3)]
    qt = parse_queues(queues, [], ["cpu", "mem"], capacity.sum(axis=0))
    sched = make_scheduler({"name": "hdrf", "fit": "best-fit"}, queues=qt)
    checked = [0]

    def check(_: float, __: Any) -> None:
        leaves = list(range(len(sched.leaves())))
        for _ in range(3):
            sub = [u for u in leaves if rng.random() < 0.7]
            if len(sub) > 1:
                if sched.tree_.dirty_leaves:
                    sched.tree_.flush()  # the paths as the descent sees them
                want = sorted(sub, key=sched.tree_.path_key)
                assert sched._by_key(sub) == want
                checked[0] += 1

    run_on_tree(sched, frame, capacity, qt, users, end_s=600.0, interval_s=7.0, on_sample=check)
