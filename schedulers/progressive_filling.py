"""Progressive filling of indivisible tasks: the base class of the online DRF-family schedulers.

First-Fit and Best-Fit DRFH (:mod:`fairsim.schedulers.drfh`), the Slots baseline
(:mod:`fairsim.schedulers.slots`), the online mechanisms
(:mod:`fairsim.schedulers.online_mechanisms`) and DRF over machine classes
(:mod:`fairsim.schedulers.drf_classes`) are subclasses.

DRFH paper (Wang, Li, Liang, "Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers", IEEE INFOCOM 2014), Section V-B: "whenever there is a scheduling
opportunity, the scheduler always accommodates the user with the lowest global dominant share";
First-Fit picks the first server that fits the task, Best-Fit the server with the least

    H(i, l) = || D_i / D_i1 - c̄_l / c̄_l1 ||_1                                   (eq. 9)

where c̄_l is server l's free resource vector. The global dominant share of user i is
G_i = max_r (Σ_l A_ilr) / (Σ_l c_lr) (Section IV-A, eqs. 2-3, for non-wasteful allocations),
divided by the user's weight w_i for weighted users (Section V-A).

Design (what makes it fast on real traces)
------------------------------------------
* Users waiting for resources sit in a heap keyed by ``(key, user code)`` (DRFH: the weighted
  global dominant share);
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

A scheduler names two parts: its user selection (:mod:`fairsim.schedulers.user_selection`, the
order of users by their key) and its placement (:mod:`fairsim.schedulers.placement`, the space
searched and the server picked); this module runs them and keeps the
:class:`~fairsim.schedulers.user_selection.FillingState` its order reads (examples:
:mod:`fairsim.schedulers.drfh`, :mod:`fairsim.schedulers.slots`,
:mod:`fairsim.schedulers.online_mechanisms`).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from fairsim.schedulers.placement import FirstFit, ServerChoice
from fairsim.schedulers.user_selection import DominantShare, FillingState, UserOrder
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
#: User lists longer than this are sorted by key with numpy (:meth:`ProgressiveFilling._by_key`).
_SORT_VECTOR = 24

#: Use the compiled searches of :mod:`fairsim.schedulers._fill_kernel` where the search space
#: allows them (two float64 columns); the tests turn this off to check the numpy code as well.
_COMPILED = True


class ProgressiveFilling(Scheduler):
    """Serve the user with the lowest key; place its head task on the server the placement picks.

    A scheduler is a pair of parts, given as class attributes: :attr:`order`, a
    :class:`~fairsim.schedulers.user_selection.UserOrder` (user selection: the user's key,
    lowest served first), and :attr:`placement`, a
    :class:`~fairsim.schedulers.placement.ServerChoice` (the space searched and the server
    picked). The defaults are DRFH's: weighted global dominant share, First-Fit. Each part is
    created anew at :meth:`bind` (``order_``, ``placement_``); the order is handed the
    :class:`~fairsim.schedulers.user_selection.FillingState` that this class keeps current (the
    users' allocations, running tasks, queues, weights and keys).

    Subclasses can customise by setting :attr:`order` and :attr:`placement` (the parts' hooks are
    declared in their base classes); a scheduler with parameters of its own also overrides
    ``__init__`` (keyword-only parameters, stored as given) and may extend :meth:`bind` to check
    them (:class:`~fairsim.schedulers.slots.Slots`). Nothing else is meant to be overridden.

    Parameters
    ----------
    weights : mapping of int to float, optional
        Weight w_i of a user code (default 1 for every user). DRFH paper, Section V-A.
    eligible : mapping of int to ndarray of bool, optional
        Per-user mask of shape ``(n_servers,)`` of the servers the user's tasks may run on
        (placement constraints). Users not in the mapping may use every server.

    Notes
    -----
    The key is computed in the placement's search space: for DRFH that is the cluster's resources
    (global dominant share), for Slots the number of slots.

    "Serve the user with the fewest running tasks, Best-Fit" takes two short classes::

        class FewestTasks(UserOrder):
            def key(self, user):
                return self.state.running[user] / self.state.weight[user]

        class FewestTasksBestFit(ProgressiveFilling):
            name = "fewest-tasks-bf"
            order = FewestTasks
            placement = BestFit

    The filling loop (:meth:`decide`), the blocking of users whose head fits nowhere and their
    wake-ups are checked against a naive rescan
    (``tests/properties/test_progressive_reference.py``).
    """

    name = "progressive-filling"

    #: User selection: a :class:`~fairsim.schedulers.user_selection.UserOrder` subclass.
    order: type[UserOrder] = DominantShare
    #: Placement: a :class:`~fairsim.schedulers.placement.ServerChoice` subclass.
    placement: type[ServerChoice] = FirstFit

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        self.weights = weights
        self.eligible = eligible

    def _kernels_for(self, cols: list[np.ndarray]) -> ModuleType | None:
        """The compiled searches (:mod:`fairsim.schedulers._fill_kernel`) if they apply to these
        search columns (two float64 columns), else None."""
        if not (
            _COMPILED
            and len(cols) == 2
            and all(c.dtype == np.float64 and c.ndim == 1 and c.flags.c_contiguous for c in cols)
        ):
            return None
        # imported here: numba costs every run that imports the registry ~55 MB
        from fairsim.schedulers import _fill_kernel

        return _fill_kernel

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether some server of the empty cluster could ever run a task with this demand.

        The engine asks this on arrival and never queues a task that fits no server (it would
        otherwise block its user's queue for ever); such tasks are reported as unplaceable.
        """
        need = demand if self._need is None else self._need(demand)
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
        need = demand if self._need is None else self._need(demand)
        return any(all(n <= c for n, c in zip(need, cap, strict=True)) for cap in caps)

    # ------------------------------------------------------------------ binding and events
    def bind(self, cluster: ClusterView) -> None:
        """Attach to a cluster, create and bind the parts, and allocate per-user run state (the
        order's :class:`~fairsim.schedulers.user_selection.FillingState` among it)."""
        super().bind(cluster)
        pl = self.placement_ = self.placement()
        pl.bind(self, cluster)
        self._cols = pl.cols
        self._k = len(self._cols)
        caps = np.stack([c.copy() for c in self._cols], axis=1)
        self._space_caps = caps  # capacity of every server in the scheduler's units
        self._mask_caps: dict[int, list[tuple[float, ...]]] = {}
        classes = np.unique(caps, axis=0)
        # keep only capacity classes not dominated by another (enough to decide placeability)
        keep = [c for c in classes if not any(np.all(o >= c) and np.any(o > c) for o in classes)]
        self._capacity_classes = [tuple(float(x) for x in c) for c in keep]
        # the order's state (FillingState), kept current here; its lists under their own names
        # for the hot paths
        self._alloc: list[list[float]] = []
        self._running: list[int] = []
        self._queues: list[deque[tuple[int, tuple[float, ...]]]] = []
        self._weight: list[float] = []
        self._keys: list[Any] = []
        self._state = FillingState(
            alloc=self._alloc,
            running=self._running,
            queues=self._queues,
            weight=self._weight,
            keys=self._keys,
            total=[float(t) for t in pl.total],
            n_columns=self._k,
            eligible=self.eligible,
        )
        self._blocked: list[bool] = []
        # blocked users, packed: their head needs (one row each) and ids; _bpos[user] is the row
        self._bh = np.empty((_GROW, self._k))
        self._bu = np.empty(_GROW, dtype=np.int64)
        self._bpos: dict[int, int] = {}
        self._inheap: list[bool] = []
        self._version: list[int] = []
        self._heap: list[tuple[Any, int, int]] = []
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
        # compiled wake-up phase 1 (schedulers/_fill_kernel.py) for two float64 columns
        self._kernels = pl._kernels
        self._kern2 = self._kernels is not None
        self._n_blocked = 0
        self._n_pending = 0
        # per-task placement constraints (simulator/constraints.py): the masks of blocked heads
        self._constrained = cluster.constrained
        self._bmask: dict[int, np.ndarray] = {}
        order = self.order_ = self.order()
        order.bind(self._state, self, cluster)
        self._dynamic, self._rekey_each = order.dynamic, order.rekey_each
        # the parts' methods the hot paths call, bound once (None: a default that does nothing)
        cls = type(pl)
        self._need = None if cls.need is ServerChoice.need else pl.need
        self._take = None if cls.take is ServerChoice.take else pl.take
        self._give = None if cls.give is ServerChoice.give else pl.give
        self._find = pl.find
        self._find_in = pl.find_in
        self._unfit = pl.unfit  # emptied in place at every completion
        self._known_unfit = pl.known_unfit
        self._key = order.key
        ocls = type(order)
        self._account = None if ocls.account is UserOrder.account else order.account
        self._arrived = None if ocls.arrived is UserOrder.arrived else order.arrived
        self._activated = None if ocls.activated is UserOrder.activated else order.activated

    def _ensure_user(self, user: int) -> None:
        """Grow the per-user state (and the order's) to hold ``user``."""
        n_old = len(self._queues)
        if user < n_old:
            return
        n_new = max(user + 1, n_old + _GROW)
        for u in range(n_old, n_new):
            wu = float(self.weights.get(u, 1.0)) if self.weights else 1.0
            if not wu > 0:
                raise ValueError(f"weight of user {u}: {wu!r} (expected > 0)")
            self._weight.append(wu)
            self._alloc.append([0.0] * self._k)
            self._running.append(0)
            self._keys.append(0.0)
            self._blocked.append(False)
            self._inheap.append(False)
            self._version.append(0)
            self._queues.append(deque())
        self.order_.grow(n_new)

    def _push(self, user: int) -> None:
        v = self._version[user] + 1
        self._version[user] = v
        self._inheap[user] = True
        heapq.heappush(self._heap, (self._keys[user], user, v))

    def _rebuild_heap(self) -> None:
        """Re-key every waiting (in-heap) user with a fresh key."""
        users = sorted({u for _, u, v in self._heap if v == self._version[u]})
        self._heap = []
        keys, key = self._keys, self._key
        for u in users:
            keys[u] = key(u)
            v = self._version[u] + 1
            self._version[u] = v
            self._heap.append((keys[u], u, v))
        heapq.heapify(self._heap)

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue ``task`` behind the user's earlier tasks."""
        if user >= len(self._queues):
            self._ensure_user(user)
        q = self._queues[user]
        need = demand if self._need is None else self._need(demand)
        q.append((task, need))
        self._n_pending += 1
        moved = self._arrived is not None and self._arrived(user, need)
        if self._activated is not None and len(q) == 1 and not self._running[user]:
            self._activated(user, True)  # its first task in the system
        if moved and not self._blocked[user]:
            # the key moved with the arrival: re-key now (the older heap entry becomes stale)
            if len(q) == 1 or self._inheap[user]:
                self._keys[user] = self._key(user)
                self._push(user)
            return
        if len(q) == 1 and not self._blocked[user] and not self._inheap[user]:
            self._push(user)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Release the task's share and remember that ``server`` has new free resources."""
        need = demand if self._need is None else self._need(demand)
        if self._give is not None:
            self._give(server, need)
        self._unfit.clear()  # the server gained free resources
        mf, cols = self.placement_.maxfree, self._cols
        for k in range(self._k):
            if cols[k][server] > mf[k]:
                mf[k] = float(cols[k][server])
        a = self._alloc[user]
        for k in range(self._k):
            a[k] -= need[k]
        self._running[user] -= 1
        if self._account is not None:
            self._account(user, server, need, -1)
        if self._activated is not None and not self._running[user] and not self._queues[user]:
            self._activated(user, False)  # its last task in the system
        self._keys[user] = self._key(user)
        if self._inheap[user]:
            self._push(user)  # re-key: the older heap entry becomes stale
        self._freed.append(server)

    def pending(self) -> int:
        """Number of queued tasks not yet placed."""
        return self._n_pending

    # ------------------------------------------------------------------ blocking
    def _block(self, user: int, need: tuple[float, ...]) -> None:
        tmask = self.placement_.tmask
        if tmask is not None:
            self._bmask[user] = tmask
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
        elif self._kernels is not None:  # compiled; it keeps bmin exact itself
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
        if len(f_srv) == 1 and not self._dynamic and self.order_.reserves():
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
            self.order_.refresh(sorted(cands))
        if not self.order_.reserves():
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
            self.order_.refresh(np.unique(every).tolist())
        if self.order_.reserves():
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
            for u in self._by_key(single):
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
        for u in self._by_key(single):
            need = bneed[u]
            if all(need[k] <= rem[k] for k in k_range):
                woken.add(u)
                for k in k_range:
                    rem[k] -= need[k]
            else:
                self._recheck.add(server)  # u stays blocked; look again at the end
                if may_stop and any(rem[k] < bmin[k] for k in k_range):
                    break

    def _by_key(self, users: list[int]) -> list[int]:
        """``users`` sorted by (key, user code); numpy for long lists of number keys."""
        keys = self._keys
        if len(users) == 1:
            return users
        if len(users) <= _SORT_VECTOR or isinstance(keys[users[0]], tuple):
            return sorted(users, key=lambda v: (keys[v], v))
        ids = np.array(users, dtype=np.int64)
        sh = np.fromiter((keys[v] for v in users), dtype=np.float64, count=len(users))
        return ids[np.lexsort((ids, sh))].tolist()

    # ------------------------------------------------------------------ the filling loop
    def _server_for(self, task: int, user: int, need: tuple[float, ...]) -> int:
        """The server for ``task``, the head task of ``user`` (demand ``need``), or -1 once the
        user is blocked: the search of each step of :meth:`decide` (and of
        :meth:`HDRF.decide <fairsim.schedulers.hdrf_online.HDRF.decide>`).

        A user woken with candidate servers (:meth:`_unblock_freed`) tries only those. When its
        one reserved server was taken by a lower-key user, the users it kept blocked there get
        their turn now, in key order.
        """
        if self._constrained:
            self.placement_.tmask = self.cluster_.task_mask(task)
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
                self._freed.append(cands[0])
                self._unblock_freed()
        return server

    def _count_placed(self, user: int, server: int, need: tuple[float, ...]) -> bool:
        """Account the head task of ``user`` that the engine placed on ``server``: dequeue and
        count it, add ``need`` to the user's allocation and re-key the user.

        Returns
        -------
        bool
            Whether the user still has tasks waiting.
        """
        q = self._queues[user]
        q.popleft()
        self._running[user] += 1
        self._n_pending -= 1
        if self._take is not None:
            self._take(server, need)
        a = self._alloc[user]
        for k in range(self._k):
            a[k] += need[k]
        if self._account is not None:
            self._account(user, server, need, 1)
        self._keys[user] = self._key(user)
        return bool(q)

    def decide(self) -> Iterator[tuple[int, int]]:
        """Repeatedly serve the lowest-key unblocked user until every user is blocked or idle."""
        order = self.order_
        if self._dynamic:
            if order.before_pass():
                self._rebuild_heap()
        elif not self._heap and not self._freed:
            return  # nobody waits unblocked and no server gained room (most arrivals)
        if self._freed:
            self._unblock_freed()
        version, queues, inheap = self._version, self._queues, self._inheap
        rekey_each = self._rekey_each
        while True:
            heap = self._heap  # (re)bound: _rebuild_heap replaces the list
            while heap:
                _, user, ver = heapq.heappop(heap)
                if ver != version[user]:
                    continue
                inheap[user] = False
                task, need = queues[user][0]
                server = self._server_for(task, user, need)
                if server < 0:
                    continue
                yield task, server
                if self._count_placed(user, server, need):
                    self._push(user)
                if rekey_each and order.after_place():
                    # keys moved: re-key the waiting users; users kept blocked by reservations
                    # made in the old order get their turn
                    self._rebuild_heap()
                    heap = self._heap
                    if self._recheck:
                        self._freed.extend(sorted(self._recheck))
                        self._recheck.clear()
                        self._unblock_freed()
                        heap = self._heap
            if not self._recheck:
                return
            self._freed.extend(sorted(self._recheck))
            self._recheck.clear()
            self._unblock_freed()
