"""Figures and ``report.md`` of ``fairsim compare`` (:func:`fairsim.scenario.compare.compare`).

``jct_cdf.png``: the JCT CDF of the common jobs, one curve per row, on the axis of every JCT plot
(:func:`~fairsim.scenario.reporting.plotting.set_jct_axis`: logarithmic over 1.5 decades or
more, else linear); ``jct_mean.png``: mean JCT per row
with the paired 95 % interval of its difference to the first row; ``utilization.png``: mean
utilisation per resource and row, on an axis from 0 to 100 %.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from fairsim.atomic import write_text
from fairsim.scenario.config import value_text as text
from fairsim.scenario.reporting.plotting import save_figure, set_jct_axis
from fairsim.scenario.reporting.run_report import util_ylim_top


def _fmt(x: Any, spec: str) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def jct_cdf_figure(c: Any) -> Figure | None:
    """CDF of the common jobs' JCT, one step curve per row; None without common jobs."""
    if c.common_jobs == 0:
        return None
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    for label, v in c.jct.items():
        x = np.sort(v.to_numpy())
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=label)
    log = set_jct_axis(ax, np.concatenate([v.to_numpy(dtype=float) for v in c.jct.values()]))
    ax.set_xlabel("job completion time (s, log scale)" if log else "job completion time (s)")
    ax.set_ylabel("fraction of common jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(
        f"JCT CDF of the {c.common_jobs:,} jobs completed under every row", fontsize="medium"
    )
    return fig


def jct_mean_figure(c: Any) -> Figure:
    """Mean JCT of the common jobs per row; error bars: the paired 95 % interval of the
    difference to the first row, drawn around the row's mean (none on rows not paired with
    it)."""
    t = c.table
    fig = Figure(figsize=(max(4.5, 1.2 * len(t) + 2), 4))
    ax = fig.subplots()
    x = np.arange(len(t))
    mean = t["jct_mean_s"].to_numpy(dtype=float)
    ax.bar(x, mean, color="tab:blue", alpha=0.8)
    any_paired = bool(t["paired"].iloc[1:].any())
    if any_paired:
        base = mean[0]
        lo = base + t["djct_low_s"].to_numpy(dtype=float)
        hi = base + t["djct_high_s"].to_numpy(dtype=float)
        ok = ~np.isnan(lo)
        ax.errorbar(
            x[ok],
            mean[ok],
            yerr=[mean[ok] - lo[ok], hi[ok] - mean[ok]],
            fmt="none",
            ecolor="black",
            capsize=4,
        )
    ax.set_xticks(x, list(t.index), rotation=20, ha="right")
    ax.set_ylabel("mean JCT of the common jobs (s)")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(
        "Mean JCT"
        + (
            f" with paired 95 % intervals vs {t.index[0]}"
            + ("" if c.paired else " (on the rows paired with it)")
            if any_paired
            else f" (no row is paired with {t.index[0]}: no interval)"
        ),
        fontsize="medium",
    )
    return fig


def utilization_figure(c: Any) -> Figure:
    """Mean utilisation per resource and row, axis 0-100 % (higher when a row over-commits:
    :func:`~fairsim.scenario.reporting.run_report.util_ylim_top`)."""
    t = c.table
    fig = Figure(figsize=(max(4.5, 1.2 * len(t) + 2), 4))
    ax = fig.subplots()
    x = np.arange(len(t))
    width = 0.8 / max(1, len(c.resources))
    peak = float("nan")
    for i, res in enumerate(c.resources):
        heights = 100 * t[f"{res}_util"].to_numpy(dtype=float)
        peak = float(np.nanmax([peak, *heights]))
        ax.bar(x + (i - (len(c.resources) - 1) / 2) * width, heights, width, label=res)
    ax.set_xticks(x, list(t.index), rotation=20, ha="right")
    ax.set_ylabel("mean utilisation (% of the pool's capacity)")
    ax.set_ylim(0, util_ylim_top(peak, floor=100.0))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Mean utilisation over the window", fontsize="medium")
    return fig


def _pool(config: dict[str, Any]) -> str:
    """A run's ``cluster`` for people: its keys that are set (``servers 500, source table-i``)."""
    cluster = config.get("cluster") or {}
    return ", ".join(f"{k} {text(v)}" for k, v in cluster.items() if v is not None) or "default"


def what_is_compared(c: Any) -> list[str]:
    """The report's paragraphs on what the rows compare: the rows and their folders, the runs
    and every config value that differs between them, what they share, scheduler parameters
    that differ between rows of one scheduler, and which rows are paired with the reference."""
    t = c.table
    ref = t.index[0]
    first = c.rows[0]
    lines = [
        "Rows: " + ", ".join(f"`{k}` ({r.folder})" for k, r in zip(t.index, c.rows, strict=True)),
        "",
    ]
    run_keys = [k for k in c.differences if not k.startswith("schedulers.")]
    sched_keys = [k for k in c.differences if k.startswith("schedulers.")]
    if len(c.runs) > 1:
        if run_keys:
            lines += [
                "The runs differ in " + ", ".join(f"`{k}`" for k in run_keys) + ":",
                "",
                "| run | folder | " + " | ".join(f"`{k}`" for k in run_keys) + " |",
                "|---|---|" + "---|" * len(run_keys),
            ]
            lines += [
                f"| `{label}` | {folder} | "
                + " | ".join(text(c.differences[k][label]) for k in run_keys)
                + " |"
                for label, folder in c.runs.items()
            ]
            lines.append("")
        else:
            lines += [
                "The runs' configs do not differ (but for their names and schedulers): "
                + ", ".join(f"`{label}` ({folder})" for label, folder in c.runs.items())
                + ".",
                "",
            ]
    trace = first.config.get("trace") or {}
    shared = [
        f"the trace (`{trace.get('format')}`" + (f", `{c.trace}`" if c.trace else "") + ")",
        f"the window ({_fmt(first.summary.get('start_s'), ',g')} s to "
        f"{_fmt(first.summary.get('horizon_s'), ',g')} s)",
    ]
    if "seed" not in run_keys:
        shared.append(f"the seed ({c.seeds[0]})")
    if not any(k.startswith("cluster.") for k in run_keys):
        shared.append(f"the pool (`cluster`: {_pool(first.config)})")
    lines += [("Same in every run: " if len(c.runs) > 1 else "The run: ") + ", ".join(shared)]
    lines.append("")
    if sched_keys:
        lines += [
            "Scheduler parameters that differ between rows of one scheduler: "
            + "; ".join(
                f"`{k.removeprefix('schedulers.')}` "
                + ", ".join(f"{text(v)} (`{row}`)" for row, v in c.differences[k].items())
                for k in sched_keys
            )
            + ".",
            "",
        ]
    paired = [k for k in t.index[1:] if t.loc[k, "paired"]]
    apart = [k for k in t.index[1:] if not t.loc[k, "paired"]]
    how = (
        f"ΔJCT is the mean over the common jobs of (JCT - JCT under `{ref}`), with a 95 % "
        "t-interval over the per-job differences (`scipy.stats.t.interval`, n - 1 degrees of "
        "freedom)"
    )
    if not apart:
        lines.append(
            f"Paired: every row's run has config seed {c.seeds[0]}, the trace window and the pool "
            f"of `{ref}` (`cluster`: {_pool(first.config)}), so the rows replay the same jobs on "
            f"the same pool. {how}."
        )
    if "manipulation" in c.differences:
        lines += [
            "",
            "The runs' manipulations (`fairsim strategy`, their `manipulation.json`) change what "
            "the scheduler sees of one user's jobs (a declared demand, aliases, placeholders), "
            "not which jobs: every job keeps its id, so the rows are compared job by job. A "
            "`hoard` run's placeholder jobs (ids below 0) are never common jobs; a `split` "
            "user's aliases count as users of their own in the per-user JCT spread.",
        ]
    else:
        why = sorted({key for keys in c.unpaired.values() for key in keys})
        lines.append(
            (
                f"Paired with `{ref}` (same seed, trace window and pool): "
                + ", ".join(f"`{k}`" for k in paired)
                + f". {how}. "
                if paired
                else ""
            )
            + "Not paired: "
            + ", ".join(f"`{k}`" for k in apart)
            + f", whose runs differ from `{ref}`'s in "
            + ", ".join(f"`{k}`" for k in why)
            + " (another workload or pool); their ΔJCT is the difference in mean JCT on the "
            "common jobs, without an interval."
        )
    return [*lines, ""]


def write_compare_report(c: Any, out: Path) -> Path:
    """Write the figures and ``report.md`` of a comparison into ``out``; returns the report."""
    fig = jct_cdf_figure(c)
    if fig is not None:
        save_figure(fig, out / "jct_cdf.png")
    save_figure(jct_mean_figure(c), out / "jct_mean.png")
    save_figure(utilization_figure(c), out / "utilization.png")
    t = c.table
    util_cols = " | ".join(f"mean {r} util." for r in c.resources)
    lines = [
        "# Comparison",
        "",
        *what_is_compared(c),
        f"Common job set: the {c.common_jobs:,} jobs completed under every row, matched by "
        f"job id, of {c.jobs:,} jobs in the window; excluded per row (completed there but not "
        "under every row): "
        + ", ".join(f"{k} {v:,}" for k, v in c.excluded_jobs.items())
        + ". JCT, queueing delay (`start_s - submit_s` of the common jobs' tasks), slowdown "
        "(JCT / the job's longest task run time) and per-user JCT spread (per-user mean JCT "
        "over the common jobs: max/min, coefficient of variation) are on that set; utilisation "
        "(time average over the window) and completion ratio are each run's own.",
        "",
        f"| row | {util_cols} | completion ratio | common jobs | JCT mean (s) | JCT p50 (s) "
        "| JCT p95 (s) | JCT p99 (s) | queueing delay mean (s) | queueing delay p95 (s) "
        "| mean slowdown | per-user JCT max/min | per-user JCT CV | ΔJCT (s) | 95 % CI (s) |",
        "|---|" + "---|" * len(c.resources) + "---|" * 13,
    ]
    for label, r in t.iterrows():
        utils = " | ".join(f"{_fmt(100 * r[f'{res}_util'], '.1f')} %" for res in c.resources)
        ci = (
            f"[{_fmt(r['djct_low_s'], ',.1f')}, {_fmt(r['djct_high_s'], ',.1f')}]"
            if r["paired"] and not np.isnan(r["djct_low_s"])
            else "—"
        )
        lines.append(
            f"| {label} | {utils} | {_fmt(r['completion_ratio'], '.4f')} "
            f"| {int(r['jobs_common']):,} | {_fmt(r['jct_mean_s'], ',.1f')} "
            f"| {_fmt(r['jct_p50_s'], ',.1f')} | {_fmt(r['jct_p95_s'], ',.1f')} "
            f"| {_fmt(r['jct_p99_s'], ',.1f')} | {_fmt(r['delay_mean_s'], ',.1f')} "
            f"| {_fmt(r['delay_p95_s'], ',.1f')} | {_fmt(r['slowdown_mean'], '.2f')} "
            f"| {_fmt(r['user_jct_max_over_min'], '.2f')} | {_fmt(r['user_jct_cv'], '.2f')} "
            f"| {_fmt(r['djct_mean_s'], ',.1f')} | {ci} |"
        )
    lines += ["", "![JCT CDF](jct_cdf.png)" if fig is not None else "No common job: no CDF."]
    lines += ["", "![mean JCT](jct_mean.png)", "", "![utilisation](utilization.png)", ""]
    return write_text(out / "report.md", "\n".join(lines))
