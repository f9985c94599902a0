"""The compiled whole-run First-Fit (:mod:`fairsim.schedulers._jobfit_kernel`) against the numpy
code it replaced (kept here, line for line, as the reference): the same placements, the same
failing kind and room, and bit-for-bit the same free amounts left, on random runs (hypothesis)
with 1-3 resources, masks, zero demands, amounts at the tolerance, and ``partial``."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.schedulers._jobfit_kernel import fit_run
from fairsim.schedulers.jobfit import _TOL


def _count_ref(d: np.ndarray, mask: np.ndarray | None, free: np.ndarray) -> np.ndarray:
    count = None
    for k in range(len(d)):
        if d[k] > 0:
            c = np.floor((free[:, k] + _TOL) / d[k])
            count = c if count is None else np.minimum(count, c)
    if count is None:
        count = np.full(free.shape[0], np.inf)
    if mask is not None:
        count[~mask] = 0.0
    return np.maximum(count, 0.0, out=count)


def _fit_ref(kinds, kd, masks, free, partial):
    """The numpy ``JobFirstFit._fit`` before the kernel. kinds: list of (kind, tasks)."""
    out, placed = [], {}
    for q, ts in kinds:
        n = len(ts)
        d = kd[q]
        mask = masks[q]
        if n == 1:
            ok = None
            for k in range(len(d)):
                if d[k] > 0:
                    c = free[:, k] >= d[k] - _TOL
                    ok = c if ok is None else ok & c
            if ok is None:
                ok = np.ones(len(free), dtype=bool) if mask is None else mask
            elif mask is not None:
                ok &= mask
            s = int(ok.argmax())
            if not ok[s]:
                if not partial:
                    return [], {}, q, 0.0
                continue
            free[s] -= d
            out.append((ts[0], s))
            placed[q] = 1
            continue
        count = _count_ref(d, mask, free)
        cum = np.cumsum(count)
        room = float(cum[-1])
        if room < n:
            if not partial:
                return [], {}, q, room
            n = int(room)
            if n == 0:
                continue
        last = int(np.searchsorted(cum, n))
        idx = np.flatnonzero(count[: last + 1])
        take = np.minimum(count[idx], n).astype(np.int64)
        take[-1] = n - (int(take.sum()) - int(take[-1]))
        free[idx] -= np.outer(take, d)
        i = 0
        for s, c in zip(idx.tolist(), take.tolist(), strict=True):
            out.extend((t, s) for t in ts[i : i + c])
            i += c
        placed[q] = n
    return out, placed, -1, 0.0


@st.composite
def _runs(draw):
    n_res = draw(st.integers(1, 3))
    n_srv = draw(st.integers(1, 12))
    amounts = st.sampled_from(
        [0.0, 0.1, 0.25, 0.3, 0.5, 1.0, 1.0 - _TOL / 2, 1.0 - _TOL, 0.5 - _TOL, 2.0, 0.7]
    )
    cap = np.array(
        draw(
            st.lists(
                st.lists(amounts, min_size=n_res, max_size=n_res), min_size=n_srv, max_size=n_srv
            )
        )
    )
    order = draw(st.sampled_from(["C", "F"]))
    free = np.array(cap, order=order)
    demands = st.sampled_from([0.0, 0.05, 0.1, 0.25, 1.0 / 3, 0.5, 1.0])
    n_kinds = draw(st.integers(1, 5))
    kd = np.array(
        draw(
            st.lists(
                st.lists(demands, min_size=n_res, max_size=n_res),
                min_size=n_kinds,
                max_size=n_kinds,
            )
        )
    )
    masks = [
        None
        if draw(st.booleans())
        else np.array(draw(st.lists(st.booleans(), min_size=n_srv, max_size=n_srv)))
        for _ in range(n_kinds)
    ]
    # a run: some kinds (distinct, any order) with 1-20 tasks each
    qs = draw(st.lists(st.integers(0, n_kinds - 1), min_size=1, max_size=n_kinds, unique=True))
    nxt = 0
    kinds = []
    for q in qs:
        n = draw(st.sampled_from([1, 1, 2, 3, 5, 8, 20]))
        kinds.append((q, list(range(nxt, nxt + n))))
        nxt += n
    return free, kd, masks, kinds, draw(st.booleans())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=_runs(), dry=st.booleans())
def test_kernel_matches_numpy_first_fit(run, dry) -> None:
    free, kd, masks, kinds, partial = run
    rows = np.ones((len(masks) + 1, free.shape[0]), dtype=bool)
    mk = []
    for q, _ in kinds:
        if masks[q] is None:
            mk.append(0)
        else:
            rows[q + 1] = masks[q]
            mk.append(q + 1)
    want_free = free.copy()
    want = _fit_ref(kinds, kd, masks, want_free, partial)
    got_free = free.copy()
    failed, room, placed, o_kind, o_server, o_take, n_out = fit_run(
        got_free,
        kd[[q for q, _ in kinds]],
        np.array([len(ts) for _, ts in kinds], dtype=np.int64),
        np.array(mk, dtype=np.int64),
        rows,
        np.full(free.shape[1], _TOL),  # the slack of every resource (largest server: 1)
        partial,
        dry,
    )
    if want[2] >= 0:
        assert kinds[failed][0] == want[2] and room == want[3]
        return
    assert failed == -1
    assert np.array_equal(got_free, want_free)  # bit for bit (no NaNs occur)
    assert {q: c for (q, _), c in zip(kinds, placed.tolist(), strict=True) if c > 0} == want[1]
    if not dry:
        out = []
        start = [0] * len(kinds)
        for j, s, c in zip(o_kind[:n_out], o_server[:n_out], o_take[:n_out], strict=True):
            ts = kinds[j][1]
            out += [(t, int(s)) for t in ts[start[j] : start[j] + c]]
            start[j] += c
        assert out == want[0]
    else:
        assert n_out == 0


def test_kernel_fills_servers_in_order_and_splits_the_last() -> None:
    """Three (1, 1) servers, the first half used: 4 tasks of (0.25, 0.5) go 1 + 2 + 1."""
    free = np.array([[0.5, 0.5], [1.0, 1.0], [1.0, 1.0]])

    def fit(n: int):
        one = np.ones((1, 3), dtype=bool)
        return fit_run(
            free,
            np.array([[0.25, 0.5]]),
            np.array([n]),
            np.array([0]),
            one,
            np.full(2, _TOL),
            False,
            False,
        )

    failed, room, placed, _, o_server, o_take, n_out = fit(4)
    assert failed == -1 and placed.tolist() == [4]
    assert o_server[:n_out].tolist() == [0, 1, 2] and o_take[:n_out].tolist() == [1, 2, 1]
    assert np.allclose(free, [[0.25, 0.0], [0.5, 0.0], [0.75, 0.5]])
    failed, room, *_ = fit(3)
    assert (failed, room) == (0, 1.0)
