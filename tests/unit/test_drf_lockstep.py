"""``drf-lockstep``, the UDRF paper's Section V DRF baseline, against online UDRF: a user's jobs
advance together (one instance each), jobs that need two machine classes at once, and oversized
bundles. The paper's Fig. 1 numbers are not recoverable (the text available to us lacks its figure);
the instances are constructed and the expected start times worked out in the comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers import complex_jobs, job_frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairsim.schedulers.drf_lockstep import DRFLockstep
from fairsim.schedulers.udrf_online import UDRF
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import ConstraintIndex, ConstraintModelSource
from fairsim.simulator.engine import Engine, EngineResult
from fairsim.simulator.jobs import JobGate, JobsTaskSource
from fairsim.simulator.workload import FrameTaskSource

RES = ("cpu", "mem")


def _run(
    sched, frame: pd.DataFrame, cap: list, classes: list[str], reps: dict[int, int] | None = None
) -> EngineResult:
    reps = reps or {}
    gate = JobGate(dag=False, job_sizes=frame.groupby("job_id").size().to_dict(), repetitions=reps)
    return Engine(
        ClusterState(np.array(cap, dtype=float), RES),
        sched,
        JobsTaskSource(FrameTaskSource(frame), repetitions=reps),
        constraints=ConstraintIndex(np.array(classes, dtype=object)),
        gate=gate,
    ).run()


def _starts(r: EngineResult) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for j, s in zip(r.tasks["job_id"].tolist(), r.tasks["start_s"].tolist(), strict=True):
        out.setdefault(j, []).append(s)
    return {j: sorted(v) for j, v in out.items()}


def test_a_users_jobs_advance_in_lock_step() -> None:
    """Section II-A / Section V: DRF gives u1 as many instances of job1 (hadoop) as of job2
    (standard), so half of hadoop stays idle; UDRF runs job1's instances on their own.

    H = one (4, 4) server, S = one (2, 2) server. u1: job 1 = one (1, 1) task on H, job 2 = one
    (1, 1) task on S, four simultaneous instances each, 10 s. drf-lockstep: bundles {1, 2} start
    at 0 twice, the third does not fit S, so the last two bundles start at 10 (H half idle
    meanwhile). udrf: job 1's four instances start at 0, job 2's two at 0 and two at 10."""
    frame = job_frame(
        [("u1", 1, 0.0, 1.0, 1.0, 10.0, "class=H"), ("u1", 2, 0.0, 1.0, 1.0, 10.0, "class=S")]
    )
    cap, classes, reps = [[4.0, 4.0], [2.0, 2.0]], ["H", "S"], {1: 4, 2: 4}
    lock = DRFLockstep(period_s=0)
    r = _run(lock, frame, cap, classes, reps)
    assert _starts(r) == {1: [0.0, 0.0, 10.0, 10.0], 2: [0.0, 0.0, 10.0, 10.0]}
    assert lock.bundles_ == 4
    u = _starts(_run(UDRF(period_s=0), frame, cap, classes, reps))
    assert u == {1: [0.0, 0.0, 0.0, 0.0], 2: [0.0, 0.0, 10.0, 10.0]}


def test_udrf_starts_a_job_that_needs_two_classes_at_once() -> None:
    """A job of two tasks spread by the ``pinned`` constraint model over two classes (like u2's
    task1 and task2, Section II-A) starts only when both classes have room, and whole.

    A and B = one (2, 2) server each. t=0: u3 fills B for 50 s. t=1: u2 submits the two-task
    job (one (1, 1) task pinned to each class), u1 two one-task (1, 1) jobs on A. udrf starts
    u2's job (u2 holds nothing and comes first) at 50 (both tasks) and keeps A for it meanwhile
    (Fig. 5, line 6), so u1's jobs start at 50 and 60; ``udrf-backfill`` and drf-lockstep start
    u1's jobs at 1 and u2's job at 50; task-level drf-classes starts u2's task on A at 1, where
    it holds half of A until its job can finish at 60."""
    job = job_frame([("u2", 20, 1.0, 1.0, 1.0, 10.0, None), ("u2", 20, 1.0, 1.0, 1.0, 10.0, None)])
    model = ConstraintModelSource(
        FrameTaskSource(job.drop(columns="constraint")),
        np.array(["A", "B"], dtype=object),
        share=1.0,
        n_classes=(2, 2),
        per="job",
        rng=np.random.default_rng(0),
    )
    rules = [r for b in model.batches() for r in b.constraint.tolist()]
    assert rules == ["class=A", "class=B"]  # the job needs both classes, one task each
    frame = job_frame(
        [
            ("u3", 30, 0.0, 2.0, 2.0, 50.0, "class=B"),
            *[("u2", 20, 1.0, 1.0, 1.0, 10.0, rule) for rule in rules],
            ("u1", 10, 1.0, 1.0, 1.0, 10.0, "class=A"),
            ("u1", 11, 1.0, 1.0, 1.0, 10.0, "class=A"),
        ]
    )
    cap, classes = [[2.0, 2.0], [2.0, 2.0]], ["A", "B"]
    want = {30: [0.0], 20: [50.0, 50.0], 10: [1.0], 11: [1.0]}
    for sched in (UDRF(period_s=0, blocked="backfill"), DRFLockstep(period_s=0)):
        r = _run(sched, frame, cap, classes)
        assert _starts(r) == want, sched.name
        assert sorted(r.tasks["server"][1:3].tolist()) == [0, 1]
    r = _run(UDRF(period_s=0), frame, cap, classes)
    assert _starts(r) == {30: [0.0], 20: [50.0, 50.0], 10: [50.0], 11: [60.0]}
    from fairsim.schedulers import make_scheduler

    task_level = _starts(_run(make_scheduler("drf-classes"), frame, cap, classes))
    # u2's task on A starts at 1 and u1's second job waits for u1's first (11)
    assert task_level == {30: [0.0], 20: [1.0, 50.0], 10: [1.0], 11: [11.0]}


def test_oversized_bundle_starts_its_jobs_in_order() -> None:
    """One (2, 2) server; u1's jobs 1 and 2 each have two (1, 1) tasks: each fits alone, the
    bundle of both never does, so job 1 starts whole at 0 and job 2 whole at 10."""
    frame = job_frame([("u1", j, 0.0, 1.0, 1.0, 10.0, None) for j in (1, 1, 2, 2)])
    lock = DRFLockstep(period_s=0)
    r = _run(lock, frame, [[2.0, 2.0]], ["A"])
    assert _starts(r) == {1: [0.0, 0.0], 2: [10.0, 10.0]}


def test_lowest_dominant_share_over_classes_is_served_first() -> None:
    """Key max_(m,k) A_u[m,k] / c[m,k]: u1 holds half of class S's CPU (share 1/2), u2 a
    quarter of H's (share 1/4), so when one slot of S frees, u2's waiting job gets it.

    S = (2, 2), H = (4, 4). t=0: u1 one (1, 1) task on S (100 s) and u2 one (1, 1) task on H
    (100 s); t=1: u1 and u2 each submit a (1, 1) job on S, then u3 fills the last S slot at 0."""
    frame = job_frame(
        [
            ("u1", 1, 0.0, 1.0, 1.0, 100.0, "class=S"),
            ("u2", 2, 0.0, 1.0, 1.0, 100.0, "class=H"),
            ("u3", 3, 0.0, 1.0, 1.0, 5.0, "class=S"),
            ("u1", 4, 1.0, 1.0, 1.0, 10.0, "class=S"),
            ("u2", 5, 1.0, 1.0, 1.0, 10.0, "class=S"),
        ]
    )
    r = _run(DRFLockstep(period_s=0), frame, [[2.0, 2.0], [4.0, 4.0]], ["S", "H"])
    # at 5 u3 leaves S: u2 (1/4) before u1 (1/2); u1's job waits for u2's to end at 15
    assert _starts(r) == {1: [0.0], 2: [0.0], 3: [0.0], 4: [15.0], 5: [5.0]}


class _NoWitness(DRFLockstep):
    """The reference: every try builds and fits the bundle (no witness shortcut)."""

    def _try(self, user: int) -> list[tuple[int, int]]:
        self._wit.clear()
        return super()._try(user)


class _Counting(DRFLockstep):
    """Counts the tries that the witness settled (no bundle built)."""

    def bind(self, cluster) -> None:
        super().bind(cluster)
        self.tries = self.built = 0

    def _try(self, user: int) -> list[tuple[int, int]]:
        self.tries += 1
        return super()._try(user)

    def _bundle(self, user: int):
        self.built += 1
        return super()._bundle(user)


def test_witness_settles_a_blocked_bundle_until_its_room_grows() -> None:
    """A = B = one (2, 2) server. u1 fills A for 100 s, u3 holds B from 0 to 5. At 1, u2's job
    needs a (1, 1) task on A and one on B: its A kind fits nowhere, so that is the witness. The
    completion on B at 5 readies u2, and the witness settles that try without building the
    bundle (A's room did not grow). The completion on A at 100 lifts it: u2 starts at 100."""
    frame = job_frame(
        [
            ("u1", 1, 0.0, 2.0, 2.0, 100.0, "class=A"),
            ("u3", 3, 0.0, 1.0, 1.0, 5.0, "class=B"),
            ("u2", 2, 1.0, 1.0, 1.0, 10.0, "class=A"),
            ("u2", 2, 1.0, 1.0, 1.0, 10.0, "class=B"),
        ]
    )
    lock = _Counting(period_s=0)
    r = _run(lock, frame, [[2.0, 2.0], [2.0, 2.0]], ["A", "B"])
    assert _starts(r) == {1: [0.0], 3: [0.0], 2: [100.0, 100.0]}
    # u1 and u3 at 0, u2 at 1 (blocked), 5 (settled) and 100 (started)
    assert (lock.tries, lock.built) == (5, 4)


def test_witness_counts_the_room_a_completion_adds() -> None:
    """One (4, 4) server. u1's three (1, 1) tasks run 0-5, 0-50 and 0-100; at 1 u2 needs three
    (1, 1) tasks and the server holds one: it lacks 2. The completion at 5 adds 1 (settled, no
    search); the one at 50 adds another, so the bundle is fitted again and starts at 50."""
    frame = job_frame(
        [("u1", 1, 0.0, 1.0, 1.0, run, None) for run in (5.0, 50.0, 100.0)]
        + [("u2", 2, 1.0, 1.0, 1.0, 10.0, None)] * 3
    )
    lock = _Counting(period_s=0)
    r = _run(lock, frame, [[4.0, 4.0]], ["A"])
    assert _starts(r) == {1: [0.0, 0.0, 0.0], 2: [50.0, 50.0, 50.0]}
    # u1 at 0, u2 at 1 (blocked: lacks 2), 5 (settled) and 50 (fitted, started)
    assert (lock.tries, lock.built) == (4, 3)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=complex_jobs(), queue=st.sampled_from([None, 2]), period=st.sampled_from([0.0, 1.0]))
def test_witness_makes_the_decisions_of_a_full_try(data, queue, period) -> None:
    """The witness shortcut (a blocked bundle whose kind fits nowhere alone stays blocked while
    neither the bundle nor the free room on that kind's classes grows) changes no decision: the
    same servers and start times as building and fitting the bundle at every try."""
    cap, classes, frame, reps = data
    sizes = frame.groupby("job_id").size().to_dict()
    out = []
    for cls in (DRFLockstep, _NoWitness):
        gate = JobGate(dag=False, job_sizes=sizes, repetitions=reps, queue_jobs=queue)
        r = Engine(
            ClusterState(np.asarray(cap, dtype=float), RES),
            cls(period_s=period),
            JobsTaskSource(FrameTaskSource(frame), repetitions=reps),
            constraints=ConstraintIndex(np.array(classes, dtype=object)),
            gate=gate,
        ).run()
        out.append((r.tasks["server"].tolist(), r.tasks["start_s"].tolist()))
    assert out[0] == out[1]
