"""Strategic users (issue 43): the manipulations of :mod:`fairsim.scenario.manipulation` replayed
as runs (:mod:`fairsim.scenario.strategy`) on hand instances whose outcome is known exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.manipulation import Manipulation, parse_strategy
from fairsim.scenario.strategy import run_manipulated
from fairsim.traces.io import write_tasks

COMPARE = Path("/work/tools/compare.py")


def _tasks(rows: list[tuple[int, str, float, float, float, float]]) -> pd.DataFrame:
    """Canonical tasks from ``(job_id, user, submit_s, cpu, mem, run_s)``, one task each row
    (task indices numbered within the job)."""
    frame = pd.DataFrame(rows, columns=["job_id", "user", "submit_s", "cpu", "mem", "run_s"])
    frame = frame.sort_values("submit_s", kind="stable", ignore_index=True)  # a trace's order
    frame["task_index"] = frame.groupby("job_id").cumcount().astype(np.int32)
    frame["end_state"] = "finished"
    frame["attempts"] = 1
    frame["instances"] = 1
    frame["constraint"] = None
    frame["parents"] = None
    return frame


def _config(path: Path, schedulers: list[str], capacity: list[float], **collect: Any) -> Any:
    return parse_config(
        {
            "name": "strategy-hand",
            "trace": {"format": "canonical", "path": str(path)},
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": capacity}]},
            "schedulers": schedulers,
            "collect": {"utilization_interval_s": 50, **collect},
        }
    )


def _saturated(tmp_path: Path) -> Path:
    """Users A and B, each 6 jobs of 4 unit tasks (1 cpu, 1 mem, 100 s) at t = 0, on one
    server of 12 x 12: a saturated pool that runs 12 tasks at a time."""
    rows = []
    for u, first in (("A", 0), ("B", 100)):
        for j in range(6):
            rows += [(first + j, u, 0.0, 1.0, 1.0, 100.0)] * 4
    path = tmp_path / "tasks.parquet"
    write_tasks(_tasks(rows), path)
    return path


def _completed(folder: Path, sched: str) -> dict[str, int]:
    tasks = pd.read_parquet(folder / sched / "tasks.parquet")
    done = tasks[(tasks["ended"] == "finished") & (tasks["job_id"] >= 0)]
    return {str(k): int(v) for k, v in done.groupby("user").size().items()}


# --------------------------------------------------------------------------- null manipulations


@pytest.mark.parametrize(
    "spec", ["inflate:cpu=1", "inflate:nondominant=1", "split:k=1", "hoard:cap=0"]
)
def test_null_manipulation_is_byte_identical(tmp_path: Path, spec: str) -> None:
    """A null manipulation changes nothing: every result file equals the plain run's (JSON up to
    the volatile timing keys, as /work/tools/compare.py checks it)."""
    cfg = _config(_saturated(tmp_path), ["drf", "dynamic-drf", "bf-drfh"], [12.0, 12.0])
    run_manipulated(cfg, None, tmp_path / "plain")
    m = Manipulation("A", parse_strategy(spec), cfg.seed)
    run_manipulated(cfg, m, tmp_path / "null")
    plain = sorted(
        p.relative_to(tmp_path / "plain") for p in (tmp_path / "plain").rglob("*.parquet")
    )
    assert len(plain) >= 15
    for f in plain:
        assert (tmp_path / "plain" / f).read_bytes() == (tmp_path / "null" / f).read_bytes(), f
    if COMPARE.is_file():  # the project's comparator, where it is installed
        out = subprocess.run(
            [sys.executable, str(COMPARE), str(tmp_path / "plain"), str(tmp_path / "null")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert " 0 differ" in out.stdout, out.stdout


# --------------------------------------------------------------------------- inflate


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (
            "inflate:cpu=0.5",
            r"^--strategy 'inflate:cpu=0\.5': factor 0\.5 for 'cpu' is below 1 \(a task cannot "
            r"run in a reservation smaller than its demand; under-reporting is not modelled\)$",
        ),
        ("inflate:mem=0", r"factor 0 for 'mem' is below 1"),
    ],
)
def test_inflate_refuses_factors_below_one(spec: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        parse_strategy(spec)
    assert "\n" not in str(info.value)


def test_inflate_occupies_the_declared_demand(tmp_path: Path) -> None:
    """A inflates cpu x2 on a 12 x 12 server: its tasks occupy 2 cpu each, so in the first wave
    DRF equalises the dominant shares 2a/12 = b/12 on a full pool 2a + b = 12: A runs a = 3
    tasks, B b = 6. A completes 3 real tasks by the horizon instead of 6 (gain -1/2)."""
    cfg = _config(_saturated(tmp_path), ["drf"], [12.0, 12.0], horizon_s=150)
    run_manipulated(cfg, None, tmp_path / "t")
    run_manipulated(cfg, Manipulation("A", parse_strategy("inflate:cpu=2")), tmp_path / "m")
    assert _completed(tmp_path / "t", "drf") == {"A": 6, "B": 6}
    got = _completed(tmp_path / "m", "drf")
    tasks = pd.read_parquet(tmp_path / "m" / "drf" / "tasks.parquet")
    assert set(tasks.loc[tasks["user"] == "A", "cpu"]) == {2.0}
    assert got == {"A": 3, "B": 6}


# --------------------------------------------------------------------------- split


@pytest.mark.parametrize(("k", "expected"), [(2, {"A": 8, "B": 4}), (3, {"A": 9, "B": 3})])
def test_split_gives_about_k_shares_under_drf(
    tmp_path: Path, k: int, expected: dict[str, int]
) -> None:
    """On a saturated pool of 12 unit slots DRF gives A and B 6 tasks each in the first wave;
    A split into k users gets k of the k + 1 equal shares: 12 k / (k + 1) tasks (8 for k = 2,
    9 for k = 3), B the rest. Only the first wave finishes by the horizon (150 s)."""
    cfg = _config(_saturated(tmp_path), ["drf", "dynamic-drf"], [12.0, 12.0], horizon_s=150)
    run_manipulated(cfg, None, tmp_path / "t")
    m = Manipulation("A", parse_strategy(f"split:k={k}"), cfg.seed)
    run_manipulated(cfg, m, tmp_path / "m")
    for sched in ("drf", "dynamic-drf"):
        assert _completed(tmp_path / "t", sched) == {"A": 6, "B": 6}
        got = _completed(tmp_path / "m", sched)
        mine = sum(v for u, v in got.items() if u.split("#")[0] == "A")
        assert {"A": mine, "B": got["B"]} == expected
        assert len([u for u in got if u.startswith("A")]) == k  # the aliases each ran tasks


# --------------------------------------------------------------------------- hoard


def test_hoard_placeholders_are_usage_never_work(tmp_path: Path) -> None:
    """H's one job of 4 unit tasks arrives at t = 500; hoarding with cap 3 and lead 400 s it
    holds 3 placeholders (1 cpu, 1 mem each) from t = 100 to t = 500 on a 12 x 12 server: the
    pool's utilisation is 3/12 over (100, 500) where the plain run's is 0, the placeholders are
    rows with job ids below 0, and H's completed work is its 4 real tasks in both runs."""
    rows = [(7, "H", 500.0, 1.0, 1.0, 100.0)] * 4 + [(8, "O", 0.0, 1.0, 1.0, 50.0)]
    path = tmp_path / "tasks.parquet"
    write_tasks(_tasks(rows), path)
    cfg = _config(path, ["drf"], [12.0, 12.0])
    run_manipulated(cfg, None, tmp_path / "t")
    m = Manipulation("H", parse_strategy("hoard:cap=3,lead_s=400"), cfg.seed)
    run_manipulated(cfg, m, tmp_path / "m")
    tasks = pd.read_parquet(tmp_path / "m" / "drf" / "tasks.parquet")
    ph = tasks[tasks["job_id"] < 0]
    assert len(ph) == 3
    assert set(ph["user"]) == {"H"}
    assert ph["start_s"].tolist() == [100.0] * 3
    assert ph["finish_s"].tolist() == [500.0] * 3
    util_t = pd.read_parquet(tmp_path / "t" / "drf" / "utilization.parquet").set_index("time_s")
    util_m = pd.read_parquet(tmp_path / "m" / "drf" / "utilization.parquet").set_index("time_s")
    for t in (150.0, 300.0, 450.0):
        assert util_t.loc[t, "cpu"] == 0.0
        assert util_m.loc[t, "cpu"] == pytest.approx(3 / 12)
    assert _completed(tmp_path / "t", "drf") == {"H": 4, "O": 1}
    assert _completed(tmp_path / "m", "drf") == {"H": 4, "O": 1}
