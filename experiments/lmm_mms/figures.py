"""Figures of the LMM-MMS reproduction (Figs. 2-6), every mean with its 95 % bootstrap interval
over the samples (seeds x samples per setting)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from fairsim.experiments.claims import LEVEL, N_RESAMPLES
from fairsim.experiments.lmm_mms.experiment import LABELS, MECHANISMS, Units, sharing_matrix
from fairsim.scenario.reporting import bootstrap
from fairsim.scenario.reporting.bootstrap import PooledQuantiles
from fairsim.scenario.reporting.plotting import save_figure

#: Resamples of the bands of the sharing-degree CDFs (each one a pooled quantile function).
CDF_RESAMPLES = 200
#: CDF levels drawn in Fig. 6.
CDF_LEVELS = np.linspace(0.005, 1.0, 200)


def mean_intervals(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap 95 % intervals of the column means of ``values`` (units by rows), with the
    claims' resamples (:data:`~fairsim.experiments.claims.N_RESAMPLES`)."""
    return bootstrap.mean_intervals(values, n_resamples=N_RESAMPLES, level=LEVEL)


def _utilisation(units: Units, fig: str, xlabel: str, path: Path) -> None:
    keys = units.keys(fig)
    f = Figure(figsize=(10, 3.8))
    axes = f.subplots(1, 2)
    width = 0.8 / len(MECHANISMS)
    xs = np.arange(len(keys))
    for ax, metric, label in zip(
        axes,
        ("util_cpu", "util_mem"),
        ("CPU utilisation (%)", "memory utilisation (%)"),
        strict=True,
    ):
        for i, mech in enumerate(MECHANISMS):
            vals = np.stack([units.get(fig, k, metric, mech) for k in keys], axis=1)
            mean = vals.mean(axis=0)
            low, high = mean_intervals(vals)
            offset = (i - (len(MECHANISMS) - 1) / 2) * width
            ax.bar(
                xs + offset,
                100 * mean,
                width=width,
                label=LABELS[mech],
                yerr=100 * np.stack([mean - low, high - mean]),
                capsize=1.5,
                error_kw={"elinewidth": 0.8},
            )
        ax.set_xticks(xs, [f"{100 * k:.0f} %" if fig == "fig4" else str(k) for k in keys])
        ax.set(xlabel=xlabel, ylabel=label, ylim=(0, 105))
        ax.grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=7, loc="lower left")
    f.suptitle(
        f"LMM-MMS paper {fig.replace('fig', 'Fig. ')}: mean utilisation over {units.n} samples "
        "(error bars: 95 % bootstrap interval)",
        fontsize=10,
    )
    save_figure(f, path)


def _curves() -> list[tuple[str, str, str]]:
    """Mechanism, colour and line style of every curve; LMM-MMS last, on top (it equals bounded
    DRF)."""
    mechs = reversed(list(enumerate(MECHANISMS)))
    return [(m, "k", "--") if m == "lmm-mms" else (m, f"C{i}", "-") for i, m in mechs]


def _completion(units: Units, path: Path) -> None:
    keys = units.keys("fig2")
    f = Figure(figsize=(6.5, 4.2))
    ax = f.subplots()
    for mech, color, ls in _curves():
        vals = np.stack([units.get("fig2", k, "completion_rate", mech) for k in keys], axis=1)
        low, high = mean_intervals(vals)
        ax.plot(keys, 100 * vals.mean(axis=0), marker="o", ls=ls, color=color, label=LABELS[mech])
        ax.fill_between(keys, 100 * low, 100 * high, color=color, alpha=0.15, lw=0)
    ax.set(xlabel="number of users", ylabel="users reaching their task bound (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"User completion rate (Fig. 5), {units.n} samples, 95 % bands", fontsize=10)
    save_figure(f, path)


def _sharing(share: pd.DataFrame, path: Path) -> None:
    scales = sorted(int(x) for x in share["users"].unique())
    f = Figure(figsize=(4.6 * len(scales), 4.2))
    axes = np.atleast_1d(f.subplots(1, len(scales)))
    rng = np.random.default_rng(0)
    for ax, n in zip(axes, scales, strict=True):
        for mech, color, ls in _curves():
            pq = PooledQuantiles(sharing_matrix(share, n, mech))
            x = pq(np.arange(pq.n_units), CDF_LEVELS)
            ax.step(x, CDF_LEVELS, where="post", label=LABELS[mech], color=color, lw=1.3, ls=ls)
            if pq.n_units > 1:
                lo, hi = pq.interval(CDF_LEVELS, n_resamples=CDF_RESAMPLES, rng=rng, level=LEVEL)
                ax.fill_betweenx(CDF_LEVELS, lo, hi, color=color, alpha=0.2, lw=0, step="post")
        ax.axvline(1.0, color="k", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("sharing degree (tasks / tasks under the equal split)")
        ax.set_ylabel("fraction of users")
        ax.set_title(f"{n} users")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    f.suptitle(
        "Sharing degree CDF (Fig. 6), users of all samples pooled; bands: 95 % bootstrap over "
        "samples",
        fontsize=10,
    )
    save_figure(f, path)


def write_figures(units: Units, share: pd.DataFrame, out: Path) -> None:
    """Write ``fig2.png`` ... ``fig6.png`` into ``out``.

    Parameters
    ----------
    units : Units
        The samples (``samples.parquet``) by unit.
    share : pandas.DataFrame
        ``sharing.parquet``.
    out : Path
        The folder.
    """
    for fig, xlabel in (
        ("fig2", "number of users"),
        ("fig3", "pool capacity (CPU cores, memory GB)"),
        ("fig4", "share of elephant users (%)"),
    ):
        _utilisation(units, fig, xlabel, out / f"{fig}.png")
    _completion(units, out / "fig5.png")
    _sharing(share, out / "fig6.png")
