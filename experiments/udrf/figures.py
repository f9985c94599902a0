"""The figures of the UDRF reproduction over its seeds (Section V, Figs. 6-10), drawn from the
numbers of :mod:`fairsim.experiments.udrf.numbers`, each with its 95 % interval: across seeds
(Student t, :func:`fairsim.scenario.reporting.intervals.t_band`) for run-level series, bootstrap
over jobs for grouped reductions. Figures are built on :class:`matplotlib.figure.Figure` objects
(no pyplot state) and written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fairsim.experiments.udrf import numbers as N
from fairsim.experiments.udrf import paper
from fairsim.experiments.udrf.experiment import BASELINE
from fairsim.scenario.reporting.intervals import t_band, t_half
from fairsim.scenario.reporting.plotting import jct_cdf_axes, save_figure


def _mean_band(ax: Axes, x: np.ndarray, m: np.ndarray, scale: float, **line: Any) -> None:
    """The mean over the columns (seeds) of ``m``'s rows times ``scale`` against ``x``, with its
    pointwise Student-t 95 % band clipped to ``[0, scale]`` (a fraction) from two seeds on."""
    b = t_band(m, axis=1)
    ax.plot(x, scale * b.mean, **line)
    if m.shape[1] > 1:
        lo, hi = (np.clip(scale * v, 0, scale) for v in (b.mean - b.half, b.mean + b.half))
        ax.fill_between(x, lo, hi, color=line["color"], alpha=0.2, lw=0)


def _fig9(data: N.Seeds, colors: dict[str, str], band: str) -> Figure:
    """Wasted CPU and memory over time, the mean over seeds with its band."""
    fig = Figure(figsize=(8, 5))
    axes = fig.subplots(2, 1, sharex=True)
    last = 0.0
    for name in data.schedulers:
        w = data.waste[data.waste["scheduler"] == name]
        for ax, res, label in zip(axes, ("cpu", "mem"), ("CPU", "memory"), strict=True):
            m = w.pivot_table(index="time_s", columns="seed", values=res).sort_index()
            t = m.index.to_numpy() / 3600.0
            _mean_band(ax, t, m.to_numpy(), 100, label=name, color=colors[name], linewidth=0.8)
            ax.set_ylabel(f"wasted {label}\n(% of pool)")
        last = max(last, max(N.per_seed(data, name, "makespan_s")) / 3600.0)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xlim(0, last * 1.02)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Fig. 9: idle resources a waiting task could use (mean, {band})")
    return fig


def _fig10a(data: N.Seeds, colors: dict[str, str], band: str) -> Figure:
    """The JCT CDF, the mean over seeds with its band."""
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    done = data.jct.dropna(subset=["jct_s"])
    lo_x = max(float(done["jct_s"][done["jct_s"] > 0].min()), 1.0)
    grid = np.geomspace(lo_x, float(done["jct_s"].max()), 200)
    for name in data.schedulers:
        g = done[done["scheduler"] == name]
        cdfs = np.array(
            [
                np.searchsorted(np.sort(x), grid, side="right") / max(len(x), 1)
                for x in (g.loc[g["seed"] == s, "jct_s"].to_numpy() for s in data.seeds)
            ]
        ).T
        _mean_band(ax, grid, cdfs, 1, label=name, color=colors[name])
    jct_cdf_axes(ax, grid, "job completion time from queue entry (s)", "fraction of completed jobs")
    ax.set_title(f"Fig. 10a: JCT CDF (mean, {band})")
    return fig


def _fig10bc(data: N.Seeds) -> Figure:
    """The JCT reduction by repetitions and by classes needed: bars the mean of per-job reductions
    with bootstrap error bars, diamonds the reduction of the mean JCT."""
    n = len(data.seeds)
    pairs = N.pooled_pairs(data)
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2)
    for ax, col, xlabel, title in (
        (axes[0], "repetitions", "times the job runs (repetitions)", "Fig. 10b"),
        (axes[1], "classes", "machine classes the job needs", "Fig. 10c"),
    ):
        tab = N.reduction_table(pairs, col, "jct", n)
        x = np.arange(len(tab))
        y, low, high = (100 * tab[c].to_numpy(float) for c in ("reduction", "low", "high"))
        ax.bar(x, y, color="C1", alpha=0.8)
        ax.errorbar(x, y, yerr=[y - low, high - y], fmt="none", ecolor="black", capsize=3, lw=0.8)
        rom = N.reduction_table(pairs, col, "jct", n, "ratio_of_means").set_index("group")
        ax.plot(
            x,
            100 * rom["reduction"].reindex(tab["group"]).to_numpy(float),
            "D",
            color="C0",
            ms=4,
            label="reduction of the mean JCT",
        )
        ax.legend(fontsize=7)
        ax.set_xticks(x, [str(g) for g in tab["group"]])
        ax.set(xlabel=xlabel, ylabel=f"mean per-job JCT reduction vs {BASELINE} (%)")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(alpha=0.3, axis="y")
        ax.set_title(f"{title} (95 % bootstrap over jobs, {n} seed{'s' * (n > 1)})", fontsize=9)
    return fig


def _fig6_7(data: N.Seeds) -> Figure:
    """RDUCs over time per seed; the mean degree by number of active users with its t interval
    over the grid points."""
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2)
    for s in data.seeds:
        r = data.rducs[data.rducs["seed"] == s]
        axes[0].step(r["time_s"] / 3600.0, r["rducs"], where="post", lw=0.7, label=f"seed {s}")
    axes[0].set(xlabel="trace time (h)", ylabel="RDUCs (count)")
    axes[0].axhline(paper.FIG7_RDUCS[1], color="grey", ls="--", lw=0.8, label="paper: up to 8")
    axes[0].legend(fontsize=7)
    axes[0].grid(alpha=0.3)
    axes[0].set_title("Fig. 7: RDUCs under udrf", fontsize=9)
    stats = data.rducs.groupby("users")["mean_degree"].agg(["mean", "std", "count"])
    half = t_half(stats["std"].fillna(0), stats["count"])  # one grid point: no bar
    axes[1].errorbar(stats.index, stats["mean"], yerr=half, fmt="o", ms=3, capsize=2, lw=0.8)
    axes[1].plot(
        stats.index, stats.index - 1, color="grey", ls="--", lw=0.8, label="every other user"
    )
    axes[1].set(xlabel="active users (count)", ylabel="mean user degree (users)")
    axes[1].legend(fontsize=7)
    axes[1].grid(alpha=0.3)
    axes[1].set_title("Fig. 6: degree by users (mean, 95 % t over samples)", fontsize=9)
    return fig


def _fig8(data: N.Seeds, band: str) -> Figure:
    """The CDF of the machine classes the jobs need, the mean over seeds with its band, and the
    paper's 65 %."""
    fig = Figure(figsize=(5.5, 3.8))
    ax = fig.subplots()
    ks = np.arange(0, int(data.jobs["classes"].max()) + 1)
    cdfs = np.array(
        [
            [(data.jobs.loc[data.jobs["seed"] == s, "classes"] <= k).mean() for k in ks]
            for s in data.seeds
        ]
    ).T
    b = t_band(cdfs, axis=1)
    ax.step(ks, b.mean, where="post", label="ours (mean over seeds)")
    if len(data.seeds) > 1:
        ax.fill_between(ks, b.mean - b.half, b.mean + b.half, step="post", alpha=0.2, lw=0)
    ax.plot([2], [paper.FIG8_ONE_OR_TWO], "x", color="black", label="paper: ~65 % need 1-2")
    ax.set_xlabel("machine classes the job needs (count)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Fig. 8: classes per job ({band})", fontsize=9)
    return fig


def draw(out: Path, data: N.Seeds) -> list[str]:
    """Save the figures into ``out``; returns their file names.

    ``fig9_waste.png`` (wasted CPU and memory over time, mean over seeds with its 95 % band),
    ``fig10a_jct_cdf.png`` (JCT CDF, mean over seeds with its band), ``fig10bc_jct_reduction.png``
    (JCT reduction by repetitions and by classes needed, bootstrap 95 % error bars),
    ``fig6_7_rducs.png`` (RDUCs over time per seed; mean degree by active users with its band;
    only when UDRF had waiting tasks), ``fig8_classes.png`` (CDF of the classes the jobs need,
    and the paper's 65 %).
    """
    band = "95 % interval over seeds" if len(data.seeds) > 1 else "one seed: no interval"
    colors: dict[str, Any] = {name: f"C{i}" for i, name in enumerate(data.schedulers)}
    figs = {
        "fig9_waste.png": _fig9(data, colors, band),
        "fig10a_jct_cdf.png": _fig10a(data, colors, band),
        "fig10bc_jct_reduction.png": _fig10bc(data),
        **({"fig6_7_rducs.png": _fig6_7(data)} if len(data.rducs) else {}),
        "fig8_classes.png": _fig8(data, band),
    }
    for name, fig in figs.items():
        save_figure(fig, out / name)
    return list(figs)
