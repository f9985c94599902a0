"""Smoke test of the Alibaba benchmark (conversion rates; the full replay runs in `make bench`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_alibaba
from benchmarks.targets import read_record
from fairsim.traces.paths import shared_dir


@pytest.mark.slow
def test_conversion_rates_are_measured(tmp_path: Path) -> None:
    assert (
        bench_alibaba.main(["--shared", str(shared_dir()), "--out", str(tmp_path), "--skip-replay"])
        == 0
    )
    res = read_record(tmp_path / "alibaba.json")
    by_format = {c["format"]: c for c in res["convert"]}
    assert set(by_format) == set(bench_alibaba.SAMPLES)
    assert by_format["alibaba-2017"]["instances"] == 11_059_704
    assert by_format["alibaba-2018-spar"]["tasks"] == 67_634
    assert all(c["rows_per_s"] > 0 and c["peak_rss_mb"] > 0 for c in res["convert"])
    assert "skipped (--skip-replay)" in (tmp_path / "alibaba.md").read_text()
    assert [(t["name"], t["met"]) for t in res["targets"]] == [
        ("replay-2017 wall", False),
        ("replay-2017 memory", False),
    ]


def test_report_flags_a_missed_target() -> None:
    replay = {
        "tasks": 11_059_704,
        "servers": 1313,
        "tasks_completed": 11_059_704,
        "total_wall_s": 700.0,
        "engine_wall_s": 650.0,
        "engine_tasks_per_s": 17_015.0,
        "peak_rss_mb": 1500.0,
        "loadavg_1m_at_end": 1.0,
    }
    wall, memory = bench_alibaba.targets(replay)
    assert (wall.value, wall.limit, wall.direction, wall.met) == (700.0, 600.0, "<", False)
    assert (memory.value, memory.limit, memory.met) == (1500.0, 2048.0, True)
    # issue 45's 2 GB: 2,500 MB (under the 4,096 MB target before it) is a miss
    over = bench_alibaba.targets({**replay, "peak_rss_mb": 2500.0})[1]
    assert (over.value, over.limit, over.met) == (2500.0, 2048.0, False)
    md = bench_alibaba._markdown({"convert": [], "replay-2017": replay})
    assert "- engine: 650 s, 17,015 tasks/s" in md
