"""Figures of the PS-DSF reproduction: Fig. 6 (CPU utilisation of classes C and D over time)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from fairsim.experiments.psdsf import paper
from fairsim.experiments.psdsf.experiment import user_phases
from fairsim.scenario.config import RunConfig
from fairsim.scenario.reporting.intervals import t_band
from fairsim.scenario.reporting.plotting import save_figure

#: Line style and label of every curve of Fig. 6.
STYLES = {
    "psdsf": ("PS-DSF (distributed, online)", "-", "C0"),
    "exact tsf": ("TSF (exact every second, as the paper)", "-", "C1"),
    "exact c-drfh": ("C-DRFH (exact every second, as the paper)", "--", "C2"),
    "exact psdsf": ("PS-DSF (exact, for reference)", ":", "0.3"),
    "tsf": ("TSF (ours: online first fit, extra)", "-.", "C3"),
    "c-drfh": ("C-DRFH (ours: online first fit, extra)", (0, (1, 1)), "C4"),
}


def fig6(data: pd.DataFrame, exact: pd.DataFrame, cfg: RunConfig, path: Path) -> None:
    """Fig. 6: CPU utilisation of classes C and D over (0, 300) s.

    Distributed PS-DSF (online) as the mean over seeds with its 95 % band; TSF and C-DRFH as the
    paper computes them, exact every second (the same in every seed); exact PS-DSF for
    reference; our online First-Fit TSF and C-DRFH as an extra, with their bands.

    Parameters
    ----------
    data : pandas.DataFrame
        ``series.parquet`` (online runs, every seed).
    exact : pandas.DataFrame
        ``exact.parquet``.
    cfg : RunConfig
        The scenario (its phases are marked).
    path : Path
        The PNG to write.
    """
    seeds = int(data["seed"].nunique())
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, k in zip(axes, ("C", "D"), strict=True):
        col = f"cpu_{k}"
        for name in ("psdsf", "tsf", "c-drfh"):
            f = data[data["scheduler"] == name]
            if f.empty:
                continue
            label, ls, color = STYLES[name]
            wide = f.pivot(index="time_s", columns="seed", values=col)  # a column per seed
            x, band = wide.index.to_numpy(), t_band(wide.to_numpy(), axis=1)
            ax.plot(x, 100 * band.mean, linestyle=ls, color=color, lw=1.3, label=label)
            if seeds > 1:
                low, high = 100 * (band.mean - band.half), 100 * (band.mean + band.half)
                ax.fill_between(x, low, high, color=color, alpha=0.25, lw=0)
        for mech in ("tsf", "c-drfh", "psdsf"):
            f = exact[exact["scheduler"] == mech]
            label, ls, color = STYLES[f"exact {mech}"]
            style = {"linestyle": ls, "color": color, "lw": 1.8, "label": label}
            ax.step(f["time_s"], 100 * f[col], where="post", **style)
        for a, _b in user_phases(cfg)[1:]:
            ax.axvline(a, color="0.7", lw=0.8)
        ax.set(xlabel="time (s)", ylabel="CPU utilisation (%)")
        if k == "D":  # every curve is near 100 %: zoom in to show the tie and the losses
            ax.set(title="CPU of class D servers (zoomed: 90-100.5 %)", ylim=(90, 100.5))
        else:
            ax.set(title=f"CPU of class {k} servers", ylim=(0, 105))
        ax.set_xlim(*paper.INTERVAL_S)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=7)
    band_txt = f"mean over {seeds} seeds, 95 % band" if seeds > 1 else "one seed"
    fig.suptitle(
        "PS-DSF paper Fig. 6: user 4 inactive in (100, 250) s\n"
        f"online runs: {band_txt}; exact allocations: the same in every seed",
        fontsize=10,
    )
    save_figure(fig, path)
