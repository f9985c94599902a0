"""Per-queue fairness over time: at an instant with no task present the reference (exact
H-DRF) allocates nothing, as the online scheduler holds nothing, so the time averages of the
two are over the same instants (``FairnessProbe._measure_queues``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import fairsim

CONFIG = {
    "name": "fav",
    "trace": {
        "format": "inline",
        "users": [{"name": "a", "join_s": 0, "demand": [0.5, 0.5], "tasks": 2, "run_s": 100}],
    },
    "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
    "schedulers": ["hdrf"],
    "queues": [{"id": "A"}],
    "leaves": {"by": "user", "default": "A"},
    "collect": {"utilization_interval_s": 50, "horizon_s": 400, "fairness": {"interval_s": 50}},
}


def test_a_queue_with_nothing_present_has_reference_zero(tmp_path: Path) -> None:
    r = fairsim.simulate(CONFIG, out=tmp_path)["hdrf"]
    q = r.summary["fairness"]["queues"]["A"]
    # the tasks run from 0 to 100 s: 2 of the 9 instants (0, 50, ..., 400) hold the pool
    assert q["dominant_share"] == q["reference_dominant_share"] == 2 / 9
    assert q["deficit"] == 0.0
    fq = pd.read_parquet(tmp_path / "hdrf" / "fairness_queues.parquet")
    assert fq["reference_dominant_share"].tolist() == [1.0, 1.0] + [0.0] * 7
    assert fq["deficit"].tolist() == [0.0] * 9
