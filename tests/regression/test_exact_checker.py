"""The property checker finds the violations the literature proves on the papers' instances."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.schedulers.exact import EXACT, solve_exact
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.exact.pool import pooled
from fairsim.schedulers.exact.properties import (
    bottleneck_resource,
    check,
    envy_free,
    is_lex_max_min,
    pareto_optimal,
    sharing_incentive,
)
from fairsim.schedulers.exact.property_table import LITERATURE, format_table, property_table

FIG1, BR_PF, AF_SI, DRFH_FIG1 = (parse_instance(d) for d in LITERATURE)


def test_c_drfh_and_tsf_break_bottleneck_fairness_on_psdsf_fig1() -> None:
    assert bottleneck_resource(FIG1) == 1  # RAM
    for name, ok in (("c-drfh", False), ("tsf", False), ("psdsf", True)):
        x = solve_exact(name, FIG1)
        assert is_lex_max_min(FIG1, x, FIG1.demand[:, 1]) is ok, name


def test_af_breaks_sharing_incentive() -> None:
    assert not check("af", AF_SI, np.random.default_rng(0))["sharing-incentive"]
    assert check("drf", AF_SI, np.random.default_rng(0))["sharing-incentive"]


def test_pf_misreport_is_found() -> None:
    lie = parse_instance(
        {
            "resources": ["r1", "r2"],
            "servers": [{"id": "s", "capacity": [1, 1]}],
            "users": [{"id": "1", "demand": [2 / 3, 1]}, {"id": "2", "demand": [1, 0.5]}],
        }
    )
    x = solve_exact("pf", BR_PF)
    y = solve_exact("pf", lie)
    # true tasks of user 1 with the bundle it got by lying: min(3/4 * 2/3 / 0.5, 3/4 * 1 / 1)
    assert min(y[0, 0] * (2 / 3) / 0.5, y[0, 0]) > x[0, 0] + 0.05


def test_drfh_fig1_is_envy_free_and_pareto_optimal() -> None:
    x = solve_exact("drfh", DRFH_FIG1)
    assert envy_free(DRFH_FIG1, x) and pareto_optimal(DRFH_FIG1, x)
    assert sharing_incentive(DRFH_FIG1, x)


def test_table_runs() -> None:
    table = property_table(["drf", "psdsf", "c-drfh"], 4, 1, None)
    assert table["c-drfh"]["bottleneck-fairness"]["violations"] >= 1
    assert table["psdsf"]["bottleneck-fairness"]["violations"] == 0
    assert table["drf"]["strategy-proofness"]["violations"] == 0
    assert "| `psdsf` |" in format_table(table)


def test_tsf_breaks_sharing_incentive_with_constraints() -> None:
    # Contradicts PS-DSF II-B's summary of TSF (gamma counted ignoring placement constraints).
    inst = parse_instance(
        {
            "resources": ["r0", "r1"],
            "servers": [{"id": "s0", "capacity": [7, 1]}, {"id": "s1", "capacity": [1, 3]}],
            "users": [
                {"id": "u0", "demand": [2, 3]},
                {"id": "u1", "demand": [1, 3], "eligible": ["s0"]},
                {"id": "u2", "demand": [1, 1]},
                {"id": "u3", "demand": [1, 4]},
            ],
        }
    )
    x = solve_exact("tsf", inst)
    assert x[0].sum() < 0.2 < 5 / 24  # user 0's quarter of both servers is 1/12 + 1/8
    assert not sharing_incentive(inst, x)
    assert sharing_incentive(inst, solve_exact("psdsf", inst))


def test_drf_zero_demands_not_population_monotonic() -> None:
    data = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": [8, 5]}],
        "users": [
            {"id": "0", "demand": [0, 3]},
            {"id": "1", "demand": [2, 1]},
            {"id": "2", "demand": [4, 1]},
            {"id": "3", "demand": [4, 1]},
        ],
    }
    before = solve_exact("drf", parse_instance(data))[0, 0]
    del data["users"][2]
    after = solve_exact("drf", parse_instance(data))[0, 0]
    np.testing.assert_allclose([before, after], [7 / 9, 25 / 33])


def test_fairsim_properties_subcommand_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``fairsim properties --json`` prints {mechanism: {property: {checked, violations}}}."""
    import json
    import subprocess
    import sys

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairsim.cli",
            "properties",
            "--mechanism",
            "drf",
            "--instances",
            "4",
            "--json",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    table = json.loads(p.stdout)
    assert set(table) == {"drf"}
    assert table["drf"]["envy-freeness"] == {"checked": 4, "violations": 0}


def test_check_after_solve_needs_the_lp_on_several_servers() -> None:
    """The bottleneck condition is not enough on several servers: every server is full and every
    user holds the largest share of a full resource it demands, yet m (CPU-heavy) and p
    (memory-heavy) can swap servers and free room for n. One LP per share level finds it."""
    from fairsim.schedulers.exact.instance import NumericalRangeError
    from fairsim.schedulers.exact.verification import (
        bottleneck_problem,
        lex_problem,
        room_problem,
        verify,
    )

    inst = parse_instance(
        {
            "resources": ["cpu", "mem"],
            "servers": [{"id": "A", "capacity": [2, 100]}, {"id": "B", "capacity": [100, 1]}],
            "users": [
                {"id": "n", "demand": [1, 0.001], "eligible": ["A"]},
                {"id": "m", "demand": [1, 0.1]},
                {"id": "p", "demand": [0.1, 1]},
            ],
        }
    )
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # one task each
    ones = np.ones(3)
    assert room_problem(inst, x) is None and bottleneck_problem(inst, x, ones) is None
    assert lex_problem(inst, x, ones) == (
        "users at share 1 ('n', 'm', 'p') could reach a total share 21 > 3 without lowering "
        "anyone at or below them: not lexicographically max-min"
    )
    with pytest.raises(NumericalRangeError, match=r"^psdsf: .*Theorem 1 is violated"):
        verify("psdsf", inst, x)
    # the mechanisms themselves pass their check: PS-DSF and PF give 1, 10, 10
    np.testing.assert_allclose(solve_exact("psdsf", inst).sum(axis=1), [1, 10, 10])
    np.testing.assert_allclose(solve_exact("pf", inst).sum(axis=1), [1, 10, 10], rtol=1e-6)


#: ``fairsim properties --instances 150 --seed 20261122``, instance 88, the strategy-proofness
#: check of ``drfh``, ``c-drfh``, ``tsf`` and ``lmm-mms``: user u3 misreports by dropping every
#: server. The check LP of the share level 3/7 (``lex_problem``) freezes everyone at or below it
#: within 1e-9 of its share while every server is full: a sliver with no interior at HiGHS's
#: tolerance, which its interior-point method reported infeasible (exit 2, the run ended).
THIN_CHECK_LP = {
    "resources": ["r0", "r1", "r2"],
    "servers": [
        {"id": "s0", "capacity": [12, 1, 1]},
        {"id": "s1", "capacity": [10, 3, 10]},
        {"id": "s2", "capacity": [5, 5, 11]},
    ],
    "users": [
        {"id": "u0", "demand": [4, 4, 0]},
        {"id": "u1", "demand": [3, 0, 0], "weight": 2},
        {"id": "u2", "demand": [0, 3, 0], "eligible": ["s1", "s2"]},
        {"id": "u3", "demand": [2, 2, 1], "eligible": []},
    ],
}


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "lmm-mms"])
def test_check_lp_with_a_thin_feasible_set_is_verified(name: str) -> None:
    inst = parse_instance(THIN_CHECK_LP)
    x = solve_exact(name, inst)  # raised NumericalRangeError before
    # u0 and u1 (weight 2) at the common share 3/7 (drfh: 4/9 and 1/9 per task), u2 above them
    # with the rest of r1: 27/28, 54/7 and 12/7 tasks; u3 runs nowhere
    assert x.sum(axis=1) == pytest.approx([27 / 28, 54 / 7, 12 / 7, 0.0], rel=1e-8, abs=1e-12)


@pytest.mark.parametrize(
    ("mechanisms", "seed", "n"),
    [
        # the first instances of these seeds hit the thin check LP above (exit 2 before)
        (["drfh", "c-drfh", "tsf", "lmm-mms"], 4, 5),
        (["drfh", "c-drfh", "tsf", "lmm-mms"], 8, 7),
        # every mechanism, a few seeds (the papers' 4 instances, then random ones)
        (None, 11, 8),
        (None, 2026, 8),
        (None, 20261122, 8),
    ],
)
def test_runs_are_verified_for_several_seeds(
    mechanisms: list[str] | None, seed: int, n: int
) -> None:
    names = mechanisms or [*EXACT, "psdsf-tdm"]
    table = property_table(names, n, seed, None)
    for m in names:
        assert table[m]["unverifiable"] == [], (m, table[m]["unverifiable"])
        for p in ("sharing-incentive", "envy-freeness", "pareto-optimality", "strategy-proofness"):
            assert table[m][p]["checked"] == n


#: ``fairsim properties --instances 150 --seed 7``, instance 128, the strategy-proofness check of
#: ``drfh`` (u0 raises its r0 demand): the solver's answer fills s2 to 1 + 7.1e-8 of its r1
#: (HiGHS's feasibility tolerance), so with the instance's capacities the check LP's frozen
#: levels were out of reach: infeasible for the dual simplex too (by 7.9e-9 of a row).
OVER_CAPACITY = {
    "resources": ["r0", "r1"],
    "servers": [
        {"id": "s0", "capacity": [12, 4]},
        {"id": "s1", "capacity": [2, 8]},
        {"id": "s2", "capacity": [11, 2]},
    ],
    "users": [
        {"id": "u0", "demand": [4.233234392896169, 4]},
        {"id": "u1", "demand": [4, 4]},
        {"id": "u2", "demand": [1, 0]},
    ],
}


def test_check_lp_takes_the_capacity_the_answer_uses() -> None:
    inst = parse_instance(OVER_CAPACITY)
    x = solve_exact("drfh", inst)  # raised NumericalRangeError before
    # u0 and u1 at the same share (one task each: 4/14 of the pooled r1), u2 takes the rest of
    # r0 on s0 and s2: 12 - 4.233234392896169 + 11 - 4 * 0.5
    assert x.sum(axis=1) == pytest.approx([1.0, 1.0, 16.766765607103831], rel=1e-7)


def test_property_lps_take_the_capacity_the_answer_uses() -> None:
    inst = pooled(DRFH_FIG1)
    x = solve_exact("bmf", inst)  # CPU filled to 14.000000056 of 14
    assert (x.T @ inst.demand)[0, 0] > 14
    assert pareto_optimal(inst, x)  # raised (no optimum) without the raised capacity


#: ``fairsim properties --instances 150 --seed 4``, instance 62, the strategy-proofness check of
#: ``pf`` (u0 drops s1): SLSQP stops at its feasible start ("Inequality constraints
#: incompatible"), six times from the same point: optimality gap 2, unverifiable.
PF_START = {
    "resources": ["r0", "r1", "r2"],
    "servers": [{"id": "s0", "capacity": [5, 5, 5]}, {"id": "s1", "capacity": [11, 8, 11]}],
    "users": [
        {"id": "u0", "demand": [4, 0, 4], "eligible": ["s0"]},
        {"id": "u1", "demand": [4, 3, 3], "eligible": ["s1"]},
        {"id": "u2", "demand": [3, 3, 1]},
        {"id": "u3", "demand": [1, 1, 1]},
    ],
}


def test_pf_restarts_from_another_point_when_slsqp_fails_at_its_start() -> None:
    x = solve_exact("pf", parse_instance(PF_START))  # raised NumericalRangeError before
    assert x.sum(axis=1) == pytest.approx([13 / 16, 13 / 12, 13 / 12, 13 / 4], rel=1e-6)
