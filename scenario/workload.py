"""The workload of a scenario: the config's ``trace`` section as a re-openable task stream.

:func:`resolve_workload` turns a trace (converted once, :mod:`fairsim.scenario.trace_cache`),
a synthetic or an inline workload into a :class:`Workload`: how to open a fresh
:class:`~fairsim.simulator.workload.TaskSource` per scheduler run, its window, its resources and
the job gate of complex jobs (DAG parents, repetitions, a bounded job queue:
:mod:`fairsim.simulator.jobs`). :func:`constrained_workload` adds the placement constraints on a
drawn pool, :func:`user_weights` maps the config's weights to the engine's user codes and
:func:`recorded_runs` maps the trace's recorded placements to the pool's servers (for the
scheduler ``recorded``).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    RESOURCES,
    TIER_BANDS,
    AlibabaTrace,
    CanonicalTrace,
    ConstraintModel,
    GoogleTrace,
    InlineTrace,
    RunConfig,
    SyntheticTrace,
    TraceConfig,
    component_rng,
    value_range,
)
from fairsim.scenario.trace_cache import (
    converted_alibaba,
    converted_google,
    resolve_path,
    synthetic_complex,
)
from fairsim.simulator.constraints import ConstraintIndex, ConstraintModelSource, machine_classes
from fairsim.simulator.jobs import JobGate, JobsTaskSource
from fairsim.simulator.replay import RecordedRuns
from fairsim.simulator.replicas import ReplicaTaskSource
from fairsim.simulator.workload import FrameTaskSource, ParquetTaskSource, TaskSource
from fairsim.traces.io import iter_task_batches, read_placements

log = logging.getLogger(__name__)


@dataclass
class Workload:
    """A resolved workload: how to open a fresh task stream, and its window.

    Attributes
    ----------
    open : callable
        ``open()`` returns a fresh :class:`~fairsim.simulator.workload.TaskSource` (one per
        scheduler run).
    start_s, end_s : float
        The simulated window, seconds.
    describe : dict
        What the workload is (for reports).
    resources : tuple of str
    folder : Path or None
        The converted trace (its ``servers.parquet`` serves cluster source ``trace``).
    gate : callable
        ``gate()`` returns a fresh job gate per scheduler run, or None.
    last_submit_s : float or None
        The last submit time inside the window.
    first_submit_s : float or None
        The first submit time inside the window (None: not read ahead).
    users : tuple of str or None
        User names in the order the engine numbers them (first submission), when the workload
        knows it without reading the stream (a feedback source such as
        :class:`~fairsim.simulator.backlog.BacklogTaskSource` cannot be read ahead).
    aliases : dict of str to str or None
        Names under which a user's tasks also appear in the stream, each to that user's name in
        the trace (a split user's other accounts, :mod:`fairsim.scenario.manipulation`): the
        config's per-user settings (``trace.weights``, ``leaves.users``) read an alias as its
        user, so the accounts share its weight and its queue.
    """

    open: Callable[[], TaskSource]
    start_s: float
    end_s: float
    describe: dict[str, Any]
    resources: tuple[str, ...] = RESOURCES
    folder: Path | None = None
    gate: Callable[[], JobGate | None] = lambda: None
    last_submit_s: float | None = None
    first_submit_s: float | None = None
    users: tuple[str, ...] | None = None
    aliases: dict[str, str] | None = None


def inline_frame(trace: InlineTrace) -> pd.DataFrame:
    """Tasks of an ``inline`` workload: each user submits identical tasks at its join time.

    Raises
    ------
    ConfigError
        For a user with ``eligible`` or ``windows`` (read only by ``fairsim experiment psdsf``),
        naming the key and its value, or a demand of the wrong length.
    """
    rows = []
    for j, u in enumerate(trace.users):
        if u.eligible is not None:
            raise ConfigError(
                f"trace.users.{j}.eligible: {u.eligible!r}: an inline user's placement "
                "constraint is read only by 'fairsim experiment psdsf', not 'fairsim run'"
            )
        if u.windows is not None:
            raise ConfigError(
                f"trace.users.{j}.windows: {u.windows!r}: an inline user's backlog windows are "
                "read only by 'fairsim experiment psdsf', not 'fairsim run'"
            )
        assert u.tasks is not None  # (validated)
        assert not isinstance(u.run_s, list)
        if len(u.demand) != len(RESOURCES):
            raise ConfigError(
                f"trace.users.{j}.demand: {u.demand} has {len(u.demand)} entries, expected "
                f"{len(RESOURCES)} ({', '.join(RESOURCES)})"
            )
        rows.append(
            pd.DataFrame(
                {
                    "job_id": j,
                    "task_index": np.arange(u.tasks, dtype=np.int32),
                    "user": u.name,
                    "submit_s": u.join_s,
                    "cpu": u.demand[0],
                    "mem": u.demand[1],
                    "run_s": u.run_s,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def resolve_workload(cfg: RunConfig, base: Path | None = None, progress: bool = False) -> Workload:
    """Turn the config's ``trace`` section into a re-openable task stream."""
    trace = cfg.trace
    start = trace.start_s
    end = trace.end_s if trace.end_s is not None else math.inf
    if isinstance(trace, GoogleTrace | AlibabaTrace | CanonicalTrace):
        if isinstance(trace, GoogleTrace):
            folder = converted_google(trace, base, progress)
        elif isinstance(trace, AlibabaTrace):
            folder = converted_alibaba(trace, base)
        else:
            folder = resolve_path(trace.path, base)
        tasks = folder / "tasks.parquet" if folder.is_dir() else folder
        if not tasks.is_file():
            raise ConfigError(f"trace.path: no tasks.parquet in {str(folder)!r}")
        conv = tasks.parent / "conversion.json"
        info: dict[str, Any] = {"tasks_parquet": str(tasks)}
        if conv.is_file():
            try:
                report = json.loads(conv.read_text(encoding="utf-8"))
                window = report.get("window_s")
                if trace.end_s is None and window:
                    end = float(window[1])
                if window and float(window[0]) > start:
                    start = float(window[0])  # the simulation starts where the trace's data does
            except (ValueError, TypeError, AttributeError, IndexError):
                raise ConfigError(
                    f"trace.path: {str(conv)!r} is not a conversion report (fairsim trace convert)"
                ) from None
            info["conversion"] = report

        resources = tuple(ParquetTaskSource(tasks).resources)  # checks the file and its columns
        file = pq.ParquetFile(tasks)
        names = file.schema_arrow.names
        submit = (
            b.column(0).to_numpy(zero_copy_only=False)
            for b in iter_task_batches(tasks, ["submit_s"])
        )
        first, last = _check_window(submit, trace, start, end)
        expand = "instances" in names and _column_max(tasks, "instances") > 1
        dag = trace.dag and _has_values(tasks, "parents")
        cons = trace.constraints == "trace" and _has_values(tasks, "constraint")
        info["instances"] = expand
        info["dag"] = dag
        info["constraints"] = cons

        tiers = cfg.leaves is not None and cfg.leaves.by == "tier"

        def open_parquet() -> TaskSource:
            kw = {
                "start_s": start,
                "end_s": end,
                "job_columns": dag,
                "constraint_column": cons,
                **({"priority_column": True} if tiers else {}),
            }
            if expand:
                return ReplicaTaskSource(tasks, **kw)  # type: ignore[arg-type]
            return ParquetTaskSource(tasks, **kw)  # type: ignore[arg-type]

        work = Workload(open_parquet, start, end, info, resources, tasks.parent)
        work.first_submit_s, work.last_submit_s = first, last
        return _with_jobs(cfg, work, dag)
    if isinstance(trace, SyntheticTrace) and trace.model == "complex":
        # written once to the cache, then streamed like a converted trace
        common = trace.model_dump(include=set(CanonicalTrace.model_fields))
        written = str(synthetic_complex(cfg, base).resolve())
        canonical = CanonicalTrace.model_validate(
            {**common, "format": "canonical", "path": written}
        )
        return resolve_workload(cfg.model_copy(update={"trace": canonical}), base, progress)
    if isinstance(trace, SyntheticTrace):
        from fairsim.traces.synth import synth_google_like

        rng_seed = int(component_rng(cfg.seed, "workload").integers(2**31))
        frame = synth_google_like(trace.n_tasks, seed=rng_seed, duration_s=trace.duration_s)
        if trace.end_s is None:
            end = float(frame["submit_s"].max()) + 1.0
    else:
        frame = inline_frame(trace)
    first, last = _check_window([frame["submit_s"].to_numpy()], trace, start, end)

    def open_frame() -> TaskSource:
        return FrameTaskSource(frame, resources=RESOURCES, start_s=start, end_s=end)

    dag = trace.dag and "parents" in frame and bool(frame["parents"].notna().any())
    work = Workload(open_frame, start, end, {"tasks": len(frame)})
    work.first_submit_s, work.last_submit_s = first, last
    return _with_jobs(cfg, work, dag)


def _check_window(
    submit_s: Iterable[np.ndarray], trace: TraceConfig, start: float, end: float
) -> tuple[float, float]:
    """Refuse a window in which no task is submitted (the run would have nothing to simulate).

    ``submit_s``: the trace's submit times in pieces (a tasks table's row groups: the whole
    column of a 25-million-task trace is 200 MB, and its masks and copies more).

    Returns
    -------
    (float, float)
        The first and the last submit time inside the window.

    Raises
    ------
    ConfigError
        Naming ``trace.start_s`` / ``trace.end_s`` and the span of the trace's submit times.
    """
    n, first, last, lo, hi = 0, np.inf, None, np.inf, -np.inf
    for piece in submit_s:
        if not len(piece):
            continue
        n += len(piece)
        inside = piece[(piece >= start) & (piece < end)]
        if len(inside):
            top = inside.max()
            last = top if last is None else max(last, top)
            first = min(first, inside.min())
        lo, hi = np.minimum(lo, piece.min()), np.maximum(hi, piece.max())  # NaN as one array's
    if last is not None:
        return float(first), float(last)
    span = (
        f"its {n} tasks are submitted from {float(lo):g} s to {float(hi):g} s"
        if n
        else "it has no tasks"
    )
    raise ConfigError(
        f"trace.start_s/end_s: no task of the trace is submitted in the window "
        f"[{start:g} s, {end:g} s) ({span})"
    )


def user_weights(
    cfg: RunConfig,
    open_source: Callable[[], TaskSource],
    users: tuple[str, ...] | None = None,
    aliases: dict[str, str] | None = None,
) -> dict[int, float] | None:
    """Each user's weight, keyed by the engine's user code (users are numbered by first
    appearance in the task stream, as :class:`fairsim.simulator.engine.Engine` numbers them).

    Weights come from ``trace.users[].weight`` (inline users) and ``trace.weights`` (a mapping
    from user name to weight); every other user has ``trace.default_weight``. ``users`` gives the
    user names in code order when the workload knows it (:attr:`Workload.users`); otherwise the
    order is read from a fresh stream of ``open_source``. ``aliases`` (:attr:`Workload.aliases`):
    an alias has the weight of the user it stands for.

    Returns
    -------
    dict of int to float, or None
        None when every user has weight 1.

    Raises
    ------
    ConfigError
        If ``trace.weights`` names a user that submits no task in the simulated window.
    """
    trace = cfg.trace
    inline = trace.users if isinstance(trace, InlineTrace) else []
    named = {u.name: u.weight for u in inline if u.weight != 1.0}
    named.update(trace.weights or {})
    if not named and trace.default_weight == 1.0:
        return None
    order: dict[str, int] = {}
    if users is not None:
        order = {name: code for code, name in enumerate(users)}
    else:
        for batch in open_source().batches():
            for name in pd.unique(batch.user):
                order.setdefault(str(name), len(order))
    unknown = sorted(set(trace.weights or {}) - set(order))
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ConfigError(
            f"trace.weights: user(s) {shown} submit no task in the simulated window "
            f"({len(order)} users do)"
        )
    owner = aliases or {}
    return {
        code: float(named.get(owner.get(name, name), trace.default_weight))
        for name, code in order.items()
    }


def _has_values(tasks: Path, column: str) -> bool:
    """Whether ``column`` of the tasks table holds a non-null value (read a row group at a time)."""
    if column not in pq.read_schema(tasks).names:
        return False
    return any(b.column(0).null_count < b.num_rows for b in iter_task_batches(tasks, [column]))


def _column_max(tasks: Path, column: str) -> int:
    """The largest value of ``column`` of the tasks table, 0 if all null (a row group at a time)."""
    batches = iter_task_batches(tasks, [column])
    tops = [v for b in batches if (v := pc.max(b.column(0)).as_py()) is not None]
    return int(max(tops)) if tops else 0


def _with_jobs(cfg: RunConfig, workload: Workload, dag: bool) -> Workload:
    """Add the complex-job rules of the config (``simulator/jobs.py``) to a workload."""
    trace = cfg.trace
    if not (dag or trace.complex_jobs):
        return workload
    if not trace.complex_jobs:
        workload.gate = lambda: JobGate(dag=True)
        return workload
    # one pass over the stream: the simulated tasks (instances) of each job
    sizes: dict[int, int] = {}
    for batch in workload.open().batches():
        jobs, counts = np.unique(batch.job_id, return_counts=True)
        for j, c in zip(jobs.tolist(), counts.tolist(), strict=True):
            sizes[j] = sizes.get(j, 0) + c
    order = sorted(sizes)
    rng = component_rng(cfg.seed, "jobs")
    lo, hi = value_range(trace.repetitions)
    draws = rng.integers(lo, hi + 1, size=len(order))
    reps = dict(zip(order, draws.tolist(), strict=True))
    run_s = None
    if trace.job_run_s is not None:
        r_lo, r_hi = trace.job_run_s
        run_s = dict(zip(order, rng.uniform(r_lo, r_hi, size=len(order)).tolist(), strict=True))
    inner = workload.open
    workload.open = lambda: JobsTaskSource(inner(), repetitions=reps, job_run_s=run_s)
    workload.gate = lambda: JobGate(
        dag=dag,
        job_sizes=sizes,
        repetitions=reps,
        queue_jobs=trace.queue_jobs,
        repetition_mode=trace.repetition_mode,
    )
    workload.describe["jobs"] = len(order)
    workload.describe["repetitions_mean"] = float(np.mean(draws)) if len(order) else 0.0
    return workload


def distinct_tasks(open_source: Callable[[], TaskSource]) -> dict[int, int]:
    """Distinct tasks of every job: the tasks of its first repetition (one pass over a fresh
    stream)."""
    sizes: dict[int, int] = {}
    for batch in open_source().batches():
        jobs = batch.job_id if batch.rep is None else batch.job_id[batch.rep == 0]
        ids, counts = np.unique(jobs, return_counts=True)
        for j, c in zip(ids.tolist(), counts.tolist(), strict=True):
            sizes[j] = sizes.get(j, 0) + c
    return sizes


def constrained_workload(
    cfg: RunConfig, workload: Workload, pool: pd.DataFrame
) -> tuple[Callable[[], TaskSource], Callable[[], ConstraintIndex] | None]:
    """The task stream and a constraint-index factory for the config's ``trace.constraints``.

    Returns ``(open, None)`` when the run has no placement constraints.
    """
    spec = cfg.trace.constraints
    use_trace = spec == "trace" and bool(workload.describe.get("constraints"))
    if spec == "none" or (spec == "trace" and not use_trace):
        return workload.open, None
    classes = machine_classes(pool, workload.resources)
    attributes: dict[str, np.ndarray] | None = None
    folder = workload.folder
    if use_trace and folder is not None and (folder / "machine_attributes.parquet").is_file():
        from fairsim.traces.google_constraints import attribute_arrays

        attrs = pd.read_parquet(folder / "machine_attributes.parquet")
        ids = pd.to_numeric(pool["server"], errors="coerce").fillna(-1).astype(np.int64)
        attributes = attribute_arrays(attrs, ids.to_numpy())

    def index() -> ConstraintIndex:
        return ConstraintIndex(classes, attributes)

    if use_trace:
        return workload.open, index
    assert isinstance(spec, ConstraintModel)
    n_classes: tuple[int, int] | dict[int, float]
    job_tasks: dict[int, int] | None = None
    if isinstance(spec.classes, dict):
        n_classes = dict(spec.classes)
        job_tasks = distinct_tasks(workload.open)
    else:
        n_classes = value_range(spec.classes)
    capacity = pool[list(workload.resources)].to_numpy(dtype=np.float64)

    def open_model() -> TaskSource:
        return ConstraintModelSource(
            workload.open(),
            classes,
            share=spec.share,
            n_classes=n_classes,
            per=spec.per,
            rng=component_rng(cfg.seed, "constraints"),
            model=spec.model,
            capacity=capacity,
            job_tasks=job_tasks,
        )

    return open_model, index


#: The converted trace's table of recorded runs (the Google 2011 converter writes it).
PLACEMENTS_FILE = "placements.parquet"


def recorded_runs(cfg: RunConfig, workload: Workload, pool: pd.DataFrame) -> RecordedRuns:
    """The trace's recorded placements on the pool's servers, for the scheduler ``recorded``
    (:mod:`fairsim.simulator.replay`).

    Reads ``placements.parquet`` of the converted trace (:func:`fairsim.traces.io.read_placements`:
    one row per recorded run, ``job_id, task_index, run, machine, start_s, end_s, end_event,
    censored`` and the run's request, one column per resource of the workload) and maps each
    run's machine (text) to its row in the pool, whose ``server`` column holds the same text
    (:func:`fairsim.traces.pools.machine_events_pool`).

    Parameters
    ----------
    cfg : RunConfig
    workload : Workload
        The resolved workload (its ``folder`` is the converted trace).
    pool : pandas.DataFrame
        The pool (column ``server``).

    Returns
    -------
    RecordedRuns
        Sorted by ``(job_id, task_index, run)``, with each run's request
        (``RecordedRuns.request``, the workload's resources in order).

    Raises
    ------
    ConfigError
        Naming ``trace.format`` for a trace without recorded placements (every format but
        ``google-2011``, unless a canonical folder has the file), ``cluster.source`` unless
        it is ``machine-events``, ``cluster.servers`` when machines are drawn, ``trace.path``
        when the converted folder lacks the file, and the machine of a run that the pool does
        not have.
    """
    trace, cl = cfg.trace, cfg.cluster
    folder = workload.folder
    path = folder / PLACEMENTS_FILE if folder is not None else None
    has_file = path is not None and path.is_file()
    if trace.format != "google-2011" and not has_file:
        raise ConfigError(
            f"trace.format: {trace.format!r} has no recorded placements (scheduler 'recorded' "
            "replays those of a google-2011 trace)"
        )
    if cl.classes is not None or cl.source != "machine-events":
        given = "classes" if cl.classes is not None else repr(cl.source)
        raise ConfigError(
            f"cluster.source: {given}: scheduler 'recorded' replays the trace's placements on "
            "its own machines and needs cluster: {source: machine-events}"
        )
    if cl.servers is not None:
        raise ConfigError(
            f"cluster.servers: {cl.servers}: scheduler 'recorded' needs every machine of the "
            "trace (leave cluster.servers out), not a draw"
        )
    if path is None or not has_file:
        raise ConfigError(
            f"trace.path: the converted trace {str(folder)!r} has no {PLACEMENTS_FILE} (it was "
            "converted by an older fairsim: delete it from the trace cache to convert again)"
        )
    frame = read_placements(path)
    lacking = [r for r in workload.resources if r not in frame.columns]
    if lacking:
        raise ConfigError(
            f"{path}: no request column {lacking[0]!r} for the workload's resources "
            f"{list(workload.resources)}"
        )
    machines = pd.Index(pool["server"].astype(str).to_numpy())
    if not machines.is_unique:
        raise ConfigError("cluster: the pool names a machine twice (server column)")
    pos = machines.get_indexer(pd.Index(frame["machine"].astype(str)))
    if (pos < 0).any():
        missing = frame["machine"].to_numpy()[pos < 0]
        raise ConfigError(
            f"{path}: machine {str(missing[0])!r} of a recorded run is not in the pool "
            f"({len(missing)} runs on {len(set(missing.tolist()))} machines the pool of "
            "cluster.source machine-events lacks)"
        )
    job = frame["job_id"].to_numpy(dtype=np.int64)
    index = frame["task_index"].to_numpy(dtype=np.int32)
    order = np.lexsort((frame["run"].to_numpy(), index, job))
    return RecordedRuns(
        job_id=job[order],
        task_index=index[order],
        server=pos.astype(np.int32)[order],
        start_s=frame["start_s"].to_numpy(dtype=np.float64)[order],
        end_s=frame["end_s"].to_numpy(dtype=np.float64)[order],
        censored=frame["censored"].to_numpy(dtype=bool)[order],
        request=frame[list(workload.resources)].to_numpy(dtype=np.float64)[order],
    )


def recorded_evictions(cfg: RunConfig, workload: Workload) -> pd.DataFrame:
    """The trace's own evictions in the simulated window, per tier: the production reference
    for the evictions of a scheduler that preempts (``docs/queues.md``, "The tiered Google
    scenario").

    Counts the recorded runs of ``placements.parquet`` (a SCHEDULE and the task's next terminal
    event, :func:`fairsim.traces.io.read_placements`) that end in an EVICT event (Google 2011
    ``task_events`` event type 2) at a time ``t`` with ``trace.start_s <= t < trace.end_s``. A
    task's tier is the band of priorities that holds its priority (``tasks.parquet``: its first
    SUBMIT row's): the config's ``leaves.tiers`` when its leaves are by tier, else the trace's
    bands (``free`` 0-1, ``middle`` 2-8, ``production`` 9-11,
    :data:`fairsim.traces.schema.GOOGLE_PRIORITY_BANDS`). The converter keeps every EVICT that
    ends a run it saw start; an EVICT without a running attempt in the converted parts is
    skipped with the other terminal events of that kind (``conversion.json``, ``skipped``:
    ``"terminal event without a running attempt"``), so it is not counted here.

    Parameters
    ----------
    cfg : RunConfig
        A scenario over a ``google-2011`` trace.
    workload : Workload
        Its resolved workload (:func:`resolve_workload`; its ``folder`` is the converted trace).

    Returns
    -------
    pandas.DataFrame
        One row per tier, in the order of the bands: ``tier`` (str), ``priority_lo`` and
        ``priority_hi`` (int, inclusive), ``evict_events`` (int: EVICT events in the window) and
        ``tasks_evicted`` (int: distinct tasks among them).

    Raises
    ------
    ConfigError
        Naming ``trace.format`` for a trace without recorded placements, ``trace.path`` when
        the converted folder lacks ``placements.parquet``.

    Notes
    -----
    With the Google sample beside the repository (docs/queues.md gives the table it prints)::

        cfg = load_config("configs/google-tiers.yaml")
        recorded_evictions(cfg, resolve_workload(cfg, Path("configs")))
    """
    trace = cfg.trace
    folder = workload.folder
    path = folder / PLACEMENTS_FILE if folder is not None else None
    if folder is None or path is None or not path.is_file():
        if trace.format != "google-2011":
            raise ConfigError(
                f"trace.format: {trace.format!r} has no recorded placements (the trace's own "
                "evictions are those of a google-2011 trace)"
            )
        raise ConfigError(
            f"trace.path: the converted trace {str(folder)!r} has no {PLACEMENTS_FILE} (it was "
            "converted by an older fairsim: delete it from the trace cache to convert again)"
        )
    runs = read_placements(path)
    end = trace.end_s if trace.end_s is not None else math.inf
    ev = runs.loc[
        (runs["end_event"] == "evict") & (runs["end_s"] >= trace.start_s) & (runs["end_s"] < end),
        ["job_id", "task_index"],
    ]
    tasks = pq.read_table(
        folder / "tasks.parquet", columns=["job_id", "task_index", "priority"]
    ).to_pandas()
    prio = ev.merge(tasks, on=["job_id", "task_index"], how="left")["priority"]
    leaves = cfg.leaves
    bands = leaves.bands() if leaves is not None and leaves.by == "tier" else dict(TIER_BANDS)
    rows = []
    for tier, (lo, hi) in bands.items():
        inside = ((prio >= lo) & (prio <= hi)).to_numpy(dtype=bool)
        rows.append(
            {
                "tier": tier,
                "priority_lo": lo,
                "priority_hi": hi,
                "evict_events": int(inside.sum()),
                "tasks_evicted": len(ev[inside].drop_duplicates()),
            }
        )
    return pd.DataFrame(rows)
