"""The sweep report on a tiny real sweep: report.md with the tables, the headline table printed,
mean JCT over the same job set, paired intervals, axes from 0 and registry labels."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairsim.cli import main
from fairsim.scenario.reporting.sweep_report import (
    aggregate,
    metric_figure,
    paired_differences,
    with_common_jct,
)
from fairsim.scenario.sweep import parse_sweep, run_sweep
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

SWEEP = {
    "name": "tiny-report",
    "base": {
        "trace": {"format": "synthetic", "n_tasks": 800, "duration_s": SAMPLE_WINDOW_S},
        "cluster": {"servers": 20, "source": "table-i"},
        "schedulers": ["slots-14", "bf-drfh"],
        "collect": {"utilization_interval_s": 120},
    },
    "grid": {"cluster.servers": [20, 40]},
    "seeds": [1, 2, 3],
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "tiny-report"
    run_sweep(parse_sweep(SWEEP), out, executor="local:1", progress=False)
    return out


def test_common_jct_is_over_jobs_completed_by_every_scheduler(swept: Path) -> None:
    runs = with_common_jct(swept, pd.read_parquet(swept / "runs.parquet"))
    row = runs[(runs["cluster.servers"] == 20) & (runs["seed"] == 1)]
    jobs = {
        r.scheduler: pd.read_parquet(swept / r.run_id / r.scheduler / "jobs.parquet")
        .dropna(subset=["completion_time_s"])
        .set_index("job_id")["completion_time_s"]
        for r in row.itertuples()
    }
    common = jobs["slots-14"].index.intersection(jobs["bf-drfh"].index)
    assert 0 < len(common) < max(len(v) for v in jobs.values())  # the sets differ: a real test
    for r in row.itertuples():
        assert r.common_jobs == len(common)
        assert r.common_mean_jct_s == pytest.approx(jobs[r.scheduler].loc[common].mean())


def test_paired_interval_is_the_t_interval_of_per_seed_differences(swept: Path) -> None:
    runs = with_common_jct(swept, pd.read_parquet(swept / "runs.parquet"))
    paired = paired_differences(runs)
    assert set(paired["reference"]) == {"slots-14"} and set(paired["scheduler"]) == {"bf-drfh"}
    p = paired[(paired["cluster.servers"] == 20) & (paired["metric"] == "common_mean_jct_s")]
    assert len(p) == 1 and p["n"].iloc[0] == 3
    at20 = runs[runs["cluster.servers"] == 20]
    wide = at20.pivot_table(index="seed", columns="scheduler", values="common_mean_jct_s")
    d = (wide["bf-drfh"] - wide["slots-14"]).to_numpy()
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert p["mean_diff"].iloc[0] == pytest.approx(d.mean())
    assert p["ci95_half"].iloc[0] == pytest.approx(half)
    # pairing removes the seed-to-seed spread both schedulers share: narrower than unpaired
    table = aggregate(runs)
    unpaired = table[
        (table["cluster.servers"] == 20)
        & (table["metric"] == "common_mean_jct_s")
        & (table["scheduler"] == "bf-drfh")
    ]["ci95_half"].iloc[0]
    assert half < unpaired


def test_figures_start_at_zero_with_registry_labels_and_paired_panel(swept: Path) -> None:
    runs = with_common_jct(swept, pd.read_parquet(swept / "runs.parquet"))
    table, paired = aggregate(runs), paired_differences(runs)
    fig = metric_figure(table, "util_cpu", paired)
    top, bottom = fig.axes
    assert top.get_ylim() == (0.0, 105.0)
    assert list(top.get_yticks()) == [0, 20, 40, 60, 80, 100]
    assert top.get_ylabel() == "Mean CPU utilisation (%)"
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["slots-14", "bf-drfh"]
    assert "mean over 3 seeds" in top.get_title()
    assert bottom.get_ylabel() == "difference to slots-14 (%)"
    assert "Paired: per-seed difference to slots-14" in bottom.get_title()
    assert "(n = 3 seeds)" in bottom.get_title()
    assert bottom.get_xlabel() == "Number of servers"
    jct = metric_figure(table, "common_mean_jct_s", paired).axes[0]
    assert jct.get_ylim()[0] == 0.0
    assert jct.get_ylabel() == "Mean JCT over the same jobs (s)"
    assert "jobs completed under every scheduler" in jct.get_title()
    assert np.isfinite(jct.get_ylim()[1])


def test_cli_prints_the_headline_table_and_writes_report(
    swept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep-report", str(swept)]) == 0
    printed = capsys.readouterr().out
    header = printed.splitlines()[0]
    assert header.startswith("| cluster.servers | scheduler | seeds | Mean CPU utilisation (%)")
    assert "| 20 | bf-drfh | 3 |" in printed
    assert str(swept / "report.md") in printed
    text = (swept / "report.md").read_text()
    assert header in text
    assert "## Paired differences against slots-14" in text
    assert "| 40 | bf-drfh | slots-14 | 3 |" in text
    assert "jobs completed under every scheduler of the same grid point and seed" in text
    for m in ("util_cpu", "util_mem", "completion_ratio", "common_mean_jct_s"):
        assert f"![{m}](sweep_{m}.png)" in text and (swept / f"sweep_{m}.png").is_file()
    assert not (swept / "sweep_mean_jct_s.png").exists()  # different job sets: not drawn
