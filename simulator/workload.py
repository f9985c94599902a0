"""Task streams: the simulator reads tasks in submit order, one batch at a time.

A :class:`TaskSource` yields :class:`TaskBatch` es in non-decreasing ``submit_s`` (the engine
refuses a batch that goes back). The Parquet source reads the canonical tasks table
(``traces/schema.py``) row group by row group, so the whole table is never in memory; an
in-memory source serves synthetic workloads and small scenarios.

Tasks that cannot be simulated are dropped here and counted by reason (``TaskSource.skipped``,
:func:`_drops`): a task with no submit or run time (never scheduled in the trace), a negative or
infinite run time, a bad demand, or one outside the ``[start_s, end_s)`` window, is not
silently lost. A row without a job id, task index or user (:data:`KEY_COLUMNS`), or whose
``censored`` is null, is refused.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fairsim.errors import ConfigError, TraceError

SKIP_NO_RUN_TIME = "no run time (never scheduled in the trace)"
SKIP_BEFORE_WINDOW = "submitted before start_s"
SKIP_AFTER_WINDOW = "submitted at or after end_s"
SKIP_BAD_DEMAND = "negative or non-finite demand"
SKIP_NEGATIVE_RUN = "negative run time"
SKIP_NO_SUBMIT = "no submit time (null or NaN submit_s)"
SKIP_INFINITE_RUN = "infinite run time"
#: The columns that identify a task and its user: a row without one is refused, not skipped.
KEY_COLUMNS = ("job_id", "task_index", "user")


def _numeric(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t))


def _text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


#: What a tasks table's columns must hold (the canonical schema, ``traces/schema.py``, allows
#: the narrower types; a resource column is numeric as ``submit_s``).
COLUMN_KINDS: dict[str, tuple[str, Any]] = {
    "job_id": ("integers", pa.types.is_integer),
    "task_index": ("integers", pa.types.is_integer),
    "user": ("strings", _text),
    "submit_s": ("numbers", _numeric),
    "run_s": ("numbers", _numeric),
}


@dataclass(frozen=True)
class TaskBatch:
    """A batch of tasks in submit order.

    Attributes
    ----------
    job_id : ndarray of int64, shape (n,)
    task_index : ndarray of int32, shape (n,)
    user : ndarray of object (str), shape (n,)
    submit_s : ndarray of float64, shape (n,)
        Submit time in seconds, non-decreasing.
    demand : ndarray of float64, shape (n, n_resources)
    run_s : ndarray of float64, shape (n,)
        Run time in seconds once started.
    rep : ndarray of int32, shape (n,), optional
        Repetition number of the task's job (0 for the first run; :mod:`fairsim.simulator.jobs`).
    instances : ndarray of int32, shape (n,), optional
        Instances of the canonical row this task belongs to (a DAG parent is finished when all
        of them are).
    parents : ndarray of object, shape (n,), optional
        The row's ``parents`` (comma-separated task indices of the same job, or None).
    constraint : ndarray of object, shape (n,), optional
        Placement constraint strings (:mod:`fairsim.simulator.constraints`), None for unconstrained.
    censored : ndarray of bool, shape (n,), optional
        Right-censored tasks: the trace ended while they ran, so ``run_s`` is only a lower bound;
        the engine never lets them complete (``fairsim.simulator.engine.Engine``, ``censored``).
        None:
        no task is censored.
    priority : ndarray of int32, shape (n,), optional
        The trace's priority of every task (``-1`` where it has none); read only for a scenario
        whose tasks reach a queue tree by their tier.
    queue : ndarray of int32, shape (n,), optional
        The queue of every task: an index into the run's queue tree, ``-1`` for the root
        (:meth:`fairsim.simulator.cluster.ClusterView.task_queue`); None: the run has no tree.
    end_at_s : ndarray of float64, shape (n,), optional
        Absolute end times of *placeholder* tasks (a hoarding user's stand-ins,
        :mod:`fairsim.scenario.manipulation`), NaN for every other task: a placeholder holds its
        resources from its start until ``end_at_s`` whatever its ``run_s``, and ends at once
        when it starts at or after that time. None: no placeholder (every plain run).
    """

    job_id: np.ndarray
    task_index: np.ndarray
    user: np.ndarray
    submit_s: np.ndarray
    demand: np.ndarray
    run_s: np.ndarray
    rep: np.ndarray | None = None
    instances: np.ndarray | None = None
    parents: np.ndarray | None = None
    constraint: np.ndarray | None = None
    censored: np.ndarray | None = None
    priority: np.ndarray | None = None
    queue: np.ndarray | None = None
    end_at_s: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.submit_s.shape[0])


def _window_drops(submit: np.ndarray, start_s: float, end_s: float) -> list[tuple[np.ndarray, str]]:
    """The reasons of :func:`_drops` that read the submit time only (no submit time, before
    and after the window), for a source that counts rows before reading the rest of them
    (:class:`~fairsim.simulator.replicas.ReplicaTaskSource`)."""
    return [
        (np.isnan(submit), SKIP_NO_SUBMIT),
        (submit < start_s, SKIP_BEFORE_WINDOW),
        (submit >= end_s, SKIP_AFTER_WINDOW),
    ]


def _drops(
    submit: np.ndarray, run: np.ndarray, demand: np.ndarray, start_s: float, end_s: float
) -> list[tuple[np.ndarray, str]]:
    """Why rows cannot be simulated: ``(mask, reason)`` pairs, a row dropped by the first
    reason whose mask it is in (:meth:`TaskSource._drop` counts them, :func:`_usable` keeps the
    rows in none). ``submit``, ``run``: shape (n,); ``demand``: shape (n, resources), float64,
    NaN where null."""
    return [
        *_window_drops(submit, start_s, end_s),
        (np.isnan(run), SKIP_NO_RUN_TIME),
        (run < 0, SKIP_NEGATIVE_RUN),
        (np.isinf(run), SKIP_INFINITE_RUN),
        (~np.isfinite(demand).all(axis=1) | (demand < 0).any(axis=1), SKIP_BAD_DEMAND),
    ]


def _columns(
    frame: pd.DataFrame, resources: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``submit_s``, ``run_s`` and the demand of ``frame`` as float64 arrays (NaN where null)."""
    submit = frame["submit_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    run = frame["run_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    demand = frame[list(resources)].to_numpy(dtype=np.float64, na_value=np.nan)
    return submit, run, demand


def _usable(
    frame: pd.DataFrame, resources: Sequence[str], start_s: float, end_s: float
) -> np.ndarray:
    """Boolean mask of the rows :meth:`TaskSource._clean` keeps (:func:`_drops`): a submit time
    in the window, a finite run time >= 0 and a finite demand >= 0."""
    keep = np.ones(len(frame), dtype=bool)
    for mask, _ in _drops(*_columns(frame, resources), start_s, end_s):
        keep &= ~mask
    return keep


class TaskSource:
    """Base class: an iterable of :class:`TaskBatch` in submit order.

    Attributes
    ----------
    resources : tuple of str
        Resource names of the demand columns.
    skipped : collections.Counter
        Tasks dropped while reading, by reason.
    n_hint : int or None
        Number of tasks :meth:`batches` will yield (the progress bar's total, the recorder's
        first allocation), if known; an estimate for sources that expand rows (repetitions).
    """

    resources: tuple[str, ...]
    n_hint: int | None = None

    def __init__(self) -> None:
        self.skipped: Counter[str] = Counter()

    def batches(self) -> Iterator[TaskBatch]:
        """Yield the batches in submit order."""
        raise NotImplementedError

    def count_rest(self, batches: Iterator[TaskBatch]) -> int:
        """The tasks that the rest of ``batches`` would yield, consuming it; the rows it drops
        are counted in :attr:`skipped` as reading them would count them. The engine calls it at
        the horizon: the arrivals never reached. This reads the batches;
        :class:`~fairsim.simulator.replicas.ReplicaTaskSource` counts its rows' replicas
        without expanding them.

        Parameters
        ----------
        batches : iterator of TaskBatch
            A :meth:`batches` generator of this source, partly consumed or not.

        Returns
        -------
        int
            The tasks in the batches it had not yet yielded.
        """
        return sum(len(b) for b in batches)

    def _drop(
        self,
        frame: pd.DataFrame,
        start_s: float,
        end_s: float,
        weights: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows of ``frame`` that can be simulated, each dropped row counted in
        :attr:`skipped` by its first reason (``weights``: a row counts that many tasks).

        Returns
        -------
        (keep, submit, run, demand)
            The boolean mask of the kept rows, shape (n,); ``submit_s`` and ``run_s``, shape
            (n,); the demand, shape (n, resources) (float64, NaN where null).
        """
        submit, run, demand = _columns(frame, self.resources)
        keep = np.ones(len(frame), dtype=bool)
        for mask, reason in _drops(submit, run, demand, start_s, end_s):
            drop = mask & keep
            n = int(drop.sum()) if weights is None else int(weights[drop].sum())
            if n:
                self.skipped[reason] += n
                keep &= ~mask
        return keep, submit, run, demand

    def _clean(self, frame: pd.DataFrame, start_s: float, end_s: float) -> TaskBatch:
        """Drop rows that cannot be simulated, counting each by reason."""
        keep, submit, run, demand = self._drop(frame, start_s, end_s)
        opt: dict[str, np.ndarray] = {}
        for col, dtype in (
            ("rep", np.int32),
            ("instances", np.int32),
            ("parents", object),
            ("constraint", object),
            ("censored", bool),
        ):
            if col in frame:
                opt[col] = frame[col].to_numpy(dtype=dtype)[keep]
        if "priority" in frame:  # nullable: -1 where the trace gives none
            prio = frame["priority"].to_numpy(dtype=np.float64, na_value=np.nan)
            opt["priority"] = np.where(np.isnan(prio), -1, prio).astype(np.int32)[keep]
        if "censored" not in opt and "end_state" in frame:  # a table without the column
            opt["censored"] = (frame["end_state"] == "censored").to_numpy(dtype=bool)[keep]
        return TaskBatch(
            **opt,
            job_id=frame["job_id"].to_numpy(dtype=np.int64)[keep],
            task_index=frame["task_index"].to_numpy(dtype=np.int32)[keep],
            user=frame["user"].to_numpy(dtype=object)[keep],
            submit_s=submit[keep],
            demand=np.ascontiguousarray(demand[keep]),
            run_s=run[keep],
        )


class ParquetTaskSource(TaskSource):
    """Stream a canonical ``tasks.parquet`` row group by row group.

    Parameters
    ----------
    path : path-like
        A canonical tasks table (``traces/schema.py``), sorted by ``submit_s``.
    start_s, end_s : float
        Only tasks with ``start_s <= submit_s < end_s`` are simulated.
    resources : sequence of str, optional
        Resource columns to read (default: those recorded in the table's metadata).
    job_columns : bool
        Also read ``instances`` and ``parents`` (when the table has them) for the
        :class:`fairsim.simulator.jobs.JobGate`.
    constraint_column : bool
        Also read ``constraint`` (when the table has it) for placement constraints.
    priority_column : bool
        Also read ``priority`` (when the table has it: canonical schema version 3) for a queue
        tree whose leaves are reached by tier.

    Raises
    ------
    ConfigError
        If the file does not exist, is not a canonical tasks table, lacks a resource column, or
        has a column of the wrong kind (:data:`COLUMN_KINDS`).
    TraceError
        While reading (:meth:`batches`): a null job id, task index, user or ``censored``.
    """

    _COLUMNS = ("job_id", "task_index", "user", "submit_s", "run_s")

    def __init__(
        self,
        path: str | Path,
        *,
        start_s: float = 0.0,
        end_s: float = np.inf,
        resources: Sequence[str] | None = None,
        job_columns: bool = False,
        constraint_column: bool = False,
        priority_column: bool = False,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        if not self.path.is_file():
            raise ConfigError(f"trace.path: tasks table {str(self.path)!r} does not exist")
        try:
            self._file = pq.ParquetFile(self.path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise ConfigError(
                f"trace.path: {str(self.path)!r} is not a Parquet file ({exc})"
            ) from exc
        names = set(self._file.schema_arrow.names)
        if resources is None:
            raw = (self._file.schema_arrow.metadata or {}).get(b"fairsim.resources")
            resources = tuple(json.loads(raw)) if raw else ("cpu", "mem")
        self.resources = tuple(resources)
        missing = [c for c in (*self._COLUMNS, *self.resources) if c not in names]
        if missing:
            raise ConfigError(f"trace.path: {str(self.path)!r} lacks column(s) {missing}")
        schema = self._file.schema_arrow
        for col in (*self._COLUMNS, *self.resources):
            kind, ok = COLUMN_KINDS.get(col, ("numbers", _numeric))
            if not ok(schema.field(col).type):
                raise ConfigError(
                    f"trace.path: {str(self.path)!r}: column {col!r} holds "
                    f"{schema.field(col).type} values, expected {kind}"
                )
        self.start_s, self.end_s = float(start_s), float(end_s)
        self._n_hint: int | None = None  # counted on first use (n_hint)
        self._extra = [c for c in ("instances", "parents") if job_columns and c in names]
        if constraint_column and "constraint" in names:
            self._extra.append("constraint")
        if priority_column and "priority" in names:
            self._extra.append("priority")
        # right-censored tasks: the canonical column, or derived from end_state (older tables)
        if "censored" in names:
            self._extra.append("censored")
        elif "end_state" in names:
            self._extra.append("end_state")

    @property
    def n_hint(self) -> int | None:
        """The number of tasks :meth:`batches` yields: the rows with ``start_s <= submit_s <
        end_s`` that are not dropped as unusable (:func:`_drops`: no run time, a negative or
        infinite one, a bad demand), counted on first use from those columns of the row groups
        that overlap the window (the progress bar's total; 168,105 of the 614,019 rows of the
        Google sample for 0-3600 s)."""
        if self._n_hint is None:
            self._n_hint = self._count()
        return self._n_hint

    @n_hint.setter
    def n_hint(self, value: int | None) -> None:
        self._n_hint = value

    def _in_window(self, rg: int) -> bool:
        """Whether row group ``rg`` may hold rows of the window (by its submit_s statistics)."""
        meta = self._file.metadata.row_group(rg)
        for i in range(meta.num_columns):
            col = meta.column(i)
            if col.path_in_schema == "submit_s":
                st = col.statistics
                if st is None or not st.has_min_max:
                    return True
                return not (st.max < self.start_s or st.min >= self.end_s)
        return True

    def _usable_rows(self, table: pa.Table) -> np.ndarray:
        """The rows of ``table`` that :meth:`TaskSource._clean` keeps (as a boolean mask)."""
        return _usable(table.to_pandas(), self.resources, self.start_s, self.end_s)

    def _count(self) -> int:
        cols = ["submit_s", "run_s", *self.resources]
        n = 0
        for rg in range(self._file.num_row_groups):
            if self._in_window(rg):
                n += int(self._usable_rows(self._file.read_row_group(rg, columns=cols)).sum())
        return n

    def batches(self) -> Iterator[TaskBatch]:
        cols = [*self._COLUMNS, *self.resources, *self._extra]
        for rg in range(self._file.num_row_groups):
            table = self._file.read_row_group(rg, columns=cols)
            self._check_keys(table, rg)
            if len(table) and self._counted_outside(table.column("submit_s")):
                continue
            batch = self._clean(table.to_pandas(), self.start_s, self.end_s)
            if len(batch):
                yield batch

    def _check_keys(self, table: pa.Table, rg: int) -> None:
        """Refuse row group ``rg`` if it has a null in a column of :data:`KEY_COLUMNS` or in
        ``censored`` (the canonical schema has none: such a task could not be recorded or given
        to a user, or whether it ended inside the trace is unknown).

        Raises
        ------
        TraceError
            Naming the file, the column, the number of nulls and the row group.
        """
        for c in (*KEY_COLUMNS, "censored"):
            n = table.column(c).null_count if c in table.column_names else 0
            if n:
                raise TraceError(
                    f"trace.path: {str(self.path)!r}: column {c!r} holds {n} null(s) in row "
                    f"group {rg}; a canonical tasks table has none"
                )

    def _counted_outside(self, submit: pa.ChunkedArray) -> bool:
        """Whether a row group's ``submit`` times all fall before or all after the window; if so
        its rows are counted in :attr:`skipped` (those with a null or NaN time as such: Arrow's
        min and max pass over both) and it need not be cleaned."""
        lo, hi = pc.min(submit).as_py(), pc.max(submit).as_py()
        if hi is None:  # every time null: cleaned, and counted, row by row
            return False
        for outside, reason in (
            (hi < self.start_s, SKIP_BEFORE_WINDOW),
            (lo >= self.end_s, SKIP_AFTER_WINDOW),
        ):
            if outside:
                nan = int(pc.sum(pc.fill_null(pc.is_nan(submit), True)).as_py() or 0)
                self.skipped[reason] += len(submit) - nan
                if nan:
                    self.skipped[SKIP_NO_SUBMIT] += nan
                return True
        return False


class WrappedTaskSource(TaskSource):
    """Base of sources that transform another source's batches (repetitions, constraint model).

    Shares the inner source's resources, skip counts and size hint; subclasses override
    :meth:`batches` and may change :attr:`n_hint`.

    Parameters
    ----------
    inner : TaskSource
    """

    def __init__(self, inner: TaskSource) -> None:
        super().__init__()
        self.inner = inner
        self.resources = inner.resources
        self.skipped = inner.skipped  # shared, not copied: drops are counted once
        self.n_hint = inner.n_hint


class FrameTaskSource(TaskSource):
    """Serve tasks from an in-memory DataFrame (synthetic workloads, small scenarios, tests).

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``job_id, task_index, user, submit_s, run_s`` and one column per resource. Rows are
        sorted by ``submit_s`` (stable) before use.
    resources : sequence of str
    start_s, end_s : float
        Window, as for :class:`ParquetTaskSource`.
    batch_rows : int
        Rows per batch.

    Raises
    ------
    ConfigError
        If a column is missing, a key column (:data:`KEY_COLUMNS`) holds a null, or ``user``
        does not hold strings.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        *,
        resources: Sequence[str] = ("cpu", "mem"),
        start_s: float = 0.0,
        end_s: float = np.inf,
        batch_rows: int = 65_536,
    ) -> None:
        super().__init__()
        self.resources = tuple(resources)
        missing = [c for c in (*ParquetTaskSource._COLUMNS, *self.resources) if c not in frame]
        if missing:
            raise ConfigError(f"workload frame lacks column(s) {missing}")
        nulls = {c: int(n) for c in KEY_COLUMNS if (n := frame[c].isna().sum())}
        if nulls:
            raise ConfigError(f"workload frame: null(s) in key column(s) {nulls}")
        if not pd.api.types.is_string_dtype(frame["user"]):
            raise ConfigError(
                f"workload frame: column 'user' holds {frame['user'].dtype} values, expected "
                "strings"
            )
        self._frame = frame.sort_values("submit_s", kind="stable").reset_index(drop=True)
        self.start_s, self.end_s = float(start_s), float(end_s)
        self.batch_rows = batch_rows
        self.n_hint = int(_usable(self._frame, self.resources, self.start_s, self.end_s).sum())

    def batches(self) -> Iterator[TaskBatch]:
        f = self._frame
        for lo in range(0, len(f), self.batch_rows):
            batch = self._clean(f.iloc[lo : lo + self.batch_rows], self.start_s, self.end_s)
            if len(batch):
                yield batch
