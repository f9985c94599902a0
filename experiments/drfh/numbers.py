"""The numbers of one seed of the DRFH reproduction (Sec. VI: Table II, Figs. 4-8).

The per-run functions (:func:`table_ii`, :func:`fig5_utilization`, :func:`fig6_pairs`,
:func:`fig7_completion`, :func:`fig8_sharing_incentive`, :func:`fig4_deficit_phases`, ...) read
the result files that ``fairsim run`` writes into one seed's results directory ``R``
(docs/architecture.md) and compute the numbers the paper reports; Fig. 6b's estimators
(:func:`fig6_units`, :func:`fig6_bin_estimates`, :func:`fig6_trend`) bootstrap over jobs;
:func:`seed_numbers` gathers every one of a seed's numbers. Their estimates over seeds are in
:mod:`fairsim.experiments.drfh.estimates`, the figures in :mod:`fairsim.experiments.drfh.figures`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from fairsim.experiments.claims import (
    N_RESAMPLES,
    Estimate,
    bootstrap_units,
    spearman,
    spearman_trend,
)
from fairsim.experiments.drfh import paper
from fairsim.scenario.api import RunResult
from fairsim.scenario.reporting.fairness_panel import fairness_context, read_fairness
from fairsim.schedulers.exact.whole_task import whole_task_drfh
from fairsim.schedulers.static_fill import whole_task_shares

logger = logging.getLogger(__name__)


_TOL = 1e-9


#: Sub-folder of the runs under the older rule for right-censored tasks (``censored: complete``;
#: :mod:`fairsim.experiments.drfh.experiment`, step 3).
SENSITIVITY_DIR = "censored-complete"


#: Sub-folder of each seed's runs with ``collect.fairness`` on the Google trace
#: (:mod:`fairsim.experiments.drfh.experiment`, step 5).
FAIRNESS_DIR = "fairness"


#: The schedulers measured there: the two DRFH heuristics and Slots with 16 slots per maximum
#: server (the best Slots run of every seed so far, and the Fig. 5 baseline).
FAIRNESS_SCHEDULERS = ("slots-16", "ff-drfh", "bf-drfh")


#: Fig. 4's phases for the deficit (:func:`fig4_deficit_phases`): between the joins and user 1's
#: departure, the last one until the run ends.
FIG4_DEFICIT_PHASES = ("user 1 alone", "users 1+2", "users 1-3", "after user 1 departs")


#: Sub-folder of the production-context runs (:mod:`fairsim.experiments.drfh.experiment`, step 6):
#: ``configs/google-recorded.yaml`` on the trace's own machines, once (no draw depends on a seed).
PRODUCTION_DIR = "production"


#: The trace's own placements replayed, per reading of their requests (docs/recorded.md):
#: ``first`` (``recorded-first``: each run holds its task's first request, the workload every
#: simulated scheduler replays) and ``schedule`` (``recorded``, the default: each run holds its
#: own SCHEDULE row's request, what production placed).
PRODUCTION_READINGS = {"first": "recorded-first", "schedule": "recorded"}
#: The schedules of the side-by-side comparison, in display order: the trace's own placements on
#: the simulated schedulers' workload (the reading ``first``), then the paper's two heuristics
#: and Slots-16.
PRODUCTION_SCHEDULERS = (PRODUCTION_READINGS["first"], "bf-drfh", "ff-drfh", "slots-16")


def read_summary(results: str | os.PathLike[str], scheduler: str) -> dict[str, Any]:
    """``R/<scheduler>/summary.json`` (:meth:`fairsim.scenario.api.RunResult.from_folder`;
    FileNotFoundError without it)."""
    return RunResult.from_folder(Path(results) / scheduler).summary


def _mean_utilization(results: str | os.PathLike[str], scheduler: str) -> tuple[float, float]:
    """A run's mean (CPU, memory) utilisation: its summary's, else that of its utilisation."""
    root = Path(results) / scheduler
    summary_path = root / "summary.json"
    if summary_path.exists():
        mu = json.loads(summary_path.read_text()).get("mean_utilization") or {}
        if "cpu" in mu and "mem" in mu:
            return float(mu["cpu"]), float(mu["mem"])
    util = pd.read_parquet(root / "utilization.parquet", columns=["cpu", "mem"])
    return float(util["cpu"].mean()), float(util["mem"].mean())


_SLOTS_MODEL_RE = re.compile(r"^slots-(\d+)(?:-(single|cpu))?$")


def table_ii(results: str | os.PathLike[str], model: str = "multi") -> pd.DataFrame:
    """Mean utilisation of every ``slots-S`` run beside the paper's Table II.

    Parameters
    ----------
    results : path-like
        Results directory; every ``R/slots-S/`` present is used.
    model : {"multi", "single", "cpu"}
        Slot model (:class:`fairsim.schedulers.slots.Slots`): ``multi`` reads ``R/slots-S/``, the
        others ``R/slots-S-<model>/``.

    Returns
    -------
    pandas.DataFrame
        Columns ``slots`` (int), ``cpu``, ``mem`` (ours, fractions), ``paper_cpu``, ``paper_mem``
        (Table II, NaN for a slot count the paper did not report), sorted by ``slots``.
    """
    rows = []
    for d in sorted(Path(results).iterdir()) if Path(results).is_dir() else []:
        m = _SLOTS_MODEL_RE.match(d.name)
        if not m or not d.is_dir() or (m.group(2) or "multi") != model:
            continue
        try:
            cpu, mem = _mean_utilization(results, d.name)
        except FileNotFoundError:
            logger.warning("skipping %s: no summary.json mean_utilization or utilization", d)
            continue
        s = int(m.group(1))
        p_cpu, p_mem = paper.TABLE_II.get(s, (np.nan, np.nan))
        rows.append({"slots": s, "cpu": cpu, "mem": mem, "paper_cpu": p_cpu, "paper_mem": p_mem})
    cols = ["slots", "cpu", "mem", "paper_cpu", "paper_mem"]
    table = pd.DataFrame(rows, columns=cols)
    return table.sort_values("slots", ignore_index=True).astype({"slots": "int64"})


def best_slots(table: pd.DataFrame) -> str:
    """Name of the Slots scheduler with the highest mean of CPU and memory utilisation.

    The paper (Sec. VI) "chooses the one with the highest CPU and memory utilization"; we read this
    as the highest average of the two. Ties go to the smaller slot count.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`table_ii`.

    Returns
    -------
    str
        E.g. ``"slots-14"``.

    Raises
    ------
    ValueError
        If ``table`` is empty.
    """
    if table.empty:
        raise ValueError("best_slots: table has no slots rows (no R/slots-S/ results found)")
    ordered = table.sort_values("slots", kind="stable")
    score = ((ordered["cpu"] + ordered["mem"]) / 2).to_numpy(float)
    return f"slots-{int(ordered['slots'].to_numpy()[int(np.argmax(score))])}"


def read_utilization(results: str | os.PathLike[str], scheduler: str) -> pd.DataFrame:
    """``R/<scheduler>/utilization.parquet``'s ``time_s, cpu, mem``, in time order."""
    util = pd.read_parquet(Path(results) / scheduler / "utilization.parquet")
    return util[["time_s", "cpu", "mem"]].sort_values("time_s", ignore_index=True)


def fig5_utilization(results: str | os.PathLike[str], slots: str) -> dict[str, Any]:
    """Fig. 5's numbers: the mean CPU and memory utilisation of each scheduler, and how often one
    is at least another over time.

    Parameters
    ----------
    results : path-like
        Results directory.
    slots : str
        The best Slots run, compared with ``ff-drfh`` and ``bf-drfh``.

    Returns
    -------
    dict
        ``"schedulers"``: the three; ``"mean"``: ``{scheduler: {"cpu": x, "mem": y}}`` (time
        averages over the window, fractions, from ``summary.json``); ``"above"``:
        ``{"a>=b": {"cpu": f, "mem": f}}`` for the pairs (bf-drfh, ff-drfh), (bf-drfh, slots),
        (ff-drfh, slots): the fraction of common grid times at which a's utilisation is at least
        b's (no entry without common times).
    """
    root = Path(results)
    schedulers = [slots, "ff-drfh", "bf-drfh"]
    series = {s: read_utilization(root, s) for s in schedulers}
    means = {s: dict(zip(("cpu", "mem"), _mean_utilization(root, s), strict=True)) for s in series}
    above: dict[str, dict[str, float]] = {}
    for a, b in (("bf-drfh", "ff-drfh"), ("bf-drfh", slots), ("ff-drfh", slots)):
        m = series[a].merge(series[b], on="time_s", suffixes=("_a", "_b"))
        if len(m):
            above[f"{a}>={b}"] = {
                r: float((m[f"{r}_a"] >= m[f"{r}_b"] - _TOL).mean()) for r in ("cpu", "mem")
            }
    return {"schedulers": schedulers, "mean": means, "above": above}


def _size_bin(n_tasks: pd.Series) -> pd.Series:
    edges = [0] + [hi for _, hi in paper.FIG6_BINS[:-1]] + [np.inf]
    return pd.cut(n_tasks, bins=edges, labels=list(paper.FIG6_BIN_LABELS), right=True)


def fig6_pairs(results: str | os.PathLike[str], b: str, a: str = "bf-drfh") -> pd.DataFrame:
    """The jobs finished under both ``a`` and ``b`` (Fig. 6 counts only those), with both JCTs.

    Parameters
    ----------
    results : path-like
        Results directory.
    b : str
        The baseline: the best Slots run (:func:`best_slots`).
    a : str, optional
        The improved scheduler (default Best-Fit DRFH).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``n_tasks``, ``bin`` (the Fig. 6b size bin, categorical), ``jct_a_s``,
        ``jct_b_s`` (job completion times, s).
    """
    root = Path(results)
    cols = ["job_id", "n_tasks", "completion_time_s"]
    ja = pd.read_parquet(root / a / "jobs.parquet", columns=cols)
    jb = pd.read_parquet(root / b / "jobs.parquet", columns=["job_id", "completion_time_s"])
    both = ja.merge(jb, on="job_id", suffixes=("_a", "_b"))
    both = both.dropna(subset=["completion_time_s_a", "completion_time_s_b"])
    both = both.rename(columns={"completion_time_s_a": "jct_a_s", "completion_time_s_b": "jct_b_s"})
    both["bin"] = _size_bin(both["n_tasks"])
    return both[["job_id", "n_tasks", "bin", "jct_a_s", "jct_b_s"]].reset_index(drop=True)


#: The two readings of Fig. 6b's "mean completion time reduction" of a bin.
FIG6_MEASURES = ("mean_of_ratios", "ratio_of_means")
#: Fig. 6b's bins as the numbers 1-5 of its trend.
_FIG6_KEYS = [float(k) for k in range(1, len(paper.FIG6_BIN_LABELS) + 1)]


def fig6_units(pairs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6's (job, seed) pairs grouped into one bootstrap unit per job.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``seed``, ``job_id``, ``bin``, ``jct_a_s``, ``jct_b_s``: every job finished under both
        schedulers of a seed (each seed's own Slots baseline), pooled over seeds.

    Returns
    -------
    pandas.DataFrame
        One row per job: ``bin_code`` (0-4, the Fig. 6b bin), ``pairs`` (seeds in which it
        finished under both), ``sum_a_s``, ``sum_b_s`` (its JCTs summed over those seeds),
        ``sum_ratio`` and ``n_ratio`` (its per-seed reductions ``1 - jct_a / jct_b`` summed and
        counted, pairs with ``jct_b <= 0`` left out). Resampling these rows resamples jobs with
        all their seeds, so a job seen in five seeds counts as one unit, not five.
    """
    a, b = pairs["jct_a_s"].to_numpy(float), pairs["jct_b_s"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b > 0, 1.0 - a / b, np.nan)
    df = pairs.assign(
        ratio=ratio,
        bin_code=pd.Categorical(pairs["bin"], categories=list(paper.FIG6_BIN_LABELS)).codes,
    )
    g = df.groupby("job_id", sort=True)
    return pd.DataFrame(
        {
            "bin_code": g["bin_code"].first().astype("int64"),
            "pairs": g.size().astype("int64"),
            "sum_a_s": g["jct_a_s"].sum(),
            "sum_b_s": g["jct_b_s"].sum(),
            "sum_ratio": g["ratio"].sum(),
            "n_ratio": g["ratio"].count().astype("int64"),
        }
    )


def fig6_reduction(units: pd.DataFrame, idx: np.ndarray, measure: str) -> np.ndarray:
    """Every bin's reduction over the jobs ``idx`` (rows of :func:`fig6_units`, with repeats).

    Returns
    -------
    numpy.ndarray, shape (5,)
        Per Fig. 6b bin: ``1 - sum(JCT_a) / sum(JCT_b)`` over the jobs' pairs for
        ``ratio_of_means``, the mean of the pairs' ``1 - jct_a / jct_b`` for
        ``mean_of_ratios``; NaN for a bin without jobs.

    Raises
    ------
    ValueError
        For an unknown ``measure``.
    """
    codes = units["bin_code"].to_numpy()[idx]
    n = len(paper.FIG6_BIN_LABELS)

    def total(col: str) -> np.ndarray:
        return np.bincount(codes, weights=units[col].to_numpy(float)[idx], minlength=n)

    with np.errstate(divide="ignore", invalid="ignore"):
        if measure == "ratio_of_means":
            a, b = total("sum_a_s"), total("sum_b_s")
            return np.where(b > 0, 1.0 - a / b, np.nan)
        if measure == "mean_of_ratios":
            s, c = total("sum_ratio"), total("n_ratio")
            return np.where(c > 0, s / c, np.nan)
    raise ValueError(f"measure: {measure!r} (expected one of {', '.join(FIG6_MEASURES)})")


def fig6_bin_estimates(
    units: pd.DataFrame, *, seeds: int, n_resamples: int = N_RESAMPLES
) -> pd.DataFrame:
    """Both reductions of every Fig. 6b bin and over all jobs, with bootstrap intervals over jobs.

    Parameters
    ----------
    units : pandas.DataFrame
        From :func:`fig6_units`.
    seeds : int
        The seeds the pairs come from.
    n_resamples : int
        Bootstrap resamples per estimate (0: point estimates only).

    Returns
    -------
    pandas.DataFrame
        One row per bin and a last row ``all``: ``bin``, ``jobs`` (distinct), ``pairs``
        ((job, seed) pairs), ``mean_jct_a_s``, ``mean_jct_b_s`` (over the pairs), and
        ``ratio_of_means``, ``mean_of_ratios`` (:class:`fairsim.experiments.claims.Estimate`,
        resampling the bin's jobs).
    """
    rows = []
    labels = [*paper.FIG6_BIN_LABELS, "all"]
    for code, label in enumerate(labels):
        sub = units if label == "all" else units[units["bin_code"] == code]
        n_pairs = int(sub["pairs"].sum())
        row: dict[str, Any] = {
            "bin": label,
            "jobs": len(sub),
            "pairs": n_pairs,
            "mean_jct_a_s": float(sub["sum_a_s"].sum() / n_pairs) if n_pairs else np.nan,
            "mean_jct_b_s": float(sub["sum_b_s"].sum() / n_pairs) if n_pairs else np.nan,
        }
        for measure in FIG6_MEASURES:
            row[measure] = fig6_pooled(sub, measure, seeds=seeds, n_resamples=n_resamples)
        rows.append(row)
    return pd.DataFrame(rows)


def fig6_pooled(
    units: pd.DataFrame, measure: str, *, seeds: int, n_resamples: int = N_RESAMPLES
) -> Estimate:
    """One reduction (:func:`fig6_reduction`) of all the jobs ``units`` taken as one bin, with
    its bootstrap interval over jobs (0 resamples: the point estimate only; ``no jobs``: NaN)."""
    flat = units.assign(bin_code=0)

    def stat(idx: np.ndarray) -> float:
        return float(fig6_reduction(flat, idx, measure)[0])

    if len(flat) == 0:
        return Estimate(np.nan, None, None, seeds, "no jobs")
    if n_resamples == 0:
        return Estimate(stat(np.arange(len(flat))), None, None, seeds, "")
    return bootstrap_units(len(flat), stat, seeds=seeds, what="jobs", n_resamples=n_resamples)


def fig6_cdf_gaps(pairs: pd.DataFrame) -> tuple[float, float]:
    """Fig. 6a's two JCT CDFs of one seed's jobs finished under both schedulers, compared.

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`fig6_pairs` (``jct_a_s``: Best-Fit DRFH, ``jct_b_s``: Slots).

    Returns
    -------
    tuple of float
        ``(behind, ahead)``: the largest amount by which Slots' empirical CDF lies above
        Best-Fit DRFH's at any completion time (0 when Best-Fit's CDF is everywhere at or above
        Slots': its JCTs are stochastically shorter), and the largest amount by which Best-Fit's
        lies above Slots' (the one-sided Kolmogorov-Smirnov distances; NaN without jobs).
    """
    a = np.sort(pairs["jct_a_s"].to_numpy(float))
    b = np.sort(pairs["jct_b_s"].to_numpy(float))
    if a.size == 0:
        return math.nan, math.nan
    x = np.union1d(a, b)
    fa = np.searchsorted(a, x, side="right") / a.size
    fb = np.searchsorted(b, x, side="right") / b.size
    return float(max(0.0, np.max(fb - fa))), float(max(0.0, np.max(fa - fb)))


def fig6_seed_units(pairs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6's (job, seed) pairs as :func:`fig6_units`' rows, one per (seed, job), with the
    column ``seed``: the units of the seed-clustered trend (:func:`fig6_trend` with
    ``clusters``), where a seed is resampled with its jobs."""
    parts = [fig6_units(p).assign(seed=s) for s, p in pairs.groupby("seed", sort=True)]
    return pd.concat(parts).reset_index(drop=True)


def fig6_trend(
    units: pd.DataFrame,
    measure: str,
    *,
    seeds: int,
    n_resamples: int = N_RESAMPLES,
    clusters: np.ndarray | None = None,
) -> Estimate:
    """Spearman's rho between the Fig. 6b bin (1-5) and its reduction, bootstrapped over jobs
    (:func:`fairsim.experiments.claims.spearman_trend`; a bin left empty by a resample drops
    out of that resample's rho).

    Parameters
    ----------
    units : pandas.DataFrame
        :func:`fig6_units` (one unit per job) or, with ``clusters``, :func:`fig6_seed_units`.
    measure : str
        One of :data:`FIG6_MEASURES`.
    seeds, n_resamples
        As in :func:`fairsim.experiments.claims.spearman_trend`.
    clusters : numpy.ndarray, optional
        Each unit's seed: the two-level bootstrap over seeds, then the jobs of each (issue 44:
        every trend rule clusters by seed, as UDRF's Fig. 10 trends do).
    """

    def groups(idx: np.ndarray) -> tuple[list[float], list[float]]:
        return _FIG6_KEYS, fig6_reduction(units, idx, measure).tolist()

    return spearman_trend(
        len(units), groups, seeds=seeds, what="jobs", n_resamples=n_resamples, clusters=clusters
    )


def fig6_seed_rhos(seed_units: pd.DataFrame, measure: str) -> list[float]:
    """Spearman's rho of Fig. 6b's trend in each seed alone (point estimates, in seed order),
    from :func:`fig6_seed_units`."""
    out = []
    for _, u in seed_units.groupby("seed", sort=True):
        u = u.reset_index(drop=True)
        out.append(spearman(_FIG6_KEYS, fig6_reduction(u, np.arange(len(u)), measure).tolist()))
    return out


def _user_pairs(root: Path, a: str, b: str, suffixes: tuple[str, str]) -> pd.DataFrame:
    """``users.parquet`` of the runs ``a`` and ``b`` joined on the users in both."""

    def read(sub: str) -> pd.DataFrame:
        users = pd.read_parquet(root / sub / "users.parquet")
        return users[["user", "tasks_submitted", "tasks_completed", "completion_ratio"]]

    return read(a).merge(read(b), on="user", suffixes=suffixes)


def fig7_completion(results: str | os.PathLike[str], b: str, a: str = "bf-drfh") -> dict[str, Any]:
    """Fig. 7's numbers: per-user task completion ratio under ``b`` (Slots) versus ``a`` (DRFH).

    Parameters
    ----------
    results : path-like
        Results directory.
    b : str
        Scheduler on the x axis: the best Slots run.
    a : str, optional
        Scheduler on the y axis (default Best-Fit DRFH).

    Returns
    -------
    dict
        ``a``, ``b``, ``users`` (in both), ``higher_under_a`` / ``lower_under_a`` (fractions of
        users with a strictly higher / lower ratio under ``a``), ``full_under_a_not_b`` (fraction
        of users with every task completed under ``a`` but not under ``b``) and ``per_user``
        (``user``, ``tasks`` submitted, ``ratio_a``, ``ratio_b``: their completion ratios).
    """
    m = _user_pairs(Path(results), a, b, ("_a", "_b"))
    ra, rb = m["completion_ratio_a"].to_numpy(float), m["completion_ratio_b"].to_numpy(float)
    full_a = (m["tasks_completed_a"] >= m["tasks_submitted_a"]).to_numpy()
    full_b = (m["tasks_completed_b"] >= m["tasks_submitted_b"]).to_numpy()
    per_user = {"user": m["user"], "tasks": m["tasks_submitted_a"], "ratio_a": ra, "ratio_b": rb}
    return {
        "a": a,
        "b": b,
        "users": len(m),
        "higher_under_a": _fraction(ra > rb + _TOL),
        "lower_under_a": _fraction(ra < rb - _TOL),
        "full_under_a_not_b": _fraction(full_a & ~full_b),
        "per_user": pd.DataFrame(per_user),
    }


def _fraction(users: np.ndarray) -> float:
    """The fraction of users for whom ``users`` is true (NaN without users)."""
    return float(users.sum() / len(users)) if len(users) else math.nan


#: The fractions of users Fig. 7's text is about (their labels: the figure's texts,
#: :data:`fairsim.experiments.drfh.figures.TEXT`).
FIG7_FRACTIONS = ("higher_under_a", "lower_under_a", "full_under_a_not_b")


def fig8_sharing_incentive(results: str | os.PathLike[str]) -> dict[str, Any]:
    """Fig. 8's numbers: task completion ratio on dedicated clouds versus the shared cloud (under
    Best-Fit DRFH).

    Parameters
    ----------
    results : path-like
        Results directory; reads ``R/dedicated/users.parquet`` and ``R/bf-drfh/users.parquet``.

    Returns
    -------
    dict
        ``users`` (in both), ``worse_off`` (count with ``ratio_shared < ratio_dedicated - 1e-9``),
        ``worse_off_fraction``, ``mean_decrease`` (mean of ``ratio_dedicated - ratio_shared``
        over the worse-off users; NaN when none), ``better_off_fraction``, ``per_user``
        (``user``, ``tasks`` submitted, ``ratio_dc``, ``ratio_sc``: the completion ratios) and
        ``worse`` (``user``, ``decrease``: the worse-off users' decreases).
    """
    m = _user_pairs(Path(results), "dedicated", "bf-drfh", ("_dc", "_sc"))
    dc, sc = m["completion_ratio_dc"].to_numpy(float), m["completion_ratio_sc"].to_numpy(float)
    worse = sc < dc - _TOL
    stats: dict[str, Any] = {
        "users": len(m),
        "worse_off": int(worse.sum()),
        "worse_off_fraction": _fraction(worse),
        "better_off_fraction": _fraction(sc > dc + _TOL),
        "mean_decrease": float(np.mean(dc[worse] - sc[worse])) if worse.any() else float("nan"),
    }
    users = {"user": m["user"], "tasks": m["tasks_submitted_dc"], "ratio_dc": dc, "ratio_sc": sc}
    stats["per_user"] = pd.DataFrame(users)
    decrease = pd.DataFrame({"user": m["user"], "decrease": dc - sc})
    stats["worse"] = decrease[worse].reset_index(drop=True)
    return stats


#: The quantities Fig. 8's text is about (their labels: the figure's texts,
#: :data:`fairsim.experiments.drfh.figures.TEXT`).
FIG8_FRACTIONS = ("worse_off_fraction", "better_off_fraction", "mean_decrease")


def _step_mean(t: np.ndarray, v: np.ndarray, lo: float, hi: float) -> float:
    """Time-weighted mean over [lo, hi] of the step function (t, v); 0 before t[0]."""
    if hi <= lo:
        return float("nan")
    knots = np.concatenate(([lo], t[(t > lo) & (t < hi)], [hi]))
    idx = np.searchsorted(t, knots[:-1], side="right") - 1
    vals = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
    return float(np.sum(vals * np.diff(knots)) / (hi - lo))


def fig4_phase_means(shares: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """Mean CPU, memory and dominant share of each active user in each phase of Fig. 4
    (:data:`fairsim.experiments.drfh.paper.FIG4_PHASES`), over the middle 60 % of the phase (to
    skip transients); a user is active when its mean dominant share exceeds 1e-6.

    Parameters
    ----------
    shares : pandas.DataFrame
        Long format ``time_s, user, cpu, mem, dominant``; each sample holds until the next sample
        of the same user (step function; a user's share is 0 before its first sample).

    Returns
    -------
    dict
        ``{phase: {user: {"cpu": x, "mem": y, "dominant": z}}}``, time-weighted means.
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    groups = {u: g.sort_values("time_s") for u, g in shares.groupby("user", sort=True)}
    for name, (t0, t1) in paper.FIG4_PHASES.items():
        cut = (1.0 - 0.6) / 2.0 * (t1 - t0)
        lo, hi = t0 + cut, t1 - cut
        per_user: dict[str, dict[str, float]] = {}
        for user, g in groups.items():
            t = g["time_s"].to_numpy(float)
            means = {
                r: _step_mean(t, g[r].to_numpy(float), lo, hi) for r in ("cpu", "mem", "dominant")
            }
            if means["dominant"] > 1e-6:
                per_user[str(user)] = means
        out[name] = per_user
    return out


def fig4_phase_windows(tasks: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Fig. 4's phases as the run played them: from the tasks of its three users.

    Parameters
    ----------
    tasks : pandas.DataFrame
        ``tasks.parquet`` of the Fig. 4 run (``user``, ``submit_s``, ``finish_s``).

    Returns
    -------
    dict
        ``{phase: (start_s, end_s)}`` for :data:`FIG4_DEFICIT_PHASES`: from the first user's
        first submission to the second's, to the third's, to the first user's last finish (its
        departure), and from there to the last finish of all.

    Raises
    ------
    ValueError
        Unless the tasks belong to exactly three users, the first of whom departs after the
        third joins.
    """
    joins = tasks.groupby("user")["submit_s"].min().sort_values(kind="stable")
    if len(joins) != 3:
        raise ValueError(f"Fig. 4 has 3 users; tasks.parquet has {len(joins)}")
    first = joins.index[0]
    depart = float(tasks.loc[tasks["user"] == first, "finish_s"].max())
    end = float(tasks["finish_s"].max())
    j = [float(x) for x in joins.to_numpy()]
    if not j[0] <= j[1] <= j[2] < depart <= end:
        raise ValueError(
            f"Fig. 4: joins at {j} s and {first}'s departure at {depart} s are out of order"
        )
    bounds = (j[0], j[1], j[2], depart, end)
    return {name: (bounds[k], bounds[k + 1]) for k, name in enumerate(FIG4_DEFICIT_PHASES)}


def fig4_deficit_phases(
    results: str | os.PathLike[str], *, scheduler: str = "bf-drfh"
) -> dict[str, dict[str, Any]]:
    """The deficit of Fig. 4's run to the DRFH allocation, phase by phase.

    Reads ``R/fig4/<scheduler>/`` (``tasks.parquet``, ``fairness.parquet``,
    ``fairness_summary.parquet``) and ``R/fig4/servers.parquet``. The phases are those the run
    played (:func:`fig4_phase_windows`). Each phase's first ``settle_s`` seconds, the longest run
    time of a task, are left out of the settled numbers: no task is preempted, so after a user
    joins its share can grow only as running tasks finish, which takes up to one run time.

    Returns
    -------
    dict
        ``{phase: numbers}`` with ``start_s``, ``end_s``, ``settle_s``, ``instants`` (settled),
        ``max_deficit_mean`` and ``max_deficit_max`` (the largest deficit over the users, its
        mean and maximum over the settled instants), ``max_deficit_max_all`` (over every
        instant of the phase, transient included), ``jain_mean`` and ``jain_min`` (settled),
        ``online`` and ``reference`` (mean dominant share of the active users over the settled
        instants, online and in the DRFH allocation), ``users`` (the active users), and
        ``whole`` and ``divisible`` (the mean dominant share of those users when their tasks
        are placed at once as whole tasks, and in the divisible allocation:
        :func:`fairsim.schedulers.static_fill.whole_task_shares`); against the DRFH allocation
        restricted to whole tasks (:func:`whole_task_deficits`), over the instants settled for it
        (one run time after the phase starts and after that reference last changed),
        ``max_deficit_whole_max`` and ``whole_exact`` (the mean reference share), and
        ``max_deficit_whole_max_all`` over every instant; ``equal_gap_max``, the largest
        spread of the users' dominant shares at those instants while every user has a task
        waiting (:func:`_equal_gap`).

    Raises
    ------
    FileNotFoundError
        When the Fig. 4 run was made without ``collect.fairness``.
    """
    run = Path(results) / "fig4" / scheduler
    summary = read_fairness(Path(results) / "fig4", [scheduler])[scheduler]
    per_user = pd.read_parquet(run / "fairness.parquet")
    tasks = pd.read_parquet(
        run / "tasks.parquet", columns=["user", "submit_s", "start_s", "finish_s"]
    )
    servers = pd.read_parquet(Path(results) / "fig4" / "servers.parquet")
    settle = float((tasks["finish_s"] - tasks["start_s"]).max())
    demands = per_user.groupby("user")[["demand_cpu", "demand_mem"]].first()
    out: dict[str, dict[str, Any]] = {}
    for name, (t0, t1) in fig4_phase_windows(tasks).items():
        t = summary["time_s"]
        inside = (t >= t0) & ((t <= t1) if name == FIG4_DEFICIT_PHASES[-1] else (t < t1))
        settled = inside & (t >= t0 + settle)
        s = summary[settled]
        rows = per_user[per_user["time_s"].isin(s["time_s"])]
        users = sorted(rows["user"].unique().tolist())
        dem = {u: tuple(demands.loc[u].to_numpy(dtype=float)) for u in users}
        static = whole_task_shares(servers, dem) if users else {"whole": {}, "divisible": {}}
        in_phase = per_user[per_user["time_s"].isin(summary.loc[inside, "time_s"])]
        exact = whole_task_deficits(servers, demands, in_phase)
        # settled for the whole-task reference: one run time after the phase starts and after
        # the reference last changed (a user's tasks present falling below its share)
        changed = exact["reference_key"].ne(exact["reference_key"].shift()).to_numpy()
        since = exact["time_s"].where(changed).ffill().fillna(t0).clip(lower=t0)
        calm = exact[(exact["time_s"] - since >= settle) & (exact["time_s"] >= t0 + settle)]
        out[name] = {
            "start_s": t0,
            "end_s": t1,
            "settle_s": settle,
            "instants": len(s),
            "max_deficit_mean": float(s["max_deficit"].mean()),
            "max_deficit_max": float(s["max_deficit"].max()),
            "max_deficit_max_all": float(summary.loc[inside, "max_deficit"].max()),
            "jain_mean": float(s["jain_index"].mean()),
            "jain_min": float(s["jain_index"].min()),
            "online": float(rows["dominant_share"].mean()),
            "reference": float(rows["reference_dominant_share"].mean()),
            "users": users,
            **{
                k: float(np.mean(list(static[k].values()))) if users else math.nan
                for k in ("whole", "divisible")
            },
            "max_deficit_whole_max": float(calm["deficit"].max()) if len(calm) else math.nan,
            "max_deficit_whole_max_all": float(exact["deficit"].max()) if len(exact) else math.nan,
            "whole_exact": float(calm["reference"].mean()) if len(calm) else math.nan,
            "equal_gap_max": _equal_gap(in_phase[in_phase["time_s"].isin(calm["time_s"])]),
        }
    return out


def _equal_gap(rows: pd.DataFrame) -> float:
    """The largest spread of dominant shares at an instant where 2+ users all have tasks waiting."""
    if rows.empty or "tasks_waiting" not in rows.columns:
        return math.nan
    g = rows.groupby("time_s")
    backlogged = g["tasks_waiting"].min() > 0
    spread = (g["dominant_share"].max() - g["dominant_share"].min())[backlogged & (g.size() > 1)]
    return float(spread.max()) if len(spread) else math.nan


def whole_task_deficits(
    servers: pd.DataFrame, demands: pd.DataFrame, rows: pd.DataFrame
) -> pd.DataFrame:
    """Fig. 4's largest deficit to the whole-task DRFH allocation at every instant of ``rows``.

    At each instant the reference is
    :func:`~fairsim.schedulers.exact.whole_task.whole_task_drfh` of the active users, each bounded
    by its tasks present (running and waiting), on the run's pool. Leximin allocations of whole
    tasks are not unique (users 1 and 3 may trade 29.7 % and 30.3 %), so the shares are compared
    by rank: the deficit is the largest ``reference_(k) - online_(k)`` over the ranks ``k`` of
    both sorted in increasing order (zero or less when the online shares are, rank by rank, at
    or above the reference's: the online allocation is then at least as good by leximin).

    Parameters
    ----------
    servers : pandas.DataFrame
        ``servers.parquet`` of the Fig. 4 run.
    demands : pandas.DataFrame
        Per user (index), ``demand_cpu`` and ``demand_mem`` of a task.
    rows : pandas.DataFrame
        ``fairness.parquet`` rows of the instants (``time_s``, ``user``, ``tasks_running``,
        ``tasks_waiting``, ``dominant_share``).

    Returns
    -------
    pandas.DataFrame
        One row per instant: ``time_s``, ``deficit``, ``reference`` (the mean reference
        share of the active users) and ``reference_key`` (the sorted reference shares, rounded
        to 1e-9: a change marks a new reference).
    """
    cache: dict[tuple[tuple[str, int], ...], dict[str, float]] = {}
    unbounded: dict[tuple[str, ...], dict[str, float]] = {}
    cols = ["demand_cpu", "demand_mem"]
    total = servers[["cpu", "mem"]].to_numpy(float).sum(axis=0)
    out = []
    for time_s, at in rows.groupby("time_s", sort=True):
        users = tuple(sorted(at["user"]))
        if {"tasks_running", "tasks_waiting"} <= set(at.columns):
            held = at["tasks_running"] + at["tasks_waiting"]
        else:  # an older fairness.parquet: every backlog unbounded
            held = pd.Series(np.inf, index=at.index)
        present = dict(zip(at["user"], held, strict=True))
        dem = {u: tuple(demands.loc[u, cols].to_numpy(dtype=float)) for u in users}
        if users not in unbounded:
            unbounded[users] = whole_task_drfh(servers, dem)
        ref = unbounded[users]
        per_task = {u: float(np.max(np.asarray(dem[u]) / total)) for u in users}
        if any(present[u] < round(ref[u] / per_task[u]) for u in users):
            key = tuple((u, int(present[u])) for u in users)
            if key not in cache:
                cache[key] = whole_task_drfh(servers, dem, {u: int(present[u]) for u in users})
            ref = cache[key]
        want = np.sort([ref[u] for u in users])
        got = np.sort(at.set_index("user").loc[list(users), "dominant_share"].to_numpy(float))
        out.append(
            {
                "time_s": time_s,
                "deficit": float(np.max(want - got)),
                "reference": float(want.mean()),
                "reference_key": tuple(np.round(want, 9)),
            }
        )
    return pd.DataFrame(out, columns=["time_s", "deficit", "reference", "reference_key"])


def production_numbers(results: str | os.PathLike[str]) -> dict[str, Any]:
    """The production context: the trace's own schedule beside the simulated ones.

    Reads the runs of :data:`PRODUCTION_SCHEDULERS` and :data:`PRODUCTION_READINGS` in
    ``results`` (one ``fairsim run`` of ``configs/google-recorded.yaml``: the same tasks on the
    same pool, the trace's machines).

    Parameters
    ----------
    results : path-like
        Results directory holding ``<scheduler>/summary.json``, ``utilization.parquet``,
        ``jobs.parquet`` and ``users.parquet`` for every scheduler of
        :data:`PRODUCTION_SCHEDULERS`, and ``summary.json`` and ``utilization.parquet`` of both
        replays of :data:`PRODUCTION_READINGS`.

    Returns
    -------
    dict
        ``schedulers`` (the list), ``servers`` (pool size), ``tasks``, ``horizon_s``,
        ``common_jobs`` (jobs finished under every scheduler) and ``per`` (scheduler → dict
        with ``cpu``, ``mem`` (mean utilisation by requests, fractions of the pool's capacity,
        the time integral of ``summary.json``), ``peak_cpu``, ``peak_mem`` (largest sample of
        ``utilization.parquet``), ``completed`` (tasks completed / tasks), ``user_ratio`` (mean
        over users of their completion ratio), ``jct_mean_s`` and ``jct_median_s`` (JCT of the
        common jobs, seconds), ``jain_entitlement`` (Jain's index of the users' fractions of
        their reference share), ``jain`` (Jain's index of the raw dominant shares) and
        ``max_deficit`` (time averages of fairness over time, None without it)); ``readings``
        (reading → dict: ``folder``, ``cpu``, ``mem``, ``peak_cpu``, ``peak_mem`` as above, and
        ``overcommit``: per resource the largest, the last and the mean over the samples of the
        number of over-committed servers (``servers_max``, ``servers_end``, ``servers_mean``),
        the largest and the time-average requested amount above capacity (``amount_max``,
        ``amount_mean``, fractions of the pool's capacity) and the utilisation by requests at
        the end (``utilization_end``)).

    Raises
    ------
    FileNotFoundError
        When a scheduler's run is missing.
    """
    root = Path(results)
    per: dict[str, dict[str, Any]] = {}
    jobs: dict[str, pd.Series] = {}
    servers = tasks = horizon = None
    for s in PRODUCTION_SCHEDULERS:
        summary, _, per[s] = _utilization(root, s)
        users = pd.read_parquet(root / s / "users.parquet", columns=["completion_ratio"])
        j = pd.read_parquet(root / s / "jobs.parquet", columns=["job_id", "completion_time_s"])
        jobs[s] = j.set_index("job_id")["completion_time_s"]
        avg = (summary.get("fairness") or {}).get("time_average") or {}
        per[s] |= {
            "completed": summary["tasks_completed"] / summary["tasks"],
            "user_ratio": float(users["completion_ratio"].mean()),
            "jain_entitlement": avg.get("jain_entitlement"),
            "jain": avg.get("jain_index"),
            "max_deficit": avg.get("max_deficit"),
        }
        servers, tasks, horizon = summary["servers"], summary["tasks"], summary["horizon_s"]
    done = pd.concat(jobs, axis=1).dropna()
    for s in PRODUCTION_SCHEDULERS:
        per[s]["jct_mean_s"] = float(done[s].mean()) if len(done) else math.nan
        per[s]["jct_median_s"] = float(done[s].median()) if len(done) else math.nan
    return {
        "schedulers": list(PRODUCTION_SCHEDULERS),
        "servers": servers,
        "tasks": tasks,
        "horizon_s": horizon,
        "common_jobs": len(done),
        "per": per,
        "readings": {k: _reading(root, folder) for k, folder in PRODUCTION_READINGS.items()},
    }


def _utilization(root: Path, run: str) -> tuple[dict[str, Any], pd.DataFrame, dict[str, Any]]:
    """A run's summary, utilisation, and its mean and peak ``cpu`` and ``mem`` from them."""
    summary = read_summary(root, run)
    util = pd.read_parquet(root / run / "utilization.parquet")
    mu = summary["mean_utilization"]
    means = {r: float(mu[r]) for r in ("cpu", "mem")}
    return summary, util, means | {f"peak_{r}": float(util[r].max()) for r in ("cpu", "mem")}


def _reading(root: Path, folder: str) -> dict[str, Any]:
    """One replay of the trace's placements (:func:`production_numbers`' ``readings``)."""
    summary, util, numbers = _utilization(root, folder)
    oc = summary.get("overcommit") or {}
    return {
        "folder": folder,
        **numbers,
        "overcommit": {
            r: {
                "servers_max": int(util[f"overcommitted_{r}"].max()),
                "servers_end": int(util[f"overcommitted_{r}"].iloc[-1]),
                "servers_mean": float(util[f"overcommitted_{r}"].mean()),
                "amount_max": float(util[f"overcommit_{r}"].max()),
                "amount_mean": float(oc[r]["mean_amount"]) if r in oc else math.nan,
                "utilization_end": float(util[r].iloc[-1]),
            }
            for r in ("cpu", "mem")
            if f"overcommitted_{r}" in util
        },
    }


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def seed_numbers(results: str | os.PathLike[str]) -> dict[str, Any]:
    """The numbers of one seed's runs (no figures drawn).

    A piece whose inputs are missing is skipped and recorded in ``numbers["skipped"]`` with the
    reason; the others still run.

    Parameters
    ----------
    results : path-like
        One seed's folder (``OUT/seed-<k>``): the ``fairsim run`` results of the Google runs,
        ``dedicated/``, ``censored-complete/`` and ``fig4/``.

    Returns
    -------
    dict
        ``config``, ``servers`` (count and totals), ``summaries`` (``{scheduler: summary}``,
        including ``"fig4/bf-drfh"``), ``table_ii`` and ``table_ii_single`` (row dicts),
        ``best_slots``, ``fig4``, ``fig5``, ``fig6`` (``pairs``: the jobs finished
        under both, a DataFrame), ``fig7``, ``fig8``, ``dedicated``, ``sensitivity`` (the same
        under the older censoring rule), ``fig4_deficit`` (:func:`fairsim.experiments.drfh.numbers.
        fig4_deficit_phases`), ``fairness`` (:func:`_fairness_numbers`), ``fig4_config`` and
        ``skipped`` (``{key: reason}``).
    """
    root = Path(results)
    numbers: dict[str, Any] = {
        "results": str(root),
        "config": _read_yaml(root / "config.yaml"),
        "fig4_config": _read_yaml(root / "fig4" / "config.yaml"),
        "summaries": {},
        "skipped": {},
    }
    skipped = numbers["skipped"]
    for key, path in (("servers", root), ("fig4_servers", root / "fig4")):
        if (path / "servers.parquet").exists():
            srv = pd.read_parquet(path / "servers.parquet")
            count = {"count": len(srv)} if key == "servers" else {}
            numbers[key] = count | {r: float(srv[r].sum()) for r in ("cpu", "mem") if r in srv}
    for s in map(str, numbers["config"].get("schedulers") or []):  # in the config's order
        if (root / s / "summary.json").exists():
            numbers["summaries"][s] = read_summary(root, s)
    fig4_summary = root / "fig4" / "bf-drfh" / "summary.json"
    if fig4_summary.exists():
        numbers["summaries"]["fig4/bf-drfh"] = json.loads(fig4_summary.read_text())

    def attempt(key: str, fn: Callable[[], Any], *, keep: bool = True) -> Any:
        """``fn()``, kept as ``numbers[key]`` unless None; None and skipped on missing inputs."""
        try:
            value = fn()
        except (FileNotFoundError, KeyError, ValueError) as exc:
            logger.warning("skipping %s of %s: %s", key, root.name, exc)
            skipped[key] = f"{type(exc).__name__}: {exc}"
            return None
        if keep and value is not None:
            numbers[key] = value
        return value

    table = attempt("table_ii", lambda: table_ii(root), keep=False)
    if table is not None and table.empty:
        skipped["table_ii"] = "no slots-S/ results found"
    elif table is not None:
        numbers["table_ii"] = table.to_dict(orient="records")
        numbers["best_slots"] = best_slots(table)
    best = numbers.get("best_slots")
    single = attempt("table_ii_single", lambda: table_ii(root, model="single"), keep=False)
    if single is not None and not single.empty:
        numbers["table_ii_single"] = single.to_dict(orient="records")

    shares = root / "fig4" / "bf-drfh" / "user_shares.parquet"
    attempt("fig4", lambda: fig4_phase_means(pd.read_parquet(shares)))
    attempt("fig4_deficit", lambda: fig4_deficit_phases(root))
    attempt("fairness", lambda: _fairness_numbers(root))

    present = [s for s in ("ff-drfh", "bf-drfh") if (root / s / "utilization.parquet").exists()]
    if best and len(present) == 2:
        attempt("fig5", lambda: fig5_utilization(root, best))
    else:
        skipped["fig5"] = "no utilization.parquet for the best Slots, ff-drfh and bf-drfh"

    if best is None:
        for key in ("fig6", "fig7"):
            skipped[key] = "no Slots baseline (no slots-S/ results)"
    else:
        attempt("fig6", lambda: {"pairs": fig6_pairs(root, best)})
        attempt("fig7", lambda: fig7_completion(root, best))
    attempt("fig8", lambda: fig8_sharing_incentive(root))
    dedicated = root / "dedicated" / "summary.json"
    if dedicated.exists():
        numbers["dedicated"] = json.loads(dedicated.read_text())
    attempt("sensitivity", lambda: _sensitivity(root, best))
    return numbers


def _fairness_numbers(root: Path) -> dict[str, Any]:
    """Fairness over time of one seed's Google runs (step 5), per scheduler, and its schedules."""
    sub = root / FAIRNESS_DIR
    keys = ("series", "averages", "fairness", "context", "wall_s", "same_schedule")
    out: dict[str, Any] = {k: {} for k in keys}
    for s in FAIRNESS_SCHEDULERS:
        out["series"][s] = read_fairness(sub, [s])[s]
        out["context"][s] = fairness_context(sub, s)
        summary = read_summary(sub, s)
        if not isinstance(summary.get("fairness"), dict):
            raise FileNotFoundError(f"{sub / s / 'summary.json'}: no fairness entry")
        out["fairness"][s] = summary["fairness"]
        out["averages"][s] = summary["fairness"].get("time_average") or {}
        out["wall_s"][s] = summary.get("wall_s")
        main = root / s / "tasks.parquet"
        out["same_schedule"][s] = (
            main.read_bytes() == (sub / s / "tasks.parquet").read_bytes() if main.exists() else None
        )
    return out


def _sensitivity(root: Path, best: str | None) -> dict[str, Any] | None:
    """Figs. 6-8 under the older censoring rule ``complete`` (None without those runs)."""
    sub = root / SENSITIVITY_DIR
    if best is None or not (sub / best).is_dir() or not (sub / "bf-drfh").is_dir():
        return None
    out: dict[str, Any] = {
        "rule": "complete",
        "fig6": {"pairs": fig6_pairs(sub, best)},
        "fig7": fig7_completion(sub, best),
        "completed": read_summary(sub, "bf-drfh").get("tasks_completed"),
    }
    if (sub / "dedicated" / "users.parquet").exists():
        out["fig8"] = fig8_sharing_incentive(sub)
    return out
