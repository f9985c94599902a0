"""Figures 1-3 of Bonald and Roberts, Section 4, from the reproduction's per-point summary.

Lines are the Markov chain (deterministic); markers are the simulations' means over seeds with
error bars for their 95 % interval (Student t over seeds; with one seed, the run's own
batch-means CI). Input: :func:`fairsim.experiments.bonald_roberts.numbers.seed_summary`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fairsim.experiments.bonald_roberts.numbers import curve
from fairsim.experiments.bonald_roberts.paper import PACKET_ALGORITHM
from fairsim.scenario.reporting.plotting import save_figure
from fairsim.schedulers.flows.markov_chain import ALLOCATIONS

_STYLE = {"drf": "--", "pf": ":", "bmf": "-"}
_COLORS = {1: "tab:blue", 2: "tab:orange", 3: "tab:green"}
#: Upper end of the y axis (service rates are at most 1 with unit capacities and mean work 1).
_YMAX = 1.02
XLABEL = "load of the most loaded resource (fraction of its capacity)"


def _markers(ax: Axes, pts: pd.DataFrame, fmt: str, ms: int, label: str | None) -> None:
    """Means over seeds with their 95 % interval as error bars, one colour per class."""
    for cls_k, g in pts.groupby("class"):
        lo = np.where(np.isfinite(g.ci_low), g.ci_low, g.gamma)
        hi = np.where(np.isfinite(g.ci_high), np.minimum(g.ci_high, 2 * _YMAX), g.gamma)
        ax.errorbar(
            g.load,
            g.gamma,
            yerr=[g.gamma - lo, hi - g.gamma],
            fmt=fmt,
            ms=ms,
            color=_COLORS.get(int(str(cls_k)), "k"),
            alpha=0.8,
            capsize=2,
            label=None if label is None else f"{label} class {cls_k}",
        )


def _seeds_note(pts: pd.DataFrame) -> str:
    n = int(pts.seeds.max()) if len(pts) else 0
    return (
        f"markers: mean over {n} seeds, bars: 95 % t interval over seeds"
        if n > 1
        else "markers: one seed, bars: the run's batch-means 95 % CI"
    )


def figure_fluid(summary: pd.DataFrame, scenario: str, path: Path) -> Path:
    """Figs. 1-2: gamma_k vs load, (a) BMF v DRF, (b) BMF v PF; Markov lines, SimPy markers."""
    fig = Figure(figsize=(10, 4.4))
    axes = fig.subplots(1, 2, sharey=True)
    sim_all = summary[(summary.scenario == scenario) & (summary.method == "simulation")]
    for ax, other in zip(axes, ("drf", "pf"), strict=True):
        for al in ("bmf", other):
            c = curve(summary, scenario, al)
            for k in c.columns:
                ax.plot(
                    c.index,
                    c[k],
                    _STYLE[al],
                    color=_COLORS.get(int(k), "k"),
                    label=f"{al.upper()} class {k} (Markov)",
                )
            _markers(ax, sim_all[sim_all.allocation == al], "o" if al == "bmf" else "s", 3, None)
        ax.set(title=f"BMF v {other.upper()} ({scenario} load)", ylim=(0, _YMAX))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.supxlabel(XLABEL, fontsize=10)
    axes[0].set_ylabel("service rate γ_k (units of work per unit time)")
    fig.suptitle(
        f"lines: Markov chain; {_seeds_note(sim_all)} (SimPy; circles BMF, squares DRF or PF)",
        fontsize=9,
    )
    return save_figure(fig, path)


def figure_packet(summary: pd.DataFrame, scenario: str, path: Path) -> Path:
    """Fig. 3: packet-simulation service rates (crosses with 95 % intervals) against the fluid
    (Markov) curves."""
    fig = Figure(figsize=(13, 4.4))
    allocs = [a for a in ALLOCATIONS if a in set(summary.allocation)]
    axes = np.atleast_1d(fig.subplots(1, len(allocs), sharey=True))
    pk_all = summary[(summary.scenario == scenario) & (summary.method == "packet")]
    for ax, al in zip(axes, allocs, strict=True):
        c = curve(summary, scenario, al)
        for k in c.columns:
            ax.plot(c.index, c[k], "-", color=_COLORS.get(int(k), "k"), label=f"fluid class {k}")
        _markers(ax, pk_all[pk_all.allocation == al], "x", 7, "packet")
        ax.set(title=f"{al.upper()} ({PACKET_ALGORITHM[al]} packet scheduler)", ylim=(0, _YMAX))
        ax.grid(alpha=0.3)
    fig.supxlabel(XLABEL, fontsize=10)
    axes[0].set_ylabel("service rate γ_k (packets per unit time)")
    axes[-1].legend(fontsize=7)
    fig.suptitle(f"lines: fluid model (Markov chain); {_seeds_note(pk_all)}", fontsize=9)
    return save_figure(fig, path)
