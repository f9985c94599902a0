"""A script that starts a process-pool sweep from top-level code outside
``if __name__ == "__main__":`` (issue 39: multiprocessing's bootstrapping traceback in every
worker, and every run marked failed) is refused in one line saying what to add."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fairsim.scenario.sweep import guarded

SCENARIO = """\
import fairsim

cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 100, "duration_s": 3600},
       "cluster": {"servers": 10}, "schedulers": ["ff-drfh"]}
"""


def _python(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(source)
    return subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )


def test_unguarded_script_is_refused_in_one_line(tmp_path: Path) -> None:
    run = "fairsim.sweep(cfg, grid={'cluster.servers': [10, 20]}, seeds=[1], out='out', "
    run += "executor='local:2', progress=False)\n"
    p = _python(tmp_path, "noguard.py", SCENARIO + run)
    assert p.returncode == 1
    assert p.stderr.splitlines()[-1] == (
        "fairsim.errors.ConfigError: executor 'local:2': noguard.py line 5 starts the sweep at "
        "its top level, which every worker process runs again when it starts; put that call "
        'under `if __name__ == "__main__":` (docs/sweeps.md, "From Python"), or run with '
        "executor='serial'"
    )
    assert "bootstrapping" not in p.stderr and "BrokenProcessPool" not in p.stderr
    assert not (tmp_path / "out").exists()  # refused before any worker or folder


def test_only_unguarded_top_level_calls_are_found(tmp_path: Path) -> None:
    """The check itself, from a script: its top-level code unguarded, directly under the
    guard, and through a function called under the guard."""
    probe = """\
from fairsim.scenario.sweep import _unguarded_main_call


def main():
    return _unguarded_main_call()


print("top", _unguarded_main_call())
if "__main__" == __name__:
    print("guarded", _unguarded_main_call())
    try:
        print("nested", main())
    finally:
        pass
"""
    p = _python(tmp_path, "probe.py", probe)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"top ('{tmp_path / 'probe.py'}', 8)",
        "guarded None",
        "nested None",
    ]


@pytest.mark.parametrize(
    ("source", "line", "inside"),
    [
        ("if __name__ == '__main__':\n    go()\n", 2, True),
        ("go()\nif __name__ == '__main__':\n    pass\n", 1, False),
        ("if __name__ != '__main__':\n    go()\n", 2, False),
        ("if __name__ == '__main__':\n    pass\nelse:\n    go()\n", 4, False),
        ("if True:\n    if '__main__' == __name__:\n        x = 1\n        go()\n", 4, True),
    ],
)
def test_guarded(source: str, line: int, inside: bool) -> None:
    assert guarded(source, line) is inside
