"""Read back the files of run and sweep folders, refusing a missing or damaged one in one line.

``fairsim compare`` and ``fairsim sweep-report`` read files that an earlier command wrote
(``summary.json``, ``config.yaml``, Parquet tables). A file that is missing, not UTF-8, not JSON
or YAML, not a readable Parquet table, or without a column the reader needs is refused with a
:class:`fairsim.errors.ResultError` whose message names the command, the file and what is wrong:
``compare: run/bf-drfh/summary.json is damaged: not valid JSON (Expecting value: line 1 column
1)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairsim.errors import ResultError, not_utf8
from fairsim.scenario.config import yaml_load_or


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    msg = str(exc).strip()
    return msg.splitlines()[0] if msg else type(exc).__name__


def result_text(path: Path, command: str) -> str:
    """The UTF-8 text of a result file.

    Parameters
    ----------
    path : Path
    command : str
        The command that reads it, the message's first word (``compare``, ``sweep-report``).

    Raises
    ------
    ResultError
        ``<command>: <path> is missing``, cannot be read, or is not UTF-8 text.
    """
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ResultError(f"{command}: {path} is missing") from None
    except OSError as exc:
        raise ResultError(f"{command}: cannot read {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ResultError(f"{command}: {path} is damaged: {not_utf8(exc)}") from None


def is_result_number(value: Any) -> bool:
    """Whether a value read from a result's JSON is a number or ``null`` (a number that could
    not be computed); a boolean is not one."""
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def read_result_json(path: Path, command: str) -> dict[str, Any]:
    """A result's JSON object (``summary.json``).

    Parameters
    ----------
    path, command
        As :func:`result_text`.

    Raises
    ------
    ResultError
        ``<command>: <path> is damaged: not valid JSON (<why>: line L column C)``, not an
        object, or as :func:`result_text`.
    """
    try:
        data = json.loads(result_text(path, command))
    except json.JSONDecodeError as exc:
        raise ResultError(
            f"{command}: {path} is damaged: not valid JSON ({exc.msg}: line {exc.lineno} "
            f"column {exc.colno})"
        ) from None
    return _mapping(data, path, command, "a JSON object")


def read_result_yaml(path: Path, command: str) -> dict[str, Any]:
    """A run's ``config.yaml``, unvalidated (a plug-in scheduler may not be installed here).

    Parameters
    ----------
    path, command
        As :func:`result_text`.

    Raises
    ------
    ResultError
        When it is not YAML or not a mapping, or as :func:`result_text`.
    """
    data = yaml_load_or(
        result_text(path, command), lambda why: ResultError(f"{command}: {path} is damaged: {why}")
    )
    return _mapping(data, path, command, "a mapping")


def _mapping(data: Any, path: Path, command: str, expected: str) -> dict[str, Any]:
    """``data`` read from ``path``, if it is a mapping.

    Raises
    ------
    ResultError
        ``<command>: <path> is damaged: expected <expected>, got <type>`` for anything else.
    """
    if not isinstance(data, dict):
        raise ResultError(
            f"{command}: {path} is damaged: expected {expected}, got {type(data).__name__}"
        )
    return data


def read_result_table(
    path: Path, columns: Sequence[str], command: str, *, all_columns: bool = False
) -> pd.DataFrame:
    """``columns`` of a result's Parquet table (every column with ``all_columns``).

    Parameters
    ----------
    path : Path
    columns : sequence of str
        The columns the reader needs.
    command : str
        As :func:`result_text`.
    all_columns : bool
        Read every column of the table, not only ``columns``.

    Raises
    ------
    ResultError
        ``<command>: <path> is missing``, ``... is damaged: not a readable Parquet table
        (<why>)`` or ``... is damaged: no column 'x'`` (the first of ``columns`` it lacks).
    """
    if not path.is_file():
        raise ResultError(f"{command}: {path} is missing")
    try:
        names = pq.read_schema(path).names
        missing = [c for c in columns if c not in names]
        if missing:
            raise ResultError(f"{command}: {path} is damaged: no column {missing[0]!r}")
        return (
            pd.read_parquet(path) if all_columns else pd.read_parquet(path, columns=list(columns))
        )
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, ResultError):
            raise
        raise ResultError(
            f"{command}: {path} is damaged: not a readable Parquet table ({first_line(exc)})"
        ) from None
