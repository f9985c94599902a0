"""Numbers and figures of the UDRF reproduction over its seeds (Section V, Figs. 6-10).

:func:`load_seeds` reads what :func:`fairsim.experiments.udrf.experiment.run_seed` wrote for every
seed (``OUT/seed-<s>/``) into frames with a ``seed`` column; the functions below compute the
quantities the claims of :mod:`fairsim.experiments.udrf.report` rest on, and :func:`draw` saves
the figures, each with its 95 % interval: across seeds (Student t) for run-level series,
bootstrap over jobs for grouped reductions. Figures are built on
:class:`matplotlib.figure.Figure` objects (no pyplot state) and written atomically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.experiments.claims import Estimate, across_seeds, bootstrap_units
from fairsim.experiments.udrf import paper
from fairsim.experiments.udrf.experiment import BASELINE, UDRF_NAME, paired

#: Parts of a job's completion time: the JCT, its wait (queue entry to first start) and its
#: execution (first start to last finish).
PARTS = ("jct", "wait", "exec")


@dataclass(frozen=True)
class Seeds:
    """The per-seed result files of a reproduction, pooled (each frame has a ``seed`` column).

    Attributes
    ----------
    seeds : list of int
    jct : pandas.DataFrame
        ``jct.parquet`` rows: one per seed, scheduler and job.
    waste : pandas.DataFrame
        ``waste.parquet`` rows: one per seed, scheduler and grid point.
    rducs : pandas.DataFrame
        ``rducs.parquet`` rows: one per seed and grid point at which UDRF had waiting tasks.
    jobs : pandas.DataFrame
        ``jobs.parquet`` rows: one per seed and job (user, repetitions, tasks, classes needed).
    summaries : dict of int to dict
        Every seed's ``summary.json``.
    """

    seeds: list[int]
    jct: pd.DataFrame
    waste: pd.DataFrame
    rducs: pd.DataFrame
    jobs: pd.DataFrame
    summaries: dict[int, dict[str, Any]]

    @property
    def schedulers(self) -> list[str]:
        """The schedulers run, in run order."""
        return list(self.summaries[self.seeds[0]]["schedulers"])


def seed_dir(out: Path, seed: int) -> Path:
    """The folder of one seed's runs."""
    return Path(out) / f"seed-{seed}"


def load_seeds(out: Path, seeds: Sequence[int]) -> Seeds:
    """Read the files of every seed under ``out``."""

    def read(name: str) -> pd.DataFrame:
        return pd.concat(
            [pd.read_parquet(seed_dir(out, s) / name).assign(seed=s) for s in seeds],
            ignore_index=True,
        )

    return Seeds(
        seeds=list(seeds),
        jct=read("jct.parquet"),
        waste=read("waste.parquet"),
        rducs=read("rducs.parquet"),
        jobs=read("jobs.parquet"),
        summaries={s: json.loads((seed_dir(out, s) / "summary.json").read_text()) for s in seeds},
    )


def per_seed(data: Seeds, scheduler: str, key: str, sub: str | None = None) -> list[float]:
    """A headline number of ``scheduler`` in every seed's summary (``sub``: a nested key)."""
    out = []
    for s in data.seeds:
        v = data.summaries[s]["schedulers"][scheduler][key]
        out.append(float(v[sub] if sub is not None else v))
    return out


def seed_estimate(data: Seeds, scheduler: str, key: str, sub: str | None = None) -> Estimate:
    """:func:`per_seed` as an estimate across seeds."""
    return across_seeds(per_seed(data, scheduler, key, sub))


def paired_diff(data: Seeds, key: str, sub: str | None = None) -> Estimate:
    """Baseline minus UDRF of a headline number, paired by seed, across seeds."""
    b = per_seed(data, BASELINE, key, sub)
    u = per_seed(data, UDRF_NAME, key, sub)
    return across_seeds([x - y for x, y in zip(b, u, strict=True)])


def pooled_pairs(data: Seeds, base: str = BASELINE, other: str = UDRF_NAME) -> pd.DataFrame:
    """The jobs completed under both schedulers in every seed, side by side (suffixes ``_b``,
    ``_o``); a unit of the bootstrap is one job of one seed."""
    return paired(data.jct, base, other).reset_index(drop=True)


def grouped_ratio(
    key: np.ndarray, num: np.ndarray, den: np.ndarray
) -> Callable[[np.ndarray], tuple[list[float], list[float]]]:
    """``idx -> (groups, 1 - sum(num) / sum(den) per group)`` over the units ``idx``: the JCT
    reduction ``1 - mean(udrf) / mean(baseline)`` of every group of jobs in a resample (groups
    with no job in it, or a zero denominator, are left out)."""
    groups, pos = np.unique(key, return_inverse=True)
    pos = pos.ravel()
    n = len(groups)

    def f(idx: np.ndarray) -> tuple[list[float], list[float]]:
        p = pos[idx]
        d = np.bincount(p, weights=den[idx], minlength=n)
        u = np.bincount(p, weights=num[idx], minlength=n)
        ok = d > 0
        return groups[ok].tolist(), (1.0 - u[ok] / d[ok]).tolist()

    return f


def grouped_mean(
    key: np.ndarray, value: np.ndarray
) -> Callable[[np.ndarray], tuple[list[float], list[float]]]:
    """``idx -> (groups, mean value per group)`` over the units ``idx``."""
    groups, pos = np.unique(key, return_inverse=True)
    pos = pos.ravel()
    n = len(groups)

    def f(idx: np.ndarray) -> tuple[list[float], list[float]]:
        p = pos[idx]
        c = np.bincount(p, minlength=n)
        s = np.bincount(p, weights=value[idx], minlength=n)
        ok = c > 0
        return groups[ok].tolist(), (s[ok] / c[ok]).tolist()

    return f


def reduction_table(pairs: pd.DataFrame, col: str, part: str, seeds: int) -> pd.DataFrame:
    """The reduction of ``part`` (``jct``, ``wait`` or ``exec``) per group of ``col``
    (``repetitions`` or ``classes``) with its bootstrap 95 % interval over the group's jobs.

    Returns
    -------
    pandas.DataFrame
        ``group, jobs, reduction, low, high`` (reductions as fractions).
    """
    rows = []
    for k, g in pairs.groupby(col, sort=True):
        b = g[f"{part}_s_b"].to_numpy(float)
        o = g[f"{part}_s_o"].to_numpy(float)

        def stat(idx: np.ndarray, b: np.ndarray = b, o: np.ndarray = o) -> float:
            d = b[idx].sum()
            return 1.0 - o[idx].sum() / d if d > 0 else math.nan

        e = bootstrap_units(len(g), stat, seeds=seeds, what="jobs")
        rows.append(
            {
                "group": int(str(k)),
                "jobs": len(g),
                "reduction": e.value,
                "low": e.low,
                "high": e.high,
            }
        )
    return pd.DataFrame(rows, columns=["group", "jobs", "reduction", "low", "high"])


def overall_reduction(pairs: pd.DataFrame, part: str, seeds: int) -> Estimate:
    """``1 - mean(udrf) / mean(baseline)`` of ``part`` over all paired jobs, bootstrap over
    jobs."""
    b = pairs[f"{part}_s_b"].to_numpy(float)
    o = pairs[f"{part}_s_o"].to_numpy(float)

    def stat(idx: np.ndarray) -> float:
        d = b[idx].sum()
        return 1.0 - o[idx].sum() / d if d > 0 else math.nan

    return bootstrap_units(len(pairs), stat, seeds=seeds, what="jobs")


def _t_band(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the rows' seeds (columns) and the pointwise Student-t 95 % interval."""
    from scipy import stats

    n = np.sum(np.isfinite(m), axis=1)
    mean = np.nanmean(m, axis=1)
    sd = np.nanstd(m, axis=1, ddof=1) if m.shape[1] > 1 else np.zeros(len(m))
    t = np.where(n > 1, stats.t.ppf(0.975, np.maximum(n - 1, 1)), np.nan)
    half = t * sd / np.sqrt(np.maximum(n, 1))
    return mean, mean - half, mean + half


def draw(out: Path, data: Seeds) -> list[str]:
    """Save the figures into ``out``; returns their file names.

    ``fig9_waste.png`` (wasted CPU and memory over time, mean over seeds with its 95 % band),
    ``fig10a_jct_cdf.png`` (JCT CDF, mean over seeds with its band), ``fig10bc_jct_reduction.png``
    (JCT reduction by repetitions and by classes needed, bootstrap 95 % error bars),
    ``fig6_7_rducs.png`` (RDUCs over time per seed; mean degree by active users with its band),
    ``fig8_classes.png`` (CDF of the classes the jobs need, per seed, and the paper's 65 %).
    """
    from matplotlib.figure import Figure

    from fairsim.scenario.reporting.plotting import save_figure, set_jct_axis

    n = len(data.seeds)
    band = "95 % interval over seeds" if n > 1 else "one seed: no interval"
    names = data.schedulers
    colors = {name: f"C{i}" for i, name in enumerate(names)}

    # Fig. 9: wasted resources over time
    fig = Figure(figsize=(8, 5))
    axes = fig.subplots(2, 1, sharex=True)
    last = 0.0
    for name in names:
        w = data.waste[data.waste["scheduler"] == name]
        for ax, res, label in zip(axes, ("cpu", "mem"), ("CPU", "memory"), strict=True):
            m = w.pivot_table(index="time_s", columns="seed", values=res).sort_index()
            mean, lo, hi = _t_band(m.to_numpy())
            t = m.index.to_numpy() / 3600.0
            ax.plot(t, 100 * mean, label=name, color=colors[name], linewidth=0.8)
            if n > 1:  # (a share of the pool: the band is shown within 0-100 %)
                lo, hi = np.clip(100 * lo, 0, 100), np.clip(100 * hi, 0, 100)
                ax.fill_between(t, lo, hi, color=colors[name], alpha=0.2, lw=0)
            ax.set_ylabel(f"wasted {label}\n(% of pool)")
        last = max(last, max(per_seed(data, name, "makespan_s")) / 3600.0)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xlim(0, last * 1.02)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Fig. 9: idle resources a waiting task could use (mean, {band})")
    save_figure(fig, out / "fig9_waste.png")

    # Fig. 10a: JCT CDF
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    done = data.jct.dropna(subset=["jct_s"])
    lo_x = max(float(done["jct_s"][done["jct_s"] > 0].min()), 1.0)
    grid = np.geomspace(lo_x, float(done["jct_s"].max()), 200)
    for name in names:
        g = done[done["scheduler"] == name]
        cdfs = np.array(
            [
                np.searchsorted(np.sort(x), grid, side="right") / max(len(x), 1)
                for x in (g.loc[g["seed"] == s, "jct_s"].to_numpy() for s in data.seeds)
            ]
        ).T
        mean, lo, hi = _t_band(cdfs)
        ax.plot(grid, mean, label=name, color=colors[name])
        if n > 1:
            ax.fill_between(
                grid, np.clip(lo, 0, 1), np.clip(hi, 0, 1), color=colors[name], alpha=0.2, lw=0
            )
    set_jct_axis(ax, grid)
    ax.set_xlabel("job completion time from queue entry (s)")
    ax.set_ylabel("fraction of completed jobs")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Fig. 10a: JCT CDF (mean, {band})")
    save_figure(fig, out / "fig10a_jct_cdf.png")

    # Figs. 10b and 10c: JCT reduction by group, bootstrap error bars
    pairs = pooled_pairs(data)
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2)
    for ax, col, xlabel, title in (
        (axes[0], "repetitions", "times the job runs (repetitions)", "Fig. 10b"),
        (axes[1], "classes", "machine classes the job needs", "Fig. 10c"),
    ):
        tab = reduction_table(pairs, col, "jct", n)
        x = np.arange(len(tab))
        y = 100 * tab["reduction"].to_numpy(float)
        low = 100 * tab["low"].to_numpy(float)
        high = 100 * tab["high"].to_numpy(float)
        ax.bar(x, y, color="C1", alpha=0.8)
        ax.errorbar(x, y, yerr=[y - low, high - y], fmt="none", ecolor="black", capsize=3, lw=0.8)
        ax.set_xticks(x, [str(g) for g in tab["group"]])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"JCT reduction vs {BASELINE} (%)")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(alpha=0.3, axis="y")
        ax.set_title(f"{title} (95 % bootstrap over jobs, {n} seed{'s' * (n > 1)})", fontsize=9)
    save_figure(fig, out / "fig10bc_jct_reduction.png")

    # Figs. 6 and 7: RDUCs over time; mean degree by number of active users
    if len(data.rducs):
        fig = Figure(figsize=(10, 3.8))
        axes = fig.subplots(1, 2)
        for s in data.seeds:
            r = data.rducs[data.rducs["seed"] == s]
            axes[0].step(r["time_s"] / 3600.0, r["rducs"], where="post", lw=0.7, label=f"seed {s}")
        axes[0].set_xlabel("trace time (h)")
        axes[0].set_ylabel("RDUCs (count)")
        axes[0].axhline(paper.FIG7_RDUCS[1], color="grey", ls="--", lw=0.8, label="paper: up to 8")
        axes[0].legend(fontsize=7)
        axes[0].grid(alpha=0.3)
        axes[0].set_title("Fig. 7: RDUCs under udrf", fontsize=9)
        stats = data.rducs.groupby("users")["mean_degree"].agg(["mean", "std", "count"])
        from scipy import stats as st

        half = (
            st.t.ppf(0.975, np.maximum(stats["count"] - 1, 1))
            * stats["std"].fillna(0)
            / np.sqrt(stats["count"])
        )
        axes[1].errorbar(stats.index, stats["mean"], yerr=half, fmt="o", ms=3, capsize=2, lw=0.8)
        axes[1].plot(
            stats.index, stats.index - 1, color="grey", ls="--", lw=0.8, label="every other user"
        )
        axes[1].set_xlabel("active users (count)")
        axes[1].set_ylabel("mean user degree (users)")
        axes[1].legend(fontsize=7)
        axes[1].grid(alpha=0.3)
        axes[1].set_title("Fig. 6: degree by users (mean, 95 % t over samples)", fontsize=9)
        save_figure(fig, out / "fig6_7_rducs.png")

    # Fig. 8: CDF of the machine classes the jobs need
    fig = Figure(figsize=(5.5, 3.8))
    ax = fig.subplots()
    top = int(data.jobs["classes"].max())
    ks = np.arange(0, top + 1)
    cdfs = np.array(
        [
            [(data.jobs.loc[data.jobs["seed"] == s, "classes"] <= k).mean() for k in ks]
            for s in data.seeds
        ]
    ).T
    mean, lo, hi = _t_band(cdfs)
    ax.step(ks, mean, where="post", label="ours (mean over seeds)")
    if n > 1:
        ax.fill_between(ks, lo, hi, step="post", alpha=0.2, lw=0)
    ax.plot([2], [paper.FIG8_ONE_OR_TWO], "x", color="black", label="paper: ~65 % need 1-2")
    ax.set_xlabel("machine classes the job needs (count)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Fig. 8: classes per job ({band})", fontsize=9)
    save_figure(fig, out / "fig8_classes.png")
    return [
        "fig9_waste.png",
        "fig10a_jct_cdf.png",
        "fig10bc_jct_reduction.png",
        *(["fig6_7_rducs.png"] if len(data.rducs) else []),
        "fig8_classes.png",
    ]
