"""What ``fairsim solve`` prints: verified task counts at full float precision, snapped only to
the bounds the check proves and never above a capacity, each user's dominant share, a table for
people (``--format table``), and options a mechanism does not have refused (the papers'
examples)."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import PSDSF_FIG1

import fairsim
from fairsim.cli import main
from fairsim.errors import ConfigError
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.common import monopoly_tasks
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError, parse_instance
from fairsim.schedulers.exact.snap import fit_capacities, snap_to_bounds
from fairsim.schedulers.exact.verification import verify
from fairsim.schedulers.solve import solve_table

# DRFH paper (Wang, Li, Liang), Fig. 1: servers (2 CPU, 12 GB) and (12 CPU, 2 GB); u1 capped at 5.
DRFH_FIG1_CAP5: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [2, 12]}, {"id": "s2", "capacity": [12, 2]}],
    "users": [
        {"id": "u1", "demand": [0.2, 1], "max_tasks": 5},
        {"id": "u2", "demand": [1, 0.2]},
    ],
}
# Ghodsi et al. (DRF), Section 4: <9 CPU, 18 GB>; A = <1, 4>, B = <3, 1>.
DRF_EXAMPLE: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [9, 18]}],
    "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
}


def _fits(inst: Instance, tasks: list[list[float]], *, pool: bool = False) -> bool:
    """Whether the printed counts fit every capacity in plain float arithmetic."""
    cap = inst.capacity.sum(axis=0)[None, :] if pool else inst.capacity
    return bool((np.array(tasks, dtype=float).T @ inst.demand <= cap).all())


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "lmm-mms", "pf", "psdsf"])
def test_capped_user_prints_its_bound(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the LP solvers return 4.999999995 and 1.000000001 (drfh, tsf, lmm-mms) here; u1 runs its
    # 5 tasks on s1 (1 CPU, 5 GB), u2 fills s1's last CPU (1 task) and s2 (10 tasks)
    inst = parse_instance(copy.deepcopy(DRFH_FIG1_CAP5))
    raw = solve_exact(name, inst)
    f = tmp_path / "fig1-cap5.json"
    f.write_text(json.dumps(DRFH_FIG1_CAP5))
    assert main(["solve", name, str(f)]) == 0
    text = capsys.readouterr().out
    out = json.loads(text)
    if name in ("drfh", "tsf", "lmm-mms"):
        assert raw[0, 0] != 5.0 and abs(raw[0, 0] - 5.0) <= 1e-8  # what the snap repairs
    if name == "pf":  # SLSQP: u2's counts as it found them, within 1e-12 of 1 and 10
        assert out["tasks"][0] == [5.0, 0.0]
        np.testing.assert_allclose(out["tasks"][1], [1.0, 10.0], rtol=1e-12)
    else:
        # u1 snapped to its max_tasks; u2's 1.000000001 on s1 scaled to what s1's CPU holds
        assert out["tasks"] == [[5.0, 0.0], [1.0, 10.0]]
        # dominant shares over the cluster's 14 CPU, 14 GB: u1 5 GB / 14, u2 11 CPU / 14
        assert out["dominant_shares"] == [5 / 14, 11 / 14]
        assert "99999" not in text and "00000" not in text
    assert _fits(inst, out["tasks"])


def test_worked_examples_at_full_precision() -> None:
    # DRF Section 4: 3 and 2 tasks, both at dominant share 2/3
    out = fairsim.solve(DRF_EXAMPLE, "drf")
    assert out["tasks"] == [[3.0], [2.0]] and out["dominant_shares"] == [2 / 3, 2 / 3]
    # PF on the same instance: 45/11 and 18/11 tasks, every digit the solver found (previously
    # rounded to 5 decimals: 4.09091 and 1.63636, 9e-6 above 45/11 and over the CPU)
    inst = parse_instance(copy.deepcopy(DRF_EXAMPLE))
    out = fairsim.solve(DRF_EXAMPLE, "pf")
    np.testing.assert_allclose(out["tasks"], [[45 / 11], [18 / 11]], rtol=1e-13)
    assert out["tasks"] != [[4.09091], [1.63636]] and _fits(inst, out["tasks"])
    assert out["dominant_shares"] == [
        max(out["tasks"][0][0] * 1 / 9, out["tasks"][0][0] * 4 / 18),
        max(out["tasks"][1][0] * 3 / 9, out["tasks"][1][0] * 1 / 18),
    ]
    # PS-DSF Fig. 1 under BMF (pooled): 3, 3, 6 as the LP found them (3.000000009...), the
    # pooled memory (24 GB) full and not exceeded
    out = fairsim.solve(PSDSF_FIG1, "bmf")
    np.testing.assert_allclose(out["tasks"], [[3.0], [3.0], [6.0]], rtol=1e-8)
    assert out["tasks"] != [[3.0], [3.0], [6.0]]  # no rounding to a value no bound proves
    assert _fits(parse_instance(copy.deepcopy(PSDSF_FIG1)), out["tasks"], pool=True)
    # PF on DRFH Fig. 1: the solver leaves u1 ~1e-15 tasks on s2 or none, depending on the HiGHS
    # build (~1e-15 in earlier CI runs, exactly 0 with scipy 1.17.1); either way they print as 0
    # (the snap itself is checked on injected values in test_snap_rules)
    fig1 = copy.deepcopy(DRFH_FIG1_CAP5)
    del fig1["users"][0]["max_tasks"]
    assert abs(solve_exact("pf", parse_instance(copy.deepcopy(fig1)))[0, 1]) < 1e-9
    out = fairsim.solve(fig1, "pf")
    assert out["tasks"][0][1] == 0.0 and out["tasks"][1][0] == 0.0
    np.testing.assert_allclose(out["tasks"], [[10.0, 0.0], [0.0, 10.0]], rtol=1e-12)
    # an online heuristic: integer counts and the shares at full precision
    online = fairsim.solve(fig1, "bf-drfh")
    assert online["tasks"] == [[10, 0], [0, 10]]
    assert all(type(v) is int for row in online["tasks"] for v in row)
    assert online["dominant_shares"] == [10 / 14, 10 / 14]


#: A split LP's overshoot: u1 (2 CPUs a task, on s0 only) gets 15.0000000015 tasks of s0's 30
#: CPUs from ``drfh`` and ``tsf`` (found among the independent LP check's random instances).
LP_OVERSHOOT: dict[str, Any] = {
    "resources": ["cpu"],
    "servers": [
        {"id": "s0", "capacity": [30.0]},
        {"id": "s1", "capacity": [12.0]},
        {"id": "s2", "capacity": [0.0]},
    ],
    "users": [
        {"id": "u0", "demand": [1.0], "max_tasks": 3},
        {"id": "u1", "demand": [2.0], "eligible": ["s0", "s2"]},
    ],
}


@pytest.mark.parametrize("name", ["drfh", "tsf"])
def test_a_printed_allocation_never_exceeds_a_capacity(name: str) -> None:
    inst = parse_instance(copy.deepcopy(LP_OVERSHOOT))
    raw = solve_exact(name, inst)
    assert (raw.T @ inst.demand > inst.capacity).any()  # the solver's answer exceeds s0's CPUs
    out = fairsim.solve(LP_OVERSHOOT, name)
    assert _fits(inst, out["tasks"])
    # s0's column scaled by 30 / 30.000000003: exactly what fits
    assert out["tasks"] == [[0.0, 3.0, 0.0], [15.0, 0.0, 0.0]]
    verify(name, inst, np.array(out["tasks"]))


def test_snap_rules() -> None:
    one = parse_instance(
        {
            "resources": ["cpu"],
            "servers": [{"id": "a", "capacity": [20.0]}, {"id": "b", "capacity": [1e6]}],
            "users": [
                {"id": "capped", "demand": [1.0], "max_tasks": 10},
                {"id": "few", "demand": [1.0], "max_tasks": 3},
                {"id": "tiny", "demand": [1.0]},
            ],
        }
    )
    x = np.array([[9.999999990000001, -1e-12], [2e-7, 1.5], [0.0, 5e-7]])
    y, pinned = snap_to_bounds(one, x)
    # the capped user's total is within 1e-6 x 10 of its bound: exactly 10; its -1e-12 on b
    # (the check accepts down to -1e-6 gamma = -1) is 0; "few"'s 2e-7 tasks on a are below 1e-6
    # of gamma (2e-5) and of its total (1.5e-6): 0; "tiny" keeps its 5e-7 tasks, below 1e-6 of
    # gamma on b (1) but all it has
    assert y.tolist() == [[10.0, 0.0], [0.0, 1.5], [0.0, 5e-7]]
    assert pinned.tolist() == [[True, False], [False, False], [False, False]]
    assert math.fsum(y[0]) == 10.0
    # 2e-6 of max_tasks off is not the bound; 3.3e-7 off is: its counts scaled to sum to 3
    y, pinned = snap_to_bounds(one, np.array([[9.99998, 0.0], [1e-5, 2.999991], [0.0, 0.0]]))
    assert y[0].tolist() == [9.99998, 0.0] and not pinned[0].any()
    assert math.fsum(y[1]) == 3.0 and pinned[1].all()
    np.testing.assert_allclose(y[1], [1e-5, 2.99999], rtol=1e-6)
    # a snap that raises a server's use: the others on it make room (fit_capacities)
    two = parse_instance(copy.deepcopy(DRFH_FIG1_CAP5))
    y, pinned = snap_to_bounds(two, np.array([[4.999999995, 0.0], [1.000000001, 10.0]]))
    assert y.tolist() == [[5.0, 0.0], [1.000000001, 10.0]]
    assert not _fits(two, y.tolist())
    fitted = fit_capacities(two, y, pinned)
    assert fitted.tolist() == [[5.0, 0.0], [1.0, 10.0]] and _fits(two, fitted.tolist())
    # pinned counts alone above a capacity: the whole column is scaled
    over = fit_capacities(two, np.array([[10.000001, 0.0], [0.0, 0.0]]), np.ones((2, 2), bool))
    assert _fits(two, over.tolist()) and over[0, 0] == pytest.approx(10.0, rel=1e-15)


def test_table_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "fig1-cap5.json"
    f.write_text(json.dumps(DRFH_FIG1_CAP5))
    assert main(["solve", "drfh", str(f), "--format", "table"]) == 0
    assert capsys.readouterr().out == (
        "drfh (tasks of each user on each server)\n"
        "user     s1      s2   total  dominant share\n"
        "u1    5.000       0   5.000          0.3571\n"
        "u2    1.000  10.000  11.000          0.7857\n"
        "Rounded for reading: counts to 3 decimals (0 means none at all), dominant shares to 4 "
        "decimals;\n"
        "--format json gives every digit.\n"
    )
    assert main(["solve", "bf-drfh", str(f), "--format", "table"]) == 0
    text = capsys.readouterr().out
    assert "u2     1  10     11          0.7857\n" in text
    assert "counts are whole tasks, dominant shares to 4 decimals" in text
    # PF's 45/11 on the DRF example: 4.091 for people, every digit in the JSON
    g = tmp_path / "drf.json"
    g.write_text(json.dumps(DRF_EXAMPLE))
    assert main(["solve", "pf", str(g), "--format", "table"]) == 0
    assert "A     4.091  4.091          0.9091\n" in capsys.readouterr().out
    assert main(["solve", "--compare", "drf,pf", str(g), "--format", "table"]) == 0
    text = capsys.readouterr().out
    assert text.count("Rounded for reading") == 2
    assert text.endswith(
        "total tasks per user, gap pf - drf\n"
        "user    drf     pf     gap\n"
        "A     3.000  4.091   1.091\n"
        "B     2.000  1.636  -0.364\n"
    )


def test_table_of_many_servers() -> None:
    servers = [{"id": f"s{k}", "capacity": [1.0, 1.0]} for k in range(14)]
    data = {
        "resources": ["cpu", "mem"],
        "servers": servers,
        "users": [{"id": "u", "demand": [1.0, 0.5], "eligible": ["s0", "s3"]}],
    }
    text = solve_table(fairsim.solve(data, "drfh"))
    assert text.splitlines()[1:4] == [
        "user     s0     s3  total  dominant share",
        "u     1.000  1.000  2.000          0.1429",
        "12 of 14 servers hold no tasks, not shown",
    ]
    data["users"][0].pop("eligible")
    text = solve_table(fairsim.solve(data, "drfh"))
    assert text.splitlines()[1:4] == [
        "user   total  dominant share",
        "u     14.000          1.0000",
        "14 servers hold tasks: per-server counts in --format json",
    ]


def _page() -> str:
    return (Path(__file__).resolve().parents[2] / "docs" / "mechanisms.md").read_text()


def test_docs_contract_example_is_what_solve_prints() -> None:
    page = _page()
    section = page[page.index("## The `fairsim solve` contract") :]
    blocks = re.findall(r"```json\n(.*?)\n```", section, re.S)
    data, shown = json.loads(blocks[0]), json.loads(blocks[1])
    assert fairsim.solve(data, "psdsf") == shown
    # the table shown for DRFH Fig. 1 with u1 capped at 5 is solve_table's
    table = re.search(r"```\n(drfh \(tasks.*?)```", section, re.S)
    assert table is not None
    assert table.group(1) == solve_table(fairsim.solve(DRFH_FIG1_CAP5, "drfh"))


def test_docs_drf_example_numbers() -> None:
    # gamma (what the server would hold of a user alone) and DRF's allocation, as the page says
    assert (
        " ".join(_page().split()).count(
            "alone, the server would hold 4.5 of A's tasks and 3 of B's; "
            "shared, DRF gives them 3 and 2"
        )
        == 1
    )
    inst = parse_instance(copy.deepcopy(DRF_EXAMPLE))
    assert monopoly_tasks(inst.capacity, inst.demand)[:, 0].tolist() == [4.5, 3.0]
    assert fairsim.solve(DRF_EXAMPLE, "drf")["tasks"] == [[3.0], [2.0]]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["drf", "--sharing", "tdm"], r"sharing: 'drf' has no sharing option"),
        (["bf-drfh", "--sharing", "rdm"], r"sharing: 'bf-drfh' has no sharing option"),
        (["psdsf", "--online", "--sharing", "tdm"], r"sharing: 'psdsf --online' has no sharing"),
        (["drfh", "--online"], r"online: 'drfh' has no online scheduler.*ff-drfh and bf-drfh"),
    ],
)
def test_options_a_mechanism_lacks_are_errors(
    args: list[str], match: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "drf.json"
    f.write_text(json.dumps(DRF_EXAMPLE))
    assert main(["solve", args[0], str(f), *args[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert re.search(match, err), err
    with pytest.raises(ConfigError, match=r"^sharing: 'tsf' has no sharing option"):
        fairsim.solve(DRF_EXAMPLE, "tsf", sharing="rdm")
    # PS-DSF takes both models
    rdm = fairsim.solve(PSDSF_FIG1, "psdsf", sharing="rdm")
    tdm = fairsim.solve(PSDSF_FIG1, "psdsf", sharing="tdm")
    assert (
        np.sum(rdm["tasks"], axis=1).tolist()
        == np.sum(tdm["tasks"], axis=1).tolist()
        == [
            3.0,
            3.0,
            6.0,
        ]
    )


def test_a_snap_the_check_refuses_falls_back_to_the_solvers_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fairsim.schedulers.exact import snap

    inst = parse_instance(copy.deepcopy(DRFH_FIG1_CAP5))
    raw = solve_exact("drfh", inst)
    seen: list[np.ndarray] = []

    def refuse_first(name: str, inst: Instance, y: np.ndarray, sharing: str = "rdm") -> None:
        seen.append(y.copy())
        if len(seen) == 1:  # the snapped allocation
            raise NumericalRangeError("drfh: refused for the test")

    monkeypatch.setattr(snap, "verify", refuse_first)
    y = snap.printed_allocation("drfh", inst, raw)
    assert seen[0].tolist() == [[5.0, 0.0], [1.0, 10.0]]
    assert len(seen) == 2 and np.array_equal(seen[1], y)
    np.testing.assert_allclose(y, raw, rtol=1e-15)  # the solver's counts, fitted
    assert _fits(inst, y.tolist())

    def refuse(name: str, inst: Instance, y: np.ndarray, sharing: str = "rdm") -> None:
        raise NumericalRangeError("drfh: refused for the test")

    monkeypatch.setattr(snap, "verify", refuse)
    with pytest.raises(NumericalRangeError, match=r"^drfh: refused for the test$"):
        snap.printed_allocation("drfh", inst, raw)
