"""The online mechanisms under study: DRF, C-DRFH, TSF, AF, PF, BMF and LMM-MMS for indivisible
tasks.

Every scheduler here is a :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling`: the
waiting user with the lowest *key* goes next and its head task goes to the first server that fits it
(First-Fit); a user whose head fits nowhere is blocked until a server frees resources. Only the key
changes from one mechanism to the next, so all of them keep the lazy heap and the wake-ups on freed
servers: no pass over all servers or all users per event. (Two bounded exceptions: PF recomputes its
prices, one vectorised numpy pass over a per-user table, in a scheduling pass where the set of
active users changed; BMF sorts the users' shares when two resources are tied as the bottleneck,
which on real traces happens only while the pool is empty.)

Notation: ``C_r`` is the pooled capacity of resource r (sum over all servers), ``A_ir`` the
amount of r held by user i's running tasks, ``w_i`` the user's weight, ``d`` a task's demand
vector. Ties go to the lower user code (order of first appearance); keys are rounded to 12
decimals so that shares equal in exact arithmetic tie whatever the rounding of running sums.

=========== ======================================================== ===========================
name        key of user i (lowest served first)                      source
=========== ======================================================== ===========================
``drf``     ``max_r A_ir / C_r / w_i`` (pooled dominant share)       Ghodsi et al. NSDI'11, §4
``c-drfh``  ``sum over running tasks of max_r d_r / C_r, / w_i``     PS-DSF paper §II-B (eq. 5)
``tsf``     ``sum over running tasks of 1 / gamma(d), / w_i``        PS-DSF paper §II-B
``af``      ``sum_r A_ir / C_r / w_i`` (aggregate share)             Ghodsi et al. §5.1
``pf``      ``sum_r A_ir nu_r / C_r / w_i`` (PF-priced allocation)   Bonald-Roberts §3.2, eq. 3
``bmf``     ``-(lowest rank of i on a bottleneck resource)``         Bonald-Roberts §3.3
``lmm-mms`` ``x_i / mu_i`` (MMS ratio)                               Li et al. 2025
=========== ======================================================== ===========================

``gamma(d) = sum_l min_{r: d_r > 0} c_lr / d_r`` is the number of such tasks the user could run
alone on the whole cluster (PS-DSF eq. 7 summed over servers, placement constraints ignored). For
a user whose tasks all have the same demand every key is the one of the matching exact mechanism
in :mod:`fairsim.schedulers.exact` applied to the user's task count, so ``fairsim solve NAME
--online`` is progressive filling towards that mechanism's allocation
(``tests/properties/test_online_schedulers.py`` bounds the gap). Per-mechanism details, including
what is our own reading of the papers, are in each class and in ``docs/mechanisms.md``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence

import numpy as np

from fairsim.schedulers.placement import FirstFit
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import (
    DIGITS,
    FillingState,
    PooledDominantShare,
    UserOrder,
)
from fairsim.simulator.cluster import ClusterView

#: Keys are rounded to this many decimals, so that users whose shares are equal in exact
#: arithmetic tie (and go in user-code order) whatever the rounding of the running sums.
_DIGITS = DIGITS
#: Multiplicative (Cover) iterations of the PF prices with three or more resources.
_PF_COVER = 2000


class DRF(ProgressiveFilling):
    """DRF over the pooled cluster, placed First-Fit (Ghodsi et al., NSDI 2011, Sections 4-5).

    Key: the weighted dominant share of the pooled cluster, ``max_r A_ir / C_r / w_i``, as if the
    servers were one big server (the share ignores placement constraints, like ``fairsim solve
    drf``); the head task of the user with the lowest share goes to the first server that fits it
    -- the order in which a Mesos-style DRF allocator serves frameworks. Tasks are still placed
    on real servers, so the pool's fragmentation is felt, unlike in the exact ``drf``.

    Notes
    -----
    Over a non-wasteful allocation the DRFH paper's global dominant share (eqs. 2-3) *is* the
    pooled dominant share, so ``drf`` follows the rule of ``ff-drfh``; the only difference is
    that its keys are rounded (module docstring), so users with equal shares tie exactly where
    ``ff-drfh`` lets the rounding of its running sums decide. It is registered under its own
    name because the PS-DSF, LMM-MMS and Bonald-Roberts papers compare against "DRF".
    """

    name = "drf"
    mechanism = "drf"
    order = PooledDominantShare
    placement = FirstFit


class SumOverTasks(UserOrder):
    """Key = (sum over the user's running tasks of a per-task term) / weight, rounded to 12
    decimals.

    Subclasses define :meth:`term`; terms are cached per distinct task need.
    """

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then allocate the per-user sums and the per-need term cache."""
        super().bind(state, sched, cluster)
        self._acc: list[float] = []
        self._terms: dict[tuple[float, ...], float] = {}

    def grow(self, n_users: int) -> None:
        """Grow the per-user sums."""
        self._acc.extend([0.0] * (n_users - len(self._acc)))

    def term(self, need: tuple[float, ...]) -> float:
        """The term a running task with this need adds to its user's key (before the weight)."""
        raise NotImplementedError

    def account(self, user: int, server: int, need: tuple[float, ...], sign: int) -> None:
        """Add (``sign=1``) or remove (``sign=-1``) the task's term."""
        t = self._terms.get(need)
        if t is None:
            t = self._terms[need] = self.term(need)
        # an idle user's sum is exactly 0 (no rounding drift from += / -=: ties stay ties)
        idle = self.state.running[user] == 0
        self._acc[user] = 0.0 if idle else self._acc[user] + sign * t

    def key(self, user: int) -> float:
        """``round(sum of terms / weight, 12)``."""
        return round(self._acc[user] / self.state.weight[user], _DIGITS)


class TaskDominantShare(SumOverTasks):
    """C-DRFH's key: the sum of the running tasks' dominant shares of the pooled capacity,
    ``max_r d_r / C_r`` each (PS-DSF paper, Section II-B, eq. 5), divided by the weight."""

    def term(self, need: tuple[float, ...]) -> float:
        """``max_r d_r / C_r``."""
        t = self.state.total
        return max(need[k] / t[k] for k in range(self.state.n_columns))


class TaskShare(SumOverTasks):
    """TSF's key: the sum over running tasks of ``1 / gamma(d)`` (PS-DSF paper, Section II-B,
    eq. 7 summed over servers), divided by the weight; ``gamma`` is computed once per distinct
    need over the distinct server capacities."""

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then group the servers by capacity for ``gamma``."""
        super().bind(state, sched, cluster)
        classes, counts = np.unique(np.asarray(cluster.capacity), axis=0, return_counts=True)
        self._classes = classes
        self._class_counts = counts.astype(np.float64)

    def term(self, need: tuple[float, ...]) -> float:
        """``1 / gamma(d)`` (``inf`` if the task fits no server)."""
        g = _gamma(self._classes, self._class_counts, need)
        return 1.0 / g if g > 0 else math.inf


class AggregateShare(SumOverTasks):
    """AF's key: the aggregate share ``sum_r A_ir / C_r`` (Ghodsi et al., Section 5.1), kept as
    a sum over running tasks of ``sum_r d_r / C_r``, divided by the weight."""

    def term(self, need: tuple[float, ...]) -> float:
        """``sum_r d_r / C_r``."""
        t = self.state.total
        return sum([need[k] / t[k] for k in range(self.state.n_columns)])


class CDRFH(ProgressiveFilling):
    """C-DRFH: global dominant shares as if there were no placement constraints.

    PS-DSF paper (Khamse-Ashari et al.), Section II-B: the dominant resource of a user is taken
    "as if there were no placement constraints and all resources were integrated at one resource
    pool" (dominant share per task ``max_r d_r / C_r``, eq. 5 with the pooled capacity).

    Key: ``sum over i's running tasks t of max_r d_tr / C_r``, divided by ``w_i``; First-Fit.

    Notes
    -----
    The paper's users have one demand vector, so their dominant share is ``x_i max_r d_ir / C_r``.
    Online a user's tasks differ; we add up each task's own dominant share (each task is a
    container with its own dominant resource) -- our reading. ``drf`` instead takes the dominant
    share of the summed allocation, ``max_r sum_t d_tr / C_r``; the two keys coincide when all of
    a user's tasks have the same dominant resource, in particular on ``fairsim solve`` instances.
    """

    name = "c-drfh"
    mechanism = "c-drfh"
    order = TaskDominantShare
    placement = FirstFit


class TSF(ProgressiveFilling):
    """Task Share Fairness: tasks as a fraction of what the user could run alone.

    PS-DSF paper, Section II-B (Wang et al.'s TSF, its ref. [14]): user n's task share is
    ``x_n / gamma_n`` with ``gamma_n = sum_l min_r c_lr / d_nr`` the tasks it runs when it
    monopolises every server, as if there were no placement constraints (eq. 7 summed over l).

    Key: ``sum over i's running tasks t of 1 / gamma(d_t)``, divided by ``w_i``; First-Fit.
    ``gamma`` is fractional (the divisible count, as in ``fairsim solve tsf``) and is computed
    once per distinct demand over the distinct server capacities (Table I pools have ~10).
    """

    name = "tsf"
    mechanism = "tsf"
    order = TaskShare
    placement = FirstFit


class AF(ProgressiveFilling):
    """Asset Fairness: equalise the aggregate share ``sum_r A_ir / C_r`` (weighted).

    Ghodsi et al., NSDI 2011, Section 5.1 (the aggregate share of user i is
    ``x_i sum_r d_ir / C_r``). Key: ``sum_r A_ir / C_r / w_i`` over the pooled capacity,
    so a user's key grows by ``sum_r d_r / C_r`` per running task (kept as a per-task sum);
    First-Fit.
    """

    name = "af"
    mechanism = "af"
    order = AggregateShare
    placement = FirstFit


class GlobalKey(UserOrder):
    """A key that also depends on the set of *active* users (tasks queued or running).

    When that set changes (:meth:`activated`) the keys of every user change together: they are
    recomputed lazily, at the start of the next scheduling pass for the waiting users
    (:meth:`before_pass` returns True; a subclass that keeps a quantity shared by every key
    extends it to recompute that quantity then) and just before a wake-up for blocked users whose
    key predates the change (:meth:`refresh`; subclasses' :meth:`key` must record
    ``self._seen[user] = self._epoch``).
    """

    dynamic = True
    #: Whether a user's own key moves when one of its tasks arrives (LMM-MMS: its bound does).
    arrival_moves_key = True

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then allocate the epoch of each user's key."""
        super().bind(state, sched, cluster)
        self._dirty = False
        self._epoch = 0  # bumped at every global change
        self._seen: list[int] = []  # epoch of each user's key

    def grow(self, n_users: int) -> None:
        """Grow the epochs of the users' keys."""
        self._seen.extend([-1] * (n_users - len(self._seen)))

    def activated(self, user: int, on: bool) -> None:
        """``user`` became active (``on``) or inactive; every key is stale."""
        self._dirty = True

    def arrived(self, user: int, need: tuple[float, ...]) -> bool:
        """The user's own key may change with its tasks in the system."""
        moved = self.arrival_moves_key or self._seen[user] != self._epoch
        if moved:
            self._seen[user] = -1  # re-keyed now, or when woken
        return moved

    def before_pass(self) -> bool:
        """Whether the set of active users changed since the last pass (a new epoch starts)."""
        if self._dirty:
            self._dirty = False
            self._epoch += 1
            return True
        return False

    def refresh(self, users: Sequence[int]) -> None:
        """Re-key the blocked users whose key predates the last global change."""
        epoch, seen, keys = self._epoch, self._seen, self.state.keys
        for u in users:
            if seen[u] != epoch:
                keys[u] = self.key(u)


class MMSRatio(GlobalKey):
    """LMM-MMS's key: the user's maximin-share (MMS) ratio ``x_i / mu_i`` (Li, Wang, Wang,
    Zhang, *Mathematics* 2025; our online reading in :class:`LMMMMS`). Reads the scheduler's
    ``bounds`` at bind."""

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then group the servers by capacity (per user when it has eligible servers)."""
        super().bind(state, sched, cluster)
        self.bounds: Mapping[int, float] | None = getattr(sched, "bounds", None)
        cap = np.asarray(cluster.capacity)
        classes, inverse, counts = np.unique(cap, axis=0, return_inverse=True, return_counts=True)
        self._classes = classes
        self._class_idx = np.asarray(inverse).ravel()
        self._class_counts = counts.astype(np.float64)
        self._user_counts: dict[int, np.ndarray] = {}
        self._gammas: dict[tuple[int, tuple[float, ...]], float] = {}
        self._gammas_all: dict[tuple[float, ...], float] = {}
        self._head_gamma: list[float] = []
        self._wsum = 0.0

    def grow(self, n_users: int) -> None:
        """Grow the per-user state."""
        super().grow(n_users)
        self._head_gamma.extend([math.inf] * (n_users - len(self._head_gamma)))

    def _counts_of(self, user: int) -> tuple[int, np.ndarray]:
        eligible = self.state.eligible
        if eligible and user in eligible:
            c = self._user_counts.get(user)
            if c is None:
                mask = np.asarray(eligible[user], dtype=bool)
                c = np.bincount(self._class_idx[mask], minlength=len(self._classes))
                c = self._user_counts[user] = c.astype(np.float64)
            return user, c
        return -1, self._class_counts

    def activated(self, user: int, on: bool) -> None:
        """Keep the active users' total weight ``W``."""
        w = self.state.weight[user]
        self._wsum += w if on else -w
        self._dirty = True

    def key(self, user: int) -> float:
        """``round(x_i / mu_i, 12)`` (``inf`` when ``mu_i = 0``)."""
        s = self.state
        q = s.queues[user]
        if q:
            need = q[0][1]
            if s.eligible and user in s.eligible:
                key, counts = self._counts_of(user)
                g = self._gammas.get((key, need))
                if g is None:
                    g = self._gammas[(key, need)] = _gamma(self._classes, counts, need)
            else:
                g = self._gammas_all.get(need)
                if g is None:
                    g = self._gammas_all[need] = _gamma(self._classes, self._class_counts, need)
            self._head_gamma[user] = g
        self._seen[user] = self._epoch
        b, running = self.bounds, s.running[user]
        # tasks in the system: queued or running
        n_i = float(b[user]) if b is not None and user in b else float(len(q) + running)
        w = s.weight[user]
        wsum = self._wsum if self._wsum > 0 else w
        mu = min(n_i, w / wsum * self._head_gamma[user])
        return round(running / mu, _DIGITS) if mu > 0 else math.inf


class LMMMMS(ProgressiveFilling):
    """LMM-MMS: serve the user with the lowest maximin-share (MMS) ratio.

    Li, Wang, Wang, Zhang, *Mathematics* 2025, 13(13), 2214, as reconstructed in
    docs/mechanisms.md ("LMM-MMS definitions"): the maximin share of user i is
    ``mu_i = min(n_i, (w_i / W) gamma_i)`` -- its task bound, or the tasks it runs with a
    weight-proportional slice ``w_i / W`` of every server (``gamma_i = sum_l min_r c_lr / d_ir``
    over the servers it may use; ``W`` the total weight) -- and its MMS ratio is ``x_i / mu_i``.
    LMM-MMS lexicographically maximises the MMS ratios; progressive filling serves the lowest.

    Parameters
    ----------
    weights, eligible
        As for :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling`.
    bounds : mapping of int to float, optional
        A fixed task bound ``n_i`` per user code (``fairsim solve lmm-mms --online`` passes the
        instance's ``max_tasks``); users not in it are bounded by their tasks in the system.

    Notes
    -----
    Online reading (ours): ``x_i`` is the number of running tasks; the bound ``n_i`` is, unless
    given in ``bounds``, the number of tasks the user has in the system (queued or running: the
    remaining tasks of its jobs, since a job's task count bounds what it can use); ``W`` is the
    weight of the active users (tasks in the system); ``gamma_i`` is computed for the demand of
    the user's head task. Weights enter through ``mu`` only, as in ``fairsim solve lmm-mms``.
    """

    name = "lmm-mms"
    mechanism = "lmm-mms"
    order = MMSRatio
    placement = FirstFit

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
        bounds: Mapping[int, float] | None = None,
    ) -> None:
        super().__init__(weights=weights, eligible=eligible)
        self.bounds = bounds


class PricedShare(GlobalKey):
    """PF's key: the PF-priced allocation ``sum_r A_ir nu_r / C_r / w_i`` (Bonald and Roberts,
    Section 3.2, eq. 3), with the prices of the active users' fluid model (:func:`pf_prices`)."""

    arrival_moves_key = False

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then allocate the per-user types and the price vector."""
        super().bind(state, sched, cluster)
        k = state.n_columns
        # one row per user code: type a_i (d_i / C), and w_i while active (0 otherwise), so a
        # price update is one vectorised pass with no per-user Python work
        self._ta = np.ones((0, k))
        self._wa = np.zeros(0)
        self._typed: list[bool] = []
        self._shapes: list[bool] = []  # its type demands something
        self._theta = 0.5
        self._price = [1.0 / t if t > 0 else 0.0 for t in state.total]  # nu_r / C_r

    def grow(self, n_users: int) -> None:
        """Grow the per-user types."""
        super().grow(n_users)
        grow = n_users - len(self._typed)
        self._typed.extend([False] * grow)
        self._shapes.extend([False] * grow)
        self._ta = np.vstack([self._ta, np.ones((grow, self.state.n_columns))])
        self._wa = np.concatenate([self._wa, np.zeros(grow)])

    def arrived(self, user: int, need: tuple[float, ...]) -> bool:
        """Remember the user's type (first task's need); see :meth:`GlobalKey.arrived`."""
        if not self._typed[user]:
            self._typed[user] = True
            t = self.state.total
            a = [need[k] / t[k] if t[k] > 0 else 0.0 for k in range(self.state.n_columns)]
            if any(x > 0 for x in a):  # a task demanding nothing does not shape the prices
                self._ta[user] = a
                self._shapes[user] = True
        return super().arrived(user, need)

    def activated(self, user: int, on: bool) -> None:
        """Enter or leave the price computation (users demanding nothing never enter it)."""
        if not self._shapes[user]:
            return  # a user demanding nothing never enters the price computation
        self._wa[user] = self.state.weight[user] if on else 0.0
        self._dirty = True

    def before_pass(self) -> bool:
        """When the active users changed: recompute the prices, warm-started from the previous
        ones (and re-key the waiting users)."""
        if not super().before_pass():
            return False
        wsum = float(self._wa.sum())
        if wsum <= 0:
            return True
        p = pf_prices(self._ta, self._wa, start=self._theta)
        n = self.state.n_columns
        if n == 2:
            self._theta = float(p[0])
        t = self.state.total
        self._price = [float(wsum * p[k] / t[k]) if t[k] > 0 else 0.0 for k in range(n)]
        return True

    def key(self, user: int) -> float:
        """``round(sum_r A_ir nu_r / C_r / w_i, 12)`` (exactly 0 for a user running nothing)."""
        self._seen[user] = self._epoch
        s = self.state
        if s.running[user] == 0:  # exactly 0, without the allocation's rounding drift
            return 0.0
        a, p = s.alloc[user], self._price
        key = sum([a[k] * p[k] for k in range(s.n_columns)]) / s.weight[user]
        return round(key, _DIGITS)


class PF(ProgressiveFilling):
    """Proportional fairness by the "most deprived job" rule (Bonald and Roberts, Section 3.2).

    PF maximises ``sum_i w_i log phi_i`` subject to ``sum_i phi_i a_ij <= 1``; by the KKT
    conditions (eq. 3, weighted) ``phi_i = w_i / (a_i . nu)`` with resource prices ``nu_j >= 0``.
    The most deprived job is the one furthest below its PF allocation; we measure deprivation by
    the ratio ``x_i / phi_i = x_i (a_i . nu) / w_i``, i.e. the key is the priced allocation
    ``sum_r A_ir nu_r / C_r / w_i`` (lowest first), First-Fit.

    The prices are those of the pooled fluid model over the active users (tasks queued or
    running): ``a_i = d_i / C`` with ``d_i`` the demand of the user's first task (its type) and
    ``nu = W p`` where ``p`` maximises ``sum_i w_i log(a_i . p)`` over the simplex (the dual of
    eq. 3; :func:`pf_prices`). They are recomputed once per scheduling pass in which the active
    set changed: one vectorised computation over a per-user table (inactive users have weight
    0), warm-started from the previous prices.
    """

    name = "pf"
    mechanism = "pf"
    order = PricedShare
    placement = FirstFit


class BottleneckRank(UserOrder):
    """BMF's key ``(-status, weighted pooled dominant share)``: status is the user's lowest rank
    on a bottleneck resource (Bonald and Roberts, Section 3.3; our reading in :class:`BMF`)."""

    dynamic = True
    rekey_each = True

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then allocate the per-resource sorted shares."""
        super().bind(state, sched, cluster)
        k = state.n_columns
        self._vals: list[list[float]] = [[] for _ in range(k)]  # sorted, every user
        self._vals_ok = True
        self._cur: list[list[float]] = []
        self._used = [0.0] * k
        self._dem: list[list[bool]] = []  # resources the user has demanded
        self._bott = tuple(range(k))
        self._epoch = 0  # bumped when the bottleneck set changes
        self._seen: list[int] = []
        self._dirty = False

    def grow(self, n_users: int) -> None:
        """Grow the per-user shares."""
        grow = n_users - len(self._cur)
        for _ in range(grow):
            self._cur.append([0.0] * self.state.n_columns)
            self._dem.append([False] * self.state.n_columns)
        self._seen.extend([-1] * grow)
        self._vals_ok = False

    def arrived(self, user: int, need: tuple[float, ...]) -> bool:
        """Remember which resources the user demands (a new one moves its key)."""
        dem = self._dem[user]
        new = False
        for k in range(self.state.n_columns):
            if need[k] > 0 and not dem[k]:
                dem[k] = new = True
        moved = new or self._seen[user] != self._epoch
        if moved:
            self._seen[user] = -1  # re-keyed now, or when woken
        return moved

    def account(self, user: int, server: int, need: tuple[float, ...], sign: int) -> None:
        """Update the user's per-resource shares, the utilisations and the bottleneck set."""
        s = self.state
        cur, t, w, a = self._cur[user], s.total, s.weight[user], s.alloc[user]
        used = self._used
        for k in range(s.n_columns):
            if need[k] == 0:
                continue
            used[k] += need[k] if sign > 0 else -need[k]
            # alloc already took the change; shares are rounded so that equal shares tie
            cur[k] = round(max(0.0, a[k]) / t[k] / w, _DIGITS)
        self._vals_ok = False
        util = [
            round(used[k] / t[k], _DIGITS) if t[k] > 0 else 0.0 for k in range(self.state.n_columns)
        ]
        top = max(util)
        bott = tuple(k for k in range(self.state.n_columns) if util[k] >= top)
        if bott != self._bott:
            self._bott = bott
            self._epoch += 1
            self._dirty = True

    def key(self, user: int) -> tuple[float, float]:
        """``(-status, dominant share)``."""
        self._seen[user] = self._epoch
        dem, cur, bott = self._dem[user], self._cur[user], self._bott
        dom = max(cur) if cur else 0.0
        if len(bott) == 1:
            j = bott[0]
            return (cur[j] if dem[j] else -1.0, dom)
        if not self._vals_ok:  # sorted shares per resource, rebuilt only when needed
            self._vals = [sorted(c[k] for c in self._cur) for k in range(self.state.n_columns)]
            self._vals_ok = True
        status = len(self._cur) + 1
        for k in bott:
            if dem[k]:
                vals = self._vals[k]
                rank = len(vals) - bisect.bisect_right(vals, cur[k]) + 1
                if rank < status:
                    status = rank
        return (float(-status), dom)

    def refresh(self, users: Sequence[int]) -> None:
        """Re-key the blocked users (all of them with tied bottlenecks)."""
        multi, epoch, seen, keys = len(self._bott) > 1, self._epoch, self._seen, self.state.keys
        for u in users:
            if multi or seen[u] != epoch:
                keys[u] = self.key(u)

    def reserves(self) -> bool:
        """Only with a single bottleneck: the keys are then the users' own."""
        return len(self._bott) == 1

    def before_pass(self) -> bool:
        """Re-key when the bottleneck moved or is tied."""
        if self._dirty or len(self._bott) > 1:
            self._dirty = False
            return True
        return False

    def after_place(self) -> bool:
        """Re-key when the bottleneck moved or is tied."""
        return self.before_pass()


class BMF(ProgressiveFilling):
    """Bottleneck max fairness by the "most deprived job" rule (Bonald and Roberts, Section 3.3).

    "For every job i we note its rank at each resource j: jobs with the biggest allocation have
    rank 1, jobs of rank k for k > 1 have a smaller share than k - 1 other jobs. The deprivation
    status of job i is its minimum rank on a bottleneck resource. Tasks are launched
    preferentially for the job whose current status is largest."

    Our reading for a cluster of indivisible tasks: the share of user i on resource j is
    ``A_ij / C_j / w_i`` (pooled); the bottleneck resources are those with the highest pooled
    utilisation (all resources while the pool is empty; shares and utilisations are compared
    after rounding to 12 decimals); a user that demands no bottleneck resource has status
    ``n + 1`` (n users known), i.e. goes first. Key ``(-status, weighted pooled dominant share)``
    (lowest first, then user code); First-Fit.

    Notes
    -----
    With a single bottleneck resource j -- the usual case -- a larger rank is a smaller share of
    j, so the order is that of the user's own key ``(share of j, dominant share)`` (``-1`` for a
    user that does not demand j): the heap stays valid across placements and is re-keyed only
    when the bottleneck changes. With several (tied) bottlenecks the ranks come from one sorted
    list per resource (rebuilt after a change, ``O(log n)`` per rank) and the waiting users are
    re-keyed after every placement;
    woken users then reserve nothing (the order of service can change within a pass).
    """

    name = "bmf"
    mechanism = "bmf"
    order = BottleneckRank
    placement = FirstFit


def _gamma(classes: np.ndarray, counts: np.ndarray, need: tuple[float, ...]) -> float:
    """``sum_l min_{r: d_r > 0} c_lr / d_r`` over servers grouped by capacity.

    Parameters
    ----------
    classes : ndarray, shape (n_classes, n_resources)
        Distinct server capacities.
    counts : ndarray, shape (n_classes,)
        Servers of each capacity (those the user may use).
    need : tuple of float, length n_resources

    Returns
    -------
    float
        ``inf`` for a task that demands nothing.
    """
    d = np.asarray(need, dtype=np.float64)
    pos = d > 0
    if not pos.any():
        return math.inf
    per = (classes[:, pos] / d[pos]).min(axis=1)
    return float(per @ counts)


def pf_prices(a: np.ndarray, w: np.ndarray, *, start: float = 0.5) -> np.ndarray:
    """Normalised proportional-fairness prices ``p`` (on the simplex) of a fluid pool.

    Maximises ``sum_i w_i log(a_i . p)`` over ``p >= 0, sum_r p_r = 1``; the PF allocation
    (Bonald and Roberts, eq. 3, weighted) is then ``phi_i = w_i / (a_i . nu)`` with
    ``nu = p sum_i w_i``.

    Parameters
    ----------
    a : ndarray, shape (n_users, n_resources)
        Demand per task as a fraction of the pooled capacity (non-negative; rows with a zero
        weight are ignored, every other row must demand something).
    w : ndarray, shape (n_users,)
        Non-negative weights, not all zero.
    start : float
        Two resources: first guess of ``p_0`` (a warm start; the result does not depend on it
        beyond rounding).

    Returns
    -------
    ndarray, shape (n_resources,)

    Notes
    -----
    Two resources: the optimum is where ``s(t) = sum_i w_i (a_i0 - a_i1) / (a_i1 + t (a_i0 -
    a_i1))`` (decreasing in t) vanishes, found by Newton's method kept inside a bisection
    bracket, to ``1e-15``. Three or more: Cover's multiplicative iteration
    ``p <- p * a^T (w / (a p)) / W`` (:data:`_PF_COVER` steps).
    """
    n_r = a.shape[1]
    if n_r == 1:
        return np.ones(1)
    if n_r == 2:
        diff = a[:, 0] - a[:, 1]
        a1 = a[:, 1]
        wd = w * diff

        def slope(theta: float) -> float:
            with np.errstate(divide="ignore", invalid="ignore"):
                q = wd / (a1 + theta * diff)
            return float(q.sum())

        if slope(0.0) <= 0:
            return np.array([0.0, 1.0])
        if slope(1.0) >= 0:
            return np.array([1.0, 0.0])
        lo, hi = 0.0, 1.0
        th = start if 0.0 < start < 1.0 else 0.5
        for _ in range(200):
            den = a1 + th * diff
            q = wd / den
            sv = float(q.sum())
            if sv > 0:
                lo = th
            else:
                hi = th
            dv = -float((q * diff / den).sum())
            new = th - sv / dv if dv < 0 else 0.5 * (lo + hi)
            if not lo < new < hi:
                new = 0.5 * (lo + hi)
            done = abs(new - th) <= 1e-15 or hi - lo <= 1e-15
            th = new
            if done:
                break
        return np.array([th, 1.0 - th])
    keep = w > 0
    a, w = a[keep], w[keep]
    p = np.full(n_r, 1.0 / n_r)
    wn = w / w.sum()
    for _ in range(_PF_COVER):
        p = p * (a.T @ (wn / (a @ p)))
        p /= p.sum()
    return p
