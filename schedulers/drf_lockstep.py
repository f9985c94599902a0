"""``drf-lockstep``: the UDRF paper's Section V DRF baseline (a user's jobs advance together).

Tahir et al. (UDRF), Section V: "the second scheduler runs the *progressive filling* of DRF [8].
In the DRF scheduler, the machine classes are mapped as resources as described in Section II-A",
and, after Fig. 10: "DRF treats a user with multiple jobs as task-level resource allocation. In
this case, the number of job instance of each job are equal and fixed. This causes DRF to do not
utilizes the all resource available and not used by other users."

So DRF sees each user as *one* DRF user whose demand vector is the user's gross demand
``R^u = sum_j R^j`` over its jobs (eq. 1, over the (machine class, resource) types of Section II-A):
one unit of that demand is one instance of each of the user's jobs. Progressive filling raises
the lowest dominant share by one unit at a time, so the instances of a user's jobs are started
in lock-step, equal in number (Section II-A: DRF lets ``u_1`` run as many of ``job1`` as of
``job2``).

Online, with indivisible tasks on real servers:

* **a unit** ("bundle") of user ``u`` is, for every job of ``u`` that has waiting tasks, the waiting
  tasks of its oldest waiting instance (``(job_id, repetition)``,
  :meth:`fairsim.simulator.cluster.ClusterView.task_job`); jobs in the order they arrived. A job
  whose instances have all started drops out of the bundle; a job that enters the queue joins it;
* the bundle starts only **whole** (every task placed at once, First-Fit kind by kind,
  :class:`fairsim.schedulers.jobfit.JobFirstFit`); if it does not fit, the user is blocked until a
  task finishes on a machine class the bundle may use, or the user submits a task (head of line: no
  other job of the user starts meanwhile). A bundle larger than its servers could hold even when
  empty starts its instances in order, each whole, while they fit (an instance that is itself too
  large starts with the tasks that fit);
* **the key** is the dominant share over (class, resource) types, ``max_(m,k) A_u[m,k] / c[m,k]``
  (Section II-A; the same key as ``drf-classes`` and ``udrf``), divided by the weight; the user with
  the lowest key is served first, and served again while it stays lowest;
* passes happen once per ``period_s`` (Section V: "Resource scheduling decisions are made on a
  per-second basis"), as for ``udrf``.

The task-level variant, in which each of a user's tasks is placed on its own in order,
is ``drf-classes`` (:mod:`fairsim.schedulers.drf_classes`).

**Witnesses** (speed only; the decisions are those of fitting the bundle at every try, which
``tests/unit/test_drf_lockstep.py`` checks on random instances). When a bundle does not fit and
one of its kinds ``q`` (``n`` tasks) does not fit even alone on today's free amounts (``q`` lacks
``n - room`` of room), a later try of the *same* bundle is settled without a search while the room
``q`` can have gained since stays below what it lacked: starts only take room away, and each
completion adds at most what its server can hold of ``q`` after the release minus before it
(counted in one batch when a witness is next read, for the kinds of live witnesses only). On
the real Google sample (2,000 servers) this settles 579,460 of 616,646 tries; the rest, and the
check whether a bundle fits the empty pool, run the compiled First-Fit of
:func:`fairsim.schedulers._jobfit_kernel.fit_run`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fairsim.schedulers.jobfit import JobFirstFit
from fairsim.simulator.cluster import ClusterView

#: kinds -> waiting tasks of one instance (job_id, repetition) of a job
Kinds = dict[int, list[int]]


class DRFLockstep(JobFirstFit):
    """DRF over (machine class, resource) types whose unit is one instance of every queued job of
    the user (UDRF paper, Section V and Section II-A; see the module docstring).

    Parameters
    ----------
    weights, eligible, period_s
        As for :class:`~fairsim.schedulers.jobfit.JobFirstFit` (a weight <= 0 is refused at the
        user's first task, a negative ``period_s`` at :meth:`bind`: ``ValueError``).

    Attributes
    ----------
    class_names_ : list of str
        As for :class:`~fairsim.schedulers.jobfit.JobFirstFit`.
    bundles_ : int
        Bundles started (whole or, when oversized, in part).
    """

    name = "drf-lockstep"
    work_conserving = False  # a user's waiting jobs start together or not at all (UDRF Fig. 9)
    fifo_within_user = False  # whole jobs, First-Fit kind by kind; an oversized one in parts

    def bind(self, cluster: ClusterView) -> None:
        """Machine classes and kinds (:class:`JobFirstFit`); per-user job instances."""
        super().bind(cluster)
        # user -> job -> repetition -> kind -> waiting tasks (dicts keep arrival order)
        self._jobs: dict[int, dict[int, dict[int, Kinds]]] = {}
        self._ready: set[int] = set()  # users to try in the next pass
        self._blocked: dict[int, np.ndarray] = {}  # user -> classes whose freeing may help
        self._freed = np.zeros(self._nc, dtype=bool)  # classes with a completion since the pass
        self._big: dict[int, tuple[tuple[tuple[int, int], ...], bool]] = {}  # oversized cache
        # A failed bundle's witness (see _try): user -> (bundle version, kind q that does not
        # fit alone, q's count == 1, how much room q lacked, q's room gained until then, the
        # user's blocked classes). Room gained per watched kind, on completions: _gain[0] by
        # the count of q's tasks a server holds, _gain[1] by "a server holds one".
        self._ver: dict[int, int] = {}  # user -> bundle version (bumped when the bundle changes)
        self._wit: dict[int, tuple[int, int, bool, float, float, np.ndarray]] = {}
        # Only the kinds of live witnesses are watched (at most one per user), so a completion
        # costs the blocked users, not every kind ever witnessed.
        self._wpos: dict[int, int] = {}  # watched kind -> its column
        self._wkind: list[int] = []  # column -> watched kind
        self._wref: dict[int, int] = {}  # watched kind -> witnesses naming it
        self._wd = np.zeros((0, self._k))  # watched kinds' demands
        self._wmasked: list[tuple[int, np.ndarray]] = []  # (column, server mask) of masked ones
        self._gain = np.zeros((2, 0))
        self._pend: list[tuple[int, list[float], tuple[float, ...]]] = []  # releases not counted
        self.bundles_ = 0

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue ``task`` under its job instance; the user's bundle changed, so it is tried."""
        self._join(user)
        q = self._kind(demand, self._mask_key(task, user))
        job, rep = self.cluster_.task_job(task)
        reps = self._jobs.setdefault(user, {}).setdefault(job, {})
        reps.setdefault(rep, {}).setdefault(q, []).append(task)
        if rep == min(reps):  # the job's oldest waiting instance grew: the bundle changed
            self._ver[user] = self._ver.get(user, 0) + 1
            self._drop_witness(user)  # (it named the old version: never used again)
        self._kind_t[task] = q
        self._n_waiting += 1
        self._blocked.pop(user, None)
        self._ready.add(user)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Release the task's class resources; users blocked on that class are tried again."""
        self._release(user, server, demand)
        self._update_share(user)
        self._freed[self._cls_l[server]] = True
        if self._wpos:  # its room gain is counted when a witness is next read (_gained)
            self._pend.append((server, self._free[server].tolist(), demand))
            if len(self._pend) >= 4096:  # (no try for a long time: memory stays bounded)
                self._gained()

    # ------------------------------------------------------------------ witnesses
    def _gained(self) -> None:
        """Add to ``_gain`` the room the watched kinds can have gained by the completions since
        the last call: an upper bound per completion, summed (:meth:`_room_gained`)."""
        pend = self._pend
        if not pend:
            return
        self._pend = []
        if not self._wkind:
            return
        servers = np.array([p[0] for p in pend], dtype=np.int64)
        after = np.array([p[1] for p in pend], dtype=np.float64)
        demand = np.array([p[2] for p in pend], dtype=np.float64)
        self._gain += self._room_gained(servers, after, demand)

    def _room_gained(
        self, servers: np.ndarray, after: np.ndarray, demand: np.ndarray
    ) -> np.ndarray:
        """An upper bound on how much each watched kind's room grew when ``demand[i]`` was
        released on ``servers[i]``, leaving its free amounts at ``after[i]`` (shapes (p,),
        (p, K), (p, K)), summed over the p releases: shape (2, n_watched), row 0 in tasks the
        server holds (:meth:`_count`'s formula), row 1 in "holds one" (the one-task test of
        :meth:`_fit`).

        The free amounts before a release are taken slightly lower than ``after - demand``:
        the release added ``demand`` in floating point, so ``after - demand`` is within one unit
        in the last place of ``|after| + |demand|`` of them; four units lower, the bound holds.
        The counts are whole numbers, so their sum does not depend on the order of the
        releases."""
        before = after - demand - 4.0 * np.spacing(np.abs(after) + np.abs(demand))
        wd = self._wd  # (w, K)
        pos = wd > 0
        safe = np.where(pos, wd, 1.0)
        tol = self._tol_l

        def count(f: np.ndarray) -> np.ndarray:  # (w, p)
            c = None
            for k in range(wd.shape[1]):
                ck = np.where(
                    pos[:, k, None], np.floor((f[None, :, k] + tol[k]) / safe[:, k, None]), np.inf
                )
                c = ck if c is None else np.minimum(c, ck)
            assert c is not None
            return np.maximum(c, 0.0, out=c)

        def one(f: np.ndarray) -> np.ndarray:  # (w, p)
            ok = np.ones((wd.shape[0], f.shape[0]), dtype=bool)
            for k in range(wd.shape[1]):
                ok &= ~pos[:, k, None] | (f[None, :, k] >= wd[:, k, None] - tol[k])
            return ok.astype(np.float64)

        g0 = count(after) - count(before)
        g1 = one(after) - one(before)
        for col, m in self._wmasked:
            out = ~m[servers]
            g0[col, out] = 0.0
            g1[col, out] = 0.0
        return np.vstack([g0.sum(axis=1), g1.sum(axis=1)])

    def _watch(self, q: int) -> int:
        """Column of kind ``q`` in the room-gained counters (added, from zero, if no witness
        watches it yet); one more witness names it."""
        col = self._wpos.get(q)
        if col is None:
            col = self._wpos[q] = len(self._wkind)
            self._wkind.append(q)
            self._wd = np.vstack([self._wd, self._kd[q]])
            self._gain = np.hstack([self._gain, np.zeros((2, 1))])
            self._masked_columns()
        self._wref[q] = self._wref.get(q, 0) + 1
        return col

    def _unwatch(self, q: int) -> None:
        """One witness less names kind ``q``; with none left its column goes (the last column
        moves into its place, with its counters)."""
        left = self._wref[q] - 1
        if left:
            self._wref[q] = left
            return
        del self._wref[q]
        col = self._wpos.pop(q)
        last = len(self._wkind) - 1
        if col != last:
            moved = self._wkind[col] = self._wkind[last]
            self._wpos[moved] = col
            self._wd[col] = self._wd[last]
            self._gain[:, col] = self._gain[:, last]
        self._wkind.pop()
        self._wd = self._wd[:last].copy()
        self._gain = self._gain[:, :last].copy()
        self._masked_columns()

    def _masked_columns(self) -> None:
        """(column, server mask) of the watched kinds with a placement constraint."""
        masks = self._masks
        self._wmasked = [
            (col, m)
            for col, q in enumerate(self._wkind)
            if (m := masks[self._kmk[q]][0]) is not None
        ]

    def _drop_witness(self, user: int) -> None:
        """Forget ``user``'s witness, if any."""
        old = self._wit.pop(user, None)
        if old is not None:
            self._unwatch(old[1])

    def _witness(self, user: int, q: int, n: int, room: float | None, classes: np.ndarray) -> None:
        """Remember that kind ``q`` (``n`` tasks of the bundle) does not fit alone on today's
        free room (``room``: its room, if known from the fit); if it does, forget the user's
        earlier witness (it has gained what it lacked, so it no longer settles a try)."""
        if not (self._kd[q] > 0).any():
            return
        single = n == 1
        if room is None:  # tried after other kinds: its room on the whole of today's free
            free = np.asarray(self._free)
            if single:
                room = float(self._fits({q: [0]}, free.copy()))
            else:
                room = float(self._count(q, free).sum())
        lack = (1.0 if single else float(n)) - room
        if lack > 0:
            col = self._watch(q)
            g = float(self._gain[int(single), col])
            self._drop_witness(user)
            self._wit[user] = (self._ver.get(user, 0), q, single, lack, g, classes)
        else:  # an earlier witness of this bundle has gained what it lacked: it settles nothing
            self._drop_witness(user)

    # ------------------------------------------------------------------ bundles
    def _bundle(self, user: int) -> list[Kinds]:
        """The oldest waiting instance of every job of ``user`` with waiting tasks."""
        return [reps[min(reps)] for reps in self._jobs[user].values()]

    def _try(self, user: int) -> list[tuple[int, int]]:
        """Start the user's bundle whole (an oversized one: its instances in order while they
        fit); [] and block if nothing starts."""
        self._gained()  # (before a witness is read or a kind is watched)
        wit = self._wit.get(user)
        if wit is not None:
            ver, q, single, lack, g0, classes = wit
            if ver == self._ver.get(user, 0) and self._gain[int(single), self._wpos[q]] - g0 < lack:
                # The same bundle, and its witness kind's room has not grown by what it lacked
                # (starts only take room away): the bundle still does not fit.
                self._blocked[user] = classes
                return []
        bundle = self._bundle(user)
        counts: dict[int, int] = {}  # the bundle's kinds, in order, and their task counts
        for kinds in bundle:
            for q, ts in kinds.items():
                counts[q] = counts.get(q, 0) + len(ts)
        failed, room = self._fits_counts(counts, np.array(self._free))
        out: list[tuple[int, int]] = []
        # (instance, how many of each of its kinds started)
        started: list[tuple[Kinds, dict[int, int]]] = []
        big = False
        if failed < 0:  # it fits: the same First-Fit again, listing the placements
            merged: Kinds = {}
            for kinds in bundle:
                for q, ts in kinds.items():
                    merged.setdefault(q, []).extend(ts)
            out = self._fit(merged, np.array(self._free), partial=False)[0]
            started = [(kinds, {q: len(ts) for q, ts in kinds.items()}) for kinds in bundle]
        else:
            sig = tuple(counts.items())
            cached = self._big.get(user)
            if cached is None or cached[0] != sig:
                fits = self._fits_counts(counts, self._cap.copy())[0] < 0
                cached = self._big[user] = (sig, not fits)
            big = cached[1]
            if big:
                out, started = self._prefix(bundle)
        if not out:
            classes = np.zeros(self._nc, dtype=bool)
            for q in counts:
                classes |= self._masks[self._kmk[q]][1]
            self._blocked[user] = classes
            if not big:
                first = failed == next(iter(counts))
                self._witness(user, failed, counts[failed], room if first else None, classes)
            return []
        self.bundles_ += 1
        self._ver[user] = self._ver.get(user, 0) + 1
        self._drop_witness(user)
        for kinds, n in started:
            self._drop_placed(kinds, n)
        jobs = self._jobs[user]
        for job in list(jobs):
            reps = jobs[job]
            for rep in [r for r, kinds in reps.items() if not kinds]:
                del reps[rep]
            if not reps:
                del jobs[job]
        self._charge(user, out)
        self._update_share(user)
        return out

    def _prefix(
        self, bundle: list[Kinds]
    ) -> tuple[list[tuple[int, int]], list[tuple[Kinds, dict[int, int]]]]:
        """An oversized bundle: its instances in order, each whole, while they fit; an instance
        that could not fit even on the empty pool starts with the tasks that fit. Stops at the
        first instance that does not start."""
        free = np.array(self._free)
        out: list[tuple[int, int]] = []
        started: list[tuple[Kinds, dict[int, int]]] = []
        for kinds in bundle:
            trial = free.copy()  # (a failed fit leaves its copy part-decremented)
            got, placed, _, _ = self._fit(kinds, trial, partial=False)
            if not got and not self._fits(kinds, self._cap.copy()):
                trial = free.copy()
                got, placed, _, _ = self._fit(kinds, trial, partial=True)
            if not got:
                break
            free = trial
            out += got
            started.append((kinds, placed))
            if sum(placed.values()) < sum(len(ts) for ts in kinds.values()):
                break  # an oversized instance started in part: the next ones wait for it
        return out, started

    def decide(self) -> Iterator[tuple[int, int]]:
        """Progressive filling: the lowest key's bundle starts, then the next lowest key's.

        With ``period_s > 0`` only at the end of a period (:meth:`on_tick`); else at every call.
        """
        if not self._pass_due():
            return
        if self._freed.any():
            freed = self._freed
            for user in [u for u, cls in self._blocked.items() if (cls & freed).any()]:
                del self._blocked[user]
                self._ready.add(user)
            freed[:] = False
        heap = [(self._share[u], u) for u in self._ready if self._jobs.get(u)]
        self._ready.clear()
        yield from self._lowest_share_first(heap, self._try, self._jobs.__getitem__)
