"""``fairsim properties``: unverifiable instances are counted with their reason and the run goes
on, the exit status, and the default output folder (docs/mechanisms.md, "Property checker")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairsim.schedulers.exact.properties as properties
from fairsim.cli import main
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError, parse_instance
from fairsim.schedulers.exact.properties import PROPERTIES, Unverifiable, check, instance_data
from fairsim.schedulers.exact.property_table import (
    LITERATURE,
    format_table,
    property_table,
    random_instance,
)


def _refuse_when_a_user_left(
    monkeypatch: pytest.MonkeyPatch, mechanism: str, *, users: int = 1
) -> None:
    """``mechanism`` fails (as a numerically out-of-range instance) on the instances of the
    population-monotonicity check (the only ones ``check`` derives with other ``user_ids``) that
    keep at least ``users`` users."""
    real_solve, real_replace = properties.solve_exact, properties.replace
    left: list[Instance] = []  # held, so that no other instance reuses their id()

    def replace(inst: Instance, **changes: Any) -> Instance:
        out = real_replace(inst, **changes)
        if "user_ids" in changes and len(out.user_ids) >= users:
            left.append(out)
        return out

    def solve(name: str, inst: Instance, *args: Any) -> np.ndarray:
        if name == mechanism and any(inst is i for i in left):
            raise NumericalRangeError(f"{name}: out of range for the test")
        return real_solve(name, inst, *args)

    monkeypatch.setattr(properties, "replace", replace)
    monkeypatch.setattr(properties, "solve_exact", solve)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_unverifiable_instance_is_counted_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # random instances only (--positive); drf fails on every population-monotonicity solve
    _refuse_when_a_user_left(monkeypatch, "drf")
    out = tmp_path / "o"
    out.mkdir()
    table = property_table(["drf", "af"], 5, 3, out, positive=True)
    rng = np.random.default_rng(3)
    random_instances = [random_instance(rng, k, positive=True) for k in range(5)]
    drf, left = table["drf"], table["drf"]["unverifiable"]
    # every instance is unverifiable for drf (each has 2 users or more), af is untouched
    assert [u["instance"] for u in left] == [0, 1, 2, 3, 4]
    assert all(drf[p]["checked"] == 0 for p in PROPERTIES)
    assert table["af"]["unverifiable"] == [] and table["af"]["sharing-incentive"]["checked"] == 5
    for u in left:
        assert u["step"].startswith("population-monotonicity: user 'u")
        assert u["step"].endswith("' leaves")
        assert u["reason"] == "drf: out of range for the test"
        assert u["file"] == f"drf--unverifiable-{u['instance']}.json"
        # the file is the instance that failed (one user fewer, pooled), a fairsim solve input
        saved = parse_instance(json.loads((out / u["file"]).read_text()))
        assert saved.server_ids == ("pool",)
        gone = u["step"].split("'")[1]
        everyone = parse_instance(random_instances[u["instance"]]).user_ids
        assert saved.user_ids == tuple(n for n in everyone if n != gone)
    text = format_table(table)
    assert text.splitlines()[2].endswith("| 5 |") and text.splitlines()[3].endswith("| 0 |")
    assert "- `drf`, instance 0, population-monotonicity: user 'u" in text
    assert sorted(p.name for p in out.glob("drf--*")) == [
        f"drf--unverifiable-{k}.json" for k in range(5)
    ]


def test_check_names_the_step_and_the_instance_that_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = parse_instance(LITERATURE[3])  # DRFH Fig. 1: users u1, u2
    real = properties.solve_exact

    def solve(name: str, i: Instance, *args: Any) -> np.ndarray:
        if not np.array_equal(i.demand, inst.demand):  # a misreport
            raise NumericalRangeError("tsf: out of range for the test")
        return real(name, i, *args)

    monkeypatch.setattr(properties, "solve_exact", solve)
    with pytest.raises(Unverifiable) as info:
        check("tsf", inst, np.random.default_rng(0))
    exc = info.value
    assert exc.step in (
        "strategy-proofness: user 'u1' misreports its demand",
        "strategy-proofness: user 'u2' misreports its demand",
    )
    liar = inst.user_ids.index(exc.step.split("'")[1])
    assert (exc.instance.demand[liar] >= inst.demand[liar]).all()
    assert (exc.instance.demand[liar] > inst.demand[liar]).any()
    assert str(exc) == f"{exc.step}: tsf: out of range for the test"
    assert isinstance(exc, NumericalRangeError)


def test_instance_data_round_trips() -> None:
    data = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "a", "capacity": [4.0, 2.0]}, {"id": "b", "capacity": [1.0, 0.0]}],
        "users": [
            {"id": "x", "demand": [1.0, 0.5], "weight": 2.0, "max_tasks": 3.0},
            {"id": "y", "demand": [0.0, 1.0], "eligible": ["a"]},
            {"id": "z", "demand": [1.0, 1.0], "eligible": []},
        ],
    }
    assert instance_data(parse_instance(data)) == data


def test_exit_status_says_whether_every_instance_was_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # DRF with positive demands and no constraints: every property holds (Ghodsi et al.)
    drf = ["properties", "--mechanism", "drf", "--instances", "4", "--positive", "--unconstrained"]
    code, out, err = _cli([*drf, "--out", str(tmp_path / "a")], capsys)
    assert (code, err) == (0, "") and "| `drf` | 0/4 | 0/4 | 0/4 | 0/4 |" in out
    # the papers' instances: AF breaks sharing incentive
    af = ["properties", "--mechanism", "af", "--instances", "4"]
    code, out, _ = _cli([*af, "--out", str(tmp_path / "b")], capsys)
    assert code == 0 and "| `af` | 2/4 |" in out  # violations are findings, not failures
    _refuse_when_a_user_left(monkeypatch, "drf")
    code, out, err = _cli([*drf, "--out", str(tmp_path / "c")], capsys)
    assert (code, err) == (1, "") and "| `drf` | 0/0 | 0/0 | 0/0 | 0/0 |" in out
    assert "Unverifiable (left out of the counts above):" in out
    # af: only PS-DSF Fig. 1 (3 users) is unverifiable; AF still breaks sharing incentive on
    # <30, 30>, <1, 3>, <1, 1>
    _refuse_when_a_user_left(monkeypatch, "af", users=2)
    code, out, _ = _cli([*af, "--out", str(tmp_path / "d")], capsys)
    assert code == 1 and "| `af` | 1/3 |" in out
    table = json.loads((tmp_path / "d" / "table.json").read_text())
    assert [u["instance"] for u in table["af"]["unverifiable"]] == [0]
    # the table, then what was checked and where the files are
    assert out.startswith(
        (tmp_path / "d" / "table.md").read_text() + "\n4 instances: the papers' 4"
    )
    assert " ".join(out.split()).endswith(
        f"Unverifiable: 1 (mechanism, instance) pair, each instance written to {tmp_path / 'd'} "
        "as <mechanism>--unverifiable-<instance>.json."
    )


def test_default_out_is_replaced_by_the_next_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "results" / "properties"
    for _ in range(2):  # the same command twice in a row
        code, _, err = _cli(["properties", "--mechanism", "af", "--instances", "4"], capsys)
        assert code == 0 and err == ""
        assert (default / "af--sharing-incentive.json").is_file()
    # a second run (here one without violations) replaces the folder whole
    argv = ["properties", "--mechanism", "drf", "--instances", "2", "--positive"]
    code, out, err = _cli(argv, capsys)
    assert (code, err) == (0, "")
    assert sorted(p.name for p in default.iterdir()) == ["table.json", "table.md"]
    assert out.startswith((default / "table.md").read_text() + "\n2 instances, all random")
    assert out.endswith(
        "Counterexamples: none found, none written (table in results/properties).\n"
    )
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["properties"]  # no .tmp left
    # a folder named with --out is the researcher's: refused when not empty
    code, _, err = _cli([*argv, "--out", str(default)], capsys)
    assert code == 2 and "already exists and is not empty" in err
