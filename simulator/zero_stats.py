"""numpy's mean and linear percentiles of a sorted sample stored without its zeros.

Most tasks of a replay start the moment they arrive (16.0 of the 23.1 million started tasks of
the 25-million-task FF-DRFH run of ``make bench-scale`` wait 0 s), so ``summary.json``'s
queueing-delay statistics keep the nonzero delays and count the zeros
(:func:`fairsim.simulator.results.run_metrics`): 8 bytes a waiting task instead of 8 bytes a
started one. The statistics must be the very floats that numpy gives on the whole sorted sample
(``np.mean`` and ``np.percentile(..., method="linear")``, as
:func:`fairsim.simulator.results.delay_metrics` computes them on a run kept in memory), so this
module repeats numpy's arithmetic on the virtual sample ``nonzero[:i], 0.0 * zeros,
nonzero[i:]`` (``i`` the number of negative values):

- the sum of ``np.add.reduce`` on a contiguous float64 array is numpy's pairwise summation
  (``numpy/_core/src/umath/loops_utils.h.src``, ``pairwise_sum``): a run of at most 128 values
  is summed with 8 accumulators, each taking every eighth value in order, combined as
  ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest added one by one (a run
  under 8 values: one by one); a longer run is split in two halves, the first a multiple of 8
  long. A part of the tree whose values are all zeros sums to 0.0 and is skipped.
- ``np.percentile``'s linear method (Hyndman and Fan's definition 7): the virtual index
  ``(n - 1) * q / 100``, its floor and the next index, and numpy's ``_lerp``
  (``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` when ``t >= 0.5``).

:func:`emulation_matches_numpy` checks both against numpy itself on random samples (once per
process, a few milliseconds); :func:`sorted_stats_with_zeros` falls back to building the whole
sample when it does not hold, so an answer never depends on this module being right.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

#: numpy's ``PW_BLOCKSIZE``: the longest run summed with 8 accumulators.
PAIRWISE_BLOCK = 128


def _values(v: np.ndarray, zlo: int, zhi: int, off: int, n: int) -> np.ndarray:
    """Values ``off .. off + n - 1`` of the virtual sample: ``v[:zlo]``, ``zhi - zlo`` zeros,
    ``v[zlo:]``."""
    end = off + n
    if end <= zlo:
        return v[off:end]
    shift = zhi - zlo
    if off >= zhi:
        return v[off - shift : end - shift]
    parts = []
    if off < zlo:
        parts.append(v[off:zlo])
    parts.append(np.zeros(min(end, zhi) - max(off, zlo), dtype=np.float64))
    if end > zhi:
        parts.append(v[zlo : end - shift])
    return np.concatenate(parts)


def pairwise_sum(v: np.ndarray, zlo: int, zhi: int, off: int, n: int) -> float:
    """numpy's pairwise sum of values ``off .. off + n - 1`` of the virtual sample ``v[:zlo]``,
    ``zhi - zlo`` zeros, ``v[zlo:]`` (module docstring).

    Parameters
    ----------
    v : ndarray of float64, shape (m,)
        The sample without its zeros.
    zlo, zhi : int
        The zeros' positions in the virtual sample, ``zlo <= zhi``.
    off, n : int
        The run to sum (``n >= 0``).

    Returns
    -------
    float
        ``float(np.add.reduce(sample[off : off + n]))`` for the whole sample ``sample``, the same
        float (``np.add.reduce`` of the whole sample is ``pairwise_sum(v, zlo, zhi, 0, len)``).
    """
    if off >= zlo and off + n <= zhi:
        return 0.0  # only zeros
    if n > PAIRWISE_BLOCK:
        n2 = n // 2
        n2 -= n2 % 8
        return pairwise_sum(v, zlo, zhi, off, n2) + pairwise_sum(v, zlo, zhi, off + n2, n - n2)
    a = _values(v, zlo, zhi, off, n)
    res = 0.0
    m = 0
    if n >= 8:
        m = n - n % 8
        # each accumulator adds every eighth value in order: a cumulative sum down the columns
        r = np.add.accumulate(a[:m].reshape(-1, 8), axis=0)[-1].tolist()
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for x in a[m:].tolist():
        res += x
    return res


def _at(v: np.ndarray, zlo: int, zhi: int, i: int) -> float:
    """Value ``i`` of the virtual sample (``-1``: the last)."""
    if i < 0:
        i += len(v) + zhi - zlo
    return float(_values(v, zlo, zhi, i, 1)[0])


def _emulated(v: np.ndarray, zeros: int, percentiles: Sequence[int]) -> tuple[float, list[float]]:
    """The mean and linear percentiles of the virtual sample (module docstring)."""
    n = len(v) + zeros
    zlo = int(np.searchsorted(v, 0.0, side="left"))
    zhi = zlo + zeros
    mean = pairwise_sum(v, zlo, zhi, 0, n) / n
    # np.percentile: q / 100, the virtual index (n - 1) * q, its floor and the next index
    # (both the last value at or past the end), gamma, then numpy's _lerp, operation for
    # operation on float64 arrays
    vi = (n - 1) * np.true_divide(np.asarray(percentiles), 100)
    prev = np.floor(vi)
    nxt = prev + 1
    above = vi >= n - 1
    prev[above] = -1
    nxt[above] = -1
    below = vi < 0
    prev[below] = 0
    nxt[below] = 0
    prev_i, nxt_i = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = np.asarray(vi - prev_i, dtype=vi.dtype)
    a = np.array([_at(v, zlo, zhi, int(i)) for i in prev_i], dtype=np.float64)
    b = np.array([_at(v, zlo, zhi, int(i)) for i in nxt_i], dtype=np.float64)
    diff = b - a
    out = np.add(a, diff * gamma)
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return mean, [float(x) for x in out]


def _numpy(v: np.ndarray, zeros: int, percentiles: Sequence[int]) -> tuple[float, list[float]]:
    """The same from the whole sample, as numpy computes it (sorted ascending; ``v`` may be
    reordered when ``zeros`` is 0)."""
    zlo = int(np.searchsorted(v, 0.0, side="left"))
    whole = _values(v, zlo, zlo + zeros, 0, len(v) + zeros)
    mean = float(whole.mean())
    return mean, [float(x) for x in np.percentile(whole, percentiles, overwrite_input=True)]


@functools.cache
def emulation_matches_numpy(percentiles: tuple[int, ...] = (50, 95, 99)) -> bool:
    """Whether :func:`sorted_stats_with_zeros`' arithmetic gives numpy's floats, checked on
    random samples of 1 to 3,000 values (zeros, negatives, ties, lengths around the pairwise
    blocks) against ``np.mean`` and ``np.percentile`` on the whole sample; once per process."""
    rng = np.random.default_rng(20261130)
    sizes = [*range(1, 40), 127, 128, 129, 130, 255, 256, 257, 1_000, 2_049, 3_000]
    for n in sizes:
        x = np.round(rng.lognormal(3.0, 2.5, n), int(rng.integers(0, 7)))
        x[rng.random(n) < rng.random()] = 0.0
        x[rng.random(n) < 0.05] *= -1.0
        x.sort()
        nonzero = x[x != 0.0]
        zeros = n - len(nonzero)
        if _emulated(nonzero, zeros, percentiles) != _numpy(nonzero, zeros, percentiles):
            return False
    return True


def sorted_stats_with_zeros(
    v: np.ndarray, zeros: int, percentiles: Sequence[int]
) -> tuple[float, list[float]]:
    """``np.mean`` and ``np.percentile(..., percentiles)`` (linear) of a sorted sample given
    without its zeros: the same floats as on the whole sample.

    Parameters
    ----------
    v : ndarray of float64, shape (m,)
        The sample's nonzero values, sorted ascending (no NaN).
    zeros : int
        How many values of the sample are 0.0 (``m + zeros >= 1``).
    percentiles : sequence of int
        In [0, 100].

    Returns
    -------
    (float, list of float)
        The mean and the percentiles. When :func:`emulation_matches_numpy` is False (a numpy
        whose summation or interpolation differs from the one this module repeats), computed
        by numpy on the whole sample, built for the purpose (8 bytes a zero more memory).
    """
    if emulation_matches_numpy(tuple(percentiles)):
        return _emulated(v, zeros, percentiles)
    return _numpy(v, zeros, percentiles)
