"""Percentile-bootstrap intervals over resampled units (samples, seeds x samples), vectorised
for the figures and tables that draw many of them: the mean of every column
(:func:`mean_intervals`), the quantiles of the values of several units pooled
(:class:`PooledQuantiles`), and statistics per group of units of a resample
(:func:`grouped_mean`, :func:`grouped_ratio`, :func:`grouped_job_reduction`). The method is
the percentile bootstrap (B. Efron, R. Tibshirani, *An Introduction to the Bootstrap*, 1993,
Ch. 13), the one every interval of the reproductions' claims uses: units drawn with
replacement, the interval the ``(1 ± level) / 2`` quantiles of the resampled statistic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fairsim.scenario.reporting.intervals import LEVEL


def mean_intervals(
    values: np.ndarray, *, n_resamples: int, level: float = LEVEL, random_seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap intervals of the mean of every column over the units (rows).

    Parameters
    ----------
    values : ndarray, shape (n_units, n_columns)
    n_resamples : int
        Resamples of the rows, shared by the columns.
    level : float
        The two-sided confidence level.
    random_seed : int
        Seed of the resampling (the intervals are reproducible).

    Returns
    -------
    low, high : ndarray, shape (n_columns,)
        Equal to the mean for fewer than two units.
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[0]
    if n < 2:
        m = v.mean(axis=0)
        return m, m
    rng = np.random.default_rng(random_seed)
    means = np.stack([v[rng.integers(0, n, size=n)].mean(axis=0) for _ in range(n_resamples)])
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return low, high


def job_reduction(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Each job's own reduction ``1 - num / den`` (NaN where ``den <= 0``)."""
    a = np.asarray(num, dtype=float)
    b = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, 1.0 - a / b, np.nan)


#: A statistic of a resample: ``idx -> (groups, value per group)`` over the units ``idx``, for
#: :func:`fairsim.experiments.claims.spearman_trend` (a trend over the groups).
Grouped = Callable[[np.ndarray], tuple[list[float], list[float]]]


def _per_group(
    key: np.ndarray, num: np.ndarray, den: np.ndarray, post: Callable[[Any], Any] = lambda q: q
) -> Grouped:
    """``idx -> (groups, post(sum(num) / sum(den)) per group)`` over the units ``idx`` (groups
    with no unit in the resample, or a zero denominator, are left out)."""
    groups, pos = np.unique(key, return_inverse=True)
    pos = pos.ravel()
    n = len(groups)

    def f(idx: np.ndarray) -> tuple[list[float], list[float]]:
        p = pos[idx]
        d = np.bincount(p, weights=den[idx], minlength=n)
        u = np.bincount(p, weights=num[idx], minlength=n)
        ok = d > 0
        return groups[ok].tolist(), post(u[ok] / d[ok]).tolist()

    return f


def grouped_ratio(key: np.ndarray, num: np.ndarray, den: np.ndarray) -> Grouped:
    """``idx -> (groups, 1 - sum(num) / sum(den) per group)`` over the units ``idx``: the
    reduction of the mean, e.g. of the JCT ``1 - mean(new) / mean(baseline)``, of every group of
    jobs in a resample (groups with no job in it, or a zero denominator, are left out)."""
    return _per_group(key, num, den, lambda q: 1.0 - q)


def grouped_job_reduction(key: np.ndarray, num: np.ndarray, den: np.ndarray) -> Grouped:
    """``idx -> (groups, mean of 1 - num / den per group)`` over the units ``idx``: the mean of
    the per-job reductions (:func:`job_reduction`), e.g. ``1 - jct_new / jct_baseline``, of every
    group of jobs in a resample (jobs with ``den <= 0`` left out; groups with no job left, too)."""
    r = job_reduction(num, den)
    ok = np.isfinite(r)
    return _per_group(key, np.where(ok, r, 0.0), ok.astype(float))


def grouped_mean(key: np.ndarray, value: np.ndarray) -> Grouped:
    """``idx -> (groups, mean value per group)`` over the units ``idx``."""
    return _per_group(key, value, np.ones(len(value)))


class PooledQuantiles:
    """Quantiles of the values of several units pooled, for any resample of the units.

    A resample (unit indices with repeats) weighs every value by the number of times its unit was
    drawn; the quantile at level q is the smallest value whose cumulative weight reaches
    q times the total (the inverse of the pooled empirical CDF). Sorting once makes each resample
    one cumulative sum.

    Parameters
    ----------
    values : ndarray, shape (n_units, n_per_unit)
        The values of every unit.
    """

    def __init__(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=float)
        order = np.argsort(v, axis=None, kind="stable")
        self.n_units = v.shape[0]
        self._sorted = v.ravel()[order]
        self._unit = order // v.shape[1]

    def __call__(self, idx: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Quantiles at ``levels`` (in (0, 1]) of the units ``idx`` pooled."""
        counts = np.bincount(idx, minlength=self.n_units).astype(float)
        cum = np.cumsum(counts[self._unit])
        pos = np.searchsorted(cum, np.asarray(levels) * cum[-1] - 1e-9, side="left")
        return self._sorted[np.minimum(pos, len(self._sorted) - 1)]

    def interval(
        self,
        levels: np.ndarray,
        *,
        n_resamples: int,
        rng: np.random.Generator,
        level: float = LEVEL,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Percentile-bootstrap intervals of the quantiles at ``levels`` over resamples of the
        units drawn from ``rng``.

        Returns
        -------
        low, high : ndarray, shape (len(levels),)
            NaN for fewer than two units (nothing drawn from ``rng``).
        """
        n = self.n_units
        if n < 2:
            nan = np.full(np.shape(levels), np.nan)
            return nan, nan
        boot = np.stack(
            [self(np.asarray(rng.integers(0, n, size=n)), levels) for _ in range(n_resamples)]
        )
        low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return low, high
