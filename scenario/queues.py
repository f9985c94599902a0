"""A scenario's queue tree: the tree on the drawn pool, how the tasks reach its leaves, and the
per-queue rows of every run (docs/queues.md).

The config gives the tree (``queues``: the queue objects of ``fairsim solve hdrf``'s instance,
validated by :func:`fairsim.schedulers.exact.instance.parse_queues`, the one definition of a queue
tree and its errors) and the leaf rule (``leaves``, :class:`fairsim.scenario.config.LeafRule`).
:func:`queue_tree` reads the tree again on the drawn pool (guarantees and limits in the pool's
units, checked against it); :func:`check_leaves` refuses, before anything is simulated, a task
whose priority is in no queue's band and a user the rule names who submits nothing;
:class:`QueueTaskSource` gives every task its queue (:attr:`TaskBatch.queue
<fairsim.simulator.workload.TaskBatch>`), which hierarchical schedulers read
(:meth:`fairsim.simulator.cluster.ClusterView.task_queue`); :func:`queue_table` writes a run's
``queues.parquet``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairsim.errors import ConfigError
from fairsim.scenario.config import LeafRule, RunConfig
from fairsim.schedulers.exact.instance import ROOT, InstanceError, QueueTree, parse_queues
from fairsim.simulator.workload import TaskBatch, TaskSource, WrappedTaskSource

log = logging.getLogger(__name__)


def queue_tree(cfg: RunConfig, resources: tuple[str, ...], pool: np.ndarray) -> QueueTree | None:
    """The config's queue tree on the simulated pool (None without ``queues``).

    Parameters
    ----------
    cfg : RunConfig
    resources : tuple of str
        The workload's resources (the order of every amount of the tree).
    pool : ndarray, shape (n_resources,)
        The pool's total capacity: the unit of ``guarantee_share`` / ``limit_share`` and the
        bound of every guarantee.

    Returns
    -------
    QueueTree or None
        Amounts in the pool's units; ``user_queue`` is empty (the leaves come from the tasks).

    Raises
    ------
    ConfigError
        ``config: queues[i]...``: what :func:`~fairsim.schedulers.exact.instance.parse_queues` says
        of the tree on this pool (a guarantee above the pool or its ancestor's, guarantees
        summing above it, a vector of the wrong length for these resources).
    """
    if cfg.queues is None:
        return None
    try:
        tree = parse_queues(cfg.queues, [], list(resources), np.asarray(pool, dtype=np.float64))
    except InstanceError as exc:
        raise ConfigError(f"config: {exc}") from None
    assert tree is not None
    for line in zero_limit_warnings(cfg.queues, tree):
        log.warning(line)
    return tree


def zero_limit_warnings(queues: list[dict[str, Any]], tree: QueueTree) -> list[str]:
    """One warning per queue whose limits leave it nothing of every resource: a limit of 0 is
    allowed (on a resource none of its users demands it binds nothing, docs/hdrf.md), but with
    every resource at 0 no task that demands anything can ever run in that queue or below it.

    Parameters
    ----------
    queues : list of dict
        ``queues`` of the config (the field named in the warning).
    tree : QueueTree
        The same tree parsed (limits in the pool's units, ``inf`` where none).

    Returns
    -------
    list of str
        ``queues[i].limit_share: [0, 0] leaves queue 'A' nothing of every resource: the tasks of
        its users (and of the queues below it) can never run``; empty when no queue is so.
    """
    out = []
    for i, qid in enumerate(tree.ids):
        if len(tree.limit[i]) and not (tree.limit[i] > 0).any():
            key = "limit_share" if "limit_share" in queues[i] else "limit"
            out.append(
                f"queues[{i}].{key}: {queues[i].get(key)!r} leaves queue {qid!r} nothing of every "
                "resource: the tasks of its users (and of the queues below it) can never run"
            )
    return out


def queue_names(tree: QueueTree | None) -> list[str]:
    """The queues' ids by code, the root's name
    (:data:`~fairsim.schedulers.exact.instance.ROOT`) last: ``names[code]`` for a code in
    ``-1 .. n_queues - 1`` (Python's ``names[-1]`` is the root)."""
    return [*(tree.ids if tree is not None else ()), ROOT]


class _Assign:
    """Each task's queue code under the leaf rule (-1: the root; -2: no queue's band holds the
    task's priority). ``aliases`` (:attr:`fairsim.scenario.workload.Workload.aliases`): with
    ``by: user`` an alias goes to the queue of the user it stands for."""

    def __init__(
        self, rule: LeafRule, tree: QueueTree, aliases: dict[str, str] | None = None
    ) -> None:
        index = {qid: k for k, qid in enumerate(tree.ids)}
        self.by = rule.by
        self.aliases = aliases or {}
        if rule.by == "tier":
            # the bands by their lowest priority (they do not overlap: check_tree), as
            # intervals: a band may be wide
            bands = sorted((lo, hi, index[q]) for q, (lo, hi) in rule.bands().items())
            self.lo = np.array([b[0] for b in bands], dtype=np.int64)
            self.hi = np.array([b[1] for b in bands], dtype=np.int64)
            self.band_queue = np.array([b[2] for b in bands], dtype=np.int32)
        else:
            self.users = {u: index[q] for u, q in (rule.users or {}).items()}
            self.default = -1 if rule.default is None else index[rule.default]

    def codes(self, user: np.ndarray, priority: np.ndarray | None) -> np.ndarray:
        if self.by == "tier":
            assert priority is not None
            p = np.asarray(priority, dtype=np.int64)
            k = np.searchsorted(self.lo, p, side="right") - 1  # the band starting at or below
            kk = np.maximum(k, 0)
            inside = (p >= 0) & (k >= 0) & (p <= self.hi[kk])
            return np.where(inside, self.band_queue[kk], -2).astype(np.int32)
        names, inverse = np.unique(np.asarray(user, dtype=object), return_inverse=True)
        owner = self.aliases
        per = np.array(
            [self.users.get(owner.get(n, n), self.default) for n in names.tolist()],
            dtype=np.int32,
        )
        return per[inverse.reshape(-1)] if len(names) else np.empty(0, np.int32)


class QueueTaskSource(WrappedTaskSource):
    """Give every task of a stream its queue (``TaskBatch.queue``) under the leaf rule.

    Parameters
    ----------
    inner : TaskSource
        With ``priority`` read (``priority_column``) for ``by: tier``.
    rule : LeafRule
    tree : QueueTree
    aliases : dict of str to str, optional
        A split user's other names, each to the user (:attr:`Workload.aliases
        <fairsim.scenario.workload.Workload>`): with ``by: user`` they go to its queue.

    Raises
    ------
    ConfigError
        While streaming, for a task no queue's band holds (:func:`check_leaves` refuses it
        before the run).
    """

    def __init__(
        self,
        inner: TaskSource,
        rule: LeafRule,
        tree: QueueTree,
        aliases: dict[str, str] | None = None,
    ) -> None:
        super().__init__(inner)
        self._assign = _Assign(rule, tree, aliases)
        self.rule = rule

    def batches(self) -> Iterator[TaskBatch]:
        for batch in self.inner.batches():
            if self.rule.by == "tier" and batch.priority is None:
                raise ConfigError(_NO_PRIORITY)
            codes = self._assign.codes(batch.user, batch.priority)
            bad = np.flatnonzero(codes == -2)
            if bad.size:
                i = int(bad[0])
                raise ConfigError(
                    f"leaves.tiers: task {int(batch.task_index[i])} of job "
                    f"{int(batch.job_id[i])} has priority {_prio(batch.priority, i)}, in no "
                    "queue's band"
                )
            yield replace(batch, queue=codes)


def check_cluster_queues(rule: LeafRule, tree: QueueTree, labels: list[str]) -> None:
    """Refuse a leaf rule that puts users in a queue with children, for a scheduler whose
    queues with children hold no users: one whose class declares
    :attr:`~fairsim.simulator.scheduler.Scheduler.leaf_queues_only` (``kueue-fair``: only a
    leaf queue is a ClusterQueue, a queue with children is a cohort, and a cohort has no
    workloads of its own).

    Parameters
    ----------
    rule : LeafRule
    tree : QueueTree
    labels : list of str
        The labels of the scenario's schedulers of that kind (nothing is checked when empty);
        the error names the first.

    Raises
    ------
    ConfigError
        One line naming the scheduler, the leaf rule's field and the queue.
    """
    if not labels:
        return
    interior = {tree.ids[int(p)] for p in tree.parent if p >= 0}
    found: tuple[str, str] | None = None
    if rule.by == "tier":
        found = next(((f"leaves.tiers: {q}", q) for q in rule.bands() if q in interior), None)
    else:
        found = next(
            ((f"leaves.users: {u}", q) for u, q in (rule.users or {}).items() if q in interior),
            None,
        )
        if found is None and rule.default in interior:
            found = ("leaves.default", str(rule.default))
    if found is not None:
        field, q = found
        raise ConfigError(
            f"{labels[0]}: {field}: queue {q!r} has children (only a leaf queue is a "
            "ClusterQueue: users go to leaf queues or the root)"
        )


_NO_PRIORITY = (
    "leaves: 'by: tier' needs each task's priority (the 'priority' column of a canonical tasks "
    "table, schema version 3: a google-2011 trace); this workload has none (use 'by: user')"
)


def _prio(priority: np.ndarray | None, i: int) -> str:
    p = -1 if priority is None else int(priority[i])
    return "none" if p < 0 else str(p)


def check_leaves(cfg: RunConfig, open_source: Callable[[], TaskSource], tree: QueueTree) -> None:
    """Refuse, before anything is simulated, what the leaf rule cannot place: a task whose
    priority is in no queue's band (or a workload without priorities, for ``by: tier``), and a
    user ``leaves.users`` names who submits no task in the window.

    One pass over a fresh stream of the workload (the columns the rule reads).

    Raises
    ------
    ConfigError
        Naming ``leaves.tiers`` (the priority, its tasks and an example task) or
        ``leaves.users`` (the users).
    """
    rule = cfg.leaves
    assert rule is not None
    assign = _Assign(rule, tree)
    seen: set[str] = set()
    missing: dict[int, list[int]] = {}  # priority -> [count, job, task]
    some = False  # a task with a priority
    for batch in open_source().batches():
        if rule.by == "tier":
            if batch.priority is None:
                raise ConfigError(_NO_PRIORITY)
            some = some or bool((batch.priority >= 0).any())
            codes = assign.codes(batch.user, batch.priority)
            for i in np.flatnonzero(codes == -2).tolist():
                p = int(batch.priority[i])
                if p in missing:
                    missing[p][0] += 1
                else:
                    missing[p] = [1, int(batch.job_id[i]), int(batch.task_index[i])]
        elif rule.users:
            seen.update(pd.unique(np.asarray(batch.user, dtype=object)).tolist())
    if rule.by == "tier" and not some:
        raise ConfigError(_NO_PRIORITY)
    if missing:
        p, (count, job, task) = min(missing.items())
        what = "no priority" if p < 0 else f"priority {p}"
        others = f" (and {len(missing) - 1} other priorities)" if len(missing) > 1 else ""
        raise ConfigError(
            f"leaves.tiers: {count} task(s) have {what}, in no queue's band{others}; e.g. task "
            f"{task} of job {job} (bands: {_bands_text(rule)})"
        )
    absent = sorted(set(rule.users or {}) - seen) if rule.by == "user" else []
    if absent:
        shown = ", ".join(repr(u) for u in absent[:5]) + (" ..." if len(absent) > 5 else "")
        raise ConfigError(
            f"leaves.users: unknown user(s) {shown}: no task of theirs is submitted in the "
            f"simulated window ({len(seen)} users are)"
        )


def _bands_text(rule: LeafRule) -> str:
    return ", ".join(f"{q} {lo}-{hi}" for q, (lo, hi) in rule.bands().items())


# --------------------------------------------------------------------------- per-queue rows


#: The columns of ``queues.parquet``, in order (:func:`queue_table`).
QUEUE_COLUMNS = (
    "queue",
    "users",
    "tasks",
    "tasks_started",
    "tasks_completed",
    "jobs",
    "jobs_completed",
    "mean_jct_s",
    "p95_jct_s",
    "mean_queueing_s",
    "p95_queueing_s",
)


def task_queues(
    cfg: RunConfig,
    tree: QueueTree,
    tasks: pd.DataFrame,
    tasks_parquet: Path | None,
    aliases: dict[str, str] | None = None,
) -> np.ndarray:
    """The queue code of every row of a run's tasks (``tasks.parquet``), under the leaf rule.

    ``by: user`` reads the rows' ``user`` (an alias of ``aliases`` as the user it stands for);
    ``by: tier`` the trace's ``priority`` of each row's ``(job_id, task_index)`` in the
    converted tasks table ``tasks_parquet``.

    Returns
    -------
    ndarray of int32, shape (n_rows,)
        -1 for the root.

    Raises
    ------
    ConfigError
        For ``by: tier`` without a tasks table, or a row the table does not hold.
    """
    rule = cfg.leaves
    assert rule is not None
    assign = _Assign(rule, tree, aliases)
    if rule.by == "user":
        return assign.codes(tasks["user"].to_numpy(dtype=object), None)
    if tasks_parquet is None:
        raise ConfigError(_NO_PRIORITY)
    table = pq.read_table(tasks_parquet, columns=["job_id", "task_index", "priority"])
    prio = table.to_pandas().drop_duplicates(["job_id", "task_index"])
    keys = pd.DataFrame(
        {"job_id": tasks["job_id"].to_numpy(), "task_index": tasks["task_index"].to_numpy()}
    )
    merged = keys.merge(prio, on=["job_id", "task_index"], how="left", validate="many_to_one")
    p = merged["priority"].to_numpy(dtype=np.float64, na_value=np.nan)
    return assign.codes(tasks["user"].to_numpy(dtype=object), np.where(np.isnan(p), -1, p))


def _stat(values: np.ndarray, kind: str) -> float:
    v = values[~np.isnan(values)]
    if not len(v):
        return float("nan")
    return float(v.mean()) if kind == "mean" else float(np.percentile(np.sort(v), 95))


def queue_table(
    tasks: pd.DataFrame, jobs: pd.DataFrame, codes: np.ndarray, names: list[str]
) -> pa.Table:
    """``queues.parquet`` of one run: one row per queue that received a task.

    A task belongs to its queue (``codes``); a job to the queue of its task with the lowest
    ``task_index`` (a job's tasks share one priority, hence one tier, but for a handful of
    tasks of the Google sample, docs/traces.md).

    Parameters
    ----------
    tasks : pandas.DataFrame
        ``tasks.parquet``: ``job_id, task_index, user, submit_s, start_s, finish_s``.
    jobs : pandas.DataFrame
        ``jobs.parquet``: ``job_id, completion_time_s`` (NaN: not completed by the horizon).
    codes : ndarray of int, shape (len(tasks),)
        Each task's queue code (:func:`task_queues`).
    names : list of str
        :func:`queue_names`.

    Returns
    -------
    pyarrow.Table
        :data:`QUEUE_COLUMNS`: ``queue`` (its id,
        :data:`~fairsim.schedulers.exact.instance.ROOT` for leaves at the root),
        ``users`` (distinct users with a task in it), ``tasks``, ``tasks_started``,
        ``tasks_completed``, ``jobs``, ``jobs_completed``, ``mean_jct_s`` and ``p95_jct_s``
        (over its completed jobs), ``mean_queueing_s`` and ``p95_queueing_s`` (``start_s -
        submit_s`` over its started tasks; a task that never started is not in them, and is
        counted by ``tasks - tasks_started``). Rows in the tree's order, the root last;
        statistics of an empty set are null.
    """
    t = pd.DataFrame(
        {
            "code": np.asarray(codes, dtype=np.int64),
            "job_id": tasks["job_id"].to_numpy(),
            "task_index": tasks["task_index"].to_numpy(),
            "user": tasks["user"].to_numpy(dtype=object),
            "wait": tasks["start_s"].to_numpy(dtype=np.float64)
            - tasks["submit_s"].to_numpy(dtype=np.float64),
            "done": ~np.isnan(tasks["finish_s"].to_numpy(dtype=np.float64)),
        }
    )
    first = t.sort_values(["job_id", "task_index"], kind="stable").drop_duplicates("job_id")
    job_code = first.set_index("job_id")["code"]
    jct = jobs.set_index("job_id")["completion_time_s"].astype("float64")
    job_frame = pd.DataFrame({"code": job_code.reindex(jct.index).to_numpy(), "jct": jct})
    rows: dict[str, list[Any]] = {c: [] for c in QUEUE_COLUMNS}
    order = sorted(set(t["code"].tolist()), key=lambda c: c if c >= 0 else len(names))
    for code in order:
        mine = t[t["code"] == code]
        wait = mine["wait"].to_numpy()
        js = job_frame[job_frame["code"] == code]["jct"].to_numpy(dtype=np.float64)
        rows["queue"].append(names[code])
        rows["users"].append(int(mine["user"].nunique()))
        rows["tasks"].append(len(mine))
        rows["tasks_started"].append(int((~np.isnan(wait)).sum()))
        rows["tasks_completed"].append(int(mine["done"].sum()))
        rows["jobs"].append(len(js))
        rows["jobs_completed"].append(int((~np.isnan(js)).sum()))
        rows["mean_jct_s"].append(_stat(js, "mean"))
        rows["p95_jct_s"].append(_stat(js, "p95"))
        rows["mean_queueing_s"].append(_stat(wait, "mean"))
        rows["p95_queueing_s"].append(_stat(wait, "p95"))
    ints = ("users", "tasks", "tasks_started", "tasks_completed", "jobs", "jobs_completed")
    cols: dict[str, pa.Array] = {"queue": pa.array(rows["queue"], pa.string())}
    for c in QUEUE_COLUMNS[1:]:
        if c in ints:
            cols[c] = pa.array(rows[c], pa.int64())
        else:
            v = np.asarray(rows[c], dtype=np.float64)
            cols[c] = pa.array(v, pa.float64(), mask=np.isnan(v))
    return pa.table(cols)
