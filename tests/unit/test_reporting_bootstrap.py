"""The percentile bootstrap of the reports: :mod:`fairsim.scenario.reporting.bootstrap`."""

from __future__ import annotations

import numpy as np

from fairsim.scenario.reporting.bootstrap import PooledQuantiles, mean_intervals


def test_pooled_quantiles_weigh_units_by_their_draws() -> None:
    v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    pq = PooledQuantiles(v)
    levels = np.array([0.25, 0.5, 1.0])
    np.testing.assert_array_equal(pq(np.arange(3), np.array([1 / 6, 0.5, 1.0])), [1, 3, 6])
    # units 0, 0, 2: values 1, 2, 1, 2, 5, 6
    np.testing.assert_array_equal(pq(np.array([0, 0, 2]), levels), [1, 2, 6])


def test_mean_intervals_bracket_the_column_means() -> None:
    v = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    low, high = mean_intervals(v, n_resamples=500)
    assert low[0] < 1.5 < high[0] and 0.0 <= low[0] and high[0] <= 3.0
    np.testing.assert_array_equal([low[1], high[1]], [1.0, 1.0])  # a constant column
    # one unit: no interval, the mean itself
    np.testing.assert_array_equal(mean_intervals(v[:1], n_resamples=500), ([0.0, 1.0], [0.0, 1.0]))


def test_pooled_quantile_intervals_hold_the_quantiles() -> None:
    v = np.arange(40, dtype=float).reshape(10, 4)
    pq = PooledQuantiles(v)
    levels = np.array([0.25, 0.5, 0.75])
    low, high = pq.interval(levels, n_resamples=300, rng=np.random.default_rng(0))
    point = pq(np.arange(10), levels)
    assert (low <= point).all() and (point <= high).all() and (low < high).all()
    # one unit: no interval
    low, high = PooledQuantiles(v[:1]).interval(
        levels, n_resamples=300, rng=np.random.default_rng(0)
    )
    assert np.isnan(low).all() and np.isnan(high).all()
