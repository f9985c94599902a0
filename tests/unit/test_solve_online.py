"""``fairsim solve`` with the online heuristics (static progressive filling of whole tasks):
the bound they place up to, and what they print."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import fairsim

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
