"""The property checker finds the violations the literature proves on the papers' instances."""

from __future__ import annotations

import numpy as np

from experiments.properties import LITERATURE, format_table, run
from schedulers.exact import solve_exact
from schedulers.exact.properties import (
    bottleneck_resource,
    check,
    envy_free,
    is_lex_max_min,
    pareto_optimal,
    sharing_incentive,
)
from schedulers.instance import parse_instance

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
    table = run(["drf", "psdsf", "c-drfh"], 4, 1, None)
    assert table["c-drfh"]["bottleneck-fairness"]["violations"] >= 1
    assert table["psdsf"]["bottleneck-fairness"]["violations"] == 0
    assert table["drf"]["strategy-proofness"]["violations"] == 0
    assert "| `psdsf` |" in format_table(table)
