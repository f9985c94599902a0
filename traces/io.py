"""Reading and writing the canonical tables (atomic writes, row-group streaming).

Every writer goes through a temporary file in the destination folder followed by
:func:`os.replace`, so a reader never sees a half-written file and a failed conversion leaves
nothing behind.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import json
import sys
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from fairsim.atomic import atomic_path as _atomic_path
from fairsim.atomic import json_text
from fairsim.errors import TraceError
from fairsim.traces.schema import (
    PLACEMENT_END_EVENTS,
    PLACEMENTS_SCHEMA_VERSION,
    RESOURCES_GOOGLE,
    TIER_COLUMNS,
    placements_schema,
    servers_schema,
    tasks_schema,
)

ROW_GROUP_SIZE = 65_536
#: Default share of a table's rows that may be malformed or unparseable before a conversion is
#: refused (``bad_row_threshold``; ``trace convert --bad-row-threshold``).
BAD_ROW_THRESHOLD = 0.5
#: How long to wait for pyarrow's background reader to release a file's row handler.
_RELEASE_TIMEOUT_S = 10.0


# --------------------------------------------------------------------------- reading CSV


class BadRows:
    """Counts the rows of a table with a wrong column count (pyarrow's ``invalid_row_handler``).

    One counter per table; :func:`csv_batches` hands pyarrow a fresh per-file handler that adds to
    it. ``files`` maps each file to the malformed rows found in it.
    """

    def __init__(self) -> None:
        self.count = 0
        self.files: dict[Path, int] = {}
        self.undecodable = 0  # malformed rows pyarrow could not even decode (not UTF-8)

    def __call__(self, row: Any) -> str:
        self.count += 1
        return "skip"


class _FileHandler:
    """The per-file row handler given to pyarrow (so its release can be awaited, see below)."""

    def __init__(self, counter: BadRows, path: Path) -> None:
        self.counter = counter
        self.path = path

    def __call__(self, row: Any) -> str:
        self.counter.files[self.path] = self.counter.files.get(self.path, 0) + 1
        return self.counter(row)


@contextlib.contextmanager
def _undecodable_rows(counter: BadRows) -> Iterator[None]:
    """Count, instead of printing, the malformed rows pyarrow cannot decode as UTF-8.

    pyarrow decodes a malformed row's text before it calls the row handler; on bytes that are not
    UTF-8 that fails outside any Python frame, and Python prints it as an "Exception ignored"
    traceback. This hook (installed only while pyarrow parses) counts those failures on the
    counter; :func:`csv_batches` then names the file as not UTF-8.
    """
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.object, _FileHandler) and isinstance(
            unraisable.exc_value, UnicodeDecodeError
        ):
            counter.undecodable += 1
            return
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _await_release(ref: weakref.ReferenceType[Any]) -> None:
    """Wait until pyarrow's reader has dropped the Python row handler ``ref`` points to.

    A failing or finished streaming reader is destroyed by the pyarrow I/O thread that ran its last
    read-ahead, and that thread takes the GIL to drop the Python handler. If the interpreter is
    already shutting down then, the thread is torn down mid-C++ and the process aborts with
    "terminate called without an active exception" (exit 134). Sleeping releases the GIL so the
    thread can finish while the interpreter is still alive.
    """
    deadline = time.monotonic() + _RELEASE_TIMEOUT_S
    while ref() is not None and time.monotonic() < deadline:
        time.sleep(0.001)


#: The only field text read as missing: the Google and Alibaba tables mark a missing value by an
#: empty field, so any other text (``nan``, ``NA``, ``NULL``, ``inf``) is a value, parsed or found
#: unparseable (pyarrow's default list would read ``NA`` or ``nan`` as missing, and a required
#: field so read as empty, an optional one as absent).
NULL_VALUES = [""]


def csv_batches(
    path: Path,
    names: tuple[str, ...] | list[str],
    *,
    bad: BadRows,
    rel: str,
    include: list[str] | None = None,
    skip_rows: int = 0,
    block_size: int = 4 << 20,
) -> Iterator[pa.RecordBatch]:
    """Stream a headerless CSV(.gz) file as record batches of string columns.

    Parameters
    ----------
    path : pathlib.Path
        The file; ``.gz`` is decompressed on the fly.
    names : sequence of str
        The column names, in file order (the expected column count).
    bad : BadRows
        Counter of rows with a wrong column count; they are skipped.
    rel : str
        How error messages name the file (e.g. ``task_events/part-00000-of-00500.csv.gz``).
    include : list of str, optional
        Columns to keep (default: all), read as strings; only an empty field is null
        (:data:`NULL_VALUES`).
    skip_rows : int
        Lines to skip first (a header row).
    block_size : int
        Bytes per block read.

    Yields
    ------
    pyarrow.RecordBatch

    Raises
    ------
    TraceError
        ``<rel>: empty file``, ``<rel> line L: not UTF-8 text (...)``, ``<rel>: truncated or
        corrupt gzip (...)`` or ``<rel>: unreadable CSV (...)``, one line.
    """
    path = Path(path)
    cols = list(include) if include is not None else list(names)
    handler: _FileHandler | None = _FileHandler(bad, path)
    ref = weakref.ref(handler)
    reader = None
    try:
        try:
            with _undecodable_rows(bad):
                reader = pacsv.open_csv(
                    path,
                    read_options=pacsv.ReadOptions(
                        column_names=list(names), block_size=block_size, skip_rows=skip_rows
                    ),
                    parse_options=pacsv.ParseOptions(invalid_row_handler=handler),
                    convert_options=pacsv.ConvertOptions(
                        include_columns=cols,
                        column_types={c: pa.string() for c in cols},
                        strings_can_be_null=True,
                        null_values=NULL_VALUES,
                    ),
                )
            handler = None
            while True:
                try:
                    with _undecodable_rows(bad):
                        batch = reader.read_next_batch()
                except StopIteration:
                    return
                yield batch
        except (OSError, EOFError, pa.ArrowInvalid) as exc:
            if bad.undecodable or "invalid utf8" in str(exc).lower():
                line = first_undecodable_line(path)
                where = f"{rel} line {line}" if line else rel
                raise TraceError(f"{where}: not UTF-8 text (a row holds other bytes)") from None
            raise TraceError(f"{rel}: {_csv_problem(exc)}") from None
    finally:
        handler = None
        reader = None
        _await_release(ref)


def first_undecodable_line(path: Path) -> int:
    """The number (1-based) of the first line of ``path`` (``.gz`` decompressed) that is not
    UTF-8 text; 0 when every line decodes or the file cannot be read to there."""
    opener: Any = gzip.open if Path(path).suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    return number
    except (OSError, EOFError):
        pass
    return 0


def _csv_problem(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    low = msg.lower()
    if "empty csv" in low:
        return "empty file (no rows)"
    if "compress" in low or "gzip" in low or isinstance(exc, EOFError):
        return f"truncated or corrupt gzip ({msg})"
    return f"unreadable CSV ({msg})"


def _open_text(path: Path) -> Any:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    return opener(path, "rt", encoding="utf-8", errors="replace", newline="")


def first_bad_line(
    path: Path, n_columns: int, *, skip_rows: int = 0, parsed_index: int | None = None
) -> tuple[int, str, str]:
    """Find a file's first bad row: a wrong column count, or the ``parsed_index``-th good row.

    ``parsed_index`` counts the rows with the right column count (0-based, empty lines and the
    first ``skip_rows`` lines not counted), as a converter's batches do.

    Returns
    -------
    tuple of (int, str, str)
        ``(line number (1-based), the row's text, "columns" or "parsed")``; ``(0, "", "")``
        when no such row is found.
    """
    good = 0
    with _open_text(Path(path)) as fh:
        for _ in range(skip_rows):
            fh.readline()
        reader = csv.reader(fh)
        try:
            for fields in reader:
                if not fields:
                    continue
                line = reader.line_num + skip_rows
                text = ",".join(fields)
                if len(fields) != n_columns:
                    return line, text, f"columns:{len(fields)}"
                if parsed_index is not None and good == parsed_index:
                    return line, text, "parsed"
                good += 1
        except (csv.Error, OSError, EOFError):
            pass
    return 0, "", ""


def check_bad_rows(
    table: str,
    rows_read: int,
    bad: int,
    threshold: float,
    locate: Any,
) -> None:
    """Refuse a table whose share of bad rows exceeds ``threshold`` (or that has no rows).

    Parameters
    ----------
    table : str
        The table's name in the skip report.
    rows_read, bad : int
        Rows read, and of them rows skipped as malformed or unparseable.
    threshold : float
        Largest allowed share of bad rows, in [0, 1] (1: never refuse).
    locate : callable
        ``locate() -> str``: where the first bad row is and why (called only on refusal).

    Raises
    ------
    TraceError
        ``<table>: K of N rows (P %) are malformed or unparseable, more than the T % allowed
        (bad_row_threshold); first bad row: <file> line L: <why>``.
    """
    if rows_read and bad / rows_read > threshold:
        raise TraceError(
            f"{table}: {bad} of {rows_read} rows ({100 * bad / rows_read:.0f} %) are malformed "
            f"or unparseable, more than the {100 * threshold:g} % allowed (bad_row_threshold); "
            f"first bad row: {locate()}"
        )


class FirstBadRow:
    """Where the first bad row of a table is, for :func:`check_bad_rows`'s message.

    Converters report, file by file, the rows they reject as unparseable (:meth:`parsed`) and,
    after each file, its rows with a wrong column count (:meth:`file_done`); only the first file
    with a bad row is kept, and :meth:`describe` scans it again to find the line.

    Parameters
    ----------
    n_columns : int
        The table's column count.
    skip_rows : int
        Header lines of each file.
    """

    def __init__(self, n_columns: int, skip_rows: int = 0) -> None:
        self.n_columns = n_columns
        self.skip_rows = skip_rows
        self.first: tuple[Path, str, int | None, str] | None = None

    def parsed(self, path: Path, rel: str, offset: int, mask: Any, reason: str) -> None:
        """Note rows ``offset + i`` (``mask[i]`` true) of a file's parsed rows as bad."""
        if self.first is None and mask.any():
            self.first = (Path(path), rel, offset + int(mask.argmax()), reason)

    def file_done(self, path: Path, rel: str, bad: BadRows) -> None:
        """Note the end of a file; its malformed rows (``bad.files``) count if none came first."""
        if self.first is None and bad.files.get(Path(path)):
            self.first = (Path(path), rel, None, "wrong column count")

    def describe(self) -> str:
        """``<rel> line L ('text'): why`` (the line found by :func:`first_bad_line`)."""
        if self.first is None:
            return "unknown"
        path, rel, index, reason = self.first
        line, text, kind = first_bad_line(
            path, self.n_columns, skip_rows=self.skip_rows, parsed_index=index
        )
        if not line:
            return f"{rel}: {reason}"
        shown = text if len(text) <= 60 else text[:57] + "..."
        if kind.startswith("columns:"):
            why = f"{kind.split(':')[1]} columns, expected {self.n_columns}"
        else:
            why = reason
        return f"{rel} line {line} ({shown!r}): {why}"


# --------------------------------------------------------------------------- Parquet tables


def _to_table(df: pd.DataFrame | pa.Table, schema: pa.Schema, what: str) -> pa.Table:
    names = schema.names
    if isinstance(df, pa.Table):
        missing = [n for n in names if n not in df.column_names]
        if missing:
            raise TraceError(f"{what}: missing column(s) {missing}")
        table = df.select(names)
    else:
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise TraceError(f"{what}: missing column(s) {missing}")
        table = pa.Table.from_pandas(df[names], preserve_index=False)
    loose = pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata)
    try:
        table = table.cast(loose)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        msg = str(exc).splitlines()[0]
        raise TraceError(f"{what}: does not match the canonical schema ({msg})") from None
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise TraceError(f"{what}: column {field.name!r} has null values")
    return pa.Table.from_arrays(table.columns, schema=schema)


def _with_tiers(df: pd.DataFrame | pa.Table) -> pd.DataFrame | pa.Table:
    """Add the tier columns (:data:`fairsim.traces.schema.TIER_COLUMNS`) a tasks table lacks, as
    nulls: a trace that says nothing of its tasks' priority."""
    if isinstance(df, pa.Table):
        for name in TIER_COLUMNS:
            if name not in df.column_names:
                kind = pa.string() if name == "qos" else pa.int32()
                df = df.append_column(name, pa.nulls(df.num_rows, kind))
        return df
    missing = {n: pd.Series([None] * len(df), dtype="object", index=df.index)
               for n in TIER_COLUMNS if n not in df.columns}  # fmt: skip
    return df.assign(**missing) if missing else df


def _with_censored(df: pd.DataFrame | pa.Table) -> pd.DataFrame | pa.Table:
    """Add ``censored = (end_state == "censored")`` to a tasks table that lacks the column."""
    if isinstance(df, pa.Table):
        if "censored" in df.column_names or "end_state" not in df.column_names:
            return df
        flag = pc.fill_null(pc.equal(df.column("end_state"), "censored"), False)
        return df.append_column("censored", flag)
    if "censored" in df.columns or "end_state" not in df.columns:
        return df
    return df.assign(censored=(df["end_state"] == "censored").to_numpy(dtype=bool))


def write_tasks(
    df: pd.DataFrame | pa.Table,
    path: Path,
    *,
    resources: tuple[str, ...] = RESOURCES_GOOGLE,
    row_group_size: int = ROW_GROUP_SIZE,
) -> Path:
    """Write a canonical tasks table atomically.

    Parameters
    ----------
    df : pandas.DataFrame or pyarrow.Table
        Rows in the canonical tasks schema (:func:`fairsim.traces.schema.tasks_schema`); extra
        columns are dropped, columns are reordered and cast to the schema types. A table
        without a ``censored`` column gets ``censored = (end_state == "censored")``, one without
        the tier columns (``priority``, ``scheduling_class``, ``qos``) gets them as nulls.
    path : pathlib.Path
        Destination ``.parquet`` file.
    resources : tuple of str
        Resource column names (default ``("cpu", "mem")``).
    row_group_size : int
        Rows per Parquet row group (the simulator streams row groups).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    TraceError
        If a column is missing, cannot be cast, or a non-nullable column holds nulls.
    """
    schema = tasks_schema(resources)
    df = _with_tiers(_with_censored(df))
    table = _to_table(df, schema, f"tasks table for {path}")
    return _write_atomically(table, path, row_group_size=row_group_size)


def write_servers(
    df: pd.DataFrame | pa.Table, path: Path, *, resources: tuple[str, ...] = RESOURCES_GOOGLE
) -> Path:
    """Write a canonical servers table atomically.

    Parameters
    ----------
    df : pandas.DataFrame or pyarrow.Table
        Columns ``server`` (str), one float column per resource, ``platform`` (str or null; added
        as null when absent).
    path, resources
        As for :func:`write_tasks`.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    TraceError
        As for :func:`write_tasks`.
    """
    if isinstance(df, pd.DataFrame) and "platform" not in df.columns:
        df = df.assign(platform=pd.Series([None] * len(df), dtype="object", index=df.index))
    schema = servers_schema(resources)
    table = _to_table(df, schema, f"servers table for {path}")
    return _write_atomically(table, path)


def write_placements(
    df: pd.DataFrame | pa.Table, path: Path, *, row_group_size: int = ROW_GROUP_SIZE
) -> Path:
    """Write a recorded placements table atomically (schema:
    :func:`fairsim.traces.schema.placements_schema`).

    Parameters
    ----------
    df : pandas.DataFrame or pyarrow.Table
        Columns ``job_id``, ``task_index``, ``run``, ``machine``, ``start_s``, ``end_s``,
        ``end_event``, ``censored``, ``cpu``, ``mem``; extra columns are dropped, columns cast to
        the schema types.
    path, row_group_size
        As for :func:`write_tasks`.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    TraceError
        As for :func:`write_tasks`.
    """
    table = _to_table(df, placements_schema(), f"placements table for {path}")
    return _write_atomically(table, path, row_group_size=row_group_size)


def _write_atomically(table: pa.Table, path: Path, **options: Any) -> Path:
    """Write ``table`` to ``path`` through a temporary file renamed into place; ``options`` go to
    :func:`pyarrow.parquet.write_table`."""
    with _atomic_path(Path(path)) as tmp:
        pq.write_table(table, tmp, **options)
    return Path(path)


class RowGroupWriter:
    """Write a canonical table atomically from pieces, in row groups of exactly ``row_group_size``.

    The pieces are buffered and cut into row groups of ``row_group_size`` rows (the last one
    shorter), each written from one contiguous chunk, so the file is byte-identical to
    :func:`write_tasks` / :func:`write_placements` writing the concatenated table at once, while
    memory holds about one row group. Used by the out-of-core Google 2011 converter.

    Parameters
    ----------
    path : pathlib.Path
        Destination ``.parquet`` file (written to a temporary file next to it, moved into place
        by :meth:`close`; deleted by :meth:`abort`).
    kind : {"tasks", "placements"}
        The table's schema: :func:`fairsim.traces.schema.tasks_schema` (with ``resources``) or
        :func:`fairsim.traces.schema.placements_schema`.
    resources : tuple of str
        Resource columns of a tasks table.
    row_group_size : int
        Rows per Parquet row group.

    Raises
    ------
    TraceError
        From :meth:`write`, if a piece misses a column, cannot be cast, or a non-nullable column
        holds nulls.
    """

    def __init__(
        self,
        path: Path,
        kind: str,
        *,
        resources: tuple[str, ...] = RESOURCES_GOOGLE,
        row_group_size: int = ROW_GROUP_SIZE,
    ) -> None:
        if kind not in ("tasks", "placements"):
            raise TraceError(f"RowGroupWriter: kind {kind!r}, expected 'tasks' or 'placements'")
        self.path = Path(path)
        self.kind = kind
        self.schema = tasks_schema(resources) if kind == "tasks" else placements_schema()
        self.row_group_size = row_group_size
        self.rows = 0
        self._pending: list[pa.Table] = []
        self._n_pending = 0
        self._ctx = _atomic_path(self.path)
        self._tmp = self._ctx.__enter__()
        self._writer: pq.ParquetWriter | None = pq.ParquetWriter(self._tmp, self.schema)

    def write(self, piece: pd.DataFrame | pa.Table) -> None:
        """Append rows (any count, in output order)."""
        if self.kind == "tasks":
            piece = _with_tiers(_with_censored(piece))
        table = _to_table(piece, self.schema, f"{self.kind} table for {self.path}")
        if table.num_rows == 0:
            return
        self._pending.append(table)
        self._n_pending += table.num_rows
        while self._n_pending >= self.row_group_size:
            self._flush(self.row_group_size)

    def _flush(self, n: int) -> None:
        """Write the first ``n`` pending rows as one row group (one contiguous chunk)."""
        assert self._writer is not None
        head: list[pa.Table] = []
        need = n
        while need:
            first = self._pending[0]
            take = min(need, first.num_rows)
            head.append(first.slice(0, take))
            if take == first.num_rows:
                self._pending.pop(0)
            else:
                self._pending[0] = first.slice(take)
            need -= take
        table = pa.concat_tables(head).combine_chunks()
        self._writer.write_table(table, row_group_size=self.row_group_size)
        self.rows += n
        self._n_pending -= n

    def close(self) -> Path:
        """Write the last row group and move the file into place; returns ``path``."""
        assert self._writer is not None
        if self._n_pending:
            self._flush(self._n_pending)
        if self.rows == 0:  # as pq.write_table writes an empty table
            self._writer.write_table(self.schema.empty_table(), row_group_size=self.row_group_size)
        self._writer.close()
        self._writer = None
        self._ctx.__exit__(None, None, None)
        return self.path

    def abort(self) -> None:
        """Delete the temporary file (nothing is written at ``path``); no-op after close."""
        if self._writer is None:
            return
        self._writer.close()
        self._writer = None
        exc = TraceError(f"{self.path}: writing aborted")
        with contextlib.suppress(TraceError):
            self._ctx.__exit__(TraceError, exc, None)


def read_placements(path: Path) -> pd.DataFrame:
    """Read a recorded placements table (``placements.parquet`` of a Google 2011 conversion).

    Parameters
    ----------
    path : pathlib.Path
        The file, or the converted folder that holds it.

    Returns
    -------
    pandas.DataFrame
        One row per recorded run, columns and order of
        :func:`fairsim.traces.schema.placements_schema` (``job_id`` int64, ``task_index`` int32,
        ``run`` int32, ``machine`` str, ``start_s``/``end_s`` float64 seconds, ``end_event`` str,
        ``censored`` bool, the run's request ``cpu``/``mem`` float64), sorted by
        ``(start_s, job_id, task_index, run)``.

    Raises
    ------
    TraceError
        One line naming the file and the problem: missing file, not a placements table or
        another schema version, a missing column or one of another type, nulls, an unknown
        ``end_event``, ``end_s < start_s``, ``censored`` not equal to
        ``end_event == "censored"``, or a request that is negative or not finite.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "placements.parquet"
    if not path.is_file():
        raise TraceError(f"{path}: placements file not found")
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise TraceError(f"{path}: not a Parquet file ({str(exc).splitlines()[0]})") from None
    meta = table.schema.metadata or {}
    kind = meta.get(b"fairsim.table", b"").decode()
    version = meta.get(b"fairsim.schema", b"").decode()
    if kind != "placements":
        raise TraceError(f"{path}: fairsim.table is {kind!r}, expected 'placements'")
    if version != str(PLACEMENTS_SCHEMA_VERSION):
        raise TraceError(
            f"{path}: placements schema version {version!r}, expected "
            f"'{PLACEMENTS_SCHEMA_VERSION}' (convert the trace again)"
        )
    for field in placements_schema():
        if field.name not in table.column_names:
            raise TraceError(f"{path}: column {field.name!r} missing")
        col = table.column(field.name)
        if col.type != field.type:
            raise TraceError(f"{path}: column {field.name!r} is {col.type}, expected {field.type}")
        if col.null_count:
            raise TraceError(f"{path}: column {field.name!r} has null values")
    df = table.select(placements_schema().names).to_pandas()
    bad = ~df["end_event"].isin(PLACEMENT_END_EVENTS)
    if bad.any():
        value = df["end_event"][bad].iloc[0]
        raise TraceError(f"{path}: column 'end_event' has value {value!r}")
    if (df["end_s"] < df["start_s"]).any():
        raise TraceError(f"{path}: column 'end_s' is below 'start_s' in some rows")
    if not (df["censored"] == (df["end_event"] == "censored")).all():
        raise TraceError(f"{path}: column 'censored' disagrees with end_event == 'censored'")
    for r in RESOURCES_GOOGLE:
        v = df[r].to_numpy()
        bad = ~(np.isfinite(v) & (v >= 0))
        if bad.any():
            raise TraceError(f"{path}: column {r!r} has value {float(v[bad][0])!r} (expected >= 0)")
    return df


def placements_version(path: Path) -> str | None:
    """The schema version of a placements table (``fairsim.schema`` of its metadata), read from
    the file's footer only; None when the file is missing or not a Parquet file.

    Parameters
    ----------
    path : pathlib.Path
        The ``placements.parquet`` file.

    Returns
    -------
    str or None
        Compare with ``str(PLACEMENTS_SCHEMA_VERSION)``
        (:data:`fairsim.traces.schema.PLACEMENTS_SCHEMA_VERSION`).
    """
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    raw = meta.get(b"fairsim.schema")
    return None if raw is None else raw.decode()


def write_machine_attributes(df: pd.DataFrame, path: Path) -> Path:
    """Write machine attributes (``machine_id`` int64, ``name`` str, ``value`` str or null)
    atomically (``traces/google_constraints.py``).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    schema = pa.schema(
        [
            pa.field("machine_id", pa.int64(), nullable=False),
            pa.field("name", pa.string(), nullable=False),
            pa.field("value", pa.string()),
        ]
    )
    table = _to_table(df, schema, f"machine attributes for {path}")
    with _atomic_path(Path(path)) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def write_json_atomic(obj: Any, path: Path) -> Path:
    """Write ``obj`` as indented JSON atomically.

    Parameters
    ----------
    obj : object
        JSON-serialisable object; non-finite floats are written as ``null``
        (:func:`fairsim.atomic.json_text`).
    path : pathlib.Path
        Destination file.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    with _atomic_path(Path(path)) as tmp:
        tmp.write_text(json_text(obj, sort_keys=False) + "\n", encoding="utf-8")
    return Path(path)


def iter_task_batches(path: Path, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """Stream a tasks table one Parquet row group at a time.

    Parameters
    ----------
    path : pathlib.Path
        A ``tasks.parquet`` written by :func:`write_tasks`.
    columns : list of str, optional
        Columns to read (default: all).

    Yields
    ------
    pyarrow.RecordBatch
        One batch per row group, in file order (submit order).

    Raises
    ------
    TraceError
        If the file is missing or a requested column does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: tasks file not found")
    pf = pq.ParquetFile(path)
    if columns is not None:
        unknown = [c for c in columns if c not in pf.schema_arrow.names]
        if unknown:
            raise TraceError(f"{path}: unknown column(s) {unknown}")
    for i in range(pf.num_row_groups):
        table = pf.read_row_group(i, columns=columns)
        yield from table.to_batches(max_chunksize=None)


def read_tasks_meta(path: Path) -> dict[str, Any]:
    """Read the metadata of a tasks table without loading its rows.

    Parameters
    ----------
    path : pathlib.Path
        A ``tasks.parquet`` file.

    Returns
    -------
    dict
        ``{"rows": int, "row_groups": int, "schema": str | None, "resources": list[str] | None,
        "columns": list[str]}``.

    Raises
    ------
    TraceError
        If the file is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: tasks file not found")
    pf = pq.ParquetFile(path)
    meta = pf.schema_arrow.metadata or {}
    raw_res = meta.get(b"fairsim.resources")
    raw_ver = meta.get(b"fairsim.schema")
    return {
        "rows": pf.metadata.num_rows,
        "row_groups": pf.num_row_groups,
        "schema": raw_ver.decode() if raw_ver is not None else None,
        "resources": json.loads(raw_res) if raw_res is not None else None,
        "columns": list(pf.schema_arrow.names),
    }
