"""Smoke test of the benchmark harness (benchmarks.bench_online): structure
only, never speed targets."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks.bench_online import (
    DENSE_DURATION_S,
    _last_submit,
    all_checks,
    bench_tasks,
    summary_markdown,
)
from benchmarks.targets import Target, read_record, start, write_result
from fairsim.traces.synth import TASK_RATE_PER_S


def _records(**results: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    """``name=res`` (a bench_online benchmark's dict) as results records, as main writes them."""
    run = start()
    return {
        name.replace("_", "-"): run.record(
            name.replace("_", "-"), res["targets"], points=res["points"]
        )
        for name, res in results.items()
    }


def test_tasks_benchmark_in_process_structure() -> None:
    res = bench_tasks([2_000], servers=50, isolate=False, progress=False)
    records = _records(tasks=res)
    assert json.loads(json.dumps(records["tasks"])) == records["tasks"]  # as written to tasks.json
    assert "scales" in res["note"]
    assert all(p["duration_s"] == pytest.approx(2_000 / TASK_RATE_PER_S) for p in res["points"])
    assert {p["scheduler"] for p in res["points"]} == {"bf-drfh", "ff-drfh"}
    for p in res["points"]:
        assert "error" not in p, p
        assert p["servers"] == 50
        assert p["tasks"] == 2_000
        assert 0 < p["tasks_started"] <= p["tasks"]
        assert 0 < p["tasks_finished"] <= p["tasks_started"]
        assert p["wall_s"] > 0
        assert p["tasks_per_s"] > 0
        assert p["us_per_task"] > 0
        assert math.isclose(p["tasks_per_s"] * p["wall_s"], p["tasks"], rel_tol=1e-9)
        assert 0.0 <= p["util_cpu"] <= 1.0
        assert 0.0 <= p["util_mem"] <= 1.0
        assert p["peak_rss_mb"] > 0
    for s in ("bf-drfh", "ff-drfh"):
        assert res["curves"][s]["tasks"] == [2_000]
    # one target per scheduler: cost(2,000) / cost(2,000) is 1, within the 1.5x target
    assert [(t.name, t.value, t.met) for t in res["targets"]] == [
        ("bf-drfh cost(2,000) / cost(2,000)", 1.0, True),
        ("ff-drfh cost(2,000) / cost(2,000)", 1.0, True),
    ]
    md = summary_markdown(records, start())
    assert md.count("| tasks | bf-drfh | 50 | 2,000 |") == 1
    assert md.count("| tasks | ff-drfh | 50 | 2,000 |") == 1
    assert all_checks(records) == [True, True]


def test_online_mechanisms_run_in_the_bench_harness() -> None:
    """Each issue-#5 scheduler runs through the engine in the harness (2,000 synthetic tasks);
    the online-2000 summary rows and checks are built from points of that shape."""
    from benchmarks.bench_online import (
        ONLINE_SCHEDULERS,
        TARGET_ONLINE_TASKS_PER_S,
        TARGET_PEAK_RSS_MB,
        _point_targets,
    )

    res = bench_tasks(
        [2_000], servers=50, isolate=False, progress=False, schedulers=ONLINE_SCHEDULERS
    )
    assert [p["scheduler"] for p in res["points"]] == list(ONLINE_SCHEDULERS)
    for p in res["points"]:
        assert "error" not in p, p
        assert 0 < p["tasks_started"] <= p["tasks"] == 2_000
        assert 0.0 < p["util_cpu"] <= 1.0
    hi, lo = TARGET_ONLINE_TASKS_PER_S + 1, TARGET_ONLINE_TASKS_PER_S - 1
    # The rule, not this process's memory: in-process peak RSS is the whole test session's.
    rss = TARGET_PEAK_RSS_MB / 2
    fake = [
        {**p, "tasks_per_s": v, "peak_rss_mb": rss}
        for name, v in (("drf", hi), ("c-drfh", lo))
        for p in res["points"]
        if p["scheduler"] == name
    ]
    targets = [t for p in fake for t in _point_targets(p, TARGET_ONLINE_TASKS_PER_S)]
    assert [(t.name, t.met) for t in targets] == [
        ("drf speed", True),
        ("drf memory", True),
        ("c-drfh speed", False),
        ("c-drfh memory", True),
    ]
    records = _records(online_2000={"points": fake, "targets": targets})
    md = summary_markdown(records, start())
    assert (
        f"drf, tasks per second of engine wall time ≥ 25,000 tasks/s | {hi:,.0f} tasks/s | yes"
        in md
    )
    assert (
        f"c-drfh, tasks per second of engine wall time ≥ 25,000 tasks/s | {lo:,.0f} tasks/s | NO"
        in md
    )
    assert all_checks(records) == [True, True, False, True]


def test_dense_stress_case_keeps_the_sample_window() -> None:
    res = bench_tasks([2_000], servers=50, dense=True, isolate=False, progress=False)
    assert "denser" in res["note"]
    for p in res["points"]:
        assert "error" not in p, p
        assert p["duration_s"] == DENSE_DURATION_S == 70_756.0
    (t, _) = res["targets"]
    assert (t.name, t.unit, t.direction, t.limit) == (
        "bf-drfh cost(2,000) / cost(2,000)",
        "×",
        "<=",
        2.0,
    )


def test_servers_curves_cost_per_task_start_and_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers benchmark's Best-Fit figures from made-up points: the 12,583 / 2,000 ratio per
    task (the target), per started task and per scheduling event."""
    from benchmarks import bench_online as bo

    def fake(specs, shared, isolate, name, progress):  # type: ignore[no-untyped-def]
        rows = {2_000: (20.0, 160_000, 130_000), 12_583: (36.0, 560_000, 430_000)}
        return [
            {
                "scheduler": sp["scheduler"],
                "servers": sp["servers"],
                "tasks": 570_000,
                "tasks_started": rows[sp["servers"]][1],
                "tasks_finished": rows[sp["servers"]][2],
                "wall_s": rows[sp["servers"]][0],
                "us_per_task": 1e6 * rows[sp["servers"]][0] / 570_000,
                "tasks_per_s": 570_000 / rows[sp["servers"]][0],
                "peak_rss_mb": 500.0,
                "util_cpu": 0.5,
                "util_mem": 0.5,
            }
            for sp in specs
        ]

    monkeypatch.setattr(bo, "_run_points", fake)
    res = bo.bench_servers("unused", sizes=(2_000, 12_583), progress=False)
    bf = res["curves"]["bf-drfh"]
    by_name = {t.name: t for t in res["targets"]}
    assert set(by_name) == {"bf-drfh slope", "bf-drfh 12,583 / 2,000", "ff-drfh slope"}
    assert by_name["bf-drfh 12,583 / 2,000"].value == pytest.approx(36.0 / 20.0)
    assert not by_name["bf-drfh 12,583 / 2,000"].met
    assert by_name["bf-drfh slope"].met  # 1.8x the cost on 6.3x the servers
    assert bf["us_per_started_task"] == pytest.approx([1e6 * 20 / 160_000, 1e6 * 36 / 560_000])
    assert bf["us_per_event"] == pytest.approx(
        [1e6 * 20 / (570_000 + 160_000 + 130_000), 1e6 * 36 / (570_000 + 560_000 + 430_000)]
    )
    md = summary_markdown(_records(servers=res), start())
    assert "23.3 → 23.1 µs per arrival, start or completion" in md


@pytest.mark.parametrize("statistics", [True, False])
def test_last_submit_reads_one_row_group(tmp_path, statistics: bool) -> None:
    """The scale point's window end: the last submit time, from the last row group's statistics
    or, without them, from that row group (never the whole column)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    submit = np.sort(np.random.default_rng(3).uniform(0, 1e6, 1_000))
    path = tmp_path / "tasks.parquet"
    table = pa.table({"job_id": np.arange(1_000), "submit_s": submit})
    pq.write_table(table, path, row_group_size=300, write_statistics=statistics)
    f = pq.ParquetFile(path)
    assert f.metadata.num_row_groups == 4
    assert f.metadata.row_group(3).column(1).statistics is None or statistics
    assert _last_submit(f) == submit[-1]


def test_paired_runs_alternate_and_report_the_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    """--vs: a point runs A B A B (B in the reference tree); the point keeps A's median and the
    ratio of the medians, and a failing reference is reported, not hidden."""
    from benchmarks import bench_online as bo
    from benchmarks.bench_online import _point_targets

    calls: list[object] = []

    def fake(spec, shared, isolate=True, tree=None):  # type: ignore[no-untyped-def]
        calls.append(tree)
        wall = {None: [2.0, 4.0], "ref": [6.0, 6.0]}[tree]
        i = sum(1 for c in calls if c == tree) - 1
        return {**spec, "tasks": 600, "wall_s": wall[i], "tasks_per_s": 600 / wall[i],
                "us_per_task": 1e6 * wall[i] / 600, "peak_rss_mb": 10.0 + i,
                "util_cpu": 0.5, "util_mem": 0.5}  # fmt: skip

    monkeypatch.setattr(bo, "run_point", fake)
    spec = {"kind": "real", "scheduler": "ff-drfh", "servers": 2_000}
    p = bo._paired(spec, None, ("abc1234", "ref"))  # type: ignore[arg-type]
    assert calls == [None, "ref", None, "ref"]
    assert p["wall_s"] == 3.0 and p["tasks_per_s"] == 200.0 and p["peak_rss_mb"] == 11.0
    assert p["paired"]["ref_tasks_per_s"] == [100.0, 100.0]
    assert p["paired"]["ratio"] == pytest.approx(((150 + 300) / 2) / 100)
    (speed, vs_ref, memory) = _point_targets(p, 250.0, 400.0)
    assert (speed.value, speed.met, vs_ref.met, memory.met) == (200.0, False, True, True)
    assert speed.context == "median of 2 runs, A B A B with abc1234 (2.25× its speed)"
    md = summary_markdown(_records(real_2000={"points": [p], "targets": [speed]}), start())
    assert "2.25× abc1234 (100 / 100)" in md

    def broken(spec, shared, isolate=True, tree=None):  # type: ignore[no-untyped-def]
        return fake(spec, shared, isolate, None) if tree is None else {**spec, "error": "boom"}

    calls.clear()
    monkeypatch.setattr(bo, "run_point", broken)
    p = bo._paired(spec, None, ("abc1234", "ref"))  # type: ignore[arg-type]
    assert p["paired"]["ratio"] is None and p["paired"]["ref_error"] == "boom"


def test_fairness_benchmark_structure(google_dir, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """bench_fairness runs ``fairsim run`` of Best-Fit DRFH on the DRFH experiment with fairness
    collection and times the reference solve per instant (structure only; a short horizon)."""
    from benchmarks.bench_fairness import run_one, summary_markdown

    one = run_one(google_dir.parents[1], True, tmp_path / "run", horizon_s=1_300.0)
    assert (tmp_path / "run" / "fairness_over_time.png").is_file()  # the whole run: figures too
    assert one["fairness"] is True and one["instants"] >= 2
    assert one["wall_s"] > one["solve_s"] >= 0
    assert one["mean_active_users"] > 100  # the sample has ~500 users with tasks by then
    for p in one["per_instant"]:
        assert p["classes"] == 7  # 2,000 Table I servers drawn with the config seed
        assert p["solve_ms"] > 0
    from benchmarks.bench_fairness import target

    res = {
        "scheduler": "bf-drfh",
        "config": "configs/drfh-google.yaml",
        "interval_s": 600.0,
        "pairs": 1,
        "wall_off_s": [1.0],
        "wall_on_s": [1.05],
        "ratios": [1.05],
        "overhead": 0.05,
        "engine_wall_off_s": [0.5],
        "engine_wall_on_s": [0.51],
        "engine_ratios": [1.02],
        "engine_overhead": 0.02,
        "instants": one["instants"],
        "mean_active_users": one["mean_active_users"],
        "solve_s": one["solve_s"],
        "metrics_s": one["metrics_s"],
        "ms_per_instant": 1.0,
        "per_instant": one["per_instant"],
    }
    t = target(res)
    assert (t.value, t.unit, t.direction, t.limit, t.met) == (
        pytest.approx(5.0),
        "%",
        "<=",
        10.0,
        True,
    )
    md = write_result(tmp_path, start().record("fairness", [t], **res), summary_markdown(res))
    assert "≤ 10 % | 5 % | yes | median of 1 pairs' ratios (1.05–1.05)" in md
    assert "the engine alone +2.0 %" in md and "| with fairness | 1.05 | 0.51 |" in md
    assert md.count("| 7 |") == len(one["per_instant"])
    assert target({"error": "exit 1: boom"}).met is False


def test_bench_recorded_one_pair_on_an_hour(google_dir: Path, tmp_path: Path) -> None:
    """benchmarks.bench_recorded on the first hour of the sample: both readings of recorded and
    FF-DRFH run on the trace's machines and the point has the documented shape."""
    from benchmarks.bench_recorded import bench_recorded, summary_markdown

    res = bench_recorded(google_dir.parents[1], pairs=1, end_s=4200.0)
    assert res["servers"] == 12_583
    assert [p["scheduler"] for p in res["points"]] == ["recorded", "recorded-first", "ff-drfh"]
    assert res["points"][0]["tasks"] == res["points"][2]["tasks"] > 10_000
    assert res["points"][1]["tasks"] == res["points"][2]["tasks"]
    t, t_first = res["targets"]
    assert (t.value, t.met) == (res["ratio"], res["ratio"] >= 1.0)
    assert (t_first.value, t_first.met) == (res["ratio_first"], res["ratio_first"] >= 1.0)
    record = start().record("recorded", res.pop("targets"), **res)
    md = write_result(tmp_path, record, summary_markdown(record))
    assert "recorded over FF-DRFH, tasks per second of engine wall time ≥ 1×" in md
    assert "recorded-first over FF-DRFH, tasks per second of engine wall time ≥ 1×" in md
    assert read_record(tmp_path / "recorded.json")["targets"] == [t.to_json(), t_first.to_json()]


def test_bench_scale_whole_path_from_raw_files(tmp_path: Path, google_dir: Path) -> None:
    """make bench-scale's harness on a small case: raw files resampled from the sample, converted
    and run in processes of their own; the raw trace is kept for the next call."""
    from benchmarks.bench_scale import main

    shared = google_dir.parent.parent
    argv = ["--shared", str(shared), "--out", str(tmp_path), "--tasks", "3000", "--days", "0.25"]
    argv += ["--parts", "2", "--schedulers", "ff-drfh", "--no-progress"]
    assert main(argv) == 0
    res = read_record(tmp_path / "scale.json")
    conv, runs = res["convert"], res["runs"]
    assert res["generate"]["kept"] is False
    assert conv["tasks"] == res["generate"]["tasks"] and conv["rows_read"] > conv["tasks"]
    (run,) = runs.values()
    assert conv["peak_rss_mb"] > 50 and run["peak_rss_mb"] > 50  # the child's, not 0
    # the run leaves out the tasks the trace never scheduled (no run time)
    assert 0.9 * conv["tasks"] < run["tasks"] <= conv["tasks"] and run["servers"] == 12_583
    targets = {t["name"]: Target.from_json(t) for t in res["targets"]}
    assert list(targets) == ["convert memory", "convert speed", "path wall", "ff-drfh memory"]
    assert targets["path wall"].value == pytest.approx(
        conv["wall_s"] + runs["ff-drfh"]["wall_s"], rel=1e-12
    )
    assert not (tmp_path / "scale-run-ff-drfh").exists()  # results deleted after the step
    assert "| run ff-drfh |" in (tmp_path / "scale.md").read_text()
    assert main(argv) == 0
    assert read_record(tmp_path / "scale.json")["generate"]["kept"] is True


def test_reference_tree_checks_out_a_revision_of_this_repository(tmp_path: Path) -> None:
    """--vs REV: REV of this repository (benchmarks/'s parent) in a temporary worktree, removed
    after; an unknown revision is a one-line error."""
    from benchmarks import bench_online as bo

    where = tmp_path / "tree"
    short, tree = bo.reference_tree("HEAD", where)
    try:
        assert tree == where and len(short) >= 7
        assert (where / "benchmarks" / "bench_online.py").is_file()
    finally:
        bo._drop_tree(where)
    assert not where.exists()
    with pytest.raises(RuntimeError, match=r"--vs no-such-rev: "):
        bo.reference_tree("no-such-rev", tmp_path / "other")


def test_bench_strategy_one_round_on_two_minutes(google_dir: Path, tmp_path: Path) -> None:
    """benchmarks.bench_strategy on trace time 1,200-1,320 s: the plain run and the three
    manipulated runs of the window's largest user, and the point has the documented shape."""
    from benchmarks.bench_strategy import STRATEGIES, TARGET_RATIO, bench_strategy, summary_markdown

    res = bench_strategy(google_dir.parents[1], pairs=1, end_s=1320.0)
    assert res["tasks"] == 44 and len(res["plain_cpu_s"]) == 1
    assert [p["strategy"] for p in res["points"]] == list(STRATEGIES)
    for p, t in zip(res["points"], res["targets"], strict=True):
        assert p["ratios"] == [p["cpu_s"][0] / res["plain_cpu_s"][0]]
        assert (t.name, t.value, t.limit, t.met) == (
            p["strategy"],
            p["ratio"],
            TARGET_RATIO,
            p["ratio"] <= TARGET_RATIO,
        )
    record = start().record("strategy", res.pop("targets"), **res)
    md = write_result(tmp_path, record, summary_markdown(record))
    assert "| split:k=4 |" in md and "hoard:cap=200 run over the plain run, CPU time" in md
    assert read_record(tmp_path / "strategy.json")["user"] == res["user"]
