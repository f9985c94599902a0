"""The discrete-event engine: a SimPy environment driving arrivals, completions and scheduling.

This and :mod:`fairsim.schedulers.flows.markov_chain` (the Markovian demand model) are
the only modules importing :mod:`simpy`; schedulers never do. The engine

* streams tasks in submit order from a :class:`fairsim.simulator.workload.TaskSource`;
* keeps completions in a heap ordered by ``(finish time, task id)``, so ties never depend on set or
  dict order;
* advances a SimPy :class:`~simpy.Environment` straight to the next event time (arrival or
  completion) with one timeout per distinct event time — it never polls every simulated second;
* at each event time processes all completions, then all arrivals, then runs one scheduling pass
  (:meth:`fairsim.simulator.scheduler.Scheduler.decide`), validating and committing every placement
  (:meth:`fairsim.simulator.cluster.ClusterState.commit`);
* samples utilisation on a fixed grid of ``utilization_interval_s`` exactly (the cluster state is
  constant between events, so a grid point takes the state after the last event before it),
  and, with ``record_stranded``, the stranded resources (:meth:`Engine.stranded`);
* with ``fairness_interval_s``, keeps per-user counts and demand sums of the tasks present and
  running, and hands a :class:`fairsim.simulator.snapshot.UserSnapshot` of the active users to
  ``on_fairness`` on a grid of its own (same rule as the utilisation grid); without it, the
  event loop pays one boolean test per arrival and nothing else;
* records every task through one recorder, chosen when the run starts
  (:mod:`fairsim.simulator.recording`): every task kept in memory, or each ended task streamed
  to ``tasks.parquet`` (``tasks_out``);
* for the replay of recorded placements (a
  :class:`~fairsim.simulator.replay.ReplayScheduler`, the scheduler ``recorded``, and no other
  scheduler; chosen once when the run starts), takes each placement with its run's end, commits
  it without the capacity check (servers may be over-committed), lets a run end without ending
  its task (the task waits again), and records the over-commitment on the utilisation grid
  (:mod:`fairsim.simulator.replay`). It has an event loop of its own (:meth:`Engine._main_replay`,
  chosen when the run starts): the loop of every other scheduler (:meth:`Engine._main`) does not
  test for it;
* for a scheduler that preempts (:attr:`~fairsim.simulator.scheduler.Scheduler.preempts`; chosen
  once when the run starts), takes running tasks back at the scheduler's
  :class:`~fairsim.simulator.scheduler.Eviction` records: the task waits again and restarts from
  scratch, the evicted run never completes, and the run records each task's evictions, the work
  lost and preemption loops (:mod:`fairsim.simulator.preemption`). It has an event loop of its
  own too (:meth:`Engine._main_preempt`): :meth:`Engine._main` pays nothing for preemption.

A task's run starts when it is placed and lasts its ``run_s`` from the trace, except a
*placeholder* (``TaskBatch.end_at_s``: a hoarding user's stand-in, ``fairsim strategy``), which
holds its resources until its absolute end time and ends at once when it starts at or after it;
it takes the branch of the held right-censored tasks, so a run without placeholders pays nothing
for them. A simulation ends at
``horizon_s``: tasks still queued or running then count as not completed; a task that finishes at
exactly ``horizon_s`` counts as completed.

Right-censored tasks (``TaskBatch.censored``: the trace ended while they ran, so ``run_s`` is only a
lower bound) never complete under the default rule ``censored="hold"``: once started, a censored
task holds its resources until the horizon. ``censored="complete"`` keeps the older rule (the task
runs its observed, lower-bound span and then counts as completed), for sensitivity analyses.

Mean utilisation (:attr:`EngineResult.mean_utilization`) is the exact time integral of the used
amount (a step function that changes only at event times) over ``[start_s, horizon_s]``, divided
by the window's length and the pool's total; the grid samples are for plotting.
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import simpy
from tqdm import tqdm

from fairsim.errors import FairsimError, PlacementError, TraceError
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex
from fairsim.simulator.jobs import JobGate
from fairsim.simulator.preemption import (
    EvictionLog,
    LoopRule,
    PreemptionReport,
    RunningIndex,
)
from fairsim.simulator.recording import (
    EvictingStreamingRecorder,
    StreamingRecorder,
    TaskRecorder,
    TaskTable,
)
from fairsim.simulator.replay import ReplayedRun, ReplayScheduler
from fairsim.simulator.scheduler import Eviction, Scheduler
from fairsim.simulator.snapshot import UserSnapshot
from fairsim.simulator.stream import ORDERS, StreamedTasks
from fairsim.simulator.workload import TaskBatch, TaskSource

SKIP_UNPLACEABLE = "fits no server of the pool"
#: A window this long or longer (seconds) shows its progress in hours of simulated time.
BAR_HOURS_FROM_S = 7200.0
#: Consecutive ticks of a periodic scheduler without any event or placement before giving up.
MAX_IDLE_TICKS = 100_000
#: Rules for right-censored tasks (see the module docstring).
CENSORED_RULES = ("hold", "complete")
#: Stale completions (of evicted runs) in the heap from which it is rebuilt without them, once
#: they are also more than half of it (:meth:`Engine._main_preempt`).
STALE_REBUILD = 1024


@dataclass
class EngineResult:
    """Everything a simulation produced, ready for :mod:`fairsim.simulator.results`.

    The engine's raw output (per-task arrays, user codes); the public per-scheduler result of
    ``fairsim.simulate`` is ``fairsim.RunResult``, whose tables are built from this one.

    Attributes
    ----------
    scheduler : str
    resources : tuple of str
    users : list of str
        User names; position = user code.
    tasks : dict of str to ndarray
        Per-task columns (length n_tasks, the tasks that arrived by the horizon; empty when the
        run streamed its tasks to a file, :attr:`streamed`): job_id,
        task_index, user (code), submit_s, start_s, finish_s (NaN unless it completed), server
        (row position in the pool, -1 if never started; its id is ``server_ids[server]``),
        run_s, demand (n_tasks, n_resources), unplaceable (bool: fits no
        server of the pool, or a DAG ancestor never can), censored (bool: right-censored in the
        trace); with a job gate also rep.
    utilization : ndarray, shape (n_samples, 1 + n_resources)
        Grid time in seconds, then used fraction of total capacity per resource (above 1 only
        for the replay of recorded placements, which may over-commit servers).
    mean_utilization : ndarray, shape (n_resources,)
        Time-average of the used fraction over ``[start_s, horizon_s]`` (exact integral of the
        step function; NaN for an empty window or a resource with no capacity).
    user_shares : ndarray or None, shape (n_samples, n_users, n_resources)
        Share of the pool's total capacity of every resource held by each user at each grid time
        (only if requested); the global dominant share is the maximum over resources.
    stranded : ndarray or None, shape (n_samples, n_resources)
        Stranded fraction of the pool's total capacity of every resource at each grid time
        (:meth:`Engine.stranded`; NaN where no task waits); only with ``record_stranded``.
    skipped : dict of str to int
        Tasks not simulated, by reason.
    horizon_s, wall_s : float
    extra : dict
        With a job gate: ``held`` (tasks still held at the end, by reason), ``dropped`` (tasks
        dropped because a DAG ancestor can never run) and ``jobs_admitted`` (bounded queue).
    censored_rule : str
        The rule for right-censored tasks (``"hold"`` or ``"complete"``).
    streamed : StreamedTasks or None
        With ``Engine(tasks_out=...)``: the written ``tasks.parquet`` and the per-user and
        per-job totals (:class:`fairsim.simulator.stream.StreamedTasks`); else None.
    server_ids : tuple of str or None
        The servers' ids by row position (:attr:`fairsim.simulator.cluster.ClusterState.ids`),
        written as ``tasks.parquet``'s ``server``; None for a result built by hand (then
        :func:`fairsim.simulator.cluster.default_server_ids`).
    overcommit : ndarray or None, shape (n_samples, 2 * n_resources)
        Only for the replay of recorded placements (:mod:`fairsim.simulator.replay`; None for
        every other scheduler), on the utilisation grid: per resource the number of
        over-committed servers (used amount above capacity by more than the resource's tolerance,
        :func:`~fairsim.simulator.cluster.capacity_tolerance`), then per resource the sum over
        servers of ``max(used - capacity, 0)`` as a fraction of the pool's total capacity
        (:meth:`fairsim.simulator.cluster.ClusterState.overcommit`).
    preemption : PreemptionReport or None
        Only for a scheduler that preempts (None for every other): its evictions, the work
        they lost, both over time, and preemption loops
        (:class:`fairsim.simulator.preemption.PreemptionReport`); its tasks then also have an
        ``evictions`` column (int32).
    """

    scheduler: str
    resources: tuple[str, ...]
    users: list[str]
    tasks: dict[str, np.ndarray]
    utilization: np.ndarray
    user_shares: np.ndarray | None
    skipped: dict[str, int]
    start_s: float
    horizon_s: float
    wall_s: float
    n_events: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    mean_utilization: np.ndarray | None = None
    censored_rule: str = "hold"
    streamed: StreamedTasks | None = None
    stranded: np.ndarray | None = None
    overcommit: np.ndarray | None = None
    server_ids: tuple[str, ...] | None = None
    preemption: PreemptionReport | None = None


class Engine:
    """Run one scheduler over one workload on one server pool.

    Parameters
    ----------
    cluster : ClusterState
        The server pool; the engine owns and mutates it.
    scheduler : Scheduler
        An unbound scheduler; the engine binds it to a read-only view of ``cluster``.
    source : TaskSource
        Tasks in submit order.
    start_s : float
        First utilisation grid point (simulation starts here), seconds.
    horizon_s : float
        End of the simulation, seconds. Use ``math.inf`` to run until every task is done.
    utilization_interval_s : float
        Spacing of the utilisation grid, seconds (> 0).
    record_user_shares : bool
        Also record every user's global dominant share on the grid (DRFH paper Fig. 4).
    record_stranded : bool
        Also record the stranded resources on the grid (:meth:`stranded`).
    progress : bool
        Show a tqdm progress bar (:meth:`progress_bar`): simulated time against the horizon
        (with an infinite horizon, tasks ended against the source's tasks), moved at every
        utilisation grid point, full when the simulation ends, then naming the last phase
        (writing ``tasks.parquet``) until :meth:`run` returns. Nothing is printed without it.
    progress_desc : str, optional
        The bar's label (default: the scheduler's name).
    on_sample : callable, optional
        Called as ``on_sample(time_s, cluster)`` at every grid point (invariant checks in tests).
    gate : JobGate, optional
        Complex-job rules (DAG parents, repetitions, bounded job queue) deciding when a submitted
        task reaches the scheduler (:mod:`fairsim.simulator.jobs`). None: every task on submission.
    constraints : ConstraintIndex, optional
        Placement constraints of the tasks' ``constraint`` column
        (:mod:`fairsim.simulator.constraints`);
        the engine rejects a placement that violates one. None: tasks run anywhere.
    censored : {"hold", "complete"}
        Rule for right-censored tasks: ``"hold"`` (default) — once started, the task holds its
        resources until the horizon and never completes (its run time is unknown);
        ``"complete"`` — it runs its observed span (a lower bound) and counts as completed.
    tasks_out : path-like, optional
        Stream ended tasks to this ``tasks.parquet`` in row groups while the run goes on
        (:class:`fairsim.simulator.recording.StreamingRecorder`, :mod:`fairsim.simulator.stream`):
        the engine then keeps a task only while it is live,
        and :attr:`EngineResult.tasks` is empty (:attr:`EngineResult.streamed` describes the
        file). None (default): every task is kept to the end, in :attr:`EngineResult.tasks`.
        Not with a job gate.
    tasks_order : {"end", "arrival"}
        With ``tasks_out``: the row order of the file, the order tasks ended (default) or
        arrival order, the in-memory path's bytes (:class:`fairsim.simulator.stream.TaskStream`).
    fairness_interval_s : float, optional
        Spacing, in seconds (> 0), of the grid of instants at which ``on_fairness`` is called
        (from ``start_s``, the horizon included; the state after every event at or before the
        instant, as for the utilisation grid). None (default): no per-user counters are kept.
    on_fairness : callable, optional
        ``on_fairness(time_s, snapshot)`` with a
        :class:`~fairsim.simulator.snapshot.UserSnapshot` of the active users; required with
        ``fairness_interval_s``. Works in memory and with ``tasks_out``.
    fairness_by_queue : bool
        With ``fairness_interval_s``: count per (user, queue) pair instead of per user, the
        leaves of a queue tree whose tasks carry their queue (:attr:`TaskBatch.queue
        <fairsim.simulator.workload.TaskBatch>`); the snapshot then has one row per active pair
        and their ``queues``. Default False: per user.
    preemption_loops : LoopRule, optional
        For a scheduler that preempts: when a task is in a preemption loop
        (:class:`fairsim.simulator.preemption.LoopRule`; default: 3 evictions within 600 s).
        Not used for any other scheduler.

    Raises
    ------
    ValueError
        For a non-positive ``utilization_interval_s`` or ``fairness_interval_s`` (or one of
        ``fairness_interval_s`` and ``on_fairness`` without the other), a horizon before
        ``start_s``, an unknown
        ``censored`` rule, ``tasks_out`` with a job gate, an unknown ``tasks_order``, or
        ``record_stranded`` with ``tasks_out`` or a job gate; from
        :meth:`run`, when a right-censored task starts under the rule
        ``"hold"`` with an infinite horizon (it would hold its server for ever), or for a
        scheduler that preempts with a job gate.
    PlacementError
        From :meth:`run`, for a placement or an eviction the engine cannot commit (naming the
        scheduler, the task and the server), and for a scheduler that preempts, when it evicts
        a task twice at one instant or a task more than
        :data:`~fairsim.simulator.preemption.MAX_TASK_EVICTIONS` times.
    """

    def __init__(
        self,
        cluster: ClusterState,
        scheduler: Scheduler,
        source: TaskSource,
        *,
        start_s: float = 0.0,
        horizon_s: float = math.inf,
        utilization_interval_s: float = 60.0,
        record_user_shares: bool = False,
        progress: bool = False,
        progress_desc: str | None = None,
        on_sample: Callable[[float, ClusterState], None] | None = None,
        gate: JobGate | None = None,
        constraints: ConstraintIndex | None = None,
        censored: str = "hold",
        tasks_out: str | os.PathLike[str] | None = None,
        tasks_order: str = "end",
        record_stranded: bool = False,
        fairness_interval_s: float | None = None,
        on_fairness: Callable[[float, UserSnapshot], None] | None = None,
        fairness_by_queue: bool = False,
        preemption_loops: LoopRule | None = None,
    ) -> None:
        if (fairness_interval_s is None) != (on_fairness is None):
            raise ValueError(
                "fairness_interval_s and on_fairness: give both or neither (got "
                f"fairness_interval_s={fairness_interval_s!r})"
            )
        if fairness_interval_s is not None and not fairness_interval_s > 0:
            raise ValueError(
                f"fairness_interval_s: {fairness_interval_s!r} (expected a number > 0)"
            )
        if record_stranded and (tasks_out is not None or gate is not None):
            raise ValueError(
                "record_stranded: stranded resources are not recorded with "
                f"{'tasks_out' if tasks_out is not None else 'a job gate'} (the waiting tasks "
                "are not known by id)"
            )
        if tasks_out is not None and gate is not None:
            raise ValueError(
                "tasks_out: streamed task results do not support a job gate (DAG parents, "
                "repetitions, a job queue: it looks tasks up by id after they end)"
            )
        if tasks_order not in ORDERS:
            raise ValueError(f"tasks_order: {tasks_order!r} (expected one of {', '.join(ORDERS)})")
        if censored not in CENSORED_RULES:
            raise ValueError(
                f"censored: {censored!r} (expected one of {', '.join(CENSORED_RULES)})"
            )
        if not utilization_interval_s > 0:
            raise ValueError(
                f"utilization_interval_s: {utilization_interval_s!r} (expected a number > 0)"
            )
        if not horizon_s >= start_s:
            raise ValueError(f"horizon_s: {horizon_s!r} is before start_s {start_s!r}")
        if source.resources != cluster.resources:
            raise ValueError(
                f"workload resources {list(source.resources)} differ from the cluster's "
                f"{list(cluster.resources)}"
            )
        self.cluster = cluster
        self.scheduler = scheduler
        self.source = source
        self.start_s = float(start_s)
        self.horizon_s = float(horizon_s)
        self.dt = float(utilization_interval_s)
        self.record_user_shares = record_user_shares
        self.record_stranded = record_stranded
        self.progress = progress
        self.progress_desc = progress_desc or getattr(scheduler, "name", "run")
        self.on_sample = on_sample
        self.gate = gate
        self.constraints = constraints
        self.censored = censored
        self.tasks_out = Path(tasks_out) if tasks_out is not None else None
        self.tasks_order = tasks_order
        self.fairness_interval_s = (
            float(fairness_interval_s) if fairness_interval_s is not None else None
        )
        self.on_fairness = on_fairness
        self.fairness_by_queue = fairness_by_queue and fairness_interval_s is not None
        self.preemption_loops = preemption_loops if preemption_loops is not None else LoopRule()

    # ------------------------------------------------------------------ public
    def run(self) -> EngineResult:
        """Simulate until the horizon (or until no event is left) and return the results."""
        t0 = time.perf_counter()
        self._user_codes: dict[str, int] = {}
        # the replay of recorded placements (and only it) over-commits; chosen once, here
        self._replay = isinstance(self.scheduler, ReplayScheduler)
        # a scheduler that preempts has an event loop of its own; chosen once, here
        self._preempt = bool(self.scheduler.preempts) and not self._replay
        if self._preempt and self.gate is not None:
            raise ValueError(
                f"scheduler {self.scheduler.name!r} preempts: no job gate (DAG parents, "
                "repetitions, a job queue) with it"
            )
        self._recorder = self._choose_recorder()
        self._over_samples: list[np.ndarray] | None = [] if self._replay else None
        self._between: dict[int, int] = {}  # replay: task -> last server, between two runs
        # replay: task -> the request its run holds, for a run that carries its own request
        self._held: dict[int, tuple[float, ...]] = {}
        self._running: dict[int, int] = {}  # task -> server, the tasks placed and not ended
        # preempting loop only: per server its running tasks, oldest run first; the run's
        # evictions; stale completions left in the heap by evicted runs
        self._by_server: list[dict[int, None]] | None = (
            [{} for _ in range(self.cluster.n_servers)] if self._preempt else None
        )
        self._evictions = (
            EvictionLog(self.scheduler.name, self.cluster.n_resources, self.preemption_loops)
            if self._preempt
            else None
        )
        self._n_stale = 0
        # the scheduler learns about tasks only through its view: the recorder answers the
        # view's task_job / task_mask questions (it is the view's TaskJobsAndConstraints), the
        # running index its task_server / running_on ones; nothing is set on the state
        view = self.cluster.view(
            tasks=self._recorder,
            constraints=self.constraints,
            running=RunningIndex(self._running, self._recorder.run_start, self._by_server),
        )
        if self.constraints is not None:
            self._caps_of_code: dict[int, list[tuple[float, ...]]] = {}
        self.scheduler.bind(view)
        self._user_alloc = np.zeros((64, self.cluster.n_resources))
        # fairness over time (only with fairness_interval_s): per user code, tasks present
        # (handed to the scheduler, not ended) and running, and the sums of their demands;
        # with placement constraints, present tasks per constraint code
        self._user_names: list[str] = []
        self._f_present: list[int] = []
        self._f_running: list[int] = []
        self._f_present_dem: list[list[float]] = []
        self._f_running_dem: list[list[float]] = []
        self._f_codes: list[dict[int, int]] | None = (
            [] if self.constraints is not None and self.fairness_interval_s is not None else None
        )
        # fairness per (user, queue) pair (fairness_by_queue): the counters above are indexed by
        # the pair's code instead of the user's; pair -> code, each code's user and queue, and
        # the live tasks' pair codes
        self._f_pairs: dict[tuple[int, int], int] = {}
        self._f_pair_user: list[int] = []
        self._f_pair_queue: list[int] = []
        self._f_unit: dict[int, int] | None = {} if self.fairness_by_queue else None
        self._next_fair = self.start_s if self.fairness_interval_s is not None else math.inf
        self._completions: list[tuple[float, int]] = []
        self._samples: list[np.ndarray] = []
        self._share_samples: list[tuple[np.ndarray, np.ndarray]] = []
        self._stranded_samples: list[np.ndarray] = []
        self._next_grid = self.start_s
        self._n_events = 0
        self._n_unplaceable = 0
        self._last_submit = -math.inf  # the last submit time pulled (_pull checks the order)
        self._used_integral = [0.0] * self.cluster.n_resources  # ∫ used_r dt from start_s
        self._bar = self.progress_bar()
        env = simpy.Environment(initial_time=self.start_s)
        env.process(
            self._main_replay(env)
            if self._replay
            else self._main_preempt(env)
            if self._preempt
            else self._main(env)
        )
        try:
            env.run()
            self._bar_done()
            dropped = self.gate.dropped_tasks if self.gate is not None else ()
            self._forget_placements()
            tasks, streamed = self._recorder.close(dropped)
        except BaseException as exc:
            self._recorder.abort()
            if isinstance(exc, Exception) and not isinstance(exc, FairsimError | AssertionError):
                # a bug, most often in a scheduler of one's own: the traceback stays (it shows
                # where), and says in which run and at which simulated time (an AssertionError,
                # of fairsim.testing's checks or a test, names its own context)
                exc.add_note(
                    f"fairsim: raised in the run of scheduler {self.scheduler.name!r} at "
                    f"simulated time {env.now!r} s"
                )
            raise
        finally:
            self._bar.close()
        wall = time.perf_counter() - t0
        return self._result(wall, tasks, streamed)

    def progress_bar(self) -> tqdm:
        """The run's progress bar (disabled without ``progress``: it then prints nothing).

        With a finite horizon, simulated time against the window ``[start_s, horizon_s]``, in
        seconds, or in hours for a window of 2 h or more (``"bf-drfh:  40%|███  | 7.9/19.5 h
        simulated [00:12<00:18]"``); with an infinite horizon, tasks ended against the source's
        tasks (:attr:`~fairsim.simulator.workload.TaskSource.n_hint`; a count without a total
        when it is unknown). The engine moves it at every utilisation grid point
        (:meth:`_bar_at`; nothing on the event loop's hot path), fills it when the simulation
        ends and then names the phase that follows (writing ``tasks.parquet``).

        Returns
        -------
        tqdm.tqdm
        """
        span = self.horizon_s - self.start_s
        common: dict[str, Any] = {
            "desc": self.progress_desc,
            "disable": not self.progress,
            "mininterval": 0.5,
            "leave": False,
        }
        if math.isfinite(span):
            hours = span >= BAR_HOURS_FROM_S
            unit, scale, fmt = ("h", 1 / 3600, ".1f") if hours else ("s", 1, ",.0f")
            self._bar_mode = "time"
            return tqdm(
                total=span,
                unit=unit,
                unit_scale=scale,
                bar_format=(
                    "{desc}: {percentage:3.0f}%|{bar}| "
                    f"{{n:{fmt}}}/{{total:{fmt}}} {unit} simulated "
                    "[{elapsed}<{remaining}{postfix}]"
                ),
                **common,
            )
        self._bar_mode = "tasks"
        return tqdm(total=self.source.n_hint, unit="task", postfix="tasks ended", **common)

    def _bar_at(self, t: float) -> None:
        """Move the progress bar to simulated time ``t`` (every event before ``t`` is done)."""
        bar = self._bar
        if bar.disable:
            return
        if self._bar_mode == "time":
            n = min(t, self.horizon_s) - self.start_s
        else:  # tasks ended: those arrived before t, less the live ones
            rec = self._recorder
            n = rec.b_lo + bisect.bisect_left(rec.b_submit, t) - len(rec.live)
        if n > bar.n:
            bar.update(n - bar.n)

    def _bar_done(self) -> None:
        """The simulation has ended: a full bar, then the phase that follows."""
        bar = self._bar
        if bar.disable:
            return
        if bar.total is not None and bar.n < bar.total:
            bar.update(bar.total - bar.n)
        if self.tasks_out is not None:
            bar.set_postfix_str("writing tasks.parquet", refresh=False)
        bar.refresh()

    def _choose_recorder(self) -> TaskRecorder:
        """The run's recording mode, chosen once: every task kept in memory, or ended tasks
        streamed to ``tasks_out`` (:mod:`fairsim.simulator.recording`)."""
        hold = self.censored == "hold"
        if self.tasks_out is not None:
            streaming = EvictingStreamingRecorder if self._preempt else StreamingRecorder
            return streaming(
                self.tasks_out,
                self.cluster.resources,
                self._user_codes,
                hold_censored=hold,
                order=self.tasks_order,
                constraints=self.constraints,
                servers=self.cluster.ids,
            )
        table = TaskTable(
            self.cluster.n_resources,
            hold_censored=hold,
            jobs=self.gate is not None,
            constraints=self.constraints,
            n_hint=self.source.n_hint,
            evictions=self._preempt,
        )
        if self.gate is not None:
            self.gate.bind(table)
        return table

    # ------------------------------------------------------------------ the process
    def _main(self, env: simpy.Environment) -> Generator[simpy.events.Event, None, None]:
        sched, cluster, rec = self.scheduler, self.cluster, self._recorder
        heap = self._completions
        horizon = self.horizon_s
        batches = self.source.batches()
        live = rec.live  # task -> its live record, from arrival until it ends
        start_s, finished, unplaceable = rec.start_s, rec.finished, rec.unplaceable
        until = rec.until  # placeholders not yet started -> their absolute end (else empty)
        # a censored task held to the horizon: its row written as it starts (streamed runs)
        write_held, held = rec.writes_held, rec.held
        running = self._running  # task -> server, for the tasks placed and not finished
        k_res = range(cluster.n_resources)
        track_users = self.record_user_shares
        fair = self.fairness_interval_s is not None
        track = track_users or fair
        f_present, f_running = self._f_present, self._f_running
        f_pdem, f_rdem, f_codes = self._f_present_dem, self._f_running_dem, self._f_codes
        units = self._f_unit  # task -> its (user, queue) pair's code, with fairness_by_queue
        gate = self.gate
        codes = rec.codes
        masks: list = self.constraints.masks if self.constraints is not None else []
        fits = self._fits_constraint

        def release(tasks: list[int]) -> None:
            """Hand tasks the gate released to the scheduler (drops cascade through the gate)."""
            i = 0
            while i < len(tasks):
                t = tasks[i]
                i += 1
                user, demand, _, _ = live[t]
                if sched.placeable(demand) and (codes is None or fits(codes[t], demand)):
                    if fair:
                        self._fair_present(t, self._fair_unit(t, user), demand)
                    sched.on_arrival(t, user, demand)
                else:
                    unplaceable(t, live.pop(t))
                    self._n_unplaceable += 1
                    tasks.extend(gate.drop(t))  # type: ignore[union-attr]

        lo = hi = 0  # pending arrivals are task ids lo..hi-1 of the recorder
        exhausted = False
        timed = type(sched).next_wakeup is not Scheduler.next_wakeup
        tick_events = timed and sched.tick_with_events
        idle = 0  # consecutive ticks with no arrival, completion or placement
        while True:
            if lo == hi and not exhausted:
                lo, hi, exhausted = self._pull(batches, lo, hi)
            t_arr = rec.b_submit[lo - rec.b_lo] if lo < hi else math.inf
            t_cmp = heap[0][0] if heap else math.inf
            now = t_arr if t_arr < t_cmp else t_cmp
            tick = False
            if timed:
                # a periodic scheduler (e.g. distributed PS-DSF) also acts at its own times
                t_tick = _next_wakeup(sched, env.now)
                if t_tick <= now and (sched.pending() or (tick_events and t_tick == now)):
                    idle = idle + 1 if now == math.inf else 0  # no event left at all
                    tick, now = True, t_tick
                    if idle > MAX_IDLE_TICKS:
                        raise _idle_ticks(sched)
            if now == math.inf or now > horizon:
                break
            if now > env.now:
                yield env.timeout(self._advance(now, env.now))
            self._n_events += 1
            # 1. completions at `now`
            while heap and heap[0][0] <= now:
                task = heapq.heappop(heap)[1]
                server = running.pop(task)
                record = live.pop(task)
                user, demand, _, _ = record
                cluster.release(server, demand)
                if track:
                    if track_users:
                        self._user_alloc[user] -= demand
                    if fair:  # inline: the event loop's hottest path (see _fair_end)
                        u = user if units is None else units.pop(task)
                        n_run = f_running[u] - 1
                        f_running[u] = n_run
                        n_pres = f_present[u] - 1
                        f_present[u] = n_pres
                        row = f_rdem[u]
                        if n_run:
                            for r in k_res:
                                row[r] -= demand[r]
                        else:  # exactly 0 with the last task: no rounding residue
                            for r in k_res:
                                row[r] = 0.0
                        row = f_pdem[u]
                        if n_pres:
                            for r in k_res:
                                row[r] -= demand[r]
                        else:
                            for r in k_res:
                                row[r] = 0.0
                        if f_codes is not None:
                            self._fair_forget(task, u)
                finished(task, now, server, record)
                sched.on_completion(task, user, demand, server)
                if gate is not None:
                    release(gate.finish(task))
            # 2. arrivals at `now` (the rest of this batch may hold later ones)
            b_lo, b_submit, b_live = rec.batch()
            while lo < hi and b_submit[lo - b_lo] <= now:
                record = b_live[lo - b_lo]
                if gate is not None:
                    live[lo] = record
                    release(gate.arrive(lo))
                else:
                    user, demand, _, _ = record
                    if sched.placeable(demand) and (codes is None or fits(codes[lo], demand)):
                        live[lo] = record
                        if fair:  # inline: self._fair_present(lo, user, demand)
                            u = user if units is None else self._fair_unit(lo, user)
                            f_present[u] += 1
                            row = f_pdem[u]
                            for r in k_res:
                                row[r] += demand[r]
                            if f_codes is not None:
                                per = f_codes[u]
                                c = codes[lo]  # type: ignore[index]
                                per[c] = per.get(c, 0) + 1
                        sched.on_arrival(lo, user, demand)
                    else:
                        unplaceable(lo, record)
                        self._n_unplaceable += 1
                lo += 1
                if lo == hi and not exhausted:
                    lo, hi, exhausted = self._pull(batches, lo, hi)
                    b_lo, b_submit, b_live = rec.batch()
            if tick:
                sched.on_tick(now)
            # 3. one scheduling pass; every placement is validated and committed here
            item: Any = _NO_ITEM
            try:
                for item in sched.decide():
                    task, server = item
                    if task.__class__ is not int or server.__class__ is not int:
                        _refuse_malformed(sched, item, None)  # numpy integers pass
                    idle = 0
                    known = live.get(task) if 0 <= task < lo else None
                    # (a live task that is not running never started: one check covers both)
                    if known is None or task in running:
                        raise PlacementError(
                            f"scheduler {sched.name!r} placed task {task}, which is not waiting"
                            + (
                                f" (it runs on server {running[task]}; a scheduler that evicts "
                                "tasks declares preempts = True)"
                                if task in running
                                else ""
                            )
                        )
                    user, demand, run_s, _ = known
                    if codes is not None and codes[task] and not masks[codes[task]][server]:
                        rule = self.constraints.rules[codes[task]]  # type: ignore[union-attr]
                        raise PlacementError(
                            f"scheduler {sched.name!r} placed task {task} on server {server}, "
                            f"which violates its placement constraint {rule!r}"
                        )
                    cluster.commit(task, server, demand)
                    running[task] = server
                    start_s[task] = now
                    if track:
                        if track_users:
                            self._user_alloc[user] += demand
                        if fair:
                            u = user if units is None else units[task]
                            f_running[u] += 1
                            row = f_rdem[u]
                            for r in k_res:
                                row[r] += demand[r]
                    if run_s >= 0.0:  # else HELD: a censored task held to the horizon
                        heapq.heappush(heap, (now + run_s, task))
                    elif task in until:  # a placeholder: it ends at its absolute end time
                        end = until.pop(task)
                        heapq.heappush(heap, (end if end > now else now, task))
                    elif horizon == math.inf:
                        raise ValueError(
                            f"task {task} is right-censored and holds its server until the "
                            "horizon, but the horizon is infinite: give a finite horizon "
                            "(collect.horizon_s or trace.end_s) or the rule censored='complete'"
                        )
                    elif write_held:  # its row is final now: only its server is kept (running)
                        held(task, server, live.pop(task))
            except (TypeError, ValueError, IndexError, KeyError) as exc:
                _refuse_malformed(sched, item, exc)
                raise
        self._close(env.now, lo, hi, batches, running)

    def _main_preempt(self, env: simpy.Environment) -> Generator[simpy.events.Event, None, None]:
        """The event loop of a scheduler that preempts (chosen once, when the run starts:
        :meth:`_main` serves every other scheduler and knows nothing of evictions).

        The same steps as :meth:`_main` at every event time (completions, arrivals, the tick,
        then one pass), with the pass's items either placements (:meth:`_start_run`) or
        :class:`~fairsim.simulator.scheduler.Eviction` records (:meth:`_evict`), each committed
        before the generator resumes. An evicted run leaves its completion in the heap; such a
        *stale* entry (the task no longer runs, or runs a later run) is dropped when it comes
        up, never acted on, and the heap is rebuilt without them when they outnumber half of it
        (memory stays bounded). Kept for every running task: its server's index
        (:meth:`fairsim.simulator.cluster.ClusterView.running_on`). No job gate.
        """
        sched, rec = self.scheduler, self._recorder
        log = self._evictions
        assert log is not None
        heap = self._completions
        horizon = self.horizon_s
        batches = self.source.batches()
        live = rec.live
        unplaceable = rec.unplaceable
        fair = self.fairness_interval_s is not None
        codes = rec.codes
        fits = self._fits_constraint
        lo = hi = 0
        exhausted = False
        timed = type(sched).next_wakeup is not Scheduler.next_wakeup
        idle = 0
        while True:
            if lo == hi and not exhausted:
                lo, hi, exhausted = self._pull(batches, lo, hi)
            while heap and not self._current(heap[0]):  # a stale completion: not an event
                heapq.heappop(heap)
                self._n_stale -= 1
            t_arr = rec.b_submit[lo - rec.b_lo] if lo < hi else math.inf
            t_cmp = heap[0][0] if heap else math.inf
            now = t_arr if t_arr < t_cmp else t_cmp
            tick = False
            if timed:
                t_tick = _next_wakeup(sched, env.now)
                if t_tick <= now and sched.pending():
                    idle = idle + 1 if now == math.inf else 0
                    tick, now = True, t_tick
                    if idle > MAX_IDLE_TICKS:
                        raise _idle_ticks(sched)
            if now == math.inf or now > horizon:
                break
            if now > env.now:
                yield env.timeout(self._advance(now, env.now))
            self._n_events += 1
            # 1. completions at `now` (stale entries of evicted runs are skipped)
            while heap and heap[0][0] <= now:
                entry = heapq.heappop(heap)
                if self._current(entry):
                    self._end_run(entry[1], now)
                else:
                    self._n_stale -= 1
            # 2. arrivals at `now`
            b_lo, b_submit, b_live = rec.batch()
            while lo < hi and b_submit[lo - b_lo] <= now:
                record = b_live[lo - b_lo]
                user, demand, _, _ = record
                if sched.placeable(demand) and (codes is None or fits(codes[lo], demand)):
                    live[lo] = record
                    if fair:
                        self._fair_present(lo, self._fair_unit(lo, user), demand)
                    sched.on_arrival(lo, user, demand)
                else:
                    unplaceable(lo, record)
                    self._n_unplaceable += 1
                lo += 1
                if lo == hi and not exhausted:
                    lo, hi, exhausted = self._pull(batches, lo, hi)
                    b_lo, b_submit, b_live = rec.batch()
            if tick:
                sched.on_tick(now)
            # 3. one scheduling pass: placements and evictions, each committed here
            item: Any = _NO_ITEM
            try:
                for item in sched.decide():
                    idle = 0
                    if isinstance(item, Eviction):
                        _refuse_malformed(sched, item, None)
                        self._evict(int(item.task), int(item.server), now)
                    else:
                        task, server = item
                        if task.__class__ is not int or server.__class__ is not int:
                            _refuse_malformed(sched, item, None)  # numpy integers pass
                        self._start_run(task, server, now, lo)
            except (TypeError, ValueError, IndexError, KeyError) as exc:
                _refuse_malformed(sched, item, exc)
                raise
            if self._n_stale > STALE_REBUILD and 2 * self._n_stale > len(heap):
                self._drop_stale()
        self._close(env.now, lo, hi, batches, self._running)

    def _current(self, entry: tuple[float, int]) -> bool:
        """Whether a completion ``(finish, task)`` of the heap ends the task's current run
        (preempting loop): the task runs, and its run started ``run_s`` before ``finish``
        (an evicted run's entry is stale)."""
        task = entry[1]
        if task not in self._running:
            return False
        rec = self._recorder
        run_s = rec.live[task][2]
        if run_s >= 0.0:
            return rec.run_start(task) + run_s == entry[0]
        end = rec.until.get(task)  # a placeholder's entry: its end, or its start if later
        return end is not None and max(end, rec.run_start(task)) == entry[0]

    def _drop_stale(self) -> None:
        """Rebuild the completion heap without its stale entries (preempting loop); a task
        placed, evicted and placed again in one instant has two equal entries: one is kept."""
        heap, seen = self._completions, set()
        kept = []
        for entry in heap:
            if entry[1] not in seen and self._current(entry):
                seen.add(entry[1])
                kept.append(entry)
        heap[:] = kept
        heapq.heapify(heap)
        self._n_stale = 0

    def _start_run(self, task: int, server: int, now: float, lo: int) -> None:
        """Validate and commit a placement of the preempting loop (as :meth:`_main` does)."""
        sched, running = self.scheduler, self._running
        known = self._recorder.live.get(task) if 0 <= task < lo else None
        if known is None or task in running:
            raise PlacementError(
                f"scheduler {sched.name!r} placed task {task}, which is not waiting"
            )
        user, demand, run_s, _ = known
        codes, index = self._recorder.codes, self.constraints
        if codes is not None and codes[task] and index is not None:
            mask = index.masks[codes[task]]
            if mask is not None and not mask[server]:
                raise PlacementError(
                    f"scheduler {sched.name!r} placed task {task} on server {server}, which "
                    f"violates its placement constraint {index.rules[codes[task]]!r}"
                )
        self.cluster.commit(task, server, demand)
        running[task] = server
        self._by_server[server][task] = None  # type: ignore[index]
        self._recorder.start_s[task] = now
        self._run_counts(task, user, demand, 1)
        if run_s >= 0.0:  # else HELD: a censored task held to the horizon, or a placeholder
            heapq.heappush(self._completions, (now + run_s, task))
        elif task in self._recorder.until:  # a placeholder: it ends at its absolute end time
            end = self._recorder.until[task]  # kept until it ends: a run after an eviction
            heapq.heappush(self._completions, (end if end > now else now, task))
        elif self.horizon_s == math.inf:
            raise ValueError(
                f"task {task} is right-censored and holds its server until the horizon, "
                "but the horizon is infinite: give a finite horizon (collect.horizon_s "
                "or trace.end_s) or the rule censored='complete'"
            )

    def _end_run(self, task: int, now: float) -> None:
        """A task of the preempting loop completed at ``now``."""
        server = self._running.pop(task)
        del self._by_server[server][task]  # type: ignore[index]
        record = self._recorder.live.pop(task)
        user, demand, _, _ = record
        self.cluster.release(server, demand)
        if self.record_user_shares:
            self._user_alloc[user] -= demand
        if self.fairness_interval_s is not None:
            u = user if self._f_unit is None else self._f_unit.pop(task)
            self._fair_end(task, u, demand, demand)
        self._recorder.finished(task, now, server, record)
        self._recorder.until.pop(task, None)  # a placeholder's end: no run of it is left
        self._evictions.forget(task)  # type: ignore[union-attr]
        self.scheduler.on_completion(task, user, demand, server)

    def _evict(self, task: int, server: int, now: float) -> None:
        """Validate and commit an :class:`~fairsim.simulator.scheduler.Eviction` at ``now``: end
        the run of ``task`` on ``server`` (its resources are free again, its work is lost), the
        task waits again with its full run time; then tell the scheduler.

        Raises
        ------
        PlacementError
            When ``task`` does not run on ``server`` (naming both, and where the task is), or
            the eviction log refuses it (:meth:`fairsim.simulator.preemption.EvictionLog.evict`).
        """
        sched, rec = self.scheduler, self._recorder
        at = self._running.get(task)
        if at != server:
            where = (
                f"it runs on server {at}"
                if at is not None
                else "it is waiting"
                if task in rec.live
                else "it is not a live task (never submitted, or ended)"
            )
            raise PlacementError(
                f"scheduler {sched.name!r} evicted task {task} from server {server}, but {where}"
            )
        user, demand, run_s, _ = rec.live[task]
        identity = self._task_identity
        self._evictions.evict(task, demand, rec.run_start(task), now, identity)  # type: ignore[union-attr]
        del self._running[task]
        del self._by_server[server][task]  # type: ignore[index]
        self.cluster.release(server, demand)
        rec.evicted(task)
        if run_s >= 0.0 or task in rec.until:  # its completion stays in the heap, stale
            self._n_stale += 1
        self._run_counts(task, user, demand, -1)
        sched.on_eviction(task, user, demand, server)

    def _task_identity(self, task: int) -> tuple[int, int]:
        """``(job_id, task_index)`` of a live task."""
        return self._recorder.task_job(task)[0], self._recorder.trace_task_index(task)

    def _run_counts(self, task: int, user: int, demand: tuple[float, ...], sign: int) -> None:
        """A run of ``task`` of ``user`` holding ``demand`` started (``sign`` 1) or was evicted
        (-1): the per-user shares and fairness-over-time counters (the task stays present; the
        counters of its (user, queue) pair with ``fairness_by_queue``, :meth:`_fair_unit`)."""
        if self.record_user_shares:
            self._user_alloc[user] += np.multiply(demand, sign)
        if self.fairness_interval_s is not None:
            u = user if self._f_unit is None else self._f_unit[task]
            n_run = self._f_running[u] + sign
            self._f_running[u] = n_run
            row = self._f_running_dem[u]
            for r, d in enumerate(demand):
                row[r] = row[r] + sign * d if n_run else 0.0

    def _forget_placements(self) -> None:
        """After the horizon: drop the per-task state of the event loop (running tasks and
        their servers, the completion heap, held and between-run placements), which the
        recorder's end has copied into its rows, so that its memory is free before the
        recorder closes (a streamed run's ``tasks.parquet`` is then written in arrival order,
        the run's last peak of memory). Also the recorder's last batch (the live records and
        submit times of the batch being read: Python values of up to a row group of the trace,
        none of them needed past the horizon)."""
        self._running.clear()
        rec = self._recorder
        rec.b_submit, rec.b_live = [], []
        if self._by_server is not None:
            for tasks in self._by_server:
                tasks.clear()
        self._completions.clear()
        self._held.clear()
        self._between.clear()

    def _advance(self, now: float, clock: float) -> float:
        """Take the samples due and add the pool's use to its integral from ``clock`` (the last
        event) up to ``now`` (a later one); returns the step ``now - clock``."""
        if now >= self._next_grid:
            self._sample_until(now)
        if now >= self._next_fair:
            self._fair_until(now)
        dt = now - clock
        used, integral = self.cluster.used, self._used_integral
        for r in range(len(integral)):
            integral[r] += used[r] * dt
        return dt

    def _close(
        self,
        now: float,
        lo: int,
        hi: int,
        batches: Iterator[TaskBatch],
        running: dict[int, int],
    ) -> None:
        """The horizon (or the last event, ``now``, with an infinite one): the last samples,
        the arrivals never reached, the recorder's end."""
        horizon, used, integral = self.horizon_s, self.cluster.used, self._used_integral
        end = self._end_s = horizon if horizon < math.inf else now
        for r in range(self.cluster.n_resources):
            integral[r] += used[r] * (end - now)
        self._sample_until(end, inclusive=True)
        self._fair_until(end, inclusive=True)
        # the arrivals never reached were submitted after the horizon
        n_late = hi - lo + self.source.count_rest(batches)
        if n_late:
            self.source.skipped["submitted after the horizon"] += n_late
        self._recorder.end(lo, running)

    def _main_replay(self, env: simpy.Environment) -> Generator[simpy.events.Event, None, None]:
        """The event loop of the replay of recorded placements (chosen once, when the run starts:
        :meth:`_main` serves every other scheduler and knows nothing of the replay).

        The same steps as :meth:`_main` (completions, arrivals, then one pass, at every event
        time), with the replay's own: the pass is
        :meth:`~fairsim.simulator.replay.ReplayScheduler.replay`, committed by
        :meth:`_replay_pass` (over-commitment allowed); a completion ``(end, ~task)`` is a run
        that does not end its task (:meth:`_run_ended`); the next recorded start
        (:meth:`~fairsim.simulator.scheduler.Scheduler.next_wakeup`) is an event time. The clock
        is kept here and the SimPy environment advanced once, to the end (the replay has no
        other process to wait for). No job gate; placement constraints are not checked.
        """
        sched, cluster, rec = self.scheduler, self.cluster, self._recorder
        assert isinstance(sched, ReplayScheduler)
        if self.gate is not None:
            raise ValueError(
                f"scheduler {sched.name!r} replays recorded placements: no job gate (DAG "
                "parents, repetitions, a job queue) with it"
            )
        heap = self._completions
        horizon = self.horizon_s
        batches = self.source.batches()
        live = rec.live
        finished = rec.finished
        running = self._running
        held_of = self._held
        track_users = self.record_user_shares
        fair = self.fairness_interval_s is not None
        clock = env.now
        lo = hi = 0
        exhausted = False
        while True:
            if lo == hi and not exhausted:
                lo, hi, exhausted = self._pull(batches, lo, hi)
            t_arr = rec.b_submit[lo - rec.b_lo] if lo < hi else math.inf
            t_cmp = heap[0][0] if heap else math.inf
            now = t_arr if t_arr < t_cmp else t_cmp
            t_run = sched.next_wakeup(clock)
            if t_run < now:
                now = t_run
            if now == math.inf or now > horizon:
                break
            if now > clock:
                self._advance(now, clock)
                clock = now
            self._n_events += 1
            # 1. ends of runs at `now`
            while heap and heap[0][0] <= now:
                task = heapq.heappop(heap)[1]
                if task < 0:  # a run that does not end its task (~task)
                    self._run_ended(~task)
                    continue
                server = running.pop(task)
                record = live.pop(task)
                user, demand, _, _ = record
                held = held_of.pop(task, None)
                if held is None:
                    held = demand
                cluster.release(server, held)
                if track_users:
                    self._user_alloc[user] -= held
                if fair:
                    u = user if self._f_unit is None else self._f_unit.pop(task)
                    self._fair_end(task, u, demand, held)
                finished(task, now, server, record)
                sched.on_completion(task, user, demand, server)
            # 2. arrivals at `now`
            b_lo, b_submit, b_live = rec.batch()
            while lo < hi and b_submit[lo - b_lo] <= now:
                record = b_live[lo - b_lo]
                user, demand, _, _ = record
                live[lo] = record
                if fair:
                    self._fair_present(lo, self._fair_unit(lo, user), demand)
                sched.on_arrival(lo, user, demand)
                lo += 1
                if lo == hi and not exhausted:
                    lo, hi, exhausted = self._pull(batches, lo, hi)
                    b_lo, b_submit, b_live = rec.batch()
            # 3. the recorded runs due now (each placement carries its run's end)
            runs = sched.replay(now)
            if runs:
                self._replay_pass(runs, now, lo)
        if clock > env.now:
            yield env.timeout(clock - env.now)
        # a task waiting between two runs is recorded with its last run's server
        self._close(env.now, lo, hi, batches, {**running, **self._between})

    def _fair_unit(self, task: int, user: int) -> int:
        """The index of the fairness counters of a task arriving now: its user's code, or with
        ``fairness_by_queue`` the code of its (user, queue) pair (numbered by first arrival;
        the pair's counters are created here), kept for the task until it ends."""
        if self._f_unit is None:
            return user
        queue = self._recorder.task_queue(task)
        pair = self._f_pairs.get((user, queue))
        if pair is None:
            pair = self._f_pairs[(user, queue)] = len(self._f_pair_user)
            self._f_pair_user.append(user)
            self._f_pair_queue.append(queue)
            self._fair_grow(1)
        self._f_unit[task] = pair
        return pair

    def _fair_grow(self, n_new: int) -> None:
        """Counters for ``n_new`` more users (or (user, queue) pairs)."""
        n_res = self.cluster.n_resources
        self._f_present.extend([0] * n_new)
        self._f_running.extend([0] * n_new)
        self._f_present_dem.extend([0.0] * n_res for _ in range(n_new))
        self._f_running_dem.extend([0.0] * n_res for _ in range(n_new))
        if self._f_codes is not None:
            self._f_codes.extend({} for _ in range(n_new))

    def _fair_present(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        """Fairness over time: count a task handed to the scheduler (the replay's arrivals and
        :meth:`_main`'s tasks released by a job gate; :meth:`_main`'s other arrivals do the same
        inline, on the hot path). ``user`` indexes the counters (:meth:`_fair_unit`)."""
        self._f_present[user] += 1
        row = self._f_present_dem[user]
        for r, d in enumerate(demand):
            row[r] += d
        if self._f_codes is not None:
            per = self._f_codes[user]
            c = self._recorder.codes[task]  # type: ignore[index]
            per[c] = per.get(c, 0) + 1

    def _fair_end(
        self, task: int, user: int, demand: tuple[float, ...], held: tuple[float, ...]
    ) -> None:
        """Fairness over time: a replayed task ended (its last run, which held ``held``; the
        task's own demand is ``demand``)."""
        f_running, f_present = self._f_running, self._f_present
        n_run = f_running[user] - 1
        f_running[user] = n_run
        n_pres = f_present[user] - 1
        f_present[user] = n_pres
        row = self._f_running_dem[user]
        for r, d in enumerate(held):
            row[r] = row[r] - d if n_run else 0.0
        row = self._f_present_dem[user]
        for r, d in enumerate(demand):
            row[r] = row[r] - d if n_pres else 0.0
        if self._f_codes is not None:
            self._fair_forget(task, user)

    def _replay_pass(self, runs: Sequence[ReplayedRun], now: float, lo: int) -> None:
        """Commit the recorded runs the :class:`~fairsim.simulator.replay.ReplayScheduler`
        starts at ``now`` (over-commitment allowed).

        A task's ``start_s`` is its first run's start. A run holds its own request on its server
        when it carries one (kept until the run ends), else the task's demand. A run that is not
        the task's last ends as ``(end, ~task)`` in the completion heap (:meth:`_run_ended`); the
        last one as ``(end, task)``, a completion; a right-censored last run under the rule
        ``"hold"`` holds its server until the horizon.

        Raises
        ------
        PlacementError
            For a task that is not waiting, or a server out of range.
        ValueError
            For a run ending before ``now``, a request with another number of resources than
            the cluster's, or a held run with an infinite horizon.
        """
        sched, cluster, rec = self.scheduler, self.cluster, self._recorder
        assert isinstance(sched, ReplayScheduler)
        live, running, between, heap = rec.live, self._running, self._between, self._completions
        start_s = rec.start_s
        hold = self.censored == "hold"
        fair = self.fairness_interval_s is not None
        held_of = self._held
        for task, server, end, last, censored, request in runs:
            known = live.get(task) if 0 <= task < lo else None
            if known is None or task in running:
                raise PlacementError(
                    f"scheduler {sched.name!r} placed task {task}, which is not waiting"
                )
            if not end >= now:
                raise ValueError(
                    f"scheduler {sched.name!r}: task {task}'s run ends at {end!r}, before its "
                    f"start {now!r}"
                )
            user, demand, _, _ = known
            if request is not None:
                if len(request) != len(demand):
                    raise ValueError(
                        f"scheduler {sched.name!r}: task {task}'s run requests {request!r}, "
                        f"expected {len(demand)} resources"
                    )
                demand = request
                held_of[task] = request
            cluster.commit_over(task, server, demand)
            running[task] = server
            if between.pop(task, None) is None:  # the task's first run
                start_s[task] = now
            if self.record_user_shares:
                self._user_alloc[user] += demand
            if fair:
                u = user if self._f_unit is None else self._f_unit[task]
                self._f_running[u] += 1
                row = self._f_running_dem[u]
                for r, d in enumerate(demand):
                    row[r] += d
            if not last:
                heapq.heappush(heap, (end, ~task))
            elif not (censored and hold):
                heapq.heappush(heap, (end, task))
            elif self.horizon_s == math.inf:
                raise ValueError(
                    f"task {task}'s last recorded run is right-censored and holds its server "
                    "until the horizon, but the horizon is infinite: give a finite horizon "
                    "(collect.horizon_s or trace.end_s) or the rule censored='complete'"
                )

    def _run_ended(self, task: int) -> None:
        """Replay: a run that is not the task's last ended now; the task releases its server and
        waits for its next run (:meth:`fairsim.simulator.replay.ReplayScheduler.on_run_end`)."""
        server = self._running.pop(task)
        user, demand, _, _ = self._recorder.live[task]
        held = self._held.pop(task, None)
        if held is None:
            held = demand
        self.cluster.release(server, held)
        self._between[task] = server
        if self.record_user_shares:
            self._user_alloc[user] -= held
        if self.fairness_interval_s is not None:
            u = user if self._f_unit is None else self._f_unit[task]
            n_run = self._f_running[u] - 1
            self._f_running[u] = n_run
            row = self._f_running_dem[u]
            for r, d in enumerate(held):
                row[r] = row[r] - d if n_run else 0.0
        self.scheduler.on_run_end(task, user, demand, server)  # type: ignore[attr-defined]

    def _fits_constraint(self, code: int, demand: tuple[float, ...]) -> bool:
        """Whether some server allowed by constraint ``code`` could ever hold ``demand`` (by its
        capacity, and by the scheduler's own measure, e.g. slots)."""
        if code == 0:
            return True
        if not self.scheduler.placeable_on(demand, self.constraints.masks[code]):  # type: ignore[union-attr, arg-type]
            return False
        caps = self._caps_of_code.get(code)
        if caps is None:
            mask = self.constraints.masks[code]  # type: ignore[union-attr]
            sub = np.unique(self.cluster.capacity[mask], axis=0)
            caps = self._caps_of_code[code] = [tuple(float(x) for x in row) for row in sub]
        return any(all(d <= c for d, c in zip(demand, cap, strict=True)) for cap in caps)

    def _pull(self, batches: Iterator[TaskBatch], lo: int, hi: int) -> tuple[int, int, bool]:
        """Append the next batch to the table: ``(lo, hi, exhausted)`` of the pending arrivals."""
        batch = next(batches, None)
        if batch is None:
            return lo, hi, True
        self._check_order(batch)
        lo, hi = self._recorder.append(batch, self._codes(batch.user))
        return lo, hi, False

    def _check_order(self, batch: TaskBatch) -> None:
        """Refuse a batch whose submit times go back (the tasks after a later one would arrive
        late, at its time): non-decreasing in the batch and from the last batch.

        Raises
        ------
        TraceError
            Naming the first task out of order, its submit time and the one before it.
        """
        s = batch.submit_s
        if not len(s):
            return
        back = ~(s[1:] >= s[:-1])  # NaN counts as out of order
        if s[0] >= self._last_submit and not back.any():
            self._last_submit = float(s[-1])
            return
        i = 0 if not s[0] >= self._last_submit else int(np.argmax(back)) + 1
        before = self._last_submit if i == 0 else float(s[i - 1])
        when = (
            "has no submit time (NaN)"
            if np.isnan(s[i])
            else f"is submitted at {float(s[i])!r} s, after a task submitted at {before!r} s"
        )
        raise TraceError(
            f"submit_s: task {int(batch.job_id[i])}/{int(batch.task_index[i])} (job/index) "
            f"{when}: tasks must come in non-decreasing submit_s (a canonical tasks.parquet is "
            "sorted by submit_s, job_id, task_index)"
        )

    def _codes(self, names: np.ndarray) -> np.ndarray:
        codes = self._user_codes
        out = np.empty(len(names), dtype=np.int32)
        new = len(codes)
        for i, name in enumerate(names.tolist()):
            c = codes.get(name)
            if c is None:
                c = codes[name] = len(codes)
            out[i] = c
        if len(codes) > new:
            self._user_names.extend(list(codes)[new:])
            if self.fairness_interval_s is not None and self._f_unit is None:
                self._fair_grow(len(codes) - new)
        if len(codes) > self._user_alloc.shape[0]:
            grow = np.zeros(
                (len(codes) + 64 - self._user_alloc.shape[0], self._user_alloc.shape[1])
            )
            self._user_alloc = np.vstack([self._user_alloc, grow])
        return out

    def _sample_until(self, t: float, inclusive: bool = False) -> None:
        """Record the current state at every grid point before ``t`` (or up to ``t``)."""
        g = self._next_grid
        if g > t or (g == t and not inclusive):
            return
        cluster = self.cluster
        util = cluster.used_total / cluster.total
        n = math.floor((t - g) / self.dt) + 1
        times = g + self.dt * np.arange(n)
        times = times[times <= t] if inclusive else times[times < t]
        if times.size == 0:
            return
        block = np.empty((times.size, 1 + util.size))
        block[:, 0] = times
        block[:, 1:] = util
        self._samples.append(block)
        if self.record_user_shares:
            n_users = len(self._user_codes)
            shares = self._user_alloc[:n_users] / cluster.total  # (n_users, n_resources)
            self._share_samples.append((times, shares.copy()))
        if self.record_stranded:
            self._stranded_samples.append(np.broadcast_to(self.stranded(), (times.size, util.size)))
        if self._evictions is not None:
            self._evictions.sample(times)
        if self._over_samples is not None:
            counts, amount = cluster.overcommit()
            row = np.concatenate([counts.astype(np.float64), amount])
            self._over_samples.append(np.broadcast_to(row, (times.size, row.size)))
        if self.on_sample is not None:
            for ti in times:
                self.on_sample(float(ti), cluster)
        self._next_grid = float(times[-1]) + self.dt
        self._bar_at(float(times[-1]))

    def _fair_forget(self, task: int, user: int) -> None:
        """An ended task leaves its user's count of present tasks per constraint code (fairness
        over time with placement constraints; the event loop updates the other counters)."""
        c = self._recorder.codes[task]  # type: ignore[index]
        per = self._f_codes[user]  # type: ignore[index]
        if per[c] == 1:
            del per[c]
        else:
            per[c] -= 1

    def _fair_until(self, t: float, inclusive: bool = False) -> None:
        """Call ``on_fairness`` at every fairness instant before ``t`` (or up to ``t``)."""
        g = self._next_fair
        if g > t or (g == t and not inclusive):
            return
        dt = self.fairness_interval_s
        assert dt is not None
        assert self.on_fairness is not None
        n = math.floor((t - g) / dt) + 1
        times = g + dt * np.arange(n)
        times = times[times <= t] if inclusive else times[times < t]
        if times.size == 0:
            return
        snap = self.user_snapshot(float(times[0]))
        for ti in times.tolist():
            self.on_fairness(ti, snap if ti == snap.time_s else replace(snap, time_s=ti))
        self._next_fair = float(times[-1]) + dt

    def user_snapshot(self, time_s: float) -> UserSnapshot:
        """The active users now (:class:`~fairsim.simulator.snapshot.UserSnapshot`); only with
        ``fairness_interval_s``.

        Cost: the users once (lists to numpy), and with placement constraints one union of
        server masks per active user and constraint of its present tasks.
        """
        n_res = self.cluster.n_resources
        present = np.asarray(self._f_present, dtype=np.int64)
        users = np.flatnonzero(present > 0)
        running = np.asarray(self._f_running, dtype=np.int64)[users]
        pick = users.tolist()
        pdem, rdem = self._f_present_dem, self._f_running_dem
        demand = np.array([pdem[u] for u in pick], dtype=np.float64).reshape(-1, n_res)
        alloc = np.array([rdem[u] for u in pick], dtype=np.float64).reshape(-1, n_res)
        eligible = None
        if self._f_codes is not None:
            masks = self.constraints.masks  # type: ignore[union-attr]
            eligible = np.zeros((len(pick), self.cluster.n_servers), dtype=bool)
            for i, u in enumerate(pick):
                for c in self._f_codes[u]:
                    if c == 0 or masks[c] is None:
                        eligible[i] = True
                        break
                    eligible[i] |= masks[c]
        names = self._user_names
        queues = None
        if self._f_unit is not None:  # the counters are (user, queue) pairs'
            owner = np.asarray(self._f_pair_user, dtype=np.int64)[users]
            queues = np.asarray(self._f_pair_queue, dtype=np.int64)[users]
            users = owner
            pick = owner.tolist()
        return UserSnapshot(
            time_s=time_s,
            users=users.astype(np.int64),
            names=tuple(names[u] for u in pick),
            tasks_running=running,
            tasks_waiting=present[present > 0] - running,
            demand=np.maximum(demand, 0.0),
            allocation=np.maximum(alloc, 0.0),
            eligible=eligible,
            queues=queues,
        )

    def stranded(self) -> np.ndarray:
        """Stranded resources now: the free capacity of the servers on which no waiting user's
        head task fits, summed per resource, as a fraction of the pool's total capacity.

        A user's *head* task is its oldest waiting task (arrived, not started); it *fits* a
        server when its demand is at most the server's free amount in every resource
        (within :func:`~fairsim.simulator.cluster.capacity_tolerance`) and, with placement
        constraints, the server is allowed. Fit is by free capacity, not by a scheduler's own
        measure (slots).
        Cost: the live tasks once (numpy), then servers x distinct head demands.

        Returns
        -------
        ndarray, shape (n_resources,)
            NaN where no task waits.
        """
        cluster, rec = self.cluster, self._recorder
        assert isinstance(rec, TaskTable)
        nan = np.full(cluster.n_resources, np.nan)
        live = rec.live
        if len(live) <= len(self._running):
            return nan  # every live task runs: none waits
        ids = np.fromiter(live, dtype=np.int64, count=len(live))
        start = np.frombuffer(rec._start, dtype=np.float64)
        waiting = ids[np.isnan(start[ids])]
        if waiting.size == 0:
            return nan
        none = np.iinfo(np.int64).max
        oldest = np.full(len(self._user_codes), none, dtype=np.int64)
        np.minimum.at(oldest, rec.user[waiting], waiting)  # no sort: O(waiting)
        heads = oldest[oldest != none]  # each waiting user's oldest waiting task
        need = rec.demand[heads]  # (n_heads, n_resources)
        if rec.constraints is not None:
            code = np.frombuffer(rec._codes, dtype=np.intc)[heads]
            need, code = _distinct(np.column_stack([need, code]))
        else:
            need, code = np.unique(need, axis=0), None
        free = cluster.free
        tol = cluster.tolerance
        fit: np.ndarray = np.all(need[None, :, :] <= free[:, None, :] + tol, axis=2)
        if code is not None:  # (n_servers, n_distinct): only on the servers allowed
            masks = self.constraints.masks  # type: ignore[union-attr]
            for j, c in enumerate(code.tolist()):
                if c:
                    fit[:, j] &= masks[c]
        stranded = ~fit.any(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return free[stranded].sum(axis=0) / cluster.total

    def _result(
        self, wall: float, tasks: dict[str, np.ndarray], streamed: StreamedTasks | None
    ) -> EngineResult:
        util = (
            np.vstack(self._samples)
            if self._samples
            else np.empty((0, 1 + self.cluster.n_resources))
        )
        shares = None
        if self.record_user_shares:
            n_users, n_res = len(self._user_codes), self.cluster.n_resources
            rows = []
            for times, s in self._share_samples:
                full = np.zeros((n_users, n_res))
                full[: s.shape[0]] = s
                rows.append(np.broadcast_to(full, (len(times), n_users, n_res)))
            shares = np.concatenate(rows) if rows else np.zeros((0, n_users, n_res))
        skipped = dict(self.source.skipped)
        if self._n_unplaceable:
            skipped[SKIP_UNPLACEABLE] = self._n_unplaceable
        horizon = self._end_s  # the horizon, or the last event time when it is infinite
        span = horizon - self.start_s
        total = self.cluster.total
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_util = np.where(
                (total > 0) & (span > 0),
                np.asarray(self._used_integral) / (span * total),
                np.nan,
            )
        return EngineResult(
            scheduler=self.scheduler.name,
            resources=self.cluster.resources,
            users=list(self._user_codes),
            tasks=tasks,
            utilization=util,
            user_shares=shares,
            skipped=skipped,
            start_s=self.start_s,
            horizon_s=horizon,
            wall_s=wall,
            n_events=self._n_events,
            extra=self._gate_report(),
            mean_utilization=mean_util,
            censored_rule=self.censored,
            streamed=streamed,
            server_ids=self.cluster.ids,
            stranded=(
                (
                    np.vstack(self._stranded_samples)
                    if self._stranded_samples
                    else np.empty((0, self.cluster.n_resources))
                )
                if self.record_stranded
                else None
            ),
            overcommit=(
                (
                    np.vstack(self._over_samples)
                    if self._over_samples
                    else np.empty((0, 2 * self.cluster.n_resources))
                )
                if self._over_samples is not None
                else None
            ),
            preemption=(
                self._evictions.report(self._used_integral) if self._evictions is not None else None
            ),
        )

    def _gate_report(self) -> dict[str, Any]:
        gate = self.gate
        if gate is None:
            return {}
        out: dict[str, Any] = {"held": gate.held(), "dropped": dict(gate.dropped)}
        if gate.queue_jobs is not None:
            out["jobs_admitted"] = gate.jobs_admitted
            out["max_jobs_waiting"] = gate.max_queue_wait
        return out


#: What the scheduling pass's last item is before the scheduler yields one.
_NO_ITEM = object()


def _not_a_placement(item: Any) -> str | None:
    """Why ``item``, yielded by a scheduler's ``decide()``, is not a placement ``(task, server)``
    or an :class:`~fairsim.simulator.scheduler.Eviction` of two integers (Python or numpy
    integers, not booleans); None when it is one, or when the scheduler has yielded nothing yet."""
    if item is _NO_ITEM:
        return None
    try:
        task, server = item
    except (TypeError, ValueError):
        return "expected a pair (task, server)"
    for what, value in (("task", task), ("server", server)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return f"the {what} is a {type(value).__name__}, expected an integer"
    return None


def _next_wakeup(sched: Scheduler, now: float) -> float:
    """``sched.next_wakeup(now)``, checked: a time after ``now``.

    Raises
    ------
    PlacementError
        For anything else (None, text, NaN, ``now`` or earlier), naming the scheduler and the
        value.
    """
    t_tick = sched.next_wakeup(now)
    try:
        later = t_tick > now
    except TypeError:  # None, a string: not a time
        later = False
    if not later:
        raise PlacementError(
            f"scheduler {sched.name!r}: next_wakeup({now!r}) returned {t_tick!r}, expected a "
            "time after it (inf when no pass can help)"
        )
    return t_tick


def _idle_ticks(sched: Scheduler) -> PlacementError:
    """The error of an event loop that ticked :data:`MAX_IDLE_TICKS` times in a row with no
    arrival, completion or placement."""
    return PlacementError(
        f"scheduler {sched.name!r}: {MAX_IDLE_TICKS} ticks in a row placed "
        "nothing (next_wakeup should return inf when no pass can help)"
    )


def _refuse_malformed(sched: Scheduler, item: object, exc: BaseException | None) -> None:
    """Raise a :class:`~fairsim.errors.PlacementError` naming the scheduler and ``item`` when
    ``item`` is not a placement (:func:`_not_a_placement`); return otherwise. The event loops
    call it before committing an eviction or a placement whose task or server is not a Python
    int (a boolean server indexes numpy as a mask: on one server it would pass), and when their
    scheduling pass raised ``exc`` (an item that is not a pair fails to unpack): a malformed
    item then explains the error, a well-formed one leaves the error as it was."""
    why = _not_a_placement(item)
    if why is not None:
        raise PlacementError(f"scheduler {sched.name!r} yielded {item!r}: {why}") from exc


def _distinct(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(demand..., constraint code)`` rows: the demands and the codes (int)."""
    rows = np.unique(rows, axis=0)
    return rows[:, :-1], rows[:, -1].astype(np.int64)
