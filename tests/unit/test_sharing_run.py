"""collect.sharing_incentive: every user of a run against its tasks alone on a dedicated cloud
of 1/n of the pool (DRFH paper, Sections IV-D and VI), checked by hand and on a Google slice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import load_config, parse_config
from fairsim.scenario.sharing import proportional_clouds


def inline(users: list[dict[str, Any]], horizon_s: float, **collect: Any) -> dict[str, Any]:
    return {
        "name": "si",
        "trace": {"format": "inline", "users": users},
        "cluster": {"classes": [{"name": "s", "count": 2, "capacity": [1.0, 1.0]}]},
        "schedulers": ["bf-drfh"],
        "collect": {
            "utilization_interval_s": 10,
            "horizon_s": horizon_s,
            "sharing_incentive": True,
            **collect,
        },
    }


def test_two_identical_users_on_two_servers_get_one_server_each() -> None:
    """Shared: 2 servers of (1, 1) hold 4 tasks of (0.5, 0.5), two per user: each user's 4
    tasks of 100 s end at 200 s. Dedicated: 1 server each, 2 at a time: also 200 s."""
    u = {"demand": [0.5, 0.5], "tasks": 4, "run_s": 100}
    r = fairsim.simulate(inline([{"name": "a", **u}, {"name": "b", **u}], 250))["bf-drfh"]
    t = r.sharing_incentive
    assert t is not None
    assert t["servers_dedicated"].tolist() == [1, 1]
    assert t["tasks_completed_shared"].tolist() == [4, 4]
    assert t["tasks_completed_dedicated"].tolist() == [4, 4]
    assert t["jct_shared_s"].tolist() == [200.0, 200.0]
    assert t["jct_dedicated_s"].tolist() == [200.0, 200.0]
    assert t["better_off"].all()
    s = r.summary["sharing_incentive"]
    assert (s["users"], s["users_better_off"], s["users_worse_off"]) == (2, 2, 0)
    assert s["fraction_better_off"] == 1.0 and s["pool_rule"] == "proportional share"
    assert s["dedicated_servers"] == 2 and s["utilization_interval_s"] == 250.0


def test_users_at_different_times_gain_from_sharing(tmp_path: Path) -> None:
    """a at 0 s, b at 200 s, 4 tasks of 100 s each: shared, each has both servers to itself
    (4 tasks at once, JCT 100 s); alone on one server, 2 at a time (JCT 200 s). With the horizon
    at 350 s, b completes 4 tasks shared and 2 alone."""
    u = {"demand": [0.5, 0.5], "tasks": 4, "run_s": 100}
    cfg = inline([{"name": "a", **u}, {"name": "b", "join_s": 200, **u}], 350)
    fairsim.simulate(cfg, out=tmp_path / "run")
    folder = tmp_path / "run" / "bf-drfh"
    t = pd.read_parquet(folder / "sharing_incentive.parquet")
    assert list(t.columns) == [
        "user",
        "tasks_submitted",
        "tasks_completed_shared",
        "tasks_completed_dedicated",
        "jobs_compared",
        "jct_shared_s",
        "jct_dedicated_s",
        "servers_dedicated",
        "better_off",
    ]
    assert t["tasks_completed_shared"].tolist() == [4, 4]
    assert t["tasks_completed_dedicated"].tolist() == [4, 2]
    # b's job does not finish alone by 350 s: only a's job is in both runs
    assert t["jobs_compared"].tolist() == [1, 0]
    assert t["jct_shared_s"].iloc[0] == 100.0 and t["jct_dedicated_s"].iloc[0] == 200.0
    assert np.isnan(t["jct_shared_s"].iloc[1])
    s = json.loads((folder / "summary.json").read_text())["sharing_incentive"]
    assert (s["users_better_off"], s["users_worse_off"]) == (2, 0)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "- bf-drfh: 2 of 2 users better off (100.0%), 0 worse off" in report


def test_proportional_clouds_take_one_nth_of_every_class() -> None:
    pool = pd.DataFrame({"server": range(7), "cpu": [1.0] * 4 + [0.5] * 3, "mem": [1.0] * 7})
    clouds = proportional_clouds(pool, 2, np.random.default_rng(3), ("cpu", "mem"))
    for c in clouds:  # 2 of the 4 big servers, 1 or 2 of the 3 small ones
        assert (c["cpu"] == 1.0).sum() == 2 and (c["cpu"] == 0.5).sum() in (1, 2)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"queue_jobs": 1}, "not supported with a job gate"),
        ({"constraints": {"share": 0.5}}, "not supported with placement constraints"),
    ],
)
def test_refused_where_the_dedicated_runs_cannot_replay(
    extra: dict[str, Any], message: str
) -> None:
    cfg = {
        "name": "si",
        "trace": {"format": "synthetic", "n_tasks": 100, "duration_s": 3600, **extra},
        "cluster": {"servers": 10},
        "schedulers": ["bf-drfh"],
        "collect": {"sharing_incentive": True},
    }
    with pytest.raises(ConfigError, match=rf"^collect\.sharing_incentive: true is {message}"):
        fairsim.simulate(cfg)


def test_refused_with_streamed_tasks(tmp_path: Path) -> None:
    cfg = inline([{"name": "a", "demand": [0.5, 0.5], "tasks": 1, "run_s": 1}], 100)
    cfg["collect"]["stream_tasks"] = True
    with pytest.raises(ConfigError, match=r"not supported with collect\.stream_tasks"):
        fairsim.simulate(cfg, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_off_by_default_leaves_config_and_files_unchanged(tmp_path: Path) -> None:
    cfg = load_config(Path(__file__).parents[2] / "configs" / "google-1h.yaml")
    assert "sharing_incentive" not in cfg.to_yaml() and "stranded" not in cfg.to_yaml()
    on = parse_config({**cfg.model_dump(mode="json"), "collect": {"sharing_incentive": True}})
    assert on.config_hash() != cfg.config_hash()
    u = {"demand": [0.5, 0.5], "tasks": 1, "run_s": 1}
    off = inline([{"name": "a", **u}], 100, sharing_incentive=False)
    r = fairsim.simulate(off, out=tmp_path / "off")["bf-drfh"]
    assert r.sharing_incentive is None and "sharing_incentive" not in r.summary


def test_google_slice(google_dir: Path, tmp_path: Path) -> None:
    """300 s of the real Google sample (600-900 s) on 100 Table I servers under FF-DRFH: 510
    users, each alone on k/n = 0.2 -> 1 Table I server (at least one each)."""
    cfg = {
        "name": "g",
        "trace": {
            "format": "google-2011",
            "path": str(google_dir),
            "parts": "0-13",
            "start_s": 0,
            "end_s": 900,
            "cache_dir": str(tmp_path / "cache"),
        },
        "cluster": {"servers": 100},
        "schedulers": ["ff-drfh"],
        "collect": {"utilization_interval_s": 60, "sharing_incentive": True},
    }
    r = fairsim.simulate(cfg)["ff-drfh"]
    t, s = r.sharing_incentive, r.summary["sharing_incentive"]
    assert t is not None
    assert int(t["tasks_submitted"].sum()) == r.summary["tasks"] == 137_638
    assert int(t["tasks_completed_shared"].sum()) == r.summary["tasks_completed"] == 12
    assert int(t["tasks_completed_dedicated"].sum()) == 67
    assert (s["users"], s["users_better_off"], s["users_worse_off"]) == (510, 499, 11)
    assert s["pool_rule"] == "table-i k/n i.i.d." and s["dedicated_servers"] == 510
    assert (t["servers_dedicated"] == 1).all()
