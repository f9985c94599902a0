"""The trace's own evictions per tier (:func:`fairsim.scenario.workload.recorded_evictions`) on
the window of the tiered scenario (configs/google-tiers.yaml: trace time 0-3,600 s, parts 0-13),
against an independent count from the raw Google 2011 ``task_events`` with pandas: EVICT rows
(event type 2) in the window that end a running attempt (the task's previous SCHEDULE or
terminal row is a SCHEDULE), each task in the band of its first SUBMIT row's priority. The
numbers quoted in docs/queues.md are pinned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.config import RunConfig, load_config
from fairsim.scenario.workload import recorded_evictions, resolve_workload

ROOT = Path(__file__).resolve().parents[2]
SUBMIT, SCHEDULE, EVICT = 0, 1, 2
TERMINAL = (2, 3, 4, 5, 6)
#: tier -> (EVICT events, tasks evicted) in trace time [0, 3600) s
EXPECTED = {"production": (18, 18), "batch": (38, 36), "free": (3813, 3573)}


def _raw_evictions(google_dir: Path, end_s: float) -> pd.DataFrame:
    frames = [
        pd.read_csv(
            google_dir / "task_events" / f"part-{p:05d}-of-00500.csv.gz",
            header=None,
            usecols=[0, 2, 3, 5, 8],
            names=["time", "job_id", "task_index", "event", "priority"],
        )
        for p in range(14)
    ]
    ev = pd.concat(frames, ignore_index=True)
    ev["seq"] = np.arange(len(ev))
    key = ["job_id", "task_index"]
    prio = ev[ev["event"] == SUBMIT].sort_values("seq").groupby(key)["priority"].first()
    se = ev[ev["event"].isin((SCHEDULE, *TERMINAL))].sort_values([*key, "seq"])
    se = se.assign(before=se.groupby(key)["event"].shift(1))
    t = np.where(se["time"] == 0, 600.0, se["time"] / 1e6)
    evict = se[(se["event"] == EVICT) & (t < end_s)]
    evict = evict.assign(running=evict["before"] == SCHEDULE).join(prio.rename("tier_p"), on=key)
    evict["tier"] = pd.cut(evict["tier_p"], [-1, 1, 8, 11], labels=["free", "batch", "production"])
    return evict


@pytest.fixture(scope="module")
def tiers_config(google_dir: Path, _trace_cache: Path) -> RunConfig:
    """configs/google-tiers.yaml on the shared sample, converted in the session's cache."""
    return load_config(
        ROOT / "configs" / "google-tiers.yaml",
        overrides=[f"trace.path={google_dir}", f"trace.cache_dir={_trace_cache}"],
    )


def test_recorded_evictions_per_tier_equal_the_raw_trace(
    google_dir: Path, tiers_config: RunConfig
) -> None:
    cfg = tiers_config
    got = recorded_evictions(cfg, resolve_workload(cfg, ROOT / "configs"))
    assert got["tier"].tolist() == ["production", "batch", "free"]
    assert got[["priority_lo", "priority_hi"]].values.tolist() == [[9, 11], [2, 8], [0, 1]]
    found = {r.tier: (r.evict_events, r.tasks_evicted) for r in got.itertuples()}
    assert found == EXPECTED
    raw = _raw_evictions(google_dir, 3600.0)
    # the converter skips an EVICT without a running attempt: 4 of the window's 3,873
    assert (len(raw), int((~raw["running"]).sum())) == (3873, 4)
    ran = raw[raw["running"]]
    for tier, (events, tasks) in EXPECTED.items():
        mine = ran[ran["tier"] == tier]
        assert (len(mine), len(mine.drop_duplicates(["job_id", "task_index"]))) == (events, tasks)


def test_recorded_evictions_need_recorded_placements() -> None:
    cfg = RunConfig.model_validate(
        {
            "name": "inline",
            "trace": {
                "format": "inline",
                "users": [{"name": "a", "join_s": 0, "demand": [0.5, 0.5], "tasks": 1, "run_s": 1}],
            },
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
            "schedulers": ["bf-drfh"],
        }
    )
    with pytest.raises(ConfigError, match=r"^trace.format: 'inline' has no recorded placements"):
        recorded_evictions(cfg, resolve_workload(cfg))
