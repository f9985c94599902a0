"""Smoke test of the conversion benchmark (the 300k and 3M traces run in `make bench`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_convert
from benchmarks.targets import read_record
from fairsim.traces.paths import shared_dir


@pytest.mark.slow
def test_two_small_points_are_measured_and_checked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bench_convert, "SIZES", {"300k": 20_000, "3M": 60_000})
    assert bench_convert.main(["--shared", str(shared_dir()), "--out", str(tmp_path)]) == 0
    res = read_record(tmp_path / "convert.json")
    small, large = res["points"]["300k"], res["points"]["3M"]
    assert small["parts"] == 1 and large["parts"] == 1  # one part per 50,000 tasks
    assert abs(small["tasks"] - 20_000) <= 10_005  # whole jobs drawn (synth_raw)
    assert large["tasks"] > small["tasks"]
    assert small["buckets"] == large["buckets"] == 1
    # the child's own peak (numpy, pandas, pyarrow and the fold), not the parent's resample
    assert 100 < small["peak_rss_mb"] < 1024 and large["tasks_per_s"] > 0
    assert [t["name"] for t in res["targets"]] == ["peak", "peak 3M / 300k", "3M speed"]
    assert res["targets"][1]["value"] == large["peak_rss_mb"] / small["peak_rss_mb"]
    assert "| 3M | 1 |" in (tmp_path / "convert.md").read_text()


def test_targets_flag_missed_targets() -> None:
    points = {
        "300k": {"peak_rss_mb": 400.0, "tasks_per_s": 90_000.0},
        "3M": {"peak_rss_mb": 700.0, "tasks_per_s": 80_000.0},
    }
    peak, ratio, speed = bench_convert.targets(points)
    assert (peak.value, peak.met) == (700.0, True)
    assert (ratio.value, ratio.limit, ratio.direction, ratio.met) == (1.75, 1.5, "<=", False)
    assert (speed.value, speed.met) == (80_000.0, False)
    failed = bench_convert.targets({"300k": {"error": "x"}})
    assert [(t.value, t.met) for t in failed] == [(None, False)] * 3
    md = bench_convert._markdown({"points": {"3M": {"error": "boom"}}})
    assert "| 3M | error: boom |" in md
