"""``fairsim sweep-report`` on sweeps it used to end in a traceback on: a grid point where no job
completed under any seed, and damaged or foreign files; its outputs are written together or not
at all."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from fairsim.cli import main
from fairsim.scenario.reporting import sweep_report as sr


def _sweep(out: Path) -> Path:
    """A constructed sweep of ``collect.horizon_s`` 300 and 3000 s, one seed, Slots-14 (the
    reference) and Best-Fit DRFH: at 300 s no job completed under either (mean JCT NaN)."""
    rows = []
    for horizon, jct in ((300, (math.nan, math.nan)), (3000, (600.0, 650.0))):
        for sched, util, ratio, mean_jct in zip(
            ("slots-14", "bf-drfh"), (0.25, 0.5), (0.5, 0.75), jct, strict=True
        ):
            rows.append(
                {
                    "run_id": f"r{horizon}",
                    "collect.horizon_s": horizon,
                    "seed": 2,
                    "scheduler": sched,
                    "status": "ok",
                    "error": None,
                    "wall_s": 1.0,
                    "tasks": 4,
                    "tasks_completed": 2,
                    "completion_ratio": ratio,
                    "util_cpu": util,
                    "util_mem": util,
                    "mean_jct_s": mean_jct,
                    "median_jct_s": mean_jct,
                }
            )
    out.mkdir()
    pd.DataFrame(rows).to_parquet(out / "runs.parquet")
    return out


def test_a_grid_point_without_a_completed_job_has_n_0(tmp_path: Path) -> None:
    """The paired table was a KeyError ``(300, 'bf-drfh', 'mean_jct_s')``: a metric with no value
    under any seed lost its column in the per-seed pivot, so the point had no paired row for
    it. It has one, with ``n = 0`` and NaN, shown as ``—``."""
    out = _sweep(tmp_path / "sw")
    written = sr.sweep_report(out)
    assert [p.name for p in written] == [
        "sweep_report.parquet",
        "sweep_paired.parquet",
        "sweep_util_cpu.png",
        "sweep_util_mem.png",
        "sweep_completion_ratio.png",
        "report.md",
    ]
    paired = pd.read_parquet(out / "sweep_paired.parquet").set_index(
        ["collect.horizon_s", "metric"]
    )
    row: dict[Any, Any] = paired.loc[[(300, "mean_jct_s")]].iloc[0].to_dict()
    assert (row["scheduler"], row["reference"], row["n"]) == ("bf-drfh", "slots-14", 0)
    assert all(math.isnan(row[c]) for c in ("mean_diff", "std", "ci95_low", "ci95_high"))
    assert math.isnan(row["ci95_half"])
    assert paired.loc[(300, "util_cpu"), "mean_diff"] == 0.25
    assert paired.loc[(3000, "mean_jct_s"), "mean_diff"] == 50.0
    assert paired.loc[(3000, "mean_jct_s"), "n"] == 1
    report = (out / "report.md").read_text()
    assert "| 300 | bf-drfh | slots-14 | 1 | 25.0 | 25.0 | — | 25.0 | — |" in report
    assert "| 3000 | bf-drfh | slots-14 | 1 | 25.0 | 25.0 | 50.0 | 25.0 | — |" in report


def test_outputs_are_written_together_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tables and figures were written one by one as they were made: a report that failed
    half-way left new tables beside an old report.md. Nothing is written until everything is
    made, and a write that fails puts none of the new files in place."""
    out = _sweep(tmp_path / "sw")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def fail(*args: object, **kwargs: object) -> str:
        raise RuntimeError("no report")

    with monkeypatch.context() as m:
        m.setattr(sr, "report_markdown", fail)
        with pytest.raises(RuntimeError, match="no report"):
            sr.sweep_report(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    sr.sweep_report(out)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = []

    def fail_second(fig: object, path: Path) -> Path:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        path.write_bytes(b"png")
        return path

    with monkeypatch.context() as m:
        m.setattr(sr, "save_figure", fail_second)
        with pytest.raises(OSError, match="No space left"):
            sr.sweep_report(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first  # no .tmp file either


def test_cli_reports_a_point_without_a_completed_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _sweep(tmp_path / "sw")
    assert main(["sweep-report", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "| 300 | bf-drfh | 1 | 50.0 | 50.0 | — | 75.0 | — |" in printed


def _refused(out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``fairsim sweep-report out``'s one-line error (exit status 2), having written nothing."""
    before = sorted(p.name for p in out.iterdir())
    assert main(["sweep-report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fairsim: error: ")
    assert sorted(p.name for p in out.iterdir()) == before
    return err.removeprefix("fairsim: error: ").rstrip("\n")


def test_damaged_or_foreign_files_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A runs.parquet that is not Parquet was a pyarrow ArrowInvalid, another table in its place
    a KeyError 'status', a damaged jobs.parquet an ArrowInvalid and a damaged summary.json a
    JSONDecodeError: each is refused in one line naming the file (compare's readers,
    :mod:`fairsim.scenario.reporting.result_files`). Missing run files stay allowed (no
    same-job-set JCT, no fairness)."""
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "runs.parquet").write_text("garbage\n")
    assert _refused(garbage, capsys) == (
        f"sweep-report: {garbage / 'runs.parquet'} is damaged: not a readable Parquet table "
        "(Parquet magic bytes not found in footer. Either the file is corrupted or this is not "
        "a parquet file.)"
    )
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    pd.DataFrame({"job_id": [1], "task_index": [0], "status": ["ok"]}).to_parquet(
        foreign / "runs.parquet"
    )
    assert _refused(foreign, capsys) == (
        f"sweep-report: {foreign / 'runs.parquet'} is damaged: no column 'run_id'"
    )
    out = _sweep(tmp_path / "sw")
    for run in ("r300", "r3000"):
        for sched in ("slots-14", "bf-drfh"):
            (out / run / sched).mkdir(parents=True)
            pd.DataFrame({"job_id": [1], "completion_time_s": [10.0]}).to_parquet(
                out / run / sched / "jobs.parquet"
            )
    jobs = out / "r3000" / "bf-drfh" / "jobs.parquet"
    jobs.write_text("junk\n")
    assert _refused(out, capsys) == (
        f"sweep-report: {jobs} is damaged: not a readable Parquet table (Parquet file size is 5 "
        "bytes, smaller than the minimum file footer (8 bytes))"
    )
    pd.DataFrame({"job_id": [1]}).to_parquet(jobs)
    assert _refused(out, capsys) == (
        f"sweep-report: {jobs} is damaged: no column 'completion_time_s'"
    )
    pd.DataFrame({"job_id": [1], "completion_time_s": [10.0]}).to_parquet(jobs)
    summary = out / "r300" / "bf-drfh" / "summary.json"
    summary.write_text("junk\n")
    assert _refused(out, capsys) == (
        f"sweep-report: {summary} is damaged: not valid JSON (Expecting value: line 1 column 1)"
    )
    summary.write_text('{"fairness": {"time_average": {"max_deficit": "0.1"}}}')
    assert _refused(out, capsys) == (
        f"sweep-report: {summary} is damaged: fairness.time_average.max_deficit is '0.1', not "
        "a number"
    )
    summary.unlink()  # missing: no fairness metrics
    assert main(["sweep-report", str(out)]) == 0
    paired = pd.read_parquet(out / "sweep_paired.parquet").set_index(
        ["collect.horizon_s", "metric"]
    )
    assert paired.loc[(3000, "common_mean_jct_s"), "mean_diff"] == 0.0
