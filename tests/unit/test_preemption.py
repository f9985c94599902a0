"""Preemption in the engine (docs/preemption.md): a scheduler that declares ``preempts`` yields
``Eviction`` records; the engine ends the run (the task restarts from scratch), records each
task's evictions, the work lost and preemption loops, and refuses what it cannot commit.

Hand instances with exact numbers: the documentation's example (one server, a batch task
evicted at 30 s by a task of a higher tier, restarted at 50 s), a ping-pong scheduler that
evicts the running task every 10 s (a preemption loop), and schedulers that evict what does not
run or evict one task twice at one instant."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers import priority_preemption, tiered_by_user

import fairsim
from fairsim.errors import PlacementError
from fairsim.schedulers.registry import unregister_scheduler
from fairsim.simulator import engine as engine_mod
from fairsim.simulator import preemption
from fairsim.simulator.cluster import ClusterState, ClusterView
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.preemption import LoopRule
from fairsim.simulator.results import tables
from fairsim.simulator.scheduler import Eviction, Scheduler
from fairsim.simulator.workload import FrameTaskSource
from fairsim.testing import check_scheduler

RES = ("cpu", "mem")


def _frame(rows: list[tuple[str, float, float, float]]) -> pd.DataFrame:
    """Tasks ``(user, submit_s, cpu=mem, run_s)``, each its own job."""
    return pd.DataFrame(
        {
            "job_id": np.arange(len(rows), dtype=np.int64),
            "task_index": np.zeros(len(rows), dtype=np.int32),
            "user": [r[0] for r in rows],
            "submit_s": [r[1] for r in rows],
            "cpu": [r[2] for r in rows],
            "mem": [r[2] for r in rows],
            "run_s": [r[3] for r in rows],
        }
    )


def _run(sched: Scheduler, frame: pd.DataFrame, servers: int = 1, **kw: object) -> EngineResult:
    engine = Engine(
        ClusterState(np.ones((servers, 2)), RES),
        sched,
        FrameTaskSource(frame),
        utilization_interval_s=10.0,
        **kw,  # type: ignore[arg-type]
    )
    return engine.run()


class Fifo(Scheduler):
    """First come, first served on the first server with room; an evicted task goes to the end
    of the queue. The tests' preempting schedulers change its pass."""

    name = "fifo-test"
    preempts = True

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.queue_: dict[int, np.ndarray] = {}
        self.seen_: list[tuple] = []

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queue_[task] = np.asarray(demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.queue_[task] = np.asarray(demand)

    def decide(self) -> Iterator[tuple[int, int]]:
        for task in list(self.queue_):
            fits = (self.cluster_.free + 1e-9 >= self.queue_[task]).all(axis=1)
            if fits.any():
                del self.queue_[task]
                yield task, int(fits.argmax())

    def pending(self) -> int:
        return len(self.queue_)


class PingPong(Fifo):
    """Every 10 s, evicts the youngest run on server 0 and starts the task waiting longest: two
    whole-server tasks take turns for ever (a preemption loop). Records what its view shows."""

    name = "ping-pong"

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.tick_ = False

    def next_wakeup(self, now: float) -> float:
        return now + 10.0

    def on_tick(self, now: float) -> None:
        self.tick_ = True

    def decide(self) -> Iterator[tuple[int, int]]:
        view = self.cluster_
        on = view.running_on(0)
        self.seen_.append((on, [view.task_server(t) for t in (0, 1)], view.task_start(0)))
        if self.tick_ and on and self.queue_:
            yield Eviction(on[-1], 0)
        self.tick_ = False
        yield from super().decide()


# --------------------------------------------------------------------------- exact numbers


@pytest.fixture
def example_module() -> Iterator[object]:
    """docs/examples/priority_preemption.py with its name registered for this test."""
    module = priority_preemption()
    fairsim.register_scheduler("priority-preemption")(module.PriorityPreemption)
    try:
        yield module
    finally:
        unregister_scheduler("priority-preemption")


def test_the_documented_example(example_module: object, tmp_path: Path) -> None:
    """docs/preemption.md's numbers: batch task 1 runs 0-30 s, is evicted by the prod task
    (30-50 s), restarts at 50 s and finishes at 150 s, its full 100 s after its last start; 30 s
    of a half server lost (15 resource-seconds of each resource, 12 % of the 125 used). The same
    tables in memory and written to a folder (streamed in arrival order)."""
    scenario = example_module.SCENARIO  # type: ignore[attr-defined]
    mem = fairsim.simulate(scenario)["priority-preemption"]
    disk = fairsim.simulate(scenario, out=tmp_path / "run")["priority-preemption"]
    for r in (mem, disk):
        t = r.tasks
        assert t["user"].tolist() == ["batch", "batch", "prod"]
        assert t["start_s"].tolist() == [0.0, 50.0, 30.0]
        assert t["finish_s"].tolist() == [100.0, 150.0, 50.0]
        assert t["evictions"].tolist() == [0, 1, 0]
        assert t["ended"].tolist() == ["finished"] * 3
        assert r.summary["tasks_completed"] == 3
        assert r.summary["preemption"] == {
            "evictions": 1,
            "tasks_evicted": 1,
            "run_s_lost": 30.0,
            "work_lost": {"cpu": 15.0, "mem": 15.0},
            "work_lost_fraction": {"cpu": 0.12, "mem": 0.12},
        }
        assert r.summary["preemption_loops"] == {
            "count": 0,
            "first_s": None,
            "examples": [],
            "evictions": 3,
            "window_s": 600.0,
        }
        ev = r.evictions
        assert ev is not None
        assert ev["evictions"].tolist() == [0, 0, 0] + [1] * 18
        assert ev.loc[ev["time_s"] == 30.0, "work_lost_cpu"].item() == 15.0
        assert list(ev.columns) == ["time_s", "evictions", "work_lost_cpu", "work_lost_mem"]
    pd.testing.assert_frame_equal(mem.tasks, disk.tasks)
    pd.testing.assert_frame_equal(mem.evictions, disk.evictions)
    assert (
        pq.read_schema(tmp_path / "run" / "priority-preemption" / "tasks.parquet").names[-1]
        == "evictions"
    )
    report = (tmp_path / "run" / "report.md").read_text()
    assert (
        "- priority-preemption: 1 eviction of 1 task, 30 s of runs lost; work lost: CPU 15.0 "
        "(12.00 % of the CPU used); memory 15.0 (12.00 % of the memory used); no preemption "
        "loop (3 evictions of a task within 600 s)"
    ) in report
    assert (tmp_path / "run" / "evictions.png").is_file()


def test_a_scheduler_that_does_not_preempt_writes_as_before(tmp_path: Path) -> None:
    """No ``evictions`` column, file, summary key, report paragraph or figure for a scheduler
    that does not preempt."""
    cfg = {
        "name": "plain",
        "trace": {
            "format": "inline",
            "users": [{"name": "a", "demand": [0.5, 0.5], "tasks": 3, "run_s": 10}],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": ["bf-drfh"],
    }
    r = fairsim.simulate(cfg, out=tmp_path / "run")["bf-drfh"]
    assert "evictions" not in r.tasks.columns and r.evictions is None
    assert not {"preemption", "preemption_loops"} & set(r.summary)
    assert not (tmp_path / "run" / "bf-drfh" / "evictions.parquet").exists()
    assert not (tmp_path / "run" / "evictions.png").exists()
    assert "Preemption" not in (tmp_path / "run" / "report.md").read_text()


def test_a_preemption_loop_is_found_and_reported() -> None:
    """Ping-pong on one server: task 0 runs 0-10, 20-30, ... and task 1 10-20, 30-40, ...; each
    eviction loses 10 s of a whole server. Task 0's evictions at 10, 30 and 50 s make a loop
    (3 within 600 s), found at 50 s; task 1's at 20, 40, 60 s, at 60 s. At the 95 s horizon task
    0 waits (evicted at 90 s) and task 1 runs since 90 s."""
    sched = PingPong()
    r = _run(sched, _frame([("a", 0.0, 1.0, 100.0), ("b", 0.0, 1.0, 100.0)]), horizon_s=95.0)
    t = r.tasks
    assert t["evictions"].tolist() == [5, 4]
    assert np.isnan(t["start_s"][0]) and t["start_s"][1] == 90.0
    assert np.isnan(t["finish_s"]).all()
    p = r.preemption
    assert p is not None
    assert (p.evictions, p.tasks_evicted, p.run_s_lost) == (9, 2, 90.0)
    assert p.work_lost.tolist() == [90.0, 90.0]
    assert (p.loops, p.first_loop_s, p.loop_examples) == (2, 50.0, ((0, 0), (1, 0)))
    summary = tables(r)["evictions"].to_pandas()
    assert summary["evictions"].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    # what the view showed at the pass of 10 s, before the eviction: task 0 on server 0 since 0
    assert sched.seen_[1] == ((0,), [0, -1], 0.0)
    # and at the pass of 20 s: task 1 on server 0, task 0 waiting (no start)
    on, servers, start0 = sched.seen_[2]
    assert on == (1,) and servers == [-1, 0] and math.isnan(start0)


def test_the_loop_rule_decides() -> None:
    """Evictions 20 s apart: 3 of them span 40 s, a loop within 60 s, none within 30 s; 4
    evictions within 600 s find none before the horizon for task 1 (4 evictions at 20, ..., 80)
    but find task 0 (5 evictions)."""
    frame = _frame([("a", 0.0, 1.0, 100.0), ("b", 0.0, 1.0, 100.0)])
    for rule, loops in (
        (LoopRule(evictions=3, window_s=60.0), 2),
        (LoopRule(evictions=3, window_s=30.0), 0),
        (LoopRule(evictions=5, window_s=600.0), 1),
    ):
        p = _run(PingPong(), frame, horizon_s=95.0, preemption_loops=rule).preemption
        assert p is not None and p.loops == loops, rule
    with pytest.raises(ValueError, match=r"^preemption loop rule: evictions 1 \(expected"):
        LoopRule(evictions=1)


def test_an_endless_loop_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """With an infinite horizon ping-pong never ends by itself: a task evicted more than
    MAX_TASK_EVICTIONS times stops it, naming the scheduler and the task."""
    monkeypatch.setattr(preemption, "MAX_TASK_EVICTIONS", 3)
    frame = _frame([("a", 0.0, 1.0, 100.0), ("b", 0.0, 1.0, 100.0)])
    with pytest.raises(
        PlacementError,
        match=r"^scheduler 'ping-pong' evicted task 0 more than 3 times \(at 70 s\): a "
        r"preemption loop without end$",
    ):
        _run(PingPong(), frame)


class EvictsWaiting(Fifo):
    name = "evicts-waiting"

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        for task in self.queue_:
            yield Eviction(task, 0)


class EvictsElsewhere(Fifo):
    name = "evicts-elsewhere"

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        if self.cluster_.task_server(0) == 0:
            yield Eviction(0, 1)


class SameInstant(Fifo):
    """Evicts the youngest run, places it again, evicts it again, ... in one pass."""

    name = "same-instant"

    def decide(self) -> Iterator[tuple[int, int]]:
        while True:
            yield from super().decide()
            on = self.cluster_.running_on(0)
            if not on:
                return
            yield Eviction(on[-1], 0)


class Undeclared(Fifo):
    name = "undeclared"
    preempts = False

    def decide(self) -> Iterator[tuple[int, int]]:
        yield from super().decide()
        yield Eviction(0, 0)


@pytest.mark.parametrize(
    ("sched", "servers", "match"),
    [
        (EvictsWaiting, 1, r"^scheduler 'evicts-waiting' evicted task 1 from server 0, but it is "
         r"waiting$"),
        (EvictsElsewhere, 2, r"^scheduler 'evicts-elsewhere' evicted task 0 from server 1, but it "
         r"runs on server 0$"),
        (SameInstant, 1, r"^scheduler 'same-instant' evicted task 0 a second time at 0 s: it was "
         r"evicted, placed again and evicted again in the same instant, a preemption loop that "
         r"never lets time advance \(a task is evicted at most once per instant\)$"),
        (Undeclared, 1, r"^scheduler 'undeclared' placed task 0, which is not waiting \(it runs "
         r"on server 0; a scheduler that evicts tasks declares preempts = True\)$"),
    ],
)  # fmt: skip
def test_what_the_engine_refuses(sched: type, servers: int, match: str) -> None:
    frame = _frame([("a", 0.0, 1.0, 10.0), ("b", 0.0, 1.0, 10.0)])
    with pytest.raises(PlacementError, match=match):
        _run(sched(), frame, servers=servers)


def test_stale_completions_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every evicted run leaves its completion in the heap. Those behind a live completion (task
    20 runs 600 s on server 20, never evicted) stay until the heap is rebuilt without them, once
    they outnumber STALE_REBUILD and half of it: at every grid point the heap holds at most the
    running tasks' completions plus max(STALE_REBUILD, running tasks) stale ones, although
    ping-pong on servers 0-19 evicts 1,000 runs of 40 tasks."""
    monkeypatch.setattr(engine_mod, "STALE_REBUILD", 8)
    rows = [(f"u{i % 2}", 0.0, 1.0, 600.0 if i == 20 else 1000.0) for i in range(41)]

    class ManyPingPong(PingPong):
        def decide(self) -> Iterator[tuple[int, int]]:
            if self.tick_:
                for server in range(20):
                    on = self.cluster_.running_on(server)
                    if on and self.queue_:
                        yield Eviction(on[-1], server)
            self.tick_ = False
            yield from Fifo.decide(self)

    sizes: list[tuple[int, int]] = []
    engine = Engine(
        ClusterState(np.ones((21, 2)), RES),
        ManyPingPong(),
        FrameTaskSource(_frame(rows)),
        horizon_s=500.0,
        utilization_interval_s=10.0,
        on_sample=lambda t, c: sizes.append((len(engine._completions), len(engine._running))),
    )
    r = engine.run()
    assert r.preemption is not None and r.preemption.evictions == 20 * 50
    assert all(heap <= running + max(8, running) for heap, running in sizes), sizes
    assert max(heap for heap, _ in sizes) > 21, sizes  # stale entries were there to drop
    assert len(engine._evictions._state) == 40  # the evicted tasks, all live at the horizon


def test_view_of_a_scheduler_that_does_not_preempt() -> None:
    """The view's running tasks without the preempting loop's index: a scan, same answers."""
    seen = []

    class Watch(Fifo):
        preempts = False

        def decide(self) -> Iterator[tuple[int, int]]:
            yield from super().decide()
            v = self.cluster_
            seen.append((v.running_on(0), v.running_on(1), v.task_server(2), v.task_start(1)))

    _run(Watch(), _frame([("a", 0.0, 0.5, 10.0)] * 3 + [("a", 5.0, 0.5, 10.0)]), servers=2)
    assert seen[0] == ((0, 1), (2,), 1, 0.0)
    assert seen[1] == ((0, 1), (2, 3), 1, 0.0)
    hand = ClusterState(np.ones((1, 2)), RES).view()
    assert (hand.running_on(0), hand.task_server(0), math.isnan(hand.task_start(0))) == (
        (),
        -1,
        True,
    )


def test_the_conformance_suite_passes_a_scheduler_that_preempts() -> None:
    """The example with a tier per user code passes every check; it does evict on the suite's
    kind of workload."""
    check_scheduler(tiered_by_user())
    rows = [(f"u{i % 3}", float(i // 3), 0.4, 30.0) for i in range(30)]
    r = _run(tiered_by_user()(), _frame(rows), servers=2)
    assert r.preemption is not None and r.preemption.evictions > 0


def test_the_loop_rule_comes_from_the_config(example_module: object) -> None:
    """``collect.preemption_loops`` sets the rule (reported in the summary); it is left out of
    the resolved config when not given (the config hash of earlier scenarios stays)."""
    scenario = dict(example_module.SCENARIO)  # type: ignore[attr-defined]
    scenario["collect"] = {
        **scenario["collect"],
        "preemption_loops": {"evictions": 2, "window_s": 60},
    }
    r = fairsim.simulate(scenario)["priority-preemption"]
    assert (
        r.summary["preemption_loops"]["evictions"],
        r.summary["preemption_loops"]["window_s"],
    ) == (2, 60.0)
    cfg = fairsim.RunConfig.model_validate(example_module.SCENARIO)  # type: ignore[attr-defined]
    assert "preemption_loops" not in json.dumps(cfg.model_dump())


class TwoTiers(Scheduler):
    """Two FIFO queues, the tasks of odd user codes first, each on the first server with room; a
    task of an odd user that does not fit evicts the youngest runs of even users on the server
    with the most room until it fits (evicted tasks go to the back of their queue). Fast enough
    for a slice of the Google sample."""

    name = "two-tiers"
    preempts = True

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.queues_: tuple[dict[int, np.ndarray], ...] = ({}, {})  # high (odd), low (even)
        self.user_: dict[int, int] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queues_[1 - user % 2][task] = np.asarray(demand)
        self.user_[task] = user

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        del self.user_[task]

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.queues_[1][task] = np.asarray(demand)

    def decide(self) -> Iterator[tuple[int, int]]:
        view = self.cluster_
        started: set[int] = set()
        for high, queue in zip((True, False), self.queues_, strict=True):
            while queue:
                task, need = next(iter(queue.items()))
                fits = (view.free + 1e-9 >= need).all(axis=1)
                if not fits.any() and high:
                    server = int((view.free - need).min(axis=1).argmax())
                    for victim in reversed(view.running_on(server)):
                        if (view.free[server] + 1e-9 >= need).all():
                            break
                        if self.user_[victim] % 2 == 0 and victim not in started:
                            yield Eviction(victim, server)
                    fits = (view.free + 1e-9 >= need).all(axis=1)
                if not fits.any():
                    break
                del queue[task]
                started.add(task)
                yield task, int(fits.argmax())

    def pending(self) -> int:
        return sum(len(q) for q in self.queues_)


def test_memory_stays_bounded_on_the_google_sample(
    google_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An hour of the Google sample (3,600-7,200 s, about 21,000 tasks) on 40 Table I-shaped
    servers, streamed: over 1,000 evictions, yet at every grid point the engine keeps eviction
    state only for live tasks (the log's per-task entries and the recorder's counts), the
    completion heap at most twice the running tasks' entries beyond STALE_REBUILD (lowered to 64
    here), and one row per grid point; the file has every task once with its count."""
    from fairsim.simulator.workload import ParquetTaskSource

    monkeypatch.setattr(engine_mod, "STALE_REBUILD", 64)
    peaks = {"state": 0, "live": 0}

    def watch(t: float, cluster: ClusterState) -> None:
        rec, log = engine._recorder, engine._evictions
        live = len(rec.live)
        assert len(log._state) <= live and len(rec._evictions) <= live  # type: ignore[attr-defined]
        running = len(engine._running)
        assert len(engine._completions) <= running + max(64, running)
        peaks["state"] = max(peaks["state"], len(log._state))
        peaks["live"] = max(peaks["live"], live)

    capacity = np.tile([[0.5, 0.4995], [0.5, 0.2493], [1.0, 1.0], [0.25, 0.2498]], (10, 1))
    out = tmp_path / "tasks.parquet"
    engine = Engine(
        ClusterState(capacity, RES),
        TwoTiers(),
        ParquetTaskSource(google_tasks, start_s=3600.0, end_s=7200.0),
        start_s=3600.0,
        horizon_s=7200.0,
        utilization_interval_s=60.0,
        tasks_out=out,
        tasks_order="end",
        on_sample=watch,
    )
    r = engine.run()
    p = r.preemption
    assert p is not None and p.evictions > 1000, p.evictions
    assert len(p.samples) == 61  # 3,600 to 7,200 s every 60 s: one row per grid point
    tasks = pq.read_table(out, columns=["evictions"]).column(0).to_numpy()
    assert len(tasks) == r.streamed.rows and int(tasks.sum()) == p.evictions  # type: ignore[union-attr]
    assert 0 < peaks["state"] <= p.tasks_evicted < p.evictions


def test_a_preempting_run_on_a_queue_tree(example_module: object) -> None:
    """Preemption and a queue tree together: the documented example with its two users in two
    queues and fairness over time every 10 s. The placements are the example's; the per-queue
    rows count the evicted batch task as waiting again (at 20 s both batch tasks run; at 40 s
    one runs and one waits while prod runs) and every task completes in its queue."""
    scenario = dict(example_module.SCENARIO)  # type: ignore[attr-defined]
    scenario["queues"] = [{"id": "prod"}, {"id": "batch"}]
    scenario["leaves"] = {"by": "user", "users": {"prod": "prod", "batch": "batch"}}
    scenario["collect"] = {**scenario["collect"], "fairness": {"interval_s": 10}}
    r = fairsim.simulate(scenario)["priority-preemption"]
    assert r.tasks["start_s"].tolist() == [0.0, 50.0, 30.0]  # as without the tree
    fq = r.fairness_queues
    assert fq is not None
    at = fq[fq["time_s"] == 40.0].set_index("queue")
    assert (at.loc["batch", "tasks_running"], at.loc["batch", "tasks_waiting"]) == (1, 1)
    assert (at.loc["prod", "tasks_running"], at.loc["prod", "tasks_waiting"]) == (1, 0)
    assert at.loc["prod", "dominant_share"] == 0.5
    before = fq[fq["time_s"] == 20.0].set_index("queue")
    assert before.loc["batch", "tasks_running"] == 2 and before.loc["prod", "tasks_running"] == 0
    q = r.queues
    assert q is not None and q.set_index("queue")["tasks_completed"].to_dict() == {
        "prod": 1,
        "batch": 2,
    }
