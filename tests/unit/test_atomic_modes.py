"""Output files and folders get the modes of any file the user writes (``0o666 & ~umask``,
``0o777 & ~umask``), not ``mkstemp``/``mkdtemp``'s private ``0o600``/``0o700``."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import fairsim
from fairsim.atomic import (
    atomic_dir,
    atomic_paths,
    current_umask,
    dir_mode,
    file_mode,
    write_text,
)

UMASKS = [(0o022, 0o644, 0o755), (0o002, 0o664, 0o775)]


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.mark.parametrize(("umask", "fmode", "dmode"), UMASKS, indirect=["umask"])
def test_current_umask_reads_without_changing(umask: int, fmode: int, dmode: int) -> None:
    assert current_umask() == umask
    assert current_umask() == umask  # reading it did not change it
    assert (file_mode(), dir_mode()) == (fmode, dmode)


@pytest.mark.parametrize(("umask", "fmode", "dmode"), UMASKS, indirect=["umask"])
def test_atomic_file_gets_umask_mode(umask: int, fmode: int, dmode: int, tmp_path: Path) -> None:
    path = write_text(tmp_path / "new" / "a.json", "{}")
    assert oct(_mode(path)) == oct(fmode)
    assert oct(_mode(path.parent)) == oct(dmode)
    with atomic_dir(tmp_path / "folder") as tmp:
        (tmp / "x.txt").write_text("x")
    assert oct(_mode(tmp_path / "folder")) == oct(dmode)
    with atomic_paths([tmp_path / "a.md", tmp_path / "b.md"]) as staged:
        for p in staged:
            p.write_text("x")
    assert [oct(_mode(tmp_path / n)) for n in ("a.md", "b.md")] == [oct(fmode)] * 2


@pytest.mark.parametrize(("umask", "fmode", "dmode"), UMASKS, indirect=["umask"])
def test_run_folder_gets_umask_modes(
    umask: int, fmode: int, dmode: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = {
        "name": "modes",
        "trace": {"format": "synthetic", "n_tasks": 60, "duration_s": 600},
        "cluster": {"servers": 4},
        "schedulers": ["ff-drfh"],
    }
    out = tmp_path / "run"
    fairsim.simulate(cfg, out=out)
    files = [p for p in out.rglob("*") if p.is_file()]
    folders = [out, *(p for p in out.rglob("*") if p.is_dir())]
    assert len(files) >= 5
    assert (out / "ff-drfh" / "summary.json") in files
    assert {p.name: oct(_mode(p)) for p in files} == {p.name: oct(fmode) for p in files}
    assert {p.name: oct(_mode(p)) for p in folders} == {p.name: oct(dmode) for p in folders}
