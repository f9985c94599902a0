"""The run report's preemption section: evictions, lost work and preemption loops of the
schedulers that preempt (docs/preemption.md); nothing for a run without one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.scenario.reporting.plotting import decimate

_LABELS = {"cpu": "CPU", "mem": "memory", "gpu": "GPU"}


def _count(n: int, noun: str) -> str:
    """``"1 task"``, ``"2,000 tasks"``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def preempting(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The schedulers whose ``summary.json`` has ``preemption`` (they preempt), in order."""
    return [n for n, s in summaries.items() if s.get("preemption") is not None]


def evictions_figure(out: Path, schedulers: list[str], resources: list[str]) -> Figure:
    """Evictions so far (top panel) and work lost so far per resource (one panel each, in
    resource-hours of the pool's units) over time, one line per scheduler that preempts, from
    each ``<scheduler>/evictions.parquet`` (each line decimated:
    :func:`~fairsim.scenario.reporting.plotting.decimate`).

    Parameters
    ----------
    out : Path
        Run folder.
    schedulers : list of str
        Schedulers that preempt (:func:`preempting`).
    resources : list of str
    """
    fig = Figure(figsize=(9, 2.2 + 1.8 * (1 + len(resources))))
    axes = np.atleast_1d(fig.subplots(1 + len(resources), 1, sharex=True))
    for name in schedulers:
        ev = pd.read_parquet(out / name / "evictions.parquet")
        hours = ev["time_s"].to_numpy() / 3600.0
        t, v = decimate(hours, ev["evictions"].to_numpy(dtype=np.float64))
        axes[0].plot(t, v, label=name, linewidth=0.9)
        for ax, res in zip(axes[1:], resources, strict=True):
            t, v = decimate(hours, ev[f"work_lost_{res}"].to_numpy() / 3600.0)
            ax.plot(t, v, label=name, linewidth=0.9)
    axes[0].set_ylabel("evictions so far")
    for ax, res in zip(axes[1:], resources, strict=True):
        ax.set_ylabel(f"{_LABELS.get(res, res)} lost (h)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(loc="upper left", fontsize=8)
    fig.suptitle("Evictions and work lost over time")
    return fig


def preemption_lines(summaries: dict[str, dict[str, Any]], figure: str | None) -> list[str]:
    """The report's preemption paragraph, a line per scheduler that preempts; empty without
    one.

    Parameters
    ----------
    summaries : dict
        ``{scheduler: summary}`` as ``summary.json``.
    figure : str, optional
        File name of :func:`evictions_figure`'s figure in the run folder, shown after the lines.

    Returns
    -------
    list of str
        Markdown lines: per scheduler its evictions and tasks evicted, the seconds of runs
        lost, the work lost per resource (resource-seconds in the pool's units, and the share
        of the resource-seconds used), and the preemption loops found by the run's rule.
    """
    names = preempting(summaries)
    if not names:
        return []
    lines = [
        "",
        "Preemption (docs/preemption.md): an evicted task waits again and restarts from "
        "scratch; its evicted run never completes, and the work it did is lost (the run's "
        "length times the task's demand, in resource-seconds of the pool's units; per task in "
        "`tasks.parquet`'s `evictions`, over time in `<scheduler>/evictions.parquet`):",
        "",
    ]
    for name in names:
        p, loops = summaries[name]["preemption"], summaries[name].get("preemption_loops") or {}
        share = p.get("work_lost_fraction") or {}
        lost = "; ".join(
            f"{_LABELS.get(r, r)} {x:,.1f}"
            + (
                ""
                if share.get(r) is None
                else f" ({100 * share[r]:.2f} % of the {_LABELS.get(r, r)} used)"
            )
            for r, x in p["work_lost"].items()
        )
        rule = f"{loops.get('evictions')} evictions of a task within {loops.get('window_s', 0):g} s"
        if loops.get("count"):
            examples = ", ".join(f"job {j} task {i}" for j, i in loops.get("examples", []))
            found = (
                f"**{_count(loops['count'], 'task')} in a preemption loop** ({rule}), the first "
                "found at "
                f"{loops['first_s']:,.0f} s (e.g. {examples})"
            )
        else:
            found = f"no preemption loop ({rule})"
        lines.append(
            f"- {name}: {_count(p['evictions'], 'eviction')} of "
            f"{_count(p['tasks_evicted'], 'task')}, "
            f"{p['run_s_lost']:,.0f} s of runs lost; work lost: {lost}; {found}"
        )
    if figure is not None:
        lines += ["", f"![evictions and work lost]({figure})"]
    return lines
