"""Placement in progressive filling: on which server the served user's head task goes.

A :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling` scheduler names two parts:
its user selection (:mod:`fairsim.schedulers.user_selection`) and its placement, a
:class:`ServerChoice` given as the class attribute ``placement``. A choice searches the free
amounts of the servers and picks one of those that fit: :class:`FirstFit` the lowest-indexed,
:class:`BestFit` the one with the least ``H(i, l)`` of the DRFH paper's eq. 9. The Slots
baseline's choice, which searches private slot counters, is in :mod:`fairsim.schedulers.slots`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fairsim.simulator.cluster import ClusterView

if TYPE_CHECKING:  # numba is imported only when a pool is large enough for the index
    from types import ModuleType

    from fairsim.schedulers._ratio_index import RatioIndex

#: The scheduler a choice is bound to: a
#: :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling` (not imported here: that
#: module imports this one).
Filling = Any

#: Candidate lists longer than this are filtered with numpy in :meth:`ServerChoice.find_in`.
_VECTOR_MIN = 24
#: At most this many needs that fit no server are remembered between completions.
_UNFIT_MAX = 16


# ---------------------------------------------------------------------------------- server choice
class ServerChoice:
    """The space searched and the server picked for a user's head task.

    The default space is the cluster's free resources; a task fits a server when its need is at
    most the server's free amount of every resource (and the user's ``eligible`` mask and the
    task's placement constraint allow the server). :meth:`find` picks, among the fitting servers,
    the one :meth:`choose` returns. A choice is created and bound afresh for every run.

    Subclasses can customise by overriding these hooks:

    * :meth:`choose`: which of the fitting servers (default: the first); all a new choice needs.
    * :meth:`bind`: the choice's own run state (extend it, calling ``super().bind`` first; read
      the scheduler's parameters there).
    * A private search space (the Slots baseline's slot counters): :meth:`space` (the columns
      searched and their totals), :meth:`need` (a task's demand in those columns), :meth:`take`
      and :meth:`give` (a placement and a completion in that space; called only if overridden).
    * A faster search of the same rule: :meth:`find` (every server) and :meth:`find_in` (a woken
      user's candidate servers). A :meth:`find` that searched every server and found none must
      return :meth:`unfit_everywhere` (it remembers the need until the next completion, so that
      a head at least as large in every column is blocked without a search); a :meth:`find`
      with another fit rule than "free amount >= need in every column" must return -1 directly
      instead, and override :meth:`find_in` too.

    Attributes
    ----------
    cols : list of ndarray
        The free-amount columns searched, each of shape (n_servers,) (the engine's own memory for
        the default space: they change as the engine commits and releases tasks).
    total : ndarray, shape (n_columns,)
        Total of each column over all servers.
    n_columns : int
        Number of columns.
    eligible : mapping of int to ndarray of bool, or None
        The scheduler's per-user server masks.
    tmask : ndarray of bool or None
        Placement constraint of the task being placed (set by the scheduler), or None.
    """

    def bind(self, sched: Filling, cluster: ClusterView) -> None:
        """Attach to a scheduler being bound to ``cluster``: the search space and its state
        (extend it for the part's own state, calling ``super().bind(sched, cluster)`` first)."""
        cols, total = self.space(sched, cluster)
        self.cols = cols
        self.total = np.asarray(total, dtype=np.float64)
        self.n_columns = len(cols)
        self.eligible = sched.eligible
        self.tmask: np.ndarray | None = None
        n = cluster.n_servers
        self._buf = np.empty(n, dtype=bool)
        self._buf2 = np.empty(n, dtype=bool)
        # an upper bound of the per-resource maximum free amount: placements only lower free
        # amounts, completions raise it (the scheduler), and a failed scan makes it exact again
        self.maxfree = [float(c.max()) for c in cols]
        # Needs that a search over every server found fitting nowhere since the last completion
        # (none dominates another). Free amounts only fall between completions, so a need at
        # least as large in every resource fits nowhere either: the scheduler blocks it unsearched.
        self.unfit: list[tuple[float, ...]] = []
        # compiled searches (schedulers/_fill_kernel.py) for two float64 columns, or None
        self._kernels: ModuleType | None = sched._kernels_for(cols)
        self._ff2 = self._kernels is not None and all(
            getattr(type(self), m) is getattr(FirstFit, m)
            for m in ("find", "fit_mask", "unfit_everywhere", "_scan_failed", "choose")
        )
        self._mf2 = np.empty(2)

    # ------------------------------------------------------------------ the space
    def space(self, sched: Filling, cluster: ClusterView) -> tuple[list[np.ndarray], np.ndarray]:
        """The free-amount columns to search, each shape (n_servers,), and their totals (default:
        the cluster's free resources and total capacity)."""
        cols = [cluster.free[:, r] for r in range(cluster.n_resources)]
        return cols, np.asarray(cluster.total, dtype=np.float64)

    def need(self, demand: tuple[float, ...]) -> tuple[float, ...]:
        """A task's demand in the search space (default: its resource demand)."""
        return demand

    def take(self, server: int, need: tuple[float, ...]) -> None:
        """Account a placement in a private space (default: none, the engine commits)."""

    def give(self, server: int, need: tuple[float, ...]) -> None:
        """Account a completion in a private space (default: none, the engine releases)."""

    # ------------------------------------------------------------------ the choice
    def choose(self, need: tuple[float, ...], idx: np.ndarray) -> int:
        """Pick among the fitting servers ``idx`` (sorted, non-empty): default the first."""
        return int(idx[0])

    def find(self, need: tuple[float, ...], user: int) -> int:
        """Server for the head task of ``user`` with this need, or -1 if none fits: the
        :meth:`choose` of every fitting server."""
        if self.hopeless(need):
            return -1
        idx = np.flatnonzero(self.fit_mask(need, user))
        if idx.size == 0:
            return self.unfit_everywhere(need, user)
        return self.choose(need, idx)

    def find_in(self, need: tuple[float, ...], user: int, servers: list[int]) -> int:
        """Like :meth:`find`, knowing that no server outside ``servers`` can fit the task (a woken
        user's candidates)."""
        cols, k_range = self.cols, range(self.n_columns)
        elig = self.eligible.get(user) if self.eligible else None
        if self.tmask is not None:
            elig = self.tmask if elig is None else elig & self.tmask
        if len(servers) > _VECTOR_MIN:  # long candidate lists: one numpy pass per resource
            idx = np.array(servers, dtype=np.int64)
            ok = cols[0][idx] >= need[0]
            for k in range(1, self.n_columns):
                ok &= cols[k][idx] >= need[k]
            if elig is not None:
                ok &= elig[idx]
            fit = np.unique(idx[ok])
            if fit.size == 0:
                return self._unfit_candidates(need, user)
            return int(fit[0]) if fit.size == 1 else self.choose(need, fit)
        fitting = [
            s
            for s in servers
            if all(cols[k][s] >= need[k] for k in k_range) and (elig is None or elig[s])
        ]
        if not fitting:
            return self._unfit_candidates(need, user)
        if len(fitting) == 1:
            return fitting[0]
        return self.choose(need, np.array(sorted(set(fitting)), dtype=np.int64))

    def fit_mask(self, need: tuple[float, ...], user: int) -> np.ndarray:
        """Boolean mask (n_servers,) of the servers whose free amounts cover ``need`` (the user's
        eligible servers and the task's placement constraint applied; a buffer reused by the
        next call)."""
        cols, buf = self.cols, self._buf
        np.greater_equal(cols[0], need[0], out=buf)
        if self.n_columns > 1:
            tmp = self._buf2
            for k in range(1, self.n_columns):
                np.greater_equal(cols[k], need[k], out=tmp)
                buf &= tmp
        if self.eligible and user in self.eligible:
            buf &= self.eligible[user]
        if self.tmask is not None:
            buf &= self.tmask
        return buf

    # ------------------------------------------------------------------ helpers of find
    def hopeless(self, need: tuple[float, ...]) -> bool:
        """True if some resource's need exceeds every server's free amount (no scan needed)."""
        mf = self.maxfree
        for k in range(self.n_columns):
            if need[k] > mf[k]:
                return True
        return False

    def _scan_failed(self) -> int:
        self.maxfree[:] = [float(c.max()) for c in self.cols]
        return -1

    def unfit_everywhere(self, need: tuple[float, ...], user: int) -> int:
        """What :meth:`find` returns when its search of every server found no room for ``need``:
        remembers the need until the next completion, makes :attr:`maxfree` exact, returns -1."""
        self._remember_unfit(need, user)
        return self._scan_failed()

    def _unfit_candidates(self, need: tuple[float, ...], user: int) -> int:
        """No candidate of :meth:`find_in` holds ``need``; no other server has gained free
        resources since the user was blocked, so none fits: remember the need, return -1."""
        self._remember_unfit(need, user)
        return -1

    def _remember_unfit(self, need: tuple[float, ...], user: int) -> None:
        """Remember that no server holds ``need`` under the default fit rule, when no mask
        (eligibility, placement constraint) narrowed the search."""
        if self.tmask is not None or (self.eligible and user in self.eligible):
            return
        unfit = self.unfit
        if unfit:
            # drop remembered needs at least as large as this one (it says more)
            if self.n_columns == 2:
                n0, n1 = need
                unfit[:] = [u for u in unfit if u[0] < n0 or u[1] < n1]
            else:
                unfit[:] = [u for u in unfit if any(a < b for a, b in zip(u, need, strict=True))]
            if len(unfit) >= _UNFIT_MAX:
                return
        unfit.append(need)

    def known_unfit(self, need: tuple[float, ...]) -> bool:
        """True if ``need`` is at least a remembered unfit need in every resource: no server can
        hold it until a task completes (exact, not a heuristic)."""
        if self.n_columns == 2:
            n0, n1 = need
            for u0, u1 in self.unfit:
                if n0 >= u0 and n1 >= u1:
                    return True
            return False
        return any(all(a >= b for a, b in zip(need, u, strict=True)) for u in self.unfit)


class FirstFit(ServerChoice):
    """First-Fit (DRFH paper, Section V-B): the lowest-indexed server that fits the task.

    With two resources the search is a compiled loop (:func:`fairsim.schedulers._fill_kernel.
    first_fit2`) that compares exactly as the numpy code.
    """

    def find(self, need: tuple[float, ...], user: int) -> int:
        """The first server that fits ``need``, or -1."""
        if self.hopeless(need):
            return -1
        if self._ff2 and self.tmask is None and not (self.eligible and user in self.eligible):
            c0, c1 = self.cols
            assert self._kernels is not None
            i: int = self._kernels.first_fit2(c0, c1, need[0], need[1], self._mf2)
            if i < 0:  # as unfit_everywhere, with the maxima the kernel found
                self._remember_unfit(need, user)
                self.maxfree[:] = self._mf2.tolist()
            return i
        fit = self.fit_mask(need, user)
        i = int(fit.argmax())
        return i if fit[i] else self.unfit_everywhere(need, user)


class BestFit(ServerChoice):
    """Best-Fit (DRFH paper, Section V-B, heuristic H(i, l) of eq. 9): the fitting server with
    the least ``H(i, l) = ||D_i/D_i1 - c̄_l/c̄_l1||_1``; ties go to the lowest server index.

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

    def bind(self, sched: Filling, cluster: ClusterView) -> None:
        """Bind, and precompute the eq. 9 weights ``T_k0 / T_r`` for every normalising k0."""
        super().bind(sched, cluster)
        t = [float(x) for x in self.total]
        k = self.n_columns
        # hw[k0][r]: weight of resource r when the task is normalised by resource k0 (a resource
        # no server has weighs 0: its free amounts and any fitting need of it are 0)
        self.hw = [[t[k0] / t[r] if t[r] > 0 else 0.0 for r in range(k)] for k0 in range(k)]
        self.rx: RatioIndex | None = None
        big = cluster.n_servers >= self.INDEX_MIN_SERVERS
        if self.use_index and big and k == 2 and self.hw[0][1] > 0:
            f0 = np.ascontiguousarray(self.cols[0])
            f1 = np.ascontiguousarray(self.cols[1])
            # the index reads the engine's free columns in place: they must be that memory
            if np.shares_memory(f0, self.cols[0]) and np.shares_memory(f1, self.cols[1]):
                from fairsim.schedulers._ratio_index import RatioIndex

                self.rx = RatioIndex(f0, f1)

    def take(self, server: int, need: tuple[float, ...]) -> None:
        """Move the server in the ratio index (its free amounts changed)."""
        if self.rx is not None:
            self.rx.move(server)

    def give(self, server: int, need: tuple[float, ...]) -> None:
        """Move the server in the ratio index (its free amounts changed)."""
        if self.rx is not None:
            self.rx.move(server)

    def find(self, need: tuple[float, ...], user: int) -> int:
        """The fitting server with the least H (through the ratio index when it applies)."""
        if self.hopeless(need):
            return -1
        if self.rx is not None and need[0] > 0:
            return self._find_indexed(need, user)
        idx = np.flatnonzero(self.fit_mask(need, user))
        if idx.size == 0:
            return self.unfit_everywhere(need, user)
        return self.choose(need, idx)

    def _find_indexed(self, need: tuple[float, ...], user: int) -> int:
        """:meth:`find` through the ratio index (two resources, ``need[0] > 0``)."""
        mask = self.tmask
        if self.eligible and user in self.eligible:
            el = self.eligible[user]
            mask = el if mask is None else el & mask
        rx = self.rx
        assert rx is not None
        s = rx.best(need[0], need[1], self.hw[0][1], self.H_TIE_TOL, mask, self.INDEX_CAP)
        return s if s >= 0 else self.unfit_everywhere(need, user)

    def choose(self, need: tuple[float, ...], idx: np.ndarray) -> int:
        """The fitting server with the least H(i, l) (eq. 9); ties to the lowest index."""
        if idx.size == 1:
            return int(idx[0])
        k0 = next((k for k, x in enumerate(need) if x > 0), -1)
        if k0 < 0:  # a task that demands nothing fits anywhere equally well
            return int(idx[0])
        cols, w = self.cols, self.hw[k0]
        base = cols[k0][idx]
        h = None
        for k in range(self.n_columns):
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
