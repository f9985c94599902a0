"""``fairsim.load`` (a written run read back equals ``simulate``'s result), ``RunResult``'s HTML,
provenance in ``summary.json`` and the delay metrics on a scenario computable by hand."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import hand_scenario

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario import provenance as prov
from fairsim.scenario.api import RunResult

#: b waits for a's tasks and runs 100 - 150 s (helpers.hand_scenario).
HAND: dict[str, Any] = hand_scenario()


def test_delay_metrics_by_hand() -> None:
    s = fairsim.simulate(HAND)["bf-drfh"].summary
    # queueing delays 0, 0, 90 s; numpy linear percentiles: p95 = 0.9 * 90, p99 = 0.98 * 90
    assert s["queueing_delay_s"] == pytest.approx(
        {"tasks": 3, "mean": 30.0, "p50": 0.0, "p95": 81.0, "p99": 88.2}
    )
    # JCT: a 100 s, b 150 - 10 = 140 s
    assert s["jct_s"] == pytest.approx(
        {"jobs": 2, "excluded_jobs": 0, "mean": 120.0, "p50": 120.0, "p95": 138.0, "p99": 139.6}
    )
    # slowdown: a 100 / 100, b 140 / 50
    sd = {k: v for k, v in s["slowdown"].items() if k != "definition"}
    assert sd == pytest.approx({"jobs": 2, "mean": 1.9, "p50": 1.9, "p95": 2.71, "p99": 2.782})
    assert "longest task" in s["slowdown"]["definition"]
    # per-user mean JCT 100 and 140: max/min 1.4, cv = 20 / 120
    assert s["user_jct"] == pytest.approx(
        {"users": 2, "min_mean_s": 100.0, "max_mean_s": 140.0, "max_over_min": 1.4, "cv": 1 / 6}
    )


def test_excluded_jobs_are_counted() -> None:
    """With the horizon at 120 s, b's task never finishes: its job is excluded and counted."""
    cfg = {**HAND, "collect": {"utilization_interval_s": 10, "horizon_s": 120}}
    s = fairsim.simulate(cfg)["bf-drfh"].summary
    assert s["jct_s"]["jobs"] == 1 and s["jct_s"]["excluded_jobs"] == 1
    assert s["jct_s"]["mean"] == pytest.approx(100.0)
    assert s["queueing_delay_s"]["tasks"] == 3  # b started at 100 s
    assert s["user_jct"]["users"] == 1 and s["user_jct"]["max_over_min"] == pytest.approx(1.0)


def test_load_equals_simulate(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = fairsim.simulate(HAND, out=out)
    back = fairsim.load(out)
    assert isinstance(back, dict) and list(back) == list(ran) == ["bf-drfh", "ff-drfh"]
    for name, r in ran.items():
        b = back[name]
        assert b.summary == r.summary
        for table in ("tasks", "jobs", "users", "utilization", "user_jct"):
            pd.testing.assert_frame_equal(getattr(b, table), getattr(r, table))
    # the in-memory result has the same tables and (machine numbers aside) the same summary
    mem = fairsim.simulate(HAND)["bf-drfh"]
    pd.testing.assert_frame_equal(mem.jobs, back["bf-drfh"].jobs)
    pd.testing.assert_frame_equal(mem.user_jct, back["bf-drfh"].user_jct)
    volatile = {"wall_s", "tasks_per_s", "peak_rss_mb"}
    assert {k: v for k, v in mem.summary.items() if k not in volatile} == {
        k: v for k, v in back["bf-drfh"].summary.items() if k not in volatile
    }
    one = fairsim.load(out / "ff-drfh")
    assert isinstance(one, RunResult) and one.scheduler == "ff-drfh"
    assert one.summary == ran["ff-drfh"].summary


def test_load_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not a fairsim run folder"):
        fairsim.load(tmp_path)
    # a missing folder is said to be missing (it was "not a fairsim run folder")
    with pytest.raises(ConfigError) as err:
        fairsim.load(tmp_path / "nonexistent")
    assert str(err.value) == (
        f"{tmp_path / 'nonexistent'}: no such folder (expected a fairsim run folder or a "
        "scheduler's folder in one)"
    )


def test_repr_html_has_the_headline() -> None:
    r = fairsim.simulate(HAND)["bf-drfh"]
    page = r._repr_html_()
    assert page.startswith("<div><b>RunResult bf-drfh</b>")
    assert "<th style='text-align:left'>mean JCT (s)</th><td>120.0</td>" in page
    assert "<td>120.0 / 138.0 / 139.6</td>" in page  # JCT p50 / p95 / p99
    assert "<td>30.0 / 81.0</td>" in page  # queueing delay mean / p95
    assert "<td>1.90</td>" in page  # mean slowdown


def test_provenance_in_every_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fairsim.simulate(HAND, out=out)
    top = json.loads((out / "summary.json").read_text())
    mine = prov.provenance()
    assert mine["fairsim_version"] == fairsim.__version__
    for name in ("bf-drfh", "ff-drfh"):
        s = json.loads((out / name / "summary.json").read_text())
        assert s["fairsim_version"] == top[name]["fairsim_version"] == fairsim.__version__
        assert s["git_commit"] == top[name]["git_commit"] == mine["git_commit"]
        assert s["config_hash"] == top[name]["config_hash"]
    repo = Path(fairsim.__file__).resolve().parent.parent
    if (repo / ".git").exists():  # a checkout (the tests run from one): HEAD, maybe dirty
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        assert mine["git_commit"] in (head, f"{head}-dirty")


def test_git_commit_outside_a_checkout_and_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "site" / "fairsim"
    pkg.mkdir(parents=True)
    assert prov.git_commit(pkg) is None
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the path: None, never an error
    assert prov.git_commit(Path(fairsim.__file__).resolve().parent) is None


def test_git_commit_dirty_mark(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q")
    (tmp_path / "fairsim").mkdir()
    (tmp_path / "fairsim" / "x.py").write_text("a = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    head = git("rev-parse", "HEAD")
    assert prov.git_commit(tmp_path / "fairsim") == head
    (tmp_path / "fairsim" / "x.py").write_text("a = 2\n")
    assert prov.git_commit(tmp_path / "fairsim") == f"{head}-dirty"
