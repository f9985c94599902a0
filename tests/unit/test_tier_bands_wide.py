"""``leaves.tiers`` bands are checked and looked up as intervals: a wide band costs nothing
(a band [0, 1e11] filled a dict and an array priority by priority until the process was killed
for memory), and a band beyond the int32 priority column is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.config import LeafRule, parse_config
from fairsim.scenario.queues import _Assign
from fairsim.schedulers.exact.instance import parse_queues

QUEUES = [{"id": "A"}, {"id": "B"}]


def _cfg(tiers: dict[str, object]) -> dict[str, object]:
    return {
        "name": "t",
        "trace": {"format": "google-2011", "path": "x"},
        "schedulers": ["hdrf"],
        "queues": QUEUES,
        "leaves": {"by": "tier", "tiers": tiers},
    }


def test_a_band_beyond_the_priority_column_is_one_line() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(_cfg({"A": [0, 100_000_000_000]}))
    assert str(err.value) == (
        "config: leaves.tiers.A: [0, 100000000000] (a priority is a 32-bit integer: at most "
        "2147483647)"
    )


def test_overlap_of_wide_bands_names_the_first_common_priority() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(_cfg({"A": [0, 2**31 - 1], "B": [2**31 - 5, 2**31 - 1]}))
    assert str(err.value) == (
        "config: leaves.tiers: priority 2147483643 is in the bands of both 'A' and 'B'"
    )


def test_wide_bands_assign_as_narrow_ones() -> None:
    parse_config(_cfg({"A": [0, 8], "B": [9, 2**31 - 1]}))  # accepted, at once
    tree = parse_queues(QUEUES, [], ["cpu", "mem"], np.ones(2))
    assert tree is not None
    rule = LeafRule(by="tier", tiers={"B": [9, 2**31 - 1], "A": [2, 8]})
    prio = np.array([-1, 0, 1, 2, 5, 8, 9, 11, 2**31 - 1], dtype=np.int32)
    codes = _Assign(rule, tree).codes(np.array(["u"] * len(prio), dtype=object), prio)
    assert codes.tolist() == [-2, -2, -2, 0, 0, 0, 1, 1, 1]
