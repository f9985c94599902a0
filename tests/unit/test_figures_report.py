"""Figures and report of the DRFH reproduction on a tiny hand-built results directory."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fairsim.experiments.drfh import claims as drfh_claims
from fairsim.experiments.drfh import estimates, figures
from fairsim.experiments.drfh import numbers as drfh_numbers
from fairsim.experiments.drfh import paper as paper
from fairsim.experiments.drfh import report as report
from fairsim.scenario.reporting.fairness_panel import read_fairness

USERS = ["u1", "u2", "u3", "u4"]

# Per-scheduler mean utilisation written into summary.json (slots-20 has none: parquet fallback).
UTIL = {
    "slots-10": (0.30, 0.20),
    "slots-14": (0.45, 0.29),
    "slots-20": (0.42, 0.18),
    "ff-drfh": (0.60, 0.50),
    "bf-drfh": (0.65, 0.55),
}

# (job_id, user, n_tasks, jct under bf-drfh, jct under slots-14); None = not finished.
JOBS = [
    (1, "u1", 5, 100.0, 100.0),
    (2, "u2", 20, 300.0, 300.0),
    (3, "u3", 30, 50.0, None),  # finished under bf-drfh only: excluded from Fig. 6
    (4, "u1", 60, 50.0, 100.0),
    (5, "u2", 1200, 250.0, 1000.0),
    (6, "u4", 400, None, 900.0),  # finished under slots only: excluded
]

# Per-user (tasks_submitted, tasks_completed) under bf-drfh, slots-14, dedicated.
COMPLETION = {
    "bf-drfh": {"u1": (10, 10), "u2": (100, 50), "u3": (10, 10), "u4": (10, 8)},
    "slots-14": {"u1": (10, 10), "u2": (100, 40), "u3": (10, 9), "u4": (10, 9)},
    "dedicated": {"u1": (10, 10), "u2": (100, 50), "u3": (10, 9), "u4": (10, 9)},
}


def _users_frame(spec: dict[str, tuple[int, int]]) -> pd.DataFrame:
    rows = [
        {"user": u, "tasks_submitted": s, "tasks_completed": c, "completion_ratio": c / s}
        for u, (s, c) in spec.items()
    ]
    return pd.DataFrame(rows).astype({"tasks_submitted": "int64", "tasks_completed": "int64"})


def _jobs_frame(col: int) -> pd.DataFrame:
    rows = []
    for job_id, user, n, *jcts in JOBS:
        jct = jcts[col]
        submit = 10.0 * job_id
        rows.append(
            {
                "job_id": job_id,
                "user": user,
                "n_tasks": n,
                "submit_s": submit,
                "finish_s": None if jct is None else submit + jct,
                "completion_time_s": jct,
            }
        )
    return pd.DataFrame(rows).astype(
        {
            "job_id": "int64",
            "n_tasks": "int64",
            "finish_s": "float64",
            "completion_time_s": "float64",
        }
    )


def _tasks_frame() -> pd.DataFrame:
    rows = []
    for job_id, user, _n, jct, _ in JOBS:
        for i in range(2):
            rows.append(
                {
                    "job_id": job_id,
                    "task_index": i,
                    "user": user,
                    "submit_s": 10.0 * job_id,
                    "start_s": 10.0 * job_id,
                    "finish_s": None if jct is None else 10.0 * job_id + 1,
                    "server": i,
                    "cpu": 0.1,
                    "mem": 0.2,
                }
            )
    return pd.DataFrame(rows).astype(
        {
            "job_id": "int64",
            "task_index": "int32",
            "start_s": "float64",
            "finish_s": "float64",
            "server": "Int32",
        }
    )


def _fig4_shares() -> pd.DataFrame:
    """Constant shares per phase, plus a transient spike that the middle-60 % rule must skip."""
    t = np.arange(0.0, 1500.0, 5.0)
    rows = []
    for time_s in t:
        if time_s < 200:
            s = {"user 1": (0.40, 0.62), "user 2": (0, 0), "user 3": (0, 0)}
        elif time_s < 500:
            u2 = (0.9, 0.1) if time_s == 205 else (0.44, 0.09)  # transient at 205 s
            s = {"user 1": (0.29, 0.44), "user 2": u2, "user 3": (0, 0)}
        elif time_s < 1080:
            s = {"user 1": (0.17, 0.26), "user 2": (0.26, 0.05), "user 3": (0.09, 0.26)}
        else:
            s = {"user 1": (0, 0), "user 2": (0.40, 0.08), "user 3": (0.13, 0.40)}
        for user, (cpu, mem) in s.items():
            rows.append(
                {
                    "time_s": time_s,
                    "user": user,
                    "cpu": float(cpu),
                    "mem": float(mem),
                    "dominant": float(max(cpu, mem)),
                }
            )
    return pd.DataFrame(rows)


#: Fig. 4's fairness run: phase windows (joins at 0, 200, 500 s; user 1 departs at 1,000 s; the
#: last task ends at 1,500 s) and, per phase, the settled largest deficit and Jain's index; a
#: transient of 0.4 follows every join (left out: tasks run 50 s).
FIG4_RUN = {
    "user 1 alone": (0.0, 200.0, 0.004, 1.0),
    "users 1+2": (200.0, 500.0, 0.006, 0.99),
    "users 1-3": (500.0, 1000.0, 0.008, 0.98),
    "after user 1 departs": (1000.0, 1500.0, 0.002, 1.0),
}
FIG4_USERS = {"user 1": (0.2, 0.3), "user 2": (0.5, 0.1), "user 3": (0.1, 0.3)}


def _write_fig4_fairness(run: Path) -> None:
    """tasks.parquet, fairness.parquet and fairness_summary.parquet of a Fig. 4 run (every 50 s)."""
    tasks = pd.DataFrame(
        {
            "user": ["user 1", "user 1", "user 2", "user 2", "user 3", "user 3"],
            "submit_s": [0.0, 0.0, 200.0, 200.0, 500.0, 500.0],
            "start_s": [0.0, 950.0, 200.0, 1450.0, 500.0, 1150.0],
            "finish_s": [50.0, 1000.0, 250.0, 1500.0, 550.0, 1200.0],
        }
    )
    tasks.to_parquet(run / "tasks.parquet")
    summary, rows = [], []
    for t in np.arange(0.0, 1501.0, 50.0):
        phase = next(p for p, v in FIG4_RUN.items() if v[0] <= t < v[1] or t == v[1] == 1500.0)
        t0, _, deficit, jain = FIG4_RUN[phase]
        active = {
            "user 1 alone": ["user 1"],
            "users 1+2": ["user 1", "user 2"],
            "users 1-3": ["user 1", "user 2", "user 3"],
            "after user 1 departs": ["user 2", "user 3"],
        }[phase]
        d = 0.4 if t == t0 and t > 0 else deficit
        summary.append((t, len(active), jain, d))
        for u in active:
            cpu, mem = FIG4_USERS[u]
            rows.append((t, u, cpu, mem, 0.3, 0.3 + (d if u == active[0] else 0.0)))
    pd.DataFrame(summary, columns=["time_s", "active_users", "jain_index", "max_deficit"]).assign(
        l1_distance=0.01, si_violations=0, envious_pairs=0
    ).to_parquet(run / "fairness_summary.parquet")
    pd.DataFrame(
        rows,
        columns=[
            "time_s",
            "user",
            "demand_cpu",
            "demand_mem",
            "dominant_share",
            "reference_dominant_share",
        ],
    ).to_parquet(run / "fairness.parquet")


#: The Google fairness runs (step 5): time averages per scheduler.
FAIRNESS_AVG = {
    "slots-16": {"max_deficit": 0.005, "jain_entitlement": 0.7, "jain_index": 0.6},
    "ff-drfh": {"max_deficit": 0.004, "jain_entitlement": 0.95, "jain_index": 0.5},
    "bf-drfh": {"max_deficit": 0.003, "jain_entitlement": 0.9, "jain_index": 0.4},
}


def _write_fairness_runs(root: Path) -> None:
    """``root/fairness/<scheduler>/`` of the three schedulers; their tasks.parquet are the main
    runs' (slots-16 has no main run here)."""
    for s, avg in FAIRNESS_AVG.items():
        d = root / drfh_numbers.FAIRNESS_DIR / s
        d.mkdir(parents=True)
        t = np.arange(600.0, 3601.0, 600.0)
        pd.DataFrame(
            {
                "time_s": t,
                "active_users": 10,
                "jain_index": avg["jain_index"],
                "max_deficit": avg["max_deficit"],
            }
        ).to_parquet(d / "fairness_summary.parquet")
        # two users per instant: reference shares 0.1 and 0.3 (Jain's index 0.8); the second
        # (1 task running, 40 waiting) has the largest deficit
        pd.DataFrame(
            {
                "time_s": np.repeat(t, 2),
                "user": ["a", "b"] * len(t),
                "tasks_running": [5, 1] * len(t),
                "tasks_waiting": [0, 40] * len(t),
                "reference_dominant_share": [0.1, 0.3] * len(t),
                "deficit": [0.0, avg["max_deficit"]] * len(t),
            }
        ).to_parquet(d / "fairness.parquet")
        fairness = {
            "interval_s": 600.0,
            "reference": "drfh",
            "instants": len(t),
            "time_average": {**avg, "l1_distance": 0.1, "active_users": 10.0},
            "solve_s": 1.0,
        }
        (d / "summary.json").write_text(json.dumps({"wall_s": 3.0, "fairness": fairness}))
        main = root / s / "tasks.parquet"
        (d / "tasks.parquet").write_bytes(
            main.read_bytes() if main.exists() else b"no main run of slots-16"
        )


def _write_seed(root: Path, shift: float) -> Path:
    """One seed's folder; ``shift`` is added to every scheduler's utilisation."""
    root.mkdir(parents=True)
    cfg = {
        "name": "drfh-google",
        "trace": {
            "format": "google-2011",
            "path": "../shared/traces/google-2011",
            "start_s": 0,
            "end_s": 3600,
        },
        "cluster": {"servers": 4, "source": "table-i", "seed": 7},
        "schedulers": list(UTIL),
    }
    (root / "config.yaml").write_text(yaml.safe_dump(cfg))
    pd.DataFrame(
        {"server": [0, 1, 2, 3], "cpu": [1.0, 0.5, 0.5, 0.25], "mem": [1.0, 0.5, 0.25, 0.25]}
    ).to_parquet(root / "servers.parquet")
    t = np.arange(0.0, 3600.0 + 1, 60.0)
    for i, (sched, (cpu, mem)) in enumerate(UTIL.items()):
        cpu, mem = cpu + shift, mem + shift
        d = root / sched
        d.mkdir()
        # Utilisation alternates +-0.01 around the mean, so the series mean is exact.
        wiggle = np.where(np.arange(len(t)) % 2 == 0, 0.01, -0.01)
        wiggle[-1] = 0.0 if len(t) % 2 else wiggle[-1]
        pd.DataFrame({"time_s": t, "cpu": cpu + wiggle, "mem": mem + wiggle}).to_parquet(
            d / "utilization.parquet"
        )
        summary = {
            "scheduler": sched,
            "tasks": 130,
            "tasks_completed": 100 + i,
            "completion_ratio": (100 + i) / 130,
            "jobs_completed": 4,
            "wall_s": 1.5 + i,
            "tasks_per_s": 1000.0 * (i + 1),
            "seed": 7,
            "config_hash": "abc123",
        }
        if sched != "slots-20":
            summary["mean_utilization"] = {"cpu": cpu, "mem": mem}
        (d / "summary.json").write_text(json.dumps(summary))
        _tasks_frame().to_parquet(d / "tasks.parquet")
        _jobs_frame(0 if sched in {"bf-drfh", "ff-drfh"} else 1).to_parquet(d / "jobs.parquet")
        users = COMPLETION.get(sched, COMPLETION["slots-14"])
        _users_frame(users).to_parquet(d / "users.parquet")
    (root / "dedicated").mkdir()
    _users_frame(COMPLETION["dedicated"]).to_parquet(root / "dedicated" / "users.parquet")
    fig4 = root / "fig4" / "bf-drfh"
    fig4.mkdir(parents=True)
    _fig4_shares().to_parquet(fig4 / "user_shares.parquet")
    _write_fig4_fairness(fig4)
    pd.DataFrame({"server": ["s0"], "cpu": [1.0], "mem": [1.0]}).to_parquet(
        root / "fig4" / "servers.parquet"
    )
    _write_fairness_runs(root)
    (fig4 / "summary.json").write_text(
        json.dumps(
            {
                "scheduler": "bf-drfh",
                "tasks": 900,
                "tasks_completed": 900,
                "wall_s": 0.2,
                "tasks_per_s": 4500.0,
            }
        )
    )
    return root


#: The production context (step 6): mean CPU and memory by requests per schedule; the trace's
#: own schedule under both readings of its requests (recorded-first: each task's first request,
#: recorded: each run's SCHEDULE request).
PRODUCTION = {
    "recorded-first": (1.05, 0.90),
    "bf-drfh": (0.96, 0.81),
    "ff-drfh": (0.92, 0.77),
    "slots-16": (0.49, 0.38),
    "recorded": (1.15, 0.95),
}
#: Over-committed machines (CPU, memory) at 0, 60 and 120 s, and the CPU amount above capacity.
OVER = {
    "recorded-first": ([1, 3, 2], [0, 0, 0], [0.01, 0.06, 0.05]),
    "recorded": ([4, 6, 5], [0, 1, 1], [0.02, 0.09, 0.08]),
}


def _write_production(root: Path) -> None:
    """``root/production/<scheduler>/`` of the five runs on a 10-server pool; jobs 1 and 2
    finish under all of them (JCTs 100 + 10 i and 300 s), job 3 not under Slots-16."""
    for i, (s, (cpu, mem)) in enumerate(PRODUCTION.items()):
        d = root / drfh_numbers.PRODUCTION_DIR / s
        d.mkdir(parents=True)
        t = np.array([0.0, 60.0, 120.0])
        util = {"time_s": t, "cpu": [cpu - 0.01, cpu + 0.01, cpu], "mem": [mem, mem, mem]}
        if s in OVER:
            n_cpu, n_mem, amount = OVER[s]
            util |= {
                "overcommitted_cpu": n_cpu,
                "overcommitted_mem": n_mem,
                "overcommit_cpu": amount,
                "overcommit_mem": [0.0, 0.001, 0.0],
            }
        pd.DataFrame(util).to_parquet(d / "utilization.parquet")
        pd.DataFrame({"user": ["a", "b"], "completion_ratio": [1.0, 0.5 - 0.1 * i]}).to_parquet(
            d / "users.parquet"
        )
        pd.DataFrame(
            {
                "job_id": [1, 2, 3],
                "completion_time_s": [100.0 + 10 * i, 300.0, math.nan if i == 3 else 50.0],
            }
        ).to_parquet(d / "jobs.parquet")
        summary = {
            "scheduler": s,
            "servers": 10,
            "tasks": 200,
            "tasks_completed": 180 - 20 * i,
            "horizon_s": 120.0,
            "mean_utilization": {"cpu": cpu, "mem": mem},
            "fairness": {
                "time_average": {
                    "jain_entitlement": 0.9 - 0.1 * i,
                    "jain_index": 0.5 + 0.1 * i,
                    "max_deficit": 0.01 * i,
                }
            },
        }
        if s in OVER:
            summary["overcommit"] = {
                "cpu": {"mean_amount": 0.04 + 0.01 * i},
                "mem": {"mean_amount": 0.0005},
            }
        (d / "summary.json").write_text(json.dumps(summary))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A reproduction's folder with two seeds (seed 2's utilisation is 0.2 pp higher) and the
    production context."""
    root = tmp_path / "drfh-google"
    _write_seed(root / "seed-1", 0.0)
    _write_seed(root / "seed-2", 0.002)
    _write_production(root)
    return root


@pytest.fixture
def results(out: Path) -> Path:
    """Seed 1's folder."""
    return out / "seed-1"


def test_table_ii_reads_summaries_and_falls_back_to_parquet(results: Path) -> None:
    table = drfh_numbers.table_ii(results)
    assert list(table.columns) == ["slots", "cpu", "mem", "paper_cpu", "paper_mem"]
    assert table["slots"].tolist() == [10, 14, 20]
    assert table["cpu"].tolist() == pytest.approx([0.30, 0.45, 0.42], abs=1e-12)
    assert table["mem"].tolist() == pytest.approx([0.20, 0.29, 0.18], abs=1e-12)
    assert table["paper_cpu"].tolist() == [0.351, 0.439, 0.406]
    assert table["paper_mem"].tolist() == [0.234, 0.280, 0.200]
    assert drfh_numbers.best_slots(table) == "slots-14"


def test_best_slots_rejects_empty_table() -> None:
    empty = pd.DataFrame(columns=["slots", "cpu", "mem", "paper_cpu", "paper_mem"])
    with pytest.raises(ValueError, match="no slots rows"):
        drfh_numbers.best_slots(empty)


def test_fig5_means_and_dominance(results: Path) -> None:
    stats = drfh_numbers.fig5_utilization(results, "slots-14")
    assert stats["mean"]["bf-drfh"]["cpu"] == pytest.approx(0.65, abs=1e-3)
    assert stats["above"]["bf-drfh>=ff-drfh"] == {"cpu": 1.0, "mem": 1.0}
    assert stats["above"]["ff-drfh>=slots-14"] == {"cpu": 1.0, "mem": 1.0}


def test_fig6_per_bin_reduction(results: Path) -> None:
    pairs = drfh_numbers.fig6_pairs(results, "slots-14")
    units = drfh_numbers.fig6_units(pairs.assign(seed=1))
    table = drfh_numbers.fig6_bin_estimates(units, seeds=1, n_resamples=0)
    assert table["bin"].tolist() == ["1-50", "51-100", "101-500", "501-1000", ">1000", "all"]
    assert table["jobs"].tolist() == [2, 1, 0, 0, 1, 4]
    assert table["mean_jct_a_s"].iloc[0] == pytest.approx(200.0)
    assert table["mean_jct_b_s"].iloc[0] == pytest.approx(200.0)
    # 1 - mean_a / mean_b: 1 - 200/200, 1 - 50/100, empty, empty, 1 - 250/1000; over all jobs
    reduction = [e.value for e in table["ratio_of_means"]]
    assert reduction[:2] == pytest.approx([0.0, 0.5])
    assert math.isnan(reduction[2])
    assert reduction[4:] == pytest.approx([0.75, 1 - (700 / 4) / (1500 / 4)])
    # the mean of per-job reductions: (0 + 0) / 2 in 1-50; over all: (0 + 0 + 0.5 + 0.75) / 4
    per_job = [e.value for e in table["mean_of_ratios"]]
    assert per_job[0] == pytest.approx(0.0)
    assert per_job[4:] == pytest.approx([0.75, 0.3125])


def test_fig7_completion_stats(results: Path) -> None:
    stats = drfh_numbers.fig7_completion(results, "slots-14")
    assert stats["users"] == 4
    assert stats["higher_under_a"] == pytest.approx(0.5)  # u2, u3
    assert stats["lower_under_a"] == pytest.approx(0.25)  # u4
    assert stats["full_under_a_not_b"] == pytest.approx(0.25)  # u3
    assert stats["per_user"]["ratio_a"].tolist() == pytest.approx([1.0, 0.5, 1.0, 0.8])


def test_fig8_worse_off_fraction(results: Path) -> None:
    stats = drfh_numbers.fig8_sharing_incentive(results)
    assert stats["users"] == 4
    assert stats["worse_off"] == 1  # u4: 0.8 shared < 0.9 dedicated
    assert stats["worse_off_fraction"] == pytest.approx(0.25)
    assert stats["mean_decrease"] == pytest.approx(0.1)
    assert stats["better_off_fraction"] == pytest.approx(0.25)  # u3
    assert stats["worse"].to_dict(orient="list") == {
        "user": ["u4"],
        "decrease": [pytest.approx(0.1)],
    }


def test_fig4_phase_means_skip_transients(results: Path) -> None:
    shares = pd.read_parquet(results / "fig4" / "bf-drfh" / "user_shares.parquet")
    phases = drfh_numbers.fig4_phase_means(shares)
    assert list(phases) == list(paper.FIG4_PHASES)
    alone = phases["user 1 alone"]
    assert list(alone) == ["user 1"]
    assert alone["user 1"] == pytest.approx({"cpu": 0.40, "mem": 0.62, "dominant": 0.62})
    two = phases["users 1+2"]
    assert sorted(two) == ["user 1", "user 2"]
    assert two["user 1"]["dominant"] == pytest.approx(0.44)
    assert two["user 2"] == pytest.approx({"cpu": 0.44, "mem": 0.09, "dominant": 0.44})
    three = phases["users 1-3"]
    assert {u: v["dominant"] for u, v in three.items()} == pytest.approx(
        {"user 1": 0.26, "user 2": 0.26, "user 3": 0.26}
    )


def test_fig4_deficit_phases_leave_out_the_first_run_time(results: Path, tmp_path: Path) -> None:
    phases = drfh_numbers.fig4_deficit_phases(results)
    assert list(phases) == list(drfh_numbers.FIG4_DEFICIT_PHASES)
    windows = {p: (v["start_s"], v["end_s"]) for p, v in phases.items()}
    assert windows == {p: v[:2] for p, v in FIG4_RUN.items()}  # user 1 departs at 1,000 s
    assert {v["settle_s"] for v in phases.values()} == {50.0}
    # instants every 50 s; each phase's first one (a 0.4 transient after a join) left out
    assert [v["instants"] for v in phases.values()] == [3, 5, 9, 10]
    assert [v["max_deficit_max"] for v in phases.values()] == [0.004, 0.006, 0.008, 0.002]
    assert [v["max_deficit_max_all"] for v in phases.values()] == [0.004, 0.4, 0.4, 0.4]
    assert [v["jain_min"] for v in phases.values()] == [1.0, 0.99, 0.98, 1.0]
    three = phases["users 1-3"]
    assert three["users"] == ["user 1", "user 2", "user 3"]
    assert three["online"] == pytest.approx(0.3)
    assert three["reference"] == pytest.approx(0.3 + 0.008 / 3)
    # the pool is one (1, 1) server: user 1 alone, whole tasks 0.9, divisible 1.0
    alone = phases["user 1 alone"]
    assert (alone["whole"], alone["divisible"]) == pytest.approx((0.9, 1.0), abs=1e-12)
    # the exact whole-task DRFH allocation of one user is its greedy packing
    assert alone["whole_exact"] == pytest.approx(0.9)
    summary = read_fairness(results / "fig4", ["bf-drfh"])["bf-drfh"]
    out = tmp_path / "d.png"
    figures.fig4_deficit_figure(summary, phases, bound=0.0095, path=out)
    assert out.stat().st_size > 10_000


def test_fig4_phase_windows_need_three_users_in_order() -> None:
    tasks = pd.DataFrame({"user": ["a", "b"], "submit_s": [0.0, 1.0], "finish_s": [5.0, 6.0]})
    with pytest.raises(ValueError, match=r"^Fig\. 4 has 3 users; tasks\.parquet has 2$"):
        drfh_numbers.fig4_phase_windows(tasks)
    early = pd.DataFrame(
        {"user": ["a", "b", "c"], "submit_s": [0.0, 1.0, 9.0], "finish_s": [5.0, 20.0, 20.0]}
    )
    with pytest.raises(ValueError, match="out of order"):
        drfh_numbers.fig4_phase_windows(early)  # a departs before c joins


def _pairs(jobs: list[tuple[int, int, float, float]], seed: int = 1) -> pd.DataFrame:
    """(job_id, n_tasks, jct under BF-DRFH, jct under Slots) rows as fig6_pairs gives them."""
    frame = pd.DataFrame(jobs, columns=["job_id", "n_tasks", "jct_a_s", "jct_b_s"])
    frame["bin"] = drfh_numbers._size_bin(frame["n_tasks"])
    return frame.assign(seed=seed)


def test_fig6_two_readings_on_the_issue_example() -> None:
    # 9 jobs of 10 s under both, one of 10,000 s under Slots and 100 s under BF-DRFH
    pairs = _pairs([(j, 5, 10.0, 10.0) for j in range(9)] + [(9, 5, 100.0, 10_000.0)])
    units = drfh_numbers.fig6_units(pairs)
    everyone = np.arange(10)
    rom = drfh_numbers.fig6_reduction(units, everyone, "ratio_of_means")
    mor = drfh_numbers.fig6_reduction(units, everyone, "mean_of_ratios")
    assert rom[0] == pytest.approx(1 - 190 / 10_090)  # 98.1 %
    assert mor[0] == pytest.approx(0.099)  # 9.9 %
    assert np.isnan(rom[1:]).all() and np.isnan(mor[1:]).all()  # no jobs in the other bins
    bins = drfh_numbers.fig6_bin_estimates(units, seeds=1).set_index("bin")
    small = bins.loc["1-50"]
    assert (small["jobs"], small["pairs"]) == (10, 10)
    assert small["mean_jct_a_s"] == pytest.approx(19.0)
    assert small["mean_jct_b_s"] == pytest.approx(1009.0)
    # resampling 10 jobs: 0 long jobs in 35 % of resamples (both readings 0), at most 3 in the
    # top 2.5 % (Binomial(10, 0.1)): mean of ratios 3 x 0.99 / 10, ratio of means 1 - 370/30,070
    m, r = small["mean_of_ratios"], small["ratio_of_means"]
    assert (m.value, m.low, m.high) == pytest.approx((0.099, 0.0, 0.297))
    assert (r.value, r.low, r.high) == pytest.approx((1 - 190 / 10_090, 0.0, 1 - 370 / 30_070))
    assert "bootstrap over 10 jobs" in m.method
    assert math.isnan(bins.loc["51-100", "mean_of_ratios"].value)


def test_fig6_units_resample_a_job_with_all_its_seeds() -> None:
    jobs = [(1, 5, 50.0, 100.0), (2, 60, 10.0, 40.0), (3, 2000, 30.0, 30.0)]
    pairs = pd.concat([_pairs(jobs, 1), _pairs([(1, 5, 100.0, 100.0), *jobs[1:]], 2)])
    units = drfh_numbers.fig6_units(pairs)
    assert units.index.tolist() == [1, 2, 3]
    assert units["pairs"].tolist() == [2, 2, 2]
    assert units["bin_code"].tolist() == [0, 1, 4]
    assert units.loc[1, "sum_ratio"] == pytest.approx(0.5 + 0.0)
    est = estimates.fig6_estimates({1: _pairs(jobs, 1), 2: _pairs(jobs, 2)}, n_resamples=200)
    rows = est["bins"].set_index("bin")
    assert (rows.loc["all", "jobs"], rows.loc["all", "pairs"]) == (3, 6)
    assert rows.loc["1-50", "mean_of_ratios"].value == pytest.approx(0.5)
    assert rows.loc["51-100", "mean_of_ratios"].value == pytest.approx(0.75)
    assert est["seeds"] == 2


@pytest.mark.parametrize(
    ("levels", "verdict"), [((0, 1, 2, 3, 4), "PASS"), ((4, 3, 2, 1, 0), "FAIL")]
)
def test_fig6_trend_passes_only_when_rho_excludes_zero(
    levels: tuple[int, ...], verdict: str
) -> None:
    from fairsim.experiments.claims import trend

    sizes = (10, 80, 300, 800, 2000)
    jobs = [
        (100 * b + j, sizes[b], 100.0 * (1 - 0.2 * level) + j, 100.0 + j)
        for b, level in enumerate(levels)
        for j in range(8)
    ]
    units = drfh_numbers.fig6_units(_pairs(jobs))
    rho = drfh_numbers.fig6_trend(units, "mean_of_ratios", seeds=1, n_resamples=300)
    assert rho.value == pytest.approx(1.0 if verdict == "PASS" else -1.0)
    assert trend("trend", "Fig. 6b", "growing", rho).verdict == verdict


def test_fig6_trend_clusters_by_seed() -> None:
    # seed 1 rises with size, seed 2 falls less steeply: pooled, the jobs rise (rho +1 on every
    # resample of jobs); clustered by seed, a quarter of the resamples draw seed 2 twice (rho -1)
    sizes = (10, 80, 300, 800, 2000)

    def seed(levels: tuple[int, ...], step: float, s: int) -> pd.DataFrame:
        rows = [
            (1000 * s + 100 * b + j, sizes[b], 100.0 * (1 - step * level), 100.0)
            for b, level in enumerate(levels)
            for j in range(8)
        ]
        return _pairs(rows, s)

    est = estimates.fig6_estimates(
        {1: seed((0, 1, 2, 3, 4), 0.2, 1), 2: seed((4, 3, 2, 1, 0), 0.1, 2)}, n_resamples=300
    )
    assert est["trend_per_seed"]["mean_of_ratios"] == pytest.approx([1.0, -1.0])
    rho = est["trend"]["mean_of_ratios"]
    assert "two-level bootstrap over 2 seeds" in rho.method
    assert rho.low == pytest.approx(-1.0) and rho.high == pytest.approx(1.0)


def test_fig6_cdf_gaps() -> None:
    faster = _pairs([(1, 5, 10.0, 20.0), (2, 5, 30.0, 40.0)])
    assert drfh_numbers.fig6_cdf_gaps(faster) == pytest.approx((0.0, 0.5))
    slower = _pairs([(1, 5, 20.0, 10.0), (2, 5, 40.0, 30.0)])
    assert drfh_numbers.fig6_cdf_gaps(slower) == pytest.approx((0.5, 0.0))


def _claim(claims: list, start: str):
    [c] = [c for c in claims if c.statement.startswith(start)]
    return c


def test_report_over_two_seeds_writes_claims_and_intervals(out: Path) -> None:
    from fairsim.experiments.claims import Claim, counts, read_claims

    numbers = estimates.collect_numbers(out)
    assert numbers["seeds"] == [1, 2] and numbers["skipped"] == {}
    assert numbers["best_slots"] == {1: "slots-14", 2: "slots-14"}
    numbers["explanations"]["fig8"] = "SENTINEL-FIG8-CAUSE"
    path = report.write_report(out, numbers=numbers)
    raw = json.loads((out / "claims.json").read_text())
    assert {frozenset(r) for r in raw} == {frozenset(Claim.model_fields)}
    # every claim is one paper statement (its key, then its fields), once; quotes are the paper's
    ids = [r["id"] for r in raw]
    assert len(set(ids)) == len(ids)
    assert {i.split(".")[0] for i in ids} <= set(paper.BY_KEY)
    assert "table2.slots-10.resource-cpu" in ids
    cell = next(r for r in raw if r["id"] == "table2.slots-10.resource-cpu")
    assert cell["quote"].endswith("10 per maximum server | 35.1% | 23.4%")  # the row it checks
    # Fig. 4: user 1 alone's CPU and memory (its dominant share is the memory share, not a second
    # claim); "26 % to all three users" is one claim over the three
    fig4 = [i for i in ids if i.startswith("fig4.")]
    assert fig4 == [
        "fig4.phase-user-1-alone.user-user-1.resource-cpu",
        "fig4.phase-user-1-alone.user-user-1.resource-mem",
        "fig4.phase-users-1+2.user-every-user.resource-dominant",
        "fig4.phase-users-1-3.user-every-user.resource-dominant",
    ]
    three = next(r for r in raw if r["id"] == fig4[-1])
    assert three["reason"].startswith("worst of 3 users: ")
    small_claim = next(r for r in raw if r["id"] == "fig6_small")
    assert small_claim["quote"] == "DRFH shows no improvement over Slots scheduler for small jobs"
    claims = read_claims(out)
    assert {c.seeds for c in claims} == {2, 0}  # 0: no 16-slot run here, so no peak at 16
    peak = _claim(claims, "Table II: CPU utilisation peaks at 16 slots")
    assert (peak.seeds, peak.verdict, peak.reason) == (0, "n/a", "no estimate")
    # three bins with 1-2 jobs each, the same rise in both seeds: clustered by seed (seeds, then
    # the (job, seed) pairs of each drawn seed) every resample keeps the rise
    rising = _claim(claims, "Fig. 6b: the larger the job")
    assert (rising.ours, rising.ci_low, rising.verdict) == (1.0, 1.0, "PASS")
    assert "clustered by seed" in rising.reason and "rho per seed: +1.00, +1.00" in rising.reason
    # Table II, 10 slots: 0.300 and 0.302 -> 0.301 ± t(0.975, 1) x 0.001; calibration, and the
    # interval [28.8, 31.4] % lies entirely outside the paper's 35.1 % ± (0.05 + 1) pp
    cpu10 = _claim(claims, "Table II: Slots with 10 slots, mean CPU utilisation")
    assert (cpu10.kind, cpu10.verdict) == ("by-construction", "FAIL")
    assert cpu10.reason.startswith("calibration: ")
    assert (cpu10.ours, cpu10.ci_low, cpu10.ci_high) == pytest.approx(
        (0.301, 0.301 - 0.0127062, 0.301 + 0.0127062), abs=1e-6
    )
    cpu14 = _claim(claims, "Table II: Slots with 14 slots, mean CPU utilisation")
    # 45.1 % [43.8, 46.4] against 43.9 % ± 1.05 pp = [42.85, 44.95] %: straddles 44.95 %; with
    # s = 0.1414 pp and d = 45.1 - 44.95 = 0.15 pp, t(0.975, n-1)·s/√n < d first at n = 6
    assert (cpu14.kind, cpu14.verdict, cpu14.seeds_to_decide) == (
        "by-construction",
        "INCONCLUSIVE",
        6,
    )
    mem14 = _claim(claims, "Table II: Slots with 14 slots, mean memory utilisation")
    # 29.1 % [27.8, 30.4] against 28.0 % ± 1.05 pp = [26.95, 29.05] %: straddles 29.05 %; d =
    # 0.05 pp: t(0.975, 32)·0.1414/√33 = 0.0501 pp ≥ d, t(0.975, 33)·0.1414/√34 = 0.0493 pp < d
    assert (mem14.kind, mem14.verdict, mem14.seeds_to_decide) == ("paper", "INCONCLUSIVE", 34)
    best = _claim(claims, "Table II: 14 slots give the highest utilisation")
    assert best.verdict == "PASS" and best.ours == pytest.approx(0.07)  # (45+29)/2 - (42+18)/2
    # Fig. 8: 25 % worse off in both seeds, a zero-width interval; 2 % is far outside
    worse = _claim(claims, "Fig. 8: users with fewer tasks finished")
    assert (worse.ours, worse.ci_low, worse.ci_high, worse.verdict) == (0.25, 0.25, 0.25, "FAIL")
    assert "SENTINEL-FIG8-CAUSE" in worse.reason
    small = _claim(claims, "Fig. 6b: no JCT improvement for small jobs")
    assert small.ours == pytest.approx(0.0) and small.verdict == "PASS"
    assert "2 jobs (4 (job, seed) pairs)" in small.reason
    # the headline counts paper claims only; the calibrated ones are listed apart
    text = path.read_text()
    paper_counts = counts(claims, "paper")
    assert paper_counts["all"] == len(claims) - 2 - 10
    assert f"{paper_counts['PASS']} of {paper_counts['all']} statements of the paper PASS" in text
    assert "Not counted: 10 consistency and 2 by-construction check(s)" in text
    # Fig. 4 against the whole-task DRFH allocation on the one (1, 1) server, backlogs unbounded
    # (no tasks present here): user 1 alone 3 tasks, 0.9; users 1+2 (0.6, 0.5); users 1-3
    # (0.3, 0.5, 0.6); users 2+3 (0.5, 0.9); online 0.3 each: deficits 0.6, 0.3, 0.3, 0.6
    deficit = _claim(claims, "Fig. 4: Best-Fit DRFH precisely achieves the DRFH allocation")
    assert (deficit.kind, deficit.verdict, deficit.unit) == ("paper", "FAIL", "share")
    assert (deficit.ours, deficit.ci_low, deficit.ci_high) == pytest.approx((0.6,) * 3)
    assert deficit.rule == "95 % interval entirely ≤ 0.9 %"
    assert "user 2's 0.5 CPU of the paper's 52.75 CPU units, is 0.95 % of dominant share" in (
        deficit.reason
    )
    assert "per phase: user 1 alone 60.0 % [60.0, 60.0], users 1+2 30.0 % [30.0, 30.0], " in (
        deficit.reason
    )
    # the divisible allocation's deficit, 0.8 % at most once the 0.4 transients are left out
    assert (
        "whole tasks can reach: 0.8 % [0.8, 0.8] (user 1 alone 0.4 % [0.4, 0.4], users 1+2 0.6 "
        in (deficit.reason)
    )
    assert "## Fig. 4 — Best-Fit DRFH against the DRFH allocation" in text
    assert (
        "| users 1+2 | 200 – 500 s | 0.6 % [0.6, 0.6] | 0.6 % [0.6, 0.6] | 40.0 % [40.0, " in text
    )

    # the Google runs' fairness: measured, not judged; the schedules are the main runs'
    jain = _claim(claims, "Google trace: Best-Fit DRFH's time-averaged Jain's index of the raw")
    assert (jain.kind, jain.verdict, jain.ours, jain.ci_low) == ("consistency", "n/a", 0.4, 0.4)
    ent = _claim(claims, "Google trace: Best-Fit DRFH's time-averaged Jain's index of the users'")
    assert (ent.kind, ent.verdict, ent.ours) == ("consistency", "n/a", 0.9)
    gap = _claim(claims, "Google trace: Slots (16 per max server)'s time-averaged largest")
    assert (gap.ours, gap.unit, gap.paper) == (0.005, "share", None)
    same = _claim(claims, "Collecting fairness does not change a schedule")
    assert (same.ours, same.verdict) == ("4 of 4 identical", "PASS")
    assert same.reason == "a main run's tasks.parquet is missing"  # slots-16 has none here
    assert "## Fairness over time on the Google trace" in text
    assert (
        "| Best-Fit DRFH | 0.30 % [0.30, 0.30] | 0.90 [0.90, 0.90] | 0.40 [0.40, 0.40] "
        "| 0.80 [0.80, 0.80] "
        "| 10.0 % [10.0, 10.0] |"
    ) in text
    assert "has 1 task(s) running and 40 waiting under Best-Fit DRFH" in text
    assert "| 10 | 30.1 % [28.8, 31.4] | 35.1 % | -5.0 pp |" in text
    assert "| 1-50 | 2 | 4 | 200 s | 200 s | 0.0 % [0.0, 0.0] | 0.0 % [0.0, 0.0] |" in text
    assert "**The verdicts use the mean of per-job reductions.**" in text
    for name in ("table2", "fig4", "fig5", "fig6", "fig7", "fig8"):
        alt = "Table II" if name == "table2" else f"Fig. {name[-1]}"
        assert f"![{alt}]({name}.png)" in text
        assert (out / f"{name}.png").stat().st_size > 10_000
    for name, alt in (("fig4_deficit", "Fig. 4's deficit"), ("fairness", "fairness over time")):
        assert f"![{alt}]({name}.png)" in text
        assert (out / f"{name}.png").stat().st_size > 10_000
    assert "| 2 | 2.25 / 2.00 | `slots-14` | — | 1.00 / 1.00 | abc123 | — |" in text  # per seed
    assert "| bf-drfh | 2 | 130 | 104 [104, 104] | 11.0 | 5,000 |" in text
    assert not list(out.glob(".*.tmp"))


def test_build_claims_scale_with_the_quantity() -> None:
    from fairsim.experiments.claims import Estimate

    def est(v: float, lo: float, hi: float) -> Estimate:
        return Estimate(v, lo, hi, 5, "t interval over 5 seeds")

    def claims(worse: Estimate, higher: Estimate) -> dict[str, str]:
        numbers = {
            "fig7": {"full_under_a_not_b": est(0.2, 0.19, 0.21), "higher_under_a": higher},
            "fig8": {
                "worse_off_fraction": worse,
                "mean_decrease": est(0.03, 0.01, 0.049),
                "worse_off": [21, 19, 20, 22, 18],
            },
        }
        return {c.statement: c.verdict for c in drfh_claims.build_claims(numbers)}

    worse_key = "Fig. 8: users with fewer tasks finished in the shared cloud"
    almost = "Fig. 7: higher task completion ratio under BF-DRFH for almost all users"
    # the paper's "2 %" (printed as an integer: ±0.5 pp) + DRFH's model tolerance 1 pp: 0.5-3.5 %;
    # [3.1, 4.3] % straddles 3.5 %, [3.6, 3.8] % lies beyond it
    assert claims(est(0.037, 0.031, 0.043), est(0.95, 0.91, 0.99))[worse_key] == "INCONCLUSIVE"
    assert claims(est(0.037, 0.036, 0.038), est(0.95, 0.91, 0.99))[worse_key] == "FAIL"
    got = claims(est(0.021, 0.0185, 0.0235), est(0.92, 0.89, 0.95))
    assert got[worse_key] == "PASS"
    assert got[almost] == "INCONCLUSIVE"  # the interval straddles 90 %
    assert got["Fig. 8: their completion ratio decreases only slightly"] == "PASS"
    assert got["Fig. 7: users with every task completed under BF-DRFH but not under Slots"] == (
        "PASS"
    )


def test_production_context_numbers_and_section(out: Path) -> None:
    numbers = estimates.collect_numbers(out)
    p = numbers["production"]
    assert (p["servers"], p["tasks"], p["common_jobs"]) == (10, 200, 2)
    # the comparison: the trace's schedule on each task's first request beside the simulated
    assert p["schedulers"] == ["recorded-first", "bf-drfh", "ff-drfh", "slots-16"]
    rec, slots = p["per"]["recorded-first"], p["per"]["slots-16"]
    assert (rec["cpu"], rec["peak_cpu"], rec["completed"]) == pytest.approx((1.05, 1.06, 0.9))
    assert (rec["jct_mean_s"], rec["jct_median_s"]) == (200.0, 200.0)  # jobs 1 and 2 only
    assert (slots["jct_mean_s"], slots["user_ratio"]) == pytest.approx((215.0, 0.6))
    # both readings of the trace's requests
    first, schedule = p["readings"]["first"], p["readings"]["schedule"]
    assert (first["folder"], schedule["folder"]) == ("recorded-first", "recorded")
    assert first["overcommit"]["cpu"] == pytest.approx(
        {
            "servers_max": 3,
            "servers_end": 2,
            "servers_mean": 2.0,
            "amount_max": 0.06,
            "amount_mean": 0.04,
            "utilization_end": 1.05,
        }
    )
    assert first["overcommit"]["mem"]["servers_max"] == 0
    assert (schedule["cpu"], schedule["peak_cpu"]) == pytest.approx((1.15, 1.16))
    assert schedule["overcommit"]["cpu"]["servers_max"] == 6
    assert schedule["overcommit"]["cpu"]["amount_mean"] == pytest.approx(0.08)
    assert schedule["overcommit"]["mem"]["servers_end"] == 1
    text = report.write_report(out, numbers=numbers).read_text()
    assert (
        "| recorded (trace, first request) | 105.0 % | 90.0 % | 106.0 % | 90.0 % | 90.0 % "
        "| 75.0 % | 200 s | 200 s | 0.900 | 0.500 | 0.00 % |"
    ) in text
    assert "| Slots (16 per max server) | 49.0 % | 38.0 % |" in text
    assert "`requests: first`, folder `recorded-first/`" in text
    assert (
        "as production placed them (each run's SCHEDULE request): 115.0 % of the pool's CPU and "
        "95.0 % of its memory on average, 116.0 % and 95.0 % at the peak (each task's first "
        "request, the table's: 105.0 % and 90.0 %, 106.0 % and 90.0 %)"
    ) in text
    assert (
        "- Over-commitment in CPU (recorded), each run's SCHEDULE request [each task's first "
        "request]: up to 6 [3] of 10 machines at once, 5 [2] at the end of the sample, 5 [2] on "
        "average over the samples; the running tasks request up to 9.0 % [6.0 %] of the pool's "
        "CPU above the machines' capacity (8.0 % [4.0 %] on average), and 115.0 % [105.0 %]"
    ) in text
    assert "Slots-16 keeps 47 % of the CPU and 42 % of the memory" in text
    assert "over-committed up to 6 machines at once with the requests it placed (3 with" in text
    assert "![production context](production.png)" in text
    assert (out / "production.png").stat().st_size > 10_000


def test_report_skips_pieces_missing_in_a_seed(out: Path) -> None:
    seed2 = out / "seed-2"
    shutil.rmtree(seed2 / "dedicated")
    shutil.rmtree(seed2 / "fig4")
    for s in ("slots-10", "slots-14", "slots-20"):
        shutil.rmtree(seed2 / s)
    shutil.rmtree(seed2 / drfh_numbers.FAIRNESS_DIR / "ff-drfh")
    shutil.rmtree(out / drfh_numbers.PRODUCTION_DIR / "slots-16")
    numbers = estimates.collect_numbers(out)
    assert set(numbers["skipped"]) == {
        "table_ii",
        "fig4",
        "fig4_deficit",
        "fig5",
        "fig6",
        "fig7",
        "fig8",
        "fairness",
        "production",
    }
    assert numbers["skipped"]["production"].startswith("inputs missing")
    assert numbers["skipped"]["fig8"].startswith("seed 2: ")
    assert numbers["skipped"]["fairness"].startswith("seed 2: FileNotFoundError")
    text = report.write_report(out, numbers=numbers).read_text()
    assert text.count("*Skipped:") == 9  # Table II, Figs. 4-8, Fig. 4's deficit, fairness,
    # production context
    assert not (out / "fig8.png").exists()
    with pytest.raises(FileNotFoundError, match="no seed-3 folder"):
        estimates.collect_numbers(out, [1, 3])


def test_report_table_ii_shapes_and_one_slot_table(out: Path) -> None:
    from fairsim.experiments.claims import across_seeds
    from fairsim.experiments.drfh.experiment import EXPLANATIONS

    def rows(values: dict[int, tuple[float, float]]) -> list[dict[str, object]]:
        return [
            {
                "slots": s,
                "cpu": across_seeds([c - 0.001, c + 0.001]),
                "mem": across_seeds([m, m]),
                "paper_cpu": paper.TABLE_II[s][0],
                "paper_mem": paper.TABLE_II[s][1],
            }
            for s, (c, m) in values.items()
        ]

    numbers = estimates.collect_numbers(out)
    # the multi-slot column of our Google run (published Table I values, before the censoring
    # change) and the one-slot model's
    numbers["table_ii"] = rows(
        {
            10: (0.350, 0.262),
            12: (0.398, 0.299),
            14: (0.434, 0.322),
            16: (0.475, 0.350),
            20: (0.457, 0.359),
        }
    )
    numbers["table_ii_single"] = rows(
        {
            10: (0.296, 0.242),
            12: (0.344, 0.274),
            14: (0.375, 0.288),
            16: (0.407, 0.289),
            20: (0.298, 0.271),
        }
    )
    numbers["explanations"] = EXPLANATIONS
    text = report.write_report(out, numbers=numbers).read_text()
    assert (
        "- Shape (multi-slot, means over seeds): ours peaks at 16 slots in CPU and 20 in memory "
        "(paper: 16 and 14); from 16 to 20 slots ours moves -1.8 pp in CPU and +0.9 pp in "
        "memory (paper: -4.8 pp and -4.2 pp)." in text
    )
    assert "- Shape (one slot per task, means over seeds): ours peaks at 16 slots in CPU" in text
    assert "| 20 | 29.8 % [28.5, 31.1] | 40.6 % | -10.8 pp | 27.1 % [27.1, 27.1] | 20.0 % |" in text
    assert text.count("- The memory column: Not explained. Under multi-slot Slots") == 1
    claims = {c.statement: c for c in drfh_claims.build_claims(numbers)}
    mem20 = claims["Table II: Slots with 20 slots, mean memory utilisation"]
    assert (mem20.kind, mem20.verdict) == ("paper", "FAIL")
    assert "Not explained." in mem20.reason
    cpu16 = claims["Table II: Slots with 16 slots, mean CPU utilisation"]
    # 47.5 % over two seeds against 45.4 % ± 1.05 pp (printed precision + model tolerance): the
    # t interval straddles 46.45 %
    assert (cpu16.kind, cpu16.verdict) == ("paper", "INCONCLUSIVE")
    assert isinstance(cpu16.seeds_to_decide, int)
