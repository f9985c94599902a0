"""Hypothesis properties of the exact mechanisms on small random instances: feasibility (per-server
capacity, eligibility, task bounds) and each mechanism's defining condition."""

from __future__ import annotations

import numpy as np
from helpers import exact_instances
from hypothesis import HealthCheck, given, settings
from scipy.optimize import linprog

from fairsim.schedulers.exact import EXACT, POOLED, solve_exact
from fairsim.schedulers.exact.common import monopoly_tasks, serving
from fairsim.schedulers.exact.instance import Instance
from fairsim.schedulers.exact.lexmaxmin import drfh_share_per_task, maximin_share
from fairsim.schedulers.exact.pf import pf_kkt_gap
from fairsim.schedulers.exact.pool import bmf_conditions
from fairsim.schedulers.exact.psdsf import psdsf_sweeps, psdsf_violation

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pooled(inst: Instance) -> Instance:
    """The one-server instance of the pooled mechanisms (constraints ignored)."""
    n_u = len(inst.user_ids)
    return Instance(
        inst.resources,
        ("pool",),
        inst.user_ids,
        inst.capacity.sum(axis=0)[None, :],
        inst.demand,
        inst.weight,
        inst.max_tasks,
        np.ones((n_u, 1), dtype=bool),
    )


def assert_feasible(inst: Instance, x: np.ndarray) -> None:
    assert (x >= -1e-9).all()
    assert (x[~serving(inst)] <= 1e-9).all(), "a task on a server that cannot serve the user"
    use = np.einsum("nl,nr->lr", x, inst.demand)
    assert (use <= inst.capacity * (1 + 1e-7) + 1e-7).all(), "capacity exceeded"
    assert (x.sum(axis=1) <= inst.max_tasks * (1 + 1e-7) + 1e-7).all(), "max_tasks exceeded"


def assert_lex_max_min(inst: Instance, x: np.ndarray, a: np.ndarray) -> None:
    """No user's share ``x_n a_n / w_n`` can grow without lowering a share that is not larger."""
    serve = serving(inst) & np.isfinite(a)[:, None] & (a > 0)[:, None]
    users, servers = np.nonzero(serve)
    if len(users) == 0:
        return
    share = np.where(
        serve.any(axis=1), x.sum(axis=1) * np.where(np.isfinite(a), a, 0) / inst.weight, 0.0
    )
    a_ub, b_ub = [], []
    for srv in range(inst.capacity.shape[0]):
        for r in range(inst.capacity.shape[1]):
            row = np.where(servers == srv, inst.demand[users, r], 0.0)
            if row.any():
                a_ub.append(row)
                b_ub.append(inst.capacity[srv, r])
    for n in np.unique(users):
        row = (users == n).astype(float)
        if np.isfinite(inst.max_tasks[n]):
            a_ub.append(row)
            b_ub.append(inst.max_tasks[n])
    for n in np.unique(users):
        if x[n].sum() >= inst.max_tasks[n] - 1e-7:
            continue
        rows, rhs = list(a_ub), list(b_ub)
        for m in np.unique(users):  # every share not above n's keeps its level
            if share[m] <= share[n] * (1 + 1e-7) + 1e-9:
                rows.append(-(users == m).astype(float) * a[m] / inst.weight[m])
                # (a looser slack would let n gain what the others give up, e.g. 1e-7 of 12
                # tasks' memory, 7e-6 of a user with 0.16 tasks: the allocation stays feasible)
                rhs.append(-share[m] * (1 - 1e-9))
        res = linprog(
            -(users == n).astype(float),
            A_ub=np.array(rows),
            b_ub=rhs,
            bounds=(0, None),
            method="highs",
        )
        assert res.status == 0
        assert -res.fun <= x[n].sum() * (1 + 1e-6) + 1e-6, (n, -res.fun, x[n].sum())


@SETTINGS
@given(exact_instances())
def test_every_mechanism_is_feasible(inst: Instance) -> None:
    for name in EXACT:
        own = pooled(inst) if name in POOLED else inst  # pooled mechanisms refuse constraints
        assert_feasible(own, solve_exact(name, own))


@SETTINGS
@given(exact_instances())
def test_lexicographic_max_min_mechanisms(inst: Instance) -> None:
    gamma_all = monopoly_tasks(inst.capacity, inst.demand).sum(axis=1)
    with np.errstate(divide="ignore"):
        tsf = np.where(gamma_all > 0, 1 / gamma_all, np.inf)
        mu = maximin_share(inst)
        lmm = np.where(mu > 0, inst.weight / mu, np.inf)
    cases = {
        "drfh": drfh_share_per_task(inst, constrained=True),
        "c-drfh": drfh_share_per_task(inst, constrained=False),
        "tsf": tsf,
        "lmm-mms": lmm,
    }
    for name, a in cases.items():
        assert_lex_max_min(inst, solve_exact(name, inst), a)
    p = pooled(inst)
    cap = p.capacity[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(inst.demand > 0, inst.demand / cap, 0.0)
    assert_lex_max_min(p, solve_exact("drf", p), frac.max(axis=1))
    assert_lex_max_min(p, solve_exact("af", p), frac.sum(axis=1))


@SETTINGS
@given(exact_instances())
def test_psdsf_meets_theorems_1_and_2(inst: Instance) -> None:
    for sharing in ("rdm", "tdm"):
        x, rounds = psdsf_sweeps(inst, sharing=sharing)
        assert_feasible(inst, x)
        assert psdsf_violation(inst, x, sharing=sharing) < 1e-6, (sharing, rounds)


@SETTINGS
@given(exact_instances(max_users=3))
def test_pf_is_optimal_and_bmf_meets_its_definition(inst: Instance) -> None:
    assert pf_kkt_gap(inst, solve_exact("pf", inst)) < 1e-6
    p = pooled(inst)
    assert bmf_conditions(p, solve_exact("bmf", p)[:, 0], tol=1e-6)


@SETTINGS
@given(exact_instances(max_servers=1))
def test_lmm_mms_on_one_pool_is_bounded_drf(inst: Instance) -> None:
    inst = pooled(inst)
    np.testing.assert_allclose(
        solve_exact("lmm-mms", inst).sum(axis=1),
        solve_exact("drf", inst).sum(axis=1),
        rtol=1e-6,
        atol=1e-7,
    )


@SETTINGS
@given(exact_instances(max_users=6, max_servers=1))
def test_lmm_mms_pick_matches_sequential_lps(inst: Instance) -> None:
    from fairsim.schedulers.exact.lmm_mms import lmm_mms_pick

    # the paper's algorithm assumes every user demands every resource (Lemma 1)
    inst = Instance(
        inst.resources,
        inst.server_ids,
        inst.user_ids,
        inst.capacity + 1.0,
        inst.demand + 0.5,
        inst.weight,
        inst.max_tasks,
        inst.eligible,
    )

    np.testing.assert_allclose(
        lmm_mms_pick(inst)[:, 0], solve_exact("lmm-mms", inst).sum(axis=1), rtol=1e-6, atol=1e-7
    )
