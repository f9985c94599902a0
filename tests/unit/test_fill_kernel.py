"""The compiled searches of progressive filling (:mod:`fairsim.schedulers._fill_kernel`) against
the numpy code of :class:`~fairsim.schedulers.progressive_filling.ProgressiveFilling` they stand
in for: the same First-Fit server (DRFH paper, Section V-B) and maxima, and the same blocked users
fitting a freed server, on random instances whose amounts repeat (so that ``free == need`` is
common and a strict comparison in place of ``>=`` / ``<=`` is caught)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.schedulers._fill_kernel import blocked_fitting2, first_fit2

#: amounts drawn from a few values: equal free amount and need is frequent
_VALUES = [0.0, 0.125, 0.25, 0.5, 0.75, 1.0]


def _columns(rng: np.random.Generator, n: int, readonly: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two columns of one Fortran-ordered (n, 2) array, as the cluster's free amounts."""
    free = np.asfortranarray(rng.choice(_VALUES, size=(n, 2)))
    if readonly:
        free.flags.writeable = False
    return free[:, 0], free[:, 1]


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    readonly=st.booleans(),
)
def test_first_fit_is_the_numpy_search(seed: int, n: int, readonly: bool) -> None:
    rng = np.random.default_rng(seed)
    c0, c1 = _columns(rng, n, readonly)
    n0, n1 = (float(x) for x in rng.choice(_VALUES, size=2))
    fit = (c0 >= n0) & (c1 >= n1)  # ProgressiveFilling._fit_mask
    maxfree = np.full(2, -7.0)
    got = first_fit2(c0, c1, n0, n1, maxfree)
    if fit.any():
        assert got == int(fit.argmax())
        assert maxfree.tolist() == [-7.0, -7.0]  # untouched
    else:
        assert got == -1
        assert maxfree.tolist() == [float(c0.max()), float(c1.max())]  # _scan_failed


def test_first_fit_worked_example() -> None:
    # servers (free CPU, free memory): (0.5, 0.25), (0.25, 1), (0.5, 0.5), (1, 1)
    free = np.asfortranarray([[0.5, 0.25], [0.25, 1.0], [0.5, 0.5], [1.0, 1.0]])
    c0, c1 = free[:, 0], free[:, 1]
    mf = np.zeros(2)
    assert first_fit2(c0, c1, 0.5, 0.5, mf) == 2  # equal amounts fit
    assert first_fit2(c0, c1, 0.25, 0.25, mf) == 0
    assert first_fit2(c0, c1, 1.0, 0.75, mf) == 3
    assert first_fit2(c0, c1, 1.0, 1.5, mf) == -1
    assert mf.tolist() == [1.0, 1.0]


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 6),
    nb=st.integers(1, 30),
    spare=st.integers(0, 3),
    stale=st.booleans(),
)
def test_blocked_fitting_is_the_numpy_check(
    seed: int, n: int, nb: int, spare: int, stale: bool
) -> None:
    rng = np.random.default_rng(seed)
    c0, c1 = _columns(rng, n, readonly=True)
    server = int(rng.integers(0, n))
    bh = rng.choice(_VALUES[1:], size=(nb + spare, 2))  # rows past nb are not blocked users
    bu = rng.permutation(100)[: nb + spare].astype(np.int64)
    exact = bh[:nb].min(axis=0)
    # a valid bound: the exact minimum, or one gone stale-low as users woke
    bmin = exact - (rng.choice([0.0, 0.125], size=2) if stale else 0.0)
    want_bmin = bmin.copy()
    skipped = c0[server] < bmin[0] or c1[server] < bmin[1]
    got = blocked_fitting2(c0, c1, server, bh, bu, nb, bmin)
    fits = (bh[:nb, 0] <= c0[server]) & (bh[:nb, 1] <= c1[server])  # _unblock_freed, phase 1
    if skipped:
        assert not fits.any()  # the bound only skips servers where nobody fits
        assert got.size == 0
        assert bmin.tolist() == want_bmin.tolist()
    else:
        assert got.tolist() == bu[:nb][fits].tolist()
        assert bmin.tolist() == exact.tolist()  # tightened to the exact minimum


def test_blocked_fitting_worked_example() -> None:
    free = np.asfortranarray([[0.5, 0.5], [0.125, 1.0]])
    c0, c1 = free[:, 0], free[:, 1]
    bh = np.array([[0.5, 0.25], [0.75, 0.25], [0.25, 0.5], [0.5, 0.75], [0.0, 0.0]])
    bu = np.array([7, 3, 9, 1, 5], dtype=np.int64)
    bmin = np.array([0.25, 0.25])
    assert blocked_fitting2(c0, c1, 0, bh, bu, 4, bmin).tolist() == [7, 9]
    assert bmin.tolist() == [0.25, 0.25]
    assert blocked_fitting2(c0, c1, 1, bh, bu, 4, bmin).size == 0  # 0.125 CPU < bmin: skipped
    assert bmin.tolist() == [0.25, 0.25]


@pytest.mark.parametrize("name", ["ff-drfh", "bf-drfh", "drf", "slots-8"])
def test_compiled_searches_are_used_for_two_resources(name: str) -> None:
    # the scheduler takes the compiled searches on the cluster's two float64 columns (and
    # First-Fit's only where the placement's search is FirstFit's: not Best-Fit)
    import fairsim.schedulers.progressive_filling as pf
    from fairsim.schedulers import make_scheduler
    from fairsim.simulator.cluster import ClusterState, TaskRecords

    cluster = ClusterState(np.array([[1.0, 1.0], [0.5, 0.25]]), ("cpu", "mem"))
    sched = make_scheduler(name)
    sched.bind(cluster.view(tasks=TaskRecords(constraint=[])))
    assert sched._kern2 is (sched._k == 2)
    assert sched.placement_._ff2 is (sched._k == 2 and name != "bf-drfh")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "_COMPILED", False)
        sched = make_scheduler(name)
        sched.bind(cluster.view(tasks=TaskRecords(constraint=[])))
        assert not sched._kern2 and not sched.placement_._ff2


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8))
def test_placeable_for_two_resources(seed: int, n: int) -> None:
    # placeable(), written out for two resources: some server of the empty pool holds the demand
    # in both resources (equal amounts fit)
    from fairsim.schedulers import make_scheduler
    from fairsim.simulator.cluster import ClusterState, TaskRecords

    rng = np.random.default_rng(seed)
    cap = rng.choice(_VALUES[1:], size=(n, 2))
    sched = make_scheduler("ff-drfh")
    sched.bind(ClusterState(cap, ("cpu", "mem")).view(tasks=TaskRecords(constraint=[])))
    for _ in range(30):
        d = tuple(rng.choice([*_VALUES, 1.5], size=2).tolist())
        want = any(d[0] <= c0 and d[1] <= c1 for c0, c1 in cap.tolist())
        assert sched.placeable(d) == want
