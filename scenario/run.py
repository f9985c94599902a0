"""``fairsim run``: one scenario, every scheduler it names, the contract's result files.

Data flow: the config names a trace (converted once to the canonical tables and cached), a
server pool (drawn with the run's seed) and schedulers; each scheduler replays the same workload
on an identical copy of the pool, and :mod:`fairsim.simulator.results` writes its files into
``OUT/<scheduler>/``. ``OUT/config.yaml`` holds the resolved config and ``OUT/servers.parquet`` the
pool that was simulated. The whole of ``OUT`` is written under a temporary sibling name and
renamed into place when complete (:func:`fairsim.atomic.atomic_dir`).

Relative paths of a config are relative to its file's folder (``base``); converted traces are
cached under ``trace.cache_dir`` (default ``results/cache`` in the working directory). Before
anything is simulated, an empty window, a utilisation interval that does not fit the window and
a pool with zero total capacity of a resource are refused with one-line errors.

There is one pipeline: :func:`prepare_scenario` resolves the workload, the pool, the placement
constraints and the users' weights once, and :meth:`Scenario.runs` runs every scheduler on them.
``fairsim run`` (:func:`run_config`), ``fairsim.simulate``, ``fairsim sweep`` and the paper
reproductions all go through it; a reproduction plugs what it measures into it with
:class:`Hooks` (its own workload or pool, a wrapper around each scheduler, a callback on the
utilisation grid) instead of building its own engine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fairsim.atomic import atomic_dir, write_text
from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    ConstraintModel,
    RunConfig,
    TraceConfig,
    check_samples,
    value_range,
)
from fairsim.schedulers.registry import SchedulerSpec, make_scheduler, resolve
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex, ConstraintModelSource, machine_classes
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.jobs import JobGate, JobsTaskSource
from fairsim.simulator.replicas import ReplicaTaskSource
from fairsim.simulator.results import write_json, write_run, write_table
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.workload import FrameTaskSource, ParquetTaskSource, TaskSource

log = logging.getLogger(__name__)

RESOURCES = ("cpu", "mem")
#: Components that draw random numbers; each gets its own child of the run's SeedSequence.
_COMPONENTS = ("pool", "workload", "jobs", "constraints")


def component_rng(seed: int, component: str) -> np.random.Generator:
    """The generator of one component of a run: one SeedSequence per run, spawned per
    component; never a global seed."""
    children = np.random.SeedSequence(seed).spawn(len(_COMPONENTS))
    return np.random.default_rng(children[_COMPONENTS.index(component)])


def resolve_path(raw: str, base: Path | None = None) -> Path:
    """A config path: a relative one is relative to ``base``, the config file's folder (to the
    working directory when the config did not come from a file, ``base=None``)."""
    p = Path(raw).expanduser()
    if p.is_absolute() or base is None:
        return p
    return base / p


#: Where converted traces are cached when ``trace.cache_dir`` is not given (working directory).
DEFAULT_CACHE = Path("results") / "cache"


def cache_root(trace: TraceConfig, base: Path | None = None) -> Path:
    """The cache folder of converted traces.

    Parameters
    ----------
    trace : TraceConfig
    base : Path, optional
        The config file's folder.

    Returns
    -------
    Path
        ``trace.cache_dir`` (a relative one is relative to ``base``), or ``results/cache`` in the
        working directory when it is not given.
    """
    if trace.cache_dir is None:
        return DEFAULT_CACHE
    return resolve_path(trace.cache_dir, base)


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
    users : tuple of str or None
        User names in the order the engine numbers them (first submission), when the workload
        knows it without reading the stream (a feedback source such as
        :class:`~fairsim.simulator.backlog.BacklogTaskSource` cannot be read ahead).
    """

    open: Callable[[], TaskSource]
    start_s: float
    end_s: float
    describe: dict[str, Any]
    resources: tuple[str, ...] = RESOURCES
    folder: Path | None = None
    gate: Callable[[], JobGate | None] = lambda: None
    last_submit_s: float | None = None
    users: tuple[str, ...] | None = None


#: Bump when the converter's rules change, so cached conversions are redone.
CONVERTER_VERSION = "3"
ALIBABA_CONVERTER_VERSION = "2"


def _cache_key(src: Path, parts: str | None) -> str:
    from fairsim.traces.schema import SCHEMA_VERSION

    files = sorted(src.glob("task_events/*.csv.gz")) + sorted(src.glob("machine_events/*.csv.gz"))
    spec = parts if parts is not None else "all"
    h = hashlib.sha256(f"{src.resolve()}|{spec}|{SCHEMA_VERSION}|{CONVERTER_VERSION}".encode())
    for f in files:
        st = f.stat()
        h.update(f"{f.name}:{st.st_size}".encode())
    return h.hexdigest()[:16]


def converted_google(trace: TraceConfig, base: Path | None, progress: bool) -> Path:
    """Convert a Google 2011 folder once and return the cached canonical folder."""
    from fairsim.traces.fetch import parse_parts
    from fairsim.traces.google2011 import convert_google_2011

    assert trace.path is not None
    src = resolve_path(trace.path, base)
    if not src.is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} is not a directory")
    if not (src / "task_events").is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} has no task_events folder")
    cache = cache_root(trace, base) / f"google-2011-{_cache_key(src, trace.parts)}"
    if (cache / "tasks.parquet").is_file() and (cache / "conversion.json").is_file():
        return cache
    parts = parse_parts(trace.parts) if trace.parts is not None else None
    log.info("converting %s (parts %s) into %s", src, trace.parts or "all", cache)
    with atomic_dir(cache, overwrite=True, what="trace.cache_dir") as tmp:
        convert_google_2011(
            src,
            tmp,
            parts=parts,
            progress=progress,
            bad_row_threshold=trace.bad_row_threshold,
        )
    return cache


def converted_alibaba(trace: TraceConfig, base: Path | None) -> Path:
    """Convert an Alibaba trace folder once and return the cached canonical folder."""
    from fairsim.traces.alibaba import convert_alibaba
    from fairsim.traces.schema import SCHEMA_VERSION

    assert trace.path is not None
    src = resolve_path(trace.path, base)
    if not src.is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} is not a directory")
    h = hashlib.sha256(
        f"{src.resolve()}|{trace.format}|{SCHEMA_VERSION}|{ALIBABA_CONVERTER_VERSION}".encode()
    )
    for f in sorted(p for p in src.rglob("*") if p.is_file()):
        h.update(f"{f.relative_to(src)}:{f.stat().st_size}".encode())
    cache = cache_root(trace, base) / f"{trace.format}-{h.hexdigest()[:16]}"
    if (cache / "tasks.parquet").is_file() and (cache / "conversion.json").is_file():
        return cache
    log.info("converting %s (%s) into %s", src, trace.format, cache)
    with atomic_dir(cache, overwrite=True, what="trace.cache_dir") as tmp:
        convert_alibaba(trace.format, src, tmp, bad_row_threshold=trace.bad_row_threshold)
    return cache


def synthetic_complex(cfg: RunConfig, base: Path | None = None) -> Path:
    """Write the complex-job synthetic workload of the config once (cached) and return it."""
    from fairsim.traces.io import write_tasks
    from fairsim.traces.synth import default_duration_s, synth_complex_jobs

    trace = cfg.trace
    assert trace.n_tasks is not None
    rng_seed = int(component_rng(cfg.seed, "workload").integers(2**31))
    window = trace.duration_s or default_duration_s(trace.n_tasks)
    name = f"synthetic-complex-{trace.n_tasks}-{rng_seed}-w{window:.6g}"
    folder = cache_root(trace, base) / name
    if not (folder / "tasks.parquet").is_file():
        with atomic_dir(folder, overwrite=True, what="trace.cache_dir") as tmp:
            frame = synth_complex_jobs(trace.n_tasks, seed=rng_seed, duration_s=window)
            write_tasks(frame, tmp / "tasks.parquet")
    return folder / "tasks.parquet"


def inline_frame(trace: TraceConfig) -> pd.DataFrame:
    """Tasks of an ``inline`` workload: each user submits identical tasks at its join time."""
    assert trace.users is not None
    rows = []
    for j, u in enumerate(trace.users):
        if u.windows is not None or u.eligible is not None:
            raise ConfigError(
                f"trace.users.{j}: windows and eligible (backlogged users) run with "
                "'fairsim experiment psdsf', not 'fairsim run'"
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
    if trace.format in ("google-2011", "canonical") or trace.is_alibaba:
        if trace.format == "google-2011":
            folder = converted_google(trace, base, progress)
        elif trace.is_alibaba:
            folder = converted_alibaba(trace, base)
        else:
            assert trace.path is not None
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
        last = _check_window(file.read(["submit_s"]).column(0).to_numpy(), trace, start, end)
        expand = "instances" in names and _column_max(file, "instances") > 1
        dag = (
            trace.dag
            and "parents" in names
            and file.read(["parents"]).column(0).null_count < (file.metadata.num_rows)
        )
        cons = trace.constraints == "trace" and _has_values(file, "constraint")
        info["instances"] = expand
        info["dag"] = dag
        info["constraints"] = cons

        def open_parquet() -> TaskSource:
            kw = {"start_s": start, "end_s": end, "job_columns": dag, "constraint_column": cons}
            if expand:
                return ReplicaTaskSource(tasks, **kw)  # type: ignore[arg-type]
            return ParquetTaskSource(tasks, **kw)  # type: ignore[arg-type]

        work = Workload(open_parquet, start, end, info, resources, tasks.parent)
        work.last_submit_s = last
        return _with_jobs(cfg, work, dag)
    if trace.format == "synthetic" and trace.model == "complex":
        return resolve_workload(
            cfg.model_copy(
                update={
                    "trace": trace.model_copy(
                        update={
                            "format": "canonical",
                            "path": str(synthetic_complex(cfg, base).resolve()),
                        }
                    )
                }
            ),
            base,
            progress,
        )
    if trace.format == "synthetic":
        from fairsim.traces.synth import synth_google_like

        assert trace.n_tasks is not None
        rng_seed = int(component_rng(cfg.seed, "workload").integers(2**31))
        frame = synth_google_like(trace.n_tasks, seed=rng_seed, duration_s=trace.duration_s)
        if trace.end_s is None:
            end = float(frame["submit_s"].max()) + 1.0
    else:
        frame = inline_frame(trace)
    last = _check_window(frame["submit_s"].to_numpy(), trace, start, end)

    def open_frame() -> TaskSource:
        return FrameTaskSource(frame, resources=RESOURCES, start_s=start, end_s=end)

    dag = trace.dag and "parents" in frame and bool(frame["parents"].notna().any())
    work = Workload(open_frame, start, end, {"tasks": len(frame)})
    work.last_submit_s = last
    return _with_jobs(cfg, work, dag)


def _check_window(submit_s: np.ndarray, trace: TraceConfig, start: float, end: float) -> float:
    """Refuse a window in which no task is submitted (the run would have nothing to simulate).

    Returns
    -------
    float
        The last submit time inside the window.

    Raises
    ------
    ConfigError
        Naming ``trace.start_s`` / ``trace.end_s`` and the span of the trace's submit times.
    """
    inside = (submit_s >= start) & (submit_s < end)
    if inside.any():
        return float(submit_s[inside].max())
    span = (
        f"its {len(submit_s)} tasks are submitted from {float(submit_s.min()):g} s to "
        f"{float(submit_s.max()):g} s"
        if len(submit_s)
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
) -> dict[int, float] | None:
    """Each user's weight, keyed by the engine's user code (users are numbered by first
    appearance in the task stream, as :class:`fairsim.simulator.engine.Engine` numbers them).

    Weights come from ``trace.users[].weight`` (inline users) and ``trace.weights`` (a mapping
    from user name to weight); every other user has ``trace.default_weight``. ``users`` gives the
    user names in code order when the workload knows it (:attr:`Workload.users`); otherwise the
    order is read from a fresh stream of ``open_source``.

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
    named = {u.name: u.weight for u in trace.users or [] if u.weight != 1.0}
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
    return {code: float(named.get(name, trace.default_weight)) for name, code in order.items()}


def _has_values(file: pq.ParquetFile, column: str) -> bool:
    if column not in file.schema_arrow.names:
        return False
    return file.read([column]).column(0).null_count < file.metadata.num_rows


def _column_max(file: pq.ParquetFile, column: str) -> int:
    value = pc.max(file.read([column]).column(0)).as_py()
    return int(value) if value is not None else 0


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


def build_pool(
    cfg: RunConfig, base: Path | None = None, workload: Workload | None = None
) -> pd.DataFrame:
    """Draw the server pool (columns ``server`` and one per resource) with the run's seed.

    Raises
    ------
    ConfigError
        For source ``trace`` without a converted trace, or more servers than it has.
    """
    from fairsim.traces.pools import load_pool

    cl = cfg.cluster
    if cl.classes is not None:  # explicit server classes, in order (PS-DSF paper, Section V)
        rows = [[c.name, *c.capacity] for c in cl.classes for _ in range(c.count)]
        res = workload.resources if workload else RESOURCES
        for c in cl.classes:
            if len(c.capacity) != len(res):
                raise ConfigError(
                    f"cluster.classes: capacity of {c.name!r} has {len(c.capacity)} entries, "
                    f"expected {len(res)} ({', '.join(res)})"
                )
        frame = pd.DataFrame(rows, columns=["server_class", *res])
        frame.insert(0, "server", np.arange(len(frame), dtype=np.int64))
        return frame.drop(columns="server_class")
    rng = (
        np.random.default_rng(np.random.SeedSequence(cl.seed))
        if cl.seed is not None
        else component_rng(cfg.seed, "pool")
    )
    trace_dir: Path | None = None
    if cl.source == "trace":
        folder = workload.folder if workload is not None else None
        if folder is None or not (folder / "servers.parquet").is_file():
            raise ConfigError(
                f"cluster.source: 'trace' needs a converted trace with servers.parquet "
                f"(trace.format {cfg.trace.format!r} has none)"
            )
        pool = pd.read_parquet(folder / "servers.parquet")
        cols = ["server", *(workload.resources if workload else RESOURCES)]
        pool = pool[cols]
        if cl.servers is not None:
            if cl.servers > len(pool):
                raise ConfigError(
                    f"cluster.servers: {cl.servers} is more than the {len(pool)} machines "
                    "of the trace"
                )
            pick = np.sort(rng.choice(len(pool), size=cl.servers, replace=False))
            pool = pool.iloc[pick]
        return pool.reset_index(drop=True)
    if cl.source == "machine-events":
        raw = cl.path or (cfg.trace.path if cfg.trace.format == "google-2011" else None)
        if raw is None:
            raise ConfigError("cluster.path: required for source 'machine-events'")
        trace_dir = resolve_path(raw, base)
    elif cl.servers is None:
        raise ConfigError("cluster.servers: required for source 'table-i'")
    pool = load_pool(cl.source, cl.servers, rng, trace_dir)
    return pool.reset_index(drop=True)


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
    lo, hi = value_range(spec.classes)

    def open_model() -> TaskSource:
        return ConstraintModelSource(
            workload.open(),
            classes,
            share=spec.share,
            n_classes=(lo, hi),
            per=spec.per,
            rng=component_rng(cfg.seed, "constraints"),
            model=spec.model,
        )

    return open_model, index


def pool_capacity(pool: pd.DataFrame, resources: tuple[str, ...] = RESOURCES) -> np.ndarray:
    """Capacity matrix ``(n_servers, n_resources)`` of a pool frame.

    Raises
    ------
    ConfigError
        If the pool has no server, or a resource whose total capacity is 0 (its utilisation,
        used / total, would be undefined).
    """
    cap = pool[list(resources)].to_numpy(dtype=np.float64)
    if cap.shape[0] == 0:
        raise ConfigError("cluster: the server pool is empty")
    total = cap.sum(axis=0)
    zero = [r for r, t in zip(resources, total, strict=True) if not t > 0]
    if zero:
        raise ConfigError(
            f"cluster: the pool's total capacity of {', '.join(zero)} is 0 (utilisation would be "
            "undefined); give some server a positive capacity"
        )
    return cap


#: Why ``collect.stream_tasks`` needs an output folder.
STREAM_NEEDS_OUT = (
    "collect.stream_tasks: true writes tasks.parquet while each run goes on; give an output "
    "folder (fairsim run --out DIR, fairsim.simulate(..., out=DIR)) or set it to false"
)


def simulate(
    scheduler: str | Mapping[str, Any] | SchedulerSpec | Scheduler,
    capacity: np.ndarray,
    source: TaskSource,
    *,
    start_s: float,
    horizon_s: float,
    interval_s: float,
    user_shares: bool = False,
    progress: bool = False,
    desc: str | None = None,
    resources: tuple[str, ...] = RESOURCES,
    gate: JobGate | None = None,
    constraints: ConstraintIndex | None = None,
    censored: str = "hold",
    weights: dict[int, float] | None = None,
    on_sample: Callable[[float, ClusterState], None] | None = None,
    tasks_out: Path | None = None,
) -> EngineResult:
    """Run one scheduler on a fresh copy of the pool; returns the engine's result.

    ``scheduler`` is a config entry (a registered name, ``{name: ..., parameter: value}`` or a
    resolved :class:`fairsim.schedulers.registry.SchedulerSpec`, built with ``weights``, which map
    the engine's user codes to weights, :func:`user_weights`) or an unbound scheduler instance
    (``weights`` is then not used). ``on_sample(time_s, cluster)`` is called at every utilisation
    grid point. With ``tasks_out``, ended tasks are streamed to that ``tasks.parquet`` while the
    run goes on (``Engine(tasks_out=...)``, :mod:`fairsim.simulator.stream`).
    """
    if not isinstance(scheduler, Scheduler):
        scheduler = make_scheduler(scheduler, weights=weights)
    engine = Engine(
        ClusterState(capacity, resources),
        scheduler,
        source,
        start_s=start_s,
        horizon_s=horizon_s,
        utilization_interval_s=interval_s,
        record_user_shares=user_shares,
        progress=progress,
        progress_desc=desc or scheduler.name,
        gate=gate,
        constraints=constraints,
        censored=censored,
        on_sample=on_sample,
        tasks_out=tasks_out,
    )
    return engine.run()


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
    """

    spec: SchedulerSpec
    scenario: Scenario
    source: TaskSource
    gate: JobGate | None = None
    constraints: ConstraintIndex | None = None
    scheduler: Scheduler | None = None
    result: EngineResult | None = None

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
    weights."""
    return make_scheduler(run.spec, weights=run.weights)


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
        The simulated servers: ``server`` and one column per resource.
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

    def summary_extra(self) -> dict[str, Any]:
        """What ``summary.json`` adds to a run's headline numbers: config hash, seed, number
        of servers and the scenario's name."""
        cfg = self.config
        return {
            "config_hash": cfg.config_hash(),
            "seed": cfg.seed,
            "servers": len(self.pool),
            "name": cfg.name,
        }

    def check_stream(self) -> None:
        """Refuse ``collect.stream_tasks`` where streamed results are not supported yet.

        Raises
        ------
        ConfigError
            Naming ``collect.stream_tasks``, when the scenario has a job gate or placement
            constraints.
        """
        if not self.config.collect.stream_tasks:
            return
        what = (
            "a job gate (DAG parents with trace.dag, trace.repetitions or trace.queue_jobs)"
            if self.workload.gate() is not None
            else "placement constraints (trace.constraints)"
            if self.constraint_index is not None
            else None
        )
        if what is not None:
            raise ConfigError(
                f"collect.stream_tasks: true is not supported with {what} yet; set it to false"
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
            With ``collect.stream_tasks``: the folder where each run streams its ended tasks
            (a hidden ``.<scheduler>.tasks.parquet``, moved into the scheduler's result folder
            by :func:`fairsim.simulator.results.write_run`).

        Yields
        ------
        SchedulerRun
            With ``result`` set.

        Raises
        ------
        ConfigError
            With ``collect.stream_tasks`` and no ``tasks_dir``, or where streaming is not
            supported (:meth:`check_stream`).
        """
        cfg, hooks = self.config, self.hooks
        if cfg.collect.stream_tasks:
            if tasks_dir is None:
                raise ConfigError(STREAM_NEEDS_OUT)
            self.check_stream()
        build = hooks.scheduler or default_scheduler
        specs = cfg.scheduler_specs()
        if names is not None:  # a config label, else any registered name or alias
            by_label = {spec.label: spec for spec in specs}
            specs = [by_label.get(n) or resolve(n) for n in names]
        for spec in specs:
            name = spec.label
            run = SchedulerRun(
                spec,
                self,
                self.open_source(),
                self.workload.gate(),
                self.constraint_index() if self.constraint_index is not None else None,
            )
            run.scheduler = build(run)
            sample = hooks.on_sample
            run.result = simulate(
                run.scheduler,
                self.capacity,
                run.source,
                start_s=self.workload.start_s,
                horizon_s=self.horizon_s,
                interval_s=cfg.collect.utilization_interval_s,
                user_shares=cfg.collect.user_shares,
                progress=progress,
                desc=name,
                resources=self.workload.resources,
                gate=run.gate,
                constraints=run.constraints,
                censored=cfg.trace.censored,
                on_sample=functools.partial(sample, run) if sample is not None else None,
                tasks_out=(
                    tasks_dir / f".{name}.tasks.parquet"
                    if cfg.collect.stream_tasks and tasks_dir is not None
                    else None
                ),
            )
            yield run


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
        If the trace or the pool cannot be resolved, the window holds no task, or the
        utilisation interval does not fit the window.

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
    workload = (hooks.workload or resolve_workload)(cfg, base, progress)
    horizon = cfg.collect.horizon_s or workload.end_s
    # without a horizon the run lasts at least until the last submission
    end = horizon if math.isfinite(horizon) else workload.last_submit_s
    try:
        if end is not None:
            check_samples(cfg, workload.start_s, end, len(workload.resources))
    except ValueError as exc:
        raise ConfigError(f"config: {exc}") from None
    pool = (hooks.pool or build_pool)(cfg, base, workload)
    capacity = pool_capacity(pool, workload.resources)
    open_source, index = constrained_workload(cfg, workload, pool)
    weights = user_weights(cfg, workload.open, workload.users)
    return Scenario(
        cfg, base, workload, pool, capacity, horizon, open_source, index, weights, hooks
    )


def run_config(
    cfg: RunConfig,
    out: Path,
    *,
    base: Path | None = None,
    progress: bool = True,
    report: bool = True,
    overwrite: bool = False,
    protect: tuple[Path, ...] = (),
    hooks: Hooks | None = None,
    what: str = "--out",
) -> dict[str, dict[str, Any]]:
    """Run every scheduler of ``cfg`` and write the result files into ``out``.

    The whole folder is written under a temporary sibling name and renamed to ``out`` only when
    every file is complete (:func:`fairsim.atomic.atomic_dir`): a failed or interrupted run
    leaves nothing behind, and an earlier ``out`` is kept (refused when not empty, unless
    ``overwrite``; then replaced whole).

    Parameters
    ----------
    cfg : RunConfig
        Validated scenario.
    out : Path
        Output folder (``DIR`` of the contract).
    base : Path, optional
        Folder of the config file: relative paths of the config are relative to it (to the
        working directory when None).
    progress : bool
        Show progress bars.
    report : bool
        Also draw ``utilization.png`` and write a short ``report.md`` for the run.
    overwrite : bool
        Replace an existing non-empty ``out``.
    protect : tuple of Path
        Inputs (the config file) that an ``overwrite`` must not delete.
    hooks : Hooks, optional
        Passed to :func:`prepare_scenario`.
    what : str
        How messages about the output folder name it.

    Returns
    -------
    dict
        Scheduler name → its ``summary.json`` content.

    Raises
    ------
    ConfigError
        If the trace or the pool cannot be resolved, the window holds no task, or the
        utilisation interval does not fit the window.
    OutputError
        If ``out`` is refused (an existing file, below a file, not writable, not empty).
    """
    with atomic_dir(out, overwrite=overwrite, protect=protect, what=what) as tmp:
        return _run_into(cfg, tmp, base=base, progress=progress, report=report, hooks=hooks)


def _run_into(
    cfg: RunConfig,
    out: Path,
    *,
    base: Path | None,
    progress: bool,
    report: bool,
    hooks: Hooks | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`run_config` into an empty folder ``out`` (the temporary one)."""
    scenario = prepare_scenario(cfg, base=base, progress=progress, hooks=hooks)
    write_text(out / "config.yaml", cfg.to_yaml())
    write_table(pa.Table.from_pandas(scenario.pool, preserve_index=False), out / "servers.parquet")
    summaries: dict[str, dict[str, Any]] = {}
    for run in scenario.runs(progress=progress, tasks_dir=out):
        assert run.result is not None
        name = run.name
        summaries[name] = write_run(run.result, out / name, extra_summary=scenario.summary_extra())
        del run  # the engine's result is written: free it before the next run
        log.info(
            "%s: %d tasks in %.1f s (%.0f tasks/s)",
            name,
            summaries[name]["tasks"],
            summaries[name]["wall_s"],
            summaries[name]["tasks_per_s"] or 0,
        )
    write_json({k: _headline(v) for k, v in summaries.items()}, out / "summary.json")
    if report:
        from fairsim.scenario.reporting.run_report import write_run_report

        write_run_report(out, cfg, summaries)
    return summaries


def _headline(s: dict[str, Any]) -> dict[str, Any]:
    keys = ("tasks", "tasks_completed", "completion_ratio", "mean_utilization", "mean_jct_s")
    return {k: s.get(k) for k in keys}
