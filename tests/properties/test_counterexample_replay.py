"""The property checker's strategy-proofness counterexamples replayed as dynamic runs (issue 43,
"Checked against what is known"; :mod:`fairsim.scenario.counterexamples`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.counterexamples import replay_counterexample

#: Bonald and Roberts, Section 3: A (1/2, 1) and B (1, 1/2) on one server (1, 1); A declares
#: (2/3, 1).
BONALD_ROBERTS: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [1, 1]}],
    "users": [{"id": "A", "demand": [0.5, 1]}, {"id": "B", "demand": [1, 0.5]}],
    "violation": {"mechanism": "pf", "user": "A", "misreport": "demand", "demand": [2 / 3, 1]},
}

#: A counterexample of the checker's kind (random instance 4 of seed 1, its lie rounded): u2
#: (weight 2, true demand (0, 3)) declares (0.75, 3.75) on one server (2, 5).
REPACK: dict[str, Any] = {
    "resources": ["r0", "r1"],
    "servers": [{"id": "s0", "capacity": [2.0, 5.0]}],
    "users": [
        {"id": "u0", "demand": [3.0, 3.0]},
        {"id": "u1", "demand": [1.0, 4.0]},
        {"id": "u2", "demand": [0.0, 3.0], "weight": 2},
    ],
    "violation": {"mechanism": "pf", "user": "u2", "misreport": "demand", "demand": [0.75, 3.75]},
}


@pytest.mark.parametrize("mechanism", ["pf", "bmf"])
def test_a_lie_that_raises_the_task_count_pays_in_the_dynamic_run(mechanism: str) -> None:
    """Bonald and Roberts' lie is of the ``count`` kind: PF (and BMF, equal here) gives A 3/4
    declared tasks instead of 2/3, each holding one true task. At scale 60 the online scheduler
    reaches the exact numbers in whole tasks: 40 truthful, 45 lying (the paper's gain of 9/8)."""
    cx = copy.deepcopy(BONALD_ROBERTS)
    cx["violation"]["mechanism"] = mechanism
    r = replay_counterexample(cx, mechanism, scale=60)
    assert r.kind == "count"
    assert r.static_truthful == pytest.approx(2 / 3, abs=1e-8)
    assert r.static_declared == pytest.approx(3 / 4, abs=1e-8)
    assert r.static_true == r.static_declared
    assert (r.truthful, r.lying) == (40, 45)


def test_a_lie_that_pays_only_by_repacking_does_not_pay_in_the_dynamic_run() -> None:
    """u2's lie gets it fewer declared tasks (0.682 against 5/6 under exact PF, KKT-certified)
    whose bundles (0.682 x (0.75, 3.75)) hold 0.853 true tasks of (0, 3): a static gain of 2.3 %
    that needs repacking. In the dynamic run each reservation runs one task, so the lie costs
    u2 3 of its 16 tasks at scale 20 (20 x 0.833 = 16.7, 20 x 0.682 = 13.6)."""
    r = replay_counterexample(REPACK, "pf", scale=20)
    assert r.kind == "repack"
    assert r.static_truthful == pytest.approx(5 / 6, abs=1e-8)
    assert r.static_declared == pytest.approx(0.6821040431, abs=1e-6)
    assert r.static_true == pytest.approx(r.static_declared * 1.25)
    assert r.static_true > r.static_truthful  # the checker's violation
    assert (r.truthful, r.lying) == (16, 13)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"misreport": "eligible"}, "violation.misreport: 'eligible'"),
        ({"misreport": None}, "violation.misreport: None"),
    ],
)
def test_only_demand_misreports_are_replayed(change: dict[str, Any], message: str) -> None:
    cx = copy.deepcopy(BONALD_ROBERTS)
    cx["violation"].update(change)
    with pytest.raises(ConfigError, match=message):
        replay_counterexample(cx, "pf")


def test_three_resources_constraints_and_scale_are_refused() -> None:
    three = copy.deepcopy(BONALD_ROBERTS)
    three["resources"] = ["cpu", "mem", "gpu"]
    with pytest.raises(ConfigError, match=r"resources: .* expected two"):
        replay_counterexample(three, "pf")
    pinned = copy.deepcopy(BONALD_ROBERTS)
    pinned["users"][0]["eligible"] = ["s"]
    with pytest.raises(ConfigError, match="users: eligible servers or max_tasks"):
        replay_counterexample(pinned, "pf")
    with pytest.raises(ConfigError, match="scale: 0"):
        replay_counterexample(BONALD_ROBERTS, "pf", scale=0)
