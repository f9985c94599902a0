"""Queues in a scenario: the tree and the leaf rule in the config (one definition of a queue tree
and its errors, shared with ``fairsim solve hdrf``), a flat config unchanged, the per-queue rows
of a run and the fairness reference of a hierarchical run (docs/queues.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.pipeline import prepare_scenario
from fairsim.scenario.queues import queue_table
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.traces.io import write_tasks

TIERS = {"by": "tier", "tiers": {"prod": "production", "batch": "middle", "free": "free"}}
TREE = [{"id": "prod", "guarantee_share": [0.5, 0.5]}, {"id": "batch"}, {"id": "free"}]


def _cfg(**over: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "name": "t",
        "trace": {"format": "google-2011", "path": "x"},
        "schedulers": ["hdrf"],
        "queues": TREE,
        "leaves": TIERS,
    }
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v is not None}


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (
            {"queues": [{"id": "A", "parent": "B"}, {"id": "B", "parent": "A"}]},
            r"^config: queues\[0\]\.parent: queue 'A' is its own ancestor \(A -> B -> A\)$",
        ),
        (
            {"queues": [{"id": "A", "weight": 0}]},
            r"^config: queues\[0\]\.weight: 0 \(expected a finite number > 0\)$",
        ),
        (
            {"queues": [{"id": "A", "parent": "X"}]},
            r"^config: queues\[0\]\.parent: unknown queue 'X' for queue 'A' \(known: A\)$",
        ),
        (
            {"queues": [{"id": "A", "guarantee_share": [0.5, 1.5]}]},
            r"^config: queues\[0\]\.guarantee_share\[1\]: 1\.5 \(expected a fraction of the "
            r"pool, at most 1\)$",
        ),
        (
            {"queues": [{"id": "A", "guarantee": [1.0]}]},
            r"^config: queues\[0\]\.guarantee: has 1 entries, expected 2 \(one per resource\)$",
        ),
        (
            {"leaves": {"by": "tier", "tiers": {"prod": "midle"}}},
            r"^config: leaves\.tiers\.prod: unknown tier 'midle' \(known: free, middle, "
            r"production, or \[lo, hi\] priorities with 0 <= lo <= hi\)$",
        ),
        (
            {"leaves": {"by": "tier", "tiers": {"gold": "production"}}},
            r"^config: leaves\.tiers: unknown queue 'gold' \(known: prod, batch, free\)$",
        ),
        (
            {"leaves": {"by": "tier", "tiers": {"prod": [8, 11], "batch": "middle"}}},
            r"^config: leaves\.tiers: priority 8 is in the bands of both 'prod' and 'batch'$",
        ),
        (
            {"leaves": {"by": "user", "users": {"u1": "gold"}}},
            r"^config: leaves\.users\.u1: unknown queue 'gold' \(known: prod, batch, free\)$",
        ),
        (
            {"leaves": {"by": "user", "tiers": {"prod": "free"}}},
            r"^config: leaves\.tiers: not a key of 'by: user'$",
        ),
        ({"leaves": None}, r"^config: leaves: required with queues \(how tasks reach"),
        ({"queues": None}, r"^config: queues: required with leaves \(the tree the leaves"),
    ],
)
def test_bad_trees_are_one_line_errors_naming_the_node(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(_cfg(**over))
    assert "\n" not in str(info.value)


def test_a_flat_config_is_written_and_hashed_as_before() -> None:
    """No tree: the resolved config and its hash do not name the new keys (every earlier
    result's config.yaml and config_hash stay the same)."""
    flat = {"name": "t", "trace": {"format": "synthetic", "n_tasks": 10}, "schedulers": ["drf"]}
    cfg = parse_config(flat)
    assert "queues" not in cfg.to_yaml() and "leaves" not in cfg.to_yaml()
    assert cfg.config_hash() == "625f99edb41a579b"  # main's hash of the same config
    tree = parse_config({**flat, "queues": [{"id": "a"}], "leaves": {"by": "user"}})
    assert "queues" in tree.to_yaml() and tree.config_hash() != cfg.config_hash()


def _frame(rows: list[tuple[str, int, int, float, float, float, float, int]]) -> pd.DataFrame:
    """(user, job, task, submit, cpu, mem, run, priority) rows as a canonical tasks table."""
    f = pd.DataFrame(
        rows,
        columns=["user", "job_id", "task_index", "submit_s", "cpu", "mem", "run_s", "priority"],
    )
    f["end_state"], f["attempts"], f["instances"] = "finish", 1, 1
    f["constraint"], f["parents"] = None, None
    return f.sort_values(["submit_s", "job_id", "task_index"], kind="stable")


def _hand(tmp_path: Path) -> dict[str, Any]:
    """One server (1, 1). Production: u1's job 1 (two tasks of (0.5, 0.2), 100 s) at 0.
    Batch: u2's job 2 (one task of (0.5, 0.5), 100 s) at 0 and job 3 (one task, 50 s) at 10."""
    rows = [
        ("u1", 1, 0, 0.0, 0.5, 0.2, 100.0, 9),
        ("u1", 1, 1, 0.0, 0.5, 0.2, 100.0, 9),
        ("u2", 2, 0, 0.0, 0.5, 0.5, 100.0, 4),
        ("u2", 3, 0, 10.0, 0.5, 0.5, 50.0, 4),
    ]
    write_tasks(_frame(rows), tmp_path / "tasks.parquet")
    return {
        "name": "hand",
        "trace": {"format": "canonical", "path": str(tmp_path)},
        "cluster": {"classes": [{"name": "s", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": ["hdrf", "drf"],
        "queues": [{"id": "prod"}, {"id": "batch"}, {"id": "free"}],
        "leaves": TIERS,
        "collect": {"utilization_interval_s": 10, "horizon_s": 400, "fairness": {"interval_s": 5}},
    }


def test_per_queue_rows_of_a_hand_run(tmp_path: Path) -> None:
    """hdrf: u1's first task and u2's job 2 start at 0 (the queues alternate); u1's second
    task waits for one of them (100 s), job 3 for the other (100 s, then 50 s). drf, over the
    users: the same here. queues.parquet gives each tier's tasks, jobs, JCT and waits."""
    res = fairsim.simulate(_hand(tmp_path))
    for name in ("hdrf", "drf"):
        q = res[name].queues.set_index("queue")
        assert list(q.index) == ["prod", "batch"]  # free received no task
        assert q.loc["prod", ["users", "tasks", "tasks_started", "tasks_completed"]].tolist() == [
            1, 2, 2, 2,
        ]  # fmt: skip
        assert q.loc["prod", "jobs"] == 1 and q.loc["prod", "mean_jct_s"] == 200.0
        assert q.loc["prod", "mean_queueing_s"] == 50.0  # (0 + 100) / 2
        assert q.loc["batch", "jobs"] == 2 and q.loc["batch", "mean_jct_s"] == 120.0  # 100, 140
        assert q.loc["batch", "mean_queueing_s"] == 45.0  # (0 + 90) / 2
        assert q.loc["batch", "p95_queueing_s"] == pytest.approx(85.5)
        f = res[name].fairness_queues
        at = f[f["time_s"] == 50.0].set_index("queue")
        # at 50 s: prod runs 1 task and waits for 1, batch runs job 2 and waits for job 3
        assert at.loc["prod", ["tasks_running", "tasks_waiting"]].tolist() == [1, 1]
        assert at.loc["prod", "dominant_share"] == 0.5
        assert at.loc["batch", "dominant_share"] == 0.5
        assert not at["holds_nothing"].any()
        summary = res[name].summary["fairness"]
        assert summary["reference"] == "hdrf"
        assert summary["queues"]["free"]["waiting_instants"] == 0


def test_the_reference_of_a_hierarchical_run_is_exact_hdrf_on_the_leaves(tmp_path: Path) -> None:
    """Every instant's reference shares are the exact hdrf of the leaves (mean demand, tasks
    present) on the pool, in the tree; a flat scheduler of the same scenario is measured against
    it too."""
    res = fairsim.simulate(_hand(tmp_path))
    for name in ("hdrf", "drf"):
        rows = res[name].fairness
        at = rows[rows["time_s"] == 50.0]
        inst = parse_instance(
            {
                "resources": ["cpu", "mem"],
                "servers": [{"id": "s", "capacity": [1.0, 1.0]}],
                "queues": [{"id": "prod"}, {"id": "batch"}, {"id": "free"}],
                "users": [
                    {"id": f"{r.user}/{r.queue}", "demand": [r.demand_cpu, r.demand_mem],
                     "max_tasks": r.tasks_running + r.tasks_waiting, "queue": r.queue}
                    for r in at.itertuples()
                ],
            }
        )  # fmt: skip
        x = solve_exact("hdrf", inst)[:, 0]
        want = (x[:, None] * inst.demand).max(axis=1)
        np.testing.assert_allclose(at["reference_dominant_share"], want, rtol=1e-12)
        assert list(at["queue"]) == ["prod", "batch"]


def test_a_priority_in_no_band_is_refused_before_the_run(tmp_path: Path) -> None:
    cfg = _hand(tmp_path)
    cfg["leaves"] = {"by": "tier", "tiers": {"prod": "production", "free": "free"}}
    with pytest.raises(
        ConfigError,
        match=r"^leaves\.tiers: 2 task\(s\) have priority 4, in no queue's band; e\.g\. task 0 of "
        r"job 2 \(bands: prod 9-11, free 0-1\)$",
    ):
        prepare_scenario(parse_config(cfg))
    cfg["leaves"] = {"by": "user", "users": {"u1": "prod", "u9": "batch"}}
    with pytest.raises(ConfigError, match=r"^leaves\.users: unknown user\(s\) 'u9': no task"):
        prepare_scenario(parse_config(cfg))
    cfg["leaves"] = TIERS
    cfg["queues"] = [{"id": "prod", "guarantee": [2.0, 0.0]}, {"id": "batch"}, {"id": "free"}]
    with pytest.raises(
        ConfigError,
        match=r"^config: queues\[0\]\.guarantee\[0\]: queue 'prod' is guaranteed 2 of 'cpu', "
        r"above the pool's 1$",
    ):
        prepare_scenario(parse_config(cfg))


def test_by_tier_needs_priorities() -> None:
    cfg = {
        "name": "t",
        "trace": {"format": "synthetic", "n_tasks": 50, "duration_s": 600},
        "cluster": {"servers": 5},
        "schedulers": ["hdrf"],
        "queues": [{"id": "prod"}],
        "leaves": {"by": "tier", "tiers": {"prod": "production"}},
    }
    with pytest.raises(ConfigError, match=r"^leaves: 'by: tier' needs each task's priority"):
        prepare_scenario(parse_config(cfg))


def test_queue_table_by_hand() -> None:
    """Jobs belong to the queue of their first task; statistics over what completed."""
    tasks = pd.DataFrame(
        {
            "job_id": [1, 1, 2, 3],
            "task_index": [1, 0, 0, 0],
            "user": ["a", "a", "b", "b"],
            "submit_s": [0.0, 0.0, 5.0, 5.0],
            "start_s": [10.0, 0.0, 5.0, np.nan],
            "finish_s": [20.0, 30.0, np.nan, np.nan],
        }
    )
    jobs = pd.DataFrame({"job_id": [1, 2, 3], "completion_time_s": [30.0, np.nan, np.nan]})
    t = queue_table(tasks, jobs, np.array([0, 1, -1, -1]), ["A", "B", "(root)"]).to_pandas()
    # job 1's first task (index 0) is in B: the job is B's
    assert t["queue"].tolist() == ["A", "B", "(root)"]
    assert t["jobs"].tolist() == [0, 1, 2]
    assert t["mean_jct_s"].isna().tolist() == [True, False, True]
    assert t.loc[1, "mean_jct_s"] == 30.0
    assert t["tasks_started"].tolist() == [1, 1, 1]
    assert t["mean_queueing_s"].tolist()[:2] == [10.0, 0.0]
    assert json.dumps(t["users"].tolist()) == "[1, 1, 1]"


@pytest.mark.parametrize(
    ("queues", "expected"),
    [
        # a limit of 0 of every resource: nothing can run in A (it only got "queue saturates")
        (
            [{"id": "A", "limit_share": [0, 0]}],
            [
                "queues[0].limit_share: [0, 0] leaves queue 'A' nothing of every resource: the "
                "tasks of its users (and of the queues below it) can never run"
            ],
        ),
        (
            [{"id": "A", "limit": [0, 0]}, {"id": "A1", "parent": "A"}],
            [
                "queues[0].limit: [0, 0] leaves queue 'A' nothing of every resource: the tasks of "
                "its users (and of the queues below it) can never run"
            ],
        ),
        # a limit of 0 of one resource binds only the tasks that demand it (docs/hdrf.md)
        ([{"id": "A", "limit_share": [None, 0]}], []),
        ([{"id": "A", "limit_share": [0.5, 0.5]}], []),
    ],
)
def test_a_queue_whose_limits_leave_it_nothing_is_a_warning(
    queues: list[dict[str, Any]], expected: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    from fairsim.scenario.queues import queue_tree

    data = {
        "name": "t",
        "trace": {
            "format": "inline",
            "users": [{"name": "a", "demand": [0.1, 0.1], "tasks": 2, "run_s": 1}],
        },
        "cluster": {"classes": [{"name": "s", "count": 2, "capacity": [1.0, 1.0]}]},
        "schedulers": ["hdrf"],
        "queues": queues,
        "leaves": {"by": "user", "default": queues[-1]["id"]},
    }
    cfg = parse_config(data)
    with caplog.at_level("WARNING", logger="fairsim.scenario.queues"):
        queue_tree(cfg, ("cpu", "mem"), np.array([2.0, 2.0]))
    assert [r.getMessage() for r in caplog.records] == expected
