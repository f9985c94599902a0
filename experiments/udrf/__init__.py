"""The UDRF paper's Section V on the Google sample: ``paper`` (its statements), ``experiment``
(the runs, one seed), ``figures`` (numbers and figures over seeds), ``report`` (claims and
report)."""

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
    (:func:`fairsim.experiments.udrf.report.reproduce`)."""
    from fairsim.experiments.udrf.report import reproduce as run

    return Path(run(out=out, shared=shared, quick=quick, progress=progress, seeds=seeds, jobs=jobs))
