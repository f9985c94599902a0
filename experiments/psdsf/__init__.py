"""The PS-DSF paper's Section V (Tables III-IV, Fig. 6): ``paper`` (its numbers and statements),
``experiment`` (the runs, one seed at a time, and the exact allocations), ``figures`` and
``report`` (the claims, ``claims.json`` and ``report.md``)."""

from __future__ import annotations

from pathlib import Path


def reproduce(
    *,
    out: Path,
    shared: Path,
    quick: bool = False,
    progress: bool = True,
    seeds: int = 5,
    jobs: int | None = None,
) -> Path:
    """The uniform entry point (:mod:`fairsim.experiments.reproductions`): run seeds ``1 .. seeds``
    over ``jobs`` worker processes into ``out`` and return the path of its ``report.md``
    (``shared`` is not used: the scenario is the config ``configs/psdsf-fig6.yaml``)."""
    from fairsim.experiments.psdsf.experiment import CONFIG, run_experiment
    from fairsim.experiments.psdsf.report import write_report
    from fairsim.scenario.config import load_config

    summary = run_experiment(out=out, quick=quick, progress=progress, seeds=seeds, jobs=jobs)
    return write_report(out, summary, load_config(CONFIG))
