"""``fairsim sweep-report OUT``: means and 95 % confidence intervals across seeds.

Reads ``OUT/runs.parquet`` (see :mod:`fairsim.scenario.sweep`), keeps the runs with
``status == "ok"`` and, per grid point and scheduler, summarises each metric over the seeds:

``mean``, ``std`` (sample standard deviation, ``ddof=1``), ``n`` (seeds), and a two-sided 95 %
interval of the mean (``ci95_low``, ``ci95_high``, ``ci95_half`` half its width; NaN when
``n < 2``) by a method that keeps it inside the metric's range (:func:`bounded_interval`,
named per row in ``ci_method``): for fractions in [0, 1] (utilisation, completion ratio, Jain's
indices) the Student-t interval on the logit scale, back-transformed (``logit-t``); for JCT (>= 0)
on the log scale (``log-t``); else, and for values outside the range (the ``recorded`` replay
over-commits: utilisation above 1), the Student-t interval ``mean ± t_{0.975, n-1} · std /
sqrt(n)`` (``t``; :func:`fairsim.scenario.reporting.intervals.t_interval`).

Mean JCT is also computed over the same job set (``common_mean_jct_s``): per grid point and seed,
the jobs completed under every scheduler of that point and seed (read from each run's
``jobs.parquet``), so that the schedulers are compared on the same jobs.

When the runs were made with ``collect.fairness``, each scheduler's time-averaged Jain's index of
entitlement fractions, max deficit and Jain's index of raw dominant shares
(``fairness.time_average`` in its ``summary.json``, :func:`with_fairness`) are summarised the
same way, in a section "Fairness over time" of the report with their own figures; a sweep
without them gets no such section, and its files are those it had before.

Where schedulers share seeds (one run per seed holds every scheduler, or the schedulers are a grid
path), they are also compared **paired**: per seed, the difference of each scheduler's value and
the reference scheduler's (the first one), with the 95 % Student-t interval of those differences
(:func:`paired_differences`); this interval is narrower than the unpaired one when seeds move all
schedulers alike.

Writes ``OUT/sweep_report.parquet`` (tidy: one row per grid point, scheduler and metric),
``OUT/sweep_paired.parquet`` (one row per grid point, scheduler other than the reference, and
metric), one figure per metric, ``OUT/sweep_<metric>.png`` (top: means with the 95 % interval over
seeds; bottom: paired differences against the reference), and ``OUT/report.md`` with the tables,
all made before any is written and put in place together (:func:`fairsim.atomic.atomic_paths`).
Schedulers are named by their registry label (e.g. ``bf-drfh``) everywhere.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from scipy import special, stats

from fairsim.atomic import atomic_paths, write_text
from fairsim.errors import ConfigError, ResultError
from fairsim.scenario.reporting import markdown
from fairsim.scenario.reporting.intervals import t_interval
from fairsim.scenario.reporting.plotting import save_figure
from fairsim.scenario.reporting.result_files import (
    is_result_number,
    read_result_json,
    read_result_table,
)
from fairsim.simulator.results import write_table

#: Metric column of ``runs.parquet`` → (axis label with unit, scale applied for plotting).
REPORT_METRICS: dict[str, tuple[str, float]] = {
    "util_cpu": ("Mean CPU utilisation (%)", 100.0),
    "util_mem": ("Mean memory utilisation (%)", 100.0),
    "mean_jct_s": ("Mean job completion time (s)", 1.0),
    "completion_ratio": ("Task completion ratio (%)", 100.0),
    "common_mean_jct_s": ("Mean JCT over the same jobs (s)", 1.0),
    "fairness_jain_entitlement": ("Time-averaged Jain's index of entitlement fractions", 1.0),
    "fairness_max_deficit": ("Time-averaged max deficit (dominant share)", 1.0),
    "fairness_jain_raw_dominant": ("Time-averaged Jain's index of raw dominant shares", 1.0),
}
#: The fairness metrics (``collect.fairness``), in the order of the report's tables: column of the
#: runs table → key under ``fairness.time_average`` in a scheduler's ``summary.json`` (the mean
#: over the sampled instants; docs/fairness.md).
FAIRNESS_METRICS: dict[str, str] = {
    "fairness_jain_entitlement": "jain_entitlement",
    "fairness_max_deficit": "max_deficit",
    "fairness_jain_raw_dominant": "jain_raw_dominant",
}
#: The key a ``summary.json`` written before ``jain_raw_dominant`` existed has instead
#: (DESIGN.md's ``jain_index``, the same values).
FORMER_KEYS: dict[str, str] = {"jain_raw_dominant": "jain_index"}
#: The metrics of the headline and paired tables (the fairness metrics have their own section).
MAIN_METRICS = tuple(m for m in REPORT_METRICS if m not in FAIRNESS_METRICS)
#: Metrics drawn as figures: JCT only over the same job set (each scheduler's own completed jobs
#: are different populations; their mean stays in the tables).
FIGURE_METRICS = (
    "util_cpu",
    "util_mem",
    "completion_ratio",
    "common_mean_jct_s",
    *FAIRNESS_METRICS,
)
#: Metrics that are shares of a whole (their axes run from 0 to 100 %, with headroom).
SHARE_METRICS = frozenset({"util_cpu", "util_mem", "completion_ratio"})
#: Top of a share axis (%): a value at 100 % stays visible above the top border.
SHARE_YLIM_TOP = 105.0
#: Metrics in [0, 1] drawn on an axis from 0 to :data:`UNIT_YLIM_TOP`.
UNIT_METRICS = frozenset({"fairness_jain_entitlement", "fairness_jain_raw_dominant"})
UNIT_YLIM_TOP = 1.05
#: Metrics that may be negative (their axis is not cut at 0; a line marks 0).
SIGNED_METRICS = frozenset({"fairness_max_deficit"})


#: Columns of ``runs.parquet`` that a report reads (:func:`fairsim.scenario.sweep.runs_frame`;
#: the grid paths lie between ``run_id`` and ``seed``, the metrics are read where present).
RUNS_COLUMNS = ("run_id", "seed", "scheduler", "status")
#: Columns of a run's ``<scheduler>/jobs.parquet`` that the same-job-set JCT reads.
JOB_COLUMNS = ("job_id", "completion_time_s")


#: The range of a metric's values (the fractions of a whole, and JCT >= 0); an interval of its
#: mean stays inside it (:func:`bounded_interval`). A metric not listed is unbounded (``t``).
BOUNDS: dict[str, tuple[float, float]] = {
    "util_cpu": (0.0, 1.0),
    "util_mem": (0.0, 1.0),
    "completion_ratio": (0.0, 1.0),
    "fairness_jain_entitlement": (0.0, 1.0),
    "fairness_jain_raw_dominant": (0.0, 1.0),
    "mean_jct_s": (0.0, math.inf),
    "common_mean_jct_s": (0.0, math.inf),
}

#: What each ``ci_method`` of the report's tables is, for people.
CI_METHODS: dict[str, str] = {
    "t": "Student-t interval m ± t·s/√n",
    "logit-t": "Student-t interval on the logit scale, back-transformed: "
    "expit(logit m ± t·s/(√n·m(1 − m)))",
    "log-t": "Student-t interval on the log scale, back-transformed: m·exp(±t·s/(√n·m))",
}


def bounded_interval(
    values: np.ndarray, bounds: tuple[float, float] | None = None, level: float = 0.95
) -> tuple[float, float, float, float, int, str]:
    """Mean of ``values`` with a two-sided interval inside ``bounds``.

    The Student-t interval ``m ± t·s/√n`` (:func:`t_interval`) of a quantity near a bound
    crosses it (a utilisation of 96.2 % over 5 seeds, ``[91.2, 101.2]``). For a quantity in
    ``[lo, hi]`` the interval is taken on the logit scale of ``p = (m - lo) / (hi - lo)`` with
    the delta-method standard error ``s / (√n · p(1 - p))`` and transformed back (``logit-t``,
    as Stata's ``proportion`` does by default for a proportion); for one in ``[lo, ∞)`` on the
    log scale of ``m - lo`` (``log-t``). Both contain the mean, stay strictly inside the bounds
    when the values are not all at one bound, and agree with the t-interval to first order away
    from them; the interval grows towards the far bound. Values outside ``bounds`` (or no
    bounds) get the t-interval (``t``).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        One value per seed; NaN values are ignored.
    bounds : tuple of float, optional
        ``(lo, hi)``, ``hi`` may be infinite.
    level : float
        Two-sided confidence level.

    Returns
    -------
    tuple
        ``(mean, std, low, high, n, method)``: low and high NaN when fewer than two values;
        equal to the mean when the values do not vary; ``method`` one of :data:`CI_METHODS`.

    Examples
    --------
    >>> m, s, lo, hi, n, how = bounded_interval([1.0, 0.99, 0.98, 0.93, 0.91], (0.0, 1.0))
    >>> round(100 * m, 1), round(100 * lo, 1), round(100 * hi, 1), how
    (96.2, 86.8, 99.0, 'logit-t')
    """
    mean, sd, half, n = t_interval(np.asarray(values, dtype=np.float64), level)
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    lo_b, hi_b = bounds if bounds is not None else (-math.inf, math.inf)
    inside = bounds is not None and bool(np.all((v >= lo_b) & (v <= hi_b)))
    method = "t" if not inside else ("logit-t" if math.isfinite(hi_b) else "log-t")
    if not np.isfinite(half):
        return mean, sd, math.nan, math.nan, n, method
    if method == "t":
        return mean, sd, mean - half, mean + half, n, method
    if half == 0 or mean <= lo_b or mean >= hi_b:  # no spread, or every value at one bound
        return mean, sd, mean, mean, n, method
    tq = float(stats.t.ppf(0.5 + level / 2, n - 1))
    se = sd / math.sqrt(n)
    if method == "logit-t":
        width = hi_b - lo_b
        p = (mean - lo_b) / width
        d = tq * (se / width) / (p * (1 - p))
        z = math.log(p / (1 - p))
        low = lo_b + width * float(special.expit(z - d))
        high = lo_b + width * float(special.expit(z + d))
    else:
        m = mean - lo_b
        f = math.exp(tq * se / m)
        low, high = lo_b + m / f, lo_b + m * f
    # the back-transform rounds: a spread of a few ulps (three equal values whose mean is not
    # exact) can put an end a rounding step past the mean
    return mean, sd, min(low, mean), max(high, mean), n, method


def grid_columns(runs: pd.DataFrame) -> list[str]:
    """The grid-path columns of a ``runs.parquet`` table, in their order: the columns between
    ``run_id`` and ``seed`` (the table's layout, :func:`fairsim.scenario.sweep.runs_frame`)."""
    cols = list(runs.columns)
    return cols[cols.index("run_id") + 1 : cols.index("seed")]


def _stat_row(
    keys: list[str],
    point: tuple[Any, ...],
    metric: str,
    values: np.ndarray,
    bounds: tuple[float, float] | None,
    level: float,
) -> dict[str, Any]:
    """One row of an aggregate: the grid point ``point`` (one value per key), the metric, and its
    :func:`bounded_interval` over ``values`` (one per seed)."""
    mean, sd, low, high, n, how = bounded_interval(values, bounds, level)
    return {
        **dict(zip(keys, point, strict=True)),
        "metric": metric,
        "n": n,
        "mean": mean,
        "std": sd,
        "ci95_low": low,
        "ci95_high": high,
        "ci95_half": (high - low) / 2,
        "ci_method": how,
    }


def aggregate(runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Tidy summary across seeds: one row per grid point, scheduler and metric.

    Columns: the grid paths, ``scheduler``, ``metric``, ``n``, ``mean``, ``std``, ``ci95_low``,
    ``ci95_high`` (the interval of :func:`bounded_interval` with the metric's :data:`BOUNDS`),
    ``ci95_half`` (half its width), ``ci_method`` (:data:`CI_METHODS`).
    """
    grid = grid_columns(runs)
    ok = runs[runs["status"] == "ok"]
    keys = [*grid, "scheduler"]
    rows = []
    for point, g in ok.groupby(keys, sort=False, dropna=False):
        point = point if isinstance(point, tuple) else (point,)
        for metric in [m for m in REPORT_METRICS if m in ok.columns]:
            values = g[metric].to_numpy(dtype=np.float64, na_value=np.nan)
            rows.append(_stat_row(keys, point, metric, values, BOUNDS.get(metric), level))
    cols = [*keys, "metric", "n", "mean", "std", "ci95_low", "ci95_high", "ci95_half"]
    cols.append("ci_method")
    out = pd.DataFrame(rows, columns=cols)
    out["n"] = out["n"].astype("int64")
    return out


def point_columns(runs: pd.DataFrame) -> list[str]:
    """The grid paths that define a point on which schedulers are compared: every grid path but
    ``schedulers`` (when the schedulers are themselves swept, each run holds one of them)."""
    return [c for c in grid_columns(runs) if c != "schedulers"]


def with_common_jct(root: Path, runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with ``common_jobs`` and ``common_mean_jct_s``: the jobs completed under every
    scheduler of the same grid point and seed, and each scheduler's mean JCT over them.

    Reads ``root/<run_id>/<scheduler>/jobs.parquet`` of the runs with ``status == "ok"``. A
    group where a file is missing, or no job is common, gets ``common_jobs = 0`` and a NaN mean;
    a file that cannot be read is refused (:class:`fairsim.errors.ResultError`).

    Parameters
    ----------
    root : Path
        The sweep's output folder.
    runs : pandas.DataFrame
        The ``runs.parquet`` table.

    Returns
    -------
    pandas.DataFrame
        A copy of ``runs`` with the two columns added (NaN / 0 for runs that failed).
    """
    out = runs.copy()
    out["common_jobs"] = 0
    out["common_mean_jct_s"] = math.nan
    ok = out[out["status"] == "ok"]
    for _, g in ok.groupby([*point_columns(runs), "seed"], sort=False, dropna=False):
        jct: dict[object, pd.Series] = {}
        for idx, row in g.iterrows():
            path = root / str(row["run_id"]) / str(row["scheduler"]) / "jobs.parquet"
            if not path.is_file():
                jct = {}
                break
            jobs = read_result_table(path, JOB_COLUMNS, "sweep-report").dropna()
            jct[idx] = jobs.set_index("job_id")["completion_time_s"]
        if not jct:
            continue
        ids: pd.Index | None = None
        for v in jct.values():
            ids = v.index if ids is None else ids.intersection(v.index)
        if ids is None or len(ids) == 0:
            continue
        for idx, v in jct.items():
            out.loc[idx, "common_jobs"] = len(ids)
            out.loc[idx, "common_mean_jct_s"] = float(v.loc[ids].mean())
    out["common_jobs"] = out["common_jobs"].astype("int64")
    return out


def with_fairness(root: Path, runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with the fairness metrics (:data:`FAIRNESS_METRICS`) when a run has them.

    Reads ``root/<run_id>/<scheduler>/summary.json`` of the runs with ``status == "ok"``; a
    scheduler's value is the time average under ``fairness.time_average`` (``collect.fairness``;
    ``jain_index`` for ``jain_raw_dominant`` in a summary written before the latter existed,
    :data:`FORMER_KEYS`), NaN when its summary has none; a summary that is not a JSON object,
    or whose value there is not a number, is refused (:class:`fairsim.errors.ResultError`).

    Parameters
    ----------
    root, runs
        As :func:`with_common_jct`.

    Returns
    -------
    pandas.DataFrame
        ``runs`` itself when no run has fairness averages; else a copy with one column per
        fairness metric.
    """
    values: dict[str, list[float]] = {m: [] for m in FAIRNESS_METRICS}
    found = False
    for _, row in runs.iterrows():
        fair: Any = None
        path = root / str(row["run_id"]) / str(row["scheduler"]) / "summary.json"
        if row["status"] == "ok" and path.is_file():
            fair = read_result_json(path, "sweep-report").get("fairness")
        for metric, key in FAIRNESS_METRICS.items():
            avg = fair.get("time_average") if isinstance(fair, dict) else None
            v = avg.get(key, avg.get(FORMER_KEYS.get(key, key))) if isinstance(avg, dict) else None
            found = found or v is not None
            if not is_result_number(v):
                raise ResultError(
                    f"sweep-report: {path} is damaged: fairness.time_average.{key} is {v!r}, "
                    "not a number"
                )
            values[metric].append(math.nan if v is None else float(v))
    if not found:
        return runs
    out = runs.copy()
    for metric, vals in values.items():
        out[metric] = np.asarray(vals, dtype=np.float64)
    return out


def paired_differences(runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per-seed differences of each scheduler against the reference scheduler, with the
    Student-t interval of the mean difference (a paired comparison).

    The reference is the first scheduler of ``runs`` (its order). Per grid point (every grid
    path but ``schedulers``) and seed, ``value(scheduler) - value(reference)``; only seeds where
    both ran (``status == "ok"``, value not NaN) count.

    Parameters
    ----------
    runs : pandas.DataFrame
        The ``runs.parquet`` table (optionally with ``common_mean_jct_s``).
    level : float
        Two-sided confidence level.

    Returns
    -------
    pandas.DataFrame
        Columns: the point's grid paths, ``scheduler``, ``reference``, ``metric``, ``n`` (paired
        seeds), ``mean_diff``, ``std``, ``ci95_low``, ``ci95_high``, ``ci95_half`` (NaN when
        ``n < 2``), ``ci_method`` (``t``: a difference is signed). One row per metric for every
        scheduler that ran at a grid point with the reference, ``n = 0`` and NaN where no seed
        gives both a value. Empty with a single scheduler.
    """
    point = point_columns(runs)
    ok = runs[runs["status"] == "ok"]
    schedulers = list(dict.fromkeys(ok["scheduler"]))
    cols = [*point, "scheduler", "reference", "metric", "n", "mean_diff", "std"]
    cols += ["ci95_low", "ci95_high", "ci95_half", "ci_method"]
    rows = []
    if len(schedulers) >= 2:
        ref = schedulers[0]
        groups = ok.groupby(point, sort=False, dropna=False) if point else [((), ok)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            present = list(dict.fromkeys(g["scheduler"]))
            for metric in [m for m in REPORT_METRICS if m in ok.columns]:
                # a scheduler that ran at this point keeps its column when none of its values
                # is a number (no job completed under any seed): its row has n = 0, NaN
                wide = g.pivot_table(
                    index="seed", columns="scheduler", values=metric, aggfunc="first"
                ).reindex(columns=present)
                for sched in schedulers[1:]:
                    if ref not in wide or sched not in wide:
                        continue
                    diff = (wide[sched] - wide[ref]).to_numpy(dtype=np.float64)
                    mean, sd, half, n = t_interval(diff, level)
                    rows.append(
                        {
                            **dict(zip(point, key, strict=True)),
                            "scheduler": sched,
                            "reference": ref,
                            "metric": metric,
                            "n": n,
                            "mean_diff": mean,
                            "std": sd,
                            "ci95_low": mean - half,
                            "ci95_high": mean + half,
                            "ci95_half": half,
                            "ci_method": "t",
                        }
                    )
    out = pd.DataFrame(rows, columns=cols)
    out["n"] = out["n"].astype("int64")
    return out


def _point_label(row: pd.Series, paths: list[str]) -> str:
    return ", ".join(f"{p}={row[p]}" for p in paths) if paths else "all"


def _x_positions(
    d: pd.DataFrame, x_paths: list[str], schedulers: list[str]
) -> tuple[bool, bool, list[object]]:
    numeric = len(x_paths) == 1 and pd.api.types.is_numeric_dtype(d[x_paths[0]])
    by_scheduler = not numeric and not x_paths  # only `schedulers` varies: one x per scheduler
    if numeric:
        xs_all: list[object] = sorted(d[x_paths[0]].unique())
    elif by_scheduler:
        xs_all = list(schedulers)
    else:
        xs_all = list(dict.fromkeys(_point_label(r, x_paths) for _, r in d.iterrows()))
    return numeric, by_scheduler, xs_all


def _draw(
    ax: object,
    d: pd.DataFrame,
    value: str,
    scale: float,
    x_paths: list[str],
    schedulers: list[str],
    all_schedulers: list[str],
) -> tuple[bool, bool, list[object]]:
    """Error bars of ``d[value]`` from ``d["ci95_low"]`` to ``d["ci95_high"]`` per scheduler on
    ``ax``."""
    numeric, by_scheduler, xs_all = _x_positions(d, x_paths, all_schedulers)
    width = 0.8 / max(1, len(all_schedulers))
    for sched in schedulers:
        k = all_schedulers.index(sched)
        s = d[d["scheduler"] == sched]
        if numeric:
            x = s[x_paths[0]].to_numpy(dtype=float)
        else:
            pos = {lab: i for i, lab in enumerate(xs_all)}
            offset = 0.0 if by_scheduler else (k - (len(all_schedulers) - 1) / 2) * width
            x = np.array(
                [
                    (k if by_scheduler else pos[_point_label(r, x_paths)]) + offset
                    for _, r in s.iterrows()
                ],
                dtype=float,
            )
        y = s[value].to_numpy(dtype=float) * scale
        below = np.nan_to_num(y - s["ci95_low"].to_numpy(dtype=float) * scale)
        above = np.nan_to_num(s["ci95_high"].to_numpy(dtype=float) * scale - y)
        order = np.argsort(x)
        ax.errorbar(  # type: ignore[attr-defined]
            x[order],
            y[order],
            yerr=[below[order], above[order]],
            marker="o",
            capsize=4,
            linestyle="-" if numeric else "none",
            label=sched,
            color=f"C{k}",
        )
    return numeric, by_scheduler, xs_all


def metric_figure(table: pd.DataFrame, metric: str, paired: pd.DataFrame | None = None) -> Figure:
    """Figure of one metric across the grid, schedulers named by their registry label.

    Top panel: x = grid point (numeric when one numeric path varies, else one tick per point or
    per scheduler), one series per scheduler, mean over seeds with the 95 % interval of
    :func:`aggregate` (its method in the title). Share
    metrics (:data:`SHARE_METRICS`) run from 0 to :data:`SHARE_YLIM_TOP` %, every other metric
    from 0. Bottom panel (when ``paired`` has rows for ``metric``): the mean per-seed difference
    against the reference scheduler with its paired 95 % t-interval, and a line at 0.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`aggregate`'s table.
    metric : str
        A key of :data:`REPORT_METRICS`.
    paired : pandas.DataFrame, optional
        :func:`paired_differences`'s table.

    Returns
    -------
    matplotlib.figure.Figure
    """
    label, scale = REPORT_METRICS[metric]
    d = table[table["metric"] == metric]
    x_paths = [c for c in point_columns_of(table) if c in d.columns]
    schedulers = list(dict.fromkeys(d["scheduler"]))
    p = None if paired is None else paired[paired["metric"] == metric]
    has_paired = p is not None and len(p) > 0
    fig = Figure(figsize=(7, 7.5 if has_paired else 4.5))
    axes = fig.subplots(2 if has_paired else 1, 1, sharex=True, squeeze=False)[:, 0]
    ax = axes[0]
    numeric, by_scheduler, xs_all = _draw(ax, d, "mean", scale, x_paths, schedulers, schedulers)
    if metric in SHARE_METRICS:
        ax.set_ylim(0, SHARE_YLIM_TOP)
        ax.set_yticks(range(0, 101, 20))
    elif metric in UNIT_METRICS:
        ax.set_ylim(0, UNIT_YLIM_TOP)
    elif metric in SIGNED_METRICS:
        ax.axhline(0.0, color="grey", lw=0.8)
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel(label)
    n = int(d["n"].max()) if len(d) else 0
    ax.set_title(
        f"{label}: mean over {n} seeds, 95 % {_interval_name(d)}"
        + (
            " (jobs completed under every scheduler of the seed)"
            if metric.startswith("common_")
            else ""
        ),
        fontsize="medium",
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    if has_paired:
        assert p is not None
        ref = str(p["reference"].iloc[0])
        bx = axes[1]
        others = list(dict.fromkeys(p["scheduler"]))
        bx.axhline(0.0, color="grey", lw=0.8)
        _draw(bx, p, "mean_diff", scale, x_paths, others, schedulers)
        unit = label[label.rfind("(") :] if label.endswith(")") else ""
        bx.set_ylabel(f"difference to {ref} {unit}".strip())
        bx.set_title(
            f"Paired: per-seed difference to {ref}, 95 % t-interval (n = {int(p['n'].max())} "
            "seeds)",
            fontsize="medium",
        )
        bx.grid(True, alpha=0.3)
    last = axes[-1]
    if numeric:
        last.set_xlabel(
            "Number of servers" if x_paths[0] == "cluster.servers" else f"{x_paths[0]} (value)"
        )
        lo, hi = float(d[x_paths[0]].min()), float(d[x_paths[0]].max())
        if lo > 0 and hi / lo >= 10:
            last.set_xscale("log")
    else:
        last.set_xticks(range(len(xs_all)), [str(v) for v in xs_all], rotation=20, ha="right")
        last.set_xlabel("Scheduler" if by_scheduler else "Grid point")
    return fig


def _interval_name(d: pd.DataFrame) -> str:
    """``t-interval``, ``logit-t interval``, ...: the methods of ``d``'s intervals."""
    methods = sorted(set(d["ci_method"])) if "ci_method" in d and len(d) else ["t"]
    return "t-interval" if methods == ["t"] else f"{'/'.join(methods)} interval"


def interval_note(table: pd.DataFrame) -> str:
    """The report's sentence naming how each metric's interval was computed (the methods of
    ``table``'s ``ci_method``, :data:`CI_METHODS`)."""
    by: dict[str, list[str]] = {}
    for metric, how in dict.fromkeys(zip(table["metric"], table["ci_method"], strict=True)):
        by.setdefault(str(how), []).append(REPORT_METRICS[str(metric)][0].lower())
    ranges = {
        "logit-t": " (fractions in [0, 1]: the interval stays inside 0-100 % and is wider "
        "towards the far bound)",
        "log-t": " (>= 0: the interval stays above 0)",
        "t": "",
    }
    parts = [f"{CI_METHODS[how]} for {', '.join(names)}{ranges[how]}" for how, names in by.items()]
    return (
        "Intervals are two-sided 95 % intervals of the mean over seeds (none with a single "
        "seed; m the mean, s the standard deviation, n the seeds, t the Student-t quantile "
        "with n - 1 degrees of freedom): "
        + "; ".join(parts)
        + " (`ci_method` in `sweep_report.parquet`)."
    )


def point_columns_of(table: pd.DataFrame) -> list[str]:
    """The grid-point columns of an :func:`aggregate` or :func:`paired_differences` table."""
    stats_cols = {"scheduler", "reference", "metric", "n", "mean", "mean_diff", "std"}
    stats_cols.add("ci_method")
    return [
        c
        for c in table.columns
        if c not in stats_cols and not c.startswith("ci95_") and c != "schedulers"
    ]


#: Decimals of a metric in the report's tables (the others: one below 1,000, none above).
DECIMALS: dict[str, int] = {
    "fairness_jain_entitlement": 3,
    "fairness_max_deficit": 4,
    "fairness_jain_raw_dominant": 3,
}


def _fmt(x: float, scale: float, decimals: int | None = None) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    v = x * scale
    if decimals is not None:
        return f"{v:,.{decimals}f}"
    return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"


def _interval(row: pd.Series, value: str, scale: float, decimals: int | None = None) -> str:
    if not np.isfinite(row["ci95_half"]):
        return _fmt(row[value], scale, decimals)
    low = _fmt(row["ci95_low"], scale, decimals)
    high = _fmt(row["ci95_high"], scale, decimals)
    return f"{_fmt(row[value], scale, decimals)} [{low}, {high}]"


def headline_table(table: pd.DataFrame, metrics: tuple[str, ...] = MAIN_METRICS) -> str:
    """Markdown table: one row per grid point and scheduler, the mean [95 % interval] of every
    metric of ``metrics`` in ``table`` (in the units of :data:`REPORT_METRICS`) and the number of
    seeds."""
    point = point_columns_of(table)
    present = set(table["metric"])
    metrics = tuple(m for m in metrics if m in present)
    wide = table.set_index([*point, "scheduler", "metric"])
    head = [*point, "scheduler", "seeds", *(REPORT_METRICS[m][0] for m in metrics)]
    rows = []
    keys = list(
        dict.fromkeys(tuple(r) for r in table[[*point, "scheduler"]].itertuples(index=False))
    )
    for key in keys:
        cells = [str(k) for k in key]
        n = int(wide.loc[(*key, metrics[0]), "n"]) if metrics else 0
        cells.append(str(n))
        for m in metrics:
            cells.append(
                _interval(wide.loc[(*key, m)], "mean", REPORT_METRICS[m][1], DECIMALS.get(m))
            )
        rows.append(cells)
    return "\n".join(markdown.table(head, rows)[:-1])


def paired_table(paired: pd.DataFrame, metrics: tuple[str, ...] = MAIN_METRICS) -> str:
    """Markdown table of :func:`paired_differences`: the mean difference [95 % interval] of every
    metric of ``metrics`` in ``paired`` and the number of paired seeds."""
    point = point_columns_of(paired)
    present = set(paired["metric"])
    metrics = tuple(m for m in metrics if m in present)
    wide = paired.set_index([*point, "scheduler", "metric"])
    head = [*point, "scheduler", "reference", "paired seeds"]
    head += [f"Δ {REPORT_METRICS[m][0]}" for m in metrics]
    rows = []
    keys = list(
        dict.fromkeys(tuple(r) for r in paired[[*point, "scheduler"]].itertuples(index=False))
    )
    for key in keys:
        first = wide.loc[(*key, metrics[0])]
        cells = [str(k) for k in key] + [str(first["reference"]), str(int(first["n"]))]
        for m in metrics:
            cells.append(
                _interval(wide.loc[(*key, m)], "mean_diff", REPORT_METRICS[m][1], DECIMALS.get(m))
            )
        rows.append(cells)
    return "\n".join(markdown.table(head, rows)[:-1])


def figure_metrics(table: pd.DataFrame) -> list[str]:
    """The metrics of :data:`FIGURE_METRICS` with at least one finite mean in ``table``."""
    finite = table[np.isfinite(table["mean"].to_numpy(dtype=float))]
    return [m for m in FIGURE_METRICS if m in set(finite["metric"])]


def report_markdown(
    name: str, runs: pd.DataFrame, table: pd.DataFrame, paired: pd.DataFrame
) -> str:
    """The sweep's ``report.md``: what was compared, the headline table, the paired table, the
    figures."""
    ok = runs[runs["status"] == "ok"]
    failed = int((runs["status"] != "ok").sum())
    lines = [
        f"# Sweep {name}",
        "",
        f"{ok['run_id'].nunique()} runs finished ({failed} scheduler rows of failed runs left "
        f"out), seeds {sorted(set(ok['seed'].tolist()))}. Values are means over seeds with a "
        "two-sided 95 % interval in brackets; percentages for utilisation and completion, "
        "seconds for JCT. Schedulers are named by their registry label.",
        "",
        interval_note(table),
        "",
        "Mean JCT is each scheduler's mean over the jobs it completed (different job sets); "
        "mean JCT over the same jobs is over the jobs completed under every scheduler of the "
        "same grid point and seed, the one to compare.",
        "",
        headline_table(table),
    ]
    if len(paired):
        ref = str(paired["reference"].iloc[0])
        lines += [
            "",
            f"## Paired differences against {ref}",
            "",
            f"The schedulers share seeds: per seed, scheduler minus {ref}; the mean difference "
            "with the 95 % Student-t interval of the per-seed differences (a difference is "
            "signed: m ± t·s/√n; an interval that excludes 0 is a difference the seeds "
            "support).",
            "",
            paired_table(paired),
        ]
    figures = figure_metrics(table)
    lines += ["", "## Figures", ""]
    lines += [f"![{m}](sweep_{m}.png)" for m in figures if m not in FAIRNESS_METRICS]
    lines += fairness_section(table, paired, figures)
    return "\n".join(lines) + "\n"


def fairness_section(table: pd.DataFrame, paired: pd.DataFrame, figures: list[str]) -> list[str]:
    """The report's "Fairness over time" section: per grid point and scheduler, the time-averaged
    Jain's index of entitlement fractions, max deficit and Jain's index of raw dominant shares
    over seeds (and their paired differences); empty when ``table`` has no fairness metric (the
    runs were made without ``collect.fairness``)."""
    fair = tuple(m for m in FAIRNESS_METRICS if m in set(table["metric"]))
    if not fair:
        return []
    lines = [
        "",
        "## Fairness over time",
        "",
        "Runs made with `collect.fairness`: per run and scheduler, the time average over the "
        "sampled instants (`summary.json`, `fairness.time_average`) of Jain's index of "
        "entitlement fractions (over each active user's online dominant share divided by its "
        "dominant share in the reference allocation, the exact mechanism the scheduler "
        "implements: 1 when every user holds the same fraction of its entitlement), of the "
        "largest deficit (a user's reference dominant share minus its online one) and of "
        "Jain's index of the raw dominant shares (1 only when they are all equal, whatever "
        "each user needs); then their mean over seeds with the 95 % interval named above "
        "(Jain's indices lie in [0, 1]; the max deficit is signed). Per instant in each run's "
        "`<scheduler>/fairness_summary.parquet`.",
        "",
        headline_table(table, fair),
    ]
    if len(paired) and set(fair) & set(paired["metric"]):
        ref = str(paired["reference"].iloc[0])
        lines += ["", f"Paired differences against {ref}:", "", paired_table(paired, fair)]
    lines += [""] + [f"![{m}](sweep_{m}.png)" for m in figures if m in FAIRNESS_METRICS]
    return lines


#: Per-queue metrics of a sweep whose runs have a queue tree (:func:`queue_aggregate`): column of
#: :func:`fairsim.scenario.reporting.run_report.queue_frames` -> (header, range, decimals; shares
#: as percentages).
QUEUE_METRICS: dict[str, tuple[str, tuple[float, float], int]] = {
    "jobs_completed": ("jobs completed", (0.0, math.inf), 0),
    "mean_jct_s": ("mean JCT (s)", (0.0, math.inf), 0),
    "p95_jct_s": ("p95 JCT (s)", (0.0, math.inf), 0),
    "mean_queueing_s": ("mean queueing (s)", (0.0, math.inf), 0),
    "p95_queueing_s": ("p95 queueing (s)", (0.0, math.inf), 0),
    "dominant_share": ("dominant share (%)", (0.0, 1.0), 1),
    "reference_dominant_share": ("H-DRF share (%)", (0.0, 1.0), 1),
    "distance": ("distance from H-DRF (%)", (0.0, 1.0), 1),
    "holds_nothing_s": ("holds nothing (s)", (0.0, math.inf), 0),
}


def queue_aggregate(root: Path, runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per grid point, scheduler, queue and metric, the mean over seeds with its 95 % interval
    (:func:`bounded_interval`), for a sweep whose runs have a queue tree; empty otherwise.

    Reads each finished run's per-queue rows
    (:func:`fairsim.scenario.reporting.run_report.queue_frames`: ``queues.parquet`` and the time
    means of ``fairness_queues.parquet``); the metrics are :data:`QUEUE_METRICS` and each
    resource's share of the pool (``share_<resource>``).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`aggregate` with ``queue`` after ``scheduler``.
    """
    from fairsim.scenario.reporting.run_report import queue_frames

    grid = grid_columns(runs)
    keys = [*grid, "scheduler", "queue"]
    rows: list[dict[str, Any]] = []
    for _, run in runs[runs["status"] == "ok"].iterrows():
        sched = str(run["scheduler"])
        frames = queue_frames(root / str(run["run_id"]), [sched], "sweep-report")
        for queue, q in frames.get(sched, pd.DataFrame()).iterrows():
            rows.append({**{k: run[k] for k in grid}, "scheduler": sched, "queue": queue, **q})
    cols = [*keys, "metric", "n", "mean", "std", "ci95_low", "ci95_high", "ci95_half"]
    cols.append("ci_method")
    if not rows:
        return pd.DataFrame(columns=cols)
    per_run = pd.DataFrame(rows)
    metrics = [m for m in per_run.columns if m.startswith("share_")]
    metrics += [m for m in QUEUE_METRICS if m in per_run.columns]
    out = []
    for point, g in per_run.groupby(keys, sort=False, dropna=False):
        for metric in metrics:
            bounds = QUEUE_METRICS[metric][1] if metric in QUEUE_METRICS else (0.0, 1.0)
            values = pd.to_numeric(g[metric], errors="coerce").to_numpy(dtype=np.float64)
            out.append(_stat_row(keys, point, metric, values, bounds, level))
    frame = pd.DataFrame(out, columns=cols)
    frame["n"] = frame["n"].astype("int64")
    return frame


def queue_section(table: pd.DataFrame) -> list[str]:
    """The report's "Queues" section (a sweep with a queue tree): per grid point, scheduler and
    queue, the mean over seeds [95 % interval] of each per-queue metric; empty without one."""
    if not len(table):
        return []
    point = [c for c in point_columns_of(table) if c != "queue"]
    shares = [m for m in dict.fromkeys(table["metric"]) if str(m).startswith("share_")]
    metrics = [*shares, *(m for m in QUEUE_METRICS if m in set(table["metric"]))]
    names = {m: f"{m[6:]} share (%)" for m in shares}
    names.update({m: QUEUE_METRICS[m][0] for m in QUEUE_METRICS})
    wide = table.set_index([*point, "scheduler", "queue", "metric"])
    head = [*point, "scheduler", "queue", "seeds", *(names[m] for m in metrics)]
    lines = [
        "",
        "## Queues",
        "",
        "Runs with a queue tree: per queue, JCT over its completed jobs, queueing delay over its "
        "started tasks, and (with `collect.fairness`) the time means over the sampled instants "
        "of its share of each resource of the pool (its part of the utilisation), its dominant "
        "share, exact H-DRF's, the distance `|H-DRF - share|` and the time it held nothing "
        "while its tasks waited (each run's `<scheduler>/queues.parquet` and "
        "`fairness_queues.parquet`); mean over seeds [95 % interval as above]. Interior queues "
        "have only the share columns. In `sweep_queues.parquet`.",
        "",
    ]
    rows = []
    keys = list(
        dict.fromkeys(
            tuple(r) for r in table[[*point, "scheduler", "queue"]].itertuples(index=False)
        )
    )
    for key in keys:
        cells = [str(k) for k in key]
        cells.append(str(int(wide.loc[(*key, metrics[0]), "n"])))
        for m in metrics:
            row = wide.loc[(*key, m)]
            pct = m in shares or QUEUE_METRICS.get(m, ("", (0, 0), 0))[1][1] == 1.0
            decimals = 1 if pct else QUEUE_METRICS[m][2]
            cells.append(
                "—"
                if not np.isfinite(row["mean"])
                else _interval(row, "mean", 100.0 if pct else 1.0, decimals)
            )
        rows.append(cells)
    return [*lines, *markdown.table(head, rows)[:-1]]


def sweep_report(out: str | Path) -> list[Path]:
    """Aggregate a finished (or partial) sweep folder; returns the files written.

    Raises
    ------
    ConfigError
        If ``OUT/runs.parquet`` does not exist.
    fairsim.errors.ResultError
        ``sweep-report: <file> is damaged: ...``: ``runs.parquet`` that is not a readable Parquet
        table or lacks a column of :data:`RUNS_COLUMNS`, or a run's ``jobs.parquet`` or
        ``summary.json`` that cannot be read (:mod:`~fairsim.scenario.reporting.result_files`).
    """
    return sweep_report_tables(out)[0]


def sweep_report_tables(out: str | Path) -> tuple[list[Path], str]:
    """:func:`sweep_report`, also returning the headline table (Markdown) for the CLI to print.

    Raises
    ------
    ConfigError, fairsim.errors.ResultError
        As :func:`sweep_report`.
    """
    root = Path(out)
    runs_path = root / "runs.parquet"
    if not runs_path.is_file():
        raise ConfigError(f"sweep-report: {str(runs_path)!r} does not exist (run fairsim sweep)")
    frame = read_result_table(runs_path, RUNS_COLUMNS, "sweep-report", all_columns=True)
    runs = with_fairness(root, with_common_jct(root, frame))
    table = aggregate(runs)
    paired = paired_differences(runs)
    queues = queue_aggregate(root, runs)
    # everything is computed before anything is written: a report that fails leaves the
    # folder's earlier files as they were, and the new ones are put in place together
    tables = {root / "sweep_report.parquet": table, root / "sweep_paired.parquet": paired}
    if len(queues):  # only a sweep with a queue tree: the others' files stay as they were
        tables[root / "sweep_queues.parquet"] = queues
    headline = headline_table(table) if len(table) else "(no finished run)"
    figures = {
        root / f"sweep_{metric}.png": metric_figure(table, metric, paired)
        for metric in (figure_metrics(table) if len(table) else [])
    }
    report = (
        report_markdown(root.name, runs, table, paired)
        + "".join(f"{line}\n" for line in queue_section(queues))
        if len(table)
        else f"# Sweep {root.name}\n\nNo finished run.\n"
    )
    written = [*tables, *figures, root / "report.md"]
    with atomic_paths(written) as staged:
        where = dict(zip(written, staged, strict=True))
        for path, frame in tables.items():
            write_table(pa.Table.from_pandas(frame, preserve_index=False), where[path])
        for path, fig in figures.items():
            save_figure(fig, where[path])
        write_text(where[root / "report.md"], report)
    return written, headline
