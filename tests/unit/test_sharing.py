"""fairsim.scenario.sharing: the dedicated-cloud computation moved out of experiment drfh-google
(which now calls it), usable on any config."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from fairsim.experiments.drfh import experiment
from fairsim.scenario import sharing
from fairsim.scenario.config import parse_config


def test_drfh_google_calls_the_moved_function() -> None:
    assert experiment.sharing_incentive is sharing.sharing_incentive
    assert experiment.dedicated_cloud_sizes is sharing.dedicated_cloud_sizes


def test_sharing_incentive_of_a_small_run(tmp_path: Path) -> None:
    cfg = parse_config(
        {
            "name": "si",
            "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": 3600},
            "cluster": {"servers": 20},
            "schedulers": ["bf-drfh"],
            # the dedicated runs use a grid 60 times coarser: it must fit the window
            "collect": {"utilization_interval_s": 10, "horizon_s": 7200},
        }
    )
    table = sharing.sharing_incentive(cfg, tmp_path, progress=False)
    written = pd.read_parquet(tmp_path / "dedicated" / "users.parquet")
    pd.testing.assert_frame_equal(written, table.reset_index(drop=True))
    s = json.loads((tmp_path / "dedicated" / "summary.json").read_text())
    assert s["tasks"] == int(table["tasks_submitted"].sum()) == 300
    assert s["users"] == len(table) and s["servers_total"] == int(table["servers"].sum())
    assert s["servers_per_user"] == 20 / len(table)
    assert (table["completion_ratio"] <= 1).all() and (table["servers"] >= 1).all()
