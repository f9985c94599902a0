"""Synthetic complex jobs (fairsim.traces.synth.synth_complex_jobs): valid DAGs, fitted shape,
replay."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairsim.scenario.config import parse_config
from fairsim.scenario.output import run_to_folder
from fairsim.simulator.jobs import parse_parents
from fairsim.traces import synth
from fairsim.traces.dag import job_dag
from fairsim.traces.io import write_tasks
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S
from fairsim.traces.synth import fit_dag_sample, synth_complex_jobs, synth_google_like


def test_same_rows_as_google_like_plus_dag_and_instances() -> None:
    base = synth_google_like(4_000, seed=5)
    f = synth_complex_jobs(4_000, seed=5)
    cols = ["job_id", "task_index", "user", "submit_s", "cpu", "mem", "run_s"]
    assert f[cols].equals(base[cols])
    assert f.equals(synth_complex_jobs(4_000, seed=5))
    assert not f["parents"].equals(synth_complex_jobs(4_000, seed=6)["parents"])
    assert (synth_complex_jobs(4_000, seed=5, instances=False)["instances"] == 1).all()


def test_every_dag_is_valid_and_acyclic() -> None:
    f = synth_complex_jobs(20_000, seed=2)
    n_edges = 0
    for _, job in f.groupby("job_id"):
        job = job.sort_values("task_index")
        # re-encode as Alibaba names (M<i>_<parents>) and let the trace validator check them
        names = [
            f"M{i + 1}" + "".join(f"_{p + 1}" for p in parse_parents(ps))
            for i, ps in zip(job["task_index"], job["parents"], strict=True)
        ]
        index, _ = job_dag(names)  # raises DagError on a missing parent or a cycle
        assert index == [i + 1 for i in job["task_index"]]
        n_edges += sum(len(parse_parents(p)) for p in job["parents"])
    assert n_edges > 1_000


def test_fit_recovers_the_generator_constants(tmp_path: Path) -> None:
    f = synth_complex_jobs(200_000, seed=3)
    write_tasks(f, tmp_path / "tasks.parquet")
    fit = fit_dag_sample(tmp_path / "tasks.parquet")
    assert fit["P_DAG_JOB"] == pytest.approx(synth.P_DAG_JOB, abs=0.02)
    assert fit["P_SINGLE_INSTANCE"] == pytest.approx(synth.P_SINGLE_INSTANCE, abs=0.01)
    # draws below 2 are clipped to 2, which lifts the mean of the logs by about 0.09
    assert synth.INST_LOG_MU < fit["INST_LOG_MU"] < synth.INST_LOG_MU + 0.15
    # the cap at the task index pulls the parent count below the geometric mean a little
    assert 1.2 < fit["PARENTS_MEAN"] < synth.PARENTS_MEAN + 0.02
    # task 0 of every DAG job is a root on top of P_ROOT
    assert synth.P_ROOT < fit["P_ROOT"] < synth.P_ROOT + 0.1


@pytest.mark.slow
def test_fit_on_the_alibaba_2018_sample(tmp_path: Path) -> None:
    from fairsim.traces.alibaba import convert_alibaba
    from fairsim.traces.paths import shared_dir

    convert_alibaba(
        "alibaba-2018-spar", shared_dir() / "traces" / "alibaba-2018" / "spar-derived", tmp_path
    )
    fit = fit_dag_sample(tmp_path / "tasks.parquet")
    assert fit["P_DAG_JOB"] == pytest.approx(synth.P_DAG_JOB, abs=1e-4)
    assert fit["P_ROOT"] == pytest.approx(synth.P_ROOT, abs=1e-4)
    assert fit["PARENTS_MEAN"] == pytest.approx(synth.PARENTS_MEAN, abs=1e-4)
    assert fit["INST_LOG_SIGMA"] == pytest.approx(synth.INST_LOG_SIGMA, abs=1e-4)
    assert fit["INST_MAX"] == synth.INST_MAX


def test_synthetic_complex_config_runs_with_the_dag_enforced(tmp_path: Path) -> None:
    cfg = parse_config(
        {
            "name": "complex",
            "trace": {
                "format": "synthetic",
                "duration_s": SAMPLE_WINDOW_S,
                "model": "complex",
                "n_tasks": 400,
                "cache_dir": str(tmp_path / "cache"),
            },
            "cluster": {"servers": 30},
            "schedulers": ["ff-drfh"],
            "collect": {"horizon_s": 2e6},
        }
    )
    s = run_to_folder(cfg, tmp_path / "out", progress=False, report=False)["ff-drfh"]
    rows = pd.read_parquet(next((tmp_path / "cache").glob("*/tasks.parquet")))
    assert s["tasks"] == int(rows["instances"].sum()) > 400  # instances were expanded
    t = pd.read_parquet(tmp_path / "out" / "ff-drfh" / "tasks.parquet")
    first = t.groupby(["job_id", "task_index"])["start_s"].min()
    last = t.groupby(["job_id", "task_index"])["finish_s"].max()
    n_checked = 0
    for row in rows.itertuples():
        for p in parse_parents(row.parents):
            start = first.loc[(row.job_id, row.task_index)]
            if not np.isnan(start):
                assert start >= last.loc[(row.job_id, p)]
                n_checked += 1
    assert n_checked > 10
