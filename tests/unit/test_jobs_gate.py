"""Complex jobs in the engine: DAG parents, repetitions, bounded job queue
(fairsim.simulator.jobs)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.errors import PlacementError, TraceError
from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.jobs import (
    ADMIT_ON_ARRIVAL,
    ADMIT_ON_FINISH,
    DROPPED_DAG,
    HELD_DAG,
    JobGate,
    JobsTaskSource,
    admission_times,
    parse_parents,
)
from fairsim.simulator.results import job_times
from fairsim.simulator.workload import FrameTaskSource

COLS = ["job_id", "task_index", "submit_s", "cpu", "mem", "run_s", "instances", "parents"]


def _frame(rows: list[tuple]) -> pd.DataFrame:
    f = pd.DataFrame(rows, columns=COLS)
    return f.assign(user=[f"u{j}" for j in f["job_id"]])


def _expand(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per instance, as fairsim.simulator.replicas streams them."""
    return frame.loc[frame.index.repeat(frame["instances"])].reset_index(drop=True)


def _run(
    frame: pd.DataFrame,
    gate: JobGate,
    capacity: list[list[float]],
    *,
    reps: dict[int, int] | None = None,
    scheduler: str = "ff-drfh",
) -> EngineResult:
    source = FrameTaskSource(_expand(frame), batch_rows=3)
    if reps is not None:
        source = JobsTaskSource(source, repetitions=reps)  # type: ignore[assignment]
    cluster = ClusterState(np.array(capacity, dtype=float), ("cpu", "mem"))
    return Engine(cluster, make_scheduler(scheduler), source, gate=gate).run()


def _starts(r: EngineResult) -> dict[tuple[int, int], list[float]]:
    t = r.tasks
    out: dict[tuple[int, int], list[float]] = {}
    for j, i, s in zip(t["job_id"], t["task_index"], t["start_s"], strict=True):
        out.setdefault((int(j), int(i)), []).append(float(s))
    return out


def test_parse_parents() -> None:
    assert parse_parents(None) == ()
    assert parse_parents(math.nan) == ()
    assert parse_parents("3,4") == (3, 4)
    with pytest.raises(ValueError, match=r"parents: 'x' is not a comma-separated list"):
        parse_parents("x")
    # a TraceError (a ValueError), so the command line says it in one line, naming the task
    with pytest.raises(TraceError, match=r"^parents: '1;2' \(task 7/3, job/index\) is not a"):
        parse_parents("1;2", (7, 3))


def test_dag_child_waits_for_every_instance_of_its_parents() -> None:
    # job 1: task 1 (3 instances of 10 s, one at a time on the server), task 2 (parent 1),
    # task 3 (parents 1 and 2). Job 2 is independent and runs at once.
    frame = _frame(
        [
            (1, 1, 0.0, 0.6, 0.1, 10.0, 3, None),
            (1, 2, 0.0, 0.1, 0.1, 5.0, 1, "1"),
            (1, 3, 0.0, 0.1, 0.1, 1.0, 1, "1,2"),
            (2, 0, 0.0, 0.1, 0.1, 2.0, 1, None),
        ]
    )
    r = _run(frame, JobGate(dag=True), [[1.0, 1.0]])
    s = _starts(r)
    assert s[(1, 1)] == [0.0, 10.0, 20.0]
    assert s[(1, 2)] == [30.0]  # after the third instance of task 1
    assert s[(1, 3)] == [35.0]  # after task 2
    assert s[(2, 0)] == [0.0]
    assert r.extra == {"held": {}, "dropped": {}}


def test_without_gate_the_dag_is_ignored() -> None:
    frame = _frame([(1, 1, 0.0, 0.1, 0.1, 10.0, 1, None), (1, 2, 0.0, 0.1, 0.1, 5.0, 1, "1")])
    source = FrameTaskSource(_expand(frame))
    cluster = ClusterState(np.ones((1, 2)), ("cpu", "mem"))
    r = Engine(cluster, make_scheduler("ff-drfh"), source).run()
    assert r.tasks["start_s"].tolist() == [0.0, 0.0]


def test_missing_parent_is_held_and_unplaceable_parent_drops_descendants() -> None:
    frame = _frame(
        [
            (1, 2, 0.0, 0.1, 0.1, 5.0, 1, "1"),  # parent 1 never arrives
            (2, 1, 0.0, 2.0, 0.1, 5.0, 1, None),  # fits no server
            (2, 2, 0.0, 0.1, 0.1, 5.0, 2, "1"),  # child of an unplaceable task
            (2, 3, 1.0, 0.1, 0.1, 5.0, 1, "2"),  # grandchild, submitted later
        ]
    )
    r = _run(frame, JobGate(dag=True), [[1.0, 1.0]])
    assert np.isnan(r.tasks["start_s"]).all()
    assert r.extra["held"] == {HELD_DAG: 1}
    assert r.extra["dropped"] == {DROPPED_DAG: 3}
    assert r.skipped == {"fits no server of the pool": 1}


def test_repetitions_run_one_after_the_other() -> None:
    # job 7: two tasks of 10 s that run side by side; three repetitions -> JCT 30 s
    frame = _frame([(7, 0, 0.0, 0.4, 0.1, 10.0, 1, None), (7, 1, 0.0, 0.4, 0.1, 10.0, 1, None)])
    gate = JobGate(dag=True, job_sizes={7: 2}, repetitions={7: 3}, repetition_mode="sequential")
    r = _run(frame, gate, [[1.0, 1.0]], reps={7: 3})
    t = r.tasks
    assert t["rep"].tolist() == [0, 1, 2, 0, 1, 2]
    assert sorted(t["start_s"].tolist()) == [0.0, 0.0, 10.0, 10.0, 20.0, 20.0]
    assert np.nanmax(t["finish_s"]) == 30.0


def test_simultaneous_repetitions_are_instances_released_together() -> None:
    """UDRF paper, eq. 4: x_j counts instances of job j that run at the same time; the default
    mode releases all repetitions when the job enters the queue. Job 7 (two tasks of 0.4 CPU,
    three repetitions) on 2 CPUs: five tasks run at 0, the sixth at 10 -> JCT 20 s."""
    frame = _frame([(7, 0, 0.0, 0.4, 0.1, 10.0, 1, None), (7, 1, 0.0, 0.4, 0.1, 10.0, 1, None)])
    gate = JobGate(dag=True, job_sizes={7: 2}, repetitions={7: 3})
    assert gate.repetition_mode == "simultaneous"
    r = _run(frame, gate, [[1.0, 1.0], [1.0, 1.0]], reps={7: 3})
    assert sorted(r.tasks["start_s"].tolist()) == [0.0, 0.0, 0.0, 0.0, 10.0, 10.0]
    assert np.nanmax(r.tasks["finish_s"]) == 20.0


def test_queue_entry_times_with_simultaneous_repetitions() -> None:
    """A queue of one job: job 1 (two instances of 4 s, side by side) leaves at 4, so job 2
    (submitted at 1) enters the queue at 4 and job 3 (submitted at 2) when job 2 ends at 7."""
    frame = _frame(
        [
            (1, 0, 0.0, 0.1, 0.1, 4.0, 1, None),
            (2, 0, 1.0, 0.1, 0.1, 3.0, 1, None),
            (3, 0, 2.0, 0.1, 0.1, 1.0, 1, None),
        ]
    )
    gate = JobGate(dag=False, job_sizes={1: 1, 2: 1, 3: 1}, repetitions={1: 2}, queue_jobs=1)
    r = _run(frame, gate, [[1.0, 1.0]], reps={1: 2})
    assert r.tasks["start_s"].tolist() == [0.0, 0.0, 4.0, 7.0]
    entry = admission_times(gate, r.tasks["submit_s"], r.tasks["finish_s"])
    assert entry == {1: 0.0, 2: 4.0, 3: 7.0}
    assert [(j, how) for j, _t, how in gate.admissions] == [
        (1, ADMIT_ON_ARRIVAL),
        (2, ADMIT_ON_FINISH),
        (3, ADMIT_ON_FINISH),
    ]


def test_bounded_queue_admits_jobs_in_submit_order() -> None:
    # three one-task jobs at t=0, queue of 2: job 3 enters when job 1 leaves (t=4)
    frame = _frame(
        [
            (1, 0, 0.0, 0.1, 0.1, 4.0, 1, None),
            (2, 0, 0.0, 0.1, 0.1, 6.0, 1, None),
            (3, 0, 0.0, 0.1, 0.1, 1.0, 1, None),
        ]
    )
    gate = JobGate(dag=False, job_sizes={1: 1, 2: 1, 3: 1}, queue_jobs=2)
    r = _run(frame, gate, [[1.0, 1.0]])
    assert r.tasks["start_s"].tolist() == [0.0, 0.0, 4.0]
    assert r.extra["jobs_admitted"] == 3
    assert r.extra["max_jobs_waiting"] == 1


def test_queue_with_repetitions_releases_a_job_after_its_last_repetition() -> None:
    frame = _frame([(1, 0, 0.0, 0.1, 0.1, 4.0, 1, None), (2, 0, 0.0, 0.1, 0.1, 1.0, 1, None)])
    gate = JobGate(
        dag=False,
        job_sizes={1: 1, 2: 1},
        repetitions={1: 2},
        queue_jobs=1,
        repetition_mode="sequential",
    )
    r = _run(frame, gate, [[1.0, 1.0]], reps={1: 2})
    # job 1 runs at 0 and 4, job 2 enters at 8
    assert r.tasks["start_s"].tolist() == [0.0, 4.0, 8.0]


def test_gate_validates_its_parameters() -> None:
    with pytest.raises(ValueError, match=r"queue_jobs: 0 \(expected an integer >= 1"):
        JobGate(queue_jobs=0)
    with pytest.raises(ValueError, match="job_sizes: required"):
        JobGate(repetitions={1: 2})
    with pytest.raises(
        ValueError,
        match=r"repetition_mode: 'parallel' \(expected 'simultaneous' or 'sequential'\)",
    ):
        JobGate(repetition_mode="parallel")


@st.composite
def dag_workloads(draw: st.DrawFn) -> pd.DataFrame:
    rows = []
    for job in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 5))
        submit = float(draw(st.integers(0, 5)))
        for i in range(1, n + 1):
            parents = (
                sorted(set(draw(st.lists(st.integers(1, i - 1), max_size=2)))) if i > 1 else []
            )
            rows.append(
                (
                    job,
                    i,
                    submit,
                    draw(st.sampled_from([0.2, 0.5, 0.9])),
                    draw(st.sampled_from([0.1, 0.4])),
                    float(draw(st.integers(1, 6))),
                    draw(st.integers(1, 3)),
                    ",".join(map(str, parents)) or None,
                )
            )
    return _frame(rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=dag_workloads(), scheduler=st.sampled_from(["ff-drfh", "bf-drfh", "slots-4"]))
def test_no_task_starts_before_its_parents_finish(frame: pd.DataFrame, scheduler: str) -> None:
    r = _run(frame, JobGate(dag=True), [[1.0, 1.0], [0.5, 0.5]], scheduler=scheduler)
    t = r.tasks
    done: dict[tuple[int, int], float] = {}
    for j, i, f in zip(t["job_id"], t["task_index"], t["finish_s"], strict=True):
        key = (int(j), int(i))
        done[key] = max(done.get(key, -math.inf), float(f))
    n_started = 0
    for row in frame.itertuples():
        starts = [
            s
            for (j, i, s) in zip(t["job_id"], t["task_index"], t["start_s"], strict=True)
            if (j, i) == (row.job_id, row.task_index)
        ]
        assert len(starts) == row.instances  # every instance accounted for
        for p in parse_parents(row.parents):
            for s in starts:
                if not np.isnan(s):
                    assert s >= done[(row.job_id, p)]
        n_started += sum(not np.isnan(s) for s in starts)
    # every task runs (all fit the 1 x 1 server, all parents exist): nothing held or dropped
    assert n_started == len(t["start_s"])
    assert r.extra == {"held": {}, "dropped": {}}


class _Ticker:
    """FF-DRFH that only places tasks at multiples of 5 s (a minimal periodic scheduler)."""

    def __new__(cls) -> object:
        from fairsim.schedulers.drfh import FirstFitDRFH

        class Periodic(FirstFitDRFH):
            name = "periodic"

            def bind(self, cluster: object) -> None:
                super().bind(cluster)  # type: ignore[arg-type]
                self.ticks_: list[float] = []
                self._open = False

            def next_wakeup(self, now: float) -> float:
                return (math.floor(now / 5.0) + 1) * 5.0

            def on_tick(self, now: float) -> None:
                self.ticks_.append(now)
                self._open = True

            def decide(self):  # type: ignore[no-untyped-def]
                if self._open:
                    self._open = False
                    yield from super().decide()

        return Periodic()


def test_periodic_scheduler_gets_ticks_and_the_run_ends() -> None:
    frame = _frame([(1, 0, 1.0, 0.6, 0.1, 2.0, 1, None), (2, 0, 1.0, 0.6, 0.1, 2.0, 1, None)])
    sched = _Ticker()
    cluster = ClusterState(np.ones((1, 2)), ("cpu", "mem"))
    r = Engine(cluster, sched, FrameTaskSource(_expand(frame))).run()  # type: ignore[arg-type]
    # submitted at 1 s; placed at the 5 s tick, the second (which waits for room) at 10 s
    assert r.tasks["start_s"].tolist() == [5.0, 10.0]
    assert sched.ticks_ == [5.0, 10.0]  # type: ignore[attr-defined]


def test_a_scheduler_that_ticks_for_ever_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairsim.simulator.engine as engine_mod

    monkeypatch.setattr(engine_mod, "MAX_IDLE_TICKS", 50)
    frame = _frame([(1, 0, 1.0, 2.0, 0.1, 2.0, 1, None)])  # fits no server: never placed
    sched = _Ticker()
    sched.placeable = lambda demand: True  # type: ignore[attr-defined]  # so it stays pending
    cluster = ClusterState(np.ones((1, 2)), ("cpu", "mem"))
    with pytest.raises(PlacementError, match=r"'periodic': 50 ticks in a row placed nothing"):
        Engine(cluster, sched, FrameTaskSource(_expand(frame))).run()  # type: ignore[arg-type]


@pytest.mark.parametrize("wakeup", [None, "5", math.nan, 0.0])
def test_a_wakeup_that_is_not_a_later_time_is_refused_in_one_line(wakeup: object) -> None:
    """``next_wakeup`` returning None ended in ``TypeError: '>' not supported between
    'NoneType' and 'float'``, and a NaN in a ValueError traceback: a PlacementError now, which
    the command line prints in one line."""
    frame = _frame([(1, 0, 1.0, 0.6, 0.1, 2.0, 1, None)])
    sched = _Ticker()
    sched.next_wakeup = lambda now: wakeup  # type: ignore[method-assign]
    cluster = ClusterState(np.ones((1, 2)), ("cpu", "mem"))
    with pytest.raises(PlacementError) as info:
        Engine(cluster, sched, FrameTaskSource(_expand(frame))).run()  # type: ignore[arg-type]
    assert str(info.value) == (
        f"scheduler 'periodic': next_wakeup(0.0) returned {wakeup!r}, expected a time after it "
        "(inf when no pass can help)"
    )


def test_a_scheduler_bug_keeps_its_traceback_and_names_the_run() -> None:
    """An exception raised in a scheduler's own code is not a fairsim error: its traceback
    stays, with a note naming the scheduler and the simulated time (before: nothing named
    them)."""
    frame = _frame([(1, 0, 1.0, 0.6, 0.1, 2.0, 1, None), (2, 0, 3.0, 0.6, 0.1, 2.0, 1, None)])
    sched = _Ticker()

    def boom():  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("x")
        yield

    sched.on_tick = lambda now: setattr(sched, "decide", boom)  # type: ignore[method-assign]
    cluster = ClusterState(np.ones((1, 2)), ("cpu", "mem"))
    with pytest.raises(ZeroDivisionError) as info:
        Engine(cluster, sched, FrameTaskSource(_expand(frame))).run()  # type: ignore[arg-type]
    assert info.value.__notes__ == [
        "fairsim: raised in the run of scheduler 'periodic' at simulated time 5.0 s"
    ]


def test_job_times_from_queue_entry() -> None:
    """Job 1: submitted at 0, enters the queue at 5, tasks run 7-9 and 8-12: JCT 7 = wait 2 +
    execution 5. Job 2 has no recorded entry (it entered at its submit, 1) and a task that never
    finished: no JCT."""
    tasks = {
        "job_id": np.array([1, 1, 2, 2]),
        "submit_s": np.array([0.0, 3.0, 1.0, 1.0]),
        "start_s": np.array([7.0, 8.0, 2.0, math.nan]),
        "finish_s": np.array([9.0, 12.0, 4.0, math.nan]),
    }
    t = job_times(tasks, {1: 5.0}).set_index("job_id")
    assert t.loc[1, ["entry_s", "first_start_s", "finish_s"]].tolist() == [5.0, 7.0, 12.0]
    assert t.loc[1, ["jct_s", "wait_s", "exec_s"]].tolist() == [7.0, 2.0, 5.0]
    assert t.loc[2, "entry_s"] == 1.0 and t.loc[2, "wait_s"] == 1.0
    assert math.isnan(t.loc[2, "finish_s"]) and math.isnan(t.loc[2, "jct_s"])
