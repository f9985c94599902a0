"""Hypothesis properties of fairness over time (docs/fairness.md): the reference allocation is
``fairsim solve``'s on the same users, demands, bounds and servers; aggregating identical servers
into classes does not change any exact mechanism's per-user totals
(:mod:`fairsim.schedulers.exact.aggregate`); Jain's index lies in ``[1/n, 1]``; Jain's index of
entitlement fractions is 1 when every user holds the same multiple of its reference share, and
does not move when a resource's units are scaled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairsim
from fairsim.scenario.fairness import (
    ZERO_REFERENCE,
    FairnessProbe,
    jain_entitlement,
    jain_index,
    reference_dominant_shares,
)
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.aggregate import (
    EXACT_UNDER_AGGREGATION,
    aggregate_instance,
    aggregate_servers,
)
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.exact.pool import POOLED
from fairsim.simulator.snapshot import UserSnapshot

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Every mechanism fairness over time may take as its reference (bmf is tested on few users).
MECHANISMS = ("drfh", "c-drfh", "tsf", "lmm-mms", "pf", "psdsf", "drf", "af", "bmf")


@st.composite
def pools(draw: st.DrawFn, n_r: int) -> list[list[float]]:
    """A pool of up to 3 distinct server kinds, each repeated up to 3 times, shuffled."""
    kinds = draw(
        st.lists(
            st.lists(st.integers(0, 12), min_size=n_r, max_size=n_r).filter(any),
            min_size=1,
            max_size=3,
        )
    )
    servers = [list(map(float, k)) for k in kinds for _ in range(draw(st.integers(1, 3)))]
    return draw(st.permutations(servers))


@st.composite
def run_instants(draw: st.DrawFn, constrained: bool = True) -> dict[str, Any]:
    """What a probe sees of one instant: a pool, users with a mean demand, tasks present,
    weights and (optionally) the servers their tasks may use."""
    n_r = draw(st.integers(1, 3))
    capacity = draw(pools(n_r))
    n_u = draw(st.integers(1, 4))
    demand = [
        draw(
            st.lists(
                st.floats(0, 4, allow_nan=False).map(lambda v: round(v, 3)),
                min_size=n_r,
                max_size=n_r,
            ).filter(any)
        )
        for _ in range(n_u)
    ]
    present = [draw(st.integers(1, 9)) for _ in range(n_u)]
    weight = [draw(st.sampled_from([1.0, 1.0, 2.0, 3.0])) for _ in range(n_u)]
    eligible = None
    if constrained and draw(st.booleans()):
        n_s = len(capacity)
        eligible = [
            draw(st.lists(st.booleans(), min_size=n_s, max_size=n_s).filter(any))
            for _ in range(n_u)
        ]
    return {
        "capacity": np.array(capacity),
        "demand": np.array(demand),
        "present": np.array(present, dtype=np.float64),
        "weight": np.array(weight),
        "eligible": None if eligible is None else np.array(eligible, dtype=bool),
    }


def as_solve_input(case: dict[str, Any], eligible: bool) -> dict[str, Any]:
    """The ``fairsim solve`` instance of the same users on the servers one by one."""
    n_r = case["capacity"].shape[1]
    servers = [{"id": f"s{k}", "capacity": c.tolist()} for k, c in enumerate(case["capacity"])]
    users = []
    for i, d in enumerate(case["demand"]):
        u: dict[str, Any] = {
            "id": f"u{i}",
            "demand": d.tolist(),
            "weight": float(case["weight"][i]),
            "max_tasks": float(case["present"][i]),
        }
        if eligible and case["eligible"] is not None:
            u["eligible"] = [f"s{k}" for k in np.flatnonzero(case["eligible"][i])]
        users.append(u)
    return {"resources": [f"r{k}" for k in range(n_r)], "servers": servers, "users": users}


@SETTINGS
@given(case=run_instants(), mechanism=st.sampled_from(MECHANISMS))
def test_reference_is_fairsim_solve(case: dict[str, Any], mechanism: str) -> None:
    """The probe's reference dominant shares are ``fairsim.solve``'s (6 decimals) on the same
    users, demands, task bounds, weights, servers and (but for the pooled mechanisms, which
    ignore them) placement constraints."""
    if mechanism == "bmf" and len(case["demand"]) > 3:
        return
    pooled = mechanism in POOLED
    res = tuple(f"r{k}" for k in range(case["capacity"].shape[1]))
    ours = reference_dominant_shares(
        mechanism,
        res,
        case["capacity"],
        case["demand"],
        case["present"],
        case["weight"],
        case["eligible"],
    )
    theirs = fairsim.solve(as_solve_input(case, eligible=not pooled), mechanism)
    np.testing.assert_allclose(ours, theirs["dominant_shares"], atol=2e-6)


@SETTINGS
@given(case=run_instants(), mechanism=st.sampled_from(sorted(EXACT_UNDER_AGGREGATION - POOLED)))
def test_aggregated_solve_equals_per_server(case: dict[str, Any], mechanism: str) -> None:
    """Identical servers (same capacity and eligibility) aggregated into one server per class
    give the same per-user task totals as the servers one by one (the module docstring of
    :mod:`fairsim.schedulers.exact.aggregate` proves it)."""
    inst = parse_instance(as_solve_input(case, eligible=True))
    agg, classes = aggregate_instance(inst)
    assert len(agg.server_ids) == len(np.unique(classes.members)) <= len(inst.server_ids)
    np.testing.assert_allclose(agg.capacity.sum(axis=0), inst.capacity.sum(axis=0))
    per_server = solve_exact(mechanism, inst).sum(axis=1)
    aggregated = solve_exact(mechanism, agg).sum(axis=1)
    scale = np.maximum(inst.max_tasks, 1.0)
    np.testing.assert_allclose(aggregated / scale, per_server / scale, atol=1e-6)


@SETTINGS
@given(case=run_instants())
def test_aggregate_servers_groups_identical_servers(case: dict[str, Any]) -> None:
    """Two servers share a class iff their capacities and eligibility columns are equal; a
    class's capacity is its count times its servers' capacity."""
    cap, elig = case["capacity"], case["eligible"]
    classes = aggregate_servers(cap, elig)
    key = cap if elig is None else np.column_stack([cap, elig.T])
    for a in range(len(cap)):
        for b in range(len(cap)):
            same = bool((key[a] == key[b]).all())
            assert same == (classes.members[a] == classes.members[b])
    for k, n in enumerate(classes.count):
        np.testing.assert_allclose(classes.capacity[k], n * cap[classes.members == k][0])
    # classes numbered by their first server
    firsts = [int(np.flatnonzero(classes.members == k)[0]) for k in range(len(classes.count))]
    assert firsts == sorted(firsts)


@SETTINGS
@given(y=st.lists(st.floats(0, 1e3, allow_nan=False), min_size=1, max_size=30))
def test_jain_index_bounds(y: list[float]) -> None:
    """Jain's index lies in [1/n, 1] (NaN only when every amount is 0) and is 1 when all are
    equal."""
    v = np.array(y)
    j = jain_index(v)
    if not (v > 0).any():
        assert np.isnan(j)
        return
    assert 1 / len(v) - 1e-12 <= j <= 1.0
    assert jain_index(np.full(len(v), v.max())) == 1.0


@SETTINGS
@given(
    ref=st.lists(
        st.one_of(st.just(0.0), st.floats(1e-9, 1.0, allow_nan=False)), min_size=1, max_size=30
    ),
    c=st.floats(1e-3, 1.0, allow_nan=False),
)
def test_jain_entitlement_is_one_when_online_is_proportional(ref: list[float], c: float) -> None:
    """Every user holding the same fraction ``c`` of its reference share (62 % when whole tasks
    pack worse than the divisible allocation) is equally treated: the index is 1, whatever the
    shares themselves; users with reference 0 are left out and counted."""
    r = np.array(ref)
    index, zero = jain_entitlement(c * r, r)
    assert zero == int(np.count_nonzero(r <= ZERO_REFERENCE))
    if zero == len(r):
        assert np.isnan(index)
    else:
        assert index == pytest.approx(1.0, abs=1e-12)


def _probe_row(
    case: dict[str, Any], running: np.ndarray, mechanism: str, unit: np.ndarray
) -> dict[str, Any]:
    """The probe's ``fairness_summary`` row of one instant whose resources are measured in
    units ``unit`` times the case's (capacity, demands and allocation all scaled)."""
    n_u, n_r = case["demand"].shape
    probe = FairnessProbe(
        mechanism=mechanism,
        resources=tuple(f"r{k}" for k in range(n_r)),
        capacity=case["capacity"] * unit,
        weights={i: float(w) for i, w in enumerate(case["weight"])},
        interval_s=10.0,
    )
    present = case["present"].astype(np.int64)
    snap = UserSnapshot(
        time_s=10.0,
        users=np.arange(n_u),
        names=tuple(f"u{i}" for i in range(n_u)),
        tasks_running=running,
        tasks_waiting=present - running,
        demand=present[:, None] * case["demand"] * unit,
        allocation=running[:, None] * case["demand"] * unit,
        eligible=case["eligible"],
    )
    probe(10.0, snap)
    row: dict[str, Any] = probe.tables()["fairness_summary"].to_pylist()[0]
    return row


@SETTINGS
@given(
    case=run_instants(),
    mechanism=st.sampled_from(("drfh", "tsf", "c-drfh", "drf")),
    data=st.data(),
)
def test_jain_entitlement_invariant_to_a_resources_units(
    case: dict[str, Any], mechanism: str, data: st.DataObject
) -> None:
    """Measuring a resource in other units (GB for MB: capacity, demands and allocations all
    times the same factor) changes no share, hence neither Jain's index of entitlement fractions
    nor the users left out; the raw index does not move either."""
    n_r = case["demand"].shape[1]
    running = np.array([data.draw(st.integers(0, int(p))) for p in case["present"]], dtype=np.int64)
    unit = np.ones(n_r)
    unit[data.draw(st.integers(0, n_r - 1))] = data.draw(st.sampled_from([1e-3, 0.37, 8.0, 1024.0]))
    base = _probe_row(case, running, mechanism, np.ones(n_r))
    scaled = _probe_row(case, running, mechanism, unit)
    assert scaled["zero_reference_users"] == base["zero_reference_users"]
    for key in ("jain_entitlement", "jain_raw_dominant"):
        if base[key] is None:
            assert scaled[key] is None, key
        else:
            assert scaled[key] == pytest.approx(base[key], rel=1e-6), key
