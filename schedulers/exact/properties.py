"""Fairness-property checks of the exact mechanisms on concrete instances.

Definitions (utility = number of tasks a user runs; PS-DSF paper Sections II-A and III-B):

* sharing incentive: every user runs at least what a ``w_n / sum w`` slice of every server gives
  it, ``sum_l (w_n / sum w) gamma[n, l]`` over the servers that can serve it (capped by its task
  bound);
* envy-freeness: no user could run more tasks with another user's per-server bundles, scaled by
  the weight ratio;
* Pareto optimality: no feasible allocation gives every user at least as many tasks and one user
  more (one LP);
* strategy-proofness: no user runs more *true* tasks by misreporting its demand vector (raising
  some entries) or its eligible servers (dropping some);
* bottleneck fairness: when one resource is dominantly requested by every user from every server
  that can serve it, the weighted shares of that resource are lexicographically max-min fair;
* single-resource fairness: the same when every user demands only one and the same resource;
* population monotonicity: when a user leaves, nobody else runs fewer tasks.

Pooled mechanisms (``drf``, ``af``, ``bmf``) are checked on the pooled instance (one server, no
placement constraints), which is the setting they are defined in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from fairsim.schedulers.exact.common import monopoly_tasks, room, serving, solve_lp
from fairsim.schedulers.exact.lexmaxmin import FREEZE_SLACK, share_per_task, task_scale
from fairsim.schedulers.exact.pf import PF_GAP, pf_kkt_gap
from fairsim.schedulers.exact.pool import bmf_conditions, pooled_share_per_task
from fairsim.schedulers.exact.psdsf import psdsf_violation
from fairsim.schedulers.instance import Instance, NumericalRangeError

if TYPE_CHECKING:
    from fairsim.schedulers.exact.udrf import JobInstance

PROPERTIES = (
    "sharing-incentive",
    "envy-freeness",
    "pareto-optimality",
    "strategy-proofness",
    "bottleneck-fairness",
    "single-resource-fairness",
    "population-monotonicity",
)
RTOL = 1e-6
#: Relative tolerance of :func:`verify`, the check after every exact solve.
CHECK_RTOL = 1e-6
#: Mechanisms that lexicographically maximise ``x_n a_n / w_n``
# (:mod:`fairsim.schedulers.exact.lexmaxmin`).
LEX = ("drfh", "c-drfh", "tsf", "lmm-mms")


def pooled(inst: Instance) -> Instance:
    """The one-server, unconstrained instance of the pooled mechanisms."""
    n_u = len(inst.user_ids)
    return replace(
        inst,
        server_ids=("pool",),
        capacity=inst.capacity.sum(axis=0)[None, :],
        eligible=np.ones((n_u, 1), dtype=bool),
    )


def _less(a: float, b: float) -> bool:
    """``a`` is below ``b`` beyond the tolerance."""
    return a < b * (1 - RTOL) - 1e-7


def _tasks_with(inst: Instance, n: int, bundles: np.ndarray) -> float:
    """Tasks user n runs with per-server resource bundles ``(n_servers, n_resources)``."""
    d = inst.demand[n]
    can = serving(inst)[n]
    need = d > 0
    per = np.where(can, (bundles[:, need] / d[need]).min(axis=1), 0.0)
    return float(min(per.sum(), inst.max_tasks[n]))


def _feasible_rows(
    inst: Instance, users: np.ndarray, servers: np.ndarray, *, tdm: bool = False
) -> tuple[list, list]:
    a_ub, b_ub = [], []
    if tdm:  # PS-DSF eq. 10: sum_n x[n, l] / gamma[n, l] <= 1
        gamma = monopoly_tasks(inst.capacity, inst.demand)
        for srv in range(inst.capacity.shape[0]):
            row = np.where(servers == srv, 1.0 / np.maximum(gamma[users, servers], 1e-300), 0.0)
            if row.any():
                a_ub.append(row)
                b_ub.append(1.0)
    for srv in range(inst.capacity.shape[0]):
        for r in range(inst.capacity.shape[1]):
            row = np.where(servers == srv, inst.demand[users, r], 0.0)
            if row.any():
                a_ub.append(row)
                b_ub.append(inst.capacity[srv, r])
    for n in np.unique(users):
        if np.isfinite(inst.max_tasks[n]):
            a_ub.append((users == n).astype(float))
            b_ub.append(inst.max_tasks[n])
    return a_ub, b_ub


def is_lex_max_min(inst: Instance, x: np.ndarray, a: np.ndarray) -> bool:
    """Whether no user's share ``x_n a_n / w_n`` can grow without lowering a share not above it."""
    serve = serving(inst) & (a > 0)[:, None]
    users, servers = np.nonzero(serve)
    if len(users) == 0:
        return True
    tot = x.sum(axis=1)
    share = tot * a / inst.weight
    a_ub, b_ub = _feasible_rows(inst, users, servers)
    for n in np.unique(users):
        if tot[n] >= inst.max_tasks[n] * (1 - RTOL):
            continue
        rows, rhs = list(a_ub), list(b_ub)
        for m in np.unique(users):
            if share[m] <= share[n] * (1 + RTOL) + 1e-9:
                rows.append(-(users == m).astype(float) * a[m] / inst.weight[m])
                rhs.append(-share[m] * (1 - 1e-7))
        res = linprog(-(users == n).astype(float), A_ub=np.array(rows), b_ub=rhs, method="highs")
        if res.status == 0 and _less(tot[n], -res.fun):
            return False
    return True


def sharing_incentive(inst: Instance, x: np.ndarray) -> bool:
    """Every user runs at least its weight-proportional slice of every server (PS-DSF III-B)."""
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    fair = np.minimum(gamma.sum(axis=1) * inst.weight / inst.weight.sum(), inst.max_tasks)
    return not any(_less(x[n].sum(), fair[n]) for n in range(len(fair)))


def envy_free(inst: Instance, x: np.ndarray) -> bool:
    """No user runs more tasks with another's bundles scaled by ``w_n / w_m``."""
    n_u = x.shape[0]
    for n in range(n_u):
        for m in range(n_u):
            if m == n:
                continue
            bundles = x[m][:, None] * inst.demand[m][None, :] * inst.weight[n] / inst.weight[m]
            if _less(x[n].sum(), _tasks_with(inst, n, bundles)):
                return False
    return True


def pareto_optimal(inst: Instance, x: np.ndarray, *, tdm: bool = False) -> bool:
    """No feasible allocation dominates ``x`` (LP: max total with every user at least its tasks).

    With ``tdm`` feasibility is PS-DSF's time-division constraint (eq. 10), the set in which the
    paper's Theorem 3 claims Pareto optimality for TDM.
    """
    users, servers = np.nonzero(serving(inst))
    if len(users) == 0:
        return True
    a_ub, b_ub = _feasible_rows(inst, users, servers, tdm=tdm)
    tot = x.sum(axis=1)
    for n in np.unique(users):
        a_ub.append(-(users == n).astype(float))
        b_ub.append(-tot[n] * (1 - 1e-9))
    res = linprog(-np.ones(len(users)), A_ub=np.array(a_ub), b_ub=b_ub, method="highs")
    return not (res.status == 0 and _less(tot.sum(), -res.fun))


def bottleneck_resource(inst: Instance, *, single: bool = False) -> int | None:
    """A resource every user requests dominantly from every server that serves it, if any.

    With ``single`` it must also be the only resource any user demands.
    """
    serve = serving(inst)
    n_r = inst.demand.shape[1]
    for r in range(n_r):
        ok = True
        for n in range(inst.demand.shape[0]):
            d = inst.demand[n]
            if single and (d[np.arange(n_r) != r] > 0).any():
                ok = False
                break
            if d[r] <= 0:
                ok = False
                break
            for srv in np.nonzero(serve[n])[0]:
                frac = np.where(
                    d > 0, d / np.where(inst.capacity[srv] > 0, inst.capacity[srv], 1), 0
                )
                if frac[r] < frac.max() * (1 - 1e-12):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return r
    return None


def check(
    name: str,
    inst: Instance,
    rng: np.random.Generator,
    *,
    misreports: int = 8,
) -> dict[str, bool | None]:
    """Check every property of mechanism ``name`` (an ``EXACT`` name or ``psdsf-tdm``) on ``inst``.

    Returns
    -------
    dict
        ``{property: True (holds) | False (violated) | None (not applicable)}``.
    """
    from fairsim.schedulers.exact import POOLED, solve_exact

    if name in POOLED:
        inst = pooled(inst)
    if name == "psdsf-tdm":  # PS-DSF under time-division multiplexing (eq. 10)
        solve: Callable[[Instance], np.ndarray] = lambda i: solve_exact("psdsf", i, "tdm")  # noqa: E731
    else:
        solve = lambda i: solve_exact(name, i)  # noqa: E731
    x = solve(inst)
    out: dict[str, bool | None] = {
        "sharing-incentive": sharing_incentive(inst, x),
        "envy-freeness": envy_free(inst, x),
        "pareto-optimality": pareto_optimal(inst, x, tdm=name == "psdsf-tdm"),
    }
    # strategy-proofness: one random user, random misreports
    n_u = x.shape[0]
    sp = True
    for _ in range(misreports):
        n = int(rng.integers(n_u))
        dem = inst.demand.copy()
        elig = inst.eligible.copy()
        if rng.random() < 0.7 or name in POOLED or elig.shape[1] == 1:
            bump = rng.random(dem.shape[1]) < 0.5
            dem[n] = dem[n] + bump * rng.uniform(0.1, 1.0, dem.shape[1]) * dem[n].max()
        else:
            keep = rng.random(elig.shape[1]) < 0.6
            elig[n] = elig[n] & keep
        lie = replace(inst, demand=dem, eligible=elig)
        y = solve(lie)
        bundles = y[n][:, None] * dem[n][None, :]
        if _less(x[n].sum(), _tasks_with(inst, n, bundles)):
            sp = False
            break
    out["strategy-proofness"] = sp
    r = bottleneck_resource(inst)
    out["bottleneck-fairness"] = None if r is None else is_lex_max_min(inst, x, inst.demand[:, r])
    r1 = bottleneck_resource(inst, single=True)
    out["single-resource-fairness"] = (
        None if r1 is None else is_lex_max_min(inst, x, inst.demand[:, r1])
    )
    if n_u >= 2:
        gone = int(rng.integers(n_u))
        keep = np.arange(n_u) != gone
        sub = replace(
            inst,
            user_ids=tuple(u for k, u in enumerate(inst.user_ids) if keep[k]),
            demand=inst.demand[keep],
            weight=inst.weight[keep],
            max_tasks=inst.max_tasks[keep],
            eligible=inst.eligible[keep],
        )
        y = solve(sub)
        out["population-monotonicity"] = not any(
            _less(y[k].sum(), x[j].sum()) for k, j in enumerate(np.nonzero(keep)[0])
        )
    else:
        out["population-monotonicity"] = None
    return out


# --- the check after every exact solve ---------------------------------------------------------


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
    bound that could run more than ``rtol * gamma[n, l]`` further tasks on a server that serves it.
    Every mechanism here except TDM PS-DSF leaves no such room (Pareto efficiency)."""
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(gamma > 0, room(inst, x) / gamma, 0.0)
    if (rel > rtol).any():
        u, k = (int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape))
        extra = room(inst, x)[u, k]
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
    # largest share among the users holding tasks on server l and demanding resource r
    top = (np.where(holds, share[:, None], 0.0)[:, :, None] * dem[:, None, :]).max(axis=0)
    free = valid & (x.sum(axis=1) < inst.max_tasks * (1 - rtol))
    ok = (dem[:, None, :] & full[None] & (share[:, None, None] >= top[None] * (1 - rtol))).any(2)
    bad = serving(inst) & free[:, None] & ~ok
    if bad.any():
        u, k = (int(i) for i in np.argwhere(bad)[0])
        return (
            f"user {inst.user_ids[u]!r} (share {share[u]:.6g}) has no saturated resource on "
            f"{inst.server_ids[k]!r} on which its share is the largest: not max-min fair"
        )
    return None


def lex_problem(
    inst: Instance, x: np.ndarray, a: np.ndarray, *, rtol: float = CHECK_RTOL
) -> str | None:
    """Whether ``x`` lexicographically maximises ``x_n a_n / w_n`` on several servers.

    For each distinct share level ``t`` of the users below their task bound, one LP maximises the
    total share of the users at ``t`` while every user at or below ``t`` keeps its share; if that
    total exceeds the current one by more than ``rtol``, some user at ``t`` could rise without
    lowering anyone not above it. One LP per level, solved rescaled
    (:func:`~fairsim.schedulers.exact.common.solve_lp`). Returns why not, or ``None``.
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
            np.concatenate(
                [inst.capacity.ravel(), -share[below] * (1 - FREEZE_SLACK), inst.max_tasks[bounded]]
            ),
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
    several servers also one LP per share level (:func:`lex_problem`);
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
    from fairsim.schedulers.exact import POOLED

    if name in POOLED:
        inst = pooled(inst)
    why = feasibility_problem(inst, x)
    if why is None and not (name == "psdsf" and sharing == "tdm"):
        why = room_problem(inst, x)
    if why is None:
        if name in ("drf", "af"):
            why = bottleneck_problem(inst, x, pooled_share_per_task(name, inst))
        elif name in LEX:
            a = share_per_task(name, inst)
            why = bottleneck_problem(inst, x, a)
            if why is None and inst.capacity.shape[0] > 1:
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
    from fairsim.schedulers.exact.udrf import dominant_shares, job_shares

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
    """:func:`udrf_problem`, raised as :class:`~fairsim.schedulers.instance.NumericalRangeError`.

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
