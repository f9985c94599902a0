"""The Slots baseline of the DRFH paper (Section VI, Table II): a Hadoop-Fair-Scheduler-style
slot scheduler, as progressive filling over private slot counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from fairsim.schedulers.placement import FirstFit
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import UserOrder
from fairsim.simulator.cluster import ClusterView


class SlotShare(UserOrder):
    """The Slots baseline's key: slots in use over the pool's slots, divided by the weight (DRFH
    paper, Section VI). Resources searched besides the slots are not part of the fair share."""

    def key(self, user: int) -> float:
        """``alloc[user][0] / total[0] / weight[user]`` (column 0 counts slots)."""
        s = self.state
        return s.alloc[user][0] / s.total[0] / s.weight[user]


class SlotFirstFit(FirstFit):
    """First-Fit over private slot counters (the Slots baseline, DRFH paper, Section VI).

    Column 0 of the search space is the free slots of each server, computed at bind from the
    scheduler's ``slots``, ``model`` and ``capacity_tol`` (:class:`Slots`); further columns are
    the real free amounts of the resources that the slots do not bound on some server.
    """

    def space(
        self, sched: ProgressiveFilling, cluster: ClusterView
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Each server's slot count, and the real resources searched too."""
        assert isinstance(sched, Slots)
        self.slots, self.model = sched.slots, sched.model
        cap = np.asarray(cluster.capacity, dtype=np.float64)
        eps = 1e-9
        sized = cap[:, 0] if self.model == "cpu" else cap.min(axis=1)
        n_slots = np.floor((sized + sched.capacity_tol) * self.slots + eps)
        self.slot_free = n_slots.astype(np.float64)
        # resources the slots do not bound on some server (memory for the cpu model; any resource
        # a slot granted by capacity_tol exceeds): searched in real free amounts too
        held = n_slots / self.slots
        self.real = [
            r
            for r in range(cap.shape[1])
            if (self.model == "cpu" and r > 0) or bool(np.any(held > cap[:, r] + eps))
        ]
        cols = [self.slot_free, *(cluster.free[:, r] for r in self.real)]
        totals = [self.slot_free.sum(), *(float(cluster.total[r]) for r in self.real)]
        return cols, np.array(totals)

    def need(self, demand: tuple[float, ...]) -> tuple[float, ...]:
        """The task's slots (by ``model``), then its demand of the real resources searched."""
        eps = 1e-9
        if self.model == "single":
            n = 1.0 if max(demand) <= 1.0 / self.slots + eps else np.inf
        elif self.model == "cpu":
            n = max(1.0, float(np.ceil(demand[0] * self.slots - eps)))
        else:
            n = max(1.0, float(np.ceil(max(demand) * self.slots - eps)))
        return (n, *(demand[r] for r in self.real))

    def take(self, server: int, need: tuple[float, ...]) -> None:
        """Take the task's slots."""
        self.slot_free[server] -= need[0]

    def give(self, server: int, need: tuple[float, ...]) -> None:
        """Give the task's slots back."""
        self.slot_free[server] += need[0]


class Slots(ProgressiveFilling):
    """Slot-based fair scheduler (the DRFH paper's Slots baseline, Section VI; Hadoop Fair
    Scheduler style).

    The maximum server (1 CPU, 1 memory in Table I's units) is divided into ``slots`` slots, so a
    slot holds ``1/slots`` of every resource of the maximum server.

    Parameters
    ----------
    slots : int
        Slots per maximum server, S (the paper's Table II tries 10, 12, 14, 16, 20).
    model : {"multi", "single", "cpu"}
        How servers and tasks map to slots:

        ``"multi"`` (default)
            A server holds ``floor((min_r c_lr + capacity_tol) * S)`` slots; a task takes
            ``ceil(max_r d_r * S)`` slots (at least one), i.e. a task larger than one slot takes
            as many slots as its dominant demand needs.
        ``"single"``
            Same slots per server; every task takes exactly one slot, and a task larger than one
            slot (``max_r d_r > 1/S``) can never run (reported as unplaceable).
        ``"cpu"``
            A server holds ``floor((c_l,cpu + capacity_tol) * S)`` slots, sized by CPU as Hadoop
            configures slots per core; a task takes ``ceil(d_cpu * S)`` slots, and the scheduler
            also checks memory, so a slot whose server has run out of memory cannot be used.
    capacity_tol : float, default 0.0012
        Capacity (in units of the largest server) added before the slots of a server are
        counted, so that a capacity a little below a slot boundary still holds that slot. Google's
        machine_events capacities lie up to 0.001 below the round values Table I publishes
        (0.4995 for 0.50, 0.2493 for 0.25, 0.749 for 0.75, 0.1241 for 1/8; see
        :mod:`fairsim.traces.pools`); without it a (0.5, 0.4995) server would hold 4 slots of 1/10,
        not 5.
        With the default, every machine_events capacity holds the slots of its round value
        (a multiple of 1/32) for every S <= 62, and Table I's published values hold the same
        slots as without it for every S <= 32. A slot granted this way is used only by tasks that
        really fit: for every resource of which some server holds more in slots than it has, the
        scheduler also checks the server's free amount.
    weights, eligible
        As for :class:`ProgressiveFilling`.

    Raises
    ------
    ValueError
        At :meth:`bind`, for ``slots`` not a positive integer, an unknown ``model`` or a negative
        or non-finite ``capacity_tol``.

    Notes
    -----
    Users get a fair share of slots: the user with the fewest slots in use (divided by weight) is
    served first (:class:`SlotShare`); the task goes to the first server with enough free slots
    (:class:`SlotFirstFit`). Utilisation is measured
    on the tasks' real demands, not on slots.
    """

    name = "slots"  # an instance is named ``slots-<S>`` by its parameters (__init__)
    work_conserving = False  # counts slots: a task waits for a slot while its resources are free
    order = SlotShare
    placement = SlotFirstFit

    #: Default of ``capacity_tol``: a little over the largest shortfall (0.001, 0.749 for 3/4) of
    #: a Google machine_events capacity below its round value.
    CAPACITY_TOL = 0.0012

    def __init__(
        self,
        *,
        slots: Annotated[int, Field(ge=1)],
        model: Literal["multi", "single", "cpu"] = "multi",
        capacity_tol: Annotated[float, Field(ge=0)] = CAPACITY_TOL,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        super().__init__(weights=weights, eligible=eligible)
        self.slots = slots
        self.model = model
        self.capacity_tol = capacity_tol
        # ``slots-<S>`` (``slots-<S>-single`` / ``slots-<S>-cpu`` for the other models); the
        # registry gives a configured instance its label instead
        self.name = f"slots-{slots}" + ("" if model == "multi" else f"-{model}")

    def bind(self, cluster: ClusterView) -> None:
        """Check the parameters, then bind as progressive filling over slots."""
        if not isinstance(self.slots, int) or self.slots < 1:
            raise ValueError(f"slots: {self.slots!r} (expected a positive integer)")
        if self.model not in ("multi", "single", "cpu"):
            raise ValueError(f"model: {self.model!r} (expected 'multi', 'single' or 'cpu')")
        tol = self.capacity_tol
        if not (isinstance(tol, int | float) and np.isfinite(tol) and tol >= 0):
            raise ValueError(f"capacity_tol: {tol!r} (expected a finite number >= 0)")
        super().bind(cluster)
