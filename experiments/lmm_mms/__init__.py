"""The LMM-MMS paper's Section 5 on the Alibaba batch tasks: ``paper`` (its numbers, settings
and statements), ``experiment`` (the samples, one seed at a time), ``figures`` and ``report``
(the claims, ``claims.json`` and ``report.md``)."""

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
    over ``jobs`` worker processes into ``out`` and return the path of its ``report.md``.

    ``shared`` holds ``traces/alibaba-2018``, converted once into the trace cache
    (:func:`~fairsim.experiments.lmm_mms.experiment.converted_tasks`). ``quick``: user scales
    50 and 300, elephant shares 0 and 50 %, and
    :data:`~fairsim.experiments.lmm_mms.experiment.QUICK_SAMPLES` samples per setting and seed.
    """
    from fairsim.experiments.lmm_mms.experiment import (
        QUICK_SAMPLES,
        SAMPLES,
        converted_tasks,
        run_experiment,
    )
    from fairsim.experiments.lmm_mms.report import write_report

    run = run_experiment(
        converted_tasks(shared),
        out,
        samples=QUICK_SAMPLES if quick else SAMPLES,
        seeds=seeds,
        jobs=jobs,
        quick=quick,
        progress=progress,
    )
    return write_report(out, run)
