"""First-Fit and Best-Fit DRFH: progressive filling by global dominant share (DRFH paper,
Section V-B).

The scheduler serves the user with the lowest (weighted) global dominant share (eqs. 2-3) and
places its head task on the first server that fits it (First-Fit) or on the fitting server with
the least ``H(i, l)`` of eq. 9 (Best-Fit). The filling loop, blocking and wake-ups are those of
:class:`fairsim.schedulers.progressive_filling.ProgressiveFilling`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.simulator.cluster import ClusterView

if TYPE_CHECKING:  # numba is imported only when a pool is large enough for the index
    from fairsim.schedulers._ratio_index import RatioIndex


class FirstFitDRFH(ProgressiveFilling):
    """First-Fit DRFH (DRFH paper, Section V-B).

    Serves the user with the lowest weighted global dominant share and places its head task on
    the lowest-indexed server that fits it.
    """

    name = "ff-drfh"


class BestFitDRFH(ProgressiveFilling):
    """Best-Fit DRFH (DRFH paper, Section V-B, heuristic H(i, l) of eq. 9).

    Serves the user with the lowest weighted global dominant share and places its head task on
    the fitting server with the least ``H(i, l) = ||D_i/D_i1 - c̄_l/c̄_l1||_1``; ties go to the
    lowest server index.

    Notes
    -----
    In eq. 9 both vectors are shares of the pool's total capacity (Section III-A: ``D_ir`` is
    the share of resource r a task needs "over the entire system", ``c̄_lr`` the share of r free
    on server l). With raw amounts ``d`` (demand), ``f_l`` (free) and totals ``T`` this is

        H(i, l) = Σ_r (T_1 / T_r) · | d_r / d_1 - f_lr / f_l1 |,

    which we evaluate (one weight per resource, computed once at bind). With two resources the
    weights only scale H, so the choice is that of the raw ratios; with three or more they
    change it. Values within ``1e-9 · (1 + min H)`` of the least H count as ties, so that
    floating-point rounding never decides between servers that eq. 9 rates equal.

    With two resources and at least :attr:`INDEX_MIN_SERVERS` servers the search does not scan
    every server: an index keeps the servers sorted by their ratio of free amounts and walks
    outward from the task's ratio (:mod:`fairsim.schedulers._ratio_index`), making exactly the
    choice of the scan above (``tests/properties/test_ratio_index.py``). Its cost grows with the
    number of non-fitting servers nearer the task's ratio than the best fitting one, not with the
    pool's size.

    Eq. 9 normalises by the first resource (CPU). For a task whose CPU demand is zero the
    normalisation is undefined; we then normalise both vectors by the first resource the task
    does demand (a fitting server has a positive free amount of it); a task demanding nothing goes
    to the first server. This is our extension.
    """

    name = "bf-drfh"

    #: Values of H within ``H_TIE_TOL * (1 + min H)`` of the least are a tie (lowest index wins).
    H_TIE_TOL = 1e-9
    #: Servers the ratio index visits before it falls back to one compiled pass over all servers.
    INDEX_CAP = 512
    #: Whether to search through the ratio index when it applies (False: always scan; for tests).
    use_index = True
    #: Smallest pool that gets the index: below it, keeping the index costs about what the scan
    #: saves (Google sample, paired: 1.00x the scan's wall time at 2,000 servers, and numba's
    #: import adds about 100 MiB; docs/bench.md).
    INDEX_MIN_SERVERS = 4_096

    def bind(self, cluster: ClusterView) -> None:
        """Bind, and precompute the eq. 9 weights ``T_k0 / T_r`` for every normalising k0."""
        super().bind(cluster)
        t = self._total
        # _hw[k0][r]: weight of resource r when the task is normalised by resource k0 (a resource
        # no server has weighs 0: its free amounts and any fitting need of it are 0)
        self._hw = [
            [t[k0] / t[r] if t[r] > 0 else 0.0 for r in range(self._k)] for k0 in range(self._k)
        ]
        self._rx: RatioIndex | None = None
        big = cluster.n_servers >= self.INDEX_MIN_SERVERS
        if self.use_index and big and self._k == 2 and self._hw[0][1] > 0:
            f0 = np.ascontiguousarray(self._cols[0])
            f1 = np.ascontiguousarray(self._cols[1])
            # the index reads the engine's free columns in place: they must be that memory
            if np.shares_memory(f0, self._cols[0]) and np.shares_memory(f1, self._cols[1]):
                from fairsim.schedulers._ratio_index import RatioIndex

                self._rx = RatioIndex(f0, f1)

    def _take(self, server: int, need: tuple[float, ...]) -> None:
        if self._rx is not None:
            self._rx.move(server)

    def _give(self, server: int, need: tuple[float, ...]) -> None:
        if self._rx is not None:
            self._rx.move(server)

    def _find(self, need: tuple[float, ...], user: int) -> int:
        if self._hopeless(need):
            return -1
        if self._rx is not None and need[0] > 0:
            return self._find_indexed(need, user)
        idx = np.flatnonzero(self._fit_mask(need, user))
        if idx.size == 0:
            return self._unfit_everywhere(need, user)
        return self._choose(need, idx)

    def _find_indexed(self, need: tuple[float, ...], user: int) -> int:
        """:meth:`_find` through the ratio index (two resources, ``need[0] > 0``)."""
        mask = self._tmask
        if self.eligible and user in self.eligible:
            el = self.eligible[user]
            mask = el if mask is None else el & mask
        rx = self._rx
        assert rx is not None
        s = rx.best(need[0], need[1], self._hw[0][1], self.H_TIE_TOL, mask, self.INDEX_CAP)
        return s if s >= 0 else self._unfit_everywhere(need, user)

    def _choose(self, need: tuple[float, ...], idx: np.ndarray) -> int:
        """The fitting server with the least H(i, l) (eq. 9); ties to the lowest index."""
        if idx.size == 1:
            return int(idx[0])
        k0 = next((k for k, x in enumerate(need) if x > 0), -1)
        if k0 < 0:  # a task that demands nothing fits anywhere equally well
            return int(idx[0])
        cols, w = self._cols, self._hw[k0]
        base = cols[k0][idx]
        h = None
        for k in range(self._k):
            if k == k0 or w[k] == 0.0:
                continue
            term = cols[k][idx]  # a fresh array: the arithmetic below is in place
            np.divide(term, base, out=term)
            np.subtract(need[k] / need[k0], term, out=term)
            np.abs(term, out=term)
            if w[k] != 1.0:
                np.multiply(term, w[k], out=term)
            if h is None:
                h = term
            else:
                h += term
        if h is None:  # no other resource to compare: every fitting server is as good
            return int(idx[0])
        i = int(h.argmin())
        if i:  # an earlier server within the tie tolerance wins
            lo = float(h[i])
            near = h[:i] <= lo + self.H_TIE_TOL * (1.0 + lo)
            j = int(near.argmax())
            if near[j]:
                i = j
        return int(idx[i])
