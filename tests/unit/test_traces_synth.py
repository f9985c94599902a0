"""Synthetic Google-like workload: shape, schema, determinism, speed, and the fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from fairsim.errors import TraceError
from fairsim.traces import synth
from fairsim.traces.google2011 import convert_google_2011
from fairsim.traces.io import write_tasks
from fairsim.traces.paths import google_2011_dir
from fairsim.traces.schema import tasks_schema
from fairsim.traces.synth import fit_google_sample, synth_google_like


def test_same_seed_same_frame_other_seed_differs() -> None:
    a = synth_google_like(5_000, seed=11)
    b = synth_google_like(5_000, seed=11)
    c = synth_google_like(5_000, seed=12)
    assert a.equals(b)
    assert not a.equals(c)


def test_shape_and_schema(tmp_path: Path) -> None:
    df = synth_google_like(20_000, seed=1, duration_s=3_600.0, n_users=50)
    assert len(df) == 20_000
    assert list(df.columns) == tasks_schema().names
    assert not df.duplicated(["job_id", "task_index"]).any()
    key = df[["submit_s", "job_id", "task_index"]]
    assert key.equals(key.sort_values(["submit_s", "job_id", "task_index"], ignore_index=True))
    assert df.submit_s.between(0, 3_600.0).all()
    assert df.user.nunique() <= 50
    assert (df.cpu > 0).all()
    assert (df.cpu <= 1).all()
    assert (df.mem > 0).all()
    assert (df.mem <= 1).all()
    assert (df.run_s > 0).all()
    assert set(df.end_state) == {"finish"}
    # tasks of a job share user, submit time and request; indices are 0..n-1
    g = df.groupby("job_id")
    assert (g[["user", "submit_s", "cpu", "mem"]].nunique() == 1).all().all()
    assert (g.task_index.max() + 1 == g.size()).all()
    out = write_tasks(df, tmp_path / "tasks.parquet")
    assert pq.read_schema(out).equals(tasks_schema(), check_metadata=True)


def test_window_scales_with_the_number_of_tasks() -> None:
    """By default the arrival rate is the sample's (613,827 tasks in 70,756 s) at every size."""
    assert synth.default_duration_s(613_827) == pytest.approx(70_756.0, rel=1e-12)
    assert synth.TASK_RATE_PER_S == pytest.approx(8.675, abs=5e-4)
    for n in (2_000, 20_000, 200_000):
        submit = synth_google_like(n, seed=3)["submit_s"]
        window = n / synth.TASK_RATE_PER_S
        assert submit.min() >= 0 and submit.max() < window
        # jobs arrive uniformly in the window: the last one is close to its end
        assert submit.max() > 0.9 * window, (n, submit.max(), window)


def test_explicit_window_is_the_same_draw_stretched() -> None:
    """Metamorphic: only the window differs between the scaled default and a fixed window (the
    dense stress case), so the submit times are the same draws multiplied by the ratio."""
    n = 5_000
    scaled = synth_google_like(n, seed=11)
    dense = synth_google_like(n, seed=11, duration_s=synth.SAMPLE_DURATION_S)
    ratio = synth.SAMPLE_DURATION_S / synth.default_duration_s(n)
    assert np.allclose(scaled["submit_s"] * ratio, dense["submit_s"], rtol=1e-12)
    rest = [c for c in scaled.columns if c != "submit_s"]
    assert scaled[rest].equals(dense[rest])


def test_million_tasks_exactly() -> None:
    # speed is measured by `make bench` (the "tasks" benchmark generates 10^6 tasks), not here
    df = synth_google_like(1_000_000, seed=5)
    assert len(df) == 1_000_000
    assert df["task_index"].max() < synth.SIZE_MAX


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_tasks": 0}, "n_tasks=0"),
        ({"n_tasks": 10, "duration_s": 0.0}, "duration_s=0.0"),
        ({"n_tasks": 10, "n_users": 0}, "n_users=0"),
    ],
)
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(TraceError, match=match):
        synth_google_like(seed=0, **kwargs)


@pytest.mark.slow
def test_fit_on_real_part(tmp_path: Path) -> None:
    convert_google_2011(google_2011_dir(), tmp_path, parts=[1], progress=False)
    fit = fit_google_sample(tmp_path / "tasks.parquet")
    assert fit["n_tasks"] == 20_139
    for name in (
        "P_SINGLE_TASK_JOB", "SIZE_LOG_MU", "SIZE_LOG_SIGMA", "SIZE_MAX", "USER_ZIPF_S",
        "REQ_LOG_MU", "REQ_LOG_SIGMA", "REQ_LOG_RHO", "RUN_LOG_MU", "RUN_LOG_SIGMA_JOB",
        "RUN_LOG_SIGMA_TASK",
    ):  # fmt: skip
        assert hasattr(synth, name)
        assert np.all(np.isfinite(fit[name]))
    assert 0 < fit["P_SINGLE_TASK_JOB"] < 1
    assert -1 < fit["REQ_LOG_RHO"] < 1
