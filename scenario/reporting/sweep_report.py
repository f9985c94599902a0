"""``fairsim sweep-report OUT``: means and 95 % confidence intervals across seeds.

Reads ``OUT/runs.parquet`` (see :mod:`fairsim.scenario.sweep`), keeps the runs with
``status == "ok"`` and, per grid point and scheduler, summarises each metric over the seeds:

``mean``, ``std`` (sample standard deviation, ``ddof=1``), ``n`` (seeds), and the two-sided 95 %
Student-t interval ``mean ± t_{0.975, n-1} · std / sqrt(n)`` (``ci95_low``, ``ci95_high``,
``ci95_half``; NaN when ``n < 2``).

Writes ``OUT/sweep_report.parquet`` (tidy: one row per grid point, scheduler and metric) and one
figure per metric, ``OUT/sweep_<metric>.png``, with error bars of the 95 % interval.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from scipy import stats

from fairsim.errors import ConfigError
from fairsim.scenario.reporting.plotting import save_figure, scheduler_label
from fairsim.simulator.results import write_table

#: Metric column of ``runs.parquet`` → (axis label with unit, scale applied for plotting).
REPORT_METRICS: dict[str, tuple[str, float]] = {
    "util_cpu": ("Mean CPU utilisation (%)", 100.0),
    "util_mem": ("Mean memory utilisation (%)", 100.0),
    "mean_jct_s": ("Mean job completion time (s)", 1.0),
    "completion_ratio": ("Task completion ratio (%)", 100.0),
}
#: Columns of runs.parquet that are not grid paths.


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, int]:
    """Mean, sample standard deviation, half-width of the two-sided Student-t interval, n.

    NaN values are ignored; the half-width is NaN when fewer than two values remain.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    n = len(v)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(v.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    sd = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n))
    return mean, sd, half, n


def grid_columns(runs: pd.DataFrame) -> list[str]:
    """The grid-path columns of a ``runs.parquet`` table, in their order: the columns between
    ``run_id`` and ``seed`` (the table's layout, :func:`fairsim.scenario.sweep.runs_frame`)."""
    cols = list(runs.columns)
    return cols[cols.index("run_id") + 1 : cols.index("seed")]


def aggregate(runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Tidy summary across seeds: one row per grid point, scheduler and metric.

    Columns: the grid paths, ``scheduler``, ``metric``, ``n``, ``mean``, ``std``, ``ci95_low``,
    ``ci95_high``, ``ci95_half``.
    """
    grid = grid_columns(runs)
    ok = runs[runs["status"] == "ok"]
    keys = [*grid, "scheduler"]
    rows = []
    for point, g in ok.groupby(keys, sort=False, dropna=False):
        point = point if isinstance(point, tuple) else (point,)
        for metric in REPORT_METRICS:
            mean, sd, half, n = t_interval(g[metric].to_numpy(dtype=np.float64, na_value=np.nan))
            rows.append(
                {
                    **dict(zip(keys, point, strict=True)),
                    "metric": metric,
                    "n": n,
                    "mean": mean,
                    "std": sd,
                    "ci95_low": mean - half,
                    "ci95_high": mean + half,
                    "ci95_half": half,
                }
            )
    cols = [*keys, "metric", "n", "mean", "std", "ci95_low", "ci95_high", "ci95_half"]
    out = pd.DataFrame(rows, columns=cols)
    out["n"] = out["n"].astype("int64")
    return out


def _point_label(row: pd.Series, paths: list[str]) -> str:
    return ", ".join(f"{p}={row[p]}" for p in paths) if paths else "all"


def metric_figure(table: pd.DataFrame, metric: str) -> Figure:
    """Error-bar figure of one metric: x = grid point (numeric when one numeric path varies),
    one series per scheduler, bars = 95 % t-interval."""
    label, scale = REPORT_METRICS[metric]
    grid = [c for c in table.columns if c not in ("scheduler", "metric", "n", "mean", "std")]
    grid = [c for c in grid if not c.startswith("ci95_")]
    d = table[table["metric"] == metric]
    x_paths = [p for p in grid if p != "schedulers"]
    numeric = len(x_paths) == 1 and pd.api.types.is_numeric_dtype(d[x_paths[0]])
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    if numeric:
        xs_all: list[object] = sorted(d[x_paths[0]].unique())
    else:
        xs_all = list(dict.fromkeys(_point_label(r, x_paths) for _, r in d.iterrows()))
    schedulers = list(dict.fromkeys(d["scheduler"]))
    by_scheduler = not numeric and not x_paths  # only `schedulers` varies: one x per scheduler
    if by_scheduler:
        xs_all = [scheduler_label(name) for name in schedulers]
    width = 0.8 / max(1, len(schedulers))
    for k, sched in enumerate(schedulers):
        s = d[d["scheduler"] == sched]
        if numeric:
            x = s[x_paths[0]].to_numpy(dtype=float)
        else:
            pos = {lab: i for i, lab in enumerate(xs_all)}
            offset = 0.0 if by_scheduler else (k - (len(schedulers) - 1) / 2) * width
            x = np.array(
                [
                    (k if by_scheduler else pos[_point_label(r, x_paths)]) + offset
                    for _, r in s.iterrows()
                ]
            )
        y = s["mean"].to_numpy(dtype=float) * scale
        err = np.nan_to_num(s["ci95_half"].to_numpy(dtype=float) * scale)
        order = np.argsort(x)
        ax.errorbar(
            x[order],
            y[order],
            yerr=err[order],
            marker="o",
            capsize=4,
            linestyle="-" if numeric else "none",
            label=scheduler_label(sched),
        )
    if numeric:
        ax.set_xlabel(
            "Number of servers" if x_paths[0] == "cluster.servers" else f"{x_paths[0]} (value)"
        )
        lo, hi = float(d[x_paths[0]].min()), float(d[x_paths[0]].max())
        if lo > 0 and hi / lo >= 10:
            ax.set_xscale("log")
    else:
        ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all], rotation=20, ha="right")
        ax.set_xlabel("Scheduler" if by_scheduler else "Grid point")
    ax.set_ylabel(label)
    n = int(d["n"].max()) if len(d) else 0
    ax.set_title(f"{label}: mean over seeds (n ≤ {n}), 95 % t-interval", fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def sweep_report(out: str | Path) -> list[Path]:
    """Aggregate a finished (or partial) sweep folder; returns the files written.

    Raises
    ------
    ConfigError
        If ``OUT/runs.parquet`` does not exist.
    """
    root = Path(out)
    runs_path = root / "runs.parquet"
    if not runs_path.is_file():
        raise ConfigError(f"sweep-report: {str(runs_path)!r} does not exist (run fairsim sweep)")
    runs = pd.read_parquet(runs_path)
    table = aggregate(runs)
    written = [root / "sweep_report.parquet"]
    write_table(pa.Table.from_pandas(table, preserve_index=False), written[0])
    if len(table):
        for metric in REPORT_METRICS:
            written.append(save_figure(metric_figure(table, metric), root / f"sweep_{metric}.png"))
    return written
