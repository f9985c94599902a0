"""What ``fairsim run`` prints per scheduler (issue 39, frictions 4 and 6): the report's overload
warning as one line when the rule applies, and what ``tasks_per_s`` counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import two_users_config

from fairsim.cli import main


def _run(
    tmp_path: Path, horizon_s: float, capsys: pytest.CaptureFixture[str]
) -> tuple[list[str], list[str]]:
    """``fairsim run``'s stdout and stderr lines."""
    out = tmp_path / f"out-{horizon_s:g}"
    assert (
        main(
            ["run", str(two_users_config(tmp_path, horizon_s)), "--out", str(out), "--no-progress"]
        )
        == 0
    )
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err.splitlines()


def test_an_overloaded_pool_is_one_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, err = _run(tmp_path, 20.0, capsys)
    out = tmp_path / "out-20"
    summaries = {n: json.loads((out / n / "summary.json").read_text()) for n in ("drf", "bf-drfh")}
    # two tasks fit at a time (any three exceed the server: 2a + b needs cpu 1.1, a + 2b mem
    # 1.1), 10 s each: two start at 0, 10 and 20 s (the horizon), 14 of 20 are still queued
    assert [s["ended"]["queued"] for s in summaries.values()] == [14, 14]
    assert not [line for line in lines if line.startswith("warning")]  # on stderr, as others
    warnings = [line for line in err if line.startswith("warning:")]
    assert warnings == [
        "warning: the pool is overloaded: still queued at the horizon: 70 % under drf, 70 % under "
        "bf-drfh of the tasks that arrived (the rule: more than 50 %); completion and JCT "
        "describe a saturated queue, not the schedulers at a load the pool can serve: add "
        "servers (cluster.servers) or shorten the window (report.md)"
    ]
    assert lines[-1] == f"results in {out}"
    report = (out / "report.md").read_text()
    assert "**The pool is overloaded** under drf (14 of 20 tasks queued, 70 %" in report


def test_no_warning_when_the_pool_serves_the_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, err = _run(tmp_path, 200.0, capsys)
    assert not [line for line in lines + err if line.startswith("warning")]
    assert "overloaded" not in (tmp_path / "out-200" / "report.md").read_text()


def test_the_console_says_what_tasks_per_s_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, _ = _run(tmp_path, 200.0, capsys)
    s = json.loads((tmp_path / "out-200" / "drf" / "summary.json").read_text())
    assert s["tasks"] == 20 and s["tasks_per_s"] > 0
    assert s["tasks_per_s_counts"].startswith("tasks that arrived by the horizon")
    assert lines[0] == (
        f"             drf: 20/20 tasks completed, cpu 30.0 %, mem 30.0 %; 20 tasks simulated "
        f"in {s['wall_s']:.1f} s ({s['tasks_per_s']:,.0f} tasks/s)"
    )
