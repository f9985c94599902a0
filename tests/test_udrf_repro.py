"""``make reproduce-udrf`` in its --quick form on a slice of the real Google sample."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from experiments.udrf_repro import run_experiment

SHARED = Path(os.environ.get("FAIRSIM_SHARED", Path(__file__).resolve().parents[2] / "shared"))


@pytest.mark.skipif(
    not (SHARED / "traces" / "google-2011").is_dir(), reason="needs ../shared/traces/google-2011"
)
def test_quick_reproduction(tmp_path: Path) -> None:
    report = run_experiment(tmp_path, shared=SHARED, quick=True, progress=False)
    s = json.loads((tmp_path / "summary.json").read_text())
    # every task run of the slice completes under both schedulers (no job is left blocked)
    for name in ("drf-classes", "udrf"):
        r = s["runs"][name]
        assert r["tasks"] > 10_000 and r["tasks_completed"] == r["tasks"]
    assert s["jobs_completed_both"] == s["jobs"]
    # the headline comparisons of Section V on this slice (seeded, so exact)
    assert s["checks"]["fig9"] and s["checks"]["fig10a"]
    assert s["jct_reduction_pct"] > 10.0
    assert s["machine_classes"] >= 5 and 50.0 < s["jobs_with_1_2_classes_pct"] < 75.0
    waste = pd.read_parquet(tmp_path / "waste.parquet")
    assert (
        set(waste["scheduler"]) == {"drf-classes", "udrf"}
        and waste[["cpu", "mem"]].ge(0).all().all()
    )
    text = report.read_text()
    assert "| Fig. 9 |" in text and "| Fig. 10c |" in text
    for png in ("fig9_waste.png", "fig10a_jct_cdf.png", "fig10bc_jct_reduction.png"):
        assert (tmp_path / png).stat().st_size > 10_000
