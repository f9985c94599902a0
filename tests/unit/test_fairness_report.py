"""The "Fairness over time" panel of the run and sweep reports, on synthetic fairness tables
written into fake run folders (the ``collect.fairness`` file contract of DESIGN.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairsim.scenario.config import RunConfig
from fairsim.scenario.reporting.fairness_panel import (
    OVER_TIME_PNG,
    SCATTER_PNG,
    averages_table,
    chosen_instant,
    fairness_over_time_figure,
    read_fairness,
    reference_scatter_figure,
    unavailable_lines,
)
from fairsim.scenario.reporting.run_report import write_run_report
from fairsim.scenario.reporting.sweep_report import sweep_report, with_fairness

SCHEDULERS = ["slots-16", "bf-drfh"]
CFG = RunConfig.model_validate(
    {
        "name": "fake",
        "seed": 1,
        "trace": {"format": "synthetic", "n_tasks": 10, "duration_s": 3600},
        "cluster": {"servers": 4, "source": "table-i"},
        "schedulers": SCHEDULERS,
    }
)


def _run_folder(folder: Path) -> None:
    """The files every run report reads: utilisation and jobs."""
    folder.mkdir(parents=True)
    t = np.arange(0.0, 3600.0, 600.0)
    pd.DataFrame({"time_s": t, "cpu": 0.5 + 0 * t, "mem": 0.25 + 0 * t}).to_parquet(
        folder / "utilization.parquet"
    )
    pd.DataFrame({"job_id": [1, 2], "completion_time_s": [100.0, 300.0]}).to_parquet(
        folder / "jobs.parquet"
    )


def _summary(fairness: dict[str, Any] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {
        "tasks": 10,
        "tasks_completed": 8,
        "jobs_completed": 2,
        "completion_ratio": 0.8,
        "mean_utilization": {"cpu": 0.5, "mem": 0.25},
        "mean_jct_s": 200.0,
        "wall_s": 1.0,
        "tasks_per_s": 10.0,
    }
    if fairness is not None:
        s["fairness"] = fairness
    return s


#: Per scheduler, at 0, 600, 1200, 1800 s: (active users; max deficit; Jain's index of raw
#: dominant shares; Jain's index of entitlement fractions; L1 distance; users with reference 0).
FAKE = {
    "slots-16": (
        [2, 4, 3, 1],
        [0.10, 0.20, 0.05, 0.0],
        [0.8, 0.7, 0.9, 1.0],
        [0.9, 0.6, 0.9, 1.0],
        [0.15, 0.4, 0.05, 0.0],
        [0, 0, 0, 0],
    ),
    "bf-drfh": (
        [2, 4, 4, 1],
        [0.02, 0.01, 0.0, 0.0],
        [0.95, 0.99, 1.0, 1.0],
        [0.96, 1.0, 1.0, 1.0],
        [0.03, 0.02, 0.0, 0.0],
        [0, 1, 0, 0],
    ),
}


def _write_fairness(folder: Path, name: str) -> None:
    """Synthetic ``fairness.parquet`` and ``fairness_summary.parquet`` for ``name``: at each
    instant, users ``u0..u{n-1}`` with reference dominant share 0.1 * (k + 1) and online share
    the reference minus a deficit (the first user carries the instant's max deficit)."""
    active, deficit, jain, entitled, l1, zero = FAKE[name]
    times = [0.0, 600.0, 1200.0, 1800.0]
    rows = []
    for t, n, d in zip(times, active, deficit, strict=True):
        for k in range(n):
            ref = 0.1 * (k + 1)
            dk = d if k == 0 else 0.0
            rows.append(
                {
                    "time_s": t,
                    "user": f"u{k}",
                    "tasks_running": 2,
                    "tasks_waiting": 1,
                    "demand_cpu": 0.1,
                    "demand_mem": 0.2,
                    "share_cpu": (ref - dk) / 2,
                    "share_mem": ref - dk,
                    "dominant_share": ref - dk,
                    "reference_dominant_share": ref,
                    "deficit": dk,
                }
            )
    pd.DataFrame(rows).to_parquet(folder / "fairness.parquet")
    pd.DataFrame(
        {
            "time_s": times,
            "active_users": active,
            "jain_index": jain,
            "max_deficit": deficit,
            "l1_distance": l1,
            "si_violations": [0, 1, 0, 0],
            "envious_pairs": [0, 2, 0, 0],
            "jain_entitlement": entitled,
            "zero_reference_users": zero,
            "jain_raw_dominant": jain,
        }
    ).to_parquet(folder / "fairness_summary.parquet")


def _averages(name: str) -> dict[str, Any]:
    """``summary.json``'s ``fairness`` entry for the synthetic tables of ``name``."""
    active, deficit, jain, entitled, l1, zero = FAKE[name]
    return {
        "interval_s": 600.0,
        "reference": "drfh",
        "instants": 4,
        "time_average": {
            "active_users": float(np.mean(active)),
            "jain_index": float(np.mean(jain)),
            "max_deficit": float(np.mean(deficit)),
            "l1_distance": float(np.mean(l1)),
            "si_violations": 0.25,
            "envious_pairs": 0.5,
            "jain_entitlement": float(np.mean(entitled)),
            "zero_reference_users": float(np.mean(zero)),
            "jain_raw_dominant": float(np.mean(jain)),
        },
        "reference_unavailable": {"instants": 0, "reasons": {}},
        "solve_s": 0.01,
        "metrics_s": 0.01,
    }


def _fake_run(out: Path, *, fairness: bool) -> dict[str, dict[str, Any]]:
    summaries = {}
    for name in SCHEDULERS:
        _run_folder(out / name)
        if fairness:
            _write_fairness(out / name, name)
        summaries[name] = _summary(_averages(name) if fairness else None)
    return summaries


def test_run_report_has_the_fairness_panel(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run_report(out, CFG, _fake_run(out, fairness=True))
    text = (out / "report.md").read_text()
    assert "\n## Fairness over time\n" in text
    assert "Measured for slots-16, bf-drfh (`collect.fairness`" in text
    # the time averages of summary.json, one row per scheduler: the entitlement index first,
    # the raw one named; the users with reference 0 shown because bf-drfh had one at 600 s
    assert (
        "| scheduler | reference | instants | active users "
        "| Jain's index of entitlement fractions | Jain's index of raw dominant shares "
        "| max deficit (dominant share) | L1 distance (dominant share) "
        "| users below their SI share | envious pairs | users with reference 0 |"
    ) in text
    row = "| {} | drfh | 4 (every 600 s) | {} |"
    slots = "2.5 | 0.850 | 0.850 | 0.0875 | 0.1500 | 0.25 | 0.5 | 0.00"
    assert row.format("slots-16", slots) in text
    assert (
        row.format("bf-drfh", "2.8 | 0.990 | 0.985 | 0.0075 | 0.0125 | 0.25 | 0.5 | 0.25") in text
    )
    assert "Jain's index of entitlement fractions is over each active user's online" in text
    assert "no reference at" not in text
    # the instant: 8 active users over the two runs at 600 s, 7 at 1,200 s
    assert "at t = 600 s (0.167 h), the sampled instant with the most active users" in text
    for png in (OVER_TIME_PNG, SCATTER_PNG):
        assert f"]({png})" in text
        assert (out / png).is_file() and (out / png).stat().st_size > 0
    # the rest of the report is unchanged
    assert text.index("![utilisation](utilization.png)") < text.index("## Fairness over time")


def test_run_without_fairness_files_has_no_panel(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summaries = _fake_run(out, fairness=False)
    write_run_report(out, CFG, summaries)
    text = (out / "report.md").read_text()
    assert "Fairness" not in text and "fairness" not in text
    assert not (out / OVER_TIME_PNG).exists() and not (out / SCATTER_PNG).exists()
    # and the report is the one written without the panel module's help: it ends with the figures
    assert text.endswith("![JCT CDF](jct_cdf.png)\n")
    # only one scheduler with the files: the panel names that one
    _write_fairness(out / "bf-drfh", "bf-drfh")
    summaries["bf-drfh"] = _summary(_averages("bf-drfh"))
    write_run_report(out, CFG, summaries)
    text = (out / "report.md").read_text()
    assert "Measured for bf-drfh (`collect.fairness`" in text
    assert "| slots-16 |" not in text.split("## Fairness over time")[1]
    assert "at t = 600 s" in text  # bf-drfh alone: 4 users at 600 s and 1,200 s, the earlier


def test_chosen_instant_is_common_to_all_and_earliest_on_ties() -> None:
    a = pd.DataFrame({"time_s": [0.0, 10.0, 20.0], "active_users": [1, 5, 5]})
    b = pd.DataFrame({"time_s": [10.0, 20.0, 30.0], "active_users": [1, 2, 50]})
    assert chosen_instant({"a": a}) == 10.0  # 5 at 10 s and 20 s: the earlier
    assert chosen_instant({"a": a, "b": b}) == 20.0  # 30 s is not sampled under a
    none = pd.DataFrame({"time_s": [0.0], "active_users": [0]})
    assert chosen_instant({"a": none}) is None


def test_over_time_figure_axes_and_lines(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _fake_run(out, fairness=True)
    summaries = {s: pd.read_parquet(out / s / "fairness_summary.parquet") for s in SCHEDULERS}
    fig = fairness_over_time_figure(summaries)
    top, l1, entitled, raw = fig.axes
    assert top.get_ylabel() == "max deficit (dominant share)"
    assert l1.get_ylabel() == "L1 distance (dominant share)"
    assert entitled.get_ylabel() == "Jain's index (entitlement)"
    assert raw.get_ylabel() == "Jain's index (raw)"
    assert raw.get_xlabel() == "trace time (h)"
    assert l1.get_ylim()[0] == 0.0 and l1.get_ylim()[1] >= 0.4
    assert entitled.get_ylim() == raw.get_ylim() == (0.0, 1.05)
    assert [t.get_text() for t in top.get_legend().get_texts()] == SCHEDULERS
    line = top.get_lines()[1]  # bf-drfh (the first line is slots-16's)
    assert line.get_xdata().tolist() == pytest.approx([0, 1 / 6, 1 / 3, 0.5])
    assert line.get_ydata().tolist() == FAKE["bf-drfh"][1]
    # the L1 panel: each scheduler's l1_distance per instant
    assert [ln.get_ydata().tolist() for ln in l1.get_lines()] == [FAKE[s][4] for s in SCHEDULERS]
    assert l1.get_lines()[0].get_xdata().tolist() == pytest.approx([0, 1 / 6, 1 / 3, 0.5])
    assert [ln.get_ydata().tolist() for ln in entitled.get_lines()] == [
        FAKE[s][3] for s in SCHEDULERS
    ]
    assert [ln.get_ydata().tolist() for ln in raw.get_lines()] == [FAKE[s][2] for s in SCHEDULERS]


def test_over_time_figure_of_a_folder_written_before_the_entitlement_index(
    tmp_path: Path,
) -> None:
    """A ``fairness_summary.parquet`` with DESIGN.md's columns alone: the raw panel draws its
    ``jain_index``, the entitlement panel nothing."""
    out = tmp_path / "run"
    _fake_run(out, fairness=True)
    for s in SCHEDULERS:
        path = out / s / "fairness_summary.parquet"
        old = pd.read_parquet(path).drop(
            columns=["jain_entitlement", "zero_reference_users", "jain_raw_dominant"]
        )
        old.to_parquet(path)
    fig = fairness_over_time_figure(read_fairness(out, SCHEDULERS))
    _, _, entitled, raw = fig.axes
    assert entitled.get_lines() == []
    assert [ln.get_ydata().tolist() for ln in raw.get_lines()] == [FAKE[s][2] for s in SCHEDULERS]


def test_scatter_has_the_diagonal_and_one_point_per_user() -> None:
    users = {
        "bf-drfh": pd.DataFrame(
            {"reference_dominant_share": [0.1, 0.2, 0.4], "dominant_share": [0.1, 0.15, 0.4]}
        )
    }
    fig = reference_scatter_figure(users, 600.0, "drfh")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "reference (drfh) dominant share"
    assert ax.get_ylabel() == "online dominant share"
    assert "t = 0.167 h (600 s)" in ax.get_title()
    (points,) = ax.collections
    assert points.get_offsets().tolist() == [[0.1, 0.1], [0.2, 0.15], [0.4, 0.4]]
    (diag,) = ax.get_lines()
    assert diag.get_label() == "y = x"
    assert diag.get_xdata().tolist() == diag.get_ydata().tolist() == pytest.approx([0, 0.42])
    assert ax.get_xlim() == ax.get_ylim() == pytest.approx((0, 0.42))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bf-drfh (3 users)", "y = x"]


def test_scatter_with_missing_references_keeps_a_finite_scale() -> None:
    users = {
        "bf-drfh": pd.DataFrame({"reference_dominant_share": [np.nan], "dominant_share": [0.2]})
    }
    ax = reference_scatter_figure(users, 0.0).axes[0]
    assert ax.get_xlim() == pytest.approx((0, 0.21))  # the online share still sets the scale
    none = {
        "bf-drfh": pd.DataFrame({"reference_dominant_share": [np.nan], "dominant_share": [np.nan]})
    }
    assert reference_scatter_figure(none, 0.0).axes[0].get_xlim() == (0.0, 1.0)


def test_averages_table_skips_missing_values_and_runs_without_fairness() -> None:
    # a summary.json written before jain_raw_dominant existed: its jain_index is that index;
    # no user with reference 0, no column for them
    avg = {"jain_index": 0.5, "max_deficit": None, "zero_reference_users": 0.0}
    fair = {"reference": "tsf", "time_average": avg}
    lines = averages_table({"a": {"fairness": fair}, "b": _summary()})
    assert lines == [
        "| scheduler | reference | instants | Jain's index of raw dominant shares "
        "| max deficit (dominant share) |",
        "|---|---|---|---|---|",
        "| a | tsf | — | 0.500 | — |",
    ]
    assert averages_table({"b": _summary()}) == []


def test_instants_without_a_reference_are_named_with_their_reasons() -> None:
    fair = _averages("bf-drfh")
    fair["reference_unavailable"] = {"instants": 3, "reasons": {"bmf: N bottleneck maps": 3}}
    assert unavailable_lines({"bf-drfh": {"fairness": fair}, "x": _summary()}) == [
        "- bf-drfh: no reference at 3 instant(s) (their deficit and L1 distance are undefined "
        "and left out of the averages): bmf: N bottleneck maps (3)"
    ]
    assert unavailable_lines({"bf-drfh": _summary(_averages("bf-drfh"))}) == []


def _fake_sweep(root: Path, *, fairness: bool) -> pd.DataFrame:
    """A sweep folder of 2 points x 3 seeds x 2 schedulers with summary.json per scheduler."""
    rows = []
    for servers in (20, 40):
        for seed in (1, 2, 3):
            run_id = f"r{servers}-{seed}"
            for k, name in enumerate(SCHEDULERS):
                folder = root / run_id / name
                folder.mkdir(parents=True)
                avg = {
                    "max_deficit": 0.1 * (1 - k) + 0.01 * seed,
                    "jain_index": 0.9 + 0.02 * k,
                    "jain_raw_dominant": 0.9 + 0.02 * k,
                    "jain_entitlement": 0.7 + 0.25 * k,
                }
                fair = {"reference": "drfh", "time_average": avg}
                (folder / "summary.json").write_text(
                    json.dumps(_summary(fair if fairness else None))
                )
                rows.append(
                    {
                        "run_id": run_id,
                        "cluster.servers": servers,
                        "seed": seed,
                        "scheduler": name,
                        "status": "ok",
                        "error": None,
                        "wall_s": 1.0,
                        "tasks": 10,
                        "tasks_completed": 8,
                        "completion_ratio": 0.8,
                        "util_cpu": 0.5,
                        "util_mem": 0.25,
                        "mean_jct_s": 200.0,
                        "median_jct_s": 200.0,
                    }
                )
    runs = pd.DataFrame(rows)
    runs.to_parquet(root / "runs.parquet")
    return runs


def test_sweep_report_summarises_time_averaged_fairness(tmp_path: Path) -> None:
    root = tmp_path / "sw"
    runs = with_fairness(root, _fake_sweep(root, fairness=True))
    # seed 2 of slots-16: 0.1 + 0.02
    row = runs[(runs["run_id"] == "r20-2") & (runs["scheduler"] == "slots-16")].iloc[0]
    assert row["fairness_max_deficit"] == pytest.approx(0.12)
    assert row["fairness_jain_raw_dominant"] == pytest.approx(0.9)
    assert row["fairness_jain_entitlement"] == pytest.approx(0.7)
    sweep_report(root)
    text = (root / "report.md").read_text()
    assert "\n## Fairness over time\n" in text
    head = (
        "| cluster.servers | scheduler | seeds "
        "| Time-averaged Jain's index of entitlement fractions "
        "| Time-averaged max deficit (dominant share) "
        "| Time-averaged Jain's index of raw dominant shares |"
    )
    assert head in text
    # 0.11, 0.12, 0.13: mean 0.12, sd 0.01, half-width t(0.975, 2) * 0.01 / sqrt(3) = 0.0248
    half = 4.302652729911275 * 0.01 / math.sqrt(3)
    lo, hi = 0.12 - half, 0.12 + half
    assert (
        f"| 20 | slots-16 | 3 | 0.700 [0.700, 0.700] | 0.1200 [{lo:.4f}, {hi:.4f}] "
        "| 0.900 [0.900, 0.900] |"
    ) in text
    # paired against slots-16: bf-drfh's entitlement index 0.25 higher at every seed, its
    # deficit 0.1 lower, its raw index 0.02 higher
    paired = (
        "| 40 | bf-drfh | slots-16 | 3 | 0.250 [0.250, 0.250] | -0.1000 [-0.1000, -0.1000] "
        "| 0.020 [0.020, 0.020] |"
    )
    assert paired in text
    for m in ("fairness_jain_entitlement", "fairness_max_deficit", "fairness_jain_raw_dominant"):
        assert f"![{m}](sweep_{m}.png)" in text and (root / f"sweep_{m}.png").is_file()
    # the headline table keeps its columns: the fairness metrics are in their own section
    first_table = text.split("\n\n")[4]
    assert first_table.startswith("| cluster.servers | scheduler | seeds | Mean CPU")
    assert "deficit" not in first_table


def test_sweep_without_fairness_has_no_section(tmp_path: Path) -> None:
    root = tmp_path / "sw"
    runs = _fake_sweep(root, fairness=False)
    assert with_fairness(root, runs) is runs  # no column added
    sweep_report(root)
    text = (root / "report.md").read_text()
    assert "Fairness" not in text and "deficit" not in text
    assert not list(root.glob("sweep_fairness_*.png"))
    stored = pd.read_parquet(root / "sweep_report.parquet")
    assert not any(m.startswith("fairness_") for m in stored["metric"])


def test_sweep_reads_the_raw_index_of_runs_written_before_it_had_its_name(tmp_path: Path) -> None:
    """A run's ``summary.json`` written before ``jain_raw_dominant`` existed has DESIGN.md's
    ``jain_index`` alone: the sweep reads it as the raw index, and has no entitlement index for
    that run."""
    root = tmp_path / "sw"
    runs = _fake_sweep(root, fairness=True)
    for path in root.glob("*/*/summary.json"):
        s = json.loads(path.read_text())
        avg = s["fairness"]["time_average"]
        del avg["jain_raw_dominant"], avg["jain_entitlement"]
        path.write_text(json.dumps(s))
    got = with_fairness(root, runs)
    np.testing.assert_allclose(got["fairness_jain_raw_dominant"], [0.9, 0.92] * 6)
    assert got["fairness_jain_entitlement"].isna().all()
