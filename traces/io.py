"""Reading and writing the canonical tables (atomic writes, row-group streaming).

Every writer goes through a temporary file in the destination folder followed by
:func:`os.replace`, so a reader never sees a half-written file and a failed conversion leaves
nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from simulator.atomic import atomic_path as _atomic_path
from traces.errors import TraceError
from traces.schema import RESOURCES_GOOGLE, servers_schema, tasks_schema

ROW_GROUP_SIZE = 65_536


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
        Rows in the canonical tasks schema (:func:`traces.schema.tasks_schema`); extra columns are
        dropped, columns are reordered and cast to the schema types. A table without a
        ``censored`` column gets ``censored = (end_state == "censored")``.
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
    df = _with_censored(df)
    table = _to_table(df, schema, f"tasks table for {path}")
    with _atomic_path(Path(path)) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size)
    return Path(path)


def write_servers(
    df: pd.DataFrame | pa.Table, path: Path, *, resources: tuple[str, ...] = RESOURCES_GOOGLE
) -> Path:
    """Write a canonical servers table atomically.

    Parameters
    ----------
    df : pandas.DataFrame or pyarrow.Table
        Columns ``server`` (str), one float column per resource, ``platform`` (str or null; added
        as null when absent).
    path : pathlib.Path
        Destination ``.parquet`` file.
    resources : tuple of str
        Resource column names (default ``("cpu", "mem")``).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    TraceError
        If a column is missing, cannot be cast, or a non-nullable column holds nulls.
    """
    if isinstance(df, pd.DataFrame) and "platform" not in df.columns:
        df = df.assign(platform=pd.Series([None] * len(df), dtype="object", index=df.index))
    schema = servers_schema(resources)
    table = _to_table(df, schema, f"servers table for {path}")
    with _atomic_path(Path(path)) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


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
        JSON-serialisable object.
    path : pathlib.Path
        Destination file.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    with _atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n", encoding="utf-8")
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
