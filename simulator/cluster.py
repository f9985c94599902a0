"""Cluster state: server capacities and free amounts as numpy arrays.

The engine owns a :class:`ClusterState` and is the only code that changes it (through
:meth:`ClusterState.commit` and :meth:`ClusterState.release`). Schedulers receive a
:class:`ClusterView`, whose arrays are read-only views of the same memory, so they always see the
current free amounts without being able to change them (Omega's "cell state commits claims").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairsim.errors import PlacementError

#: Slack allowed when validating a placement, in the trace's normalised units. Free amounts are
#: updated by repeated float additions and subtractions; a task whose demand equals the free
#: amount up to rounding is accepted.
CAPACITY_TOLERANCE = 1e-9


class ClusterState:
    """Capacities and free amounts of a pool of heterogeneous servers.

    Parameters
    ----------
    capacity : array_like, shape (n_servers, n_resources)
        Capacity of every server per resource, in the trace's normalised units (Google 2011:
        the largest machine has 1 CPU and 1 memory). Must be finite and non-negative.
    resources : sequence of str
        Resource names, one per column of ``capacity``.

    Raises
    ------
    ValueError
        If ``capacity`` is not two-dimensional, has a negative or non-finite entry, or its number
        of columns differs from ``len(resources)``.

    Notes
    -----
    Arrays are stored in Fortran order so that ``free[:, r]`` (one resource over all servers) is
    contiguous: the schedulers' searches scan one resource column at a time.
    """

    def __init__(self, capacity: np.ndarray, resources: Sequence[str]) -> None:
        cap = np.asarray(capacity, dtype=np.float64)
        if cap.ndim != 2:
            raise ValueError(f"capacity: expected shape (n_servers, n_resources), got {cap.shape}")
        if cap.shape[1] != len(resources):
            raise ValueError(
                f"capacity: {cap.shape[1]} columns but {len(resources)} resources {list(resources)}"
            )
        if cap.shape[0] == 0:
            raise ValueError("capacity: the cluster has no servers")
        if not np.all(np.isfinite(cap)) or np.any(cap < 0):
            bad = np.argwhere(~np.isfinite(cap) | (cap < 0))[0]
            raise ValueError(
                f"capacity: server {bad[0]} resource {resources[bad[1]]!r} has invalid "
                f"capacity {cap[bad[0], bad[1]]!r} (expected a finite value >= 0)"
            )
        self.resources: tuple[str, ...] = tuple(resources)
        self.capacity = np.asfortranarray(cap.copy())
        self.free = np.asfortranarray(cap.copy())
        self.total = cap.sum(axis=0)
        self._n = cap.shape[0]
        self._cols = [self.free[:, r] for r in range(cap.shape[1])]  # contiguous column views
        self._used = [0.0] * cap.shape[1]
        self.capacity.flags.writeable = False
        # placement constraints (set by the engine): code per task id, mask per code
        self.task_codes: Sequence[int] | None = None
        self.constraint_masks: list[np.ndarray | None] = [None]
        # machine class label per server (set by the engine from its constraint index), and the
        # engine's task table, for schedulers that work on classes and jobs (online UDRF)
        self.classes: np.ndarray | None = None
        self.task_table: Any = None

    @property
    def n_servers(self) -> int:
        """Number of servers."""
        return int(self.capacity.shape[0])

    @property
    def n_resources(self) -> int:
        """Number of resource types."""
        return int(self.capacity.shape[1])

    def commit(self, task: int, server: int, demand: tuple[float, ...]) -> None:
        """Reserve ``demand`` on ``server`` for ``task`` after checking that it fits.

        Parameters
        ----------
        task : int
            Task id (used in the error message only).
        server : int
            Server index, ``0 <= server < n_servers``.
        demand : tuple of float, length n_resources
            Amount of every resource the task holds while it runs.

        Raises
        ------
        PlacementError
            If the server index is out of range or the demand exceeds the server's free amount of
            some resource; the message names the task, the server and the resource.
        """
        if not 0 <= server < self._n:
            raise PlacementError(
                f"task {task}: server {server} does not exist (cluster has {self._n} servers)"
            )
        cols = self._cols
        for r, d in enumerate(demand):
            free = cols[r][server]
            if free - d < -CAPACITY_TOLERANCE:
                raise PlacementError(
                    f"task {task} does not fit on server {server}: {self.resources[r]} demand "
                    f"{d:.6g} > free {free:.6g} (capacity {self.capacity[server, r]:.6g})"
                )
        used = self._used
        for r, d in enumerate(demand):
            cols[r][server] -= d
            used[r] += d

    def release(self, server: int, demand: tuple[float, ...]) -> None:
        """Return ``demand`` to ``server`` when a task finishes.

        Parameters
        ----------
        server : int
            Server the task ran on.
        demand : tuple of float, length n_resources
            The task's demand, as committed.
        """
        cols, used = self._cols, self._used
        for r, d in enumerate(demand):
            cols[r][server] += d
            used[r] -= d

    @property
    def used(self) -> list[float]:
        """Total amount in use per resource as the live list the state updates (do not mutate;
        the engine reads it at every event to integrate utilisation over time)."""
        return self._used

    @property
    def used_total(self) -> np.ndarray:
        """Total amount in use per resource, shape (n_resources,)."""
        return np.array(self._used)

    def view(self) -> ClusterView:
        """A read-only view that follows this state as the engine changes it."""
        return ClusterView(self)


class ClusterView:
    """Read-only window on a :class:`ClusterState`, handed to schedulers.

    Attributes
    ----------
    capacity : ndarray, shape (n_servers, n_resources)
        Server capacities (read-only).
    free : ndarray, shape (n_servers, n_resources)
        Free amounts, updated in place by the engine (read-only for the holder).
    total : ndarray, shape (n_resources,)
        Total capacity of the pool per resource.
    resources : tuple of str
        Resource names.
    """

    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self.resources = state.resources
        self.capacity = state.capacity
        free = state.free.view()
        free.flags.writeable = False
        self.free = free
        total = state.total.view()
        total.flags.writeable = False
        self.total = total

    @property
    def n_servers(self) -> int:
        """Number of servers."""
        return int(self.capacity.shape[0])

    @property
    def n_resources(self) -> int:
        """Number of resource types."""
        return int(self.capacity.shape[1])

    @property
    def constrained(self) -> bool:
        """Whether tasks of this run may carry placement constraints."""
        return self._state.task_codes is not None

    @property
    def machine_classes(self) -> np.ndarray:
        """Machine class label of every server, ndarray of str, shape (n_servers,).

        The pool's ``class`` labels when the run has placement constraints
        (:func:`fairsim.simulator.constraints.machine_classes`), else the capacity vector written as
        ``"cpu/mem"`` (servers with equal capacities share a class, the UDRF paper's "machine
        class", Section II-B).
        """
        labels = self._state.classes
        if labels is not None:
            return labels
        return np.array(
            ["/".join(f"{v:g}" for v in row) for row in self.capacity.tolist()], dtype=object
        )

    def task_job(self, task: int) -> tuple[int, int]:
        """``(job_id, repetition)`` of a submitted task (repetition 0 without a job gate).

        A scheduler driven by hand, without an engine's task table, sees every task as its own
        job: ``(task, 0)``.
        """
        tab = self._state.task_table
        if tab is None:
            return task, 0
        rep = int(tab.rep[task]) if tab.jobs else 0
        return int(tab.job_id[task]), rep

    def task_mask(self, task: int) -> np.ndarray | None:
        """Servers ``task`` may run on: a read-only bool mask (n_servers,), or None for any.

        The engine rejects a placement outside the mask (:mod:`fairsim.simulator.constraints`).
        """
        codes = self._state.task_codes
        if codes is None:
            return None
        return self._state.constraint_masks[codes[task]]
