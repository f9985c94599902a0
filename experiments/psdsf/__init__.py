"""The PS-DSF paper's Section V (Tables III-IV, Fig. 6)."""

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
    from fairsim.experiments.psdsf.experiment import run_experiment

    return Path(run_experiment(out=out, quick=quick, progress=progress))
