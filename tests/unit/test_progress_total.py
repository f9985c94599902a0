"""A task source counts the tasks the run replays (the window's usable rows), not the rows of the
trace's table: ``configs/google-1h.yaml`` replays 168,105 of the sample's 614,019 rows (the
in-memory task table's size; the progress bar of an infinite horizon); the progress bar of a
run on the real sample is its window of simulated time (tests/unit/test_progress_bar.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fairsim.cli import main
from fairsim.scenario.config import load_config
from fairsim.scenario.pipeline import prepare_scenario
from fairsim.simulator import engine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("progress-cache")


def test_google_1h_source_counts_the_window(google_dir: Path, cache: Path) -> None:
    cfg = load_config(
        ROOT / "configs" / "google-1h.yaml",
        overrides=[f"trace.path={google_dir}", f"trace.cache_dir={cache}"],
    )
    source = prepare_scenario(cfg).open_source()
    assert source.n_hint == 168_105
    assert sum(len(b) for b in source.batches()) == 168_105


def test_bar_total_is_the_simulated_window(
    google_dir: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars: list[Any] = []
    real = engine.tqdm

    def spy(*args: Any, **kwargs: Any) -> Any:
        bar = real(*args, **{**kwargs, "disable": False})
        bars.append(bar)
        return bar

    monkeypatch.setattr(engine, "tqdm", spy)
    out = tmp_path / "out"
    args = ["run", str(ROOT / "configs" / "google-1h.yaml"), "--out", str(out)]
    args += ["--set", f"trace.path={google_dir}", "--set", f"trace.cache_dir={cache}"]
    args += ["--set", "trace.end_s=700", "--set", "schedulers=[ff-drfh]"]
    assert main(args) == 0
    summary = json.loads((out / "ff-drfh" / "summary.json").read_text())
    # the window is 600-700 s: the trace's data begin at 600 s
    assert (summary["start_s"], summary["horizon_s"]) == (600.0, 700.0)
    assert [(b.total, b.n, b.unit) for b in bars] == [(100.0, 100.0, "s")]
    assert 0 < summary["tasks"] < 168_105


def test_frame_source_counts_the_window_and_usable_rows() -> None:
    import numpy as np
    import pandas as pd

    from fairsim.simulator.workload import FrameTaskSource

    frame = pd.DataFrame(
        {
            "job_id": np.arange(6, dtype=np.int64),
            "task_index": np.arange(6, dtype=np.int32),
            "user": ["a"] * 6,
            "submit_s": [0.0, 5.0, 10.0, 15.0, 20.0, 25.0],
            "cpu": [0.1, 0.1, -0.1, 0.1, 0.1, 0.1],
            "mem": [0.1] * 6,
            "run_s": [1.0, np.nan, 1.0, 1.0, 1.0, 1.0],
        }
    )
    source = FrameTaskSource(frame, start_s=5.0, end_s=25.0)
    assert source.n_hint == 2  # 15 s and 20 s: 0 s and 25 s are outside, 5 s has no run time
    assert sum(len(b) for b in source.batches()) == 2
