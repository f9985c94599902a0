"""Figures and ``report.md`` for a generic ``fairsim run`` output folder (any set of resources)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.figures import save_figure
from simulator.atomic import write_text
from simulator.config import RunConfig

_LABELS = {"cpu": "CPU", "mem": "memory", "gpu": "GPU"}


def _label(resource: str) -> str:
    return _LABELS.get(resource, resource)


def utilization_figure(out: Path, schedulers: list[str], resources: list[str]) -> Figure:
    """Utilisation over time of each scheduler, one panel per resource.

    Parameters
    ----------
    out : Path
        Run folder with ``<scheduler>/utilization.parquet``.
    schedulers : list of str
    resources : list of str
        Resource columns, e.g. ``["cpu", "mem", "gpu"]``.
    """
    fig = Figure(figsize=(9, 2.2 + 1.8 * len(resources)))
    axes = np.atleast_1d(fig.subplots(len(resources), 1, sharex=True))
    for name in schedulers:
        u = pd.read_parquet(out / name / "utilization.parquet")
        for ax, res in zip(axes, resources, strict=True):
            ax.plot(u["time_s"] / 3600.0, 100.0 * u[res], label=name, linewidth=0.9)
    for ax, res in zip(axes, resources, strict=True):
        ax.set_ylabel(f"{_label(res)} utilisation (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle("Utilisation over time")
    return fig


def jct_figure(out: Path, schedulers: list[str]) -> Figure | None:
    """CDF of job completion times (JCT) of each scheduler; None if no job completed."""
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    drawn = False
    for name in schedulers:
        jct = pd.read_parquet(out / name / "jobs.parquet")["completion_time_s"].dropna()
        if len(jct) == 0:
            continue
        x = np.sort(jct.to_numpy())
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=name)
        drawn = True
    if not drawn:
        return None
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of completed jobs")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Job completion time CDF")
    return fig


def write_run_report(out: Path, cfg: RunConfig, summaries: dict[str, dict[str, Any]]) -> Path:
    """Write ``utilization.png``, ``jct_cdf.png`` and a ``report.md`` with a row per scheduler."""
    first = next(iter(summaries.values()))
    resources = list(first["mean_utilization"])
    save_figure(utilization_figure(out, list(summaries), resources), out / "utilization.png")
    jct = jct_figure(out, list(summaries))
    if jct is not None:
        save_figure(jct, out / "jct_cdf.png")
    util_cols = " | ".join(f"mean {_label(r)} util." for r in resources)
    lines = [
        f"# {cfg.name}",
        "",
        f"Config hash `{cfg.config_hash()}`, seed {cfg.seed}, trace `{cfg.trace.format}`, "
        f"{first.get('servers')} servers ({cfg.cluster.source}).",
        "",
        f"| scheduler | tasks | completed | completion ratio | {util_cols} "
        "| jobs completed | mean JCT (s) | wall (s) | tasks/s |",
        "|---|---|---|---|" + "---|" * len(resources) + "---|---|---|---|",
    ]
    for name, s in summaries.items():
        mu = s["mean_utilization"]
        jct_s = s.get("mean_jct_s")
        utils = " | ".join(f"{100 * mu[r]:.1f} %" for r in resources)
        lines.append(
            f"| {name} | {s['tasks']} | {s['tasks_completed']} | {s['completion_ratio']:.3f} "
            f"| {utils} | {s['jobs_completed']} "
            f"| {'' if jct_s is None else f'{jct_s:.0f}'} | {s['wall_s']:.1f} "
            f"| {s['tasks_per_s']:.0f} |"
        )
    skipped = first.get("skipped") or {}
    if skipped:
        lines += ["", "Tasks not simulated, by reason:", ""]
        lines += [f"- {reason}: {n}" for reason, n in skipped.items()]
    gates = {n: s["jobs_gate"] for n, s in summaries.items() if s.get("jobs_gate")}
    if gates:
        lines += ["", "Complex jobs (DAG parents, repetitions, job queue), per scheduler:", ""]
        for n, g in gates.items():
            held = ", ".join(f"{k}: {v}" for k, v in g.get("held", {}).items()) or "none"
            dropped = ", ".join(f"{k}: {v}" for k, v in g.get("dropped", {}).items()) or "none"
            lines.append(f"- {n}: held at the end: {held}; dropped: {dropped}")
    lines += ["", "![utilisation](utilization.png)", ""]
    if jct is not None:
        lines += ["![JCT CDF](jct_cdf.png)", ""]
    return write_text(out / "report.md", "\n".join(lines))
