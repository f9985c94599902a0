"""The statistics of a sorted sample stored without its zeros are numpy's on the whole sample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.simulator import zero_stats
from fairsim.simulator.results import _sorted_stats
from fairsim.simulator.zero_stats import (
    emulation_matches_numpy,
    pairwise_sum,
    sorted_stats_with_zeros,
)

PCT = (50, 95, 99)

values = st.one_of(
    st.just(0.0),
    st.floats(min_value=-1e6, max_value=1e9, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.001, 1.0, 30.0, 1e-9, 86_400.5]),
)


def _split(whole: np.ndarray) -> tuple[np.ndarray, int]:
    whole = np.sort(whole)
    nonzero = whole[whole != 0.0]
    return nonzero, len(whole) - len(nonzero)


@settings(max_examples=300, deadline=None)
@given(st.lists(values, min_size=1, max_size=700))
def test_mean_and_percentiles_are_numpys_on_the_whole_sample(xs: list[float]) -> None:
    whole = np.sort(np.asarray(xs, dtype=np.float64))
    nonzero, zeros = _split(whole)
    mean, qs = sorted_stats_with_zeros(nonzero, zeros, PCT)
    assert mean == float(whole.mean())
    assert qs == [float(x) for x in np.percentile(whole, PCT)]
    zlo = int(np.searchsorted(nonzero, 0.0))
    assert pairwise_sum(nonzero, zlo, zlo + zeros, 0, len(whole)) == float(np.add.reduce(whole))
    # what summary.json holds, with and without the zeros stored
    assert _sorted_stats(nonzero.copy(), zeros) == _sorted_stats(whole.copy())


def test_a_million_delays_most_of_them_zero() -> None:
    """A run's shape (two thirds of the tasks start on arrival), long enough for many levels
    of numpy's pairwise blocks; the mean's rounding depends on the summation order."""
    rng = np.random.default_rng(7)
    n = 1_000_003
    whole = np.round(rng.lognormal(4.0, 3.0, n), 6) * (rng.random(n) < 0.33)
    whole.sort()
    nonzero, zeros = _split(whole)
    assert zeros > 600_000
    mean, qs = sorted_stats_with_zeros(nonzero, zeros, PCT)
    assert mean == float(whole.mean())
    assert qs == [float(x) for x in np.percentile(whole, PCT)]
    assert qs[0] == 0.0 and qs[2] > 0.0


def test_the_check_against_numpy_holds_here_and_can_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On this numpy the emulation is used; a wrong sum makes the check fail, and the answer
    then comes from numpy on the whole sample (still numpy's floats)."""
    assert emulation_matches_numpy(PCT)
    emulation_matches_numpy.cache_clear()
    real = zero_stats.pairwise_sum
    monkeypatch.setattr(
        zero_stats, "pairwise_sum", lambda v, zlo, zhi, off, n: real(v, zlo, zhi, off, n) * 1.5
    )
    try:
        assert not emulation_matches_numpy(PCT)
        whole = np.array([0.0, 0.0, 1.0, 2.0, 4.5])
        nonzero, zeros = _split(whole)
        mean, qs = sorted_stats_with_zeros(nonzero, zeros, PCT)
        assert mean == pytest.approx(1.5) and mean == float(whole.mean())
        assert qs == [float(x) for x in np.percentile(whole, PCT)]
    finally:
        emulation_matches_numpy.cache_clear()


def test_all_zeros_and_one_value() -> None:
    assert sorted_stats_with_zeros(np.zeros(0), 5, PCT) == (0.0, [0.0, 0.0, 0.0])
    mean, qs = sorted_stats_with_zeros(np.array([3.0]), 0, PCT)
    assert (mean, qs) == (3.0, [3.0, 3.0, 3.0])
    whole = np.array([0.0] * 99 + [100.0])
    mean, qs = sorted_stats_with_zeros(np.array([100.0]), 99, PCT)
    assert mean == 1.0 == float(whole.mean())
    assert qs == [float(x) for x in np.percentile(whole, PCT)]
    assert qs[2] == pytest.approx(1.0)  # p99 interpolates between the last zero and 100
