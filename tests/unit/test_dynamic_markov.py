"""The Markovian demand model of Bonald and Roberts (Section 4.1): rates, Markov solve, SimPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.errors import ConfigError
from fairsim.schedulers.flows.markov_chain import (
    ALLOCATIONS,
    class_rates,
    exact_class_rates,
    make_model,
    scaled_loads,
    simulate_demand_model,
    solve_markov,
    solve_markov_adaptive,
)

PAPER = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])


# ----------------------------------------------------------------------------- per-state rates


@settings(max_examples=40, deadline=None)
@given(
    n=st.lists(st.integers(0, 6), min_size=3, max_size=3),
    alloc=st.sampled_from(ALLOCATIONS),
)
def test_fast_rates_match_exact_solvers_paper_vectors(n: list[int], alloc: str) -> None:
    fast = class_rates(np.array([n]), PAPER, alloc)[0]
    ref = exact_class_rates(n, PAPER, alloc)
    np.testing.assert_allclose(fast, ref, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    vec=st.lists(
        st.tuples(st.sampled_from([0.0, 0.05, 0.3, 0.5, 0.8, 1.0]), st.booleans()),
        min_size=2,
        max_size=4,
    ),
    n=st.lists(st.integers(0, 5), min_size=4, max_size=4),
    alloc=st.sampled_from(ALLOCATIONS),
)
def test_fast_rates_match_exact_solvers_random(
    vec: list[tuple[float, bool]], n: list[int], alloc: str
) -> None:
    # two resources, the unit component on resource 0 or 1, the other one random (zero allowed)
    a = np.array([[1.0, x] if first else [x, 1.0] for x, first in vec])
    nn = n[: len(a)]
    fast = class_rates(np.array([nn]), a, alloc)[0]
    ref = exact_class_rates(nn, a, alloc)
    np.testing.assert_allclose(fast, ref, atol=1e-6)


def test_rates_symmetric_transactions_match_per_transaction_exact() -> None:
    # 1 class-0 and 2 class-1 transactions as three separate users: same rates as the class view
    from fairsim.schedulers.exact import solve_exact
    from fairsim.schedulers.exact.instance import parse_instance

    a = np.array([[0.5, 1.0], [1.0, 0.5]])
    inst = parse_instance(
        {
            "resources": ["r0", "r1"],
            "servers": [{"id": "s", "capacity": [1, 1]}],
            "users": [
                {"id": "t0", "demand": [0.5, 1.0]},
                {"id": "t1", "demand": [1.0, 0.5]},
                {"id": "t2", "demand": [1.0, 0.5]},
            ],
        }
    )
    for alloc in ALLOCATIONS:
        per = solve_exact(alloc, inst).sum(axis=1)
        fast = class_rates(np.array([[1, 2]]), a, alloc)[0]
        np.testing.assert_allclose(fast, [per[0], per[1]], atol=1e-6)
        np.testing.assert_allclose(per[1], per[2], atol=1e-6)


def test_paper_pf_example_and_strategy_section_4_2() -> None:
    a = np.array([[0.5, 1.0], [1.0, 0.5]])
    np.testing.assert_allclose(class_rates(np.array([[1, 1]]), a, "pf")[0], [2 / 3, 2 / 3])
    # Section 4.2: with two class-2 transactions, the misreport (2/3, 1) gives class 1 only 1/2
    lie = np.array([[2 / 3, 1.0], [1.0, 0.5]])
    np.testing.assert_allclose(class_rates(np.array([[1, 2]]), lie, "pf")[0][0], 0.5, atol=1e-9)


def test_drf_pf_bmf_coincide_when_one_resource_binds() -> None:
    # both classes dominated by resource 1: every allocation shares it equally
    a = np.array([[0.2, 1.0], [0.5, 1.0]])
    n = np.array([[2, 3], [1, 1], [4, 0]])
    ref = class_rates(n, a, "drf")
    np.testing.assert_allclose(ref, [[0.2, 0.2], [0.5, 0.5], [0.25, 0.0]])
    for alloc in ("pf", "bmf"):
        np.testing.assert_allclose(class_rates(n, a, alloc), ref, atol=1e-12)


# ----------------------------------------------------------------------------- Markov chain


@pytest.mark.parametrize("alloc", ALLOCATIONS)
def test_single_class_is_mm1_processor_sharing(alloc: str) -> None:
    rho = 0.5
    m = make_model([[1.0, 0.3]], [rho])
    res = solve_markov(m, alloc, level=80)
    # M/M/1-PS: E[n] = rho / (1 - rho), gamma = 1 - rho
    assert res.gamma[0] == pytest.approx(1 - rho, rel=1e-9)
    assert res.error_bound[0] < 1e-15


def test_truncation_error_bound_holds_and_decreases_mm1() -> None:
    rho = 0.8
    m = make_model([[1.0]], [rho])
    exact = rho / (1 - rho)
    bounds = []
    for level in (10, 20, 40):
        res = solve_markov(m, "pf", level=level)
        actual = (exact - res.mean_n[0]) / res.mean_n[0]
        assert 0 <= actual <= res.error_bound[0]
        bounds.append(res.error_bound[0])
    assert bounds[0] > bounds[1] > bounds[2]


def test_truncation_error_bound_decreases_and_holds_three_classes() -> None:
    m = make_model(PAPER.tolist(), scaled_loads(PAPER, (1, 1, 1), 0.6))
    r1 = solve_markov(m, "bmf", level=8)
    r2 = solve_markov(m, "bmf", level=14)
    assert r1.error_bound.max() > r2.error_bound.max()
    assert r1.boundary_mass > r2.boundary_mass
    # the adaptive bound (tail estimate or change since the previous level) covers the true error
    adaptive = solve_markov_adaptive(m, "bmf", levels=(6, 9, 12), tol=1e-9)
    truth = solve_markov(m, "bmf", level=26)
    rel = np.abs(adaptive.gamma - truth.gamma) / truth.gamma
    assert adaptive.level == 12
    assert (rel <= adaptive.error_bound).all()


def test_two_class_symmetric_case_all_allocations_agree() -> None:
    # a1 = (1, 1), a2 = (1, 1): one pooled resource, processor sharing for everyone
    m = make_model([[1.0, 1.0], [1.0, 1.0]], [0.3, 0.3])
    gam = [solve_markov(m, alloc, level=45).gamma for alloc in ALLOCATIONS]
    for g in gam:
        np.testing.assert_allclose(g, [0.4, 0.4], rtol=1e-4)


def test_balanced_paper_ordering_gamma1_eq_gamma2_gt_gamma3() -> None:
    m = make_model(PAPER.tolist(), scaled_loads(PAPER, (1, 1, 1), 0.5))
    for alloc in ALLOCATIONS:
        g = solve_markov(m, alloc, level=20).gamma
        assert g[0] == pytest.approx(g[1], rel=1e-9)
        assert g[1] > g[2]


# ----------------------------------------------------------------------------- SimPy


@pytest.mark.parametrize("alloc", ["drf", "pf"])
def test_simulation_agrees_with_markov_within_ci(alloc: str) -> None:
    m = make_model(PAPER.tolist(), scaled_loads(PAPER, (4, 1, 1), 0.5))
    mk = solve_markov(m, alloc, level=20)
    sim = simulate_demand_model(
        m, alloc, arrivals=8000, warmup=500, batches=10, seed=np.random.SeedSequence(7)
    )
    assert (sim.gamma_lo <= sim.gamma).all() and (sim.gamma <= sim.gamma_hi).all()
    # within the 95 % CI, with a little slack for the 5 % misses over 3 classes x 2 cases
    width = sim.gamma_hi - sim.gamma_lo
    assert (mk.gamma >= sim.gamma_lo - 0.25 * width).all()
    assert (mk.gamma <= sim.gamma_hi + 0.25 * width).all()


def test_simulation_mm1_ps() -> None:
    m = make_model([[1.0, 0.5]], [0.5])
    sim = simulate_demand_model(m, "bmf", arrivals=20000, warmup=1000, batches=20, seed=3)
    assert sim.gamma_lo[0] <= 0.5 <= sim.gamma_hi[0]


def test_simulation_is_deterministic() -> None:
    m = make_model(PAPER.tolist(), scaled_loads(PAPER, (1, 1, 1), 0.4))
    a = simulate_demand_model(
        m, "bmf", arrivals=600, warmup=50, batches=4, seed=np.random.SeedSequence(11)
    )
    b = simulate_demand_model(
        m, "bmf", arrivals=600, warmup=50, batches=4, seed=np.random.SeedSequence(11)
    )
    np.testing.assert_array_equal(a.mean_n, b.mean_n)
    c = simulate_demand_model(
        m, "bmf", arrivals=600, warmup=50, batches=4, seed=np.random.SeedSequence(12)
    )
    assert not np.array_equal(a.mean_n, c.mean_n)


# ----------------------------------------------------------------------------- bad input


def test_load_outside_stability_region_is_refused() -> None:
    with pytest.raises(
        ConfigError, match=r"loads: resource 1 has load 1\.005 >= 1, outside the stability region"
    ):
        make_model(PAPER.tolist(), [0.5, 0.05, 0.5])


def test_vector_without_unit_component_is_refused_or_normalised() -> None:
    with pytest.raises(
        ConfigError, match=r"vectors\[1\]: \[0\.5, 0\.2\] has no component equal to 1"
    ):
        make_model([[1.0, 0.1], [0.5, 0.2]], [0.1, 0.1])
    m = make_model([[1.0, 0.1], [0.5, 0.2]], [0.1, 0.1], normalise=True)
    assert m.vectors[1] == (1.0, 0.4)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"vectors": [[1.0, -0.1]], "loads": [0.1]}, r"vectors\[0\]\[1\]: -0\.1"),
        ({"vectors": [[1.0, 0.1]], "loads": [0.1, 0.2]}, r"loads: expected 1 numbers"),
        ({"vectors": [[1.0, 0.1]], "loads": [0.1], "mu": [0.0]}, r"mu\[0\]: 0\.0"),
        ({"vectors": [[1.0, 0.1], [1.0]], "loads": [0.1, 0.1]}, r"vectors\[1\]: has 1 components"),
    ],
)
def test_bad_model_input_one_line(kwargs: dict, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern) as err:
        make_model(**kwargs)
    assert "\n" not in str(err.value)


def test_bad_level_and_allocation() -> None:
    m = make_model([[1.0]], [0.5])
    with pytest.raises(ConfigError, match=r"level: 0 \(expected an integer >= 1\)"):
        solve_markov(m, "pf", level=0)
    with pytest.raises(ConfigError, match=r"allocation: unknown 'drfh'"):
        solve_markov(m, "drfh", level=5)
