"""The whole DRFH reproduction pipeline (``make experiment``) on a 2-hour slice with 400 servers:
every step runs, every figure and the report are written, and the paper's orderings hold."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fairsim.experiments.drfh.experiment import dedicated_cloud_sizes, run_experiment


def test_dedicated_cloud_sizes_add_up_in_expectation() -> None:
    import numpy as np

    sizes = np.concatenate(
        [dedicated_cloud_sizes(567, 2000, np.random.default_rng(s)) for s in range(50)]
    )
    assert set(np.unique(sizes)) == {3, 4}
    # floor(k/n) plus Bernoulli(frac(k/n)): the mean is k/n; 50 x 567 draws give sd ~0.003
    assert abs(sizes.mean() - 2000 / 567) < 0.015
    assert dedicated_cloud_sizes(3, 2, np.random.default_rng(0)).tolist() == [1, 1, 1]


@pytest.mark.slow
def test_quick_experiment_end_to_end(tmp_path: Path, google_dir: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing is written into the working directory
    report = run_experiment(
        shared=google_dir.parent.parent, out=tmp_path / "r", quick=True, progress=False
    )
    root = tmp_path / "r"
    text = report.read_text()
    for heading in ("Table II", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8"):
        assert heading in text, heading
    for fig in ("fig4.png", "fig5.png", "fig6.png", "fig7.png", "fig8.png"):
        assert (root / fig).stat().st_size > 10_000, fig
    util = {
        s: json.loads((root / s / "summary.json").read_text())["mean_utilization"]
        for s in ("slots-14", "ff-drfh", "bf-drfh")
    }
    assert util["bf-drfh"]["cpu"] >= util["ff-drfh"]["cpu"] > util["slots-14"]["cpu"]
    dedicated = pd.read_parquet(root / "dedicated" / "users.parquet")
    shared = pd.read_parquet(root / "bf-drfh" / "users.parquet")
    assert set(dedicated["user"]) == set(shared["user"])
    assert (dedicated["tasks_submitted"].sum()) == shared["tasks_submitted"].sum()
    # right-censored tasks never complete (rule hold); the older rule is run for comparison
    assert "rule `hold`" in text
    assert text.count("Sensitivity to the censoring rule") == 3  # Figs. 6, 7 and 8
    hold = json.loads((root / "bf-drfh" / "summary.json").read_text())
    old = json.loads((root / "censored-complete" / "bf-drfh" / "summary.json").read_text())
    assert (hold["censored_rule"], old["censored_rule"]) == ("hold", "complete")
    assert hold["ended"]["censored"] > 0
    assert old["tasks_completed"] > hold["tasks_completed"]
    ded = json.loads((root / "dedicated" / "summary.json").read_text())
    assert ded["censored_tasks"] > 0 and 0 < ded["users_with_censored_tasks"] < ded["users"]
    shares = pd.read_parquet(root / "fig4" / "bf-drfh" / "user_shares.parquet")
    early = shares[(shares.time_s > 40) & (shares.time_s < 160) & (shares.user == "user 1")]
    assert early["cpu"].mean() == pytest.approx(0.394, abs=0.01)  # paper: 40 %
    assert early["mem"].mean() == pytest.approx(0.618, abs=0.01)  # paper: 62 %
