"""The DRFH allocation restricted to whole tasks, solved exactly (:func:`whole_task_drfh`).

Source: W. Wang, B. Li, B. Liang, "Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers" (IEEE INFOCOM 2014), Section IV: DRFH maximises the smallest global
dominant share, then the next, and so on. With divisible tasks (:func:`fairsim.schedulers.exact.
lexmaxmin.solve_drfh`) every server is used to its bottleneck; here every user runs whole tasks,
so each level is an integer program (``scipy.optimize.milp``, HiGHS).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: Numerical slack of :func:`whole_task_drfh`'s comparisons of dominant shares.
_WHOLE_EPS = 1e-9


def _packings(cap: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Every packing of whole tasks into one server of capacity ``cap``: the rows are task
    counts per user (``demand``: users x resources) that fit, the empty packing included."""
    with np.errstate(divide="ignore"):
        most = np.floor(np.min(np.where(demand > 0, cap / demand, np.inf), axis=1) + 1e-9)
    grids = np.meshgrid(*(np.arange(int(m) + 1) for m in most), indexing="ij")
    counts = np.stack([g.ravel() for g in grids], axis=1)
    fits = np.all(counts @ demand <= cap + 1e-9, axis=1)
    return counts[fits]


def whole_task_drfh(
    servers: pd.DataFrame,
    demands: dict[str, tuple[float, ...]],
    bounds: dict[str, int] | None = None,
) -> dict[str, float]:
    """The DRFH allocation restricted to whole tasks, solved exactly: the leximin global dominant
    shares over every placement of whole tasks on the servers.

    DRFH (Wang, Li, Liang, Sec. IV) maximises the smallest global dominant share, then the next,
    and so on (progressive filling); with divisible tasks every server is used to its bottleneck.
    Here a user's share is ``n_u · g_u`` (``n_u`` whole tasks, ``g_u = max_r d_ur / C_r`` of the
    pool's totals), and each level is an integer program: servers of one configuration are
    interchangeable, so the variables count the servers of each configuration that hold each
    packing of whole tasks (:func:`_packings`), solved by ``scipy.optimize.milp`` (HiGHS). After
    the largest smallest share ``t`` is found, every user that cannot get more than ``t`` while
    the others keep at least theirs is fixed at the least share of whole tasks at or above
    ``t``, and the rest are raised again. Each level is exact; when no user is fixed that way
    (each could exceed ``t``, but not all at once) the one whose best is lowest is fixed, a
    tie-break that can in contrived cases miss the leximin optimum above the smallest share.

    Parameters
    ----------
    servers : pandas.DataFrame
        One row per server, its capacities in the columns ``cpu`` and ``mem`` (e.g. a run's
        ``servers.parquet``).
    demands : dict
        ``{user: (cpu, mem)}`` per task.
    bounds : dict, optional
        ``{user: tasks}``: at most this many tasks of the user (its tasks present); default
        unbounded (a backlog larger than the pool).

    Returns
    -------
    dict
        ``{user: global dominant share}``.

    Raises
    ------
    RuntimeError
        When HiGHS finds no solution of a level.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    users = list(demands)
    if not users:
        return {}
    resources = ["cpu", "mem"]
    d = np.array([demands[u] for u in users], dtype=float)
    configs = servers.groupby(resources, sort=True).size()
    total = servers[resources].to_numpy(float).sum(axis=0)
    g = np.max(d / total, axis=1)
    packs = [_packings(np.asarray(c, dtype=float), d) for c in configs.index]
    n_z = sum(len(p) for p in packs)
    # tasks of each user as a linear function of the packing counts z
    tasks = np.concatenate([p.T for p in packs], axis=1).astype(float)  # users x n_z
    one_per_server = np.zeros((len(packs), n_z + 1))
    col = 0
    for k, p in enumerate(packs):
        one_per_server[k, col : col + len(p)] = 1.0
        col += len(p)
    count = configs.to_numpy(float)
    hi = np.full(n_z + 1, np.inf)
    hi[:n_z] = np.concatenate([np.full(len(p), count[k]) for k, p in enumerate(packs)])
    integrality = np.ones(n_z + 1)
    integrality[-1] = 0
    limit = np.array([np.inf if bounds is None else bounds.get(u, np.inf) for u in users])

    def solve(least: dict[int, int], objective: int | None) -> np.ndarray:
        """Every user's whole tasks in an optimal placement: at least ``least[i]`` tasks of user
        ``i``; maximising user ``objective``'s tasks, or (``None``) the smallest share of the
        users without a least count."""
        rows = [LinearConstraint(one_per_server, count, count)]
        lows = np.array([least.get(i, 0) for i in range(len(users))], dtype=float)
        rows.append(LinearConstraint(np.hstack([tasks, np.zeros((len(users), 1))]), lows, limit))
        c = np.zeros(n_z + 1)
        if objective is None:
            for i in range(len(users)):
                if i not in least:
                    row = np.append(tasks[i] * g[i], -1.0)  # share_i - t >= 0
                    rows.append(LinearConstraint(row, 0.0, np.inf))
            c[-1] = -1.0
        else:
            c[:n_z] = -tasks[objective]
        res = milp(
            c,
            constraints=rows,
            integrality=integrality,
            bounds=Bounds(0, hi),
            options={"mip_rel_gap": 0.0},
        )
        if not res.success:
            raise RuntimeError(f"whole_task_drfh: {res.message}")
        return tasks @ np.round(res.x[:n_z])

    fixed: dict[int, int] = {}  # user -> its whole tasks, once fixed
    while len(fixed) < len(users):
        free = [i for i in range(len(users)) if i not in fixed]
        placed = solve(fixed, None)
        level = min(placed[i] * g[i] for i in free)  # exact: from the integer solution
        # the least whole tasks that give each free user a share at or above the level
        need = {i: math.ceil(level / g[i] - _WHOLE_EPS) for i in free}
        least = fixed | need
        best = {i: int(np.rint(solve(least, i)[i])) for i in free}
        stuck = [i for i in free if best[i] <= need[i]]
        for i in stuck or [min(free, key=lambda i: best[i] * g[i])]:
            fixed[i] = need[i]
    return {u: float(fixed[i] * g[i]) for i, u in enumerate(users)}
