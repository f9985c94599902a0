"""The per-user share figure of a run with ``collect.user_shares`` (DRFH paper, Fig. 4 style).

``user_shares.parquet`` (one per scheduler run folder) holds, on the utilisation grid, every
user's share of the pool's capacity of each resource and its global dominant share (long format:
``time_s, user, <resource>..., dominant``). :func:`user_shares_figure` draws one panel per
resource and one for the dominant share, one step line per user. The run report draws it for every
scheduler of a run with ``collect.user_shares``; the DRFH reproduction draws its Fig. 4 with it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.scenario.reporting.plotting import decimate

#: Top of the y-axis of share figures (%): 5 % of headroom so that a share of 100 % stays visible
#: above the top border; ticks stop at 100.
SHARE_YLIM_TOP = 105.0

_PANEL_TITLES = {"cpu": "CPU share", "mem": "Memory share", "gpu": "GPU share"}


#: With more users than this, only the users with the highest peak dominant share are coloured
#: and named in the legend (the others are drawn in light grey): a legend of hundreds of users is
#: unreadable, and placing it took minutes per figure.
LEGEND_MAX_USERS = 10


def share_columns(shares: pd.DataFrame) -> list[str]:
    """The panels of :func:`user_shares_figure`: every resource column, then ``dominant``.

    Raises
    ------
    ValueError
        If ``time_s``, ``user`` or ``dominant`` is missing.
    """
    missing = [c for c in ("time_s", "user", "dominant") if c not in shares.columns]
    if missing:
        raise ValueError(f"user shares: missing column(s) {missing} (got {list(shares.columns)})")
    return [c for c in shares.columns if c not in ("time_s", "user", "dominant")] + ["dominant"]


def user_shares_figure(
    shares: pd.DataFrame,
    *,
    scheduler: str,
    marks_s: Sequence[float] = (),
    title: str | None = None,
) -> Figure:
    """Every user's share of each resource and its global dominant share over time.

    Parameters
    ----------
    shares : pandas.DataFrame
        Long format ``time_s, user, <resource>..., dominant`` (fractions of the pool's total
        capacity, ``user_shares.parquet``); each sample holds until the user's next one.
    scheduler : str
        Scheduler name (registry name, e.g. ``"bf-drfh"``), used in the default title.
    marks_s : sequence of float, optional
        Instants (s) to mark with a dotted vertical line in every panel (e.g. users joining).
    title : str, optional
        Figure title; default ``"Shares of N users under <scheduler> (collect.user_shares)"``.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per resource plus the dominant share (more than :data:`LEGEND_MAX_USERS`
        users: those with the highest peak dominant share coloured and named, the others grey);
        x: time (s), y: share of pool capacity (%), from 0 to :data:`SHARE_YLIM_TOP`, ticks to 100.

    Raises
    ------
    ValueError
        If a required column is missing.
    """
    panels = share_columns(shares)
    fig = Figure(figsize=(4.3 * len(panels), 4))
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True))
    groups = [(u, g.sort_values("time_s")) for u, g in shares.groupby("user", sort=True)]
    named = {u for u, _ in groups}
    if len(groups) > LEGEND_MAX_USERS:  # the users with the highest peak dominant share
        peaks = sorted(((-g["dominant"].max(), i, u) for i, (u, g) in enumerate(groups)))
        named = {u for _, _, u in peaks[:LEGEND_MAX_USERS]}
    for ax, col in zip(axes, panels, strict=True):
        for user, g in groups:
            ts, v = decimate(g["time_s"].to_numpy(), g[col].to_numpy())
            if user in named:
                ax.step(ts, 100.0 * v, where="post", label=str(user), lw=1.0)
            else:
                ax.step(ts, 100.0 * v, where="post", color="0.75", lw=0.5, zorder=1)
        for t in marks_s:
            ax.axvline(t, color="grey", ls=":", lw=0.8)
        ax.set_xlabel("Time (s)")
        ax.set_title(
            "Global dominant share" if col == "dominant" else _PANEL_TITLES.get(col, f"{col} share")
        )
        ax.set_ylim(0, SHARE_YLIM_TOP)
        ax.set_yticks(range(0, 101, 20))
        ax.grid(alpha=0.3)
        # "best" searches the lines for room: cheap for a few users, minutes for hundreds
        ax.legend(
            loc="best" if len(groups) <= LEGEND_MAX_USERS else "upper right", fontsize="small"
        )
    axes[0].set_ylabel("Share of pool capacity (%)")
    if title is None:
        title = f"Shares of {len(groups)} users under {scheduler} (collect.user_shares)"
        if len(named) < len(groups):
            title += f"; the {len(named)} with the highest peak dominant share named, others grey"
    fig.suptitle(title)
    return fig
