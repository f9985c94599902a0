"""``fairsim solve`` with the online heuristics (static progressive filling of whole tasks):
the bound they place up to, and what they print."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import fairsim
from fairsim.cli import main
from fairsim.schedulers import available

# Ghodsi et al. (DRF), Section 4: one server <9 CPU, 18 GB>; A = <1, 4>, B = <3, 1>.
DRF: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [9, 18]}],
    "users": [{"id": "a", "demand": [1, 4]}, {"id": "b", "demand": [3, 1]}],
}
#: The online heuristics and the options that run them.
ONLINE = [
    ("ff-drfh", False),
    ("bf-drfh", False),
    ("drf", True),
    ("tsf", True),
    ("lmm-mms", True),
    ("psdsf", True),
    ("pf", True),
]


def _capped(max_tasks: float) -> dict[str, Any]:
    data = copy.deepcopy(DRF)
    data["users"][0]["max_tasks"] = max_tasks
    return data


@pytest.mark.parametrize(("name", "online"), ONLINE)
@pytest.mark.parametrize(("max_tasks", "whole"), [(1.9999, 1), (2.5, 2), (2, 2)])
def test_online_fill_places_at_most_floor_of_a_fractional_max_tasks(
    name: str, online: bool, max_tasks: float, whole: int
) -> None:
    out = fairsim.solve(_capped(max_tasks), name, online=online)
    # user a gets floor(max_tasks) tasks (it would get 3 unbounded), and that bound is printed
    assert out["tasks"] == [[whole], [2]]
    assert out["total_tasks"] == [whole, 2]
    assert out["max_tasks"] == [whole, None]


def test_exact_mechanism_keeps_the_fractional_max_tasks() -> None:
    out = fairsim.solve(_capped(2.5), "drf")
    assert out["tasks"] == [[2.5], [2.1666666666666665]]


# Three servers, three users, one bounded: every heuristic fills it differently.
HETERO: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [
        {"id": "s1", "capacity": [8, 16]},
        {"id": "s2", "capacity": [4, 32]},
        {"id": "s3", "capacity": [6, 6]},
    ],
    "users": [
        {"id": "a", "demand": [1, 3]},
        {"id": "b", "demand": [2, 1]},
        {"id": "c", "demand": [1, 1], "max_tasks": 4},
    ],
}
#: Every online heuristic that fills a plain instance (``udrf`` takes jobs; ``recorded``
#: replays a trace's placements and has none here).
HEURISTICS = [n.replace("<S>", "6") for n in available() if n not in ("udrf", "recorded")]


def _rescaled(data: dict[str, Any], resource: int, factor: float) -> dict[str, Any]:
    out = copy.deepcopy(data)
    for s in out["servers"]:
        s["capacity"][resource] *= factor
    for u in out["users"]:
        u["demand"][resource] *= factor
    return out


@pytest.mark.parametrize("name", HEURISTICS)
def test_online_task_counts_do_not_depend_on_the_units_of_a_resource(name: str) -> None:
    """Metamorphic: expressing one resource in other units (capacities and demands times the
    same factor) leaves every heuristic's task counts unchanged. The factors are powers of two,
    exact in float64, so a changed count is a dependence on the units, not a tie broken by a
    rounding (a factor such as 1/7 can flip ties in the shares)."""
    want = fairsim.solve(HETERO, name, online=True)["tasks"]
    assert sum(map(sum, want)) > 0
    for resource in (0, 1):
        for factor in (2.0**-10, 0.5, 8.0, 2.0**20):
            got = fairsim.solve(_rescaled(HETERO, resource, factor), name, online=True)
            assert got["tasks"] == want, (resource, factor)


@pytest.mark.parametrize(("capacity", "demand"), [([8, 16], [2, 4]), ([1, 1], [0.25, 0.25])])
def test_slots_divide_the_largest_server_whatever_the_units(
    capacity: list[float], demand: list[float]
) -> None:
    # each task is 1/4 of the largest server: slots-4 holds 4 of them, 2 per user
    data = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s1", "capacity": capacity}],
        "users": [{"id": "a", "demand": demand}, {"id": "b", "demand": demand}],
    }
    out = fairsim.solve(data, "slots-4")
    assert out["tasks"] == [[2], [2]]
    assert out["dominant_shares"] == [0.5, 0.5]


def test_recorded_is_refused_and_not_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it raised ValueError (a traceback): a static instance has no recorded placements
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(DRF))
    assert main(["solve", "recorded", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "fairsim: error: mechanism: 'recorded' replays a trace and needs the recorded placements "
        "of a google-2011 trace, on the trace's machines (cluster: {source: machine-events}, no "
        "servers draw); a static instance has none (run it with fairsim run)\n"
    )
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    listed = capsys.readouterr().out.split("online heuristics")[1]
    assert "bf-drfh" in listed and "kueue-fair" in listed and "recorded" not in listed


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "pf", "--online", "INST"],
        ["solve", "pf", "INST", "--online"],
        ["solve", "--online", "pf", "INST"],
        ["solve", "--compare", "drf,pf", "--online", "INST"],
    ],
)
def test_options_may_come_between_mechanism_and_instance(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "solve pf --online inst.json" was "unrecognized arguments: inst.json"
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(DRF))
    assert main([str(path) if a == "INST" else a for a in argv]) == 0
    out = json.loads(capsys.readouterr().out)
    if "--compare" in argv:
        assert [o["tasks"] for o in out["compare"]] == [[[3], [2]], [[3], [2]]]
    else:
        assert out["mechanism"] == "pf" and out["online"] is True
        assert out["tasks"] == [[3], [2]]


def test_a_third_positional_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(DRF))
    with pytest.raises(SystemExit) as exc:
        main(["solve", "pf", "--online", str(path), "extra.json"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (
        "fairsim: error: unrecognized arguments: extra.json (see fairsim --help)\n"
    )
