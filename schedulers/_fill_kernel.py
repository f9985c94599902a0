"""Compiled searches of progressive filling over two resources (numba).

The kernels behind :class:`fairsim.schedulers.progressive_filling.ProgressiveFilling` when its
search space has two float64 columns (the cluster's CPU and memory, as in the Google and Alibaba
traces):

* :func:`first_fit2`: the First-Fit search of
  :meth:`fairsim.schedulers.placement.FirstFit.find` (DRFH paper, Section V-B): the
  lowest-index server whose free amounts cover the need in both resources;
* :func:`blocked_fitting2`: phase 1 of :meth:`ProgressiveFilling._unblock_freed`, the blocked
  users whose head need fits a freed server.

They compare exactly as the numpy code they replace (``free >= need`` in float64, in both
resources), so the decisions are the same;
``tests/unit/test_fill_kernel.py`` checks them against that code on random instances, and the
scheduler's result files on the real Google sample are byte-identical with and without them.

The kernels are compiled by numba at their first call and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def first_fit2(c0: np.ndarray, c1: np.ndarray, n0: float, n1: float, maxfree: np.ndarray) -> int:
    """The lowest-index server ``s`` with ``c0[s] >= n0`` and ``c1[s] >= n1``, or -1.

    Parameters
    ----------
    c0, c1 : ndarray of float64, shape (n_servers,)
        Free amounts of the two resources.
    n0, n1 : float
        The need in each resource (same units as the columns).
    maxfree : ndarray of float64, shape (2,)
        Written only when no server fits: the maximum free amount of each resource.

    Returns
    -------
    int
        The server, or -1 if none fits.
    """
    n = c0.shape[0]
    for s in range(n):
        if c0[s] >= n0 and c1[s] >= n1:
            return s
    m0 = -np.inf
    m1 = -np.inf
    for s in range(n):
        if c0[s] > m0:
            m0 = c0[s]
        if c1[s] > m1:
            m1 = c1[s]
    maxfree[0] = m0
    maxfree[1] = m1
    return -1


@numba.njit(cache=True)
def blocked_fitting2(
    c0: np.ndarray,
    c1: np.ndarray,
    server: int,
    bh: np.ndarray,
    bu: np.ndarray,
    nb: int,
    bmin: np.ndarray,
) -> np.ndarray:
    """The blocked users whose head need fits the free amounts of ``server``.

    Parameters
    ----------
    c0, c1 : ndarray of float64, shape (n_servers,)
        Free amounts of the two resources.
    server : int
        The freed server.
    bh : ndarray of float64, shape (>= nb, 2)
        Head need of each blocked user (rows ``0..nb-1`` used).
    bu : ndarray of int64, shape (>= nb,)
        The blocked users' ids, row for row.
    nb : int
        Number of blocked users.
    bmin : ndarray of float64, shape (2,)
        A lower bound of each resource's blocked head needs. A server with less free than that
        in some resource wakes nobody (nothing is compared); otherwise every row is compared,
        and ``bmin`` is set to the exact minimum of the rows (the tightest bound).

    Returns
    -------
    ndarray of int64, shape (m,)
        The users, in row order (those with ``bh[i, 0] <= c0[server]`` and
        ``bh[i, 1] <= c1[server]``).
    """
    f0 = c0[server]
    f1 = c1[server]
    if f0 < bmin[0] or f1 < bmin[1]:
        return np.empty(0, dtype=np.int64)
    out = np.empty(nb, dtype=np.int64)
    m = 0
    m0 = np.inf
    m1 = np.inf
    for i in range(nb):
        h0 = bh[i, 0]
        h1 = bh[i, 1]
        if h0 < m0:
            m0 = h0
        if h1 < m1:
            m1 = h1
        if h0 <= f0 and h1 <= f1:
            out[m] = bu[i]
            m += 1
    bmin[0] = m0
    bmin[1] = m1
    return out[:m]
