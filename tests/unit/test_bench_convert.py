"""Smoke test of the conversion benchmark (the 300k and 3M traces run in `make bench`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_convert
from fairsim.traces.paths import shared_dir


@pytest.mark.slow
def test_two_small_points_are_measured_and_checked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bench_convert, "SIZES", {"300k": 20_000, "3M": 60_000})
    assert bench_convert.main(["--shared", str(shared_dir()), "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "convert.json").read_text())
    small, large = res["points"]["300k"], res["points"]["3M"]
    assert small["parts"] == 1 and large["parts"] == 1  # one part per 50,000 tasks
    assert abs(small["tasks"] - 20_000) <= 10_005  # whole jobs drawn (synth_raw)
    assert large["tasks"] > small["tasks"]
    assert small["buckets"] == large["buckets"] == 1
    assert small["peak_rss_mb"] > 0 and large["tasks_per_s"] > 0
    assert set(res["checks"]) == {"peak_below_1gb", "peak_ratio_3m_300k", "tasks_per_s_3m"}
    assert "| 3M | 1 |" in (tmp_path / "convert.md").read_text()


def test_checks_flag_missed_targets() -> None:
    points = {
        "300k": {"peak_rss_mb": 400.0, "tasks_per_s": 90_000.0},
        "3M": {"peak_rss_mb": 700.0, "tasks_per_s": 80_000.0},
    }
    c = bench_convert.checks(points)
    assert c["peak_below_1gb"]["met"] is True
    assert c["peak_ratio_3m_300k"] == {"value": 1.75, "target": 1.5, "met": False}
    assert c["tasks_per_s_3m"]["met"] is False
    assert bench_convert.checks({"300k": {"error": "x"}}) == {"error": "a point failed"}
    md = bench_convert._markdown({"points": {"3M": {"error": "boom"}}, "checks": c})
    assert "error: boom" in md and "NOT met" in md
