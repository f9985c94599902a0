"""Every paper reproduction is registered once and reached through one uniform entry point."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from fairsim.cli import build_parser
from fairsim.errors import ConfigError
from fairsim.experiments.claims import Statement
from fairsim.experiments.kit import Options
from fairsim.experiments.reproductions import REPRODUCTIONS, reproduce


@pytest.mark.parametrize("name", list(REPRODUCTIONS))
def test_every_reproduction_has_the_kit_s_two_steps(name: str) -> None:
    """kit.reproduce calls experiment.run_experiment(options), then
    report.write_report(out, run); anything else run_experiment takes is keyword-only."""
    spec = REPRODUCTIONS[name]
    run = importlib.import_module(f"{spec.package}.experiment").run_experiment
    first, *rest = inspect.signature(run, eval_str=True).parameters.values()
    assert (first.name, first.annotation) == ("options", Options)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest)
    assert Options(Path("out")).seeds == 5
    write = importlib.import_module(f"{spec.package}.report").write_report
    assert len(inspect.signature(write).parameters) == 2
    assert (Path(__file__).resolve().parents[2] / spec.docs).is_file(), spec.docs


def test_the_command_line_offers_exactly_the_registered_names() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    which = next(a for a in sub.choices["experiment"]._actions if a.dest == "which")
    assert tuple(which.choices) == tuple(REPRODUCTIONS)


def test_an_unknown_reproduction_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'psdfs'; did you mean 'psdsf'\?"):
        reproduce("psdfs", Options(tmp_path, tmp_path))
    assert not any(tmp_path.iterdir())


def test_seeds_below_one_are_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--seeds: must be at least 1 \(got 0\)"):
        reproduce("psdsf", Options(tmp_path, tmp_path, seeds=0))
    assert not any(tmp_path.iterdir())


def test_every_package_has_the_common_shape() -> None:
    """paper numbers and statements, runs, claims, figures, report and its prose's template: a
    new paper copies this shape, and its paper.py lists its statements in the one form."""
    root = Path(__file__).resolve().parents[2] / "fairsim" / "experiments"
    for spec in REPRODUCTIONS.values():
        folder = root / spec.package.rsplit(".", 1)[-1]
        parts = ("paper.py", "experiment.py", "claims.py", "figures.py", "report.py")
        for part in (*parts, "report_template.md", "statements.md"):
            assert (folder / part).is_file(), folder / part
        paper = importlib.import_module(f"{spec.package}.paper")
        assert paper.STATEMENTS and all(isinstance(s, Statement) for s in paper.STATEMENTS)
        assert dict(paper.BY_KEY) == {s.key: s for s in paper.STATEMENTS}
        assert not hasattr(importlib.import_module(spec.package), "reproduce")


def test_an_empty_out_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fairsim experiment psdsf --out ''`` wrote results/psdsf (every other command refuses an
    empty --out)."""
    from fairsim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "psdsf", "--quick", "--out", "", "--no-progress"]) == 2
    assert capsys.readouterr().err == "fairsim: error: --out: '' is not a folder path\n"
    assert list(tmp_path.iterdir()) == []
