"""Dynamic DRF (Fikioris, Agarwal and Tardos, arXiv 2109.12401) and its incentives: the discrete
mechanism of their model on an exact instance where misreporting pays, and fairsim's online
``dynamic-drf`` against it.

The paper's own example of the near-tight 3/2 bound could not be read here (only its abstract
was available to us), so the instance below is built from the abstract's definition of the
mechanism: in every period, allocate (up to each user's reported demand, the whole capacity
when the demands exceed it) so that the users' *totals* since the first period are as max-min
fair as possible, given the earlier periods' allocations. A user's utility is what it receives
up to its true demand, summed over the periods.
"""

from __future__ import annotations

from fractions import Fraction as Fr
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd

from fairsim.scenario.config import parse_config
from fairsim.scenario.strategy import run_manipulated
from fairsim.traces.io import write_tasks


def fill(history: list[Fr], demand: list[Fr], capacity: Fr = Fr(1)) -> list[Fr]:
    """One period of the discrete mechanism: water-filling on the totals ``history_i + a_i``
    with ``0 <= a_i <= demand_i`` and ``sum a_i = min(capacity, sum demand)`` (exact)."""
    n = len(history)
    if sum(demand) <= capacity:
        return list(demand)

    def total(level: Fr) -> Fr:
        return sum((min(max(level - history[i], Fr(0)), demand[i]) for i in range(n)), Fr(0))

    points = sorted({*history, *(history[i] + demand[i] for i in range(n))})
    for lo, hi in pairwise(points):
        if total(lo) <= capacity <= total(hi):
            level = lo + (capacity - total(lo)) * (hi - lo) / (total(hi) - total(lo))
            return [min(max(level - history[i], Fr(0)), demand[i]) for i in range(n)]
    raise AssertionError("unreachable: the total is continuous and grows to sum(demand)")


def dynamic_mmf(reports: list[list[Fr]]) -> list[list[Fr]]:
    """The allocations of every period (rows) to every user (columns)."""
    history = [Fr(0)] * len(reports[0])
    out = []
    for demand in reports:
        a = fill(history, demand)
        out.append(a)
        history = [h + x for h, x in zip(history, a, strict=True)]
    return out


def utility(alloc: list[list[Fr]], truth: list[list[Fr]], user: int) -> Fr:
    return sum((min(a[user], d[user]) for a, d in zip(alloc, truth, strict=True)), Fr(0))


#: Periods (rows) x users M, B, C (columns); capacity 1 per period.
TRUTH = [
    [Fr(1), Fr(0), Fr(1)],
    [Fr(1), Fr(1), Fr(0)],
    [Fr(1), Fr(1, 4), Fr(1)],
]


def test_misreporting_pays_under_dynamic_max_min_fairness() -> None:
    """M hides its first-period demand (reports 0): C takes the whole first period, so in the
    second M meets B with equal histories (1/2 each instead of 1/4) and in the third M's history
    (1/2) is below C's (1): M receives 0 + 1/2 + 5/8 = 9/8 instead of 1/2 + 1/4 + 1/4 = 1.

    A gain of 9/8, within the paper's 3/2 bound for the adversarial single-resource setting; an
    exhaustive search of 3 users x 3 periods on a grid of quarters finds none larger, and a
    random search over 5 x 5 reaches 1.2 (numbers of this test's author, not of the paper)."""
    truthful = dynamic_mmf(TRUTH)
    assert truthful == [
        [Fr(1, 2), Fr(0), Fr(1, 2)],
        [Fr(1, 4), Fr(3, 4), Fr(0)],
        [Fr(1, 4), Fr(1, 4), Fr(1, 2)],
    ]
    lie = [[Fr(0), Fr(0), Fr(1)], TRUTH[1], TRUTH[2]]
    manipulated = dynamic_mmf(lie)
    assert manipulated == [
        [Fr(0), Fr(0), Fr(1)],
        [Fr(1, 2), Fr(1, 2), Fr(0)],
        [Fr(5, 8), Fr(1, 4), Fr(1, 8)],
    ]
    gain = utility(manipulated, TRUTH, 0) / utility(truthful, TRUTH, 0)
    assert gain == Fr(9, 8)
    assert 1 < gain <= Fr(3, 2)


def test_no_single_report_beats_nine_eighths_on_the_instance() -> None:
    """Every report of M on a grid of eighths in each period: the best gain is 9/8 (hiding the
    first period), never more than the 3/2 bound, and truthful reporting is not the best."""
    grid = [Fr(k, 8) for k in range(9)]
    base = utility(dynamic_mmf(TRUTH), TRUTH, 0)
    best = max(
        utility(dynamic_mmf([[a, *TRUTH[0][1:]], [b, *TRUTH[1][1:]], [c, *TRUTH[2][1:]]]), TRUTH, 0)
        for a in grid
        for b in grid
        for c in grid
    )
    assert best / base == Fr(9, 8)


def _run(tmp_path: Path, scheduler: str) -> dict[str, int]:
    """Period 1 (t = 0): M and C, 4 tasks each; period 2 (t = 100 s): M and B, 8 tasks each;
    every task (1 cpu, 1 mem) lasts one period (100 s) on one server of 8 x 8. Tasks completed
    by 250 s (the first two periods' placements) per user."""
    rows = [(1, "M", 0.0), (2, "C", 0.0)] * 4 + [(3, "M", 100.0), (4, "B", 100.0)] * 8
    frame = pd.DataFrame(rows, columns=["job_id", "user", "submit_s"])
    frame = frame.sort_values("submit_s", kind="stable", ignore_index=True)
    frame = frame.assign(cpu=1.0, mem=1.0, run_s=100.0, end_state="finished", attempts=1)
    frame = frame.assign(instances=1, constraint=None, parents=None)
    frame["task_index"] = frame.groupby("job_id").cumcount().astype(np.int32)
    write_tasks(frame, tmp_path / "tasks.parquet")
    sched = {"name": "dynamic-drf", "period_s": 100.0} if scheduler == "dynamic-drf" else scheduler
    cfg = parse_config(
        {
            "name": "dynamic-drf-hand",
            "trace": {"format": "canonical", "path": str(tmp_path / "tasks.parquet")},
            "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [8.0, 8.0]}]},
            "schedulers": [sched],
            "collect": {"utilization_interval_s": 50, "horizon_s": 250},
        }
    )
    run_manipulated(cfg, None, tmp_path / scheduler)
    (label,) = cfg.scheduler_labels()
    tasks = pd.read_parquet(tmp_path / scheduler / label / "tasks.parquet")
    done = tasks[tasks["ended"] == "finished"]
    return {str(k): int(v) for k, v in done.groupby("user").size().items()}


def test_dynamic_drf_counts_history_where_drf_does_not(tmp_path: Path) -> None:
    """The second period of the instance above, online: M held half the server for the first
    period (history 1/2), B none. The mechanism gives B 3/4 of the period and M 1/4 (the
    water-filling above: 6 and 2 of 8 unit tasks); DRF, without history, 4 and 4."""
    assert _run(tmp_path, "dynamic-drf") == {"B": 6, "C": 4, "M": 4 + 2}
    assert _run(tmp_path, "drf") == {"B": 4, "C": 4, "M": 4 + 4}
    assert fill([Fr(1, 2), Fr(0)], [Fr(1), Fr(1)]) == [Fr(1, 4), Fr(3, 4)]
