"""The plug-in interface of online schedulers (indivisible tasks).

An online scheduler is bound to a cluster and then told about events; it answers with placements
that the engine validates and commits (it never trusts a placement it did not check). The engine
never polls it: it calls :meth:`Scheduler.decide` once after every batch of same-time events.

Protocol, in the order the engine follows it::

    sched.bind(cluster_view)            # once, before the first event
    sched.on_arrival(task, user, demand)        # a task joined the queue of `user`
    sched.on_completion(task, user, demand, server)  # a running task finished
    for task, server in sched.decide():  # lazily: the engine commits each placement
        ...                              # before the generator resumes, so the view
                                         # the scheduler reads is always current

A scheduler may only place tasks it has been told about and not yet placed. The engine raises
:class:`fairsim.errors.PlacementError` naming task, server and resource for any placement that
does not fit or places an unknown task.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from fairsim.simulator.cluster import ClusterView


class Scheduler:
    """Base class of online schedulers.

    Subclasses can customise by overriding :meth:`bind` (allocate run state, ending in ``_``),
    :meth:`on_arrival`, :meth:`on_completion` and :meth:`decide`. ``__init__`` only stores
    keyword-only hyper-parameters (scikit-learn's estimator contract); nothing is validated
    against a cluster before :meth:`bind`.

    Attributes
    ----------
    name : str
        Registered name, e.g. ``"bf-drfh"`` or ``"slots-14"``.
    """

    name: str = "scheduler"

    def bind(self, cluster: ClusterView) -> None:
        """Attach the scheduler to a cluster before the first event.

        Parameters
        ----------
        cluster : ClusterView
            Read-only view of the pool; ``cluster.free`` follows the engine's commits.
        """
        self.cluster_ = cluster

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """A task was submitted.

        Parameters
        ----------
        task : int
            Task id, unique within the run.
        user : int
            User code, a small non-negative integer assigned by the engine in order of first
            appearance.
        demand : tuple of float, length n_resources
            Resources the task holds while it runs (a tuple: the engine's hot loop works on
            Python floats).
        """
        raise NotImplementedError

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """A running task finished on ``server`` and released ``demand``."""
        raise NotImplementedError

    def decide(self) -> Iterator[tuple[int, int]]:
        """Propose placements ``(task, server)``, one at a time.

        Yields
        ------
        (int, int)
            A task and the server to run it on. The engine commits it before resuming the
            generator.
        """
        raise NotImplementedError

    def next_wakeup(self, now: float) -> float:
        """Next time (s, >= ``now``) at which the scheduler wants a pass without any event.

        Default: never (``math.inf``); the engine then calls the scheduler on events only.
        Periodic schedulers (distributed PS-DSF runs each server's procedure every T seconds,
        PS-DSF paper Section III-D) override it and :meth:`on_tick`. The engine stops ticking when
        no arrival or completion is left and a tick placed nothing.
        """
        return math.inf

    def on_tick(self, now: float) -> None:
        """Called at a time returned by :meth:`next_wakeup`, before that time's :meth:`decide`."""

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Whether a task with this demand could ever run on the bound cluster (default: yes).

        The engine asks on arrival and reports tasks that can never run as unplaceable instead
        of queueing them.
        """
        return True

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Whether such a task could ever run on one of the servers of ``mask`` (its placement
        constraint, :mod:`fairsim.simulator.constraints`). Default: :meth:`placeable` (the engine
        also checks the servers' capacities itself); schedulers that measure room in their own units
        (slots) override it.
        """
        return self.placeable(demand)

    def pending(self) -> int:
        """Number of tasks waiting to be placed (for reports and invariant checks)."""
        raise NotImplementedError


class DelegatingScheduler(Scheduler):
    """A scheduler that forwards every call to ``inner``; wrappers override what they watch.

    Used by measurement wrappers (queue counters, waste samplers) that must not change the
    decisions of the scheduler they wrap.

    Parameters
    ----------
    inner : Scheduler
        The scheduler that decides (its ``name`` is reported).
    """

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self.name = inner.name

    def bind(self, cluster: ClusterView) -> None:
        """Bind this wrapper and the wrapped scheduler."""
        super().bind(cluster)
        self.inner.bind(cluster)

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Delegated."""
        self.inner.on_arrival(task, user, demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Delegated."""
        self.inner.on_completion(task, user, demand, server)

    def decide(self) -> Iterator[tuple[int, int]]:
        """Delegated."""
        return self.inner.decide()

    def next_wakeup(self, now: float) -> float:
        """Delegated."""
        return self.inner.next_wakeup(now)

    def on_tick(self, now: float) -> None:
        """Delegated."""
        self.inner.on_tick(now)

    def placeable(self, demand: tuple[float, ...]) -> bool:
        """Delegated."""
        return self.inner.placeable(demand)

    def placeable_on(self, demand: tuple[float, ...], mask: np.ndarray) -> bool:
        """Delegated."""
        return self.inner.placeable_on(demand, mask)

    def pending(self) -> int:
        """Delegated."""
        return self.inner.pending()
