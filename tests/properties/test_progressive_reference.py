"""The optimised progressive filling (blocked users, wake-ups on freed servers only) must make
exactly the decisions of a naive reference that rescans every user and every server at every step
(DRFH paper, Section V-B: serve the lowest global dominant share; First-Fit / Best-Fit, eq. 9)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState, TaskRecords
from fairsim.simulator.constraints import ConstraintIndex


def eq9(d: np.ndarray, free: np.ndarray, total: np.ndarray) -> float:
    """H(i, l) of the DRFH paper's eq. 9, literally: D_i and c̄_l are shares of the pool's total."""
    big_d = d / total  # D_ir: the share of resource r one task needs over the entire system
    c_bar = free / total  # c̄_lr: the share of resource r free on server l
    return float(np.abs(big_d / big_d[0] - c_bar / c_bar[0]).sum())


class NaiveFilling:
    """Reference: recompute everything from scratch at every placement."""

    def __init__(self, rule: str, cap: np.ndarray, slots: int | None = None) -> None:
        self.rule, self.slots = rule, slots
        self.masks: dict[int, np.ndarray] = {}  # per-task placement constraints
        self.queues: dict[int, deque[tuple[int, tuple[float, ...]]]] = {}
        self.alloc: dict[int, np.ndarray] = {}
        if slots is None:
            self.free = cap.copy()
            self.total = cap.sum(axis=0)
        else:  # slot counts, then the real free amounts of resources the slots overstate
            n = np.floor((cap.min(axis=1, keepdims=True) + 0.0012) * slots + 1e-9)
            self.real = [r for r in range(cap.shape[1]) if np.any(n[:, 0] / slots > cap[:, r])]
            self.free = np.hstack([n, cap[:, self.real]])
            self.total = np.append(n.sum(), cap[:, self.real].sum(axis=0))

    def need(self, d: tuple[float, ...]) -> np.ndarray:
        if self.slots is None:
            return np.array(d)
        n = max(1.0, np.ceil(max(d) * self.slots - 1e-9))
        return np.array([n, *(d[r] for r in self.real)])

    def share(self, u: int) -> float:
        if self.slots is None:
            return float(np.max(self.alloc[u] / self.total))
        return float(self.alloc[u][0] / self.total[0])  # fair share of slots only

    def arrive(self, task: int, user: int, d: tuple[float, ...]) -> None:
        self.queues.setdefault(user, deque()).append((task, d))
        self.alloc.setdefault(user, np.zeros(self.free.shape[1]))

    def complete(self, user: int, d: tuple[float, ...], server: int) -> None:
        n = self.need(d)
        self.free[server] += n
        self.alloc[user] -= n

    def decide(self) -> list[tuple[int, int]]:
        out = []
        while True:
            order = sorted((self.share(u), u) for u, q in self.queues.items() if q)
            for _, u in order:
                task, d = self.queues[u][0]
                n = self.need(d)
                ok = np.all(self.free >= n, axis=1)
                if task in self.masks:
                    ok &= self.masks[task]
                fit = np.flatnonzero(ok)
                if fit.size == 0:
                    continue
                if self.rule == "bf" and fit.size > 1 and n[0] > 0:
                    h = np.array([eq9(n, self.free[s], self.total) for s in fit])
                    server = int(fit[int(np.flatnonzero(h <= h.min() + 1e-9 * (1 + h.min()))[0])])
                else:
                    server = int(fit[0])
                self.queues[u].popleft()
                self.free[server] -= n
                self.alloc[u] += n
                out.append((task, server))
                break
            else:
                return out


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    name=st.sampled_from(["ff-drfh", "bf-drfh", "slots-8"]),
    n_servers=st.integers(1, 6),
    n_users=st.integers(1, 6),
    constrained=st.booleans(),
    n_resources=st.sampled_from([2, 3]),
)
def test_optimised_equals_naive(
    seed: int, name: str, n_servers: int, n_users: int, constrained: bool, n_resources: int
) -> None:
    _compare(seed, name, n_servers, n_users, constrained, max_arrivals=4, n_res=n_resources)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    name=st.sampled_from(["ff-drfh", "bf-drfh"]),
    constrained=st.booleans(),
    n_resources=st.sampled_from([2, 3]),
)
def test_optimised_equals_naive_with_many_blocked_users(
    seed: int, name: str, constrained: bool, n_resources: int
) -> None:
    # 60 users and bursts of arrivals: wake-up lists longer than the numpy threshold
    _compare(seed, name, 3, 60, constrained, max_arrivals=40, n_res=n_resources)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    name=st.sampled_from(["ff-drfh", "bf-drfh", "slots-8"]),
    n_servers=st.integers(1, 8),
    constrained=st.booleans(),
    cands_max=st.sampled_from([0, 1, 2]),
    fits_block=st.sampled_from([1, 8, 1 << 20]),
    compiled=st.booleans(),
)
def test_vectorised_wake_ups_equal_naive(
    seed: int,
    name: str,
    n_servers: int,
    constrained: bool,
    cands_max: int,
    fits_block: int,
    compiled: bool,
) -> None:
    # every wake-up through the vectorised paths (_fits_many, in blocks of about fits_block
    # pairs, and _wake_many), and users with more than cands_max candidates searching every
    # server instead of their list; with First-Fit's compiled search or without it
    import fairsim.schedulers.progressive_filling as pf

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "_PAIRS_VECTOR", 0)
        mp.setattr(pf, "_CANDS_MAX", cands_max)
        mp.setattr(pf, "_FITS_BLOCK", fits_block)
        mp.setattr(pf, "_COMPILED", compiled)
        _compare(seed, name, n_servers, 30, constrained, max_arrivals=30)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    n_servers=st.integers(1, 40),
    n_users=st.integers(1, 30),
    constrained=st.booleans(),
)
def test_best_fit_index_equals_naive(
    seed: int, n_servers: int, n_users: int, constrained: bool
) -> None:
    # Best-Fit through its ratio index (two resources) on small pools too
    from fairsim.schedulers.placement import BestFit

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BestFit, "INDEX_MIN_SERVERS", 0)
        _compare(seed, "bf-drfh", n_servers, n_users, constrained, max_arrivals=20)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n_users=st.integers(1, 4))
def test_best_fit_equals_naive_on_many_three_resource_servers(seed: int, n_users: int) -> None:
    # 40 servers: Best-Fit's candidate lists pass the numpy threshold; three resources, where
    # eq. 9's shares and raw ratios rank servers differently
    _compare(seed, "bf-drfh", 40, n_users, False, max_arrivals=30, n_res=3)


def _compare(
    seed: int,
    name: str,
    n_servers: int,
    n_users: int,
    constrained: bool,
    max_arrivals: int,
    n_res: int = 2,
) -> None:
    rng = np.random.default_rng(seed)
    sizes = [0.25, 0.5, 0.75, 1.0]
    if name.startswith("slots"):  # also Google's machine_events values, just below 1/4, 1/2, 3/4
        sizes += [0.2493, 0.4995, 0.749]
    cap = rng.choice(sizes, size=(n_servers, n_res))
    if n_res == 3:  # a third resource on another scale (e.g. disk): totals differ by resource
        cap[:, 2] *= 8.0
    cluster = ClusterState(cap, ("cpu", "mem", "disk")[:n_res])
    ref = NaiveFilling(
        "bf" if name == "bf-drfh" else "ff", cap, slots=8 if name.startswith("slots") else None
    )
    codes: list[int] = []
    index = None
    if constrained:  # per-task placement constraints, as the engine hands them to schedulers
        masks = [rng.random(n_servers) < 0.5 for _ in range(3)]
        index = ConstraintIndex(np.array([f"s{i}" for i in range(n_servers)], dtype=object))
        for i, m in enumerate(masks):
            index.add_mask(f"mask {i}", m)
    sched = make_scheduler(name)
    sched.bind(cluster.view(tasks=TaskRecords(constraint=codes), constraints=index))
    running: list[tuple[int, int, tuple[float, ...], int]] = []
    task = 0
    for _step in range(60):
        for _ in range(int(rng.integers(0, max_arrivals))):  # arrivals
            user = int(rng.integers(0, n_users))
            d = rng.choice([0.05, 0.1, 0.125, 0.2, 0.3], size=n_res)
            if n_res == 3:
                d[2] *= 8.0
            d = tuple(d.tolist())
            if constrained:
                codes.append(int(rng.integers(0, 4)))
                if codes[-1]:
                    ref.masks[task] = index.masks[codes[-1]]  # type: ignore[union-attr, assignment]
                    if not ref.masks[task].any():
                        task += 1  # the engine reports such a task as unplaceable
                        continue
            if sched.placeable(d):
                sched.on_arrival(task, user, d)
                ref.arrive(task, user, d)
            task += 1
        for _ in range(int(rng.integers(0, 3))):  # completions
            if running:
                t, u, d, s = running.pop(int(rng.integers(0, len(running))))
                cluster.release(s, d)
                sched.on_completion(t, u, d, s)
                ref.complete(u, d, s)
        got = []
        for t, s in sched.decide():
            cluster.commit(t, s, ref_d := next(d for tt, d in _pending(ref, t)))
            got.append((t, s))
            running.append((t, _owner(ref, t), ref_d, s))
        want = ref.decide()
        assert sorted(got) == sorted(want)


_DEMANDS: dict[int, tuple[int, tuple[float, ...]]] = {}


def _pending(ref: NaiveFilling, task: int):  # type: ignore[no-untyped-def]
    for u, q in ref.queues.items():
        for t, d in q:
            if t == task:
                _DEMANDS[task] = (u, d)
                yield t, d
                return


def _owner(ref: NaiveFilling, task: int) -> int:
    return _DEMANDS[task][0]


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    name=st.sampled_from(["ff-drfh", "bf-drfh", "slots-8"]),
    n_servers=st.integers(1, 8),
    n_users=st.integers(1, 30),
    constrained=st.booleans(),
)
def test_numpy_searches_equal_naive(
    seed: int, name: str, n_servers: int, n_users: int, constrained: bool
) -> None:
    # two resources take the compiled searches (schedulers/_fill_kernel.py) in every test above;
    # the numpy code they stand in for must make the same decisions
    import fairsim.schedulers.progressive_filling as pf

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "_COMPILED", False)
        _compare(seed, name, n_servers, n_users, constrained, max_arrivals=20)
