"""Static progressive filling of indivisible tasks with the online heuristics.

``fairsim solve ff-drfh|bf-drfh|slots-<S> INSTANCE.json``, and ``fairsim solve NAME INSTANCE.json
--online`` for the online mechanisms that share their name with an exact mechanism (``drf``,
``c-drfh``, ``tsf``, ``af``, ``pf``, ``bmf``, ``lmm-mms``; without ``--online`` those names mean the
exact allocation), run exactly the code the simulator runs
(:mod:`fairsim.schedulers.progressive_filling`, committed through
:class:`fairsim.simulator.cluster.ClusterState`): every user has ``floor(max_tasks)`` identical
tasks (whole tasks; unbounded by default) queued at time 0 and none finishes, so
the schedulers fill the cluster until nothing more fits (DRFH paper, Section V-B).
:func:`whole_task_shares` sets Best-Fit DRFH's whole tasks beside the divisible DRFH allocation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fairsim.schedulers.exact import allocation_json, solve_exact_json
from fairsim.schedulers.exact.common import monopoly_tasks, serving
from fairsim.schedulers.exact.instance import Instance, InstanceError, parse_instance
from fairsim.schedulers.registry import make_scheduler
from fairsim.schedulers.slots import Slots
from fairsim.simulator.cluster import ClusterState, TaskRecords
from fairsim.simulator.constraints import ConstraintIndex

#: Most tasks :func:`progressive_fill` places (one at a time, about 20,000 per second).
ONLINE_MAX_TASKS = 1_000_000


def whole_bounds(inst: Instance) -> np.ndarray:
    """Each user's bound in whole tasks: ``floor(max_tasks)`` (``inf`` where unbounded).

    The online heuristics place indivisible tasks, so a user with ``max_tasks`` 2.5 has 2 tasks
    queued, never a third; the exact mechanisms keep the fractional bound.

    Parameters
    ----------
    inst : Instance
        The allocation instance.

    Returns
    -------
    ndarray of float, shape (n_users,)
        Whole numbers, or ``inf``.
    """
    return np.floor(inst.max_tasks)


def largest_server_units(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Capacities and demands in units of the largest server, resource by resource.

    Slots (:class:`~fairsim.schedulers.slots.Slots`) divides the largest server into ``S``
    slots of ``1/S`` of each resource and reads capacities and demands in the units of the
    simulator's normalised traces, where the largest server is 1 in every resource. An
    instance has units of its own (CPUs, GB), so every resource ``r`` is divided by
    ``max_l c[l, r]`` (left as it is where no server has any of it). Task counts do not depend
    on the units, so the fill's counts are the answer in the instance's units too.

    Parameters
    ----------
    inst : Instance
        The allocation instance.

    Returns
    -------
    capacity : ndarray, shape (n_servers, n_resources)
        ``c[l, r] / max_l c[l, r]``: the largest server of each resource is 1.
    demand : ndarray, shape (n_users, n_resources)
        ``d[n, r] / max_l c[l, r]``.
    """
    largest = inst.capacity.max(axis=0)
    unit = np.where(largest > 0, largest, 1.0)
    return inst.capacity / unit, inst.demand / unit


def progressive_fill(mechanism: str, inst: Instance) -> np.ndarray:
    """Integer task counts of an online heuristic filling an empty cluster.

    Parameters
    ----------
    mechanism : str
        A registered online scheduler name (``ff-drfh``, ``bf-drfh``, ``slots-<S>``, or an online
        mechanism of :mod:`fairsim.schedulers.online_mechanisms`).
    inst : Instance
        The allocation instance.

    Returns
    -------
    ndarray of int64, shape (n_users, n_servers)
        Tasks of user i placed on server l.

    Raises
    ------
    fairsim.errors.ConfigError
        For an unknown scheduler name.
    InstanceError
        If the fill could place more than :data:`ONLINE_MAX_TASKS` tasks (it places them one at a
        time; an instance with tiny demands would run for hours).
    """
    bound = whole_bounds(inst)
    most = np.minimum(
        (np.floor(monopoly_tasks(inst.capacity, inst.demand)) * serving(inst)).sum(axis=1),
        bound,
    ).sum()
    if most > ONLINE_MAX_TASKS:
        raise InstanceError(
            f"users: the online fill places tasks one at a time and could place up to {most:.3g} "
            f"(limit {ONLINE_MAX_TASKS:,}); set max_tasks or solve without --online"
        )
    n_u = len(inst.user_ids)
    eligible = {i: inst.eligible[i].copy() for i in range(n_u) if not bool(inst.eligible[i].all())}
    sched = make_scheduler(
        mechanism,
        weights={i: float(inst.weight[i]) for i in range(n_u)},
        eligible=eligible,
        bounds={i: float(bound[i]) for i in range(n_u)},  # lmm-mms: n_i = floor(max_tasks)
    )
    capacity, demand = inst.capacity, inst.demand
    if isinstance(sched, Slots):  # slots of 1/S of the largest server: in its units
        capacity, demand = largest_server_units(inst)
    # a resource that no server has (total 0) is left out of the fill, as the exact mechanisms
    # do: a user that demands some of it places nothing, the others are filled on the rest (the
    # schedulers' shares divide by the pool's total, which would be 0)
    absent = inst.capacity.sum(axis=0) <= 0
    never = np.zeros(n_u, dtype=bool)
    resources = inst.resources
    if absent.any() and not absent.all():
        never = np.asarray((inst.demand[:, absent] > 0).any(axis=1), dtype=bool)
        keep = ~absent
        capacity, demand = capacity[:, keep], demand[:, keep]
        resources = tuple(r for r, k in zip(resources, keep.tolist(), strict=True) if k)
    cluster = ClusterState(capacity, resources)
    sched.bind(cluster.view())
    demands = [tuple(float(x) for x in demand[i]) for i in range(n_u)]
    counts = np.zeros((n_u, len(inst.server_ids)), dtype=np.int64)
    placed = np.zeros(n_u, dtype=np.int64)
    owner: list[int] = []

    def submit(user: int) -> None:
        if (
            not never[user]
            and placed[user] + _queued[user] < bound[user]
            and sched.placeable(demands[user])
        ):
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
    """The ``fairsim solve`` output object for an online heuristic: integer task counts, each
    user's dominant share (:func:`fairsim.schedulers.exact.allocation_json`), task totals and
    the bounds the fill used (``floor(max_tasks)``, :func:`whole_bounds`; ``None`` where
    unbounded)."""
    counts = progressive_fill(mechanism, inst)
    out = allocation_json(mechanism, inst, counts, list(inst.server_ids), integer=True)
    return {
        "mechanism": mechanism,
        "online": True,
        "users": out["users"],
        "servers": out["servers"],
        "tasks": out["tasks"],
        "dominant_shares": out["dominant_shares"],
        "total_tasks": [int(x) for x in counts.sum(axis=1)],
        "max_tasks": [None if math.isinf(m) else int(m) for m in whole_bounds(inst)],
    }


def udrf_online_fill(inst: Any, *, blocked: str = "reserve") -> np.ndarray:
    """Job runs that online UDRF (``udrf``) starts when it fills empty machine classes.

    The integer counterpart of :func:`fairsim.schedulers.exact.udrf.solve_udrf` on the same jobs
    instance: every machine class is one server with the class's capacity, a run of job ``j`` is one
    task per class ``m`` with ``R^j[m] > 0`` (demand ``R^j[m]``, constrained to class ``m``),
    started only whole (:class:`fairsim.schedulers.udrf_online.UDRF`), and every job has one run
    queued at a time (the next is queued when one starts, up to ``max_runs``). Nothing finishes.

    Parameters
    ----------
    inst : fairsim.schedulers.exact.udrf.JobInstance
    blocked : {"reserve", "backfill"}
        ``udrf``'s rule for a job that does not fit (:class:`~fairsim.schedulers.udrf_online.UDRF`):
        ``reserve`` (Fig. 5, line 6: no job after it in the order of the users' shares is given
        the servers it may use, so classes it waits for stay partly empty: nothing finishes
        here), or ``backfill`` (the fill is maximal: it stops when no further run fits).

    Returns
    -------
    ndarray of int64, shape (n_jobs,)
        Runs started per job (jobs numbered user by user, as ``inst.job_user``).
    """
    n_c = len(inst.class_ids)
    cluster = ClusterState(inst.capacity, inst.resources)
    index = ConstraintIndex(np.array(inst.class_ids, dtype=object))
    for m in range(n_c):  # code m + 1: the servers of class m (one server per class)
        index.add_mask(f"class #{m}", np.arange(n_c) == m)
    only = [m for m in index.masks[1:] if m is not None]
    codes: list[int] = []
    run_of: list[int] = []  # every run is one job of the view (task_job)
    n_u = len(inst.user_ids)
    sched = make_scheduler(
        {"name": "udrf", "blocked": blocked}, weights={i: float(inst.weight[i]) for i in range(n_u)}
    )
    sched.bind(cluster.view(tasks=TaskRecords(job_id=run_of, constraint=codes), constraints=index))
    n_j = len(inst.job_user)
    runs = np.zeros(n_j, dtype=np.int64)
    task_demand: list[tuple[float, ...]] = []
    job_of_run: list[int] = []

    def submit(j: int) -> None:
        if runs[j] + 1 > inst.max_runs[j] + 1e-9:
            return
        rid = len(job_of_run)
        job_of_run.append(j)
        parts = [m for m in range(n_c) if (inst.demand[j, m] > 0).any()]
        if not all(sched.placeable_on(tuple(inst.demand[j, m]), only[m]) for m in parts):
            return  # a run that no class could ever hold
        for m in parts:
            t = len(codes)
            codes.append(m + 1)
            run_of.append(rid)
            task_demand.append(tuple(float(v) for v in inst.demand[j, m]))
            sched.on_arrival(t, int(inst.job_user[j]), task_demand[t])

    for j in range(n_j):
        submit(j)
    sched.on_tick(sched.next_wakeup(0.0))  # one period elapses: a single pass fills the pool
    started: set[int] = set()
    for task, server in sched.decide():
        cluster.commit(task, server, task_demand[task])
        rid = run_of[task]
        if rid not in started:
            started.add(rid)
            j = job_of_run[rid]
            runs[j] += 1
            submit(j)
    return runs


def udrf_online_json(inst: Any) -> dict[str, Any]:
    """The ``fairsim solve udrf --online`` output: :func:`udrf_online_fill` in the layout of
    :func:`fairsim.schedulers.exact.solve_udrf_json` (``jobs`` are integer runs), plus
    ``online``."""
    from fairsim.schedulers.exact.udrf import jobs_json

    return {**jobs_json(inst, udrf_online_fill(inst), integer=True), "online": True}


def whole_task_shares(
    servers: pd.DataFrame, demands: dict[str, tuple[float, ...]]
) -> dict[str, dict[str, float]]:
    """Dominant shares of users with unbounded backlogs: divisible DRFH against whole tasks.

    Both allocations are static, on the same pool: ``drfh`` (the divisible DRFH allocation,
    Wang, Li, Liang, Sec. IV, what ``collect.fairness`` takes as the reference) and ``bf-drfh``
    (progressive filling of whole tasks with Best-Fit's choice of server, Sec. V-B, every user's
    tasks placed at once), both as ``fairsim solve`` gives them.

    Parameters
    ----------
    servers : pandas.DataFrame
        One row per server: ``server`` (its id) and its capacities ``cpu`` and ``mem`` (e.g. a
        run's ``servers.parquet``).
    demands : dict
        ``{user: per-task demand}``, in the order of the resource columns ``cpu, mem``.

    Returns
    -------
    dict
        ``{"divisible": {user: share}, "whole": {user: share}}``: global dominant shares
        ``tasks x max_r d_r / C_r``.
    """
    resources = ["cpu", "mem"]
    cap = servers[resources].to_numpy(dtype=float)
    total = cap.sum(axis=0)
    inst = parse_instance(
        {
            "resources": resources,
            "servers": [
                {"id": str(sid), "capacity": [float(x) for x in row]}
                for sid, row in zip(servers["server"], cap, strict=True)
            ],
            "users": [{"id": u, "demand": [float(x) for x in d]} for u, d in demands.items()],
        }
    )
    per_task = {u: float(np.max(np.asarray(d, dtype=float) / total)) for u, d in demands.items()}
    out: dict[str, dict[str, float]] = {}
    for key, answer in (
        ("divisible", solve_exact_json("drfh", inst)),
        ("whole", solve_heuristic("bf-drfh", inst)),
    ):
        tasks = np.asarray(answer["tasks"], dtype=float).sum(axis=1)
        out[key] = {u: float(n * per_task[u]) for u, n in zip(answer["users"], tasks, strict=True)}
    return out
