"""The queue tree of an instance (``parse_queues`` in ``schedulers/exact/instance.py``): one-line
errors naming the queue, guarantees and limits (fairsim's extension) in numbers, and the fields
other mechanisms refuse."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import fairsim
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.instance import InstanceError, parse_instance

BASE: dict[str, Any] = {
    "resources": ["cpu", "gpu"],
    "servers": [{"id": "s1", "capacity": [6, 4]}, {"id": "s2", "capacity": [4, 6]}],
    "queues": [{"id": "A", "weight": 1}, {"id": "B", "weight": 3}],
    "users": [
        {"id": "a", "demand": [1, 0], "queue": "A"},
        {"id": "b", "demand": [1, 0], "queue": "B"},
    ],
}


def _with(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for i, extra in changes.get("queue", {}).items():
        data["queues"][i].update(extra)
    data["queues"] += changes.get("more", [])
    for i, extra in changes.get("user", {}).items():
        data["users"][i].update(extra)
    return data


def _tasks(data: dict[str, Any]) -> list[float]:
    return [row[0] for row in fairsim.solve(data, "hdrf")["tasks"]]


def test_weights_split_the_pool() -> None:
    # 10 CPUs pooled; A and B weigh 1 and 3
    assert _tasks(BASE) == pytest.approx([2.5, 7.5], rel=1e-12)


def test_a_guarantee_is_served_first_and_counts_towards_the_fair_share() -> None:
    # A is guaranteed 6 CPUs: a gets them first, then B rises from 0 to the 4 left (its level
    # 4 / 3 stays below A's 6 / 1: the guarantee is not added to a fair share on top)
    assert _tasks(_with(queue={0: {"guarantee": [6, 0]}})) == pytest.approx([6, 4], rel=1e-12)
    # the same as a fraction of the pool
    share = _with(queue={0: {"guarantee_share": [0.6, 0]}})
    assert _tasks(share) == pytest.approx([6, 4], rel=1e-12)
    # a guarantee on a resource a does not demand holds nothing for a
    assert _tasks(_with(queue={0: {"guarantee": [0, 6]}})) == pytest.approx([2.5, 7.5])
    # a guarantee below the fair share changes nothing
    assert _tasks(_with(queue={0: {"guarantee": [2, 0]}})) == pytest.approx([2.5, 7.5])


def test_a_limit_caps_the_queue_and_the_rest_goes_to_the_others() -> None:
    assert _tasks(_with(queue={1: {"limit": [5, None]}})) == pytest.approx([5, 5], rel=1e-12)
    assert _tasks(_with(queue={1: {"limit_share": [0.5, None]}})) == pytest.approx([5, 5])
    # a limit on a resource nobody demands binds nothing
    assert _tasks(_with(queue={0: {"limit": [None, 0]}})) == pytest.approx([2.5, 7.5])


def test_nested_guarantees_and_a_user_at_the_root() -> None:
    data = _with(
        queue={0: {"guarantee": [6, 0]}},
        more=[{"id": "A1", "parent": "A", "guarantee": [1, 0]}],
        user={0: {"queue": "A1"}},
    )
    data["users"].append({"id": "c", "demand": [1, 0], "weight": 4})
    # stage 1: a fills A1's guarantee (1) then A's (6); stage 2: B and c rise from 0 to their
    # levels against A's 6 (B 3 x, c 4 x): 4 CPUs left, shared 3:4
    x = _tasks(data)
    assert x == pytest.approx([6, 12 / 7, 16 / 7], rel=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"queue": {1: {"parent": "X"}}}, r"queues\[1\]\.parent: unknown queue 'X' for queue 'B'"),
        (
            {"queue": {0: {"parent": "B"}, 1: {"parent": "A"}}},
            r"queues\[0\]\.parent: queue 'A' is its own ancestor \(A -> B -> A\)",
        ),
        ({"queue": {0: {"weight": 0}}}, r"queues\[0\]\.weight: 0 \(expected a finite number > 0\)"),
        ({"queue": {0: {"weight": -2}}}, r"queues\[0\]\.weight: -2"),
        ({"more": [{"id": "A"}]}, r"queues\[2\]\.id: duplicate queue id 'A'"),
        ({"queue": {0: {"share": 1}}}, r"queues\[0\]: unknown key 'share' for queue 'A'"),
        ({"user": {1: {"queue": "C"}}}, r"users\[1\]\.queue: unknown queue 'C' \(known: A, B\)"),
        (
            {"queue": {0: {"guarantee": [11, 0]}}},
            r"queues\[0\]\.guarantee\[0\]: queue 'A' is guaranteed 11 of 'cpu', above the "
            r"pool's 10",
        ),
        (
            {"queue": {0: {"guarantee": [6, 0]}, 1: {"guarantee": [5, 0]}}},
            r"queues\[1\]\.guarantee\[0\]: the queues guaranteed at the top \('A', 'B'\) are "
            r"guaranteed 11 of 'cpu' together, above the pool's 10",
        ),
        (
            {
                "queue": {0: {"guarantee": [4, 0]}},
                "more": [{"id": "A1", "parent": "A", "guarantee": [5, 0]}],
            },
            r"queues\[2\]\.guarantee\[0\]: queue 'A1' is guaranteed 5 of 'cpu', above the 4 of "
            r"its guaranteed ancestor 'A'",
        ),
        (
            {"queue": {0: {"guarantee": [4, 0], "limit": [3, None]}}},
            r"queues\[0\]\.limit\[0\]: queue 'A' is limited to 3 of 'cpu', below its guarantee 4",
        ),
        (  # before: accepted, a guarantee no allocation gives (A1 holds at most A's 3)
            {
                "queue": {0: {"limit": [3, None]}},
                "more": [{"id": "A1", "parent": "A", "guarantee": [4, 0]}],
            },
            r"queues\[2\]\.guarantee\[0\]: queue 'A1' is guaranteed 4 of 'cpu', above the limit 3 "
            r"of its ancestor 'A'",
        ),
        (  # before: accepted, and queues.parquet had two rows named (root)
            {"more": [{"id": "(root)"}]},
            r"queues\[2\]\.id: '\(root\)' names the tree's root, reserved",
        ),
        (
            {"queue": {0: {"guarantee": [1, 0], "guarantee_share": [0.1, 0]}}},
            r"queues\[0\]: both 'guarantee' and 'guarantee_share' given for queue 'A'",
        ),
        (
            {"queue": {0: {"limit_share": [1.5, None]}}},
            r"queues\[0\]\.limit_share\[0\]: 1.5 \(expected a fraction of the pool, at most 1\)",
        ),
        ({"queue": {0: {"limit": [1]}}}, r"queues\[0\]\.limit: has 1 entries, expected 2"),
        ({"queue": {0: {"guarantee": [-1, 0]}}}, r"queues\[0\]\.guarantee\[0\]: -1"),
        (  # before: IndexError: invalid index to scalar variable, in the exact H-DRF's fill
            {"queue": {0: {"weight": 1e308}, 1: {"weight": 1e-308}}},
            r"queues\[0\]\.weight: 1e\+308, and 1e-308 for queue 'B': a ratio outside "
            r"float64's normal range \(at most 4.5e\+307\)",
        ),
        (  # before: RecursionError in the exact H-DRF (600 levels) or yarn-fair (1,500)
            {"more": [{"id": f"Q{k}", "parent": f"Q{k - 1}" if k else "A"} for k in range(100)]},
            r"queues\[101\]\.parent: queue 'Q99' is 101 levels deep, more than the 100 fairsim "
            r"handles",
        ),
    ],
)
def test_bad_trees_are_one_line_errors_naming_the_queue(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(InstanceError, match=message):
        parse_instance(_with(**change))


def test_a_chain_of_max_depth_solves() -> None:
    """A chain of MAX_QUEUE_DEPTH levels is accepted and solved (the user in the deepest queue
    gets the pool alone, 8 tasks of <0.25, 0.25> on <2, 2>)."""
    from fairsim.schedulers.exact.instance import MAX_QUEUE_DEPTH

    queues = [{"id": f"Q{k}", "parent": f"Q{k - 1}" if k else None} for k in range(MAX_QUEUE_DEPTH)]
    data = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": [2, 2]}],
        "queues": queues,
        "users": [{"id": "u", "demand": [0.25, 0.25], "queue": f"Q{MAX_QUEUE_DEPTH - 1}"}],
    }
    from fairsim.schedulers.exact import solve_exact

    x = solve_exact("hdrf", parse_instance(data))
    assert float(x.sum()) == pytest.approx(8.0)


def test_queues_must_be_a_list() -> None:
    data = copy.deepcopy(BASE)
    data["queues"] = {"A": 1}
    with pytest.raises(InstanceError, match=r"queues: expected a list of queue objects"):
        parse_instance(data)


def test_only_hdrf_reads_the_tree() -> None:
    with pytest.raises(InstanceError, match=r"queues: drf allocates the users as one flat set"):
        fairsim.solve(BASE, "drf")
    with pytest.raises(InstanceError, match=r"queues: ff-drfh allocates the users as one flat"):
        fairsim.solve(BASE, "ff-drfh")
    with pytest.raises(InstanceError, match=r"queues: drfh allocates"):
        solve_exact("drfh", parse_instance(BASE))
    flat = {k: v for k, v in BASE.items() if k != "queues"}
    flat["users"] = [{k: v for k, v in u.items() if k != "queue"} for u in BASE["users"]]
    assert fairsim.solve(flat, "drf")["tasks"] == [[5.0], [5.0]]
    # a user naming a queue without a "queues" list
    lone = copy.deepcopy(flat)
    lone["users"][0]["queue"] = "A"
    with pytest.raises(InstanceError, match=r"users\[0\]\.queue: unknown queue 'A' \(known: none"):
        parse_instance(lone)


def test_hdrf_pools_and_refuses_placement_constraints() -> None:
    data = _with(user={0: {"eligible": ["s1"]}})
    with pytest.raises(InstanceError, match=r"users\[0\]\.eligible: 1 of 2 servers: hdrf pools"):
        fairsim.solve(data, "hdrf")
    out = fairsim.solve(BASE, "hdrf")
    assert out["servers"] == ["pool"]
    assert np.allclose(out["dominant_shares"], [0.25, 0.75])


def test_the_tree_round_trips_through_the_checker_files() -> None:
    from fairsim.schedulers.exact.properties import instance_data

    data = _with(queue={0: {"guarantee": [6, 0], "limit": [8, None]}})
    again = parse_instance(instance_data(parse_instance(data)))
    assert fairsim.solve(instance_data(again), "hdrf") == fairsim.solve(data, "hdrf")
    assert again.queues is not None and again.queues.ids == ("A", "B")
