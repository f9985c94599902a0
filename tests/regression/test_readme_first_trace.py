"""The README's first trace example shows the schedulers, not a backlog (issue 39, friction 4):
``configs/google-1h-machines.yaml``, the Google sample's first hour on the trace's own 12,583
machines. Under Best-Fit DRFH 3.5 % of the tasks are still queued at the horizon, so the overload
rule (more than 50 %) does not apply; under Slots-14, which uses 45 % of the CPU, 55 % are,
and the report says that this backlog is the scheduler's, not the pool's. Measured once and
pinned. (``configs/google-1h.yaml``, the same hour on 500 servers, is overloaded under every
scheduler: tests/regression/test_regression_google.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fairsim.scenario.config import load_config
from fairsim.scenario.output import run_to_folder
from fairsim.scenario.reporting.run_report import overload_line, overload_note

ROOT = Path(__file__).resolve().parents[2]


def _readme_first_trace_config() -> Path:
    """The config of the README's first ``fairsim run configs/google-...`` command."""
    usage = (ROOT / "README.md").read_text().split("## Usage", 1)[1]
    m = re.search(r"^fairsim run (configs/google-[\w-]+\.yaml)", usage, re.M)
    assert m is not None, "README's Usage runs no Google config"
    return ROOT / m[1]


@pytest.mark.slow
def test_readme_first_trace_example_is_not_a_backlog(google_dir: Path, tmp_path: Path) -> None:
    path = _readme_first_trace_config()
    assert path.name == "google-1h-machines.yaml"
    cfg = load_config(
        path, overrides=[f"trace.path={google_dir}", "schedulers=[slots-14, bf-drfh]"]
    )
    assert (cfg.cluster.source, cfg.cluster.servers) == ("machine-events", None)
    run_to_folder(cfg, tmp_path / "out", progress=False, report=False)
    names = ("slots-14", "bf-drfh")
    s = {n: json.loads((tmp_path / "out" / n / "summary.json").read_text()) for n in names}
    assert {n: v["servers"] for n, v in s.items()} == {"slots-14": 12_583, "bf-drfh": 12_583}
    assert s["bf-drfh"]["tasks"] == s["slots-14"]["tasks"] == 168_105
    assert (s["bf-drfh"]["start_s"], s["bf-drfh"]["horizon_s"]) == (600.0, 3600.0)
    assert s["bf-drfh"]["ended"] == {
        "finished": 34_551,
        "censored": 106_767,
        "running": 20_909,
        "queued": 5_878,
        "unplaceable": 0,
    }
    assert s["slots-14"]["ended"]["queued"] == 92_272
    cpu = {n: v["mean_utilization"]["cpu"] for n, v in s.items()}
    assert cpu["bf-drfh"] > 0.95 and cpu["slots-14"] < 0.5
    assert overload_note({"bf-drfh": s["bf-drfh"]}) is None
    note = overload_note(s)
    assert note is not None and note.startswith("**The queue saturates** under slots-14 (")
    assert "not under bf-drfh (3 % queued) on the same pool and workload" in note
    line = overload_line(s)
    assert line is not None and line.startswith("warning: the queue saturates under slots-14:")
