"""Lazy replica expansion: one canonical row with ``instances = n`` becomes ``n`` simulated tasks.

Alibaba tasks carry an instance count (``instance_num``; v2017: 11.9 M instances in 80 k rows).
fairsim calls these identical copies of a task *replicas*, since an "instance" in fairsim is an
allocation problem (:mod:`fairsim.schedulers.exact.instance`); the trace's word survives only in the
file contract's ``instances`` column. The canonical tasks table keeps one row per task
(``traces/schema.py``); :class:`ReplicaTaskSource` expands a row into its replicas only while
streaming, in batches of at most ``batch_rows`` simulated tasks, so the source never holds more
than one Parquet row group plus one expanded batch.

Every replica is an independent task with the row's ``job_id``, ``task_index``, ``user``,
``submit_s``, demand and ``run_s``; replicas of one row share ``(job_id, task_index)``. Drop
reasons in :attr:`TaskSource.skipped` count replicas, not rows. With ``job_columns`` every replica
also carries its row's ``instances`` and ``parents``, and the engine's
:class:`fairsim.simulator.jobs.JobGate` enforces the DAG (a child row starts when every replica of
every parent row has finished).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from fairsim.errors import ConfigError
from fairsim.simulator.workload import ParquetTaskSource, TaskBatch, _window_drops

SKIP_NO_INSTANCES = "zero or negative instance count"


def expand_rows(frame: pd.DataFrame, batch_rows: int) -> Iterator[pd.DataFrame]:
    """Repeat each row of ``frame`` ``frame["instances"]`` times, in bounded chunks.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with an integer ``instances`` column (values < 1 give no row).
    batch_rows : int
        Maximum rows per yielded chunk (> 0).

    Yields
    ------
    pandas.DataFrame
        Consecutive chunks of the expanded rows, in the row order of ``frame``.
    """
    counts = np.maximum(frame["instances"].to_numpy(dtype=np.int64), 0)
    cum = np.cumsum(counts)
    total = int(cum[-1]) if len(cum) else 0
    for lo in range(0, total, batch_rows):
        pos = np.arange(lo, min(lo + batch_rows, total), dtype=np.int64)
        rows = np.searchsorted(cum, pos, side="right")
        yield frame.iloc[rows]


class ReplicaTaskSource(ParquetTaskSource):
    """Stream a canonical tasks table and expand each row into its ``instances`` replicas lazily.

    Parameters
    ----------
    path : path-like
        A canonical tasks table with an ``instances`` column.
    batch_rows : int
        Maximum simulated tasks per yielded batch.
    **options
        The window and the columns to read (``start_s``, ``end_s``, ``resources``,
        ``job_columns``, ``constraint_column``, ``priority_column``), as for
        :class:`~fairsim.simulator.workload.ParquetTaskSource`.

    Raises
    ------
    ConfigError
        As :class:`~fairsim.simulator.workload.ParquetTaskSource`, or if ``instances`` is missing.
    """

    def __init__(self, path: str | Path, *, batch_rows: int = 65_536, **options: Any) -> None:
        super().__init__(path, **options)
        if "instances" not in self._file.schema_arrow.names:
            raise ConfigError(f"trace.path: {str(self.path)!r} lacks column 'instances'")
        if batch_rows < 1:
            raise ConfigError(f"batch_rows: {batch_rows!r} (expected an integer >= 1)")
        self.batch_rows = int(batch_rows)
        # replicas counted by count_rest (None: batches() expands and yields)
        self._rest: int | None = None

    def _count(self) -> int:
        """The replicas of the usable rows in the window (``instances`` each, at least 0)."""
        cols = ["submit_s", "run_s", *self.resources, "instances"]
        n = 0
        for rg in range(self._file.num_row_groups):
            if self._in_window(rg):
                table = self._file.read_row_group(rg, columns=cols)
                inst = pc.fill_null(table.column("instances"), 0).to_numpy().astype(np.int64)
                inst = np.maximum(inst, 0)
                n += int(inst[self._usable_rows(table)].sum())
        return n

    def count_rest(self, batches: Iterator[TaskBatch]) -> int:
        """:meth:`TaskSource.count_rest <fairsim.simulator.workload.TaskSource.count_rest>`
        without expanding a row: while it runs, ``batches`` (this source's :meth:`batches`,
        partly consumed) yields nothing more and counts the rest of its row group and the later
        row groups row by row, each row weighted by its replicas, with the masks that
        :meth:`~fairsim.simulator.workload.TaskSource._clean` applies to every replica of the row
        (so the same counts in :attr:`skipped`).

        Parameters
        ----------
        batches : iterator of TaskBatch
            A :meth:`batches` generator of this source, at any point (not started, in a row
            group, exhausted).

        Returns
        -------
        int
            The replicas it would still have yielded.
        """
        self._rest = 0
        try:
            n = sum(len(b) for b in batches)  # nothing: the generator counts into _rest
            return n + self._rest
        finally:
            self._rest = None

    def batches(self) -> Iterator[TaskBatch]:
        cols = [*self._COLUMNS, *self.resources, "instances"]
        cols += [c for c in self._extra if c not in cols]
        counted = ["submit_s", "run_s", *self.resources, "instances"]
        for rg in range(self._file.num_row_groups):
            counting = self._rest is not None  # count_rest: only the columns the masks read
            table = self._file.read_row_group(rg, columns=counted if counting else cols)
            self._check_keys(table, rg)  # (not read when counting)
            frame, n_inst = self._inside(table.to_pandas())
            done = 0  # replicas of the frame expanded so far
            if not counting:
                for chunk in expand_rows(frame, self.batch_rows):
                    if self._rest is not None:
                        break
                    done += len(chunk)
                    batch = self._clean(chunk, self.start_s, self.end_s)
                    if len(batch):
                        yield batch
            if self._rest is not None:  # count_rest: the frame's replicas from `done` on
                self._rest += self._count_from(frame, n_inst, done)

    def _count_from(self, frame: pd.DataFrame, n_inst: np.ndarray, done: int) -> int:
        """The replicas of ``frame`` (rows in the window, ``n_inst`` replicas each) from the
        ``done``-th on that can be simulated, without expanding them: each row weighted by its
        replicas in that range, its drops counted in :attr:`skipped` by those replicas."""
        cum = np.cumsum(n_inst)
        if not len(cum) or done >= cum[-1]:
            return 0
        first = int(np.searchsorted(cum, done, side="right"))
        w = n_inst[first:].copy()
        w[0] = cum[first] - done
        keep = self._drop(frame.iloc[first:], self.start_s, self.end_s, w)[0]
        return int(w[keep].sum())

    def _inside(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows of a row group in the window, with their replica counts (``instances``,
        at least 0); the rows with no replica and the replicas outside the window or with no
        submit time are counted in :attr:`skipped`."""
        bad = int((frame["instances"] < 1).sum())
        if bad:
            self.skipped[SKIP_NO_INSTANCES] += bad
        # rows outside the window are counted (per instance) before expanding
        submit = frame["submit_s"].to_numpy(dtype=np.float64, na_value=np.nan)
        n_inst = np.maximum(frame["instances"].to_numpy(dtype=np.int64), 0)
        inside = np.ones(len(submit), dtype=bool)
        for mask, reason in _window_drops(submit, self.start_s, self.end_s):
            n = int(n_inst[mask].sum())
            if n:
                self.skipped[reason] += n
            inside &= ~mask
        if not inside.all():
            return frame[inside], n_inst[inside]
        return frame, n_inst
