"""A first-come-first-served scheduler for fairsim, shipped by another distribution.

Its ``pyproject.toml`` registers it in the ``fairsim.schedulers`` entry-point group as
``fifo-plugin``; once the distribution is installed, ``fairsim run`` and ``fairsim sweep`` accept
``schedulers: [fifo-plugin]`` like a built-in name.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import numpy as np

import fairsim


class Fifo(fairsim.Scheduler):
    """Tasks in arrival order, each on the first server that fits it; the head of the queue
    waits until it fits (no user is favoured, no task overtakes another)."""

    name = "fifo-plugin"
    work_conserving = False  # a user's task that fits waits behind the head of the queue
    lowest_share_first = False  # arrival order, whoever submitted the task

    def bind(self, cluster: fairsim.ClusterView) -> None:
        """Bind to the cluster; an empty queue."""
        super().bind(cluster)
        self._queue: deque[tuple[int, tuple[float, ...]]] = deque()

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Queue the task."""
        self._queue.append((task, demand))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        """Nothing to do: the next pass sees the freed resources in ``cluster_.free``."""

    def decide(self) -> Iterator[tuple[int, int]]:
        """Place the head of the queue while it fits somewhere (its constraint respected)."""
        while self._queue:
            task, demand = self._queue[0]
            fits = np.all(self.cluster_.free >= np.asarray(demand), axis=1)
            mask = self.cluster_.task_mask(task)
            if mask is not None:
                fits &= mask
            if not fits.any():
                return
            self._queue.popleft()
            yield task, int(fits.argmax())

    def pending(self) -> int:
        """Tasks waiting."""
        return len(self._queue)
