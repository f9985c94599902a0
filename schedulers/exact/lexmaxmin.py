"""Lexicographic max-min of per-user normalised shares, by sequential LPs (HiGHS).

DRFH (Wang, Li, Liang, Section IV, eqs. 4-7; weighted users with finite tasks, Section V-A),
C-DRFH and TSF (PS-DSF paper, Section II-B) and the heterogeneous LMM-MMS all have the same shape:
user n's *share* is ``x_n * a_n / w_n`` with ``x_n = sum_l x[n, l]`` and a per-user constant
``a_n``; the allocation lexicographically maximises the vector of shares subject to the per-server
capacities (PS-DSF eq. 9), ``x[n, l] = 0`` where server l cannot serve n, and ``x_n <= max_tasks``.

Algorithm on one server: exact progressive filling
(:func:`~fairsim.schedulers.exact.common.waterfill`), which is max-min fairness for linear capacity
constraints. On several servers, Nace and Pioro's max-min LP: maximise a common level ``t`` with
every unfrozen share ``>= t`` and every frozen share ``>= its level``; by LP duality the fairness
rows carry duals that sum to 1, and a user whose row has a positive dual cannot exceed ``t`` in any
optimum, so it is frozen at ``t``. At least one user is frozen per LP, hence at most ``n_users``
LPs. Section V-A of the DRFH paper (raise every active user's share until one has all its tasks) is
this procedure with
the task bound as one more constraint.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from fairsim.schedulers.exact.common import fill_idle, monopoly_tasks, serving, solve_lp, waterfill
from fairsim.schedulers.instance import Instance

#: Relative slack of a frozen user's level in later LPs (the level was computed to ~1e-9).
FREEZE_SLACK = 1e-9


def task_scale(inst: Instance, users: np.ndarray, servers: np.ndarray) -> np.ndarray:
    """Natural unit of the variable ``x[n, l]``: the most tasks user n can run on server l.

    ``min(gamma[n, l], max_tasks[n])`` (PS-DSF eq. 7 and the task bound): the LPs see
    ``y = x / task_scale`` in [0, 1] whatever the units of the resources and the size of a task.

    Returns
    -------
    ndarray, shape (len(users),)
    """
    gamma = monopoly_tasks(inst.capacity, inst.demand)[users, servers]
    return np.minimum(gamma, inst.max_tasks[users])


def lex_max_min(inst: Instance, a: np.ndarray, serve: np.ndarray | None = None) -> np.ndarray:
    """Lexicographic max-min of ``x_n * a_n / w_n`` over feasible per-server allocations.

    Parameters
    ----------
    inst : Instance
    a : ndarray, shape (n_users,)
        Share per task of each user; users with ``a <= 0`` or ``inf`` or no serving server get 0.
    serve : ndarray of bool, shape (n_users, n_servers), optional
        Which server may run which user (default :func:`~fairsim.schedulers.exact.common.serving`).

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        Fractional task counts ``x[n, l]``.

    Raises
    ------
    NumericalRangeError
        If an LP has no optimum by HiGHS (:func:`~fairsim.schedulers.exact.common.solve_lp`).
    """
    n_u, n_s = inst.eligible.shape
    serve = serving(inst) if serve is None else serve
    ok = np.isfinite(a) & (a > 0) & serve.any(axis=1) & (inst.max_tasks > 0)
    serve = serve & ok[:, None]
    users, servers = np.nonzero(serve)
    n_v = len(users)
    out = np.zeros((n_u, n_s))
    if n_v == 0:
        return out
    coef = np.where(ok, a, 0.0) / inst.weight  # share per task
    if n_s == 1:
        # one server: exact progressive filling of the shares (max-min fairness with linear
        # capacities, Bertsekas and Gallager 6.5.2), no LP tolerance involved
        with np.errstate(divide="ignore"):
            rate = np.where(ok, 1.0 / np.where(ok, coef, 1.0), 0.0)
        out[:, 0] = waterfill(inst.demand, inst.capacity[0], rate, upper=inst.max_tasks)
        return out
    s = task_scale(inst, users, servers)
    # the largest share each user can reach alone
    top = coef * np.minimum(np.bincount(users, weights=s, minlength=n_u), inst.max_tasks)
    n_r = inst.capacity.shape[1]
    # capacity rows: (l, r) -> sum_n d[n, r] x[n, l] <= c[l, r]
    rows = (servers[:, None] * n_r + np.arange(n_r)[None, :]).ravel()
    cols = np.repeat(np.arange(n_v), n_r)
    vals = inst.demand[users].ravel()
    keep = vals > 0
    cap_a = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n_s * n_r, n_v + 1))
    used_rows = np.unique(rows[keep])
    cap_a = cap_a[used_rows]
    cap_b = inst.capacity.ravel()[used_rows]
    # per-user sums
    share = sparse.csr_matrix((coef[users], (users, np.arange(n_v))), shape=(n_u, n_v + 1))
    tasks = sparse.csr_matrix((np.ones(n_v), (users, np.arange(n_v))), shape=(n_u, n_v + 1))
    bounded = np.nonzero(ok & np.isfinite(inst.max_tasks))[0]
    c = np.zeros(n_v + 1)
    c[-1] = -1.0
    active = ok.copy()
    level = np.zeros(n_u)
    x = np.zeros(n_v)
    for _ in range(n_u + 1):
        act = np.nonzero(active)[0]
        if len(act) == 0:
            break
        frozen = np.nonzero(ok & ~active)[0]
        # active: t - share_n <= 0 ; frozen: -share_n <= -level_n (relaxed by a hair)
        t_col = sparse.csr_matrix(
            (np.ones(len(act)), (np.arange(len(act)), np.full(len(act), n_v))),
            shape=(len(act), n_v + 1),
        )
        blocks = [cap_a, t_col - share[act]]
        b = [cap_b, np.zeros(len(act))]
        if len(frozen):
            blocks.append(-share[frozen])
            b.append(-level[frozen] * (1 - FREEZE_SLACK))
        if len(bounded):
            blocks.append(tasks[bounded])
            b.append(inst.max_tasks[bounded])
        # t never exceeds the smallest reachable share of an active user: its natural unit
        t_unit = float(top[act].min())
        res = solve_lp(
            c,
            sparse.vstack(blocks).tocsr(),
            np.concatenate(b),
            scale=np.r_[s, t_unit],
            upper=np.r_[s, np.inf],
            method="highs-ipm",  # with crossover: 5x faster than simplex here
            what="lexicographic max-min LP",
        )
        assert res is not None
        x = res.x[:n_v]
        t = float(res.x[-1])
        # duals of the fairness rows: they sum to 1 (stationarity in t)
        duals = -res.ineq_marginals[len(cap_b) : len(cap_b) + len(act)]
        blocked = act[duals > 1e-9]
        if len(blocked) == 0:
            got = np.asarray(share[act] @ res.x).ravel()
            blocked = act[got <= t * (1 + 1e-9)]
            if len(blocked) == 0:
                blocked = act[[int(np.argmin(got))]]
        level[blocked] = t
        active[blocked] = False
    out[users, servers] = np.maximum(x, 0.0)
    return fill_idle(inst, out, what="lexicographic max-min fill LP")


def drfh_share_per_task(inst: Instance, *, constrained: bool) -> np.ndarray:
    """Global dominant share of one task, ``max_r d[n, r] / C_r`` (DRFH eq. 2; PS-DSF eq. 5).

    Parameters
    ----------
    constrained : bool
        ``True`` (``drfh``): ``C`` is the capacity pooled over the servers that can serve user n.
        ``False`` (``c-drfh``): ``C`` is pooled over all servers, as if there were no placement
        constraints (PS-DSF paper, Section II-B).
    """
    if constrained:
        pooled = serving(inst).astype(float) @ inst.capacity  # (n, R)
    else:
        pooled = np.broadcast_to(inst.capacity.sum(axis=0), inst.demand.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(inst.demand > 0, inst.demand / pooled, 0.0)
    return np.where(np.isfinite(frac), frac, np.inf).max(axis=1)


def solve_drfh(inst: Instance) -> np.ndarray:
    """DRFH: lexicographic max-min of weighted global dominant shares (DRFH eq. 4, Section V-A).

    The dominant share is taken over the servers that can serve the user (equal to the paper's
    eq. 2 when there are no placement constraints).
    """
    return lex_max_min(inst, drfh_share_per_task(inst, constrained=True))


def solve_c_drfh(inst: Instance) -> np.ndarray:
    """C-DRFH: DRFH with dominant shares that ignore placement constraints (PS-DSF II-B, eq. 5)."""
    return lex_max_min(inst, drfh_share_per_task(inst, constrained=False))


def solve_tsf(inst: Instance) -> np.ndarray:
    """TSF: lexicographic max-min of ``x_n / (w_n gamma_n)`` (PS-DSF paper, Section II-B).

    ``gamma_n = sum_l min_r c[l, r] / d[n, r]`` over *all* servers, as if there were no placement
    constraints (Wang et al.'s Task Share Fairness, ref. [14] of the PS-DSF paper).
    """
    return lex_max_min(inst, share_per_task("tsf", inst))


def maximin_share(inst: Instance) -> np.ndarray:
    """LMM-MMS maximin share ``mu_n = min(n_n, (w_n / sum_m w_m) sum_l gamma[n, l])``.

    ``gamma[n, l] = min_r c[l, r] / d[n, r]`` summed over the servers that can serve user n: the
    tasks user n runs with a weight-proportional slice of every server. With one pool and equal
    weights this is ``min(n_n, min_r c_r / (N d[n, r]))``, the reconstruction of Li et al. (2025)
    in docs/mechanisms.md ("LMM-MMS definitions").
    """
    slice_ = inst.weight / inst.weight.sum()
    g = (monopoly_tasks(inst.capacity, inst.demand) * serving(inst)).sum(axis=1) * slice_
    return np.minimum(inst.max_tasks, g)


def solve_lmm_mms(inst: Instance, mms: np.ndarray | None = None) -> np.ndarray:
    """LMM-MMS: lexicographic max-min of the MMS ratios ``x_n / mu_n`` (Li et al. 2025;
    docs/mechanisms.md).

    Weights enter through the maximin share (a weight-proportional slice), not a second time.

    Parameters
    ----------
    mms : ndarray, shape (n_users,), optional
        A different maximin-share definition (default :func:`maximin_share`).
    """
    mu = maximin_share(inst) if mms is None else np.asarray(mms, dtype=float)
    with np.errstate(divide="ignore"):
        a = np.where(mu > 0, inst.weight / mu, np.inf)
    return lex_max_min(inst, a)


def share_per_task(name: str, inst: Instance) -> np.ndarray:
    """``a_n`` of mechanism ``name`` (``drfh``, ``c-drfh``, ``tsf``, ``lmm-mms``): the share
    ``x_n a_n / w_n`` it lexicographically maximises (``inf`` where a user gets nothing).

    Raises
    ------
    KeyError
        For another name.
    """
    if name in ("drfh", "c-drfh"):
        return drfh_share_per_task(inst, constrained=name == "drfh")
    if name == "tsf":
        gamma = monopoly_tasks(inst.capacity, inst.demand).sum(axis=1)
        with np.errstate(divide="ignore"):
            return np.where(gamma > 0, 1.0 / gamma, np.inf)
    if name == "lmm-mms":
        mu = maximin_share(inst)
        with np.errstate(divide="ignore"):
            return np.where(mu > 0, inst.weight / mu, np.inf)
    raise KeyError(name)
