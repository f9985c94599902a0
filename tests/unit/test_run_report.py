"""The generic run report compares schedulers on the same job set and gives n per curve."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from fairsim.scenario.config import RunConfig
from fairsim.scenario.output import run_config
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

CFG = {
    "name": "report-test",
    "seed": 3,
    "trace": {"format": "synthetic", "n_tasks": 3000, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 6, "source": "table-i"},
    "schedulers": ["slots-10", "bf-drfh"],
    "collect": {"utilization_interval_s": 60},
}


def test_report_has_common_job_set_and_own_numbers(tmp_path: Path) -> None:
    out = tmp_path / "o"
    summaries = run_config(RunConfig.model_validate(CFG), out, progress=False)
    done = {
        s: set(
            pd.read_parquet(out / s / "jobs.parquet").dropna(subset=["completion_time_s"])["job_id"]
        )
        for s in CFG["schedulers"]
    }
    common = done["slots-10"] & done["bf-drfh"]
    assert 0 < len(common) < min(len(d) for d in done.values())  # the sets differ: a real test
    text = (out / "report.md").read_text()
    assert f"Same job set: the {len(common):,} jobs completed under every scheduler:" in text
    for s in CFG["schedulers"]:
        jobs = pd.read_parquet(out / s / "jobs.parquet").set_index("job_id")
        mean = jobs.loc[sorted(common), "completion_time_s"].mean()
        row = re.search(rf"^\| {s} \| {len(common):,} \| ([\d,]+) \|", text, re.M)
        assert row is not None and int(row.group(1).replace(",", "")) == round(mean)
        # the per-scheduler row reports its own completed jobs, and how every task ended
        s_json = json.loads((out / s / "summary.json").read_text())
        assert s_json == {**summaries[s]}
        assert s_json["jobs_completed"] == len(done[s])
        assert sum(s_json["ended"].values()) == s_json["tasks"]
    assert (out / "jct_cdf.png").is_file()
