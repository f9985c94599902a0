"""Every paper reproduction is registered once and reached through one uniform entry point."""

from __future__ import annotations

import importlib
import inspect
import json
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


def _fake_reproduction(folder: Path, name: str) -> None:
    """A folder as ``fairsim experiment NAME`` leaves it: report.md and claims.json whose ids
    start with the reproduction's statement keys."""
    paper = importlib.import_module(f"{REPRODUCTIONS[name].package}.paper")
    folder.mkdir(parents=True)
    (folder / "report.md").write_text("# an earlier run\n")
    ids = [{"id": f"{s.key}.setting-1"} for s in paper.STATEMENTS]
    (folder / "claims.json").write_text(json.dumps(ids))


def test_a_folder_that_is_not_a_reproduction_of_it_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fairsim experiment NAME --out DIR`` deleted whatever DIR held (a run copied there)."""
    from fairsim.cli import main

    out = tmp_path / "resultsX"
    (out / "my-run").mkdir(parents=True)
    (out / "my-run" / "summary.json").write_text("{}")
    argv = ["experiment", "bonald-roberts", "--quick", "--seeds", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"fairsim: error: --out: {str(out)!r} already exists, is not empty and holds no earlier "
        "bonald-roberts reproduction (its report.md and claims.json); --overwrite replaces it, "
        "or choose another folder\n"
    )
    assert (out / "my-run" / "summary.json").read_text() == "{}"
    assert sorted(p.name for p in out.iterdir()) == ["my-run"]
    # another paper's reproduction is not this one's
    other = tmp_path / "psdsf"
    _fake_reproduction(other, "psdsf")
    assert main([*argv, "--out", str(other)]) == 2
    assert "holds no earlier bonald-roberts reproduction" in capsys.readouterr().err
    assert (other / "claims.json").is_file()


@pytest.mark.parametrize("name", list(REPRODUCTIONS))
def test_an_earlier_run_is_recognised_by_its_claims(tmp_path: Path, name: str) -> None:
    from fairsim.experiments.reproductions import holds_reproduction

    _fake_reproduction(tmp_path / name, name)
    assert [n for n in REPRODUCTIONS if holds_reproduction(tmp_path / name, n)] == [name]
    (tmp_path / name / "report.md").unlink()
    assert not holds_reproduction(tmp_path / name, name)
    assert not holds_reproduction(tmp_path / "missing", name)


def test_an_earlier_run_is_replaced_and_overwrite_replaces_any_folder(tmp_path: Path) -> None:
    """Re-running into the same folder (``make experiment`` twice) needs no --overwrite."""
    from fairsim.cli import main
    from fairsim.experiments.reproductions import holds_reproduction

    argv = ["experiment", "bonald-roberts", "--quick", "--seeds", "1", "--jobs", "1"]
    out = tmp_path / "br"
    _fake_reproduction(out, "bonald-roberts")
    (out / "stale.png").write_text("old")
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    assert not (out / "stale.png").exists() and (out / "run.json").is_file()
    assert holds_reproduction(out, "bonald-roberts")  # its own output: replaced next time
    mine = tmp_path / "mine"
    (mine / "my-run").mkdir(parents=True)
    assert main([*argv, "--out", str(mine), "--overwrite", "--no-progress"]) == 0
    assert not (mine / "my-run").exists() and (mine / "claims.json").is_file()


def test_files_added_to_an_earlier_run_are_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An earlier run of the same reproduction was replaced whole, notes added to it since
    included: the run now lists what it wrote, and a folder with more is refused."""
    import json

    from fairsim.cli import main
    from fairsim.cli.experiment import MANIFEST

    argv = ["experiment", "bonald-roberts", "--quick", "--seeds", "1", "--jobs", "1"]
    out = tmp_path / "br"
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["reproduction"] == "bonald-roberts"
    assert manifest["files"] == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MANIFEST
    )
    assert {"claims.json", "report.md"} <= set(manifest["files"])
    before = (out / "claims.json").stat().st_mtime_ns
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("my notes")
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"fairsim: error: --out: {str(out)!r} holds an earlier bonald-roberts reproduction and 1 "
        "file(s) it did not write (notes/mine.txt); move them, or --overwrite replaces the whole "
        "folder\n"
    )
    assert (out / "notes" / "mine.txt").read_text() == "my notes"
    assert (out / "claims.json").stat().st_mtime_ns == before
    # without the notes it is replaced again, and --overwrite replaces it with them
    (out / "notes" / "mine.txt").unlink()
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    (out / "mine.txt").write_text("my notes")
    assert main([*argv, "--out", str(out), "--overwrite", "--no-progress"]) == 0
    assert not (out / "mine.txt").exists() and (out / "claims.json").is_file()
