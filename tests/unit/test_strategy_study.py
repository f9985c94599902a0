"""``fairsim strategy`` and ``fairsim.strategy``: the study's runs, table, report and resume on
the hand instance of ``test_strategy.py`` (a saturated pool of 12 unit slots, users A and B)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.scenario.strategy import COLUMNS, STRATEGY_FILE
from tests.unit.test_strategy import _saturated


def _config_file(tmp_path: Path) -> Path:
    path = _saturated(tmp_path)
    cfg = {
        "name": "strategy-study",
        "trace": {"format": "canonical", "path": str(path)},
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [12.0, 12.0]}]},
        "schedulers": ["drf", "dynamic-drf"],
        "collect": {"utilization_interval_s": 50, "horizon_s": 150},
    }
    out = tmp_path / "study.yaml"
    out.write_text(yaml.safe_dump(cfg))
    return out


def test_study_table_null_and_split(tmp_path: Path) -> None:
    """Null manipulations give gain and harm 0 exactly; A split in two completes 8 of the 12
    first-wave tasks instead of 6 (gain 8/6 - 1 = 1/3) and B 4 instead of 6 (harm -1/3), under
    DRF and dynamic DRF, for each seed."""
    config = _config_file(tmp_path)
    out = tmp_path / "out"
    table = fairsim.strategy(
        config,
        users="A",
        strategies=["inflate:cpu=1", "split:k=1", "split:k=2"],
        seeds=[1, 2],
        out=out,
    )
    assert list(table.columns) == list(COLUMNS)
    assert len(table) == 2 * 3 * 2  # schedulers x strategies x seeds
    pd.testing.assert_frame_equal(table, pd.read_parquet(out / STRATEGY_FILE))
    null = table[table["params"].isin(["cpu=1", "k=1"])]
    assert (null["gain"] == 0.0).all() and (null["harm"] == 0.0).all()
    assert (null["tasks_completed"] == 6).all() and (
        null["jct_mean_s"] == null["jct_mean_truthful_s"]
    ).all()
    split = table[table["params"] == "k=2"]
    assert sorted(split["scheduler"]) == ["drf", "drf", "dynamic-drf", "dynamic-drf"]
    assert (split["tasks_completed_truthful"] == 6).all() and (split["tasks_completed"] == 8).all()
    assert split["gain"].tolist() == [8 / 6 - 1] * 4
    assert split["harm"].tolist() == [4 / 6 - 1] * 4
    report = (out / "report.md").read_text()
    assert (
        "| drf | split | k=2 | 2 | +33.33 % [+33.33, +33.33] | -33.33 % [-33.33, -33.33] |"
        in report
    )
    command = "fairsim strategy counterexamples/drf.yaml --users 'A' --strategy split:k=2 --seeds 1"
    assert f"- drf: +33.33 % for user `A` with `split:k=2`, seed 1; replay: `{command}" in report
    # the counterexample replays: its config holds the one scheduler and the seed
    replay = yaml.safe_load((out / "counterexamples" / "drf.yaml").read_text())
    assert replay["schedulers"] == ["drf"] and replay["seed"] == 1
    again = fairsim.strategy(
        out / "counterexamples" / "drf.yaml",
        users="A",
        strategies=["split:k=2"],
        seeds=[1],
        out=tmp_path / "replay",
    )
    assert again["gain"].tolist() == [8 / 6 - 1]
    assert (out / "gain.png").stat().st_size > 0
    assert (out / "s1-truthful" / "DONE").is_file()


def test_study_resumes_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line runs the same study; run again, it runs nothing (the DONE markers keep
    their times) and writes the same table."""
    config = _config_file(tmp_path)
    out = tmp_path / "out"
    argv = [
        "strategy", str(config), "--users", "A", "--strategy", "split:k=2",
        "--seeds", "1-2", "--out", str(out), "--executor", "serial", "--no-progress",
    ]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "drf split:k=2" in printed and "gain +33.33 %" in printed
    first = pd.read_parquet(out / STRATEGY_FILE)
    marks = {p: p.stat().st_mtime_ns for p in out.glob("*/DONE")}
    assert len(marks) == 4  # two truthful runs, two manipulated
    assert main(argv) == 0
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/DONE")} == marks
    pd.testing.assert_frame_equal(first, pd.read_parquet(out / STRATEGY_FILE))
    # the same --out with another config (the horizon moved): refused, not answered with the
    # first study's runs (their folder names depend only on seed, user and strategy)
    capsys.readouterr()
    cfg = yaml.safe_load(config.read_text())
    cfg["collect"]["horizon_s"] = 120
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(cfg))
    assert main([argv[0], str(other), *argv[2:]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a study of another config (run s1-truthful, drf" in err
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/DONE")} == marks


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strategy", "inflate:cpu=0.5"], "factor 0.5 for 'cpu' is below 1"),
        (["--strategy", "split:k=2", "--users", "nobody"], "user 'nobody' submits no task"),
        (["--strategy", "split:k=2", "--users", "top:0"], "K '0' is not an integer >= 1"),
        # before: top:3 of users A and B studied both, the report saying top:3
        (
            ["--strategy", "split:k=2", "--users", "top:3"],
            "--users 'top:3': K 3 is above the 2 users with tasks in the window",
        ),
        (["--strategy", "split:k=2", "--seeds", "3-1"], "the range 3-1 is empty"),
        # before: k = 7 passed (A has 24 tasks) though A's 6 jobs are dealt whole, so one
        # alias had no job; k above the jobs of a one-job user ran the plain run as a split
        (
            ["--strategy", "split:k=7"],
            "--strategy 'split:k=7': user 'A' submits 6 job(s) in the window, fewer than k = 7 "
            "aliases (a job's tasks stay together, so an alias would have no job; choose k <= 6)",
        ),
    ],
)
def test_study_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    config = _config_file(tmp_path)
    argv = ["strategy", str(config), "--users", "A", "--out", str(tmp_path / "o"), *extra]
    with pytest.raises(SystemExit) if "--seeds" in extra else _nothing():
        code = main(argv)
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_a_split_alias_that_is_a_trace_user_is_refused(tmp_path: Path) -> None:
    """User ``A#2`` of the trace would be counted as A's second alias under ``split:k=2``
    (before: a gain of +2,014 % on a synthetic trace with a user renamed so)."""
    from fairsim.errors import ConfigError
    from fairsim.traces.io import write_tasks
    from tests.unit.test_strategy import _tasks

    config = _config_file(tmp_path)
    rows = [(j, u, 0.0, 1.0, 1.0, 100.0) for j, u in enumerate(["A", "A", "A#2", "B", "B"])]
    write_tasks(_tasks(rows), tmp_path / "aliases.parquet")
    cfg = yaml.safe_load(config.read_text())
    cfg["trace"]["path"] = str(tmp_path / "aliases.parquet")
    config.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=r"^--strategy 'split:k=2': user 'A''s alias 'A#2' is "):
        fairsim.strategy(config, users="A", strategies=["split:k=2"], seeds=[1], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
    table = fairsim.strategy(  # B's alias B#2 is free
        config, users="B", strategies=["split:k=2"], seeds=[1], out=tmp_path / "b"
    )
    assert len(table) == 2


def test_a_seed_strategy_parquet_cannot_store_is_refused(tmp_path: Path) -> None:
    """``strategy.parquet`` stores seeds as 64-bit integers: 2**63 would be written as
    -9223372036854775808 (as ``runs.parquet`` did in a sweep), so it is refused first."""
    from fairsim.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^--seeds: \[9223372036854775808\] \(expected integers"):
        fairsim.strategy(
            _config_file(tmp_path), users="A", strategies=["split:k=2"], seeds=[2**63],
            out=tmp_path / "o",
        )  # fmt: skip
    assert not (tmp_path / "o").exists()


def _synthetic_file(tmp_path: Path) -> Path:
    """A synthetic workload of 200 tasks (drawn from the seed: seed 1's top user is u1 with 97
    tasks, seed 3's u0 with 190; u93 submits 44 tasks in seed 1 and none in seed 3)."""
    cfg = {
        "name": "strategy-synthetic",
        "seed": 1,
        "trace": {"format": "synthetic", "n_tasks": 200, "duration_s": 600},
        "cluster": {"servers": 4},
        "schedulers": ["drf"],
        "collect": {"utilization_interval_s": 60},
    }
    out = tmp_path / "syn.yaml"
    out.write_text(yaml.safe_dump(cfg))
    return out


def test_top_users_of_a_seed_drawn_workload_are_each_seeds_own(tmp_path: Path) -> None:
    """A synthetic workload is drawn from the seed, so ``top:K`` is each seed's own K users and
    ``strategy.parquet``'s ``user`` says which (before: the config seed's top users for every
    seed, so seed 3's rows were of u1, absent from its workload: 0 tasks submitted, gain NaN,
    and the console's 'over 1 seeds' for two seeds asked)."""
    from fairsim.errors import ConfigError

    config = _synthetic_file(tmp_path)
    table = fairsim.strategy(
        config, users="top:1", strategies=["inflate:cpu=1.5"], seeds=[1, 3], out=tmp_path / "o",
        executor="serial",
    )  # fmt: skip
    assert table[["user", "seed", "tasks_submitted"]].values.tolist() == [
        ["u1", 1, 97],
        ["u0", 3, 190],
    ]
    report = (tmp_path / "o" / "report.md").read_text()
    assert "1 manipulating users per seed (2 in all: the workload is drawn from the seed" in report
    # a named user must be in every seed's workload
    with pytest.raises(ConfigError, match=r"^--users: user 'u93' submits no task in the window of "
                       r"seed 3 \(the synthetic workload is drawn from the seed"):  # fmt: skip
        fairsim.strategy(
            config, users="u93", strategies=["inflate:cpu=1.5"], seeds=[1, 3],
            out=tmp_path / "named",
        )  # fmt: skip
    assert not (tmp_path / "named").exists()


def test_split_above_a_users_jobs_is_refused_per_seed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``split`` deals whole jobs, so ``k`` above a named user's jobs is refused, per seed when
    the workload is drawn from it: seed 3's u0 has one job of 190 tasks (before: it ran unsplit
    and reported gain 0 as if splitting had been tried). Users chosen by rank (``top:K``) run,
    with a warning naming those with fewer jobs than ``k`` (a study of the top users runs
    whatever their jobs)."""
    from fairsim.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match=r"^--strategy 'split:k=2': user 'u0' submits 1 job\(s\) in the window of seed 3, "
        r"fewer than k = 2 aliases",
    ):
        fairsim.strategy(
            _synthetic_file(tmp_path), users="u0", strategies=["split:k=2"], seeds=[3],
            out=tmp_path / "o",
        )  # fmt: skip
    assert not (tmp_path / "o").exists()
    with caplog.at_level("WARNING", logger="fairsim.scenario.strategy"):
        fairsim.strategy(
            _synthetic_file(tmp_path), users="top:1", strategies=["split:k=2"], seeds=[1, 3],
            out=tmp_path / "ranked",
        )  # fmt: skip
    warned = [r.getMessage() for r in caplog.records if "fewer than k = 2 jobs" in r.getMessage()]
    assert warned == [
        "--strategy 'split:k=2': 1 of the 1 users submit fewer than k = 2 jobs in the window of "
        "seed 3 (u0: 1): a job's tasks stay together, so their aliases beyond their jobs get none "
        "(with one job, the plain run: gain 0)"
    ]
