"""Fairness properties of hierarchical allocations: ``hdrf`` and the two wrong variants the H-DRF
paper discusses (collapsed hierarchies, naive H-DRF), on instances with a queue tree.

Definitions (utility = tasks a user runs; ``g`` a node's guaranteed share,
:func:`~fairsim.schedulers.exact.hdrf.guaranteed_shares`: the product of ``w / sum w`` over its
demanding siblings at every level, Bhattacharya et al. Section 2):

* hierarchical share guarantee: every node (queue or user) with a user below it that is below
  its ``max_tasks`` holds a dominant share of the pool, over its whole subtree's usage, of at
  least ``g`` (on one resource: every demanding node gets at least its weighted part of what its
  parent is guaranteed; for a user, at least its slice of the hierarchy's static partition);
* starvation freedom (the paper's dynamic setting): after the tasks of one user finish (all of
  them, or half), the mechanism hands the freed resources out again from the remaining
  allocation (:func:`~fairsim.schedulers.exact.hdrf.refill`, no preemption) and the result still
  meets the hierarchical share guarantee (a count, not a theorem: without preemption H-DRF too
  can leave a node below it where nothing more fits; docs/hdrf.md gives an instance);
* Pareto optimality, strategy-proofness (a user raises some entries of its demand vector; its
  *true* tasks are compared), population monotonicity (a user leaves), as for the flat
  mechanisms (:mod:`fairsim.schedulers.exact.properties`), the Pareto LP with the queues' limits;
* sharing incentive and envy-freeness in their flat sense (``w_n / sum w`` of the pool; another
  user's bundle scaled by the weight ratio): what a hierarchy gives up by design, reported as
  found. Bottleneck and single-resource fairness in their flat sense do not apply.

:func:`hierarchy_table` checks ``hdrf``, ``hdrf-collapsed`` and ``hdrf-naive`` on the H-DRF
examples (:mod:`fairsim.schedulers.exact.hdrf_examples`) followed by random queue trees
(:func:`random_tree_instance`), for :func:`~fairsim.schedulers.exact.property_table.property_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linprog

from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.hdrf import (
    build_tree,
    guaranteed_shares,
    refill,
    solve_collapsed,
    solve_naive,
)
from fairsim.schedulers.exact.hdrf_examples import EXAMPLES
from fairsim.schedulers.exact.instance import Instance
from fairsim.schedulers.exact.pool import pooled
from fairsim.schedulers.exact.properties import (
    PROPERTIES,
    RTOL,
    Evidence,
    _less,
    _optimal,
    _step,
    envy_violation,
    property_rows,
    sharing_incentive_violations,
    without_user,
)

#: The properties of a hierarchical row, in the order of its table.
HIER_PROPERTIES = (
    "hierarchical-share-guarantee",
    "starvation-freedom",
    "pareto-optimality",
    "strategy-proofness",
    "population-monotonicity",
    "sharing-incentive",
    "envy-freeness",
)
#: The rows of the hierarchical table: ``hdrf`` and the two wrong variants (not ``fairsim
#: solve`` mechanisms), with the allocator and the refill rule of each.
VARIANTS: dict[str, tuple[Callable[[Instance], np.ndarray], str]] = {
    "hdrf": (lambda inst: solve_exact("hdrf", inst), "hdrf"),
    "hdrf-collapsed": (solve_collapsed, "collapsed"),
    "hdrf-naive": (solve_naive, "naive"),
}
#: The H-DRF examples that start the hierarchical family (every one, in order).
HIER_LITERATURE: list[dict[str, Any]] = [ex.instance for ex in EXAMPLES]
#: Ranges (inclusive) and probabilities of :func:`random_tree_instance`.
TREE_USERS = (2, 5)
TREE_QUEUES = (0, 3)
TREE_RESOURCES = (1, 3)
TREE_CAPACITY = (1, 12)
TREE_DEMAND = (0, 4)
TREE_WEIGHTS = (1, 3)
TREE_WEIGHT_P = 0.4  # a queue or user with a weight drawn from TREE_WEIGHTS (else 1)
NESTED_P = 0.5  # a queue (not the first) below an earlier one (else at the root)
QUEUED_P = 0.8  # a user in a queue (when there are queues; else at the root)
MAX_TASKS_P = 0.3  # a user with max_tasks drawn from 0-8


def random_tree_instance(rng: np.random.Generator) -> dict[str, Any]:
    """A small random queue tree as ``fairsim solve`` input (one server; ranges above)."""
    n_r = int(rng.integers(TREE_RESOURCES[0], TREE_RESOURCES[1] + 1))
    n_q = int(rng.integers(TREE_QUEUES[0], TREE_QUEUES[1] + 1))
    n_u = int(rng.integers(TREE_USERS[0], TREE_USERS[1] + 1))
    cap = rng.integers(TREE_CAPACITY[0], TREE_CAPACITY[1] + 1, n_r).astype(float).tolist()

    def weight() -> int:
        return (
            int(rng.integers(TREE_WEIGHTS[0], TREE_WEIGHTS[1] + 1))
            if (rng.random() < TREE_WEIGHT_P)
            else 1
        )

    queues: list[dict[str, Any]] = []
    for i in range(n_q):
        q: dict[str, Any] = {"id": f"q{i}", "weight": weight()}
        if i and rng.random() < NESTED_P:
            q["parent"] = f"q{int(rng.integers(0, i))}"
        queues.append(q)
    users = []
    for n in range(n_u):
        d = rng.integers(TREE_DEMAND[0], TREE_DEMAND[1] + 1, n_r).astype(float)
        if not d.any():
            d[int(rng.integers(n_r))] = 1.0
        u: dict[str, Any] = {"id": f"u{n}", "demand": d.tolist(), "weight": weight()}
        if n_q and rng.random() < QUEUED_P:
            u["queue"] = f"q{int(rng.integers(0, n_q))}"
        if rng.random() < MAX_TASKS_P:
            u["max_tasks"] = int(rng.integers(0, 9))
        users.append(u)
    return {
        "resources": [f"r{k}" for k in range(n_r)],
        "servers": [{"id": "pool", "capacity": cap}],
        "queues": queues,
        "users": users,
    }


def _node_names(inst: Instance) -> list[str]:
    """Names of the solver's nodes (root, queues, users)."""
    queues = list(inst.queues.ids) if inst.queues is not None else []
    return ["root", *queues, *inst.user_ids]


def share_guarantee_violations(inst: Instance, x: np.ndarray) -> list[Evidence]:
    """The nodes below their hierarchical share guarantee (module docstring), each with its
    ``share`` (dominant share of its subtree's usage) and ``guaranteed_share``; empty when the
    property holds. ``x``: tasks per user, shape (n_users,), on the pool."""
    t = build_tree(pooled(inst))
    g = guaranteed_shares(inst)
    xs = np.asarray(x, dtype=float).reshape(-1)
    use = t.member.astype(float) @ (xs[:, None] * t.share)  # (K, R) over the users below
    share = use.max(axis=1)
    free = t.servable & (xs < t.max_tasks * (1 - RTOL))
    needs = np.asarray((t.member & free[None, :]).any(axis=1), dtype=bool)
    names = _node_names(inst)
    return [
        {"node": names[k], "share": float(share[k]), "guaranteed_share": float(g[k])}
        for k in range(1, len(t.parent))
        if needs[k] and _less(share[k], g[k])
    ]


def _pareto_improvement(inst: Instance, x: np.ndarray) -> dict[str, float] | None:
    """Every user's tasks in a feasible allocation (pool and limits) that dominates ``x``."""
    p = pooled(inst)
    t = build_tree(p)
    f = t.first_leaf
    n_u = len(p.user_ids)
    rows, rhs = [], []
    caps = np.vstack([p.capacity.sum(axis=0)[None, :], _limits(p)])
    members = np.vstack([np.ones((1, n_u), dtype=bool), t.member[1:f]])
    for k in range(caps.shape[0]):
        for r in range(caps.shape[1]):
            row = members[k] * p.demand[:, r]
            if np.isfinite(caps[k, r]) and row.any():
                rows.append(row)
                rhs.append(max(float(caps[k, r]), float(row @ x)))  # x feasible by construction
    for n in range(n_u):
        if np.isfinite(p.max_tasks[n]):
            rows.append(np.eye(n_u)[n])
            rhs.append(max(float(p.max_tasks[n]), float(x[n])))
        rows.append(-np.eye(n_u)[n])
        rhs.append(-float(x[n]) * (1 - 1e-9))
    servable = t.servable
    bounds = [(0, None) if servable[n] else (0, 0) for n in range(n_u)]
    res = linprog(-np.ones(n_u), A_ub=np.array(rows), b_ub=rhs, bounds=bounds, method="highs")
    best = _optimal(res, "Pareto-optimality")
    if not _less(float(x.sum()), -best.fun):
        return None
    return {u: float(v) for u, v in zip(p.user_ids, best.x, strict=True)}


def _limits(inst: Instance) -> np.ndarray:
    """The queues' limits, shape (n_queues, n_resources) (``inf`` for none)."""
    if inst.queues is None:
        return np.zeros((0, inst.demand.shape[1]))
    return inst.queues.limit


def check_hierarchy(
    name: str, inst: Instance, rng: np.random.Generator, *, misreports: int = 8
) -> tuple[dict[str, bool | None], dict[str, Evidence]]:
    """Every property of :data:`HIER_PROPERTIES` (and ``None`` for the flat bottleneck and
    single-resource fairness) of row ``name`` (a key of :data:`VARIANTS`) on ``inst``.

    Returns
    -------
    results : dict
        ``{property: True | False | None}``.
    evidence : dict
        Per violated property: hierarchical share guarantee, the ``nodes`` below their
        guaranteed share (``node``, ``share``, ``guaranteed_share``); starvation freedom, the
        user whose tasks finished (``releases``, ``tasks_released``), the ``nodes`` below their
        guarantee after the refill and the ``allocation_after``; the others as
        :func:`~fairsim.schedulers.exact.properties.check_with_evidence`; plus ``allocation``.

    Raises
    ------
    Unverifiable
        When a solve or an LP has no answer fairsim can vouch for.
    """
    solve, variant = VARIANTS[name]
    p = pooled(inst)
    with _step("allocation", inst):
        x = solve(inst)[:, 0]
    out: dict[str, bool | None] = {prop: None for prop in (*PROPERTIES, *HIER_PROPERTIES)}
    ev: dict[str, Evidence] = {}
    below = share_guarantee_violations(inst, x)
    out["hierarchical-share-guarantee"] = not below
    if below:
        ev["hierarchical-share-guarantee"] = {"nodes": below}
    n_u = len(x)
    n = int(rng.integers(n_u))
    part = float(rng.choice([1.0, 0.5]))
    start = x.copy()
    start[n] *= 1 - part
    with _step(f"starvation-freedom: the tasks of user {inst.user_ids[n]!r} finish", inst):
        y = refill(inst, start, variant)[:, 0]
    starved = share_guarantee_violations(inst, y)
    out["starvation-freedom"] = not starved
    if starved:
        ev["starvation-freedom"] = {
            "releases": inst.user_ids[n],
            "tasks_released": float(x[n] - start[n]),
            "nodes": starved,
            "allocation_after": {u: float(v) for u, v in zip(inst.user_ids, y, strict=True)},
        }
    with _step("pareto-optimality", inst):
        better = _pareto_improvement(inst, x)
    out["pareto-optimality"] = better is None
    if better is not None:
        ev["pareto-optimality"] = {"dominating_tasks": better}
    sp = True
    for _ in range(misreports):
        m = int(rng.integers(n_u))
        dem = inst.demand.copy()
        bump = rng.random(dem.shape[1]) < 0.5
        dem[m] = dem[m] + bump * rng.uniform(0.1, 1.0, dem.shape[1]) * dem[m].max()
        lie = replace(inst, demand=dem)
        with _step(f"strategy-proofness: user {inst.user_ids[m]!r} misreports its demand", lie):
            z = solve(lie)[:, 0]
        need = inst.demand[m] > 0
        gained = float(min((z[m] * dem[m][need] / inst.demand[m][need]).min(), p.max_tasks[m]))
        if _less(x[m], gained):
            sp = False
            ev["strategy-proofness"] = {
                "user": inst.user_ids[m],
                "misreport": "demand",
                "demand": [float(v) for v in dem[m]],
                "true_demand": [float(v) for v in inst.demand[m]],
                "tasks": float(x[m]),
                "tasks_when_lying": gained,
            }
            break
    out["strategy-proofness"] = sp
    if n_u >= 2:
        gone = int(rng.integers(n_u))
        sub = without_user(inst, gone)
        with _step(f"population-monotonicity: user {inst.user_ids[gone]!r} leaves", sub):
            z = solve(sub)[:, 0]
        keep = np.flatnonzero(np.arange(n_u) != gone)
        fewer = [
            {"user": inst.user_ids[j], "tasks": float(x[j]), "tasks_after": float(z[k])}
            for k, j in enumerate(keep)
            if _less(z[k], x[j])
        ]
        out["population-monotonicity"] = not fewer
        if fewer:
            ev["population-monotonicity"] = {"leaves": inst.user_ids[gone], "users": fewer}
    si = sharing_incentive_violations(p, x[:, None])
    out["sharing-incentive"] = not si
    if si:
        ev["sharing-incentive"] = {"users": si}
    envy = envy_violation(p, x[:, None])
    out["envy-freeness"] = envy is None
    if envy is not None:
        ev["envy-freeness"] = envy
    alloc = {u: float(v) for u, v in zip(inst.user_ids, x, strict=True)}
    return out, {prop: {**e, "allocation": alloc} for prop, e in ev.items()}


def hierarchy_table(
    n_instances: int,
    seed: int,
    out: Path | None,
    *,
    instances: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """The rows ``hdrf``, ``hdrf-collapsed``, ``hdrf-naive`` of the property table, as
    :func:`~fairsim.schedulers.exact.property_table.property_table` returns its rows.

    The instances are the H-DRF examples (:data:`HIER_LITERATURE`) then random queue trees
    (:func:`random_tree_instance`), ``n_instances`` in all, drawn from a generator of their own
    (``SeedSequence(seed)``'s first child: the flat rows' draws do not move); or ``instances``
    (``fairsim properties --instance``). Counterexamples go to ``out/<row>--<property>.json``
    (replayable with ``fairsim solve hdrf``), unverifiable instances to
    ``out/<row>--unverifiable-<instance>.json``.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    if instances is not None:
        datas = instances
    else:
        lit = HIER_LITERATURE[:n_instances]
        datas = lit + [random_tree_instance(rng) for _ in range(n_instances - len(lit))]
    props = (*PROPERTIES, *HIER_PROPERTIES)
    return property_rows(VARIANTS, props, datas, check_hierarchy, out, rng)


def describe_hierarchy(rows: dict[str, dict[str, Any]], *, given: bool = False) -> str:
    """What the hierarchical rows were checked on, in words (under the table); ``given``: on
    the caller's instances (``fairsim properties --instance``), with their own queue trees."""
    n = max(
        (row["pareto-optimality"]["checked"] + len(row["unverifiable"]) for row in rows.values()),
        default=0,
    )
    variants = (
        "hdrf-collapsed and hdrf-naive are the paper's wrong variants, shown for comparison "
        "(docs/hdrf.md). Sharing incentive and envy-freeness are the flat notions, which a "
        "hierarchy gives up by design."
    )
    if given:
        which = (
            "the given instance with its queue tree"
            if n == 1
            else (f"the {n} given instances with their queue trees")
        )
        return (
            f"hdrf is checked on {which} (the flat mechanisms above on the same users without "
            "it). " + variants
        )
    lit = min(n, len(HIER_LITERATURE))
    return (
        f"hdrf is checked on {n} instance{'s' if n != 1 else ''} with queue trees, not on the "
        f"instances described below: the {lit} H-DRF examples "
        f"({', '.join(ex.name for ex in EXAMPLES[:lit])}), then random trees ({TREE_USERS[0]}-"
        f"{TREE_USERS[1]} users, {TREE_QUEUES[0]}-{TREE_QUEUES[1]} queues, {TREE_RESOURCES[0]}-"
        f"{TREE_RESOURCES[1]} resources on one pool, integer capacities {TREE_CAPACITY[0]}-"
        f"{TREE_CAPACITY[1]} and demands {TREE_DEMAND[0]}-{TREE_DEMAND[1]}, weights "
        f"{TREE_WEIGHTS[0]}-{TREE_WEIGHTS[1]} for {TREE_WEIGHT_P:.0%} of queues and users, "
        f"max_tasks 0-8 for {MAX_TASKS_P:.0%} of users; the same seed, its own draws). " + variants
    )
