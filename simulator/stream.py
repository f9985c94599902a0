"""Finished tasks streamed to ``tasks.parquet`` while a run goes on (``collect.stream_tasks``).

Without streaming, the engine keeps every task it has seen until the end of the run (about 70
bytes a task with two resources), then builds the result tables from those arrays. On a
whole trace (the 29-day Google 2011 trace: about 25 million tasks) that per-task table is most of
the run's memory. In the streamed recording mode
(:class:`fairsim.simulator.recording.StreamingRecorder`), the engine keeps a task only while it is
*live* (arrived and not ended), and hands its row to a :class:`TaskStream` when it ends:

* a task that completes, when it completes;
* a task that fits no server of the pool, when it arrives;
* in arrival order, a right-censored task held to the horizon, when it starts
  (:meth:`fairsim.simulator.recording.StreamingRecorder.held`);
* the tasks still live at the horizon (``running``, ``censored`` or ``queued``), at the end, in
  task-id (arrival) order.

The stream buffers the rows of ended tasks and writes them to ``tasks.parquet`` one row group at
a time (:attr:`TaskStream.row_group` rows). It also keeps what ``jobs.parquet``, ``users.parquet``
and ``summary.json`` need, as running totals: per user (tasks submitted, completed) and per job
(user, tasks, first submission, last finish, tasks finished). Memory then grows with the live
tasks, the users and the jobs, not with the tasks ever seen.

The files hold exactly the rows and values of the in-memory path
(:func:`fairsim.simulator.results.tables`). The row order of ``tasks.parquet`` is one of two:

* ``order="arrival"`` (``collect.stream_tasks: false``, the default of a run with an output
  folder): task-id (arrival) order, byte-identical to the in-memory path's file. Each row group
  is spilled, with the task id, to one Arrow IPC file per block of :data:`ARRIVAL_ROW_GROUP`
  task ids (the row group size of :func:`pyarrow.parquet.write_table`); :meth:`TaskStream.close`
  then reads one block at a time, puts its rows in task-id order and writes it as one row group
  with the in-memory path's options (:data:`PARQUET_KW`). Task ids are dense (``0..n-1``), so a
  block is complete and in order without any comparison sort; memory at the end is about one
  block (a few hundred bytes a row), whatever the number of tasks.
* ``order="end"`` (``collect.stream_tasks: true``): the order tasks ended (completions by time,
  ties by task id), written as it goes with no spill and no second pass.

``jobs.parquet``, ``users.parquet`` and ``summary.json`` (except wall time and memory) are
byte-identical between the paths.

Not supported with a job gate (:mod:`fairsim.simulator.jobs`): it looks tasks up by id after
they end.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fairsim.simulator.cluster import default_server_ids

#: Values of the ``ended`` column of ``tasks.parquet``, in code order.
ENDED = ("finished", "censored", "running", "queued", "unplaceable")
FINISHED, CENSORED, RUNNING, QUEUED, UNPLACEABLE = range(len(ENDED))

#: Parquet options of every result table.
PARQUET_KW: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": True,
    "write_statistics": True,
}

#: Parquet options of a streamed ``tasks.parquet``: dictionary pages only for the columns that
#: repeat (``user``, ``server``, ``ended``). Trying a dictionary on every column, as
#: :data:`PARQUET_KW` does, costs about 0.5 µs a row on millions of distinct times and ids, for
#: which Parquet falls back to plain pages anyway.
STREAM_PARQUET_KW: dict[str, Any] = {**PARQUET_KW, "use_dictionary": ["user", "server", "ended"]}

#: Rows per row group of a streamed ``tasks.parquet`` in end order.
ROW_GROUP = 1 << 17

#: Rows per row group of ``tasks.parquet`` in arrival order: the default of
#: :func:`pyarrow.parquet.write_table`, which the in-memory path uses (1,048,576), so both paths
#: write the same bytes. Also the number of task ids in one spill block.
ARRIVAL_ROW_GROUP = 1 << 20

#: Rows of ended tasks buffered (as Python values) before they are spilled, in arrival order:
#: their order in the spill does not reach the file (:meth:`TaskStream.close` puts each block in
#: task-id order), so a small buffer costs only more, smaller spill writes.
SPILL_ROWS = 1 << 15

#: Where a stream's rows can be in ``tasks.parquet``: the order tasks ended, or arrival order.
ORDERS = ("end", "arrival")
_ENDED_PA = pa.array(ENDED, pa.string())
#: Spill files of arrival order: Arrow IPC with LZ4 frames (about a third of the raw size on a
#: synthetic trace's rows, for a small part of the time the rows take to write).
_SPILL_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


def tasks_schema(
    resources: tuple[str, ...], server: pa.DataType | None = None, evictions: bool = False
) -> pa.Schema:
    """The Arrow schema of ``tasks.parquet`` (without a job gate's ``rep`` column): ``server`` is
    the server's id (string, as ``servers.parquet``'s ``server``; ``server`` gives another type,
    e.g. int32 for row positions); with ``evictions`` (a scheduler that preempts) a last column
    ``evictions`` (int32: the task's runs that were evicted)."""
    fields = [
        pa.field("job_id", pa.int64()),
        pa.field("task_index", pa.int32()),
        pa.field("user", pa.string()),
        pa.field("submit_s", pa.float64()),
        pa.field("start_s", pa.float64()),
        pa.field("finish_s", pa.float64()),
        pa.field("server", server or pa.string()),
        pa.field("ended", pa.string()),
    ]
    fields += [pa.field(name, pa.float64()) for name in resources]
    if evictions:
        fields.append(pa.field("evictions", pa.int32()))
    return pa.schema(fields)


@dataclass(frozen=True)
class StreamedTasks:
    """What a streamed run leaves instead of per-task arrays
    (:attr:`fairsim.simulator.engine.EngineResult.streamed`).

    Attributes
    ----------
    path : pathlib.Path
        The complete ``tasks.parquet`` (rows in the order tasks ended).
    rows : int
        Rows written: the tasks that arrived by the horizon.
    started : int
        Tasks that started.
    ended : ndarray of int64, shape (len(ENDED),)
        Rows per value of :data:`ENDED`.
    users : pandas.DataFrame
        ``user, tasks_submitted, tasks_completed`` of every user with a task, sorted by user.
    jobs : pandas.DataFrame
        ``job_id, user, n_tasks, submit_s, finish_s, n_done``, sorted by job id: ``user`` of the
        job's first task, its first submission, its last finish (NaN if none finished) and its
        finished tasks.
    row_groups : int
        Row groups written.
    """

    path: Path
    rows: int
    started: int
    ended: np.ndarray
    users: pd.DataFrame
    jobs: pd.DataFrame
    row_groups: int


class TaskStream:
    """Rows of ended tasks, written to a Parquet file in row groups, and per-user and per-job
    totals.

    A :class:`fairsim.simulator.recording.StreamingRecorder` drives it (the engine's streamed
    recording mode), without a call per task where it can: it appends a completed task's row to
    :attr:`pending` (calling :meth:`flush` when it is full) and any other ended task's with
    :meth:`row`; counts every batch that arrived with :meth:`count_arrivals`; and calls
    :meth:`close`. The file is written under a temporary name next to ``path`` and renamed into
    place by :meth:`close`; :meth:`abort` deletes it (and the spill files of arrival order).

    Parameters
    ----------
    path : path-like
        Where the finished ``tasks.parquet`` goes.
    resources : tuple of str
        Resource names (the demand columns).
    users : dict of str to int
        The engine's user codes (name → code), read when rows are written; codes are only
        added, never changed.
    row_group : int, optional
        Rows per row group (> 0; default :data:`ROW_GROUP` in end order,
        :data:`ARRIVAL_ROW_GROUP` in arrival order: the in-memory path's, for the same bytes).
    order : {"end", "arrival"}
        The row order of ``tasks.parquet`` (see :mod:`fairsim.simulator.stream`).
    servers : sequence of str, optional
        The servers' ids by position (:attr:`fairsim.simulator.cluster.ClusterState.ids`): the
        rows carry positions, the file's ``server`` column the ids. None: ``s0``, ``s1``, ...
        (:func:`fairsim.simulator.cluster.default_server_ids`).
    evictions : bool
        The rows end with the task's evictions (a scheduler that preempts): the file's last
        column ``evictions``.

    Attributes
    ----------
    pending : list
        The rows of ended tasks not yet written, flat: ``task, job_id, task_index, user,
        submit_s, start_s, finish_s, server, ended, *demand`` per row (``task``: the engine's
        task id, the arrival order), then ``evictions`` with ``evictions``. The recorder
        appends to it directly (its per-completion fast path) and calls :meth:`flush` once it
        holds :attr:`limit` items; the list is emptied in place, never replaced.
    limit : int
        Items of :attr:`pending` that make a row group.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        resources: tuple[str, ...],
        users: dict[str, int],
        row_group: int | None = None,
        order: str = "end",
        servers: Sequence[str] | None = None,
        evictions: bool = False,
    ) -> None:
        if order not in ORDERS:
            raise ValueError(f"order: {order!r} (expected one of {', '.join(ORDERS)})")
        if row_group is None:
            row_group = ARRIVAL_ROW_GROUP if order == "arrival" else ROW_GROUP
        if row_group <= 0:
            raise ValueError(f"row_group: {row_group!r} (expected a positive number of rows)")
        self.order = order
        self.path = Path(path)
        self.resources = tuple(resources)
        self.row_group = int(row_group)
        self._user_codes = users
        self._names = np.empty(0, dtype=object)
        self._names_pa = pa.array([], pa.string())
        self._servers = list(servers) if servers is not None else None
        self._servers_pa = pa.array(self._servers or [], pa.string())
        self.evictions = evictions
        self.schema = tasks_schema(self.resources, evictions=evictions)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.part")
        self._writer: pq.ParquetWriter | None = None
        # arrival order: one spill file (Arrow IPC stream) per block of row_group task ids, with
        # server positions (int32), turned into ids when the block is written
        # and user and ended codes (int32, int8), turned into names when the block is written:
        # a few bytes a row instead of a string's
        spill = tasks_schema(self.resources, pa.int32(), evictions)
        for name, kind in (("user", pa.int32()), ("ended", pa.int8())):
            spill = spill.set(spill.get_field_index(name), pa.field(name, kind))
        self._spill_schema = spill.append(pa.field("task", pa.int64()))
        self._blocks: dict[int, tuple[Path, pa.ipc.RecordBatchStreamWriter]] = {}
        if order == "end":
            self._writer = pq.ParquetWriter(self._tmp, self.schema, **STREAM_PARQUET_KW)
        self.pending: list[Any] = []
        self._width = 9 + len(self.resources) + (1 if evictions else 0)
        # a row group's worth of rows in end order; in arrival order, the rows buffered before
        # they are spilled (their row groups are written by close)
        self.limit = self._width * (self.row_group if order == "end" else SPILL_ROWS)
        self.rows = 0
        self.n_started = 0
        self.row_groups = 0
        self._ended = np.zeros(len(ENDED), dtype=np.int64)
        # per user code
        self._submitted = np.zeros(0, dtype=np.int64)
        self._completed = np.zeros(0, dtype=np.int64)
        # per job: tasks arrived, first submission, user of the first task (the smallest
        # arrival sequence number); tasks finished, last finish
        self._seen = 0
        self._arrived = _JobTotals(n="sum", submit_s="min", seq="first", user="first")
        self._finished = _JobTotals(n="sum", finish_s="max")

    # ------------------------------------------------------------------ the recorder's calls
    def row(
        self,
        task: int,
        job_id: int,
        task_index: int,
        user: int,
        submit_s: float,
        start_s: float,
        finish_s: float,
        server: int,
        ended: int,
        demand: tuple[float, ...],
        *evictions: int,
    ) -> None:
        """One row of ``tasks.parquet`` (times NaN and server -1 when null) of task ``task``;
        with ``evictions`` (the stream's), the task's evictions last."""
        flat = self.pending
        flat += (task, job_id, task_index, user, submit_s, start_s, finish_s, server, ended,
                 *demand, *evictions)  # fmt: skip
        if len(flat) >= self.limit:
            self.flush()

    def count_arrivals(self, job_id: np.ndarray, user: np.ndarray, submit_s: np.ndarray) -> None:
        """Add arrived tasks (in arrival order) to the per-user and per-job totals.

        Parameters
        ----------
        job_id : ndarray of int64, shape (n,)
        user : ndarray of int, shape (n,)
            User codes.
        submit_s : ndarray of float64, shape (n,)
        """
        if not len(job_id):
            return
        self._grow_users()
        self._submitted += np.bincount(user, minlength=self._submitted.shape[0])
        self._arrived.add(
            job_id,
            n=np.ones(len(job_id), np.int64),
            submit_s=submit_s,
            user=user.astype(np.int64),
            seq=np.arange(self._seen, self._seen + len(job_id), dtype=np.int64),
        )
        self._seen += len(job_id)

    def _grow_users(self) -> None:
        """Room in the per-user totals for every user code given so far."""
        grow = len(self._user_codes) - self._submitted.shape[0]
        if grow > 0:
            self._submitted = np.concatenate([self._submitted, np.zeros(grow, np.int64)])
            self._completed = np.concatenate([self._completed, np.zeros(grow, np.int64)])

    def close(self) -> StreamedTasks:
        """Write the last rows, finish the file and move it into place.

        Returns
        -------
        StreamedTasks

        """
        self.flush()
        if self.order == "arrival":
            self._write_in_arrival_order()
        assert self._writer is not None
        self._writer.close()
        self._writer = None
        os.replace(self._tmp, self.path)
        names = self._names_of(len(self._user_codes))
        n_users = self._submitted.shape[0]
        users = pd.DataFrame(
            {
                "user": names[:n_users],
                "tasks_submitted": self._submitted,
                "tasks_completed": self._completed,
            }
        )
        users = users[users["tasks_submitted"] > 0].sort_values("user", kind="stable")
        arrived, done = self._arrived.totals(), self._finished.totals()
        ids = arrived["job"]
        # every finished task arrived: its job is among the arrived ones
        pos = np.searchsorted(ids, done["job"])
        n_done = np.zeros(len(ids), np.int64)
        finish = np.full(len(ids), np.nan)
        n_done[pos], finish[pos] = done["n"], done["finish_s"]
        jobs = pd.DataFrame(
            {
                "job_id": ids,
                "user": names[arrived["user"]],
                "n_tasks": arrived["n"],
                "submit_s": arrived["submit_s"],
                "finish_s": finish,
                "n_done": n_done,
            }
        )
        return StreamedTasks(
            path=self.path,
            rows=self.rows,
            started=self.n_started,
            ended=self._ended.copy(),
            users=users.reset_index(drop=True),
            jobs=jobs,
            row_groups=self.row_groups,
        )

    def abort(self) -> None:
        """Stop writing and delete the partial file and the spill files (a failed or
        interrupted run)."""
        try:
            if self._writer is not None:
                try:
                    self._writer.close()
                finally:
                    self._writer = None
        finally:
            for path, writer in self._blocks.values():
                try:
                    writer.close()
                except (OSError, pa.ArrowException):  # already closed or half-written
                    pass
                path.unlink(missing_ok=True)
            self._blocks.clear()
            self._tmp.unlink(missing_ok=True)

    # ------------------------------------------------------------------ internals
    def _names_of(self, n: int) -> np.ndarray:
        """User names by code (codes 0..n-1), as a NumPy object array."""
        if self._names.shape[0] < n:
            names = np.empty(len(self._user_codes), dtype=object)
            names[:] = list(self._user_codes)
            self._names = names
            self._names_pa = pa.array(names, pa.string())
        return self._names

    def _names_of_codes(self, codes: pa.Array) -> pa.Array:
        """The users' names of user ``codes`` (int32)."""
        return self._names_pa.take(codes)

    def _ids(self, positions: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The servers' ids at ``positions`` (int32, null: never started; null ids there)."""
        if isinstance(positions, pa.ChunkedArray):
            positions = positions.combine_chunks()
        if self._servers is None:  # default ids, as many as the largest position needs
            top = pc.max(positions).as_py()
            n = 0 if top is None else top + 1
            if len(self._servers_pa) < n:
                self._servers_pa = pa.array(default_server_ids(n), pa.string())
        return self._servers_pa.take(positions)

    def _spill(self, table: pa.Table, task: np.ndarray) -> None:
        """Arrival order: append rows (with their ``task`` column) to the spill file of their
        block of task ids."""
        block = task // self.row_group
        order = np.argsort(block, kind="stable")
        block = block[order]
        table = table.take(pa.array(order))
        cuts = np.flatnonzero(np.diff(block)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(block)], strict=True):
            b = int(block[lo])
            entry = self._blocks.get(b)
            if entry is None:
                path = self.path.with_name(f".{self.path.name}.{os.getpid()}.block{b}.arrow")
                writer = pa.ipc.new_stream(path, self._spill_schema, options=_SPILL_IPC)
                entry = self._blocks[b] = (path, writer)
            entry[1].write_table(table.slice(lo, hi - lo))

    def _write_in_arrival_order(self) -> None:
        """Arrival order: write ``tasks.parquet`` from the spill files, one block of task ids
        (one row group) at a time, each put in task-id order, with the in-memory path's
        options; delete each spill file once written.

        Raises
        ------
        ValueError
            If a block does not hold each of its task ids exactly once (a recorder that lost
            or repeated a task).
        """
        release_unused()  # the event loop's freed memory, before the blocks are read
        self._writer = pq.ParquetWriter(self._tmp, self.schema, **PARQUET_KW)
        n_blocks = -(-self.rows // self.row_group)
        if sorted(self._blocks) != list(range(n_blocks)):
            raise ValueError(
                f"streamed task ids: blocks {sorted(self._blocks)} for {self.rows} rows "
                f"(expected 0..{n_blocks - 1})"
            )
        if not self.rows:  # the in-memory path writes one empty row group
            self._writer.write_table(self.schema.empty_table())
            self.row_groups += 1
        task_field = self._spill_schema.get_field_index("task")
        server_field = self.schema.get_field_index("server")
        # the spill's codes, turned into the file's strings
        names = {
            server_field: self._ids,
            self.schema.get_field_index("user"): self._names_of_codes,
            self.schema.get_field_index("ended"): _ENDED_PA.take,
        }
        self._names_of(len(self._user_codes))
        for b in range(n_blocks):
            path, writer = self._blocks[b]
            writer.close()
            lo = b * self.row_group
            size = min(self.row_group, self.rows - lo)
            pos = _read_spill(path, task_field).to_numpy() - lo
            at = np.full(size, -1, np.int64)
            if len(pos) == size and pos.min() >= 0 and pos.max() < size:
                at[pos] = np.arange(size)
            if len(pos) != size or (at < 0).any():
                raise ValueError(
                    f"streamed task ids {lo}..{lo + size - 1}: {len(pos)} rows, not each id once"
                )
            del pos
            order = pa.array(at)
            del at
            # one column at a time: the block's spilled rows are never all in memory beside
            # the row group being built (its peak: the row group and one spilled column)
            cols = []
            for i in range(len(self.schema)):
                col = _read_spill(path, i).take(order)
                cols.append(names[i](col.combine_chunks()) if i in names else col)
                del col
            del order
            table = pa.Table.from_arrays(cols, schema=self.schema)
            del cols
            self._writer.write_table(table)
            self.row_groups += 1
            del table
            path.unlink()
            del self._blocks[b]
            release_unused()  # the block's buffers, before the next block or the result tables

    def flush(self) -> None:
        """Write the pending rows as one row group and add them to the totals."""
        flat = self.pending
        if not flat:
            return
        w = self._width
        n = len(flat) // w

        def col(j: int, dtype: Any) -> np.ndarray:
            return np.array(flat[j::w], dtype=dtype)

        task_a = col(0, np.int64)
        job_a, user_a = col(1, np.int64), col(3, np.int64)
        start_a, finish_a = col(5, np.float64), col(6, np.float64)
        server_a, ended_a = col(7, np.int32), col(8, np.int8)
        self._names_of(int(user_a.max()) + 1)
        server = pa.array(server_a, pa.int32(), mask=server_a < 0)  # positions
        cols: list[pa.Array] = [
            pa.array(job_a, pa.int64()),
            pa.array(col(2, np.int32), pa.int32()),
            self._names_pa.take(pa.array(user_a)),
            pa.array(col(4, np.float64), pa.float64()),
            pa.array(start_a, pa.float64(), mask=np.isnan(start_a)),
            pa.array(finish_a, pa.float64(), mask=np.isnan(finish_a)),
            server,
            _ENDED_PA.take(pa.array(ended_a)),
        ]
        n_res = len(self.resources)
        cols += [pa.array(col(9 + r, np.float64), pa.float64()) for r in range(n_res)]
        if self.evictions:
            cols.append(pa.array(col(9 + n_res, np.int32), pa.int32()))
        flat.clear()
        if self.order == "end":
            assert self._writer is not None
            cols[6] = self._ids(server)
            self._writer.write_table(pa.Table.from_arrays(cols, schema=self.schema))
            self.row_groups += 1
        else:
            cols[2] = pa.array(user_a.astype(np.int32), pa.int32())  # codes: names at close
            cols[7] = pa.array(ended_a, pa.int8())
            self._spill(
                pa.Table.from_arrays([*cols, pa.array(task_a)], schema=self._spill_schema), task_a
            )
        self.rows += n
        self.n_started += int(np.count_nonzero(server_a >= 0))
        self._ended += np.bincount(ended_a, minlength=len(ENDED))
        done = ended_a == FINISHED
        if done.any():
            self._grow_users()  # a task can end before its batch is counted
            self._completed += np.bincount(user_a[done], minlength=self._completed.shape[0])
            jobs = job_a[done]
            self._finished.add(jobs, n=np.ones(len(jobs), np.int64), finish_s=finish_a[done])


def release_unused() -> None:
    """Give the memory the allocators hold free back to the system: Arrow's pool and, on
    Linux with glibc, the C heap (``malloc_trim``), where the event loop's freed values stay
    otherwise, under the peak of the steps that follow."""
    pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (e.g. musl): nothing to trim
            pass


def _read_spill(path: Path, field: int) -> pa.ChunkedArray:
    """Column ``field`` (its index in the spill schema) of a closed spill file: only that
    column's buffers are read and decompressed."""
    options = pa.ipc.IpcReadOptions(included_fields=[field])
    with pa.OSFile(str(path)) as source:
        return pa.ipc.open_stream(source, options=options).read_all().column(0)


class _JobTotals:
    """Per-job totals of chunks of rows, as NumPy arrays sorted by job id.

    Each :meth:`add` reduces its chunk by job; the reduced chunks are merged (reduced again)
    when they hold more entries than the last merge left, so memory stays within a small
    multiple of the number of jobs, whatever the number of rows.

    Parameters
    ----------
    **how : str
        Column name → ``"sum"``, ``"min"``, ``"max"``, or ``"first"`` (the value at the
        smallest ``seq``; needs a ``seq`` column reduced with ``"first"``, which keeps its
        minimum).
    """

    _UFUNC: ClassVar[dict[str, np.ufunc]] = {"sum": np.add, "min": np.minimum, "max": np.maximum}

    def __init__(self, **how: str) -> None:
        self.how = how
        self._chunks: list[dict[str, np.ndarray]] = []
        self._size = 0
        self._merge_at = 1 << 20

    def add(self, job: np.ndarray, **cols: np.ndarray) -> None:
        """Add rows: one job id per row and a value per row for every column."""
        if len(job):
            chunk = self._reduce({"job": np.asarray(job, np.int64), **cols})
            self._chunks.append(chunk)
            self._size += len(chunk["job"])
            if self._size > self._merge_at:
                merged = self.totals()
                self._chunks, self._size = [merged], len(merged["job"])
                self._merge_at = max(1 << 20, 2 * self._size)

    def totals(self) -> dict[str, np.ndarray]:
        """One entry per job, sorted by job id (empty arrays when nothing was added)."""
        if not self._chunks:
            return {
                "job": np.zeros(0, np.int64),
                **{c: np.zeros(0, np.float64 if c.endswith("_s") else np.int64) for c in self.how},
            }
        if len(self._chunks) == 1:
            return self._chunks[0]
        cat = {k: np.concatenate([c[k] for c in self._chunks]) for k in self._chunks[0]}
        return self._reduce(cat)

    def _reduce(self, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        job = cols["job"]
        # by job, and within a job by arrival (seq) when a column keeps the first value
        order = np.lexsort((cols["seq"], job)) if "seq" in cols else np.argsort(job, kind="stable")
        job = job[order]
        first = np.flatnonzero(np.concatenate(([True], job[1:] != job[:-1])))
        out = {"job": job[first]}
        for name, how in self.how.items():
            col = cols[name][order]
            out[name] = col[first] if how == "first" else self._UFUNC[how].reduceat(col, first)
        return out
