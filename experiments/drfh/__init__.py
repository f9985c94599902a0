"""The DRFH paper's Section VI on the real Google sample."""

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
    over ``jobs`` worker processes into ``out`` and return the path of its ``report.md``."""
    from fairsim.experiments.drfh.experiment import run_experiment

    return Path(
        run_experiment(
            shared=shared, out=out, quick=quick, progress=progress, seeds=seeds, jobs=jobs
        )
    )
