"""Strategic users (issue 43): the manipulations of :mod:`fairsim.scenario.manipulation` replayed
as runs (:mod:`fairsim.scenario.strategy`) on hand instances whose outcome is known exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.manipulation import Manipulation, parse_strategy
from fairsim.scenario.strategy import (
    compare_runs,
    dominant_share_mean,
    read_run_files,
    run_manipulated,
)
from fairsim.traces.io import write_tasks

#: summary.json keys that measure the run (time, memory, the code), not its result.
VOLATILE = frozenset({"wall_s", "tasks_per_s", "peak_rss_mb", "git_commit", "fairsim_version"})


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
    the keys that measure the run rather than its result: :data:`VOLATILE`)."""
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
    summaries = sorted(
        p.relative_to(tmp_path / "plain") for p in (tmp_path / "plain").rglob("*.json")
    )
    assert summaries
    for f in summaries:
        a = json.loads((tmp_path / "plain" / f).read_text())
        b = json.loads((tmp_path / "null" / f).read_text())
        assert _steady(a) == _steady(b), f


def _steady(o: Any) -> Any:
    """``o`` without the keys that measure the run rather than its result (timings, memory)."""
    if isinstance(o, dict):
        return {k: _steady(v) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [_steady(v) for v in o]
    return o


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
    # its dominant share over time counts the true demand: 6/12 truthful, 3/12 inflated (the
    # declared 2 cpu x 3 tasks would also read 6/12)
    row = compare_runs(
        read_run_files(tmp_path / "t", "drf"), read_run_files(tmp_path / "m", "drf"), "A", ["A"]
    )
    assert row["dominant_share_mean_truthful"] == pytest.approx(0.5, abs=1e-12)
    assert row["dominant_share_mean"] == pytest.approx(0.25, abs=1e-12)


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
        names = Manipulation("A", parse_strategy(f"split:k={k}"), cfg.seed).users()
        row = compare_runs(
            read_run_files(tmp_path / "t", sched), read_run_files(tmp_path / "m", sched), "A", names
        )
        assert row["dominant_share_mean_truthful"] == pytest.approx(0.5, abs=1e-12)
        assert row["dominant_share_mean"] == pytest.approx(expected["A"] / 12, abs=1e-12)
        assert len([u for u in got if u.startswith("A")]) == k  # the aliases each ran tasks


def test_split_aliases_are_accounts_in_the_users_queue_with_its_weight(tmp_path: Path) -> None:
    """The aliases are more accounts of the splitter: in its own queue (``leaves.users``) and
    with its weight (``trace.weights``). Queues QA (user A) and QB (the rest) of equal weight,
    A of weight 2: truthfully ``hdrf`` splits the pool between the queues (6 tasks each) and
    ``drf`` 2:1 (8 and 4). Split in two, A and A#2 share QA's half under ``hdrf`` (3 each: no
    gain), and under ``drf`` take 4/5 of the pool at weights 2:2:1 (5, 5 and B's 2). Before,
    A#2 hung in the default queue QB (``queues.parquet``: QA's tasks 24 to 12) with the default
    weight 1."""
    cfg = parse_config(
        {
            "name": "strategy-queues",
            "trace": {
                "format": "canonical",
                "path": str(_saturated(tmp_path)),
                "weights": {"A": 2},
            },
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [12.0, 12.0]}]},
            "queues": [{"id": "QA"}, {"id": "QB"}],
            "leaves": {"by": "user", "users": {"A": "QA"}, "default": "QB"},
            "schedulers": ["hdrf", "drf"],
            "collect": {"utilization_interval_s": 50, "horizon_s": 150},
        }
    )
    run_manipulated(cfg, None, tmp_path / "t")
    run_manipulated(cfg, Manipulation("A", parse_strategy("split:k=2"), cfg.seed), tmp_path / "m")
    assert _completed(tmp_path / "t", "hdrf") == {"A": 6, "B": 6}
    assert _completed(tmp_path / "m", "hdrf") == {"A": 3, "A#2": 3, "B": 6}
    assert _completed(tmp_path / "t", "drf") == {"A": 8, "B": 4}
    assert _completed(tmp_path / "m", "drf") == {"A": 5, "A#2": 5, "B": 2}
    for sched in ("hdrf", "drf"):
        queues = pd.read_parquet(tmp_path / "m" / sched / "queues.parquet").set_index("queue")
        assert queues.loc["QA", "users"] == 2 and queues.loc["QA", "tasks"] == 24
        assert queues.loc["QB", "users"] == 1 and queues.loc["QB", "tasks"] == 24


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


@pytest.mark.parametrize(("sched", "wait"), [("yarn-fair", 0.0), ("kueue-fair", 1.0)])
def test_hoard_placeholders_end_on_time_under_a_preempting_scheduler(
    tmp_path: Path, sched: str, wait: float
) -> None:
    """The hoard example above under a scheduler that preempts (its own event loop): the
    placeholders end when H's job arrives (t = 500), as under drf, not at the horizon (they
    did, before the preempting loop knew placeholders). Nothing is evicted on the uncontended
    server; kueue-fair admits at its next cycle (``cycle_s`` 1 s after an arrival, ``wait``)."""
    rows = [(7, "H", 500.0, 1.0, 1.0, 100.0)] * 4 + [(8, "O", 0.0, 1.0, 1.0, 50.0)]
    path = tmp_path / "tasks.parquet"
    write_tasks(_tasks(rows), path)
    cfg = _config(path, [sched], [12.0, 12.0], horizon_s=1000)
    m = Manipulation("H", parse_strategy("hoard:cap=3,lead_s=400"), cfg.seed)
    run_manipulated(cfg, m, tmp_path / "m")
    tasks = pd.read_parquet(tmp_path / "m" / sched / "tasks.parquet")
    ph = tasks[tasks["job_id"] < 0]
    assert ph["start_s"].tolist() == [100.0 + wait] * 3
    assert ph["finish_s"].tolist() == [500.0] * 3
    real = tasks[tasks["job_id"] == 7]
    assert real["start_s"].tolist() == [500.0 + wait] * 4
    assert real["finish_s"].tolist() == [600.0 + wait] * 4
    assert _completed(tmp_path / "m", sched) == {"H": 4, "O": 1}


def test_an_evicted_placeholder_runs_again_to_its_end(tmp_path: Path) -> None:
    """yarn-fair's reclaim example with the batch queue's work held by H's placeholders: H
    (queue batch) hoards four quarter-server placeholders from 100 s ahead of its job at 500 s;
    prod (guaranteed half the pool) submits two quarter tasks of 20 s at 200 s and, after the
    5 s min-share timeout, takes two placeholders back (killed at once). prod runs 205-225 s;
    the two evicted placeholders start again at 225 s and still end at 500 s, when H's job
    arrives (an evicted placeholder keeps its absolute end, and is never a completed task)."""
    rows = [(7, "H", 500.0, 0.25, 0.25, 100.0)] * 4 + [(8, "P", 200.0, 0.25, 0.25, 20.0)] * 2
    path = tmp_path / "tasks.parquet"
    write_tasks(_tasks(rows), path)
    yarn = {"name": "yarn-fair", "min_share_preemption_timeout_s": 5, "wait_before_kill_s": 0}
    cfg = parse_config(
        {
            "name": "hoard-evicted",
            "trace": {"format": "canonical", "path": str(path)},
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
            "queues": [{"id": "prod", "guarantee_share": [0.5, 0.5]}, {"id": "batch"}],
            "leaves": {"by": "user", "users": {"P": "prod", "H": "batch"}},
            "schedulers": [{**yarn, "label": "yarn"}],
            "collect": {"utilization_interval_s": 50, "horizon_s": 1000},
        }
    )
    m = Manipulation("H", parse_strategy("hoard:cap=4,lead_s=400"), cfg.seed)
    run_manipulated(cfg, m, tmp_path / "m")
    tasks = pd.read_parquet(tmp_path / "m" / "yarn" / "tasks.parquet")
    ph = tasks[tasks["job_id"] < 0].sort_values("task_index")
    assert ph["evictions"].tolist() == [0, 0, 1, 1]
    assert ph["start_s"].tolist() == [100.0, 100.0, 225.0, 225.0]
    assert ph["finish_s"].tolist() == [500.0] * 4
    prod = tasks[tasks["user"] == "P"]
    assert prod["start_s"].tolist() == [205.0] * 2
    real = tasks[tasks["job_id"] == 7]
    assert real["finish_s"].tolist() == [600.0] * 4
    assert _completed(tmp_path / "m", "yarn") == {"H": 4, "P": 2}


def test_dominant_share_mean_is_the_share_of_the_sum_over_time() -> None:
    """Tasks (1, 0) and (0, 2) on a pool of (4, 4) run together over (0, 10) of a (0, 20) window:
    the dominant share of their sum is 2/4 (not 1/4 + 2/4) for half the window, so 1/4; a task
    not finished by the horizon runs to it, one never started counts nothing; and changing a
    resource's unit (demand and capacity times 1,000) changes nothing."""
    runs = pd.DataFrame({"start_s": [0.0, 0.0, np.nan], "finish_s": [10.0, 10.0, np.nan]})
    demand = np.array([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]])
    capacity = np.array([4.0, 4.0])
    assert dominant_share_mean(runs, demand, capacity, (0.0, 20.0)) == 0.25
    assert dominant_share_mean(runs, demand * [1e3, 1], capacity * [1e3, 1], (0.0, 20.0)) == 0.25
    late = pd.DataFrame({"start_s": [15.0], "finish_s": [np.nan]})
    assert dominant_share_mean(late, np.array([[2.0, 1.0]]), capacity, (0.0, 20.0)) == 0.125
    early = pd.DataFrame({"start_s": [-10.0], "finish_s": [5.0]})  # clipped to the window
    assert dominant_share_mean(early, np.array([[4.0, 0.0]]), capacity, (0.0, 20.0)) == 0.25
