"""Bonald and Roberts's Section 4: the Markov-chain demand model, its fluid allocations and the
packet-level fair queueing router."""

from __future__ import annotations

from pathlib import Path


def reproduce(*, out: Path, shared: Path, quick: bool = False, progress: bool = True) -> Path:
    """The uniform entry point (:mod:`fairsim.experiments.reproductions`): run the reproduction
    into ``out`` and return the path of its ``report.md``."""
    from fairsim.experiments.bonald_roberts.experiment import run_experiment

    return Path(run_experiment(out=out, quick=quick, progress=progress))
