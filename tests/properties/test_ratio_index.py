"""The Best-Fit ratio index (fairsim.schedulers._ratio_index) makes exactly the choice of eq. 9's
full scan (DRFH paper, Section V-B; BestFit.choose), ties and rounding included, on random
pools whose free amounts change by placements and completions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.schedulers import _ratio_index as rx
from fairsim.schedulers.drfh import BestFitDRFH
from fairsim.schedulers.placement import BestFit
from fairsim.simulator.cluster import ClusterState

# few distinct values, so that many servers share a ratio (ties) or have nothing free
LEVELS = [0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0]


class _IndexedBestFit(BestFit):
    INDEX_MIN_SERVERS = 0  # the index on every pool size


class _IndexedBestFitDRFH(BestFitDRFH):
    placement = _IndexedBestFit


def _reference(sched: BestFitDRFH, need: tuple[float, float], mask: np.ndarray | None) -> int:
    """The scan of BestFitDRFH: fitting servers, then BestFit.choose (eq. 9 in numpy)."""
    free = sched.cluster_.free
    ok = (free[:, 0] >= need[0]) & (free[:, 1] >= need[1])
    if mask is not None:
        ok &= mask
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return -1
    return idx[0] if idx.size == 1 else sched.placement_.choose(need, idx)


def _check_index(ix: rx.RatioIndex) -> None:
    f0, f1, q = ix.f0, ix.f1, ix.q
    n = f0.shape[0]
    expect = np.array([rx.key_of(a, b) for a, b in zip(f0, f1, strict=True)])
    np.testing.assert_array_equal(q, expect)
    blocks = ix.blocks()
    keys = np.concatenate([k for k, _, _, _ in blocks])
    srv = np.concatenate([s for _, s, _, _ in blocks])
    assert sorted(srv.tolist()) == list(range(n))
    np.testing.assert_array_equal(keys, q[srv])
    order = sorted(range(n), key=lambda s: (q[s], s))
    assert srv.tolist() == order
    room = ix.bk.shape[1]
    for _, part, m0, m1 in blocks:  # 1 to room - 1 entries; largest free amounts recomputed
        assert 1 <= part.size < room
        assert m0 == f0[part].max() and m1 == f1[part].max()


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    steps=st.integers(1, 60),
    continuous=st.booleans(),
    shift=st.integers(0, 3),
    spare=st.sampled_from([1, 2, None]),
)
def test_index_matches_full_scan(
    seed: int, n: int, steps: int, continuous: bool, shift: int, spare: int | None
) -> None:
    rng = np.random.default_rng(seed)
    cap = rng.choice(LEVELS[1:], size=(n, 2))
    state = ClusterState(cap, ("cpu", "mem"))
    sched = _IndexedBestFitDRFH()
    sched.bind(state.view())
    assert sched.placement_.rx is not None
    # blocks of 1-15 entries, so that the walk skips blocks on these small pools; few spare
    # blocks, so that splits run out of them and the entries are dealt out again
    ix = rx.RatioIndex(sched.placement_.rx.f0, sched.placement_.rx.f1, shift, spare)
    running: list[tuple[int, tuple[float, float]]] = []
    w, tol = sched.placement_.hw[0][1], sched.placement_.H_TIE_TOL
    for _ in range(steps):
        if running and rng.random() < 0.4:  # a completion
            s, d = running.pop(int(rng.integers(len(running))))
            state.release(s, d)
            ix.move(s)
        else:  # a placement of what fits, on a random fitting server
            if continuous:
                d = (float(rng.uniform(0.001, 0.6)), float(rng.uniform(0.0, 0.6)))
            else:
                d = (float(rng.choice(LEVELS[1:5])), float(rng.choice(LEVELS[:5])))
            fit = np.flatnonzero((state.free[:, 0] >= d[0]) & (state.free[:, 1] >= d[1]))
            if fit.size:
                s = int(rng.choice(fit))
                state.commit(0, s, d)
                running.append((s, d))
                ix.move(s)
        _check_index(ix)
        # queries: random needs (d0 > 0), with and without a mask, with a tiny and a large cap
        for _ in range(3):
            if continuous:
                need = (float(rng.uniform(0.001, 0.7)), float(rng.uniform(0.0, 0.7)))
            else:
                need = (float(rng.choice(LEVELS[1:])), float(rng.choice(LEVELS)))
            mask = rng.random(n) < 0.7 if rng.random() < 0.3 else None
            expect = _reference(sched, need, mask)
            args = (need[0], need[1], w, tol, mask)
            assert ix.search(*args, n + 1) == expect
            small = ix.search(*args, 2)
            assert small == expect or small == rx.GAVE_UP
            assert ix.scan(*args) == expect
            assert ix.best(*args, 2) == expect


def test_ties_go_to_the_lowest_server_on_both_sides() -> None:
    """Equal ratios on both sides of the task's ratio: the lowest index among them wins."""
    # ratios 0.5 (servers 3, 1) and 2.0 (servers 2, 0) around the task's ratio 1 -> equal H
    # only when w = 1; with the pool's totals w = T0 / T1 = 1 here by construction
    free = np.array([[0.25, 0.5], [0.5, 0.25], [0.5, 1.0], [1.0, 0.5]])
    state = ClusterState(free, ("cpu", "mem"))
    sched = _IndexedBestFitDRFH()
    sched.bind(state.view())
    assert sched.placement_.hw[0][1] == 1.0
    # H = |1 - 2| = 1 for servers 0, 2 and |1 - 0.5| = 0.5 for servers 1, 3: server 1 wins
    assert sched._find((0.2, 0.2), 0) == 1
    # a CPU need of 0.6 fits server 3 alone
    assert sched._find((0.6, 0.2), 0) == 3
    # a task of ratio 1.25: H(0, 2) = 0.75, H(1, 3) = 0.75 -> a four-way tie: server 0 wins
    assert sched._find((0.2, 0.25), 0) == 0
