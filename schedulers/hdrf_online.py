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
Leaves woken on a freed server reserve it in order queue by queue, each queue's leaves popped
from a heap, and only until the server's room is below every blocked need, instead of sorting
every fitting leaf.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

import numpy as np

from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.placement import BestFit, FirstFit, ServerChoice
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import PooledDominantShare
from fairsim.simulator.cluster import ClusterView

#: Levels of queues are rounded to this many decimals (as the leaves' keys), so that levels
#: equal in exact arithmetic tie whatever the rounding of the running sums.
_DIGITS = 12
#: A node's running sums are recomputed from its children's contributions after this many
#: updates (the running sums drift by float rounding otherwise).
_RESUM = 4096
#: Relative slack of a limit: a task fits within a limit when the queue's usage plus its demand
#: is at most ``limit * (1 + _LIMIT_TOL)``.
_LIMIT_TOL = 1e-9
#: :func:`_round12` takes its short path below this ``x * 1e12`` (2**40: there the product is
#: within 2**-13 of ``x`` times 10**12).
_FAST_ROUND_BELOW = 1099511627776.0
_floor = math.floor
#: The resources a head task demands (two resources), one tuple per pattern: the flush compares
#: them by identity.
_SIG2 = ((False, False), (True, False), (False, True), (True, True))


def _round12(x: float) -> float:
    """``round(x, 12)``, the same float, most of the time without Python's decimal conversion.

    ``round(x, 12)`` is the double nearest to ``n / 10**12``, with ``n`` the integer nearest to
    the exact ``x * 10**12`` (CPython's ``double_round``: correctly rounded digits, then a
    correctly rounded conversion back). For ``0 < y = fl(x * 1e12) < 2**40`` the product is
    within half an ulp (at most 2**-13) of the exact one, so when ``y``'s fractional part is
    more than 0.001 away from one half, ``n`` is ``y`` rounded to the nearest integer, and
    ``n / 1e12`` (both exact doubles, one correctly rounded division) is that same nearest
    double. Otherwise (ties, zero, negative, large or non-finite ``x``) Python's ``round``.
    """
    y = x * 1e12
    if 0.0 < y < _FAST_ROUND_BELOW:
        f = _floor(y)
        if y - f < 0.499:
            return f / 1e12
        if y - f > 0.501:
            return (f + 1) / 1e12
    return round(x, _DIGITS)


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
            # _round12(x), written out (the hot path)
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
    ``B + Z + M U`` with ``M`` the level at the top of its heap.
    """

    def __init__(self, sched: HDRF, queues: QueueTree | None, total: np.ndarray) -> None:
        n_q = 0 if queues is None else len(queues.ids)
        n_r = len(total)
        self.s = sched
        self.n_r = n_r
        self.first = n_q + 1
        self.inv = [1.0 / float(t) if t > 0 else 0.0 for t in total]
        self.parent = [-1] + ([int(p) + 1 for p in queues.parent] if queues is not None else [])
        self.w = [1.0] + ([float(x) for x in queues.weight] if queues is not None else [])
        self.pos = list(range(-1, n_q))  # declaration order among siblings
        self.depth = [0] * self.first
        for a in range(1, self.first):
            k, d = a, 0
            while k > 0:
                k, d = self.parent[k], d + 1
            self.depth[a] = d
        self.level = [0.0] * self.first
        self.present = [False] * self.first
        # whether the node's entry (level, position, node, ver) in its parent's heap is valid
        self.pushed = [False] * self.first
        self.ver = [0] * self.first
        # what each node adds to its parent's sums: (kind, v_0, ..., v_{n_r - 1}), kind 0 ``B``,
        # 1 ``Z``, 2 ``U``
        self.contrib: list[tuple[Any, ...]] = [(0,) + (0.0,) * n_r] * self.first
        self.children: list[list[int]] = [[] for _ in range(self.first)]
        for a in range(1, self.first):
            self.children[self.parent[a]].append(a)
        # internal nodes only
        self.heap: list[list[tuple[float, int, int, int]]] = [[] for _ in range(self.first)]
        self.npres = [0] * self.first
        self.cnt = [[0] * n_r for _ in range(self.first)]
        self.sums = [[0.0] * (3 * n_r) for _ in range(self.first)]  # B, Z, U one after the other
        self.updates = [0] * self.first
        self.sig: list[tuple[bool, ...] | None] = [None] * self.first
        # guarantees and limits, in the pool's units
        self.guaranteed = [False] * self.first
        self.g = [[0.0] * n_r for _ in range(self.first)]
        self.lim = [[math.inf] * n_r for _ in range(self.first)]
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
        self.path: list[tuple[int, ...]] = [()] * self.first  # queue ancestors of each node
        for a in range(1, self.first):
            k, anc = self.parent[a], [a]
            while k > 0:
                anc.append(k)
                k = self.parent[k]
            self.path[a] = tuple(anc)
        # ... and those of them with a guarantee or a limit (whose usage is kept)
        reads = [self.guaranteed[a] or a in self.limited for a in range(self.first)]
        self.upath = [tuple(a for a in anc if reads[a]) for anc in self.path]
        self.lblocked: dict[int, list[int]] = {}  # queue -> leaves blocked by its limit
        self.dirty_leaves: set[int] = set()
        self.qdirty = [False] * self.first  # internal nodes to recompute at the next flush
        # guaranteed queues holding less than their guarantee (kept by account)
        self.is_below = [self.guaranteed[a] for a in range(self.first)]
        self.n_present = 0  # leaves waiting unblocked (the scheduler counts them)
        self.qorder = sorted(range(1, self.first), key=lambda a: -self.depth[a])
        self.qinner = [a for a in self.qorder if self.parent[a] > 0]  # queues below a queue
        # The root's queue children: only the descent (and the orders of :meth:`path_key`) reads
        # their levels, which feed no running sum, so with two resources the flush leaves them
        # dirty (``qdirty``, ``rstale``) and :meth:`settle` computes them when a descent has to
        # compare them: the same levels, computed from the same sums, fewer times.
        self.rootq = [a for a in range(1, self.first) if self.parent[a] == 0]
        self.root_leaves = False  # some leaf hangs at the root
        self.rstale = False
        self.lparent: list[int] = []  # leaf code -> its parent node (``parent[first + leaf]``)
        # a heap holding more entries than this is rebuilt without its stale ones
        self.rebuild_at = [64 + 4 * len(c) for c in self.children]
        # queues holding a set of leaves -> how their order is decided (:meth:`order_plan`)
        self.plans: dict[frozenset[int], tuple[bool, tuple[int, ...]]] = {}
        # :meth:`_flush`, without its dispatch on the number of resources
        self.flush_now = self._make_flush2() if n_r == 2 else self._flush

    # ------------------------------------------------------------------ leaves
    def add_leaf(self, leaf: int, queue: int) -> None:
        """A new leaf (code ``leaf``, the next one) in ``queue`` (-1: the root)."""
        node = self.first + leaf
        assert node == len(self.parent)
        p = queue + 1
        self.parent.append(p)
        self.w.append(1.0)  # unused: a leaf's level is the scheduler's key
        self.pos.append(self.first + leaf)
        self.level.append(0.0)
        self.present.append(False)
        self.pushed.append(False)
        self.ver.append(0)
        self.contrib.append((0,) + (0.0,) * self.n_r)
        self.sig.append(None)
        self.children[p].append(node)
        self.rebuild_at[p] += 4
        self.lparent.append(p)
        self.path.append(self.path[p] if p > 0 else ())
        self.upath.append(self.upath[p] if p > 0 else ())
        if p == 0:
            self.root_leaves = True

    def mark(self, leaf: int) -> None:
        """The leaf's allocation, presence or head task changed."""
        self.dirty_leaves.add(leaf)

    # ------------------------------------------------------------------ the sums
    def _recontrib(self, node: int, present: bool, level: float, vec: list[float]) -> None:
        """Replace what ``node`` contributes to its parent's sums (``B``, ``Z``, ``U``, laid
        out one after the other in ``sums[parent]``)."""
        p = self.parent[node]
        old = self.contrib[node]
        kind = old[0]
        sums, n_r = self.sums[p], self.n_r
        base = kind * n_r
        for r in range(n_r):
            sums[base + r] -= old[1 + r]
        if not present:
            new_kind, add = 0, tuple(vec)
        elif level > 0.0:
            new_kind, add = 2, tuple([v / level for v in vec])
        else:
            new_kind, add = 1, tuple(vec)
        base = new_kind * n_r
        for r in range(n_r):
            sums[base + r] += add[r]
        self.npres[p] += (new_kind != 0) - (kind != 0)
        self.contrib[node] = (new_kind, *add)
        self.updates[p] += 1
        if self.updates[p] >= _RESUM:
            self._resum(p)

    def _resum(self, a: int) -> None:
        """Recompute node ``a``'s sums from its children's contributions (no drift)."""
        self.updates[a] = 0
        n_r = self.n_r
        sums = [0.0] * (3 * n_r)
        for c in self.children[a]:
            add = self.contrib[c]
            base = add[0] * n_r
            for r in range(n_r):
                sums[base + r] += add[1 + r]
        self.sums[a] = sums

    def _resig(self, node: int, sig: tuple[bool, ...] | None) -> None:
        """Count the resources the leaf's head task demands at every ancestor (while it is
        unblocked): the resources a queue's level is taken over."""
        old = self.sig[node]
        if old == sig:
            return
        self.sig[node] = sig
        a = self.parent[node]
        while a > 0:  # the root's counts are never read
            cnt = self.cnt[a]
            for r in range(self.n_r):
                cnt[r] += (sig is not None and sig[r]) - (old is not None and old[r])
            a = self.parent[a]

    # ------------------------------------------------------------------ flush and descent
    def flush(self) -> None:
        """Bring every node the changed leaves touch up to date: the leaves, then the queues
        deepest first, then the root's children."""
        if self.dirty_leaves:
            self._flush()
        if self.rstale:
            self.settle()

    def settle(self) -> None:
        """Compute the levels of the root's queue children that the flush left dirty (a root
        child adds to no sum: :meth:`_update_queue` gives it only its level and heap entry)."""
        self.rstale = False
        qdirty = self.qdirty
        for a in self.rootq:
            if qdirty[a]:
                qdirty[a] = False
                self._update_queue(a)

    def _make_flush2(self) -> Callable[[], None]:
        """:meth:`_flush` written out for two resources (the hot path), as a function whose
        lists are bound once in its closure. The leaves: each changed leaf's heap entry, what it
        adds to its parent's sums (as :meth:`_recontrib`) and its head's resources (as
        :meth:`_resig`); then the queues below the root's children, deepest first (as
        :meth:`_update_queue`, :meth:`_top` and :meth:`_recontrib`); the root's children only
        get their presence (their levels wait for :meth:`settle`). The same operations in the
        same order as those methods: the same floats."""
        tree, s = self, self.s
        share, alloc, inheap, queues = s._keys, s._alloc, s._inheap, s._queues
        inv0, inv1, first, parent = self.inv[0], self.inv[1], self.first, self.parent
        contrib, sums_of, npres, updates = self.contrib, self.sums, self.npres, self.updates
        ver, pos, heaps, qdirty, sig_of = self.ver, self.pos, self.heap, self.qdirty, self.sig
        levels, pushed, cnt_of, path, w = self.level, self.pushed, self.cnt, self.path, self.w
        present_of, rebuild_at = self.present, self.rebuild_at
        qinner, rootq, dirty, resum = self.qinner, self.rootq, self.dirty_leaves, self._resum

        push, replace, pop = heapq.heappush, heapq.heapreplace, heapq.heappop

        def flush2() -> None:
            d0: int  # changes of the counts of head tasks demanding each resource
            d1: int
            for leaf in dirty:
                node = first + leaf
                present = inheap[leaf]
                level = share[leaf]
                p = parent[node]
                if not (present and pushed[node] and levels[node] == level):
                    # (a leaf that stays unblocked at the same level keeps its heap entry)
                    levels[node] = level
                    v = ver[node] + 1
                    ver[node] = v
                    if present:
                        heap = heaps[p]
                        if pushed[node] and heap[0][2] == node and heap[0][3] == v - 1:
                            replace(heap, (level, pos[node], node, v))  # its entry was the top
                        else:
                            push(heap, (level, pos[node], node, v))
                    pushed[node] = present
                if not p:  # the root's vector and level are never read
                    continue
                kind, o0, o1 = contrib[node]
                al = alloc[leaf]
                v0, v1 = al[0] * inv0, al[1] * inv1
                if not present:
                    new_kind = 0
                elif level > 0.0:
                    new_kind = 2
                    v0, v1 = v0 / level, v1 / level
                else:
                    new_kind = 1
                sums = sums_of[p]
                b = kind * 2
                sums[b] -= o0
                sums[b + 1] -= o1
                b = new_kind * 2
                sums[b] += v0
                sums[b + 1] += v1
                contrib[node] = (new_kind, v0, v1)
                if new_kind != kind and (new_kind == 0 or kind == 0):
                    npres[p] += 1 if kind == 0 else -1
                u = updates[p] + 1
                updates[p] = u
                if u >= _RESUM:
                    resum(p)
                old_sig = sig_of[node]
                if present:
                    need = queues[leaf][0][1]
                    sig = _SIG2[(need[0] > 0.0) + 2 * (need[1] > 0.0)]
                    if sig is not old_sig:
                        sig_of[node] = sig
                        if old_sig is None:
                            d0, d1 = sig[0], sig[1]
                        else:
                            d0 = sig[0] - old_sig[0]
                            d1 = sig[1] - old_sig[1]
                        for a in path[node]:
                            cnt = cnt_of[a]
                            cnt[0] += d0
                            cnt[1] += d1
                elif old_sig is not None:
                    sig_of[node] = None
                    d0, d1 = old_sig[0], old_sig[1]
                    for a in path[node]:
                        cnt = cnt_of[a]
                        cnt[0] -= d0
                        cnt[1] -= d1
                qdirty[p] = True
            dirty.clear()
            # the queues: _update_queue, _top and _recontrib written out
            for a in qinner:  # deepest first, each below a queue
                if not qdirty[a]:
                    continue
                p = parent[a]
                present = npres[a] > 0
                qdirty[a] = False
                qdirty[p] = True
                heap = heaps[a]
                while heap and heap[0][3] != ver[heap[0][2]]:
                    pop(heap)
                if len(heap) > rebuild_at[a]:  # too many stale entries: rebuild
                    heaps[a] = heap = [e for e in heap if e[3] == ver[e[2]]]
                    heapq.heapify(heap)
                # the vector and level: _level2 written out
                m = levels[heap[0][2]] if heap else 0.0
                sums, cnt = sums_of[a], cnt_of[a]
                v0 = sums[0] + sums[2] + m * sums[4]
                v1 = sums[1] + sums[3] + m * sums[5]
                c0, c1 = cnt[0] > 0, cnt[1] > 0
                if c0 == c1:
                    top_v = v0 if v0 >= v1 else v1
                else:
                    top_v = v0 if c0 else v1
                # level = round(top_v / w[a], 12), as _round12 (written out)
                x = top_v / w[a]
                y = x * 1e12
                if 0.0 < y < _FAST_ROUND_BELOW:
                    f = _floor(y)
                    if y - f < 0.499:
                        level = f / 1e12
                    elif y - f > 0.501:
                        level = (f + 1) / 1e12
                    else:
                        level = round(x, _DIGITS)
                else:
                    level = round(x, _DIGITS)
                # what the queue adds to its parent's sums
                kind, o0, o1 = contrib[a]
                psums = sums_of[p]
                if not present:
                    new_kind = 0
                elif level > 0.0:
                    new_kind = 2
                    v0, v1 = v0 / level, v1 / level
                else:
                    new_kind = 1
                b = kind * 2
                psums[b] -= o0
                psums[b + 1] -= o1
                b = new_kind * 2
                psums[b] += v0
                psums[b + 1] += v1
                contrib[a] = (new_kind, v0, v1)
                if new_kind != kind and (new_kind == 0 or kind == 0):
                    npres[p] += 1 if kind == 0 else -1
                u = updates[p] + 1
                updates[p] = u
                if u >= _RESUM:
                    resum(p)
                present_of[a] = present
                if not (present and pushed[a] and levels[a] == level):
                    levels[a] = level
                    v = ver[a] + 1
                    ver[a] = v
                    if present:
                        heap = heaps[p]
                        if pushed[a] and heap[0][2] == a and heap[0][3] == v - 1:
                            replace(heap, (level, pos[a], a, v))  # its entry was the top
                        else:
                            push(heap, (level, pos[a], a, v))
                    pushed[a] = present
            for a in rootq:  # the root's children: their levels wait for settle()
                if qdirty[a]:
                    present_of[a] = npres[a] > 0
                    tree.rstale = True

        return flush2

    def _flush(self) -> None:
        """:meth:`flush` but for the levels of the root's queue children (two resources)."""
        if self.n_r == 2:
            self.flush_now()
            return
        s = self.s
        share, alloc, inheap, queues = s._keys, s._alloc, s._inheap, s._queues
        inv, n_r, first = self.inv, self.n_r, self.first
        parent, contrib, sums_of, npres = self.parent, self.contrib, self.sums, self.npres
        ver, pos, heaps, qdirty, sig_of = self.ver, self.pos, self.heap, self.qdirty, self.sig
        levels, pushed = self.level, self.pushed
        for leaf in self.dirty_leaves:
            node = first + leaf
            present = inheap[leaf]
            level = share[leaf]
            al = alloc[leaf]
            p = parent[node]
            if not (present and pushed[node] and levels[node] == level):
                # (a leaf that stays unblocked at the same level keeps its heap entry)
                levels[node] = level
                pushed[node] = present
                v = ver[node] + 1
                ver[node] = v
                if present:
                    heapq.heappush(heaps[p], (level, pos[node], node, v))
            if not p:  # the root's vector and level are never read
                continue
            # what the leaf adds to its parent's sums (inline _recontrib)
            old = contrib[node]
            kind = old[0]
            sums = sums_of[p]
            vec = [al[r] * inv[r] for r in range(n_r)]
            add: tuple[float, ...]
            if not present:
                new_kind, add = 0, tuple(vec)
            elif level > 0.0:
                new_kind, add = 2, tuple([v / level for v in vec])
            else:
                new_kind, add = 1, tuple(vec)
            for r in range(n_r):
                sums[kind * n_r + r] -= old[1 + r]
                sums[new_kind * n_r + r] += add[r]
            contrib[node] = (new_kind, *add)
            if new_kind != kind and (new_kind == 0 or kind == 0):
                npres[p] += 1 if kind == 0 else -1
            self.updates[p] += 1
            if self.updates[p] >= _RESUM:
                self._resum(p)
            sig = tuple(x > 0.0 for x in queues[leaf][0][1]) if present else None
            if sig != sig_of[node]:
                self._resig(node, sig)
            qdirty[p] = True
        self.dirty_leaves.clear()
        for a in self.qorder:  # the queues, deepest first
            if qdirty[a]:
                qdirty[a] = False
                self._update_queue(a)
                qdirty[parent[a]] = True

    def _top(self, a: int) -> int:
        """The unblocked child of ``a`` with the smallest (level, position), or -1."""
        heap, ver = self.heap[a], self.ver
        while heap and heap[0][3] != ver[heap[0][2]]:
            heapq.heappop(heap)
        if len(heap) > self.rebuild_at[a]:  # too many stale entries: rebuild
            self.heap[a] = heap = [e for e in heap if e[3] == ver[e[2]]]
            heapq.heapify(heap)
        return heap[0][2] if heap else -1

    def _level2(self, a: int) -> tuple[float, float, float]:
        """Queue ``a``'s vector ``B + Z + M U`` and level for two resources: ``(v0, v1,
        level)``, the level being the largest entry over the resources its unblocked leaves
        need (every entry when they need none) divided by its weight, rounded to 12 digits.
        The flush (:meth:`_make_flush2`) and :meth:`settle` have these lines written out (the
        hot paths): change them together."""
        top = self._top(a)
        m = self.level[top] if top >= 0 else 0.0
        sums, cnt = self.sums[a], self.cnt[a]
        v0 = sums[0] + sums[2] + m * sums[4]
        v1 = sums[1] + sums[3] + m * sums[5]
        c0, c1 = cnt[0] > 0, cnt[1] > 0
        if c0 == c1:
            top_v = v0 if v0 >= v1 else v1
        else:
            top_v = v0 if c0 else v1
        return v0, v1, _round12(top_v / self.w[a])

    def _update_queue(self, a: int) -> None:
        """Recompute queue ``a``'s vector ``B + Z + M U``, level and presence, and what it adds
        to its parent."""
        present = self.npres[a] > 0
        n_r = self.n_r
        if n_r == 2:
            v0, v1, level = self._level2(a)
            vec = [v0, v1]
        else:
            top = self._top(a)
            m = self.level[top] if top >= 0 else 0.0
            sums, cnt = self.sums[a], self.cnt[a]
            vec = [sums[r] + sums[n_r + r] + m * sums[2 * n_r + r] for r in range(n_r)]
            top_v = max([vec[r] for r in range(n_r) if cnt[r] > 0] or vec)
            level = _round12(top_v / self.w[a])
        if self.parent[a]:  # the root's vector is never read
            self._recontrib(a, present, level, vec)
        self.present[a] = present
        if not (present and self.pushed[a] and self.level[a] == level):
            self.level[a] = level
            self.pushed[a] = present
            v = self.ver[a] + 1
            self.ver[a] = v
            if present:
                heapq.heappush(self.heap[self.parent[a]], (level, self.pos[a], a, v))

    def below(self, a: int) -> bool:
        """Queue ``a`` holds less than its guarantee of every resource guaranteed to it."""
        use, g = self.use[a], self.g[a]
        return all(use[r] < g[r] for r in range(self.n_r) if g[r] > 0.0)

    def select(self) -> int:
        """The leaf the descent reaches (flushing first), or -1 when every leaf is blocked."""
        if not self.n_present:  # nothing to descend to: the flush waits for a leaf to wait
            return -1
        if self.dirty_leaves:
            self.flush_now()
        first, present, heaps, ver = self.first, self.present, self.heap, self.ver
        gchildren, level, pos, is_below = self.gchildren, self.level, self.pos, self.is_below
        node = self._root_choice() if self.rstale else 0
        while node < first:
            best = -1
            gch = gchildren[node]
            if gch:  # a queue below its guarantee first
                for c in gch:
                    if present[c] and is_below[c]:
                        if best < 0 or (level[c], pos[c]) < (level[best], pos[best]):
                            best = c
            if best < 0:
                heap = heaps[node]
                while heap and heap[0][3] != ver[heap[0][2]]:
                    heapq.heappop(heap)
                if not heap:
                    return -1
                best = heap[0][2]
            node = best
        return node - first

    def _root_choice(self) -> int:
        """The root's child the descent goes to when no level need be compared for it (one
        queue below its guarantee waits, or one queue waits and no leaf hangs at the root);
        else settle the root's children's levels and return the root (0), to descend from."""
        present, is_below = self.present, self.is_below
        best = -1
        for c in self.gchildren[0]:
            if present[c] and is_below[c]:
                if best >= 0:  # two below their guarantees: compare their levels
                    best = -1
                    break
                best = c
        else:
            if best >= 0:
                return best
            if not self.root_leaves:
                for c in self.rootq:
                    if present[c]:
                        if best >= 0:
                            best = -1
                            break
                        best = c
                else:
                    if best >= 0:
                        return best
        self.settle()
        return 0

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

    def queue_key(self, a: int) -> tuple[float, ...]:
        """:meth:`path_key` of queue ``a``'s leaves without their own last pair: for every
        queue from the root's child down to ``a``, (0 for a queue below its guarantee else 1,
        its level, its position)."""
        if self.rstale:
            self.settle()
        return self.queue_key_as_is(a)

    def queue_key_as_is(self, a: int) -> tuple[float, ...]:
        """:meth:`queue_key` with the levels of the root's children as they are (settled or
        not: the caller knows they decide nothing)."""
        key: tuple[float, ...] = ()
        while a > 0:
            key = (0 if self.is_below[a] else 1, self.level[a], self.pos[a], *key)
            a = self.parent[a]
        return key

    def path_key(self, leaf: int) -> tuple[float, ...]:
        """The order in which the descent would serve the leaf now, among leaves that all
        waited unblocked: for every node from the root's child down to the leaf, (0 for a queue
        below its guarantee else 1, its level, its position), one after the other."""
        if self.rstale:
            self.settle()
        node = self.first + leaf
        a = self.parent[node]
        key: tuple[float, ...] = (1, self.s._keys[leaf], self.pos[node])
        while a > 0:
            g = 0 if self.is_below[a] else 1
            key = (g, self.level[a], self.pos[a], *key)
            a = self.parent[a]
        return key

    # ------------------------------------------------------------------ usage and limits
    def fits_limits(self, leaf: int, need: tuple[float, ...]) -> int:
        """The first queue on the leaf's path whose limit ``need`` would pass, or 0 (none)."""
        for a in self.upath[self.first + leaf]:
            lim, use = self.lim[a], self.use[a]
            for r in range(self.n_r):
                if use[r] + need[r] > lim[r] * (1 + _LIMIT_TOL) + 1e-12:
                    return a
        return 0

    def account(self, leaf: int, need: tuple[float, ...], sign: int) -> list[int]:
        """Add (``sign=1``) or remove a task's demand on the queues of the leaf's path with a
        guarantee or a limit; on a removal, the leaves a limit on the path held back (to be
        woken)."""
        woken: list[int] = []
        lblocked = self.lblocked if sign < 0 else None
        if self.n_r == 2:  # the loop below, written out for two resources
            use_of, guaranteed, g_of, is_below = self.use, self.guaranteed, self.g, self.is_below
            n0, n1 = sign * need[0], sign * need[1]
            for a in self.upath[self.first + leaf]:
                use = use_of[a]
                use[0] += n0
                use[1] += n1
                if guaranteed[a]:
                    g = g_of[a]
                    is_below[a] = (g[0] <= 0.0 or use[0] < g[0]) and (g[1] <= 0.0 or use[1] < g[1])
                if lblocked and a in lblocked:
                    woken.extend(lblocked.pop(a))
            return woken
        for a in self.upath[self.first + leaf]:
            use = self.use[a]
            for r in range(self.n_r):
                use[r] += sign * need[r]
            if self.guaranteed[a]:
                self.is_below[a] = self.below(a)
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
        self._task_queue = cluster.task_queue
        self._plain_arrival = self._arrived is None and self._activated is None

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

    def _by_key(self, users: list[int]) -> list[int]:
        """``users`` (leaves) in the order the descent serves them with the tree as it is: by
        the path of (guarantee first, level, position) pairs from the root to each leaf
        (:meth:`_Tree.path_key`); siblings by key, then leaf code. On a one-level tree this is
        ``drf``'s order.

        The leaves of one queue are contiguous in that order unless another of the queues
        holding them lies below it (or leaves hang at the root): then each queue's leaves are
        sorted by key and the queues by their own path (:meth:`_Tree.queue_key`), which is the
        same order at a fraction of the cost; otherwise every leaf's whole path is compared.
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
            is_below = tree.is_below
            if len({is_below[a] for a in tops}) < len(tops):
                tree.settle()
        out: list[int] = []
        by_key = super()._by_key
        for p in sorted(groups, key=tree.queue_key_as_is):
            out += by_key([u for u, q in zip(users, ps, strict=True) if q == p])
        return out

    def _groups_in_order(self, users: list[int]) -> Iterator[list[tuple[object, int]]]:
        """:meth:`_by_key`'s order, lazily: ``users`` (leaves, more than one) in consecutive
        parts, each a list of ``(sort key, leaf)`` pairs whose sorted order is that part's order
        (the leaves of one queue after another, or all at once by :meth:`_Tree.path_key`); a
        part is built only when the one before it is used up. The tree is flushed exactly when
        :meth:`_by_key` would flush it."""
        tree, keys = self.tree_, self._keys
        lparent = tree.lparent
        ps = [lparent[u] for u in users]
        if ps.count(ps[0]) == len(ps):  # one queue: by key, then leaf code
            yield [(keys[u], u) for u in users]
            return
        groups = frozenset(ps)
        if tree.dirty_leaves:
            tree.flush_now()
        nested, tops = tree.order_plan(groups)
        if nested:
            path_key = tree.path_key
            yield [(path_key(u), u) for u in users]
            return
        if tree.rstale:
            # the levels of the root's children order these leaves only when two of the queues
            # under the root that hold them are both below their guarantees or both not
            is_below = tree.is_below
            if len({is_below[a] for a in tops}) < len(tops):
                tree.settle()
        for p in sorted(groups, key=tree.queue_key_as_is):
            yield [(keys[u], u) for u, q in zip(users, ps, strict=True) if q == p]

    def _reserve(self, server: int, single: list[int], may_stop: bool, woken: set[int]) -> None:
        """:meth:`ProgressiveFilling._reserve
        <fairsim.schedulers.progressive_filling.ProgressiveFilling._reserve>` for two resources
        that orders only the leaves it reaches: the parts of :meth:`_groups_in_order` one after
        the other, each a heap popped in order, and it stops as soon as the server's room is
        below ``bmin`` (a lower bound of every blocked head's need, so every later leaf would
        fail there: the same leaves woken and the same re-check as the whole sorted scan)."""
        if self._k != 2 or len(single) == 1:
            super()._reserve(server, single, may_stop, woken)
            return
        cols, bmin, bneed = self._cols, self._bmin, self._bneed
        r0, r1 = float(cols[0][server]), float(cols[1][server])
        b0, b1 = float(bmin[0]), float(bmin[1])
        left = len(single)
        pop = heapq.heappop
        for part in self._groups_in_order(single):
            heapq.heapify(part)
            while part:
                u = pop(part)[1]
                left -= 1
                n0, n1 = bneed[u]
                if n0 <= r0 and n1 <= r1:
                    woken.add(u)
                    r0 -= n0
                    r1 -= n1
                    if r0 < b0 or r1 < b1:  # every later leaf fails here
                        if left:
                            self._recheck.add(server)
                        return
                else:
                    self._recheck.add(server)
                    if r0 < b0 or r1 < b1:
                        return

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
        dirty, tree_account = tree.dirty_leaves, tree.account
        # tree.select written out (the hot path): the flush, then the descent
        flush_now, settle, groot, rootq = tree.flush_now, tree.settle, tree.gchildren[0], tree.rootq
        present, heaps, ver = tree.present, tree.heap, tree.ver
        gchildren, level, pos, is_below = tree.gchildren, tree.level, tree.pos, tree.is_below
        pop = heapq.heappop
        while True:
            if not tree.n_present:  # nothing to descend to: the flush waits for a leaf to wait
                leaf = -1
            else:
                if dirty:
                    flush_now()
                node = 0
                if tree.rstale:  # tree._root_choice written out
                    node = -1
                    for c in groot:
                        if present[c] and is_below[c]:
                            if node >= 0:  # two below their guarantees: compare their levels
                                node = -2
                                break
                            node = c
                    if node == -1 and not tree.root_leaves:
                        for c in rootq:
                            if present[c]:
                                if node >= 0:
                                    node = -2
                                    break
                                node = c
                    if node < 0:
                        settle()
                        node = 0
                while node < first:
                    best = -1
                    gch = gchildren[node]
                    if gch:  # a queue below its guarantee first
                        for c in gch:
                            if present[c] and is_below[c]:
                                if best < 0 or (level[c], pos[c]) < (level[best], pos[best]):
                                    best = c
                    if best < 0:
                        heap = heaps[node]
                        while heap and heap[0][3] != ver[heap[0][2]]:
                            pop(heap)
                        if not heap:
                            node = -1
                            break
                        best = heap[0][2]
                    node = best
                leaf = node - first if node >= 0 else -1
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
