"""The reproductions' report kit (numbers in units, intervals, Markdown tables, the default entry
point) and the Student-t band every report shares."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fairsim.experiments import kit
from fairsim.experiments.claims import Estimate, Statement
from fairsim.scenario.reporting.intervals import t_band, t_half, t_interval
from fairsim.scenario.reporting.markdown import table


def test_number_in_each_unit() -> None:
    assert kit.number(0.3512, "share") == "35.1 %"
    assert kit.number(-0.0123, "pp") == "-1.2 pp"
    assert kit.number(12345.6, "s") == "12,346 s"
    assert kit.number(12345.6, "n") == "12,346"
    assert kit.number(0.12345, "") == "0.12"
    assert kit.number(0.3512, "share", ".2f", suffix=False) == "35.12"
    assert kit.number(50.0, "s", lambda v: ",.0f" if v >= 100 else ".3g") == "50 s"
    assert [kit.number(x, "share") for x in (None, math.nan, math.inf)] == ["—"] * 3
    assert kit.number("1-8", "share") == "1-8"
    with pytest.raises(KeyError, match="'percent'"):
        kit.number(0.5, "percent")


def test_interval_shows_the_unit_once_or_after_each_bound() -> None:
    assert kit.interval(0.351, 0.33, 0.372, "share") == "35.1 % [33.0, 37.2]"
    assert kit.interval(0.351, 0.33, 0.372, "share", each=True) == "35.1 % [33.0 %, 37.2 %]"
    assert kit.interval(0.2, 0.1, 0.3, "", ".4f") == "0.2000 [0.1000, 0.3000]"
    # no interval without both finite bounds, or when it is narrower than min_width
    assert kit.interval(0.2, None, 0.3, "") == "0.20"
    assert kit.interval(0.2, math.nan, math.nan, "", ".4f") == "0.2000"
    assert kit.interval(82.5, 82.5, 82.5, "", ".1f", min_width=math.ulp(0.0)) == "82.5"
    assert kit.interval(0.5, 0.4998, 0.5002, "share", min_width=5e-4) == "50.0 %"
    assert kit.interval(0.5, 0.4997, 0.5002, "share", suffix=False, min_width=5e-4) == (
        "50.0 [50.0, 50.0]"
    )
    est = Estimate(0.25, 0.2, 0.3, 5, "t")
    assert kit.estimate(est, "pp") == "+25.0 pp [+20.0, +30.0]"
    assert kit.estimate(Estimate(math.nan, None, None, 0, "none")) == "—"
    assert kit.estimate(None) == "—"


def test_markdown_table() -> None:
    lines = table(["a", "b"], [[1, "x|y"], ["2", "z"]])
    assert lines == ["| a | b |", "|---|---|", "| 1 | x|y |", "| 2 | z |", ""]
    assert table(["a"], [["x|y\nz"]], escape=True)[2] == "| x\\|y z |"


def test_statement_fills_its_fields() -> None:
    s = Statement("t2", "Table II: Slots with {slots} slots", "Sec. VI, Table II", "dividing ...")
    assert s.format(slots=14) == "Table II: Slots with 14 slots"


def test_t_band_is_the_student_t_interval_point_by_point() -> None:
    x = np.array([[1.0, 2.0, np.nan], [2.0, 2.0, 5.0], [3.0, 2.0, np.nan], [6.0, 2.0, np.nan]])
    band = t_band(x, axis=0)
    # column 0: mean 3, s = sqrt(14/3); column 1: all equal; column 2: one value, no interval
    assert band.mean.tolist() == [3.0, 2.0, 5.0]
    assert band.n.tolist() == [4, 4, 1]
    assert band.half[0] == pytest.approx(stats.t.ppf(0.975, 3) * math.sqrt(14 / 3) / 2)
    assert band.half[1] == 0.0 and math.isnan(band.half[2]) and math.isnan(band.sd[2])
    # the same along the other axis, and the scalar form of a sample
    assert np.array_equal(t_band(x.T, axis=1).half, band.half, equal_nan=True)
    mean, sd, half, n = t_interval(x[:, 0])
    assert (mean, n, half) == (3.0, 4, band.half[0])
    assert sd == pytest.approx(math.sqrt(14 / 3))
    assert [math.isnan(v) for v in t_interval([math.nan])[:3]] == [True, True, True]
    # the half-width alone, from a caller's own standard deviations and counts
    assert t_half([math.sqrt(14 / 3), 0.0], [4, 1]).tolist() == [band.half[0], 0.0]


def test_default_reproduce_runs_the_experiment_then_the_report(tmp_path, monkeypatch) -> None:
    calls = []

    class Experiment:
        @staticmethod
        def run_experiment(options):
            calls.append(("run", options))
            return {"numbers": 1}

    class Report:
        @staticmethod
        def write_report(out, run):
            calls.append(("report", out, run))
            return out / "report.md"

    modules = {"pkg.experiment": Experiment, "pkg.report": Report}
    monkeypatch.setattr(kit.importlib, "import_module", modules.__getitem__)
    options = kit.Options(tmp_path, tmp_path, quick=True, progress=False, seeds=2, jobs=1)
    path = kit.reproduce("pkg", options)
    assert path == tmp_path / "report.md"
    assert calls == [("run", options), ("report", tmp_path, {"numbers": 1})]


def test_template_blocks_keep_their_lines(tmp_path) -> None:
    path = tmp_path / "t.md"
    path.write_text(
        "<!-- a comment, not a block -->\n"
        "<!-- head -->\n# Title {n}\n\nText {{braces}} and {n:,}.\n\n"
        "<!-- note -->\n- one line\n"
    )
    t = kit.Template(path)
    assert list(t.blocks) == ["head", "note"]
    assert t.lines("head", n=1200) == ["# Title 1200", "", "Text {braces} and 1,200.", ""]
    assert t.text("note") == "- one line"
    assert t.title("head") == "Title {n}"
    with pytest.raises(KeyError, match="'n'"):
        t.lines("head")


def test_setup_table_lists_the_configuration_behind_every_number() -> None:
    setup = kit.Setup(
        trace="Google 2011",
        window="[0, 3,600) s",
        servers="500 (table-i)",
        schedulers=["drf-lockstep", "udrf"],
        seeds=[1, 2, 3],
        quick=True,
        model_tol="none",
        notes=[("baselines", "capped")],
    )
    lines = kit.setup_table(setup)
    assert lines[:4] == ["## Set-up", "", "| set-up | this run |", "|---|---|"]
    text = "\n".join(lines)
    for row in (
        "| trace | Google 2011 |",
        "| servers | 500 (table-i) |",
        "| schedulers | `drf-lockstep`, `udrf` |",
        "| seeds | 1-3 (3) |",
        "| run | quick (`--quick`: a smoke-test slice) |",
        "| model tolerance | none |",
        "| baselines | capped |",
    ):
        assert row in text
    # with the paper's set-up: a third column, "—" where the paper says nothing
    paper = kit.setup_table(
        kit.Setup(
            trace="t",
            window="w",
            servers="s",
            schedulers=["a"],
            seeds=[1, 2],
            quick=False,
            model_tol="1 pp",
            paper={"trace": "Google, 24 h"},
        )
    )
    assert paper[2] == "| set-up | this run | paper |"
    assert "| trace | t | Google, 24 h |" in paper and "| seeds | 1, 2 (2) | — |" in paper
    assert "| run | full | — |" in paper
