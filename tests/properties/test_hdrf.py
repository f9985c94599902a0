"""Hierarchical DRF (``schedulers/exact/hdrf.py``) on random instances: a one-level tree is DRF,
the exact filling is the limit of the paper's stepped descent, the answer does not depend on
units, the hierarchical share guarantee holds before and after departures, and the check after
the solve refuses what the wrong variants give."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hdrf_reference import stepped_hdrf
from helpers import exact_instances, hdrf_data
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fairsim.schedulers import exact
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.hdrf import (
    HDRF_RULES,
    NAIVE_RULES,
    Rules,
    build_tree,
    fill,
    refill,
    solve_collapsed,
    solve_hdrf,
    solve_naive,
)
from fairsim.schedulers.exact.hdrf_examples import SINGLE_RESOURCE
from fairsim.schedulers.exact.hierarchy_properties import share_guarantee_violations
from fairsim.schedulers.exact.instance import (
    Instance,
    NumericalRangeError,
    parse_instance,
    parse_queues,
)
from fairsim.schedulers.exact.pool import pooled

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _close(x: np.ndarray, y: np.ndarray, rtol: float = 1e-9) -> None:
    scale = max(1.0, float(np.abs(y).max()))
    np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale)


@SETTINGS
@given(exact_instances(max_users=6))
def test_a_one_level_tree_is_drf(inst: Instance) -> None:
    p = pooled(inst)  # hdrf, like drf, pools the servers and refuses placement constraints
    drf = solve_exact("drf", p)
    _close(solve_exact("hdrf", p), drf)
    # every user in one queue below the root, or in a chain of queues: still DRF
    for tree in (
        [{"id": "all"}],
        [{"id": "top", "weight": 3}, {"id": "all", "parent": "top", "weight": 2}],
    ):
        cap = p.capacity.sum(axis=0)
        q = parse_queues(tree, ["all"] * len(p.user_ids), list(p.resources), cap)
        _close(solve_exact("hdrf", Instance(*_fields(p), queues=q)), drf)


def _fields(inst: Instance) -> tuple[Any, ...]:
    return (
        inst.resources,
        inst.server_ids,
        inst.user_ids,
        inst.capacity,
        inst.demand,
        inst.weight,
        inst.max_tasks,
        inst.eligible,
    )


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_filling_is_the_limit_of_the_stepped_descent(seed: int) -> None:
    data = _seeded(seed)
    inst = parse_instance(data)
    for rules, kw in (
        (HDRF_RULES, {}),
        (NAIVE_RULES, {"rescale": None, "ignore_saturated": False}),
    ):
        x = fill(build_tree(inst), rules)
        y = stepped_hdrf(data, eps=1e-3, **kw)
        # steps of 1e-3 of a dominant share: about 0.01 tasks on these capacities
        np.testing.assert_allclose(x, y, rtol=0.02, atol=0.05)


def _seeded(seed: int) -> dict[str, Any]:
    """A random tree from a seed (hypothesis' ``find`` is not deterministic enough here)."""
    rng = np.random.default_rng(100 + seed)
    from fairsim.schedulers.exact.hierarchy_properties import random_tree_instance

    data = random_tree_instance(rng)
    if seed % 2:  # limits on some queues
        for q in data["queues"][::2]:
            q["limit"] = [
                float(rng.integers(1, 13)) if rng.random() < 0.5 else None
                for _ in data["resources"]
            ]
    return data


@SETTINGS
@given(hdrf_data(limits=True), st.data())
def test_units_do_not_matter(data: dict[str, Any], draw: st.DataObject) -> None:
    inst = parse_instance(data)
    x = solve_hdrf(inst)
    r = draw.draw(st.integers(0, len(data["resources"]) - 1))
    c = draw.draw(st.sampled_from([1e-6, 1e-3, 7.0, 1e5]))
    scaled = copy.deepcopy(data)
    scaled["servers"][0]["capacity"][r] *= c
    for u in scaled["users"]:
        u["demand"][r] *= c
    for q in scaled["queues"]:
        if q.get("limit") and q["limit"][r] is not None:
            q["limit"][r] *= c
    _close(solve_hdrf(parse_instance(scaled)), x, rtol=1e-8)
    # so do the weights, scaled together at one node
    heavy = copy.deepcopy(data)
    for u in heavy["users"]:
        if "queue" not in u:
            u["weight"] = u["weight"] * 10
    for q in heavy["queues"]:
        if "parent" not in q:
            q["weight"] = q["weight"] * 10
    _close(solve_hdrf(parse_instance(heavy)), x, rtol=1e-8)


@SETTINGS
@given(hdrf_data())
@example(
    data={
        "resources": ["r0", "r1"],
        "servers": [{"id": "s", "capacity": [1, 1]}],
        "queues": [{"id": q, "weight": 1} for q in ("q0", "q1", "q2")],
        "users": [
            {"id": "u0", "demand": [1, 0], "weight": 1},
            {"id": "u1", "demand": [0, 1], "weight": 1, "queue": "q0"},
            {"id": "u2", "demand": [1, 0], "weight": 1},
            {"id": "u3", "demand": [0, 1], "weight": 1, "queue": "q0"},
            {"id": "u4", "demand": [1, 0], "weight": 1, "queue": "q0"},
        ],
    }
)
def test_the_hierarchical_share_guarantee_holds_before_and_after_departures(
    data: dict[str, Any],
) -> None:
    """From an empty cluster H-DRF meets the guarantee. After a departure it hands the freed
    resources out again without preempting anyone, so a node may end below its guarantee, but
    only where nothing more fits: every user below it that could run more is stopped by a full
    resource. (Hypothesis found such a node: ``u0`` gets back a share 0.3 of its 1/3 while queue
    ``q0``, whose blocked users count at its unblocked user's share 0.2 under H-DRF's rescaling,
    grows; see docs/hdrf.md.)"""
    inst = parse_instance(data)
    x = solve_exact("hdrf", inst)[:, 0]  # checked after the solve
    assert share_guarantee_violations(inst, x) == []
    for n in range(len(x)):  # user n's tasks finish; H-DRF hands the freed resources out again
        start = x.copy()
        start[n] = 0.0
        y = refill(inst, start)[:, 0]
        for v in share_guarantee_violations(inst, y):
            assert _nothing_more_fits(inst, y, v["node"]), (n, v)


def _nothing_more_fits(inst: Instance, y: np.ndarray, node: str) -> bool:
    """Every user below ``node`` (a user id or a queue id) that is below its ``max_tasks``
    demands a resource the pool has used up (``y``: tasks per user, shape (n_users,))."""
    p = pooled(inst)
    cap = p.capacity.sum(axis=0)
    full = p.demand.T @ y >= cap * (1 - 1e-9)
    q = p.queues
    below = []
    for u, uid in enumerate(p.user_ids):
        path, k = [uid], (q.user_queue[u] if q is not None else -1)
        while q is not None and k >= 0:
            path.append(q.ids[k])
            k = q.parent[k]
        if node in path:
            below.append(u)
    assert below, node
    return all(
        y[u] >= p.max_tasks[u] * (1 - 1e-9) or bool((full & (p.demand[u] > 0)).any()) for u in below
    )


@SETTINGS
@given(hdrf_data())
def test_naive_and_hdrf_agree_on_a_one_level_tree(data: dict[str, Any]) -> None:
    flat = copy.deepcopy(data)
    flat["queues"] = []
    for u in flat["users"]:
        u.pop("queue", None)
    inst = parse_instance(flat)
    _close(solve_naive(inst), solve_hdrf(inst))
    _close(solve_collapsed(inst), solve_hdrf(inst))


def test_the_check_after_the_solve_refuses_the_collapsed_hierarchy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = parse_instance(SINGLE_RESOURCE.instance)
    monkeypatch.setitem(exact.EXACT, "hdrf", solve_collapsed)
    with pytest.raises(
        NumericalRangeError,
        match=r"hdrf: the instance is numerically out of range for the exact solver: user 'a2' "
        r"\(dominant share 0\.3\) is stopped by 'slots' while user 'b1', which needs it too, "
        r"holds a dominant share 0\.6 under 'B' \(weight 1\), above the level 0\.4 of 'A' below "
        r"'root': not hierarchical max-min fair",
    ):
        solve_exact("hdrf", inst)


def test_the_check_after_the_solve_refuses_idle_resources_and_broken_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = copy.deepcopy(SINGLE_RESOURCE.instance)
    inst = parse_instance(data)
    monkeypatch.setitem(exact.EXACT, "hdrf", lambda i: np.array([[48.0], [100.0], [240.0]]))
    with pytest.raises(NumericalRangeError, match=r"user 'a2' could run more than its 100 tasks"):
        solve_exact("hdrf", inst)
    data["queues"][1]["limit"] = [200]
    monkeypatch.setitem(exact.EXACT, "hdrf", lambda i: np.array([[48.0], [192.0], [240.0]]))
    with pytest.raises(
        NumericalRangeError,
        match=r"queue 'B' holds 240 of the pool's 'slots', "
        r"above its limit 200",
    ):
        solve_exact("hdrf", parse_instance(data))


@SETTINGS
@given(hdrf_data(max_users=6, max_queues=5))
def test_the_readings_agree_from_an_empty_cluster(data: dict[str, Any]) -> None:
    """Filled from an empty cluster, rescaling and ignoring saturated resources change nothing:
    raw sums (naive H-DRF) give the same allocation. They matter once tasks finish
    (``refill``; the paper's first example)."""
    inst = parse_instance(data)
    t = build_tree(inst)
    x = fill(t, HDRF_RULES)
    for rules in (
        NAIVE_RULES,
        Rules(rescale=False, ignore_saturated=True),
        Rules(rescale=True, ignore_saturated=False),
    ):
        _close(fill(t, rules), x)
