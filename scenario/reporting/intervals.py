"""The Student-t interval of a mean over a few independent replicates (seeds), point by point.

One implementation for every band and table over seeds: the sweep report's means and paired
differences (:mod:`fairsim.scenario.reporting.sweep_report`) and the reproductions' bands over
seeds (:mod:`fairsim.experiments`). The half-width is ``t_{(1 + level) / 2, n - 1} · s / sqrt(n)``
(:func:`t_half`) with ``s`` the sample standard deviation (``ddof=1``) of the ``n`` values
present (not NaN); :func:`t_band` computes the means and standard deviations with numpy.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

#: The default two-sided confidence level.
LEVEL = 0.95


class TBand(NamedTuple):
    """Means over replicates with their Student-t interval (arrays of the input's shape with the
    reduced axis removed, or floats for a 1-D input).

    Attributes
    ----------
    mean : numpy.ndarray or float
        The mean of the values present (NaN where none is).
    sd : numpy.ndarray or float
        Their sample standard deviation (NaN where fewer than two are present).
    half : numpy.ndarray or float
        The interval's half-width (NaN where fewer than two are present): the interval is
        ``mean ± half``.
    n : numpy.ndarray or int
        The number of values present.
    """

    mean: np.ndarray
    sd: np.ndarray
    half: np.ndarray
    n: np.ndarray


def t_half(sd: ArrayLike, n: ArrayLike, level: float = LEVEL) -> np.ndarray:
    """The half-width ``t_{(1 + level) / 2, n - 1} · sd / sqrt(n)`` of the Student-t interval of
    a mean of ``n`` values with sample standard deviation ``sd`` (``n - 1`` taken as at least 1).

    Parameters
    ----------
    sd, n : array-like
        Standard deviations and counts, broadcast together (a caller with its own reduction,
        e.g. a pandas group-by, passes its ``std`` and ``count``).
    level : float
        Two-sided confidence level.

    Returns
    -------
    numpy.ndarray
        The half-widths (0 where ``sd`` is 0).
    """
    from scipy import stats

    k = np.asarray(n)
    return stats.t.ppf(0.5 + level / 2, np.maximum(k - 1, 1)) * np.asarray(sd) / np.sqrt(k)


def t_band(values: ArrayLike, *, axis: int = 0, level: float = LEVEL) -> TBand:
    """The mean along ``axis`` and its two-sided Student-t interval, NaN values left out.

    Parameters
    ----------
    values : array-like
        The replicates along ``axis`` (e.g. shape ``(n_seeds, n_points)`` with ``axis=0``).
    axis : int
        The axis of the replicates.
    level : float
        Two-sided confidence level.

    Returns
    -------
    TBand
        ``mean``, ``sd``, ``half`` and ``n``; for a 1-D input, floats (``n`` an int).

    Notes
    -----
    A 1-D input keeps only its values present before any sum, so its mean is numpy's over
    exactly them (numpy sums eight or more values pairwise, where a left-out value would change
    the grouping).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[~np.isnan(v)]
    n = np.sum(~np.isnan(v), axis=axis)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # empty slices and n < 2 give NaN
        mean = np.nanmean(v, axis=axis)
        sd = np.where(n > 1, np.nanstd(v, axis=axis, ddof=1), np.nan)
        half = np.where(n > 1, t_half(sd, n, level), np.nan)
    if v.ndim == 1:
        return TBand(float(mean), float(sd), float(half), int(n))  # type: ignore[arg-type]
    return TBand(mean, sd, half, n)


def t_interval(values: ArrayLike, level: float = LEVEL) -> tuple[float, float, float, int]:
    """Mean, sample standard deviation, half-width of the two-sided Student-t interval, and the
    number of values of a 1-D sample (:func:`t_band`).

    NaN values are left out; the half-width (and the standard deviation) is NaN when fewer than
    two values remain, the mean NaN when none does.
    """
    band = t_band(np.asarray(values, dtype=np.float64).ravel(), level=level)
    mean = float(band.mean) if int(band.n) else math.nan
    return mean, float(band.sd), float(band.half), int(band.n)
