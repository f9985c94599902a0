"""The LMM-MMS paper's Section 5 on the Alibaba batch tasks."""

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
    from fairsim.experiments.lmm_mms.experiment import run_from_shared

    return Path(run_from_shared(shared, out, quick=quick))
