"""kueue-fair with users in a queue with children (a cohort, which holds no workloads in
Kueue): refused before any run in one line (a ``KeyError: 0`` from ``KueueFair._cq`` before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import LeafRule
from fairsim.scenario.queues import check_cluster_queues
from fairsim.schedulers.exact.instance import parse_queues

QUEUES = [{"id": "P"}, {"id": "C", "parent": "P"}]


def _config(leaves: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "kint",
        "trace": {
            "format": "inline",
            "users": [
                {"name": n, "join_s": 0, "demand": [0.25, 0.25], "tasks": 2, "run_s": 100}
                for n in ("a", "b")
            ],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": ["hdrf", "kueue-fair"],
        "queues": QUEUES,
        "leaves": leaves,
        "collect": {"utilization_interval_s": 50},
    }


@pytest.mark.parametrize(
    ("leaves", "field"),
    [
        ({"by": "user", "users": {"a": "P", "b": "C"}}, "leaves.users: a"),
        ({"by": "user", "users": {"b": "C"}, "default": "P"}, "leaves.default"),
    ],
)
def test_users_in_a_queue_with_children_are_refused(
    tmp_path: Path, leaves: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as err:
        fairsim.simulate(_config(leaves), out=tmp_path / "out")
    assert str(err.value) == (
        f"kueue-fair: {field}: queue 'P' has children (only a leaf queue is a ClusterQueue: "
        "users go to leaf queues or the root)"
    )
    assert not (tmp_path / "out" / "hdrf").exists()  # refused before any run


def test_a_tier_in_a_queue_with_children_is_refused() -> None:
    tree = parse_queues(QUEUES, [], ["cpu", "mem"], np.ones(2))
    assert tree is not None
    rule = LeafRule(by="tier", tiers={"C": "free", "P": "production"})
    with pytest.raises(ConfigError, match=r"^kueue-fair: leaves.tiers: P: queue 'P' has"):
        check_cluster_queues(rule, tree, ["kueue-fair"])
    check_cluster_queues(rule, tree, [])  # no kueue-fair: nothing to check


def test_users_in_leaves_and_at_the_root_run() -> None:
    r = fairsim.simulate(_config({"by": "user", "users": {"b": "C"}}))["kueue-fair"]
    assert r.summary["tasks_completed"] == 4
