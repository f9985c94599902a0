"""The numbers of the UDRF reproduction over its seeds (Section V, Figs. 6-10).

:func:`load_seeds` reads what :func:`fairsim.experiments.udrf.experiment.run_seed` wrote for every
seed (``OUT/seed-<s>/``) into frames with a ``seed`` column; the functions below compute the
quantities the claims of :mod:`fairsim.experiments.udrf.claims` and the figures rest on, each
with its 95 % interval: across seeds (Student t) for run-level numbers, bootstrap over jobs for
grouped reductions.

A JCT reduction is read two ways (:data:`REDUCTION_MEASURES`), as in the DRFH reproduction
(issue 44: the same measure across papers): the mean of the per-job reductions
``1 - jct_udrf / jct_baseline`` over the jobs completed under both (``mean_of_ratios``, the one
that decides a claim), and the reduction of the mean, ``1 - mean(udrf) / mean(baseline)``
(``ratio_of_means``, shown beside it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.experiments.claims import Estimate, across_seeds, bootstrap_units, spearman
from fairsim.experiments.kit import seed_dir
from fairsim.experiments.udrf.experiment import BASELINE, UDRF_NAME
from fairsim.scenario.reporting.bootstrap import grouped_job_reduction, grouped_ratio, job_reduction
from fairsim.simulator.constraints import needed_classes_distribution

#: The two readings of a JCT reduction over a set of paired jobs: the mean of the per-job
#: reductions ``1 - jct_udrf / jct_baseline`` (first: the one that decides a claim) and the
#: reduction of the mean JCT ``1 - mean(udrf) / mean(baseline)``.
REDUCTION_MEASURES = ("mean_of_ratios", "ratio_of_means")

#: Parts of a job's completion time: the JCT, its wait (queue entry to first start) and its
#: execution (first start to last finish).
PARTS = ("jct", "wait", "exec")


@dataclass(frozen=True)
class Seeds:
    """The per-seed result files of a reproduction, pooled (each frame has a ``seed`` column).

    Attributes
    ----------
    seeds : list of int
    jct : pandas.DataFrame
        ``jct.parquet`` rows: one per seed, scheduler and job.
    waste : pandas.DataFrame
        ``waste.parquet`` rows: one per seed, scheduler and grid point.
    rducs : pandas.DataFrame
        ``rducs.parquet`` rows: one per seed and grid point at which UDRF had waiting tasks.
    jobs : pandas.DataFrame
        ``jobs.parquet`` rows: one per seed and job (user, repetitions, tasks, classes needed).
    summaries : dict of int to dict
        Every seed's ``summary.json``.
    """

    seeds: list[int]
    jct: pd.DataFrame
    waste: pd.DataFrame
    rducs: pd.DataFrame
    jobs: pd.DataFrame
    summaries: dict[int, dict[str, Any]]

    @property
    def schedulers(self) -> list[str]:
        """The schedulers run, in run order."""
        return list(self.summaries[self.seeds[0]]["schedulers"])


def load_seeds(out: Path, seeds: Sequence[int]) -> Seeds:
    """Read the files of every seed under ``out``."""

    def read(name: str) -> pd.DataFrame:
        return pd.concat(
            [pd.read_parquet(seed_dir(out, s) / name).assign(seed=s) for s in seeds],
            ignore_index=True,
        )

    return Seeds(
        seeds=list(seeds),
        jct=read("jct.parquet"),
        waste=read("waste.parquet"),
        rducs=read("rducs.parquet"),
        jobs=read("jobs.parquet"),
        summaries={s: json.loads((seed_dir(out, s) / "summary.json").read_text()) for s in seeds},
    )


def per_seed(data: Seeds, scheduler: str, key: str, sub: str | None = None) -> list[float]:
    """A headline number of ``scheduler`` in every seed's summary (``sub``: a nested key)."""
    values = (data.summaries[s]["schedulers"][scheduler][key] for s in data.seeds)
    return [float(v[sub] if sub is not None else v) for v in values]


def seed_estimate(data: Seeds, scheduler: str, key: str, sub: str | None = None) -> Estimate:
    """:func:`per_seed` as an estimate across seeds."""
    return across_seeds(per_seed(data, scheduler, key, sub))


def paired_diff(data: Seeds, key: str, sub: str | None = None) -> Estimate:
    """Baseline minus UDRF of a headline number, paired by seed, across seeds."""
    b = per_seed(data, BASELINE, key, sub)
    u = per_seed(data, UDRF_NAME, key, sub)
    return across_seeds([x - y for x, y in zip(b, u, strict=True)])


def pooled_pairs(data: Seeds, base: str = BASELINE, other: str = UDRF_NAME) -> pd.DataFrame:
    """The jobs completed under both schedulers in every seed, side by side (suffixes ``_b``,
    ``_o``); a unit of the bootstrap is one job of one seed."""
    times = ["job_id", "jct_s", "wait_s", "exec_s", "entry_s", "submit_s", "seed"]
    a = data.jct.loc[data.jct["scheduler"] == base, times]
    b = data.jct.loc[data.jct["scheduler"] == other, [*times, "repetitions", "classes", "user"]]
    both = a.merge(b, on=["seed", "job_id"], suffixes=("_b", "_o"))
    return both.dropna(subset=["jct_s_b", "jct_s_o"]).reset_index(drop=True)


#: The grouped reduction of each reading of :data:`REDUCTION_MEASURES`.
GROUPED_REDUCTION = {"mean_of_ratios": grouped_job_reduction, "ratio_of_means": grouped_ratio}


def reduction_table(
    pairs: pd.DataFrame, col: str, part: str, seeds: int, measure: str = "mean_of_ratios"
) -> pd.DataFrame:
    """The reduction of ``part`` (``jct``, ``wait`` or ``exec``) per group of ``col``
    (``repetitions`` or ``classes``) under ``measure`` (:data:`REDUCTION_MEASURES`), with its
    bootstrap 95 % interval over the group's jobs (:func:`overall_reduction`).

    Returns
    -------
    pandas.DataFrame
        ``group, jobs, reduction, low, high`` (reductions as fractions).
    """
    rows = []
    for k, g in pairs.groupby(col, sort=True):
        e = overall_reduction(g, part, seeds, measure)
        rows.append([int(str(k)), len(g), e.value, e.low, e.high])
    return pd.DataFrame(rows, columns=["group", "jobs", "reduction", "low", "high"])


def overall_reduction(
    pairs: pd.DataFrame, part: str, seeds: int, measure: str = "mean_of_ratios"
) -> Estimate:
    """The reduction of ``part`` over all paired jobs, bootstrap over jobs.

    Parameters
    ----------
    pairs : pandas.DataFrame
        From :func:`pooled_pairs` (columns ``<part>_s_b``, ``<part>_s_o``).
    part : str
        ``jct``, ``wait`` or ``exec``.
    seeds : int
        The seeds the pairs come from.
    measure : str
        ``mean_of_ratios``: the mean of the per-job reductions ``1 - udrf / baseline`` (jobs
        whose baseline value is 0 left out); ``ratio_of_means``: ``1 - mean(udrf) /
        mean(baseline)``. The paper's Figs. 10b-c (Sec. V) plot a "completion time reduction"
        without saying which.

    Returns
    -------
    Estimate
        The reduction as a fraction, with its percentile-bootstrap 95 % interval over the jobs.

    Raises
    ------
    ValueError
        For an unknown ``measure``.
    """
    b = pairs[f"{part}_s_b"].to_numpy(float)
    o = pairs[f"{part}_s_o"].to_numpy(float)
    if measure == "ratio_of_means":

        def stat(idx: np.ndarray) -> float:
            d = b[idx].sum()
            return 1.0 - o[idx].sum() / d if d > 0 else math.nan

    elif measure == "mean_of_ratios":
        r = job_reduction(o, b)

        def stat(idx: np.ndarray) -> float:
            v = r[idx]
            v = v[np.isfinite(v)]
            return float(v.mean()) if len(v) else math.nan

    else:
        raise ValueError(f"measure: {measure!r} (expected one of {', '.join(REDUCTION_MEASURES)})")
    return bootstrap_units(len(pairs), stat, seeds=seeds, what="jobs")


def seed_rhos(data: Seeds, frame: pd.DataFrame, fn: Any, *args: str) -> list[float]:
    """Spearman's rho of a grouped trend in every seed alone (for the reason text)."""
    seeds = (frame[frame["seed"] == s] for s in data.seeds)
    return [spearman(*fn(*(g[a].to_numpy(float) for a in args))(np.arange(len(g)))) for g in seeds]


def fig8_expectation(data: Seeds) -> tuple[float, float, float]:
    """What the constraint model leads one to expect for Fig. 8, over the seeds' jobs.

    Returns
    -------
    tuple of float
        The expected share of jobs needing one or two classes (each job's cap, its distinct
        tasks up to the number of classes, through
        :func:`~fairsim.simulator.constraints.needed_classes_distribution`), the share with one
        task, and the share with two.
    """
    s0 = data.summaries[data.seeds[0]]
    target = s0.get("classes_target")
    n_c = int(s0["machine_classes"])
    tasks = data.jobs["tasks"].clip(lower=1)
    caps = tasks.clip(upper=n_c).astype(int)
    one = float((tasks == 1).mean())
    two = float((tasks == 2).mean())
    if not target:
        return math.nan, one, two
    dist = needed_classes_distribution(
        {int(k): float(v) for k, v in target.items()},
        {int(str(c)): int(m) for c, m in caps.value_counts().items()},
    )
    expected = float(np.mean([dist[c].get(1, 0.0) + dist[c].get(2, 0.0) for c in caps.tolist()]))
    return expected, one, two
