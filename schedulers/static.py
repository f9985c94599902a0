"""Static progressive filling of indivisible tasks with the online heuristics.

``fairsim solve ff-drfh|bf-drfh|slots-<S> INSTANCE.json``, and ``fairsim solve NAME INSTANCE.json
--online`` for the online baselines that share their name with an exact mechanism (``drf``,
``c-drfh``, ``tsf``, ``af``, ``pf``, ``bmf``, ``lmm-mms``; without ``--online`` those names mean the
exact allocation), run exactly the code the simulator runs
(:mod:`schedulers.progressive`, committed through :class:`simulator.cluster.ClusterState`): every
user has ``max_tasks`` identical tasks (unbounded by default) queued at time 0 and none finishes, so
the schedulers fill the cluster until nothing more fits (DRFH paper, Section V-B).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from schedulers.instance import Instance
from schedulers.registry import make_scheduler
from simulator.cluster import ClusterState


def progressive_fill(mechanism: str, inst: Instance) -> np.ndarray:
    """Integer task counts of an online heuristic filling an empty cluster.

    Parameters
    ----------
    mechanism : str
        A registered online scheduler name (``ff-drfh``, ``bf-drfh``, ``slots-<S>``, or an online
        baseline of :mod:`schedulers.online`).
    inst : Instance
        The allocation instance.

    Returns
    -------
    ndarray of int64, shape (n_users, n_servers)
        Tasks of user i placed on server l.

    Raises
    ------
    simulator.errors.ConfigError
        For an unknown scheduler name.
    """
    n_u = len(inst.user_ids)
    eligible = {i: inst.eligible[i].copy() for i in range(n_u) if not bool(inst.eligible[i].all())}
    sched = make_scheduler(
        mechanism,
        weights={i: float(inst.weight[i]) for i in range(n_u)},
        eligible=eligible,
        bounds={i: float(inst.max_tasks[i]) for i in range(n_u)},  # lmm-mms: n_i = max_tasks
    )
    cluster = ClusterState(inst.capacity, inst.resources)
    sched.bind(cluster.view())
    demands = [tuple(float(x) for x in inst.demand[i]) for i in range(n_u)]
    counts = np.zeros((n_u, len(inst.server_ids)), dtype=np.int64)
    placed = np.zeros(n_u, dtype=np.int64)
    owner: list[int] = []

    def submit(user: int) -> None:
        if placed[user] + _queued[user] < inst.max_tasks[user] and sched.placeable(demands[user]):
            owner.append(user)
            _queued[user] += 1
            sched.on_arrival(len(owner) - 1, user, demands[user])

    _queued = np.zeros(n_u, dtype=np.int64)
    for i in range(n_u):
        submit(i)
    if sched.next_wakeup(0.0) < math.inf:
        sched.on_tick(sched.next_wakeup(0.0))  # periodic (psdsf): one period elapses first
    for task, server in sched.decide():
        user = owner[task]
        cluster.commit(task, server, demands[user])
        counts[user, server] += 1
        placed[user] += 1
        _queued[user] -= 1
        submit(user)
    return counts


def solve_heuristic(mechanism: str, inst: Instance) -> dict[str, Any]:
    """The ``fairsim solve`` output object for an online heuristic."""
    counts = progressive_fill(mechanism, inst)
    return {
        "mechanism": mechanism,
        "online": True,
        "users": list(inst.user_ids),
        "servers": list(inst.server_ids),
        "tasks": counts.tolist(),
        "total_tasks": [int(x) for x in counts.sum(axis=1)],
        "max_tasks": [None if math.isinf(m) else int(m) for m in inst.max_tasks],
    }
