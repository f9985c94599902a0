"""``udrf``: the online UDRF algorithm (Tahir et al., Section III-C, Fig. 5).

UDRF paper ("User-Dependence Dominant Resource Fairness"), Section III-C, Fig. 5::

    1: if a new user comes or an existing user leaves the system then
    2:   update the user dependence graph and corresponding RDUCs;
    3:   allocate each RDUC to a slave;
    5: if a resource in a RDUC C frees up then
    6:   the corresponding scheduler for RDUC allocates a job for user in C with lowest
         RDUC-wise dominant share without breaking the feasibility of the current allocation;

How each line is realised here, with indivisible tasks on real servers:

* **Resources** are the pairs (machine class m, resource k) (Section II-B); a server's class is its
  pool ``class`` label when the run has placement constraints, else its capacity vector
  (:attr:`fairsim.simulator.cluster.ClusterView.machine_classes`), and ``c_{m,k}`` is the class
  total.
* **A user's demand set** ``P_u`` (eq. 2) is the set of pairs (m, k) such that one of its waiting or
  running tasks demands resource k (> 0) and may use class m (its placement constraint,
  :mod:`fairsim.simulator.constraints`; an unconstrained task may use every class). Two users are
  linked in the user dependency graph (Definition 1) when their sets share a pair, and the **RDUCs**
  are the graph's connected components (Definition 2). The components are recomputed, lazily before
  the next pass, whenever a user joins (first waiting task), leaves (no task waiting or running) or
  its demand set changes (lines 1-2), with :func:`scipy.sparse.csgraph.connected_components` over a
  user / constraint / class graph (linear in its edges, as the paper's breadth-first search).
* **One scheduler per RDUC** (line 3): a pass serves each RDUC on its own, with its own heap of
  users keyed by the RDUC-wise dominant share (eq. 12), divided by the user's weight. Because RDUCs
  share no resource, serving them in any order gives the same placements.
* **The unit of allocation is a job** (line 6: "allocates a job"): the tasks of one repetition of
  one job (``(job_id, rep)``, :meth:`fairsim.simulator.cluster.ClusterView.task_job`) that are
  waiting. A job is started only if *all* of them fit at once (gang placement, "without breaking the
  feasibility"); each task goes First-Fit onto an allowed server. The served user's jobs are tried
  oldest first; a user none of whose jobs fits is *blocked* for the rest of the pass. A job that
  could not fit even on the empty allowed servers is started with as many of its tasks as fit (it
  could never start whole).
* **A job that does not fit** (line 6 serves the lowest-share user *before anyone else*): the jobs
  of an RDUC are taken in the order (user's key, user, job age); the first one that does not fit
  is the RDUC's *head*, and the servers it needs are reserved for it (``blocked="reserve"``, the
  default): the fewest servers that hold its job, the most drained first, chosen when it becomes
  the head and kept until it starts; no job after it in the order is given one of them, so they
  drain until the head fits, and a job that needs two classes at once is not starved by smaller
  jobs that keep refilling them. Jobs after the head still start on the other servers.
  ``blocked="backfill"`` (the registered ``udrf-backfill``) is the earlier reading: any job that
  fits starts, whatever waits before it.
* **RDUC-wise dominant share** (eq. 12): with ``d̂ = d / d_u^max`` (eq. 11), ``s_u = d_u^max ·
  max_{(m,k)} Σ_j x_j d̂^j_{m,k} = max_{(m,k)} A^u_{m,k} / c_{m,k}``, i.e. the largest share of a
  (class, resource) pair that the user's running tasks hold (the same key as
  :class:`fairsim.schedulers.drf_classes.DRFClasses`, whose allocation unit is a task, not a job).
* **"If a resource in a RDUC frees up"** (line 5): a blocked user is tried again only when a task
  finishes on a class it may use, or when it submits a task.

No step scans every server or every user: a pass touches the users that may use the freed classes
or that submitted tasks, and one vectorised First-Fit per (demand, constraint) group of a job.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from fairsim.schedulers.jobfit import JobFirstFit
from fairsim.simulator.cluster import ClusterView

Run = tuple[int, int]  # (job_id, repetition)
#: What happens to the others when the lowest-share user's job does not fit (``blocked``).
BLOCKED = ("reserve", "backfill")


class UDRF(JobFirstFit):
    """Online UDRF: whole jobs for the lowest RDUC-wise dominant share; a waiting one keeps servers.

    UDRF paper (Tahir et al.), Section III-C, Fig. 5; RDUCs by Definitions 1-2; key by eq. 12.

    Parameters
    ----------
    weights, eligible, period_s
        As for :class:`~fairsim.schedulers.jobfit.JobFirstFit`.
    blocked : {"reserve", "backfill"}
        When a job does not fit (Fig. 5, line 6): ``reserve`` (default): the first such job of
        an RDUC in the order (user's key, user, job age) keeps the servers it needs (the fewest
        that hold it) from the jobs after it until it starts; ``backfill``: any job that fits
        starts (the registered ``udrf-backfill``; work-conserving, but a job that needs several
        classes at once can wait for ever while smaller jobs refill them).

    Raises
    ------
    ValueError
        From :meth:`bind`, for a negative ``period_s`` or an unknown ``blocked``; from
        :meth:`on_arrival`, for a weight <= 0.

    Attributes
    ----------
    class_names_ : list of str
        Machine class labels; class ``m`` of the keys and RDUC pairs is ``class_names_[m]``.
    rduc_log_ : list of tuple (int, int, int)
        One entry per recomputation of the RDUCs: (active users, RDUCs, users in the largest).

    Notes
    -----
    The machine classes, kinds, First-Fit of a job (kind by kind, kinds in the order of their
    first task) and the per-second passes are those of
    :class:`fairsim.schedulers.jobfit.JobFirstFit`,
    shared with the Section V DRF baseline ``drf-lockstep``.

    Retrying blocked jobs cheaply. A job run is a set of *kinds* (demand vector, constraint), each
    with a number of tasks; a kind's *room* is how many of its tasks the allowed servers' free
    resources hold. When a run fails, the first kind that did not fit (``n`` tasks, room ``C``) is
    recorded. For every kind with a record the scheduler keeps ``G``, the exact net change of its
    room: the free resources of a server are snapshotted before its first change (completion or
    placement) and the room is recounted on the changed servers only, in one vectorised step per
    pass. The run is woken once ``C + (G_now - G_then) >= n``, exactly when that kind has room for
    it again; of the runs of one kind so woken, only as many as the room holds (in the order of
    their users' keys) become candidates, the others are looked at again on the next pass. A run
    whose kinds each fit alone but not together (First-Fit order) is retried after the next
    completion; a run larger than its servers ever hold starts in parts.
    Passes happen once per ``period_s`` (Section V decides "on a per-second basis").

    The head of an RDUC (``blocked="reserve"``) is found without trying every blocked run: the
    blocked runs (those with a record, and those whose kinds fit alone but not together) sit in
    a heap per RDUC by key (share, user, run id), rebuilt at each round of a pass and updated
    lazily as keys move. A run tried behind a head is fitted on the free amounts with the head's
    reserved servers emptied; one that fails only for that reservation is not recorded but kept
    *behind* the head, and not tried again until the head (or its reservation) changed, its
    user's key fell, or a task finished outside the reserved servers on one of the run's
    classes: only then can its fit differ.
    """

    name = "udrf"
    mechanism = "udrf"
    fifo_within_user = False  # whole jobs: a later job starts when an earlier one does not fit
    #: servers reserved for a blocked job stay idle while it waits (``blocked="reserve"``); set
    #: per instance from ``blocked`` (``"backfill"`` conserves work)
    work_conserving = False

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
        period_s: Annotated[float, Field(ge=0)] = 1.0,
        blocked: Literal["reserve", "backfill"] = "reserve",
    ) -> None:
        super().__init__(weights=weights, eligible=eligible, period_s=period_s)
        self.blocked = blocked
        self.work_conserving = blocked == "backfill"

    # ------------------------------------------------------------------ binding
    def bind(self, cluster: ClusterView) -> None:
        """Group the servers into machine classes and allocate per-user run state."""
        super().bind(cluster)
        if self.blocked not in BLOCKED:
            raise ValueError(f"blocked: {self.blocked!r} (expected 'reserve' or 'backfill')")
        self._reserve = self.blocked == "reserve"
        self._cidx: dict[int, np.ndarray] = {}
        self._G = np.zeros(len(self._kd))  # cumulative room gain per kind
        # job runs: user -> run -> kind -> waiting tasks; run ids (age order) and candidates
        self._runs: dict[int, dict[Run, dict[int, list[int]]]] = {}
        self._rid: dict[tuple[int, Run], int] = {}
        self._next_rid = 0
        self._cand: dict[int, set[int]] = {}  # user -> run ids to try
        self._candh: dict[int, list[int]] = {}  # the same, as a heap (oldest run first)
        self._oversized: dict[int, bool] = {}
        self._full: dict[int, float] = {}  # kind -> its room on the empty pool
        # P_u: user -> demand node (constraint key, resource bits) -> waiting + running tasks
        self._tnode: dict[int, tuple[int, int]] = {}
        self._use: dict[int, Counter[tuple[int, int]]] = {}
        # failure records of blocked runs: run id -> (kind, G needed, tasks of the kind to fit)
        self._rec: dict[int, tuple[int, float, int]] = {}
        self._rinfo: dict[int, tuple[int, Run]] = {}  # run id -> (user, run)
        self._rheap: dict[int, list[tuple[float, int]]] = {}  # kind -> heap of (need, run id)
        self._gained: set[int] = set()  # kinds whose room grew since the last wake-up
        self._deferred: set[int] = set()  # kinds with runs left blocked for want of room
        self._woken: dict[int, tuple[int, float, int]] = {}  # records of runs woken, not tried
        self._retry: set[int] = set()  # kinds with runs left blocked while a woken one failed
        self._interplay: set[int] = set()  # runs whose kinds fit alone, not together
        self._kcount: Counter[int] = Counter()  # kind -> records of it in _rec and _woken
        self._active_kinds: np.ndarray | None = None  # kinds of those records (None: stale)
        self._allowed: np.ndarray | None = None  # their server masks (q, n_servers), if any
        # free room of the servers changed since the last flush, as it was before the change
        self._snap: dict[int, np.ndarray] = {}
        self._ready: set[int] = set()
        self._dirty = True
        self._rduc: dict[int, int] = {}
        self.rduc_log_: list[tuple[int, int, int]] = []
        # blocked="reserve": the blocked runs of every RDUC by key (share, user, run id), built
        # per round and kept lazily; runs that failed only for a head's reservation ("behind"
        # runs: run id -> (head, classes whose completions could let it fit)), indexed by head,
        # by user and by watched class; classes and users with a completion since the last pass
        self._bheap: dict[int, list[tuple[float, int, int]]] = {}
        self._built = False
        self._behind: dict[int, tuple[tuple[int, int], int, float]] = {}
        self._bgroup: dict[tuple[int, int], set[int]] = {}
        self._buser: dict[int, set[int]] = {}
        # per head and short kind: a bound on the room gained outside the reservation, and the
        # heap of (bound needed, run id) of the runs waiting for it
        self._bgain: dict[tuple[int, int], dict[int, float]] = {}
        self._bneed: dict[tuple[int, int], dict[int, list[tuple[float, int]]]] = {}
        # runs released for room this pass: run id -> (head, kind, bound) they waited on, and
        # the head's gains then (a bound holds only while the same gains are kept)
        self._roomed: dict[int, tuple[tuple[int, int], int, float, dict[int, float]]] = {}
        self._touched: dict[int, np.ndarray] = {}  # server -> its free amounts before
        self._touched_users: set[int] = set()
        self._rver: dict[int, int] = {}  # run id -> version (its waiting tasks changed)
        self._heads: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ events
    def _grow(self, n: int) -> None:
        g = np.zeros(n)
        g[: len(self._G)] = self._G
        self._G = g

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue ``task`` under its job run; a user that had nothing waiting or running joins."""
        self._join(user)
        mk = self._mask_key(task, user)
        q = self._kind(demand, mk)
        run = self.cluster_.task_job(task)
        runs = self._runs.setdefault(user, {})
        kinds = runs.get(run)
        if kinds is None:
            kinds = runs[run] = {}
            rid = self._rid[(user, run)] = self._next_rid
            self._rinfo[rid] = (user, run)
            self._next_rid += 1
            self._candidate(user, rid)
        else:
            rid = self._rid[(user, run)]
            big = self._oversized.pop(rid, None)  # the run grew: decide again on its next try
            self._unbehind(rid)  # (a run behind a reservation is tried again too)
            if self._reserve:  # its reservation, if it is a head, is made again
                self._rver[rid] = self._rver.get(rid, 0) + 1
            rec = self._rec.get(rid)
            if rec is not None:
                # a blocked run stays blocked: its recorded kind still has to fit (one more
                # task of it if the new task is of that kind and the run must start whole)
                if rec[0] == q and not big:
                    self._record(rid, q, rec[1] + 1.0, rec[2] + 1)
            elif rid not in self._cand.get(user, ()):
                self._candidate(user, rid)
        kinds.setdefault(q, []).append(task)
        self._kind_t[task] = q
        self._n_waiting += 1
        # demand node: the (class, resource) pairs the task may use, P_u of eq. 2
        node = (mk, sum(1 << k for k, d in enumerate(demand) if d > 0))
        self._tnode[task] = node
        use = self._use.setdefault(user, Counter())
        if use[node] == 0:
            self._dirty = True  # the user joins, or its demand set P_u grows
        use[node] += 1

    def _candidate(self, user: int, rid: int) -> None:
        """Make run ``rid`` of ``user`` a candidate of the next pass."""
        self._interplay.discard(rid)
        cand = self._cand.setdefault(user, set())
        if rid not in cand:
            cand.add(rid)
            heapq.heappush(self._candh.setdefault(user, []), rid)
        self._ready.add(user)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Release the task's class resources; blocked jobs that may now fit are retried."""
        self._release(user, server, demand)
        self._update_share(user)
        if self._reserve:  # room freed on this server, and the user's key fell
            if server not in self._touched:
                self._touched[server] = self._free[server] - np.asarray(demand)
            self._touched_users.add(user)
        node = self._tnode.pop(task)
        use = self._use[user]
        use[node] -= 1
        if use[node] == 0:
            del use[node]
            self._dirty = True  # the user leaves, or its demand set P_u shrinks
        if (self._rec or self._woken or self._interplay) and server not in self._snap:
            self._snap[server] = self._free[server] - np.asarray(demand)

    # ------------------------------------------------------------------ keys and RDUCs
    def _recompute_rducs(self) -> None:
        """Connected components of the user dependency graph (Definitions 1-2).

        Nodes: the active users, their demand nodes (constraint, resources demanded) and the
        (class, resource) pairs; a user is linked to its demand nodes, a demand node to the pairs
        it covers, so two users are connected exactly when their ``P_u`` chain together.
        """
        users = [u for u, c in self._use.items() if c]
        keys = sorted({node for u in users for node in self._use[u]})
        nu, nk = len(users), len(keys)
        kpos = {node: nu + i for i, node in enumerate(keys)}
        rows: list[int] = []
        cols: list[int] = []
        for i, u in enumerate(users):
            for node in self._use[u]:
                rows.append(i)
                cols.append(kpos[node])
        base = nu + nk
        r_parts = [np.asarray(rows, dtype=np.int64)]
        c_parts = [np.asarray(cols, dtype=np.int64)]
        for node in keys:
            mk, rsig = node
            ms = self._class_idx(mk)
            ks = [k for k in range(self._k) if rsig >> k & 1]
            pairs = (ms[:, None] * self._k + np.asarray(ks, dtype=np.int64)[None, :]).ravel()
            r_parts.append(np.full(len(pairs), kpos[node], dtype=np.int64))
            c_parts.append(pairs + base)
        n = base + self._nc * self._k
        r = np.concatenate(r_parts)
        c = np.concatenate(c_parts)
        # imported here: scipy.sparse costs every run that imports the registry ~30 MB
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        graph = coo_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(n, n))
        _, labels = connected_components(graph, directed=False)
        lab = labels[:nu].tolist()
        self._rduc = dict(zip(users, lab, strict=True))
        sizes = Counter(lab)
        self.rduc_log_.append((nu, len(sizes), max(sizes.values(), default=0)))
        self._dirty = False

    def _class_idx(self, mk: int) -> np.ndarray:
        """Indices of the machine classes that constraint key ``mk`` allows (cached)."""
        idx = self._cidx.get(mk)
        if idx is None:
            idx = self._cidx[mk] = np.flatnonzero(self._masks[mk][1])
        return idx

    def rducs(self) -> list[list[int]]:
        """The current RDUCs: lists of user codes, each sorted, in order of their smallest user."""
        if self._dirty:
            self._recompute_rducs()
        groups: dict[int, list[int]] = {}
        for u, c in self._rduc.items():
            groups.setdefault(c, []).append(u)
        return sorted(sorted(g) for g in groups.values())

    def degrees(self) -> dict[int, int]:
        """Degree of every active user in the user dependency graph (Definition 1): how many
        other users share a (class, resource) pair of its ``P_u`` (the UDRF paper's Fig. 6)."""
        masks: dict[int, int] = {}  # user -> bitmask of its (class, resource) pairs
        for u, use in self._use.items():
            if not use:
                continue
            bits = 0
            for mk, rsig in use:
                for m in self._class_idx(mk).tolist():
                    bits |= rsig << (m * self._k)
            masks[u] = bits
        count = Counter(masks.values())
        overlap = {
            a: sum(n for b, n in count.items() if a & b) - 1  # minus the user itself
            for a in count
        }
        return {u: overlap[b] for u, b in masks.items()}

    def _try_run(
        self,
        user: int,
        run: Run,
        head: tuple[int, int] | None = None,
    ) -> list[tuple[int, int]]:
        """Start the job run whole if it fits (an oversized one partly); else record why not.

        ``head``: the blocked run ahead of it (``blocked="reserve"``), whose reserved servers it
        may not use; a run that fails behind a head is kept in ``_behind``, not recorded."""
        kinds = self._runs[user][run]
        rid = self._rid[(user, run)]
        reserved = None if head is None else self._head_servers(head)[0]

        def free_now() -> np.ndarray:
            free = np.array(self._free)
            if reserved is not None:
                free[reserved] = 0.0
            return free

        out, placed, q, room = self._fit(kinds, free_now(), partial=False)
        big = False
        if not out:
            cached = self._oversized.get(rid)
            if cached is None:
                cached = self._oversized[rid] = not self._fits(kinds, np.array(self._cap))
            big = cached
            if big:
                out, placed, _, _ = self._fit(kinds, free_now(), partial=True)
                q, room = next(iter(kinds)), 0.0
        if not out and head is not None:
            # behind the head, it waits until kind q has the room for its tasks outside the
            # head's servers (an oversized run: its first kind, for one task), or the head or
            # the order changes; whether it would fit beside the reservation does not matter
            # (only runs before the head may use its servers)
            short, n_short = (next(iter(kinds)), 1) if big else (q, len(kinds[q]))
            self._wait_behind(user, rid, kinds, head, short, n_short)
            return []
        if not out:
            # kind q alone must fit before the run can (an oversized run: one task of it)
            self._flush()
            need = 1.0 if big else float(len(kinds[q]))
            if q != next(iter(kinds)):  # counted after earlier kinds: count on the real room
                room = float(self._count(q, np.array(self._free)).sum())
            if room >= need:
                # every kind fits alone but not all together (First-Fit order): retry the run
                # after the next completion, wherever it is
                self._interplay.add(rid)
                self._block(user, rid)
                return []
            self._record(rid, q, need - room + float(self._G[q]), int(need))
            self._block(user, rid)
            return []
        if self._rec or self._woken or self._interplay:
            snap, free = self._snap, self._free
            for _t, srv in out:
                if srv not in snap:
                    snap[srv] = free[srv].copy()
        if self._bneed:  # the room these placements take from the runs behind a reservation
            used: dict[int, np.ndarray] = {}
            kd, kind_t = self._kd, self._kind_t
            for t, srv in out:
                used[srv] = used.get(srv, 0.0) + kd[kind_t[t]]
            servers = np.fromiter(used, dtype=np.int64, count=len(used))
            before = np.asarray(self._free)[servers]
            self._room_change(servers, before, before - np.array(list(used.values())))
        self._charge(user, out)
        self._drop_placed(kinds, placed)
        if not kinds:
            del self._runs[user][run]
            del self._rid[(user, run)]
            del self._rinfo[rid]
            self._oversized.pop(rid, None)
        self._update_share(user)
        return out

    # ------------------------------------------------------------------ reservations
    def _build_blocked(self) -> None:
        """The blocked runs of every RDUC in a heap by key (share, user, run id): the known
        failures that the order of Fig. 5, line 6 meets (``blocked="reserve"``)."""
        heaps: dict[int, list[tuple[float, int, int]]] = {}
        share, info, rduc = self._share, self._rinfo, self._rduc
        for rid in itertools.chain(self._rec, self._interplay):
            u = info[rid][0]
            heaps.setdefault(rduc[u], []).append((share[u], u, rid))
        for h in heaps.values():
            heapq.heapify(h)
        self._bheap = heaps

    def _block(self, user: int, rid: int) -> None:
        """Run ``rid`` of ``user`` was just found not to fit: a blocked run of its RDUC."""
        if self._reserve:
            heapq.heappush(
                self._bheap.setdefault(self._rduc[user], []), (self._share[user], user, rid)
            )

    def _first_blocked(self, c: int) -> tuple[float, int, int] | None:
        """The first blocked run of RDUC ``c`` in the order (share, user, run id), or None."""
        h = self._bheap.get(c)
        rec, tangled, share = self._rec, self._interplay, self._share
        while h:
            s, u, rid = h[0]
            if rid not in rec and rid not in tangled:  # tried, woken or started since
                heapq.heappop(h)
            elif share[u] != s:  # its user's key moved: its place in the order too
                heapq.heapreplace(h, (share[u], u, rid))
            else:
                return h[0]
        return None

    def _sig(self, rid: int) -> tuple[int, int]:
        """A run with the version of its waiting tasks (what a reservation is made for)."""
        return rid, self._rver.get(rid, 0)

    def _head(self, c: int, key: tuple[float, int, int]) -> tuple[int, int] | None:
        """The head of RDUC ``c`` (its first blocked run) if it comes before ``key``; else
        None."""
        first = self._first_blocked(c)
        if first is None or first >= key:
            return None
        return self._sig(first[2])

    def _head_servers(self, head: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The servers reserved for the head (no run after it in the order may use them) and
        the machine classes they cover entirely, shape (n_servers,) and (n_classes,).

        The reservation is the fewest servers the head's job needs: its kinds, in order, are
        counted onto the servers' capacities, the servers most drained now (largest free share
        of their smallest resource) first, until each kind's tasks are held. It is made when the
        run is first met as a head and kept until its waiting tasks change, so the servers it
        names drain (only runs before the head may start there) and the head fits on them. A
        run larger than its servers ever hold reserves every server that holds one of its tasks.
        """
        got = self._heads.get(head)
        if got is None:
            if len(self._heads) > 4096:  # keep those runs wait behind (their bounds use them)
                self._heads = {h: v for h, v in self._heads.items() if h in self._bgroup}
            u, run = self._rinfo[head[0]]
            kinds = self._runs[u][run]
            cap = self._cap
            free = np.asarray(self._free)
            drained = np.divide(free, cap, out=np.ones_like(free), where=cap > 0).min(axis=1)
            order = np.argsort(-drained, kind="stable")
            room = cap.copy()
            servers = np.zeros(len(cap), dtype=bool)
            for q, ts in kinds.items():
                need = float(len(ts))
                c = np.minimum(self._count(q, room)[order], need)
                before = np.cumsum(c) - c  # tasks of the kind held by the servers ahead
                take = np.minimum(c, np.maximum(need - before, 0.0))
                used = take > 0
                servers[order[used]] = True
                room[order[used]] -= take[used, None] * self._kd[q]
            sizes = np.bincount(self._cls, minlength=self._nc)
            inside = np.bincount(self._cls[servers], minlength=self._nc)
            got = self._heads[head] = (servers, inside == sizes)
        return got

    def _wait_behind(
        self,
        user: int,
        rid: int,
        kinds: dict[int, list[int]],
        head: tuple[int, int],
        short: int,
        need: int,
    ) -> None:
        """Run ``rid`` does not fit beside the head's reservation: it waits *behind* the head
        until the head changes (:meth:`_refresh_behind`), its user's key falls (it may come
        before the head), or its kind ``short`` (the one that did not fit) has the room for its
        ``need`` tasks outside the head's servers again (:meth:`_release_roomy`).

        That room is ``C`` now (the kind alone, on the free amounts outside the reservation);
        every completion and placement since changes it by the kind's room on the server after
        minus before (:meth:`_room_change`), so ``C`` plus those changes is the room at any time,
        and the run cannot fit before it reaches ``need``."""
        reserved = self._head_servers(head)[0]
        cnt = self._count(short, np.asarray(self._free))
        room = float(cnt[~reserved].sum())
        gain = self._bgain.setdefault(head, {}).get(short, 0.0)
        self._bgain[head][short] = gain
        bound = need - room + gain
        self._behind[rid] = (head, short, bound)
        self._bgroup.setdefault(head, set()).add(rid)
        self._buser.setdefault(user, set()).add(rid)
        heapq.heappush(self._bneed.setdefault(head, {}).setdefault(short, []), (bound, rid))

    def _unbehind(self, rid: int) -> bool:
        """Take run ``rid`` out of the runs behind a reservation; whether it was one (its heap
        entry goes stale and is dropped when met)."""
        got = self._behind.pop(rid, None)
        if got is None:
            return False
        head = got[0]
        group = self._bgroup[head]
        group.discard(rid)
        if not group:
            del self._bgroup[head]
            self._bgain.pop(head, None)
            self._bneed.pop(head, None)
        user = self._rinfo[rid][0]
        mine = self._buser[user]
        mine.discard(rid)
        if not mine:
            del self._buser[user]
        return True

    def _release_behind(self, rids: set[int] | list[int]) -> None:
        """Make the runs ``rids`` behind a reservation candidates again."""
        for rid in list(rids):
            if self._unbehind(rid):
                self._candidate(self._rinfo[rid][0], rid)

    def _room_change(self, servers: np.ndarray, before: np.ndarray, after: np.ndarray) -> None:
        """The free amounts of ``servers`` went from ``before`` to ``after`` (shape (t, K)): add
        the room every short kind of the runs behind each head gained (or lost) on those of them
        outside the head's reservation."""
        for head, heaps in self._bneed.items():
            resv = self._heads.get(head)
            keep = np.ones(len(servers), dtype=bool) if resv is None else ~resv[0][servers]
            if not keep.any() or not heaps:
                continue
            srv = servers[keep]
            qs = list(heaps)
            d = self._kd[qs]  # (q, K)
            dsafe = np.where(d > 0, d, 1.0)[:, None, :]
            demands = (d > 0)[:, None, :]

            def room(
                free: np.ndarray,
                dsafe: np.ndarray = dsafe,
                demands: np.ndarray = demands,
                tol: np.ndarray = self._tol,
            ) -> np.ndarray:
                per = np.floor((free[None, :, :] + tol) / dsafe)  # (q, t, K)
                per = np.where(demands, per, np.inf).min(axis=2)
                return np.where(np.isinf(per), 0.0, np.maximum(per, 0.0))

            delta = room(after[keep]) - room(before[keep])
            delta *= self._mrows[[self._kmk[q] for q in qs]][:, srv]
            gains = self._bgain[head]
            for q, add in zip(qs, delta.sum(axis=1).tolist(), strict=True):
                if add:
                    gains[q] = gains.get(q, 0.0) + add

    def _release_roomy(self) -> None:
        """Release the runs behind a head whose short kind has the room for them again (its
        exact room outside the reservation, from the gains since each was blocked): of the runs
        of one head and kind, in the order of their keys, as many as the room holds; the others
        stay (looked at again on the next pass)."""
        share, info = self._share, self._rinfo
        out: list[int] = []
        for head, heaps in self._bneed.items():
            gains = self._bgain.get(head, {})
            for q, h in heaps.items():
                g = gains.get(q, 0.0)
                while h:  # the top entry, valid, tells the kind's room (the same for all)
                    bound, rid = h[0]
                    got = self._behind.get(rid)
                    if got is not None and got[0] == head and got[1] == q and got[2] == bound:
                        break
                    heapq.heappop(h)
                if not h or h[0][0] > g + 0.5 or self._nwait(h[0][1], q) - h[0][0] + g < 0.5:
                    continue  # no run's bound reached, or no room for a single task
                ready = []
                while h and h[0][0] <= g + 0.5:
                    bound, rid = heapq.heappop(h)
                    got = self._behind.get(rid)
                    if got is not None and got[0] == head and got[1] == q and got[2] == bound:
                        ready.append((bound, rid))
                if not ready:
                    continue
                ready = list(dict.fromkeys(ready))
                # the kind's room now: need - bound + g, the same for every run of the kind
                room = min(self._nwait(rid, q) - bound + g for bound, rid in ready)
                ready.sort(key=lambda e: (share[info[e[1]][0]], info[e[1]][0], e[1]))
                for bound, rid in ready:
                    need = self._nwait(rid, q)
                    if need <= room + 0.5:
                        room -= need
                        out.append(rid)
                        self._roomed[rid] = (head, q, bound, gains)
                    else:
                        heapq.heappush(h, (bound, rid))
        self._release_behind(out)

    def _still_short(self, user: int, rid: int, head: tuple[int, int] | None) -> bool:
        """Run ``rid``, released for room this pass, finds the head unchanged and its kind's
        room outside the reservation taken by the runs served before it: it goes back behind the
        head at once, with the bound it had (no fit can succeed)."""
        got = self._roomed.pop(rid, None)
        if got is None or got[0] != head or head not in self._bneed:
            return False
        _, q, bound, gains = got
        if self._bgain.get(head) is not gains or q not in gains:
            return False  # the head's runs were all released since: its gains started anew
        if gains[q] >= bound - 0.5:  # room now = need - bound + gain
            return False
        self._behind[rid] = (head, q, bound)
        self._bgroup.setdefault(head, set()).add(rid)
        self._buser.setdefault(user, set()).add(rid)
        heapq.heappush(self._bneed[head].setdefault(q, []), (bound, rid))
        return True

    def _nwait(self, rid: int, q: int) -> int:
        """Tasks of kind ``q`` run ``rid`` must place (one, for an oversized run)."""
        if self._oversized.get(rid):
            return 1
        u, run = self._rinfo[rid]
        return len(self._runs[u][run].get(q, ()))

    def _refresh_behind(self, pass_start: bool) -> None:
        """Release the runs behind a reservation that may fit now: the head they wait for is no
        longer its RDUC's first blocked run (it started, or another comes first), or (at the
        start of a pass) a task of their user finished and they now come before the head, or
        tasks that finished outside the head's servers may have left the room they lacked
        (:meth:`_release_roomy`)."""
        if not self._behind:
            self._touched.clear()
            self._touched_users.clear()
            return
        if pass_start:
            if self._touched:
                done = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
                before = np.array(list(self._touched.values()))
                self._room_change(done, before, np.asarray(self._free)[done])
            self._release_roomy()
            share = self._share
            for u in self._touched_users:  # its key fell: do some of its runs precede the head?
                got = self._buser.get(u)
                if got:
                    ahead = []
                    for rid in got:
                        h = self._behind[rid][0][0]
                        hu = self._rinfo[h][0] if h in self._rinfo else None
                        if hu is None or (share[u], u, rid) < (share[hu], hu, h):
                            ahead.append(rid)
                    self._release_behind(ahead)
            self._touched.clear()
            self._touched_users.clear()
        info, rduc = self._rinfo, self._rduc
        for head in list(self._bgroup):
            h = head[0]
            first = None
            if h in info and info[h][0] in rduc:
                first = self._first_blocked(rduc[info[h][0]])
            if first is None or first[2] != h or self._sig(h) != head:
                self._release_behind(self._bgroup[head])

    # ------------------------------------------------------------------ wake-ups and passes
    def _flush(self) -> None:
        """Add to ``G`` the change in room, of every kind with a record, on the changed servers.

        A kind's room on a server is how many of its tasks the server's free resources hold; with
        the room before every change (completion or placement) snapshotted, ``G[q]`` moves by
        exactly the change of kind q's total room since its records were made.
        """
        snap = self._snap
        if not snap:
            return
        if not self._kcount:  # no kind has a record (a woken run being tried still counts)
            snap.clear()
            return
        servers = np.fromiter(snap, dtype=np.int64, count=len(snap))
        before = np.array(list(snap.values()))
        after = np.asarray(self._free)[servers]
        snap.clear()
        if self._active_kinds is None:
            self._active_kinds = np.array(sorted(self._kcount), dtype=np.int64)
            masks = [self._masks[self._kmk[q]][0] for q in self._active_kinds.tolist()]
            self._allowed = (
                None
                if all(m is None for m in masks)
                else np.array(
                    [np.ones(len(self._cap), dtype=bool) if m is None else m for m in masks]
                )
            )
            d = self._kd[self._active_kinds]  # (q, K)
            # a resource a kind does not demand never limits it (a kind demanding nothing
            # always fits, so it never has a record); one (q, 1) column per resource
            dsafe = np.where(d > 0, d, 1.0)
            dbig = np.where(d > 0, 0.0, 1e12)
            self._dcols = [(dsafe[:, k, None], dbig[:, k, None]) for k in range(d.shape[1])]
        qs = self._active_kinds
        # the room after and before, in one pass: (q, 2 s), the minimum over the resources
        # taken resource by resource (a reduction over a short last axis is slow in numpy)
        both = np.concatenate((after, before)) + self._tol
        (dsafe_0, dbig_0), *rest = self._dcols
        room = np.floor(both[None, :, 0] / dsafe_0)
        room += dbig_0
        for k, (dsafe_k, dbig_k) in enumerate(rest, 1):
            r = np.floor(both[None, :, k] / dsafe_k)
            r += dbig_k
            np.minimum(room, r, out=room)
        np.maximum(room, 0.0, out=room)
        delta = room[:, : len(servers)] - room[:, len(servers) :]
        if self._allowed is not None:  # constrained kinds count only their allowed servers
            delta *= self._allowed[:, servers]
        gain = delta.sum(axis=1)
        self._G[qs] += gain
        self._gained.update(qs[gain > 0].tolist())

    def _wake(self) -> None:
        """Make the blocked runs whose kind now has room for them candidates again.

        Fig. 5, line 5 ("if a resource in a RDUC frees up"): only completions add room, so a
        blocked run is retried only after a completion gave its recorded kind enough room.
        """
        if not self._snap or not (self._rec or self._interplay):
            return
        self._flush()  # empties the snapshots
        tangled, self._interplay = self._interplay, set()
        for rid in tangled:  # any completion may untangle them
            self._candidate(self._rinfo[rid][0], rid)
        kinds = self._gained | self._deferred
        self._gained, self._deferred = set(), set()
        self._pop_feasible(kinds)

    def _pop_feasible(self, kinds: set[int]) -> None:
        """Wake the blocked runs of ``kinds`` whose kind has room for them now.

        The records of a kind agree on its room ``R = n - need + G`` (the gain accounting is
        exact), so the runs that fit alone are woken in the order of their users' keys while
        their task counts fit in ``R`` together; the others stay blocked (if a woken run then
        fails, :meth:`decide` wakes them in the same pass).
        """
        G = self._G
        for q in kinds:
            heap = self._rheap.get(q)
            g = G[q] + 0.5
            if not heap or heap[0][0] > g:
                continue
            feasible = []
            while heap and heap[0][0] <= g:
                need, rid = heapq.heappop(heap)
                rec = self._rec.get(rid)
                if rec is not None and rec[0] == q and rec[1] == need:  # else a stale entry
                    feasible.append(rid)  # (a run may have two equal entries: kept once)
            feasible = list(dict.fromkeys(feasible))
            if not feasible:
                continue
            room = min(self._rec[r][2] - self._rec[r][1] + G[q] for r in feasible)
            share, info = self._share, self._rinfo
            for rid in sorted(feasible, key=lambda r: (share[info[r][0]], r)):
                rec = self._rec[rid]
                if rec[2] <= room + 0.5:
                    room -= rec[2]
                    self._woken[rid] = self._rec.pop(rid)
                    self._candidate(info[rid][0], rid)
                else:  # fits alone, not with those woken before it: look again next time
                    heapq.heappush(heap, (rec[1], rid))
                    self._deferred.add(q)

    def _record(self, rid: int, q: int, need: float, n: int, counted: bool = False) -> None:
        """Block run ``rid`` until kind ``q``'s room gain ``G[q]`` reaches ``need`` (``n`` of its
        tasks must fit); ``counted``: the run's woken record, of kind ``q``, is still in
        ``_kcount``."""
        full = self._full.get(q)
        if full is None:  # tasks of kind q that its allowed servers hold when empty
            full = self._full[q] = float(self._count(q, np.array(self._cap)).sum())
        if n > full:  # the run grew past what its servers ever hold: it starts in parts
            need, n = need - n + 1.0, 1
            self._oversized[rid] = True
        old = self._rec.get(rid)
        self._rec[rid] = (q, need, n)
        heapq.heappush(self._rheap.setdefault(q, []), (need, rid))
        if counted:  # the record replaces one of kind q that was woken, still counted
            return
        if old is not None:
            if old[0] == q:
                return
            self._unkind(old[0])
        if self._kcount[q] == 0:
            self._active_kinds = None  # a kind with a first record: G tracks it from now on
        self._kcount[q] += 1

    def _unkind(self, q: int) -> None:
        """One record of kind ``q`` is gone (its run was tried or re-recorded)."""
        left = self._kcount[q] - 1
        if left:
            self._kcount[q] = left
        else:
            del self._kcount[q]
            self._active_kinds = None

    def decide(self) -> Iterator[tuple[int, int]]:
        """Serve every RDUC with candidate jobs: lowest RDUC-wise dominant share first.

        With ``period_s > 0`` only at the end of a period (:meth:`on_tick`); else at every call.
        """
        if not self._pass_due():
            return
        self._wake()
        self._roomed.clear()
        if self._reserve and (self._behind or self._touched):
            if self._dirty:
                self._recompute_rducs()
            self._build_blocked()
            self._built = True
            self._refresh_behind(pass_start=True)
        while self._ready:
            if self._dirty:
                self._recompute_rducs()
                self._built = False
            if self._reserve and not self._built:
                self._build_blocked()
            self._built = False
            by_rduc: dict[int, list[tuple[float, int]]] = {}
            for u in self._ready:
                by_rduc.setdefault(self._rduc[u], []).append((self._share[u], u))
            self._ready.clear()
            for c in sorted(by_rduc, key=lambda c: min(u for _, u in by_rduc[c])):
                # the slave scheduler of RDUC c (Fig. 5, line 3)
                serve = functools.partial(self._serve, c=c)
                yield from self._lowest_share_first(by_rduc[c], serve, self._cand.get)
            if self._reserve:  # heads that started or were overtaken: try their runs again
                self._refresh_behind(pass_start=False)
            if not self._retry:
                if self._ready:  # (only after _refresh_behind)
                    continue
                break
            self._flush()  # woken runs failed: the runs they kept blocked may fit now
            retry, self._retry = self._retry, set()
            self._pop_feasible(retry)

    def _serve(self, user: int, c: int) -> list[tuple[int, int]]:
        """Start the user's oldest candidate job that fits; [] if none does.

        With ``blocked="reserve"`` a job may not use the servers of the first blocked job
        before it in the order (share, user, job) of RDUC ``c`` (:meth:`_head`)."""
        cand = self._cand.get(user)
        heap_u = self._candh.get(user)
        while cand:
            rid = heapq.heappop(heap_u)  # type: ignore[arg-type]
            cand.discard(rid)
            head = self._head(c, (self._share[user], user, rid)) if self._reserve else None
            if self._roomed and self._still_short(user, rid, head):
                continue
            rec = self._woken.pop(rid, None)
            if rec is not None:
                self._flush()  # others may have taken the room since the wake-up
                if self._G[rec[0]] < rec[1] - 0.5:
                    self._record(rid, *rec, counted=True)
                    self._block(user, rid)
                    self._retry.add(rec[0])
                    continue
                self._unkind(rec[0])
            placed = self._try_run(user, self._rinfo[rid][1], head)
            if not placed and rec is not None:
                self._retry.add(rec[0])
            if placed:
                if rid in self._rinfo:  # oversized: the rest waits
                    if self._reserve:
                        self._rver[rid] = self._rver.get(rid, 0) + 1
                    self._candidate(user, rid)
                    self._ready.discard(user)
                else:
                    self._rver.pop(rid, None)
                return placed
        return []
