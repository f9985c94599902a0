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

A check needs several solves (the instance, the misreports, the instance without one user) and
LPs; when one of them has no answer fairsim can vouch for
(:class:`~fairsim.schedulers.exact.instance.NumericalRangeError`: out of float64's range, a solver
without an optimum, an allocation that fails the check after the solve), :func:`check` raises
:class:`Unverifiable`, naming the step and carrying the instance that failed, and no property of
that instance is reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
from scipy.optimize import linprog

from fairsim.schedulers.exact import POOLED, solve_exact
from fairsim.schedulers.exact.common import monopoly_tasks, serving
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError
from fairsim.schedulers.exact.pool import pooled

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


class Unverifiable(NumericalRangeError):
    """The properties of a mechanism cannot be checked on an instance (:func:`check`).

    Attributes
    ----------
    step : str
        The part of the check that failed: ``"allocation"``, ``"strategy-proofness: user 'u3'
        misreports its eligible servers"`` (or ``its demand``), ``"population-monotonicity: user
        'u1' leaves"``, or the property whose LP failed (``"pareto-optimality"``, ...).
    instance : Instance
        The instance whose solve or LP failed (for a misreport, the misreported instance);
        :func:`instance_data` turns it into a ``fairsim solve`` input.
    reason : str
        The one-line error of the failed solve or LP.
    """

    def __init__(self, step: str, instance: Instance, reason: str) -> None:
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.instance = instance
        self.reason = reason


def instance_data(inst: Instance) -> dict[str, Any]:
    """``inst`` as a ``fairsim solve`` input mapping (docs/mechanisms.md), the inverse of
    :func:`~fairsim.schedulers.exact.instance.parse_instance`.

    ``weight`` is written when it is not 1, ``max_tasks`` when it is finite, ``eligible`` when a
    user may not run on every server (an empty list: on none); a queue tree as ``queues`` (amounts
    in pool units) and each user's ``queue``.
    """
    users: list[dict[str, Any]] = []
    for n, uid in enumerate(inst.user_ids):
        u: dict[str, Any] = {"id": uid, "demand": [float(v) for v in inst.demand[n]]}
        if inst.weight[n] != 1:
            u["weight"] = float(inst.weight[n])
        if np.isfinite(inst.max_tasks[n]):
            u["max_tasks"] = float(inst.max_tasks[n])
        if not inst.eligible[n].all():
            u["eligible"] = [
                s for s, ok in zip(inst.server_ids, inst.eligible[n], strict=True) if ok
            ]
        if inst.queues is not None and inst.queues.user_queue[n] >= 0:
            u["queue"] = inst.queues.ids[int(inst.queues.user_queue[n])]
        users.append(u)
    servers = [
        {"id": sid, "capacity": [float(v) for v in inst.capacity[k]]}
        for k, sid in enumerate(inst.server_ids)
    ]
    data = {"resources": list(inst.resources), "servers": servers, "users": users}
    if inst.queues is not None:
        data["queues"] = inst.queues.to_data()
    return data


def _raised(a_ub: list, b_ub: list, xv: np.ndarray) -> list:
    """``b_ub`` raised to what the allocation ``xv`` uses where that is more (row by row).

    An allocation that passed the check after its solve uses at most ``1 + 1e-6`` times a
    capacity (``CHECK_RTOL``; a solver's answer by its feasibility tolerance, 1e-8 to 1e-7), so a
    property LP that keeps every user at or above it is feasible by construction with these
    bounds, as for :func:`~fairsim.schedulers.exact.verification.lex_problem`. With the
    instance's own capacities such an LP was infeasible (``bmf`` fills DRFH Fig. 1's pooled CPU
    to 14.000000056 of 14) and the property was counted as holding.
    """
    return np.maximum(np.asarray(b_ub, dtype=float), np.array(a_ub) @ xv).tolist()


def _optimal(res: Any, what: str) -> Any:
    """``res`` of ``linprog`` if HiGHS found an optimum.

    Raises
    ------
    NumericalRangeError
        Otherwise: a property LP is feasible by construction (the allocation satisfies it,
        :func:`_raised`), so no optimum means no answer to vouch for, not a property that holds.
    """
    if res.status != 0:
        raise NumericalRangeError(f"{what} LP: HiGHS did not find an optimum ({res.message})")
    return res


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
    return _lex_improvement(inst, x, a) is None


def _lex_improvement(inst: Instance, x: np.ndarray, a: np.ndarray) -> Evidence | None:
    """The first user whose share ``x_n a_n / w_n`` can grow without lowering a share not above
    it: ``{"user", "tasks", "could_run"}``, or ``None`` (lexicographically max-min fair)."""
    serve = serving(inst) & (a > 0)[:, None]
    users, servers = np.nonzero(serve)
    if len(users) == 0:
        return None
    tot = x.sum(axis=1)
    share = tot * a / inst.weight
    a_ub, b_ub = _feasible_rows(inst, users, servers)
    b_ub = _raised(a_ub, b_ub, x[users, servers])
    for n in np.unique(users):
        if tot[n] >= inst.max_tasks[n] * (1 - RTOL):
            continue
        rows, rhs = list(a_ub), list(b_ub)
        for m in np.unique(users):
            if share[m] <= share[n] * (1 + RTOL) + 1e-9:
                rows.append(-(users == m).astype(float) * a[m] / inst.weight[m])
                rhs.append(-share[m] * (1 - 1e-7))
        res = linprog(-(users == n).astype(float), A_ub=np.array(rows), b_ub=rhs, method="highs")
        best = -_optimal(res, "lexicographic max-min property").fun
        if _less(tot[n], best):
            return {"user": inst.user_ids[n], "tasks": float(tot[n]), "could_run": float(best)}
    return None


#: What a violated property's counterexample says: the users involved and the amounts.
Evidence = dict[str, Any]


def sharing_incentive_violations(inst: Instance, x: np.ndarray) -> list[Evidence]:
    """The users below their weight-proportional slice of every server (PS-DSF III-B), with
    their tasks and the tasks of that slice (``fair_tasks``); empty when the property holds."""
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    fair = np.minimum(gamma.sum(axis=1) * inst.weight / inst.weight.sum(), inst.max_tasks)
    return [
        {"user": inst.user_ids[n], "tasks": float(x[n].sum()), "fair_tasks": float(fair[n])}
        for n in range(len(fair))
        if _less(x[n].sum(), fair[n])
    ]


def sharing_incentive(inst: Instance, x: np.ndarray) -> bool:
    """Every user runs at least its weight-proportional slice of every server (PS-DSF III-B)."""
    return not sharing_incentive_violations(inst, x)


def envy_violation(inst: Instance, x: np.ndarray) -> Evidence | None:
    """The first user that runs more tasks with another's bundles scaled by ``w_n / w_m``:
    ``{"user", "envies", "tasks", "tasks_with_their_bundles"}``, or ``None``."""
    n_u = x.shape[0]
    for n in range(n_u):
        for m in range(n_u):
            if m == n:
                continue
            bundles = x[m][:, None] * inst.demand[m][None, :] * inst.weight[n] / inst.weight[m]
            theirs = _tasks_with(inst, n, bundles)
            if _less(x[n].sum(), theirs):
                return {
                    "user": inst.user_ids[n],
                    "envies": inst.user_ids[m],
                    "tasks": float(x[n].sum()),
                    "tasks_with_their_bundles": theirs,
                }
    return None


def envy_free(inst: Instance, x: np.ndarray) -> bool:
    """No user runs more tasks with another's bundles scaled by ``w_n / w_m``."""
    return envy_violation(inst, x) is None


def pareto_optimal(inst: Instance, x: np.ndarray, *, tdm: bool = False) -> bool:
    """No feasible allocation dominates ``x`` (LP: max total with every user at least its tasks).

    With ``tdm`` feasibility is PS-DSF's time-division constraint (eq. 10), the set in which the
    paper's Theorem 3 claims Pareto optimality for TDM.
    """
    return _pareto_improvement(inst, x, tdm=tdm) is None


def _pareto_improvement(inst: Instance, x: np.ndarray, *, tdm: bool = False) -> dict | None:
    """Every user's tasks in a feasible allocation that dominates ``x``, or ``None``."""
    users, servers = np.nonzero(serving(inst))
    if len(users) == 0:
        return None
    a_ub, b_ub = _feasible_rows(inst, users, servers, tdm=tdm)
    tot = x.sum(axis=1)
    b_ub = _raised(a_ub, b_ub, x[users, servers])
    for n in np.unique(users):
        a_ub.append(-(users == n).astype(float))
        b_ub.append(-tot[n] * (1 - 1e-9))
    res = linprog(-np.ones(len(users)), A_ub=np.array(a_ub), b_ub=b_ub, method="highs")
    if not _less(tot.sum(), -_optimal(res, "Pareto-optimality").fun):
        return None
    per = np.zeros(len(inst.user_ids))
    np.add.at(per, users, res.x)
    return {u: float(per[n]) for n, u in enumerate(inst.user_ids)}


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


@contextlib.contextmanager
def _step(step: str, inst: Instance) -> Iterator[None]:
    """Turn a :class:`NumericalRangeError` inside the block into :class:`Unverifiable`."""
    try:
        yield
    except NumericalRangeError as exc:
        raise Unverifiable(step, inst, str(exc)) from None


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

    Raises
    ------
    Unverifiable
        As :func:`check_with_evidence`, which this calls.
    """
    return check_with_evidence(name, inst, rng, misreports=misreports)[0]


def check_with_evidence(
    name: str,
    inst: Instance,
    rng: np.random.Generator,
    *,
    misreports: int = 8,
) -> tuple[dict[str, bool | None], dict[str, Evidence]]:
    """:func:`check`, with what each violation consists of.

    Returns
    -------
    results : dict
        ``{property: True (holds) | False (violated) | None (not applicable)}``.
    evidence : dict
        For each violated property: the users involved and the amounts (task counts), plus
        ``allocation`` (every user's tasks). Sharing incentive: ``users`` below their slice
        (``user``, ``tasks``, ``fair_tasks``); envy-freeness: ``user``, ``envies``, ``tasks``,
        ``tasks_with_their_bundles``; Pareto optimality: ``dominating_tasks`` (per user, each at
        least its tasks); strategy-proofness: ``user``, ``misreport`` (``demand`` or
        ``eligible``), the reported ``demand`` and ``eligible`` servers, ``true_demand``,
        ``tasks`` (truthful) and ``tasks_when_lying`` (true tasks it runs with the bundles the
        lie got it); bottleneck and single-resource fairness: ``resource``, ``user`` whose share
        can rise, its ``tasks`` and ``could_run``; population monotonicity: ``leaves``, and the
        ``users`` that run fewer tasks (``user``, ``tasks``, ``tasks_after``).

    Raises
    ------
    Unverifiable
        When a solve or a property LP has no answer fairsim can vouch for
        (:class:`~fairsim.schedulers.exact.instance.NumericalRangeError`), with the step and the
        instance that failed.
    """
    if name in POOLED:
        inst = pooled(inst)
    if name == "psdsf-tdm":  # PS-DSF under time-division multiplexing (eq. 10)
        solve: Callable[[Instance], np.ndarray] = lambda i: solve_exact("psdsf", i, "tdm")  # noqa: E731
    else:
        solve = lambda i: solve_exact(name, i)  # noqa: E731
    with _step("allocation", inst):
        x = solve(inst)
    ev: dict[str, Evidence] = {}
    si = sharing_incentive_violations(inst, x)
    envy = envy_violation(inst, x)
    out: dict[str, bool | None] = {"sharing-incentive": not si, "envy-freeness": envy is None}
    if si:
        ev["sharing-incentive"] = {"users": si}
    if envy is not None:
        ev["envy-freeness"] = envy
    with _step("pareto-optimality", inst):
        better = _pareto_improvement(inst, x, tdm=name == "psdsf-tdm")
        out["pareto-optimality"] = better is None
        if better is not None:
            ev["pareto-optimality"] = {"dominating_tasks": better}
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
            lied = "its demand"
        else:
            keep = rng.random(elig.shape[1]) < 0.6
            elig[n] = elig[n] & keep
            lied = "its eligible servers"
        lie = replace(inst, demand=dem, eligible=elig)
        with _step(f"strategy-proofness: user {inst.user_ids[n]!r} misreports {lied}", lie):
            y = solve(lie)
        bundles = y[n][:, None] * dem[n][None, :]
        gained = _tasks_with(inst, n, bundles)
        if _less(x[n].sum(), gained):
            sp = False
            ev["strategy-proofness"] = {
                "user": inst.user_ids[n],
                "misreport": "demand" if lied == "its demand" else "eligible",
                "demand": [float(v) for v in dem[n]],
                "eligible": [s for s, ok in zip(lie.server_ids, elig[n], strict=True) if ok],
                "true_demand": [float(v) for v in inst.demand[n]],
                "tasks": float(x[n].sum()),
                "tasks_when_lying": gained,
            }
            break
    out["strategy-proofness"] = sp
    for prop, single in (("bottleneck-fairness", False), ("single-resource-fairness", True)):
        r = bottleneck_resource(inst, single=single)
        with _step(prop, inst):
            rise = None if r is None else _lex_improvement(inst, x, inst.demand[:, r])
            out[prop] = None if r is None else rise is None
        if r is not None and rise is not None:
            ev[prop] = {"resource": inst.resources[r], **rise}
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
        with _step(f"population-monotonicity: user {inst.user_ids[gone]!r} leaves", sub):
            y = solve(sub)
        fewer = [
            {"user": inst.user_ids[j], "tasks": float(x[j].sum()), "tasks_after": float(y[k].sum())}
            for k, j in enumerate(np.nonzero(keep)[0])
            if _less(y[k].sum(), x[j].sum())
        ]
        out["population-monotonicity"] = not fewer
        if fewer:
            ev["population-monotonicity"] = {"leaves": inst.user_ids[gone], "users": fewer}
    else:
        out["population-monotonicity"] = None
    alloc = {u: float(x[n].sum()) for n, u in enumerate(inst.user_ids)}
    return out, {p: {**e, "allocation": alloc} for p, e in ev.items()}
