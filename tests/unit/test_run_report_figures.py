"""Run-report figures that do not mislead: readable JCT axes, headroom above 100 %, the per-user
share figure of ``collect.user_shares``, and report lines on overload and the window."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from matplotlib.figure import Figure

from fairsim.scenario.config import RunConfig
from fairsim.scenario.output import run_to_folder
from fairsim.scenario.reporting.run_report import (
    UTIL_YLIM_TOP,
    jct_figure,
    overcommit_lines,
    overload_line,
    overload_note,
    util_ylim_top,
    utilization_figure,
    window_note,
)
from fairsim.scenario.reporting.shares import LEGEND_MAX_USERS, user_shares_figure
from fairsim.simulator.results import write_table

FIG4 = Path(__file__).resolve().parents[2] / "configs" / "drfh-fig4.yaml"


def _visible_tick_labels(fig: Figure, axis: str = "x") -> list[str]:
    """The non-empty major and minor tick labels inside the axes' view limits, after drawing."""
    fig.draw_without_rendering()
    ax = fig.axes[0]
    a = ax.xaxis if axis == "x" else ax.yaxis
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    labels = []
    for tick in [*a.get_major_ticks(), *a.get_minor_ticks()]:
        text = tick.label1
        if text.get_visible() and text.get_text() and lo <= tick.get_loc() <= hi:
            labels.append(text.get_text())
    return labels


def _jobs(folder: Path, jct_s: list[float]) -> None:
    folder.mkdir(parents=True)
    n = len(jct_s)
    pd.DataFrame(
        {"job_id": np.arange(n), "completion_time_s": np.asarray(jct_s, dtype=float)}
    ).to_parquet(folder / "jobs.parquet")


def test_jct_cdf_within_one_decade_is_linear_with_labelled_ticks(tmp_path: Path) -> None:
    _jobs(tmp_path / "bf-drfh", [1100.0, 1800.0, 2400.0])  # drfh-fig4's three jobs
    fig = jct_figure(tmp_path, ["bf-drfh"])
    assert fig is not None
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0.0
    labels = _visible_tick_labels(fig)
    assert len(labels) >= 3, labels  # 0, 500, 1000, ... (the old log axis had none)
    assert ax.get_xlabel() == "job completion time (s)" and ax.get_ylabel() == "fraction of jobs"
    assert ax.get_ylim() == (0.0, 1.0)
    assert "jobs completed under every scheduler" in ax.get_title()


def test_jct_cdf_over_several_decades_stays_logarithmic_with_labels(tmp_path: Path) -> None:
    _jobs(tmp_path / "bf-drfh", [3.0, 40.0, 500.0, 9000.0])  # 3.5 decades
    fig = jct_figure(tmp_path, ["bf-drfh"])
    assert fig is not None
    assert fig.axes[0].get_xscale() == "symlog"
    assert len(_visible_tick_labels(fig)) >= 2


def test_drfh_fig4_jct_cdf_has_tick_labels(tmp_path: Path) -> None:
    from fairsim.scenario.config import load_config

    run_to_folder(load_config(FIG4), tmp_path, progress=False)
    fig = jct_figure(tmp_path, ["bf-drfh"])
    assert fig is not None and fig.axes[0].get_xscale() == "linear"
    assert len(_visible_tick_labels(fig)) >= 3
    # collect.user_shares draws the per-user share figure in the run report
    assert (tmp_path / "user_shares_bf-drfh.png").stat().st_size > 0
    text = (tmp_path / "report.md").read_text()
    assert "![user shares under bf-drfh](user_shares_bf-drfh.png)" in text
    assert "window 0 – 2,600 s." in text and "overloaded" not in text


def test_utilization_at_99_5_percent_is_below_the_top_border(tmp_path: Path) -> None:
    (tmp_path / "bf-drfh").mkdir()
    t = np.arange(10) * 60.0
    write_table(
        pa.table({"time_s": t, "cpu": np.full(10, 0.995), "mem": np.full(10, 0.5)}),
        tmp_path / "bf-drfh" / "utilization.parquet",
    )
    fig = utilization_figure(tmp_path, ["bf-drfh"], ["cpu", "mem"])
    for ax, label in zip(fig.axes, ["CPU utilisation (%)", "memory utilisation (%)"], strict=True):
        assert ax.get_ylim() == (0.0, 105.0)
        assert list(ax.get_yticks()) == [0, 20, 40, 60, 80, 100]
        assert ax.get_ylabel() == label
        assert max(ax.get_lines()[0].get_ydata()) < ax.get_ylim()[1]
    assert fig.axes[-1].get_xlabel() == "trace time (h)"
    assert fig.get_suptitle() == "Utilisation over time"


def test_the_utilisation_axis_shows_an_over_committed_pool_whole(tmp_path: Path) -> None:
    """``recorded`` may request more than the pool (117.7 % of the CPU at the Google sample's
    peak, by each run's SCHEDULE request): the axis rises above it; up to 100 % it stays 105."""
    assert [util_ylim_top(p) for p in (0.0, 99.5, 100.0, float("nan"))] == [UTIL_YLIM_TOP] * 4
    assert [util_ylim_top(p) for p in (100.4, 107.6, 117.7, 125.0)] == [110, 120, 130, 130]
    t = np.arange(10) * 60.0
    for name, cpu in (("recorded", 1.177), ("ff-drfh", 0.93)):
        (tmp_path / name).mkdir()
        write_table(
            pa.table({"time_s": t, "cpu": np.full(10, cpu), "mem": np.full(10, 0.5)}),
            tmp_path / name / "utilization.parquet",
        )
    fig = utilization_figure(tmp_path, ["recorded", "ff-drfh"], ["cpu", "mem"])
    cpu_ax, mem_ax = fig.axes
    assert cpu_ax.get_ylim() == (0.0, 130.0)
    assert list(cpu_ax.get_yticks()) == [0, 20, 40, 60, 80, 100, 120]
    assert max(max(line.get_ydata()) for line in cpu_ax.get_lines()) < cpu_ax.get_ylim()[1]
    assert mem_ax.get_ylim() == (0.0, 105.0)  # memory stays below 100 %: the usual axis


def test_an_over_committing_run_gets_its_paragraph(tmp_path: Path) -> None:
    from fairsim.scenario.config import parse_config

    cfg = parse_config(
        {
            "name": "rec",
            "trace": {"format": "google-2011", "path": "/nonexistent"},
            "cluster": {"source": "machine-events"},
            "schedulers": ["recorded", {"name": "recorded", "requests": "first"}, "ff-drfh"],
        }
    )
    t = np.arange(3) * 60.0
    summaries = {}
    for name, cpu in (("recorded", [1.10, 1.18, 1.12]), ("recorded-first", [1.0, 1.07, 1.01])):
        (tmp_path / name).mkdir()
        write_table(
            pa.table({"time_s": t, "cpu": cpu, "mem": [0.9, 0.95, 0.92]}),
            tmp_path / name / "utilization.parquet",
        )
        summaries[name] = {
            "servers": 12_583,
            "mean_utilization": {"cpu": float(np.mean(cpu)), "mem": 0.92},
            "overcommit": {
                "cpu": {"max_servers": 10_912, "end_servers": 10_247, "max_amount": 0.2031,
                        "mean_amount": 0.16},
                "mem": {"max_servers": 7_341, "end_servers": 6_270, "max_amount": 0.0993,
                        "mean_amount": 0.0704},
            },
        }  # fmt: skip
    summaries["ff-drfh"] = {"servers": 12_583, "mean_utilization": {"cpu": 0.92, "mem": 0.77}}
    lines = overcommit_lines(tmp_path, cfg, summaries)
    text = "\n".join(lines)
    assert len([x for x in lines if x]) == 2  # one paragraph per recorded run, none for ff-drfh
    assert (
        "**recorded over-commits machines** (each run holds its own SCHEDULE row's request, what "
        "production placed: `requests: schedule`): the requests of its running tasks exceed the "
        "capacity in CPU on up to 10,912 machines at once (10,247 at the end of the window) and "
        "memory on up to 7,341 machines at once (6,270 at the end of the window), of 12,583 "
        "machines. Requested above the machines' capacity, as a share of the pool's: CPU 20.3 % "
        "at the peak, 16.0 % on average; memory 9.9 % at the peak, 7.0 % on average. Its "
        "utilisation is by requests and exceeds 100 % when the pool is over-committed: CPU "
        "113.3 % on average, 118.0 % at the peak; memory 92.0 % on average, 95.0 % at the peak"
    ) in text
    assert (
        "**recorded-first over-commits machines** (each run holds its task's first request, the "
        "workload the simulated schedulers replay: `requests: first`)"
    ) in text
    assert overcommit_lines(tmp_path, cfg, {"ff-drfh": summaries["ff-drfh"]}) == []


def test_user_shares_figure_panels_labels_and_limits() -> None:
    shares = pd.DataFrame(
        {
            "time_s": [0.0, 0.0, 100.0, 100.0],
            "user": ["a", "b", "a", "b"],
            "cpu": [1.0, 0.0, 0.5, 0.5],
            "mem": [0.2, 0.0, 0.1, 0.3],
            "dominant": [1.0, 0.0, 0.5, 0.5],
        }
    )
    fig = user_shares_figure(shares, scheduler="bf-drfh", marks_s=(100.0,))
    assert [ax.get_title() for ax in fig.axes] == [
        "CPU share",
        "Memory share",
        "Global dominant share",
    ]
    assert fig.get_suptitle() == "Shares of 2 users under bf-drfh (collect.user_shares)"
    assert fig.axes[0].get_ylabel() == "Share of pool capacity (%)"
    for ax in fig.axes:
        assert ax.get_xlabel() == "Time (s)"
        assert ax.get_ylim() == (0.0, 105.0)  # a share of 100 % stays visible
        assert len(ax.get_lines()) == 3  # two users and one mark
    with pytest.raises(ValueError, match=r"^user shares: missing column\(s\) \['dominant'\]"):
        user_shares_figure(shares.drop(columns="dominant"), scheduler="x")


def test_many_users_name_the_highest_peaks_and_draw_the_others_grey() -> None:
    # 30 users, user k peaks at k / 30: the ten named are users 20-29
    n = LEGEND_MAX_USERS + 20
    rows = [
        (t, f"u{k:02d}", k / n * (t > 0), 0.0, k / n * (t > 0)) for k in range(n) for t in (0, 1)
    ]
    shares = pd.DataFrame(rows, columns=["time_s", "user", "cpu", "mem", "dominant"])
    fig = user_shares_figure(shares, scheduler="drf")
    assert fig.get_suptitle() == (
        "Shares of 30 users under drf (collect.user_shares); the 10 with the highest peak "
        "dominant share named, others grey"
    )
    for ax in fig.axes:
        named = [text.get_text() for text in ax.get_legend().get_texts()]
        assert named == [f"u{k}" for k in range(20, 30)]
        assert len(ax.get_lines()) == n
        grey = [line for line in ax.get_lines() if line.get_color() == "0.75"]
        assert len(grey) == 20


def _google_cfg() -> RunConfig:
    return RunConfig.model_validate(
        {
            "name": "g",
            "trace": {"format": "google-2011", "path": "x", "start_s": 0, "end_s": 3600},
            "cluster": {"servers": 500, "source": "table-i"},
            "schedulers": ["bf-drfh"],
        }
    )


def test_window_note_explains_the_google_start_up() -> None:
    note = window_note(_google_cfg(), 600.0, 3600.0)
    assert note.startswith("window 600 – 3,600 s; it starts at 600 s, not at `trace.start_s` 0 s")
    assert "Google 2011 trace's data begin at 600 s" in note
    assert window_note(_google_cfg(), 0.0, 3600.0) == "window 0 – 3,600 s."


def test_overload_note_names_the_rule_and_the_schedulers() -> None:
    # google-1h's numbers (baseline report): 158,330 of 168,105 tasks queued under bf-drfh
    over = {"tasks": 168105, "ended": {"queued": 158330}, "completion_ratio": 0.004128}
    slots = {"tasks": 168105, "ended": {"queued": 165407}, "completion_ratio": 0.002219}
    fine = {"tasks": 100, "ended": {"queued": 50}, "completion_ratio": 0.5}  # exactly 50 %
    note = overload_note({"slots-14": slots, "bf-drfh": over})
    assert note is not None and note.startswith("**The pool is overloaded** under slots-14 (")
    assert "bf-drfh (158,330 of 168,105 tasks queued, 94 %; completion ratio 0.004)" in note
    assert "more than 50 % of the tasks" in note and "Add servers (`cluster.servers`)" in note
    assert overload_note({"ff-drfh": fine}) is None
    assert overload_line({"ff-drfh": fine}) is None


def test_overload_of_some_schedulers_only_is_theirs_not_the_pool_s() -> None:
    """google-1h's window on the trace's 12,583 machines (configs/google-1h-machines.yaml):
    Slots-14 leaves 55 % of the tasks queued at the horizon, First-Fit DRFH 10.4 % and Best-Fit
    DRFH 3.5 % (measured): Best-Fit shows the pool runs the workload (at most 10 % queued)."""
    summaries = {
        "slots-14": {"tasks": 168105, "ended": {"queued": 92272}, "completion_ratio": 0.10335},
        "ff-drfh": {"tasks": 168105, "ended": {"queued": 17426}, "completion_ratio": 0.16721},
        "bf-drfh": {"tasks": 168105, "ended": {"queued": 5878}, "completion_ratio": 0.20553},
    }
    note = overload_note(summaries)
    assert note == (
        "**The queue saturates** under slots-14 (92,272 of 168,105 tasks queued, 55 %; "
        "completion ratio 0.103): at the horizon more than 50 % of the tasks that arrived are "
        "still queued (the rule); not under bf-drfh (3 % queued) on the same pool and workload: "
        "the backlog is this scheduler's, not the pool's, and its completion and JCT describe a "
        "saturated queue."
    )
    assert overload_line(summaries) == (
        "warning: the queue saturates under slots-14: still queued at the horizon: 55 % under "
        "slots-14 of the tasks that arrived (the rule: more than 50 %), against 3 % under "
        "bf-drfh on the same pool: the backlog is the scheduler's, not the pool's (report.md)"
    )


def test_a_pool_overloaded_under_most_schedulers_stays_overloaded() -> None:
    """The DRFH reproduction's 2,000 servers (configs/drfh-google.yaml, seed 1): one scheduler
    below the rule (slots-20-single, 39 % queued) does not show that the pool runs the workload;
    the note is the pool's, and names the schedulers that meet the rule only."""
    tasks = 573602
    summaries = {
        "bf-drfh": {"tasks": tasks, "ended": {"queued": 412404}, "completion_ratio": 0.226},
        "slots-20-single": {"tasks": tasks, "ended": {"queued": 220834}, "completion_ratio": 0.4},
    }
    note = overload_note(summaries)
    assert note is not None and note.startswith("**The pool is overloaded** under bf-drfh (")
    assert "slots-20-single" not in note
    line = overload_line(summaries)
    assert line is not None and line.startswith("warning: the pool is overloaded: ")
    assert "slots-20-single" not in line


def test_overload_line_is_one_line_naming_every_scheduler() -> None:
    over = {"tasks": 200, "ended": {"queued": 150}}
    line = overload_line({"a": over, "b": {"tasks": 200, "ended": {"queued": 120}}})
    assert line is not None and "\n" not in line
    assert line.startswith("warning: the pool is overloaded: still queued at the horizon: ")
    assert "75 % under a, 60 % under b of the tasks that arrived" in line
