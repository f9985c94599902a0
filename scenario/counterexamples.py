"""The property checker's strategy-proofness counterexamples, replayed as dynamic runs.

``fairsim properties`` finds static instances on which a user gains by misreporting its demand
(``<mechanism>--strategy-proofness.json``; :mod:`fairsim.schedulers.exact.properties`). Its
utility is the static one of the DRF and DRFH papers (Ghodsi et al., NSDI 2011, Section 3;
Wang, Li and Liang, DRFH, Section IV-C): the *true* tasks the user can run with the bundles its
lie got it, ``x' = min_r y d'_r / d_r`` for ``y`` declared tasks of declared demand ``d'`` and
true demand ``d``. A lie then pays in one of two ways:

``count``
    the mechanism gives the liar more *declared* tasks than it gave the truthful user
    (``y > x``; Bonald and Roberts, Section 3: PF gives the liar 3/4 instead of 2/3);
``repack``
    it gives fewer declared tasks (``y <= x``) whose enlarged bundles hold more true tasks
    (``x' > x``) only if the user repacks them into tasks of its true demand.

:func:`replay_counterexample` runs the instance as a dynamic run: each user submits enough
tasks of its demand at 0 s to saturate the pool alone, each lasting 100 s, on the instance's
servers with their capacities times ``scale`` (one pooled server for the mechanisms the checker
solves pooled, such as ``bmf``; :data:`~fairsim.schedulers.exact.pool.POOLED`), and the liar's
tasks declare the reported demand and occupy it
(``fairsim strategy``'s ``inflate``: a task runs in its reservation, it is not repacked). Its
utility is the liar's tasks completed in the first wave (by 150 s). A ``count`` lie can pay in
that run; a ``repack`` lie cannot, since a reservation runs one task.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import numpy as np

from fairsim.errors import ConfigError
from fairsim.schedulers.exact.pool import POOLED

#: Run time of every task of a replay, seconds; the replay's horizon is 1.5 times it (one wave).
RUN_S = 100.0


class Replay(NamedTuple):
    """:func:`replay_counterexample`'s answer: the liar's tasks, static and dynamic.

    Attributes
    ----------
    kind : {"count", "repack"}
        How the static lie pays (the module docstring).
    static_truthful, static_declared, static_true : float
        The exact mechanism's tasks of the liar: truthful (``x``), declared tasks under the lie
        (``y``) and the true tasks its lied bundles hold (``x'``), per unit of ``scale``.
    truthful, lying : int
        The liar's tasks completed in the dynamic run's first wave, truthful and lying (the
        dynamic ``x`` and ``y`` at ``scale``).
    """

    kind: Literal["count", "repack"]
    static_truthful: float
    static_declared: float
    static_true: float
    truthful: int
    lying: int


def replay_counterexample(
    counterexample: dict[str, Any], scheduler: str, *, scale: float = 20.0
) -> Replay:
    """Replay a strategy-proofness counterexample of ``fairsim properties`` as a dynamic run.

    Parameters
    ----------
    counterexample : dict
        The JSON the checker saves: a ``fairsim solve`` instance with two resources, unweighted
        or weighted users, and ``violation`` (``mechanism``, ``user``, ``misreport`` =
        ``"demand"``, the reported ``demand``). The exact mechanism is ``violation.mechanism``.
    scheduler : str
        The online scheduler that runs it (a registered name, e.g. ``"pf"``).
    scale : float > 0
        Every server's capacity is multiplied by ``scale``: the exact tasks times ``scale`` are
        what the whole tasks of the run approach.

    Returns
    -------
    Replay

    Raises
    ------
    ConfigError
        When the counterexample is not a demand misreport on two resources of unconstrained,
        unbounded users, or ``scale`` is not positive (one line naming the field).
    """
    from fairsim.scenario.api import simulate
    from fairsim.schedulers.solve import solve

    violation = counterexample.get("violation") or {}
    users = counterexample["users"]
    if violation.get("misreport") != "demand":
        raise ConfigError(
            f"violation.misreport: {violation.get('misreport')!r}, expected 'demand' "
            "(a strategy-proofness counterexample of fairsim properties)"
        )
    if any(u.get("eligible") is not None or u.get("max_tasks") is not None for u in users):
        raise ConfigError(
            "users: eligible servers or max_tasks given; the replay's users are unconstrained "
            "and unbounded"
        )
    if len(counterexample["resources"]) != 2:
        raise ConfigError(
            f"resources: {counterexample['resources']!r}, expected two (the replay's tasks are "
            "cpu and mem)"
        )
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"scale: {scale!r}, expected a number > 0")
    mechanism = violation["mechanism"]
    servers = counterexample["servers"]
    if mechanism in POOLED:  # solved on one pooled server, as the checker does
        servers = [{"id": "pool", "capacity": np.sum([s["capacity"] for s in servers], axis=0)}]
    instance = {
        "resources": counterexample["resources"],
        "servers": [
            {"id": s["id"], "capacity": [float(c) for c in s["capacity"]]} for s in servers
        ],
        "users": [
            {k: v for k, v in u.items() if k in ("id", "demand", "weight")}
            for u in counterexample["users"]
        ],
    }
    ids = [str(u["id"]) for u in instance["users"]]
    liar = ids.index(str(violation["user"]))
    lie = {**instance, "users": [dict(u) for u in instance["users"]]}
    lie["users"][liar]["demand"] = list(violation["demand"])
    x = float(np.sum(solve(instance, mechanism)["tasks"][liar]))
    y = float(np.sum(solve(lie, mechanism)["tasks"][liar]))
    true = np.asarray(instance["users"][liar]["demand"], dtype=float)
    told = np.asarray(violation["demand"], dtype=float)
    held = y * min(t / d for t, d in zip(told, true, strict=True) if d > 0)
    pool = np.sum([s["capacity"] for s in servers], axis=0) * scale
    classes = [
        {"name": str(s["id"]), "count": 1, "capacity": [float(c) * scale for c in s["capacity"]]}
        for s in instance["servers"]
    ]
    runs = []
    for declared in (instance, lie):
        trace_users = []
        for u, v in zip(instance["users"], declared["users"], strict=True):
            alone = min(p / d for p, d in zip(pool, u["demand"], strict=True) if d > 0)
            trace_users.append(
                {
                    "name": str(u["id"]),
                    "join_s": 0,
                    "demand": [float(d) for d in v["demand"]],
                    "tasks": math.ceil(alone) + 1,
                    "run_s": RUN_S,
                }
            )
        weights = {str(u["id"]): u["weight"] for u in instance["users"] if "weight" in u}
        trace: dict[str, Any] = {"format": "inline", "users": trace_users}
        if weights:
            trace["weights"] = weights
        config = {
            "name": "counterexample-replay",
            "trace": trace,
            "cluster": {"classes": classes},
            "schedulers": [scheduler],
            "collect": {"utilization_interval_s": RUN_S / 2, "horizon_s": 1.5 * RUN_S},
        }
        (result,) = simulate(config).values()
        done = result.tasks[result.tasks["ended"] == "finished"]
        runs.append(int((done["user"] == ids[liar]).sum()))
    kind: Literal["count", "repack"] = "count" if y > x * (1 + 1e-6) else "repack"
    return Replay(kind, x, y, float(held), runs[0], runs[1])
