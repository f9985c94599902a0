"""The envy count of fairness over time (:func:`fairsim.scenario.fairness.envious_pairs`) against
its definition computed pair by pair: ``floor(min(n_i, min_r A_j[r] / d_i[r]) (1 + TASK_TOL))``
whole tasks of i in j's bundle, above the tasks i runs (docs/fairness.md)."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.scenario.fairness import TASK_TOL, envious_pairs


def by_definition(
    demand: np.ndarray, max_tasks: np.ndarray, running: np.ndarray, allocation: np.ndarray
) -> int:
    count = 0
    n = demand.shape[0]
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            fit = float(max_tasks[i])
            for r in range(demand.shape[1]):
                if demand[i, r] > 0:
                    fit = min(fit, float(allocation[j, r] / demand[i, r]))
            if np.floor(fit * (1 + TASK_TOL)) > running[i]:
                count += 1
    return count


@pytest.mark.parametrize("seed", range(6))
def test_envy_count_equals_the_definition_at_the_rounding_boundaries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n, n_r = int(rng.integers(1, 9)), int(rng.integers(1, 4))
        running = rng.integers(0, 5, n).astype(float)
        present = running + rng.integers(0, 4, n)
        demand = rng.choice([0.0, 0.1, 0.3, 1 / 3, 0.25, 1.0, 0.7], size=(n, n_r))
        # bundles of whole multiples of another user's demand, a hair either side: the
        # floor and the tolerance decide
        near = rng.choice([1.0, 1 - 1e-10, 1 + 1e-10, 1 - 1e-9, 1 - 2e-9, 1 + 1e-15], (n, 1))
        alloc = rng.integers(0, 6, (n, 1)) * demand[rng.integers(0, n, n)] * near
        if rng.random() < 0.3:
            alloc = rng.random((n, n_r)) * 3
        got = envious_pairs(demand, present, running, alloc)
        assert got == by_definition(demand, present, running, alloc)


def test_envy_count_of_a_known_case() -> None:
    # u0 runs 1 of its 3 tasks of (1, 1); u1 holds (2.5, 3): u0 would run 2 there -> envies u1;
    # u1 runs 2 tasks of (1.25, 1.5) and would run 0 in u0's (1, 1): no envy
    demand = np.array([[1.0, 1.0], [1.25, 1.5]])
    alloc = np.array([[1.0, 1.0], [2.5, 3.0]])
    assert envious_pairs(demand, np.array([3.0, 2.0]), np.array([1.0, 2.0]), alloc) == 1
    assert envious_pairs(demand, np.array([1.0, 2.0]), np.array([1.0, 2.0]), alloc) == 0
    assert envious_pairs(np.zeros((0, 2)), np.zeros(0), np.zeros(0), np.zeros((0, 2))) == 0
