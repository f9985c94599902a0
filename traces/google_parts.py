"""Google 2011 part files: listing ``part-NNNNN-of-NNNNN.csv.gz`` and parsing their string columns.

Shared by the converter (:mod:`fairsim.traces.google2011`) and the readers of the placement
constraint tables (:mod:`fairsim.traces.google_constraints`), so neither imports the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from fairsim.traces.io import BadRows, csv_batches

#: Bytes per CSV block read (a few MB at a time).
BLOCK_SIZE = 4 << 20
#: File name of one part of a table (the part number is group 1).
PART_RE = re.compile(r"^part-(\d{5})-of-(\d{5})\.csv\.gz$")


def iter_batches(
    path: Path, names: tuple[str, ...], include: list[str], bad: BadRows, rel: str
) -> Iterator[pa.RecordBatch]:
    """Record batches (string columns) of one part file; only an empty field is null
    (:data:`fairsim.traces.io.NULL_VALUES`).

    Parameters
    ----------
    path : pathlib.Path
        The ``.csv.gz`` part.
    names : tuple of str
        The table's columns in file order.
    include : list of str
        Columns to keep.
    bad : BadRows
        Counter of rows with a wrong column count (skipped).
    rel : str
        How error messages name the file.

    Returns
    -------
    iterator of pyarrow.RecordBatch

    Raises
    ------
    TraceError
        One line for a gzip or CSV error.
    """
    return csv_batches(
        path,
        names,
        bad=bad,
        rel=rel,
        include=include,
        block_size=BLOCK_SIZE,
    )


def to_int(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Parse a string column as int64.

    Returns
    -------
    values : ndarray of int64, shape (n,)
        The parsed values (0 where not ``ok``).
    ok : ndarray of bool, shape (n,)
        False for empty or unparseable fields.
    """
    try:
        ints = pc.cast(arr, pa.int64())
        ok = ~np.asarray(ints.is_null())
        return np.asarray(ints.fill_null(0), dtype=np.int64), ok
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # a field of the batch is not an integer: the others through float64, which holds every
        # integer below 2**53 exactly; those at or above it (the trace's 2**63 - 1, "after the
        # window") are read again exactly from their text, as the cast above reads them
        texts = pd.Series(arr.to_pandas())
        num = pd.to_numeric(texts, errors="coerce").to_numpy(np.float64)
        ok = np.isfinite(num) & (num == np.round(num))
        big = ok & (np.abs(num) >= 2.0**53)
        values = np.where(ok & ~big, num, 0).astype(np.int64)
        for i in np.flatnonzero(big):
            exact = _exact_int(texts.iat[int(i)])
            ok[i] = exact is not None
            values[i] = 0 if exact is None else exact
        return values, ok


def _exact_int(text: object) -> int | None:
    """The int64 a field's text spells (as pyarrow's cast reads it), or None."""
    try:
        value = int(str(text).strip())
    except ValueError:
        return None  # "1e20", "1.0e19": a float's text, not an integer's
    return value if -(2**63) <= value < 2**63 else None


def int_columns(batch: pa.RecordBatch, names: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`to_int` of each named column of ``batch``, in the order of ``names``: one
    ``(values, ok)`` pair per column."""
    return [to_int(batch.column(name)) for name in names]


def to_float(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Parse a string column as float64.

    Returns
    -------
    values : ndarray of float64, shape (n,)
        The parsed values, NaN for empty (null) fields.
    bad : ndarray of bool, shape (n,)
        True for non-empty fields that are not a finite number: text, ``nan``, ``inf``, ``-inf``
        or a value beyond float64's range alike.
    """
    empty = np.asarray(arr.is_null())
    try:
        vals = np.asarray(pc.cast(arr, pa.float64()).fill_null(np.nan), dtype=np.float64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        vals = pd.to_numeric(pd.Series(arr.to_pandas()), errors="coerce").to_numpy(np.float64)
    bad = ~empty & ~np.isfinite(vals)
    return vals, bad


def list_parts(folder: Path, parts: list[int] | None, rel: str) -> list[tuple[int, Path]]:
    """The part files of one table folder, by part number.

    Parameters
    ----------
    folder : pathlib.Path
        E.g. ``<src>/task_events``; a missing folder has no parts.
    parts : list of int or None
        Part numbers to keep (those present); ``None``: every part present.
    rel : str
        The table's name (unused; kept for the callers' symmetry with :func:`iter_batches`).

    Returns
    -------
    list of (int, pathlib.Path)
        ``(part number, file)`` in increasing part order.
    """
    found: dict[int, Path] = {}
    if folder.is_dir():
        for p in folder.iterdir():
            m = PART_RE.match(p.name)
            if m:
                found[int(m.group(1))] = p
    if parts is None:
        return sorted(found.items())
    return [(i, found[i]) for i in sorted(set(parts)) if i in found]
