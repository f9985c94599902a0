"""Shared pieces of the exact (divisible-task) allocators.

Notation follows the PS-DSF paper (Khamse-Ashari et al., Section III): ``c[l, r]`` is the capacity
of resource r on server l, ``d[n, r]`` the per-task demand of user n, ``gamma[n, l]`` (eq. 7) the
tasks user n runs when it monopolises server l.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

import highspy
import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from fairsim.schedulers.exact.instance import Instance, NumericalRangeError

#: Relative tolerance used when deciding that a resource is saturated.
TOL = 1e-9
#: LPs with at most this many matrix cells are rescaled as dense arrays (less overhead).
DENSE_CELLS = 40_000
#: :func:`fill_idle` runs when a user still fits this fraction of ``gamma[n, l]`` somewhere.
FILL_TOL = 1e-7
#: Relative slack of a user's task count that :func:`fill_idle` may give up.
FILL_SLACK = 0.0


def serving(inst: Instance) -> np.ndarray:
    """Servers that can actually serve each user.

    A server serves user n when ``eligible[n, l]`` holds and it has a positive capacity of every
    resource the user demands (the ``fairsim solve`` contract, docs/mechanisms.md: "a server
    with capacity 0 for a resource a user needs cannot serve that user"); this is
    ``delta[n, l] = 1`` of the PS-DSF paper, eq. 7.

    Returns
    -------
    ndarray of bool, shape (n_users, n_servers)
    """
    needs = inst.demand > 0  # (n, R)
    has = inst.capacity > 0  # (L, R)
    if has.all():  # no server lacks a resource
        return np.array(inst.eligible, dtype=bool)
    # server l lacks a needed resource of user n
    lacks = (needs[:, None, :] & ~has[None, :, :]).any(axis=2)
    return inst.eligible & ~lacks


def monopoly_tasks(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``gamma[n, l] = min_r c[l, r] / d[n, r]`` over demanded resources (PS-DSF eq. 7, delta=1):
    :func:`tasks_that_fit` of each user's demand in each server's capacity, with ``0`` (not
    ``inf``) for an all-zero demand.

    Parameters
    ----------
    capacity : ndarray, shape (n_servers, n_resources)
    demand : ndarray, shape (n_users, n_resources)

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        ``0`` where a demanded resource has zero capacity.
    """
    g = tasks_that_fit(demand, capacity)
    return np.where(np.isfinite(g), g, 0.0)


def tasks_that_fit(demand: np.ndarray, bundle: np.ndarray) -> np.ndarray:
    """Divisible tasks of each demand vector that a bundle holds: ``min_{r: d_r > 0} b_r / d_r``.

    Parameters
    ----------
    demand : ndarray, shape (n, n_resources)
    bundle : ndarray, shape (m, n_resources)

    Returns
    -------
    ndarray, shape (n, m)
        ``inf`` for an all-zero demand.

    Notes
    -----
    One ``(n, m)`` pass per resource (numpy reduces a short last axis slowly); the same divisions
    and minima as the ``(n, m, n_resources)`` formula, so the same numbers.
    """
    demand = np.asarray(demand, dtype=float)
    bundle = np.asarray(bundle, dtype=float)
    out = np.full((demand.shape[0], bundle.shape[0]), np.inf)
    q = np.empty_like(out)
    with np.errstate(divide="ignore", invalid="ignore"):
        for r in range(demand.shape[1]):
            pos = demand[:, r] > 0
            if pos.all():
                np.divide(bundle[None, :, r], demand[:, r, None], out=q)
            elif pos.any():  # inf where the user does not demand r: no bound
                q.fill(np.inf)
                np.divide(bundle[None, :, r], demand[:, r, None], out=q, where=pos[:, None])
            else:
                continue
            np.minimum(out, q, out=out)
    return out


def room(inst: Instance, x: np.ndarray, *, rounding: bool = False) -> np.ndarray:
    """Tasks of user n that still fit on server l next to allocation ``x`` ("nothing more fits").

    ``min_r (c[l, r] - sum_m d[m, r] x[m, l]) / d[n, r]`` over the resources n demands, clipped
    at 0; 0 where l cannot serve n or n holds ``max_tasks`` tasks.

    Parameters
    ----------
    inst : Instance
    x : ndarray, shape (n_users, n_servers)
    rounding : bool
        Count as used the bound of the rounding error of the free amount itself,
        ``(n_users + 1) · eps · (c[l, r] + sum_m d[m, r] x[m, l])``: a saturated resource then
        shows no room. Without it, one ulp left of a resource of which a user needs very little
        reads as many of its tasks (1 ulp of 31.6 over a demand of 1e-3 is 3.6e-12 tasks).

    Returns
    -------
    ndarray, shape (n_users, n_servers)
    """
    use = x.T @ inst.demand  # (L, R)
    free = inst.capacity - use
    if rounding:
        free = free - (inst.demand.shape[0] + 1) * np.finfo(float).eps * (inst.capacity + use)
    free = np.maximum(free, 0.0)
    fit = tasks_that_fit(inst.demand, free)
    left = np.maximum(inst.max_tasks - x.sum(axis=1), 0.0)
    return np.where(serving(inst), np.minimum(fit, left[:, None]), 0.0)


def fill_idle(inst: Instance, x: np.ndarray, *, what: str = "fill LP") -> np.ndarray:
    """Use capacity an LP-based allocation left idle, without lowering any user's task count.

    Tasks whose share differs from another user's by less than an LP's precision (a user with
    1e9 tasks on a large server and 4 on a small one) can leave a server idle in the optimum of a
    solver with absolute tolerances. When some user still fits more than :data:`FILL_TOL` of
    ``gamma[n, l]`` on a server that serves it (:func:`room`), one LP maximises the total number
    of tasks in each variable's natural unit (``sum x[n, l] / min(gamma[n, l], max_tasks[n])``)
    subject to the capacities, the task bounds and ``x_n >= (1 - FILL_SLACK)`` times its current
    value, so that nothing more fits. Otherwise ``x`` is returned unchanged.

    Parameters
    ----------
    inst : Instance
    x : ndarray, shape (n_users, n_servers)
    what : str
        Names the LP in error messages.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
    """
    serve = serving(inst)
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    if not (room(inst, x) > FILL_TOL * gamma)[serve].any():
        return x
    users, servers = np.nonzero(serve & (gamma > 0) & (inst.max_tasks > 0)[:, None])
    n_u, n_v = len(inst.user_ids), len(users)
    unit = np.minimum(gamma[users, servers], inst.max_tasks[users])
    n_r = inst.capacity.shape[1]
    rows = (servers[:, None] * n_r + np.arange(n_r)[None, :]).ravel()
    cols = np.repeat(np.arange(n_v), n_r)
    vals = inst.demand[users].ravel()
    keep = vals > 0
    cap_a = sparse.csr_matrix(
        (vals[keep], (rows[keep], cols[keep])), shape=(inst.capacity.size, n_v)
    )
    tasks = sparse.csr_matrix((np.ones(n_v), (users, np.arange(n_v))), shape=(n_u, n_v))
    tot = x.sum(axis=1)
    bounded = np.flatnonzero(np.isfinite(inst.max_tasks))
    res = solve_lp(
        -1.0 / unit,
        sparse.vstack([cap_a, -tasks, tasks[bounded]]).tocsr(),
        np.concatenate([inst.capacity.ravel(), -tot * (1 - FILL_SLACK), inst.max_tasks[bounded]]),
        scale=unit,
        upper=unit,
        method="highs-ipm",
        what=what,
        infeasible_ok=True,
    )
    if res is None:  # the input was not feasible to begin with: left to the check
        return x
    out = np.zeros_like(x)
    out[users, servers] = np.maximum(res.x, 0.0)
    return out


def _per_capacity(demand: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Demands in units of each resource's capacity and the capacities as 1 (0 where a resource
    is absent; a demand of it then counts 1), so that the fillers' tolerances are relative."""
    cap = np.asarray(capacity, dtype=float)
    has = cap > 0
    dem = np.where(has, demand / np.where(has, cap, 1.0), (demand > 0).astype(float))
    return dem, has.astype(float)


def _freeze(
    x: np.ndarray,
    cur: np.ndarray,
    active: np.ndarray,
    demand: np.ndarray,
    capacity: np.ndarray,
    used: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray:
    """One saturation of progressive filling, in place: the still-rising users that demand a
    saturated resource (or reached ``upper``) keep their count ``cur`` in ``x`` and leave
    ``active``; returns the usage of the frozen users. ``demand`` and ``capacity`` are in units of
    capacity (:func:`_per_capacity`)."""
    usage = used + (cur[active, None] * demand[active]).sum(axis=0)
    full = usage >= capacity - TOL
    freeze = active & ((demand[:, full] > 0).any(axis=1) | (cur >= upper))
    if not freeze.any():  # numerical safety: freeze the users of the tightest resource
        r = int(np.argmax(usage - capacity))
        freeze = active & (demand[:, r] > 0)
    x[freeze] = cur[freeze]
    active &= ~freeze
    return used + (x[freeze, None] * demand[freeze]).sum(axis=0)


def waterfill(
    demand: np.ndarray,
    capacity: np.ndarray,
    rate: np.ndarray,
    *,
    base: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> np.ndarray:
    """Exact progressive filling (water-filling) on one pool of divisible resources.

    A common level ``L`` rises from 0; user n holds ``clip(L * rate[n] - base[n], 0, upper[n])``
    tasks. When a resource saturates, every still-rising user that demands it is frozen (DRF's
    progressive filling, Ghodsi et al. NSDI 2011, Section 4; with ``base`` it is the per-server
    update of PS-DSF, Section III-C). The level is followed exactly from breakpoint to breakpoint
    (the usage is piecewise linear in ``L``), so no step size is involved.

    Parameters
    ----------
    demand : ndarray, shape (n_users, n_resources)
        Per-task demand; rows of users with ``rate == 0`` are ignored (they get 0).
    capacity : ndarray, shape (n_resources,)
    rate : ndarray, shape (n_users,)
        Tasks per unit of level (for DRF ``w_n / D_n``).
    base : ndarray, shape (n_users,), optional
        Level offset: a user starts receiving tasks once ``L * rate >= base`` (default 0).
    upper : ndarray, shape (n_users,), optional
        Most tasks a user may receive here (default unbounded).

    Returns
    -------
    ndarray, shape (n_users,)
    """
    demand, capacity = _per_capacity(demand, capacity)
    n = demand.shape[0]
    base = np.zeros(n) if base is None else np.asarray(base, dtype=float)
    upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
    x = np.zeros(n)
    active = (rate > 0) & (upper > 0)
    used_fixed = np.zeros(capacity.shape[0])
    level = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        start = np.where(rate > 0, base / rate, np.inf)
        stop = np.where(rate > 0, (base + upper) / rate, np.inf)
    for _ in range(4 * n + 4):
        if not active.any():
            break
        # breakpoints strictly above the current level
        bps = np.concatenate([start[active], stop[active]])
        bps = np.unique(bps[(bps > level) & np.isfinite(bps)])
        seg_ends = [*bps.tolist(), np.inf]
        saturated_at = None
        for end in seg_ends:
            # usage is linear on [level, end]: u(L) = u0 + slope * L on running users
            mid = level + 1.0 if not np.isfinite(end) else 0.5 * (level + end)
            running = active & (mid * rate > base) & (mid * rate < base + upper)
            capped = active & (mid * rate >= base + upper)
            const = used_fixed + (upper[capped, None] * demand[capped]).sum(axis=0)
            const = const - (base[running, None] * demand[running]).sum(axis=0)
            slope = (rate[running, None] * demand[running]).sum(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                hit = np.where(slope > 0, (capacity - const) / slope, np.inf)
            hit = np.maximum(hit, level)
            lstar = float(hit.min())
            if np.isfinite(lstar) and lstar <= end:
                saturated_at = lstar
                break
            level = end
            if not np.isfinite(end):
                break
        if saturated_at is None:
            # nothing saturates: every active user reached its upper bound
            x[active] = upper[active]
            break
        level = saturated_at
        cur = np.clip(level * rate - base, 0.0, upper)
        used_fixed = _freeze(x, cur, active, demand, capacity, used_fixed, upper)
    return x


def waterfill_bounded(
    demand: np.ndarray, capacity: np.ndarray, rate: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """:func:`waterfill` without ``base``, in ``O(R n log n)``: breakpoints sorted, not scanned.

    The same progressive filling: a common level ``L`` rises from 0, user n holds
    ``min(L * rate[n], upper[n])`` tasks, and when a resource saturates every still-rising user that
    demands it is frozen. Between two consecutive task bounds (users sorted by the level
    ``upper[n] / rate[n]`` at which they reach theirs) the usage of every resource is linear in
    ``L``; prefix sums of the capped users' usage and suffix sums of the rising users' rates give,
    for every such segment at once, the level at which each resource would saturate, and the first
    segment that contains its own saturation level is the one. A round ends at a saturation and
    freezes the users of the saturated resources, none of which any later round sees again: at most
    ``n_resources + 1`` rounds. :func:`waterfill` scans the breakpoints one by one (``O(n)`` numpy
    calls for ``n`` bounded users); the answers agree to rounding
    (``tests/properties/test_lex_fast.py``).

    Parameters
    ----------
    demand : ndarray, shape (n_users, n_resources)
    capacity : ndarray, shape (n_resources,)
    rate : ndarray, shape (n_users,)
        Tasks per unit of level; users with ``rate <= 0`` get 0.
    upper : ndarray, shape (n_users,)
        Most tasks of each user (``inf`` for none).

    Returns
    -------
    ndarray, shape (n_users,)
    """
    dem, capn = _per_capacity(demand, capacity)
    rate = np.asarray(rate, dtype=float)
    upper = np.asarray(upper, dtype=float)
    n, n_r = dem.shape
    x = np.zeros(n)
    active = (rate > 0) & (upper > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        stop = np.where(active, upper / np.where(active, rate, 1.0), np.inf)
    used = np.zeros(n_r)
    level = 0.0
    for _ in range(n_r + 2):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        order = idx[np.argsort(stop[idx], kind="stable")]
        st = stop[order]
        fin = np.isfinite(st)
        # segment i (0..k): level from st[i-1] (or the current level) to st[i] (or inf); users
        # order[:i] are capped in it, order[i:] rise
        capped = np.where(fin, upper[order], 0.0)[:, None] * dem[order]
        prefix = np.vstack([np.zeros(n_r), np.cumsum(capped, axis=0)])
        slope_each = rate[order, None] * dem[order]
        suffix = np.vstack([np.cumsum(slope_each[::-1], axis=0)[::-1], np.zeros(n_r)])
        start = np.r_[level, st]
        end = np.r_[st, np.inf]
        with np.errstate(divide="ignore", invalid="ignore"):
            hit = np.where(suffix > 0, (capn - used - prefix) / suffix, np.inf)
        first = hit.min(axis=1)
        valid = (first <= end) & np.isfinite(first) & np.isfinite(start)
        if not valid.any():
            # nothing saturates: every active user reaches its upper bound
            x[idx] = upper[idx]
            break
        i = int(np.argmax(valid))
        level = max(float(first[i]), float(start[i]), level)
        cur = np.minimum(level * rate, upper)
        used = _freeze(x, cur, active, dem, capn, used, upper)
    return x


@dataclass(frozen=True)
class LPResult:
    """Optimum of :func:`solve_lp`, in the caller's (unscaled) units.

    Attributes
    ----------
    x : ndarray, shape (n_vars,)
    fun : float
        Objective value ``c @ x``.
    ineq_marginals : ndarray, shape (n_ub_rows,)
        Sensitivity of the objective to each ``b_ub`` entry (scipy's ``ineqlin.marginals``
        convention: ``<= 0`` when minimising); 0 for rows dropped as redundant.
    """

    x: np.ndarray
    fun: float
    ineq_marginals: np.ndarray


def _row_scaled(
    a: sparse.csr_matrix | np.ndarray, b: np.ndarray, upper: np.ndarray | None
) -> tuple[sparse.csr_matrix | np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Divide each row by its largest coefficient; drop rows that can never bind."""
    dense = isinstance(a, np.ndarray)
    if a.shape[1] == 0:
        absmax = np.zeros(len(b))
    elif dense:
        absmax = np.abs(a).max(axis=1)
    else:
        absmax = np.asarray(abs(a).max(axis=1).todense()).ravel()
    keep = absmax > 0
    if upper is not None:
        # the largest value a row can reach with 0 <= y <= upper; rows below b are redundant
        pos = np.maximum(a, 0) if isinstance(a, np.ndarray) else a.maximum(0)
        inf = ~np.isfinite(upper)
        finite_ub = np.where(inf, 0.0, upper)
        if dense:
            unbounded = (pos[:, inf] != 0).any(axis=1)
        else:
            unbounded = np.asarray((pos[:, inf] != 0).sum(axis=1)).ravel() > 0
        reach = np.asarray(pos @ finite_ub).ravel()
        keep &= unbounded | (reach > b)
    rows = np.flatnonzero(keep)
    r = absmax[rows]
    scaled = a[rows] / r[:, None] if dense else sparse.diags(1.0 / r) @ a[rows]
    return scaled, b[rows] / r, rows, r


_LOCAL = threading.local()


def _forget_highs() -> None:
    """Drop the forking thread's cached HiGHS instance in a forked child (it builds its own)."""
    _LOCAL.__dict__.pop("highs", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_highs)


def _highs() -> highspy.Highs:
    """This thread's HiGHS instance (highspy), with its console output off.

    ``highspy.Highs()`` prints HiGHS's banner to the process's standard output while it is
    constructed, before its ``output_flag`` can be set (``fairsim solve`` writes JSON there): file
    descriptor 1 points to the null device during the construction only (HiGHS flushes its log
    line), then ``output_flag`` is false for every later call. One instance per thread is kept:
    options are set on every solve and each model replaces the previous one.
    """
    h: highspy.Highs | None = getattr(_LOCAL, "highs", None)
    if h is not None:
        return h
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no standard output to protect (closed, or no descriptor)
        saved = -1
    null = os.open(os.devnull, os.O_WRONLY) if saved >= 0 else -1
    try:
        if saved >= 0:
            os.dup2(null, 1)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    finally:
        if saved >= 0:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
    _LOCAL.highs = h
    return h


def _csc(a: sparse.spmatrix | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a`` in compressed sparse columns: ``(start, index, value)``, explicit zeros dropped,
    row indices ascending in each column."""
    if isinstance(a, np.ndarray):  # column by column, rows ascending
        at = np.asarray(a, dtype=float).T
        nz = at != 0
        _, index = np.nonzero(nz)
        start = np.zeros(at.shape[0] + 1, dtype=np.int64)
        np.cumsum(nz.sum(axis=1), out=start[1:])
        return start, index, at[nz]
    out = sparse.csc_array(a)
    out.eliminate_zeros()
    out.sort_indices()
    return out.indptr, out.indices, out.data


def _run_highs(
    cost: np.ndarray,
    a_ub: sparse.spmatrix | np.ndarray | None,
    b_ub: np.ndarray,
    a_eq: sparse.spmatrix | np.ndarray | None,
    b_eq: np.ndarray | None,
    upper: np.ndarray,
    method: str,
    presolve: bool,
) -> tuple[int, str, np.ndarray, float, np.ndarray]:
    """``min cost @ y`` s.t. ``a_ub y <= b_ub``, ``a_eq y = b_eq``, ``0 <= y <= upper`` by HiGHS
    through highspy: the model of ``scipy.optimize.linprog(method=method)`` (rows ``a_ub`` then
    ``a_eq``, dual simplex or interior point with the same options), without linprog's set-up.

    Returns
    -------
    (status, message, y, objective, row duals of the ``a_ub`` rows)
        ``status`` as linprog's: 0 optimal, 2 infeasible, 4 anything else.
    """
    n = len(cost)
    blocks = [m for m in (a_ub, a_eq) if m is not None]
    if len(blocks) == 1:
        stacked = blocks[0]
    elif all(isinstance(m, np.ndarray) for m in blocks):
        stacked = np.vstack(blocks)
    else:
        stacked = sparse.vstack(blocks)
    start, index, value = _csc(stacked) if blocks else _csc(np.zeros((0, n)))
    n_rows = stacked.shape[0] if blocks else 0
    n_ub = 0 if a_ub is None else a_ub.shape[0]
    eq = np.zeros(0) if a_eq is None or b_eq is None else np.asarray(b_eq, dtype=float)
    row_lo = np.concatenate([np.full(n_ub, -np.inf), eq])
    row_hi = np.concatenate([np.asarray(b_ub, dtype=float)[:n_ub], eq])
    h = _highs()
    h.clearModel()
    h.setOptionValue("presolve", "on" if presolve else "off")
    h.setOptionValue("solver", "ipm" if method == "highs-ipm" else "simplex")
    h.setOptionValue("simplex_strategy", 1)  # dual simplex, as linprog's "highs-ds"
    h.passModel(
        n,
        n_rows,
        len(value),
        int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMinimize),
        0.0,
        np.ascontiguousarray(cost, dtype=float),
        np.zeros(n),
        np.ascontiguousarray(upper, dtype=float),
        row_lo,
        row_hi,
        start.astype(np.int32),
        index.astype(np.int32),
        np.asarray(value, dtype=float),
        np.zeros(n, dtype=np.int32),  # every column continuous (kContinuous)
    )
    h.run()
    status = h.getModelStatus()
    message = h.modelStatusToString(status)
    if status == highspy.HighsModelStatus.kInfeasible:
        return 2, message, np.zeros(n), np.nan, np.zeros(n_ub)
    if status != highspy.HighsModelStatus.kOptimal:
        return 4, message, np.zeros(n), np.nan, np.zeros(n_ub)
    sol = h.getSolution()
    y = np.asarray(sol.col_value, dtype=float)
    duals = np.asarray(sol.row_dual, dtype=float)[:n_ub]
    return 0, message, y, float(h.getInfo().objective_function_value), duals


def solve_lp(
    c: np.ndarray,
    a_ub: sparse.spmatrix | np.ndarray,
    b_ub: np.ndarray,
    *,
    scale: np.ndarray,
    upper: np.ndarray | None = None,
    a_eq: sparse.spmatrix | np.ndarray | None = None,
    b_eq: np.ndarray | None = None,
    method: str = "highs",
    what: str = "LP",
    infeasible_ok: bool = False,
    presolve: bool = True,
    direct: bool = False,
) -> LPResult | None:
    """``min c @ x`` s.t. ``a_ub @ x <= b_ub``, ``a_eq @ x = b_eq``, ``0 <= x <= upper``, by HiGHS
    on a rescaled copy: the one place where the exact mechanisms' LPs are scaled.

    HiGHS works with absolute tolerances (1e-7), drops matrix entries below 1e-9 and treats bounds
    above 1e20 as infinite, so an LP written in the instance's own units (demands of 1e-9 next to
    capacities of 1e10) can come back "optimal" and wrong. Here every variable is first expressed
    in its natural unit, ``x = scale * y`` (for a task count: the most tasks the user can run
    there, so ``y`` is a fraction in [0, 1]); each row is then divided by its largest coefficient,
    rows that cannot bind given ``0 <= y <= upper / scale`` are dropped (an exact presolve), and
    the objective is divided by its largest coefficient. The transformation is exact; the optimum
    and the duals are mapped back to the caller's units.

    With ``method="highs-ipm"``, a status other than "optimal" is re-solved by the dual simplex
    (``highs-ds``), whose verdict stands. The LPs that freeze users at levels just reached (the
    sequential LPs of :func:`~fairsim.schedulers.exact.lexmaxmin.lex_max_min`, the check
    :func:`~fairsim.schedulers.exact.verification.lex_problem`) are feasible by construction, but
    their feasible set is a sliver of relative width about 1e-9 (the slack of the frozen levels)
    around an allocation that saturates the capacities: it has no interior at HiGHS's feasibility
    tolerance (1e-7), and the interior-point method (IPX), which follows a path through the
    interior, can then report the LP infeasible. The simplex method works on vertices, to which a
    sliver inside the tolerance is feasible (``THIN_CHECK_LP`` in
    ``tests/regression/test_exact_checker.py``: IPX says infeasible, the dual simplex finds the
    optimum, and a point with every slack at least 1.2e-9 exists).

    Parameters
    ----------
    c : ndarray, shape (n,)
    a_ub : sparse matrix or ndarray, shape (m, n)
    b_ub : ndarray, shape (m,)
    scale : ndarray, shape (n,)
        Positive natural unit of each variable.
    upper : ndarray, shape (n,), optional
        Upper bounds (``inf`` allowed) in the caller's units; default unbounded.
    a_eq, b_eq : optional
        Equality rows (scaled the same way, never dropped).
    method : str
        ``scipy.optimize.linprog`` HiGHS method.
    what : str
        Names the LP in error messages.
    infeasible_ok : bool
        Return ``None`` for an infeasible LP instead of raising.
    presolve : bool
        HiGHS's presolve (``False``: the simplex starts from the slack basis; cheaper for the
        split LP of :func:`~fairsim.schedulers.exact.lexmaxmin.split_totals`).
    direct : bool
        Hand the rescaled model to HiGHS through highspy (:func:`_run_highs`: the same rows,
        bounds and options as ``linprog``, whose own set-up costs about 2 ms per call against
        0.3 ms in HiGHS on the split LPs of a few hundred columns) instead of
        ``scipy.optimize.linprog``. The split LPs of
        :func:`~fairsim.schedulers.exact.lexmaxmin.split_totals` use it; the other LPs keep
        ``linprog`` (and the HiGHS that SciPy bundles).

    Returns
    -------
    LPResult or None

    Raises
    ------
    NumericalRangeError
        If HiGHS reports anything but an optimum (or infeasibility with ``infeasible_ok``): the
        LP of an instance is always feasible and bounded, so any other status is numerical.
    """
    s = np.asarray(scale, dtype=float)
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise NumericalRangeError(f"{what}: a variable's natural unit is not a positive number")
    ub_y = None if upper is None else np.asarray(upper, dtype=float) / s

    def col_scaled(a: sparse.spmatrix | np.ndarray) -> sparse.csr_matrix | np.ndarray:
        if not isinstance(a, np.ndarray) and a.shape[0] * a.shape[1] <= DENSE_CELLS:
            a = a.toarray()
        if isinstance(a, np.ndarray):  # small LPs: no sparse overhead
            return np.asarray(a, dtype=float) * s[None, :]
        return sparse.csr_matrix(sparse.csr_matrix(a) @ sparse.diags(s))

    a1, b1, rows, r = _row_scaled(col_scaled(a_ub), np.asarray(b_ub, dtype=float), ub_y)
    aeq = beq = None
    if a_eq is not None and b_eq is not None and len(b_eq):
        aeq, beq, _, _ = _row_scaled(col_scaled(a_eq), np.asarray(b_eq, dtype=float), None)
    cs = np.asarray(c, dtype=float) * s
    oscale = float(np.abs(cs).max()) or 1.0
    bounds = np.zeros((len(s), 2))
    bounds[:, 1] = np.inf if ub_y is None else ub_y
    problem = {
        "A_ub": a1 if len(b1) else None,
        "b_ub": b1 if len(b1) else None,
        "A_eq": aeq,
        "b_eq": beq,
        "bounds": bounds,
    }
    options = {"presolve": presolve}

    def run(how: str) -> tuple[int, str, np.ndarray, float, np.ndarray | None]:
        if direct:
            a_ub1 = a1 if len(b1) else None
            return _run_highs(cs / oscale, a_ub1, b1, aeq, beq, bounds[:, 1], how, presolve)
        res = linprog(cs / oscale, **problem, method=how, options=options)
        duals = np.asarray(res.ineqlin.marginals) if res.status == 0 and len(b1) else None
        return int(res.status), str(res.message), res.x, float(res.fun or 0.0), duals

    status, message, y, fun, duals = run(method)
    if status != 0 and method == "highs-ipm":
        # an interior-point verdict other than "optimal" is no certificate on a thin feasible
        # set (see the docstring); the dual simplex decides
        status, message, y, fun, duals = run("highs-ds")
    if status == 2 and infeasible_ok:
        return None
    if status != 0:
        raise NumericalRangeError(f"{what}: HiGHS did not find an optimum ({message})")
    marg = np.zeros(len(np.asarray(b_ub)))
    if len(b1) and duals is not None:
        marg[rows] = duals * oscale / r
    return LPResult(x=s * y, fun=fun * oscale, ineq_marginals=marg)
