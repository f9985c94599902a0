"""Every registered online scheduler on a slice of the real Google sample with placement
constraints (every registered scheduler runs on the real Google sample with constraints)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fairsim.scenario.config import parse_config
from fairsim.scenario.output import run_to_folder
from fairsim.schedulers.registry import registrations

#: Every registered scheduler, one configuration each (the first of the registry's examples),
#: except those that need more than a workload and a pool (``recorded`` needs the trace's own
#: machines, ``cluster: {source: machine-events}``, not these 100 Table I servers; its real-trace
#: run is tests/regression/test_recorded_google.py).
SCHEDULERS = [
    r.examples[0] if r.examples else r.name for r in registrations(plugins=False) if not r.requires
]
LEFT_OUT = [r.name for r in registrations(plugins=False) if r.requires]


@pytest.mark.slow
def test_every_scheduler_on_the_google_sample_with_constraints(
    tmp_path: Path, google_dir: Path
) -> None:
    """Fails (never skips) when ``$FAIRSIM_SHARED/traces/google-2011`` is missing."""
    assert LEFT_OUT == ["recorded"]
    cfg = parse_config(
        {
            "name": "google-constrained",
            "seed": 3,
            "trace": {
                "format": "google-2011",
                "path": str(google_dir),
                "parts": "0-13",
                "start_s": 601,  # after the tasks that exist before the window (submit 600 s)
                "end_s": 900,
                "constraints": {"share": 0.5, "classes": [1, 2], "per": "job"},
            },
            "cluster": {"servers": 100, "source": "table-i"},
            "schedulers": SCHEDULERS,
            "collect": {"utilization_interval_s": 30, "horizon_s": 20_000},
        }
    )
    out = run_to_folder(cfg, tmp_path, progress=False, report=False)
    assert set(out) == set(SCHEDULERS)
    servers = pd.read_parquet(tmp_path / "servers.parquet")
    assert len(servers) == 100
    n = {name: s["tasks"] for name, s in out.items()}
    assert len(set(n.values())) == 1 and n["udrf"] > 1_000  # the same slice for everyone
    for name, s in out.items():
        # the engine rejects any placement that breaks a constraint; every task is accounted for
        tasks = pd.read_parquet(tmp_path / name / "tasks.parquet")
        assert len(tasks) == s["tasks"]
        assert s["tasks_completed"] > 0.9 * s["tasks"], name
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary) == set(SCHEDULERS)
