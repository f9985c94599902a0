"""Figures of the DRFH reproduction (Wang, Li, Liang, Sec. VI: Table II, Figs. 4-8).

The per-run functions (:func:`table_ii`, :func:`fig5_utilization`, :func:`fig6_jct`,
:func:`fig7_completion`, :func:`fig8_sharing_incentive`, :func:`fig4_shares`) read the result files
that ``fairsim run`` writes into one seed's results directory ``R`` (docs/architecture.md) and
compute the numbers the paper reports (optionally drawing that run alone). The ``*_figure``
functions draw the figures over seeds, with their 95 % intervals as bands or error bars; Fig. 6b's
estimators (:func:`fig6_units`, :func:`fig6_bin_estimates`, :func:`fig6_trend`) bootstrap over
jobs. Figures are built on :class:`matplotlib.figure.Figure` objects directly (no pyplot global
state) and written atomically.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.experiments.claims import (
    LEVEL,
    N_RESAMPLES,
    Estimate,
    bootstrap_units,
    spearman_trend,
)
from fairsim.experiments.drfh import paper as paper
from fairsim.scenario.reporting.plotting import decimate, save_figure, scheduler_label
from fairsim.scenario.reporting.shares import user_shares_figure

logger = logging.getLogger(__name__)

#: Scheduler directory names the DRFH reproduction may contain, in display order.
DRFH_SCHEDULERS = ("slots-10", "slots-12", "slots-14", "slots-16", "slots-20", "ff-drfh", "bf-drfh")

_SLOTS_RE = re.compile(r"^slots-(\d+)$")
_TOL = 1e-9


#: Sub-folder of the runs under the older rule for right-censored tasks (``censored: complete``;
#: :mod:`fairsim.experiments.drfh.experiment`, step 3).
SENSITIVITY_DIR = "censored-complete"


def present_schedulers(results: str | os.PathLike[str]) -> list[str]:
    """Return the scheduler directories of ``results`` that hold a ``summary.json``.

    Parameters
    ----------
    results : path-like
        Results directory of ``fairsim run``.

    Returns
    -------
    list of str
        Known DRFH schedulers first (in :data:`DRFH_SCHEDULERS` order), then any others sorted.
    """
    root = Path(results)
    found = {
        p.parent.name
        for p in root.glob("*/summary.json")
        if p.parent.name not in {"dedicated", "fig4", SENSITIVITY_DIR, FAIRNESS_DIR, PRODUCTION_DIR}
    }
    known = [s for s in DRFH_SCHEDULERS if s in found]
    return known + sorted(found - set(known))


def read_summary(results: str | os.PathLike[str], scheduler: str) -> dict[str, Any]:
    """Read ``R/<scheduler>/summary.json``.

    Parameters
    ----------
    results : path-like
        Results directory.
    scheduler : str
        Scheduler directory name.

    Returns
    -------
    dict
        The parsed summary.

    Raises
    ------
    FileNotFoundError
        If the summary does not exist.
    """
    path = Path(results) / scheduler / "summary.json"
    return json.loads(path.read_text())


def mean_utilization(results: str | os.PathLike[str], scheduler: str) -> tuple[float, float]:
    """Mean (CPU, memory) utilisation of one scheduler, as fractions of total capacity.

    Taken from ``summary.json`` (``mean_utilization``) when present, else the mean of
    ``utilization.parquet``.

    Parameters
    ----------
    results : path-like
        Results directory.
    scheduler : str
        Scheduler directory name.

    Returns
    -------
    tuple of float
        ``(cpu, mem)``.

    Raises
    ------
    FileNotFoundError
        If neither the summary's ``mean_utilization`` nor ``utilization.parquet`` exists.
    """
    root = Path(results) / scheduler
    summary_path = root / "summary.json"
    if summary_path.exists():
        mu = json.loads(summary_path.read_text()).get("mean_utilization") or {}
        if "cpu" in mu and "mem" in mu:
            return float(mu["cpu"]), float(mu["mem"])
    util = pd.read_parquet(root / "utilization.parquet", columns=["cpu", "mem"])
    return float(util["cpu"].mean()), float(util["mem"].mean())


# --------------------------------------------------------------------------- Table II


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
            cpu, mem = mean_utilization(results, d.name)
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


def table_ii_figure(
    models: dict[str, pd.DataFrame], *, seeds: int, path: str | os.PathLike[str]
) -> None:
    """Draw Table II: mean CPU and memory utilisation of Slots by slot count, ours with 95 %
    intervals over seeds (error bars) beside the paper's.

    Parameters
    ----------
    models : dict
        Line label → one row per slot count: ``slots``, ``cpu``, ``mem``
        (:class:`fairsim.experiments.claims.Estimate` of the mean utilisation, fractions).
    seeds : int
        The number of seeds.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(10, 4.2))
    axes = fig.subplots(1, 2, sharex=True)
    for i, (res, ax, name) in enumerate(zip(("cpu", "mem"), axes, ("CPU", "Memory"), strict=True)):
        ref = sorted(paper.TABLE_II.items())
        ax.plot(
            [s for s, _ in ref],
            [100.0 * v[i] for _, v in ref],
            "k--x",
            label="paper (Table II)",
            lw=1.0,
        )
        for k, (label, rows) in enumerate(models.items()):
            vals = [_err(e) for e in rows[res]]
            x = rows["slots"].to_numpy(float) + (k - 0.5) * 0.2
            ax.errorbar(
                x,
                [v for v, _, _ in vals],
                yerr=[[lo for _, lo, _ in vals], [hi for _, _, hi in vals]],
                fmt="o-",
                ms=4,
                capsize=3,
                lw=1.0,
                label=label,
            )
        ax.set_xlabel("Slots per maximum server, S")
        ax.set_ylabel(f"Mean {name if res == 'cpu' else 'memory'} utilization (% of the pool)")
        ax.set_xticks(sorted(paper.TABLE_II))
        ax.set_title(f"{name} utilization of Slots")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    ci = f" (mean over {seeds} seeds, 95 % CI)" if seeds > 1 else ""
    fig.suptitle(f"Table II (DRFH paper): Slots utilisation by slot size{ci}")
    save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 5


def _read_utilization(results: str | os.PathLike[str], scheduler: str) -> pd.DataFrame:
    util = pd.read_parquet(Path(results) / scheduler / "utilization.parquet")
    return util[["time_s", "cpu", "mem"]].sort_values("time_s", ignore_index=True)


def fig5_utilization(
    results: str | os.PathLike[str],
    schedulers: Sequence[str] | None = None,
    path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Fig. 5: CPU and memory utilisation over time (two panels).

    Parameters
    ----------
    results : path-like
        Results directory.
    schedulers : sequence of str, optional
        Schedulers to draw; default: the best Slots run, ``ff-drfh`` and ``bf-drfh`` (those
        present).
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.

    Returns
    -------
    dict
        ``"schedulers"``: the list drawn; ``"mean"``: ``{scheduler: {"cpu": x, "mem": y}}`` (time
        averages over the window, fractions, from :func:`mean_utilization`); ``"above"``:
        ``{"a>=b": {"cpu": f, "mem": f}}`` for the pairs (bf-drfh, ff-drfh), (bf-drfh, best
        slots), (ff-drfh, best slots) when present: the fraction of common grid times at which
        a's utilisation is at least b's.
    """
    root = Path(results)
    if schedulers is None:
        table = table_ii(root)
        schedulers = [best_slots(table)] if not table.empty else []
        schedulers += [s for s in ("ff-drfh", "bf-drfh") if (root / s).is_dir()]
    series = {s: _read_utilization(root, s) for s in schedulers}

    means = {s: dict(zip(("cpu", "mem"), mean_utilization(root, s), strict=True)) for s in series}
    slots = [s for s in schedulers if _SLOTS_RE.match(s)]
    pairs = [("bf-drfh", "ff-drfh")] + [(d, s) for s in slots for d in ("bf-drfh", "ff-drfh")]
    above: dict[str, dict[str, float]] = {}
    for a, b in pairs:
        if a in series and b in series:
            m = series[a].merge(series[b], on="time_s", suffixes=("_a", "_b"))
            if len(m):
                above[f"{a}>={b}"] = {
                    r: float((m[f"{r}_a"] >= m[f"{r}_b"] - _TOL).mean()) for r in ("cpu", "mem")
                }
    if path is not None:
        fig5_figure({scheduler_label(k): [v] for k, v in series.items()}, path)
    return {"schedulers": list(schedulers), "mean": means, "above": above}


def seed_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Mean over seeds (axis 0) and its Student-t 95 % interval, point by point.

    Parameters
    ----------
    values : numpy.ndarray, shape (n_seeds, n_points)

    Returns
    -------
    mean, low, high : numpy.ndarray, shape (n_points,)
        ``low``/``high`` are None for one seed (no interval).
    """
    from scipy import stats

    x = np.asarray(values, dtype=float)
    mean = x.mean(axis=0)
    n = x.shape[0]
    if n < 2:
        return mean, None, None
    half = stats.t.ppf((1 + LEVEL) / 2, n - 1) * x.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def fig5_figure(series: dict[str, list[pd.DataFrame]], path: str | os.PathLike[str]) -> None:
    """Draw Fig. 5: CPU and memory utilisation over time, the mean over seeds with its 95 % band.

    Parameters
    ----------
    series : dict
        Line label → one ``utilization.parquet`` frame (``time_s, cpu, mem``) per seed; the
        seeds share the time grid (the same window and interval), and only the common times
        are drawn.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(10, 4.2))
    axes = fig.subplots(1, 2, sharex=True)
    n_seeds = max((len(v) for v in series.values()), default=1)
    for res, ax, name in zip(("cpu", "mem"), axes, ("CPU", "Memory"), strict=True):
        for label, frames in series.items():
            times = functools.reduce(np.intersect1d, [f["time_s"].to_numpy(float) for f in frames])
            stack = np.vstack(
                [f.set_index("time_s")[res].reindex(times).to_numpy(float) for f in frames]
            )
            mean, low, high = seed_band(stack)
            t, v = decimate(times, mean)
            (line,) = ax.plot(t / 3600.0, 100.0 * v, label=label, lw=0.9)
            if low is not None and high is not None:
                ax.fill_between(
                    times / 3600.0, 100.0 * low, 100.0 * high, color=line.get_color(), alpha=0.25
                )
        ax.set_xlabel("Time (h)")
        ax.set_ylabel(f"{name} utilization (% of the pool)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{name} utilization")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    band = f": mean over {n_seeds} seeds, 95 % band" if n_seeds > 1 else ""
    fig.suptitle(f"Fig. 5 (DRFH paper): time series of CPU and memory utilization{band}")
    save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 6


def _size_bin(n_tasks: pd.Series) -> pd.Series:
    edges = [0] + [hi for _, hi in paper.FIG6_BINS[:-1]] + [np.inf]
    return pd.cut(n_tasks, bins=edges, labels=list(paper.FIG6_BIN_LABELS), right=True)


def fig6_pairs(
    results: str | os.PathLike[str], a: str = "bf-drfh", b: str | None = None
) -> pd.DataFrame:
    """The jobs finished under both ``a`` and ``b`` (Fig. 6 counts only those), with both JCTs.

    Parameters
    ----------
    results : path-like
        Results directory.
    a : str, optional
        The improved scheduler (default Best-Fit DRFH).
    b : str, optional
        The baseline; default the best Slots run (:func:`best_slots`).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``n_tasks``, ``bin`` (the Fig. 6b size bin, categorical), ``jct_a_s``,
        ``jct_b_s`` (job completion times, s). ``attrs`` holds ``a`` and ``b``.
    """
    root = Path(results)
    if b is None:
        b = best_slots(table_ii(root))
    cols = ["job_id", "n_tasks", "completion_time_s"]
    ja = pd.read_parquet(root / a / "jobs.parquet", columns=cols)
    jb = pd.read_parquet(root / b / "jobs.parquet", columns=["job_id", "completion_time_s"])
    both = ja.merge(jb, on="job_id", suffixes=("_a", "_b"))
    both = both.dropna(subset=["completion_time_s_a", "completion_time_s_b"])
    both = both.rename(columns={"completion_time_s_a": "jct_a_s", "completion_time_s_b": "jct_b_s"})
    both["bin"] = _size_bin(both["n_tasks"])
    out = both[["job_id", "n_tasks", "bin", "jct_a_s", "jct_b_s"]].reset_index(drop=True)
    out.attrs.update({"a": a, "b": b})
    return out


def job_ratio(jct_a_s: np.ndarray, jct_b_s: np.ndarray) -> np.ndarray:
    """Each job's own JCT reduction ``1 - jct_a / jct_b`` (NaN where ``jct_b <= 0``)."""
    a = np.asarray(jct_a_s, dtype=float)
    b = np.asarray(jct_b_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, 1.0 - a / b, np.nan)


def fig6_jct(
    results: str | os.PathLike[str],
    a: str = "bf-drfh",
    b: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Fig. 6 of one run: job completion times of ``a`` versus ``b`` over jobs finished under both.

    Panel (a): CDF of job completion time (log-x, seconds). Panel (b): mean completion-time
    reduction per job-size bin (1-50, 51-100, 101-500, 501-1000, >1000 tasks), read two ways:
    the reduction of the bin's mean JCT, ``1 - mean_a / mean_b`` (``reduction``), and the mean
    of every job's own reduction ``1 - jct_a / jct_b`` (``reduction_per_job``). With 9 jobs of
    10 s under both and one of 10,000 s under ``b`` and 100 s under ``a``, the first is 98.0 %,
    the second 9.9 %.

    Parameters
    ----------
    results : path-like
        Results directory.
    a : str, optional
        The improved scheduler (default Best-Fit DRFH).
    b : str, optional
        The baseline; default the best Slots run (:func:`best_slots`).
    path : path-like, optional
        Where to save the PNG; nothing is drawn when None.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin``, ``jobs`` (finished under both), ``mean_jct_a_s``,
        ``mean_jct_b_s``, ``reduction`` and ``reduction_per_job`` (fractions; NaN for an empty
        bin). ``attrs`` holds ``a``, ``b``, ``jobs_both``, ``"overall"`` and
        ``"overall_per_job"`` (the two reductions over all common jobs).
    """
    both = fig6_pairs(results, a, b)
    b = str(both.attrs["b"])
    both["ratio"] = job_ratio(both["jct_a_s"].to_numpy(), both["jct_b_s"].to_numpy())
    grouped = both.groupby("bin", observed=False)
    out = pd.DataFrame(
        {
            "bin": list(paper.FIG6_BIN_LABELS),
            "jobs": grouped.size().reindex(paper.FIG6_BIN_LABELS).fillna(0).astype("int64").values,
            "mean_jct_a_s": grouped["jct_a_s"].mean().values,
            "mean_jct_b_s": grouped["jct_b_s"].mean().values,
        }
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        out["reduction"] = 1.0 - out["mean_jct_a_s"] / out["mean_jct_b_s"]
    out["reduction_per_job"] = grouped["ratio"].mean().values
    overall = (
        float(1.0 - both["jct_a_s"].mean() / both["jct_b_s"].mean()) if len(both) else float("nan")
    )
    per_job = float(both["ratio"].mean()) if both["ratio"].notna().any() else float("nan")
    out.attrs.update(
        {"a": a, "b": b, "overall": overall, "overall_per_job": per_job, "jobs_both": len(both)}
    )
    if path is not None:
        units = fig6_units(both.assign(seed=1))
        bins = fig6_bin_estimates(units, seeds=1, n_resamples=0)
        fig6_figure(both, bins, a=a, b=b, seeds=1, path=path)
    return out


#: The two readings of Fig. 6b's "mean completion time reduction" of a bin.
FIG6_MEASURES = ("mean_of_ratios", "ratio_of_means")
FIG6_MEASURE_LABELS = {
    "mean_of_ratios": "mean of per-job reductions, mean(1 - JCT_BF / JCT_Slots)",
    "ratio_of_means": "reduction of the mean JCT, 1 - mean(JCT_BF) / mean(JCT_Slots)",
}


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
    df = pairs.assign(
        ratio=job_ratio(pairs["jct_a_s"].to_numpy(), pairs["jct_b_s"].to_numpy()),
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
        flat = sub.assign(bin_code=0)  # one group: the bin itself (or all jobs)
        for measure in FIG6_MEASURES:

            def stat(idx: np.ndarray, flat: pd.DataFrame = flat, measure: str = measure) -> float:
                return float(fig6_reduction(flat, idx, measure)[0])

            if len(sub) == 0:
                row[measure] = Estimate(np.nan, None, None, seeds, "no jobs")
            elif n_resamples == 0:
                row[measure] = Estimate(stat(np.arange(len(sub))), None, None, seeds, "")
            else:
                row[measure] = bootstrap_units(
                    len(sub), stat, seeds=seeds, what="jobs", n_resamples=n_resamples
                )
        rows.append(row)
    return pd.DataFrame(rows)


def fig6_trend(
    units: pd.DataFrame, measure: str, *, seeds: int, n_resamples: int = N_RESAMPLES
) -> Estimate:
    """Spearman's rho between the Fig. 6b bin (1-5) and its reduction, bootstrapped over jobs
    (:func:`fairsim.experiments.claims.spearman_trend`; a bin left empty by a resample drops
    out of that resample's rho)."""

    keys = [float(k) for k in range(1, len(paper.FIG6_BIN_LABELS) + 1)]

    def groups(idx: np.ndarray) -> tuple[list[float], list[float]]:
        return keys, fig6_reduction(units, idx, measure).tolist()

    return spearman_trend(len(units), groups, seeds=seeds, what="jobs", n_resamples=n_resamples)


def _err(est: Estimate, scale: float = 100.0) -> tuple[float, float, float]:
    """(value, lower error, upper error) for matplotlib's asymmetric error bars, scaled."""
    v = est.value * scale
    if est.low is None or est.high is None or not np.isfinite(v):
        return v, 0.0, 0.0
    return v, max(v - est.low * scale, 0.0), max(est.high * scale - v, 0.0)


def fig6_figure(
    pairs: pd.DataFrame,
    bins: pd.DataFrame,
    *,
    a: str,
    b: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 6: (a) the JCT CDF of both schedulers over the pooled (job, seed) pairs;
    (b) both reductions per job-size bin with their 95 % bootstrap intervals as error bars.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``jct_a_s``, ``jct_b_s`` of every (job, seed) pair.
    bins : pandas.DataFrame
        From :func:`fig6_bin_estimates` (the row ``all`` is not drawn).
    a, b : str
        The schedulers (``b``: the Slots baseline, or a description of the per-seed ones).
    seeds : int
        The number of seeds pooled.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(11, 4.4))
    ax_cdf, ax_bar = fig.subplots(1, 2)
    for name, col in ((a, "jct_a_s"), (b, "jct_b_s")):
        x = np.sort(pairs[col].to_numpy(dtype=float))
        if len(x):
            x = np.maximum(x, 1e-3)  # log axis: keep zero-length jobs visible
            y = np.arange(1, len(x) + 1) / len(x)
            ax_cdf.step(x, 100.0 * y, where="post", label=scheduler_label(name))
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("Job completion time (s)")
    ax_cdf.set_ylabel("Jobs (%, cumulative)")
    ax_cdf.set_ylim(0, 100)
    what = f"{len(pairs)} (job, seed) pairs, {seeds} seeds" if seeds > 1 else f"{len(pairs)} jobs"
    ax_cdf.set_title(f"(a) CDF of job completion times ({what})", fontsize="medium")
    ax_cdf.grid(alpha=0.3)
    ax_cdf.legend(loc="lower right", fontsize="small")

    shown = bins[bins["bin"] != "all"].reset_index(drop=True)
    pos = np.arange(len(shown))
    width = 0.38
    tops = [0.0]
    lows = [0.0]
    for k, (measure, colour) in enumerate(
        zip(FIG6_MEASURES, ("tab:blue", "tab:orange"), strict=True)
    ):
        vals = [_err(e) for e in shown[measure]]
        h = np.array([v for v, _, _ in vals])
        err = np.array([[lo for _, lo, _ in vals], [hi for _, _, hi in vals]])
        x = pos + (k - 0.5) * width
        ok = np.isfinite(h)
        ax_bar.bar(
            x[ok],
            h[ok],
            width,
            yerr=err[:, ok],
            capsize=3,
            color=colour,
            label=FIG6_MEASURE_LABELS[measure],
        )
        if ok.any():
            tops.append(float(np.max(h[ok] + err[1, ok])))
            lows.append(float(np.min(h[ok] - err[0, ok])))
    lo, hi = min(lows), max(10.0, max(tops))
    ax_bar.set_ylim(lo - 0.05 * (hi - lo), hi + 0.35 * (hi - lo))  # room for the legend
    ax_bar.axhline(0, color="black", lw=0.8)
    ax_bar.set_xticks(
        pos,
        [f"{b}\n({n:,} jobs)" for b, n in zip(shown["bin"], shown["jobs"], strict=True)],
        fontsize="small",
    )
    ax_bar.set_xlabel("Job size (tasks)")
    ax_bar.set_ylabel("JCT reduction, BF-DRFH vs Slots (%)")
    ax_bar.set_title(
        "(b) JCT reduction by job size" + (" (95 % bootstrap CI over jobs)" if seeds else ""),
        fontsize="medium",
    )
    ax_bar.legend(loc="upper left", fontsize="x-small")
    fig.suptitle("Fig. 6 (DRFH paper): DRFH improvements on job completion times over Slots")
    save_figure(fig, path)


# --------------------------------------------------------------------------- Figs. 7 and 8


def _read_users(results: Path, sub: str) -> pd.DataFrame:
    users = pd.read_parquet(results / sub / "users.parquet")
    return users[["user", "tasks_submitted", "tasks_completed", "completion_ratio"]]


def _bubble_scatter(ax: Any, x: np.ndarray, y: np.ndarray, size: np.ndarray, *, label: str) -> None:
    ax.scatter(x, y, s=size, alpha=0.7, edgecolors="tab:blue", facecolors="none", label=label)
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8, label="y = x")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")


def fig7_completion(
    results: str | os.PathLike[str],
    a: str = "bf-drfh",
    b: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Fig. 7: per-user task completion ratio under ``b`` (x, Slots) versus ``a`` (y, DRFH).

    Bubble area is proportional to ``log10(1 + tasks submitted)``.

    Parameters
    ----------
    results : path-like
        Results directory.
    a : str, optional
        Scheduler on the y axis (default Best-Fit DRFH).
    b : str, optional
        Scheduler on the x axis; default the best Slots run.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.

    Returns
    -------
    dict
        ``a``, ``b``, ``users`` (in both), ``higher_under_a`` / ``lower_under_a`` (fractions of
        users with a strictly higher / lower ratio under ``a``), ``full_under_a_not_b`` (fraction
        of users with every task completed under ``a`` but not under ``b``).
    """
    root = Path(results)
    if b is None:
        b = best_slots(table_ii(root))
    m = _read_users(root, a).merge(_read_users(root, b), on="user", suffixes=("_a", "_b"))
    ra, rb = m["completion_ratio_a"].to_numpy(float), m["completion_ratio_b"].to_numpy(float)
    n = max(len(m), 1)
    full_a = m["tasks_completed_a"] >= m["tasks_submitted_a"]
    full_b = m["tasks_completed_b"] >= m["tasks_submitted_b"]
    stats: dict[str, Any] = {
        "a": a,
        "b": b,
        "users": len(m),
        "higher_under_a": float(np.sum(ra > rb + _TOL) / n) if len(m) else float("nan"),
        "lower_under_a": float(np.sum(ra < rb - _TOL) / n) if len(m) else float("nan"),
        "full_under_a_not_b": float((full_a & ~full_b).sum() / n) if len(m) else float("nan"),
    }
    if path is not None:
        users = pd.DataFrame(
            {"ratio_a": ra, "ratio_b": rb, "tasks": m["tasks_submitted_a"].to_numpy(float)}
        )
        one = {k: Estimate(float(stats[k]), None, None, 1, "") for k in FIG7_FRACTIONS}
        fig7_figure(users, one, a=a, b=scheduler_label(b), seeds=1, path=path)
    return stats


#: The fractions of users Fig. 7's text is about, and their labels.
FIG7_FRACTIONS = {
    "higher_under_a": "higher ratio\nunder BF-DRFH",
    "lower_under_a": "lower ratio\nunder BF-DRFH",
    "full_under_a_not_b": "all tasks done under\nBF-DRFH, not Slots",
}


def _fraction_bars(
    ax: Any,
    fractions: dict[str, Estimate],
    labels: dict[str, str],
    refs: dict[str, tuple[float, str]],
    *,
    ylabel: str,
) -> None:
    """Bars of fractions (in %) with their 95 % intervals, and the paper's values as marks."""
    keys = [k for k in labels if k in fractions]
    pos = np.arange(len(keys))
    vals = [_err(fractions[k]) for k in keys]
    h = np.array([v for v, _, _ in vals])
    err = np.array([[lo for _, lo, _ in vals], [hi for _, _, hi in vals]])
    ok = np.isfinite(h)
    ax.bar(pos[ok], h[ok], 0.6, yerr=err[:, ok], capsize=4, color="tab:blue", label="ours")
    for i, k in enumerate(keys):
        if k in refs:
            value, text = refs[k]
            ax.hlines(100.0 * value, i - 0.4, i + 0.4, colors="black", lw=1.5)
            ax.annotate(
                text,
                (i, 100.0 * value),
                textcoords="offset points",
                xytext=(0, 4),
                ha="center",
                fontsize="x-small",
            )
    ax.set_xticks(pos, [labels[k] for k in keys], fontsize="x-small")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3, axis="y")


def fig7_figure(
    users: pd.DataFrame,
    fractions: dict[str, Estimate],
    *,
    a: str,
    b: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 7: per-user completion ratios (left) and the fractions of users the paper's text
    is about with their 95 % intervals over seeds (right).

    Parameters
    ----------
    users : pandas.DataFrame
        ``ratio_a``, ``ratio_b`` (task completion ratio under ``a`` and ``b``, averaged over
        seeds) and ``tasks`` (tasks submitted), one row per user.
    fractions : dict
        :data:`FIG7_FRACTIONS` keys → estimates (fractions of users).
    a, b : str
        The scheduler on the y axis and a label for the one on the x axis.
    seeds : int
        The number of seeds averaged.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(11, 5.2))
    ax, ax_bar = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    size = 40.0 * np.log10(1.0 + users["tasks"].to_numpy(float))
    _bubble_scatter(
        ax,
        users["ratio_b"].to_numpy(float),
        users["ratio_a"].to_numpy(float),
        size,
        label=f"users ({len(users)}); area ∝ log10(1 + tasks)",
    )
    mean = f", mean over {seeds} seeds" if seeds > 1 else ""
    ax.set_xlabel(f"Task completion ratio, {b} (fraction{mean})")
    ax.set_ylabel(f"Task completion ratio, {scheduler_label(a)} (fraction{mean})")
    ax.set_title(f"(a) per user: {scheduler_label(a)} vs {b}", fontsize="medium")
    _fraction_bars(
        ax_bar,
        fractions,
        FIG7_FRACTIONS,
        {
            "full_under_a_not_b": (paper.FIG7_FULL_UNDER_BF_NOT_SLOTS, "paper ≈ 20 %"),
            "higher_under_a": (0.9, '"almost all" (≥ 90 %)'),
        },
        ylabel="Users (%)",
    )
    ci = " (95 % CI over seeds)" if seeds > 1 else ""
    ax_bar.set_title(f"(b) fractions of users{ci}", fontsize="medium")
    fig.suptitle("Fig. 7 (DRFH paper): task completion ratio, Best-Fit DRFH vs Slots")
    save_figure(fig, path)


def fig8_sharing_incentive(
    results: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    shared: str = "bf-drfh",
) -> dict[str, Any]:
    """Fig. 8: task completion ratio on dedicated clouds (x) versus the shared cloud (y).

    Bubble radius is proportional to ``log10(1 + tasks submitted)``.

    Parameters
    ----------
    results : path-like
        Results directory; reads ``R/dedicated/users.parquet`` and ``R/<shared>/users.parquet``.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.
    shared : str, optional
        Scheduler of the shared-cloud run (default Best-Fit DRFH).

    Returns
    -------
    dict
        ``users`` (in both), ``worse_off`` (count with ``ratio_shared < ratio_dedicated - 1e-9``),
        ``worse_off_fraction``, ``mean_decrease`` (mean of ``ratio_dedicated - ratio_shared``
        over the worse-off users; NaN when none), ``better_off_fraction``.
    """
    root = Path(results)
    m = _read_users(root, "dedicated").merge(
        _read_users(root, shared), on="user", suffixes=("_dc", "_sc")
    )
    dc, sc = m["completion_ratio_dc"].to_numpy(float), m["completion_ratio_sc"].to_numpy(float)
    worse = sc < dc - _TOL
    n = len(m)
    stats: dict[str, Any] = {
        "shared": shared,
        "users": n,
        "worse_off": int(worse.sum()),
        "worse_off_fraction": float(worse.sum() / n) if n else float("nan"),
        "better_off_fraction": float(np.sum(sc > dc + _TOL) / n) if n else float("nan"),
        "mean_decrease": float(np.mean(dc[worse] - sc[worse])) if worse.any() else float("nan"),
    }
    if path is not None:
        users = pd.DataFrame(
            {"ratio_dc": dc, "ratio_sc": sc, "tasks": m["tasks_submitted_sc"].to_numpy(float)}
        )
        one = {k: Estimate(float(stats[k]), None, None, 1, "") for k in FIG8_FRACTIONS}
        fig8_figure(users, one, shared=shared, seeds=1, path=path)
    return stats


#: The quantities Fig. 8's text is about, and their labels.
FIG8_FRACTIONS = {
    "worse_off_fraction": "users worse off\nin the shared cloud",
    "better_off_fraction": "users better off\nin the shared cloud",
    "mean_decrease": "mean decrease of the\nworse-off users' ratio",
}


def fig8_figure(
    users: pd.DataFrame,
    fractions: dict[str, Estimate],
    *,
    shared: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 8: per-user completion ratios on dedicated clouds against the shared cloud
    (left) and the quantities of the paper's text with their 95 % intervals (right).

    Parameters
    ----------
    users : pandas.DataFrame
        ``ratio_dc``, ``ratio_sc`` (task completion ratio alone on the dedicated cloud and in the
        shared cloud, averaged over seeds) and ``tasks``, one row per user.
    fractions : dict
        :data:`FIG8_FRACTIONS` keys → estimates (fractions of users; the mean decrease in
        completion-ratio points).
    shared : str
        The shared cloud's scheduler.
    seeds : int
        The number of seeds averaged.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(11, 5.2))
    ax, ax_bar = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    radius = 6.0 * np.log10(1.0 + users["tasks"].to_numpy(float))
    _bubble_scatter(
        ax,
        users["ratio_dc"].to_numpy(float),
        users["ratio_sc"].to_numpy(float),
        radius**2,
        label=f"users ({len(users)}); radius ∝ log10(1 + tasks)",
    )
    mean = f", mean over {seeds} seeds" if seeds > 1 else ""
    ax.set_xlabel(f"Task completion ratio in dedicated cloud, DC (fraction{mean})")
    ax.set_ylabel(
        f"Task completion ratio in shared cloud, SC (fraction; {scheduler_label(shared)})"
    )
    ax.set_title("(a) per user: dedicated vs shared cloud", fontsize="medium")
    _fraction_bars(
        ax_bar,
        fractions,
        FIG8_FRACTIONS,
        {
            "worse_off_fraction": (paper.FIG8_WORSE_OFF_FRACTION, "paper 2 %"),
            "mean_decrease": (0.05, '"only slightly":\n≤ 5 points'),
        },
        ylabel="Users (%) / completion-ratio points",
    )
    ci = " (95 % CI)" if seeds > 1 else ""
    ax_bar.set_title(f"(b) the paper's quantities{ci}", fontsize="medium")
    fig.suptitle("Fig. 8 (DRFH paper): sharing incentive, dedicated clouds vs shared cloud")
    save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 4


def _step_mean(t: np.ndarray, v: np.ndarray, lo: float, hi: float) -> float:
    """Time-weighted mean over [lo, hi] of the step function (t, v); 0 before t[0]."""
    if hi <= lo:
        return float("nan")
    knots = np.concatenate(([lo], t[(t > lo) & (t < hi)], [hi]))
    idx = np.searchsorted(t, knots[:-1], side="right") - 1
    vals = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
    return float(np.sum(vals * np.diff(knots)) / (hi - lo))


def fig4_phase_means(
    shares: pd.DataFrame,
    phases: dict[str, tuple[float, float]] | None = None,
    *,
    middle: float = 0.6,
    active_threshold: float = 1e-6,
) -> dict[str, dict[str, dict[str, float]]]:
    """Mean CPU, memory and dominant share of each active user in each phase of Fig. 4.

    Parameters
    ----------
    shares : pandas.DataFrame
        Long format ``time_s, user, cpu, mem, dominant``; each sample holds until the next sample
        of the same user (step function; a user's share is 0 before its first sample).
    phases : dict, optional
        ``{name: (start_s, end_s)}``; default
        :data:`fairsim.experiments.drfh.paper.FIG4_PHASES`.
    middle : float, optional
        Fraction of each window kept, centred, to skip transients (default the middle 60 %).
    active_threshold : float, optional
        A user is active in a phase when its mean dominant share exceeds this.

    Returns
    -------
    dict
        ``{phase: {user: {"cpu": x, "mem": y, "dominant": z}}}``, time-weighted means.
    """
    phases = dict(paper.FIG4_PHASES if phases is None else phases)
    out: dict[str, dict[str, dict[str, float]]] = {}
    groups = {u: g.sort_values("time_s") for u, g in shares.groupby("user", sort=True)}
    for name, (t0, t1) in phases.items():
        cut = (1.0 - middle) / 2.0 * (t1 - t0)
        lo, hi = t0 + cut, t1 - cut
        per_user: dict[str, dict[str, float]] = {}
        for user, g in groups.items():
            t = g["time_s"].to_numpy(float)
            means = {
                r: _step_mean(t, g[r].to_numpy(float), lo, hi) for r in ("cpu", "mem", "dominant")
            }
            if means["dominant"] > active_threshold:
                per_user[str(user)] = means
        out[name] = per_user
    return out


def fig4_shares(
    results: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    scheduler: str = "bf-drfh",
) -> dict[str, dict[str, dict[str, float]]]:
    """Fig. 4: CPU, memory and global dominant share of three users over time (three panels).

    Parameters
    ----------
    results : path-like
        Results directory; reads ``R/fig4/<scheduler>/user_shares.parquet``.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.
    scheduler : str, optional
        Scheduler subdirectory of ``R/fig4`` (default Best-Fit DRFH).

    Returns
    -------
    dict
        Phase means, see :func:`fig4_phase_means`.
    """
    shares = pd.read_parquet(Path(results) / "fig4" / scheduler / "user_shares.parquet")
    phases = fig4_phase_means(shares)
    if path is not None:
        one = {
            ph: {
                u: {r: Estimate(v, None, None, 1, "") for r, v in d.items()} for u, d in pu.items()
            }
            for ph, pu in phases.items()
        }
        fig4_figure(shares, one, scheduler=scheduler, seeds=1, path=path)
    return phases


def fig4_figure(
    shares: pd.DataFrame,
    phases: dict[str, dict[str, dict[str, Estimate]]],
    *,
    scheduler: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 4: one run's shares over time, with every phase's mean share per user over the
    seeds' pools (95 % interval as error bars) and the paper's values (black crosses).

    Parameters
    ----------
    shares : pandas.DataFrame
        ``user_shares.parquet`` of the run drawn (seed 1's pool).
    phases : dict
        ``{phase: {user: {"cpu"|"mem"|"dominant": Estimate}}}``.
    scheduler : str
        The scheduler of the run.
    seeds : int
        The number of pools behind ``phases``.
    path : path-like
        Where to save the PNG.
    """
    pools = f"; bars: phase means over {seeds} pools, 95 % CI" if seeds > 1 else ""
    fig = user_shares_figure(
        shares,
        scheduler=scheduler,
        marks_s=(paper.FIG4_USER2_JOIN_S, paper.FIG4_USER3_JOIN_S, paper.FIG4_USER1_DEPART_S),
        title=f"Fig. 4 (DRFH paper): shares of three users under {scheduler_label(scheduler)} "
        f"(dotted: 200 s, 500 s, 1080 s; ×: paper{pools})",
    )
    users = sorted({u for per_user in phases.values() for u in per_user})
    for ax, res in zip(fig.axes, ("cpu", "mem", "dominant"), strict=False):
        colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
        for phase, (t0, t1) in paper.FIG4_PHASES.items():
            for k, user in enumerate(users):
                x = (t0 + t1) / 2 + (k - 1) * 0.04 * (t1 - t0)
                est = phases.get(phase, {}).get(user, {}).get(res)
                if est is not None and est.finite:
                    v, lo, hi = _err(est)
                    ax.errorbar(
                        [x],
                        [v],
                        yerr=[[lo], [hi]],
                        fmt="o",
                        ms=3,
                        capsize=3,
                        color=colours.get(user, "black"),
                    )
                ref = paper.FIG4_SHARES.get(phase, {}).get(user, {}).get(res)
                if ref is not None:
                    ax.plot([x], [100.0 * ref], marker="x", color="black", ms=7, ls="none")
        ax.set_ylabel("Share of the pool's capacity (%)")
    save_figure(fig, path)


# --------------------------------------------------------------------------- fairness over time

#: Sub-folder of each seed's runs with ``collect.fairness`` on the Google trace
#: (:mod:`fairsim.experiments.drfh.experiment`, step 5).
FAIRNESS_DIR = "fairness"
#: The schedulers measured there: the two DRFH heuristics and Slots with 16 slots per maximum
#: server (the best Slots run of every seed so far, and the Fig. 5 baseline).
FAIRNESS_SCHEDULERS = ("slots-16", "ff-drfh", "bf-drfh")
#: Fig. 4's phases for the deficit (:func:`fig4_deficit_phases`): between the joins and user 1's
#: departure, the last one until the run ends.
FIG4_DEFICIT_PHASES = ("user 1 alone", "users 1+2", "users 1-3", "after user 1 departs")


def read_fairness_summary(results: str | os.PathLike[str], scheduler: str) -> pd.DataFrame:
    """``R/<scheduler>/fairness_summary.parquet`` (``collect.fairness``), sorted by time.

    Raises
    ------
    FileNotFoundError
        When the run was made without ``collect.fairness``.
    """
    path = Path(results) / scheduler / "fairness_summary.parquet"
    return pd.read_parquet(path).sort_values("time_s", ignore_index=True)


def fairness_context(results: str | os.PathLike[str], scheduler: str) -> dict[str, float]:
    """What the time averages of a run's fairness over time rest on, from ``fairness.parquet``.

    Parameters
    ----------
    results : path-like
        Results directory with ``<scheduler>/fairness.parquet``.
    scheduler : str

    Returns
    -------
    dict
        ``reference_jain``: the mean over the instants of Jain's index of the reference
        (DRFH) allocation's dominant shares (:func:`fairsim.scenario.fairness.jain_index`,
        unweighted: the DRFH runs' users all have weight 1), the level an online allocation that
        equalled the reference would reach, users with few tasks present holding less;
        ``worst_running`` and ``worst_waiting``: the median over the instants of the tasks
        running and waiting of the user with the largest deficit.
    """
    from fairsim.scenario.fairness import jain_index

    f = pd.read_parquet(
        Path(results) / scheduler / "fairness.parquet",
        columns=["time_s", "tasks_running", "tasks_waiting", "reference_dominant_share", "deficit"],
    )
    ref = f.groupby("time_s", sort=True)["reference_dominant_share"].apply(
        lambda v: jain_index(v.to_numpy(dtype=float))
    )
    worst = f.loc[f["deficit"].notna()].sort_values(["time_s", "deficit"], kind="stable")
    worst = worst.groupby("time_s", sort=True).tail(1)
    return {
        "reference_jain": float(ref.mean()),
        "worst_running": float(worst["tasks_running"].median()),
        "worst_waiting": float(worst["tasks_waiting"].median()),
    }


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


def whole_task_shares(
    servers: pd.DataFrame, demands: dict[str, tuple[float, ...]]
) -> dict[str, dict[str, float]]:
    """Dominant shares of users with unbounded backlogs: divisible DRFH against whole tasks.

    Both allocations are static, on the same pool: ``drfh`` (the divisible DRFH allocation,
    Sec. IV of the DRFH paper, what ``collect.fairness`` takes as the reference) and
    ``bf-drfh`` (progressive filling of whole tasks with Best-Fit's choice of server, Sec. V-B,
    every user's tasks placed at once), both from :func:`fairsim.solve`.

    Parameters
    ----------
    servers : pandas.DataFrame
        ``servers.parquet`` (``server``, one column per resource of ``demands``).
    demands : dict
        ``{user: per-task demand}``, in the order of the resource columns ``cpu, mem``.

    Returns
    -------
    dict
        ``{"divisible": {user: share}, "whole": {user: share}}``: global dominant shares
        ``tasks x max_r d_r / C_r``.
    """
    import fairsim

    resources = ["cpu", "mem"]
    cap = servers[resources].to_numpy(dtype=float)
    total = cap.sum(axis=0)
    instance = {
        "resources": resources,
        "servers": [
            {"id": str(sid), "capacity": [float(x) for x in row]}
            for sid, row in zip(servers["server"], cap, strict=True)
        ],
        "users": [{"id": u, "demand": [float(x) for x in d]} for u, d in demands.items()],
    }
    per_task = {u: float(np.max(np.asarray(d, dtype=float) / total)) for u, d in demands.items()}
    out: dict[str, dict[str, float]] = {}
    for key, mech in (("divisible", "drfh"), ("whole", "bf-drfh")):
        answer = fairsim.solve(instance, mech)
        tasks = np.asarray(answer["tasks"], dtype=float).sum(axis=1)
        out[key] = {u: float(n * per_task[u]) for u, n in zip(answer["users"], tasks, strict=True)}
    return out


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
        :func:`whole_task_shares`).

    Raises
    ------
    FileNotFoundError
        When the Fig. 4 run was made without ``collect.fairness``.
    """
    run = Path(results) / "fig4" / scheduler
    summary = read_fairness_summary(Path(results) / "fig4", scheduler)
    per_user = pd.read_parquet(run / "fairness.parquet")
    tasks = pd.read_parquet(
        run / "tasks.parquet", columns=["user", "submit_s", "start_s", "finish_s"]
    )
    servers = pd.read_parquet(Path(results) / "fig4" / "servers.parquet")
    settle = float((tasks["finish_s"] - tasks["start_s"]).max())
    demand_cols = ["demand_cpu", "demand_mem"]
    demands = per_user.groupby("user")[demand_cols].first()
    out: dict[str, dict[str, Any]] = {}
    for name, (t0, t1) in fig4_phase_windows(tasks).items():
        last = name == FIG4_DEFICIT_PHASES[-1]
        inside = (summary["time_s"] >= t0) & (
            (summary["time_s"] <= t1) if last else (summary["time_s"] < t1)
        )
        settled = inside & (summary["time_s"] >= t0 + settle)
        s = summary[settled]
        rows = per_user[per_user["time_s"].isin(s["time_s"])]
        users = sorted(rows["user"].unique().tolist())
        static = (
            whole_task_shares(
                servers, {u: tuple(demands.loc[u].to_numpy(dtype=float)) for u in users}
            )
            if users
            else {"whole": {}, "divisible": {}}
        )
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
            "whole": float(np.mean(list(static["whole"].values()))) if users else math.nan,
            "divisible": float(np.mean(list(static["divisible"].values()))) if users else math.nan,
        }
    return out


def fig4_deficit_figure(
    summary: pd.DataFrame,
    phases: dict[str, dict[str, Any]],
    *,
    bound: float,
    path: str | os.PathLike[str],
) -> None:
    """Draw the deficit of Fig. 4's run over time: the largest deficit to the DRFH allocation and
    Jain's index of the active users' dominant shares, with the phases and the claim's bound.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``fairness_summary.parquet`` of the run drawn (seed 1's pool).
    phases : dict
        :func:`fig4_deficit_phases` of that run (the boundaries and the settled parts).
    bound : float
        The claim's bound on the largest deficit (dominant share), drawn as a dashed line.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(9, 5.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    t = summary["time_s"].to_numpy(dtype=float)
    top.plot(
        t,
        100.0 * summary["max_deficit"].to_numpy(dtype=float),
        drawstyle="steps-post",
        lw=1.0,
        color="C0",
        label="largest deficit",
    )
    top.axhline(100.0 * bound, color="C3", ls="--", lw=0.9, label=f"bound {100 * bound:.2f} %")
    bottom.plot(
        t, summary["jain_index"].to_numpy(dtype=float), drawstyle="steps-post", lw=1.0, color="C0"
    )
    for k, (name, p) in enumerate(phases.items()):
        for ax in (top, bottom):
            if k:
                ax.axvline(p["start_s"], color="grey", ls=":", lw=0.8)
            ax.axvspan(p["start_s"], p["start_s"] + p["settle_s"], color="grey", alpha=0.12, lw=0)
        top.text(
            (p["start_s"] + p["end_s"]) / 2,
            1.02 + 0.08 * (k % 2),  # alternate heights: short phases' names do not overlap
            name,
            transform=top.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    top.set_ylabel("largest deficit (dominant share, %)")
    top.set_ylim(bottom=min(0.0, top.get_ylim()[0]))
    top.legend(fontsize=8, loc="upper right")
    bottom.set_ylabel("Jain's index")
    bottom.set_ylim(0.0, 1.05)
    bottom.set_xlabel("time (s)")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    fig.suptitle(
        "Fig. 4's run under Best-Fit DRFH against the DRFH allocation\n(grey: the first task "
        "run time of each phase, left out of the settled numbers)",
        fontsize="medium",
        y=1.04,
    )
    save_figure(fig, path)


def fairness_figure(series: dict[str, list[pd.DataFrame]], path: str | os.PathLike[str]) -> None:
    """Draw the fairness over time of the Google runs: the largest deficit to the DRFH
    allocation and Jain's index, the mean over seeds with its 95 % band.

    Parameters
    ----------
    series : dict
        Line label → one ``fairness_summary.parquet`` frame per seed; only the instants every
        seed sampled are drawn.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(10, 6))
    axes = fig.subplots(2, 1, sharex=True)
    n_seeds = max((len(v) for v in series.values()), default=1)
    for col, ax, scale in (("max_deficit", axes[0], 100.0), ("jain_index", axes[1], 1.0)):
        for label, frames in series.items():
            times = functools.reduce(np.intersect1d, [f["time_s"].to_numpy(float) for f in frames])
            stack = np.vstack(
                [f.set_index("time_s")[col].reindex(times).to_numpy(float) for f in frames]
            )
            mean, low, high = seed_band(stack)
            (line,) = ax.plot(times / 3600.0, scale * mean, label=label, lw=0.9)
            if low is not None and high is not None:
                ax.fill_between(
                    times / 3600.0, scale * low, scale * high, color=line.get_color(), alpha=0.25
                )
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("largest deficit (dominant share, %)")
    axes[0].set_ylim(bottom=min(0.0, axes[0].get_ylim()[0]))
    axes[0].legend(fontsize="small")
    axes[0].set_title(
        "Largest deficit: a user's dominant share in the DRFH allocation minus its online one",
        fontsize="medium",
    )
    axes[1].set_ylabel("Jain's index")
    axes[1].set_ylim(0.0, 1.05)
    axes[1].set_title("Jain's index of the active users' dominant shares", fontsize="medium")
    axes[1].set_xlabel("Time (h)")
    band = f": mean over {n_seeds} seeds, 95 % band" if n_seeds > 1 else ""
    fig.suptitle(f"Fairness over time on the Google trace{band}")
    save_figure(fig, path)


# --------------------------------------------------------------------------- production context

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
        common jobs, seconds), ``jain`` and ``max_deficit`` (time averages of fairness over
        time, None without it)); ``readings`` (reading → dict: ``folder``, ``cpu``, ``mem``,
        ``peak_cpu``, ``peak_mem`` as above, and ``overcommit``: per resource the largest, the
        last and the mean over the samples of the number of over-committed servers
        (``servers_max``, ``servers_end``, ``servers_mean``), the largest and the time-average
        requested amount above capacity (``amount_max``, ``amount_mean``, fractions of the
        pool's capacity) and the utilisation by requests at the end (``utilization_end``)).

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
        summary = read_summary(root, s)
        util = pd.read_parquet(root / s / "utilization.parquet")
        users = pd.read_parquet(root / s / "users.parquet", columns=["completion_ratio"])
        j = pd.read_parquet(root / s / "jobs.parquet", columns=["job_id", "completion_time_s"])
        jobs[s] = j.set_index("job_id")["completion_time_s"]
        avg = (summary.get("fairness") or {}).get("time_average") or {}
        mu = summary["mean_utilization"]
        per[s] = {
            "cpu": float(mu["cpu"]),
            "mem": float(mu["mem"]),
            "peak_cpu": float(util["cpu"].max()),
            "peak_mem": float(util["mem"].max()),
            "completed": summary["tasks_completed"] / summary["tasks"],
            "user_ratio": float(users["completion_ratio"].mean()),
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


def _reading(root: Path, folder: str) -> dict[str, Any]:
    """One replay of the trace's placements (:func:`production_numbers`' ``readings``)."""
    summary = read_summary(root, folder)
    util = pd.read_parquet(root / folder / "utilization.parquet")
    mu, oc = summary["mean_utilization"], summary.get("overcommit") or {}
    return {
        "folder": folder,
        "cpu": float(mu["cpu"]),
        "mem": float(mu["mem"]),
        "peak_cpu": float(util["cpu"].max()),
        "peak_mem": float(util["mem"].max()),
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


def production_figure(results: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Draw the production context: CPU and memory utilisation by requests over time of the
    trace's own schedule under both readings of its requests (:data:`PRODUCTION_READINGS`) and
    of the simulated schedulers, and the over-committed servers of the trace's schedule under
    each reading.

    Parameters
    ----------
    results : path-like
        Results directory of the production-context run (:func:`production_numbers`).
    path : path-like
        Where to save the PNG.
    """
    root = Path(results)
    fig = Figure(figsize=(10, 8.5))
    axes = fig.subplots(3, 1, sharex=True)
    first, schedule = PRODUCTION_READINGS["first"], PRODUCTION_READINGS["schedule"]
    own_label = {
        first: "recorded, each task's first request (the trace's schedule, same workload)",
        schedule: "recorded, each run's SCHEDULE request (what production placed)",
    }
    for s in (*PRODUCTION_SCHEDULERS, schedule):
        util = pd.read_parquet(root / s / "utilization.parquet")
        t = util["time_s"].to_numpy(float) / 3600.0
        own = s in own_label
        style: dict[str, Any] = {"lw": 0.9}
        if own:
            style = {"lw": 1.4, "color": "black", "ls": "-" if s == first else ":"}
        label = own_label[s] if own else scheduler_label(s)
        for ax, r in zip(axes[:2], ("cpu", "mem"), strict=True):
            ax.plot(t, 100.0 * util[r].to_numpy(float), label=label, **style)
        if own and "overcommitted_cpu" in util:
            how = "first request" if s == first else "SCHEDULE request"
            for r, name, color in (("cpu", "CPU", "tab:red"), ("mem", "memory", "tab:blue")):
                axes[2].plot(
                    t,
                    util[f"overcommitted_{r}"].to_numpy(float),
                    lw=1.0,
                    color=color,
                    ls=style["ls"],
                    label=f"{name}, {how}",
                )
    for ax, name in zip(axes[:2], ("CPU", "Memory"), strict=True):
        ax.axhline(100.0, color="black", lw=0.6, ls="--")
        ax.set_ylabel(f"{name} requested (% of pool)")
        ax.set_ylim(bottom=0.0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", loc="lower right")
    axes[0].set_title("Utilisation by requests (above 100 %: over-committed)", fontsize="medium")
    axes[2].set_ylabel("over-committed servers")
    axes[2].set_title(
        "Servers whose running tasks request more than their capacity (recorded)",
        fontsize="medium",
    )
    axes[2].legend(fontsize="small")
    axes[2].grid(alpha=0.3)
    axes[2].set_xlabel("Time (h)")
    fig.suptitle("Production context: the trace's own schedule beside DRFH and Slots")
    save_figure(fig, path)
