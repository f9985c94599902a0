"""What a scheduler of one's own may yield from ``decide()``, and the one-line error for anything
else (docs/write-a-scheduler.md: the engine checks every placement).

A placement is a pair ``(task, server)`` of integers (Python or numpy); a scheduler that preempts
may also yield ``Eviction(task, server)``. Before, a float server failed as a numpy
``IndexError``, a boolean one as numpy's "truth value of an array is ambiguous", a bare task id
as "cannot unpack non-iterable int object", an eviction of ``(0.5, 0)`` evicted task 0 without a
word, and a task the scheduler was never told about under a wrapping scheduler (the backlog
users' queue counter, the waiting tasks kept for the waste measure) as a ``KeyError``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from fairsim.errors import PlacementError
from fairsim.simulator.backlog import QueueCounter
from fairsim.simulator.cluster import ClusterState, ClusterView
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.scheduler import Eviction, Scheduler, WaitingTasks
from fairsim.simulator.workload import FrameTaskSource

RES = ("cpu", "mem")


def _frame() -> pd.DataFrame:
    """Three tasks of half a server each, submitted at 0 s, running 10, 30 and 10 s: on one
    server the third starts when the first ends, while the second runs."""
    n = 3
    return pd.DataFrame(
        {
            "job_id": np.arange(n, dtype=np.int64),
            "task_index": np.zeros(n, dtype=np.int32),
            "user": [f"u{i}" for i in range(n)],
            "submit_s": np.zeros(n),
            "cpu": np.full(n, 0.5),
            "mem": np.full(n, 0.5),
            "run_s": [10.0, 30.0, 10.0],
        }
    )


class Yields(Scheduler):
    """Places the waiting tasks on server 0 in arrival order while the first fits, each as
    ``shape(task, 0)``; with ``evict``, first evicts what runs on server 0 as ``evict(task,
    0)``; with ``raises``, raises it instead of placing a task."""

    name = "yields"
    work_conserving = False
    lowest_share_first = False

    def __init__(self, shape=lambda t, s: (t, s), preempts=False, evict=None, raises=None):  # type: ignore[no-untyped-def]
        self.shape, self.preempts, self.evict, self.raises = shape, preempts, evict, raises

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.queue_: list[int] = []
        self.demand_: dict[int, np.ndarray] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queue_.append(task)
        self.demand_[task] = np.asarray(demand)

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def decide(self) -> Iterator[tuple[int, int]]:
        if self.evict is not None:
            for task in self.cluster_.running_on(0):
                yield self.evict(task, 0)
        while self.queue_ and (self.cluster_.free[0] >= self.demand_[self.queue_[0]]).all():
            task = self.queue_.pop(0)
            if self.raises is not None:
                raise self.raises
            yield self.shape(task, 0)

    def pending(self) -> int:
        return len(self.queue_)


def _run(sched: Scheduler) -> EngineResult:
    engine = Engine(
        ClusterState(np.ones((1, 2)), RES), sched, FrameTaskSource(_frame()), horizon_s=100.0
    )
    return engine.run()


@pytest.mark.parametrize("preempts", [False, True], ids=["main loop", "preempting loop"])
@pytest.mark.parametrize(
    ("shape", "says"),
    [
        (lambda t, s: (t, float(s)), "yielded (0, 0.0): the server is a float, expected an"),
        (lambda t, s: (float(t), s), "yielded (0.0, 0): the task is a float, expected an integer"),
        (lambda t, s: (t, np.float64(s)), "yielded (0, np.float64(0.0)): the server is a float64"),
        (lambda t, s: (t, True), "yielded (0, True): the server is a bool, expected an integer"),
        (lambda t, s: t, "yielded 0: expected a pair (task, server)"),
        (lambda t, s: (t, s, 1), "yielded (0, 0, 1): expected a pair (task, server)"),
        (lambda t, s: "ab", "yielded 'ab': the task is a str, expected an integer"),
    ],
)  # fmt: skip
def test_a_malformed_placement_is_refused_in_one_line(shape, says, preempts) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PlacementError, match="^" + re.escape(f"scheduler 'yields' {says}")):
        _run(Yields(shape, preempts=preempts))


@pytest.mark.parametrize(
    ("evict", "says"),
    [
        (lambda t, s: Eviction(t + 0.5, s), "yielded Eviction(task=1.5, server=0): the task is a"),
        (lambda t, s: Eviction(t, 0.0), "yielded Eviction(task=1, server=0.0): the server is a"),
    ],
)  # fmt: skip
def test_a_malformed_eviction_is_refused_not_truncated(evict, says) -> None:  # type: ignore[no-untyped-def]
    """At 10 s task 1 runs on server 0: ``Eviction(1.5, 0)`` was read as ``int(1.5)``, task 1
    evicted without a word."""
    with pytest.raises(PlacementError, match="^" + re.escape(f"scheduler 'yields' {says} float")):
        _run(Yields(preempts=True, evict=evict))


@pytest.mark.parametrize("preempts", [False, True], ids=["main loop", "preempting loop"])
def test_numpy_integers_are_placements(preempts: bool) -> None:
    """``numpy.int64`` tasks and servers are integers: the same run as with Python ints."""
    plain = _run(Yields(preempts=preempts))
    numpy = _run(Yields(lambda t, s: (np.int64(t), np.int32(s)), preempts=preempts))
    assert plain.tasks["finish_s"].tolist() == [10.0, 30.0, 20.0]
    assert plain.tasks.keys() == numpy.tasks.keys()
    for column, values in plain.tasks.items():
        np.testing.assert_array_equal(numpy.tasks[column], values, err_msg=column)


@pytest.mark.parametrize("preempts", [False, True], ids=["main loop", "preempting loop"])
def test_an_error_of_the_schedulers_own_is_left_as_it_is(preempts: bool) -> None:
    """A ``TypeError`` raised inside ``decide()`` after well-formed placements is the
    scheduler's own: it reaches the caller as it was, not relabelled as a placement, with a note
    naming the run (pytest matches the message and the notes)."""
    with pytest.raises(TypeError) as info:
        _run(Yields(preempts=preempts, raises=TypeError("the scheduler's own")))
    assert str(info.value) == "the scheduler's own"
    assert info.value.__notes__ == [
        "fairsim: raised in the run of scheduler 'yields' at simulated time 0.0 s"
    ]


@pytest.mark.parametrize("wrapper", [QueueCounter, WaitingTasks])
@pytest.mark.parametrize(
    ("shape", "match"),
    [
        (lambda t, s: (t + 100, s), r"^scheduler 'yields' placed task 100, which is not waiting$"),
        (lambda t, s: t, r"^scheduler 'yields' yielded 0: expected a pair \(task, server\)$"),
    ],
)  # fmt: skip
def test_a_wrapped_scheduler_gets_the_engines_error(wrapper, shape, match) -> None:  # type: ignore[no-untyped-def]
    """The wrappers that count queued or waiting tasks pass what they cannot read on to the
    engine, which names it (before: a ``KeyError`` or a ``TypeError`` from the wrapper)."""
    with pytest.raises(PlacementError, match=match):
        _run(wrapper(Yields(shape)))
