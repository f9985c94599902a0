"""Exact (divisible-task) allocation mechanisms behind ``fairsim solve``.

:data:`EXACT` maps each mechanism name of ``fairsim solve`` (docs/mechanisms.md) to its allocator;
every allocator takes a validated :class:`~fairsim.schedulers.exact.instance.Instance` and returns
fractional task counts. Pooled mechanisms (``drf``, ``af``, ``bmf``, ``hdrf``) refuse placement
constraints and return one column, the pooled cluster. ``hdrf`` is the only one that reads an
instance's queue tree (:data:`HIERARCHICAL`); the others refuse it. :data:`JOB_EXACT` holds the
mechanisms whose input extends the contract with users' jobs over machine classes (``udrf``).
:func:`unbounded_capped` is a pooled mechanism blind to the task bounds, then held to them.
Sources and tie-breaking rules: ``docs/mechanisms.md`` (``hdrf``: ``docs/hdrf.md``).
:mod:`~fairsim.schedulers.exact.whole_task` solves DRFH restricted to whole tasks exactly (an
integer program; not a ``fairsim solve`` mechanism).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from fairsim.schedulers.exact.hdrf import solve_hdrf
from fairsim.schedulers.exact.instance import Instance, InstanceError, check_range
from fairsim.schedulers.exact.lexmaxmin import solve_c_drfh, solve_drfh, solve_lmm_mms, solve_tsf
from fairsim.schedulers.exact.pf import solve_pf
from fairsim.schedulers.exact.pool import POOLED, solve_af, solve_bmf, solve_drf
from fairsim.schedulers.exact.psdsf import solve_psdsf
from fairsim.schedulers.exact.snap import printed_allocation
from fairsim.schedulers.exact.udrf import JobInstance, jobs_json, solve_udrf
from fairsim.schedulers.exact.verification import verify, verify_udrf

EXACT: dict[str, Callable[..., np.ndarray]] = {
    "drf": solve_drf,
    "drfh": solve_drfh,
    "c-drfh": solve_c_drfh,
    "tsf": solve_tsf,
    "psdsf": solve_psdsf,
    "af": solve_af,
    "pf": solve_pf,
    "bmf": solve_bmf,
    "lmm-mms": solve_lmm_mms,
    "hdrf": solve_hdrf,
}

#: The mechanisms that read an instance's queue tree (``"queues"``, docs/hdrf.md).
HIERARCHICAL = frozenset({"hdrf"})


def refuse_queues(name: str, inst: Instance) -> None:
    """Refuse a queue tree, which only :data:`HIERARCHICAL` mechanisms read.

    Raises
    ------
    InstanceError
        If ``inst`` has queues (or a user names one) and ``name`` allocates the users as one flat
        set: dropping the tree silently would answer a different question.
    """
    if inst.queues is not None and name not in HIERARCHICAL:
        raise InstanceError(
            f"queues: {name} allocates the users as one flat set and cannot honour a queue "
            'tree (hdrf does; remove "queues" and the users\' "queue" to compare)'
        )


def solve_udrf_json(inst: JobInstance) -> dict[str, Any]:
    """The ``fairsim solve udrf`` output object (``docs/mechanisms.md``, section UDRF).

    ``servers`` are the machine classes; ``tasks[u][m]`` is the number of task runs user ``u``
    places in class ``m`` (``sum`` of ``x_j`` over its jobs with a positive demand on ``m``). The
    extra keys are ``jobs`` (``{user: {job: x_j}}``), ``dominant_shares`` (eq. 12, per user) and
    ``rducs`` (lists of user ids).

    Raises
    ------
    NumericalRangeError
        If the allocation fails the check after the solve
        (:func:`~fairsim.schedulers.exact.verification.verify_udrf`).
    """
    x = solve_udrf(inst)
    verify_udrf(inst, x)
    return jobs_json(inst, x)


#: Mechanisms taking a :class:`~fairsim.schedulers.exact.udrf.JobInstance` (jobs per machine class):
# the
#: allocator and its ``fairsim solve`` output builder.
JOB_EXACT: dict[str, tuple[Callable[..., np.ndarray], Callable[..., dict[str, Any]]]] = {
    "udrf": (solve_udrf, solve_udrf_json),
}


def solve_exact(name: str, inst: Instance, sharing: str = "rdm") -> np.ndarray:
    """Allocation of mechanism ``name`` on ``inst``.

    Parameters
    ----------
    name : str
        A key of :data:`EXACT`.
    inst : Instance
    sharing : {"rdm", "tdm"}
        PS-DSF multiplexing (PS-DSF paper, eqs. 9 and 10); ignored by the other mechanisms.

    Returns
    -------
    ndarray, shape (n_users, n_servers), or (n_users, 1) for :data:`POOLED` mechanisms
        Fractional number of tasks of user n on server l.

    Raises
    ------
    KeyError
        For an unknown name.
    InstanceError
        For an instance field the mechanism cannot honour (placement constraints of a pooled
        mechanism, a queue tree of a flat one: :func:`refuse_queues`).
    NumericalRangeError
        If the instance's numbers overflow float64
        (:func:`~fairsim.schedulers.exact.instance.check_range`), a
        solver reports no optimum, or the answer fails the independent check
        (:func:`~fairsim.schedulers.exact.verification.verify`).
    """
    fn = EXACT[name]
    refuse_queues(name, inst)
    check_range(inst)
    x = fn(inst, sharing=sharing) if name == "psdsf" else fn(inst)
    verify(name, inst, x, sharing)
    return x


def unbounded_capped(name: str, inst: Instance) -> np.ndarray:
    """DRF or AF (Ghodsi et al., NSDI 2011) ignoring the task bounds, then capped at them; the
    excess is wasted.

    The allocation of ``name`` (``"drf"`` or ``"af"``, :mod:`fairsim.schedulers.exact.pool`) is
    computed with every ``max_tasks`` set to infinity (equal weighted dominant, resp. asset, shares
    over the pool until a resource saturates); then each user keeps ``min(x_n, max_tasks_n)``. What
    a capped user received beyond its bound is not given to anyone else. This is the reading of the
    LMM-MMS paper's baselines (Li et al., *Mathematics* 2025, Section 5) under which its gains are
    possible (``docs/lmm-mms.md``).

    Parameters
    ----------
    name : {"drf", "af"}
    inst : Instance
        One-pool instance with the users' bounds in ``max_tasks``.

    Returns
    -------
    ndarray, shape (n_users,)
        Tasks per user, at most ``max_tasks``.
    """
    free = replace(inst, max_tasks=np.full(inst.max_tasks.shape, np.inf))
    return np.minimum(solve_exact(name, free)[:, 0], inst.max_tasks)


def dominant_shares(inst: Instance, x: np.ndarray) -> np.ndarray:
    """Each user's global dominant share of allocation ``x``: ``max_r (sum_l x[n, l] d[n, r]) /
    C_r`` with ``C_r = sum_l c[l, r]`` the cluster's total (DRFH paper, Wang et al., Section IV,
    eq. 3; on one server, DRF's dominant share), unweighted.

    Parameters
    ----------
    inst : Instance
    x : ndarray, shape (n_users, n_servers) or (n_users, 1)
        Tasks per user and server (one pooled column for a pooled mechanism).

    Returns
    -------
    ndarray, shape (n_users,)
        In [0, 1]; a resource the cluster has none of is left out (no user it would serve).
    """
    total = inst.capacity.sum(axis=0)  # (R,)
    used = np.asarray(x, dtype=float).sum(axis=1)[:, None] * inst.demand  # (N, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, used / total, 0.0)
    return np.asarray(share.max(axis=1), dtype=float)


def allocation_json(
    name: str, inst: Instance, x: np.ndarray, servers: list[str], *, integer: bool = False
) -> dict[str, Any]:
    """The ``fairsim solve`` output object of allocation ``x`` (docs/mechanisms.md), at full
    float precision.

    Parameters
    ----------
    name : str
        The mechanism or online scheduler.
    inst : Instance
    x : ndarray, shape (n_users, n_servers), or (n_users, 1) for a pooled mechanism
        The allocation as it is to be printed (an exact mechanism's:
        :func:`~fairsim.schedulers.exact.snap.printed_allocation`).
    servers : list of str
        The column names (``["pool"]`` for a pooled mechanism).
    integer : bool
        The counts are whole tasks (an online heuristic): printed as integers.

    Returns
    -------
    dict
        ``{"mechanism", "users", "servers", "tasks", "dominant_shares"}``: ``tasks[i][l]`` is
        ``x[i, l]`` as a Python float (or int), ``dominant_shares[i]`` user i's global dominant
        share of ``x`` (:func:`dominant_shares`), not rounded either: a program recomputing the
        shares from ``tasks`` gets the same numbers.
    """
    tasks = [
        [int(v) for v in row] if integer else [float(v) + 0.0 for v in row] for row in np.asarray(x)
    ]
    shares = dominant_shares(inst, np.asarray(x, dtype=float))
    return {
        "mechanism": name,
        "users": list(inst.user_ids),
        "servers": servers,
        "tasks": tasks,
        "dominant_shares": [float(s) + 0.0 for s in shares],
    }


def solve_exact_json(name: str, inst: Instance, sharing: str = "rdm") -> dict[str, Any]:
    """The ``fairsim solve`` output object (docs/mechanisms.md) of an exact mechanism.

    The verified allocation (:func:`solve_exact`) at full float precision, snapped only to the
    bounds the check proves and fitted within every capacity
    (:func:`~fairsim.schedulers.exact.snap.printed_allocation`, checked again), then
    :func:`allocation_json`.

    Raises
    ------
    NumericalRangeError
        As :func:`solve_exact`, or if the allocation fails the check once fitted within the
        capacities.
    """
    x = printed_allocation(name, inst, solve_exact(name, inst, sharing), sharing)
    servers = ["pool"] if name in POOLED else list(inst.server_ids)
    return allocation_json(name, inst, x, servers)
