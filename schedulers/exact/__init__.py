"""Exact (divisible-task) allocation mechanisms behind ``fairsim solve``.

:data:`EXACT` maps each mechanism name of ``fairsim solve`` (docs/mechanisms.md) to its allocator;
every allocator takes a validated :class:`~fairsim.schedulers.exact.instance.Instance` and returns
fractional task counts. Pooled mechanisms (``drf``, ``af``, ``bmf``) ignore placement constraints
and return one column, the pooled cluster. :data:`JOB_EXACT` holds the mechanisms whose input
extends the contract with users' jobs over machine classes (``udrf``). Sources and tie-breaking
rules: ``docs/mechanisms.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fairsim.schedulers.exact.common import monopoly_tasks
from fairsim.schedulers.exact.instance import Instance, check_range
from fairsim.schedulers.exact.lexmaxmin import solve_c_drfh, solve_drfh, solve_lmm_mms, solve_tsf
from fairsim.schedulers.exact.pf import solve_pf
from fairsim.schedulers.exact.pool import POOLED, solve_af, solve_bmf, solve_drf
from fairsim.schedulers.exact.psdsf import solve_psdsf
from fairsim.schedulers.exact.udrf import JobInstance, jobs_json, solve_udrf
from fairsim.schedulers.exact.verification import CHECK_RTOL, verify, verify_udrf

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
}


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
        mechanism).
    NumericalRangeError
        If the instance's numbers overflow float64
        (:func:`~fairsim.schedulers.exact.instance.check_range`), a
        solver reports no optimum, or the answer fails the independent check
        (:func:`~fairsim.schedulers.exact.verification.verify`).
    """
    fn = EXACT[name]
    check_range(inst)
    x = fn(inst, sharing=sharing) if name == "psdsf" else fn(inst)
    verify(name, inst, x, sharing)
    return x


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


def task_decimals(inst: Instance, rtol: float = CHECK_RTOL) -> np.ndarray:
    """Decimals of each user's task counts that the check after the solve resolves.

    :func:`~fairsim.schedulers.exact.verification.verify` accepts a task count of user ``n`` to
    within ``rtol`` times the tasks it could run (capacity used to ``c (1 + rtol)``, negative
    counts to ``-rtol gamma[n, l]``, ``max_tasks`` to ``(1 + rtol)``). With ``gamma_n = min_r
    C_r / d[n, r]``, the tasks of user ``n`` the whole cluster holds (``C_r`` the total of
    resource ``r``; at least ``sum_l gamma[n, l]``), the printed counts keep ``floor(-log10(rtol
    * gamma_n))`` decimals: more would print solver noise (``9.999999990000001`` for a user capped
    at 10 tasks).

    Returns
    -------
    ndarray of int, shape (n_users,)
        Between 0 and 12; ``floor(-log10(rtol))`` for a user no server serves.
    """
    gamma = monopoly_tasks(inst.capacity.sum(axis=0)[None, :], inst.demand)[:, 0]
    with np.errstate(divide="ignore"):
        dec = np.floor(-np.log10(rtol * np.where(gamma > 0, gamma, 1.0)))
    return np.clip(np.where(np.isfinite(dec), dec, 12), 0, 12).astype(int)


#: Decimals of a dominant share in the ``fairsim solve`` output: shares are in [0, 1] and checked
#: to the relative tolerance :data:`~fairsim.schedulers.exact.verification.CHECK_RTOL`.
SHARE_DECIMALS = int(np.floor(-np.log10(CHECK_RTOL)))


def allocation_json(
    name: str, inst: Instance, x: np.ndarray, servers: list[str], *, integer: bool = False
) -> dict[str, Any]:
    """The ``fairsim solve`` output object of allocation ``x`` (docs/mechanisms.md).

    ``tasks[i][l]`` rounded to :func:`task_decimals` of user i (``integer``: counts, printed as
    integers) and ``dominant_shares[i]`` (:func:`dominant_shares`) rounded to
    :data:`SHARE_DECIMALS`.
    """
    dec = task_decimals(inst)
    tasks = [
        [int(v) for v in row] if integer else [round(float(v), int(d)) + 0.0 for v in row]
        for row, d in zip(np.asarray(x), dec, strict=True)
    ]
    shares = dominant_shares(inst, np.asarray(x, dtype=float))
    return {
        "mechanism": name,
        "users": list(inst.user_ids),
        "servers": servers,
        "tasks": tasks,
        "dominant_shares": [round(float(s), SHARE_DECIMALS) + 0.0 for s in shares],
    }


def solve_exact_json(name: str, inst: Instance, sharing: str = "rdm") -> dict[str, Any]:
    """The ``fairsim solve`` output object (docs/mechanisms.md) of an exact mechanism: the
    verified allocation rounded to the check's tolerance (:func:`allocation_json`)."""
    x = solve_exact(name, inst, sharing)
    servers = ["pool"] if name in POOLED else list(inst.server_ids)
    return allocation_json(name, inst, x, servers)
