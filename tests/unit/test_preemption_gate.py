"""A scheduler that may preempt and a job gate (DAG parents, repetitions, a job queue): refused
before any run when its parameters let it evict, run in the ordinary event loop when they do not
(``Scenario.check_gate_preemption``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fairsim
from fairsim.errors import ConfigError


def _config(*schedulers: Any) -> dict[str, Any]:
    return {
        "name": "gate",
        "trace": {
            "format": "inline",
            "repetitions": 2,
            "users": [{"name": "a", "join_s": 0, "demand": [0.25, 0.25], "tasks": 2, "run_s": 10}],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": list(schedulers),
        "collect": {"utilization_interval_s": 10},
    }


def test_schedulers_that_never_evict_run_with_a_job_gate() -> None:
    results = fairsim.simulate(_config("ff-drfh", "yarn-fair", "kueue-fair"))
    for name in ("yarn-fair", "kueue-fair"):
        s = results[name].summary
        assert s["tasks_completed"] == 4 and s["jobs_completed"] == 1
        assert "preemption" not in s  # the ordinary event loop: no eviction record
    assert results["yarn-fair"].summary["mean_jct_s"] == 10.0
    assert results["kueue-fair"].summary["mean_jct_s"] == 11.0  # admitted at the 1-s cycle


@pytest.mark.parametrize(
    ("entry", "label"),
    [
        ({"name": "kueue-fair", "reclaim_within_cohort": "Any"}, "kueue-fair-Any"),
        ({"name": "yarn-fair", "fair_share_preemption_timeout_s": 30, "label": "y"}, "y"),
    ],
)
def test_a_scheduler_that_may_evict_is_refused_before_any_run(
    tmp_path: Path, entry: dict[str, Any], label: str
) -> None:
    with pytest.raises(ConfigError) as err:
        fairsim.simulate(_config("ff-drfh", entry), out=tmp_path / "out")
    assert str(err.value) == (
        f"schedulers: {label!r} may evict tasks (its parameters turn preemption on), which is "
        "not supported with a job gate (trace.repetitions); turn its preemption off or "
        "remove the gate"
    )
    assert not (tmp_path / "out" / "ff-drfh").exists()  # nothing was simulated
