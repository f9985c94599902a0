"""Online ``hdrf``: the paper's examples with indivisible tasks, guarantees and limits, and the
same placements as ``drf`` on a one-level tree (docs/hdrf.md, "Online hdrf")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import held_by_limits, random_frame, run_on_tree

import fairsim
from fairsim.scenario.config import LeafRule
from fairsim.scenario.queues import QueueTaskSource
from fairsim.scenario.scheduler_run import run_scheduler
from fairsim.schedulers.exact.instance import parse_queues
from fairsim.schedulers.hdrf_online import HDRF
from fairsim.schedulers.registry import make_scheduler
from fairsim.simulator.workload import FrameTaskSource
from fairsim.traces.io import write_tasks

TABLE = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])


def _user(name: str, demand: list[float], tasks: int, run_s: float = 1000.0) -> dict[str, Any]:
    return {"name": name, "demand": demand, "tasks": tasks, "run_s": run_s}


def _running(
    users: list[dict[str, Any]],
    queues: list[dict[str, Any]],
    leaves: dict[str, str],
    capacity: list[float],
    at_s: float = 50.0,
) -> dict[str, dict[str, int]]:
    """Tasks running per user at ``at_s``, under ``hdrf`` and ``drf``, every user's tasks
    submitted at 0 on one server."""
    cfg = {
        "name": "hand",
        "trace": {"format": "inline", "users": users},
        "cluster": {"classes": [{"name": "s", "count": 1, "capacity": capacity}]},
        "schedulers": ["hdrf", "drf"],
        "queues": queues,
        "leaves": {"by": "user", "users": leaves},
    }
    out = {}
    for name, r in fairsim.simulate(cfg).items():
        t = r.tasks
        on = (t["start_s"] <= at_s) & ((t["finish_s"] > at_s) | t["finish_s"].isna())
        out[name] = t[on].groupby("user").size().to_dict()
    return out


def test_blocked_nodes_example() -> None:
    """The paper's blocked nodes, 30 CPUs and 30 GPUs (docs/hdrf.md): 10 CPUs each to n1, n2,
    n3,1; n3,2 and n4 split the GPUs 15 / 15 (rescaling to the minimum of all children would
    give 20 / 10)."""
    cpu, gpu = [1.0, 0.0], [0.0, 1.0]
    users = [_user("n1", cpu, 40), _user("n2", cpu, 40), _user("n31", cpu, 40)]
    users += [_user("n32", gpu, 40), _user("n4", gpu, 40)]
    got = _running(
        users,
        [{"id": "q1"}, {"id": "q2"}, {"id": "q3"}, {"id": "q4"}],
        {"n1": "q1", "n2": "q2", "n31": "q3", "n32": "q3", "n4": "q4"},
        [30, 30],
    )
    assert got["hdrf"] == {"n1": 10, "n2": 10, "n31": 10, "n32": 15, "n4": 15}


def test_queues_share_before_users() -> None:
    """One resource, queue A with one user and queue B with four: A holds half the pool (20 of
    40), each B user 5, where flat ``drf`` gives every user 8."""
    cpu = [1.0, 0.0]
    users = [_user("a", cpu, 40), *(_user(f"b{k}", cpu, 40) for k in range(4))]
    got = _running(
        users,
        [{"id": "A"}, {"id": "B"}],
        {"a": "A", **{f"b{k}": "B" for k in range(4)}},
        [40, 40],
    )
    assert got["hdrf"] == {"a": 20, "b0": 5, "b1": 5, "b2": 5, "b3": 5}
    assert got["drf"] == {"a": 8, "b0": 8, "b1": 8, "b2": 8, "b3": 8}


@pytest.mark.parametrize(
    ("b_queue", "a_queue", "want"),
    [
        ({"weight": 3}, {}, {"a": 3, "b": 7}),  # weights 1:3 of 10 CPUs: 2.5 / 7.5, whole tasks
        ({"weight": 3, "limit": [5, None]}, {}, {"a": 5, "b": 5}),  # B limited to 5 CPUs
        ({"weight": 3}, {"guarantee": [6, 0]}, {"a": 6, "b": 4}),  # A guaranteed 6 CPUs
        ({"weight": 3}, {"guarantee": [2, 0]}, {"a": 3, "b": 7}),  # below its fair 2.5: none
    ],
)
def test_weights_guarantees_and_limits(
    b_queue: dict[str, Any], a_queue: dict[str, Any], want: dict[str, int]
) -> None:
    """The numbers of docs/hdrf.md's "Guarantees and limits", with indivisible tasks."""
    cpu = [1.0, 0.0]
    got = _running(
        [_user("a", cpu, 40), _user("b", cpu, 40)],
        [{"id": "A", **a_queue}, {"id": "B", **b_queue}],
        {"a": "A", "b": "B"},
        [10, 10],
    )
    assert got["hdrf"] == want


def test_a_user_whose_tasks_finish_gets_its_share_back(tmp_path: Path) -> None:
    """The paper's dynamic case (complementary demands): n1 (GPU) and n2 = {n2,1 CPU, n2,2 GPU}
    on 10 CPUs and 10 GPUs; n2,2's first 5 tasks end at 10 s and 5 more arrive then. H-DRF
    hands n2,2 its 5 GPUs back (naive H-DRF, which counts n2's CPUs, would give them to n1)."""
    rows = []
    for user, job, n, cpu, gpu, t, run in (
        ("n1", 1, 20, 0.0, 1.0, 0.0, 1000.0),
        ("n21", 2, 20, 1.0, 0.0, 0.0, 1000.0),
        ("n22", 3, 5, 0.0, 1.0, 0.0, 10.0),
        ("n22", 4, 5, 0.0, 1.0, 10.0, 1000.0),
    ):
        rows += [
            {"job_id": job, "task_index": i, "user": user, "submit_s": t, "cpu": cpu,
             "mem": gpu, "run_s": run, "end_state": "finish", "attempts": 1, "instances": 1,
             "constraint": None, "parents": None}
            for i in range(n)
        ]  # fmt: skip
    frame = pd.DataFrame(rows).sort_values(["submit_s", "job_id", "task_index"])
    write_tasks(frame, tmp_path / "tasks.parquet")
    cfg = {
        "name": "dynamic",
        "trace": {"format": "canonical", "path": str(tmp_path)},
        "cluster": {"classes": [{"name": "s", "count": 1, "capacity": [10, 10]}]},
        "schedulers": ["hdrf"],
        "queues": [{"id": "q1"}, {"id": "q2"}],
        "leaves": {"by": "user", "users": {"n1": "q1", "n21": "q2", "n22": "q2"}},
        "collect": {"horizon_s": 100, "utilization_interval_s": 5},
    }
    t = fairsim.simulate(cfg)["hdrf"].tasks
    for at in (5.0, 15.0):
        on = (t["start_s"] <= at) & ((t["finish_s"] > at) | t["finish_s"].isna())
        assert t[on].groupby("user").size().to_dict() == {"n1": 5, "n21": 10, "n22": 5}


def _tree_source(frame: pd.DataFrame, rule: LeafRule, queues: list[dict[str, Any]]) -> Any:
    tree = parse_queues(queues, [], ["cpu", "mem"], np.ones(2))
    assert tree is not None
    return QueueTaskSource(FrameTaskSource(frame, end_s=600.0), rule, tree), tree


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("tree", ["none", "one queue", "chain"])
def test_a_one_level_tree_places_as_drf(seed: int, tree: str) -> None:
    """Without queues, with every user in one queue, or in a chain of two: every task starts at
    the same time on the same server as under ``drf`` (random workloads on Table I servers)."""
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, 300, 5, horizon=500.0)
    capacity = TABLE[rng.integers(0, len(TABLE), 6)]
    queues = {"none": [], "one queue": [{"id": "all"}], "chain": [{"id": "p"}, {"id": "c",
              "parent": "p", "weight": 2}]}[tree]  # fmt: skip
    default = {"none": None, "one queue": "all", "chain": "c"}[tree]
    rule = LeafRule(by="user", default=default)
    source, qt = _tree_source(frame, rule, queues)
    kw: dict[str, Any] = {"start_s": 0.0, "horizon_s": 2000.0, "interval_s": 50.0}
    hdrf = run_scheduler(make_scheduler("hdrf", queues=qt), capacity, source, **kw)
    drf = run_scheduler("drf", capacity, FrameTaskSource(frame, end_s=600.0), **kw)
    for col in ("start_s", "finish_s", "server"):
        np.testing.assert_array_equal(hdrf.tasks[col], drf.tasks[col])
    assert (hdrf.tasks["server"] >= 0).sum() > 100  # the runs place tasks


def test_leaves_are_queue_user_pairs() -> None:
    """A user's tasks in two queues are two leaves: ``hdrf`` serves them apart."""
    frame = pd.DataFrame(
        {
            "job_id": np.arange(4, dtype=np.int64),
            "task_index": np.zeros(4, np.int32),
            "user": ["u", "u", "v", "v"],
            "submit_s": [0.0, 0.0, 0.0, 0.0],
            "cpu": [0.5] * 4,
            "mem": [0.1] * 4,
            "run_s": [10.0] * 4,
            "priority": [9, 0, 9, 0],
        }
    )
    rule = LeafRule(by="tier", tiers={"prod": "production", "free": "free"})
    source, qt = _tree_source(frame, rule, [{"id": "prod"}, {"id": "free"}])
    sched = make_scheduler("hdrf", queues=qt)
    run_scheduler(sched, np.array([[1.0, 1.0]]), source, start_s=0, horizon_s=100, interval_s=5)
    assert isinstance(sched, HDRF)
    assert sched.leaves() == [(0, 0), (1, 0), (0, 1), (1, 1)]  # (queue, user code)


def test_round12_is_round_to_12_digits() -> None:
    """The compiled ``round12`` (the levels' rounding) and its copy written out in
    ``LeafOrder.key`` (the leaves' keys) return exactly ``round(x, 12)``, the sign of a zero
    included, on shares, ratios of small integers, values next to a 12-digit half and edge
    values (the short path and the fall-back to ``round``)."""
    import math
    from types import SimpleNamespace

    from fairsim.schedulers._hdrf_kernel import round12
    from fairsim.schedulers.hdrf_online import LeafOrder

    order = LeafOrder()
    state = SimpleNamespace(n_columns=2, total=[1.0, 1.0], weight=[1.0], alloc=[[0.0, 0.0]])
    order.state = state  # type: ignore[assignment]

    def leaf_key(x: float) -> float:  # max(x / 1, x / 1) / 1: the key of a share x
        state.alloc[0] = [x, x]
        return order.key(0)

    rng = np.random.default_rng(41)
    xs = [float(x) for x in rng.random(50_000)]
    xs += [float(x) for x in rng.random(20_000) * 10.0 ** rng.uniform(-14, 2, 20_000)]
    num, den = rng.integers(1, 10**6, 20_000), rng.integers(1, 10**6, 20_000)
    xs += [float(a) / float(b) for a, b in zip(num, den, strict=True)]
    halves = (rng.integers(0, 10**12, 5_000) + 0.5) / 1e12
    xs += [float(h) + d for h in halves for d in (0.0, 1e-17, -1e-17, 4e-16, -4e-16)]
    xs += [0.0, -0.0, 1.0, 0.5, 1e-12, 5e-13, 1.5e-12, 2.5e-12, 1100.0, 1e300, math.inf, -0.25]
    for rounding in (round12, leaf_key):
        for x in xs:
            got, want = rounding(x), round(x, 12)
            assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want), x
        assert math.isnan(rounding(math.nan))


def test_a_leaf_held_back_by_a_limit_forgets_its_candidate_servers() -> None:
    """A leaf woken for one freed server (its only candidate) and then held back by a queue's
    limit searches every server when the limit lets it go: with its stale candidate list it
    found no room there, remembered its need as fitting nowhere while another server had room,
    and the wake-ups of that server looped for ever (this random instance hung before the
    fix; an alarm turns a hang into a failure)."""
    import signal

    rng = np.random.default_rng(55)
    n, n_users = int(rng.integers(50, 400)), int(rng.integers(2, 12))  # 387, 10
    frame = pd.DataFrame(
        {
            "job_id": rng.integers(0, n // 3, n).astype(np.int64),
            "task_index": np.arange(n, dtype=np.int32),
            "user": rng.integers(0, n_users, n).astype(str),
            "submit_s": np.round(rng.uniform(0, 1000, n), 1),
            "cpu": rng.uniform(0.0, 0.6, n) * (rng.random(n) > 0.05),
            "mem": rng.uniform(0.0, 0.6, n) * (rng.random(n) > 0.05),
        }
    )
    rng.uniform(0.0, 0.6, n)  # (a third resource, not used here)
    frame["run_s"] = np.round(rng.uniform(1, 300, n), 1)
    capacity = np.array([[1.04806633, 1.10022035], [0.51499138, 0.67222367],
                         [1.11700428, 0.62552652]])  # fmt: skip
    queues = [{"id": "q0", "weight": 3, "limit_share": [0.8, 0.2]},
              {"id": "q1", "weight": 3, "parent": "q0", "limit_share": [None, 0.8]},
              {"id": "q2", "parent": "q1"}, {"id": "q3", "weight": 2, "parent": "q2"}]  # fmt: skip
    users = {"0": "q3", "1": "q2", "2": "q2", "3": "q0", "4": "q1", "5": "q0", "6": "q1",
             "7": "q0"}  # fmt: skip
    qt = parse_queues(queues, [], ["cpu", "mem"], capacity.sum(axis=0))

    def hang(*_: Any) -> None:
        raise TimeoutError("the run did not end in 60 s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(60)
    try:
        sched = make_scheduler({"name": "hdrf", "fit": "best-fit"}, queues=qt)
        r = run_on_tree(sched, frame, capacity, qt, users, end_s=2000.0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    t = r.tasks
    finished = np.isfinite(t["finish_s"])
    # every task runs but those larger than a limit on their path, and their leaf's tasks
    # behind them
    stuck = held_by_limits(r, qt, users)
    assert np.all(finished | stuck)
    assert finished.sum() == 95 and len(finished) == 387
