"""DAG dependencies of Alibaba v2018 batch jobs, encoded in task names.

Alibaba cluster-trace-v2018 names a batch task ``<letters><n>[_<p>...]``: ``M5_3_4`` is task 5 of
its job, which waits for tasks 3 and 4 of the same job; ``R2`` is task 2 without parents. Names
starting ``task_`` (e.g. ``task_LTg0MTUw...==``) belong to independent tasks with no DAG.

A job's DAG is validated as a whole. A job with an unparseable name, a task number used twice, a
parent that is not a task of the job, or a dependency cycle (including a task waiting for itself) is
rejected with one of the ``R_*`` reasons below; its rows go to the skip report.

Canonical encoding (``traces/schema.py``): a DAG task's ``task_index`` is its number ``n``;
independent ``task_`` tasks get the indices after the largest DAG number of their job, in row
order; ``parents`` is the comma-separated list of parent task indices in ascending order
(``"3,4"``), null when the task has none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

R_BAD_NAME = "unparseable DAG task name"
R_DUPLICATE = "duplicate task number in job"
R_MISSING_PARENT = "missing parent task in job"
R_CYCLE = "dependency cycle in job"

INDEPENDENT_PREFIX = "task_"
_NAME_RE = re.compile(r"^[A-Za-z]+(\d+)((?:_\d+)*)$")
_INDEX_LIMIT = 1 << 31


class DagError(ValueError):
    """A job's DAG is invalid; ``args[0]`` is one of the ``R_*`` reasons."""


@lru_cache(maxsize=1 << 16)
def parse_task_name(name: str) -> tuple[int, tuple[int, ...]] | None:
    """Parse one Alibaba v2018 task name.

    Parameters
    ----------
    name : str
        Task name, e.g. ``"M5_3_4"``, ``"R2"`` or ``"task_LTg0MTUw=="``.

    Returns
    -------
    tuple of (int, tuple of int) or None
        ``(task number, parent numbers)`` for a DAG name; ``None`` for an independent
        ``task_`` name.

    Raises
    ------
    DagError
        If the name is neither (reason :data:`R_BAD_NAME`).

    Examples
    --------
    >>> parse_task_name("M5_3_4")
    (5, (3, 4))
    >>> parse_task_name("task_abc") is None
    True
    """
    if name.startswith(INDEPENDENT_PREFIX):
        return None
    m = _NAME_RE.match(name)
    if m is None:
        raise DagError(R_BAD_NAME)
    parents = tuple(int(p) for p in m.group(2).split("_")[1:])
    number = int(m.group(1))
    if number >= _INDEX_LIMIT or any(p >= _INDEX_LIMIT for p in parents):
        raise DagError(R_BAD_NAME)
    return number, parents


def job_dag(names: Sequence[str]) -> tuple[list[int], list[str | None]]:
    """Validate one job's DAG and return its canonical task indices and parents.

    Parameters
    ----------
    names : sequence of str
        The task names of one job, in row order.

    Returns
    -------
    task_index : list of int
        One per name (see the module docstring).
    parents : list of (str or None)
        Comma-separated parent indices, ascending, or ``None`` when the task has no parent.

    Raises
    ------
    DagError
        With reason :data:`R_BAD_NAME`, :data:`R_DUPLICATE`, :data:`R_MISSING_PARENT` or
        :data:`R_CYCLE`.

    Examples
    --------
    >>> job_dag(["M1", "M2", "R3_1_2"])
    ([1, 2, 3], [None, None, '1,2'])
    """
    parsed = [parse_task_name(n) for n in names]
    numbers = [p[0] for p in parsed if p is not None]
    if len(set(numbers)) != len(numbers):
        raise DagError(R_DUPLICATE)
    known = set(numbers)
    deps: dict[int, tuple[int, ...]] = {}
    for p in parsed:
        if p is None:
            continue
        number, parents = p
        if any(q not in known for q in parents):
            raise DagError(R_MISSING_PARENT)
        deps[number] = tuple(sorted(set(parents)))
    _check_acyclic(deps)
    nxt = max(numbers, default=0) + 1
    index: list[int] = []
    out: list[str | None] = []
    for p in parsed:
        if p is None:
            if nxt >= _INDEX_LIMIT:
                raise DagError(R_BAD_NAME)
            index.append(nxt)
            out.append(None)
            nxt += 1
        else:
            index.append(p[0])
            ps = deps[p[0]]
            out.append(",".join(map(str, ps)) if ps else None)
    return index, out


def _check_acyclic(deps: dict[int, tuple[int, ...]]) -> None:
    """Kahn's algorithm; raise :data:`R_CYCLE` if some task is never released."""
    waiting = {t: len(ps) for t, ps in deps.items()}
    children: dict[int, list[int]] = {t: [] for t in deps}
    for t, ps in deps.items():
        for p in ps:
            children[p].append(t)
    ready = [t for t, n in waiting.items() if n == 0]
    done = 0
    while ready:
        t = ready.pop()
        done += 1
        for c in children[t]:
            waiting[c] -= 1
            if waiting[c] == 0:
                ready.append(c)
    if done != len(deps):
        raise DagError(R_CYCLE)


def dag_columns(job_id: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Canonical ``task_index`` and ``parents`` for many jobs at once.

    Parameters
    ----------
    job_id : ndarray of int64, shape (n,)
    names : ndarray of object (str), shape (n,)
        Task names; rows of a job need not be contiguous.

    Returns
    -------
    task_index : ndarray of int64, shape (n,)
        Undefined (0) on rejected rows.
    parents : ndarray of object, shape (n,)
        Comma-separated parent indices or ``None``.
    reason : ndarray of object, shape (n,)
        ``None`` for rows of valid jobs, else the job's ``R_*`` rejection reason.
    """
    n = len(job_id)
    task_index = np.zeros(n, np.int64)
    parents = np.full(n, None, dtype=object)
    reason = np.full(n, None, dtype=object)
    if n == 0:
        return task_index, parents, reason
    order = np.argsort(job_id, kind="stable")
    sorted_jobs = job_id[order]
    bounds = np.flatnonzero(np.diff(sorted_jobs)) + 1
    for rows in np.split(order, bounds):
        try:
            idx, par = job_dag(names[rows].tolist())
        except DagError as exc:
            reason[rows] = exc.args[0]
            continue
        task_index[rows] = idx
        parents[rows] = par
    return task_index, parents, reason
