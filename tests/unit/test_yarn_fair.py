"""``yarn-fair`` (docs/yarn-fair.md): YARN's Fair Scheduler with DominantResourceFairnessPolicy on
hierarchical queues, with min-share and fair-share preemption.

Hand instances with exact numbers: the steady and instantaneous fair shares of a two-level tree
(``ComputeFairShares``), a queue below its minimum share that preempts after its timeout the most
recently launched runs of the queue above its fair share (killed at once, or after YARN's
waitTimeBeforeKill), two applications above their fair share taking runs from each other while
their queue stays min-share starved (the tiered trace's loop in miniature, at the pace of
YARN's delays), no preemption below the utilisation threshold or before the timeout, the
conformance suite with evictions, and a one-line error for a bad parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import reclaim_config

import fairsim
from fairsim.errors import ConfigError
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.yarn_fair import YarnFair, fair_shares
from fairsim.simulator.cluster import ClusterState
from fairsim.testing import check_scheduler

INF = math.inf


def test_compute_fair_shares_one_resource() -> None:
    """Weights, a minimum share above the weighted share, and a maximum below it."""
    w, none = np.array([1.0, 1.0, 2.0]), np.zeros(3)
    assert fair_shares(w, none, np.full(3, INF), 12.0).tolist() == [3.0, 3.0, 6.0]
    # the first child's minimum 6 holds; the others share 6 by weight
    assert fair_shares(w, np.array([6.0, 0, 0]), np.full(3, INF), 12.0).tolist() == [6.0, 2.0, 4.0]
    # the third child's maximum 2 holds; the first two share the rest equally
    assert fair_shares(w, none, np.array([INF, INF, 2.0]), 12.0).tolist() == [5.0, 5.0, 2.0]
    # minima over the total: each gets its minimum (YARN's search ends at R = 0)
    assert fair_shares(w, np.array([8.0, 8.0, 0]), np.full(3, INF), 12.0).tolist() == [8, 8, 0]


def _tree() -> QueueTree:
    """A (weight 1, minResources 6 CPU) and B (weight 2, maxResources 12 memory) under the root;
    B1 (weight 1) and B2 (weight 3) under B. User 0 in A, users 1 and 2 in B1."""
    return QueueTree(
        ids=("A", "B", "B1", "B2"),
        parent=np.array([-1, -1, 1, 1]),
        weight=np.array([1.0, 2.0, 1.0, 3.0]),
        guarantee=np.array([[6.0, 0.0], [0, 0], [0, 0], [0, 0]]),
        guaranteed=np.array([True, False, False, False]),
        limit=np.array([[INF, INF], [INF, 12.0], [INF, INF], [INF, INF]]),
        user_queue=np.array([0, 2, 2]),
    )


def test_fair_shares_of_a_two_level_tree() -> None:
    """Pool (12 CPU, 24 memory). Steady: A gets its minimum 6 CPU and B 2 x 3 = 6; in memory B
    stops at its maximum 12 and A takes the other 12; B's (6, 12) splits 1:3 between B1 and B2.
    Instantaneous with users in A and B1 only: B2 is inactive (0) and B1 takes all of B's share,
    which B1's two applications split equally."""
    sched = YarnFair(queues=_tree())
    sched.bind(ClusterState(np.array([[12.0, 24.0]]), ("cpu", "mem")).view())
    assert sched.steady_fair_share.tolist() == [[12, 24], [6, 12], [6, 12], [1.5, 3], [4.5, 9]]
    for task, user in enumerate((0, 1, 2)):
        sched.on_arrival(task, user, (1.0, 1.0))
    sched._update()
    assert sched.fair_share.tolist() == [[12, 24], [6, 12], [6, 12], [6, 12], [0, 0]]
    assert {a.user: sched.app_fair_[a.order].tolist() for a in sched.apps_} == {
        0: [6, 12],
        1: [3, 6],
        2: [3, 6],
    }


def _scenario(**params: float) -> dict:
    """One server (1, 1). Queue batch's user starts four quarter-server tasks of 100 s at 0 s;
    queue prod (minResources half the pool) submits two quarter tasks of 20 s at 10 s."""
    return reclaim_config("yarn-min-share", {"name": "yarn-fair", "label": "yarn", **params})


@pytest.mark.parametrize(
    ("kill_wait", "prod_start", "lost"),
    [(0.0, 15.0, 30.0), (15.0, 30.0, 60.0)],
    ids=["killed-at-once", "waitTimeBeforeKill-15s"],
)
def test_min_share_preemption_after_its_timeout(
    kill_wait: float, prod_start: float, lost: float
) -> None:
    """prod waits below its minimum share from 10 s; after the 5 s timeout (the update at 15 s)
    it takes two quarters back from batch, which holds the whole pool against a fair share of
    half: batch's most recently launched runs first (tasks 3, then 2; batch stays at its fair
    share 0.5). Killed at once, prod runs 15-35 s and batch's tasks 2 and 3 restart at 35 s and
    end at 135 s (30 s of their runs lost); with YARN's default ``waitTimeBeforeKill`` (15 s)
    tasks 2 and 3 run on until the kill at 30 s, prod runs 30-50 s, they restart at 50 s and
    end at 150 s (60 s of runs lost)."""
    params = {"min_share_preemption_timeout_s": 5, "wait_before_kill_s": kill_wait}
    r = fairsim.simulate(_scenario(**params))["yarn"]
    t = r.tasks.sort_values(["user", "task_index"])
    back = prod_start + 20
    assert t["start_s"].tolist() == [0.0, 0.0, back, back, prod_start, prod_start]
    assert t["finish_s"].tolist() == [100.0, 100.0, back + 100, back + 100, back, back]
    assert t["evictions"].tolist() == [0, 0, 1, 1, 0, 0]
    p = r.summary["preemption"]
    assert (p["evictions"], p["tasks_evicted"], p["run_s_lost"]) == (2, 2, lost)
    assert p["work_lost"] == {"cpu": lost / 4, "mem": lost / 4}
    assert r.summary["preemption_loops"]["count"] == 0


def _ping_pong(**params: float) -> dict:
    """One server (1, 1), one queue (``minResources`` the whole pool) and three applications:
    p3 holds a twentieth of the pool; p1 and p2 each submit twelve tasks of (0.05, 0.005) at
    0 s, all of 1,000 s. The queue can never reach its minimum share of memory (its CPU runs
    out first), so it stays min-share starved; every application's fair share is a third of
    the pool, and p1 and p2 each hold more than that."""
    return {
        "name": "yarn-ping-pong",
        "trace": {
            "format": "inline",
            "users": [
                {"name": "p3", "join_s": 0, "demand": [0.05, 0.05], "tasks": 1, "run_s": 1000},
                {"name": "p1", "join_s": 0, "demand": [0.05, 0.005], "tasks": 12, "run_s": 1000},
                {"name": "p2", "join_s": 0, "demand": [0.05, 0.005], "tasks": 12, "run_s": 1000},
            ],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "queues": [{"id": "prod", "guarantee_share": [1.0, 1.0]}],
        "leaves": {"by": "user", "default": "prod"},
        "schedulers": [
            {"name": "yarn-fair", "label": "yarn", "min_share_preemption_timeout_s": 5, **params}
        ],
        "collect": {"utilization_interval_s": 10, "horizon_s": 300},
    }


@pytest.mark.parametrize(
    ("params", "evictions", "tasks", "by_user"),
    [
        ({"wait_before_kill_s": 0, "starvation_check_delay_s": 0}, 2953, 10, (1478, 1475)),
        ({}, 50, 7, (30, 20)),
    ],
    ids=["killed-at-once-no-delay", "yarn-defaults"],
)
def test_min_share_starvation_between_two_applications_above_their_fair_share(
    params: dict, evictions: int, tasks: int, by_user: tuple[int, int]
) -> None:
    """The tiered trace's preemption loop in miniature (docs/yarn-fair.md, "On the trace"):
    the starved queue's starvation goes to p1 or p2, whichever holds less, and its victims are
    the other's most recent runs (it stays above its fair share: ``canContainerBePreempted``),
    which makes the other the one holding less. Killed at once and checked again at the next
    update (fairsim before the fix: 0.5 s), the two swap runs at every update: 2,953 evictions
    of 10 tasks in 300 s. With YARN's waitTimeBeforeKill (15 s) and its delay before an
    application preempted for is checked again (29 s in all) they still swap, YARN's rule, at
    the pace of the kills: 50 evictions of 7 tasks. p3 is below its fair share and never
    loses a run."""
    r = fairsim.simulate(_ping_pong(**params))["yarn"]
    p = r.summary["preemption"]
    assert (p["evictions"], p["tasks_evicted"]) == (evictions, tasks)
    per_user = r.tasks.groupby("user")["evictions"].sum().to_dict()
    assert (per_user["p1"], per_user["p2"], per_user["p3"]) == (*by_user, 0)
    assert r.summary["preemption_loops"]["count"] == tasks


def test_no_preemption_below_the_utilisation_threshold_or_before_the_timeout() -> None:
    """The same scenario with the threshold at 1 (the pool is used at 1.0, not above), or with a
    timeout longer than prod's wait: no eviction, prod starts when batch's first runs end."""
    for params in (
        {"min_share_preemption_timeout_s": 5, "utilization_threshold": 1.0},
        {"min_share_preemption_timeout_s": 95},
        {},
    ):
        r = fairsim.simulate(_scenario(**params))["yarn"]
        t = r.tasks.sort_values(["user", "task_index"])
        assert t["start_s"].tolist() == [0.0, 0.0, 0.0, 0.0, 100.0, 100.0], params
        assert int(t["evictions"].sum()) == 0


def test_conformance_with_evictions() -> None:
    """Every check of the conformance suite, with preemption on at once (timeouts 0, threshold
    0): the small workloads evict."""
    check_scheduler(
        {
            "name": "yarn-fair",
            "fair_share_preemption_timeout_s": 0,
            "min_share_preemption_timeout_s": 0,
            "utilization_threshold": 0,
        }
    )


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (
            {"fair_share_preemption_threshold": 1.5},
            r"^yarn-fair: fair_share_preemption_threshold: 1\.5 \(Input should be less than or "
            r"equal to 1\)$",
        ),
        (
            {"min_share_preemption_timeout_s": -1},
            r"^yarn-fair: min_share_preemption_timeout_s: -1 \(Input should be greater than or "
            r"equal to 0\)$",
        ),
        (
            {"update_interval_s": 0},
            r"^yarn-fair: update_interval_s: 0 \(Input should be greater than 0\)$",
        ),
        (
            {"wait_before_kill_s": -1},
            r"^yarn-fair: wait_before_kill_s: -1 \(Input should be greater than or equal to 0\)$",
        ),
        (
            {"starvation_check_delay_s": -0.5},
            r"^yarn-fair: starvation_check_delay_s: -0\.5 \(Input should be greater than or "
            r"equal to 0\)$",
        ),
    ],
)
def test_a_bad_parameter_is_one_line(params: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make_scheduler({"name": "yarn-fair", **params})
