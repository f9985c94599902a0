"""Invariants of runs with preemption, on random workloads (hypothesis), with the documentation's
priority-preemption scheduler given a tier per user code (helpers.tiered_by_user): capacity is
never exceeded, every task is accounted for, an evicted run never counts as completed (a finished
task ran its full run time from its last start), the counts agree, and a streamed
``tasks.parquet`` holds the in-memory rows. Metamorphic: without evictions, the engine's
preempting event loop gives exactly what its other loop gives."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from helpers import priority_preemption, random_frame, tiered_by_user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.simulator.cluster import CAPACITY_TOLERANCE, ClusterState
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.results import ENDED, ended_codes, tables
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.snapshot import UserSnapshot
from fairsim.simulator.workload import FrameTaskSource

TABLE = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])
RES = ("cpu", "mem")


def _instance(seed: int, n_tasks: int, n_servers: int, n_users: int, censored: float = 0.0):
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, n_tasks, n_users, horizon=500.0)
    if censored:
        frame["censored"] = rng.random(len(frame)) < censored
    return frame, TABLE[rng.integers(0, len(TABLE), n_servers)]


def _run(sched: Scheduler, frame, capacity, horizon: float, **kw) -> EngineResult:  # type: ignore[no-untyped-def]
    def within(t: float, cluster: ClusterState) -> None:
        assert (cluster.free >= -CAPACITY_TOLERANCE).all(), f"over-committed at {t} s"

    return Engine(
        ClusterState(capacity, RES),
        sched,
        FrameTaskSource(frame),
        horizon_s=horizon,
        utilization_interval_s=25.0,
        on_sample=within,
        **kw,
    ).run()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_tasks=st.integers(1, 120),
    n_servers=st.integers(1, 6),
    n_users=st.integers(1, 6),
    horizon=st.sampled_from([200.0, 600.0, math.inf]),
    censored=st.sampled_from([0.0, 0.2]),
)
def test_runs_with_evictions_keep_the_invariants(
    seed: int, n_tasks: int, n_servers: int, n_users: int, horizon: float, censored: float
) -> None:
    censored = censored if horizon < math.inf else 0.0  # held to an infinite horizon: refused
    frame, capacity = _instance(seed, n_tasks, n_servers, n_users, censored)
    r = _run(tiered_by_user()(), frame, capacity, horizon)
    t, p = r.tasks, r.preemption
    assert p is not None
    n = len(t["submit_s"])
    assert n == int((frame["submit_s"] <= horizon).sum())  # every task that arrived, once
    codes = np.bincount(ended_codes(t), minlength=len(ENDED))
    assert codes.sum() == n
    done = ~np.isnan(t["finish_s"])
    assert codes[ENDED.index("finished")] == done.sum()
    # an evicted run never completes: a finished task ran its full run time from its last start
    ran = t["finish_s"][done] - t["start_s"][done]
    np.testing.assert_allclose(ran, t["run_s"][done], rtol=0, atol=1e-9)
    ev = t["evictions"]
    assert ev.min(initial=0) >= 0
    assert (int(ev.sum()), int((ev > 0).sum())) == (p.evictions, p.tasks_evicted)
    assert p.run_s_lost >= 0 and (p.work_lost >= 0).all()
    assert (p.work_lost <= p.work_used + 1e-9).all()
    assert p.loops <= p.tasks_evicted
    if p.evictions == 0:
        assert p.run_s_lost == 0 and p.loops == 0
    if horizon == math.inf:  # strict tiers: no loop without end, every task finishes
        assert done.sum() + t["unplaceable"].sum() == n
    if len(p.samples):
        assert p.samples[-1, 1] == p.evictions
        np.testing.assert_allclose(p.samples[-1, 2:], p.work_lost)
        assert (np.diff(p.samples[:, 1]) >= 0).all()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_tasks=st.integers(1, 80),
    n_servers=st.integers(1, 4),
    order=st.sampled_from(["arrival", "end"]),
)
def test_streamed_tasks_hold_the_in_memory_rows(
    tmp_path_factory, seed: int, n_tasks: int, n_servers: int, order: str
) -> None:  # type: ignore[no-untyped-def]
    frame, capacity = _instance(seed, n_tasks, n_servers, 4)
    mem = tables(_run(tiered_by_user()(), frame, capacity, 400.0))["tasks"]
    path = Path(tmp_path_factory.mktemp("stream")) / "tasks.parquet"
    _run(tiered_by_user()(), frame, capacity, 400.0, tasks_out=path, tasks_order=order)
    disk = pq.read_table(path)
    if order == "arrival":
        assert disk.equals(mem)
    else:
        key = [("job_id", "ascending"), ("task_index", "ascending")]
        assert disk.sort_by(key).equals(mem.sort_by(key))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_tasks=st.integers(1, 100),
    n_servers=st.integers(1, 6),
    n_users=st.integers(1, 5),
    horizon=st.sampled_from([300.0, math.inf]),
)
def test_without_evictions_both_loops_agree(
    seed: int, n_tasks: int, n_servers: int, n_users: int, horizon: float
) -> None:
    """The example with one tier never evicts; declared as not preempting it runs in the
    engine's other loop: the same placements, utilisation, user shares and fairness snapshots
    (only the ``evictions`` column and report are added)."""
    frame, capacity = _instance(seed, n_tasks, n_servers, n_users)
    base = priority_preemption().PriorityPreemption
    plain = type("Plain", (base,), {"preempts": False})
    out = []
    for cls in (base, plain):
        snaps: list[UserSnapshot] = []
        r = _run(
            cls(),
            frame,
            capacity,
            horizon,
            record_user_shares=True,
            fairness_interval_s=50.0,
            on_fairness=lambda t, s, snaps=snaps: snaps.append(s),
        )
        out.append((r, snaps))
    (a, snaps_a), (b, snaps_b) = out
    assert a.preemption is not None and a.preemption.evictions == 0 and b.preemption is None
    assert not a.tasks.pop("evictions").any()
    for col in b.tasks:
        np.testing.assert_array_equal(a.tasks[col], b.tasks[col], err_msg=col)
    np.testing.assert_array_equal(a.utilization, b.utilization)
    np.testing.assert_array_equal(a.user_shares, b.user_shares)  # type: ignore[arg-type]
    np.testing.assert_array_equal(a.mean_utilization, b.mean_utilization)  # type: ignore[arg-type]
    assert a.n_events == b.n_events
    assert len(snaps_a) == len(snaps_b)
    for x, y in zip(snaps_a, snaps_b, strict=True):
        for f in dataclasses.fields(x):
            np.testing.assert_array_equal(getattr(x, f.name), getattr(y, f.name), f.name)
