"""drf-classes (the UDRF paper's DRF baseline: machine classes as resource types): examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.workload import FrameTaskSource


def _run(name: str) -> pd.DataFrame:
    # servers: 0 = small class (0.5, 0.5), 1 = big class (1, 1); every task is (0.1, 0.1), 100 s.
    # User A fills the small server at t=0 (5 tasks); at t=1 A and B each submit 10 more.
    rows = [("A", 0.0)] * 5 + [("A", 1.0)] * 10 + [("B", 1.0)] * 10
    frame = pd.DataFrame(
        {
            "job_id": [0 if u == "A" else 1 for u, _ in rows],
            "task_index": np.arange(len(rows), dtype=np.int32),
            "user": [u for u, _ in rows],
            "submit_s": [t for _, t in rows],
            "cpu": 0.1,
            "mem": 0.1,
            "run_s": 100.0,
        }
    )
    cluster = ClusterState(np.array([[0.5, 0.5], [1.0, 1.0]]), ("cpu", "mem"))
    r = Engine(cluster, make_scheduler(name), FrameTaskSource(frame), horizon_s=50.0).run()
    return pd.DataFrame({"user": frame["user"], "server": r.tasks["server"]})


@pytest.mark.parametrize(("name", "a_on_big", "b_on_big"), [("drf-classes", 0, 10), ("drf", 3, 7)])
def test_classes_as_resource_types(name: str, a_on_big: int, b_on_big: int) -> None:
    # drf-classes: A holds all of the small class (share 0.5 / 0.5 = 1), so B, whose share of the
    # big class stays below 1 up to its 10th task, takes every slot of the big server.
    # drf (pooled, 1.5 of each resource): B catches up to A's 0.5 / 1.5 after 5 tasks, then the
    # two alternate with ties to A (lower user code): A gets slots 6, 8, 10 -> 3, B gets 7.
    placed = _run(name)
    big = placed[placed["server"] == 1]["user"].value_counts()
    assert (big.get("A", 0), big.get("B", 0)) == (a_on_big, b_on_big)
    assert (placed.loc[:4, "server"] == 0).all()  # A's first five on the small server


def test_single_class_is_pooled_drf() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "job_id": rng.integers(0, 4, 60),
            "task_index": np.arange(60, dtype=np.int32),
            "user": [f"u{i}" for i in rng.integers(0, 4, 60)],
            "submit_s": np.sort(rng.uniform(0, 50, 60)),
            "cpu": rng.choice([0.1, 0.2, 0.3], 60),
            "mem": rng.choice([0.1, 0.2, 0.3], 60),
            "run_s": rng.uniform(5, 30, 60),
        }
    )
    out = {}
    for name in ("drf", "drf-classes"):
        cluster = ClusterState(np.ones((3, 2)), ("cpu", "mem"))
        out[name] = Engine(cluster, make_scheduler(name), FrameTaskSource(frame)).run().tasks
    assert np.array_equal(out["drf"]["server"], out["drf-classes"]["server"])
    assert np.array_equal(out["drf"]["start_s"], out["drf-classes"]["start_s"])
