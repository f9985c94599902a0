"""Progressive filling remembers needs that fit no server until the next completion
(``ServerChoice.unfit``): a larger head is blocked without a search, and a completion makes
every head searchable again."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState, TaskRecords


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name", ["ff-drfh", "bf-drfh"])
def test_unfit_need_blocks_larger_heads_until_a_completion(name: str, k: int) -> None:
    def d(*x: float) -> tuple[float, ...]:  # a demand; the third resource, if any, like the first
        return (*x, x[0])[:k]

    cluster = ClusterState(np.ones((2, k)), ("cpu", "mem", "disk")[:k])
    sched = make_scheduler(name)
    sched.bind(cluster.view(tasks=TaskRecords(constraint=[])))
    searches: list[tuple[float, ...]] = []
    find = sched._find

    def spy(need, user):  # type: ignore[no-untyped-def]
        searches.append(need)
        return find(need, user)

    sched._find = spy
    for task in (0, 1):
        sched.on_arrival(task, 0, d(0.6, 0.6))
    placed = []
    for task, server in sched.decide():  # the engine commits each placement as it is yielded
        cluster.commit(task, server, d(0.6, 0.6))
        placed.append((task, server))
    assert placed == [(0, 0), (1, 1)]
    # user 1's head (0.5, 0.5) fits nowhere; user 2's (0.5, 0.7) is at least as large: no search
    sched.on_arrival(2, 1, d(0.5, 0.5))
    sched.on_arrival(3, 2, d(0.5, 0.7))
    searches.clear()
    assert list(sched.decide()) == []
    assert searches == [d(0.5, 0.5)]
    # a completion frees server 1: user 1 (lower code, equal share) takes it, user 2 is left
    cluster.release(1, d(0.6, 0.6))
    sched.on_completion(1, 0, d(0.6, 0.6), 1)
    # a stale list would contradict the wake-up: decide() would spin
    assert sched.placement_.unfit == []
    placed = []
    for task, server in sched.decide():
        cluster.commit(task, server, d(0.5, 0.5) if task == 2 else d(0.5, 0.7))
        placed.append((task, server))
    assert placed == [(2, 1)]
