"""``kueue-fair`` (docs/kueue-fair.md): Kubernetes Kueue's fair sharing, ClusterQueues in one
cohort with nominal quotas, borrowing and lending limits and weights, admission by dominant
resource share and fair-sharing preemption.

Hand instances with exact numbers: DRS and available quota with lending and borrowing limits,
a guaranteed queue reclaiming its nominal quota (who is evicted, start times), the two reported
configurations kubernetes-sigs/kueue #3779 (no loop here) and #14543 (a loop with both
strategies, none with either alone or with PrioritizePreemptorWorkloads), the conformance suite
with evictions, and one-line errors for bad parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import reclaim_config

import fairsim
from fairsim.errors import ConfigError
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.kueue_fair import KueueFair, flat_weights
from fairsim.simulator.cluster import ClusterState
from fairsim.testing import check_scheduler

INF = math.inf


def _tree() -> QueueTree:
    """Pool (10 CPU, 20 memory). A: nominal (4, 8); B: nominal (4, 4), limit (6, 5), so a
    borrowing limit of (2, 1); C: no nominal quota, weight 2."""
    return QueueTree(
        ids=("A", "B", "C"),
        parent=np.array([-1, -1, -1]),
        weight=np.array([1.0, 1.0, 2.0]),
        guarantee=np.array([[4.0, 8.0], [4.0, 4.0], [0.0, 0.0]]),
        guaranteed=np.array([True, True, False]),
        limit=np.array([[INF, INF], [6.0, 5.0], [INF, INF]]),
        user_queue=np.array([], dtype=int),
    )


def test_drs_and_available_quota_with_lending_and_borrowing_limits() -> None:
    """A lends (1, 2) of its (4, 8) (lending limit 10 % of the pool), so it keeps (3, 6). The
    cohort's own quota is the pool less the nominal quotas, (2, 8); what it can lend is that
    plus what the queues lend: (2 + 1 + 4, 8 + 2 + 4) = (7, 14). With usages A (5, 6), B (5, 4)
    and C (0, 7), the queues store (2, 0) + (5, 4) + (0, 7) = (7, 11) in the cohort.
    DRS: A borrows 1 CPU: 1/7 x 1000 = 142.857...; B the same; C borrows 7 memory of 14, 500,
    over its weight 2: 250. Available: the cohort has (0, 3) free; B may borrow at most 1 more
    memory (its borrowing limit 1, and it uses its nominal 4), so B gets (0, 1)."""
    sched = KueueFair(queues=_tree(), lending_limit_share={"A": [0.1, 0.1]})
    sched.bind(ClusterState(np.array([[10.0, 20.0]]), ("cpu", "mem")).view())
    assert sched.lendable_.tolist() == [7.0, 14.0]
    assert sched.cqs_[0].local.tolist() == [3.0, 6.0]
    for c, use in enumerate(([5.0, 6.0], [5.0, 4.0], [0.0, 7.0])):
        sched._add(c, np.array(use))
    assert sched.cohort_use_.tolist() == [7.0, 11.0]
    assert sched.drs(0) == (True, round(1000 / 7, 9))
    assert sched.drs(1) == (True, round(1000 / 7, 9))
    assert sched.drs(2) == (True, 250.0)
    assert sched.drs(2, np.array([0.0, -7.0])) == (False, 0.0)
    assert sched.available(0).tolist() == [0.0, 3.0]
    assert sched.available(1).tolist() == [0.0, 1.0]
    assert sched.available(2).tolist() == [0.0, 3.0]


def test_flat_weights_of_the_tiers_tree() -> None:
    """google-tiers' tree: production 1; shared 2 holding batch (4) and free (1)."""
    tree = QueueTree(
        ids=("production", "shared", "batch", "free"),
        parent=np.array([-1, -1, 1, 1]),
        weight=np.array([1.0, 2.0, 4.0, 1.0]),
        guarantee=np.zeros((4, 2)),
        guaranteed=np.zeros(4, dtype=bool),
        limit=np.full((4, 2), INF),
        user_queue=np.array([], dtype=int),
    )
    assert flat_weights(tree).tolist() == [1.0, 2.0, 1.6, 0.4]


def _reclaim(**params: object) -> dict:
    """One server (1, 1). Queue batch (no nominal quota) starts four quarter tasks of 100 s;
    queue prod (nominal half the pool) submits two quarter tasks of 20 s at 10 s."""
    return reclaim_config("kueue-reclaim", {"name": "kueue-fair", "label": "k", **params})


def test_a_guaranteed_queue_reclaims_its_nominal_quota() -> None:
    """batch borrows the whole pool from 1 s (the first cycle). At the cycle at 11 s prod's
    head stays within its nominal quota, so it preempts regardless of DRS: batch's most
    recently admitted task (3); one preemption per cycle, the preemptor admitted at the next
    (12 s), where prod's second task preempts task 2 and is admitted at 13 s. batch's tasks 2
    and 3 start again when prod's end (32 s, 33 s). Without reclaimWithinCohort nothing is
    evicted and prod waits for batch."""
    r = fairsim.simulate(_reclaim(reclaim_within_cohort="Any"))["k"]
    t = r.tasks.sort_values(["user", "task_index"])
    assert t["start_s"].tolist() == [1.0, 1.0, 32.0, 33.0, 12.0, 13.0]
    assert t["finish_s"].tolist() == [101.0, 101.0, 132.0, 133.0, 32.0, 33.0]
    assert t["evictions"].tolist() == [0, 0, 1, 1, 0, 0]
    p = r.summary["preemption"]
    assert (p["evictions"], p["tasks_evicted"], p["run_s_lost"]) == (2, 2, 21.0)
    assert p["work_lost"] == {"cpu": 5.25, "mem": 5.25}
    assert r.summary["preemption_loops"]["count"] == 0
    r = fairsim.simulate(_reclaim())["k"]
    t = r.tasks.sort_values(["user", "task_index"])
    assert t["start_s"].tolist() == [1.0, 1.0, 1.0, 1.0, 101.0, 101.0]
    assert int(t["evictions"].sum()) == 0


def _issue_3779() -> dict:
    """kubernetes-sigs/kueue #3779 in units of 50m: a cohort of 300m (nominal 0), guaranteed
    tenants A and B of 150m each, best-effort of 0. A1 (250m) admitted, then BestEffort1
    (50m), then A2 (50m) arrives."""

    def u(name: str, join: float, size: float) -> dict:
        return {"name": name, "join_s": join, "demand": [size, size], "tasks": 1, "run_s": 100}

    return {
        "name": "kueue-3779",
        "trace": {"format": "inline", "users": [u("a1", 0, 5), u("be1", 1.5, 1), u("a2", 2.5, 1)]},
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [6.0, 6.0]}]},
        "queues": [
            {"id": "tenant-a", "guarantee_share": [0.5, 0.5]},
            {"id": "tenant-b", "guarantee_share": [0.5, 0.5]},
            {"id": "best-effort"},
        ],
        "leaves": {
            "by": "user",
            "users": {"a1": "tenant-a", "a2": "tenant-a", "be1": "best-effort"},
        },
        "schedulers": [
            {
                "name": "kueue-fair",
                "label": "k",
                "reclaim_within_cohort": "Any",
                "within_cluster_queue": "LowerOrNewerEqualPriority",
            }
        ],
        "collect": {"utilization_interval_s": 10, "horizon_s": 400},
    }


def test_issue_3779_does_not_loop() -> None:
    """With A2, tenant A would borrow 150m of the 300m the cohort lends: DRS 500; best-effort
    holds 50m: 166.67, 0 without BestEffort1. Neither strategy lets A2 preempt (500 <= 0 and
    500 < 166.67 are false) and A stays above its nominal quota: no eviction, no loop; A2
    starts when A1 ends (101 s). The loop of #3779 came from borrowWithinCohort overriding the
    DRS check, which Kueue no longer applies with fair sharing (PR #4165)."""
    r = fairsim.simulate(_issue_3779())["k"]
    t = r.tasks.sort_values("submit_s")
    assert t["start_s"].tolist() == [1.0, 2.0, 101.0]
    assert int(t["evictions"].sum()) == 0
    assert r.summary["preemption"]["evictions"] == 0
    assert r.summary["preemption_loops"]["count"] == 0


def _issue_14543(weight_t: float = 2.0, **params: object) -> dict:
    """#14543's pattern on a pool of 10: queues P and T, nominal 5 each, T of weight 2. T runs
    tb (2) and ta waits (5); P's x (4, submitted 1.5 s) waits behind p1 and p2 (1 each,
    submitted later, admitted at 3 s); tq (T, 3) and p0 (P, 3) end at 11 s."""

    def u(name: str, join: float, size: float, run: float) -> dict:
        return {"name": name, "join_s": join, "demand": [size, size], "tasks": 1, "run_s": run}

    users = {"tb": "T", "tq": "T", "ta": "T", "p0": "P", "x": "P", "p1": "P", "p2": "P"}
    return {
        "name": "kueue-14543",
        "trace": {
            "format": "inline",
            "users": [
                u("tb", 0, 2, 1000),
                u("tq", 0, 3, 10),
                u("ta", 0, 5, 1000),
                u("p0", 0, 3, 10),
                u("x", 1.5, 4, 100),
                u("p1", 2.5, 1, 1000),
                u("p2", 2.5, 1, 1000),
            ],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [10.0, 10.0]}]},
        "queues": [
            {"id": "P", "guarantee_share": [0.5, 0.5]},
            {"id": "T", "guarantee_share": [0.5, 0.5], "weight": weight_t},
        ],
        "leaves": {"by": "user", "users": users},
        "schedulers": [
            {
                "name": "kueue-fair",
                "label": "k",
                "reclaim_within_cohort": "Any",
                "within_cluster_queue": "LowerOrNewerEqualPriority",
                **params,
            }
        ],
        "collect": {"utilization_interval_s": 10, "horizon_s": 60},
    }


def _starts(r: fairsim.RunResult) -> dict[str, float]:
    return dict(zip(r.tasks["user"], r.tasks["start_s"], strict=True))


def test_issue_14543_loops_with_both_strategies() -> None:
    """At 11 s ta (T: 7 of nominal 5, DRS 2/10 x 1000 / 2 = 100) ties with x (P: 6, DRS 100)
    and is older: it is admitted. x then preempts: T (DRS 100) is tried first, but S2-a fails
    for ta and tb (100 <= 0 is false); in P, x's newer p1 and p2 go (P's DRS falls to 0), still
    no room; S2-b then passes for ta (0 < 100). fillBackWorkloads puts p1 and p2 back: ta alone
    is evicted, though P with them is at DRS 100 again. At the next cycle ta is admitted first
    again: ta is evicted at every cycle (11-60 s: 50 times), x never starts, and the run finds
    the loop at 13 s (3 evictions within 600 s)."""
    r = fairsim.simulate(_issue_14543())["k"]
    ev = dict(zip(r.tasks["user"], r.tasks["evictions"], strict=True))
    assert ev["ta"] == 50 and sum(ev.values()) == 50
    assert math.isnan(_starts(r)["x"]) and math.isnan(_starts(r)["ta"])
    loops = r.summary["preemption_loops"]
    assert (loops["count"], loops["first_s"], loops["examples"]) == (1, 13.0, [[2, 0]])


@pytest.mark.parametrize(
    ("weight_t", "params", "evictions", "x_start"),
    [
        # either strategy alone: no preemption (S2-a fails for T, P's own tasks do not free
        # enough; S2-b as the only strategy: 100 < 100 is false); ta is admitted at 11 s
        (2.0, {"preemption_strategies": ["LessThanOrEqualToFinalShare"]}, 0, math.nan),
        (2.0, {"preemption_strategies": ["LessThanInitialShare"]}, 0, math.nan),
        # T of weight 1: ta's DRS would be 200, so x goes first and fits at 11 s
        (1.0, {}, 0, 11.0),
        # PrioritizePreemptorWorkloads: x, having preempted, goes first at 12 s
        (2.0, {"prioritize_preemptors": True}, 1, 12.0),
    ],
)
def test_issue_14543_without_the_loop(
    weight_t: float, params: dict, evictions: int, x_start: float
) -> None:
    r = fairsim.simulate(_issue_14543(weight_t, **params))["k"]
    assert r.summary["preemption"]["evictions"] == evictions
    assert r.summary["preemption_loops"]["count"] == 0
    assert _starts(r)["x"] == x_start or (math.isnan(x_start) and math.isnan(_starts(r)["x"]))


def test_conformance_with_evictions() -> None:
    """Every check of the conformance suite with both preemption policies on (without a tree
    each user is a ClusterQueue of nominal quota 0, so the suite's workloads preempt)."""
    check_scheduler(
        {
            "name": "kueue-fair",
            "reclaim_within_cohort": "Any",
            "within_cluster_queue": "LowerOrNewerEqualPriority",
        }
    )


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (
            {"preemption_strategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]},
            r"^kueue-fair: preemption_strategies: \[LessThanInitialShare, "
            r"LessThanOrEqualToFinalShare\] \(supported: \[LessThanOrEqualToFinalShare\], "
            r"\[LessThanInitialShare\], \[LessThanOrEqualToFinalShare, LessThanInitialShare\]\)$",
        ),
        (
            {"within_cluster_queue": "Any"},
            r"^kueue-fair: within_cluster_queue: 'Any' \(Input should be 'Never', "
            r"'LowerPriority' or 'LowerOrNewerEqualPriority'\)$",
        ),
        ({"cycle_s": 0}, r"^kueue-fair: cycle_s: 0 \(Input should be greater than 0\)$"),
        (
            {"lending_limit_share": {"D": [0.1, 0.1]}},
            r"^kueue-fair: lending_limit_share: unknown queue 'D' \(queues: A, B, C\)$",
        ),
        (
            {"lending_limit_share": {"A": [1.5, 0.1]}},
            r"^kueue-fair: lending_limit_share: A: \[1\.5, 0\.1\] \(expected fractions of the "
            r"pool in \[0, 1\]\)$",
        ),
    ],
)
def test_a_bad_parameter_is_one_line(params: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make_scheduler({"name": "kueue-fair", "label": "k", **params}, queues=_tree())


def test_a_lending_limit_above_the_guarantee_is_one_line() -> None:
    sched = KueueFair(queues=_tree(), lending_limit_share={"B": [0.5, 0.1]})
    with pytest.raises(
        ConfigError,
        match=r"^kueue-fair: lending_limit_share: B: \[0\.5, 0\.1\] \(above the queue's "
        r"guarantee: a lendingLimit is at most the nominal quota\)$",
    ):
        sched.bind(ClusterState(np.array([[10.0, 20.0]]), ("cpu", "mem")).view())
