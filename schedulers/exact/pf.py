"""Proportional Fairness: ``max sum_n w_n log x_n`` (Bonald and Roberts, Section 2.3).

Heterogeneous servers and placement constraints are allowed: ``x_n = sum_l x[n, l]`` subject to
the per-server capacities (PS-DSF eq. 9), ``x[n, l] = 0`` where l cannot serve n, and
``x_n <= max_tasks``. The problem is strictly concave in the totals ``x_n``; we solve it with
SLSQP (analytic gradient) from a feasible time-shared start and then check the KKT conditions
(:func:`pf_kkt_gap`). Meant for the small and medium instances of ``fairsim solve``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import LinearConstraint, minimize

from fairsim.schedulers.exact.common import fill_idle, monopoly_tasks, serving, solve_lp
from fairsim.schedulers.exact.instance import Instance, InstanceError

#: Largest Frank-Wolfe gap (:func:`pf_kkt_gap`, relative to the sum of weights) accepted as optimal.
PF_GAP = 1e-6
#: Most variables (pairs of a user and a server that can serve it) :func:`solve_pf` takes on:
#: SLSQP keeps dense matrices of the square of this number, and its time grows with the cube
#: (measured on 2 cores: 1,000 variables did not finish in 200 s, 3,000 held 800 MB after a
#: minute, 2,000 users on 7 servers reached 11.5 GB in 50 s).
PF_MAX_VARIABLES = 1_000


def solve_pf(inst: Instance, *, ftol: float = 1e-13, maxiter: int = 2000) -> np.ndarray:
    """Proportionally fair allocation.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        The totals ``x_n`` are unique; the split over servers is one optimal split. Optimality is
        certified after the solve by :func:`pf_kkt_gap` (``solve_exact`` refuses a gap above
        :data:`PF_GAP`).

    Raises
    ------
    InstanceError
        Above :data:`PF_MAX_VARIABLES` variables, before any solve.
    """
    n_u, n_s = inst.eligible.shape
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    ok = (gamma.sum(axis=1) > 0) & (inst.max_tasks > 0)
    users, servers = np.nonzero((gamma > 0) & ok[:, None])
    out = np.zeros((n_u, n_s))
    if len(users) == 0:
        return out
    n_v = len(users)
    if n_v > PF_MAX_VARIABLES:
        raise InstanceError(
            f"pf: {n_v:,} variables (users x servers that can serve them) is more than the "
            f"{PF_MAX_VARIABLES:,} its solver takes on (SLSQP's memory grows with the square, "
            "its time with the cube); use fewer users or servers, or an online heuristic "
            "(pf --online)"
        )
    # scale each variable by the most tasks it can hold, so that it lies in [0, 1]
    scale = np.minimum(gamma[users, servers], inst.max_tasks[users])
    per_server = np.bincount(servers, minlength=n_s)
    y0 = 0.5 / per_server[servers]
    n_r = inst.capacity.shape[1]
    rows = []
    ub = []
    for srv in range(n_s):
        for r in range(n_r):
            sel = (servers == srv) & (inst.demand[users, r] > 0)
            if not sel.any():
                continue
            row = np.zeros(n_v)
            row[sel] = inst.demand[users[sel], r] * scale[sel] / inst.capacity[srv, r]
            rows.append(row)
            ub.append(1.0)
    cons = [LinearConstraint(np.array(rows), -np.inf, np.array(ub))]
    idx = np.unique(users)
    bounded = [n for n in idx if np.isfinite(inst.max_tasks[n])]
    if bounded:
        m = np.zeros((len(bounded), n_v))
        for k, n in enumerate(bounded):
            m[k, users == n] = scale[users == n] / inst.max_tasks[n]
        cons.append(LinearConstraint(m, -np.inf, 1.0))
        y0 = y0 * min(1.0, 0.5 / max(1.0, float((m @ y0).max())))
    w = inst.weight
    onehot = np.zeros((n_u, n_v))
    onehot[users, np.arange(n_v)] = scale

    def f(y: np.ndarray) -> tuple[float, np.ndarray]:
        tot = np.maximum(onehot @ y, 1e-300)
        val = -float((w[idx] * np.log(tot[idx])).sum())
        grad = -(w / tot) @ onehot
        return val, grad

    y = y0
    # SLSQP may stop on a line-search failure: restart from where it stopped. It may also fail
    # at its start ("Inequality constraints incompatible" in its first subproblem, from the
    # feasible y0 of tests/regression/test_exact_checker.py::PF_START): restarting there fails
    # the same way, so the start moves halfway to 0 (still feasible: the rows are homogeneous)
    for _ in range(6):
        res = minimize(
            f,
            y,
            jac=True,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n_v,
            constraints=cons,
            options={"ftol": ftol, "maxiter": maxiter},
        )
        y = np.clip(res.x, 0.0, 1.0)
        out[users, servers] = y * scale
        if pf_kkt_gap(inst, out) <= 1e-9:
            break
        if res.nit <= 1:
            y = 0.5 * y
    # raising no user's log, use what SLSQP's tolerance left idle
    return fill_idle(inst, out, what="pf fill LP")


def pf_kkt_gap(inst: Instance, x: np.ndarray) -> float:
    """Relative optimality gap of ``x`` for PF, by the LP of the linearised objective.

    For a concave objective, ``f(x*) - f(x) <= grad f(x) . (z - x)`` maximised over feasible z
    (Frank-Wolfe gap). Returns that bound divided by ``sum_n w_n``; 0 at the optimum. The LP is
    solved by :func:`~fairsim.schedulers.exact.common.solve_lp` (rescaled); the bound is unit-free
    (``w_n z_n / x_n``).
    """
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    users, servers = np.nonzero((gamma > 0) & (inst.max_tasks > 0)[:, None])
    if len(users) == 0:
        return 0.0
    tot = x.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(tot > 0, inst.weight / np.where(tot > 0, tot, 1.0), 0.0)
    if (tot[np.unique(users)] <= 0).any():
        return np.inf  # a servable user with no task: log(0), infinitely far from the optimum
    n_v = len(users)
    n_r = inst.capacity.shape[1]
    rows = (servers[:, None] * n_r + np.arange(n_r)[None, :]).ravel()
    cols = np.repeat(np.arange(n_v), n_r)
    vals = inst.demand[users].ravel()
    keep = vals > 0
    a_cap = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(rows.max() + 1, n_v))
    b_cap = inst.capacity.ravel()[: rows.max() + 1]
    bounded = np.flatnonzero(np.isfinite(inst.max_tasks))
    a_mt = sparse.csr_matrix((np.ones(n_v), (users, np.arange(n_v))), shape=(len(tot), n_v))
    res = solve_lp(
        -g[users],
        sparse.vstack([a_cap, a_mt[bounded]]).tocsr(),
        np.r_[b_cap, inst.max_tasks[bounded]],
        scale=np.minimum(gamma[users, servers], inst.max_tasks[users]),
        upper=np.minimum(gamma[users, servers], inst.max_tasks[users]),
        what="pf optimality-gap LP",
    )
    assert res is not None
    gap = -res.fun - float(g @ tot)
    return max(0.0, gap) / float(inst.weight.sum())
