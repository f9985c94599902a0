"""Sharing incentive of any run: every user's tasks alone on a dedicated cloud.

DRFH paper (Wang, Li, Liang, *Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers*, IEEE INFOCOM 2014), Section IV-D and Fig. 8: with ``k`` servers shared by
``n`` users, each user's *dedicated cloud* is ``k/n`` servers drawn from the same distribution; a
scheduler gives a sharing incentive when every user completes at least as many of its tasks in the
shared cloud as alone on its dedicated one. :func:`sharing_incentive` runs each user's tasks alone
on its dedicated cloud through the scenario pipeline (:func:`~fairsim.scenario.pipeline.
prepare_scenario`, with workload and pool hooks) and writes the per-user completion ratios.
``experiment drfh-google`` calls it for Fig. 8.

:func:`shared_vs_dedicated` does the same for any run of ``fairsim run`` with
``collect.sharing_incentive: true``, with the run's own scheduler, and compares each user's
tasks completed and JCT in the shared run with its dedicated cloud (``sharing_incentive.parquet``
in the scheduler's folder, ``sharing_incentive`` in its ``summary.json``). A pool not drawn from
Table I is shared out proportionally (:func:`proportional_clouds`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm import tqdm

from fairsim.errors import ConfigError
from fairsim.scenario.config import RESOURCES, RunConfig, component_rng
from fairsim.scenario.pipeline import Hooks, Scenario, SchedulerRun, prepare_scenario
from fairsim.scenario.workload import Workload, resolve_workload
from fairsim.schedulers.registry import SchedulerSpec, resolve
from fairsim.simulator.cluster import default_server_ids
from fairsim.simulator.engine import EngineResult
from fairsim.simulator.results import tables, write_json, write_table
from fairsim.simulator.workload import FrameTaskSource

__all__ = [
    "BETTER_OFF_RULE",
    "check_sharing_incentive",
    "dedicated_cloud_sizes",
    "dedicated_clouds",
    "proportional_clouds",
    "shared_vs_dedicated",
    "sharing_incentive",
]


def dedicated_cloud_sizes(n_users: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Servers per dedicated cloud: ``floor(k/n)`` plus one with probability ``frac(k/n)``.

    Parameters
    ----------
    n_users : int
        n, the number of users sharing the cloud.
    k : int
        Servers of the shared cloud.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_users,)
        At least one server each.
    """
    base = k / n_users
    sizes = math.floor(base) + (rng.random(n_users) < base - math.floor(base))
    return np.maximum(sizes.astype(np.int64), 1)


def proportional_clouds(
    pool: pd.DataFrame, n_users: int, rng: np.random.Generator, resources: tuple[str, ...]
) -> list[pd.DataFrame]:
    """Dedicated clouds as a proportional share of a given pool (the rule for pools not drawn
    from Table I: explicit classes, the trace's machines, a file).

    *Proportional share*: the pool's servers are grouped by identical capacity vector (a
    machine class, in order of first appearance); of a class of ``c`` servers each user's cloud
    gets ``floor(c/n)`` plus one with probability ``frac(c/n)`` (independently per user and
    class), so each cloud holds, in expectation, ``1/n`` of every class: the DRFH paper's "k/n
    servers drawn from the same distribution of the system's server configurations" (Section
    IV-D) with the pool's own distribution. A cloud left empty gets one server of a class drawn
    with probability proportional to the class's size.

    Parameters
    ----------
    pool : pandas.DataFrame
        The shared pool: ``server`` and one column per resource.
    n_users : int
        n, the users sharing the pool.
    rng : numpy.random.Generator
    resources : tuple of str

    Returns
    -------
    list of pandas.DataFrame
        One pool frame per user (``server``: ``s0``, ``s1``, ...; one column per resource).

    Examples
    --------
    Two identical servers shared by two users: one server each.

    >>> pool = pd.DataFrame({"server": [0, 1], "cpu": [1.0, 1.0], "mem": [1.0, 1.0]})
    >>> [len(c) for c in proportional_clouds(pool, 2, np.random.default_rng(0), ("cpu", "mem"))]
    [1, 1]
    """
    classes, counts = np.unique(
        pool[list(resources)].to_numpy(dtype=np.float64), axis=0, return_counts=True
    )
    share = counts / n_users
    clouds = []
    for _ in range(n_users):
        take = np.floor(share).astype(np.int64) + (rng.random(len(counts)) < share % 1)
        if not take.any():
            take[rng.choice(len(counts), p=counts / counts.sum())] = 1
        rows = np.repeat(classes, take, axis=0)
        frame = pd.DataFrame(rows, columns=list(resources))
        frame.insert(0, "server", list(default_server_ids(len(frame))))
        clouds.append(frame)
    return clouds


def _workload_tasks(workload: Workload) -> pd.DataFrame:
    """Every task of a workload's window as one frame (the columns of
    :class:`~fairsim.simulator.workload.FrameTaskSource`)."""
    frames = []
    for batch in workload.open().batches():
        frames.append(
            pd.DataFrame(
                {
                    "job_id": batch.job_id,
                    "task_index": batch.task_index,
                    "user": batch.user,
                    "submit_s": batch.submit_s,
                    "cpu": batch.demand[:, 0],
                    "mem": batch.demand[:, 1],
                    "run_s": batch.run_s,
                    "censored": (
                        batch.censored
                        if batch.censored is not None
                        else np.zeros(len(batch), dtype=bool)
                    ),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def coarse_interval_s(cfg: RunConfig, start_s: float, end_s: float) -> float:
    """The dedicated runs' utilisation grid: 60 times the run's interval (their utilisation is
    not reported; a coarse grid keeps hundreds of small runs cheap), at most the window."""
    coarse = cfg.collect.utilization_interval_s * 60
    window = end_s - start_s
    if math.isfinite(window) and 0 < window < coarse:
        coarse = max(window, cfg.collect.utilization_interval_s)
    return coarse


def _run_alone(
    cfg: RunConfig,
    spec: SchedulerSpec,
    workload: Workload,
    tasks: pd.DataFrame,
    users: list[str],
    clouds: list[pd.DataFrame],
    progress: bool,
) -> list[tuple[str, EngineResult, int]]:
    """Each user's tasks alone on its cloud with scheduler ``spec``: one scenario per user
    through the scenario pipeline (the window and horizon of the shared run)."""
    end = cfg.collect.horizon_s or workload.end_s
    collect = cfg.collect.model_copy(
        update={"utilization_interval_s": coarse_interval_s(cfg, workload.start_s, end)}
    )
    alone = cfg.model_copy(update={"schedulers": [spec], "collect": collect})
    grouped = dict(tuple(tasks.groupby("user", sort=False)))
    out = []
    for user, pool in tqdm(
        list(zip(users, clouds, strict=True)),
        desc="dedicated clouds",
        unit="user",
        disable=not progress,
        leave=False,
    ):
        frame = grouped[user]

        def user_tasks(
            _cfg: RunConfig, _base: Path | None, _progress: bool, frame: pd.DataFrame = frame
        ) -> Workload:
            return Workload(
                lambda: FrameTaskSource(
                    frame, resources=RESOURCES, start_s=workload.start_s, end_s=workload.end_s
                ),
                workload.start_s,
                workload.end_s,
                {"tasks": len(frame)},
            )

        def cloud(
            _cfg: RunConfig, _base: Path | None, _workload: Workload, pool: pd.DataFrame = pool
        ) -> pd.DataFrame:
            return pool

        scenario = prepare_scenario(alone, hooks=Hooks(workload=user_tasks, pool=cloud))
        (run,) = scenario.runs()
        assert run.result is not None
        out.append((user, run.result, len(pool)))
    return out


def sharing_incentive(
    cfg: RunConfig, out: Path, *, scheduler: str = "bf-drfh", progress: bool = True
) -> pd.DataFrame:
    """Each user's task completion ratio on its dedicated cloud (DRFH paper, Section IV-D, Fig. 8).

    Every user's cloud is ``k/n`` servers drawn i.i.d. from Table I
    (:func:`dedicated_cloud_sizes`), ``k`` the config's ``cluster.servers``. Writes
    ``out/dedicated/users.parquet`` (``user, tasks_submitted, tasks_completed,
    completion_ratio, servers``) and ``out/dedicated/summary.json`` (which also counts the
    right-censored tasks of the workload and the users that have some: those users can never
    complete every task under the rule ``hold``). The config's ``trace.censored`` rule applies.
    :func:`shared_vs_dedicated` compares any run with its dedicated clouds.

    Returns
    -------
    pandas.DataFrame
        The per-user table written.
    """
    from fairsim.traces.pools import table_i_pool

    workload = resolve_workload(cfg)
    tasks = _workload_tasks(workload)
    users = list(dict.fromkeys(tasks["user"]))  # order of first appearance
    rng = component_rng(cfg.seed + 1_000_003, "pool")  # independent of the shared pool's draw
    assert cfg.cluster.servers is not None
    sizes = dedicated_cloud_sizes(len(users), cfg.cluster.servers, rng)
    t0 = time.perf_counter()
    clouds = [table_i_pool(int(n), rng) for n in sizes.tolist()]
    rows = []
    for _user, result, n_servers in _run_alone(
        cfg, resolve(scheduler), workload, tasks, users, clouds, progress
    ):
        per_user = tables(result)["users"].to_pandas()
        per_user["servers"] = int(n_servers)
        rows.append(per_user)
    table = pd.concat(rows, ignore_index=True).sort_values("user", kind="stable")
    ddir = out / "dedicated"
    write_table(pa.Table.from_pandas(table, preserve_index=False), ddir / "users.parquet")
    write_json(
        {
            "scheduler": scheduler,
            "users": len(table),
            "servers_total": int(sizes.sum()),
            "servers_per_user": cfg.cluster.servers / len(users),
            "tasks": int(table["tasks_submitted"].sum()),
            "tasks_completed": int(table["tasks_completed"].sum()),
            "censored_rule": cfg.trace.censored,
            "censored_tasks": int(tasks["censored"].sum()),
            "users_with_censored_tasks": int(tasks.groupby("user")["censored"].any().sum()),
            "wall_s": round(time.perf_counter() - t0, 3),
        },
        ddir / "summary.json",
    )
    return table


#: The rule a user's outcome is judged by (DRFH paper, Sections IV-D and VI, Fig. 8).
BETTER_OFF_RULE = (
    "better off: at least as many of its tasks completed in the shared run as alone on its "
    "dedicated cloud of 1/n of the pool (DRFH paper, Sections IV-D and VI, Fig. 8)"
)


def check_sharing_incentive(scenario: Scenario) -> None:
    """Refuse ``collect.sharing_incentive`` where the dedicated runs cannot replay the shared
    run's workload.

    Raises
    ------
    ConfigError
        Naming ``collect.sharing_incentive``: with ``collect.stream_tasks`` (the dedicated runs
        read every task into memory), a job gate (DAG parents, repetitions, a bounded job queue:
        the dedicated runs replay tasks without their jobs' structure), placement constraints,
        or resources other than ``cpu, mem``.
    """
    cfg, workload = scenario.config, scenario.workload
    if not cfg.collect.sharing_incentive:
        return
    what = (
        "collect.stream_tasks (the dedicated runs read every task into memory)"
        if cfg.collect.stream_tasks
        else "a job gate (trace.dag, trace.repetitions or trace.queue_jobs: the dedicated "
        "runs replay tasks without their jobs' structure)"
        if workload.gate() is not None
        else "placement constraints (trace.constraints)"
        if scenario.constraint_index is not None
        else f"resources {', '.join(workload.resources)} (cpu, mem only)"
        if tuple(workload.resources) != RESOURCES
        else None
    )
    if what is not None:
        raise ConfigError(
            f"collect.sharing_incentive: true is not supported with {what}; set it to false"
        )


def dedicated_clouds(scenario: Scenario, users: list[str]) -> tuple[list[pd.DataFrame], str]:
    """Every user's dedicated cloud and the name of the rule that drew it.

    ``table-i``: ``k/n`` servers drawn i.i.d. from Table I (:func:`dedicated_cloud_sizes`,
    the DRFH paper's rule and :func:`sharing_incentive`'s), ``k`` the pool's size. Any other
    pool (explicit classes, machine events, the trace's machines): a proportional share of
    that pool (:func:`proportional_clouds`). The draw uses its own seed (the run's seed +
    1,000,003, component ``pool``), so every scheduler of a scenario meets the same clouds.
    """
    from fairsim.traces.pools import table_i_pool

    cfg = scenario.config
    rng = component_rng(cfg.seed + 1_000_003, "pool")
    if cfg.cluster.classes is None and cfg.cluster.source == "table-i":
        sizes = dedicated_cloud_sizes(len(users), len(scenario.pool), rng)
        return [table_i_pool(int(n), rng) for n in sizes.tolist()], "table-i k/n i.i.d."
    clouds = proportional_clouds(scenario.pool, len(users), rng, scenario.workload.resources)
    return clouds, "proportional share"


def shared_vs_dedicated(
    scenario: Scenario, run: SchedulerRun, *, progress: bool = False
) -> tuple[pa.Table, dict[str, Any]]:
    """Sharing incentive of one finished run: each user's outcome in the shared run against the
    same user's tasks alone on a dedicated cloud of ``1/n`` of the pool, with the same scheduler
    (DRFH paper, Section IV-D; evaluated as in Section VI, Fig. 8).

    A user is *better off* when at least as many of its tasks completed in the shared run as on
    its dedicated cloud (:data:`BETTER_OFF_RULE`: the paper's reading, "only 2% users see fewer
    tasks finished in the shared environment"). The JCT columns are means over the user's jobs
    that finished in both runs (the same job set). Dedicated clouds: :func:`dedicated_clouds`.
    The dedicated runs record utilisation on a grid 60 times coarser than the run's
    (:func:`coarse_interval_s`; it is not reported).

    Parameters
    ----------
    scenario : Scenario
        The prepared scenario (:func:`~fairsim.scenario.pipeline.prepare_scenario`).
    run : SchedulerRun
        One of its finished runs (``result`` set).
    progress : bool

    Returns
    -------
    table : pyarrow.Table
        One row per user of the shared run: ``user, tasks_submitted,
        tasks_completed_shared, tasks_completed_dedicated, jobs_compared, jct_shared_s,
        jct_dedicated_s, servers_dedicated, better_off``.
    summary : dict
        ``rule``, ``pool_rule``, ``users``, ``users_better_off``, ``users_worse_off``,
        ``fraction_better_off``, ``dedicated_servers``, ``utilization_interval_s`` (of the
        dedicated runs), ``wall_s``.

    Raises
    ------
    ConfigError
        Where the dedicated runs cannot replay the workload (:func:`check_sharing_incentive`).
    """
    check_sharing_incentive(scenario)
    assert run.result is not None
    t0 = time.perf_counter()
    cfg, workload = scenario.config, scenario.workload
    tasks = _workload_tasks(workload)
    users = list(dict.fromkeys(tasks["user"]))  # order of first appearance
    clouds, pool_rule = dedicated_clouds(scenario, users)
    shared = tables(run.result)
    s_users = shared["users"].to_pandas()
    s_jobs = shared["jobs"].to_pandas()
    d_users, d_jobs, servers = [], [], {}
    for user, result, n_servers in _run_alone(
        cfg, run.spec, workload, tasks, users, clouds, progress
    ):
        built = tables(result)
        d_users.append(built["users"].to_pandas())
        d_jobs.append(built["jobs"].to_pandas())
        servers[user] = n_servers
    ded = pd.concat(d_users, ignore_index=True).set_index("user")["tasks_completed"]
    jobs = s_jobs.merge(
        pd.concat(d_jobs, ignore_index=True), on=["job_id", "user"], suffixes=("_s", "_d")
    ).dropna(subset=["completion_time_s_s", "completion_time_s_d"])
    jct = jobs.groupby("user").agg(
        jobs_compared=("job_id", "size"),
        jct_shared_s=("completion_time_s_s", "mean"),
        jct_dedicated_s=("completion_time_s_d", "mean"),
    )
    frame = pd.DataFrame(
        {
            "user": s_users["user"].astype(str),
            "tasks_submitted": s_users["tasks_submitted"].astype(np.int64),
            "tasks_completed_shared": s_users["tasks_completed"].astype(np.int64),
        }
    )
    frame["tasks_completed_dedicated"] = (
        frame["user"].map(ded).fillna(0).astype(np.int64).to_numpy()
    )
    frame["jobs_compared"] = frame["user"].map(jct["jobs_compared"]).fillna(0).astype(np.int64)
    frame["jct_shared_s"] = frame["user"].map(jct["jct_shared_s"]).astype(np.float64)
    frame["jct_dedicated_s"] = frame["user"].map(jct["jct_dedicated_s"]).astype(np.float64)
    frame["servers_dedicated"] = frame["user"].map(servers).fillna(0).astype(np.int64)
    frame["better_off"] = frame["tasks_completed_shared"] >= frame["tasks_completed_dedicated"]
    frame = frame.sort_values("user", kind="stable").reset_index(drop=True)
    n, better = len(frame), int(frame["better_off"].sum())
    summary = {
        "rule": BETTER_OFF_RULE,
        "pool_rule": pool_rule,
        "users": n,
        "users_better_off": better,
        "users_worse_off": n - better,
        "fraction_better_off": better / n if n else None,
        "dedicated_servers": int(sum(len(c) for c in clouds)),
        "utilization_interval_s": coarse_interval_s(
            cfg, workload.start_s, cfg.collect.horizon_s or workload.end_s
        ),
        "wall_s": round(time.perf_counter() - t0, 3),
    }
    return pa.Table.from_pandas(frame, preserve_index=False), summary
