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
from itertools import pairwise, product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

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


def utilities(truth: list[list[Fr]], liar: list[Fr]) -> tuple[Fr, Fr]:
    """User 0's utility truthful and when it reports ``liar`` (one value per period) while the
    others report their true demands."""
    reports = [[r, *row[1:]] for r, row in zip(liar, truth, strict=True)]
    return utility(dynamic_mmf(truth), truth, 0), utility(dynamic_mmf(reports), truth, 0)


def threshold_instance(k: int) -> tuple[list[list[Fr]], list[Fr]]:
    """An instance where hiding one period's demand gains (4k + 4) / (3k + 4), and the lie.

    Users M (the liar), C and B_1..B_k (columns); k + 2 periods (rows) of capacity 1, k >= 2:

    - k - 1 full periods give C the history c = k/(k + 2) and each B_j the history
      h = (k + 1)/(k + 2) - 1/k; M demands nothing in them.
    - M and C demand 1. Truthful, M receives (1 + c)/2 (both end at t = (1 + c)/2); hiding
      (reporting 0), M receives nothing and C the whole period.
    - M and every B_j demand 1: the B_j absorb the whole period below level t, so truthful M
      (history t) receives nothing, while hiding M (history 0) receives m = k t/(k + 1) = c.
    - M and C demand 1: truthful M receives 1/2 (equal histories); hiding M (history c against
      C's 1 + c) receives the whole period.

    Truthful utility 1 + c/2, misreporting 1 + c: the gain 1 + c/(2 + c) = (4k + 4)/(3k + 4)
    grows to 4/3 as k grows (c -> 1). Found by generalising the 4-user instance (k = 2, gain
    6/5) that a hill-climbing search over 4 users x 4 periods returned.
    """
    c = Fr(k, k + 2)
    h = Fr(k + 1, k + 2) - Fr(1, k)
    zero, one = Fr(0), Fr(1)
    pre = [[zero, c / (k - 1)] + [h / (k - 1)] * k for _ in range(k - 1)]
    truth = [
        *pre,
        [one, one] + [zero] * k,
        [one, zero] + [one] * k,
        [one, one] + [zero] * k,
    ]
    liar = [row[0] for row in truth]
    liar[k - 1] = zero
    return truth, liar


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
    exhaustive search of 3 users x 3 periods on a grid of quarters finds none larger (numbers of
    this test's author, not of the paper); larger instances gain more (below)."""
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


def test_hiding_against_a_threshold_gains_six_fifths() -> None:
    """The 4-user, 4-period instance (``threshold_instance(2)``): the largest gain a search of
    up to 4 users x 4 periods found (hill climbing on float demands and reports, rationalised).
    M hides its demand in the period it shares with C. In the next one B_1 and B_2 (histories
    1/4) take the whole period up to truthful M's history (3/4) but share it with hiding M
    (history 0), and in the last C's larger history leaves hiding M the whole period:
    0 + 1/2 + 1 = 3/2 instead of 3/4 + 0 + 1/2 = 5/4."""
    truth, liar = threshold_instance(2)
    q = Fr(1, 4)
    assert truth == [
        [Fr(0), Fr(1, 2), q, q],
        [Fr(1), Fr(1), Fr(0), Fr(0)],
        [Fr(1), Fr(0), Fr(1), Fr(1)],
        [Fr(1), Fr(1), Fr(0), Fr(0)],
    ]
    assert liar == [Fr(0), Fr(0), Fr(1), Fr(1)]
    assert dynamic_mmf(truth)[1:] == [
        [Fr(3, 4), Fr(1, 4), Fr(0), Fr(0)],
        [Fr(0), Fr(0), Fr(1, 2), Fr(1, 2)],
        [Fr(1, 2), Fr(1, 2), Fr(0), Fr(0)],
    ]
    reports = [[r, *row[1:]] for r, row in zip(liar, truth, strict=True)]
    assert dynamic_mmf(reports)[1:] == [
        [Fr(0), Fr(1), Fr(0), Fr(0)],
        [Fr(1, 2), Fr(0), q, q],
        [Fr(1), Fr(0), Fr(0), Fr(0)],
    ]
    honest, lying = utilities(truth, liar)
    assert (honest, lying) == (Fr(5, 4), Fr(3, 2))
    assert Fr(9, 8) < lying / honest == Fr(6, 5) <= Fr(3, 2)


@pytest.mark.parametrize(
    ("k", "gain"),
    [
        (2, Fr(6, 5)),
        (3, Fr(16, 13)),
        (4, Fr(5, 4)),
        (8, Fr(9, 7)),
        (16, Fr(17, 13)),
        (32, Fr(33, 25)),
    ],
)
def test_threshold_family_gain_tends_to_four_thirds(k: int, gain: Fr) -> None:
    """k + 2 users, k + 2 periods: truthful 1 + c/2, lying 1 + c with c = k/(k + 2); the gain
    (4k + 4)/(3k + 4) stays below 4/3, short of the paper's sqrt(2) lower bound."""
    truth, liar = threshold_instance(k)
    c = Fr(k, k + 2)
    honest, lying = utilities(truth, liar)
    assert (honest, lying) == (1 + c / 2, 1 + c)
    assert lying / honest == gain == Fr(4 * k + 4, 3 * k + 4) < Fr(4, 3)


#: The best 5-user instance found: 5 periods, demands in 120ths (M first), and M's reports.
FIVE_TRUTH = [
    [0, 59, 0, 25, 103],
    [88, 0, 0, 0, 120],
    [110, 74, 94, 0, 49],
    [97, 15, 15, 112, 0],
    [102, 0, 9, 29, 102],
]
FIVE_LIE = [0, 0, 112, 119, 83]


def test_five_user_instance_gains_1148_909() -> None:
    """A hill-climbing search over 5 users x 5 periods (floats, then steps of 1/120 from the
    best point) found this instance. M hides its demand in period 2, which it shares with the
    last user (truthful split 67/96 and 29/96; hiding, the last user takes the whole period),
    over-reports in periods 3 and 4 (112/120 for 110/120, 119/120 for 97/120), where truthful M
    receives 0 and 25/192 (users 2-4 fill up to its history) and hiding M 67/144 and 71/288,
    and under-reports in period 5 (83/120 for 102/120). It receives 2009/1440 instead of
    707/640, a gain of 1148/909 = 1.2629: above the family's 5/4 for k = 4 (6 users), with 5
    users. In floats the search reached 1.26315, close to 24/19, the family's gain for k = 5
    (7 users)."""
    truth = [[Fr(x, 120) for x in row] for row in FIVE_TRUTH]
    liar = [Fr(x, 120) for x in FIVE_LIE]
    honest, lying = utilities(truth, liar)
    assert (honest, lying) == (Fr(707, 640), Fr(2009, 1440))
    assert lying / honest == Fr(1148, 909)
    assert Fr(5, 4) < lying / honest < Fr(24, 19) < Fr(4, 3)
    check_gain_at_most((truth, liar), Fr(3, 2))


GRID = [Fr(j, 8) for j in range(9)]


@st.composite
def misreports(draw: st.DrawFn) -> tuple[list[list[Fr]], list[Fr]]:
    """2-4 users, 2-4 periods, true demands and the liar's (user 0's) reports in eighths; half
    the demands are 0 or 1 and the liar reports the truth, 0 or any eighth in each period (the
    gains above come from such instances)."""
    users = draw(st.integers(2, 4))
    periods = draw(st.integers(2, 4))
    cell = st.one_of(st.sampled_from([Fr(0), Fr(1)]), st.sampled_from(GRID))
    truth = draw(
        st.lists(st.lists(cell, min_size=users, max_size=users), min_size=periods, max_size=periods)
    )
    liar = [draw(st.sampled_from([row[0], Fr(0)]) | st.sampled_from(GRID)) for row in truth]
    return truth, liar


def check_gain_at_most(case: tuple[list[list[Fr]], list[Fr]], bound: Fr) -> None:
    """The drawn report, and every report of 0, the truth or 1 in each period, give the liar
    at most ``bound`` times its truthful utility."""
    truth, drawn = case
    honest = utility(dynamic_mmf(truth), truth, 0)
    for liar in [drawn, *product(*({Fr(0), row[0], Fr(1)} for row in truth))]:
        lying = utilities(truth, list(liar))[1]
        assert lying <= bound * honest, (truth, liar, honest, lying)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(misreports())
@example(([row[:] for row in TRUTH], [Fr(0), Fr(1), Fr(1)]))
@example(threshold_instance(2))
def test_no_misreport_gains_more_than_three_halves(case: tuple[list[list[Fr]], list[Fr]]) -> None:
    """The paper's upper bound (adversarial single resource, 3/2-incentive compatibility) on
    random small instances, for the drawn report and every report of 0, the truth or 1 in each
    period; the two explicit examples gain 9/8 and 6/5."""
    check_gain_at_most(case, Fr(3, 2))


def test_the_bound_check_fails_below_the_gains_found() -> None:
    """The property above can fail: a bound of 1 (incentive compatibility) or of 6/5 minus a
    little is broken by the 4-user instance, while no report of 0, the truth or 1 per period
    beats 6/5 on it. (With a bound of 1, the random instances alone found a violation in 2 of 3
    runs of 100 examples.)"""
    for bound in (Fr(1), Fr(6, 5) - Fr(1, 1000)):
        with pytest.raises(AssertionError):
            check_gain_at_most(threshold_instance(2), bound)
    check_gain_at_most(threshold_instance(2), Fr(6, 5))


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
