"""Progressive filling of indivisible tasks: the base class of the online DRF-family schedulers.

First-Fit and Best-Fit DRFH (:mod:`fairsim.schedulers.drfh`), the Slots baseline
(:mod:`fairsim.schedulers.slots`) and the online baselines
(:mod:`fairsim.schedulers.online_baselines`) are subclasses.

DRFH paper (Wang, Li, Liang, "Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers"), Section V-B: "whenever there is a scheduling opportunity, the scheduler
always accommodates the user with the lowest global dominant share"; First-Fit picks the first
server that fits the task, Best-Fit the server with the least

    H(i, l) = || D_i / D_i1 - c̄_l / c̄_l1 ||_1                                   (eq. 9)

where c̄_l is server l's free resource vector. The global dominant share of user i is
G_i = max_r (Σ_l A_ilr) / (Σ_l c_lr) (Section IV-A, eqs. 2-3, for non-wasteful allocations),
divided by the user's weight w_i for weighted users (Section V-A).

Design (what makes it fast on real traces)
------------------------------------------
* Users waiting for resources sit in a heap keyed by ``(weighted dominant share, user code)``;
  ties are broken by the user code, i.e. by order of first appearance, never by dict order.
* A user whose head task fits nowhere is *blocked* and leaves the heap. Servers only lose free
  resources between completions, so a blocked user can only become placeable when a task
  finishes; then only the servers that released resources need checking, against the head
  demands of all blocked users at once (one vectorised comparison per freed server). No step
  rescans every submitted task.
* Tasks of a user are served in submission order (head-of-line): a user's next task is
  considered only after its head task is placed.
* With two resources (the Google and Alibaba traces) the First-Fit search and the check of the
  blocked heads against a freed server are compiled loops (:mod:`fairsim.schedulers._fill_kernel`,
  numba) that compare exactly as the numpy code, which serves every other case.

Subclasses choose the space searched, the server choice and the user's key through the extension
points listed in :class:`ProgressiveFilling`'s docstring (examples: :mod:`fairsim.schedulers.drfh`,
:mod:`fairsim.schedulers.slots`, :mod:`fairsim.schedulers.online_baselines`).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator, Mapping

import numpy as np

from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.scheduler import Scheduler

_GROW = 64
#: A woken user with more candidate servers than this searches every server (the same choice:
#: no server outside its candidates can fit) instead of keeping the list.
_CANDS_MAX = 16
#: Wake-ups with more (freed server, fitting blocked user) pairs than this are vectorised, and so
#: is the search for those pairs when there are more (freed server, blocked user) pairs to test.
_PAIRS_VECTOR = 256
#: Most (server, blocked user) pairs compared at once by :meth:`ProgressiveFilling._fits_many`.
_FITS_BLOCK = 1 << 20


#: Candidate lists longer than this are filtered with numpy in :meth:`ProgressiveFilling._find_in`.
_VECTOR_MIN = 24
#: At most this many needs that fit no server are remembered between completions.
_UNFIT_MAX = 16
#: Use the compiled searches of :mod:`fairsim.schedulers._fill_kernel` where the search space
#: allows them (two float64 columns); the tests turn this off to check the numpy code as well.
_COMPILED = True


class ProgressiveFilling(Scheduler):
    """Serve the user with the lowest weighted dominant share; place its head task.

    Parameters
    ----------
    weights : mapping of int to float, optional
        Weight w_i of a user code (default 1 for every user). DRFH paper, Section V-A.
    eligible : mapping of int to ndarray of bool, optional
        Per-user mask of shape ``(n_servers,)`` of the servers the user's tasks may run on
        (placement constraints). Users not in the mapping may use every server.

    Notes
    -----
    The dominant share is computed in the scheduler's own accounting space: for DRFH that is the
    cluster's resources (global dominant share), for Slots the number of slots.

    Subclasses can customise by overriding (besides the
    :class:`~fairsim.simulator.scheduler.Scheduler` methods :meth:`bind`, :meth:`placeable` and
    :meth:`placeable_on`) these hooks, grouped by what they decide:

    *The space searched* (default: the cluster's free resources)

    * :meth:`_space` ``(cluster) -> (columns, totals)``: the free-amount columns to search, each
      shape (n_servers,), and their totals (Slots: private slot counters);
    * :meth:`_need` ``(demand) -> need``: a task's demand in that space;
    * :meth:`_take` / :meth:`_give` ``(server, need)``: account a placement / completion in a
      private space (default: nothing, the engine commits and releases the real resources).

    *The server choice* (default: First-Fit)

    * :meth:`_find` ``(need, user) -> server or -1``: the server for the head task;
    * :meth:`_find_in` ``(need, user, servers)``: the same, knowing that only ``servers`` can fit
      (a woken user's candidates);
    * :meth:`_choose` ``(need, idx) -> server``: pick among fitting servers (Best-Fit: eq. 9);
    * :meth:`_fit_mask` ``(need, user)``: bool mask of the servers that fit (eligibility and the
      task's placement constraint applied);
    * :meth:`_hopeless` ``(need)``: a cheap test that nothing can fit;
    * :meth:`_unfit_everywhere` ``(need, user) -> -1``: what a :meth:`_find` returns when a search
      of every server found no room. It remembers the need until the next completion, and
      :meth:`decide` then blocks any head at least as large in every resource without a search
      (free amounts only fall between completions). A :meth:`_find` with another fit rule than
      "free amount >= need in every resource" must return -1 directly instead, and override
      :meth:`_find_in` too.

    *The user's key* (default: weighted global dominant share)

    * :meth:`_update_share` ``(user)``: recompute ``_share[user]`` from its allocation;
    * :meth:`_account` ``(user, need, sign)``: told about every placement (+1) and completion
      (-1) when :attr:`_accounts` is set, for keys summed over tasks;
    * :meth:`_ensure_user` ``(user)``: grow the per-user state (extend it for per-user state of
      the subclass);
    * :meth:`_refresh` ``(users)``, :meth:`_before_pass` ``()``, :meth:`_after_place` ``()``,
      :meth:`_rebuild_heap` ``()``: re-key users whose key moved without a change of their own
      allocation (with :attr:`_dynamic` / :attr:`_rekey_each`);
    * :meth:`_reserves` ``() -> bool``: whether woken users may reserve room in key order;
    * :meth:`_share_order` ``(users)``: the order in which woken users are considered.

    *Class flags*

    * :attr:`_dynamic`: a user's key can change without a change of its own allocation;
    * :attr:`_rekey_each`: a placement may change the other users' keys (:meth:`_after_place`
      runs after each one);
    * :attr:`_accounts`: :meth:`_account` is called on every placement and completion.

    Overriding any other method (the filling loop :meth:`decide`, the blocking and wake-up
    logic) is not supported: ``tests/properties/test_progressive_reference.py`` checks those
    against a naive rescan.
    """

    name = "progressive-filling"

    #: Whether a user's key can change without a change in its own allocation (it depends on the
    #: other users or on a global quantity). Then blocked users' keys are recomputed before they
    #: are woken in key order, and :meth:`_rebuild_heap` re-keys the waiting users.
    _dynamic = False
    #: Whether a placement may change the other users' keys (BMF's ranks): :meth:`_after_place`
    #: runs after each placement, and woken users reserve nothing.
    _rekey_each = False
    #: Whether :meth:`_account` must be told about every placement and completion.
    _accounts = False

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        self.weights = weights
        self.eligible = eligible

    # ------------------------------------------------------------------ space (override these)
    def _space(self, cluster: ClusterView) -> tuple[list[np.ndarray], np.ndarray]:
        """The free-amount columns to search, each shape (n_servers,), and their totals."""
        cols = [cluster.free[:, r] for r in range(cluster.n_resources)]
        return cols, np.asarray(cluster.total, dtype=np.float64)

    def _need(self, demand: tuple[float, ...]) -> tuple[float, ...]:
        """A task's demand in the search space (default: its resource demand)."""
        return demand

    def _take(self, server: int, need: tuple[float, ...]) -> None:
        """Account a placement in a private space (default: none, the engine commits)."""

    def _give(self, server: int, need: tuple[float, ...]) -> None:
        """Account a completion in a private space (default: none, the engine releases)."""

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether some server of the empty cluster could ever run a task with this demand.

        The engine asks this on arrival and never queues a task that fits no server (it would
        otherwise block its user's queue for ever); such tasks are reported as unplaceable.
        """
        need = self._need(demand)
        if self._k == 2:  # the loop below, written out for two resources
            n0, n1 = need
            for c0, c1 in self._capacity_classes:
                if not (n0 > c0 or n1 > c1):
                    return True
            return False
        k_range = range(self._k)
        for cap in self._capacity_classes:
            for k in k_range:
                if need[k] > cap[k]:
                    break
            else:
                return True
        return False

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Whether some server of ``mask`` could ever run the task, in the scheduler's units."""
        caps = self._mask_caps.get(id(mask))
        if caps is None:
            sub = np.unique(self._space_caps[np.asarray(mask, dtype=bool)], axis=0)
            caps = self._mask_caps[id(mask)] = [tuple(float(x) for x in c) for c in sub]
        need = self._need(demand)
        return any(all(n <= c for n, c in zip(need, cap, strict=True)) for cap in caps)

    # ------------------------------------------------------------------ binding and events
    def bind(self, cluster: ClusterView) -> None:
        """Attach to a cluster and allocate per-user run state."""
        super().bind(cluster)
        self._cols, total = self._space(cluster)
        self._total = [float(t) for t in total]
        self._k = len(self._cols)
        n = cluster.n_servers
        self._buf = np.empty(n, dtype=bool)
        self._buf2 = np.empty(n, dtype=bool)
        caps = np.stack([c.copy() for c in self._cols], axis=1)
        self._space_caps = caps  # capacity of every server in the scheduler's units
        self._mask_caps: dict[int, list[tuple[float, ...]]] = {}
        classes = np.unique(caps, axis=0)
        # keep only capacity classes not dominated by another (enough to decide placeability)
        keep = [c for c in classes if not any(np.all(o >= c) and np.any(o > c) for o in classes)]
        self._capacity_classes = [tuple(float(x) for x in c) for c in keep]
        self._alloc: list[list[float]] = []
        self._share: list[float] = []
        self._w: list[float] = []
        self._blocked: list[bool] = []
        # blocked users, packed: their head needs (one row each) and ids; _bpos[user] is the row
        self._bh = np.empty((_GROW, self._k))
        self._bu = np.empty(_GROW, dtype=np.int64)
        self._bpos: dict[int, int] = {}
        self._inheap: list[bool] = []
        self._version: list[int] = []
        self._queues: list[deque[tuple[int, tuple[float, ...]]]] = []
        self._heap: list[tuple[float, int, int]] = []
        self._freed: list[int] = []
        # Servers a just-unblocked user's head task may fit on: the freed servers it passed the
        # check for. Every other server has not gained resources since the user was blocked.
        self._cands: dict[int, list[int]] = {}
        self._recheck: set[int] = set()  # freed servers where a fitting user was left blocked
        self._bneed: dict[int, tuple[float, ...]] = {}  # blocked head needs, as tuples
        # A lower bound of the per-resource minimum of the blocked head needs: a freed server
        # with less free than that of some resource can wake nobody. It may go stale-low when
        # users wake (still a valid bound) and is recomputed after a check that found nobody
        # (the compiled check sets it to the exact minimum whenever it compares the rows).
        self._bmin = np.full(self._k, np.inf)
        self._bmin_stale = False
        self._maxfree = [float(c.max()) for c in self._cols]
        # Compiled searches (schedulers/_fill_kernel.py) for two float64 columns: the wake-up's
        # phase 1 always, the First-Fit search when _find's own hooks are not overridden
        self._kern2 = (
            _COMPILED
            and self._k == 2
            and all(
                c.dtype == np.float64 and c.ndim == 1 and c.flags.c_contiguous for c in self._cols
            )
        )
        self._ff2 = self._kern2 and all(
            getattr(type(self), m) is getattr(ProgressiveFilling, m)
            for m in ("_find", "_fit_mask", "_unfit_everywhere", "_scan_failed")
        )
        if self._kern2:
            # imported here: numba costs every run that imports the registry ~55 MB
            from fairsim.schedulers import _fill_kernel

            self._kernels = _fill_kernel
            self._mf2 = np.empty(2)
        # Needs that a search over every server found fitting nowhere since the last completion
        # (none dominates another). Free amounts only fall between completions, so a need at
        # least as large in every resource fits nowhere either: decide() blocks it unsearched.
        self._unfit: list[tuple[float, ...]] = []
        self._n_blocked = 0
        self._n_pending = 0
        # per-task placement constraints (simulator/constraints.py): the head task's server mask
        # while it is being placed, and the masks of blocked heads
        self._constrained = cluster.constrained
        self._tmask: np.ndarray | None = None
        self._bmask: dict[int, np.ndarray] = {}

    def _ensure_user(self, user: int) -> None:
        """Grow the per-user state to hold ``user`` (extend it for per-user state of a subclass,
        calling ``super()._ensure_user(user)`` first)."""
        n_old = len(self._queues)
        if user < n_old:
            return
        n_new = max(user + 1, n_old + _GROW)
        for u in range(n_old, n_new):
            wu = float(self.weights.get(u, 1.0)) if self.weights else 1.0
            if not wu > 0:
                raise ValueError(f"weight of user {u}: {wu!r} (expected > 0)")
            self._w.append(wu)
            self._alloc.append([0.0] * self._k)
            self._share.append(0.0)
            self._blocked.append(False)
            self._inheap.append(False)
            self._version.append(0)
            self._queues.append(deque())

    def _push(self, user: int) -> None:
        v = self._version[user] + 1
        self._version[user] = v
        self._inheap[user] = True
        heapq.heappush(self._heap, (self._share[user], user, v))

    def _account(self, user: int, need: tuple[float, ...], sign: int) -> None:
        """A task of ``user`` with this need was placed (``sign=1``) or finished (``sign=-1``).

        Called before :meth:`_update_share` when :attr:`_accounts` is set; for keys that are
        sums of per-task terms (:mod:`fairsim.schedulers.online_baselines`).
        """

    def _refresh(self, users: list[int]) -> None:
        """Recompute the keys of blocked ``users`` about to be woken (when :attr:`_dynamic`)."""
        for u in users:
            self._update_share(u)

    def _reserves(self) -> bool:
        """Whether woken users may reserve room in share order (keys stable within a pass)."""
        return not self._rekey_each

    def _before_pass(self) -> None:
        """Called at the start of :meth:`decide` when :attr:`_dynamic` (default: nothing)."""

    def _after_place(self) -> None:
        """Called after every placement when :attr:`_rekey_each` (default: re-key the heap)."""
        self._rebuild_heap()

    def _rebuild_heap(self) -> None:
        """Re-key every waiting (in-heap) user with a fresh :meth:`_update_share`."""
        users = sorted({u for _, u, v in self._heap if v == self._version[u]})
        self._heap = []
        for u in users:
            self._update_share(u)
            v = self._version[u] + 1
            self._version[u] = v
            self._heap.append((self._share[u], u, v))
        heapq.heapify(self._heap)

    def _update_share(self, user: int) -> None:
        """Set ``_share[user]``, the user's key (lowest served first), from its allocation
        ``_alloc[user]`` in the search space: the weighted dominant share by default."""
        a = self._alloc[user]
        t = self._total
        if self._k == 2:  # max() of the two, written out
            x, y = a[0] / t[0], a[1] / t[1]
            self._share[user] = (y if y > x else x) / self._w[user]
        else:
            self._share[user] = max([a[k] / t[k] for k in range(self._k)]) / self._w[user]

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue ``task`` behind the user's earlier tasks."""
        if user >= len(self._queues):
            self._ensure_user(user)
        q = self._queues[user]
        q.append((task, self._need(demand)))
        self._n_pending += 1
        if len(q) == 1 and not self._blocked[user] and not self._inheap[user]:
            self._push(user)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Release the task's share and remember that ``server`` has new free resources."""
        need = self._need(demand)
        self._give(server, need)
        self._unfit.clear()  # the server gained free resources
        if self._accounts:
            self._account(user, need, -1)
        mf, cols = self._maxfree, self._cols
        for k in range(self._k):
            if cols[k][server] > mf[k]:
                mf[k] = float(cols[k][server])
        a = self._alloc[user]
        for k in range(self._k):
            a[k] -= need[k]
        self._update_share(user)
        if self._inheap[user]:
            self._push(user)  # re-key: the older heap entry becomes stale
        self._freed.append(server)

    def pending(self) -> int:
        """Number of queued tasks not yet placed."""
        return self._n_pending

    # ------------------------------------------------------------------ blocking
    def _block(self, user: int, need: tuple[float, ...]) -> None:
        if self._tmask is not None:
            self._bmask[user] = self._tmask
        self._blocked[user] = True
        row = self._n_blocked
        if row == self._bu.shape[0]:
            self._bh = np.vstack([self._bh, np.empty_like(self._bh)])
            self._bu = np.concatenate([self._bu, np.empty_like(self._bu)])
        self._bh[row] = need
        self._bu[row] = user
        self._bpos[user] = row
        self._bneed[user] = need
        self._n_blocked += 1
        bmin = self._bmin
        for k in range(self._k):
            if need[k] < bmin[k]:
                bmin[k] = need[k]

    def _unblock_freed(self) -> None:
        """Wake the blocked users whose head task may now fit on a freed server.

        Phase 1 finds, per freed server, the blocked users whose head fits its free amounts (one
        vectorised comparison per server, or per block of servers with :meth:`_fits_many` when
        there are many pairs to test). Phase 2 wakes them in share order, but only as many as
        the server can hold: users with this server as their *only* candidate reserve their need
        on it, and a later (higher-share) user that no longer fits the remainder stays blocked —
        in progressive filling the lower-share users would take that room first. Users with
        several candidate servers are always woken (they reserve nothing). When a reserving user
        finds its server taken (by a lower-share user), :meth:`decide` re-runs this for that
        server at once, and before it stops it re-checks every server where a fitting user was
        left blocked, so the decisions equal those of a full rescan
        (``tests/properties/test_progressive_reference.py``).
        """
        freed = self._freed
        self._freed = []
        if len(freed) > 1:
            freed = list(dict.fromkeys(freed))  # unique, in completion order
        nb = self._n_blocked
        if not nb:
            return
        if self._bmin_stale:
            self._bmin = self._bh[:nb].min(axis=0)
            self._bmin_stale = False
        bmin, k_range = self._bmin, range(self._k)
        f_srv: list[int] = []  # freed servers some blocked head fits on
        f_users: list[np.ndarray] = []  # ... and those users (int64 ids)
        if len(freed) * nb > _PAIRS_VECTOR:
            pairs = self._fits_many(freed, self._bh[:nb], self._bu[:nb], bmin)
        elif self._kern2:  # compiled; it keeps bmin exact itself
            fitting, (c0, c1) = self._kernels.blocked_fitting2, self._cols
            pairs = []
            for server in freed:
                users = fitting(c0, c1, server, self._bh, self._bu, nb, bmin)
                if users.size:
                    pairs.append((server, users))
        else:
            cols, bh, bu = self._cols, self._bh[:nb], self._bu[:nb]
            pairs = []
            for server in freed:
                if any(cols[k][server] < bmin[k] for k in k_range):
                    continue
                fits = bh[:, 0] <= cols[0][server]
                for k in range(1, self._k):
                    fits &= bh[:, k] <= cols[k][server]
                users = bu[fits]
                if not users.size:
                    self._bmin_stale = True  # the bound let a useless check through: tighten it
                    continue
                pairs.append((server, users))
        for server, users in pairs:
            if self.eligible:
                el = self.eligible
                users = users[[u not in el or bool(el[u][server]) for u in users.tolist()]]
            if self._bmask:
                bm = self._bmask
                users = users[[u not in bm or bool(bm[u][server]) for u in users.tolist()]]
            if users.size:
                f_srv.append(server)
                f_users.append(users)
        if not f_srv:
            return
        if len(f_srv) == 1 and not self._dynamic and self._reserves():
            # one server (most completions): every fitting user has it as its only candidate,
            # so _wake_few would reserve for all of them there, in share order
            server = f_srv[0]
            woken: set[int] = set()
            self._reserve(server, f_users[0].tolist(), True, woken)
            cands = {u: [server] for u in woken}
        elif sum(x.size for x in f_users) <= _PAIRS_VECTOR:
            woken, cands = self._wake_few(f_srv, [x.tolist() for x in f_users])
        else:
            woken, cands = self._wake_many(f_srv, f_users)
        bpos, bh_all, bu_all = self._bpos, self._bh, self._bu
        for u in sorted(woken):
            self._bmask.pop(u, None)
            c = cands.get(u)
            if c is None:
                self._cands.pop(u, None)
            else:
                self._cands[u] = c
            self._blocked[u] = False
            # unpack: the last blocked row takes the woken user's row
            row, last = bpos.pop(u), self._n_blocked - 1
            if row != last:
                moved = int(bu_all[last])
                bh_all[row] = bh_all[last]
                bu_all[row] = moved
                bpos[moved] = row
            self._n_blocked = last
            self._push(u)

    def _fits_many(
        self, freed: list[int], bh: np.ndarray, bu: np.ndarray, bmin: np.ndarray
    ) -> list[tuple[int, np.ndarray]]:
        """Phase 1 of :meth:`_unblock_freed` for many (freed server, blocked user) pairs, one
        numpy comparison per resource over a block of servers: each freed server that some
        blocked head fits on, with those users in blocked-row order (as the per-server loop)."""
        cols, k_range = self._cols, range(self._k)
        srv = np.asarray(freed, dtype=np.int64)
        keep = cols[0][srv] >= bmin[0]
        for k in range(1, self._k):
            keep &= cols[k][srv] >= bmin[k]
        srv = srv[keep]
        out: list[tuple[int, np.ndarray]] = []
        step = max(1, _FITS_BLOCK // bh.shape[0])  # servers per block: bounded memory
        for lo in range(0, srv.size, step):
            part = srv[lo : lo + step]
            fits = bh[:, 0] <= cols[0][part][:, None]  # shape (servers, blocked users)
            for k in k_range[1:]:
                fits &= bh[:, k] <= cols[k][part][:, None]
            per = fits.sum(axis=1)
            if not per.all():
                self._bmin_stale = True  # the bound let a useless check through: tighten it
            users, end = bu[np.nonzero(fits)[1]], 0
            for server, n in zip(part.tolist(), per.tolist(), strict=True):
                if n:
                    out.append((server, users[end : end + n]))
                    end += n
        return out

    def _wake_few(
        self, f_srv: list[int], f_users: list[list[int]]
    ) -> tuple[set[int], dict[int, list[int]]]:
        """Phase 2 of :meth:`_unblock_freed` for few (server, user) pairs, in plain Python:
        the users to wake and the candidate servers of every fitting user."""
        cands: dict[int, list[int]] = {}
        for server, users in zip(f_srv, f_users, strict=True):
            for u in users:
                cands.setdefault(u, []).append(server)
        if self._dynamic:  # keys may have moved while the users were blocked
            self._refresh(sorted(cands))
        if not self._reserves():
            # (when placements may reorder the keys, the order of service is not known here: no
            # reservations, every fitting user is woken)
            return set(cands), cands
        # users with several candidates are always woken (they reserve nothing)
        woken = {u for u, c in cands.items() if len(c) > 1}
        for server, users in zip(f_srv, f_users, strict=True):
            single = [u for u in users if len(cands[u]) == 1]
            if single:
                self._reserve(server, single, len(single) == len(users), woken)
        return woken, cands

    def _wake_many(
        self, f_srv: list[int], f_users: list[np.ndarray]
    ) -> tuple[set[int], dict[int, list[int]]]:
        """:meth:`_wake_few` for many pairs (thousands of blocked users fitting many freed
        servers, as in the Alibaba replay), vectorised: the same users woken; candidate lists
        only for users with at most ``_CANDS_MAX`` candidates (the others search every server,
        which makes the same choice)."""
        every = np.concatenate(f_users)
        count = np.bincount(every)  # candidate servers per user
        if self._dynamic:  # keys may have moved while the users were blocked
            self._refresh(np.unique(every).tolist())
        if self._reserves():
            # users with several candidates are always woken (they reserve nothing); a user with
            # one reserves its need there, in share order, and stays blocked if the room is gone
            woken = set(np.flatnonzero(count > 1).tolist())
            for server, users in zip(f_srv, f_users, strict=True):
                single = users[count[users] == 1]
                if single.size:
                    self._reserve(server, single.tolist(), single.size == users.size, woken)
        else:
            woken = set(every.tolist())
        cands: dict[int, list[int]] = {}
        # (a single candidate is always kept: decide() re-runs the wake-up of that server when
        # the user's reservation there was taken)
        keep = count[every] <= max(_CANDS_MAX, 1)
        if keep.any() and woken:
            is_woken = np.zeros(count.size, dtype=bool)
            is_woken[list(woken)] = True
            keep &= is_woken[every]
            sizes = [len(x) for x in f_users]
            srv_of = np.repeat(np.asarray(f_srv, dtype=np.int64), sizes)[keep]
            u_of = every[keep]
            order = np.argsort(u_of, kind="stable")  # per user, its servers in f_srv order
            u_of, srv_of = u_of[order], srv_of[order]
            ids, first = np.unique(u_of, return_index=True)
            srv_list, ends = srv_of.tolist(), [*first[1:].tolist(), u_of.size]
            for u, lo, hi in zip(ids.tolist(), first.tolist(), ends, strict=True):
                cands[u] = srv_list[lo:hi]
        return woken, cands

    def _reserve(self, server: int, single: list[int], may_stop: bool, woken: set[int]) -> None:
        """Wake, in share order, the users whose only candidate is ``server`` while its free
        amounts hold their needs, reserving each need (adds them to ``woken``); a user that no
        longer fits stays blocked and the server is re-checked before :meth:`decide` stops.

        With ``may_stop`` (every fitting user of the server is in ``single``), a failure once the
        room is below every blocked need ends the scan: every later user would fail too (``bmin``
        is a lower bound of those needs).
        """
        cols, k_range, bmin, bneed = self._cols, range(self._k), self._bmin, self._bneed
        if self._k == 2:  # the loop below, written out for two resources
            r0, r1 = float(cols[0][server]), float(cols[1][server])
            b0, b1 = float(bmin[0]), float(bmin[1])
            for u in self._share_order(single):
                n0, n1 = bneed[u]
                if n0 <= r0 and n1 <= r1:
                    woken.add(u)
                    r0 -= n0
                    r1 -= n1
                else:
                    self._recheck.add(server)
                    if may_stop and (r0 < b0 or r1 < b1):
                        break
            return
        rem = [float(cols[k][server]) for k in k_range]
        for u in self._share_order(single):
            need = bneed[u]
            if all(need[k] <= rem[k] for k in k_range):
                woken.add(u)
                for k in k_range:
                    rem[k] -= need[k]
            else:
                self._recheck.add(server)  # u stays blocked; look again at the end
                if may_stop and any(rem[k] < bmin[k] for k in k_range):
                    break

    def _share_order(self, users: list[int]) -> list[int]:
        """``users`` sorted by (share, user id); numpy for long lists."""
        share = self._share
        if len(users) == 1:
            return users
        if len(users) <= _VECTOR_MIN:
            return sorted(users, key=lambda v: (share[v], v))
        ids = np.array(users, dtype=np.int64)
        sh = np.fromiter((share[v] for v in users), dtype=np.float64, count=len(users))
        return ids[np.lexsort((ids, sh))].tolist()

    # ------------------------------------------------------------------ the filling loop
    def decide(self) -> Iterator[tuple[int, int]]:
        """Repeatedly serve the lowest-share unblocked user until every user is blocked or idle."""
        if self._dynamic:
            self._before_pass()
        elif not self._heap and not self._freed:
            return  # nobody waits unblocked and no server gained room (most arrivals)
        if self._freed:
            self._unblock_freed()
        version, queues, inheap = self._version, self._queues, self._inheap
        alloc, k_range = self._alloc, range(self._k)
        accounts, rekey_each = self._accounts, self._rekey_each
        while True:
            heap = self._heap  # (re)bound: _rebuild_heap replaces the list
            while heap:
                _, user, ver = heapq.heappop(heap)
                if ver != version[user]:
                    continue
                inheap[user] = False
                q = queues[user]
                task, need = q[0]
                if self._constrained:
                    self._tmask = self.cluster_.task_mask(task)
                cands = self._cands.pop(user, None)
                if self._unfit and self._known_unfit(need):
                    server = -1
                elif cands is None:
                    server = self._find(need, user)
                else:
                    server = self._find_in(need, user, cands)
                if server < 0:
                    self._block(user, need)
                    if cands is not None and len(cands) == 1:
                        # its reservation on that server was taken by a lower-share user: the
                        # users it kept blocked there get their turn now, in share order
                        self._freed.append(cands[0])
                        self._unblock_freed()
                    continue
                yield task, server
                q.popleft()
                self._n_pending -= 1
                self._take(server, need)
                a = alloc[user]
                for k in k_range:
                    a[k] += need[k]
                if accounts:
                    self._account(user, need, 1)
                self._update_share(user)
                if q:
                    self._push(user)
                if rekey_each:
                    self._after_place()
                    heap = self._heap
            if not self._recheck:
                return
            self._freed.extend(sorted(self._recheck))
            self._recheck.clear()
            self._unblock_freed()

    def _find_in(self, need: tuple[float, ...], user: int, servers: list[int]) -> int:
        """Like :meth:`_find`, knowing that no server outside ``servers`` can fit the task."""
        cols, k_range = self._cols, range(self._k)
        elig = self.eligible.get(user) if self.eligible else None
        if self._tmask is not None:
            elig = self._tmask if elig is None else elig & self._tmask
        if len(servers) > _VECTOR_MIN:  # long candidate lists: one numpy pass per resource
            idx = np.array(servers, dtype=np.int64)
            ok = cols[0][idx] >= need[0]
            for k in range(1, self._k):
                ok &= cols[k][idx] >= need[k]
            if elig is not None:
                ok &= elig[idx]
            fit = np.unique(idx[ok])
            if fit.size == 0:
                return self._unfit_candidates(need, user)
            return int(fit[0]) if fit.size == 1 else self._choose(need, fit)
        fitting = [
            s
            for s in servers
            if all(cols[k][s] >= need[k] for k in k_range) and (elig is None or elig[s])
        ]
        if not fitting:
            return self._unfit_candidates(need, user)
        if len(fitting) == 1:
            return fitting[0]
        return self._choose(need, np.array(sorted(set(fitting)), dtype=np.int64))

    def _choose(self, need: tuple[float, ...], idx: np.ndarray) -> int:
        """Pick among fitting servers ``idx`` (sorted, non-empty); First-Fit: the first."""
        return int(idx[0])

    def _fit_mask(self, need: tuple[float, ...], user: int) -> np.ndarray:
        """Boolean mask (n_servers,) of servers whose free amounts cover ``need``."""
        cols, buf = self._cols, self._buf
        np.greater_equal(cols[0], need[0], out=buf)
        if self._k > 1:
            tmp = self._buf2
            for k in range(1, self._k):
                np.greater_equal(cols[k], need[k], out=tmp)
                buf &= tmp
        if self.eligible and user in self.eligible:
            buf &= self.eligible[user]
        if self._tmask is not None:
            buf &= self._tmask
        return buf

    def _hopeless(self, need: tuple[float, ...]) -> bool:
        """True if some resource's need exceeds every server's free amount (no scan needed).

        ``_maxfree`` is an upper bound of the per-resource maximum free amount: placements only
        lower free amounts, completions raise it, and a failed scan makes it exact again.
        """
        mf = self._maxfree
        for k in range(self._k):
            if need[k] > mf[k]:
                return True
        return False

    def _scan_failed(self) -> int:
        self._maxfree = [float(c.max()) for c in self._cols]
        return -1

    def _unfit_everywhere(self, need: tuple[float, ...], user: int) -> int:
        """A search of :meth:`_find` over every server found no room for ``need``: remember the
        need (:meth:`_remember_unfit`), make ``_maxfree`` exact, return -1."""
        self._remember_unfit(need, user)
        return self._scan_failed()

    def _unfit_candidates(self, need: tuple[float, ...], user: int) -> int:
        """No candidate of :meth:`_find_in` holds ``need``; no other server has gained free
        resources since the user was blocked, so none fits: remember the need, return -1."""
        self._remember_unfit(need, user)
        return -1

    def _remember_unfit(self, need: tuple[float, ...], user: int) -> None:
        """Remember that no server holds ``need`` under the default fit rule (free amount >= need
        in every resource), when no mask (eligibility, placement constraint) narrowed the search.
        :meth:`decide` then blocks any head at least as large in every resource unsearched,
        until the next completion clears the list."""
        if self._tmask is not None or (self.eligible and user in self.eligible):
            return
        unfit = self._unfit
        if unfit:
            # drop remembered needs at least as large as this one (it says more)
            if self._k == 2:
                n0, n1 = need
                unfit[:] = [u for u in unfit if u[0] < n0 or u[1] < n1]
            else:
                unfit[:] = [u for u in unfit if any(a < b for a, b in zip(u, need, strict=True))]
            if len(unfit) >= _UNFIT_MAX:
                return
        unfit.append(need)

    def _known_unfit(self, need: tuple[float, ...]) -> bool:
        """True if ``need`` is at least a remembered unfit need in every resource: no server
        can hold it until a task completes (exact, not a heuristic)."""
        if self._k == 2:
            n0, n1 = need
            for u0, u1 in self._unfit:
                if n0 >= u0 and n1 >= u1:
                    return True
            return False
        return any(all(a >= b for a, b in zip(need, u, strict=True)) for u in self._unfit)

    def _find(self, need: tuple[float, ...], user: int) -> int:
        """Server for a task with this need, or -1 if none fits. Default: First-Fit."""
        if self._hopeless(need):
            return -1
        if self._ff2 and self._tmask is None and not (self.eligible and user in self.eligible):
            c0, c1 = self._cols
            i = self._kernels.first_fit2(c0, c1, need[0], need[1], self._mf2)
            if i < 0:  # as _unfit_everywhere, with the maxima the kernel found
                self._remember_unfit(need, user)
                self._maxfree = self._mf2.tolist()
            return i
        fit = self._fit_mask(need, user)
        i = int(fit.argmax())
        return i if fit[i] else self._unfit_everywhere(need, user)
