"""The compiled queue tree of online ``hdrf`` (``schedulers/_hdrf_kernel.py``) against the
definition, recomputed from scratch at every descent of random runs: every queue's
consumption vector is its blocked children's vectors plus its unblocked children's rescaled to
the smallest level among them, its level the largest entry over the resources its unblocked
leaves' head tasks demand (every entry when none) over its weight (Bhattacharya et al., SoCC
2013, Section 4; ``docs/hdrf.md``); the descent reaches the leaf those levels lead to; and the
compiled reservation wakes the leaves the plain scan over :meth:`HDRF._by_key`'s order wakes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers import random_frame, run_on_tree

from fairsim.schedulers import _hdrf_kernel as kern
from fairsim.schedulers.exact.instance import parse_queues
from fairsim.schedulers.hdrf_online import HDRF
from fairsim.schedulers.registry import make_scheduler

TREES: list[tuple[list[dict[str, Any]], dict[str, str]]] = [
    # production with a guarantee; batch and free under a weighted parent (google-tiers' shape)
    (
        [{"id": "prod", "guarantee_share": [0.4, 0.4]}, {"id": "shared", "weight": 2},
         {"id": "batch", "parent": "shared", "weight": 4}, {"id": "free", "parent": "shared"}],
        {"0": "prod", "1": "batch", "2": "batch", "3": "free", "4": "free", "5": "prod"},
    ),
    # three levels deep, a limit, leaves in inner queues and one user at the root
    (
        [{"id": "a", "weight": 3}, {"id": "b", "parent": "a"}, {"id": "c", "parent": "b"},
         {"id": "d", "limit_share": [0.5, None]}],
        {"0": "a", "1": "b", "2": "c", "3": "c", "4": "d"},
    ),
    # two guaranteed queues at the root, one nested queue
    (
        [{"id": "g1", "guarantee_share": [0.45, 0.45]},
         {"id": "g2", "guarantee_share": [0.45, 0.45]}, {"id": "x", "parent": "g2", "weight": 2}],
        {"0": "g1", "1": "g1", "2": "x", "3": "g2", "4": "x", "5": "g1"},
    ),
]  # fmt: skip


def _scratch(sched: HDRF) -> tuple[dict[int, float], dict[int, bool]]:
    """Every queue node's level and whether it has an unblocked child, from the leaves'
    allocations, keys and head tasks alone (deepest queues first)."""
    tree = sched.tree_
    total = np.asarray(sched.cluster_.total, dtype=float)
    n_r, first = len(total), tree.first
    vec: dict[int, np.ndarray] = {}
    level: dict[int, float] = {}
    present: dict[int, bool] = {}
    demands: dict[int, np.ndarray] = {}  # resources the unblocked leaves' heads demand
    for leaf in range(len(sched.leaves())):
        node = first + leaf
        vec[node] = np.asarray(sched._alloc[leaf], dtype=float) / total
        level[node] = sched._keys[leaf]
        present[node] = bool(sched._inheap[leaf])
        demands[node] = (
            np.asarray(sched._queues[leaf][0][1]) > 0.0 if present[node] else np.zeros(n_r, bool)
        )
    weights = tree.ff[:first, 1 + n_r]
    for a in sorted(range(1, first), key=lambda a: -len(tree.path[a])):
        kids = [c for c in range(1, len(tree.parent)) if tree.parent[c] == a]
        up = [c for c in kids if present.get(c, False)]
        m = min((level[c] for c in up), default=0.0)
        v = np.zeros(n_r)
        for c in kids:
            if c not in vec:
                continue
            if present[c] and level[c] > 0.0:
                v = v + vec[c] / level[c] * m
            else:
                v = v + vec[c]
        dem = np.zeros(n_r, bool)
        for c in up:
            dem |= demands[c]
        vec[a] = v
        present[a] = bool(up)
        demands[a] = dem
        level[a] = round(float((v[dem] if dem.any() else v).max()) / float(weights[a]), 12)
    return {a: level[a] for a in range(1, first)}, {a: present[a] for a in range(1, first)}


def _descent(sched: HDRF, level: dict[int, float], present: dict[int, bool]) -> int:
    """The leaf the descent reaches with these queue levels, or -1."""
    tree = sched.tree_
    first = tree.first
    node = 0
    while node < first:
        kids = [c for c in range(1, len(tree.parent)) if tree.parent[c] == node]
        waiting = [c for c in kids if (present[c] if c < first else bool(sched._inheap[c - first]))]
        if not waiting:
            return -1
        below = [c for c in waiting if c < first and tree.is_below(c)]
        pool = below or waiting

        def key(c: int) -> tuple[float, int]:
            return (level[c] if c < first else sched._keys[c - first], tree.pos[c])

        node = min(pool, key=key)
    return node - first


@pytest.mark.parametrize("which", range(len(TREES)))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_levels_and_descent_match_the_definition(which: int, seed: int) -> None:
    queues, users = TREES[which]
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, 400, 6, horizon=900.0)
    capacity = rng.uniform(0.4, 1.0, (6, 2))
    qt = parse_queues(queues, [], ["cpu", "mem"], capacity.sum(axis=0))
    sched = make_scheduler({"name": "hdrf", "fit": "best-fit"}, queues=qt)
    seen = {"levels": 0, "descents": 0}

    def checked(step: Any) -> Any:
        """A descent kernel, followed by the check of the tree's levels and of the leaf it
        reached against those from scratch."""

        def run(*args: Any) -> int:
            got = int(step(*args))
            tree = sched.tree_
            tree.settle()  # the root's children's levels, if the descent did not need them
            want, present = _scratch(sched)
            for a, lv in want.items():
                assert bool(tree.ii[a, 6]) == present[a], a
                if present[a]:
                    assert tree.level(a) == pytest.approx(lv, rel=1e-9, abs=1e-12), a
                    seen["levels"] += 1
            levels = {a: tree.level(a) for a in want}  # (equal to want's, checked above)
            assert got == _descent(sched, levels, present)
            seen["descents"] += 1
            return got

        return run

    def check(_: float, __: Any) -> None:
        tree = sched.tree_
        if tree.k is kern:  # every later pass descends through the checked kernels
            tree.k = SimpleNamespace(**vars(kern))
            tree.k.flush1_descend2 = checked(kern.flush1_descend2)
            tree.k.flush_descend = checked(kern.flush_descend)

    run_on_tree(sched, frame, capacity, qt, users, end_s=1200.0, interval_s=11.0, on_sample=check)
    assert seen["levels"] > 500
    assert seen["descents"] > 100


@pytest.mark.parametrize("seed", range(6))
def test_compiled_reservation_wakes_as_the_plain_scan(seed: int) -> None:
    """At sampled instants, for random sets of leaves, needs and rooms: the compiled
    reservation (``reserve2``, the changed leaves handed over as :meth:`HDRF._reserve` does)
    wakes the leaves, and asks for the server's re-check, as the plain scan over
    :meth:`HDRF._by_key`'s order does."""
    queues, users = TREES[seed % len(TREES)]
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, 300, 6, horizon=600.0)
    capacity = rng.uniform(0.4, 1.0, (4, 2))
    qt = parse_queues(queues, [], ["cpu", "mem"], capacity.sum(axis=0))
    sched = make_scheduler({"name": "hdrf", "fit": "best-fit"}, queues=qt)
    tried = [0, 0]  # calls, leaves woken

    def check(_: float, __: Any) -> None:
        tree = sched.tree_
        n_leaves = len(sched.leaves())
        for _ in range(4):
            single = [u for u in range(n_leaves) if rng.random() < 0.7]
            if len(single) < 2:
                continue
            need = rng.uniform(0.01, 0.4, (n_leaves, 2))
            room = rng.uniform(0.0, 1.0, 2)
            b0, b1 = need[single].min(axis=0)
            woken = np.empty(len(single), dtype=np.int64)
            n = tree._rows(clear=False) if tree.dirty_leaves else 0
            code = tree.k.reserve2(
                tree.ii, tree.ff, tree.hf, tree.hi, tree.meta, tree.rows, n,
                np.array(single, dtype=np.int64), need, room[0], room[1], b0, b1, woken,
            )  # fmt: skip
            if code & 1:
                tree.dirty_leaves.clear()
            want: list[int] = []
            r0, r1, want_recheck = room[0], room[1], False
            for u in sched._by_key(list(single)):
                if need[u, 0] <= r0 and need[u, 1] <= r1:
                    want.append(u)
                    r0 -= need[u, 0]
                    r1 -= need[u, 1]
                else:
                    want_recheck = True
            assert woken[: code >> 2].tolist() == want
            assert bool(code & 2) == want_recheck
            tried[0] += 1
            tried[1] += len(want)

    run_on_tree(sched, frame, capacity, qt, users, end_s=800.0, interval_s=13.0, on_sample=check)
    assert tried[0] > 20
    assert tried[1] > 20
