"""Plotting helpers shared by every report: atomic PNG output, scheduler labels, the
decimation of long series, and series averaged over seeds with their band.

Figures are built on :class:`matplotlib.figure.Figure` objects directly (no pyplot global
state) and written atomically: a temporary file in the destination directory, then
:func:`os.replace`. Every line drawn from a utilisation grid goes through :func:`decimate`, so a
figure stays small whatever ``collect.utilization_interval_s`` was; the Parquet files keep every
sample.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from fairsim.atomic import atomic_path
from fairsim.scenario.reporting.intervals import t_band

logger = logging.getLogger(__name__)

#: Most points :func:`decimate` keeps of one line: 4 per bin (first, minimum, maximum, last) in
#: 1,000 bins, about one bin per pixel column of a report figure (9 in at 120 dpi: 1,080 px).
MAX_LINE_POINTS = 4000

_SLOTS_RE = re.compile(r"^slots-(\d+)$")
_LABELS = {"ff-drfh": "First-Fit DRFH", "bf-drfh": "Best-Fit DRFH"}


def scheduler_label(name: str) -> str:
    """Return a human-readable label for a scheduler directory name.

    Parameters
    ----------
    name : str
        Scheduler name, e.g. ``"slots-14"`` or ``"bf-drfh"``.

    Returns
    -------
    str
        ``"Slots (14 per max server)"``, ``"Best-Fit DRFH"``, or ``name`` itself.
    """
    m = _SLOTS_RE.match(name)
    if m:
        return f"Slots ({m.group(1)} per max server)"
    return _LABELS.get(name, name)


#: Fewest decades of job completion time drawn on a logarithmic x-axis; a narrower range is drawn
#: on a linear axis (a log axis over less than a decade may hold no labelled tick at all).
LOG_X_MIN_DECADES = 1.5


def jct_cdf_axes(ax: Axes, jct_s: ArrayLike, xlabel: str, ylabel: str) -> None:
    """Finish the axes of a JCT CDF: the x-axis of :func:`set_jct_axis` for ``jct_s`` (every JCT
    drawn, s), the labels, the y-axis from 0 to 1, a light grid and the legend."""
    set_jct_axis(ax, jct_s)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def set_jct_axis(ax: Axes, jct_s: ArrayLike) -> bool:
    """Choose the x-axis of a job-completion-time plot from the values drawn on it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes the JCTs are drawn on.
    jct_s : array_like
        Every JCT drawn (s).

    Returns
    -------
    bool
        True when the axis is logarithmic: symlog with a linear part below 1 s, when the positive
        values span at least :data:`LOG_X_MIN_DECADES` decades (so at least one decade is
        labelled); otherwise a linear axis from 0.
    """
    values = np.asarray(jct_s, dtype=float)
    positive = values[values > 0]
    if len(positive) and np.log10(positive.max() / positive.min()) >= LOG_X_MIN_DECADES:
        ax.set_xscale("symlog", linthresh=1.0)
        return True
    ax.set_xlim(left=0)
    return False


def save_figure(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Save ``fig`` as a PNG atomically (temporary file in the same directory, then rename).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to write.
    path : path-like
        Destination file; its directory is created if needed.
    dpi : int, optional
        Resolution in dots per inch.

    Returns
    -------
    pathlib.Path
        The destination path.
    """
    dest = Path(path)
    with atomic_path(dest) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    logger.info("wrote %s", dest)
    return dest


def decimate(
    x: ArrayLike, y: ArrayLike, max_points: int = MAX_LINE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """The points of a long series worth drawing: at most ``max_points``, extremes kept.

    The series is cut into ``max_points // 4`` runs of consecutive points of equal length; of
    each run the first, the minimum, the maximum and the last point are kept, in their order.
    Drawn at the figure's resolution the line looks the same as the full series: a spike of a
    single sample stays visible, and a step function keeps its levels.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        The series, in drawing order (time order for a time series).
    max_points : int
        Most points returned (at least 4).

    Returns
    -------
    x, y : ndarray, shape (m,)
        The kept points, ``m <= max_points``; the series itself (as arrays) when
        ``n <= max_points``.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length, or ``max_points < 4``.
    """
    xs, ys = np.asarray(x), np.asarray(y)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(
            f"decimate: x and y must be 1-d of one length (got {xs.shape}, {ys.shape})"
        )
    if max_points < 4:
        raise ValueError(f"decimate: max_points must be at least 4 (got {max_points})")
    n = len(ys)
    if n <= max_points:
        return xs, ys
    bins = max_points // 4
    width = -(-n // bins)  # ceil: the last run may be shorter, padded with its last point
    padded = np.pad(ys, (0, bins * width - n), mode="edge").reshape(bins, width)
    starts = np.arange(bins) * width
    keep = np.concatenate(
        (
            starts,
            starts + padded.argmin(axis=1),
            starts + padded.argmax(axis=1),
            starts + width - 1,
        )
    )
    keep = np.unique(np.minimum(keep, n - 1))
    return xs[keep], ys[keep]


def seed_mean_lines(
    ax: Axes,
    series: Mapping[str, Sequence[pd.DataFrame]],
    col: str,
    scale: float,
    *,
    thin: bool = False,
) -> None:
    """Draw one line per label: the mean over seeds of a time series, with its 95 % band.

    Only the instants every seed sampled are drawn; where one seed's value is missing the line
    has a gap. The band is Student's t over the seeds
    (:func:`fairsim.scenario.reporting.intervals.t_band`), drawn when there are two seeds or more.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; the x axis is in hours.
    series : mapping
        Line label → one frame per seed with ``time_s`` (seconds) and ``col``.
    col : str
        The column drawn.
    scale : float
        Factor of the values (e.g. 100 for a fraction drawn in %).
    thin : bool, optional
        Draw the line through :func:`decimate`'s points (the band stays whole).
    """
    for label, frames in series.items():
        times = functools.reduce(np.intersect1d, [f["time_s"].to_numpy(float) for f in frames])
        stack = np.vstack(
            [f.set_index("time_s")[col].reindex(times).to_numpy(float) for f in frames]
        )
        band = t_band(stack, axis=0)
        mean = np.where(np.isnan(stack).any(axis=0), np.nan, band.mean)  # a gap where one is
        t, v = decimate(times, mean) if thin else (times, mean)
        (line,) = ax.plot(t / 3600.0, scale * v, label=label, lw=0.9)
        if len(frames) > 1:
            low, high = scale * (mean - band.half), scale * (mean + band.half)
            ax.fill_between(times / 3600.0, low, high, color=line.get_color(), alpha=0.25)
