"""The scenario pipeline: a config resolved once, then every scheduler it names run on it.

Data flow: the config names a trace (converted once to the canonical tables and cached,
:mod:`fairsim.scenario.trace_cache`), a workload (:mod:`fairsim.scenario.workload`), a server
pool drawn with the run's seed (:mod:`fairsim.scenario.pool`) and schedulers; each scheduler
replays the same workload on an identical copy of the pool
(:func:`fairsim.scenario.scheduler_run.run_scheduler`).

There is one pipeline: :func:`prepare_scenario` resolves the workload, the pool, the placement
constraints and the users' weights once, and :meth:`Scenario.runs` runs every scheduler on them.
``fairsim run`` (:func:`fairsim.scenario.output.run_to_folder`), ``fairsim.simulate``, ``fairsim
sweep`` and the paper reproductions all go through it; a reproduction plugs what it measures into
it with :class:`Hooks` (its own workload or pool, a wrapper around each scheduler, a callback on
the utilisation grid) instead of building its own engine.

Before anything is simulated, an empty window, a utilisation interval that does not fit the
window and a pool with zero total capacity of a resource are refused with one-line errors.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    LeafRule,
    RunConfig,
    check_first_submission,
    check_horizon,
    check_samples,
    check_ticks,
)
from fairsim.scenario.limits import check_limits
from fairsim.scenario.pool import build_pool, pool_capacity
from fairsim.scenario.provenance import provenance
from fairsim.scenario.queues import (
    QueueTaskSource,
    check_cluster_queues,
    check_leaves,
    queue_tree,
)
from fairsim.scenario.scheduler_run import run_scheduler
from fairsim.scenario.workload import (
    Workload,
    constrained_workload,
    recorded_runs,
    resolve_workload,
    user_weights,
)
from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.registry import SchedulerSpec, make_scheduler, resolve
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.engine import EngineResult
from fairsim.simulator.jobs import JobGate
from fairsim.simulator.preemption import LoopRule
from fairsim.simulator.recording import TASK_TABLE_BYTES, in_memory_estimate
from fairsim.simulator.replay import RecordedRuns, ReplayScheduler
from fairsim.simulator.scheduler import DelegatingScheduler, Scheduler
from fairsim.simulator.workload import TaskSource

if TYPE_CHECKING:  # imported when used: the exact solvers (scipy.optimize) only with fairness
    from fairsim.scenario.fairness import FairnessProbe

log = logging.getLogger(__name__)

#: Why ``collect.stream_tasks`` needs an output folder.
STREAM_NEEDS_OUT = (
    "collect.stream_tasks: true writes tasks.parquet while each run goes on; give an output "
    "folder (fairsim run --out DIR, fairsim.simulate(..., out=DIR)) or set it to false"
)

#: The estimated memory of a run that keeps its tasks in memory, in bytes, from which the
#: message saying so is a warning (shown by ``fairsim run``) rather than an info line: about
#: 1.7 million tasks (:data:`fairsim.simulator.recording.TASK_TABLE_BYTES` a task).
IN_MEMORY_WARN_BYTES = 256 * 2**20

_GATE = "a job gate (DAG parents with trace.dag, trace.repetitions or trace.queue_jobs)"


@dataclass(frozen=True)
class Hooks:
    """What a caller plugs into the scenario pipeline (:func:`prepare_scenario`).

    Every hook is optional; None keeps the pipeline's own step. The paper reproductions plug in
    what they measure: PS-DSF replaces the workload by backlogged users and wraps each scheduler
    in the queue counter their source reads; UDRF wraps each scheduler in a watcher of its waiting
    tasks and measures the wasted resources at every grid point; the DRFH reproduction replaces
    workload and pool by one user's tasks on its dedicated cloud.

    Attributes
    ----------
    workload : callable, optional
        ``workload(cfg, base, progress) -> Workload``, replacing :func:`resolve_workload`.
    pool : callable, optional
        ``pool(cfg, base, workload) -> pandas.DataFrame`` (columns ``server`` and one per
        resource), replacing :func:`build_pool`.
    scheduler : callable, optional
        ``scheduler(run) -> Scheduler``: the unbound scheduler of one :class:`SchedulerRun`
        (its task source, gate, constraints and the users' weights are set), replacing
        :func:`default_scheduler`; a wrapper calls that one and wraps what it returns.
    on_sample : callable, optional
        ``on_sample(run, time_s, cluster)`` at every utilisation grid point of every run;
        ``cluster`` is the engine's :class:`~fairsim.simulator.cluster.ClusterState` (read it,
        never change it).

    Examples
    --------
    Count the grid points of every run:

    >>> counts: dict[str, int] = {}
    >>> def count(run, time_s, cluster):
    ...     counts[run.name] = counts.get(run.name, 0) + 1
    >>> hooks = Hooks(on_sample=count)
    """

    workload: Callable[[RunConfig, Path | None, bool], Workload] | None = None
    pool: Callable[[RunConfig, Path | None, Workload], pd.DataFrame] | None = None
    scheduler: Callable[[SchedulerRun], Scheduler] | None = None
    on_sample: Callable[[SchedulerRun, float, ClusterState], None] | None = None


@dataclass
class SchedulerRun:
    """One scheduler's run of a prepared :class:`Scenario`: what the hooks see, and, once the
    run has finished, its result.

    Attributes
    ----------
    spec : SchedulerSpec
        The scheduler's validated config entry (name, parameters, label).
    scenario : Scenario
    source : TaskSource
        This run's fresh task stream.
    gate : JobGate or None
        This run's job gate (complex jobs), if any.
    constraints : ConstraintIndex or None
        This run's placement constraints, if any.
    scheduler : Scheduler or None
        The scheduler handed to the engine (set before the run).
    result : EngineResult or None
        The engine's result (set when the run has finished).
    fairness : FairnessProbe or None
        With ``collect.fairness``: what the run measured of fairness over time
        (:class:`fairsim.scenario.fairness.FairnessProbe`; its ``tables()`` and ``summary()``
        go into the run's folder), set before the run.
    """

    spec: SchedulerSpec
    scenario: Scenario
    source: TaskSource
    gate: JobGate | None = None
    constraints: ConstraintIndex | None = None
    scheduler: Scheduler | None = None
    result: EngineResult | None = None
    fairness: FairnessProbe | None = None

    @property
    def name(self) -> str:
        """The scheduler's label: its result folder and the ``scheduler`` of its results
        (``psdsf-2`` for ``{name: psdsf, period_s: 2}``)."""
        return self.spec.label

    @property
    def config(self) -> RunConfig:
        """The scenario's config."""
        return self.scenario.config

    @property
    def weights(self) -> dict[int, float] | None:
        """The users' weights by engine user code (:func:`user_weights`), or None."""
        return self.scenario.weights


def default_scheduler(run: SchedulerRun) -> Scheduler:
    """The registry's scheduler of ``run.spec`` (name and parameters), with the users'
    weights, the scenario's queue tree (for a hierarchical scheduler) and for ``recorded`` the
    trace's recorded placements (:meth:`Scenario.recorded_runs`)."""
    placements = run.scenario.recorded_runs() if issubclass(run.spec.cls, ReplayScheduler) else None
    return make_scheduler(
        run.spec, weights=run.weights, placements=placements, queues=run.scenario.queues
    )


@dataclass
class Scenario:
    """A scenario resolved once for all its schedulers (:func:`prepare_scenario`).

    Attributes
    ----------
    config : RunConfig
    base : Path or None
        The config file's folder (relative paths), None for the working directory.
    workload : Workload
    pool : pandas.DataFrame
        The simulated servers: ``server`` (string id, the ``server`` of the runs' tasks) and one
        column per resource.
    capacity : ndarray, shape (n_servers, n_resources)
    horizon_s : float
        End of every run, seconds (``collect.horizon_s``, else the end of the window).
    open_source : callable
        ``open_source()``: a fresh task stream with the config's placement constraints.
    constraint_index : callable or None
        ``constraint_index()``: a fresh constraint index, None without constraints.
    weights : dict of int to float, or None
        The users' weights by engine user code (:func:`user_weights`).
    hooks : Hooks
    queues : QueueTree or None
        The config's queue tree on this pool (:func:`fairsim.scenario.queues.queue_tree`); the
        task streams of :attr:`open_source` then give every task its queue.
    """

    config: RunConfig
    base: Path | None
    workload: Workload
    pool: pd.DataFrame
    capacity: np.ndarray
    horizon_s: float
    open_source: Callable[[], TaskSource]
    constraint_index: Callable[[], ConstraintIndex] | None
    weights: dict[int, float] | None
    hooks: Hooks = field(default_factory=Hooks)
    queues: QueueTree | None = None
    _placements: RecordedRuns | None = field(default=None, repr=False)

    def recorded_runs(self) -> RecordedRuns:
        """The trace's recorded placements on this scenario's pool, read once
        (:func:`fairsim.scenario.workload.recorded_runs`), for the scheduler ``recorded``.

        Raises
        ------
        ConfigError
            Where the scenario cannot replay them (naming ``trace.format``, ``cluster.source``,
            ``cluster.servers``, or a machine the pool lacks).
        """
        if self._placements is None:
            self._placements = recorded_runs(self.config, self.workload, self.pool)
        return self._placements

    def summary_extra(self) -> dict[str, Any]:
        """What ``summary.json`` adds to a run's headline numbers: config hash, the fairsim
        version and git commit (:func:`fairsim.scenario.provenance.provenance`), seed, number of
        servers and the scenario's name."""
        cfg = self.config
        return {
            "config_hash": cfg.config_hash(),
            **provenance(),
            "seed": cfg.seed,
            "servers": len(self.pool),
            "name": cfg.name,
        }

    def stream_blocker(self) -> str | None:
        """Why this scenario's runs must keep every task in memory instead of streaming the
        ended ones to ``tasks.parquet`` (:mod:`fairsim.simulator.stream`), or None when they
        can stream.

        A job gate looks tasks up by id after they end; ``collect.stranded`` reads the waiting
        tasks from the per-task table; ``collect.sharing_incentive`` reads every task of the
        shared run. Placement constraints and the replay of recorded placements stream.
        """
        cfg = self.config
        if self.workload.gate() is not None:
            return _GATE
        if cfg.collect.stranded:
            return "collect.stranded (the waiting tasks are read from the per-task table)"
        if cfg.collect.sharing_incentive:
            return (
                "collect.sharing_incentive (the dedicated runs read every task of the shared run)"
            )
        return None

    def check_stream(self) -> None:
        """Refuse ``collect.stream_tasks: true`` where streamed results are not supported.

        Raises
        ------
        ConfigError
            Naming ``collect.stream_tasks``, when the scenario has a job gate (``collect.stranded``
            and ``collect.sharing_incentive`` are refused by :meth:`check_stranded` and
            :func:`fairsim.scenario.sharing.check_sharing_incentive`).
        """
        if not self.config.collect.stream_tasks:
            return
        if self.workload.gate() is not None:
            raise ConfigError(
                f"collect.stream_tasks: true is not supported with {_GATE}; set it to false"
            )

    def task_order(self, tasks_dir: Path | None) -> str | None:
        """How this scenario's runs record their tasks: ``"end"`` (streamed, rows in the order
        tasks ended: ``collect.stream_tasks: true``), ``"arrival"`` (streamed, rows in arrival
        order: the default with an output folder) or None (every task in memory: no output
        folder, or :meth:`stream_blocker`, which is then logged with an estimate of the memory
        the task table needs: a warning from :data:`IN_MEMORY_WARN_BYTES`).

        Raises
        ------
        ConfigError
            With ``collect.stream_tasks: true`` and no ``tasks_dir``, or where it is not
            supported (:meth:`check_stream`).
        """
        if self.config.collect.stream_tasks:
            if tasks_dir is None:
                raise ConfigError(STREAM_NEEDS_OUT)
            self.check_stream()
            return "end"
        if tasks_dir is None:
            return None  # the in-memory API: the tables are returned, not written
        why = self.stream_blocker()
        if why is None:
            return "arrival"
        n = self.open_source().n_hint
        size = (
            in_memory_estimate(n)
            if n is not None
            else f"about {TASK_TABLE_BYTES} bytes a task (the number of tasks is not known ahead)"
        )
        level = (
            logging.WARNING
            if n is None or n * TASK_TABLE_BYTES >= IN_MEMORY_WARN_BYTES
            else logging.INFO
        )
        log.log(
            level,
            "every task is kept in memory until the end of each run, not streamed to "
            "tasks.parquet, because of %s: %s",
            why,
            size,
        )
        return None

    def check_stranded(self) -> None:
        """Refuse ``collect.stranded`` where the engine does not know the waiting tasks.

        Raises
        ------
        ConfigError
            Naming ``collect.stranded``, with ``collect.stream_tasks`` or a job gate.
        """
        cfg = self.config
        if not cfg.collect.stranded:
            return
        what = (
            "collect.stream_tasks"
            if cfg.collect.stream_tasks
            else _GATE
            if self.workload.gate() is not None
            else None
        )
        if what is not None:
            raise ConfigError(
                f"collect.stranded: true is not supported with {what}; set it to false"
            )

    def runs(
        self,
        *,
        progress: bool = False,
        names: list[str] | None = None,
        tasks_dir: Path | None = None,
    ) -> Iterator[SchedulerRun]:
        """Run the schedulers one after the other, each on a fresh copy of the pool and a fresh
        task stream; yield each :class:`SchedulerRun` when it has finished.

        Parameters
        ----------
        progress : bool
            Show a progress bar per run.
        names : list of str, optional
            The schedulers to run: labels of the config's ``schedulers`` or other registered
            names (default: every entry of the config's ``schedulers``).
        tasks_dir : Path, optional
            The output folder: each run streams its ended tasks there (a hidden
            ``.<scheduler>.tasks.parquet``, moved into the scheduler's result folder by
            :func:`fairsim.simulator.results.write_run`), in arrival order, or in the order
            they ended with ``collect.stream_tasks: true``, unless the scenario cannot stream
            (:meth:`task_order`). None: every task in memory.

        Yields
        ------
        SchedulerRun
            With ``result`` set.

        Raises
        ------
        ConfigError
            With ``collect.stream_tasks: true`` and no ``tasks_dir``, or where streaming is not
            supported (:meth:`check_stream`), or ``collect.stranded`` is not
            (:meth:`check_stranded`).
        """
        cfg, hooks = self.config, self.hooks
        if cfg.collect.stream_tasks and tasks_dir is None:
            raise ConfigError(STREAM_NEEDS_OUT)
        self.check_stream()
        self.check_stranded()
        order = self.task_order(tasks_dir)
        build = hooks.scheduler or default_scheduler
        specs = cfg.scheduler_specs()
        if names is not None:  # a config label, else any registered name or alias
            by_label = {spec.label: spec for spec in specs}
            specs = [by_label.get(n) or resolve(n) for n in names]
        # the runs whose schedulers the gate check built (each scheduler is built once)
        opened = self.check_gate_preemption(specs, build)
        if self.queues is not None and cfg.leaves is not None:
            check_cluster_queues(
                cfg.leaves, self.queues, [s.label for s in specs if s.cls.leaf_queues_only]
            )
        for i, spec in enumerate(specs):
            name = spec.label
            run = opened.pop(i) if i in opened else self.open_run(spec, build)
            assert run.scheduler is not None  # set by open_run
            run.fairness = self.fairness_probe(run)
            sample = hooks.on_sample
            run.result = run_scheduler(
                run.scheduler,
                self.capacity,
                run.source,
                start_s=self.workload.start_s,
                horizon_s=self.horizon_s,
                interval_s=cfg.collect.utilization_interval_s,
                user_shares=cfg.collect.user_shares,
                stranded=cfg.collect.stranded,
                progress=progress,
                desc=name,
                resources=self.workload.resources,
                gate=run.gate,
                constraints=run.constraints,
                censored=cfg.trace.censored,
                on_sample=functools.partial(sample, run) if sample is not None else None,
                tasks_out=(
                    tasks_dir / f".{name}.tasks.parquet"
                    if order is not None and tasks_dir is not None
                    else None
                ),
                tasks_order=order or "end",
                fairness_interval_s=run.fairness.interval_s if run.fairness is not None else None,
                on_fairness=run.fairness,
                fairness_by_queue=self.queues is not None,
                server_ids=self.pool["server"].tolist(),
                preemption_loops=self.loop_rule(),
            )
            yield run

    def open_run(
        self, spec: SchedulerSpec, build: Callable[[SchedulerRun], Scheduler] | None = None
    ) -> SchedulerRun:
        """A new run of ``spec`` on this scenario: a fresh task stream, job gate and constraint
        index, and its scheduler, built once by ``build(run)`` (default
        :func:`default_scheduler`; :meth:`runs` passes :attr:`Hooks.scheduler` when set).

        Returns
        -------
        SchedulerRun
            With ``scheduler`` set, not yet run.
        """
        run = SchedulerRun(
            spec,
            self,
            self.open_source(),
            self.workload.gate(),
            self.constraint_index() if self.constraint_index is not None else None,
        )
        run.scheduler = (build or default_scheduler)(run)
        return run

    def check_gate_preemption(
        self,
        specs: list[SchedulerSpec],
        build: Callable[[SchedulerRun], Scheduler] | None = None,
    ) -> dict[int, SchedulerRun]:
        """Refuse, before any run, a scheduler that may evict tasks in a scenario with a job
        gate (the engine's preempting event loop has none); the one place that decides which
        loop such a scheduler runs in.

        A scheduler class that declares ``preempts`` and an ``evicts`` property (``yarn-fair``,
        ``kueue-fair``) is accepted when its parameters never let it evict (``yarn-fair``'s
        preemption timeouts both infinite, ``kueue-fair``'s ``within_cluster_queue`` and
        ``reclaim_within_cohort`` finding no candidate); it then runs in the engine's ordinary
        event loop (its run's scheduler gets ``preempts = False``) and records no evictions.
        Any other class that declares ``preempts`` is refused. To ask ``evicts``, the check
        opens the run of such a scheduler (:meth:`open_run`, with ``build``) and reads it from
        the instance that will run, through the wrappers a hook puts around it
        (:class:`~fairsim.simulator.scheduler.DelegatingScheduler`; a wrapper that hides it
        counts as evicting); it returns that run, so each scheduler is built once.

        Parameters
        ----------
        specs : list of SchedulerSpec
            The schedulers about to run.
        build : callable, optional
            ``build(run) -> Scheduler`` (:meth:`open_run`).

        Returns
        -------
        dict of int to SchedulerRun
            The runs opened to ask ``evicts``, by index in ``specs``, to be run as they are
            (empty without a job gate).

        Raises
        ------
        ConfigError
            One line naming the scheduler and the gate.
        """
        gate = self.workload.gate()
        if gate is None:
            return {}
        parts = [
            what
            for what, on in (
                ("DAG parents (trace.dag)", gate.dag),
                ("trace.repetitions", any(r > 1 for r in gate.repetitions.values())),
                ("trace.queue_jobs", gate.queue_jobs is not None),
            )
            if on
        ]
        what = " and ".join(parts) if parts else "trace.job_run_s"
        opened: dict[int, SchedulerRun] = {}
        for i, spec in enumerate(specs):
            if not spec.cls.preempts or issubclass(spec.cls, ReplayScheduler):
                continue
            if getattr(spec.cls, "evicts", None) is not None:
                run = self.open_run(spec, build)
                assert run.scheduler is not None  # set by open_run
                if not _evicts(run.scheduler, spec.cls):
                    # this instance never evicts: it runs in the engine's ordinary event loop,
                    # the one that has the job gate
                    run.scheduler.preempts = False
                    opened[i] = run
                    continue
                why = "its parameters turn preemption on"
            else:
                why = "its class declares preempts = True"
            raise ConfigError(
                f"schedulers: {spec.label!r} may evict tasks ({why}), which is not supported "
                f"with a job gate ({what}); turn its preemption off or remove the gate"
            )
        return opened

    def loop_rule(self) -> LoopRule | None:
        """The preemption-loop rule of ``collect.preemption_loops`` (None: the engine's
        default), for the runs of schedulers that preempt."""
        pl = self.config.collect.preemption_loops
        return None if pl is None else LoopRule(evictions=pl.evictions, window_s=pl.window_s)

    def fairness_probe(self, run: SchedulerRun) -> FairnessProbe | None:
        """The run's fairness probe with ``collect.fairness``, else None: the reference
        mechanism of ``run.spec``'s scheduler class (:func:`reference_mechanism`) on this
        scenario's pool, with the users' weights."""
        fc = self.config.collect.fairness
        if fc is None:
            return None
        from fairsim.scenario.fairness import FairnessProbe, reference_mechanism

        return FairnessProbe(
            mechanism=reference_mechanism(run.spec.cls, fc.reference, self.queues is not None),
            resources=self.workload.resources,
            capacity=self.capacity,
            weights=self.weights,
            interval_s=fc.interval_s,
            queues=self.queues,
        )

    def queue_tables(self, run: SchedulerRun) -> dict[str, pa.Table]:
        """The per-queue tables of a finished run of a scenario with a queue tree:
        ``queues`` (``queues.parquet``, :func:`fairsim.scenario.queues.queue_table`) and, with
        ``collect.fairness``, ``fairness_queues``; nothing for a flat scenario.

        Reads the run's tasks from its result (in memory, or the ``tasks.parquet`` it streamed,
        before :func:`fairsim.simulator.results.write_run` moves it).
        """
        if self.queues is None or run.result is None:
            return {}
        from fairsim.scenario.queues import queue_names, queue_table, task_queues
        from fairsim.simulator.results import tables

        result = run.result
        cols = ["job_id", "task_index", "user", "submit_s", "start_s", "finish_s"]
        built = tables(result)
        if result.streamed is not None:
            tasks = pq.read_table(result.streamed.path, columns=cols).to_pandas()
        else:
            tasks = built["tasks"].select(cols).to_pandas()
        jobs = built["jobs"].select(["job_id", "completion_time_s"]).to_pandas()
        parquet = self.workload.describe.get("tasks_parquet")
        codes = task_queues(
            self.config,
            self.queues,
            tasks,
            Path(parquet) if parquet else None,
            self.workload.aliases,
        )
        out = {"queues": queue_table(tasks, jobs, codes, queue_names(self.queues))}
        if run.fairness is not None:
            out.update(run.fairness.queue_tables())
        return out


def _evicts(scheduler: Scheduler, cls: type[Scheduler]) -> bool:
    """The ``evicts`` of a run's scheduler: of its instance of ``cls``, found through the
    :class:`~fairsim.simulator.scheduler.DelegatingScheduler` wrappers a hook may put around it;
    True when what the hook returned does not say."""
    inner = scheduler
    while not isinstance(inner, cls) and isinstance(inner, DelegatingScheduler):
        inner = inner.inner
    return bool(getattr(inner, "evicts", True))


def _queued(
    open_source: Callable[[], TaskSource],
    rule: LeafRule,
    tree: QueueTree,
    aliases: dict[str, str] | None = None,
) -> Callable[[], TaskSource]:
    """``open_source`` whose streams give every task its queue (:class:`QueueTaskSource`; a
    split user's aliases its own, :attr:`Workload.aliases`)."""

    def open_queued() -> TaskSource:
        return QueueTaskSource(open_source(), rule, tree, aliases)

    return open_queued


def _string_ids(pool: pd.DataFrame) -> pd.DataFrame:
    """The pool with string server ids (``servers.parquet``'s ``server`` and ``tasks.parquet``'s
    are one key): ids of another type (a hook's pool numbered 0, 1, ...) become their text.

    Raises
    ------
    ConfigError
        If the pool has no ``server`` column or names a server twice.
    """
    if "server" not in pool.columns:
        raise ConfigError("cluster: the server pool has no 'server' column (the servers' ids)")
    if not pd.api.types.is_string_dtype(pool["server"]):
        pool = pool.assign(server=pool["server"].astype(str))
    if not pool["server"].is_unique:
        twice = pool["server"][pool["server"].duplicated()].iloc[0]
        raise ConfigError(f"cluster: the server pool names server {twice!r} twice")
    return pool


def prepare_scenario(
    cfg: RunConfig,
    *,
    base: Path | None = None,
    progress: bool = False,
    hooks: Hooks | None = None,
) -> Scenario:
    """Resolve a scenario once for all its schedulers: the scenario pipeline's first step.

    Resolves the workload (:func:`resolve_workload`), checks the utilisation grid against the
    window, draws the pool (:func:`build_pool`), adds the placement constraints
    (:func:`constrained_workload`) and the users' weights (:func:`user_weights`).
    :meth:`Scenario.runs` then runs the schedulers.

    Parameters
    ----------
    cfg : RunConfig
        Validated scenario.
    base : Path, optional
        Folder of the config file: relative paths of the config are relative to it (to the
        working directory when None).
    progress : bool
        Show progress while converting a trace.
    hooks : Hooks, optional
        What the caller plugs in (its own workload or pool, scheduler wrappers, grid callbacks).

    Returns
    -------
    Scenario

    Raises
    ------
    ConfigError
        If the trace or the pool cannot be resolved, the window holds no task, the horizon
        is not after the start of the window, or the utilisation interval does not fit the
        window.

    Examples
    --------
    >>> from fairsim.scenario.config import parse_config
    >>> cfg = parse_config({"name": "demo", "trace": {"format": "synthetic", "n_tasks": 200,
    ...                                          "duration_s": 3600},
    ...                     "cluster": {"servers": 10}, "schedulers": ["ff-drfh", "bf-drfh"]})
    >>> scenario = prepare_scenario(cfg)
    >>> [(run.name, len(run.result.tasks["submit_s"])) for run in scenario.runs()]
    [('ff-drfh', 200), ('bf-drfh', 200)]
    """
    hooks = hooks or Hooks()
    check_limits(cfg)  # sizes this machine cannot hold, before anything is allocated
    workload = (hooks.workload or resolve_workload)(cfg, base, progress)
    if workload.start_s > cfg.trace.start_s:  # a converted trace's data starts later
        try:
            check_horizon(
                cfg.collect.horizon_s,
                workload.start_s,
                f"{workload.start_s:g} s where the trace's data starts (trace.start_s "
                f"{cfg.trace.start_s:g} s moves there)",
            )
        except ValueError as exc:
            raise ConfigError(f"config: {exc}") from None
    try:
        check_first_submission(
            cfg.collect.horizon_s, workload.first_submit_s, "the first task of the window"
        )
    except ValueError as exc:
        raise ConfigError(f"config: {exc}") from None
    horizon = cfg.collect.horizon_s or workload.end_s
    # without a horizon the run lasts at least until the last submission
    end = horizon if math.isfinite(horizon) else workload.last_submit_s
    if end is not None:
        try:
            check_samples(cfg, workload.start_s, end, open_end=not math.isfinite(horizon))
            check_ticks(cfg, workload.start_s, end)
        except ValueError as exc:
            raise ConfigError(f"config: {exc}") from None
        check_limits(
            cfg, start_s=workload.start_s, horizon_s=end, n_resources=len(workload.resources)
        )
    pool = _string_ids((hooks.pool or build_pool)(cfg, base, workload))
    capacity = pool_capacity(pool, workload.resources)
    open_source, index = constrained_workload(cfg, workload, pool)
    weights = user_weights(cfg, workload.open, workload.users, workload.aliases)
    tree = queue_tree(cfg, workload.resources, capacity.sum(axis=0))
    if tree is not None:
        assert cfg.leaves is not None
        check_leaves(cfg, open_source, tree)
        open_source = _queued(open_source, cfg.leaves, tree, workload.aliases)
    scenario = Scenario(
        cfg,
        base,
        workload,
        pool,
        capacity,
        horizon,
        open_source,
        index,
        weights,
        hooks,
        queues=tree,
    )
    if any(issubclass(spec.cls, ReplayScheduler) for spec in cfg.scheduler_specs()):
        scenario.recorded_runs()  # refused before anything is simulated
    return scenario
