"""Proportional Fairness: ``max sum_n w_n log x_n`` (Bonald and Roberts, Section 2.3).

Heterogeneous servers and placement constraints are allowed: ``x_n = sum_l x[n, l]`` subject to
the per-server capacities (PS-DSF eq. 9), ``x[n, l] = 0`` where l cannot serve n, and
``x_n <= max_tasks``. The problem is strictly concave in the totals ``x_n``; we solve it with
SLSQP (analytic gradient) from a feasible time-shared start and then check the KKT conditions
(:func:`pf_kkt_gap`). Meant for the small and medium instances of ``fairsim solve``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import LinearConstraint, minimize

from schedulers.exact.common import monopoly_tasks, serving
from schedulers.instance import Instance, InstanceError


def solve_pf(inst: Instance, *, ftol: float = 1e-13, maxiter: int = 2000) -> np.ndarray:
    """Proportionally fair allocation.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        The totals ``x_n`` are unique; the split over servers is one optimal split.

    Raises
    ------
    InstanceError
        If the optimiser does not converge.
    """
    n_u, n_s = inst.eligible.shape
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    ok = (gamma.sum(axis=1) > 0) & (inst.max_tasks > 0)
    users, servers = np.nonzero((gamma > 0) & ok[:, None])
    out = np.zeros((n_u, n_s))
    if len(users) == 0:
        return out
    n_v = len(users)
    # scale variables by gamma so every variable is a time fraction in [0, 1]
    scale = gamma[users, servers]
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
    gap = np.inf
    message = ""
    for _ in range(6):  # SLSQP may stop on a line-search failure: restart from where it stopped
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
        message = str(res.message)
        gap = pf_kkt_gap(inst, out)
        if gap <= 1e-9:
            break
    if gap > 1e-6:  # certified by the Frank-Wolfe gap, whatever SLSQP reported
        raise InstanceError(f"pf: optimiser did not converge ({message}; optimality gap {gap:.1e})")
    return out


def pf_kkt_gap(inst: Instance, x: np.ndarray) -> float:
    """Relative optimality gap of ``x`` for PF, by the LP of the linearised objective.

    For a concave objective, ``f(x*) - f(x) <= grad f(x) . (z - x)`` maximised over feasible z
    (Frank-Wolfe gap). Returns that bound divided by ``sum_n w_n``; 0 at the optimum.
    """
    from scipy.optimize import linprog

    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    users, servers = np.nonzero(gamma > 0)
    if len(users) == 0:
        return 0.0
    tot = x.sum(axis=1)
    g = np.where(tot > 0, inst.weight / np.maximum(tot, 1e-300), 0.0)
    n_v = len(users)
    a_ub, b_ub = [], []
    for srv in range(inst.capacity.shape[0]):
        for r in range(inst.capacity.shape[1]):
            sel = (servers == srv) & (inst.demand[users, r] > 0)
            if sel.any():
                row = np.zeros(n_v)
                row[sel] = inst.demand[users[sel], r]
                a_ub.append(row)
                b_ub.append(inst.capacity[srv, r])
    for n in range(inst.demand.shape[0]):
        if np.isfinite(inst.max_tasks[n]):
            row = np.zeros(n_v)
            row[users == n] = 1.0
            a_ub.append(row)
            b_ub.append(inst.max_tasks[n])
    res = linprog(-g[users], A_ub=np.array(a_ub), b_ub=b_ub, bounds=(0, None), method="highs")
    gap = -res.fun - float(g @ tot)
    return max(0.0, gap) / float(inst.weight.sum())
