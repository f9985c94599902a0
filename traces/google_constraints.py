"""Google 2011 placement constraints: the ``task_constraints`` and ``machine_attributes`` tables.

Official schema (``schema.csv`` of clusterdata-2011-2, also in ``../shared/traces/google-2011``)::

    task_constraints/part-NNNNN-of-NNNNN.csv.gz:
        time, job ID, task index, comparison operator, attribute name, attribute value
    machine_attributes/part-00000-of-00001.csv.gz:
        time, machine ID, attribute name, attribute value, attribute deleted

The samples in ``../shared`` do not include these tables (``PROVENANCE.md``); the readers are tested
on files written in this schema (``tests/unit/test_constraints.py``).

**Task constraints.** Every row adds one predicate on a machine attribute to a task; a task's
constraint is the conjunction of all its predicates (duplicates removed), encoded for the canonical
``constraint`` column as ``attr:<name> <op> <value>;...`` (sorted;
:mod:`fairsim.simulator.constraints` evaluates it). The comparison operator codes are
:data:`GOOGLE_2011_OPERATORS`.

**Machine attributes.** For each (machine, attribute) the row with the latest time wins; if its
``attribute deleted`` flag is 1 the machine no longer has the attribute. The result is one row per
(machine, attribute) still present.

Every row is used or counted in a skip report with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.errors import TraceError
from fairsim.traces.google_parts import int_columns, iter_batches, list_parts
from fairsim.traces.io import BadRows

#: Comparison operator codes of the 2011 ``task_constraints`` table, as given in Google's format
#: document ("Google cluster-usage traces: format + schema", section Task constraints). Could not be
#: checked against the document offline; change it here if your copy says otherwise.
GOOGLE_2011_OPERATORS = {0: "==", 1: "!=", 2: "<", 3: ">"}

TASK_CONSTRAINT_COLUMNS = ("time", "job_id", "task_index", "op", "name", "value")
MACHINE_ATTRIBUTE_COLUMNS = ("time", "machine_id", "name", "value", "deleted")

R_MALFORMED = "malformed row (wrong column count)"
R_UNPARSEABLE = "unparseable field"
R_BAD_OPERATOR = "unknown comparison operator"
R_NO_TASK = "task not in converted tasks"
R_DUPLICATE = "duplicate predicate"
R_SUPERSEDED = "superseded by a later row for the attribute"
R_DELETED = "attribute deleted"


def _batches(
    folder: Path, parts: Iterable[int] | None, columns: tuple[str, ...], bad: BadRows
) -> Iterator[pa.RecordBatch]:
    """Every record batch of the table's part files (all columns as strings)."""
    table = Path(folder).name
    files = list_parts(Path(folder), None if parts is None else list(parts), table)
    if not files:
        raise TraceError(f"{folder}: no part-NNNNN-of-NNNNN.csv.gz files")
    for _, file in files:
        yield from iter_batches(file, columns, list(columns), bad, f"{table}/{file.name}")


def _named(batch: pa.RecordBatch) -> np.ndarray:
    """Rows whose attribute name is present."""
    return np.array([n is not None and n != "" for n in batch.column("name").to_pylist()])


def read_task_constraints(
    folder: Path,
    *,
    parts: Iterable[int] | None = None,
    tasks: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read ``task_constraints`` parts into one constraint string per task.

    Parameters
    ----------
    folder : pathlib.Path
        The ``task_constraints`` folder.
    parts : iterable of int, optional
        Part numbers to read (default: all).
    tasks : pandas.DataFrame, optional
        Converted tasks (``job_id``, ``task_index``); rows for other tasks are skipped with
        reason :data:`R_NO_TASK`.

    Returns
    -------
    constraints : pandas.DataFrame
        Columns ``job_id`` (int64), ``task_index`` (int32), ``constraint`` (str).
    report : dict
        ``rows_read``, ``rows_used`` and ``skipped`` (reason → rows); used + skipped = read.

    Raises
    ------
    TraceError
        If the folder has no part files, or a part is a truncated gzip.
    """
    bad = BadRows()
    frames = []
    skipped = {R_UNPARSEABLE: 0, R_BAD_OPERATOR: 0, R_NO_TASK: 0, R_DUPLICATE: 0}
    n_valid = 0
    for batch in _batches(folder, parts, TASK_CONSTRAINT_COLUMNS, bad):
        (job, j_ok), (idx, i_ok), (op, o_ok) = int_columns(batch, ("job_id", "task_index", "op"))
        name = batch.column("name").to_numpy(zero_copy_only=False)
        value = batch.column("value").to_numpy(zero_copy_only=False)
        ok = j_ok & i_ok & o_ok & _named(batch)
        skipped[R_UNPARSEABLE] += int((~ok).sum())
        known = np.isin(op, list(GOOGLE_2011_OPERATORS))
        skipped[R_BAD_OPERATOR] += int((ok & ~known).sum())
        ok &= known
        n_valid += int(ok.sum())
        ops = np.array([GOOGLE_2011_OPERATORS.get(int(o), "?") for o in op], dtype=object)
        pred = [
            f"{n} {o} {'' if v is None else v}"
            for n, o, v in zip(name[ok], ops[ok], value[ok], strict=True)
        ]
        frames.append(pd.DataFrame({"job_id": job[ok], "task_index": idx[ok], "pred": pred}))
    skipped[R_MALFORMED] = bad.count
    rows = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame({"job_id": [], "task_index": [], "pred": []})
    )
    if tasks is not None and len(rows):
        keys = pd.MultiIndex.from_frame(tasks[["job_id", "task_index"]].astype("int64"))
        have = pd.MultiIndex.from_frame(rows[["job_id", "task_index"]].astype("int64")).isin(keys)
        skipped[R_NO_TASK] += int((~have).sum())
        rows = rows[have]
    dup = rows.duplicated()
    skipped[R_DUPLICATE] += int(dup.sum())
    rows = rows[~dup]
    out = (
        rows.sort_values("pred")
        .groupby(["job_id", "task_index"], sort=True)["pred"]
        .agg(lambda p: "attr:" + ";".join(p))
        .rename("constraint")
        .reset_index()
    )
    out["job_id"] = out["job_id"].astype("int64")
    out["task_index"] = out["task_index"].astype("int32")
    read = n_valid + skipped[R_UNPARSEABLE] + skipped[R_BAD_OPERATOR] + bad.count
    report = {
        "rows_read": read,
        "rows_used": len(rows),
        "skipped": skipped,
        "constrained_tasks": len(out),
    }
    return out, report


def read_machine_attributes(folder: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read ``machine_attributes`` into the attributes each machine has at the end of the trace.

    Parameters
    ----------
    folder : pathlib.Path
        The ``machine_attributes`` folder.

    Returns
    -------
    attributes : pandas.DataFrame
        Columns ``machine_id`` (int64), ``name`` (str), ``value`` (str or None), one row per
        attribute a machine still has.
    report : dict
        ``rows_read``, ``rows_used``, ``skipped``; used + skipped = read.

    Raises
    ------
    TraceError
        As :func:`read_task_constraints`.
    """
    bad = BadRows()
    frames = []
    unparseable = 0
    for batch in _batches(folder, None, MACHINE_ATTRIBUTE_COLUMNS, bad):
        (t, t_ok), (mid, m_ok), (deleted, d_ok) = int_columns(
            batch, ("time", "machine_id", "deleted")
        )
        name = batch.column("name").to_numpy(zero_copy_only=False)
        ok = t_ok & m_ok & d_ok & _named(batch)
        unparseable += int((~ok).sum())
        frames.append(
            pd.DataFrame(
                {
                    "time": t[ok],
                    "machine_id": mid[ok],
                    "name": name[ok],
                    "value": batch.column("value").to_numpy(zero_copy_only=False)[ok],
                    "deleted": deleted[ok] != 0,
                }
            )
        )
    rows = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame({"time": [], "machine_id": [], "name": [], "value": [], "deleted": []})
    )
    rows = rows.sort_values(["machine_id", "name", "time"], kind="stable")
    last = ~rows.duplicated(["machine_id", "name"], keep="last")
    superseded = int((~last).sum())
    final = rows[last]
    n_deleted = int(final["deleted"].sum())
    final = final[~final["deleted"]]
    out = final[["machine_id", "name", "value"]].reset_index(drop=True)
    out["machine_id"] = out["machine_id"].astype("int64")
    report = {
        "rows_read": len(rows) + unparseable + bad.count,
        "rows_used": len(out),
        "skipped": {
            R_MALFORMED: bad.count,
            R_UNPARSEABLE: unparseable,
            R_SUPERSEDED: superseded,
            R_DELETED: n_deleted,
        },
        "machines": int(out["machine_id"].nunique()),
        "attributes": int(out["name"].nunique()),
    }
    return out, report


def attribute_arrays(attributes: pd.DataFrame, machine_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Attribute values per server, for :class:`fairsim.simulator.constraints.ConstraintIndex`.

    Parameters
    ----------
    attributes : pandas.DataFrame
        From :func:`read_machine_attributes`.
    machine_ids : ndarray, shape (n_servers,)
        The pool's machine ids, in server order.

    Returns
    -------
    dict of str to ndarray of object, shape (n_servers,)
        Attribute name → value per server (None where the server lacks it).
    """
    pos = {int(m): i for i, m in enumerate(np.asarray(machine_ids).tolist())}
    out: dict[str, np.ndarray] = {}
    for name, grp in attributes.groupby("name", sort=True):
        arr = np.full(len(pos), None, dtype=object)
        for m, v in zip(grp["machine_id"].tolist(), grp["value"].tolist(), strict=True):
            i = pos.get(int(m))
            if i is not None:
                arr[i] = "" if v is None else str(v)
        out[str(name)] = arr
    return out
