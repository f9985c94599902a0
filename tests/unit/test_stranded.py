"""collect.stranded: free capacity on servers where no waiting user's head task fits, checked
by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairsim
from fairsim.errors import ConfigError


def hand(**collect: Any) -> dict[str, Any]:
    """Two servers of (1, 1). a's tasks (1.0, 0.1) and (0.7, 0.1) fill server 0 and leave
    (0.3, 0.9) free on server 1 for 100 s; b's head (0.5, 0.1), from 1 s, fits neither."""
    return {
        "name": "st",
        "trace": {
            "format": "inline",
            "users": [
                {"name": "a", "demand": [1.0, 0.1], "tasks": 1, "run_s": 100},
                {"name": "a2", "demand": [0.7, 0.1], "tasks": 1, "run_s": 100},
                {"name": "b", "join_s": 1, "demand": [0.5, 0.1], "tasks": 1, "run_s": 100},
            ],
        },
        "cluster": {"classes": [{"name": "s", "count": 2, "capacity": [1.0, 1.0]}]},
        "schedulers": ["ff-drfh"],
        "collect": {"utilization_interval_s": 10, "horizon_s": 300, **collect},
    }


def test_stranded_by_hand(tmp_path: Path) -> None:
    fairsim.simulate(hand(stranded=True), out=tmp_path / "run")
    folder = tmp_path / "run" / "ff-drfh"
    u = fairsim.load(tmp_path / "run")["ff-drfh"].utilization  # type: ignore[index]
    assert list(u.columns) == ["time_s", "cpu", "mem", "stranded_cpu", "stranded_mem"]
    waits = u["time_s"].between(10, 90)  # b waits from 1 s to 100 s
    # cpu: 0.3 of 2 free on server 1 (server 0 has none); mem: 0.9 + 0.9 of 2
    assert np.allclose(u.loc[waits, "stranded_cpu"], 0.15)
    assert np.allclose(u.loc[waits, "stranded_mem"], 0.9)
    assert u.loc[~waits, ["stranded_cpu", "stranded_mem"]].isna().all().all()
    s = json.loads((folder / "summary.json").read_text())
    assert s["stranded"] == pytest.approx({"cpu": 0.15, "mem": 0.9})
    assert s["stranded_samples"] == 9
    report = (tmp_path / "run" / "report.md").read_text()
    assert "- ff-drfh: CPU 15.0 %, memory 90.0 % (9 grid points with a waiting task)" in report


def test_off_leaves_the_utilization_columns() -> None:
    r = fairsim.simulate(hand())["ff-drfh"]
    assert list(r.utilization.columns) == ["time_s", "cpu", "mem"]
    assert "stranded" not in r.summary


def test_refused_with_a_job_gate() -> None:
    cfg = {
        "name": "st",
        "trace": {"format": "synthetic", "n_tasks": 100, "duration_s": 3600, "queue_jobs": 1},
        "cluster": {"servers": 10},
        "schedulers": ["bf-drfh"],
        "collect": {"stranded": True},
    }
    with pytest.raises(ConfigError, match=r"^collect\.stranded: true is not supported with a job"):
        fairsim.simulate(cfg)
