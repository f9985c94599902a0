"""Runs fairsim cannot vouch for are refused or warned about, not reported as a success: a
horizon before the first submission (it printed ``0/0 tasks completed``, exit 0), and a workload
whose tasks fit no server (``0/10 tasks completed``, exit 0, no warning)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from fairsim.cli import main
from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config

INLINE = {
    "name": "empty",
    "seed": 1,
    "trace": {
        "format": "inline",
        "users": [{"name": "a", "demand": [0.1, 0.1], "tasks": 10, "run_s": 1, "join_s": 100}],
    },
    "cluster": {"classes": [{"name": "s", "count": 2, "capacity": [1.0, 1.0]}]},
    "schedulers": ["drf", "bf-drfh"],
    "collect": {"utilization_interval_s": 5, "horizon_s": 50},
}


def _run(
    tmp_path: Path, data: dict, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, Path]:
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "o"
    code = main(["run", str(config), "--out", str(out), "--no-progress"])
    std = capsys.readouterr()
    return code, std.out, std.err, out


def _refused(code: int, err: str, out: Path, pattern: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert re.search(pattern, lines[0]), lines[0]
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.*")), "temporary folder left behind"


def test_a_horizon_before_the_inline_users_join_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err, out = _run(tmp_path, INLINE, capsys)
    _refused(
        code,
        err,
        out,
        r"^fairsim: error: config: collect\.horizon_s: 50 s is before the first submission, at "
        r"100 s \(trace\.users\.0\.join_s\): the simulation would end before any task is "
        r"submitted \(give a later horizon\)$",
    )


def test_the_first_submission_is_the_earliest_join_inside_the_window() -> None:
    users = [
        {"name": "early", "demand": [0.1, 0.1], "tasks": 1, "run_s": 1, "join_s": 0},
        {"name": "b", "demand": [0.1, 0.1], "tasks": 1, "run_s": 1, "join_s": 300},
        {"name": "c", "demand": [0.1, 0.1], "tasks": 1, "run_s": 1, "join_s": 200},
    ]
    data = {**INLINE, "trace": {"format": "inline", "users": users, "start_s": 10}}
    data["collect"] = {"utilization_interval_s": 5, "horizon_s": 150}
    with pytest.raises(ConfigError, match=r"at 200 s \(trace\.users\.2\.join_s\)"):
        parse_config(data)
    # a task submitted at the horizon is simulated (it starts there): not an empty run
    parse_config({**data, "collect": {"utilization_interval_s": 5, "horizon_s": 200}})


def test_a_horizon_before_the_traces_first_task_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    syn = tmp_path / "syn"
    assert main(["trace", "synth", "--tasks", "40", "--out", str(syn)]) == 0
    capsys.readouterr()
    first = float(
        pq.read_table(syn / "tasks.parquet", columns=["submit_s"])["submit_s"].to_numpy().min()
    )
    assert first > 0
    data = {
        "name": "t",
        "trace": {"format": "canonical", "path": str(syn)},
        "cluster": {"servers": 5, "source": "table-i"},
        "schedulers": ["bf-drfh"],
        "collect": {"horizon_s": first / 2, "utilization_interval_s": first / 8},
    }
    code, _, err, out = _run(tmp_path, data, capsys)
    _refused(
        code,
        err,
        out,
        rf"^fairsim: error: config: collect\.horizon_s: {first / 2:g} s is before the first "
        rf"submission, at {first:g} s \(the first task of the window\): the simulation would "
        r"end before any task is submitted \(give a later horizon\)$",
    )


def test_tasks_that_fit_no_server_are_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    users = [{"name": "a", "demand": [2, 0.1], "tasks": 10, "run_s": 1}]
    data = {**INLINE, "trace": {"format": "inline", "users": users}}
    data["collect"] = {"utilization_interval_s": 5, "horizon_s": 200}
    code, stdout, err, out = _run(tmp_path, data, capsys)
    assert code == 0, err
    assert "0/10 tasks completed" in stdout
    assert err.splitlines() == [
        "warning: tasks fit no server: skipped as unplaceable: 10 of 10 tasks (100 %) under drf, "
        "10 of 10 tasks (100 %) under bf-drfh (the rule: more than 10 % of the tasks that "
        "arrived); completion and JCT describe the rest of the workload only: check the demands "
        "against the servers' capacities (report.md)"
    ]
    report = (out / "report.md").read_text()
    assert (
        "**Tasks fit no server** under drf (10 of 10 tasks, 100 %), bf-drfh (10 of 10 tasks, "
        "100 %): skipped as unplaceable" in report
    )


def test_a_few_unplaceable_tasks_are_the_tables_not_a_warning() -> None:
    from fairsim.scenario.reporting.run_report import unplaceable_line, unplaceable_note

    few = {"slots-8": {"tasks": 7255, "ended": {"unplaceable": 44}}}  # alibaba-gpu-2023's
    assert unplaceable_line(few) is None and unplaceable_note(few) is None
    edge = {"drf": {"tasks": 10, "ended": {"unplaceable": 1}}}
    assert unplaceable_line(edge) is None
    many = {"drf": {"tasks": 10, "ended": {"unplaceable": 2}}}
    assert unplaceable_line(many) is not None and unplaceable_note(many) is not None
