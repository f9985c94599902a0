"""Compiled queue tree of online H-DRF (numba): the flush, the levels of the root's children,
the descent and the reservation of a freed server of
:class:`fairsim.schedulers.hdrf_online.HDRF`.

Bhattacharya et al., "Hierarchical Scheduling for Diverse Datacenter Workloads" (SoCC 2013),
Section 4 (dynamic H-DRF): a queue's consumption vector is its blocked children's vectors plus
its unblocked children's rescaled to the smallest level among them; the descent goes from the
root into the unblocked child with the smallest level. The module docstring of
:mod:`fairsim.schedulers.hdrf_online` gives fairsim's reading. This module holds the tree's
state in five arrays and updates it with the float operations, in the order, of the Python
tree it replaced, so the levels, and so every placement, are the same (the Google-tiers runs'
result files are byte-identical with it). ``tests/unit/test_hdrf_kernel.py`` checks the levels,
the descent and the reservation against the definitions recomputed from scratch on random
runs.

State (one set per tree, grown by :class:`~fairsim.schedulers.hdrf_online._Tree`; ``R``
resources, queues at most ``D`` deep, at most ``G`` children of a node with a guarantee):

``ii`` : int64, shape (node capacity, 12 + R + D + 1 + G)
    One row a node (0 the root, ``1..Q`` the queues, ``Q + 1 + leaf`` the leaves; rows not
    yet used have parent -1). Every node: parent, position among siblings (the tie-break),
    version of its heap entry, kind of what it adds to its parent's sums (0 ``B`` blocked, 1
    ``Z`` unblocked at level 0, 2 ``U`` unblocked, divided by its level), the resources its
    head task demands (a bit per resource; -1: none counted), whether its heap entry is
    valid, whether it has an unblocked child. Internal nodes: unblocked children, updates
    since the sums were recomputed, whether to recompute it, whether it holds less than its
    guarantee, its heap's length, per resource the unblocked leaves below whose head task
    demands it (``R``), the queues above it nearest first (itself first, ``D``, padded with
    -1; a leaf: its queue's), the number of its children with a guarantee and those
    children (``1 + G``).
``ff`` : float64, shape (node capacity, 2 + 4 R)
    Its level, what it adds to its parent's sums (``R``), its weight, its running sums ``B``,
    ``Z``, ``U`` (``3 R``, internal nodes).
``hf``, ``hi`` : float64 (Q + 1, heap capacity), int64 (Q + 1, heap capacity, 3)
    Per internal node a binary min-heap of ``(level, position, node, version)`` entries of its
    unblocked children (stale entries, whose version is not the node's, are skipped).
``meta`` : int64
    Whether the root's children's levels are stale, whether a leaf hangs at the root, ``R``,
    ``D``, the first leaf's node, the number of queues below a queue and of the root's queue
    children, then those queues (deepest first) and the root's queue children.

The kernels are compiled at their first call and cached on disk (``cache=True``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# ii columns: every node, then internal nodes; CNT is followed by the path and guaranteed
# children (their offsets depend on R and D)
PARENT, POS, VER, CKIND, SIG, PUSHED, PRESENT = 0, 1, 2, 3, 4, 5, 6
NPRES, UPDATES, QDIRTY, ISBELOW, HLEN, CNT = 7, 8, 9, 10, 11, 12
# ff columns: LEVEL, then R contributions, then the weight at 1 + R, then the sums
LEVEL = 0
# meta
RSTALE, ROOTLEAVES, NRES, DEPTH, FIRST, NQIN, NROOTQ, LISTS = 0, 1, 2, 3, 4, 5, 6, 7

#: A node's running sums are recomputed from its children's contributions after this many
#: updates (the running sums drift by float rounding otherwise).
RESUM = 4096
#: :func:`round12` takes its short path below this ``x * 1e12`` (2**40).
FAST_ROUND_BELOW = 1099511627776.0


def layout(n_res: int, depth: int, n_gch: int) -> tuple[int, int]:
    """Widths of ``ii`` and ``ff`` for ``n_res`` resources, queues ``depth`` deep and at most
    ``n_gch`` guaranteed children under a node.

    Returns
    -------
    tuple of int
        ``(columns of ii, columns of ff)``.
    """
    return CNT + n_res + depth + 1 + n_gch, 2 + 4 * n_res


@numba.njit(cache=True)
def round12(x: float) -> float:
    """``round(x, 12)``, the same float, most of the time without Python's decimal conversion.

    ``round(x, 12)`` is the double nearest to ``n / 10**12``, with ``n`` the integer nearest to
    the exact ``x * 10**12`` (CPython's ``double_round``: correctly rounded digits, then a
    correctly rounded conversion back). For ``0 < y = fl(x * 1e12) < 2**40`` the product is
    within half an ulp (at most 2**-13) of the exact one, so when ``y``'s fractional part is
    more than 0.001 away from one half, ``n`` is ``y`` rounded to the nearest integer, and
    ``n / 1e12`` (both exact doubles, one correctly rounded division) is that same nearest
    double. Otherwise (ties, zero, negative, large or non-finite ``x``) Python's ``round``, in
    object mode. :class:`fairsim.schedulers.hdrf_online.LeafOrder` writes the same lines out.
    """
    y = x * 1e12
    if 0.0 < y < FAST_ROUND_BELOW:
        f = float(math.floor(y))
        if y - f < 0.499:
            return f / 1e12
        if y - f > 0.501:
            return (f + 1) / 1e12
    with numba.objmode(out="float64"):
        out = round(x, 12)
    return out


# ---------------------------------------------------------------------------- the heaps
@numba.njit(cache=True, inline="always")
def _less(hf: np.ndarray, hi: np.ndarray, a: int, i: int, j: int) -> bool:
    """Entry ``i`` of node ``a``'s heap before entry ``j``: ``(level, position, node, version)``
    compared as tuples."""
    if hf[a, i] != hf[a, j]:
        return hf[a, i] < hf[a, j]
    for c in range(3):
        if hi[a, i, c] != hi[a, j, c]:
            return hi[a, i, c] < hi[a, j, c]
    return False


@numba.njit(cache=True, inline="always")
def _swap(hf: np.ndarray, hi: np.ndarray, a: int, i: int, j: int) -> None:
    hf[a, i], hf[a, j] = hf[a, j], hf[a, i]
    for c in range(3):
        hi[a, i, c], hi[a, j, c] = hi[a, j, c], hi[a, i, c]


@numba.njit(cache=True, inline="always")
def _copy(hf: np.ndarray, hi: np.ndarray, a: int, dst: int, src: int) -> None:
    """Entry ``src`` of node ``a``'s heap written over entry ``dst``."""
    hf[a, dst] = hf[a, src]
    for c in range(3):
        hi[a, dst, c] = hi[a, src, c]


@numba.njit(cache=True)
def _sift_down(hf: np.ndarray, hi: np.ndarray, a: int, i: int, n: int) -> None:
    """Move entry ``i`` of node ``a``'s heap (length ``n``) down to its place."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _less(hf, hi, a, c + 1, c):
            c += 1
        if not _less(hf, hi, a, c, i):
            return
        _swap(hf, hi, a, i, c)
        i = c


@numba.njit(cache=True)
def _compact(ii: np.ndarray, hf: np.ndarray, hi: np.ndarray, a: int) -> None:
    """Drop the stale entries of node ``a``'s heap and restore the heap order."""
    n, k = ii[a, HLEN], 0
    for i in range(n):
        if hi[a, i, 2] == ii[hi[a, i, 1], VER]:
            _copy(hf, hi, a, k, i)
            k += 1
    ii[a, HLEN] = k
    for i in range(k // 2 - 1, -1, -1):
        _sift_down(hf, hi, a, i, k)


@numba.njit(cache=True)
def _push(ii: np.ndarray, hf: np.ndarray, hi: np.ndarray, a: int, node: int, level: float) -> None:
    """Give ``node`` a new heap entry ``(level, position, node, version)`` in its parent
    ``a``'s heap (compacted first when full: the capacity is at least twice the children, so
    that makes room)."""
    if ii[a, HLEN] == hf.shape[1]:
        _compact(ii, hf, hi, a)
    i = ii[a, HLEN]
    ii[a, HLEN] = i + 1
    hf[a, i] = level
    hi[a, i, 0] = ii[node, POS]
    hi[a, i, 1] = node
    hi[a, i, 2] = ii[node, VER]
    while i > 0:
        p = (i - 1) // 2
        if not _less(hf, hi, a, i, p):
            break
        _swap(hf, hi, a, i, p)
        i = p


@numba.njit(cache=True)
def _top(ii: np.ndarray, hf: np.ndarray, hi: np.ndarray, a: int) -> int:
    """The unblocked child of ``a`` with the smallest (level, position), or -1 (stale entries
    at the top are popped)."""
    while ii[a, HLEN] > 0:
        if hi[a, 0, 2] == ii[hi[a, 0, 1], VER]:
            return hi[a, 0, 1]
        n = ii[a, HLEN] - 1
        ii[a, HLEN] = n
        if n > 0:
            _copy(hf, hi, a, 0, n)
            _sift_down(hf, hi, a, 0, n)
    return -1


@numba.njit(cache=True, inline="always")
def _set_level(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, node: int, present: bool,
    level: float,
) -> None:  # fmt: skip
    """The node's level and heap entry in its parent's heap: a node that stays unblocked at
    the same level keeps its entry; otherwise the old one goes stale and an unblocked node
    gets a new one."""
    if not (present and ii[node, PUSHED] and ff[node, LEVEL] == level):
        ff[node, LEVEL] = level
        ii[node, VER] += 1
        if present:
            _push(ii, hf, hi, ii[node, PARENT], node, level)
        ii[node, PUSHED] = present


# ---------------------------------------------------------------------------- the sums
@numba.njit(cache=True)
def _resum(ii: np.ndarray, ff: np.ndarray, a: int, r_n: int) -> None:
    """Recompute node ``a``'s sums from its children's contributions, children in order of
    their node (the order they were added), so no drift accumulates."""
    s0 = 2 + r_n
    ii[a, UPDATES] = 0
    for j in range(3 * r_n):
        ff[a, s0 + j] = 0.0
    for c in range(1, ii.shape[0]):  # (rows not yet used have parent -1)
        if ii[c, PARENT] == a:
            base = s0 + ii[c, CKIND] * r_n
            for r in range(r_n):
                ff[a, base + r] += ff[c, 1 + r]


@numba.njit(cache=True)
def _recontrib(
    ii: np.ndarray, ff: np.ndarray, node: int, present: bool, level: float, vec: np.ndarray
) -> None:
    """Replace what ``node`` adds to its parent's sums: its vector ``vec`` as it is (blocked),
    divided by its level (unblocked, level above 0), or as it is (unblocked at level 0)."""
    r_n = vec.shape[0]
    s0 = 2 + r_n
    p = ii[node, PARENT]
    kind = ii[node, CKIND]
    if not present:
        nk = 0
    elif level > 0.0:
        nk = 2
        for r in range(r_n):
            vec[r] = vec[r] / level
    else:
        nk = 1
    b = s0 + kind * r_n
    for r in range(r_n):
        ff[p, b + r] -= ff[node, 1 + r]
    b = s0 + nk * r_n
    for r in range(r_n):
        ff[p, b + r] += vec[r]
        ff[node, 1 + r] = vec[r]
    ii[node, CKIND] = nk
    if nk != kind and (nk == 0 or kind == 0):
        ii[p, NPRES] += 1 if kind == 0 else -1
    u = ii[p, UPDATES] + 1
    ii[p, UPDATES] = u
    if u >= RESUM:
        _resum(ii, ff, p, r_n)


@numba.njit(cache=True)
def _update_queue(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, a: int, vec: np.ndarray
) -> None:
    """Recompute queue ``a``'s vector ``B + Z + M U`` (``M`` the level at the top of its heap),
    its level (the vector's largest entry over the resources its unblocked leaves' head tasks
    demand, every entry when they demand none, over its weight, rounded to 12 decimals), its
    presence, what it adds to its parent (not for the root's children, whose vector no sum
    reads) and its heap entry."""
    r_n = vec.shape[0]
    s0 = 2 + r_n
    present = ii[a, NPRES] > 0
    top = _top(ii, hf, hi, a)
    m = ff[top, LEVEL] if top >= 0 else 0.0
    any_cnt = False
    for r in range(r_n):
        vec[r] = ff[a, s0 + r] + ff[a, s0 + r_n + r] + m * ff[a, s0 + 2 * r_n + r]
        if ii[a, CNT + r] > 0:
            any_cnt = True
    top_v = 0.0
    first = True
    for r in range(r_n):
        if (ii[a, CNT + r] > 0 or not any_cnt) and (first or vec[r] > top_v):
            top_v = vec[r]
            first = False
    level = round12(top_v / ff[a, 1 + r_n])
    if ii[a, PARENT] > 0:
        _recontrib(ii, ff, a, present, level, vec)
    ii[a, PRESENT] = present
    _set_level(ii, ff, hf, hi, a, present, level)


# ---------------------------------------------------------------------------- flush, descent
@numba.njit(cache=True)
def settle(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray
) -> None:
    """Compute the levels of the root's queue children that the flush left stale."""
    meta[RSTALE] = 0
    vec = np.empty(meta[NRES])
    start = LISTS + meta[NQIN]
    for j in range(start, start + meta[NROOTQ]):
        a = meta[j]
        if ii[a, QDIRTY]:
            ii[a, QDIRTY] = 0
            _update_queue(ii, ff, hf, hi, a, vec)


@numba.njit(cache=True)
def _leaf(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray, node: int,
    present: bool, level: float, sig: int, vec: np.ndarray,
) -> None:  # fmt: skip
    """One changed leaf: its level and heap entry, what it adds to its parent's sums (``vec``:
    its allocation over the pool's), the resources its head task demands (bits) counted at
    every queue above it; its parent is marked for recomputation."""
    _set_level(ii, ff, hf, hi, node, present, level)
    p = ii[node, PARENT]
    if p == 0:  # the root's vector and level are never read
        return
    _recontrib(ii, ff, node, present, level, vec)
    if not present:
        sig = -1
    old = ii[node, SIG]
    if sig != old:
        ii[node, SIG] = sig
        r_n = vec.shape[0]
        path0 = CNT + r_n
        for r in range(r_n):
            d = 0
            if sig >= 0 and (sig >> r) & 1:
                d += 1
            if old >= 0 and (old >> r) & 1:
                d -= 1
            if d:
                for j in range(path0, path0 + meta[DEPTH]):
                    a = ii[node, j]
                    if a < 0:
                        break
                    ii[a, CNT + r] += d
    ii[p, QDIRTY] = 1


@numba.njit(cache=True)
def _queues(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray,
    vec: np.ndarray,
) -> None:  # fmt: skip
    """The queues marked for recomputation below a queue, deepest first; the root's children
    only get their presence (their levels wait for :func:`settle`)."""
    for j in range(LISTS, LISTS + meta[NQIN]):
        a = meta[j]
        if ii[a, QDIRTY]:
            ii[a, QDIRTY] = 0
            ii[ii[a, PARENT], QDIRTY] = 1
            _update_queue(ii, ff, hf, hi, a, vec)
    start = LISTS + meta[NQIN]
    for j in range(start, start + meta[NROOTQ]):
        a = meta[j]
        if ii[a, QDIRTY]:
            ii[a, PRESENT] = ii[a, NPRES] > 0
            meta[RSTALE] = 1


@numba.njit(cache=True)
def flush(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray,
    rows: np.ndarray, n_rows: int,
) -> None:  # fmt: skip
    """Bring every node the changed leaves touch up to date: the leaves, then the queues below
    a queue deepest first; the root's children only get their presence (their levels wait for
    :func:`settle`).

    Parameters
    ----------
    rows : ndarray of float64, shape (>= n_rows, 4 + R)
        One changed leaf a row: its node, whether it waits unblocked (1/0), its key (its
        level), the resources its head task demands (bits; read only when it waits), then its
        allocation over the pool's (``A_r / C_r``).
    n_rows : int
        Rows used.
    """
    r_n = meta[NRES]
    vec = np.empty(r_n)
    for i in range(n_rows):
        for r in range(r_n):
            vec[r] = rows[i, 4 + r]
        node, present, sig = int(rows[i, 0]), rows[i, 1] != 0.0, int(rows[i, 3])
        _leaf(ii, ff, hf, hi, meta, node, present, rows[i, 2], sig, vec)
    _queues(ii, ff, hf, hi, meta, vec)


@numba.njit(cache=True)
def descend(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray
) -> int:
    """The leaf the descent reaches, or -1 when every leaf is blocked: from the root, at each
    node into its child below its guarantee with the smallest (level, position) if any, else
    the unblocked child with the smallest (level, position). The root's children's levels are
    settled first unless one child is the only choice (one below its guarantee waits, or one
    queue waits and no leaf hangs at the root).

    Returns
    -------
    int
        The leaf's code (its node minus the first leaf's), or -1.
    """
    g0 = CNT + meta[NRES] + meta[DEPTH]
    first = meta[FIRST]
    node = 0
    if meta[RSTALE]:
        node = -1
        for j in range(g0 + 1, g0 + 1 + ii[0, g0]):
            c = ii[0, j]
            if ii[c, PRESENT] and ii[c, ISBELOW]:
                if node >= 0:  # two below their guarantees: compare their levels
                    node = -2
                    break
                node = c
        if node == -1 and not meta[ROOTLEAVES]:
            start = LISTS + meta[NQIN]
            for j in range(start, start + meta[NROOTQ]):
                c = meta[j]
                if ii[c, PRESENT]:
                    if node >= 0:
                        node = -2
                        break
                    node = c
        if node < 0:
            settle(ii, ff, hf, hi, meta)
            node = 0
    while node < first:
        best = -1
        for j in range(g0 + 1, g0 + 1 + ii[node, g0]):  # a queue below its guarantee first
            c = ii[node, j]
            if ii[c, PRESENT] and ii[c, ISBELOW]:
                if (
                    best < 0
                    or ff[c, LEVEL] < ff[best, LEVEL]
                    or (ff[c, LEVEL] == ff[best, LEVEL] and ii[c, POS] < ii[best, POS])
                ):
                    best = c
        if best < 0:
            best = _top(ii, hf, hi, node)
            if best < 0:
                return -1
        node = best
    return node - first


@numba.njit(cache=True)
def flush_descend(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray,
    rows: np.ndarray, n_rows: int,
) -> int:  # fmt: skip
    """:func:`flush` (when ``n_rows``), then :func:`descend`: one call per step of the filling
    loop."""
    if n_rows:
        flush(ii, ff, hf, hi, meta, rows, n_rows)
    return descend(ii, ff, hf, hi, meta)


@numba.njit(cache=True)
def flush1_descend2(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray, node: int,
    present: bool, level: float, sig: int, v0: float, v1: float,
) -> int:  # fmt: skip
    """:func:`flush_descend` for one changed leaf and two resources, the leaf given as
    arguments (its node, whether it waits unblocked, its key, the resources its head task
    demands as bits, its allocation over the pool's): the most common step, without a row.

    Returns
    -------
    int
        The leaf the descent reaches, or -1 (as :func:`descend`).
    """
    vec = np.empty(2)
    vec[0] = v0
    vec[1] = v1
    _leaf(ii, ff, hf, hi, meta, node, present, level, sig, vec)
    _queues(ii, ff, hf, hi, meta, vec)
    return descend(ii, ff, hf, hi, meta)


# ---------------------------------------------------------------------------- reservation
@numba.njit(cache=True)
def _path_key(ii: np.ndarray, ff: np.ndarray, meta: np.ndarray, node: int, out: np.ndarray) -> int:
    """Write the leaf ``node``'s path key into ``out`` and return its length: for every queue
    from the root's child down to the leaf's, (0 for a queue below its guarantee else 1, its
    level, its position), then (1, the leaf's level, its position)."""
    path0 = CNT + meta[NRES]
    depth = 0
    while depth < meta[DEPTH] and ii[node, path0 + depth] >= 0:
        depth += 1
    n = 0
    for j in range(depth - 1, -1, -1):
        a = ii[node, path0 + j]
        out[n] = 0.0 if ii[a, ISBELOW] else 1.0
        out[n + 1] = ff[a, LEVEL]
        out[n + 2] = ii[a, POS]
        n += 3
    out[n] = 1.0
    out[n + 1] = ff[node, LEVEL]
    out[n + 2] = ii[node, POS]
    return n + 3


@numba.njit(cache=True, inline="always")
def _key_less(keys: np.ndarray, lens: np.ndarray, i: int, j: int) -> bool:
    """Row ``i`` of ``keys`` (length ``lens[i]``) before row ``j``, compared as tuples."""
    for c in range(min(lens[i], lens[j])):
        if keys[i, c] != keys[j, c]:
            return keys[i, c] < keys[j, c]
    return lens[i] < lens[j]


@numba.njit(cache=True)
def _sift(keys: np.ndarray, lens: np.ndarray, order: np.ndarray, i: int, n: int) -> None:
    """Move ``order[i]`` down the heap ``order[:n]`` (by :func:`_key_less`) to its place."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _key_less(keys, lens, order[c + 1], order[c]):
            c += 1
        if not _key_less(keys, lens, order[c], order[i]):
            return
        order[i], order[c] = order[c], order[i]
        i = c


@numba.njit(cache=True)
def _top_of(ii: np.ndarray, meta: np.ndarray, p: int) -> int:
    """The root's child above queue ``p`` (``p`` itself for a root's child)."""
    path0 = CNT + meta[NRES]
    top = p
    for j in range(path0, path0 + meta[DEPTH]):
        if ii[p, j] < 0:
            break
        top = ii[p, j]
    return top


@numba.njit(cache=True)
def _settles(ii: np.ndarray, meta: np.ndarray, users: np.ndarray) -> bool:
    """Whether the order of the leaves ``users`` (of more than one queue) reads the levels of
    the root's children: a leaf hangs at the root, a queue holding some lies below another
    holding some, or two of the root's children above them are both below their guarantees
    or both not (:meth:`fairsim.schedulers.hdrf_online.HDRF._by_key`)."""
    first, path0 = meta[FIRST], CNT + meta[NRES]
    n = users.shape[0]
    for i in range(n):
        p = ii[first + users[i], PARENT]
        if p == 0:
            return True
        for j in range(path0 + 1, path0 + meta[DEPTH]):
            a = ii[p, j]
            if a < 0:
                break
            for m in range(n):
                if ii[first + users[m], PARENT] == a:
                    return True
    below, above = 0, 0
    start = LISTS + meta[NQIN]
    for j in range(start, start + meta[NROOTQ]):
        a = meta[j]
        for i in range(n):
            if _top_of(ii, meta, ii[first + users[i], PARENT]) == a:
                if ii[a, ISBELOW]:
                    below += 1
                else:
                    above += 1
                break
    return below > 1 or above > 1


@numba.njit(cache=True)
def reserve2(
    ii: np.ndarray, ff: np.ndarray, hf: np.ndarray, hi: np.ndarray, meta: np.ndarray,
    rows: np.ndarray, n_rows: int, users: np.ndarray, need: np.ndarray, r0: float, r1: float,
    b0: float, b1: float, woken: np.ndarray,
) -> int:  # fmt: skip
    """Wake, in the order the descent would serve them, the blocked leaves ``users`` (more than
    one) whose only candidate is a freed server with room ``(r0, r1)``, while the room holds
    their needs: :meth:`fairsim.schedulers.hdrf_online.HDRF._reserve` for two resources.

    The order is :meth:`~fairsim.schedulers.hdrf_online.HDRF._by_key`'s: leaves of one queue by
    (key, leaf), their keys read from ``rows`` for the changed ones; leaves of several queues by
    their whole path (:meth:`~fairsim.schedulers.hdrf_online._Tree.path_key`), after the flush
    of the changed leaves (as :func:`flush`) and, when they decide the order, the levels of the
    root's children. A leaf whose need does not fit stays blocked; the scan stops once the room
    is below ``(b0, b1)``, a lower bound of every blocked need (every later leaf fails).

    Parameters
    ----------
    rows, n_rows
        The changed leaves, as :func:`flush` takes them.
    users : ndarray of int64, shape (n,)
        Leaf codes.
    need : ndarray of float64, shape (>= leaves, 2)
        Each blocked leaf's head need (pool units).
    woken : ndarray of int64, shape (>= n,)
        Written: the leaves woken, in order.

    Returns
    -------
    int
        ``4 * woken + 2 * (the server must be re-checked) + (the changed leaves were
        flushed)``.
    """
    first = meta[FIRST]
    n = users.shape[0]
    p0 = ii[first + users[0], PARENT]
    one_queue = True
    for i in range(1, n):
        if ii[first + users[i], PARENT] != p0:
            one_queue = False
            break
    flushed = 0
    keys = np.empty((n, 3 * (meta[DEPTH] + 1)))
    lens = np.empty(n, dtype=np.int64)
    if one_queue:  # by (key, leaf)
        for i in range(n):
            node = first + users[i]
            k = ff[node, LEVEL]
            for j in range(n_rows):
                if int(rows[j, 0]) == node:
                    k = rows[j, 2]
            keys[i, 0] = k
            keys[i, 1] = users[i]
            lens[i] = 2
    else:
        if n_rows:
            flush(ii, ff, hf, hi, meta, rows, n_rows)
            flushed = 1
        if meta[RSTALE] and _settles(ii, meta, users):
            settle(ii, ff, hf, hi, meta)
        for i in range(n):
            lens[i] = _path_key(ii, ff, meta, first + users[i], keys[i])
    order = np.arange(n)
    for i in range(n // 2 - 1, -1, -1):
        _sift(keys, lens, order, i, n)
    size, n_woken, recheck = n, 0, 0
    while size:
        u = users[order[0]]
        size -= 1
        order[0] = order[size]
        _sift(keys, lens, order, 0, size)
        n0, n1 = need[u, 0], need[u, 1]
        if n0 <= r0 and n1 <= r1:
            woken[n_woken] = u
            n_woken += 1
            r0 -= n0
            r1 -= n1
            if r0 < b0 or r1 < b1:  # every later leaf fails here
                if size:
                    recheck = 1
                break
        else:
            recheck = 1
            if r0 < b0 or r1 < b1:
                break
    return 4 * n_woken + 2 * recheck + flushed
