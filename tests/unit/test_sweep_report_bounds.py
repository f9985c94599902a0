"""Intervals of bounded sweep metrics stay inside their bounds (issue 39: ``sweep-report``
printed a utilisation of ``96.2 [91.2, 101.2]``), with the method named in the report."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fairsim.cli import main
from fairsim.scenario.reporting.sweep_report import (
    aggregate,
    bounded_interval,
    metric_figure,
    t_interval,
)

#: Utilisation over five seeds near 100 %: the t-interval is [91.3, 101.1] %.
NEAR_FULL = [1.0, 0.99, 0.98, 0.93, 0.91]


def _runs(util_cpu: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [f"r{s}" for s in range(1, len(util_cpu) + 1)],
            "cluster.servers": 500,
            "seed": range(1, len(util_cpu) + 1),
            "scheduler": "bf-drfh",
            "status": "ok",
            "error": None,
            "wall_s": 1.0,
            "tasks": 10,
            "tasks_completed": 10,
            "completion_ratio": 1.0,
            "util_cpu": util_cpu,
            "util_mem": 0.5,
            "mean_jct_s": [100.0, 300.0, 200.0, 150.0, 250.0][: len(util_cpu)],
            "median_jct_s": 50.0,
        }
    )


def test_the_issue_example_by_hand() -> None:
    mean, _, half, _ = t_interval(NEAR_FULL)
    assert (round(100 * mean, 1), round(100 * (mean + half), 1)) == (96.2, 101.1)  # the defect
    _, s, lo, hi, k, how = bounded_interval(NEAR_FULL, (0.0, 1.0))
    # logit(0.962) = 3.23140, delta-method step t(0.975, 4) * (s / sqrt 5) / (0.962 * 0.038)
    step = 2.7764451051977987 * s / math.sqrt(5) / (0.962 * 0.038)
    assert step == pytest.approx(1.34585, abs=1e-5)
    z = math.log(0.962 / 0.038)
    assert (lo, hi) == pytest.approx((1 / (1 + math.exp(step - z)), 1 / (1 + math.exp(-z - step))))
    assert (round(100 * lo, 1), round(100 * hi, 1), how, k) == (86.8, 99.0, "logit-t", 5)
    # values outside the range (the recorded replay over-commits): the t-interval, named so
    over = [1.02, 0.98, 1.05]
    assert bounded_interval(over, (0.0, 1.0))[5] == "t"
    assert bounded_interval(over, (0.0, 1.0))[2:4] == pytest.approx(
        (np.mean(over) - t_interval(over)[2], np.mean(over) + t_interval(over)[2])
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8))
@example([1e-8, 1e-8, 1e-8])  # a mean 1 ulp above 1e-8: expit put the upper end below it
def test_fraction_intervals_stay_inside_and_hold_the_mean(values: list[float]) -> None:
    m, s, lo, hi, _, how = bounded_interval(values, (0.0, 1.0))
    assert how == "logit-t"
    assert 0.0 <= lo <= m <= hi <= 1.0
    if 0.0 < m < 1.0 and s > 1e-9:
        assert 0.0 < lo < hi < 1.0


def test_report_names_the_method_and_keeps_utilisation_below_100(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(NEAR_FULL).to_parquet(tmp_path / "runs.parquet")
    assert main(["sweep-report", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "| 96.2 [86.8, 99.0] |" in printed and "101" not in printed
    assert "| 100.0 [100.0, 100.0] |" in printed  # completion 1.0 at every seed
    report = (tmp_path / "report.md").read_text()
    assert (
        "Student-t interval on the logit scale, back-transformed: expit(logit m ± "
        "t·s/(√n·m(1 − m))) for mean cpu utilisation (%), mean memory utilisation (%), task "
        "completion ratio (%) (fractions in [0, 1]: the interval stays inside 0-100 %"
    ) in report
    assert "log scale, back-transformed: m·exp(±t·s/(√n·m)) for mean job completion time" in report
    stored = pd.read_parquet(tmp_path / "sweep_report.parquet")
    cpu = stored[stored["metric"] == "util_cpu"].iloc[0]
    assert cpu["ci_method"] == "logit-t" and cpu["ci95_high"] < 1.0
    # the figure's error bar ends inside the axis too
    fig = metric_figure(aggregate(_runs(NEAR_FULL)), "util_cpu")
    tops = [seg[:, 1].max() for c in fig.axes[0].collections for seg in c.get_segments()]
    assert tops and max(tops) == pytest.approx(100 * cpu["ci95_high"]) and max(tops) < 100
    assert "95 % logit-t interval" in fig.axes[0].get_title()
