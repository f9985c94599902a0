"""Whole-job First-Fit over machine classes: the common part of ``udrf`` and ``drf-lockstep``.

Both schedulers of the UDRF paper's Section V (Tahir et al.) start *jobs*, not tasks: online UDRF
(:mod:`fairsim.schedulers.udrf_online`, Fig. 5) one job of the user with the lowest RDUC-wise
dominant share,
the DRF baseline (:mod:`fairsim.schedulers.drf_lockstep`) one instance of every queued job of the
user with
the lowest dominant share. :class:`JobFirstFit` holds what they share:

* **machine classes** (Section II-B): a server's class is its pool ``class`` label when the run
  has placement constraints, else its capacity vector
  (:attr:`fairsim.simulator.cluster.ClusterView.machine_classes`); ``c[m, k]`` is the class total;
* **kinds**: the tasks of a job are grouped by (demand vector, constraint), and a group is
  First-Fit in one step (how many of its tasks every allowed server holds), a run of kinds in one
  compiled call (:func:`fairsim.schedulers._jobfit_kernel.fit_run`);
* the **dominant share over (class, resource) pairs**, ``max_(m,k) A_u[m,k] / c[m,k]`` (Section
  II: machine classes as resource types; eq. 12 for UDRF, where ``d_u^max`` cancels);
* **per-second passes** (Section V: "Resource scheduling decisions are made on a per-second
  basis").

Subclasses can customise by overriding :meth:`bind` (calling it first), :meth:`on_arrival`,
:meth:`on_completion`, :meth:`decide` (which starts with :meth:`_pass_due` and may serve users by
:meth:`_lowest_share_first`), :meth:`pending` and :meth:`_grow` (called when the kind arrays
double, for per-kind state of the subclass).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from fairsim.schedulers.drf_classes import class_dominant_share
from fairsim.schedulers.periodic import next_period_start
from fairsim.simulator.cluster import CAPACITY_TOLERANCE, ClusterView
from fairsim.simulator.scheduler import Scheduler

_DIGITS = 12
#: The schedulers' slack, relative to the largest server capacity of each resource: half the
#: engine's (:func:`~fairsim.simulator.cluster.capacity_tolerance`), so that what they admit the
#: engine accepts. ``JobFirstFit._tol`` holds it in each resource's units.
_TOL = CAPACITY_TOLERANCE / 2


class JobFirstFit(Scheduler):
    """Base of the schedulers that start whole jobs over machine classes (see the module).

    Parameters
    ----------
    weights : mapping of int to float, optional
        User weights (> 0); the key is divided by the weight.
    eligible : mapping of int to ndarray of bool, shape (n_servers,), optional
        Servers each user may use (intersected with every task's own constraint).
    period_s : float
        Seconds between scheduling passes (Section V: per second; default 1). 0: a pass after
        every batch of same-time events.

    Raises
    ------
    ValueError
        From :meth:`bind`, for a negative ``period_s``; from :meth:`_join`, for a weight <= 0.

    Attributes
    ----------
    class_names_ : list of str
        Machine class labels; class ``m`` of the keys is ``class_names_[m]``.
    """

    period_parameter: ClassVar[str | None] = "period_s"  # ticks (0: none)

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
        period_s: Annotated[float, Field(ge=0)] = 1.0,
    ) -> None:
        self.weights = weights
        self.eligible = eligible
        self.period_s = period_s

    # ------------------------------------------------------------------ periodic passes
    def next_wakeup(self, now: float) -> float:
        """The next multiple of ``period_s`` after ``now`` (``inf`` when event-driven).

        Section V: "Resource scheduling decisions are made on a per-second basis": the events of
        a period are collected and served in one pass at its end.
        """
        if self.period_s <= 0:
            return math.inf
        return next_period_start(now, self.period_s)

    def on_tick(self, now: float) -> None:
        """A period ended: the next :meth:`decide` makes a pass."""
        self._due = True

    def _pass_due(self) -> bool:
        """Whether :meth:`decide` makes a pass now: with ``period_s > 0`` only once after a
        period ended (:meth:`on_tick`), else at every call."""
        if self.period_s > 0:
            if not self._due:
                return False
            self._due = False
        return True

    def _lowest_share_first(
        self,
        users: list[tuple[float, int]],
        serve: Callable[[int], list[tuple[int, int]]],
        more: Callable[[int], object],
    ) -> Iterator[tuple[int, int]]:
        """Progressive filling over ``users`` ((share, user) pairs, heapified in place): the user
        with the lowest share is served (``serve(user)``: its placements, [] if nothing fits) and,
        while ``more(user)`` holds after a placement, queued again with its new share."""
        heapq.heapify(users)
        share = self._share
        while users:
            _, u = heapq.heappop(users)
            placed = serve(u)
            if not placed:
                continue
            yield from placed
            if more(u):
                heapq.heappush(users, (share[u], u))

    # ------------------------------------------------------------------ binding
    def bind(self, cluster: ClusterView) -> None:
        """Group the servers into machine classes; allocate the kind and user state."""
        super().bind(cluster)
        if not self.period_s >= 0:
            raise ValueError(f"period_s: {self.period_s!r} (expected a number of seconds >= 0)")
        self._due = False
        names, cls = np.unique(np.asarray(cluster.machine_classes, dtype=str), return_inverse=True)
        cls = cls.ravel()
        cap = np.asarray(cluster.capacity, dtype=np.float64)
        total = np.zeros((len(names), cap.shape[1]))
        np.add.at(total, cls, cap)
        self.class_names_: list[str] = names.tolist()
        self._cls = cls
        self._cls_l: list[int] = cls.tolist()
        self._nc = len(names)
        self._k = cap.shape[1]
        inv = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
        self._inv: list[list[float]] = inv.tolist()
        self._cap = cap
        # the slack in each resource's units, shape (K,): answers do not depend on the units
        self._tol = cluster.tolerance / 2
        self._tol_l: list[float] = self._tol.tolist()
        self._cap_classes = np.unique(cap, axis=0)
        self._placeable: dict[tuple[float, ...], bool] = {}
        self._placeable_on: dict[tuple[tuple[float, ...], int], bool] = {}
        self._free = cluster.free
        # users: weight, resources held per class, key
        self._w: dict[int, float] = {}
        self._held: dict[int, dict[int, list[float]]] = {}
        self._share: dict[int, float] = {}
        # constraints: key -> (server mask or None, classes bool (n_classes,))
        self._masks: dict[int, tuple[np.ndarray | None, np.ndarray]] = {
            0: (None, np.ones(self._nc, dtype=bool))
        }
        self._mkey: dict[tuple[int, int], int] = {}
        self._mrows = np.ones((1, cap.shape[0]), dtype=bool)  # key -> server mask (0: all)
        # kinds (demand, constraint key) -> id; their demands and constraint keys
        self._kind_of: dict[tuple[tuple[float, ...], int], int] = {}
        self._kd = np.zeros((0, self._k))
        self._kmk: list[int] = []
        self._kind_t: dict[int, int] = {}  # waiting task -> its kind
        self._n_waiting = 0

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether some server of the empty pool could hold a task with this demand."""
        ok = self._placeable.get(demand)
        if ok is None:
            fits = np.all(self._cap_classes >= np.asarray(demand) - self._tol, axis=1)
            ok = self._placeable[demand] = bool(np.any(fits))
        return ok

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Whether some server of ``mask`` could hold such a task when empty."""
        key = (demand, id(mask))
        ok = self._placeable_on.get(key)
        if ok is None:
            fits = np.all(self._cap >= np.asarray(demand) - self._tol, axis=1)
            ok = self._placeable_on[key] = bool(np.any(fits & np.asarray(mask, dtype=bool)))
        return ok

    def pending(self) -> int:
        """Number of tasks waiting to be placed."""
        return self._n_waiting

    # ------------------------------------------------------------------ users, kinds, shares
    def _join(self, user: int) -> None:
        """Register ``user`` (weight, empty allocation) on its first task."""
        if user not in self._w:
            w = 1.0 if self.weights is None else float(self.weights.get(user, 1.0))
            if not w > 0:
                raise ValueError(f"weights: user {user} has weight {w!r} (expected > 0)")
            self._w[user] = w
            self._share[user] = 0.0
            self._held[user] = {}

    def _mask_key(self, task: int, user: int) -> int:
        """Key of the servers ``task`` may use (0: every server), registering it on first use."""
        mask = self.cluster_.task_mask(task)
        limit = self.eligible.get(user) if self.eligible else None
        if mask is None and limit is None:
            return 0
        k = (id(mask), user if limit is not None else -1)
        key = self._mkey.get(k)
        if key is None:
            m = np.asarray(mask if mask is not None else limit, dtype=bool)
            if mask is not None and limit is not None:
                m = m & np.asarray(limit, dtype=bool)
            classes = np.zeros(self._nc, dtype=bool)
            classes[np.unique(self._cls[m])] = True
            key = self._mkey[k] = len(self._masks)
            self._masks[key] = (m, classes)
            if key == len(self._mrows):  # grow by doubling
                rows = np.ones((2 * key, len(m)), dtype=bool)
                rows[:key] = self._mrows
                self._mrows = rows
            self._mrows[key] = m
        return key

    def _kind(self, demand: tuple[float, ...], mk: int) -> int:
        """Id of the kind (demand, constraint key ``mk``), registering it on first use."""
        q = self._kind_of.get((demand, mk))
        if q is None:
            q = self._kind_of[(demand, mk)] = len(self._kmk)
            self._kmk.append(mk)
            if q == len(self._kd):  # grow by doubling
                n = max(16, 2 * q)
                kd = np.zeros((n, self._k))
                kd[:q] = self._kd[:q]
                self._kd = kd
                self._grow(n)
            self._kd[q] = demand
        return q

    def _grow(self, n: int) -> None:
        """The kind arrays now have room for ``n`` kinds (a hook for per-kind state)."""

    def _charge(self, user: int, out: list[tuple[int, int]]) -> None:
        """Add the placed tasks ``out`` (task, server) to ``user``'s allocation ``A_u[m, :]`` of
        their servers' classes; they stop waiting."""
        held = self._held[user]
        cls = self._cls_l
        kd, kind_t, n = self._kd, self._kind_t, self._k
        for t, s in out:
            d = kd[kind_t.pop(t)]
            a = held.get(cls[s])
            if a is None:
                a = held[cls[s]] = [0.0] * n
            for k in range(n):
                a[k] += d[k]
        self._n_waiting -= len(out)

    @staticmethod
    def _drop_placed(kinds: dict[int, list[int]], placed: dict[int, int]) -> None:
        """Remove from a run's ``kinds`` (kind -> waiting tasks) the first ``placed[q]`` tasks of
        each kind ``q`` (what :meth:`_fit` placed), and the kinds left with none."""
        for q, n in placed.items():
            rest = kinds[q][n:]
            if rest:
                kinds[q] = rest
            else:
                del kinds[q]

    def _release(self, user: int, server: int, demand: tuple[float, ...]) -> None:
        """Take a finished task's ``demand`` off ``user``'s allocation on ``server``'s class."""
        a = self._held[user][self._cls_l[server]]
        for k in range(self._k):
            a[k] -= demand[k]

    def _update_share(self, user: int) -> None:
        """Dominant share over (class, resource) pairs, ``max_(m,k) A_u[m,k] / c[m,k]``, over
        the user's weight (UDRF paper, Section II and eq. 12)."""
        key = class_dominant_share(self._held[user], self._inv, self._k)
        self._share[user] = round(key / self._w[user], _DIGITS)

    # ------------------------------------------------------------------ placing jobs
    def _count(self, q: int, free: np.ndarray) -> np.ndarray:
        """How many tasks of kind ``q`` each server could hold, shape (n_servers,) float."""
        d = self._kd[q]
        count = None
        for k in range(self._k):
            if d[k] > 0:
                c = np.floor((free[:, k] + self._tol_l[k]) / d[k])
                count = c if count is None else np.minimum(count, c)
        if count is None:  # demands nothing: any allowed server holds any number
            count = np.full(free.shape[0], np.inf)
        mask = self._masks[self._kmk[q]][0]
        if mask is not None:
            count[~mask] = 0.0
        return np.maximum(count, 0.0, out=count)

    def _fit(
        self, kinds: dict[int, list[int]], free: np.ndarray, partial: bool
    ) -> tuple[list[tuple[int, int]], dict[int, int], int, float]:
        """First-Fit a run's tasks onto ``free`` (a copy, decremented in place), kind by kind in
        the order of ``kinds`` (:func:`fairsim.schedulers._jobfit_kernel.fit_run`).

        Returns
        -------
        placements : list of (task, server)
            Empty if the run does not fit whole (and not ``partial``).
        placed : dict of kind to int
            How many tasks of each kind were placed (a prefix of its list; kinds with none
            placed are left out).
        failed_kind, room : int, float
            The first kind that did not fit and how many of its tasks the servers could hold
            (``-1, 0`` on success). With ``partial``, what fits of each kind is placed.
        """
        qs = list(kinds)
        lists = list(kinds.values())
        failed, room, placed_a, o_kind, o_server, o_take, n_out = self._run_fit(
            qs, [len(ts) for ts in lists], free, partial, False
        )
        if failed >= 0:
            return [], {}, qs[failed], float(room)
        placed = {q: c for q, c in zip(qs, placed_a.tolist(), strict=True) if c > 0}
        out: list[tuple[int, int]] = []
        start = [0] * len(qs)
        for j, srv, c in zip(
            o_kind[:n_out].tolist(), o_server[:n_out].tolist(), o_take[:n_out].tolist(), strict=True
        ):
            i = start[j]
            out.extend((t, srv) for t in lists[j][i : i + c])
            start[j] = i + c
        return out, placed, -1, 0.0

    def _run_fit(
        self, qs: list[int], ns: list[int], free: np.ndarray, partial: bool, dry: bool
    ) -> tuple[int, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """:func:`~fairsim.schedulers._jobfit_kernel.fit_run` for ``ns[i]`` tasks of kind
        ``qs[i]``, in that order (its failed index is a position in ``qs``)."""
        # imported here: numba costs every run that imports the registry ~55 MB
        from fairsim.schedulers._jobfit_kernel import fit_run

        kmk = self._kmk
        return fit_run(
            free,
            self._kd[qs],
            np.array(ns, dtype=np.int64),
            np.array([kmk[q] for q in qs], dtype=np.int64),
            self._mrows,
            self._tol,
            partial,
            dry,
        )

    def _fits_counts(self, counts: dict[int, int], free: np.ndarray) -> tuple[int, float]:
        """Whether ``counts[q]`` tasks of each kind ``q`` (in order) fit whole on ``free`` (a
        copy, decremented in place): ``(-1, 0)``, else the first kind that did not fit and
        its room (as :meth:`_fit`)."""
        qs = list(counts)
        failed, room, *_ = self._run_fit(qs, list(counts.values()), free, False, True)
        return (-1, 0.0) if failed < 0 else (qs[failed], float(room))

    def _fits(self, kinds: dict[int, list[int]], free: np.ndarray) -> bool:
        """Whether :meth:`_fit` would place the run whole on ``free`` (a copy, decremented in
        place); no placements are listed."""
        return self._fits_counts({q: len(ts) for q, ts in kinds.items()}, free)[0] < 0
