"""Static strategy-proofness through the public ``fairsim.solve``: what the exact mechanisms give
a user who inflates its declared demand, measured in the tasks it can really run.

A user with true demand ``d`` that declares ``d' >= d`` (the ``inflate`` strategy of
``fairsim strategy``, docs/strategy.md) and receives ``x'_l`` declared tasks on server ``l`` holds
``x'_l d'`` there, in which it runs ``x'_l * min_r d'_r / d_r`` true tasks (over the resources it
needs). Its gain is that total over what it runs when truthful.

* DRF (Ghodsi et al., NSDI 2011, Section 4.2 and Theorem 1 of its technical report) and DRFH
  (Wang, Li, Liang, IEEE TPDS 2014, Section IV-B, Proposition 6) are strategy-proof: no inflation
  gains, on random instances.
* Proportional fairness is not: Bonald and Roberts (ITC 2015, Section 3, "PF is not
  strategyproof") give two users with requirements (1/2, 1) and (1, 1/2), PF shares (2/3, 2/3),
  and user 1 claiming 2/3 of resource 1 instead of 1/2 gets (3/4, 1/2). Bottleneck max fairness
  coincides with PF for two users and two resources (same section), so it pays there too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fairsim

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Tolerance on task counts (the solvers' answers are verified to about 1e-9 of the capacities).
TOL = 1e-6


def true_tasks(out: dict[str, Any], user: int, true: np.ndarray, declared: np.ndarray) -> float:
    """True tasks ``user`` runs in what ``out`` gives its declared demand (over all servers)."""
    need = true > 0
    worth = float(np.min(declared[need] / true[need]))
    return float(np.sum(out["tasks"][user])) * worth


def gain(
    mechanism: str,
    demands: list[list[float]],
    capacities: list[list[float]],
    liar: int,
    factors: list[float],
) -> tuple[float, float]:
    """True tasks of ``liar`` when truthful and when declaring its demand times ``factors``."""
    true = np.array(demands[liar])
    declared = true * np.array(factors)
    lied = [list(declared) if i == liar else d for i, d in enumerate(demands)]
    honest = fairsim.solve(instance(demands, capacities), mechanism)
    cheat = fairsim.solve(instance(lied, capacities), mechanism)
    return true_tasks(honest, liar, true, true), true_tasks(cheat, liar, true, declared)


def instance(demands: list[list[float]], capacities: list[list[float]]) -> dict[str, Any]:
    return {
        "resources": ["cpu", "mem"],
        "servers": [{"id": f"s{k}", "capacity": c} for k, c in enumerate(capacities)],
        "users": [{"id": f"u{i}", "demand": d} for i, d in enumerate(demands)],
    }


def test_bonald_roberts_pf_misreport_example() -> None:
    """Bonald and Roberts, Section 3: truthful PF (2/3, 2/3); the lie gives (3/4, 1/2), so user 1
    runs 3/4 true tasks instead of 2/3 (a gain of 9/8) at user 2's expense; BMF equals PF here.
    DRF on the same instance: the lie does not pay."""
    truth = instance([[0.5, 1.0], [1.0, 0.5]], [[1.0, 1.0]])
    lie = instance([[2 / 3, 1.0], [1.0, 0.5]], [[1.0, 1.0]])
    for mechanism in ("pf", "bmf"):
        honest, cheat = fairsim.solve(truth, mechanism), fairsim.solve(lie, mechanism)
        np.testing.assert_allclose(np.sum(honest["tasks"], axis=1), [2 / 3, 2 / 3], atol=1e-6)
        np.testing.assert_allclose(np.sum(cheat["tasks"], axis=1), [3 / 4, 1 / 2], atol=1e-6)
        before, after = gain(mechanism, *PAPER)
        np.testing.assert_allclose([before, after], [2 / 3, 3 / 4], atol=1e-6)
    before, after = gain("drf", *PAPER)
    np.testing.assert_allclose(before, 2 / 3, atol=1e-6)
    assert after <= before + TOL


#: Bonald and Roberts' instance and lie (user 0 declares 2/3 instead of 1/2 of resource 1).
PAPER = ([[0.5, 1.0], [1.0, 0.5]], [[1.0, 1.0]], 0, [4 / 3, 1.0])

demand = st.lists(st.floats(0.05, 1.0), min_size=2, max_size=2)
capacity = st.lists(st.floats(1.0, 8.0), min_size=2, max_size=2)


@SETTINGS
@example(*PAPER)  # the lie that pays under PF and BMF (test above)
@given(
    demands=st.lists(demand, min_size=2, max_size=4),
    capacities=st.lists(capacity, min_size=1, max_size=3),
    liar=st.integers(0, 3),
    factors=st.lists(st.floats(1.0, 3.0), min_size=2, max_size=2),
)
def test_drf_and_drfh_pay_no_inflation(
    demands: list[list[float]], capacities: list[list[float]], liar: int, factors: list[float]
) -> None:
    """No user gains true tasks by declaring a larger demand under exact DRF (one pooled server)
    or DRFH (the servers as given), whatever resources it inflates and by how much."""
    liar %= len(demands)
    for mechanism, caps in (("drf", [list(np.sum(capacities, axis=0))]), ("drfh", capacities)):
        before, after = gain(mechanism, demands, caps, liar, factors)
        assert after <= before * (1 + 1e-6) + TOL, (mechanism, before, after)
