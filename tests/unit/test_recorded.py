"""The replay of recorded placements (scheduler ``recorded``, :mod:`fairsim.simulator.replay`):
worked examples of its runs and over-commitment, the seal that keeps over-commitment to it, and
the scenario's refusals."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from fairsim.errors import ConfigError, PlacementError
from fairsim.scenario.config import parse_config
from fairsim.scenario.pipeline import prepare_scenario
from fairsim.scenario.workload import Workload, recorded_runs
from fairsim.schedulers.recorded import Recorded
from fairsim.schedulers.registry import available, examples, make_scheduler, resolve
from fairsim.simulator.cluster import ClusterState, TaskRecords
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.replay import RecordedRuns, ReplayScheduler
from fairsim.simulator.results import tables
from fairsim.simulator.scheduler import Scheduler
from fairsim.simulator.snapshot import UserSnapshot
from fairsim.simulator.stream import PARQUET_KW
from fairsim.simulator.workload import FrameTaskSource
from fairsim.traces.io import write_placements

RES = ("cpu", "mem")
CAP = np.array([[1.0, 1.0], [1.0, 1.0]])


def _frame() -> pd.DataFrame:
    """Job 1: two tasks of (0.6, 0.1) at 0 s; job 2: one right-censored task of (0.5, 0.1) at
    5 s; job 3: a task whose runs were not recorded."""
    return pd.DataFrame(
        {
            "job_id": [1, 1, 2, 3],
            "task_index": [0, 1, 0, 0],
            "user": ["a", "a", "b", "b"],
            "submit_s": [0.0, 0.0, 5.0, 7.0],
            "cpu": [0.6, 0.6, 0.5, 0.1],
            "mem": [0.1, 0.1, 0.1, 0.1],
            "run_s": [10.0, 10.0, 100.0, 1.0],
            "censored": [False, False, True, False],
        }
    )


#: Each run's own request (its SCHEDULE row's): task (1, 0) was resubmitted with a larger one
#: for its second run, more CPU than server 1 has; task (2, 0) holds more memory than it asked
#: for first.
REQUEST = np.array([[0.6, 0.1], [1.2, 0.3], [0.6, 0.1], [0.5, 0.4]])


def _runs(request: np.ndarray | None = None) -> RecordedRuns:
    """Task (1, 0): runs [1, 10] on server 0 (evicted) and [20, 30] on server 1; task (1, 1):
    [2, 12] on server 0; task (2, 0): from 3 s (before it arrives at 5 s) on server 0, censored
    (end 50 s, a lower bound)."""
    return RecordedRuns(
        job_id=np.array([1, 1, 1, 2]),
        task_index=np.array([0, 0, 1, 0], dtype=np.int32),
        server=np.array([0, 1, 0, 0], dtype=np.int32),
        start_s=np.array([1.0, 20.0, 2.0, 3.0]),
        end_s=np.array([10.0, 30.0, 12.0, 50.0]),
        censored=np.array([False, False, False, True]),
        request=request,
    )


def _run(
    censored: str = "hold",
    requests: str = "first",
    request: np.ndarray | None = None,
    **kw: object,
) -> EngineResult:
    engine = Engine(
        ClusterState(CAP, RES),
        Recorded(placements=_runs(request), requests=requests),  # type: ignore[arg-type]
        FrameTaskSource(_frame(), resources=RES),
        horizon_s=100.0,
        utilization_interval_s=5.0,
        censored=censored,
        **kw,  # type: ignore[arg-type]
    )
    return engine.run()


def test_runs_start_and_end_at_their_recorded_times_and_over_commit() -> None:
    res = _run()
    util = tables(res)["utilization"].to_pandas().set_index("time_s")
    assert list(util.columns) == [
        *RES,
        *("overcommitted_cpu", "overcommitted_mem", "overcommit_cpu", "overcommit_mem"),
    ]
    # 5 s: (1,0) and (1,1) on server 0 (1.2 CPU on a capacity of 1) and (2,0) from its arrival
    # at 5 s: 1.7 CPU on server 0
    assert util.loc[5.0, "cpu"] == pytest.approx(1.7 / 2)
    assert util.loc[5.0, "overcommitted_cpu"] == 1 and util.loc[5.0, "overcommitted_mem"] == 0
    assert util.loc[5.0, "overcommit_cpu"] == pytest.approx(0.7 / 2)
    # 10 s: (1,0)'s first run ended (evicted: the task waits), (1,1) and (2,0) on server 0
    assert util.loc[10.0, "cpu"] == pytest.approx(1.1 / 2)
    assert util.loc[10.0, "overcommit_cpu"] == pytest.approx(0.1 / 2)
    # 15 s: only the censored task; 20-29 s: (1,0)'s second run on server 1
    assert util.loc[15.0, "cpu"] == pytest.approx(0.25)
    assert util.loc[25.0, "cpu"] == pytest.approx(0.55)
    assert util.loc[25.0, "overcommitted_cpu"] == 0
    assert util.loc[30.0, "cpu"] == pytest.approx(0.25)  # the censored task holds its server
    assert util.loc[100.0, "cpu"] == pytest.approx(0.25)
    assert util["overcommitted_cpu"].dtype == np.int64
    # the exact time integral: 0.6 x 9 + 0.6 x 10 + 0.6 x 10 (job 1) + 0.5 x 95 (job 2) s
    assert res.mean_utilization[0] == pytest.approx((5.4 + 6.0 + 6.0 + 47.5) / 100 / 2)


def test_tasks_table_first_start_last_end_last_machine() -> None:
    t = tables(_run())["tasks"].to_pandas()
    rows = {(r.job_id, r.task_index): r for r in t.itertuples()}
    first = rows[(1, 0)]
    assert (first.start_s, first.finish_s, first.server, first.ended) == (
        1.0,
        30.0,
        "s1",
        "finished",
    )
    assert (rows[(1, 1)].start_s, rows[(1, 1)].finish_s, rows[(1, 1)].server) == (2.0, 12.0, "s0")
    held = rows[(2, 0)]  # starts when it arrives (5 s), not at its recorded 3 s; holds
    assert (held.start_s, held.server, held.ended) == (5.0, "s0", "censored")
    assert math.isnan(held.finish_s)
    lost = rows[(3, 0)]  # no recorded run: waits until the horizon
    assert lost.ended == "queued" and math.isnan(lost.start_s)


def test_censored_complete_ends_the_last_run_at_its_lower_bound() -> None:
    t = tables(_run(censored="complete"))["tasks"].to_pandas()
    held = t[t.job_id == 2].iloc[0]
    assert (held.finish_s, held.ended) == (50.0, "finished")


def test_a_task_between_two_runs_at_the_horizon_keeps_its_last_machine() -> None:
    engine = Engine(
        ClusterState(CAP, RES),
        Recorded(placements=_runs(), requests="first"),
        FrameTaskSource(_frame(), resources=RES),
        horizon_s=15.0,
        utilization_interval_s=5.0,
    )
    t = tables(engine.run())["tasks"].to_pandas()
    row = t[(t.job_id == 1) & (t.task_index == 0)].iloc[0]
    assert (row.start_s, row.server, row.ended) == (1.0, "s0", "running")


def test_streamed_tasks_and_fairness_counters_agree(tmp_path: Path) -> None:
    snaps: list[UserSnapshot] = []
    mem = _run(
        record_user_shares=True, fairness_interval_s=5.0, on_fairness=lambda t, s: snaps.append(s)
    )
    streamed = _run(tasks_out=tmp_path / "tasks.parquet")
    assert streamed.streamed is not None and streamed.overcommit is not None
    a = tables(mem)["tasks"].to_pandas().sort_values(["job_id", "task_index"])
    b = pd.read_parquet(tmp_path / "tasks.parquet").sort_values(["job_id", "task_index"])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    # arrival order (the default of a run with an output folder): the in-memory path's bytes
    _run(tasks_out=tmp_path / "arrival.parquet", tasks_order="arrival")
    pq.write_table(tables(mem)["tasks"], tmp_path / "mem.parquet", **PARQUET_KW)
    assert (tmp_path / "arrival.parquet").read_bytes() == (tmp_path / "mem.parquet").read_bytes()
    at = {s.time_s: s for s in snaps}
    # 15 s: user a's task (1,0) waits between runs, (1,1) ended; user b's censored task runs
    assert at[15.0].names == ("a", "b")
    assert at[15.0].tasks_running.tolist() == [0, 1]
    assert at[15.0].tasks_waiting.tolist() == [1, 1]
    assert at[15.0].allocation[0].tolist() == [0.0, 0.0]
    assert mem.user_shares is not None
    assert mem.user_shares[3, 0].tolist() == pytest.approx([0.0, 0.0])  # 15 s, user a


def test_schedule_requests_hold_each_runs_own_request() -> None:
    """``requests: schedule``: each run holds its SCHEDULE row's request on its machine while it
    runs; ``first`` ignores the runs' requests (the task's demand, as without them)."""
    snaps: list[UserSnapshot] = []
    res = _run(
        requests="schedule",
        request=REQUEST,
        record_user_shares=True,
        fairness_interval_s=5.0,
        on_fairness=lambda t, s: snaps.append(s),
    )
    util = tables(res)["utilization"].to_pandas().set_index("time_s")
    # 5 s: (1,0), (1,1) and (2,0) on server 0: CPU 0.6 + 0.6 + 0.5, memory 0.1 + 0.1 + 0.4
    assert util.loc[5.0, "cpu"] == pytest.approx(1.7 / 2)
    assert util.loc[5.0, "mem"] == pytest.approx(0.6 / 2)
    # 25 s: (1,0)'s second run holds 1.2 CPU on server 1 (capacity 1): over-committed by 0.2,
    # where its first request (0.6) fits
    assert util.loc[25.0, "cpu"] == pytest.approx((1.2 + 0.5) / 2)
    assert util.loc[25.0, "mem"] == pytest.approx((0.3 + 0.4) / 2)
    assert util.loc[25.0, "overcommitted_cpu"] == 1
    assert util.loc[25.0, "overcommit_cpu"] == pytest.approx(0.2 / 2)
    # every run released exactly what it held: only the censored task's request is left
    assert util.loc[30.0, ["cpu", "mem"]].tolist() == pytest.approx([0.25, 0.2])
    assert util.loc[100.0, "cpu"] == pytest.approx(0.25)
    # the exact time integral: 0.6 x 9 + 1.2 x 10 + 0.6 x 10 (job 1) + 0.5 x 95 (job 2) s
    assert res.mean_utilization[0] == pytest.approx((5.4 + 12.0 + 6.0 + 47.5) / 100 / 2)
    assert res.mean_utilization[1] == pytest.approx((0.9 + 3.0 + 1.0 + 38.0) / 100 / 2)
    # user a's share at 25 s is the run's request, and fairness sees what the runs hold
    assert res.user_shares is not None
    assert res.user_shares[5, 0].tolist() == pytest.approx([0.6, 0.15])
    at = {s.time_s: s for s in snaps}
    assert at[25.0].allocation[0].tolist() == pytest.approx([1.2, 0.3])
    assert at[15.0].allocation[0].tolist() == [0.0, 0.0]  # a waits between its two runs
    # the tasks table keeps each task's own demand (its first request)
    t = tables(res)["tasks"].to_pandas()
    assert t.loc[(t.job_id == 1) & (t.task_index == 0), "cpu"].item() == 0.6
    # first: the runs' requests are not read; the tables are those of runs without them
    a, b = tables(_run(request=REQUEST)), tables(_run())
    for name in ("utilization", "tasks"):
        assert a[name].equals(b[name])


def test_schedule_requests_need_the_runs_requests() -> None:
    with pytest.raises(ValueError, match=r"requests='schedule' needs each run's request"):
        Recorded(placements=_runs()).bind(ClusterState(CAP, RES).view())
    with pytest.raises(ValueError, match=r"RecordedRuns\.request: shape \(4,\), expected"):
        _runs(REQUEST[:, 0])
    with pytest.raises(ValueError, match="the runs' requests have 1 resources, the pool 2"):
        Recorded(placements=_runs(REQUEST[:, :1])).bind(ClusterState(CAP, RES).view())
    with pytest.raises(ValueError, match=r"RecordedRuns\.request: value -0\.6 "):
        _runs(-REQUEST)


def test_every_other_scheduler_keeps_the_capacity_check_and_its_columns() -> None:
    res = Engine(
        ClusterState(CAP, RES),
        make_scheduler("ff-drfh"),
        FrameTaskSource(_frame(), resources=RES),
        horizon_s=100.0,
        utilization_interval_s=5.0,
    ).run()
    assert res.overcommit is None
    assert list(tables(res)["utilization"].column_names) == ["time_s", *RES]


class _Overcommitting(Scheduler):
    """A plug-in that asks for over-commitment in every way it can without being the replay."""

    name = "greedy"
    overcommit = True
    replay = Recorded.replay

    def bind(self, cluster):  # type: ignore[no-untyped-def]
        super().bind(cluster)
        self._queue: list[int] = []

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self._queue.append(task)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def decide(self) -> Iterator[tuple[int, int]]:
        while self._queue:
            yield self._queue.pop(0), 0  # everything on server 0

    def pending(self) -> int:
        return len(self._queue)


def test_a_plug_in_cannot_switch_over_commitment_on() -> None:
    engine = Engine(
        ClusterState(CAP, RES),
        _Overcommitting(),
        FrameTaskSource(_frame(), resources=RES),
        horizon_s=100.0,
    )
    with pytest.raises(PlacementError, match="does not fit on server 0"):
        engine.run()
    with pytest.raises(TypeError, match=r"only fairsim\.schedulers\.recorded may subclass"):

        class _Replay(ReplayScheduler):
            pass

    with pytest.raises(TypeError, match=r"only fairsim\.schedulers\.recorded may subclass"):

        class _MyRecorded(Recorded):
            pass


def test_registry_view_and_refusals_of_the_scheduler() -> None:
    assert "recorded" in available(plugins=False) and "recorded" not in examples(plugins=False)
    sched = make_scheduler("recorded")
    assert isinstance(sched, Recorded) and sched.mechanism is None
    assert sched.requests == "schedule"  # the default: each run's own request
    first = resolve({"name": "recorded", "requests": "first"})
    assert (first.label, first.params) == ("recorded-first", {"requests": "first"})
    with pytest.raises(
        ConfigError, match=r"^recorded: requests: 'all' \(Input should be 'schedule' or 'first'\)$"
    ):
        resolve({"name": "recorded", "requests": "all"})
    with pytest.raises(ValueError, match="no recorded placements"):
        sched.bind(ClusterState(CAP, RES).view())
    bad = RecordedRuns(
        job_id=np.array([1]),
        task_index=np.array([0], dtype=np.int32),
        server=np.array([2], dtype=np.int32),
        start_s=np.array([0.0]),
        end_s=np.array([1.0]),
        censored=np.array([False]),
    )
    with pytest.raises(ValueError, match="on server 2, the pool has 2 servers"):
        Recorded(placements=bad).bind(ClusterState(CAP, RES).view())
    with pytest.raises(ValueError, match="not sorted"):
        RecordedRuns(
            job_id=np.array([2, 1]),
            task_index=np.array([0, 0], dtype=np.int32),
            server=np.array([0, 0], dtype=np.int32),
            start_s=np.zeros(2),
            end_s=np.ones(2),
            censored=np.zeros(2, dtype=bool),
        )


def test_the_view_gives_the_trace_task_index() -> None:
    view = ClusterState(CAP, RES).view(tasks=TaskRecords(job_id=[7, 7], task_index=[0, 5]))
    assert view.task_job(1) == (7, 0) and view.task_index(1) == 5
    assert ClusterState(CAP, RES).view().task_index(3) == 0


def _placements(folder: Path, machines: list[str]) -> None:
    frame = pd.DataFrame(
        {
            "job_id": np.array([1, 1, 1], dtype=np.int64),
            "task_index": np.array([1, 0, 0], dtype=np.int32),
            "run": np.array([0, 1, 0], dtype=np.int32),
            "machine": machines,
            "start_s": [2.0, 20.0, 1.0],
            "end_s": [12.0, 30.0, 10.0],
            "end_event": ["finish", "finish", "evict"],
            "censored": [False, False, False],
            "cpu": [0.5, 0.7, 0.6],
            "mem": [0.1, 0.2, 0.3],
        }
    )
    write_placements(frame, folder / "placements.parquet")


def _google_cfg(cluster: dict[str, object]) -> object:
    return parse_config(
        {
            "name": "rec",
            "trace": {"format": "google-2011", "path": "/nonexistent"},
            "cluster": cluster,
            "schedulers": ["recorded"],
        }
    )


def test_recorded_runs_map_machines_to_the_pool(tmp_path: Path) -> None:
    _placements(tmp_path, ["5", "7", "5"])
    pool = pd.DataFrame({"server": ["7", "5"], "cpu": [1.0, 1.0], "mem": [1.0, 1.0]})
    work = Workload(lambda: None, 0.0, 100.0, {}, folder=tmp_path)  # type: ignore[arg-type,return-value]
    runs = recorded_runs(_google_cfg({"source": "machine-events"}), work, pool)  # type: ignore[arg-type]
    # sorted by (job_id, task_index, run); machine text -> row of the pool
    assert runs.task_index.tolist() == [0, 0, 1]
    assert runs.server.tolist() == [1, 0, 1]
    assert runs.start_s.tolist() == [1.0, 20.0, 2.0]
    assert runs.request is not None
    assert runs.request.tolist() == [[0.6, 0.3], [0.7, 0.2], [0.5, 0.1]]  # each run's own
    with pytest.raises(ConfigError, match="machine '7' of a recorded run is not in the pool"):
        recorded_runs(_google_cfg({"source": "machine-events"}), work, pool.iloc[[1]])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^cluster.source: 'table-i': .*machine-events"):
        recorded_runs(_google_cfg({"source": "table-i", "servers": 2}), work, pool)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^cluster.servers: 2: .*every machine"):
        recorded_runs(_google_cfg({"source": "machine-events", "servers": 2}), work, pool)  # type: ignore[arg-type]
    empty = Workload(lambda: None, 0.0, 100.0, {}, folder=tmp_path / "none")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match=r"^trace.path: .* has no placements.parquet"):
        recorded_runs(_google_cfg({"source": "machine-events"}), empty, pool)  # type: ignore[arg-type]


def test_a_trace_without_placements_is_refused_naming_trace_format() -> None:
    cfg = parse_config(
        {
            "name": "rec",
            "trace": {"format": "synthetic", "n_tasks": 50, "duration_s": 100},
            "cluster": {"servers": 4},
            "schedulers": ["ff-drfh", "recorded"],
        }
    )
    with pytest.raises(ConfigError, match=r"^trace.format: 'synthetic' has no recorded placements"):
        prepare_scenario(cfg)
