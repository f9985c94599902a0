"""Distributed PS-DSF with indivisible tasks: every server runs its own procedure.

PS-DSF paper (Khamse-Ashari, Lambadaris, Kesidis, Urgaonkar, Zhao, "Per-Server Dominant-Share
Fairness (PS-DSF): A Multi-Resource Fair Allocation Mechanism for Heterogeneous Servers"),
Section III. The virtual dominant share (VDS) of user n w.r.t. server i is

    s_{n,i} = x_n / gamma_{n,i},   gamma_{n,i} = delta_{n,i} min_r c_{i,r} / d_{n,r}   (eqs. 7-8)

where x_n is the user's *total* number of tasks, on every server. Section III-D: each server runs
the "server procedure" of Algorithm I on its own, from its own free resources and the users'
total task counts only, every T seconds. Here, with indivisible tasks and no preemption, the
server procedure is progressive filling on one server under RDM (eq. 9): the server gives its
next task to the eligible backlogged user with the lowest weighted VDS ``s_{n,i} / phi_n`` whose
head task fits its free resources, and repeats -- except that a lower-VDS user whose head would
fit once the higher-VDS users' tasks on this server finish *reserves* the server (nothing more is
placed on it until then; :meth:`DistributedPSDSF._procedure`). Tasks of a user start in
submission order.

When does a server run its procedure?

* On its local events: a task finished on it (it runs in the same scheduling pass).
* Every ``period_s`` seconds (T, default 1 s). The periods are *aligned*: every server's clock
  ticks at ``k T`` (one engine wake-up per period, deterministic, and the same as the paper's
  "update the allocation every second"). Servers still act asynchronously in between, on their
  own completions. A new task is therefore not seen by the servers before the next tick.

At a tick only the servers where the procedure can place something run it: after a server's
procedure no backlogged head fits it (unless it reserves), and its free resources only grow on a
completion (which runs the procedure at once), so a server can only have work at a tick if the
head task of some user changed since that user was last announced. Those heads are checked
against the servers with one vectorised comparison each, skipping the servers that reserve for a
backlogged user with a lower VDS; every other server's procedure would place nothing. Per event,
the work is local to the server of the event: a server's procedure reads only that server's free
resources and holdings and its capacity class's heap of backlogged users.

Laziness: a reservation stands while its holder is backlogged. If the holder is served elsewhere
or another user's VDS falls below it (a completion elsewhere), the server looks again at its next
completion or when a head task that fits it is announced -- not at every tick, which would re-run
every server reserving for a popular low-VDS user at each of its placements (``docs/psdsf.md``).

VDS with heterogeneous tasks
----------------------------
The paper's users have one demand vector d_n, so ``s_{n,i} = x_n max_r d_{n,r} / c_{i,r}``. A
trace user's tasks differ; the key adds up, over the user's running tasks t, each task's own
dominant share of server i, ``sum_t max_r d_{t,r} / c_{i,r}`` -- our reading, equal to eq. 8 when
the demands are equal. It depends on i only through i's capacity vector, so it is kept per
*capacity class* (Table I pools have seven).

Convergence (PS-DSF paper, Fig. 6): without preemption the allocation moves towards the PS-DSF
allocation as tasks finish and their servers re-fill by lowest VDS, so it converges within a few
task run times after the set of active users changes (``docs/psdsf.md``: 4 s with 1-3 s tasks).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterator

import numpy as np

from fairsim.schedulers.periodic import EveryPeriod, next_multiple_after
from fairsim.simulator.cluster import ClusterView

#: Keys are rounded to this many decimals, so that users whose VDS are equal in exact arithmetic
#: tie (and go in user-code order) whatever the rounding of the running sums.
_DIGITS = 12
_GROW = 64


class DistributedPSDSF(EveryPeriod):
    """Distributed PS-DSF (PS-DSF paper, Section III-D), indivisible tasks, RDM (eq. 9).

    Parameters
    ----------
    weights : mapping of int to float, optional
        Weight phi_n of a user code (default 1). PS-DSF paper, Section II.
    eligible : mapping of int to ndarray of bool, optional
        Per-user mask of shape ``(n_servers,)``: delta_{n,i} of Section II (placement
        constraints). Users not in the mapping may use every server.
    period_s : float
        T of Section III-D: every server runs its procedure every ``period_s`` seconds (aligned
        at multiples of T) and on every completion on it.

    Raises
    ------
    ValueError
        At :meth:`bind`, for a non-positive ``period_s`` or weight.
    """

    name = "psdsf"
    mechanism = "psdsf"
    work_conserving = False  # a server reserves its free room for a lower-VDS user

    # ------------------------------------------------------------------ binding
    def bind(self, cluster: ClusterView) -> None:
        """Attach to a cluster: group the servers by capacity, allocate per-user run state."""
        super().bind(cluster)
        period = self.period_s
        if not (isinstance(period, int | float) and math.isfinite(period) and period > 0):
            raise ValueError(f"period_s: {period!r} (expected a number > 0)")
        self._period = float(period)
        cap = np.asarray(cluster.capacity, dtype=np.float64)
        classes, inverse = np.unique(cap, axis=0, return_inverse=True)
        self._class_of: list[int] = inverse.ravel().tolist()
        self._caps = [tuple(float(c) for c in row) for row in classes]
        self._nk = len(self._caps)
        self._nr = cap.shape[1]
        self._cols = [cluster.free[:, r] for r in range(self._nr)]
        # the engine's slack in each resource's units (a head within it of the free amount
        # fits), and the holding below which a user holds nothing on a server: relative to the
        # largest capacity of the resource, so that placements do not depend on its units
        self._tol: list[float] = cluster.tolerance.tolist()
        self._low: list[float] = [-t for t in self._tol]
        self._none_held: list[float] = (1e-12 * cap.max(axis=0)).tolist()
        self._heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(self._nk)]
        self._terms: dict[tuple[float, ...], list[float]] = {}
        self._fit_cls: dict[tuple[float, ...], list[bool]] = {}
        # per user (index = user code)
        self._w: list[float] = []
        self._queues: list[deque[tuple[int, tuple[float, ...]]]] = []
        self._acc: list[list[float]] = []  # sum_t max_r d_tr / c_kr per capacity class k
        self._key: list[list[float]] = []  # weighted VDS per class: acc / phi, rounded
        self._nrun: list[int] = []
        self._version: list[int] = []
        # head task last announced: (demand, id of its placement-constraint mask)
        self._checked: list[tuple[tuple[float, ...], int] | None] = []
        self._mask: list[np.ndarray | None] = []
        self._elig_cls: list[list[bool]] = []
        self._n_backlogged = 0
        self._changed: dict[int, None] = {}  # users whose head is not announced yet
        self._run: list[int] = []  # servers with a completion since the last pass
        # resources held on each server by each user (read by that server's procedure only)
        self._held: list[dict[int, list[float]]] = [{} for _ in range(cap.shape[0])]
        # reservation of each server: holder user (-1: none); it stands while the holder is
        # backlogged with a lower weighted VDS than a newcomer's
        self._res_user = np.full(cap.shape[0], -1, dtype=np.int64)
        self._class_np = inverse.ravel().astype(np.int64)
        self._bl_np = np.zeros(0, dtype=bool)  # backlogged users, and _key, for numpy
        self._key_np = np.zeros((0, self._nk))
        self._tick = False
        self._n_pending = 0

    def _ensure_user(self, user: int) -> None:
        n_old = len(self._queues)
        if user < n_old:
            return
        n_srv = len(self._class_of)
        cls = np.asarray(self._class_of)
        n_new = max(user + 1, n_old + _GROW)
        self._bl_np = np.concatenate([self._bl_np, np.zeros(n_new - n_old, dtype=bool)])
        self._key_np = np.vstack([self._key_np, np.zeros((n_new - n_old, self._nk))])
        for u in range(n_old, n_new):
            wu = float(self.weights.get(u, 1.0)) if self.weights else 1.0
            if not wu > 0:
                raise ValueError(f"weight of user {u}: {wu!r} (expected > 0)")
            self._w.append(wu)
            self._queues.append(deque())
            self._acc.append([0.0] * self._nk)
            self._key.append([0.0] * self._nk)
            self._nrun.append(0)
            self._version.append(0)
            self._checked.append(None)
            mask = self.eligible.get(u) if self.eligible else None
            if mask is None:
                self._mask.append(None)
                self._elig_cls.append([True] * self._nk)
                continue
            m = np.asarray(mask, dtype=bool)
            if m.shape != (n_srv,):
                raise ValueError(
                    f"eligible[{u}]: mask of shape {m.shape} (expected ({n_srv},), one per server)"
                )
            self._mask.append(m)
            self._elig_cls.append([bool(m[cls == k].any()) for k in range(self._nk)])

    def _class_terms(self, d: tuple[float, ...]) -> list[float]:
        """Per capacity class k, a task's dominant share ``max_r d_r / c_kr`` (eqs. 6-8)."""
        t = self._terms.get(d)
        if t is None:
            t = []
            fit = []
            for cap in self._caps:
                ok = all(d[r] <= cap[r] for r in range(self._nr))
                fit.append(ok)
                t.append(max([d[r] / cap[r] for r in range(self._nr) if cap[r] > 0] or [0.0]))
                if not ok:
                    t[-1] = 0.0  # the class can never run the task: its VDS there is unused
            self._terms[d] = t
            self._fit_cls[d] = fit
        return t

    def _rekey(self, user: int) -> None:
        """Recompute the user's weighted VDS ``s_{n,i} / phi_n`` for every class (eq. 8)."""
        inv = 1.0 / self._w[user]
        key = [round(a * inv, _DIGITS) for a in self._acc[user]]
        self._key[user] = key
        self._key_np[user] = key

    def _push(self, user: int) -> None:
        """(Re-)enter a backlogged user in the heap of every class that could run its head."""
        v = self._version[user] + 1
        self._version[user] = v
        d = self._queues[user][0][1]
        if d not in self._fit_cls:
            self._class_terms(d)
        fit, el, key = self._fit_cls[d], self._elig_cls[user], self._key[user]
        heaps = self._heaps
        limit = 8 * self._n_backlogged + 256
        for k in range(self._nk):
            if fit[k] and el[k]:
                heap = heaps[k]
                heapq.heappush(heap, (key[k], user, v))
                if len(heap) > limit:
                    self._compact(k)

    def _compact(self, k: int) -> None:
        ver = self._version
        self._heaps[k] = [e for e in self._heaps[k] if e[2] == ver[e[1]]]
        heapq.heapify(self._heaps[k])

    # ------------------------------------------------------------------ events
    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether some server's capacity could ever hold a task with this demand."""
        fit = self._fit_cls.get(demand)
        if fit is None:
            self._class_terms(demand)
            fit = self._fit_cls[demand]
        return any(fit)

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue ``task``; a user that becomes backlogged is announced at the next tick."""
        if user >= len(self._queues):
            self._ensure_user(user)
        q = self._queues[user]
        q.append((task, demand))
        self._n_pending += 1
        if len(q) == 1:
            self._n_backlogged += 1
            self._bl_np[user] = True
            self._push(user)
            self._changed[user] = None

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Lower the user's VDS; ``server`` runs its procedure in this pass (a local event)."""
        t = self._terms.get(demand) or self._class_terms(demand)
        n = self._nrun[user] - 1
        self._nrun[user] = n
        acc = self._acc[user]
        for k in range(self._nk):
            # an idle user's VDS is exactly 0 (no drift from += / -=: ties stay ties)
            acc[k] = 0.0 if n == 0 else acc[k] - t[k]
        self._rekey(user)
        held = self._held[server]
        h = held[user]
        for r in range(self._nr):
            h[r] -= demand[r]
        if all(x <= e for x, e in zip(h, self._none_held, strict=True)):
            del held[user]
        if self._queues[user]:
            self._push(user)
        self._run.append(server)

    def _placed(self, user: int, d: tuple[float, ...], server: int) -> None:
        """Account the placement of the user's head task on ``server`` (x_n grows by one)."""
        h = self._held[server].get(user)
        if h is None:
            self._held[server][user] = list(d)
        else:
            for r in range(self._nr):
                h[r] += d[r]
        q = self._queues[user]
        q.popleft()
        self._n_pending -= 1
        self._nrun[user] += 1
        t = self._terms[d]
        acc = self._acc[user]
        for k in range(self._nk):
            acc[k] += t[k]
        self._rekey(user)
        if q:
            self._push(user)
            head = (q[0][1], id(self.cluster_.task_mask(q[0][0])))
            if head != self._checked[user]:
                self._changed[user] = None
        else:
            self._version[user] += 1  # its heap entries (and reservations) become stale
            self._bl_np[user] = False
            self._n_backlogged -= 1
            self._checked[user] = None
            self._changed.pop(user, None)

    def next_wakeup(self, now: float) -> float:
        """The next multiple of T after ``now`` if some head task is not announced, else inf."""
        if not self._changed:
            return math.inf
        return next_multiple_after(now, self._period)

    def on_tick(self, now: float) -> None:
        """Every server's period elapsed: announce the new head tasks in the next pass."""
        self._tick = True

    def pending(self) -> int:
        """Number of queued tasks not yet placed."""
        return self._n_pending

    # ------------------------------------------------------------------ scheduling
    def decide(self) -> Iterator[tuple[int, int]]:
        """Run the procedure of every server with a completion, then (at a tick) announce."""
        if self._run:
            run = list(dict.fromkeys(self._run))
            self._run.clear()
            for server in run:
                yield from self._procedure(server)
        if self._tick:
            self._tick = False
            yield from self._announce()

    def _announce(self) -> Iterator[tuple[int, int]]:
        """Servers where a newly announced head task fits run their procedure (Section III-D)."""
        cols, tol = self._cols, self._tol
        queues, checked = self._queues, self._checked
        while self._changed:
            # lowest VDS first (so that the servers they reserve are skipped for the others);
            # the sum over classes orders users whose keys are in the same ratio to each other
            key = self._key
            users = sorted(self._changed, key=lambda v: (sum(key[v]), v))
            self._changed.clear()
            for u in users:
                q = queues[u]
                if not q:
                    continue
                d = q[0][1]
                tm = self.cluster_.task_mask(q[0][0])  # the head task's placement constraint
                seen = (d, id(tm))
                if seen == checked[u]:
                    continue
                checked[u] = seen
                fits = cols[0] >= d[0] - tol[0]
                for r in range(1, self._nr):
                    fits &= cols[r] >= d[r] - tol[r]
                m = self._mask[u]
                if m is not None:
                    fits &= m
                if tm is not None:
                    fits &= tm
                # skip servers that still reserve for a user with a lower VDS than u's there
                holder = self._res_user
                has = holder >= 0
                if has.any():
                    h = np.where(has, holder, 0)
                    valid = has & self._bl_np[h]
                    hk = self._key_np[h, self._class_np]
                    uk = self._key_np[u][self._class_np]
                    fits &= ~(valid & ((hk < uk) | ((hk == uk) & (h < u))))
                for server in np.flatnonzero(fits).tolist():
                    if not q or q[0][1] != d:
                        break  # a new head: announced in the next round of this loop
                    if all(cols[r][server] >= d[r] - tol[r] for r in range(self._nr)):
                        yield from self._procedure(server)

    def _procedure(self, server: int) -> Iterator[tuple[int, int]]:
        """The server procedure on one server: lowest weighted VDS first, with a reservation.

        PS-DSF paper, Section III-D (the inner loop of Algorithm I, for indivisible tasks under
        RDM, eq. 9). The server serves its eligible backlogged users in increasing weighted VDS
        ``s_{n,i} / phi_n``. The first one whose head task fits the free resources gets it. A
        user whose head does not fit now but would once the tasks of users with a *higher* VDS on
        this server finish holds a reservation: the server places nothing more until then (the
        indivisible counterpart of Algorithm I's release of ``x_{n_r,i}``, eq. 18; without it
        fragmentation would let high-VDS users keep the server for ever). A user whose head
        could not fit even then (the lower-VDS users hold what it needs: it has a bottleneck
        here, Definition 6) is skipped. Reads only this server's free resources and holdings and
        its capacity class's heap.
        """
        k = self._class_of[server]
        heap = self._heaps[k]
        ver, queues, masks = self._version, self._queues, self._mask
        cols, low, nr = self._cols, self._low, self._nr
        task_mask, constrained = self.cluster_.task_mask, self.cluster_.constrained
        # free resources of this server (fixed while it places nothing; re-read after each
        # placement, which the engine commits before the generator resumes)
        free = [float(cols[r][server]) for r in range(nr)]
        held, keys = self._held[server], self._key
        skipped: list[tuple[float, int, int]] = []
        self._res_user[server] = -1
        while heap:
            entry = heap[0]
            u = entry[1]
            if entry[2] != ver[u]:
                heapq.heappop(heap)
                continue
            task, d = queues[u][0]
            m = masks[u]
            if m is not None and not m[server]:
                skipped.append(heapq.heappop(heap))
                continue
            tm = task_mask(task) if constrained else None
            if tm is not None and not tm[server]:  # the head task may not run here
                skipped.append(heapq.heappop(heap))
                continue
            if (
                free[0] - d[0] >= low[0]
                and (nr == 1 or free[1] - d[1] >= low[1])
                and (nr <= 2 or all(free[r] - d[r] >= low[r] for r in range(2, nr)))
            ):
                yield task, server
                free = [float(cols[r][server]) for r in range(nr)]
                self._placed(u, d, server)  # pushes the user's new entry (if still backlogged)
                continue
            # would it fit once the users with a higher VDS here release their tasks?
            key = entry[0]
            room = free.copy()
            for v, h in held.items():
                if keys[v][k] > key:
                    for r in range(nr):
                        room[r] += h[r]
            if all(room[r] - d[r] >= low[r] for r in range(nr)):
                self._res_user[server] = u
                break
            skipped.append(heapq.heappop(heap))
        for entry in skipped:
            heapq.heappush(heap, entry)
