"""User selection in progressive filling: which waiting user is served next.

A :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling` scheduler names two parts,
given as class attributes::

    class BestFitDRFH(ProgressiveFilling):
        name = "bf-drfh"
        order = DominantShare  # user selection: which waiting user goes next (lowest key first)
        placement = BestFit  # placement: on which server its head task goes

This module holds the user-selection side: the :class:`FillingState` that the scheduler keeps
current and hands to its order, the base class :class:`UserOrder` (every hook an order may
customise is declared there), and the orders :class:`DominantShare` (DRFH) and
:class:`PooledDominantShare` (DRF). The placement side is :mod:`fairsim.schedulers.placement`;
the mechanisms' own orders live with their schedulers (:mod:`fairsim.schedulers.slots`,
:mod:`fairsim.schedulers.online_mechanisms`, :mod:`fairsim.schedulers.drf_classes`).

The filling loop, the blocking of users whose head task fits nowhere and their wake-ups stay in
:class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling`; an order never sees them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairsim.simulator.cluster import ClusterView

#: The scheduler an order is bound to: a
#: :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling` (not imported here: that
#: module imports this one).
Filling = Any

#: Keys of :class:`PooledDominantShare` (and the online mechanisms) are rounded to this many
#: decimals, so that shares equal in exact arithmetic tie whatever the rounding of running sums.
DIGITS = 12


@dataclass(frozen=True, slots=True)
class FillingState:
    """What a progressive-filling scheduler knows of its users: the state its order reads.

    The scheduler creates one at every :meth:`~ProgressiveFilling.bind` and keeps it current;
    an order (:meth:`UserOrder.bind`) reads it and never writes it. The per-user lists are
    indexed by user code (0, 1, ... in order of first appearance) and grow, in steps, before a
    user's first task arrives (:meth:`UserOrder.grow` is told the new length); entries of users
    not seen yet hold zeros and empty queues. Amounts are in the units of the placement's search
    space (:meth:`fairsim.schedulers.placement.ServerChoice.space`: the cluster's resources for
    DRFH, slots first for the Slots baseline).

    Attributes
    ----------
    alloc : list of list of float
        ``alloc[user][c]``: amount of column ``c`` of the search space held by the user's
        running tasks.
    running : list of int
        ``running[user]``: the user's running tasks.
    queues : list of deque of (int, tuple of float)
        ``queues[user]``: the user's queued tasks as ``(task, need)``, head first (the need in
        the search space); ``queues[user][0][1]`` is the need of the task served next.
    weight : list of float
        ``weight[user]``: the user's weight ``w_i > 0`` (DRFH paper, Section V-A; 1 unless the
        scenario gives weights).
    keys : list
        ``keys[user]``: the user's key as last computed by :meth:`UserOrder.key` (lowest served
        first); the scheduler writes it after every change of the user's state.
    total : list of float, length n_columns
        Total of each column of the search space over all servers.
    n_columns : int
        Columns of the search space (resources, or slots and the resources searched besides).
    eligible : mapping of int to ndarray of bool, or None
        The scheduler's per-user masks of the servers a user may use, shape ``(n_servers,)``
        (users not in it may use every server).
    """

    alloc: list[list[float]]
    running: list[int]
    queues: list[deque[tuple[int, tuple[float, ...]]]]
    weight: list[float]
    keys: list[Any]
    total: list[float]
    n_columns: int
    eligible: Mapping[int, np.ndarray] | None


class UserOrder:
    """The order in which waiting users are served: lowest :meth:`key` first, then user code.

    An order is created and bound afresh for every run; :meth:`bind` hands it the scheduler's
    :class:`FillingState` (as :attr:`state`), which the scheduler keeps current. Subclasses can
    customise by overriding these hooks (all but :meth:`key` have defaults that do nothing, for a
    key that depends only on the user's own state):

    * :meth:`key` (required): the user's key, from :attr:`state`.
    * :meth:`bind` and :meth:`grow`: the order's own run state (extend ``bind``, calling
      ``super().bind`` first; read the scheduler's parameters there), grown per user.
    * :meth:`account`: told about every placement and completion, with the server (for a key
      that depends on more than ``state.alloc`` and ``state.running``); called only if
      overridden.
    * :meth:`arrived`: told about every arrival; returns whether the user's key moved. Called
      only if overridden.
    * :meth:`activated`: a user became active (a task queued or running) or inactive; called
      only if overridden.
    * For a key that moves without a change of the user's own state (it depends on other users
      or on a global quantity): set :attr:`dynamic` and override :meth:`before_pass` (the keys
      of the waiting users moved) and :meth:`refresh` (re-key blocked users about to be woken);
      set :attr:`rekey_each` and override :meth:`after_place` when a placement moves the other
      users' keys, and :meth:`reserves` when woken users may still reserve room.

    Attributes
    ----------
    state : FillingState
        The scheduler's state, set by :meth:`bind`.
    """

    #: A user's key can change without a change of its own state: :meth:`before_pass` runs at
    #: the start of every scheduling pass, :meth:`refresh` before blocked users are woken.
    dynamic = False
    #: A placement may change the other users' keys: :meth:`after_place` runs after each one.
    rekey_each = False

    state: FillingState

    def bind(self, state: FillingState, sched: Filling, cluster: ClusterView) -> None:
        """Attach to a scheduler being bound to ``cluster``: keep ``state``.

        Parameters
        ----------
        state : FillingState
            The scheduler's state (kept current by the scheduler, read-only here).
        sched : ProgressiveFilling
            The scheduler (for its parameters, e.g. ``sched.bounds``).
        cluster : ClusterView
            The cluster it is bound to.
        """
        self.state = state

    def grow(self, n_users: int) -> None:
        """The state's per-user lists now hold ``n_users`` users: grow the order's own."""

    def key(self, user: int) -> Any:
        """The user's key (lowest served first): a float, or a tuple of floats."""
        raise NotImplementedError

    def account(self, user: int, server: int, need: tuple[float, ...], sign: int) -> None:
        """A task of ``user`` with this need was placed on (``sign=1``) or finished on
        (``sign=-1``) ``server``. Called, when overridden, after ``state.alloc`` and
        ``state.running`` took the change and before :meth:`key`."""

    def arrived(self, user: int, need: tuple[float, ...]) -> bool:
        """A task with this need was queued for ``user`` (called only if overridden): whether the
        user's key moved. A waiting user is then re-keyed at once; a blocked one must be re-keyed
        by :meth:`refresh` when it is woken (:attr:`dynamic`)."""
        return False

    def activated(self, user: int, on: bool) -> None:
        """``user`` became active (``on``: its first task in the system was queued) or inactive
        (its last task finished). Called only if overridden: on an arrival after
        :meth:`arrived`, on a completion after :meth:`account`; before :meth:`key` either way."""

    def refresh(self, users: Sequence[int]) -> None:
        """Recompute the keys of blocked ``users`` about to be woken (when :attr:`dynamic`)."""
        keys, key = self.state.keys, self.key
        for u in users:
            keys[u] = key(u)

    def before_pass(self) -> bool:
        """Called at the start of every scheduling pass when :attr:`dynamic`: whether the keys of
        the waiting users moved (they are then recomputed). Default: False."""
        return False

    def after_place(self) -> bool:
        """Called after every placement when :attr:`rekey_each`: whether the keys of the waiting
        users moved (they are then recomputed, and wake-ups decided in the old order are re-run).
        Default: True."""
        return True

    def reserves(self) -> bool:
        """Whether woken users may reserve room in key order (the keys are stable within a
        scheduling pass). Default: unless :attr:`rekey_each`."""
        return not self.rekey_each


class DominantShare(UserOrder):
    """Weighted global dominant share (DRFH paper, Section IV-A, eqs. 2-3; weights Section V-A).

    Key of user i: ``G_i / w_i = max_r (Σ_l A_ilr) / (Σ_l c_lr) / w_i``, over the columns of the
    search space (for DRFH, the cluster's resources). Not rounded: equal shares computed by
    different running sums may differ in the last bits.
    """

    def key(self, user: int) -> float:
        """``max_r alloc[user][r] / total[r] / weight[user]``."""
        s = self.state
        a = s.alloc[user]
        t = s.total
        if s.n_columns == 2:  # max() of the two, written out
            x, y = a[0] / t[0], a[1] / t[1]
            return (y if y > x else x) / s.weight[user]
        return max([a[k] / t[k] for k in range(s.n_columns)]) / s.weight[user]


class PooledDominantShare(UserOrder):
    """DRF's weighted dominant share of the pooled cluster (Ghodsi et al., NSDI 2011, Section 4),
    rounded to :data:`DIGITS` decimals so that equal shares tie in user-code order.

    Key of user i: ``round(max_r A_ir / C_r / w_i, 12)`` with ``C_r`` the pooled capacity.
    """

    def key(self, user: int) -> float:
        """``round(max_r alloc[user][r] / total[r] / weight[user], 12)``."""
        s = self.state
        a, t = s.alloc[user], s.total
        k = max([a[r] / t[r] for r in range(s.n_columns)]) / s.weight[user]
        return round(k, DIGITS)
