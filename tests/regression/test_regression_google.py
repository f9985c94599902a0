"""Regression on a one-hour slice of the real Google sample (configs/google-1h.yaml): 500 Table I
servers (the published configurations), Slots-14, First-Fit and Best-Fit DRFH. The numbers were
measured once and are pinned: a change in the converter, the engine or a scheduler that moves them
must be deliberate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from fairsim.scenario.config import load_config
from fairsim.scenario.output import run_to_folder

ROOT = Path(__file__).resolve().parents[2]

# scheduler: (tasks started, tasks completed, jobs completed, mean CPU util, mean memory util,
# tasks started and right-censored in the trace: they hold their servers to the horizon)
EXPECTED = {
    "slots-14": (2698, 373, 90, 0.45052247821739655, 0.31537366035129943, 2226),
    "ff-drfh": (8001, 672, 210, 0.9527773191987241, 0.6922215932511276, 6933),
    "bf-drfh": (9775, 694, 212, 0.9947685218372675, 0.7551607423347192, 8645),
}


@pytest.fixture(scope="module")
def one_hour(google_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("google-1h")
    cfg = load_config(
        ROOT / "configs" / "google-1h.yaml",
        overrides=[f"trace.path={google_dir}", f"trace.cache_dir={tmp / 'cache'}"],
    )
    run_to_folder(cfg, tmp / "out", progress=False, report=True)
    return tmp / "out"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECTED))
def test_one_hour_slice_numbers(one_hour: Path, name: str) -> None:
    s = json.loads((one_hour / name / "summary.json").read_text())
    started, completed, jobs, cpu, mem, censored = EXPECTED[name]
    assert s["tasks"] == 168_105
    assert s["start_s"] == 600.0  # the trace's data starts at 600 s
    assert s["users"] == 514
    assert s["skipped"] == {
        "no run time (never scheduled in the trace)": 10_176,
        "submitted at or after end_s": 435_738,
    }
    assert (s["tasks_started"], s["tasks_completed"], s["jobs_completed"]) == (
        started,
        completed,
        jobs,
    )
    assert s["mean_utilization"]["cpu"] == pytest.approx(cpu, abs=1e-9)
    assert s["mean_utilization"]["mem"] == pytest.approx(mem, abs=1e-9)
    assert s["ended"]["censored"] == censored
    assert s["ended"]["finished"] == completed
    assert sum(s["ended"].values()) == s["tasks"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECTED))
def test_one_hour_slice_censored_tasks_never_complete(one_hour: Path, name: str) -> None:
    """Every task the trace marks right-censored that started still holds its server at the
    horizon; ``ended`` agrees with ``finish_s`` and ``server``."""
    tasks = pd.read_parquet(one_hour / name / "tasks.parquet")
    (path,) = (one_hour.parent / "cache").glob("google-2011-*/tasks.parquet")
    trace = pd.read_parquet(path, columns=["job_id", "task_index", "censored"])
    m = tasks.merge(trace, on=["job_id", "task_index"], how="left", validate="one_to_one")
    assert not m.loc[m["censored"], "finish_s"].notna().any()
    started = m["server"].notna()
    assert (m.loc[m["censored"] & started, "ended"] == "censored").all()
    assert ((m["ended"] == "finished") == m["finish_s"].notna()).all()
    assert ((m["ended"] == "queued") == ~started).all()


@pytest.mark.slow
def test_one_hour_slice_orderings(one_hour: Path) -> None:
    """The paper's orderings hold on the slice: Best-Fit ≥ First-Fit ≫ Slots in utilisation."""
    util = {
        n: json.loads((one_hour / n / "summary.json").read_text())["mean_utilization"]
        for n in EXPECTED
    }
    assert util["bf-drfh"]["cpu"] > util["ff-drfh"]["cpu"] > 2 * util["slots-14"]["cpu"]
    assert util["bf-drfh"]["mem"] > util["ff-drfh"]["mem"] > 2 * util["slots-14"]["mem"]


@pytest.mark.slow
def test_one_hour_slice_is_deterministic(one_hour: Path, google_dir: Path, tmp_path: Path) -> None:
    cfg = load_config(
        ROOT / "configs" / "google-1h.yaml",
        overrides=[
            f"trace.path={google_dir}",
            f"trace.cache_dir={one_hour.parent / 'cache'}",
            "schedulers=[bf-drfh]",
        ],
    )
    run_to_folder(cfg, tmp_path / "again", progress=False, report=False)
    for name in ("tasks", "jobs", "users", "utilization"):
        a = (one_hour / "bf-drfh" / f"{name}.parquet").read_bytes()
        b = (tmp_path / "again" / "bf-drfh" / f"{name}.parquet").read_bytes()
        assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest(), name
