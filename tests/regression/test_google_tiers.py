"""Regression on a slice of the shipped tiered scenario (configs/google-tiers.yaml): the Google
sample's tiers as a queue tree, flat BF-DRFH against online H-DRF, measured against exact H-DRF.
Trace time 1,800-2,700 s (parts 0-3) on 100 Table I servers, a few seconds. The numbers were
measured once and are pinned: a change in the converter's tiers, the leaf rule, ``hdrf`` or the
per-queue rows that moves them must be deliberate."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fairsim.scenario.config import load_config
from fairsim.scenario.output import run_to_folder

ROOT = Path(__file__).resolve().parents[2]
QUEUES = ["production", "batch", "free"]

#: scheduler -> per leaf queue (tasks started, tasks completed, jobs completed)
EXPECTED: dict[str, dict[str, tuple[int, int, int]]] = {
    "bf-drfh": {"production": (13, 12, 12), "batch": (3922, 2222, 60), "free": (288, 251, 51)},
    "hdrf-best-fit": {
        "production": (14, 12, 12),
        "batch": (3909, 2214, 60),
        "free": (293, 253, 53),
    },
}
#: scheduler -> per queue (time-mean dominant share, exact H-DRF's), summary.json
#: (the reference is the same for both: exact H-DRF of the tasks present, the same workload;
#: 0 at the first instant, 1,800 s, when no task is present yet)
EXPECTED_SHARES: dict[str, dict[str, tuple[float, float]]] = {
    "bf-drfh": {
        "production": (0.0009833555218523452, 0.0015396283860658164),
        "shared": (0.509867701660686, 0.5375159505613026),
        "batch": (0.4863782843363433, 0.4786367034368008),
        "free": (0.023701282745569256, 0.06277125137275373),
    },
    "hdrf-best-fit": {
        "production": (0.0015396283860658164, 0.0015396283860658164),
        "shared": (0.5097799495172542, 0.5375159505613026),
        "batch": (0.48545475551752404, 0.4786367034368008),
        "free": (0.024537059420956887, 0.06277125137275374),
    },
}


@pytest.fixture(scope="module")
def tiers(google_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("google-tiers")
    cfg = load_config(
        ROOT / "configs" / "google-tiers.yaml",
        overrides=[
            f"trace.path={google_dir}",
            f"trace.cache_dir={tmp / 'cache'}",
            "trace.parts=0-3",
            "trace.start_s=1800",
            "trace.end_s=2700",
            "cluster.servers=100",
            # the two schedulers this regression pins (the preempting ones have their own tests)
            "schedulers=[bf-drfh, {name: hdrf, fit: best-fit}]",
        ],
    )
    run_to_folder(cfg, tmp / "out", progress=False, report=True)
    return tmp / "out"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bf-drfh", "hdrf-best-fit"])
def test_tiers_slice_per_queue_rows(tiers: Path, name: str) -> None:
    s = json.loads((tiers / name / "summary.json").read_text())
    q = pd.read_parquet(tiers / name / "queues.parquet")
    assert q["queue"].tolist() == QUEUES
    # every task reaches one leaf queue: the per-queue rows add up to the run's
    assert q["tasks"].tolist() == [14, 11_665, 582]
    assert int(q["tasks"].sum()) == s["tasks"]
    assert int(q["tasks_started"].sum()) == s["tasks_started"]
    assert int(q["tasks_completed"].sum()) == s["tasks_completed"]
    got = {
        r.queue: (r.tasks_started, r.tasks_completed, r.jobs_completed)
        for r in q.itertuples(index=False)
    }
    fq = s["fairness"]["queues"]
    assert s["fairness"]["reference"] == "hdrf"
    assert got == EXPECTED[name]
    for queue, (share, ref) in EXPECTED_SHARES[name].items():
        assert fq[queue]["dominant_share"] == pytest.approx(share, abs=1e-9)
        assert fq[queue]["reference_dominant_share"] == pytest.approx(ref, abs=1e-9)


@pytest.mark.slow
def test_tiers_slice_report_has_the_queues_section(tiers: Path) -> None:
    report = (tiers / "report.md").read_text()
    assert "## Queues" in report
    for name in ("bf-drfh", "hdrf-best-fit"):
        for queue in [*QUEUES, "shared"]:
            assert f"| {name} | {queue} |" in report
