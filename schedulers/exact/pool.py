"""Mechanisms defined on one pooled server: DRF, Asset Fairness and Bottleneck Max Fairness.

The cluster is pooled (``C_r = sum_l c[l, r]``) and placement constraints are ignored, as in the
single-server papers these mechanisms come from. The result has one column, the pool.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from fairsim.schedulers.exact.common import solve_lp, waterfill
from fairsim.schedulers.exact.instance import Instance, InstanceError

#: Most bottleneck mappings :func:`solve_bmf` will enumerate.
BMF_MAX_MAPPINGS = 200_000


def _more_than(sizes: list[int], limit: int) -> bool:
    """Whether ``prod(sizes) > limit``, in Python ints and stopping once above ``limit`` (the
    product of 1,100 users' two options, 2**1100, overflows a float)."""
    if 0 in sizes:
        return False
    count = 1
    for n in sizes:
        count *= n
        if count > limit:
            return True
    return False


def _mapping_count(sizes: list[int]) -> str:
    """The number of bottleneck mappings, ``prod(sizes)``, as text: exact up to 18 digits,
    else ``about 1.36e+331`` (from the sum of the logarithms: the product itself may have
    more digits than Python prints)."""
    log = math.fsum(math.log10(n) for n in sizes)
    if log < 18:
        return str(math.prod(sizes))
    exp = math.floor(log)
    return f"about {10 ** (log - exp):.2f}e+{exp}"


#: Mechanisms computed on one pooled server (output has a single ``"pool"`` column).
POOLED = frozenset({"drf", "af", "bmf", "hdrf"})


def pooled(inst: Instance) -> Instance:
    """The one-server, unconstrained instance of the pooled mechanisms."""
    n_u = len(inst.user_ids)
    return replace(
        inst,
        server_ids=("pool",),
        capacity=inst.capacity.sum(axis=0)[None, :],
        eligible=np.ones((n_u, 1), dtype=bool),
    )


def refuse_constraints(name: str, inst: Instance) -> None:
    """Refuse placement constraints, which a pooled mechanism cannot honour.

    Raises
    ------
    InstanceError
        If some user's ``eligible`` leaves out a server: the pooled mechanisms (``drf``, ``af``,
        ``bmf``, ``hdrf``) are defined on one server (Ghodsi et al.; Bonald and Roberts;
        Bhattacharya et al.), and silently dropping the constraint would answer a different
        question.
    """
    bad = np.flatnonzero(~inst.eligible.all(axis=1))
    if bad.size:
        n = int(bad[0])
        k, n_s = int(inst.eligible[n].sum()), inst.eligible.shape[1]
        raise InstanceError(
            f"users[{n}].eligible: {k} of {n_s} servers: {name} pools the cluster into one server "
            "and cannot honour placement constraints (use drfh, c-drfh, tsf, psdsf, pf or lmm-mms)"
        )


def _pool(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Pooled capacity and the users the pool can serve (every demanded resource present)."""
    cap = inst.capacity.sum(axis=0)
    ok = ~((inst.demand > 0) & (cap <= 0)).any(axis=1) & (inst.max_tasks > 0)
    return cap, ok


def _share_fill(name: str, inst: Instance) -> np.ndarray:
    """Progressive filling of the weighted pooled share of ``name`` (:func:`pooled_share_per_task`)
    on the pooled cluster, shape (n_users, 1); placement constraints refused."""
    refuse_constraints(name, inst)
    per_task_share = pooled_share_per_task(name, inst)
    cap, ok = _pool(inst)
    with np.errstate(divide="ignore"):
        rate = np.where(ok & (per_task_share > 0), inst.weight / per_task_share, 0.0)
    return waterfill(inst.demand, cap, rate, upper=inst.max_tasks)[:, None]


def solve_drf(inst: Instance) -> np.ndarray:
    """DRF on the pooled cluster (Ghodsi et al., NSDI 2011, Sections 4-5; weighted, bounded).

    Progressive filling of the weighted dominant share ``x_n max_r d[n, r] / C_r / w_n``; a user
    stops when it has ``max_tasks`` tasks or a resource it demands saturates. Resources a user does
    not demand (zero entries) never stop it.

    Returns
    -------
    ndarray, shape (n_users, 1)
        The tasks of every user, on the one pooled server.

    Raises
    ------
    InstanceError
        For placement constraints (:func:`refuse_constraints`).
    """
    return _share_fill("drf", inst)


def solve_af(inst: Instance) -> np.ndarray:
    """Asset Fairness on the pooled cluster (Ghodsi et al., NSDI 2011, Section 5.1): as
    :func:`solve_drf` (same result shape and errors), with the weighted aggregate share
    ``x_n sum_r d[n, r] / C_r / w_n`` in place of the dominant share."""
    return _share_fill("af", inst)


def pooled_share_per_task(name: str, inst: Instance) -> np.ndarray:
    """Share of one task on the pool: dominant ``max_r d[n, r] / C_r`` (``drf``) or aggregate
    ``sum_r d[n, r] / C_r`` (``af``), ``C`` the pooled capacity.

    Returns
    -------
    ndarray, shape (n_users,)
    """
    cap, _ = _pool(inst)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(inst.demand > 0, inst.demand / cap, 0.0)
    return frac.max(axis=1) if name == "drf" else frac.sum(axis=1)


def bmf_conditions(inst: Instance, x: np.ndarray, tol: float = 1e-7) -> bool:
    """Whether pooled task counts ``x`` (shape (n_users,)) are bottleneck max fair.

    Bonald and Roberts, Section 2.4: feasible, and every user (below its task bound, and servable)
    has a saturated resource j on which its weighted share ``x_n a[n, j] / w_n`` is maximal.
    """
    cap, ok = _pool(inst)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(ok[:, None] & (inst.demand > 0), inst.demand / cap, 0.0)
    load = x @ a
    if (load > 1 + tol).any() or (x > inst.max_tasks * (1 + tol)).any():
        return False
    sh = x[:, None] * a / inst.weight[:, None]
    top = sh.max(axis=0)
    for n in np.nonzero(ok)[0]:
        if x[n] >= inst.max_tasks[n] * (1 - tol):
            continue
        j = (a[n] > 0) & (load >= 1 - tol) & (sh[n] >= top * (1 - tol))
        if not j.any():
            return False
    return True


def solve_bmf(inst: Instance) -> np.ndarray:
    """Bottleneck Max Fairness on the pooled cluster (Bonald and Roberts, Sections 2.4 and 3.3).

    Enumerates the mappings of users to potential bottlenecks (Section 3.3; a user with a finite
    ``max_tasks`` may instead be "satisfied"); each mapping is an LP feasibility problem: every
    resource with a mapped user is saturated and the mapped users' weighted shares of it are
    maximal. With three or more resources several allocations can qualify (the paper's continuum
    example); we return the one that maximises the smallest weighted task count
    ``min_n x_n / w_n`` and, among those, the total number of tasks ``sum_n x_n`` -- the BMF
    allocation closest to equal treatment, and unique in the two-resource case.

    Returns
    -------
    ndarray, shape (n_users, 1)
        The BMF allocation (tasks per user).

    Raises
    ------
    InstanceError
        If there are more than :data:`BMF_MAX_MAPPINGS` mappings to enumerate, or for placement
        constraints (:func:`refuse_constraints`).
    """
    refuse_constraints("bmf", inst)
    cap, ok = _pool(inst)
    n_u, n_r = inst.demand.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(ok[:, None] & (inst.demand > 0), inst.demand / cap, 0.0)
    users = np.nonzero(ok)[0]
    options = []
    for n in users:
        opts: list[int] = [int(r) for r in np.nonzero(a[n] > 0)[0]]
        if np.isfinite(inst.max_tasks[n]):
            opts.append(-1)
        options.append(opts)
    sizes = [len(o) for o in options]
    if _more_than(sizes, BMF_MAX_MAPPINGS):
        raise InstanceError(
            f"bmf: {_mapping_count(sizes)} bottleneck mappings to enumerate (limit "
            f"{BMF_MAX_MAPPINGS}); use fewer users or resources"
        )
    k = len(users)
    if k == 0:
        return np.zeros((n_u, 1))
    best: tuple[float, float] | None = None
    best_x = np.zeros(n_u)
    w = inst.weight[users]
    aw = a[users] / w[:, None]
    mt = inst.max_tasks[users]
    # natural units: the most tasks a user can run on the pool, and the level min_p x_p / w_p
    unit = np.minimum(1.0 / a[users].max(axis=1), mt)
    t_unit = float((unit / w).min())
    for mapping in itertools.product(*options):
        a_ub, b_ub, a_eq, b_eq = [], [], [], []
        for j in range(n_r):
            a_ub.append(a[users, j])
            b_ub.append(1.0)
        for p, j in enumerate(mapping):
            if j == -1:
                row = np.zeros(k)
                row[p] = 1.0
                a_eq.append(row)
                b_eq.append(mt[p])
                continue
            a_eq.append(a[users, j])
            b_eq.append(1.0)
            for q in range(k):  # share of q on j <= share of p on j
                if q != p and aw[q, j] > 0:
                    row = np.zeros(k)
                    row[q] = aw[q, j]
                    row[p] = -aw[p, j]
                    a_ub.append(row)
                    b_ub.append(0.0)
        # stage 1: max t with x_p / w_p >= t
        a1 = np.hstack([np.array(a_ub), np.zeros((len(a_ub), 1))])
        fair = np.hstack([-np.diag(1 / w), np.ones((k, 1))])
        res = solve_lp(
            np.r_[np.zeros(k), -1.0],
            np.vstack([a1, fair]),
            np.r_[b_ub, np.zeros(k)],
            a_eq=np.hstack([np.array(a_eq), np.zeros((len(a_eq), 1))]),
            b_eq=np.array(b_eq),
            scale=np.r_[unit, t_unit],
            upper=np.r_[mt, np.inf],
            what="bmf LP",
            infeasible_ok=True,
        )
        if res is None:
            continue
        t = float(res.x[-1])
        if best is not None and t < best[0] * (1 - 1e-9):
            continue
        res2 = solve_lp(
            -np.ones(k),
            np.vstack([np.array(a_ub), -np.diag(1 / w)]),
            np.r_[b_ub, -np.full(k, t * (1 - 1e-9))],
            a_eq=np.array(a_eq),
            b_eq=np.array(b_eq),
            scale=unit,
            upper=mt,
            what="bmf LP",
            infeasible_ok=True,
        )
        if res2 is None:
            continue
        key = (t, float(res2.x.sum()))
        if (
            best is None
            or key[0] > best[0] * (1 + 1e-9)
            or (key[0] >= best[0] * (1 - 1e-9) and key[1] > best[1] * (1 + 1e-9))
        ):
            best = key
            best_x = np.zeros(n_u)
            best_x[users] = res2.x
    if best is None and k:
        raise InstanceError("bmf: no bottleneck max fair allocation found")
    return best_x[:, None]
