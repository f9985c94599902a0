"""The progress bar of a run (issue 39, friction 6): simulated time against the horizon (tasks
ended against tasks with an infinite horizon), moving until the simulation ends, not full once
the last task has arrived; then the phases that follow (writing ``tasks.parquet``, the result
files, the report) named; nothing printed without progress."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from helpers import two_users_config
from tqdm import tqdm

from fairsim.cli import main
from fairsim.schedulers import make_scheduler
from fairsim.simulator import engine
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.workload import FrameTaskSource


class _Spy(tqdm):  # type: ignore[type-arg]
    """A bar that writes into a buffer and records its position after every update."""

    made: ClassVar[list[_Spy]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.text = io.StringIO()
        self.seen: list[float] = []
        super().__init__(*args, **{**kwargs, "file": self.text, "mininterval": 0})
        _Spy.made.append(self)

    def update(self, n: float | None = 1) -> bool | None:
        out = super().update(n)
        self.seen.append(self.n)
        return out


def _last(bar: _Spy) -> str:
    """The bar's last line before it was cleared."""
    return [line for line in bar.text.getvalue().split("\r") if line.strip()][-1]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[_Spy]:
    _Spy.made = []
    monkeypatch.setattr(engine, "tqdm", _Spy)
    return _Spy.made


def _engine(horizon_s: float, **kw: Any) -> Engine:
    """One (1, 1) server; four (1, 1) tasks of 100 s submitted at 0-3 s run one after the
    other and finish at 100, 200, 300 and 400 s: every task has arrived by 3 s."""
    frame = pd.DataFrame(
        {
            "job_id": np.arange(4, dtype=np.int64),
            "task_index": np.zeros(4, dtype=np.int32),
            "user": ["u"] * 4,
            "submit_s": [0.0, 1.0, 2.0, 3.0],
            "run_s": [100.0] * 4,
            "cpu": [1.0] * 4,
            "mem": [1.0] * 4,
        }
    )
    return Engine(
        ClusterState(np.ones((1, 2)), ("cpu", "mem")),
        make_scheduler("ff-drfh"),
        FrameTaskSource(frame),
        horizon_s=horizon_s,
        utilization_interval_s=50.0,
        progress=True,
        **kw,
    )


def test_the_bar_is_simulated_time_against_the_horizon(spy: list[_Spy]) -> None:
    r = _engine(500.0).run()
    (bar,) = spy
    assert bar.total == 500.0 and bar.unit == "s"
    # at each completion (100, 200, 300, 400 s) to the last grid point passed (every 50 s),
    # long after the last arrival (3 s), then to the horizon
    assert bar.seen == [50.0, 150.0, 250.0, 350.0, 500.0]
    assert r.horizon_s == 500.0
    last = _last(bar)
    assert "100%" in last and "500/500 s simulated" in last
    assert "writing tasks.parquet" not in last  # nothing is written in memory


def test_a_streamed_run_names_the_writing_of_tasks_parquet(spy: list[_Spy], tmp_path: Path) -> None:
    _engine(500.0, tasks_out=tmp_path / "tasks.parquet").run()
    (bar,) = spy
    assert bar.seen[-1] == 500.0
    assert "500/500 s simulated [" in bar.text.getvalue()
    assert "writing tasks.parquet]" in _last(bar)


def test_a_window_of_hours_counts_hours(spy: list[_Spy]) -> None:
    _engine(9000.0).run()
    (bar,) = spy
    assert bar.total == 9000.0 and bar.unit == "h"
    assert "2.5/2.5 h simulated" in _last(bar)


def test_an_infinite_horizon_counts_tasks_ended(spy: list[_Spy]) -> None:
    r = _engine(math.inf).run()
    (bar,) = spy
    assert bar.total == 4 and bar.unit == "task"
    # at the grid points 150, 250 and 350 s: 1, 2 and 3 tasks have ended; then all 4
    assert bar.seen == [1, 2, 3, 4]
    assert r.horizon_s == 400.0


def test_no_bar_without_progress(spy: list[_Spy]) -> None:
    e = _engine(500.0)
    e.progress = False
    e.run()
    (bar,) = spy
    assert bar.disable and bar.text.getvalue() == "" and bar.seen == []


def test_fairsim_run_names_the_phases_after_the_simulation(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(two_users_config(tmp_path)), "--out", str(tmp_path / "out")]) == 0
    err = capfd.readouterr().err
    for line in (
        "drf: 100%",
        "200/200 s simulated [",
        "writing tasks.parquet]",
        "drf: writing the result files [",
        "bf-drfh: writing the result files [",
        "report: figures and report.md [",
    ):
        assert line in err


def test_fairsim_run_no_progress_prints_nothing_on_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    args = ["run", str(two_users_config(tmp_path)), "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 0
    out, err = capfd.readouterr()
    assert err == "" and "results in" in out
