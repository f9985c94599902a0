"""``fairsim compare`` / ``fairsim.compare``: rows on the common job set, paired intervals,
figures with labelled axes, refusals."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from helpers import hand_scenario
from matplotlib.figure import Figure
from scipy import stats

import fairsim
from fairsim.cli import main
from fairsim.errors import ConfigError, ResultError
from fairsim.scenario.reporting import compare_report


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """``small``: b waits (JCT a 100 s, b 140 s); ``big``: every task starts at once (a 100 s,
    b 50 s). Same trace and seed, another pool (``cluster.classes``): not paired."""
    small, big = tmp_path / "small", tmp_path / "big"
    fairsim.simulate(hand_scenario(1.0, ["bf-drfh"]), out=small)
    fairsim.simulate(hand_scenario(1.5, ["bf-drfh"]), out=big)
    return small, big


def test_rows_by_hand(runs: tuple[Path, Path], tmp_path: Path) -> None:
    small, big = runs
    c = fairsim.compare([small, big / "bf-drfh"], out=tmp_path / "cmp")
    # the runs differ in a list (cluster.classes): labelled by their folders
    assert list(c.table.index) == ["small/bf-drfh", "big/bf-drfh"]
    assert c.common_jobs == 2 and c.jobs == 2
    t = c.table
    assert t.loc["small/bf-drfh", "jct_mean_s"] == pytest.approx(120.0)
    assert t.loc["big/bf-drfh", "jct_mean_s"] == pytest.approx(75.0)
    assert t.loc["big/bf-drfh", "jct_p95_s"] == pytest.approx(50 + 0.95 * 50)
    assert t.loc["small/bf-drfh", "delay_mean_s"] == pytest.approx(30.0)
    assert t.loc["big/bf-drfh", "delay_mean_s"] == pytest.approx(0.0)
    assert t.loc["small/bf-drfh", "slowdown_mean"] == pytest.approx(1.9)
    assert t.loc["big/bf-drfh", "slowdown_mean"] == pytest.approx(1.0)
    assert t.loc["small/bf-drfh", "user_jct_max_over_min"] == pytest.approx(1.4)
    # another pool: the difference of the means (0, -90 per job), no paired interval
    assert not c.paired and list(t["paired"]) == [True, False]
    assert t.loc["big/bf-drfh", "djct_mean_s"] == pytest.approx(-45.0)
    assert t[["djct_low_s", "djct_high_s"]].loc["big/bf-drfh"].isna().all()
    assert c.unpaired == {"big": ["cluster.classes"]}
    assert set(c.differences) == {"cluster.classes"}
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "the 2 jobs completed under every row" in report
    assert "same pool" not in report and "Paired:" not in report
    assert (
        "Not paired: `big/bf-drfh`, whose runs differ from `small/bf-drfh`'s in "
        "`cluster.classes` (another workload or pool)" in report
    )
    assert "| big/bf-drfh | 100.0 %" not in report  # utilisation is the run's own
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == [
        "jct_cdf.png",
        "jct_mean.png",
        "report.md",
        "utilization.png",
    ]


def test_paired_interval_by_hand(tmp_path: Path) -> None:
    """One run, one pool: Best-Fit DRFH and Slots-1 (one task at a time) are paired. Per-job
    JCT: bf-drfh (100, 140, 90) s, slots-1 (200, 240, 240) s; differences (100, 100, 150)."""
    cfg = hand_scenario(1.0, ["bf-drfh", "slots-1"])
    cfg["trace"]["users"].append(
        {"name": "c", "join_s": 20, "tasks": 1, "demand": [0.5, 0.5], "run_s": 10}
    )
    fairsim.simulate(cfg, out=tmp_path / "one")
    c = fairsim.compare([tmp_path / "one"], out=tmp_path / "cmp")
    assert list(c.table.index) == ["bf-drfh", "slots-1"] and c.paired and c.common_jobs == 3
    # mean 350/3, standard error of (100, 100, 150): 50/3; t(0.975, 2 dof) = 4.302653
    half = stats.t.ppf(0.975, 2) * 50 / 3
    assert half == pytest.approx(71.7109, abs=1e-4)
    row = c.table.loc["slots-1"]
    assert row["djct_mean_s"] == pytest.approx(350 / 3)
    assert (row["djct_low_s"], row["djct_high_s"]) == pytest.approx(
        (350 / 3 - half, 350 / 3 + half)
    )
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "Paired: every row's run has config seed 1, the trace window and the pool of " in report
    assert "95 % t-interval over the per-job differences" in report
    assert c.differences == {} and c.unpaired == {}


def test_figures_have_labelled_axes(runs: tuple[Path, Path]) -> None:
    c = fairsim.compare(list(runs))
    cdf = compare_report.jct_cdf_figure(c)
    assert isinstance(cdf, Figure)
    ax = cdf.axes[0]
    assert ax.get_xlabel() == "job completion time (s)"  # 50 - 140 s: within one decade, linear
    assert ax.get_ylabel() == "fraction of common jobs"
    util = compare_report.utilization_figure(c).axes[0]
    assert util.get_ylim() == (0.0, 100.0)
    assert "%" in util.get_ylabel()
    bars = compare_report.jct_mean_figure(c).axes[0]
    assert bars.get_ylim()[0] == 0.0 and bars.get_ylabel() == "mean JCT of the common jobs (s)"


def test_utilisation_bars_of_an_over_committing_run_are_drawn_whole(
    runs: tuple[Path, Path],
) -> None:
    # the replay `recorded` may request more than the pool holds (mean CPU 112.9 % on the
    # Google sample): its bar is not cut at 100 %
    c = fairsim.compare(list(runs))
    c.table.loc[c.table.index[0], "cpu_util"] = 1.129
    util = compare_report.utilization_figure(c).axes[0]
    assert util.get_ylim() == (0.0, 120.0)
    assert max(p.get_height() for p in util.patches) == pytest.approx(112.9)


def test_cdf_ticks_are_labelled_within_one_decade(runs: tuple[Path, Path]) -> None:
    """JCTs of 50 - 140 s lie within one decade: the axis is linear and its ticks carry labels."""
    c = fairsim.compare(list(runs))
    fig = compare_report.jct_cdf_figure(c)
    assert fig is not None
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels, "the JCT axis has no tick label"


def test_refuses_other_traces_and_non_runs(runs: tuple[Path, Path], tmp_path: Path) -> None:
    other = copy.deepcopy(hand_scenario(1.0, ["bf-drfh"]))
    other["trace"]["users"][1]["run_s"] = 60
    fairsim.simulate(other, out=tmp_path / "other")
    with pytest.raises(ConfigError, match=r"trace\.users .*job ids would not match"):
        fairsim.compare([runs[0], tmp_path / "other"])
    with pytest.raises(ConfigError, match=r"not a fairsim run folder"):
        fairsim.compare([runs[0], tmp_path])


def test_unpaired_when_seeds_differ(runs: tuple[Path, Path], tmp_path: Path) -> None:
    cfg = hand_scenario(1.0, ["bf-drfh"])
    cfg["seed"] = 7
    fairsim.simulate(cfg, out=tmp_path / "seed7")
    c = fairsim.compare([runs[0], tmp_path / "seed7"])
    assert not c.paired and c.unpaired == {"seed=7": ["seed"]}
    assert list(c.table.index) == ["seed=1/bf-drfh", "seed=7/bf-drfh"]  # labelled by the seed
    assert c.table.loc["seed=7/bf-drfh", ["djct_low_s", "djct_high_s"]].isna().all()
    assert c.table.loc["seed=7/bf-drfh", "djct_mean_s"] == pytest.approx(0.0)


def test_cli_prints_the_table(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(runs[0]), str(runs[1]), "--out", str(tmp_path / "c")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"runs: small ({runs[0]}), big ({runs[1]})"
    assert printed[1].startswith("they differ in: cluster.classes ")
    assert printed[2] == (
        "not paired (their runs differ from small/bf-drfh's in cluster.classes: no interval): "
        "big/bf-drfh"
    )
    assert printed[3].startswith("common job set: 2 jobs completed under every row (of 2 jobs")
    # the reference row: no difference to itself; no interval column (nothing is paired with
    # it), and no pandas index header
    ref = next(line for line in printed if line.startswith("small/bf-drfh"))
    assert ref.split()[-1] == "ref"
    big = next(line for line in printed if line.startswith("big/bf-drfh"))
    assert big.split()[-1] == "-45"
    assert not any(line.startswith("label") for line in printed)
    assert main(["compare", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"fairsim: error: {tmp_path / 'nothing'}: no such folder (expected a fairsim run folder "
        "or a scheduler's folder in one)\n"
    )


SYNTH = {
    "name": "pool",
    "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": 3600},
    "cluster": {"servers": 5, "source": "table-i"},
    "schedulers": ["bf-drfh", {"name": "psdsf", "period_s": 2}],
    "collect": {"utilization_interval_s": 60},
}


def test_names_every_difference_and_pairs_only_the_same_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 39: runs of 500 and 2,000 servers were "the same pool" and labelled by folder.
    Here ``a`` and ``c`` (5 servers) and ``b`` (20 servers, PS-DSF every 4 s): rows are labelled
    by what sets their run apart, every difference is named, and only the rows on ``a``'s pool
    are paired with ``a``'s first row."""
    fairsim.simulate(SYNTH, out=tmp_path / "a")
    other = {
        **SYNTH,
        "cluster": {"servers": 20, "source": "table-i"},
        "schedulers": ["bf-drfh", {"name": "psdsf", "period_s": 4}],
    }
    fairsim.simulate(other, out=tmp_path / "b")
    fairsim.simulate({**SYNTH, "schedulers": ["bf-drfh"]}, out=tmp_path / "c")
    dirs = [str(tmp_path / n) for n in "abc"]
    assert main(["compare", *dirs, "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out.splitlines()
    c = fairsim.compare(dirs)
    assert list(c.table.index) == [
        "servers=5:a/bf-drfh",
        "servers=5:a/psdsf-2",
        "servers=20/bf-drfh",
        "servers=20/psdsf-4",
        "servers=5:c/bf-drfh",
    ]
    assert c.differences == {
        "cluster.servers": {"servers=5:a": 5, "servers=20": 20, "servers=5:c": 5},
        "schedulers.psdsf.period_s": {"servers=5:a/psdsf-2": 2.0, "servers=20/psdsf-4": 4.0},
    }
    assert list(c.table["paired"]) == [True, True, False, False, True]
    assert c.unpaired == {"servers=20": ["cluster.servers"]}
    t = c.table
    assert t.loc[["servers=20/bf-drfh", "servers=20/psdsf-4"], "djct_low_s"].isna().all()
    assert t.loc[["servers=5:a/psdsf-2", "servers=5:c/bf-drfh"], "djct_low_s"].notna().all()
    assert (
        printed[1]
        == "they differ in: cluster.servers 5 (servers=5:a), 20 (servers=20), 5 (servers=5:c)"
    )
    assert printed[2] == (
        "scheduler parameters differ: schedulers.psdsf.period_s 2 (servers=5:a/psdsf-2), "
        "4 (servers=20/psdsf-4)"
    )
    assert printed[3] == (
        "paired with servers=5:a/bf-drfh (same seed and pool): servers=5:a/psdsf-2, "
        "servers=5:c/bf-drfh; not paired (their runs differ from servers=5:a/bf-drfh's in "
        "cluster.servers: no interval): servers=20/bf-drfh, servers=20/psdsf-4"
    )
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "The runs differ in `cluster.servers`:" in report
    assert "| `servers=20` | " in report and report.count("| 5 |") == 2
    assert "Same in every run: the trace (`synthetic`), the window (0 s to " in report
    assert "the seed (1)" in report and "the pool" not in report.split("Paired with")[0]
    assert "`psdsf.period_s` 2 (`servers=5:a/psdsf-2`), 4 (`servers=20/psdsf-4`)" in report
    assert "Not paired: `servers=20/bf-drfh`, `servers=20/psdsf-4`, whose runs differ" in report


def _tasks(folder: Path, seed: int) -> None:
    from fairsim.traces.io import write_tasks
    from fairsim.traces.synth import synth_google_like

    folder.mkdir(parents=True)
    write_tasks(
        synth_google_like(400, seed=seed, duration_s=3600.0, n_users=8), folder / "tasks.parquet"
    )


def test_same_trace_named_from_other_folders(tmp_path: Path) -> None:
    """Issue 39: a sweep's run beside a standalone run of the same trace was refused because
    ``trace.path`` was compared as text. The trace is the file the path names from the run
    folder; a run folder written before (its path relative to a config file elsewhere) is
    matched by its jobs; another trace is still refused."""
    import yaml

    _tasks(tmp_path / "data", 5)
    _tasks(tmp_path / "data2", 6)
    run = {
        "name": "alone",
        "trace": {"format": "canonical", "path": "../data", "end_s": 3600},
        "cluster": {"servers": 8},
        "schedulers": ["bf-drfh"],
        "collect": {"utilization_interval_s": 60},
    }
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "run.yaml").write_text(yaml.safe_dump(run))
    alone = tmp_path / "results" / "alone"
    assert (
        main(["run", str(tmp_path / "cfg" / "run.yaml"), "--out", str(alone), "--no-progress"]) == 0
    )
    sweep = {
        "name": "grid",
        "base": {k: v for k, v in run.items() if k != "name"},
        "grid": {"cluster.servers": [8, 16]},
        "seeds": [1],
    }
    sweep["base"]["trace"] = {**run["trace"], "path": "../../data"}
    (tmp_path / "sweeps" / "grid").mkdir(parents=True)
    (tmp_path / "sweeps" / "grid" / "sweep.yaml").write_text(yaml.safe_dump(sweep))
    out = tmp_path / "sweeps" / "grid" / "out"
    argv = ["sweep", str(tmp_path / "sweeps" / "grid" / "sweep.yaml"), "--out", str(out)]
    assert main([*argv, "--executor", "serial", "--no-progress"]) == 0
    swept = sorted(p.parent for p in out.glob("*/config.yaml"))
    paths = {yaml.safe_load((d / "config.yaml").read_text())["trace"]["path"] for d in swept}
    assert paths == {"../../../../data"}  # from sweeps/grid/out/<run id>/
    c = fairsim.compare([alone, *swept])
    assert c.common_jobs > 0 and len(c.table) == 3
    assert list(c.differences) == ["cluster.servers"]
    assert sorted(c.differences["cluster.servers"].values()) == [8, 8, 16]
    assert c.table.index[0] == "servers=8:alone/bf-drfh"
    assert list(c.table["paired"]).count(True) == 2
    # a run folder of an earlier fairsim: its config.yaml kept the config file's '../data'
    cfg = yaml.safe_load((alone / "config.yaml").read_text())
    cfg["trace"]["path"] = "../data"  # results/data does not exist
    (alone / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert fairsim.compare([alone, *swept]).common_jobs == c.common_jobs
    # another trace, named from its own run folder: refused, naming both
    other = tmp_path / "results" / "other"
    fairsim.simulate({**run, "trace": {**run["trace"], "path": str(tmp_path / "data2")}}, out=other)
    with pytest.raises(
        ConfigError,
        match=r"^compare: other/bf-drfh replays another trace: trace\.path is '.*data2' \(= "
        r".*data2\), alone/bf-drfh has '\.\./data' \(not found from its run folder\), and "
        r"their jobs differ \(job ids would not match\)$",
    ):
        fairsim.compare([alone, other])


def test_damaged_result_files_are_named(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 39: a truncated summary.json ended ``fairsim compare`` in a traceback."""
    import shutil

    small, big = runs
    summary = big / "bf-drfh" / "summary.json"
    whole = summary.read_bytes()
    summary.write_bytes(whole[:100])
    assert main(["compare", str(small), str(big), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"fairsim: error: compare: {summary} is damaged: not valid JSON (")
    assert not (tmp_path / "c").exists()
    with pytest.raises(
        ResultError, match=r"summary\.json is damaged: not valid JSON \(.*: line \d+ column \d+\)$"
    ):
        fairsim.compare([small, big])
    summary.write_bytes(whole)
    jobs = big / "bf-drfh" / "jobs.parquet"
    shutil.copy(jobs, tmp_path / "jobs.parquet")
    jobs.write_bytes(jobs.read_bytes()[:200])
    with pytest.raises(
        ResultError, match=r"jobs\.parquet is damaged: not a readable Parquet table \("
    ):
        fairsim.compare([small, big])
    shutil.copy(tmp_path / "jobs.parquet", jobs)
    (big / "bf-drfh" / "tasks.parquet").unlink()
    with pytest.raises(ResultError, match=r"bf-drfh/tasks\.parquet is missing$"):
        fairsim.compare([small, big])
    (big / "config.yaml").write_text("name: [unclosed\n")
    with pytest.raises(
        ResultError, match=r"config\.yaml is damaged: not valid YAML at line 2 \(expected .+\)$"
    ):
        fairsim.compare([small, big])


#: A synthetic run whose window (50 s) ends before any task is submitted: no job, no task.
EMPTY_WINDOW = {
    "name": "syn",
    "seed": 1,
    "trace": {"format": "synthetic", "n_tasks": 400, "duration_s": 3600},
    "cluster": {"servers": 20},
    "schedulers": ["bf-drfh", "ff-drfh", "slots-16"],
    "collect": {"horizon_s": 50, "utilization_interval_s": 10},
}


def test_a_window_without_jobs_is_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run without tasks in its window has no completion ratio (``null`` in its summaries):
    the console table printed it with ``{:.4f}`` and ended in a TypeError after report.md was
    written. It is NaN in the table, ``-`` in the console and ``—`` in the report.

    Such a run is now refused (a horizon before the first submission); its folders, written by
    an earlier fairsim, are still compared: the check is switched off to write one."""
    import fairsim.scenario.pipeline as pipeline
    from fairsim.errors import ConfigError

    with pytest.raises(ConfigError, match=r"collect\.horizon_s: 50 s is before the first "):
        fairsim.simulate(EMPTY_WINDOW, out=tmp_path / "run")
    monkeypatch.setattr(pipeline, "check_first_submission", lambda *args: None)
    fairsim.simulate(EMPTY_WINDOW, out=tmp_path / "run")
    assert main(["compare", str(tmp_path / "run"), "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[3:6] == [
        "bf-drfh    0.0   0.0      -        -   -   -   -     -       -        -           -  "
        "ref              -",
        "ff-drfh    0.0   0.0      -        -   -   -   -     -       -        -           -    "
        "-              -",
        "slots-16   0.0   0.0      -        -   -   -   -     -       -        -           -    "
        "-              -",
    ]
    assert printed[1].startswith("common job set: 0 jobs completed under every row (of 0 jobs;")
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "| ff-drfh | 0.0 % | 0.0 % | — | 0 | — | — | — | — | — | — | — | — | — | — | — |" in (
        report
    )
    assert "No common job: no CDF." in report
    c = fairsim.compare([tmp_path / "run"])
    assert c.table["completion_ratio"].dtype == "float64"
    assert c.table["completion_ratio"].isna().all() and c.common_jobs == 0
    assert list(c.table["cpu_util"]) == [0.0, 0.0, 0.0]


def test_a_comparison_that_cannot_be_shown_writes_no_folder(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console table is rendered before the report folder is put in place: when it fails,
    ``--out`` is not left behind."""
    from fairsim.scenario.compare import Comparison

    def fail(self: Comparison) -> str:
        raise RuntimeError("cannot show it")

    monkeypatch.setattr(Comparison, "headline", fail)
    with pytest.raises(RuntimeError, match="cannot show it"):
        main(["compare", str(runs[0]), "--out", str(tmp_path / "cmp")])
    assert not (tmp_path / "cmp").exists()
    assert not list(tmp_path.glob(".cmp.*"))


def test_a_summary_without_the_keys_compare_reads_is_damaged(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``summary.json`` of ``{}`` was compared: completion ``nan`` and the utilisation columns
    of every row gone (the resources are the first row's). A summary lacking a key the
    comparison reads, or with a value that is not a number, is refused naming the file and the
    key."""
    import json

    small = runs[0]
    summary = small / "bf-drfh" / "summary.json"
    whole = json.loads(summary.read_text())
    summary.write_text("{}\n")
    assert main(["compare", str(small), "--out", str(tmp_path / "c")]) == 2
    assert capsys.readouterr().err == (
        f"fairsim: error: compare: {summary} is damaged: no key 'completion_ratio'\n"
    )
    assert not (tmp_path / "c").exists()
    cases = {
        "no key 'mean_utilization'": {k: v for k, v in whole.items() if k != "mean_utilization"},
        "no key 'horizon_s'": {k: v for k, v in whole.items() if k != "horizon_s"},
        "completion_ratio is '0.5', not a number": {**whole, "completion_ratio": "0.5"},
        "mean_utilization is {}, not an object of resource -> number": {
            **whole,
            "mean_utilization": {},
        },
        "mean_utilization.mem is True, not a number": {
            **whole,
            "mean_utilization": {"cpu": 0.5, "mem": True},
        },
    }
    for why, data in cases.items():
        summary.write_text(json.dumps(data))
        with pytest.raises(ResultError) as err:
            fairsim.compare([small])
        assert str(err.value) == f"compare: {summary} is damaged: {why}"
    summary.write_text(json.dumps({**whole, "completion_ratio": None}))  # null: no ratio
    assert fairsim.compare([small]).table["completion_ratio"].isna().all()


def _two_jobs(u2: dict[str, float]) -> dict[str, object]:
    """One (1, 1) server; u1's task (0.6, 0.6) for 100 s, u2's one task as given. Slots-2 (two
    slots of (0.5, 0.5)) cannot place u1's task."""
    return {
        "name": "inl",
        "seed": 1,
        "trace": {
            "format": "inline",
            "end_s": 150,
            "users": [
                {"name": "u1", "demand": [0.6, 0.6], "tasks": 1, "run_s": 100},
                {"name": "u2", "tasks": 1, **u2},
            ],
        },
        "cluster": {"classes": [{"name": "big", "count": 1, "capacity": [1, 1]}]},
        "schedulers": ["bf-drfh", "slots-2-single"],
        "collect": {"utilization_interval_s": 10},
    }


def test_no_interval_over_fewer_than_two_common_jobs(tmp_path: Path) -> None:
    """The reference row's interval was [0.0, 0.0] over a common set of 0 jobs (its mean NaN):
    a t-interval needs two per-job differences, on every row."""
    # u2 (0.5, 0.5) for 100 s: Best-Fit DRFH completes only u1's job (u2's waits until 100 s
    # and would end at 200 s), Slots-2 only u2's: no common job
    fairsim.simulate(_two_jobs({"demand": [0.5, 0.5], "run_s": 100}), out=tmp_path / "none")
    c = fairsim.compare([tmp_path / "none"], out=tmp_path / "cmp0")
    assert c.common_jobs == 0
    t = c.table[["djct_mean_s", "djct_low_s", "djct_high_s"]]
    assert t.isna().all().all()
    report = (tmp_path / "cmp0" / "report.md").read_text()
    assert (
        "| bf-drfh | 56.7 % | 56.7 % | 0.5000 | 0 | — | — | — | — | — | — | — | — | — | — | — |"
        in (report)
    )
    # u2 (0.3, 0.3) for 20 s from 5 s: both complete it in 20 s; one common job
    fairsim.simulate(
        _two_jobs({"demand": [0.3, 0.3], "run_s": 20, "join_s": 5}), out=tmp_path / "one"
    )
    c = fairsim.compare([tmp_path / "one"], out=tmp_path / "cmp1")
    assert c.common_jobs == 1
    assert list(c.table["djct_mean_s"]) == [0.0, 0.0]
    assert c.table[["djct_low_s", "djct_high_s"]].isna().all().all()
    rows = (tmp_path / "cmp1" / "report.md").read_text().splitlines()
    assert (
        "| bf-drfh | 44.0 % | 44.0 % | 1.0000 | 1 | 20.0 | 20.0 | 20.0 | 20.0 | 0.0 | 0.0 | 1.00 "
        "| 1.00 | 0.00 | 0.0 | — |"
    ) in rows


def test_a_run_of_another_trace_format_is_named_by_its_format(tmp_path: Path) -> None:
    """A Google run against a synthetic one was refused naming ``trace.bad_row_threshold`` (the
    first key in alphabetical order that differed); the format is named first."""
    from fairsim.errors import ConfigError
    from fairsim.scenario.compare import RunRow, _check_same_trace

    google = {"format": "google-2011", "bad_row_threshold": 0.5, "path": "g"}
    rows = [
        RunRow("a", tmp_path, tmp_path / "a", {"trace": google}, {}),
        RunRow("b", tmp_path, tmp_path / "b", {"trace": {"format": "synthetic"}}, {}),
    ]
    want = (
        r"^compare: b replays another trace: trace\.format is 'synthetic', a has 'google-2011' "
        r"\(job ids would not match\)$"
    )
    with pytest.raises(ConfigError, match=want):
        _check_same_trace(rows, {})


def test_a_synthetic_trace_with_another_seed_is_another_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs of one synthetic config with seeds 1 and 2 were compared by job id ("common job
    set: 17 jobs") though job 0 is another user's job with other tasks in each: refused."""
    import pandas as pd

    # one horizon: a synthetic trace's window ends after its last submission, another per seed
    one = {**SYNTH, "schedulers": ["bf-drfh"], "collect": {"horizon_s": 4000}}
    fairsim.simulate(one, out=tmp_path / "s1")
    fairsim.simulate({**one, "seed": 2}, out=tmp_path / "s2")
    jobs = [pd.read_parquet(tmp_path / s / "bf-drfh" / "jobs.parquet") for s in ("s1", "s2")]
    j1, j2 = (j.set_index("job_id").loc[0] for j in jobs)
    assert (j1.user, j1.n_tasks) != (j2.user, j2.n_tasks)  # job 0 is not the same job
    dirs = [str(tmp_path / "s1"), str(tmp_path / "s2")]
    assert main(["compare", *dirs, "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not (tmp_path / "cmp").exists()
    assert err.startswith(
        "fairsim: error: compare: seed=2/bf-drfh replays other jobs than seed=1/bf-drfh: job "
    )
    assert err.endswith(
        "(a synthetic trace is drawn from the run's seed: 2 against 1; job ids would not match)\n"
    )
    with pytest.raises(ConfigError, match=r"^compare: seed=2/bf-drfh replays other jobs"):
        fairsim.compare(dirs)
    # the same seed on another pool replays the same jobs: compared, not paired
    fairsim.simulate({**one, "cluster": {"servers": 8, "source": "table-i"}}, out=tmp_path / "p")
    c = fairsim.compare([tmp_path / "s1", tmp_path / "p"])
    assert c.unpaired == {"servers=8": ["cluster.servers"]} and c.common_jobs > 0


def test_a_scheduler_of_the_config_without_results_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run folder whose config lists a scheduler whose folder is gone was compared without
    it, silently; refused in one line, and its other scheduler folders still compare."""
    import shutil

    run = tmp_path / "one"
    fairsim.simulate(hand_scenario(1.0, ["bf-drfh", "slots-1"]), out=run)
    shutil.rmtree(run / "slots-1")
    assert main(["compare", str(run), "--out", str(tmp_path / "cmp")]) == 2
    assert capsys.readouterr().err == (
        f"fairsim: error: compare: {run} lists scheduler slots-1 in its config.yaml, but "
        f"{run / 'slots-1' / 'summary.json'} is missing; give the run's other scheduler folders "
        "to compare without it\n"
    )
    with pytest.raises(ResultError, match=r"lists scheduler slots-1 in its config\.yaml"):
        fairsim.compare([run])
    assert list(fairsim.compare([run / "bf-drfh"]).table.index) == ["bf-drfh"]


def test_runs_that_differ_only_in_weights_are_compared_and_paired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Weighted against unweighted on one trace was refused "(job ids would not match)": the
    weights change no job. Compared, paired (same jobs, seed and pool), the weights named."""
    one = {**SYNTH, "schedulers": ["bf-drfh"]}
    fairsim.simulate(one, out=tmp_path / "plain")
    heavy = {**one, "trace": {**one["trace"], "default_weight": 2, "weights": {"u0": 3}}}
    fairsim.simulate(heavy, out=tmp_path / "heavy")
    inline = hand_scenario(1.0, ["bf-drfh"])
    fairsim.simulate(inline, out=tmp_path / "inline")
    weighted = copy.deepcopy(inline)
    weighted["trace"]["users"][0]["weight"] = 2.0
    fairsim.simulate(weighted, out=tmp_path / "inline-w")
    dirs = [str(tmp_path / "plain"), str(tmp_path / "heavy")]
    assert main(["compare", *dirs, "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "they differ in: trace.default_weight 1 (" in out
    c = fairsim.compare(dirs)
    assert c.paired and set(c.differences) == {"trace.default_weight", "trace.weights"}
    assert list(c.differences["trace.weights"].values()) == [None, {"u0": 3.0}]
    c = fairsim.compare([tmp_path / "inline", tmp_path / "inline-w"])
    assert c.paired and set(c.differences) == {"trace.users.a.weight"}
    # another trace key is still another workload
    longer = copy.deepcopy(inline)
    longer["trace"]["users"][0]["run_s"] = 60
    fairsim.simulate(longer, out=tmp_path / "longer")
    with pytest.raises(ConfigError, match=r"trace\.users .*job ids would not match"):
        fairsim.compare([tmp_path / "inline", tmp_path / "longer"])


def test_strategy_runs_are_compared_naming_the_manipulation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``fairsim strategy`` run against its truthful run said "their configs do not differ"
    and "every row replays the same jobs": the manipulation (manipulation.json) is named. It
    keeps every job and id, so the rows are compared and paired: hoard's placeholder jobs (ids
    below 0) are never common jobs, split's aliases stand for their user."""
    one = {**SYNTH, "schedulers": ["bf-drfh"], "collect": {"horizon_s": 4000}}
    out = tmp_path / "study"
    specs = ["inflate:cpu=2", "split:k=2", "hoard:cap=5"]
    fairsim.strategy(one, users="top:1", strategies=specs, seeds=[1], out=out)
    truthful = out / "s1-truthful"
    for kind, spec in zip(("inflate", "split", "hoard"), specs, strict=True):
        (run,) = out.glob(f"s1-{kind}-*")
        user = json.loads((run / "manipulation.json").read_text())["user"]
        value = f"{user}:{spec}"
        assert main(["compare", str(truthful), str(run), "--out", str(tmp_path / kind)]) == 0
        printed = capsys.readouterr().out.splitlines()
        assert printed[1] == (
            f"they differ in: manipulation none (manipulation=none), {value} (manipulation={value})"
        )
        assert printed[2].endswith(
            "; the runs' manipulations (fairsim strategy) change what the scheduler sees of a "
            "user's jobs, not which jobs"
        )
        c = fairsim.compare([truthful, run])
        assert c.paired and c.differences == {
            "manipulation": {"manipulation=none": "none", f"manipulation={value}": value}
        }
        assert (c.jct[f"manipulation={value}/bf-drfh"].index >= 0).all()
        report = (tmp_path / kind / "report.md").read_text()
        assert "The runs differ in `manipulation`:" in report
        assert "not which jobs" in report
