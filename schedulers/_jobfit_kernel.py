"""Compiled First-Fit of a run of tasks, kind by kind, onto free amounts (numba).

The kernel behind :meth:`fairsim.schedulers.jobfit.JobFirstFit._fit` (``udrf``, ``drf-lockstep``):
a run is a list of *kinds* (demand vector, allowed servers), each with a number of tasks; kinds are
placed in order, each First-Fit onto what the kinds before it left:

* **one task**: the lowest-index allowed server ``s`` with ``free[s, r] >= d[r] - tol[r]`` for every
  resource the task demands (any allowed server if it demands none);
* **n > 1 tasks**: server ``s`` holds ``c_s = min_r floor((free[s, r] + tol[r]) / d[r])`` of them
  (over the demanded resources; 0 if not allowed); servers are filled in index order, each with
  ``min(c_s, what is left)``, until the ``n`` are placed.

The arithmetic is the numpy code's it replaces, operation for operation (the same quotients and
floors, a sequential running sum for the cumulative counts, ``free[s, r] -= take · d[r]`` with the
take converted to float64), so the placements and the free amounts left are bit for bit the same;
``tests/unit/test_jobfit_kernel.py`` checks this against the numpy version on random runs.

These kernels are compiled by numba at their first call and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def fit_run(
    free: np.ndarray,
    kd: np.ndarray,
    counts: np.ndarray,
    mk: np.ndarray,
    masks: np.ndarray,
    tol: np.ndarray,
    partial: bool,
    dry: bool,
) -> tuple[int, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """First-Fit the run's kinds in order onto ``free`` (decremented in place).

    Parameters
    ----------
    free : ndarray of float64, shape (n_servers, n_resources)
        Free amounts; what is placed is subtracted.
    kd : ndarray of float64, shape (n_kinds, n_resources)
        Demand of one task of each kind, in the run's order.
    counts : ndarray of int64, shape (n_kinds,)
        Tasks of each kind (>= 1).
    mk : ndarray of int64, shape (n_kinds,)
        Row of ``masks`` giving each kind's allowed servers; 0: every server.
    masks : ndarray of bool, shape (n_masks, n_servers)
        Allowed servers per row (row 0 unused).
    tol : ndarray of float64, shape (n_resources,)
        Capacity tolerance of every resource (a demand within ``tol[r]`` of the free amount
        fits).
    partial : bool
        Place what fits of each kind instead of failing at the first kind that does not fit.
    dry : bool
        Do not list the placements (``n_out`` is 0).

    Returns
    -------
    failed : int
        Position of the first kind that did not fit (not ``partial``), else -1. On a failure
        ``free`` is left part-decremented and ``placed`` is meaningless.
    room : float
        On a failure: how many tasks of that kind the servers could hold (0 for one task).
    placed : ndarray of int64, shape (n_kinds,)
        Tasks placed of each kind (a prefix of its tasks).
    out_kind, out_server, out_take : ndarray of int64, shape (>= n_out,)
        The placements, grouped: ``out_take[i]`` consecutive tasks of kind position
        ``out_kind[i]`` on server ``out_server[i]``, in the order the tasks are placed.
    n_out : int
        Number of groups used.
    """
    n, k = free.shape
    m = kd.shape[0]
    placed = np.zeros(m, dtype=np.int64)
    size = 0 if dry else int(counts.sum()) + m
    out_kind = np.empty(size, dtype=np.int64)
    out_server = np.empty(size, dtype=np.int64)
    out_take = np.empty(size, dtype=np.int64)
    n_out = 0
    count = np.empty(n, dtype=np.float64)
    cum = np.empty(n, dtype=np.float64)
    for j in range(m):
        need = counts[j]
        row = mk[j]
        any_pos = False
        for r in range(k):
            if kd[j, r] > 0:
                any_pos = True
        if need == 1:
            s_fit = -1
            for s in range(n):
                if row > 0 and not masks[row, s]:
                    continue
                ok = True
                if any_pos:
                    for r in range(k):
                        if kd[j, r] > 0 and not free[s, r] >= kd[j, r] - tol[r]:
                            ok = False
                            break
                if ok:
                    s_fit = s
                    break
            if s_fit < 0:
                if not partial:
                    return j, 0.0, placed, out_kind, out_server, out_take, n_out
                continue
            for r in range(k):
                free[s_fit, r] -= kd[j, r]
            if not dry:
                out_kind[n_out] = j
                out_server[n_out] = s_fit
                out_take[n_out] = 1
                n_out += 1
            placed[j] = 1
            continue
        total = 0.0
        for s in range(n):
            c = np.inf
            if any_pos:
                for r in range(k):
                    if kd[j, r] > 0:
                        q = np.floor((free[s, r] + tol[r]) / kd[j, r])
                        if q < c:
                            c = q
            if row > 0 and not masks[row, s]:
                c = 0.0
            if c < 0.0:
                c = 0.0
            count[s] = c
            total = total + c
            cum[s] = total
        room = cum[n - 1] if n > 0 else 0.0
        if room < need:
            if not partial:
                return j, room, placed, out_kind, out_server, out_take, n_out
            need = int(room)
            if need == 0:
                continue
        # the first server at which the running count reaches ``need`` (searchsorted, left)
        last = n - 1
        for s in range(n):
            if cum[s] >= need:
                last = s
                break
        left = need
        for s in range(last + 1):
            if count[s] != 0.0:
                # before ``last`` the running count is below ``need``, so each server takes all
                # it holds; the last takes what is left
                take = left if s == last else np.int64(count[s])
                left -= take
                for r in range(k):
                    free[s, r] -= take * kd[j, r]
                if not dry:
                    out_kind[n_out] = j
                    out_server[n_out] = s
                    out_take[n_out] = take
                    n_out += 1
        placed[j] = need
    return -1, 0.0, placed, out_kind, out_server, out_take, n_out
