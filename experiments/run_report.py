"""Figures and ``report.md`` for a generic ``fairsim run`` output folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from experiments.figures import save_figure
from simulator.atomic import write_text
from simulator.config import RunConfig


def utilization_figure(out: Path, schedulers: list[str]) -> Figure:
    """CPU and memory utilisation over time of each scheduler (two panels)."""
    fig = Figure(figsize=(9, 5.5))
    axes = fig.subplots(2, 1, sharex=True)
    for name in schedulers:
        u = pd.read_parquet(out / name / "utilization.parquet")
        for ax, res in zip(axes, ("cpu", "mem"), strict=True):
            ax.plot(u["time_s"] / 3600.0, 100.0 * u[res], label=name, linewidth=0.9)
    axes[0].set_ylabel("CPU utilisation (%)")
    axes[1].set_ylabel("memory utilisation (%)")
    axes[1].set_xlabel("trace time (h)")
    axes[0].legend(loc="lower right", fontsize=8)
    for ax in axes:
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    fig.suptitle("Utilisation over time")
    return fig


def write_run_report(out: Path, cfg: RunConfig, summaries: dict[str, dict[str, Any]]) -> Path:
    """Write ``utilization.png`` and a ``report.md`` with one row per scheduler."""
    save_figure(utilization_figure(out, list(summaries)), out / "utilization.png")
    lines = [
        f"# {cfg.name}",
        "",
        f"Config hash `{cfg.config_hash()}`, seed {cfg.seed}, trace `{cfg.trace.format}`, "
        f"{next(iter(summaries.values())).get('servers')} servers ({cfg.cluster.source}).",
        "",
        "| scheduler | tasks | completed | completion ratio | mean CPU util. | mean mem util. "
        "| jobs completed | mean JCT (s) | wall (s) | tasks/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summaries.items():
        mu = s["mean_utilization"]
        jct = s.get("mean_jct_s")
        lines.append(
            f"| {name} | {s['tasks']} | {s['tasks_completed']} | {s['completion_ratio']:.3f} "
            f"| {100 * mu['cpu']:.1f} % | {100 * mu['mem']:.1f} % | {s['jobs_completed']} "
            f"| {'' if jct is None else f'{jct:.0f}'} | {s['wall_s']:.1f} "
            f"| {s['tasks_per_s']:.0f} |"
        )
    skipped = next(iter(summaries.values())).get("skipped") or {}
    if skipped:
        lines += ["", "Tasks not simulated, by reason:", ""]
        lines += [f"- {reason}: {n}" for reason, n in skipped.items()]
    lines += ["", "![utilisation](utilization.png)", ""]
    return write_text(out / "report.md", "\n".join(lines))
