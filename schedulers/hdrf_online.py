"""Online hierarchical DRF (``hdrf``): H-DRF for indivisible tasks, without preemption.

Bhattacharya, Culler, Friedman, Ghodsi, Shenker and Stoica, "Hierarchical Scheduling for Diverse
Datacenter Workloads" (SoCC 2013), dynamic H-DRF, on the queue tree of a scenario
(:class:`~fairsim.schedulers.exact.instance.QueueTree`, ``docs/hdrf.md``). The exact (divisible)
mechanism is :mod:`fairsim.schedulers.exact.hdrf`; this module is its online counterpart, the
way ``drf`` is DRF's.

The leaves are the pairs (queue, user): the scenario gives every task its queue
(:meth:`fairsim.simulator.cluster.ClusterView.task_queue`), and a user's tasks in one queue are
one leaf. At every scheduling opportunity the scheduler descends from the root, at each node
into the child that is not blocked with the smallest level (a queue below its guarantee first),
and places the head task of the leaf it reaches (First-Fit, or Best-Fit with ``fit:
best-fit``), until every leaf is blocked:

* a leaf is *blocked* when it has no waiting task, or its head task fits on no server (the
  blocking and wake-ups of :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling`),
  or would take a queue on its path above its limit (woken when a task of that queue ends); a
  queue is blocked when all its children are;
* a leaf's level is its weighted dominant share of the pool, ``max_r A_r / C_r / w`` (``drf``'s
  key, rounded to 12 decimals), and its consumption vector ``A / C``;
* a queue's consumption vector is the paper's: its blocked children's vectors as they are, plus
  its other children's, each rescaled to the smallest level ``M`` among them ("rescaling to the
  minimum node", "ignoring blocked nodes"); its level is the vector's largest entry over the
  resources its unblocked leaves' head tasks demand, divided by its weight. This is fairsim's
  reading of the paper's "ignoring saturated resources" for indivisible tasks: a resource no
  waiting, placeable task below the queue asks for cannot raise its level (the exact mechanism
  ignores the resources the pool has used up; the two agree when every task demands every
  resource, as on the Google trace);
* a queue holding less than its guarantee of every resource guaranteed to it is served before
  its siblings (guarantees and limits are fairsim's extension, ``docs/hdrf.md``); with
  indivisible tasks and no preemption a queue may pass its guarantee by one task, and never
  takes back what others hold.

Ties go to the first in declaration order: the queues in the order of the tree, then the
leaves in order of their first task. On a tree without queues, or with every user in one queue,
the descent is ``drf``'s choice, and ``hdrf`` places every task as ``drf`` does
(``tests/unit/test_hdrf_online.py``).

Cost: a placement or a completion updates the leaf and its ancestors (a heap entry and a few
sums per node on the path), never every leaf; the levels of the root's children, which feed no
sum, are computed only when a descent or an order compares them; a node whose level did not
move keeps its heap entry; a queue's usage is kept only when its guarantee or limit reads it.
Leaves woken on a freed server reserve it in the descent's order, popped from a heap, and only
until the server's room is below every blocked need, instead of sorting every fitting leaf.
The tree's state lives in arrays that compiled kernels update
(:mod:`fairsim.schedulers._hdrf_kernel`: the flush, the descent, the root's children's levels
and the reservation, with the float operations of the Python tree they replaced, so the
placements are the same); this module keeps the leaves, the queues' usage, limits and
guarantees, and hands the kernels the leaves that changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Literal

import numpy as np

from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.placement import BestFit, FirstFit, ServerChoice
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import PooledDominantShare
from fairsim.simulator.cluster import ClusterView

#: Levels of queues are rounded to this many decimals (as the leaves' keys), so that levels
#: equal in exact arithmetic tie whatever the rounding of the running sums.
_DIGITS = 12
#: Relative slack of a limit: a task fits within a limit when the queue's usage plus its demand
#: is at most ``limit * (1 + _LIMIT_TOL) + _LIMIT_FLOOR * c_r`` (``c_r`` the largest server
#: capacity of the resource: the floor is in the resource's units, so that a limit of 0 admits
#: rounding and answers do not depend on the units).
_LIMIT_TOL = 1e-9
_LIMIT_FLOOR = 1e-12
#: ``round(x, 12)``'s short path is taken below this ``x * 1e12`` (2**40: there the product is
#: within 2**-13 of ``x`` times 10**12; :func:`fairsim.schedulers._hdrf_kernel.round12`).
_FAST_ROUND_BELOW = 1099511627776.0
_floor = math.floor


class LeafOrder(PooledDominantShare):
    """A leaf's key: its weighted dominant share of the pool, as ``drf``'s (rounded to 12
    decimals). The tree decides which leaf goes next (:meth:`HDRF.decide`); leaves woken on a
    server that freed room reserve it in the order the descent would serve them now
    (:meth:`HDRF._by_key`)."""

    def key(self, user: int) -> float:
        """``round(max_r alloc[user][r] / total[r] / weight[user], 12)``, as
        :class:`~fairsim.schedulers.user_selection.PooledDominantShare` (the same float)."""
        s = self.state
        if s.n_columns == 2:
            a, t = s.alloc[user], s.total
            x, y = a[0] / t[0], a[1] / t[1]
            x = (y if y > x else x) / s.weight[user]
            # round(x, 12) as fairsim.schedulers._hdrf_kernel.round12, written out (the hot
            # path: a compiled call costs more than these lines)
            y = x * 1e12
            if 0.0 < y < _FAST_ROUND_BELOW:
                f = _floor(y)
                if y - f < 0.499:
                    return f / 1e12
                if y - f > 0.501:
                    return (f + 1) / 1e12
            return round(x, _DIGITS)
        return super().key(user)


class _Tree:
    """The queue tree of a run, kept current as leaves change: node 0 is the root, nodes
    ``1..Q`` the queues, node ``Q + 1 + leaf`` a leaf (added when its first task arrives).

    Each internal node keeps a heap of its unblocked children keyed by ``(level, position,
    node, version)`` (stale entries are skipped), the count of its unblocked children, the
    per-resource count of unblocked leaves below it whose head task demands the resource, and
    three running sums over its children of what they contribute to its consumption vector:
    ``B`` (blocked children's vectors), ``Z`` (unblocked children at level 0) and ``U``
    (unblocked children's vectors divided by their level), so that its vector is
    ``B + Z + M U`` with ``M`` the level at the top of its heap. That state lives in arrays
    updated by the compiled kernels of :mod:`fairsim.schedulers._hdrf_kernel` (its docstring
    gives the layout); the levels of the root's queue children, which feed no running sum, are
    computed only when a descent or an order compares them (:meth:`settle`).
    """

    def __init__(self, sched: HDRF, queues: QueueTree | None, total: np.ndarray) -> None:
        from fairsim.schedulers import _hdrf_kernel as kern

        self.k = kern
        n_q = 0 if queues is None else len(queues.ids)
        n_r = len(total)
        self.s = sched
        self.n_r = n_r
        self.first = n_q + 1
        self.parent = [-1] + ([int(p) + 1 for p in queues.parent] if queues is not None else [])
        self.pos = list(range(-1, n_q))  # declaration order among siblings
        self.n_children = [0] * self.first
        for a in range(1, self.first):
            self.n_children[self.parent[a]] += 1
        self.path: list[tuple[int, ...]] = [()] * self.first  # queue ancestors of each node
        for a in range(1, self.first):
            k, anc = self.parent[a], [a]
            while k > 0:
                anc.append(k)
                k = self.parent[k]
            self.path[a] = tuple(anc)
        # guarantees and limits, in the pool's units
        self.guaranteed = [False] * self.first
        self.g = [[0.0] * n_r for _ in range(self.first)]
        self.lim = [[math.inf] * n_r for _ in range(self.first)]
        # the limits' floor per resource, in its units (set by HDRF.bind from the capacities)
        self.lim_floor: list[float] = [_LIMIT_FLOOR] * n_r
        self.gchildren: list[list[int]] = [[] for _ in range(self.first)]
        if queues is not None:
            for q in range(n_q):
                a = q + 1
                self.lim[a] = [float(x) for x in queues.limit[q]]
                if queues.guaranteed[q] and (queues.guarantee[q] > 0).any():
                    self.guaranteed[a] = True
                    self.g[a] = [float(x) for x in queues.guarantee[q]]
                    self.gchildren[self.parent[a]].append(a)
        self.limited = [
            a for a in range(1, self.first) if any(math.isfinite(x) for x in self.lim[a])
        ]
        # usage in pool units, kept only for the queues whose guarantee or limit reads it
        self.use = [[0.0] * n_r for _ in range(self.first)]
        # ... and those of them with a guarantee or a limit (whose usage is kept)
        reads = [self.guaranteed[a] or a in self.limited for a in range(self.first)]
        self.upath = [tuple(a for a in anc if reads[a]) for anc in self.path]
        self.lblocked: dict[int, list[int]] = {}  # queue -> leaves blocked by its limit
        self.dirty_leaves: set[int] = set()
        self.n_present = 0  # leaves waiting unblocked (the scheduler counts them)
        self.lparent: list[int] = []  # leaf code -> its parent node (``parent[first + leaf]``)
        # queues holding a set of leaves -> how their order is decided (:meth:`order_plan`)
        self.plans: dict[frozenset[int], tuple[bool, tuple[int, ...]]] = {}
        # the compiled state (the layout of fairsim.schedulers._hdrf_kernel)
        self.depth = max([len(p) for p in self.path] + [1])
        self.g0 = kern.CNT + n_r + self.depth  # ii's column of the guaranteed children
        width_i, width_f = kern.layout(n_r, self.depth, max(len(c) for c in self.gchildren))
        cap = self.first + 64
        self.ii = np.zeros((cap, width_i), dtype=np.int64)
        self.ii[:, kern.PARENT] = -1
        self.ii[:, kern.SIG] = -1
        self.ii[:, kern.CNT + n_r : self.g0] = -1
        self.ff = np.zeros((cap, width_f))
        for a in range(self.first):
            row = self.ii[a]
            row[kern.PARENT] = self.parent[a]
            row[kern.POS] = self.pos[a]
            row[kern.ISBELOW] = self.guaranteed[a]  # below the guarantee (kept by account)
            row[kern.CNT + n_r : kern.CNT + n_r + len(self.path[a])] = self.path[a]
            row[self.g0] = len(self.gchildren[a])
            row[self.g0 + 1 : self.g0 + 1 + len(self.gchildren[a])] = self.gchildren[a]
        self.ff[: self.first, 1 + n_r] = [1.0] + (
            [float(x) for x in queues.weight] if queues is not None else []
        )
        hcap = 2 * max(self.n_children) + 16
        self.hf = np.zeros((self.first, hcap))
        self.hi = np.zeros((self.first, hcap, 3), dtype=np.int64)
        qorder = sorted(range(1, self.first), key=lambda a: -len(self.path[a]))
        qinner = [a for a in qorder if self.parent[a] > 0]
        rootq = [a for a in range(1, self.first) if self.parent[a] == 0]
        self.meta = np.array(
            [0, 0, n_r, self.depth, self.first, len(qinner), len(rootq), *qinner, *rootq],
            dtype=np.int64,
        )
        self.inv = [1.0 / float(t) if t > 0 else 0.0 for t in total]
        self.rows = np.zeros((64, 4 + n_r))  # the changed leaves handed to the flush

    # ------------------------------------------------------------------ leaves
    def add_leaf(self, leaf: int, queue: int) -> None:
        """A new leaf (code ``leaf``, the next one) in ``queue`` (-1: the root)."""
        node = self.first + leaf
        assert node == len(self.parent)
        p = queue + 1
        self.parent.append(p)
        self.pos.append(node)
        self.lparent.append(p)
        self.path.append(self.path[p] if p > 0 else ())
        self.upath.append(self.upath[p] if p > 0 else ())
        kern = self.k
        if node == self.ii.shape[0]:  # room for twice the nodes
            grow = np.zeros_like(self.ii)
            grow[:, kern.PARENT] = -1
            grow[:, kern.SIG] = -1
            grow[:, kern.CNT + self.n_r : self.g0] = -1
            self.ii = np.vstack([self.ii, grow])
            self.ff = np.vstack([self.ff, np.zeros_like(self.ff)])
        row = self.ii[node]
        row[kern.PARENT] = p
        row[kern.POS] = node
        path0 = kern.CNT + self.n_r
        row[path0 : path0 + len(self.path[node])] = self.path[node]
        self.n_children[p] += 1
        if 2 * self.n_children[p] + 16 > self.hf.shape[1]:  # heaps: twice the children
            extra = self.hf.shape[1]
            self.hf = np.hstack([self.hf, np.zeros((self.first, extra))])
            self.hi = np.hstack([self.hi, np.zeros((self.first, extra, 3), dtype=np.int64)])
        if p == 0:
            self.meta[kern.ROOTLEAVES] = 1

    def mark(self, leaf: int) -> None:
        """The leaf's allocation, presence or head task changed."""
        self.dirty_leaves.add(leaf)

    # ------------------------------------------------------------------ flush and descent
    def _rows(self, clear: bool = True) -> int:
        """Write the changed leaves into ``rows`` (node, waiting unblocked, key, the resources
        its head task demands as bits, allocation over the pool's) and forget them (unless not
        ``clear``: the kernel says whether it flushed them); their number."""
        s, dirty, inv = self.s, self.dirty_leaves, self.inv
        n = len(dirty)
        if n > self.rows.shape[0]:
            self.rows = np.zeros((2 * n, self.rows.shape[1]))
        rows, share, alloc, inheap, queues = self.rows, s._keys, s._alloc, s._inheap, s._queues
        first = self.first
        if len(inv) == 2:  # the loop below, written out for two resources
            inv0, inv1 = inv
            for i, leaf in enumerate(dirty):
                al = alloc[leaf]
                if inheap[leaf]:
                    n0, n1 = queues[leaf][0][1]
                    bits = (n0 > 0.0) + 2 * (n1 > 0.0)
                    rows[i] = (first + leaf, 1.0, share[leaf], bits, al[0] * inv0, al[1] * inv1)
                else:
                    rows[i] = (first + leaf, 0.0, share[leaf], 0, al[0] * inv0, al[1] * inv1)
            if clear:
                dirty.clear()
            return n
        for i, leaf in enumerate(dirty):
            bits = 0
            if inheap[leaf]:
                for r, x in enumerate(queues[leaf][0][1]):
                    if x > 0.0:
                        bits |= 1 << r
            al = alloc[leaf]
            rows[i] = (
                first + leaf, inheap[leaf], share[leaf], bits,
                *[al[r] * inv[r] for r in range(len(inv))],
            )  # fmt: skip
        if clear:
            dirty.clear()
        return n

    def flush(self) -> None:
        """Bring every node the changed leaves touch up to date: the leaves, then the queues
        deepest first, then the root's children."""
        if self.dirty_leaves:
            self.flush_now()
        if self.meta[0]:
            self.settle()

    def flush_now(self) -> None:
        """:meth:`flush` but for the levels of the root's queue children."""
        n = self._rows()
        self.k.flush(self.ii, self.ff, self.hf, self.hi, self.meta, self.rows, n)

    def settle(self) -> None:
        """Compute the levels of the root's queue children that the flush left stale (a root
        child adds to no sum)."""
        self.k.settle(self.ii, self.ff, self.hf, self.hi, self.meta)

    @property
    def rstale(self) -> bool:
        """Whether the levels of the root's queue children wait for :meth:`settle`."""
        return bool(self.meta[0])

    def select(self) -> int:
        """The leaf the descent reaches (flushing first), or -1 when every leaf is blocked: from
        the root, at each node into its child below its guarantee with the smallest (level,
        position) if any, else the unblocked child with the smallest (level, position)."""
        if not self.n_present:  # nothing to descend to: the flush waits for a leaf to wait
            return -1
        dirty = self.dirty_leaves
        leaf: int
        # (the leaf's values written out here and in _rows' loop for two resources: one helper
        # for both cost about 3.5 % of a run's time, farm-bench, 4 pairs)
        if len(dirty) == 1 and self.n_r == 2:  # one changed leaf: no row to write
            one = dirty.pop()
            s = self.s
            present = s._inheap[one]
            sig = 0
            if present:
                n0, n1 = s._queues[one][0][1]
                sig = (n0 > 0.0) + 2 * (n1 > 0.0)
            a0, a1 = s._alloc[one]
            inv = self.inv
            leaf = self.k.flush1_descend2(
                self.ii, self.ff, self.hf, self.hi, self.meta, self.first + one, present,
                s._keys[one], sig, a0 * inv[0], a1 * inv[1],
            )  # fmt: skip
            return leaf
        n = self._rows() if dirty else 0
        leaf = self.k.flush_descend(self.ii, self.ff, self.hf, self.hi, self.meta, self.rows, n)
        return leaf

    def level(self, a: int) -> float:
        """Node ``a``'s level as the tree holds it (a root's child's: as of the last
        :meth:`settle`)."""
        return float(self.ff[a, 0])

    def below(self, a: int) -> bool:
        """Queue ``a`` holds less than its guarantee of every resource guaranteed to it."""
        use, g = self.use[a], self.g[a]
        return all(use[r] < g[r] for r in range(self.n_r) if g[r] > 0.0)

    def is_below(self, a: int) -> bool:
        """Whether queue ``a`` is a guaranteed queue below its guarantee (kept by
        :meth:`account`)."""
        return bool(self.ii[a, self.k.ISBELOW])

    def order_plan(self, groups: frozenset[int]) -> tuple[bool, tuple[int, ...]]:
        """How the leaves of the nodes ``groups`` are ordered (cached: it depends only on the
        tree): whether every leaf's whole path must be compared (a leaf hangs at the root, or
        one of the nodes lies below another), and the root's children above the nodes."""
        plan = self.plans.get(groups)
        if plan is None:
            path = self.path
            nested = 0 in groups or any(a in groups for p in groups for a in path[p][1:])
            tops = () if nested else tuple(sorted({path[p][-1] for p in groups}))
            plan = self.plans[groups] = (nested, tops)
        return plan

    def queue_key_as_is(self, a: int) -> tuple[float, ...]:
        """:meth:`path_key` of queue ``a``'s leaves without their own last pair: for every
        queue from the root's child down to ``a``, (0 for a queue below its guarantee else 1,
        its level, its position), with the levels of the root's children as they are (settled or
        not: the caller settles them when they decide the order)."""
        key: tuple[float, ...] = ()
        ff, ii, isb, pos, parent = self.ff, self.ii, self.k.ISBELOW, self.pos, self.parent
        while a > 0:
            key = (0 if ii[a, isb] else 1, float(ff[a, 0]), pos[a], *key)
            a = parent[a]
        return key

    def path_key(self, leaf: int) -> tuple[float, ...]:
        """The order in which the descent would serve the leaf now, among leaves that all
        waited unblocked: for every node from the root's child down to the leaf, (0 for a queue
        below its guarantee else 1, its level, its position), one after the other."""
        if self.meta[0]:
            self.settle()
        node = self.first + leaf
        return (*self.queue_key_as_is(self.parent[node]), 1, self.s._keys[leaf], self.pos[node])

    # ------------------------------------------------------------------ usage and limits
    def fits_limits(self, leaf: int, need: tuple[float, ...]) -> int:
        """The first queue on the leaf's path whose limit ``need`` would pass, or 0 (none)."""
        floor = self.lim_floor
        for a in self.upath[self.first + leaf]:
            lim, use = self.lim[a], self.use[a]
            for r in range(self.n_r):
                if use[r] + need[r] > lim[r] * (1 + _LIMIT_TOL) + floor[r]:
                    return a
        return 0

    def account(self, leaf: int, need: tuple[float, ...], sign: int) -> list[int]:
        """Add (``sign=1``) or remove a task's demand on the queues of the leaf's path with a
        guarantee or a limit; on a removal, the leaves a limit on the path held back (to be
        woken)."""
        woken: list[int] = []
        lblocked = self.lblocked if sign < 0 else None
        ii, isb = self.ii, self.k.ISBELOW
        if self.n_r == 2:  # the loop below, written out for two resources
            use_of, guaranteed, g_of = self.use, self.guaranteed, self.g
            n0, n1 = sign * need[0], sign * need[1]
            for a in self.upath[self.first + leaf]:
                use = use_of[a]
                use[0] += n0
                use[1] += n1
                if guaranteed[a]:
                    g = g_of[a]
                    ii[a, isb] = (g[0] <= 0.0 or use[0] < g[0]) and (g[1] <= 0.0 or use[1] < g[1])
                if lblocked and a in lblocked:
                    woken.extend(lblocked.pop(a))
            return woken
        for a in self.upath[self.first + leaf]:
            use = self.use[a]
            for r in range(self.n_r):
                use[r] += sign * need[r]
            if self.guaranteed[a]:
                ii[a, isb] = self.below(a)
            if lblocked and a in lblocked:
                woken.extend(lblocked.pop(a))
        return woken


class HDRF(ProgressiveFilling):
    """Online hierarchical DRF on the scenario's queue tree (module docstring; Bhattacharya et
    al., SoCC 2013; guarantees and limits: fairsim's extension, ``docs/hdrf.md``).

    Parameters
    ----------
    fit : {"first-fit", "best-fit"}
        The server a leaf's head task goes to: the first that fits (as ``drf``), or the fitting
        server with the least ``H(i, l)`` of the DRFH paper's eq. 9 (as ``bf-drfh``).
    weights : mapping of int to float, optional
        Weight of each user code (a leaf takes its user's weight; default 1).
    queues : QueueTree, optional
        The scenario's queue tree in the pool's units (``queues`` and ``leaves`` of the config;
        :func:`fairsim.scenario.queues.queue_tree`); None: every leaf at the root, the users as
        one flat set (then ``hdrf`` is ``drf``).
    """

    name = "hdrf"
    mechanism = "hdrf"
    order = LeafOrder
    placement: type[ServerChoice] = FirstFit

    def __init__(
        self,
        *,
        fit: Literal["first-fit", "best-fit"] = "first-fit",
        weights: Mapping[int, float] | None = None,
        queues: QueueTree | None = None,
    ) -> None:
        super().__init__(weights=weights)
        self.fit = fit
        self.queues = queues

    def bind(self, cluster: ClusterView) -> None:
        """Bind the filling machinery (the leaves are its users) and build the tree."""
        self.placement = BestFit if self.fit == "best-fit" else FirstFit
        super().bind(cluster)
        self._leaf: dict[tuple[int, int], int] = {}  # (queue, user) -> leaf code
        self._leaf_user: list[int] = []
        self._task_leaf: dict[int, int] = {}  # live task -> its leaf
        n_q = 0 if self.queues is None else len(self.queues.ids)
        self._n_queues = n_q
        self.tree_ = _Tree(self, self.queues, np.asarray(cluster.total, dtype=np.float64))
        cap = np.asarray(cluster.capacity, dtype=np.float64)
        self.tree_.lim_floor = (_LIMIT_FLOOR * cap.max(axis=0)).tolist()
        self._task_queue = cluster.task_queue
        self._plain_arrival = self._arrived is None and self._activated is None
        self._need2 = np.zeros((64, 2))  # leaf -> its blocked head's need (two resources)
        self._woken = np.empty(64, dtype=np.int64)  # the compiled reservation's output

    # ------------------------------------------------------------------ events
    def _new_leaf(self, queue: int, user: int, task: int) -> int:
        """Create the leaf of (queue, user), at its first task."""
        if not -1 <= queue < self._n_queues:
            raise ValueError(
                f"task {task}: queue {queue} is not a queue of the tree ({self._n_queues} queues)"
            )
        leaf = self._leaf[(queue, user)] = len(self._leaf_user)
        self._leaf_user.append(user)
        self._ensure_user(leaf)
        w = float(self.weights.get(user, 1.0)) if self.weights else 1.0
        self._weight[leaf] = w
        self.tree_.add_leaf(leaf, queue)
        return leaf

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue the task behind its leaf's earlier tasks (the leaf: its queue and its user)."""
        queue = self._task_queue(task)
        leaf = self._leaf.get((queue, user))
        if leaf is None:
            leaf = self._new_leaf(queue, user, task)
        self._task_leaf[task] = leaf
        if self._plain_arrival:  # ProgressiveFilling.on_arrival, for an order without its hooks
            q = self._queues[leaf]
            q.append((task, demand if self._need is None else self._need(demand)))
            self._n_pending += 1
            if len(q) == 1 and not self._blocked[leaf] and not self._inheap[leaf]:
                self._push(leaf)
            return
        super().on_arrival(task, leaf, demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Release the task's share from its leaf and the queues above it; wake the leaves a
        limit on that path held back."""
        leaf = self._task_leaf.pop(task)
        super().on_completion(task, leaf, demand, server)
        tree = self.tree_
        tree.dirty_leaves.add(leaf)  # tree.mark
        if tree.upath[tree.first + leaf]:  # a queue above has a guarantee or a limit
            need = demand if self._need is None else self._need(demand)
            for woken in tree.account(leaf, need, -1):
                if not self._inheap[woken] and not self._blocked[woken] and self._queues[woken]:
                    self._push(woken)

    def on_tick(self, now: float) -> None:  # pragma: no cover - hdrf has no ticks
        """Not used: ``hdrf`` acts on arrivals and completions only."""

    def _push(self, user: int) -> None:
        """The leaf waits and is not blocked: it enters the tree's heaps at the next descent."""
        self._version[user] += 1
        if not self._inheap[user]:
            self._inheap[user] = True
            self.tree_.n_present += 1
        self.tree_.mark(user)

    def _leave(self, leaf: int) -> None:
        """The leaf stops waiting unblocked (no task left, its head fits nowhere, or a limit)."""
        if self._inheap[leaf]:
            self._inheap[leaf] = False
            self.tree_.n_present -= 1
        self.tree_.mark(leaf)

    def _rebuild_heap(self) -> None:  # pragma: no cover - the order is not dynamic
        """Not used: the tree keeps its own heaps."""

    def _block(self, user: int, need: tuple[float, ...]) -> None:
        self._leave(user)
        super()._block(user, need)
        if self._k == 2:  # the blocked head's need, for the compiled reservation
            if user >= self._need2.shape[0]:
                grow = np.zeros((max(user + 1, 2 * self._need2.shape[0]), 2))
                grow[: self._need2.shape[0]] = self._need2
                self._need2 = grow
            self._need2[user] = need

    def _by_key(self, users: list[int]) -> list[int]:
        """``users`` (leaves) in the order the descent serves them with the tree as it is: by
        the path of (guarantee first, level, position) pairs from the root to each leaf
        (:meth:`_Tree.path_key`); siblings by key, then leaf code. On a one-level tree this is
        ``drf``'s order.

        When no queue holding these leaves lies below another and none hangs at the root, the
        leaves of one queue are contiguous in that order: each queue's leaves are sorted by key
        and the queues by their own path (:meth:`_Tree.queue_key_as_is`), the same order at a
        fraction of the cost. Otherwise every leaf's whole path is compared.
        """
        if len(users) == 1:
            return users
        tree = self.tree_
        lparent = tree.lparent
        ps = [lparent[u] for u in users]
        if ps.count(ps[0]) == len(ps):  # siblings: by key, then leaf code
            return super()._by_key(users)
        groups = frozenset(ps)
        if tree.dirty_leaves:
            tree.flush_now()
        nested, tops = tree.order_plan(groups)
        if nested:
            return sorted(users, key=tree.path_key)
        if tree.rstale:
            # the levels of the root's children order these leaves only when two of the queues
            # under the root that hold them are both below their guarantees or both not
            if len({tree.is_below(a) for a in tops}) < len(tops):
                tree.settle()
        out: list[int] = []
        by_key = super()._by_key
        for p in sorted(groups, key=tree.queue_key_as_is):
            out += by_key([u for u, q in zip(users, ps, strict=True) if q == p])
        return out

    def _reserve(self, server: int, single: list[int], may_stop: bool, woken: set[int]) -> None:
        """:meth:`ProgressiveFilling._reserve
        <fairsim.schedulers.progressive_filling.ProgressiveFilling._reserve>` for two resources,
        compiled (:func:`fairsim.schedulers._hdrf_kernel.reserve2`): the leaves in
        :meth:`_by_key`'s order, popped from a heap, and it stops as soon as the server's room
        is below ``bmin`` (a lower bound of every blocked head's need, so every later leaf would
        fail there: the same leaves woken and the same re-check as the whole sorted scan). The
        tree is flushed exactly when :meth:`_by_key` would flush it."""
        if self._k != 2 or len(single) == 1:
            super()._reserve(server, single, may_stop, woken)
            return
        tree, cols, bmin = self.tree_, self._cols, self._bmin
        users = np.array(single, dtype=np.int64)
        n = tree._rows(clear=False) if tree.dirty_leaves else 0
        if users.size > self._woken.size:
            self._woken = np.empty(2 * users.size, dtype=np.int64)
        code = tree.k.reserve2(
            tree.ii, tree.ff, tree.hf, tree.hi, tree.meta, tree.rows, n, users, self._need2,
            float(cols[0][server]), float(cols[1][server]), float(bmin[0]), float(bmin[1]),
            self._woken,
        )  # fmt: skip
        if code & 1:
            tree.dirty_leaves.clear()
        if code & 2:
            self._recheck.add(server)
        if code >= 4:
            woken.update(self._woken[: code >> 2].tolist())

    # ------------------------------------------------------------------ the filling loop
    def decide(self) -> Iterator[tuple[int, int]]:
        """Descend the tree to a leaf, place its head task, repeat until every leaf is blocked
        (the loop of :meth:`ProgressiveFilling.decide
        <fairsim.schedulers.progressive_filling.ProgressiveFilling.decide>` with the tree's
        descent in place of the heap of users)."""
        tree = self.tree_
        if self._freed:
            self._unblock_freed()
        elif not tree.n_present:
            return  # nobody waits unblocked and no server gained room
        queues = self._queues
        limited = bool(tree.limited)
        upath, first = tree.upath, tree.first
        dirty, tree_account, select = tree.dirty_leaves, tree.account, tree.select
        while True:
            leaf = select()
            if leaf < 0:
                if not self._recheck:
                    return
                self._freed.extend(sorted(self._recheck))
                self._recheck.clear()
                self._unblock_freed()
                continue
            q = queues[leaf]
            task, need = q[0]
            if limited:
                over = tree.fits_limits(leaf, need)
                if over:  # held back until a task under that queue ends
                    self._leave(leaf)
                    # the servers it was woken for are no longer its only candidates: other
                    # servers may gain room before the limit lets it go (a stale list made
                    # find_in remember its need as fitting nowhere, and the wake-ups of that
                    # server loop for ever)
                    self._cands.pop(leaf, None)
                    tree.lblocked.setdefault(over, []).append(leaf)
                    continue
            server = self._server_for(task, leaf, need)
            if server < 0:
                continue
            yield task, server
            if self._count_placed(leaf, server, need):
                dirty.add(leaf)  # tree.mark
            else:
                self._leave(leaf)
            if upath[first + leaf]:  # a queue above has a guarantee or a limit
                tree_account(leaf, need, 1)

    # ------------------------------------------------------------------ for reports and tests
    def leaves(self) -> list[tuple[int, int]]:
        """The leaves so far as ``(queue, user code)``, by leaf code."""
        out: list[tuple[int, int]] = [(0, 0)] * len(self._leaf)
        for pair, code in self._leaf.items():
            out[code] = pair
        return out
