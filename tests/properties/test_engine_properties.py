"""Invariants of every simulation, on random instances (hypothesis): capacity is never exceeded,
every task is accounted for, and the same config and seed give byte-identical result files."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import random_frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.errors import PlacementError
from fairsim.scenario.scheduler_run import run_scheduler
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.registry import examples
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.results import write_run
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.workload import FrameTaskSource

SCHEDULERS = list(examples(plugins=False))  # every registered scheduler
TABLE = np.array([[0.5, 0.4995], [0.5, 0.2493], [0.5, 0.749], [1.0, 1.0], [0.25, 0.2498]])


def _instance(seed: int, n_tasks: int, n_servers: int, n_users: int, censored: float = 0.0):
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, n_tasks, n_users, horizon=500.0)
    capacity = TABLE[rng.integers(0, len(TABLE), n_servers)]
    if censored:
        frame["censored"] = rng.random(len(frame)) < censored
    return frame, capacity


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_tasks=st.integers(1, 120),
    n_servers=st.integers(1, 8),
    n_users=st.integers(1, 6),
    name=st.sampled_from(SCHEDULERS),
    horizon=st.sampled_from([200.0, 600.0, math.inf]),
    censored=st.sampled_from([0.0, 0.2]),
)
def test_capacity_never_exceeded_and_every_task_accounted_for(
    seed: int,
    n_tasks: int,
    n_servers: int,
    n_users: int,
    name: str,
    horizon: float,
    censored: float,
) -> None:
    # (a right-censored task holds its server to the horizon: an infinite one is refused)
    censored = censored if horizon < math.inf else 0.0
    frame, capacity = _instance(seed, n_tasks, n_servers, n_users, censored=censored)
    violations: list[float] = []

    def check(_t: float, cluster: ClusterState) -> None:
        used = cluster.capacity - cluster.free
        violations.append(float((used - cluster.capacity).max()))
        violations.append(float(-used.min()))

    cluster = ClusterState(capacity, ("cpu", "mem"))
    source = FrameTaskSource(frame, end_s=600.0)
    engine = Engine(
        cluster,
        make_scheduler(name),
        source,
        horizon_s=horizon,
        utilization_interval_s=7.0,
        on_sample=check,
    )
    r = engine.run()
    assert max(violations) <= 1e-9, "capacity exceeded (or negative use) at a sample point"
    t = r.tasks
    # every input task is simulated or counted as skipped, by reason
    assert len(t["submit_s"]) + sum(r.skipped.values()) - r.skipped.get(
        "fits no server of the pool", 0
    ) == len(frame)
    started = t["server"] >= 0
    finished = ~np.isnan(t["finish_s"])
    assert np.all(started[finished]), "a task finished without starting"
    assert not np.any(finished & t["censored"]), "a right-censored task completed"
    assert np.all(t["start_s"][started] >= t["submit_s"][started])
    np.testing.assert_allclose(
        t["finish_s"][finished], t["start_s"][finished] + t["run_s"][finished], rtol=1e-12
    )
    assert not np.any(t["unplaceable"] & started)
    if horizon == math.inf and not np.any(started & t["censored"]):
        # given enough time, every placeable task finishes (a started right-censored task holds
        # its server for ever, so tasks behind it may wait for ever)
        assert np.all(finished | t["unplaceable"])
    # utilisation is a fraction of capacity
    assert np.all((r.utilization[:, 1:] >= -1e-9) & (r.utilization[:, 1:] <= 1 + 1e-9))
    # the mean utilisation is the time integral of what the tasks held, computed independently
    end = r.horizon_s
    held_until = np.where(finished, t["finish_s"], end)[started]
    busy = (held_until - t["start_s"][started])[:, None] * t["demand"][started]
    span = end - r.start_s
    if span > 0:
        expected = busy.sum(axis=0) / span / capacity.sum(axis=0)
        np.testing.assert_allclose(r.mean_utilization, expected, rtol=1e-9, atol=1e-12)


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.parquet"))
    }


@pytest.mark.parametrize("name", ["ff-drfh", "bf-drfh", "slots-14", "pf", "bmf", "lmm-mms"])
def test_identical_seed_gives_byte_identical_files(tmp_path: Path, name: str) -> None:
    frame, capacity = _instance(7, 300, 6, 4)
    digests = []
    for k in range(2):
        r = run_scheduler(
            name,
            capacity,
            FrameTaskSource(frame),
            start_s=0.0,
            horizon_s=400.0,
            interval_s=10.0,
            user_shares=True,
        )
        write_run(r, tmp_path / str(k) / name)
        digests.append(_digest(tmp_path / str(k) / name))
    assert digests[0] == digests[1]
    assert set(digests[0]) == {
        "tasks.parquet",
        "jobs.parquet",
        "users.parquet",
        "utilization.parquet",
        "user_shares.parquet",
        "user_jct.parquet",
    }


class _Greedy(Scheduler):
    """A broken scheduler: places every task on server 0 without checking."""

    name = "greedy"

    def bind(self, cluster):  # type: ignore[no-untyped-def]
        super().bind(cluster)
        self.q: list[int] = []

    def on_arrival(self, task, user, demand):  # type: ignore[no-untyped-def]
        self.q.append(task)

    def on_completion(self, task, user, demand, server):  # type: ignore[no-untyped-def]
        pass

    def decide(self):  # type: ignore[no-untyped-def]
        while self.q:
            yield self.q.pop(0), 0

    def pending(self) -> int:
        return len(self.q)


def test_engine_rejects_overcommit_naming_task_server_resource() -> None:
    frame, _ = _instance(1, 10, 1, 1)
    frame["cpu"] = 0.3
    cluster = ClusterState(np.array([[0.5, 1.0]]), ("cpu", "mem"))
    with pytest.raises(
        PlacementError, match=r"task \d+ does not fit on server 0: cpu demand 0\.3 > free 0\.2"
    ):
        Engine(cluster, _Greedy(), FrameTaskSource(frame)).run()


def test_simulation_is_event_driven_not_polled() -> None:
    """Events are the distinct arrival/completion times, not every simulated second."""
    frame, capacity = _instance(3, 50, 4, 3)
    r = run_scheduler(
        "bf-drfh", capacity, FrameTaskSource(frame), start_s=0.0, horizon_s=math.inf, interval_s=1.0
    )
    distinct = len(
        set(frame["submit_s"]) | set(r.tasks["finish_s"][~np.isnan(r.tasks["finish_s"])])
    )
    assert r.n_events <= distinct
    assert r.n_events < r.utilization.shape[0] / 2
