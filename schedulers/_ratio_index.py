"""A server index for Best-Fit DRFH with two resources (DRFH paper, Section V-B, eq. 9).

With two resources and a task that demands the first one, eq. 9 reduces to

    H(i, l) = w · | d_1 / d_0 - f_l1 / f_l0 |,     w = T_0 / T_1 > 0,

(:class:`fairsim.schedulers.drfh.BestFitDRFH`): the best server is the fitting one whose ratio
of free amounts ``q_l = f_l1 / f_l0`` lies closest to the task's ratio ``ρ = d_1 / d_0``. Instead
of scanning every server, the index keeps the servers sorted by ``(q_l, l)`` and walks outward from
``ρ`` in both directions, always taking the side with the smaller H, so servers are visited in
non-decreasing H. The first fitting server gives the least H; the walk goes on while H stays within
the tie tolerance and returns the lowest server index among the fitting servers it met there —
exactly the choice of the full scan (:meth:`fairsim.schedulers.drfh.BestFitDRFH._choose`):

* H is computed with the same floating-point operations in the same order (``q`` is the same
  IEEE quotient ``f_l1 / f_l0``; then ``|ρ - q|``, then ``· w`` unless ``w == 1``);
* on each side of ``ρ`` those operations are monotone in ``q``, so the walk's order is the order
  of H, rounding included;
* a server whose free amount of the first resource is 0 has ``q = +inf`` and sits at the end; it
  cannot fit a task that demands that resource.

Servers with equal keys (idle servers of one machine class share their capacity's ratio) form a
run, sorted by server index, which the walk takes as one step: the run's first fitting server is
its candidate, the rest of the run is skipped.

The walk costs the number of non-fitting servers nearer to ``ρ`` than the best fitting one. It
gives up after ``cap`` visits (returning :data:`GAVE_UP`), and the caller scans every server
(:func:`scan`), which makes the same choice at a cost linear in the number of servers.

Keeping the order costs one move per placement and per completion (:func:`move`): the server's
entry is shifted from its old to its new place, linear in the distance it moves.

These kernels are compiled by numba at their first call and cached on disk (``cache=True``: in
``__pycache__`` next to this file, or in numba's user-wide cache directory when that folder is
read-only; ``NUMBA_CACHE_DIR`` overrides both), so later processes load them in milliseconds.
"""

from __future__ import annotations

import numba
import numpy as np

#: :func:`search` walked ``cap`` servers without settling the choice: scan instead.
GAVE_UP = -2


@numba.njit(cache=True, nogil=True)
def key_of(f0: float, f1: float) -> float:
    """The index key ``f1 / f0`` of a server (``+inf`` when it has none of resource 0 free)."""
    if f0 > 0.0:
        return f1 / f0
    return np.inf


@numba.njit(cache=True, nogil=True)
def _before(ka: float, sa: int, kb: float, sb: int) -> bool:
    """Whether entry ``(ka, sa)`` sorts before ``(kb, sb)`` (key, then server index)."""
    return ka < kb or (ka == kb and sa < sb)


@numba.njit(cache=True, nogil=True)
def build(f0: np.ndarray, f1: np.ndarray, q: np.ndarray, keys: np.ndarray, srv: np.ndarray) -> None:
    """Fill the index from the free amounts.

    Parameters
    ----------
    f0, f1 : ndarray of float64, shape (n_servers,)
        Free amount of resource 0 and 1 on every server.
    q : ndarray of float64, shape (n_servers,)
        Output: every server's key (:func:`key_of`), indexed by server.
    keys : ndarray of float64, shape (n_servers,)
        Output: the keys in increasing ``(key, server)`` order.
    srv : ndarray of int64, shape (n_servers,)
        Output: the server of each entry of ``keys``.
    """
    n = f0.shape[0]
    for s in range(n):
        q[s] = key_of(f0[s], f1[s])
    order = np.argsort(q, kind="mergesort")  # stable: equal keys in server order
    for j in range(n):
        srv[j] = order[j]
        keys[j] = q[order[j]]


@numba.njit(cache=True, nogil=True)
def _locate(keys: np.ndarray, srv: np.ndarray, k: float, s: int, n: int) -> int:
    """Position of the first entry of ``keys[:n]`` that does not sort before ``(k, s)``."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(keys[mid], srv[mid], k, s):
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def move(
    f0: np.ndarray, f1: np.ndarray, q: np.ndarray, keys: np.ndarray, srv: np.ndarray, s: int
) -> None:
    """Re-sort server ``s`` after its free amounts changed (a placement or a completion).

    Parameters
    ----------
    f0, f1, q, keys, srv : ndarray
        As in :func:`build`; ``q[s]`` still holds the server's old key.
    s : int
        The server whose free amounts changed.
    """
    old = q[s]
    new = key_of(f0[s], f1[s])
    if new == old or (new != new and old != old):
        return
    n = keys.shape[0]
    i = _locate(keys, srv, old, s, n)  # the server's current entry
    q[s] = new
    if _before(new, s, old, s):  # moves left: shift the entries in [j, i) one step right
        j = _locate(keys, srv, new, s, i)
        for p in range(i, j, -1):
            keys[p] = keys[p - 1]
            srv[p] = srv[p - 1]
        keys[j] = new
        srv[j] = s
    else:  # moves right: shift the entries in (i, e) one step left (e: first entry after it)
        e = _locate(keys, srv, new, s, n)
        for p in range(i, e - 1):
            keys[p] = keys[p + 1]
            srv[p] = srv[p + 1]
        keys[e - 1] = new
        srv[e - 1] = s


@numba.njit(cache=True, nogil=True)
def search(
    keys: np.ndarray,
    srv: np.ndarray,
    f0: np.ndarray,
    f1: np.ndarray,
    d0: float,
    d1: float,
    w: float,
    tol: float,
    mask: np.ndarray,
    use_mask: bool,
    cap: int,
) -> int:
    """The fitting server with the least H of eq. 9, by a walk outward from the task's ratio.

    Parameters
    ----------
    keys, srv : ndarray
        The index (:func:`build`, kept by :func:`move`).
    f0, f1 : ndarray of float64, shape (n_servers,)
        Free amounts of resource 0 and 1.
    d0, d1 : float
        The task's demand; ``d0 > 0``.
    w : float
        Eq. 9's weight ``T_0 / T_1`` (> 0).
    tol : float
        Relative tie tolerance: servers with ``H <= Hmin + tol · (1 + Hmin)`` tie, the lowest
        index wins.
    mask : ndarray of bool, shape (n_servers,)
        Servers the task may use (read only when ``use_mask``).
    use_mask : bool
        Whether ``mask`` applies.
    cap : int
        Most servers to visit before giving up.

    Returns
    -------
    int
        The server; -1 when no server fits (every server was visited); :data:`GAVE_UP` after
        ``cap`` visits without a decision.
    """
    n = keys.shape[0]
    rho = d1 / d0
    r = _locate(keys, srv, rho, -1, n)  # first entry with a key >= rho
    lo = r - 1
    best = -1
    thr = np.inf
    steps = 0
    while True:
        left = lo >= 0
        right = r < n and keys[r] < np.inf
        if not left and not right:
            return best  # every server that could fit was visited (-1 if none does)
        hl = 0.0
        hr = 0.0
        if left:
            hl = abs(rho - keys[lo])
            if w != 1.0:
                hl = hl * w
        if right:
            hr = abs(rho - keys[r])
            if w != 1.0:
                hr = hr * w
        # the next run of equal keys, [a, b), on the side with the smaller H
        if left and (not right or hl <= hr):
            h = hl
            b = lo + 1
            a = lo
            if a > 0 and keys[a - 1] == keys[lo]:
                a = _locate(keys, srv, keys[lo], -1, lo)
            lo = a - 1
        else:
            h = hr
            a = r
            b = r + 1
            if b < n and keys[b] == keys[r]:
                b = _locate(keys, srv, keys[r], n, n)
            r = b
        if h > thr:
            return best
        # equal keys are in server order: the run's first fitting server is its best
        for j in range(a, b):
            steps += 1
            s = srv[j]
            if s < best or best < 0:
                if f0[s] >= d0 and f1[s] >= d1 and (not use_mask or mask[s]):
                    if best < 0:
                        thr = h + tol * (1.0 + h)
                    best = s
                    break
            else:
                break  # the rest of the run has higher server indices
        if best < 0 and steps > cap:
            return GAVE_UP


@numba.njit(cache=True, nogil=True)
def scan(
    q: np.ndarray,
    f0: np.ndarray,
    f1: np.ndarray,
    d0: float,
    d1: float,
    w: float,
    tol: float,
    mask: np.ndarray,
    use_mask: bool,
) -> int:
    """The same choice as :func:`search` by one pass over every server (``q``: their keys).

    Returns the server, or -1 when none fits.
    """
    n = q.shape[0]
    rho = d1 / d0
    best = np.inf
    bests = -1
    for s in range(n):
        if f0[s] >= d0 and f1[s] >= d1 and (not use_mask or mask[s]):
            h = abs(rho - q[s])
            if w != 1.0:
                h = h * w
            if h < best:
                best = h
                bests = s
    if bests < 0:
        return -1
    thr = best + tol * (1.0 + best)
    for s in range(bests):
        if f0[s] >= d0 and f1[s] >= d1 and (not use_mask or mask[s]):
            h = abs(rho - q[s])
            if w != 1.0:
                h = h * w
            if h <= thr:
                return s
    return bests


class RatioIndex:
    """The index over a pool's two free-amount columns, with :func:`search` and :func:`scan`.

    Parameters
    ----------
    f0, f1 : ndarray of float64, shape (n_servers,)
        The free amounts of resource 0 and 1, *the arrays the engine updates in place*: the index
        reads them at every call, and must be told of every change (:meth:`move`).
    """

    def __init__(self, f0: np.ndarray, f1: np.ndarray) -> None:
        n = f0.shape[0]
        self.f0, self.f1 = f0, f1
        self.q = np.empty(n)  # key per server
        self.keys = np.empty(n)  # keys in (key, server) order
        self.srv = np.empty(n, dtype=np.int64)  # server per entry of keys
        self._nomask = np.zeros(1, dtype=bool)
        build(f0, f1, self.q, self.keys, self.srv)

    def move(self, server: int) -> None:
        """Re-sort ``server`` after a placement on it or a completion."""
        move(self.f0, self.f1, self.q, self.keys, self.srv, server)

    def best(
        self, d0: float, d1: float, w: float, tol: float, mask: np.ndarray | None, cap: int
    ) -> int:
        """The fitting server with the least H of eq. 9 for a task ``(d0, d1)``, ``d0 > 0``, or
        -1 when none fits: :func:`search`, then :func:`scan` if the walk gave up."""
        use = mask is not None
        m = mask if mask is not None else self._nomask
        s: int = search(self.keys, self.srv, self.f0, self.f1, d0, d1, w, tol, m, use, cap)
        if s == GAVE_UP:
            s = scan(self.q, self.f0, self.f1, d0, d1, w, tol, m, use)
        return s
