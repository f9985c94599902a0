"""``fairsim compare`` / ``fairsim.compare``: rows on the common job set, paired intervals,
figures with labelled axes, refusals."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from helpers import hand_scenario
from matplotlib.figure import Figure
from scipy import stats

import fairsim
from fairsim.errors import ConfigError
from fairsim.experiments.cli import main
from fairsim.scenario.reporting import compare_report


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """``small``: b waits (JCT a 100 s, b 140 s); ``big``: every task starts at once (a 100 s,
    b 50 s). Same trace and seed: paired."""
    small, big = tmp_path / "small", tmp_path / "big"
    fairsim.simulate(hand_scenario(1.0, ["bf-drfh"]), out=small)
    fairsim.simulate(hand_scenario(1.5, ["bf-drfh"]), out=big)
    return small, big


def test_paired_rows_by_hand(runs: tuple[Path, Path], tmp_path: Path) -> None:
    small, big = runs
    c = fairsim.compare([small, big / "bf-drfh"], out=tmp_path / "cmp")
    assert list(c.table.index) == ["small/bf-drfh", "big/bf-drfh"]
    assert c.paired and c.common_jobs == 2 and c.jobs == 2
    t = c.table
    assert t.loc["small/bf-drfh", "jct_mean_s"] == pytest.approx(120.0)
    assert t.loc["big/bf-drfh", "jct_mean_s"] == pytest.approx(75.0)
    assert t.loc["big/bf-drfh", "jct_p95_s"] == pytest.approx(50 + 0.95 * 50)
    assert t.loc["small/bf-drfh", "delay_mean_s"] == pytest.approx(30.0)
    assert t.loc["big/bf-drfh", "delay_mean_s"] == pytest.approx(0.0)
    assert t.loc["small/bf-drfh", "slowdown_mean"] == pytest.approx(1.9)
    assert t.loc["big/bf-drfh", "slowdown_mean"] == pytest.approx(1.0)
    assert t.loc["small/bf-drfh", "user_jct_max_over_min"] == pytest.approx(1.4)
    # per-job differences (0, -90): mean -45, standard error 45, t(0.975, 1 dof) = 12.706
    half = stats.t.ppf(0.975, 1) * 45.0
    assert t.loc["big/bf-drfh", "djct_mean_s"] == pytest.approx(-45.0)
    assert t.loc["big/bf-drfh", "djct_low_s"] == pytest.approx(-45.0 - half)
    assert t.loc["big/bf-drfh", "djct_high_s"] == pytest.approx(-45.0 + half)
    assert half == pytest.approx(571.77, abs=0.01)
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "the 2 jobs completed under every row" in report
    assert "95 % t-interval over the per-job differences" in report
    assert "| big/bf-drfh | 100.0 %" not in report  # utilisation is the run's own
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == [
        "jct_cdf.png",
        "jct_mean.png",
        "report.md",
        "utilization.png",
    ]


def test_figures_have_labelled_axes(runs: tuple[Path, Path]) -> None:
    c = fairsim.compare(list(runs))
    cdf = compare_report.jct_cdf_figure(c)
    assert isinstance(cdf, Figure)
    ax = cdf.axes[0]
    assert ax.get_xlabel() == "job completion time (s)"  # 50 - 140 s: within one decade, linear
    assert ax.get_ylabel() == "fraction of common jobs"
    util = compare_report.utilization_figure(c).axes[0]
    assert util.get_ylim() == (0.0, 100.0)
    assert "%" in util.get_ylabel()
    bars = compare_report.jct_mean_figure(c).axes[0]
    assert bars.get_ylim()[0] == 0.0 and bars.get_ylabel() == "mean JCT of the common jobs (s)"


def test_cdf_ticks_are_labelled_within_one_decade(runs: tuple[Path, Path]) -> None:
    """JCTs of 50 - 140 s lie within one decade: the axis is linear and its ticks carry labels."""
    c = fairsim.compare(list(runs))
    fig = compare_report.jct_cdf_figure(c)
    assert fig is not None
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels, "the JCT axis has no tick label"


def test_refuses_other_traces_and_non_runs(runs: tuple[Path, Path], tmp_path: Path) -> None:
    other = copy.deepcopy(hand_scenario(1.0, ["bf-drfh"]))
    other["trace"]["users"][1]["run_s"] = 60
    fairsim.simulate(other, out=tmp_path / "other")
    with pytest.raises(ConfigError, match=r"trace\.users .*job ids would not match"):
        fairsim.compare([runs[0], tmp_path / "other"])
    with pytest.raises(ConfigError, match=r"not a fairsim run folder"):
        fairsim.compare([runs[0], tmp_path])


def test_unpaired_when_seeds_differ(runs: tuple[Path, Path], tmp_path: Path) -> None:
    cfg = hand_scenario(1.5, ["bf-drfh"])
    cfg["seed"] = 7
    fairsim.simulate(cfg, out=tmp_path / "seed7")
    c = fairsim.compare([runs[0], tmp_path / "seed7"])
    assert not c.paired
    assert c.table["djct_low_s"].isna().all()
    assert c.table.loc["seed7/bf-drfh", "djct_mean_s"] == pytest.approx(-45.0)


def test_cli_prints_the_table(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(runs[0]), str(runs[1]), "--out", str(tmp_path / "c")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("common job set: 2 jobs completed under every row (of 2 jobs")
    assert "big/bf-drfh" in printed and "[-617, 527]" in printed
    # the reference row: no difference to itself, no interval, and no pandas index header
    ref = next(line for line in printed.splitlines() if line.startswith("small/bf-drfh"))
    assert ref.split()[-2:] == ["ref", "-"]
    assert not any(line.startswith("label") for line in printed.splitlines())
    assert main(["compare", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a fairsim run folder" in err
