"""A scheduler named by its import path ``module:Class`` from a file in the working directory
(issue 39: "No module named 'fz_boom'" unless installed), the unknown-name error naming both
ways to bring one's own scheduler, and a constructor that raises reported in one line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.errors import ConfigError

#: A file a user writes beside the config: a working scheduler and one whose __init__ raises.
SOURCE = '''\
from fz_cwd_helper import BASE  # a module beside it, imported while fz_cwd_sched is


class Fine(BASE):
    """Best-Fit DRFH under another name."""


class Boom(BASE):
    def __init__(self, *, period_s: float = 1.0) -> None:
        raise ValueError(f"boom at {period_s} s")
'''
HELPER = "from fairsim.schedulers.drfh import BestFitDRFH as BASE\n"
MODULES = ("fz_cwd_sched", "fz_cwd_helper")
CONFIG = {
    "name": "cwd",
    "trace": {"format": "synthetic", "n_tasks": 150, "duration_s": 3600},
    "cluster": {"servers": 6},
    "schedulers": ["fz_cwd_sched:Fine", "bf-drfh"],
}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory holding ``fz_cwd_sched.py`` (and the helper it imports) and
    ``run.yaml``; the modules are forgotten afterwards."""
    (tmp_path / "fz_cwd_sched.py").write_text(SOURCE)
    (tmp_path / "fz_cwd_helper.py").write_text(HELPER)
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(CONFIG))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in MODULES:
        sys.modules.pop(name, None)


def test_module_class_from_the_working_directory(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = list(sys.path)
    assert main(["run", "run.yaml", "--out", "out", "--no-progress"]) == 0
    assert sys.path == path  # the working directory was on it for the import only
    assert sorted(p.name for p in (here / "out").iterdir() if p.is_dir()) == ["Fine", "bf-drfh"]
    # the same class as Best-Fit DRFH: the same placements
    fine = (here / "out" / "Fine" / "tasks.parquet").read_bytes()
    assert fine == (here / "out" / "bf-drfh" / "tasks.parquet").read_bytes()
    for name in MODULES:
        sys.modules.pop(name, None)
    results = fairsim.simulate(CONFIG, progress=False)
    assert sys.path == path
    assert results["Fine"].tasks.equals(results["bf-drfh"].tasks)


def test_constructor_that_raises_is_one_line(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "run.yaml", "--out", "out", "--no-progress"]
    argv += ["--set", "schedulers=[{name: 'fz_cwd_sched:Boom', period_s: 2}]"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "fairsim: error: scheduler 'Boom-2': fz_cwd_sched.Boom(period_s=2.0) raised ValueError: "
        "boom at 2.0 s\n"
    )
    assert not (here / "out").exists()
    with pytest.raises(ConfigError, match=r"^scheduler 'Boom': fz_cwd_sched\.Boom\(\) raised "):
        fairsim.simulate({**CONFIG, "schedulers": ["fz_cwd_sched:Boom"]}, progress=False)


def test_module_nowhere_and_unknown_names(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        ConfigError,
        match=r"^config: schedulers: scheduler 'fz_nowhere:X': cannot import 'fz_nowhere' \(No "
        r"module named 'fz_nowhere'; not installed, and not in the working directory .+\)$",
    ):
        fairsim.simulate({**CONFIG, "schedulers": ["fz_nowhere:X"]}, progress=False)
    with pytest.raises(
        ConfigError,
        match=r"^config: schedulers: scheduler 'fz_cwd_sched:Nope': module 'fz_cwd_sched' has "
        r"no 'Nope'$",
    ):
        fairsim.simulate({**CONFIG, "schedulers": ["fz_cwd_sched:Nope"]}, progress=False)
    # a dotted name is the import path with a dot: said, with both ways in
    assert main(["run", "run.yaml", "--set", "schedulers=[fz_cwd_sched.Fine]"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    hint = "unknown scheduler 'fz_cwd_sched.Fine'; did you mean 'fz_cwd_sched:Fine'? (known: "
    assert hint in err
    assert err.endswith(
        "; a class of your own: 'module:Class', from an installed module or a file in the "
        "working directory, or an entry point of the group 'fairsim.schedulers')\n"
    )
