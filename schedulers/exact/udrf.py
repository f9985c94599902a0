"""UDRF offline allocation (Tahir et al., "UDRF: Multi-resource Fairness for Complex Jobs with
Placement Constraints", Section III-A, Fig. 3).

Model (Section II-B). Each ``servers`` entry of a UDRF instance is one machine class ``m`` with
capacity ``c_m`` (a K-vector, pooled and divisible). User ``u`` owns jobs ``J^u``; job ``j`` needs
``R^j[m, k]`` of resource ``k`` of class ``m`` per run, and ``x_j`` is its number of runs (eq. 4).
``P_u`` (eq. 2) is the set of ``(m, k)`` with a positive gross demand (eq. 1). Users are adjacent in
the user dependency graph when their ``P_u`` intersect (Definition 1); an RDUC is a connected
component (Definition 2). The RDUC-wise dominant share (eq. 12) simplifies to
``s_u = max_{(m,k)} sum_j x_j R^j[m, k] / c[m, k]`` (the ``d_u^max`` of eqs. 10-11 cancels).

Algorithm (our exact reading of Fig. 3, see ``docs/mechanisms.md``). In every RDUC independently a
level ``L`` rises from 0 and is followed exactly from breakpoint to breakpoint:

* an unsaturated user runs every one of its active jobs equally often, ``w_u L / d_u^max`` runs
  (Fig. 3 line 14 with ``r_u = 1``), so ``s_u = w_u L``;
* a user becomes saturated when a resource of ``P_u`` saturates (Fig. 3 line 25); its cap is its
  dominant share at that moment;
* the jobs of a saturated user that do not use a saturated resource keep growing at the same rate
  until one of their resources saturates or the user's share of one of their resources reaches the
  cap (the "constraint 12" saturation of Fig. 3 line 19; Section II-A: job1 of ``u1`` grows until
  its share of the hadoop class equals ``u1``'s dominant share);
* a job also stops at its ``max_runs``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fairsim.schedulers.exact.instance import (
    _HUGE,
    _TINY,
    InstanceError,
    NumericalRangeError,
    _number,
    _vector,
    check_top_level,
    identifier,
    parse_servers,
    read_instance_json,
)

_EPS = 1e-12
_TOL = 1e-9


@dataclass(frozen=True)
class JobInstance:
    """A validated UDRF instance (users with jobs over machine classes).

    Attributes
    ----------
    resources : tuple of str
        The K resource types of every machine class.
    class_ids : tuple of str
        Machine classes (the ``servers`` entries).
    user_ids : tuple of str
    job_ids : tuple of tuple of str
        Job ids of each user.
    capacity : ndarray, shape (n_classes, K)
    job_user : ndarray of int, shape (n_jobs,)
        Owner of each job (jobs are numbered user by user).
    demand : ndarray, shape (n_jobs, n_classes, K)
        ``R^j[m, k]`` per run (Section II-B).
    max_runs : ndarray, shape (n_jobs,)
        ``inf`` where unbounded.
    weight : ndarray, shape (n_users,)
    """

    resources: tuple[str, ...]
    class_ids: tuple[str, ...]
    user_ids: tuple[str, ...]
    job_ids: tuple[tuple[str, ...], ...]
    capacity: np.ndarray
    job_user: np.ndarray
    demand: np.ndarray
    max_runs: np.ndarray
    weight: np.ndarray


def parse_job_instance(data: Any) -> JobInstance:
    """Validate a UDRF instance mapping (format: ``docs/mechanisms.md``, section UDRF).

    Raises
    ------
    InstanceError
        One line naming the first invalid field.
    """
    resources = check_top_level(data)
    n_r = len(resources)
    cids, caps = parse_servers(data, n_r, "machine class", "machine classes")
    cap = np.array(caps, dtype=np.float64)
    users = data.get("users")
    if not isinstance(users, list) or not users:
        raise InstanceError(f"users: expected a non-empty list, got {users!r}")
    uids: list[str] = []
    jids: list[tuple[str, ...]] = []
    owner, dem, runs, wts = [], [], [], []
    for i, u in enumerate(users):
        if not isinstance(u, dict) or "id" not in u:
            raise InstanceError(f"users[{i}]: expected an object with 'id' and 'jobs'")
        for key in u:
            if key not in ("id", "jobs", "weight"):
                raise InstanceError(
                    f"users[{i}]: unknown key {key!r} (udrf users: id, jobs, weight)"
                )
        uid = identifier(u["id"], f"users[{i}].id")
        if uid in uids:
            raise InstanceError(f"users[{i}].id: duplicate user id {uid!r}")
        uids.append(uid)
        wts.append(_number(u.get("weight", 1), f"users[{i}].weight", strict=True))
        jobs = u.get("jobs")
        if not isinstance(jobs, list) or not jobs:
            raise InstanceError(f"users[{i}].jobs: expected a non-empty list of jobs, got {jobs!r}")
        ids: list[str] = []
        for q, job in enumerate(jobs):
            f = f"users[{i}].jobs[{q}]"
            if not isinstance(job, dict) or "id" not in job or "demand" not in job:
                raise InstanceError(f"{f}: expected an object with 'id' and 'demand'")
            for key in job:
                if key not in ("id", "demand", "max_runs"):
                    raise InstanceError(f"{f}: unknown key {key!r} (known: id, demand, max_runs)")
            jid = identifier(job["id"], f"{f}.id")
            if jid in ids:
                raise InstanceError(f"{f}.id: duplicate job id {jid!r}")
            ids.append(jid)
            d = job["demand"]
            if not isinstance(d, dict) or not d:
                raise InstanceError(
                    f"{f}.demand: expected an object {{machine class: [per-resource demand]}}"
                )
            r = np.zeros((len(cids), n_r))
            for cls, vec in d.items():
                if cls not in cids:
                    raise InstanceError(f"{f}.demand: unknown machine class {cls!r}")
                m = cids.index(cls)
                r[m] = _vector(vec, f"{f}.demand.{cls}", n_r)
                bad = np.flatnonzero((r[m] > 0) & (cap[m] <= 0))
                if bad.size:
                    raise InstanceError(
                        f"{f}.demand.{cls}: needs {resources[bad[0]]!r}, "
                        f"which machine class {cls!r} does not have (capacity 0)"
                    )
            if not (r > 0).any():
                raise InstanceError(f"{f}.demand: {d!r} is all zero")
            mr = job.get("max_runs")
            runs.append(math.inf if mr is None else _number(mr, f"{f}.max_runs"))
            owner.append(i)
            dem.append(r)
        jids.append(tuple(ids))
    dem_arr = np.array(dem, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        ratio = np.where(dem_arr > 0, cap[None] / np.where(dem_arr > 0, dem_arr, 1.0), 1.0)
    bad_j = np.argwhere((ratio < _TINY) | (ratio > _HUGE))
    if bad_j.size:
        j, m, k = (int(i) for i in bad_j[0])
        u = owner[j]
        q = j - owner.index(u)
        raise NumericalRangeError(
            f"users[{u}].jobs[{q}].demand.{cids[m]}[{k}]: {dem_arr[j, m, k]:g} per run against "
            f"a capacity of {cap[m, k]:g}: the ratio {ratio[j, m, k]:.3g} is outside float64's "
            "normal range (2.2e-308 to 4.5e307)"
        )
    return JobInstance(
        resources=tuple(resources),
        class_ids=tuple(cids),
        user_ids=tuple(uids),
        job_ids=tuple(jids),
        capacity=cap,
        job_user=np.array(owner, dtype=int),
        demand=dem_arr,
        max_runs=np.array(runs),
        weight=np.array(wts),
    )


def load_job_instance(path: str | Path) -> JobInstance:
    """Read and validate a UDRF instance file; errors as for
    :func:`~fairsim.schedulers.exact.instance.load_instance`."""
    return parse_job_instance(read_instance_json(path))


def job_shares(inst: JobInstance) -> np.ndarray:
    """``d^j[m, k] = R^j[m, k] / c[m, k]`` (Section III), flattened over ``(m, k)``.

    Returns
    -------
    ndarray, shape (n_jobs, n_classes * K)
        0 where the capacity is 0 (parsing rejects positive demand there).
    """
    cap = inst.capacity[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(cap > 0, inst.demand / cap, 0.0)
    return d.reshape(len(inst.job_user), -1)


def gross_support(inst: JobInstance) -> np.ndarray:
    """``P_u`` (eq. 2) as a boolean matrix, shape (n_users, n_classes * K)."""
    pos = inst.demand.reshape(len(inst.job_user), -1) > 0
    out = np.zeros((len(inst.user_ids), pos.shape[1]), dtype=bool)
    for j, u in enumerate(inst.job_user):
        out[u] |= pos[j]
    return out


def rducs(inst: JobInstance) -> list[list[int]]:
    """RDUCs: connected components of the user dependency graph (Definitions 1-2).

    Users ``u, v`` are adjacent when ``P_u`` and ``P_v`` intersect; the components are found by
    breadth-first search as in Section III-A.

    Returns
    -------
    list of list of int
        User indices of each RDUC, each sorted, ordered by their smallest member.
    """
    p = gross_support(inst)
    adj = (p.astype(int) @ p.T.astype(int)) > 0
    seen = np.zeros(len(p), dtype=bool)
    comps: list[list[int]] = []
    for s in range(len(p)):
        if seen[s]:
            continue
        seen[s] = True
        queue, comp = [s], []
        while queue:
            u = queue.pop()
            comp.append(u)
            for v in np.flatnonzero(adj[u] & ~seen):
                seen[v] = True
                queue.append(int(v))
        comps.append(sorted(comp))
    return comps


def _schedule_rduc(
    d: np.ndarray, job_user: np.ndarray, weight: np.ndarray, bound: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``scheduleJobs`` of Fig. 3 for one RDUC, followed exactly from breakpoint to breakpoint.

    Parameters
    ----------
    d : ndarray, shape (n_jobs, n_res)
        Job demand shares of the RDUC's jobs.
    job_user : ndarray of int, shape (n_jobs,)
        Owner (local index) of each job.
    weight : ndarray, shape (n_users,)
    bound : ndarray, shape (n_jobs,)

    Returns
    -------
    x : ndarray, shape (n_jobs,)
    cap : ndarray, shape (n_users,)
        Dominant share at which each user saturated (``inf`` if it never did).
    """
    n_j, n_res = d.shape
    n_u = len(weight)
    member = np.zeros((n_u, n_j))
    member[job_user, np.arange(n_j)] = 1.0
    gross = member @ d  # (n_u, n_res): one run of every job, eq. 1 in shares
    dmax = gross.max(axis=1)  # eq. 10
    rate = weight[job_user] / dmax[job_user]  # runs per unit of level
    x = np.zeros(n_j)
    active = bound > 0
    user_sat = np.zeros(n_u, dtype=bool)
    cap = np.full(n_u, np.inf)
    res_sat = np.zeros(n_res, dtype=bool)
    uses = d > 0
    for _ in range(4 * (n_j + n_u * n_res) + 10):
        if not active.any():
            break
        used = x @ d
        slope = (rate * active) @ d
        share = member @ (d * x[:, None])  # (n_u, n_res) per-user shares
        sslope = member @ (d * (rate * active)[:, None])
        steps = [np.inf]
        grow = slope > _EPS
        if grow.any():
            steps.append(float(((1.0 - used[grow]) / slope[grow]).min()))
        capped = user_sat[:, None] & (sslope > _EPS)
        if capped.any():
            room = (cap[:, None] - share) / np.where(capped, sslope, 1.0)
            steps.append(float(room[capped].min()))
        fin = active & np.isfinite(bound)
        if fin.any():
            steps.append(float(((bound[fin] - x[fin]) / rate[fin]).min()))
        step = max(min(steps), 0.0)
        if not math.isfinite(step):  # pragma: no cover - every active job uses a resource
            break
        x = np.where(active, x + rate * step, x)
        x = np.minimum(x, bound)
        used = x @ d
        share = member @ (d * x[:, None])
        newly = (used >= 1.0 - _TOL) & ~res_sat
        res_sat |= newly
        # users with a saturated resource in P_u saturate (Fig. 3 line 25); cap = s_u now
        hit = ~user_sat & ((gross > 0) & res_sat[None, :]).any(axis=1)
        cap[hit] = share[hit].max(axis=1)
        user_sat |= hit
        # job saturation (Fig. 3 line 19): saturated resource, cap of eq. 12, or max_runs
        stop = (uses & res_sat[None, :]).any(axis=1)
        at_cap = user_sat[:, None] & (share >= cap[:, None] * (1.0 - _TOL) - _EPS)
        stop |= (uses & at_cap[job_user]).any(axis=1)
        stop |= x >= bound * (1.0 - _TOL)
        active &= ~stop
        # a user whose jobs all stopped without a saturated resource is saturated too
        idle = ~user_sat & (member @ active.astype(float) == 0)
        cap[idle] = share[idle].max(axis=1)
        user_sat |= idle
    return x, cap


def solve_udrf(inst: JobInstance) -> np.ndarray:
    """UDRF offline allocation (Fig. 3): number of runs ``x_j`` of every job.

    The master step (lines 01-05) splits the users into RDUCs (:func:`rducs`); each RDUC is
    scheduled independently (``scheduleJobs``, lines 06-27), so users of different RDUCs never
    interact.

    Parameters
    ----------
    inst : JobInstance

    Returns
    -------
    ndarray, shape (n_jobs,)
        Fractional runs per job, jobs numbered user by user (``inst.job_user``).
    """
    d = job_shares(inst)
    x = np.zeros(len(inst.job_user))
    for comp in rducs(inst):
        local = {u: k for k, u in enumerate(comp)}
        jobs = np.flatnonzero(np.isin(inst.job_user, comp))
        cols = np.flatnonzero((d[jobs] > 0).any(axis=0))
        owner = np.array([local[int(u)] for u in inst.job_user[jobs]], dtype=int)
        xc, _ = _schedule_rduc(d[np.ix_(jobs, cols)], owner, inst.weight[comp], inst.max_runs[jobs])
        x[jobs] = xc
    return x


def dominant_shares(inst: JobInstance, x: np.ndarray) -> np.ndarray:
    """RDUC-wise dominant share of every user (eq. 12): ``max_(m,k) sum_j x_j d^j[m, k]``."""
    d = job_shares(inst)
    per = np.zeros((len(inst.user_ids), d.shape[1]))
    np.add.at(per, inst.job_user, d * x[:, None])
    return per.max(axis=1)


def jobs_json(inst: JobInstance, x: np.ndarray, integer: bool = False) -> dict[str, Any]:
    """The ``fairsim solve udrf`` output object for job runs ``x`` (shape (n_jobs,)).

    ``integer``: the runs are counts (the online fill), printed as integers.
    """
    num = int if integer else float
    on_class = (inst.demand > 0).any(axis=2)  # (n_jobs, n_classes)
    tasks = np.zeros((len(inst.user_ids), len(inst.class_ids)))
    np.add.at(tasks, inst.job_user, on_class * x[:, None])
    jobs: dict[str, dict[str, float]] = {}
    k = 0
    for u, ids in zip(inst.user_ids, inst.job_ids, strict=True):
        jobs[u] = {}
        for jid in ids:
            jobs[u][jid] = num(x[k])
            k += 1
    return {
        "mechanism": "udrf",
        "users": list(inst.user_ids),
        "servers": list(inst.class_ids),
        "tasks": [[num(v) for v in row] for row in tasks],
        "jobs": jobs,
        "dominant_shares": [float(v) for v in dominant_shares(inst, np.asarray(x, dtype=float))],
        "rducs": [[inst.user_ids[u] for u in c] for c in rducs(inst)],
    }
