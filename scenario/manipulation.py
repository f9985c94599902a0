"""Strategic users: a user's own tasks as it chooses to present them to the scheduler.

A *manipulation* names one user and one strategy (:class:`Inflate`, :class:`Split`,
:class:`Hoard`); :func:`manipulate` turns a resolved :class:`~fairsim.scenario.workload.Workload`
into the workload the scheduler sees when that user behaves so, as a transformation of the task
stream (:class:`ManipulatedTaskSource`): the other users' tasks, and the user's tasks' submit and
run times, are never changed. ``fairsim strategy`` (:mod:`fairsim.scenario.strategy`) replays the
same config truthfully and with each manipulation and compares.

Strategies (the ``SPEC`` of ``fairsim strategy --strategy``, :func:`parse_strategy`):

``inflate:<resource>=<factor>[,...]``
    The user declares a demand with the named resources scaled by ``factor >= 1``; the scheduler
    sees only the declared demand and the task occupies it on its server for its unchanged run
    time. ``<resource>`` is a resource of the workload (``cpu``, ``mem``), ``dominant`` or
    ``nondominant`` (per task: the resource with the largest share of the pool's total capacity,
    ``max_r d_r / C_r``, ties to the first resource; ``nondominant``: every other one). A factor
    below 1 is refused: a task cannot run in a reservation smaller than what it needs, so
    under-reporting is not modelled. A declared demand that fits no server makes the task
    unplaceable (it is counted so, like any task that fits nowhere).
``split:k=<int >= 1>[,by=round-robin|seed]``
    The user appears as ``k`` users: its jobs are dealt among ``<user>``, ``<user>#2``, ...,
    ``<user>#k`` in the order of their first task (round-robin), or each to an alias drawn with
    the run's seed (``by=seed``). A job's tasks stay together. The aliases are more accounts of
    the user: each has its weight and, under a queue tree ``leaves: {by: user}``, its queue
    (:attr:`Workload.aliases <fairsim.scenario.workload.Workload>`).
``hoard:cap=<int >= 0>[,lead_s=<seconds > 0>]``
    Before each of its jobs arrives, the user submits *placeholder* tasks of the job's own
    demands (one per task of the job, at most ``cap`` placeholders held at any time),
    ``lead_s`` seconds ahead (default 600; never before the window starts), and ends each one
    when the job arrives (:attr:`fairsim.simulator.workload.TaskBatch.end_at_s`): a placeholder
    holds its resources from its start until then, and ends at once when it starts later. The
    user knows when its own work arrives (it is its own work). Placeholders count as its usage
    (its share, the pool's utilisation), never as its work: they have job ids below 0
    (:data:`PLACEHOLDER_JOB`) and the study never counts them as completed tasks.

A null manipulation (``inflate`` by 1, ``split:k=1``, ``hoard:cap=0``) changes nothing, and the
run's result files are byte-identical to the plain run's (``tests/unit/test_strategy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from fairsim.errors import ConfigError
from fairsim.scenario.workload import Workload
from fairsim.simulator.workload import TaskBatch, TaskSource, WrappedTaskSource

#: Job ids of placeholder tasks are ``PLACEHOLDER_JOB - b`` for the user's ``b``-th job (0, 1,
#: ...): below 0, never a trace's job id.
PLACEHOLDER_JOB = -1
#: How an alias of a split user is named: ``<user>#<j>`` for j = 2..k (the first keeps the name).
ALIAS_SEP = "#"
#: Default lead of ``hoard``: placeholders are submitted this many seconds before their job.
HOARD_LEAD_S = 600.0
#: The spawn key of the generator that deals a split user's jobs with ``by=seed`` (a child of
#: the run's seed of its own, so the pool, workload, jobs and constraint streams do not move).
_SPLIT_SPAWN_KEY = 1001

_SPLIT_BY = ("round-robin", "seed")


@dataclass(frozen=True)
class Inflate:
    """Declare a demand with resources scaled by factors >= 1 (see the module docstring).

    Attributes
    ----------
    factors : tuple of (str, float)
        ``(resource, factor)`` pairs in the order given; a resource is a workload resource,
        ``dominant`` or ``nondominant``.
    """

    factors: tuple[tuple[str, float], ...]

    kind = "inflate"

    @property
    def params(self) -> str:
        """``cpu=1.5,mem=2`` (numbers with ``%g``)."""
        return ",".join(f"{r}={f:g}" for r, f in self.factors)

    @property
    def null(self) -> bool:
        """Every factor is 1."""
        return all(f == 1.0 for _, f in self.factors)


@dataclass(frozen=True)
class Split:
    """Appear as ``k`` users, the jobs dealt among them (see the module docstring).

    Attributes
    ----------
    k : int
        Number of users, >= 1.
    by : str
        ``round-robin`` (default) or ``seed``.
    """

    k: int
    by: str = "round-robin"

    kind = "split"

    @property
    def params(self) -> str:
        """``k=2`` (and ``,by=seed`` when not round-robin)."""
        return f"k={self.k}" + ("" if self.by == "round-robin" else f",by={self.by}")

    @property
    def null(self) -> bool:
        """``k == 1``."""
        return self.k == 1


@dataclass(frozen=True)
class Hoard:
    """Hold placeholder tasks ahead of each job until it arrives (see the module docstring).

    Attributes
    ----------
    cap : int
        Most placeholders held at any time, >= 0.
    lead_s : float
        How long before its job a placeholder is submitted, seconds (> 0).
    """

    cap: int
    lead_s: float = HOARD_LEAD_S

    kind = "hoard"

    @property
    def params(self) -> str:
        """``cap=50`` (and ``,lead_s=300`` when not the default)."""
        return f"cap={self.cap}" + (
            "" if self.lead_s == HOARD_LEAD_S else f",lead_s={self.lead_s:g}"
        )

    @property
    def null(self) -> bool:
        """``cap == 0``: no placeholder."""
        return self.cap == 0


Strategy: TypeAlias = Inflate | Split | Hoard
STRATEGIES = ("inflate", "split", "hoard")


def spec_text(strategy: Strategy) -> str:
    """The canonical ``SPEC`` of a strategy: ``inflate:nondominant=1.5``, ``split:k=2``."""
    return f"{strategy.kind}:{strategy.params}"


def _pairs(text: str, spec: str) -> list[tuple[str, str]]:
    out = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"--strategy {spec!r}: {part!r} is not <name>=<value>")
        out.append((key.strip(), value.strip()))
    keys = [k for k, _ in out]
    for k in keys:
        if keys.count(k) > 1:
            raise ConfigError(f"--strategy {spec!r}: {k!r} is given twice")
    return out


def _number(value: str, what: str, spec: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise ConfigError(f"--strategy {spec!r}: {what} {value!r} is not a number") from None
    if not math.isfinite(x):
        raise ConfigError(f"--strategy {spec!r}: {what} {value!r} is not a finite number")
    return x


def _integer(value: str, what: str, spec: str, low: int) -> int:
    try:
        x = int(value)
    except ValueError:
        raise ConfigError(f"--strategy {spec!r}: {what} {value!r} is not an integer") from None
    if x < low:
        raise ConfigError(f"--strategy {spec!r}: {what} {x} is not >= {low}")
    return x


def parse_strategy(spec: str | Strategy) -> Strategy:
    """Parse a ``SPEC`` (``inflate:cpu=1.5``, ``split:k=2``, ``hoard:cap=50``).

    Resource names of ``inflate`` are checked against the workload later
    (:func:`check_strategy`).

    Raises
    ------
    ConfigError
        One line naming the spec and the part at fault, e.g. ``--strategy 'inflate:cpu=0.8':
        factor 0.8 for 'cpu' is below 1 (a task cannot run in a reservation smaller than its
        demand; under-reporting is not modelled)``.

    Examples
    --------
    >>> spec_text(parse_strategy("inflate: nondominant = 1.50"))
    'inflate:nondominant=1.5'
    >>> parse_strategy("split:k=4")
    Split(k=4, by='round-robin')
    """
    if not isinstance(spec, str):
        return spec
    kind, colon, rest = spec.partition(":")
    kind = kind.strip()
    if kind not in STRATEGIES:
        raise ConfigError(
            f"--strategy {spec!r}: unknown strategy {kind!r} (expected one of "
            f"{', '.join(STRATEGIES)}: inflate:<resource>=<factor>, split:k=<int>, "
            "hoard:cap=<int>)"
        )
    if not colon or not rest.strip():
        raise ConfigError(f"--strategy {spec!r}: {kind} needs parameters ({_USAGE[kind]})")
    pairs = _pairs(rest, spec)
    if kind == "inflate":
        factors = []
        for res, value in pairs:
            f = _number(value, f"factor for {res!r}", spec)
            if f < 1:
                raise ConfigError(
                    f"--strategy {spec!r}: factor {f:g} for {res!r} is below 1 (a task cannot "
                    "run in a reservation smaller than its demand; under-reporting is not "
                    "modelled)"
                )
            factors.append((res, f))
        if {"dominant", "nondominant"} & {r for r, _ in factors} and len(factors) > 1:
            raise ConfigError(
                f"--strategy {spec!r}: 'dominant' and 'nondominant' stand alone (not with other "
                "resources)"
            )
        return Inflate(tuple(factors))
    given = dict(pairs)
    allowed = {"split": ("k", "by"), "hoard": ("cap", "lead_s")}[kind]
    for key in given:
        if key not in allowed:
            raise ConfigError(
                f"--strategy {spec!r}: unknown parameter {key!r} of {kind} ({_USAGE[kind]})"
            )
    if kind == "split":
        if "k" not in given:
            raise ConfigError(f"--strategy {spec!r}: split needs k ({_USAGE[kind]})")
        by = given.get("by", "round-robin")
        if by not in _SPLIT_BY:
            raise ConfigError(
                f"--strategy {spec!r}: by {by!r} is not one of {', '.join(_SPLIT_BY)}"
            )
        return Split(_integer(given["k"], "k", spec, 1), by)
    if "cap" not in given:
        raise ConfigError(f"--strategy {spec!r}: hoard needs cap ({_USAGE[kind]})")
    lead = _number(given.get("lead_s", str(HOARD_LEAD_S)), "lead_s", spec)
    if not lead > 0:
        raise ConfigError(f"--strategy {spec!r}: lead_s {lead:g} is not > 0")
    return Hoard(_integer(given["cap"], "cap", spec, 0), lead)


_USAGE = {
    "inflate": "inflate:<resource>=<factor >= 1>[,...], resource a workload resource, "
    "dominant or nondominant",
    "split": "split:k=<int >= 1>[,by=round-robin|seed]",
    "hoard": "hoard:cap=<int >= 0>[,lead_s=<seconds>]",
}


def check_strategy(strategy: Strategy, resources: Sequence[str]) -> None:
    """Refuse an ``inflate`` that names a resource the workload does not have.

    Raises
    ------
    ConfigError
        ``--strategy 'inflate:gpu=2': resource 'gpu' is not one of the workload's (cpu, mem,
        dominant, nondominant)``.
    """
    if not isinstance(strategy, Inflate):
        return
    known = (*resources, "dominant", "nondominant")
    for res, _ in strategy.factors:
        if res not in known:
            raise ConfigError(
                f"--strategy {spec_text(strategy)!r}: resource {res!r} is not one of the "
                f"workload's ({', '.join(known)})"
            )


def alias(user: str, j: int) -> str:
    """The name of a split user's ``j``-th alias (1-based): the user itself for ``j == 1``."""
    return user if j == 1 else f"{user}{ALIAS_SEP}{j}"


@dataclass(frozen=True)
class Manipulation:
    """One user behaving by one strategy in one run.

    Attributes
    ----------
    user : str
        The user's name in the trace.
    strategy : Strategy
    seed : int
        The run's seed (``split`` with ``by=seed`` draws from it).
    """

    user: str
    strategy: Strategy
    seed: int = 0

    def to_data(self) -> dict[str, Any]:
        """What ``manipulation.json`` holds: ``user``, ``strategy`` (kind), ``params`` and the
        ``spec``."""
        s = self.strategy
        return {"user": self.user, "strategy": s.kind, "params": s.params, "spec": spec_text(s)}

    def users(self) -> tuple[str, ...]:
        """Every name under which the user's tasks appear in the run (its aliases when split)."""
        if isinstance(self.strategy, Split):
            return tuple(alias(self.user, j) for j in range(1, self.strategy.k + 1))
        return (self.user,)


def manipulate(
    workload: Workload,
    manipulation: Manipulation,
    totals: Callable[[], np.ndarray | None] = lambda: None,
) -> Workload:
    """The workload the scheduler sees when ``manipulation.user`` follows its strategy.

    The returned workload opens a :class:`ManipulatedTaskSource` over a fresh stream of
    ``workload`` per run; everything else (window, resources, folder) is ``workload``'s. For
    ``hoard`` the user's jobs are read once here (one pass over the stream) to place the
    placeholders; for ``split`` its aliases are :attr:`~fairsim.scenario.workload.Workload.aliases`
    (the user's weight and queue).

    Parameters
    ----------
    workload : Workload
        The resolved workload (:func:`fairsim.scenario.workload.resolve_workload`).
    manipulation : Manipulation
    totals : callable, optional
        ``totals()``: the pool's total capacity per resource, shape ``(n_resources,)``, when a
        stream is opened (``inflate`` by ``dominant`` or ``nondominant`` needs it; the pool is
        drawn after the workload is resolved).

    Raises
    ------
    ConfigError
        For a workload with a job gate (DAG parents, repetitions, a job queue), which the
        strategies do not model, and for an ``inflate`` resource the workload lacks.
    """
    if workload.gate() is not None:
        raise ConfigError(
            "trace: fairsim strategy does not model DAG parents, repetitions or a job queue "
            "(trace.dag, trace.complex_jobs); leave them out"
        )
    check_strategy(manipulation.strategy, workload.resources)
    inner = workload.open
    placeholders = (
        hoard_placeholders(inner(), manipulation.user, manipulation.strategy, workload.start_s)
        if isinstance(manipulation.strategy, Hoard)
        else None
    )

    def open_manipulated() -> TaskSource:
        return ManipulatedTaskSource(
            inner(), manipulation, placeholders=placeholders, totals=totals()
        )

    out = replace(workload, open=open_manipulated)
    out.describe = {**workload.describe, "manipulation": manipulation.to_data()}
    out.users = None  # aliases and placeholders: the engine numbers the users from the stream
    s = manipulation.strategy
    if isinstance(s, Split) and s.k > 1:
        # the splitter opens more accounts in its own queue, with its weight
        aliases = {alias(manipulation.user, j): manipulation.user for j in range(2, s.k + 1)}
        out.aliases = {**(workload.aliases or {}), **aliases}
    return out


def hoard_placeholders(source: TaskSource, user: str, hoard: Hoard, start_s: float) -> pd.DataFrame:
    """The placeholder tasks of a hoarding user (one pass over ``source``).

    One *burst* per job of the user in the window, at the submit time ``t`` of its first task,
    with the job's tasks there; its placeholders are submitted at ``max(start_s, t - lead_s)``
    and end at ``t``, one per task of the job in task order, as many as keep the user's
    placeholders held at once within ``cap`` (bursts in order of ``t``; the placeholders of
    earlier bursts still held when this one's are submitted count against it). A job that
    arrives when the window starts gets none.

    Returns
    -------
    pandas.DataFrame
        Sorted by submit time: ``job_id`` (``PLACEHOLDER_JOB - burst``), ``task_index``,
        ``submit_s``, ``end_at_s``, one column per resource (the stand-in task's demand) and
        ``constraint`` (the stand-in task's, or None).
    """
    res = list(source.resources)
    rows: list[pd.DataFrame] = []
    for batch in source.batches():
        mine = batch.user == user
        if not mine.any():
            continue
        part = pd.DataFrame(
            {"job": batch.job_id[mine], "index": batch.task_index[mine], "t": batch.submit_s[mine]}
        )
        for k, r in enumerate(res):
            part[r] = batch.demand[mine, k]
        part["constraint"] = batch.constraint[mine] if batch.constraint is not None else None
        rows.append(part)
    columns = ["job_id", "task_index", "submit_s", "end_at_s", *res, "constraint"]
    if not rows or hoard.cap == 0:
        return pd.DataFrame({c: [] for c in columns}).astype(
            {"job_id": np.int64, "task_index": np.int32, "submit_s": float, "end_at_s": float}
        )
    tasks = pd.concat(rows, ignore_index=True)
    first = tasks.groupby("job", sort=False)["t"].transform("min")
    tasks = tasks.assign(first=first).sort_values(["first", "job", "t", "index"], kind="stable")
    held: list[tuple[float, int]] = []  # (end, count) of earlier bursts' placeholders
    out: list[pd.DataFrame] = []
    for b, (_, job) in enumerate(tasks.groupby("job", sort=False)):
        t = float(job["first"].iloc[0])
        p = max(start_s, t - hoard.lead_s)
        if not p < t:
            continue
        live = sum(n for end, n in held if end > p)
        m = min(len(job), hoard.cap - live)
        if m <= 0:
            continue
        stand_in = job.iloc[:m]
        frame = pd.DataFrame(
            {
                "job_id": np.full(m, PLACEHOLDER_JOB - b, dtype=np.int64),
                "task_index": np.arange(m, dtype=np.int32),
                "submit_s": np.full(m, p),
                "end_at_s": np.full(m, t),
            }
        )
        for r in res:
            frame[r] = stand_in[r].to_numpy(dtype=np.float64)
        frame["constraint"] = stand_in["constraint"].to_numpy(dtype=object)
        out.append(frame)
        held.append((t, m))
    if not out:
        return pd.DataFrame({c: [] for c in columns})
    return (
        pd.concat(out, ignore_index=True)
        .sort_values("submit_s", kind="stable")
        .reset_index(drop=True)[columns]
    )


class ManipulatedTaskSource(WrappedTaskSource):
    """The task stream with one user's tasks as its strategy presents them.

    Batches pass through unchanged where the user has no task (and for a null manipulation, the
    same values in new arrays). ``inflate`` scales the declared demands of the user's tasks;
    ``split`` renames each of its tasks to the alias its job is dealt to; ``hoard`` merges the
    placeholders (:func:`hoard_placeholders`) into the stream in submit order, after the tasks
    submitted at the same instant, with ``end_at_s`` set (NaN for every other task).

    Parameters
    ----------
    inner : TaskSource
    manipulation : Manipulation
    placeholders : pandas.DataFrame, optional
        For ``hoard``: :func:`hoard_placeholders`.
    totals : ndarray, shape (n_resources,), optional
        The pool's total capacity per resource, for ``inflate`` by ``dominant`` or
        ``nondominant``.

    Raises
    ------
    ValueError
        For ``inflate`` by ``dominant`` or ``nondominant`` without ``totals``.
    """

    def __init__(
        self,
        inner: TaskSource,
        manipulation: Manipulation,
        *,
        placeholders: pd.DataFrame | None = None,
        totals: np.ndarray | None = None,
    ) -> None:
        super().__init__(inner)
        self.manipulation = manipulation
        s = manipulation.strategy
        self._ph = placeholders if placeholders is not None and len(placeholders) else None
        if self._ph is not None and self.n_hint is not None:
            self.n_hint = self.n_hint + len(self._ph)
        self.totals = totals
        self._scale: np.ndarray | None = None
        self._relative: str | None = None
        if isinstance(s, Inflate):
            names = [r for r, _ in s.factors]
            if names[0] in ("dominant", "nondominant"):
                if totals is None:
                    raise ValueError(
                        f"inflate by {names[0]}: the pool's total capacity is needed (set_totals)"
                    )
                self._relative = names[0]
                self._factor = s.factors[0][1]
            else:
                scale = np.ones(len(self.resources))
                for r, f in s.factors:
                    scale[self.resources.index(r)] = f
                self._scale = scale
        self._alias: dict[int, str] = {}
        self._rng = (
            np.random.default_rng(
                np.random.SeedSequence(manipulation.seed, spawn_key=(_SPLIT_SPAWN_KEY,))
            )
            if isinstance(s, Split) and s.by == "seed"
            else None
        )

    def batches(self) -> Iterator[TaskBatch]:
        s, user = self.manipulation.strategy, self.manipulation.user
        pos = 0  # next placeholder to merge
        ph = self._ph
        for batch in self.inner.batches():
            mine = batch.user == user
            if isinstance(s, Inflate) and mine.any():
                batch = replace(batch, demand=self._inflate(batch.demand, mine))
            elif isinstance(s, Split) and s.k > 1 and mine.any():
                batch = replace(batch, user=self._split(batch, mine))
            if ph is not None:
                # placeholders submitted before this batch's last instant go in here; those at
                # that instant wait for the next batch, which may hold more tasks of it
                last = float(batch.submit_s[-1]) if len(batch) else -math.inf
                end = int(np.searchsorted(ph["submit_s"].to_numpy(), last, side="left"))
                if end > pos:
                    batch = self._merge(batch, ph.iloc[pos:end])
                    pos = end
            yield batch
        if ph is not None and pos < len(ph):
            yield self._merge(None, ph.iloc[pos:])

    def _inflate(self, demand: np.ndarray, mine: np.ndarray) -> np.ndarray:
        out = demand.copy()
        if self._scale is not None:
            out[mine] = demand[mine] * self._scale
            return out
        assert self.totals is not None
        rows = demand[mine]
        dominant = np.argmax(rows / self.totals, axis=1)
        scale = np.full(rows.shape, self._factor if self._relative == "nondominant" else 1.0)
        scale[np.arange(len(rows)), dominant] = (
            self._factor if self._relative == "dominant" else 1.0
        )
        out[mine] = rows * scale
        return out

    def _split(self, batch: TaskBatch, mine: np.ndarray) -> np.ndarray:
        s = self.manipulation.strategy
        assert isinstance(s, Split)
        names = batch.user.copy()
        idx = np.flatnonzero(mine)
        for i, job in zip(idx.tolist(), batch.job_id[idx].tolist(), strict=True):
            name = self._alias.get(job)
            if name is None:
                j = len(self._alias) % s.k if self._rng is None else int(self._rng.integers(s.k))
                name = self._alias[job] = alias(self.manipulation.user, j + 1)
            names[i] = name
        return names

    def _merge(self, batch: TaskBatch | None, ph: pd.DataFrame) -> TaskBatch:
        """``batch`` with the placeholders ``ph`` inserted in submit order, after the tasks of
        the same instant (``batch`` None: the placeholders alone)."""
        n = len(ph)
        res = list(self.resources)
        p_submit = ph["submit_s"].to_numpy(dtype=np.float64)
        p_cols: dict[str, Any] = {
            "job_id": ph["job_id"].to_numpy(dtype=np.int64),
            "task_index": ph["task_index"].to_numpy(dtype=np.int32),
            "user": np.full(n, self.manipulation.user, dtype=object),
            "submit_s": p_submit,
            "demand": ph[res].to_numpy(dtype=np.float64),
            "run_s": np.zeros(n),
            "end_at_s": ph["end_at_s"].to_numpy(dtype=np.float64),
        }
        if batch is None:
            constraint = ph["constraint"].to_numpy(dtype=object)
            has = any(c is not None for c in constraint.tolist())
            return TaskBatch(**p_cols, constraint=constraint if has else None)
        at = np.searchsorted(batch.submit_s, p_submit, side="right")
        cols: dict[str, Any] = {}
        base = {
            "job_id": batch.job_id,
            "task_index": batch.task_index,
            "user": batch.user,
            "submit_s": batch.submit_s,
            "demand": batch.demand,
            "run_s": batch.run_s,
            "end_at_s": (
                batch.end_at_s if batch.end_at_s is not None else np.full(len(batch), np.nan)
            ),
        }
        for name, col in base.items():
            cols[name] = np.insert(col, at, p_cols[name], axis=0)
        defaults = {"rep": 0, "instances": 1, "parents": None, "censored": False}
        for name, fill in defaults.items():
            col = getattr(batch, name)
            if col is not None:
                cols[name] = np.insert(col, at, np.full(n, fill, dtype=col.dtype))
        if batch.constraint is not None:
            cols["constraint"] = np.insert(
                batch.constraint, at, ph["constraint"].to_numpy(dtype=object)
            )
        return TaskBatch(**cols)


def task_counts(source: TaskSource) -> dict[str, int]:
    """Tasks submitted per user in a stream (one pass over ``source``)."""
    counts: dict[str, int] = {}
    for batch in source.batches():
        names, n = np.unique(batch.user.astype(str), return_counts=True)
        for name, c in zip(names.tolist(), n.tolist(), strict=True):
            counts[name] = counts.get(name, 0) + c
    return counts


def job_counts(source: TaskSource, users: Sequence[str]) -> dict[str, int]:
    """Jobs (distinct job ids) with a task in a stream, per user of ``users`` (one pass over
    ``source``; a user with none is absent). ``split`` deals a user's jobs whole among its
    aliases."""
    wanted = np.asarray(list(users), dtype=object)
    jobs: dict[str, set[int]] = {}
    for batch in source.batches():
        mine = np.isin(batch.user.astype(object), wanted)
        if not mine.any():
            continue
        pairs = pd.DataFrame({"user": batch.user[mine].astype(str), "job": batch.job_id[mine]})
        for name, ids in pairs.drop_duplicates().groupby("user", sort=False)["job"]:
            jobs.setdefault(str(name), set()).update(ids.tolist())
    return {u: len(ids) for u, ids in jobs.items()}


def top_users(counts: dict[str, int], k: int) -> list[str]:
    """The ``k`` users that submit the most tasks, most first (ties by name).

    Examples
    --------
    >>> top_users({"a": 3, "b": 5, "c": 3}, 2)
    ['b', 'a']
    """
    return sorted(counts, key=lambda u: (-counts[u], u))[:k]
