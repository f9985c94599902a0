"""Out-of-core helpers: hash-partitioned spill files and a k-way merge of sorted runs.

Used by the Google 2011 converter (:mod:`fairsim.traces.google2011`) to fold a trace whose
per-task state does not fit in memory: rows are spread over ``K`` buckets by a hash of a key
(every row of a key lands in the same bucket, in arrival order), each bucket is folded on its own,
and the buckets' sorted outputs are merged into one sorted stream. All files are Arrow IPC
(uncompressed) in one temporary folder, removed when the :class:`SpillDir` context ends, on
success or on error.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

#: Multiplier of the bucket hash (Fibonacci hashing: 2^64 / golden ratio).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class SpillDir:
    """A temporary folder for spill files, removed on exit (also after an error).

    Parameters
    ----------
    parent : pathlib.Path
        Folder to create it in (the output folder, so spill files stay on the same disk and an
        atomic output folder takes them along if the process is killed).
    """

    def __init__(self, parent: Path) -> None:
        Path(parent).mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=".spill-", dir=parent))

    def __enter__(self) -> SpillDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def bucket_of(key: np.ndarray, k: int) -> np.ndarray:
    """Bucket in ``[0, k)`` of every key (a multiplicative hash; the same key, the same bucket).

    Parameters
    ----------
    key : ndarray of int64, shape (n,)
    k : int
        Number of buckets (>= 1).

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    h = key.astype(np.uint64) * _GOLDEN  # wraps modulo 2^64
    return ((h >> np.uint64(32)) % np.uint64(k)).astype(np.int64)


class Partitioner:
    """Append rows to ``k`` bucket files (Arrow IPC streams), keeping each bucket's row order.

    Parameters
    ----------
    folder : pathlib.Path
        Where the files go (a :class:`SpillDir`).
    k : int
        Number of buckets.
    schema : pyarrow.Schema
        The rows' columns.
    flush_rows : int
        Rows buffered per bucket before they are written as one record batch.
    """

    def __init__(self, folder: Path, k: int, schema: pa.Schema, flush_rows: int = 65_536) -> None:
        self.k = k
        self.schema = schema
        self.flush_rows = flush_rows
        self.paths = [Path(folder) / f"bucket-{i:05d}.arrow" for i in range(k)]
        self.rows = [0] * k
        self._buf: list[list[dict[str, np.ndarray]]] = [[] for _ in range(k)]
        self._nbuf = [0] * k
        self._writers: list[ipc.RecordBatchStreamWriter | None] = [None] * k

    def add(self, bucket: np.ndarray, cols: Mapping[str, np.ndarray]) -> None:
        """Append rows; ``bucket[i]`` is row ``i``'s bucket, ``cols`` the schema's columns."""
        if len(bucket) == 0:
            return
        if self.k == 1:
            self._put(0, dict(cols))
            return
        order = np.argsort(bucket, kind="stable")  # keeps the row order within each bucket
        bounds = np.searchsorted(bucket[order], np.arange(self.k + 1))
        sorted_cols = {name: col[order] for name, col in cols.items()}
        for b in range(self.k):
            lo, hi = bounds[b], bounds[b + 1]
            if hi > lo:
                # copies, so that the batch is freed before every bucket has flushed its part
                self._put(b, {name: col[lo:hi].copy() for name, col in sorted_cols.items()})

    def _put(self, b: int, cols: dict[str, np.ndarray]) -> None:
        self._buf[b].append(cols)
        self._nbuf[b] += len(next(iter(cols.values())))
        if self._nbuf[b] >= self.flush_rows:
            self._flush(b)

    def _flush(self, b: int) -> None:
        if not self._nbuf[b]:
            return
        parts = self._buf[b]
        arrays = [
            pa.array(np.concatenate([p[f.name] for p in parts]), type=f.type) for f in self.schema
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        writer = self._writers[b]
        if writer is None:
            writer = self._writers[b] = ipc.new_stream(str(self.paths[b]), self.schema)
        writer.write_batch(batch)
        self.rows[b] += batch.num_rows
        self._buf[b], self._nbuf[b] = [], 0

    def close(self) -> None:
        """Write what is buffered and close the files (a bucket without rows has no file)."""
        for b in range(self.k):
            self._flush(b)
            writer = self._writers[b]
            if writer is not None:
                writer.close()
                self._writers[b] = None

    def read(self, b: int) -> Iterator[pa.RecordBatch]:
        """The record batches of bucket ``b`` in the order they were added."""
        if not self.paths[b].is_file():
            return
        with pa.OSFile(str(self.paths[b])) as f:
            yield from ipc.open_stream(f)


def write_run(path: Path, table: pa.Table, chunk_rows: int) -> None:
    """Write one sorted run (a table already in output order) as an Arrow IPC file."""
    with ipc.new_file(str(path), table.schema) as writer:
        for batch in table.to_batches(max_chunksize=max(chunk_rows, 1)):
            writer.write_batch(batch)


def _count_le(cols: Sequence[np.ndarray], bound: Sequence[Any]) -> int:
    """Number of leading rows (sorted by ``cols``) whose key tuple is <= ``bound`` (bisection)."""
    lo, hi = 0, len(cols[0])
    for depth, (col, b) in enumerate(zip(cols, bound, strict=True)):
        seg = col[lo:hi]
        if depth == len(cols) - 1:
            return lo + int(np.searchsorted(seg, b, side="right"))
        left = int(np.searchsorted(seg, b, side="left"))
        right = int(np.searchsorted(seg, b, side="right"))
        lo, hi = lo + left, lo + right
        if lo == hi:
            return lo
    return lo  # pragma: no cover - no key columns


def _keys(table: pa.Table, keys: Sequence[str]) -> list[np.ndarray]:
    return [table.column(k).to_numpy() for k in keys]


#: Runs merged at once; more are merged in groups first (a merge's cost per step grows with its
#: number of runs).
FAN_IN = 16


def merge_runs(
    paths: Sequence[Path],
    keys: Sequence[str],
    *,
    fan_in: int = FAN_IN,
    chunk_rows: int = 65_536,
) -> Iterator[pa.Table]:
    """Merge sorted runs (:func:`write_run`) into one stream sorted by ``keys``.

    A blocked k-way merge: each run is read one record batch at a time; the rows of every run up
    to the smallest "last key" among the runs' current batches are taken, sorted together and
    yielded. Memory: about one batch per run. With more than ``fan_in`` runs, groups of
    ``fan_in`` are first merged into intermediate runs (next to the first run, in batches of
    ``chunk_rows`` rows), until at most ``fan_in`` are left; runs merged into an intermediate
    run are deleted then, intermediate runs when the merge ends.

    Parameters
    ----------
    paths : sequence of pathlib.Path
        Arrow IPC files, each sorted by ``keys`` (ascending), all with the same schema.
    keys : sequence of str
        Sort key columns (numeric), most significant first; key tuples must be unique across
        the runs (the order of equal keys is not defined).
    fan_in : int
        Most runs merged at once (>= 2).
    chunk_rows : int
        Rows per record batch of an intermediate run.

    Yields
    ------
    pyarrow.Table
        Consecutive pieces of the merged order.
    """
    level = list(paths)
    made: list[Path] = []  # intermediate runs, deleted when the merge ends
    step = 0
    while len(level) > fan_in:
        merged: list[Path] = []
        for g in range(0, len(level), fan_in):
            group = level[g : g + fan_in]
            if len(group) == 1:
                merged.append(group[0])
                continue
            out = group[0].parent / f"merge-{step:03d}-{g:05d}.arrow"
            writer = None
            for piece in _merge(group, keys):
                if writer is None:
                    writer = ipc.new_file(str(out), piece.schema)
                for batch in piece.to_batches(max_chunksize=chunk_rows):
                    writer.write_batch(batch)
            if writer is not None:
                writer.close()
                merged.append(out)
                made.append(out)
            for p in group:
                p.unlink(missing_ok=True)
        level = merged
        step += 1
    try:
        yield from _merge(level, keys)
    finally:
        for p in made:
            p.unlink(missing_ok=True)


def _merge(paths: Sequence[Path], keys: Sequence[str]) -> Iterator[pa.Table]:
    """One level of :func:`merge_runs`."""
    files = [pa.OSFile(str(p)) for p in paths]  # read, not mapped: mapped pages count as RSS
    readers = [ipc.open_file(f) for f in files]
    nxt = [0] * len(readers)
    bufs: list[pa.Table | None] = [None] * len(readers)

    def load(i: int) -> None:
        while nxt[i] < readers[i].num_record_batches:
            batch = readers[i].get_batch(nxt[i])
            nxt[i] += 1
            if batch.num_rows:
                bufs[i] = pa.Table.from_batches([batch])
                return
        bufs[i] = None

    try:
        for i in range(len(readers)):
            load(i)
        while True:
            live = [i for i, b in enumerate(bufs) if b is not None]
            if not live:
                return
            # runs with more batches to come bound what can be emitted now
            more = [i for i in live if nxt[i] < readers[i].num_record_batches]
            bound = None
            if more:
                lasts = []
                for i in more:
                    buf = bufs[i]
                    assert buf is not None
                    lasts.append(tuple(c[-1] for c in _keys(buf.slice(buf.num_rows - 1), keys)))
                bound = min(lasts)
            pieces = []
            for i in live:
                buf = bufs[i]
                assert buf is not None
                n = buf.num_rows if bound is None else _count_le(_keys(buf, keys), bound)
                if n:
                    pieces.append(buf.slice(0, n))
                if n == buf.num_rows:
                    load(i)
                else:
                    bufs[i] = buf.slice(n)
            if not pieces:  # pragma: no cover - the bounding run always empties its batch
                raise RuntimeError("merge_runs: no progress")
            merged = pa.concat_tables(pieces)
            if len(pieces) > 1:
                cols = _keys(merged, keys)
                merged = merged.take(pa.array(np.lexsort(cols[::-1])))
            yield merged
    finally:
        readers.clear()
        for f in files:
            f.close()
