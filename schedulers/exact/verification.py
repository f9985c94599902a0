"""The independent check after every exact solve: is the answer feasible, does nothing more fit,
and does it meet the mechanism's defining condition?

:func:`~fairsim.schedulers.exact.solve_exact` calls :func:`verify` and
:func:`~fairsim.schedulers.exact.solve_udrf_json` calls :func:`verify_udrf` on every allocation; a
failure is a one-line :class:`~fairsim.schedulers.exact.instance.NumericalRangeError` (the
instance's numbers are out of the solver's range). The conditions are checked in the instance's own
units with relative tolerance :data:`CHECK_RTOL`; they depend on the solvers' definitions (shares
per task, the PS-DSF violation, the PF gap, the BMF conditions) but not on how the solvers compute.
The fairness *properties* of a mechanism (sharing incentive, envy-freeness, ...) are checked by
:mod:`fairsim.schedulers.exact.properties`.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from fairsim.schedulers.exact.common import monopoly_tasks, room, serving, solve_lp
from fairsim.schedulers.exact.hdrf import hdrf_problem
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError
from fairsim.schedulers.exact.lexmaxmin import FREEZE_SLACK, share_per_task, task_scale
from fairsim.schedulers.exact.pf import PF_GAP, pf_kkt_gap
from fairsim.schedulers.exact.pool import POOLED, bmf_conditions, pooled, pooled_share_per_task
from fairsim.schedulers.exact.psdsf import psdsf_violation
from fairsim.schedulers.exact.udrf import JobInstance, dominant_shares, job_shares

#: Relative tolerance of :func:`verify`, the check after every exact solve.
CHECK_RTOL = 1e-6
#: Mechanisms that lexicographically maximise ``x_n a_n / w_n``
# (:mod:`fairsim.schedulers.exact.lexmaxmin`).
LEX = ("drfh", "c-drfh", "tsf", "lmm-mms")


def feasibility_problem(inst: Instance, x: np.ndarray, *, rtol: float = CHECK_RTOL) -> str | None:
    """Why ``x`` is not a feasible allocation of ``inst`` (``None`` if it is).

    Checked in the instance's own units: finite, non-negative (to ``rtol`` of ``gamma[n, l]``),
    zero where a server cannot serve a user, per-server usage at most ``c[l, r] (1 + rtol)``, and
    totals at most ``max_tasks (1 + rtol)``.
    """
    if not np.isfinite(x).all():
        return "the solver returned a task count that is not a finite number"
    serve = serving(inst)
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    neg = x < -rtol * gamma
    if neg.any():
        u, k = (int(i) for i in np.argwhere(neg)[0])
        return f"user {inst.user_ids[u]!r} gets {x[u, k]:.3g} tasks on {inst.server_ids[k]!r}"
    off = (x != 0) & ~serve
    if off.any():
        u, k = (int(i) for i in np.argwhere(off)[0])
        return (
            f"user {inst.user_ids[u]!r} gets {x[u, k]:.3g} tasks on {inst.server_ids[k]!r}, "
            "which cannot serve it"
        )
    use = x.T @ inst.demand
    with np.errstate(divide="ignore", invalid="ignore"):
        over = np.where(inst.capacity > 0, use / inst.capacity - 1.0, np.where(use > 0, np.inf, 0))
    if (over > rtol).any():
        k, r = (int(i) for i in np.unravel_index(int(np.argmax(over)), over.shape))
        return (
            f"server {inst.server_ids[k]!r} is allocated {use[k, r]:.6g} of "
            f"{inst.resources[r]!r}, above its capacity {inst.capacity[k, r]:.6g}"
        )
    tot = x.sum(axis=1)
    above = tot > inst.max_tasks * (1 + rtol)
    if above.any():
        u = int(np.argmax(above))
        return f"user {inst.user_ids[u]!r} gets {tot[u]:.6g} tasks, above its max_tasks"
    return None


def room_problem(inst: Instance, x: np.ndarray, *, rtol: float = CHECK_RTOL) -> str | None:
    """Where more tasks still fit next to ``x`` (``None`` if nothing fits): a user below its task
    bound that could run more than ``rtol * gamma[n, l]`` further tasks on a server that serves it,
    beyond the rounding of the free amounts themselves (:func:`room` with ``rounding``). Every
    mechanism here except TDM PS-DSF leaves no such room (Pareto efficiency)."""
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(gamma > 0, room(inst, x, rounding=True) / gamma, 0.0)
    if (rel > rtol).any():
        u, k = (int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape))
        extra = room(inst, x, rounding=True)[u, k]
        return (
            f"user {inst.user_ids[u]!r} still fits {extra:.3g} more tasks on "
            f"{inst.server_ids[k]!r}, left idle"
        )
    return None


def _valid(inst: Instance, a: np.ndarray) -> np.ndarray:
    """Users a lexicographic max-min with per-task shares ``a`` serves (the others get 0)."""
    return np.isfinite(a) & (a > 0) & serving(inst).any(axis=1) & (inst.max_tasks > 0)


def bottleneck_problem(
    inst: Instance, x: np.ndarray, a: np.ndarray, *, rtol: float = CHECK_RTOL
) -> str | None:
    """The bottleneck condition of the weighted max-min of the shares ``x_n a_n / w_n``.

    Every user below its task bound needs, on every server that serves it, a saturated resource
    it demands on which no user holding tasks there (more than ``rtol`` of what it could hold)
    has a larger share; otherwise those users could give up a little of that server to it, a
    lexicographic improvement. Necessary for a lexicographic max-min on any number of servers;
    on one server (one set of linear capacity constraints) also sufficient (Bertsekas and
    Gallager, *Data Networks*, Section 6.5.2). Unlike an LP it does not weigh how much of a
    resource the others would free, so a user whose tiny demand for a full resource an LP's
    tolerance hid is caught. Returns why not, or ``None``.
    """
    valid = _valid(inst, a)
    share = np.where(valid, x.sum(axis=1) * np.where(valid, a, 0.0) / inst.weight, 0.0)
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    use = x.T @ inst.demand  # (L, R)
    full = use >= inst.capacity * (1 - rtol)
    holds = valid[:, None] & (x > rtol * gamma)  # (N, L)
    dem = inst.demand > 0
    held = np.where(holds, share[:, None], 0.0)  # (N, L)
    free = valid & (x.sum(axis=1) < inst.max_tasks * (1 - rtol))
    ok = np.zeros(x.shape, dtype=bool)
    for r in range(dem.shape[1]):  # one (N, L) pass per resource
        # largest share among the users holding tasks on server l and demanding resource r
        top = (held * dem[:, r, None]).max(axis=0) if len(held) else np.zeros(x.shape[1])
        ok |= dem[:, r, None] & full[None, :, r] & (share[:, None] >= top[None, :] * (1 - rtol))
    bad = serving(inst) & free[:, None] & ~ok
    if bad.any():
        u, k = (int(i) for i in np.argwhere(bad)[0])
        return (
            f"user {inst.user_ids[u]!r} (share {share[u]:.6g}) has no saturated resource on "
            f"{inst.server_ids[k]!r} on which its share is the largest: not max-min fair"
        )
    return None


def pooled_certificate(
    inst: Instance, x: np.ndarray, a: np.ndarray, *, rtol: float = CHECK_RTOL
) -> bool:
    """Whether the task totals of a feasible ``x`` are the lexicographic max-min of the pooled
    relaxation, which proves ``x`` lexicographically max-min on the servers without an LP.

    The servers pooled into one (``C_r = sum_l c[l, r]``, placement constraints dropped), the
    users some server serves keeping their shares per task ``a_n / w_n`` and bounds: on one pool
    the bottleneck condition (:func:`bottleneck_problem`) is sufficient for the lexicographic
    max-min (Bertsekas and Gallager, Section 6.5.2). Every feasible allocation's totals are
    feasible on the pool, so totals that are the pool's optimum and feasible on the servers are
    the servers' optimum (the proof in :func:`~fairsim.schedulers.exact.lexmaxmin.lex_max_min`).
    A ``False`` proves nothing: the optimum on the servers may lie below the pool's, and
    :func:`lex_problem` decides. ``x`` must have passed :func:`feasibility_problem`.
    """
    valid = _valid(inst, a)
    return (
        bottleneck_problem(
            pooled(inst), x.sum(axis=1)[:, None], np.where(valid, a, np.inf), rtol=rtol
        )
        is None
    )


def lex_problem(
    inst: Instance, x: np.ndarray, a: np.ndarray, *, rtol: float = CHECK_RTOL
) -> str | None:
    """Whether ``x`` lexicographically maximises ``x_n a_n / w_n`` on several servers.

    For each distinct share level ``t`` of the users below their task bound, one LP maximises the
    total share of the users at ``t`` while every user at or below ``t`` keeps its share; if that
    total exceeds the current one by more than ``rtol``, some user at ``t`` could rise without
    lowering anyone not above it. One LP per level, solved rescaled
    (:func:`~fairsim.schedulers.exact.common.solve_lp`). Returns why not, or ``None``.

    The capacities and task bounds of the LPs are those of the instance, or what ``x`` uses where
    that is more: ``x`` is then feasible in every LP, so an infeasible LP can only be a solver's
    failure. It is not a looser test: :func:`feasibility_problem` has bounded the excess by
    ``rtol`` and a solver's answer exceeds a capacity by its feasibility tolerance (up to 7e-8
    relative seen, ``drfh`` in ``fairsim properties --seed 7``), so these capacities lie between
    the instance's and those for which the solver's answer is optimal: a correct answer still
    passes, and a larger capacity only makes an improvement easier to find. With the instance's
    own capacities the frozen levels of such an ``x`` were out of reach, and the LP infeasible.
    """
    valid = _valid(inst, a)
    serve = serving(inst) & valid[:, None]
    users, servers = np.nonzero(serve)
    if len(users) == 0:
        return None
    n_u = len(inst.user_ids)
    n_v = len(users)
    coef = np.where(valid, a, 0.0) / inst.weight
    xs = x.sum(axis=1)
    share = xs * coef
    s = task_scale(inst, users, servers)
    n_r = inst.capacity.shape[1]
    rows = (servers[:, None] * n_r + np.arange(n_r)[None, :]).ravel()
    cols = np.repeat(np.arange(n_v), n_r)
    vals = inst.demand[users].ravel()
    keep = vals > 0
    n_rows = inst.capacity.size
    cap_a = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n_rows, n_v))
    shares = sparse.csr_matrix((coef[users], (users, np.arange(n_v))), shape=(n_u, n_v))
    tasks = sparse.csr_matrix((np.ones(n_v), (users, np.arange(n_v))), shape=(n_u, n_v))
    bounded = np.flatnonzero(valid & np.isfinite(inst.max_tasks))
    # x is feasible in every LP below: capacities and task bounds raised to what it uses
    cap_b = np.maximum(inst.capacity.ravel(), cap_a @ x[users, servers])
    task_b = np.maximum(inst.max_tasks[bounded], xs[bounded])
    free = valid & (xs < inst.max_tasks * (1 - rtol))
    levels: list[float] = []
    for t in np.sort(share[free]):
        if not levels or t > levels[-1] * (1 + rtol):
            levels.append(float(t))
    for t in levels:
        at = np.flatnonzero(free & (share >= t * (1 - rtol)) & (share <= t * (1 + rtol)))
        below = np.flatnonzero(valid & (share <= t * (1 + rtol)))
        res = solve_lp(
            -np.asarray(shares[at].sum(axis=0)).ravel(),
            sparse.vstack([cap_a, -shares[below], tasks[bounded]]).tocsr(),
            np.concatenate([cap_b, -share[below] * (1 - FREEZE_SLACK), task_b]),
            scale=s,
            upper=s,
            method="highs-ipm",
            what="lexicographic max-min check LP",
        )
        assert res is not None
        now = float(share[at].sum())
        if -res.fun > now * (1 + rtol):
            ids = ", ".join(repr(inst.user_ids[n]) for n in at[:3])
            return (
                f"users at share {t:.6g} ({ids}) could reach a total share {-res.fun:.6g} > "
                f"{now:.6g} without lowering anyone at or below them: not lexicographically max-min"
            )
    return None


def verify(name: str, inst: Instance, x: np.ndarray, sharing: str = "rdm") -> None:
    """Check an exact allocation independently of the solver that produced it.

    Feasibility and "nothing more fits" (:func:`feasibility_problem`, :func:`room_problem`; TDM
    PS-DSF may leave resources idle and is checked by its theorem instead), then the mechanism's
    defining condition: the bottleneck condition of max-min fairness (:func:`bottleneck_problem`;
    ``drf``, ``af`` on the pool, ``drfh``, ``c-drfh``, ``tsf``, ``lmm-mms`` on every server), and on
    several servers also the pooled relaxation's certificate (:func:`pooled_certificate`, no LP)
    or, when it does not hold, one LP per share level (:func:`lex_problem`);
    for ``hdrf`` the limits, nothing more fitting within them, the guarantees and the
    hierarchical bottleneck condition (:func:`~fairsim.schedulers.exact.hdrf.hdrf_problem`);
    Theorem 1 / 2 for ``psdsf`` (:func:`~fairsim.schedulers.exact.psdsf.psdsf_violation` at most
    :data:`CHECK_RTOL`); the Frank-Wolfe gap for ``pf`` (at most
    :data:`~fairsim.schedulers.exact.pf.PF_GAP`); the definition for ``bmf``
    (:func:`~fairsim.schedulers.exact.pool.bmf_conditions`). Tolerances are relative
    (:data:`CHECK_RTOL`).

    Parameters
    ----------
    name : str
        An exact mechanism (``fairsim.schedulers.exact.EXACT``).
    inst : Instance
        The instance it solved (pooled mechanisms: the original; it is pooled here).
    x : ndarray, shape (n_users, n_servers), or (n_users, 1) for pooled mechanisms
    sharing : {"rdm", "tdm"}

    Raises
    ------
    NumericalRangeError
        One line: the instance is numerically out of range, and the failed condition.
    """
    if name in POOLED:
        inst = pooled(inst)
    why = feasibility_problem(inst, x)
    if why is None and not (name == "psdsf" and sharing == "tdm") and name != "hdrf":
        why = room_problem(inst, x)
    if why is None:
        if name == "hdrf":
            why = hdrf_problem(inst, x, rtol=CHECK_RTOL)
        elif name in ("drf", "af"):
            why = bottleneck_problem(inst, x, pooled_share_per_task(name, inst))
        elif name in LEX:
            a = share_per_task(name, inst)
            why = bottleneck_problem(inst, x, a)
            multi = inst.capacity.shape[0] > 1
            if why is None and multi and not pooled_certificate(inst, x, a):
                why = lex_problem(inst, x, a)
        elif name == "psdsf":
            v = psdsf_violation(inst, x, sharing=sharing)
            if v > CHECK_RTOL:
                why = f"PS-DSF's Theorem {1 if sharing == 'rdm' else 2} is violated by {v:.2g}"
        elif name == "pf":
            gap = pf_kkt_gap(inst, x)
            if gap > PF_GAP:
                why = f"the proportional-fairness optimality gap is {gap:.2g} (> {PF_GAP:g})"
        elif name == "bmf" and not bmf_conditions(inst, x[:, 0], tol=CHECK_RTOL):
            why = "no resource is a bottleneck for some user: not bottleneck max fair"
    if why is not None:
        raise NumericalRangeError(
            f"{name}: the instance is numerically out of range for the exact solver: {why} "
            f"(relative tolerance {CHECK_RTOL:g})"
        )


def udrf_problem(inst: JobInstance, x: np.ndarray, *, rtol: float = CHECK_RTOL) -> str | None:
    """Why job runs ``x`` are not the UDRF allocation of Fig. 3 (``None`` if they are).

    In units of each class's capacity (job shares ``d^j[m, k]``), with relative tolerance
    ``rtol``: feasibility (eq. 6, ``max_runs``); every job blocked (a resource it uses is
    saturated, its user is saturated and its share of a resource the job uses is at the user's
    dominant share, the eq. 12 cap, or it has ``max_runs`` runs); and max-min of the RDUC-wise
    dominant shares: a user with no bounded job has a saturated resource on which no user with a
    positive share has a larger weighted dominant share (Lemma 1).
    """
    if not np.isfinite(x).all():
        return "the solver returned a run count that is not a finite number"
    d = job_shares(inst)
    used = x @ d
    first = np.r_[0, np.cumsum([len(ids) for ids in inst.job_ids])]

    def job(j: int) -> str:
        u = int(inst.job_user[j])
        return f"job {inst.job_ids[u][j - first[u]]!r} of user {inst.user_ids[u]!r}"

    if (x < 0).any() or (x > inst.max_runs * (1 + rtol)).any():
        j = int(np.argmax((x < 0) | (x > inst.max_runs * (1 + rtol))))
        return f"{job(j)} gets {x[j]:.6g} runs, outside [0, max_runs]"
    if (used > 1 + rtol).any():
        return f"a machine-class resource is {used.max():.9g} times its capacity"
    sat = used >= 1 - rtol
    s = dominant_shares(inst, x)
    n_u = len(inst.user_ids)
    share = np.zeros((n_u, d.shape[1]))
    np.add.at(share, inst.job_user, d * x[:, None])
    level = s / inst.weight
    # a user is saturated when a resource of P_u (eq. 2) is; only then does eq. 12 cap its jobs
    user_sat = np.zeros(n_u, dtype=bool)
    np.logical_or.at(user_sat, inst.job_user, ((d > 0) & sat).any(axis=1))
    for j, u in enumerate(inst.job_user):
        uses = d[j] > 0
        capped = user_sat[u] and (uses & (share[u] >= s[u] * (1 - rtol))).any()
        blocked = (uses & sat).any() or capped
        if not (blocked or x[j] >= inst.max_runs[j] * (1 - rtol)):
            return f"{job(j)} could run more than its {x[j]:.6g} runs"
    for u in range(n_u):
        if np.isfinite(inst.max_runs[inst.job_user == u]).any():
            continue
        ok = False
        for r in np.flatnonzero(sat & (share[u] > 0)):
            holders = share[:, r] > rtol * share[:, r].max()
            if (level[holders] <= level[u] * (1 + rtol)).all():
                ok = True
        if not ok:
            return (
                f"user {inst.user_ids[u]!r} (dominant share {s[u]:.6g}) has no saturated resource "
                "on which its weighted dominant share is the largest: not max-min fair"
            )
    return None


def verify_udrf(inst: JobInstance, x: np.ndarray) -> None:
    """:func:`udrf_problem`, raised as
    :class:`~fairsim.schedulers.exact.instance.NumericalRangeError`.

    Raises
    ------
    NumericalRangeError
        One line: the instance is numerically out of range, and the failed condition.
    """
    why = udrf_problem(inst, x)
    if why is not None:
        raise NumericalRangeError(
            f"udrf: the instance is numerically out of range for the exact solver: {why} "
            f"(relative tolerance {CHECK_RTOL:g})"
        )
