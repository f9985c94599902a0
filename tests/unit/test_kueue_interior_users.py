"""kueue-fair with users in a queue with children (a cohort, which holds no workloads in
Kueue): refused before any run in one line (a ``KeyError: 0`` from ``KueueFair._cq`` before).
Any scheduler class that declares ``leaf_queues_only = True`` gets the same check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import LeafRule
from fairsim.scenario.queues import check_cluster_queues
from fairsim.schedulers.drfh import FirstFitDRFH
from fairsim.schedulers.exact.instance import parse_queues
from fairsim.schedulers.registry import unregister_scheduler

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


class LeafOnly(FirstFitDRFH):
    """A plug-in that, as kueue-fair, serves only the users of leaf queues and of the root."""

    name = "leaf-only"
    leaf_queues_only = True


@pytest.fixture
def leaf_only() -> Iterator[None]:
    fairsim.register_scheduler("leaf-only")(LeafOnly)
    try:
        yield
    finally:
        unregister_scheduler("leaf-only")


def test_a_plugin_declaring_leaf_queues_only_gets_the_check(
    tmp_path: Path, leaf_only: None
) -> None:
    cfg = {**_config({"by": "user", "users": {"a": "P"}}), "schedulers": ["hdrf", "leaf-only"]}
    with pytest.raises(ConfigError) as err:
        fairsim.simulate(cfg, out=tmp_path / "out")
    assert str(err.value).startswith("leaf-only: leaves.users: a: queue 'P' has children")
    assert not (tmp_path / "out" / "hdrf").exists()  # refused before any run
    # the base class's default: a scheduler that does not declare it runs with users in 'P'
    assert not fairsim.Scheduler.leaf_queues_only and not FirstFitDRFH.leaf_queues_only
    r = fairsim.simulate({**cfg, "schedulers": ["hdrf", "ff-drfh"]})["ff-drfh"]
    assert r.summary["tasks_completed"] == 4
