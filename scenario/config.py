"""Scenario configuration (YAML), validated with pydantic.

Shape (the documentation site's configuration reference is generated from the models below)::

    name: drfh-google
    seed: 1                                   # one SeedSequence per run, spawned per component
    trace:   {format: google-2011, path: ../shared/traces/google-2011, start_s: 0, end_s: 86400}
    cluster: {servers: 2000, source: table-i}  # or source: machine-events
    schedulers: [slots-14, ff-drfh, bf-drfh]
    collect: {utilization_interval_s: 60}

Unknown keys are errors that suggest the closest known key; a key given twice in one mapping
is an error too (:class:`_Loader`); every error is one line naming the dotted path of the
field and the offending value (:func:`load_config`). NaN and infinite numbers are refused
everywhere; ``name`` is a single folder name (it names ``results/<name>``); ``seed``
is an integer >= 0. A config is valid or not wherever it is read: whether its sizes fit in the
memory of the machine that runs it is checked when it runs (:mod:`fairsim.scenario.limits`).

Paths
-----
Relative paths (``trace.path``, ``trace.cache_dir``, ``cluster.path``) are relative to the config
file's folder (``fairsim.scenario.trace_cache.resolve_path``); given with ``--set`` they are
relative to the
working directory (:func:`apply_override` makes them absolute). ``cache_dir`` defaults to the
user's cache folder (:func:`fairsim.scenario.trace_cache.default_cache_dir`). The resolved
config a run writes into its folder (``OUT/config.yaml``, :meth:`RunConfig.to_yaml` with
``folder``) gives them relative to that folder, so that ``fairsim run OUT/config.yaml`` replays
the run; the config hash stays the hash of the config as it was given.

Trace formats
-------------
``google-2011``
    ``path`` is a folder with the official ``task_events`` (and ``machine_events``) part files;
    ``parts`` (e.g. ``"0-13"``; default: every part present) selects the task_events parts. The
    folder is converted once to the canonical tables and cached under ``cache_dir``. A table with
    more than ``bad_row_threshold`` (default 0.5) of its rows malformed or unparseable is an error
    naming the first bad row.
``canonical``
    ``path`` is a canonical ``tasks.parquet`` or a folder holding one (``fairsim trace convert``).
``synthetic``
    ``n_tasks`` tasks from :func:`fairsim.traces.synth.synth_google_like` with the run's seed; with
    ``model: complex``, from :func:`fairsim.traces.synth.synth_complex_jobs` (DAG parents and
    instance
    counts, written once under ``cache_dir`` and streamed like a converted trace).
``inline``
    ``users``: a list of ``{name, join_s, demand, tasks, run_s, weight}``; each user submits
    ``tasks`` identical tasks at ``join_s`` (the DRFH paper's Fig. 4 scenario); demands are
    numbers >= 0.

Schedulers
----------
``schedulers`` lists the schedulers to compare, each a registered name
(:func:`fairsim.schedulers.registry.available`, plug-ins included) or a mapping that also gives the
scheduler's parameters, validated against the scheduler's own parameter model
(:func:`fairsim.schedulers.registry.params_model`)::

    schedulers: [ff-drfh, {name: psdsf, period_s: 2}, {name: slots, slots: 14}, slots-14-single]

Each one's results go into the folder named by its label
(:func:`fairsim.schedulers.registry.resolve`): the name, followed by ``-<value>`` for every
parameter given a non-default value (``psdsf-2``, ``slots-14``); ``label:`` in the mapping
overrides it. ``slots-<S>``, ``slots-<S>-single`` and ``slots-<S>-cpu`` are short names of
``{name: slots, slots: S, model: ...}``.

Weights
-------
``weights: {user: w}`` gives trace users a weight (> 0), inline users take ``users[].weight``,
and every other user has ``default_weight`` (default 1). Every DRF-family scheduler divides a
user's dominant share by its weight (``fairsim.scenario.workload.user_weights`` maps names to
the
engine's user numbers).
``alibaba-2017``, ``alibaba-2018``, ``alibaba-2018-spar``, ``alibaba-gpu-2023``
    ``path`` is a folder of the official files (``docs/traces-alibaba.md``), converted once with
    :func:`fairsim.traces.alibaba.convert_alibaba` and cached under ``cache_dir``. Rows with
    ``instances``
    are expanded lazily while streaming. The resources are the trace's (GPU 2023: cpu, mem, gpu).

Right-censored tasks (:mod:`fairsim.simulator.engine`)
----------------------------------------------
``censored: hold`` (default)
    A task the trace marks right-censored (still running when the data ends: its run time is
    unknown) never completes: once started it holds its resources until the horizon.
``censored: complete``
    The older rule, for sensitivity analyses: it runs its observed span (a lower bound) and then
    counts as completed.

Complex jobs (:mod:`fairsim.simulator.jobs`)
------------------------------------
``dag`` (default true)
    Hold a task until its DAG parents (the ``parents`` column) have finished.
``repetitions``
    Times each job runs: an integer, or ``[lo, hi]`` for a uniform integer per job drawn with the
    run's seed (UDRF paper, Section V).
``repetition_mode``
    ``simultaneous`` (default): the repetitions are instances that may run side by side, all
    released when the job enters the queue (the UDRF paper's ``x_j``); ``sequential``: one after
    the other.
``queue_jobs``
    Capacity of the bounded waiting queue, in jobs (UDRF paper, Section V: 100); null: unbounded.
``job_run_s``
    ``[lo, hi]``: replace the trace's run times by one uniform run time per job, in seconds
    (UDRF paper, Section V: 10-100 s).

Placement constraints (:mod:`fairsim.simulator.constraints`)
----------------------------------------------------
``constraints: trace`` (default)
    Use the table's ``constraint`` column when it has one (Google ``task_constraints`` with the
    real machines' ``machine_attributes``; ``class=...`` rules).
``constraints: none``
    Ignore constraints.
``constraints: {share: 0.5, classes: [1, 2], per: job, model: pinned}``
    A constraint model for traces without constraints: each job (or task) is, with probability
    ``share``, given ``classes`` machine classes of the pool (an integer or ``[lo, hi]``,
    uniform; or ``{k: share}``, the share of jobs needing ``k`` classes, matched as closely as
    the jobs' sizes allow), drawn without replacement with probability proportional to the
    number of servers of each class, among the classes that can hold the task. ``model:
    pinned`` (default): the job spans those classes and each of its tasks is pinned to one of
    them (``class=A``; UDRF paper, Section II-A, u2's task1 and task2); ``model: any-of``: every
    task may use any of them (``class=A|B``). About half of Google's tasks are constrained
    (Sharma et al., SoCC 2011).
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
import math
import os
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_serializer,
    model_validator,
)

from fairsim.errors import ConfigError, FairsimError, read_input_text, unknown_key
from fairsim.schedulers.exact.instance import QUEUE_KEYS, InstanceError, QueueTree, parse_queues
from fairsim.schedulers.registry import SchedulerSpec, resolve
from fairsim.traces.schema import GOOGLE_PRIORITY_BANDS


def value_range(v: Any) -> tuple[Any, Any]:
    """``(lo, hi)`` of a setting given as one value or as ``[lo, hi]``.

    Raises
    ------
    ValueError
        If ``v`` is a list whose length is not 2 (the caller's validator words the message).
    """
    if isinstance(v, list):
        if len(v) != 2:
            raise ValueError(f"expected [lo, hi], got {v!r}")
        return v[0], v[1]
    return v, v


def _checked_range(
    v: Any, ok: Callable[[Any, Any], bool], message: str, not_range: str | None = None
) -> Any:
    """``v``, a setting given as one value or as ``[lo, hi]``, once ``ok(lo, hi)`` holds.

    Parameters
    ----------
    v : object
        One value, or a list ``[lo, hi]``.
    ok : callable
        ``ok(lo, hi) -> bool``, e.g. ``lambda lo, hi: 1 <= lo <= hi``.
    message : str
        The error when ``ok(lo, hi)`` fails.
    not_range : str, optional
        The error when ``v`` is a list of another length than 2 (default ``message``).

    Returns
    -------
    object
        ``v``, unchanged.

    Raises
    ------
    ValueError
        With ``message`` or ``not_range`` (a pydantic validator words it for the field).
    """
    try:
        lo, hi = value_range(v)
    except ValueError:
        raise ValueError(message if not_range is None else not_range) from None
    if not ok(lo, hi):
        raise ValueError(message)
    return v


#: The resources of a workload that does not name its own (inline and synthetic tasks; the
#: Google 2011 trace).
RESOURCES = ("cpu", "mem")
#: Components that draw random numbers; each gets its own child of the run's SeedSequence.
_COMPONENTS = ("pool", "workload", "jobs", "constraints")


def component_rng(seed: int, component: str) -> np.random.Generator:
    """The generator of one component of a run: one SeedSequence per run, spawned per
    component; never a global seed."""
    children = np.random.SeedSequence(seed).spawn(len(_COMPONENTS))
    return np.random.default_rng(children[_COMPONENTS.index(component)])


#: Most utilisation grid samples a run may record (``collect.utilization_interval_s`` over the
#: simulated window). The grid is for the utilisation tables and figures (mean utilisation is
#: exact at any interval). 10 million is 140 times the real Google sample's 70,757 samples at
#: 1 s; ``fairsim run`` of one scheduler recording 9.5 million (2 resources) peaks at 1.0 GB of
#: resident memory (5 million: 0.77 GB). A fixed bound, not the machine's: a config is valid or
#: not wherever it is read (the memory estimate, :func:`fairsim.scenario.limits.check_limits`,
#: lets tens of millions through on most machines).
MAX_UTILIZATION_SAMPLES = 10_000_000

#: Most ticks a scheduler's period may give over the simulated window (the parameter its class
#: names in :attr:`~fairsim.simulator.scheduler.Scheduler.period_parameter`: ``period_s``,
#: ``cycle_s``, ``update_interval_s``), the bound of :data:`MAX_UTILIZATION_SAMPLES`: each tick
#: is a pass of the event loop, so a period of 1e-9 s over 200 s would run for days.
MAX_SCHEDULER_TICKS = 10_000_000

#: Most instants a run's fairness over time may sample (``collect.fairness.interval_s`` over the
#: simulated window, the start and the horizon included). Each instant solves the reference
#: mechanism (4.5 ms at 513 active users, docs/fairness.md, "Cost": 7.5 minutes for 100,000) and
#: keeps one row per active user in memory until the run ends; 100,000 is the real Google
#: sample's window (70,757 s) at 1 s with room to spare. A fixed bound, like
#: :data:`MAX_UTILIZATION_SAMPLES`: a config is valid or not wherever it is read.
MAX_FAIRNESS_INSTANTS = 100_000

#: Relative paths of these config keys are resolved against the config file's folder; given
#: with ``--set`` they are relative to the working directory.
PATH_KEYS = ("trace.path", "trace.cache_dir", "cluster.path")


def check_name(name: Any, field: str = "name") -> str:
    """A run or sweep name: a single path component (it names the output folder).

    Raises
    ------
    ValueError
        For an empty name, ``.``/``..``, or one holding ``/``, ``\\`` or a NUL byte.
    """
    if (
        not isinstance(name, str)
        or not name.strip()
        or name in (".", "..")
        or any(c in name for c in "/\\\0")
    ):
        raise ValueError(
            f"{field}: {name!r} is not a single folder name (no '/', '\\', '.' or '..'; it "
            "names the output folder results/<name>)"
        )
    return name


#: The largest seed of a sweep or a strategy study: ``runs.parquet`` and ``strategy.parquet``
#: store seeds as 64-bit integers (a run alone takes any seed >= 0).
MAX_SEED = 2**63 - 1


class StrictModel(BaseModel):
    """Base model of every config section (and of the reproductions' own config files): frozen,
    unknown keys are errors that suggest the closest known key, and NaN or infinite numbers are
    refused. The docstring below each field is its description (in the JSON schema and the
    generated config reference); :func:`format_error` turns a validation error into one line."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True
    )

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if key not in cls.model_fields:
                    raise ValueError(unknown_key(key, cls.model_fields))
                _refuse_bool(key, value, cls.model_fields[key].annotation)
        return data


def _admits_bool(annotation: Any) -> bool:
    """Whether a field's type admits a boolean (``bool``, ``Any``, or a union or container
    holding one)."""
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(a) for a in typing.get_args(annotation))


def _refuse_bool(key: str, value: Any, annotation: Any) -> None:
    """Refuse a boolean given for a number (pydantic reads ``true`` as 1 for an integer field:
    ``cluster.servers: true`` ran one server), in the value or a list of values."""
    if _admits_bool(annotation):
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"{key}: {item!r} is a boolean, expected a number")


class InlineUser(StrictModel):
    """One user of an ``inline`` workload.

    Either ``tasks`` identical tasks submitted at ``join_s``, or -- with ``windows`` -- a user that
    is *backlogged* while active: during each ``[start, end)`` window it keeps tasks queued, and
    submits none outside (the PS-DSF paper's Section V users, :mod:`fairsim.simulator.backlog`).
    ``run_s`` is a run time or, with ``windows``, ``[lo, hi]`` for uniform run times. ``weight`` is
    the user's weight (phi_n, w_i) and ``eligible`` the names of the ``cluster.classes`` its tasks
    may run on (placement constraints; default: every server). ``windows`` and ``eligible`` are
    read only by ``fairsim experiment psdsf`` (``configs/psdsf-fig6.yaml``); ``fairsim run``
    refuses a user that gives either.
    """

    name: str
    """User name (unique within the workload); it names the user in the result files."""
    join_s: float = Field(default=0.0, ge=0)
    """Time at which the user submits its tasks, in seconds (>= 0)."""
    demand: list[float]
    """Resources one task holds while it runs, one number >= 0 per resource (normalised units: the
    largest server has 1).
    """
    tasks: int | None = Field(default=None, gt=0)
    """Number of identical tasks submitted at ``join_s``; required without ``windows``."""
    run_s: float | list[float]
    """Run time of each task in seconds (> 0); with ``windows`` also ``[lo, hi]`` for uniform run
    times.
    """
    weight: float = Field(default=1.0, gt=0)
    """The user's weight (phi_n, w_i): DRF-family schedulers divide its dominant share by it."""
    eligible: list[str] | None = None
    """Names of the ``cluster.classes`` its tasks may run on (placement constraint); null: every
    server. Read only by ``fairsim experiment psdsf``: ``fairsim run`` refuses it.
    """
    windows: list[list[float]] | None = None
    """``[start, end)`` pairs in seconds, in order and disjoint, during which the user is backlogged
    (PS-DSF paper, Section V); null: a one-shot user. Read only by ``fairsim experiment psdsf``:
    ``fairsim run`` refuses it.
    """

    @field_validator("demand")
    @classmethod
    def _demand(cls, v: list[float]) -> list[float]:
        if not v or any(not d >= 0 for d in v):
            raise ValueError(f"demand must be a non-empty list of numbers >= 0, got {v!r}")
        return v

    @field_validator("run_s")
    @classmethod
    def _run(cls, v: float | list[float]) -> float | list[float]:
        message = f"run_s must be > 0 or [lo, hi] with 0 < lo <= hi, got {v!r}"
        return _checked_range(v, lambda lo, hi: 0 < lo <= hi, message)

    @field_validator("windows")
    @classmethod
    def _windows(cls, v: list[list[float]] | None) -> list[list[float]] | None:
        if v is None:
            return v
        last = -1.0
        for w in v:
            if len(w) != 2 or not 0 <= w[0] < w[1] or w[0] < last:
                raise ValueError(
                    f"windows must be [start, end] pairs with 0 <= start < end, in order and "
                    f"disjoint, got {v!r}"
                )
            last = w[1]
        return v

    @model_validator(mode="after")
    def _mode(self) -> InlineUser:
        if self.windows is None and self.tasks is None:
            raise ValueError(f"user {self.name!r}: tasks is required without windows")
        if self.windows is None and isinstance(self.run_s, list):
            raise ValueError(f"user {self.name!r}: run_s [lo, hi] needs windows")
        return self


class ConstraintModel(StrictModel):
    """A documented constraint model for traces without constraints (see the module docstring)."""

    share: float = Field(default=0.5, ge=0, le=1)
    """Probability that a job (or task, see ``per``) is constrained."""
    classes: int | list[int] | dict[int, float] = 1
    """Number of machine classes a constrained job may use: an integer or ``[lo, hi]`` (uniform),
    or a mapping ``{k: share}``: the share of jobs that need ``k`` classes (UDRF paper, Fig. 8),
    matched as closely as the jobs' sizes allow (a job of ``n`` tasks pinned one class each needs
    at most ``n``; ``per: job`` only). The classes are drawn without replacement with
    probability proportional to each class's server count, among those that can hold the task.
    """
    per: Literal["job", "task"] = "job"
    """Whether the draw is made once per job or once per task."""
    model: Literal["pinned", "any-of"] = "pinned"
    """``pinned``: the job spans its classes and each task is pinned to one of them (``class=A``);
    ``any-of``: every task may use any of them (``class=A|B``).
    """

    @field_validator("classes")
    @classmethod
    def _classes(cls, v: int | list[int] | dict[int, float]) -> int | list[int] | dict[int, float]:
        if isinstance(v, dict):
            if not v or any(k < 1 or w < 0 for k, w in v.items()) or sum(v.values()) <= 0:
                raise ValueError(
                    f"classes must map numbers of classes >= 1 to shares >= 0 (not all 0), "
                    f"got {v!r}"
                )
            return v
        message = f"classes must be an integer >= 1 or [lo, hi], got {v!r}"
        return _checked_range(v, lambda lo, hi: 1 <= lo <= hi, message)

    @model_validator(mode="after")
    def _pinned_per_task(self) -> ConstraintModel:
        if self.model == "pinned" and self.per == "task" and self.classes != 1:
            raise ValueError(
                f"classes: {self.classes!r} with model 'pinned' and per 'task' (a pinned task "
                "uses one class: set classes: 1, per: job, or model: any-of)"
            )
        if isinstance(self.classes, dict) and self.per != "job":
            raise ValueError(
                f"classes: {self.classes!r} is a share per number of classes a job needs: "
                "set per: job"
            )
        return self


#: The keys of each trace format beyond the common ones (:class:`TraceCommon`), by format.
#: Filled in below from the format models; a key of another format is refused naming both.
_FORMAT_KEYS: dict[str, tuple[str, ...]] = {}


class TraceCommon(StrictModel):
    """The keys every trace format has: the window, the users' weights, complex-job rules,
    placement constraints and right-censoring. A key that belongs to another format is an error
    naming the key and both formats."""

    format: str
    """Kind of input; it decides which other keys the trace has (one model per format: the
    sections below)."""
    start_s: float = Field(default=0.0, ge=0)
    """Start of the simulated window in seconds of trace time; tasks submitted earlier are not
    simulated.
    """
    end_s: float | None = None
    """End of the window in seconds (tasks submitted from then on are not simulated) and the
    simulation's horizon unless ``collect.horizon_s`` is set; null: the end of the converted
    trace's data (``inline``: until every task is done; ``synthetic``: one second after the last
    submission).
    """
    weights: dict[str, float] | None = None
    """Weight (> 0) of trace users by name; users not listed get ``default_weight``."""
    default_weight: float = Field(default=1.0, gt=0)
    """Weight of every user without one."""
    dag: bool = True
    """Hold a task until its DAG parents (the ``parents`` column) have finished."""
    repetitions: int | list[int] = 1
    """Times each job runs: an integer, or ``[lo, hi]`` for a uniform integer per job drawn with the
    run's seed (UDRF paper, Section V).
    """
    repetition_mode: Literal["simultaneous", "sequential"] = "simultaneous"
    """``simultaneous``: the repetitions may run side by side, all released when the job enters the
    queue; ``sequential``: one after the other.
    """
    queue_jobs: int | None = Field(default=None, gt=0)
    """Capacity of the bounded job queue, in jobs (UDRF paper, Section V: 100); null: unbounded."""
    job_run_s: list[float] | None = None
    """``[lo, hi]``: replace the trace's run times by one uniform run time per job, in seconds (UDRF
    paper, Section V: 10-100 s); null: keep them.
    """
    constraints: Literal["trace", "none"] | ConstraintModel = "trace"
    """Placement constraints: ``trace`` uses the table's ``constraint`` column when it has one,
    ``none`` ignores constraints, a mapping draws a seeded constraint model for traces without
    constraints.
    """
    censored: Literal["hold", "complete"] = "hold"
    """Right-censored tasks (still running when the trace ends): ``hold`` keeps their resources
    until the horizon and never completes them; ``complete`` runs their observed span (a lower
    bound) and counts them as completed.
    """

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            fmt = data.get("format")
            for key in data:
                if key in cls.model_fields:
                    continue
                owners = [f for f, keys in _FORMAT_KEYS.items() if key in keys]
                if owners:
                    named = [repr(f) for f in owners]
                    which = (
                        f"format {named[0]}"
                        if len(named) == 1
                        else f"formats {', '.join(named[:-1])} and {named[-1]}"
                    )
                    raise ValueError(f"{key}: not a key of format {fmt!r} (it belongs to {which})")
                raise ValueError(unknown_key(key, cls.model_fields))
        return data

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraints(cls, v: Any) -> Any:
        if isinstance(v, dict):
            try:
                return ConstraintModel.model_validate(v)
            except ValidationError as exc:
                raise ValueError(format_error(exc)) from None
        if v not in ("trace", "none") and not isinstance(v, ConstraintModel):
            raise ValueError(
                f"constraints must be 'trace', 'none' or {{share, classes, per}}, got {v!r}"
            )
        return v

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        for user, w in (v or {}).items():
            if not w > 0:
                raise ValueError(f"weight of user {user!r} must be > 0, got {w!r}")
        return v

    @field_validator("repetitions")
    @classmethod
    def _reps(cls, v: int | list[int]) -> int | list[int]:
        return _checked_range(
            v,
            lambda lo, hi: 1 <= lo <= hi,
            f"repetitions must satisfy 1 <= lo <= hi, got {v!r}",
            not_range=f"repetitions must be an integer or [lo, hi], got {v!r}",
        )

    @field_validator("job_run_s")
    @classmethod
    def _run(cls, v: list[float] | None) -> list[float] | None:
        if v is not None and (len(v) != 2 or not 0 <= v[0] <= v[1]):
            raise ValueError(f"job_run_s must be [lo, hi] with 0 <= lo <= hi, got {v!r}")
        return v

    @model_validator(mode="after")
    def _window(self) -> TraceCommon:
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError(f"end_s {self.end_s} must be greater than start_s {self.start_s}")
        return self

    @property
    def is_alibaba(self) -> bool:
        """Whether the format is one of the Alibaba traces."""
        return self.format.startswith("alibaba")

    @property
    def complex_jobs(self) -> bool:
        """Whether repetitions, a job queue or new run times are configured."""
        return self.repetitions != 1 or self.queue_jobs is not None or self.job_run_s is not None


class GoogleTrace(TraceCommon):
    """``format: google-2011``: the official Google cluster-usage trace (2011), converted once
    to the canonical tables and cached under ``cache_dir``."""

    format: Literal["google-2011"]
    """The Google 2011 trace."""
    path: str
    """Folder with the official ``task_events`` (and ``machine_events``) part files; relative to
    the config file's folder.
    """
    parts: str | None = None
    """The task_events parts to read, e.g. ``"0-13"``; null: every part present."""
    cache_dir: str | None = None
    """Folder where the trace is converted once and cached; null: the user's cache folder,
    ``$FAIRSIM_CACHE_DIR`` or ``$XDG_CACHE_HOME/fairsim/traces`` (``~/.cache/fairsim/traces``),
    never the working directory (docs/traces.md, "Trace cache").
    """
    bad_row_threshold: float = Field(default=0.5, ge=0, le=1)
    """Largest fraction of malformed or unparseable rows a converted table may have; above it the
    conversion is refused, naming the first bad row.
    """


class AlibabaTrace(TraceCommon):
    """``format: alibaba-2017 | alibaba-2018 | alibaba-2018-spar | alibaba-gpu-2023``: an official
    Alibaba trace (``docs/traces-alibaba.md``), converted once and cached under ``cache_dir``."""

    format: Literal["alibaba-2017", "alibaba-2018", "alibaba-2018-spar", "alibaba-gpu-2023"]
    """Which Alibaba trace."""
    path: str
    """Folder of the official files; relative to the config file's folder."""
    cache_dir: str | None = None
    """As for ``google-2011``: where the trace is converted once and cached (null: the user's
    cache folder)."""
    bad_row_threshold: float = Field(default=0.5, ge=0, le=1)
    """As for ``google-2011``: the largest fraction of bad rows a converted table may have."""


class CanonicalTrace(TraceCommon):
    """``format: canonical``: a converted ``tasks.parquet`` (``fairsim trace convert``)."""

    format: Literal["canonical"]
    """A table in the canonical schema."""
    path: str
    """The ``tasks.parquet`` or a folder holding one; relative to the config file's folder."""


class SyntheticTrace(TraceCommon):
    """``format: synthetic``: ``n_tasks`` generated tasks, drawn with the run's seed."""

    format: Literal["synthetic"]
    """Generated tasks."""
    n_tasks: int = Field(gt=0)
    """Number of generated tasks."""
    duration_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """The arrival window in seconds; null: it scales with ``n_tasks`` at the Google sample's 8.675
    tasks/s (613,827 tasks in 70,756 s), so a larger workload is a longer trace at the same load
    per hour, not a denser one.
    """
    model: Literal["google", "complex"] = "google"
    """``google`` (independent tasks fitted to the Google sample) or ``complex`` (jobs with DAG
    parents and instance counts).
    """
    cache_dir: str | None = None
    """Folder where a ``complex`` workload is written once and cached; null: the user's cache
    folder, ``$FAIRSIM_CACHE_DIR`` or ``$XDG_CACHE_HOME/fairsim/traces``
    (``~/.cache/fairsim/traces``), never the working directory (docs/traces.md, "Trace cache").
    """


class InlineTrace(TraceCommon):
    """``format: inline``: users listed in the config (the DRFH paper's Fig. 4 scenario, the
    PS-DSF paper's Section V users)."""

    format: Literal["inline"]
    """Users listed in the config."""
    users: list[InlineUser] = Field(min_length=1)
    """The users and their tasks."""

    @model_validator(mode="after")
    def _users(self) -> InlineTrace:
        names = [u.name for u in self.users]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"users: duplicate user names {dup}")
        both = sorted(
            u.name for u in self.users if u.weight != 1.0 and u.name in (self.weights or {})
        )
        if both:
            raise ValueError(
                f"weights: users {both} also have a weight in trace.users; give it once"
            )
        return self


#: Every trace format's model.
TRACE_MODELS: tuple[type[TraceCommon], ...] = (
    GoogleTrace,
    AlibabaTrace,
    CanonicalTrace,
    SyntheticTrace,
    InlineTrace,
)
for _model in TRACE_MODELS:
    for _fmt in typing.get_args(_model.model_fields["format"].annotation):
        _FORMAT_KEYS[_fmt] = tuple(
            k for k in _model.model_fields if k not in TraceCommon.model_fields
        )
#: The trace formats, in the order of the models.
TRACE_FORMATS: tuple[str, ...] = tuple(_FORMAT_KEYS)

#: Where the tasks come from: one model per ``format`` (pydantic's discriminated union), so a key
#: of another format is an error naming the key and the format.
TraceConfig = Annotated[
    GoogleTrace | AlibabaTrace | CanonicalTrace | SyntheticTrace | InlineTrace,
    Field(discriminator="format"),
]


class ServerClass(StrictModel):
    """``count`` identical servers of capacity ``capacity`` (one entry per resource)."""

    name: str
    """Class name (unique), referred to by ``trace.users[].eligible``."""
    count: int = Field(gt=0)
    """Number of identical servers of this class."""
    capacity: list[float]
    """Capacity of each server, one number >= 0 per resource (at least one positive)."""

    @field_validator("capacity")
    @classmethod
    def _cap(cls, v: list[float]) -> list[float]:
        if not v or any(not c >= 0 for c in v):
            raise ValueError(f"capacity must be a list of numbers >= 0, got {v!r}")
        if not any(c > 0 for c in v):
            raise ValueError(f"capacity must have a positive entry, got {v!r}")
        return v


class ClusterConfig(StrictModel):
    """The server pool: ``servers`` drawn from ``source`` with the run's (or this) seed.

    ``table-i``: i.i.d. draws from the DRFH paper's Table I. ``machine-events``: the real Google
    machines. ``trace``: the machines of the converted trace's ``servers.parquet`` (Alibaba), all of
    them, or ``servers`` drawn without replacement. ``classes``: explicit server classes (name,
    count, capacity), in order (PS-DSF paper, Section V); then ``servers`` must not be given.
    """

    servers: int | None = Field(default=None, gt=0)
    """Number of servers to draw (``table-i``, ``machine-events``; for ``trace``: drawn without
    replacement, null: every machine); must not be given with ``classes``.
    """
    source: Literal["table-i", "machine-events", "trace"] = "table-i"
    """Where servers come from: i.i.d. draws from the DRFH paper's Table I, the real Google machines
    (``machine-events``), or the converted trace's ``servers.parquet`` (``trace``).
    """
    path: str | None = None
    """``machine-events`` only: the Google trace folder with ``machine_events``; null:
    ``trace.path``.
    """
    seed: int | None = Field(default=None, ge=0)
    """Seed of the pool draw; null: the run's ``seed`` (its ``pool`` component)."""
    classes: list[ServerClass] | None = None
    """Explicit server classes, in order (PS-DSF paper, Section V); replaces ``servers`` and
    ``source``.
    """

    @model_validator(mode="after")
    def _classes(self) -> ClusterConfig:
        if self.classes is not None:
            if self.servers is not None:
                raise ValueError("servers must not be given with classes")
            names = [c.name for c in self.classes]
            if not names:
                raise ValueError("classes: the list is empty (give at least one server class)")
            if len(set(names)) != len(names):
                raise ValueError(f"classes must have distinct names, got {names}")
        return self

    @field_validator("servers", mode="before")
    @classmethod
    def _positive(cls, v: Any) -> Any:
        if isinstance(v, int | float) and not isinstance(v, bool) and v <= 0:
            raise ValueError(f"servers must be a positive integer, got {v!r}")
        return v


class FairnessConfig(StrictModel):
    """Fairness over time (``collect.fairness``, docs/fairness.md): at every multiple of
    ``interval_s`` from the start, each active user's online allocation against the exact
    mechanism's allocation of the same users, demands, task bounds and pool."""

    interval_s: float = Field(default=600.0, gt=0)
    """Seconds between sampled instants, from the start of the window to the horizon (included);
    each instant takes the state after every event at or before it. At most
    :data:`MAX_FAIRNESS_INSTANTS` instants over the simulated window."""
    reference: str = "auto"
    """The exact mechanism to compare against: ``auto`` (``hdrf`` for every scheduler of a
    scenario with ``queues``; else the mechanism each scheduler implements: ``drfh`` for
    ``ff-drfh``, ``bf-drfh``, ``slots`` and any scheduler without one) or one mechanism of
    ``fairsim solve`` for every scheduler (``drf``, ``drfh``, ``c-drfh``, ``tsf``, ``psdsf``,
    ``af``, ``pf``, ``bmf``, ``lmm-mms``, ``hdrf``)."""

    @field_validator("reference")
    @classmethod
    def _reference(cls, v: str) -> str:
        from fairsim.schedulers.exact import EXACT, JOB_EXACT

        if v == "auto" or v in EXACT:
            return v
        known = ", ".join(["auto", *EXACT])
        if v in JOB_EXACT:
            raise ValueError(
                f"{v!r} takes jobs over machine classes, which a "
                f"run's users do not give (known: {known}; auto uses drfh for udrf)"
            )
        close = difflib.get_close_matches(v, ["auto", *EXACT], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{v!r} is not an exact mechanism{hint} (known: {known})")


class PreemptionLoopConfig(StrictModel):
    """When a task is in a preemption loop (``collect.preemption_loops``, docs/preemption.md):
    evicted ``evictions`` times within ``window_s`` seconds. Only runs of schedulers that
    preempt apply it; they report the tasks found under ``preemption_loops`` in
    ``summary.json``."""

    evictions: int = Field(default=3, ge=2)
    """Evictions of one task that make a loop (at least 2)."""
    window_s: float = Field(default=600.0, gt=0)
    """The longest span, in seconds, from the first to the last of those evictions."""


class CollectConfig(StrictModel):
    """What the collectors record."""

    utilization_interval_s: float = Field(default=60.0, gt=0)
    """Spacing of the utilisation grid in seconds (``utilization.parquet`` and its figure); at
    most :data:`MAX_UTILIZATION_SAMPLES` samples over the simulated window."""
    user_shares: bool = False
    """Also record every user's share of each resource on the grid (``user_shares.parquet``; DRFH
    paper, Fig. 4).
    """
    horizon_s: float | None = Field(default=None, gt=0)
    """End of the simulation in seconds; null: the end of the trace window (``trace.end_s``).
    Must be after ``trace.start_s`` (and after where a converted trace's data starts): a horizon
    at or before the start would simulate no task and is refused."""
    stream_tasks: bool = False
    """The row order of ``tasks.parquet``: ``false`` (default) arrival order, ``true`` the order
    tasks ended.

    A run with an output folder (``fairsim run --out``, ``simulate(..., out=DIR)``) writes each
    ended task to ``tasks.parquet`` while it goes on (:mod:`fairsim.simulator.stream`): memory
    grows with the live tasks, not with every task seen (whole traces). With ``false`` the rows
    are spilled by blocks of task ids and written back in arrival order at the end: the same
    bytes as a run that keeps every task in memory. ``true`` skips that pass (a little faster;
    same rows and values in another order) and is refused without an output folder and with a
    job gate. Without an output folder, and where a scenario cannot stream (a job gate: DAG
    parents under ``trace.dag``, ``trace.repetitions`` or ``trace.queue_jobs``;
    ``collect.stranded``; ``collect.sharing_incentive``), every task is kept in memory until
    the end of the run; ``fairsim run`` then says why at the start, with an estimate of the
    memory (about 160 bytes a task: 480 MB for 3,000,000 tasks), as a warning from about 1.7
    million tasks. Placement constraints and the scheduler ``recorded`` stream.
    """
    sharing_incentive: bool = False
    """After each scheduler's run, run every user's tasks alone, with the same scheduler, on a
    dedicated cloud of 1/n of the pool (n users; DRFH paper, Section IV-D, evaluated as in
    Section VI, Fig. 8) and compare: ``sharing_incentive.parquet`` in the scheduler's folder
    (per user: tasks completed and mean JCT, shared vs dedicated, over the jobs finished in both;
    ``better_off``: at least as many tasks completed in the shared run, the paper's reading) and
    ``sharing_incentive`` in its ``summary.json`` (users better and worse off, the fraction).
    Dedicated clouds: ``k/n`` servers drawn i.i.d. from Table I for ``source: table-i``, else a
    proportional share of the pool (of each class of identical servers, 1/n of its count, the
    fraction rounded up at random); at least one server each, so with more users than servers
    the clouds together hold more servers than the pool. The dedicated runs sample utilisation
    on a grid 60 times coarser (at most the window; not reported). One run per user and
    scheduler: it multiplies the cost of a run.
    Not supported with ``stream_tasks: true``, a job gate (``trace.dag``, ``trace.repetitions``,
    ``trace.queue_jobs``), placement constraints or resources other than ``cpu, mem``; the
    shared runs keep their tasks in memory.
    """
    stranded: bool = False
    """Record stranded resources: at each utilisation grid point where a task waits, the free
    capacity of the servers on which no waiting user's oldest waiting task fits (its demand at
    most the server's free amount in every resource and, with placement constraints, the server
    allowed), summed per resource, as a fraction of the pool's capacity. Adds a
    ``stranded_<resource>`` column to ``utilization.parquet`` (NaN where no task waits) and
    ``stranded`` (the mean over the grid points where a task waits, per resource) to
    ``summary.json``. Fit is by free capacity, not by a scheduler's own measure (slots). Not
    supported with ``stream_tasks: true`` or a job gate; the runs keep their tasks in memory.
    """

    fairness: FairnessConfig | None = None
    """Fairness over time (docs/fairness.md): ``{interval_s: 600, reference: auto}`` writes
    ``fairness.parquet`` (per sampled instant and active user: tasks running and waiting, demand
    and share of each resource, the global dominant share and the reference mechanism's) and
    ``fairness_summary.parquet`` (per instant: active users, Jain's index of the raw dominant
    shares, largest deficit, L1 distance, sharing-incentive violations, envious pairs, Jain's
    index of entitlement fractions and the users with reference 0) into each scheduler's folder, and
    their time averages under ``fairness`` in its ``summary.json``. Null (default): off."""

    preemption_loops: PreemptionLoopConfig | None = None
    """The rule that finds preemption loops in the runs of schedulers that preempt
    (docs/preemption.md): ``{evictions: 3, window_s: 600}``, a task evicted 3 times within 600
    s. Null (default): that rule."""

    @model_serializer(mode="wrap")
    def _omit_new_defaults(self, handler: Any) -> Any:
        # keys added after results were published: left out while off, so that the resolved
        # config (config.yaml) and the config hash of every earlier scenario stay the same
        data = handler(self)
        for key in ("sharing_incentive", "stranded", "fairness", "preemption_loops"):
            if not data.get(key):
                data.pop(key, None)
        return data


def _round_up(x: float, digits: int = 2) -> float:
    """``x`` > 0 rounded up to ``digits`` significant digits."""
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(x / step) * step


def _count(n: int) -> str:
    """A count for a message: with thousands separators, in scientific notation when huge."""
    return f"{n:,}" if n < 10**15 else f"{float(n):.3g}"


def check_horizon(horizon_s: float | None, start_s: float, where: str | None = None) -> None:
    """Refuse a horizon (``collect.horizon_s``) at or before the start of the window: the
    simulation would end before any task is simulated (an empty run, or an engine error).

    Parameters
    ----------
    horizon_s : float or None
        ``collect.horizon_s`` (None: no horizon, nothing to check).
    start_s : float
        Where the simulated window starts.
    where : str, optional
        What ``start_s`` is, for the message; default ``trace.start_s``.

    Raises
    ------
    ValueError
        One line naming ``collect.horizon_s`` and the start of the window with their values.
    """
    if horizon_s is not None and not horizon_s > start_s:
        where = where or f"trace.start_s {start_s:g} s"
        raise ValueError(
            f"collect.horizon_s: {horizon_s:g} s is not after the start of the window, {where}: "
            "the simulation would end before any task is simulated (give a later horizon)"
        )


def check_first_submission(horizon_s: float | None, first_s: float | None, where: str) -> None:
    """Refuse a horizon (``collect.horizon_s``) before the first submission in the window: the
    simulation would end before any task is submitted (an empty run: ``0/0 tasks completed``).

    Parameters
    ----------
    horizon_s : float or None
        ``collect.horizon_s`` (None: no horizon, nothing to check).
    first_s : float or None
        The first submission inside the window (None: not known before running).
    where : str
        Where that submission comes from, for the message (``trace.users.0.join_s``, ``the
        trace's first task in the window``).

    Raises
    ------
    ValueError
        One line naming ``collect.horizon_s`` and the first submission with their values.
    """
    if horizon_s is not None and first_s is not None and horizon_s < first_s:
        raise ValueError(
            f"collect.horizon_s: {horizon_s:g} s is before the first submission, at {first_s:g} "
            f"s ({where}): the simulation would end before any task is submitted (give a later "
            "horizon)"
        )


def check_samples(
    cfg: RunConfig, start_s: float, horizon_s: float, *, open_end: bool = False
) -> None:
    """Refuse a utilisation interval that would give no sample after the start, or more than
    :data:`MAX_UTILIZATION_SAMPLES` samples, and a fairness interval that would sample more
    than :data:`MAX_FAIRNESS_INSTANTS` instants.

    Parameters
    ----------
    cfg : RunConfig
    start_s, horizon_s : float
        The simulated window, in seconds.
    open_end : bool
        The run has no horizon and lasts until every task is done (an ``inline`` trace without
        ``end_s``): ``horizon_s`` (the last submission) is only a lower bound of its end, so an
        interval longer than ``horizon_s - start_s`` is not refused (the run may well last
        longer); the caps on the number of samples still apply.

    Raises
    ------
    ValueError
        Naming ``collect.utilization_interval_s`` or ``collect.fairness.interval_s``, the
        value, the count over the window and the limit.

    See Also
    --------
    fairsim.scenario.limits.check_limits : the sizes this machine can hold (samples included).
    """
    dt = cfg.collect.utilization_interval_s
    window = horizon_s - start_s
    if not math.isfinite(window) or window <= 0:
        return
    if dt > window and not open_end:
        trace = cfg.trace
        hint = (
            f"; {trace.n_tasks} synthetic tasks arrive at the Google sample's rate within "
            "that window: give trace.duration_s for a longer one"
            if isinstance(trace, SyntheticTrace) and trace.duration_s is None
            else ""
        )
        raise ValueError(
            f"collect.utilization_interval_s: {dt:g} s is longer than the simulated window of "
            f"{window:g} s ({start_s:g} s to {horizon_s:g} s): no utilisation sample after the "
            f"start (utilization.parquet and its figure would show the start only){hint}"
        )
    _check_grid(
        "collect.utilization_interval_s",
        dt,
        window,
        MAX_UTILIZATION_SAMPLES,
        "utilisation samples",
        "record",
        "mean utilisation is exact at any interval; ",
    )
    fair = cfg.collect.fairness
    if fair is not None:
        _check_grid(
            "collect.fairness.interval_s",
            fair.interval_s,
            window,
            MAX_FAIRNESS_INSTANTS,
            "instants",
            "sample",
            "each instant solves the reference mechanism; ",
        )


def _check_grid(
    field: str, step: float, window: float, limit: int, points: str, verb: str, why: str = ""
) -> None:
    """Refuse a step (seconds) that puts more than ``limit`` points on a grid over ``window``
    seconds, the start included: ``<field>: <step> s gives N <points> over <window> s, more than
    the <limit> a run may <verb> (<why><wider> s stays within)`` (``ValueError``), with the
    shortest step, rounded up to 2 significant digits, that stays within."""
    if (count := math.floor(window / step) + 1) > limit:
        wider = _round_up(window / (limit - 1))
        raise ValueError(
            f"{field}: {step:g} s gives {_count(count)} {points} over {window:g} s, more than "
            f"the {limit:,} a run may {verb} ({why}{wider:g} s stays within)"
        )


def scheduler_period(spec: SchedulerSpec) -> tuple[str, float] | None:
    """The tick period of a scheduler of the config, as ``(parameter, seconds)``, or None.

    The parameter is the one its class names
    (:attr:`~fairsim.simulator.scheduler.Scheduler.period_parameter`); its value is the one given,
    else the class's default. None for a scheduler that does not tick, or whose period is not a
    number > 0 (``udrf``'s ``period_s: 0``: a pass at every event).
    """
    name = getattr(spec.cls, "period_parameter", None)
    if name is None:
        return None
    value = spec.params.get(name, inspect.Parameter.empty)
    if value is inspect.Parameter.empty:
        try:
            value = inspect.signature(spec.cls).parameters[name].default
        except (KeyError, TypeError, ValueError):
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return name, float(value)


def check_ticks(cfg: RunConfig, start_s: float, horizon_s: float) -> None:
    """Refuse a scheduler period that would give more than :data:`MAX_SCHEDULER_TICKS` ticks over
    the simulated window.

    Parameters
    ----------
    cfg : RunConfig
    start_s, horizon_s : float
        The simulated window, in seconds (with an open end, the last submission: a lower bound
        of the run's end, so what is refused would be refused over the whole run too).

    Raises
    ------
    ValueError
        ``schedulers.<i>.<parameter>: <value> s gives N ticks of <scheduler> over T s, more than
        the 10,000,000 a run may make (... s stays within)``.
    """
    window = horizon_s - start_s
    if not math.isfinite(window) or window <= 0:
        return
    for i, spec in enumerate(cfg.schedulers):
        period = scheduler_period(spec)
        if period is None:
            continue
        name, dt = period
        _check_grid(
            f"schedulers.{i}.{name}",
            dt,
            window,
            MAX_SCHEDULER_TICKS,
            f"ticks of {spec.label}",
            "make",
        )


def _scheduler_entry(spec: SchedulerSpec) -> str | dict[str, Any]:
    return spec.config_entry()


#: One entry of ``schedulers``: validated into a
#: :class:`~fairsim.schedulers.registry.SchedulerSpec`, written back (YAML, JSON, the config
#: hash) as the name, alias or mapping it was given as (:meth:`SchedulerSpec.config_entry`).
SchedulerEntry = Annotated[
    SchedulerSpec,
    PlainValidator(resolve),
    PlainSerializer(_scheduler_entry),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "object"}]}),
]


#: Named priority bands a ``leaves.tiers`` entry may give instead of ``[lo, hi]``: the Google
#: 2011 trace's (:data:`fairsim.traces.schema.GOOGLE_PRIORITY_BANDS`).
TIER_BANDS: dict[str, tuple[int, int]] = dict(GOOGLE_PRIORITY_BANDS)

#: The largest priority a canonical tasks table can hold (its ``priority`` column is int32;
#: Google 2011's are 0-11): the bound of a ``leaves.tiers`` band.
PRIORITY_MAX = 2**31 - 1


class LeafRule(StrictModel):
    """How the tasks of a scenario with a queue tree reach its leaves (``leaves``,
    docs/queues.md).

    ``by: tier``: a task goes to the queue whose band of priorities (``tiers``) holds its
    priority (the trace's ``priority`` column), and each user's tasks in that queue are one
    leaf: a leaf per (queue, user). ``by: user``: every user is one leaf, in the queue
    ``users`` names for it, else in ``default`` (null: at the root); without ``users`` and
    ``default`` every user hangs at the root, a one-level tree (the users as today).
    """

    by: Literal["tier", "user"]
    """``tier``: by the task's priority band, then by user; ``user``: by user alone."""
    tiers: dict[str, str | list[int]] | None = None
    """``by: tier`` only: each queue's band of priorities, a name (``free`` 0-1, ``middle``
    2-8, ``production`` 9-11: the Google 2011 trace's bands) or ``[lo, hi]`` (inclusive, ``hi``
    at most 2147483647: the priority column is int32); every task's priority must fall in exactly
    one band.
    """
    users: dict[str, str] | None = None
    """``by: user`` only: the queue of each user named (user -> queue id); every user named
    must submit a task in the simulated window."""
    default: str | None = None
    """``by: user`` only: the queue of the users ``users`` does not name; null: the root."""

    def bands(self) -> dict[str, tuple[int, int]]:
        """Each queue's band of priorities, ``[lo, hi]`` inclusive (``by: tier``)."""
        out: dict[str, tuple[int, int]] = {}
        for queue, band in (self.tiers or {}).items():
            out[queue] = TIER_BANDS[band] if isinstance(band, str) else (band[0], band[1])
        return out


def format_resources(trace: TraceConfig) -> tuple[str, ...] | None:
    """The resources of a trace format, when the format fixes them (None: ``canonical``, whose
    table names its own)."""
    if isinstance(trace, CanonicalTrace):
        return None
    if isinstance(trace, AlibabaTrace) and trace.format == "alibaba-gpu-2023":
        return ("cpu", "mem", "gpu")
    return RESOURCES


def check_tree(
    queues: list[dict[str, Any]], leaves: LeafRule, resources: tuple[str, ...] | None
) -> QueueTree:
    """Validate a scenario's queue tree and leaf rule before the pool is known.

    The tree is read by :func:`fairsim.schedulers.exact.instance.parse_queues` (the one
    definition of a queue tree and its errors, shared with ``fairsim solve hdrf``) without the
    pool: its
    amounts are checked against the pool when the scenario runs (:func:`queue_tree`). With a
    format whose resources are not known here (``canonical``), the amounts wait for the run too.

    Returns
    -------
    QueueTree
        Amounts in pool units as given, shares as fractions (not for use: the run's tree is
        :func:`queue_tree`'s).

    Raises
    ------
    ValueError
        One line naming the field: ``queues[i]...`` as ``fairsim solve`` words it, or
        ``leaves...`` (an unknown queue, an unknown tier, overlapping bands, a key of the other
        rule).
    """
    if resources is None:  # the table names its resources: check the amounts when it is read
        queues = [
            {k: v for k, v in q.items() if k not in QUEUE_KEYS[3:]} if isinstance(q, dict) else q
            for q in queues
        ]
        resources = ()
    try:
        tree = parse_queues(queues, [], list(resources), None)
    except InstanceError as exc:
        raise ValueError(str(exc)) from None
    assert tree is not None  # queues is a list
    ids = tree.ids
    known = ", ".join(ids) if ids else "none declared"
    other = {"tier": ("users", "default"), "user": ("tiers",)}[leaves.by]
    for key in other:
        if getattr(leaves, key) is not None:
            raise ValueError(f"leaves.{key}: not a key of 'by: {leaves.by}'")
    if leaves.by == "tier":
        if not leaves.tiers:
            raise ValueError(
                "leaves.tiers: required with 'by: tier' (each queue's band of priorities)"
            )
        names = ", ".join(TIER_BANDS)
        for queue, band in leaves.tiers.items():
            if queue not in ids:
                raise ValueError(f"leaves.tiers: unknown queue {queue!r} (known: {known})")
            ok = (isinstance(band, str) and band in TIER_BANDS) or (
                isinstance(band, list) and len(band) == 2 and 0 <= band[0] <= band[1]
            )
            if not ok:
                raise ValueError(
                    f"leaves.tiers.{queue}: unknown tier {band!r} (known: {names}, or [lo, hi] "
                    "priorities with 0 <= lo <= hi)"
                )
        # by intervals, not priority by priority: a band may be wide
        earlier: list[tuple[str, int, int]] = []
        for queue, (lo, hi) in leaves.bands().items():
            if hi > PRIORITY_MAX:
                raise ValueError(
                    f"leaves.tiers.{queue}: [{lo}, {hi}] (a priority is a 32-bit integer: at "
                    f"most {PRIORITY_MAX})"
                )
            common = [(max(lo, a), prev) for prev, a, b in earlier if max(lo, a) <= min(hi, b)]
            if common:
                p, prev = min(common)
                raise ValueError(
                    f"leaves.tiers: priority {p} is in the bands of both {prev!r} and {queue!r}"
                )
            earlier.append((queue, lo, hi))
    else:
        for user, queue in (leaves.users or {}).items():
            if queue not in ids:
                raise ValueError(f"leaves.users.{user}: unknown queue {queue!r} (known: {known})")
        if leaves.default is not None and leaves.default not in ids:
            raise ValueError(f"leaves.default: unknown queue {leaves.default!r} (known: {known})")
    return tree


class RunConfig(StrictModel):
    """A complete ``fairsim run`` scenario."""

    name: str
    """Scenario name, a single folder name: the default output folder is ``results/<name>``."""
    seed: int = Field(default=1, ge=0)
    """Seed of the run (>= 0); one SeedSequence per run, spawned per component (pool, workload,
    jobs, constraints).
    """
    trace: TraceConfig
    """Where the tasks come from."""
    cluster: ClusterConfig = ClusterConfig()
    """The server pool."""
    schedulers: list[SchedulerEntry] = Field(min_length=1)
    """Schedulers to compare, each simulated on the same workload and an identical copy of the
    pool: registered names (``fairsim run --help`` lists them; ``slots-14`` style aliases) or
    ``{name: ..., parameter: value}`` mappings validated against the scheduler's own parameters,
    e.g. ``[ff-drfh, {name: psdsf, period_s: 2}, {name: slots, slots: 14}]``; from Python also a
    ``fairsim.Scheduler`` subclass. Held as validated scheduler specs (name, class, parameters,
    label). Results go to one folder per scheduler, named by its label (``psdsf-2``).
    """
    collect: CollectConfig = CollectConfig()
    """What the collectors record."""
    queues: list[dict[str, Any]] | None = None
    """A tree of queues the cluster is shared among (docs/queues.md):
    the queue objects of ``fairsim solve hdrf``'s instance, ``{id, parent, weight, guarantee |
    guarantee_share, limit | limit_share}`` (amounts one per resource, in the pool's units or
    as fractions of the pool), with ``leaves`` saying how the tasks reach the leaves. Null
    (default): the users share the cluster as one flat set. With a tree, the hierarchical
    schedulers (``hdrf``) share by it, fairness over time compares every run with ``hdrf`` and
    each run writes per-queue rows (``queues.parquet``).
    """
    leaves: LeafRule | None = None
    """How the tasks reach the tree's leaves (required with ``queues``): ``{by: tier, tiers:
    {queue: band}}`` or ``{by: user, users: {user: queue}, default: queue}``."""

    @model_serializer(mode="wrap")
    def _omit_no_tree(self, handler: Any) -> Any:
        # keys added after results were published: left out when there is no tree, so that the
        # resolved config (config.yaml) and the config hash of every flat scenario stay the same
        data = handler(self)
        for key in ("queues", "leaves"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @model_validator(mode="after")
    def _tree(self) -> RunConfig:
        if self.queues is None and self.leaves is None:
            return self
        if self.leaves is None:
            raise ValueError(
                "leaves: required with queues (how tasks reach the tree's leaves: {by: tier, "
                "tiers: {queue: band}} or {by: user, users: {user: queue}})"
            )
        if self.queues is None:
            raise ValueError("queues: required with leaves (the tree the leaves hang in)")
        check_tree(self.queues, self.leaves, format_resources(self.trace))
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        try:
            return check_name(v)
        except ValueError as exc:
            raise ValueError(str(exc).removeprefix("name: ")) from None

    @model_validator(mode="after")
    def _window(self) -> RunConfig:
        check_horizon(self.collect.horizon_s, self.trace.start_s)
        if isinstance(self.trace, InlineTrace) and not any(u.windows for u in self.trace.users):
            lo, hi = self.trace.start_s, self.trace.end_s or math.inf
            joins = [(u.join_s, j) for j, u in enumerate(self.trace.users) if lo <= u.join_s < hi]
            if joins:
                first, j = min(joins)
                check_first_submission(self.collect.horizon_s, first, f"trace.users.{j}.join_s")
        end = self.collect.horizon_s or self.trace.end_s
        if end is not None:
            check_samples(self, self.trace.start_s, end)
            check_ticks(self, self.trace.start_s, end)
        return self

    @model_validator(mode="after")
    def _eligible(self) -> RunConfig:
        classes = [c.name for c in self.cluster.classes or []]
        users = self.trace.users if isinstance(self.trace, InlineTrace) else []
        for j, u in enumerate(users):
            for name in u.eligible or []:
                if name not in classes:
                    known = ", ".join(classes) if classes else "none: cluster.classes is not set"
                    raise ValueError(
                        f"trace.users.{j}.eligible: unknown server class {name!r} "
                        f"(classes: {known})"
                    )
        return self

    @field_validator("schedulers", mode="before")
    @classmethod
    def _known(cls, entries: Any) -> Any:
        if not isinstance(entries, list):
            return entries  # pydantic refuses it
        out: list[SchedulerSpec] = []
        seen: dict[str, int] = {}
        for i, entry in enumerate(entries):
            if not isinstance(entry, str | dict | type | SchedulerSpec):
                raise ValueError(
                    f"schedulers.{i}: {entry!r} (expected a scheduler name, a mapping "
                    "{name: ..., parameter: value} or a fairsim.Scheduler subclass)"
                )
            try:
                spec = resolve(entry)
            except FairsimError as exc:
                if isinstance(entry, str):
                    raise ValueError(str(exc)) from None  # "schedulers: unknown scheduler ..."
                raise ValueError(f"schedulers.{i}: {exc}") from None
            if spec.label in seen:
                raise ValueError(
                    f"schedulers.{i}: duplicate scheduler {spec.label!r} (entry {seen[spec.label]} "
                    "has the same result folder; remove one or give it another label)"
                )
            seen[spec.label] = i
            out.append(spec)
        return out

    def scheduler_specs(self) -> list[SchedulerSpec]:
        """The validated schedulers (:class:`fairsim.schedulers.registry.SchedulerSpec`: name,
        class, parameters, label), in the order of ``schedulers``."""
        return list(self.schedulers)

    def scheduler_labels(self) -> list[str]:
        """The schedulers' labels: their result folders (``OUT/<label>/``)."""
        return [spec.label for spec in self.schedulers]

    def config_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the resolved config, canonical JSON."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def to_yaml(self, *, base: Path | None = None, folder: Path | None = None) -> str:
        """The resolved config as YAML (every default filled in; the trace's own keys right
        after its ``format``, then the keys every format has).

        Parameters
        ----------
        base : Path, optional
            The folder the config's relative paths are relative to (its file's folder; the
            working directory when None).
        folder : Path, optional
            Where the YAML is written: a relative path of :data:`PATH_KEYS` is then given
            relative to this folder (an absolute or ``~`` path is kept as written), so that
            the written file, run again, reads the same files. Without it the paths are
            written as given.

        Returns
        -------
        str
            YAML text. With ``folder``, its :meth:`config_hash` when read back differs from
            this config's where a path was rewritten: the hash is that of the config as given.
        """
        data = self.model_dump(mode="json")
        if folder is not None:
            for key in PATH_KEYS:
                section, _, field = key.partition(".")
                node = data.get(section)
                raw = node.get(field) if isinstance(node, dict) else None
                if isinstance(raw, str) and raw:
                    node[field] = relative_to_folder(raw, base, folder)  # type: ignore[index]
        trace = data["trace"]
        own = _FORMAT_KEYS[trace["format"]]
        data["trace"] = {
            "format": trace["format"],
            **{k: trace[k] for k in own},
            **{k: v for k, v in trace.items() if k != "format" and k not in own},
        }
        return yaml.safe_dump(data, sort_keys=False)


def relative_to_folder(raw: str, base: Path | None, folder: Path) -> str:
    """A config path as seen from ``folder``: a relative ``raw`` (relative to ``base``, the
    working directory when None) re-expressed relative to ``folder`` (symbolic links resolved,
    so that ``..`` walks the real folders); an absolute or ``~`` path unchanged, and the
    absolute path where no relative one exists (another drive).

    Examples
    --------
    >>> relative_to_folder("../shared/t", Path("/w/repo/configs"), Path("/w/repo/results/x"))
    '../../shared/t'
    >>> relative_to_folder("/data/t", Path("/w/repo/configs"), Path("/w/repo/results/x"))
    '/data/t'
    """
    if Path(raw).expanduser().is_absolute():
        return raw
    target = os.path.realpath(Path(base if base is not None else os.getcwd()) / raw)
    try:
        rel = os.path.relpath(target, os.path.realpath(folder))
    except ValueError:  # pragma: no cover - Windows: another drive
        return target
    return Path(rel).as_posix()


def value_text(value: Any) -> str:
    """A config value for people, as YAML writes it: ``null``, ``true``, ``2000``, ``0.5``, a
    string as it is, a list or mapping as compact JSON.

    Examples
    --------
    >>> [value_text(v) for v in (None, True, 2000, 0.5, "table-i", [1, 2])]
    ['null', 'true', '2000', '0.5', 'table-i', '[1, 2]']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def format_error(err: ValidationError) -> str:
    """The first error of a validation, as the one line of a :class:`~fairsim.errors.ConfigError`:
    the dotted field, and what is wrong with its value (a trace's format tag left out of the
    field, an unknown format answered with the closest known one).

    Parameters
    ----------
    err : pydantic.ValidationError
        From validating a :class:`StrictModel` (a config, or an experiment's own file).

    Returns
    -------
    str
        ``"<field>: <what>"``.
    """
    e = err.errors()[0]
    # a trace's format model appears in the location as its tag (trace.google-2011.path): drop it
    parts = [
        str(p)
        for i, p in enumerate(e["loc"])
        if not (i > 0 and e["loc"][i - 1] == "trace" and p in TRACE_FORMATS)
    ]
    loc = ".".join(parts) or "config"
    msg = str(e["msg"]).removeprefix("Value error, ")
    if e["type"] == "union_tag_not_found":
        return f"{loc}.format: required key is missing (one of {', '.join(TRACE_FORMATS)})"
    if e["type"] == "union_tag_invalid":
        tag = (e.get("ctx") or {}).get("tag")
        close = difflib.get_close_matches(str(tag), TRACE_FORMATS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return (
            f"{loc}.format: {tag!r} is not a trace format{hint} (known: {', '.join(TRACE_FORMATS)})"
        )
    if e["type"] == "value_error" and (not e["loc"] or msg.startswith(f"{loc}.")):
        return msg  # a cross-field check names its own field
    value = e.get("input")
    if e["type"] in ("missing",):
        return f"{loc}: required key is missing"
    if isinstance(value, dict | list) or e["type"] == "value_error":
        return f"{loc}: {msg}"
    return f"{loc}: {msg} (got {value!r})"


_CLASS_KEY = "__fairsim_scheduler_class__"


def plain_copy(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of plain config data as JSON would make it (tuples become lists, mapping keys
    strings), keeping the scheduler classes a Python caller may give in ``schedulers``.

    Raises
    ------
    ConfigError
        For a value that is neither plain data (YAML scalars, lists, mappings) nor a class.
    """
    classes: list[type] = []

    def stash(obj: Any) -> Any:
        if isinstance(obj, type):
            classes.append(obj)
            return {_CLASS_KEY: len(classes) - 1}
        raise TypeError(type(obj).__name__)

    def restore(obj: dict[str, Any]) -> Any:
        return classes[obj[_CLASS_KEY]] if set(obj) == {_CLASS_KEY} else obj

    try:
        text = json.dumps(data, default=stash)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"config: a {exc} value is not plain config data (YAML scalars, lists and mappings; "
            "a fairsim.Scheduler subclass in schedulers)"
        ) from None
    copied: dict[str, Any] = json.loads(text, object_hook=restore)
    return copied


def parse_config(data: Any, *, overrides: list[str] | None = None) -> RunConfig:
    """Validate a config mapping, applying ``key.path=value`` overrides first.

    Raises
    ------
    ConfigError
        One line naming the field and the problem.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected a mapping at the top level, got {type(data).__name__}")
    data = plain_copy(data)
    for ov in overrides or []:
        apply_override(data, ov)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config: {format_error(exc)}") from None
    except ConfigError as exc:
        raise ConfigError(f"config: schedulers: {exc}") from None


def load_config(path: str | Path, *, overrides: list[str] | None = None) -> RunConfig:
    """Read and validate a YAML scenario.

    Parameters
    ----------
    path : path-like
        YAML file.
    overrides : list of str, optional
        ``dotted.key=value`` strings (values parsed as YAML scalars), applied before validation.

    Raises
    ------
    ConfigError
        If the file is missing, is not valid YAML, or does not validate.
    """
    return parse_config(read_yaml(path, "config"), overrides=overrides)


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping gives the same key twice (YAML forbids it; PyYAML kept the last silently)."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader that also reads ``1e12`` and ``1E-6`` as numbers (YAML 1.2, which
    users write; YAML 1.1 would read them as strings) and refuses a mapping that gives a key
    twice (:class:`DuplicateKeyError`; a merge key ``<<`` may still be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _value in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # an unhashable key: the base constructor refuses it
                if first is not None:
                    raise DuplicateKeyError(
                        None,
                        None,
                        f"duplicate key {key!r} at line {line} (first given at line {first}; "
                        "YAML forbids a key twice in one mapping)",
                        key_node.start_mark,
                    )
                seen[key] = line
        return super().construct_mapping(node, deep)


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def yaml_load(text: str) -> Any:
    """Parse YAML text with :class:`_Loader` (safe; scientific notation is a number)."""
    return yaml.load(text, Loader=_Loader)


def yaml_load_or(text: str, error: Callable[[str], Exception]) -> Any:
    """:func:`yaml_load`, raising ``error(why)`` when the text is not YAML.

    Parameters
    ----------
    text : str
        The YAML text.
    error : callable
        Builds the exception to raise from ``why``: ``"not valid YAML at line N (problem)"``
        (the line when the parser gives one, and the parser's own words: ``found character '\\t'
        that cannot start any token``), ``"not valid YAML: duplicate key 'k' at line N (first given
        at line M; ...)"`` or ``"nested too deeply"``.

    Raises
    ------
    Exception
        ``error(why)``, without the parser's exception as its cause.
    """
    try:
        return yaml_load(text)
    except DuplicateKeyError as exc:
        raise error(f"not valid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or "").split())
        raise error(f"not valid YAML{where}" + (f" ({problem})" if problem else "")) from None
    except RecursionError:
        raise error("nested too deeply") from None


def read_yaml(path: str | Path, what: str) -> Any:
    """The content of a YAML file, unvalidated.

    Raises
    ------
    ConfigError
        ``<what>: file ... does not exist`` or ``<what>: ... is not valid YAML at line N
        (problem)``.
    """
    p = Path(path)
    text = read_input_text(p, what, "YAML file", ConfigError)
    return yaml_load_or(text, lambda why: ConfigError(f"{what}: {p} is {why}"))


def apply_override(data: dict[str, Any], override: str) -> None:
    """Apply one ``dotted.key=value`` override in place (value parsed as YAML).

    Raises
    ------
    ConfigError
        If the override has no ``=`` or walks into a non-mapping.
    """
    if "=" not in override:
        raise ConfigError(f"--set {override!r}: expected key=value")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"--set {override!r}: {key.strip()!r} is not a dotted config key")
    try:
        value = yaml_load(raw)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"--set {override!r}: the value is not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigError(f"--set {override!r}: the value is nested too deeply") from None
    set_dotted(
        data, ".".join(parts), _cwd_paths(".".join(parts), value), where=f"--set {override!r}"
    )


def set_dotted(data: dict[str, Any], path: str, value: Any, *, where: str) -> None:
    """Set ``value`` at a dotted path of plain config data, in place: the one setter of
    ``fairsim run --set`` (:func:`apply_override`) and of sweep grids
    (:func:`fairsim.scenario.sweep.run_data`).

    A part of the path is a mapping key (created when missing) or, in a list, an index
    (``schedulers.0``).

    Parameters
    ----------
    data : dict
        Plain config data (YAML as parsed), changed in place.
    path : str
        Dotted key, e.g. ``"cluster.servers"`` or ``"trace.constraints.share"``.
    value : object
        The new value.
    where : str
        How a message names the setting (``"--set 'a.b=1'"``, ``"grid.a.b"``).

    Raises
    ------
    ConfigError
        ``<where>: 'x' is not an index of a list of N`` or ``<where>: 'a.b' is not a mapping or
        list``.

    Examples
    --------
    >>> data = {"cluster": {"servers": 10}, "schedulers": ["ff-drfh"]}
    >>> set_dotted(data, "cluster.servers", 20, where="--set")
    >>> set_dotted(data, "schedulers.0", "bf-drfh", where="--set")
    >>> data
    {'cluster': {'servers': 20}, 'schedulers': ['bf-drfh']}
    """
    parts = path.split(".")
    node: Any = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"{where}: {part!r} is not an index of a list of {len(node)}")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(f"{where}: {'.'.join(parts[:depth])!r} is not a mapping or list")


def _cwd_paths(key: str, value: Any) -> Any:
    """A ``--set`` value with its relative paths (:data:`PATH_KEYS`) made absolute: a path typed
    on the command line is relative to the working directory, not to the config file."""
    if key in PATH_KEYS:
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            return os.path.abspath(value)
        return value
    if isinstance(value, dict):
        return {k: _cwd_paths(f"{key}.{k}", v) for k, v in value.items()}
    return value
