"""The online mechanisms of :mod:`fairsim.schedulers.online_mechanisms` (docs/mechanisms.md).

1. The optimised schedulers (lazy heap, wake-ups on freed servers) make exactly the decisions of
   a naive reference that recomputes every key from its definition and rescans every user and
   every server at every placement.
2. A worked instance, computed by hand, on which DRF, TSF, AF, PF, BMF and LMM-MMS all place
   different task counts.
3. Static progressive filling (``fairsim solve NAME --online``) against the exact allocation of
   the same mechanism: the gap stays within what indivisible tasks explain.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import PSDSF_FIG1
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.schedulers import make_scheduler
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.online_mechanisms import pf_prices
from fairsim.schedulers.static_fill import progressive_fill
from fairsim.simulator.cluster import ClusterState

ONLINE = ["drf", "c-drfh", "tsf", "af", "pf", "bmf", "lmm-mms"]


# --------------------------------------------------------------------------- naive reference


class Naive:
    """Recompute every key from its definition at every placement; First-Fit."""

    def __init__(self, name: str, cap: np.ndarray) -> None:
        self.name = name
        self.cap = cap
        self.free = cap.copy()
        self.total = cap.sum(axis=0)
        self.queues: dict[int, deque[tuple[int, tuple[float, ...]]]] = {}
        self.running: dict[int, list[tuple[float, ...]]] = {}
        self.first: dict[int, tuple[float, ...]] = {}

    def gamma(self, d: tuple[float, ...]) -> float:
        dd = np.array(d)
        pos = dd > 0
        return float((self.cap[:, pos] / dd[pos]).min(axis=1).sum())

    def arrive(self, task: int, user: int, d: tuple[float, ...]) -> None:
        self.queues.setdefault(user, deque()).append((task, d))
        self.running.setdefault(user, [])
        self.first.setdefault(user, d)

    def complete(self, user: int, d: tuple[float, ...], server: int) -> None:
        self.free[server] += d
        self.running[user].remove(d)

    def active(self) -> list[int]:
        return sorted(u for u in self.queues if self.queues[u] or self.running[u])

    def alloc(self, u: int) -> np.ndarray:
        return np.sum(self.running[u], axis=0) if self.running[u] else np.zeros(len(self.total))

    def key(self, u: int, order: list[int]) -> Any:
        run, c = self.running[u], self.total
        a = self.alloc(u)
        if self.name == "drf":
            return float(np.max(a / c))
        if self.name == "c-drfh":
            return sum(float(np.max(np.array(d) / c)) for d in run)
        if self.name == "tsf":
            return sum(1.0 / self.gamma(d) for d in run)
        if self.name == "af":
            return float(np.sum(a / c))
        if self.name == "pf":
            act = self.active()
            types = np.array([self.first[v] for v in act]) / c
            nu = pf_prices(types, np.ones(len(act))) * len(act)
            return float(np.sum(a * nu / c))
        if self.name == "lmm-mms":
            n_i = len(run) + len(self.queues[u])
            mu = min(n_i, self.gamma(self.queues[u][0][1]) / len(self.active()))
            return len(run) / mu
        if self.name == "bmf":
            users = list(self.queues)
            used = np.round(sum(self.alloc(v) for v in users) / c, 12)
            bott = used >= used.max()
            demanded = np.any([np.array(d) > 0 for _, d in self.queues[u]] + [a > 0], axis=0)
            n_known = 64 * math.ceil((max(users) + 1) / 64)  # the scheduler's user table
            status = n_known + 1
            for r in np.flatnonzero(bott & demanded):
                mine = round(a[r] / c[r], 12)
                bigger = sum(round(self.alloc(v)[r] / c[r], 12) > mine for v in users)
                status = min(status, bigger + 1)
            return (-status, round(float(np.max(a / c)), 12))
        raise AssertionError(self.name)

    def decide(self) -> list[tuple[int, int]]:
        out = []
        while True:
            waiting = [u for u, q in self.queues.items() if q]
            order = sorted((_rounded(self.key(u, waiting)), u) for u in waiting)
            for _, u in order:
                task, d = self.queues[u][0]
                fit = np.flatnonzero(np.all(self.free >= np.array(d), axis=1))
                if fit.size == 0:
                    continue
                server = int(fit[0])
                self.queues[u].popleft()
                self.free[server] -= d
                self.running[u].append(d)
                out.append((task, server))
                break
            else:
                return out


def _rounded(key: Any) -> tuple[float, ...]:
    return key if isinstance(key, tuple) else (round(float(key), 12),)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    name=st.sampled_from(ONLINE),
    n_servers=st.integers(1, 5),
    n_users=st.integers(1, 5),
)
def test_optimised_equals_naive(seed: int, name: str, n_servers: int, n_users: int) -> None:
    _check_against_naive(seed, name, n_servers, n_users)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 100_000), name=st.sampled_from(ONLINE))
def test_optimised_equals_naive_many_users(seed: int, name: str) -> None:
    """Enough users for the vectorised wake-up order of the base class (long lists)."""
    _check_against_naive(seed, name, 6, 40, steps=25, arrivals=12)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 100_000), name=st.sampled_from(ONLINE), cands_max=st.sampled_from([1, 2])
)
def test_vectorised_wake_ups_equal_naive(seed: int, name: str, cands_max: int) -> None:
    """Every wake-up through the base class's vectorised path (dynamic keys refreshed there too),
    users with more than ``cands_max`` candidate servers searching every server."""
    import fairsim.schedulers.progressive_filling as pf

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "_PAIRS_VECTOR", 0)
        mp.setattr(pf, "_CANDS_MAX", cands_max)
        _check_against_naive(seed, name, 6, 20, steps=25, arrivals=8)


def _check_against_naive(
    seed: int, name: str, n_servers: int, n_users: int, steps: int = 40, arrivals: int = 4
) -> None:
    rng = np.random.default_rng(seed)
    cap = rng.choice([0.25, 0.5, 0.75, 1.0], size=(n_servers, 2))
    cluster = ClusterState(cap, ("cpu", "mem"))
    sched = make_scheduler(name)
    sched.bind(cluster.view())
    ref = Naive(name, cap)
    owner: dict[int, tuple[int, tuple[float, ...]]] = {}
    running: list[tuple[int, int, tuple[float, ...], int]] = []
    task = 0
    for _step in range(steps):
        for _ in range(int(rng.integers(0, arrivals))):
            user = int(rng.integers(0, n_users))
            d = tuple(rng.choice([0.05, 0.1, 0.125, 0.2, 0.3], size=2).tolist())
            if sched.placeable(d):
                sched.on_arrival(task, user, d)
                ref.arrive(task, user, d)
                owner[task] = (user, d)
            task += 1
        for _ in range(int(rng.integers(0, 3))):
            if running:
                t, u, d, s = running.pop(int(rng.integers(0, len(running))))
                cluster.release(s, d)
                sched.on_completion(t, u, d, s)
                ref.complete(u, d, s)
        got = []
        for t, s in sched.decide():
            u, d = owner[t]
            cluster.commit(t, s, d)
            got.append((t, s))
            running.append((t, u, d, s))
        want = ref.decide()
        assert sorted(got) == sorted(want)


# --------------------------------------------------------------------------- worked examples

# Ghodsi et al.'s example (NSDI 2011, Sections 4 and 5.1) with ten times the capacity,
# so that the integer fills end next to the fluid allocations: one server <90 CPU, 180 GB>,
# A = <1, 4>, B = <3, 1>. CPU binds: a + 3b <= 90 (memory, 4a + b <= 180, binds for PF too).
GHODSI_X10: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [90, 180]}],
    "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # DRF: dominant shares a/45 (memory) and b/30 (CPU), equal along a:b = 3:2; at (30, 20)
        # the CPU is exactly full (30 + 60 = 90) and nobody fits any more.
        ("drf", [30, 20]),
        # one pool, identical tasks: C-DRFH's per-task dominant share, TSF's 1/gamma
        # (gamma = min_r C_r / d_r) and LMM-MMS's x / (gamma / 2) all order users as DRF does
        ("c-drfh", [30, 20]),
        ("tsf", [30, 20]),
        ("lmm-mms", [30, 20]),
        # AF: aggregate shares 6a/180 and 7b/180 (1/90 + 4/180 and 3/90 + 1/180); the next user
        # is argmin(6a, 7b), ties to A. From (25, 21) (CPU 88) B is next (147 < 150) and does not
        # fit (91 > 90), A then fits twice: (27, 21), CPU 90. Fluid AF: (25.2, 21.6).
        ("af", [27, 21]),
        # PF: prices p maximise log(a_A.p) + log(a_B.p) = log((2 - t)/90) + log((1 + 5t)/180) + c
        # at t = 0.9 (5(2 - t) = 1 + 5t), so keys are 2a : 5b. From (40, 16) (CPU 88, mem 176)
        # the tie goes to A: (41, 16) fills the memory (180); B's next needs CPU 92 > 90.
        # Fluid PF (CEEI): (40.9, 16.4).
        ("pf", [41, 16]),
        # BMF serves A while the CPU is the more utilised resource (5b > 2a), B otherwise; for
        # two users and two resources BMF = PF (Bonald and Roberts, Section 2.4): (41, 16).
        ("bmf", [41, 16]),
    ],
)
def test_ghodsi_example_hand_computed(name: str, expected: list[int]) -> None:
    assert progressive_fill(name, parse_instance(GHODSI_X10)).ravel().tolist() == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # DRF: pooled C = (21, 24, 100); per-task keys 0.1, 1/12, 1/24 (weight 2). Order: u1, u2,
        # u3, u3, u2 (tie 1/12 to the lower code), u3: s1's memory is full (2 + 4 + 6 = 12);
        # u1 and u2 are blocked, u3 fills s2 (6 tasks).
        ("drf", [[1, 0], [2, 0], [3, 6]]),
        # TSF: gamma = 6, 6, 12 (s2 has no bandwidth for users 1, 2), keys 1/6, 1/6, 1/24: u1, u2,
        # then u3 four times (up to 4/24 = 1/6) fills s1's memory; u3 then fills s2.
        ("tsf", [[1, 0], [1, 0], [4, 6]]),
        # LMM-MMS: mu = (w/W) gamma = 1.5, 1.5, 6: keys 2/3, 2/3, 1/6 per task, the order of TSF
        ("lmm-mms", [[1, 0], [1, 0], [4, 6]]),
        # AF: aggregate keys 0.231, 0.141, 0.065 per task give DRF's order here
        ("af", [[1, 0], [2, 0], [3, 6]]),
        # PF (three resources, Cover's iteration for the prices): regression value
        ("pf", [[2, 0], [2, 0], [2, 6]]),
    ],
)
def test_psdsf_fig1_first_fit(name: str, expected: list[list[int]]) -> None:
    """First-Fit puts user 3 on s1 first; the exact allocations send it to s2 (documented)."""
    assert progressive_fill(name, parse_instance(PSDSF_FIG1)).tolist() == expected


def test_c_drfh_sums_per_task_dominant_shares() -> None:
    """User 0 runs (0.4, 0.1) and (0.1, 0.4) on a (2, 2) server; user 1 runs (0.6, 0).

    C-DRFH adds each task's dominant share: 0.2 + 0.2 = 0.4 for user 0, 0.3 for user 1, so user
    1 goes next. DRF takes the dominant share of the sum, max(0.5, 0.5) / 2 = 0.25 < 0.3, so user
    0 goes next.
    """
    picks = {}
    for name in ("drf", "c-drfh"):
        cl = ClusterState(np.array([[2.0, 2.0]]), ("cpu", "mem"))
        s = make_scheduler(name)
        s.bind(cl.view())
        for task, user, d in ((0, 0, (0.4, 0.1)), (1, 0, (0.1, 0.4)), (2, 1, (0.6, 0.0))):
            s.on_arrival(task, user, d)
            ((t, srv),) = list(s.decide())
            cl.commit(t, srv, d)
        s.on_arrival(3, 0, (0.05, 0.05))
        s.on_arrival(4, 1, (0.05, 0.0))
        picks[name] = next(iter(s.decide()))[0]
    assert picks == {"drf": 3, "c-drfh": 4}


# --------------------------------------------------------------------------- online vs exact


def _indivisibility_bound(inst: Any) -> np.ndarray:
    """Per user: ``L (1 + sum_{j != i} rho_ji)``, ``rho_ji = max_{r: d_ir > 0} d_jr / d_ir``.

    Each user (the user itself included) may end up to one task per server away from its fluid
    share, and one task of user j takes the room of at most ``rho_ji`` tasks of user i.
    """
    d = inst.demand
    n_servers = inst.capacity.shape[0]
    rho = np.array(
        [
            [float(np.max(d[j][d[i] > 0] / d[i][d[i] > 0])) for j in range(len(d))]
            for i in range(len(d))
        ]
    )
    return n_servers * (1.0 + rho.sum(axis=1) - np.diag(rho))


def _random_pool(seed: int, n_users: int, bounded: bool) -> Any:
    rng = np.random.default_rng(seed)
    users = []
    for i in range(n_users):
        m = int(rng.integers(1, 250))
        users.append(
            {
                "id": f"u{i}",
                "demand": rng.integers(1, 6, 2).tolist(),
                "max_tasks": m if bounded and m < 150 else None,
            }
        )
    cap = rng.integers(100, 400, 2).tolist()
    return parse_instance(
        {"resources": ["cpu", "mem"], "servers": [{"id": "s", "capacity": cap}], "users": users}
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_users=st.integers(2, 4),
    name=st.sampled_from(["drf", "c-drfh", "tsf", "af", "lmm-mms"]),
)
def test_online_within_indivisibility_of_exact(seed: int, n_users: int, name: str) -> None:
    """One server (a pool), task bounds: |online - exact| per user within the bound."""
    inst = _random_pool(seed, n_users, bounded=True)
    y = progressive_fill(name, inst).sum(axis=1)
    x = solve_exact(name, inst).sum(axis=1)
    assert np.all(np.abs(y - x) <= _indivisibility_bound(inst)), (y.tolist(), x.tolist())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_users=st.integers(2, 4))
def test_pf_within_indivisibility_of_exact(seed: int, n_users: int) -> None:
    """PF without task bounds (the online prices ignore bounds: docs/mechanisms.md)."""
    inst = _random_pool(seed, n_users, bounded=False)
    y = progressive_fill("pf", inst).sum(axis=1)
    x = solve_exact("pf", inst).sum(axis=1)
    assert np.all(np.abs(y - x) <= _indivisibility_bound(inst)), (y.tolist(), x.tolist())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_bmf_two_users_within_indivisibility_of_exact(seed: int) -> None:
    """BMF with two users (unique BMF, = PF); with three or more it drifts (documented)."""
    inst = _random_pool(seed, 2, bounded=False)
    y = progressive_fill("bmf", inst).sum(axis=1)
    x = solve_exact("bmf", inst).sum(axis=1)
    assert np.all(np.abs(y - x) <= _indivisibility_bound(inst)), (y.tolist(), x.tolist())


@pytest.mark.parametrize(("online", "exact"), [("af", "drf"), ("drf", "af"), ("pf", "drf")])
def test_bound_tells_mechanisms_apart(online: str, exact: str) -> None:
    """The bound is tight enough to fail for the wrong mechanism (Ghodsi's example, x100)."""
    inst = parse_instance({**GHODSI_X10, "servers": [{"id": "s", "capacity": [900, 1800]}]})
    assert progressive_fill(online, inst).sum() > 0
    y = progressive_fill(online, inst).sum(axis=1)
    x = solve_exact(exact, inst).sum(axis=1)
    assert np.any(np.abs(y - x) > _indivisibility_bound(inst))


# --------------------------------------------------------------------------- fairsim solve


def test_cli_solve_bare_name_is_exact_and_online_flag_runs_the_scheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fairsim solve drf`` keeps the exact mechanism; ``--online`` runs the online scheduler
    as static progressive filling (integer counts, real servers)."""
    from fairsim.cli import main

    f = tmp_path / "ghodsi.json"
    f.write_text(json.dumps({**GHODSI_X10, "servers": [{"id": "s", "capacity": [9, 18]}]}))
    assert main(["solve", "af", str(f)]) == 0
    exact = json.loads(capsys.readouterr().out)
    assert exact["servers"] == ["pool"] and "online" not in exact
    np.testing.assert_allclose(np.ravel(exact["tasks"]), [2.52, 2.16])  # Ghodsi et al.: 6x = 7y
    for name in ONLINE:
        assert main(["solve", name, str(f), "--online"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["mechanism"] == name and out["online"] is True
        assert out["servers"] == ["s"]
        assert out["tasks"] == [[3], [2]]  # every mechanism ends at (3, 2) at this size
    assert main(["solve", "--compare", "pf,bmf", str(f), "--online"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["gap"]["gap"] == [0.0, 0.0]


def test_cli_online_unknown_name_is_one_line_error(tmp_path: Path) -> None:
    f = tmp_path / "ghodsi.json"
    f.write_text(json.dumps(GHODSI_X10))

    def solve(name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "fairsim.cli", "solve", name, str(f), "--online"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            check=False,
        )

    p = solve("udrff")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "unknown scheduler 'udrff'; did you mean 'udrf'?" in p.stderr
    # udrf --online takes a jobs instance (docs/udrf.md): a plain instance is a one-line error
    p = solve("udrf")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "users[0]: unknown key 'demand'" in p.stderr
