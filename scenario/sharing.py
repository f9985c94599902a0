"""Sharing incentive of any run: every user's tasks alone on a dedicated cloud.

DRFH paper (Wang, Liang, Li, *Multi-resource fair allocation in heterogeneous cloud computing
systems*, IEEE TPDS 2015), Section IV-D and Fig. 8: with ``k`` servers shared by ``n`` users,
each user's *dedicated cloud* is ``k/n`` servers drawn from the same distribution; a scheduler
gives a sharing incentive when every user completes at least as many of its tasks in the shared
cloud as alone on its dedicated one. :func:`sharing_incentive` runs each user's tasks alone on
its dedicated cloud through the scenario pipeline (:func:`~fairsim.scenario.pipeline.
prepare_scenario`, with workload and pool hooks) and writes the per-user completion ratios.
``experiment drfh-google`` calls it for Fig. 8.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm import tqdm

from fairsim.scenario.config import RESOURCES, RunConfig, component_rng
from fairsim.scenario.pipeline import Hooks, prepare_scenario
from fairsim.scenario.workload import Workload, resolve_workload
from fairsim.schedulers.registry import resolve
from fairsim.simulator.results import tables, write_json, write_table
from fairsim.simulator.workload import FrameTaskSource

__all__ = ["dedicated_cloud_sizes", "sharing_incentive"]


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


def sharing_incentive(
    cfg: RunConfig, out: Path, *, scheduler: str = "bf-drfh", progress: bool = True
) -> pd.DataFrame:
    """Each user's task completion ratio on its dedicated cloud (DRFH paper, Section IV-D, Fig. 8).

    Writes ``out/dedicated/users.parquet`` (``user, tasks_submitted, tasks_completed,
    completion_ratio, servers``) and ``out/dedicated/summary.json`` (which also counts the
    right-censored tasks of the workload and the users that have some: those users can never
    complete every task under the rule ``hold``). The config's ``trace.censored`` rule applies.

    Returns
    -------
    pandas.DataFrame
        The per-user table written.
    """
    from fairsim.traces.pools import table_i_pool

    workload = resolve_workload(cfg)
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
    tasks = pd.concat(frames, ignore_index=True)
    users = list(dict.fromkeys(tasks["user"]))  # order of first appearance
    rng = component_rng(cfg.seed + 1_000_003, "pool")  # independent of the shared pool's draw
    assert cfg.cluster.servers is not None
    sizes = dedicated_cloud_sizes(len(users), cfg.cluster.servers, rng)
    rows = []
    t0 = time.perf_counter()
    grouped = dict(tuple(tasks.groupby("user", sort=False)))
    # one scenario per user through the scenario pipeline: its tasks alone (the window and
    # horizon of the shared run) on its own pool; a coarse utilisation grid (not reported)
    collect = cfg.collect.model_copy(
        update={"utilization_interval_s": cfg.collect.utilization_interval_s * 60}
    )
    alone = cfg.model_copy(update={"schedulers": [resolve(scheduler)], "collect": collect})
    for user, n_servers in tqdm(
        list(zip(users, sizes.tolist(), strict=True)),
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
            _cfg: RunConfig, _base: Path | None, _workload: Workload, n: int = int(n_servers)
        ) -> pd.DataFrame:
            return table_i_pool(n, rng)

        scenario = prepare_scenario(alone, hooks=Hooks(workload=user_tasks, pool=cloud))
        (run,) = scenario.runs()
        assert run.result is not None
        per_user = tables(run.result)["users"].to_pandas()
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
