"""An inline scenario without a horizon runs until every task is done: its utilisation interval
is not checked against the window up to the last submission (users joining at 0 s and 1 s with
10 s tasks were refused an interval of 5 s as 'longer than the simulated window of 1 s')."""

from __future__ import annotations

from typing import Any

import pytest

import fairsim
from fairsim.errors import ConfigError


def _config(interval: float) -> dict[str, Any]:
    return {
        "name": "inline-window",
        "trace": {
            "format": "inline",
            "users": [
                {"name": "a", "join_s": 0, "tasks": 3, "demand": [0.5, 0.5], "run_s": 10},
                {"name": "b", "join_s": 1, "tasks": 3, "demand": [0.5, 0.5], "run_s": 10},
            ],
        },
        "cluster": {"classes": [{"name": "x", "count": 1, "capacity": [1, 1]}]},
        "schedulers": ["drf"],
        "collect": {"utilization_interval_s": interval},
    }


def test_interval_longer_than_the_submissions_is_accepted() -> None:
    r = fairsim.simulate(_config(5))["drf"]
    assert r.summary["horizon_s"] == 30.0
    assert r.utilization["time_s"].tolist() == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    assert r.utilization["cpu"].tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]


def test_the_cap_on_samples_still_applies() -> None:
    with pytest.raises(ConfigError) as err:
        fairsim.simulate(_config(1e-9))
    assert str(err.value) == (
        "config: collect.utilization_interval_s: 1e-09 s gives 1,000,000,000 utilisation "
        "samples over 1 s, more than the 10,000,000 a run may record (mean utilisation is exact "
        "at any interval; 1.1e-07 s stays within)"
    )
