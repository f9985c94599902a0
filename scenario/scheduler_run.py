"""One scheduler's run: a fresh copy of the pool, one task stream, the engine.

:func:`run_scheduler` builds the scheduler a config entry names (or takes an unbound instance),
hands it to :class:`fairsim.simulator.engine.Engine` with the pool's capacity and the task
stream, and returns the engine's result. The pipeline (:mod:`fairsim.scenario.pipeline`) calls it
once per scheduler of a scenario.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fairsim.scenario.config import (
    RESOURCES,
)
from fairsim.schedulers.registry import SchedulerSpec, make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.jobs import JobGate
from fairsim.simulator.preemption import LoopRule
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.snapshot import UserSnapshot
from fairsim.simulator.workload import TaskSource

log = logging.getLogger(__name__)


def run_scheduler(
    scheduler: str | Mapping[str, Any] | SchedulerSpec | Scheduler,
    capacity: np.ndarray,
    source: TaskSource,
    *,
    start_s: float,
    horizon_s: float,
    interval_s: float,
    user_shares: bool = False,
    stranded: bool = False,
    progress: bool = False,
    desc: str | None = None,
    resources: tuple[str, ...] = RESOURCES,
    gate: JobGate | None = None,
    constraints: ConstraintIndex | None = None,
    censored: str = "hold",
    weights: dict[int, float] | None = None,
    on_sample: Callable[[float, ClusterState], None] | None = None,
    tasks_out: Path | None = None,
    tasks_order: str = "end",
    fairness_interval_s: float | None = None,
    on_fairness: Callable[[float, UserSnapshot], None] | None = None,
    fairness_by_queue: bool = False,
    server_ids: Sequence[str] | None = None,
    preemption_loops: LoopRule | None = None,
) -> EngineResult:
    """Run one scheduler on a fresh copy of the pool; returns the engine's result.

    ``scheduler`` is a config entry (a registered name, ``{name: ..., parameter: value}`` or a
    resolved :class:`fairsim.schedulers.registry.SchedulerSpec`, built with ``weights``, which map
    the engine's user codes to weights, :func:`user_weights`) or an unbound scheduler instance
    (``weights`` is then not used). ``on_sample(time_s, cluster)`` is called at every utilisation
    grid point; ``stranded`` records the stranded resources on the grid
    (:meth:`fairsim.simulator.engine.Engine.stranded`). With ``tasks_out``, ended tasks are
    streamed to that ``tasks.parquet`` while the run goes on, its rows in ``tasks_order``
    (``"end"`` or ``"arrival"``; ``Engine(tasks_out=..., tasks_order=...)``,
    :mod:`fairsim.simulator.stream`). With ``fairness_interval_s``, ``on_fairness(time_s,
    snapshot)`` is called on that grid (:class:`fairsim.simulator.snapshot.UserSnapshot`),
    per (user, queue) pair with ``fairness_by_queue`` (the tasks carry their queue).
    ``server_ids`` names the servers (the pool's ``server`` column, by row of ``capacity``): the
    ``server`` of the run's tasks (:class:`fairsim.simulator.cluster.ClusterState`; None:
    ``s0``, ``s1``, ...). ``preemption_loops`` is the loop rule of a scheduler that preempts
    (:class:`fairsim.simulator.preemption.LoopRule`; None: its default).
    """
    if not isinstance(scheduler, Scheduler):
        scheduler = make_scheduler(scheduler, weights=weights)
    engine = Engine(
        ClusterState(capacity, resources, server_ids),
        scheduler,
        source,
        start_s=start_s,
        horizon_s=horizon_s,
        utilization_interval_s=interval_s,
        record_user_shares=user_shares,
        record_stranded=stranded,
        progress=progress,
        progress_desc=desc or scheduler.name,
        gate=gate,
        constraints=constraints,
        censored=censored,
        on_sample=on_sample,
        tasks_out=tasks_out,
        tasks_order=tasks_order,
        fairness_interval_s=fairness_interval_s,
        on_fairness=on_fairness,
        fairness_by_queue=fairness_by_queue,
        preemption_loops=preemption_loops,
    )
    return engine.run()
