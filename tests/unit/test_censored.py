"""Right-censored tasks (the trace ended while they ran) never count as completed, and mean
utilisation is the exact time integral over the window (worked examples)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.results import tables
from fairsim.simulator.workload import FrameTaskSource


def _frame(censored: list[bool]) -> pd.DataFrame:
    """Two users' tasks on a server that holds one at a time: A (run 10 s) then B (run 10 s)."""
    return pd.DataFrame(
        {
            "job_id": [1, 2],
            "task_index": [0, 0],
            "user": ["a", "b"],
            "submit_s": [0.0, 1.0],
            "cpu": [0.8, 0.8],
            "mem": [0.5, 0.5],
            "run_s": [10.0, 10.0],
            "censored": censored,
        }
    )


def _run(frame: pd.DataFrame, rule: str = "hold", horizon: float = 100.0):
    engine = Engine(
        ClusterState(np.array([[1.0, 1.0]]), ("cpu", "mem")),
        make_scheduler("ff-drfh"),
        FrameTaskSource(frame),
        horizon_s=horizon,
        utilization_interval_s=60.0,
        censored=rule,
    )
    return engine.run()


def test_a_censored_task_never_completes_and_holds_its_server() -> None:
    r = _run(_frame([True, False]))
    t = tables(r)["tasks"].to_pandas()
    assert list(t["ended"]) == ["censored", "queued"]
    assert t["start_s"].tolist()[0] == 0.0 and t["finish_s"].isna().all()
    assert np.isnan(t["start_s"].tolist()[1])  # B waits behind A to the horizon
    users = tables(r)["users"].to_pandas()
    assert users["tasks_completed"].tolist() == [0, 0]
    jobs = tables(r)["jobs"].to_pandas()
    assert jobs["completion_time_s"].isna().all()
    # A holds 0.8 CPU and 0.5 memory from 0 to the horizon (100 s)
    np.testing.assert_allclose(r.mean_utilization, [0.8, 0.5])


def test_the_older_rule_lets_it_complete() -> None:
    r = _run(_frame([True, False]), rule="complete")
    t = tables(r)["tasks"].to_pandas()
    assert list(t["ended"]) == ["finished", "finished"]
    assert t["finish_s"].tolist() == [10.0, 20.0]
    assert r.censored_rule == "complete"


def test_uncensored_tasks_finish_and_a_finish_at_the_horizon_counts() -> None:
    r = _run(_frame([False, False]), horizon=20.0)
    t = tables(r)["tasks"].to_pandas()
    assert list(t["ended"]) == ["finished", "finished"]  # B ends at exactly 20 s
    r = _run(_frame([False, False]), horizon=19.0)
    assert list(tables(r)["tasks"].to_pandas()["ended"]) == ["finished", "running"]


def test_mean_utilisation_is_the_time_integral_not_the_grid_mean() -> None:
    # busy 0.8 CPU from 0 to 20 s, idle to 100 s: 0.16; the grid (0, 60 s) would say 0.4
    r = _run(_frame([False, False]))
    np.testing.assert_allclose(r.mean_utilization, [0.8 * 20 / 100, 0.5 * 20 / 100])
    assert r.utilization[:, 1].mean() == pytest.approx(0.4)


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match=r"censored: 'drop' \(expected one of hold, complete\)"):
        _run(_frame([False, False]), rule="drop")


def test_an_infinite_horizon_with_a_held_censored_task_is_refused() -> None:
    with pytest.raises(ValueError, match=r"task 0 is right-censored .* the horizon is infinite"):
        _run(_frame([True, False]), horizon=float("inf"))
    r = _run(_frame([True, False]), rule="complete", horizon=float("inf"))
    assert r.horizon_s == 20.0  # the last event
