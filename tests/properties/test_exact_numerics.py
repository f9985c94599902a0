"""Numbers spanning a wide range: the exact solvers answer in the instance's own units, independent
of the units a resource is measured in, or refuse with a one-line error (exit status 2).

Every LP is rescaled before HiGHS sees it (``fairsim.schedulers.exact.common.solve_lp``) and every
answer is
checked afterwards (``fairsim.schedulers.exact.verification.verify``); see docs/mechanisms.md.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import exact_instances
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fairsim.cli import main
from fairsim.schedulers.exact import EXACT, POOLED, solve_exact
from fairsim.schedulers.exact.common import monopoly_tasks, serving
from fairsim.schedulers.exact.instance import (
    Instance,
    InstanceError,
    NumericalRangeError,
    check_range,
    parse_instance,
)
from fairsim.schedulers.exact.lexmaxmin import share_per_task
from fairsim.schedulers.exact.pool import pooled
from fairsim.schedulers.exact.verification import lex_problem, verify

# The instances.
WIDE_SERVERS: dict[str, Any] = {  # servers (1e10, 1e10) and (4, 16)
    "resources": ["cpu", "mem"],
    "servers": [
        {"id": "big", "capacity": [1e10, 1e10]},
        {"id": "small", "capacity": [4, 16]},
    ],
    "users": [{"id": "u1", "demand": [1, 2]}, {"id": "u2", "demand": [2, 1]}],
}
TINY_DEMAND: dict[str, Any] = {  # one server (8, 8), demands (1e-9, 2e-9) and (2, 1)
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [8, 8]}],
    "users": [{"id": "u1", "demand": [1e-9, 2e-9]}, {"id": "u2", "demand": [2, 1]}],
}
HUGE_CAPACITY: dict[str, Any] = {  # capacity 1e308
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [1e308, 1e308]}],
    "users": [{"id": "u1", "demand": [1, 2]}, {"id": "u2", "demand": [2, 1]}],
}
#: The mechanisms that coincide with DRF on one server (docs/mechanisms.md).
DRF_ON_ONE_SERVER = ("drf", "drfh", "c-drfh", "tsf", "lmm-mms", "psdsf")


def _cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict, *args: str
) -> tuple[int, str, str]:
    f = tmp_path / "inst.json"
    f.write_text(json.dumps(data))
    code = main(["solve", args[0], str(f), *args[1:]])
    out = capsys.readouterr()
    return code, out.out, out.err


def _totals(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict, name: str):
    """The task totals the command prints, after checking that they are the solver's at full
    precision (to 1e-12 relative: only a capacity fit or a snap moves them) and fit every
    capacity in float arithmetic."""
    code, out, err = _cli(tmp_path, capsys, data, name)
    assert code == 0, err
    inst = parse_instance(copy.deepcopy(data))
    if name in POOLED:
        inst = pooled(inst)
    printed = np.array(json.loads(out)["tasks"], dtype=float)
    got = printed.sum(axis=1)
    np.testing.assert_allclose(got, solve_exact(name, inst).sum(axis=1), rtol=1e-12)
    assert (printed.T @ inst.demand <= inst.capacity).all()
    return got


@pytest.mark.parametrize("name", DRF_ON_ONE_SERVER)
def test_tiny_demands_get_drf_closed_form(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # equal dominant shares: x1 * 2e-9 / 8 = x2 * 2 / 8, CPU full: 1e-9 x1 + 2 x2 = 8
    got = _totals(tmp_path, capsys, TINY_DEMAND, name)
    np.testing.assert_allclose(got, [8 / 3 * 1e9, 8 / 3], rtol=1e-9)


@pytest.mark.parametrize("name", ["af", "pf", "bmf"])
def test_tiny_demands_other_mechanisms(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # af: aggregate shares 3e-9/16 x1 = 3/16 x2 meet the CPU at the same point as DRF; pf and
    # bmf (= pf for two users and two resources): the CPU-memory vertex 8/3 1e9, 8/3 as well
    got = _totals(tmp_path, capsys, TINY_DEMAND, name)
    np.testing.assert_allclose(got, [8 / 3 * 1e9, 8 / 3], rtol=1e-8)


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "lmm-mms", "psdsf", "pf"])
def test_wide_servers_use_both_servers(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(tmp_path, capsys, WIDE_SERVERS, name)
    assert code == 0, err
    x = np.array(json.loads(out)["tasks"])
    # lexicographic max-min (drfh, c-drfh): equal dominant shares with the big server's CPU full
    # and u1 alone on the small one, x1 = k (1e10 + 16), x2 = k (1e10 + 4),
    # k = (1e10 + 4) / (3e10 + 24); every mechanism here gives ~1e10/3 each and 4 tasks of u1 on
    # the small server (u1 runs 4 there, u2 only 2)
    k = (1e10 + 4) / (3e10 + 24)
    np.testing.assert_allclose(x.sum(axis=1), [k * (1e10 + 16), k * (1e10 + 4)], rtol=1e-8)
    np.testing.assert_allclose(x[:, 1], [4, 0], atol=1e-6)


def test_huge_capacity_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in EXACT:
        code, out, err = _cli(tmp_path, capsys, HUGE_CAPACITY, name)
        assert code == 2 and out == ""
        assert err.count("\n") == 1
        assert err.startswith(
            "fairsim: error: users[0].demand[0]: 1 per task against a total 'cpu' capacity of "
            "1e+308: the ratio 1e+308 is outside float64's normal range"
        )
    with pytest.raises(NumericalRangeError, match=r"users\[0\]\.demand\[0\]: 1 per task"):
        parse_instance(HUGE_CAPACITY)


def test_overflowing_sum_is_refused() -> None:
    data = copy.deepcopy(HUGE_CAPACITY)
    data["servers"] = [{"id": s, "capacity": [1e308, 1]} for s in ("a", "b")]
    with pytest.raises(
        NumericalRangeError, match=r"servers\[\*\]\.capacity\[0\]: the total 'cpu' capacity"
    ):
        parse_instance(data)
    data = copy.deepcopy(TINY_DEMAND)
    data["users"][0]["weight"] = 1e-300
    data["users"][1]["weight"] = 1e10
    with pytest.raises(NumericalRangeError, match=r"users\[0\]\.weight: 1e-300 is below"):
        parse_instance(data)


def test_solver_failure_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any HiGHS status but "optimal" is an error, never an allocation."""
    import fairsim.schedulers.exact.common as common

    real = common.linprog

    def failing(*args: Any, **kw: Any) -> Any:
        res = real(*args, **kw)
        res.status, res.message = 4, "Numerical difficulties encountered."
        return res

    monkeypatch.setattr(common, "linprog", failing)
    code, out, err = _cli(tmp_path, capsys, WIDE_SERVERS, "drfh")
    assert code == 2 and out == ""
    assert err == (
        "fairsim: error: lexicographic max-min LP: HiGHS did not find an optimum "
        "(Numerical difficulties encountered.)\n"
    )
    with pytest.raises(NumericalRangeError, match=r"^lexicographic max-min LP: HiGHS did not"):
        solve_exact("tsf", parse_instance(WIDE_SERVERS))


def test_interior_point_infeasible_is_decided_by_the_simplex() -> None:
    """A feasible set thinner than HiGHS's tolerance: IPX says infeasible, the simplex solves it.

    The check LP of ``tests/regression/test_exact_checker.py::THIN_CHECK_LP`` as HiGHS saw it
    (variables in their natural units, rows scaled): every point within 1.2e-9 of the boundary.
    """
    import fairsim.schedulers.exact.common as common

    a = np.zeros((8, 8))
    for row, cols in enumerate([(0, 3), (1, 4), (1, 6), (2, 5), (2, 7)]):
        a[row, cols] = ([1 / 12, 1.0], [0.3, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0])[row]
    a[5, :3] = [-0.2, -0.6, -1.0]
    a[6, 3:6] = [-1.0, -5 / 6, -5 / 12]
    a[7, 6:] = [-0.6, -1.0]
    b = np.r_[np.ones(5), -0.7714285698857142, -1.9285714247142856, -1.028571428314286]
    c = np.r_[np.zeros(6), -0.6, -1.0]
    # HiGHS 1.12 (scipy 1.17): IPX says infeasible, the dual simplex finds the optimum
    assert common.linprog(c, A_ub=a, b_ub=b, bounds=(0, 1), method="highs-ipm").status == 2
    assert common.linprog(c, A_ub=a, b_ub=b, bounds=(0, 1), method="highs-ds").status == 0
    res = common.solve_lp(c, a, b, scale=np.ones(8), upper=np.ones(8), method="highs-ipm")
    assert res is not None and res.fun == pytest.approx(-1.02857143, rel=1e-8)
    # a truly infeasible LP stays infeasible: 0 <= x <= 1 and x >= 2
    one = np.ones((1, 1))
    kw: dict[str, Any] = {"scale": np.ones(1), "upper": np.ones(1), "method": "highs-ipm"}
    assert common.solve_lp(np.ones(1), -one, -2 * one[0], infeasible_ok=True, **kw) is None
    with pytest.raises(NumericalRangeError, match=r"^LP: HiGHS did not find an optimum \(The"):
        common.solve_lp(np.ones(1), -one, -2 * one[0], **kw)


def test_wrong_answer_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check after the solve turns the old silent answers into one-line errors."""
    import fairsim.schedulers.exact as exact

    # what drfh, c-drfh, tsf and lmm-mms returned before: all zeros, and 0 tasks for u1
    monkeypatch.setitem(exact.EXACT, "drfh", lambda inst: np.zeros((2, 2)))
    code, out, err = _cli(tmp_path, capsys, WIDE_SERVERS, "drfh")
    assert code == 2 and out == ""
    assert err == (
        "fairsim: error: drfh: the instance is numerically out of range for the exact solver: "
        "user 'u1' still fits 5e+09 more tasks on 'big', left idle (relative tolerance 1e-06)\n"
    )
    monkeypatch.setitem(exact.EXACT, "tsf", lambda inst: np.array([[0.0], [4.0]]))
    with pytest.raises(
        NumericalRangeError,
        match=r"^tsf: the instance is numerically out of range for the exact solver: user 'u1' "
        r"\(share 0\) has no saturated resource on 's' on which its share is the largest",
    ):
        solve_exact("tsf", parse_instance(TINY_DEMAND))
    inst = parse_instance(WIDE_SERVERS)
    # several servers, both CPUs full, u1 far below u2: the bottleneck condition fails on 'big',
    # and one LP per share level finds that u1 could rise
    x = np.array([[1e9, 4.0], [4.5e9, 0.0]])
    with pytest.raises(
        NumericalRangeError, match=r"user 'u1' \(share 0\.2\) has no saturated resource on 'big'"
    ):
        verify("c-drfh", inst, x)
    why = lex_problem(inst, x, share_per_task("c-drfh", inst))
    assert why is not None and why.startswith("users at share 0.2 ('u1') could reach a total")
    x = np.array([[1e10, 0.0], [1e10, 0.0]])
    with pytest.raises(NumericalRangeError, match=r"server 'big' is allocated 3e\+10 of 'cpu'"):
        verify("drfh", inst, x)


@pytest.mark.parametrize(
    ("name", "share"), [("drfh", "0.3125"), ("c-drfh", "0.266667"), ("tsf", "0.266667")]
)
def test_lp_tolerance_failure_is_caught(
    name: str, share: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """User u2 needs 1e5 CPU and 1e-4 memory per task on servers (1, 1): its memory use is 1e-9
    of a row the LP solves to 1e-7, so the LP lets it grow on memory that u0 and u1 fill, to 1.8
    times its max-min share. The bottleneck condition (which does not weigh how much memory it
    takes) finds it; on one server the exact progressive filling gets it right, and so does the
    pooled relaxation on two identical servers (no LP decides a share there, only the split)."""
    data: dict[str, Any] = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s1", "capacity": [1, 1]}, {"id": "s2", "capacity": [1, 1]}],
        "users": [
            {"id": "u0", "demand": [1, 1]},
            {"id": "u1", "demand": [1, 10], "weight": 2},
            {"id": "u2", "demand": [1e5, 1e-4]},
        ],
    }
    got = _totals(tmp_path, capsys, data, name)
    np.testing.assert_allclose(got, [2 / 3, 2 / 15, 2 / 3 * 1e-5], rtol=1e-9)
    # a third server that only a fourth user may use: the pooled totals do not fit the servers,
    # the sequential LPs decide the shares and their tolerance shows
    data["servers"].append({"id": "s3", "capacity": [1, 0.5]})
    data["users"].append({"id": "u3", "demand": [1, 1], "eligible": ["s3"]})
    code, out, err = _cli(tmp_path, capsys, data, name)
    assert code == 2 and out == ""
    assert err == (
        f"fairsim: error: {name}: the instance is numerically out of range for the exact solver: "
        f"user 'u0' (share {share}) has no saturated resource on 's1' on which its share is the "
        "largest: not max-min fair (relative tolerance 1e-06)\n"
    )
    data["servers"] = [{"id": "s", "capacity": [2, 2]}]
    data["users"] = data["users"][:3]
    got = _totals(tmp_path, capsys, data, name)
    np.testing.assert_allclose(got, [2 / 3, 2 / 15, 2 / 3 * 1e-5], rtol=1e-9)


def test_error_is_a_value_error() -> None:
    assert issubclass(NumericalRangeError, ValueError)
    assert issubclass(NumericalRangeError, InstanceError)


# --- units: an allocation must not depend on the unit a resource is measured in -----------------


def _rescaled(inst: Instance, factor: np.ndarray) -> Instance:
    """The same instance with resource r measured in units ``1 / factor[r]`` times as large."""
    out = replace(inst, capacity=inst.capacity * factor, demand=inst.demand * factor)
    check_range(out)
    return out


def _own(name: str, inst: Instance) -> Instance:
    return pooled(inst) if name in POOLED else inst


def _most(inst: Instance) -> np.ndarray:
    """Most tasks each user could run alone (unit-free): the scale of its task count."""
    g = (monopoly_tasks(inst.capacity, inst.demand) * serving(inst)).sum(axis=1)
    return np.minimum(g, inst.max_tasks)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    exact_instances(max_users=3),
    st.lists(st.integers(-6, 9), min_size=3, max_size=3),
    st.lists(st.floats(1.0, 9.99), min_size=3, max_size=3),
)
def test_allocation_does_not_depend_on_units(
    inst: Instance, exp: list[int], mant: list[float]
) -> None:
    """Per-resource scale factors 1e-6 ... 1e10: every exact mechanism, same task counts."""
    n_r = len(inst.resources)
    factor = np.array(mant[:n_r]) * 10.0 ** np.array(exp[:n_r], dtype=float)
    scaled = _rescaled(inst, factor)
    for name in EXACT:
        a, b = _own(name, inst), _own(name, scaled)
        x, y = solve_exact(name, a).sum(axis=1), solve_exact(name, b).sum(axis=1)
        assert (np.abs(x - y) <= 1e-6 * (np.abs(x) + _most(a)) + 1e-12).all(), (name, x, y)
    x = solve_exact("psdsf", inst, "tdm").sum(axis=1)
    y = solve_exact("psdsf", scaled, "tdm").sum(axis=1)
    assert (np.abs(x - y) <= 1e-6 * (np.abs(x) + _most(inst)) + 1e-12).all(), ("tdm", x, y)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# found by CI: memory saturated to its last ulp (31.6), which u0 needs 1e-3 of per task, read
# as 3.6e-12 more u0 tasks (1.1e-6 of the 3.2e-6 it fits alone) and refused a correct LMM-MMS
@example(([3.5, -3.0, 0.0, 4.0, -4.0, 0.0], [1, 1, 1], [-2.0, 1.5]))
@given(
    st.integers(1, 4).flatmap(
        lambda n_u: st.tuples(
            st.lists(st.floats(-5, 5), min_size=2 * n_u, max_size=2 * n_u),
            st.lists(st.sampled_from([1, 2, 3]), min_size=n_u, max_size=n_u),
            st.lists(st.floats(-2, 2), min_size=2, max_size=2),
        )
    )
)
def test_single_server_equals_drf_closed_form(args: tuple) -> None:
    """One server, positive demands spanning 1e-5 ... 1e5: DRF's closed form.

    Every user demands every resource, so one resource saturates and freezes everybody at one
    weighted dominant share: ``x_n = w_n t / D_n``, ``D_n = max_r d_nr / c_r``,
    ``t = min_r c_r / sum_n w_n d_nr / D_n``. DRFH, C-DRFH, TSF, LMM-MMS and PS-DSF coincide with
    DRF on one server (docs/mechanisms.md).
    """
    logd, w, logc = args
    d = 10.0 ** np.reshape(logd, (-1, 2))
    c = 10.0 ** np.asarray(logc)
    w = np.asarray(w, dtype=float)
    dom = (d / c).max(axis=1)
    t = (c / ((w / dom)[:, None] * d).sum(axis=0)).min()
    expected = w * t / dom
    data = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": c.tolist()}],
        "users": [
            {"id": f"u{n}", "demand": d[n].tolist(), "weight": float(w[n])} for n in range(len(w))
        ],
    }
    inst = parse_instance(data)
    for name in DRF_ON_ONE_SERVER:
        got = solve_exact(name, inst).sum(axis=1)
        np.testing.assert_allclose(got, expected, rtol=1e-7, err_msg=name)


# --- every field of an instance is used or refused ---------------------------------------------

CONSTRAINED: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [9, 18]}, {"id": "s2", "capacity": [9, 18]}],
    "users": [{"id": "A", "demand": [1, 4], "eligible": ["s1"]}, {"id": "B", "demand": [3, 1]}],
}


@pytest.mark.parametrize("name", sorted(POOLED))
def test_pooled_mechanisms_refuse_placement_constraints(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(tmp_path, capsys, CONSTRAINED, name)
    assert code == 2 and out == ""
    assert err == (
        f"fairsim: error: users[0].eligible: 1 of 2 servers: {name} pools the cluster into one "
        "server and cannot honour placement constraints (use drfh, c-drfh, tsf, psdsf, pf or "
        "lmm-mms)\n"
    )
    with pytest.raises(InstanceError, match=rf"^users\[0\]\.eligible: 1 of 2 servers: {name}"):
        solve_exact(name, parse_instance(CONSTRAINED))
    # listing every server is no constraint
    data = copy.deepcopy(CONSTRAINED)
    data["users"][0]["eligible"] = ["s2", "s1"]
    assert solve_exact(name, parse_instance(data)).shape == (2, 1)


def _weighted(data: dict, w: list[float]) -> Instance:
    d = copy.deepcopy(data)
    for u, wu in zip(d["users"], w, strict=True):
        u["weight"] = wu
    return parse_instance(d)


def test_lmm_mms_uses_weights() -> None:
    """Weighted maximin share ``mu_n = min(n_n, w_n / W sum_l gamma[n, l])`` (docs/mechanisms.md):
    weights 3, 3, 1 and 1, 1, 1 give different allocations when the users compete, and on one
    pool the weighted LMM-MMS is weighted bounded DRF."""
    ex2 = {  # LMM-MMS Example 2 (docs/mechanisms.md reconstruction)
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": [6, 6]}],
        "users": [
            {"id": "1", "demand": [1, 1], "max_tasks": 2},
            {"id": "2", "demand": [2, 2], "max_tasks": 3},
            {"id": "3", "demand": [3, 3], "max_tasks": 2},
        ],
    }
    one = solve_exact("lmm-mms", _weighted(ex2, [1, 1, 1])).sum(axis=1)
    three = solve_exact("lmm-mms", _weighted(ex2, [3, 3, 1])).sum(axis=1)
    np.testing.assert_allclose(one, [2, 1, 2 / 3], rtol=1e-7)
    # user 3's slice is 1/7 of the pool: mu = (2, 9/7, 2/7); ratios equalise at 7/6 for 2 and 3
    np.testing.assert_allclose(three, [2, 1.5, 1 / 3], rtol=1e-7)
    np.testing.assert_allclose(
        three, solve_exact("drf", _weighted(ex2, [3, 3, 1])).sum(axis=1), rtol=1e-7
    )
    # several servers: PS-DSF Fig. 1 with weights 3, 3, 1 and 1, 1, 1 gives 3, 3, 6 for every
    # weighted mechanism: s2 serves only user 3 and s1's memory is split by users 1 and 2 alone
    fig1 = {
        "resources": ["cpu", "mem", "bw"],
        "servers": [
            {"id": "s1", "capacity": [9, 12, 100]},
            {"id": "s2", "capacity": [12, 12, 0]},
        ],
        "users": [
            {"id": "u1", "demand": [1, 2, 10]},
            {"id": "u2", "demand": [1, 2, 1]},
            {"id": "u3", "demand": [1, 2, 0]},
        ],
    }
    for name in ("lmm-mms", "drfh", "psdsf"):
        for w in ([3, 3, 1], [1, 1, 1]):
            got = solve_exact(name, _weighted(fig1, w)).sum(axis=1)
            np.testing.assert_allclose(got, [3, 3, 6], rtol=1e-7, err_msg=f"{name} {w}")
    # ... and different ones once user 3 competes on s1 (no second server for it)
    fig1["servers"][1]["capacity"] = [12, 12, 1]
    fig1["users"][2]["demand"] = [1, 2, 1]
    one = solve_exact("lmm-mms", _weighted(fig1, [1, 1, 1])).sum(axis=1)
    three = solve_exact("lmm-mms", _weighted(fig1, [3, 3, 1])).sum(axis=1)
    assert three[2] < one[2] - 0.5


def test_online_fill_refuses_huge_task_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(tmp_path, capsys, TINY_DEMAND, "drf", "--online")
    assert code == 2 and out == ""
    assert err == (
        "fairsim: error: users: the online fill places tasks one at a time and could place up to "
        "4e+09 (limit 1,000,000); set max_tasks or solve without --online\n"
    )
    data = copy.deepcopy(TINY_DEMAND)
    data["users"][0]["max_tasks"] = 1000
    code, out, err = _cli(tmp_path, capsys, data, "drf", "--online")
    assert code == 0, err
    assert json.loads(out)["total_tasks"] == [1000, 3]
