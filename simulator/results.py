"""Result files of one simulation (the ``fairsim run`` file contract, docs/architecture.md).

Per scheduler, into ``DIR/<scheduler>/``:

``tasks.parquet``
    ``job_id, task_index, user, submit_s, start_s, finish_s, server, ended, <resources...>``; one
    row per task that arrived by the horizon; ``server`` is the id of the server it ran on
    (string, as ``servers.parquet``'s ``server``: ``tasks.merge(servers, on="server")``);
    ``start_s``/``server`` null when the task never started, ``finish_s`` null when it did not
    complete; the resource columns are the task's demand in the trace's units (as the pool's
    capacities: Google 2011 and Alibaba normalise each resource to the trace's largest
    machine). ``ended`` says how the task ended
    (:data:`ENDED`): ``finished``; ``censored`` (started, and right-censored in the trace: its run
    time is unknown, so it never completes); ``running`` or ``queued`` at the horizon;
    ``unplaceable`` (fits no server of the pool, or a DAG ancestor never can). With a job gate
    (:mod:`fairsim.simulator.jobs`), a last column ``rep`` gives the task's repetition of its job (0
    for
    the first run).
``jobs.parquet``
    ``job_id, user, n_tasks, submit_s, finish_s, completion_time_s``; ``finish_s`` and
    ``completion_time_s`` (job completion time, JCT) are null unless every task of the job
    finished (``ended == "finished"``).
``users.parquet``
    ``user, tasks_submitted, tasks_completed, completion_ratio``; a task is completed when its
    ``ended`` is ``finished`` (never for a right-censored task).
``utilization.parquet``
    ``time_s, <resources...>``: used fraction of the pool's total capacity on a regular grid (for
    plots; ``summary.json``'s ``mean_utilization`` is the exact time average). Only for the
    replay of recorded placements (scheduler ``recorded``, :mod:`fairsim.simulator.replay`),
    which may exceed 1, also ``overcommitted_<resource>`` (int: servers whose used amount exceeds
    their capacity) and ``overcommit_<resource>`` (sum over servers of the amount above capacity,
    as a fraction of the pool's total capacity).
``evictions.parquet`` (only for a scheduler that preempts, :mod:`fairsim.simulator.preemption`)
    ``time_s, evictions, work_lost_<resource>...`` on the utilisation grid, each counted from the
    start up to the time (:func:`evictions_table`); ``tasks.parquet`` then has a last column
    ``evictions`` (int32: the task's runs that were evicted; ``start_s`` is its last run's start)
    and ``summary.json`` the keys ``preemption`` and ``preemption_loops``
    (:func:`preemption_summary`).
``user_shares.parquet`` (only when ``collect.user_shares`` is on)
    ``time_s, user, <resources...>, dominant``: each user's share of the pool per resource, and its
    global dominant share (DRFH paper, eq. 3).
``user_jct.parquet``
    ``user, jobs, jobs_completed, mean_jct_s, median_jct_s``: per-user JCT over the jobs each
    user completed (:func:`user_jct`).
``summary.json``
    Headline numbers, the config hash, the fairsim version and git commit, the seed, ``wall_s``
    and ``tasks_per_s``; the delay metrics ``queueing_delay_s``, ``jct_s``, ``slowdown`` and
    ``user_jct`` (:func:`delay_metrics`); with a job gate also ``jobs_gate`` (tasks held at the
    end and dropped, by reason).

The directory is written under a temporary name and renamed into place when complete, so a crash
never leaves a half-written result. The Parquet files depend only on the simulation (no timestamps):
the same config and seed give byte-identical files.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairsim.atomic import atomic_path, dir_mode, json_text, write_text
from fairsim.simulator.cluster import default_server_ids
from fairsim.simulator.engine import EngineResult
from fairsim.simulator.stream import (
    ENDED,
    FINISHED,
    PARQUET_KW,
    StreamedTasks,
    release_unused,
)
from fairsim.simulator.zero_stats import sorted_stats_with_zeros

__all__ = [
    "ENDED",
    "PERCENTILES",
    "SLOWDOWN_DEFINITION",
    "delay_metrics",
    "ended_codes",
    "job_run_times",
    "queueing_delays",
    "run_metrics",
    "slowdown",
    "summarize",
    "tables",
    "task_table",
    "user_jct",
    "write_json",
    "write_run",
    "write_table",
]

#: Percentiles the summary gives of a distribution (numpy's default linear interpolation).
PERCENTILES = (50, 95, 99)

#: The reading of slowdown in ``summary.json`` and the compare report.
SLOWDOWN_DEFINITION = (
    "JCT / the job's run time alone on an idle cluster (its longest task's run time: the tasks "
    "of a job run in parallel), over completed jobs with a run time > 0"
)


def write_table(table: pa.Table, path: Path) -> None:
    """Write a Parquet file atomically (temporary file in the same directory, then rename)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **PARQUET_KW)


def write_json(obj: Any, path: Path) -> None:
    """Write strict JSON atomically, keys sorted, two-space indent; a non-finite float (an
    undefined ratio such as the completion ratio of a run without tasks) is written as ``null``
    (:func:`fairsim.atomic.json_text`)."""
    write_text(path, json_text(obj) + "\n")


def _nullable(values: np.ndarray, null: np.ndarray, typ: pa.DataType) -> pa.Array:
    return pa.array(values, type=typ, mask=null)


def _server_ids(result: EngineResult, server: np.ndarray) -> pa.Array:
    """The ids (string) of the servers at row positions ``server`` (null where -1)."""
    n = int(server.max()) + 1 if len(server) else 0
    ids = result.server_ids if result.server_ids is not None else default_server_ids(n)
    positions = pa.array(server, pa.int32(), mask=server < 0)
    return pa.array(ids, pa.string()).take(positions)


def ended_codes(tasks: dict[str, np.ndarray]) -> np.ndarray:
    """How each task ended, as indices into :data:`ENDED`.

    Parameters
    ----------
    tasks : dict of str to ndarray
        :attr:`fairsim.simulator.engine.EngineResult.tasks` (``finish_s``, ``server`` and, when
        present,
        ``unplaceable`` and ``censored``).

    Returns
    -------
    ndarray of int8, shape (n_tasks,)
    """
    finish, server = tasks["finish_s"], tasks["server"]
    n = finish.shape[0]
    codes = np.full(n, ENDED.index("queued"), dtype=np.int8)
    started = server >= 0
    codes[started] = ENDED.index("running")
    censored = tasks.get("censored")
    if censored is not None:
        codes[started & censored] = ENDED.index("censored")
    codes[~np.isnan(finish)] = ENDED.index("finished")
    unplaceable = tasks.get("unplaceable")
    if unplaceable is not None:
        codes[unplaceable] = ENDED.index("unplaceable")
    return codes


def tables(result: EngineResult) -> dict[str, pa.Table]:
    """Build the Arrow tables of a run (without writing them).

    Returns
    -------
    dict of str to pyarrow.Table
        Keys ``tasks``, ``jobs``, ``users``, ``utilization``, ``user_jct`` (:func:`user_jct`)
        and, when recorded, ``user_shares``; for a scheduler that preempts also ``evictions``
        (:func:`evictions_table`);
        no ``tasks`` when the run streamed them to their file (:attr:`EngineResult.streamed`:
        ``jobs`` and ``users`` are then built from its totals, with the same values).
    """
    out: dict[str, pa.Table] = {}
    if result.streamed is None:
        out["tasks"] = task_table(result)
    return {**out, **_derived_tables(result)}


def _derived_tables(result: EngineResult) -> dict[str, pa.Table]:
    """:func:`tables` but ``tasks``."""
    out: dict[str, pa.Table] = {}
    if result.streamed is not None:
        jobs, per_user = _streamed_jobs_users(result.streamed)
    else:
        jobs, per_user = _jobs_users(result)
    jobs["completion_time_s"] = jobs["finish_s"] - jobs["submit_s"]  # NaN: not all finished
    per_user["completion_ratio"] = per_user["tasks_completed"] / per_user["tasks_submitted"]
    users = np.array(result.users, dtype=object)
    util = result.utilization
    ucols: dict[str, Any] = {"time_s": pa.array(util[:, 0], pa.float64())}
    for r, name in enumerate(result.resources):
        ucols[name] = pa.array(util[:, 1 + r], pa.float64())
    if result.stranded is not None:  # only with collect.stranded: the files stay as they were
        for r, name in enumerate(result.resources):
            ucols[f"stranded_{name}"] = pa.array(result.stranded[:, r], pa.float64())
    if result.overcommit is not None:  # only the replay of recorded placements over-commits
        n_res = len(result.resources)
        for r, name in enumerate(result.resources):
            ucols[f"overcommitted_{name}"] = pa.array(
                result.overcommit[:, r].astype(np.int64), pa.int64()
            )
        for r, name in enumerate(result.resources):
            ucols[f"overcommit_{name}"] = pa.array(result.overcommit[:, n_res + r], pa.float64())
    out.update(
        {
            "jobs": pa.Table.from_pandas(jobs, preserve_index=False),
            "users": pa.Table.from_pandas(per_user, preserve_index=False),
            "utilization": pa.table(ucols),
            "user_jct": pa.Table.from_pandas(user_jct(jobs), preserve_index=False),
        }
    )
    if result.user_shares is not None:
        sh = result.user_shares  # (n_samples, n_users, n_resources)
        n_s, n_u, _ = sh.shape
        scol: dict[str, Any] = {
            "time_s": np.repeat(util[:n_s, 0], n_u),
            "user": np.tile(users, n_s) if n_u else np.array([], dtype=object),
        }
        for r, name in enumerate(result.resources):
            scol[name] = sh[:, :, r].reshape(-1)
        scol["dominant"] = sh.max(axis=2).reshape(-1) if n_u else np.array([])
        out["user_shares"] = pa.Table.from_pandas(pd.DataFrame(scol), preserve_index=False)
    if result.preemption is not None:
        out["evictions"] = evictions_table(result)
    return out


def evictions_table(result: EngineResult) -> pa.Table:
    """``evictions.parquet`` of a run of a scheduler that preempts: on the utilisation grid,
    ``time_s``, ``evictions`` (int64: evictions at or before the time, since the start) and
    ``work_lost_<resource>`` (resource-seconds of the runs evicted at or before the time:
    each run's length times its demand; :mod:`fairsim.simulator.preemption`).

    Raises
    ------
    ValueError
        For a run without preemption (:attr:`EngineResult.preemption` is None).
    """
    p = result.preemption
    if p is None:
        raise ValueError(
            f"scheduler {result.scheduler!r}: no evictions recorded (it does not preempt)"
        )
    cols: dict[str, Any] = {
        "time_s": pa.array(p.samples[:, 0], pa.float64()),
        "evictions": pa.array(p.samples[:, 1].astype(np.int64), pa.int64()),
    }
    for r, name in enumerate(result.resources):
        cols[f"work_lost_{name}"] = pa.array(p.samples[:, 2 + r], pa.float64())
    return pa.table(cols)


def preemption_summary(result: EngineResult) -> dict[str, Any]:
    """``preemption`` and ``preemption_loops`` of ``summary.json``, only for a scheduler that
    preempts (:attr:`EngineResult.preemption`; empty for any other).

    ``preemption``: ``evictions`` (runs taken back), ``tasks_evicted`` (tasks evicted at least
    once), ``run_s_lost`` (seconds of the evicted runs), ``work_lost`` (per resource, the
    resource-seconds of the evicted runs) and ``work_lost_fraction`` (per resource, that over
    the resource-seconds used in the window, evicted runs included: the share of the work done
    that was thrown away; null when nothing was used). ``preemption_loops``
    (:class:`fairsim.simulator.preemption.LoopRule`): ``count`` (tasks found in a preemption
    loop), ``first_s`` (when the first was found; null without one), ``examples`` (the first
    tasks found, ``[job_id, task_index]`` each), ``evictions`` and ``window_s`` (the rule).
    """
    p = result.preemption
    if p is None:
        return {}
    fractions = {
        name: float(lost / used) if used > 0 else None
        for name, lost, used in zip(result.resources, p.work_lost, p.work_used, strict=True)
    }
    return {
        "preemption": {
            "evictions": p.evictions,
            "tasks_evicted": p.tasks_evicted,
            "run_s_lost": p.run_s_lost,
            "work_lost": {n: float(x) for n, x in zip(result.resources, p.work_lost, strict=True)},
            "work_lost_fraction": fractions,
        },
        "preemption_loops": {
            "count": p.loops,
            "first_s": p.first_loop_s,
            "examples": [list(e) for e in p.loop_examples],
            "evictions": p.rule.evictions,
            "window_s": p.rule.window_s,
        },
    }


def _streamed_jobs_users(s: StreamedTasks) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``jobs`` and ``users`` frames from a streamed run's totals (the columns and dtypes of
    :func:`_jobs_users`)."""
    jobs = s.jobs.drop(columns="n_done")
    jobs.loc[s.jobs["n_done"] < s.jobs["n_tasks"], "finish_s"] = np.nan
    return jobs, s.users.copy()


def _user_names(result: EngineResult) -> np.ndarray:
    """Each task's user name (an object array, shape (n_tasks,)), from its user code."""
    users = np.array(result.users, dtype=object)
    return users[result.tasks["user"]] if len(users) else np.array([], dtype=object)


def task_table(result: EngineResult) -> pa.Table:
    """The ``tasks`` table (``tasks.parquet``) of a run that kept its tasks in memory.

    Parameters
    ----------
    result : EngineResult
        With :attr:`EngineResult.tasks` (not streamed).

    Returns
    -------
    pyarrow.Table
        One row per task, in task id order: ``job_id``, ``task_index``, ``user``, ``submit_s``,
        ``start_s`` and ``finish_s`` (null: never started, not finished), ``server`` (null:
        never placed), ``ended``, one demand column per resource, and ``rep`` and
        ``evictions`` when the run has them.
    """
    t = result.tasks
    user_names = _user_names(result)
    start, finish = t["start_s"], t["finish_s"]
    cols: dict[str, pa.Array] = {
        "job_id": pa.array(t["job_id"], pa.int64()),
        "task_index": pa.array(t["task_index"], pa.int32()),
        "user": pa.array(user_names, pa.string()),
        "submit_s": pa.array(t["submit_s"], pa.float64()),
        "start_s": _nullable(start, np.isnan(start), pa.float64()),
        "finish_s": _nullable(finish, np.isnan(finish), pa.float64()),
        "server": _server_ids(result, t["server"]),
        "ended": pa.array(np.array(ENDED, dtype=object)[ended_codes(t)], pa.string()),
    }
    for r, name in enumerate(result.resources):
        cols[name] = pa.array(t["demand"][:, r], pa.float64())
    if "rep" in t:
        cols["rep"] = pa.array(t["rep"], pa.int32())
    if "evictions" in t:
        cols["evictions"] = pa.array(t["evictions"], pa.int32())
    return pa.table(cols)


def _jobs_users(result: EngineResult) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``jobs`` and ``users`` frames of a run's per-task columns (without the columns
    :func:`tables` derives: completion time, completion ratio)."""
    t = result.tasks
    finish = t["finish_s"]
    frame = pd.DataFrame(
        {
            "job_id": t["job_id"],
            "user": _user_names(result),
            "submit_s": t["submit_s"],
            "finish_s": finish,
        }
    )
    done = ~np.isnan(finish)
    frame["done"] = done
    g = frame.groupby("job_id", sort=True)
    jobs = pd.DataFrame(
        {
            "user": g["user"].first(),
            "n_tasks": g.size().astype("int64"),
            "submit_s": g["submit_s"].min(),
            "finish_s": g["finish_s"].max(),
            "all_done": g["done"].all(),
        }
    ).reset_index()
    jobs.loc[~jobs["all_done"], "finish_s"] = np.nan
    jobs = jobs.drop(columns="all_done")

    ug = frame.groupby("user", sort=True)
    per_user = pd.DataFrame(
        {"tasks_submitted": ug.size().astype("int64"), "tasks_completed": ug["done"].sum()}
    ).reset_index()
    per_user["tasks_completed"] = per_user["tasks_completed"].astype("int64")
    return jobs, per_user


def _stats(values: np.ndarray) -> dict[str, float | None]:
    """Mean and :data:`PERCENTILES` of ``values`` (sorted first, so the mean does not depend on
    the order the values came in); None for each when empty."""
    return _sorted_stats(np.sort(np.asarray(values, dtype=np.float64)))


def _sorted_stats(v: np.ndarray, zeros: int = 0) -> dict[str, float | None]:
    """:func:`_stats` of ``v``, sorted ascending (float64), which it may reorder: the mean
    first, then the percentiles partition ``v`` in place (no copy of a run's per-task
    delays). ``zeros``: that many values 0.0 left out of ``v`` (the sample is ``v`` with them;
    the same floats, :mod:`fairsim.simulator.zero_stats`)."""
    if not len(v) + zeros:
        return {"mean": None, **{f"p{q}": None for q in PERCENTILES}}
    if zeros:
        mean, qs = sorted_stats_with_zeros(v, zeros, PERCENTILES)
        return {"mean": mean, **{f"p{q}": x for q, x in zip(PERCENTILES, qs, strict=True)}}
    mean = float(v.mean())
    qs = np.percentile(v, PERCENTILES, overwrite_input=True)
    return {
        "mean": mean,
        **{f"p{q}": float(x) for q, x in zip(PERCENTILES, qs, strict=True)},
    }


def queueing_delays(tasks: pd.DataFrame) -> np.ndarray:
    """Queueing delay of every task that started: ``start_s - submit_s``, seconds.

    Parameters
    ----------
    tasks : pandas.DataFrame
        ``tasks.parquet``'s ``submit_s`` and ``start_s`` (NaN: never started).

    Returns
    -------
    ndarray of float64, shape (n_started,)
        Sorted ascending. A DAG child's delay includes its wait for its parents (its
        ``submit_s`` is the trace's); a repeated task's is measured from the trace's submit time
        of its job's task.
    """
    start = tasks["start_s"].to_numpy(dtype=np.float64)
    ok = ~np.isnan(start)
    return np.sort(start[ok] - tasks["submit_s"].to_numpy(dtype=np.float64)[ok])


def job_run_times(tasks: pd.DataFrame) -> pd.Series:
    """Each job's longest finished task run time (``finish_s - start_s``), seconds.

    Parameters
    ----------
    tasks : pandas.DataFrame
        ``tasks.parquet``'s ``job_id``, ``start_s`` and ``finish_s``.

    Returns
    -------
    pandas.Series
        Indexed by ``job_id`` (sorted), for jobs with at least one finished task.
    """
    run = tasks["finish_s"].to_numpy(dtype=np.float64) - tasks["start_s"].to_numpy(dtype=np.float64)
    ok = ~np.isnan(run)
    frame = pd.DataFrame({"job_id": tasks["job_id"].to_numpy()[ok], "run_s": run[ok]})
    return frame.groupby("job_id", sort=True)["run_s"].max()


def slowdown(jobs: pd.DataFrame, run_s: pd.Series) -> pd.Series:
    """Slowdown of every completed job: its JCT divided by its run time alone on an idle cluster.

    The standard reading of slowdown (response time over service time: Harchol-Balter,
    *Performance Modeling and Design of Computer Systems*, 2013, Sec. 28.4; per job, JCT over the
    job's run time in an empty cluster, as in Grandl et al., *Multi-resource packing for cluster
    schedulers* (Tetris), SIGCOMM 2014). A job's tasks are independent and run in parallel, so
    its run time alone is its critical path, the longest task's run time (for a job with DAG
    parents or repetitions the longest task is a lower bound of the critical path, and the
    slowdown an upper bound). A job is at least 1 when its tasks never wait.

    Parameters
    ----------
    jobs : pandas.DataFrame
        ``jobs.parquet`` (``job_id``, ``completion_time_s``; NaN: not completed).
    run_s : pandas.Series
        :func:`job_run_times`.

    Returns
    -------
    pandas.Series
        Indexed by ``job_id``, for completed jobs whose run time is > 0 (a job of zero-length
        tasks has no defined slowdown).
    """
    # the two columns it reads, not a copy of the whole frame (776,047 jobs, a string column:
    # about 90 MB at the peak of the 25-million-task run's result step)
    ct = jobs["completion_time_s"]
    keep = ct.notna().to_numpy()
    done = pd.Series(
        ct.to_numpy()[keep],
        index=pd.Index(jobs["job_id"].to_numpy()[keep], name="job_id"),
        name="completion_time_s",
    )
    run = run_s.reindex(done.index)
    ok = run.to_numpy() > 0
    return (done[ok] / run[ok]).sort_index()


def user_jct(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per-user JCT over the jobs each user completed (``user_jct.parquet``).

    Parameters
    ----------
    jobs : pandas.DataFrame
        ``jobs.parquet``.

    Returns
    -------
    pandas.DataFrame
        ``user, jobs, jobs_completed, mean_jct_s, median_jct_s``, one row per user with a job
        (sorted by user); the JCTs are NaN for a user who completed none.
    """
    g = jobs.groupby("user", sort=True)["completion_time_s"]
    out = pd.DataFrame(
        {
            "jobs": g.size().astype("int64"),
            "jobs_completed": g.count().astype("int64"),
            "mean_jct_s": g.mean().astype("float64"),
            "median_jct_s": g.median().astype("float64"),
        }
    )
    out.index.name = "user"
    return out.reset_index()


def job_times(tasks: dict[str, np.ndarray], entry: dict[int, float]) -> pd.DataFrame:
    """Per job: queue entry, first start, last finish, JCT and its wait and execution parts.

    The JCT of a complex job runs from its entry into the bounded waiting queue to its last
    task's finish (UDRF paper, Tahir et al., Section V: the CDFs of Fig. 10a); the wait is the
    part before its first task starts, the execution the rest.

    Parameters
    ----------
    tasks : dict of str to ndarray
        A run's per-task columns (:attr:`fairsim.simulator.engine.EngineResult.tasks`).
    entry : dict of int to float
        Time each job entered the waiting queue (:func:`fairsim.simulator.jobs.admission_times`);
        a job without one entered at its first task's submit time.

    Returns
    -------
    pandas.DataFrame
        ``job_id, submit_s, entry_s, first_start_s, finish_s, jct_s, wait_s, exec_s``;
        ``finish_s`` and the times after it are NaN unless every task of the job finished.
    """
    t = pd.DataFrame({k: tasks[k] for k in ("job_id", "submit_s", "start_s", "finish_s")})
    g = t.groupby("job_id", sort=True)
    out = pd.DataFrame(
        {
            "submit_s": g["submit_s"].min(),
            "first_start_s": g["start_s"].min(),
            "finish_s": g["finish_s"].max().where(g["finish_s"].count() == g.size()),
        }
    )
    out.insert(1, "entry_s", out.index.map(entry).astype(np.float64))
    out["entry_s"] = out["entry_s"].fillna(out["submit_s"])
    out["jct_s"] = out["finish_s"] - out["entry_s"]
    out["wait_s"] = out["first_start_s"] - out["entry_s"]
    out["exec_s"] = out["finish_s"] - out["first_start_s"]
    return out.reset_index()


def delay_metrics(
    delays: np.ndarray, jobs: pd.DataFrame, run_s: pd.Series
) -> dict[str, dict[str, Any]]:
    """The delay metrics of ``summary.json``: queueing delay, JCT, slowdown, per-user JCT.

    Parameters
    ----------
    delays : ndarray
        :func:`queueing_delays` (seconds, one per started task).
    jobs : pandas.DataFrame
        ``jobs.parquet``.
    run_s : pandas.Series
        :func:`job_run_times`.

    Returns
    -------
    dict
        ``queueing_delay_s`` (``tasks``: started tasks; ``mean``, ``p50``, ``p95``, ``p99``),
        ``jct_s`` (over completed jobs: ``jobs``; ``excluded_jobs``, the jobs not completed by
        the horizon (right-censored, running or queued tasks), which are not in the numbers;
        the statistics), ``slowdown`` (:func:`slowdown`; ``jobs``, the statistics and
        ``definition``) and ``user_jct`` (per-user mean JCT over the users with a completed
        job: ``users``, ``min_mean_s``, ``max_mean_s``, ``max_over_min`` and ``cv``, the
        coefficient of variation, population standard deviation over mean). Percentiles are
        numpy's linear interpolation; a statistic of an empty set is None.
    """
    return _delay_metrics(np.sort(np.asarray(delays, dtype=np.float64)), jobs, run_s)


def _delay_metrics(
    delays: np.ndarray, jobs: pd.DataFrame, run_s: pd.Series, zeros: int = 0
) -> dict[str, dict[str, Any]]:
    """:func:`delay_metrics` of ``delays`` sorted ascending (float64), an array of its own
    that it may reorder, and ``zeros`` more delays of 0 s left out of it."""
    jct = jobs["completion_time_s"].to_numpy(dtype=np.float64)
    jct = jct[~np.isnan(jct)]
    sd = slowdown(jobs, run_s).to_numpy()
    per_user = user_jct(jobs)["mean_jct_s"].dropna().to_numpy()
    per_user = np.sort(per_user)
    lo = float(per_user[0]) if len(per_user) else None
    hi = float(per_user[-1]) if len(per_user) else None
    mean_u = float(per_user.mean()) if len(per_user) else None
    return {
        "queueing_delay_s": {"tasks": len(delays) + zeros, **_sorted_stats(delays, zeros)},
        "jct_s": {"jobs": len(jct), "excluded_jobs": len(jobs) - len(jct), **_stats(jct)},
        "slowdown": {"jobs": len(sd), **_stats(sd), "definition": SLOWDOWN_DEFINITION},
        "user_jct": {
            "users": len(per_user),
            "min_mean_s": lo,
            "max_mean_s": hi,
            "max_over_min": hi / lo if hi is not None and lo else None,
            "cv": float(per_user.std()) / mean_u if mean_u else None,
        },
    }


def run_metrics(result: EngineResult, jobs: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """:func:`delay_metrics` of an engine result (its per-task arrays, or the ``tasks.parquet``
    it streamed, read a row group at a time: the values are the same either way)."""
    cols = ["job_id", "submit_s", "start_s", "finish_s"]
    if result.streamed is None:
        t = result.tasks
        frame = pd.DataFrame({c: t[c] for c in cols})
        return delay_metrics(queueing_delays(frame), jobs, job_run_times(frame))
    # one array of the nonzero delays, filled batch by batch and sorted in place, and the
    # count of zeros (tasks that started on arrival, most of them: zero_stats): 8 bytes a task
    # that waited at the peak, not a list of pieces, their concatenation and sorted copies. The
    # array is allocated for every row but only the pages written count in the memory. Without
    # pre-buffering: pyarrow's default keeps every row group's column chunks it has read for
    # the reader's life (275 MB of the 25-million-task run's 4 columns, docs/bench.md)
    # each job's longest run, in one array in the order of ``jobs`` (NaN: none finished):
    # only completed jobs' are read (slowdown), and every one of them is in ``jobs``
    index = pd.Index(jobs["job_id"].unique())
    longest = np.full(len(index), np.nan)
    delays = np.empty(result.streamed.rows, dtype=np.float64)
    k = zeros = 0
    file = pq.ParquetFile(result.streamed.path, pre_buffer=False)
    for batch in file.iter_batches(columns=cols):
        frame = batch.to_pandas()
        start = frame["start_s"].to_numpy(dtype=np.float64)
        ok = ~np.isnan(start)
        d = start[ok] - frame["submit_s"].to_numpy(dtype=np.float64)[ok]
        d = d[d != 0.0]
        n = len(d)
        zeros += int(ok.sum()) - n
        delays[k : k + n] = d
        k += n
        part = job_run_times(frame)
        pos = index.get_indexer(part.index)
        keep = pos >= 0
        np.fmax.at(longest, pos[keep], part.to_numpy()[keep])
    run_s = pd.Series(longest, index=index).dropna()
    waited = delays[:k]
    waited.sort()
    return _delay_metrics(waited, jobs, run_s, zeros)


def stranded_summary(result: EngineResult) -> dict[str, Any]:
    """``stranded`` (per resource, the mean stranded fraction over the grid points where a task
    waits; null if none) and ``stranded_samples`` (those grid points), only when recorded
    (:meth:`fairsim.simulator.engine.Engine.stranded`)."""
    st = result.stranded
    if st is None:
        return {}
    waits = ~np.isnan(st).all(axis=1) if len(st) else np.zeros(0, dtype=bool)
    means = st[waits].mean(axis=0) if waits.any() else [None] * len(result.resources)
    return {
        "stranded": {
            r: None if m is None or not np.isfinite(m) else float(m)
            for r, m in zip(result.resources, means, strict=True)
        },
        "stranded_samples": int(waits.sum()),
    }


def overcommit_summary(result: EngineResult) -> dict[str, Any]:
    """``overcommit`` (only for the replay of recorded placements, whose
    :attr:`~fairsim.simulator.engine.EngineResult.overcommit` is set): per resource the largest
    and the last grid point's number of over-committed servers (``max_servers``,
    ``end_servers``) and the largest and mean amount above capacity as a fraction of the
    pool's total (``max_amount``, ``mean_amount``, over the grid)."""
    oc = result.overcommit
    if oc is None:
        return {}
    n_res = len(result.resources)
    out: dict[str, Any] = {}
    for r, name in enumerate(result.resources):
        counts, amount = oc[:, r], oc[:, n_res + r]
        out[name] = (
            {
                "max_servers": int(counts.max()),
                "end_servers": int(counts[-1]),
                "max_amount": float(amount.max()),
                "mean_amount": float(amount.mean()),
            }
            if len(oc)
            else None
        )
    return {"overcommit": out}


def summarize(result: EngineResult, built: dict[str, pa.Table]) -> dict[str, Any]:
    """Headline numbers of a run (the body of ``summary.json``, without config hash and seed)."""
    s = result.streamed
    if s is not None:
        n, started, codes = s.rows, s.started, s.ended
        completed = int(codes[FINISHED])
    else:
        t = result.tasks
        n = int(t["submit_s"].shape[0])
        completed = int(np.count_nonzero(~np.isnan(t["finish_s"])))
        started = int(np.count_nonzero(t["server"] >= 0))
        codes = np.bincount(ended_codes(t), minlength=len(ENDED))
    util = result.utilization
    jobs = built["jobs"].to_pandas()
    jct = jobs["completion_time_s"].dropna()
    if result.mean_utilization is not None:
        mean_util = [None if not np.isfinite(x) else float(x) for x in result.mean_utilization]
    else:  # a result built by hand: the mean of the grid samples
        mean_util = [
            float(util[:, 1 + r].mean()) if len(util) else None
            for r in range(len(result.resources))
        ]
    return {
        "scheduler": result.scheduler,
        "tasks": n,
        "tasks_started": started,
        "tasks_completed": completed,
        "ended": {name: int(c) for name, c in zip(ENDED, codes, strict=True)},
        "censored_rule": result.censored_rule,
        "completion_ratio": completed / n if n else None,
        "jobs": len(jobs),
        "jobs_completed": len(jct),
        "mean_jct_s": float(jct.mean()) if len(jct) else None,
        "median_jct_s": float(jct.median()) if len(jct) else None,
        **run_metrics(result, jobs),
        "mean_utilization": dict(zip(result.resources, mean_util, strict=True)),
        **stranded_summary(result),
        **overcommit_summary(result),
        **preemption_summary(result),
        "users": len(result.users),
        "skipped": dict(sorted(result.skipped.items())),
        **({"jobs_gate": result.extra} if result.extra else {}),
        "start_s": result.start_s,
        "horizon_s": result.horizon_s,
        "events": result.n_events,
        "wall_s": round(result.wall_s, 3),
        "tasks_per_s": round(n / result.wall_s, 1) if result.wall_s > 0 else None,
        "tasks_per_s_counts": "tasks that arrived by the horizon (the 'tasks' field), per "
        "second of engine wall time; rows outside the window are in 'skipped'",
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def write_run(
    result: EngineResult,
    out_dir: Path,
    *,
    extra_summary: dict[str, Any] | None = None,
    extra_tables: dict[str, pa.Table] | None = None,
) -> dict[str, Any]:
    """Write the result files of one scheduler atomically into ``out_dir``.

    Parameters
    ----------
    result : EngineResult
    out_dir : Path
        Final directory (``DIR/<scheduler>``); replaced if it exists.
    extra_summary : dict, optional
        Merged into ``summary.json`` (config hash, seed, ...).
    extra_tables : dict of str to pyarrow.Table, optional
        More tables of the run, written as ``<name>.parquet`` beside the others (what a caller
        measured of the run, e.g. ``sharing_incentive``).

    Returns
    -------
    dict
        The summary written to ``summary.json``.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        os.chmod(tmp, dir_mode())  # a folder of the user's umask, not mkdtemp's 0o700
        if result.streamed is None:  # written and let go before the other tables are built:
            write_table(task_table(result), tmp / "tasks.parquet")  # not both at the peak
            release_unused()  # the table's buffers, before the frames of the other tables
        built = _derived_tables(result)
        release_unused()  # the group-bys' buffers, before the delays' arrays
        summary = summarize(result, built)  # a streamed run's statistics read its file, so
        if extra_summary:  # the file is moved only now
            summary.update(extra_summary)
        if result.streamed is not None:  # written while the run went on
            shutil.move(result.streamed.path, tmp / "tasks.parquet")
        for name, table in {**built, **(extra_tables or {})}.items():
            write_table(table, tmp / f"{name}.parquet")
        write_json(summary, tmp / "summary.json")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary
