"""Bonald and Roberts's Section 4: the Markov-chain demand model, its fluid allocations and the
packet-level fair queueing router.

Files: ``paper.py`` (the paper's statements and our thresholds), ``experiment.py`` (the runs: the
Markov chain once, the simulations per seed), ``figures.py``, ``report.py`` (claims and
``report.md``); ``markov_chain.py`` and ``packet_fq.py`` are the models.
"""

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
    from fairsim.experiments.bonald_roberts.experiment import run_experiment

    return Path(run_experiment(out=out, quick=quick, progress=progress, seeds=seeds, jobs=jobs))
