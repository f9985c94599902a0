"""A server index for Best-Fit DRFH with two resources (DRFH paper, Section V-B, eq. 9).

With two resources and a task that demands the first one, eq. 9 reduces to

    H(i, l) = w · | d_1 / d_0 - f_l1 / f_l0 |,     w = T_0 / T_1 > 0,

(:class:`fairsim.schedulers.drfh.BestFitDRFH`): the best server is the fitting one whose ratio
of free amounts ``q_l = f_l1 / f_l0`` lies closest to the task's ratio ``ρ = d_1 / d_0``. Instead
of scanning every server, the index keeps the servers sorted by ``(q_l, l)`` and walks outward from
``ρ`` in both directions, always taking the side with the smaller H, so servers are visited in
non-decreasing H. The first fitting server gives the least H; the walk goes on while H stays within
the tie tolerance and returns the lowest server index among the fitting servers it met there —
exactly the choice of the full scan (:meth:`fairsim.schedulers.placement.BestFit.choose`):

* H is computed with the same floating-point operations in the same order (``q`` is the same
  IEEE quotient ``f_l1 / f_l0``; then ``|ρ - q|``, then ``· w`` unless ``w == 1``);
* on each side of ``ρ`` those operations are monotone in ``q``, so the walk's order is the order
  of H, rounding included;
* a server whose free amount of the first resource is 0 has ``q = +inf`` and sits at the end; it
  cannot fit a task that demands that resource.

Servers with equal keys (idle servers of one machine class share their capacity's ratio) form a
run, sorted by server index, which the walk takes as one step: the run's first fitting server is
its candidate, the rest of the run is skipped.

**Layout.** The sorted entries live in blocks of between 1 and ``2 L - 1`` entries
(``L = 2 ** shift``), chained in key order (a sorted list of sorted lists). Each block keeps the
largest free amount of each resource among its servers. A block in which either largest amount is
below the task's demand holds no fitting server, and the walk steps over it whole. The walk costs
the non-fitting servers nearer to ``ρ`` than the best fitting one that sit in blocks it could not
skip, plus one test per skipped block. It gives up after ``cap`` visits (returning
:data:`GAVE_UP`), and the caller scans every server (:func:`scan`), which makes the same choice at a
cost linear in the number of servers.

Keeping the order costs one move per placement and per completion (:func:`move`): the server's
entry is taken out of its block and put into the block of its new key, each in ``O(L)``; a block
that reaches ``2 L`` entries is split in two, an emptied block is dropped, and when no block is
left to split into, the entries are dealt out again ``L`` per block (:func:`_deal`).

These kernels are compiled by numba at their first call and cached on disk (``cache=True``: in
``__pycache__`` next to this file, or in numba's user-wide cache directory when that folder is
read-only; ``NUMBA_CACHE_DIR`` overrides both), so later processes load them in milliseconds.
"""

from __future__ import annotations

import numba
import numpy as np

#: :func:`search` walked ``cap`` servers without settling the choice: scan instead.
GAVE_UP = -2
#: Default ``shift``: blocks hold about ``2 ** BLOCK_SHIFT`` entries (between 1 and twice that).
BLOCK_SHIFT = 6

_jit = numba.njit(cache=True, nogil=True)

#: The index's arrays, handed to the kernels as one tuple: ``q`` (float64, (n_servers,): every
#: server's key, :func:`key_of`), ``bk`` and ``bs`` (float64 and int64, (n_blocks, 2 L): each
#: block's keys in increasing ``(key, server)`` order, and their servers), ``cnt`` (int64,
#: (n_blocks,): the entries in each block), ``order`` (int64, (n_blocks,): the blocks in use, in
#: key order, the first ``meta[0]``), ``free`` (int64, (n_blocks,): the unused blocks, the first
#: ``meta[1]``), ``meta`` (int64, (2,): blocks in use, unused blocks), ``bm0`` and ``bm1``
#: (float64, (n_blocks,): the largest free amount of resource 0 and 1 in each block).
Index = tuple[np.ndarray, ...]


@_jit
def key_of(f0: float, f1: float) -> float:
    """The index key ``f1 / f0`` of a server (``+inf`` when it has none of resource 0 free)."""
    if f0 > 0.0:
        return f1 / f0
    return np.inf


@_jit
def _before(ka: float, sa: int, kb: float, sb: int) -> bool:
    """Whether entry ``(ka, sa)`` sorts before ``(kb, sb)`` (key, then server index)."""
    return ka < kb or (ka == kb and sa < sb)


@_jit
def _h(rho: float, key: float, w: float) -> float:
    """Eq. 9's H of a server with key ``key`` for a task of ratio ``rho``, in the scan's order of
    operations (``|rho - key|``, then ``· w`` unless ``w == 1``)."""
    h = abs(rho - key)
    if w != 1.0:
        h = h * w
    return h


@_jit
def _fits(
    f0: np.ndarray,
    f1: np.ndarray,
    s: int,
    d0: float,
    d1: float,
    mask: np.ndarray,
    use_mask: bool,
) -> bool:
    """Whether server ``s`` has ``(d0, d1)`` free and the task may use it."""
    return f0[s] >= d0 and f1[s] >= d1 and (not use_mask or mask[s])


@_jit
def _refresh(
    f0: np.ndarray,
    f1: np.ndarray,
    bs: np.ndarray,
    cnt: np.ndarray,
    bm0: np.ndarray,
    bm1: np.ndarray,
    b: int,
) -> None:
    """Recompute block ``b``'s largest free amounts ``bm0[b]``, ``bm1[b]``."""
    m0 = -np.inf
    m1 = -np.inf
    for t in range(cnt[b]):
        s = bs[b, t]
        if f0[s] > m0:
            m0 = f0[s]
        if f1[s] > m1:
            m1 = f1[s]
    bm0[b] = m0
    bm1[b] = m1


@_jit
def _deal(f0: np.ndarray, f1: np.ndarray, keys: np.ndarray, srv: np.ndarray, ix: Index) -> None:
    """Deal the sorted entries ``(keys, srv)`` out to blocks, ``L`` (half a block's room) each."""
    _, bk, bs, cnt, order, free, meta, bm0, bm1 = ix
    n = keys.shape[0]
    half = bk.shape[1] // 2
    nb = (n + half - 1) // half
    for b in range(nb):
        c = min(half, n - b * half)
        for t in range(c):
            bk[b, t] = keys[b * half + t]
            bs[b, t] = srv[b * half + t]
        cnt[b] = c
        order[b] = b
        _refresh(f0, f1, bs, cnt, bm0, bm1, b)
    nfree = 0
    for b in range(bk.shape[0] - 1, nb - 1, -1):
        cnt[b] = 0
        free[nfree] = b
        nfree += 1
    meta[0] = nb
    meta[1] = nfree


@_jit
def build(f0: np.ndarray, f1: np.ndarray, ix: Index) -> None:
    """Fill the index ``ix`` (:data:`Index`, written in place) from the free amounts ``f0``,
    ``f1`` of resource 0 and 1, each of shape (n_servers,)."""
    q = ix[0]
    n = f0.shape[0]
    for s in range(n):
        q[s] = key_of(f0[s], f1[s])
    order_s = np.argsort(q, kind="mergesort")  # stable: equal keys in server order
    keys = np.empty(n)
    for j in range(n):
        keys[j] = q[order_s[j]]
    _deal(f0, f1, keys, order_s.astype(np.int64), ix)


@_jit
def _locate(
    bk: np.ndarray, bs: np.ndarray, cnt: np.ndarray, order: np.ndarray, nb: int, k: float, s: int
) -> tuple[int, int]:
    """``(o, p)``: entry ``p`` of the ``o``-th block in order, the first entry that does not sort
    before ``(k, s)``; ``(nb, 0)`` when every entry does."""
    lo, hi = 0, nb  # the first block whose last entry does not sort before (k, s)
    while lo < hi:
        mid = (lo + hi) >> 1
        b = order[mid]
        c = cnt[b] - 1
        if _before(bk[b, c], bs[b, c], k, s):
            lo = mid + 1
        else:
            hi = mid
    if lo == nb:
        return nb, 0
    o = lo
    b = order[o]
    lo, hi = 0, cnt[b]
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(bk[b, mid], bs[b, mid], k, s):
            lo = mid + 1
        else:
            hi = mid
    return o, lo


@_jit
def move(f0: np.ndarray, f1: np.ndarray, ix: Index, s: int) -> None:
    """Re-sort server ``s`` in the index ``ix`` after its free amounts changed (a placement or a
    completion); ``ix``'s keys ``q[s]`` still hold the server's old key."""
    q, bk, bs, cnt, order, free, meta, bm0, bm1 = ix
    old = q[s]
    new = key_of(f0[s], f1[s])
    nb = meta[0]
    o, p = _locate(bk, bs, cnt, order, nb, old, s)  # the server's current entry
    b = order[o]
    if new == old or (new != new and old != old) or f0.shape[0] == 1:
        q[s] = new
        bk[b, p] = new
        _refresh(f0, f1, bs, cnt, bm0, bm1, b)  # its place holds, its amounts do not
        return
    # take it out of its block (drop the block if that empties it: other blocks hold the rest)
    c = cnt[b] - 1
    for t in range(p, c):
        bk[b, t] = bk[b, t + 1]
        bs[b, t] = bs[b, t + 1]
    cnt[b] = c
    if c == 0:
        for t in range(o, nb - 1):
            order[t] = order[t + 1]
        nb -= 1
        free[meta[1]] = b
        meta[1] += 1
    else:
        _refresh(f0, f1, bs, cnt, bm0, bm1, b)
    # put it where its new key sorts (at the end of the last block if after every entry)
    q[s] = new
    o, p = _locate(bk, bs, cnt, order, nb, new, s)
    if o == nb:
        o = nb - 1
        b = order[o]
        p = cnt[b]
    else:
        b = order[o]
    c = cnt[b]
    for t in range(c, p, -1):
        bk[b, t] = bk[b, t - 1]
        bs[b, t] = bs[b, t - 1]
    bk[b, p] = new
    bs[b, p] = s
    c += 1
    cnt[b] = c
    bm0[b] = max(bm0[b], f0[s])
    bm1[b] = max(bm1[b], f1[s])
    meta[0] = nb
    if c < bk.shape[1]:
        return
    if meta[1] == 0:  # full, and no block left to split into: deal every entry out again
        n = f0.shape[0]
        keys = np.empty(n)
        srv = np.empty(n, dtype=np.int64)
        j = 0
        for oo in range(nb):
            bb = order[oo]
            for t in range(cnt[bb]):
                keys[j] = bk[bb, t]
                srv[j] = bs[bb, t]
                j += 1
        _deal(f0, f1, keys, srv, ix)
        return
    # split the full block: its upper half goes to a new block right after it
    meta[1] -= 1
    nid = free[meta[1]]
    half = c // 2
    for t in range(half, c):
        bk[nid, t - half] = bk[b, t]
        bs[nid, t - half] = bs[b, t]
    cnt[nid] = c - half
    cnt[b] = half
    for t in range(nb, o + 1, -1):
        order[t] = order[t - 1]
    order[o + 1] = nid
    meta[0] = nb + 1
    _refresh(f0, f1, bs, cnt, bm0, bm1, b)
    _refresh(f0, f1, bs, cnt, bm0, bm1, nid)


@_jit
def _live(bm0: np.ndarray, bm1: np.ndarray, b: int, d0: float, d1: float) -> bool:
    """Whether block ``b`` has, per resource, some server with the demand free."""
    return bm0[b] >= d0 and bm1[b] >= d1


@_jit
def search(
    ix: Index,
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
    ix : Index
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
        Most servers to visit before giving up (servers in skipped blocks are not visited).

    Returns
    -------
    int
        The server; -1 when no server fits (every server was visited or skipped);
        :data:`GAVE_UP` after ``cap`` visits without a decision.

    Notes
    -----
    A block whose largest free amount of either resource is below the demand holds no fitting
    server, so the walk steps over it whole; skipping servers that cannot fit changes neither
    the order of the others nor the choice.
    """
    _, bk, bs, cnt, order, _, meta, bm0, bm1 = ix
    nb = meta[0]
    n = f0.shape[0]
    rho = d1 / d0
    ro, rp = _locate(bk, bs, cnt, order, nb, rho, -1)  # right: the first entry with key >= rho
    lo, lp = ro, rp - 1  # left: the entry before it
    if lp < 0:
        lo -= 1
        lp = cnt[order[lo]] - 1 if lo >= 0 else 0
    best = -1
    thr = np.inf
    steps = 0
    while True:
        while lo >= 0 and not _live(bm0, bm1, order[lo], d0, d1):
            lo -= 1
            lp = cnt[order[lo]] - 1 if lo >= 0 else 0
        while ro < nb and not _live(bm0, bm1, order[ro], d0, d1):
            ro += 1
            rp = 0
        left = lo >= 0
        right = ro < nb and bk[order[ro], rp] < np.inf
        if not left and not right:
            return best  # every server that could fit was visited (-1 if none does)
        hl = _h(rho, bk[order[lo], lp], w) if left else 0.0
        hr = _h(rho, bk[order[ro], rp], w) if right else 0.0
        # the next run of equal keys on the side with the smaller H, from its first entry (ao, ap)
        if left and (not right or hl <= hr):
            h = hl
            k = bk[order[lo], lp]
            if lp > 0 and bk[order[lo], lp - 1] != k:
                ao, ap = lo, lp
            else:
                ao, ap = _locate(bk, bs, cnt, order, nb, k, -1)
            lo, lp = ao, ap - 1  # the left side goes on before the run
            if lp < 0:
                lo -= 1
                lp = cnt[order[lo]] - 1 if lo >= 0 else 0
        else:
            h = hr
            k = bk[order[ro], rp]
            ao, ap = ro, rp
            if rp + 1 < cnt[order[ro]] and bk[order[ro], rp + 1] != k:
                ro, rp = ro, rp + 1
            else:  # the right side goes on after the run: the first entry with a larger key
                ro, rp = _locate(bk, bs, cnt, order, nb, k, n)
        if h > thr:
            return best
        # equal keys are in server order: the run's first fitting server is its best
        o, p = ao, ap
        while o < nb:
            b = order[o]
            if p >= cnt[b] or not _live(bm0, bm1, b, d0, d1):
                o += 1
                p = 0
                continue
            if bk[b, p] != k:
                break  # the end of the run
            steps += 1
            s = bs[b, p]
            if best >= 0 and s >= best:
                break  # the rest of the run has higher server indices
            if _fits(f0, f1, s, d0, d1, mask, use_mask):
                if best < 0:
                    thr = h + tol * (1.0 + h)
                best = s
                break
            p += 1
        if best < 0 and steps > cap:
            return GAVE_UP


@_jit
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
        if _fits(f0, f1, s, d0, d1, mask, use_mask):
            h = _h(rho, q[s], w)
            if h < best:
                best = h
                bests = s
    if bests < 0:
        return -1
    thr = best + tol * (1.0 + best)
    for s in range(bests):
        if _fits(f0, f1, s, d0, d1, mask, use_mask) and _h(rho, q[s], w) <= thr:
            return s
    return bests


class RatioIndex:
    """The index over a pool's two free-amount columns, with :func:`search` and :func:`scan`.

    Parameters
    ----------
    f0, f1 : ndarray of float64, shape (n_servers,)
        The free amounts of resource 0 and 1, *the arrays the engine updates in place*: the index
        reads them at every call, and must be told of every change (:meth:`move`).
    shift : int, default :data:`BLOCK_SHIFT`
        Blocks hold between 1 and ``2 ** (shift + 1) - 1`` entries.
    spare : int, optional
        Blocks beyond the ``ceil(n_servers / 2 ** shift)`` that one deal fills; default as many
        again plus 2. When a split finds none unused, every entry is dealt out again (tests use
        few to exercise that).

    Attributes
    ----------
    q, bk, bs, cnt, order, free, meta, bm0, bm1 : ndarray
        The index's arrays (:data:`Index`); ``ix`` holds them in that order for the kernels.
    """

    def __init__(
        self, f0: np.ndarray, f1: np.ndarray, shift: int = BLOCK_SHIFT, spare: int | None = None
    ) -> None:
        n = f0.shape[0]
        half = 1 << int(shift)
        dealt = -(-n // half)
        nblocks = dealt + (dealt + 2 if spare is None else max(1, int(spare)))
        self.f0, self.f1 = f0, f1
        self.q = np.empty(n)  # key per server
        self.bk = np.empty((nblocks, 2 * half))  # keys per block, in (key, server) order
        self.bs = np.zeros((nblocks, 2 * half), dtype=np.int64)  # their servers
        self.cnt = np.zeros(nblocks, dtype=np.int64)
        self.order = np.zeros(nblocks, dtype=np.int64)
        self.free = np.zeros(nblocks, dtype=np.int64)
        self.meta = np.zeros(2, dtype=np.int64)
        self.bm0 = np.empty(nblocks)
        self.bm1 = np.empty(nblocks)
        self.ix: Index = (
            *(self.q, self.bk, self.bs, self.cnt, self.order),
            *(self.free, self.meta, self.bm0, self.bm1),
        )
        self._nomask = np.zeros(1, dtype=bool)
        build(f0, f1, self.ix)

    def move(self, server: int) -> None:
        """Re-sort ``server`` after a placement on it or a completion."""
        move(self.f0, self.f1, self.ix, server)

    def blocks(self) -> list[tuple[np.ndarray, np.ndarray, float, float]]:
        """The blocks in key order: (keys, servers, largest free of resource 0, of resource 1)."""
        out = []
        for b in self.order[: self.meta[0]]:
            c = self.cnt[b]
            out.append((self.bk[b, :c], self.bs[b, :c], float(self.bm0[b]), float(self.bm1[b])))
        return out

    def search(
        self,
        d0: float,
        d1: float,
        w: float,
        tol: float,
        mask: np.ndarray | None,
        cap: int,
    ) -> int:
        """:func:`search` on this index: the server, -1, or :data:`GAVE_UP`."""
        use = mask is not None
        m = mask if mask is not None else self._nomask
        return int(search(self.ix, self.f0, self.f1, d0, d1, w, tol, m, use, cap))

    def scan(self, d0: float, d1: float, w: float, tol: float, mask: np.ndarray | None) -> int:
        """:func:`scan` over this index's pool: the server, or -1."""
        use = mask is not None
        m = mask if mask is not None else self._nomask
        return int(scan(self.q, self.f0, self.f1, d0, d1, w, tol, m, use))

    def best(
        self, d0: float, d1: float, w: float, tol: float, mask: np.ndarray | None, cap: int
    ) -> int:
        """The fitting server with the least H of eq. 9 for a task ``(d0, d1)``, ``d0 > 0``, or
        -1 when none fits: :func:`search`, then :func:`scan` if the walk gave up."""
        use = mask is not None
        m = mask if mask is not None else self._nomask
        f0, f1 = self.f0, self.f1
        s: int = search(self.ix, f0, f1, d0, d1, w, tol, m, use, cap)
        if s == GAVE_UP:
            s = scan(self.q, f0, f1, d0, d1, w, tol, m, use)
        return s
