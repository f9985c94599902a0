"""``fairsim sweep`` and ``fairsim sweep-report``: expansion, run ids, resume, failures, identical
files on every executor, one-line errors, and the confidence intervals."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fairsim.errors import ConfigError
from fairsim.scenario.config import load_config, parse_config
from fairsim.scenario.reporting.sweep_report import aggregate, sweep_report, t_interval
from fairsim.scenario.sweep import DONE, expand, load_sweep, parse_sweep, run_sweep
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

ROOT = Path(__file__).resolve().parents[2]

TINY = {
    "name": "tiny-test",
    "base": {
        "trace": {"format": "synthetic", "n_tasks": 800, "duration_s": SAMPLE_WINDOW_S},
        "cluster": {"servers": 20, "source": "table-i"},
        "schedulers": ["slots-14", "bf-drfh"],
        "collect": {"utilization_interval_s": 120},
    },
    "grid": {"cluster.servers": [20, 40]},
    "seeds": [1, 2],
}


def _parquet_digests(out: Path) -> dict[str, str]:
    """sha256 of every per-run Parquet file (runs.parquet holds wall times, so it is left out)."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.glob("*/**/*.parquet"))
    }


def test_expansion_order_and_run_ids() -> None:
    sweep = parse_sweep(TINY)
    runs = expand(sweep)
    assert [(r.params["cluster.servers"], r.seed) for r in runs] == [
        (20, 1),
        (20, 2),
        (40, 1),
        (40, 2),
    ]
    for r in runs:
        data = json.loads(json.dumps(TINY["base"]))
        data.update(name="tiny-test", seed=r.seed)
        data["cluster"]["servers"] = r.params["cluster.servers"]
        assert r.run_id == parse_config(data).config_hash()
        assert r.config.name == "tiny-test"
    assert len({r.run_id for r in runs}) == 4
    # Stable: the same sweep expands to the same ids; the grid's order does not matter.
    again = parse_sweep({**TINY, "grid": {"cluster.servers": [40, 20]}})
    assert {r.run_id for r in expand(again)} == {r.run_id for r in runs}
    assert [r.run_id for r in expand(parse_sweep(TINY))] == [r.run_id for r in runs]


def test_product_of_two_paths_and_list_values() -> None:
    data = {**TINY, "grid": {"schedulers": [["slots-10"], ["bf-drfh", "ff-drfh"]], "seed": None}}
    del data["grid"]["seed"]
    data["grid"]["cluster.servers"] = [20, 30, 40]
    runs = expand(parse_sweep(data))
    assert len(runs) == 2 * 3 * 2
    assert runs[-1].config.scheduler_labels() == ["bf-drfh", "ff-drfh"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"grid": {"cluster.serverz": [1]}},
            r"grid\.cluster\.serverz = 1: cluster: unknown key "
            r"'serverz'; did you mean 'servers'\?",
        ),
        ({"grid": {"cluster.servers": []}}, r"grid\.cluster\.servers: empty list of values"),
        ({"seeds": [1, "two"]}, r"seeds: 'two' is not an integer"),
        ({"seeds": [1.5]}, r"seeds: 1\.5 is not an integer"),
        ({"grid": {"cluster.servers": [-3]}}, r"grid\.cluster\.servers = -3: .*positive"),
        ({"grid": {"schedulers": [["slot-14"]]}}, r"unknown scheduler 'slot-14'"),
        ({"gird": {}}, r"unknown key 'gird'; did you mean 'grid'\?"),
        (
            {"grid": {"cluster.servers": [30], "cluster": [{"servers": 20, "source": "table-i"}]}},
            r"^sweep: grid\.cluster: overlaps grid\.cluster\.servers \(one holds the other, so "
            r"one's values would silently replace the other's\); give only one of them$",
        ),
        ({"grid": {"cluster.servers": [True]}}, r"cluster: servers: True is a boolean, expected"),
        ({"seeds": [2**63]}, r"^sweep: seeds: 9223372036854775808 is above 2\*\*63 - 1 "),
    ],
)
def test_bad_sweeps_name_the_problem(patch: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        expand(parse_sweep({**TINY, **patch}))
    assert "\n" not in str(info.value)


def test_resume_skips_finished_runs(tmp_path: Path) -> None:
    sweep = parse_sweep(TINY)
    out = tmp_path / "out"
    first = run_sweep(sweep, out, executor="local:2", progress=False)
    assert set(first["status"]) == {"ok"} and first["run_id"].nunique() == 4
    marks = {p.parent.name: p.stat().st_mtime_ns for p in out.glob(f"*/{DONE}")}
    assert len(marks) == 4
    # Simulate an interrupted sweep: one run lost, a stale half-written temporary folder.
    lost = sorted(marks)[0]
    import shutil

    shutil.rmtree(out / lost)
    (out / f".{lost}.x.tmp").mkdir()
    again = run_sweep(sweep, out, executor="local:1", progress=False)
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob(f"*/{DONE}")}
    redone = {k for k in after if after[k] != marks.get(k)}
    assert redone == {lost}
    assert not list(out.glob(".*.tmp"))
    pd.testing.assert_frame_equal(
        first.drop(columns="wall_s"), again.drop(columns="wall_s"), check_dtype=True
    )
    # Every run folder holds the config whose hash is its run id.
    for rid in after:
        assert load_config(out / rid / "config.yaml").config_hash() == rid


def test_failing_run_is_recorded_and_others_finish(tmp_path: Path) -> None:
    from fairsim.traces.io import write_tasks
    from fairsim.traces.synth import synth_google_like

    good = tmp_path / "good"
    good.mkdir()
    write_tasks(synth_google_like(500, seed=3, duration_s=SAMPLE_WINDOW_S), good / "tasks.parquet")
    data = {
        "name": "fail-test",
        "base": {
            "trace": {"format": "canonical", "path": str(good)},
            "cluster": {"servers": 10},
            "schedulers": ["bf-drfh"],
        },
        "grid": {"trace.path": [str(good), str(tmp_path / "missing")]},
        "seeds": [1],
    }
    out = tmp_path / "out"
    frame = run_sweep(parse_sweep(data), out, executor="local:2", progress=False)
    assert list(frame["status"]) == ["ok", "failed"]
    err = frame["error"].iloc[1]
    assert "ConfigError" in err and "missing" in err
    assert (out / frame["run_id"].iloc[0] / DONE).is_file()
    assert not (out / frame["run_id"].iloc[1]).exists()
    stored = pd.read_parquet(out / "runs.parquet")
    assert list(stored["status"]) == ["ok", "failed"]


def test_identical_files_on_every_executor(tmp_path: Path) -> None:
    sweep = parse_sweep(TINY)
    digests = {}
    for spec in ("local:1", "local:2", "dask-local:2"):
        out = tmp_path / spec.replace(":", "-")
        frame = run_sweep(sweep, out, executor=spec, progress=False)
        assert set(frame["status"]) == {"ok"}
        digests[spec] = _parquet_digests(out)
    assert len(digests["local:1"]) == 4 * (1 + 2 * 5)  # servers + 2 schedulers x 5 tables
    assert digests["local:1"] == digests["local:2"] == digests["dask-local:2"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairsim.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("patch", "executor", "message"),
    [
        ({"grid": {"cluster.serverz": [20]}}, "local:1", r"did you mean 'servers'\?"),
        ({"grid": {"cluster.servers": []}}, "local:1", r"grid\.cluster\.servers: empty list"),
        ({"seeds": [1, "x"]}, "local:1", r"seeds: 'x' is not an integer"),
        ({}, "dask://127.0.0.1:9", r"cannot reach the Dask scheduler"),
        ({}, "lokal:2", r"--executor 'lokal:2': expected local:N"),
    ],
)
def test_cli_bad_input_is_one_line(
    tmp_path: Path, patch: dict, executor: str, message: str
) -> None:
    import re

    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({**TINY, **patch}))
    out = tmp_path / "out"
    proc = _cli("sweep", str(path), "--out", str(out), "--executor", executor, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("fairsim: error: ")
    assert re.search(message, lines[0]), lines[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()  # refused before anything is created


@pytest.mark.parametrize("executor", ["dask://127.0.0.1:9", "dask-local:1"])
def test_dask_executor_without_the_extra_is_refused_before_out_exists(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    executor: str,
) -> None:
    from fairsim.cli import main

    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as without fairsim[dask]
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "out"
    argv = ["sweep", str(path), "--out", str(out), "--executor", executor, "--no-progress"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "fairsim: error: --executor: Dask is not installed (pip install 'fairsim[dask]')\n"
    )
    assert not out.exists()


def test_example_sweeps_validate() -> None:
    for path in sorted((ROOT / "configs" / "sweeps").glob("*.yaml")):
        runs = expand(load_sweep(path))
        assert runs, path
    table_ii = expand(load_sweep(ROOT / "configs" / "sweeps" / "drfh-table-ii.yaml"))
    assert len(table_ii) == 25 and sorted({r.seed for r in table_ii}) == [1, 2, 3, 4, 5]


def test_t_interval_by_hand() -> None:
    mean, sd, half, n = t_interval([1.0, 2.0, 3.0, 4.0])
    # t_{0.975, 3} = 3.182446305284263; sd = sqrt(5/3).
    assert (mean, n) == (2.5, 4)
    assert sd == pytest.approx(math.sqrt(5 / 3))
    assert half == pytest.approx(3.182446305284263 * math.sqrt(5 / 3) / 2)
    assert half == pytest.approx(2.0542603, abs=1e-6)
    assert math.isnan(t_interval([7.0])[2])


def test_sweep_report_on_constructed_runs(tmp_path: Path) -> None:
    rows = []
    for servers, base in ((20, 0.5), (40, 0.25)):
        for seed, dv in zip((1, 2, 3), (-0.1, 0.0, 0.1), strict=True):
            rows.append(
                {
                    "run_id": f"r{servers}{seed}",
                    "cluster.servers": servers,
                    "seed": seed,
                    "scheduler": "bf-drfh",
                    "status": "ok",
                    "error": None,
                    "wall_s": 1.0,
                    "tasks": 10,
                    "tasks_completed": 9,
                    "completion_ratio": 0.9,
                    "util_cpu": base + dv,
                    "util_mem": base,
                    "mean_jct_s": 100.0 * seed,
                    "median_jct_s": 50.0,
                }
            )
    rows.append({**rows[0], "run_id": "bad", "seed": 9, "status": "failed", "util_cpu": 99.0})
    runs = pd.DataFrame(rows)
    table = aggregate(runs)
    cpu20 = table[(table["metric"] == "util_cpu") & (table["cluster.servers"] == 20)].iloc[0]
    # Values 0.4, 0.5, 0.6 (a fraction: logit-t): sd = 0.1, t_{0.975, 2} = 4.302653; on the logit
    # scale logit(0.5) = 0 +- t * (0.1 / sqrt(3)) / (0.5 * 0.5) = 0.993655, back: 0.27019, 0.72981
    # (the t-interval would be 0.5 -+ 0.2484138).
    d = 4.302652729911275 * 0.1 / math.sqrt(3) / 0.25
    assert d == pytest.approx(0.993655, abs=1e-6)
    assert cpu20["n"] == 3 and cpu20["mean"] == pytest.approx(0.5)
    assert cpu20["ci_method"] == "logit-t"
    assert cpu20["ci95_low"] == pytest.approx(1 / (1 + math.exp(d)))
    assert cpu20["ci95_high"] == pytest.approx(1 / (1 + math.exp(-d)))
    assert cpu20["ci95_low"] == pytest.approx(0.270191, abs=1e-6)
    assert cpu20["ci95_half"] == pytest.approx(0.229809, abs=1e-6)
    mem40 = table[(table["metric"] == "util_mem") & (table["cluster.servers"] == 40)].iloc[0]
    assert mem40["ci95_half"] == pytest.approx(0.0)
    # JCT 100, 200, 300 s (>= 0: log-t): 200 * exp(-+ t * (100 / sqrt(3)) / 200)
    jct = table[(table["metric"] == "mean_jct_s") & (table["cluster.servers"] == 20)].iloc[0]
    f = math.exp(4.302652729911275 * 100 / math.sqrt(3) / 200)
    assert (jct["ci95_low"], jct["ci95_high"]) == pytest.approx((200 / f, 200 * f))
    assert (round(jct["ci95_low"], 1), round(jct["ci95_high"], 1)) == (57.8, 692.6)
    assert jct["ci_method"] == "log-t"
    out = tmp_path / "sw"
    out.mkdir()
    runs.to_parquet(out / "runs.parquet")
    written = sweep_report(out)
    # two tables, four figures (no jobs.parquet here: no same-job-set JCT figure), report.md
    assert (out / "sweep_report.parquet").is_file() and len(written) == 6
    assert all(p.is_file() and p.stat().st_size > 0 for p in written)
    stored = pd.read_parquet(out / "sweep_report.parquet")
    assert set(stored["metric"]) == {
        "util_cpu",
        "util_mem",
        "mean_jct_s",
        "completion_ratio",
        "common_mean_jct_s",
    }


def test_ctrl_c_keeps_finished_runs_and_resumes(tmp_path: Path) -> None:
    import os
    import signal
    import time

    # eight runs of 20,000 tasks (seconds each): on a loaded machine the test may see
    # runs.parquet late, and tiny runs could all finish before the Ctrl-C arrives (seen in CI)
    n_runs = 8
    data = {**TINY, "grid": {}, "seeds": list(range(1, n_runs + 1))}
    data["base"] = {
        **TINY["base"],
        "trace": {"format": "synthetic", "n_tasks": 20_000, "duration_s": SAMPLE_WINDOW_S},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fairsim.cli", "sweep", str(path), "--out", str(out)]
    # A job started with `&` by a non-interactive shell (a CI script, nohup) ignores SIGINT, and
    # its children inherit that: give the sweep Python's own Ctrl-C handling, as in a terminal.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [*cmd, "--executor", "local:1", "--no-progress"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    finally:
        signal.signal(signal.SIGINT, old)
    deadline = time.monotonic() + 60
    while not (out / "runs.parquet").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    _, err = proc.communicate(timeout=30)
    if proc.returncode == 0:
        pytest.fail("the sweep finished before it could be interrupted")
    assert proc.returncode == 130, err
    assert "interrupted; finished results were kept" in err
    kept = pd.read_parquet(out / "runs.parquet")
    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob(f"*/{DONE}")}
    assert 1 <= len(done) < n_runs
    # Rows are the finished runs; a run whose worker the Ctrl-C killed first may also be
    # recorded, as failed (BrokenProcessPool), and is redone below like any unfinished run.
    assert set(kept.loc[kept["status"] == "ok", "run_id"]) <= set(done)
    assert not (set(kept.loc[kept["status"] != "ok", "run_id"]) & set(done))
    frame = run_sweep(parse_sweep(data), out, executor="local:1", progress=False)
    assert frame["run_id"].nunique() == n_runs and set(frame["status"]) == {"ok"}
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob(f"*/{DONE}")}
    assert all(after[k] == v for k, v in done.items())  # finished runs were not redone


def test_sweep_report_figure_when_only_schedulers_vary() -> None:
    from fairsim.scenario.reporting.sweep_report import metric_figure

    rows = [
        {
            "run_id": f"{s}{seed}",
            "schedulers": json.dumps([s]),
            "seed": seed,
            "scheduler": s,
            "status": "ok",
            "error": None,
            "wall_s": 1.0,
            "tasks": 10,
            "tasks_completed": 9,
            "completion_ratio": 0.9,
            "util_cpu": 0.5 + seed / 50,
            "util_mem": 0.4,
            "mean_jct_s": 100.0 * seed,
            "median_jct_s": 1.0,
        }
        for s in ("slots-10", "bf-drfh")
        for seed in (1, 2, 3)
    ]
    fig = metric_figure(aggregate(pd.DataFrame(rows)), "util_cpu")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "Scheduler"
    assert ax.get_ylabel() == "Mean CPU utilisation (%)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["slots-10", "bf-drfh"]
    assert ax.get_ylim() == (0.0, 105.0)  # a share: from 0, headroom above 100 %


def test_grid_may_supply_what_base_leaves_out() -> None:
    """The sweep issue's own shape: schedulers only in the grid."""
    base = {k: v for k, v in TINY["base"].items() if k != "schedulers"}
    data = {**TINY, "base": base, "grid": {"schedulers": [["slots-14"], ["bf-drfh"]]}}
    runs = expand(parse_sweep(data))
    assert [r.config.scheduler_labels() for r in runs] == [["slots-14"]] * 2 + [["bf-drfh"]] * 2
    with pytest.raises(
        ConfigError,
        match=r"^base \(at grid point \{'cluster\.servers': 20\}\): schedulers: required key is "
        r"missing$",
    ):
        expand(parse_sweep({**TINY, "base": base}))
    with pytest.raises(ConfigError, match=r"^base: schedulers: required key is missing$"):
        expand(parse_sweep({**TINY, "base": base, "grid": {}}))
    two = {"schedulers": [["bf-drfh"]], "cluster.servers": [20, -3]}
    with pytest.raises(
        ConfigError, match=r"^grid\.cluster\.servers = -3: cluster\.servers: servers must be"
    ):
        expand(parse_sweep({**TINY, "base": base, "grid": two}))


def test_sweep_name_and_out_are_checked(tmp_path: Path) -> None:
    from fairsim.errors import OutputError

    with pytest.raises(ConfigError, match=r"sweep: name: '\.\./x' is not a single folder name"):
        parse_sweep({**TINY, "name": "../x"})
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("mine")
    with pytest.raises(
        OutputError, match=r"^--out: '.*notes' is a non-empty folder that is not a sweep's output"
    ):
        run_sweep(parse_sweep(TINY), tmp_path / "notes", executor="local:1", progress=False)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match=r"^--out: '.*f' is an existing file, not a folder$"):
        run_sweep(parse_sweep(TINY), tmp_path / "f", executor="local:1", progress=False)


def _queue_sweep(out: Path) -> pd.DataFrame:
    """Three seeds' runs of ``hdrf`` with a queue tree (prod, free) under ``out``; their rows."""
    rows = []
    for seed, wait in zip((1, 2, 3), (10.0, 20.0, 30.0), strict=True):
        run = out / f"r{seed}" / "hdrf"
        run.mkdir(parents=True)
        pd.DataFrame(
            {
                "queue": ["prod", "free"],
                "users": [1, 2],
                "tasks": [4, 6],
                "tasks_started": [4, 3],
                "tasks_completed": [4, 1],
                "jobs": [1, 2],
                "jobs_completed": [1, 1],
                "mean_jct_s": [5.0, 50.0],
                "p95_jct_s": [5.0, 50.0],
                "mean_queueing_s": [0.0, wait],
                "p95_queueing_s": [0.0, wait],
            }
        ).to_parquet(run / "queues.parquet")
        # two instants 300 s apart; free's deficit +0.1 then -0.3 (distance 0.2), holds
        # nothing at the second
        pd.DataFrame(
            {
                "time_s": [600.0, 600.0, 900.0, 900.0],
                "queue": ["prod", "free", "prod", "free"],
                "tasks_running": [2, 1, 2, 0],
                "tasks_waiting": [0, 2, 0, 2],
                "share_cpu": [0.4, 0.2, 0.4, 0.0],
                "share_mem": [0.3, 0.1, 0.3, 0.0],
                "dominant_share": [0.4, 0.2, 0.4, 0.6],
                "reference_dominant_share": [0.4, 0.3, 0.4, 0.3],
                "deficit": [0.0, 0.1, 0.0, -0.3],
                "holds_nothing": [False, False, False, True],
            }
        ).to_parquet(run / "fairness_queues.parquet")
        rows.append(
            {"run_id": f"r{seed}", "seed": seed, "scheduler": "hdrf", "status": "ok", "error": None}
        )
    runs = pd.DataFrame(rows)
    return runs


def test_sweep_report_per_queue_means_and_intervals(tmp_path: Path) -> None:
    """A sweep whose runs have a queue tree: per queue, the mean over seeds with its interval
    (docs/queues.md, "Per-queue outputs"); the distance is the time mean of |deficit|."""
    from fairsim.scenario.reporting.sweep_report import queue_aggregate

    out = tmp_path / "sw"
    runs = _queue_sweep(out)
    table = queue_aggregate(out, runs).set_index(["queue", "metric"])
    wait = table.loc[("free", "mean_queueing_s")]
    f = math.exp(4.302652729911275 * 10 / math.sqrt(3) / 20)  # log-t of 10, 20, 30 s
    assert (wait["n"], wait["mean"], wait["ci_method"]) == (3, 20.0, "log-t")
    assert (wait["ci95_low"], wait["ci95_high"]) == pytest.approx((20 / f, 20 * f))
    assert table.loc[("free", "distance"), "mean"] == pytest.approx(0.2)
    assert table.loc[("free", "holds_nothing_s"), "mean"] == pytest.approx(300.0)
    assert table.loc[("free", "share_cpu"), "mean"] == pytest.approx(0.1)
    assert table.loc[("prod", "distance"), "ci95_half"] == 0.0
    runs.assign(wall_s=1.0, tasks=10, tasks_completed=5).to_parquet(out / "runs.parquet")
    written = sweep_report(out)
    assert out / "sweep_queues.parquet" in written
    report = (out / "report.md").read_text()
    assert "## Queues" in report
    assert "| hdrf | free | 3 | 10.0 [" in report  # cpu share 10 %, its interval


@pytest.mark.parametrize(
    ("file", "damage", "message"),
    [
        ("queues.parquet", b"not parquet", "queues.parquet is damaged: not a readable Parquet"),
        (
            "fairness_queues.parquet",
            None,
            "fairness_queues.parquet is damaged: no column 'deficit'",
        ),
    ],
)
def test_sweep_report_refuses_damaged_queue_tables(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file: str,
    damage: bytes | None,
    message: str,
) -> None:
    """A run's damaged per-queue table is refused in one line naming it (before: a traceback
    from pyarrow, or ``KeyError: 'deficit'``, after part of the sweep's files were written)."""
    from fairsim.cli import main

    out = tmp_path / "sw"
    runs = _queue_sweep(out)
    runs.assign(wall_s=1.0, tasks=10, tasks_completed=5).to_parquet(out / "runs.parquet")
    path = out / "r2" / "hdrf" / file
    if damage is None:
        pd.read_parquet(path).drop(columns="deficit").to_parquet(path)
    else:
        path.write_bytes(damage)
    assert main(["sweep-report", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("fairsim: error: sweep-report: ") and err.count("\n") == 1 and message in err
    )
    assert str(path) in err


def test_serial_sweep_records_each_run_before_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sweeps.md: ``runs.parquet`` is rewritten after every finished run, and Ctrl-C keeps
    the finished ones. The serial executor ran every run when it was submitted, before any
    result was recorded: a Ctrl-C at the third run left an empty ``runs.parquet`` although two
    runs had finished. Now each run starts after the previous one is recorded."""
    from fairsim.scenario import sweep as sweep_mod

    real = sweep_mod.execute_run
    seen: list[int] = []
    out = tmp_path / "out"

    def observed(*args: object) -> dict:
        path = out / "runs.parquet"
        seen.append(len(pd.read_parquet(path)) if path.exists() else -1)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep_mod, "execute_run", observed)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(parse_sweep(TINY), out, executor="serial", progress=False)
    assert seen == [-1, 2, 4]  # two schedulers a run: each run's rows before the next starts
    kept = pd.read_parquet(out / "runs.parquet")
    assert len(kept) == 4 and set(kept["status"]) == {"ok"}
    assert len(list(out.glob(f"*/{DONE}"))) == 2
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_an_edited_sweep_in_the_same_out_is_refused_and_an_extended_one_resumes(
    tmp_path: Path,
) -> None:
    """An edited sweep file run into an existing OUT rewrote runs.parquet for its own grid and
    left the earlier runs there, orphaned, silently. As ``fairsim strategy`` refuses another
    study's runs, a sweep that does not plan every finished run of OUT is refused (before
    anything is written); one that only adds runs extends the folder."""
    from fairsim.errors import OutputError

    small = {**TINY, "grid": {"cluster.servers": [20]}, "seeds": [1]}
    out = tmp_path / "out"
    first = run_sweep(parse_sweep(small), out, executor="serial", progress=False)
    rid = first["run_id"].iloc[0]
    # more grid values and seeds: the finished run is kept, the others run
    wider = run_sweep(parse_sweep(TINY), out, executor="serial", progress=False)
    assert wider["run_id"].nunique() == 4 and rid in set(wider["run_id"])
    runs = (out / "runs.parquet").read_bytes()
    edited = {**TINY, "base": {**TINY["base"], "trace": {**TINY["base"]["trace"], "n_tasks": 700}}}
    for other in (edited, small, {**TINY, "name": "renamed"}):
        with pytest.raises(
            OutputError,
            match=r"^--out: '.*out' holds another sweep's runs \((3|4) finished runs that this "
            r"sweep does not plan, e\.g\. [0-9a-f]{16}: its base, grid, seeds or name differ\); "
            r"choose another folder, or remove it to start over$",
        ):
            run_sweep(parse_sweep(other), out, executor="serial", progress=False)
    assert (out / "runs.parquet").read_bytes() == runs
    assert len(list(out.glob(f"*/{DONE}"))) == 4
    # the same sweep resumes (nothing to run)
    again = run_sweep(parse_sweep(TINY), out, executor="serial", progress=False)
    assert set(again["run_id"]) == set(wider["run_id"])
